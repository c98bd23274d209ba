/*
 * elixir.c - the Elixir source reader: parses one file with tree-sitter and
 * the tree-sitter-elixir grammar, walks the tree once and fills a
 * facts_file (modules, functions, references, calls, complexity).
 *
 * The walk is a bounded recursion over the syntax tree: past EX_MAX_DEPTH
 * tree levels a subtree is skipped (and reported once as an error), so that
 * hostile input cannot exhaust the stack. A level takes up to about 1.5 KB of
 * stack (control structures), so a call needs at most about 600 KB (a few
 * times more under ASan); real code stays under 50 levels. Children are
 * visited with tree cursors, one per depth, reused for the whole file, so
 * that long lists are walked in linear time.
 *
 * What counts as what (the full rules are in docs/EXTRACTION.md):
 * - aliases and imports are lexically scoped: a do-block, a function clause,
 *   an fn and a module body each open a scope; a nested `defmodule` aliases
 *   its first segment in the enclosing scope;
 * - text inside strings, heredocs, sigils, charlists and comments is never
 *   code; interpolations (#{...}) are code;
 * - code inside `quote` defines nothing in the current module and makes no
 *   local calls (they belong to the caller of the macro); its remote calls
 *   are recorded;
 * - local calls to names that Kernel imports are dropped when the module does
 *   not define that name/arity itself, except Kernel's functions that stay
 *   calls in the object code (Kernel.inspect/1...); those an `import ...,
 *   only:` in scope provides are remote calls; interpolation, x[k] and raise
 *   are the calls the compiler makes of them;
 * - code outside functions belongs to the module body function
 *   (FACTS_MODULE_BODY); a quote in a function records what it injects into
 *   its caller (FACTS_CALL_INJECT*), for the graph to apply to `use`rs;
 * - functions generated from the source itself: comprehensions over literal
 *   lists, a file's own macros whose quote defines `def unquote(param)`,
 *   Record, @derive, protocol and impl functions;
 * - syntax errors: the first is recorded; definitions that tree-sitter
 *   flattened into an error node are rebuilt from their `def` (arguments)
 *   sequences (walk_error), and a module left without its body takes the
 *   error node after it as its body.
 *
 * This file holds the entry point and the walk's dispatch; each construct's
 * walk is in its own file (elixir_int.h lists them).
 *
 * The tree is freed before ex_parse returns. Thread-safe: no shared state
 * beyond the symbol tables, built once under pthread_once.
 */
#include "source/elixir.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/hash.h"
#include "base/error.h"
#include "base/map.h"
#include "base/str.h"
#include "source/elixir_int.h"

const TSLanguage *tree_sitter_elixir(void);

struct name_kind {
	const char *name;
	int kind;
};

static const struct name_kind named_kinds[] = {
    {"call", N_CALL},
    {"identifier", N_IDENTIFIER},
    {"alias", N_ALIAS},
    {"dot", N_DOT},
    {"arguments", N_ARGUMENTS},
    {"do_block", N_DO_BLOCK},
    {"keywords", N_KEYWORDS},
    {"pair", N_PAIR},
    {"keyword", N_KEYWORD},
    {"binary_operator", N_BINARY},
    {"unary_operator", N_UNARY},
    {"atom", N_ATOM},
    {"quoted_atom", N_QUOTED_ATOM},
    {"quoted_content", N_QUOTED_CONTENT},
    {"comment", N_COMMENT},
    {"map", N_MAP},
    {"struct", N_STRUCT},
    {"anonymous_function", N_FN},
    {"stab_clause", N_STAB},
    {"block", N_BLOCK},
    {"list", N_LIST},
    {"tuple", N_TUPLE},
    {"integer", N_INTEGER},
    {"boolean", N_BOOLEAN},
    {"operator_identifier", N_OPERATOR_IDENTIFIER},
    {"interpolation", N_INTERPOLATION},
    {"string", N_STRING},
    {"charlist", N_CHARLIST},
    {"sigil", N_SIGIL},
    {"access_call", N_ACCESS},
};

