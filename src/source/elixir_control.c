/*
 * elixir_control.c - the Elixir walk's control flow and operators: if,
 * case, cond, with, for, try, receive (complexity), captures, binary
 * operators and the calls the compiler makes of them, ExUnit blocks,
 * raise, Record and unquote.
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

/* ---- control flow and operators ---------------------------------------- */

static int count_clauses(struct ex_ctx *c, TSNode block, unsigned depth)
{
	if (ts_node_is_null(block))
		return 0;
	if (ex_kind_of(block) == N_STAB)
		return 1;
	int n = 0;
	TSTreeCursor *cur = ex_cursor_at(c, depth, block);
	for (bool ok = ts_tree_cursor_goto_first_child(cur); ok;
	     ok = ts_tree_cursor_goto_next_sibling(cur))
		if (ex_kind_of(ts_tree_cursor_current_node(cur)) == N_STAB)
			n++;
	return n;
}

static bool is_block_keyword(const struct ex_ctx *c, TSNode key)
{
	size_t len;
	const char *t = ex_text_of(c, key, &len);
	static const char *const names[] = {"do:", "else:", "after:", "rescue:", "catch:"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n = strlen(names[i]);
		if (len >= n && memcmp(t, names[i], n) == 0)
			return true;
	}
	return false;
}

/* Walks a structure's body one nesting level deeper, in a scope of its own
 * (aliases and imports made there do not leak). */
static void nested_walk(struct ex_ctx *c, TSNode n, unsigned depth, bool children)
{
	size_t saved = c->aliases.len;
	if (c->metrics) {
		c->metrics->nesting++;
		c->metrics->depth++;
	}
	if (children)
		ex_walk_children(c, n, depth);
	else
		ex_walk(c, n, depth, 0);
	if (c->metrics) {
		c->metrics->nesting--;
		c->metrics->depth--;
	}
	c->aliases.len = saved;
}

/* The atom names and small integers of a literal list (`[:a, :b]`, `[1,
 * 2]`), as arena strings, or -1 when an element is neither. */
static int atom_list_read(struct ex_ctx *c, TSNode list, const char **out, int max)
{
	int n = 0;
	uint32_t k = ts_node_named_child_count(list);
	for (uint32_t i = 0; i < k; i++) {
		TSNode e = ts_node_named_child(list, i);
		if (ex_kind_of(e) == N_COMMENT)
			continue;
		const char *name = ex_literal_function(c, e);
		if (!name && ex_small_int(c, e) >= 0)
			name = gi_arena_printf(&c->f->arena, "%d", ex_small_int(c, e));
		if (!name || n >= max)
			return -1;
		out[n++] = name;
	}
	return n;
}

/* A module-level `for var <- LIST do ... end` where LIST is a literal list
 * of atoms or an attribute holding one (`for level <- @levels`): its body
 * is walked with `unquote(var)` standing for each value, so that the
 * definitions it makes are expanded (do_def). Returns false for any other
 * comprehension. */
static bool for_literal(struct ex_ctx *c, const struct ex_call *call, const struct ex_args *a,
                        unsigned depth)
{
	TSNode gen = a->first[0];
	TSNode body = call->do_block;
	if (ts_node_is_null(body) && a->count == 2)
		body = ex_keyword_value(c, a->last, depth, "do");
	if (ts_node_is_null(body) || a->count != (ts_node_is_null(call->do_block) ? 2u : 1u) ||
	    ex_kind_of(gen) != N_BINARY ||
	    !ex_text_is(c, ex_field(gen, ex_tables.f_operator), "<-"))
		return false;
	TSNode var = ex_field(gen, ex_tables.f_left), list = ex_field(gen, ex_tables.f_right);
	if (ex_kind_of(var) != N_IDENTIFIER)
		return false;
	if (ex_kind_of(list) == N_UNARY && ex_op_of(list) == OP_ATTRIBUTE) {
		TSNode name = ex_operand_of(c, list, depth);
		TSNode found = {0};
		for (int i = 0; i < c->mod->atom_list_count; i++)
			if (ex_kind_of(name) == N_IDENTIFIER &&
			    ex_text_is(c, name, c->mod->atom_lists[i].name))
				found = c->mod->atom_lists[i].list;
		list = found;
	}
	if (ex_kind_of(list) != N_LIST)
		return false;
	const char *values[256];
	int count = atom_list_read(c, list, values, 256);
	if (count <= 0)
		return false;
	const char *saved_var = c->for_var, **saved_values = c->for_values;
	size_t saved_len = c->for_var_len;
	int saved_count = c->for_count;
	c->for_var = ex_text_of(c, var, &c->for_var_len);
	c->for_values = values;
	c->for_count = count;
	if (!ts_node_is_null(call->do_block))
		ex_walk_children(c, body, depth);
	else
		ex_walk(c, body, depth, 0);
	c->for_var = saved_var;
	c->for_var_len = saved_len;
	c->for_values = saved_values;
	c->for_count = saved_count;
	return true;
}

