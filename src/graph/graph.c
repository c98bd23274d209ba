/*
 * graph.c - building the knowledge graph and computing its metrics and
 * topology (see graph.h; formulas in docs/SCHEMA.md).
 *
 * Names are resolved only in kg_graph_finish(), so that facts may arrive in
 * any order. Aggregation of edges, calls and pairs uses a small hash map keyed
 * by two indexes (struct pair_map), which keeps the cost linear.
 */
#include "graph/graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/str.h"

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

static uint64_t pair_key(int a, int b)
{
	return ((uint64_t)(uint32_t)(a + 1) << 32) | (uint32_t)(b + 1);
}

static size_t pair_slot(const struct pair_map *m, uint64_t key)
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
static int pair_map_get(const struct pair_map *m, int a, int b)
{
	if (!m->cap)
		return -1;
	size_t i = pair_slot(m, pair_key(a, b));
	return m->keys[i] ? m->values[i] : -1;
}

static void pair_map_put(struct pair_map *m, int a, int b, int value)
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

static void pair_map_destroy(struct pair_map *m)
{
	gi_free(m->keys);
	gi_free(m->values);
	memset(m, 0, sizeof(*m));
}

/* Callbacks of common external behaviours (OTP, Elixir, Mix), recognised as
 * callback implementations when the module uses or implements any external
 * behaviour, even without @impl. */
static const char *const known_callbacks[] = {
    "init/1",          "handle_call/3",  "handle_cast/2",   "handle_info/2",   "handle_continue/2",
    "terminate/2",     "code_change/3",  "format_status/1", "format_status/2", "child_spec/1",
    "start_link/1",    "start_link/0",   "start/2",         "stop/1",          "prep_stop/1",
    "config_change/3", "handle_event/3", "handle_event/4",  "callback_mode/0", "project/0",
    "application/0",   "run/1",          "__using__/1",     "handle_demand/2", NULL,
};

static bool name_arity_in_known(const char *na)
{
	for (const char *const *k = known_callbacks; *k; k++)
		if (strcmp(*k, na) == 0)
			return true;
	return false;
}

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

static int module_new(struct kg_graph *g, const char *name, bool project)
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
	idx = module_new(g, info->name, true);
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

static int function_new(struct kg_graph *g, int module, const char *name, int arity)
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
	idx = function_new(g, module, fn->name, fn->arity);
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

/* ---- resolution ---------------------------------------------------------- */

static int module_get_or_external(struct kg_graph *g, const char *name)
{
	int idx = kg_graph_module_find(g, name);
	return idx >= 0 ? idx : module_new(g, name, false);
}

static void edge_bump(struct kg_graph *g, struct pair_map *edge_index, int from, int to,
                      unsigned kinds, int count)
{
	if (from == to)
		return;
	int existing = pair_map_get(edge_index, from, to);
	if (existing >= 0) {
		struct kg_edge *e = kg_edge_at(g, existing);
		e->kinds |= kinds;
		e->count += count;
		return;
	}
	struct kg_edge *e = gi_vec_push_zero(&g->edges);
	int idx = (int)g->edges.len - 1;
	e->from = from;
	e->to = to;
	e->kinds = kinds;
	e->count = count;
	pair_map_put(edge_index, from, to, idx);
	gi_vec_push(&kg_module_at(g, from)->out, &idx);
	gi_vec_push(&kg_module_at(g, to)->in, &idx);
}

/* A local call not defined in its module may come from an imported project
 * module; returns the function index or -1. */
