/*
 * join.c - the profile builder's joins with the knowledge graph: module and
 * function facts for the hot modules and the traced functions, what each
 * traced function reaches in the data layer (drivers, Ecto.Repo, where the
 * data lives), the workload model's classes (docs/RULES.md) and whether
 * the blocked callers wait on the database. Every graph lookup is cached or
 * capped (REACH_QUERIES); without a graph every answer is "unknown".
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/arena.h"
#include "base/error.h"
#include "base/map.h"
#include "base/str.h"
#include "base/vec.h"
#include "fuse/build_int.h"
#include "graph/graph.h"
#include "graph/lookup.h"

/* ---- graph ------------------------------------------------------------- */

int fuse_join_module(struct ctx *c, const char *module)
{
	int m = c->g ? kg_module_lookup(c->g, module) : -1;
	if (m >= 0)
		c->graph_ok = true;
	return m;
}

int fuse_join_function(struct ctx *c, const char *module, const char *fn, long arity)
{
	int m = c->g ? kg_module_lookup(c->g, module) : -1;
	int f = m >= 0 ? kg_function_lookup(c->g, m, fn, arity) : -1;
	if (f >= 0)
		c->graph_ok = true;
	return f;
}

size_t fuse_join_ncalls(struct ctx *c, int fn, bool callers)
{
	if (fn < 0)
		return 0;
	const struct kg_function *f = kg_function_at(c->g, fn);
	return callers ? f->callers.len : f->callees.len;
}

struct fuse_call_end fuse_join_call(struct ctx *c, int fn, bool callers, size_t k)
{
	const struct kg_function *f = kg_function_at(c->g, fn);
	const struct kg_call *call =
	    kg_call_at(c->g, GI_VEC_AT(callers ? &f->callers : &f->callees, int, k));
	const struct kg_function *end = kg_function_at(c->g, callers ? call->from_fn : call->to_fn);
	return (struct fuse_call_end){kg_module_at(c->g, end->module)->name, end->name, end->arity};
}

bool fuse_join_uses_ecto_repo(struct ctx *c, int module)
{
	return module >= 0 && kg_module_uses(c->g, module, "Ecto.Repo");
}

bool fuse_join_external(struct ctx *c, int module)
{
	return module >= 0 && !kg_module_at(c->g, module)->project;
}

/* How many distinct functions of `module` are named like Ecto.Repo's API
 * (get, all, insert, ...): from the graph when it knows the module, else
 * from the traced functions. */
static int repo_api_functions(struct ctx *c, const char *module, int graph_module)
{
	int n = 0;
	const struct gi_vec *fns =
	    graph_module >= 0 ? &kg_module_at(c->g, graph_module)->functions : NULL;
	if (fns && fns->len > 0) {
		for (size_t i = 0; i < fns->len && i < FUSE_MAX_LIST; i++) {
			const struct kg_function *f = kg_function_at(c->g, GI_VEC_AT(fns, int, i));
			if (f->is_public && fuse_repo_api_effect(f->name) != FUSE_EFFECT_NONE)
				n++;
		}
		return n;
	}
	for (size_t i = 0; i < c->func_list.len; i++) {
		struct func_stat *f = GI_VEC_AT(&c->func_list, struct func_stat *, i);
		if (strcmp(f->module, module) == 0 &&
		    fuse_repo_api_effect(f->function) != FUSE_EFFECT_NONE)
			n++;
	}
	return n;
}

/* Whether `module`.`fn`/`arity` calls a driver function that touches data
 * (not connection management, not a schema change), itself or through the
 * functions of its own module, `depth` edges deep. */
