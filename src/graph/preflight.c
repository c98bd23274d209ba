/*
 * preflight.c - what to know before editing a module or a function (the
 * query "preflight", see search.h and docs/SEARCH.md "Preflight"): its
 * role, public API, dependents with the edge kinds, blast radius, the test
 * modules that reach it, its metrics, and the risk factors that follow
 * from them, each with the number behind it.
 *
 * Reads a finished graph only; the walks visit each module or function
 * once, so the cost is linear in the graph whatever the depth.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "graph/query_int.h"
#include "graph/search.h"

#define COMPLEXITY_HIGH 15 /* a function's cyclomatic complexity that makes an edit risky */

static void risk_json(json_t *risks, const char *factor, long long value, const char *why)
{
	json_array_append_new(risks, json_pack("{s:s, s:I, s:s}", "factor", factor, "value",
	                                       (json_int_t)value, "why", why));
}

/* A risk factor with its number and a sentence saying why (a literal format). */
#define risk_add(risks, factor, fmt, value)                            \
	do {                                                           \
		char why_[300];                                        \
		snprintf(why_, sizeof(why_), fmt, (long long)(value)); \
		risk_json(risks, factor, (long long)(value), why_);    \
	} while (0)

/* Modules that reach `m` through references, up to `depth` hops, in BFS
 * order: *out gets {module, depth, test} per module. Returns how many. */
static size_t dependents_walk(const struct kg_graph *g, int m, int depth, json_t *out,
                              json_t *tests)
{
	size_t n = g->modules.len;
	int *seen = gi_calloc(n + 1, sizeof(int)); /* depth + 1, 0 unseen */
	int *queue = gi_malloc(sizeof(int) * (n + 1));
	size_t head = 0, tail = 0;
	seen[m] = 1;
	queue[tail++] = m;
	while (head < tail) {
		int v = queue[head++];
		if (seen[v] - 1 >= depth)
			continue;
		const struct kg_module *mv = kg_module_at(g, v);
		for (size_t i = 0; i < mv->in.len; i++) {
			int w = kg_edge_at(g, GI_VEC_AT(&mv->in, int, i))->from;
			const struct kg_module *mw = kg_module_at(g, w);
			if (seen[w] || !mw->project)
				continue;
			seen[w] = seen[v] + 1;
			queue[tail++] = w;
			json_t *o = json_pack("{s:s, s:i, s:b}", "module", mw->name, "depth",
			                      seen[w] - 1, "test", mw->test);
			if (mw->test)
				json_array_append_new(tests, json_pack("{s:s, s:s?, s:i}", "module",
				                                       mw->name, "file", mw->file,
				                                       "depth", seen[w] - 1));
			json_array_append_new(out, o);
		}
	}
	gi_free(seen);
	gi_free(queue);
	return tail - 1;
}

/* Functions that call `fn`, transitively up to `depth`; test modules among
 * their modules go to `tests` (once each). Returns how many callers. */
static size_t callers_walk(const struct kg_graph *g, int fn, int depth, json_t *out, json_t *tests)
{
	size_t n = g->functions.len;
	int *seen = gi_calloc(n + 1, sizeof(int));
	int *queue = gi_malloc(sizeof(int) * (n + 1));
	bool *test_seen = gi_calloc(g->modules.len + 1, sizeof(bool));
	size_t head = 0, tail = 0;
	seen[fn] = 1;
	queue[tail++] = fn;
	while (head < tail) {
		int v = queue[head++];
		if (seen[v] - 1 >= depth)
			continue;
		const struct kg_function *fv = kg_function_at(g, v);
		for (size_t i = 0; i < fv->callers.len; i++) {
			int w = kg_call_at(g, GI_VEC_AT(&fv->callers, int, i))->from_fn;
			if (seen[w])
				continue;
			seen[w] = seen[v] + 1;
			queue[tail++] = w;
			const struct kg_function *fw = kg_function_at(g, w);
			const struct kg_module *mw = kg_module_at(g, fw->module);
			json_array_append_new(out, json_pack("{s:s, s:s, s:i, s:i, s:b}", "module",
			                                     mw->name, "name", fw->name, "arity",
			                                     fw->arity, "depth", seen[w] - 1,
			                                     "test", mw->test));
			if (mw->test && !test_seen[fw->module]) {
				test_seen[fw->module] = true;
				json_array_append_new(tests, json_pack("{s:s, s:s?, s:i}", "module",
				                                       mw->name, "file", mw->file,
				                                       "depth", seen[w] - 1));
			}
		}
	}
	gi_free(seen);
	gi_free(queue);
	gi_free(test_seen);
	return tail - 1;
}

