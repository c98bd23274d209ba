/*
 * graph_metrics.c - the knowledge graph's metrics and topology, computed
 * at kg_graph_finish (graph_int.h; formulas in docs/SCHEMA.md): heat and
 * change risk, test paths, per-module counts and coupling, coupled pairs,
 * PageRank centrality, strongly connected components and layers.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/str.h"
#include "graph/graph.h"
#include "graph/graph_int.h"

/* ---- metrics ------------------------------------------------------------- */

double kg_heat_score(int in_degree, int complexity, bool has_tests, int max_coupling)
{
	double a = fmin(in_degree / 15.0 * 100.0, 100.0);
	double b = fmin(complexity / 200.0 * 100.0, 100.0);
	double c = has_tests ? 0.0 : 100.0;
	double d = fmin(max_coupling / 50.0 * 100.0, 100.0);
	return 0.30 * a + 0.25 * b + 0.25 * c + 0.20 * d;
}

const char *kg_heat_zone(double heat)
{
	return heat >= 60.0 ? "red" : heat >= 30.0 ? "yellow" : "green";
}

double kg_change_risk(int complexity, int fan_out, int max_coupling, int public_count,
                      int functions, int fan_in)
{
	double api_ratio = functions > 0 ? (double)public_count / functions : 0.0;
	double base = 2.0 * complexity + 2.0 * fan_out + 2.0 * max_coupling +
	              round(api_ratio * functions) + functions;
	return base * (1.0 + fan_in / 2.0);
}

/* True when `path` is inside directory `dir` (relative, any trailing slash). */
static bool path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	while (n > 0 && dir[n - 1] == '/')
		n--;
	if (n == 0 || (n == 1 && dir[0] == '.'))
		return false;
	if (n > 2 && dir[0] == '.' && dir[1] == '/') {
		dir += 2;
		n -= 2;
	}
	return strncmp(path, dir, n) == 0 && path[n] == '/';
}

bool kg_path_is_test_in(const char *path, const char *const *test_paths)
{
	static const char *const defaults[] = {"test", NULL};
	if (gi_str_ends_with(path, "_test.exs"))
		return true;
	const char *const *dirs = test_paths ? test_paths : defaults;
	for (size_t i = 0; dirs[i]; i++)
		if (path_under(path, dirs[i]))
			return true;
	/* A nested Mix project (an umbrella app apps/NAME/test/, a
	 * repository's installer/test/ or integration_test/test/): a `test`
	 * directory with no `lib` directory above it. A script (.exs) under
	 * any `test` directory is test code too (Elixir's own
	 * lib/APP/test/...: Mix never compiles scripts into the library). */
	bool lib_above = false;
	for (const char *seg = path; *seg;) {
		const char *slash = strchr(seg, '/');
		if (!slash)
			break;
		size_t n = (size_t)(slash - seg);
		if (n == 4 && GI_STR_STARTS(seg, "test") &&
		    (!lib_above || gi_str_ends_with(path, ".exs")))
			return true;
		if (n == 3 && GI_STR_STARTS(seg, "lib"))
			lib_above = true;
		seg = slash + 1;
	}
	return false;
}

bool kg_path_is_test(const char *path)
{
	return kg_path_is_test_in(path, NULL);
}

void graph_module_counts(struct kg_graph *g, struct kg_module *m)
{
	for (size_t i = 0; i < m->functions.len; i++) {
		struct kg_function *f = kg_function_at(g, GI_VEC_AT(&m->functions, int, i));
		if (f->generated_by)
			continue; /* metrics are about the code written */
		if (f->is_public) {
			m->public_count++;
			m->specced += f->has_spec;
			m->documented += f->has_doc && !f->doc_false;
		} else {
			m->private_count++;
		}
		m->complexity_total += f->cyclomatic;
		if (f->cyclomatic > m->complexity_max)
			m->complexity_max = f->cyclomatic;
	}
}

