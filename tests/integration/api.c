/*
 * Integration tests of the worker daemon's REST API: a real `giulia worker`
 * on a free loopback port with its SQLite store in the test's directory.
 * Every route, with the real static engine and profile builder behind it.
 * needs:
 */
#include <errno.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include "api_util.h"
#include "base/buf.h"
#include "base/error.h"
#include "fuse/fuse.h"
#include "graph/query.h"

static void ingest(const struct td_daemon *w, const char *sid, int seq)
{
	char *body = td_snapshot(sid, "demo@127.0.0.1", seq);
	json_t *r = NULL;
	int st = td_post(w, "/api/runtime/ingest", body, &r);
	TH_ASSERT_MSG(st == 200, "ingest %s/%d: %d", sid, seq, st);
	TH_ASSERT(json_is_true(json_object_get(r, "ok")));
	json_decref(r);
	free(body);
}

static long long observation_snapshots(const struct td_daemon *w, const char *sid,
                                       const char **status_out, json_t **keep)
{
	char path[256];
	snprintf(path, sizeof(path), "/api/runtime/observation/%s", sid);
	json_t *o = NULL;
	int st = td_get(w, path, &o);
	TH_ASSERT_MSG(st == 200, "GET %s: %d", path, st);
	long long n = json_integer_value(json_object_get(o, "snapshots"));
	if (status_out)
		*status_out = json_string_value(json_object_get(o, "status"));
	*keep = o;
	return n;
}

static void health_and_routing_errors(void)
{
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	json_t *h = NULL;
	TH_ASSERT_INT_EQ(td_get(&w, "/health", &h), 200);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(h, "status")), "ok");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(h, "role")), "worker");
	json_decref(h);
	TD_EXPECT_ERROR(&w, "GET", "/nope", NULL, 404);
	TD_EXPECT_ERROR(&w, "GET", "/api/runtime/ingest", NULL, 405);
	TD_EXPECT_ERROR(&w, "DELETE", "/health", NULL, 405);
	TD_EXPECT_ERROR(&w, "POST", "/api/runtime/ingest", "{not json", 400);
	TD_EXPECT_ERROR(&w, "POST", "/api/runtime/ingest", "[1,2]", 400);
	TD_EXPECT_ERROR(&w, "POST", "/api/runtime/ingest", "{\"node\":\"a@b\",\"seq\":0}", 400);
	TD_EXPECT_ERROR(&w, "POST", "/api/runtime/ingest",
	                "{\"session_id\":5,\"node\":\"a@b\",\"seq\":0}", 400);
	TD_EXPECT_ERROR(&w, "POST", "/api/runtime/ingest",
	                "{\"session_id\":\"s\",\"node\":\"a@b\",\"seq\":-1}", 400);
	TD_EXPECT_ERROR(&w, "POST", "/api/runtime/ingest",
	                "{\"session_id\":\"s/../x\",\"node\":\"a@b\",\"seq\":0}", 400);
	TD_EXPECT_ERROR(&w, "POST", "/api/runtime/ingest",
	                "{\"session_id\":\"s\",\"node\":\"a@b\",\"seq\":0,\"seq\":1}", 400);
	TD_EXPECT_ERROR(&w, "POST", "/api/runtime/ingest/finalize",
	                "{\"session_id\":\"s\",\"node\":\"a@b\",\"status\":\"done\"}", 400);
	TD_EXPECT_ERROR(&w, "POST", "/api/runtime/ingest/finalize",
	                "{\"session_id\":\"s\",\"node\":\"a@b\",\"status\":\"complete\","
	                "\"trace_modules\":[1]}",
	                400);
	TD_EXPECT_ERROR(&w, "GET", "/api/runtime/observation/unknown", NULL, 404);
	TD_EXPECT_ERROR(&w, "GET", "/api/runtime/profile/0", NULL, 400);
	TD_EXPECT_ERROR(&w, "GET", "/api/runtime/profile/abc", NULL, 400);
	TD_EXPECT_ERROR(&w, "GET", "/api/runtime/profile/99", NULL, 404);
	TD_EXPECT_ERROR(&w, "GET", "/api/runtime/profile/latest", NULL, 404);
	TD_EXPECT_ERROR(&w, "GET", "/api/runtime/observations?limit=x", NULL, 400);
	TD_EXPECT_ERROR(&w, "POST", "/api/index/scan", "{}", 400);
	TD_EXPECT_ERROR(&w, "POST", "/api/index/scan", "{\"path\":42}", 400);
}

