/*
 * Integration tests of the PostgreSQL observation store (issue 19, part 2):
 * a real PostgreSQL 15 server made by initdb for the test (tests/support/pg.h),
 * the store library against it and against SQLite side by side, real
 * `giulia worker` / `giulia monitor` processes sharing one database, real
 * BEAM nodes observed, a worker killed with SIGKILL in the middle of ingests.
 * needs: erlang-base postgresql
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>

#include "api_util.h"
#include "base/alloc.h"
#include "base/error.h"
#include "base/fs.h"
#include "pg.h"
#include "store/obs_store.h"

/* ---- the two backends side by side ---- */

static json_t *snapshot_json(const char *sid, long long seq, long long ts_ms)
{
	return json_pack("{s:i, s:s, s:s, s:I, s:I, s:i, s:{s:i}}", "version", 1, "session_id", sid,
	                 "node", "demo@127.0.0.1", "seq", (json_int_t)seq, "timestamp_ms",
	                 (json_int_t)ts_ms, "window_ms", 1000, "processes", "count",
	                 (int)(400 + seq));
}

static void add(struct obs_store *st, const char *sid, long long seq, long long ts_ms, int want_rc,
                bool want_duplicate)
{
	json_t *s = snapshot_json(sid, seq, ts_ms);
	bool dup = false;
	TH_ASSERT_INT_EQ(obs_store_snapshot_add(st, sid, "demo@127.0.0.1", seq, s, &dup), want_rc);
	if (want_rc == 0)
		TH_ASSERT_INT_EQ(dup, want_duplicate);
	json_decref(s);
}

/* After every timestamp of the script's data: a stopped_ms beyond it is
 * the store's clock (an interrupt), not the data's. */
#define SCRIPT_DATA_END_MS 1764496300000LL

/* Removes the fields that hold the wall clock of the write (not the data's). */
static json_t *without_clock(json_t *v)
{
	if (json_is_object(v)) {
		json_object_del(v, "updated_ms");
		json_object_del(v, "created_ms");
		json_object_del(v, "indexed_ms");
		if (json_integer_value(json_object_get(v, "stopped_ms")) > SCRIPT_DATA_END_MS)
			json_object_del(v, "stopped_ms");
		for (void *it = json_object_iter(v); it; it = json_object_iter_next(v, it))
			without_clock(json_object_iter_value(it));
	} else if (json_is_array(v)) {
		for (size_t i = 0; i < json_array_size(v); i++)
			without_clock(json_array_get(v, i));
	}
	return v;
}

static int by_session(const void *a, const void *b)
{
	const char *x = json_string_value(json_object_get(*(json_t *const *)a, "session_id"));
	const char *y = json_string_value(json_object_get(*(json_t *const *)b, "session_id"));
	return strcmp(x ? x : "", y ? y : "");
}

/* The array sorted by session_id: list order among rows written in the
 * same millisecond depends on the clock, not on the backend. */
static json_t *sorted(json_t *arr)
{
	size_t n = json_array_size(arr);
	json_t **items = calloc(n ? n : 1, sizeof(*items));
	for (size_t i = 0; i < n; i++)
		items[i] = json_incref(json_array_get(arr, i));
	qsort(items, n, sizeof(*items), by_session);
	json_t *out = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(out, items[i]);
	free(items);
	json_decref(arr);
	return out;
}

static int stop_after_two(void *ctx, json_t *snapshot)
{
	json_array_append(ctx, snapshot);
	return json_array_size(ctx) == 2 ? 7 : 0;
}

