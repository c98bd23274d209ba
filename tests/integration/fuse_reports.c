/*
 * Integration tests for src/fuse on the recorded-shape snapshot series of
 * tests/fixtures/snapshots (a busy node shaped like the catalog target and a
 * quiet one), and of the HTML report in a real headless Chromium: the page
 * must lay out all its charts without any network access.
 * needs: chromium
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/fs.h"
#include "base/error.h"
#include "base/str.h"
#include "catalog_graph.h"
#include "fuse/fuse.h"
#include "graph/query.h"
#include "harness.h"
#include "json_util.h"
#include "support.h"

static json_t *fixture_profile(const char *series)
{
	json_t *fin = ts_fixture_json(series, "finalize.json");
	json_t *snaps = ts_fixture_json(series, "snapshots.json");
	json_t *p = NULL;
	TH_ASSERT_OK(fuse_profile_build(fin, snaps, NULL, NULL, &p));
	json_decref(fin);
	json_decref(snaps);
	return p;
}

static void busy_fixture_fires_rules_2_3(void)
{
	json_t *p = fixture_profile("busy");
	json_t *hm = json_object_get(p, "hot_modules");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(json_array_get(hm, 0), "module")),
	                 "Logger");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(json_array_get(hm, 1), "module")),
	                 "Catalog.Worker");
	json_t *r2 = ts_rec_find(p, 2, NULL);
	TH_ASSERT(r2 != NULL);
	TH_ASSERT(ts_rec_ev(r2, "reductions_share") > 0.35 &&
	          ts_rec_ev(r2, "reductions_share") < 0.39);
	json_t *r3 = ts_rec_find(p, 3, "Catalog.Registry");
	TH_ASSERT(r3 != NULL);
	TH_ASSERT_DBL_NEAR(ts_rec_ev(r3, "read_write_ratio"), 19.4, 0.1);
	/* Without the graph nothing says the registry goes to the database, and
	 * the data layer (Ecto-style callbacks inside) is no lookup of rarely
	 * changing data: its reads are every caller's (issue 20). */
	TH_ASSERT(ts_rec_find(p, 4, NULL) == NULL);
	TH_ASSERT(ts_rec_find(p, 1, NULL) == NULL);
	TH_ASSERT(ts_rec_find(p, 7, NULL) == NULL);
	/* Three helper calls per database operation. */
	TH_ASSERT_DBL_NEAR(
	    json_number_value(json_object_get(json_object_get(p, "pipeline_overhead"), "ratio")),
	    3.0, 1e-6);
	json_decref(p);
}

static json_t *find_hotspot(json_t *profile, const char *mfa)
{
	return ts_json_find(json_object_get(profile, "trace_hotspots"), "mfa", mfa);
}

/* The same series joined with the real knowledge graph of the catalog
 * target's sources (tree-sitter parse, SQLite index). */