static json_t *role_json(const struct kg_graph *g, const struct kg_module *m)
{
	json_t *o = json_object();
	json_object_set_new(o, "kind", json_string(facts_module_kind_name(m->kind)));
	if (m->protocol)
		json_object_set_new(o, "protocol", json_string(m->protocol));
	if (m->impl_for)
		json_object_set_new(o, "impl_for", json_string(m->impl_for));
	json_t *behaviours = json_array(), *uses = json_array();
	for (size_t i = 0; i < m->out.len; i++) {
		const struct kg_edge *e = kg_edge_at(g, GI_VEC_AT(&m->out, int, i));
		const char *to = kg_module_at(g, e->to)->name;
		if (e->kinds & (1u << FACTS_REF_BEHAVIOUR))
			json_array_append_new(behaviours, json_string(to));
		if (e->kinds & (1u << FACTS_REF_USE))
			json_array_append_new(uses, json_string(to));
	}
	json_object_set_new(o, "behaviours", behaviours);
	json_object_set_new(o, "uses", uses);
	json_object_set_new(o, "defines_callbacks", json_integer((json_int_t)m->callbacks.len));
	json_object_set_new(o, "struct", json_boolean(m->has_struct));
	json_object_set_new(o, "test", json_boolean(m->test));
	return o;
}

/* Reals as the other queries give them: rounded, so that a printed and
 * re-read answer is the same JSON. */
static double rounded(double v, double scale)
{
	return round(v * scale) / scale;
}

static json_t *metrics_json(const struct kg_module *m)
{
	return json_pack(
	    "{s:i, s:i, s:i, s:i, s:f, s:f, s:b, s:f, s:s, s:f, s:i}", "complexity_total",
	    m->complexity_total, "complexity_max", m->complexity_max, "ca", m->ca, "ce", m->ce,
	    "instability", rounded(m->instability, 1e3), "centrality", rounded(m->centrality, 1e4),
	    "hub", m->hub, "heat", rounded(m->heat, 1e2), "zone", kg_heat_zone(m->heat),
	    "change_risk", rounded(m->change_risk, 1e2), "layer", m->layer);
}

/* The module's risk factors, from its metrics and what the walks found. */
static void module_risks(const struct kg_graph *g, const struct kg_module *m, size_t dependents,
                         size_t tests, int depth, json_t *risks)
{
	if (m->hub)
		risk_add(risks, "hub", "%lld modules depend on it directly (hub threshold 3)",
		         m->in_degree);
	if (strcmp(kg_heat_zone(m->heat), "red") == 0)
		risk_add(risks, "red_zone", "heat %lld of 100 (red from 60)", (long long)m->heat);
	if (tests == 0)
		risk_add(risks, "untested", "no test module reaches it within %lld hops", depth);
	if (m->scc >= 0) {
		const struct kg_scc *c = &GI_VEC_AT(&g->sccs, struct kg_scc, m->scc);
		if (c->count > 1)
			risk_add(risks, "cycle", "it is in a dependency cycle of %lld modules",
			         c->count);
	}
	if (m->complexity_max >= COMPLEXITY_HIGH)
		risk_add(risks, "complex", "its most complex function has cyclomatic %lld",
		         m->complexity_max);
	if (dependents >= 10)
		risk_add(risks, "wide_blast", "%lld modules reach it within the depth",
		         (long long)dependents);
}