static void ingest_finalize_and_read_back(void)
{
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	for (int i = 0; i < 5; i++)
		ingest(&w, "sessA", i);
	/* A retried snapshot is acknowledged again and stored once. */
	char *dup = td_snapshot("sessA", "demo@127.0.0.1", 3);
	json_t *r = NULL;
	TH_ASSERT_INT_EQ(td_post(&w, "/api/runtime/ingest", dup, &r), 200);
	TH_ASSERT(json_is_true(json_object_get(r, "duplicate")));
	json_decref(r);
	free(dup);

	json_t *o = NULL;
	const char *state;
	TH_ASSERT_INT_EQ(observation_snapshots(&w, "sessA", &state, &o), 5);
	TH_ASSERT_STR_EQ(state, "running");
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(o, "last_seq")), 4);
	json_decref(o);

	json_t *f = NULL;
	TH_ASSERT_INT_EQ(td_post(&w, "/api/runtime/ingest/finalize",
	                         "{\"session_id\":\"sessA\",\"node\":\"demo@127.0.0.1\","
	                         "\"status\":\"complete\",\"reason\":null,\"started_ms\":1,"
	                         "\"stopped_ms\":2,\"interval_ms\":1000,\"trace_modules\":"
	                         "[\"Demo.Worker\"],\"project\":null}",
	                         &f),
	                 200);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(f, "snapshots")), 5);
	TH_ASSERT(json_object_get(f, "profile_id") != NULL);
	json_decref(f);

	TH_ASSERT_INT_EQ(observation_snapshots(&w, "sessA", &state, &o), 5);
	TH_ASSERT_STR_EQ(state, "complete");
	json_decref(o);

	json_t *full = NULL;
	TH_ASSERT_INT_EQ(td_get(&w, "/api/runtime/observation/sessA?include=snapshots", &full),
	                 200);
	json_t *snaps = json_object_get(full, "snapshot_data");
	TH_ASSERT_INT_EQ(json_array_size(snaps), 5);
	for (size_t i = 0; i < 5; i++)
		TH_ASSERT_INT_EQ(
		    json_integer_value(json_object_get(json_array_get(snaps, i), "seq")), i);
	json_decref(full);

	json_t *list = NULL;
	TH_ASSERT_INT_EQ(td_get(&w, "/api/runtime/observations?limit=10", &list), 200);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(list, "observations")), 1);
	json_decref(list);
	TH_ASSERT_INT_EQ(td_get(&w, "/api/runtime/profiles", &list), 200);
	TH_ASSERT(json_is_array(json_object_get(list, "profiles")));
	json_decref(list);
}

static void profile_built_stored_and_served(void)
{
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	for (int i = 0; i < 3; i++)
		ingest(&w, "sessP", i);
	json_t *f = NULL;
	TH_ASSERT_INT_EQ(td_post(&w, "/api/runtime/ingest/finalize",
	                         "{\"session_id\":\"sessP\",\"node\":\"demo@127.0.0.1\","
	                         "\"status\":\"complete\",\"interval_ms\":1000}",
	                         &f),
	                 200);
	json_t *id = json_object_get(f, "profile_id");
	TH_ASSERT_MSG(json_is_integer(id), "no profile id in the finalize answer");
	long long pid = json_integer_value(id);
	json_decref(f);
	/* A retried finalize answers with the same profile. */
	TH_ASSERT_INT_EQ(td_post(&w, "/api/runtime/ingest/finalize",
	                         "{\"session_id\":\"sessP\",\"node\":\"demo@127.0.0.1\","
	                         "\"status\":\"complete\"}",
	                         &f),
	                 200);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(f, "profile_id")), pid);
	json_decref(f);
	char path[64];
	snprintf(path, sizeof(path), "/api/runtime/profile/%lld", pid);
	json_t *p = NULL;
	TH_ASSERT_INT_EQ(td_get(&w, path, &p), 200);
	TH_ASSERT(json_is_object(json_object_get(p, "profile")));
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(p, "session_id")), "sessP");
	json_decref(p);
	TH_ASSERT_INT_EQ(td_get(&w, "/api/runtime/profile/latest", &p), 200);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(p, "id")), pid);
	json_decref(p);
	TH_ASSERT_INT_EQ(td_get(&w, "/api/runtime/profiles", &p), 200);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(p, "profiles")), 1);
	json_decref(p);
	/* A profile compared with itself: the comparison of fuse_compare, nothing new. */
	snprintf(path, sizeof(path), "/api/runtime/compare?a=%lld&b=latest", pid);
	TH_ASSERT_INT_EQ(td_get(&w, path, &p), 200);
	TH_ASSERT_MSG(json_is_object(p) && json_object_size(p) > 0, "empty comparison");
	json_decref(p);
	TD_EXPECT_ERROR(&w, "GET", "/api/runtime/compare?a=1", NULL, 400);
	TD_EXPECT_ERROR(&w, "GET", "/api/runtime/compare?a=x&b=1", NULL, 400);
	TD_EXPECT_ERROR(&w, "GET", "/api/runtime/compare?a=1&b=99", NULL, 404);
}

