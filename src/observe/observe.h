/*
 * observe.h - the runtime observer's public contract.
 *
 * One-shot calls (pulse, top, trace) for the CLI, and a manager that runs many
 * observation sessions at once, each on its own interval, so that one slow or
 * frozen node never holds up another. Snapshots are JSON objects in the shape
 * of docs/SNAPSHOT.md.
 *
 * Cookies given here are kept in memory only for the life of the call or the
 * session, never logged, stored or returned.
 *
 * How it works on the target (one session process per observation, evaluated
 * by erl_eval, cleaning up after itself) is in docs/OBSERVE.md; the low-level
 * connection for other areas is observe/dist.h.
 *
 * Threads: obs_pulse and obs_trace may run in any number of threads at once.
 * A manager runs one thread of its own that drives all its sessions with
 * poll(2) and per-session deadlines; obs_session_start, _stop, _status and
 * _history may be called from any thread, but not concurrently with
 * obs_manager_free.
 */
#ifndef GIULIA_OBSERVE_OBSERVE_H
#define GIULIA_OBSERVE_OBSERVE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OBS_INTERVAL_DEFAULT_MS 5000
#define OBS_INTERVAL_MIN_MS     250
#define OBS_TOP_DEFAULT         10

/* The sampler (docs/OBSERVE.md "Where the time goes"): every period the
 * session process on the target reads status and current function of the
 * top K processes by reductions over the last interval, and a stack of the
 * first few of them. */
#define OBS_SAMPLE_PERIOD_DEFAULT_MS 100
#define OBS_SAMPLE_PERIOD_MIN_MS     5
#define OBS_SAMPLE_PERIOD_MAX_MS     1000
#define OBS_SAMPLE_PROCESSES_DEFAULT 10
#define OBS_SAMPLE_PROCESSES_MAX     50
#define OBS_SAMPLE_STACKS_DEFAULT    5 /* of the K, the busiest this many get a stack */
#define OBS_SAMPLE_DEPTH_DEFAULT                                         \
	8 /* frames per stack (the target's backtrace_depth caps it too) \
	   */

/* The lease (docs/OBSERVE.md "Sessions that survive a lost connection"):
 * the target's session process keeps its state and patterns for this long
 * without a request (a lost connection, a frozen observer) and then cleans
 * up by itself; the manager reconnects within it. At least two intervals. */
#define OBS_LEASE_DEFAULT_MS 10000
#define OBS_LEASE_MAX_MS     600000

/* The overhead budget (docs/OBSERVE.md "Overhead budget"): with a budget
 * the call_count patterns are set for a part of each cycle (one interval,
 * longer where the pattern barriers are slow), the part adapted to the
 * measured cost, and counts become estimates scaled by the work counted,
 * with an interval. The monitor's API applies OBS_OVERHEAD_DEFAULT (5%) when
 * a start names no budget; 0 counts every call (exact counts, which short
 * investigations and rare functions need). In struct obs_session_config,
 * 0 means every call counted: the default is the API's choice, not the
 * manager's. Counting pauses while scheduler utilisation is above
 * pause_above (default OBS_PAUSE_ABOVE_DEFAULT; >= 1 never). */
#define OBS_OVERHEAD_DEFAULT    0.05
#define OBS_OVERHEAD_MAX        0.5
#define OBS_PAUSE_ABOVE_DEFAULT 0.95

/* The guest's budget (docs/OBSERVE.md "The guest's budget"): everything a
 * session does on the target (its snapshots, the sampler, counting), as a
 * share of one scheduler. Over it the session lengthens the sampler's
 * period and gives counting less, and the snapshot says so. */
#define OBS_GUEST_BUDGET_DEFAULT 0.01
#define OBS_GUEST_BUDGET_MAX     0.5

struct obs_target {
	const char *node;   /* name@host */
	const char *cookie; /* NULL: GIULIA_COOKIE, else ~/.erlang.cookie */
	int timeout_ms;     /* per call; 0: default */
};

/* One snapshot (docs/SNAPSHOT.md) measured over `window_ms` (0: default 1000),
 * with top lists of `top_n` (0: OBS_TOP_DEFAULT). *snapshot_out is the
 * caller's. Errors: GI_EEPMD, GI_ENONODE, GI_ECOOKIE, GI_ETIMEOUT,
 * GI_ENODEDOWN, GI_EOTPVERSION, GI_EBADRPC, GI_EINVAL (bad node name);
 * dist_error_hint() in observe/dist.h says what to check for each. */
int obs_pulse(const struct obs_target *t, int window_ms, int top_n, json_t **snapshot_out);

