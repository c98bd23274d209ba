/*
 * manager.c - many observation sessions at once (see observe.h).
 *
 * One thread drives every session with poll(2): each session has one
 * connection, at most one request in flight and its own deadline, so a slow
 * or frozen node only ever delays itself. Connecting (the slow part that can
 * block up to the timeout) happens in the thread that calls
 * obs_session_start, not in the manager's thread.
 *
 * Why one thread rather than one per session: a session is idle almost all
 * the time (one small request per interval), so twenty sessions cost one
 * stack and one poll set instead of twenty threads; the callbacks all come
 * from one thread, so the daemon needs no locking of its own around them.
 *
 * Locking: `lock` guards the session list and every session's public fields
 * (state, counters, last_error, history, stop flags). The connection, the
 * probe and the request state belong to the manager's thread alone once the
 * session is running. Callbacks are called without the lock held.
 * Lifetime: a session is freed only by the manager's thread (ended ones
 * that a new start of their node retired, at the top of its loop) or by
 * obs_manager_free, never by a caller of obs_session_start/stop, which
 * could free it under the manager's thread in the middle of a round.
 *
 * Per session: IDLE --due--> WAIT_SAMPLE --reply/timeout--> IDLE ...; the
 * target's session process ending on its own (lease expired while the node
 * was frozen, say) sends the session to RESTART, which starts a new one on
 * the same connection with an asynchronous rpc. Stop: a last sample, then
 * `stop` (the target cleans up), then on_end.
 *
 * A lost connection sends the session to RECONNECT: a short-lived thread of
 * the session's own connects again (so that the manager's thread never
 * blocks on a connect) and hands the target's session process, which kept
 * its state and patterns, over to the new connection ({attach, Self});
 * attempts back off from 100 ms to 2 s and stop when the lease has run out
 * (counted from the last reply: the target's lease started no earlier).
 * The time without connection is recorded as a gap (`reconnects` in the
 * finalize), never filled in. A session whose lease ran out ends as
 * interrupted, keeping its history; the target cleaned up by itself.
 */
#include "observe/observe.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/json_text.h"
#include "base/log.h"
#include "base/str.h"
#include "observe/observe_int.h"

#define MANAGER_MAX_SESSIONS 1024
#define RECONNECT_FIRST_MS   100
#define RECONNECT_MAX_MS     2000
#define RECONNECTS_KEPT      256 /* gaps recorded per session; more are counted */

enum session_state { SESSION_STARTING, SESSION_RUNNING, SESSION_ENDED };

enum session_phase {
	PHASE_IDLE,
	PHASE_WAIT_SAMPLE,
	PHASE_WAIT_RESTART,
	PHASE_WAIT_FINAL,
	PHASE_WAIT_STOP,
	PHASE_RECONNECT, /* no connection: attempts with backoff within the lease */
};

struct session {
	struct session *next;
	char id[17];
	char *node;
	int interval_ms;
	int timeout_ms;
	int top_n;
	int sample_period_ms, sample_processes; /* as configured (obs_sample_params clamps) */
	char **modules;                         /* NULL-terminated */
	char *project;
	bool call_time;
	int lease_ms;
	double overhead, pause_above, guest_budget;
	char *cookie; /* NULL: the defaults; wiped when freed (reconnects need it) */
	struct obs_manager *manager;
	/* manager thread only (after start) */
	struct dist_conn *conn;
	struct obs_probe probe;
	enum session_phase phase;
	long pending_ref;
	int64_t pending_deadline;
	int64_t next_due;
	int64_t sample_due_us, sample_sent_us; /* of the sample in flight (metrics) */
	int64_t readable_us; /* when poll last found the connection readable (metrics) */
	bool need_restart;
	int64_t last_reply_ms;  /* mono: the target's lease was renewed no earlier */
	int64_t last_snap_wall; /* wall time of the last snapshot (a gap starts there) */
	int64_t lost_wall_ms;   /* when the connection was lost */
	int64_t next_attempt;   /* mono */
	int backoff_ms, attempts;
	pthread_t reconnect_thread;
	bool reconnect_attach; /* the thread attaches (false: a restart is due anyway) */
	/* under lock: the reconnect thread's hand-over */
	bool reconnect_running, reconnect_done;
	int reconnect_rc;
	struct dist_conn *reconnect_conn;
	json_t *reconnects; /* [{after_seq, before_seq, from_ms, to_ms, missing, attempts}] */
	long reconnect_count;
	bool disconnected;
	/* under lock */
	enum session_state state;
	int waiters; /* obs_session_stop calls waiting on it: not freed meanwhile */
	bool stop_requested;
	bool interrupt_requested; /* manager shutting down: no last sample */
	char abandon_reason[256]; /* obs_session_abandon: why it ends ("" if not) */
	long seq;
	long timeouts;
	long failures;            /* every sample that timed out or failed */
	int64_t last_snapshot_ms; /* wall clock; 0 before the first */
	int64_t started_ms, stopped_ms;
	char last_error[256];
	char status[16]; /* running, complete, interrupted */
	char reason[128];
	char *history[OBS_HISTORY_KEEP];
	size_t history_start, history_len;
	size_t text_hint; /* manager thread: room for the next snapshot's text */
};

struct obs_manager {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t ended;
	int wake[2];
	bool quit;
	struct obs_callbacks cb;
	obs_snapshot_text_fn on_snapshot_text; /* under lock; NULL: cb.on_snapshot */
	struct session *sessions;
	/* Ended sessions taken off `sessions` by a new start of their node
	 * (under lock): freed by the manager's thread alone, at the top of its
	 * loop, where it holds no session pointer of the previous round, and
	 * only once no obs_session_stop waits on them. */
	struct session *retired;
	struct obs_term_doc reply; /* the manager thread's: each sample reply, checked */
	/* Measurements (under lock), see obs_manager_metrics. */
	unsigned long long snapshots, failures;
	unsigned long long rpc_counts[OBS_METRICS_BUCKETS + 1];
	double rpc_sum_s;
	unsigned long long lateness_counts[OBS_METRICS_BUCKETS + 1];
	double lateness_sum_s;
	unsigned long long dispatch_counts[OBS_METRICS_BUCKETS + 1];
	double dispatch_sum_s;
	unsigned long long processing_counts[OBS_METRICS_BUCKETS + 1];
	double processing_sum_s;
};

