/*
 * monitor_int.h - what the files of the monitor daemon share: its state
 * (struct api_monitor, a struct node_state per node) and the calls on it
 * that the routes make. monitor.c owns the state, the observer's callbacks,
 * the object-code pull, the worker's view of the sessions and the daemon's
 * start and stop; monitor_routes.c answers the HTTP routes (docs/API.md).
 * Not thread-safe by itself: `lock` guards the nodes, the orphans and the
 * counters, `state_lock` (taken after `lock`) the nodes' state files.
 */
#ifndef GIULIA_API_MONITOR_INT_H
#define GIULIA_API_MONITOR_INT_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/alert_rules.h"
#include "api/http.h"
#include "api/live.h"
#include "api/monitor.h"
#include "api/monitor_metrics.h"
#include "api/pusher.h"
#include "api/runtime_stats.h"
#include "base/map.h"
#include "observe/beam_pull.h"
#include "observe/observe.h"

#define HISTORY_MAX       720
#define NODE_NAME_MAX     256
#define COOKIE_MAX        255
#define TRACE_MODULES_MAX 64
#define STOP_WAIT_MS      60000
#define SHUTDOWN_GRACE_MS 15000
#define FLUSH_MS          10000
/* How often the monitor tells the worker which sessions it runs
 * (POST /api/runtime/ingest/alive): well inside the worker's liveness
 * margin (10 s), so that a few lost words never end an observation. */
#define ALIVE_PERIOD_MS   2000
#define PULSE_WINDOW_MS   500
#define OBSERVED_MAX      BEAM_PULL_MODULES_MAX
#define PULL_DEADLINE_MS  30000
#define CLUSTER_DEFAULT   32   /* members listed by /api/monitor/cluster unless asked */
#define CLUSTER_MAX       1000 /* at most, whatever is asked */
#define PULL_TIMEOUT_MS   5000
#define PULL_BATCH_BYTES  (512 * 1024) /* base64 per request, under the 1 MB body limit */
#define PULL_MODULE_BYTES (900 * 1024) /* a module whose base64 is larger is skipped */

struct node_state {
	char *cookie; /* from /api/runtime/connect, or NULL */
	json_t *last; /* latest snapshot of an observation, or NULL (shared, never changed) */
	struct api_history history; /* compact points; the ring is allocated at the first */
	json_t *alerts;             /* of `last` and `history` by the monitor's rules, or NULL */
	bool observing;             /* an observation started here is running */
	char *session_cookie;       /* its cookie (NULL: the default), while it runs */
	json_t *observed;           /* module (display form) -> true, at most OBSERVED_MAX */
	/* The running observation's durable state (session_state_write), or NULL. */
	json_t *state;
	/* Its text up to next_seq's value, when next_seq is its last member
	 * (state_text), or NULL: built once, not serialised per snapshot. */
	char *state_prefix;
	size_t state_prefix_len;
	/* The state file open for in-place writes (under the monitor's
	 * state_lock, not its lock: written outside it). */
	struct {
		char sid[24]; /* the observation whose file `fd` is */
		int fd;       /* -1: none open */
		size_t len;   /* the file's length */
	} file;
	bool user_stop; /* the end under way was asked for by observe/stop */
	/* The last observation of the node that ended on its own (node down,
	 * ...), until observe/stop reports it: {session_id, status, reason}. */
	json_t *ended;
	struct api_node_totals totals; /* of the running observation, for /metrics */
};

struct api_monitor {
	struct api_server *server;
	struct obs_manager *manager; /* NULL when the observer is not in this build */
	int manager_rc;
	struct api_pusher *pusher;
	char *worker_url;
	char *worker_token;
	int64_t started_ms;
	pthread_mutex_t lock;
	pthread_mutex_t state_lock; /* the nodes' state files (node_state.file); after `lock` */
	struct gi_map nodes;        /* node name -> struct node_state* */
	bool shutting_down;         /* set before the manager is freed (which joins its thread) */
	int pulls;                  /* object-code pull threads running (under lock) */
	pthread_cond_t pulls_done;
	/* DATA/monitor-sessions: one SESSION.json per running observation, so
	 * that a monitor started after this one died can adopt or close it. */
	char *sessions_dir;
	json_t *orphans;       /* node -> state left by a monitor that died (under lock) */
	struct api_live *live; /* GET /api/monitor/stream (live.h) */
	/* The alive thread (alive_run): tells the worker every ALIVE_PERIOD_MS
	 * which sessions run; `alive_stop` under `lock`. */
	pthread_t alive_thread;
	pthread_cond_t alive_wake;
	bool alive_started, alive_stop;
	struct api_alert_rules *rules; /* --alert-rules, or NULL: the built-in set */
};

/* The alert rules in force: --alert-rules, else the built-in set. */
const struct api_alert_rules *monitor_rules(const struct api_monitor *m);

/* ---- the node state (monitor.c); every call below is under m->lock
 * unless it says otherwise, as the routes call them ---- */

/* The state of `node`, created (empty) when `create` and absent; NULL
 * otherwise. Owned by the monitor. Under m->lock. */
struct node_state *monitor_node_get(struct api_monitor *m, const char *node, bool create);

/* Replaces the node's durable state (taking the reference; NULL: none). */
void monitor_node_state_set(struct node_state *ns, json_t *state);

/* Writes the state (borrowed) of a running observation: {session_id, node,
 * interval_ms, top_n, trace_modules, project, started_ms, next_seq, ending?}.
 * Never the cookie. Written before the snapshot it counts is queued, so that
 * next_seq is above every seq a dead monitor handed out. Takes the locks it
 * needs. */
void monitor_session_state_write(struct api_monitor *m, json_t *state);

/* Removes the state file of observation `sid` and closes its descriptor
 * when `node` (may be NULL: an orphan's, never opened here) holds it. Takes
 * the locks it needs. */
void monitor_session_state_remove(struct api_monitor *m, const char *node, const char *sid);

/* The finalize that closes an orphan whose monitor died (caller decrefs). */
json_t *monitor_orphan_finalize(json_t *state, const char *reason);

/* Takes what the node's observation kept for the pull; false when there is
 * nothing to pull. *cookie_out and *observed_out become the caller's (the
 * cookie freed with monitor_cookie_wipe_free). Takes m->lock. */
bool monitor_pull_take(struct api_monitor *m, const char *node, char **cookie_out,
                       json_t **observed_out);

/* Wipes and frees a copy of a cookie; NULL does nothing. */
void monitor_cookie_wipe_free(char *c);

/* ---- the routes (monitor_routes.c) ---- */

/* The JSON routes and the raw ones (event stream, /metrics) that
 * api_monitor_start serves; their handlers' ctx is the struct api_monitor. */
extern const struct api_route monitor_routes[];
extern const struct api_raw_route monitor_raw_routes[];

#endif
