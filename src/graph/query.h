/*
 * query.h - the static engine's public contract: index a project, open its
 * database, and answer named queries with JSON.
 *
 * The CLI (`giulia modules`, `giulia dependents X --json`, ...), the worker's
 * REST routes (/api/index/..., /api/knowledge/...) and the profile builder
 * (fuse/) all go through kg_query(), so that one query has one implementation
 * and one JSON shape (documented in docs/API.md and docs/SCHEMA.md). Each
 * query is declared once in the registry, graph/query_list.h (its
 * parameters, route, MCP tool and command; graph/query_registry.h).
 *
 * Thread-safety: a struct kg_db is used by one thread at a time; open one per
 * thread (SQLite WAL lets readers run beside a writer).
 */
#ifndef GIULIA_GRAPH_QUERY_H
#define GIULIA_GRAPH_QUERY_H

#include <jansson.h>
#include <stdbool.h>

struct kg_db;

struct kg_index_options {
	bool force; /* re-parse every file even when unchanged */
	const char **
	    beam_dirs; /* NULL-terminated list of ebin/lib dirs to read object code from, or NULL */
	int jobs;      /* parser threads; 0: number of cores */
	/* Without beam_dirs, the object code of the project's own applications
	 * under ROOT/_build is read (index_build_dirs); true leaves it out. */
	bool no_build;
	/* Source files only (a query's refresh, kg_db_refresh_on_query): no
	 * object code is read, and the object code indexed before (stored
	 * under absolute paths) is kept. */
	bool sources_only;
	/* The summary leaves out the database's counts (files, modules,
	 * functions, edges, parse_errors, skipped): a query's refresh discards
	 * them, and counting costs more than the check itself. */
	bool no_counts;
};

/* Indexes the project at `root` (absolute or relative; canonicalised) into the
 * database at `db_path` (NULL: ROOT/.giulia/index.db), incrementally: files
 * unchanged by size, mtime and content hash are not re-parsed. On success
 * *summary_out (caller decrefs) holds at least files, modules, functions,
 * edges, parse_errors (array of {file, line, message}), skipped, elapsed_ms,
 * plus root, db, parsed, unchanged, removed. Skips deps/, _build/,
 * node_modules/, .git/, .giulia/ and what ROOT/.gitignore ignores. Modules
 * from `beam_dirs` (object code) join the same graph; where a module has both
 * source and object code, source wins. Without `beam_dirs`, the ebin
 * directories of the project's own applications under ROOT/_build are used
 * (unless `no_build`), listed in the summary's beam_dirs. Safe to call while other threads or
 * processes query the same database. */
int kg_index_project(const char *root, const char *db_path, const struct kg_index_options *opt,
                     json_t **summary_out);

/* Opens an existing index database read-write (`create` false) or creates it.
 * An older schema is migrated or rebuilt, a corrupt file gives GI_ECORRUPT. */
int kg_db_open(const char *db_path, bool create, struct kg_db **out);
/* With `on`, every kg_query on `db` first brings the index up to date with
 * its project's source (the root the index recorded): files added, edited
 * or removed since are indexed again, incrementally, sources only (object
 * code indexed before is kept), so that no answer comes from an old index.
 * A check that finds nothing changed costs a walk of the project's
 * directories and a stat per file, and writes nothing. When the refresh
 * fails (a read-only database, the root gone, a lock held past the busy
 * timeout), the query answers from what is stored and its JSON says so in
 * `index_stale` ({reason}). Off by default (a node's index of object code,
 * finalize's, must not be touched). */
void kg_db_refresh_on_query(struct kg_db *db, bool on);
/* Brings the graph snapshot beside the database (DB.graph, docs/SCHEMA.md
 * "The graph snapshot") up to date with it: when the file is missing or of
 * other contents, the graph is loaded from the rows and written. Cold
 * processes then answer from the snapshot. Best effort: returns 0 when it
 * was current or written, a negative GI_E* code when the graph could not be
 * loaded (a write that fails leaves no snapshot and is not an error). */