const double obs_metrics_bucket_bounds[OBS_METRICS_BUCKETS] = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5};

static size_t bucket_of(double seconds)
{
	size_t b = 0;
	while (b < OBS_METRICS_BUCKETS && seconds > obs_metrics_bucket_bounds[b])
		b++;
	return b;
}

static void histogram_add(unsigned long long *counts, double *sum, int64_t from_us, int64_t to_us)
{
	double seconds = to_us > from_us ? (double)(to_us - from_us) / 1e6 : 0;
	counts[bucket_of(seconds)]++;
	*sum += seconds;
}

/* Records the times of one snapshot completed at `done_us` (its callback
 * returned): the tick it was due, the request sent, the reply readable.
 * Locked. */
static void metrics_record(struct obs_manager *m, const struct session *s, int64_t done_us)
{
	int64_t due = s->sample_due_us, sent = s->sample_sent_us;
	int64_t replied =
	    s->readable_us >= sent && s->readable_us <= done_us ? s->readable_us : done_us;
	histogram_add(m->dispatch_counts, &m->dispatch_sum_s, due, sent);
	histogram_add(m->rpc_counts, &m->rpc_sum_s, sent, replied);
	histogram_add(m->processing_counts, &m->processing_sum_s, replied, done_us);
	histogram_add(m->lateness_counts, &m->lateness_sum_s, due, done_us);
}

/* How long the target may scan processes per sample: within the timeout. */
static int obs_budget(const struct session *s)
{
	int budget = s->timeout_ms * 6 / 10;
	return budget < 100 ? 100 : budget;
}

static void manager_wake(struct obs_manager *m)
{
	char b = 1;
	if (write(m->wake[1], &b, 1) < 0) {
		/* the pipe is full: the thread is awake already */
	}
}