static const struct name_kind operator_kinds[] = {
    {"|>", OP_PIPE},      {"when", OP_WHEN},  {"\\\\", OP_DEFAULT}, {"and", OP_AND},
    {"or", OP_OR},        {"&&", OP_ANDAND},  {"||", OP_OROR},      {"&", OP_CAPTURE},
    {"@", OP_ATTRIBUTE},  {"/", OP_SLASH},    {"::", OP_TYPE},      {"+", OP_INLINE},
    {"-", OP_INLINE},     {"*", OP_INLINE},   {"==", OP_INLINE},    {"!=", OP_INLINE},
    {"===", OP_INLINE},   {"!==", OP_INLINE}, {"<", OP_INLINE},     {">", OP_INLINE},
    {"<=", OP_INLINE},    {">=", OP_INLINE},  {"++", OP_INLINE},    {"--", OP_INLINE},
    {"not", OP_INLINE},   {"=~", OP_INLINE},  {"in", OP_IN},        {"not in", OP_NOT_IN},
    {"<-", OP_GENERATOR}, {"=", OP_MATCH},    {"|", OP_BAR},
};

struct ex_symbol_tables ex_tables;
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void tables_build(void)
{
	ex_arena_install();
	const TSLanguage *lang = tree_sitter_elixir();
	ex_tables.language = lang;
	ex_tables.count = ts_language_symbol_count(lang);
	ex_tables.kind = gi_calloc(ex_tables.count, 1);
	ex_tables.op = gi_calloc(ex_tables.count, 1);
	for (uint32_t s = 0; s < ex_tables.count; s++) {
		const char *name = ts_language_symbol_name(lang, (TSSymbol)s);
		TSSymbolType type = ts_language_symbol_type(lang, (TSSymbol)s);
		if (!name)
			continue;
		if (type == TSSymbolTypeRegular) {
			for (size_t i = 0; i < sizeof(named_kinds) / sizeof(named_kinds[0]); i++)
				if (strcmp(name, named_kinds[i].name) == 0)
					ex_tables.kind[s] = (unsigned char)named_kinds[i].kind;
		} else if (type == TSSymbolTypeAnonymous) {
			for (size_t i = 0; i < sizeof(operator_kinds) / sizeof(operator_kinds[0]);
			     i++)
				if (strcmp(name, operator_kinds[i].name) == 0)
					ex_tables.op[s] = (unsigned char)operator_kinds[i].kind;
		}
	}
	ex_tables.f_target = ts_language_field_id_for_name(lang, "target", 6);
	ex_tables.f_left = ts_language_field_id_for_name(lang, "left", 4);
	ex_tables.f_right = ts_language_field_id_for_name(lang, "right", 5);
	ex_tables.f_operator = ts_language_field_id_for_name(lang, "operator", 8);
	ex_tables.f_operand = ts_language_field_id_for_name(lang, "operand", 7);
	ex_tables.f_key = ts_language_field_id_for_name(lang, "key", 3);
	ex_tables.f_value = ts_language_field_id_for_name(lang, "value", 5);
}

