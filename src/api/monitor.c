/*
 * monitor.c - the monitor daemon's routes (see monitor.h, docs/API.md).
 *
 * State per node (under `lock`): the cookie given to /api/runtime/connect,
 * the latest snapshot of its observation, and a bounded history of compact
 * points (HISTORY_MAX) from which history, trend and alerts are computed.
 * The observer's callbacks feed both the history and the pusher; they run on
 * the observer's thread and only copy and queue, never block on the network.
 * Trends, alerts and hot modules are computed by runtime_stats.c.
 *
 * Object code for the worker (docs/BEAM.md, "Object code for profiles"):
 * while an observation runs, the node's state also holds the cookie it was
 * started with (memory only, wiped when the observation ends) and the set of
 * modules it saw working (traced, and attributed to top processes). When it
 * ends, a short-lived thread pulls those modules' object code from the node
 * (beam_pull_modules: deadline-bounded, nothing loaded there), queues it to
 * the worker in batches, then queues the finalize with an `object_code`
 * summary, so that the worker has the code before it builds the profile.
 * The cookie never leaves this process.
 */
#include "api/monitor.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "net/client.h"
#include "api/http.h"
#include "api/live.h"
#include "api/monitor_metrics.h"
#include "api/pusher.h"
#include "api/runtime_stats.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/json_text.h"
#include "base/log.h"
#include "base/map.h"
#include "base/modname.h"
#include "base/str.h"
#include "observe/beam_pull.h"
#include "observe/dist.h"
#include "observe/inspect.h"
#include "observe/observe.h"
#include "observe/snapshot_view.h"
#include "api/base64.h"

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

static const struct api_alert_rules *monitor_rules(const struct api_monitor *m)
{
	return m->rules ? m->rules : api_alert_rules_builtin();
}

/* ---- node state ---- */

static struct node_state *node_get(struct api_monitor *m, const char *node, bool create)
{
	struct node_state *ns = gi_map_get(&m->nodes, node);
	if (!ns && create) {
		ns = gi_calloc(1, sizeof(*ns));
		ns->file.fd = -1;
		gi_map_put(&m->nodes, node, ns);
	}
	return ns;
}

static void node_free(struct node_state *ns)
{
	if (!ns)
		return;
	if (ns->cookie) {
		memset(ns->cookie, 0, strlen(ns->cookie));
		gi_free(ns->cookie);
	}
	if (ns->session_cookie) {
		memset(ns->session_cookie, 0, strlen(ns->session_cookie));
		gi_free(ns->session_cookie);
	}
	json_decref(ns->last);
	api_history_destroy(&ns->history);
	json_decref(ns->alerts);
	json_decref(ns->observed);
	json_decref(ns->state);
	gi_free(ns->state_prefix);
	if (ns->file.fd >= 0)
		close(ns->file.fd);
	json_decref(ns->ended);
	gi_free(ns);
}

/* Forgets the cached text of the node's state (it changed). */
static void state_prefix_drop(struct node_state *ns)
{
	gi_free(ns->state_prefix);
	ns->state_prefix = NULL;
	ns->state_prefix_len = 0;
}

/* Replaces the node's durable state (taking the reference; NULL: none). */
static void node_state_set(struct node_state *ns, json_t *state)
{
	json_decref(ns->state);
	ns->state = state;
	state_prefix_drop(ns);
}

/* The text of the node's state with next_seq `next` (its value there
 * already), as json_dumps would write it: its cached prefix and the number
 * when next_seq is the last member (always, as observe/start builds it),
 * else serialised whole. Into `local` when it fits, else a new string
 * (gi_free); NULL when it cannot be written. Under the monitor's lock. */
static char *state_text(struct node_state *ns, long long next, char *local, size_t size,
                        size_t *len)
{
	if (!ns->state_prefix) {
		const char *last = NULL;
		for (void *it = json_object_iter(ns->state); it;
		     it = json_object_iter_next(ns->state, it))
			last = json_object_iter_key(it);
		size_t n = 0;
		char *text =
		    last && strcmp(last, "next_seq") == 0 ? gi_json_text(ns->state, &n) : NULL;
		/* cut `"next_seq":DIGITS}` back to `"next_seq":` */
		size_t cut = n > 0 ? n - 1 : 0;
		while (cut > 0 &&
		       ((text[cut - 1] >= '0' && text[cut - 1] <= '9') || text[cut - 1] == '-'))
			cut--;
		if (text && text[n - 1] == '}' && cut >= 11 &&
		    GI_MEM_IS(text + cut - 11, 11, "\"next_seq\":")) {
			ns->state_prefix = text;
			ns->state_prefix_len = cut;
		} else {
			gi_free(text);
		}
	}
	if (!ns->state_prefix)
		return gi_json_text(ns->state, len);
	/* the number as jansson writes an integer, then the object's end */
	char tail[24];
	size_t n = gi_int_text(next, tail);
	tail[n++] = '}';
	*len = ns->state_prefix_len + n;
	char *out = *len < size ? local : gi_malloc(*len + 1);
	memcpy(out, ns->state_prefix, ns->state_prefix_len);
	memcpy(out + ns->state_prefix_len, tail, n);
	out[*len] = '\0';
	return out;
}

/* ---- durable session state (adoption of orphans) ---- */

static void session_state_path(const struct api_monitor *m, const char *sid, char *out, size_t size)
{
	snprintf(out, size, "%s/%s.json", m->sessions_dir, sid);
}

/* The descriptor of the node's state file, opened at its first write and
 * kept until the observation's state is removed: a snapshot then costs one
 * pwrite, not an open, fstat, pwrite and close (BENCHMARKS.md "Fleet"). */
static void state_file_close(struct node_state *ns)
{
	if (ns->file.fd >= 0)
		close(ns->file.fd);
	ns->file.fd = -1;
	ns->file.sid[0] = '\0';
	ns->file.len = 0;
}

/* Rewrites the open state file in place with `text`, padded with spaces
 * (JSON ignores them) to the file's length so that nothing of a longer
 * previous text remains. Why in place: the state changes with every
 * snapshot (next_seq), and a new file plus a rename per snapshot cost a
 * third of the monitor's CPU at 30 nodes (ext4's inode allocation, perf in
 * BENCHMARKS.md "Fleet"). One pwrite of a few hundred bytes into the page
 * cache is not split by a process being killed; a machine crash may tear
 * it, as it could lose a renamed file that was never fsync'ed. */
static int state_file_overwrite(struct node_state *ns, const char *text, size_t len)
{
	size_t size = ns->file.len > len ? ns->file.len : len;
	char *padded = NULL;
	if (size > len) { /* rare: a shorter text than the file's */
		padded = gi_malloc(size);
		memcpy(padded, text, len);
		memset(padded + len, ' ', size - len);
		text = padded;
	}
	int rc = 0;
	size_t done = 0;
	while (rc == 0 && done < size) {
		ssize_t n = pwrite(ns->file.fd, text + done, size - done, (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			rc = GI_EIO;
		else
			done += (size_t)n;
	}
	gi_free(padded);
	if (rc == 0)
		ns->file.len = size;
	return rc;
}

/* Opens the existing state file of `sid` for the node (GI_ENOTFOUND when
 * there is none yet: the caller then creates it atomically). */
static int state_file_open(struct node_state *ns, const char *sid, const char *path)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? GI_ENOTFOUND : GI_EIO;
	struct stat st;
	if (fstat(fd, &st) != 0 || st.st_size < 0 || st.st_size > 65536) {
		close(fd);
		return GI_EIO;
	}
	ns->file.fd = fd;
	ns->file.len = (size_t)st.st_size;
	gi_strlcpy(ns->file.sid, sid, sizeof(ns->file.sid));
	return 0;
}

/* Writes `text` as the state file of observation `sid` (plain: checked by
 * the callers' session ids) of the node: in place through the kept
 * descriptor, or, for a new file or after an error, created atomically
 * (temporary file and rename) and then opened for the next writes. */
static void state_file_put(struct api_monitor *m, struct node_state *ns, const char *sid,
                           const char *text, size_t len)
{
	char path[4096];
	path[0] = '\0'; /* made when needed: not for an in-place write */
	pthread_mutex_lock(&m->state_lock);
	if (ns->file.fd >= 0 && strcmp(ns->file.sid, sid) != 0)
		state_file_close(ns); /* the node's previous observation */
	if (ns->file.fd < 0)
		session_state_path(m, sid, path, sizeof(path));
	int rc = ns->file.fd >= 0 ? 0 : state_file_open(ns, sid, path);
	if (rc == 0)
		rc = state_file_overwrite(ns, text, len);
	if (rc != 0) {
		if (!path[0])
			session_state_path(m, sid, path, sizeof(path));
		state_file_close(ns);
		rc = gi_fs_write_file(path, text, len);
		if (rc == 0)
			state_file_open(ns, sid, path);
	}
	pthread_mutex_unlock(&m->state_lock);
	if (rc != 0)
		gi_log_warn("monitor", "cannot record the state of observation %s in %s", sid,
		            path);
}

/* The node's state, or NULL for a node name it does not hold. */
static struct node_state *state_node(struct api_monitor *m, json_t *state)
{
	const char *node = json_string_value(json_object_get(state, "node"));
	if (!node)
		return NULL;
	pthread_mutex_lock(&m->lock);
	struct node_state *ns = node_get(m, node, true); /* never freed before the monitor */
	pthread_mutex_unlock(&m->lock);
	return ns;
}

/* Writes the state (borrowed) of a running observation: {session_id, node,
 * interval_ms, top_n, trace_modules, project, started_ms, next_seq, ending?}.
 * Never the cookie. Written before the snapshot it counts is queued, so that
 * next_seq is above every seq a dead monitor handed out. */
static void session_state_write(struct api_monitor *m, json_t *state)
{
	const char *sid = json_string_value(json_object_get(state, "session_id"));
	struct node_state *ns = state_node(m, state);
	if (!sid || !ns)
		return;
	size_t len = 0;
	char *text = gi_json_text(state, &len);
	if (text)
		state_file_put(m, ns, sid, text, len);
	gi_free(text);
}

/* Removes the state file of observation `sid` and closes its descriptor
 * when `node` (may be NULL: an orphan's, never opened here) holds it. */
static void session_state_remove(struct api_monitor *m, const char *node, const char *sid)
{
	char path[4096];
	if (!sid)
		return;
	session_state_path(m, sid, path, sizeof(path));
	struct node_state *ns = NULL;
	if (node) {
		pthread_mutex_lock(&m->lock);
		ns = node_get(m, node, false);
		pthread_mutex_unlock(&m->lock);
	}
	pthread_mutex_lock(&m->state_lock);
	if (ns && ns->file.fd >= 0 && strcmp(ns->file.sid, sid) == 0)
		state_file_close(ns);
	unlink(path);
	pthread_mutex_unlock(&m->state_lock);
}

static bool session_id_plain(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > 16)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* The finalize that closes an orphan whose monitor died (caller decrefs). */
static json_t *orphan_finalize(json_t *state, const char *reason)
{
	json_t *fin = json_pack("{s:O, s:O, s:s, s:s, s:I}", "session_id",
	                        json_object_get(state, "session_id"), "node",
	                        json_object_get(state, "node"), "status", "interrupted", "reason",
	                        reason, "stopped_ms", (json_int_t)gi_clock_wall_ms());
	static const char *const copied[] = {"started_ms", "interval_ms", "next_seq",
	                                     "trace_modules", "project"};
	for (size_t i = 0; i < sizeof(copied) / sizeof(copied[0]); i++) {
		json_t *v = json_object_get(state, copied[i]);
		if (v && !json_is_null(v))
			json_object_set(fin, copied[i], v);
	}
	json_t *ending = json_object_get(state, "ending");
	if (json_is_object(ending)) {
		/* The end had begun (a stop, the node going down): keep its words. */
		json_object_set(fin, "status", json_object_get(ending, "status"));
		json_object_set(fin, "reason", json_object_get(ending, "reason"));
		json_object_set_new(
		    fin, "object_code",
		    json_pack("{s:s}", "error", "the monitor died before pulling object code"));
	}
	return fin;
}

/* At start: what monitors that died left in DATA/monitor-sessions. An
 * observation whose end had begun is closed at once (its finalize queued
 * behind its spooled snapshots); the others wait for observe/start of their
 * node (adopted) or observe/stop (closed), or for the worker's liveness
 * deadline. */
static void orphans_load(struct api_monitor *m)
{
	DIR *d = opendir(m->sessions_dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char path[4096];
		size_t n = strlen(e->d_name);
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", m->sessions_dir, e->d_name);
		if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0) {
			unlink(path); /* a temporary of an interrupted write */
			continue;
		}
		char *text = NULL;
		size_t len = 0;
		json_t *st = NULL;
		if (gi_fs_read_file(path, 65536, &text, &len) == 0)
			st = json_loadb(text, len, 0, NULL);
		gi_free(text);
		const char *sid = json_string_value(json_object_get(st, "session_id"));
		const char *node = json_string_value(json_object_get(st, "node"));
		if (!session_id_plain(sid) || !node) {
			gi_log_warn("monitor", "unusable session state %s: deleted", path);
			unlink(path);
		} else if (json_object_get(st, "ending")) {
			json_t *fin = orphan_finalize(st, "the monitor died");
			api_pusher_push(m->pusher, API_PUSH_FINALIZE, fin);
			json_decref(fin);
			unlink(path);
			gi_log_warn("monitor",
			            "observation %s of %s was ending when the previous monitor "
			            "died: its end is queued for the worker",
			            sid, node);
		} else {
			json_t *old = json_object_get(m->orphans, node);
			if (old) /* two for one node: the older is closed */
				session_state_remove(
				    m, NULL, json_string_value(json_object_get(old, "session_id")));
			json_object_set(m->orphans, node, st);
			gi_log_warn("monitor",
			            "observation %s of %s was running when the previous monitor "
			            "died: `giulia-observe start %s` continues it, `giulia-observe "
			            "stop %s` ends it",
			            sid, node, node, node);
		}
		json_decref(st);
	}
	if (d)
		closedir(d);
}

