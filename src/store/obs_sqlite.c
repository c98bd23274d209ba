/*
 * obs_sqlite.c - the observation store's SQLite backend (the default; see
 * obs_store.h for the contract, obs_store_int.h for the backend interface):
 * DATA/worker.db in WAL mode with synchronous=FULL.
 *
 * Writes run in BEGIN IMMEDIATE transactions so that concurrent writers on
 * other connections wait on the busy timeout instead of failing on a lock
 * upgrade. Statements are prepared per call: the work per request is tiny
 * next to the fsync of synchronous=FULL.
 */
#include "store/obs_store_int.h"

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/log.h"

#define BUSY_TIMEOUT_MS 15000

struct obs_sqlite {
	struct obs_store base; /* first: what the dispatcher sees */
	sqlite3 *db;
};

static const char SCHEMA_V1[] =
    "CREATE TABLE IF NOT EXISTS projects("
    "  path TEXT PRIMARY KEY, indexed_ms INTEGER NOT NULL, summary TEXT);"
    "CREATE TABLE IF NOT EXISTS observations("
    "  session_id TEXT PRIMARY KEY, node TEXT NOT NULL, status TEXT NOT NULL,"
    "  reason TEXT, started_ms INTEGER, stopped_ms INTEGER, interval_ms INTEGER,"
    "  trace_modules TEXT, project TEXT, snapshots INTEGER NOT NULL DEFAULT 0,"
    "  last_seq INTEGER, profile_id INTEGER, updated_ms INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS observations_updated ON observations(updated_ms);"
    "CREATE TABLE IF NOT EXISTS snapshots("
    "  session_id TEXT NOT NULL, seq INTEGER NOT NULL, timestamp_ms INTEGER,"
    "  body TEXT NOT NULL, PRIMARY KEY(session_id, seq)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS profiles("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT, node TEXT,"
    "  project TEXT, created_ms INTEGER NOT NULL, body TEXT NOT NULL);";

static int db_error(struct obs_sqlite *st, const char *what)
{
	int code = sqlite3_errcode(st->db);
	gi_log_error("obs_store", "%s: %s", what, sqlite3_errmsg(st->db));
	if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB)
		return GI_ECORRUPT;
	if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
		return GI_EBUSY;
	return GI_EDB;
}

static int exec(struct obs_sqlite *st, const char *sql)
{
	if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return db_error(st, sql);
	return 0;
}

static int prepare(struct obs_sqlite *st, const char *sql, sqlite3_stmt **out)
{
	if (sqlite3_prepare_v2(st->db, sql, -1, out, NULL) != SQLITE_OK)
		return db_error(st, "prepare");
	return 0;
}

static int user_version(struct obs_sqlite *st, int *out)
{
	sqlite3_stmt *s;
	int rc = prepare(st, "PRAGMA user_version", &s);
	if (rc)
		return rc;
	if (sqlite3_step(s) == SQLITE_ROW)
		*out = sqlite3_column_int(s, 0);
	else
		rc = db_error(st, "user_version");
	sqlite3_finalize(s);
	return rc;
}

