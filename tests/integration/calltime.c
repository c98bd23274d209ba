/*
 * Integration tests of opt-in call_time (time per function) against real
 * BEAM nodes: plausible times for a known workload (busy work counts, a sleep
 * does not), a process another tracer holds is refused and reported and keeps
 * its tracer, foreign trace messages are drained and reported, and nothing of
 * ours stays on the node (session and guardian processes, call_count and
 * call_time patterns, the `call` flags of the processes we flagged) after
 * each kind of end: stop, observer killed (nodedown), observer frozen (lease
 * expired) and session process killed (the guardian, and the runtime's own
 * clearing of flags whose tracer died); and the session steps back (drops its
 * flags, keeps counting) from a loop of tiny functions. Every wait polls with a generous
 * deadline; no assertion is on time taken by Giulia.
 * needs: erlang-base elixir
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/str.h"
#include "api_util.h"
#include "harness.h"
#include "json_util.h"
#include "node_watch.h"
#include "observe/observe.h"
#include "support.h"

#define WAIT_MS 60000

/* Work.burn/1 busy-waits about 2 ms in an untraced module (Spin), so its own
 * time includes it; Work.nap/1 sleeps 5 ms, which call_time does not count
 * (the process is scheduled out). `victim` runs the same loop and is traced
 * by `foreign` (another tool's tracer, holding the `call` flag). */
static const char *NODE_EVAL =
    "defmodule Spin do\n"
    "  def until(t), do: if(System.monotonic_time(:microsecond) < t, do: until(t), else: :ok)\n"
    "  def tick, do: :ok\n"
    "end\n"
    "defmodule Work do\n"
    "  def burn(us), do: Spin.until(System.monotonic_time(:microsecond) + us)\n"
    "  def nap(ms), do: Process.sleep(ms)\n"
    "  def loop, do: (burn(2000); nap(5); Spin.tick(); loop())\n"
    "end\n"
    "foreign = spawn(fn -> Process.sleep(:infinity) end)\n"
    "victim = spawn(fn -> Work.loop() end)\n"
    ":erlang.trace(victim, true, [:call, {:tracer, foreign}])\n"
    "Process.register(foreign, :foreign)\n"
    "Process.register(victim, :victim)\n"
    "spawn(fn -> Work.loop() end)\n"
    "spawn(fn -> Process.register(self(), :burst); Process.sleep(:infinity) end)\n";

static void node_start(struct ts_beam *n)
{
	ts_beam_start(n, TS_BEAM_ELIXIR_LONG, NODE_EVAL, NULL);
	ts_beam_wait_answer(n, "is_pid(whereis(burst)).", "true", WAIT_MS,
	                    "never ran its start code");
}

/* What of ours is on the node: {session and guardian processes, call_count
 * and call_time patterns on Work, processes with a tracer other than
 * `foreign`, processes other than `victim` with trace flags,
 * scheduler_wall_time, victim still traced by foreign}. */
static const char *RESIDUE_EXPR = TS_OURS_EXPR
    "M = 'Elixir.Work', "
    "Pats = [X || {F, A} <- M:module_info(functions), I <- [call_count, call_time], "
    "{_, X} <- [erlang:trace_info({M, F, A}, I)], X =/= false], "
    "Foreign = whereis(foreign), Victim = whereis(victim), "
    "Tracers = [P || P <- processes(), {tracer, T} <- [erlang:trace_info(P, tracer)], "
    "T =/= [], T =/= Foreign], "
    "Flags = [P || P <- processes(), P =/= Victim, {flags, Fl} <- [erlang:trace_info(P, "
    "flags)], Fl =/= []], "
    "{length(Ours), length(Pats), length(Tracers), length(Flags), "
    "erlang:statistics(scheduler_wall_time), "
    "erlang:trace_info(Victim, tracer) =:= {tracer, Foreign}}.";

static void wait_clean(const struct ts_beam *n)
{
	ts_beam_wait_answer(n, RESIDUE_EXPR, "{0, 0, 0, 0, undefined, true}", WAIT_MS,
	                    "still has our state (sessions, patterns, tracers, flagged, swt, "
	                    "victim's tracer kept)");
}

/* Processes whose tracer is one of our session processes (0 when none). */
static int flagged_by_us(const struct ts_beam *n)
{
	char *r = ts_beam_eval(
	    n, "length([P || P <- processes(), {tracer, T} <- [erlang:trace_info(P, tracer)], "
	       "is_pid(T), {dictionary, D} <- [process_info(T, dictionary)], "
	       "lists:keymember(giulia_session, 1, D)]).");
	int64_t count = 0;
	const char *p = r ? strstr(r, "{ok, ") : NULL;
	char digits[32] = "";
	if (p)
		sscanf(p + 5, "%31[0-9]", digits);
	if (gi_parse_int64(digits, 0, 1 << 30, &count) != 0)
		count = 0;
	free(r);
	return (int)count;
}

