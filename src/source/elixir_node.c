/*
 * elixir_node.c - the Elixir walk's common steps: reading a node's parts
 * (call, arguments, keywords), names (aliases in scope, module and function
 * names), recording facts (references, calls, the calls the compiler
 * writes) and dispatch through modules as values (MFAs, apply).
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

/* The operand of a unary operator. tree-sitter-elixir 0.3.5 also puts the
 * `(` and `)` of `&(expr)` under the operand field, so the first named child
 * in that field is the operand, not the first child. */
TSNode ex_operand_of(struct ex_ctx *c, TSNode n, unsigned depth)
{
	TSTreeCursor *cur = ex_cursor_at(c, depth, n);
	for (bool ok = ts_tree_cursor_goto_first_child(cur); ok;
	     ok = ts_tree_cursor_goto_next_sibling(cur)) {
		TSNode k = ts_tree_cursor_current_node(cur);
		if (ts_tree_cursor_current_field_id(cur) == ex_tables.f_operand &&
		    ts_node_is_named(k))
			return k;
	}
	return (TSNode){0};
}

void ex_args_read(struct ex_ctx *c, TSNode args, unsigned depth, struct ex_args *a)
{
	memset(a, 0, sizeof(*a));
	if (ts_node_is_null(args) || ts_node_child_count(args) == 0)
		return;
	TSTreeCursor *cur = ex_cursor_at(c, depth, args);
	for (bool ok = ts_tree_cursor_goto_first_child(cur); ok;
	     ok = ts_tree_cursor_goto_next_sibling(cur)) {
		TSNode k = ts_tree_cursor_current_node(cur);
		if (!ts_node_is_named(k) || ex_kind_of(k) == N_COMMENT)
			continue;
		if (a->count < 4)
			a->first[a->count] = k;
		a->last = k;
		a->count++;
	}
}

void ex_call_read(struct ex_ctx *c, TSNode n, unsigned depth, struct ex_call *call)
{
	memset(call, 0, sizeof(*call));
	call->node = n;
	TSTreeCursor *cur = ex_cursor_at(c, depth, n);
	for (bool ok = ts_tree_cursor_goto_first_child(cur); ok;
	     ok = ts_tree_cursor_goto_next_sibling(cur)) {
		TSNode k = ts_tree_cursor_current_node(cur);
		/* the target read here: ts_node_child_by_field_id would walk
		 * the children once more */
		if (ts_node_is_null(call->target) &&
		    ts_tree_cursor_current_field_id(cur) == ex_tables.f_target) {
			call->target = k;
			continue;
		}
		enum node_kind kk = ex_kind_of(k);
		if (kk == N_ARGUMENTS && ts_node_is_null(call->args))
			call->args = k;
		else if (kk == N_DO_BLOCK)
			call->do_block = k;
	}
}

/* The value of the keyword `key` (without colon) in a keywords node, or a null node. */
TSNode ex_keyword_value(struct ex_ctx *c, TSNode keywords, unsigned depth, const char *key)
{
	TSNode none = {0};
	if (ex_kind_of(keywords) != N_KEYWORDS)
		return none;
	size_t klen = strlen(key);
	TSTreeCursor *cur = ex_cursor_at(c, depth, keywords);
	for (bool ok = ts_tree_cursor_goto_first_child(cur); ok;
	     ok = ts_tree_cursor_goto_next_sibling(cur)) {
		TSNode pair = ts_tree_cursor_current_node(cur);
		if (ex_kind_of(pair) != N_PAIR)
			continue;
		TSNode k = ex_field(pair, ex_tables.f_key);
		size_t len;
		const char *t = ex_text_of(c, k, &len);
		if (ex_kind_of(k) == N_KEYWORD && len > klen && memcmp(t, key, klen) == 0 &&
		    t[klen] == ':')
			return ex_field(pair, ex_tables.f_value);
	}
	return none;
}

/* ---- names ------------------------------------------------------------ */

/* Copies the alias text of `n` without whitespace into `out`; returns its
 * length or 0 when it does not fit or is empty. */
