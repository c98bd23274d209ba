/*
 * Integration tests of where the executing view says the work ran (issue 29
 * item 4), on real Erlang nodes with targets of their own (the kiln_*
 * modules below, compiled with erlc into the test's directory):
 * - a server whose work runs between receives (kiln_press: a registered
 *   process that grinds each job in grind/2 and goes back to its receive;
 *   and in Elixir, Forge.Anvil, a GenServer hammering each cast): the
 *   samples of its busy time put the working function first with at least
 *   80% of them, not the receive loop where a process_info signal is
 *   answered;
 * - six long-lived spawn(fun) workers folding with lists:foldl/3 and a fun
 *   that tail-calls kiln_fold:blend/2: the work lands on kiln_fold;
 * - a CPU hog in short-lived processes (kiln_batch: a process per batch,
 *   most of the node's work, each gone within a millisecond): its work
 *   lands on the function that does it, crunch/2, first among the hot
 *   functions, with kiln_batch at least half the node's work, and the
 *   profile explains most of the node's work (the sampler's newborns,
 *   docs/OBSERVE.md).
 * And no trace flag of ours is left on any process after the session.
 * needs: erlang-base erlang-dev elixir
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "base/fs.h"
#include "fuse/fuse.h"
#include "harness.h"
#include "json_util.h"
#include "node_watch.h"
#include "observe/observe.h"
#include "support.h"

#define WAIT_MS   90000
#define SNAPSHOTS 12

static const char *PRESS_SRC =
    "-module(kiln_press).\n"
    "-export([start/0, grind/2]).\n"
    "start() ->\n"
    "    P = spawn(fun loop/0), register(kiln_press, P),\n"
    "    spawn(fun() -> feed(P) end), ok.\n"
    "loop() -> receive {job, N} -> _ = grind(N, 1), loop() end.\n"
    "grind(0, A) -> A;\n"
    "grind(N, A) -> grind(N - 1, (A * 31 + N) rem 1000003).\n"
    "feed(P) -> P ! {job, 20000 + rand:uniform(40000)}, timer:sleep(2), feed(P).\n";

static const char *FOLD_SRC =
    "-module(kiln_fold).\n"
    "-export([start/0, blend/2]).\n"
    "start() -> [spawn(fun() -> work(I) end) || I <- lists:seq(1, 6)], ok.\n"
    "work(I) ->\n"
    "    _ = lists:foldl(fun(X, Acc) -> blend(X, Acc) end, I, lists:seq(1, 2000)),\n"
    "    timer:sleep(1), work(I).\n"
    "blend(X, Acc) -> stir(20, X bxor Acc).\n"
    "stir(0, A) -> A rem 65521;\n"
    "stir(N, A) -> stir(N - 1, (A * 7 + N) rem 1000003).\n";

static const char *BATCH_SRC =
    "-module(kiln_batch).\n"
    "-export([start/0, crunch/2]).\n"
    "start() -> spawn(fun dispatch/0), ok.\n"
    "dispatch() ->\n"
    "    [spawn(fun() -> crunch(6000, 1) end) || _ <- lists:seq(1, 4)],\n"
    "    timer:sleep(5), dispatch().\n"
    "crunch(0, A) -> A;\n"
    "crunch(N, A) -> crunch(N - 1, (A * 17 + N) rem 999983).\n";

static void write_source(const char *dir, const char *name, const char *src)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s.erl", dir, name);
	TH_ASSERT_OK(gi_fs_write_file(path, src, strlen(src)));
	const char *argv[] = {"erlc", "-o", dir, path, NULL};
	char *err = NULL;
	TH_ASSERT_MSG(ts_run(argv, NULL, 60000, NULL, &err) == 0, "erlc %s: %s", name,
	              err ? err : "");
	free(err);
}

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

/* Observes `n` with the sampler every 20 ms for SNAPSHOTS snapshots of 1 s;
 * returns them (caller decrefs). */