static void wait_flagged(const struct ts_beam *n, pid_t child)
{
	int64_t deadline = gi_clock_mono_ms() + WAIT_MS;
	while (flagged_by_us(n) < 1) {
		int status;
		TH_ASSERT_MSG(child <= 0 || waitpid(child, &status, WNOHANG) == 0,
		              "observer child exited");
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "no process was ever flagged");
		gi_clock_sleep_ms(100);
	}
}

static json_t *call_of(json_t *calls, const char *function)
{
	size_t i;
	json_t *c;
	json_array_foreach(calls, i, c)
	{
		if (strcmp(json_string_value(json_object_get(c, "module")), "Work") == 0 &&
		    strcmp(json_string_value(json_object_get(c, "function")), function) == 0)
			return c;
	}
	return NULL;
}

static double mean_us(json_t *c)
{
	double n = (double)json_integer_value(json_object_get(c, "time_calls"));
	return n > 0 ? (double)json_integer_value(json_object_get(c, "time_us")) / n : -1;
}

static void call_time_times_known_work(void)
{
	struct ts_beam n;
	node_start(&n);
	struct obs_target t = {n.name, n.cookie, 10000};
	const char *mods[] = {"Work", NULL};
	json_t *out = NULL;
	TH_ASSERT_OK(obs_trace_timed(&t, mods, 2000, true, &out));
	char *text = json_dumps(out, JSON_COMPACT);
	json_t *calls = json_object_get(out, "calls");
	json_t *burn = call_of(calls, "burn"), *nap = call_of(calls, "nap");
	TH_ASSERT_MSG(burn && nap, "no timed calls: %s", text);
	/* at least 2000 us of busy work per call (more when the machine is loaded:
	 * the spin ends on the wall clock): the order of magnitude must hold */
	TH_ASSERT_MSG(mean_us(burn) >= 500 && mean_us(burn) <= 100000, "burn/1 mean %.1f us: %s",
	              mean_us(burn), text);
	/* a 5 ms sleep is time scheduled out, which call_time does not count */
	TH_ASSERT_MSG(mean_us(nap) >= 0 && mean_us(nap) < 2500, "nap/1 mean %.1f us: %s",
	              mean_us(nap), text);
	/* call_count still counts every process */
	TH_ASSERT(json_integer_value(json_object_get(burn, "count")) >=
	          json_integer_value(json_object_get(burn, "time_calls")));
	json_t *ct = json_object_get(out, "call_time");
	TH_ASSERT_MSG(json_integer_value(json_object_get(ct, "flagged")) >= 1, "%s", text);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(ct, "flag_cap")), 100);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(ct, "isolation")), "global");
	/* the victim is hot, but another tracer holds it: refused and said so */
	TH_ASSERT_MSG(json_integer_value(json_object_get(ct, "refused")) >= 1, "%s", text);
	char *errors = json_dumps(json_object_get(out, "errors"), JSON_COMPACT);
	TH_ASSERT_STR_CONTAINS(errors, "already traced by another tool");
	free(errors);
	free(text);
	json_decref(out);
	wait_clean(&n);
}

/* Session manager runs: counts snapshots with timed calls, and the errors. */
struct events {
	pthread_mutex_t lock;
	int snapshots, timed;
	bool refused_noted, messages_noted;
};

static void on_snapshot(void *ctx, const char *id, json_t *snap)
{
	struct events *e = ctx;
	(void)id;
	json_t *burn = call_of(json_object_get(json_object_get(snap, "trace"), "calls"), "burn");
	char *errors = json_dumps(json_object_get(snap, "errors"), JSON_COMPACT);
	pthread_mutex_lock(&e->lock);
	e->snapshots++;
	if (burn && json_integer_value(json_object_get(burn, "time_us")) > 0)
		e->timed++;
	if (errors && strstr(errors, "already traced by another tool"))
		e->refused_noted = true;
	if (errors && strstr(errors, "trace messages"))
		e->messages_noted = true;
	pthread_mutex_unlock(&e->lock);
	free(errors);
}

static int timed_of(struct events *e)
{
	pthread_mutex_lock(&e->lock);
	int n = e->timed;
	pthread_mutex_unlock(&e->lock);
	return n;
}

