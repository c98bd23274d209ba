/*
 * plan.c - boundaries and change plans (see assist.h, docs/ASSIST.md):
 * parse a boundaries document (layers of module patterns with the layers
 * each may depend on, and forbidden dependencies), check the current graph
 * against it (the query "check", `giulia check` in CI), and validate a
 * change plan (modules to add or modify, dependencies to introduce,
 * functions to move) for the cycles it would close, the layers it would
 * break, the hubs and red zones it touches and its combined blast radius.
 *
 * Edges are the graph's direct edges (kg_edge_is_direct) from core modules:
 * dispatch edges (a behaviour reaching its callbacks, an MFA tuple) add
 * reach, not dependencies. A plan only adds edges; moving a function adds
 * the edges its callers and callees imply and keeps the source's (the
 * answer is conservative: a move that would remove a dependency is not
 * credited). Every list of the input is capped (KG_PLAN_ITEMS_MAX) and
 * every name checked; the parsers never trust the input's shape.
 */
#include <fnmatch.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/str.h"
#include "graph/assist.h"
#include "graph/args.h"
#include "graph/search.h"

#define LAYER_NAME_MAX 100
#define VIOLATIONS_MAX 1000 /* listed; the count goes on */
#define CYCLES_MAX     100
#define BLAST_LIST_MAX 500

struct layer {
	char *name;
	char **patterns;
	size_t npatterns;
	int *may; /* layer indexes it may depend on */
	size_t nmay;
};

struct forbidden {
	char *from, *to, *reason;
};

struct kg_boundaries {
	struct layer *layers;
	size_t nlayers;
	struct forbidden *rules;
	size_t nrules;
	bool forbid_cycles;
};

bool kg_module_pattern_match(const char *pattern, const char *name)
{
	if (!strpbrk(pattern, "*?["))
		return strcmp(pattern, name) == 0;
	return fnmatch(pattern, name, 0) == 0;
}

void kg_boundaries_free(struct kg_boundaries *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nlayers; i++) {
		for (size_t k = 0; k < b->layers[i].npatterns; k++)
			gi_free(b->layers[i].patterns[k]);
		gi_free(b->layers[i].patterns);
		gi_free(b->layers[i].may);
		gi_free(b->layers[i].name);
	}
	gi_free(b->layers);
	for (size_t i = 0; i < b->nrules; i++) {
		gi_free(b->rules[i].from);
		gi_free(b->rules[i].to);
		gi_free(b->rules[i].reason);
	}
	gi_free(b->rules);
	gi_free(b);
}

static int fail(const char *what)
{
	kg_query_fail("boundaries: %s", what);
	return GI_EINVAL;
}

/* A pattern: a non-empty string of at most KG_NAME_MAX bytes. */
static const char *pattern_of(const json_t *v)
{
	const char *s = json_string_value(v);
	size_t n = s ? strlen(s) : 0;
	return n > 0 && n <= KG_NAME_MAX ? s : NULL;
}

static int layer_find(const struct kg_boundaries *b, const char *name)
{
	for (size_t i = 0; i < b->nlayers; i++)
		if (strcmp(b->layers[i].name, name) == 0)
			return (int)i;
	return -1;
}

static bool known_key(const char *key, const char *const *keys)
{
	if (key[0] == '$' || strcmp(key, "comment") == 0)
		return true;
	for (int i = 0; keys[i]; i++)
		if (strcmp(keys[i], key) == 0)
			return true;
	return false;
}

static int keys_check(const json_t *o, const char *const *keys, const char *where)
{
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)o, key, v)
	{
		if (!known_key(key, keys)) {
			kg_query_fail("%s: unknown key '%.100s'", where, key);
			return GI_EINVAL;
		}
	}
	return 0;
}

