/*
 * observe.c - one-shot observations (obs_pulse, obs_trace; see observe.h):
 * connect, start a session process on the target (which takes the baseline),
 * let the window pass while answering ticks, take one sample, stop the
 * session process (which removes what it set) and disconnect. obs_top needs
 * no session: one small probe (probe/top.erl) reads, waits and reads again
 * within one rpc. Every one-shot command of src/observe/ (these, the
 * inspection views, the cluster's members) starts with obs_oneshot_prepare
 * and ends with obs_oneshot_finish.
 */
#include "observe/observe.h"

#include <string.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"
#include "observe/observe_int.h"
#include "probes.h"

#define OBS_WINDOW_DEFAULT_MS 1000
#define OBS_WINDOW_MAX_MS     (24 * 3600 * 1000)
/* The lease of a one-shot session: how long a frozen observer's patterns
 * may stay on the node. */
#define OBS_ONESHOT_LEASE_MS 10000

static int obs_budget_ms(int timeout_ms)
{
	int budget = timeout_ms * 6 / 10;
	return budget < 100 ? 100 : budget;
}

/* How long a call_time trace watches before it flags the hottest processes. */
static int call_time_warmup_ms(int window_ms)
{
	int w = window_ms / 4;
	return w < 200 ? 200 : w > 1000 ? 1000 : w;
}

/* Lets time pass until `until_ms` while answering ticks, dropping strays
 * and renewing the session's lease (a ping every third of it). */
static int wait_until(struct dist_conn *c, struct obs_probe *p, int64_t until_ms)
{
	ei_x_buff x;
	ei_x_new(&x);
	erlang_msg msg;
	int rc = 0;
	while (rc == 0 && gi_clock_mono_ms() < until_ms) {
		int64_t next = gi_clock_mono_ms() + OBS_ONESHOT_LEASE_MS / 3;
		int64_t step = next < until_ms ? next : until_ms;
		do {
			rc = dist_receive(c, &msg, &x, step);
			long ref;
			int at = 0;
			/* the session ended by itself (its lease ran out) */
			if (rc == 0 && obs_probe_classify(&x, &ref, &at) == 2)
				rc = GI_ENODEDOWN;
		} while (rc == 0);
		if (rc != GI_ETIMEOUT)
			break;
		rc = 0;
		if (step < until_ms) {
			long ref;
			rc = obs_probe_send(c, p, "ping", &ref);
		}
	}
	ei_x_free(&x);
	return rc;
}

int obs_oneshot_prepare(const struct obs_target *t, int *window_ms, int *top_n,
                        struct dist_conn **c_out, ei_x_buff *args, ei_x_buff *reply)
{
	*c_out = NULL;
	if (window_ms && *window_ms > OBS_WINDOW_MAX_MS)
		return GI_EINVAL;
	if (window_ms && *window_ms <= 0)
		*window_ms = OBS_WINDOW_DEFAULT_MS;
	if (top_n && *top_n <= 0)
		*top_n = OBS_TOP_DEFAULT;
	if (top_n && *top_n > 1000)
		*top_n = 1000;
	struct dist_options o = {t->node, t->cookie, t->timeout_ms};
	int rc = dist_connect(&o, c_out);
	if (rc != 0)
		return rc;
	if (args)
		ei_x_new(args);
	if (reply)
		ei_x_new(reply);
	return 0;
}

void obs_oneshot_finish(struct dist_conn *c, ei_x_buff *args, ei_x_buff *reply)
{
	if (args)
		ei_x_free(args);
	if (reply)
		ei_x_free(reply);
	dist_close(c);
}

/* The snapshot in the sample `reply` (its term at `index`) of `node`, with
 * `trace_errors` (borrowed, may be NULL) among its errors: 0 and *snap_out
 * (the caller's), else GI_EBADRPC and NULL. */
static int snapshot_from_reply(const ei_x_buff *reply, int index, const char *node,
                               json_t *trace_errors, json_t **snap_out)
{
	struct obs_term_doc doc = {0};
	struct obs_term root;
	*snap_out = NULL;
	if (obs_term_doc_parse(&doc, reply->buff, reply->index, &index, &root) == 0)
		*snap_out =
		    obs_snapshot_build(root, node, NULL, 0, gi_clock_wall_ms(), trace_errors);
	obs_term_doc_destroy(&doc);
	return *snap_out ? 0 : GI_EBADRPC;
}

/* Asks the session process `p` to stop (it removes what it set); its reply
 * or its silence changes nothing here. */
static void session_stop(struct dist_conn *c, struct obs_probe *p, int timeout_ms)
{
	ei_x_buff stop;
	ei_x_new(&stop);
	int si = 0;
	obs_probe_call(c, p, "stop", gi_clock_mono_ms() + timeout_ms, &stop, &si);
	ei_x_free(&stop);
}

/* Connects, starts a session process and samples after `window_ms`; *snap
 * is the snapshot of the sample (GI_EBADRPC when the reply is not one) and
 * *probe the session (stopped here). A trace's snapshot carries the
 * probe's trace errors. */
