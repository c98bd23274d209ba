/*
 * profile_view.h - the one typed reading of a profile (docs/PROFILE.md).
 *
 * The rules, the text and HTML reports and the comparison read profiles
 * through fuse_view_parse instead of looking keys up by string, so that a
 * renamed field fails to compile here, and a field the builder (fuse.c)
 * stops writing fails the unit test that parses a built profile through the
 * view (tests/unit/fuse.c). The key strings of a profile live in two places
 * only: the builder that writes them and the parser in profile_view.c.
 *
 * Reading is tolerant, as for snapshots (observe/snapshot_view.h): a
 * missing, null or wrong-typed value is "unknown" (NAN for numbers, NULL for
 * strings, FUSE_TRI_UNKNOWN for a yes/no that may be null, an empty list, a
 * section with `present` false), never invented. Every list is capped
 * (FUSE_VIEW_MAX_*): entries past a cap are dropped and counted in
 * `truncated`. Versions 1..FUSE_VIEW_VERSION are read; a newer one is
 * refused (GI_EUNSUPPORTED) rather than half understood; a profile without
 * a version is read as version 1 (profiles stored before it was written).
 *
 * Strings and the open JSON parts (a recommendation's evidence) are borrowed
 * from the profile, which the view holds a reference to; everything else
 * lives in the view's arena. Not thread-safe per view; distinct views may
 * be used from distinct threads.
 */
#ifndef GIULIA_FUSE_PROFILE_VIEW_H
#define GIULIA_FUSE_PROFILE_VIEW_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/arena.h"

#define FUSE_VIEW_VERSION 1 /* the newest profile schema this parser reads */

#define FUSE_VIEW_MAX_LIST     1000  /* hot lists, workload, processes, recommendations */
#define FUSE_VIEW_MAX_HOTSPOTS 20000 /* trace_hotspots: every traced function */
#define FUSE_VIEW_MAX_NAMES    1000  /* a list of strings (traced modules, callers...) */
#define FUSE_VIEW_MAX_SERIES   1000  /* points of one time series */
#define FUSE_VIEW_MAX_SUBLIST  100   /* a list inside a list entry (classes, functions) */

/* A yes/no that the profile may leave null (graph facts without a graph). */
enum fuse_tri { FUSE_TRI_UNKNOWN = -1, FUSE_TRI_FALSE = 0, FUSE_TRI_TRUE = 1 };

/* "yes", "no" or "-" (unknown), as the reports print a yes/no (static). */
const char *fuse_view_tri_text(enum fuse_tri t);

/* A list of strings; entries that are not strings are left out. */
struct fuse_view_names {
	const char **items;
	size_t len;
};

/* STAT and GROWTH of docs/PROFILE.md, and the extra fields of run_queue,
 * scheduler_utilisation, memory_bytes and process_count, in one shape: what
 * a metric does not carry is NAN. */
struct fuse_view_stat {
	bool present;
	double peak, avg, first, last, samples;
	double growth_bytes, start_quarter_avg, end_quarter_avg, trend_bytes, trend_ratio;
	double above_schedulers_share; /* run_queue */
	double high_share;             /* scheduler_utilisation */
};

/* metrics.memory_categories, in this order. */
enum fuse_view_memory_category {
	FUSE_MEM_BINARY,
	FUSE_MEM_ETS,
	FUSE_MEM_PROCESSES,
	FUSE_MEM_ATOM,
	FUSE_MEM_CODE,
	FUSE_MEM_SYSTEM,
	FUSE_MEM_CATEGORIES
};
/* "binary", "ets", ... (static strings). */
const char *fuse_view_memory_category_name(enum fuse_view_memory_category c);

struct fuse_view_session {
	bool present;
	const char *id, *node, *status, *reason, *project, *otp_release;
	double started_ms, stopped_ms, duration_ms, interval_ms, snapshot_count;
	double snapshots_missing, schedulers_online;
	size_t ngaps; /* entries of session.gaps */
	struct fuse_view_names traced_modules;
};

struct fuse_view_metrics {
	bool present;
	struct fuse_view_stat memory_bytes, process_count, reductions_per_second, run_queue,
	    scheduler_utilisation;
	struct fuse_view_stat memory_categories[FUSE_MEM_CATEGORIES];
	double reductions_total;
};

/* One time series of `series`: non-numbers are NAN. */
struct fuse_view_points {
	double *values;
	size_t len;
};