static int layers_parse(const json_t *a, struct kg_boundaries *b)
{
	static const char *const keys[] = {"name", "modules", "may_depend_on", NULL};
	if (!json_is_array(a))
		return fail("`layers` must be an array of {name, modules, may_depend_on}");
	if (json_array_size(a) > KG_BOUNDARY_LAYERS_MAX)
		return fail("too many layers (at most 256)");
	b->layers = gi_calloc(json_array_size(a) + 1, sizeof(struct layer));
	size_t i;
	json_t *l;
	json_array_foreach(a, i, l)
	{
		if (!json_is_object(l))
			return fail("each layer must be an object {name, modules, may_depend_on}");
		if (keys_check(l, keys, "boundaries: a layer"))
			return GI_EINVAL;
		const char *name = json_string_value(json_object_get(l, "name"));
		if (!name || !*name || strlen(name) > LAYER_NAME_MAX)
			return fail("each layer needs a `name` (1 to 100 bytes)");
		if (layer_find(b, name) >= 0) {
			kg_query_fail("boundaries: layer '%s' is defined twice", name);
			return GI_EINVAL;
		}
		const json_t *mods = json_object_get(l, "modules");
		if (!json_is_array(mods) || json_array_size(mods) == 0 ||
		    json_array_size(mods) > KG_BOUNDARY_RULES_MAX) {
			kg_query_fail("boundaries: layer '%s' needs `modules`, 1 to 1000 patterns",
			              name);
			return GI_EINVAL;
		}
		struct layer *ly = &b->layers[b->nlayers++];
		ly->name = gi_strdup(name);
		ly->patterns = gi_calloc(json_array_size(mods) + 1, sizeof(char *));
		size_t k;
		json_t *p;
		json_array_foreach(mods, k, p)
		{
			if (!pattern_of(p)) {
				kg_query_fail(
				    "boundaries: layer '%s': each module pattern must be a "
				    "string of 1 to 500 bytes",
				    name);
				return GI_EINVAL;
			}
			ly->patterns[ly->npatterns++] = gi_strdup(json_string_value(p));
		}
	}
	/* may_depend_on names layers, so it is read once all are known */
	json_array_foreach(a, i, l)
	{
		struct layer *ly = &b->layers[i];
		const json_t *may = json_object_get(l, "may_depend_on");
		if (!may)
			continue;
		if (!json_is_array(may) || json_array_size(may) > KG_BOUNDARY_LAYERS_MAX) {
			kg_query_fail("boundaries: layer '%s': `may_depend_on` must be an array of "
			              "layer names",
			              ly->name);
			return GI_EINVAL;
		}
		ly->may = gi_calloc(json_array_size(may) + 1, sizeof(int));
		size_t k;
		json_t *v;
		json_array_foreach(may, k, v)
		{
			const char *n = json_string_value(v);
			int li = n ? layer_find(b, n) : -1;
			if (li < 0) {
				kg_query_fail(
				    "boundaries: layer '%s' may depend on '%.100s', which is "
				    "not a layer",
				    ly->name, n ? n : "(not a string)");
				return GI_EINVAL;
			}
			if (li != (int)i)
				ly->may[ly->nmay++] = li;
		}
	}
	return 0;
}

/* A cycle among the layers' may_depend_on makes their order meaningless:
 * depth-first search with colours; the message names the cycle. */
static int layers_acyclic(const struct kg_boundaries *b)
{
	size_t n = b->nlayers;
	int *colour = gi_calloc(n + 1, sizeof(int)), *stack = gi_malloc(sizeof(int) * (n + 1));
	size_t *next = gi_calloc(n + 1, sizeof(size_t));
	int rc = 0;
	for (size_t root = 0; root < n && !rc; root++) {
		if (colour[root])
			continue;
		size_t depth = 0;
		stack[depth++] = (int)root;
		colour[root] = 1;
		while (depth && !rc) {
			int v = stack[depth - 1];
			const struct layer *ly = &b->layers[v];
			if (next[v] == ly->nmay) {
				colour[v] = 2;
				depth--;
				continue;
			}
			int w = ly->may[next[v]++];
			if (colour[w] == 1) {
				struct gi_buf msg;
				gi_buf_init(&msg, 0);
				size_t from = 0;
				while (stack[from] != w)
					from++;
				for (size_t k = from; k < depth && msg.len < 400; k++)
					gi_buf_printf(&msg, "%s -> ", b->layers[stack[k]].name);
				gi_buf_printf(&msg, "%s", b->layers[w].name);
				kg_query_fail(
				    "boundaries: the layers' may_depend_on form a cycle (%s): "
				    "layers must be ordered",
				    msg.data);
				gi_buf_destroy(&msg);
				rc = GI_EINVAL;
			} else if (colour[w] == 0) {
				colour[w] = 1;
				stack[depth++] = w;
			}
		}
	}
	gi_free(colour);
	gi_free(stack);
	gi_free(next);
	return rc;
}

static int rules_parse(const json_t *a, struct kg_boundaries *b)
{
	static const char *const keys[] = {"from", "to", "reason", NULL};
	if (!json_is_array(a) || json_array_size(a) > KG_BOUNDARY_RULES_MAX)
		return fail("`forbidden` must be an array of at most 1000 {from, to, reason}");
	b->rules = gi_calloc(json_array_size(a) + 1, sizeof(struct forbidden));
	size_t i;
	json_t *r;
	json_array_foreach(a, i, r)
	{
		if (!json_is_object(r) || keys_check(r, keys, "boundaries: a forbidden rule"))
			return json_is_object(r) ? GI_EINVAL
			                         : fail("each forbidden rule must be an object "
			                                "{from, to, reason}");
		const char *from = pattern_of(json_object_get(r, "from"));
		const char *to = pattern_of(json_object_get(r, "to"));
		const json_t *reason = json_object_get(r, "reason");
		if (!from || !to)
			return fail("each forbidden rule needs `from` and `to` module patterns");
		if (reason && (!json_is_string(reason) || strlen(json_string_value(reason)) > 500))
			return fail(
			    "a forbidden rule's `reason` must be a string of at most 500 bytes");
		struct forbidden *f = &b->rules[b->nrules++];
		f->from = gi_strdup(from);
		f->to = gi_strdup(to);
		f->reason = reason ? gi_strdup(json_string_value(reason)) : NULL;
	}
	return 0;
}

