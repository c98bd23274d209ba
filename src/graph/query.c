/*
 * query.c - the static engine's query side (see query.h): open an index
 * database, keep its knowledge graph in memory, answer named queries as JSON.
 *
 * The graph is loaded from the store on the first query and reloaded only
 * when another connection has committed since (PRAGMA data_version), so that
 * a query costs a lookup and some JSON building. Every query's JSON shape is
 * documented in docs/SCHEMA.md ("Query results"). A `module` parameter of
 * the form "Mod.fun/arity" with no `function` names that function.
 */
#include "graph/query.h"

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
#include "graph/xref.h"
#include "graph/review.h"
#include "graph/search.h"
#include "graph/assist.h"
#include "store/store.h"

#define DEFAULT_DEPTH 2
/* The walk visits each module or function once whatever the depth, so the
 * cap only bounds the number in the answer; it is the API's documented 1000. */
#define MAX_DEPTH   1000
#define DEFAULT_TOP 20

struct kg_db {
	struct st_db *store;
	struct kg_graph *graph;
	int64_t version;
	char *path;
	/* search_code's index of `graph` and the hybrid mode's word vectors,
	 * built on first use, dropped with the graph */
	struct kg_search_index *search;
	struct kg_word_vectors *vectors;
	bool refresh; /* kg_db_refresh_on_query */
	/* Where `graph` came from: "snapshot" (DB.graph) or "index" (the rows). */
	const char *graph_source;
	/* The stamp `graph` was read or written under (graph_open), for the
	 * search index's file; graph_stamped false: none (snapshots off). */
	uint64_t graph_stamp;
	bool graph_stamped;
};

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

/* ---- JSON helpers -------------------------------------------------------- */

static void set_int(json_t *o, const char *k, long long v)
{
	json_object_set_new(o, k, json_integer(v));
}

static void set_real(json_t *o, const char *k, double v, double scale)
{
	json_object_set_new(o, k, json_real(round(v * scale) / scale));
}

static void set_str(json_t *o, const char *k, const char *v)
{
	json_object_set_new(o, k, v ? json_string(v) : json_null());
}

static void set_bool(json_t *o, const char *k, bool v)
{
	json_object_set_new(o, k, json_boolean(v));
}

static json_t *kinds_json(unsigned kinds)
{
	json_t *a = json_array();
	for (int k = 0; k < FACTS_REF_KIND_COUNT; k++)
		if (kinds & (1u << k))
			json_array_append_new(
			    a, json_string(facts_ref_kind_name((enum facts_ref_kind)k)));
	return a;
}

static json_t *function_ref_json(const struct kg_graph *g, int fi)
{
	const struct kg_function *f = kg_function_at(g, fi);
	json_t *o = json_object();
	set_str(o, "module", kg_module_at(g, f->module)->name);
	set_str(o, "name", f->name);
	set_int(o, "arity", f->arity);
	return o;
}

static json_t *function_json(const struct kg_graph *g, int fi, bool with_module)
{
	const struct kg_function *f = kg_function_at(g, fi);
	json_t *o = json_object();
	if (with_module)
		set_str(o, "module", kg_module_at(g, f->module)->name);
	set_str(o, "name", f->name);
	set_int(o, "arity", f->arity);
	set_str(o, "visibility", f->is_public ? "public" : "private");
	set_str(o, "kind", facts_function_kind_name(f->kind));
	set_int(o, "line", f->line_start);
	set_int(o, "line_end", f->line_end);
	set_int(o, "lines", f->lines);
	set_int(o, "clauses", f->clauses);
	set_int(o, "cyclomatic", f->cyclomatic);
	set_int(o, "cognitive", f->cognitive);
	set_int(o, "max_nesting", f->max_nesting);
	set_bool(o, "has_doc", f->has_doc && !f->doc_false);
	set_bool(o, "has_spec", f->has_spec);
	set_bool(o, "has_impl", f->has_impl);
	set_bool(o, "has_guard", f->has_guard);
	if (f->delegate_to)
		set_str(o, "delegate_to", f->delegate_to);
	if (f->generated_by) {
		set_bool(o, "generated", true);
		set_str(o, "generated_by", f->generated_by);
	}
	return o;
}

static json_t *module_row_json(const struct kg_module *m)
{
	json_t *o = json_object();
	set_str(o, "name", m->name);
	set_str(o, "file", m->file);
	set_int(o, "line_start", m->line_start);
	set_int(o, "line_end", m->line_end);
	set_str(o, "kind", m->project ? facts_module_kind_name(m->kind) : "external");
	set_int(o, "functions", m->public_count + m->private_count);
	set_int(o, "public", m->public_count);
	set_int(o, "private", m->private_count);
	set_int(o, "complexity", m->complexity_total);
	set_bool(o, "test", m->test);
	set_bool(o, "external", !m->project);
	set_str(o, "origin", m->origin == FACTS_FROM_BEAM ? "beam" : "source");
	set_bool(o, "has_moduledoc", m->has_moduledoc && !m->moduledoc_false);
	return o;
}

/* The module named by p->module ("Elixir." prefix accepted). */
static int module_lookup(const struct kg_graph *g, const struct kg_query_params *p, int *out)
{
	if (!p || !p->module || !*p->module)
		return GI_EINVAL;
	const char *name = p->module;
	if (gi_str_starts_with(name, "Elixir.") && name[7])
		name += 7;
	*out = kg_graph_module_find(g, name);
	return *out >= 0 ? 0 : GI_ENOTFOUND;
}

/* The function named by p->function ("name/arity") in module `m`. */
static int function_lookup(const struct kg_graph *g, int m, const char *spec, int *out)
{
	if (!spec)
		return GI_EINVAL;
	const char *slash = strrchr(spec, '/');
	if (!slash || slash == spec || slash - spec >= 256)
		return GI_EINVAL;
	char name[256];
	memcpy(name, spec, (size_t)(slash - spec));
	name[slash - spec] = '\0';
	int64_t arity = 0;
	if (gi_parse_int64(slash + 1, 0, 255, &arity))
		return GI_EINVAL;
	*out = kg_graph_function_find(g, m, name, (int)arity);
	if (*out < 0 || !kg_function_at(g, *out)->defined)
		return GI_ENOTFOUND;
	return 0;
}

static int top_of(const struct kg_query_params *p, int def)
{
	return p && p->top > 0 ? p->top : def;
}

