/*
 * Integration tests of the monitor daemon, its delivery to the worker and
 * giulia-observe: real `giulia worker` / `giulia monitor` / `giulia serve`
 * processes on free loopback ports, the pusher driven in-process against a
 * real worker, and real BEAM nodes.
 * needs: erlang-base
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "net/client.h"
#include "api/pusher.h"
#include "api_util.h"
#include "pusher_util.h"
#include "base/error.h"
#include "fuse/fuse.h"
#include "observe/observe.h"

#define SPOOL_PATH 600

/* A pusher to `url` spooling in the test's directory (its path into
 * `spool`), with the default queue and a 5 s request timeout, freed when
 * the test ends. */
static struct api_pusher *test_pusher(const char *url, char spool[static SPOOL_PATH])
{
	snprintf(spool, SPOOL_PATH, "%s/spool", th_tmpdir());
	struct api_pusher_config pc = {
	    .worker_url = url, .token = NULL, .spool_dir = spool, .timeout_ms = 5000};
	return ts_pusher_new_deferred(&pc);
}

/* The worker stored observation `sid` as snapshots 0 .. n-1, each once,
 * and (unless `status` is NULL) says it is in that state. */
static void expect_stored(const struct td_daemon *w, const char *sid, long long n,
                          const char *status)
{
	char path[256];
	snprintf(path, sizeof(path), "/api/runtime/observation/%s", sid);
	json_t *o = NULL;
	TH_ASSERT_INT_EQ(td_get(w, path, &o), 200);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(o, "snapshots")), n);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(o, "last_seq")), n - 1);
	if (status)
		TH_ASSERT_STR_EQ(json_string_value(json_object_get(o, "status")), status);
	json_decref(o);
}

static void push_snapshot(struct api_pusher *p, const char *sid, int seq)
{
	char *text = td_snapshot(sid, "demo@127.0.0.1", seq);
	json_t *s = json_loads(text, 0, NULL);
	TH_ASSERT_OK(api_pusher_push(p, API_PUSH_INGEST, s));
	json_decref(s);
	free(text);
}

static void push_finalize(struct api_pusher *p, const char *sid)
{
	json_t *f =
	    json_pack("{s:s, s:s, s:s, s:n, s:I, s:I, s:i, s:n, s:n}", "session_id", sid, "node",
	              "demo@127.0.0.1", "status", "complete", "reason", "started_ms",
	              (json_int_t)1764496229000LL, "stopped_ms", (json_int_t)1764496259000LL,
	              "interval_ms", 1000, "trace_modules", "project");
	TH_ASSERT_OK(api_pusher_push(p, API_PUSH_FINALIZE, f));
	json_decref(f);
}

static void pusher_survives_worker_restart(void)
{
	net_client_global_init();
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	char spool[SPOOL_PATH];
	struct api_pusher *p = test_pusher(w.url, spool);
	for (int i = 0; i < 10; i++)
		push_snapshot(p, "restart1", i);
	TH_ASSERT_OK(api_pusher_drain(p, 60000));
	TH_ASSERT_INT_EQ(ts_pusher_stat(p, "delivered"), 10);

	TH_ASSERT_INT_EQ(td_stop(&w), 0);
	for (int i = 10; i < 20; i++)
		push_snapshot(p, "restart1", i);
	/* The worker is down: nothing more is delivered, the retries count up. */
	int64_t deadline = gi_clock_mono_ms() + 30000;
	while (ts_pusher_stat(p, "retries") < 2 && gi_clock_mono_ms() < deadline)
		gi_clock_sleep_ms(50);
	TH_ASSERT_INT_GE(ts_pusher_stat(p, "retries"), 2);
	TH_ASSERT_INT_EQ(ts_pusher_stat(p, "delivered"), 10);

	td_start(&w, "worker", NULL);
	push_finalize(p, "restart1");
	json_t *fin = NULL;
	TH_ASSERT_OK(api_pusher_wait_finalize(p, "restart1", 120000, &fin));
	/* The finalize went last, so the worker had all 20 snapshots by then. */
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(fin, "snapshots")), 20);
	json_decref(fin);
	expect_stored(&w, "restart1", 20, "complete");
}

/* The delivery keeps one connection to the worker for every item; the
 * worker killed (its connection dies with it, unannounced) and started again
 * costs one new connection, and no snapshot is lost or stored twice. */
