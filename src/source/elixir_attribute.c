/*
 * elixir_attribute.c - the Elixir walk's module attributes (@spec, @impl,
 * @derive, @optional_callbacks, @doc...) and the sites the contract and
 * clone checks read (docs/CHECKS.md): struct uses, atoms made at run time,
 * clause-body hashes.
 * Thread-safe: state lives in the caller's struct ex_ctx.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/error.h"
#include "base/hash.h"
#include "base/map.h"
#include "base/str.h"
#include "source/elixir_int.h"

/* ---- sites: facts for the contract and clone checks (docs/CHECKS.md) ---- */

/* Deepest level of a clause body that body_hash descends to. */
#define EX_HASH_MAX_DEPTH 256
/* Smallest clause body (named nodes) kept for the clone check: below it a
 * repeated body (`do: {:ok, x}`) is idiom, not duplication. */
#define EX_HASH_MIN_SIZE 8

/* The value of `@impl V`: "true", or the module V names. */
static const char *impl_value(struct ex_ctx *c, TSNode v, unsigned depth)
{
	if (ts_node_is_null(v) || ex_kind_of(v) == N_BOOLEAN)
		return "true";
	const char *m = ex_literal_module(c, v, depth, true);
	return m ? m : "true";
}

/* One `name: arity` or `{:name, arity}` of @optional_callbacks. */
static void optional_callback_add(struct ex_ctx *c, TSNode key, TSNode value, uint32_t line)
{
	size_t len;
	const char *t = ex_text_of(c, key, &len);
	int arity = ex_small_int(c, value);
	if (ex_kind_of(key) == N_ATOM && len > 1 && t[0] == ':') {
		t++;
		len--;
	} else {
		while (len > 0 && (t[len - 1] == ' ' || t[len - 1] == ':' || t[len - 1] == '\n'))
			len--;
	}
	if (arity < 0 || len == 0 || len >= EX_MAX_NAME)
		return;
	facts_site_add(ex_cur_module(c), FACTS_SITE_OPTIONAL_CALLBACK,
	               gi_arena_strndup(&c->f->arena, t, len), arity, line, NULL);
}

/* `@optional_callbacks foo: 1, bar: 2` or `@optional_callbacks [foo: 1]`. */
static void optional_callbacks_read(struct ex_ctx *c, TSNode v, uint32_t line)
{
	TSNode keywords = v;
	if (ex_kind_of(v) == N_LIST) {
		uint32_t n = ts_node_named_child_count(v);
		for (uint32_t i = 0; i < n; i++) {
			TSNode k = ts_node_named_child(v, i);
			if (ex_kind_of(k) == N_TUPLE && ts_node_named_child_count(k) == 2)
				optional_callback_add(c, ts_node_named_child(k, 0),
				                      ts_node_named_child(k, 1), line);
			else if (ex_kind_of(k) == N_KEYWORDS)
				keywords = k;
		}
	}
	if (ex_kind_of(keywords) != N_KEYWORDS)
		return;
	uint32_t np = ts_node_named_child_count(keywords);
	for (uint32_t j = 0; j < np; j++) {
		TSNode pair = ts_node_named_child(keywords, j);
		if (ex_kind_of(pair) == N_PAIR)
			optional_callback_add(c, ex_field(pair, ex_tables.f_key),
			                      ex_field(pair, ex_tables.f_value), line);
	}
}

/* Adds a site in the current module, charged to the current function. */
static void site_here(struct ex_ctx *c, enum facts_site_kind kind, uint32_t line,
                      const char *detail)
{
	if (!c->mod || c->in_quote)
		return;
	struct facts_function *fn = ex_cur_function(c);
	facts_site_add(ex_cur_module(c), kind, fn ? fn->name : NULL, fn ? fn->arity : 0, line,
	               detail);
}

/* `%S{...}` naming module `mod`: built, updated (`%S{s | ...}`) or matched. */
void ex_struct_site(struct ex_ctx *c, TSNode map, const char *mod)
{
	enum facts_site_kind kind =
	    c->in_pattern ? FACTS_SITE_STRUCT_MATCH : FACTS_SITE_STRUCT_BUILD;
	TSNode content = ts_node_named_child(map, 1);
	if (!c->in_pattern && !ts_node_is_null(content)) {
		TSNode first = ts_node_named_child(content, 0);
		if (ex_kind_of(first) == N_BINARY && ex_op_of(first) == OP_BAR)
			kind = FACTS_SITE_STRUCT_UPDATE;
	}
	site_here(c, kind, ex_line_of(map), mod);
}

/* True when `n` is a literal a conversion to an atom cannot grow the atom
 * table with beyond what the source shows: a string or charlist without
 * interpolation, or an atom. */
