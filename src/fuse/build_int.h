/*
 * build_int.h - what the files of the profile builder share: the
 * accumulators one pass over the snapshots fills (accumulate.c), the joins
 * of what they saw with the knowledge graph (join.c), and the profile's
 * sections made of both (sections.c); fuse.c drives them (fuse_builder_*).
 * Everything lives in one struct ctx per profile, with one arena; not
 * thread-safe (one builder per thread).
 */
#ifndef GIULIA_FUSE_BUILD_INT_H
#define GIULIA_FUSE_BUILD_INT_H

#include <jansson.h>
#include <stdbool.h>

#include "base/arena.h"
#include "base/map.h"
#include "base/vec.h"
#include "fuse/fuse.h"
#include "fuse/fuse_int.h"
#include "observe/snapshot_view.h"

struct kg_graph;

struct metric {
	double sum, peak, first, last;
	long n;
	struct gi_vec values; /* double, one per snapshot (NAN when missing) */
};

struct mod_stat {
	const char *name;
	double reductions;
	long samples, seen_seq;
	double mem_cur, mem_peak;
	long mem_seq;
	long processes_max, proc_cur, proc_seq;
};

struct proc_stat {
	const char *pid, *name, *module, *initial_call;
	const char *running; /* the application module of its current function, last seen */
	double reductions;
	long cpu_samples, seen_seq;
	double queue_first, queue_last, queue_max;
	long queue_samples, queue_rises, queue_steps;
	double queue_head_sum, queue_tail_sum; /* over the first and last quarter */
	long queue_first_seq, queue_last_seq;
	double mem_first, mem_last;
	long mem_samples;
	bool logger;
};

struct func_stat {
	const char *module, *function;
	long arity;
	const char *kind; /* read/write/pipeline/other, or private (from the graph) */
	bool internal;    /* the graph knows only callers in its own module */
	double total, min_present, max;
	long present;
	double time_us, time_calls; /* call_time: own time and calls in flagged processes */
	/* Under an overhead budget: the calls counted, and the variance of the
	 * total from the windows' intervals (independent windows add their
	 * variances; a carried window repeats an earlier one's figures, so its
	 * error adds in full: carried_sd). */
	bool estimated, unsteady;
	double measured, variance, carried_sd, window_sumsq;
	double est_low, est_high; /* the pooled interval (pool_estimates) */
	bool pooled;              /* scaled by the counted time over the session */
	/* The workload model (docs/RULES.md): what the function does to the
	 * data, on which evidence, and through which data layer. */
	const char *cls;   /* read, write, mixed, unknown, compute, pipeline */
	const char *basis; /* driver, graph, runtime, name */
	const char *layer; /* the data-layer module it reaches, or NULL */
	unsigned reach;    /* REACH_* bits of its static paths (where its data lives) */
	bool split;        /* runtime split: op_reads/op_writes hold its operations */
	double op_reads, op_writes;
};

/* What a function reaches in the data layer (bit set) through its static
 * call paths; memoised per function in ctx.reach. */
#define REACH_READ    1u
#define REACH_WRITE   2u
#define REACH_UNKNOWN 4u
#define REACH_DB      8u
#define REACH_OUTSIDE 16u   /* a driver whose data leaves the VM (sockets, ports) */
#define REACH_IN_VM   32u   /* mnesia: ETS tables of the node (ram/disc_copies) */
#define REACH_DETS    64u   /* DETS: a file behind one server process */
#define REACH_DEPTH   6     /* call edges followed from a traced function */
#define REACH_QUERIES 20000 /* function lookups in the graph per profile */
/* A traced module is a data layer by its driver calls only when functions
 * that touch the driver's data make at least this share of its counted
 * calls (docs/RULES.md, "Where data lives"). */
#define DATA_LAYER_CALL_SHARE 0.10

struct reach {
	unsigned effects;
	const char *layer; /* the data-layer module reached first */
	const char *basis; /* driver, graph, name, or NULL */
	int depth;         /* the depth it was computed with */
	bool busy;         /* being computed: a cycle sees nothing */
};