static void session_id_make(char *out)
{
	unsigned char raw[8] = {0};
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, raw, sizeof(raw)) != (ssize_t)sizeof(raw)) {
		uint64_t t = (uint64_t)gi_clock_mono_us() ^ ((uint64_t)getpid() << 32);
		memcpy(raw, &t, sizeof(raw));
	}
	if (fd >= 0)
		close(fd);
	for (int i = 0; i < 8; i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

static void session_free(struct session *s)
{
	if (!s)
		return;
	dist_close(s->conn);
	obs_probe_destroy(&s->probe);
	for (size_t i = 0; i < s->history_len; i++)
		gi_free(s->history[(s->history_start + i) % OBS_HISTORY_KEEP]);
	for (char **mod = s->modules; mod && *mod; mod++)
		gi_free(*mod);
	gi_free(s->modules);
	gi_free(s->node);
	gi_free(s->project);
	if (s->cookie) {
		explicit_bzero(s->cookie, strlen(s->cookie));
		gi_free(s->cookie);
	}
	json_decref(s->reconnects);
	gi_free(s);
}

static void set_error(struct obs_manager *m, struct session *s, const char *what, int code)
{
	pthread_mutex_lock(&m->lock);
	snprintf(s->last_error, sizeof(s->last_error), "%s: %s", what, gi_strerror(code));
	pthread_mutex_unlock(&m->lock);
}

/* The reason an ending session gives: the abandon's, else `fallback`.
 * Copied into `buf` under the lock. */
static const char *end_reason(struct obs_manager *m, struct session *s, const char *fallback,
                              char *buf, size_t size)
{
	pthread_mutex_lock(&m->lock);
	gi_strlcpy(buf, s->abandon_reason[0] ? s->abandon_reason : fallback ? fallback : "", size);
	bool abandoned = s->abandon_reason[0] != '\0';
	pthread_mutex_unlock(&m->lock);
	return abandoned || fallback ? buf : NULL;
}

static json_t *trace_modules_json(const struct session *s)
{
	json_t *a = json_array();
	for (char **mod = s->modules; mod && *mod; mod++)
		json_array_append_new(a, json_string(*mod));
	return a;
}

/* Ends a session: closes the connection, calls on_end, wakes stop(). */
static void session_end(struct obs_manager *m, struct session *s, const char *status,
                        const char *reason)
{
	dist_close(s->conn);
	s->conn = NULL;
	pthread_mutex_lock(&m->lock);
	s->stopped_ms = gi_clock_wall_ms();
	gi_strlcpy(s->status, status, sizeof(s->status));
	gi_strlcpy(s->reason, reason ? reason : "", sizeof(s->reason));
	pthread_mutex_unlock(&m->lock);
	json_t *fin = json_object();
	json_object_set_new(fin, "session_id", json_string(s->id));
	json_object_set_new(fin, "node", json_string(s->node));
	json_object_set_new(fin, "status", json_string(status));
	json_object_set_new(fin, "reason", reason ? json_string(reason) : json_null());
	json_object_set_new(fin, "started_ms", json_integer(s->started_ms));
	json_object_set_new(fin, "stopped_ms", json_integer(s->stopped_ms));
	json_object_set_new(fin, "interval_ms", json_integer(s->interval_ms));
	/* The seq the next snapshot would have had: what the worker lacks below
	 * it was taken and lost on the way. */
	json_object_set_new(fin, "next_seq", json_integer(s->seq));
	json_object_set_new(fin, "trace_modules", trace_modules_json(s));
	json_object_set_new(fin, "call_time", json_boolean(s->call_time));
	json_object_set_new(fin, "project", s->project ? json_string(s->project) : json_null());
	json_object_set_new(fin, "lease_ms", json_integer(s->lease_ms));
	json_object_set_new(fin, "overhead",
	                    s->overhead > 0 ? json_real(s->overhead) : json_null());
	pthread_mutex_lock(&m->lock);
	json_object_set_new(fin, "reconnects",
	                    s->reconnects ? json_deep_copy(s->reconnects) : json_array());
	pthread_mutex_unlock(&m->lock);
	if (m->cb.on_end)
		m->cb.on_end(m->cb.ctx, s->id, fin);
	json_decref(fin);
	pthread_mutex_lock(&m->lock);
	s->state = SESSION_ENDED;
	pthread_cond_broadcast(&m->ended);
	pthread_mutex_unlock(&m->lock);
	gi_log_info("observe", "session %s on %s ended: %s%s%s", s->id, s->node, status,
	            reason ? ", " : "", reason ? reason : "");
}

/* Keeps the snapshot's text in the session's history; returns it (borrowed:
 * only this thread frees it, at a later push or when the session is freed),
 * NULL when it could not be written. */
static const char *history_push(struct obs_manager *m, struct session *s, json_t *snap,
                                size_t *len_out)
{
	/* sized after the previous one: one allocation rather than a dozen
	 * reallocations, each of which makes glibc consolidate its free lists */
	struct gi_buf b;
	gi_buf_init(&b, 0);
	gi_buf_reserve(&b, s->text_hint ? s->text_hint : 4096);
	if (gi_json_append(&b, snap) != 0) {
		gi_buf_destroy(&b);
		return NULL;
	}
	*len_out = b.len;
	s->text_hint = b.len + b.len / 8;
	/* kept for OBS_HISTORY_KEEP snapshots: no slack (shrinking is in place) */
	char *text = gi_realloc(gi_buf_take(&b), *len_out + 1);
	pthread_mutex_lock(&m->lock);
	if (s->history_len == OBS_HISTORY_KEEP) {
		gi_free(s->history[s->history_start]);
		s->history[s->history_start] = text;
		s->history_start = (s->history_start + 1) % OBS_HISTORY_KEEP;
	} else {
		s->history[(s->history_start + s->history_len) % OBS_HISTORY_KEEP] = text;
		s->history_len++;
	}
	pthread_mutex_unlock(&m->lock);
	return text;
}

static void handle_sample(struct obs_manager *m, struct session *s, const ei_x_buff *x, int index)
{
	struct obs_term reply;
	if (obs_term_doc_parse(&m->reply, x->buff, x->index, &index, &reply) != 0) {
		set_error(m, s, "sample", GI_EBADRPC);
		pthread_mutex_lock(&m->lock);
		s->failures++;
		m->failures++;
		pthread_mutex_unlock(&m->lock);
		return;
	}
	pthread_mutex_lock(&m->lock);
	long seq = s->seq;
	pthread_mutex_unlock(&m->lock);
	json_t *snap = obs_snapshot_build(reply, s->node, s->id, seq, gi_clock_wall_ms(),
	                                  s->probe.trace_errors);
	if (!snap) {
		char scratch[OBS_TERM_SCRATCH];
		size_t len = 0;
		const char *text = obs_term_text(obs_term_item(reply, 1), scratch, &len);
		len = text ? strnlen(text, len) : 0;
		if (!text) {
			text = "unexpected reply";
			len = strlen(text);
		}
		pthread_mutex_lock(&m->lock);
		snprintf(s->last_error, sizeof(s->last_error), "sample failed on the node: %.*s",
		         (int)(len < 200 ? len : 200), text);
		s->failures++;
		m->failures++;
		pthread_mutex_unlock(&m->lock);
		return;
	}
	size_t text_len = 0;
	const char *text = history_push(m, s, snap, &text_len);
	pthread_mutex_lock(&m->lock);
	s->seq++;
	s->last_snapshot_ms = gi_clock_wall_ms();
	m->snapshots++;
	obs_snapshot_text_fn with_text = m->on_snapshot_text;
	pthread_mutex_unlock(&m->lock);
	s->last_snap_wall = gi_clock_wall_ms();
	if (with_text && text)
		with_text(m->cb.ctx, s->id, snap, text, text_len);
	else if (m->cb.on_snapshot)
		m->cb.on_snapshot(m->cb.ctx, s->id, snap);
	json_decref(snap);
	/* Complete once the daemon has it: the callback's work is the
	 * monitor's, and it delays every session behind this one. */
	if (s->sample_sent_us > 0) {
		pthread_mutex_lock(&m->lock);
		metrics_record(m, s, gi_clock_mono_us());
		pthread_mutex_unlock(&m->lock);
	}
	s->sample_sent_us = 0; /* a last sample at stop is not on the schedule */
}

/* True when a small message can be sent without waiting: a node frozen for
 * long stops reading, and once its socket buffer is full a send would hold
 * the manager's thread for up to the timeout. */
static bool session_writable(const struct session *s)
{
	struct pollfd p = {s->conn->fd, POLLOUT, 0};
	return poll(&p, 1, 0) == 1 && (p.revents & POLLOUT);
}

static int send_request(struct session *s, const char *request, enum session_phase phase)
{
	if (!session_writable(s)) {
		/* counted as a request that timed out at once */
		s->phase = phase;
		s->pending_ref = -1;
		s->pending_deadline = gi_clock_mono_ms();
		return 0;
	}
	int rc = obs_probe_send(s->conn, &s->probe, request, &s->pending_ref);
	if (rc == 0) {
		s->phase = phase;
		s->pending_deadline = gi_clock_mono_ms() + s->timeout_ms +
		                      (phase == PHASE_WAIT_STOP ? 0 : obs_budget(s));
	}
	return rc;
}

static struct obs_probe_config probe_config(const struct session *s)
{
	struct obs_probe_config cfg = {
	    .session_id = s->id,
	    .lease_ms = s->lease_ms,
	    .top_n = s->top_n,
	    .budget_ms = obs_budget(s),
	    .modules = (const char *const *)s->modules,
	    .call_time = s->call_time,
	    .overhead = s->overhead,
	    .interval_ms = s->interval_ms,
	    .pause_above = s->pause_above,
	    .guest_budget = s->guest_budget,
	};
	if (cfg.lease_ms < 2 * OBS_INTERVAL_MIN_MS)
		cfg.lease_ms = 2 * OBS_INTERVAL_MIN_MS;
	obs_sample_params(s->sample_period_ms, s->sample_processes, &cfg);
	return cfg;
}

static int send_restart(struct session *s)
{
	if (!session_writable(s)) {
		s->phase = PHASE_WAIT_RESTART;
		s->pending_deadline = gi_clock_mono_ms();
		return 0;
	}
	struct obs_probe_config cfg = probe_config(s);
	ei_x_buff args;
	obs_probe_start_args(s->conn, &cfg, &args);
	int rc = dist_rpc_send(s->conn, "erl_eval", "expr", &args);
	ei_x_free(&args);
	if (rc == 0) {
		s->phase = PHASE_WAIT_RESTART;
		s->pending_deadline = gi_clock_mono_ms() + s->timeout_ms + obs_budget(s);
	}
	return rc;
}

/* Reads one message; returns 0 or a connection error. */
static int session_read(struct obs_manager *m, struct session *s)
{
	ei_x_buff x;
	ei_x_new(&x);
	erlang_msg msg;
	bool got = false;
	int rc = dist_receive_one(s->conn, &msg, &x, 200, &got);
	if (rc != 0 || !got)
		goto out; /* a tick, or a signal we do not use */
	long ref = 0;
	int index = 0;
	int kind = obs_probe_classify(&x, &ref, &index);
	if (kind == 1)
		s->last_reply_ms = gi_clock_mono_ms();
	if (kind == 1 && ref == s->pending_ref && s->phase != PHASE_IDLE &&
	    s->phase != PHASE_WAIT_RESTART) {
		enum session_phase was = s->phase;
		s->phase = PHASE_IDLE;
		if (was == PHASE_WAIT_SAMPLE || was == PHASE_WAIT_FINAL) {
			handle_sample(m, s, &x, index);
			pthread_mutex_lock(&m->lock);
			s->timeouts = 0;
			pthread_mutex_unlock(&m->lock);
		}
		if (was == PHASE_WAIT_FINAL) {
			if (send_request(s, "stop", PHASE_WAIT_STOP) != 0)
				session_end(m, s, "complete", NULL);
		} else if (was == PHASE_WAIT_STOP) {
			char why[256];
			const char *reason = end_reason(m, s, NULL, why, sizeof(why));
			session_end(m, s, reason ? "interrupted" : "complete", reason);
		}
	} else if (kind == 2) {
		/* The target's session process ended on its own; start another. */
		gi_log_info("observe", "session %s: the node's session process ended; restarting",
		            s->id);
		s->need_restart = true;
		if (s->phase == PHASE_WAIT_SAMPLE)
			s->phase = PHASE_IDLE;
	} else if (dist_is_rex_reply(&x, &index)) {
		struct obs_probe p;
		if (obs_probe_start_parse(x.buff, x.index, &index, &p) != 0) {
			set_error(m, s, "restart", GI_EBADRPC);
			if (s->phase == PHASE_WAIT_RESTART)
				s->phase = PHASE_IDLE;
		} else if (s->phase == PHASE_WAIT_RESTART) {
			obs_probe_destroy(&s->probe);
			s->probe = p;
			s->need_restart = false;
			s->phase = PHASE_IDLE;
		} else {
			/* a late answer to a restart we gave up on: stop that process */
			long dummy;
			obs_probe_send(s->conn, &p, "stop", &dummy);
			obs_probe_destroy(&p);
		}
	}
out:
	ei_x_free(&x);
	return rc;
}

/* The connection of a running session is gone: reconnect within the lease,
 * unless the session is ending or the lease has run out already. */
static void session_lost(struct obs_manager *m, struct session *s)
{
	int64_t now = gi_clock_mono_ms();
	pthread_mutex_lock(&m->lock);
	bool ending = s->stop_requested || s->interrupt_requested;
	pthread_mutex_unlock(&m->lock);
	if (ending || s->phase == PHASE_WAIT_STOP || s->phase == PHASE_WAIT_FINAL ||
	    now >= s->last_reply_ms + s->lease_ms) {
		char why[256];
		session_end(m, s, "interrupted",
		            end_reason(m, s, "node went down", why, sizeof(why)));
		return;
	}
	dist_close(s->conn);
	s->conn = NULL;
	s->phase = PHASE_RECONNECT;
	s->lost_wall_ms = gi_clock_wall_ms();
	s->backoff_ms = RECONNECT_FIRST_MS;
	s->attempts = 0;
	s->next_attempt = now + RECONNECT_FIRST_MS;
	pthread_mutex_lock(&m->lock);
	s->disconnected = true;
	snprintf(s->last_error, sizeof(s->last_error),
	         "connection lost; reconnecting within the lease (%lld ms left)",
	         (long long)(s->last_reply_ms + s->lease_ms - now));
	pthread_mutex_unlock(&m->lock);
	gi_log_warn("observe", "session %s on %s: connection lost; reconnecting within %d ms",
	            s->id, s->node, s->lease_ms);
}

/* The reconnect thread: connects, hands the target's session process over
 * to the new connection, and leaves the result for the manager's thread. */
static void *reconnect_main(void *arg)
{
	struct session *s = arg;
	int64_t left = s->last_reply_ms + s->lease_ms - gi_clock_mono_ms();
	int timeout = s->timeout_ms;
	if (left < timeout)
		timeout = left < 100 ? 100 : (int)left;
	struct dist_options o = {s->node, s->cookie, timeout};
	struct dist_conn *c = NULL;
	int rc = dist_connect(&o, &c);
	if (rc == 0 && s->reconnect_attach)
		rc = obs_probe_attach(c, &s->probe, gi_clock_mono_ms() + timeout);
	if (rc) {
		dist_close(c);
		c = NULL;
	}
	pthread_mutex_lock(&s->manager->lock);
	s->reconnect_conn = c;
	s->reconnect_rc = rc;
	s->reconnect_done = true;
	pthread_mutex_unlock(&s->manager->lock);
	manager_wake(s->manager);
	return NULL;
}

/* Records the time without connection as a gap: the snapshots it would
 * have had are not taken, and the next one measures from the resume on. */
static void reconnect_gap(struct obs_manager *m, struct session *s)
{
	int64_t to = gi_clock_wall_ms();
	int64_t from = s->last_snap_wall > 0 ? s->last_snap_wall : s->lost_wall_ms;
	long long missing = (to - from + s->interval_ms / 2) / s->interval_ms;
	pthread_mutex_lock(&m->lock);
	s->reconnect_count++;
	if (!s->reconnects)
		s->reconnects = json_array();
	if (json_array_size(s->reconnects) < RECONNECTS_KEPT)
		json_array_append_new(s->reconnects,
		                      json_pack("{s:I, s:I, s:I, s:I, s:I, s:i}", "after_seq",
		                                (json_int_t)(s->seq - 1), "before_seq",
		                                (json_int_t)s->seq, "from_ms", (json_int_t)from,
		                                "to_ms", (json_int_t)to, "missing",
		                                (json_int_t)missing, "attempts", s->attempts));
	s->last_error[0] = '\0';
	s->disconnected = false;
	pthread_mutex_unlock(&m->lock);
	gi_log_info("observe",
	            "session %s on %s: reconnected after %lld ms (%d attempts); %lld snapshots "
	            "missing",
	            s->id, s->node, (long long)(to - s->lost_wall_ms), s->attempts, missing);
}

/* One step of a session without connection: collects a finished attempt,
 * ends the session when it must, or starts the next attempt when due. */
static void reconnect_tick(struct obs_manager *m, struct session *s, int64_t now, bool ending)
{
	pthread_mutex_lock(&m->lock);
	bool running = s->reconnect_running, done = s->reconnect_done;
	struct dist_conn *c = s->reconnect_conn;
	int rc = s->reconnect_rc;
	if (done) {
		s->reconnect_running = s->reconnect_done = false;
		s->reconnect_conn = NULL;
	}
	pthread_mutex_unlock(&m->lock);
	if (running && !done)
		return;
	if (done) {
		pthread_join(s->reconnect_thread, NULL);
		if (rc == 0) {
			s->conn = c;
			s->phase = PHASE_IDLE;
			s->last_reply_ms = now;
			s->next_due = now + s->interval_ms;
			reconnect_gap(m, s);
			return;
		}
		if (rc == GI_ENONODE) {
			/* epmd answered and the node is not registered: it is gone,
			 * not out of reach, and its session process with it */
			session_end(m, s, "interrupted", "node went down");
			return;
		}
		if (rc == GI_ENOTFOUND) {
			session_end(m, s, "interrupted",
			            "connection lost for longer than the lease: the node's session "
			            "process ended and cleaned up");
			return;
		}
		set_error(m, s, "reconnect", rc);
		s->backoff_ms =
		    s->backoff_ms * 2 > RECONNECT_MAX_MS ? RECONNECT_MAX_MS : s->backoff_ms * 2;
		s->next_attempt = now + s->backoff_ms;
	}
	if (ending) {
		char why[256];
		session_end(m, s, "interrupted",
		            end_reason(m, s,
		                       "connection lost; the node's session process cleans up when "
		                       "its lease expires",
		                       why, sizeof(why)));
		return;
	}
	if (now >= s->last_reply_ms + s->lease_ms) {
		session_end(m, s, "interrupted",
		            "connection lost for longer than the lease: the node's session process "
		            "cleans up by itself");
		return;
	}
	if (now < s->next_attempt)
		return;
	s->attempts++;
	s->reconnect_attach = !s->need_restart;
	pthread_mutex_lock(&m->lock);
	s->reconnect_running = true;
	pthread_mutex_unlock(&m->lock);
	if (pthread_create(&s->reconnect_thread, NULL, reconnect_main, s) != 0) {
		pthread_mutex_lock(&m->lock);
		s->reconnect_running = false;
		pthread_mutex_unlock(&m->lock);
		s->next_attempt = now + s->backoff_ms;
	}
}

/* Timers of one session: deadlines, due samples, stop requests. */
static void session_tick(struct obs_manager *m, struct session *s, int64_t now)
{
	pthread_mutex_lock(&m->lock);
	bool stop = s->stop_requested, interrupt = s->interrupt_requested;
	pthread_mutex_unlock(&m->lock);
	if (s->phase == PHASE_RECONNECT) {
		reconnect_tick(m, s, now, stop || interrupt);
		return;
	}
	if (s->phase != PHASE_IDLE && now >= s->pending_deadline) {
		enum session_phase was = s->phase;
		s->phase = PHASE_IDLE;
		pthread_mutex_lock(&m->lock);
		s->timeouts++;
		if (was == PHASE_WAIT_SAMPLE || was == PHASE_WAIT_FINAL) {
			s->failures++;
			m->failures++;
		}
		snprintf(s->last_error, sizeof(s->last_error), "no reply within %d ms (timeout)",
		         s->timeout_ms + obs_budget(s));
		pthread_mutex_unlock(&m->lock);
		if (was == PHASE_WAIT_STOP || was == PHASE_WAIT_FINAL) {
			char why[256];
			session_end(m, s, interrupt ? "interrupted" : "complete",
			            end_reason(m, s, "the node did not answer the stop request",
			                       why, sizeof(why)));
			return;
		}
		if (was == PHASE_WAIT_RESTART)
			s->need_restart = true;
		s->next_due = now + s->interval_ms;
	}
	if (s->phase != PHASE_IDLE)
		return;
	int rc = 0;
	if (interrupt) {
		rc = send_request(s, "stop", PHASE_WAIT_STOP);
	} else if (stop) {
		rc = s->need_restart ? send_request(s, "stop", PHASE_WAIT_STOP)
		                     : send_request(s, "sample", PHASE_WAIT_FINAL);
	} else if (now >= s->next_due) {
		s->sample_due_us = s->next_due * 1000;
		s->sample_sent_us = gi_clock_mono_us();
		s->next_due += s->interval_ms;
		if (s->next_due <= now)
			s->next_due = now + s->interval_ms;
		rc = s->need_restart ? send_restart(s)
		                     : send_request(s, "sample", PHASE_WAIT_SAMPLE);
	}
	if (rc != 0)
		session_lost(m, s);
}

static int64_t session_wake_at(const struct session *s)
{
	if (s->phase == PHASE_RECONNECT)
		return s->next_attempt;
	if (s->phase != PHASE_IDLE)
		return s->pending_deadline;
	return s->next_due;
}

/* Takes the retired sessions nobody waits on off the list (locked); the
 * caller frees them after unlocking. */
static struct session *retired_take(struct obs_manager *m)
{
	struct session *out = NULL;
	struct session **link = &m->retired;
	while (*link) {
		struct session *s = *link;
		if (s->waiters == 0) {
			*link = s->next;
			s->next = out;
			out = s;
		} else {
			link = &s->next;
		}
	}
	return out;
}

static void session_list_free(struct session *s)
{
	while (s) {
		struct session *next = s->next;
		session_free(s);
		s = next;
	}
}

static void *manager_main(void *arg)
{
	struct obs_manager *m = arg;
	struct session *active[MANAGER_MAX_SESSIONS];
	struct pollfd fds[MANAGER_MAX_SESSIONS + 1];
	for (;;) {
		size_t n = 0;
		pthread_mutex_lock(&m->lock);
		/* Nothing of the previous round is held here: the only place
		 * where a session that ended may be freed. */
		struct session *dead = retired_take(m);
		bool quit = m->quit;
		for (struct session *s = m->sessions; s && n < MANAGER_MAX_SESSIONS; s = s->next) {
			if (s->state != SESSION_RUNNING)
				continue;
			if (quit && !s->interrupt_requested) {
				s->interrupt_requested = true;
			}
			active[n++] = s;
		}
		pthread_mutex_unlock(&m->lock);
		session_list_free(dead);
		if (quit && n == 0)
			break;
		int64_t now = gi_clock_mono_ms();
		for (size_t i = 0; i < n; i++)
			session_tick(m, active[i], now);
		size_t k = 0;
		int64_t wake_at = now + 1000;
		fds[k++] = (struct pollfd){m->wake[0], POLLIN, 0};
		for (size_t i = 0; i < n; i++) {
			struct session *s = active[i];
			if (!s->conn && s->phase != PHASE_RECONNECT)
				continue;
			int64_t at = session_wake_at(s);
			if (at < wake_at)
				wake_at = at;
			if (!s->conn)
				continue;
			fds[k++] = (struct pollfd){s->conn->fd, POLLIN, 0};
		}
		int wait = (int)(wake_at - gi_clock_mono_ms());
		if (wait < 0)
			wait = 0;
		if (poll(fds, k, wait) < 0)
			continue;
		int64_t polled_us = gi_clock_mono_us();
		if (fds[0].revents) {
			char buf[64];
			while (read(m->wake[0], buf, sizeof(buf)) > 0) {
			}
		}
		size_t fi = 1;
		for (size_t i = 0; i < n; i++) {
			struct session *s = active[i];
			if (!s->conn)
				continue;
			short rev = fds[fi++].revents;
			if (!rev)
				continue;
			s->readable_us = polled_us;
			if (session_read(m, s) != 0)
				session_lost(m, s);
		}
	}
	return NULL;
}

int obs_manager_new(const struct obs_callbacks *cb, struct obs_manager **out)
{
	*out = NULL;
	struct obs_manager *m = gi_calloc(1, sizeof(*m));
	if (cb)
		m->cb = *cb;
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->ended, NULL);
	if (pipe2(m->wake, O_NONBLOCK | O_CLOEXEC) != 0)
		goto fail;
	if (pthread_create(&m->thread, NULL, manager_main, m) != 0) {
		close(m->wake[0]);
		close(m->wake[1]);
		goto fail;
	}
	*out = m;
	return 0;
fail:
	pthread_mutex_destroy(&m->lock);
	pthread_cond_destroy(&m->ended);
	gi_free(m);
	return GI_EIO;
}