static bool calls_driver_locally(struct ctx *c, const char *module, const char *fn, long arity,
                                 int depth)
{
	if (c->graph_queries >= REACH_QUERIES)
		return false;
	c->graph_queries++;
	int d = fuse_join_function(c, module, fn, arity);
	size_t n = fuse_join_ncalls(c, d, false);
	bool found = false;
	for (size_t k = 0; !found && k < n && k < 200; k++) {
		struct fuse_call_end e = fuse_join_call(c, d, false, k);
		enum fuse_effect effect;
		found = fuse_driver_effect(e.module, e.name, &effect) && effect != FUSE_EFFECT_NONE;
	}
	for (size_t k = 0; !found && depth > 0 && k < n && k < 50; k++) {
		struct fuse_call_end e = fuse_join_call(c, d, false, k);
		if (strcmp(e.module, module) == 0 && !(strcmp(e.name, fn) == 0 && e.arity == arity))
			found = calls_driver_locally(c, module, e.name, e.arity, depth - 1);
	}
	return found;
}

/* The share of traced module `t`'s counted calls made by functions that
 * touch a driver's data (calls_driver_locally, three edges into its own
 * module), NAN when none was counted; memoised. A module is a data layer
 * for its callers when its hot paths reach the driver, not because one
 * cold function (a terminate/2, a start-up schema change) calls it. */
double fuse_join_driver_call_share(struct ctx *c, struct traced_mod *t)
{
	if (t->layer_share >= 0 || isnan(t->layer_share))
		return t->layer_share;
	double all = 0, reaching = 0;
	for (size_t i = 0; i < c->func_list.len; i++) {
		struct func_stat *f = GI_VEC_AT(&c->func_list, struct func_stat *, i);
		if (strcmp(f->module, t->name) != 0 || !(f->total > 0))
			continue;
		all += f->total;
		if (calls_driver_locally(c, t->name, f->function, f->arity, 3))
			reaching += f->total;
	}
	t->layer_share = all > 0 ? reaching / all : NAN;
	return t->layer_share;
}

/* Why `module` is a database module (a data layer), best evidence first:
 * it `use`s Ecto.Repo; the graph shows it calling a database driver; it is
 * traced and calls Ecto-style pipeline callbacks (prepare_query ...); last,
 * and never on the name alone: its name ends in "Repo" and it defines at
 * least two of Ecto.Repo's API functions. NULL when it is not one. Drivers
 * themselves are not data layers of the application. The reason is a
 * static string, or copied into the arena. */
const char *fuse_join_database_reason(struct ctx *c, const char *module)
{
	if (!module || fuse_driver_module(module))
		return NULL;
	int d = fuse_join_module(c, module);
	if (fuse_join_external(c, d))
		return NULL;
	if (fuse_join_uses_ecto_repo(c, d))
		return "it uses Ecto.Repo";
	int deps[FUSE_MAX_LIST];
	size_t ndeps = d >= 0 ? kg_module_dependencies(c->g, d, deps, FUSE_MAX_LIST) : 0;
	struct traced_mod *counted = fuse_traced_find(c, module);
	double hot = counted ? fuse_join_driver_call_share(c, counted) : NAN;
	for (size_t i = 0; i < ndeps; i++) {
		const char *m = kg_module_at(c->g, deps[i])->name;
		/* Counted, and its driver calls are on cold paths only. */
		if (isfinite(hot) && hot < DATA_LAYER_CALL_SHARE)
			break;
		if (fuse_driver_module(m)) {
			char why[FUSE_MAX_NAME + 32];
			snprintf(why, sizeof(why), "it calls the driver %s", m);
			return fuse_ctx_strdup(c, why);
		}
	}
	struct traced_mod *t = fuse_traced_find(c, module);
	if (t && t->raw_pipeline > 0)
		return "it runs Ecto-style pipeline callbacks";
	if (gi_str_ends_with(module, "Repo") && repo_api_functions(c, module, d) >= 2)
		return "a Repo with Repo functions";
	return NULL;
}

bool fuse_join_module_is_database(struct ctx *c, const char *module)
{
	return fuse_join_database_reason(c, module) != NULL;
}