static void observed_add(struct node_state *ns, const char *name)
{
	if (ns->observing && name && name[0] && strlen(name) <= 255 &&
	    json_object_size(ns->observed) < OBSERVED_MAX)
		json_object_set_new(ns->observed, name, json_true());
}

static void observed_add_each(void *ctx, const char *name)
{
	observed_add(ctx, name);
}

/* Records a snapshot in the node's history and evaluates the alert rules on
 * it; returns the alerts (a new reference, NULL without a node). `view` is
 * the snapshot parsed once by the caller for everything done with it here
 * and in the live feed (NULL: it could not be; obs_view_parse was five
 * times a snapshot's cost here before, BENCHMARKS.md "Fleet"). The
 * snapshot is kept by reference: nothing changes it once it is delivered. */
static json_t *history_add(struct api_monitor *m, json_t *snap, const struct obs_view *view)
{
	const char *node = json_string_value(json_object_get(snap, "node"));
	if (!node)
		return NULL;
	struct api_point point;
	api_stats_point_of_view(view, &point);
	pthread_mutex_lock(&m->lock);
	struct node_state *ns = node_get(m, node, true);
	json_decref(ns->last);
	ns->last = json_incref(snap);
	if (!ns->history.ring)
		api_history_init(&ns->history, HISTORY_MAX);
	api_history_add(&ns->history, &point);
	api_node_totals_add_view(&ns->totals, view);
	/* the modules it shows working, for the object code at the end */
	if (view && ns->observing && json_object_size(ns->observed) < OBSERVED_MAX)
		obs_view_modules_each(view, observed_add_each, ns);
	json_decref(ns->alerts);
	ns->alerts = api_alert_rules_eval_view(monitor_rules(m), view, &ns->history);
	json_t *alerts = json_incref(ns->alerts);
	/* The state with the next seq, written before the snapshot is queued. */
	char local[2048], sid[24];
	char *text = NULL;
	size_t len = 0;
	json_t *seq = json_object_get(snap, "seq");
	if (ns->state && json_is_integer(seq)) {
		if (!json_object_get(ns->state, "session_id")) {
			json_object_set(ns->state, "session_id",
			                json_object_get(snap, "session_id"));
			state_prefix_drop(ns);
		}
		json_int_t next = json_integer_value(seq) + 1;
		json_t *was = json_object_get(ns->state, "next_seq");
		if (json_is_integer(was))
			json_integer_set(was, next); /* its own: observe/start packed it */
		else
			json_object_set_new(ns->state, "next_seq", json_integer(next));
		const char *id = json_string_value(json_object_get(ns->state, "session_id"));
		gi_strlcpy(sid, id ? id : "", sizeof(sid));
		text = sid[0] ? state_text(ns, (long long)next, local, sizeof(local), &len) : NULL;
	}
	pthread_mutex_unlock(&m->lock);
	if (text)
		state_file_put(m, ns, sid, text, len);
	if (text != local)
		gi_free(text);
	return alerts;
}

/* The snapshot with its text, serialised once by the observer for its own
 * history: the worker's queue and the dashboards' feed take that text. */
static void on_snapshot_text(void *ctx, const char *session_id, json_t *snapshot, const char *text,
                             size_t len)
{
	(void)session_id;
	struct api_monitor *m = ctx;
	struct obs_view v;
	const struct obs_view *view = obs_view_parse(snapshot, &v) == 0 ? &v : NULL;
	json_t *alerts = history_add(m, snapshot, view);
	api_pusher_push_text(m->pusher, API_PUSH_INGEST, text, len);
	if (alerts)
		api_live_snapshot_view(m->live, snapshot, view, text, len, alerts);
	json_decref(alerts);
	obs_view_destroy(&v);
}

static void on_snapshot(void *ctx, const char *session_id, json_t *snapshot)
{
	size_t len = 0;
	char *text = gi_json_text(snapshot, &len);
	if (text)
		on_snapshot_text(ctx, session_id, snapshot, text, len);
	gi_free(text);
}

static void cookie_wipe_free(char *c);

struct pull_job {
	struct api_monitor *m;
	json_t *fin;      /* the finalize to queue after the object code */
	char *cookie;     /* NULL: the default; wiped when done */
	json_t *observed; /* module (display form) -> true */
	json_t *batch;    /* {"node", "session_id", "modules": [{"module", "code"}]} */
	size_t batch_bytes;
	int skipped; /* too large to send */
};

static json_t *batch_new(json_t *fin)
{
	return json_pack("{s:O, s:O, s:[]}", "node", json_object_get(fin, "node"), "session_id",
	                 json_object_get(fin, "session_id"), "modules");
}

static void batch_flush(struct pull_job *j)
{
	if (json_array_size(json_object_get(j->batch, "modules")) > 0)
		api_pusher_push(j->m->pusher, API_PUSH_OBJECT_CODE, j->batch);
	json_decref(j->batch);
	j->batch = batch_new(j->fin);
	j->batch_bytes = 0;
}

static int pull_sink(void *ctx, const char *atom, const unsigned char *code, size_t len)
{
	struct pull_job *j = ctx;
	if (len > PULL_MODULE_BYTES / 4 * 3) {
		j->skipped++;
		return 0;
	}
	char *b64 = api_base64_encode(code, len);
	size_t n = strlen(b64);
	if (j->batch_bytes + n > PULL_BATCH_BYTES)
		batch_flush(j);
	json_array_append_new(json_object_get(j->batch, "modules"),
	                      json_pack("{s:s, s:s}", "module", atom, "code", b64));
	j->batch_bytes += n + strlen(atom) + 32;
	gi_free(b64);
	return 0;
}