static void pusher_connection_survives_a_worker_kill(void)
{
	net_client_global_init();
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	char spool[SPOOL_PATH];
	struct api_pusher *p = test_pusher(w.url, spool);
	for (int i = 0; i < 10; i++)
		push_snapshot(p, "keep1", i);
	TH_ASSERT_OK(api_pusher_drain(p, 60000));
	TH_ASSERT_INT_EQ(ts_pusher_stat(p, "delivered"), 10);
	TH_ASSERT_INT_EQ(ts_pusher_stat(p, "connections"), 1);

	td_kill(&w);
	for (int i = 10; i < 20; i++)
		push_snapshot(p, "keep1", i);
	int64_t deadline = gi_clock_mono_ms() + 30000;
	while (ts_pusher_stat(p, "retries") < 1 && gi_clock_mono_ms() < deadline)
		gi_clock_sleep_ms(20);
	TH_ASSERT_INT_GE(ts_pusher_stat(p, "retries"), 1);
	TH_ASSERT_INT_EQ(ts_pusher_stat(p, "delivered"), 10);

	td_start(&w, "worker", NULL); /* the same port and data */
	for (int i = 20; i < 30; i++)
		push_snapshot(p, "keep1", i);
	push_finalize(p, "keep1");
	json_t *fin = NULL;
	TH_ASSERT_OK(api_pusher_wait_finalize(p, "keep1", 120000, &fin));
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(fin, "snapshots")), 30);
	json_decref(fin);
	TH_ASSERT_INT_EQ(ts_pusher_stat(p, "delivered"), 31);
	/* What queued up while the worker was away went in batches. */
	TH_ASSERT_INT_GE(ts_pusher_stat(p, "batches"), 1);
	/* one connection per life of the worker (a third if the new worker
	 * closed an idle one on a slow machine), not one per item */
	long long connections = ts_pusher_stat(p, "connections");
	TH_ASSERT_INT_GE(connections, 2);
	TH_ASSERT_MSG(connections <= 3, "%lld connections for 31 items", connections);
	expect_stored(&w, "keep1", 30, "complete");
}

/* Snapshots spread over time (a fleet's sessions each on its own tick) at
 * 20 a second or more: the delivery holds the first one briefly so that the
 * next ones join its batch, instead of a request each. Counted, not timed:
 * pushed one every 10 ms (100 a second, 25 a second even if each sleep took
 * four times as long), most go in batches, and each is stored once. */
static void pusher_lingers_so_a_steady_stream_goes_in_batches(void)
{
	net_client_global_init();
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	char spool[SPOOL_PATH];
	struct api_pusher *p = test_pusher(w.url, spool);
	enum { N = 200 };
	for (int i = 0; i < N; i++) {
		push_snapshot(p, "steady1", i);
		gi_clock_sleep_ms(10);
	}
	TH_ASSERT_OK(api_pusher_drain(p, 60000));
	TH_ASSERT_INT_EQ(ts_pusher_stat(p, "delivered"), N);
	/* the first second sets the rate; after it, nearly every item waits
	 * for company (a request each would batch almost none on loopback) */
	long long batched = ts_pusher_stat(p, "batched");
	TH_ASSERT_MSG(batched >= N / 2, "%lld of %d items went in batches", batched, N);
	TH_ASSERT_INT_GE(ts_pusher_stat(p, "batches"), 2);
	expect_stored(&w, "steady1", N, NULL);
}

static void pusher_spools_and_resends_after_restart(void)
{
	net_client_global_init();
	struct td_daemon w = {0};
	td_reserve(&w);
	char spool[SPOOL_PATH];
	snprintf(spool, sizeof(spool), "%s/spool", th_tmpdir());
	/* A tiny memory queue, so that most items go to the spool at once. */
	struct api_pusher_config pc = {.worker_url = w.url,
	                               .token = NULL,
	                               .spool_dir = spool,
	                               .memory_items = 4,
	                               .timeout_ms = 2000};
	struct api_pusher *p;
	TH_ASSERT_OK(api_pusher_new(&pc, &p));
	for (int i = 0; i < 12; i++)
		push_snapshot(p, "spool1", i);
	push_finalize(p, "spool1");
	TH_ASSERT_INT_GE(ts_pusher_stat(p, "queued_disk"), 8);
	api_pusher_free(p, 200);
	TH_ASSERT_INT_EQ(ts_count_files(spool), 13);

	/* The next monitor on the same directory delivers it all, in order. */
	td_worker(&w, NULL);
	p = ts_pusher_new_deferred(&pc);
	json_t *fin = NULL;
	TH_ASSERT_OK(api_pusher_wait_finalize(p, "spool1", 120000, &fin));
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(fin, "snapshots")), 12);
	json_decref(fin);
	TH_ASSERT_OK(api_pusher_drain(p, 30000));
	TH_ASSERT_INT_EQ(ts_count_files(spool), 0);
	/* The spooled snapshots went together, the finalize after them alone. */
	TH_ASSERT_INT_GE(ts_pusher_stat(p, "batches"), 1);
	TH_ASSERT_INT_EQ(ts_pusher_stat(p, "delivered"), 13);
}

