/*
 * Integration tests of the overhead budget on real nodes: under a budget the
 * call_count patterns are on for a fraction (< 1) of the time, counts are
 * reported as estimates with their measured count, duty and interval, a
 * module far hotter than another gets the smaller fraction, counting pauses
 * above the utilisation ceiling and says so, and no pattern is left after
 * stop; through the monitor's API a start that names no budget gets the
 * default, 5%, and `overhead` 0 counts every call. Waits poll with
 * generous deadlines; no assertion is on time.
 * needs: erlang-base elixir
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"
#include "base/alloc.h"
#include "base/clock.h"
#include "harness.h"
#include "json_util.h"
#include "node_watch.h"
#include "observe/observe.h"
#include "support.h"

#define WAIT_MS 60000

/* Hot: tiny functions called in a tight loop by one process; Cool: called
 * a few times a second by another. */
static const char *NODE_EVAL = "defmodule Hot do\n"
                               "  def f(n), do: n + 1\n"
                               "  def loop(n), do: loop(f(n))\n"
                               "end\n"
                               "defmodule Cool do\n"
                               "  def g(n), do: n + 1\n"
                               "  def loop(n), do: (Process.sleep(20); loop(g(n)))\n"
                               "end\n"
                               "spawn(fn -> Process.register(self(), :hot); Hot.loop(0) end)\n"
                               "spawn(fn -> Process.register(self(), :cool); Cool.loop(0) end)\n";

static const char *RESIDUE_EXPR =
    TS_OURS_EXPR "Pats = [X || M <- ['Elixir.Hot', 'Elixir.Cool'], "
                 "{F, A} <- M:module_info(functions), "
                 "{_, X} <- [erlang:trace_info({M, F, A}, call_count)], X =/= false], "
                 "{length(Ours), length(Pats)}.";

struct events {
	pthread_mutex_t lock;
	json_t *snaps; /* every snapshot */
};

static void on_snapshot(void *ctx, const char *id, json_t *snap)
{
	struct events *e = ctx;
	(void)id;
	pthread_mutex_lock(&e->lock);
	json_array_append(e->snaps, snap);
	pthread_mutex_unlock(&e->lock);
}

static void wait_snapshots(struct events *e, size_t n)
{
	int64_t deadline = gi_clock_mono_ms() + WAIT_MS;
	for (;;) {
		pthread_mutex_lock(&e->lock);
		size_t have = json_array_size(e->snaps);
		pthread_mutex_unlock(&e->lock);
		if (have >= n)
			return;
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "only %zu snapshots", have);
		gi_clock_sleep_ms(50);
	}
}

static json_t *duty_module(json_t *snap, const char *name)
{
	json_t *duty = json_object_get(json_object_get(snap, "trace"), "duty");
	return ts_json_find(json_object_get(duty, "modules"), "module", name);
}

static json_t *call_named(json_t *snap, const char *module, const char *function)
{
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(json_object_get(snap, "trace"), "calls"), i, c)
	{
		if (strcmp(json_string_value(json_object_get(c, "module")), module) == 0 &&
		    strcmp(json_string_value(json_object_get(c, "function")), function) == 0)
			return c;
	}
	return NULL;
}

static struct obs_manager *observe(struct ts_beam *n, struct events *e, double overhead,
                                   double pause_above)
{
	ts_beam_start(n, TS_BEAM_ELIXIR_LONG, NODE_EVAL, NULL);
	ts_beam_wait_answer(n, "is_pid(whereis(cool)).", "true", WAIT_MS,
	                    "never ran its start code");
	struct obs_callbacks cb = {on_snapshot, NULL, e};
	struct obs_manager *m = NULL;
	TH_ASSERT_OK(obs_manager_new(&cb, &m));
	const char *mods[] = {"Hot", "Cool", NULL};
	struct obs_session_config cfg = {.node = n->name,
	                                 .cookie = n->cookie,
	                                 .interval_ms = 500,
	                                 .top_n = 5,
	                                 .trace_modules = mods,
	                                 .overhead = overhead,
	                                 .pause_above = pause_above};
	char *id = NULL;
	TH_ASSERT_OK(obs_session_start(m, &cfg, &id));
	gi_free(id);
	return m;
}