static int resolve_imported(struct kg_graph *g, int module, const char *name, int arity,
                            int *to_module)
{
	struct kg_module *m = kg_module_at(g, module);
	for (size_t i = 0; i < m->out.len; i++) {
		struct kg_edge *e = kg_edge_at(g, GI_VEC_AT(&m->out, int, i));
		if (!(e->kinds & (1u << FACTS_REF_IMPORT)) || !kg_module_at(g, e->to)->project)
			continue;
		int fi = kg_graph_function_find(g, e->to, name, arity);
		if (fi >= 0 && kg_function_at(g, fi)->defined && kg_function_at(g, fi)->is_public) {
			*to_module = e->to;
			return fi;
		}
	}
	/* `use M` where M defines __using__: its quote usually imports M (a
	 * DSL's macros), which the reader does not expand (one level of the
	 * project's own __using__ is docs/EXTRACTION.md's approximation). */
	for (size_t i = 0; i < m->out.len; i++) {
		struct kg_edge *e = kg_edge_at(g, GI_VEC_AT(&m->out, int, i));
		if (!(e->kinds & (1u << FACTS_REF_USE)) || !kg_module_at(g, e->to)->project ||
		    kg_module_at(g, e->to)->using_read ||
		    kg_graph_function_find(g, e->to, "__using__", 1) < 0)
			continue;
		int fi = kg_graph_function_find(g, e->to, name, arity);
		if (fi >= 0 && kg_function_at(g, fi)->defined && kg_function_at(g, fi)->is_public) {
			*to_module = e->to;
			return fi;
		}
	}
	return -1;
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

/* Adds (or counts again) the call from `from_fn` to `to_fn` and its module
 * edge. A pair already called keeps the kind it was first seen with. */
static void call_put(struct kg_graph *g, struct pair_map *edge_index, struct pair_map *call_index,
                     int from_fn, int to_module, int to_fn, enum facts_call_kind kind, int count)
{
	int existing = pair_map_get(call_index, from_fn, to_fn);
	if (existing >= 0) {
		kg_call_at(g, existing)->count += count;
	} else {
		struct kg_call *c = gi_vec_push_zero(&g->calls);
		c->from_fn = from_fn;
		c->to_module = to_module;
		c->to_fn = to_fn;
		c->kind = kind;
		c->count = count;
		pair_map_put(call_index, from_fn, to_fn, (int)g->calls.len - 1);
	}
	edge_bump(g, edge_index, kg_function_at(g, from_fn)->module, to_module,
	          kg_call_kind_edge_bit(kind), count);
}

/* An MFA or apply whose argument list is not a literal (arity -1) may reach
 * any arity: each function of that name the module defines. */
static void call_resolve_any_arity(struct kg_graph *g, struct pair_map *edge_index,
                                   struct pair_map *call_index, const struct raw_call *rc,
                                   int to_module)
{
	const struct kg_module *m = kg_module_at(g, to_module);
	for (size_t i = 0; i < m->functions.len; i++) {
		int fi = GI_VEC_AT(&m->functions, int, i);
		const struct kg_function *f = kg_function_at(g, fi);
		if (f->defined && strcmp(f->name, rc->function) == 0)
			call_put(g, edge_index, call_index, rc->fn, to_module, fi, rc->kind,
			         rc->count);
	}
}

static void call_resolve(struct kg_graph *g, struct pair_map *edge_index,
                         struct pair_map *call_index, const struct raw_call *rc)
{
	if (rc->kind == FACTS_CALL_DYNAMIC || rc->kind == FACTS_CALL_INJECT ||
	    rc->kind == FACTS_CALL_INJECT_DEF || rc->kind == FACTS_CALL_INJECT_MACRO ||
	    rc->kind == FACTS_CALL_INJECT_QUOTE || !rc->function)
		return;
	int from_module = kg_function_at(g, rc->fn)->module;
	if (rc->kind == FACTS_CALL_USE) {
		/* `use M, :which` calls M.which/0 when M defines it */
		int to = rc->module ? kg_graph_module_find(g, rc->module) : -1;
		int fi = to >= 0 ? kg_graph_function_find(g, to, rc->function, 0) : -1;
		if (fi >= 0 && kg_function_at(g, fi)->defined)
			call_put(g, edge_index, call_index, rc->fn, to, fi, rc->kind, rc->count);
		return;
	}
	if (rc->arity < 0) {
		if (kg_call_kind_is_dispatch(rc->kind) && rc->module) {
			int to = kg_graph_module_find(g, rc->module);
			if (to >= 0)
				call_resolve_any_arity(g, edge_index, call_index, rc, to);
		}
		return;
	}
	int to_module = rc->module ? module_get_or_external(g, rc->module) : from_module;
	int to_fn = kg_graph_function_find(g, to_module, rc->function, rc->arity);
	if (rc->fill && to_fn >= 0 && pair_map_get(call_index, rc->fn, to_fn) >= 0)
		return; /* the source has it, with its own count */
	if (to_module == from_module && (to_fn < 0 || !kg_function_at(g, to_fn)->defined)) {
		to_fn = resolve_imported(g, from_module, rc->function, rc->arity, &to_module);
		if (to_fn < 0)
			return; /* Kernel, a macro-generated function, or unknown */
	}
	if (to_fn < 0) {
		to_fn = function_new(g, to_module, rc->function, rc->arity);
		kg_function_at(g, to_fn)->is_public = true;
	}
	size_t before = g->calls.len;
	call_put(g, edge_index, call_index, rc->fn, to_module, to_fn, rc->kind, rc->count);
	if (rc->fill && g->calls.len > before)
		kg_call_at(g, (int)before)->origin = FACTS_FROM_BEAM;
}

/* ---- use injection ------------------------------------------------------- */

/* How deep `use` inside an injected quote is followed (a `__using__` that
 * uses another project module's `__using__`...). */
#define KG_INJECT_MAX_DEPTH 4

/* The injections recorded on each function (FACTS_CALL_INJECT and
 * FACTS_CALL_INJECT_DEF raw calls), as linked lists over raw_calls. */
struct injections {
	int *first;   /* by function index: first raw call, or -1 */
	int *next;    /* by raw call index */
	size_t count; /* functions covered by `first` */
};

/* The function `name`/`arity` of module `module` that an `unquote(name(...))`
 * splices in (any arity of that name when the exact one is not defined:
 * default arguments), or -1. */
static int splice_find(const struct kg_graph *g, int module, const char *name, int arity)
{
	int fi = kg_graph_function_find(g, module, name, arity);
	if (fi >= 0 && kg_function_at(g, fi)->defined)
		return fi;
	const struct kg_module *m = kg_module_at(g, module);
	for (size_t i = 0; i < m->functions.len; i++) {
		int k = GI_VEC_AT(&m->functions, int, i);
		const struct kg_function *f = kg_function_at(g, k);
		if (f->defined && strcmp(f->name, name) == 0)
			return k;
	}
	return -1;
}

static void inject_apply(struct kg_graph *g, const struct injections *inj, int user, int fn,
                         int depth);

/* `@before_compile M` reaching module `user`: what the quotes of a project
 * M's `__before_compile__/1` inject is applied to `user` as a `use`'s is;
 * a project M without a readable `__before_compile__/1` makes `user`
 * opaque (it may define anything). */
static void before_compile_apply(struct kg_graph *g, const struct injections *inj, int user,
                                 const char *module, int depth)
{
	int m = kg_graph_module_find(g, module);
	if (m < 0 || !kg_module_at(g, m)->project)
		return;
	int fn = kg_graph_function_find(g, m, "__before_compile__", 1);
	if (fn < 0 || (size_t)fn >= inj->count || inj->first[fn] < 0) {
		kg_module_at(g, user)->inject_opaque = true;
		return;
	}
	if (m != user)
		inject_apply(g, inj, user, fn, depth);
}

/* The FACTS_MODULE_BODY function of module `module`, made when the module
 * has none yet (its body made no call the reader saw). */
static int body_function_get(struct kg_graph *g, int module)
{
	int fi = kg_graph_function_find(g, module, FACTS_MODULE_BODY, 0);
	if (fi >= 0)
		return fi;
	const struct kg_module *m = kg_module_at(g, module);
	struct kg_function f = {
	    .name = FACTS_MODULE_BODY,
	    .kind = FACTS_DEF,
	    .line_start = m->line_start,
	    .line_end = m->line_end,
	    .cyclomatic = 1,
	    .generated_by = "module body",
	};
	return kg_graph_function_add(g, module, &f);
}

/* Applies to module `user` what the quotes of function `fn` (of module
 * `giver`) inject: imports, requires and uses become references of `user`
 * (a project module's `__using__` is followed in turn), @before_compile and
 * @after_compile calls from `user`'s body, and public defs functions of
 * `user` generated by "use Giver" unless it defines them itself. */
static void inject_apply(struct kg_graph *g, const struct injections *inj, int user, int fn,
                         int depth)
{
	/* indexes only: adding functions below moves the vectors */
	int giver_module = kg_function_at(g, fn)->module;
	const char *giver = kg_module_at(g, giver_module)->name;
	for (int i = inj->first[fn]; i >= 0; i = inj->next[i]) {
		struct raw_call rc = GI_VEC_AT(&g->raw_calls, struct raw_call, (size_t)i);
		if (rc.kind == FACTS_CALL_INJECT_DEF || rc.kind == FACTS_CALL_INJECT_MACRO) {
			if (kg_graph_function_find(g, user, rc.function, rc.arity) >= 0)
				continue;
			char by[600];
			snprintf(by, sizeof(by), "use %s", giver);
			const struct kg_module *um = kg_module_at(g, user);
			struct kg_function f = {
			    .name = rc.function,
			    .arity = rc.arity,
			    .kind = rc.kind == FACTS_CALL_INJECT_MACRO ? FACTS_DEFMACRO : FACTS_DEF,
			    .is_public = true,
			    .line_start = um->line_start,
			    .line_end = um->line_start,
			    .cyclomatic = 1,
			    .generated_by = by,
			};
			kg_graph_function_add(g, user, &f);
			continue;
		}
		if (rc.kind == FACTS_CALL_INJECT_QUOTE) {
			int spliced = rc.function && depth < KG_INJECT_MAX_DEPTH
			                  ? splice_find(g, giver_module, rc.function, rc.arity)
			                  : -1;
			if (spliced < 0 || (size_t)spliced >= inj->count)
				kg_module_at(g, user)->inject_opaque = true;
			else if (spliced != fn && inj->first[spliced] >= 0)
				inject_apply(g, inj, user, spliced, depth + 1);
			continue;
		}
		if (!rc.module)
			continue;
		if (strcmp(rc.function, "before_compile") == 0 ||
		    strcmp(rc.function, "after_compile") == 0) {
			bool before = rc.function[0] == 'b';
			kg_graph_call_add(
			    g, body_function_get(g, user), FACTS_CALL_REMOTE, rc.module,
			    before ? "__before_compile__" : "__after_compile__", before ? 1 : 2, 1);
			if (before && depth < KG_INJECT_MAX_DEPTH)
				before_compile_apply(g, inj, user, rc.module, depth + 1);
			continue;
		}
		if (strcmp(rc.function, "behaviour") == 0) {
			if (strcmp(rc.module, kg_module_at(g, user)->name) != 0)
				kg_graph_ref_add(g, user, rc.module, 1u << FACTS_REF_BEHAVIOUR, 1);
			continue;
		}
		enum facts_ref_kind kind = rc.function[0] == 'i'   ? FACTS_REF_IMPORT
		                           : rc.function[0] == 'r' ? FACTS_REF_REQUIRE
		                                                   : FACTS_REF_USE;
		kg_graph_ref_add(g, user, rc.module, 1u << kind, 1);
		if (kind != FACTS_REF_USE || depth >= KG_INJECT_MAX_DEPTH)
			continue;
		int used = kg_graph_module_find(g, rc.module);
		int using_fn = used >= 0 ? kg_graph_function_find(g, used, "__using__", 1) : -1;
		if (using_fn >= 0 && inj->first[using_fn] >= 0 && used != user)
			inject_apply(g, inj, user, using_fn, depth + 1);
	}
}

/* `use M` of a project module M whose `__using__/1` (or, for `use M,
 * :which`, M.which/0) holds quotes the reader read: what they inject is
 * applied to the using module (docs/EXTRACTION.md, "use injection"). One
 * level of literal quote bodies, generic: nothing here names a library. */
static void injections_resolve(struct kg_graph *g)
{
	size_t calls = g->raw_calls.len, fns = g->functions.len;
	struct injections inj;
	inj.first = gi_malloc(sizeof(int) * (fns + 1));
	inj.next = gi_malloc(sizeof(int) * (calls + 1));
	inj.count = fns;
	for (size_t i = 0; i < fns; i++)
		inj.first[i] = -1;
	for (size_t i = calls; i-- > 0;) {
		const struct raw_call *rc = gi_vec_get(&g->raw_calls, i);
		inj.next[i] = -1;
		if (rc->kind != FACTS_CALL_INJECT && rc->kind != FACTS_CALL_INJECT_DEF &&
		    rc->kind != FACTS_CALL_INJECT_MACRO && rc->kind != FACTS_CALL_INJECT_QUOTE)
			continue;
		inj.next[i] = inj.first[rc->fn];
		inj.first[rc->fn] = (int)i;
	}
	/* Functions added while applying (generated defs, body functions)
	 * have no injections: `first` covers the functions that existed. */
	size_t refs = g->raw_refs.len;
	for (size_t i = 0; i < refs; i++) {
		struct raw_ref r = GI_VEC_AT(&g->raw_refs, struct raw_ref, i);
		if (!(r.kinds & (1u << FACTS_REF_USE)) || !kg_module_at(g, r.module)->project)
			continue;
		int giver = kg_graph_module_find(g, r.target);
		int fn = giver >= 0 ? kg_graph_function_find(g, giver, "__using__", 1) : -1;
		if (fn < 0 || (size_t)fn >= fns || giver == r.module)
			continue;
		if (inj.first[fn] < 0) {
			/* a __using__ whose code the reader could not follow */
			kg_module_at(g, r.module)->inject_opaque = true;
			continue;
		}
		kg_module_at(g, giver)->using_read = true;
		inject_apply(g, &inj, r.module, fn, 0);
	}
	/* `@before_compile M` written in a module body */
	for (size_t i = 0; i < calls; i++) {
		struct raw_call rc = GI_VEC_AT(&g->raw_calls, struct raw_call, i);
		if (rc.kind != FACTS_CALL_REMOTE || !rc.module || !rc.function || rc.arity != 1 ||
		    strcmp(rc.function, "__before_compile__") != 0 ||
		    strcmp(kg_function_at(g, rc.fn)->name, FACTS_MODULE_BODY) != 0)
			continue;
		before_compile_apply(g, &inj, kg_function_at(g, rc.fn)->module, rc.module, 0);
	}
	for (size_t i = 0; i < calls; i++) {
		struct raw_call rc = GI_VEC_AT(&g->raw_calls, struct raw_call, i);
		if (rc.kind != FACTS_CALL_USE || !rc.module)
			continue;
		int giver = kg_graph_module_find(g, rc.module);
		int fn = giver >= 0 ? kg_graph_function_find(g, giver, rc.function, 0) : -1;
		int user = kg_function_at(g, rc.fn)->module;
		if (fn >= 0 && (size_t)fn < fns && inj.first[fn] >= 0 && giver != user)
			inject_apply(g, &inj, user, fn, 0);
	}
	gi_free(inj.first);
	gi_free(inj.next);
}

/* ---- dispatch ------------------------------------------------------------ */

/* Functions that OTP and Elixir call on a module handed to them as a value:
 * a supervisor's child (child_spec/1, then the default start, start_link/0
 * or /1) and `raise Module` (exception/1, message/1). */
static const char *const value_entry_points[] = {
    "child_spec/1", "start_link/0", "start_link/1", "exception/1", "message/1", NULL,
};

static bool name_arity_is(const struct kg_function *f, const char *na)
{
	size_t n = strlen(f->name);
	char want[16];
	snprintf(want, sizeof(want), "/%d", f->arity);
	return strncmp(na, f->name, n) == 0 && strcmp(na + n, want) == 0;
}

static bool name_arity_in(const struct gi_vec *list, const char *name_arity);

/* A call to a function of a project protocol reaches the same function of
 * each of its implementations (kind impl); the implementations of a
 * protocol defined outside the project are reached through it whenever data
 * of their type flows into it (reached |= impl). */
static void dispatch_impls(struct kg_graph *g, struct pair_map *edge_index,
                           struct pair_map *call_index)
{
	int n = (int)g->modules.len;
	int *first = gi_malloc(sizeof(int) * (size_t)(n + 1));
	int *next = gi_malloc(sizeof(int) * (size_t)(n + 1));
	for (int i = 0; i < n; i++)
		first[i] = next[i] = -1;
	for (int i = 0; i < n; i++) {
		struct kg_module *m = kg_module_at(g, i);
		if (!m->project || m->kind != FACTS_IMPL || !m->protocol)
			continue;
		int p = kg_graph_module_find(g, m->protocol);
		if (p < 0 || !kg_module_at(g, p)->project) {
			for (size_t k = 0; k < m->functions.len; k++) {
				struct kg_function *f =
				    kg_function_at(g, GI_VEC_AT(&m->functions, int, k));
				if (f->is_public)
					f->reached |= 1u << FACTS_REF_IMPL;
			}
			continue;
		}
		next[i] = first[p];
		first[p] = i;
	}
	size_t calls = g->calls.len;
	for (size_t i = 0; i < calls; i++) {
		struct kg_call c = *kg_call_at(g, (int)i);
		const struct kg_function *target = kg_function_at(g, c.to_fn);
		for (int impl = first[c.to_module]; impl >= 0; impl = next[impl]) {
			int fi = kg_graph_function_find(g, impl, target->name, target->arity);
			if (fi >= 0 && kg_function_at(g, fi)->defined)
				call_put(g, edge_index, call_index, c.from_fn, impl, fi,
				         FACTS_CALL_IMPL, c.count);
		}
	}
	gi_free(first);
	gi_free(next);
}

/* A module that declares a behaviour (@behaviour B, use B) is reached
 * through it: its functions that implement B's callbacks (B's @callback
 * list when B is in the project, the known OTP/Elixir callbacks otherwise)
 * get reached |= callback, and a project behaviour gets an edge of kind
 * callback to the module. Modules used as values get their entry points
 * reached (value_entry_points). */
static void dispatch_callbacks_and_values(struct kg_graph *g, struct pair_map *edge_index)
{
	unsigned behaviourish = (1u << FACTS_REF_BEHAVIOUR) | (1u << FACTS_REF_USE);
	size_t edges = g->edges.len;
	for (size_t i = 0; i < edges; i++) {
		struct kg_edge e = *kg_edge_at(g, (int)i);
		struct kg_module *from = kg_module_at(g, e.from), *to = kg_module_at(g, e.to);
		if ((e.kinds & behaviourish) && from->project) {
			bool reached = false;
			for (size_t k = 0; k < from->functions.len; k++) {
				struct kg_function *f =
				    kg_function_at(g, GI_VEC_AT(&from->functions, int, k));
				char na[512];
				snprintf(na, sizeof(na), "%s/%d", f->name, f->arity);
				bool cb = to->project ? name_arity_in(&to->callbacks, na)
				                      : name_arity_in_known(na);
				if (cb && f->defined) {
					f->reached |= 1u << FACTS_REF_CALLBACK;
					reached = true;
				}
			}
			if (reached && to->project)
				edge_bump(g, edge_index, e.to, e.from, 1u << FACTS_REF_CALLBACK, 1);
		}
		if ((e.kinds & (1u << FACTS_REF_USE)) && to->project && from->project) {
			/* `use M` calls M.__using__/1 at compile time */
			int fi = kg_graph_function_find(g, e.to, "__using__", 1);
			if (fi >= 0 && kg_function_at(g, fi)->defined)
				kg_function_at(g, fi)->reached |= 1u << FACTS_REF_USE;
		}
		if ((e.kinds & (1u << FACTS_REF_VALUE)) && to->project) {
			for (size_t k = 0; k < to->functions.len; k++) {
				struct kg_function *f =
				    kg_function_at(g, GI_VEC_AT(&to->functions, int, k));
				for (const char *const *v = value_entry_points; *v; v++)
					if (f->defined && name_arity_is(f, *v))
						f->reached |= 1u << FACTS_REF_VALUE;
			}
		}
	}
}

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
		if (n == 4 && strncmp(seg, "test", 4) == 0 &&
		    (!lib_above || gi_str_ends_with(path, ".exs")))
			return true;
		if (n == 3 && strncmp(seg, "lib", 3) == 0)
			lib_above = true;
		seg = slash + 1;
	}
	return false;
}