static void walk_call(struct ex_ctx *c, TSNode n, unsigned depth, int pipe)
{
	struct ex_call call;
	ex_call_read(c, n, depth, &call);
	enum node_kind tk = ex_kind_of(call.target);
	bool local = false;
	const char *mod = NULL, *fun = NULL, *dynamic = NULL;
	if (tk == N_IDENTIFIER) {
		size_t len;
		const char *t = ex_text_of(c, call.target, &len);
		enum ex_word w = ex_word_lookup(t, len);
		switch (w) {
		case EX_W_DEFMODULE:
			ex_do_defmodule(c, &call, depth, FACTS_MODULE);
			return;
		case EX_W_DEFPROTOCOL:
			ex_do_defmodule(c, &call, depth, FACTS_PROTOCOL);
			return;
		case EX_W_DEFIMPL:
			ex_do_defimpl(c, &call, depth);
			return;
		case EX_W_DEF:
		case EX_W_DEFP:
		case EX_W_DEFMACRO:
		case EX_W_DEFMACROP:
		case EX_W_DEFGUARD:
		case EX_W_DEFGUARDP:
		case EX_W_DEFDELEGATE:
			ex_do_def(c, &call, depth, w);
			return;
		case EX_W_DEFSTRUCT:
		case EX_W_DEFEXCEPTION:
			ex_do_defstruct(c, &call, depth);
			return;
		case EX_W_ALIAS:
			ex_do_alias(c, &call, depth);
			return;
		case EX_W_IMPORT:
			ex_do_directive(c, &call, depth, FACTS_REF_IMPORT);
			return;
		case EX_W_REQUIRE:
			ex_do_directive(c, &call, depth, FACTS_REF_REQUIRE);
			return;
		case EX_W_USE:
			ex_do_directive(c, &call, depth, FACTS_REF_USE);
			return;
		case EX_W_QUOTE: {
			bool saved = c->in_quote;
			int saved_def = c->quote_def;
			c->in_quote = true;
			c->quote_def = 0;
			ex_walk_children(c, n, depth);
			c->in_quote = saved;
			c->quote_def = saved_def;
			return;
		}
		case EX_W_IF:
		case EX_W_UNLESS:
		case EX_W_CASE:
		case EX_W_COND:
		case EX_W_WITH:
		case EX_W_FOR:
		case EX_W_TRY:
		case EX_W_RECEIVE:
			ex_do_control(c, &call, depth, w);
			return;
		default:
			if (c->in_quote && !ts_node_is_null(call.args) &&
			    (ex_text_is(c, call.target, "unquote") ||
			     ex_text_is(c, call.target, "unquote_splicing"))) {
				ex_walk_unquote(c, &call, depth);
				return;
			}
			if (c->mod && c->function < 0 && !c->in_quote &&
			    !ts_node_is_null(call.do_block) &&
			    (ex_text_is(c, call.target, "test") ||
			     ex_text_is(c, call.target, "describe")) &&
			    ex_do_exunit(c, &call, depth, ex_text_is(c, call.target, "describe")))
				return;
			if (c->mod && c->function < 0 && !c->in_quote &&
			    !ts_node_is_null(call.do_block) &&
			    ex_text_is(c, call.target, "using")) {
				ex_do_case_template_using(c, &call, depth);
				return;
			}
			local = true;
			break;
		}
	} else if (tk == N_DOT) {
		TSNode left = ex_field(call.target, ex_tables.f_left);
		TSNode right = ex_field(call.target, ex_tables.f_right);
		if (c->mod && c->function < 0 && !c->in_quote && ex_kind_of(left) == N_ALIAS &&
		    ex_text_is(c, left, "Kernel") && ex_kind_of(right) == N_IDENTIFIER) {
			/* Kernel.def f(x) in a module body (a protocol's real
			 * function) is a definition */
			size_t len;
			const char *t = ex_text_of(c, right, &len);
			enum ex_word w = ex_word_lookup(t, len);
			if (w >= EX_W_DEF && w <= EX_W_DEFDELEGATE) {
				ex_do_def(c, &call, depth, w);
				return;
			}
		}
		if (!ts_node_is_null(right) &&
		    (ex_kind_of(left) != N_IDENTIFIER || !ts_node_is_null(call.args) || pipe)) {
			mod = ex_module_of(c, left, depth);
			fun = mod ? ex_dot_function(c, right) : NULL;
		}
		if (!mod || !fun)
			ex_walk(c, left, depth, 0);
		/* `adapter.child_specs(m, c)`, `opts[:tool].start(p, o)`: a call
		 * on a module held in a variable or computed (with parentheses:
		 * `v.f` alone may be a field) */
		if (!mod && ex_kind_of(left) != N_ALIAS && ex_kind_of(right) == N_IDENTIFIER &&
		    (!ts_node_is_null(call.args) || pipe) && !c->in_quote)
			dynamic = ex_dot_function(c, right);
	} else if (!ts_node_is_null(call.target)) {
		ex_walk(c, call.target, depth, 0);
	}
	/* The call is recorded once its arguments are walked (and counted), so
	 * that calls in arguments come first. */
	uint32_t nargs = ex_walk_children(c, call.args, depth);
	int arity = (int)nargs + pipe + (ts_node_is_null(call.do_block) ? 0 : 1);
	if (dynamic && c->mod)
		ex_call_add(c, FACTS_CALL_DYNAMIC, NULL, dynamic, arity, ex_line_of(n));
	if (local) {
		ex_local_call(c, call.target, arity);
		{
			/* elem(t, 0) is :erlang.element/2 (Kernel's inlined functions),
			 * to_string(x) String.Chars.to_string/1 (Kernel's macros) */
			size_t len;
			const char *t = ex_text_of(c, call.target, &len);
			ex_compiler_rewrite(c, "Kernel", t, len, arity, ex_line_of(n));
			const char *proto = ex_kernel_expansion(t, len, arity);
			if (proto && c->mod && !c->in_quote)
				ex_remote_call(c, proto,
				               arity == 1 && len == 9 ? "to_string" : "to_charlist",
				               1, ex_line_of(n));
		}
		ex_struct_call_check(c, &call, arity, pipe, depth);
		ex_template_expand(c, &call, depth);
		if (!pipe && (arity == 1 || arity == 2) && ex_text_is(c, call.target, "raise"))
			ex_raise_call(c, &call, depth);
		if (ex_text_is(c, call.target, "defrecord") ||
		    ex_text_is(c, call.target, "defrecordp"))
			ex_record_generate(c, &call,
			                   ex_text_is(c, call.target, "defrecord") ? "defrecord"
			                                                           : "defrecordp",
			                   depth);
		if (!pipe && arity >= 3 && arity <= 5) {
			size_t len;
			const char *t = ex_text_of(c, call.target, &len);
			char name[32];
			if (len < sizeof(name)) {
				memcpy(name, t, len);
				name[len] = '\0';
				ex_mfa_call(c, &call, NULL, name, arity, depth);
			}
		}
	} else if (mod && fun) {
		ex_remote_call(c, mod, fun, arity, ex_line_of(n));
		ex_compiler_rewrite(c, mod, fun, strlen(fun), arity, ex_line_of(n));
		ex_to_atom_check(c, &call, mod, fun, arity, pipe, depth);
		if (strcmp(mod, "Record") == 0)
			ex_record_generate(c, &call, fun, depth);
		if (!pipe && arity >= 3 && arity <= 5)
			ex_mfa_call(c, &call, mod, fun, arity, depth);
		if (strcmp(mod, "Module") == 0 && strcmp(fun, "concat") == 0) {
			const char *made = ex_concat_name(c, &call, depth);
			if (made)
				ex_ref_add(c, FACTS_REF_VALUE, made, ex_line_of(n));
		}
	}
	if (!ts_node_is_null(call.do_block)) {
		size_t saved = c->aliases.len;
		ex_walk_children(c, call.do_block, depth);
		c->aliases.len = saved;
	}
}