size_t ex_alias_text(const struct ex_ctx *c, TSNode n, char *out, size_t size)
{
	size_t len, o = 0;
	const char *t = ex_text_of(c, n, &len);
	for (size_t i = 0; i < len; i++) {
		char ch = t[i];
		if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r')
			continue;
		if (o + 1 >= size)
			return 0;
		out[o++] = ch;
	}
	out[o] = '\0';
	return o;
}

static const char *alias_lookup(const struct ex_ctx *c, const char *short_name, size_t len)
{
	for (size_t i = c->aliases.len; i-- > 0;) {
		const struct ex_alias *a = gi_vec_get(&c->aliases, i);
		if (strlen(a->short_name) == len && memcmp(a->short_name, short_name, len) == 0)
			return a->full;
	}
	return NULL;
}

void ex_alias_add(struct ex_ctx *c, const char *short_name, size_t len, const char *full)
{
	struct ex_alias a = {gi_arena_strndup(&c->f->arena, short_name, len), full};
	gi_vec_push(&c->aliases, &a);
}

/* Expands an alias's text through the aliases in scope ("Elixir." prefixes
 * are dropped); returns an arena string. */
const char *ex_alias_expand(struct ex_ctx *c, const char *t, size_t len)
{
	if (len > 7 && GI_MEM_IS(t, 7, "Elixir."))
		return gi_arena_strndup(&c->f->arena, t + 7, len - 7);
	const char *dot = memchr(t, '.', len);
	size_t head = dot ? (size_t)(dot - t) : len;
	const char *full = alias_lookup(c, t, head);
	if (!full)
		return gi_arena_strndup(&c->f->arena, t, len);
	return gi_arena_printf(&c->f->arena, "%s%.*s", full, (int)(len - head), t + head);
}

/* The module a node names, in display form (arena), or NULL when it is not a
 * module known at compile time: an alias (expanded), __MODULE__, an Erlang
 * atom, or `left.Alias` of these. */
const char *ex_module_of(struct ex_ctx *c, TSNode n, unsigned depth)
{
	char buf[EX_MAX_NAME];
	size_t len;
	const char *t;
	if (depth > EX_MAX_DEPTH)
		return NULL;
	switch (ex_kind_of(n)) {
	case N_ALIAS:
		len = ex_alias_text(c, n, buf, sizeof(buf));
		return len ? ex_alias_expand(c, buf, len) : NULL;
	case N_IDENTIFIER:
		return ex_text_is(c, n, "__MODULE__") && c->mod ? c->mod->name : NULL;
	case N_CALL: {
		/* in a quote, `unquote(__MODULE__)` and `unquote(Alias)` are
		 * evaluated in the macro's module */
		if (!c->in_quote)
			return NULL;
		TSNode target = ex_field(n, ex_tables.f_target);
		TSNode args = ts_node_named_child(n, 1);
		if (ex_kind_of(target) != N_IDENTIFIER || !ex_text_is(c, target, "unquote") ||
		    ts_node_is_null(args) || ts_node_named_child_count(args) != 1)
			return NULL;
		TSNode arg = ts_node_named_child(args, 0);
		if (ex_kind_of(arg) != N_ALIAS && ex_kind_of(arg) != N_IDENTIFIER)
			return NULL;
		return ex_module_of(c, arg, depth + 1);
	}
	case N_ATOM:
		t = ex_text_of(c, n, &len);
		if (len < 2 || len >= EX_MAX_NAME || t[0] != ':')
			return NULL;
		if (len > 8 && GI_MEM_IS(t + 1, 7, "Elixir."))
			return gi_arena_strndup(&c->f->arena, t + 8, len - 8);
		return gi_arena_strndup(&c->f->arena, t, len);
	case N_QUOTED_ATOM: {
		TSNode q = ts_node_named_child(n, 0);
		if (ts_node_named_child_count(n) != 1 || ex_kind_of(q) != N_QUOTED_CONTENT)
			return NULL;
		t = ex_text_of(c, q, &len);
		if (len == 0 || len >= EX_MAX_NAME)
			return NULL;
		if (len > 7 && GI_MEM_IS(t, 7, "Elixir."))
			return gi_arena_strndup(&c->f->arena, t + 7, len - 7);
		return gi_arena_printf(&c->f->arena, ":%.*s", (int)len, t);
	}
	case N_DOT: {
		TSNode right = ex_field(n, ex_tables.f_right);
		if (ex_kind_of(right) != N_ALIAS)
			return NULL;
		const char *left = ex_module_of(c, ex_field(n, ex_tables.f_left), depth + 1);
		len = ex_alias_text(c, right, buf, sizeof(buf));
		if (!left || !len || left[0] == ':')
			return NULL;
		return gi_arena_printf(&c->f->arena, "%s.%s", left, buf);
	}
	default:
		return NULL;
	}
}

