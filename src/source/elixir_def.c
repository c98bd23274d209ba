/*
 * elixir_def.c - the Elixir walk's function definitions: def, defp,
 * defmacro, defguard, defdelegate heads and clauses, the functions a file's
 * own macros define (templates), and definitions rebuilt from an error node
 * (ex_walk_error).
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

/* ---- functions --------------------------------------------------------- */

long ex_function_find_or_add(struct ex_ctx *c, const char *name, size_t name_len, int arity,
                             bool *created)
{
	char key[EX_MAX_NAME + 16];
	ex_key_make(key, sizeof(key), "", name, name_len, '/', arity);
	void *idx = gi_map_get(&c->mod->functions, key);
	*created = idx == NULL;
	if (idx)
		return (long)((size_t)idx - 1);
	struct facts_module *m = ex_cur_module(c);
	struct facts_function *fn = gi_vec_push_zero(&m->functions);
	fn->name = gi_arena_strndup(&c->f->arena, name, name_len);
	fn->arity = arity;
	gi_vec_init(&fn->calls, sizeof(struct facts_call));
	gi_map_put(&c->mod->functions, key, (void *)(m->functions.len));
	return (long)m->functions.len - 1;
}

/* True when `args` is the single argument of an `unquote` that names the
 * variable of the module-level `for` being expanded (c->unquote_name set). */
static bool unquote_for_var(struct ex_ctx *c, TSNode args, unsigned depth)
{
	if (!c->unquote_name)
		return false;
	struct ex_args a;
	ex_args_read(c, args, depth, &a);
	size_t len;
	const char *t = ex_text_of(c, a.first[0], &len);
	return a.count == 1 && ex_kind_of(a.first[0]) == N_IDENTIFIER && len == c->for_var_len &&
	       memcmp(t, c->for_var, len) == 0;
}