struct traced_mod {
	const char *name;
	long windows, seen_seq;
	double window_ms;
	double calls, raw_pipeline;            /* every traced call; pipeline helper calls */
	double reads, writes, pipeline, other; /* operations: see recount_operations */
	double reads_in_vm;                    /* reads whose data is ETS already (mnesia) */
	double layer_share;                    /* calls reaching a driver: NAN unknown, <0 unset */
	json_t *calls_traced;                  /* other traced modules its functions call */
	/* under a budget, over the session: the windows' time, the time it
	 * counted, and the node's work done while it counted (as time at the
	 * window's mean rate), for the pooled estimate (pool_estimates) */
	double budget_window_ms, budget_time_ms, budget_work_ms, budget_work_window_ms;
};

struct ctx {
	struct gi_arena arena;
	const struct fuse_config *cfg;
	struct fuse_thresholds thr;
	struct kg_db *graph;
	const struct kg_graph *g; /* graph's typed graph (join.c reads it), or NULL */
	bool graph_ok;
	struct gi_map mods, procs, funcs, traced, reach;
	long graph_queries;
	struct gi_vec mod_list, proc_list, func_list, traced_list; /* pointers */
	struct metric m_mem, m_procs, m_runq, m_util, m_rps, m_t;
	struct metric m_binary, m_ets, m_processes_mem, m_atom, m_code, m_system;
	double total_reductions, total_window_ms;
	long runq_above, util_high;
	int schedulers;
	long nsnap, quarter, total_snapshots; /* quarter: snapshots in a quarter */
	const char *otp_release, *node;
	double first_ts, last_ts;
	json_t *errors; /* unique error strings */
	struct call_time_stat {
		long windows; /* snapshots with a call_time section */
		double flagged_sum, flagged_max, refused_max, trace_messages;
		bool suspended, isolated;
	} ct;
	struct budget_stat {
		long windows, paused, duty_n, exposure_n; /* snapshots under an overhead budget */
		double overhead, cost, duty_sum, exposure_sum, measured, traced_ms;
	} budget;
	/* the observer's own cost over the session (snapshots' `observer`),
	 * weighted by their windows */
	struct observer_stat {
		long windows, over, with_counting, counting_full;
		double window_ms, cost_ms, share_ms, counting_ms, cost_max, budget, reductions;
		double other_processes_max, period_asked, period_max;
		double scan_every_max, scan_every_ms; /* the longest scan period, in
		                                         snapshots and about in ms */
	} obs;
	/* tracing over the session: windows with a trace section, their time,
	 * and what other tools held (unique notes, shared) */
	long trace_windows;
	double trace_ms;
	json_t *foreign;
	struct fuse_executing *executing;
	bool source_graph; /* the graph holds the project's source (not only object code) */
};

/* The pipeline helpers' names of `cfg` (NULL: the defaults of
 * docs/RULES.md), NULL-terminated (fuse.c). */
const char *const *fuse_pipeline_names(const struct fuse_config *cfg);

/* ---- accumulate.c: one pass over the snapshots ---- */

/* A metric with no value yet (its values vector to be destroyed by the
 * context); fuse_metric_avg is the mean of its finite values, NAN with none. */
void fuse_metric_init(struct metric *m);
double fuse_metric_avg(const struct metric *m);

/* Average of the finite values in the first (head true) or last quarter. */
double fuse_metric_quarter(const struct metric *m, bool head);

/* A copy of `s` (at most FUSE_MAX_NAME bytes) in the context's arena; NULL
 * for NULL. */
const char *fuse_ctx_strdup(struct ctx *c, const char *s);
/* The traced module of that name, or NULL. */
struct traced_mod *fuse_traced_find(struct ctx *c, const char *module);

/* The traced function module.function/arity, or NULL. */
struct func_stat *fuse_func_find(struct ctx *c, const char *module, const char *fn, long arity);

/* Adds snapshot `s` (seq `seq`) to every accumulator of `c`. */
void fuse_take_snapshot(struct ctx *c, const struct obs_view *s, long seq);

/* ---- join.c: the joins with the knowledge graph ---- */

/* The graph's module `module` (an index of c->g), or -1 when there is no
 * graph or it does not know the module; -1 is accepted wherever a module
 * or function index is taken, and reads as unknown. */