/* The text of a string literal without interpolation, or NULL. */
const char *ex_plain_string(struct ex_ctx *c, TSNode n, size_t *len)
{
	if (ex_kind_of(n) != N_STRING)
		return NULL;
	uint32_t count = ts_node_named_child_count(n);
	if (count == 0) {
		*len = 0;
		return "";
	}
	TSNode q = ts_node_named_child(n, 0);
	if (count != 1 || ex_kind_of(q) != N_QUOTED_CONTENT)
		return NULL;
	return ex_text_of(c, q, len);
}

/* The function name a call's dot target names (`right` of the dot):
 * `Mod.f`, `:erlang.+`, or a quoted name `:erlang."=:="`. */
const char *ex_dot_function(struct ex_ctx *c, TSNode right)
{
	enum node_kind k = ex_kind_of(right);
	size_t len;
	const char *t;
	if (k == N_STRING)
		t = ex_plain_string(c, right, &len);
	else if (k == N_IDENTIFIER || k == N_OPERATOR_IDENTIFIER)
		t = ex_text_of(c, right, &len);
	else
		return NULL;
	if (!t || len == 0 || len >= EX_MAX_NAME)
		return NULL;
	return gi_arena_strndup(&c->f->arena, t, len);
}

int ex_small_int(const struct ex_ctx *c, TSNode n)
{
	size_t len;
	const char *t = ex_text_of(c, n, &len);
	if (ex_kind_of(n) != N_INTEGER || len == 0 || len > 3)
		return -1;
	int v = 0;
	for (size_t i = 0; i < len; i++) {
		if (t[i] < '0' || t[i] > '9')
			return -1;
		v = v * 10 + (t[i] - '0');
	}
	return v;
}

/* ---- recording -------------------------------------------------------- */

/* Writes the decimal text of `v` at `out` (at least 12 bytes); returns its
 * length. */