static void pusher_drops_what_the_worker_refuses(void)
{
	net_client_global_init();
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	char spool[SPOOL_PATH];
	struct api_pusher *p = test_pusher(w.url, spool);
	json_t *bad = json_pack("{s:s}", "node", "no-session@x");
	TH_ASSERT_OK(api_pusher_push(p, API_PUSH_INGEST, bad));
	json_decref(bad);
	push_snapshot(p, "after", 0);
	TH_ASSERT_OK(api_pusher_drain(p, 60000));
	TH_ASSERT_INT_EQ(ts_pusher_stat(p, "rejected"), 1);
	TH_ASSERT_INT_EQ(ts_pusher_stat(p, "delivered"), 1);
}

static void pusher_authenticates_and_waits_out_a_wrong_token(void)
{
	net_client_global_init();
	struct td_daemon w = {0};
	snprintf(w.token, sizeof(w.token), "worker-token");
	td_worker(&w, NULL);
	char spool[SPOOL_PATH];
	snprintf(spool, sizeof(spool), "%s/spool-bad", th_tmpdir());
	/* A wrong token is a configuration error: keep the items, keep trying. */
	struct api_pusher_config bad = {
	    .worker_url = w.url, .token = "wrong", .spool_dir = spool, .timeout_ms = 5000};
	struct api_pusher *p;
	TH_ASSERT_OK(api_pusher_new(&bad, &p));
	push_snapshot(p, "tok1", 0);
	int64_t deadline = gi_clock_mono_ms() + 30000;
	while (ts_pusher_stat(p, "retries") < 2 && gi_clock_mono_ms() < deadline)
		gi_clock_sleep_ms(50);
	TH_ASSERT_INT_GE(ts_pusher_stat(p, "retries"), 2);
	TH_ASSERT_INT_EQ(ts_pusher_stat(p, "rejected"), 0);
	api_pusher_free(p, 0);
	TH_ASSERT_INT_EQ(ts_count_files(spool), 1);
	/* Restarted with the right token on the same spool, it delivers. */
	struct api_pusher_config good = {
	    .worker_url = w.url, .token = "worker-token", .spool_dir = spool, .timeout_ms = 5000};
	p = ts_pusher_new_deferred(&good);
	TH_ASSERT_OK(api_pusher_drain(p, 60000));
	TH_ASSERT_INT_EQ(ts_pusher_stat(p, "delivered"), 1);
	json_t *o = NULL;
	TH_ASSERT_INT_EQ(td_get(&w, "/api/runtime/observation/tok1", &o), 200);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(o, "snapshots")), 1);
	json_decref(o);
}

static void body_limit_option(void)
{
	struct td_daemon w = {0};
	snprintf(w.data, sizeof(w.data), "%s/w", th_tmpdir());
	const char *extra[] = {"--body-limit", "2048", NULL};
	td_start(&w, "worker", extra);
	char body[4096];
	memset(body, ' ', sizeof(body) - 1);
	body[0] = '{';
	body[sizeof(body) - 2] = '}';
	body[sizeof(body) - 1] = '\0';
	TD_EXPECT_ERROR(&w, "POST", "/api/runtime/ingest", body, 413);
	char *snap = td_snapshot("small", "demo@127.0.0.1", 0);
	TH_ASSERT(strlen(snap) < 2048);
	TH_ASSERT_INT_EQ(td_post(&w, "/api/runtime/ingest", snap, NULL), 200);
	free(snap);
}

