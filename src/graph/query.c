/*
 * query.c - the static engine's query side (see query.h): open an index
 * database, keep its knowledge graph in memory, answer named queries as JSON
 * by dispatching to their q_NAME (query_int.h names the files that hold
 * them; those delegating to search, assist and review are here).
 *
 * The graph is loaded from the store on the first query and reloaded only
 * when another connection has committed since (PRAGMA data_version), so that
 * a query costs a lookup and some JSON building. Every query's JSON shape is
 * documented in docs/SCHEMA.md ("Query results"). A `module` parameter of
 * the form "Mod.fun/arity" with no `function` names that function.
 */
#include "graph/query.h"
#include "graph/query_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/hash.h"
#include "base/log.h"
#include "base/str.h"
#include "graph/args.h"
#include "graph/graph.h"
#include "graph/contracts.h"
#include "graph/review.h"
#include "graph/search.h"
#include "graph/assist.h"
#include "store/store.h"

char *kg_db_default_path(const char *root)
{
	struct gi_buf b;
	gi_buf_init(&b, 0);
	gi_buf_printf(&b, "%s/.giulia/index.db", root);
	return gi_buf_take(&b);
}

int kg_db_open(const char *db_path, bool create, struct kg_db **out)
{
	*out = NULL;
	struct st_db *st = NULL;
	int rc = st_open(db_path, create, &st);
	if (rc)
		return rc;
	struct kg_db *db = gi_calloc(1, sizeof(*db));
	db->store = st;
	db->path = gi_strdup(db_path);
	db->version = -1;
	*out = db;
	return 0;
}

void kg_db_close(struct kg_db *db)
{
	if (!db)
		return;
	kg_word_vectors_free(db->vectors);
	kg_search_index_free(db->search);
	kg_graph_free(db->graph);
	st_close(db->store);
	gi_free(db->path);
	gi_free(db);
}

void kg_db_refresh_on_query(struct kg_db *db, bool on)
{
	if (db)
		db->refresh = on;
}

/* Brings the index up to date with its project's source (see
 * kg_db_refresh_on_query). Returns NULL, or why it could not (static). */
static const char *db_refresh(struct kg_db *db)
{
	char *root = NULL;
	if (st_meta_get(db->store, "root", &root) != 0 || !root)
		return NULL; /* never indexed from a source tree: nothing to compare */
	const char *why = NULL;
	struct kg_index_options opt = {.sources_only = true, .jobs = 2, .no_counts = true};
	json_t *summary = NULL;
	int rc = kg_index_project(root, db->path, &opt, &summary);
	if (rc == GI_ENOENT)
		why = "the project's root is gone";
	else if (rc)
		why = "the index could not be updated (read-only, or locked)";
	json_decref(summary);
	gi_free(root);
	return why;
}

static int graph_get(struct kg_db *db, struct kg_graph **out);

/* The stamp of the database's contents for its graph snapshot: its index
 * generation and the time of its last write (meta), so that a write by a
 * Giulia that did not count generations still changes it. False when the
 * database was never written by an index. */
static bool snapshot_stamp(struct kg_db *db, uint64_t *stamp)
{
	/* GIULIA_GRAPH_SNAPSHOT=0: never read nor write one (tests and
	 * benches compare both paths). */
	const char *env = getenv("GIULIA_GRAPH_SNAPSHOT");
	if (env && strcmp(env, "0") == 0)
		return false;
	char *generation = NULL, *at = NULL;
	bool ok = st_meta_get(db->store, "generation", &generation) == 0 &&
	          st_meta_get(db->store, "indexed_at_ms", &at) == 0 && at;
	if (ok) {
		/* An index of a Giulia that counted no generations: its time alone. */
		const char *gen = generation ? generation : "0";
		uint64_t h = gi_hash64(gen, strlen(gen), GI_HASH_SEED);
		*stamp = gi_hash64(at, strlen(at), h);
	}
	gi_free(generation);
	gi_free(at);
	return ok;
}

/* The graph of the database: from its snapshot (DB.graph) when that is of
 * the same contents, else from the rows, and then the snapshot is written
 * for the next process (best effort: a read-only directory just has none). */