static void walk_struct_ref(struct ex_ctx *c, TSNode map, unsigned depth)
{
	TSNode s = ts_node_named_child(map, 0);
	if (ex_kind_of(s) != N_STRUCT) {
		ex_walk_children(c, map, depth);
		return;
	}
	TSNode name = ts_node_named_child(s, 0);
	const char *mod = ex_module_of(c, name, depth);
	if (mod) {
		ex_ref_add(c, FACTS_REF_STRUCT, mod, ex_line_of(map));
		ex_struct_site(c, map, mod);
	} else
		ex_walk(c, s, depth, 0); /* %module{}: the name is code */
	/* The fields, not the struct's name (a struct reference, not a value). */
	uint32_t k = ts_node_named_child_count(map);
	for (uint32_t i = 1; i < k; i++)
		ex_walk(c, ts_node_named_child(map, i), depth, 0);
}

/* A string's interpolations are code, each a call to
 * String.Chars.to_string/1 (what the compiler makes of "#{x}"). */
static void walk_string(struct ex_ctx *c, TSNode n, unsigned depth)
{
	TSTreeCursor *cur = ex_cursor_at(c, depth, n);
	uint32_t interpolations = 0, line = ex_line_of(n);
	for (bool ok = ts_tree_cursor_goto_first_child(cur); ok;
	     ok = ts_tree_cursor_goto_next_sibling(cur))
		if (ex_kind_of(ts_tree_cursor_current_node(cur)) == N_INTERPOLATION) {
			interpolations++;
			line = ex_line_of(ts_tree_cursor_current_node(cur));
		}
	if (interpolations == 0)
		return;
	ex_walk_children(c, n, depth);
	for (uint32_t i = 0; i < interpolations; i++)
		ex_remote_call(c, "String.Chars", "to_string", 1, line);
}

/* A charlist or a sigil (docs/EXTRACTION.md, "Compiler rewrites"): its
 * interpolations are code, each String.Chars.to_string/1 as in a string;
 * a charlist with interpolations is then List.to_charlist/1. `~x"..."` is
 * a call of sigil_x/2 (Kernel's are macros, dropped with Kernel's names;
 * a project's own sigils resolve like other local calls), and Kernel's
 * sigils with interpolations call what they expand to: ~c List.to_charlist/1,
 * ~r Regex.compile!/2, ~w (no modifier) String.split/1. */