/* Pulls the observed modules' object code, queues it, then the finalize. */
static void *pull_run(void *arg)
{
	struct pull_job *j = arg;
	const char *node = json_string_value(json_object_get(j->fin, "node"));
	size_t n = json_object_size(j->observed), k = 0;
	char **atoms = gi_calloc(n + 1, sizeof(char *));
	const char *key;
	json_t *v;
	json_object_foreach(j->observed, key, v)
	{
		char atom[512];
		if (gi_module_atom_name(key, atom, sizeof(atom)) == 0)
			atoms[k++] = gi_strdup(atom);
	}
	struct beam_pull_request rq = {
	    (const char *const *)atoms, k, true, 0, gi_clock_mono_ms() + PULL_DEADLINE_MS, true};
	struct beam_pull_summary sum;
	char err[512];
	j->batch = batch_new(j->fin);
	int rc = beam_pull_modules(node, j->cookie, PULL_TIMEOUT_MS, &rq, pull_sink, j, &sum, err,
	                           sizeof(err));
	batch_flush(j);
	json_t *oc = json_pack("{s:i, s:i, s:i, s:i, s:b}", "requested", sum.modules, "pulled",
	                       sum.written, "missing", sum.missing, "applications", sum.apps,
	                       "truncated", sum.truncated || j->skipped > 0);
	if (rc)
		json_object_set_new(oc, "error", json_string(err));
	json_object_set_new(j->fin, "object_code", oc);
	/* Where the node keeps its tables, for the rules' storage model. */
	if (sum.storage) {
		json_t *lines = json_array();
		for (size_t i = 0; i < sum.storage_count; i++)
			json_array_append_new(lines, json_string(sum.storage[i]));
		json_object_set_new(j->fin, "storage", lines);
		dist_strings_free(sum.storage, sum.storage_count);
	}
	if (rc)
		gi_log_warn("monitor", "object code of %s not pulled: %s", node, err);
	api_pusher_push(j->m->pusher, API_PUSH_FINALIZE, j->fin);
	session_state_remove(j->m, node, json_string_value(json_object_get(j->fin, "session_id")));
	for (size_t i = 0; i < k; i++)
		gi_free(atoms[i]);
	gi_free(atoms);
	cookie_wipe_free(j->cookie);
	json_decref(j->observed);
	json_decref(j->batch);
	json_decref(j->fin);
	struct api_monitor *m = j->m;
	gi_free(j);
	pthread_mutex_lock(&m->lock);
	if (--m->pulls == 0)
		pthread_cond_broadcast(&m->pulls_done);
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

/* Takes what the node's observation kept for the pull; false when there is
 * nothing to pull. *cookie_out and *observed_out become the caller's. */
static bool pull_take(struct api_monitor *m, const char *node, char **cookie_out,
                      json_t **observed_out)
{
	*cookie_out = NULL;
	*observed_out = NULL;
	pthread_mutex_lock(&m->lock);
	struct node_state *ns = node ? node_get(m, node, false) : NULL;
	bool any = ns && ns->observing && json_object_size(ns->observed) > 0;
	if (ns) {
		*cookie_out = ns->session_cookie;
		*observed_out = ns->observed;
		ns->session_cookie = NULL;
		ns->observed = NULL;
		ns->observing = false;
		node_state_set(ns, NULL);
	}
	pthread_mutex_unlock(&m->lock);
	return any;
}

/* Marks the durable state of an observation whose end has begun (so that a
 * monitor dying now is followed by a close, not an adoption) and remembers
 * an end the user did not ask for, for observe/stop to report. */
static void end_record(struct api_monitor *m, const char *session_id, json_t *fin)
{
	const char *node = json_string_value(json_object_get(fin, "node"));
	json_t *state = NULL;
	pthread_mutex_lock(&m->lock);
	struct node_state *ns = node ? node_get(m, node, false) : NULL;
	if (ns && ns->state) {
		state = json_deep_copy(ns->state);
		json_object_set_new(state, "ending",
		                    json_pack("{s:O, s:O?}", "status",
		                              json_object_get(fin, "status"), "reason",
		                              json_object_get(fin, "reason")));
	}
	if (ns && !ns->user_stop && !m->shutting_down) {
		json_decref(ns->ended);
		ns->ended = json_pack("{s:s, s:O, s:O?}", "session_id", session_id, "status",
		                      json_object_get(fin, "status"), "reason",
		                      json_object_get(fin, "reason"));
	}
	if (ns)
		ns->user_stop = false;
	pthread_mutex_unlock(&m->lock);
	if (state)
		session_state_write(m, state);
	json_decref(state);
}

static void on_end(void *ctx, const char *session_id, json_t *finalize)
{
	struct api_monitor *m = ctx;
	json_t *fin = json_deep_copy(finalize);
	const char *st = json_string_value(json_object_get(fin, "status"));
	if (m->shutting_down && (!st || strcmp(st, "interrupted") != 0)) {
		/* Stopped because the monitor is going away, not by the user. */
		json_object_set_new(fin, "status", json_string("interrupted"));
		json_object_set_new(fin, "reason", json_string("monitor shut down"));
	}
	gi_log_info("monitor", "observation %s ended (%s)", session_id,
	            json_string_value(json_object_get(fin, "status")));
	json_object_set_new(fin, "dropped",
	                    json_integer((json_int_t)api_pusher_dropped_of(m->pusher, session_id)));
	end_record(m, session_id, fin);
	api_live_end(m->live, session_id, fin);
	char *cookie = NULL;
	json_t *observed = NULL;
	bool pull =
	    pull_take(m, json_string_value(json_object_get(fin, "node")), &cookie, &observed);
	/* Traced modules count as observed even when no call was seen. */
	size_t i;
	json_t *x;
	json_array_foreach(json_object_get(fin, "trace_modules"), i, x)
	{
		if (observed && json_is_string(x) && json_object_size(observed) < OBSERVED_MAX) {
			json_object_set_new(observed, json_string_value(x), json_true());
			pull = true;
		}
	}
	if (pull && !m->shutting_down) {
		struct pull_job *j = gi_calloc(1, sizeof(*j));
		j->m = m;
		j->fin = fin;
		j->cookie = cookie;
		j->observed = observed;
		pthread_attr_t attr;
		pthread_t t;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_mutex_lock(&m->lock);
		m->pulls++;
		pthread_mutex_unlock(&m->lock);
		int rc = pthread_create(&t, &attr, pull_run, j);
		pthread_attr_destroy(&attr);
		if (rc == 0)
			return;
		pthread_mutex_lock(&m->lock);
		m->pulls--;
		pthread_mutex_unlock(&m->lock);
		gi_free(j);
		json_object_set_new(fin, "object_code",
		                    json_pack("{s:s}", "error", "could not start the pull thread"));
	} else if (pull) {
		json_object_set_new(fin, "object_code",
		                    json_pack("{s:s}", "error",
		                              "the monitor shut down before pulling object code"));
	}
	cookie_wipe_free(cookie);
	json_decref(observed);
	api_pusher_push(m->pusher, API_PUSH_FINALIZE, fin);
	session_state_remove(m, json_string_value(json_object_get(fin, "node")), session_id);
	json_decref(fin);
}

/* ---- helpers ---- */

static json_t *observer_missing(int *status)
{
	return api_error(status, 501, "the runtime observer is not available in this build (%s)",
	                 gi_strerror(GI_EUNSUPPORTED));
}

/* The error response for a failure `rc` to reach or use `node`: the true
 * cause in words, its code name ("NOCOOKIE", "COOKIE", "NONODE", ...) so that
 * clients (giulia-observe) give the same exit code as `giulia pulse`, and the
 * hint of what to check. Caller owns it. */
static json_t *node_error(int *status, int rc, const char *doing, const char *node)
{
	json_t *e =
	    api_error(status, api_status_for(rc), "%s %.256s: %s", doing, node, gi_strerror(rc));
	json_object_set_new(e, "code", json_string(gi_errname(rc)));
	const char *hint = dist_error_hint(rc);
	if (hint && *hint)
		json_object_set_new(e, "hint", json_string(hint));
	return e;
}

static const char *query_node(const struct api_request *req, json_t **err, int *status)
{
	bool invalid = false;
	const char *node = api_request_query(req, "node", &invalid);
	if (!node || invalid || !api_node_name_valid(node)) {
		*err =
		    api_error(status, 400, "node parameter required: a node name like name@host");
		return NULL;
	}
	return node;
}

/* A copy of the node's stored cookie (caller frees and wipes), or NULL:
 * the one given to /api/runtime/connect, else that of its running
 * observation (a process opened from the live page uses the cookie its
 * observation was started with). */
static char *cookie_for(struct api_monitor *m, const char *node)
{
	pthread_mutex_lock(&m->lock);
	struct node_state *ns = node_get(m, node, false);
	const char *stored = ns ? (ns->cookie ? ns->cookie : ns->session_cookie) : NULL;
	char *c = stored ? gi_strdup(stored) : NULL;
	pthread_mutex_unlock(&m->lock);
	return c;
}

static void cookie_wipe_free(char *c)
{
	if (c) {
		memset(c, 0, strlen(c));
		gi_free(c);
	}
}

static bool session_running(struct api_monitor *m, const char *node, char **session_id)
{
	if (session_id)
		*session_id = NULL;
	if (!m->manager)
		return false;
	json_t *st = obs_manager_status(m->manager);
	size_t i;
	json_t *s;
	bool found = false;
	json_array_foreach(st, i, s)
	{
		const char *n = json_string_value(json_object_get(s, "node"));
		if (n && strcmp(n, node) == 0) {
			found = true;
			if (session_id)
				*session_id =
				    gi_strdup(json_string_value(json_object_get(s, "session_id")));
			break;
		}
	}
	json_decref(st);
	return found;
}

/* The current snapshot of `node`: the latest of its running observation
 * unless `fresh`, else a live pulse. */
static int current_snapshot(struct api_monitor *m, const struct api_request *req, const char *node,
                            json_t **out, json_t **err, int *status)
{
	*out = NULL;
	bool invalid = false;
	const char *fresh = api_request_query(req, "fresh", &invalid);
	bool want_fresh = fresh && strcmp(fresh, "true") == 0;
	if (!want_fresh && session_running(m, node, NULL)) {
		pthread_mutex_lock(&m->lock);
		struct node_state *ns = node_get(m, node, false);
		if (ns && ns->last)
			*out = json_incref(ns->last);
		pthread_mutex_unlock(&m->lock);
		if (*out)
			return 0;
	}
	int window = PULSE_WINDOW_MS;
	const char *w = api_request_query(req, "window_ms", &invalid);
	int64_t wv;
	if (invalid || (w && gi_parse_int64(w, 10, 60000, &wv) != 0)) {
		*err = api_error(status, 400, "window_ms must be an integer between 10 and 60000");
		return GI_EINVAL;
	}
	if (w)
		window = (int)wv;
	char *cookie = cookie_for(m, node);
	struct obs_target t = {node, cookie, 0};
	int rc = obs_pulse(&t, window, OBS_TOP_DEFAULT, out);
	cookie_wipe_free(cookie);
	if (rc == GI_EUNSUPPORTED) {
		*err = observer_missing(status);
		return rc;
	}
	if (rc) {
		*err = node_error(status, rc, "pulse of", node);
		return rc;
	}
	return 0;
}

/* ---- routes ---- */

static json_t *route_health(void *ctx, const struct api_request *req, int *status)
{
	(void)req;
	(void)status;
	struct api_monitor *m = ctx;
	json_t *h =
	    json_pack("{s:s, s:s, s:I, s:b, s:o}", "status", "ok", "role", "monitor", "uptime_ms",
	              (json_int_t)(gi_clock_mono_ms() - m->started_ms), "observer",
	              m->manager != NULL, "delivery", api_pusher_stats(m->pusher));
	return h;
}

static json_t *route_connect(void *ctx, const struct api_request *req, int *status)
{
	struct api_monitor *m = ctx;
	json_t *err = NULL;
	const char *node, *cookie;
	if (api_body_string(req, "node", true, &node, &err, status) ||
	    api_body_string(req, "cookie", false, &cookie, &err, status))
		return err;
	if (!api_node_name_valid(node))
		return api_error(status, 400, "node must be a node name like name@host");
	if (cookie && (strlen(cookie) > COOKIE_MAX || !cookie[0]))
		return api_error(status, 400, "cookie must be 1-255 characters");
	struct obs_target t = {node, cookie, 0};
	json_t *snap = NULL;
	int rc = obs_pulse(&t, 50, 1, &snap);
	if (rc == GI_EUNSUPPORTED)
		return observer_missing(status);
	if (rc)
		return node_error(status, rc, "cannot connect to", node);
	pthread_mutex_lock(&m->lock);
	struct node_state *ns = node_get(m, node, true);
	cookie_wipe_free(ns->cookie);
	ns->cookie = cookie ? gi_strdup(cookie) : NULL;
	pthread_mutex_unlock(&m->lock);
	struct obs_view v;
	json_t *resp = NULL;
	if (obs_view_parse(snap, &v) == 0)
		resp = json_pack("{s:s, s:b, s:s?, s:o}", "node", node, "connected", 1,
		                 "otp_release", v.otp_release, "schedulers_online",
		                 api_stats_count_json(v.schedulers_online));
	else
		resp = json_pack("{s:s, s:b, s:n, s:n}", "node", node, "connected", 1,
		                 "otp_release", "schedulers_online");
	obs_view_destroy(&v);
	json_decref(snap);
	return resp;
}

static json_t *route_pulse(void *ctx, const struct api_request *req, int *status)
{
	json_t *err = NULL, *snap = NULL;
	const char *node = query_node(req, &err, status);
	if (!node)
		return err;
	if (current_snapshot(ctx, req, node, &snap, &err, status))
		return err;
	return snap;
}

static json_t *route_top_processes(void *ctx, const struct api_request *req, int *status)
{
	json_t *err = NULL, *snap = NULL;
	const char *node = query_node(req, &err, status);
	if (!node)
		return err;
	bool invalid = false;
	const char *metric = api_request_query(req, "metric", &invalid);
	if (!metric)
		metric = "reductions";
	if (strcmp(metric, "reductions") != 0 && strcmp(metric, "memory") != 0 &&
	    strcmp(metric, "message_queue") != 0)
		return api_error(status, 400, "metric must be reductions, memory or message_queue");
	if (current_snapshot(ctx, req, node, &snap, &err, status))
		return err;
	json_t *list = json_object_get(json_object_get(snap, "top_processes"), metric);
	json_t *resp = json_pack("{s:s, s:s, s:O?, s:O}", "node", node, "metric", metric,
	                         "timestamp_ms", json_object_get(snap, "timestamp_ms"), "processes",
	                         list ? list : json_array());
	json_decref(snap);
	return resp;
}

/* A whole-number query parameter within [min, max]; 0 when absent. */
static int query_int(const struct api_request *req, const char *name, int min, int max, int *out,
                     json_t **err, int *status)
{
	bool invalid = false;
	const char *v = api_request_query(req, name, &invalid);
	int64_t x = 0;
	*out = 0;
	if (invalid || (v && gi_parse_int64(v, min, max, &x) != 0)) {
		*err = api_error(status, 400, "%s must be an integer between %d and %d", name, min,
		                 max);
		return GI_EINVAL;
	}
	*out = (int)x;
	return 0;
}

static bool query_true(const struct api_request *req, const char *name)
{
	bool invalid = false;
	const char *v = api_request_query(req, name, &invalid);
	return v && !invalid && strcmp(v, "true") == 0;
}

/* Reads a view of `node` (an obs_* call of observe/inspect.h) with the
 * node's stored cookie, wiped after. */
typedef int (*node_view_fn)(const struct obs_target *t, const void *req, json_t **out);
static int node_view(struct api_monitor *m, const char *node, node_view_fn view, const void *req,
                     json_t **out)
{
	char *cookie = cookie_for(m, node);
	struct obs_target t = {node, cookie, 0};
	int rc = view(&t, req, out);
	cookie_wipe_free(cookie);
	return rc;
}

static int view_process(const struct obs_target *t, const void *req, json_t **out)
{
	return obs_process(t, req, out);
}

static int view_ets(const struct obs_target *t, const void *req, json_t **out)
{
	return obs_ets(t, req, out);
}

static int view_ports(const struct obs_target *t, const void *req, json_t **out)
{
	return obs_ports(t, req, out);
}

static int view_apps(const struct obs_target *t, const void *req, json_t **out)
{
	return obs_apps(t, req, out);
}

/* GET /api/runtime/process: one process (observe/inspect.h), always read
 * live (one bounded call; a running observation's snapshot has no such
 * detail). */
static json_t *route_process(void *ctx, const struct api_request *req, int *status)
{
	struct api_monitor *m = ctx;
	json_t *err = NULL;
	const char *node = query_node(req, &err, status);
	if (!node)
		return err;
	bool invalid = false;
	struct obs_process_request r = {0};
	r.who = api_request_query(req, "process", &invalid);
	if (invalid || !r.who)
		return api_error(status, 400,
		                 "process parameter required: a pid (<0.123.0>) or a registered "
		                 "name");
	if (query_int(req, "window_ms", 0, OBS_PROCESS_WINDOW_MAX_MS, &r.window_ms, &err, status) ||
	    query_int(req, "keys", 1, OBS_PROCESS_KEYS_MAX, &r.keys_max, &err, status) ||
	    query_int(req, "messages", 0, OBS_PROCESS_MESSAGES_MAX, &r.messages, &err, status) ||
	    query_int(req, "state_timeout_ms", 1, OBS_PROCESS_STATE_TIMEOUT_MAX,
	              &r.state_timeout_ms, &err, status))
		return err;
	r.dictionary_values = query_true(req, "values");
	r.state = query_true(req, "state");
	char msg[256];
	if (obs_process_request_check(&r, msg, sizeof(msg)) != 0)
		return api_error(status, 400, "%s", msg);
	json_t *out = NULL;
	int rc = node_view(m, node, view_process, &r, &out);
	if (rc == GI_ENOTFOUND)
		return api_error(status, 404, "no process %.100s on %.256s (it may have exited)",
		                 r.who, node);
	if (rc)
		return node_error(status, rc, "process on", node);
	return out;
}

/* GET /api/runtime/ets: the largest ETS tables (observe/inspect.h), read
 * live in one bounded call. */
static json_t *route_ets(void *ctx, const struct api_request *req, int *status)
{
	struct api_monitor *m = ctx;
	json_t *err = NULL;
	const char *node = query_node(req, &err, status);
	if (!node)
		return err;
	bool invalid = false;
	struct obs_ets_request r = {0};
	r.sort = api_request_query(req, "sort", &invalid);
	if (invalid || (r.sort && strcmp(r.sort, "memory") != 0 && strcmp(r.sort, "size") != 0))
		return api_error(status, 400, "sort must be memory or size");
	if (query_int(req, "limit", 1, OBS_ETS_LIMIT_MAX, &r.limit, &err, status))
		return err;
	json_t *out = NULL;
	int rc = node_view(m, node, view_ets, &r, &out);
	if (rc)
		return node_error(status, rc, "ETS tables of", node);
	return out;
}

/* GET /api/runtime/ports: ports and sockets over a window
 * (observe/inspect.h), read live in one bounded call. */
static json_t *route_ports(void *ctx, const struct api_request *req, int *status)
{
	struct api_monitor *m = ctx;
	json_t *err = NULL;
	const char *node = query_node(req, &err, status);
	if (!node)
		return err;
	struct obs_ports_request r = {0};
	if (query_int(req, "window_ms", 10, OBS_PORTS_WINDOW_MAX_MS, &r.window_ms, &err, status) ||
	    query_int(req, "limit", 1, OBS_PORTS_LIMIT_MAX, &r.limit, &err, status))
		return err;
	json_t *out = NULL;
	int rc = node_view(m, node, view_ports, &r, &out);
	if (rc)
		return node_error(status, rc, "ports of", node);
	return out;
}

/* GET /api/runtime/apps: the applications, or one's supervision tree
 * (observe/inspect.h), read live in one bounded call. */
static json_t *route_apps(void *ctx, const struct api_request *req, int *status)
{
	struct api_monitor *m = ctx;
	json_t *err = NULL;
	const char *node = query_node(req, &err, status);
	if (!node)
		return err;
	bool invalid = false;
	struct obs_apps_request r = {0};
	r.app = api_request_query(req, "app", &invalid);
	if (invalid)
		return api_error(status, 400, "app must be an application name");
	if (query_int(req, "depth", 1, OBS_APPS_DEPTH_MAX, &r.depth, &err, status) ||
	    query_int(req, "width", 1, OBS_APPS_WIDTH_MAX, &r.width, &err, status))
		return err;
	json_t *out = NULL;
	int rc = node_view(m, node, view_apps, &r, &out);
	if (rc == GI_EINVAL)
		return api_error(status, 400, "app must be an application name");
	if (rc == GI_ENOTFOUND)
		return api_error(status, 404, "no application %.100s runs on %.256s", r.app, node);
	if (rc)
		return node_error(status, rc, "applications of", node);
	return out;
}

static int view_alloc(const struct obs_target *t, const void *req, json_t **out)
{
	return obs_alloc(t, *(const int *)req, out);
}

static int view_binleak(const struct obs_target *t, const void *req, json_t **out)
{
	return obs_binleak(t, *(const int *)req, out);
}

/* GET /api/runtime/alloc (read-only) and /api/runtime/binleak (forces a GC
 * of every process: only with confirm=true): observe/inspect.h. */
static json_t *route_memory(void *ctx, const struct api_request *req, int *status, bool leak)
{
	json_t *err = NULL;
	const char *node = query_node(req, &err, status);
	if (!node)
		return err;
	int limit = 0;
	if (query_int(req, "limit", 1, leak ? OBS_BINLEAK_LIMIT_MAX : OBS_ALLOC_LIMIT_MAX, &limit,
	              &err, status))
		return err;
	if (leak && !query_true(req, "confirm"))
		return api_error(
		    status, 400,
		    "binleak forces a garbage collection of every process of the node: "
		    "add confirm=true");
	json_t *out = NULL;
	int rc = node_view(ctx, node, leak ? view_binleak : view_alloc, &limit, &out);
	if (rc)
		return node_error(status, rc, leak ? "binary leaks of" : "allocators of", node);
	return out;
}

static json_t *route_alloc(void *ctx, const struct api_request *req, int *status)
{
	return route_memory(ctx, req, status, false);
}

static json_t *route_binleak(void *ctx, const struct api_request *req, int *status)
{
	return route_memory(ctx, req, status, true);
}

static json_t *route_hot_spots(void *ctx, const struct api_request *req, int *status)
{
	json_t *err = NULL, *snap = NULL;
	const char *node = query_node(req, &err, status);
	if (!node)
		return err;
	if (current_snapshot(ctx, req, node, &snap, &err, status))
		return err;
	json_t *calls = json_object_get(json_object_get(snap, "trace"), "calls");
	json_t *functions = calls ? json_deep_copy(calls) : json_array();
	api_stats_sort(functions, api_stats_cmp_count_desc);
	while (json_array_size(functions) > 20)
		json_array_remove(functions, json_array_size(functions) - 1);
	struct obs_view v;
	obs_view_parse(snap, &v);
	json_t *resp = json_pack("{s:s, s:o, s:o, s:o, s:o}", "node", node, "timestamp_ms",
	                         api_stats_count_json(v.timestamp_ms), "scheduler_utilisation",
	                         api_stats_num_json(v.utilisation_total), "modules",
	                         api_stats_hot_modules(snap), "functions", functions);
	obs_view_destroy(&v);
	json_decref(snap);
	return resp;
}

/* The node's newest `limit` (0: all) history points as JSON (newest last),
 * or NULL when none. */
static json_t *history_copy(struct api_monitor *m, const char *node, int limit)
{
	pthread_mutex_lock(&m->lock);
	struct node_state *ns = node_get(m, node, false);
	json_t *out = ns ? api_history_json(&ns->history, (size_t)limit) : NULL;
	pthread_mutex_unlock(&m->lock);
	return out;
}

static int query_limit(const struct api_request *req, int *limit, json_t **err, int *status)
{
	bool invalid = false;
	const char *v = api_request_query(req, "limit", &invalid);
	int64_t x;
	*limit = 0;
	if (invalid || (v && gi_parse_int64(v, 1, HISTORY_MAX, &x) != 0)) {
		*err = api_error(status, 400, "limit must be an integer between 1 and %d",
		                 HISTORY_MAX);
		return GI_EINVAL;
	}
	if (v)
		*limit = (int)x;
	return 0;
}

static json_t *route_history(void *ctx, const struct api_request *req, int *status)
{
	json_t *err = NULL;
	int limit;
	const char *node = query_node(req, &err, status);
	if (!node)
		return err;
	if (query_limit(req, &limit, &err, status))
		return err;
	json_t *points = history_copy(ctx, node, limit);
	return json_pack("{s:s, s:o}", "node", node, "points", points ? points : json_array());
}

static json_t *route_trend(void *ctx, const struct api_request *req, int *status)
{
	json_t *err = NULL;
	int limit;
	const char *node = query_node(req, &err, status);
	if (!node)
		return err;
	if (query_limit(req, &limit, &err, status))
		return err;
	json_t *points = history_copy(ctx, node, limit);
	if (!points)
		return api_error(status, 404,
		                 "no history for %.256s: start an observation of the node first",
		                 node);
	double t0 = api_stats_num(json_array_get(points, 0), "timestamp_ms", NULL);
	double t1 = api_stats_num(json_array_get(points, json_array_size(points) - 1),
	                          "timestamp_ms", NULL);
	json_t *resp =
	    json_pack("{s:s, s:I, s:o, s:f, s:o}", "node", node, "points",
	              (json_int_t)json_array_size(points), "window_ms", api_stats_num_json(t1 - t0),
	              "threshold_pct", API_TREND_THRESHOLD_PCT, "metrics", api_stats_trend(points));
	json_decref(points);
	return resp;
}

static json_t *route_alerts(void *ctx, const struct api_request *req, int *status)
{
	struct api_monitor *m = ctx;
	json_t *err = NULL, *snap = NULL;
	const char *node = query_node(req, &err, status);
	if (!node)
		return err;
	json_t *alerts = NULL;
	pthread_mutex_lock(&m->lock);
	struct node_state *ns = node_get(m, node, false);
	if (ns && ns->last) {
		snap = json_incref(ns->last);
		alerts = json_incref(ns->alerts); /* evaluated when the snapshot came */
	}
	pthread_mutex_unlock(&m->lock);
	if (!snap && current_snapshot(m, req, node, &snap, &err, status))
		return err;
	if (!alerts) {
		json_t *points = history_copy(m, node, 0);
		alerts = api_alert_rules_eval(monitor_rules(m), snap, points);
		json_decref(points);
	}
	json_t *resp = json_pack("{s:s, s:O?, s:o}", "node", node, "timestamp_ms",
	                         json_object_get(snap, "timestamp_ms"), "alerts", alerts);
	json_decref(snap);
	return resp;
}

/* trace_modules: an array of module names, or a comma-separated string. */
static int trace_modules_parse(json_t *v, const char ***out, json_t **err, int *status)
{
	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	const char **mods = gi_calloc(TRACE_MODULES_MAX + 1, sizeof(*mods));
	size_t n = 0, i;
	json_t *x;
	if (!json_is_array(v) || json_array_size(v) > TRACE_MODULES_MAX) {
		gi_free(mods);
		*err = api_error(status, 400, "trace_modules must be an array of at most %d names",
		                 TRACE_MODULES_MAX);
		return GI_EINVAL;
	}
	json_array_foreach(v, i, x)
	{
		if (!json_is_string(x) || json_string_length(x) == 0 ||
		    json_string_length(x) > 255) {
			gi_free(mods);
			*err = api_error(status, 400, "trace_modules must hold module names");
			return GI_EINVAL;
		}
		mods[n++] = json_string_value(x);
	}
	*out = mods;
	return 0;
}

/* Starts keeping the cookie and observed modules of `node` for the object
 * code pull at its end; false (nothing changed) when an observation of it
 * is already being kept. */
static bool observe_begin(struct api_monitor *m, const char *node, const char *cookie)
{
	pthread_mutex_lock(&m->lock);
	struct node_state *ns = node_get(m, node, true);
	bool fresh = !ns->observing;
	if (fresh) {
		cookie_wipe_free(ns->session_cookie);
		ns->session_cookie = cookie ? gi_strdup(cookie) : NULL;
		json_decref(ns->observed);
		ns->observed = json_object();
		ns->observing = true;
		memset(&ns->totals, 0, sizeof(ns->totals));
	}
	pthread_mutex_unlock(&m->lock);
	return fresh;
}

/* Undoes observe_begin after a failed start. */
static void observe_abandon(struct api_monitor *m, const char *node)
{
	char *cookie = NULL;
	json_t *observed = NULL;
	pull_take(m, node, &cookie, &observed);
	cookie_wipe_free(cookie);
	json_decref(observed);
}

/* GET the worker's record of observation `sid`; *out (caller decrefs) is
 * set on 200. Returns the HTTP status, or -1 when the worker did not answer. */
static int worker_observation(struct api_monitor *m, const char *sid, json_t **out)
{
	*out = NULL;
	char url[1024];
	snprintf(url, sizeof(url), "%s/api/runtime/observation/%s", m->worker_url, sid);
	struct net_call call = {"GET", url, NULL, m->worker_token, 5000};
	int st = 0;
	json_t *resp = NULL;
	if (net_client_call(&call, &st, &resp) != 0) {
		json_decref(resp);
		return -1;
	}
	if (st == 200)
		*out = resp;
	else
		json_decref(resp);
	return st;
}

/* Whether the worker would still take snapshots of observation `obs`. */
static bool worker_observation_open(json_t *obs)
{
	const char *st = json_string_value(json_object_get(obs, "status"));
	const char *reason = json_string_value(json_object_get(obs, "reason"));
	if (json_is_integer(json_object_get(obs, "profile_id")) || !st)
		return false;
	return strcmp(st, "running") == 0 || (strcmp(st, "interrupted") == 0 && reason &&
	                                      strcmp(reason, "worker shut down") == 0);
}

/* Takes the orphan of `node` (caller decrefs), or NULL. */
static json_t *orphan_take(struct api_monitor *m, const char *node)
{
	pthread_mutex_lock(&m->lock);
	json_t *o = json_incref(json_object_get(m->orphans, node));
	json_object_del(m->orphans, node);
	pthread_mutex_unlock(&m->lock);
	return o;
}

static void orphan_put_back(struct api_monitor *m, const char *node, json_t *orphan)
{
	pthread_mutex_lock(&m->lock);
	if (!json_object_get(m->orphans, node))
		json_object_set(m->orphans, node, orphan);
	pthread_mutex_unlock(&m->lock);
}

/* Queues the finalize that closes an orphan (behind its spooled snapshots)
 * and forgets its state. */
static void orphan_close(struct api_monitor *m, json_t *orphan, const char *reason)
{
	json_t *fin = orphan_finalize(orphan, reason);
	api_pusher_push(m->pusher, API_PUSH_FINALIZE, fin);
	json_decref(fin);
	session_state_remove(m, json_string_value(json_object_get(orphan, "node")),
	                     json_string_value(json_object_get(orphan, "session_id")));
}

/* Decides what observe/start does with the orphan of its node: continue it
 * (filling cfg's session_id, first_seq, started_ms; true) when the worker
 * still has it open or never heard of it; otherwise close it (its end
 * queued) and start anew. */
static bool orphan_adopt(struct api_monitor *m, json_t *orphan, struct obs_session_config *cfg)
{
	const char *sid = json_string_value(json_object_get(orphan, "session_id"));
	json_t *obs = NULL;
	int st = worker_observation(m, sid, &obs);
	bool adopt = st == 404 || (st == 200 && worker_observation_open(obs));
	if (adopt) {
		long long next = json_integer_value(json_object_get(orphan, "next_seq"));
		json_t *last = json_object_get(obs, "last_seq");
		if (json_is_integer(last) && json_integer_value(last) + 1 > next)
			next = json_integer_value(last) + 1;
		cfg->session_id = sid;
		cfg->first_seq = (long)next;
		cfg->started_ms = json_integer_value(json_object_get(orphan, "started_ms"));
	} else if (st == 200) {
		/* the worker ended it already */
		session_state_remove(m, json_string_value(json_object_get(orphan, "node")), sid);
	} else {
		orphan_close(m, orphan, "the monitor observing it died");
	}
	json_decref(obs);
	return adopt;
}

/* `overhead`: absent or null (OBS_OVERHEAD_DEFAULT, 5%), a fraction (0 counts every
 * call, else up to OBS_OVERHEAD_MAX) or a percentage text such as "5%". */
static int overhead_parse(json_t *v, double *out)
{
	*out = OBS_OVERHEAD_DEFAULT;
	if (!v || json_is_null(v))
		return 0;
	double x = -1;
	if (json_is_number(v)) {
		x = json_number_value(v);
	} else if (json_is_string(v)) {
		char *end = NULL;
		const char *text = json_string_value(v);
		double pct = strtod(text, &end);
		if (end && end != text && strcmp(end, "%") == 0)
			x = pct / 100.0;
	}
	if (!(x >= 0 && x <= OBS_OVERHEAD_MAX))
		return -1;
	*out = x;
	return 0;
}

/* `budget`: the guest's budget (docs/OBSERVE.md "The guest's budget"): absent
 * or null (OBS_GUEST_BUDGET_DEFAULT, 1% of a scheduler), a fraction in
 * (0, OBS_GUEST_BUDGET_MAX] or a percentage text such as "1%". */
static int budget_parse(json_t *v, double *out)
{
	*out = OBS_GUEST_BUDGET_DEFAULT;
	if (!v || json_is_null(v))
		return 0;
	double x = -1;
	if (overhead_parse(v, &x) != 0 || !(x > 0 && x <= OBS_GUEST_BUDGET_MAX))
		return -1;
	*out = x;
	return 0;
}

static json_t *route_observe_start(void *ctx, const struct api_request *req, int *status)
{
	struct api_monitor *m = ctx;
	json_t *err = NULL;
	const char *node, *cookie, *project;
	long long interval = OBS_INTERVAL_DEFAULT_MS, top = OBS_TOP_DEFAULT;
	long long sample_period = OBS_SAMPLE_PERIOD_DEFAULT_MS,
	          sample_processes = OBS_SAMPLE_PROCESSES_DEFAULT;
	long long lease = OBS_LEASE_DEFAULT_MS;
	if (api_body_string(req, "node", true, &node, &err, status) ||
	    api_body_string(req, "cookie", false, &cookie, &err, status) ||
	    api_body_string(req, "project", false, &project, &err, status) ||
	    api_body_int(req, "interval_ms", false, OBS_INTERVAL_MIN_MS, 3600000, &interval, &err,
	                 status) ||
	    api_body_int(req, "top_n", false, 1, 1000, &top, &err, status) ||
	    api_body_int(req, "sample_period_ms", false, 0, OBS_SAMPLE_PERIOD_MAX_MS,
	                 &sample_period, &err, status) ||
	    api_body_int(req, "sample_processes", false, 1, OBS_SAMPLE_PROCESSES_MAX,
	                 &sample_processes, &err, status) ||
	    api_body_int(req, "lease_ms", false, 1000, OBS_LEASE_MAX_MS, &lease, &err, status))
		return err;
	if (sample_period > 0 && sample_period < OBS_SAMPLE_PERIOD_MIN_MS)
		return api_error(status, 400, "sample_period_ms must be 0 (no sampler) or %d-%d",
		                 OBS_SAMPLE_PERIOD_MIN_MS, OBS_SAMPLE_PERIOD_MAX_MS);
	if (!api_node_name_valid(node))
		return api_error(status, 400, "node must be a node name like name@host");
	if (cookie && (!cookie[0] || strlen(cookie) > COOKIE_MAX))
		return api_error(status, 400, "cookie must be 1-255 characters");
	if (project && project[0] != '/')
		return api_error(status, 400, "project must be an absolute path");
	json_t *call_time = json_object_get(req->body, "call_time");
	if (call_time && !json_is_boolean(call_time) && !json_is_null(call_time))
		return api_error(status, 400, "call_time must be true or false");
	const char **mods = NULL;
	if (trace_modules_parse(json_object_get(req->body, "trace_modules"), &mods, &err, status))
		return err;
	if (json_is_true(call_time) && !mods) {
		return api_error(status, 400, "call_time needs trace_modules");
	}
	double overhead = 0, pause_above = 0;
	json_t *pause = json_object_get(req->body, "pause_above");
	if (overhead_parse(json_object_get(req->body, "overhead"), &overhead) != 0) {
		gi_free(mods);
		return api_error(
		    status, 400,
		    "overhead must be a fraction 0-%.1f or a percentage such as \"5%%\"",
		    OBS_OVERHEAD_MAX);
	}
	double budget = 0;
	if (budget_parse(json_object_get(req->body, "budget"), &budget) != 0) {
		gi_free(mods);
		return api_error(status, 400,
		                 "budget must be a share of one scheduler in (0, %.1f] or a "
		                 "percentage such as \"1%%\"",
		                 OBS_GUEST_BUDGET_MAX);
	}
	if (pause && !json_is_null(pause)) {
		pause_above = json_number_value(pause);
		if (!json_is_number(pause) || !(pause_above > 0 && pause_above <= 1)) {
			gi_free(mods);
			return api_error(status, 400,
			                 "pause_above must be a scheduler utilisation in (0, 1]; 1 "
			                 "never pauses");
		}
	}
	if (!m->manager) {
		gi_free(mods);
		return observer_missing(status);
	}
	char *stored = cookie ? NULL : cookie_for(m, node);
	struct obs_session_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.node = node;
	cfg.cookie = cookie ? cookie : stored;
	cfg.interval_ms = (int)interval;
	cfg.top_n = (int)top;
	cfg.sample_period_ms = sample_period == 0 ? -1 : (int)sample_period;
	cfg.sample_processes = (int)sample_processes;
	cfg.trace_modules = mods;
	cfg.project = project;
	cfg.call_time = json_is_true(call_time);
	cfg.lease_ms = (int)lease;
	cfg.overhead = overhead;
	cfg.pause_above = pause_above >= 1 ? 2.0 : pause_above;
	cfg.guest_budget = budget;
	char *session_id = NULL;
	json_t *orphan = session_running(m, node, NULL) ? NULL : orphan_take(m, node);
	bool adopted = orphan && orphan_adopt(m, orphan, &cfg);
	/* Set before the start, so that its first snapshots are collected too. */
	bool fresh = observe_begin(m, node, cfg.cookie);
	int rc = obs_session_start(m->manager, &cfg, &session_id);
	if (rc && fresh)
		observe_abandon(m, node);
	if (rc && adopted)
		orphan_put_back(m, node, orphan);
	if (rc == 0) {
		json_t *state = json_pack(
		    "{s:s, s:s, s:I, s:I, s:O?, s:s?, s:I, s:I}", "session_id", session_id, "node",
		    node, "interval_ms", (json_int_t)interval, "top_n", (json_int_t)top,
		    "trace_modules", json_object_get(req->body, "trace_modules"), "project",
		    project, "started_ms",
		    (json_int_t)(cfg.started_ms > 0 ? cfg.started_ms : gi_clock_wall_ms()),
		    "next_seq", (json_int_t)cfg.first_seq);
		session_state_write(m, state);
		pthread_mutex_lock(&m->lock);
		struct node_state *ns = node_get(m, node, true);
		node_state_set(ns, state);
		json_decref(ns->ended);
		ns->ended = NULL;
		pthread_mutex_unlock(&m->lock);
	}
	json_t *resp;
	if (rc == GI_EEXIST)
		resp = api_error(status, 409, "an observation of %.256s is already running", node);
	else if (rc)
		resp = node_error(status, rc, "cannot observe", node);
	else {
		resp = json_pack("{s:s, s:s, s:I, s:O?, s:s?, s:b}", "session_id", session_id,
		                 "node", node, "interval_ms", (json_int_t)interval, "trace_modules",
		                 json_object_get(req->body, "trace_modules"), "project", project,
		                 "call_time", cfg.call_time);
		json_object_set_new(resp, "overhead",
		                    overhead > 0 && mods ? json_real(overhead) : json_null());
		/* the lease in force: at least two intervals */
		json_object_set_new(resp, "lease_ms",
		                    json_integer(lease > 2 * interval ? lease : 2 * interval));
		if (adopted)
			json_object_set_new(resp, "adopted",
			                    json_pack("{s:s, s:I}", "session_id", session_id,
			                              "from_seq", (json_int_t)cfg.first_seq));
		gi_log_info("monitor", "observing %s every %lld ms (session %s%s)", node, interval,
		            session_id, adopted ? ", continued after a monitor died" : "");
	}
	json_decref(orphan);
	cookie_wipe_free(stored);
	gi_free(mods);
	gi_free(session_id);
	return resp;
}

/* Fetches the stored profile from the worker, or NULL. */
static json_t *profile_fetch(struct api_monitor *m, json_t *profile_id)
{
	if (!json_is_integer(profile_id))
		return NULL;
	char url[1024];
	snprintf(url, sizeof(url), "%s/api/runtime/profile/%lld", m->worker_url,
	         (long long)json_integer_value(profile_id));
	struct net_call call = {"GET", url, NULL, m->worker_token, 30000};
	int st = 0;
	json_t *resp = NULL;
	if (net_client_call(&call, &st, &resp) != 0 || st != 200) {
		json_decref(resp);
		return NULL;
	}
	json_t *p = json_incref(json_object_get(resp, "profile"));
	json_decref(resp);
	return p;
}

/* The answer of observe/stop for an observation that was not running any
 * more: it ended on its own (`ended`), or its monitor died (an orphan, which
 * this closes). Says so, with the reason and the profile; 404 when neither. */
static json_t *stop_ended(struct api_monitor *m, const char *node, int wait, int *status)
{
	pthread_mutex_lock(&m->lock);
	struct node_state *ns = node_get(m, node, false);
	json_t *ended = ns ? ns->ended : NULL;
	if (ns)
		ns->ended = NULL;
	pthread_mutex_unlock(&m->lock);
	json_t *orphan = ended ? NULL : orphan_take(m, node);
	if (!ended && !orphan)
		return api_error(status, 404, "no observation of %.256s is running", node);
	const char *sid = json_string_value(json_object_get(ended ? ended : orphan, "session_id"));
	json_t *obs = NULL;
	bool queued_here = ended != NULL; /* its finalize went through this pusher */
	if (orphan) {
		int st = worker_observation(m, sid, &obs);
		queued_here = !(st == 200 && !worker_observation_open(obs));
		if (queued_here)
			orphan_close(m, orphan, "the monitor observing it died");
		else
			session_state_remove(m, node, sid);
		json_decref(obs);
		obs = NULL;
	}
	json_t *fin = NULL, *resp;
	if ((!queued_here || api_pusher_wait_finalize(m->pusher, sid, wait, &fin) != 0) &&
	    worker_observation(m, sid, &obs) == 200 &&
	    json_is_integer(json_object_get(obs, "profile_id")))
		fin = json_pack("{s:s, s:O, s:O, s:O}", "session_id", sid, "status",
		                json_object_get(obs, "status"), "snapshots",
		                json_object_get(obs, "snapshots"), "profile_id",
		                json_object_get(obs, "profile_id"));
	json_decref(obs);
	obs = NULL;
	worker_observation(m, sid, &obs); /* the worker's words on how it ended */
	json_t *reason = json_object_get(obs, "reason");
	if (!json_is_string(reason))
		reason = json_object_get(ended ? ended : orphan, "reason");
	if (!json_is_string(reason) && orphan)
		reason = NULL;
	char why[512];
	snprintf(why, sizeof(why), "%s",
	         json_is_string(reason) ? json_string_value(reason)
	         : orphan               ? "the monitor observing it died"
	                                : "it ended on its own");
	if (!fin) {
		*status = 202;
		resp = json_pack("{s:s, s:s, s:b, s:b, s:s, s:s}", "session_id", sid, "node", node,
		                 "queued", 1, "ended_early", 1, "reason", why, "message",
		                 "the observation had already ended; the worker has not "
		                 "acknowledged its end yet, the profile is built when it does");
	} else {
		json_t *profile_id = json_object_get(fin, "profile_id");
		json_t *profile = profile_fetch(m, profile_id);
		resp = json_pack(
		    "{s:s, s:s, s:b, s:b, s:s, s:O?, s:O, s:O?, s:O?, s:o?}", "session_id", sid,
		    "node", node, "queued", 0, "ended_early", 1, "reason", why, "status",
		    obs ? json_object_get(obs, "status") : json_object_get(fin, "status"),
		    "finalize", fin, "profile_id", profile_id, "snapshots",
		    json_object_get(fin, "snapshots"), "profile", profile);
	}
	json_decref(fin);
	json_decref(obs);
	json_decref(ended);
	json_decref(orphan);
	return resp;
}

static json_t *route_observe_stop(void *ctx, const struct api_request *req, int *status)
{
	struct api_monitor *m = ctx;
	json_t *err = NULL;
	const char *node;
	long long wait = STOP_WAIT_MS;
	if (api_body_string(req, "node", true, &node, &err, status) ||
	    api_body_int(req, "wait_ms", false, 0, 600000, &wait, &err, status))
		return err;
	if (!api_node_name_valid(node))
		return api_error(status, 400, "node must be a node name like name@host");
	if (!m->manager)
		return observer_missing(status);
	char *session_id = NULL;
	if (!session_running(m, node, &session_id) || !session_id) {
		gi_free(session_id);
		return stop_ended(m, node, (int)wait, status);
	}
	pthread_mutex_lock(&m->lock);
	struct node_state *sns = node_get(m, node, true);
	sns->user_stop = true;
	pthread_mutex_unlock(&m->lock);
	int rc = obs_session_stop(m->manager, node);
	if (rc) {
		json_t *e = api_error_code(status, rc, "stopping the observation");
		gi_free(session_id);
		return e;
	}
	json_t *fin = NULL;
	rc = api_pusher_wait_finalize(m->pusher, session_id, (int)wait, &fin);
	json_t *resp;
	if (rc) {
		*status = 202;
		resp =
		    json_pack("{s:s, s:s, s:b, s:s}", "session_id", session_id, "node", node,
		              "queued", 1, "message",
		              "the worker has not acknowledged the end yet; it is queued and will "
		              "be delivered when the worker answers");
	} else {
		json_t *profile_id = json_object_get(fin, "profile_id");
		json_t *profile = profile_fetch(m, profile_id);
		resp =
		    json_pack("{s:s, s:s, s:b, s:O, s:O?, s:O?, s:o?}", "session_id", session_id,
		              "node", node, "queued", 0, "finalize", fin, "profile_id", profile_id,
		              "snapshots", json_object_get(fin, "snapshots"), "profile", profile);
	}
	json_decref(fin);
	gi_free(session_id);
	return resp;
}

static json_t *route_observe_status(void *ctx, const struct api_request *req, int *status)
{
	(void)req;
	(void)status;
	struct api_monitor *m = ctx;
	json_t *obs = m->manager ? obs_manager_status(m->manager) : json_array();
	json_t *orphans = json_array();
	const char *node;
	json_t *o;
	pthread_mutex_lock(&m->lock);
	json_object_foreach(m->orphans, node, o)
	{
		json_array_append_new(orphans,
		                      json_pack("{s:O, s:s, s:O?, s:O?}", "session_id",
		                                json_object_get(o, "session_id"), "node", node,
		                                "started_ms", json_object_get(o, "started_ms"),
		                                "next_seq", json_object_get(o, "next_seq")));
	}
	pthread_mutex_unlock(&m->lock);
	return json_pack("{s:o, s:o, s:o, s:b}", "observations", obs ? obs : json_array(),
	                 "orphans", orphans, "delivery", api_pusher_stats(m->pusher), "observer",
	                 m->manager != NULL);
}

/* POST /api/monitor/cluster {node, cookie?, max?}: the visible members of
 * the node's cluster (docs/API.md), for `giulia-observe start --cluster`. */
static json_t *route_cluster(void *ctx, const struct api_request *req, int *status)
{
	struct api_monitor *m = ctx;
	json_t *err = NULL;
	const char *node, *cookie;
	long long max = CLUSTER_DEFAULT;
	if (api_body_string(req, "node", true, &node, &err, status) ||
	    api_body_string(req, "cookie", false, &cookie, &err, status) ||
	    api_body_int(req, "max", false, 1, CLUSTER_MAX, &max, &err, status))
		return err;
	if (!api_node_name_valid(node))
		return api_error(status, 400, "node must be a node name like name@host");
	if (cookie && (!cookie[0] || strlen(cookie) > COOKIE_MAX))
		return api_error(status, 400, "cookie must be 1-255 characters");
	char *stored = cookie ? NULL : cookie_for(m, node);
	struct obs_target t = {node, cookie ? cookie : stored, 0};
	char **names = NULL;
	size_t count = 0, total = 0;
	int rc = obs_cluster_members(&t, (size_t)max, &names, &count, &total);
	cookie_wipe_free(stored);
	if (rc)
		return node_error(status, rc, "cannot list the cluster of", node);
	json_t *members = json_array(), *skipped = json_array();
	for (size_t i = 0; i < count; i++)
		json_array_append_new(api_node_name_valid(names[i]) ? members : skipped,
		                      json_string(names[i]));
	dist_strings_free(names, count);
	return json_pack("{s:s, s:o, s:I, s:b, s:o}", "node", node, "members", members, "listed",
	                 (json_int_t)total, "truncated", total > count, "skipped", skipped);
}

/* GET /metrics (docs/API.md): the state is copied under the lock, rendered
 * outside it (monitor_metrics.c). */
static void route_metrics(void *ctx, const struct api_request *req, const char *body,
                          size_t body_len, struct api_raw_response *resp)
{
	(void)body;
	(void)body_len;
	struct api_monitor *m = ctx;
	json_t *status = m->manager ? obs_manager_status(m->manager) : json_array();
	struct obs_manager_metrics mm;
	memset(&mm, 0, sizeof(mm));
	if (m->manager)
		obs_manager_metrics(m->manager, &mm);
	size_t n = json_array_size(status);
	struct api_metrics_node *nodes = gi_calloc(n ? n : 1, sizeof(*nodes));
	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < n; i++) {
		json_t *s = json_array_get(status, i);
		const char *node = json_string_value(json_object_get(s, "node"));
		const char *state = json_string_value(json_object_get(s, "state"));
		struct node_state *ns = node ? node_get(m, node, false) : NULL;
		nodes[i].session = s;
		if (ns && ns->last && state && strcmp(state, "running") == 0) {
			/* The alerts of the latest snapshot, evaluated when it came. */
			nodes[i].last = json_incref(ns->last);
			nodes[i].alerts = json_incref(ns->alerts);
			nodes[i].totals = ns->totals;
		}
	}
	pthread_mutex_unlock(&m->lock);
	struct api_monitor_metrics_input in = {
	    .nodes = nodes,
	    .nnodes = n,
	    .manager = m->manager ? &mm : NULL,
	    .delivery = api_pusher_stats(m->pusher),
	    .rules = monitor_rules(m),
	    .uptime_seconds = (double)(gi_clock_mono_ms() - m->started_ms) / 1000.0,
	    .now_wall_ms = gi_clock_wall_ms(),
	};
	enum api_metrics_format f = api_metrics_negotiate(api_request_header(req, "Accept"));
	resp->status = 200;
	resp->content_type = api_metrics_content_type(f);
	resp->body = api_monitor_metrics_render(&in, f, &resp->body_len);
	for (size_t i = 0; i < n; i++) {
		json_decref(nodes[i].last);
		json_decref(nodes[i].alerts);
	}
	gi_free(nodes);
	json_decref(in.delivery);
	json_decref(status);
}