static int migrate(struct obs_sqlite *st)
{
	int version = 0;
	int rc = exec(st, "BEGIN IMMEDIATE");
	if (rc)
		return rc;
	rc = user_version(st, &version);
	if (rc)
		goto fail;
	if (version > OBS_STORE_SCHEMA_VERSION) {
		gi_log_error("obs_store", "schema version %d is newer than this build (%d)",
		             version, OBS_STORE_SCHEMA_VERSION);
		rc = GI_EDBVERSION;
		goto fail;
	}
	if (version < 1) {
		rc = exec(st, SCHEMA_V1);
		if (rc)
			goto fail;
		rc = exec(st, "PRAGMA user_version = 1");
		if (rc)
			goto fail;
		version = 1;
	}
	if (version < 2) {
		/* v2: the seq the monitor's next snapshot would have had, from the
		 * finalize, which reveals snapshots lost after the last that arrived. */
		rc = exec(st, "ALTER TABLE observations ADD COLUMN next_seq INTEGER;"
		              " PRAGMA user_version = 2");
		if (rc)
			goto fail;
	}
	if (version < 3) {
		/* v3: the worker instance that stored the latest snapshot, so that
		 * a worker shutting down interrupts only its own observations. */
		rc = exec(st, "ALTER TABLE observations ADD COLUMN owner TEXT;"
		              " PRAGMA user_version = 3");
		if (rc)
			goto fail;
	}
	return exec(st, "COMMIT");
fail:
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

static void sqlite_close(struct obs_store *base);
static const struct obs_store_ops SQLITE_OPS;

int obs_sqlite_open(const char *data_dir, struct obs_store **out)
{
	*out = NULL;
	if (gi_fs_mkdir_p(data_dir) != 0) {
		gi_log_error("obs_store", "cannot create data directory %s", data_dir);
		return GI_EIO;
	}
	struct gi_buf path;
	gi_buf_init(&path, 0);
	gi_buf_printf(&path, "%s/%s", data_dir, OBS_STORE_FILE);
	struct obs_sqlite *st = gi_calloc(1, sizeof(*st));
	st->base.ops = &SQLITE_OPS;
	int rc = 0;
	if (sqlite3_open_v2(gi_buf_str(&path), &st->db,
	                    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
	                    NULL) != SQLITE_OK) {
		rc = st->db ? db_error(st, "open") : GI_EDB;
		goto fail;
	}
	sqlite3_busy_timeout(st->db, BUSY_TIMEOUT_MS);
	rc = exec(st, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON");
	if (rc)
		goto fail;
	rc = migrate(st);
	if (rc)
		goto fail;
	gi_buf_destroy(&path);
	*out = &st->base;
	return 0;
fail:
	gi_buf_destroy(&path);
	sqlite_close(&st->base);
	return rc;
}

static void sqlite_close(struct obs_store *base)
{
	struct obs_sqlite *st = (struct obs_sqlite *)base;
	if (!st)
		return;
	sqlite3_close(st->db);
	gi_free(st);
}

static void bind_text_or_null(sqlite3_stmt *s, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, i);
}

static void bind_json(sqlite3_stmt *s, int i, json_t *v)
{
	if (!v || json_is_null(v)) {
		sqlite3_bind_null(s, i);
		return;
	}
	char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	sqlite3_bind_text(s, i, text ? text : "null", -1, SQLITE_TRANSIENT);
	free(text);
}

/* Runs a prepared statement that returns no rows, then finalises it. */
static int step_done(struct obs_sqlite *st, sqlite3_stmt *s, const char *what)
{
	int rc = sqlite3_step(s) == SQLITE_DONE ? 0 : db_error(st, what);
	sqlite3_finalize(s);
	return rc;
}

/* Whether the observation has ended for good: it has a profile, or it was
 * finalised (complete, or interrupted for any reason but a worker shutdown,
 * which a restarted worker resumes). Unknown sessions are not final. */
static int observation_final(struct obs_sqlite *st, const char *session_id, bool *final)
{
	sqlite3_stmt *s;
	*final = false;
	int rc =
	    prepare(st,
	            "SELECT 1 FROM observations WHERE session_id = ?1 AND"
	            " (profile_id IS NOT NULL OR status = 'complete' OR"
	            "  (status = 'interrupted' AND coalesce(reason, '') <> 'worker shut down'))",
	            &s);
	if (rc)
		return rc;
	sqlite3_bind_text(s, 1, session_id, -1, SQLITE_TRANSIENT);
	int step = sqlite3_step(s);
	if (step == SQLITE_ROW)
		*final = true;
	else if (step != SQLITE_DONE)
		rc = db_error(st, "read observation state");
	sqlite3_finalize(s);
	return rc;
}

static int sqlite_snapshot_add(struct obs_store *base, const char *session_id, const char *node,
                               long long seq, json_t *snapshot, bool *duplicate)
{
	struct obs_sqlite *st = (struct obs_sqlite *)base;
	*duplicate = false;
	sqlite3_stmt *s = NULL;
	int64_t now = gi_clock_wall_ms();
	json_t *ts = json_object_get(snapshot, "timestamp_ms");
	long long ts_ms = json_is_integer(ts) ? json_integer_value(ts) : now;
	int rc = exec(st, "BEGIN IMMEDIATE");
	if (rc)
		return rc;
	bool final = false;
	rc = observation_final(st, session_id, &final);
	if (rc)
		goto fail;
	if (final) {
		/* A finished observation is immutable: its profile was built from
		 * exactly what it holds. Checked first, so that a late retry of a
		 * snapshot already stored is refused the same way. */
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		return GI_EEXIST;
	}
	rc = prepare(st,
	             "INSERT OR IGNORE INTO snapshots(session_id, seq, timestamp_ms, body) "
	             "VALUES(?1, ?2, ?3, ?4)",
	             &s);
	if (rc)
		goto fail;
	sqlite3_bind_text(s, 1, session_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 2, seq);
	sqlite3_bind_int64(s, 3, ts_ms);
	bind_json(s, 4, snapshot);
	rc = step_done(st, s, "insert snapshot");
	if (rc)
		goto fail;
	if (sqlite3_changes(st->db) == 0) {
		*duplicate = true;
		return exec(st, "COMMIT");
	}
	rc = prepare(st,
	             "INSERT INTO observations(session_id, node, status, started_ms, interval_ms,"
	             " snapshots, last_seq, updated_ms, owner)"
	             " VALUES(?1, ?2, 'running', ?3, ?4, 1, ?5, ?6, ?7) "
	             "ON CONFLICT(session_id) DO UPDATE SET snapshots = snapshots + 1,"
	             " last_seq = max(coalesce(last_seq, -1), ?5), updated_ms = ?6,"
	             " owner = coalesce(?7, owner),"
	             " started_ms = min(coalesce(started_ms, ?3), ?3),"
	             " status = CASE WHEN status = 'interrupted' AND reason = 'worker shut down'"
	             "   THEN 'running' ELSE status END,"
	             " reason = CASE WHEN status = 'interrupted' AND reason = 'worker shut down'"
	             "   THEN NULL ELSE reason END",
	             &s);
	if (rc)
		goto fail;
	json_t *window = json_object_get(snapshot, "window_ms");
	sqlite3_bind_text(s, 1, session_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 2, node, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 3, ts_ms);
	if (json_is_integer(window))
		sqlite3_bind_int64(s, 4, json_integer_value(window));
	else
		sqlite3_bind_null(s, 4);
	sqlite3_bind_int64(s, 5, seq);
	sqlite3_bind_int64(s, 6, now);
	bind_text_or_null(s, 7, st->base.owner[0] ? st->base.owner : NULL);
	rc = step_done(st, s, "upsert observation");
	if (rc)
		goto fail;
	return exec(st, "COMMIT");
fail:
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

static int sqlite_finalize(struct obs_store *base, json_t *fin)
{
	struct obs_sqlite *st = (struct obs_sqlite *)base;
	sqlite3_stmt *s = NULL;
	int64_t now = gi_clock_wall_ms();
	int rc = prepare(
	    st,
	    "INSERT INTO observations(session_id, node, status, reason, started_ms, stopped_ms,"
	    " interval_ms, trace_modules, project, updated_ms, next_seq)"
	    " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) "
	    "ON CONFLICT(session_id) DO UPDATE SET status = ?3, reason = ?4,"
	    " started_ms = coalesce(?5, started_ms), stopped_ms = ?6,"
	    " interval_ms = coalesce(?7, interval_ms), trace_modules = ?8, project = ?9,"
	    " updated_ms = ?10, next_seq = ?11",
	    &s);
	if (rc)
		return rc;
	sqlite3_bind_text(s, 1, obs_json_str_or_null(fin, "session_id"), -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 2, obs_json_str_or_null(fin, "node"), -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 3, obs_json_str_or_null(fin, "status"), -1, SQLITE_TRANSIENT);
	bind_text_or_null(s, 4, obs_json_str_or_null(fin, "reason"));
	long long v;
	if ((v = obs_json_int_or(fin, "started_ms", -1)) >= 0)
		sqlite3_bind_int64(s, 5, v);
	else
		sqlite3_bind_null(s, 5);
	sqlite3_bind_int64(s, 6, obs_json_int_or(fin, "stopped_ms", now));
	if ((v = obs_json_int_or(fin, "interval_ms", -1)) >= 0)
		sqlite3_bind_int64(s, 7, v);
	else
		sqlite3_bind_null(s, 7);
	bind_json(s, 8, json_object_get(fin, "trace_modules"));
	bind_text_or_null(s, 9, obs_json_str_or_null(fin, "project"));
	sqlite3_bind_int64(s, 10, now);
	if ((v = obs_json_int_or(fin, "next_seq", -1)) >= 0)
		sqlite3_bind_int64(s, 11, v);
	else
		sqlite3_bind_null(s, 11);
	return step_done(st, s, "finalize observation");
}

static int sqlite_snapshots_each(struct obs_store *base, const char *session_id, long *count,
                                 int (*fn)(void *ctx, json_t *snapshot), void *ctx)
{
	struct obs_sqlite *st = (struct obs_sqlite *)base;
	sqlite3_stmt *s = NULL;
	/* One read transaction: the count and the rows are of the same moment. */
	int rc = exec(st, "BEGIN");
	if (rc)
		return rc;
	if (count) {
		rc = prepare(st, "SELECT count(*) FROM snapshots WHERE session_id = ?1", &s);
		if (rc)
			goto out;
		sqlite3_bind_text(s, 1, session_id, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(s) != SQLITE_ROW) {
			rc = db_error(st, "count snapshots");
			goto out;
		}
		*count = (long)sqlite3_column_int64(s, 0);
		sqlite3_finalize(s);
		s = NULL;
	}
	rc = prepare(st, "SELECT body FROM snapshots WHERE session_id = ?1 ORDER BY seq", &s);
	if (rc)
		goto out;
	sqlite3_bind_text(s, 1, session_id, -1, SQLITE_TRANSIENT);
	int step;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		const char *body = (const char *)sqlite3_column_text(s, 0);
		json_t *snap = body ? json_loads(body, 0, NULL) : NULL;
		if (!snap)
			continue;
		rc = fn(ctx, snap);
		json_decref(snap);
		if (rc)
			break;
	}
	if (rc == 0 && step != SQLITE_DONE)
		rc = db_error(st, "read snapshots");
out:
	sqlite3_finalize(s);
	sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL);
	return rc;
}

