/*
 * store.c - the index database (see store.h; tables in docs/SCHEMA.md).
 *
 * Every statement is prepared once per connection. Rows of a file are
 * found through the file_id column of each table (indexed), so replacing
 * or deleting a file touches only its own rows. References and calls are
 * aggregated per module/function before they are written (one row per
 * distinct target with a count), which keeps the tables small.
 */
#include "store/store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/log.h"
#include "base/str.h"

#define ST_BUSY_TIMEOUT_MS 5000

enum {
	Q_FILE_FIND,
	Q_FILE_INSERT,
	Q_FILE_EDGES,
	Q_DEL_FILE,
	Q_DEL_MODULES,
	Q_DEL_FUNCTIONS,
	Q_DEL_REFS,
	Q_DEL_CALLS,
	Q_DEL_ERRORS,
	Q_ERROR_INSERT,
	Q_MODULE_INSERT,
	Q_FUNCTION_INSERT,
	Q_REF_INSERT,
	Q_CALL_INSERT,
	Q_FILE_TOUCH,
	Q_DEL_SITES,
	Q_SITE_INSERT,
	Q_BODIES_FILE,
	Q_BODIES_MODULES,
	Q_BODIES_DONE,
	Q_FILE_COUNTS,
	Q_FILE_ROW,
	Q_FILE_MODULES,
	Q_MODULE_EXISTS,
	Q_COUNT_
};

static const char *const statements[Q_COUNT_] = {
    [Q_FILE_FIND] = "SELECT id FROM files WHERE path = ?1",
    [Q_FILE_INSERT] = "INSERT INTO files(path, size, mtime_ns, hash, origin, is_test, skipped, "
                      "skip_reason, error_count, edge_count, bodies_hashed) VALUES "
                      "(?1,?2,?3,?4,?5,?6,?7,?8,?9,0,?10)",
    [Q_FILE_EDGES] = "UPDATE files SET edge_count = ?2 WHERE id = ?1",
    [Q_DEL_FILE] = "DELETE FROM files WHERE id = ?1",
    [Q_DEL_MODULES] = "DELETE FROM modules WHERE file_id = ?1",
    [Q_DEL_FUNCTIONS] = "DELETE FROM functions WHERE file_id = ?1",
    [Q_DEL_REFS] = "DELETE FROM refs WHERE file_id = ?1",
    [Q_DEL_CALLS] = "DELETE FROM calls WHERE file_id = ?1",
    [Q_DEL_ERRORS] = "DELETE FROM parse_errors WHERE file_id = ?1",
    [Q_ERROR_INSERT] = "INSERT INTO parse_errors(file_id, line, message) VALUES (?1,?2,?3)",
    [Q_MODULE_INSERT] =
        "INSERT INTO modules(file_id, name, kind, impl_for, protocol, line_start, "
        "line_end, has_moduledoc, moduledoc_false, has_struct, origin, "
        "struct_fields, callbacks) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)",
    [Q_FUNCTION_INSERT] =
        "INSERT INTO functions(file_id, module_id, name, arity, kind, public, line_start, "
        "line_end, clauses, lines, has_doc, has_spec, has_impl, has_guard, doc_false, "
        "cyclomatic, cognitive, max_nesting, delegate_to, generated_by, deprecated, "
        "from_defaults) VALUES "
        "(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22)",
    [Q_REF_INSERT] = "INSERT INTO refs(file_id, module_id, kind, target, count, line) VALUES "
                     "(?1,?2,?3,?4,?5,?6)",
    [Q_CALL_INSERT] = "INSERT INTO calls(file_id, function_id, kind, module, function, arity, "
                      "count, line) VALUES (?1,?2,?3,?4,?5,?6,?7,?8)",
    [Q_FILE_TOUCH] = "UPDATE files SET mtime_ns = ?2 WHERE id = ?1",
    [Q_DEL_SITES] = "DELETE FROM sites WHERE file_id = ?1",
    [Q_SITE_INSERT] = "INSERT INTO sites(file_id, module_id, kind, name, arity, line, detail, "
                      "hash, hash2, size) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)",
    [Q_BODIES_FILE] = "SELECT hash FROM files WHERE id = ?1 AND NOT bodies_hashed",
    [Q_BODIES_MODULES] = "SELECT id FROM modules WHERE file_id = ?1 ORDER BY id",
    [Q_BODIES_DONE] = "UPDATE files SET bodies_hashed = 1 WHERE id = ?1",
    [Q_FILE_COUNTS] = "SELECT count(*), count(generated_by) FROM functions WHERE file_id = ?1",
    [Q_FILE_ROW] = "SELECT edge_count, error_count, skipped FROM files WHERE id = ?1",
    [Q_FILE_MODULES] = "SELECT name FROM modules WHERE file_id = ?1",
    [Q_MODULE_EXISTS] = "SELECT 1 FROM modules WHERE name = ?1 LIMIT 1",
};