/* Runs one script of calls on `st` and returns everything it answered. */
static json_t *script(struct obs_store *st)
{
	json_t *out = json_object(), *v = NULL;
	const long long t0 = 1764496229000LL;
	add(st, "s1", 0, t0, 0, false);
	add(st, "s1", 1, t0 + 1000, 0, false);
	add(st, "s1", 2, t0 + 2000, 0, false);
	add(st, "s1", 2, t0 + 2000, 0, true);  /* a retry */
	add(st, "s1", 4, t0 + 4000, 0, false); /* seq 3 lost */
	add(st, "s1", 5, t0 + 9000, 0, false); /* a pause */
	TH_ASSERT_OK(obs_store_observation_get(st, "s1", &v));
	json_object_set_new(out, "running", v);
	TH_ASSERT_OK(obs_store_running_list(st, &v));
	json_object_set_new(out, "running_list", sorted(v));
	long long missing = 0;
	TH_ASSERT_OK(obs_store_gaps(st, "s1", 1000, 8, &v, &missing));
	json_object_set_new(out, "gaps", v);
	json_object_set_new(out, "missing", json_integer(missing));
	TH_ASSERT_OK(obs_store_snapshots(st, "s1", &v));
	json_object_set_new(out, "snapshots", v);
	long count = 0;
	json_t *two = json_array();
	TH_ASSERT_INT_EQ(obs_store_snapshots_each(st, "s1", &count, stop_after_two, two), 7);
	json_object_set_new(out, "each_count", json_integer(count));
	json_object_set_new(out, "each_two", two);

	json_t *fin =
	    json_pack("{s:s, s:s, s:s, s:n, s:I, s:I, s:i, s:[s], s:n, s:i}", "session_id", "s1",
	              "node", "demo@127.0.0.1", "status", "complete", "reason", "started_ms",
	              (json_int_t)t0, "stopped_ms", (json_int_t)(t0 + 10000), "interval_ms", 1000,
	              "trace_modules", "Demo.Worker", "project", "next_seq", 8);
	TH_ASSERT_OK(obs_store_finalize(st, fin));
	TH_ASSERT_OK(obs_store_finalize(st, fin)); /* an upsert: the same row */
	json_decref(fin);
	add(st, "s1", 6, t0 + 10000, GI_EEXIST, false);
	add(st, "s1", 2, t0 + 2000, GI_EEXIST, false); /* a late retry too */
	long long id = 0;
	json_t *profile = json_pack("{s:s, s:[]}", "kind", "profile", "errors");
	TH_ASSERT_OK(obs_store_profile_add(st, "s1", "demo@127.0.0.1", NULL, profile, &id));
	json_decref(profile);
	json_object_set_new(out, "profile_id", json_integer(id));
	TH_ASSERT_OK(obs_store_observation_get(st, "s1", &v));
	json_object_set_new(out, "finished", v);
	TH_ASSERT_OK(obs_store_profile_get(st, 0, &v));
	json_object_set_new(out, "profile", v);
	TH_ASSERT_OK(obs_store_profiles_list(st, 10, &v));
	json_object_set_new(out, "profiles", v);

	/* A finalize with no snapshot before it creates the observation. */
	fin = json_pack("{s:s, s:s, s:s, s:s}", "session_id", "s2", "node", "other@127.0.0.1",
	                "status", "interrupted", "reason", "node down");
	TH_ASSERT_OK(obs_store_finalize(st, fin));
	json_decref(fin);
	/* A worker shutdown interrupts; the next snapshot resumes. */
	add(st, "s3", 0, t0, 0, false);
	int n = -1;
	TH_ASSERT_OK(obs_store_interrupt_running(st, "worker shut down", &n));
	json_object_set_new(out, "interrupted", json_integer(n));
	TH_ASSERT_OK(obs_store_observation_get(st, "s3", &v));
	json_object_set_new(out, "s3_interrupted", v);
	add(st, "s3", 1, t0 + 1000, 0, false);
	TH_ASSERT_OK(obs_store_observation_get(st, "s3", &v));
	json_object_set_new(out, "s3_resumed", v);
	TH_ASSERT_OK(obs_store_observations_list(st, 10, &v));
	json_object_set_new(out, "observations", sorted(v));

	json_t *m3 = json_pack("{s:i}", "modules", 3), *m4 = json_pack("{s:i}", "modules", 4);
	TH_ASSERT_OK(obs_store_project_put(st, "/p/a", m3)); /* borrowed */
	TH_ASSERT_OK(obs_store_project_put(st, "/p/a", m4));
	json_decref(m3);
	json_decref(m4);
	TH_ASSERT_OK(obs_store_project_put(st, "/p/b", NULL));
	TH_ASSERT_OK(obs_store_projects_list(st, &v));
	json_object_set_new(out, "projects", v);
	TH_ASSERT_INT_EQ(obs_store_observation_get(st, "nope", &v), GI_ENOTFOUND);
	TH_ASSERT_INT_EQ(obs_store_profile_get(st, 99, &v), GI_ENOTFOUND);
	return without_clock(out);
}

/* The projects list is ordered by the wall clock of the write: compare as a set. */
static void projects_sorted(json_t *r)
{
	json_t *p = json_object_get(r, "projects");
	for (size_t i = 0; i < json_array_size(p); i++) {
		json_t *row = json_array_get(p, i);
		json_object_set(row, "session_id", json_object_get(row, "path"));
	}
	json_object_set_new(r, "projects", sorted(json_incref(p)));
}

static void backends_answer_the_same(void)
{
	struct ts_pg *pg = ts_pg_start();
	char uri[256], dir[512];
	ts_pg_database(pg, "same", uri, sizeof(uri));
	snprintf(dir, sizeof(dir), "%s/sqlite", th_tmpdir());
	struct obs_store *lite = NULL, *post = NULL;
	TH_ASSERT_OK(obs_store_open_location(dir, NULL, &lite));
	TH_ASSERT_OK(obs_store_open_location(dir, uri, &post));
	TH_ASSERT_STR_EQ(obs_store_backend(lite), "sqlite");
	TH_ASSERT_STR_EQ(obs_store_backend(post), "postgres");
	json_t *a = script(lite), *b = script(post);
	projects_sorted(a);
	projects_sorted(b);
	char *ta = json_dumps(a, JSON_SORT_KEYS | JSON_COMPACT);
	char *tb = json_dumps(b, JSON_SORT_KEYS | JSON_COMPACT);
	if (strcmp(ta, tb) != 0)
		th_fail(__FILE__, __LINE__, "the backends differ:\nsqlite   %s\npostgres %s", ta,
		        tb);
	/* What the script must have seen, so that agreeing is not agreeing on nothing. */
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(b, "missing")), 7);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(b, "each_count")), 5);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(b, "interrupted")), 1);
	TH_ASSERT_STR_EQ(
	    json_string_value(json_object_get(json_object_get(b, "s3_resumed"), "status")),
	    "running");
	free(ta);
	free(tb);
	json_decref(a);
	json_decref(b);

	/* Where they differ by design: a second profile of one observation is
	 * the first one on PostgreSQL (two workers may finalize it). */
	long long id = 0;
	json_t *profile = json_object();
	TH_ASSERT_OK(obs_store_profile_add(post, "s1", "demo@127.0.0.1", NULL, profile, &id));
	TH_ASSERT_INT_EQ(id, 1);
	TH_ASSERT_INT_EQ(ts_pg_int(uri, "SELECT count(*) FROM profiles"), 1);
	json_decref(profile);
	/* A session observes one node, checked under the session's lock. */
	json_t *s = snapshot_json("s3", 9, 1764496239000LL);
	bool dup = false;
	TH_ASSERT_INT_EQ(obs_store_snapshot_add(post, "s3", "elsewhere@127.0.0.1", 9, s, &dup),
	                 GI_EEXIST);
	json_decref(s);
	TH_ASSERT_INT_EQ(ts_pg_int(uri, "SELECT count(*) FROM snapshots WHERE session_id = 's3'"),
	                 2);
	obs_store_close(lite);
	obs_store_close(post);
}

