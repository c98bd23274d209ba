/*
 * graph.h - the in-memory knowledge graph of one project: modules, functions,
 * typed module edges, function call edges, and the metrics and topology
 * derived from them (complexity totals, Ca/Ce, instability, PageRank,
 * hubs, pairwise coupling, heat, change risk, god-module score, SCCs,
 * layers).
 *
 * Building: kg_graph_new(), then modules, functions, raw references and raw
 * calls (by name, in any order: targets may be added later), then
 * kg_graph_finish() resolves names, aggregates edges and computes every
 * metric once. After finish the graph is read-only; queries (query.c) read
 * the structs below directly. kg_graph_add_facts() feeds a whole facts_file.
 *
 * Invariants after finish: module and function indexes are stable; every
 * edge has from != to; edges are unique per (from, to) with a bitmask of
 * kinds (1u << enum facts_ref_kind); calls are unique per (caller function,
 * target module, name, arity); external modules (referenced, not defined)
 * have project == false and no functions of their own except those called.
 *
 * Metrics consider "core" modules only: project modules that are not test
 * modules (see docs/SCHEMA.md for every formula). Not thread-safe; a
 * finished graph may be read by several threads at once.
 */
#ifndef GIULIA_GRAPH_GRAPH_H
#define GIULIA_GRAPH_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/map.h"
#include "base/vec.h"
#include "source/facts.h"

#define KG_HUB_IN_DEGREE     3    /* in_degree at or above which a module is a hub */
#define KG_PAGERANK_DAMPING  0.85 /* PageRank damping factor */
#define KG_PAGERANK_MAX_ITER 100

struct kg_module {
	const char *name; /* display form */
	const char *file; /* relative to the project root; NULL for external */
	enum facts_module_kind kind;
	const char *impl_for, *protocol;
	uint32_t line_start, line_end;
	bool project; /* defined in the project (source or beam) */
	bool test;    /* defined in test/ or a *_test.exs file */
	bool has_moduledoc, moduledoc_false, has_struct;
	/* Its `__using__/1` quotes were read and applied to the modules that
	 * use it (kg_graph_finish), so calls are not resolved into it blindly. */
	bool using_read;
	/* A `use` (or @before_compile) splices into it code that the reader
	 * could not read (an unquoted variable or remote call, a `__using__`
	 * with no quote it could follow): it may define functions, callbacks
	 * and a @behaviour that the graph does not show. */
	bool inject_opaque;
	enum facts_origin origin;
	struct gi_vec functions;     /* int: function indexes */
	struct gi_vec out, in;       /* int: edge indexes */
	struct gi_vec callbacks;     /* const char * "name/arity" */
	struct gi_vec struct_fields; /* const char * */

	/* metrics (kg_graph_finish) */
	int public_count, private_count;
	int complexity_total, complexity_max;
	int ca, ce;                /* distinct core modules in / out */
	int in_degree, out_degree; /* in = ca; out = ce + external modules */
	double instability;        /* ce / (ca + ce), 0 when both are 0 */
	double centrality;         /* PageRank over core edges, sums to 1 */
	bool hub;                  /* in_degree >= KG_HUB_IN_DEGREE */
	bool has_tests;            /* a test module references it, or NameTest exists */
	int max_coupling;          /* max calls with one other core module, either way */
	double heat;               /* 0..100 */
	double change_risk;        /* see docs/SCHEMA.md */
	int god_score;             /* functions + 2 complexity + 3 in_degree */
	int specced, documented;   /* public functions with @spec / @doc */
	int scc;                   /* strongly connected component index, -1 outside core */
	int layer;                 /* topological layer, 0: depends on no core module */
};

struct kg_edge {
	int from, to;
	unsigned kinds; /* bit (1u << enum facts_ref_kind) per kind seen */
	int count;      /* references and calls behind the edge */
};

struct kg_function {
	int module;
	const char *name;
	int arity;
	enum facts_function_kind kind;
	bool is_public;
	bool defined; /* false: a called function of an external module, or unknown */
	uint32_t line_start, line_end, clauses, lines;
	bool has_doc, has_spec, has_impl, has_guard, doc_false;
	bool deprecated;    /* @deprecated: kept for the library's users */
	bool from_defaults; /* an arity that default arguments generate */
	int cyclomatic, cognitive, max_nesting;
	const char *delegate_to;
	const char *generated_by; /* the known macro that made it, or NULL */
	/* Dispatch kinds (1u << FACTS_REF_CALLBACK, _VALUE, _IMPL) that reach
	 * this function with no caller to name: a behaviour's callback, a
	 * module's child_spec/start_link reached through the module as a value,
	 * an impl of a protocol defined outside the project. */
	unsigned reached;
	struct gi_vec callers; /* int: call indexes whose to_fn is this function */
	struct gi_vec callees; /* int: call indexes whose from_fn is this function */
};