static const char schema_sql[] =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE files(id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, size INTEGER NOT "
    "NULL, mtime_ns INTEGER NOT NULL, hash INTEGER NOT NULL, origin INTEGER NOT NULL, is_test "
    "INTEGER NOT NULL, skipped INTEGER NOT NULL, skip_reason TEXT, error_count INTEGER NOT NULL, "
    "edge_count INTEGER NOT NULL, bodies_hashed INTEGER NOT NULL);"
    "CREATE TABLE parse_errors(file_id INTEGER NOT NULL, line INTEGER NOT NULL, message TEXT);"
    "CREATE TABLE modules(id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, name TEXT NOT NULL, "
    "kind INTEGER NOT NULL, impl_for TEXT, protocol TEXT, line_start INTEGER, line_end INTEGER, "
    "has_moduledoc INTEGER, moduledoc_false INTEGER, has_struct INTEGER, origin INTEGER, "
    "struct_fields TEXT, callbacks TEXT);"
    "CREATE TABLE functions(id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, module_id INTEGER "
    "NOT NULL, name TEXT NOT NULL, arity INTEGER NOT NULL, kind INTEGER NOT NULL, public "
    "INTEGER NOT NULL, line_start INTEGER, line_end INTEGER, clauses INTEGER, lines INTEGER, "
    "has_doc INTEGER, has_spec INTEGER, has_impl INTEGER, has_guard INTEGER, doc_false INTEGER, "
    "cyclomatic INTEGER, cognitive INTEGER, max_nesting INTEGER, delegate_to TEXT, "
    "generated_by TEXT, deprecated INTEGER, from_defaults INTEGER);"
    "CREATE TABLE refs(file_id INTEGER NOT NULL, module_id INTEGER NOT NULL, kind INTEGER NOT "
    "NULL, target TEXT NOT NULL, count INTEGER NOT NULL, line INTEGER);"
    "CREATE TABLE calls(file_id INTEGER NOT NULL, function_id INTEGER NOT NULL, kind INTEGER NOT "
    "NULL, module TEXT, function TEXT, arity INTEGER, count INTEGER NOT NULL, line INTEGER);"
    "CREATE TABLE sites(file_id INTEGER NOT NULL, module_id INTEGER NOT NULL, kind INTEGER NOT "
    "NULL, name TEXT, arity INTEGER, line INTEGER, detail TEXT, hash INTEGER, hash2 INTEGER, "
    "size INTEGER);"
    "CREATE INDEX sites_file ON sites(file_id);"
    "CREATE INDEX sites_kind ON sites(kind);"
    "CREATE INDEX modules_file ON modules(file_id);"
    "CREATE INDEX modules_name ON modules(name);"
    "CREATE INDEX functions_file ON functions(file_id);"
    "CREATE INDEX refs_file ON refs(file_id);"
    "CREATE INDEX calls_file ON calls(file_id);"
    "CREATE INDEX errors_file ON parse_errors(file_id);";

static const char drop_sql[] = "DROP TABLE IF EXISTS meta; DROP TABLE IF EXISTS files;"
                               "DROP TABLE IF EXISTS parse_errors; DROP TABLE IF EXISTS modules;"
                               "DROP TABLE IF EXISTS functions; DROP TABLE IF EXISTS refs;"
                               "DROP TABLE IF EXISTS calls; DROP TABLE IF EXISTS sites;";

struct st_db {
	sqlite3 *sql;
	char *path;
	/* The writes' statements, prepared on the connection's first write
	 * (statements_prepare): a read-only connection, a cold query's, never
	 * pays for them. */
	sqlite3_stmt *stmt[Q_COUNT_];
	bool prepared;
	/* st_meta_get and st_meta_set's statements, prepared on first use:
	 * an index run reads and writes a dozen keys. */
	sqlite3_stmt *meta_get, *meta_set;
	/* What this transaction's writes changed in the summary's counts, for
	 * st_summary_after_writes; reset by st_begin. */
	struct {
		int64_t files, functions, generated, edges;
		bool lists;          /* a file with parse errors or skipped came or went */
		struct gi_map names; /* module name -> &name_existed / &name_absent before them */
	} delta;
};

/* The values of delta.names: was a module of that name stored before the
 * transaction's first change to it? */
static char name_existed, name_absent;

static int sql_error(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_NOTADB:
	case SQLITE_CORRUPT:
		return GI_ECORRUPT;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return GI_EBUSY;
	case SQLITE_CANTOPEN:
		return GI_ENOENT;
	case SQLITE_READONLY:
	case SQLITE_PERM:
		return GI_EDENIED;
	case SQLITE_FULL:
	case SQLITE_IOERR:
		return GI_EIO;
	default:
		return GI_EDB;
	}
}

static int exec(struct st_db *db, const char *sql)
{
	char *msg = NULL;
	int rc = sqlite3_exec(db->sql, sql, NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		gi_log_debug("store", "%s: %s", sql, msg ? msg : sqlite3_errstr(rc));
		sqlite3_free(msg);
		return sql_error(rc);
	}
	return 0;
}

static int query_int(struct st_db *db, const char *sql, int64_t *out)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sql_error(rc);
	rc = sqlite3_step(st);
	*out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : sql_error(rc);
}

/* Checks the schema version; creates or rebuilds the tables when needed. */
static int schema_prepare(struct st_db *db)
{
	int64_t version = 0, tables = 0;
	int rc = query_int(db, "PRAGMA user_version", &version);
	if (rc || version == ST_SCHEMA_VERSION)
		return rc;
	rc = query_int(db, "SELECT count(*) FROM sqlite_master", &tables);
	if (rc)
		return rc;
	if (version > ST_SCHEMA_VERSION || (version == 0 && tables > 0))
		return GI_EDBVERSION;
	if (version > 0)
		gi_log_warn("store",
		            "index schema version %lld is older than %d: rebuilding the index",
		            (long long)version, ST_SCHEMA_VERSION);
	char pragma[64];
	snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d;", ST_SCHEMA_VERSION);
	rc = exec(db, "BEGIN IMMEDIATE");
	if (!rc)
		rc = exec(db, drop_sql);
	if (!rc)
		rc = exec(db, schema_sql);
	if (!rc)
		rc = exec(db, pragma);
	if (!rc)
		rc = exec(db, "COMMIT");
	else
		exec(db, "ROLLBACK");
	return rc;
}