NOINLINE static void walk_quoted(struct ex_ctx *c, TSNode n, unsigned depth)
{
	uint32_t interpolations = 0, line = ex_line_of(n);
	const char *name = NULL;
	size_t name_len = 0;
	bool modifiers = false;
	uint32_t k = ts_node_named_child_count(n);
	for (uint32_t i = 0; i < k; i++) {
		TSNode ch = ts_node_named_child(n, i);
		const char *t = ts_node_type(ch);
		if (ex_kind_of(ch) == N_INTERPOLATION)
			interpolations++;
		else if (strcmp(t, "sigil_name") == 0)
			name = ex_text_of(c, ch, &name_len);
		else if (strcmp(t, "sigil_modifiers") == 0)
			modifiers = ts_node_end_byte(ch) > ts_node_start_byte(ch);
	}
	ex_walk_children(c, n, depth);
	if (!c->mod || c->in_quote)
		return;
	for (uint32_t i = 0; i < interpolations; i++)
		ex_remote_call(c, "String.Chars", "to_string", 1, line);
	if (ex_kind_of(n) == N_CHARLIST) {
		if (interpolations)
			ex_compiler_call(c, "List", "to_charlist", 1, line);
		return;
	}
	if (!name || name_len == 0 || name_len >= EX_MAX_NAME - 8)
		return;
	char fun[EX_MAX_NAME];
	snprintf(fun, sizeof(fun), "sigil_%.*s", (int)name_len, name);
	const char *imported = ex_import_lookup(c, fun, strlen(fun), 2);
	if (imported) {
		ex_ref_add(c, FACTS_REF_CALL, imported, line);
		ex_call_add(c, FACTS_CALL_REMOTE, imported, gi_arena_strdup(&c->f->arena, fun), 2,
		            line);
	} else {
		ex_call_add(c, FACTS_CALL_LOCAL, c->mod->name, gi_arena_strdup(&c->f->arena, fun),
		            2, line);
	}
	if (!interpolations || name_len != 1 || modifiers)
		return;
	if (name[0] == 'c')
		ex_compiler_call(c, "List", "to_charlist", 1, line);
	else if (name[0] == 'r')
		ex_compiler_call(c, "Regex", "compile!", 2, line);
	else if (name[0] == 'w')
		ex_compiler_call(c, "String", "split", 1, line);
}

static void walk_fn(struct ex_ctx *c, TSNode n, unsigned depth)
{
	int saved = 0;
	size_t saved_aliases = c->aliases.len;
	if (c->metrics) {
		saved = c->metrics->nesting;
		c->metrics->nesting = 0;
	}
	ex_walk_children(c, n, depth);
	if (c->metrics)
		c->metrics->nesting = saved;
	c->aliases.len = saved_aliases;
}