static int one_shot(const struct obs_target *t, int window_ms, int top_n,
                    const char *const *modules, bool call_time, json_t **snap_out,
                    struct obs_probe *probe, char *node_out, size_t node_size)
{
	*snap_out = NULL;
	memset(probe, 0, sizeof(*probe));
	struct dist_conn *c = NULL;
	ei_x_buff reply;
	int rc = obs_oneshot_prepare(t, &window_ms, &top_n, &c, NULL, &reply);
	if (rc != 0)
		return rc;
	snprintf(node_out, node_size, "%s", dist_node(c));
	int timeout = dist_timeout_ms(c);
	/* A one-shot session cleans up at once when the link drops (the
	 * observer was killed), and within its lease when the link stays up
	 * but the observer stops talking (frozen): the window is kept alive by
	 * a ping every third of the lease, so the lease need not cover it. */
	struct obs_probe_config cfg = {
	    .session_id = "",
	    .lease_ms = OBS_ONESHOT_LEASE_MS,
	    .top_n = top_n,
	    .budget_ms = obs_budget_ms(timeout),
	    .modules = modules,
	    .call_time = call_time,
	    .oneshot = true,
	};
	/* Pulses sample where the time goes; trace windows only count calls. */
	obs_sample_params(modules ? -1 : 0, 0, &cfg);
	rc = obs_probe_start(c, &cfg, gi_clock_mono_ms() + timeout + cfg.budget_ms, probe);
	if (rc != 0)
		goto out;
	int index = 0;
	if (call_time) {
		/* The warm-up sample chooses the processes to flag and resets the
		 * counters: the window proper starts there. */
		rc = wait_until(c, probe, gi_clock_mono_ms() + call_time_warmup_ms(window_ms));
		if (rc == 0)
			rc = obs_probe_call(c, probe, "sample",
			                    gi_clock_mono_ms() + timeout + cfg.budget_ms, &reply,
			                    &index);
		index = 0;
	}
	if (rc == 0)
		rc = wait_until(c, probe, gi_clock_mono_ms() + window_ms);
	if (rc == 0)
		rc = obs_probe_call(c, probe, "sample",
		                    gi_clock_mono_ms() + timeout + cfg.budget_ms, &reply, &index);
	if (rc == 0)
		rc = snapshot_from_reply(&reply, index, node_out,
		                         modules ? probe->trace_errors : NULL, snap_out);
	if (rc != GI_ENODEDOWN)
		session_stop(c, probe, timeout);
out:
	obs_oneshot_finish(c, NULL, &reply);
	if (rc != 0) {
		json_decref(*snap_out);
		*snap_out = NULL;
	}
	return rc;
}

/* A watch: one session kept for a series of snapshots (`giulia top
 * --watch`), instead of a session, a connection and a parse of the
 * session's text per refresh. It is a one-shot session all the same: it
 * cleans up at once when the link drops, and within its lease when the
 * watcher stops talking. */
struct obs_watch {
	struct dist_conn *c;
	struct obs_probe probe;
	char node[DIST_NAME_MAX];
	int timeout, budget_ms;
	int64_t last_request_ms; /* the lease runs from here */
	int64_t last_sample_ms;  /* the next snapshot measures from here */
};

int obs_watch_open(const struct obs_target *t, int top_n, struct obs_watch **out)
{
	*out = NULL;
	struct obs_watch *w = gi_calloc(1, sizeof(*w));
	int rc = obs_oneshot_prepare(t, NULL, NULL, &w->c, NULL, NULL);
	if (rc != 0) {
		gi_free(w);
		return rc;
	}
	snprintf(w->node, sizeof(w->node), "%s", dist_node(w->c));
	w->timeout = dist_timeout_ms(w->c);
	w->budget_ms = obs_budget_ms(w->timeout);
	struct obs_probe_config cfg = {
	    .session_id = "",
	    .lease_ms = OBS_ONESHOT_LEASE_MS,
	    .top_n = top_n > 0 && top_n <= 1000 ? top_n : OBS_TOP_DEFAULT,
	    .budget_ms = w->budget_ms,
	    .oneshot = true,
	};
	/* top shows no stacks: no sampler */
	obs_sample_params(-1, 0, &cfg);
	rc = obs_probe_start(w->c, &cfg, gi_clock_mono_ms() + w->timeout + w->budget_ms, &w->probe);
	if (rc != 0) {
		dist_close(w->c);
		obs_probe_destroy(&w->probe);
		gi_free(w);
		return rc;
	}
	w->last_request_ms = w->last_sample_ms = gi_clock_mono_ms();
	*out = w;
	return 0;
}

struct dist_conn *obs_watch_conn(struct obs_watch *w)
{
	return w->c;
}

