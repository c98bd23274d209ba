/*
 * query_json.c - what the analyses of kg_query share (query_int.h): the
 * JSON of modules and functions, the lookup of the module and function a
 * query names, the parameters every query reads alike, and the module
 * lists' selections and orders.
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

/* ---- JSON helpers -------------------------------------------------------- */

void query_set_int(json_t *o, const char *k, long long v)
{
	json_object_set_new(o, k, json_integer(v));
}

void query_set_real(json_t *o, const char *k, double v, double scale)
{
	json_object_set_new(o, k, json_real(round(v * scale) / scale));
}

void query_set_str(json_t *o, const char *k, const char *v)
{
	json_object_set_new(o, k, v ? json_string(v) : json_null());
}

void query_set_bool(json_t *o, const char *k, bool v)
{
	json_object_set_new(o, k, json_boolean(v));
}

json_t *query_kinds_json(unsigned kinds)
{
	json_t *a = json_array();
	for (int k = 0; k < FACTS_REF_KIND_COUNT; k++)
		if (kinds & (1u << k))
			json_array_append_new(
			    a, json_string(facts_ref_kind_name((enum facts_ref_kind)k)));
	return a;
}

json_t *query_function_ref_json(const struct kg_graph *g, int fi)
{
	const struct kg_function *f = kg_function_at(g, fi);
	json_t *o = json_object();
	query_set_str(o, "module", kg_module_at(g, f->module)->name);
	query_set_str(o, "name", f->name);
	query_set_int(o, "arity", f->arity);
	return o;
}

json_t *query_function_json(const struct kg_graph *g, int fi, bool with_module)
{
	const struct kg_function *f = kg_function_at(g, fi);
	json_t *o = json_object();
	if (with_module)
		query_set_str(o, "module", kg_module_at(g, f->module)->name);
	query_set_str(o, "name", f->name);
	query_set_int(o, "arity", f->arity);
	query_set_str(o, "visibility", f->is_public ? "public" : "private");
	query_set_str(o, "kind", facts_function_kind_name(f->kind));
	query_set_int(o, "line", f->line_start);
	query_set_int(o, "line_end", f->line_end);
	query_set_int(o, "lines", f->lines);
	query_set_int(o, "clauses", f->clauses);
	query_set_int(o, "cyclomatic", f->cyclomatic);
	query_set_int(o, "cognitive", f->cognitive);
	query_set_int(o, "max_nesting", f->max_nesting);
	query_set_bool(o, "has_doc", f->has_doc && !f->doc_false);
	query_set_bool(o, "has_spec", f->has_spec);
	query_set_bool(o, "has_impl", f->has_impl);
	query_set_bool(o, "has_guard", f->has_guard);
	if (f->delegate_to)
		query_set_str(o, "delegate_to", f->delegate_to);
	if (f->generated_by) {
		query_set_bool(o, "generated", true);
		query_set_str(o, "generated_by", f->generated_by);
	}
	return o;
}

json_t *query_module_row_json(const struct kg_module *m)
{
	json_t *o = json_object();
	query_set_str(o, "name", m->name);
	query_set_str(o, "file", m->file);
	query_set_int(o, "line_start", m->line_start);
	query_set_int(o, "line_end", m->line_end);
	query_set_str(o, "kind", m->project ? facts_module_kind_name(m->kind) : "external");
	query_set_int(o, "functions", m->public_count + m->private_count);
	query_set_int(o, "public", m->public_count);
	query_set_int(o, "private", m->private_count);
	query_set_int(o, "complexity", m->complexity_total);
	query_set_bool(o, "test", m->test);
	query_set_bool(o, "external", !m->project);
	query_set_str(o, "origin", m->origin == FACTS_FROM_BEAM ? "beam" : "source");
	query_set_bool(o, "has_moduledoc", m->has_moduledoc && !m->moduledoc_false);
	return o;
}