static int graph_open(struct kg_db *db, struct kg_graph **out)
{
	uint64_t stamp = 0;
	bool stamped = snapshot_stamp(db, &stamp);
	db->graph_stamp = stamp;
	db->graph_stamped = stamped;
	struct gi_buf path;
	gi_buf_init(&path, 0);
	gi_buf_printf(&path, "%s.graph", db->path);
	int rc = GI_ENOENT;
	if (stamped) {
		rc = kg_graph_snapshot_read(gi_buf_str(&path), stamp, out);
		if (rc && rc != GI_ENOENT)
			gi_log_debug("query", "graph snapshot %s not used (%s): loading the index",
			             gi_buf_str(&path), gi_strerror(rc));
	}
	db->graph_source = "snapshot";
	if (rc) {
		db->graph_source = "index";
		rc = kg_graph_load(db->store, out);
		if (!rc && stamped) {
			int wrc = kg_graph_snapshot_write(*out, stamp, gi_buf_str(&path));
			if (wrc)
				gi_log_debug("query", "graph snapshot %s not written: %s",
				             gi_buf_str(&path), gi_strerror(wrc));
		}
	}
	gi_buf_destroy(&path);
	return rc;
}

int kg_db_snapshot_update(struct kg_db *db)
{
	uint64_t stamp = 0;
	if (!snapshot_stamp(db, &stamp))
		return 0;
	struct gi_buf path;
	gi_buf_init(&path, 0);
	gi_buf_printf(&path, "%s.graph", db->path);
	bool current = kg_graph_snapshot_current(gi_buf_str(&path), stamp);
	gi_buf_destroy(&path);
	if (current)
		return 0;
	struct kg_graph *g = NULL;
	return graph_get(db, &g);
}

/* Loads the graph, or reloads it when the database changed underneath. */
static int graph_get(struct kg_db *db, struct kg_graph **out)
{
	int64_t version = 0;
	int rc = st_data_version(db->store, &version);
	if (rc)
		return rc;
	if (!db->graph || version != db->version) {
		struct kg_graph *g = NULL;
		rc = graph_open(db, &g);
		if (rc)
			return rc;
		kg_word_vectors_free(db->vectors);
		db->vectors = NULL;
		kg_search_index_free(db->search);
		db->search = NULL;
		kg_graph_free(db->graph);
		db->graph = g;
		db->version = version;
	}
	*out = db->graph;
	return 0;
}

/* ---- search (graph/search.c) ---------------------------------------------- */