NOINLINE static void compiler_for(struct ex_ctx *c, const struct ex_call *call,
                                  const struct ex_args *a, unsigned depth);

/* A module-body `for` that for_literal could not expand: when its body
 * defines public functions with unquoted names (`def unquote(name)(...)`),
 * their names are unknown here; the module gets FACTS_UNKNOWN_NAMES. */
static void for_unknown_names(struct ex_ctx *c, const struct ex_call *call, const struct ex_args *a,
                              unsigned depth)
{
	TSNode body = call->do_block;
	if (ts_node_is_null(body))
		body = ex_keyword_value(c, a->last, depth, "do");
	size_t len;
	const char *t = ex_text_of(c, body, &len);
	static const char *const defs[] = {"def unquote(", "defmacro unquote(",
	                                   "defdelegate unquote(", "defguard unquote("};
	bool found = false;
	for (size_t i = 0; !found && i < sizeof(defs) / sizeof(defs[0]); i++)
		found = len && memmem(t, len, defs[i], strlen(defs[i])) != NULL;
	if (!found)
		return;
	size_t glen;
	const char *g = ex_text_of(c, a->first[0], &glen);
	const char *by = gi_arena_printf(&c->f->arena, "for %.*s%s", (int)(glen > 60 ? 60 : glen),
	                                 g, glen > 60 ? "..." : "");
	char key[64];
	snprintf(key, sizeof(key), "%s/0", FACTS_UNKNOWN_NAMES);
	ex_generated_add_kind(c, key, by, ex_line_of(call->node), FACTS_DEF, false);
}

/* A cond's do-block, as nested_walk would, each clause's condition walked
 * as a test (c->test). */
static void cond_walk(struct ex_ctx *c, TSNode block, unsigned depth)
{
	size_t saved = c->aliases.len;
	if (c->metrics) {
		c->metrics->nesting++;
		c->metrics->depth++;
	}
	uint32_t k = ts_node_named_child_count(block);
	for (uint32_t i = 0; i < k; i++) {
		TSNode stab = ts_node_named_child(block, i);
		if (ex_kind_of(stab) != N_STAB) {
			ex_walk(c, stab, depth, 0);
			continue;
		}
		TSNode left = ex_field(stab, ex_tables.f_left),
		       right = ex_field(stab, ex_tables.f_right);
		TSNode saved_test = c->test;
		if (!ts_node_is_null(left) && ts_node_named_child_count(left) == 1)
			c->test = ts_node_named_child(left, 0);
		ex_walk(c, left, depth, 0);
		c->test = saved_test;
		ex_walk(c, right, depth, 0);
	}
	if (c->metrics) {
		c->metrics->nesting--;
		c->metrics->depth--;
	}
	c->aliases.len = saved;
}