int kg_boundaries_parse(const json_t *doc, struct kg_boundaries **out)
{
	static const char *const keys[] = {"version", "layers", "forbidden", "forbid_cycles", NULL};
	*out = NULL;
	if (!json_is_object(doc))
		return fail(
		    "the document must be a JSON object {layers, forbidden, forbid_cycles}");
	if (keys_check(doc, keys, "boundaries"))
		return GI_EINVAL;
	const json_t *version = json_object_get(doc, "version");
	if (version && !(json_is_integer(version) && json_integer_value(version) == 1))
		return fail("`version` must be 1");
	const json_t *fc = json_object_get(doc, "forbid_cycles");
	if (fc && !json_is_boolean(fc))
		return fail("`forbid_cycles` must be true or false");
	struct kg_boundaries *b = gi_calloc(1, sizeof(*b));
	b->forbid_cycles = json_is_true(fc);
	int rc = 0;
	if (json_object_get(doc, "layers"))
		rc = layers_parse(json_object_get(doc, "layers"), b);
	if (!rc)
		rc = layers_acyclic(b);
	if (!rc && json_object_get(doc, "forbidden"))
		rc = rules_parse(json_object_get(doc, "forbidden"), b);
	if (!rc && b->nlayers == 0 && b->nrules == 0 && !b->forbid_cycles)
		rc = fail("nothing to check: give `layers`, `forbidden` or `forbid_cycles`");
	if (rc) {
		kg_boundaries_free(b);
		return rc;
	}
	*out = b;
	return 0;
}

/* ---- checking edges against the boundaries --------------------------------- */

static int layer_of(const struct kg_boundaries *b, const char *module)
{
	for (size_t i = 0; b && i < b->nlayers; i++)
		for (size_t k = 0; k < b->layers[i].npatterns; k++)
			if (kg_module_pattern_match(b->layers[i].patterns[k], module))
				return (int)i;
	return -1;
}

static bool layer_allows(const struct kg_boundaries *b, int from, int to)
{
	if (from < 0 || to < 0 || from == to)
		return true;
	for (size_t i = 0; i < b->layers[from].nmay; i++)
		if (b->layers[from].may[i] == to)
			return true;
	return false;
}

/* Where module `from` depends on `to`: its first function that calls it. */
static json_t *evidence(const struct kg_graph *g, int from, int to)
{
	const struct kg_module *m = kg_module_at(g, from);
	for (size_t i = 0; to >= 0 && i < m->functions.len; i++) {
		const struct kg_function *f = kg_function_at(g, GI_VEC_AT(&m->functions, int, i));
		for (size_t k = 0; k < f->callees.len; k++) {
			const struct kg_call *c = kg_call_at(g, GI_VEC_AT(&f->callees, int, k));
			if (c->to_module == to) {
				const struct kg_function *t = kg_function_at(g, c->to_fn);
				char fn[2 * KG_NAME_MAX], callee[2 * KG_NAME_MAX];
				snprintf(fn, sizeof(fn), "%s/%d", f->name, f->arity);
				snprintf(callee, sizeof(callee), "%s.%s/%d",
				         kg_module_at(g, to)->name, t->name, t->arity);
				return json_pack("{s:s?, s:i, s:s, s:s}", "file", m->file, "line",
				                 f->line_start, "function", fn, "calls", callee);
			}
		}
	}
	return json_pack("{s:s?, s:i}", "file", m->file, "line", m->line_start);
}

struct violations {
	json_t *list;
	int count, errors, warnings;
};

static void violation_add(struct violations *v, json_t *o, bool error)
{
	v->count++;
	if (error)
		v->errors++;
	else
		v->warnings++;
	json_object_set_new(o, "severity", json_string(error ? "error" : "warning"));
	if (json_array_size(v->list) < VIOLATIONS_MAX)
		json_array_append_new(v->list, o);
	else
		json_decref(o);
}

/* The boundary violations of one dependency from -> to (names; module
 * indexes of the graph for the evidence, -1 for modules a plan adds). */
static void edge_check(const struct kg_graph *g, const struct kg_boundaries *b, const char *from,
                       const char *to, int gfrom, int gto, json_t *kinds, struct violations *v)
{
	int lf = layer_of(b, from), lt = layer_of(b, to);
	if (!layer_allows(b, lf, lt)) {
		char msg[1400];
		snprintf(msg, sizeof(msg),
		         "%s (layer %s) depends on %s (layer %s), which %s may not", from,
		         b->layers[lf].name, to, b->layers[lt].name, b->layers[lf].name);
		json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "rule", "layer", "from",
		                      from, "to", to, "from_layer", b->layers[lf].name, "to_layer",
		                      b->layers[lt].name, "message", msg);
		if (kinds)
			json_object_set(o, "kinds", kinds);
		if (gfrom >= 0)
			json_object_set_new(o, "evidence", evidence(g, gfrom, gto));
		violation_add(v, o, true);
	}
	for (size_t i = 0; i < b->nrules; i++) {
		const struct forbidden *r = &b->rules[i];
		if (!kg_module_pattern_match(r->from, from) || !kg_module_pattern_match(r->to, to))
			continue;
		char msg[1800];
		snprintf(msg, sizeof(msg), "%s depends on %s: forbidden (%s -> %s)%s%s", from, to,
		         r->from, r->to, r->reason ? ": " : "", r->reason ? r->reason : "");
		json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s?, s:s}", "rule", "forbidden",
		                      "from", from, "to", to, "pattern_from", r->from, "pattern_to",
		                      r->to, "reason", r->reason, "message", msg);
		if (kinds)
			json_object_set(o, "kinds", kinds);
		if (gfrom >= 0)
			json_object_set_new(o, "evidence", evidence(g, gfrom, gto));
		violation_add(v, o, true);
	}
}