static int by_path(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int q_search_text(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                  json_t *out)
{
	char *root = NULL;
	struct gi_map files;
	gi_map_init(&files);
	int rc = st_meta_get(db->store, "root", &root);
	if (!rc)
		rc = st_files_load(db->store, &files);
	const char **paths = gi_malloc(sizeof(char *) * (files.len + 1));
	size_t n = 0;
	for (size_t i = 0; i < files.cap; i++)
		if (files.slots[i].key) {
			paths[n++] = files.slots[i].key;
			gi_free(files.slots[i].value);
		}
	qsort(paths, n, sizeof(char *), by_path);
	if (!rc)
		rc = kg_search_text(g, root, paths, n, p, out);
	gi_free(paths);
	gi_map_destroy(&files);
	gi_free(root);
	return rc;
}

/* The .beam files whose docs the word vectors learn from: GIULIA_DOC_BEAMS
 * (globs separated by ':'), else the installed Elixir and OTP. */
#define DOC_GLOBS_MAX 16
static int search_vectors_load(struct kg_db *db)
{
	const char *globs[DOC_GLOBS_MAX + 1] = {"/usr/lib/elixir/lib/*/ebin/*.beam",
	                                        "/usr/lib/erlang/lib/*/ebin/*.beam", NULL};
	char *env = getenv("GIULIA_DOC_BEAMS") ? gi_strdup(getenv("GIULIA_DOC_BEAMS")) : NULL;
	if (env) {
		int n = 0;
		for (char *save = NULL, *t = strtok_r(env, ":", &save); t && n < DOC_GLOBS_MAX;
		     t = strtok_r(NULL, ":", &save))
			globs[n++] = t;
		globs[n] = NULL;
	}
	struct gi_buf cache;
	gi_buf_init(&cache, 0);
	const char *slash = strrchr(db->path, '/');
	if (slash)
		gi_buf_printf(&cache, "%.*s/search_vectors.bin", (int)(slash - db->path), db->path);
	else
		gi_buf_puts(&cache, "search_vectors.bin");
	int rc = kg_word_vectors_get(db->search, cache.data, db->path, globs, &db->vectors);
	gi_buf_destroy(&cache);
	gi_free(env);
	return rc;
}

/* search_code's index of `g`: from DB.search when that file is of the
 * graph's stamp, else built (reading the documentation in the sources) and
 * written there for the next process (best effort). */
static int search_index_open(struct kg_db *db, const struct kg_graph *g)
{
	struct gi_buf path;
	gi_buf_init(&path, 0);
	gi_buf_printf(&path, "%s.search", db->path);
	int rc = GI_ENOENT;
	if (db->graph_stamped) {
		rc = kg_search_index_read(gi_buf_str(&path), db->graph_stamp, g, &db->search);
		if (rc && rc != GI_ENOENT)
			gi_log_debug("query", "search snapshot %s not used (%s): building it",
			             gi_buf_str(&path), gi_strerror(rc));
	}
	if (rc) {
		char *root = NULL;
		rc = st_meta_get(db->store, "root", &root);
		if (!rc) {
			db->search = kg_search_index_build(g, root);
			if (db->graph_stamped) {
				int wrc = kg_search_index_write(db->search, db->graph_stamp,
				                                gi_buf_str(&path));
				if (wrc)
					gi_log_debug("query", "search snapshot %s not written: %s",
					             gi_buf_str(&path), gi_strerror(wrc));
			}
		}
		gi_free(root);
	}
	gi_buf_destroy(&path);
	return rc;
}

int q_search_code(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                  json_t *out)
{
	if (!db->search) {
		int rc = search_index_open(db, g);
		if (rc)
			return rc;
	}
	int mode = kg_search_code_mode(p);
	if (mode < 0)
		return mode;
	if (mode == 1 && !db->vectors) {
		int rc = search_vectors_load(db);
		if (rc)
			return rc;
	}
	return kg_search_code(g, db->search, db->vectors, p, out);
}

int q_preflight(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                json_t *out)
{
	(void)db;
	int m, fi = -1;
	int rc = query_module_lookup(g, p, &m);
	if (!rc && p->function)
		rc = query_function_lookup(g, m, p->function, &fi);
	if (!rc && !kg_module_at(g, m)->project)
		rc = GI_ENOTFOUND;
	if (rc)
		return rc;
	rc = kg_preflight(g, m, fi, p->depth > 0 ? query_depth_of(p) : 3, out);
	if (!rc)
		json_object_set_new(out, "live", kg_live_weight(g, m, fi, p->profile));
	return rc;
}

/* ---- assist: briefing, impact_check, plan_validate, check (assist.h) --------- */

int kg_db_root(struct kg_db *db, char **out)
{
	*out = NULL;
	return st_meta_get(db->store, "root", out);
}

int q_briefing(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
               json_t *out)
{
	(void)db;
	return kg_briefing(g, p ? p->profile : NULL, query_top_of(p, 5), out);
}

int q_impact_check(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                   json_t *out)
{
	int m, fi = -1;
	int rc = query_module_lookup(g, p, &m);
	if (!rc && p->function)
		rc = query_function_lookup(g, m, p->function, &fi);
	if (rc == GI_ENOTFOUND && p->function && kg_module_is_core(kg_module_at(g, m))) {
		/* a @callback of a behaviour defined here, with no function of its own */
		const struct kg_module *km = kg_module_at(g, m);
		for (size_t i = 0; i < km->callbacks.len; i++)
			if (strcmp(GI_VEC_AT(&km->callbacks, const char *, i), p->function) == 0) {
				const char *slash = strrchr(p->function, '/');
				char name[256];
				snprintf(name, sizeof(name), "%.*s", (int)(slash - p->function),
				         p->function);
				return kg_impact_check_callback(
				    g, m, name, (int)strtol(slash + 1, NULL, 10), p->args, out);
			}
	}
	if (!rc && !kg_module_is_core(kg_module_at(g, m)))
		rc = GI_ENOTFOUND;
	if (rc == GI_EINVAL && (!p || !p->module))
		kg_query_fail("impact_check needs a module or MOD.fun/arity");
	if (rc)
		return rc;
	return kg_impact_check(g, db->store, m, fi, p->args, out);
}

/* A JSON document argument: an object, or its text (MCP string
 * arguments), at most KG_PLAN_TEXT_MAX bytes; *owned set when parsed. */
static int doc_arg(const json_t *args, const char *key, json_t **out, bool *owned)
{
	const json_t *v = json_object_get(args, key);
	*out = (json_t *)v;
	*owned = false;
	if (!json_is_string(v))
		return 0;
	if (json_string_length(v) > KG_PLAN_TEXT_MAX) {
		kg_query_fail("%s: more than %u bytes", key, KG_PLAN_TEXT_MAX);
		return GI_EINVAL;
	}
	json_error_t e;
	*out = json_loadb(json_string_value(v), json_string_length(v), JSON_REJECT_DUPLICATES, &e);
	if (!*out) {
		kg_query_fail("%s: not JSON: %s at line %d, column %d", key, e.text, e.line,
		              e.column);
		return GI_EINVAL;
	}
	*owned = true;
	return 0;
}

/* The boundaries of args.boundaries, else ROOT/.giulia-boundaries.json
 * (`required`: its absence is an error). *out NULL when none. */
static int boundaries_get(struct kg_db *db, const struct kg_query_params *p, bool required,
                          struct kg_boundaries **out)
{
	*out = NULL;
	json_t *doc = NULL;
	bool owned = false;
	int rc = doc_arg(p ? p->args : NULL, "boundaries", &doc, &owned);
	if (rc)
		return rc;
	if (!doc) {
		char *root = NULL, *text = NULL;
		size_t len = 0;
		struct gi_buf path;
		gi_buf_init(&path, 0);
		rc = kg_db_root(db, &root);
		if (!rc)
			gi_buf_printf(&path, "%s/%s", root, KG_BOUNDARY_FILE);
		if (!rc)
			rc = gi_fs_read_file(path.data, KG_PLAN_TEXT_MAX, &text, &len);
		if (rc == GI_ENOENT && !required)
			rc = 0;
		else if (rc == GI_ENOENT)
			kg_query_fail("no boundaries: write %s (docs/ASSIST.md) or pass one",
			              path.data);
		else if (rc == GI_ETOOBIG)
			kg_query_fail("%s: more than %u bytes", path.data, KG_PLAN_TEXT_MAX);
		if (text) {
			json_error_t e;
			doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);
			owned = true;
			if (!doc)
				kg_query_fail("%s: not JSON: %s at line %d, column %d", path.data,
				              e.text, e.line, e.column);
		}
		bool bad_json = text && !doc;
		gi_free(text);
		gi_free(root);
		gi_buf_destroy(&path);
		if (rc == GI_ENOENT || rc == GI_ETOOBIG || bad_json)
			return GI_EINVAL;
		if (rc)
			return rc;
	}
	if (doc)
		rc = kg_boundaries_parse(doc, out);
	if (owned)
		json_decref(doc);
	return rc;
}

