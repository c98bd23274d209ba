/*
 * facts.h - what a source reader learns from one file: the common currency
 * between the readers (source/elixir.c for Elixir source, source/beam.c for
 * BEAM object code) and the knowledge graph (graph/).
 *
 * Naming convention for modules, used everywhere in Giulia (graph, store,
 * snapshots, profiles, API): an Elixir module is written as in Elixir source,
 * without the "Elixir." prefix ("Nexus.Repo"); an Erlang module is written
 * with a leading colon (":ets", ":gen_server"). gi_module_display_name() and
 * gi_module_atom_name() (base/modname.h, included here) convert between this
 * form and the atom's text.
 *
 * Ownership: a `struct facts_file` owns everything it points to through its
 * arena; facts_file_free() releases it all at once. Arrays are gi_vec of the
 * element structs below. Not thread-safe; one facts_file per thread at a time.
 */
#ifndef GIULIA_SOURCE_FACTS_H
#define GIULIA_SOURCE_FACTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/modname.h"
#include "base/vec.h"

enum facts_origin { FACTS_FROM_SOURCE = 0, FACTS_FROM_BEAM = 1 };

enum facts_module_kind { FACTS_MODULE = 0, FACTS_PROTOCOL, FACTS_IMPL };

enum facts_function_kind {
	FACTS_DEF = 0,
	FACTS_DEFP,
	FACTS_DEFMACRO,
	FACTS_DEFMACROP,
	FACTS_DEFGUARD,
	FACTS_DEFGUARDP,
	FACTS_DEFDELEGATE,
	FACTS_DEFCALLBACK, /* a protocol's def without body */
};

/* Module-level reference kinds; the graph keeps them as typed edges. */
enum facts_ref_kind {
	FACTS_REF_ALIAS = 0,
	FACTS_REF_IMPORT,
	FACTS_REF_USE,
	FACTS_REF_REQUIRE,
	FACTS_REF_CALL,
	FACTS_REF_STRUCT,
	FACTS_REF_BEHAVIOUR,
	FACTS_REF_CAPTURE,
	/* Dispatch: the target is reached without a direct call written to it
	 * (docs/EXTRACTION.md, "Dispatch"). Kept apart so that queries can
	 * include or exclude them (FACTS_REF_DISPATCH_MASK). */
	FACTS_REF_IMPL,     /* a call to Proto.f/n reaches each defimpl's f/n */
	FACTS_REF_CALLBACK, /* a behaviour reaches its implementations' callbacks */
	FACTS_REF_VALUE,    /* a module used as a value: [Worker], {Registry, ...} */
	FACTS_REF_MFA,      /* {M, :f, args}, spawn(M, :f, args), :timer.apply_after */
	FACTS_REF_APPLY,    /* apply(M, :f, args) with a literal module and function */
	FACTS_REF_KIND_COUNT
};

#define FACTS_REF_DISPATCH_MASK                                                          \
	((1u << FACTS_REF_IMPL) | (1u << FACTS_REF_CALLBACK) | (1u << FACTS_REF_VALUE) | \
	 (1u << FACTS_REF_MFA) | (1u << FACTS_REF_APPLY))

