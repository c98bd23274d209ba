/*
 * Integration tests of the runtime observer against real BEAM nodes: one-shot
 * pulse/top/trace on Elixir long-name, Erlang short-name and plain Erlang
 * long-name nodes; connection errors and their exit codes; sessions of the
 * manager through a node's death, a freeze (SIGSTOP/SIGCONT) and a stop; the
 * target cleaning up by itself when the observer is killed; and the dist API
 * used by `giulia index --node`. Every wait polls with a generous deadline.
 * needs: erlang-base
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
#include "base/fs.h"
#include "harness.h"
#include "json_util.h"
#include "node_watch.h"
#include "observe/dist.h"
#include "observe/observe.h"
#include "observe/snapshot_view.h"
#include "support.h"

#define WAIT_MS 60000

/* An Elixir node with a busy gen_server (Busy), a module called in a loop
 * (Hot, with a local function), and a process that was busy once and then
 * went idle (registered as :burst). */
static const char *ELIXIR_EVAL =
    "defmodule Busy do\n"
    "  use GenServer\n"
    "  def init(x), do: (send(self(), :spin); {:ok, x})\n"
    "  def handle_info(:spin, s), do: (spin(2000, 0); send(self(), :spin); {:noreply, s})\n"
    "  defp spin(0, acc), do: acc\n"
    "  defp spin(n, acc), do: spin(n - 1, acc + rem(n, 7))\n"
    "end\n"
    "defmodule Hot do\n"
    "  def a(x), do: b(x) + 1\n"
    "  defp b(x), do: x * 2\n"
    "  def loop, do: (a(1); Process.sleep(1); loop())\n"
    "end\n"
    "GenServer.start(Busy, 0)\n"
    "spawn(fn -> Hot.loop() end)\n"
    "spawn(fn -> Enum.sum(1..3_000_000); Process.register(self(), :burst); "
    "Process.sleep(:infinity) end)\n";

/* The same shape in plain Erlang: a spinning registered process and a burst. */
static const char *ERLANG_EVAL =
    "Spin = fun F() -> lists:sum(lists:seq(1, 2000)), F() end, "
    "register(spinner, spawn(Spin)), "
    "spawn(fun() -> lists:sum(lists:seq(1, 3000000)), register(burst, self()), "
    "receive never -> ok end end).";

/* Starts a node and waits until its start code has run (burst registered). */
static void node_start_ready(struct ts_beam *n, enum ts_beam_kind kind, const char *eval)
{
	ts_beam_start(n, kind, eval, NULL);
	if (!eval)
		return;
	ts_beam_wait_answer(n, "is_pid(whereis(burst)).", "true", WAIT_MS,
	                    "never ran its start code");
}

static struct obs_target target_of(const struct ts_beam *n)
{
	struct obs_target t = {n->name, n->cookie, 10000};
	return t;
}

static void check_snapshot_shape(json_t *s, const char *node)
{
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(s, "version")), 1);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(s, "node")), node);
	static const char *const keys[] = {"timestamp_ms",
	                                   "window_ms",
	                                   "otp_release",
	                                   "schedulers_online",
	                                   "scheduler_utilisation",
	                                   "run_queue",
	                                   "processes",
	                                   "ports",
	                                   "atoms",
	                                   "ets",
	                                   "memory",
	                                   "reductions",
	                                   "gc",
	                                   "io",
	                                   "top_processes",
	                                   "errors",
	                                   NULL};
	for (const char *const *k = keys; *k; k++)
		TH_ASSERT_MSG(json_object_get(s, *k) != NULL, "snapshot lacks %s", *k);
	json_t *su = json_object_get(s, "scheduler_utilisation");
	TH_ASSERT(json_is_number(json_object_get(su, "total")));
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(su, "per_scheduler")),
	                 json_integer_value(json_object_get(s, "schedulers_online")));
	TH_ASSERT_INT_GE(
	    json_integer_value(json_object_get(json_object_get(s, "processes"), "count")), 10);
	TH_ASSERT_INT_GE(json_integer_value(json_object_get(json_object_get(s, "memory"), "total")),
	                 1000000);
	TH_ASSERT_INT_GE(json_array_size(json_object_get(json_object_get(s, "ets"), "top")), 1);
	TH_ASSERT_INT_GE(
	    json_integer_value(json_object_get(json_object_get(s, "reductions"), "delta")), 1);
}

