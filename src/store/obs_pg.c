/*
 * obs_pg.c - the observation store's PostgreSQL backend (see obs_store.h
 * for the contract, docs/SCHEMA.md for the tables): one database that any
 * number of workers share.
 *
 * Invariants:
 *  - The schema is versioned by the schema_version table; migrations run in
 *    one transaction under a transaction-level advisory lock, so that two
 *    workers starting at once apply each migration once, and a failed
 *    migration leaves the previous schema.
 *  - A snapshot is stored once per (session_id, seq): the primary key of
 *    snapshots is the constraint, INSERT ... ON CONFLICT DO NOTHING the
 *    retry. The writes of one session take the advisory lock
 *    (SESSION_LOCK_CLASS, hashtext(session_id)) first, so that the
 *    immutability check, the insert and the counters of the observation are
 *    one step whoever runs them.
 *  - A write returns 0 only after the server answered COMMIT; a connection
 *    lost on the way is re-established once and the operation repeated when
 *    it is idempotent (every write but a profile without an observation is),
 *    so a retried ingest never stores twice and never loses what was
 *    acknowledged.
 *  - The location's password never reaches a log: messages show the
 *    location through obs_store_location_redact, and libpq's own messages
 *    do not include it.
 *
 * Statements are sent with text parameters (PQexecParams); JSON documents
 * are text columns holding the document as it came.
 */
#include "store/obs_store_int.h"

#include <libpq-fe.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "base/dynlib.h"
#include "base/error.h"
#include "base/log.h"

/* libpq, loaded when a PostgreSQL store is opened (base/dynlib.h): the
 * other commands never map it nor the libraries it pulls in. */
#define PG_FUNCTIONS(X)         \
	X(PQclear)              \
	X(PQcmdTuples)          \
	X(PQconnectdbParams)    \
	X(PQerrorMessage)       \
	X(PQexec)               \
	X(PQexecParams)         \
	X(PQfinish)             \
	X(PQgetisnull)          \
	X(PQgetvalue)           \
	X(PQnfields)            \
	X(PQntuples)            \
	X(PQreset)              \
	X(PQresultErrorField)   \
	X(PQresultErrorMessage) \
	X(PQresultStatus)       \
	X(PQstatus)             \
	X(PQtransactionStatus)
#define PG_POINTER(f) __typeof__(f) *f;
static struct {
	PG_FUNCTIONS(PG_POINTER)
} pq;
static pthread_once_t pq_once = PTHREAD_ONCE_INIT;
static int pq_rc;
static char pq_err[256];

static void pq_load(void)
{
	static const char *const sonames[] = {"libpq.so.5", "libpq.so", NULL};
#define PG_SYMBOL(f) {#f, (void **)&pq.f},
	const struct gi_dynlib_symbol symbols[] = {PG_FUNCTIONS(PG_SYMBOL)};
	pq_rc = gi_dynlib_load(sonames, "libpq5", symbols, sizeof(symbols) / sizeof(symbols[0]),
	                       pq_err, sizeof(pq_err));
}

/* The calls below go through the table. */
#define PQclear              (*pq.PQclear)
#define PQcmdTuples          (*pq.PQcmdTuples)
#define PQconnectdbParams    (*pq.PQconnectdbParams)
#define PQerrorMessage       (*pq.PQerrorMessage)
#define PQexec               (*pq.PQexec)
#define PQexecParams         (*pq.PQexecParams)
#define PQfinish             (*pq.PQfinish)
#define PQgetisnull          (*pq.PQgetisnull)
#define PQgetvalue           (*pq.PQgetvalue)
#define PQnfields            (*pq.PQnfields)
#define PQntuples            (*pq.PQntuples)
#define PQreset              (*pq.PQreset)
#define PQresultErrorField   (*pq.PQresultErrorField)
#define PQresultErrorMessage (*pq.PQresultErrorMessage)
#define PQresultStatus       (*pq.PQresultStatus)
#define PQstatus             (*pq.PQstatus)
#define PQtransactionStatus  (*pq.PQtransactionStatus)
#define PG_SCHEMA_VERSION    2
#define PG_PARAMS_MAX        12
#define PG_FETCH_ROWS        "256"
#define PG_CONNECT_TIMEOUT   "10"
#define PG_LOCATION_LOG_MAX  512
/* Keys of the advisory locks: hashtext('giulia.schema') and
 * hashtext('giulia.session') computed by the server, so that no constant of
 * ours can collide with an application's small integers by accident. */
#define SCHEMA_LOCK  "SELECT pg_advisory_xact_lock(hashtext('giulia.schema'))"
#define SESSION_LOCK "SELECT pg_advisory_xact_lock(hashtext('giulia.session'), hashtext($1))"

struct obs_pg {
	struct obs_store base; /* first: what the dispatcher sees */
	PGconn *conn;
	char location[PG_LOCATION_LOG_MAX]; /* redacted, for messages */
};

