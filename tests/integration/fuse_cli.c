/*
 * Integration tests of `giulia profile` and `giulia compare` against a real
 * `giulia worker`: the fixture series of tests/fixtures/snapshots are pushed
 * through the worker's ingest API, the worker builds and stores the profiles
 * (fuse_profile_build), and the CLI fetches and renders them over HTTP.
 * needs:
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"
#include "base/alloc.h"
#include "base/fs.h"
#include "harness.h"
#include "json_util.h"
#include "support.h"

/* Pushes one fixture series through the worker; returns the profile id. */
static long long push_series(const struct td_daemon *w, const char *series)
{
	json_t *snaps = ts_fixture_json(series, "snapshots.json");
	for (size_t i = 0; i < json_array_size(snaps); i++) {
		char *body = json_dumps(json_array_get(snaps, i), JSON_COMPACT);
		int st = td_call(w, "POST", "/api/runtime/ingest", body, NULL);
		free(body);
		TH_ASSERT_MSG(st == 200, "ingest %s/%zu: %d", series, i, st);
	}
	json_decref(snaps);
	json_t *fin = ts_fixture_json(series, "finalize.json");
	char *body = json_dumps(fin, JSON_COMPACT);
	json_t *resp = NULL;
	int st = td_call(w, "POST", "/api/runtime/ingest/finalize", body, &resp);
	free(body);
	json_decref(fin);
	TH_ASSERT_MSG(st == 200, "finalize %s: %d", series, st);
	json_t *id = json_object_get(resp, "profile_id");
	TH_ASSERT_MSG(json_is_integer(id), "finalize %s gave no profile id", series);
	long long n = json_integer_value(id);
	json_decref(resp);
	return n;
}

/* Runs `giulia ARGS...`; returns its exit status, *out its standard output. */
static int giulia(const char *const *args, char **out, char **err)
{
	char bin[4096];
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	const char *argv[16];
	int n = 0;
	argv[n++] = bin;
	for (int i = 0; args[i] && n < 15; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	return ts_run(argv, NULL, 120000, out, err);
}

static void profile_and_compare_through_the_worker(void)
{
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	long long busy = push_series(&w, "busy");
	long long quiet = push_series(&w, "quiet");
	TH_ASSERT(busy > 0 && quiet > busy);
	setenv("GIULIA_WORKER_URL", w.url, 1);
	char ids[2][32];
	snprintf(ids[0], sizeof(ids[0]), "%lld", busy);
	snprintf(ids[1], sizeof(ids[1]), "%lld", quiet);

	char *out = NULL, *err = NULL;
	const char *text[] = {"profile", ids[0], NULL};
	TH_ASSERT_INT_EQ(giulia(text, &out, &err), 0);
	TH_ASSERT_STR_CONTAINS(out, "Giulia profile fixture-busy");
	TH_ASSERT_STR_CONTAINS(out, "logger-bottleneck");
	TH_ASSERT_STR_CONTAINS(out, "read-through-cache");
	TH_ASSERT_STR_CONTAINS(out, "Catalog.Registry");
	free(out);
	free(err);

	const char *json[] = {"profile", "latest", "--format", "json", NULL};
	TH_ASSERT_INT_EQ(giulia(json, &out, &err), 0);
	json_t *p = json_loads(out, 0, NULL);
	TH_ASSERT(p != NULL);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(json_object_get(p, "session"), "id")),
	                 "fixture-quiet");
	json_decref(p);
	free(out);
	free(err);

	char path[4096];
	snprintf(path, sizeof(path), "%s/p.html", th_tmpdir());
	const char *html[] = {"profile", ids[0], "--format=html", "--out", path, NULL};
	TH_ASSERT_INT_EQ(giulia(html, &out, &err), 0);
	TH_ASSERT_STR_EQ(out, "");
	free(out);
	free(err);
	char *page = NULL;
	size_t len = 0;
	TH_ASSERT_OK(gi_fs_read_file(path, 16u * 1024 * 1024, &page, &len));
	TH_ASSERT_STR_CONTAINS(page, "<svg class=\"chart line\"");
	TH_ASSERT_STR_CONTAINS(page, "</html>");
	gi_free(page);

	const char *cmp[] = {"compare", ids[0], ids[1], NULL};
	TH_ASSERT_INT_EQ(giulia(cmp, &out, &err), 0);
	TH_ASSERT_STR_CONTAINS(out, "fixture-busy (before) -> fixture-quiet (after)");
	TH_ASSERT_STR_CONTAINS(out, "different nodes");
	TH_ASSERT_STR_CONTAINS(out, "Recommendations new (0)");
	TH_ASSERT_STR_CONTAINS(out, "logger-bottleneck");
	TH_ASSERT_STR_CONTAINS(out, "Hot modules that left");
	free(out);
	free(err);

	const char *cmpj[] = {"compare", ids[0], "latest", "--format", "json", NULL};
	TH_ASSERT_INT_EQ(giulia(cmpj, &out, &err), 0);
	json_t *c = json_loads(out, 0, NULL);
	TH_ASSERT(c != NULL);
	/* The quiet profile traced nothing: the busy profile's findings on
	 * traced modules are not comparable (issue 29), the logger's resolved. */
	json_t *recs = json_object_get(c, "recommendations");
	size_t resolved = json_array_size(json_object_get(recs, "resolved"));
	size_t unknown = json_array_size(json_object_get(recs, "not_comparable"));
	TH_ASSERT_INT_GE(resolved, 1);
	TH_ASSERT_INT_GE(unknown, 1);
	TH_ASSERT_INT_GE(resolved + unknown, 3);
	char *resolved_text = json_dumps(json_object_get(recs, "resolved"), JSON_COMPACT);
	TH_ASSERT(resolved_text && strstr(resolved_text, "read-through-cache") == NULL);
	free(resolved_text);
	json_decref(c);
	free(out);
	free(err);
}

