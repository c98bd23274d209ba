/*
 * targets.c - the test targets of tests/fixtures/targets behave as their
 * READMEs promise, so that the profile tests (issue 6) can rely on them:
 * catalog's busy mode runs a read-mostly load through its data layer with a
 * hot Logger, and its quiet mode does nothing at all; tariffs and fleet
 * (issue 12's generality targets) run their read-mostly loads.
 * needs: erlang-base tests/fixtures/targets/build.sh
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "harness.h"
#include "product.h"
#include "support.h"

/* Compiles a target into the test's directory; returns the ebin path. */
static const char *target_build(const char *name)
{
	TH_NEED(th_have_otp_app("p1_sqlite3"), "erlang-p1-sqlite3",
	        "no :sqlite3, which the test targets use");
	return ts_target_build(name);
}

/* Catalog.stats() as {reads, writes}. */
static void catalog_stats(const struct ts_beam *n, long long *reads, long long *writes)
{
	char *r = ts_beam_eval(n, "#{reads := R, writes := W} = 'Elixir.Catalog':stats(), {R, W}.");
	TH_ASSERT_MSG(r, "Catalog.stats() did not answer");
	TH_ASSERT_MSG(sscanf(r, "{ok, {%lld, %lld}}", reads, writes) == 2, "stats: %s", r);
	free(r);
}

/* Waits until Catalog.start() has run on the node: `elixir -e` evaluates it
 * after the node answers, so its counters may not exist yet when
 * ts_beam_start returns. */
static void catalog_wait_started(const struct ts_beam *n)
{
	char last[512] = "";
	int64_t deadline = gi_clock_mono_ms() + 60000;
	while (gi_clock_mono_ms() < deadline) {
		char *r = ts_beam_eval(
		    n, "persistent_term:get({'Elixir.Catalog', ops}, undefined) =/= undefined.");
		bool started = r && strstr(r, "true") != NULL;
		snprintf(last, sizeof(last), "%s", r ? r : "(no answer)");
		free(r);
		if (started)
			return;
		gi_clock_sleep_ms(100);
	}
	th_fail(__FILE__, __LINE__, "Catalog.start() did not run: %s", last);
}

static void catalog_busy_is_read_mostly_with_a_hot_logger(void)
{
	const char *ebin = target_build("catalog");
	const char *extra[] = {"-pa", ebin, NULL};
	struct ts_beam n;
	ts_beam_start(&n, TS_BEAM_ELIXIR_LONG, "Catalog.start()", extra);
	catalog_wait_started(&n);

	long long reads = 0, writes = 0;
	int64_t deadline = gi_clock_mono_ms() + 60000;
	while ((reads < 2000 || writes < 20) && gi_clock_mono_ms() < deadline) {
		gi_clock_sleep_ms(200);
		catalog_stats(&n, &reads, &writes);
	}
	TH_ASSERT_INT_GE(reads, 2000);
	TH_ASSERT_INT_GE(writes, 20);
	TH_ASSERT_MSG(reads > 5 * writes, "not read-mostly: %lld reads, %lld writes", reads,
	              writes);

	/* Every registry operation goes through the data layer's pipeline. */
	char *r = ts_beam_eval(
	    &n, "erlang:trace_pattern({'Elixir.Catalog.Store', '_', '_'}, true, [call_count]), "
	        "timer:sleep(1000), "
	        "erlang:trace_pattern({'Elixir.Catalog.Store', '_', '_'}, pause, [call_count]), "
	        "{call_count, P} = erlang:trace_info({'Elixir.Catalog.Store', prepare_opts, 2}, "
	        "call_count), "
	        "{call_count, Q} = erlang:trace_info({'Elixir.Catalog.Store', prepare_query, 3}, "
	        "call_count), "
	        "erlang:trace_pattern({'Elixir.Catalog.Store', '_', '_'}, false, [call_count]), "
	        "{P, Q}.");
	long long prepare_opts = 0, prepare_query = 0;
	TH_ASSERT_MSG(r && sscanf(r, "{ok, {%lld, %lld}}", &prepare_opts, &prepare_query) == 2,
	              "trace: %s", r ? r : "(no answer)");
	free(r);
	TH_ASSERT_INT_GE(prepare_opts, 100);
	TH_ASSERT_INT_GE(prepare_query, 100);

	/* The Logger gen_event is among the three busiest processes. */
	r = ts_beam_eval(&n, "L = whereis('Elixir.Logger'), "
	                     "Top = lists:sublist(lists:reverse(lists:sort("
	                     "[{R, P} || P <- erlang:processes(), "
	                     "{reductions, R} <- [erlang:process_info(P, reductions)]])), 3), "
	                     "lists:keymember(L, 2, Top).");
	TH_ASSERT_STR_CONTAINS(r, "true");
	free(r);
}