struct fuse_view_series {
	bool present;
	struct fuse_view_points t_s, run_queue, scheduler_utilisation, memory_bytes,
	    reductions_per_second, process_count;
};

struct fuse_view_explained {
	bool present;
	double share, low_below;
	const char *basis, *note;
	bool low;
};

/* A hot module's graph facts (all unknown without a graph). */
struct fuse_view_module_graph {
	bool present;
	bool in_graph, external;
	double ca, ce, in_degree, out_degree, complexity, complexity_max, instability, centrality,
	    heat, change_risk;
	enum fuse_tri hub;
	const char *zone, *file;
};

/* hot_modules[].hottest_functions[] */
struct fuse_view_hottest {
	const char *name, *by;
	double arity, reductions_share, samples, calls, calls_per_second;
};

/* An entry of hot_modules or ownership_modules. */
struct fuse_view_module {
	const char *module, *basis;
	double reductions, reductions_share, samples, memory_bytes, processes, sample_count;
	bool project, traced;
	struct fuse_view_module_graph graph;
	struct fuse_view_hottest *hottest;
	size_t nhottest;
};

/* An entry of hot_functions (the executing view). */
struct fuse_view_function {
	const char *module, *function;
	double arity, reductions, reductions_share, samples, calls, cyclomatic;
	bool project;
};

/* executing.blocked.call_sites[] and executing.blocked.logging.call_sites[]. */
struct fuse_view_call_site {
	const char *function;
	double samples, logger_samples, reductions;
	bool database;
};

struct fuse_view_blocked {
	bool present;
	double samples, share_of_samples, callers_avg;
	double logger_samples, logger_share_of_samples, logger_share_of_blocked, logger_callers_avg;
	double database_samples, database_share_of_blocked, database_share_of_samples;
	struct fuse_view_call_site *call_sites;
	size_t ncall_sites;
	struct {
		bool present;
		double caller_reductions, caller_share, samples;
		struct fuse_view_call_site *call_sites;
		size_t ncall_sites;
	} logging;
};

struct fuse_view_executing {
	bool present, sampled;
	double snapshots, period_ms, ticks, samples_running, samples_waiting, failed_ticks,
	    dropped_samples, reductions_sampled, coverage, project_share, platform_share,
	    plumbing_share;
	const char *project_rule;
	struct fuse_view_blocked blocked;
};

/* trace_hotspots[]: every traced function. */
struct fuse_view_hotspot {
	const char *mfa, *module, *function, *kind, *visibility, *lambda_of, *class_name,
	    *class_basis, *data_layer, *calls_repo, *estimate_note;
	double arity, calls, calls_share, calls_per_second, measured, low, high;
	double cyclomatic, cognitive, line, time_us, time_calls, mean_us, time_share, fan_in;
	bool internal, in_graph;
	enum fuse_tri firm, module_hub;
	struct {
		bool present;
		double windows, min, avg, max;
	} per_window;
	struct fuse_view_names callers, callees;
};

struct fuse_view_trace_budget {
	bool present;
	double overhead, windows, duty_mean, cost, exposure_mean, node_cost, traced_ms,
	    paused_windows, calls_measured, calls_estimated;
	const char *counts;
};

struct fuse_view_tracing {
	bool present;
	const char *mode;
	double windows, traced_ms;
	struct fuse_view_names foreign;
};

struct fuse_view_observer {
	bool present;
	double windows, cost, cost_max, session, counting, budget, over_budget_windows, reductions,
	    other_observers, sample_period_ms, sample_period_max_ms, scan_every_max,
	    scan_every_max_ms;
	bool within_budget, sampler_slowed, scan_thinned;
};

struct fuse_view_call_time {
	bool present;
	double windows, time_us, flagged_avg, flagged_max, refused_max, trace_messages;
	bool suspended;
	const char *isolation;
};

/* workload[].classes[] */
struct fuse_view_class {
	const char *function, *class_name, *basis;
	double calls;
};

/* workload[].database: the facts of rule 4. */
struct fuse_view_database {
	bool present;
	double pipeline_helper_calls, repo_reads_per_window, repo_call_share, reads_in_vm_share,
	    driver_call_share;
	bool uses_ecto_repo, data_layer, repo_traced;
	const char *data_layer_reason, *repo, *repo_share_basis, *storage;
	struct fuse_view_names calls_traced_modules;
};