static void monitor_routes_validate_input(void)
{
	struct td_daemon w = {0}, m = {0};
	td_worker(&w, NULL);
	td_monitor_for(&m, &w);
	json_t *h = NULL;
	TH_ASSERT_INT_EQ(td_get(&m, "/health", &h), 200);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(h, "role")), "monitor");
	TH_ASSERT(json_is_object(json_object_get(h, "delivery")));
	json_decref(h);
	TD_EXPECT_ERROR(&m, "GET", "/api/runtime/pulse", NULL, 400);
	TD_EXPECT_ERROR(&m, "GET", "/api/runtime/pulse?node=nohost", NULL, 400);
	TD_EXPECT_ERROR(&m, "GET", "/api/runtime/top_processes?node=a@b&metric=cpu", NULL, 400);
	TD_EXPECT_ERROR(&m, "GET", "/api/runtime/history?node=a@b&limit=0", NULL, 400);
	json_t *hist = NULL;
	TH_ASSERT_INT_EQ(td_get(&m, "/api/runtime/history?node=a@b", &hist), 200);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(hist, "points")), 0);
	json_decref(hist);
	TD_EXPECT_ERROR(&m, "GET", "/api/runtime/trend?node=a@b", NULL, 404);
	TD_EXPECT_ERROR(&m, "POST", "/api/runtime/connect", "{}", 400);
	TD_EXPECT_ERROR(&m, "POST", "/api/runtime/connect", "{\"node\":\"a@b\",\"cookie\":7}", 400);
	TD_EXPECT_ERROR(&m, "POST", "/api/monitor/observe/start", "{}", 400);
	TD_EXPECT_ERROR(&m, "POST", "/api/monitor/observe/start",
	                "{\"node\":\"a@b\",\"interval_ms\":10}", 400);
	TD_EXPECT_ERROR(&m, "POST", "/api/monitor/observe/start",
	                "{\"node\":\"a@b\",\"project\":\"relative/dir\"}", 400);
	TD_EXPECT_ERROR(&m, "POST", "/api/monitor/observe/start",
	                "{\"node\":\"a@b\",\"trace_modules\":\"A,B\"}", 400);
	TD_EXPECT_ERROR(&m, "POST", "/api/monitor/observe/start",
	                "{\"node\":\"a@b\",\"sample_period_ms\":2}", 400);
	TD_EXPECT_ERROR(&m, "POST", "/api/monitor/observe/start",
	                "{\"node\":\"a@b\",\"sample_period_ms\":5000}", 400);
	TD_EXPECT_ERROR(&m, "POST", "/api/monitor/observe/start",
	                "{\"node\":\"a@b\",\"sample_processes\":51}", 400);
	TD_EXPECT_ERROR(&m, "POST", "/api/monitor/observe/stop", "{\"node\":5}", 400);
	TD_EXPECT_ERROR(&m, "POST", "/api/monitor/observe/stop", "{\"node\":\"a@b\"}", 404);
	json_t *st = NULL;
	TH_ASSERT_INT_EQ(td_get(&m, "/api/monitor/observe/status", &st), 200);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(st, "observations")), 0);
	json_decref(st);
	TD_EXPECT_ERROR(&m, "GET", "/api/monitor/nothing", NULL, 404);
	TD_EXPECT_ERROR(&m, "PUT", "/api/monitor/observe/status", NULL, 405);
}

static void observe_cli_usage_and_unreachable_monitor(void)
{
	char bin[1024];
	snprintf(bin, sizeof(bin), "%s/giulia-observe", th_bindir());
	const char *none[] = {bin, NULL};
	TH_ASSERT_INT_EQ(ts_run(none, NULL, 30000, NULL, NULL), 2);
	const char *no_node[] = {bin, "start", NULL};
	TH_ASSERT_INT_EQ(ts_run(no_node, NULL, 30000, NULL, NULL), 2);
	const char *bad_interval[] = {bin, "start", "a@b", "cookie", "often", NULL};
	TH_ASSERT_INT_EQ(ts_run(bad_interval, NULL, 30000, NULL, NULL), 2);
	const char *unknown[] = {bin, "frobnicate", NULL};
	TH_ASSERT_INT_EQ(ts_run(unknown, NULL, 30000, NULL, NULL), 2);

	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", ts_free_port());
	setenv("GIULIA_MONITOR_URL", url, 1);
	const char *status[] = {bin, "status", NULL};
	char *err = NULL;
	TH_ASSERT_INT_EQ(ts_run(status, NULL, 30000, NULL, &err), 17);
	TH_ASSERT_STR_CONTAINS(err, "did not answer");
	free(err);
	/* A monitor URL too long for a request is refused, not cut short. */
	char long_url[1200];
	snprintf(long_url, sizeof(long_url), "%s/%01100d", url, 0);
	setenv("GIULIA_MONITOR_URL", long_url, 1);
	TH_ASSERT_INT_EQ(ts_run(status, NULL, 30000, NULL, &err), 2);
	TH_ASSERT_STR_CONTAINS(err, "too long");
	free(err);

	struct td_daemon w = {0}, m = {0};
	td_worker(&w, NULL);
	td_monitor_for(&m, &w);
	setenv("GIULIA_MONITOR_URL", m.url, 1);
	char *out = NULL;
	TH_ASSERT_INT_EQ(ts_run(status, NULL, 30000, &out, NULL), 0);
	TH_ASSERT_STR_CONTAINS(out, "no observation running");
	free(out);
	const char *json[] = {bin, "status", "--json", NULL};
	TH_ASSERT_INT_EQ(ts_run(json, NULL, 30000, &out, NULL), 0);
	json_t *j = json_loads(out, 0, NULL);
	TH_ASSERT(json_is_array(json_object_get(j, "observations")));
	json_decref(j);
	free(out);
	const char *stop[] = {bin, "stop", "nobody@127.0.0.1", NULL};
	TH_ASSERT_INT_EQ(ts_run(stop, NULL, 30000, NULL, &err), 1);
	free(err);
}