static int sqlite_gaps(struct obs_store *base, const char *session_id, long long interval_ms,
                       long long next_seq, json_t **gaps_out, long long *missing_out)
{
	struct obs_sqlite *st = (struct obs_sqlite *)base;
	*gaps_out = NULL;
	*missing_out = 0;
	sqlite3_stmt *s;
	int rc = prepare(
	    st, "SELECT seq, timestamp_ms FROM snapshots WHERE session_id = ?1 ORDER BY seq", &s);
	if (rc)
		return rc;
	sqlite3_bind_text(s, 1, session_id, -1, SQLITE_TRANSIENT);
	struct obs_gaps walk;
	obs_gaps_init(&walk, interval_ms);
	int step;
	while ((step = sqlite3_step(s)) == SQLITE_ROW)
		obs_gaps_row(&walk, sqlite3_column_int64(s, 0),
		             sqlite3_column_type(s, 1) == SQLITE_NULL ? -1
		                                                      : sqlite3_column_int64(s, 1));
	if (step != SQLITE_DONE) {
		rc = db_error(st, "read snapshot numbers");
		sqlite3_finalize(s);
		obs_gaps_destroy(&walk);
		return rc;
	}
	sqlite3_finalize(s);
	obs_gaps_finish(&walk, next_seq, gaps_out, missing_out);
	return 0;
}