int st_open(const char *path, bool create, struct st_db **out)
{
	*out = NULL;
	struct stat sb;
	if (!create && stat(path, &sb) != 0)
		return GI_ENOENT;
	struct st_db *db = gi_calloc(1, sizeof(*db));
	db->path = gi_strdup(path);
	gi_map_init(&db->delta.names);
	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
	int rc = sqlite3_open_v2(path, &db->sql, flags, NULL);
	if (rc != SQLITE_OK) {
		rc = sql_error(rc);
		goto fail;
	}
	sqlite3_busy_timeout(db->sql, ST_BUSY_TIMEOUT_MS);
	/* The last connection to close would checkpoint the WAL and fsync; the
	 * index is a cache of the sources, so leave that to the automatic
	 * checkpoints and keep short CLI runs cheap. */
	sqlite3_db_config(db->sql, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	rc = exec(db, "PRAGMA journal_mode = WAL");
	if (!rc)
		rc = exec(db, "PRAGMA synchronous = NORMAL");
	if (!rc)
		rc = exec(db, "PRAGMA journal_size_limit = 4194304");
	if (!rc)
		rc = schema_prepare(db);
	if (rc)
		goto fail;
	*out = db;
	return 0;
fail:
	st_close(db);
	return rc;
}

void st_close(struct st_db *db)
{
	if (!db)
		return;
	for (int i = 0; i < Q_COUNT_; i++)
		sqlite3_finalize(db->stmt[i]);
	sqlite3_finalize(db->meta_get);
	sqlite3_finalize(db->meta_set);
	gi_map_destroy(&db->delta.names);
	sqlite3_close(db->sql);
	gi_free(db->path);
	gi_free(db);
}

int st_checkpoint_if_large(struct st_db *db, int64_t wal_bytes)
{
	char wal[4096];
	struct stat sb;
	int n = snprintf(wal, sizeof(wal), "%s-wal", db->path);
	if (n < 0 || (size_t)n >= sizeof(wal) || stat(wal, &sb) != 0 || sb.st_size <= wal_bytes)
		return 0;
	return exec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
}

/* Prepares the writes' statements once per connection. */
static int statements_prepare(struct st_db *db)
{
	if (db->prepared)
		return 0;
	for (int i = 0; i < Q_COUNT_; i++) {
		int prc = sqlite3_prepare_v3(db->sql, statements[i], -1, SQLITE_PREPARE_PERSISTENT,
		                             &db->stmt[i], NULL);
		if (prc != SQLITE_OK) {
			gi_log_error("store", "preparing %s: %s", statements[i],
			             sqlite3_errmsg(db->sql));
			for (int k = 0; k <= i; k++) {
				sqlite3_finalize(db->stmt[k]);
				db->stmt[k] = NULL;
			}
			return sql_error(prc);
		}
	}
	db->prepared = true;
	return 0;
}

/* A write's statement; every write runs inside st_begin, which prepared
 * them (and failed there if they could not be). */
static sqlite3_stmt *stmt(struct st_db *db, int q)
{
	statements_prepare(db);
	return db->stmt[q];
}

int st_begin(struct st_db *db)
{
	int rc = statements_prepare(db);
	gi_map_destroy(&db->delta.names);
	memset(&db->delta, 0, sizeof(db->delta));
	gi_map_init(&db->delta.names);
	return rc ? rc : exec(db, "BEGIN IMMEDIATE");
}

int st_commit(struct st_db *db)
{
	return exec(db, "COMMIT");
}

void st_rollback(struct st_db *db)
{
	exec(db, "ROLLBACK");
}

/* Runs a prepared statement that returns no row, then resets it. */
static int step_done(struct st_db *db, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE) {
		gi_log_error("store", "%s", sqlite3_errmsg(db->sql));
		return sql_error(rc);
	}
	return 0;
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

int st_files_load(struct st_db *db, struct gi_map *out)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db->sql, "SELECT id, path, size, mtime_ns, hash FROM files", -1,
	                            &st, NULL);
	if (rc != SQLITE_OK)
		return sql_error(rc);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct st_file_state *s = gi_calloc(1, sizeof(*s));
		s->id = sqlite3_column_int64(st, 0);
		s->size = (uint64_t)sqlite3_column_int64(st, 2);
		s->mtime_ns = sqlite3_column_int64(st, 3);
		s->hash = (uint64_t)sqlite3_column_int64(st, 4);
		gi_free(gi_map_put(out, (const char *)sqlite3_column_text(st, 1), s));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : sql_error(rc);
}

int st_file_delete(struct st_db *db, int64_t id)
{
	/* What it held, for the summary's counts (st_summary_after_writes). */
	sqlite3_stmt *st = stmt(db, Q_FILE_COUNTS);
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW) {
		db->delta.functions -= sqlite3_column_int64(st, 0);
		db->delta.generated -= sqlite3_column_int64(st, 1);
	}
	sqlite3_reset(st);
	st = stmt(db, Q_FILE_ROW);
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW) {
		db->delta.files--;
		db->delta.edges -= sqlite3_column_int64(st, 0);
		db->delta.lists |=
		    sqlite3_column_int64(st, 1) > 0 || sqlite3_column_int64(st, 2) != 0;
	}
	sqlite3_reset(st);
	st = stmt(db, Q_FILE_MODULES);
	sqlite3_bind_int64(st, 1, id);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		if (name && !gi_map_get(&db->delta.names, name))
			gi_map_put(&db->delta.names, name, &name_existed);
	}
	sqlite3_reset(st);
	static const int order[] = {Q_DEL_SITES,   Q_DEL_CALLS,  Q_DEL_REFS, Q_DEL_FUNCTIONS,
	                            Q_DEL_MODULES, Q_DEL_ERRORS, Q_DEL_FILE};
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		sqlite3_bind_int64(stmt(db, order[i]), 1, id);
		int rc = step_done(db, stmt(db, order[i]));
		if (rc)
			return rc;
	}
	return 0;
}

int st_file_touch(struct st_db *db, int64_t id, int64_t mtime_ns)
{
	sqlite3_stmt *st = stmt(db, Q_FILE_TOUCH);
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, mtime_ns);
	return step_done(db, st);
}

/* Joins a vector of strings with commas into `b` (reset first). */
static const char *join_strings(struct gi_buf *b, const struct gi_vec *v)
{
	gi_buf_reset(b);
	for (size_t i = 0; i < v->len; i++) {
		if (i)
			gi_buf_puts(b, ",");
		gi_buf_puts(b, GI_VEC_AT(v, const char *, i));
	}
	return v->len ? gi_buf_str(b) : NULL;
}

struct agg_ref {
	const struct facts_ref *ref;
	int count;
};

struct agg_call {
	const struct facts_call *call;
	int count;
};

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static int refs_write(struct st_db *db, int64_t file_id, int64_t module_id,
                      const struct facts_module *m, struct gi_map *targets)
{
	struct gi_vec agg;
	gi_vec_init(&agg, sizeof(struct agg_ref));
	for (size_t i = 0; i < m->refs.len; i++) {
		const struct facts_ref *r = gi_vec_get(&m->refs, i);
		if (strcmp(r->target, m->name) != 0)
			gi_map_put(targets, r->target, (void *)1);
		size_t k = 0;
		for (; k < agg.len; k++) {
			struct agg_ref *a = gi_vec_get(&agg, k);
			if (a->ref->kind == r->kind && strcmp(a->ref->target, r->target) == 0) {
				a->count++;
				break;
			}
		}
		if (k == agg.len) {
			struct agg_ref a = {r, 1};
			gi_vec_push(&agg, &a);
		}
	}
	int rc = 0;
	sqlite3_stmt *st = stmt(db, Q_REF_INSERT);
	for (size_t k = 0; k < agg.len && !rc; k++) {
		struct agg_ref *a = gi_vec_get(&agg, k);
		sqlite3_bind_int64(st, 1, file_id);
		sqlite3_bind_int64(st, 2, module_id);
		sqlite3_bind_int(st, 3, (int)a->ref->kind);
		bind_text(st, 4, a->ref->target);
		sqlite3_bind_int(st, 5, a->count);
		sqlite3_bind_int64(st, 6, a->ref->line);
		rc = step_done(db, st);
	}
	gi_vec_destroy(&agg);
	return rc;
}

