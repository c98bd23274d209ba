/*
 * targets.c - the test targets of tests/fixtures/targets behave as their
 * READMEs promise, so that the profile tests (issue 6) can rely on them:
 * catalog's busy mode runs a read-mostly load through its data layer with a
 * hot Logger, and its quiet mode does nothing at all.
 * needs: erlang-base tests/fixtures/targets/build.sh
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "harness.h"
#include "support.h"

/* Compiles a target into the test's directory; returns the ebin path. */
static const char *target_build(const char *name)
{
	TH_NEED(th_have_otp_app("p1_sqlite3"), "erlang-p1-sqlite3",
	        "no :sqlite3, which the test targets use");
	static char ebin[4096];
	char script[4096];
	snprintf(ebin, sizeof(ebin), "%s/%s-ebin", th_tmpdir(), name);
	snprintf(script, sizeof(script), "%s/tests/fixtures/targets/build.sh", th_srcdir());
	const char *argv[] = {script, name, ebin, NULL};
	char *err = NULL;
	int rc = ts_run(argv, NULL, 300000, NULL, &err);
	TH_ASSERT_MSG(rc == 0, "build.sh %s failed (%d): %.2000s", name, rc, err ? err : "");
	free(err);
	return ebin;
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

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(catalog_busy_is_read_mostly_with_a_hot_logger),
	    TH_TEST(catalog_quiet_does_nothing),
	    TH_END,
	};
	return th_main(argc, argv, "e2e_targets", tests);
}