/* The module named by p->module ("Elixir." prefix accepted). */
int query_module_lookup(const struct kg_graph *g, const struct kg_query_params *p, int *out)
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
int query_function_lookup(const struct kg_graph *g, int m, const char *spec, int *out)
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

int query_top_of(const struct kg_query_params *p, int def)
{
	return p && p->top > 0 ? p->top : def;
}

int query_depth_of(const struct kg_query_params *p)
{
	int d = p && p->depth > 0 ? p->depth : DEFAULT_DEPTH;
	return d > MAX_DEPTH ? MAX_DEPTH : d;
}

bool query_direct_only(const struct kg_query_params *p)
{
	return p && p->direct_only;
}

bool query_include_external(const struct kg_query_params *p)
{
	return p && p->include_external;
}

/* qsort comparators need the graph; queries run on one thread per kg_db and
 * the graph is read-only, so a thread-local pointer, set only by
 * query_module_indexes_sort() right before it sorts, is enough. */
static _Thread_local const struct kg_graph *sort_graph;

/* Sorts `n` module indexes of `g` by `cmp`, one of the comparators below. */
void query_module_indexes_sort(const struct kg_graph *g, int *idx, size_t n,
                               int (*cmp)(const void *, const void *))
{
	sort_graph = g;
	qsort(idx, n, sizeof(int), cmp);
	sort_graph = NULL;
}

/* Indexes of the modules selected by `keep`, sorted by `cmp` (NULL: graph
 * order); the caller frees them with gi_free(). */
int *query_modules_sorted(const struct kg_graph *g, bool (*keep)(const struct kg_module *),
                          int (*cmp)(const void *, const void *), size_t *count)
{
	int *idx = gi_malloc(sizeof(int) * (g->modules.len + 1));
	size_t n = 0;
	for (size_t i = 0; i < g->modules.len; i++)
		if (keep(kg_module_at(g, (int)i)))
			idx[n++] = (int)i;
	if (cmp)
		query_module_indexes_sort(g, idx, n, cmp);
	*count = n;
	return idx;
}

#define MOD(i) kg_module_at(sort_graph, *(const int *)(i))

static int cmp_double_desc(double a, double b)
{
	return a < b ? 1 : a > b ? -1 : 0;
}

int query_by_name(const void *a, const void *b)
{
	return strcmp(MOD(a)->name, MOD(b)->name);
}

int query_by_centrality(const void *a, const void *b)
{
	int c = cmp_double_desc(MOD(a)->centrality, MOD(b)->centrality);
	return c ? c : query_by_name(a, b);
}

int query_by_in_degree(const void *a, const void *b)
{
	int c = MOD(b)->in_degree - MOD(a)->in_degree;
	return c ? c : query_by_name(a, b);
}

int query_by_god(const void *a, const void *b)
{
	int c = MOD(b)->god_score - MOD(a)->god_score;
	return c ? c : query_by_name(a, b);
}

int query_by_fan(const void *a, const void *b)
{
	int c = (MOD(b)->ca + MOD(b)->ce) - (MOD(a)->ca + MOD(a)->ce);
	return c ? c : query_by_name(a, b);
}

int query_by_heat(const void *a, const void *b)
{
	int c = cmp_double_desc(MOD(a)->heat, MOD(b)->heat);
	return c ? c : query_by_name(a, b);
}

int query_by_risk(const void *a, const void *b)
{
	int c = cmp_double_desc(MOD(a)->change_risk, MOD(b)->change_risk);
	return c ? c : query_by_name(a, b);
}

int query_by_complexity(const void *a, const void *b)
{
	int c = MOD(b)->complexity_total - MOD(a)->complexity_total;
	return c ? c : query_by_name(a, b);
}

bool query_keep_core(const struct kg_module *m)
{
	return kg_module_is_core(m);
}

bool query_keep_project(const struct kg_module *m)
{
	return m->project;
}

bool query_keep_all(const struct kg_module *m)
{
	(void)m;
	return true;
}

bool query_keep_hub(const struct kg_module *m)
{
	return m->hub;
}