static json_t *observe(const struct ts_beam *n)
{
	struct events e = {.lock = PTHREAD_MUTEX_INITIALIZER, .snaps = json_array()};
	struct obs_callbacks cb = {on_snapshot, NULL, &e};
	struct obs_manager *m = NULL;
	TH_ASSERT_OK(obs_manager_new(&cb, &m));
	struct obs_session_config cfg = {.node = n->name,
	                                 .cookie = n->cookie,
	                                 .interval_ms = 1000,
	                                 .top_n = 10,
	                                 .sample_period_ms = 20};
	char *id = NULL;
	TH_ASSERT_OK(obs_session_start(m, &cfg, &id));
	gi_free(id);
	int64_t deadline = gi_clock_mono_ms() + WAIT_MS;
	for (;;) {
		pthread_mutex_lock(&e.lock);
		size_t have = json_array_size(e.snaps);
		pthread_mutex_unlock(&e.lock);
		if (have >= SNAPSHOTS)
			break;
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "only %zu snapshots", have);
		gi_clock_sleep_ms(100);
	}
	TH_ASSERT_OK(obs_session_stop(m, n->name));
	obs_manager_free(m);
	/* nothing of ours on any process: no tracer set on any of them */
	ts_beam_wait_answer(n,
	                    "length([P || P <- processes(), "
	                    "{tracer, T} <- [erlang:trace_info(P, tracer)], T =/= []]).",
	                    "0", WAIT_MS, "still has a trace flag of ours");
	return e.snaps;
}

/* Executing samples per first frame "Mod.fun/arity" over the snapshots
 * after the first, into `counts` (an object). */
static void first_frames(json_t *snaps, json_t *counts)
{
	for (size_t i = 1; i < json_array_size(snaps); i++) {
		json_t *ex = json_object_get(json_array_get(snaps, i), "executing");
		size_t k;
		json_t *st;
		json_array_foreach(json_object_get(ex, "stacks"), k, st)
		{
			const char *f =
			    json_string_value(json_array_get(json_object_get(st, "frames"), 0));
			if (!f)
				continue;
			double had = json_number_value(json_object_get(counts, f));
			json_object_set_new(
			    counts, f,
			    json_real(had + json_number_value(json_object_get(st, "samples"))));
		}
	}
}

/* With WHERERUN_DEBUG: each window's sampler ticks, newborn samples, tick
 * time and observer cost. */
static void debug_windows(json_t *snaps)
{
	for (size_t i = 0; i < json_array_size(snaps); i++) {
		json_t *s = json_array_get(snaps, i), *x = json_object_get(s, "executing");
		fprintf(stderr, "  %zu: ticks %.0f born %.0f tick_us %.0f cost %.4f\n", i,
		        json_number_value(json_object_get(x, "ticks")),
		        json_number_value(json_object_get(x, "born")),
		        json_number_value(json_object_get(x, "tick_us")),
		        json_number_value(json_object_get(json_object_get(s, "observer"), "cost")));
	}
}

static double count_of(json_t *counts, const char *prefix)
{
	double n = 0;
	const char *k;
	json_t *v;
	json_object_foreach(counts, k, v)
	{
		if (strncmp(k, prefix, strlen(prefix)) == 0)
			n += json_number_value(v);
	}
	return n;
}

static void start_node(struct ts_beam *n, const char *module)
{
	const char *dir = th_tmpdir();
	write_source(dir, module,
	             strcmp(module, "kiln_press") == 0  ? PRESS_SRC
	             : strcmp(module, "kiln_fold") == 0 ? FOLD_SRC
	                                                : BATCH_SRC);
	const char *extra[] = {"-pa", dir, NULL};
	char eval[128];
	snprintf(eval, sizeof(eval), "%s:start()", module);
	ts_beam_start(n, TS_BEAM_ERL_LONG, eval, extra);
	char check[128];
	snprintf(check, sizeof(check), "erlang:module_loaded(%s).", module);
	ts_beam_wait_answer(n, check, "true", WAIT_MS, "never loaded its target");
}