/* Version N of the schema is MIGRATIONS[N - 1], applied in order. */
static const char *const MIGRATIONS[PG_SCHEMA_VERSION] = {
    /* 1: the tables of SQLite's schema version 2, with the same meaning. */
    "CREATE TABLE projects("
    "  path text PRIMARY KEY, indexed_ms bigint NOT NULL, summary text);"
    "CREATE TABLE observations("
    "  session_id text PRIMARY KEY, id bigserial UNIQUE, node text NOT NULL,"
    "  status text NOT NULL, reason text, started_ms bigint, stopped_ms bigint,"
    "  interval_ms bigint, trace_modules text, project text,"
    "  snapshots bigint NOT NULL DEFAULT 0, last_seq bigint, profile_id bigint,"
    "  updated_ms bigint NOT NULL, next_seq bigint);"
    "CREATE INDEX observations_updated ON observations(updated_ms);"
    "CREATE INDEX observations_status ON observations(status);"
    "CREATE TABLE snapshots("
    "  session_id text NOT NULL, seq bigint NOT NULL, timestamp_ms bigint,"
    "  body text NOT NULL, CONSTRAINT snapshots_once PRIMARY KEY(session_id, seq));"
    "CREATE TABLE profiles("
    "  id bigserial PRIMARY KEY, session_id text, node text, project text,"
    "  created_ms bigint NOT NULL, body text NOT NULL);"
    "CREATE INDEX profiles_session ON profiles(session_id);",
    /* 2: the worker instance that stored the latest snapshot (SQLite v3),
     * so that a worker shutting down interrupts only its own observations. */
    "ALTER TABLE observations ADD COLUMN owner text;",
};

/* ---- parameters ---- */

struct pg_params {
	int n;
	const char *v[PG_PARAMS_MAX];
	char num[PG_PARAMS_MAX][24];
	char *owned[PG_PARAMS_MAX];
};

static void param_text(struct pg_params *p, const char *s)
{
	p->v[p->n++] = s;
}

static void param_int(struct pg_params *p, long long x)
{
	snprintf(p->num[p->n], sizeof(p->num[p->n]), "%lld", x);
	p->v[p->n] = p->num[p->n];
	p->n++;
}

/* An integer, or NULL when x < 0 (the fields it carries are never negative). */
static void param_int_or_null(struct pg_params *p, long long x)
{
	if (x >= 0)
		param_int(p, x);
	else
		param_text(p, NULL);
}

static void param_json(struct pg_params *p, json_t *v)
{
	if (!v || json_is_null(v)) {
		param_text(p, NULL);
		return;
	}
	char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	p->owned[p->n] = text;
	param_text(p, text ? text : "null");
}

static void params_destroy(struct pg_params *p)
{
	for (int i = 0; i < p->n; i++)
		free(p->owned[i]); /* jansson's allocation */
}

/* ---- connection and statements ---- */

/* Failures of the server (down, restarting, a full disk) are logged at
 * most once per OUTAGE_LOG_MS for the whole process, the next line saying
 * how many were left out: while PostgreSQL was down, every statement of
 * every request and its reconnect logged (about 150 lines a second). */
#define OUTAGE_LOG_MS 10000
static pthread_mutex_t outage_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t outage_logged_ms;
static unsigned long outage_suppressed;