static bool head_read(struct ex_ctx *c, TSNode head, unsigned depth, struct ex_head *h)
{
	memset(h, 0, sizeof(*h));
	if (ex_kind_of(head) == N_BINARY && ex_op_of(head) == OP_WHEN) {
		h->guard = ex_field(head, ex_tables.f_right);
		head = ex_field(head, ex_tables.f_left);
	}
	size_t len;
	switch (ex_kind_of(head)) {
	case N_IDENTIFIER:
		h->name = ex_text_of(c, head, &h->name_len);
		return h->name_len > 0 && h->name_len < EX_MAX_NAME;
	case N_CALL: {
		struct ex_call call;
		ex_call_read(c, head, depth, &call);
		if (ex_kind_of(call.target) == N_IDENTIFIER &&
		    ex_text_is(c, call.target, "unquote") && unquote_for_var(c, call.args, depth)) {
			/* def unquote(name), name bound by a module-level for */
			h->name = c->unquote_name;
			h->name_len = strlen(c->unquote_name);
			return true;
		}
		if (ex_kind_of(call.target) == N_IDENTIFIER) {
			h->name = ex_text_of(c, call.target, &h->name_len);
		} else if (ex_kind_of(call.target) == N_CALL) {
			/* def unquote(:name)(args), def unquote(name)(args) in a for */
			struct ex_call inner;
			struct ex_args ia;
			ex_call_read(c, call.target, depth, &inner);
			if (!ex_text_is(c, inner.target, "unquote"))
				return false;
			ex_args_read(c, inner.args, depth, &ia);
			if (unquote_for_var(c, inner.args, depth)) {
				h->name = c->unquote_name;
				h->name_len = strlen(c->unquote_name);
			} else if (ia.count == 1 && ex_kind_of(ia.first[0]) == N_ATOM) {
				h->name = ex_text_of(c, ia.first[0], &len) + 1;
				h->name_len = len - 1;
			} else if (ia.count == 1 && ex_kind_of(ia.first[0]) == N_QUOTED_ATOM &&
			           ts_node_named_child_count(ia.first[0]) == 1 &&
			           ex_kind_of(ts_node_named_child(ia.first[0], 0)) ==
			               N_QUOTED_CONTENT) {
				/* def unquote(:"~~~")(expr) */
				h->name = ex_text_of(c, ts_node_named_child(ia.first[0], 0),
				                     &h->name_len);
			} else {
				return false;
			}
		} else {
			return false;
		}
		if (h->name_len == 0 || h->name_len >= EX_MAX_NAME)
			return false;
		h->args = call.args;
		if (ts_node_is_null(call.args))
			return true;
		TSTreeCursor *cur = ex_cursor_at(c, depth, call.args);
		for (bool ok = ts_tree_cursor_goto_first_child(cur); ok;
		     ok = ts_tree_cursor_goto_next_sibling(cur)) {
			TSNode k = ts_tree_cursor_current_node(cur);
			if (!ts_node_is_named(k) || ex_kind_of(k) == N_COMMENT)
				continue;
			h->arity++;
			if (ex_kind_of(k) == N_BINARY && ex_op_of(k) == OP_DEFAULT)
				h->defaults++;
		}
		return true;
	}
	case N_BINARY: {
		/* def left <~> right; defmacro first..last//step is ..///3 */
		TSNode op = ex_field(head, ex_tables.f_operator);
		h->name = ex_text_of(c, op, &h->name_len);
		h->left = ex_field(head, ex_tables.f_left);
		h->right = ex_field(head, ex_tables.f_right);
		h->arity = 2;
		if (GI_MEM_IS(h->name, h->name_len, "//") && ex_kind_of(h->left) == N_BINARY) {
			size_t inner_len;
			const char *inner =
			    ex_text_of(c, ex_field(h->left, ex_tables.f_operator), &inner_len);
			if (GI_MEM_IS(inner, inner_len, "..")) {
				h->name = "..//";
				h->name_len = 4;
				h->arity = 3;
			}
		}
		return h->name_len > 0 && h->name_len < 8 && ex_op_of(head) != OP_DEFAULT;
	}
	case N_BLOCK: {
		/* defmacro (..): a nullary operator */
		TSNode op = ts_node_named_child(head, 0);
		if (ts_node_named_child_count(head) != 1 || ex_kind_of(op) != N_OPERATOR_IDENTIFIER)
			return false;
		h->name = ex_text_of(c, op, &h->name_len);
		return h->name_len > 0 && h->name_len < 8;
	}
	case N_UNARY: {
		/* def -value, def not value, defmacro @expr */
		TSNode op = ex_field(head, ex_tables.f_operator);
		h->name = ex_text_of(c, op, &h->name_len);
		h->left = ex_field(head, ex_tables.f_operand);
		h->arity = 1;
		return h->name_len > 0 && h->name_len < 8;
	}
	default:
		return false;
	}
}

static enum facts_function_kind function_kind(enum ex_word w)
{
	switch (w) {
	case EX_W_DEFP:
		return FACTS_DEFP;
	case EX_W_DEFMACRO:
		return FACTS_DEFMACRO;
	case EX_W_DEFMACROP:
		return FACTS_DEFMACROP;
	case EX_W_DEFGUARD:
		return FACTS_DEFGUARD;
	case EX_W_DEFGUARDP:
		return FACTS_DEFGUARDP;
	case EX_W_DEFDELEGATE:
		return FACTS_DEFDELEGATE;
	default:
		return FACTS_DEF;
	}
}

void ex_function_touch(struct facts_function *fn, enum facts_function_kind kind, bool public,
                       uint32_t start, uint32_t end)
{
	if (fn->line_start == 0 || start < fn->line_start)
		fn->line_start = start;
	if (end > fn->line_end)
		fn->line_end = end;
	fn->kind = kind;
	fn->is_public = public;
}

/* Walks one clause (head arguments, guard and body) with fresh metrics
 * charged to function `fi`. */