/* Nothing of ours left on the node: no session or guardian process, no
 * call_count pattern on `atom` (may be NULL), no process with a tracer or
 * trace flags (these nodes have no other tracer), scheduler_wall_time off. */
static void wait_clean(const struct ts_beam *n, const char *atom)
{
	char expr[1024];
	snprintf(expr, sizeof(expr),
	         TS_OURS_EXPR
	         "Counts = case '%s' of '' -> []; M -> [C || {F, A} <- M:module_info(functions), "
	         "{call_count, C} <- [erlang:trace_info({M, F, A}, call_count)], C =/= false] end, "
	         "Traced = [P || P <- processes(), {tracer, T} <- [erlang:trace_info(P, tracer)], "
	         "{flags, Fl} <- [erlang:trace_info(P, flags)], T =/= [] orelse Fl =/= []], "
	         "{length(Ours), length(Counts), length(Traced), "
	         "erlang:statistics(scheduler_wall_time)}.",
	         atom ? atom : "");
	ts_beam_wait_answer(n, expr, "{0, 0, 0, undefined}", WAIT_MS, "still has our state");
}

static void pulse_elixir_long_name(void)
{
	struct ts_beam n;
	node_start_ready(&n, TS_BEAM_ELIXIR_LONG, ELIXIR_EVAL);
	struct obs_target t = target_of(&n);
	json_t *s = NULL;
	TH_ASSERT_OK(obs_pulse(&t, 1000, 10, &s));
	check_snapshot_shape(s, n.name);
	json_t *reds = json_object_get(json_object_get(s, "top_processes"), "reductions");
	/* attribution through proc_lib's '$initial_call': an unregistered gen_server */
	json_t *busy = ts_json_find(reds, "module", "Busy");
	TH_ASSERT_MSG(busy != NULL, "Busy not among the top processes: %s",
	              json_dumps(reds, JSON_COMPACT));
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(busy, "initial_call")), "Busy.init/1");
	TH_ASSERT(json_number_value(json_object_get(busy, "cpu_share")) > 0.0);
	/* reductions over the window, not lifetime: the idle burst process is not there */
	json_t *burst = ts_json_find(reds, "registered_name", "burst");
	TH_ASSERT_MSG(!burst || json_integer_value(json_object_get(burst, "reductions")) < 100000,
	              "burst shows lifetime reductions");
	TH_ASSERT(json_is_null(json_object_get(s, "session_id")));
	json_decref(s);
	wait_clean(&n, NULL);
}

static void pulse_erlang_short_name(void)
{
	struct ts_beam n;
	node_start_ready(&n, TS_BEAM_ERL_SHORT, ERLANG_EVAL);
	struct obs_target t = target_of(&n);
	json_t *s = NULL;
	TH_ASSERT_OK(obs_pulse(&t, 800, 5, &s));
	check_snapshot_shape(s, n.name);
	json_t *reds = json_object_get(json_object_get(s, "top_processes"), "reductions");
	TH_ASSERT_INT_GE(json_array_size(reds), 1);
	TH_ASSERT(json_array_size(reds) <= 5);
	json_t *spinner = ts_json_find(reds, "registered_name", "spinner");
	TH_ASSERT(spinner != NULL);
	json_t *burst = ts_json_find(reds, "registered_name", "burst");
	TH_ASSERT(!burst || json_integer_value(json_object_get(burst, "reductions")) < 100000);
	json_decref(s);
	wait_clean(&n, NULL);
}