struct kg_call {
	int from_fn;
	int to_module;
	int to_fn; /* always set: undefined targets get a function entry with defined false */
	enum facts_call_kind kind;
	int count;
	/* FACTS_FROM_BEAM: known only from the object code of a module whose
	 * source is indexed too (kg_graph_call_fill). */
	enum facts_origin origin;
};

/* Pairwise coupling between two core modules: calls from `from` to `to`. */
struct kg_pair {
	int from, to;
	int calls;     /* call sites (counted with their multiplicity) */
	int functions; /* distinct functions of `to` called */
};

struct kg_scc {
	int first, count; /* a slice of kg_graph.scc_members */
	int layer;
};

struct kg_graph {
	struct gi_arena arena; /* every string of the graph */
	struct gi_vec modules; /* struct kg_module */
	struct gi_vec functions;
	struct gi_vec edges;
	struct gi_vec calls;
	struct gi_vec pairs;       /* struct kg_pair, sorted by calls descending */
	struct gi_vec sccs;        /* struct kg_scc in dependency order (leaves first) */
	struct gi_vec scc_members; /* int module indexes */
	int layer_count;
	struct gi_map module_index;   /* name -> index + 1 */
	struct gi_map function_index; /* "Mod\tname/arity" -> index + 1 */
	/* "name/arity" of the calls core code makes on a module held in a
	 * variable (`adapter.child_specs(m, c)`): any module's function of
	 * that name and arity may be their target. */
	struct gi_map dynamic_names;
	/* The project is a library (kg_graph_finish): its root mix.exs
	 * declares a Hex `package` (a `package` function in a mix.exs), or it
	 * has no root mix.exs (Elixir's own source tree). Its documented
	 * functions are API, not dead code. */
	bool library;
	/* A graph read from a snapshot (kg_graph_snapshot_read): one block
	 * holding the items of every module's and function's vectors, which
	 * are then not freed one by one. NULL for a graph built here. */
	void *pool;
	struct gi_vec raw_refs; /* pending until finish */
	struct gi_vec raw_calls;
	bool finished;
};

/* What a module is, for kg_graph_module_add (strings are copied). */
struct kg_module_info {
	const char *name, *file;
	enum facts_module_kind kind;
	const char *impl_for, *protocol;
	uint32_t line_start, line_end;
	bool test, has_moduledoc, moduledoc_false, has_struct;
	enum facts_origin origin;
};

/* Returns a new empty graph; free with kg_graph_free. */
struct kg_graph *kg_graph_new(void);
/* Frees the graph and everything in it; NULL does nothing. */
void kg_graph_free(struct kg_graph *g);

/* Adds a project module, or returns the existing one of that name (a module
 * defined twice, e.g. by source and beam, is merged: the first definition
 * keeps its file and lines). Returns the module index. */
int kg_graph_module_add(struct kg_graph *g, const struct kg_module_info *info);
/* Adds `fn` (strings copied; callers/callees ignored) to module `module`;
 * a function already present by name/arity is merged (clauses summed, the
 * complexity values added). Returns the function index. */
int kg_graph_function_add(struct kg_graph *g, int module, const struct kg_function *fn);
void kg_graph_callback_add(struct kg_graph *g, int module, const char *name_arity);
void kg_graph_struct_field_add(struct kg_graph *g, int module, const char *field);
/* A module-level reference from `module` to `target` (display form) of the
 * kinds in the bitmask, seen `count` times. */
void kg_graph_ref_add(struct kg_graph *g, int module, const char *target, unsigned kinds,
                      int count);
/* A call from function `fn`; `module` NULL means the enclosing module. */
void kg_graph_call_add(struct kg_graph *g, int fn, enum facts_call_kind kind, const char *module,
                       const char *function, int arity, int count);
/* Source + object code fusion: a reference or a call that the object code of
 * a module also indexed as source shows. It fills what the source lacks: a
 * module edge or call the source has already is left as the source counts
 * it (a missing edge kind is added); a new call is marked FACTS_FROM_BEAM. */
void kg_graph_ref_fill(struct kg_graph *g, int module, const char *target, unsigned kinds,
                       int count);
void kg_graph_call_fill(struct kg_graph *g, int fn, enum facts_call_kind kind, const char *module,
                        const char *function, int arity, int count);