static int depth_of(const struct kg_query_params *p)
{
	int d = p && p->depth > 0 ? p->depth : DEFAULT_DEPTH;
	return d > MAX_DEPTH ? MAX_DEPTH : d;
}

static bool direct_only(const struct kg_query_params *p)
{
	return p && p->direct_only;
}

static bool include_external(const struct kg_query_params *p)
{
	return p && p->include_external;
}

/* qsort comparators need the graph; queries run on one thread per kg_db and
 * the graph is read-only, so a thread-local pointer, set only by
 * module_indexes_sort() right before it sorts, is enough. */
static _Thread_local const struct kg_graph *sort_graph;

/* Sorts `n` module indexes of `g` by `cmp`, one of the comparators below. */
static void module_indexes_sort(const struct kg_graph *g, int *idx, size_t n,
                                int (*cmp)(const void *, const void *))
{
	sort_graph = g;
	qsort(idx, n, sizeof(int), cmp);
	sort_graph = NULL;
}

/* Indexes of the modules selected by `keep`, sorted by `cmp` (NULL: graph
 * order); the caller frees them with gi_free(). */
static int *modules_sorted(const struct kg_graph *g, bool (*keep)(const struct kg_module *),
                           int (*cmp)(const void *, const void *), size_t *count)
{
	int *idx = gi_malloc(sizeof(int) * (g->modules.len + 1));
	size_t n = 0;
	for (size_t i = 0; i < g->modules.len; i++)
		if (keep(kg_module_at(g, (int)i)))
			idx[n++] = (int)i;
	if (cmp)
		module_indexes_sort(g, idx, n, cmp);
	*count = n;
	return idx;
}

#define MOD(i) kg_module_at(sort_graph, *(const int *)(i))

static int cmp_double_desc(double a, double b)
{
	return a < b ? 1 : a > b ? -1 : 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(MOD(a)->name, MOD(b)->name);
}

static int by_centrality(const void *a, const void *b)
{
	int c = cmp_double_desc(MOD(a)->centrality, MOD(b)->centrality);
	return c ? c : by_name(a, b);
}

static int by_in_degree(const void *a, const void *b)
{
	int c = MOD(b)->in_degree - MOD(a)->in_degree;
	return c ? c : by_name(a, b);
}

static int by_god(const void *a, const void *b)
{
	int c = MOD(b)->god_score - MOD(a)->god_score;
	return c ? c : by_name(a, b);
}

static int by_fan(const void *a, const void *b)
{
	int c = (MOD(b)->ca + MOD(b)->ce) - (MOD(a)->ca + MOD(a)->ce);
	return c ? c : by_name(a, b);
}

static int by_heat(const void *a, const void *b)
{
	int c = cmp_double_desc(MOD(a)->heat, MOD(b)->heat);
	return c ? c : by_name(a, b);
}

static int by_risk(const void *a, const void *b)
{
	int c = cmp_double_desc(MOD(a)->change_risk, MOD(b)->change_risk);
	return c ? c : by_name(a, b);
}

static int by_complexity(const void *a, const void *b)
{
	int c = MOD(b)->complexity_total - MOD(a)->complexity_total;
	return c ? c : by_name(a, b);
}

static bool keep_core(const struct kg_module *m)
{
	return kg_module_is_core(m);
}

static bool keep_project(const struct kg_module *m)
{
	return m->project;
}

static bool keep_all(const struct kg_module *m)
{
	(void)m;
	return true;
}

static bool keep_hub(const struct kg_module *m)
{
	return m->hub;
}

/* ---- queries ------------------------------------------------------------- */

typedef int (*query_fn)(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                        json_t *out);

static int q_status(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                    json_t *out)
{
	(void)g;
	(void)p;
	int rc = st_summary_fill(db->store, out);
	if (rc)
		return rc;
	json_t *errors = json_object_get(out, "parse_errors");
	set_int(out, "parse_error_count", (long long)json_array_size(errors));
	char *root = NULL, *at = NULL;
	st_meta_get(db->store, "root", &root);
	st_meta_get(db->store, "indexed_at_ms", &at);
	int64_t at_ms = 0;
	if (at)
		gi_parse_int64(at, 0, INT64_MAX, &at_ms);
	set_bool(out, "indexed", root != NULL);
	set_str(out, "root", root);
	set_str(out, "db", db->path);
	set_int(out, "indexed_at_ms", at_ms);
	set_int(out, "schema_version", ST_SCHEMA_VERSION);
	set_str(out, "graph_source", db->graph_source);
	gi_free(root);
	gi_free(at);
	return 0;
}

static int q_summary(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                     json_t *out)
{
	(void)p;
	json_t *st = json_object();
	int rc = st_summary_fill(db->store, st);
	if (rc) {
		json_decref(st);
		return rc;
	}
	set_int(out, "files", json_integer_value(json_object_get(st, "files")));
	set_int(out, "parse_errors",
	        (long long)json_array_size(json_object_get(st, "parse_errors")));
	json_decref(st);
	long long project = 0, tests = 0, external = 0, functions = 0, pub = 0, priv = 0,
	          complexity = 0, hubs = 0;
	for (size_t i = 0; i < g->modules.len; i++) {
		const struct kg_module *m = kg_module_at(g, (int)i);
		if (!m->project) {
			external++;
			continue;
		}
		project++;
		tests += m->test;
		hubs += m->hub;
		functions += m->public_count + m->private_count;
		pub += m->public_count;
		priv += m->private_count;
		complexity += m->complexity_total;
	}
	long long cycles = 0;
	for (size_t i = 0; i < g->sccs.len; i++)
		cycles += GI_VEC_AT(&g->sccs, struct kg_scc, i).count > 1;
	set_int(out, "modules", project);
	set_int(out, "test_modules", tests);
	set_int(out, "external_modules", external);
	set_int(out, "functions", functions);
	set_int(out, "public_functions", pub);
	set_int(out, "private_functions", priv);
	set_int(out, "edges", (long long)g->edges.len);
	set_int(out, "call_edges", (long long)g->calls.len);
	set_int(out, "complexity_total", complexity);
	set_real(out, "complexity_avg", functions ? (double)complexity / functions : 0.0, 100);
	set_int(out, "cycles", cycles);
	set_int(out, "layers", g->layer_count);
	set_int(out, "hubs", hubs);
	return 0;
}