void graph_module_degrees(struct kg_graph *g, struct kg_module *m)
{
	for (size_t i = 0; i < m->in.len; i++) {
		const struct kg_edge *e = kg_edge_at(g, GI_VEC_AT(&m->in, int, i));
		if (!kg_edge_is_direct(e))
			continue;
		struct kg_module *from = kg_module_at(g, e->from);
		if (kg_module_is_core(from))
			m->ca++;
		else if (from->test)
			m->has_tests = true;
	}
	int external = 0;
	for (size_t i = 0; i < m->out.len; i++) {
		const struct kg_edge *e = kg_edge_at(g, GI_VEC_AT(&m->out, int, i));
		if (!kg_edge_is_direct(e))
			continue;
		struct kg_module *to = kg_module_at(g, e->to);
		if (kg_module_is_core(to))
			m->ce++;
		else if (!to->project)
			external++;
	}
	m->in_degree = m->ca;
	m->out_degree = m->ce + external;
	m->instability = m->ca + m->ce > 0 ? (double)m->ce / (m->ca + m->ce) : 0.0;
	char name[1024];
	snprintf(name, sizeof(name), "%sTest", m->name);
	int t = kg_graph_module_find(g, name);
	if (t >= 0 && kg_module_at(g, t)->test)
		m->has_tests = true;
}

static int pair_cmp(const void *a, const void *b)
{
	const struct kg_pair *x = a, *y = b;
	if (x->calls != y->calls)
		return y->calls - x->calls;
	if (x->from != y->from)
		return x->from - y->from;
	return x->to - y->to;
}

void graph_pairs_compute(struct kg_graph *g)
{
	struct pair_map pair_index = {0}, seen = {0};
	for (size_t i = 0; i < g->calls.len; i++) {
		struct kg_call *c = kg_call_at(g, (int)i);
		int from = kg_function_at(g, c->from_fn)->module;
		if (kg_call_kind_is_dispatch(c->kind))
			continue;
		if (from == c->to_module || !kg_module_is_core(kg_module_at(g, from)) ||
		    !kg_module_is_core(kg_module_at(g, c->to_module)))
			continue;
		int existing = pair_map_get(&pair_index, from, c->to_module);
		struct kg_pair *p;
		if (existing >= 0) {
			p = &GI_VEC_AT(&g->pairs, struct kg_pair, existing);
		} else {
			p = gi_vec_push_zero(&g->pairs);
			p->from = from;
			p->to = c->to_module;
			pair_map_put(&pair_index, from, c->to_module, (int)g->pairs.len - 1);
		}
		p->calls += c->count;
		if (pair_map_get(&seen, from, c->to_fn) < 0) {
			pair_map_put(&seen, from, c->to_fn, 1);
			p->functions++;
		}
	}
	pair_map_destroy(&pair_index);
	pair_map_destroy(&seen);
	for (size_t i = 0; i < g->pairs.len; i++) {
		struct kg_pair *p = &GI_VEC_AT(&g->pairs, struct kg_pair, i);
		struct kg_module *a = kg_module_at(g, p->from), *b = kg_module_at(g, p->to);
		if (p->calls > a->max_coupling)
			a->max_coupling = p->calls;
		if (p->calls > b->max_coupling)
			b->max_coupling = p->calls;
	}
	gi_vec_sort(&g->pairs, pair_cmp);
}

/* PageRank over core modules and core-to-core edges (a module's rank flows
 * to the modules it depends on); dangling rank is spread evenly. */
void graph_pagerank_compute(struct kg_graph *g)
{
	int n = (int)g->modules.len, core = 0;
	for (int i = 0; i < n; i++)
		core += kg_module_is_core(kg_module_at(g, i));
	if (core == 0)
		return;
	double *rank = gi_calloc((size_t)n, sizeof(double));
	double *next = gi_calloc((size_t)n, sizeof(double));
	for (int i = 0; i < n; i++)
		if (kg_module_is_core(kg_module_at(g, i)))
			rank[i] = 1.0 / core;
	for (int iter = 0; iter < KG_PAGERANK_MAX_ITER; iter++) {
		double dangling = 0.0;
		for (int i = 0; i < n; i++) {
			struct kg_module *m = kg_module_at(g, i);
			if (kg_module_is_core(m) && m->ce == 0)
				dangling += rank[i];
		}
		double base =
		    (1.0 - KG_PAGERANK_DAMPING) / core + KG_PAGERANK_DAMPING * dangling / core;
		for (int i = 0; i < n; i++)
			next[i] = kg_module_is_core(kg_module_at(g, i)) ? base : 0.0;
		for (int i = 0; i < n; i++) {
			struct kg_module *m = kg_module_at(g, i);
			if (!kg_module_is_core(m) || m->ce == 0)
				continue;
			double share = KG_PAGERANK_DAMPING * rank[i] / m->ce;
			for (size_t k = 0; k < m->out.len; k++) {
				const struct kg_edge *e = kg_edge_at(g, GI_VEC_AT(&m->out, int, k));
				if (kg_edge_is_direct(e) &&
				    kg_module_is_core(kg_module_at(g, e->to)))
					next[e->to] += share;
			}
		}
		double delta = 0.0;
		for (int i = 0; i < n; i++) {
			delta += fabs(next[i] - rank[i]);
			rank[i] = next[i];
		}
		if (delta < 1e-12)
			break;
	}
	for (int i = 0; i < n; i++)
		kg_module_at(g, i)->centrality = rank[i];
	gi_free(rank);
	gi_free(next);
}

