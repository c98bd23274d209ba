/*
 * worker_int.h - what the files of the worker daemon share: its state
 * (struct api_worker: the connection pools, the locks, what the monitors
 * said, the counters of /metrics) and the calls on it that the routes make.
 * worker.c owns the state, the object-code cache's bounds, the liveness
 * deadline and the daemon's start and stop; worker_routes.c answers the
 * HTTP routes (docs/API.md) and the MCP server's static queries. Every call
 * below is thread-safe (it takes the lock it needs) unless it says not.
 */
#ifndef GIULIA_API_WORKER_INT_H
#define GIULIA_API_WORKER_INT_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/dash.h"
#include "api/http.h"
#include "api/worker.h"
#include "base/map.h"
#include "graph/query.h"
#include "mcp/mcp.h"
#include "store/obs_store.h"

#define POOL_IDLE_MAX           32
#define LIST_LIMIT_MAX          1000
#define SESSION_ID_MAX          128
#define NODE_NAME_MAX           256
#define SHUTDOWN_GRACE_MS       15000
#define OBJECT_CODE_BATCH       4096
#define OBJECT_CODE_MAX         (16 * 1024 * 1024)
#define WORKER_INGEST_BUCKETS   10
#define WORKER_INGEST_BATCH_MAX 256  /* snapshots in one POST /api/runtime/ingest/batch */
#define ALIVE_SESSIONS_MAX      1024 /* sessions in one POST /api/runtime/ingest/alive */
/* The longest module name whose cache file and its temporary
 * (NAME.beam.tmp.PID, PID up to 7 digits) fit the 255-byte file name limit. */
#define OBJECT_MODULE_NAME_MAX 238 /* 255 - strlen(".beam") - strlen(".tmp.") - 7 */
_Static_assert(OBJECT_MODULE_NAME_MAX == 255 - 5 - 5 - 7, "the message below says 238");

struct kg_pooled {
	char *path;
	unsigned generation;
	struct kg_db *db;
};

struct api_worker {
	char *data_dir;
	char *store_location; /* NULL: SQLite under data_dir; else a postgres:// URI */
	/* This run's name in a shared store (HOST/PID/RANDOM): the owner of the
	 * observations it ingests, the only ones its shutdown interrupts. */
	char instance[OBS_STORE_OWNER_MAX + 1];
	struct api_server *server;
	int64_t started_ms;
	pthread_mutex_t lock; /* guards the pools and `scanning` */
	struct obs_store *store_idle[POOL_IDLE_MAX];
	int store_idle_len;
	struct kg_pooled kg_idle[POOL_IDLE_MAX];
	int kg_idle_len;
	unsigned generation;
	struct gi_map scanning; /* canonical path -> (void *)1 while a scan runs */
	pthread_mutex_t finalize_lock;
	/* One writer at a time in this process: SQLite allows one anyway, and
	 * waiting on a mutex is fairer and faster than its busy-retry sleeps. */
	pthread_mutex_t write_lock;
	struct mcp_server *mcp; /* /mcp; set once the port is known */
	struct api_dash *dash;  /* the dashboard at / (dash.h) */

	/* Liveness deadline (see liveness_run); `stopping` under `lock`. */
	int liveness_intervals;
	int64_t started_wall_ms;
	size_t ebin_cache_bytes;
	long long ebin_cache_age_ms;
	pthread_t liveness_thread;
	bool liveness_started, stopping;
	pthread_cond_t liveness_wake;
	/* What the monitors said of their sessions, in memory (see "liveness"):
	 * session_id -> {at_ms, next_seq, lease_ms, interval_ms, ended}, at
	 * most HEARD_MAX, under heard_lock. */
	pthread_mutex_t heard_lock;
	json_t *heard;

	/* /metrics: requests of the ingest routes by outcome, and the time
	 * snapshot ingests took (updated with __atomic builtins). */
	unsigned long long ingest_outcomes[3][3]; /* [route][2xx, 4xx, 5xx] */
	unsigned long long ingest_buckets[WORKER_INGEST_BUCKETS + 1];
	unsigned long long ingest_us_sum;
};

/* The routes counted for /metrics (worker_count). */
enum { COUNT_INGEST, COUNT_FINALIZE, COUNT_OBJECT_CODE };

/* The upper bounds, in seconds, of the buckets of the ingest time's
 * histogram (the last bucket, +Inf, is implicit). */
extern const double INGEST_BOUNDS[WORKER_INGEST_BUCKETS];

/* ---- the state (worker.c) ---- */

/* Counts a request of `route` (COUNT_*) that answered `status` after `us`
 * microseconds (the time only for COUNT_INGEST). Lock-free. */
void worker_count(struct api_worker *w, int route, int status, int64_t us);

/* Borrows a connection to the observation store (opened when the pool has
 * none); give it back with worker_store_release. 0 or an error code. */
int worker_store_acquire(struct api_worker *w, struct obs_store **out);
void worker_store_release(struct api_worker *w, struct obs_store *st);

/* Borrows a connection to the index database `db_path` into *out (a pooled
 * one of the current generation, else a new one); give it back with
 * worker_kg_release. 0 or an error code. */
int worker_kg_acquire(struct api_worker *w, const char *db_path, struct kg_pooled *out);
void worker_kg_release(struct api_worker *w, struct kg_pooled *p);

/* Drops every pooled index connection (after a scan rewrote a database). */
void worker_kg_pool_invalidate(struct api_worker *w);

/* Keeps the object-code cache within its bounds: files not received for
 * longer than the age go, then the oldest until the total fits. Called
 * with finalize_lock held, so that no finalize reads a directory being
 * pruned. */
void worker_ebin_cache_evict(struct api_worker *w);

/* Finalises through profile_finalize with the worker's pools and locks;
 * *resp (caller decrefs) on success, *step names what failed otherwise. */
int worker_finalize(struct api_worker *w, struct obs_store *st, json_t *finalize, json_t **resp,
                    const char **step);

/* Notes that the monitor of `sid` spoke now; `next_seq` (-1: unknown) is
 * the number its next snapshot will have, lease and interval 0 when not
 * said. Returns true when this worker has ended that observation. */
bool worker_heard_note(struct api_worker *w, const char *sid, long long next_seq, long long lease,
                       long long interval);

/* Forgets `sid` (its observation was finalized by its monitor). */
void worker_heard_forget(struct api_worker *w, const char *sid);

/* ---- the routes (worker_routes.c) ---- */

/* The MCP server's static queries (struct mcp_config's `query`), answered
 * from the pooled index connections; ctx is the struct api_worker. */
int worker_mcp_query(void *ctx, const char *project, const char *name,
                     const struct kg_query_params *p, json_t **out, char *err, size_t err_size);

/* The raw routes (/mcp, the dashboard, /metrics) and those answered without
 * the token (the dashboard's page and files); api_worker_routes (worker.h)
 * has the JSON ones. Their handlers' ctx is the struct api_worker. */
extern const struct api_raw_route worker_raw_routes[];
extern const struct api_raw_route worker_public_routes[];

#endif