static void top_and_pulse_cli_plain_erlang(void)
{
	struct ts_beam n;
	node_start_ready(&n, TS_BEAM_ERL_LONG, ERLANG_EVAL);
	char bin[1024];
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	const char *argv[] = {bin,      "top", n.name, "--cookie", n.cookie, "--by",
	                      "memory", "-n",  "3",    "--json",   NULL};
	char *out = NULL;
	int rc = ts_run(argv, NULL, WAIT_MS, &out, NULL);
	TH_ASSERT_INT_EQ(rc, 0);
	json_t *v = json_loads(out, 0, NULL);
	TH_ASSERT(v != NULL);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(v, "by")), "memory");
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(v, "processes")), 3);
	json_decref(v);
	free(out);
	const char *argv2[] = {bin, "pulse", n.name, "--cookie", n.cookie, NULL};
	rc = ts_run(argv2, NULL, WAIT_MS, &out, NULL);
	TH_ASSERT_INT_EQ(rc, 0);
	TH_ASSERT_STR_CONTAINS(out, "spinner");
	TH_ASSERT(strstr(out, n.cookie) == NULL);
	free(out);
	wait_clean(&n, NULL);
}

static void trace_counts_local_calls(void)
{
	struct ts_beam n;
	node_start_ready(&n, TS_BEAM_ELIXIR_LONG, ELIXIR_EVAL);
	struct obs_target t = target_of(&n);
	const char *mods[] = {"Hot", "No.Such.Module", ":lists_no_such", NULL};
	json_t *out = NULL;
	TH_ASSERT_OK(obs_trace(&t, mods, 1500, &out));
	json_t *calls = json_object_get(out, "calls");
	long long a = 0, b = 0;
	size_t i;
	json_t *c;
	json_array_foreach(calls, i, c)
	{
		TH_ASSERT_STR_EQ(json_string_value(json_object_get(c, "module")), "Hot");
		const char *f = json_string_value(json_object_get(c, "function"));
		if (strcmp(f, "a") == 0)
			a = json_integer_value(json_object_get(c, "count"));
		if (strcmp(f, "b") == 0)
			b = json_integer_value(json_object_get(c, "count"));
	}
	TH_ASSERT_INT_GE(a, 1);
	TH_ASSERT_INT_GE(b, 1); /* a local call */
	char *errors = json_dumps(json_object_get(out, "errors"), JSON_COMPACT);
	TH_ASSERT_STR_CONTAINS(errors, "module No.Such.Module is not loaded");
	TH_ASSERT_STR_CONTAINS(errors, "module :lists_no_such is not loaded");
	free(errors);
	json_decref(out);
	wait_clean(&n, "Elixir.Hot");
	/* names from the user never become atoms on the node */
	const char *fresh[] = {"Zz.Never.Seen.One", ":never_seen_two", "never_seen_three", NULL};
	TH_ASSERT_OK(obs_trace(&t, fresh, 300, &out));
	json_decref(out);
	char *check =
	    ts_beam_eval(&n, "length([A || A <- [\"Elixir.Zz.Never.Seen.One\", \"never_seen_two\", "
	                     "\"never_seen_three\"], is_atom(catch list_to_existing_atom(A))]).");
	TH_ASSERT_STR_CONTAINS(check, "{ok, 0}");
	free(check);
	/* the CLI: exit 1 when nothing could be traced */
	char bin[1024];
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	const char *argv[] = {bin,   "trace",    n.name,   "Nope", "--for",
	                      "200", "--cookie", n.cookie, NULL};
	char *err = NULL;
	TH_ASSERT_INT_EQ(ts_run(argv, NULL, WAIT_MS, NULL, &err), 1);
	TH_ASSERT_STR_CONTAINS(err, "Nope is not loaded");
	free(err);
}