static json_t *kinds_json(unsigned kinds)
{
	json_t *a = json_array();
	for (int k = 0; k < FACTS_REF_KIND_COUNT; k++)
		if (kinds & (1u << k) && !(FACTS_REF_DISPATCH_MASK & (1u << k)))
			json_array_append_new(
			    a, json_string(facts_ref_kind_name((enum facts_ref_kind)k)));
	return a;
}

static json_t *cycle_members(const struct kg_graph *g, const struct kg_scc *c)
{
	json_t *mods = json_array();
	for (int k = 0; k < c->count; k++)
		json_array_append_new(mods,
		                      json_string(kg_module_at(g, GI_VEC_AT(&g->scc_members, int,
		                                                            (size_t)(c->first + k)))
		                                      ->name));
	return mods;
}

int kg_check(const struct kg_graph *g, const struct kg_boundaries *b, json_t *out)
{
	struct violations v = {json_array(), 0, 0, 0};
	int edges = 0;
	for (size_t i = 0; i < g->edges.len; i++) {
		const struct kg_edge *e = kg_edge_at(g, (int)i);
		const struct kg_module *from = kg_module_at(g, e->from),
		                       *to = kg_module_at(g, e->to);
		if (!kg_module_is_core(from) || to->test || !kg_edge_is_direct(e))
			continue;
		edges++;
		json_t *kinds = kinds_json(e->kinds);
		edge_check(g, b, from->name, to->name, e->from, e->to, kinds, &v);
		json_decref(kinds);
	}
	if (b->forbid_cycles)
		for (size_t i = 0; i < g->sccs.len; i++) {
			const struct kg_scc *c = &GI_VEC_AT(&g->sccs, struct kg_scc, i);
			if (c->count < 2)
				continue;
			char msg[200];
			snprintf(msg, sizeof(msg), "a dependency cycle of %d modules", c->count);
			violation_add(&v,
			              json_pack("{s:s, s:o, s:s}", "rule", "cycle", "modules",
			                        cycle_members(g, c), "message", msg),
			              true);
		}
	json_t *layers = json_array();
	int unassigned = 0;
	int *counts = gi_calloc(b->nlayers + 1, sizeof(int));
	for (size_t i = 0; i < g->modules.len; i++) {
		const struct kg_module *m = kg_module_at(g, (int)i);
		if (!kg_module_is_core(m))
			continue;
		int l = layer_of(b, m->name);
		if (l < 0)
			unassigned++;
		else
			counts[l]++;
	}
	for (size_t i = 0; i < b->nlayers; i++)
		json_array_append_new(layers, json_pack("{s:s, s:i}", "name", b->layers[i].name,
		                                        "modules", counts[i]));
	gi_free(counts);
	json_object_set_new(out, "ok", json_boolean(v.errors == 0));
	json_object_set_new(out, "violation_count", json_integer(v.count));
	json_object_set_new(out, "violations", v.list);
	json_object_set_new(out, "truncated", json_boolean(v.count > VIOLATIONS_MAX));
	json_object_set_new(out, "edges_checked", json_integer(edges));
	json_object_set_new(out, "layers", layers);
	json_object_set_new(out, "unassigned_modules", json_integer(unassigned));
	json_object_set_new(out, "forbidden_rules", json_integer((json_int_t)b->nrules));
	return 0;
}

/* ---- plans --------------------------------------------------------------------- */

/* The plan's graph: the core modules of `g` and the modules it adds, with
 * the direct core edges and the plan's new ones. */
struct plan_graph {
	const struct kg_graph *g;
	size_t n;            /* nodes: graph modules, then added ones */
	size_t ngraph;       /* modules of g */
	size_t cap;          /* nodes allocated: ngraph + the plan's add_modules */
	char **added;        /* names of added modules (n - ngraph) */
	struct gi_vec *out;  /* per node: int targets */
	struct gi_vec fresh; /* int pairs (from, to) of new edges */
	struct gi_map fresh_seen;
	struct gi_map added_index; /* name -> node + 1 */
};

static void pg_init(struct plan_graph *pg, const struct kg_graph *g, size_t cap_added)
{
	memset(pg, 0, sizeof(*pg));
	pg->g = g;
	pg->ngraph = g->modules.len;
	pg->n = pg->ngraph;
	pg->added = gi_calloc(cap_added + 1, sizeof(char *));
	pg->cap = pg->ngraph + cap_added;
	pg->out = gi_calloc(pg->cap + 1, sizeof(struct gi_vec));
	for (size_t i = 0; i < pg->cap; i++)
		gi_vec_init(&pg->out[i], sizeof(int));
	gi_vec_init(&pg->fresh, sizeof(int));
	gi_map_init(&pg->fresh_seen);
	gi_map_init(&pg->added_index);
	for (size_t i = 0; i < g->edges.len; i++) {
		const struct kg_edge *e = kg_edge_at(g, (int)i);
		if (kg_module_is_core(kg_module_at(g, e->from)) &&
		    kg_module_is_core(kg_module_at(g, e->to)) && kg_edge_is_direct(e))
			gi_vec_push(&pg->out[e->from], &e->to);
	}
}