static json_t *column_json(sqlite3_stmt *s, int i)
{
	if (sqlite3_column_type(s, i) == SQLITE_NULL)
		return json_null();
	const char *text = (const char *)sqlite3_column_text(s, i);
	json_t *v = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
	return v ? v : json_null();
}

static json_t *column_text(sqlite3_stmt *s, int i)
{
	if (sqlite3_column_type(s, i) == SQLITE_NULL)
		return json_null();
	return json_string((const char *)sqlite3_column_text(s, i));
}

static json_t *column_int(sqlite3_stmt *s, int i)
{
	if (sqlite3_column_type(s, i) == SQLITE_NULL)
		return json_null();
	return json_integer(sqlite3_column_int64(s, i));
}

#define OBSERVATION_COLUMNS                                                                     \
	"session_id, node, status, reason, started_ms, stopped_ms, interval_ms, trace_modules," \
	" project, snapshots, last_seq, profile_id, next_seq"

static json_t *observation_row(sqlite3_stmt *s)
{
	json_t *o = json_object();
	json_object_set_new(o, "session_id", column_text(s, 0));
	json_object_set_new(o, "node", column_text(s, 1));
	json_object_set_new(o, "status", column_text(s, 2));
	json_object_set_new(o, "reason", column_text(s, 3));
	json_object_set_new(o, "started_ms", column_int(s, 4));
	json_object_set_new(o, "stopped_ms", column_int(s, 5));
	json_object_set_new(o, "interval_ms", column_int(s, 6));
	json_object_set_new(o, "trace_modules", column_json(s, 7));
	json_object_set_new(o, "project", column_text(s, 8));
	json_object_set_new(o, "snapshots", column_int(s, 9));
	json_object_set_new(o, "last_seq", column_int(s, 10));
	json_object_set_new(o, "profile_id", column_int(s, 11));
	json_object_set_new(o, "next_seq", column_int(s, 12));
	return o;
}