static int calls_write(struct st_db *db, int64_t file_id, int64_t function_id,
                       const struct facts_module *m, const struct facts_function *fn,
                       struct gi_map *targets)
{
	struct gi_vec agg;
	gi_vec_init(&agg, sizeof(struct agg_call));
	for (size_t i = 0; i < fn->calls.len; i++) {
		const struct facts_call *c = gi_vec_get(&fn->calls, i);
		if (c->kind != FACTS_CALL_DYNAMIC && c->kind != FACTS_CALL_COMPILER &&
		    c->kind != FACTS_CALL_INJECT_QUOTE && c->module &&
		    strcmp(c->module, m->name) != 0)
			gi_map_put(targets, c->module, (void *)1);
		size_t k = 0;
		for (; k < agg.len; k++) {
			struct agg_call *a = gi_vec_get(&agg, k);
			if (a->call->kind == c->kind && a->call->arity == c->arity &&
			    str_eq(a->call->function, c->function) &&
			    str_eq(a->call->module, c->module)) {
				a->count++;
				break;
			}
		}
		if (k == agg.len) {
			struct agg_call a = {c, 1};
			gi_vec_push(&agg, &a);
		}
	}
	int rc = 0;
	sqlite3_stmt *st = stmt(db, Q_CALL_INSERT);
	for (size_t k = 0; k < agg.len && !rc; k++) {
		struct agg_call *a = gi_vec_get(&agg, k);
		sqlite3_bind_int64(st, 1, file_id);
		sqlite3_bind_int64(st, 2, function_id);
		sqlite3_bind_int(st, 3, (int)a->call->kind);
		bind_text(st, 4, a->call->module);
		bind_text(st, 5, a->call->function);
		sqlite3_bind_int(st, 6, a->call->arity);
		sqlite3_bind_int(st, 7, a->count);
		sqlite3_bind_int64(st, 8, a->call->line);
		rc = step_done(db, st);
	}
	gi_vec_destroy(&agg);
	return rc;
}

static int function_write(struct st_db *db, int64_t file_id, int64_t module_id,
                          const struct facts_module *m, const struct facts_function *fn,
                          struct gi_map *targets)
{
	sqlite3_stmt *st = stmt(db, Q_FUNCTION_INSERT);
	sqlite3_bind_int64(st, 1, file_id);
	sqlite3_bind_int64(st, 2, module_id);
	bind_text(st, 3, fn->name);
	sqlite3_bind_int(st, 4, fn->arity);
	sqlite3_bind_int(st, 5, (int)fn->kind);
	sqlite3_bind_int(st, 6, fn->is_public);
	sqlite3_bind_int64(st, 7, fn->line_start);
	sqlite3_bind_int64(st, 8, fn->line_end);
	sqlite3_bind_int64(st, 9, fn->clauses);
	sqlite3_bind_int64(st, 10, fn->lines);
	sqlite3_bind_int(st, 11, fn->has_doc);
	sqlite3_bind_int(st, 12, fn->has_spec);
	sqlite3_bind_int(st, 13, fn->has_impl);
	sqlite3_bind_int(st, 14, fn->has_guard);
	sqlite3_bind_int(st, 15, fn->doc_false);
	sqlite3_bind_int(st, 16, fn->cyclomatic);
	sqlite3_bind_int(st, 17, fn->cognitive);
	sqlite3_bind_int(st, 18, fn->max_nesting);
	bind_text(st, 19, fn->delegate_to);
	bind_text(st, 20, fn->generated_by);
	sqlite3_bind_int(st, 21, fn->deprecated);
	sqlite3_bind_int(st, 22, fn->from_defaults);
	int rc = step_done(db, st);
	if (rc)
		return rc;
	db->delta.functions++;
	if (fn->generated_by)
		db->delta.generated++;
	if (fn->delegate_to && strcmp(fn->delegate_to, m->name) != 0)
		gi_map_put(targets, fn->delegate_to, (void *)1);
	return calls_write(db, file_id, sqlite3_last_insert_rowid(db->sql), m, fn, targets);
}

/* One site row. */
static int site_insert(struct st_db *db, int64_t file_id, int64_t module_id,
                       const struct facts_site *s)
{
	sqlite3_stmt *st = stmt(db, Q_SITE_INSERT);
	sqlite3_bind_int64(st, 1, file_id);
	sqlite3_bind_int64(st, 2, module_id);
	sqlite3_bind_int(st, 3, (int)s->kind);
	bind_text(st, 4, s->name);
	sqlite3_bind_int(st, 5, s->arity);
	sqlite3_bind_int64(st, 6, s->line);
	bind_text(st, 7, s->detail);
	sqlite3_bind_int64(st, 8, (int64_t)s->hash);
	sqlite3_bind_int64(st, 9, (int64_t)s->hash2);
	sqlite3_bind_int64(st, 10, s->size);
	return step_done(db, st);
}

/* The module's sites (facts.h, struct facts_site), one row each. */
static int sites_write(struct st_db *db, int64_t file_id, int64_t module_id,
                       const struct facts_module *m)
{
	int rc = 0;
	for (size_t i = 0; i < m->sites.len && !rc; i++)
		rc = site_insert(db, file_id, module_id, gi_vec_get(&m->sites, i));
	return rc;
}

/* Whether a module named `name` is stored (1), or not (0); < 0: an error. */
static int module_exists(struct st_db *db, const char *name)
{
	sqlite3_stmt *st = stmt(db, Q_MODULE_EXISTS);
	bind_text(st, 1, name);
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -sql_error(rc);
}

