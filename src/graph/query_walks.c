/*
 * query_walks.c - the queries that walk the call and reference graph
 * (query_int.h; results in docs/SCHEMA.md): dead code, impact, the path
 * between two modules or functions, and xref.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/str.h"
#include "graph/args.h"
#include "graph/graph.h"
#include "graph/query_int.h"
#include "graph/xref.h"

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
		query_set_str(o, "module", kg_module_at(g, (int)m)->name);
		query_set_str(o, "file", kg_module_at(g, (int)m)->file);
		query_set_int(o, "line", f->line_start);
		query_set_str(o, "generated_by", f->generated_by);
		json_array_append_new(a, o);
	}
	return a;
}

int q_dead_code(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                json_t *out)
{
	(void)db;
	json_t *a = json_array(), *dispatched = json_array(), *api = json_array();
	long long counts[KG_DEAD_DYNAMIC + 1] = {0}, by_dispatch[FACTS_REF_KIND_COUNT] = {0};
	for (size_t i = 0; i < g->functions.len; i++) {
		enum kg_dead_reason r =
		    kg_function_dead_reason_opts(g, (int)i, query_direct_only(p));
		if (r == KG_ALIVE && !query_direct_only(p) &&
		    kg_function_dead_reason_opts(g, (int)i, true) != KG_ALIVE) {
			/* referenced only by dispatch: alive, and say by which */
			unsigned by = kg_function_dispatch_of(g, (int)i);
			for (int k = 0; k < FACTS_REF_KIND_COUNT; k++)
				by_dispatch[k] += (by >> k) & 1u;
			json_t *o = query_function_ref_json(g, (int)i);
			json_object_set_new(o, "reached_by", query_kinds_json(by));
			json_array_append_new(dispatched, o);
		}
		if (r == KG_ALIVE)
			continue;
		counts[r]++;
		const struct kg_function *f = kg_function_at(g, (int)i);
		if (r == KG_PUBLIC_API) {
			/* not dead: the library's API, listed apart */
			json_t *o = query_function_ref_json(g, (int)i);
			query_set_str(o, "kind", facts_function_kind_name(f->kind));
			query_set_int(o, "line", f->line_start);
			query_set_str(o, "file", kg_module_at(g, f->module)->file);
			query_set_str(o, "why", kg_function_api_reason(g, (int)i));
			query_set_str(o, "reached",
			              kg_function_reached_from_tests(g, (int)i) ? "test_only"
			                                                        : "unreferenced");
			json_array_append_new(api, o);
			continue;
		}
		json_t *o = query_function_ref_json(g, (int)i);
		query_set_str(o, "kind", facts_function_kind_name(f->kind));
		query_set_int(o, "line", f->line_start);
		query_set_str(o, "file", kg_module_at(g, f->module)->file);
		query_set_str(o, "reason", kg_dead_reason_name(r));
		if (module_incomplete(g, f->module, NULL))
			query_set_bool(o, "module_incomplete",
			               true); /* unknown functions may call it */
		json_array_append_new(a, o);
	}
	json_t *by = json_object();
	query_set_int(by, "callback", counts[KG_DEAD_CALLBACK]);
	query_set_int(by, "test_only", counts[KG_DEAD_TEST_ONLY]);
	query_set_int(by, "unreferenced", counts[KG_DEAD_UNREFERENCED]);
	query_set_int(by, "dynamic", counts[KG_DEAD_DYNAMIC]);
	query_set_int(out, "count", (long long)json_array_size(a));
	json_object_set_new(out, "by_reason", by);
	json_object_set_new(out, "functions", a);
	query_set_int(out, "public_api_count", counts[KG_PUBLIC_API]);
	json_object_set_new(out, "public_api", api);
	json_t *by_kind = json_object();
	for (int k = FACTS_REF_IMPL; k < FACTS_REF_KIND_COUNT; k++)
		query_set_int(by_kind, facts_ref_kind_name((enum facts_ref_kind)k), by_dispatch[k]);
	query_set_bool(out, "query_direct_only", query_direct_only(p));
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
				o = query_function_ref_json(g, w);
				if (dist[w] > 1) {
					const struct kg_function *f = kg_function_at(g, v);
					char via[512];
					snprintf(via, sizeof via, "%s.%s/%d",
					         kg_module_at(g, f->module)->name, f->name,
					         f->arity);
					query_set_str(o, "via", via);
				}
			} else {
				o = json_object();
				query_set_str(o, "module", kg_module_at(g, w)->name);
				query_set_bool(o, "test", kg_module_at(g, w)->test);
				if (dist[w] > 1)
					query_set_str(o, "via", kg_module_at(g, v)->name);
			}
			query_set_int(o, "depth", dist[w]);
			json_array_append_new(rows, o);
		}
	}
	gi_free(dist);
	gi_free(queue);
}