void obs_manager_on_snapshot_text(struct obs_manager *m, obs_snapshot_text_fn fn)
{
	pthread_mutex_lock(&m->lock);
	m->on_snapshot_text = fn;
	pthread_mutex_unlock(&m->lock);
}

void obs_manager_free(struct obs_manager *m)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->quit = true;
	pthread_mutex_unlock(&m->lock);
	manager_wake(m);
	pthread_join(m->thread, NULL);
	session_list_free(m->sessions);
	session_list_free(m->retired);
	close(m->wake[0]);
	close(m->wake[1]);
	obs_term_doc_destroy(&m->reply);
	pthread_mutex_destroy(&m->lock);
	pthread_cond_destroy(&m->ended);
	gi_free(m);
}

static struct session *find_live(struct obs_manager *m, const char *node)
{
	for (struct session *s = m->sessions; s; s = s->next)
		if (s->state != SESSION_ENDED && strcmp(s->node, node) == 0)
			return s;
	return NULL;
}

/* Retires ended sessions of `node` (a new session replaces them): off the
 * list now, freed later by the manager's thread, which may still be in the
 * round that ended them (reading their connection, logging their end).
 * Locked. */
static void drop_ended(struct obs_manager *m, const char *node)
{
	struct session **link = &m->sessions;
	while (*link) {
		struct session *s = *link;
		if (s->state == SESSION_ENDED && strcmp(s->node, node) == 0) {
			*link = s->next;
			s->next = m->retired;
			m->retired = s;
		} else {
			link = &s->next;
		}
	}
}

