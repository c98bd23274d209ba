/*
 * query_modules.c - the queries about the index and its modules and
 * functions (query_int.h; results in docs/SCHEMA.md): status, summary,
 * stats, the module and function lists, dependents and dependencies,
 * module and function details, complexity.
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

/* ---- queries ------------------------------------------------------------- */

int q_status(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
             json_t *out)
{
	(void)g;
	(void)p;
	int rc = st_summary_fill(db->store, out);
	if (rc)
		return rc;
	json_t *errors = json_object_get(out, "parse_errors");
	query_set_int(out, "parse_error_count", (long long)json_array_size(errors));
	char *root = NULL, *at = NULL;
	st_meta_get(db->store, "root", &root);
	st_meta_get(db->store, "indexed_at_ms", &at);
	int64_t at_ms = 0;
	if (at)
		gi_parse_int64(at, 0, INT64_MAX, &at_ms);
	query_set_bool(out, "indexed", root != NULL);
	query_set_str(out, "root", root);
	query_set_str(out, "db", db->path);
	query_set_int(out, "indexed_at_ms", at_ms);
	query_set_int(out, "schema_version", ST_SCHEMA_VERSION);
	query_set_str(out, "graph_source", db->graph_source);
	gi_free(root);
	gi_free(at);
	return 0;
}

int q_summary(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
              json_t *out)
{
	(void)p;
	json_t *st = json_object();
	int rc = st_summary_fill(db->store, st);
	if (rc) {
		json_decref(st);
		return rc;
	}
	query_set_int(out, "files", json_integer_value(json_object_get(st, "files")));
	query_set_int(out, "parse_errors",
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
	query_set_int(out, "modules", project);
	query_set_int(out, "test_modules", tests);
	query_set_int(out, "external_modules", external);
	query_set_int(out, "functions", functions);
	query_set_int(out, "public_functions", pub);
	query_set_int(out, "private_functions", priv);
	query_set_int(out, "edges", (long long)g->edges.len);
	query_set_int(out, "call_edges", (long long)g->calls.len);
	query_set_int(out, "complexity_total", complexity);
	query_set_real(out, "complexity_avg", functions ? (double)complexity / functions : 0.0,
	               100);
	query_set_int(out, "cycles", cycles);
	query_set_int(out, "layers", g->layer_count);
	query_set_int(out, "hubs", hubs);
	return 0;
}

int q_stats(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
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
		query_set_int(kinds, facts_ref_kind_name((enum facts_ref_kind)k), by_kind[k]);
	long long project = 0, cycles = 0, max_in = 0;
	for (size_t i = 0; i < g->modules.len; i++) {
		const struct kg_module *m = kg_module_at(g, (int)i);
		project += m->project;
		if (m->in_degree > max_in)
			max_in = m->in_degree;
	}
	for (size_t i = 0; i < g->sccs.len; i++)
		cycles += GI_VEC_AT(&g->sccs, struct kg_scc, i).count > 1;
	query_set_int(out, "vertices", (long long)g->modules.len);
	query_set_int(out, "project_vertices", project);
	query_set_int(out, "edges", (long long)g->edges.len);
	query_set_int(out, "project_edges", project_edges);
	json_object_set_new(out, "edges_by_kind", kinds);
	query_set_int(out, "function_vertices", (long long)g->functions.len);
	query_set_int(out, "call_edges", (long long)g->calls.len);
	query_set_int(out, "components", (long long)g->sccs.len);
	query_set_int(out, "cycles", cycles);
	query_set_int(out, "layers", g->layer_count);
	query_set_int(out, "max_in_degree", max_in);
	query_set_real(
	    out, "density",
	    project > 1 ? (double)project_edges / ((double)project * (project - 1)) : 0.0, 1e6);
	return 0;
}

int q_modules(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
              json_t *out)
{
	(void)db;
	size_t n;
	int *idx = query_modules_sorted(
	    g, query_include_external(p) ? query_keep_all : query_keep_project, query_by_name, &n);
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, query_module_row_json(kg_module_at(g, idx[i])));
	gi_free(idx);
	query_set_int(out, "count", (long long)n);
	json_object_set_new(out, "modules", a);
	return 0;
}

