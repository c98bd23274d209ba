/*
 * graph.c - building the knowledge graph (see graph.h): modules,
 * functions and facts added in any order and looked up; kg_graph_finish is
 * graph_finish.c's (with the metrics of graph_metrics.c), dead code
 * graph_dead.c's (graph_int.h). This file calls none of them.
 *
 * Names are resolved only in kg_graph_finish(), so that facts may arrive in
 * any order. Aggregation of edges, calls and pairs uses a small hash map keyed
 * by two indexes (struct pair_map), which keeps the cost linear.
 */
#include "graph/graph.h"
#include "graph/graph_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/str.h"

struct kg_graph *kg_graph_new(void)
{
	struct kg_graph *g = gi_calloc(1, sizeof(*g));
	gi_arena_init(&g->arena);
	gi_vec_init(&g->modules, sizeof(struct kg_module));
	gi_vec_init(&g->functions, sizeof(struct kg_function));
	gi_vec_init(&g->edges, sizeof(struct kg_edge));
	gi_vec_init(&g->calls, sizeof(struct kg_call));
	gi_vec_init(&g->pairs, sizeof(struct kg_pair));
	gi_vec_init(&g->sccs, sizeof(struct kg_scc));
	gi_vec_init(&g->scc_members, sizeof(int));
	gi_vec_init(&g->raw_refs, sizeof(struct raw_ref));
	gi_vec_init(&g->raw_calls, sizeof(struct raw_call));
	gi_map_init(&g->module_index);
	gi_map_init(&g->function_index);
	gi_map_init(&g->dynamic_names);
	return g;
}

void kg_graph_free(struct kg_graph *g)
{
	if (!g)
		return;
	/* A snapshot's graph: the vectors' items are one block (g->pool). */
	for (size_t i = 0; !g->pool && i < g->modules.len; i++) {
		struct kg_module *m = kg_module_at(g, (int)i);
		gi_vec_destroy(&m->functions);
		gi_vec_destroy(&m->out);
		gi_vec_destroy(&m->in);
		gi_vec_destroy(&m->callbacks);
		gi_vec_destroy(&m->struct_fields);
	}
	for (size_t i = 0; !g->pool && i < g->functions.len; i++) {
		struct kg_function *f = kg_function_at(g, (int)i);
		gi_vec_destroy(&f->callers);
		gi_vec_destroy(&f->callees);
	}
	gi_free(g->pool);
	gi_vec_destroy(&g->modules);
	gi_vec_destroy(&g->functions);
	gi_vec_destroy(&g->edges);
	gi_vec_destroy(&g->calls);
	gi_vec_destroy(&g->pairs);
	gi_vec_destroy(&g->sccs);
	gi_vec_destroy(&g->scc_members);
	gi_vec_destroy(&g->raw_refs);
	gi_vec_destroy(&g->raw_calls);
	gi_map_destroy(&g->module_index);
	gi_map_destroy(&g->dynamic_names);
	gi_map_destroy(&g->function_index);
	gi_arena_destroy(&g->arena);
	gi_free(g);
}

static const char *graph_strdup(struct kg_graph *g, const char *s)
{
	return s ? gi_arena_strdup(&g->arena, s) : NULL;
}

int kg_graph_module_find(const struct kg_graph *g, const char *name)
{
	void *v = gi_map_get(&g->module_index, name);
	return v ? (int)((intptr_t)v - 1) : -1;
}

int graph_module_new(struct kg_graph *g, const char *name, bool project)
{
	struct kg_module *m = gi_vec_push_zero(&g->modules);
	int idx = (int)g->modules.len - 1;
	m->name = graph_strdup(g, name);
	m->project = project;
	m->scc = -1;
	gi_vec_init(&m->functions, sizeof(int));
	gi_vec_init(&m->out, sizeof(int));
	gi_vec_init(&m->in, sizeof(int));
	gi_vec_init(&m->callbacks, sizeof(const char *));
	gi_vec_init(&m->struct_fields, sizeof(const char *));
	gi_map_put(&g->module_index, name, (void *)(intptr_t)(idx + 1));
	return idx;
}