/* The top `top_n` processes (0: OBS_TOP_DEFAULT) by `by` ("reductions"
 * over `window_ms`, 0: 1000; "memory" or "message_queue" at its end), as a
 * snapshot with that one top list filled, the others empty, and none of
 * the node's other sections (`giulia top`). No session: one rpc whose
 * process on the target waits out the window and ends when the caller's
 * connection drops. Observers' processes are left out as in a session's
 * lists. *snapshot_out is the caller's; errors as obs_pulse, GI_EINVAL for
 * another `by`. */
int obs_top(const struct obs_target *t, int window_ms, int top_n, const char *by,
            json_t **snapshot_out);

/* A series of snapshots from one session on the target (`giulia top
 * --watch`): obs_watch_open connects and starts the session (its top lists
 * of `top_n`), obs_watch_sample waits until `window_ms` after the previous
 * request and takes a snapshot over the time since the previous one (the
 * first: since the open), obs_watch_keepalive renews the session's lease
 * and answers the connection's ticks (call it at least every few seconds
 * while idle), obs_watch_close stops the session and disconnects (NULL does
 * nothing). The session cleans up by itself within its lease (10 s) if the
 * watcher stops talking, at once if its connection drops. Not thread-safe;
 * errors as obs_pulse. *snapshot_out is the caller's. */
struct obs_watch;
int obs_watch_open(const struct obs_target *t, int top_n, struct obs_watch **out);
int obs_watch_sample(struct obs_watch *w, int window_ms, json_t **snapshot_out);
int obs_watch_keepalive(struct obs_watch *w);
void obs_watch_close(struct obs_watch *w);

/* Call counts per function of `modules` (display names, NULL-terminated, at
 * most 64) over `window_ms`, local calls included:
 * {"node", "window_ms", "modules": [traced], "calls": [{module, function,
 * arity, count}], "errors": [...]}. Modules that are not loaded (or already
 * counted by another tool) are left out and named in "errors"; *out is the
 * caller's. Errors as obs_pulse. */
int obs_trace(const struct obs_target *t, const char *const *modules, int window_ms, json_t **out);
/* obs_trace, and with `call_time` also the time per function in the hottest
 * processes (docs/OBSERVE.md): a warm-up sample of up to 1 s first chooses
 * the processes to flag, then the window runs; the calls entries gain
 * "time_calls" and "time_us" and the result a "call_time" object
 * (docs/SNAPSHOT.md). */
int obs_trace_timed(const struct obs_target *t, const char *const *modules, int window_ms,
                    bool call_time, json_t **out);

/* The members of `t`'s cluster: the visible nodes it is connected to
 * (erlang:nodes/0), at most `max` of them, in its order; the seed itself is
 * not among them. *members_out is an array of *count_out names (free with
 * dist_strings_free of observe/dist.h); *total_out is how many the node listed. Errors as
 * obs_pulse. */
int obs_cluster_members(const struct obs_target *t, size_t max, char ***members_out,
                        size_t *count_out, size_t *total_out);

struct obs_manager;

struct obs_session_config {
	const char *node;
	const char *cookie;
	int interval_ms; /* clamped to >= OBS_INTERVAL_MIN_MS */
	int top_n;
	const char *const *trace_modules; /* NULL-terminated, or NULL */
	const char *project;              /* passed through to finalize, may be NULL */
	bool call_time;                   /* time per function too (docs/OBSERVE.md) */
	int timeout_ms;                   /* per call; 0: DIST_TIMEOUT_DEFAULT_MS (5000) */
	int sample_period_ms; /* 0: OBS_SAMPLE_PERIOD_DEFAULT_MS; < 0: no sampler; clamped */
	int sample_processes; /* K; 0: OBS_SAMPLE_PROCESSES_DEFAULT; clamped to the max */
	/* Adoption: continue an earlier session (its monitor died) under its id
	 * (1-16 of [0-9a-f]), numbering snapshots from first_seq, with its start
	 * time. NULL, 0, 0: a new session. */
	const char *session_id;
	long first_seq;
	int64_t started_ms;
	int lease_ms;        /* 0: OBS_LEASE_DEFAULT_MS; raised to 2 intervals, capped at the max */
	double overhead;     /* 0: count every call; else the budget, (0, OBS_OVERHEAD_MAX] */
	double pause_above;  /* 0: OBS_PAUSE_ABOVE_DEFAULT; >= 1: never pause */
	double guest_budget; /* 0: OBS_GUEST_BUDGET_DEFAULT; else (0, OBS_GUEST_BUDGET_MAX] */
};

/* Called on the manager's thread: with each snapshot (borrowed), and once at
 * the end with the finalize object of docs/SNAPSHOT.md (borrowed). Must not
 * block for long. */
struct obs_callbacks {
	void (*on_snapshot)(void *ctx, const char *session_id, json_t *snapshot);
	void (*on_end)(void *ctx, const char *session_id, json_t *finalize);
	void *ctx;
};