static bool literal_text(struct ex_ctx *c, TSNode n)
{
	enum node_kind k = ex_kind_of(n);
	if (k == N_ATOM)
		return true;
	if (k != N_STRING && strcmp(ts_node_type(n), "charlist") != 0)
		return false;
	(void)c;
	uint32_t count = ts_node_named_child_count(n);
	for (uint32_t i = 0; i < count; i++)
		if (ex_kind_of(ts_node_named_child(n, i)) == N_INTERPOLATION)
			return false;
	return true;
}

/* String.to_atom/1, List.to_atom/1, :erlang.binary_to_atom/1,2 and
 * :erlang.list_to_atom/1 on an argument that is not a literal (or piped). */
void ex_to_atom_check(struct ex_ctx *c, const struct ex_call *call, const char *mod,
                      const char *fun, int arity, int pipe, unsigned depth)
{
	bool is = ((strcmp(mod, "String") == 0 || strcmp(mod, "List") == 0) &&
	           strcmp(fun, "to_atom") == 0 && arity == 1) ||
	          (strcmp(mod, ":erlang") == 0 &&
	           ((strcmp(fun, "binary_to_atom") == 0 && (arity == 1 || arity == 2)) ||
	            (strcmp(fun, "list_to_atom") == 0 && arity == 1)));
	if (!is)
		return;
	if (!pipe) {
		struct ex_args a;
		ex_args_read(c, call->args, depth, &a);
		if (a.count > 0 && literal_text(c, a.first[0]))
			return;
	}
	site_here(c, FACTS_SITE_TO_ATOM, ex_line_of(call->node),
	          gi_arena_printf(&c->f->arena, "%s.%s/%d", mod, fun, arity));
}

/* `:"name_#{x}"`: an atom made from a value at run time, like
 * String.to_atom/1 (a site of the same kind). */
void ex_quoted_atom_check(struct ex_ctx *c, TSNode n)
{
	uint32_t count = ts_node_named_child_count(n);
	for (uint32_t i = 0; i < count; i++)
		if (ex_kind_of(ts_node_named_child(n, i)) == N_INTERPOLATION) {
			site_here(c, FACTS_SITE_TO_ATOM, ex_line_of(n), ":\"...#{}\"");
			return;
		}
}

/* `struct(S, fields)` / `struct!(S, fields)` with a literal S builds S. */
void ex_struct_call_check(struct ex_ctx *c, const struct ex_call *call, int arity, int pipe,
                          unsigned depth)
{
	if (pipe || (arity != 1 && arity != 2) ||
	    !(ex_text_is(c, call->target, "struct") || ex_text_is(c, call->target, "struct!")))
		return;
	struct ex_args a;
	ex_args_read(c, call->args, depth, &a);
	const char *mod = a.count > 0 ? ex_literal_module(c, a.first[0], depth, false) : NULL;
	if (mod)
		site_here(c, FACTS_SITE_STRUCT_BUILD, ex_line_of(call->node), mod);
}

static uint64_t mix64(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h * 0x100000001b3ULL;
}

/* True when a leaf of kind `k`, child number `index` of a node of kind
 * `parent`, names something a type-2 clone keeps: a module alias, an
 * operator, a called function (a call's first child, its target) or a field
 * after `.` (a dot's third child, after the left side and the dot). */
static bool leaf_is_name(enum node_kind k, enum node_kind parent, unsigned index)
{
	if (k == N_ALIAS || k == N_OPERATOR_IDENTIFIER)
		return true;
	return k == N_IDENTIFIER &&
	       ((parent == N_CALL && index == 0) || (parent == N_DOT && index == 2));
}

/* Hashes the clause body `body` into a BODY site of the current function:
 * `hash` over node types and every leaf's text (a type-1 clone has the same),
 * `hash2` with the text of variables and literals left out but called names,
 * module names and operators kept (type-2); `size` counts named nodes. One
 * cursor walk; comments are left out (they count as children for `index`,
 * which only matters for calls and dots, whose first children are never
 * comments). */