/* Finalizes `sid` and checks that the stored profile is the one
 * fuse_profile_build gives on every snapshot at once (read back through
 * include=snapshots, in seq order), and that the finalize counted `n`. */
static void finalize_like_one_shot(const struct td_daemon *w, const char *sid, long long n)
{
	char fin_text[256], path[128];
	snprintf(fin_text, sizeof(fin_text),
	         "{\"session_id\":\"%s\",\"node\":\"demo@127.0.0.1\",\"status\":"
	         "\"complete\",\"interval_ms\":1000,\"trace_modules\":[\"Demo.Traced\"]}",
	         sid);
	json_t *f = NULL;
	TH_ASSERT_INT_EQ(td_post(w, "/api/runtime/ingest/finalize", fin_text, &f), 200);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(f, "snapshots")), n);
	json_t *id = json_object_get(f, "profile_id");
	TH_ASSERT(json_is_integer(id));
	json_t *o = NULL, *p = NULL, *want = NULL;
	snprintf(path, sizeof(path), "/api/runtime/observation/%s?include=snapshots", sid);
	TH_ASSERT_INT_EQ(td_get(w, path, &o), 200);
	json_t *snaps = json_object_get(o, "snapshot_data");
	TH_ASSERT_INT_EQ(json_array_size(snaps), n);
	json_t *fin = json_loads(fin_text, 0, NULL);
	json_object_set_new(fin, "project", json_null());
	/* The worker adds the gaps it finds in what arrived to the finalize. */
	json_object_set(fin, "gaps", json_object_get(o, "gaps"));
	json_object_set(fin, "snapshots_missing", json_object_get(o, "snapshots_missing"));
	TH_ASSERT_OK(fuse_profile_build(fin, snaps, NULL, NULL, &want));
	snprintf(path, sizeof(path), "/api/runtime/profile/%lld",
	         (long long)json_integer_value(id));
	TH_ASSERT_INT_EQ(td_get(w, path, &p), 200);
	json_t *got = json_object_get(p, "profile");
	TH_ASSERT(json_is_object(got));
	/* The worker adds its notes on missing topology to "errors". */
	json_t *got_errors = json_object_get(got, "errors");
	json_t *want_errors = json_object_get(want, "errors");
	TH_ASSERT(json_array_size(got_errors) >= json_array_size(want_errors));
	for (size_t i = 0; i < json_array_size(want_errors); i++)
		TH_ASSERT(
		    json_equal(json_array_get(got_errors, i), json_array_get(want_errors, i)));
	json_object_del(got, "errors");
	json_object_del(want, "errors");
	TH_ASSERT_MSG(json_equal(got, want),
	              "the worker's profile of %s differs from the one-shot build", sid);
	json_decref(f);
	json_decref(fin);
	json_decref(want);
	json_decref(p);
	json_decref(o);
}

/* The worker reads the snapshots row by row and builds the profile
 * incrementally: the stored profile is the one-shot profile. Snapshots
 * arrive out of order (the profile follows seq); rows that are not snapshot
 * objects (written behind the worker's back) are skipped as before. */
static void finalize_profile_is_the_one_shot_profile(void)
{
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	enum { N = 41 };
	for (int i = 0; i < N; i++) {
		ingest(&w, "sessI", (i * 7) % N); /* 7 and 41 coprime: every seq once */
		ingest(&w, "sessJ", i);
	}
	finalize_like_one_shot(&w, "sessI", N);

	char db_path[600];
	snprintf(db_path, sizeof(db_path), "%s/worker.db", w.data);
	sqlite3 *db = NULL;
	TH_ASSERT_INT_EQ(sqlite3_open(db_path, &db), SQLITE_OK);
	sqlite3_busy_timeout(db, 15000);
	TH_ASSERT_INT_EQ(
	    sqlite3_exec(db,
	                 "INSERT INTO snapshots(session_id, seq, body) VALUES"
	                 " ('sessJ', 5000, 'not json'), ('sessJ', 5001, '[1]'),"
	                 " ('sessJ', 5002, '{'), ('sessJ', 5003, ''), ('sessJ', 5004, '[]')",
	                 NULL, NULL, NULL),
	    SQLITE_OK);
	sqlite3_close(db);
	finalize_like_one_shot(&w, "sessJ", N + 2); /* "[1]", "[]" parse; no snapshots */
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	TH_ASSERT_MSG(f != NULL, "cannot write %s", path);
	fputs(text, f);
	fclose(f);
}

