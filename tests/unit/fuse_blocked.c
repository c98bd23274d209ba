/*
 * Unit tests for the profile's blocked callers (executing.blocked): where the
 * sampled callers waited for a call's reply, the part in synchronous log
 * calls, the project's log call sites, what the logger rule says of the
 * remedies with those numbers, and the comparison's verdict. Synthetic
 * snapshot series (fuse_series.h), no graph: the project is what the target
 * said lives outside OTP and Elixir (origin "other").
 * needs:
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "fuse/fuse.h"
#include "fuse/fuse_int.h"
#include "fuse_series.h"
#include "harness.h"
#include "terminal.h"
#include "json_util.h"

struct blocked_arg {
	double log_blocked; /* samples blocked in a log call per snapshot */
	double logger_reductions;
};

static void add_stack(json_t *stacks, const char *const *frames, double samples, double reds)
{
	json_t *f = json_array();
	for (const char *const *x = frames; *x; x++)
		json_array_append_new(f, json_string(*x));
	json_t *o = json_pack("{s:o, s:f}", "frames", f, "samples", samples);
	if (reds >= 0)
		json_object_set_new(o, "reductions", json_real(reds));
	json_array_append_new(stacks, o);
}

static void blocked_tweak(json_t *s, long seq, void *arg)
{
	(void)seq;
	struct blocked_arg *a = arg;
	series_add_process(s, "reductions", "<0.70.0>", NULL, NULL, "App.Web", 50000, 1e5, 0);
	series_add_process(s, "reductions", "<0.80.0>", "Elixir.Logger", ":gen_event.init_it/6",
	                   "Logger", a->logger_reductions, 1e5, 0);
	json_t *stacks = json_array(), *blocked = json_array();
	static const char *const calc[] = {"App.Calc.run/1", ":proc_lib.init_p_do_apply/3", NULL};
	static const char *const logging[] = {":logger.macro_log/5", "Logger.__do_log__/4",
	                                      "App.Shop.checkout/2", NULL};
	static const char *const wait_log[] = {
	    ":gen.do_call/4",       ":gen_event.rpc/2",
	    "Logger.Handler.log/2", ":logger_backend.call_handlers/3",
	    "App.Shop.checkout/2",  NULL};
	static const char *const wait_cart[] = {":gen.do_call/4", "GenServer.call/3",
	                                        "App.Cart.add/2", NULL};
	/* An application module whose name merely contains "Logger". */
	static const char *const wait_audit[] = {":gen.do_call/4", "GenServer.call/3",
	                                         "App.AuditLogger.write/1", "App.Cart.add/2", NULL};
	add_stack(stacks, calc, 80, 80000);
	add_stack(stacks, logging, 10, 10000);
	if (a->log_blocked > 0)
		add_stack(blocked, wait_log, a->log_blocked, -1);
	add_stack(blocked, wait_cart, 30, -1);
	add_stack(blocked, wait_audit, 4, -1);
	json_t *origins = json_array();
	static const char *const other[] = {"App.Calc", "App.Shop", "App.Cart", "App.AuditLogger",
	                                    NULL};
	for (size_t i = 0; other[i]; i++)
		json_array_append_new(
		    origins, json_pack("{s:s, s:s}", "module", other[i], "origin", "other"));
	json_array_append_new(
	    origins, json_pack("{s:s, s:s}", "module", "Logger.Handler", "origin", "elixir"));
	json_object_set_new(s, "executing",
	                    json_pack("{s:i, s:i, s:i, s:{s:i, s:f}, s:f, s:o, s:o, s:o}",
	                              "period_ms", 10, "ticks", 100, "candidates", 10, "samples",
	                              "running", 90, "waiting", 34 + a->log_blocked,
	                              "reductions_sampled", 90000.0, "stacks", stacks, "blocked",
	                              blocked, "origins", origins));
}

static json_t *build(struct blocked_arg *a)
{
	json_t *fin = series_finalize("complete", 10, NULL);
	json_t *snaps = series_make(10, blocked_tweak, a);
	json_t *p = NULL;
	TH_ASSERT_OK(fuse_profile_build(fin, snaps, NULL, NULL, &p));
	json_decref(fin);
	json_decref(snaps);
	return p;
}

static json_t *path(json_t *o, const char *a, const char *b)
{
	return json_object_get(json_object_get(o, a), b);
}