static const struct api_route monitor_routes[] = {
    {"GET", "/health", route_health, false},
    {"POST", "/api/runtime/connect", route_connect, true},
    {"GET", "/api/runtime/pulse", route_pulse, false},
    {"GET", "/api/runtime/top_processes", route_top_processes, false},
    {"GET", "/api/runtime/hot_spots", route_hot_spots, false},
    {"GET", "/api/runtime/process", route_process, false},
    {"GET", "/api/runtime/ets", route_ets, false},
    {"GET", "/api/runtime/ports", route_ports, false},
    {"GET", "/api/runtime/apps", route_apps, false},
    {"GET", "/api/runtime/alloc", route_alloc, false},
    {"GET", "/api/runtime/binleak", route_binleak, false},
    {"GET", "/api/runtime/history", route_history, false},
    {"GET", "/api/runtime/trend", route_trend, false},
    {"GET", "/api/runtime/alerts", route_alerts, false},
    {"POST", "/api/monitor/observe/start", route_observe_start, true},
    {"POST", "/api/monitor/observe/stop", route_observe_stop, true},
    {"GET", "/api/monitor/observe/status", route_observe_status, false},
    {"POST", "/api/monitor/cluster", route_cluster, true},
    {NULL, NULL, NULL, false},
};

static void raw_stream(void *ctx, const struct api_request *req, const char *body, size_t body_len,
                       struct api_raw_response *resp)
{
	(void)body;
	(void)body_len;
	api_live_route(((struct api_monitor *)ctx)->live, req, resp);
}

