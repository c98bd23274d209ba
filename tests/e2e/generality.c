/*
 * generality.c - the workload model of issue 12 on applications that were
 * not written for it (tests/fixtures/targets/tariffs and fleet): the whole
 * product (`giulia serve`, `giulia-observe start/stop` with tracing, the
 * stored profile) on a real node, with the project's source indexed and
 * with only the object code pulled from the node.
 *
 * What a senior engineer concludes, and so what is asserted:
 * - tariffs (Elixir): Tariffs.Pricing, whose domain-named functions
 *   (tariff/2, quote_for/1) read the lane's rate from the database on every
 *   call, is the lookup that should hold an ETS table; Tariffs.RateBook, a
 *   thin layer calling :sqlite3 directly, is a read-mostly data layer (about
 *   88% reads, 7:1); the read-through cache advice and the ETS advice are
 *   one finding on Tariffs.Pricing; nothing is said of the data layer on its
 *   own, of the driver, of a wrapper or a platform module; no pure read is
 *   classed a write.
 * - fleet (plain Erlang, erl -sname): the gen_server registry
 *   (:fleet_registry) asks its Mnesia store (:fleet_store) on every lookup;
 *   the store is a read-mostly data layer (about 90% reads) by its driver
 *   calls (dirty_read and dirty_write), and the registry's handle_call/3 is
 *   split by the runtime counts into its lookups and its moves. Its table
 *   is ram_copies, an ETS table of the node: no cache or ETS advice (issue
 *   29 changed this; issue 12 asked for an ETS table in the registry), and
 *   no database outside the VM.
 * - either data layer traced alone (issue 20: the lookup fixed, or not
 *   traced) is read-mostly and still no database-backed lookup: the ETS
 *   advice is for the caller that asks for one kind of data, never for the
 *   layer that answers every caller.
 * needs: erlang-base elixir erlang-mnesia erlang-p1-sqlite3 tests/fixtures/targets/build.sh
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/str.h"
#include "harness.h"
#include "json_util.h"
#include "product.h"
#include "support.h"

#define SNAPSHOTS_WANTED 6

/* giulia-observe start (tracing `trace`, with `project` or none), waits for
 * SNAPSHOTS_WANTED snapshots, stops (printing the profile: *text, caller
 * frees) and returns the stored profile as JSON (caller decrefs). */
static json_t *observe_n(const struct ts_beam *node, const char *trace, const char *project,
                         int snapshots, char **text)
{
	/* every call counted: the workloads' reads and writes are asserted
	 * exactly, and their writes are rare */
	const char *start[] = {"start",
	                       node->name,
	                       "--cookie",
	                       node->cookie,
	                       "--interval",
	                       "1000",
	                       "--overhead",
	                       "0",
	                       "--trace",
	                       trace,
	                       project ? "--project" : NULL,
	                       project,
	                       NULL};
	*text = ts_observe_until(start, node->name, snapshots);
	json_t *p = ts_profile_latest();
	char *e = json_dumps(json_object_get(p, "errors"), 0);
	fprintf(stderr, "profile errors: %s\n", e ? e : "-");
	free(e);
	return p;
}

static json_t *workload(json_t *p, const char *module)
{
	json_t *w = ts_json_find(json_object_get(p, "workload"), "module", module);
	TH_ASSERT_MSG(w != NULL, "no workload entry for %s", module);
	return w;
}

static const char *hotspot_class(json_t *p, const char *mfa)
{
	json_t *h = ts_json_find(json_object_get(p, "trace_hotspots"), "mfa", mfa);
	TH_ASSERT_MSG(h != NULL, "%s is not among the trace hotspots", mfa);
	return json_string_value(json_object_get(h, "class"));
}

static json_t *observe(const struct ts_beam *node, const char *trace, const char *project,
                       char **text)
{
	return observe_n(node, trace, project, SNAPSHOTS_WANTED, text);
}

/* What no profile may say: advice about a wrapper or a platform module,
 * two recommendations on one subject, database steps where none was seen. */
static void assert_nothing_wrong(json_t *p, bool has_database)
{
	json_t *recs = json_object_get(p, "recommendations");
	static const char *const never[] = {":erlang",   ":proc_lib", ":gen_server", "Task",
	                                    ":sqlite3",  ":mnesia",   "Logger",      ":timer",
	                                    ":erl_eval", ":elixir",   ":gen",        NULL};
	for (size_t i = 0; i < json_array_size(recs); i++) {
		json_t *r = json_array_get(recs, i);
		const char *sub = json_string_value(json_object_get(r, "subject"));
		for (size_t k = 0; sub && never[k]; k++)
			TH_ASSERT_MSG(
			    strncmp(sub, never[k], strlen(never[k])) != 0 ||
			        (sub[strlen(never[k])] != '\0' && sub[strlen(never[k])] != '.'),
			    "a recommendation about %s", sub);
		TH_ASSERT_MSG(!sub || !GI_STR_STARTS(sub, ":elixir_compiler"),
		              "a recommendation about %s", sub);
		for (size_t j = i + 1; sub && j < json_array_size(recs); j++) {
			const char *other =
			    json_string_value(json_object_get(json_array_get(recs, j), "subject"));
			TH_ASSERT_MSG(!other || strcmp(sub, other) != 0,
			              "two recommendations on %s", sub);
		}
		const char *advice = json_string_value(json_object_get(r, "advice"));
		if (!has_database)
			TH_ASSERT(!advice || !strstr(advice, "pg_stat_statements"));
	}
}