bool kg_path_is_test(const char *path)
{
	return kg_path_is_test_in(path, NULL);
}

static void module_counts(struct kg_graph *g, struct kg_module *m)
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

static void module_degrees(struct kg_graph *g, struct kg_module *m)
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

static void pairs_compute(struct kg_graph *g)
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
static void pagerank_compute(struct kg_graph *g)
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
static void scc_compute(struct kg_graph *g)
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

static void layers_compute(struct kg_graph *g)
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

/* A module with ExUnit tests (`test "..."` functions, or the __ex_unit__
 * functions `use ExUnit.Case` generates) is test code wherever its file is
 * (the .exs files of Ecto's integration_test/cases, shared by its adapters'
 * suites). */
static void tests_by_content(struct kg_graph *g)
{
	for (size_t i = 0; i < g->modules.len; i++) {
		struct kg_module *m = kg_module_at(g, (int)i);
		if (!m->project || m->test)
			continue;
		for (size_t k = 0; k < m->functions.len && !m->test; k++) {
			const struct kg_function *f =
			    kg_function_at(g, GI_VEC_AT(&m->functions, int, k));
			m->test = strncmp(f->name, "test ", 5) == 0 ||
			          strcmp(f->name, "__ex_unit__") == 0;
		}
	}
}

/* See kg_graph.library. */
static bool library_is(const struct kg_graph *g)
{
	bool root_mix = false;
	for (size_t i = 0; i < g->modules.len; i++) {
		const struct kg_module *m = kg_module_at(g, (int)i);
		if (!m->project || !m->file ||
		    (strcmp(m->file, "mix.exs") != 0 && !gi_str_ends_with(m->file, "/mix.exs")))
			continue;
		root_mix |= strcmp(m->file, "mix.exs") == 0;
		for (size_t k = 0; k < m->functions.len; k++)
			if (strcmp(kg_function_at(g, GI_VEC_AT(&m->functions, int, k))->name,
			           "package") == 0)
				return true;
	}
	return !root_mix;
}