int q_functions(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                json_t *out)
{
	(void)db;
	json_t *a = json_array();
	if (p && p->module) {
		int m;
		int rc = query_module_lookup(g, p, &m);
		if (rc) {
			json_decref(a);
			return rc;
		}
		const struct kg_module *mod = kg_module_at(g, m);
		for (size_t i = 0; i < mod->functions.len; i++)
			json_array_append_new(
			    a, query_function_json(g, GI_VEC_AT(&mod->functions, int, i), false));
		query_set_str(out, "module", mod->name);
	} else {
		for (size_t i = 0; i < g->functions.len; i++) {
			const struct kg_function *f = kg_function_at(g, (int)i);
			if (f->defined && kg_module_at(g, f->module)->project)
				json_array_append_new(a, query_function_json(g, (int)i, true));
		}
	}
	query_set_int(out, "count", (long long)json_array_size(a));
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
		query_set_str(row, "module", o->name);
		json_object_set_new(row, "kinds", query_kinds_json(e->kinds));
		query_set_int(row, "count", e->count);
		query_set_bool(row, "test", o->test);
		query_set_bool(row, "external", !o->project);
		json_array_append_new(a, row);
	}
	gi_free(idx);
	return a;
}

static int q_neighbours(const struct kg_graph *g, const struct kg_query_params *p, json_t *out,
                        bool incoming)
{
	int m;
	int rc = query_module_lookup(g, p, &m);
	if (rc)
		return rc;
	json_t *a = neighbours_json(g, m, incoming, incoming || query_include_external(p),
	                            query_direct_only(p));
	query_set_str(out, "module", kg_module_at(g, m)->name);
	query_set_int(out, "count", (long long)json_array_size(a));
	if (incoming) {
		/* test modules are listed (test: true) and counted apart */
		long long tests = 0;
		size_t i;
		json_t *row;
		json_array_foreach(a, i, row)
		{
			tests += json_is_true(json_object_get(row, "test"));
		}
		query_set_int(out, "test_count", tests);
	}
	json_object_set_new(out, incoming ? "dependents" : "dependencies", a);
	return 0;
}

int q_dependents(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                 json_t *out)
{
	(void)db;
	return q_neighbours(g, p, out, true);
}

int q_dependencies(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                   json_t *out)
{
	(void)db;
	return q_neighbours(g, p, out, false);
}