void ex_clause_walk(struct ex_ctx *c, long fi, const struct ex_head *h, TSNode body,
                    bool body_is_block, bool has_body, unsigned depth)
{
	struct ex_metrics metrics = {.cyclomatic = 1};
	long saved_function = c->function;
	struct ex_metrics *saved_metrics = c->metrics;
	size_t saved_aliases = c->aliases.len;
	bool saved_pattern = c->in_pattern;
	c->function = fi;
	c->metrics = &metrics;
	c->in_pattern = true;
	if (!ts_node_is_null(h->args))
		ex_walk_children(c, h->args, depth);
	if (!ts_node_is_null(h->left))
		ex_walk(c, h->left, depth, 0);
	if (!ts_node_is_null(h->right))
		ex_walk(c, h->right, depth, 0);
	c->in_pattern = saved_pattern;
	if (has_body)
		ex_body_hash(c, body, ex_line_of(ts_node_is_null(h->args) ? body : h->args));
	if (!ts_node_is_null(h->guard)) {
		bool saved_guard = c->in_guard;
		c->in_guard = true;
		ex_walk(c, h->guard, depth, 0);
		c->in_guard = saved_guard;
	}
	if (!ts_node_is_null(body)) {
		if (body_is_block)
			ex_walk_children(c, body, depth);
		else
			ex_walk(c, body, depth, 0);
	}
	if (has_body) {
		struct facts_function *fn = ex_cur_function(c);
		fn->cyclomatic += metrics.cyclomatic;
		fn->cognitive += metrics.cognitive;
		if (metrics.max_depth > fn->max_nesting)
			fn->max_nesting = metrics.max_depth;
	}
	c->function = saved_function;
	c->metrics = saved_metrics;
	c->aliases.len = saved_aliases;
}

/* Opens a clause of function `fi` whose children are walked by the caller. */
static void clause_open(struct ex_ctx *c, long fi, struct ex_saved *sv, struct ex_metrics *m)
{
	memset(m, 0, sizeof(*m));
	m->cyclomatic = 1;
	ex_saved_take(c, sv);
	c->function = fi;
	c->metrics = m;
}

/* Closes a clause opened by clause_open that spans lines start..end. */
static void clause_close(struct ex_ctx *c, const struct ex_saved *sv, const struct ex_metrics *m,
                         uint32_t start, uint32_t end)
{
	struct facts_function *fn = ex_cur_function(c);
	fn->cyclomatic += m->cyclomatic;
	fn->cognitive += m->cognitive;
	if (m->max_depth > fn->max_nesting)
		fn->max_nesting = m->max_depth;
	if (end > fn->line_end)
		fn->line_end = end;
	fn->clauses++;
	fn->lines += end >= start ? end - start + 1 : 1;
	ex_saved_restore(c, sv);
}

/* Registers one definition of `h` made with `w` (a clause when `has_body`,
 * else a bodiless head) at lines start..end, with the module's pending @doc
 * and @impl, and the arities its default arguments generate. Returns the
 * function's index in the module. */
static long function_register(struct ex_ctx *c, enum ex_word w, const struct ex_head *h,
                              bool has_body, uint32_t start, uint32_t end)
{
	enum facts_function_kind kind = function_kind(w);
	bool public =
	    w == EX_W_DEF || w == EX_W_DEFMACRO || w == EX_W_DEFGUARD || w == EX_W_DEFDELEGATE;
	if (c->mod->is_protocol && !has_body)
		kind = FACTS_DEFCALLBACK;
	bool created;
	long fi = ex_function_find_or_add(c, h->name, h->name_len, h->arity, &created);
	struct facts_function *fn = gi_vec_get(&ex_cur_module(c)->functions, (size_t)fi);
	ex_function_touch(fn, kind, public, start, end);
	if (c->mod->pending_doc) {
		fn->has_doc = true;
		fn->doc_false = c->mod->pending_doc_false;
	}
	if (c->mod->pending_impl) {
		fn->has_impl = true;
		/* size: how many default arguments the head has; the compiler
		 * accepts @impl when any arity they generate is a callback. */
		struct facts_site *s = facts_site_add(
		    ex_cur_module(c), FACTS_SITE_IMPL, fn->name, fn->arity, start,
		    c->mod->pending_impl_value ? c->mod->pending_impl_value : "true");
		s->size = (uint32_t)h->defaults;
	}
	if (c->mod->pending_deprecated)
		fn->deprecated = true;
	c->mod->pending_doc = c->mod->pending_doc_false = c->mod->pending_impl = false;
	c->mod->pending_deprecated = false;
	c->mod->pending_impl_value = NULL;
	if (!ts_node_is_null(h->guard) && w != EX_W_DEFGUARD && w != EX_W_DEFGUARDP)
		fn->has_guard = true;
	if (has_body) {
		fn->clauses++;
		fn->lines += end - start + 1;
	}
	/* Default arguments generate the lower arities (`fn` moves when the
	 * vector grows: what they inherit is read first). */
	bool deprecated = fn->deprecated;
	for (int arity = h->arity - h->defaults; arity < h->arity; arity++) {
		long gi = ex_function_find_or_add(c, h->name, h->name_len, arity, &created);
		struct facts_function *g = gi_vec_get(&ex_cur_module(c)->functions, (size_t)gi);
		ex_function_touch(g, kind, public, start, end);
		if (created)
			g->from_defaults = true;
		g->deprecated |= deprecated;
	}
	return fi;
}