static int module_write(struct st_db *db, int64_t file_id, const struct facts_module *m,
                        int64_t *edges)
{
	/* The name's presence before the transaction changed it, for the
	 * count of distinct modules (st_summary_after_writes). */
	if (m->name && !gi_map_get(&db->delta.names, m->name)) {
		int exists = module_exists(db, m->name);
		if (exists < 0)
			return -exists;
		gi_map_put(&db->delta.names, m->name, exists ? &name_existed : &name_absent);
	}
	struct gi_buf fields, callbacks;
	gi_buf_init(&fields, 0);
	gi_buf_init(&callbacks, 0);
	sqlite3_stmt *st = stmt(db, Q_MODULE_INSERT);
	sqlite3_bind_int64(st, 1, file_id);
	bind_text(st, 2, m->name);
	sqlite3_bind_int(st, 3, (int)m->kind);
	bind_text(st, 4, m->impl_for);
	bind_text(st, 5, m->protocol);
	sqlite3_bind_int64(st, 6, m->line_start);
	sqlite3_bind_int64(st, 7, m->line_end);
	sqlite3_bind_int(st, 8, m->has_moduledoc);
	sqlite3_bind_int(st, 9, m->moduledoc_false);
	sqlite3_bind_int(st, 10, m->has_struct);
	sqlite3_bind_int(st, 11, (int)m->origin);
	bind_text(st, 12, join_strings(&fields, &m->struct_fields));
	bind_text(st, 13, join_strings(&callbacks, &m->callbacks));
	int rc = step_done(db, st);
	int64_t module_id = sqlite3_last_insert_rowid(db->sql);
	gi_buf_destroy(&fields);
	gi_buf_destroy(&callbacks);
	struct gi_map targets;
	gi_map_init(&targets);
	if (!rc)
		rc = refs_write(db, file_id, module_id, m, &targets);
	if (!rc)
		rc = sites_write(db, file_id, module_id, m);
	for (size_t i = 0; i < m->functions.len && !rc; i++)
		rc = function_write(db, file_id, module_id, m, gi_vec_get(&m->functions, i),
		                    &targets);
	*edges += (int64_t)targets.len;
	gi_map_destroy(&targets);
	return rc;
}

int st_file_write(struct st_db *db, const char *relpath, const struct facts_file *f, bool is_test)
{
	sqlite3_stmt *st = stmt(db, Q_FILE_FIND);
	bind_text(st, 1, relpath);
	int64_t old = 0;
	if (sqlite3_step(st) == SQLITE_ROW)
		old = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	int rc = old ? st_file_delete(db, old) : 0;
	if (rc)
		return rc;
	st = stmt(db, Q_FILE_INSERT);
	bind_text(st, 1, relpath);
	sqlite3_bind_int64(st, 2, (int64_t)f->size);
	sqlite3_bind_int64(st, 3, f->mtime_ns);
	sqlite3_bind_int64(st, 4, (int64_t)f->content_hash);
	sqlite3_bind_int(st, 5, (int)f->origin);
	sqlite3_bind_int(st, 6, is_test);
	sqlite3_bind_int(st, 7, f->skipped);
	bind_text(st, 8, f->skip_reason);
	sqlite3_bind_int64(st, 9, (int64_t)f->errors.len);
	sqlite3_bind_int(st, 10, f->bodies_hashed || f->skipped || f->origin != FACTS_FROM_SOURCE);
	rc = step_done(db, st);
	if (rc)
		return rc;
	int64_t file_id = sqlite3_last_insert_rowid(db->sql);
	st = stmt(db, Q_ERROR_INSERT);
	for (size_t i = 0; i < f->errors.len && !rc; i++) {
		const struct facts_error *e = gi_vec_get(&f->errors, i);
		sqlite3_bind_int64(st, 1, file_id);
		sqlite3_bind_int64(st, 2, e->line);
		bind_text(st, 3, e->message);
		rc = step_done(db, st);
	}
	int64_t edges = 0;
	for (size_t i = 0; i < f->modules.len && !rc; i++)
		rc = module_write(db, file_id, gi_vec_get(&f->modules, i), &edges);
	if (!rc) {
		st = stmt(db, Q_FILE_EDGES);
		sqlite3_bind_int64(st, 1, file_id);
		sqlite3_bind_int64(st, 2, edges);
		rc = step_done(db, st);
	}
	db->delta.files++;
	db->delta.edges += edges;
	db->delta.lists |= f->errors.len > 0 || f->skipped;
	return rc;
}

/* `*st`, prepared once per connection (SQLITE_PREPARE_PERSISTENT). */
static int meta_statement(struct st_db *db, sqlite3_stmt **st, const char *sql)
{
	if (*st)
		return 0;
	int rc = sqlite3_prepare_v3(db->sql, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);
	return rc == SQLITE_OK ? 0 : sql_error(rc);
}

int st_meta_set(struct st_db *db, const char *key, const char *value)
{
	int rc = meta_statement(db, &db->meta_set,
	                        "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)");
	if (rc)
		return rc;
	sqlite3_stmt *st = db->meta_set;
	bind_text(st, 1, key);
	bind_text(st, 2, value);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : sql_error(rc);
}

int st_meta_try_set(struct st_db *db, const char *key, const char *value)
{
	sqlite3_busy_timeout(db->sql, 0);
	int rc = st_meta_set(db, key, value);
	sqlite3_busy_timeout(db->sql, ST_BUSY_TIMEOUT_MS);
	return rc;
}

int st_meta_get(struct st_db *db, const char *key, char **out)
{
	*out = NULL;
	int rc = meta_statement(db, &db->meta_get, "SELECT value FROM meta WHERE key = ?1");
	if (rc)
		return rc;
	sqlite3_stmt *st = db->meta_get;
	bind_text(st, 1, key);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = gi_strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : sql_error(rc);
}