static void budget_duty_cycles_and_estimates(void)
{
	struct ts_beam n;
	struct events e = {.lock = PTHREAD_MUTEX_INITIALIZER, .snaps = json_array()};
	struct obs_manager *m = observe(&n, &e, 0.05, 1.0);
	/* On a loaded machine a cycle can outlast a window (the pattern
	 * barriers are slow; such a window carries the last counted rate over,
	 * marked `carried`): the first window after the start that counted Hot
	 * is checked, and every window's duty is below 1. */
	json_t *last = NULL;
	int64_t deadline = gi_clock_mono_ms() + WAIT_MS;
	for (size_t k = 0; !last; k++) {
		wait_snapshots(&e, k + 1);
		pthread_mutex_lock(&e.lock);
		json_t *snap = json_array_get(e.snaps, k);
		pthread_mutex_unlock(&e.lock);
		json_t *h = duty_module(snap, "Hot");
		TH_ASSERT(h != NULL);
		TH_ASSERT(json_number_value(json_object_get(h, "duty")) < 1);
		json_t *hf = call_named(snap, "Hot", "f");
		if (k >= 2 && hf && !json_is_true(json_object_get(hf, "carried")))
			last = snap;
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "Hot.f/1 never counted");
	}
	TH_ASSERT_OK(obs_session_stop(m, n.name));
	char *text = json_dumps(json_object_get(last, "trace"), JSON_COMPACT);
	json_t *hot = duty_module(last, "Hot"), *cool = duty_module(last, "Cool");
	TH_ASSERT_MSG(hot && cool, "no duty per module: %s", text);
	double hot_duty = json_number_value(json_object_get(hot, "duty"));
	TH_ASSERT_MSG(hot_duty > 0 && hot_duty < 1, "Hot duty %.3f: %s", hot_duty, text);
	/* The module taking almost every call gets the smaller fraction, or the
	 * same one when the rare module made no call in its counted span (a
	 * few ms when the pattern barriers are slow, on a loaded machine): with
	 * no rate of its own it gets a hot module's share, 0.05 / cost. */
	TH_ASSERT_MSG(json_number_value(json_object_get(hot, "next_fraction")) <=
	                  json_number_value(json_object_get(cool, "next_fraction")),
	              "fractions: %s", text);
	json_t *f = call_named(last, "Hot", "f");
	TH_ASSERT_MSG(f != NULL, "no Hot.f/1: %s", text);
	TH_ASSERT(json_is_true(json_object_get(f, "estimated")));
	json_int_t measured = json_integer_value(json_object_get(f, "measured"));
	json_int_t count = json_integer_value(json_object_get(f, "count"));
	TH_ASSERT(measured > 0);
	TH_ASSERT_MSG(count > measured, "estimate %lld vs measured %lld", (long long)count,
	              (long long)measured);
	TH_ASSERT(json_integer_value(json_object_get(f, "low")) <= count);
	TH_ASSERT(json_integer_value(json_object_get(f, "high")) >= count);
	json_t *duty = json_object_get(json_object_get(last, "trace"), "duty");
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(duty, "overhead")), 0.05, 1e-9);
	TH_ASSERT(json_is_false(json_object_get(duty, "paused")));
	free(text);
	ts_beam_wait_answer(&n, RESIDUE_EXPR, "{0, 0}", WAIT_MS, "still has our patterns");
	obs_manager_free(m);
	json_decref(e.snaps);
}

/* A ceiling every node is above: counting pauses, and the snapshots say so. */
static void budget_pauses_above_the_ceiling(void)
{
	struct ts_beam n;
	struct events e = {.lock = PTHREAD_MUTEX_INITIALIZER, .snaps = json_array()};
	struct obs_manager *m = observe(&n, &e, 0.05, 0.001);
	wait_snapshots(&e, 5);
	TH_ASSERT_OK(obs_session_stop(m, n.name));
	json_t *last = json_array_get(e.snaps, json_array_size(e.snaps) - 2);
	char *text = json_dumps(json_object_get(last, "trace"), JSON_COMPACT);
	json_t *duty = json_object_get(json_object_get(last, "trace"), "duty");
	TH_ASSERT_MSG(json_is_true(json_object_get(duty, "paused")), "not paused: %s", text);
	json_t *hot = duty_module(last, "Hot");
	TH_ASSERT_MSG(json_integer_value(json_object_get(hot, "on_us")) == 0,
	              "still counting while paused: %s", text);
	char *errors = json_dumps(json_object_get(last, "errors"), JSON_COMPACT);
	TH_ASSERT_STR_CONTAINS(errors, "counting paused");
	free(errors);
	free(text);
	ts_beam_wait_answer(&n, RESIDUE_EXPR, "{0, 0}", WAIT_MS, "still has our patterns");
	obs_manager_free(m);
	json_decref(e.snaps);
}

/* Polls the monitor's status until the observation of `node` has `n`
 * snapshots. */