/* Kinds of a function-level call. */
enum facts_call_kind {
	FACTS_CALL_REMOTE = 0, /* Mod.f(...) or :mod.f(...) */
	FACTS_CALL_LOCAL,      /* f(...) inside the module */
	FACTS_CALL_CAPTURE,    /* &Mod.f/2 or &f/2 */
	FACTS_CALL_DYNAMIC,    /* apply/3, or a call whose target is not known (beam) */
	FACTS_CALL_MFA,        /* {M, :f, args} or an MFA argument; arity -1: args not a list */
	FACTS_CALL_APPLY,      /* apply(M, :f, args) with literals; arity -1 likewise */
	FACTS_CALL_IMPL,       /* made by the graph: a protocol call reaching an impl */
	/* What a quote in a function (a `__using__/1` macro, or a function it
	 * applies) injects into the module that `use`s it (docs/EXTRACTION.md,
	 * "use injection"): never a call, applied by the graph. */
	FACTS_CALL_INJECT,     /* module: the target; function: "import", "require", "use",
	                          "before_compile", "after_compile", "behaviour" */
	FACTS_CALL_INJECT_DEF, /* function/arity: a public def (or defdelegate) in the quote */
	/* `use M, :which` in a module body: M.which/0, whose quote injects like
	 * __using__'s (the `use MyAppWeb, :controller` pattern). */
	FACTS_CALL_USE,
	FACTS_CALL_INJECT_MACRO, /* function/arity: a public defmacro or defguard in the quote */
	/* A call the compiler writes to an Erlang module for code that does
	 * not name it (docs/EXTRACTION.md, "Compiler rewrites"): `a + b` is
	 * :erlang.+/2, `Map.keys(m)` :maps.keys/1, a `for` Enum.reduce/3 and
	 * :lists.reverse/1, `x in xs` Enum.member?/2.
	 * Stored, but never an edge of the graph: queries on the project do
	 * not see them; the comparison with the object code counts them. */
	FACTS_CALL_COMPILER,
	/* In a quote of a function, an `unquote(...)` standing as a statement
	 * (where definitions go): function/arity the local function of the same
	 * module (module) whose quotes it splices in, applied like the quote's
	 * own; function NULL and arity -1 when it is anything else (a variable,
	 * a remote call): what it injects cannot be read. */
	FACTS_CALL_INJECT_QUOTE,
};

/* The name of the function that holds a module body's calls (code outside
 * any function, run when the module is compiled: DSL macro calls, attribute
 * values, @before_compile). Not an Elixir identifier, so it never clashes. */
#define FACTS_MODULE_BODY "(module body)"

/* The name of the function that stands, in a module, for the functions a
 * module-body comprehension over a computed enumerable defines (`for {c, i}
 * <- Enum.with_index(colors) do def unquote(c)() ...`): the reader cannot
 * name them. Private, generated (generated_by "for GENERATOR"), arity 0;
 * dead code says such a module's functions are not all known. */
#define FACTS_UNKNOWN_NAMES "(generated: unknown names)"

struct facts_ref {
	enum facts_ref_kind kind;
	const char *target; /* module, display form */
	uint32_t line;
};

struct facts_call {
	enum facts_call_kind kind;
	const char *module;   /* display form; for FACTS_CALL_LOCAL the enclosing module */
	const char *function; /* may be NULL for FACTS_CALL_DYNAMIC */
	int arity;            /* -1 when unknown */
	uint32_t line;
};

struct facts_function {
	const char *name;
	int arity;
	enum facts_function_kind kind;
	bool is_public;
	uint32_t line_start, line_end;
	uint32_t clauses;
	bool has_doc, has_spec, has_impl, has_guard;
	bool doc_false;  /* @doc false */
	bool deprecated; /* @deprecated "..." before it */
	/* An arity generated by default arguments (`\\`) of the clause with the
	 * highest arity; it has no clause of its own (clauses == 0). */
	bool from_defaults;
	int cyclomatic; /* sum over clauses (Credo rules); beam: branch count + 1 */
	int cognitive;  /* Sonar-style */
	int max_nesting;
	uint32_t lines;
	struct gi_vec calls;     /* struct facts_call */
	const char *delegate_to; /* defdelegate to: module, else NULL */
	/* Generated by a known macro (docs/EXTRACTION.md, "Generated
	 * functions"): its name ("use GenServer", "defstruct"), else NULL. */
	const char *generated_by;
};

/* Facts for the contract, convention and clone checks (graph/contracts.c,
 * docs/CHECKS.md): things with a place in the source that the graph itself
 * does not need. */
