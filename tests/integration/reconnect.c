/*
 * Integration tests of sessions that survive a lost connection, on real
 * nodes: a userspace proxy (tests/support/dist_proxy.h) between the observer
 * and the node's distribution port is cut and restored. A cut shorter than
 * the lease: the session reconnects, its target-side process kept its
 * patterns, the snapshots go on, the time without connection is exactly one
 * gap (in the finalize and in the profile built by the daemons), and after
 * the final stop nothing of ours is left. A cut longer than the lease: the
 * session ends interrupted and the node is clean (no session process, no
 * trace pattern, no trace flag). Waits poll with generous deadlines; no
 * assertion is on time.
 * needs: erlang-base elixir
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"
#include "base/alloc.h"
#include "base/clock.h"
#include "dist_proxy.h"
#include "harness.h"
#include "json_util.h"
#include "node_watch.h"
#include "observe/observe.h"
#include "support.h"

#define WAIT_MS 60000

static const char *NODE_EVAL = "defmodule Work do\n"
                               "  def tick(n), do: n + 1\n"
                               "  def loop(n), do: (Process.sleep(1); loop(tick(n)))\n"
                               "end\n"
                               "spawn(fn -> Process.register(self(), :worker); Work.loop(0) end)\n";

/* {our processes, call_count patterns on Work, processes with trace flags,
 * scheduler_wall_time} */
static const char *RESIDUE_EXPR =
    TS_OURS_EXPR "M = 'Elixir.Work', "
                 "Pats = [X || {F, A} <- M:module_info(functions), "
                 "{_, X} <- [erlang:trace_info({M, F, A}, call_count)], X =/= false], "
                 "Flags = [P || P <- processes(), {flags, Fl} <- [erlang:trace_info(P, flags)], "
                 "Fl =/= []], "
                 "{length(Ours), length(Pats), length(Flags), "
                 "erlang:statistics(scheduler_wall_time)}.";

/* {our processes (session and guardian), Work still counted} */
static const char *KEPT_EXPR = TS_OURS_EXPR
    "M = 'Elixir.Work', "
    "{length(Ours), erlang:trace_info({M, tick, 1}, call_count) =/= {call_count, false}}.";

static void node_start(struct ts_beam *n)
{
	ts_beam_start(n, TS_BEAM_ELIXIR_LONG, NODE_EVAL, NULL);
	ts_beam_wait_answer(n, "is_pid(whereis(worker)).", "true", WAIT_MS,
	                    "never ran its start code");
}

static void wait_clean(const struct ts_beam *n)
{
	ts_beam_wait_answer(n, RESIDUE_EXPR, "{0, 0, 0, undefined}", WAIT_MS,
	                    "still has our state (processes, patterns, flags, swt)");
}

struct events {
	pthread_mutex_t lock;
	int snapshots;
	json_t *finalize;
};

static void on_snapshot(void *ctx, const char *id, json_t *snap)
{
	struct events *e = ctx;
	(void)id;
	(void)snap;
	pthread_mutex_lock(&e->lock);
	e->snapshots++;
	pthread_mutex_unlock(&e->lock);
}

static void on_end(void *ctx, const char *id, json_t *fin)
{
	struct events *e = ctx;
	(void)id;
	pthread_mutex_lock(&e->lock);
	json_decref(e->finalize);
	e->finalize = json_deep_copy(fin);
	pthread_mutex_unlock(&e->lock);
}

static int snapshots_of(struct events *e)
{
	pthread_mutex_lock(&e->lock);
	int n = e->snapshots;
	pthread_mutex_unlock(&e->lock);
	return n;
}

static void wait_snapshots(struct events *e, int n)
{
	int64_t deadline = gi_clock_mono_ms() + WAIT_MS;
	while (snapshots_of(e) < n) {
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "only %d snapshots", snapshots_of(e));
		gi_clock_sleep_ms(50);
	}
}