int obs_session_start(struct obs_manager *m, const struct obs_session_config *cfg,
                      char **session_id_out)
{
	*session_id_out = NULL;
	if (!cfg->node || !*cfg->node)
		return GI_EINVAL;
	struct session *s = gi_calloc(1, sizeof(*s));
	if (cfg->session_id && cfg->session_id[0] && strlen(cfg->session_id) < sizeof(s->id))
		gi_strlcpy(s->id, cfg->session_id, sizeof(s->id));
	else
		session_id_make(s->id);
	s->seq = cfg->first_seq > 0 ? cfg->first_seq : 0;
	s->node = gi_strdup(cfg->node);
	s->interval_ms = cfg->interval_ms > 0 ? cfg->interval_ms : OBS_INTERVAL_DEFAULT_MS;
	if (s->interval_ms < OBS_INTERVAL_MIN_MS)
		s->interval_ms = OBS_INTERVAL_MIN_MS;
	s->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : DIST_TIMEOUT_DEFAULT_MS;
	s->top_n = cfg->top_n > 0 ? (cfg->top_n > 1000 ? 1000 : cfg->top_n) : OBS_TOP_DEFAULT;
	s->sample_period_ms = cfg->sample_period_ms;
	s->sample_processes = cfg->sample_processes;
	/* Each module once, as the target counts it (obs_modules_merge). */
	const char *merged[OBS_MAX_MODULES];
	size_t nmods = obs_modules_merge(cfg->trace_modules, merged, OBS_MAX_MODULES);
	s->modules = gi_calloc(nmods + 1, sizeof(char *));
	for (size_t i = 0; i < nmods; i++) {
		/* A bare lowercase name ("calendar") can only be an Erlang module
		 * (an Elixir one is an alias): written as Giulia writes those
		 * everywhere (":calendar"), so that the object-code pull and the
		 * profile find it under its own name. */
		const char *name = merged[i];
		if (name[0] >= 'a' && name[0] <= 'z') {
			size_t n = strlen(name);
			s->modules[i] = gi_malloc(n + 2);
			s->modules[i][0] = ':';
			memcpy(s->modules[i] + 1, name, n + 1);
		} else {
			s->modules[i] = gi_strdup(name);
		}
	}
	s->project = cfg->project ? gi_strdup(cfg->project) : NULL;
	s->call_time = cfg->call_time && nmods > 0;
	s->lease_ms = cfg->lease_ms > 0 ? cfg->lease_ms : OBS_LEASE_DEFAULT_MS;
	if (s->lease_ms > OBS_LEASE_MAX_MS)
		s->lease_ms = OBS_LEASE_MAX_MS;
	if (s->lease_ms < 2 * s->interval_ms)
		s->lease_ms = 2 * s->interval_ms;
	s->cookie = cfg->cookie ? gi_strdup(cfg->cookie) : NULL;
	s->overhead = cfg->overhead > 0 && cfg->overhead <= OBS_OVERHEAD_MAX ? cfg->overhead : 0;
	s->pause_above = cfg->pause_above > 0 ? cfg->pause_above : OBS_PAUSE_ABOVE_DEFAULT;
	s->guest_budget = cfg->guest_budget > 0 && cfg->guest_budget <= OBS_GUEST_BUDGET_MAX
	                      ? cfg->guest_budget
	                      : OBS_GUEST_BUDGET_DEFAULT;
	s->manager = m;
	s->state = SESSION_STARTING;
	gi_strlcpy(s->status, "running", sizeof(s->status));

	pthread_mutex_lock(&m->lock);
	size_t count = 0;
	for (struct session *t = m->sessions; t; t = t->next)
		count += t->state != SESSION_ENDED;
	if (m->quit || find_live(m, s->node) || count >= MANAGER_MAX_SESSIONS) {
		int busy = m->quit || count >= MANAGER_MAX_SESSIONS;
		pthread_mutex_unlock(&m->lock);
		session_free(s);
		return busy ? GI_EBUSY : GI_EEXIST;
	}
	drop_ended(m, s->node);
	s->next = m->sessions;
	m->sessions = s;
	pthread_mutex_unlock(&m->lock);

	struct dist_options o = {cfg->node, cfg->cookie, s->timeout_ms};
	int rc = dist_connect(&o, &s->conn);
	if (rc == 0) {
		struct obs_probe_config pc = probe_config(s);
		rc = obs_probe_start(s->conn, &pc,
		                     gi_clock_mono_ms() + s->timeout_ms + pc.budget_ms, &s->probe);
	}
	pthread_mutex_lock(&m->lock);
	if (rc != 0) {
		struct session **link = &m->sessions;
		while (*link != s)
			link = &(*link)->next;
		*link = s->next;
		pthread_mutex_unlock(&m->lock);
		session_free(s);
		return rc;
	}
	s->started_ms = cfg->started_ms > 0 ? cfg->started_ms : gi_clock_wall_ms();
	s->next_due = gi_clock_mono_ms() + s->interval_ms;
	s->last_reply_ms = gi_clock_mono_ms();
	s->state = SESSION_RUNNING;
	*session_id_out = gi_strdup(s->id);
	pthread_mutex_unlock(&m->lock);
	manager_wake(m);
	gi_log_info("observe", "session %s on %s started (every %d ms)", s->id, s->node,
	            s->interval_ms);
	return 0;
}