static const char *const GET_METHODS[] = {"GET", NULL};
static const struct api_raw_route monitor_raw_routes[] = {
    {"/api/monitor/stream", GET_METHODS, raw_stream},
    {"/metrics", GET_METHODS, route_metrics},
    {NULL, NULL, NULL},
};

/* ---- the worker's view of the sessions ---- */

/* Ends session `sid` on its node, for `why` (the worker will not take its
 * snapshots any more), unless the monitor is shutting down. */
static void session_abandon(struct api_monitor *m, const char *sid, const char *why)
{
	pthread_mutex_lock(&m->lock);
	if (!m->shutting_down && m->manager && obs_session_abandon(m->manager, sid, why) == 0)
		gi_log_warn("monitor", "observation %s: %s; stopping it on the node", sid, why);
	pthread_mutex_unlock(&m->lock);
}

/* The pusher's word that the worker refused a snapshot for good: a 409
 * means the observation has ended there (its liveness deadline passed
 * while this monitor was silent, or it belongs to another node), so
 * tracing the node on would be for nobody. */
static void on_refused(void *ctx, const char *session_id, int status, const char *error)
{
	struct api_monitor *m = ctx;
	if (status != 409)
		return;
	char why[256];
	snprintf(why, sizeof(why), "the worker refused its snapshots (%.200s)", error);
	session_abandon(m, session_id, why);
}