static void outage_log(enum gi_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void outage_log(enum gi_log_level level, const char *fmt, ...)
{
	int64_t now = gi_clock_mono_ms();
	pthread_mutex_lock(&outage_lock);
	bool quiet = outage_logged_ms != 0 && now - outage_logged_ms < OUTAGE_LOG_MS;
	unsigned long left_out = 0;
	if (quiet) {
		outage_suppressed++;
	} else {
		outage_logged_ms = now;
		left_out = outage_suppressed;
		outage_suppressed = 0;
	}
	pthread_mutex_unlock(&outage_lock);
	if (quiet)
		return;
	char text[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (left_out > 0)
		gi_log(level, "obs_store", "%s (and %lu more store failures in the last %d s)",
		       text, left_out, OUTAGE_LOG_MS / 1000);
	else
		gi_log(level, "obs_store", "%s", text);
}

/* The error code for a failure of the connection or of a statement. */
static int pg_error_code(struct obs_pg *st, PGresult *res)
{
	if (PQstatus(st->conn) != CONNECTION_OK)
		return GI_ECONNECT;
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	if (state && strncmp(state, "28", 2) == 0) /* invalid authorization */
		return GI_EDENIED;
	if (state && strncmp(state, "08", 2) == 0) /* connection exception */
		return GI_ECONNECT;
	return GI_EDB;
}

/* Runs `sql` with `p` (NULL: no parameters); *out (may be NULL: cleared) gets the
 * result of a statement that succeeded. Logs what failed. */
static int pg_run(struct obs_pg *st, const char *what, const char *sql, struct pg_params *p,
                  PGresult **out)
{
	if (out)
		*out = NULL;
	/* Without parameters, the simple protocol: a migration is several
	 * statements in one string. */
	PGresult *res = p ? PQexecParams(st->conn, sql, p->n, NULL, p->v, NULL, NULL, 0)
	                  : PQexec(st->conn, sql);
	ExecStatusType status = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
	if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) {
		if (out)
			*out = res;
		else
			PQclear(res);
		return 0;
	}
	int rc = pg_error_code(st, res);
	const char *msg = res ? PQresultErrorMessage(res) : "";
	if (!msg || !*msg)
		msg = PQerrorMessage(st->conn);
	outage_log(GI_LOG_ERROR, "%s on %s: %s", what, st->location,
	           msg && *msg ? msg : "no answer from the server");
	PQclear(res);
	return rc;
}

/* Ends a transaction that failed: a lost connection has ended it already. */
static void pg_rollback(struct obs_pg *st)
{
	if (PQstatus(st->conn) == CONNECTION_OK && PQtransactionStatus(st->conn) != PQTRANS_IDLE)
		PQclear(PQexec(st->conn, "ROLLBACK"));
}

/* Connects again after the connection dropped (server restarted, network
 * cut). 0 when it is back. */
static int pg_reconnect(struct obs_pg *st)
{
	PQreset(st->conn);
	if (PQstatus(st->conn) == CONNECTION_OK) {
		gi_log_info("obs_store", "connection to %s lost and re-established", st->location);
		return 0;
	}
	outage_log(GI_LOG_ERROR, "connection to %s lost; cannot reconnect: %s", st->location,
	           PQerrorMessage(st->conn));
	return GI_ECONNECT;
}

/* Whether a failed operation may run once more: its connection was lost
 * and came back. */
static bool pg_retry(struct obs_pg *st, int rc)
{
	return rc == GI_ECONNECT && pg_reconnect(st) == 0;
}

/* Makes sure the connection is usable before an operation starts. */
static int pg_ready(struct obs_pg *st)
{
	if (PQstatus(st->conn) == CONNECTION_OK)
		return 0;
	return pg_reconnect(st);
}

static long long value_int(PGresult *res, int row, int col)
{
	return strtoll(PQgetvalue(res, row, col), NULL, 10);
}

static int pg_migrate(struct obs_pg *st)
{
	PGresult *res = NULL;
	int rc = pg_run(st, "begin migration", "BEGIN", NULL, NULL);
	if (rc)
		return rc;
	rc = pg_run(st, "lock the schema", SCHEMA_LOCK, NULL, NULL);
	if (rc)
		goto fail;
	rc = pg_run(st, "create schema_version",
	            "CREATE TABLE IF NOT EXISTS schema_version("
	            " version integer PRIMARY KEY, applied_ms bigint NOT NULL)",
	            NULL, NULL);
	if (rc)
		goto fail;
	rc = pg_run(st, "read schema_version",
	            "SELECT coalesce(max(version), 0) FROM schema_version", NULL, &res);
	if (rc == GI_EDB) {
		gi_log_error("obs_store",
		             "%s has a schema_version table that is not Giulia's: use another "
		             "database or schema (options=-csearch_path=...)",
		             st->location);
		rc = GI_EDBVERSION;
		goto fail;
	}
	if (rc)
		goto fail;
	int version = (int)value_int(res, 0, 0);
	PQclear(res);
	if (version > PG_SCHEMA_VERSION || version < 0) {
		gi_log_error("obs_store",
		             "%s has schema version %d, newer than this build's %d: upgrade "
		             "this worker (every worker sharing a database must run a build "
		             "that knows its schema)",
		             st->location, version, PG_SCHEMA_VERSION);
		rc = GI_EDBVERSION;
		goto fail;
	}
	for (int done = version < 0 ? 0 : version; done < PG_SCHEMA_VERSION; done++) {
		rc = pg_run(st, "apply migration", MIGRATIONS[done], NULL, NULL);
		if (rc)
			goto fail;
		struct pg_params p = {0};
		param_int(&p, done + 1);
		param_int(&p, gi_clock_wall_ms());
		rc = pg_run(st, "record migration",
		            "INSERT INTO schema_version(version, applied_ms) VALUES($1, $2)", &p,
		            NULL);
		if (rc)
			goto fail;
		gi_log_info("obs_store", "%s: schema migrated to version %d", st->location,
		            done + 1);
	}
	return pg_run(st, "commit migration", "COMMIT", NULL, NULL);
fail:
	pg_rollback(st);
	return rc;
}

static void pg_close(struct obs_store *base);
static const struct obs_store_ops PG_OPS;

int obs_pg_open(const char *conninfo, struct obs_store **out)
{
	*out = NULL;
	pthread_once(&pq_once, pq_load);
	if (pq_rc) {
		gi_log_error("obs_store", "cannot use a PostgreSQL store: %s", pq_err);
		return pq_rc;
	}
	struct obs_pg *st = gi_calloc(1, sizeof(*st));
	st->base.ops = &PG_OPS;
	obs_store_location_redact(conninfo, st->location, sizeof(st->location));
	/* Defaults first: what the location says overrides them. */
	const char *const keys[] = {"connect_timeout", "fallback_application_name", "dbname", NULL};
	const char *const values[] = {PG_CONNECT_TIMEOUT, "giulia", conninfo, NULL};
	st->conn = PQconnectdbParams(keys, values, 1);
	int rc = 0;
	if (!st->conn || PQstatus(st->conn) != CONNECTION_OK) {
		const char *msg = st->conn ? PQerrorMessage(st->conn) : "out of memory";
		bool auth = strstr(msg, "authentication failed") || strstr(msg, "no password") ||
		            strstr(msg, "password is required");
		rc = auth ? GI_EDENIED : GI_ECONNECT;
		gi_log_error("obs_store", "cannot connect to %s (%s): %s", st->location,
		             auth ? "authentication failed: check the user and password"
		                  : "is the server running and reachable?",
		             msg);
		goto fail;
	}
	PQclear(PQexec(st->conn, "SET client_min_messages = warning"));
	rc = pg_migrate(st);
	if (rc)
		goto fail;
	*out = &st->base;
	return 0;
fail:
	pg_close(&st->base);
	return rc;
}

static void pg_close(struct obs_store *base)
{
	struct obs_pg *st = (struct obs_pg *)base;
	if (!st)
		return;
	if (st->conn)
		PQfinish(st->conn);
	gi_free(st);
}

/* ---- rows into JSON ---- */

static json_t *col_text(PGresult *res, int row, int col)
{
	if (PQgetisnull(res, row, col))
		return json_null();
	return json_string(PQgetvalue(res, row, col));
}

static json_t *col_int(PGresult *res, int row, int col)
{
	if (PQgetisnull(res, row, col))
		return json_null();
	return json_integer(value_int(res, row, col));
}

static json_t *col_json(PGresult *res, int row, int col)
{
	if (PQgetisnull(res, row, col))
		return json_null();
	json_t *v = json_loads(PQgetvalue(res, row, col), JSON_DECODE_ANY, NULL);
	return v ? v : json_null();
}

/* ---- writes ---- */

static int snapshot_add_once(struct obs_pg *st, const char *session_id, const char *node,
                             long long seq, json_t *snapshot, bool *duplicate)
{
	*duplicate = false;
	int64_t now = gi_clock_wall_ms();
	long long ts_ms = obs_json_int_or(snapshot, "timestamp_ms", now);
	PGresult *res = NULL;
	struct pg_params p = {0};
	int rc = pg_run(st, "begin", "BEGIN", NULL, NULL);
	if (rc)
		return rc;
	param_text(&p, session_id);
	rc = pg_run(st, "lock the session", SESSION_LOCK, &p, NULL);
	if (rc)
		goto fail;
	/* A finished observation is immutable: its profile was built from
	 * exactly what it holds (checked first, as on SQLite). A session
	 * observes one node: the worker checks that before, but two workers
	 * can only check it here, under the session's lock. */
	struct pg_params state = {0};
	param_text(&state, session_id);
	param_text(&state, node);
	rc = pg_run(st, "read observation state",
	            "SELECT 1 FROM observations WHERE session_id = $1 AND"
	            " (profile_id IS NOT NULL OR status = 'complete' OR node <> $2 OR"
	            "  (status = 'interrupted' AND coalesce(reason, '') <> 'worker shut down'))",
	            &state, &res);
	if (rc)
		goto fail;
	bool final = PQntuples(res) > 0;
	PQclear(res);
	if (final) {
		pg_rollback(st);
		return GI_EEXIST;
	}
	struct pg_params ins = {0};
	param_text(&ins, session_id);
	param_int(&ins, seq);
	param_int(&ins, ts_ms);
	param_json(&ins, snapshot);
	rc = pg_run(st, "insert snapshot",
	            "INSERT INTO snapshots(session_id, seq, timestamp_ms, body)"
	            " VALUES($1, $2, $3, $4) ON CONFLICT ON CONSTRAINT snapshots_once DO NOTHING",
	            &ins, &res);
	params_destroy(&ins);
	if (rc)
		goto fail;
	bool inserted = strcmp(PQcmdTuples(res), "1") == 0;
	PQclear(res);
	if (!inserted) {
		*duplicate = true;
		return pg_run(st, "commit", "COMMIT", NULL, NULL);
	}
	struct pg_params up = {0};
	param_text(&up, session_id);
	param_text(&up, node);
	param_int(&up, ts_ms);
	param_int_or_null(&up, obs_json_int_or(snapshot, "window_ms", -1));
	param_int(&up, seq);
	param_int(&up, now);
	param_text(&up, st->base.owner[0] ? st->base.owner : NULL);
	rc = pg_run(
	    st, "upsert observation",
	    "INSERT INTO observations(session_id, node, status, started_ms, interval_ms,"
	    " snapshots, last_seq, updated_ms, owner)"
	    " VALUES($1, $2, 'running', $3, $4, 1, $5, $6, $7) "
	    "ON CONFLICT(session_id) DO UPDATE SET snapshots = observations.snapshots + 1,"
	    " last_seq = greatest(coalesce(observations.last_seq, -1), $5::bigint),"
	    " updated_ms = $6, owner = coalesce($7, observations.owner),"
	    " started_ms = least(coalesce(observations.started_ms, $3::bigint), $3::bigint),"
	    " status = CASE WHEN observations.status = 'interrupted' AND"
	    "   observations.reason = 'worker shut down' THEN 'running'"
	    "   ELSE observations.status END,"
	    " reason = CASE WHEN observations.status = 'interrupted' AND"
	    "   observations.reason = 'worker shut down' THEN NULL ELSE observations.reason END",
	    &up, NULL);
	if (rc)
		goto fail;
	return pg_run(st, "commit", "COMMIT", NULL, NULL);
fail:
	pg_rollback(st);
	return rc;
}

static int pg_snapshot_add(struct obs_store *base, const char *session_id, const char *node,
                           long long seq, json_t *snapshot, bool *duplicate)
{
	struct obs_pg *st = (struct obs_pg *)base;
	int rc = pg_ready(st);
	if (rc == 0)
		rc = snapshot_add_once(st, session_id, node, seq, snapshot, duplicate);
	/* Idempotent: a commit that went through before the connection dropped
	 * comes back as a duplicate, which is what the caller acknowledges. */
	if (pg_retry(st, rc))
		rc = snapshot_add_once(st, session_id, node, seq, snapshot, duplicate);
	return rc;
}

static int finalize_once(struct obs_pg *st, json_t *fin)
{
	const char *session_id = obs_json_str_or_null(fin, "session_id");
	struct pg_params lock = {0}, p = {0};
	int rc = pg_run(st, "begin", "BEGIN", NULL, NULL);
	if (rc)
		return rc;
	param_text(&lock, session_id);
	rc = pg_run(st, "lock the session", SESSION_LOCK, &lock, NULL);
	if (rc)
		goto fail;
	param_text(&p, session_id);
	param_text(&p, obs_json_str_or_null(fin, "node"));
	param_text(&p, obs_json_str_or_null(fin, "status"));
	param_text(&p, obs_json_str_or_null(fin, "reason"));
	param_int_or_null(&p, obs_json_int_or(fin, "started_ms", -1));
	param_int(&p, obs_json_int_or(fin, "stopped_ms", gi_clock_wall_ms()));
	param_int_or_null(&p, obs_json_int_or(fin, "interval_ms", -1));
	param_json(&p, json_object_get(fin, "trace_modules"));
	param_text(&p, obs_json_str_or_null(fin, "project"));
	param_int(&p, gi_clock_wall_ms());
	param_int_or_null(&p, obs_json_int_or(fin, "next_seq", -1));
	rc =
	    pg_run(st, "finalize observation",
	           "INSERT INTO observations(session_id, node, status, reason, started_ms,"
	           " stopped_ms, interval_ms, trace_modules, project, updated_ms, next_seq)"
	           " VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) "
	           "ON CONFLICT(session_id) DO UPDATE SET status = $3, reason = $4,"
	           " started_ms = coalesce($5::bigint, observations.started_ms),"
	           " stopped_ms = $6, interval_ms = coalesce($7::bigint, observations.interval_ms),"
	           " trace_modules = $8, project = $9, updated_ms = $10, next_seq = $11",
	           &p, NULL);
	params_destroy(&p);
	if (rc)
		goto fail;
	return pg_run(st, "commit", "COMMIT", NULL, NULL);
fail:
	pg_rollback(st);
	return rc;
}

static int pg_finalize(struct obs_store *base, json_t *fin)
{
	struct obs_pg *st = (struct obs_pg *)base;
	int rc = pg_ready(st);
	if (rc == 0)
		rc = finalize_once(st, fin);
	if (pg_retry(st, rc)) /* an upsert: repeating it is harmless */
		rc = finalize_once(st, fin);
	return rc;
}

/* Stores the profile unless the observation has one already (another
 * worker finalised it first), whose id it returns instead. */
static int profile_add_once(struct obs_pg *st, const char *session_id, const char *node,
                            const char *project, json_t *profile, long long *id_out)
{
	PGresult *res = NULL;
	struct pg_params key = {0};
	param_text(&key, session_id);
	int rc = pg_run(st, "begin", "BEGIN", NULL, NULL);
	if (rc)
		return rc;
	if (session_id) {
		rc = pg_run(st, "lock the session", SESSION_LOCK, &key, NULL);
		if (rc)
			goto fail;
		rc = pg_run(st, "read the observation's profile",
		            "SELECT profile_id FROM observations WHERE session_id = $1"
		            " AND profile_id IS NOT NULL",
		            &key, &res);
		if (rc)
			goto fail;
		long long existing = PQntuples(res) > 0 ? value_int(res, 0, 0) : 0;
		PQclear(res);
		if (existing > 0) {
			rc = pg_run(st, "commit", "COMMIT", NULL, NULL);
			if (rc == 0)
				*id_out = existing;
			return rc;
		}
	}
	struct pg_params p = {0};
	param_text(&p, session_id);
	param_text(&p, node);
	param_text(&p, project);
	param_int(&p, gi_clock_wall_ms());
	param_json(&p, profile);
	rc = pg_run(st, "insert profile",
	            "INSERT INTO profiles(session_id, node, project, created_ms, body)"
	            " VALUES($1, $2, $3, $4, $5) RETURNING id",
	            &p, &res);
	params_destroy(&p);
	if (rc)
		goto fail;
	long long id = value_int(res, 0, 0);
	PQclear(res);
	struct pg_params link = {0};
	param_int(&link, id);
	param_text(&link, session_id);
	rc = pg_run(st, "link profile",
	            "UPDATE observations SET profile_id = $1 WHERE session_id = $2", &link, NULL);
	if (rc)
		goto fail;
	rc = pg_run(st, "commit", "COMMIT", NULL, NULL);
	if (rc == 0)
		*id_out = id;
	return rc;
fail:
	pg_rollback(st);
	return rc;
}

static int pg_profile_add(struct obs_store *base, const char *session_id, const char *node,
                          const char *project, json_t *profile, long long *id_out)
{
	struct obs_pg *st = (struct obs_pg *)base;
	int rc = pg_ready(st);
	if (rc == 0)
		rc = profile_add_once(st, session_id, node, project, profile, id_out);
	/* With a session the retry finds the profile a lost commit stored. */
	if (session_id && pg_retry(st, rc))
		rc = profile_add_once(st, session_id, node, project, profile, id_out);
	return rc;
}

static int interrupt_once(struct obs_pg *st, const char *reason, int *count)
{
	PGresult *res = NULL;
	struct pg_params p = {0};
	param_text(&p, reason);
	param_int(&p, gi_clock_wall_ms());
	param_text(&p, st->base.owner[0] ? st->base.owner : NULL);
	int rc = pg_run(st, "interrupt running observations",
	                "UPDATE observations SET status = 'interrupted', reason = $1,"
	                " stopped_ms = coalesce(stopped_ms, $2), updated_ms = $2"
	                " WHERE status = 'running' AND"
	                " ($3::text IS NULL OR owner IS NULL OR owner = $3::text)",
	                &p, &res);
	if (count)
		*count = rc ? 0 : (int)strtol(PQcmdTuples(res), NULL, 10);
	PQclear(res);
	return rc;
}

static int pg_interrupt_running(struct obs_store *base, const char *reason, int *count)
{
	struct obs_pg *st = (struct obs_pg *)base;
	int rc = pg_ready(st);
	if (rc == 0)
		rc = interrupt_once(st, reason, count);
	if (pg_retry(st, rc))
		rc = interrupt_once(st, reason, count);
	return rc;
}

static int project_put_once(struct obs_pg *st, const char *path, json_t *summary)
{
	struct pg_params p = {0};
	param_text(&p, path);
	param_int(&p, gi_clock_wall_ms());
	param_json(&p, summary);
	int rc = pg_run(st, "store project",
	                "INSERT INTO projects(path, indexed_ms, summary) VALUES($1, $2, $3)"
	                " ON CONFLICT(path) DO UPDATE SET indexed_ms = $2, summary = $3",
	                &p, NULL);
	params_destroy(&p);
	return rc;
}

static int pg_project_put(struct obs_store *base, const char *path, json_t *summary)
{
	struct obs_pg *st = (struct obs_pg *)base;
	int rc = pg_ready(st);
	if (rc == 0)
		rc = project_put_once(st, path, summary);
	if (pg_retry(st, rc))
		rc = project_put_once(st, path, summary);
	return rc;
}

/* ---- reads ---- */

/* Runs a read, reconnecting once when the connection was lost. */
static int pg_read(struct obs_pg *st, const char *what, const char *sql, struct pg_params *p,
                   PGresult **out)
{
	int rc = pg_ready(st);
	if (rc == 0)
		rc = pg_run(st, what, sql, p, out);
	if (pg_retry(st, rc))
		rc = pg_run(st, what, sql, p, out);
	return rc;
}

/* Turns every row of a result into an object with `row`; frees the result. */
static json_t *rows_array(PGresult *res, json_t *(*row)(PGresult *, int))
{
	json_t *arr = json_array();
	for (int i = 0; i < PQntuples(res); i++)
		json_array_append_new(arr, row(res, i));
	PQclear(res);
	return arr;
}

static int feed_rows(PGresult *res, int (*fn)(void *ctx, json_t *snapshot), void *ctx, bool *fed)
{
	for (int i = 0; i < PQntuples(res); i++) {
		json_t *snap = json_loads(PQgetvalue(res, i, 0), 0, NULL);
		if (!snap)
			continue; /* a row that does not parse is skipped, as on SQLite */
		*fed = true;
		int rc = fn(ctx, snap);
		json_decref(snap);
		if (rc)
			return rc;
	}
	return 0;
}

static int snapshots_each_once(struct obs_pg *st, const char *session_id, long *count,
                               int (*fn)(void *ctx, json_t *snapshot), void *ctx, bool *fed)
{
	PGresult *res = NULL;
	struct pg_params p = {0};
	param_text(&p, session_id);
	/* One snapshot of the database: the count and the rows agree. */
	int rc = pg_run(st, "begin", "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", NULL, NULL);
	if (rc)
		return rc;
	if (count) {
		rc = pg_run(st, "count snapshots",
		            "SELECT count(*) FROM snapshots WHERE session_id = $1", &p, &res);
		if (rc)
			goto out;
		*count = (long)value_int(res, 0, 0);
		PQclear(res);
	}
	/* A cursor, so that a long session is never in memory at once. */
	rc = pg_run(st, "read snapshots",
	            "DECLARE giulia_snapshots NO SCROLL CURSOR FOR SELECT body FROM snapshots"
	            " WHERE session_id = $1 ORDER BY seq",
	            &p, NULL);
	while (rc == 0) {
		rc = pg_run(st, "read snapshots", "FETCH " PG_FETCH_ROWS " FROM giulia_snapshots",
		            NULL, &res);
		if (rc)
			break;
		int n = PQntuples(res);
		rc = feed_rows(res, fn, ctx, fed);
		PQclear(res);
		if (n == 0)
			break;
	}
out:
	pg_rollback(st); /* read only: nothing to keep */
	return rc;
}

static int pg_snapshots_each(struct obs_store *base, const char *session_id, long *count,
                             int (*fn)(void *ctx, json_t *snapshot), void *ctx)
{
	struct obs_pg *st = (struct obs_pg *)base;
	bool fed = false;
	int rc = pg_ready(st);
	if (rc == 0)
		rc = snapshots_each_once(st, session_id, count, fn, ctx, &fed);
	/* Again from the start only when fn has seen nothing yet. */
	if (!fed && pg_retry(st, rc))
		rc = snapshots_each_once(st, session_id, count, fn, ctx, &fed);
	return rc;
}

static int pg_gaps(struct obs_store *base, const char *session_id, long long interval_ms,
                   long long next_seq, json_t **gaps_out, long long *missing_out)
{
	struct obs_pg *st = (struct obs_pg *)base;
	*gaps_out = NULL;
	*missing_out = 0;
	PGresult *res = NULL;
	struct pg_params p = {0};
	param_text(&p, session_id);
	int rc = pg_read(st, "read snapshot numbers",
	                 "SELECT seq, timestamp_ms FROM snapshots WHERE session_id = $1"
	                 " ORDER BY seq",
	                 &p, &res);
	if (rc)
		return rc;
	struct obs_gaps walk;
	obs_gaps_init(&walk, interval_ms);
	for (int i = 0; i < PQntuples(res); i++)
		obs_gaps_row(&walk, value_int(res, i, 0),
		             PQgetisnull(res, i, 1) ? -1 : value_int(res, i, 1));
	PQclear(res);
	obs_gaps_finish(&walk, next_seq, gaps_out, missing_out);
	return 0;
}

#define OBSERVATION_COLUMNS                                                                     \
	"session_id, node, status, reason, started_ms, stopped_ms, interval_ms, trace_modules," \
	" project, snapshots, last_seq, profile_id, next_seq"

static json_t *observation_row(PGresult *res, int r)
{
	json_t *o = json_object();
	json_object_set_new(o, "session_id", col_text(res, r, 0));
	json_object_set_new(o, "node", col_text(res, r, 1));
	json_object_set_new(o, "status", col_text(res, r, 2));
	json_object_set_new(o, "reason", col_text(res, r, 3));
	json_object_set_new(o, "started_ms", col_int(res, r, 4));
	json_object_set_new(o, "stopped_ms", col_int(res, r, 5));
	json_object_set_new(o, "interval_ms", col_int(res, r, 6));
	json_object_set_new(o, "trace_modules", col_json(res, r, 7));
	json_object_set_new(o, "project", col_text(res, r, 8));
	json_object_set_new(o, "snapshots", col_int(res, r, 9));
	json_object_set_new(o, "last_seq", col_int(res, r, 10));
	json_object_set_new(o, "profile_id", col_int(res, r, 11));
	json_object_set_new(o, "next_seq", col_int(res, r, 12));
	return o;
}

static int pg_observation_get(struct obs_store *base, const char *session_id, json_t **out)
{
	struct obs_pg *st = (struct obs_pg *)base;
	*out = NULL;
	PGresult *res = NULL;
	struct pg_params p = {0};
	param_text(&p, session_id);
	int rc = pg_read(st, "read observation",
	                 "SELECT " OBSERVATION_COLUMNS " FROM observations WHERE session_id = $1",
	                 &p, &res);
	if (rc)
		return rc;
	if (PQntuples(res) > 0)
		*out = observation_row(res, 0);
	else
		rc = GI_ENOTFOUND;
	PQclear(res);
	return rc;
}

static int pg_observations_list(struct obs_store *base, int limit, json_t **out)
{
	struct obs_pg *st = (struct obs_pg *)base;
	*out = NULL;
	PGresult *res = NULL;
	struct pg_params p = {0};
	param_int(&p, limit);
	int rc = pg_read(st, "list observations",
	                 "SELECT " OBSERVATION_COLUMNS
	                 " FROM observations ORDER BY updated_ms DESC, id DESC LIMIT $1",
	                 &p, &res);
	if (rc == 0)
		*out = rows_array(res, observation_row);
	return rc;
}

static json_t *running_row(PGresult *res, int r)
{
	json_t *o = json_object();
	json_object_set_new(o, "session_id", col_text(res, r, 0));
	json_object_set_new(o, "node", col_text(res, r, 1));
	json_object_set_new(o, "interval_ms", col_int(res, r, 2));
	json_object_set_new(o, "updated_ms", col_int(res, r, 3));
	json_object_set_new(o, "last_timestamp_ms", col_int(res, r, 4));
	return o;
}

static int pg_running_list(struct obs_store *base, json_t **out)
{
	struct obs_pg *st = (struct obs_pg *)base;
	*out = NULL;
	PGresult *res = NULL;
	int rc = pg_read(st, "list running observations",
	                 "SELECT o.session_id, o.node, o.interval_ms, o.updated_ms,"
	                 " (SELECT timestamp_ms FROM snapshots n WHERE n.session_id ="
	                 " o.session_id AND n.seq = o.last_seq) FROM observations o"
	                 " WHERE o.status = 'running' OR"
	                 " (o.status = 'interrupted' AND o.reason = 'worker shut down' AND"
	                 "  o.profile_id IS NULL)",
	                 NULL, &res);
	if (rc == 0)
		*out = rows_array(res, running_row);
	return rc;
}

static json_t *profile_row(PGresult *res, int r)
{
	json_t *o = json_object();
	json_object_set_new(o, "id", col_int(res, r, 0));
	json_object_set_new(o, "session_id", col_text(res, r, 1));
	json_object_set_new(o, "node", col_text(res, r, 2));
	json_object_set_new(o, "project", col_text(res, r, 3));
	json_object_set_new(o, "created_ms", col_int(res, r, 4));
	if (PQnfields(res) > 5)
		json_object_set_new(o, "profile", col_json(res, r, 5));
	return o;
}

static int pg_profile_get(struct obs_store *base, long long id, json_t **out)
{
	struct obs_pg *st = (struct obs_pg *)base;
	*out = NULL;
	PGresult *res = NULL;
	struct pg_params p = {0};
	if (id > 0)
		param_int(&p, id);
	int rc = pg_read(st, "read profile",
	                 id > 0 ? "SELECT id, session_id, node, project, created_ms, body"
	                          " FROM profiles WHERE id = $1"
	                        : "SELECT id, session_id, node, project, created_ms, body"
	                          " FROM profiles ORDER BY id DESC LIMIT 1",
	                 &p, &res);
	if (rc)
		return rc;
	if (PQntuples(res) > 0)
		*out = profile_row(res, 0);
	else
		rc = GI_ENOTFOUND;
	PQclear(res);
	return rc;
}

static int pg_profiles_list(struct obs_store *base, int limit, json_t **out)
{
	struct obs_pg *st = (struct obs_pg *)base;
	*out = NULL;
	PGresult *res = NULL;
	struct pg_params p = {0};
	param_int(&p, limit);
	int rc = pg_read(st, "list profiles",
	                 "SELECT id, session_id, node, project, created_ms FROM profiles"
	                 " ORDER BY id DESC LIMIT $1",
	                 &p, &res);
	if (rc == 0)
		*out = rows_array(res, profile_row);
	return rc;
}

static json_t *project_row(PGresult *res, int r)
{
	json_t *o = json_object();
	json_object_set_new(o, "path", col_text(res, r, 0));
	json_object_set_new(o, "indexed_ms", col_int(res, r, 1));
	json_object_set_new(o, "summary", col_json(res, r, 2));
	return o;
}

static int pg_projects_list(struct obs_store *base, json_t **out)
{
	struct obs_pg *st = (struct obs_pg *)base;
	*out = NULL;
	PGresult *res = NULL;
	int rc = pg_read(st, "list projects",
	                 "SELECT path, indexed_ms, summary FROM projects ORDER BY indexed_ms DESC",
	                 NULL, &res);
	if (rc == 0)
		*out = rows_array(res, project_row);
	return rc;
}

static const struct obs_store_ops PG_OPS = {
    .name = "postgres",
    .close = pg_close,
    .snapshot_add = pg_snapshot_add,
    .finalize = pg_finalize,
    .snapshots_each = pg_snapshots_each,
    .gaps = pg_gaps,
    .observation_get = pg_observation_get,
    .observations_list = pg_observations_list,
    .interrupt_running = pg_interrupt_running,
    .running_list = pg_running_list,
    .profile_add = pg_profile_add,
    .profile_get = pg_profile_get,
    .profiles_list = pg_profiles_list,
    .project_put = pg_project_put,
    .projects_list = pg_projects_list,
};