static void do_def_one(struct ex_ctx *c, const struct ex_call *call, unsigned depth,
                       enum ex_word w);

/* The position of parameter `name` in the current macro's head, or -1. */
static int macro_param(struct ex_ctx *c, TSNode name, unsigned depth)
{
	if (ex_kind_of(name) != N_IDENTIFIER || ts_node_is_null(c->macro->args))
		return -1;
	size_t len;
	const char *want = ex_text_of(c, name, &len);
	int i = 0;
	TSTreeCursor *cur = ex_cursor_at(c, depth, c->macro->args);
	for (bool ok = ts_tree_cursor_goto_first_child(cur); ok;
	     ok = ts_tree_cursor_goto_next_sibling(cur)) {
		TSNode k = ts_tree_cursor_current_node(cur);
		if (!ts_node_is_named(k) || ex_kind_of(k) == N_COMMENT)
			continue;
		if (ex_kind_of(k) == N_BINARY && ex_op_of(k) == OP_DEFAULT)
			k = ex_field(k, ex_tables.f_left);
		size_t klen;
		const char *t = ex_text_of(c, k, &klen);
		if (ex_kind_of(k) == N_IDENTIFIER && klen == len && memcmp(t, want, len) == 0)
			return i;
		i++;
	}
	return -1;
}

/* In a quote of the macro being walked: `def unquote(param)(args)` makes
 * the macro a template (struct ex_template). */
static void template_record(struct ex_ctx *c, TSNode head, enum ex_word w, unsigned depth)
{
	if (ex_kind_of(head) == N_BINARY && ex_op_of(head) == OP_WHEN)
		head = ex_field(head, ex_tables.f_left);
	if (ex_kind_of(head) != N_CALL || !c->mod)
		return;
	struct ex_call call, inner;
	struct ex_args a, ia;
	ex_call_read(c, head, depth, &call);
	if (ex_kind_of(call.target) != N_CALL)
		return;
	ex_call_read(c, call.target, depth, &inner);
	ex_args_read(c, inner.args, depth, &ia);
	if (!ex_text_is(c, inner.target, "unquote") || ia.count != 1)
		return;
	int param = macro_param(c, ia.first[0], depth);
	if (param < 0 || param >= 4 || c->templates.len >= 256)
		return;
	ex_args_read(c, call.args, depth, &a);
	struct ex_template t = {
	    .module = c->mod->name,
	    .macro = c->macro->name,
	    .min_arity = c->macro->min_arity,
	    .max_arity = c->macro->max_arity,
	    .param = param,
	    .def_arity = (int)a.count,
	    .is_macro = w == EX_W_DEFMACRO || w == EX_W_DEFMACROP,
	    .is_public = w == EX_W_DEF || w == EX_W_DEFMACRO,
	    .by = gi_arena_printf(&c->f->arena, "%s.%s/%d", c->mod->name, c->macro->name,
	                          c->macro->max_arity),
	};
	gi_vec_push(&c->templates, &t);
}

/* The names a macro argument gives: a literal atom; the variable of the
 * module-level `for` being expanded (each value); an atom interpolating only
 * that variable (`:"light_#{color}"`, each value). Returns how many were
 * written to `out` (arena strings). */