int q_check(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
            json_t *out)
{
	struct kg_boundaries *b = NULL;
	int rc = boundaries_get(db, p, true, &b);
	if (!rc)
		rc = kg_check(g, b, out);
	kg_boundaries_free(b);
	return rc;
}

int q_plan_validate(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                    json_t *out)
{
	json_t *plan = NULL;
	bool owned = false;
	int rc = doc_arg(p ? p->args : NULL, "plan", &plan, &owned);
	if (!rc && !plan) {
		kg_query_fail("plan_validate needs a plan (docs/ASSIST.md, \"Plan format\")");
		rc = GI_EINVAL;
	}
	struct kg_boundaries *b = NULL;
	if (!rc)
		rc = boundaries_get(db, p, false, &b);
	if (!rc)
		rc = kg_plan_validate(g, plan, b, p->depth > 0 ? query_depth_of(p) : 3, out);
	kg_boundaries_free(b);
	if (owned)
		json_decref(plan);
	return rc;
}

/* ---- review (graph/review.c) ---------------------------------------------- */

int q_review(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
             json_t *out)
{
	char *root = NULL;
	int rc = st_meta_get(db->store, "root", &root);
	if (!rc)
		rc = kg_review_query(g, root, p, out);
	gi_free(root);
	return rc;
}