static unsigned effect_bits(enum fuse_effect e)
{
	switch (e) {
	case FUSE_EFFECT_READ:
		return REACH_DB | REACH_READ;
	case FUSE_EFFECT_WRITE:
		return REACH_DB | REACH_WRITE;
	case FUSE_EFFECT_UNKNOWN:
		return REACH_DB | REACH_UNKNOWN;
	case FUSE_EFFECT_NONE:
		break;
	}
	return REACH_DB;
}

static const struct reach *reach_function(struct ctx *c, const char *module, const char *fn,
                                          long arity, int depth);

static unsigned storage_bit(enum fuse_storage s)
{
	return s == FUSE_STORAGE_MNESIA ? REACH_IN_VM
	       : s == FUSE_STORAGE_DETS ? REACH_DETS
	                                : REACH_OUTSIDE;
}

/* What function `details` of the graph (module, name) reaches: driver calls
 * with their effect, Ecto.Repo API calls, and what its project callees
 * reach, `depth` edges deep. An effect the driver leaves to the statement
 * (UNKNOWN) is resolved by the function's name when nothing else tells. */
static void reach_compute(struct ctx *c, const char *module, const char *fn, int details, int depth,
                          struct reach *r)
{
	unsigned direct = 0, inherited = 0;
	const char *layer = NULL;
	enum fuse_effect e;
	size_t n = fuse_join_ncalls(c, details, false);
	for (size_t k = 0; k < n && k < 200; k++) {
		struct fuse_call_end callee = fuse_join_call(c, details, false, k);
		const char *cm = callee.module, *cn = callee.name;
		long ca = callee.arity;
		if (fuse_driver_effect(cm, cn, &e)) {
			direct |= effect_bits(e);
			if (e != FUSE_EFFECT_NONE)
				direct |= storage_bit(fuse_driver_storage(cm));
			if (!layer)
				layer = fuse_ctx_strdup(c, module);
			continue;
		}
		int cd = strcmp(cm, module) != 0 ? fuse_join_module(c, cm) : -1;
		if (fuse_join_uses_ecto_repo(c, cd) &&
		    (e = fuse_repo_api_effect(cn)) != FUSE_EFFECT_NONE) {
			direct |= effect_bits(e) | REACH_OUTSIDE;
			if (!layer)
				layer = fuse_ctx_strdup(c, cm);
			continue;
		}
		if (depth <= 0 || fuse_join_external(c, cd) || (strcmp(cm, module) != 0 && cd < 0))
			continue;
		const struct reach *sub = reach_function(c, cm, cn, ca, depth - 1);
		inherited |= sub->effects;
		if (!layer && sub->layer)
			layer = sub->layer;
	}
	if (fuse_join_uses_ecto_repo(c, fuse_join_module(c, module)) &&
	    (e = fuse_repo_api_effect(fn)) != FUSE_EFFECT_NONE) {
		direct |= effect_bits(e) | REACH_OUTSIDE;
		layer = fuse_ctx_strdup(c, module);
	}
	unsigned all = direct | inherited;
	const unsigned rw = REACH_READ | REACH_WRITE;
	r->basis = (direct & rw) ? "driver" : (inherited & rw) ? "graph" : NULL;
	/* Last resort, the name: for a database call of unknown effect, and
	 * for the operations of a data layer whose driver calls the graph
	 * cannot see (an adapter called through a variable). */
	bool db_module = fuse_join_module_is_database(c, module);
	if (!(all & rw) && ((all & REACH_UNKNOWN) || (!all && db_module))) {
		const char *kind = fuse_classify_function(c->cfg, fn);
		if (strcmp(kind, "read") == 0 || strcmp(kind, "write") == 0) {
			all |= REACH_DB | (kind[0] == 'r' ? REACH_READ : REACH_WRITE);
			r->basis = "name";
			if (!layer)
				layer = fuse_ctx_strdup(c, module);
		}
	}
	if (!layer && (all & REACH_DB) && db_module)
		layer = fuse_ctx_strdup(c, module);
	r->effects = all;
	r->layer = layer;
}