static int template_names(struct ex_ctx *c, TSNode arg, const char **out, int max)
{
	const char *atom = ex_literal_function(c, arg);
	if (atom) {
		out[0] = atom;
		return 1;
	}
	size_t len;
	const char *t = ex_text_of(c, arg, &len);
	if (c->for_count == 0)
		return 0;
	if (ex_kind_of(arg) == N_IDENTIFIER && len == c->for_var_len &&
	    memcmp(t, c->for_var, len) == 0) {
		int n = 0;
		for (int i = 0; i < c->for_count && n < max; i++)
			if (c->for_values[i][0] < '0' || c->for_values[i][0] > '9')
				out[n++] = c->for_values[i];
		return n;
	}
	if (ex_kind_of(arg) != N_QUOTED_ATOM)
		return 0;
	int n = 0;
	for (int v = 0; v < c->for_count && n < max; v++) {
		char buf[EX_MAX_NAME];
		size_t used = 0;
		uint32_t k = ts_node_named_child_count(arg);
		for (uint32_t i = 0; i < k; i++) {
			TSNode part = ts_node_named_child(arg, i);
			const char *pt;
			size_t plen;
			if (ex_kind_of(part) == N_QUOTED_CONTENT) {
				pt = ex_text_of(c, part, &plen);
			} else if (ex_kind_of(part) == N_INTERPOLATION &&
			           ts_node_named_child_count(part) == 1 &&
			           ex_kind_of(ts_node_named_child(part, 0)) == N_IDENTIFIER &&
			           ex_text_of(c, ts_node_named_child(part, 0), &plen) &&
			           plen == c->for_var_len &&
			           memcmp(ex_text_of(c, ts_node_named_child(part, 0), &plen),
			                  c->for_var, plen) == 0) {
				pt = c->for_values[v];
				plen = strlen(pt);
			} else {
				return 0;
			}
			if (used + plen >= sizeof(buf))
				return 0;
			memcpy(buf + used, pt, plen);
			used += plen;
		}
		if (used == 0)
			return 0;
		out[n++] = gi_arena_strndup(&c->f->arena, buf, used);
	}
	return n;
}

/* A module-body call `name(args)` of a template macro of this file (from
 * this module or one it imports): the functions it defines, generated. */
void ex_template_expand(struct ex_ctx *c, const struct ex_call *call, unsigned depth)
{
	if (c->templates.len == 0 || !c->mod || c->function >= 0 || c->in_quote)
		return;
	struct ex_args a;
	ex_args_read(c, call->args, depth, &a);
	for (size_t i = 0; i < c->templates.len; i++) {
		const struct ex_template *t = gi_vec_get(&c->templates, i);
		if ((int)a.count < t->min_arity || (int)a.count > t->max_arity ||
		    (int)a.count <= t->param || !ex_text_is(c, call->target, t->macro))
			continue;
		char key[EX_MAX_NAME + 8];
		snprintf(key, sizeof(key), "%d:%s", (int)FACTS_REF_IMPORT, t->module);
		if (strcmp(t->module, c->mod->name) != 0 && !gi_map_get(&c->mod->refs, key))
			continue;
		const char *names[256];
		int n = template_names(c, a.first[t->param], names, 256);
		enum facts_function_kind kind =
		    t->is_macro ? (t->is_public ? FACTS_DEFMACRO : FACTS_DEFMACROP)
		                : (t->is_public ? FACTS_DEF : FACTS_DEFP);
		for (int k = 0; k < n; k++)
			ex_generated_add_kind(
			    c, gi_arena_printf(&c->f->arena, "%s/%d", names[k], t->def_arity),
			    t->by, ex_line_of(call->node), kind, t->is_public);
	}
}

/* A definition; inside a module-level `for var <- [:a, :b]` whose head is
 * `unquote(var)`, one definition per value. */
NOINLINE void ex_do_def(struct ex_ctx *c, const struct ex_call *call, unsigned depth,
                        enum ex_word w)
{
	struct ex_head h;
	struct ex_args a;
	if (c->for_count > 0 && !c->in_quote && c->function < 0 && !c->unquote_name) {
		static const char probe[] = "unquote";
		ex_args_read(c, call->args, depth, &a);
		c->unquote_name = probe;
		bool per_value =
		    a.count > 0 && head_read(c, a.first[0], depth, &h) && h.name == c->unquote_name;
		c->unquote_name = NULL;
		if (per_value) {
			for (int i = 0; i < c->for_count; i++) {
				/* a name, not a number of `for n <- [1, 2]` */
				if (c->for_values[i][0] >= '0' && c->for_values[i][0] <= '9')
					continue;
				c->unquote_name = c->for_values[i];
				do_def_one(c, call, depth, w);
			}
			c->unquote_name = NULL;
			return;
		}
	}
	do_def_one(c, call, depth, w);
}

