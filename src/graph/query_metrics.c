/*
 * query_metrics.c - the queries that rank modules by the graph's metrics
 * (query_int.h; results in docs/SCHEMA.md): centrality, hubs, god
 * modules, fan-in/out, heatmap, change risk, API surface, unprotected
 * hubs, coupling, cycles and the topology.
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

/* A module list query: core modules sorted by `cmp`, at most `top`, each row
 * made by `row`. */
static void module_list(const struct kg_graph *g, json_t *out, const char *key,
                        bool (*keep)(const struct kg_module *),
                        int (*cmp)(const void *, const void *), int top,
                        void (*row)(const struct kg_module *, json_t *))
{
	size_t n;
	int *idx = query_modules_sorted(g, keep, cmp, &n);
	json_t *a = json_array();
	for (size_t i = 0; i < n && (top <= 0 || (int)i < top); i++) {
		const struct kg_module *m = kg_module_at(g, idx[i]);
		json_t *o = json_object();
		query_set_str(o, "module", m->name);
		row(m, o);
		json_array_append_new(a, o);
	}
	gi_free(idx);
	query_set_int(out, "count", (long long)json_array_size(a));
	json_object_set_new(out, key, a);
}

static void row_centrality(const struct kg_module *m, json_t *o)
{
	query_set_real(o, "centrality", m->centrality, 1e6);
	query_set_int(o, "in_degree", m->in_degree);
	query_set_int(o, "out_degree", m->out_degree);
	query_set_bool(o, "hub", m->hub);
}

int q_centrality(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                 json_t *out)
{
	(void)db;
	module_list(g, out, "modules", query_keep_core, query_by_centrality, query_top_of(p, 0),
	            row_centrality);
	query_set_str(out, "measure", "pagerank");
	return 0;
}

static void row_hub(const struct kg_module *m, json_t *o)
{
	query_set_int(o, "in_degree", m->in_degree);
	query_set_int(o, "out_degree", m->out_degree);
	query_set_real(o, "centrality", m->centrality, 1e6);
	query_set_real(o, "instability", m->instability, 1000);
}

int q_hubs(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p, json_t *out)
{
	(void)db;
	module_list(g, out, "hubs", query_keep_hub, query_by_in_degree, query_top_of(p, 0),
	            row_hub);
	query_set_int(out, "threshold", KG_HUB_IN_DEGREE);
	return 0;
}

static void row_god(const struct kg_module *m, json_t *o)
{
	query_set_int(o, "score", m->god_score);
	query_set_int(o, "functions", m->public_count + m->private_count);
	query_set_int(o, "complexity", m->complexity_total);
	query_set_int(o, "in_degree", m->in_degree);
}

int q_god_modules(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                  json_t *out)
{
	(void)db;
	module_list(g, out, "modules", query_keep_core, query_by_god, query_top_of(p, DEFAULT_TOP),
	            row_god);
	return 0;
}

static void row_fan(const struct kg_module *m, json_t *o)
{
	query_set_int(o, "fan_in", m->ca);
	query_set_int(o, "fan_out", m->ce);
	query_set_real(o, "instability", m->instability, 1000);
}

int q_fan_in_out(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                 json_t *out)
{
	(void)db;
	module_list(g, out, "modules", query_keep_core, query_by_fan, query_top_of(p, 0), row_fan);
	return 0;
}

static void row_heat(const struct kg_module *m, json_t *o)
{
	query_set_real(o, "heat", m->heat, 100);
	query_set_str(o, "zone", kg_heat_zone(m->heat));
	query_set_int(o, "in_degree", m->in_degree);
	query_set_int(o, "complexity", m->complexity_total);
	query_set_bool(o, "has_tests", m->has_tests);
	query_set_int(o, "max_coupling", m->max_coupling);
}

int q_heatmap(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
              json_t *out)
{
	(void)db;
	module_list(g, out, "modules", query_keep_core, query_by_heat, query_top_of(p, 0),
	            row_heat);
	long long zones[3] = {0};
	json_t *a = json_object_get(out, "modules");
	for (size_t i = 0; i < json_array_size(a); i++) {
		const char *z = json_string_value(json_object_get(json_array_get(a, i), "zone"));
		zones[strcmp(z, "red") == 0 ? 0 : strcmp(z, "yellow") == 0 ? 1 : 2]++;
	}
	json_t *s = json_object();
	query_set_int(s, "red", zones[0]);
	query_set_int(s, "yellow", zones[1]);
	query_set_int(s, "green", zones[2]);
	json_object_set_new(out, "summary", s);
	return 0;
}

static void row_risk(const struct kg_module *m, json_t *o)
{
	int functions = m->public_count + m->private_count;
	query_set_real(o, "score", m->change_risk, 100);
	query_set_int(o, "complexity", m->complexity_total);
	query_set_int(o, "fan_in", m->ca);
	query_set_int(o, "fan_out", m->ce);
	query_set_int(o, "max_coupling", m->max_coupling);
	query_set_int(o, "functions", functions);
	query_set_real(o, "api_ratio", functions ? (double)m->public_count / functions : 0.0, 1000);
}