/* A small Elixir project: Demo.Repo used by Demo.Accounts and Demo.Web. */
static void make_project(char *root, size_t size)
{
	snprintf(root, size, "%s/proj", th_tmpdir());
	char path[1024];
	snprintf(path, sizeof(path), "%s/lib", root);
	mkdir(root, 0755);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/mix.exs", root);
	write_file(path, "defmodule Demo.MixProject do\n  use Mix.Project\n"
	                 "  def project, do: [app: :demo, version: \"0.1.0\"]\nend\n");
	snprintf(path, sizeof(path), "%s/lib/repo.ex", root);
	write_file(path, "defmodule Demo.Repo do\n  def get(id), do: {:ok, id}\n"
	                 "  def all, do: []\nend\n");
	snprintf(path, sizeof(path), "%s/lib/accounts.ex", root);
	write_file(path, "defmodule Demo.Accounts do\n  alias Demo.Repo\n"
	                 "  def find(id) do\n    case Repo.get(id) do\n      {:ok, x} -> x\n"
	                 "      _ -> nil\n    end\n  end\nend\n");
	snprintf(path, sizeof(path), "%s/lib/web.ex", root);
	write_file(path, "defmodule Demo.Web do\n  def show(id), do: Demo.Accounts.find(id)\n"
	                 "  def list, do: Demo.Repo.all()\nend\n");
}

static void index_and_knowledge_routes(void)
{
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	char root[512];
	make_project(root, sizeof(root));
	char body[1024];
	snprintf(body, sizeof(body), "{\"path\":\"%s\"}", root);
	json_t *r = NULL;
	int st = td_post(&w, "/api/index/scan", body, &r);
	TH_ASSERT_MSG(st == 200, "scan: %d", st);
	TH_ASSERT(json_integer_value(json_object_get(json_object_get(r, "summary"), "modules")) >=
	          3);
	json_decref(r);
	const char *routes[] = {
	    "/api/index/status",
	    "/api/index/modules",
	    "/api/index/functions?module=Demo.Repo",
	    "/api/index/module_details?module=Demo.Repo",
	    "/api/index/summary",
	    "/api/index/complexity",
	    "/api/knowledge/stats",
	    "/api/knowledge/dependents?module=Demo.Repo",
	    "/api/knowledge/dependencies?module=Demo.Web",
	    "/api/knowledge/centrality",
	    "/api/knowledge/impact?module=Demo.Repo&depth=2",
	    "/api/knowledge/cycles",
	    "/api/knowledge/god_modules",
	    "/api/knowledge/fan_in_out",
	    "/api/knowledge/coupling",
	    "/api/knowledge/dead_code",
	    "/api/knowledge/heatmap",
	    "/api/knowledge/change_risk",
	    "/api/knowledge/path?from=Demo.Web&to=Demo.Repo",
	    "/api/knowledge/topology",
	    "/api/knowledge/unprotected_hubs",
	    "/api/knowledge/api_surface",
	};
	char esc[600];
	snprintf(esc, sizeof(esc), "%s", root);
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		char path[2048];
		snprintf(path, sizeof(path), "%s%spath=%s", routes[i],
		         strchr(routes[i], '?') ? "&" : "?", esc);
		json_t *j = NULL;
		st = td_get(&w, path, &j);
		TH_ASSERT_MSG(st == 200 && j, "GET %s: %d", path, st);
		json_decref(j);
	}
	/* Without path: the latest indexed project. */
	json_t *dep = NULL;
	TH_ASSERT_INT_EQ(td_get(&w, "/api/knowledge/dependents?module=Demo.Repo", &dep), 200);
	char *text = json_dumps(dep, 0);
	TH_ASSERT_STR_CONTAINS(text, "Demo.Accounts");
	free(text);
	json_decref(dep);
	TD_EXPECT_ERROR(&w, "GET", "/api/knowledge/dependents?module=No.Such", NULL, 404);
	TD_EXPECT_ERROR(&w, "GET", "/api/knowledge/impact?module=Demo.Repo&depth=x", NULL, 400);
	json_t *projects = NULL;
	TH_ASSERT_INT_EQ(td_get(&w, "/api/projects", &projects), 200);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(projects, "projects")), 1);
	json_decref(projects);
}