static void pg_destroy(struct plan_graph *pg)
{
	for (size_t i = 0; i < pg->cap; i++)
		gi_vec_destroy(&pg->out[i]);
	gi_free(pg->out);
	for (size_t i = 0; i + pg->ngraph < pg->n; i++)
		gi_free(pg->added[i]);
	gi_free(pg->added);
	gi_vec_destroy(&pg->fresh);
	gi_map_destroy(&pg->fresh_seen);
	gi_map_destroy(&pg->added_index);
}

static const char *pg_name(const struct plan_graph *pg, int v)
{
	return (size_t)v < pg->ngraph ? kg_module_at(pg->g, v)->name
	                              : pg->added[(size_t)v - pg->ngraph];
}

/* The node of module `name`: a core module of the graph, a module the plan
 * adds, or (`external_ok`) any module the graph knows; -1 otherwise, -2
 * for a test or external module where a core one is needed. */
static int pg_find(const struct plan_graph *pg, const char *name, bool external_ok)
{
	int m = kg_graph_module_find(pg->g, name);
	if (m >= 0) {
		if (kg_module_is_core(kg_module_at(pg->g, m)) || external_ok)
			return m;
		return -2;
	}
	void *v = gi_map_get(&pg->added_index, name);
	return v ? (int)(intptr_t)v - 1 : -1;
}

static void pg_edge_add(struct plan_graph *pg, int from, int to)
{
	if (from == to)
		return;
	char key[48];
	snprintf(key, sizeof(key), "%d>%d", from, to);
	if (gi_map_get(&pg->fresh_seen, key))
		return;
	gi_map_put(&pg->fresh_seen, key, (void *)1);
	gi_vec_push(&pg->fresh, &from);
	gi_vec_push(&pg->fresh, &to);
	bool core_to = (size_t)to >= pg->ngraph || kg_module_is_core(kg_module_at(pg->g, to));
	if (core_to)
		gi_vec_push(&pg->out[from], &to);
}

static int plan_fail_module(const char *where, const char *name, int found)
{
	if (found == -2)
		kg_query_fail("plan: %s: %.300s is a test or outside module, not one of the "
		              "project's",
		              where, name);
	else
		kg_query_fail(
		    "plan: %s: unknown module %.300s (not in the project and not added by "
		    "the plan: list it under add_modules)",
		    where, name);
	return GI_EINVAL;
}

static const json_t *plan_list(const json_t *plan, const char *key, int *rc)
{
	const json_t *a = json_object_get(plan, key);
	if (!a)
		return NULL;
	if (!json_is_array(a)) {
		kg_query_fail("plan: `%s` must be an array", key);
		*rc = GI_EINVAL;
		return NULL;
	}
	if (json_array_size(a) > KG_PLAN_ITEMS_MAX) {
		kg_query_fail("plan: `%s` has %zu entries, more than %d", key, json_array_size(a),
		              KG_PLAN_ITEMS_MAX);
		*rc = GI_EINVAL;
		return NULL;
	}
	return a;
}

static const char *name_of(const json_t *v)
{
	const char *s = json_string_value(v);
	size_t n = s ? strlen(s) : 0;
	return n > 0 && n <= KG_NAME_MAX ? s : NULL;
}

/* Splits "Mod.fun/arity" into the graph's function index. */
static int function_of(const struct kg_graph *g, const char *text, int *out)
{
	const char *slash = strrchr(text, '/'), *dot = NULL;
	for (const char *c = text; slash && c < slash; c++)
		if (*c == '.')
			dot = c;
	char *end = NULL;
	long arity = slash ? strtol(slash + 1, &end, 10) : -1;
	if (!slash || !dot || !end || *end || end == slash + 1 || arity < 0 || arity > 255)
		return -1;
	char module[KG_NAME_MAX + 1], name[KG_NAME_MAX + 1];
	if ((size_t)(dot - text) > KG_NAME_MAX || (size_t)(slash - dot - 1) > KG_NAME_MAX)
		return -1;
	memcpy(module, text, (size_t)(dot - text));
	module[dot - text] = '\0';
	memcpy(name, dot + 1, (size_t)(slash - dot - 1));
	name[slash - dot - 1] = '\0';
	int m = kg_graph_module_find(g, module);
	int f = m >= 0 ? kg_graph_function_find(g, m, name, (int)arity) : -1;
	if (f < 0 || !kg_function_at(g, f)->defined || !kg_module_is_core(kg_module_at(g, m)))
		return -2;
	*out = f;
	return 0;
}

struct touched {
	json_t *list;
	bool *seen; /* per graph module */
};

static void touch(struct touched *t, const struct kg_graph *g, int m, const char *why)
{
	if (m < 0 || (size_t)m >= g->modules.len || t->seen[m])
		return;
	t->seen[m] = true;
	const struct kg_module *km = kg_module_at(g, m);
	json_array_append_new(
	    t->list, json_pack("{s:s, s:s, s:b, s:s, s:f, s:f, s:i}", "module", km->name, "why",
	                       why, "hub", km->hub, "zone", kg_heat_zone(km->heat), "heat",
	                       round(km->heat * 100) / 100, "change_risk",
	                       round(km->change_risk * 100) / 100, "in_degree", km->in_degree));
}