/* ---- owners: a worker shutting down interrupts only its own ---- */

static const char *status_of(struct obs_store *st, const char *sid)
{
	static char out[4][32];
	static int next;
	json_t *o = NULL;
	char *buf = out[next++ % 4];
	snprintf(buf, 32, "%s",
	         obs_store_observation_get(st, sid, &o) == 0
	             ? json_string_value(json_object_get(o, "status"))
	             : "unknown");
	json_decref(o);
	return buf;
}

/* Two connections for two worker instances on one store: each interrupt
 * touches its owner's observations (and those without an owner, from
 * before the migration), and a snapshot through the other worker (a
 * monitor that failed over) resumes the observation and moves it. */
static void owners_on(struct obs_store *a, struct obs_store *b, const char *what)
{
	obs_store_owner_set(a, "host-a/1/0001");
	obs_store_owner_set(b, "host-b/2/0002");
	add(a, "own-a", 0, 1764496229000LL, 0, false);
	add(b, "own-b", 0, 1764496229000LL, 0, false);
	int n = -1;
	TH_ASSERT_OK(obs_store_interrupt_running(a, "worker shut down", &n));
	TH_ASSERT_MSG(n == 1, "%s: the interrupt of a marked %d observations", what, n);
	TH_ASSERT_STR_EQ(status_of(b, "own-a"), "interrupted");
	TH_ASSERT_STR_EQ(status_of(a, "own-b"), "running");
	add(b, "own-a", 1, 1764496230000LL, 0, false); /* the monitor now feeds b */
	TH_ASSERT_STR_EQ(status_of(a, "own-a"), "running");
	TH_ASSERT_OK(obs_store_interrupt_running(a, "worker shut down", &n));
	TH_ASSERT_INT_EQ(n, 0);
	TH_ASSERT_OK(obs_store_interrupt_running(b, "worker shut down", &n));
	TH_ASSERT_INT_EQ(n, 2);
	/* A connection without an owner (one worker alone) interrupts them all. */
	add(a, "own-c", 0, 1764496229000LL, 0, false);
	obs_store_owner_set(b, NULL);
	TH_ASSERT_OK(obs_store_interrupt_running(b, "worker shut down", &n));
	TH_ASSERT_INT_EQ(n, 1);
}

static void interrupt_touches_only_the_owners_observations(void)
{
	struct ts_pg *pg = ts_pg_start();
	char uri[256], dir[512];
	ts_pg_database(pg, "owners", uri, sizeof(uri));
	snprintf(dir, sizeof(dir), "%s/sqlite", th_tmpdir());
	struct obs_store *a = NULL, *b = NULL;
	TH_ASSERT_OK(obs_store_open_location(dir, uri, &a));
	TH_ASSERT_OK(obs_store_open_location(dir, uri, &b));
	owners_on(a, b, "postgres");
	obs_store_close(a);
	obs_store_close(b);
	TH_ASSERT_OK(obs_store_open_location(dir, NULL, &a));
	TH_ASSERT_OK(obs_store_open_location(dir, NULL, &b));
	owners_on(a, b, "sqlite");
	obs_store_close(a);
	obs_store_close(b);
	/* A worker.db of version 2 (before owners) is migrated, its rows kept. */
	char file[600];
	snprintf(file, sizeof(file), "%s/worker.db", dir);
	sqlite3 *db = NULL;
	TH_ASSERT_INT_EQ(sqlite3_open(file, &db), SQLITE_OK);
	TH_ASSERT_INT_EQ(sqlite3_exec(db,
	                              "ALTER TABLE observations DROP COLUMN owner;"
	                              " PRAGMA user_version = 2;"
	                              " UPDATE observations SET status = 'running'",
	                              NULL, NULL, NULL),
	                 SQLITE_OK);
	sqlite3_close(db);
	TH_ASSERT_OK(obs_store_open_location(dir, NULL, &a));
	obs_store_owner_set(a, "host-a/1/0001");
	int n = -1;
	TH_ASSERT_OK(obs_store_interrupt_running(a, "worker shut down", &n));
	TH_ASSERT_INT_EQ(n, 3); /* no owner after the migration: anyone's to close */
	obs_store_close(a);
	TH_ASSERT_INT_EQ(sqlite3_open(file, &db), SQLITE_OK);
	sqlite3_stmt *q = NULL;
	TH_ASSERT_INT_EQ(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &q, NULL), SQLITE_OK);
	TH_ASSERT_INT_EQ(sqlite3_step(q), SQLITE_ROW);
	TH_ASSERT_INT_EQ(sqlite3_column_int(q, 0), OBS_STORE_SCHEMA_VERSION);
	sqlite3_finalize(q);
	sqlite3_close(db);
}

/* ---- migrations ---- */

struct opener {
	const char *uri;
	int rc;
};

static void *open_once(void *arg)
{
	struct opener *o = arg;
	struct obs_store *st = NULL;
	o->rc = obs_store_open_location("/nonexistent", o->uri, &st);
	obs_store_close(st);
	return NULL;
}