static int cli_exit(const char *node, const char *cookie, const char *epmd_port)
{
	char bin[1024];
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	char env[64];
	snprintf(env, sizeof(env), "ERL_EPMD_PORT=%s", epmd_port ? epmd_port : "4369");
	const char *argv[] = {"env",      env,    bin,        "pulse", node,
	                      "--cookie", cookie, "--window", "100",   NULL};
	char *err = NULL;
	int rc = ts_run(argv, NULL, WAIT_MS, NULL, &err);
	TH_ASSERT(err && strstr(err, cookie) == NULL);
	free(err);
	return rc;
}

static void connection_errors(void)
{
	struct ts_beam n;
	ts_beam_start(&n, TS_BEAM_ERL_LONG, NULL, NULL);
	struct obs_target t = {n.name, "not-the-cookie", 5000};
	json_t *s = NULL;
	TH_ASSERT_INT_EQ(obs_pulse(&t, 100, 5, &s), GI_ECOOKIE);
	t.node = "nobody_here@127.0.0.1";
	t.cookie = n.cookie;
	TH_ASSERT_INT_EQ(obs_pulse(&t, 100, 5, &s), GI_ENONODE);
	t.node = "no at sign";
	TH_ASSERT_INT_EQ(obs_pulse(&t, 100, 5, &s), GI_EINVAL);
	char port[16];
	snprintf(port, sizeof(port), "%d", ts_free_port());
	setenv("ERL_EPMD_PORT", port, 1);
	t.node = n.name;
	TH_ASSERT_INT_EQ(obs_pulse(&t, 100, 5, &s), GI_EEPMD);
	unsetenv("ERL_EPMD_PORT");
	TH_ASSERT_INT_EQ(cli_exit(n.name, "not-the-cookie", NULL), 12);
	TH_ASSERT_INT_EQ(cli_exit("nobody_here@127.0.0.1", n.cookie, NULL), 11);
	TH_ASSERT_INT_EQ(cli_exit(n.name, n.cookie, port), 10);
	TH_ASSERT_INT_EQ(cli_exit(n.name, n.cookie, NULL), 0);
	/* the cookie from GIULIA_COOKIE */
	setenv("GIULIA_COOKIE", n.cookie, 1);
	struct obs_target env_t = {n.name, NULL, 10000};
	TH_ASSERT_OK(obs_pulse(&env_t, 100, 3, &s));
	json_decref(s);
	unsetenv("GIULIA_COOKIE");
}

/* Session manager tests: callbacks count into a shared record. */
struct events {
	pthread_mutex_t lock;
	int snapshots;
	long last_seq;
	int ends;
	char status[32];
	bool had_trace;
};

static void on_snapshot(void *ctx, const char *id, json_t *snap)
{
	struct events *e = ctx;
	(void)id;
	pthread_mutex_lock(&e->lock);
	e->snapshots++;
	e->last_seq = (long)json_integer_value(json_object_get(snap, "seq"));
	if (json_array_size(json_object_get(json_object_get(snap, "trace"), "calls")) > 0)
		e->had_trace = true;
	pthread_mutex_unlock(&e->lock);
}

static void on_end(void *ctx, const char *id, json_t *fin)
{
	struct events *e = ctx;
	(void)id;
	pthread_mutex_lock(&e->lock);
	e->ends++;
	snprintf(e->status, sizeof(e->status), "%s",
	         json_string_value(json_object_get(fin, "status")));
	pthread_mutex_unlock(&e->lock);
}

/* The session's snapshot `snap` (borrowed) carries the sampler's section,
 * read through the typed view, with its period `period_ms`, ticks, samples
 * and every stack weighted. Returns whether a stack shows a frame starting
 * with `frame_prefix`. */
