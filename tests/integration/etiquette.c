/*
 * Integration tests of tracing etiquette on real nodes: another tool's trace
 * patterns and process tracers on the functions Giulia counts are reported
 * (trace.foreign) and shared, a module another tool already counts with
 * call_count is refused with an error naming it, and after stop the other
 * tool's patterns, flags and tracer are exactly as they were. dbg stands for
 * the tools that work like it (recon_trace is not packaged here; it sets the
 * same kinds of patterns and flags). Waits poll with generous deadlines; no
 * assertion is on time.
 * needs: erlang-base erlang-runtime-tools elixir
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "harness.h"
#include "node_watch.h"
#include "observe/observe.h"
#include "support.h"

#define WAIT_MS 60000

/* Shared is called a hundred times a second by one process. */
#define SHARED_EVAL                                                                 \
	"defmodule Shared do\n"                                                     \
	"  def f(n), do: n + 1\n"                                                   \
	"  def loop(n), do: (Process.sleep(10); loop(f(n)))\n"                      \
	"end\n"                                                                     \
	"defmodule Counted do\n"                                                    \
	"  def g(n), do: n + 1\n"                                                   \
	"  def loop(n), do: (Process.sleep(10); loop(g(n)))\n"                      \
	"end\n"                                                                     \
	"spawn(fn -> Process.register(self(), :shared_loop); Shared.loop(0) end)\n" \
	"spawn(fn -> Process.register(self(), :counted_loop); Counted.loop(0) end)\n"

/* dbg as an operator uses it (a silent handler instead of printing), held
 * by a long-lived process so that dbg outlives the start code. */
static const char *DBG_EVAL =
    SHARED_EVAL "spawn(fn ->\n"
                "  {:ok, _} = :dbg.tracer(:process, {fn _msg, n -> n + 1 end, 0})\n"
                "  {:ok, _} = :dbg.tpl(Shared, [])\n"
                "  {:ok, _} = :dbg.p(:all, :c)\n"
                "  Process.register(self(), :other_tool)\n"
                "  receive do :never -> :ok end\n"
                "end)\n";

/* Another tool's plain local call trace on Shared (no tracer process:
 * nothing receives, the patterns are what counts here) and its own
 * call_count on Counted. */
static const char *PLAIN_EVAL =
    SHARED_EVAL ":erlang.trace_pattern({Shared, :_, :_}, true, [:local])\n"
                ":erlang.trace_pattern({Counted, :_, :_}, true, [:call_count])\n"
                "Process.register(spawn(fn -> receive do :never -> :ok end end), :other_tool)\n";

/* What the other tool holds, as a term printed by the node: the patterns
 * of a function of each module (call_count of Counted as set or not, its
 * value moves), the loop process's flags and tracer, new processes' flags
 * and tracer. */
static const char *STATE_EXPR =
    "P = whereis(shared_loop), "
    "{erlang:trace_info({'Elixir.Shared', f, 1}, all), "
    "erlang:trace_info({'Elixir.Counted', g, 1}, traced), "
    "element(2, erlang:trace_info({'Elixir.Counted', g, 1}, call_count)) =/= false, "
    "erlang:trace_info(P, flags), erlang:trace_info(P, tracer), "
    "erlang:trace_info(new, flags), erlang:trace_info(new, tracer)}.";

static const char *OURS_EXPR = TS_OURS_EXPR "length(Ours).";

struct events {
	pthread_mutex_t lock;
	json_t *snaps;
};

static void on_snapshot(void *ctx, const char *id, json_t *snap)
{
	struct events *e = ctx;
	(void)id;
	pthread_mutex_lock(&e->lock);
	json_array_append(e->snaps, snap);
	pthread_mutex_unlock(&e->lock);
}

/* The n-th snapshot (waits for it), borrowed from e->snaps. */
static json_t *snapshot_at(struct events *e, size_t n)
{
	int64_t deadline = gi_clock_mono_ms() + WAIT_MS;
	for (;;) {
		pthread_mutex_lock(&e->lock);
		json_t *s = json_array_get(e->snaps, n);
		pthread_mutex_unlock(&e->lock);
		if (s)
			return s;
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "no snapshot %zu", n);
		gi_clock_sleep_ms(50);
	}
}

static bool has_call(json_t *snap, const char *module)
{
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(json_object_get(snap, "trace"), "calls"), i, c)
	{
		if (strcmp(json_string_value(json_object_get(c, "module")), module) == 0 &&
		    json_integer_value(json_object_get(c, "count")) > 0)
			return true;
	}
	return false;
}