static int q_stats(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                   json_t *out)
{
	(void)db;
	(void)p;
	long long by_kind[FACTS_REF_KIND_COUNT] = {0}, project_edges = 0;
	for (size_t i = 0; i < g->edges.len; i++) {
		const struct kg_edge *e = kg_edge_at(g, (int)i);
		for (int k = 0; k < FACTS_REF_KIND_COUNT; k++)
			by_kind[k] += (e->kinds >> k) & 1u;
		project_edges += kg_module_at(g, e->to)->project;
	}
	json_t *kinds = json_object();
	for (int k = 0; k < FACTS_REF_KIND_COUNT; k++)
		set_int(kinds, facts_ref_kind_name((enum facts_ref_kind)k), by_kind[k]);
	long long project = 0, cycles = 0, max_in = 0;
	for (size_t i = 0; i < g->modules.len; i++) {
		const struct kg_module *m = kg_module_at(g, (int)i);
		project += m->project;
		if (m->in_degree > max_in)
			max_in = m->in_degree;
	}
	for (size_t i = 0; i < g->sccs.len; i++)
		cycles += GI_VEC_AT(&g->sccs, struct kg_scc, i).count > 1;
	set_int(out, "vertices", (long long)g->modules.len);
	set_int(out, "project_vertices", project);
	set_int(out, "edges", (long long)g->edges.len);
	set_int(out, "project_edges", project_edges);
	json_object_set_new(out, "edges_by_kind", kinds);
	set_int(out, "function_vertices", (long long)g->functions.len);
	set_int(out, "call_edges", (long long)g->calls.len);
	set_int(out, "components", (long long)g->sccs.len);
	set_int(out, "cycles", cycles);
	set_int(out, "layers", g->layer_count);
	set_int(out, "max_in_degree", max_in);
	set_real(out, "density",
	         project > 1 ? (double)project_edges / ((double)project * (project - 1)) : 0.0,
	         1e6);
	return 0;
}

static int q_modules(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                     json_t *out)
{
	(void)db;
	size_t n;
	int *idx = modules_sorted(g, include_external(p) ? keep_all : keep_project, by_name, &n);
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, module_row_json(kg_module_at(g, idx[i])));
	gi_free(idx);
	set_int(out, "count", (long long)n);
	json_object_set_new(out, "modules", a);
	return 0;
}

static int q_functions(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                       json_t *out)
{
	(void)db;
	json_t *a = json_array();
	if (p && p->module) {
		int m;
		int rc = module_lookup(g, p, &m);
		if (rc) {
			json_decref(a);
			return rc;
		}
		const struct kg_module *mod = kg_module_at(g, m);
		for (size_t i = 0; i < mod->functions.len; i++)
			json_array_append_new(
			    a, function_json(g, GI_VEC_AT(&mod->functions, int, i), false));
		set_str(out, "module", mod->name);
	} else {
		for (size_t i = 0; i < g->functions.len; i++) {
			const struct kg_function *f = kg_function_at(g, (int)i);
			if (f->defined && kg_module_at(g, f->module)->project)
				json_array_append_new(a, function_json(g, (int)i, true));
		}
	}
	set_int(out, "count", (long long)json_array_size(a));
	json_object_set_new(out, "functions", a);
	return 0;
}

/* [{module, kinds, count, test, external}] of the in- or out-edges of `m`. */
static json_t *neighbours_json(const struct kg_graph *g, int m, bool incoming, bool external,
                               bool direct)
{
	const struct kg_module *mod = kg_module_at(g, m);
	const struct gi_vec *edges = incoming ? &mod->in : &mod->out;
	int *idx = gi_malloc(sizeof(int) * (edges->len + 1));
	size_t n = 0;
	for (size_t i = 0; i < edges->len; i++) {
		const struct kg_edge *e = kg_edge_at(g, GI_VEC_AT(edges, int, i));
		int other = incoming ? e->from : e->to;
		if ((!external && !kg_module_at(g, other)->project) ||
		    (direct && !kg_edge_is_direct(e)))
			continue;
		idx[n++] = GI_VEC_AT(edges, int, i);
	}
	json_t *a = json_array();
	/* sort by the neighbour's name */
	for (size_t i = 1; i < n; i++) {
		int v = idx[i];
		size_t j = i;
		const char *vn =
		    kg_module_at(g, incoming ? kg_edge_at(g, v)->from : kg_edge_at(g, v)->to)->name;
		while (j > 0) {
			const struct kg_edge *pe = kg_edge_at(g, idx[j - 1]);
			const char *pn = kg_module_at(g, incoming ? pe->from : pe->to)->name;
			if (strcmp(pn, vn) <= 0)
				break;
			idx[j] = idx[j - 1];
			j--;
		}
		idx[j] = v;
	}
	for (size_t i = 0; i < n; i++) {
		const struct kg_edge *e = kg_edge_at(g, idx[i]);
		const struct kg_module *o = kg_module_at(g, incoming ? e->from : e->to);
		json_t *row = json_object();
		set_str(row, "module", o->name);
		json_object_set_new(row, "kinds", kinds_json(e->kinds));
		set_int(row, "count", e->count);
		set_bool(row, "test", o->test);
		set_bool(row, "external", !o->project);
		json_array_append_new(a, row);
	}
	gi_free(idx);
	return a;
}

static int q_neighbours(const struct kg_graph *g, const struct kg_query_params *p, json_t *out,
                        bool incoming)
{
	int m;
	int rc = module_lookup(g, p, &m);
	if (rc)
		return rc;
	json_t *a =
	    neighbours_json(g, m, incoming, incoming || include_external(p), direct_only(p));
	set_str(out, "module", kg_module_at(g, m)->name);
	set_int(out, "count", (long long)json_array_size(a));
	if (incoming) {
		/* test modules are listed (test: true) and counted apart */
		long long tests = 0;
		size_t i;
		json_t *row;
		json_array_foreach(a, i, row)
		{
			tests += json_is_true(json_object_get(row, "test"));
		}
		set_int(out, "test_count", tests);
	}
	json_object_set_new(out, incoming ? "dependents" : "dependencies", a);
	return 0;
}

static int q_dependents(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                        json_t *out)
{
	(void)db;
	return q_neighbours(g, p, out, true);
}

static int q_dependencies(struct kg_db *db, const struct kg_graph *g,
                          const struct kg_query_params *p, json_t *out)
{
	(void)db;
	return q_neighbours(g, p, out, false);
}