void ex_walk(struct ex_ctx *c, TSNode n, unsigned depth, int pipe)
{
	if (ts_node_is_null(n))
		return;
	if (ts_node_child_count(n) == 0) {
		/* A module used as a value: `children = [Worker]`, `{Registry,
		 * ...}`, `raise Error`; call targets, directives and struct names
		 * never get here. */
		if (c->mod && ex_kind_of(n) == N_ALIAS)
			ex_ref_add(c, FACTS_REF_VALUE, ex_module_of(c, n, depth), ex_line_of(n));
		return;
	}
	if (depth >= EX_MAX_DEPTH) {
		if (!c->too_deep) {
			c->too_deep = true;
			facts_error_add(c->f, ex_line_of(n), "nesting too deep: subtree skipped");
		}
		return;
	}
	depth++;
	switch (ex_kind_of(n)) {
	case N_CALL:
		walk_call(c, n, depth, pipe);
		return;
	case N_BINARY:
		ex_walk_binary(c, n, depth);
		return;
	case N_UNARY:
		switch (ex_op_of(n)) {
		case OP_CAPTURE:
			ex_do_capture(c, n, depth);
			return;
		case OP_ATTRIBUTE:
			ex_do_attribute(c, n, depth);
			return;
		case OP_INLINE: {
			TSNode operand = ex_operand_of(c, n, depth), saved = c->test;
			bool test = !ts_node_is_null(c->test) && ts_node_eq(c->test, n);
			if (test)
				c->test = operand; /* `not` of a condition: a test too */
			ex_walk_children(c, n, depth);
			c->test = saved;
			ex_compiler_operator(c, n, OP_INLINE, operand, 1);
			return;
		}
		default:
			ex_walk_children(c, n, depth);
			return;
		}
	case N_MAP:
		walk_struct_ref(c, n, depth);
		return;
	case N_FN:
		walk_fn(c, n, depth);
		return;
	case N_STAB: {
		/* `pattern -> body` (cond's conditions are walked as patterns too) */
		bool saved = c->in_pattern;
		c->in_pattern = true;
		ex_walk(c, ex_field(n, ex_tables.f_left), depth, 0);
		c->in_pattern = saved;
		ex_walk(c, ex_field(n, ex_tables.f_right), depth, 0);
		return;
	}
	case N_ERROR:
		ex_walk_error(c, n, depth);
		return;
	case N_TUPLE:
		ex_walk_tuple(c, n, depth);
		return;
	case N_ACCESS:
		/* x[k] is Access.get(x, k) */
		ex_walk_children(c, n, depth);
		ex_remote_call(c, "Access", "get", 2, ex_line_of(n));
		return;
	case N_STRING:
		walk_string(c, n, depth);
		return;
	case N_CHARLIST:
	case N_SIGIL:
		walk_quoted(c, n, depth);
		return;
	case N_QUOTED_ATOM:
		ex_quoted_atom_check(c, n);
		ex_walk_children(c, n, depth);
		return;
	case N_COMMENT:
	case N_QUOTED_CONTENT:
	case N_ALIAS:
	case N_ATOM:
		return;
	case N_DO_BLOCK:
		/* A do-block is a lexical scope for aliases. */
		{
			size_t saved = c->aliases.len;
			ex_walk_children(c, n, depth);
			c->aliases.len = saved;
		}
		return;
	default:
		ex_walk_children(c, n, depth);
		return;
	}
}

/* Walks the named children of `n` (which sits at `depth`) one level deeper;
 * returns how many there were, comments aside (a call's arity). */
uint32_t ex_walk_children(struct ex_ctx *c, TSNode n, unsigned depth)
{
	if (ts_node_is_null(n) || ts_node_child_count(n) == 0)
		return 0;
	if (depth >= EX_MAX_DEPTH) {
		ex_walk(c, n, depth, 0);
		return 0;
	}
	TSTreeCursor *cur = ex_cursor_at(c, depth, n);
	if (!ts_tree_cursor_goto_first_child(cur))
		return 0;
	size_t reopen = 0;
	uint32_t count = 0;
	do {
		TSNode k = ts_tree_cursor_current_node(cur);
		if (!ts_node_is_named(k))
			continue;
		enum node_kind kk = ex_kind_of(k);
		if (reopen && kk == N_ERROR) {
			ex_module_recover(c, reopen - 1, k, depth);
			reopen = 0;
			continue;
		}
		if (kk != N_COMMENT)
			count++;
		c->bodyless = 0;
		ex_walk(c, k, depth, 0);
		reopen = c->bodyless;
		c->bodyless = 0;
	} while (ts_tree_cursor_goto_next_sibling(cur));
	return count;
}

/* ---- errors and entry point --------------------------------------------- */

static bool token_is(TSNode k, const char *const *set)
{
	const char *t = ts_node_type(k);
	for (size_t i = 0; set[i]; i++)
		if (strcmp(t, set[i]) == 0)
			return true;
	return false;
}

/* The line where the error of ERROR node `n` is. tree-sitter puts in an
 * ERROR node the constructs it could not fit, flattened, then the tokens it
 * skipped, so its start (often the `do` of the enclosing module) says
 * little. A closing bracket with nothing open before it is the error (stray
 * text; tree-sitter 0.25 also takes the next lines' constructs into the same
 * node); a bracket opened among its children and never closed there is the
 * error (an unclosed argument list, where `end` came first; an unterminated
 * string inside one); otherwise its last child is (an unterminated string's
 * text, the token an argument list choked on, the end of a truncated file). */