/* Tells the worker which sessions run (and how many snapshots each has
 * taken), and stops those the worker says it has ended. */
static void alive_send(struct api_monitor *m, struct net_client *client)
{
	json_t *status = obs_manager_status(m->manager);
	json_t *sessions = json_array();
	size_t i;
	json_t *o;
	json_array_foreach(status, i, o)
	{
		const char *state = json_string_value(json_object_get(o, "state"));
		if (!state || strcmp(state, "running") != 0)
			continue;
		json_array_append_new(sessions,
		                      json_pack("{s:O, s:O, s:O, s:O}", "session_id",
		                                json_object_get(o, "session_id"), "interval_ms",
		                                json_object_get(o, "interval_ms"), "lease_ms",
		                                json_object_get(o, "lease_ms"), "next_seq",
		                                json_object_get(o, "snapshots")));
	}
	json_decref(status);
	if (json_array_size(sessions) == 0) {
		json_decref(sessions);
		return;
	}
	json_t *body = json_pack("{s:o}", "sessions", sessions);
	char *text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	char url[1024];
	snprintf(url, sizeof(url), "%s/api/runtime/ingest/alive", m->worker_url);
	struct net_call call = {"POST", url, text, m->worker_token, ALIVE_PERIOD_MS * 2};
	int st = 0;
	json_t *resp = NULL;
	if (text && net_client_perform(client, &call, &st, &resp) == 0 && st == 200)
		json_array_foreach(json_object_get(resp, "ended"), i, o)
		{
			if (json_is_string(o))
				session_abandon(
				    m, json_string_value(o),
				    "the worker ended the observation (it heard nothing from "
				    "this monitor past its liveness deadline)");
		}
	json_decref(resp);
	free(text);
}