int kg_graph_module_add(struct kg_graph *g, const struct kg_module_info *info)
{
	int idx = kg_graph_module_find(g, info->name);
	if (idx >= 0) {
		struct kg_module *m = kg_module_at(g, idx);
		m->has_moduledoc |= info->has_moduledoc;
		m->has_struct |= info->has_struct;
		return idx;
	}
	idx = graph_module_new(g, info->name, true);
	struct kg_module *m = kg_module_at(g, idx);
	m->file = graph_strdup(g, info->file);
	m->kind = info->kind;
	m->impl_for = graph_strdup(g, info->impl_for);
	m->protocol = graph_strdup(g, info->protocol);
	m->line_start = info->line_start;
	m->line_end = info->line_end;
	m->test = info->test;
	m->has_moduledoc = info->has_moduledoc;
	m->moduledoc_false = info->moduledoc_false;
	m->has_struct = info->has_struct;
	m->origin = info->origin;
	return idx;
}

/* "Module\tname/arity" into `key` of `size` bytes (truncated when too long:
 * such names are not real). */
static void function_key(char *key, size_t size, const char *module, const char *name, int arity)
{
	size_t m = strlen(module), n = strlen(name);
	if (m + n + 16 > size) {
		snprintf(key, size, "%s\t%s/%d", module, name, arity);
		return;
	}
	memcpy(key, module, m);
	key[m] = '\t';
	memcpy(key + m + 1, name, n);
	char *p = key + m + 1 + n;
	*p++ = '/';
	unsigned a = arity < 0 ? 0u : (unsigned)arity;
	char digits[12];
	int d = 0;
	do {
		digits[d++] = (char)('0' + a % 10);
		a /= 10;
	} while (a);
	if (arity < 0)
		*p++ = '-';
	while (d)
		*p++ = digits[--d];
	*p = '\0';
}

int kg_graph_function_find(const struct kg_graph *g, int module, const char *name, int arity)
{
	char key[1024];
	function_key(key, sizeof(key), kg_module_at(g, module)->name, name, arity);
	void *v = gi_map_get(&g->function_index, key);
	return v ? (int)((intptr_t)v - 1) : -1;
}

int graph_function_new(struct kg_graph *g, int module, const char *name, int arity)
{
	struct kg_function *f = gi_vec_push_zero(&g->functions);
	int idx = (int)g->functions.len - 1;
	f->module = module;
	f->name = graph_strdup(g, name);
	f->arity = arity;
	gi_vec_init(&f->callers, sizeof(int));
	gi_vec_init(&f->callees, sizeof(int));
	char key[1024];
	function_key(key, sizeof(key), kg_module_at(g, module)->name, name, arity);
	gi_map_put(&g->function_index, key, (void *)(intptr_t)(idx + 1));
	return idx;
}

int kg_graph_function_add(struct kg_graph *g, int module, const struct kg_function *fn)
{
	int idx = kg_graph_function_find(g, module, fn->name, fn->arity);
	if (idx >= 0) {
		struct kg_function *f = kg_function_at(g, idx);
		f->clauses += fn->clauses;
		f->cyclomatic += fn->cyclomatic;
		f->cognitive += fn->cognitive;
		if (fn->max_nesting > f->max_nesting)
			f->max_nesting = fn->max_nesting;
		f->lines += fn->lines;
		f->has_doc |= fn->has_doc;
		f->has_spec |= fn->has_spec;
		f->has_impl |= fn->has_impl;
		return idx;
	}
	idx = graph_function_new(g, module, fn->name, fn->arity);
	struct kg_function *f = kg_function_at(g, idx);
	struct gi_vec callers = f->callers, callees = f->callees;
	*f = *fn;
	f->module = module;
	f->name = graph_strdup(g, fn->name);
	f->delegate_to = graph_strdup(g, fn->delegate_to);
	f->generated_by = graph_strdup(g, fn->generated_by);
	f->defined = true;
	f->callers = callers;
	f->callees = callees;
	gi_vec_push(&kg_module_at(g, module)->functions, &idx);
	return idx;
}

void kg_graph_callback_add(struct kg_graph *g, int module, const char *name_arity)
{
	const char *s = graph_strdup(g, name_arity);
	gi_vec_push(&kg_module_at(g, module)->callbacks, &s);
}

void kg_graph_struct_field_add(struct kg_graph *g, int module, const char *field)
{
	const char *s = graph_strdup(g, field);
	gi_vec_push(&kg_module_at(g, module)->struct_fields, &s);
}

void kg_graph_ref_add(struct kg_graph *g, int module, const char *target, unsigned kinds, int count)
{
	struct raw_ref r = {module, graph_strdup(g, target), kinds, count, false};
	gi_vec_push(&g->raw_refs, &r);
}

