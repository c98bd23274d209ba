/*
 * monitor_routes.c - the monitor daemon's HTTP routes (docs/API.md): a
 * node's connection, pulse, top processes and hot spots, the inspection
 * views read live from the node (observe/inspect.h), history, trend and
 * alerts, observe start/stop/status, the cluster's members, the event
 * stream and /metrics. The state they read and change is monitor.c's
 * (monitor_int.h); a handler copies what it needs under the monitor's lock
 * and talks to nodes and the worker outside it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/client.h"
#include "api/http.h"
#include "api/monitor_int.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "base/str.h"
#include "observe/dist.h"
#include "observe/inspect.h"
#include "observe/observe.h"
#include "observe/snapshot_view.h"

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
	struct node_state *ns = monitor_node_get(m, node, false);
	const char *stored = ns ? (ns->cookie ? ns->cookie : ns->session_cookie) : NULL;
	char *c = stored ? gi_strdup(stored) : NULL;
	pthread_mutex_unlock(&m->lock);
	return c;
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
		struct node_state *ns = monitor_node_get(m, node, false);
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
	monitor_cookie_wipe_free(cookie);
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
	struct node_state *ns = monitor_node_get(m, node, true);
	monitor_cookie_wipe_free(ns->cookie);
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
	json_t *top = json_object_get(snap, "top_processes");
	json_t *list = json_object_get(top, metric);
	json_t *resp = json_pack("{s:s, s:s, s:O?, s:O}", "node", node, "metric", metric,
	                         "timestamp_ms", json_object_get(snap, "timestamp_ms"), "processes",
	                         list ? list : json_array());
	/* a snapshot without a scan (the budget thinned them): the last scan's */
	if (json_is_true(json_object_get(top, "carried")))
		json_object_set_new_nocheck(resp, "carried", json_true());
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

/* ---- the inspection views (observe/inspect.h) ----
 *
 * Each is read live from the node in one bounded call, with the node's
 * stored cookie (wiped after): a running observation's snapshot has no such
 * detail. A view reads its query parameters into its own request, makes its
 * obs_* call, and may answer some failures of its own (a process that has
 * exited is a 404); every other failure is node_error's. */

union view_request {
	struct obs_process_request process;
	struct obs_ets_request ets;
	struct obs_ports_request ports;
	struct obs_apps_request apps;
	int limit; /* alloc, binleak */
};

struct inspect_view {
	const char *path;  /* its GET route (monitor_routes points it at route_view) */
	const char *doing; /* for node_error: "ETS tables of" NODE */
	/* Reads the view's parameters into `r` (zeroed); nonzero with *err
	 * set when one is wrong. */
	int (*parse)(const struct api_request *req, union view_request *r, json_t **err,
	             int *status);
	int (*read)(const struct obs_target *t, const union view_request *r, json_t **out);
	/* The answer for the failure `rc` when it is the view's own, else
	 * NULL; NULL (no function): none is. */
	json_t *(*fail)(int rc, const union view_request *r, const char *node, int *status);
};

/* GET /api/runtime/process: one process. */
static int process_parse(const struct api_request *req, union view_request *u, json_t **err,
                         int *status)
{
	struct obs_process_request *r = &u->process;
	bool invalid = false;
	r->who = api_request_query(req, "process", &invalid);
	if (invalid || !r->who) {
		*err = api_error(status, 400,
		                 "process parameter required: a pid (<0.123.0>) or a registered "
		                 "name");
		return GI_EINVAL;
	}
	if (query_int(req, "window_ms", 0, OBS_PROCESS_WINDOW_MAX_MS, &r->window_ms, err, status) ||
	    query_int(req, "keys", 1, OBS_PROCESS_KEYS_MAX, &r->keys_max, err, status) ||
	    query_int(req, "messages", 0, OBS_PROCESS_MESSAGES_MAX, &r->messages, err, status) ||
	    query_int(req, "state_timeout_ms", 1, OBS_PROCESS_STATE_TIMEOUT_MAX,
	              &r->state_timeout_ms, err, status))
		return GI_EINVAL;
	r->dictionary_values = query_true(req, "values");
	r->state = query_true(req, "state");
	char msg[256];
	if (obs_process_request_check(r, msg, sizeof(msg)) != 0) {
		*err = api_error(status, 400, "%s", msg);
		return GI_EINVAL;
	}
	return 0;
}

