/*
 * elixir_int.h - what the files of the Elixir reader share. elixir.c holds
 * the entry point and the walk's dispatch (ex_walk, ex_walk_call); the walk
 * of each construct is in its own file: elixir_module.c (modules and
 * directives), elixir_def.c (function definitions), elixir_attribute.c
 * (attributes and the checks' sites), elixir_control.c (control flow and
 * operators), elixir_node.c (reading nodes, names, recording facts);
 * elixir_names.c holds the fixed vocabularies. Not a contract: other modules
 * use elixir.h. Each step's contract is the comment at its definition.
 */
#ifndef GIULIA_SOURCE_ELIXIR_INT_H
#define GIULIA_SOURCE_ELIXIR_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <tree_sitter/api.h>

#include "base/map.h"
#include "base/vec.h"
#include "source/facts.h"

/* The identifiers a call target is dispatched on. */
enum ex_word {
	EX_W_NONE = 0,
	EX_W_MODULE, /* __MODULE__ */
	EX_W_DEFMODULE,
	EX_W_DEFPROTOCOL,
	EX_W_DEFIMPL,
	EX_W_DEF,
	EX_W_DEFP,
	EX_W_DEFMACRO,
	EX_W_DEFMACROP,
	EX_W_DEFGUARD,
	EX_W_DEFGUARDP,
	EX_W_DEFDELEGATE,
	EX_W_DEFSTRUCT,
	EX_W_DEFEXCEPTION,
	EX_W_ALIAS,
	EX_W_IMPORT,
	EX_W_REQUIRE,
	EX_W_USE,
	EX_W_QUOTE,
	EX_W_IF,
	EX_W_UNLESS,
	EX_W_CASE,
	EX_W_COND,
	EX_W_WITH,
	EX_W_FOR,
	EX_W_TRY,
	EX_W_RECEIVE,
};

/* Returns the word for the `len` bytes at `s`, or EX_W_NONE. Thread-safe. */
enum ex_word ex_word_lookup(const char *s, size_t len);

/* True when `name` is imported into every module from Kernel or
 * Kernel.SpecialForms (a call to it that the module does not define itself
 * is not a local call). Thread-safe. */
bool ex_is_kernel_name(const char *name);

/* True when Kernel's `name`/`arity` is a function that compiled code calls
 * as Kernel.name (inspect/1, struct/2, get_in/2...), not a macro or an
 * inlined Erlang built-in. Thread-safe. */
bool ex_is_kernel_function(const char *name, int arity);

/* A call the compiler rewrites into a call of an Erlang module. */
struct ex_inline {
	const char *module, *name; /* the Elixir call: "Kernel", "elem" */
	int arity;
	const char *erl_module, *erl_name; /* what the object code calls: ":erlang", "element" */
	int erl_arity;
};
/* The rewrite of module.name/arity (module in display form, "Kernel" for
 * operators and imported functions), or NULL when the compiler keeps it. */
const struct ex_inline *ex_inline_lookup(const char *module, const char *name, int arity);

/* Functions that take a module, a function name and an argument list as
 * consecutive arguments (spawn(M, :f, args), :timer.apply_after(t, M, :f,
 * args), apply(M, :f, args)...): when `module`.`name`/`arity` is one
 * (`module` NULL: a call imported from Kernel), returns the position of the
 * module argument, sets *apply for apply itself and *extra to the arguments
 * the callee passes before the listed ones (Agent.update/4 passes the
 * state: f gets one more); else -1. Thread-safe. */
int ex_mfa_position(const char *module, const char *name, int arity, bool *apply, int *extra);

/* The functions `use module` defines in the using module when it does not
 * define them itself ("name/arity", NULL-terminated; Elixir 1.14's
 * GenServer, Supervisor, Agent, Task, Application, DynamicSupervisor), or
 * NULL for a module not in the table. Thread-safe. */
const char *const *ex_use_generated(const char *module);

/* The functions of one of Elixir's protocols (Inspect, String.Chars,
 * List.Chars, Enumerable, Collectable) as "name/arity", NULL-terminated,
 * which `@derive` implements; NULL for another protocol. Thread-safe. */
const char *const *ex_protocol_functions(const char *protocol);

/* ---- the walk's shared state and steps (elixir.c and elixir_*.c) ---- */

/* Handlers with large frames stay out of the recursive walk's own frame. */
#define NOINLINE __attribute__((noinline))

/* Tree levels walked before a subtree is skipped (see elixir.c). */
#define EX_MAX_DEPTH 400
/* Longest module or function name kept (longer ones are dropped). */
#define EX_MAX_NAME 512

struct ex_symbol_tables {
	const TSLanguage *language;
	uint32_t count;
	unsigned char *kind; /* by symbol: enum node_kind (named symbols) */
	unsigned char *op;   /* by symbol: enum op_kind (anonymous symbols) */
	TSFieldId f_target, f_left, f_right, f_operator, f_operand, f_key, f_value;
};

/* The grammar's symbols and fields, built once by ex_parse (elixir.c);
 * read-only afterwards. */
extern struct ex_symbol_tables ex_tables;

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