static bool check_sampler_saw(json_t *snap, double period_ms, const char *frame_prefix)
{
	struct obs_view v;
	TH_ASSERT_OK(obs_view_parse(snap, &v));
	const struct obs_view_executing *x = &v.executing;
	TH_ASSERT(x->present);
	/* The period asked for, or a longer one where the guest's budget had to
	 * lengthen it (a slow build on a loaded machine): then the observer's
	 * section says what was asked. */
	TH_ASSERT_MSG(x->period_ms == period_ms ||
	                  (x->period_ms > period_ms && v.observer.present &&
	                   v.observer.sample_period_ms == period_ms),
	              "period %g, asked %g, observer's asked %g", x->period_ms, period_ms,
	              v.observer.sample_period_ms);
	/* candidates are the processes that did real work, at most K */
	TH_ASSERT(x->candidates >= 1 && x->candidates <= OBS_SAMPLE_PROCESSES_DEFAULT);
	TH_ASSERT(x->ticks >= 1);
	TH_ASSERT(x->samples_running + x->samples_waiting >= 1);
	TH_ASSERT(x->failed_ticks == 0);
	bool seen = false;
	for (size_t i = 0; i < x->nstacks; i++) {
		TH_ASSERT(x->stacks[i].samples >= 1 && x->stacks[i].reductions >= 0);
		for (size_t f = 0; f < x->stacks[i].depth; f++)
			seen = seen || strncmp(x->stacks[i].frames[f], frame_prefix,
			                       strlen(frame_prefix)) == 0;
	}
	TH_ASSERT(x->norigins >= 1);
	obs_view_destroy(&v);
	return seen;
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

static json_t *status_of(struct obs_manager *m, const char *node)
{
	json_t *all = obs_manager_status(m);
	json_t *found = NULL;
	size_t i;
	json_t *s;
	json_array_foreach(all, i, s)
	{
		if (strcmp(json_string_value(json_object_get(s, "node")), node) == 0)
			found = json_incref(s);
	}
	json_decref(all);
	return found;
}

static void session_runs_and_stops_clean(void)
{
	struct ts_beam n;
	node_start_ready(&n, TS_BEAM_ELIXIR_LONG, ELIXIR_EVAL);
	struct events e = {.lock = PTHREAD_MUTEX_INITIALIZER};
	struct obs_callbacks cb = {on_snapshot, on_end, &e};
	struct obs_manager *m = NULL;
	TH_ASSERT_OK(obs_manager_new(&cb, &m));
	const char *mods[] = {"Hot", NULL};
	struct obs_session_config cfg = {.node = n.name,
	                                 .cookie = n.cookie,
	                                 .interval_ms = 300,
	                                 .top_n = 5,
	                                 .trace_modules = mods,
	                                 .project = "/p",
	                                 /* 300 ms intervals: at the default period
	                                  * (100 ms) an interval has 3 ticks, too
	                                  * few to be sure of catching Busy */
	                                 .sample_period_ms = 20};
	char *id = NULL;
	TH_ASSERT_OK(obs_session_start(m, &cfg, &id));
	char *id2 = NULL;
	TH_ASSERT_INT_EQ(obs_session_start(m, &cfg, &id2), GI_EEXIST);
	wait_snapshots(&e, 3);
	TH_ASSERT(e.had_trace);
	json_t *st = status_of(m, n.name);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(st, "state")), "running");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(st, "session_id")), id);
	json_decref(st);
	json_t *h = obs_manager_history(m, n.name, 2);
	TH_ASSERT_INT_EQ(json_array_size(h), 2);
	json_t *last = json_array_get(h, 1);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(last, "session_id")), id);
	TH_ASSERT(json_integer_value(json_object_get(last, "seq")) >= 1);
	json_decref(h);
	/* Sampling is statistical and the machine may be loaded: every snapshot
	 * must carry a well-formed sampler section, and Busy must show in the
	 * stacks of some snapshot before the deadline, not in a given one. */
	bool seen = false;
	int64_t deadline = gi_clock_mono_ms() + WAIT_MS;
	while (!seen) {
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "no sampled stack shows Busy.");
		json_t *all = obs_manager_history(m, n.name, 0);
		size_t i;
		json_t *snap;
		json_array_foreach(all, i, snap) seen =
		    check_sampler_saw(snap, 20, "Busy.") || seen;
		json_decref(all);
		if (!seen)
			gi_clock_sleep_ms(300);
	}
	TH_ASSERT_OK(obs_session_stop(m, n.name));
	TH_ASSERT_INT_EQ(e.ends, 1);
	TH_ASSERT_STR_EQ(e.status, "complete");
	TH_ASSERT_INT_EQ(obs_session_stop(m, n.name), GI_ENOTFOUND);
	wait_clean(&n, "Elixir.Hot");
	obs_manager_free(m);
	gi_free(id);
}