static void module_metrics_json(const struct kg_module *m, json_t *o)
{
	set_int(o, "complexity_total", m->complexity_total);
	set_int(o, "complexity_max", m->complexity_max);
	set_int(o, "ca", m->ca);
	set_int(o, "ce", m->ce);
	set_real(o, "instability", m->instability, 1000);
	set_int(o, "in_degree", m->in_degree);
	set_int(o, "out_degree", m->out_degree);
	set_real(o, "centrality", m->centrality, 1e6);
	set_bool(o, "hub", m->hub);
	set_real(o, "heat", m->heat, 100);
	set_str(o, "zone", kg_heat_zone(m->heat));
	set_real(o, "change_risk", m->change_risk, 100);
	set_int(o, "god_score", m->god_score);
	set_int(o, "max_coupling", m->max_coupling);
	set_bool(o, "has_tests", m->has_tests);
	set_int(o, "layer", m->layer);
}

static json_t *targets_of_kind(const struct kg_graph *g, const struct kg_module *m,
                               enum facts_ref_kind kind)
{
	json_t *a = json_array();
	for (size_t i = 0; i < m->out.len; i++) {
		const struct kg_edge *e = kg_edge_at(g, GI_VEC_AT(&m->out, int, i));
		if (e->kinds & (1u << kind))
			json_array_append_new(a, json_string(kg_module_at(g, e->to)->name));
	}
	return a;
}

static json_t *strings_json(const struct gi_vec *v)
{
	json_t *a = json_array();
	for (size_t i = 0; i < v->len; i++)
		json_array_append_new(a, json_string(GI_VEC_AT(v, const char *, i)));
	return a;
}

static int q_module_details(struct kg_db *db, const struct kg_graph *g,
                            const struct kg_query_params *p, json_t *out)
{
	(void)db;
	int m;
	int rc = module_lookup(g, p, &m);
	if (rc)
		return rc;
	const struct kg_module *mod = kg_module_at(g, m);
	json_t *row = module_row_json(mod);
	json_object_update(out, row);
	json_decref(row);
	json_object_del(out, "functions");
	set_str(out, "impl_for", mod->impl_for);
	set_str(out, "protocol", mod->protocol);
	json_t *fns = json_array();
	for (size_t i = 0; i < mod->functions.len; i++)
		json_array_append_new(fns,
		                      function_json(g, GI_VEC_AT(&mod->functions, int, i), false));
	json_object_set_new(out, "functions", fns);
	set_int(out, "function_count", (long long)mod->functions.len);
	module_metrics_json(mod, out);
	json_object_set_new(out, "uses", targets_of_kind(g, mod, FACTS_REF_USE));
	json_object_set_new(out, "behaviours", targets_of_kind(g, mod, FACTS_REF_BEHAVIOUR));
	json_object_set_new(out, "callbacks", strings_json(&mod->callbacks));
	json_object_set_new(out, "struct_fields", strings_json(&mod->struct_fields));
	set_bool(out, "has_struct", mod->has_struct);
	json_object_set_new(out, "dependents", neighbours_json(g, m, true, true, direct_only(p)));
	json_object_set_new(out, "dependencies",
	                    neighbours_json(g, m, false, true, direct_only(p)));
	return 0;
}

static json_t *call_list_json(const struct kg_graph *g, const struct gi_vec *calls, bool callers,
                              bool direct)
{
	json_t *a = json_array();
	for (size_t i = 0; i < calls->len; i++) {
		const struct kg_call *c = kg_call_at(g, GI_VEC_AT(calls, int, i));
		if (direct && kg_call_kind_is_dispatch(c->kind))
			continue;
		json_t *o = function_ref_json(g, callers ? c->from_fn : c->to_fn);
		set_int(o, "count", c->count);
		if (c->origin == FACTS_FROM_BEAM)
			set_str(o, "origin", "beam"); /* known from the object code only */
		set_str(o, "kind", facts_call_kind_name(c->kind));
		json_array_append_new(a, o);
	}
	return a;
}

static int q_function_details(struct kg_db *db, const struct kg_graph *g,
                              const struct kg_query_params *p, json_t *out)
{
	(void)db;
	int m, fi;
	int rc = module_lookup(g, p, &m);
	if (!rc)
		rc = function_lookup(g, m, p->function, &fi);
	if (rc)
		return rc;
	json_t *f = function_json(g, fi, true);
	json_object_update(out, f);
	json_decref(f);
	set_str(out, "file", kg_module_at(g, m)->file);
	const struct kg_function *fn = kg_function_at(g, fi);
	json_object_set_new(out, "callers", call_list_json(g, &fn->callers, true, direct_only(p)));
	json_object_set_new(out, "callees", call_list_json(g, &fn->callees, false, direct_only(p)));
	enum kg_dead_reason r = kg_function_dead_reason_opts(g, fi, direct_only(p));
	set_str(out, "dead_code", r == KG_ALIVE ? NULL : kg_dead_reason_name(r));
	json_object_set_new(out, "reached_by", kinds_json(kg_function_dispatch_of(g, fi)));
	return 0;
}

struct fn_rank {
	int fn;
	int cyclomatic, cognitive;
};

static int fn_rank_cmp(const void *a, const void *b)
{
	const struct fn_rank *x = a, *y = b;
	if (x->cyclomatic != y->cyclomatic)
		return y->cyclomatic - x->cyclomatic;
	if (x->cognitive != y->cognitive)
		return y->cognitive - x->cognitive;
	return x->fn - y->fn;
}