static void wait_api_snapshots(const struct td_daemon *m, const char *node, long long n)
{
	int64_t deadline = gi_clock_mono_ms() + WAIT_MS;
	for (;;) {
		json_t *r = NULL;
		TH_ASSERT_INT_EQ(td_get(m, "/api/monitor/observe/status", &r), 200);
		json_t *o = ts_json_find(json_object_get(r, "observations"), "node", node);
		long long have = json_integer_value(json_object_get(o, "snapshots"));
		json_decref(r);
		if (have >= n)
			return;
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "only %lld snapshots", have);
		gi_clock_sleep_ms(100);
	}
}

/* One observation through the API with `overhead` ("" for none in the
 * body): the start's echo of the budget, then the stored profile (caller
 * decrefs). */
static json_t *api_observe(const struct td_daemon *m, const struct ts_beam *n, const char *overhead,
                           json_t **echo)
{
	char body[1024];
	snprintf(body, sizeof(body),
	         "{\"node\":\"%s\",\"cookie\":\"%s\",\"interval_ms\":500%s%s,"
	         "\"trace_modules\":[\"Hot\",\"Cool\"]}",
	         n->name, n->cookie, overhead[0] ? ",\"overhead\":" : "", overhead);
	json_t *r = NULL;
	TH_ASSERT_INT_EQ(td_post(m, "/api/monitor/observe/start", body, &r), 200);
	*echo = json_incref(json_object_get(r, "overhead"));
	json_decref(r);
	wait_api_snapshots(m, n->name, 4);
	snprintf(body, sizeof(body), "{\"node\":\"%s\",\"wait_ms\":60000}", n->name);
	TH_ASSERT_INT_EQ(td_post(m, "/api/monitor/observe/stop", body, &r), 200);
	json_t *profile = json_incref(json_object_get(r, "profile"));
	json_decref(r);
	TH_ASSERT_MSG(json_is_object(profile), "no profile at stop");
	return profile;
}

/* The default of a start that names no budget is 5% (docs/OBSERVE.md "The
 * default"), and `overhead` 0 counts every call: the echo, the profile's
 * trace_budget and its tracing mode say which. */
static void budget_is_the_default_and_zero_counts_every_call(void)
{
	struct ts_beam n;
	ts_beam_start(&n, TS_BEAM_ELIXIR_LONG, NODE_EVAL, NULL);
	ts_beam_wait_answer(&n, "is_pid(whereis(cool)).", "true", WAIT_MS,
	                    "never ran its start code");
	struct td_daemon w, m;
	td_worker_and_monitor(&w, &m);

	json_t *echo = NULL;
	json_t *p = api_observe(&m, &n, "", &echo);
	TH_ASSERT_MSG(json_is_number(echo), "no budget echoed by a start without one");
	TH_ASSERT_DBL_NEAR(json_number_value(echo), OBS_OVERHEAD_DEFAULT, 1e-9);
	TH_ASSERT_DBL_NEAR(OBS_OVERHEAD_DEFAULT, 0.05, 1e-9);
	json_t *budget = json_object_get(p, "trace_budget");
	char *text = json_dumps(budget, JSON_COMPACT);
	TH_ASSERT_MSG(json_is_object(budget), "no trace_budget: %s", text ? text : "null");
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(budget, "overhead")), 0.05, 1e-9);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(budget, "counts")), "estimated");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(json_object_get(p, "tracing"), "mode")),
	                 "budget");
	free(text);
	json_decref(echo);
	json_decref(p);
	ts_beam_wait_answer(&n, RESIDUE_EXPR, "{0, 0}", WAIT_MS, "still has our patterns");

	p = api_observe(&m, &n, "0", &echo);
	TH_ASSERT_MSG(json_is_null(echo), "overhead 0 echoed a budget");
	TH_ASSERT(json_is_null(json_object_get(p, "trace_budget")));
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(json_object_get(p, "tracing"), "mode")),
	                 "full");
	json_decref(echo);
	json_decref(p);
	ts_beam_wait_answer(&n, RESIDUE_EXPR, "{0, 0}", WAIT_MS, "still has our patterns");
	TH_ASSERT_INT_EQ(td_stop(&m), 0);
	TH_ASSERT_INT_EQ(td_stop(&w), 0);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(budget_duty_cycles_and_estimates),
	    TH_TEST(budget_pauses_above_the_ceiling),
	    TH_TEST(budget_is_the_default_and_zero_counts_every_call),
	    TH_END,
	};
	return th_main(argc, argv, "integration_budget", tests);
}