/* A module named twice in two ways (issue 28, item 5): "Hot" and
 * ":Elixir.Hot" are one module on the target, whose session process keyed
 * its per-module maps by it and crashed on the second ({badkey, ...}), so
 * the session took no snapshot while it said `running`. Merged in C, it is
 * traced once and the snapshots come. */
static void module_named_twice_is_traced_once(void)
{
	struct ts_beam n;
	node_start_ready(&n, TS_BEAM_ELIXIR_LONG, ELIXIR_EVAL);
	struct events e = {.lock = PTHREAD_MUTEX_INITIALIZER};
	struct obs_callbacks cb = {on_snapshot, on_end, &e};
	struct obs_manager *m = NULL;
	TH_ASSERT_OK(obs_manager_new(&cb, &m));
	const char *mods[] = {"Hot", ":Elixir.Hot", "Hot", NULL};
	struct obs_session_config cfg = {.node = n.name,
	                                 .cookie = n.cookie,
	                                 .interval_ms = 300,
	                                 .trace_modules = mods,
	                                 .overhead = OBS_OVERHEAD_DEFAULT};
	char *id = NULL;
	TH_ASSERT_OK(obs_session_start(m, &cfg, &id));
	wait_snapshots(&e, 3);
	TH_ASSERT(e.had_trace);
	json_t *st = status_of(m, n.name);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(st, "trace_modules")), 1);
	TH_ASSERT_STR_EQ(json_string_value(json_array_get(json_object_get(st, "trace_modules"), 0)),
	                 "Hot");
	json_decref(st);
	/* The node's log has no crash of ours. */
	char *log = NULL;
	size_t len = 0;
	if (gi_fs_read_file(n.log, 1 << 24, &log, &len) == 0)
		TH_ASSERT_MSG(!strstr(log, "badkey"), "the session crashed on the node: %s", log);
	gi_free(log);
	TH_ASSERT_OK(obs_session_stop(m, n.name));
	TH_ASSERT_STR_EQ(e.status, "complete");
	wait_clean(&n, "Elixir.Hot");
	obs_manager_free(m);
	gi_free(id);
}

/* A session with the sampler off ships no executing section. */
static void session_without_sampler(void)
{
	struct ts_beam n;
	node_start_ready(&n, TS_BEAM_ERL_LONG, ERLANG_EVAL);
	struct events e = {.lock = PTHREAD_MUTEX_INITIALIZER};
	struct obs_callbacks cb = {on_snapshot, on_end, &e};
	struct obs_manager *m = NULL;
	TH_ASSERT_OK(obs_manager_new(&cb, &m));
	struct obs_session_config cfg = {
	    .node = n.name, .cookie = n.cookie, .interval_ms = 300, .sample_period_ms = -1};
	char *id = NULL;
	TH_ASSERT_OK(obs_session_start(m, &cfg, &id));
	wait_snapshots(&e, 2);
	json_t *h = obs_manager_history(m, n.name, 1);
	struct obs_view v;
	TH_ASSERT_OK(obs_view_parse(json_array_get(h, 0), &v));
	TH_ASSERT(!v.executing.present);
	obs_view_destroy(&v);
	json_decref(h);
	TH_ASSERT_OK(obs_session_stop(m, n.name));
	wait_clean(&n, NULL);
	obs_manager_free(m);
	gi_free(id);
}

