/*
 * graph_int.h - what the files that build the knowledge graph share
 * (graph.h is the contract): the raw references and calls kept until
 * kg_graph_finish, the pair map that aggregates edges, calls and pairs in
 * linear time, and the steps of kg_graph_finish. graph.c adds modules,
 * functions and facts; graph_finish.c resolves names, applies `use`
 * injection and dispatch, and runs the metrics and topology of
 * graph_metrics.c; graph_dead.c knows callbacks and says why a function is
 * dead or alive. Calls go one way (finish to metrics, dead and graph.c;
 * metrics and dead to graph.c): no circle. A graph is one thread's while
 * it is built.
 */
#ifndef GIULIA_GRAPH_GRAPH_INT_H
#define GIULIA_GRAPH_GRAPH_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/alloc.h"
#include "base/vec.h"
#include "graph/graph.h"
#include "source/facts.h"

struct raw_ref {
	int module;
	const char *target;
	unsigned kinds;
	int count;
	bool fill; /* kg_graph_ref_fill */
};

struct raw_call {
	int fn;
	enum facts_call_kind kind;
	const char *module; /* NULL: the enclosing module */
	const char *function;
	int arity;
	int count;
	bool fill; /* kg_graph_call_fill */
};

/* A hash map from a pair of non-negative ints to an int, for aggregating
 * edges, calls and pairs without formatting string keys. Open addressing,
 * at most half full. */
struct pair_map {
	uint64_t *keys; /* 0: empty; else ((a + 1) << 32 | (b + 1)) */
	int *values;
	size_t cap, len;
};

static inline uint64_t pair_key(int a, int b)
{
	return ((uint64_t)(uint32_t)(a + 1) << 32) | (uint32_t)(b + 1);
}

static inline size_t pair_slot(const struct pair_map *m, uint64_t key)
{
	uint64_t h = key; /* murmur3's finaliser: every key bit reaches the low bits */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	size_t i = (size_t)h & (m->cap - 1);
	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

/* Returns the value for (a, b), or -1. */
static inline int pair_map_get(const struct pair_map *m, int a, int b)
{
	if (!m->cap)
		return -1;
	size_t i = pair_slot(m, pair_key(a, b));
	return m->keys[i] ? m->values[i] : -1;
}

static inline void pair_map_put(struct pair_map *m, int a, int b, int value)
{
	if ((m->len + 1) * 2 > m->cap) {
		struct pair_map old = *m;
		m->cap = old.cap ? old.cap * 2 : 1024;
		m->keys = gi_calloc(m->cap, sizeof(uint64_t));
		m->values = gi_calloc(m->cap, sizeof(int));
		m->len = 0;
		for (size_t i = 0; i < old.cap; i++) {
			if (old.keys[i]) {
				size_t j = pair_slot(m, old.keys[i]);
				m->keys[j] = old.keys[i];
				m->values[j] = old.values[i];
				m->len++;
			}
		}
		gi_free(old.keys);
		gi_free(old.values);
	}
	uint64_t key = pair_key(a, b);
	size_t i = pair_slot(m, key);
	if (!m->keys[i])
		m->len++;
	m->keys[i] = key;
	m->values[i] = value;
}

static inline void pair_map_destroy(struct pair_map *m)
{
	gi_free(m->keys);
	gi_free(m->values);
	memset(m, 0, sizeof(*m));
}

/* ---- building (graph.c) ---- */

/* Appends module `name` (copied) with no functions; its index. The caller
 * has checked that it is not there (kg_graph_module_find). */
int graph_module_new(struct kg_graph *g, const char *name, bool project);

/* Appends function `name`/`arity` of `module` (copied), indexed by its
 * name; its index. The caller has checked that it is not there. */
int graph_function_new(struct kg_graph *g, int module, const char *name, int arity);

/* ---- metrics and topology (graph_metrics.c) ---- */

/* Module `m`'s counts over the functions written in it: public, specced,
 * documented, private, complexity (total and largest). */
void graph_module_counts(struct kg_graph *g, struct kg_module *m);

/* Module `m`'s afferent and efferent coupling over direct edges between
 * core modules, and whether test modules depend on it. */
void graph_module_degrees(struct kg_graph *g, struct kg_module *m);

/* The coupled pairs of core modules: calls between them, counted per
 * pair and by distinct functions, most coupled first. */
void graph_pairs_compute(struct kg_graph *g);

/* PageRank over core modules and core-to-core edges (a module's rank flows
 * to the modules it depends on); dangling rank is spread evenly. */
void graph_pagerank_compute(struct kg_graph *g);

/* Tarjan's algorithm, iterative, over core modules. Components come out in
 * dependency order: a component after every component it depends on. */
void graph_scc_compute(struct kg_graph *g);

/* Each strongly connected component's layer: one above the highest layer
 * it depends on (0: depends on none). Needs graph_scc_compute first. */
void graph_layers_compute(struct kg_graph *g);

/* ---- callbacks and dead code (graph_dead.c) ---- */

/* Whether "name/arity" is a callback of a common external behaviour (OTP,
 * Elixir, Mix), recognised even without @impl. */
bool graph_name_arity_known(const char *na);

/* Whether function `f` is "name/arity" `na`. */
bool graph_name_arity_is(const struct kg_function *f, const char *na);

/* Whether "name/arity" is in `list` (of const char *). */
bool graph_name_arity_in(const struct gi_vec *list, const char *name_arity);

#endif
