/*
 * monitor.c - the monitor daemon's state and its life (see monitor.h); its
 * HTTP routes are monitor_routes.c, the state both share monitor_int.h.
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
#include "api/monitor_int.h"

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
#include "observe/observe.h"
#include "observe/snapshot_view.h"
#include "api/base64.h"

const struct api_alert_rules *monitor_rules(const struct api_monitor *m)
{
	return m->rules ? m->rules : api_alert_rules_builtin();
}

/* ---- node state ---- */

struct node_state *monitor_node_get(struct api_monitor *m, const char *node, bool create)
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
void monitor_node_state_set(struct node_state *ns, json_t *state)
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
	struct node_state *ns =
	    monitor_node_get(m, node, true); /* never freed before the monitor */
	pthread_mutex_unlock(&m->lock);
	return ns;
}

/* Writes the state (borrowed) of a running observation: {session_id, node,
 * interval_ms, top_n, trace_modules, project, started_ms, next_seq, ending?}.
 * Never the cookie. Written before the snapshot it counts is queued, so that
 * next_seq is above every seq a dead monitor handed out. */
void monitor_session_state_write(struct api_monitor *m, json_t *state)
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
void monitor_session_state_remove(struct api_monitor *m, const char *node, const char *sid)
{
	char path[4096];
	if (!sid)
		return;
	session_state_path(m, sid, path, sizeof(path));
	struct node_state *ns = NULL;
	if (node) {
		pthread_mutex_lock(&m->lock);
		ns = monitor_node_get(m, node, false);
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
json_t *monitor_orphan_finalize(json_t *state, const char *reason)
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
			json_t *fin = monitor_orphan_finalize(st, "the monitor died");
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
				monitor_session_state_remove(
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
	struct node_state *ns = monitor_node_get(m, node, true);
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

void monitor_cookie_wipe_free(char *c)
{
	if (c) {
		memset(c, 0, strlen(c));
		gi_free(c);
	}
}

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
	monitor_session_state_remove(j->m, node,
	                             json_string_value(json_object_get(j->fin, "session_id")));
	for (size_t i = 0; i < k; i++)
		gi_free(atoms[i]);
	gi_free(atoms);
	monitor_cookie_wipe_free(j->cookie);
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
bool monitor_pull_take(struct api_monitor *m, const char *node, char **cookie_out,
                       json_t **observed_out)
{
	*cookie_out = NULL;
	*observed_out = NULL;
	pthread_mutex_lock(&m->lock);
	struct node_state *ns = node ? monitor_node_get(m, node, false) : NULL;
	bool any = ns && ns->observing && json_object_size(ns->observed) > 0;
	if (ns) {
		*cookie_out = ns->session_cookie;
		*observed_out = ns->observed;
		ns->session_cookie = NULL;
		ns->observed = NULL;
		ns->observing = false;
		monitor_node_state_set(ns, NULL);
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
	struct node_state *ns = node ? monitor_node_get(m, node, false) : NULL;
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
		monitor_session_state_write(m, state);
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
	bool pull = monitor_pull_take(m, json_string_value(json_object_get(fin, "node")), &cookie,
	                              &observed);
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
	monitor_cookie_wipe_free(cookie);
	json_decref(observed);
	api_pusher_push(m->pusher, API_PUSH_FINALIZE, fin);
	monitor_session_state_remove(m, json_string_value(json_object_get(fin, "node")),
	                             session_id);
	json_decref(fin);
}

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