static const struct reach *reach_function(struct ctx *c, const char *module, const char *fn,
                                          long arity, int depth)
{
	char key[2 * FUSE_MAX_NAME + 24];
	snprintf(key, sizeof(key), "%.*s.%.*s/%ld", FUSE_MAX_NAME, module, FUSE_MAX_NAME, fn,
	         arity);
	struct reach *r = gi_map_get(&c->reach, key);
	if (r && (r->busy || r->depth >= depth))
		return r;
	if (!r) {
		r = gi_arena_calloc(&c->arena, 1, sizeof(*r));
		gi_map_put(&c->reach, key, r);
	}
	if (c->graph_queries >= REACH_QUERIES)
		return r;
	c->graph_queries++;
	r->busy = true;
	r->depth = depth;
	int d = fuse_join_function(c, module, fn, arity);
	struct reach out = {0};
	if (d >= 0)
		reach_compute(c, module, fn, d, depth, &out);
	r->effects = out.effects;
	r->layer = out.layer;
	r->basis = out.basis;
	r->busy = false;
	return r;
}

/* Whether a function reaching `effects` waits on data outside the VM (or
 * in DETS): a database it reaches whose storage is not known (an adapter
 * called through a variable, a name) counts as outside; reads of mnesia's
 * ETS tables alone do not. */
bool fuse_join_reach_leaves_vm(unsigned effects)
{
	if (!(effects & REACH_DB))
		return false;
	return (effects & (REACH_OUTSIDE | REACH_DETS)) || !(effects & REACH_IN_VM);
}

/* Where the data a set of effects reaches lives: "external" (a driver
 * over sockets or ports, or a database whose driver the graph cannot see),
 * "dets", "mnesia" (ETS tables of the node, unless the node says a table
 * is disc_only_copies), or NULL when no database is reached. */
const char *fuse_join_storage_of(unsigned effects)
{
	if (!(effects & REACH_DB))
		return NULL;
	if ((effects & REACH_OUTSIDE) || !(effects & (REACH_IN_VM | REACH_DETS)))
		return "external";
	return (effects & REACH_DETS) ? "dets" : "mnesia";
}

/* The class of a set of effects: any write makes a write (read-then-write
 * changes data), reads alone a read. */
static const char *class_of(unsigned effects)
{
	if (effects & REACH_WRITE)
		return "write";
	if (effects & REACH_READ)
		return "read";
	if (effects & REACH_UNKNOWN)
		return "unknown";
	return "compute";
}

/* A real rounded as the queries round it (`scale`: 1000 for 3 decimals). */
static json_t *rounded(double v, double scale)
{
	return json_real(round(v * scale) / scale);
}

json_t *fuse_join_graph_fields(struct ctx *c, const char *module)
{
	int d = fuse_join_module(c, module);
	json_t *g = json_object();
	json_object_set_new(g, "in_graph", json_boolean(d >= 0));
	if (d < 0) {
		static const char *const keys[] = {
		    "ca",          "ce",         "in_degree",
		    "out_degree",  "complexity", "complexity_max",
		    "instability", "centrality", "hub",
		    "zone",        "heat",       "change_risk",
		    "file",        "external",
		};
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			json_object_set_new(g, keys[i], json_null());
		return g;
	}
	const struct kg_module *m = kg_module_at(c->g, d);
	json_object_set_new(g, "ca", json_integer(m->ca));
	json_object_set_new(g, "ce", json_integer(m->ce));
	json_object_set_new(g, "in_degree", json_integer(m->in_degree));
	json_object_set_new(g, "out_degree", json_integer(m->out_degree));
	json_object_set_new(g, "complexity", json_integer(m->complexity_total));
	json_object_set_new(g, "complexity_max", json_integer(m->complexity_max));
	json_object_set_new(g, "instability", rounded(m->instability, 1000));
	json_object_set_new(g, "centrality", rounded(m->centrality, 1e6));
	json_object_set_new(g, "hub", json_boolean(m->hub));
	json_object_set_new(g, "zone", json_string(kg_heat_zone(m->heat)));
	json_object_set_new(g, "heat", rounded(m->heat, 100));
	json_object_set_new(g, "change_risk", rounded(m->change_risk, 100));
	json_object_set_new(g, "file", m->file ? json_string(m->file) : json_null());
	json_object_set_new(g, "external", json_boolean(!m->project));
	return g;
}