static void server_busy_between_receives(void)
{
	struct ts_beam n;
	start_node(&n, "kiln_press");
	json_t *snaps = observe(&n);
	json_t *counts = json_object();
	first_frames(snaps, counts);
	double grind = count_of(counts, ":kiln_press.grind/2");
	double loop = count_of(counts, ":kiln_press.-") + count_of(counts, ":kiln_press.loop/0");
	char *text = json_dumps(counts, JSON_COMPACT);
	fprintf(stderr, "  first frames: %s\n", text);
	if (getenv("WHERERUN_DEBUG")) {
		json_t *last = json_array_get(snaps, 4);
		char *o = json_dumps(json_object_get(last, "observer"), JSON_COMPACT);
		json_t *ex = json_object_get(last, "executing");
		fprintf(stderr, "  observer %s\n  ticks %.0f located %.0f samples %s\n", o,
		        json_number_value(json_object_get(ex, "ticks")),
		        json_number_value(json_object_get(ex, "located")),
		        json_dumps(json_object_get(ex, "samples"), JSON_COMPACT));
		free(o);
	}
	TH_ASSERT_MSG(grind + loop > 0, "no busy sample of the press: %s", text);
	TH_ASSERT_MSG(grind >= 0.8 * (grind + loop), "grind/2 %.0f of %.0f busy samples: %s", grind,
	              grind + loop, text);
	/* and the profile names it first among the hot functions */
	json_t *p = NULL;
	TH_ASSERT_OK(fuse_profile_build(NULL, snaps, NULL, NULL, &p));
	json_t *hf = json_array_get(json_object_get(p, "hot_functions"), 0);
	TH_ASSERT_MSG(hf &&
	                  strcmp(json_string_value(json_object_get(hf, "function")), "grind") == 0,
	              "hottest function: %s", text);
	free(text);
	json_decref(p);
	json_decref(counts);
	json_decref(snaps);
}

/* The same in Elixir, through a GenServer: the work of each cast runs in
 * Forge.Anvil.hammer/2 between the server loop's receives. */
static const char *ANVIL_EVAL =
    "defmodule Forge.Anvil do\n"
    "  use GenServer\n"
    "  def init(n), do: {:ok, n}\n"
    "  def handle_cast({:strike, k}, n), do: {:noreply, n + hammer(k, 1)}\n"
    "  def hammer(0, a), do: a\n"
    "  def hammer(k, a), do: hammer(k - 1, rem(a * 29 + k, 1_000_003))\n"
    "end\n"
    "{:ok, pid} = GenServer.start(Forge.Anvil, 0, name: Forge.Anvil)\n"
    "spawn(fn -> Stream.repeatedly(fn -> GenServer.cast(pid, {:strike, 20_000 + "
    ":rand.uniform(40_000)}); Process.sleep(2) end) |> Stream.run() end)\n";

static void genserver_busy_between_receives(void)
{
	struct ts_beam n;
	ts_beam_start(&n, TS_BEAM_ELIXIR_LONG, ANVIL_EVAL, NULL);
	ts_beam_wait_answer(&n, "is_pid(whereis('Elixir.Forge.Anvil')).", "true", WAIT_MS,
	                    "never ran its start code");
	json_t *snaps = observe(&n);
	json_t *counts = json_object();
	first_frames(snaps, counts);
	double hammer = count_of(counts, "Forge.Anvil.hammer/2");
	double loop =
	    count_of(counts, ":gen_server.") + count_of(counts, "Forge.Anvil.handle_cast");
	char *text = json_dumps(counts, JSON_COMPACT);
	fprintf(stderr, "  first frames: %.600s\n", text);
	TH_ASSERT_MSG(hammer + loop > 0, "no busy sample of the server: %s", text);
	TH_ASSERT_MSG(hammer >= 0.8 * (hammer + loop), "hammer/2 %.0f of %.0f busy samples: %s",
	              hammer, hammer + loop, text);
	free(text);
	json_decref(counts);
	json_decref(snaps);
}