int q_change_risk(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                  json_t *out)
{
	(void)db;
	module_list(g, out, "modules", query_keep_core, query_by_risk, query_top_of(p, DEFAULT_TOP),
	            row_risk);
	return 0;
}

static void row_api(const struct kg_module *m, json_t *o)
{
	int functions = m->public_count + m->private_count;
	query_set_int(o, "public", m->public_count);
	query_set_int(o, "private", m->private_count);
	query_set_real(o, "api_ratio", functions ? (double)m->public_count / functions : 0.0, 1000);
	query_set_int(o, "documented", m->documented);
	query_set_int(o, "specced", m->specced);
	query_set_real(o, "doc_ratio",
	               m->public_count ? (double)m->documented / m->public_count : 0.0, 1000);
	query_set_real(o, "spec_ratio",
	               m->public_count ? (double)m->specced / m->public_count : 0.0, 1000);
	query_set_bool(o, "has_moduledoc", m->has_moduledoc && !m->moduledoc_false);
}

int q_api_surface(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                  json_t *out)
{
	(void)db;
	(void)p;
	module_list(g, out, "modules", query_keep_core, query_by_name, 0, row_api);
	return 0;
}

int q_unprotected_hubs(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                       json_t *out)
{
	(void)db;
	(void)p;
	size_t n;
	int *idx = query_modules_sorted(g, query_keep_hub, query_by_in_degree, &n);
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++) {
		const struct kg_module *m = kg_module_at(g, idx[i]);
		double ratio = m->public_count ? (double)m->specced / m->public_count : 1.0;
		if (ratio >= 0.8)
			continue;
		json_t *o = json_object();
		query_set_str(o, "module", m->name);
		query_set_int(o, "in_degree", m->in_degree);
		query_set_int(o, "public", m->public_count);
		query_set_int(o, "specced", m->specced);
		query_set_real(o, "spec_ratio", ratio, 1000);
		query_set_str(o, "severity", ratio < 0.5 ? "red" : "yellow");
		json_array_append_new(a, o);
	}
	gi_free(idx);
	query_set_int(out, "count", (long long)json_array_size(a));
	json_object_set_new(out, "modules", a);
	query_set_int(out, "hub_threshold", KG_HUB_IN_DEGREE);
	return 0;
}

int q_coupling(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
               json_t *out)
{
	(void)db;
	int filter = -1;
	if (p && p->module) {
		int rc = query_module_lookup(g, p, &filter);
		if (rc)
			return rc;
	}
	int top = query_top_of(p, DEFAULT_TOP);
	json_t *a = json_array();
	for (size_t i = 0; i < g->pairs.len && (int)json_array_size(a) < top; i++) {
		const struct kg_pair *pr = &GI_VEC_AT(&g->pairs, struct kg_pair, i);
		if (filter >= 0 && pr->from != filter && pr->to != filter)
			continue;
		json_t *o = json_object();
		query_set_str(o, "from", kg_module_at(g, pr->from)->name);
		query_set_str(o, "to", kg_module_at(g, pr->to)->name);
		query_set_int(o, "calls", pr->calls);
		query_set_int(o, "functions", pr->functions);
		json_array_append_new(a, o);
	}
	query_set_int(out, "count", (long long)json_array_size(a));
	json_object_set_new(out, "pairs", a);
	return 0;
}

static json_t *scc_modules_json(const struct kg_graph *g, const struct kg_scc *s)
{
	json_t *a = json_array();
	int *idx = gi_malloc(sizeof(int) * (size_t)(s->count + 1));
	for (int k = 0; k < s->count; k++)
		idx[k] = GI_VEC_AT(&g->scc_members, int, s->first + k);
	query_module_indexes_sort(g, idx, (size_t)s->count, query_by_name);
	for (int k = 0; k < s->count; k++)
		json_array_append_new(a, json_string(kg_module_at(g, idx[k])->name));
	gi_free(idx);
	return a;
}

int q_cycles(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
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
		query_set_int(o, "size", s->count);
		json_object_set_new(o, "modules", scc_modules_json(g, s));
		json_array_append_new(a, o);
	}
	query_set_int(out, "count", (long long)json_array_size(a));
	json_object_set_new(out, "cycles", a);
	return 0;
}

int q_topology(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
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
		query_set_int(o, "layer", l);
		json_object_set_new(o, "modules", mods);
		json_array_append_new(layers, o);
	}
	query_set_int(out, "layer_count", g->layer_count);
	json_object_set_new(out, "layers", layers);
	json_t *cycles = json_object();
	int rc = q_cycles(db, g, p, cycles);
	json_object_set(out, "cycles", json_object_get(cycles, "cycles"));
	json_decref(cycles);
	return rc;
}