void kg_graph_ref_fill(struct kg_graph *g, int module, const char *target, unsigned kinds,
                       int count)
{
	struct raw_ref r = {module, graph_strdup(g, target), kinds, count, true};
	gi_vec_push(&g->raw_refs, &r);
}

void kg_graph_call_fill(struct kg_graph *g, int fn, enum facts_call_kind kind, const char *module,
                        const char *function, int arity, int count)
{
	kg_graph_call_add(g, fn, kind, module, function, arity, count);
	GI_VEC_AT(&g->raw_calls, struct raw_call, g->raw_calls.len - 1).fill = true;
}

void kg_graph_call_add(struct kg_graph *g, int fn, enum facts_call_kind kind, const char *module,
                       const char *function, int arity, int count)
{
	if (kind == FACTS_CALL_COMPILER)
		return; /* never an edge (facts.h) */
	struct raw_call c = {fn,    kind, graph_strdup(g, module), graph_strdup(g, function), arity,
	                     count, false};
	gi_vec_push(&g->raw_calls, &c);
}

void kg_graph_add_facts(struct kg_graph *g, const struct facts_file *f, bool test)
{
	for (size_t i = 0; i < f->modules.len; i++) {
		const struct facts_module *fm = gi_vec_get(&f->modules, i);
		struct kg_module_info info = {
		    .name = fm->name,
		    .file = f->path,
		    .kind = fm->kind,
		    .impl_for = fm->impl_for,
		    .protocol = fm->protocol,
		    .line_start = fm->line_start,
		    .line_end = fm->line_end,
		    .test = test,
		    .has_moduledoc = fm->has_moduledoc,
		    .moduledoc_false = fm->moduledoc_false,
		    .has_struct = fm->has_struct,
		    .origin = fm->origin,
		};
		int m = kg_graph_module_add(g, &info);
		for (size_t j = 0; j < fm->refs.len; j++) {
			const struct facts_ref *r = gi_vec_get(&fm->refs, j);
			kg_graph_ref_add(g, m, r->target, 1u << r->kind, 1);
		}
		for (size_t j = 0; j < fm->callbacks.len; j++)
			kg_graph_callback_add(g, m, GI_VEC_AT(&fm->callbacks, const char *, j));
		for (size_t j = 0; j < fm->struct_fields.len; j++)
			kg_graph_struct_field_add(g, m,
			                          GI_VEC_AT(&fm->struct_fields, const char *, j));
		for (size_t j = 0; j < fm->functions.len; j++) {
			const struct facts_function *ff = gi_vec_get(&fm->functions, j);
			struct kg_function kf = {
			    .name = ff->name,
			    .arity = ff->arity,
			    .kind = ff->kind,
			    .is_public = ff->is_public,
			    .line_start = ff->line_start,
			    .line_end = ff->line_end,
			    .clauses = ff->clauses,
			    .lines = ff->lines,
			    .has_doc = ff->has_doc,
			    .has_spec = ff->has_spec,
			    .has_impl = ff->has_impl,
			    .has_guard = ff->has_guard,
			    .doc_false = ff->doc_false,
			    .deprecated = ff->deprecated,
			    .from_defaults = ff->from_defaults,
			    .cyclomatic = ff->cyclomatic,
			    .cognitive = ff->cognitive,
			    .max_nesting = ff->max_nesting,
			    .delegate_to = ff->delegate_to,
			    .generated_by = ff->generated_by,
			};
			int fi = kg_graph_function_add(g, m, &kf);
			for (size_t k = 0; k < ff->calls.len; k++) {
				const struct facts_call *c = gi_vec_get(&ff->calls, k);
				kg_graph_call_add(g, fi, c->kind, c->module, c->function, c->arity,
				                  1);
			}
		}
	}
}

unsigned kg_call_kind_edge_bit(enum facts_call_kind k)
{
	switch (k) {
	case FACTS_CALL_CAPTURE:
		return 1u << FACTS_REF_CAPTURE;
	case FACTS_CALL_MFA:
		return 1u << FACTS_REF_MFA;
	case FACTS_CALL_APPLY:
		return 1u << FACTS_REF_APPLY;
	case FACTS_CALL_IMPL:
		return 1u << FACTS_REF_IMPL;
	case FACTS_CALL_USE:
		return 1u << FACTS_REF_USE;
	default:
		return 1u << FACTS_REF_CALL;
	}
}