/* The value of `field` in the manager's status of its only session. */
static json_t *status_field(struct obs_manager *m, const char *field)
{
	json_t *st = obs_manager_status(m);
	json_t *v = json_deep_copy(json_object_get(json_array_get(st, 0), field));
	json_decref(st);
	return v;
}

static void wait_connected(struct obs_manager *m, bool want)
{
	int64_t deadline = gi_clock_mono_ms() + WAIT_MS;
	for (;;) {
		json_t *v = status_field(m, "connected");
		bool is = json_is_true(v);
		json_decref(v);
		if (is == want)
			return;
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "never %s",
		              want ? "reconnected" : "saw the connection lost");
		gi_clock_sleep_ms(50);
	}
}

static struct obs_session_config session_config(const struct ts_beam *n, const char **mods,
                                                int lease_ms)
{
	struct obs_session_config cfg = {.node = n->name,
	                                 .cookie = n->cookie,
	                                 .interval_ms = 300,
	                                 .top_n = 5,
	                                 .trace_modules = mods,
	                                 .lease_ms = lease_ms};
	return cfg;
}

static void reconnect_within_the_lease_resumes_with_one_gap(void)
{
	struct ts_beam n;
	node_start(&n);
	ts_proxy_start(&n);
	struct events e = {.lock = PTHREAD_MUTEX_INITIALIZER};
	struct obs_callbacks cb = {on_snapshot, on_end, &e};
	struct obs_manager *m = NULL;
	TH_ASSERT_OK(obs_manager_new(&cb, &m));
	const char *mods[] = {"Work", NULL};
	struct obs_session_config cfg = session_config(&n, mods, 20000);
	char *id = NULL;
	TH_ASSERT_OK(obs_session_start(m, &cfg, &id));
	wait_snapshots(&e, 3);
	int accepted = ts_proxy_accepted();
	ts_proxy_cut();
	wait_connected(m, false);
	int before = snapshots_of(&e);
	gi_clock_sleep_ms(1500);                    /* several intervals without connection */
	TH_ASSERT_INT_EQ(snapshots_of(&e), before); /* nothing fabricated meanwhile */
	ts_proxy_restore();
	wait_connected(m, true);
	TH_ASSERT(ts_proxy_accepted() > accepted);
	/* the target kept its session process (and guardian) and patterns */
	ts_beam_wait_answer(&n, KEPT_EXPR, "{2, true}", WAIT_MS,
	                    "lost its session, guardian or patterns across the cut");
	wait_snapshots(&e, before + 3);
	json_t *rc = status_field(m, "reconnects");
	TH_ASSERT_INT_EQ(json_integer_value(rc), 1);
	json_decref(rc);
	TH_ASSERT_OK(obs_session_stop(m, n.name));
	pthread_mutex_lock(&e.lock);
	json_t *fin = json_incref(e.finalize);
	pthread_mutex_unlock(&e.lock);
	TH_ASSERT(fin != NULL);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(fin, "status")), "complete");
	json_t *gaps = json_object_get(fin, "reconnects");
	TH_ASSERT_INT_EQ(json_array_size(gaps), 1);
	json_t *g = json_array_get(gaps, 0);
	TH_ASSERT(json_integer_value(json_object_get(g, "missing")) >= 1);
	TH_ASSERT(json_integer_value(json_object_get(g, "to_ms")) >
	          json_integer_value(json_object_get(g, "from_ms")));
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(g, "before_seq")),
	                 json_integer_value(json_object_get(g, "after_seq")) + 1);
	json_decref(fin);
	wait_clean(&n);
	obs_manager_free(m);
	gi_free(id);
	json_decref(e.finalize);
}