json_t *fuse_join_mfa_list(struct ctx *c, int fn, bool callers)
{
	json_t *out = json_array();
	size_t n = fuse_join_ncalls(c, fn, callers);
	for (size_t i = 0; i < n && i < 50; i++) {
		struct fuse_call_end e = fuse_join_call(c, fn, callers, i);
		char text[2 * FUSE_MAX_NAME + 16];
		snprintf(text, sizeof(text), "%.*s.%.*s/%d", FUSE_MAX_NAME, e.module, FUSE_MAX_NAME,
		         e.name, (int)e.arity);
		json_array_append_new(out, json_string(text));
	}
	return out;
}

/* The database module a function calls, directly or through functions of
 * its own module (lookup/1 -> from_store/1 -> Store.get/1), looking `depth`
 * local calls deep; copied into `buf`, or NULL. */
const char *fuse_join_repo_callee(struct ctx *c, const char *module, int details, int depth,
                                  char *buf, size_t size)
{
	size_t n = fuse_join_ncalls(c, details, false);
	for (size_t k = 0; k < n && k < 50; k++) {
		const char *cm = fuse_join_call(c, details, false, k).module;
		if (strcmp(cm, module) != 0 && fuse_join_module_is_database(c, cm)) {
			gi_strlcpy(buf, cm, size);
			return buf;
		}
	}
	for (size_t k = 0; depth > 0 && k < n && k < 20; k++) {
		struct fuse_call_end e = fuse_join_call(c, details, false, k);
		if (strcmp(e.module, module) != 0)
			continue;
		int local = fuse_join_function(c, module, e.name, e.arity);
		const char *r = local >= 0
		                    ? fuse_join_repo_callee(c, module, local, depth - 1, buf, size)
		                    : NULL;
		if (r)
			return r;
	}
	return NULL;
}

/* True when the graph knows callers of function `details` and all are in
 * `module`: then the function is a step of another operation of the module
 * (lookup/1 calling fetch/1), and counting both would count one operation
 * twice. */
bool fuse_join_only_local_callers(struct ctx *c, int details, const char *module)
{
	size_t n = fuse_join_ncalls(c, details, true);
	for (size_t i = 0; i < n; i++)
		if (strcmp(fuse_join_call(c, details, true, i).module, module) != 0)
			return false;
	return n > 0;
}

/* The function a compiler-generated lambda or comprehension belongs to:
 * "-to_maps/1-fun-0-" and "-all/2-lc$^0/1-0-" name to_maps/1 and all/2.
 * Copies the name into `name` and returns true, or false for other names. */