static void migrations_are_versioned_and_serialised(void)
{
	struct ts_pg *pg = ts_pg_start();
	char uri[256];
	ts_pg_database(pg, "race", uri, sizeof(uri));
	/* Eight workers starting at once on an empty database. */
	enum { OPENERS = 8 };
	pthread_t t[OPENERS];
	struct opener o[OPENERS];
	for (int i = 0; i < OPENERS; i++) {
		o[i] = (struct opener){uri, -1};
		TH_ASSERT(pthread_create(&t[i], NULL, open_once, &o[i]) == 0);
	}
	for (int i = 0; i < OPENERS; i++) {
		pthread_join(t[i], NULL);
		TH_ASSERT_INT_EQ(o[i].rc, 0);
	}
	TH_ASSERT_INT_EQ(ts_pg_int(uri, "SELECT count(*) FROM schema_version"), 2);
	TH_ASSERT_INT_EQ(ts_pg_int(uri, "SELECT max(version) FROM schema_version"), 2);
	TH_ASSERT_INT_EQ(ts_pg_int(uri, "SELECT count(*) FROM pg_constraint WHERE conname = "
	                                "'snapshots_once' AND contype = 'p'"),
	                 1);

	/* A database of version 1 (before owners) is migrated, its rows kept. */
	struct obs_store *st = NULL;
	ts_pg_exec(uri, "ALTER TABLE observations DROP COLUMN owner;"
	                " DELETE FROM schema_version WHERE version = 2;"
	                " INSERT INTO observations(session_id, node, status, updated_ms)"
	                " VALUES('old', 'demo@127.0.0.1', 'running', 0)");
	TH_ASSERT_OK(obs_store_open_location("/nonexistent", uri, &st));
	obs_store_close(st);
	TH_ASSERT_INT_EQ(ts_pg_int(uri, "SELECT max(version) FROM schema_version"), 2);
	TH_ASSERT_INT_EQ(ts_pg_int(uri, "SELECT count(*) FROM observations WHERE"
	                                " session_id = 'old' AND owner IS NULL"),
	                 1);

	/* A schema from a newer build is refused, and left alone. */
	ts_pg_exec(uri, "INSERT INTO schema_version VALUES (3, 0)");
	TH_ASSERT_INT_EQ(obs_store_open_location("/nonexistent", uri, &st), GI_EDBVERSION);
	TH_ASSERT(st == NULL);
	TH_ASSERT_INT_EQ(ts_pg_int(uri, "SELECT max(version) FROM schema_version"), 3);

	/* A database with someone else's schema_version is not taken over. */
	char other[256];
	ts_pg_database(pg, "foreign", other, sizeof(other));
	ts_pg_exec(other, "CREATE TABLE schema_version(name text)");
	TH_ASSERT_INT_EQ(obs_store_open_location("/nonexistent", other, &st), GI_EDBVERSION);
	TH_ASSERT_INT_EQ(ts_pg_int(other, "SELECT count(*) FROM pg_tables WHERE tablename = "
	                                  "'snapshots'"),
	                 0);
}

/* ---- errors ---- */

static void errors_tell_the_truth_without_the_password(void)
{
	struct ts_pg *pg = ts_pg_start();
	char uri[256], wrong[256], down[256], data[512];
	ts_pg_database(pg, "errs", uri, sizeof(uri));
	snprintf(wrong, sizeof(wrong), "postgres://giulia:NotThePassword42@127.0.0.1:%d/errs",
	         pg->port);
	snprintf(down, sizeof(down), "postgres://giulia:%s@127.0.0.1:%d/errs", pg->password,
	         ts_free_port());
	struct obs_store *st = NULL;
	TH_ASSERT_INT_EQ(obs_store_open_location("/nonexistent", wrong, &st), GI_EDENIED);
	TH_ASSERT_INT_EQ(obs_store_open_location("/nonexistent", down, &st), GI_ECONNECT);
	TH_ASSERT_INT_EQ(obs_store_open_location("/nonexistent", "mysql://x/y", &st), GI_EINVAL);

	char shown[256];
	obs_store_location_redact(wrong, shown, sizeof(shown));
	TH_ASSERT(strstr(shown, "NotThePassword42") == NULL);
	TH_ASSERT_STR_CONTAINS(shown, "giulia:***@127.0.0.1");
	obs_store_location_redact("postgres://h/db?user=u&password=hunter2&sslmode=disable", shown,
	                          sizeof(shown));
	TH_ASSERT_STR_EQ(shown, "postgres://h/db?user=u&password=***&sslmode=disable");

	/* The daemon says what is wrong, and never the password. */
	char bin[1024], listen[64];
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	snprintf(data, sizeof(data), "%s/w", th_tmpdir());
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", ts_free_port());
	const char *auth[] = {bin,  "worker",  "--listen", listen, "--data",
	                      data, "--store", wrong,      NULL};
	char *out = NULL, *err = NULL;
	TH_ASSERT(ts_run(auth, NULL, 60000, &out, &err) != 0);
	TH_ASSERT_STR_CONTAINS(err, "authentication failed");
	TH_ASSERT(strstr(err, "NotThePassword42") == NULL);
	TH_ASSERT(strstr(out ? out : "", "NotThePassword42") == NULL);
	free(out);
	free(err);
	const char *gone[] = {bin,  "worker",  "--listen", listen, "--data",
	                      data, "--store", down,       NULL};
	out = err = NULL;
	TH_ASSERT(ts_run(gone, NULL, 60000, &out, &err) != 0);
	TH_ASSERT_STR_CONTAINS(err, "running and reachable");
	TH_ASSERT(strstr(err, pg->password) == NULL);
	free(out);
	free(err);
	const char *serve[] = {bin,   "serve", "--worker-listen", listen, "--data", data, "--store",
	                       wrong, NULL};
	out = err = NULL;
	TH_ASSERT(ts_run(serve, NULL, 60000, &out, &err) != 0);
	TH_ASSERT_STR_CONTAINS(err, "giulia serve: cannot open the store");
	TH_ASSERT(strstr(err, "NotThePassword42") == NULL);
	free(out);
	free(err);
	/* The same from the environment. */
	setenv("GIULIA_STORE", wrong, 1);
	const char *env[] = {bin, "worker", "--listen", listen, "--data", data, NULL};
	out = err = NULL;
	TH_ASSERT(ts_run(env, NULL, 60000, &out, &err) != 0);
	unsetenv("GIULIA_STORE");
	TH_ASSERT_STR_CONTAINS(err, "authentication failed");
	free(out);
	free(err);
}

/* ---- a dropped connection ---- */