static size_t int_text(char *out, int v)
{
	char digits[12];
	size_t n = 0, k = 0;
	unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
	do {
		digits[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		out[k++] = '-';
	while (n)
		out[k++] = digits[--n];
	return k;
}

/* Makes the map key `prefix` `name` (`len` bytes) `sep` `number` in `key`
 * (`size` bytes), as snprintf("%s%.*s%c%d") would, truncated like it when
 * too long; returns the length snprintf would. The walk makes one for every
 * reference, call and definition: formatting them was 1% of the index. */
int ex_key_make(char *key, size_t size, const char *prefix, const char *name, size_t len, char sep,
                int number)
{
	size_t p = strlen(prefix);
	if (p + len + 14 > size)
		return snprintf(key, size, "%s%.*s%c%d", prefix, (int)len, name, sep, number);
	memcpy(key, prefix, p);
	memcpy(key + p, name, len);
	p += len;
	key[p++] = sep;
	p += int_text(key + p, number);
	key[p] = '\0';
	return (int)p;
}

void ex_ref_add(struct ex_ctx *c, enum facts_ref_kind kind, const char *target, uint32_t line)
{
	if (!c->mod || !target)
		return;
	if (kind == FACTS_REF_CALL || kind == FACTS_REF_CAPTURE || kind == FACTS_REF_STRUCT ||
	    kind == FACTS_REF_VALUE || kind == FACTS_REF_MFA || kind == FACTS_REF_APPLY) {
		if (strcmp(target, c->mod->name) == 0)
			return;
	}
	char key[EX_MAX_NAME + 8];
	size_t target_len = strlen(target), n = int_text(key, (int)kind);
	if (n + 1 + target_len >= sizeof(key))
		return;
	key[n++] = ':';
	memcpy(key + n, target, target_len + 1);
	if (gi_map_get(&c->mod->refs, key))
		return;
	gi_map_put(&c->mod->refs, key, (void *)1);
	struct facts_module *m = ex_cur_module(c);
	struct facts_ref *r = gi_vec_push_zero(&m->refs);
	r->kind = kind;
	r->target = target;
	r->line = line;
}

/* The function that holds the calls made outside any function of the
 * current module (FACTS_MODULE_BODY, created on first use): code run when
 * the module is compiled, such as a DSL's macro calls (`get "/", ...`),
 * attribute values and @before_compile. NULL inside a quote, whose
 * module-level code belongs to the macro's caller. */
static struct facts_function *body_function(struct ex_ctx *c)
{
	if (!c->mod || c->in_quote)
		return NULL;
	struct facts_module *m = ex_cur_module(c);
	if (!c->mod->body_function) {
		bool created;
		long fi = ex_function_find_or_add(c, FACTS_MODULE_BODY, strlen(FACTS_MODULE_BODY),
		                                  0, &created);
		struct facts_function *fn = gi_vec_get(&m->functions, (size_t)fi);
		ex_function_touch(fn, FACTS_DEF, false, m->line_start, m->line_end);
		fn->generated_by = "module body";
		c->mod->body_function = (size_t)fi + 1;
	}
	return gi_vec_get(&m->functions, c->mod->body_function - 1);
}

void ex_call_add(struct ex_ctx *c, enum facts_call_kind kind, const char *module,
                 const char *function, int arity, uint32_t line)
{
	struct facts_function *fn = c->function >= 0 ? ex_cur_function(c) : body_function(c);
	if (!fn)
		return;
	struct facts_call *call = gi_vec_push_zero(&fn->calls);
	call->kind = kind;
	call->module = module;
	call->function = function;
	call->arity = arity;
	call->line = line;
}

void ex_remote_call(struct ex_ctx *c, const char *module, const char *function, int arity,
                    uint32_t line)
{
	ex_ref_add(c, FACTS_REF_CALL, module, line);
	ex_call_add(c, FACTS_CALL_REMOTE, module, function, arity, line);
}

/* ---- calls the compiler writes (docs/EXTRACTION.md, "Compiler rewrites") */

/* Records a call the compiler writes (kind compiler: never an edge of the
 * graph): to an Erlang module for Kernel's inlined functions and
 * operators, to Enum and Collectable for `for` and `in`. Not in quotes (code of the macro's
 * callers) nor in guards (where the compiler emits tests, not calls). */
void ex_compiler_call(struct ex_ctx *c, const char *module, const char *function, int arity,
                      uint32_t line)
{
	if (!c->mod || c->in_quote || c->in_guard)
		return;
	ex_call_add(c, FACTS_CALL_COMPILER, module, function, arity, line);
}

/* module.function/arity as written (module "Kernel" for operators and
 * Kernel's imported functions): the Erlang call the compiler makes of it,
 * if it rewrites it (elixir_rewrite.erl's table, ex_inline_lookup). */
void ex_compiler_rewrite(struct ex_ctx *c, const char *module, const char *function, size_t len,
                         int arity, uint32_t line)
{
	char name[16];
	if (len >= sizeof(name) || c->in_quote || c->in_guard)
		return;
	memcpy(name, function, len);
	name[len] = '\0';
	const struct ex_inline *e = ex_inline_lookup(module, name, arity);
	if (e)
		ex_compiler_call(c, e->erl_module, e->erl_name, e->erl_arity, line);
}

/* Kernel's macros that expand to a call of a protocol (Elixir 1.14):
 * to_string(x) is String.Chars.to_string/1, to_charlist(x)
 * List.Chars.to_charlist/1. */
const char *ex_kernel_expansion(const char *name, size_t len, int arity)
{
	if (arity == 1 && GI_MEM_IS(name, len, "to_string"))
		return "String.Chars";
	if (arity == 1 && GI_MEM_IS(name, len, "to_charlist"))
		return "List.Chars";
	return NULL;
}

/* The module that an `import ..., only:` in scope gives name/arity from, or NULL. */
const char *ex_import_lookup(const struct ex_ctx *c, const char *name, size_t len, int arity)
{
	char key[EX_MAX_NAME + 16];
	int n = ex_key_make(key, sizeof(key), "&", name, len, '/', arity);
	if (n < 0 || (size_t)n >= sizeof(key))
		return NULL;
	return alias_lookup(c, key, (size_t)n);
}

/* Records the call (kind local or capture) of `name`/arity made in the
 * current function: a remote one when an import with `only:` provides it. */
void ex_local_call_kind(struct ex_ctx *c, TSNode name, int arity, enum facts_call_kind kind,
                        uint32_t line)
{
	if (!c->mod || c->in_quote)
		return;
	size_t len;
	const char *t = ex_text_of(c, name, &len);
	if (len == 0 || len >= EX_MAX_NAME)
		return;
	const char *fun = gi_arena_strndup(&c->f->arena, t, len);
	const char *imported = ex_import_lookup(c, t, len, arity);
	if (imported) {
		ex_ref_add(c, kind == FACTS_CALL_CAPTURE ? FACTS_REF_CAPTURE : FACTS_REF_CALL,
		           imported, line);
		ex_call_add(c, kind == FACTS_CALL_CAPTURE ? kind : FACTS_CALL_REMOTE, imported, fun,
		            arity, line);
		return;
	}
	ex_call_add(c, kind, c->mod->name, fun, arity, line);
}

void ex_local_call(struct ex_ctx *c, TSNode name, int arity)
{
	ex_local_call_kind(c, name, arity, FACTS_CALL_LOCAL, ex_line_of(name));
}

/* ---- dispatch: modules as values, MFAs, apply --------------------------- */

/* A module named literally: an alias, __MODULE__, or an Erlang atom when
 * `erlang` (in an MFA argument, where an atom is a module). */
const char *ex_literal_module(struct ex_ctx *c, TSNode n, unsigned depth, bool erlang)
{
	enum node_kind k = ex_kind_of(n);
	if (k == N_ALIAS || k == N_DOT || (k == N_IDENTIFIER && ex_text_is(c, n, "__MODULE__")) ||
	    (erlang && k == N_ATOM))
		return ex_module_of(c, n, depth);
	return NULL;
}

/* The function name a literal atom `:f` gives, or NULL. */
const char *ex_literal_function(struct ex_ctx *c, TSNode n)
{
	size_t len;
	const char *t = ex_text_of(c, n, &len);
	if (ex_kind_of(n) != N_ATOM || len < 2 || len >= EX_MAX_NAME || t[0] != ':')
		return NULL;
	return gi_arena_strndup(&c->f->arena, t + 1, len - 1);
}

/* The number of elements of a literal list (the arity an argument list
 * gives), or -1 when `n` is not a list. */
static int literal_arity(TSNode n)
{
	if (ex_kind_of(n) != N_LIST)
		return -1;
	int count = 0;
	uint32_t k = ts_node_named_child_count(n);
	for (uint32_t i = 0; i < k; i++) {
		TSNode e = ts_node_named_child(n, i);
		if (ex_kind_of(e) == N_COMMENT)
			continue;
		/* `[x | rest]`: a tail of unknown length */
		if (strcmp(ts_node_type(e), "binary_operator") == 0) {
			TSNode op = ts_node_child_by_field_name(e, "operator", 8);
			if (!ts_node_is_null(op) && strcmp(ts_node_type(op), "|") == 0)
				return -1;
		}
		count++;
	}
	return count;
}

/* Records module `m`, function `f` and arguments `a` (three nodes) as an
 * MFA (kind mfa or apply) when the module and the function are literals.
 * Returns true when it was one. */
static bool mfa_record(struct ex_ctx *c, TSNode m, TSNode f, TSNode a, unsigned depth, bool apply,
                       int extra, uint32_t line)
{
	const char *mod = ex_literal_module(c, m, depth, true);
	const char *fun = mod ? ex_literal_function(c, f) : NULL;
	if (!fun)
		return false;
	/* An MFA tuple held as a value (`error_handler: {M, :f, []}`,
	 * `opts[:m2p] || {__MODULE__, :f, [opts]}`) is, by convention, called
	 * with arguments of the caller's before its own: any arity. A child
	 * spec's `start: {M, :f, args}` is applied as written, as are the MFA
	 * arguments of spawn/3 and the like. */
	TSNode tuple = ts_node_parent(m);
	bool option = !apply && !ts_node_is_null(tuple) && ex_kind_of(tuple) == N_TUPLE;
	TSNode parent = option ? ts_node_parent(tuple) : (TSNode){0};
	if (option && !ts_node_is_null(parent) && strcmp(ts_node_type(parent), "pair") == 0) {
		size_t klen;
		const char *k = ex_text_of(c, ex_field(parent, ex_tables.f_key), &klen);
		option = !GI_MEM_STARTS(k, klen, "start:");
	}
	ex_ref_add(c, apply ? FACTS_REF_APPLY : FACTS_REF_MFA, mod, line);
	int arity = option ? -1 : literal_arity(a);
	ex_call_add(c, apply ? FACTS_CALL_APPLY : FACTS_CALL_MFA, mod, fun,
	            arity >= 0 ? arity + extra : -1, line);
	if (apply && c->mod && !c->in_quote) {
		struct facts_function *fn = ex_cur_function(c);
		facts_site_add(
		    ex_cur_module(c), FACTS_SITE_APPLY, fn ? fn->name : NULL, fn ? fn->arity : 0,
		    line, gi_arena_printf(&c->f->arena, "%s.%s/%d", mod, fun, literal_arity(a)));
	}
	return true;
}

/* A call to a function that takes an MFA (ex_mfa_position): records it. */
void ex_mfa_call(struct ex_ctx *c, const struct ex_call *call, const char *module,
                 const char *function, int arity, unsigned depth)
{
	bool apply = false;
	int extra = 0;
	int pos = ex_mfa_position(module, function, arity, &apply, &extra);
	if (pos < 0)
		return;
	struct ex_args a;
	ex_args_read(c, call->args, depth, &a);
	if ((int)a.count != arity || pos + 2 >= 4)
		return;
	mfa_record(c, a.first[pos], a.first[pos + 1], a.first[pos + 2], depth, apply, extra,
	           ex_line_of(call->node));
}

/* `Module.concat(A, B)` / `Module.concat([A, B])` of aliases: the module
 * name it makes ("A.B"), or NULL. */
const char *ex_concat_name(struct ex_ctx *c, const struct ex_call *call, unsigned depth)
{
	struct ex_args a;
	ex_args_read(c, call->args, depth, &a);
	TSNode parts[8];
	uint32_t n = 0;
	if (a.count == 1 && ex_kind_of(a.first[0]) == N_LIST) {
		uint32_t k = ts_node_named_child_count(a.first[0]);
		for (uint32_t i = 0; i < k && n < 8; i++)
			parts[n++] = ts_node_named_child(a.first[0], i);
		if (k > 8)
			return NULL;
	} else if (a.count == 2) {
		parts[n++] = a.first[0];
		parts[n++] = a.first[1];
	}
	if (n == 0)
		return NULL;
	char buf[EX_MAX_NAME];
	size_t used = 0;
	for (uint32_t i = 0; i < n; i++) {
		const char *m = ex_literal_module(c, parts[i], depth, false);
		if (!m || m[0] == ':')
			return NULL;
		int w = snprintf(buf + used, sizeof(buf) - used, "%s%s", used ? "." : "", m);
		if (w < 0 || (size_t)w >= sizeof(buf) - used)
			return NULL;
		used += (size_t)w;
	}
	return gi_arena_strndup(&c->f->arena, buf, used);
}

/* A tuple `{M, :f, args}` with a literal module and function is an MFA
 * (child specs' `start:`, telemetry handlers, :timer callbacks); its module
 * is not also a value. */
void ex_walk_tuple(struct ex_ctx *c, TSNode n, unsigned depth)
{
	if (ts_node_named_child_count(n) == 3) {
		TSNode m = ts_node_named_child(n, 0), f = ts_node_named_child(n, 1),
		       a = ts_node_named_child(n, 2);
		if (ex_kind_of(a) == N_LIST && ex_kind_of(m) != N_ATOM &&
		    mfa_record(c, m, f, a, depth, false, 0, ex_line_of(n))) {
			ex_walk(c, a, depth, 0);
			return;
		}
	}
	ex_walk_children(c, n, depth);
}