static void serve_runs_both_and_stops_cleanly(void)
{
	char bin[1024], wl[64], ml[64], data[600];
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	int wp = ts_free_port(), mp = ts_free_port();
	snprintf(wl, sizeof(wl), "127.0.0.1:%d", wp);
	snprintf(ml, sizeof(ml), "127.0.0.1:%d", mp);
	snprintf(data, sizeof(data), "%s/data", th_tmpdir());
	const char *argv[] = {bin,
	                      "serve",
	                      "--worker-listen",
	                      wl,
	                      "--monitor-listen",
	                      ml,
	                      "--data",
	                      data,
	                      "--token",
	                      "tok",
	                      NULL};
	char log[700];
	snprintf(log, sizeof(log), "%s/serve.log", th_tmpdir());
	pid_t pid = ts_spawn(argv, log);
	char wurl[128], murl[128];
	snprintf(wurl, sizeof(wurl), "http://127.0.0.1:%d/health", wp);
	snprintf(murl, sizeof(murl), "http://127.0.0.1:%d/health", mp);
	int64_t deadline = gi_clock_mono_ms() + 30000;
	while ((ts_http("GET", wurl, NULL, "tok", NULL) != 200 ||
	        ts_http("GET", murl, NULL, "tok", NULL) != 200) &&
	       gi_clock_mono_ms() < deadline)
		gi_clock_sleep_ms(50);
	TH_ASSERT_INT_EQ(ts_http("GET", wurl, NULL, "tok", NULL), 200);
	TH_ASSERT_INT_EQ(ts_http("GET", murl, NULL, "tok", NULL), 200);
	/* The one token guards both daemons. */
	TH_ASSERT_INT_EQ(ts_http("GET", wurl, NULL, NULL, NULL), 401);
	TH_ASSERT_INT_EQ(ts_http("GET", murl, NULL, "nope", NULL), 401);
	TH_ASSERT_INT_EQ(ts_stop(pid, 30000), 0);
	char db[700];
	snprintf(db, sizeof(db), "%s/worker.db", data);
	struct stat st;
	TH_ASSERT_INT_EQ(stat(db, &st), 0);
}

/* ---- with a real node (the observer must have landed) ---- */

struct observed {
	struct ts_beam node;
	struct td_daemon w, m;
};

static const char WORKLOAD[] =
    "spawn(fun() -> L = fun Loop(N) -> _ = lists:seq(1, 2000), timer:sleep(5), Loop(N + 1) end,"
    " L(0) end).";

static void observed_setup(struct observed *o)
{
	ts_beam_start(&o->node, TS_BEAM_ERL_LONG, NULL, NULL);
	char *r = ts_beam_eval(&o->node, WORKLOAD);
	free(r);
	td_worker(&o->w, NULL);
	td_monitor_for(&o->m, &o->w);
}

static void observation_start(struct observed *o, int interval_ms)
{
	char body[1024];
	snprintf(body, sizeof(body), "{\"node\":\"%s\",\"cookie\":\"%s\",\"interval_ms\":%d}",
	         o->node.name, o->node.cookie, interval_ms);
	json_t *r = NULL;
	int st = td_post(&o->m, "/api/monitor/observe/start", body, &r);
	TH_ASSERT_MSG(st == 200, "observe/start: %d", st);
	char *text = json_dumps(r, 0);
	TH_ASSERT_MSG(strstr(text, o->node.cookie) == NULL, "the cookie came back: %s", text);
	free(text);
	json_decref(r);
}