int q_impact(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
             json_t *out)
{
	(void)db;
	int m;
	int rc = query_module_lookup(g, p, &m);
	if (rc)
		return rc;
	int depth = query_depth_of(p);
	json_t *up = json_array(), *down = json_array();
	query_set_str(out, "module", kg_module_at(g, m)->name);
	query_set_int(out, "depth", depth);
	if (p->function) {
		int fi;
		rc = query_function_lookup(g, m, p->function, &fi);
		if (rc) {
			json_decref(up);
			json_decref(down);
			return rc;
		}
		query_set_str(out, "function", p->function);
		impact_bfs(g, true, fi, true, depth, query_include_external(p),
		           query_direct_only(p), up);
		impact_bfs(g, true, fi, false, depth, query_include_external(p),
		           query_direct_only(p), down);
		json_object_set_new(out, "callers", up);
		json_object_set_new(out, "callees", down);
		query_set_int(out, "caller_count", (long long)json_array_size(up));
		query_set_int(out, "callee_count", (long long)json_array_size(down));
		return 0;
	}
	impact_bfs(g, false, m, true, depth, true, query_direct_only(p), up);
	impact_bfs(g, false, m, false, depth, query_include_external(p), query_direct_only(p),
	           down);
	json_object_set_new(out, "dependents", up);
	json_object_set_new(out, "dependencies", down);
	query_set_int(out, "dependent_count", (long long)json_array_size(up));
	query_set_int(out, "dependency_count", (long long)json_array_size(down));
	const struct kg_module *mod = kg_module_at(g, m);
	query_set_bool(out, "hub", mod->hub);
	query_set_int(out, "in_degree", mod->in_degree);
	query_set_str(out, "risk", mod->in_degree >= 10 ? "high" : mod->hub ? "medium" : "low");
	return 0;
}

int q_path(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p, json_t *out)
{
	(void)db;
	if (!p || !p->from || !p->to)
		return GI_EINVAL;
	struct kg_query_params a = *p, b = *p;
	a.module = p->from;
	b.module = p->to;
	int from, to;
	int rc = query_module_lookup(g, &a, &from);
	if (!rc)
		rc = query_module_lookup(g, &b, &to);
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
			if (prev[w] != -2 || (query_direct_only(p) && !kg_edge_is_direct(e)) ||
			    (!query_include_external(p) && !kg_module_at(g, w)->project && w != to))
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
	query_set_str(out, "from", kg_module_at(g, from)->name);
	query_set_str(out, "to", kg_module_at(g, to)->name);
	query_set_bool(out, "found", found);
	query_set_int(out, "hops", found ? (long long)json_array_size(path) - 1 : -1);
	json_object_set_new(out, "path", path);
	gi_free(prev);
	gi_free(queue);
	return 0;
}

/* File dependencies labelled like `mix xref graph --label` (graph/xref.c). */
int q_xref(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p, json_t *out)
{
	(void)db;
	return kg_xref_json(g, p ? p->label : NULL, out);
}