void ex_body_hash(struct ex_ctx *c, TSNode body, uint32_t line)
{
	if (!c->hash_bodies || ts_node_is_null(body) || !c->mod || c->in_quote || c->function < 0 ||
	    c->unquote_name)
		return;
	uint64_t h1 = mix64(GI_HASH_SEED, ts_node_symbol(body)), h2 = h1;
	uint32_t size = ts_node_is_named(body) ? 1 : 0;
	if (ts_node_child_count(body) == 0) {
		size_t len;
		const char *t = ex_text_of(c, body, &len);
		h1 = mix64(h1, gi_hash64(t, len, GI_HASH_SEED));
	}
	enum node_kind parents[EX_HASH_MAX_DEPTH + 1];
	unsigned index[EX_HASH_MAX_DEPTH + 1];
	unsigned level = 0;
	parents[0] = ex_kind_of(body);
	TSTreeCursor cur = ts_tree_cursor_new(body);
	bool more = ts_tree_cursor_goto_first_child(&cur);
	if (more) {
		level = 1;
		index[1] = 0;
	}
	while (more) {
		TSNode n = ts_tree_cursor_current_node(&cur);
		enum node_kind k = ex_kind_of(n);
		if (k != N_COMMENT) {
			TSSymbol sym = ts_node_symbol(n);
			h1 = mix64(h1, sym);
			h2 = mix64(h2, sym);
			bool named = ts_node_is_named(n);
			bool leaf = ts_node_child_count(n) == 0;
			size += named;
			if (!leaf && level < EX_HASH_MAX_DEPTH &&
			    ts_tree_cursor_goto_first_child(&cur)) {
				parents[level++] = k;
				index[level] = 0;
				continue;
			}
			/* a leaf: an anonymous one (operator, keyword, punctuation) is
			 * told apart by its symbol already */
			if (named && leaf) {
				size_t len;
				const char *t = ex_text_of(c, n, &len);
				uint64_t th = gi_hash64(t, len, GI_HASH_SEED);
				h1 = mix64(h1, th);
				if (leaf_is_name(k, parents[level - 1], index[level]))
					h2 = mix64(h2, th);
			}
		}
		while (!(more = ts_tree_cursor_goto_next_sibling(&cur))) {
			if (level <= 1 || !ts_tree_cursor_goto_parent(&cur))
				break;
			level--;
		}
		index[level]++;
	}
	ts_tree_cursor_delete(&cur);
	if (size < EX_HASH_MIN_SIZE)
		return;
	struct facts_function *fn = ex_cur_function(c);
	struct facts_site *site =
	    facts_site_add(ex_cur_module(c), FACTS_SITE_BODY, fn->name, fn->arity, line, NULL);
	site->hash = h1;
	site->hash2 = h2;
	site->size = size;
}

/* ---- attributes -------------------------------------------------------- */

/* Name and arity of a @spec/@callback head: `name(args) :: t when ...`. */
static bool spec_head(struct ex_ctx *c, TSNode n, unsigned depth, const char **name, int *arity)
{
	if (ex_kind_of(n) == N_BINARY && ex_op_of(n) == OP_WHEN)
		n = ex_field(n, ex_tables.f_left);
	if (ex_kind_of(n) == N_BINARY && ex_op_of(n) == OP_TYPE)
		n = ex_field(n, ex_tables.f_left);
	TSNode id = n;
	int count = 0;
	if (ex_kind_of(n) == N_CALL) {
		struct ex_call call;
		struct ex_args a;
		ex_call_read(c, n, depth, &call);
		ex_args_read(c, call.args, depth, &a);
		id = call.target;
		count = (int)a.count;
	}
	if (ex_kind_of(id) != N_IDENTIFIER)
		return false;
	size_t len;
	const char *t = ex_text_of(c, id, &len);
	if (len == 0 || len >= EX_MAX_NAME)
		return false;
	*name = gi_arena_strndup(&c->f->arena, t, len);
	*arity = count;
	return true;
}

/* `@derive P`, `@derive [P, {Q, opts}]`: the protocols, for
 * derived_impls_add. */
static void derive_read(struct ex_ctx *c, TSNode v, unsigned depth, uint32_t line)
{
	struct ex_module_state *st = c->mod;
	TSNode items[8];
	uint32_t n = 0;
	if (ex_kind_of(v) == N_LIST) {
		uint32_t k = ts_node_named_child_count(v);
		for (uint32_t i = 0; i < k && n < 8; i++)
			items[n++] = ts_node_named_child(v, i);
	} else {
		items[n++] = v;
	}
	for (uint32_t i = 0; i < n && st->derive_count < 8; i++) {
		TSNode p = items[i];
		if (ex_kind_of(p) == N_TUPLE && ts_node_named_child_count(p) >= 1)
			p = ts_node_named_child(p, 0);
		const char *protocol = ex_literal_module(c, p, depth, false);
		if (protocol && protocol[0] != ':') {
			st->derives[st->derive_count++] = protocol;
			st->derive_line = line;
		}
	}
}