static int q_complexity(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                        json_t *out)
{
	(void)db;
	int top = top_of(p, DEFAULT_TOP);
	struct fn_rank *r = gi_malloc(sizeof(*r) * (g->functions.len + 1));
	size_t n = 0;
	int module_filter = -1;
	if (p && p->module) {
		int rc = module_lookup(g, p, &module_filter);
		if (rc) {
			gi_free(r);
			return rc;
		}
	}
	for (size_t i = 0; i < g->functions.len; i++) {
		const struct kg_function *f = kg_function_at(g, (int)i);
		if (!f->defined || !kg_module_is_core(kg_module_at(g, f->module)))
			continue;
		if (module_filter >= 0 && f->module != module_filter)
			continue;
		r[n++] = (struct fn_rank){(int)i, f->cyclomatic, f->cognitive};
	}
	qsort(r, n, sizeof(*r), fn_rank_cmp);
	json_t *a = json_array();
	for (size_t i = 0; i < n && (int)i < top; i++) {
		json_t *o = function_json(g, r[i].fn, true);
		set_str(o, "file", kg_module_at(g, kg_function_at(g, r[i].fn)->module)->file);
		json_array_append_new(a, o);
	}
	gi_free(r);
	json_object_set_new(out, "functions", a);
	size_t count;
	int *idx = modules_sorted(g, keep_core, by_complexity, &count);
	json_t *mods = json_array();
	for (size_t i = 0; i < count && (int)i < top; i++) {
		const struct kg_module *m = kg_module_at(g, idx[i]);
		json_t *o = json_object();
		set_str(o, "module", m->name);
		set_int(o, "complexity_total", m->complexity_total);
		set_int(o, "complexity_max", m->complexity_max);
		set_int(o, "functions", m->public_count + m->private_count);
		json_array_append_new(mods, o);
	}
	gi_free(idx);
	json_object_set_new(out, "modules", mods);
	set_int(out, "top", top);
	return 0;
}

/* A module list query: core modules sorted by `cmp`, at most `top`, each row
 * made by `row`. */
static void module_list(const struct kg_graph *g, json_t *out, const char *key,
                        bool (*keep)(const struct kg_module *),
                        int (*cmp)(const void *, const void *), int top,
                        void (*row)(const struct kg_module *, json_t *))
{
	size_t n;
	int *idx = modules_sorted(g, keep, cmp, &n);
	json_t *a = json_array();
	for (size_t i = 0; i < n && (top <= 0 || (int)i < top); i++) {
		const struct kg_module *m = kg_module_at(g, idx[i]);
		json_t *o = json_object();
		set_str(o, "module", m->name);
		row(m, o);
		json_array_append_new(a, o);
	}
	gi_free(idx);
	set_int(out, "count", (long long)json_array_size(a));
	json_object_set_new(out, key, a);
}

static void row_centrality(const struct kg_module *m, json_t *o)
{
	set_real(o, "centrality", m->centrality, 1e6);
	set_int(o, "in_degree", m->in_degree);
	set_int(o, "out_degree", m->out_degree);
	set_bool(o, "hub", m->hub);
}

static int q_centrality(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                        json_t *out)
{
	(void)db;
	module_list(g, out, "modules", keep_core, by_centrality, top_of(p, 0), row_centrality);
	set_str(out, "measure", "pagerank");
	return 0;
}

static void row_hub(const struct kg_module *m, json_t *o)
{
	set_int(o, "in_degree", m->in_degree);
	set_int(o, "out_degree", m->out_degree);
	set_real(o, "centrality", m->centrality, 1e6);
	set_real(o, "instability", m->instability, 1000);
}

static int q_hubs(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                  json_t *out)
{
	(void)db;
	module_list(g, out, "hubs", keep_hub, by_in_degree, top_of(p, 0), row_hub);
	set_int(out, "threshold", KG_HUB_IN_DEGREE);
	return 0;
}

static void row_god(const struct kg_module *m, json_t *o)
{
	set_int(o, "score", m->god_score);
	set_int(o, "functions", m->public_count + m->private_count);
	set_int(o, "complexity", m->complexity_total);
	set_int(o, "in_degree", m->in_degree);
}

static int q_god_modules(struct kg_db *db, const struct kg_graph *g,
                         const struct kg_query_params *p, json_t *out)
{
	(void)db;
	module_list(g, out, "modules", keep_core, by_god, top_of(p, DEFAULT_TOP), row_god);
	return 0;
}

static void row_fan(const struct kg_module *m, json_t *o)
{
	set_int(o, "fan_in", m->ca);
	set_int(o, "fan_out", m->ce);
	set_real(o, "instability", m->instability, 1000);
}

static int q_fan_in_out(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                        json_t *out)
{
	(void)db;
	module_list(g, out, "modules", keep_core, by_fan, top_of(p, 0), row_fan);
	return 0;
}

static void row_heat(const struct kg_module *m, json_t *o)
{
	set_real(o, "heat", m->heat, 100);
	set_str(o, "zone", kg_heat_zone(m->heat));
	set_int(o, "in_degree", m->in_degree);
	set_int(o, "complexity", m->complexity_total);
	set_bool(o, "has_tests", m->has_tests);
	set_int(o, "max_coupling", m->max_coupling);
}

static int q_heatmap(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                     json_t *out)
{
	(void)db;
	module_list(g, out, "modules", keep_core, by_heat, top_of(p, 0), row_heat);
	long long zones[3] = {0};
	json_t *a = json_object_get(out, "modules");
	for (size_t i = 0; i < json_array_size(a); i++) {
		const char *z = json_string_value(json_object_get(json_array_get(a, i), "zone"));
		zones[strcmp(z, "red") == 0 ? 0 : strcmp(z, "yellow") == 0 ? 1 : 2]++;
	}
	json_t *s = json_object();
	set_int(s, "red", zones[0]);
	set_int(s, "yellow", zones[1]);
	set_int(s, "green", zones[2]);
	json_object_set_new(out, "summary", s);
	return 0;
}

static void row_risk(const struct kg_module *m, json_t *o)
{
	int functions = m->public_count + m->private_count;
	set_real(o, "score", m->change_risk, 100);
	set_int(o, "complexity", m->complexity_total);
	set_int(o, "fan_in", m->ca);
	set_int(o, "fan_out", m->ce);
	set_int(o, "max_coupling", m->max_coupling);
	set_int(o, "functions", functions);
	set_real(o, "api_ratio", functions ? (double)m->public_count / functions : 0.0, 1000);
}

static int q_change_risk(struct kg_db *db, const struct kg_graph *g,
                         const struct kg_query_params *p, json_t *out)
{
	(void)db;
	module_list(g, out, "modules", keep_core, by_risk, top_of(p, DEFAULT_TOP), row_risk);
	return 0;
}

static void row_api(const struct kg_module *m, json_t *o)
{
	int functions = m->public_count + m->private_count;
	set_int(o, "public", m->public_count);
	set_int(o, "private", m->private_count);
	set_real(o, "api_ratio", functions ? (double)m->public_count / functions : 0.0, 1000);
	set_int(o, "documented", m->documented);
	set_int(o, "specced", m->specced);
	set_real(o, "doc_ratio", m->public_count ? (double)m->documented / m->public_count : 0.0,
	         1000);
	set_real(o, "spec_ratio", m->public_count ? (double)m->specced / m->public_count : 0.0,
	         1000);
	set_bool(o, "has_moduledoc", m->has_moduledoc && !m->moduledoc_false);
}

