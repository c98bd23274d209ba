/*
 * obs_store_int.h - what the observation store's backends share: the table
 * of operations each backend fills (obs_sqlite.c, obs_pg.c), the object the
 * dispatcher (obs_store.c) sees first in each connection, and the helpers
 * that must behave the same whatever the engine (the gap walk, JSON field
 * access). Only for src/store/.
 *
 * Every operation has the contract of its obs_store_* namesake in
 * obs_store.h; `st` is the backend's own connection, whose first member is
 * the struct obs_store below.
 */
#ifndef GIULIA_STORE_OBS_STORE_INT_H
#define GIULIA_STORE_OBS_STORE_INT_H

#include "store/obs_store.h"

struct obs_store_ops {
	const char *name; /* "sqlite", "postgres" */
	void (*close)(struct obs_store *st);
	int (*snapshot_add)(struct obs_store *st, const char *session_id, const char *node,
	                    long long seq, json_t *snapshot, bool *duplicate);
	int (*finalize)(struct obs_store *st, json_t *finalize);
	int (*snapshots_each)(struct obs_store *st, const char *session_id, long *count,
	                      int (*fn)(void *ctx, json_t *snapshot), void *ctx);
	int (*gaps)(struct obs_store *st, const char *session_id, long long interval_ms,
	            long long next_seq, json_t **gaps_out, long long *missing_out);
	int (*observation_get)(struct obs_store *st, const char *session_id, json_t **out);
	int (*observations_list)(struct obs_store *st, int limit, json_t **out);
	int (*interrupt_running)(struct obs_store *st, const char *reason, int *count);
	int (*running_list)(struct obs_store *st, json_t **out);
	int (*profile_add)(struct obs_store *st, const char *session_id, const char *node,
	                   const char *project, json_t *profile, long long *id_out);
	int (*profile_get)(struct obs_store *st, long long id, json_t **out);
	int (*profiles_list)(struct obs_store *st, int limit, json_t **out);
	int (*project_put)(struct obs_store *st, const char *path, json_t *summary);
	int (*projects_list)(struct obs_store *st, json_t **out);
};

/* The first member of every backend's connection. */
struct obs_store {
	const struct obs_store_ops *ops;
	char owner[OBS_STORE_OWNER_MAX + 1]; /* obs_store_owner_set; "" for none */
};

/* The backends' constructors (contract of obs_store_open_location). */
int obs_sqlite_open(const char *data_dir, struct obs_store **out);
int obs_pg_open(const char *conninfo, struct obs_store **out);

/* The gap walk of obs_store_gaps, fed the (seq, timestamp_ms or -1) of a
 * session's snapshots in seq order, so that both engines find the same gaps.
 * init, then row per snapshot, then finish (which hands *gaps_out over to
 * the caller) or destroy (on an error). */
struct obs_gaps {
	json_t *gaps;
	long long interval_ms, prev_seq, prev_ts, missing;
};
void obs_gaps_init(struct obs_gaps *g, long long interval_ms);
void obs_gaps_row(struct obs_gaps *g, long long seq, long long timestamp_ms);
void obs_gaps_finish(struct obs_gaps *g, long long next_seq, json_t **gaps_out,
                     long long *missing_out);
void obs_gaps_destroy(struct obs_gaps *g);

/* o[k] as an integer, dflt when absent or not an integer. */
long long obs_json_int_or(json_t *o, const char *k, long long dflt);
/* o[k] as a string (borrowed), NULL when absent or not a string. */
const char *obs_json_str_or_null(json_t *o, const char *k);

#endif