void kg_graph_finish(struct kg_graph *g)
{
	if (g->finished)
		return;
	g->finished = true;
	struct pair_map edge_index = {0}, call_index = {0};
	tests_by_content(g);
	injections_resolve(g);
	/* What the source says first; then what only the object code says. */
	for (int fill = 0; fill < 2; fill++)
		for (size_t i = 0; i < g->raw_refs.len; i++) {
			struct raw_ref *r = gi_vec_get(&g->raw_refs, i);
			if (r->fill != (fill == 1))
				continue;
			int to = module_get_or_external(g, r->target);
			int existing = r->fill ? pair_map_get(&edge_index, r->module, to) : -1;
			if (existing >= 0)
				kg_edge_at(g, existing)->kinds |= r->kinds;
			else
				edge_bump(g, &edge_index, r->module, to, r->kinds, r->count);
		}
	for (int fill = 0; fill < 2; fill++)
		for (size_t i = 0; i < g->raw_calls.len; i++) {
			const struct raw_call *rc = gi_vec_get(&g->raw_calls, i);
			if (rc->fill == (fill == 1))
				call_resolve(g, &edge_index, &call_index, rc);
		}
	g->library = library_is(g);
	for (size_t i = 0; i < g->raw_calls.len; i++) {
		const struct raw_call *rc = gi_vec_get(&g->raw_calls, i);
		if (rc->kind != FACTS_CALL_DYNAMIC || rc->module || !rc->function ||
		    !kg_module_is_core(kg_module_at(g, kg_function_at(g, rc->fn)->module)))
			continue;
		char key[600];
		snprintf(key, sizeof(key), "%s/%d", rc->function, rc->arity);
		gi_map_put(&g->dynamic_names, key, (void *)1);
	}
	dispatch_impls(g, &edge_index, &call_index);
	dispatch_callbacks_and_values(g, &edge_index);
	pair_map_destroy(&edge_index);
	pair_map_destroy(&call_index);
	gi_vec_destroy(&g->raw_refs);
	gi_vec_destroy(&g->raw_calls);
	for (size_t i = 0; i < g->calls.len; i++) {
		struct kg_call *c = kg_call_at(g, (int)i);
		int idx = (int)i;
		gi_vec_push(&kg_function_at(g, c->from_fn)->callees, &idx);
		gi_vec_push(&kg_function_at(g, c->to_fn)->callers, &idx);
	}
	for (size_t i = 0; i < g->modules.len; i++) {
		struct kg_module *m = kg_module_at(g, (int)i);
		module_counts(g, m);
		module_degrees(g, m);
	}
	pairs_compute(g);
	for (size_t i = 0; i < g->modules.len; i++) {
		struct kg_module *m = kg_module_at(g, (int)i);
		int functions = m->public_count + m->private_count;
		m->hub = kg_module_is_core(m) && m->in_degree >= KG_HUB_IN_DEGREE;
		m->heat =
		    kg_heat_score(m->in_degree, m->complexity_total, m->has_tests, m->max_coupling);
		m->change_risk = kg_change_risk(m->complexity_total, m->ce, m->max_coupling,
		                                m->public_count, functions, m->ca);
		m->god_score = functions + 2 * m->complexity_total + 3 * m->in_degree;
	}
	pagerank_compute(g);
	scc_compute(g);
	layers_compute(g);
}