static long long monitor_snapshots(struct observed *o)
{
	json_t *s = NULL;
	td_get(&o->m, "/api/monitor/observe/status", &s);
	long long n = json_integer_value(
	    json_object_get(json_array_get(json_object_get(s, "observations"), 0), "snapshots"));
	json_decref(s);
	return n;
}

static void wait_snapshots(struct observed *o, long long n)
{
	int64_t deadline = gi_clock_mono_ms() + 120000;
	while (monitor_snapshots(o) < n) {
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "fewer than %lld snapshots in 120 s",
		              n);
		gi_clock_sleep_ms(100);
	}
}

static void pulse_routes_on_a_real_node(void)
{
	struct observed o;
	memset(&o, 0, sizeof(o));
	observed_setup(&o);
	char body[1024], path[1024];
	snprintf(body, sizeof(body), "{\"node\":\"%s\",\"cookie\":\"%s\"}", o.node.name,
	         o.node.cookie);
	json_t *r = NULL;
	TH_ASSERT_INT_EQ(td_post(&o.m, "/api/runtime/connect", body, &r), 200);
	TH_ASSERT(json_is_true(json_object_get(r, "connected")));
	char *text = json_dumps(r, 0);
	TH_ASSERT_MSG(strstr(text, o.node.cookie) == NULL, "the cookie came back: %s", text);
	free(text);
	json_decref(r);
	snprintf(body, sizeof(body), "{\"node\":\"%s\",\"cookie\":\"wrong\"}", o.node.name);
	TD_EXPECT_ERROR(&o.m, "POST", "/api/runtime/connect", body, 502);
	TD_EXPECT_ERROR(&o.m, "POST", "/api/runtime/connect",
	                "{\"node\":\"nobody@127.0.0.1\",\"cookie\":\"x\"}", 404);
	/* Live pulses use the cookie given to connect. */
	snprintf(path, sizeof(path), "/api/runtime/pulse?node=%s&window_ms=200", o.node.name);
	TH_ASSERT_INT_EQ(td_get(&o.m, path, &r), 200);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(r, "node")), o.node.name);
	TH_ASSERT(json_is_object(json_object_get(r, "top_processes")));
	json_decref(r);
	const char *metrics[] = {"reductions", "memory", "message_queue"};
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "/api/runtime/top_processes?node=%s&metric=%s",
		         o.node.name, metrics[i]);
		TH_ASSERT_INT_EQ(td_get(&o.m, path, &r), 200);
		/* Processes with an empty queue may be left out of the queue ranking. */
		TH_ASSERT_MSG(i == 2 ? json_is_array(json_object_get(r, "processes"))
		                     : json_array_size(json_object_get(r, "processes")) > 0,
		              "no %s top", metrics[i]);
		json_decref(r);
	}
	snprintf(path, sizeof(path), "/api/runtime/hot_spots?node=%s", o.node.name);
	TH_ASSERT_INT_EQ(td_get(&o.m, path, &r), 200);
	TH_ASSERT(json_array_size(json_object_get(r, "modules")) > 0);
	json_decref(r);
	snprintf(path, sizeof(path), "/api/runtime/alerts?node=%s", o.node.name);
	TH_ASSERT_INT_EQ(td_get(&o.m, path, &r), 200);
	TH_ASSERT(json_is_array(json_object_get(r, "alerts")));
	json_decref(r);
	snprintf(path, sizeof(path), "/api/runtime/pulse?node=%s&window_ms=5", o.node.name);
	TD_EXPECT_ERROR(&o.m, "GET", path, NULL, 400);
}

static void observation_routes_on_a_real_node(void)
{
	struct observed o;
	memset(&o, 0, sizeof(o));
	observed_setup(&o);
	char body[1024], path[1024];
	json_t *r = NULL;
	observation_start(&o, 300);
	wait_snapshots(&o, 6);
	const char *routes[] = {"pulse",   "top_processes", "hot_spots",
	                        "history", "trend",         "alerts"};
	for (size_t i = 0; i < 6; i++) {
		snprintf(path, sizeof(path), "/api/runtime/%s?node=%s", routes[i], o.node.name);
		int st = td_get(&o.m, path, &r);
		TH_ASSERT_MSG(st == 200, "GET %s: %d", path, st);
		json_decref(r);
	}
	snprintf(path, sizeof(path), "/api/runtime/trend?node=%s", o.node.name);
	TH_ASSERT_INT_EQ(td_get(&o.m, path, &r), 200);
	TH_ASSERT(json_integer_value(json_object_get(r, "points")) >= 6);
	TH_ASSERT(json_is_string(json_object_get(
	    json_object_get(json_object_get(r, "metrics"), "memory_total"), "direction")));
	json_decref(r);
	snprintf(path, sizeof(path), "/api/runtime/history?node=%s&limit=3", o.node.name);
	TH_ASSERT_INT_EQ(td_get(&o.m, path, &r), 200);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(r, "points")), 3);
	json_decref(r);
	snprintf(body, sizeof(body), "{\"node\":\"%s\"}", o.node.name);
	TH_ASSERT_INT_EQ(td_post(&o.m, "/api/monitor/observe/start", body, NULL), 409);
	TH_ASSERT_INT_EQ(td_post(&o.m, "/api/monitor/observe/stop", body, &r), 200);
	long long stored = json_integer_value(json_object_get(r, "snapshots"));
	TH_ASSERT_INT_GE(stored, 6);
	json_decref(r);
}