NOINLINE void ex_do_control(struct ex_ctx *c, const struct ex_call *call, unsigned depth,
                            enum ex_word w)
{
	struct ex_args a;
	ex_args_read(c, call->args, depth, &a);
	if (w == EX_W_FOR && c->mod && c->function < 0 && !c->in_quote && a.count > 0 &&
	    for_literal(c, call, &a, depth))
		return;
	if (w == EX_W_FOR && c->mod && c->function < 0 && !c->in_quote && a.count > 0)
		for_unknown_names(c, call, &a, depth);
	if (w == EX_W_FOR)
		compiler_for(c, call, &a, depth);
	struct ex_metrics *m = c->metrics;
	if (m) {
		int clauses = 0;
		if (w == EX_W_CASE || w == EX_W_COND) {
			TSNode block = call->do_block;
			if (ts_node_is_null(block) && a.count > 0)
				block = ex_keyword_value(c, a.last, depth, "do");
			clauses = count_clauses(c, block, depth);
		}
		switch (w) {
		case EX_W_IF:
		case EX_W_UNLESS:
		case EX_W_FOR:
		case EX_W_TRY:
			m->cyclomatic += 1;
			break;
		case EX_W_CASE:
		case EX_W_COND:
			m->cyclomatic += clauses;
			break;
		default:
			break;
		}
		m->cognitive += 1 + m->nesting;
		if (w == EX_W_COND && clauses > 1)
			m->cognitive += clauses - 1;
		if (m->depth + 1 > m->max_depth)
			m->max_depth = m->depth + 1;
	}
	if (!ts_node_is_null(call->args)) {
		TSTreeCursor *cur = ex_cursor_at(c, depth, call->args);
		for (bool ok = ts_tree_cursor_goto_first_child(cur); ok;
		     ok = ts_tree_cursor_goto_next_sibling(cur)) {
			TSNode k = ts_tree_cursor_current_node(cur);
			if (!ts_node_is_named(k))
				continue;
			if (ex_kind_of(k) != N_KEYWORDS) {
				bool test = w == EX_W_IF || w == EX_W_UNLESS ||
				            (w == EX_W_FOR && !(ex_kind_of(k) == N_BINARY &&
				                                ex_op_of(k) == OP_GENERATOR));
				TSNode saved_test = c->test;
				if (test)
					c->test = k;
				ex_walk(c, k, depth + 1, 0);
				c->test = saved_test;
				continue;
			}
			uint32_t np = ts_node_named_child_count(k);
			for (uint32_t i = 0; i < np; i++) {
				TSNode pair = ts_node_named_child(k, i);
				if (ex_kind_of(pair) != N_PAIR)
					continue;
				TSNode v = ex_field(pair, ex_tables.f_value);
				if (is_block_keyword(c, ex_field(pair, ex_tables.f_key)))
					nested_walk(c, v, depth + 1, false);
				else
					ex_walk(c, v, depth + 1, 0);
			}
		}
	}
	if (w == EX_W_COND && !ts_node_is_null(call->do_block))
		cond_walk(c, call->do_block, depth);
	else if (!ts_node_is_null(call->do_block))
		nested_walk(c, call->do_block, depth, true);
}

NOINLINE void ex_do_capture(struct ex_ctx *c, TSNode n, unsigned depth)
{
	TSNode operand = ex_operand_of(c, n, depth);
	if (ex_kind_of(operand) == N_BINARY && ex_op_of(operand) == OP_SLASH) {
		TSNode left = ex_field(operand, ex_tables.f_left);
		int arity = ex_small_int(c, ex_field(operand, ex_tables.f_right));
		if (arity >= 0 && ex_kind_of(left) == N_CALL) {
			struct ex_call call;
			ex_call_read(c, left, depth, &call);
			if (ex_kind_of(call.target) == N_DOT && ts_node_is_null(call.args)) {
				const char *mod =
				    ex_module_of(c, ex_field(call.target, ex_tables.f_left), depth);
				const char *fun =
				    ex_dot_function(c, ex_field(call.target, ex_tables.f_right));
				if (mod && fun) {
					ex_ref_add(c, FACTS_REF_CAPTURE, mod, ex_line_of(n));
					ex_call_add(c, FACTS_CALL_CAPTURE, mod, fun, arity,
					            ex_line_of(n));
					return;
				}
			}
		} else if (arity >= 0 && ex_kind_of(left) == N_IDENTIFIER) {
			ex_local_call_kind(c, left, arity, FACTS_CALL_CAPTURE, ex_line_of(n));
			return;
		}
	}
	ex_walk(c, operand, depth, 0);
}