static int q_api_surface(struct kg_db *db, const struct kg_graph *g,
                         const struct kg_query_params *p, json_t *out)
{
	(void)db;
	(void)p;
	module_list(g, out, "modules", keep_core, by_name, 0, row_api);
	return 0;
}

static int q_unprotected_hubs(struct kg_db *db, const struct kg_graph *g,
                              const struct kg_query_params *p, json_t *out)
{
	(void)db;
	(void)p;
	size_t n;
	int *idx = modules_sorted(g, keep_hub, by_in_degree, &n);
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++) {
		const struct kg_module *m = kg_module_at(g, idx[i]);
		double ratio = m->public_count ? (double)m->specced / m->public_count : 1.0;
		if (ratio >= 0.8)
			continue;
		json_t *o = json_object();
		set_str(o, "module", m->name);
		set_int(o, "in_degree", m->in_degree);
		set_int(o, "public", m->public_count);
		set_int(o, "specced", m->specced);
		set_real(o, "spec_ratio", ratio, 1000);
		set_str(o, "severity", ratio < 0.5 ? "red" : "yellow");
		json_array_append_new(a, o);
	}
	gi_free(idx);
	set_int(out, "count", (long long)json_array_size(a));
	json_object_set_new(out, "modules", a);
	set_int(out, "hub_threshold", KG_HUB_IN_DEGREE);
	return 0;
}

static int q_coupling(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                      json_t *out)
{
	(void)db;
	int filter = -1;
	if (p && p->module) {
		int rc = module_lookup(g, p, &filter);
		if (rc)
			return rc;
	}
	int top = top_of(p, DEFAULT_TOP);
	json_t *a = json_array();
	for (size_t i = 0; i < g->pairs.len && (int)json_array_size(a) < top; i++) {
		const struct kg_pair *pr = &GI_VEC_AT(&g->pairs, struct kg_pair, i);
		if (filter >= 0 && pr->from != filter && pr->to != filter)
			continue;
		json_t *o = json_object();
		set_str(o, "from", kg_module_at(g, pr->from)->name);
		set_str(o, "to", kg_module_at(g, pr->to)->name);
		set_int(o, "calls", pr->calls);
		set_int(o, "functions", pr->functions);
		json_array_append_new(a, o);
	}
	set_int(out, "count", (long long)json_array_size(a));
	json_object_set_new(out, "pairs", a);
	return 0;
}

static json_t *scc_modules_json(const struct kg_graph *g, const struct kg_scc *s)
{
	json_t *a = json_array();
	int *idx = gi_malloc(sizeof(int) * (size_t)(s->count + 1));
	for (int k = 0; k < s->count; k++)
		idx[k] = GI_VEC_AT(&g->scc_members, int, s->first + k);
	module_indexes_sort(g, idx, (size_t)s->count, by_name);
	for (int k = 0; k < s->count; k++)
		json_array_append_new(a, json_string(kg_module_at(g, idx[k])->name));
	gi_free(idx);
	return a;
}

static int q_cycles(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                    json_t *out)
{
	(void)db;
	(void)p;
	json_t *a = json_array();
	for (size_t i = 0; i < g->sccs.len; i++) {
		const struct kg_scc *s = &GI_VEC_AT(&g->sccs, struct kg_scc, i);
		if (s->count < 2)
			continue;
		json_t *o = json_object();
		set_int(o, "size", s->count);
		json_object_set_new(o, "modules", scc_modules_json(g, s));
		json_array_append_new(a, o);
	}
	set_int(out, "count", (long long)json_array_size(a));
	json_object_set_new(out, "cycles", a);
	return 0;
}

static int q_topology(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                      json_t *out)
{
	json_t *layers = json_array();
	for (int l = 0; l < g->layer_count; l++) {
		json_t *mods = json_array();
		for (size_t i = 0; i < g->sccs.len; i++) {
			const struct kg_scc *s = &GI_VEC_AT(&g->sccs, struct kg_scc, i);
			if (s->layer != l)
				continue;
			json_t *part = scc_modules_json(g, s);
			json_array_extend(mods, part);
			json_decref(part);
		}
		json_t *o = json_object();
		set_int(o, "layer", l);
		json_object_set_new(o, "modules", mods);
		json_array_append_new(layers, o);
	}
	set_int(out, "layer_count", g->layer_count);
	json_object_set_new(out, "layers", layers);
	json_t *cycles = json_object();
	int rc = q_cycles(db, g, p, cycles);
	json_object_set(out, "cycles", json_object_get(cycles, "cycles"));
	json_decref(cycles);
	return rc;
}

/* True when project module `m` has functions whose names the reader could
 * not know (FACTS_UNKNOWN_NAMES) and no object code filled them in. */
static bool module_incomplete(const struct kg_graph *g, int m, const struct kg_function **which)
{
	const struct kg_module *mod = kg_module_at(g, m);
	const struct kg_function *unknown = NULL;
	for (size_t i = 0; i < mod->functions.len; i++) {
		const struct kg_function *f = kg_function_at(g, GI_VEC_AT(&mod->functions, int, i));
		if (f->generated_by && strcmp(f->generated_by, "object code") == 0)
			return false;
		if (f->defined && strcmp(f->name, FACTS_UNKNOWN_NAMES) == 0)
			unknown = f;
	}
	if (which)
		*which = unknown;
	return unknown != NULL;
}

/* The modules whose list of functions is not complete (module_incomplete):
 * [{module, file, line, generated_by}]. */
static json_t *incomplete_modules_json(const struct kg_graph *g)
{
	json_t *a = json_array();
	for (size_t m = 0; m < g->modules.len; m++) {
		const struct kg_function *f = NULL;
		if (!kg_module_at(g, (int)m)->project || !module_incomplete(g, (int)m, &f))
			continue;
		json_t *o = json_object();
		set_str(o, "module", kg_module_at(g, (int)m)->name);
		set_str(o, "file", kg_module_at(g, (int)m)->file);
		set_int(o, "line", f->line_start);
		set_str(o, "generated_by", f->generated_by);
		json_array_append_new(a, o);
	}
	return a;
}