/* Runs a query for one row, which `row` turns into *out; GI_ENOTFOUND when
 * there is none. Finalizes `s`. */
static int one_row(struct obs_sqlite *st, sqlite3_stmt *s, json_t *(*row)(sqlite3_stmt *),
                   const char *what, json_t **out)
{
	int rc = 0;
	int step = sqlite3_step(s);
	if (step == SQLITE_ROW)
		*out = row(s);
	else if (step == SQLITE_DONE)
		rc = GI_ENOTFOUND;
	else
		rc = db_error(st, what);
	sqlite3_finalize(s);
	return rc;
}

static int sqlite_observation_get(struct obs_store *base, const char *session_id, json_t **out)
{
	struct obs_sqlite *st = (struct obs_sqlite *)base;
	*out = NULL;
	sqlite3_stmt *s;
	int rc = prepare(
	    st, "SELECT " OBSERVATION_COLUMNS " FROM observations WHERE session_id = ?1", &s);
	if (rc)
		return rc;
	sqlite3_bind_text(s, 1, session_id, -1, SQLITE_TRANSIENT);
	return one_row(st, s, observation_row, "read observation", out);
}

/* Runs a query whose rows `row` turns into objects; collects them in an array. */
static int list_rows(struct obs_sqlite *st, sqlite3_stmt *s, json_t *(*row)(sqlite3_stmt *),
                     json_t **out)
{
	json_t *arr = json_array();
	int step;
	while ((step = sqlite3_step(s)) == SQLITE_ROW)
		json_array_append_new(arr, row(s));
	int rc = 0;
	if (step != SQLITE_DONE) {
		rc = db_error(st, "list");
		json_decref(arr);
		arr = NULL;
	}
	sqlite3_finalize(s);
	*out = arr;
	return rc;
}