static void fun_through_foldl_lands_on_its_module(void)
{
	struct ts_beam n;
	start_node(&n, "kiln_fold");
	json_t *snaps = observe(&n);
	json_t *p = NULL;
	TH_ASSERT_OK(fuse_profile_build(NULL, snaps, NULL, NULL, &p));
	char *text = json_dumps(json_object_get(p, "hot_modules"), JSON_COMPACT);
	fprintf(stderr, "  hot modules: %.600s\n", text);
	if (getenv("WHERERUN_DEBUG"))
		debug_windows(snaps);
	json_t *top = json_array_get(json_object_get(p, "hot_modules"), 0);
	TH_ASSERT_MSG(
	    top && strcmp(json_string_value(json_object_get(top, "module")), ":kiln_fold") == 0,
	    "hot modules: %s", text);
	TH_ASSERT_MSG(json_number_value(json_object_get(top, "reductions_share")) >= 0.5,
	              "kiln_fold's share: %s", text);
	free(text);
	json_decref(p);
	json_decref(snaps);
}

static void short_lived_hog_attributed_to_its_function(void)
{
	struct ts_beam n;
	start_node(&n, "kiln_batch");
	json_t *snaps = observe(&n);
	json_t *p = NULL;
	TH_ASSERT_OK(fuse_profile_build(NULL, snaps, NULL, NULL, &p));
	json_t *hm = json_object_get(p, "hot_modules");
	json_t *batch = ts_json_find(hm, "module", ":kiln_batch");
	double share = batch ? json_number_value(json_object_get(batch, "reductions_share")) : 0;
	json_t *ex = json_object_get(p, "explained");
	char *text = json_dumps(ex, JSON_COMPACT);
	char *fns = json_dumps(json_object_get(p, "hot_functions"), JSON_COMPACT);
	json_t *obs = json_object_get(p, "observer");
	double born = 0;
	for (size_t i = 1; i < json_array_size(snaps); i++)
		born += json_number_value(json_object_get(
		    json_object_get(json_array_get(snaps, i), "executing"), "born"));
	fprintf(stderr,
	        "  kiln_batch share %.2f, explained %s\n  hot functions %.600s\n  newborn samples "
	        "%.0f; observer %.4f of a core (budget %.3f)\n",
	        share, text, fns, born, json_number_value(json_object_get(obs, "cost")),
	        json_number_value(json_object_get(obs, "budget")));
	if (getenv("WHERERUN_DEBUG")) {
		char *o = json_dumps(obs, JSON_COMPACT);
		fprintf(stderr, "  observer %s\n", o);
		free(o);
		debug_windows(snaps);
	}
	TH_ASSERT(born > 0);
	/* the work lands on the function that does it */
	json_t *hf = json_array_get(json_object_get(p, "hot_functions"), 0);
	const char *first = hf ? json_string_value(json_object_get(hf, "module")) : NULL;
	TH_ASSERT_MSG(first && strcmp(first, ":kiln_batch") == 0 &&
	                  strcmp(json_string_value(json_object_get(hf, "function")), "crunch") == 0,
	              "hottest function: %.600s", fns);
	TH_ASSERT_MSG(share >= 0.5, "kiln_batch at %.2f: %s", share, text);
	/* and the profile does not call the node's work unattributed */
	TH_ASSERT_MSG(!json_is_true(json_object_get(ex, "low")), "explained: %s", text);
	free(fns);
	free(text);
	json_decref(p);
	json_decref(snaps);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(server_busy_between_receives),
	    TH_TEST(genserver_busy_between_receives),
	    TH_TEST(fun_through_foldl_lands_on_its_module),
	    TH_TEST(short_lived_hog_attributed_to_its_function),
	    TH_END,
	};
	return th_main(argc, argv, "integration_whererun", tests);
}