static void session_survives_freeze(void)
{
	struct ts_beam n;
	node_start_ready(&n, TS_BEAM_ERL_LONG, ERLANG_EVAL);
	struct events e = {.lock = PTHREAD_MUTEX_INITIALIZER};
	struct obs_callbacks cb = {on_snapshot, on_end, &e};
	struct obs_manager *m = NULL;
	TH_ASSERT_OK(obs_manager_new(&cb, &m));
	/* The per-call deadline also bounds the session's start (which loads the
	 * probe): 3 s leaves a loaded machine room for it, and still shows a
	 * frozen node as a timeout within seconds. */
	struct obs_session_config cfg = {
	    .node = n.name, .cookie = n.cookie, .interval_ms = 250, .timeout_ms = 3000};
	char *id = NULL;
	TH_ASSERT_OK(obs_session_start(m, &cfg, &id));
	wait_snapshots(&e, 2);
	kill(n.pid, SIGSTOP);
	int64_t deadline = gi_clock_mono_ms() + WAIT_MS;
	for (;;) {
		json_t *st = status_of(m, n.name);
		long long timeouts = json_integer_value(json_object_get(st, "timeouts"));
		json_decref(st);
		if (timeouts >= 1)
			break;
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "no timeout seen on a frozen node");
		gi_clock_sleep_ms(100);
	}
	/* the manager itself stays responsive while the node is frozen */
	json_t *st = status_of(m, n.name);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(st, "state")), "running");
	json_decref(st);
	int before = snapshots_of(&e);
	kill(n.pid, SIGCONT);
	wait_snapshots(&e, before + 3);
	TH_ASSERT_OK(obs_session_stop(m, n.name));
	wait_clean(&n, NULL);
	obs_manager_free(m);
	gi_free(id);
}

static void session_interrupted_when_node_dies(void)
{
	struct ts_beam n;
	ts_beam_start(&n, TS_BEAM_ERL_SHORT, NULL, NULL);
	struct events e = {.lock = PTHREAD_MUTEX_INITIALIZER};
	struct obs_callbacks cb = {on_snapshot, on_end, &e};
	struct obs_manager *m = NULL;
	TH_ASSERT_OK(obs_manager_new(&cb, &m));
	struct obs_session_config cfg = {.node = n.name, .cookie = n.cookie, .interval_ms = 250};
	char *id = NULL;
	TH_ASSERT_OK(obs_session_start(m, &cfg, &id));
	wait_snapshots(&e, 2);
	kill(n.pid, SIGKILL);
	int64_t deadline = gi_clock_mono_ms() + WAIT_MS;
	for (;;) {
		pthread_mutex_lock(&e.lock);
		int ends = e.ends;
		pthread_mutex_unlock(&e.lock);
		if (ends == 1)
			break;
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "session did not end");
		gi_clock_sleep_ms(50);
	}
	TH_ASSERT_STR_EQ(e.status, "interrupted");
	json_t *st = status_of(m, n.name);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(st, "state")), "interrupted");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(st, "reason")), "node went down");
	json_decref(st);
	json_t *h = obs_manager_history(m, n.name, 0);
	TH_ASSERT_INT_GE(json_array_size(h), 2);
	json_decref(h);
	obs_manager_free(m);
	gi_free(id);
}

/* Starts a child process observing `n` with tracing of Hot at 500 ms and
 * waits until the pattern is set on the node; returns the child's pid. */