static void finalize_matches_project_by_modules(void)
{
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	char root[512], body[1024];
	make_project(root, sizeof(root));
	snprintf(body, sizeof(body), "{\"path\":\"%s\"}", root);
	TH_ASSERT_INT_EQ(td_post(&w, "/api/index/scan", body, NULL), 200);
	/* Snapshots whose hot process is attributed to Demo.Repo (td_snapshot uses
	 * Demo.Worker; this one is written by hand). */
	const char *snap = "{\"session_id\":\"match1\",\"node\":\"demo@127.0.0.1\",\"seq\":0,"
	                   "\"timestamp_ms\":1,\"top_processes\":{\"reductions\":[{\"pid\":"
	                   "\"<0.9.0>\",\"module\":\"Demo.Repo\",\"reductions\":5}]}}";
	TH_ASSERT_INT_EQ(td_post(&w, "/api/runtime/ingest", snap, NULL), 200);
	json_t *f = NULL;
	TH_ASSERT_INT_EQ(td_post(&w, "/api/runtime/ingest/finalize",
	                         "{\"session_id\":\"match1\",\"node\":\"demo@127.0.0.1\","
	                         "\"status\":\"complete\"}",
	                         &f),
	                 200);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(f, "project")), root);
	json_decref(f);
	json_t *o = NULL;
	TH_ASSERT_INT_EQ(td_get(&w, "/api/runtime/observation/match1", &o), 200);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(o, "project")), root);
	json_decref(o);
}

static void path_parameters_are_checked(void)
{
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	char body[1024];
	snprintf(body, sizeof(body), "{\"path\":\"%s/../../no/such/dir\"}", th_tmpdir());
	TD_EXPECT_ERROR(&w, "POST", "/api/index/scan", body, 400);
	char file[600];
	snprintf(file, sizeof(file), "%s/plain", th_tmpdir());
	write_file(file, "x");
	snprintf(body, sizeof(body), "{\"path\":\"%s\"}", file);
	TD_EXPECT_ERROR(&w, "POST", "/api/index/scan", body, 400);
	TD_EXPECT_ERROR(&w, "GET", "/api/knowledge/stats?path=/no/such/dir", NULL, 400);
	TD_EXPECT_ERROR(&w, "GET", "/api/knowledge/stats?path=%2Fetc%2F..%2F..%2Fno", NULL, 400);
	/* An existing directory that was never indexed: 404 (or 501 without the engine);
	 * the worker must not create anything there. */
	char dir[600];
	snprintf(dir, sizeof(dir), "%s/empty", th_tmpdir());
	mkdir(dir, 0755);
	char path[1024];
	snprintf(path, sizeof(path), "/api/knowledge/stats?path=%s", dir);
	TD_EXPECT_ERROR(&w, "GET", path, NULL, 404);
	char giulia_dir[700];
	snprintf(giulia_dir, sizeof(giulia_dir), "%s/.giulia", dir);
	TH_ASSERT_MSG(access(giulia_dir, F_OK) != 0, "a query created %s", giulia_dir);
	if (geteuid() != 0) {
		chmod(dir, 0);
		snprintf(body, sizeof(body), "{\"path\":\"%s\"}", dir);
		TD_EXPECT_ERROR(&w, "POST", "/api/index/scan", body, 403);
		chmod(dir, 0755);
	}
}

static void token_mode(void)
{
	struct td_daemon w = {0};
	snprintf(w.token, sizeof(w.token), "s3cret-token");
	td_worker(&w, NULL);
	char url[128];
	snprintf(url, sizeof(url), "%s/health", w.url);
	char *resp = NULL;
	TH_ASSERT_INT_EQ(ts_http("GET", url, NULL, NULL, &resp), 401);
	TH_ASSERT_STR_CONTAINS(resp, "\"error\"");
	free(resp);
	TH_ASSERT_INT_EQ(ts_http("GET", url, NULL, "s3cret-tokeX", NULL), 401);
	TH_ASSERT_INT_EQ(ts_http("GET", url, NULL, "s3cret-token-longer", NULL), 401);
	TH_ASSERT_INT_EQ(ts_http("GET", url, NULL, "s3cret-token", NULL), 200);
	/* Body routes are refused before the body is read. */
	snprintf(url, sizeof(url), "%s/api/runtime/ingest", w.url);
	TH_ASSERT_INT_EQ(ts_http("POST", url, "{}", NULL, NULL), 401);
	ingest(&w, "tok", 0);
}

