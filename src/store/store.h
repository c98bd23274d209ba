/*
 * store.h - the index database: SQLite (WAL) holding the facts of every
 * indexed file of one project, with a versioned schema (docs/SCHEMA.md).
 *
 * The store keeps facts, not metrics: the graph and its metrics are derived
 * from the facts when a database is opened for queries (graph/load.c reads
 * the rows through the st_*_each iterators below), so that an incremental
 * re-index only rewrites the rows of the changed files and nothing stored
 * can go stale. The store knows nothing of the graph.
 *
 * Opening checks the schema: a database of an older version is rebuilt empty
 * (it is a cache of the sources; the next index fills it), a newer or
 * foreign one fails with GI_EDBVERSION, a file that is not SQLite with
 * GI_ECORRUPT. Thread-safety: one struct st_db per thread.
 */
#ifndef GIULIA_STORE_STORE_H
#define GIULIA_STORE_STORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/map.h"
#include "source/facts.h"

#define ST_SCHEMA_VERSION 6

struct st_db;

/* What the store knows of an indexed file, for incremental indexing. */
struct st_file_state {
	int64_t id;
	uint64_t size;
	int64_t mtime_ns;
	uint64_t hash;
	bool seen; /* set by the indexer while walking */
};

/* Opens (or with `create`, creates) the database at `path`. Fails with
 * GI_ENOENT when it does not exist and `create` is false, GI_ECORRUPT when
 * the file is not a SQLite database, GI_EDBVERSION for a newer or foreign
 * schema. The caller closes *out with st_close. */
int st_open(const char *path, bool create, struct st_db **out);
/* Closes the database; NULL does nothing. */
void st_close(struct st_db *db);

/* Copies the WAL into the database and truncates it when it is larger than
 * `wal_bytes`: every process that opens the database first reads the whole
 * WAL, so a big one left by a full index would slow every later query. */
int st_checkpoint_if_large(struct st_db *db, int64_t wal_bytes);

int st_begin(struct st_db *db);
int st_commit(struct st_db *db);
void st_rollback(struct st_db *db);

/* Loads every file row into `out` (relative path -> struct st_file_state *,
 * which the caller frees with gi_free). */
int st_files_load(struct st_db *db, struct gi_map *out);
/* Removes a file and everything extracted from it. */
int st_file_delete(struct st_db *db, int64_t id);
/* Records a new mtime for a file whose content did not change. */
int st_file_touch(struct st_db *db, int64_t id, int64_t mtime_ns);
/* Replaces whatever was stored for `relpath` by the facts of `f` (borrowed;
 * f->size, f->mtime_ns and f->content_hash must be set). */
int st_file_write(struct st_db *db, const char *relpath, const struct facts_file *f, bool is_test);

/* Key/value metadata (root, indexed_at, ...). st_meta_get: *out is NULL when absent;
 * the caller frees it with gi_free. */
int st_meta_set(struct st_db *db, const char *key, const char *value);
int st_meta_get(struct st_db *db, const char *key, char **out);
/* st_meta_set outside a transaction that does not wait for another
 * connection's write: GI_EBUSY at once while one holds the database (for
 * what is only worth writing when it costs nothing). */
int st_meta_try_set(struct st_db *db, const char *key, const char *value);

/* Adds files, modules, functions, edges (sum over files of distinct module
 * dependencies), parse_errors [{file, line, message}] and skipped
 * [{file, reason}] to the object `summary`. */
int st_summary_fill(struct st_db *db, json_t *summary);
/* The summary after this transaction's writes (st_file_write,
 * st_file_delete since st_begin), without counting every table again:
 * `previous`, the summary of the database before them (as st_summary_fill
 * made it), moved by what they added and removed; the lists of parse
 * errors and skipped files read again only when a file in them came or
 * went. With `previous` NULL or not such a summary, st_summary_fill. */
int st_summary_after_writes(struct st_db *db, const json_t *previous, json_t *summary);

/* ---- rows, one at a time ----
 * Each iterator calls `fn` once per row, in the order stated, until `fn`
 * returns non-zero, which the iterator then returns; otherwise 0 or a GI_E*
 * code. A row and its strings are borrowed for the call only. Rows without
 * a name (a damaged file) are skipped. Between st_read_begin and
 * st_read_end every iterator sees the same state of the database, whatever
 * other connections commit meanwhile. */
int st_read_begin(struct st_db *db);
void st_read_end(struct st_db *db);

struct st_module_row {
	int64_t id;
	const char *name; /* display form */
	const char *file; /* the defining file, relative to the project root */
	enum facts_module_kind kind;
	const char *impl_for, *protocol; /* NULL when absent */
	uint32_t line_start, line_end;
	bool test, has_moduledoc, moduledoc_false, has_struct;
	enum facts_origin origin;
	const char *struct_fields, *callbacks; /* comma-joined lists, or NULL */
};
typedef int (*st_module_fn)(void *ctx, const struct st_module_row *row);
/* Every module definition, by origin (source first), file path, then id. */
int st_modules_each(struct st_db *db, st_module_fn fn, void *ctx);

typedef int (*st_module_name_fn)(void *ctx, const char *name);
/* The distinct names (display form) of the modules defined in the database:
 * a cheap read (no functions, edges or metrics) for asking which project
 * defines some modules. */