static inline enum node_kind ex_kind_of(TSNode n)
{
	if (ts_node_is_null(n))
		return N_OTHER;
	TSSymbol s = ts_node_symbol(n);
	if (s == (TSSymbol)-1)
		return N_ERROR;
	return s < ex_tables.count ? (enum node_kind)ex_tables.kind[s] : N_OTHER;
}

static inline enum op_kind ex_op_of(TSNode n)
{
	TSNode o = ts_node_child_by_field_id(n, ex_tables.f_operator);
	if (ts_node_is_null(o))
		return OP_NONE;
	TSSymbol s = ts_node_symbol(o);
	return s < ex_tables.count ? (enum op_kind)ex_tables.op[s] : OP_NONE;
}

static inline TSNode ex_field(TSNode n, TSFieldId id)
{
	return ts_node_child_by_field_id(n, id);
}

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

static inline TSTreeCursor *ex_cursor_at(struct ex_ctx *c, unsigned depth, TSNode n)
{
	if (!c->cursor_ready[depth]) {
		c->cursors[depth] = ts_tree_cursor_new(n);
		c->cursor_ready[depth] = true;
	} else {
		ts_tree_cursor_reset(&c->cursors[depth], n);
	}
	return &c->cursors[depth];
}

/* The source text of `n` (empty for a null node), borrowed from the source. */
static inline const char *ex_text_of(const struct ex_ctx *c, TSNode n, size_t *len)
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

static inline bool ex_text_is(const struct ex_ctx *c, TSNode n, const char *s)
{
	size_t len;
	const char *t = ex_text_of(c, n, &len);
	return len == strlen(s) && memcmp(t, s, len) == 0;
}

static inline uint32_t ex_line_of(TSNode n)
{
	return ts_node_start_point(n).row + 1;
}

/* The last line a node covers: a node that ends at the start of a line
 * (after a newline) ends on the line before. */
static inline uint32_t ex_end_line_of(TSNode n)
{
	TSPoint end = ts_node_end_point(n);
	if (end.column == 0 && end.row > ts_node_start_point(n).row)
		return end.row;
	return end.row + 1;
}

static inline struct facts_module *ex_cur_module(struct ex_ctx *c)
{
	return c->mod ? gi_vec_get(&c->f->modules, c->mod->index) : NULL;
}

static inline struct facts_function *ex_cur_function(struct ex_ctx *c)
{
	if (!c->mod || c->function < 0)
		return NULL;
	return gi_vec_get(&ex_cur_module(c)->functions, (size_t)c->function);
}

/* What entering a module or a clause changes in the walk state. */
struct ex_saved {
	struct ex_module_state *mod;
	long function;
	struct ex_metrics *metrics;
	size_t aliases;
	const char *describe;
};

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

/* The tree-sitter runtime's memory (elixir_arena.c). ex_arena_install makes
 * the runtime allocate through it; call it once, before any parser exists
 * (ex_parse does, under pthread_once). ex_arena_begin makes a pooled arena,
 * sized for a source of `source_len` bytes, the calling thread's current one: every tree-sitter
 * allocation of this thread comes from it until ex_arena_end, which releases all of them at once
 * (nothing allocated in it may be used or freed afterwards) and returns the arena to the pool.
 * Thread-safe; an arena is used by one thread. */
struct ex_arena;
void ex_arena_install(void);
struct ex_arena *ex_arena_begin(size_t source_len);
void ex_arena_end(struct ex_arena *arena);

/* The walk's steps shared between its files (contracts at their
 * definitions). None is thread-safe on one ex_ctx; different contexts may run
 * in parallel. */
TSNode ex_operand_of(struct ex_ctx *c, TSNode n, unsigned depth);
void ex_args_read(struct ex_ctx *c, TSNode args, unsigned depth, struct ex_args *a);
void ex_call_read(struct ex_ctx *c, TSNode n, unsigned depth, struct ex_call *call);
TSNode ex_keyword_value(struct ex_ctx *c, TSNode keywords, unsigned depth, const char *key);
size_t ex_alias_text(const struct ex_ctx *c, TSNode n, char *out, size_t size);
void ex_alias_add(struct ex_ctx *c, const char *short_name, size_t len, const char *full);
const char *ex_alias_expand(struct ex_ctx *c, const char *t, size_t len);
const char *ex_module_of(struct ex_ctx *c, TSNode n, unsigned depth);
const char *ex_plain_string(struct ex_ctx *c, TSNode n, size_t *len);
const char *ex_dot_function(struct ex_ctx *c, TSNode right);
int ex_small_int(const struct ex_ctx *c, TSNode n);
int ex_key_make(char *key, size_t size, const char *prefix, const char *name, size_t len, char sep,
                int number);
void ex_ref_add(struct ex_ctx *c, enum facts_ref_kind kind, const char *target, uint32_t line);
void ex_call_add(struct ex_ctx *c, enum facts_call_kind kind, const char *module,
                 const char *function, int arity, uint32_t line);
void ex_remote_call(struct ex_ctx *c, const char *module, const char *function, int arity,
                    uint32_t line);