/* ---- dead code ----------------------------------------------------------- */

static bool name_arity_in(const struct gi_vec *list, const char *name_arity)
{
	for (size_t i = 0; i < list->len; i++)
		if (strcmp(GI_VEC_AT(list, const char *, i), name_arity) == 0)
			return true;
	return false;
}

/* OTP protocols a module implements by defining functions, with no
 * behaviour to declare: a name registry for `{:via, M, name}` (:global's
 * four functions), and a special process that :sys drives (proc_lib). A
 * module that defines the first two of a set implements it; the rest of
 * the set are its callbacks too. */
static const char *const otp_protocols[][7] = {
    {"register_name/2", "whereis_name/1", "unregister_name/1", "send/2", NULL},
    {"system_continue/3", "system_terminate/4", "system_code_change/4", "system_get_state/1",
     "system_replace_state/2", "format_status/2", NULL},
};

static bool module_defines(const struct kg_graph *g, const struct kg_module *m, const char *na)
{
	for (size_t i = 0; i < m->functions.len; i++) {
		const struct kg_function *f = kg_function_at(g, GI_VEC_AT(&m->functions, int, i));
		if (f->defined && name_arity_is(f, na))
			return true;
	}
	return false;
}

/* True when `f` belongs to an OTP protocol its module implements. */
static bool otp_protocol_callback(const struct kg_graph *g, const struct kg_function *f)
{
	const struct kg_module *m = kg_module_at(g, f->module);
	for (size_t p = 0; p < sizeof(otp_protocols) / sizeof(otp_protocols[0]); p++) {
		bool member = false;
		for (size_t k = 0; otp_protocols[p][k] && !member; k++)
			member = name_arity_is(f, otp_protocols[p][k]);
		if (member && module_defines(g, m, otp_protocols[p][0]) &&
		    module_defines(g, m, otp_protocols[p][1]))
			return true;
	}
	return false;
}