/* Adds every module of `f` with its functions, refs and calls; `test` marks
 * them as test modules. Borrows `f`. */
void kg_graph_add_facts(struct kg_graph *g, const struct facts_file *f, bool test);

struct st_db;
/* Builds and finishes the knowledge graph of everything stored in `db`
 * (borrowed; graph/load.c, over the store's row iterators), read in one
 * transaction. Source definitions win over beam ones of the same module.
 * The caller frees *out with kg_graph_free. */
int kg_graph_load(struct st_db *db, struct kg_graph **out);

/* Resolves references and calls, aggregates edges and computes all metrics.
 * Call once; further additions are not allowed. */
void kg_graph_finish(struct kg_graph *g);

/* ---- snapshot: the finished graph as a file (snapshot.c) ----------------
 *
 * A cold process answers from the graph an index computed, read back from a
 * file beside the database (DB.graph) instead of rebuilt from its rows (see
 * docs/SCHEMA.md, "The graph snapshot"). `stamp` ties a snapshot to the
 * database contents it was computed from (the store's generation); a file
 * of another stamp, format version or byte order, truncated or damaged (its
 * checksum), or whose indexes point outside the graph, is refused and the
 * caller loads from the database. */
#define KG_SNAPSHOT_FORMAT 2                 /* bump when the file or the graph's meaning changes */
#define KG_SNAPSHOT_MAX    ((size_t)1 << 31) /* files above this size are refused */

/* Writes finished `g` (borrowed) to `path` atomically (a temporary file
 * renamed over it). Returns 0 or a negative GI_E* code. */
int kg_graph_snapshot_write(const struct kg_graph *g, uint64_t stamp, const char *path);
/* Reads the snapshot at `path` (mapped read-only, copied) into a new
 * finished graph *out (caller frees with kg_graph_free). GI_ENOENT: no file;
 * GI_EDBVERSION: another format, byte order or stamp (stale); GI_ECORRUPT:
 * truncated or damaged. */
int kg_graph_snapshot_read(const char *path, uint64_t stamp, struct kg_graph **out);
/* The file layer both snapshots share (the graph's, and the search
 * index's in graph/search.c): a 40-byte header (`magic`, 8 bytes; format;
 * byte-order mark; stamp; body length; checksum) and a body. Written
 * atomically (a temporary file renamed over `path`). */
int kg_snapshot_file_write(const char *path, const char *magic, uint32_t format, uint64_t stamp,
                           const void *body, size_t len);
/* The header kg_snapshot_file_write puts before the `len` bytes at `body`
 * (`magic`: 8 bytes), into the KG_SNAPSHOT_HEADER_LEN bytes at `out`. The
 * fuzz targets make their headers with it, to reach the bodies' readers. */
#define KG_SNAPSHOT_HEADER_LEN 40
void kg_snapshot_header_write(unsigned char *out, const char *magic, uint32_t format,
                              uint64_t stamp, const void *body, size_t len);
/* Checks the header of the `len` bytes at `data` and sets the body's place;
 * GI_EDBVERSION for another format, byte order or stamp, GI_ECORRUPT for
 * another magic, a truncated file or a checksum that does not match. */
int kg_snapshot_file_check(const void *data, size_t len, const char *magic, uint32_t format,
                           uint64_t stamp, const unsigned char **body, size_t *body_len);
/* Maps `path` read-only (at most KG_SNAPSHOT_MAX bytes): GI_ENOENT when
 * absent. Release with kg_snapshot_file_unmap. */
int kg_snapshot_file_map(const char *path, void **map, size_t *len);
void kg_snapshot_file_unmap(void *map, size_t len);
/* The checksum the header holds of a body of `len` bytes. */
uint64_t kg_graph_snapshot_checksum(const void *body, size_t len);
/* True when `path` holds a snapshot of this format, byte order and stamp
 * (its header only: the body is checked when read). */
bool kg_graph_snapshot_current(const char *path, uint64_t stamp);
/* The same from `len` bytes at `data` (borrowed; nothing of it is kept). */
int kg_graph_snapshot_parse(const void *data, size_t len, uint64_t stamp, struct kg_graph **out);

/* Lookups on a finished graph; -1 when absent. */
int kg_graph_module_find(const struct kg_graph *g, const char *name);
int kg_graph_function_find(const struct kg_graph *g, int module, const char *name, int arity);