static void cut_longer_than_the_lease_ends_clean(void)
{
	struct ts_beam n;
	node_start(&n);
	ts_proxy_start(&n);
	struct events e = {.lock = PTHREAD_MUTEX_INITIALIZER};
	struct obs_callbacks cb = {on_snapshot, on_end, &e};
	struct obs_manager *m = NULL;
	TH_ASSERT_OK(obs_manager_new(&cb, &m));
	const char *mods[] = {"Work", NULL};
	struct obs_session_config cfg = session_config(&n, mods, 1500);
	char *id = NULL;
	TH_ASSERT_OK(obs_session_start(m, &cfg, &id));
	wait_snapshots(&e, 2);
	ts_proxy_cut();
	int64_t deadline = gi_clock_mono_ms() + WAIT_MS;
	for (;;) {
		pthread_mutex_lock(&e.lock);
		bool ended = e.finalize != NULL;
		pthread_mutex_unlock(&e.lock);
		if (ended)
			break;
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "the session never ended");
		gi_clock_sleep_ms(50);
	}
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(e.finalize, "status")), "interrupted");
	TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(e.finalize, "reason")), "lease");
	ts_proxy_restore();
	wait_clean(&n);
	obs_manager_free(m);
	gi_free(id);
	json_decref(e.finalize);
}

/* Through the daemons: the profile shows the cut as one gap, cause
 * reconnect, on the session and on the series' time axis; lease_ms is
 * validated and echoed. */
/* The gaps of `gaps` (an array, borrowed) whose cause is `cause`. */
static size_t gaps_of_cause(json_t *gaps, const char *cause)
{
	size_t n = 0, i;
	json_t *g;
	json_array_foreach(gaps, i, g)
	{
		const char *c = json_string_value(json_object_get(g, "cause"));
		n += c && strcmp(c, cause) == 0;
	}
	return n;
}

static void reconnect_gap_in_the_profile(void)
{
	struct ts_beam n;
	node_start(&n);
	ts_proxy_start(&n); /* before the daemons: they inherit ERL_EPMD_PORT */
	struct td_daemon w, m;
	td_worker_and_monitor(&w, &m);
	char body[1024];
	snprintf(body, sizeof(body), "{\"node\":\"%s\",\"lease_ms\":5}", n.name);
	TD_EXPECT_ERROR(&m, "POST", "/api/monitor/observe/start", body, 400);
	snprintf(body, sizeof(body),
	         "{\"node\":\"%s\",\"cookie\":\"%s\",\"interval_ms\":300,"
	         "\"trace_modules\":[\"Work\"],\"lease_ms\":20000}",
	         n.name, n.cookie);
	json_t *r = NULL;
	TH_ASSERT_INT_EQ(td_post(&m, "/api/monitor/observe/start", body, &r), 200);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "lease_ms")), 20000);
	json_decref(r);
	gi_clock_sleep_ms(1500);
	ts_proxy_cut();
	gi_clock_sleep_ms(2000);
	ts_proxy_restore();
	int64_t deadline = gi_clock_mono_ms() + WAIT_MS;
	for (;;) {
		TH_ASSERT_INT_EQ(td_get(&m, "/api/monitor/observe/status", &r), 200);
		char *text = json_dumps(r, JSON_COMPACT);
		bool back =
		    text && strstr(text, "\"reconnects\":1") && strstr(text, "\"connected\":true");
		free(text);
		json_decref(r);
		if (back)
			break;
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "the monitor never reconnected");
		gi_clock_sleep_ms(100);
	}
	gi_clock_sleep_ms(1500);
	snprintf(body, sizeof(body), "{\"node\":\"%s\",\"wait_ms\":60000}", n.name);
	TH_ASSERT_INT_EQ(td_post(&m, "/api/monitor/observe/stop", body, &r), 200);
	json_t *session = json_object_get(json_object_get(r, "profile"), "session");
	json_t *gaps = json_object_get(session, "gaps");
	char *text = json_dumps(gaps, JSON_COMPACT);
	/* Exactly one gap of the cut; a loaded machine may add gaps of cause
	 * "time" (a snapshot later than its interval), which are not the
	 * subject here. */
	TH_ASSERT_MSG(gaps_of_cause(gaps, "reconnect") == 1, "gaps: %s", text);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(session, "status")), "complete");
	json_t *series_gaps =
	    json_object_get(json_object_get(json_object_get(r, "profile"), "series"), "gaps");
	TH_ASSERT_INT_EQ(json_array_size(series_gaps), json_array_size(gaps));
	TH_ASSERT_INT_EQ(gaps_of_cause(series_gaps, "reconnect"), 1);
	free(text);
	json_decref(r);
	wait_clean(&n);
}