/* The routes say when a snapshot had no scan of every process: under a
 * budget far too small for a scan every 250 ms (0.1% of a scheduler), the
 * guest thins the scans within a few reads of the node's CPU, and the
 * snapshots between carry the last scan's lists; `top_processes` and
 * `hot_spots` mark them (and never with anything but true). */
static void thinned_scans_are_marked_on_the_routes(void)
{
	struct observed o;
	memset(&o, 0, sizeof(o));
	observed_setup(&o);
	char body[1024], path[2][1024];
	snprintf(body, sizeof(body),
	         "{\"node\":\"%s\",\"cookie\":\"%s\",\"interval_ms\":250,\"budget\":0.001}",
	         o.node.name, o.node.cookie);
	TH_ASSERT_INT_EQ(td_post(&o.m, "/api/monitor/observe/start", body, NULL), 200);
	snprintf(path[0], sizeof(path[0]), "/api/runtime/top_processes?node=%s", o.node.name);
	snprintf(path[1], sizeof(path[1]), "/api/runtime/hot_spots?node=%s", o.node.name);
	for (int k = 0; k < 2; k++) {
		bool carried = false;
		int64_t deadline = gi_clock_mono_ms() + 90000;
		while (!carried && gi_clock_mono_ms() < deadline) {
			json_t *r = NULL;
			if (td_get(&o.m, path[k], &r) == 200) {
				json_t *c = json_object_get(r, "carried");
				TH_ASSERT_MSG(!c || json_is_true(c), "%s: carried is not true",
				              path[k]);
				carried = c != NULL;
			}
			json_decref(r);
			if (!carried)
				gi_clock_sleep_ms(100);
		}
		TH_ASSERT_MSG(carried, "%s never said its lists were the last scan's in 90 s",
		              path[k]);
	}
	snprintf(body, sizeof(body), "{\"node\":\"%s\"}", o.node.name);
	TH_ASSERT_INT_EQ(td_post(&o.m, "/api/monitor/observe/stop", body, NULL), 200);
}

static void observe_cli_end_to_end(void)
{
	struct observed o;
	memset(&o, 0, sizeof(o));
	observed_setup(&o);
	setenv("GIULIA_MONITOR_URL", o.m.url, 1);
	char bin[1024];
	snprintf(bin, sizeof(bin), "%s/giulia-observe", th_bindir());
	const char *start[] = {bin, "start", o.node.name, o.node.cookie, "300", NULL};
	char *out = NULL;
	TH_ASSERT_INT_EQ(ts_run(start, NULL, 60000, &out, NULL), 0);
	TH_ASSERT_STR_CONTAINS(out, "observing");
	free(out);
	const char *status[] = {bin, "status", NULL};
	TH_ASSERT_INT_EQ(ts_run(status, NULL, 60000, &out, NULL), 0);
	TH_ASSERT_STR_CONTAINS(out, o.node.name);
	free(out);
	wait_snapshots(&o, 4);
	const char *stop[] = {bin, "stop", o.node.name, NULL};
	TH_ASSERT_INT_EQ(ts_run(stop, NULL, 300000, &out, NULL), 0);
	TH_ASSERT_STR_CONTAINS(out, "profile id:");
	free(out);
	json_t *list = NULL;
	TH_ASSERT_INT_EQ(td_get(&o.w, "/api/runtime/observations", &list), 200);
	json_t *first = json_array_get(json_object_get(list, "observations"), 0);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(first, "status")), "complete");
	TH_ASSERT_INT_GE(json_integer_value(json_object_get(first, "snapshots")), 4);
	json_decref(list);
}