static void dropped_connection_is_reestablished(void)
{
	struct ts_pg *pg = ts_pg_start();
	char uri[256];
	ts_pg_database(pg, "drop", uri, sizeof(uri));
	struct obs_store *st = NULL;
	TH_ASSERT_OK(obs_store_open_location("/nonexistent", uri, &st));
	add(st, "d1", 0, 1000, 0, false);
	/* The server ends our session (an administrator, a failover). */
	ts_pg_exec(uri, "DO $$ BEGIN PERFORM pg_terminate_backend(pid) FROM pg_stat_activity"
	                " WHERE datname = 'drop' AND pid <> pg_backend_pid(); END $$");
	add(st, "d1", 1, 2000, 0, false);
	/* The server restarts. */
	ts_pg_restart(pg);
	add(st, "d1", 2, 3000, 0, false);
	json_t *o = NULL;
	TH_ASSERT_OK(obs_store_observation_get(st, "d1", &o));
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(o, "snapshots")), 3);
	json_decref(o);
	/* While it is down: a clear error, and nothing half-written after. */
	ts_pg_stop(pg);
	bool dup;
	json_t *s = snapshot_json("d1", 3, 4000);
	TH_ASSERT_INT_EQ(obs_store_snapshot_add(st, "d1", "demo@127.0.0.1", 3, s, &dup),
	                 GI_ECONNECT);
	json_decref(s);
	ts_pg_restart(pg);
	TH_ASSERT_INT_EQ(ts_pg_int(uri, "SELECT count(*) FROM snapshots"), 3);
	TH_ASSERT_INT_EQ(ts_pg_int(uri, "SELECT snapshots FROM observations"), 3);
	obs_store_close(st);
}

/* ---- the product on a shared database ---- */

static const char WORKLOAD[] =
    "spawn(fun() -> L = fun Loop(N) -> _ = lists:seq(1, 2000), timer:sleep(5), Loop(N + 1) end,"
    " L(0) end).";

static void start_worker(struct td_daemon *w, const char *name, const char *uri)
{
	snprintf(w->data, sizeof(w->data), "%s/%s", th_tmpdir(), name);
	const char *extra[] = {"--store", uri, NULL};
	td_start(w, "worker", extra);
}

/* `giulia serve --store URI` on free ports; `d` is its worker. */
static void start_serve(struct td_daemon *d, const char *uri)
{
	char bin[1024], wl[64], ml[64], health[128];
	d->port = ts_free_port();
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	snprintf(wl, sizeof(wl), "127.0.0.1:%d", d->port);
	snprintf(ml, sizeof(ml), "127.0.0.1:%d", ts_free_port());
	snprintf(d->url, sizeof(d->url), "http://127.0.0.1:%d", d->port);
	snprintf(d->data, sizeof(d->data), "%s/serve", th_tmpdir());
	snprintf(d->log, sizeof(d->log), "%s/serve-%d.log", th_tmpdir(), d->port);
	const char *argv[] = {bin, "serve",  "--worker-listen", wl,        "--monitor-listen",
	                      ml,  "--data", d->data,           "--store", uri,
	                      NULL};
	d->pid = ts_spawn(argv, d->log);
	TH_ASSERT(d->pid > 0);
	td_track(d->pid);
	snprintf(health, sizeof(health), "%s/health", d->url);
	TH_ASSERT_MSG(ts_http_wait(health, 60000), "giulia serve did not come up; log %s", d->log);
}

static void start_monitor(struct td_daemon *m, const char *name, const struct td_daemon *w)
{
	snprintf(m->data, sizeof(m->data), "%s/%s", th_tmpdir(), name);
	td_monitor_for(m, w);
}

static void observe_start(const struct td_daemon *m, const struct ts_beam *n, char *sid,
                          size_t size)
{
	char body[1024];
	snprintf(body, sizeof(body), "{\"node\":\"%s\",\"cookie\":\"%s\",\"interval_ms\":250}",
	         n->name, n->cookie);
	json_t *r = NULL;
	TH_ASSERT_INT_EQ(td_post(m, "/api/monitor/observe/start", body, &r), 200);
	snprintf(sid, size, "%s", json_string_value(json_object_get(r, "session_id")));
	json_decref(r);
}

static long long observation_int(const struct td_daemon *w, const char *sid, const char *key)
{
	char path[256];
	snprintf(path, sizeof(path), "/api/runtime/observation/%s", sid);
	json_t *o = NULL;
	long long v = td_get(w, path, &o) == 200 ? json_integer_value(json_object_get(o, key)) : -1;
	json_decref(o);
	return v;
}

static void wait_snapshots(const struct td_daemon *w, const char *sid, long long n)
{
	int64_t deadline = gi_clock_mono_ms() + 120000;
	while (observation_int(w, sid, "snapshots") < n) {
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "fewer than %lld snapshots of %s", n,
		              sid);
		gi_clock_sleep_ms(100);
	}
}

static long long observe_stop(const struct td_daemon *m, const struct ts_beam *n)
{
	char body[512];
	snprintf(body, sizeof(body), "{\"node\":\"%s\"}", n->name);
	json_t *r = NULL;
	TH_ASSERT_INT_EQ(td_post(m, "/api/monitor/observe/stop", body, &r), 200);
	TH_ASSERT(json_is_integer(json_object_get(r, "profile_id")));
	long long id = json_integer_value(json_object_get(r, "profile_id"));
	json_decref(r);
	return id;
}