static void do_def_one(struct ex_ctx *c, const struct ex_call *call, unsigned depth, enum ex_word w)
{
	struct ex_args a;
	struct ex_head h;
	ex_args_read(c, call->args, depth, &a);
	/* Definitions are made in module bodies; inside a function a `def...`
	 * call is an ordinary call (Kernel.Utils calls its defguard/3), unless
	 * the file has a syntax error, which may have swallowed an `end`. */
	bool defines = c->mod && !c->in_quote && (c->function < 0 || c->f->errors.len > 0);
	if (!defines || a.count == 0 || !head_read(c, a.first[0], depth, &h)) {
		/* A public definition inside a quote in a function is injected
		 * into the module that uses it (one per default arity). */
		if (c->in_quote && c->macro && a.count > 0)
			template_record(c, a.first[0], w, depth);
		if (c->in_quote && c->function >= 0 && a.count > 0 &&
		    (w == EX_W_DEF || w == EX_W_DEFMACRO || w == EX_W_DEFGUARD ||
		     w == EX_W_DEFDELEGATE) &&
		    head_read(c, a.first[0], depth, &h)) {
			const char *name = gi_arena_strndup(&c->f->arena, h.name, h.name_len);
			bool macro = w == EX_W_DEFMACRO || w == EX_W_DEFGUARD;
			for (int arity = h.arity - h.defaults; arity <= h.arity; arity++)
				ex_call_add(c,
				            macro ? FACTS_CALL_INJECT_MACRO : FACTS_CALL_INJECT_DEF,
				            NULL, name, arity, ex_line_of(call->node));
		}
		if (c->function >= 0 && !c->in_quote) {
			int arity = (int)a.count + (ts_node_is_null(call->do_block) ? 0 : 1);
			ex_local_call(c, call->target, arity);
		}
		c->quote_def += c->in_quote;
		if (!ts_node_is_null(call->args))
			ex_walk_children(c, call->args, depth);
		if (!ts_node_is_null(call->do_block))
			ex_walk_children(c, call->do_block, depth);
		c->quote_def -= c->in_quote;
		return;
	}
	TSNode body = call->do_block;
	bool body_is_block = !ts_node_is_null(body);
	TSNode opts = a.count >= 2 && ex_kind_of(a.last) == N_KEYWORDS ? a.last : (TSNode){0};
	if (!body_is_block && !ts_node_is_null(opts))
		body = ex_keyword_value(c, opts, depth, "do");
	bool has_body = !ts_node_is_null(body) || w == EX_W_DEFDELEGATE ||
	                ((w == EX_W_DEFGUARD || w == EX_W_DEFGUARDP) && !ts_node_is_null(h.guard));
	uint32_t start = ex_line_of(call->node);
	long fi = function_register(c, w, &h, has_body, start, ex_end_line_of(call->node));
	if (w == EX_W_DEFGUARD || w == EX_W_DEFGUARDP) {
		/* The guard expression is the definition's body. */
		body = h.guard;
		body_is_block = false;
		h.guard = (TSNode){0};
	}
	if (w == EX_W_DEFDELEGATE && !ts_node_is_null(opts)) {
		struct facts_function *fn = gi_vec_get(&ex_cur_module(c)->functions, (size_t)fi);
		const char *to = ex_module_of(c, ex_keyword_value(c, opts, depth, "to"), depth);
		TSNode as = ex_keyword_value(c, opts, depth, "as");
		const char *target = fn->name;
		size_t len;
		if (ex_kind_of(as) == N_ATOM && ex_text_of(c, as, &len)[0] == ':' && len > 1 &&
		    len < EX_MAX_NAME)
			target =
			    gi_arena_strndup(&c->f->arena, ex_text_of(c, as, &len) + 1, len - 1);
		fn->delegate_to = to;
		if (to) {
			long saved = c->function;
			c->function = fi;
			ex_remote_call(c, to, target, h.arity, start);
			c->function = saved;
		}
	}
	struct ex_macro_clause mc = {gi_arena_strndup(&c->f->arena, h.name, h.name_len),
	                             h.arity - h.defaults, h.arity, h.args};
	const struct ex_macro_clause *saved_macro = c->macro;
	if (w == EX_W_DEFMACRO || w == EX_W_DEFMACROP)
		c->macro = &mc;
	/* A defguard's body is a guard: expanded into its callers' guards, where
	 * the compiler emits tests, not calls. */
	bool saved_guard = c->in_guard;
	c->in_guard = c->in_guard || w == EX_W_DEFGUARD || w == EX_W_DEFGUARDP;
	ex_clause_walk(c, fi, &h, body, body_is_block, has_body, depth);
	c->in_guard = saved_guard;
	c->macro = saved_macro;
}