static inline struct kg_module *kg_module_at(const struct kg_graph *g, int i)
{
	return &GI_VEC_AT(&g->modules, struct kg_module, i);
}
static inline struct kg_function *kg_function_at(const struct kg_graph *g, int i)
{
	return &GI_VEC_AT(&g->functions, struct kg_function, i);
}
static inline struct kg_edge *kg_edge_at(const struct kg_graph *g, int i)
{
	return &GI_VEC_AT(&g->edges, struct kg_edge, i);
}
static inline struct kg_call *kg_call_at(const struct kg_graph *g, int i)
{
	return &GI_VEC_AT(&g->calls, struct kg_call, i);
}
/* A core module: defined in the project and not a test module. */
static inline bool kg_module_is_core(const struct kg_module *m)
{
	return m->project && !m->test;
}

/* True when `path` (relative to the project root) holds tests, as Mix sees
 * them: under one of `test_paths` (NULL-terminated list of directories
 * relative to the root, as mix.exs's `test_paths:` gives them; NULL for the
 * default, `test`), under an umbrella app's `apps/NAME/test/`, or named
 * *_test.exs. A file under lib/ is library code even with a `test` directory
 * in its path (`lib/phoenix/test/conn_test.ex` ships in the library).
 * Borrows its arguments. */
bool kg_path_is_test_in(const char *path, const char *const *test_paths);
/* kg_path_is_test_in with the default test paths. */
bool kg_path_is_test(const char *path);

/* Heat, change risk and god score from their inputs (exposed for tests and
 * for the documentation's examples). */
double kg_heat_score(int in_degree, int complexity, bool has_tests, int max_coupling);
double kg_change_risk(int complexity, int fan_out, int max_coupling, int public_count,
                      int functions, int fan_in);
const char *kg_heat_zone(double heat);

/* True when edge `e` has a kind other than the dispatch kinds (a direct
 * reference: alias, import, use, require, call, struct, behaviour, capture).
 * Module metrics (Ca/Ce, centrality, cycles, layers, coupling) count direct
 * edges only, so that dispatch edges add reach without changing them. */
static inline bool kg_edge_is_direct(const struct kg_edge *e)
{
	return (e->kinds & ~FACTS_REF_DISPATCH_MASK) != 0;
}
/* True when call kind `k` is a dispatch (mfa, apply, impl). */
static inline bool kg_call_kind_is_dispatch(enum facts_call_kind k)
{
	return k == FACTS_CALL_MFA || k == FACTS_CALL_APPLY || k == FACTS_CALL_IMPL;
}
/* The edge kind bit (1u << enum facts_ref_kind) that call kind `k` makes. */
unsigned kg_call_kind_edge_bit(enum facts_call_kind k);

/* Classification of a public function nobody in the project calls.
 * KG_PUBLIC_API is not dead: the library's API that its users call
 * (kg_function_api_reason), kept apart from the dead code. */
enum kg_dead_reason {
	KG_ALIVE = 0,
	KG_DEAD_CALLBACK,
	KG_DEAD_TEST_ONLY,
	KG_DEAD_UNREFERENCED,
	KG_PUBLIC_API,
	/* no call names it, but a call on a module held in a variable has its
	 * name and arity (graph.dynamic_names): perhaps reached */
	KG_DEAD_DYNAMIC,
};
/* Why public function `fn` belongs to its project's public API, or NULL:
 * "using" (__using__), "compiler_hook" (__before_compile__/1,
 * __after_compile__/2, __on_definition__/6, __after_verify__/1,
 * __deriving__/3), "macro_support" (named __name__: what macros emit into
 * their callers calls it), "deprecated" (@deprecated: kept for users),
 * "documented" (in a library, graph.library: an @doc, or a module with an
 * @moduledoc, and no @doc false). A static string. */
const char *kg_function_api_reason(const struct kg_graph *g, int fn);
/* True when a test module calls `fn`. */
bool kg_function_reached_from_tests(const struct kg_graph *g, int fn);
/* kg_function_dead_reason_opts with dispatch counted. */
enum kg_dead_reason kg_function_dead_reason(const struct kg_graph *g, int fn);
/* Whether public function `fn` of a core module is referenced from core
 * code: by a call of any kind, or (unless `direct_only`) reached by
 * dispatch (kg_function_dispatch_of). */
enum kg_dead_reason kg_function_dead_reason_opts(const struct kg_graph *g, int fn,
                                                 bool direct_only);
/* The dispatch kinds (bits 1u << enum facts_ref_kind) by which core code
 * reaches `fn`: its callers' dispatch calls from core modules and its
 * `reached` bits. */
unsigned kg_function_dispatch_of(const struct kg_graph *g, int fn);
const char *kg_dead_reason_name(enum kg_dead_reason r);

#endif
