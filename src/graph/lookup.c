/*
 * lookup.c - typed lookups on a finished knowledge graph (see lookup.h).
 */
#include "graph/lookup.h"

#include <string.h>

#include "base/alloc.h"
#include "base/str.h"

int kg_module_lookup(const struct kg_graph *g, const char *name)
{
	if (!g || !name || !*name)
		return -1;
	if (gi_str_starts_with(name, "Elixir.") && name[7])
		name += 7;
	return kg_graph_module_find(g, name);
}

int kg_function_lookup(const struct kg_graph *g, int module, const char *name, long arity)
{
	if (!g || module < 0 || !name || !*name || strlen(name) >= 256 || arity < 0 || arity > 255)
		return -1;
	int fn = kg_graph_function_find(g, module, name, (int)arity);
	return fn >= 0 && kg_function_at(g, fn)->defined ? fn : -1;
}

bool kg_module_uses(const struct kg_graph *g, int module, const char *target)
{
	const struct kg_module *m = kg_module_at(g, module);
	for (size_t i = 0; i < m->out.len; i++) {
		const struct kg_edge *e = kg_edge_at(g, GI_VEC_AT(&m->out, int, i));
		if ((e->kinds & (1u << FACTS_REF_USE)) &&
		    strcmp(kg_module_at(g, e->to)->name, target) == 0)
			return true;
	}
	return false;
}

size_t kg_module_dependencies(const struct kg_graph *g, int module, int *out, size_t cap)
{
	const struct kg_module *m = kg_module_at(g, module);
	size_t n = m->out.len;
	int *to = gi_malloc(sizeof(int) * (n + 1));
	for (size_t i = 0; i < n; i++)
		to[i] = kg_edge_at(g, GI_VEC_AT(&m->out, int, i))->to;
	/* By name, stable: the order module_details gives. */
	for (size_t i = 1; i < n; i++) {
		int v = to[i];
		size_t j = i;
		while (j > 0 &&
		       strcmp(kg_module_at(g, to[j - 1])->name, kg_module_at(g, v)->name) > 0) {
			to[j] = to[j - 1];
			j--;
		}
		to[j] = v;
	}
	size_t w = n < cap ? n : cap;
	memcpy(out, to, sizeof(int) * w);
	gi_free(to);
	return w;
}