static void non_loopback_needs_token(void)
{
	char bin[1024];
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	char data[600];
	snprintf(data, sizeof(data), "%s/w", th_tmpdir());
	const char *argv[] = {bin, "worker", "--listen", "0.0.0.0:0", "--data", data, NULL};
	char *err = NULL;
	int st = ts_run(argv, NULL, 30000, NULL, &err);
	TH_ASSERT_INT_EQ(st, 2);
	TH_ASSERT_STR_CONTAINS(err, "--token");
	free(err);
	const char *bad[] = {bin, "worker", "--listen", "nonsense", "--data", data, NULL};
	TH_ASSERT_INT_EQ(ts_run(bad, NULL, 30000, NULL, NULL), 2);
}

static void restart_keeps_acknowledged_and_interrupts_running(void)
{
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	for (int i = 0; i < 10; i++)
		ingest(&w, "sessR", i);
	TH_ASSERT_INT_EQ(td_stop(&w), 0);
	td_start(&w, "worker", NULL);
	json_t *o = NULL;
	const char *state;
	TH_ASSERT_INT_EQ(observation_snapshots(&w, "sessR", &state, &o), 10);
	TH_ASSERT_STR_EQ(state, "interrupted");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(o, "reason")), "worker shut down");
	json_decref(o);
	/* The monitor keeps pushing after the restart: the observation runs again. */
	ingest(&w, "sessR", 10);
	TH_ASSERT_INT_EQ(observation_snapshots(&w, "sessR", &state, &o), 11);
	TH_ASSERT_STR_EQ(state, "running");
	json_decref(o);
	/* A kill -9 loses nothing acknowledged either. */
	for (int i = 11; i < 20; i++)
		ingest(&w, "sessR", i);
	td_kill(&w);
	td_start(&w, "worker", NULL);
	TH_ASSERT_INT_EQ(observation_snapshots(&w, "sessR", &state, &o), 20);
	json_decref(o);
}

/* ---- the hostile batch ---- */

struct ingester {
	const struct td_daemon *w;
	char sid[32];
	int acked;
	int count;
};

static void *ingest_thread(void *arg)
{
	struct ingester *g = arg;
	for (int i = 0; i < g->count; i++) {
		char *body = td_snapshot(g->sid, "demo@127.0.0.1", i);
		if (td_post(g->w, "/api/runtime/ingest", body, NULL) == 200)
			g->acked++;
		free(body);
	}
	return NULL;
}

static int raw_post(int port, const char *path, const char *body, size_t len)
{
	struct gi_buf b;
	gi_buf_init(&b, 0);
	gi_buf_printf(&b,
	              "POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
	              "Content-Length: %zu\r\nConnection: close\r\n\r\n",
	              path, len);
	gi_buf_append(&b, body, len);
	int st = td_raw(port, b.data, b.len);
	gi_buf_destroy(&b);
	return st;
}