/* Rows, the observation's counter and the profile agree for `sid`. */
static void session_consistent(const char *uri, const struct td_daemon *w, const char *sid,
                               long long profile_id)
{
	char sql[512];
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM snapshots WHERE session_id = '%s'", sid);
	long long rows = ts_pg_int(uri, sql);
	TH_ASSERT_INT_EQ(observation_int(w, sid, "snapshots"), rows);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM profiles WHERE session_id = '%s'", sid);
	TH_ASSERT_INT_EQ(ts_pg_int(uri, sql), 1);
	TH_ASSERT_INT_EQ(observation_int(w, sid, "profile_id"), profile_id);
	char path[128];
	snprintf(path, sizeof(path), "/api/runtime/profile/%lld", profile_id);
	json_t *p = NULL;
	TH_ASSERT_INT_EQ(td_get(w, path, &p), 200);
	json_t *session = json_object_get(json_object_get(p, "profile"), "session");
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(session, "snapshot_count")), rows);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(session, "status")), "complete");
	json_decref(p);
}

static void observe_finalize_profile_on_postgres(void)
{
	struct ts_pg *pg = ts_pg_start();
	char uri[256], sid[64];
	ts_pg_database(pg, "flow", uri, sizeof(uri));
	static struct ts_beam node; /* static: see the daemons below */
	ts_beam_start(&node, TS_BEAM_ERL_LONG, NULL, NULL);
	free(ts_beam_eval(&node, WORKLOAD));
	/* Static: their deferred stops run after this frame is gone (each test
	 * is a fresh forked process, so they start zeroed). */
	static struct td_daemon w, m, reader;
	start_worker(&w, "worker", uri);
	start_monitor(&m, "monitor", &w);
	observe_start(&m, &node, sid, sizeof(sid));
	wait_snapshots(&w, sid, 5);
	long long id = observe_stop(&m, &node);
	session_consistent(uri, &w, sid, id);
	/* Nothing of the observation is in the worker's data directory. */
	char path[600];
	snprintf(path, sizeof(path), "%s/worker.db", w.data);
	TH_ASSERT(access(path, F_OK) != 0);
	/* Another worker on the same database serves the same history: here
	 * `giulia serve --store`, the worker and a monitor in one process. */
	start_serve(&reader, uri);
	session_consistent(uri, &reader, sid, id);
	json_t *list = NULL;
	TH_ASSERT_INT_EQ(td_get(&reader, "/api/runtime/profiles", &list), 200);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(list, "profiles")), 1);
	json_decref(list);
}

static void two_monitors_two_workers_one_database(void)
{
	struct ts_pg *pg = ts_pg_start();
	char uri[256], sid1[64], sid2[64];
	ts_pg_database(pg, "fleet", uri, sizeof(uri));
	static struct ts_beam n1, n2; /* static: deferred stops */
	ts_beam_start(&n1, TS_BEAM_ERL_LONG, NULL, NULL);
	ts_beam_start(&n2, TS_BEAM_ERL_LONG, NULL, NULL);
	free(ts_beam_eval(&n1, WORKLOAD));
	free(ts_beam_eval(&n2, WORKLOAD));
	static struct td_daemon w1, w2, m1, m2; /* static: see above */
	start_worker(&w1, "w1", uri);
	start_worker(&w2, "w2", uri);
	start_monitor(&m1, "m1", &w1);
	start_monitor(&m2, "m2", &w2);
	observe_start(&m1, &n1, sid1, sizeof(sid1));
	observe_start(&m2, &n2, sid2, sizeof(sid2));
	wait_snapshots(&w1, sid1, 8);
	wait_snapshots(&w2, sid2, 8);
	/* Each worker sees what the other ingests, while it runs. */
	TH_ASSERT_INT_GE(observation_int(&w1, sid2, "snapshots"), 8);
	TH_ASSERT_INT_GE(observation_int(&w2, sid1, "snapshots"), 8);
	long long id1 = observe_stop(&m1, &n1);
	long long id2 = observe_stop(&m2, &n2);
	TH_ASSERT(id1 != id2);
	session_consistent(uri, &w2, sid1, id1);
	session_consistent(uri, &w1, sid2, id2);
	TH_ASSERT_INT_EQ(ts_pg_int(uri, "SELECT count(*) FROM profiles"), 2);
	TH_ASSERT_INT_EQ(ts_pg_int(uri, "SELECT count(*) FROM observations"), 2);
}

/* Two workers on one database, a monitor feeding each: the one that shuts
 * down marks its own observation interrupted, and the other's keeps
 * running and completes with its profile. */
static void worker_shutdown_leaves_the_other_workers_sessions(void)
{
	struct ts_pg *pg = ts_pg_start();
	char uri[256], sid1[64], sid2[64];
	ts_pg_database(pg, "shutdown", uri, sizeof(uri));
	static struct ts_beam n1, n2; /* static: deferred stops */
	ts_beam_start(&n1, TS_BEAM_ERL_LONG, NULL, NULL);
	ts_beam_start(&n2, TS_BEAM_ERL_LONG, NULL, NULL);
	static struct td_daemon w1, w2, m1, m2; /* static: see above */
	start_worker(&w1, "w1", uri);
	start_worker(&w2, "w2", uri);
	start_monitor(&m1, "m1", &w1);
	start_monitor(&m2, "m2", &w2);
	observe_start(&m1, &n1, sid1, sizeof(sid1));
	observe_start(&m2, &n2, sid2, sizeof(sid2));
	wait_snapshots(&w1, sid1, 3);
	wait_snapshots(&w2, sid2, 3);
	TH_ASSERT_INT_EQ(td_stop(&w1), 0);
	/* Its own, and only that one (the other worker's liveness deadline
	 * would end it too, but 30 intervals later). */
	char *log = NULL;
	size_t len = 0;
	TH_ASSERT_OK(gi_fs_read_file(w1.log, 1 << 20, &log, &len));
	TH_ASSERT_STR_CONTAINS(log, "1 running observation(s) marked interrupted");
	gi_free(log);
	char sql[256];
	snprintf(sql, sizeof(sql),
	         "SELECT count(*) FROM observations WHERE session_id = '%s' AND"
	         " status = 'interrupted'",
	         sid1);
	TH_ASSERT_INT_EQ(ts_pg_int(uri, sql), 1);
	snprintf(sql, sizeof(sql),
	         "SELECT count(*) FROM observations WHERE session_id = '%s' AND"
	         " status = 'running'",
	         sid2);
	TH_ASSERT_INT_EQ(ts_pg_int(uri, sql), 1);
	long long before = observation_int(&w2, sid2, "snapshots");
	wait_snapshots(&w2, sid2, before + 2); /* still ingesting */
	long long id = observe_stop(&m2, &n2);
	session_consistent(uri, &w2, sid2, id);
	/* m1's worker is gone: a stop would spend its flush time (10 s) trying
	 * to deliver there. Nothing of it is checked any more. */
	td_kill(&m1);
}

