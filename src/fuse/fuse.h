/*
 * fuse.h - fused profiles: an observation's snapshots joined with the
 * knowledge graph, with ranked rules, and its reports.
 *
 * A profile is a JSON object (shape in docs/PROFILE.md); the worker stores it
 * and serves it; `giulia profile` renders it. Rules and thresholds are in
 * docs/RULES.md. Pure functions of their inputs: thread-safe as long as the
 * inputs are not shared between threads.
 */
#ifndef GIULIA_FUSE_FUSE_H
#define GIULIA_FUSE_FUSE_H

#include <jansson.h>

#include "base/buf.h"

struct kg_db;

/* The thresholds of the rules (docs/RULES.md says what each means and why
 * its default is what it is). Fill with fuse_thresholds_default() and change
 * what you need. */
struct fuse_thresholds {
	int min_snapshots;                  /* rules about trends need at least this many (3) */
	double cpu_run_queue_per_scheduler; /* rule 1: run queue above this x schedulers (1.0) */
	double cpu_persistent_share;        /* rule 1: ... in this share of snapshots (0.5) */
	double cpu_utilisation;             /* rule 1: utilisation at or above this... (0.90) */
	double logger_share;                /* rule 2: logger share of reductions (0.05) */
	double logger_reductions_per_s;     /* rule 2: and at least this rate (5000) */
	int logger_top_rank;                /* rule 2: a logger process within the top N (5) */
	double cache_read_write_ratio;      /* rule 3: reads per write at least (5) */
	double cache_calls_per_s;           /* rule 3: calls per second at least (100) */
	double lookup_read_share;           /* rule 4: reads / (reads + writes) at least (0.8) */
	double lookup_calls_per_s;          /* rule 4: calls per second at least (10) */
	double lookup_repo_share;           /* rule 4: Repo calls per lookup at least (0.5) */
	double hub_share;                   /* rule 5: a hot module's share at least (0.10) */
	int hub_dependents;                 /* rule 5: and Ca at least (10) or the hub flag */
	int hub_cyclomatic;                 /* rule 5: a hot function's cyclomatic at least (10) */
	int hub_cognitive;                  /* rule 5: or cognitive at least (15) */
	double hub_function_calls_per_s;    /* rule 5: the function's calls per second (100) */
	double mailbox_min;                 /* rule 6: queue length reached at least (100) */
	double mailbox_rising_share;        /* rule 6: share of steps that rose (0.6) */
	double memory_growth_ratio;         /* rule 7: growth over the session at least (0.20) */
	double memory_growth_bytes;         /* rule 7: and at least (16 MiB) */
	double idle_utilisation;            /* rule 8: utilisation below (0.30) */
	double idle_run_queue;              /* rule 8: average run queue below (0.5) */
	double idle_reductions_per_scheduler; /* rule 8: reductions/s per scheduler below (5e6) */
	double headroom_utilisation;          /* rule 8, waiting: utilisation below (0.75) */
	double headroom_blocked_share;  /* rule 8, waiting: sampled time blocked at least (0.3) */
	double headroom_database_share; /* rule 8, waiting: of it leading to the database (0.5) */
	double advice_min_share;     /* rules 5, 9: a subject's share of the time at least (0.05) */
	double in_vm_read_share;     /* rules 3, 4, 8: reads already in memory at most (0.5) */
	double single_process_share; /* rule 9: one process's share of reductions (0.10) */
	double single_process_ratio; /* rule 9: times the other top processes' mean (3) */
	double single_process_reductions_per_s; /* rule 9: and reductions/s at least (500k) */
};

struct fuse_config {
	const char *const *read_names; /* NULL: the defaults of docs/RULES.md */
	const char *const *write_names;
	const char *const *pipeline_names; /* NULL: prepare_opts, default_options, prepare_query */
	const struct fuse_thresholds *thresholds; /* NULL: fuse_thresholds_default() */
	int hot_modules_top;                      /* 0: 15 */
};

/* Fills `t` with the default thresholds of docs/RULES.md. */
void fuse_thresholds_default(struct fuse_thresholds *t);

/* Classifies a function name with the configured (or default) word lists:
 * returns "read", "write", "pipeline" or "other" (static strings). */
const char *fuse_classify_function(const struct fuse_config *cfg, const char *name);

/* Builds the profile of one observation. `finalize` is the object of
 * docs/SNAPSHOT.md (may be NULL: derived from the snapshots, status
 * "interrupted"); `snapshots` a JSON array in seq order (NULL: none); `graph`
 * may be NULL (no project: graph fields are null); `cfg` may be NULL
 * (defaults). Borrows every input. *profile_out: caller decrefs. */
int fuse_profile_build(json_t *finalize, json_t *snapshots, struct kg_db *graph,
                       const struct fuse_config *cfg, json_t **profile_out);

/* The same, fed one snapshot at a time, so that a long session never has to
 * be in memory at once (the worker can read its snapshots row by row):
 * new, add each snapshot in seq order, finish, free.
 *
 * `snapshot_count` is how many snapshots will be added (the mailbox rule
 * compares the first and last quarter of the session); 0 when unknown, in
 * which case the first and the last snapshot stand for those quarters. `cfg`
 * is borrowed until free. fuse_builder_add borrows the snapshot (GI_EINVAL
 * for a non-object, GI_ETOOBIG past the cap); fuse_builder_finish may be
 * called once, borrows `finalize` and `graph`, and gives *profile_out (caller
 * decrefs). fuse_builder_free(NULL) does nothing. */
struct fuse_builder;
int fuse_builder_new(const struct fuse_config *cfg, long snapshot_count, struct fuse_builder **out);
int fuse_builder_add(struct fuse_builder *b, json_t *snapshot);
int fuse_builder_finish(struct fuse_builder *b, json_t *finalize, struct kg_db *graph,
                        json_t **profile_out);
void fuse_builder_free(struct fuse_builder *b);

/* Evaluates the rules of docs/RULES.md on a built profile (borrowed) and
 * returns its ranked recommendations (caller decrefs). fuse_profile_build
 * already stores them under "recommendations"; this is for re-evaluation
 * with other thresholds (`t` NULL: defaults). */
int fuse_rules_evaluate(json_t *profile, const struct fuse_thresholds *t, json_t **out);

/* Renders a profile for the terminal (80-100 columns), as a self-contained
 * HTML page (inline SVG, no network). Borrow the profile; append to `out`. */
int fuse_report_text(json_t *profile, struct gi_buf *out);
int fuse_report_html(json_t *profile, struct gi_buf *out);

/* What changed between two profiles (borrowed; `a` before, `b` after):
 * metric deltas, hot modules that entered or left, recommendations resolved
 * or new. *out: caller decrefs. */
int fuse_compare(json_t *a, json_t *b, json_t **out);
int fuse_compare_text(json_t *comparison, struct gi_buf *out);

#endif