/* True when module `m` is a `defexception` (its generated functions say
 * so): it declares @behaviour Exception. */
static bool module_is_exception(const struct kg_graph *g, const struct kg_module *m)
{
	for (size_t i = 0; i < m->functions.len; i++) {
		const struct kg_function *f = kg_function_at(g, GI_VEC_AT(&m->functions, int, i));
		if (f->generated_by && strcmp(f->generated_by, "defexception") == 0)
			return true;
	}
	return false;
}

static bool function_is_callback(const struct kg_graph *g, const struct kg_function *f)
{
	const struct kg_module *m = kg_module_at(g, f->module);
	if (f->has_impl || m->kind == FACTS_IMPL || otp_protocol_callback(g, f))
		return true;
	if ((name_arity_is(f, "exception/1") || name_arity_is(f, "message/1") ||
	     name_arity_is(f, "blame/2")) &&
	    module_is_exception(g, m))
		return true;
	char na[512];
	snprintf(na, sizeof(na), "%s/%d", f->name, f->arity);
	unsigned behaviourish = (1u << FACTS_REF_BEHAVIOUR) | (1u << FACTS_REF_USE);
	for (size_t i = 0; i < m->out.len; i++) {
		const struct kg_edge *e = kg_edge_at(g, GI_VEC_AT(&m->out, int, i));
		if (!(e->kinds & behaviourish))
			continue;
		const struct kg_module *b = kg_module_at(g, e->to);
		if (b->project && name_arity_in(&b->callbacks, na))
			return true;
		if (!b->project)
			if (name_arity_in_known(na))
				return true;
	}
	return false;
}