bool fuse_join_lambda_parent(const char *fn, char *name, size_t size, long *arity)
{
	if (fn[0] != '-')
		return false;
	for (const char *slash = strchr(fn + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		const char *p = slash + 1;
		long a = 0;
		while (*p >= '0' && *p <= '9' && a < 256)
			a = a * 10 + (*p++ - '0');
		if (p == slash + 1 || *p != '-' || a >= 256)
			continue;
		size_t len = (size_t)(slash - (fn + 1));
		if (len == 0 || len >= size)
			return false;
		memcpy(name, fn + 1, len);
		name[len] = '\0';
		*arity = a;
		return true;
	}
	return false;
}

/* At most how many of the traced callee `g`'s calls `f` made: its calls
 * minus those of its other callers that are traced (their counts are
 * known); callers outside the traced modules may have made some too, so
 * this is an upper bound. */
static double calls_upper_bound(struct ctx *c, const struct func_stat *f, const struct func_stat *g)
{
	int d = fuse_join_function(c, g->module, g->function, g->arity);
	size_t ncallers = fuse_join_ncalls(c, d, true);
	double rest = g->total;
	for (size_t i = 0; i < ncallers && i < 50; i++) {
		struct fuse_call_end e = fuse_join_call(c, d, true, i);
		if (strcmp(e.module, f->module) == 0 && strcmp(e.name, f->function) == 0 &&
		    e.arity == f->arity)
			continue;
		struct func_stat *other = fuse_func_find(c, e.module, e.name, e.arity);
		if (other)
			rest -= other->total;
	}
	return rest > 0 ? rest : 0;
}

/* A function that reaches both reads and writes is a write, unless the
 * runtime counts bound its writes: each of its calls that writes calls one
 * of its callees that reach a write, so when those are all traced, their
 * calls (less what their other traced callers made) bound its writes, and
 * the rest of its calls are reads (a gen_server's handle_call serving many
 * lookups and a few registrations). An upper bound, so it errs towards
 * writes. No split when it calls a writing driver function itself. */
static void runtime_split(struct ctx *c, struct func_stat *f, int d)
{
	size_t n = fuse_join_ncalls(c, d, false);
	double writes = 0;
	bool reads = false;
	for (size_t k = 0; k < n && k < 50; k++) {
		struct fuse_call_end e = fuse_join_call(c, d, false, k);
		const char *cm = e.module, *cn = e.name;
		long ca = e.arity;
		enum fuse_effect eff;
		if (fuse_driver_effect(cm, cn, &eff)) {
			if (eff == FUSE_EFFECT_WRITE || eff == FUSE_EFFECT_UNKNOWN)
				return; /* it writes itself: no callee counts bound it */
			reads |= eff == FUSE_EFFECT_READ;
			continue;
		}
		const struct reach *r = reach_function(c, cm, cn, ca, REACH_DEPTH - 1);
		if (!(r->effects & (REACH_READ | REACH_WRITE)))
			continue;
		struct func_stat *g =
		    fuse_traced_find(c, cm) ? fuse_func_find(c, cm, cn, ca) : NULL;
		bool traced_module = fuse_traced_find(c, cm) != NULL;
		if (r->effects & REACH_WRITE) {
			if (!traced_module)
				return; /* an untraced writer: nothing bounds it */
			writes += g ? calls_upper_bound(c, f, g) : 0;
		} else {
			reads |= !traced_module || (g && g->total > 0);
		}
	}
	f->split = true;
	f->op_writes = fmin(writes, f->total);
	f->op_reads = reads ? f->total - f->op_writes : 0;
	f->cls = f->op_writes > 0 && f->op_reads > 0 ? "mixed"
	         : f->op_writes > 0                  ? "write"
	         : f->op_reads > 0                   ? "read"
	                                             : "compute";
	f->basis = "runtime";
}

/* Whether function `d` of the graph calls a generic server's call. */
static bool calls_server(struct ctx *c, int d)
{
	static const char *const servers[] = {":gen_server", "GenServer", ":gen_statem", ":gen",
	                                      NULL};
	size_t n = fuse_join_ncalls(c, d, false);
	for (size_t k = 0; k < n && k < 50; k++) {
		struct fuse_call_end e = fuse_join_call(c, d, false, k);
		const char *cm = e.module, *cn = e.name;
		for (size_t i = 0; servers[i]; i++)
			if (strcmp(cm, servers[i]) == 0 && strcmp(cn, "call") == 0)
				return true;
	}
	return false;
}

/* A gen_server's client function (depot_of/1 calling gen_server:call) in
 * a traced module whose handle_call/3 is traced: the call and the clause
 * that serves it are one operation, counted once, at handle_call, where
 * its effect is known. */
static bool is_server_proxy(struct ctx *c, const struct func_stat *f, int d)
{
	return fuse_func_find(c, f->module, "handle_call", 3) && calls_server(c, d);
}

/* OTP behaviour callbacks that dispatch on the message they get (gen_server,
 * gen_event, gen_statem): each call runs one of many clauses. */
static bool is_message_dispatcher(const char *fn, long arity)
{
	static const struct {
		const char *name;
		long arity;
	} callbacks[] = {{"handle_call", 3},  {"handle_cast", 2},  {"handle_info", 2},
	                 {"handle_event", 2}, {"handle_event", 3}, {"handle_event", 4}};
	for (size_t i = 0; i < sizeof(callbacks) / sizeof(callbacks[0]); i++)
		if (strcmp(fn, callbacks[i].name) == 0 && arity == callbacks[i].arity)
			return true;
	return false;
}

/* Sets f->cls, f->basis and f->layer (docs/RULES.md, "The workload
 * model"). `d` is the function's graph node (or its parent's for a
 * lambda, named `fn`/`arity`), NULL when the graph does not know it. */
void fuse_join_classify_traced(struct ctx *c, struct func_stat *f, int d, const char *fn,
                               long arity)
{
	if (strcmp(f->kind, "pipeline") == 0) {
		f->cls = "pipeline";
		f->basis = "name";
		return;
	}
	if (d < 0) {
		/* No graph: the name word list is all there is. */
		const char *k = fuse_classify_function(c->cfg, f->function);
		f->cls = strcmp(k, "read") == 0 || strcmp(k, "write") == 0 ? k : "compute";
		f->basis = "name";
		if (strcmp(f->cls, "compute") != 0 && fuse_join_module_is_database(c, f->module))
			f->layer = f->module;
		return;
	}
	const struct reach *r = reach_function(c, f->module, fn, arity, REACH_DEPTH);
	f->cls = class_of(r->effects);
	f->basis = r->basis ? r->basis : "graph";
	f->layer = r->layer;
	f->reach = r->effects;
	if (!r->effects && is_server_proxy(c, f, d)) {
		f->cls = "proxy";
		return;
	}
	if ((r->effects & REACH_READ) && (r->effects & REACH_WRITE)) {
		runtime_split(c, f, d);
		/* A callback that serves many messages, one clause each (the graph
		 * folds the clauses into one function), is not a read-then-write:
		 * without the counts to split it, what its calls did is unknown. */
		if (!f->split && is_message_dispatcher(fn, arity))
			f->cls = "unknown";
	}
}

/* Whether a call made at module.fn/arity leads to the database: its call
 * paths reach a database call, or it (or a project function it calls,
 * `depth` edges deep) is a client of a server of its module whose
 * handle_call/3 reaches one (the graph does not follow a message, so the
 * client is joined with the callback that serves it). */
static bool leads_to_database(struct ctx *c, const char *module, const char *fn, long arity,
                              int depth)
{
	if (fuse_join_reach_leaves_vm(reach_function(c, module, fn, arity, REACH_DEPTH)->effects))
		return true;
	if (c->graph_queries >= REACH_QUERIES)
		return false;
	c->graph_queries++;
	int d = fuse_join_function(c, module, fn, arity);
	bool found = d >= 0 && calls_server(c, d) &&
	             fuse_join_reach_leaves_vm(
	                 reach_function(c, module, "handle_call", 3, REACH_DEPTH)->effects);
	size_t n = fuse_join_ncalls(c, d, false);
	for (size_t k = 0; !found && depth > 0 && k < n && k < 20; k++) {
		struct fuse_call_end e = fuse_join_call(c, d, false, k);
		int cd = fuse_join_module(c, e.module);
		if (cd < 0 || fuse_join_external(c, cd) || fuse_module_is_platform(e.module))
			continue;
		found = leads_to_database(c, e.module, e.name, e.arity, depth - 1);
	}
	return found;
}

/* Marks each blocked call site of the executing summary `x` with whether
 * its call leads to the database, and sums those samples: the waiting that
 * goes to the database (rule 8's headroom finding). */
void fuse_join_blocked_on_database(struct ctx *c, json_t *x)
{
	json_t *blocked = json_object_get(x, "blocked");
	json_t *sites = json_object_get(blocked, "call_sites");
	if (!json_is_object(blocked) || !c->g)
		return;
	double samples = 0;
	for (size_t i = 0; i < json_array_size(sites); i++) {
		json_t *site = json_array_get(sites, i);
		char module[FUSE_MAX_NAME], function[FUSE_MAX_NAME];
		long arity;
		const char *mfa = gi_json_str(site, "function");
		bool db = mfa &&
		          fuse_frame_split(mfa, module, sizeof(module), function, sizeof(function),
		                           &arity) == 0 &&
		          leads_to_database(c, module, function, arity, 2);
		json_object_set_new(site, "database", json_boolean(db));
		/* Its samples waiting in log calls waited for the logger. */
		double n = gi_json_num(site, "samples"),
		       in_log = gi_json_num(site, "logger_samples");
		if (db && isfinite(n))
			samples += n - (isfinite(in_log) ? fmin(in_log, n) : 0);
	}
	double all = gi_json_num(blocked, "samples");
	double share = gi_json_num(blocked, "share_of_samples");
	json_object_set_new(blocked, "database_samples", fuse_json_num(samples));
	json_object_set_new(blocked, "database_share_of_blocked",
	                    fuse_json_num(all > 0 ? samples / all : NAN));
	json_object_set_new(
	    blocked, "database_share_of_samples",
	    fuse_json_num(all > 0 && isfinite(share) ? share * samples / all : NAN));
}

/* Records in f's module which other traced modules its function calls. */
void fuse_join_note_traced_callees(struct ctx *c, struct func_stat *f, int d)
{
	struct traced_mod *t = fuse_traced_find(c, f->module);
	size_t n = fuse_join_ncalls(c, d, false);
	for (size_t k = 0; t && k < n && k < 200; k++) {
		const char *cm = fuse_join_call(c, d, false, k).module;
		if (strcmp(cm, f->module) == 0 || !fuse_traced_find(c, cm) ||
		    json_array_size(t->calls_traced) >= 64)
			continue;
		bool dup = false;
		for (size_t i = 0; i < json_array_size(t->calls_traced) && !dup; i++)
			dup =
			    strcmp(json_string_value(json_array_get(t->calls_traced, i)), cm) == 0;
		if (!dup)
			json_array_append_new(t->calls_traced, json_string(cm));
	}
}

/* Under an overhead budget, a hotspot's calls are an estimate: the calls
 * counted (`measured`) and the 95% interval of the session's total (`low`,
 * `high`; docs/PROFILE.md); null when every call was counted. */
/* The session's estimate of each function counted under a budget
 * (docs/RULES.md "The estimator"): its calls counted over the session
 * (only the windows in which its module counted) scaled two ways, pooled
 * over the windows (ratios of sums, which a window with a tiny counted
 * interval cannot throw off as it throws off its own ratio): by the time
 * share, the windows' time over the time its module counted (calls per
 * counted second: right for callers at a pace of their own), and by the
 * work share, the windows' time over the node's work done while it counted
 * expressed as time (calls per reduction: right for a steady CPU-bound
 * mix, wrong where unrelated work comes and goes). The estimate is the
 * time-scaled one (its own exposure); the interval spans both,
 * widened by the windows' own error: their intervals, or, where the
 * windows' estimates scatter more than those say (a function called in
 * bursts), n windows x their variance (conservative, as it holds the
 * load's own changes too). The module's calls follow its functions'. */