/*
 * graph_finish.c - kg_graph_finish (graph.h): the names of the knowledge
 * graph resolved once every fact is in (graph_int.h; docs/EXTRACTION.md):
 * raw calls to functions or modules (imports, any-arity matches), `use`
 * injection (what a project's __using__ quotes inject into the using
 * module), and dispatch (protocol implementations, behaviour callbacks,
 * modules used as values); then the metrics and topology of
 * graph_metrics.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/str.h"
#include "graph/graph.h"
#include "graph/graph_int.h"

/* ---- resolution ---------------------------------------------------------- */

static int module_get_or_external(struct kg_graph *g, const char *name)
{
	int idx = kg_graph_module_find(g, name);
	return idx >= 0 ? idx : graph_module_new(g, name, false);
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
		to_fn = graph_function_new(g, to_module, rc->function, rc->arity);
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
				bool cb = to->project ? graph_name_arity_in(&to->callbacks, na)
				                      : graph_name_arity_known(na);
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
					if (f->defined && graph_name_arity_is(f, *v))
						f->reached |= 1u << FACTS_REF_VALUE;
			}
		}
	}
}

/* ---- finish --------------------------------------------------------------- */

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
			m->test =
			    GI_STR_STARTS(f->name, "test ") || strcmp(f->name, "__ex_unit__") == 0;
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
		graph_module_counts(g, m);
		graph_module_degrees(g, m);
	}
	graph_pairs_compute(g);
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
	graph_pagerank_compute(g);
	graph_scc_compute(g);
	graph_layers_compute(g);
}