static void worker_restart_during_observation(void)
{
	struct observed o;
	memset(&o, 0, sizeof(o));
	observed_setup(&o);
	observation_start(&o, 300);
	wait_snapshots(&o, 3);
	TH_ASSERT_INT_EQ(td_stop(&o.w), 0);
	long long before = monitor_snapshots(&o);
	wait_snapshots(&o, before + 4);
	td_start(&o.w, "worker", NULL);
	char body[512];
	snprintf(body, sizeof(body), "{\"node\":\"%s\"}", o.node.name);
	json_t *r = NULL;
	TH_ASSERT_INT_EQ(td_post(&o.m, "/api/monitor/observe/stop", body, &r), 200);
	const char *sid = json_string_value(json_object_get(r, "session_id"));
	long long delivered = json_integer_value(json_object_get(r, "snapshots"));
	char path[256];
	snprintf(path, sizeof(path), "/api/runtime/observation/%s?include=snapshots", sid);
	json_t *obs = NULL;
	TH_ASSERT_INT_EQ(td_get(&o.w, path, &obs), 200);
	json_t *snaps = json_object_get(obs, "snapshot_data");
	TH_ASSERT_INT_GE(delivered, before + 4);
	TH_ASSERT_INT_EQ(json_array_size(snaps), delivered);
	/* Every seq from 0, none missing. */
	for (size_t i = 0; i < json_array_size(snaps); i++)
		TH_ASSERT_INT_EQ(
		    json_integer_value(json_object_get(json_array_get(snaps, i), "seq")), i);
	json_decref(obs);
	json_decref(r);
}

static void monitor_sigterm_interrupts_observations(void)
{
	struct observed o;
	memset(&o, 0, sizeof(o));
	observed_setup(&o);
	observation_start(&o, 300);
	wait_snapshots(&o, 2);
	TH_ASSERT_INT_EQ(td_stop(&o.m), 0);
	json_t *list = NULL;
	TH_ASSERT_INT_EQ(td_get(&o.w, "/api/runtime/observations", &list), 200);
	json_t *first = json_array_get(json_object_get(list, "observations"), 0);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(first, "status")), "interrupted");
	json_decref(list);
}

/* A server without the batch route (here the monitor, which has no ingest
 * routes at all, as an older worker has no batch route): the delivery goes
 * singly, the refused batch settles nothing, and every item gets its own
 * answer (404 here, so each is dropped as refused, none is counted twice). */
static void pusher_goes_singly_where_batches_are_not_served(void)
{
	net_client_global_init();
	struct td_daemon w = {0}, m = {0};
	td_worker(&w, NULL);
	td_monitor_for(&m, &w);
	char spool[SPOOL_PATH];
	struct api_pusher *p = test_pusher(m.url, spool);
	for (int i = 0; i < 20; i++)
		push_snapshot(p, "nobatch", i);
	TH_ASSERT_OK(api_pusher_drain(p, 60000));
	TH_ASSERT_INT_EQ(ts_pusher_stat(p, "rejected"), 20);
	TH_ASSERT_INT_EQ(ts_pusher_stat(p, "delivered"), 0);
	TH_ASSERT_INT_EQ(ts_pusher_stat(p, "batches"), 0);
	TH_ASSERT_INT_EQ(ts_count_files(spool), 0);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(pusher_survives_worker_restart),
	    TH_TEST(pusher_connection_survives_a_worker_kill),
	    TH_TEST(pusher_spools_and_resends_after_restart),
	    TH_TEST(pusher_drops_what_the_worker_refuses),
	    TH_TEST(pusher_goes_singly_where_batches_are_not_served),
	    TH_TEST(pusher_lingers_so_a_steady_stream_goes_in_batches),
	    TH_TEST(pusher_authenticates_and_waits_out_a_wrong_token),
	    TH_TEST(body_limit_option),
	    TH_TEST(monitor_routes_validate_input),
	    TH_TEST(observe_cli_usage_and_unreachable_monitor),
	    TH_TEST(serve_runs_both_and_stops_cleanly),
	    TH_TEST(pulse_routes_on_a_real_node),
	    TH_TEST(observation_routes_on_a_real_node),
	    TH_TEST(thinned_scans_are_marked_on_the_routes),
	    TH_TEST(observe_cli_end_to_end),
	    TH_TEST(worker_restart_during_observation),
	    TH_TEST(monitor_sigterm_interrupts_observations),
	    TH_END,
	};
	return th_main(argc, argv, "integration_daemon", tests);
}