void ex_compiler_call(struct ex_ctx *c, const char *module, const char *function, int arity,
                      uint32_t line);
void ex_compiler_rewrite(struct ex_ctx *c, const char *module, const char *function, size_t len,
                         int arity, uint32_t line);
const char *ex_kernel_expansion(const char *name, size_t len, int arity);
const char *ex_import_lookup(const struct ex_ctx *c, const char *name, size_t len, int arity);
void ex_local_call_kind(struct ex_ctx *c, TSNode name, int arity, enum facts_call_kind kind,
                        uint32_t line);
void ex_local_call(struct ex_ctx *c, TSNode name, int arity);
const char *ex_literal_module(struct ex_ctx *c, TSNode n, unsigned depth, bool erlang);
const char *ex_literal_function(struct ex_ctx *c, TSNode n);
void ex_mfa_call(struct ex_ctx *c, const struct ex_call *call, const char *module,
                 const char *function, int arity, unsigned depth);
const char *ex_concat_name(struct ex_ctx *c, const struct ex_call *call, unsigned depth);
void ex_walk_tuple(struct ex_ctx *c, TSNode n, unsigned depth);
void ex_generated_add_kind(struct ex_ctx *c, const char *name_arity, const char *macro,
                           uint32_t line, enum facts_function_kind kind, bool public);
void ex_saved_take(struct ex_ctx *c, struct ex_saved *sv);
void ex_saved_restore(struct ex_ctx *c, const struct ex_saved *sv);
void ex_module_enter(struct ex_ctx *c, size_t index, struct ex_module_state *st,
                     struct ex_saved *sv);
void ex_module_leave(struct ex_ctx *c, struct ex_module_state *st, const struct ex_saved *sv);
void ex_module_recover(struct ex_ctx *c, size_t index, TSNode error, unsigned depth);
const char *ex_module_name(struct ex_ctx *c, TSNode name, unsigned depth);
void ex_do_defmodule(struct ex_ctx *c, const struct ex_call *call, unsigned depth,
                     enum facts_module_kind kind);
void ex_do_defimpl(struct ex_ctx *c, const struct ex_call *call, unsigned depth);
void ex_do_alias(struct ex_ctx *c, const struct ex_call *call, unsigned depth);
void ex_inject_add(struct ex_ctx *c, const char *what, TSNode target, unsigned depth,
                   uint32_t line);
void ex_do_directive(struct ex_ctx *c, const struct ex_call *call, unsigned depth,
                     enum facts_ref_kind kind);
void ex_do_defstruct(struct ex_ctx *c, const struct ex_call *call, unsigned depth);
void ex_struct_site(struct ex_ctx *c, TSNode map, const char *mod);
void ex_to_atom_check(struct ex_ctx *c, const struct ex_call *call, const char *mod,
                      const char *fun, int arity, int pipe, unsigned depth);
void ex_quoted_atom_check(struct ex_ctx *c, TSNode n);
void ex_struct_call_check(struct ex_ctx *c, const struct ex_call *call, int arity, int pipe,
                          unsigned depth);
void ex_body_hash(struct ex_ctx *c, TSNode body, uint32_t line);
void ex_do_attribute(struct ex_ctx *c, TSNode n, unsigned depth);
long ex_function_find_or_add(struct ex_ctx *c, const char *name, size_t name_len, int arity,
                             bool *created);
void ex_function_touch(struct facts_function *fn, enum facts_function_kind kind, bool public,
                       uint32_t start, uint32_t end);
void ex_clause_walk(struct ex_ctx *c, long fi, const struct ex_head *h, TSNode body,
                    bool body_is_block, bool has_body, unsigned depth);
void ex_template_expand(struct ex_ctx *c, const struct ex_call *call, unsigned depth);
void ex_do_def(struct ex_ctx *c, const struct ex_call *call, unsigned depth, enum ex_word w);
void ex_walk_error(struct ex_ctx *c, TSNode n, unsigned depth);
void ex_do_control(struct ex_ctx *c, const struct ex_call *call, unsigned depth, enum ex_word w);
void ex_do_capture(struct ex_ctx *c, TSNode n, unsigned depth);
void ex_compiler_operator(struct ex_ctx *c, TSNode n, enum op_kind op, TSNode right, int arity);
void ex_walk_binary(struct ex_ctx *c, TSNode n, unsigned depth);
bool ex_do_exunit(struct ex_ctx *c, const struct ex_call *call, unsigned depth, bool describe);
void ex_do_case_template_using(struct ex_ctx *c, const struct ex_call *call, unsigned depth);
void ex_raise_call(struct ex_ctx *c, const struct ex_call *call, unsigned depth);
void ex_record_generate(struct ex_ctx *c, const struct ex_call *call, const char *fun,
                        unsigned depth);
void ex_walk_unquote(struct ex_ctx *c, const struct ex_call *call, unsigned depth);
void ex_walk(struct ex_ctx *c, TSNode n, unsigned depth, int pipe);
uint32_t ex_walk_children(struct ex_ctx *c, TSNode n, unsigned depth);

#endif