/* ---- the worker's liveness deadline (issue 28, item 1) ---- */

/* A worker whose liveness deadline is `intervals` intervals (a short one,
 * so that the old rule, N intervals without a stored snapshot, would end
 * the observations below), and a monitor delivering to it. */
static void liveness_daemons(struct td_daemon *w, struct td_daemon *m, const char *intervals)
{
	memset(w, 0, sizeof(*w));
	memset(m, 0, sizeof(*m));
	snprintf(w->data, sizeof(w->data), "%s/worker", th_tmpdir());
	const char *extra[] = {"--liveness", intervals, NULL};
	td_start(w, "worker", extra);
	td_monitor_for(m, w);
}

/* The first observation in the monitor's status: *out (caller decrefs). */
static json_t *monitor_observation(const struct td_daemon *m)
{
	json_t *s = NULL;
	TH_ASSERT_INT_EQ(td_get(m, "/api/monitor/observe/status", &s), 200);
	json_t *o = json_incref(json_array_get(json_object_get(s, "observations"), 0));
	json_decref(s);
	TH_ASSERT(o != NULL);
	return o;
}

static long long monitor_taken(const struct td_daemon *m)
{
	json_t *o = monitor_observation(m);
	long long n = json_integer_value(json_object_get(o, "snapshots"));
	json_decref(o);
	return n;
}

static void wait_taken(const struct td_daemon *m, long long n)
{
	int64_t deadline = gi_clock_mono_ms() + WAIT_MS;
	while (monitor_taken(m) < n) {
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "fewer than %lld snapshots taken", n);
		gi_clock_sleep_ms(100);
	}
}

/* The reproducer: a cut well within a 30 s lease but past the
 * worker's old deadline (4 intervals of 500 ms without a stored snapshot)
 * ended the observation there, and every later snapshot was refused while
 * the monitor said `running`. Now the monitor's word keeps it, and every
 * snapshot taken is stored. */
static void cut_within_the_lease_past_the_old_deadline_loses_nothing(void)
{
	struct ts_beam n;
	node_start(&n);
	ts_proxy_start(&n);
	struct td_daemon w, m;
	liveness_daemons(&w, &m, "4");
	char body[1024];
	snprintf(body, sizeof(body),
	         "{\"node\":\"%s\",\"cookie\":\"%s\",\"interval_ms\":500,"
	         "\"trace_modules\":[\"Work\"],\"lease_ms\":30000}",
	         n.name, n.cookie);
	json_t *r = NULL;
	TH_ASSERT_INT_EQ(td_post(&m, "/api/monitor/observe/start", body, &r), 200);
	const char *sid0 = json_string_value(json_object_get(r, "session_id"));
	char sid[64];
	snprintf(sid, sizeof(sid), "%s", sid0 ? sid0 : "");
	json_decref(r);
	wait_taken(&m, 3);
	ts_proxy_cut();
	gi_clock_sleep_ms(6000); /* three times the old deadline */
	ts_proxy_restore();
	long long after = monitor_taken(&m);
	wait_taken(&m, after + 4);
	json_t *o = monitor_observation(&m);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(o, "state")), "running");
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(o, "reconnects")), 1);
	json_decref(o);
	snprintf(body, sizeof(body), "{\"node\":\"%s\",\"wait_ms\":60000}", n.name);
	TH_ASSERT_INT_EQ(td_post(&m, "/api/monitor/observe/stop", body, &r), 200);
	json_t *session = json_object_get(json_object_get(r, "profile"), "session");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(session, "status")), "complete");
	json_decref(r);
	/* Every snapshot the monitor numbered is stored; none was refused. */
	long long taken = monitor_taken(&m);
	char path[256];
	snprintf(path, sizeof(path), "/api/runtime/observation/%s", sid);
	TH_ASSERT_INT_EQ(td_get(&w, path, &o), 200);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(o, "snapshots")), taken);
	json_decref(o);
	TH_ASSERT_INT_EQ(td_get(&m, "/api/monitor/observe/status", &r), 200);
	TH_ASSERT_INT_EQ(
	    json_integer_value(json_object_get(json_object_get(r, "delivery"), "rejected")), 0);
	json_decref(r);
	wait_clean(&n);
}