static uint32_t error_line(TSNode n)
{
	static const char *const openers[] = {"(", "[", "{", "%{", "<<", NULL};
	static const char *const closers[] = {")", "]", "}", ">>", NULL};
	uint32_t open_line[16], open = 0, last = ex_line_of(n);
	uint32_t count = ts_node_child_count(n);
	for (uint32_t i = 0; i < count; i++) {
		TSNode k = ts_node_child(n, i);
		if (ts_node_is_named(k)) {
			if (strcmp(ts_node_type(k), "comment") != 0)
				last = ex_line_of(k);
			continue;
		}
		last = ex_line_of(k);
		if (token_is(k, openers)) {
			if (open < 16)
				open_line[open] = ex_line_of(k);
			open++;
		} else if (token_is(k, closers)) {
			/* a closer with nothing open is where the text went wrong */
			if (open == 0)
				return ex_line_of(k);
			open--;
		}
	}
	return open > 0 ? open_line[0] : last;
}

/* Records the first ERROR or MISSING node in document order. */
static void first_error(struct facts_file *f, TSNode root)
{
	if (!ts_node_has_error(root))
		return;
	TSTreeCursor cur = ts_tree_cursor_new(root);
	for (;;) {
		TSNode n = ts_tree_cursor_current_node(&cur);
		if (ts_node_is_missing(n)) {
			/* A missing bracket is reported where it was opened (the
			 * start of the list it closes), not where tree-sitter
			 * gave up, which may be lines later. */
			static const char *const closers[] = {")", "]", "}", ">>", NULL};
			TSNode parent = ts_node_parent(n);
			uint32_t line = token_is(n, closers) && !ts_node_is_null(parent)
			                    ? ex_line_of(parent)
			                    : ex_line_of(n);
			char msg[96];
			snprintf(msg, sizeof(msg), "syntax error: missing \"%.40s\"",
			         ts_node_type(n));
			facts_error_add(f, line, msg);
			break;
		}
		if (strcmp(ts_node_type(n), "ERROR") == 0) {
			facts_error_add(f, error_line(n), "syntax error");
			break;
		}
		/* Descend into the first child that holds the error. */
		if (!ts_tree_cursor_goto_first_child(&cur))
			break;
		while (!ts_node_has_error(ts_tree_cursor_current_node(&cur)))
			if (!ts_tree_cursor_goto_next_sibling(&cur))
				goto done;
	}
done:
	if (f->errors.len == 0)
		facts_error_add(f, ex_line_of(root), "syntax error");
	ts_tree_cursor_delete(&cur);
}

int ex_parse(const char *path, const char *source, size_t len, struct facts_file **out)
{
	return ex_parse_with(path, source, len, 0, out);
}

int ex_parse_with(const char *path, const char *source, size_t len, unsigned flags,
                  struct facts_file **out)
{
	*out = NULL;
	if (len > EX_MAX_FILE_SIZE)
		return GI_ETOOBIG;
	if (len > 0 && memchr(source, '\0', len))
		return GI_EINVAL;
	pthread_once(&tables_once, tables_build);

	struct facts_file *f = facts_file_new(path ? path : "", FACTS_FROM_SOURCE);
	f->size = len;
	/* The parser, the tree and the cursors live in this parse's arena
	 * (elixir_arena.c) and go with it at the end, unwalked. */
	struct ex_arena *arena = ex_arena_begin(len);
	TSParser *parser = ts_parser_new();
	ts_parser_set_language(parser, ex_tables.language);
	TSTree *tree = ts_parser_parse_string(parser, NULL, len ? source : "", (uint32_t)len);
	if (!tree) {
		ex_arena_end(arena);
		facts_file_free(f);
		return GI_EPARSE;
	}
	TSNode root = ts_tree_root_node(tree);
	first_error(f, root);

	struct ex_ctx *c = gi_calloc(1, sizeof(*c));
	c->f = f;
	c->src = len ? source : "";
	c->len = len;
	c->function = -1;
	c->hash_bodies = !(flags & EX_PARSE_NO_BODY_HASHES);
	f->bodies_hashed = c->hash_bodies;
	gi_vec_init(&c->aliases, sizeof(struct ex_alias));
	gi_vec_init(&c->templates, sizeof(struct ex_template));
	if (ex_kind_of(root) == N_ERROR)
		ex_walk_error(c, root, 0);
	else
		ex_walk_children(c, root, 0);
	gi_vec_destroy(&c->aliases);
	gi_vec_destroy(&c->templates);
	gi_free(c);
	ex_arena_end(arena);
	*out = f;
	return 0;
}
