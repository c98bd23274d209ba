/*
 * End-to-end tests of the executing view (issue 12, "where the time goes"):
 * the almanac target of tests/fixtures/targets spends its CPU in untraced
 * pure computation (Almanac.Orbits from Task.Supervisor tasks, Almanac.Sieve
 * in a process started with plain spawn(fn)), started by a GenServer
 * (Almanac.Planner) that does almost nothing itself. Observed through the
 * real daemons (`giulia serve`, `giulia-observe start/stop`), with and
 * without the project's source indexed, the profile must say what a senior
 * engineer would: the computation functions are hot with a substantial
 * share; no hot list and no recommendation names process plumbing; nothing
 * says the planner is hot. After stop the node carries nothing of ours.
 * needs: erlang-base elixir tests/fixtures/targets/build.sh
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "harness.h"
#include "json_util.h"
#include "node_watch.h"
#include "product.h"
#include "support.h"

#define SNAPSHOTS_WANTED 8
#define WAIT_MS          120000

/* Waits until both kinds of work have run on the node at least once. */
static void wait_working(const struct ts_beam *node)
{
	char last[512] = "";
	int64_t deadline = gi_clock_mono_ms() + WAIT_MS;
	while (gi_clock_mono_ms() < deadline) {
		char *out =
		    ts_beam_eval(node, "#{propagations := P, sieves := S} = "
		                       "'Elixir.Almanac':progress(), P >= 1 andalso S >= 1.");
		bool ok = out && strstr(out, "true");
		snprintf(last, sizeof(last), "%s", out ? out : "(erl_call failed)");
		free(out);
		if (ok)
			return;
		usleep(200 * 1000);
	}
	th_fail(__FILE__, __LINE__, "the almanac target did not start working: %s", last);
}

/* Nothing of ours on the node: no session or guardian process, no process
 * with trace flags, scheduler_wall_time off. */
static bool node_is_clean(const struct ts_beam *n)
{
	char *r = ts_beam_eval(
	    n, TS_OURS_EXPR
	    "Flagged = [P || P <- processes(), {flags, F} <- [erlang:trace_info(P, flags)], "
	    "F =/= []], "
	    "{length(Ours), length(Flagged), erlang:statistics(scheduler_wall_time)}.");
	bool clean = r && strstr(r, "{0, 0, undefined}");
	if (!clean)
		fprintf(stderr, "node state: %s\n", r ? r : "(no answer)");
	free(r);
	return clean;
}

static bool is_plumbing_name(const char *s)
{
	static const char *const names[] = {
	    ":erlang",         ":proc_lib",   ":erl_eval", ":elixir_compiler_",
	    "Task.Supervised", ":gen_server", NULL};
	for (size_t i = 0; s && names[i]; i++)
		if (strstr(s, names[i]))
			return true;
	return false;
}

/* The share of `module`'s entry in the profile's hot modules (0 if absent). */
static double hot_share(json_t *p, const char *module)
{
	json_t *m = ts_json_find(json_object_get(p, "hot_modules"), "module", module);
	return m ? json_number_value(json_object_get(m, "reductions_share")) : 0;
}

/* What a senior engineer concludes from the almanac's profile `p`. */
static void check_almanac_profile(json_t *p, const char *project_rule)
{
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(p, "hot_modules_basis")), "executing");
	json_t *ex = json_object_get(p, "executing");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(ex, "project_rule")), project_rule);
	TH_ASSERT(json_number_value(json_object_get(ex, "ticks")) >= 10);
	/* The computation is where the time goes, each part substantially. */
	double orbits = hot_share(p, "Almanac.Orbits"), sieve = hot_share(p, "Almanac.Sieve");
	TH_ASSERT_MSG(orbits >= 0.10, "Almanac.Orbits share %.3f", orbits);
	TH_ASSERT_MSG(sieve >= 0.10, "Almanac.Sieve share %.3f", sieve);
	TH_ASSERT_MSG(orbits + sieve >= 0.5, "computation share %.3f", orbits + sieve);
	json_t *hf = json_object_get(p, "hot_functions");
	json_t *prime = NULL;
	bool orbit_fn = false;
	for (size_t i = 0; i < json_array_size(hf); i++) {
		json_t *f = json_array_get(hf, i);
		const char *m = json_string_value(json_object_get(f, "module"));
		const char *fn = json_string_value(json_object_get(f, "function"));
		TH_ASSERT_MSG(!is_plumbing_name(m), "hot function in %s", m);
		if (strcmp(m, "Almanac.Sieve") == 0 && strcmp(fn, "prime?") == 0)
			prime = f;
		if (strcmp(m, "Almanac.Orbits") == 0 &&
		    json_number_value(json_object_get(f, "reductions_share")) >= 0.03)
			orbit_fn = true;
	}
	TH_ASSERT_MSG(prime != NULL, "Almanac.Sieve.prime?/2 is not among the hot functions");
	TH_ASSERT(json_number_value(json_object_get(prime, "reductions_share")) >= 0.05);
	TH_ASSERT(json_is_true(json_object_get(prime, "project")));
	TH_ASSERT_MSG(orbit_fn, "no Almanac.Orbits function among the hot functions");
	/* No hot module is plumbing, and the planner that started the tasks is
	 * not hot (it only starts them). */
	json_t *hm = json_object_get(p, "hot_modules");
	for (size_t i = 0; i < json_array_size(hm); i++) {
		const char *m = json_string_value(json_object_get(json_array_get(hm, i), "module"));
		TH_ASSERT_MSG(!is_plumbing_name(m), "hot module %s is plumbing", m);
	}
	TH_ASSERT_MSG(hot_share(p, "Almanac.Planner") < 0.05, "planner share %.3f",
	              hot_share(p, "Almanac.Planner"));
	/* The ownership view stays, labelled: it still says who started what. */
	json_t *own = json_object_get(p, "ownership_modules");
	TH_ASSERT(ts_json_find(own, "module", "Almanac.Planner") != NULL ||
	          ts_json_find(own, "module", ":erlang") != NULL);
	/* No recommendation is about plumbing or calls the planner hot. */
	json_t *recs = json_object_get(p, "recommendations");
	for (size_t i = 0; i < json_array_size(recs); i++) {
		json_t *r = json_array_get(recs, i);
		const char *subject = json_string_value(json_object_get(r, "subject"));
		const char *finding = json_string_value(json_object_get(r, "finding"));
		TH_ASSERT_MSG(!is_plumbing_name(subject), "recommendation about %s", subject);
		TH_ASSERT_MSG(!is_plumbing_name(finding), "recommendation: %s", finding);
		TH_ASSERT_MSG(
		    !(finding && strstr(finding, "Almanac.Planner") && strstr(finding, "hot")),
		    "recommendation: %s", finding);
	}
}