int kg_db_snapshot_update(struct kg_db *db);
/* Closes the database; NULL does nothing. */
void kg_db_close(struct kg_db *db);
/* The database of the project at `root` (ROOT/.giulia/index.db); caller frees. */
char *kg_db_default_path(const char *root);

struct kg_query_params {
	const char *module;   /* module name, display form */
	const char *function; /* "name/arity" within module, or NULL */
	const char *from, *to;
	int depth; /* 0: default */
	int top;   /* 0: default */
	bool include_external;
	/* Direct references only: leave out the dispatch edges and calls (impl,
	 * callback, value, mfa, apply) that are included by default. */
	bool direct_only;
	/* xref: "compile", "export", "runtime", "compile-connected" or NULL. */
	const char *label;
	/* Named arguments of the queries that take more than the fields above
	 * (search_text, search_code: docs/SEARCH.md), a JSON object, borrowed;
	 * values may be JSON numbers and booleans or their string forms. */
	const json_t *args;
	/* The latest stored profile of the project, as obs_store_profile_get
	 * gives it ({id, node, created_ms, profile}; borrowed), or NULL: the
	 * live weight of preflight and the findings of briefing
	 * (docs/ASSIST.md). */
	const json_t *profile;
};

/* Runs the query `name` and returns its JSON (caller decrefs). Names:
 *   status summary stats modules functions module_details complexity
 *   dependents dependencies centrality impact cycles god_modules fan_in_out
 *   coupling dead_code heatmap change_risk path topology unprotected_hubs
 *   api_surface function_details hubs xref search_text search_code preflight
 *   briefing impact_check plan_validate check (docs/ASSIST.md)
 *   contracts conventions structs duplicates (graph/contracts.h, docs/CHECKS.md)
 * Unknown name: GI_EINVAL (kg_query_error_message() says more when a
 * query refuses its arguments). Unknown module or function: GI_ENOTFOUND.
 * A `module` of the form "Mod.fun/arity" with no `function` names that
 * function. Every result's shape is in docs/SCHEMA.md ("Query results").
 * The graph behind the queries is loaded on the first call and reloaded
 * when the database has changed since (another connection committed).
 *
 * module_details returns at least: name, file, line_start, line_end, kind,
 * functions [{name, arity, visibility, kind, line, cyclomatic, cognitive,
 * clauses}], complexity_total, complexity_max, ca, ce, instability,
 * in_degree, out_degree, centrality, hub (bool), heat, zone ("red"|"yellow"|
 * "green"), change_risk, uses [modules it `use`s], behaviours, dependents and
 * dependencies [{module, kinds}].
 * function_details (module + function) returns at least: module, name,
 * arity, cyclomatic, cognitive, line, callers [{module, name, arity}],
 * callees [{module, name, arity}]. */
int kg_query(struct kg_db *db, const char *name, const struct kg_query_params *p, json_t **out);

/* Why the last kg_query on this thread failed with GI_EINVAL, in words for
 * a user ("the regular expression does not compile: ..."), or NULL when it
 * gave no reason. Valid until the next kg_query on the thread. */
const char *kg_query_error_message(void);

/* The project root the database indexes (canonical path; caller frees with
 * gi_free): what stored profiles name as their project. */
int kg_db_root(struct kg_db *db, char **out);

struct kg_graph;
/* The finished graph behind the queries (graph.h; borrowed from `db`,
 * valid until the next call on `db` that may reload it: kg_query,
 * kg_db_graph, kg_db_close), loaded on first use, for readers that join it
 * with other data through its typed API (graph/lookup.h) rather than
 * through query JSON. Not thread-safe, as `db`. */
int kg_db_graph(struct kg_db *db, const struct kg_graph **out);

/* Modules (display form) of the database that are defined in the project. */
int kg_project_modules(struct kg_db *db, json_t **out_array);

/* How many of `names` (a JSON object used as a set of module names, display
 * form; borrowed) the database defines, in *hits. Reads only the module
 * names of the database, never loading the graph: cheap enough to ask of
 * every indexed project. */
int kg_db_defined_count(struct kg_db *db, json_t *names, size_t *hits);

#endif
