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
 * The tree is freed before ex_parse returns. Thread-safe: no shared state
 * beyond the symbol tables, built once under pthread_once.
 */
#include "source/elixir.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

#include "base/alloc.h"
#include "base/hash.h"
#include "base/error.h"
#include "base/map.h"
#include "base/str.h"
#include "source/elixir_int.h"

const TSLanguage *tree_sitter_elixir(void);

/* Handlers with large frames stay out of the recursive walk's own frame. */
#define NOINLINE __attribute__((noinline))

/* Tree levels walked before a subtree is skipped (see the header comment). */
#define EX_MAX_DEPTH 400
/* Longest module or function name kept (longer ones are dropped). */
#define EX_MAX_NAME 512

/* ---- symbol tables --------------------------------------------------- */

enum node_kind {
	N_OTHER = 0,
	N_CALL,
	N_IDENTIFIER,
	N_ALIAS,
	N_DOT,
	N_ARGUMENTS,
	N_DO_BLOCK,
	N_KEYWORDS,
	N_PAIR,
	N_KEYWORD,
	N_BINARY,
	N_UNARY,
	N_ATOM,
	N_QUOTED_ATOM,
	N_QUOTED_CONTENT,
	N_COMMENT,
	N_MAP,
	N_STRUCT,
	N_FN,
	N_STAB,
	N_BLOCK,
	N_LIST,
	N_TUPLE,
	N_INTEGER,
	N_BOOLEAN,
	N_OPERATOR_IDENTIFIER,
	N_INTERPOLATION,
	N_STRING,
	N_CHARLIST,
	N_SIGIL,
	N_ACCESS,
	N_ERROR,
};

enum op_kind {
	OP_NONE = 0,
	OP_PIPE,
	OP_WHEN,
	OP_DEFAULT,
	OP_AND,
	OP_OR,
	OP_ANDAND,
	OP_OROR,
	OP_CAPTURE,
	OP_ATTRIBUTE,
	OP_SLASH,
	OP_TYPE,
	OP_INLINE, /* an operator the compiler makes a call to :erlang (compiler_op) */
	OP_IN,
	OP_NOT_IN,
	OP_GENERATOR, /* <- */
	OP_MATCH,     /* = */
	OP_BAR,       /* | */
};

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

struct symbol_tables {
	const TSLanguage *language;
	uint32_t count;
	unsigned char *kind; /* by symbol: enum node_kind (named symbols) */
	unsigned char *op;   /* by symbol: enum op_kind (anonymous symbols) */
	TSFieldId f_target, f_left, f_right, f_operator, f_operand, f_key, f_value;
};

static struct symbol_tables tables;
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void tables_build(void)
{
	const TSLanguage *lang = tree_sitter_elixir();
	tables.language = lang;
	tables.count = ts_language_symbol_count(lang);
	tables.kind = gi_calloc(tables.count, 1);
	tables.op = gi_calloc(tables.count, 1);
	for (uint32_t s = 0; s < tables.count; s++) {
		const char *name = ts_language_symbol_name(lang, (TSSymbol)s);
		TSSymbolType type = ts_language_symbol_type(lang, (TSSymbol)s);
		if (!name)
			continue;
		if (type == TSSymbolTypeRegular) {
			for (size_t i = 0; i < sizeof(named_kinds) / sizeof(named_kinds[0]); i++)
				if (strcmp(name, named_kinds[i].name) == 0)
					tables.kind[s] = (unsigned char)named_kinds[i].kind;
		} else if (type == TSSymbolTypeAnonymous) {
			for (size_t i = 0; i < sizeof(operator_kinds) / sizeof(operator_kinds[0]);
			     i++)
				if (strcmp(name, operator_kinds[i].name) == 0)
					tables.op[s] = (unsigned char)operator_kinds[i].kind;
		}
	}
	tables.f_target = ts_language_field_id_for_name(lang, "target", 6);
	tables.f_left = ts_language_field_id_for_name(lang, "left", 4);
	tables.f_right = ts_language_field_id_for_name(lang, "right", 5);
	tables.f_operator = ts_language_field_id_for_name(lang, "operator", 8);
	tables.f_operand = ts_language_field_id_for_name(lang, "operand", 7);
	tables.f_key = ts_language_field_id_for_name(lang, "key", 3);
	tables.f_value = ts_language_field_id_for_name(lang, "value", 5);
}

static enum node_kind kind_of(TSNode n)
{
	if (ts_node_is_null(n))
		return N_OTHER;
	TSSymbol s = ts_node_symbol(n);
	if (s == (TSSymbol)-1)
		return N_ERROR;
	return s < tables.count ? (enum node_kind)tables.kind[s] : N_OTHER;
}

static enum op_kind op_of(TSNode n)
{
	TSNode o = ts_node_child_by_field_id(n, tables.f_operator);
	if (ts_node_is_null(o))
		return OP_NONE;
	TSSymbol s = ts_node_symbol(o);
	return s < tables.count ? (enum op_kind)tables.op[s] : OP_NONE;
}

static TSNode field(TSNode n, TSFieldId id)
{
	return ts_node_child_by_field_id(n, id);
}

/* ---- walk state ------------------------------------------------------ */

/* An alias in scope, or an imported function: `import M, only: [f: 1]`
 * is kept as short_name "&f/1" (never an alias's text) with full "M". */
struct ex_alias {
	const char *short_name; /* "Bar" */
	const char *full;       /* "Foo.Bar" */
};

struct ex_spec {
	const char *name;
	int arity;
	uint32_t line;
};

/* A macro of this file whose quote defines a function named by one of its
 * parameters (`defmacro defsequence(name, code) do quote do def
 * unquote(name)() ...`): a call to it with a literal name in a module body
 * defines that function. */
struct ex_template {
	const char *module; /* the macro's module */
	const char *macro;  /* its name */
	int min_arity, max_arity;
	int param;      /* index of the parameter that names the definition */
	int def_arity;  /* arity of the definition */
	bool is_macro;  /* defmacro rather than def */
	bool is_public; /* def / defmacro */
	const char *by; /* "Module.macro/arity", for generated_by */
};

/* The macro whose clause is being walked, for templates. */
struct ex_macro_clause {
	const char *name;
	int min_arity, max_arity;
	TSNode args; /* the head's arguments node */
};

struct ex_metrics {
	int cyclomatic;
	int cognitive;
	int nesting;   /* cognitive nesting, reset by fn */
	int depth;     /* control-structure depth, not reset by fn */
	int max_depth; /* deepest `depth` reached */
};

/* What the walk knows about the module whose body it is in. */
struct ex_module_state {
	size_t index;            /* in f->modules */
	const char *name;        /* arena */
	struct gi_map functions; /* "name/arity" -> (void *)(index + 1) */
	struct gi_map refs;      /* "kind:target" -> (void *)1, to keep refs distinct */
	struct gi_vec specs;     /* struct ex_spec */
	/* Known macros that generate functions (ex_use_generated, defstruct,
	 * defexception): applied when the module is finished. */
	const char *generators[8];
	uint32_t generator_lines[8];
	int generator_count;
	/* The FACTS_MODULE_BODY function holding the calls made outside any
	 * function, index + 1 in the module's functions; 0 until needed. */
	size_t body_function;
	/* @derive protocols, made into implementation modules when the module
	 * defines a struct. */
	const char *derives[8];
	int derive_count;
	uint32_t derive_line;
	/* Attributes whose value is a literal list of atoms (`@levels [:a, :b]`),
	 * for the comprehensions that define a function per element. */
	struct {
		const char *name;
		TSNode list;
	} atom_lists[16];
	int atom_list_count;
	bool is_protocol;
	bool pending_doc, pending_doc_false, pending_impl, pending_deprecated;
	const char *pending_impl_value; /* "true" or the module of the pending @impl */
};

struct ex_ctx {
	struct facts_file *f;
	const char *src;
	size_t len;
	struct gi_vec aliases;       /* struct ex_alias, innermost scope last */
	struct ex_module_state *mod; /* NULL outside modules */
	long function;               /* index in the module's functions, -1 outside */
	struct ex_metrics *metrics;  /* current clause, NULL outside */
	bool in_quote;
	int quote_def;    /* inside a quote: definitions (def ... do) being walked */
	bool hash_bodies; /* make the BODY sites (ex_parse_with flags) */
	bool in_guard;    /* walking a clause's guard (no compiler_call there) */
	/* The condition being walked of an if, unless, cond clause or for
	 * filter: a comparison there is a test in the object code, not a call
	 * (through and/or/&&/||/not), so compiler_operator skips it. */
	TSNode test;
	bool in_pattern; /* walking a pattern: a head's arguments, `p = x`, `p <- x`, `p ->` */
	bool too_deep;
	const char *describe; /* ExUnit `describe` name around the current tests */
	/* Inside a module-level `for var <- [:a, :b]`: the variable, its values
	 * (arena strings) and, while a definition is made for one of them, the
	 * name `unquote(var)` stands for. */
	const char *for_var;
	size_t for_var_len;
	const char **for_values;
	int for_count;
	const char *unquote_name;
	struct gi_vec templates;             /* struct ex_template */
	const struct ex_macro_clause *macro; /* NULL outside a defmacro clause */
	size_t bodyless; /* module index + 1 of the body-less module just walked */
	TSTreeCursor cursors[EX_MAX_DEPTH + 2];
	bool cursor_ready[EX_MAX_DEPTH + 2];
};

/* Named, non-comment children of an arguments node: their count, the first
 * four and the last. */
struct ex_args {
	uint32_t count;
	TSNode first[4];
	TSNode last;
};

/* The parts of a call node. */
struct ex_call {
	TSNode node, target, args, do_block;
};

static void walk(struct ex_ctx *c, TSNode n, unsigned depth, int pipe);
static uint32_t walk_children(struct ex_ctx *c, TSNode n, unsigned depth);
NOINLINE static void walk_error(struct ex_ctx *c, TSNode n, unsigned depth);

static TSTreeCursor *cursor_at(struct ex_ctx *c, unsigned depth, TSNode n)
{
	if (!c->cursor_ready[depth]) {
		c->cursors[depth] = ts_tree_cursor_new(n);
		c->cursor_ready[depth] = true;
	} else {
		ts_tree_cursor_reset(&c->cursors[depth], n);
	}
	return &c->cursors[depth];
}

/* The operand of a unary operator. tree-sitter-elixir 0.3.5 also puts the
 * `(` and `)` of `&(expr)` under the operand field, so the first named child
 * in that field is the operand, not the first child. */
static TSNode operand_of(struct ex_ctx *c, TSNode n, unsigned depth)
{
	TSTreeCursor *cur = cursor_at(c, depth, n);
	for (bool ok = ts_tree_cursor_goto_first_child(cur); ok;
	     ok = ts_tree_cursor_goto_next_sibling(cur)) {
		TSNode k = ts_tree_cursor_current_node(cur);
		if (ts_tree_cursor_current_field_id(cur) == tables.f_operand && ts_node_is_named(k))
			return k;
	}
	return (TSNode){0};
}

/* The source text of `n` (empty for a null node), borrowed from the source. */
static const char *text_of(const struct ex_ctx *c, TSNode n, size_t *len)
{
	if (ts_node_is_null(n)) {
		*len = 0;
		return c->src;
	}
	uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
	if (b > c->len)
		b = (uint32_t)c->len;
	if (a > b)
		a = b;
	*len = b - a;
	return c->src + a;
}

static bool text_is(const struct ex_ctx *c, TSNode n, const char *s)
{
	size_t len;
	const char *t = text_of(c, n, &len);
	return len == strlen(s) && memcmp(t, s, len) == 0;
}

static uint32_t line_of(TSNode n)
{
	return ts_node_start_point(n).row + 1;
}

/* The last line a node covers: a node that ends at the start of a line
 * (after a newline) ends on the line before. */
static uint32_t end_line_of(TSNode n)
{
	TSPoint end = ts_node_end_point(n);
	if (end.column == 0 && end.row > ts_node_start_point(n).row)
		return end.row;
	return end.row + 1;
}

static struct facts_module *cur_module(struct ex_ctx *c)
{
	return c->mod ? gi_vec_get(&c->f->modules, c->mod->index) : NULL;
}

static struct facts_function *cur_function(struct ex_ctx *c)
{
	if (!c->mod || c->function < 0)
		return NULL;
	return gi_vec_get(&cur_module(c)->functions, (size_t)c->function);
}

static void args_read(struct ex_ctx *c, TSNode args, unsigned depth, struct ex_args *a)
{
	memset(a, 0, sizeof(*a));
	if (ts_node_is_null(args) || ts_node_child_count(args) == 0)
		return;
	TSTreeCursor *cur = cursor_at(c, depth, args);
	for (bool ok = ts_tree_cursor_goto_first_child(cur); ok;
	     ok = ts_tree_cursor_goto_next_sibling(cur)) {
		TSNode k = ts_tree_cursor_current_node(cur);
		if (!ts_node_is_named(k) || kind_of(k) == N_COMMENT)
			continue;
		if (a->count < 4)
			a->first[a->count] = k;
		a->last = k;
		a->count++;
	}
}

static void call_read(struct ex_ctx *c, TSNode n, unsigned depth, struct ex_call *call)
{
	memset(call, 0, sizeof(*call));
	call->node = n;
	TSTreeCursor *cur = cursor_at(c, depth, n);
	for (bool ok = ts_tree_cursor_goto_first_child(cur); ok;
	     ok = ts_tree_cursor_goto_next_sibling(cur)) {
		TSNode k = ts_tree_cursor_current_node(cur);
		/* the target read here: ts_node_child_by_field_id would walk
		 * the children once more */
		if (ts_node_is_null(call->target) &&
		    ts_tree_cursor_current_field_id(cur) == tables.f_target) {
			call->target = k;
			continue;
		}
		enum node_kind kk = kind_of(k);
		if (kk == N_ARGUMENTS && ts_node_is_null(call->args))
			call->args = k;
		else if (kk == N_DO_BLOCK)
			call->do_block = k;
	}
}

/* The value of the keyword `key` (without colon) in a keywords node, or a null node. */
static TSNode keyword_value(struct ex_ctx *c, TSNode keywords, unsigned depth, const char *key)
{
	TSNode none = {0};
	if (kind_of(keywords) != N_KEYWORDS)
		return none;
	size_t klen = strlen(key);
	TSTreeCursor *cur = cursor_at(c, depth, keywords);
	for (bool ok = ts_tree_cursor_goto_first_child(cur); ok;
	     ok = ts_tree_cursor_goto_next_sibling(cur)) {
		TSNode pair = ts_tree_cursor_current_node(cur);
		if (kind_of(pair) != N_PAIR)
			continue;
		TSNode k = field(pair, tables.f_key);
		size_t len;
		const char *t = text_of(c, k, &len);
		if (kind_of(k) == N_KEYWORD && len > klen && memcmp(t, key, klen) == 0 &&
		    t[klen] == ':')
			return field(pair, tables.f_value);
	}
	return none;
}

/* ---- names ------------------------------------------------------------ */

/* Copies the alias text of `n` without whitespace into `out`; returns its
 * length or 0 when it does not fit or is empty. */