/* Adds parse_errors and skipped to `summary` (st_summary_fill). */
static int summary_lists(struct st_db *db, json_t *summary)
{
	json_t *errors = json_array(), *skipped = json_array();
	json_object_set_new(summary, "parse_errors", errors);
	json_object_set_new(summary, "skipped", skipped);
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db->sql,
	                            "SELECT f.path, e.line, e.message FROM parse_errors e JOIN "
	                            "files f ON f.id = e.file_id ORDER BY f.path, e.line",
	                            -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sql_error(rc);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *msg = (const char *)sqlite3_column_text(st, 2);
		json_array_append_new(errors, json_pack("{s:s, s:I, s:s}", "file",
		                                        sqlite3_column_text(st, 0), "line",
		                                        (json_int_t)sqlite3_column_int64(st, 1),
		                                        "message", msg ? msg : "syntax error"));
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sql_error(rc);
	rc = sqlite3_prepare_v2(db->sql,
	                        "SELECT path, skip_reason FROM files WHERE skipped ORDER BY path",
	                        -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sql_error(rc);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *why = (const char *)sqlite3_column_text(st, 1);
		json_array_append_new(skipped,
		                      json_pack("{s:s, s:s}", "file", sqlite3_column_text(st, 0),
		                                "reason", why ? why : "skipped"));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : sql_error(rc);
}

int st_summary_fill(struct st_db *db, json_t *summary)
{
	static const struct {
		const char *key, *sql;
	} counts[] = {
	    {"files", "SELECT count(*) FROM files"},
	    /* distinct names, as the graph and its queries count them: a module
	     * defined in two files (or in source and object code) is one */
	    {"modules", "SELECT count(DISTINCT name) FROM modules"},
	    /* written in the source; generated ones (known macros) apart */
	    {"edges", "SELECT coalesce(sum(edge_count), 0) FROM files"},
	};
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		int64_t v = 0;
		int rc = query_int(db, counts[i].sql, &v);
		if (rc)
			return rc;
		json_object_set_new(summary, counts[i].key, json_integer(v));
	}
	/* Written in the source, and generated (known macros) apart. */
	int64_t all = 0, generated = 0;
	int rc = query_int(db, "SELECT count(*) FROM functions", &all);
	if (!rc)
		rc = query_int(db, "SELECT count(generated_by) FROM functions", &generated);
	if (rc)
		return rc;
	json_object_set_new(summary, "functions", json_integer(all - generated));
	json_object_set_new(summary, "generated_functions", json_integer(generated));
	return summary_lists(db, summary);
}

int st_summary_after_writes(struct st_db *db, const json_t *previous, json_t *summary)
{
	static const char *const keys[] = {"files", "modules", "functions", "generated_functions",
	                                   "edges"};
	bool usable = json_is_object(previous) &&
	              json_is_array(json_object_get(previous, "parse_errors")) &&
	              json_is_array(json_object_get(previous, "skipped"));
	for (size_t i = 0; usable && i < sizeof(keys) / sizeof(keys[0]); i++)
		usable = json_is_integer(json_object_get(previous, keys[i]));
	if (!usable)
		return st_summary_fill(db, summary);
	/* A name counts once, in however many files: what moved is the names
	 * present now that were not before, less the reverse. */
	int64_t modules = 0;
	for (size_t i = 0; i < db->delta.names.cap; i++) {
		const struct gi_map_slot *slot = &db->delta.names.slots[i];
		if (!slot->key)
			continue;
		int now = module_exists(db, slot->key);
		if (now < 0)
			return -now;
		modules += now - (slot->value == &name_existed ? 1 : 0);
	}
	const int64_t moved[] = {db->delta.files, modules,
	                         db->delta.functions - db->delta.generated, db->delta.generated,
	                         db->delta.edges};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		json_object_set_new(
		    summary, keys[i],
		    json_integer(json_integer_value(json_object_get(previous, keys[i])) +
		                 moved[i]));
	if (db->delta.lists)
		return summary_lists(db, summary);
	json_object_set_new(summary, "parse_errors",
	                    json_deep_copy(json_object_get(previous, "parse_errors")));
	json_object_set_new(summary, "skipped",
	                    json_deep_copy(json_object_get(previous, "skipped")));
	return 0;
}

int st_data_version(struct st_db *db, int64_t *out)
{
	return query_int(db, "PRAGMA data_version", out);
}

/* ---- rows, one at a time (the graph loader reads them) ------------------ */

static const char *col_text(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

int st_read_begin(struct st_db *db)
{
	return exec(db, "BEGIN");
}

void st_read_end(struct st_db *db)
{
	exec(db, "COMMIT");
}

/* Prepares `sql`, calls `row` for each result row until it returns non-zero
 * (returned as is), and finalizes. */
static int rows_each(struct st_db *db, const char *sql, int (*row)(sqlite3_stmt *, void *),
                     void *ctx)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sql_error(rc);
	int stop = 0;
	while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW)
		stop = row(st, ctx);
	sqlite3_finalize(st);
	if (stop)
		return stop;
	return rc == SQLITE_DONE ? 0 : sql_error(rc);
}

struct each_ctx {
	union {
		st_module_fn module;
		st_module_name_fn name;
		st_function_fn function;
		st_ref_fn ref;
		st_call_fn call;
		st_fact_site_fn site;
		st_unhashed_fn unhashed;
	} fn;
	void *ctx;
};

static int module_row(sqlite3_stmt *st, void *ctx)
{
	const struct each_ctx *e = ctx;
	struct st_module_row r = {
	    .id = sqlite3_column_int64(st, 0),
	    .name = col_text(st, 1),
	    .kind = (enum facts_module_kind)sqlite3_column_int(st, 2),
	    .impl_for = col_text(st, 3),
	    .protocol = col_text(st, 4),
	    .line_start = (uint32_t)sqlite3_column_int64(st, 5),
	    .line_end = (uint32_t)sqlite3_column_int64(st, 6),
	    .has_moduledoc = sqlite3_column_int(st, 7),
	    .moduledoc_false = sqlite3_column_int(st, 8),
	    .has_struct = sqlite3_column_int(st, 9),
	    .origin = (enum facts_origin)sqlite3_column_int(st, 10),
	    .struct_fields = col_text(st, 11),
	    .callbacks = col_text(st, 12),
	    .file = col_text(st, 13),
	    .test = sqlite3_column_int(st, 14),
	};
	if (!r.name)
		return 0;
	return e->fn.module(e->ctx, &r);
}