int kg_preflight(const struct kg_graph *g, int module, int function, int depth, json_t *out)
{
	const struct kg_module *m = kg_module_at(g, module);
	json_t *tests = json_array(), *risks = json_array();
	json_object_set_new(out, "module", json_string(m->name));
	json_object_set_new(out, "file", m->file ? json_string(m->file) : json_null());
	json_object_set_new(out, "depth", json_integer(depth));
	json_object_set_new(out, "role", role_json(g, m));
	if (function >= 0) {
		const struct kg_function *f = kg_function_at(g, function);
		char name[320];
		snprintf(name, sizeof(name), "%s/%d", f->name, f->arity);
		json_object_set_new(out, "function", json_string(name));
		json_object_set_new(
		    out, "definition",
		    json_pack("{s:s, s:s, s:i, s:i, s:i, s:i, s:i, s:b, s:b, s:b}", "visibility",
		              f->is_public ? "public" : "private", "kind",
		              facts_function_kind_name(f->kind), "line", f->line_start, "line_end",
		              f->line_end, "cyclomatic", f->cyclomatic, "cognitive", f->cognitive,
		              "max_nesting", f->max_nesting, "has_doc", f->has_doc && !f->doc_false,
		              "has_spec", f->has_spec, "implements_callback", f->has_impl));
		json_t *callers = json_array();
		size_t n = callers_walk(g, function, depth, callers, tests);
		json_object_set_new(out, "callers", callers);
		json_object_set_new(out, "caller_count", json_integer((json_int_t)n));
		json_object_set_new(out, "callee_count", json_integer((json_int_t)f->callees.len));
		if (f->is_public && n == 0 && !f->reached)
			risk_add(risks, "no_callers",
			         "no project code calls it (%lld callers): check "
			         "users outside the project",
			         0);
		if (f->has_impl || f->reached)
			risk_add(
			    risks, "dispatch",
			    "reached by dispatch (a callback, impl or MFA): callers may not be "
			    "visible (%lld)",
			    (long long)f->reached);
		if (f->cyclomatic >= COMPLEXITY_HIGH)
			risk_add(risks, "complex", "cyclomatic complexity %lld", f->cyclomatic);
		if (json_array_size(tests) == 0)
			risk_add(risks, "untested",
			         "no test calls it, even indirectly within %lld hops", depth);
		if (n >= 20)
			risk_add(risks, "wide_blast", "%lld functions reach it within the depth",
			         (long long)n);
	} else {
		json_t *api = json_array();
		for (size_t i = 0; i < m->functions.len; i++) {
			const struct kg_function *f =
			    kg_function_at(g, GI_VEC_AT(&m->functions, int, i));
			if (f->defined && f->is_public && !f->generated_by)
				json_array_append_new(
				    api, json_pack("{s:s, s:i, s:i, s:b, s:b}", "name", f->name,
				                   "arity", f->arity, "line", f->line_start,
				                   "has_doc", f->has_doc && !f->doc_false,
				                   "has_spec", f->has_spec));
		}
		json_object_set_new(out, "public_api", api);
		/* test modules (a test's own routers, endpoints) kept apart: they
		 * would drown the code a change breaks */
		json_t *direct = json_array(), *test_direct = json_array();
		for (size_t i = 0; i < m->in.len; i++) {
			const struct kg_edge *e = kg_edge_at(g, GI_VEC_AT(&m->in, int, i));
			const struct kg_module *from = kg_module_at(g, e->from);
			json_array_append_new(from->test ? test_direct : direct,
			                      json_pack("{s:s, s:o, s:i, s:b}", "module",
			                                from->name, "kinds",
			                                query_kinds_json(e->kinds), "count",
			                                e->count, "test", from->test));
		}
		json_object_set_new(out, "dependents", direct);
		json_object_set_new(out, "test_dependents", test_direct);
		json_t *blast = json_array();
		size_t n = dependents_walk(g, module, depth, blast, tests);
		json_object_set_new(out, "blast_radius", blast);
		json_object_set_new(out, "blast_count", json_integer((json_int_t)n));
		module_risks(g, m, n, json_array_size(tests), depth, risks);
	}
	json_object_set_new(out, "metrics", metrics_json(m));
	json_object_set_new(out, "tests", tests);
	json_object_set_new(out, "risk_factors", risks);
	size_t nr = json_array_size(risks);
	json_object_set_new(out, "risk",
	                    json_string(nr >= 3   ? "high"
	                                : nr >= 1 ? "medium"
	                                          : "low"));
	return 0;
}