/* The ETS finding on `lookup`, in front of `layer`: one recommendation
 * carrying rule 4 (database-backed lookup) and rule 3 (read-through
 * cache), with the round trips per window it would save. */
static void assert_ets_finding(json_t *p, const char *lookup, const char *layer)
{
	json_t *r4 = ts_rec_find(p, 4, lookup);
	TH_ASSERT_MSG(r4 != NULL, "no db-backed-lookup on %s", lookup);
	TH_ASSERT(ts_rec_find(p, 3, lookup) == r4);
	TH_ASSERT_STR_EQ(
	    json_string_value(json_object_get(json_object_get(r4, "evidence"), "repo")), layer);
	TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(r4, "advice")), "ETS");
	double saved = ts_rec_ev(r4, "round_trips_saved_per_window");
	double reads = ts_rec_ev(r4, "reads_per_window");
	TH_ASSERT_MSG(saved > 100 && saved <= reads, "saved %g of %g reads per window", saved,
	              reads);
	double ratio = ts_rec_ev(r4, "read_write_ratio");
	TH_ASSERT_MSG(ratio >= 5 && ratio <= 15, "read/write ratio %g", ratio);
	/* Nothing on the layers below it, nor on the driver. */
	TH_ASSERT(ts_rec_find(p, 3, layer) == NULL);
	TH_ASSERT(ts_rec_find(p, 4, layer) == NULL);
}

/* Issue 20's must-not-say case, on the same node: the data layer traced
 * without the lookup in front of it (as after the lookup's fix, when the
 * lookup no longer goes to it) is read-mostly, because the application
 * reads more than it writes, and is still no lookup of rarely changing
 * data: no ETS advice on it. */
static void assert_layer_alone_is_no_lookup(const struct ts_beam *node, const char *trace,
                                            const char *layer, const char *project)
{
	char *text = NULL;
	json_t *p = observe_n(node, trace, project, 4, &text);
	json_t *w = workload(p, layer);
	TH_ASSERT(json_is_true(json_object_get(json_object_get(w, "database"), "data_layer")));
	double share = json_number_value(json_object_get(w, "read_share"));
	TH_ASSERT_MSG(share >= 0.8, "%s alone: read share %g", layer, share);
	TH_ASSERT_MSG(ts_rec_find(p, 4, NULL) == NULL,
	              "db-backed-lookup on the data layer: %.2000s", text);
	TH_ASSERT(strstr(text, "db-backed-lookup") == NULL);
	assert_nothing_wrong(p, true);
	free(text);
	json_decref(p);
}

/* The data layer: recognised as one, read-mostly, with its share. */
static void assert_data_layer(json_t *p, const char *layer, double lo, double hi)
{
	json_t *w = workload(p, layer);
	TH_ASSERT(json_is_true(json_object_get(json_object_get(w, "database"), "data_layer")));
	double share = json_number_value(json_object_get(w, "read_share"));
	double ratio = json_number_value(json_object_get(w, "read_write_ratio"));
	TH_ASSERT_MSG(share >= lo && share <= hi, "%s read share %g", layer, share);
	TH_ASSERT_MSG(ratio >= 4 && ratio <= 20, "%s read/write ratio %g", layer, ratio);
}