int fuse_join_module(struct ctx *c, const char *module);
/* The function module.fn/arity the graph defines, or -1. */
int fuse_join_function(struct ctx *c, const char *module, const char *fn, long arity);
/* One end of a call of the graph: the function called, or the caller
 * (strings borrowed from the graph). */
struct fuse_call_end {
	const char *module, *name;
	long arity;
};
/* How many calls function `fn` makes (`callers` false) or receives (true),
 * dispatch included, as function_details lists them; 0 for -1. */
size_t fuse_join_ncalls(struct ctx *c, int fn, bool callers);
/* The `k`th of them (k < fuse_join_ncalls), in the graph's order. */
struct fuse_call_end fuse_join_call(struct ctx *c, int fn, bool callers, size_t k);
/* Whether graph module `module` `use`s Ecto.Repo / is outside the project
 * (false for -1). */
bool fuse_join_uses_ecto_repo(struct ctx *c, int module);
bool fuse_join_external(struct ctx *c, int module);

/* The share of traced module `t`'s counted calls made by functions that
 * touch a driver's data (calls_driver_locally, three edges into its own
 * module), NAN when none was counted; memoised. A module is a data layer
 * for its callers when its hot paths reach the driver, not because one
 * cold function (a terminate/2, a start-up schema change) calls it. */
double fuse_join_driver_call_share(struct ctx *c, struct traced_mod *t);

/* Why `module` is a database module (a data layer), best evidence first:
 * it `use`s Ecto.Repo; the graph shows it calling a database driver; it is
 * traced and calls Ecto-style pipeline callbacks (prepare_query ...); last,
 * and never on the name alone: its name ends in "Repo" and it defines at
 * least two of Ecto.Repo's API functions. NULL when it is not one. Drivers
 * themselves are not data layers of the application. The reason is a
 * static string, or copied into the arena. */
const char *fuse_join_database_reason(struct ctx *c, const char *module);

/* fuse_join_database_reason(c, module) != NULL. */
bool fuse_join_module_is_database(struct ctx *c, const char *module);

/* Whether a function reaching `effects` waits on data outside the VM (or
 * in DETS): a database it reaches whose storage is not known (an adapter
 * called through a variable, a name) counts as outside; reads of mnesia's
 * ETS tables alone do not. */
bool fuse_join_reach_leaves_vm(unsigned effects);

/* Where the data a set of effects reaches lives: "external" (a driver
 * over sockets or ports, or a database whose driver the graph cannot see),
 * "dets", "mnesia" (ETS tables of the node, unless the node says a table
 * is disc_only_copies), or NULL when no database is reached. */
const char *fuse_join_storage_of(unsigned effects);

/* A hot module's "graph" object (docs/PROFILE.md); new reference. */
json_t *fuse_join_graph_fields(struct ctx *c, const char *module);
/* "Mod.fun/arity" strings of the callers (or callees) of graph function
 * `fn`, at most 50; new reference. */
json_t *fuse_join_mfa_list(struct ctx *c, int fn, bool callers);

/* The database module a function calls, directly or through functions of
 * its own module (lookup/1 -> from_store/1 -> Store.get/1), looking `depth`
 * local calls deep; copied into `buf`, or NULL. */
const char *fuse_join_repo_callee(struct ctx *c, const char *module, int details, int depth,
                                  char *buf, size_t size);

/* True when the graph knows callers of function `details` and all are in
 * `module`: then the function is a step of another operation of the module
 * (lookup/1 calling fetch/1), and counting both would count one operation
 * twice. */
bool fuse_join_only_local_callers(struct ctx *c, int details, const char *module);

/* The function a compiler-generated lambda or comprehension belongs to:
 * "-to_maps/1-fun-0-" and "-all/2-lc$^0/1-0-" name to_maps/1 and all/2.
 * Copies the name into `name` and returns true, or false for other names. */
bool fuse_join_lambda_parent(const char *fn, char *name, size_t size, long *arity);