static void module_metrics_json(const struct kg_module *m, json_t *o)
{
	query_set_int(o, "complexity_total", m->complexity_total);
	query_set_int(o, "complexity_max", m->complexity_max);
	query_set_int(o, "ca", m->ca);
	query_set_int(o, "ce", m->ce);
	query_set_real(o, "instability", m->instability, 1000);
	query_set_int(o, "in_degree", m->in_degree);
	query_set_int(o, "out_degree", m->out_degree);
	query_set_real(o, "centrality", m->centrality, 1e6);
	query_set_bool(o, "hub", m->hub);
	query_set_real(o, "heat", m->heat, 100);
	query_set_str(o, "zone", kg_heat_zone(m->heat));
	query_set_real(o, "change_risk", m->change_risk, 100);
	query_set_int(o, "god_score", m->god_score);
	query_set_int(o, "max_coupling", m->max_coupling);
	query_set_bool(o, "has_tests", m->has_tests);
	query_set_int(o, "layer", m->layer);
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

int q_module_details(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                     json_t *out)
{
	(void)db;
	int m;
	int rc = query_module_lookup(g, p, &m);
	if (rc)
		return rc;
	const struct kg_module *mod = kg_module_at(g, m);
	json_t *row = query_module_row_json(mod);
	json_object_update(out, row);
	json_decref(row);
	json_object_del(out, "functions");
	query_set_str(out, "impl_for", mod->impl_for);
	query_set_str(out, "protocol", mod->protocol);
	json_t *fns = json_array();
	for (size_t i = 0; i < mod->functions.len; i++)
		json_array_append_new(
		    fns, query_function_json(g, GI_VEC_AT(&mod->functions, int, i), false));
	json_object_set_new(out, "functions", fns);
	query_set_int(out, "function_count", (long long)mod->functions.len);
	module_metrics_json(mod, out);
	json_object_set_new(out, "uses", targets_of_kind(g, mod, FACTS_REF_USE));
	json_object_set_new(out, "behaviours", targets_of_kind(g, mod, FACTS_REF_BEHAVIOUR));
	json_object_set_new(out, "callbacks", strings_json(&mod->callbacks));
	json_object_set_new(out, "struct_fields", strings_json(&mod->struct_fields));
	query_set_bool(out, "has_struct", mod->has_struct);
	json_object_set_new(out, "dependents",
	                    neighbours_json(g, m, true, true, query_direct_only(p)));
	json_object_set_new(out, "dependencies",
	                    neighbours_json(g, m, false, true, query_direct_only(p)));
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
		json_t *o = query_function_ref_json(g, callers ? c->from_fn : c->to_fn);
		query_set_int(o, "count", c->count);
		if (c->origin == FACTS_FROM_BEAM)
			query_set_str(o, "origin", "beam"); /* known from the object code only */
		query_set_str(o, "kind", facts_call_kind_name(c->kind));
		json_array_append_new(a, o);
	}
	return a;
}

int q_function_details(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                       json_t *out)
{
	(void)db;
	int m, fi;
	int rc = query_module_lookup(g, p, &m);
	if (!rc)
		rc = query_function_lookup(g, m, p->function, &fi);
	if (rc)
		return rc;
	json_t *f = query_function_json(g, fi, true);
	json_object_update(out, f);
	json_decref(f);
	query_set_str(out, "file", kg_module_at(g, m)->file);
	const struct kg_function *fn = kg_function_at(g, fi);
	json_object_set_new(out, "callers",
	                    call_list_json(g, &fn->callers, true, query_direct_only(p)));
	json_object_set_new(out, "callees",
	                    call_list_json(g, &fn->callees, false, query_direct_only(p)));
	enum kg_dead_reason r = kg_function_dead_reason_opts(g, fi, query_direct_only(p));
	query_set_str(out, "dead_code", r == KG_ALIVE ? NULL : kg_dead_reason_name(r));
	json_object_set_new(out, "reached_by", query_kinds_json(kg_function_dispatch_of(g, fi)));
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

int q_complexity(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                 json_t *out)
{
	(void)db;
	int top = query_top_of(p, DEFAULT_TOP);
	struct fn_rank *r = gi_malloc(sizeof(*r) * (g->functions.len + 1));
	size_t n = 0;
	int module_filter = -1;
	if (p && p->module) {
		int rc = query_module_lookup(g, p, &module_filter);
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
		json_t *o = query_function_json(g, r[i].fn, true);
		query_set_str(o, "file", kg_module_at(g, kg_function_at(g, r[i].fn)->module)->file);
		json_array_append_new(a, o);
	}
	gi_free(r);
	json_object_set_new(out, "functions", a);
	size_t count;
	int *idx = query_modules_sorted(g, query_keep_core, query_by_complexity, &count);
	json_t *mods = json_array();
	for (size_t i = 0; i < count && (int)i < top; i++) {
		const struct kg_module *m = kg_module_at(g, idx[i]);
		json_t *o = json_object();
		query_set_str(o, "module", m->name);
		query_set_int(o, "complexity_total", m->complexity_total);
		query_set_int(o, "complexity_max", m->complexity_max);
		query_set_int(o, "functions", m->public_count + m->private_count);
		json_array_append_new(mods, o);
	}
	gi_free(idx);
	json_object_set_new(out, "modules", mods);
	query_set_int(out, "top", top);
	return 0;
}