/* ---- a worker killed in the middle of ingests ---- */

#define KILL_SNAPSHOTS 240
#define KILL_PUSHERS   4

struct pusher {
	const struct td_daemon *w;
	int index;
	int acked;      /* snapshots answered 200 */
	int duplicates; /* of those, answered as already stored */
	int refused;    /* attempts that got no 200 (the worker was down) */
};

/* Pushes its share of the numbers, each until the worker answers 200, as
 * the monitor's delivery does; a refused connection (the worker is down)
 * is retried. */
static void *push_share(void *arg)
{
	struct pusher *p = arg;
	for (int seq = p->index; seq < KILL_SNAPSHOTS; seq += KILL_PUSHERS) {
		char *body = td_snapshot("kill1", "demo@127.0.0.1", seq);
		for (;;) {
			json_t *r = NULL;
			if (td_post(p->w, "/api/runtime/ingest", body, &r) == 200) {
				__atomic_add_fetch(&p->acked, 1, __ATOMIC_RELAXED);
				if (json_is_true(json_object_get(r, "duplicate")))
					p->duplicates++;
				json_decref(r);
				break;
			}
			json_decref(r);
			__atomic_add_fetch(&p->refused, 1, __ATOMIC_RELAXED);
			gi_clock_sleep_ms(20);
		}
		free(body);
	}
	return NULL;
}

static int acked_total(const struct pusher *p)
{
	int n = 0;
	for (int i = 0; i < KILL_PUSHERS; i++)
		n += __atomic_load_n(&p[i].acked, __ATOMIC_RELAXED);
	return n;
}

static void killed_worker_loses_and_duplicates_nothing(void)
{
	struct ts_pg *pg = ts_pg_start();
	char uri[256];
	ts_pg_database(pg, "kill", uri, sizeof(uri));
	static struct td_daemon w; /* static: see above */
	start_worker(&w, "worker", uri);
	pthread_t t[KILL_PUSHERS];
	struct pusher p[KILL_PUSHERS];
	for (int i = 0; i < KILL_PUSHERS; i++) {
		p[i] = (struct pusher){&w, i, 0, 0, 0};
		TH_ASSERT(pthread_create(&t[i], NULL, push_share, &p[i]) == 0);
	}
	/* Twice SIGKILL while four clients are ingesting, each time a new worker. */
	for (int round = 1; round <= 2; round++) {
		int64_t deadline = gi_clock_mono_ms() + 120000;
		while (acked_total(p) < round * KILL_SNAPSHOTS / 3) {
			TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "ingests stalled");
			gi_clock_sleep_ms(5);
		}
		td_kill(&w);
		td_start(&w, "worker", (const char *const[]){"--store", uri, NULL});
	}
	for (int i = 0; i < KILL_PUSHERS; i++)
		pthread_join(t[i], NULL);
	TH_ASSERT_INT_EQ(acked_total(p), KILL_SNAPSHOTS);
	int refused = 0;
	for (int i = 0; i < KILL_PUSHERS; i++)
		refused += p[i].refused;
	TH_ASSERT_MSG(refused > 0, "no ingest met a dead worker: the kills missed");
	/* Every acknowledged snapshot is there once; the counter agrees. */
	TH_ASSERT_INT_EQ(ts_pg_int(uri, "SELECT count(*) FROM snapshots"), KILL_SNAPSHOTS);
	TH_ASSERT_INT_EQ(ts_pg_int(uri, "SELECT count(DISTINCT seq) FROM snapshots"),
	                 KILL_SNAPSHOTS);
	TH_ASSERT_INT_EQ(ts_pg_int(uri, "SELECT min(seq) FROM snapshots"), 0);
	TH_ASSERT_INT_EQ(ts_pg_int(uri, "SELECT max(seq) FROM snapshots"), KILL_SNAPSHOTS - 1);
	TH_ASSERT_INT_EQ(observation_int(&w, "kill1", "snapshots"), KILL_SNAPSHOTS);
	TH_ASSERT_INT_EQ(observation_int(&w, "kill1", "last_seq"), KILL_SNAPSHOTS - 1);
	/* A retry of what was acknowledged is acknowledged again, not stored again. */
	for (int seq = 0; seq < 8; seq++) {
		char *body = td_snapshot("kill1", "demo@127.0.0.1", seq);
		json_t *r = NULL;
		TH_ASSERT_INT_EQ(td_post(&w, "/api/runtime/ingest", body, &r), 200);
		TH_ASSERT(json_is_true(json_object_get(r, "duplicate")));
		json_decref(r);
		free(body);
	}
	TH_ASSERT_INT_EQ(ts_pg_int(uri, "SELECT count(*) FROM snapshots"), KILL_SNAPSHOTS);
	/* The finalize after the crashes profiles all of it. */
	char fin[512];
	snprintf(fin, sizeof(fin),
	         "{\"session_id\":\"kill1\",\"node\":\"demo@127.0.0.1\",\"status\":\"complete\","
	         "\"interval_ms\":1000,\"trace_modules\":[],\"project\":null,\"next_seq\":%d}",
	         KILL_SNAPSHOTS);
	json_t *r = NULL;
	TH_ASSERT_INT_EQ(td_post(&w, "/api/runtime/ingest/finalize", fin, &r), 200);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "snapshots")), KILL_SNAPSHOTS);
	json_decref(r);
	TH_ASSERT_INT_EQ(ts_pg_int(uri, "SELECT count(*) FROM profiles"), 1);
}