int obs_session_stop(struct obs_manager *m, const char *node)
{
	pthread_mutex_lock(&m->lock);
	struct session *s = find_live(m, node);
	if (!s) {
		pthread_mutex_unlock(&m->lock);
		return GI_ENOTFOUND;
	}
	if (s->state == SESSION_STARTING) {
		pthread_mutex_unlock(&m->lock);
		return GI_EBUSY;
	}
	s->stop_requested = true;
	manager_wake(m);
	/* Counted, so that a start of the same node that retires `s` while
	 * this waits does not have it freed under us. */
	s->waiters++;
	while (s->state != SESSION_ENDED)
		pthread_cond_wait(&m->ended, &m->lock);
	s->waiters--;
	pthread_mutex_unlock(&m->lock);
	manager_wake(m); /* a retired session may be freed now */
	return 0;
}

int obs_session_abandon(struct obs_manager *m, const char *session_id, const char *reason)
{
	int rc = GI_ENOTFOUND;
	pthread_mutex_lock(&m->lock);
	for (struct session *s = m->sessions; s; s = s->next) {
		if (s->state != SESSION_RUNNING || strcmp(s->id, session_id) != 0)
			continue;
		if (!s->abandon_reason[0])
			gi_strlcpy(s->abandon_reason, reason && *reason ? reason : "abandoned",
			           sizeof(s->abandon_reason));
		s->interrupt_requested = true;
		rc = 0;
		break;
	}
	pthread_mutex_unlock(&m->lock);
	if (rc == 0)
		manager_wake(m);
	return rc;
}