/* Walks a syntax error node. tree-sitter flattens the definitions it could
 * not finish into sibling sequences `defmodule` (arguments Name) ... and
 * `def` (arguments head) ...: such a sequence opens a module, or a function
 * clause, that lasts until the next one or the end of the node. */
void ex_walk_error(struct ex_ctx *c, TSNode n, unsigned depth)
{
	struct ex_module_state st;
	struct ex_saved module_saved, clause_saved;
	struct ex_metrics metrics;
	bool module_open = false;
	long fi = -1; /* open clause */
	uint32_t clause_start = 0, last_end = 0;
	enum ex_word pending = EX_W_NONE;
	uint32_t pending_line = 0;
	TSTreeCursor *cur = ex_cursor_at(c, depth, n);
	for (bool ok = ts_tree_cursor_goto_first_child(cur); ok;
	     ok = ts_tree_cursor_goto_next_sibling(cur)) {
		TSNode k = ts_tree_cursor_current_node(cur);
		if (!ts_node_is_named(k))
			continue;
		enum node_kind kk = ex_kind_of(k);
		if (kk == N_IDENTIFIER && !c->in_quote) {
			size_t len;
			const char *t = ex_text_of(c, k, &len);
			enum ex_word w = ex_word_lookup(t, len);
			if (w == EX_W_DEFMODULE || w == EX_W_DEFPROTOCOL ||
			    (w >= EX_W_DEF && w <= EX_W_DEFGUARDP)) {
				pending = w;
				pending_line = ex_line_of(k);
				continue;
			}
		}
		enum ex_word w = pending;
		pending = EX_W_NONE;
		if (w != EX_W_NONE && kk == N_ARGUMENTS) {
			struct ex_args a;
			struct ex_head h;
			ex_args_read(c, k, depth + 1, &a);
			if ((w == EX_W_DEFMODULE || w == EX_W_DEFPROTOCOL) && a.count >= 1) {
				const char *name = ex_module_name(c, a.first[0], depth + 1);
				if (!name)
					continue;
				if (fi >= 0)
					clause_close(c, &clause_saved, &metrics, clause_start,
					             last_end);
				fi = -1;
				if (module_open)
					ex_module_leave(c, &st, &module_saved);
				size_t index = c->f->modules.len;
				struct facts_module *m = facts_module_add(c->f, name);
				m->kind = w == EX_W_DEFPROTOCOL ? FACTS_PROTOCOL : FACTS_MODULE;
				m->line_start = pending_line;
				m->line_end = ex_end_line_of(n);
				ex_module_enter(c, index, &st, &module_saved);
				module_open = true;
				continue;
			}
			if (w != EX_W_DEFMODULE && w != EX_W_DEFPROTOCOL && c->mod &&
			    a.count >= 1 && head_read(c, a.first[0], depth + 1, &h)) {
				if (fi >= 0)
					clause_close(c, &clause_saved, &metrics, clause_start,
					             last_end);
				fi = function_register(c, w, &h, false, pending_line,
				                       ex_end_line_of(k));
				clause_start = pending_line;
				last_end = ex_end_line_of(k);
				clause_open(c, fi, &clause_saved, &metrics);
				if (!ts_node_is_null(h.args))
					ex_walk_children(c, h.args, depth + 1);
				if (!ts_node_is_null(h.guard))
					ex_walk(c, h.guard, depth + 1, 0);
				if (a.count >= 2)
					ex_walk(c, ex_keyword_value(c, a.last, depth + 1, "do"),
					        depth + 1, 0);
				continue;
			}
		}
		ex_walk(c, k, depth, 0);
		last_end = ex_end_line_of(k);
	}
	if (fi >= 0)
		clause_close(c, &clause_saved, &metrics, clause_start, last_end);
	if (module_open)
		ex_module_leave(c, &st, &module_saved);
}