static void catalog_quiet_does_nothing(void)
{
	const char *ebin = target_build("catalog");
	const char *extra[] = {"-pa", ebin, NULL};
	struct ts_beam n;
	ts_beam_start(&n, TS_BEAM_ELIXIR_LONG, "Catalog.start(:quiet)", extra);
	catalog_wait_started(&n);
	long long reads = -1, writes = -1;
	gi_clock_sleep_ms(2000);
	catalog_stats(&n, &reads, &writes);
	TH_ASSERT_INT_EQ(reads, 0);
	TH_ASSERT_INT_EQ(writes, 0);
	char *r = ts_beam_eval(&n, "whereis('Elixir.Catalog.WorkerPool').");
	TH_ASSERT_STR_CONTAINS(r, "undefined");
	free(r);
	r = ts_beam_eval(&n, "'Elixir.Logger':level().");
	TH_ASSERT_STR_CONTAINS(r, "error");
	free(r);
}

/* Polls `expr` (Erlang, `{Reads, Writes}` once the target runs) until
 * `reads` are done; returns the pair. */
static void counts_after(const struct ts_beam *n, const char *expr, long long reads, long long *r,
                         long long *w)
{
	char last[512] = "";
	int64_t deadline = gi_clock_mono_ms() + 60000;
	*r = *w = 0;
	while (gi_clock_mono_ms() < deadline) {
		char *out = ts_beam_eval(n, expr);
		snprintf(last, sizeof(last), "%s", out ? out : "(no answer)");
		bool got = out && sscanf(out, "{ok, {%lld, %lld}}", r, w) == 2;
		free(out);
		if (got && *r >= reads)
			return;
		gi_clock_sleep_ms(200);
	}
	th_fail(__FILE__, __LINE__, "the target did not do %lld reads: %s", reads, last);
}

/* tariffs: quotes read the rate book on every call, about 88% of requests,
 * a few hundred per second (its README). */
static void tariffs_is_read_mostly_at_hundreds_per_second(void)
{
	const char *ebin = target_build("tariffs");
	const char *extra[] = {"-pa", ebin, NULL};
	struct ts_beam n;
	ts_beam_start(&n, TS_BEAM_ELIXIR_LONG, "Tariffs.start()", extra);
	long long q0, p0, q1, p1;
	counts_after(&n, "catch 'Elixir.Tariffs':counts().", 1, &q0, &p0);
	int64_t t0 = gi_clock_mono_ms();
	counts_after(&n, "catch 'Elixir.Tariffs':counts().", q0 + 1500, &q1, &p1);
	double secs = (double)(gi_clock_mono_ms() - t0) / 1000.0;
	double reads = (double)(q1 - q0), writes = (double)(p1 - p0);
	TH_ASSERT_MSG(writes > 0 && reads / (reads + writes) > 0.8 &&
	                  reads / (reads + writes) < 0.95,
	              "quotes %g, repricings %g", reads, writes);
	TH_ASSERT_MSG((reads + writes) / secs > 100, "%g requests/s", (reads + writes) / secs);
	/* The rate book answers from SQLite: {CentsPerKg, Zone}. */
	char *r = ts_beam_eval(&n, "{C, Z} = 'Elixir.Tariffs.RateBook':rate(<<\"lane-1\">>), "
	                           "is_integer(C) andalso is_binary(Z).");
	TH_ASSERT_STR_CONTAINS(r, "true");
	free(r);
}

/* fleet: a plain Erlang node (no Elixir), lookups about 90% of requests. */
static void fleet_is_a_read_mostly_erlang_registry(void)
{
	const char *ebin = target_build("fleet");
	const char *extra[] = {"-pa", ebin, NULL};
	struct ts_beam n;
	ts_beam_start(&n, TS_BEAM_ERL_SHORT, "ok = fleet:start()", extra);
	long long l0, m0, l1, m1;
	counts_after(&n, "catch fleet:counts().", 1, &l0, &m0);
	counts_after(&n, "catch fleet:counts().", l0 + 1500, &l1, &m1);
	double reads = (double)(l1 - l0), writes = (double)(m1 - m0);
	TH_ASSERT_MSG(writes > 0 && reads / (reads + writes) > 0.85 &&
	                  reads / (reads + writes) < 0.95,
	              "lookups %g, moves %g", reads, writes);
	char *r = ts_beam_eval(&n, "code:which('Elixir.Kernel').");
	TH_ASSERT_STR_CONTAINS(r, "non_existing");
	free(r);
	r = ts_beam_eval(&n, "is_integer(fleet_registry:depot_of(1)).");
	TH_ASSERT_STR_CONTAINS(r, "true");
	free(r);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(catalog_busy_is_read_mostly_with_a_hot_logger),
	    TH_TEST(catalog_quiet_does_nothing),
	    TH_TEST(tariffs_is_read_mostly_at_hundreds_per_second),
	    TH_TEST(fleet_is_a_read_mostly_erlang_registry),
	    TH_END,
	};
	return th_main(argc, argv, "e2e_targets", tests);
}