/* Starts the manager's thread; *out is the caller's (obs_manager_free). `cb`
 * is copied. */
int obs_manager_new(const struct obs_callbacks *cb, struct obs_manager **out);
/* Makes the manager call `fn` instead of on_snapshot, with the snapshot's
 * compact JSON text too (`len` bytes, NUL-terminated, borrowed for the
 * call; `ctx` is the callbacks' ctx): the manager serialises each snapshot
 * once for its own history, and a caller that needs the text (to deliver
 * it, to publish it) takes that rather than serialising again. Call it
 * before starting sessions. */
typedef void (*obs_snapshot_text_fn)(void *ctx, const char *session_id, json_t *snapshot,
                                     const char *text, size_t len);
void obs_manager_on_snapshot_text(struct obs_manager *m, obs_snapshot_text_fn fn);
/* Stops every session (as interrupted, cleaning up on the targets) and frees. */
void obs_manager_free(struct obs_manager *m);
/* Connects (in the calling thread, bounded by the timeout) and starts a
 * session; one per node. *session_id_out is the caller's (gi_free). Fails with
 * the connection errors above, GI_EEXIST (the node has a running session) or
 * GI_EBUSY (the manager is stopping, or 1024 sessions run). Trace modules
 * that cannot be traced do not fail the start: each snapshot's errors say why.
 * A session that ended (status kept) is replaced by a new one for its node. */
int obs_session_start(struct obs_manager *m, const struct obs_session_config *cfg,
                      char **session_id_out);
/* Stops the node's session (status complete) after a last snapshot; blocks
 * until on_end has been called. GI_ENOTFOUND when there is none. */
int obs_session_stop(struct obs_manager *m, const char *node);
/* Ends session `session_id` without a last snapshot, as interrupted with
 * `reason` (copied): its target-side process is asked to stop and clean
 * up, and on_end follows from the manager's thread. For a session nobody
 * wants the snapshots of any more (the worker ended its observation), so
 * that it does not keep tracing the node for nobody. Does not wait; callable
 * from any thread, callbacks included. GI_ENOTFOUND when no running session
 * has that id. */
int obs_session_abandon(struct obs_manager *m, const char *session_id, const char *reason);
/* [{session_id, node, interval_ms, started_ms, stopped_ms, snapshots,
 *   trace_modules, call_time, lease_ms, reconnects, connected, state, reason,
 *   timeouts, failures, last_snapshot_ms, last_error}]; timeouts counts the timeouts in
 *   a row, failures all samples that timed out or failed, last_snapshot_ms (wall clock,
 *   null before the first) when the latest snapshot was taken; state is starting,
 * running, complete or interrupted. The caller decrefs. */
json_t *obs_manager_status(struct obs_manager *m);
/* The last `limit` (<= 0: all kept, at most 60) snapshots of a node's session,
 * running or ended (newest last), or NULL when the node has none. The caller
 * decrefs. */
json_t *obs_manager_history(struct obs_manager *m, const char *node, int limit);

/* The manager's own measurements, for /metrics (docs/API.md), as
 * histograms over the OBS_METRICS_BUCKETS upper bounds (seconds) of
 * obs_metrics_bucket_bounds; the last count is for values above them all.
 * A snapshot's lateness, from the tick it was due to its completion (the
 * on_snapshot callback returned), is the sum of three parts: the dispatch
 * delay (tick to request sent: the manager's scheduling), the rpc (request
 * sent to the reply readable: the node and the wire) and the processing
 * (reply readable to completion: decoding, the callback, and the other
 * sessions' replies handled before it in the same poll round). The first
 * and the last are the observer's own. Counters run from the manager's
 * start. */
#define OBS_METRICS_BUCKETS 13
extern const double obs_metrics_bucket_bounds[OBS_METRICS_BUCKETS];
struct obs_manager_metrics {
	unsigned long long snapshots; /* taken, all sessions */
	unsigned long long failures;  /* samples that timed out or failed on the node */
	unsigned long long rpc_counts[OBS_METRICS_BUCKETS + 1];
	double rpc_sum_s;
	unsigned long long lateness_counts[OBS_METRICS_BUCKETS + 1];
	double lateness_sum_s;
	unsigned long long dispatch_counts[OBS_METRICS_BUCKETS + 1];
	double dispatch_sum_s;
	unsigned long long processing_counts[OBS_METRICS_BUCKETS + 1];
	double processing_sum_s;
	size_t sessions_running;
};
/* Fills *out (a consistent copy, taken under the manager's lock). */
void obs_manager_metrics(struct obs_manager *m, struct obs_manager_metrics *out);

#endif