/* True when `n` is a literal the compiler folds: a number, an atom, a
 * string without interpolation, a boolean or nil. */
static bool plain_literal(struct ex_ctx *c, TSNode n)
{
	enum node_kind k = ex_kind_of(n);
	if (k == N_INTEGER || k == N_ATOM || k == N_BOOLEAN)
		return true;
	size_t len;
	const char *t = ex_text_of(c, n, &len);
	if (k == N_STRING)
		return !ts_node_named_child_count(n) ||
		       ex_kind_of(ts_node_named_child(n, 0)) == N_QUOTED_CONTENT;
	return len > 0 && ((t[0] >= '0' && t[0] <= '9') || GI_MEM_IS(t, len, "nil"));
}

/* True when `n` is a float literal (1.5, 0.8). */
static bool float_literal(struct ex_ctx *c, TSNode n)
{
	if (ts_node_is_null(n) || strcmp(ts_node_type(n), "float") != 0)
		return false;
	(void)c;
	return true;
}

/* The calls the compiler makes of operator node `n` (`arity` 1 or 2,
 * `right` its right operand or the unary operand): the inlined ones to
 * :erlang (`a + b` is :erlang.+/2; `-1`, a literal, is folded), `x in
 * list` (Kernel.in/2 in a function body: comparisons for a short literal
 * list, :lists.member/2 for another list, comparisons for a range,
 * Enum.member?/2 otherwise; tests only in a guard). */
NOINLINE void ex_compiler_operator(struct ex_ctx *c, TSNode n, enum op_kind op, TSNode right,
                                   int arity)
{
	if (!c->mod || c->in_quote || c->in_guard)
		return;
	uint32_t line = ex_line_of(n);
	size_t oplen = 0;
	const char *optext =
	    op == OP_INLINE
	        ? ex_text_of(c, ts_node_child_by_field_id(n, ex_tables.f_operator), &oplen)
	        : "";
	if (arity == 2 && GI_MEM_IS(optext, oplen, "=~")) {
		/* a function of Kernel, not inlined: a call even as a condition */
		ex_remote_call(c, "Kernel", "=~", 2, line);
		return;
	}
	bool test = !ts_node_is_null(c->test) && ts_node_eq(c->test, n);
	if (test && op != OP_IN && op != OP_NOT_IN)
		return; /* a comparison or `not` as a condition: a test */
	if (op == OP_IN || op == OP_NOT_IN) {
		enum node_kind k = ex_kind_of(right);
		if (k == N_LIST) {
			uint32_t count = ts_node_named_child_count(right);
			bool small = count <= 32;
			for (uint32_t i = 0; small && i < count; i++)
				small = plain_literal(c, ts_node_named_child(right, i));
			ex_compiler_call(c, ":erlang", "=:=", 2, line);
			if (!small)
				ex_compiler_call(c, ":lists", "member", 2, line);
		} else if (k == N_BINARY || (k == N_UNARY && ex_op_of(right) == OP_ATTRIBUTE)) {
			/* a range (comparisons) or an attribute's literal list */
			ex_compiler_call(c, ":erlang", "=<", 2, line);
		} else {
			ex_compiler_call(c, "Enum", "member?", 2, line);
		}
		return;
	}
	if (arity == 1 && plain_literal(c, right))
		return;

	if (arity == 2 &&
	    (float_literal(c, right) || float_literal(c, ex_field(n, ex_tables.f_left))))
		return; /* arithmetic on a float literal: float instructions */
	ex_compiler_rewrite(c, "Kernel", optext, oplen, arity, line);
}

/* False when `n` is an expression of a block that another expression
 * follows (its value is dropped), true otherwise. */