static int q_dead_code(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                       json_t *out)
{
	(void)db;
	json_t *a = json_array(), *dispatched = json_array(), *api = json_array();
	long long counts[KG_DEAD_DYNAMIC + 1] = {0}, by_dispatch[FACTS_REF_KIND_COUNT] = {0};
	for (size_t i = 0; i < g->functions.len; i++) {
		enum kg_dead_reason r = kg_function_dead_reason_opts(g, (int)i, direct_only(p));
		if (r == KG_ALIVE && !direct_only(p) &&
		    kg_function_dead_reason_opts(g, (int)i, true) != KG_ALIVE) {
			/* referenced only by dispatch: alive, and say by which */
			unsigned by = kg_function_dispatch_of(g, (int)i);
			for (int k = 0; k < FACTS_REF_KIND_COUNT; k++)
				by_dispatch[k] += (by >> k) & 1u;
			json_t *o = function_ref_json(g, (int)i);
			json_object_set_new(o, "reached_by", kinds_json(by));
			json_array_append_new(dispatched, o);
		}
		if (r == KG_ALIVE)
			continue;
		counts[r]++;
		const struct kg_function *f = kg_function_at(g, (int)i);
		if (r == KG_PUBLIC_API) {
			/* not dead: the library's API, listed apart */
			json_t *o = function_ref_json(g, (int)i);
			set_str(o, "kind", facts_function_kind_name(f->kind));
			set_int(o, "line", f->line_start);
			set_str(o, "file", kg_module_at(g, f->module)->file);
			set_str(o, "why", kg_function_api_reason(g, (int)i));
			set_str(o, "reached",
			        kg_function_reached_from_tests(g, (int)i) ? "test_only"
			                                                  : "unreferenced");
			json_array_append_new(api, o);
			continue;
		}
		json_t *o = function_ref_json(g, (int)i);
		set_str(o, "kind", facts_function_kind_name(f->kind));
		set_int(o, "line", f->line_start);
		set_str(o, "file", kg_module_at(g, f->module)->file);
		set_str(o, "reason", kg_dead_reason_name(r));
		if (module_incomplete(g, f->module, NULL))
			set_bool(o, "module_incomplete", true); /* unknown functions may call it */
		json_array_append_new(a, o);
	}
	json_t *by = json_object();
	set_int(by, "callback", counts[KG_DEAD_CALLBACK]);
	set_int(by, "test_only", counts[KG_DEAD_TEST_ONLY]);
	set_int(by, "unreferenced", counts[KG_DEAD_UNREFERENCED]);
	set_int(by, "dynamic", counts[KG_DEAD_DYNAMIC]);
	set_int(out, "count", (long long)json_array_size(a));
	json_object_set_new(out, "by_reason", by);
	json_object_set_new(out, "functions", a);
	set_int(out, "public_api_count", counts[KG_PUBLIC_API]);
	json_object_set_new(out, "public_api", api);
	json_t *by_kind = json_object();
	for (int k = FACTS_REF_IMPL; k < FACTS_REF_KIND_COUNT; k++)
		set_int(by_kind, facts_ref_kind_name((enum facts_ref_kind)k), by_dispatch[k]);
	set_bool(out, "direct_only", direct_only(p));
	json_object_set_new(out, "reached_by_dispatch", by_kind);
	json_object_set_new(out, "dispatch_referenced", dispatched);
	json_object_set_new(out, "incomplete_modules", incomplete_modules_json(g));
	return 0;
}

/* Breadth-first walk from `start` up to `depth`, over module edges when
 * `functions` is false and over calls when it is true; `reverse` walks
 * towards dependents (callers) instead of dependencies (callees). Appends a
 * row with the reached module or function and its depth to `rows`; beyond
 * depth 1 the row names the one it was first reached through ("via"), and a
 * module row says whether the module is test code. */
static void impact_bfs(const struct kg_graph *g, bool functions, int start, bool reverse, int depth,
                       bool external, bool direct, json_t *rows)
{
	int n = (int)(functions ? g->functions.len : g->modules.len);
	int *dist = gi_malloc(sizeof(int) * (size_t)(n + 1));
	int *queue = gi_malloc(sizeof(int) * (size_t)(n + 1));
	for (int i = 0; i < n; i++)
		dist[i] = -1;
	int head = 0, tail = 0;
	dist[start] = 0;
	queue[tail++] = start;
	while (head < tail) {
		int v = queue[head++];
		if (dist[v] >= depth)
			continue;
		const struct gi_vec *adj;
		if (functions) {
			const struct kg_function *f = kg_function_at(g, v);
			adj = reverse ? &f->callers : &f->callees;
		} else {
			const struct kg_module *m = kg_module_at(g, v);
			adj = reverse ? &m->in : &m->out;
		}
		for (size_t i = 0; i < adj->len; i++) {
			int id = GI_VEC_AT(adj, int, i);
			int w, module;
			if (functions) {
				const struct kg_call *c = kg_call_at(g, id);
				if (direct && kg_call_kind_is_dispatch(c->kind))
					continue;
				w = reverse ? c->from_fn : c->to_fn;
				module = kg_function_at(g, w)->module;
			} else {
				const struct kg_edge *e = kg_edge_at(g, id);
				if (direct && !kg_edge_is_direct(e))
					continue;
				w = reverse ? e->from : e->to;
				module = w;
			}
			if (dist[w] >= 0 || (!external && !kg_module_at(g, module)->project))
				continue;
			dist[w] = dist[v] + 1;
			queue[tail++] = w;
			json_t *o;
			if (functions) {
				o = function_ref_json(g, w);
				if (dist[w] > 1) {
					const struct kg_function *f = kg_function_at(g, v);
					char via[512];
					snprintf(via, sizeof via, "%s.%s/%d",
					         kg_module_at(g, f->module)->name, f->name,
					         f->arity);
					set_str(o, "via", via);
				}
			} else {
				o = json_object();
				set_str(o, "module", kg_module_at(g, w)->name);
				set_bool(o, "test", kg_module_at(g, w)->test);
				if (dist[w] > 1)
					set_str(o, "via", kg_module_at(g, v)->name);
			}
			set_int(o, "depth", dist[w]);
			json_array_append_new(rows, o);
		}
	}
	gi_free(dist);
	gi_free(queue);
}