int st_modules_each(struct st_db *db, st_module_fn fn, void *ctx)
{
	struct each_ctx e = {.fn.module = fn, .ctx = ctx};
	return rows_each(
	    db,
	    "SELECT m.id, m.name, m.kind, m.impl_for, m.protocol, m.line_start, "
	    "m.line_end, m.has_moduledoc, m.moduledoc_false, m.has_struct, m.origin, "
	    "m.struct_fields, m.callbacks, f.path, f.is_test FROM modules m JOIN files "
	    "f ON f.id = m.file_id ORDER BY m.origin, f.path, m.id",
	    module_row, &e);
}

static int module_name_row(sqlite3_stmt *st, void *ctx)
{
	const struct each_ctx *e = ctx;
	const char *name = col_text(st, 0);
	return name ? e->fn.name(e->ctx, name) : 0;
}

int st_module_names_each(struct st_db *db, st_module_name_fn fn, void *ctx)
{
	struct each_ctx e = {.fn.name = fn, .ctx = ctx};
	return rows_each(db, "SELECT DISTINCT name FROM modules", module_name_row, &e);
}

static int function_row(sqlite3_stmt *st, void *ctx)
{
	const struct each_ctx *e = ctx;
	struct st_function_row r = {
	    .id = sqlite3_column_int64(st, 0),
	    .module_id = sqlite3_column_int64(st, 1),
	    .name = col_text(st, 2),
	    .arity = sqlite3_column_int(st, 3),
	    .kind = (enum facts_function_kind)sqlite3_column_int(st, 4),
	    .is_public = sqlite3_column_int(st, 5),
	    .line_start = (uint32_t)sqlite3_column_int64(st, 6),
	    .line_end = (uint32_t)sqlite3_column_int64(st, 7),
	    .clauses = (uint32_t)sqlite3_column_int64(st, 8),
	    .lines = (uint32_t)sqlite3_column_int64(st, 9),
	    .has_doc = sqlite3_column_int(st, 10),
	    .has_spec = sqlite3_column_int(st, 11),
	    .has_impl = sqlite3_column_int(st, 12),
	    .has_guard = sqlite3_column_int(st, 13),
	    .doc_false = sqlite3_column_int(st, 14),
	    .cyclomatic = sqlite3_column_int(st, 15),
	    .cognitive = sqlite3_column_int(st, 16),
	    .max_nesting = sqlite3_column_int(st, 17),
	    .delegate_to = col_text(st, 18),
	    .generated_by = col_text(st, 19),
	    .deprecated = sqlite3_column_int(st, 20),
	    .from_defaults = sqlite3_column_int(st, 21),
	};
	if (!r.name)
		return 0;
	return e->fn.function(e->ctx, &r);
}

int st_functions_each(struct st_db *db, st_function_fn fn, void *ctx)
{
	struct each_ctx e = {.fn.function = fn, .ctx = ctx};
	return rows_each(
	    db,
	    "SELECT id, module_id, name, arity, kind, public, line_start, line_end, "
	    "clauses, lines, has_doc, has_spec, has_impl, has_guard, doc_false, "
	    "cyclomatic, cognitive, max_nesting, delegate_to, generated_by, deprecated, "
	    "from_defaults FROM functions "
	    "ORDER BY "
	    "id",
	    function_row, &e);
}

static int ref_row(sqlite3_stmt *st, void *ctx)
{
	const struct each_ctx *e = ctx;
	struct st_ref_row r = {
	    .module_id = sqlite3_column_int64(st, 0),
	    .kind = sqlite3_column_int(st, 1),
	    .target = col_text(st, 2),
	    .count = sqlite3_column_int(st, 3),
	};
	if (!r.target)
		return 0;
	return e->fn.ref(e->ctx, &r);
}

int st_refs_each(struct st_db *db, st_ref_fn fn, void *ctx)
{
	struct each_ctx e = {.fn.ref = fn, .ctx = ctx};
	return rows_each(db, "SELECT module_id, kind, target, count FROM refs", ref_row, &e);
}

static int call_row(sqlite3_stmt *st, void *ctx)
{
	const struct each_ctx *e = ctx;
	struct st_call_row r = {
	    .function_id = sqlite3_column_int64(st, 0),
	    .kind = (enum facts_call_kind)sqlite3_column_int(st, 1),
	    .module = col_text(st, 2),
	    .function = col_text(st, 3),
	    .arity = sqlite3_column_int(st, 4),
	    .count = sqlite3_column_int(st, 5),
	};
	return e->fn.call(e->ctx, &r);
}

int st_calls_each(struct st_db *db, st_call_fn fn, void *ctx)
{
	struct each_ctx e = {.fn.call = fn, .ctx = ctx};
	return rows_each(db, "SELECT function_id, kind, module, function, arity, count FROM calls",
	                 call_row, &e);
}

/* ---- sites (pre-change impact, graph/impact_check.c) ------------------- */

struct site_ctx {
	st_site_fn fn;
	void *ctx;
	bool call;
};

static int site_row(sqlite3_stmt *st, void *ctx)
{
	const struct site_ctx *s = ctx;
	struct st_site_row r = {
	    .file = col_text(st, 0),
	    .caller_module = col_text(st, 1),
	    .caller_function = s->call ? col_text(st, 2) : NULL,
	    .caller_arity = s->call ? sqlite3_column_int(st, 3) : -1,
	    .kind = sqlite3_column_int(st, 4),
	    .module = col_text(st, 5),
	    .function = s->call ? col_text(st, 6) : NULL,
	    .arity = s->call ? sqlite3_column_int(st, 7) : -1,
	    .count = sqlite3_column_int(st, 8),
	    .line = (uint32_t)sqlite3_column_int64(st, 9),
	};
	if (!r.file || !r.caller_module)
		return 0;
	return s->fn(s->ctx, &r);
}

static int sites_each(struct st_db *db, const char *sql, const char *key, struct site_ctx *s)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sql_error(rc);
	sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
	int stop = 0;
	while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW)
		stop = site_row(st, s);
	sqlite3_finalize(st);
	if (stop)
		return stop;
	return rc == SQLITE_DONE ? 0 : sql_error(rc);
}

int st_call_sites_each(struct st_db *db, const char *function, st_site_fn fn, void *ctx)
{
	struct site_ctx s = {fn, ctx, true};
	return sites_each(db,
	                  "SELECT f.path, m.name, fn.name, fn.arity, c.kind, c.module, c.function, "
	                  "c.arity, c.count, c.line FROM calls c JOIN functions fn ON fn.id = "
	                  "c.function_id JOIN modules m ON m.id = fn.module_id JOIN files f ON "
	                  "f.id = c.file_id WHERE c.function = ?1 ORDER BY f.path, c.line",
	                  function, &s);
}