/* Observes the almanac node through the daemons; returns the profile (JSON,
 * caller decrefs) and prints the text one. `project` may be NULL. */
static json_t *observe_almanac(const struct ts_beam *node, const char *project)
{
	/* The node is CPU-bound on this machine's two cores: under the default
	 * 1% guest budget the sampler's period is lengthened up to 8-fold, and
	 * the short-lived tasks then go unseen (the profile says so: "MOSTLY
	 * UNATTRIBUTED"). What is tested here is where the sampled time goes,
	 * so the sampler is given the budget to keep its period. */
	const char *start_plain[] = {"start", node->name, "--cookie", node->cookie, "--interval",
	                             "1000",  "--budget", "5",        NULL};
	const char *start_project[] = {"start",      node->name, "--cookie", node->cookie,
	                               "--interval", "1000",     "--budget", "5",
	                               "--project",  project,    NULL};
	char *out =
	    ts_observe_until(project ? start_project : start_plain, node->name, SNAPSHOTS_WANTED);
	TH_ASSERT_STR_CONTAINS(out, "Hot functions (executing in");
	TH_ASSERT_STR_CONTAINS(out, "Almanac.Sieve.prime?/2");
	TH_ASSERT_STR_CONTAINS(out, "Process ownership");
	free(out);
	return ts_profile_latest();
}

static void wait_clean(const struct ts_beam *node)
{
	int64_t deadline = gi_clock_mono_ms() + WAIT_MS;
	while (!node_is_clean(node)) {
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "node %s still has our state",
		              node->name);
		usleep(200 * 1000);
	}
}

/* Without a knowledge graph of the project: the target says which modules
 * are the platform's (object code under the OTP root or Elixir's lib dir). */
static void untraced_computation_is_hot_without_graph(void)
{
	const char *ebin = ts_target_build("almanac");
	char wurl[64];
	ts_serve_start(wurl, sizeof(wurl));
	const char *extra[] = {"-pa", ebin, NULL};
	struct ts_beam node;
	ts_beam_start(&node, TS_BEAM_ELIXIR_LONG, "Almanac.start()", extra);
	wait_working(&node);
	json_t *p = observe_almanac(&node, NULL);
	check_almanac_profile(p, "target");
	json_decref(p);
	wait_clean(&node);
}

/* With the project's source indexed, the graph decides what is the
 * project's, and hot modules carry its metrics. */
static void untraced_computation_is_hot_with_graph(void)
{
	const char *ebin = ts_target_build("almanac");
	char wurl[64];
	ts_serve_start(wurl, sizeof(wurl));
	const char *copy = ts_target_index(wurl, "almanac");
	const char *extra[] = {"-pa", ebin, NULL};
	struct ts_beam node;
	ts_beam_start(&node, TS_BEAM_ELIXIR_LONG, "Almanac.start()", extra);
	wait_working(&node);
	json_t *p = observe_almanac(&node, copy);
	check_almanac_profile(p, "graph");
	json_t *orbits =
	    ts_json_find(json_object_get(p, "hot_modules"), "module", "Almanac.Orbits");
	TH_ASSERT(json_is_true(json_object_get(json_object_get(orbits, "graph"), "in_graph")));
	json_decref(p);
	wait_clean(&node);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(untraced_computation_is_hot_without_graph),
	    TH_TEST(untraced_computation_is_hot_with_graph),
	    TH_END,
	};
	return th_main(argc, argv, "e2e_executing", tests);
}