static int q_impact(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                    json_t *out)
{
	(void)db;
	int m;
	int rc = module_lookup(g, p, &m);
	if (rc)
		return rc;
	int depth = depth_of(p);
	json_t *up = json_array(), *down = json_array();
	set_str(out, "module", kg_module_at(g, m)->name);
	set_int(out, "depth", depth);
	if (p->function) {
		int fi;
		rc = function_lookup(g, m, p->function, &fi);
		if (rc) {
			json_decref(up);
			json_decref(down);
			return rc;
		}
		set_str(out, "function", p->function);
		impact_bfs(g, true, fi, true, depth, include_external(p), direct_only(p), up);
		impact_bfs(g, true, fi, false, depth, include_external(p), direct_only(p), down);
		json_object_set_new(out, "callers", up);
		json_object_set_new(out, "callees", down);
		set_int(out, "caller_count", (long long)json_array_size(up));
		set_int(out, "callee_count", (long long)json_array_size(down));
		return 0;
	}
	impact_bfs(g, false, m, true, depth, true, direct_only(p), up);
	impact_bfs(g, false, m, false, depth, include_external(p), direct_only(p), down);
	json_object_set_new(out, "dependents", up);
	json_object_set_new(out, "dependencies", down);
	set_int(out, "dependent_count", (long long)json_array_size(up));
	set_int(out, "dependency_count", (long long)json_array_size(down));
	const struct kg_module *mod = kg_module_at(g, m);
	set_bool(out, "hub", mod->hub);
	set_int(out, "in_degree", mod->in_degree);
	set_str(out, "risk", mod->in_degree >= 10 ? "high" : mod->hub ? "medium" : "low");
	return 0;
}

static int q_path(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                  json_t *out)
{
	(void)db;
	if (!p || !p->from || !p->to)
		return GI_EINVAL;
	struct kg_query_params a = *p, b = *p;
	a.module = p->from;
	b.module = p->to;
	int from, to;
	int rc = module_lookup(g, &a, &from);
	if (!rc)
		rc = module_lookup(g, &b, &to);
	if (rc)
		return rc;
	int n = (int)g->modules.len;
	int *prev = gi_malloc(sizeof(int) * (size_t)(n + 1));
	int *queue = gi_malloc(sizeof(int) * (size_t)(n + 1));
	for (int i = 0; i < n; i++)
		prev[i] = -2;
	int head = 0, tail = 0;
	prev[from] = -1;
	queue[tail++] = from;
	while (head < tail && prev[to] == -2) {
		int v = queue[head++];
		const struct kg_module *m = kg_module_at(g, v);
		for (size_t i = 0; i < m->out.len; i++) {
			const struct kg_edge *e = kg_edge_at(g, GI_VEC_AT(&m->out, int, i));
			int w = e->to;
			if (prev[w] != -2 || (direct_only(p) && !kg_edge_is_direct(e)) ||
			    (!include_external(p) && !kg_module_at(g, w)->project && w != to))
				continue;
			prev[w] = v;
			queue[tail++] = w;
		}
	}
	json_t *path = json_array();
	bool found = prev[to] != -2;
	if (found)
		for (int v = to; v != -1; v = prev[v])
			json_array_insert_new(path, 0, json_string(kg_module_at(g, v)->name));
	set_str(out, "from", kg_module_at(g, from)->name);
	set_str(out, "to", kg_module_at(g, to)->name);
	set_bool(out, "found", found);
	set_int(out, "hops", found ? (long long)json_array_size(path) - 1 : -1);
	json_object_set_new(out, "path", path);
	gi_free(prev);
	gi_free(queue);
	return 0;
}

/* File dependencies labelled like `mix xref graph --label` (graph/xref.c). */
static int q_xref(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                  json_t *out)
{
	(void)db;
	return kg_xref_json(g, p ? p->label : NULL, out);
}

/* ---- search (graph/search.c) ---------------------------------------------- */

static int by_path(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int q_search_text(struct kg_db *db, const struct kg_graph *g,
                         const struct kg_query_params *p, json_t *out)
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

static int q_search_code(struct kg_db *db, const struct kg_graph *g,
                         const struct kg_query_params *p, json_t *out)
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

static int q_preflight(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                       json_t *out)
{
	(void)db;
	int m, fi = -1;
	int rc = module_lookup(g, p, &m);
	if (!rc && p->function)
		rc = function_lookup(g, m, p->function, &fi);
	if (!rc && !kg_module_at(g, m)->project)
		rc = GI_ENOTFOUND;
	if (rc)
		return rc;
	rc = kg_preflight(g, m, fi, p->depth > 0 ? depth_of(p) : 3, out);
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

static int q_briefing(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                      json_t *out)
{
	(void)db;
	return kg_briefing(g, p ? p->profile : NULL, top_of(p, 5), out);
}

static int q_impact_check(struct kg_db *db, const struct kg_graph *g,
                          const struct kg_query_params *p, json_t *out)
{
	int m, fi = -1;
	int rc = module_lookup(g, p, &m);
	if (!rc && p->function)
		rc = function_lookup(g, m, p->function, &fi);
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

static int q_check(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                   json_t *out)
{
	struct kg_boundaries *b = NULL;
	int rc = boundaries_get(db, p, true, &b);
	if (!rc)
		rc = kg_check(g, b, out);
	kg_boundaries_free(b);
	return rc;
}

static int q_plan_validate(struct kg_db *db, const struct kg_graph *g,
                           const struct kg_query_params *p, json_t *out)
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
		rc = kg_plan_validate(g, plan, b, p->depth > 0 ? depth_of(p) : 3, out);
	kg_boundaries_free(b);
	if (owned)
		json_decref(plan);
	return rc;
}

/* ---- review (graph/review.c) ---------------------------------------------- */

static int q_review(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
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
static int q_contracts(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                       json_t *out)
{
	return kg_contracts(db->store, g, p, out);
}

static int q_conventions(struct kg_db *db, const struct kg_graph *g,
                         const struct kg_query_params *p, json_t *out)
{
	return kg_conventions(db->store, g, p, out);
}

static int q_structs(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                     json_t *out)
{
	return kg_structs(db->store, g, p, out);
}

static int q_duplicates(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                        json_t *out)
{
	return kg_duplicates(db->store, g, p, out);
}

/* The dispatch: each query of the registry (graph/query_list.h) to its
 * implementation q_NAME above. */
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
	int *idx = modules_sorted(g, keep_project, by_name, &n);
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