static bool result_used(TSNode n)
{
	TSNode parent = ts_node_parent(n);
	const char *pt = ts_node_is_null(parent) ? "" : ts_node_type(parent);
	if (strcmp(pt, "do_block") != 0 && strcmp(pt, "body") != 0 && strcmp(pt, "block") != 0)
		return true;
	for (TSNode s = ts_node_next_named_sibling(n); !ts_node_is_null(s);
	     s = ts_node_next_named_sibling(s)) {
		const char *t = ts_node_type(s);
		if (strcmp(t, "comment") != 0 && !gi_str_ends_with(t, "_block"))
			return false;
	}
	return true;
}

/* The calls the compiler writes for a `for` in a function (elixir_erl_for):
 * with a list generator (`x <- xs`; bitstring generators alone make an
 * Erlang comprehension) Enum.reduce/3, and the result's :lists.reverse/1
 * (`into: []` or none), :maps.from_list/1 (`into: %{}`),
 * :erlang.list_to_bitstring/1 (`into: ""`) or Collectable.into/1 (any
 * other `into:`); `reduce:` is Enum.reduce/3 alone. */
NOINLINE static void compiler_for(struct ex_ctx *c, const struct ex_call *call,
                                  const struct ex_args *a, unsigned depth)
{
	if (!c->mod || c->in_quote || ts_node_is_null(call->args))
		return;
	bool enumerable = false;
	uint32_t k = ts_node_named_child_count(call->args);
	for (uint32_t i = 0; i < k; i++) {
		TSNode g = ts_node_named_child(call->args, i);
		if (ex_kind_of(g) == N_BINARY && ex_op_of(g) == OP_GENERATOR)
			enumerable = true;
	}
	TSNode uniq = ex_keyword_value(c, a->last, depth, "uniq");
	if (!enumerable && ts_node_is_null(uniq))
		return;
	uint32_t line = ex_line_of(call->node);
	ex_compiler_call(c, "Enum", "reduce", 3, line);
	if (!ts_node_is_null(ex_keyword_value(c, a->last, depth, "reduce")))
		return;
	TSNode into = ex_keyword_value(c, a->last, depth, "into");
	enum node_kind ik = ex_kind_of(into);
	if (ts_node_is_null(into) && !result_used(call->node))
		return; /* a `for` for its effects only: the reduce alone */
	if (ts_node_is_null(into) || (ik == N_LIST && ts_node_named_child_count(into) == 0)) {
		ex_compiler_call(c, ":lists", "reverse", 1, line);
	} else if (ik == N_MAP && ts_node_named_child_count(into) == 0) {
		ex_compiler_call(c, ":lists", "reverse", 1, line);
		ex_compiler_call(c, ":maps", "from_list", 1, line);
	} else if (ik == N_STRING && ts_node_named_child_count(into) == 0) {
		ex_compiler_call(c, ":erlang", "list_to_bitstring", 1, line);
	} else {
		ex_compiler_call(c, "Collectable", "into", 1, line);
	}
}

void ex_walk_binary(struct ex_ctx *c, TSNode n, unsigned depth)
{
	enum op_kind op = ex_op_of(n);
	TSNode left = ex_field(n, ex_tables.f_left), right = ex_field(n, ex_tables.f_right);
	switch (op) {
	case OP_PIPE:
		ex_walk(c, left, depth, 0);
		if (ex_kind_of(right) == N_IDENTIFIER)
			ex_local_call(c, right, 1);
		else
			ex_walk(c, right, depth, 1);
		return;
	case OP_MATCH:
	case OP_GENERATOR: {
		bool saved = c->in_pattern;
		c->in_pattern = true;
		ex_walk(c, left, depth, 0);
		c->in_pattern = saved;
		ex_walk(c, right, depth, 0);
		return;
	}
	case OP_DEFAULT: {
		/* `arg \\ default` in a head: the default is a value, not a pattern */
		ex_walk(c, left, depth, 0);
		bool saved = c->in_pattern;
		c->in_pattern = false;
		ex_walk(c, right, depth, 0);
		c->in_pattern = saved;
		return;
	}
	case OP_AND:
	case OP_OR:
	case OP_ANDAND:
	case OP_OROR:
		if (c->metrics) {
			c->metrics->cyclomatic++;
			c->metrics->cognitive++;
		}
		if (!ts_node_is_null(c->test) && ts_node_eq(c->test, n)) {
			/* both sides of a condition's and/or are tests too */
			TSNode saved = c->test;
			c->test = left;
			ex_walk(c, left, depth, 0);
			c->test = right;
			ex_walk(c, right, depth, 0);
			c->test = saved;
			return;
		}
		break;
	case OP_WHEN: {
		/* a case/fn/receive clause's guard */
		ex_walk(c, left, depth, 0);
		bool saved = c->in_guard;
		c->in_guard = true;
		ex_walk(c, right, depth, 0);
		c->in_guard = saved;
		return;
	}
	case OP_INLINE:
	case OP_IN:
	case OP_NOT_IN:
		ex_walk(c, left, depth, 0);
		ex_walk(c, right, depth, 0);
		ex_compiler_operator(c, n, op, right, 2);
		return;
	default:
		break;
	}
	ex_walk(c, left, depth, 0);
	ex_walk(c, right, depth, 0);
}