int st_module_call_sites_each(struct st_db *db, const char *module, st_site_fn fn, void *ctx)
{
	struct site_ctx s = {fn, ctx, true};
	return sites_each(db,
	                  "SELECT f.path, m.name, fn.name, fn.arity, c.kind, c.module, c.function, "
	                  "c.arity, c.count, c.line FROM calls c JOIN functions fn ON fn.id = "
	                  "c.function_id JOIN modules m ON m.id = fn.module_id JOIN files f ON "
	                  "f.id = c.file_id WHERE c.module = ?1 ORDER BY f.path, c.line",
	                  module, &s);
}

int st_ref_sites_each(struct st_db *db, const char *target, st_site_fn fn, void *ctx)
{
	struct site_ctx s = {fn, ctx, false};
	return sites_each(db,
	                  "SELECT f.path, m.name, NULL, NULL, r.kind, r.target, NULL, NULL, "
	                  "r.count, r.line FROM refs r JOIN modules m ON m.id = r.module_id JOIN "
	                  "files f ON f.id = r.file_id WHERE r.target = ?1 ORDER BY f.path, r.line",
	                  target, &s);
}

/* ---- sites (contract checks, graph/contracts.c) ---------------------- */

static int fact_site_row(sqlite3_stmt *st, void *ctx)
{
	const struct each_ctx *e = ctx;
	struct st_fact_site_row r = {
	    .module_id = sqlite3_column_int64(st, 0),
	    .kind = sqlite3_column_int(st, 1),
	    .name = col_text(st, 2),
	    .arity = sqlite3_column_int(st, 3),
	    .line = (uint32_t)sqlite3_column_int64(st, 4),
	    .detail = col_text(st, 5),
	    .hash = (uint64_t)sqlite3_column_int64(st, 6),
	    .hash2 = (uint64_t)sqlite3_column_int64(st, 7),
	    .size = (uint32_t)sqlite3_column_int64(st, 8),
	};
	return e->fn.site(e->ctx, &r);
}

int st_sites_each(struct st_db *db, unsigned kinds, uint32_t min_body_size, st_fact_site_fn fn,
                  void *ctx)
{
	struct gi_buf sql;
	gi_buf_init(&sql, 0);
	gi_buf_puts(&sql, "SELECT module_id, kind, name, arity, line, detail, hash, hash2, size "
	                  "FROM sites WHERE kind IN (-1");
	for (int k = 0; k < FACTS_SITE_KIND_COUNT; k++)
		if (kinds & (1u << k))
			gi_buf_printf(&sql, ",%d", k);
	gi_buf_printf(&sql, ") AND (kind != %d OR size >= %u) ORDER BY module_id, line, rowid",
	              (int)FACTS_SITE_BODY, min_body_size);
	struct each_ctx e = {.fn.site = fn, .ctx = ctx};
	int rc = rows_each(db, sql.data, fact_site_row, &e);
	gi_buf_destroy(&sql);
	return rc;
}

/* ---- clause-body hashes, made on demand -------------------------------- */

static int unhashed_row(sqlite3_stmt *st, void *ctx)
{
	const struct each_ctx *e = ctx;
	struct st_unhashed_file r = {
	    .id = sqlite3_column_int64(st, 0),
	    .path = col_text(st, 1),
	    .hash = (uint64_t)sqlite3_column_int64(st, 2),
	};
	return r.path ? e->fn.unhashed(e->ctx, &r) : 0;
}

int st_files_unhashed_each(struct st_db *db, st_unhashed_fn fn, void *ctx)
{
	struct each_ctx e = {.fn.unhashed = fn, .ctx = ctx};
	char sql[160];
	snprintf(sql, sizeof(sql),
	         "SELECT id, path, hash FROM files WHERE NOT bodies_hashed AND NOT skipped AND "
	         "origin = %d ORDER BY path",
	         (int)FACTS_FROM_SOURCE);
	return rows_each(db, sql, unhashed_row, &e);
}

/* The ids of file `id`'s modules in the order they were written (the order
 * of facts_file.modules); at most `max`; the count in *n. */
static int bodies_module_ids(struct st_db *db, int64_t id, int64_t *ids, size_t max, size_t *n)
{
	sqlite3_stmt *st = stmt(db, Q_BODIES_MODULES);
	sqlite3_bind_int64(st, 1, id);
	int rc;
	*n = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n < max)
			ids[*n] = sqlite3_column_int64(st, 0);
		(*n)++;
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : sql_error(rc);
}

int st_file_bodies_write(struct st_db *db, int64_t id, const struct facts_file *f, bool *written)
{
	*written = false;
	sqlite3_stmt *st = stmt(db, Q_BODIES_FILE);
	sqlite3_bind_int64(st, 1, id);
	int step = sqlite3_step(st);
	uint64_t stored = step == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(st, 0) : 0;
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		return sql_error(step);
	/* gone, hashed by another connection meanwhile, or re-indexed from
	 * other content: nothing to add */
	if (step != SQLITE_ROW || stored != f->content_hash || !f->bodies_hashed)
		return 0;
	size_t n = 0, count = f->modules.len;
	int64_t *ids = gi_malloc(sizeof(*ids) * (count + 1));
	int rc = bodies_module_ids(db, id, ids, count, &n);
	if (!rc && n != count)
		goto done; /* not what this reader made of it: leave it */
	for (size_t i = 0; i < count && !rc; i++) {
		const struct facts_module *m = gi_vec_get(&f->modules, i);
		for (size_t k = 0; k < m->sites.len && !rc; k++) {
			const struct facts_site *s = gi_vec_get(&m->sites, k);
			if (s->kind == FACTS_SITE_BODY)
				rc = site_insert(db, id, ids[i], s);
		}
	}
	if (!rc) {
		sqlite3_bind_int64(stmt(db, Q_BODIES_DONE), 1, id);
		rc = step_done(db, stmt(db, Q_BODIES_DONE));
	}
	*written = rc == 0;
done:
	gi_free(ids);
	return rc;
}