enum facts_site_kind {
	FACTS_SITE_ORPHAN_SPEC = 0, /* @spec name/arity with no function of that name/arity */
	FACTS_SITE_IMPL, /* @impl before name/arity; detail "true", "false" or the module; size: the
	                    head's default arguments */
	FACTS_SITE_OPTIONAL_CALLBACK, /* name/arity listed in @optional_callbacks */
	FACTS_SITE_STRUCT_BUILD,      /* %S{...} or struct(S, ...); detail: S */
	FACTS_SITE_STRUCT_UPDATE,     /* %S{s | ...}; detail: S */
	FACTS_SITE_STRUCT_MATCH,      /* %S{...} in a pattern; detail: S */
	FACTS_SITE_TO_ATOM, /* String.to_atom & co. on a non-literal; detail: "Mod.fun/arity" */
	FACTS_SITE_APPLY,   /* apply(M, :f, args) with literal M and f; detail: "M.f" */
	FACTS_SITE_BODY,    /* a clause body: hash (exact), hash2 (variables and literals
	                       abstracted), size (named nodes) */
	FACTS_SITE_KIND_COUNT
};

struct facts_site {
	enum facts_site_kind kind;
	const char *name; /* the function it is in or about; NULL for none */
	int arity;
	uint32_t line;
	const char *detail; /* NULL when the kind has none */
	uint64_t hash, hash2;
	uint32_t size;
};

struct facts_module {
	const char *name; /* display form */
	enum facts_module_kind kind;
	const char *impl_for; /* defimpl ... for: X, else NULL */
	const char *protocol; /* defimpl's protocol, else NULL */
	uint32_t line_start, line_end;
	bool has_moduledoc;
	bool moduledoc_false;
	enum facts_origin origin;
	struct gi_vec functions;     /* struct facts_function */
	struct gi_vec refs;          /* struct facts_ref */
	struct gi_vec struct_fields; /* const char * (defstruct field names) */
	struct gi_vec callbacks;     /* const char * ("name/arity" of @callback / @macrocallback) */
	bool has_struct;
	struct gi_vec sites; /* struct facts_site */
};

struct facts_error {
	uint32_t line; /* 1-based */
	const char *message;
};

struct facts_file {
	struct gi_arena arena;
	const char *path;
	enum facts_origin origin;
	uint64_t size;
	int64_t mtime_ns;
	uint64_t content_hash;
	struct gi_vec modules; /* struct facts_module */
	struct gi_vec errors;  /* struct facts_error; parse errors, file still indexed */
	bool skipped;          /* binary/unreadable/too big: nothing extracted */
	/* The clause bodies' FACTS_SITE_BODY sites are in `modules`: false only
	 * when the Elixir reader was told to leave them out
	 * (EX_PARSE_NO_BODY_HASHES); facts_file_new sets it (readers that make
	 * none, the BEAM one, have nothing left to hash). */
	bool bodies_hashed;
	const char *skip_reason;
};

/* Returns a new, empty facts_file for `path` (copied) that the caller frees with facts_file_free.
 */
struct facts_file *facts_file_new(const char *path, enum facts_origin origin);
/* Frees the file's facts and everything they point to; NULL does nothing. */
void facts_file_free(struct facts_file *f);

/* Helpers for readers: allocation in the file's arena. */
struct facts_module *facts_module_add(struct facts_file *f, const char *name);
struct facts_function *facts_function_add(struct facts_file *f, struct facts_module *m,
                                          const char *name, int arity);
void facts_ref_add(struct facts_file *f, struct facts_module *m, enum facts_ref_kind kind,
                   const char *target, uint32_t line);
void facts_call_add(struct facts_file *f, struct facts_function *fn, enum facts_call_kind kind,
                    const char *module, const char *function, int arity, uint32_t line);
void facts_error_add(struct facts_file *f, uint32_t line, const char *message);
/* Adds a site to `m` (strings borrowed: arena or static) and returns it for
 * the hash fields. */
struct facts_site *facts_site_add(struct facts_module *m, enum facts_site_kind kind,
                                  const char *name, int arity, uint32_t line, const char *detail);

/* Static names for enums (stable: stored in the database and shown in JSON). */
const char *facts_ref_kind_name(enum facts_ref_kind kind);
int facts_ref_kind_parse(const char *name, enum facts_ref_kind *out);
const char *facts_function_kind_name(enum facts_function_kind kind);
const char *facts_module_kind_name(enum facts_module_kind kind);
const char *facts_call_kind_name(enum facts_call_kind kind);
const char *facts_site_kind_name(enum facts_site_kind kind);

#endif