static void busy_fixture_joined_with_catalog_graph(void)
{
	struct kg_db *db = ts_catalog_graph();
	json_t *fin = ts_fixture_json("busy", "finalize.json");
	json_t *snaps = ts_fixture_json("busy", "snapshots.json");
	json_t *p = NULL;
	TH_ASSERT_OK(fuse_profile_build(fin, snaps, db, NULL, &p));
	TH_ASSERT(json_is_true(json_object_get(json_object_get(p, "graph"), "answered")));
	/* Every traced function is joined with the graph. */
	json_t *hs = json_object_get(p, "trace_hotspots");
	TH_ASSERT_INT_EQ(json_array_size(hs), 10);
	for (size_t i = 0; i < json_array_size(hs); i++) {
		json_t *f = json_array_get(hs, i);
		TH_ASSERT_MSG(json_is_true(json_object_get(f, "in_graph")),
		              "%s is not in the graph",
		              json_string_value(json_object_get(f, "mfa")));
		TH_ASSERT(json_is_integer(json_object_get(f, "cyclomatic")));
	}
	/* lookup/1 reaches the data layer through its private from_store/1. */
	json_t *lookup = find_hotspot(p, "Catalog.Registry.lookup/1");
	TH_ASSERT(lookup != NULL);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(lookup, "calls_repo")), "Catalog.Store");
	char *callees = json_dumps(json_object_get(lookup, "callees"), JSON_COMPACT);
	TH_ASSERT_STR_CONTAINS(callees, "Catalog.Registry.from_store/1");
	free(callees);
	char *callers = json_dumps(json_object_get(lookup, "callers"), JSON_COMPACT);
	TH_ASSERT_STR_CONTAINS(callers, "Catalog.Worker.");
	free(callers);
	json_t *get = find_hotspot(p, "Catalog.Store.get/1");
	callers = json_dumps(json_object_get(get, "callers"), JSON_COMPACT);
	TH_ASSERT_STR_CONTAINS(callers, "Catalog.Registry.");
	free(callers);
	/* Hot modules carry graph metrics. */
	json_t *worker = json_array_get(json_object_get(p, "hot_modules"), 1);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(worker, "module")), "Catalog.Worker");
	json_t *g = json_object_get(worker, "graph");
	TH_ASSERT(json_is_integer(json_object_get(g, "ce")));
	TH_ASSERT(json_is_string(json_object_get(g, "zone")));
	/* Untraced and not sampled: no hottest functions (complexity is not load). */
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(worker, "hottest_functions")), 0);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(p, "hot_modules_basis")), "ownership");
	/* Rule 4 now names the registry, in front of its data layer, and rule 3
	 * too; the data layer defers to it. */
	json_t *r4 = ts_rec_find(p, 4, "Catalog.Registry");
	TH_ASSERT(r4 != NULL);
	TH_ASSERT_STR_EQ(
	    json_string_value(json_object_get(json_object_get(r4, "evidence"), "repo")),
	    "Catalog.Store");
	TH_ASSERT_DBL_NEAR(ts_rec_ev(r4, "round_trips_saved_per_window"), 1840, 1);
	TH_ASSERT(ts_rec_find(p, 4, "Catalog.Store") == NULL);
	TH_ASSERT(ts_rec_find(p, 3, "Catalog.Registry") != NULL);
	TH_ASSERT(ts_rec_find(p, 3, "Catalog.Store") == NULL);
	TH_ASSERT(ts_rec_find(p, 2, NULL) != NULL);
	/* The workload model on the real graph: the registry's lookups are
	 * reads because they reach the data layer's reads; the data layer is
	 * one because it calls :sqlite3, and its operations, whose driver call
	 * leaves the effect to the statement, fall back to their names. */
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(lookup, "class")), "read");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(lookup, "class_basis")), "graph");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(lookup, "data_layer")), "Catalog.Store");
	json_t *put = find_hotspot(p, "Catalog.Registry.put/2");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(put, "class")), "write");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(get, "class")), "read");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(get, "class_basis")), "name");
	json_t *store = ts_json_find(json_object_get(p, "workload"), "module", "Catalog.Store");
	json_t *sdb = json_object_get(store, "database");
	TH_ASSERT(json_is_true(json_object_get(sdb, "data_layer")));
	TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(sdb, "data_layer_reason")),
	                       ":sqlite3");
	/* Rules 3 and 4 on the registry are one finding. */
	TH_ASSERT(ts_rec_find(p, 3, "Catalog.Registry") == r4);
	json_decref(p);
	json_decref(fin);
	json_decref(snaps);
	kg_db_close(db);
}

/* A lambda's calls (call_count sees "-list/0-fun-0-"/1 as a function of its
 * own) join the function that defines it, and are a step of that function,
 * not an operation: the registry's operations stay as without them. */
static void lambda_calls_join_their_function(void)
{
	struct kg_db *db = ts_catalog_graph();
	json_t *fin = ts_fixture_json("busy", "finalize.json");
	json_t *snaps = ts_fixture_json("busy", "snapshots.json");
	json_t *before = NULL, *p = NULL;
	TH_ASSERT_OK(fuse_profile_build(fin, snaps, db, NULL, &before));
	for (size_t i = 0; i < json_array_size(snaps); i++) {
		json_t *calls =
		    json_object_get(json_object_get(json_array_get(snaps, i), "trace"), "calls");
		if (json_is_array(calls))
			json_array_append_new(calls, json_pack("{s:s, s:s, s:i, s:i}", "module",
			                                       "Catalog.Registry", "function",
			                                       "-list/0-fun-0-", "arity", 1,
			                                       "count", 500));
	}
	TH_ASSERT_OK(fuse_profile_build(fin, snaps, db, NULL, &p));
	json_t *f = find_hotspot(p, "Catalog.Registry.-list/0-fun-0-/1");
	TH_ASSERT(f != NULL);
	TH_ASSERT(json_is_true(json_object_get(f, "in_graph")));
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(f, "lambda_of")), "list/0");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(f, "kind")), "private");
	TH_ASSERT(json_is_integer(json_object_get(f, "cyclomatic")));
	char *callers = json_dumps(json_object_get(f, "callers"), JSON_COMPACT);
	TH_ASSERT_STR_EQ(callers, "[\"Catalog.Registry.list/0\"]");
	free(callers);
	/* The registry's operations are what they were without the lambda. */
	json_t *w0 =
	    ts_json_find(json_object_get(before, "workload"), "module", "Catalog.Registry");
	json_t *w1 = ts_json_find(json_object_get(p, "workload"), "module", "Catalog.Registry");
	TH_ASSERT(w0 != NULL && w1 != NULL);
	const char *keys[] = {"reads", "writes", "other"};
	for (size_t i = 0; i < 3; i++)
		TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(w1, keys[i])),
		                   json_number_value(json_object_get(w0, keys[i])), 0.001);
	json_decref(before);
	json_decref(p);
	json_decref(fin);
	json_decref(snaps);
	kg_db_close(db);
}