/* ExUnit: `test "name" do ... end` defines the public function
 * :"test name"/1 (:"test describe name"/1 inside `describe "describe"`), so
 * that the calls made by tests have a function to come from. */
NOINLINE bool ex_do_exunit(struct ex_ctx *c, const struct ex_call *call, unsigned depth,
                           bool describe)
{
	struct ex_args a;
	ex_args_read(c, call->args, depth, &a);
	size_t len;
	const char *name = a.count > 0 ? ex_plain_string(c, a.first[0], &len) : NULL;
	if (!name || len >= EX_MAX_NAME || (describe && c->describe))
		return false;
	if (describe) {
		c->describe = gi_arena_strndup(&c->f->arena, name, len);
		ex_walk_children(c, call->do_block, depth);
		c->describe = NULL;
		return true;
	}
	const char *full =
	    c->describe ? gi_arena_printf(&c->f->arena, "test %s %.*s", c->describe, (int)len, name)
	                : gi_arena_printf(&c->f->arena, "test %.*s", (int)len, name);
	uint32_t start = ex_line_of(call->node), end = ex_end_line_of(call->node);
	bool created;
	long fi = ex_function_find_or_add(c, full, strlen(full), 1, &created);
	struct facts_function *fn = gi_vec_get(&ex_cur_module(c)->functions, (size_t)fi);
	ex_function_touch(fn, FACTS_DEF, true, start, end);
	fn->clauses++;
	fn->lines += end - start + 1;
	struct ex_head h;
	memset(&h, 0, sizeof(h));
	if (a.count >= 2)
		h.guard = a.first[1]; /* the test context pattern, walked like a guard */
	ex_clause_walk(c, fi, &h, call->do_block, true, true, depth);
	return true;
}

/* ExUnit.CaseTemplate: `using do ... end` (or `using opts do`) in a module
 * body defines the module's `__using__/1` macro, whose body is the block:
 * its quotes inject into the test modules that `use` the template, as a
 * written `defmacro __using__` would (docs/EXTRACTION.md, "use
 * injection"). */
NOINLINE void ex_do_case_template_using(struct ex_ctx *c, const struct ex_call *call,
                                        unsigned depth)
{
	uint32_t start = ex_line_of(call->node), end = ex_end_line_of(call->node);
	bool created;
	long fi = ex_function_find_or_add(c, "__using__", 9, 1, &created);
	struct facts_function *fn = gi_vec_get(&ex_cur_module(c)->functions, (size_t)fi);
	ex_function_touch(fn, FACTS_DEFMACRO, true, start, end);
	fn->clauses++;
	fn->lines += end - start + 1;
	struct ex_head h;
	memset(&h, 0, sizeof(h));
	ex_clause_walk(c, fi, &h, call->do_block, true, true, depth);
}

/* `raise M` / `raise M, opts` calls M.exception/1, `raise "text"`
 * RuntimeError.exception/1, as the compiler expands them. */