static int plan_build(const json_t *plan, struct plan_graph *pg, struct touched *t, json_t *clashes)
{
	const struct kg_graph *g = pg->g;
	int rc = 0;
	const json_t *adds = plan_list(plan, "add_modules", &rc);
	const json_t *mods = plan_list(plan, "modify_modules", &rc);
	const json_t *deps = plan_list(plan, "add_dependencies", &rc);
	const json_t *moves = plan_list(plan, "move_functions", &rc);
	if (rc)
		return rc;
	size_t i;
	json_t *v;
	json_array_foreach(adds, i, v)
	{
		static const char *const keys[] = {"name", "depends_on", NULL};
		const char *name =
		    json_is_object(v) ? name_of(json_object_get(v, "name")) : name_of(v);
		if (!name) {
			kg_query_fail("plan: add_modules[%zu] must be a module name or {name, "
			              "depends_on}",
			              i);
			return GI_EINVAL;
		}
		if (json_is_object(v) && keys_check(v, keys, "plan: add_modules"))
			return GI_EINVAL;
		if (kg_graph_module_find(g, name) >= 0 &&
		    kg_module_at(g, kg_graph_module_find(g, name))->project) {
			json_array_append_new(clashes,
			                      json_pack("{s:s, s:s}", "module", name, "message",
			                                "added, but it exists already"));
			continue;
		}
		if (gi_map_get(&pg->added_index, name))
			continue;
		pg->added[pg->n - pg->ngraph] = gi_strdup(name);
		gi_map_put(&pg->added_index, pg->added[pg->n - pg->ngraph],
		           (void *)(intptr_t)(pg->n + 1));
		pg->n++;
	}
	json_array_foreach(adds, i, v)
	{
		const json_t *on = json_object_get(v, "depends_on");
		if (!on)
			continue;
		int from = pg_find(pg, name_of(json_object_get(v, "name")), false);
		if (!json_is_array(on) || json_array_size(on) > KG_PLAN_ITEMS_MAX) {
			kg_query_fail("plan: add_modules[%zu].depends_on must be an array of names",
			              i);
			return GI_EINVAL;
		}
		size_t k;
		json_t *d;
		json_array_foreach(on, k, d)
		{
			const char *to = name_of(d);
			int ti = to ? pg_find(pg, to, true) : -1;
			if (ti < 0 || from < 0)
				return plan_fail_module("add_modules depends_on",
				                        to ? to : "(not a name)", ti);
			pg_edge_add(pg, from, ti);
		}
	}
	json_array_foreach(mods, i, v)
	{
		const char *name = name_of(v);
		int m = name ? pg_find(pg, name, false) : -1;
		if (m < 0)
			return plan_fail_module("modify_modules", name ? name : "(not a name)", m);
		touch(t, g, m, "modified");
	}
	json_array_foreach(deps, i, v)
	{
		static const char *const keys[] = {"from", "to", NULL};
		const char *from = name_of(json_object_get(v, "from"));
		const char *to = name_of(json_object_get(v, "to"));
		if (!json_is_object(v) || !from || !to) {
			kg_query_fail("plan: add_dependencies[%zu] must be {from, to}", i);
			return GI_EINVAL;
		}
		if (keys_check(v, keys, "plan: add_dependencies"))
			return GI_EINVAL;
		int fi = pg_find(pg, from, false), ti = pg_find(pg, to, true);
		if (fi < 0)
			return plan_fail_module("add_dependencies from", from, fi);
		if (ti < 0)
			return plan_fail_module("add_dependencies to", to, ti);
		pg_edge_add(pg, fi, ti);
		touch(t, g, fi, "new dependency");
	}
	json_array_foreach(moves, i, v)
	{
		static const char *const keys[] = {"function", "to", NULL};
		const char *fn = name_of(json_object_get(v, "function"));
		const char *to = name_of(json_object_get(v, "to"));
		if (!json_is_object(v) || !fn || !to) {
			kg_query_fail(
			    "plan: move_functions[%zu] must be {function: \"Mod.fun/arity\", "
			    "to}",
			    i);
			return GI_EINVAL;
		}
		if (keys_check(v, keys, "plan: move_functions"))
			return GI_EINVAL;
		int f = -1, frc = function_of(g, fn, &f);
		if (frc) {
			kg_query_fail("plan: move_functions: %.300s %s", fn,
			              frc == -1 ? "is not Mod.fun/arity"
			                        : "is not a function of the project");
			return GI_EINVAL;
		}
		int dest = pg_find(pg, to, false);
		if (dest < 0)
			return plan_fail_module("move_functions to", to, dest);
		const struct kg_function *kf = kg_function_at(g, f);
		if ((size_t)dest < pg->ngraph) {
			int other = kg_graph_function_find(g, dest, kf->name, kf->arity);
			if (other >= 0 && kg_function_at(g, other)->defined) {
				char msg[KG_NAME_MAX * 2 + 64];
				snprintf(msg, sizeof(msg), "%s already defines %s/%d", to, kf->name,
				         kf->arity);
				json_array_append_new(
				    clashes, json_pack("{s:s, s:s}", "module", to, "message", msg));
			}
		}
		touch(t, g, kf->module, "move source");
		touch(t, g, dest, "move destination");
		for (size_t k = 0; k < kf->callers.len; k++) {
			int cm = kg_function_at(
			             g, kg_call_at(g, GI_VEC_AT(&kf->callers, int, k))->from_fn)
			             ->module;
			if (kg_module_is_core(kg_module_at(g, cm)))
				pg_edge_add(pg, cm, dest);
		}
		for (size_t k = 0; k < kf->callees.len; k++) {
			int cm = kg_call_at(g, GI_VEC_AT(&kf->callees, int, k))->to_module;
			pg_edge_add(pg, dest, cm); /* its old module's functions too */
		}
	}
	return 0;
}