/* Observes Shared and Counted on `n` (started with `eval`) for three
 * snapshots; returns the third. `state_before` gets the other tool's state. */
static json_t *observe_three(struct ts_beam *n, const char *eval, double overhead, struct events *e,
                             char **state_before)
{
	ts_beam_start(n, TS_BEAM_ELIXIR_LONG, eval, NULL);
	ts_beam_wait_answer(n, "is_pid(whereis(other_tool)).", "true", WAIT_MS,
	                    "never ran its start code");
	*state_before = ts_beam_eval(n, STATE_EXPR);
	TH_ASSERT(*state_before != NULL);
	struct obs_callbacks cb = {on_snapshot, NULL, e};
	struct obs_manager *m = NULL;
	TH_ASSERT_OK(obs_manager_new(&cb, &m));
	const char *mods[] = {"Shared", "Counted", NULL};
	struct obs_session_config cfg = {.node = n->name,
	                                 .cookie = n->cookie,
	                                 .interval_ms = 500,
	                                 .top_n = 5,
	                                 .trace_modules = mods,
	                                 .overhead = overhead,
	                                 .pause_above = 1.0};
	char *id = NULL;
	TH_ASSERT_OK(obs_session_start(m, &cfg, &id));
	gi_free(id);
	json_t *snap = json_incref(snapshot_at(e, 2));
	TH_ASSERT_OK(obs_session_stop(m, n->name));
	obs_manager_free(m);
	return snap;
}

/* After stop: nothing of ours on the node, the other tool's state as it was. */
static void other_tool_untouched(struct ts_beam *n, const char *before)
{
	ts_beam_wait_answer(n, OURS_EXPR, "0", WAIT_MS, "still has our processes");
	char *after = ts_beam_eval(n, STATE_EXPR);
	TH_ASSERT(after != NULL);
	TH_ASSERT_STR_EQ(after, before);
	free(after);
}

static void dbg_tracing_is_shared_and_left_as_it_was(void)
{
	struct ts_beam n;
	struct events e = {.lock = PTHREAD_MUTEX_INITIALIZER, .snaps = json_array()};
	char *before = NULL;
	json_t *snap = observe_three(&n, DBG_EVAL, 0, &e, &before);
	/* dbg really holds them */
	TH_ASSERT_STR_CONTAINS(before, "{traced, local}");
	TH_ASSERT_STR_CONTAINS(before, "{flags, [call]}");
	char *foreign = json_dumps(json_object_get(json_object_get(snap, "trace"), "foreign"), 0);
	TH_ASSERT_STR_CONTAINS(foreign, "Shared: call trace patterns (local) set by another tool");
	TH_ASSERT_STR_CONTAINS(foreign, "traced by <");
	TH_ASSERT_STR_CONTAINS(foreign, "(in dbg:");
	TH_ASSERT_STR_CONTAINS(foreign, "new processes are traced by");
	/* shared: both modules counted (dbg holds no call_count) */
	TH_ASSERT(has_call(snap, "Shared"));
	TH_ASSERT(has_call(snap, "Counted"));
	other_tool_untouched(&n, before);
	free(foreign);
	free(before);
	json_decref(snap);
	json_decref(e.snaps);
}

static void plain_patterns_are_shared_and_call_count_refused(void)
{
	struct ts_beam n;
	struct events e = {.lock = PTHREAD_MUTEX_INITIALIZER, .snaps = json_array()};
	char *before = NULL;
	/* under a budget: our patterns are set and cleared every cycle */
	json_t *snap = observe_three(&n, PLAIN_EVAL, 0.05, &e, &before);
	TH_ASSERT_STR_CONTAINS(before, "{traced, local}");
	char *foreign = json_dumps(json_object_get(json_object_get(snap, "trace"), "foreign"), 0);
	TH_ASSERT_STR_CONTAINS(foreign, "Shared: call trace patterns (local) set by another tool");
	char *errors = json_dumps(json_object_get(snap, "errors"), 0);
	TH_ASSERT_STR_CONTAINS(
	    errors, "module Counted already has call_count patterns set by another tool");
	/* Counted is not ours to count; Shared is */
	TH_ASSERT(!has_call(snap, "Counted"));
	TH_ASSERT(has_call(snap, "Shared"));
	other_tool_untouched(&n, before);
	free(errors);
	free(foreign);
	free(before);
	json_decref(snap);
	json_decref(e.snaps);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(dbg_tracing_is_shared_and_left_as_it_was),
	    TH_TEST(plain_patterns_are_shared_and_call_count_refused),
	    TH_END,
	};
	return th_main(argc, argv, "integration_etiquette", tests);
}