unsigned kg_function_dispatch_of(const struct kg_graph *g, int fn)
{
	const struct kg_function *f = kg_function_at(g, fn);
	unsigned by = f->reached;
	for (size_t i = 0; i < f->callers.len; i++) {
		const struct kg_call *c = kg_call_at(g, GI_VEC_AT(&f->callers, int, i));
		const struct kg_module *cm = kg_module_at(g, kg_function_at(g, c->from_fn)->module);
		if (c->from_fn != fn && kg_call_kind_is_dispatch(c->kind) && kg_module_is_core(cm))
			by |= kg_call_kind_edge_bit(c->kind);
	}
	return by;
}

enum kg_dead_reason kg_function_dead_reason(const struct kg_graph *g, int fn)
{
	return kg_function_dead_reason_opts(g, fn, false);
}

/* Hooks the compiler calls on a module that names it in an attribute
 * (@before_compile, @after_compile, @on_definition, @after_verify) or that
 * `@derive`s a protocol (__deriving__/3). */
static const char *const compiler_hooks[] = {
    "__before_compile__/1", "__after_compile__/2", "__on_definition__/6",
    "__after_verify__/1",   "__deriving__/3",      NULL,
};

const char *kg_function_api_reason(const struct kg_graph *g, int fn)
{
	const struct kg_function *f = kg_function_at(g, fn);
	const struct kg_module *m = kg_module_at(g, f->module);
	if (!f->is_public || !f->defined)
		return NULL;
	if (strcmp(f->name, "__using__") == 0)
		return "using";
	for (size_t i = 0; compiler_hooks[i]; i++)
		if (name_arity_is(f, compiler_hooks[i]))
			return "compiler_hook";
	size_t n = strlen(f->name);
	if (n > 4 && strncmp(f->name, "__", 2) == 0 && strcmp(f->name + n - 2, "__") == 0)
		return "macro_support"; /* __name__: called by code macros emit */
	if (f->deprecated)
		return "deprecated"; /* kept for the library's users */
	if (f->doc_false || !g->library)
		return NULL;
	if (f->has_doc || (m->has_moduledoc && !m->moduledoc_false))
		return "documented";
	return NULL;
}

bool kg_function_reached_from_tests(const struct kg_graph *g, int fn)
{
	const struct kg_function *f = kg_function_at(g, fn);
	for (size_t i = 0; i < f->callers.len; i++) {
		const struct kg_call *c = kg_call_at(g, GI_VEC_AT(&f->callers, int, i));
		if (c->from_fn != fn &&
		    kg_module_at(g, kg_function_at(g, c->from_fn)->module)->test)
			return true;
	}
	return false;
}

/* True for the modules every module imports without saying so. */
static bool module_imported_implicitly(const struct kg_module *m)
{
	return strcmp(m->name, "Kernel") == 0 || strcmp(m->name, "Kernel.SpecialForms") == 0;
}