json_t *obs_manager_status(struct obs_manager *m)
{
	json_t *out = json_array();
	pthread_mutex_lock(&m->lock);
	for (struct session *s = m->sessions; s; s = s->next) {
		json_t *o = json_object();
		json_object_set_new(o, "session_id", json_string(s->id));
		json_object_set_new(o, "node", json_string(s->node));
		json_object_set_new(o, "interval_ms", json_integer(s->interval_ms));
		json_object_set_new(o, "started_ms",
		                    s->started_ms ? json_integer(s->started_ms) : json_null());
		json_object_set_new(o, "stopped_ms",
		                    s->stopped_ms ? json_integer(s->stopped_ms) : json_null());
		json_object_set_new(o, "snapshots", json_integer(s->seq));
		json_object_set_new(o, "trace_modules", trace_modules_json(s));
		json_object_set_new(o, "call_time", json_boolean(s->call_time));
		json_object_set_new(o, "lease_ms", json_integer(s->lease_ms));
		json_object_set_new(o, "overhead",
		                    s->overhead > 0 ? json_real(s->overhead) : json_null());
		json_object_set_new(o, "reconnects", json_integer(s->reconnect_count));
		json_object_set_new(o, "connected",
		                    json_boolean(s->state == SESSION_RUNNING && !s->disconnected));
		const char *state = s->state == SESSION_STARTING  ? "starting"
		                    : s->state == SESSION_RUNNING ? "running"
		                                                  : s->status;
		json_object_set_new(o, "state", json_string(state));
		json_object_set_new(o, "reason",
		                    s->reason[0] ? json_string(s->reason) : json_null());
		json_object_set_new(o, "timeouts", json_integer(s->timeouts));
		json_object_set_new(o, "failures", json_integer(s->failures));
		json_object_set_new(o, "last_snapshot_ms",
		                    s->last_snapshot_ms ? json_integer(s->last_snapshot_ms)
		                                        : json_null());
		json_object_set_new(o, "last_error",
		                    s->last_error[0] ? json_string(s->last_error) : json_null());
		json_array_append_new(out, o);
	}
	pthread_mutex_unlock(&m->lock);
	return out;
}