/* A path from `from` to `to` in the plan's graph (BFS), as names; NULL
 * when there is none. */
static json_t *pg_path(const struct plan_graph *pg, int from, int to, int *seen_buf, int *queue)
{
	for (size_t i = 0; i < pg->n; i++)
		seen_buf[i] = -2;
	size_t head = 0, tail = 0;
	queue[tail++] = from;
	seen_buf[from] = -1;
	while (head < tail) {
		int v = queue[head++];
		if (v == to)
			break;
		for (size_t i = 0; i < pg->out[v].len; i++) {
			int w = GI_VEC_AT(&pg->out[v], int, i);
			if (seen_buf[w] != -2)
				continue;
			seen_buf[w] = v;
			queue[tail++] = w;
		}
	}
	if (seen_buf[to] == -2)
		return NULL;
	json_t *rev = json_array();
	for (int v = to; v != -1; v = seen_buf[v])
		json_array_insert_new(rev, 0, json_string(pg_name(pg, v)));
	return rev;
}

/* Reports each new edge that closes a cycle; closes[k] is set for the
 * k-th new edge that does. */
static void plan_cycles(const struct plan_graph *pg, struct violations *v, bool *closes)
{
	const struct kg_graph *g = pg->g;
	int *seen = gi_malloc(sizeof(int) * (pg->n + 1)),
	    *queue = gi_malloc(sizeof(int) * (pg->n + 1));
	int found = 0;
	for (size_t i = 0; i + 1 < pg->fresh.len && found < CYCLES_MAX; i += 2) {
		int from = GI_VEC_AT(&pg->fresh, int, i), to = GI_VEC_AT(&pg->fresh, int, i + 1);
		bool core_to = (size_t)to >= pg->ngraph || kg_module_is_core(kg_module_at(g, to));
		if (!core_to)
			continue;
		/* already in one cycle: the edge closes no new one */
		if ((size_t)from < pg->ngraph && (size_t)to < pg->ngraph &&
		    kg_module_at(g, from)->scc >= 0 &&
		    kg_module_at(g, from)->scc == kg_module_at(g, to)->scc)
			continue;
		json_t *path = pg_path(pg, to, from, seen, queue);
		if (!path)
			continue;
		json_array_insert_new(path, 0, json_string(pg_name(pg, from)));
		closes[i / 2] = true;
		char msg[1400];
		snprintf(msg, sizeof(msg),
		         "the new dependency %s -> %s closes a cycle of %zu modules",
		         pg_name(pg, from), pg_name(pg, to), json_array_size(path) - 1);
		violation_add(v,
		              json_pack("{s:s, s:s, s:s, s:o, s:s}", "rule", "cycle", "from",
		                        pg_name(pg, from), "to", pg_name(pg, to), "path", path,
		                        "message", msg),
		              true);
		found++;
	}
	gi_free(seen);
	gi_free(queue);
}

/* A new dependency of a lower computed layer on a higher one (the graph's
 * topology: layer 0 depends on no project module). */
static void plan_layer_order(const struct plan_graph *pg, struct violations *v, const bool *closes)
{
	const struct kg_graph *g = pg->g;
	for (size_t i = 0; i + 1 < pg->fresh.len; i += 2) {
		int from = GI_VEC_AT(&pg->fresh, int, i), to = GI_VEC_AT(&pg->fresh, int, i + 1);
		if ((size_t)from >= pg->ngraph || (size_t)to >= pg->ngraph || closes[i / 2])
			continue;
		const struct kg_module *a = kg_module_at(g, from), *b = kg_module_at(g, to);
		if (!kg_module_is_core(b) || a->layer >= b->layer ||
		    (a->scc >= 0 && a->scc == b->scc))
			continue;
		char msg[1400];
		snprintf(msg, sizeof(msg),
		         "%s (layer %d) would depend on %s (layer %d), above it in the computed "
		         "layers",
		         a->name, a->layer, b->name, b->layer);
		violation_add(v,
		              json_pack("{s:s, s:s, s:s, s:i, s:i, s:s}", "rule", "layer_order",
		                        "from", a->name, "to", b->name, "from_layer", a->layer,
		                        "to_layer", b->layer, "message", msg),
		              false);
	}
}