static size_t alias_text(const struct ex_ctx *c, TSNode n, char *out, size_t size)
{
	size_t len, o = 0;
	const char *t = text_of(c, n, &len);
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

static void alias_add(struct ex_ctx *c, const char *short_name, size_t len, const char *full)
{
	struct ex_alias a = {gi_arena_strndup(&c->f->arena, short_name, len), full};
	gi_vec_push(&c->aliases, &a);
}

/* Expands an alias's text through the aliases in scope ("Elixir." prefixes
 * are dropped); returns an arena string. */
static const char *alias_expand(struct ex_ctx *c, const char *t, size_t len)
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
static const char *module_of(struct ex_ctx *c, TSNode n, unsigned depth)
{
	char buf[EX_MAX_NAME];
	size_t len;
	const char *t;
	if (depth > EX_MAX_DEPTH)
		return NULL;
	switch (kind_of(n)) {
	case N_ALIAS:
		len = alias_text(c, n, buf, sizeof(buf));
		return len ? alias_expand(c, buf, len) : NULL;
	case N_IDENTIFIER:
		return text_is(c, n, "__MODULE__") && c->mod ? c->mod->name : NULL;
	case N_CALL: {
		/* in a quote, `unquote(__MODULE__)` and `unquote(Alias)` are
		 * evaluated in the macro's module */
		if (!c->in_quote)
			return NULL;
		TSNode target = field(n, tables.f_target);
		TSNode args = ts_node_named_child(n, 1);
		if (kind_of(target) != N_IDENTIFIER || !text_is(c, target, "unquote") ||
		    ts_node_is_null(args) || ts_node_named_child_count(args) != 1)
			return NULL;
		TSNode arg = ts_node_named_child(args, 0);
		if (kind_of(arg) != N_ALIAS && kind_of(arg) != N_IDENTIFIER)
			return NULL;
		return module_of(c, arg, depth + 1);
	}
	case N_ATOM:
		t = text_of(c, n, &len);
		if (len < 2 || len >= EX_MAX_NAME || t[0] != ':')
			return NULL;
		if (len > 8 && GI_MEM_IS(t + 1, 7, "Elixir."))
			return gi_arena_strndup(&c->f->arena, t + 8, len - 8);
		return gi_arena_strndup(&c->f->arena, t, len);
	case N_QUOTED_ATOM: {
		TSNode q = ts_node_named_child(n, 0);
		if (ts_node_named_child_count(n) != 1 || kind_of(q) != N_QUOTED_CONTENT)
			return NULL;
		t = text_of(c, q, &len);
		if (len == 0 || len >= EX_MAX_NAME)
			return NULL;
		if (len > 7 && GI_MEM_IS(t, 7, "Elixir."))
			return gi_arena_strndup(&c->f->arena, t + 7, len - 7);
		return gi_arena_printf(&c->f->arena, ":%.*s", (int)len, t);
	}
	case N_DOT: {
		TSNode right = field(n, tables.f_right);
		if (kind_of(right) != N_ALIAS)
			return NULL;
		const char *left = module_of(c, field(n, tables.f_left), depth + 1);
		len = alias_text(c, right, buf, sizeof(buf));
		if (!left || !len || left[0] == ':')
			return NULL;
		return gi_arena_printf(&c->f->arena, "%s.%s", left, buf);
	}
	default:
		return NULL;
	}
}

/* The text of a string literal without interpolation, or NULL. */
static const char *plain_string(struct ex_ctx *c, TSNode n, size_t *len)
{
	if (kind_of(n) != N_STRING)
		return NULL;
	uint32_t count = ts_node_named_child_count(n);
	if (count == 0) {
		*len = 0;
		return "";
	}
	TSNode q = ts_node_named_child(n, 0);
	if (count != 1 || kind_of(q) != N_QUOTED_CONTENT)
		return NULL;
	return text_of(c, q, len);
}

/* The function name a call's dot target names (`right` of the dot):
 * `Mod.f`, `:erlang.+`, or a quoted name `:erlang."=:="`. */
static const char *dot_function(struct ex_ctx *c, TSNode right)
{
	enum node_kind k = kind_of(right);
	size_t len;
	const char *t;
	if (k == N_STRING)
		t = plain_string(c, right, &len);
	else if (k == N_IDENTIFIER || k == N_OPERATOR_IDENTIFIER)
		t = text_of(c, right, &len);
	else
		return NULL;
	if (!t || len == 0 || len >= EX_MAX_NAME)
		return NULL;
	return gi_arena_strndup(&c->f->arena, t, len);
}

static int small_int(const struct ex_ctx *c, TSNode n)
{
	size_t len;
	const char *t = text_of(c, n, &len);
	if (kind_of(n) != N_INTEGER || len == 0 || len > 3)
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
static int key_make(char *key, size_t size, const char *prefix, const char *name, size_t len,
                    char sep, int number)
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

static void ref_add(struct ex_ctx *c, enum facts_ref_kind kind, const char *target, uint32_t line)
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
	struct facts_module *m = cur_module(c);
	struct facts_ref *r = gi_vec_push_zero(&m->refs);
	r->kind = kind;
	r->target = target;
	r->line = line;
}

static long function_find_or_add(struct ex_ctx *c, const char *name, size_t name_len, int arity,
                                 bool *created);
static void function_touch(struct facts_function *fn, enum facts_function_kind kind, bool public,
                           uint32_t start, uint32_t end);

/* The function that holds the calls made outside any function of the
 * current module (FACTS_MODULE_BODY, created on first use): code run when
 * the module is compiled, such as a DSL's macro calls (`get "/", ...`),
 * attribute values and @before_compile. NULL inside a quote, whose
 * module-level code belongs to the macro's caller. */
static struct facts_function *body_function(struct ex_ctx *c)
{
	if (!c->mod || c->in_quote)
		return NULL;
	struct facts_module *m = cur_module(c);
	if (!c->mod->body_function) {
		bool created;
		long fi = function_find_or_add(c, FACTS_MODULE_BODY, strlen(FACTS_MODULE_BODY), 0,
		                               &created);
		struct facts_function *fn = gi_vec_get(&m->functions, (size_t)fi);
		function_touch(fn, FACTS_DEF, false, m->line_start, m->line_end);
		fn->generated_by = "module body";
		c->mod->body_function = (size_t)fi + 1;
	}
	return gi_vec_get(&m->functions, c->mod->body_function - 1);
}

static void call_add(struct ex_ctx *c, enum facts_call_kind kind, const char *module,
                     const char *function, int arity, uint32_t line)
{
	struct facts_function *fn = c->function >= 0 ? cur_function(c) : body_function(c);
	if (!fn)
		return;
	struct facts_call *call = gi_vec_push_zero(&fn->calls);
	call->kind = kind;
	call->module = module;
	call->function = function;
	call->arity = arity;
	call->line = line;
}

static void remote_call(struct ex_ctx *c, const char *module, const char *function, int arity,
                        uint32_t line)
{
	ref_add(c, FACTS_REF_CALL, module, line);
	call_add(c, FACTS_CALL_REMOTE, module, function, arity, line);
}

/* ---- calls the compiler writes (docs/EXTRACTION.md, "Compiler rewrites") */

/* Records a call the compiler writes (kind compiler: never an edge of the
 * graph): to an Erlang module for Kernel's inlined functions and
 * operators, to Enum and Collectable for `for` and `in`. Not in quotes (code of the macro's
 * callers) nor in guards (where the compiler emits tests, not calls). */
static void compiler_call(struct ex_ctx *c, const char *module, const char *function, int arity,
                          uint32_t line)
{
	if (!c->mod || c->in_quote || c->in_guard)
		return;
	call_add(c, FACTS_CALL_COMPILER, module, function, arity, line);
}

/* module.function/arity as written (module "Kernel" for operators and
 * Kernel's imported functions): the Erlang call the compiler makes of it,
 * if it rewrites it (elixir_rewrite.erl's table, ex_inline_lookup). */
static void compiler_rewrite(struct ex_ctx *c, const char *module, const char *function, size_t len,
                             int arity, uint32_t line)
{
	char name[16];
	if (len >= sizeof(name) || c->in_quote || c->in_guard)
		return;
	memcpy(name, function, len);
	name[len] = '\0';
	const struct ex_inline *e = ex_inline_lookup(module, name, arity);
	if (e)
		compiler_call(c, e->erl_module, e->erl_name, e->erl_arity, line);
}

/* Kernel's macros that expand to a call of a protocol (Elixir 1.14):
 * to_string(x) is String.Chars.to_string/1, to_charlist(x)
 * List.Chars.to_charlist/1. */
static const char *kernel_expansion(const char *name, size_t len, int arity)
{
	if (arity == 1 && GI_MEM_IS(name, len, "to_string"))
		return "String.Chars";
	if (arity == 1 && GI_MEM_IS(name, len, "to_charlist"))
		return "List.Chars";
	return NULL;
}

/* The module that an `import ..., only:` in scope gives name/arity from, or NULL. */
static const char *import_lookup(const struct ex_ctx *c, const char *name, size_t len, int arity)
{
	char key[EX_MAX_NAME + 16];
	int n = key_make(key, sizeof(key), "&", name, len, '/', arity);
	if (n < 0 || (size_t)n >= sizeof(key))
		return NULL;
	return alias_lookup(c, key, (size_t)n);
}

/* Records the call (kind local or capture) of `name`/arity made in the
 * current function: a remote one when an import with `only:` provides it. */
static void local_call_kind(struct ex_ctx *c, TSNode name, int arity, enum facts_call_kind kind,
                            uint32_t line)
{
	if (!c->mod || c->in_quote)
		return;
	size_t len;
	const char *t = text_of(c, name, &len);
	if (len == 0 || len >= EX_MAX_NAME)
		return;
	const char *fun = gi_arena_strndup(&c->f->arena, t, len);
	const char *imported = import_lookup(c, t, len, arity);
	if (imported) {
		ref_add(c, kind == FACTS_CALL_CAPTURE ? FACTS_REF_CAPTURE : FACTS_REF_CALL,
		        imported, line);
		call_add(c, kind == FACTS_CALL_CAPTURE ? kind : FACTS_CALL_REMOTE, imported, fun,
		         arity, line);
		return;
	}
	call_add(c, kind, c->mod->name, fun, arity, line);
}

static void local_call(struct ex_ctx *c, TSNode name, int arity)
{
	local_call_kind(c, name, arity, FACTS_CALL_LOCAL, line_of(name));
}

/* ---- dispatch: modules as values, MFAs, apply --------------------------- */

/* A module named literally: an alias, __MODULE__, or an Erlang atom when
 * `erlang` (in an MFA argument, where an atom is a module). */
static const char *literal_module(struct ex_ctx *c, TSNode n, unsigned depth, bool erlang)
{
	enum node_kind k = kind_of(n);
	if (k == N_ALIAS || k == N_DOT || (k == N_IDENTIFIER && text_is(c, n, "__MODULE__")) ||
	    (erlang && k == N_ATOM))
		return module_of(c, n, depth);
	return NULL;
}

/* The function name a literal atom `:f` gives, or NULL. */
static const char *literal_function(struct ex_ctx *c, TSNode n)
{
	size_t len;
	const char *t = text_of(c, n, &len);
	if (kind_of(n) != N_ATOM || len < 2 || len >= EX_MAX_NAME || t[0] != ':')
		return NULL;
	return gi_arena_strndup(&c->f->arena, t + 1, len - 1);
}

/* The number of elements of a literal list (the arity an argument list
 * gives), or -1 when `n` is not a list. */
static int literal_arity(TSNode n)
{
	if (kind_of(n) != N_LIST)
		return -1;
	int count = 0;
	uint32_t k = ts_node_named_child_count(n);
	for (uint32_t i = 0; i < k; i++) {
		TSNode e = ts_node_named_child(n, i);
		if (kind_of(e) == N_COMMENT)
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
	const char *mod = literal_module(c, m, depth, true);
	const char *fun = mod ? literal_function(c, f) : NULL;
	if (!fun)
		return false;
	/* An MFA tuple held as a value (`error_handler: {M, :f, []}`,
	 * `opts[:m2p] || {__MODULE__, :f, [opts]}`) is, by convention, called
	 * with arguments of the caller's before its own: any arity. A child
	 * spec's `start: {M, :f, args}` is applied as written, as are the MFA
	 * arguments of spawn/3 and the like. */
	TSNode tuple = ts_node_parent(m);
	bool option = !apply && !ts_node_is_null(tuple) && kind_of(tuple) == N_TUPLE;
	TSNode parent = option ? ts_node_parent(tuple) : (TSNode){0};
	if (option && !ts_node_is_null(parent) && strcmp(ts_node_type(parent), "pair") == 0) {
		size_t klen;
		const char *k = text_of(c, field(parent, tables.f_key), &klen);
		option = !GI_MEM_STARTS(k, klen, "start:");
	}
	ref_add(c, apply ? FACTS_REF_APPLY : FACTS_REF_MFA, mod, line);
	int arity = option ? -1 : literal_arity(a);
	call_add(c, apply ? FACTS_CALL_APPLY : FACTS_CALL_MFA, mod, fun,
	         arity >= 0 ? arity + extra : -1, line);
	if (apply && c->mod && !c->in_quote) {
		struct facts_function *fn = cur_function(c);
		facts_site_add(
		    cur_module(c), FACTS_SITE_APPLY, fn ? fn->name : NULL, fn ? fn->arity : 0, line,
		    gi_arena_printf(&c->f->arena, "%s.%s/%d", mod, fun, literal_arity(a)));
	}
	return true;
}

/* A call to a function that takes an MFA (ex_mfa_position): records it. */
static void mfa_call(struct ex_ctx *c, const struct ex_call *call, const char *module,
                     const char *function, int arity, unsigned depth)
{
	bool apply = false;
	int extra = 0;
	int pos = ex_mfa_position(module, function, arity, &apply, &extra);
	if (pos < 0)
		return;
	struct ex_args a;
	args_read(c, call->args, depth, &a);
	if ((int)a.count != arity || pos + 2 >= 4)
		return;
	mfa_record(c, a.first[pos], a.first[pos + 1], a.first[pos + 2], depth, apply, extra,
	           line_of(call->node));
}

/* `Module.concat(A, B)` / `Module.concat([A, B])` of aliases: the module
 * name it makes ("A.B"), or NULL. */
static const char *concat_name(struct ex_ctx *c, const struct ex_call *call, unsigned depth)
{
	struct ex_args a;
	args_read(c, call->args, depth, &a);
	TSNode parts[8];
	uint32_t n = 0;
	if (a.count == 1 && kind_of(a.first[0]) == N_LIST) {
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
		const char *m = literal_module(c, parts[i], depth, false);
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
static void walk_tuple(struct ex_ctx *c, TSNode n, unsigned depth)
{
	if (ts_node_named_child_count(n) == 3) {
		TSNode m = ts_node_named_child(n, 0), f = ts_node_named_child(n, 1),
		       a = ts_node_named_child(n, 2);
		if (kind_of(a) == N_LIST && kind_of(m) != N_ATOM &&
		    mfa_record(c, m, f, a, depth, false, 0, line_of(n))) {
			walk(c, a, depth, 0);
			return;
		}
	}
	walk_children(c, n, depth);
}

/* ---- modules ---------------------------------------------------------- */

static void walk_body(struct ex_ctx *c, const struct ex_call *call, const struct ex_args *a,
                      unsigned depth)
{
	if (!ts_node_is_null(call->do_block)) {
		walk_children(c, call->do_block, depth);
	} else if (a->count >= 2) {
		TSNode v = keyword_value(c, a->last, depth, "do");
		if (!ts_node_is_null(v))
			walk(c, v, depth, 0);
	}
}

/* Adds name/arity ("f/2") as a function of `kind` generated by `macro` at
 * `line`, unless the module defines it. */
static void generated_add_kind(struct ex_ctx *c, const char *name_arity, const char *macro,
                               uint32_t line, enum facts_function_kind kind, bool public)
{
	if (gi_map_get(&c->mod->functions, name_arity))
		return;
	const char *slash = strrchr(name_arity, '/');
	if (!slash)
		return;
	int arity = 0;
	for (const char *p = slash + 1; *p >= '0' && *p <= '9'; p++)
		arity = arity * 10 + (*p - '0');
	bool created;
	long fi =
	    function_find_or_add(c, name_arity, (size_t)(slash - name_arity), arity, &created);
	struct facts_function *fn = gi_vec_get(&cur_module(c)->functions, (size_t)fi);
	function_touch(fn, kind, public, line, line);
	fn->generated_by = macro;
}

static void generated_add(struct ex_ctx *c, const char *name_arity, const char *macro,
                          uint32_t line)
{
	generated_add_kind(c, name_arity, macro, line, FACTS_DEF, true);
}

/* What the compiler adds to every protocol and implementation module. */
static void generated_protocol(struct ex_ctx *c)
{
	const struct facts_module *m = cur_module(c);
	uint32_t line = m->line_start;
	if (m->kind == FACTS_PROTOCOL) {
		generated_add(c, "__protocol__/1", "defprotocol", line);
		generated_add(c, "impl_for/1", "defprotocol", line);
		generated_add(c, "impl_for!/1", "defprotocol", line);
	} else if (m->kind == FACTS_IMPL) {
		generated_add(c, "__impl__/1", "defimpl", line);
	}
}

/* A function `name_arity` ("f/2") of module `m`, generated by @derive. */
static void derived_function_add(struct facts_file *f, struct facts_module *m,
                                 const char *name_arity, uint32_t line)
{
	const char *slash = strrchr(name_arity, '/');
	char name[EX_MAX_NAME];
	if (!slash || (size_t)(slash - name_arity) >= sizeof(name))
		return;
	memcpy(name, name_arity, (size_t)(slash - name_arity));
	name[slash - name_arity] = '\0';
	struct facts_function *fn =
	    facts_function_add(f, m, name, (int)strtol(slash + 1, NULL, 10));
	fn->kind = FACTS_DEF;
	fn->line_start = fn->line_end = line;
	fn->cyclomatic = 1;
	fn->generated_by = "@derive";
}

/* `@derive P` before `defstruct` in module M: the implementation module
 * P.M (kind impl), with the functions of P when P is one of Elixir's
 * protocols (ex_protocol_functions) and __impl__/1, unless the file defines
 * P.M itself. */
static void derived_impls_add(struct ex_ctx *c, struct ex_module_state *st)
{
	const struct facts_module *m = gi_vec_get(&c->f->modules, st->index);
	if (!m->has_struct || st->derive_count == 0)
		return;
	const char *target = m->name;
	for (int i = 0; i < st->derive_count; i++) {
		const char *protocol = st->derives[i];
		const char *name = gi_arena_printf(&c->f->arena, "%s.%s", protocol, target);
		bool exists = false;
		for (size_t k = 0; k < c->f->modules.len && !exists; k++)
			exists =
			    strcmp(((struct facts_module *)gi_vec_get(&c->f->modules, k))->name,
			           name) == 0;
		if (exists)
			continue;
		struct facts_module *d = facts_module_add(c->f, name);
		d->kind = FACTS_IMPL;
		d->protocol = protocol;
		d->impl_for = target;
		d->line_start = d->line_end = st->derive_line;
		facts_ref_add(c->f, d, FACTS_REF_BEHAVIOUR, protocol, st->derive_line);
		const char *const *fns = ex_protocol_functions(protocol);
		for (size_t k = 0; fns && fns[k]; k++)
			derived_function_add(c->f, d, fns[k], st->derive_line);
		derived_function_add(c->f, d, "__impl__/1", st->derive_line);
	}
}

/* The functions the module's known macros generate (docs/EXTRACTION.md,
 * "Generated functions"). */
static void generated_apply(struct ex_ctx *c, struct ex_module_state *st)
{
	generated_protocol(c);
	for (int i = 0; i < st->generator_count; i++) {
		const char *g = st->generators[i];
		uint32_t line = st->generator_lines[i];
		if (strcmp(g, "defstruct") == 0 || strcmp(g, "defexception") == 0) {
			generated_add(c, "__struct__/0", g, line);
			generated_add(c, "__struct__/1", g, line);
			if (strcmp(g, "defexception") == 0) {
				generated_add(c, "exception/1", g, line);
				const struct facts_module *m = cur_module(c);
				for (size_t k = 0; k < m->struct_fields.len; k++)
					if (strcmp(GI_VEC_AT(&m->struct_fields, const char *, k),
					           "message") == 0)
						generated_add(c, "message/1", g, line);
			}
			continue;
		}
		const char *const *fns = ex_use_generated(g + 4); /* "use M" */
		for (size_t k = 0; fns && fns[k]; k++)
			generated_add(c, fns[k], g, line);
	}
}

static void generator_add(struct ex_ctx *c, const char *macro, uint32_t line)
{
	struct ex_module_state *st = c->mod;
	if (!st || st->generator_count >= 8)
		return;
	st->generators[st->generator_count] = macro;
	st->generator_lines[st->generator_count++] = line;
}

static void module_finish(struct ex_ctx *c, struct ex_module_state *st)
{
	struct facts_module *m = gi_vec_get(&c->f->modules, st->index);
	char key[EX_MAX_NAME + 16];
	generated_apply(c, st);
	m = gi_vec_get(&c->f->modules, st->index);
	for (size_t i = 0; i < st->specs.len; i++) {
		struct ex_spec *s = gi_vec_get(&st->specs, i);
		key_make(key, sizeof(key), "", s->name, strlen(s->name), '/', s->arity);
		void *idx = gi_map_get(&st->functions, key);
		if (idx)
			GI_VEC_AT(&m->functions, struct facts_function, (size_t)idx - 1).has_spec =
			    true;
		else
			facts_site_add(m, FACTS_SITE_ORPHAN_SPEC, s->name, s->arity, s->line, NULL);
	}
	for (size_t i = 0; i < m->functions.len; i++) {
		struct facts_function *fn = gi_vec_get(&m->functions, i);
		if (fn->cyclomatic == 0)
			fn->cyclomatic = 1;
		size_t out = 0;
		for (size_t j = 0; j < fn->calls.len; j++) {
			struct facts_call *call = gi_vec_get(&fn->calls, j);
			bool local = call->kind == FACTS_CALL_LOCAL ||
			             (call->kind == FACTS_CALL_CAPTURE && call->module == st->name);
			if (call->kind == FACTS_CALL_LOCAL && j + 1 < fn->calls.len &&
			    (GI_VEC_AT(&fn->calls, struct facts_call, j + 1).kind ==
			         FACTS_CALL_COMPILER ||
			     GI_VEC_AT(&fn->calls, struct facts_call, j + 1).kind ==
			         FACTS_CALL_REMOTE)) {
				/* max(a, b) of a module that defines max/2 (and so
				 * excludes Kernel's) calls it, not :erlang.max/2:
				 * drop the rewrite recorded right after it */
				key_make(key, sizeof(key), "", call->function,
				         strlen(call->function), '/', call->arity);
				const struct ex_inline *e =
				    ex_inline_lookup("Kernel", call->function, call->arity);
				const struct facts_call *next = gi_vec_get(&fn->calls, j + 1);
				const char *proto = kernel_expansion(
				    call->function, strlen(call->function), call->arity);
				bool expansion =
				    next->kind == FACTS_CALL_COMPILER
				        ? e && strcmp(next->module, e->erl_module) == 0 &&
				              strcmp(next->function, e->erl_name) == 0
				        : proto && strcmp(next->module, proto) == 0 &&
				              strcmp(next->function, call->function) == 0;
				if (expansion && gi_map_get(&st->functions, key)) {
					if (out != j)
						GI_VEC_AT(&fn->calls, struct facts_call, out) =
						    *call;
					out++;
					j++;
					continue;
				}
			}
			if (local) {
				key_make(key, sizeof(key), "", call->function,
				         strlen(call->function), '/', call->arity);
				if (!gi_map_get(&st->functions, key) &&
				    ex_is_kernel_function(call->function, call->arity)) {
					/* inspect(x) is Kernel.inspect/1 in the object code */
					call->kind = call->kind == FACTS_CALL_LOCAL
					                 ? FACTS_CALL_REMOTE
					                 : call->kind;
					call->module = "Kernel";
					ref_add(c,
					        call->kind == FACTS_CALL_CAPTURE ? FACTS_REF_CAPTURE
					                                         : FACTS_REF_CALL,
					        "Kernel", call->line);
				} else if (!gi_map_get(&st->functions, key) &&
				           ex_is_kernel_name(call->function)) {
					continue;
				}
			}
			if (out != j)
				GI_VEC_AT(&fn->calls, struct facts_call, out) = *call;
			out++;
		}
		fn->calls.len = out;
	}
	derived_impls_add(c, st);
	gi_map_destroy(&st->functions);
	gi_map_destroy(&st->refs);
	gi_vec_destroy(&st->specs);
}

/* What entering a module or a clause changes in the walk state. */
struct ex_saved {
	struct ex_module_state *mod;
	long function;
	struct ex_metrics *metrics;
	size_t aliases;
	const char *describe;
};

static void saved_take(struct ex_ctx *c, struct ex_saved *sv)
{
	sv->mod = c->mod;
	sv->function = c->function;
	sv->metrics = c->metrics;
	sv->aliases = c->aliases.len;
	sv->describe = c->describe;
}

static void saved_restore(struct ex_ctx *c, const struct ex_saved *sv)
{
	c->mod = sv->mod;
	c->function = sv->function;
	c->metrics = sv->metrics;
	c->aliases.len = sv->aliases;
	c->describe = sv->describe;
}

/* Makes module `index` the current module with a fresh state `st`. */
static void module_enter(struct ex_ctx *c, size_t index, struct ex_module_state *st,
                         struct ex_saved *sv)
{
	memset(st, 0, sizeof(*st));
	struct facts_module *m = gi_vec_get(&c->f->modules, index);
	st->index = index;
	st->name = m->name;
	st->is_protocol = m->kind == FACTS_PROTOCOL;
	gi_map_init(&st->functions);
	gi_map_init(&st->refs);
	gi_vec_init(&st->specs, sizeof(struct ex_spec));
	saved_take(c, sv);
	c->mod = st;
	c->function = -1;
	c->metrics = NULL;
	c->describe = NULL;
}

static void module_leave(struct ex_ctx *c, struct ex_module_state *st, const struct ex_saved *sv)
{
	module_finish(c, st);
	saved_restore(c, sv);
}

/* Walks the body of module `index` (the call's do-block or `do:`, or else
 * the children of `error_body`). */
static void module_run(struct ex_ctx *c, size_t index, const struct ex_call *call,
                       const struct ex_args *a, TSNode error_body, unsigned depth)
{
	struct ex_module_state st;
	struct ex_saved sv;
	module_enter(c, index, &st, &sv);
	struct facts_module *m = gi_vec_get(&c->f->modules, index);
	if (!ts_node_is_null(error_body)) {
		walk_error(c, error_body, depth);
	} else {
		if (m->protocol)
			ref_add(c, FACTS_REF_BEHAVIOUR, m->protocol, m->line_start);
		walk_body(c, call, a, depth);
	}
	module_leave(c, &st, &sv);
}

/* Creates module `name` for the call `node` and walks its body in it. A
 * module without a body is remembered (c->bodyless) so that a syntax error
 * right after it, where tree-sitter puts the body of a truncated module, is
 * walked as its body. */
static void module_walk(struct ex_ctx *c, const char *name, enum facts_module_kind kind,
                        const struct ex_call *call, const struct ex_args *a, unsigned depth,
                        const char *protocol, const char *impl_for)
{
	size_t index = c->f->modules.len;
	struct facts_module *m = facts_module_add(c->f, name);
	m->kind = kind;
	m->protocol = protocol;
	m->impl_for = impl_for;
	m->line_start = line_of(call->node);
	m->line_end = end_line_of(call->node);
	module_run(c, index, call, a, (TSNode){0}, depth);
	bool has_body = !ts_node_is_null(call->do_block) ||
	                (a->count >= 2 && !ts_node_is_null(keyword_value(c, a->last, depth, "do")));
	c->bodyless = has_body ? 0 : index + 1;
}

/* Walks `error` (a syntax error node) as the body of module `index`. */
static void module_recover(struct ex_ctx *c, size_t index, TSNode error, unsigned depth)
{
	struct facts_module *m = gi_vec_get(&c->f->modules, index);
	m->line_end = end_line_of(error);
	struct ex_call call;
	struct ex_args a;
	memset(&call, 0, sizeof(call));
	memset(&a, 0, sizeof(a));
	module_run(c, index, &call, &a, error, depth);
}

/* The name `defmodule NAME` defines in the current context: nested names
 * are prefixed by the enclosing module, whose scope then aliases their first
 * segment. Returns an arena string or NULL. */
static const char *module_name(struct ex_ctx *c, TSNode name, unsigned depth)
{
	if (kind_of(name) != N_ALIAS)
		return module_of(c, name, depth);
	char buf[EX_MAX_NAME];
	size_t len = alias_text(c, name, buf, sizeof(buf));
	if (len == 0)
		return NULL;
	if (len > 7 && GI_MEM_IS(buf, 7, "Elixir."))
		return gi_arena_strndup(&c->f->arena, buf + 7, len - 7);
	if (!c->mod)
		return alias_expand(c, buf, len);
	const char *dot = memchr(buf, '.', len);
	size_t head = dot ? (size_t)(dot - buf) : len;
	alias_add(c, buf, head,
	          gi_arena_printf(&c->f->arena, "%s.%.*s", c->mod->name, (int)head, buf));
	return gi_arena_printf(&c->f->arena, "%s.%s", c->mod->name, buf);
}

NOINLINE static void do_defmodule(struct ex_ctx *c, const struct ex_call *call, unsigned depth,
                                  enum facts_module_kind kind)
{
	struct ex_args a;
	args_read(c, call->args, depth, &a);
	if (a.count == 0 || c->in_quote) {
		walk_children(c, call->node, depth);
		return;
	}
	const char *full = module_name(c, a.first[0], depth);
	if (!full)
		return;
	module_walk(c, full, kind, call, &a, depth, NULL, NULL);
}

/* Walks the body of `defimpl Protocol, for: target` as the module
 * Protocol.Target (an Erlang target without its colon); nothing when the
 * target is not a module name. */
static void impl_walk(struct ex_ctx *c, const struct ex_call *call, const struct ex_args *a,
                      unsigned depth, const char *protocol, TSNode target)
{
	const char *t = module_of(c, target, depth);
	if (!t)
		return;
	const char *name =
	    gi_arena_printf(&c->f->arena, "%s.%s", protocol, t[0] == ':' ? t + 1 : t);
	module_walk(c, name, FACTS_IMPL, call, a, depth, protocol, t);
}

NOINLINE static void do_defimpl(struct ex_ctx *c, const struct ex_call *call, unsigned depth)
{
	struct ex_args a;
	args_read(c, call->args, depth, &a);
	if (a.count == 0 || c->in_quote)
		return;
	const char *protocol = module_of(c, a.first[0], depth);
	if (!protocol)
		return;
	TSNode target = a.count >= 2 ? keyword_value(c, a.last, depth, "for") : (TSNode){0};
	if (ts_node_is_null(target)) {
		if (!c->mod)
			return;
		const char *name = gi_arena_printf(&c->f->arena, "%s.%s", protocol, c->mod->name);
		module_walk(c, name, FACTS_IMPL, call, &a, depth, protocol, c->mod->name);
		return;
	}
	if (kind_of(target) == N_LIST) {
		/* One implementation module per listed type, each with the body. */
		uint32_t n = ts_node_named_child_count(target);
		for (uint32_t i = 0; i < n && i < 64; i++)
			impl_walk(c, call, &a, depth, protocol, ts_node_named_child(target, i));
		return;
	}
	impl_walk(c, call, &a, depth, protocol, target);
}

/* ---- directives ------------------------------------------------------- */

NOINLINE static void do_alias(struct ex_ctx *c, const struct ex_call *call, unsigned depth)
{
	struct ex_args a;
	args_read(c, call->args, depth, &a);
	if (a.count == 0 || c->in_quote)
		return;
	TSNode target = a.first[0];
	uint32_t line = line_of(call->node);
	if (kind_of(target) == N_DOT && kind_of(field(target, tables.f_right)) == N_TUPLE) {
		/* alias Base.{A, B.C} */
		const char *base = module_of(c, field(target, tables.f_left), depth);
		TSNode tuple = field(target, tables.f_right);
		if (!base)
			return;
		TSTreeCursor *cur = cursor_at(c, depth, tuple);
		for (bool ok = ts_tree_cursor_goto_first_child(cur); ok;
		     ok = ts_tree_cursor_goto_next_sibling(cur)) {
			TSNode k = ts_tree_cursor_current_node(cur);
			char buf[EX_MAX_NAME];
			size_t len;
			if (kind_of(k) != N_ALIAS || !(len = alias_text(c, k, buf, sizeof(buf))))
				continue;
			const char *full = gi_arena_printf(&c->f->arena, "%s.%s", base, buf);
			const char *last = strrchr(buf, '.');
			last = last ? last + 1 : buf;
			alias_add(c, last, strlen(last), full);
			ref_add(c, FACTS_REF_ALIAS, full, line);
		}
		return;
	}
	const char *full = module_of(c, target, depth);
	if (!full)
		return;
	ref_add(c, FACTS_REF_ALIAS, full, line);
	TSNode as = a.count >= 2 ? keyword_value(c, a.last, depth, "as") : (TSNode){0};
	if (!ts_node_is_null(as)) {
		char buf[EX_MAX_NAME];
		size_t len = kind_of(as) == N_ALIAS ? alias_text(c, as, buf, sizeof(buf)) : 0;
		if (len && !memchr(buf, '.', len))
			alias_add(c, buf, len, full);
		return;
	}
	if (full[0] == ':')
		return;
	const char *last = strrchr(full, '.');
	last = last ? last + 1 : full;
	alias_add(c, last, strlen(last), full);
}

/* The module a directive inside a quote names for the macro's caller:
 * `unquote(__MODULE__)` or `unquote(Alias)` is evaluated in the macro's
 * module; a bare `__MODULE__` (or `__MODULE__.X`) is the caller itself,
 * unknown here (NULL). */
static const char *quoted_module(struct ex_ctx *c, TSNode n, unsigned depth)
{
	if (kind_of(n) == N_CALL) {
		struct ex_call call;
		struct ex_args a;
		call_read(c, n, depth, &call);
		if (!text_is(c, call.target, "unquote"))
			return NULL;
		args_read(c, call.args, depth, &a);
		return a.count == 1 ? module_of(c, a.first[0], depth) : NULL;
	}
	size_t len;
	const char *t = text_of(c, n, &len);
	if (kind_of(n) == N_IDENTIFIER || GI_MEM_STARTS(t, len, "__MODULE__"))
		return NULL;
	return module_of(c, n, depth);
}

/* Inside a quote in a function: what the quote injects into the module that
 * `use`s it (FACTS_CALL_INJECT, `what` = "import", "require", "use",
 * "before_compile", "after_compile", "behaviour"), recorded on the function for the
 * graph to apply. */
static void inject_add(struct ex_ctx *c, const char *what, TSNode target, unsigned depth,
                       uint32_t line)
{
	if (!c->in_quote || c->function < 0)
		return;
	const char *m = quoted_module(c, target, depth);
	if (m)
		call_add(c, FACTS_CALL_INJECT, m, what, 0, line);
}

/* `import M, only: [f: 1, g: 2]`: f/1 and g/2 come from M in this scope. */
static void import_only(struct ex_ctx *c, TSNode list, unsigned depth, const char *module)
{
	if (kind_of(list) != N_LIST || ts_node_named_child_count(list) != 1)
		return;
	TSNode keywords = ts_node_named_child(list, 0);
	if (kind_of(keywords) != N_KEYWORDS)
		return;
	TSTreeCursor *cur = cursor_at(c, depth, keywords);
	for (bool ok = ts_tree_cursor_goto_first_child(cur); ok;
	     ok = ts_tree_cursor_goto_next_sibling(cur)) {
		TSNode pair = ts_tree_cursor_current_node(cur);
		if (kind_of(pair) != N_PAIR)
			continue;
		size_t len;
		const char *t = text_of(c, field(pair, tables.f_key), &len);
		int arity = small_int(c, field(pair, tables.f_value));
		while (len > 0 && (t[len - 1] == ' ' || t[len - 1] == ':' || t[len - 1] == '\n' ||
		                   t[len - 1] == '\t'))
			len--;
		if (arity < 0 || len == 0 || len >= EX_MAX_NAME ||
		    kind_of(field(pair, tables.f_key)) != N_KEYWORD)
			continue;
		char key[EX_MAX_NAME + 16];
		int n = snprintf(key, sizeof(key), "&%.*s/%d", (int)len, t, arity);
		if (n > 0 && (size_t)n < sizeof(key))
			alias_add(c, key, (size_t)n, module);
	}
}

/* `import Base.{A, B.C}` / `require Base.{A, B}`: one reference of `kind`
 * to each module named (what the compiler imports or requires). Returns
 * false when `target` is not that form. */
static bool directive_multi(struct ex_ctx *c, TSNode target, unsigned depth,
                            enum facts_ref_kind kind, uint32_t line)
{
	if (kind_of(target) != N_DOT || kind_of(field(target, tables.f_right)) != N_TUPLE)
		return false;
	const char *base = module_of(c, field(target, tables.f_left), depth);
	TSNode tuple = field(target, tables.f_right);
	if (!base)
		return true;
	TSTreeCursor *cur = cursor_at(c, depth, tuple);
	for (bool ok = ts_tree_cursor_goto_first_child(cur); ok;
	     ok = ts_tree_cursor_goto_next_sibling(cur)) {
		TSNode k = ts_tree_cursor_current_node(cur);
		char buf[EX_MAX_NAME];
		size_t len;
		if (kind_of(k) != N_ALIAS || !(len = alias_text(c, k, buf, sizeof(buf))))
			continue;
		ref_add(c, kind, gi_arena_printf(&c->f->arena, "%s.%s", base, buf), line);
	}
	return true;
}

NOINLINE static void do_directive(struct ex_ctx *c, const struct ex_call *call, unsigned depth,
                                  enum facts_ref_kind kind)
{
	struct ex_args a;
	args_read(c, call->args, depth, &a);
	if (a.count == 0)
		return;
	if (c->in_quote) {
		inject_add(c,
		           kind == FACTS_REF_IMPORT    ? "import"
		           : kind == FACTS_REF_REQUIRE ? "require"
		                                       : "use",
		           a.first[0], depth, line_of(call->node));
		return;
	}
	if (kind != FACTS_REF_USE &&
	    directive_multi(c, a.first[0], depth, kind, line_of(call->node)))
		return;
	const char *full = module_of(c, a.first[0], depth);
	if (!full)
		return;
	ref_add(c, kind, full, line_of(call->node));
	/* `use M, :which`: the quote of M.which/0 is injected too (the graph
	 * applies it when M is in the project). */
	if (kind == FACTS_REF_USE && c->function < 0 && a.count >= 2 &&
	    kind_of(a.first[1]) == N_ATOM) {
		const char *which = literal_function(c, a.first[1]);
		if (which)
			call_add(c, FACTS_CALL_USE, full, which, 0, line_of(call->node));
	}
	if (kind == FACTS_REF_REQUIRE && a.count >= 2) {
		TSNode as = keyword_value(c, a.last, depth, "as");
		char buf[EX_MAX_NAME];
		size_t len = kind_of(as) == N_ALIAS ? alias_text(c, as, buf, sizeof(buf)) : 0;
		if (len && !memchr(buf, '.', len))
			alias_add(c, buf, len, full);
	}
	if (kind == FACTS_REF_IMPORT && a.count >= 2)
		import_only(c, keyword_value(c, a.last, depth, "only"), depth, full);
	if (kind == FACTS_REF_USE && c->function < 0 && ex_use_generated(full))
		generator_add(c, gi_arena_printf(&c->f->arena, "use %s", full),
		              line_of(call->node));
	if (kind == FACTS_REF_USE && a.count >= 2)
		walk(c, a.last, depth, 0);
}

NOINLINE static void do_defstruct(struct ex_ctx *c, const struct ex_call *call, unsigned depth)
{
	struct facts_module *m = cur_module(c);
	if (!m || c->in_quote || c->function >= 0) {
		walk_children(c, call->node, depth);
		return;
	}
	m->has_struct = true;
	generator_add(c, text_is(c, call->target, "defexception") ? "defexception" : "defstruct",
	              line_of(call->node));
	struct ex_args a;
	args_read(c, call->args, depth, &a);
	if (a.count == 0)
		return;
	TSNode list = a.first[0];
	if (kind_of(list) != N_LIST && kind_of(list) != N_KEYWORDS)
		return;
	/* Fields are atoms and keyword pairs, directly in the list or in a
	 * trailing keywords node. */
	TSNode groups[2];
	groups[0] = list;
	memset(&groups[1], 0, sizeof(groups[1]));
	for (int g = 0; g < 2 && !ts_node_is_null(groups[g]); g++) {
		TSTreeCursor *cur = cursor_at(c, depth, groups[g]);
		for (bool ok = ts_tree_cursor_goto_first_child(cur); ok;
		     ok = ts_tree_cursor_goto_next_sibling(cur)) {
			TSNode k = ts_tree_cursor_current_node(cur);
			size_t len;
			const char *t;
			switch (kind_of(k)) {
			case N_ATOM:
				t = text_of(c, k, &len);
				if (len < 2)
					continue;
				t++;
				len--;
				break;
			case N_PAIR:
				t = text_of(c, field(k, tables.f_key), &len);
				while (len > 0 && (t[len - 1] == ' ' || t[len - 1] == ':' ||
				                   t[len - 1] == '\n' || t[len - 1] == '\t'))
					len--;
				break;
			case N_KEYWORDS:
				if (g == 0)
					groups[1] = k;
				continue;
			default:
				continue;
			}
			if (len == 0 || len >= EX_MAX_NAME)
				continue;
			m = cur_module(c);
			const char *field_name = gi_arena_strndup(&c->f->arena, t, len);
			gi_vec_push(&m->struct_fields, &field_name);
		}
	}
	walk(c, list, depth, 0);
}

/* ---- sites: facts for the contract and clone checks (docs/CHECKS.md) ---- */

/* Deepest level of a clause body that body_hash descends to. */
#define EX_HASH_MAX_DEPTH 256
/* Smallest clause body (named nodes) kept for the clone check: below it a
 * repeated body (`do: {:ok, x}`) is idiom, not duplication. */
#define EX_HASH_MIN_SIZE 8

/* The value of `@impl V`: "true", or the module V names. */
static const char *impl_value(struct ex_ctx *c, TSNode v, unsigned depth)
{
	if (ts_node_is_null(v) || kind_of(v) == N_BOOLEAN)
		return "true";
	const char *m = literal_module(c, v, depth, true);
	return m ? m : "true";
}

/* One `name: arity` or `{:name, arity}` of @optional_callbacks. */
static void optional_callback_add(struct ex_ctx *c, TSNode key, TSNode value, uint32_t line)
{
	size_t len;
	const char *t = text_of(c, key, &len);
	int arity = small_int(c, value);
	if (kind_of(key) == N_ATOM && len > 1 && t[0] == ':') {
		t++;
		len--;
	} else {
		while (len > 0 && (t[len - 1] == ' ' || t[len - 1] == ':' || t[len - 1] == '\n'))
			len--;
	}
	if (arity < 0 || len == 0 || len >= EX_MAX_NAME)
		return;
	facts_site_add(cur_module(c), FACTS_SITE_OPTIONAL_CALLBACK,
	               gi_arena_strndup(&c->f->arena, t, len), arity, line, NULL);
}

/* `@optional_callbacks foo: 1, bar: 2` or `@optional_callbacks [foo: 1]`. */
static void optional_callbacks_read(struct ex_ctx *c, TSNode v, uint32_t line)
{
	TSNode keywords = v;
	if (kind_of(v) == N_LIST) {
		uint32_t n = ts_node_named_child_count(v);
		for (uint32_t i = 0; i < n; i++) {
			TSNode k = ts_node_named_child(v, i);
			if (kind_of(k) == N_TUPLE && ts_node_named_child_count(k) == 2)
				optional_callback_add(c, ts_node_named_child(k, 0),
				                      ts_node_named_child(k, 1), line);
			else if (kind_of(k) == N_KEYWORDS)
				keywords = k;
		}
	}
	if (kind_of(keywords) != N_KEYWORDS)
		return;
	uint32_t np = ts_node_named_child_count(keywords);
	for (uint32_t j = 0; j < np; j++) {
		TSNode pair = ts_node_named_child(keywords, j);
		if (kind_of(pair) == N_PAIR)
			optional_callback_add(c, field(pair, tables.f_key),
			                      field(pair, tables.f_value), line);
	}
}

/* Adds a site in the current module, charged to the current function. */
static void site_here(struct ex_ctx *c, enum facts_site_kind kind, uint32_t line,
                      const char *detail)
{
	if (!c->mod || c->in_quote)
		return;
	struct facts_function *fn = cur_function(c);
	facts_site_add(cur_module(c), kind, fn ? fn->name : NULL, fn ? fn->arity : 0, line, detail);
}

/* `%S{...}` naming module `mod`: built, updated (`%S{s | ...}`) or matched. */
static void struct_site(struct ex_ctx *c, TSNode map, const char *mod)
{
	enum facts_site_kind kind =
	    c->in_pattern ? FACTS_SITE_STRUCT_MATCH : FACTS_SITE_STRUCT_BUILD;
	TSNode content = ts_node_named_child(map, 1);
	if (!c->in_pattern && !ts_node_is_null(content)) {
		TSNode first = ts_node_named_child(content, 0);
		if (kind_of(first) == N_BINARY && op_of(first) == OP_BAR)
			kind = FACTS_SITE_STRUCT_UPDATE;
	}
	site_here(c, kind, line_of(map), mod);
}

/* True when `n` is a literal a conversion to an atom cannot grow the atom
 * table with beyond what the source shows: a string or charlist without
 * interpolation, or an atom. */
static bool literal_text(struct ex_ctx *c, TSNode n)
{
	enum node_kind k = kind_of(n);
	if (k == N_ATOM)
		return true;
	if (k != N_STRING && strcmp(ts_node_type(n), "charlist") != 0)
		return false;
	(void)c;
	uint32_t count = ts_node_named_child_count(n);
	for (uint32_t i = 0; i < count; i++)
		if (kind_of(ts_node_named_child(n, i)) == N_INTERPOLATION)
			return false;
	return true;
}

/* String.to_atom/1, List.to_atom/1, :erlang.binary_to_atom/1,2 and
 * :erlang.list_to_atom/1 on an argument that is not a literal (or piped). */
static void to_atom_check(struct ex_ctx *c, const struct ex_call *call, const char *mod,
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
		args_read(c, call->args, depth, &a);
		if (a.count > 0 && literal_text(c, a.first[0]))
			return;
	}
	site_here(c, FACTS_SITE_TO_ATOM, line_of(call->node),
	          gi_arena_printf(&c->f->arena, "%s.%s/%d", mod, fun, arity));
}

/* `:"name_#{x}"`: an atom made from a value at run time, like
 * String.to_atom/1 (a site of the same kind). */
static void quoted_atom_check(struct ex_ctx *c, TSNode n)
{
	uint32_t count = ts_node_named_child_count(n);
	for (uint32_t i = 0; i < count; i++)
		if (kind_of(ts_node_named_child(n, i)) == N_INTERPOLATION) {
			site_here(c, FACTS_SITE_TO_ATOM, line_of(n), ":\"...#{}\"");
			return;
		}
}

/* `struct(S, fields)` / `struct!(S, fields)` with a literal S builds S. */
static void struct_call_check(struct ex_ctx *c, const struct ex_call *call, int arity, int pipe,
                              unsigned depth)
{
	if (pipe || (arity != 1 && arity != 2) ||
	    !(text_is(c, call->target, "struct") || text_is(c, call->target, "struct!")))
		return;
	struct ex_args a;
	args_read(c, call->args, depth, &a);
	const char *mod = a.count > 0 ? literal_module(c, a.first[0], depth, false) : NULL;
	if (mod)
		site_here(c, FACTS_SITE_STRUCT_BUILD, line_of(call->node), mod);
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
static void body_hash(struct ex_ctx *c, TSNode body, uint32_t line)
{
	if (!c->hash_bodies || ts_node_is_null(body) || !c->mod || c->in_quote || c->function < 0 ||
	    c->unquote_name)
		return;
	uint64_t h1 = mix64(GI_HASH_SEED, ts_node_symbol(body)), h2 = h1;
	uint32_t size = ts_node_is_named(body) ? 1 : 0;
	if (ts_node_child_count(body) == 0) {
		size_t len;
		const char *t = text_of(c, body, &len);
		h1 = mix64(h1, gi_hash64(t, len, GI_HASH_SEED));
	}
	enum node_kind parents[EX_HASH_MAX_DEPTH + 1];
	unsigned index[EX_HASH_MAX_DEPTH + 1];
	unsigned level = 0;
	parents[0] = kind_of(body);
	TSTreeCursor cur = ts_tree_cursor_new(body);
	bool more = ts_tree_cursor_goto_first_child(&cur);
	if (more) {
		level = 1;
		index[1] = 0;
	}
	while (more) {
		TSNode n = ts_tree_cursor_current_node(&cur);
		enum node_kind k = kind_of(n);
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
				const char *t = text_of(c, n, &len);
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
	struct facts_function *fn = cur_function(c);
	struct facts_site *site =
	    facts_site_add(cur_module(c), FACTS_SITE_BODY, fn->name, fn->arity, line, NULL);
	site->hash = h1;
	site->hash2 = h2;
	site->size = size;
}

/* ---- attributes -------------------------------------------------------- */

/* Name and arity of a @spec/@callback head: `name(args) :: t when ...`. */
static bool spec_head(struct ex_ctx *c, TSNode n, unsigned depth, const char **name, int *arity)
{
	if (kind_of(n) == N_BINARY && op_of(n) == OP_WHEN)
		n = field(n, tables.f_left);
	if (kind_of(n) == N_BINARY && op_of(n) == OP_TYPE)
		n = field(n, tables.f_left);
	TSNode id = n;
	int count = 0;
	if (kind_of(n) == N_CALL) {
		struct ex_call call;
		struct ex_args a;
		call_read(c, n, depth, &call);
		args_read(c, call.args, depth, &a);
		id = call.target;
		count = (int)a.count;
	}
	if (kind_of(id) != N_IDENTIFIER)
		return false;
	size_t len;
	const char *t = text_of(c, id, &len);
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
	if (kind_of(v) == N_LIST) {
		uint32_t k = ts_node_named_child_count(v);
		for (uint32_t i = 0; i < k && n < 8; i++)
			items[n++] = ts_node_named_child(v, i);
	} else {
		items[n++] = v;
	}
	for (uint32_t i = 0; i < n && st->derive_count < 8; i++) {
		TSNode p = items[i];
		if (kind_of(p) == N_TUPLE && ts_node_named_child_count(p) >= 1)
			p = ts_node_named_child(p, 0);
		const char *protocol = literal_module(c, p, depth, false);
		if (protocol && protocol[0] != ':') {
			st->derives[st->derive_count++] = protocol;
			st->derive_line = line;
		}
	}
}

NOINLINE static void do_attribute(struct ex_ctx *c, TSNode n, unsigned depth)
{
	TSNode operand = operand_of(c, n, depth);
	if (kind_of(operand) != N_CALL)
		return;
	struct ex_call call;
	call_read(c, operand, depth, &call);
	bool before = text_is(c, call.target, "before_compile");
	if (c->mod && kind_of(call.target) == N_IDENTIFIER &&
	    (before || text_is(c, call.target, "after_compile"))) {
		/* The compiler calls M.__before_compile__/1 (__after_compile__/2)
		 * for the module: a call from its body, or injected by a quote. */
		struct ex_args a;
		args_read(c, call.args, depth, &a);
		if (a.count == 0)
			return;
		const char *what = before ? "before_compile" : "after_compile";
		if (c->in_quote) {
			inject_add(c, what, a.first[0], depth, line_of(n));
		} else if (c->function < 0) {
			const char *m = module_of(c, a.first[0], depth);
			if (m)
				remote_call(c, m,
				            before ? "__before_compile__" : "__after_compile__",
				            before ? 1 : 2, line_of(n));
		}
		return;
	}
	if (c->mod && c->in_quote && kind_of(call.target) == N_IDENTIFIER &&
	    text_is(c, call.target, "behaviour")) {
		/* @behaviour M in a quote: declared by the module that uses it */
		struct ex_args a;
		args_read(c, call.args, depth, &a);
		if (a.count > 0)
			inject_add(c, "behaviour", a.first[0], depth, line_of(n));
		return;
	}
	if (kind_of(call.target) != N_IDENTIFIER || !c->mod || c->function >= 0 || c->in_quote) {
		walk_children(c, call.args, depth);
		return;
	}
	struct ex_args a;
	args_read(c, call.args, depth, &a);
	struct ex_module_state *st = c->mod;
	TSNode v = a.count > 0 ? a.first[0] : (TSNode){0};
	bool is_false = a.count > 0 && kind_of(v) == N_BOOLEAN && text_is(c, v, "false");
	const char *name;
	int arity;
	if (text_is(c, call.target, "doc")) {
		st->pending_doc = true;
		st->pending_doc_false = is_false;
		if (kind_of(v) == N_STRING)
			walk(c, v, depth, 0); /* interpolations run at compile time */
	} else if (text_is(c, call.target, "deprecated")) {
		st->pending_deprecated = true;
	} else if (text_is(c, call.target, "moduledoc")) {
		struct facts_module *m = cur_module(c);
		m->has_moduledoc = true;
		m->moduledoc_false = is_false;
		if (kind_of(v) == N_STRING)
			walk(c, v, depth, 0); /* interpolations run at compile time */
	} else if (text_is(c, call.target, "impl")) {
		st->pending_impl = !is_false;
		st->pending_impl_value = is_false ? NULL : impl_value(c, v, depth);
	} else if (text_is(c, call.target, "spec")) {
		if (a.count > 0 && spec_head(c, v, depth, &name, &arity)) {
			struct ex_spec s = {name, arity, line_of(n)};
			gi_vec_push(&st->specs, &s);
		}
	} else if (text_is(c, call.target, "callback") ||
	           text_is(c, call.target, "macrocallback")) {
		if (a.count > 0 && spec_head(c, v, depth, &name, &arity)) {
			const char *cb = gi_arena_printf(&c->f->arena, "%s/%d", name, arity);
			gi_vec_push(&cur_module(c)->callbacks, &cb);
		}
	} else if (text_is(c, call.target, "behaviour")) {
		if (a.count > 0)
			ref_add(c, FACTS_REF_BEHAVIOUR, module_of(c, v, depth), line_of(n));
	} else if (text_is(c, call.target, "derive")) {
		derive_read(c, v, depth, line_of(n));
		walk_children(c, call.args, depth);
	} else if (text_is(c, call.target, "type") || text_is(c, call.target, "typep") ||
	           text_is(c, call.target, "opaque")) {
		/* Types are not code. */
	} else if (text_is(c, call.target, "optional_callbacks")) {
		if (a.count > 0)
			optional_callbacks_read(c, v, line_of(n));
		/* Types are not code. */
	} else {
		if (a.count == 1 && kind_of(v) == N_LIST && st->atom_list_count < 16) {
			size_t len;
			const char *t = text_of(c, call.target, &len);
			st->atom_lists[st->atom_list_count].name =
			    gi_arena_strndup(&c->f->arena, t, len);
			st->atom_lists[st->atom_list_count++].list = v;
		}
		walk_children(c, call.args, depth);
	}
}

/* ---- functions --------------------------------------------------------- */

static long function_find_or_add(struct ex_ctx *c, const char *name, size_t name_len, int arity,
                                 bool *created)
{
	char key[EX_MAX_NAME + 16];
	key_make(key, sizeof(key), "", name, name_len, '/', arity);
	void *idx = gi_map_get(&c->mod->functions, key);
	*created = idx == NULL;
	if (idx)
		return (long)((size_t)idx - 1);
	struct facts_module *m = cur_module(c);
	struct facts_function *fn = gi_vec_push_zero(&m->functions);
	fn->name = gi_arena_strndup(&c->f->arena, name, name_len);
	fn->arity = arity;
	gi_vec_init(&fn->calls, sizeof(struct facts_call));
	gi_map_put(&c->mod->functions, key, (void *)(m->functions.len));
	return (long)m->functions.len - 1;
}

struct ex_head {
	const char *name;
	size_t name_len;
	TSNode args; /* arguments node, or null */
	TSNode left; /* operator definitions: the two operands */
	TSNode right;
	TSNode guard; /* `when` right side, or null */
	int arity;
	int defaults;
};

/* True when `args` is the single argument of an `unquote` that names the
 * variable of the module-level `for` being expanded (c->unquote_name set). */
static bool unquote_for_var(struct ex_ctx *c, TSNode args, unsigned depth)
{
	if (!c->unquote_name)
		return false;
	struct ex_args a;
	args_read(c, args, depth, &a);
	size_t len;
	const char *t = text_of(c, a.first[0], &len);
	return a.count == 1 && kind_of(a.first[0]) == N_IDENTIFIER && len == c->for_var_len &&
	       memcmp(t, c->for_var, len) == 0;
}

static bool head_read(struct ex_ctx *c, TSNode head, unsigned depth, struct ex_head *h)
{
	memset(h, 0, sizeof(*h));
	if (kind_of(head) == N_BINARY && op_of(head) == OP_WHEN) {
		h->guard = field(head, tables.f_right);
		head = field(head, tables.f_left);
	}
	size_t len;
	switch (kind_of(head)) {
	case N_IDENTIFIER:
		h->name = text_of(c, head, &h->name_len);
		return h->name_len > 0 && h->name_len < EX_MAX_NAME;
	case N_CALL: {
		struct ex_call call;
		call_read(c, head, depth, &call);
		if (kind_of(call.target) == N_IDENTIFIER && text_is(c, call.target, "unquote") &&
		    unquote_for_var(c, call.args, depth)) {
			/* def unquote(name), name bound by a module-level for */
			h->name = c->unquote_name;
			h->name_len = strlen(c->unquote_name);
			return true;
		}
		if (kind_of(call.target) == N_IDENTIFIER) {
			h->name = text_of(c, call.target, &h->name_len);
		} else if (kind_of(call.target) == N_CALL) {
			/* def unquote(:name)(args), def unquote(name)(args) in a for */
			struct ex_call inner;
			struct ex_args ia;
			call_read(c, call.target, depth, &inner);
			if (!text_is(c, inner.target, "unquote"))
				return false;
			args_read(c, inner.args, depth, &ia);
			if (unquote_for_var(c, inner.args, depth)) {
				h->name = c->unquote_name;
				h->name_len = strlen(c->unquote_name);
			} else if (ia.count == 1 && kind_of(ia.first[0]) == N_ATOM) {
				h->name = text_of(c, ia.first[0], &len) + 1;
				h->name_len = len - 1;
			} else if (ia.count == 1 && kind_of(ia.first[0]) == N_QUOTED_ATOM &&
			           ts_node_named_child_count(ia.first[0]) == 1 &&
			           kind_of(ts_node_named_child(ia.first[0], 0)) ==
			               N_QUOTED_CONTENT) {
				/* def unquote(:"~~~")(expr) */
				h->name =
				    text_of(c, ts_node_named_child(ia.first[0], 0), &h->name_len);
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
		TSTreeCursor *cur = cursor_at(c, depth, call.args);
		for (bool ok = ts_tree_cursor_goto_first_child(cur); ok;
		     ok = ts_tree_cursor_goto_next_sibling(cur)) {
			TSNode k = ts_tree_cursor_current_node(cur);
			if (!ts_node_is_named(k) || kind_of(k) == N_COMMENT)
				continue;
			h->arity++;
			if (kind_of(k) == N_BINARY && op_of(k) == OP_DEFAULT)
				h->defaults++;
		}
		return true;
	}
	case N_BINARY: {
		/* def left <~> right; defmacro first..last//step is ..///3 */
		TSNode op = field(head, tables.f_operator);
		h->name = text_of(c, op, &h->name_len);
		h->left = field(head, tables.f_left);
		h->right = field(head, tables.f_right);
		h->arity = 2;
		if (GI_MEM_IS(h->name, h->name_len, "//") && kind_of(h->left) == N_BINARY) {
			size_t inner_len;
			const char *inner =
			    text_of(c, field(h->left, tables.f_operator), &inner_len);
			if (GI_MEM_IS(inner, inner_len, "..")) {
				h->name = "..//";
				h->name_len = 4;
				h->arity = 3;
			}
		}
		return h->name_len > 0 && h->name_len < 8 && op_of(head) != OP_DEFAULT;
	}
	case N_BLOCK: {
		/* defmacro (..): a nullary operator */
		TSNode op = ts_node_named_child(head, 0);
		if (ts_node_named_child_count(head) != 1 || kind_of(op) != N_OPERATOR_IDENTIFIER)
			return false;
		h->name = text_of(c, op, &h->name_len);
		return h->name_len > 0 && h->name_len < 8;
	}
	case N_UNARY: {
		/* def -value, def not value, defmacro @expr */
		TSNode op = field(head, tables.f_operator);
		h->name = text_of(c, op, &h->name_len);
		h->left = field(head, tables.f_operand);
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

static void function_touch(struct facts_function *fn, enum facts_function_kind kind, bool public,
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
static void clause_walk(struct ex_ctx *c, long fi, const struct ex_head *h, TSNode body,
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
		walk_children(c, h->args, depth);
	if (!ts_node_is_null(h->left))
		walk(c, h->left, depth, 0);
	if (!ts_node_is_null(h->right))
		walk(c, h->right, depth, 0);
	c->in_pattern = saved_pattern;
	if (has_body)
		body_hash(c, body, line_of(ts_node_is_null(h->args) ? body : h->args));
	if (!ts_node_is_null(h->guard)) {
		bool saved_guard = c->in_guard;
		c->in_guard = true;
		walk(c, h->guard, depth, 0);
		c->in_guard = saved_guard;
	}
	if (!ts_node_is_null(body)) {
		if (body_is_block)
			walk_children(c, body, depth);
		else
			walk(c, body, depth, 0);
	}
	if (has_body) {
		struct facts_function *fn = cur_function(c);
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
	saved_take(c, sv);
	c->function = fi;
	c->metrics = m;
}

/* Closes a clause opened by clause_open that spans lines start..end. */
static void clause_close(struct ex_ctx *c, const struct ex_saved *sv, const struct ex_metrics *m,
                         uint32_t start, uint32_t end)
{
	struct facts_function *fn = cur_function(c);
	fn->cyclomatic += m->cyclomatic;
	fn->cognitive += m->cognitive;
	if (m->max_depth > fn->max_nesting)
		fn->max_nesting = m->max_depth;
	if (end > fn->line_end)
		fn->line_end = end;
	fn->clauses++;
	fn->lines += end >= start ? end - start + 1 : 1;
	saved_restore(c, sv);
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
	long fi = function_find_or_add(c, h->name, h->name_len, h->arity, &created);
	struct facts_function *fn = gi_vec_get(&cur_module(c)->functions, (size_t)fi);
	function_touch(fn, kind, public, start, end);
	if (c->mod->pending_doc) {
		fn->has_doc = true;
		fn->doc_false = c->mod->pending_doc_false;
	}
	if (c->mod->pending_impl) {
		fn->has_impl = true;
		/* size: how many default arguments the head has; the compiler
		 * accepts @impl when any arity they generate is a callback. */
		struct facts_site *s = facts_site_add(
		    cur_module(c), FACTS_SITE_IMPL, fn->name, fn->arity, start,
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
		long gi = function_find_or_add(c, h->name, h->name_len, arity, &created);
		struct facts_function *g = gi_vec_get(&cur_module(c)->functions, (size_t)gi);
		function_touch(g, kind, public, start, end);
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
	if (kind_of(name) != N_IDENTIFIER || ts_node_is_null(c->macro->args))
		return -1;
	size_t len;
	const char *want = text_of(c, name, &len);
	int i = 0;
	TSTreeCursor *cur = cursor_at(c, depth, c->macro->args);
	for (bool ok = ts_tree_cursor_goto_first_child(cur); ok;
	     ok = ts_tree_cursor_goto_next_sibling(cur)) {
		TSNode k = ts_tree_cursor_current_node(cur);
		if (!ts_node_is_named(k) || kind_of(k) == N_COMMENT)
			continue;
		if (kind_of(k) == N_BINARY && op_of(k) == OP_DEFAULT)
			k = field(k, tables.f_left);
		size_t klen;
		const char *t = text_of(c, k, &klen);
		if (kind_of(k) == N_IDENTIFIER && klen == len && memcmp(t, want, len) == 0)
			return i;
		i++;
	}
	return -1;
}

/* In a quote of the macro being walked: `def unquote(param)(args)` makes
 * the macro a template (struct ex_template). */
static void template_record(struct ex_ctx *c, TSNode head, enum ex_word w, unsigned depth)
{
	if (kind_of(head) == N_BINARY && op_of(head) == OP_WHEN)
		head = field(head, tables.f_left);
	if (kind_of(head) != N_CALL || !c->mod)
		return;
	struct ex_call call, inner;
	struct ex_args a, ia;
	call_read(c, head, depth, &call);
	if (kind_of(call.target) != N_CALL)
		return;
	call_read(c, call.target, depth, &inner);
	args_read(c, inner.args, depth, &ia);
	if (!text_is(c, inner.target, "unquote") || ia.count != 1)
		return;
	int param = macro_param(c, ia.first[0], depth);
	if (param < 0 || param >= 4 || c->templates.len >= 256)
		return;
	args_read(c, call.args, depth, &a);
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
	const char *atom = literal_function(c, arg);
	if (atom) {
		out[0] = atom;
		return 1;
	}
	size_t len;
	const char *t = text_of(c, arg, &len);
	if (c->for_count == 0)
		return 0;
	if (kind_of(arg) == N_IDENTIFIER && len == c->for_var_len &&
	    memcmp(t, c->for_var, len) == 0) {
		int n = 0;
		for (int i = 0; i < c->for_count && n < max; i++)
			if (c->for_values[i][0] < '0' || c->for_values[i][0] > '9')
				out[n++] = c->for_values[i];
		return n;
	}
	if (kind_of(arg) != N_QUOTED_ATOM)
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
			if (kind_of(part) == N_QUOTED_CONTENT) {
				pt = text_of(c, part, &plen);
			} else if (kind_of(part) == N_INTERPOLATION &&
			           ts_node_named_child_count(part) == 1 &&
			           kind_of(ts_node_named_child(part, 0)) == N_IDENTIFIER &&
			           text_of(c, ts_node_named_child(part, 0), &plen) &&
			           plen == c->for_var_len &&
			           memcmp(text_of(c, ts_node_named_child(part, 0), &plen),
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
static void template_expand(struct ex_ctx *c, const struct ex_call *call, unsigned depth)
{
	if (c->templates.len == 0 || !c->mod || c->function >= 0 || c->in_quote)
		return;
	struct ex_args a;
	args_read(c, call->args, depth, &a);
	for (size_t i = 0; i < c->templates.len; i++) {
		const struct ex_template *t = gi_vec_get(&c->templates, i);
		if ((int)a.count < t->min_arity || (int)a.count > t->max_arity ||
		    (int)a.count <= t->param || !text_is(c, call->target, t->macro))
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
			generated_add_kind(
			    c, gi_arena_printf(&c->f->arena, "%s/%d", names[k], t->def_arity),
			    t->by, line_of(call->node), kind, t->is_public);
	}
}

/* A definition; inside a module-level `for var <- [:a, :b]` whose head is
 * `unquote(var)`, one definition per value. */
NOINLINE static void do_def(struct ex_ctx *c, const struct ex_call *call, unsigned depth,
                            enum ex_word w)
{
	struct ex_head h;
	struct ex_args a;
	if (c->for_count > 0 && !c->in_quote && c->function < 0 && !c->unquote_name) {
		static const char probe[] = "unquote";
		args_read(c, call->args, depth, &a);
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
	args_read(c, call->args, depth, &a);
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
				call_add(c, macro ? FACTS_CALL_INJECT_MACRO : FACTS_CALL_INJECT_DEF,
				         NULL, name, arity, line_of(call->node));
		}
		if (c->function >= 0 && !c->in_quote) {
			int arity = (int)a.count + (ts_node_is_null(call->do_block) ? 0 : 1);
			local_call(c, call->target, arity);
		}
		c->quote_def += c->in_quote;
		if (!ts_node_is_null(call->args))
			walk_children(c, call->args, depth);
		if (!ts_node_is_null(call->do_block))
			walk_children(c, call->do_block, depth);
		c->quote_def -= c->in_quote;
		return;
	}
	TSNode body = call->do_block;
	bool body_is_block = !ts_node_is_null(body);
	TSNode opts = a.count >= 2 && kind_of(a.last) == N_KEYWORDS ? a.last : (TSNode){0};
	if (!body_is_block && !ts_node_is_null(opts))
		body = keyword_value(c, opts, depth, "do");
	bool has_body = !ts_node_is_null(body) || w == EX_W_DEFDELEGATE ||
	                ((w == EX_W_DEFGUARD || w == EX_W_DEFGUARDP) && !ts_node_is_null(h.guard));
	uint32_t start = line_of(call->node);
	long fi = function_register(c, w, &h, has_body, start, end_line_of(call->node));
	if (w == EX_W_DEFGUARD || w == EX_W_DEFGUARDP) {
		/* The guard expression is the definition's body. */
		body = h.guard;
		body_is_block = false;
		h.guard = (TSNode){0};
	}
	if (w == EX_W_DEFDELEGATE && !ts_node_is_null(opts)) {
		struct facts_function *fn = gi_vec_get(&cur_module(c)->functions, (size_t)fi);
		const char *to = module_of(c, keyword_value(c, opts, depth, "to"), depth);
		TSNode as = keyword_value(c, opts, depth, "as");
		const char *target = fn->name;
		size_t len;
		if (kind_of(as) == N_ATOM && text_of(c, as, &len)[0] == ':' && len > 1 &&
		    len < EX_MAX_NAME)
			target = gi_arena_strndup(&c->f->arena, text_of(c, as, &len) + 1, len - 1);
		fn->delegate_to = to;
		if (to) {
			long saved = c->function;
			c->function = fi;
			remote_call(c, to, target, h.arity, start);
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
	clause_walk(c, fi, &h, body, body_is_block, has_body, depth);
	c->in_guard = saved_guard;
	c->macro = saved_macro;
}

/* Walks a syntax error node. tree-sitter flattens the definitions it could
 * not finish into sibling sequences `defmodule` (arguments Name) ... and
 * `def` (arguments head) ...: such a sequence opens a module, or a function
 * clause, that lasts until the next one or the end of the node. */
static void walk_error(struct ex_ctx *c, TSNode n, unsigned depth)
{
	struct ex_module_state st;
	struct ex_saved module_saved, clause_saved;
	struct ex_metrics metrics;
	bool module_open = false;
	long fi = -1; /* open clause */
	uint32_t clause_start = 0, last_end = 0;
	enum ex_word pending = EX_W_NONE;
	uint32_t pending_line = 0;
	TSTreeCursor *cur = cursor_at(c, depth, n);
	for (bool ok = ts_tree_cursor_goto_first_child(cur); ok;
	     ok = ts_tree_cursor_goto_next_sibling(cur)) {
		TSNode k = ts_tree_cursor_current_node(cur);
		if (!ts_node_is_named(k))
			continue;
		enum node_kind kk = kind_of(k);
		if (kk == N_IDENTIFIER && !c->in_quote) {
			size_t len;
			const char *t = text_of(c, k, &len);
			enum ex_word w = ex_word_lookup(t, len);
			if (w == EX_W_DEFMODULE || w == EX_W_DEFPROTOCOL ||
			    (w >= EX_W_DEF && w <= EX_W_DEFGUARDP)) {
				pending = w;
				pending_line = line_of(k);
				continue;
			}
		}
		enum ex_word w = pending;
		pending = EX_W_NONE;
		if (w != EX_W_NONE && kk == N_ARGUMENTS) {
			struct ex_args a;
			struct ex_head h;
			args_read(c, k, depth + 1, &a);
			if ((w == EX_W_DEFMODULE || w == EX_W_DEFPROTOCOL) && a.count >= 1) {
				const char *name = module_name(c, a.first[0], depth + 1);
				if (!name)
					continue;
				if (fi >= 0)
					clause_close(c, &clause_saved, &metrics, clause_start,
					             last_end);
				fi = -1;
				if (module_open)
					module_leave(c, &st, &module_saved);
				size_t index = c->f->modules.len;
				struct facts_module *m = facts_module_add(c->f, name);
				m->kind = w == EX_W_DEFPROTOCOL ? FACTS_PROTOCOL : FACTS_MODULE;
				m->line_start = pending_line;
				m->line_end = end_line_of(n);
				module_enter(c, index, &st, &module_saved);
				module_open = true;
				continue;
			}
			if (w != EX_W_DEFMODULE && w != EX_W_DEFPROTOCOL && c->mod &&
			    a.count >= 1 && head_read(c, a.first[0], depth + 1, &h)) {
				if (fi >= 0)
					clause_close(c, &clause_saved, &metrics, clause_start,
					             last_end);
				fi = function_register(c, w, &h, false, pending_line,
				                       end_line_of(k));
				clause_start = pending_line;
				last_end = end_line_of(k);
				clause_open(c, fi, &clause_saved, &metrics);
				if (!ts_node_is_null(h.args))
					walk_children(c, h.args, depth + 1);
				if (!ts_node_is_null(h.guard))
					walk(c, h.guard, depth + 1, 0);
				if (a.count >= 2)
					walk(c, keyword_value(c, a.last, depth + 1, "do"),
					     depth + 1, 0);
				continue;
			}
		}
		walk(c, k, depth, 0);
		last_end = end_line_of(k);
	}
	if (fi >= 0)
		clause_close(c, &clause_saved, &metrics, clause_start, last_end);
	if (module_open)
		module_leave(c, &st, &module_saved);
}

/* ---- control flow and operators ---------------------------------------- */

static int count_clauses(struct ex_ctx *c, TSNode block, unsigned depth)
{
	if (ts_node_is_null(block))
		return 0;
	if (kind_of(block) == N_STAB)
		return 1;
	int n = 0;
	TSTreeCursor *cur = cursor_at(c, depth, block);
	for (bool ok = ts_tree_cursor_goto_first_child(cur); ok;
	     ok = ts_tree_cursor_goto_next_sibling(cur))
		if (kind_of(ts_tree_cursor_current_node(cur)) == N_STAB)
			n++;
	return n;
}

static bool is_block_keyword(const struct ex_ctx *c, TSNode key)
{
	size_t len;
	const char *t = text_of(c, key, &len);
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
		walk_children(c, n, depth);
	else
		walk(c, n, depth, 0);
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
		if (kind_of(e) == N_COMMENT)
			continue;
		const char *name = literal_function(c, e);
		if (!name && small_int(c, e) >= 0)
			name = gi_arena_printf(&c->f->arena, "%d", small_int(c, e));
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
		body = keyword_value(c, a->last, depth, "do");
	if (ts_node_is_null(body) || a->count != (ts_node_is_null(call->do_block) ? 2u : 1u) ||
	    kind_of(gen) != N_BINARY || !text_is(c, field(gen, tables.f_operator), "<-"))
		return false;
	TSNode var = field(gen, tables.f_left), list = field(gen, tables.f_right);
	if (kind_of(var) != N_IDENTIFIER)
		return false;
	if (kind_of(list) == N_UNARY && op_of(list) == OP_ATTRIBUTE) {
		TSNode name = operand_of(c, list, depth);
		TSNode found = {0};
		for (int i = 0; i < c->mod->atom_list_count; i++)
			if (kind_of(name) == N_IDENTIFIER &&
			    text_is(c, name, c->mod->atom_lists[i].name))
				found = c->mod->atom_lists[i].list;
		list = found;
	}
	if (kind_of(list) != N_LIST)
		return false;
	const char *values[256];
	int count = atom_list_read(c, list, values, 256);
	if (count <= 0)
		return false;
	const char *saved_var = c->for_var, **saved_values = c->for_values;
	size_t saved_len = c->for_var_len;
	int saved_count = c->for_count;
	c->for_var = text_of(c, var, &c->for_var_len);
	c->for_values = values;
	c->for_count = count;
	if (!ts_node_is_null(call->do_block))
		walk_children(c, body, depth);
	else
		walk(c, body, depth, 0);
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
		body = keyword_value(c, a->last, depth, "do");
	size_t len;
	const char *t = text_of(c, body, &len);
	static const char *const defs[] = {"def unquote(", "defmacro unquote(",
	                                   "defdelegate unquote(", "defguard unquote("};
	bool found = false;
	for (size_t i = 0; !found && i < sizeof(defs) / sizeof(defs[0]); i++)
		found = len && memmem(t, len, defs[i], strlen(defs[i])) != NULL;
	if (!found)
		return;
	size_t glen;
	const char *g = text_of(c, a->first[0], &glen);
	const char *by = gi_arena_printf(&c->f->arena, "for %.*s%s", (int)(glen > 60 ? 60 : glen),
	                                 g, glen > 60 ? "..." : "");
	char key[64];
	snprintf(key, sizeof(key), "%s/0", FACTS_UNKNOWN_NAMES);
	generated_add_kind(c, key, by, line_of(call->node), FACTS_DEF, false);
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
		if (kind_of(stab) != N_STAB) {
			walk(c, stab, depth, 0);
			continue;
		}
		TSNode left = field(stab, tables.f_left), right = field(stab, tables.f_right);
		TSNode saved_test = c->test;
		if (!ts_node_is_null(left) && ts_node_named_child_count(left) == 1)
			c->test = ts_node_named_child(left, 0);
		walk(c, left, depth, 0);
		c->test = saved_test;
		walk(c, right, depth, 0);
	}
	if (c->metrics) {
		c->metrics->nesting--;
		c->metrics->depth--;
	}
	c->aliases.len = saved;
}

NOINLINE static void do_control(struct ex_ctx *c, const struct ex_call *call, unsigned depth,
                                enum ex_word w)
{
	struct ex_args a;
	args_read(c, call->args, depth, &a);
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
				block = keyword_value(c, a.last, depth, "do");
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
		TSTreeCursor *cur = cursor_at(c, depth, call->args);
		for (bool ok = ts_tree_cursor_goto_first_child(cur); ok;
		     ok = ts_tree_cursor_goto_next_sibling(cur)) {
			TSNode k = ts_tree_cursor_current_node(cur);
			if (!ts_node_is_named(k))
				continue;
			if (kind_of(k) != N_KEYWORDS) {
				bool test = w == EX_W_IF || w == EX_W_UNLESS ||
				            (w == EX_W_FOR &&
				             !(kind_of(k) == N_BINARY && op_of(k) == OP_GENERATOR));
				TSNode saved_test = c->test;
				if (test)
					c->test = k;
				walk(c, k, depth + 1, 0);
				c->test = saved_test;
				continue;
			}
			uint32_t np = ts_node_named_child_count(k);
			for (uint32_t i = 0; i < np; i++) {
				TSNode pair = ts_node_named_child(k, i);
				if (kind_of(pair) != N_PAIR)
					continue;
				TSNode v = field(pair, tables.f_value);
				if (is_block_keyword(c, field(pair, tables.f_key)))
					nested_walk(c, v, depth + 1, false);
				else
					walk(c, v, depth + 1, 0);
			}
		}
	}
	if (w == EX_W_COND && !ts_node_is_null(call->do_block))
		cond_walk(c, call->do_block, depth);
	else if (!ts_node_is_null(call->do_block))
		nested_walk(c, call->do_block, depth, true);
}

NOINLINE static void do_capture(struct ex_ctx *c, TSNode n, unsigned depth)
{
	TSNode operand = operand_of(c, n, depth);
	if (kind_of(operand) == N_BINARY && op_of(operand) == OP_SLASH) {
		TSNode left = field(operand, tables.f_left);
		int arity = small_int(c, field(operand, tables.f_right));
		if (arity >= 0 && kind_of(left) == N_CALL) {
			struct ex_call call;
			call_read(c, left, depth, &call);
			if (kind_of(call.target) == N_DOT && ts_node_is_null(call.args)) {
				const char *mod =
				    module_of(c, field(call.target, tables.f_left), depth);
				const char *fun =
				    dot_function(c, field(call.target, tables.f_right));
				if (mod && fun) {
					ref_add(c, FACTS_REF_CAPTURE, mod, line_of(n));
					call_add(c, FACTS_CALL_CAPTURE, mod, fun, arity,
					         line_of(n));
					return;
				}
			}
		} else if (arity >= 0 && kind_of(left) == N_IDENTIFIER) {
			local_call_kind(c, left, arity, FACTS_CALL_CAPTURE, line_of(n));
			return;
		}
	}
	walk(c, operand, depth, 0);
}

/* True when `n` is a literal the compiler folds: a number, an atom, a
 * string without interpolation, a boolean or nil. */
static bool plain_literal(struct ex_ctx *c, TSNode n)
{
	enum node_kind k = kind_of(n);
	if (k == N_INTEGER || k == N_ATOM || k == N_BOOLEAN)
		return true;
	size_t len;
	const char *t = text_of(c, n, &len);
	if (k == N_STRING)
		return !ts_node_named_child_count(n) ||
		       kind_of(ts_node_named_child(n, 0)) == N_QUOTED_CONTENT;
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
NOINLINE static void compiler_operator(struct ex_ctx *c, TSNode n, enum op_kind op, TSNode right,
                                       int arity)
{
	if (!c->mod || c->in_quote || c->in_guard)
		return;
	uint32_t line = line_of(n);
	size_t oplen = 0;
	const char *optext =
	    op == OP_INLINE ? text_of(c, ts_node_child_by_field_id(n, tables.f_operator), &oplen)
	                    : "";
	if (arity == 2 && GI_MEM_IS(optext, oplen, "=~")) {
		/* a function of Kernel, not inlined: a call even as a condition */
		remote_call(c, "Kernel", "=~", 2, line);
		return;
	}
	bool test = !ts_node_is_null(c->test) && ts_node_eq(c->test, n);
	if (test && op != OP_IN && op != OP_NOT_IN)
		return; /* a comparison or `not` as a condition: a test */
	if (op == OP_IN || op == OP_NOT_IN) {
		enum node_kind k = kind_of(right);
		if (k == N_LIST) {
			uint32_t count = ts_node_named_child_count(right);
			bool small = count <= 32;
			for (uint32_t i = 0; small && i < count; i++)
				small = plain_literal(c, ts_node_named_child(right, i));
			compiler_call(c, ":erlang", "=:=", 2, line);
			if (!small)
				compiler_call(c, ":lists", "member", 2, line);
		} else if (k == N_BINARY || (k == N_UNARY && op_of(right) == OP_ATTRIBUTE)) {
			/* a range (comparisons) or an attribute's literal list */
			compiler_call(c, ":erlang", "=<", 2, line);
		} else {
			compiler_call(c, "Enum", "member?", 2, line);
		}
		return;
	}
	if (arity == 1 && plain_literal(c, right))
		return;

	if (arity == 2 && (float_literal(c, right) || float_literal(c, field(n, tables.f_left))))
		return; /* arithmetic on a float literal: float instructions */
	compiler_rewrite(c, "Kernel", optext, oplen, arity, line);
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
		if (kind_of(g) == N_BINARY && op_of(g) == OP_GENERATOR)
			enumerable = true;
	}
	TSNode uniq = keyword_value(c, a->last, depth, "uniq");
	if (!enumerable && ts_node_is_null(uniq))
		return;
	uint32_t line = line_of(call->node);
	compiler_call(c, "Enum", "reduce", 3, line);
	if (!ts_node_is_null(keyword_value(c, a->last, depth, "reduce")))
		return;
	TSNode into = keyword_value(c, a->last, depth, "into");
	enum node_kind ik = kind_of(into);
	if (ts_node_is_null(into) && !result_used(call->node))
		return; /* a `for` for its effects only: the reduce alone */
	if (ts_node_is_null(into) || (ik == N_LIST && ts_node_named_child_count(into) == 0)) {
		compiler_call(c, ":lists", "reverse", 1, line);
	} else if (ik == N_MAP && ts_node_named_child_count(into) == 0) {
		compiler_call(c, ":lists", "reverse", 1, line);
		compiler_call(c, ":maps", "from_list", 1, line);
	} else if (ik == N_STRING && ts_node_named_child_count(into) == 0) {
		compiler_call(c, ":erlang", "list_to_bitstring", 1, line);
	} else {
		compiler_call(c, "Collectable", "into", 1, line);
	}
}

static void walk_binary(struct ex_ctx *c, TSNode n, unsigned depth)
{
	enum op_kind op = op_of(n);
	TSNode left = field(n, tables.f_left), right = field(n, tables.f_right);
	switch (op) {
	case OP_PIPE:
		walk(c, left, depth, 0);
		if (kind_of(right) == N_IDENTIFIER)
			local_call(c, right, 1);
		else
			walk(c, right, depth, 1);
		return;
	case OP_MATCH:
	case OP_GENERATOR: {
		bool saved = c->in_pattern;
		c->in_pattern = true;
		walk(c, left, depth, 0);
		c->in_pattern = saved;
		walk(c, right, depth, 0);
		return;
	}
	case OP_DEFAULT: {
		/* `arg \\ default` in a head: the default is a value, not a pattern */
		walk(c, left, depth, 0);
		bool saved = c->in_pattern;
		c->in_pattern = false;
		walk(c, right, depth, 0);
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
			walk(c, left, depth, 0);
			c->test = right;
			walk(c, right, depth, 0);
			c->test = saved;
			return;
		}
		break;
	case OP_WHEN: {
		/* a case/fn/receive clause's guard */
		walk(c, left, depth, 0);
		bool saved = c->in_guard;
		c->in_guard = true;
		walk(c, right, depth, 0);
		c->in_guard = saved;
		return;
	}
	case OP_INLINE:
	case OP_IN:
	case OP_NOT_IN:
		walk(c, left, depth, 0);
		walk(c, right, depth, 0);
		compiler_operator(c, n, op, right, 2);
		return;
	default:
		break;
	}
	walk(c, left, depth, 0);
	walk(c, right, depth, 0);
}

/* ExUnit: `test "name" do ... end` defines the public function
 * :"test name"/1 (:"test describe name"/1 inside `describe "describe"`), so
 * that the calls made by tests have a function to come from. */
NOINLINE static bool do_exunit(struct ex_ctx *c, const struct ex_call *call, unsigned depth,
                               bool describe)
{
	struct ex_args a;
	args_read(c, call->args, depth, &a);
	size_t len;
	const char *name = a.count > 0 ? plain_string(c, a.first[0], &len) : NULL;
	if (!name || len >= EX_MAX_NAME || (describe && c->describe))
		return false;
	if (describe) {
		c->describe = gi_arena_strndup(&c->f->arena, name, len);
		walk_children(c, call->do_block, depth);
		c->describe = NULL;
		return true;
	}
	const char *full =
	    c->describe ? gi_arena_printf(&c->f->arena, "test %s %.*s", c->describe, (int)len, name)
	                : gi_arena_printf(&c->f->arena, "test %.*s", (int)len, name);
	uint32_t start = line_of(call->node), end = end_line_of(call->node);
	bool created;
	long fi = function_find_or_add(c, full, strlen(full), 1, &created);
	struct facts_function *fn = gi_vec_get(&cur_module(c)->functions, (size_t)fi);
	function_touch(fn, FACTS_DEF, true, start, end);
	fn->clauses++;
	fn->lines += end - start + 1;
	struct ex_head h;
	memset(&h, 0, sizeof(h));
	if (a.count >= 2)
		h.guard = a.first[1]; /* the test context pattern, walked like a guard */
	clause_walk(c, fi, &h, call->do_block, true, true, depth);
	return true;
}

/* ExUnit.CaseTemplate: `using do ... end` (or `using opts do`) in a module
 * body defines the module's `__using__/1` macro, whose body is the block:
 * its quotes inject into the test modules that `use` the template, as a
 * written `defmacro __using__` would (docs/EXTRACTION.md, "use
 * injection"). */
NOINLINE static void do_case_template_using(struct ex_ctx *c, const struct ex_call *call,
                                            unsigned depth)
{
	uint32_t start = line_of(call->node), end = end_line_of(call->node);
	bool created;
	long fi = function_find_or_add(c, "__using__", 9, 1, &created);
	struct facts_function *fn = gi_vec_get(&cur_module(c)->functions, (size_t)fi);
	function_touch(fn, FACTS_DEFMACRO, true, start, end);
	fn->clauses++;
	fn->lines += end - start + 1;
	struct ex_head h;
	memset(&h, 0, sizeof(h));
	clause_walk(c, fi, &h, call->do_block, true, true, depth);
}

/* `raise M` / `raise M, opts` calls M.exception/1, `raise "text"`
 * RuntimeError.exception/1, as the compiler expands them. */
static void raise_call(struct ex_ctx *c, const struct ex_call *call, unsigned depth)
{
	struct ex_args a;
	args_read(c, call->args, depth, &a);
	if (a.count == 0)
		return;
	const char *m = literal_module(c, a.first[0], depth, false);
	if (!m && a.count == 1 && kind_of(a.first[0]) == N_STRING)
		m = "RuntimeError";
	if (m && m[0] != ':')
		remote_call(c, m, "exception", 1, line_of(call->node));
}

/* `Record.defrecord(:name, fields)` (or `defrecordp`, or `defrecord`
 * called as imported) in a module body: the macros name/0, name/1 and
 * name/2 (private for defrecordp). */
static void record_generate(struct ex_ctx *c, const struct ex_call *call, const char *fun,
                            unsigned depth)
{
	bool private = strcmp(fun, "defrecordp") == 0;
	if ((!private && strcmp(fun, "defrecord") != 0) || !c->mod || c->function >= 0 ||
	    c->in_quote)
		return;
	struct ex_args a;
	args_read(c, call->args, depth, &a);
	const char *name = a.count >= 1 ? literal_function(c, a.first[0]) : NULL;
	if (!name)
		return;
	const char *by = private ? "Record.defrecordp" : "Record.defrecord";
	for (int arity = 0; arity <= 2; arity++)
		generated_add_kind(c, gi_arena_printf(&c->f->arena, "%s/%d", name, arity), by,
		                   line_of(call->node), private ? FACTS_DEFMACROP : FACTS_DEFMACRO,
		                   !private);
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
	TSNode key = field(p, tables.f_key);
	size_t len;
	const char *k = text_of(c, key, &len);
	return GI_MEM_STARTS(k, len, "do:");
}

/* `unquote(x)` or `unquote_splicing(x)` inside a quote of a function:
 * standing as a statement outside any definition of the quote, it splices
 * in code (definitions, attributes) that the quote does not show: a local
 * function's own quotes (FACTS_CALL_INJECT_QUOTE to it, applied by the
 * graph), or something unreadable (FACTS_CALL_INJECT_QUOTE with arity -1).
 * Its argument is then walked as the ordinary code it is (it runs in the
 * macro). */
static void walk_unquote(struct ex_ctx *c, const struct ex_call *call, unsigned depth)
{
	if (c->function >= 0 && c->quote_def == 0 && c->mod && is_statement(c, call->node)) {
		struct ex_args a;
		args_read(c, call->args, depth, &a);
		TSNode arg = a.count == 1 ? a.first[0] : (TSNode){0};
		struct ex_call inner;
		const char *name = NULL;
		int arity = -1;
		if (!ts_node_is_null(arg) && kind_of(arg) == N_CALL) {
			call_read(c, arg, depth, &inner);
			if (kind_of(inner.target) == N_IDENTIFIER &&
			    ts_node_is_null(inner.do_block)) {
				size_t len;
				const char *t = text_of(c, inner.target, &len);
				if (len > 0 && len < EX_MAX_NAME) {
					name = gi_arena_strndup(&c->f->arena, t, len);
					arity = ts_node_is_null(inner.args)
					            ? 0
					            : (int)ts_node_named_child_count(inner.args);
				}
			}
		}
		call_add(c, FACTS_CALL_INJECT_QUOTE, name ? c->mod->name : NULL, name, arity,
		         line_of(call->node));
	}
	bool saved = c->in_quote;
	int saved_def = c->quote_def;
	c->in_quote = false;
	c->quote_def = 0;
	walk_children(c, call->args, depth);
	c->in_quote = saved;
	c->quote_def = saved_def;
}

static void walk_call(struct ex_ctx *c, TSNode n, unsigned depth, int pipe)
{
	struct ex_call call;
	call_read(c, n, depth, &call);
	enum node_kind tk = kind_of(call.target);
	bool local = false;
	const char *mod = NULL, *fun = NULL, *dynamic = NULL;
	if (tk == N_IDENTIFIER) {
		size_t len;
		const char *t = text_of(c, call.target, &len);
		enum ex_word w = ex_word_lookup(t, len);
		switch (w) {
		case EX_W_DEFMODULE:
			do_defmodule(c, &call, depth, FACTS_MODULE);
			return;
		case EX_W_DEFPROTOCOL:
			do_defmodule(c, &call, depth, FACTS_PROTOCOL);
			return;
		case EX_W_DEFIMPL:
			do_defimpl(c, &call, depth);
			return;
		case EX_W_DEF:
		case EX_W_DEFP:
		case EX_W_DEFMACRO:
		case EX_W_DEFMACROP:
		case EX_W_DEFGUARD:
		case EX_W_DEFGUARDP:
		case EX_W_DEFDELEGATE:
			do_def(c, &call, depth, w);
			return;
		case EX_W_DEFSTRUCT:
		case EX_W_DEFEXCEPTION:
			do_defstruct(c, &call, depth);
			return;
		case EX_W_ALIAS:
			do_alias(c, &call, depth);
			return;
		case EX_W_IMPORT:
			do_directive(c, &call, depth, FACTS_REF_IMPORT);
			return;
		case EX_W_REQUIRE:
			do_directive(c, &call, depth, FACTS_REF_REQUIRE);
			return;
		case EX_W_USE:
			do_directive(c, &call, depth, FACTS_REF_USE);
			return;
		case EX_W_QUOTE: {
			bool saved = c->in_quote;
			int saved_def = c->quote_def;
			c->in_quote = true;
			c->quote_def = 0;
			walk_children(c, n, depth);
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
			do_control(c, &call, depth, w);
			return;
		default:
			if (c->in_quote && !ts_node_is_null(call.args) &&
			    (text_is(c, call.target, "unquote") ||
			     text_is(c, call.target, "unquote_splicing"))) {
				walk_unquote(c, &call, depth);
				return;
			}
			if (c->mod && c->function < 0 && !c->in_quote &&
			    !ts_node_is_null(call.do_block) &&
			    (text_is(c, call.target, "test") ||
			     text_is(c, call.target, "describe")) &&
			    do_exunit(c, &call, depth, text_is(c, call.target, "describe")))
				return;
			if (c->mod && c->function < 0 && !c->in_quote &&
			    !ts_node_is_null(call.do_block) && text_is(c, call.target, "using")) {
				do_case_template_using(c, &call, depth);
				return;
			}
			local = true;
			break;
		}
	} else if (tk == N_DOT) {
		TSNode left = field(call.target, tables.f_left);
		TSNode right = field(call.target, tables.f_right);
		if (c->mod && c->function < 0 && !c->in_quote && kind_of(left) == N_ALIAS &&
		    text_is(c, left, "Kernel") && kind_of(right) == N_IDENTIFIER) {
			/* Kernel.def f(x) in a module body (a protocol's real
			 * function) is a definition */
			size_t len;
			const char *t = text_of(c, right, &len);
			enum ex_word w = ex_word_lookup(t, len);
			if (w >= EX_W_DEF && w <= EX_W_DEFDELEGATE) {
				do_def(c, &call, depth, w);
				return;
			}
		}
		if (!ts_node_is_null(right) &&
		    (kind_of(left) != N_IDENTIFIER || !ts_node_is_null(call.args) || pipe)) {
			mod = module_of(c, left, depth);
			fun = mod ? dot_function(c, right) : NULL;
		}
		if (!mod || !fun)
			walk(c, left, depth, 0);
		/* `adapter.child_specs(m, c)`, `opts[:tool].start(p, o)`: a call
		 * on a module held in a variable or computed (with parentheses:
		 * `v.f` alone may be a field) */
		if (!mod && kind_of(left) != N_ALIAS && kind_of(right) == N_IDENTIFIER &&
		    (!ts_node_is_null(call.args) || pipe) && !c->in_quote)
			dynamic = dot_function(c, right);
	} else if (!ts_node_is_null(call.target)) {
		walk(c, call.target, depth, 0);
	}
	/* The call is recorded once its arguments are walked (and counted), so
	 * that calls in arguments come first. */
	uint32_t nargs = walk_children(c, call.args, depth);
	int arity = (int)nargs + pipe + (ts_node_is_null(call.do_block) ? 0 : 1);
	if (dynamic && c->mod)
		call_add(c, FACTS_CALL_DYNAMIC, NULL, dynamic, arity, line_of(n));
	if (local) {
		local_call(c, call.target, arity);
		{
			/* elem(t, 0) is :erlang.element/2 (Kernel's inlined functions),
			 * to_string(x) String.Chars.to_string/1 (Kernel's macros) */
			size_t len;
			const char *t = text_of(c, call.target, &len);
			compiler_rewrite(c, "Kernel", t, len, arity, line_of(n));
			const char *proto = kernel_expansion(t, len, arity);
			if (proto && c->mod && !c->in_quote)
				remote_call(c, proto,
				            arity == 1 && len == 9 ? "to_string" : "to_charlist", 1,
				            line_of(n));
		}
		struct_call_check(c, &call, arity, pipe, depth);
		template_expand(c, &call, depth);
		if (!pipe && (arity == 1 || arity == 2) && text_is(c, call.target, "raise"))
			raise_call(c, &call, depth);
		if (text_is(c, call.target, "defrecord") || text_is(c, call.target, "defrecordp"))
			record_generate(c, &call,
			                text_is(c, call.target, "defrecord") ? "defrecord"
			                                                     : "defrecordp",
			                depth);
		if (!pipe && arity >= 3 && arity <= 5) {
			size_t len;
			const char *t = text_of(c, call.target, &len);
			char name[32];
			if (len < sizeof(name)) {
				memcpy(name, t, len);
				name[len] = '\0';
				mfa_call(c, &call, NULL, name, arity, depth);
			}
		}
	} else if (mod && fun) {
		remote_call(c, mod, fun, arity, line_of(n));
		compiler_rewrite(c, mod, fun, strlen(fun), arity, line_of(n));
		to_atom_check(c, &call, mod, fun, arity, pipe, depth);
		if (strcmp(mod, "Record") == 0)
			record_generate(c, &call, fun, depth);
		if (!pipe && arity >= 3 && arity <= 5)
			mfa_call(c, &call, mod, fun, arity, depth);
		if (strcmp(mod, "Module") == 0 && strcmp(fun, "concat") == 0) {
			const char *made = concat_name(c, &call, depth);
			if (made)
				ref_add(c, FACTS_REF_VALUE, made, line_of(n));
		}
	}
	if (!ts_node_is_null(call.do_block)) {
		size_t saved = c->aliases.len;
		walk_children(c, call.do_block, depth);
		c->aliases.len = saved;
	}
}

static void walk_struct_ref(struct ex_ctx *c, TSNode map, unsigned depth)
{
	TSNode s = ts_node_named_child(map, 0);
	if (kind_of(s) != N_STRUCT) {
		walk_children(c, map, depth);
		return;
	}
	TSNode name = ts_node_named_child(s, 0);
	const char *mod = module_of(c, name, depth);
	if (mod) {
		ref_add(c, FACTS_REF_STRUCT, mod, line_of(map));
		struct_site(c, map, mod);
	} else
		walk(c, s, depth, 0); /* %module{}: the name is code */
	/* The fields, not the struct's name (a struct reference, not a value). */
	uint32_t k = ts_node_named_child_count(map);
	for (uint32_t i = 1; i < k; i++)
		walk(c, ts_node_named_child(map, i), depth, 0);
}

/* A string's interpolations are code, each a call to
 * String.Chars.to_string/1 (what the compiler makes of "#{x}"). */
static void walk_string(struct ex_ctx *c, TSNode n, unsigned depth)
{
	TSTreeCursor *cur = cursor_at(c, depth, n);
	uint32_t interpolations = 0, line = line_of(n);
	for (bool ok = ts_tree_cursor_goto_first_child(cur); ok;
	     ok = ts_tree_cursor_goto_next_sibling(cur))
		if (kind_of(ts_tree_cursor_current_node(cur)) == N_INTERPOLATION) {
			interpolations++;
			line = line_of(ts_tree_cursor_current_node(cur));
		}
	if (interpolations == 0)
		return;
	walk_children(c, n, depth);
	for (uint32_t i = 0; i < interpolations; i++)
		remote_call(c, "String.Chars", "to_string", 1, line);
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
	uint32_t interpolations = 0, line = line_of(n);
	const char *name = NULL;
	size_t name_len = 0;
	bool modifiers = false;
	uint32_t k = ts_node_named_child_count(n);
	for (uint32_t i = 0; i < k; i++) {
		TSNode ch = ts_node_named_child(n, i);
		const char *t = ts_node_type(ch);
		if (kind_of(ch) == N_INTERPOLATION)
			interpolations++;
		else if (strcmp(t, "sigil_name") == 0)
			name = text_of(c, ch, &name_len);
		else if (strcmp(t, "sigil_modifiers") == 0)
			modifiers = ts_node_end_byte(ch) > ts_node_start_byte(ch);
	}
	walk_children(c, n, depth);
	if (!c->mod || c->in_quote)
		return;
	for (uint32_t i = 0; i < interpolations; i++)
		remote_call(c, "String.Chars", "to_string", 1, line);
	if (kind_of(n) == N_CHARLIST) {
		if (interpolations)
			compiler_call(c, "List", "to_charlist", 1, line);
		return;
	}
	if (!name || name_len == 0 || name_len >= EX_MAX_NAME - 8)
		return;
	char fun[EX_MAX_NAME];
	snprintf(fun, sizeof(fun), "sigil_%.*s", (int)name_len, name);
	const char *imported = import_lookup(c, fun, strlen(fun), 2);
	if (imported) {
		ref_add(c, FACTS_REF_CALL, imported, line);
		call_add(c, FACTS_CALL_REMOTE, imported, gi_arena_strdup(&c->f->arena, fun), 2,
		         line);
	} else {
		call_add(c, FACTS_CALL_LOCAL, c->mod->name, gi_arena_strdup(&c->f->arena, fun), 2,
		         line);
	}
	if (!interpolations || name_len != 1 || modifiers)
		return;
	if (name[0] == 'c')
		compiler_call(c, "List", "to_charlist", 1, line);
	else if (name[0] == 'r')
		compiler_call(c, "Regex", "compile!", 2, line);
	else if (name[0] == 'w')
		compiler_call(c, "String", "split", 1, line);
}

static void walk_fn(struct ex_ctx *c, TSNode n, unsigned depth)
{
	int saved = 0;
	size_t saved_aliases = c->aliases.len;
	if (c->metrics) {
		saved = c->metrics->nesting;
		c->metrics->nesting = 0;
	}
	walk_children(c, n, depth);
	if (c->metrics)
		c->metrics->nesting = saved;
	c->aliases.len = saved_aliases;
}

static void walk(struct ex_ctx *c, TSNode n, unsigned depth, int pipe)
{
	if (ts_node_is_null(n))
		return;
	if (ts_node_child_count(n) == 0) {
		/* A module used as a value: `children = [Worker]`, `{Registry,
		 * ...}`, `raise Error`; call targets, directives and struct names
		 * never get here. */
		if (c->mod && kind_of(n) == N_ALIAS)
			ref_add(c, FACTS_REF_VALUE, module_of(c, n, depth), line_of(n));
		return;
	}
	if (depth >= EX_MAX_DEPTH) {
		if (!c->too_deep) {
			c->too_deep = true;
			facts_error_add(c->f, line_of(n), "nesting too deep: subtree skipped");
		}
		return;
	}
	depth++;
	switch (kind_of(n)) {
	case N_CALL:
		walk_call(c, n, depth, pipe);
		return;
	case N_BINARY:
		walk_binary(c, n, depth);
		return;
	case N_UNARY:
		switch (op_of(n)) {
		case OP_CAPTURE:
			do_capture(c, n, depth);
			return;
		case OP_ATTRIBUTE:
			do_attribute(c, n, depth);
			return;
		case OP_INLINE: {
			TSNode operand = operand_of(c, n, depth), saved = c->test;
			bool test = !ts_node_is_null(c->test) && ts_node_eq(c->test, n);
			if (test)
				c->test = operand; /* `not` of a condition: a test too */
			walk_children(c, n, depth);
			c->test = saved;
			compiler_operator(c, n, OP_INLINE, operand, 1);
			return;
		}
		default:
			walk_children(c, n, depth);
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
		walk(c, field(n, tables.f_left), depth, 0);
		c->in_pattern = saved;
		walk(c, field(n, tables.f_right), depth, 0);
		return;
	}
	case N_ERROR:
		walk_error(c, n, depth);
		return;
	case N_TUPLE:
		walk_tuple(c, n, depth);
		return;
	case N_ACCESS:
		/* x[k] is Access.get(x, k) */
		walk_children(c, n, depth);
		remote_call(c, "Access", "get", 2, line_of(n));
		return;
	case N_STRING:
		walk_string(c, n, depth);
		return;
	case N_CHARLIST:
	case N_SIGIL:
		walk_quoted(c, n, depth);
		return;
	case N_QUOTED_ATOM:
		quoted_atom_check(c, n);
		walk_children(c, n, depth);
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
			walk_children(c, n, depth);
			c->aliases.len = saved;
		}
		return;
	default:
		walk_children(c, n, depth);
		return;
	}
}

/* Walks the named children of `n` (which sits at `depth`) one level deeper;
 * returns how many there were, comments aside (a call's arity). */
static uint32_t walk_children(struct ex_ctx *c, TSNode n, unsigned depth)
{
	if (ts_node_is_null(n) || ts_node_child_count(n) == 0)
		return 0;
	if (depth >= EX_MAX_DEPTH) {
		walk(c, n, depth, 0);
		return 0;
	}
	TSTreeCursor *cur = cursor_at(c, depth, n);
	if (!ts_tree_cursor_goto_first_child(cur))
		return 0;
	size_t reopen = 0;
	uint32_t count = 0;
	do {
		TSNode k = ts_tree_cursor_current_node(cur);
		if (!ts_node_is_named(k))
			continue;
		enum node_kind kk = kind_of(k);
		if (reopen && kk == N_ERROR) {
			module_recover(c, reopen - 1, k, depth);
			reopen = 0;
			continue;
		}
		if (kk != N_COMMENT)
			count++;
		c->bodyless = 0;
		walk(c, k, depth, 0);
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
 * little. A bracket opened among its children and never closed there is the
 * error (an unclosed argument list, where `end` came first; an unterminated
 * string inside one); otherwise its last child is (an unterminated string's
 * text, the token an argument list choked on, the end of a truncated file). */
static uint32_t error_line(TSNode n)
{
	static const char *const openers[] = {"(", "[", "{", "%{", "<<", NULL};
	static const char *const closers[] = {")", "]", "}", ">>", NULL};
	uint32_t open_line[16], open = 0, last = line_of(n);
	uint32_t count = ts_node_child_count(n);
	for (uint32_t i = 0; i < count; i++) {
		TSNode k = ts_node_child(n, i);
		if (ts_node_is_named(k)) {
			if (strcmp(ts_node_type(k), "comment") != 0)
				last = line_of(k);
			continue;
		}
		last = line_of(k);
		if (token_is(k, openers)) {
			if (open < 16)
				open_line[open] = line_of(k);
			open++;
		} else if (token_is(k, closers) && open > 0) {
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
			                    ? line_of(parent)
			                    : line_of(n);
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
		facts_error_add(f, line_of(root), "syntax error");
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
	TSParser *parser = ts_parser_new();
	ts_parser_set_language(parser, tables.language);
	TSTree *tree = ts_parser_parse_string(parser, NULL, len ? source : "", (uint32_t)len);
	ts_parser_delete(parser);
	if (!tree) {
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
	if (kind_of(root) == N_ERROR)
		walk_error(c, root, 0);
	else
		walk_children(c, root, 0);
	for (size_t i = 0; i < EX_MAX_DEPTH + 2; i++)
		if (c->cursor_ready[i])
			ts_tree_cursor_delete(&c->cursors[i]);
	gi_vec_destroy(&c->aliases);
	gi_vec_destroy(&c->templates);
	gi_free(c);
	ts_tree_delete(tree);
	*out = f;
	return 0;
}