static void wait_timed(struct events *e, int n)
{
	int64_t deadline = gi_clock_mono_ms() + WAIT_MS;
	while (timed_of(e) < n) {
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "only %d snapshots with times",
		              timed_of(e));
		gi_clock_sleep_ms(50);
	}
}

static struct obs_session_config session_config(const struct ts_beam *n, const char **mods)
{
	struct obs_session_config cfg = {.node = n->name,
	                                 .cookie = n->cookie,
	                                 .interval_ms = 300,
	                                 .top_n = 5,
	                                 .trace_modules = mods,
	                                 .call_time = true};
	return cfg;
}

static void call_time_session_stop_leaves_nothing(void)
{
	struct ts_beam n;
	node_start(&n);
	struct events e = {.lock = PTHREAD_MUTEX_INITIALIZER};
	struct obs_callbacks cb = {on_snapshot, NULL, &e};
	struct obs_manager *m = NULL;
	TH_ASSERT_OK(obs_manager_new(&cb, &m));
	const char *mods[] = {"Work", NULL};
	struct obs_session_config cfg = session_config(&n, mods);
	char *id = NULL;
	TH_ASSERT_OK(obs_session_start(m, &cfg, &id));
	wait_timed(&e, 2);
	TH_ASSERT(flagged_by_us(&n) >= 1);
	/* a foreign message-sending pattern on a function the flagged loop calls */
	char *r = ts_beam_eval(&n, "erlang:trace_pattern({'Elixir.Spin', tick, 0}, true, []).");
	TH_ASSERT_STR_CONTAINS(r, "{ok, 1}");
	free(r);
	int64_t deadline = gi_clock_mono_ms() + WAIT_MS;
	for (;;) {
		pthread_mutex_lock(&e.lock);
		bool noted = e.messages_noted;
		pthread_mutex_unlock(&e.lock);
		if (noted)
			break;
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline,
		              "foreign trace messages never reported");
		gi_clock_sleep_ms(100);
	}
	r = ts_beam_eval(&n, "erlang:trace_pattern({'Elixir.Spin', tick, 0}, false, []).");
	free(r);
	TH_ASSERT(e.refused_noted);
	json_t *st = obs_manager_status(m);
	TH_ASSERT(json_is_true(json_object_get(json_array_get(st, 0), "call_time")));
	json_decref(st);
	TH_ASSERT_OK(obs_session_stop(m, n.name));
	wait_clean(&n);
	obs_manager_free(m);
	gi_free(id);
}

/* A child process observing `n` with call_time at 500 ms; returns once one
 * of the node's processes carries our flag. */
static pid_t observer_child(const struct ts_beam *n)
{
	const char *mods[] = {"Work", NULL};
	struct obs_session_config cfg = session_config(n, mods);
	cfg.interval_ms = 500;
	pid_t child = ts_observer_fork(&cfg);
	wait_flagged(n, child);
	return child;
}

static void call_time_clean_after_observer_killed(void)
{
	struct ts_beam n;
	node_start(&n);
	pid_t child = observer_child(&n);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	wait_clean(&n);
}

static void call_time_clean_after_lease_expired(void)
{
	struct ts_beam n;
	node_start(&n);
	pid_t child = observer_child(&n);
	kill(child, SIGSTOP);
	wait_clean(&n);
	kill(child, SIGKILL);
	kill(child, SIGCONT);
	waitpid(child, NULL, 0);
}