static json_t *plan_blast(const struct kg_graph *g, const bool *touched, int depth)
{
	size_t n = g->modules.len;
	int *dist = gi_malloc(sizeof(int) * (n + 1)), *queue = gi_malloc(sizeof(int) * (n + 1));
	size_t head = 0, tail = 0;
	for (size_t i = 0; i < n; i++) {
		dist[i] = touched[i] ? 0 : -1;
		if (touched[i])
			queue[tail++] = (int)i;
	}
	while (head < tail) {
		int v = queue[head++];
		if (dist[v] >= depth)
			continue;
		const struct kg_module *m = kg_module_at(g, v);
		for (size_t i = 0; i < m->in.len; i++) {
			int w = kg_edge_at(g, GI_VEC_AT(&m->in, int, i))->from;
			if (dist[w] >= 0 || !kg_module_at(g, w)->project)
				continue;
			dist[w] = dist[v] + 1;
			queue[tail++] = w;
		}
	}
	json_t *mods = json_array(), *tests = json_array();
	int count = 0;
	for (size_t k = 0; k < tail; k++) {
		int m = queue[k];
		if (dist[m] == 0)
			continue;
		const struct kg_module *km = kg_module_at(g, m);
		count++;
		if (km->test)
			json_array_append_new(
			    tests, json_pack("{s:s, s:s?}", "module", km->name, "file", km->file));
		else if (json_array_size(mods) < BLAST_LIST_MAX)
			json_array_append_new(
			    mods, json_pack("{s:s, s:i}", "module", km->name, "depth", dist[m]));
	}
	gi_free(dist);
	gi_free(queue);
	return json_pack("{s:i, s:i, s:o, s:o}", "depth", depth, "count", count, "modules", mods,
	                 "tests", tests);
}

int kg_plan_validate(const struct kg_graph *g, const json_t *plan, const struct kg_boundaries *b,
                     int depth, json_t *out)
{
	static const char *const keys[] = {"add_modules", "modify_modules", "add_dependencies",
	                                   "move_functions", NULL};
	if (!json_is_object(plan)) {
		kg_query_fail("plan: the plan must be a JSON object {add_modules, modify_modules, "
		              "add_dependencies, move_functions}");
		return GI_EINVAL;
	}
	if (keys_check(plan, keys, "plan"))
		return GI_EINVAL;
	const json_t *adds = json_object_get(plan, "add_modules");
	size_t cap_added = json_is_array(adds) ? json_array_size(adds) : 0;
	if (cap_added > KG_PLAN_ITEMS_MAX)
		cap_added = 0; /* plan_list refuses it */
	struct plan_graph pg;
	pg_init(&pg, g, cap_added);
	struct touched t = {json_array(), gi_calloc(g->modules.len + 1, sizeof(bool))};
	json_t *clashes = json_array();
	int rc = plan_build(plan, &pg, &t, clashes);
	if (rc) {
		json_decref(t.list);
		json_decref(clashes);
		gi_free(t.seen);
		pg_destroy(&pg);
		return rc;
	}
	struct violations v = {json_array(), 0, 0, 0};
	bool *closes = gi_calloc(pg.fresh.len / 2 + 1, sizeof(bool));
	plan_cycles(&pg, &v, closes);
	plan_layer_order(&pg, &v, closes);
	gi_free(closes);
	if (b)
		for (size_t i = 0; i + 1 < pg.fresh.len; i += 2) {
			int from = GI_VEC_AT(&pg.fresh, int, i),
			    to = GI_VEC_AT(&pg.fresh, int, i + 1);
			edge_check(g, b, pg_name(&pg, from), pg_name(&pg, to),
			           (size_t)from < pg.ngraph ? from : -1,
			           (size_t)to < pg.ngraph ? to : -1, NULL, &v);
		}
	size_t i;
	json_t *c;
	json_array_foreach(clashes, i, c)
	{
		json_t *o = json_pack("{s:s, s:O, s:O}", "rule", "clash", "module",
		                      json_object_get(c, "module"), "message",
		                      json_object_get(c, "message"));
		violation_add(&v, o, true);
	}
	json_decref(clashes);
	json_t *hubs = json_array(), *red = json_array();
	json_array_foreach(t.list, i, c)
	{
		if (json_is_true(json_object_get(c, "hub")))
			json_array_append_new(hubs, json_incref(json_object_get(c, "module")));
		if (strcmp(json_string_value(json_object_get(c, "zone")), "red") == 0)
			json_array_append_new(red, json_incref(json_object_get(c, "module")));
	}
	json_t *new_edges = json_array();
	for (size_t k = 0; k + 1 < pg.fresh.len; k += 2)
		json_array_append_new(new_edges,
		                      json_pack("{s:s, s:s}", "from",
		                                pg_name(&pg, GI_VEC_AT(&pg.fresh, int, k)), "to",
		                                pg_name(&pg, GI_VEC_AT(&pg.fresh, int, k + 1))));
	json_t *added = json_array();
	for (size_t k = pg.ngraph; k < pg.n; k++)
		json_array_append_new(added, json_string(pg_name(&pg, (int)k)));
	json_object_set_new(out, "ok", json_boolean(v.errors == 0));
	json_object_set_new(out, "verdict",
	                    json_string(v.errors     ? "violations"
	                                : v.warnings ? "warnings"
	                                             : "ok"));
	json_object_set_new(out, "errors", json_integer(v.errors));
	json_object_set_new(out, "warnings", json_integer(v.warnings));
	json_object_set_new(out, "violations", v.list);
	json_object_set_new(out, "boundaries", json_boolean(b != NULL));
	json_object_set_new(out, "added_modules", added);
	json_object_set_new(out, "new_dependencies", new_edges);
	json_object_set_new(out, "touched", t.list);
	json_object_set_new(out, "hubs_touched", hubs);
	json_object_set_new(out, "red_zones_touched", red);
	json_object_set_new(out, "blast_radius", plan_blast(g, t.seen, depth));
	gi_free(t.seen);
	pg_destroy(&pg);
	return 0;
}