static int process_read(const struct obs_target *t, const union view_request *r, json_t **out)
{
	return obs_process(t, &r->process, out);
}

static json_t *process_fail(int rc, const union view_request *r, const char *node, int *status)
{
	if (rc == GI_ENOTFOUND)
		return api_error(status, 404, "no process %.100s on %.256s (it may have exited)",
		                 r->process.who, node);
	return NULL;
}

/* GET /api/runtime/ets: the largest ETS tables. */
static int ets_parse(const struct api_request *req, union view_request *u, json_t **err,
                     int *status)
{
	struct obs_ets_request *r = &u->ets;
	bool invalid = false;
	r->sort = api_request_query(req, "sort", &invalid);
	if (invalid ||
	    (r->sort && strcmp(r->sort, "memory") != 0 && strcmp(r->sort, "size") != 0)) {
		*err = api_error(status, 400, "sort must be memory or size");
		return GI_EINVAL;
	}
	return query_int(req, "limit", 1, OBS_ETS_LIMIT_MAX, &r->limit, err, status);
}

static int ets_read(const struct obs_target *t, const union view_request *r, json_t **out)
{
	return obs_ets(t, &r->ets, out);
}

/* GET /api/runtime/ports: ports and sockets over a window. */
static int ports_parse(const struct api_request *req, union view_request *u, json_t **err,
                       int *status)
{
	struct obs_ports_request *r = &u->ports;
	if (query_int(req, "window_ms", 10, OBS_PORTS_WINDOW_MAX_MS, &r->window_ms, err, status))
		return GI_EINVAL;
	return query_int(req, "limit", 1, OBS_PORTS_LIMIT_MAX, &r->limit, err, status);
}

static int ports_read(const struct obs_target *t, const union view_request *r, json_t **out)
{
	return obs_ports(t, &r->ports, out);
}

/* GET /api/runtime/apps: the applications, or one's supervision tree. */
static int apps_parse(const struct api_request *req, union view_request *u, json_t **err,
                      int *status)
{
	struct obs_apps_request *r = &u->apps;
	bool invalid = false;
	r->app = api_request_query(req, "app", &invalid);
	if (invalid) {
		*err = api_error(status, 400, "app must be an application name");
		return GI_EINVAL;
	}
	if (query_int(req, "depth", 1, OBS_APPS_DEPTH_MAX, &r->depth, err, status))
		return GI_EINVAL;
	return query_int(req, "width", 1, OBS_APPS_WIDTH_MAX, &r->width, err, status);
}

static int apps_read(const struct obs_target *t, const union view_request *r, json_t **out)
{
	return obs_apps(t, &r->apps, out);
}

static json_t *apps_fail(int rc, const union view_request *r, const char *node, int *status)
{
	if (rc == GI_EINVAL)
		return api_error(status, 400, "app must be an application name");
	if (rc == GI_ENOTFOUND)
		return api_error(status, 404, "no application %.100s runs on %.256s", r->apps.app,
		                 node);
	return NULL;
}

/* GET /api/runtime/alloc: the allocators (read-only). */
static int alloc_parse(const struct api_request *req, union view_request *u, json_t **err,
                       int *status)
{
	return query_int(req, "limit", 1, OBS_ALLOC_LIMIT_MAX, &u->limit, err, status);
}

static int alloc_read(const struct obs_target *t, const union view_request *r, json_t **out)
{
	return obs_alloc(t, r->limit, out);
}

/* GET /api/runtime/binleak: forces a GC of every process, so only with
 * confirm=true. */
static int binleak_parse(const struct api_request *req, union view_request *u, json_t **err,
                         int *status)
{
	if (query_int(req, "limit", 1, OBS_BINLEAK_LIMIT_MAX, &u->limit, err, status))
		return GI_EINVAL;
	if (!query_true(req, "confirm")) {
		*err =
		    api_error(status, 400,
		              "binleak forces a garbage collection of every process of the node: "
		              "add confirm=true");
		return GI_EINVAL;
	}
	return 0;
}

static int binleak_read(const struct obs_target *t, const union view_request *r, json_t **out)
{
	return obs_binleak(t, r->limit, out);
}