static int sqlite_observations_list(struct obs_store *base, int limit, json_t **out)
{
	struct obs_sqlite *st = (struct obs_sqlite *)base;
	*out = NULL;
	sqlite3_stmt *s;
	int rc = prepare(st,
	                 "SELECT " OBSERVATION_COLUMNS
	                 " FROM observations ORDER BY updated_ms DESC, rowid DESC LIMIT ?1",
	                 &s);
	if (rc)
		return rc;
	sqlite3_bind_int(s, 1, limit);
	return list_rows(st, s, observation_row, out);
}

static int sqlite_interrupt_running(struct obs_store *base, const char *reason, int *count)
{
	struct obs_sqlite *st = (struct obs_sqlite *)base;
	sqlite3_stmt *s;
	int rc =
	    prepare(st,
	            "UPDATE observations SET status = 'interrupted', reason = ?1,"
	            " stopped_ms = coalesce(stopped_ms, ?2), updated_ms = ?2"
	            " WHERE status = 'running' AND (?3 IS NULL OR owner IS NULL OR owner = ?3)",
	            &s);
	if (rc)
		return rc;
	sqlite3_bind_text(s, 1, reason, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 2, gi_clock_wall_ms());
	bind_text_or_null(s, 3, st->base.owner[0] ? st->base.owner : NULL);
	rc = step_done(st, s, "interrupt running observations");
	if (count)
		*count = rc ? 0 : sqlite3_changes(st->db);
	return rc;
}

static json_t *running_row(sqlite3_stmt *s)
{
	json_t *o = json_object();
	json_object_set_new(o, "session_id", column_text(s, 0));
	json_object_set_new(o, "node", column_text(s, 1));
	json_object_set_new(o, "interval_ms", column_int(s, 2));
	json_object_set_new(o, "updated_ms", column_int(s, 3));
	json_object_set_new(o, "last_timestamp_ms", column_int(s, 4));
	return o;
}

static int sqlite_running_list(struct obs_store *base, json_t **out)
{
	struct obs_sqlite *st = (struct obs_sqlite *)base;
	*out = NULL;
	sqlite3_stmt *s;
	int rc = prepare(st,
	                 "SELECT o.session_id, o.node, o.interval_ms, o.updated_ms,"
	                 " (SELECT timestamp_ms FROM snapshots n WHERE n.session_id ="
	                 " o.session_id AND n.seq = o.last_seq) FROM observations o WHERE o.status "
	                 "= 'running' OR"
	                 " (o.status = 'interrupted' AND o.reason = 'worker shut down' AND"
	                 "  o.profile_id IS NULL)",
	                 &s);
	if (rc)
		return rc;
	return list_rows(st, s, running_row, out);
}