/* Sets f->cls, f->basis and f->layer (docs/RULES.md, "The workload
 * model"). `d` is the function's graph node (or its parent's for a
 * lambda, named `fn`/`arity`), NULL when the graph does not know it. */
void fuse_join_classify_traced(struct ctx *c, struct func_stat *f, int d, const char *fn,
                               long arity);

/* Marks each blocked call site of the executing summary `x` with whether
 * its call leads to the database, and sums those samples: the waiting that
 * goes to the database (rule 8's headroom finding). */
void fuse_join_blocked_on_database(struct ctx *c, json_t *x);

/* Records in f's module which other traced modules its function calls. */
void fuse_join_note_traced_callees(struct ctx *c, struct func_stat *f, int d);

/* ---- sections.c: the profile's sections, from the accumulators and the joins ---- */

/* Each returns a new reference: the profile's section of that name
 * (docs/PROFILE.md). */
json_t *fuse_section_session(struct ctx *c, json_t *fin);
json_t *fuse_section_metrics(struct ctx *c);
json_t *fuse_section_series(struct ctx *c);

/* The session's gaps on the time axis of the series (seconds from the first
 * snapshot, as t_s): [{from_s, to_s, missing, cause}]; to_s is null for a
 * gap at the end; cause is the session gap's ("time", "reconnect", ...). */
json_t *fuse_section_series_gaps(const struct ctx *c, json_t *fin);

/* The ownership view: reductions of the processes attributed to a module by
 * registered name or initial call (docs/SNAPSHOT.md), i.e. who started or
 * registered them, not where they execute. Modules under the floor are left
 * out. */
json_t *fuse_section_ownership_modules(struct ctx *c, int top, bool skip_wrappers);

/* Attributes the executing view's stacks to project modules (graph or
 * target origin, docs/PROFILE.md). */
void fuse_section_attribute_executing(struct ctx *c);

/* Hot modules from the executing view (where the sampled processes ran),
 * project and platform alike, wrappers never, above the floor. */
json_t *fuse_section_executing_modules(struct ctx *c, int top);

/* Hot functions from the executing view, above the floor, joined with the
 * trace counts and the graph's complexity where known. */
json_t *fuse_section_hot_functions(struct ctx *c, int top);

/* Under a budget, the pooled estimate of each traced function's calls
 * (docs/RULES.md "The estimator"). */
void fuse_section_pool_estimates(struct ctx *c);

/* Every traced function, by calls, joined with its function in the graph. Also sets
 * "calls_repo" (the Repo-like module it calls, or null) for the database
 * signature of rule 4. */
json_t *fuse_section_hotspots(struct ctx *c);

/* What call_time measured and in how many processes, or null when the
 * session did not measure times (docs/PROFILE.md). */
json_t *fuse_section_call_time(struct ctx *c);

/* The overhead budget over the session, or null without one: the trace
 * counts are then estimates (docs/OBSERVE.md "Overhead budget"). */
json_t *fuse_section_budget(struct ctx *c);

/* What the observer cost the node over the session, measured on the node
 * (docs/PROFILE.md "observer"): null when no snapshot measured it (older
 * observers). */
json_t *fuse_section_observer(struct ctx *c);

/* Call counting over the session: how long, whether under a budget, and
 * what other tools held on the node (shared). */
json_t *fuse_section_tracing(struct ctx *c);

/* Operations of each traced module, from its functions' calls: each name
 * counts once, with the arity that has the most calls (default-argument
 * wrappers call the full arity, so adding every arity would count one
 * operation twice), and private functions and internal steps (known from the
 * graph; local call counting sees them) are left out. Needs func_list sorted
 * by calls. */
void fuse_section_recount_operations(struct ctx *c);

json_t *fuse_section_workload(struct ctx *c, json_t *hotspots);
json_t *fuse_section_pipeline(struct ctx *c);

/* Where the node keeps its tables (docs/PROFILE.md "storage"), from the
 * lines the monitor read at the end (probe/storage.erl): each mnesia table
 * with its storage type, DETS files open outside mnesia; null when the node
 * was not asked. Lines that do not parse are skipped. */
json_t *fuse_section_storage(json_t *fin);

json_t *fuse_section_processes(struct ctx *c);

#endif