static pid_t observer_child(const struct ts_beam *n)
{
	const char *mods[] = {"Hot", NULL};
	struct obs_session_config cfg = {
	    .node = n->name, .cookie = n->cookie, .interval_ms = 500, .trace_modules = mods};
	pid_t child = ts_observer_fork(&cfg);
	int64_t deadline = gi_clock_mono_ms() + WAIT_MS;
	for (;;) {
		char *r = ts_beam_eval(n, "erlang:trace_info({'Elixir.Hot', a, 1}, call_count).");
		bool on = r && strstr(r, "{call_count, ") && !strstr(r, "false");
		free(r);
		if (on)
			return child;
		int status;
		TH_ASSERT_MSG(waitpid(child, &status, WNOHANG) == 0, "observer child exited");
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "tracing never started");
		gi_clock_sleep_ms(100);
	}
}

/* A frozen observer keeps its connection open but stops renewing the lease:
 * the target cleans up by itself (the lease is two intervals). */
static void target_cleans_up_when_observer_freezes(void)
{
	struct ts_beam n;
	node_start_ready(&n, TS_BEAM_ELIXIR_LONG, ELIXIR_EVAL);
	pid_t child = observer_child(&n);
	kill(child, SIGSTOP);
	wait_clean(&n, "Elixir.Hot");
	kill(child, SIGKILL);
	kill(child, SIGCONT);
	waitpid(child, NULL, 0);
}

static void target_cleans_up_after_observer_is_killed(void)
{
	struct ts_beam n;
	node_start_ready(&n, TS_BEAM_ELIXIR_LONG, ELIXIR_EVAL);
	pid_t child = observer_child(&n);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	wait_clean(&n, "Elixir.Hot");
}

static void dist_api_fetches_object_code(void)
{
	struct ts_beam n;
	ts_beam_start(&n, TS_BEAM_ERL_SHORT, NULL, NULL);
	struct dist_options o = {n.name, n.cookie, 10000};
	struct dist_conn *c = NULL;
	TH_ASSERT_OK(dist_connect(&o, &c));
	TH_ASSERT_STR_EQ(dist_node(c), n.name);
	TH_ASSERT_STR_EQ(dist_otp_release(c), "25");
	unsigned char *code = NULL;
	size_t len = 0;
	char *file = NULL;
	TH_ASSERT_OK(dist_object_code_fetch(c, "lists", &code, &len, &file));
	TH_ASSERT(len > 1000 && memcmp(code, "FOR1", 4) == 0);
	TH_ASSERT_STR_CONTAINS(file, "lists.beam");
	gi_free(code);
	gi_free(file);
	TH_ASSERT_INT_EQ(dist_object_code_fetch(c, "zz_never_an_atom_here", &code, &len, &file),
	                 GI_ENOTFOUND);
	char **mods = NULL;
	size_t count = 0;
	TH_ASSERT_OK(dist_app_modules(c, "kernel", &mods, &count));
	bool found = false;
	for (size_t i = 0; i < count; i++)
		found = found || strcmp(mods[i], "application") == 0;
	TH_ASSERT(found);
	dist_strings_free(mods, count);
	TH_ASSERT_INT_EQ(dist_app_modules(c, "zz_no_app_like_this", &mods, &count), GI_ENOTFOUND);
	dist_close(c);
	char *r = ts_beam_eval(&n, "catch list_to_existing_atom(\"zz_never_an_atom_here\").");
	TH_ASSERT(r && strstr(r, "EXIT"));
	free(r);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(pulse_elixir_long_name),
	    TH_TEST(pulse_erlang_short_name),
	    TH_TEST(top_and_pulse_cli_plain_erlang),
	    TH_TEST(trace_counts_local_calls),
	    TH_TEST(connection_errors),
	    TH_TEST(session_runs_and_stops_clean),
	    TH_TEST(module_named_twice_is_traced_once),
	    TH_TEST(session_without_sampler),
	    TH_TEST(session_survives_freeze),
	    TH_TEST(session_interrupted_when_node_dies),
	    TH_TEST(target_cleans_up_after_observer_is_killed),
	    TH_TEST(target_cleans_up_when_observer_freezes),
	    TH_TEST(dist_api_fetches_object_code),
	    TH_END,
	};
	return th_main(argc, argv, "integration_observe", tests);
}