static int sqlite_profile_add(struct obs_store *base, const char *session_id, const char *node,
                              const char *project, json_t *profile, long long *id_out)
{
	struct obs_sqlite *st = (struct obs_sqlite *)base;
	sqlite3_stmt *s = NULL;
	int rc = exec(st, "BEGIN IMMEDIATE");
	if (rc)
		return rc;
	rc = prepare(st,
	             "INSERT INTO profiles(session_id, node, project, created_ms, body)"
	             " VALUES(?1, ?2, ?3, ?4, ?5)",
	             &s);
	if (rc)
		goto fail;
	bind_text_or_null(s, 1, session_id);
	bind_text_or_null(s, 2, node);
	bind_text_or_null(s, 3, project);
	sqlite3_bind_int64(s, 4, gi_clock_wall_ms());
	bind_json(s, 5, profile);
	rc = step_done(st, s, "insert profile");
	if (rc)
		goto fail;
	long long id = sqlite3_last_insert_rowid(st->db);
	rc = prepare(st, "UPDATE observations SET profile_id = ?1 WHERE session_id = ?2", &s);
	if (rc)
		goto fail;
	sqlite3_bind_int64(s, 1, id);
	bind_text_or_null(s, 2, session_id);
	rc = step_done(st, s, "link profile");
	if (rc)
		goto fail;
	rc = exec(st, "COMMIT");
	if (rc == 0)
		*id_out = id;
	return rc;
fail:
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

static json_t *profile_row(sqlite3_stmt *s)
{
	json_t *o = json_object();
	json_object_set_new(o, "id", column_int(s, 0));
	json_object_set_new(o, "session_id", column_text(s, 1));
	json_object_set_new(o, "node", column_text(s, 2));
	json_object_set_new(o, "project", column_text(s, 3));
	json_object_set_new(o, "created_ms", column_int(s, 4));
	if (sqlite3_column_count(s) > 5)
		json_object_set_new(o, "profile", column_json(s, 5));
	return o;
}

static int sqlite_profile_get(struct obs_store *base, long long id, json_t **out)
{
	struct obs_sqlite *st = (struct obs_sqlite *)base;
	*out = NULL;
	sqlite3_stmt *s;
	const char *sql = id > 0 ? "SELECT id, session_id, node, project, created_ms, body"
	                           " FROM profiles WHERE id = ?1"
	                         : "SELECT id, session_id, node, project, created_ms, body"
	                           " FROM profiles ORDER BY id DESC LIMIT 1";
	int rc = prepare(st, sql, &s);
	if (rc)
		return rc;
	if (id > 0)
		sqlite3_bind_int64(s, 1, id);
	return one_row(st, s, profile_row, "read profile", out);
}

static int sqlite_profiles_list(struct obs_store *base, int limit, json_t **out)
{
	struct obs_sqlite *st = (struct obs_sqlite *)base;
	*out = NULL;
	sqlite3_stmt *s;
	int rc = prepare(st,
	                 "SELECT id, session_id, node, project, created_ms FROM profiles"
	                 " ORDER BY id DESC LIMIT ?1",
	                 &s);
	if (rc)
		return rc;
	sqlite3_bind_int(s, 1, limit);
	return list_rows(st, s, profile_row, out);
}

static int sqlite_project_put(struct obs_store *base, const char *path, json_t *summary)
{
	struct obs_sqlite *st = (struct obs_sqlite *)base;
	sqlite3_stmt *s;
	int rc = prepare(st,
	                 "INSERT INTO projects(path, indexed_ms, summary) VALUES(?1, ?2, ?3)"
	                 " ON CONFLICT(path) DO UPDATE SET indexed_ms = ?2, summary = ?3",
	                 &s);
	if (rc)
		return rc;
	sqlite3_bind_text(s, 1, path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 2, gi_clock_wall_ms());
	bind_json(s, 3, summary);
	return step_done(st, s, "store project");
}

static json_t *project_row(sqlite3_stmt *s)
{
	json_t *o = json_object();
	json_object_set_new(o, "path", column_text(s, 0));
	json_object_set_new(o, "indexed_ms", column_int(s, 1));
	json_object_set_new(o, "summary", column_json(s, 2));
	return o;
}

static int sqlite_projects_list(struct obs_store *base, json_t **out)
{
	struct obs_sqlite *st = (struct obs_sqlite *)base;
	*out = NULL;
	sqlite3_stmt *s;
	int rc = prepare(
	    st, "SELECT path, indexed_ms, summary FROM projects ORDER BY indexed_ms DESC", &s);
	if (rc)
		return rc;
	return list_rows(st, s, project_row, out);
}

static const struct obs_store_ops SQLITE_OPS = {
    .name = "sqlite",
    .close = sqlite_close,
    .snapshot_add = sqlite_snapshot_add,
    .finalize = sqlite_finalize,
    .snapshots_each = sqlite_snapshots_each,
    .gaps = sqlite_gaps,
    .observation_get = sqlite_observation_get,
    .observations_list = sqlite_observations_list,
    .interrupt_running = sqlite_interrupt_running,
    .running_list = sqlite_running_list,
    .profile_add = sqlite_profile_add,
    .profile_get = sqlite_profile_get,
    .profiles_list = sqlite_profiles_list,
    .project_put = sqlite_project_put,
    .projects_list = sqlite_projects_list,
};