/* A monitor paused past the deadline (here the lease plus the margin) is
 * rightly taken for gone: the worker ends the observation, saying why. When
 * it resumes, its next snapshot is refused, and it stops the session on the
 * node (rather than trace it for nobody) and says so. */
static void paused_monitor_is_ended_and_then_stops_the_node(void)
{
	struct ts_beam n;
	node_start(&n);
	struct td_daemon w, m;
	liveness_daemons(&w, &m, "4");
	char body[1024];
	snprintf(body, sizeof(body),
	         "{\"node\":\"%s\",\"cookie\":\"%s\",\"interval_ms\":250,"
	         "\"trace_modules\":[\"Work\"],\"lease_ms\":1000}",
	         n.name, n.cookie);
	json_t *r = NULL;
	TH_ASSERT_INT_EQ(td_post(&m, "/api/monitor/observe/start", body, &r), 200);
	char sid[64], path[256];
	snprintf(sid, sizeof(sid), "%s", json_string_value(json_object_get(r, "session_id")) ?: "");
	json_decref(r);
	snprintf(path, sizeof(path), "/api/runtime/observation/%s", sid);
	wait_taken(&m, 3);
	kill(m.pid, SIGSTOP);
	int64_t deadline = gi_clock_mono_ms() + WAIT_MS;
	for (;;) {
		json_t *o = NULL;
		int st = td_get(&w, path, &o);
		const char *status = json_string_value(json_object_get(o, "status"));
		bool ended = st == 200 && status && strcmp(status, "running") != 0;
		if (ended) {
			TH_ASSERT_STR_EQ(status, "interrupted");
			TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(o, "reason")),
			                       "the monitor stopped sending");
		}
		json_decref(o);
		if (ended)
			break;
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "the worker never ended it");
		gi_clock_sleep_ms(200);
	}
	kill(m.pid, SIGCONT);
	deadline = gi_clock_mono_ms() + WAIT_MS;
	for (;;) {
		json_t *o = monitor_observation(&m);
		const char *state = json_string_value(json_object_get(o, "state"));
		bool stopped = state && strcmp(state, "running") != 0;
		if (stopped) {
			TH_ASSERT_STR_EQ(state, "interrupted");
			TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(o, "reason")),
			                       "the worker");
		}
		json_decref(o);
		if (stopped)
			break;
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline,
		              "the monitor keeps observing a session the worker ended");
		gi_clock_sleep_ms(200);
	}
	wait_clean(&n);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(reconnect_within_the_lease_resumes_with_one_gap),
	    TH_TEST(cut_longer_than_the_lease_ends_clean),
	    TH_TEST(reconnect_gap_in_the_profile),
	    TH_TEST(cut_within_the_lease_past_the_old_deadline_loses_nothing),
	    TH_TEST(paused_monitor_is_ended_and_then_stops_the_node),
	    TH_END,
	};
	return th_main(argc, argv, "integration_reconnect", tests);
}