static void *alive_run(void *arg)
{
	struct api_monitor *m = arg;
	struct net_client *client = net_client_new();
	pthread_mutex_lock(&m->lock);
	while (!m->alive_stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += ALIVE_PERIOD_MS / 1000;
		ts.tv_nsec += (long)(ALIVE_PERIOD_MS % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&m->alive_wake, &m->lock, &ts);
		if (m->alive_stop)
			break;
		pthread_mutex_unlock(&m->lock);
		alive_send(m, client);
		pthread_mutex_lock(&m->lock);
	}
	pthread_mutex_unlock(&m->lock);
	net_client_free(client);
	return NULL;
}

int api_monitor_start(const struct api_monitor_config *cfg, struct api_monitor **out)
{
	*out = NULL;
	struct api_monitor *m = gi_calloc(1, sizeof(*m));
	m->started_ms = gi_clock_mono_ms();
	m->live = api_live_new();
	pthread_mutex_init(&m->lock, NULL);
	pthread_mutex_init(&m->state_lock, NULL);
	pthread_cond_init(&m->pulls_done, NULL);
	gi_map_init(&m->nodes);
	m->worker_url = gi_strdup(cfg->worker_url ? cfg->worker_url : API_MONITOR_WORKER_DEFAULT);
	m->worker_token = cfg->worker_token ? gi_strdup(cfg->worker_token) : NULL;
	char *data = cfg->data_dir ? gi_strdup(cfg->data_dir) : gi_fs_data_dir(NULL);
	int rc = 0;
	if (!data) {
		gi_log_error("monitor", "no data directory: set --data, XDG_DATA_HOME or HOME");
		rc = GI_EINVAL;
		goto fail;
	}
	/* One node name per monitor (its data directory), kept across its
	 * restarts: each name is an atom the observed nodes never free. */
	unsigned long long h = 1469598103934665603ULL;
	for (const char *p = data; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	char base[32];
	snprintf(base, sizeof(base), "giulia_m%08llx", h & 0xffffffffULL);
	dist_name_base_set(base);
	struct gi_buf spool;
	gi_buf_init(&spool, 0);
	gi_buf_printf(&spool, "%s/monitor-spool", data);
	struct api_pusher_config pc = {
	    .worker_url = m->worker_url,
	    .token = m->worker_token,
	    .spool_dir = gi_buf_str(&spool),
	    .on_refused = on_refused,
	    .ctx = m,
	};
	rc = api_pusher_new(&pc, &m->pusher);
	gi_buf_reset(&spool);
	gi_buf_printf(&spool, "%s/monitor-sessions", data);
	m->sessions_dir = gi_buf_take(&spool);
	gi_free(data);
	if (rc)
		goto fail;
	m->orphans = json_object();
	if (cfg->alert_rules) {
		char why[768];
		rc = api_alert_rules_load(cfg->alert_rules, &m->rules, why, sizeof(why));
		if (rc) {
			gi_log_error("monitor", "%s", why);
			rc = GI_EINVAL;
			goto fail;
		}
		gi_log_info("monitor", "%zu alert rules from %s", api_alert_rules_count(m->rules),
		            cfg->alert_rules);
	}
	if (gi_fs_mkdir_p(m->sessions_dir) != 0)
		gi_log_warn("monitor",
		            "cannot create %s: observations cannot be adopted after "
		            "a crash",
		            m->sessions_dir);
	orphans_load(m);
	struct obs_callbacks cb = {on_snapshot, on_end, m};
	struct obs_manager *manager = NULL;
	m->manager_rc = obs_manager_new(&cb, &manager);
	if (m->manager_rc) {
		gi_log_warn("monitor", "runtime observer unavailable: %s",
		            gi_strerror(m->manager_rc));
	} else {
		obs_manager_on_snapshot_text(manager, on_snapshot_text);
		/* under the lock: the pusher's thread reads it (on_refused) */
		pthread_mutex_lock(&m->lock);
		m->manager = manager;
		pthread_mutex_unlock(&m->lock);
		pthread_cond_init(&m->alive_wake, NULL);
		m->alive_started = pthread_create(&m->alive_thread, NULL, alive_run, m) == 0;
		if (!m->alive_started)
			pthread_cond_destroy(&m->alive_wake);
	}
	struct api_server_config sc = {
	    .listen = cfg->listen ? cfg->listen : API_MONITOR_LISTEN_DEFAULT,
	    .token = cfg->token,
	    .body_limit = cfg->body_limit,
	    .request_timeout = cfg->request_timeout,
	    .ip_connection_limit = cfg->ip_connection_limit,
	    .allowed_hosts = cfg->allowed_hosts,
	    .name = "monitor",
	    .routes = monitor_routes,
	    .raw_routes = monitor_raw_routes,
	    .ctx = m,
	};
	rc = api_server_start(&sc, &m->server);
	if (rc)
		goto fail;
	gi_log_info("monitor", "pushing to worker %s", m->worker_url);
	*out = m;
	return 0;
fail:
	api_monitor_stop(m);
	return rc;
}

int api_monitor_port(const struct api_monitor *m)
{
	return api_server_port(m->server);
}

void api_monitor_stop(struct api_monitor *m)
{
	if (!m)
		return;
	api_live_close(m->live); /* event streams end now: nothing to wait for */
	api_server_stop(m->server, SHUTDOWN_GRACE_MS);
	if (m->alive_started) {
		pthread_mutex_lock(&m->lock);
		m->alive_stop = true;
		pthread_cond_signal(&m->alive_wake);
		pthread_mutex_unlock(&m->lock);
		pthread_join(m->alive_thread, NULL);
		pthread_cond_destroy(&m->alive_wake);
	}
	/* Stops every session as interrupted: their finalize objects are queued.
	 * Set under the lock: the pusher's thread abandons sessions under it. */
	pthread_mutex_lock(&m->lock);
	m->shutting_down = true;
	pthread_mutex_unlock(&m->lock);
	obs_manager_free(m->manager);
	/* Pulls are bounded by PULL_DEADLINE_MS plus one call's timeout. */
	pthread_mutex_lock(&m->lock);
	while (m->pulls > 0)
		pthread_cond_wait(&m->pulls_done, &m->lock);
	pthread_mutex_unlock(&m->lock);
	api_pusher_free(m->pusher, FLUSH_MS);
	for (size_t i = 0; i < m->nodes.cap; i++)
		if (m->nodes.slots[i].key)
			node_free(m->nodes.slots[i].value);
	gi_map_destroy(&m->nodes);
	pthread_mutex_destroy(&m->lock);
	pthread_mutex_destroy(&m->state_lock);
	pthread_cond_destroy(&m->pulls_done);
	gi_free(m->worker_url);
	gi_free(m->worker_token);
	gi_free(m->sessions_dir);
	json_decref(m->orphans);
	api_live_free(m->live);
	api_alert_rules_free(m->rules);
	gi_free(m);
}