/* An entry of workload (per traced module). */
struct fuse_view_workload {
	const char *module;
	double calls, calls_per_second, operations, operations_per_second, windows, reads, writes,
	    pipeline, other, read_write_ratio, read_share, reads_per_window, writes_per_window;
	struct fuse_view_class *classes;
	size_t nclasses;
	struct fuse_view_database database;
};

struct fuse_view_pipeline_module {
	const char *module;
	double helper_calls, db_operations, ratio;
};

struct fuse_view_pipeline {
	bool present;
	double helper_calls, db_operations, ratio;
	const char *verdict;
	struct fuse_view_names helpers;
	struct fuse_view_pipeline_module *modules;
	size_t nmodules;
};

/* A process of processes.top_cpu, .logger, .mailboxes or .memory_growth:
 * one shape, each list filling its own fields (docs/PROFILE.md, PROC). */
struct fuse_view_process {
	const char *pid, *registered_name, *module, *running_module, *initial_call;
	bool logger;
	double rank, reductions, reductions_share, reductions_per_second, samples, max_queue;
	/* mailboxes */
	double first, last, max, start_quarter_avg, end_quarter_avg, rising_steps, steps,
	    dependents;
	enum fuse_tri hub;
	/* memory_growth */
	double first_bytes, last_bytes, growth_bytes;
};

struct fuse_view_processes {
	struct fuse_view_process *items;
	size_t len;
};

struct fuse_view_table {
	const char *name, *storage;
	double size;
};

struct fuse_view_storage {
	bool present;
	struct fuse_view_table *mnesia_tables, *dets_files;
	size_t nmnesia_tables, ndets_files;
};

/* A finding merged into a recommendation (its "also" list). */
struct fuse_view_also {
	const char *id, *finding;
	double rule;
};

/* A recommendation (docs/RULES.md). `evidence` is the rule's open JSON
 * object, borrowed (NULL when absent): reports print it whole. */
struct fuse_view_recommendation {
	const char *id, *severity, *subject, *finding, *advice;
	double rule, priority;
	struct fuse_view_names ids;
	const char *reader; /* evidence.reader (rule 10), or NULL */
	const json_t *evidence;
	struct fuse_view_also *also;
	size_t nalso;
};

struct fuse_view {
	json_t *json; /* the profile, one reference held by the view */
	long version; /* -1 when absent */
	struct fuse_view_session session;
	struct fuse_view_metrics metrics;
	struct fuse_view_series series;
	struct fuse_view_explained explained;
	const char *hot_modules_basis;
	struct fuse_view_module *hot_modules, *ownership_modules;
	size_t nhot_modules, nownership_modules;
	bool has_hot_functions; /* the profile has the list (maybe empty) */
	struct fuse_view_function *hot_functions;
	size_t nhot_functions;
	struct fuse_view_executing executing;
	struct fuse_view_hotspot *hotspots;
	size_t nhotspots;
	struct fuse_view_trace_budget trace_budget;
	struct fuse_view_tracing tracing;
	struct fuse_view_observer observer;
	struct fuse_view_call_time call_time;
	bool has_workload; /* the profile has the list (maybe empty) */
	struct fuse_view_workload *workload;
	size_t nworkload;
	struct fuse_view_pipeline pipeline;
	bool has_processes;
	struct fuse_view_processes top_cpu, loggers, mailboxes, memory_growth;
	bool has_loggers; /* processes.logger is a list (maybe empty) */
	struct fuse_view_storage storage;
	struct {
		bool present, attached, answered;
	} graph;
	struct fuse_view_names errors;
	struct fuse_view_recommendation *recommendations;
	size_t nrecommendations;
	size_t truncated; /* list entries dropped by the caps */
	struct gi_arena arena;
};

/* Fills `out` from `profile` (borrowed; the view takes its own reference,
 * released by fuse_view_destroy). Errors: GI_EINVAL when `profile` is not
 * an object, GI_EUNSUPPORTED when its version is newer than
 * FUSE_VIEW_VERSION (`out` is then empty but may still be destroyed). */
int fuse_view_parse(json_t *profile, struct fuse_view *out);
/* Releases what `v` holds; the view is empty afterwards. NULL does nothing. */
void fuse_view_destroy(struct fuse_view *v);

/* The hot module entry of `module`, or NULL (borrowed from the view). */
const struct fuse_view_module *fuse_view_hot_module(const struct fuse_view *v, const char *module);
/* The workload entry of `module`, or NULL (borrowed from the view). */
const struct fuse_view_workload *fuse_view_workload_of(const struct fuse_view *v,
                                                       const char *module);

#endif