/* Whether core code reaches `fn` (a call of any kind but its own
 * recursion, or its `reached` bits; dispatch left out when `direct_only`);
 * sets *from_test when a test module calls it. */
static bool core_reaches(const struct kg_graph *g, int fn, bool direct_only, bool *from_test)
{
	const struct kg_function *f = kg_function_at(g, fn);
	if (f->reached & (direct_only ? ~FACTS_REF_DISPATCH_MASK : ~0u))
		return true;
	for (size_t i = 0; i < f->callers.len; i++) {
		const struct kg_call *c = kg_call_at(g, GI_VEC_AT(&f->callers, int, i));
		if (c->from_fn == fn || (direct_only && kg_call_kind_is_dispatch(c->kind)))
			continue;
		const struct kg_module *cm = kg_module_at(g, kg_function_at(g, c->from_fn)->module);
		if (kg_module_is_core(cm))
			return true;
		if (cm->test)
			*from_test = true;
	}
	return false;
}

/* Whether core code reaches another arity of the same definition as `fn`
 * (default arguments: `def f(a, b \\ 1)` is f/1 and f/2, one function
 * to its author). */
static bool sibling_arity_reached(const struct kg_graph *g, int fn, bool direct_only,
                                  bool *from_test)
{
	const struct kg_function *f = kg_function_at(g, fn);
	const struct kg_module *m = kg_module_at(g, f->module);
	for (size_t i = 0; i < m->functions.len; i++) {
		int k = GI_VEC_AT(&m->functions, int, i);
		const struct kg_function *s = kg_function_at(g, k);
		if (k == fn || !s->defined || s->line_start != f->line_start ||
		    strcmp(s->name, f->name) != 0)
			continue;
		if (!f->from_defaults && !s->from_defaults)
			continue;
		if (core_reaches(g, k, direct_only, from_test))
			return true;
	}
	return false;
}

/* Elixir's and OTP's modules whose `use` brings callbacks the graph knows
 * (known_callbacks): a `use` of them says nothing more. */
static const char *const known_users[] = {
    "GenServer",   "Supervisor",        "Agent",       "Task",
    "Application", "DynamicSupervisor", "ExUnit.Case", "ExUnit.CaseTemplate",
    "Mix.Task",    "Mix.Project",       "GenEvent",    NULL,
};

/* True when module `m` declares (@behaviour) a behaviour outside the
 * project, or `use`s a module outside the project that is not one of
 * Elixir's known ones (`use Phoenix.Tracker` from a project that does not
 * hold it): its callbacks are unknown, so any public function may be one. */
static bool declares_external_behaviour(const struct kg_graph *g, const struct kg_module *m)
{
	for (size_t i = 0; i < m->out.len; i++) {
		const struct kg_edge *e = kg_edge_at(g, GI_VEC_AT(&m->out, int, i));
		const struct kg_module *to = kg_module_at(g, e->to);
		if (to->project)
			continue;
		if (e->kinds & (1u << FACTS_REF_BEHAVIOUR))
			return true;
		if (!(e->kinds & (1u << FACTS_REF_USE)))
			continue;
		bool known = false;
		for (size_t k = 0; known_users[k] && !known; k++)
			known = strcmp(known_users[k], to->name) == 0;
		if (!known)
			return true;
	}
	return false;
}

enum kg_dead_reason kg_function_dead_reason_opts(const struct kg_graph *g, int fn, bool direct_only)
{
	const struct kg_function *f = kg_function_at(g, fn);
	const struct kg_module *m = kg_module_at(g, f->module);
	/* Generated functions are not the author's to delete. */
	if (!kg_module_is_core(m) || !f->defined || !f->is_public || f->generated_by)
		return KG_ALIVE;
	/* Kernel's local calls are dropped by the reader (docs/EXTRACTION.md):
	 * every module imports it, so its functions are reached. Mix calls
	 * the functions of a project's mix.exs (project/0, cli/0, ...). */
	if (module_imported_implicitly(m) || (m->file && gi_str_ends_with(m->file, "mix.exs")))
		return KG_ALIVE;
	bool from_test = false;
	if (core_reaches(g, fn, direct_only, &from_test) ||
	    sibling_arity_reached(g, fn, direct_only, &from_test))
		return KG_ALIVE;
	if (function_is_callback(g, f) || declares_external_behaviour(g, m))
		return KG_DEAD_CALLBACK;
	if (kg_function_api_reason(g, fn))
		return KG_PUBLIC_API;
	if (!direct_only && g->dynamic_names.len > 0) {
		char key[600];
		snprintf(key, sizeof(key), "%s/%d", f->name, f->arity);
		if (gi_map_get(&g->dynamic_names, key))
			return KG_DEAD_DYNAMIC;
	}
	return from_test ? KG_DEAD_TEST_ONLY : KG_DEAD_UNREFERENCED;
}

const char *kg_dead_reason_name(enum kg_dead_reason r)
{
	switch (r) {
	case KG_DEAD_CALLBACK:
		return "callback";
	case KG_DEAD_TEST_ONLY:
		return "test_only";
	case KG_DEAD_UNREFERENCED:
		return "unreferenced";
	case KG_PUBLIC_API:
		return "public_api";
	case KG_DEAD_DYNAMIC:
		return "dynamic";
	default:
		return "alive";
	}
}