/* Waits until `sid` has `n` snapshots stored, failing at once when the
 * worker ends it meanwhile. */
static void wait_stored_running(const struct td_daemon *w, const char *sid, long long n)
{
	char path[256];
	snprintf(path, sizeof(path), "/api/runtime/observation/%s", sid);
	int64_t deadline = gi_clock_mono_ms() + 120000;
	for (;;) {
		json_t *o = NULL;
		TH_ASSERT_INT_EQ(td_get(w, path, &o), 200);
		const char *status = json_string_value(json_object_get(o, "status"));
		long long stored = json_integer_value(json_object_get(o, "snapshots"));
		TH_ASSERT_MSG(
		    status && strcmp(status, "running") == 0,
		    "the worker ended the observation while its monitor was alive: %s (%s)",
		    status ? status : "?", json_string_value(json_object_get(o, "reason")) ?: "");
		json_decref(o);
		if (stored >= n)
			return;
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "fewer than %lld snapshots of %s", n,
		              sid);
		gi_clock_sleep_ms(100);
	}
}

/* The store fails mid-observation, for longer than the worker's old
 * liveness deadline (4 intervals of 250 ms without a stored snapshot):
 * first its disk is full (every insert of a snapshot fails with
 * PostgreSQL's disk_full, while reads work, so the deadline is checked all
 * along), then the server is stopped and started again. The observation
 * goes on (its monitor is alive and says so; the store's failure says
 * nothing about it), the snapshots taken meanwhile wait in the monitor's
 * queue and spool, and every one the monitor numbered is stored once. */
static void store_failures_mid_observation_lose_nothing(void)
{
	static struct ts_pg *pg;
	pg = ts_pg_start();
	char uri[256], sid[64];
	ts_pg_database(pg, "restart", uri, sizeof(uri));
	static struct ts_beam node;
	ts_beam_start(&node, TS_BEAM_ERL_LONG, NULL, NULL);
	free(ts_beam_eval(&node, WORKLOAD));
	static struct td_daemon w, m;
	snprintf(w.data, sizeof(w.data), "%s/worker", th_tmpdir());
	const char *extra[] = {"--store", uri, "--liveness", "4", NULL};
	td_start(&w, "worker", extra);
	start_monitor(&m, "monitor", &w);
	observe_start(&m, &node, sid, sizeof(sid));
	wait_snapshots(&w, sid, 4);
	/* A full disk. */
	ts_pg_exec(uri, "CREATE FUNCTION disk_full() RETURNS trigger AS $$ BEGIN RAISE "
	                "EXCEPTION 'could not extend file: No space left on device' USING "
	                "ERRCODE = 'disk_full'; END $$ LANGUAGE plpgsql");
	ts_pg_exec(uri, "CREATE TRIGGER disk_full BEFORE INSERT ON snapshots FOR EACH ROW "
	                "EXECUTE FUNCTION disk_full()");
	gi_clock_sleep_ms(5000);
	ts_pg_exec(uri, "DROP TRIGGER disk_full ON snapshots");
	long long stored = observation_int(&w, sid, "snapshots");
	wait_stored_running(&w, sid, stored + 8);
	/* The server down and back. */
	ts_pg_stop(pg);
	gi_clock_sleep_ms(5000);
	ts_pg_restart(pg);
	stored = observation_int(&w, sid, "snapshots");
	wait_stored_running(&w, sid, stored + 8);
	long long id = observe_stop(&m, &node);
	session_consistent(uri, &w, sid, id);
	/* Stored: every number the monitor handed out, each once. */
	json_t *s = NULL;
	TH_ASSERT_INT_EQ(td_get(&m, "/api/monitor/observe/status", &s), 200);
	json_t *obs = json_array_get(json_object_get(s, "observations"), 0);
	TH_ASSERT_INT_EQ(observation_int(&w, sid, "snapshots"),
	                 json_integer_value(json_object_get(obs, "snapshots")));
	TH_ASSERT_INT_EQ(
	    json_integer_value(json_object_get(json_object_get(s, "delivery"), "rejected")), 0);
	json_decref(s);
	/* The worker said so without flooding its log: store failures are
	 * logged once per 10 s with a count (about 10 s of failures here). */
	char *log = NULL;
	size_t len = 0;
	TH_ASSERT_OK(gi_fs_read_file(w.log, 64u << 20, &log, &len));
	int lines = 0;
	for (const char *p = log; (p = strstr(p, "error obs_store:")) != NULL; p++)
		lines++;
	gi_free(log);
	TH_ASSERT_MSG(lines >= 1 && lines <= 6, "%d store error lines in the worker's log", lines);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(backends_answer_the_same),
	    TH_TEST(migrations_are_versioned_and_serialised),
	    TH_TEST(errors_tell_the_truth_without_the_password),
	    TH_TEST(dropped_connection_is_reestablished),
	    TH_TEST(observe_finalize_profile_on_postgres),
	    TH_TEST(two_monitors_two_workers_one_database),
	    TH_TEST(interrupt_touches_only_the_owners_observations),
	    TH_TEST(worker_shutdown_leaves_the_other_workers_sessions),
	    TH_TEST(killed_worker_loses_and_duplicates_nothing),
	    TH_TEST(store_failures_mid_observation_lose_nothing),
	    TH_END,
	};
	return th_main(argc, argv, "integration_pg", tests);
}