static void call_time_clean_after_session_process_killed(void)
{
	struct ts_beam n;
	node_start(&n);
	pid_t child = observer_child(&n);
	char *r = ts_beam_eval(&n, "[exit(P, kill) || P <- processes(), {dictionary, D} <- "
	                           "[process_info(P, dictionary)], "
	                           "lists:keymember(giulia_session, 1, D)].");
	TH_ASSERT_STR_CONTAINS(r, "[true]");
	free(r);
	wait_clean(&n);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

/* A loop of tiny traced functions: timing them costs far more than they
 * take, so the session drops its flags and goes on counting. */
static void call_time_steps_back_from_tiny_functions(void)
{
	struct ts_beam n;
	ts_beam_start(
	    &n, TS_BEAM_ELIXIR_LONG,
	    "defmodule Tiny do\n"
	    "  def step(x), do: x + 1\n"
	    "  def loop(x), do: loop(step(x))\n"
	    "end\n"
	    "spawn(fn -> Tiny.loop(0) end)\n"
	    "spawn(fn -> Process.register(self(), :burst); Process.sleep(:infinity) end)\n",
	    NULL);
	int64_t deadline = gi_clock_mono_ms() + WAIT_MS;
	for (;;) {
		char *r = ts_beam_eval(&n, "is_pid(whereis(burst)).");
		bool ready = r && strstr(r, "true");
		free(r);
		if (ready)
			break;
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "node never ran its start code");
		gi_clock_sleep_ms(100);
	}
	struct obs_target t = {n.name, n.cookie, 10000};
	const char *mods[] = {"Tiny", NULL};
	json_t *out = NULL;
	TH_ASSERT_OK(obs_trace_timed(&t, mods, 1000, true, &out));
	char *text = json_dumps(out, JSON_COMPACT);
	TH_ASSERT_MSG(json_is_true(json_object_get(json_object_get(out, "call_time"), "suspended")),
	              "call_time not suspended: %s", text);
	TH_ASSERT_STR_CONTAINS(text, "suspended for this session");
	/* counting goes on */
	json_t *step = NULL;
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(out, "calls"), i, c)
	{
		if (strcmp(json_string_value(json_object_get(c, "function")), "step") == 0)
			step = c;
	}
	TH_ASSERT_MSG(step && json_integer_value(json_object_get(step, "count")) > 0, "%s", text);
	free(text);
	json_decref(out);
	char *r = ts_beam_eval(&n, "length([P || P <- processes(), {tracer, T} <- "
	                           "[erlang:trace_info(P, tracer)], T =/= []]).");
	TH_ASSERT_STR_CONTAINS(r, "{ok, 0}");
	free(r);
}

/* The whole chain: the monitor's start API with call_time, snapshots pushed
 * to the worker, the fused profile's hotspots with times; and the API's
 * validation of the new field. */
static void call_time_through_the_daemons(void)
{
	struct ts_beam n;
	node_start(&n);
	struct td_daemon w, m;
	td_worker_and_monitor(&w, &m);
	char body[1024];
	snprintf(body, sizeof(body), "{\"node\":\"%s\",\"call_time\":\"yes\"}", n.name);
	TD_EXPECT_ERROR(&m, "POST", "/api/monitor/observe/start", body, 400);
	snprintf(body, sizeof(body), "{\"node\":\"%s\",\"call_time\":true}", n.name);
	TD_EXPECT_ERROR(&m, "POST", "/api/monitor/observe/start", body, 400);
	snprintf(body, sizeof(body),
	         "{\"node\":\"%s\",\"cookie\":\"%s\",\"interval_ms\":300,\"overhead\":0,"
	         "\"trace_modules\":[\"Work\"],\"call_time\":true}",
	         n.name, n.cookie);
	json_t *r = NULL;
	TH_ASSERT_INT_EQ(td_post(&m, "/api/monitor/observe/start", body, &r), 200);
	TH_ASSERT(json_is_true(json_object_get(r, "call_time")));
	json_decref(r);
	wait_flagged(&n, 0);
	gi_clock_sleep_ms(1500); /* a few windows with times */
	snprintf(body, sizeof(body), "{\"node\":\"%s\",\"wait_ms\":60000}", n.name);
	TH_ASSERT_INT_EQ(td_post(&m, "/api/monitor/observe/stop", body, &r), 200);
	json_t *profile = json_object_get(r, "profile");
	char *text = json_dumps(json_object_get(profile, "trace_hotspots"), JSON_COMPACT);
	json_t *burn = ts_json_find(json_object_get(profile, "trace_hotspots"), "function", "burn");
	TH_ASSERT_MSG(burn != NULL, "no burn/1 hotspot: %s", text);
	double mean = json_number_value(json_object_get(burn, "mean_us"));
	TH_ASSERT_MSG(mean >= 500 && mean <= 100000, "burn/1 mean %.1f us: %s", mean, text);
	TH_ASSERT(json_number_value(json_object_get(burn, "time_share")) > 0.5);
	TH_ASSERT(json_is_object(json_object_get(profile, "call_time")));
	free(text);
	json_decref(r);
	wait_clean(&n);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(call_time_times_known_work),
	    TH_TEST(call_time_session_stop_leaves_nothing),
	    TH_TEST(call_time_clean_after_observer_killed),
	    TH_TEST(call_time_clean_after_lease_expired),
	    TH_TEST(call_time_clean_after_session_process_killed),
	    TH_TEST(call_time_steps_back_from_tiny_functions),
	    TH_TEST(call_time_through_the_daemons),
	    TH_END,
	};
	return th_main(argc, argv, "integration_calltime", tests);
}