struct scc_frame {
	int v;
	size_t next_edge;
};

/* Tarjan's algorithm, iterative, over core modules. Components come out in
 * dependency order: a component after every component it depends on. */
void graph_scc_compute(struct kg_graph *g)
{
	int n = (int)g->modules.len;
	int *index = gi_malloc(sizeof(int) * (size_t)(n + 1));
	int *low = gi_malloc(sizeof(int) * (size_t)(n + 1));
	bool *on_stack = gi_calloc((size_t)n + 1, sizeof(bool));
	int *stack = gi_malloc(sizeof(int) * (size_t)(n + 1));
	struct scc_frame *frames = gi_malloc(sizeof(struct scc_frame) * (size_t)(n + 1));
	int counter = 0, sp = 0;
	for (int i = 0; i < n; i++)
		index[i] = -1;
	for (int root = 0; root < n; root++) {
		if (index[root] >= 0 || !kg_module_is_core(kg_module_at(g, root)))
			continue;
		int fp = 0;
		frames[fp++] = (struct scc_frame){root, 0};
		index[root] = low[root] = counter++;
		stack[sp++] = root;
		on_stack[root] = true;
		while (fp > 0) {
			struct scc_frame *f = &frames[fp - 1];
			struct kg_module *m = kg_module_at(g, f->v);
			if (f->next_edge < m->out.len) {
				const struct kg_edge *e =
				    kg_edge_at(g, GI_VEC_AT(&m->out, int, f->next_edge++));
				int w = e->to;
				if (!kg_edge_is_direct(e) || !kg_module_is_core(kg_module_at(g, w)))
					continue;
				if (index[w] < 0) {
					index[w] = low[w] = counter++;
					stack[sp++] = w;
					on_stack[w] = true;
					frames[fp++] = (struct scc_frame){w, 0};
				} else if (on_stack[w] && index[w] < low[f->v]) {
					low[f->v] = index[w];
				}
				continue;
			}
			int v = f->v;
			if (low[v] == index[v]) {
				struct kg_scc *s = gi_vec_push_zero(&g->sccs);
				int id = (int)g->sccs.len - 1;
				s->first = (int)g->scc_members.len;
				int w;
				do {
					w = stack[--sp];
					on_stack[w] = false;
					kg_module_at(g, w)->scc = id;
					gi_vec_push(&g->scc_members, &w);
				} while (w != v);
				s = &GI_VEC_AT(&g->sccs, struct kg_scc, id);
				s->count = (int)g->scc_members.len - s->first;
			}
			fp--;
			if (fp > 0 && low[v] < low[frames[fp - 1].v])
				low[frames[fp - 1].v] = low[v];
		}
	}
	gi_free(index);
	gi_free(low);
	gi_free(on_stack);
	gi_free(stack);
	gi_free(frames);
}

void graph_layers_compute(struct kg_graph *g)
{
	g->layer_count = 0;
	for (size_t s = 0; s < g->sccs.len; s++) {
		struct kg_scc *scc = &GI_VEC_AT(&g->sccs, struct kg_scc, s);
		int layer = 0;
		for (int k = 0; k < scc->count; k++) {
			int v = GI_VEC_AT(&g->scc_members, int, scc->first + k);
			struct kg_module *m = kg_module_at(g, v);
			for (size_t e = 0; e < m->out.len; e++) {
				const struct kg_edge *edge =
				    kg_edge_at(g, GI_VEC_AT(&m->out, int, e));
				struct kg_module *to = kg_module_at(g, edge->to);
				if (!kg_edge_is_direct(edge) || !kg_module_is_core(to) ||
				    to->scc == (int)s)
					continue;
				int l = GI_VEC_AT(&g->sccs, struct kg_scc, to->scc).layer + 1;
				if (l > layer)
					layer = l;
			}
		}
		scc->layer = layer;
		for (int k = 0; k < scc->count; k++)
			kg_module_at(g, GI_VEC_AT(&g->scc_members, int, scc->first + k))->layer =
			    layer;
		if (layer + 1 > g->layer_count)
			g->layer_count = layer + 1;
	}
}