static double num(json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

static json_t *site(json_t *list, const char *function)
{
	for (size_t i = 0; i < json_array_size(list); i++) {
		const char *f =
		    json_string_value(json_object_get(json_array_get(list, i), "function"));
		if (f && strcmp(f, function) == 0)
			return json_array_get(list, i);
	}
	return NULL;
}

static void blocked_callers_are_measured_by_call_site(void)
{
	struct blocked_arg a = {6, 30000};
	json_t *p = build(&a);
	json_t *b = path(p, "executing", "blocked");
	TH_ASSERT(json_is_object(b));
	/* 10 snapshots of 30 + 4 + 6 blocked samples, of 130 sampled a snapshot. */
	TH_ASSERT_DBL_NEAR(num(b, "samples"), 400, 1e-9);
	TH_ASSERT_DBL_NEAR(num(b, "logger_samples"), 60, 1e-9);
	TH_ASSERT_DBL_NEAR(num(b, "logger_share_of_samples"), 6.0 / 130, 1e-4);
	TH_ASSERT_DBL_NEAR(num(b, "share_of_samples"), 40.0 / 130, 1e-4);
	TH_ASSERT_DBL_NEAR(num(b, "logger_callers_avg"), 60.0 / 1000, 1e-4);
	json_t *sites = json_object_get(b, "call_sites");
	/* Most samples first; the waits are charged to the first project frame. */
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(json_array_get(sites, 0), "function")),
	                 "App.Cart.add/2");
	TH_ASSERT_DBL_NEAR(num(site(sites, "App.Cart.add/2"), "logger_samples"), 0, 0);
	TH_ASSERT_DBL_NEAR(num(site(sites, "App.Shop.checkout/2"), "logger_samples"), 60, 1e-9);
	/* An application's "...Logger" module is not a logging framework. */
	TH_ASSERT_DBL_NEAR(num(site(sites, "App.AuditLogger.write/1"), "logger_samples"), 0, 0);
	TH_ASSERT(!fuse_module_is_logger("App.AuditLogger"));
	TH_ASSERT(!fuse_module_is_logger("LoggerJSON2"));
	TH_ASSERT(fuse_module_is_logger(":logger_std_h"));
	/* The callers' own CPU in log calls, by call site. */
	json_t *logging = json_object_get(b, "logging");
	TH_ASSERT_DBL_NEAR(num(logging, "caller_reductions"), 100000, 1e-6);
	TH_ASSERT_STR_EQ(
	    json_string_value(json_object_get(
	        json_array_get(json_object_get(logging, "call_sites"), 0), "function")),
	    "App.Shop.checkout/2");
	TH_ASSERT(site(json_object_get(logging, "call_sites"), "App.Calc.run/1") == NULL);
	/* The text report lists the call sites as a table within 80 columns. */
	struct gi_buf out;
	gi_buf_init(&out, 0);
	TH_ASSERT_OK(fuse_report_text(p, &out));
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&out), "  App.Cart.add/2 ");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&out), "in log calls");
	char line[4096];
	size_t w = ts_text_overflow(gi_buf_str(&out), 80, line, sizeof(line));
	TH_ASSERT_MSG(w == 0, "a line of %zu columns: %s", w, line);
	gi_buf_destroy(&out);
	json_decref(p);
}

static void logger_advice_says_what_each_remedy_changes(void)
{
	struct blocked_arg a = {6, 30000};
	json_t *p = build(&a);
	json_t *r = ts_rec_find(p, 2, NULL);
	TH_ASSERT(r != NULL);
	TH_ASSERT_DBL_NEAR(ts_rec_ev(r, "blocked_in_log_calls_share"), 6.0 / 130, 1e-4);
	TH_ASSERT_DBL_NEAR(ts_rec_ev(r, "blocked_in_other_calls_share"), 34.0 / 130, 1e-4);
	const char *advice = json_string_value(json_object_get(r, "advice"));
	TH_ASSERT_STR_CONTAINS(advice, "removes only the callers' waiting for the logger, measured "
	                               "here at 4.6% of the sampled time");
	TH_ASSERT_STR_CONTAINS(advice, "it does not change the logger's own work");
	TH_ASSERT_STR_CONTAINS(advice, "Raising the level");
	TH_ASSERT_STR_CONTAINS(advice, "App.Shop.checkout/2");
	TH_ASSERT(strstr(advice, "will change little") == NULL);
	TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(r, "finding")),
	                       "callers blocked in log calls 4.6% of the sampled time");
	json_decref(p);
	/* No caller waits on the logger: async mode would change little. */
	a.log_blocked = 0;
	p = build(&a);
	r = ts_rec_find(p, 2, NULL);
	TH_ASSERT(r != NULL);
	TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(r, "advice")),
	                       "will change little on this node");
	json_decref(p);
}

static void compare_gives_a_verdict(void)
{
	struct blocked_arg a = {6, 30000};
	json_t *before = build(&a);
	a.log_blocked = 0;
	json_t *after = build(&a);
	json_t *c = NULL;
	TH_ASSERT_OK(fuse_compare(before, after, &c));
	json_t *v = json_object_get(c, "verdict");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(v, "verdict")), "better");
	TH_ASSERT(ts_json_find(path(c, "recommendations", "remaining"), "id", "logger-bottleneck"));
	struct gi_buf out;
	gi_buf_init(&out, 0);
	TH_ASSERT_OK(fuse_compare_text(c, &out));
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&out), "blocked in log calls");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&out), "logger share");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&out), "Verdict: better: blocked in log calls down");
	gi_buf_destroy(&out);
	json_decref(c);
	/* The same profile twice: nothing moved. */
	TH_ASSERT_OK(fuse_compare(after, after, &c));
	TH_ASSERT_STR_EQ(json_string_value(path(c, "verdict", "verdict")), "unchanged");
	json_decref(c);
	/* The logger's share halved and its rule resolved: better, with reasons. */
	a.logger_reductions = 2000;
	json_t *quiet = build(&a);
	TH_ASSERT_OK(fuse_compare(after, quiet, &c));
	TH_ASSERT_STR_EQ(json_string_value(path(c, "verdict", "verdict")), "better");
	TH_ASSERT(ts_json_find(path(c, "recommendations", "resolved"), "id", "logger-bottleneck"));
	json_decref(c);
	/* And back: worse. */
	TH_ASSERT_OK(fuse_compare(quiet, after, &c));
	TH_ASSERT_STR_EQ(json_string_value(path(c, "verdict", "verdict")), "worse");
	json_decref(c);
	json_decref(quiet);
	json_decref(before);
	json_decref(after);
}

int main(int argc, char **argv)
{
	/* fuse_series.h builders this suite does not need. */
	(void)series_set;
	(void)series_add_call;
	static const struct th_test tests[] = {
	    TH_TEST(blocked_callers_are_measured_by_call_site),
	    TH_TEST(logger_advice_says_what_each_remedy_changes),
	    TH_TEST(compare_gives_a_verdict),
	    TH_END,
	};
	return th_main(argc, argv, "unit_fuse_blocked", tests);
}