void ex_raise_call(struct ex_ctx *c, const struct ex_call *call, unsigned depth)
{
	struct ex_args a;
	ex_args_read(c, call->args, depth, &a);
	if (a.count == 0)
		return;
	const char *m = ex_literal_module(c, a.first[0], depth, false);
	if (!m && a.count == 1 && ex_kind_of(a.first[0]) == N_STRING)
		m = "RuntimeError";
	if (m && m[0] != ':')
		ex_remote_call(c, m, "exception", 1, ex_line_of(call->node));
}

/* `Record.defrecord(:name, fields)` (or `defrecordp`, or `defrecord`
 * called as imported) in a module body: the macros name/0, name/1 and
 * name/2 (private for defrecordp). */
void ex_record_generate(struct ex_ctx *c, const struct ex_call *call, const char *fun,
                        unsigned depth)
{
	bool private = strcmp(fun, "defrecordp") == 0;
	if ((!private && strcmp(fun, "defrecord") != 0) || !c->mod || c->function >= 0 ||
	    c->in_quote)
		return;
	struct ex_args a;
	ex_args_read(c, call->args, depth, &a);
	const char *name = a.count >= 1 ? ex_literal_function(c, a.first[0]) : NULL;
	if (!name)
		return;
	const char *by = private ? "Record.defrecordp" : "Record.defrecord";
	for (int arity = 0; arity <= 2; arity++)
		ex_generated_add_kind(c, gi_arena_printf(&c->f->arena, "%s/%d", name, arity), by,
		                      ex_line_of(call->node),
		                      private ? FACTS_DEFMACROP : FACTS_DEFMACRO, !private);
}

/* True when `n` stands as a statement: in a do block, a block, or as the
 * `do:` value of a keyword list. */
static bool is_statement(const struct ex_ctx *c, TSNode n)
{
	TSNode p = ts_node_parent(n);
	if (ts_node_is_null(p))
		return false;
	const char *t = ts_node_type(p);
	if (strcmp(t, "do_block") == 0 || strcmp(t, "block") == 0 || strcmp(t, "else_block") == 0)
		return true;
	if (strcmp(t, "pair") != 0)
		return false;
	TSNode key = ex_field(p, ex_tables.f_key);
	size_t len;
	const char *k = ex_text_of(c, key, &len);
	return GI_MEM_STARTS(k, len, "do:");
}

/* `unquote(x)` or `unquote_splicing(x)` inside a quote of a function:
 * standing as a statement outside any definition of the quote, it splices
 * in code (definitions, attributes) that the quote does not show: a local
 * function's own quotes (FACTS_CALL_INJECT_QUOTE to it, applied by the
 * graph), or something unreadable (FACTS_CALL_INJECT_QUOTE with arity -1).
 * Its argument is then walked as the ordinary code it is (it runs in the
 * macro). */
void ex_walk_unquote(struct ex_ctx *c, const struct ex_call *call, unsigned depth)
{
	if (c->function >= 0 && c->quote_def == 0 && c->mod && is_statement(c, call->node)) {
		struct ex_args a;
		ex_args_read(c, call->args, depth, &a);
		TSNode arg = a.count == 1 ? a.first[0] : (TSNode){0};
		struct ex_call inner;
		const char *name = NULL;
		int arity = -1;
		if (!ts_node_is_null(arg) && ex_kind_of(arg) == N_CALL) {
			ex_call_read(c, arg, depth, &inner);
			if (ex_kind_of(inner.target) == N_IDENTIFIER &&
			    ts_node_is_null(inner.do_block)) {
				size_t len;
				const char *t = ex_text_of(c, inner.target, &len);
				if (len > 0 && len < EX_MAX_NAME) {
					name = gi_arena_strndup(&c->f->arena, t, len);
					arity = ts_node_is_null(inner.args)
					            ? 0
					            : (int)ts_node_named_child_count(inner.args);
				}
			}
		}
		ex_call_add(c, FACTS_CALL_INJECT_QUOTE, name ? c->mod->name : NULL, name, arity,
		            ex_line_of(call->node));
	}
	bool saved = c->in_quote;
	int saved_def = c->quote_def;
	c->in_quote = false;
	c->quote_def = 0;
	ex_walk_children(c, call->args, depth);
	c->in_quote = saved;
	c->quote_def = saved_def;
}