static void hostile_requests(void)
{
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	/* Honest traffic runs all along; everything acknowledged must be stored. */
	struct ingester g[2] = {{&w, "honest0", 0, 40}, {&w, "honest1", 0, 40}};
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, ingest_thread, &g[i]);

	/* Oversized body: declared, and sent chunked without a length. */
	size_t big = 2 * 1024 * 1024;
	char *huge = malloc(big + 1);
	memset(huge, ' ', big);
	huge[0] = '{';
	huge[big - 1] = '}';
	huge[big] = '\0';
	TH_ASSERT_INT_EQ(raw_post(w.port, "/api/runtime/ingest", huge, big), 413);
	char url[128];
	snprintf(url, sizeof(url), "%s/api/runtime/ingest", w.url);
	TH_ASSERT_INT_EQ(ts_http("POST", url, huge, NULL, NULL), 413);
	const char chunked_head[] = "POST /api/runtime/ingest HTTP/1.1\r\nHost: localhost\r\n"
	                            "Content-Type: application/json\r\nTransfer-Encoding: "
	                            "chunked\r\nConnection: close\r\n\r\n";
	int fd = td_connect(w.port);
	TH_ASSERT(fd >= 0);
	td_send_all(fd, chunked_head, sizeof(chunked_head) - 1);
	for (int i = 0; i < 40; i++) {
		char chunk[64];
		int n = snprintf(chunk, sizeof(chunk), "%x\r\n", 65536);
		if (!td_send_all(fd, chunk, (size_t)n) || !td_send_all(fd, huge + 1, 65536) ||
		    !td_send_all(fd, "\r\n", 2))
			break;
	}
	td_send_all(fd, "0\r\n\r\n", 5);
	TH_ASSERT_INT_EQ(td_read_status(fd, 30000), 413);
	close(fd);
	free(huge);

	/* Bad UTF-8 in the body, the URL and a query parameter. */
	const char *bad_body = "{\"session_id\":\"a\xff\xfe\",\"node\":\"a@b\",\"seq\":0}";
	TH_ASSERT_INT_EQ(raw_post(w.port, "/api/runtime/ingest", bad_body, strlen(bad_body)), 400);
	const char *bad_url =
	    "GET /api/\xc3\x28 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
	TH_ASSERT_INT_EQ(td_raw(w.port, bad_url, strlen(bad_url)), 400);
	TD_EXPECT_ERROR(&w, "GET", "/api/knowledge/stats?path=%ff%fe", NULL, 400);

	/* Deep nesting. */
	size_t depth = 200000;
	char *deep = malloc(depth * 2 + 1);
	memset(deep, '[', depth);
	memset(deep + depth, ']', depth);
	deep[depth * 2] = '\0';
	TH_ASSERT_INT_EQ(raw_post(w.port, "/api/runtime/ingest", deep, depth * 2), 400);
	snprintf(deep, depth, "{\"session_id\":\"d\",\"node\":\"a@b\",\"seq\":0,\"x\":");
	size_t off = strlen(deep);
	for (size_t i = 0; i < 5000; i++)
		deep[off++] = '[';
	deep[off] = '\0';
	TH_ASSERT_INT_EQ(raw_post(w.port, "/api/runtime/ingest", deep, off), 400);
	free(deep);

	/* Huge numbers. */
	TD_EXPECT_ERROR(&w, "POST", "/api/runtime/ingest",
	                "{\"session_id\":\"n\",\"node\":\"a@b\",\"seq\":"
	                "123456789012345678901234567890}",
	                400);
	TD_EXPECT_ERROR(&w, "POST", "/api/runtime/ingest",
	                "{\"session_id\":\"n\",\"node\":\"a@b\",\"seq\":1e400}", 400);
	TD_EXPECT_ERROR(&w, "POST", "/api/runtime/ingest",
	                "{\"session_id\":\"n\",\"node\":\"a@b\",\"seq\":9007199254740993}", 400);
	TD_EXPECT_ERROR(&w, "GET", "/api/runtime/profile/99999999999999999999999", NULL, 400);

	/* Path traversal in path segments and parameters. */
	TD_EXPECT_ERROR(&w, "GET", "/api/runtime/observation/..%2F..%2Fetc%2Fpasswd", NULL, 404);
	TD_EXPECT_ERROR(&w, "GET", "/api/runtime/observation/../../etc/passwd", NULL, 404);
	TD_EXPECT_ERROR(&w, "POST", "/api/index/scan", "{\"path\":\"../../../../etc/shadow\"}",
	                400);
	TD_EXPECT_ERROR(&w, "POST", "/api/index/scan", "{\"path\":\"/etc/passwd\\u0000x\"}", 400);

	/* Slow clients: connections that send half a request and stall. */
	int slow[20];
	for (int i = 0; i < 20; i++) {
		slow[i] = td_connect(w.port);
		TH_ASSERT(slow[i] >= 0);
		td_send_all(slow[i],
		            "POST /api/runtime/ingest HTTP/1.1\r\nHost: localhost\r\nContent-Le",
		            52);
	}
	TH_ASSERT_INT_EQ(td_get(&w, "/health", NULL), 200);

	/* A thousand concurrent connections, all open at once (the test needs the
	 * descriptors too). */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	enum { CONNS = 1000 };
	static int fds[CONNS];
	int opened = 0;
	const char req[] = "GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
	for (int i = 0; i < CONNS; i++) {
		fds[i] = td_connect(w.port);
		if (fds[i] >= 0) {
			opened++;
			td_send_all(fds[i], req, sizeof(req) - 1);
		}
	}
	TH_ASSERT_INT_EQ(opened, CONNS);
	int ok = 0;
	for (int i = 0; i < CONNS; i++) {
		if (fds[i] < 0)
			continue;
		if (td_read_status(fds[i], 60000) == 200)
			ok++;
		close(fds[i]);
	}
	TH_ASSERT_INT_EQ(ok, CONNS);
	for (int i = 0; i < 20; i++)
		close(slow[i]);

	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	TH_ASSERT_INT_EQ(td_get(&w, "/health", NULL), 200);
	for (int i = 0; i < 2; i++) {
		json_t *o = NULL;
		long long n = observation_snapshots(&w, g[i].sid, NULL, &o);
		json_decref(o);
		TH_ASSERT_INT_EQ(n, g[i].acked);
		TH_ASSERT_INT_EQ(g[i].acked, g[i].count);
	}
	/* Nothing was written for the refused requests. */
	json_t *list = NULL;
	TH_ASSERT_INT_EQ(td_get(&w, "/api/runtime/observations", &list), 200);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(list, "observations")), 2);
	json_decref(list);
}