static const struct inspect_view VIEWS[] = {
    {"/api/runtime/process", "process on", process_parse, process_read, process_fail},
    {"/api/runtime/ets", "ETS tables of", ets_parse, ets_read, NULL},
    {"/api/runtime/ports", "ports of", ports_parse, ports_read, NULL},
    {"/api/runtime/apps", "applications of", apps_parse, apps_read, apps_fail},
    {"/api/runtime/alloc", "allocators of", alloc_parse, alloc_read, NULL},
    {"/api/runtime/binleak", "binary leaks of", binleak_parse, binleak_read, NULL},
};

/* The one handler of every view, found by the request's path (the router
 * matched it exactly): the node, the view's parameters, one call with the
 * node's stored cookie, its answer or its error. */
static json_t *route_view(void *ctx, const struct api_request *req, int *status)
{
	struct api_monitor *m = ctx;
	const struct inspect_view *v = NULL;
	for (size_t i = 0; i < sizeof(VIEWS) / sizeof(VIEWS[0]) && !v; i++)
		if (strcmp(VIEWS[i].path, req->path) == 0)
			v = &VIEWS[i];
	if (!v)
		return api_error(status, 404, "no such view");
	json_t *err = NULL;
	const char *node = query_node(req, &err, status);
	if (!node)
		return err;
	union view_request r;
	memset(&r, 0, sizeof(r));
	if (v->parse(req, &r, &err, status))
		return err;
	char *cookie = cookie_for(m, node);
	struct obs_target t = {node, cookie, 0};
	json_t *out = NULL;
	int rc = v->read(&t, &r, &out);
	monitor_cookie_wipe_free(cookie);
	if (rc) {
		json_t *own = v->fail ? v->fail(rc, &r, node, status) : NULL;
		return own ? own : node_error(status, rc, v->doing, node);
	}
	return out;
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
	if (v.top_carried)
		json_object_set_new_nocheck(resp, "carried", json_true());
	obs_view_destroy(&v);
	json_decref(snap);
	return resp;
}

/* The node's newest `limit` (0: all) history points as JSON (newest last),
 * or NULL when none. */
static json_t *history_copy(struct api_monitor *m, const char *node, int limit)
{
	pthread_mutex_lock(&m->lock);
	struct node_state *ns = monitor_node_get(m, node, false);
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
	struct node_state *ns = monitor_node_get(m, node, false);
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
	struct node_state *ns = monitor_node_get(m, node, true);
	bool fresh = !ns->observing;
	if (fresh) {
		monitor_cookie_wipe_free(ns->session_cookie);
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
	monitor_pull_take(m, node, &cookie, &observed);
	monitor_cookie_wipe_free(cookie);
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
	json_t *fin = monitor_orphan_finalize(orphan, reason);
	api_pusher_push(m->pusher, API_PUSH_FINALIZE, fin);
	json_decref(fin);
	monitor_session_state_remove(m, json_string_value(json_object_get(orphan, "node")),
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
		monitor_session_state_remove(m, json_string_value(json_object_get(orphan, "node")),
		                             sid);
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
		monitor_session_state_write(m, state);
		pthread_mutex_lock(&m->lock);
		struct node_state *ns = monitor_node_get(m, node, true);
		monitor_node_state_set(ns, state);
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
	monitor_cookie_wipe_free(stored);
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
	struct node_state *ns = monitor_node_get(m, node, false);
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
			monitor_session_state_remove(m, node, sid);
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
	struct node_state *sns = monitor_node_get(m, node, true);
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
	monitor_cookie_wipe_free(stored);
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
		struct node_state *ns = node ? monitor_node_get(m, node, false) : NULL;
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

const struct api_route monitor_routes[] = {
    {"GET", "/health", route_health, false},
    {"POST", "/api/runtime/connect", route_connect, true},
    {"GET", "/api/runtime/pulse", route_pulse, false},
    {"GET", "/api/runtime/top_processes", route_top_processes, false},
    {"GET", "/api/runtime/hot_spots", route_hot_spots, false},
    {"GET", "/api/runtime/process", route_view, false},
    {"GET", "/api/runtime/ets", route_view, false},
    {"GET", "/api/runtime/ports", route_view, false},
    {"GET", "/api/runtime/apps", route_view, false},
    {"GET", "/api/runtime/alloc", route_view, false},
    {"GET", "/api/runtime/binleak", route_view, false},
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
const struct api_raw_route monitor_raw_routes[] = {
    {"/api/monitor/stream", GET_METHODS, raw_stream},
    {"/metrics", GET_METHODS, route_metrics},
    {NULL, NULL, NULL},
};