static void quiet_fixture_has_no_false_alarms(void)
{
	json_t *p = fixture_profile("quiet");
	TH_ASSERT(ts_rec_find(p, 1, NULL) == NULL);
	TH_ASSERT(ts_rec_find(p, 2, NULL) == NULL);
	TH_ASSERT(ts_rec_find(p, 7, NULL) == NULL);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(p, "recommendations")), 0);
	json_decref(p);
}

static const char *chromium_path(void)
{
	static const char *const candidates[] = {"/usr/bin/chromium", "/usr/bin/chromium-browser",
	                                         NULL};
	for (size_t i = 0; candidates[i]; i++)
		if (access(candidates[i], X_OK) == 0)
			return candidates[i];
	return NULL;
}

/* Runs headless Chromium on `url` with `mode` (--dump-dom or
 * --screenshot=PATH); returns what it printed (caller frees). */
static char *chromium_run(const char *url, const char *mode)
{
	const char *bin = chromium_path();
	char user_dir[4096];
	snprintf(user_dir, sizeof(user_dir), "--user-data-dir=%s/chromium", th_tmpdir());
	const char *argv[] = {bin,
	                      "--headless",
	                      "--no-sandbox",
	                      "--disable-gpu",
	                      "--disable-quic",
	                      "--no-first-run",
	                      "--disable-background-networking",
	                      "--disable-component-update",
	                      "--disable-sync",
	                      "--disable-dev-shm-usage",
	                      "--window-size=1280,2400",
	                      user_dir,
	                      mode,
	                      url,
	                      NULL};
	char *out = NULL, *err = NULL;
	int st = ts_run(argv, NULL, 180000, &out, &err);
	TH_ASSERT_MSG(st == 0, "chromium exited with %d: %.2000s", st, err ? err : "");
	free(err);
	return out;
}

static void html_report_renders_in_chromium(void)
{
	TH_NEED(chromium_path() != NULL, "chromium", "no /usr/bin/chromium");
	json_t *p = fixture_profile("busy");
	struct gi_buf html;
	gi_buf_init(&html, 0);
	TH_ASSERT_OK(fuse_report_html(p, &html));
	const char *h = gi_buf_str(&html);
	/* Self-contained: nothing to fetch. */
	TH_ASSERT(strstr(h, " src=") == NULL);
	TH_ASSERT(strstr(h, " href=") == NULL);
	TH_ASSERT(strstr(h, "@import") == NULL);
	TH_ASSERT(strstr(h, "url(") == NULL);
	char path[4096], url[4200], shot[4096], mode[4200];
	snprintf(path, sizeof(path), "%s/profile.html", th_tmpdir());
	TH_ASSERT_OK(gi_fs_write_file(path, html.data, html.len));
	snprintf(url, sizeof(url), "file://%s", path);
	char *dom = chromium_run(url, "--dump-dom");
	/* 4 time series + hot modules + hot functions. */
	TH_ASSERT_STR_CONTAINS(dom, "data-charts-rendered=\"6\"");
	TH_ASSERT_STR_CONTAINS(dom, "logger-bottleneck");
	TH_ASSERT_STR_CONTAINS(dom, "Catalog.Registry");
	free(dom);
	snprintf(shot, sizeof(shot), "%s/profile.png", th_tmpdir());
	snprintf(mode, sizeof(mode), "--screenshot=%s", shot);
	free(chromium_run(url, mode));
	char *png = NULL;
	size_t len = 0;
	TH_ASSERT_OK(gi_fs_read_file(shot, 64u * 1024 * 1024, &png, &len));
	TH_ASSERT(len > 20000 && GI_MEM_IS(png, 4, "\x89PNG"));
	gi_free(png);
	/* An empty profile still makes a valid page (charts say "no data"). */
	gi_buf_reset(&html);
	json_t *empty = NULL;
	TH_ASSERT_OK(fuse_profile_build(NULL, NULL, NULL, NULL, &empty));
	TH_ASSERT_OK(fuse_report_html(empty, &html));
	TH_ASSERT_OK(gi_fs_write_file(path, html.data, html.len));
	dom = chromium_run(url, "--dump-dom");
	TH_ASSERT_STR_CONTAINS(dom, "data-charts-rendered=\"0\"");
	TH_ASSERT_STR_CONTAINS(dom, "No rule fired");
	free(dom);
	json_decref(empty);
	gi_buf_destroy(&html);
	json_decref(p);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(busy_fixture_fires_rules_2_3),
	    TH_TEST(busy_fixture_joined_with_catalog_graph),
	    TH_TEST(lambda_calls_join_their_function),
	    TH_TEST(quiet_fixture_has_no_false_alarms),
	    TH_TEST(html_report_renders_in_chromium),
	    TH_END,
	};
	return th_main(argc, argv, "integration_fuse_reports", tests);
}