/* POST /api/runtime/ingest/batch: each item stored as a single ingest would
 * be, answered in order; a bad item is refused alone; the same batch sent
 * again stores nothing twice. */
static void ingest_batch_is_per_item_and_idempotent(void)
{
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	struct gi_buf b;
	gi_buf_init(&b, 0);
	gi_buf_puts(&b, "{\"items\":[");
	for (int i = 0; i < 3; i++) {
		char *snap = td_snapshot("sessB", "demo@127.0.0.1", i);
		gi_buf_printf(&b, "%s,", snap);
		free(snap);
	}
	/* A bad node name (400) and another node for the same session (409). */
	gi_buf_puts(&b, "{\"session_id\":\"sessB\",\"node\":\"bad\",\"seq\":3},");
	char *other = td_snapshot("sessB", "other@127.0.0.1", 4);
	gi_buf_printf(&b, "%s]}", other);
	free(other);
	static const char *const first[] = {"stored", "stored", "stored", "refused", "refused"};
	static const char *const again[] = {"duplicate", "duplicate", "duplicate", "refused",
	                                    "refused"};
	for (int round = 0; round < 2; round++) {
		json_t *r = NULL;
		TH_ASSERT_INT_EQ(td_post(&w, "/api/runtime/ingest/batch", gi_buf_str(&b), &r), 200);
		json_t *results = json_object_get(r, "results");
		TH_ASSERT_INT_EQ(json_array_size(results), 5);
		for (size_t i = 0; i < 5; i++) {
			json_t *one = json_array_get(results, i);
			TH_ASSERT_INT_EQ(json_integer_value(json_object_get(one, "index")),
			                 (long long)i);
			TH_ASSERT_STR_EQ(json_string_value(json_object_get(one, "result")),
			                 round == 0 ? first[i] : again[i]);
		}
		json_t *bad = json_array_get(results, 3), *foreign = json_array_get(results, 4);
		TH_ASSERT_INT_EQ(json_integer_value(json_object_get(bad, "status")), 400);
		TH_ASSERT(json_string_value(json_object_get(bad, "error")) != NULL);
		TH_ASSERT_INT_EQ(json_integer_value(json_object_get(foreign, "status")), 409);
		TH_ASSERT_INT_EQ(json_integer_value(json_object_get(foreign, "seq")), 4);
		TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "stored")),
		                 round == 0 ? 3 : 0);
		TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "duplicate")),
		                 round == 0 ? 0 : 3);
		TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "refused")), 2);
		json_decref(r);
	}
	gi_buf_destroy(&b);
	json_t *o = NULL;
	TH_ASSERT_INT_EQ(observation_snapshots(&w, "sessB", NULL, &o), 3);
	json_decref(o);

	/* The envelope is checked, and bounded. */
	TD_EXPECT_ERROR(&w, "POST", "/api/runtime/ingest/batch", "{}", 400);
	TD_EXPECT_ERROR(&w, "POST", "/api/runtime/ingest/batch", "{\"items\":[]}", 400);
	TD_EXPECT_ERROR(&w, "POST", "/api/runtime/ingest/batch", "{\"items\":{}}", 400);
	gi_buf_init(&b, 0);
	gi_buf_puts(&b, "{\"items\":[{}");
	for (int i = 0; i < 256; i++)
		gi_buf_puts(&b, ",{}");
	gi_buf_puts(&b, "]}");
	TD_EXPECT_ERROR(&w, "POST", "/api/runtime/ingest/batch", gi_buf_str(&b), 413);
	gi_buf_destroy(&b);
	/* A non-object item is refused alone. */
	json_t *r = NULL;
	TH_ASSERT_INT_EQ(td_post(&w, "/api/runtime/ingest/batch", "{\"items\":[7]}", &r), 200);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(
	                     json_array_get(json_object_get(r, "results"), 0), "result")),
	                 "refused");
	json_decref(r);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(health_and_routing_errors),
	    TH_TEST(ingest_finalize_and_read_back),
	    TH_TEST(ingest_batch_is_per_item_and_idempotent),
	    TH_TEST(profile_built_stored_and_served),
	    TH_TEST(finalize_profile_is_the_one_shot_profile),
	    TH_TEST(index_and_knowledge_routes),
	    TH_TEST(finalize_matches_project_by_modules),
	    TH_TEST(path_parameters_are_checked),
	    TH_TEST(token_mode),
	    TH_TEST(non_loopback_needs_token),
	    TH_TEST(restart_keeps_acknowledged_and_interrupts_running),
	    TH_TEST(hostile_requests),
	    TH_END,
	};
	return th_main(argc, argv, "integration_api", tests);
}