static void errors_are_reported(void)
{
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	setenv("GIULIA_WORKER_URL", w.url, 1);
	char *out = NULL, *err = NULL;
	const char *none[] = {"profile", "latest", NULL};
	TH_ASSERT_INT_EQ(giulia(none, &out, &err), 1);
	TH_ASSERT_STR_CONTAINS(err, "404");
	free(out);
	free(err);
	const char *missing[] = {"profile", "99", NULL};
	TH_ASSERT_INT_EQ(giulia(missing, &out, &err), 1);
	TH_ASSERT_STR_CONTAINS(err, "no profile 99");
	free(out);
	free(err);
	const char *bad[] = {"profile", "x1", NULL};
	TH_ASSERT_INT_EQ(giulia(bad, &out, &err), 2);
	free(out);
	free(err);
	const char *fmt[] = {"profile", "1", "--format", "pdf", NULL};
	TH_ASSERT_INT_EQ(giulia(fmt, &out, &err), 2);
	free(out);
	free(err);
	/* Nothing listening: the distinct exit code of an unreachable daemon. */
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", ts_free_port());
	setenv("GIULIA_WORKER_URL", url, 1);
	TH_ASSERT_INT_EQ(giulia(none, &out, &err), 17);
	TH_ASSERT_STR_CONTAINS(err, "cannot connect");
	free(out);
	free(err);
}

/* A session cut short after a few sparse snapshots (the daemons' minimal
 * snapshot: most fields absent) still gives a profile the CLI can print. */
static void interrupted_sparse_session(void)
{
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	setenv("GIULIA_WORKER_URL", w.url, 1);
	for (int seq = 0; seq < 3; seq++) {
		char *body = td_snapshot("sparse-1", "sparse@127.0.0.1", seq);
		TH_ASSERT_INT_EQ(td_call(&w, "POST", "/api/runtime/ingest", body, NULL), 200);
		free(body);
	}
	const char *fin = "{\"session_id\":\"sparse-1\",\"node\":\"sparse@127.0.0.1\","
	                  "\"status\":\"interrupted\",\"reason\":\"node went down\","
	                  "\"started_ms\":1764496229000,\"stopped_ms\":1764496232000,"
	                  "\"interval_ms\":1000,\"trace_modules\":[],\"project\":null}";
	TH_ASSERT_INT_EQ(td_call(&w, "POST", "/api/runtime/ingest/finalize", fin, NULL), 200);
	char *out = NULL, *err = NULL;
	const char *text[] = {"profile", "latest", NULL};
	TH_ASSERT_INT_EQ(giulia(text, &out, &err), 0);
	TH_ASSERT_STR_CONTAINS(out, "[interrupted]");
	TH_ASSERT_STR_CONTAINS(out, "node went down");
	TH_ASSERT_STR_CONTAINS(out, "Demo.Worker");
	free(out);
	free(err);
}

/* One id users can type everywhere: the number or the session id (or a
 * unique prefix), and the lists that show both. */
static void profiles_listed_and_named_either_way(void)
{
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	long long busy = push_series(&w, "busy");
	long long quiet = push_series(&w, "quiet");
	TH_ASSERT(busy > 0 && quiet > busy);
	char *out = NULL, *err = NULL;
	const char *list[] = {"profiles", "--worker", w.url, NULL};
	TH_ASSERT_INT_EQ(giulia(list, &out, &err), 0);
	TH_ASSERT_STR_CONTAINS(out, "fixture-busy");
	TH_ASSERT_STR_CONTAINS(out, "fixture-quiet");
	TH_ASSERT_STR_CONTAINS(out, "2 profiles");
	free(out);
	free(err);
	const char *obs[] = {"observations", "--worker", w.url, "--json", NULL};
	TH_ASSERT_INT_EQ(giulia(obs, &out, &err), 0);
	TH_ASSERT_STR_CONTAINS(out, "\"profile_id\"");
	free(out);
	free(err);
	/* by session id, by its prefix; an ambiguous prefix is refused */
	const char *by_session[] = {"profile", "fixture-busy", "--worker", w.url, NULL};
	TH_ASSERT_INT_EQ(giulia(by_session, &out, &err), 0);
	TH_ASSERT_STR_CONTAINS(out, "Giulia profile fixture-busy");
	free(out);
	free(err);
	const char *by_prefix[] = {"profile", "fixture-q", "--worker", w.url, NULL};
	TH_ASSERT_INT_EQ(giulia(by_prefix, &out, &err), 0);
	TH_ASSERT_STR_CONTAINS(out, "Giulia profile fixture-quiet");
	free(out);
	free(err);
	const char *ambiguous[] = {"profile", "fixture", "--worker", w.url, NULL};
	TH_ASSERT_INT_EQ(giulia(ambiguous, &out, &err), 2);
	TH_ASSERT_STR_CONTAINS(err, "give more");
	free(out);
	free(err);
	const char *cmp[] = {"compare", "fixture-busy", "fixture-quiet", "--worker", w.url, NULL};
	TH_ASSERT_INT_EQ(giulia(cmp, &out, &err), 0);
	TH_ASSERT_STR_CONTAINS(out, "fixture-busy (before) -> fixture-quiet (after)");
	free(out);
	free(err);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(profile_and_compare_through_the_worker),
	    TH_TEST(errors_are_reported),
	    TH_TEST(interrupted_sparse_session),
	    TH_TEST(profiles_listed_and_named_either_way),
	    TH_END,
	};
	return th_main(argc, argv, "integration_fuse_cli", tests);
}
