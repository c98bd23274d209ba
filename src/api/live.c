/*
 * live.c - the monitor's live feed (see live.h).
 *
 * "Starts to fire" is decided per node against the alerts of the previous
 * snapshot, keyed by metric and severity: a metric that stays critical is
 * announced once, one that goes from warning to critical is announced
 * again. The per-node sets are bounded by the hub's node cap.
 */
#include "api/live.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/runtime_stats.h"
#include "api/sse.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/json_text.h"
#include "observe/snapshot_view.h"

struct api_live {
	struct api_sse_hub *hub;
	pthread_mutex_t lock;
	json_t *firing; /* node -> {"metric/severity": true} of its last snapshot */
};

struct api_live *api_live_new(void)
{
	struct api_live *live = gi_calloc(1, sizeof(*live));
	live->hub = api_sse_hub_new(0, 0, 0);
	pthread_mutex_init(&live->lock, NULL);
	live->firing = json_object();
	return live;
}

void api_live_close(struct api_live *live)
{
	if (live)
		api_sse_hub_close(live->hub);
}

void api_live_free(struct api_live *live)
{
	if (!live)
		return;
	api_sse_hub_free(live->hub);
	pthread_mutex_destroy(&live->lock);
	json_decref(live->firing);
	gi_free(live);
}

static const char *member_text(json_t *o, const char *name)
{
	const char *s = json_string_value(json_object_get(o, name));
	return s ? s : "";
}

/* The alerts of `alerts` that were not firing at their severity before, as
 * a new array; the node's set becomes this snapshot's. */
static json_t *alerts_new(struct api_live *live, const char *node, json_t *alerts)
{
	json_t *now = json_object(), *fresh = json_array();
	size_t i;
	json_t *a;
	pthread_mutex_lock(&live->lock);
	json_t *before = json_object_get(live->firing, node);
	json_array_foreach(alerts, i, a)
	{
		char key[160];
		snprintf(key, sizeof(key), "%.64s/%.32s", member_text(a, "metric"),
		         member_text(a, "severity"));
		json_object_set_new(now, key, json_true());
		if (!before || !json_object_get(before, key))
			json_array_append(fresh, a);
	}
	if (before || json_object_size(live->firing) < API_SSE_NODES_MAX)
		json_object_set_new(live->firing, node, now);
	else
		json_decref(now);
	pthread_mutex_unlock(&live->lock);
	return fresh;
}

/* True when the node has a set of firing alerts and it is empty. */
static bool nothing_firing(struct api_live *live, const char *node)
{
	pthread_mutex_lock(&live->lock);
	json_t *before = json_object_get(live->firing, node);
	bool empty = before && json_object_size(before) == 0;
	pthread_mutex_unlock(&live->lock);
	return empty;
}

void api_live_snapshot(struct api_live *live, json_t *snap, json_t *alerts)
{
	size_t len = 0;
	char *text = gi_json_text(snap, &len);
	struct obs_view v;
	bool have = obs_view_parse(snap, &v) == 0;
	if (text)
		api_live_snapshot_view(live, snap, have ? &v : NULL, text, len, alerts);
	obs_view_destroy(&v);
	gi_free(text);
}

void api_live_snapshot_view(struct api_live *live, json_t *snap, const struct obs_view *view,
                            const char *snap_text, size_t snap_len, json_t *alerts)
{
	const char *node = json_string_value(json_object_get(snap, "node"));
	if (!live || !node)
		return;
	/* {"snapshot": TEXT, "alerts": [...], "hot_modules": [...]}, the snapshot
	 * spliced in as serialised for the worker's queue, the hot modules
	 * written from the view without a JSON tree. */
	struct gi_buf b;
	gi_buf_init(&b, 0);
	gi_buf_reserve(&b, snap_len + 2048);
	GI_BUF_LIT(&b, "{\"snapshot\":");
	gi_buf_append(&b, snap_text, snap_len);
	GI_BUF_LIT(&b, ",\"alerts\":");
	int rc = gi_json_append(&b, alerts);
	GI_BUF_LIT(&b, ",\"hot_modules\":");
	if (rc == 0)
		rc = api_stats_hot_modules_append(&b, view);
	GI_BUF_LIT(&b, "}");
	if (rc == 0)
		api_sse_publish_text(live->hub, node, "snapshot", gi_buf_str(&b));
	gi_buf_destroy(&b);
	if (json_array_size(alerts) == 0 && nothing_firing(live, node))
		return; /* nothing fires and nothing did: the node's set stays empty */
	json_t *fresh = alerts_new(live, node, alerts);
	size_t i;
	json_t *a;
	json_array_foreach(fresh, i, a)
	{
		json_t *e = json_deep_copy(a);
		json_object_set(e, "timestamp_ms", json_object_get(snap, "timestamp_ms"));
		json_object_set_new(e, "node", json_string(node));
		api_sse_publish(live->hub, node, "alert", e);
		json_decref(e);
	}
	json_decref(fresh);
}

void api_live_end(struct api_live *live, const char *session_id, json_t *finalize)
{
	const char *node = json_string_value(json_object_get(finalize, "node"));
	if (!live || !node)
		return;
	json_t *e = json_pack("{s:s, s:s, s:O?, s:O?}", "session_id", session_id ? session_id : "",
	                      "node", node, "status", json_object_get(finalize, "status"), "reason",
	                      json_object_get(finalize, "reason"));
	api_sse_publish(live->hub, node, "end", e);
	json_decref(e);
	pthread_mutex_lock(&live->lock);
	json_object_del(live->firing, node);
	pthread_mutex_unlock(&live->lock);
}

static void json_answer(struct api_raw_response *resp, int status, const char *msg)
{
	json_t *e = json_pack("{s:s}", "error", msg);
	char *text = json_dumps(e, JSON_COMPACT);
	json_decref(e);
	resp->status = status;
	resp->content_type = "application/json";
	resp->body_len = text ? strlen(text) : 0;
	resp->body = gi_malloc(resp->body_len + 1);
	memcpy(resp->body, text ? text : "", resp->body_len + 1);
	free(text);
}

void api_live_route(struct api_live *live, const struct api_request *req,
                    struct api_raw_response *resp)
{
	bool invalid = false;
	const char *node = api_request_query(req, "node", &invalid);
	if (strcmp(req->method, "GET") != 0) {
		json_answer(resp, 405, "the stream is read with GET");
		return;
	}
	if (!node || invalid || !api_node_name_valid(node)) {
		json_answer(resp, 400, "node parameter required: a node name like name@host");
		return;
	}
	const char *last = api_request_header(req, "Last-Event-ID");
	if (api_sse_open(live->hub, node, last, resp) != 0)
		json_answer(resp, 503,
		            "too many event streams open on this monitor: close one (a tab) and "
		            "retry");
}