static void tariffs_profile(bool with_project)
{
	char wurl[64];
	ts_serve_start(wurl, sizeof(wurl));
	const char *project = with_project ? ts_target_index(wurl, "tariffs") : NULL;
	const char *ebin = ts_target_build("tariffs");
	const char *extra[] = {"-pa", ebin, NULL};
	struct ts_beam node;
	ts_beam_start(&node, TS_BEAM_ELIXIR_LONG, "Tariffs.start()", extra);
	ts_beam_wait_true(
	    &node,
	    "case catch 'Elixir.Tariffs':counts() of {Q, _} when is_integer(Q), Q > 300 -> "
	    "true; _ -> "
	    "false end.",
	    "the tariffs target");
	char *text = NULL;
	json_t *p = observe(&node, "Tariffs.Pricing,Tariffs.RateBook", project, &text);
	TH_ASSERT(json_is_true(json_object_get(json_object_get(p, "graph"), "answered")));

	/* Domain-named lookups are reads because of what they reach. */
	TH_ASSERT_STR_EQ(hotspot_class(p, "Tariffs.Pricing.quote_for/1"), "read");
	TH_ASSERT_STR_EQ(hotspot_class(p, "Tariffs.Pricing.reprice/2"), "write");
	TH_ASSERT_STR_EQ(hotspot_class(p, "Tariffs.RateBook.rate/1"), "read");
	TH_ASSERT_STR_EQ(hotspot_class(p, "Tariffs.RateBook.revise/2"), "write");
	json_t *q = ts_json_find(json_object_get(p, "trace_hotspots"), "mfa",
	                         "Tariffs.Pricing.quote_for/1");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(q, "class_basis")), "graph");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(q, "data_layer")), "Tariffs.RateBook");
	json_t *rate =
	    ts_json_find(json_object_get(p, "trace_hotspots"), "mfa", "Tariffs.RateBook.rate/1");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(rate, "class_basis")), "driver");

	assert_data_layer(p, "Tariffs.RateBook", 0.8, 0.95);
	json_t *pricing = workload(p, "Tariffs.Pricing");
	TH_ASSERT(json_number_value(json_object_get(pricing, "operations_per_second")) >= 100);
	assert_ets_finding(p, "Tariffs.Pricing", "Tariffs.RateBook");
	assert_nothing_wrong(p, true);
	TH_ASSERT_STR_CONTAINS(text, "db-backed-lookup");
	TH_ASSERT_STR_CONTAINS(text, "read-through-cache");
	TH_ASSERT_STR_CONTAINS(text, "quote_for/1 read (graph)");
	free(text);
	json_decref(p);
	if (with_project)
		assert_layer_alone_is_no_lookup(&node, "Tariffs.RateBook", "Tariffs.RateBook",
		                                project);
}

static void tariffs_with_the_project_indexed(void)
{
	tariffs_profile(true);
}

static void tariffs_from_object_code_only(void)
{
	tariffs_profile(false);
}

static void fleet_erlang_registry_over_mnesia(void)
{
	char wurl[64];
	ts_serve_start(wurl, sizeof(wurl));
	const char *ebin = ts_target_build("fleet");
	const char *extra[] = {"-pa", ebin, NULL};
	struct ts_beam node;
	ts_beam_start(&node, TS_BEAM_ERL_SHORT, "ok = fleet:start()", extra);
	ts_beam_wait_true(
	    &node,
	    "case catch fleet:counts() of {L, _} when is_integer(L), L > 300 -> true; _ -> "
	    "false end.",
	    "the fleet target");
	char *text = NULL;
	json_t *p = observe(&node, "fleet_registry,fleet_store", NULL, &text);
	TH_ASSERT(json_is_true(json_object_get(json_object_get(p, "graph"), "answered")));

	TH_ASSERT_STR_EQ(hotspot_class(p, ":fleet_store.vehicle/1"), "read");
	TH_ASSERT_STR_EQ(hotspot_class(p, ":fleet_store.park/2"), "write");
	/* One handle_call serves lookups and moves: the runtime counts split it. */
	json_t *hc = ts_json_find(json_object_get(p, "trace_hotspots"), "mfa",
	                          ":fleet_registry.handle_call/3");
	TH_ASSERT(hc != NULL);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(hc, "class")), "mixed");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(hc, "class_basis")), "runtime");
	/* The client functions are the same operations, not more of them. */
	TH_ASSERT_STR_EQ(hotspot_class(p, ":fleet_registry.depot_of/1"), "proxy");

	assert_data_layer(p, ":fleet_store", 0.85, 0.95);
	json_t *reg = workload(p, ":fleet_registry");
	double share = json_number_value(json_object_get(reg, "read_share"));
	TH_ASSERT_MSG(share >= 0.85 && share <= 0.95, "registry read share %g", share);
	/* Its reads are dirty_reads of a ram_copies table: ETS already (issue
	 * 29). No cache and no ETS table in front of them, and no database. */
	TH_ASSERT_STR_EQ(ts_workload_storage(p, ":fleet_registry"), "mnesia");
	json_t *db = json_object_get(reg, "database");
	TH_ASSERT(json_number_value(json_object_get(db, "reads_in_vm_share")) >= 0.9);
	TH_ASSERT(ts_rec_find(p, 3, NULL) == NULL);
	TH_ASSERT(ts_rec_find(p, 4, NULL) == NULL);
	/* The node's tables, read at the end: the vehicles are RAM copies. */
	json_t *tab = ts_json_find(json_object_get(json_object_get(p, "storage"), "mnesia_tables"),
	                           "name", "vehicle");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(tab, "storage")), "ram_copies");
	assert_nothing_wrong(p, false);
	free(text);
	json_decref(p);
	assert_layer_alone_is_no_lookup(&node, "fleet_store", ":fleet_store", NULL);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(tariffs_with_the_project_indexed),
	    TH_TEST(tariffs_from_object_code_only),
	    TH_TEST(fleet_erlang_registry_over_mnesia),
	    TH_END,
	};
	return th_main(argc, argv, "e2e_generality", tests);
}
