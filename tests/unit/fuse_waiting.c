/*
 * Unit tests for what the profile says when the node waits rather than
 * computes (issue 20, the article's session 7: "the BEAM had headroom and
 * the database was the likely bottleneck"), and for the class of a
 * gen_server callback that serves reads and writes when nothing bounds its
 * writes. Synthetic snapshot series (fuse_series.h) joined with the real
 * knowledge graph of a small crafted Erlang-named project indexed from
 * source into a SQLite file: a data layer calling :sqlite3, a gen_server
 * registry in front of it, web handlers calling the registry, and a
 * handler that waits on something that is not the database.
 * needs:
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/fs.h"
#include "fuse/fuse.h"
#include "fuse/fuse_int.h"
#include "fuse_series.h"
#include "graph/query.h"
#include "harness.h"
#include "json_util.h"

/* Names unlike the demo's: a ledger over SQLite with a currency registry. */
static const char SOURCE[] =
    "defmodule Ledger.Books do\n"
    "  def rate_row(code), do: :sqlite3.read(:books, :rates, [code: code])\n"
    "  def store_rate(code, r), do: :sqlite3.write(:books, :rates, [code: code, r: r])\n"
    "end\n\n"
    "defmodule Ledger.Currencies do\n"
    "  use GenServer\n"
    "  def rate(code), do: GenServer.call(__MODULE__, {:rate, code})\n"
    "  def set_rate(code, r), do: GenServer.call(__MODULE__, {:set, code, r})\n"
    "  def handle_call({:rate, code}, _from, s), do: {:reply, Ledger.Books.rate_row(code), s}\n"
    "  def handle_call({:set, code, r}, _from, s),\n"
    "    do: {:reply, Ledger.Books.store_rate(code, r), s}\n"
    "end\n\n"
    "defmodule Ledger.Web do\n"
    "  def convert(amount, code), do: amount * price(code)\n"
    "  defp price(code), do: Ledger.Currencies.rate(code)\n"
    "  def ping(pid), do: GenServer.call(pid, :ping)\n"
    "end\n";

static struct kg_db *crafted_graph(void)
{
	char root[4200], lib[4300], file[4400], db_path[4200];
	snprintf(root, sizeof(root), "%s/ledger", th_tmpdir());
	snprintf(lib, sizeof(lib), "%s/lib", root);
	snprintf(file, sizeof(file), "%s/ledger.ex", lib);
	snprintf(db_path, sizeof(db_path), "%s/ledger.db", th_tmpdir());
	TH_ASSERT_OK(gi_fs_mkdir_p(lib));
	FILE *f = fopen(file, "w");
	TH_ASSERT(f != NULL);
	fputs(SOURCE, f);
	fclose(f);
	json_t *summary = NULL;
	TH_ASSERT_OK(kg_index_project(root, db_path, NULL, &summary));
	json_decref(summary);
	struct kg_db *db = NULL;
	TH_ASSERT_OK(kg_db_open(db_path, false, &db));
	return db;
}

struct waiting_arg {
	double utilisation;
	double db_waits, other_waits; /* blocked samples per snapshot at each kind of site */
	bool trace_books;
};

static void add_blocked(json_t *blocked, const char *site, double samples)
{
	json_array_append_new(blocked, json_pack("{s:[s,s,s], s:f}", "frames", ":gen.do_call/4",
	                                         "GenServer.call/3", site, "samples", samples));
}

static void waiting_tweak(json_t *s, long seq, void *arg)
{
	(void)seq;
	const struct waiting_arg *a = arg;
	series_set(s, "scheduler_utilisation", "total", a->utilisation);
	series_add_process(s, "reductions", "<0.90.0>", "Elixir.Ledger.Currencies",
	                   ":gen_server.init_it/6", "Ledger.Currencies", 30000, 1e5, 2);
	series_add_call(s, "Ledger.Currencies", "handle_call", 3, 400);
	series_add_call(s, "Ledger.Currencies", "rate", 1, 390);
	series_add_call(s, "Ledger.Currencies", "set_rate", 2, 10);
	if (a->trace_books) {
		series_add_call(s, "Ledger.Books", "rate_row", 1, 390);
		series_add_call(s, "Ledger.Books", "store_rate", 2, 10);
	}
	json_t *stacks = json_array(), *blocked = json_array();
	json_array_append_new(stacks,
	                      json_pack("{s:[s], s:f, s:f}", "frames", "Ledger.Web.convert/2",
	                                "samples", 20.0, "reductions", 20000.0));
	if (a->db_waits > 0)
		add_blocked(blocked, "Ledger.Web.convert/2", a->db_waits);
	if (a->other_waits > 0)
		add_blocked(blocked, "Ledger.Web.ping/1", a->other_waits);
	json_object_set_new(s, "executing",
	                    json_pack("{s:i, s:i, s:i, s:{s:f, s:f}, s:f, s:o, s:o, s:[]}",
	                              "period_ms", 10, "ticks", 100, "candidates", 10, "samples",
	                              "running", 20.0, "waiting", a->db_waits + a->other_waits,
	                              "reductions_sampled", 20000.0, "stacks", stacks, "blocked",
	                              blocked, "origins"));
}