NOINLINE void ex_do_attribute(struct ex_ctx *c, TSNode n, unsigned depth)
{
	TSNode operand = ex_operand_of(c, n, depth);
	if (ex_kind_of(operand) != N_CALL)
		return;
	struct ex_call call;
	ex_call_read(c, operand, depth, &call);
	bool before = ex_text_is(c, call.target, "before_compile");
	if (c->mod && ex_kind_of(call.target) == N_IDENTIFIER &&
	    (before || ex_text_is(c, call.target, "after_compile"))) {
		/* The compiler calls M.__before_compile__/1 (__after_compile__/2)
		 * for the module: a call from its body, or injected by a quote. */
		struct ex_args a;
		ex_args_read(c, call.args, depth, &a);
		if (a.count == 0)
			return;
		const char *what = before ? "before_compile" : "after_compile";
		if (c->in_quote) {
			ex_inject_add(c, what, a.first[0], depth, ex_line_of(n));
		} else if (c->function < 0) {
			const char *m = ex_module_of(c, a.first[0], depth);
			if (m)
				ex_remote_call(c, m,
				               before ? "__before_compile__" : "__after_compile__",
				               before ? 1 : 2, ex_line_of(n));
		}
		return;
	}
	if (c->mod && c->in_quote && ex_kind_of(call.target) == N_IDENTIFIER &&
	    ex_text_is(c, call.target, "behaviour")) {
		/* @behaviour M in a quote: declared by the module that uses it */
		struct ex_args a;
		ex_args_read(c, call.args, depth, &a);
		if (a.count > 0)
			ex_inject_add(c, "behaviour", a.first[0], depth, ex_line_of(n));
		return;
	}
	if (ex_kind_of(call.target) != N_IDENTIFIER || !c->mod || c->function >= 0 || c->in_quote) {
		ex_walk_children(c, call.args, depth);
		return;
	}
	struct ex_args a;
	ex_args_read(c, call.args, depth, &a);
	struct ex_module_state *st = c->mod;
	TSNode v = a.count > 0 ? a.first[0] : (TSNode){0};
	bool is_false = a.count > 0 && ex_kind_of(v) == N_BOOLEAN && ex_text_is(c, v, "false");
	const char *name;
	int arity;
	if (ex_text_is(c, call.target, "doc")) {
		st->pending_doc = true;
		st->pending_doc_false = is_false;
		if (ex_kind_of(v) == N_STRING)
			ex_walk(c, v, depth, 0); /* interpolations run at compile time */
	} else if (ex_text_is(c, call.target, "deprecated")) {
		st->pending_deprecated = true;
	} else if (ex_text_is(c, call.target, "moduledoc")) {
		struct facts_module *m = ex_cur_module(c);
		m->has_moduledoc = true;
		m->moduledoc_false = is_false;
		if (ex_kind_of(v) == N_STRING)
			ex_walk(c, v, depth, 0); /* interpolations run at compile time */
	} else if (ex_text_is(c, call.target, "impl")) {
		st->pending_impl = !is_false;
		st->pending_impl_value = is_false ? NULL : impl_value(c, v, depth);
	} else if (ex_text_is(c, call.target, "spec")) {
		if (a.count > 0 && spec_head(c, v, depth, &name, &arity)) {
			struct ex_spec s = {name, arity, ex_line_of(n)};
			gi_vec_push(&st->specs, &s);
		}
	} else if (ex_text_is(c, call.target, "callback") ||
	           ex_text_is(c, call.target, "macrocallback")) {
		if (a.count > 0 && spec_head(c, v, depth, &name, &arity)) {
			const char *cb = gi_arena_printf(&c->f->arena, "%s/%d", name, arity);
			gi_vec_push(&ex_cur_module(c)->callbacks, &cb);
		}
	} else if (ex_text_is(c, call.target, "behaviour")) {
		if (a.count > 0)
			ex_ref_add(c, FACTS_REF_BEHAVIOUR, ex_module_of(c, v, depth),
			           ex_line_of(n));
	} else if (ex_text_is(c, call.target, "derive")) {
		derive_read(c, v, depth, ex_line_of(n));
		ex_walk_children(c, call.args, depth);
	} else if (ex_text_is(c, call.target, "type") || ex_text_is(c, call.target, "typep") ||
	           ex_text_is(c, call.target, "opaque")) {
		/* Types are not code. */
	} else if (ex_text_is(c, call.target, "optional_callbacks")) {
		if (a.count > 0)
			optional_callbacks_read(c, v, ex_line_of(n));
		/* Types are not code. */
	} else {
		if (a.count == 1 && ex_kind_of(v) == N_LIST && st->atom_list_count < 16) {
			size_t len;
			const char *t = ex_text_of(c, call.target, &len);
			st->atom_lists[st->atom_list_count].name =
			    gi_arena_strndup(&c->f->arena, t, len);
			st->atom_lists[st->atom_list_count++].list = v;
		}
		ex_walk_children(c, call.args, depth);
	}
}