/* The contract, convention, struct and clone checks (graph/contracts.c). */
int q_contracts(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                json_t *out)
{
	return kg_contracts(db->store, g, p, out);
}

int q_conventions(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                  json_t *out)
{
	return kg_conventions(db->store, g, p, out);
}

int q_structs(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
              json_t *out)
{
	return kg_structs(db->store, g, p, out);
}

int q_duplicates(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                 json_t *out)
{
	return kg_duplicates(db->store, g, p, out);
}

/* The dispatch: each query of the registry (graph/query_list.h) to its
 * implementation q_NAME (above, or in a query_*.c: query_int.h). */
static const struct {
	const char *name;
	query_fn fn;
} queries[] = {
#define KG_QUERY(name, ...) {#name, q_##name},
#define KG_PARAM(...)
#define KG_QUERY_END
#include "graph/query_list.h"
#undef KG_QUERY
#undef KG_PARAM
#undef KG_QUERY_END
};

int kg_query(struct kg_db *db, const char *name, const struct kg_query_params *p, json_t **out)
{
	*out = NULL;
	kg_query_fail_reset();
	if (!db || !name)
		return GI_EINVAL;
	query_fn fn = NULL;
	for (size_t i = 0; i < sizeof(queries) / sizeof(queries[0]); i++)
		if (strcmp(queries[i].name, name) == 0)
			fn = queries[i].fn;
	if (!fn)
		return GI_EINVAL;
	const char *stale = db->refresh ? db_refresh(db) : NULL;
	struct kg_graph *g = NULL;
	int rc = graph_get(db, &g);
	if (rc)
		return rc;
	/* "Mod.fun/2" in `module` (as a REST parameter may carry it) names a function */
	struct kg_query_params split;
	char module[512];
	if (p && p->module && !p->function && strchr(p->module, '/')) {
		const char *slash = strrchr(p->module, '/'), *dot = NULL;
		for (const char *c = p->module; c < slash; c++)
			if (*c == '.')
				dot = c;
		if (dot && (size_t)(dot - p->module) < sizeof(module)) {
			memcpy(module, p->module, (size_t)(dot - p->module));
			module[dot - p->module] = '\0';
			split = *p;
			split.module = module;
			split.function = dot + 1;
			p = &split;
		}
	}
	json_t *o = json_object();
	rc = fn(db, g, p, o);
	if (rc) {
		json_decref(o);
		return rc;
	}
	if (stale)
		json_object_set_new(o, "index_stale", json_pack("{s:s}", "reason", stale));
	*out = o;
	return 0;
}

int kg_db_graph(struct kg_db *db, const struct kg_graph **out)
{
	*out = NULL;
	struct kg_graph *g = NULL;
	int rc = db ? graph_get(db, &g) : GI_EINVAL;
	if (rc == 0)
		*out = g;
	return rc;
}

int kg_project_modules(struct kg_db *db, json_t **out_array)
{
	*out_array = NULL;
	struct kg_graph *g = NULL;
	int rc = graph_get(db, &g);
	if (rc)
		return rc;
	size_t n;
	int *idx = query_modules_sorted(g, query_keep_project, query_by_name, &n);
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(kg_module_at(g, idx[i])->name));
	gi_free(idx);
	*out_array = a;
	return 0;
}

struct defined_count {
	json_t *names;
	size_t hits;
};

static int count_defined(void *ctx, const char *name)
{
	struct defined_count *c = ctx;
	if (json_object_get(c->names, name))
		c->hits++;
	return 0;
}

int kg_db_defined_count(struct kg_db *db, json_t *names, size_t *hits)
{
	struct defined_count c = {names, 0};
	*hits = 0;
	int rc = st_module_names_each(db->store, count_defined, &c);
	if (rc == 0)
		*hits = c.hits;
	return rc;
}