static json_t *build(struct kg_db *db, const struct waiting_arg *a)
{
	static const char *const both[] = {"Ledger.Currencies", "Ledger.Books", NULL};
	static const char *const one[] = {"Ledger.Currencies", NULL};
	json_t *fin = series_finalize("complete", 10, a->trace_books ? both : one);
	json_t *snaps = series_make(10, waiting_tweak, (void *)a);
	json_t *p = NULL;
	TH_ASSERT_OK(fuse_profile_build(fin, snaps, db, NULL, &p));
	json_decref(fin);
	json_decref(snaps);
	return p;
}

static json_t *rule8(json_t *p)
{
	return ts_rec_find(p, 8, NULL);
}

/* The registry's handle_call/3 serves lookups and changes; with the data
 * layer untraced nothing bounds its writes: unknown, not a guessed write.
 * With the data layer traced the counts split it. */
static void an_unbounded_dispatcher_is_unknown(void)
{
	struct kg_db *db = crafted_graph();
	struct waiting_arg a = {0.5, 0, 0, false};
	json_t *p = build(db, &a);
	json_t *hc = ts_json_find(json_object_get(p, "trace_hotspots"), "mfa",
	                          "Ledger.Currencies.handle_call/3");
	TH_ASSERT(hc != NULL);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(hc, "class")), "unknown");
	json_t *w = ts_json_find(json_object_get(p, "workload"), "module", "Ledger.Currencies");
	TH_ASSERT(w != NULL);
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(w, "writes")), 0, 0);
	TH_ASSERT(ts_rec_find(p, 4, NULL) == NULL);
	json_decref(p);
	a.trace_books = true;
	p = build(db, &a);
	hc = ts_json_find(json_object_get(p, "trace_hotspots"), "mfa",
	                  "Ledger.Currencies.handle_call/3");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(hc, "class")), "mixed");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(hc, "class_basis")), "runtime");
	json_decref(p);
	kg_db_close(db);
}

/* Headroom and the database path: stated when the schedulers have room and
 * most of the waiting is in calls that lead to the database (through the
 * registry's server, which the graph cannot follow by itself); not when
 * the waiting is elsewhere, and not when the schedulers are busy. */
static void headroom_with_the_database_waited_on(void)
{
	struct kg_db *db = crafted_graph();
	struct waiting_arg a = {0.55, 60, 5, true};
	json_t *p = build(db, &a);
	json_t *sites = gi_json_get_path(p, "executing.blocked.call_sites");
	json_t *convert = ts_json_find(sites, "function", "Ledger.Web.convert/2");
	json_t *ping = ts_json_find(sites, "function", "Ledger.Web.ping/1");
	TH_ASSERT(convert && ping);
	TH_ASSERT(json_is_true(json_object_get(convert, "database")));
	TH_ASSERT(json_is_false(json_object_get(ping, "database")));
	json_t *r = rule8(p);
	TH_ASSERT_MSG(r != NULL, "no headroom finding: %s",
	              json_dumps(json_object_get(p, "executing"), JSON_COMPACT));
	TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(r, "finding")), "headroom");
	TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(r, "finding")),
	                       "Ledger.Web.convert/2");
	TH_ASSERT_DBL_NEAR(ts_rec_ev(r, "database_share_of_blocked"), 60.0 / 65, 1e-3);
	TH_ASSERT_STR_EQ(
	    json_string_value(json_object_get(json_object_get(r, "evidence"), "basis")), "waiting");
	json_decref(p);
	/* The same waiting, but for something that is not the database. */
	struct waiting_arg elsewhere = {0.55, 5, 60, true};
	p = build(db, &elsewhere);
	TH_ASSERT(rule8(p) == NULL);
	json_decref(p);
	/* Schedulers busy: no headroom to speak of. */
	struct waiting_arg busy = {0.85, 60, 5, true};
	p = build(db, &busy);
	TH_ASSERT(rule8(p) == NULL);
	json_decref(p);
	/* Little waiting: the processes compute. */
	struct waiting_arg computing = {0.55, 4, 0, true};
	p = build(db, &computing);
	TH_ASSERT(rule8(p) == NULL);
	json_decref(p);
	kg_db_close(db);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(an_unbounded_dispatcher_is_unknown),
	    TH_TEST(headroom_with_the_database_waited_on),
	    TH_END,
	};
	return th_main(argc, argv, "unit_fuse_waiting", tests);
}