int obs_watch_keepalive(struct obs_watch *w)
{
	/* what arrived meanwhile (ticks, pongs) is read and dropped */
	ei_x_buff x;
	ei_x_new(&x);
	erlang_msg msg;
	int rc;
	do {
		rc = dist_receive(w->c, &msg, &x, gi_clock_mono_ms());
		long ref;
		int at = 0;
		if (rc == 0 && obs_probe_classify(&x, &ref, &at) == 2)
			rc = GI_ENODEDOWN; /* the session ended by itself */
	} while (rc == 0);
	ei_x_free(&x);
	if (rc != GI_ETIMEOUT)
		return rc;
	if (gi_clock_mono_ms() - w->last_request_ms < OBS_ONESHOT_LEASE_MS / 3)
		return 0;
	long ref;
	rc = obs_probe_send(w->c, &w->probe, "ping", &ref);
	if (rc == 0)
		w->last_request_ms = gi_clock_mono_ms();
	return rc;
}

int obs_watch_sample(struct obs_watch *w, int window_ms, json_t **snapshot_out)
{
	*snapshot_out = NULL;
	int rc = wait_until(w->c, &w->probe, w->last_sample_ms + (window_ms > 0 ? window_ms : 0));
	ei_x_buff reply;
	ei_x_new(&reply);
	int index = 0;
	if (rc == 0)
		rc = obs_probe_call(w->c, &w->probe, "sample",
		                    gi_clock_mono_ms() + w->timeout + w->budget_ms, &reply, &index);
	w->last_request_ms = w->last_sample_ms = gi_clock_mono_ms();
	if (rc == 0)
		rc = snapshot_from_reply(&reply, index, w->node, NULL, snapshot_out);
	ei_x_free(&reply);
	return rc;
}

void obs_watch_close(struct obs_watch *w)
{
	if (!w)
		return;
	session_stop(w->c, &w->probe, w->timeout);
	dist_close(w->c);
	obs_probe_destroy(&w->probe);
	gi_free(w);
}

int obs_pulse(const struct obs_target *t, int window_ms, int top_n, json_t **snapshot_out)
{
	struct obs_probe probe;
	char node[DIST_NAME_MAX];
	int rc =
	    one_shot(t, window_ms, top_n, NULL, false, snapshot_out, &probe, node, sizeof(node));
	obs_probe_destroy(&probe);
	return rc;
}

int obs_top(const struct obs_target *t, int window_ms, int top_n, const char *by,
            json_t **snapshot_out)
{
	*snapshot_out = NULL;
	static const char *const lists[] = {"reductions", "memory", "message_queue"};
	const char *list = NULL;
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]) && !list; i++)
		if (strcmp(by ? by : "reductions", lists[i]) == 0)
			list = lists[i];
	if (!list)
		return GI_EINVAL;
	struct dist_conn *c = NULL;
	ei_x_buff args, reply;
	int rc = obs_oneshot_prepare(t, &window_ms, &top_n, &c, &args, &reply);
	if (rc != 0)
		return rc;
	ei_x_encode_map_header(&args, 5);
	/* the probe ends when this node's connection drops (a killed caller) */
	ei_x_encode_atom(&args, "cnode");
	ei_x_encode_atom(&args, ei_thisnodename(&c->ec));
	ei_x_encode_atom(&args, "window_ms");
	ei_x_encode_long(&args, window_ms);
	ei_x_encode_atom(&args, "top_n");
	ei_x_encode_long(&args, top_n);
	ei_x_encode_atom(&args, "by");
	ei_x_encode_atom(&args, list);
	ei_x_encode_atom(&args, "scan_cap");
	ei_x_encode_long(&args, OBS_SCAN_CAP);
	int timeout = dist_timeout_ms(c);
	int index = 0;
	rc = dist_eval(c, probe_top, probe_top_len, &args,
	               gi_clock_mono_ms() + window_ms + timeout + obs_budget_ms(timeout), &reply,
	               &index);
	if (rc == 0)
		rc = snapshot_from_reply(&reply, index, dist_node(c), NULL, snapshot_out);
	obs_oneshot_finish(c, &args, &reply);
	return rc;
}

int obs_trace(const struct obs_target *t, const char *const *modules, int window_ms, json_t **out)
{
	return obs_trace_timed(t, modules, window_ms, false, out);
}

int obs_trace_timed(const struct obs_target *t, const char *const *modules, int window_ms,
                    bool call_time, json_t **out)
{
	*out = NULL;
	if (!modules || !modules[0])
		return GI_EINVAL;
	json_t *snap = NULL;
	struct obs_probe probe;
	char node[DIST_NAME_MAX];
	int rc = one_shot(t, window_ms, 1, modules, call_time, &snap, &probe, node, sizeof(node));
	if (rc == 0) {
		json_t *trace = json_object_get(snap, "trace");
		json_t *result = json_object();
		json_object_set_new(result, "node", json_string(node));
		json_object_set(result, "window_ms", json_object_get(snap, "window_ms"));
		json_object_set_new(result, "modules", json_incref(probe.traced));
		json_t *calls = json_object_get(trace, "calls");
		json_object_set_new(result, "calls", calls ? json_incref(calls) : json_array());
		json_t *ct = json_object_get(trace, "call_time");
		if (ct)
			json_object_set(result, "call_time", ct);
		json_object_set_new(result, "errors", json_incref(json_object_get(snap, "errors")));
		json_decref(snap);
		*out = result;
	}
	obs_probe_destroy(&probe);
	return rc;
}