json_t *obs_manager_history(struct obs_manager *m, const char *node, int limit)
{
	json_t *out = NULL;
	pthread_mutex_lock(&m->lock);
	struct session *found = NULL;
	for (struct session *s = m->sessions; s; s = s->next)
		if (strcmp(s->node, node) == 0 && (!found || s->state != SESSION_ENDED))
			found = s;
	if (found) {
		out = json_array();
		size_t n = found->history_len;
		size_t from = limit > 0 && (size_t)limit < n ? n - (size_t)limit : 0;
		for (size_t i = from; i < n; i++) {
			const char *text =
			    found->history[(found->history_start + i) % OBS_HISTORY_KEEP];
			json_t *v = json_loads(text, 0, NULL);
			if (v)
				json_array_append_new(out, v);
		}
	}
	pthread_mutex_unlock(&m->lock);
	return out;
}

void obs_manager_metrics(struct obs_manager *m, struct obs_manager_metrics *out)
{
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&m->lock);
	out->snapshots = m->snapshots;
	out->failures = m->failures;
	memcpy(out->rpc_counts, m->rpc_counts, sizeof(out->rpc_counts));
	out->rpc_sum_s = m->rpc_sum_s;
	memcpy(out->lateness_counts, m->lateness_counts, sizeof(out->lateness_counts));
	out->lateness_sum_s = m->lateness_sum_s;
	memcpy(out->dispatch_counts, m->dispatch_counts, sizeof(out->dispatch_counts));
	out->dispatch_sum_s = m->dispatch_sum_s;
	memcpy(out->processing_counts, m->processing_counts, sizeof(out->processing_counts));
	out->processing_sum_s = m->processing_sum_s;
	for (struct session *s = m->sessions; s; s = s->next)
		out->sessions_running += s->state == SESSION_RUNNING;
	pthread_mutex_unlock(&m->lock);
}