int st_module_names_each(struct st_db *db, st_module_name_fn fn, void *ctx);

struct st_function_row {
	int64_t id, module_id; /* module_id: st_module_row.id */
	const char *name;
	int arity;
	enum facts_function_kind kind;
	bool is_public;
	uint32_t line_start, line_end, clauses, lines;
	bool has_doc, has_spec, has_impl, has_guard, doc_false;
	int cyclomatic, cognitive, max_nesting;
	const char *delegate_to;  /* NULL when not a defdelegate */
	const char *generated_by; /* the known macro that made it, or NULL */
	bool deprecated, from_defaults;
};
typedef int (*st_function_fn)(void *ctx, const struct st_function_row *row);
/* Every function, by id. */
int st_functions_each(struct st_db *db, st_function_fn fn, void *ctx);

struct st_ref_row {
	int64_t module_id;
	int kind; /* enum facts_ref_kind as stored: check the range before use */
	const char *target;
	int count;
};
typedef int (*st_ref_fn)(void *ctx, const struct st_ref_row *row);
/* Every module-level reference. */
int st_refs_each(struct st_db *db, st_ref_fn fn, void *ctx);

struct st_call_row {
	int64_t function_id; /* st_function_row.id of the caller */
	enum facts_call_kind kind;
	const char *module; /* NULL: the enclosing module */
	const char *function;
	int arity, count;
};
typedef int (*st_call_fn)(void *ctx, const struct st_call_row *row);
/* Every call. */
int st_calls_each(struct st_db *db, st_call_fn fn, void *ctx);

/* One place that names a function or a module (graph/impact_check.c): the
 * file (relative to the root) and line where the calling function of
 * caller_module (caller_function/caller_arity; NULL/-1 for a module-level
 * reference) first makes it, `count` times in all there. For a call: kind
 * is an enum facts_call_kind, module/function/arity the target as written
 * (module NULL: the enclosing module); for a reference: kind is an enum
 * facts_ref_kind and module the target. Strings borrowed for the call. */
struct st_site_row {
	const char *file, *caller_module, *caller_function;
	int caller_arity;
	int kind;
	const char *module, *function;
	int arity, count;
	uint32_t line;
};
typedef int (*st_site_fn)(void *ctx, const struct st_site_row *row);
/* Every stored call of a function named `function` (any module, any
 * arity), by file and line. A non-zero return of fn stops the walk. */
int st_call_sites_each(struct st_db *db, const char *function, st_site_fn fn, void *ctx);
/* Every stored call written with module `module` (Mod.f, &Mod.f/n, {Mod,
 * :f, args}, apply(Mod, ...); not local or imported calls), by file and
 * line. */
int st_module_call_sites_each(struct st_db *db, const char *module, st_site_fn fn, void *ctx);
/* Every module-level reference (alias, import, use, struct, behaviour, ...)
 * to module `target` (display form), by file and line. */
int st_ref_sites_each(struct st_db *db, const char *target, st_site_fn fn, void *ctx);
/* A stored site of the contract checks (facts.h, struct facts_site). */
struct st_fact_site_row {
	int64_t module_id; /* st_module_row.id */
	int kind;          /* enum facts_site_kind as stored: check the range before use */
	const char *name;  /* NULL when the site has no function */
	int arity;
	uint32_t line;
	const char *detail; /* NULL when absent */
	uint64_t hash, hash2;
	uint32_t size;
};
typedef int (*st_fact_site_fn)(void *ctx, const struct st_fact_site_row *row);
/* Every site (facts.h, struct facts_site) whose kind is in the bitmask
 * `kinds` (1u << enum facts_site_kind), body sites only when their size is
 * at least `min_body_size`, by module id, then line. */
int st_sites_each(struct st_db *db, unsigned kinds, uint32_t min_body_size, st_fact_site_fn fn,
                  void *ctx);

/* ---- clause-body hashes, made on demand ----
 * The index leaves out the FACTS_SITE_BODY sites (EX_PARSE_NO_BODY_HASHES);
 * `duplicates` adds them per file the first time it needs them. A file
 * re-indexed later has none again until then. */
struct st_unhashed_file {
	int64_t id;
	const char *path; /* relative to the project root */
	uint64_t hash;    /* of the content indexed (files.hash) */
};
typedef int (*st_unhashed_fn)(void *ctx, const struct st_unhashed_file *row);
/* Every indexed source file (not skipped) whose body sites are not stored,
 * by path. */
int st_files_unhashed_each(struct st_db *db, st_unhashed_fn fn, void *ctx);
/* Stores the FACTS_SITE_BODY sites of `f` (borrowed; read from the file
 * again, with its content_hash set) for file `id` and marks the file hashed;
 * call it inside a write transaction (st_begin). Writes nothing, *written
 * false, when the file is gone, already hashed, was indexed from another
 * content than f->content_hash, or its stored modules are not f's. */
int st_file_bodies_write(struct st_db *db, int64_t id, const struct facts_file *f, bool *written);

/* A number that changes whenever another connection commits (PRAGMA data_version). */
int st_data_version(struct st_db *db, int64_t *out);

#endif
