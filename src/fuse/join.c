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
#include "graph/query.h"

/* ---- graph ------------------------------------------------------------- */

/* module_details of `module`, cached (borrowed), or NULL when unknown. */
json_t *fuse_join_module(struct ctx *c, const char *module)
{
	if (!c->graph || !module)
		return NULL;
	json_t *d = gi_map_get(&c->details, module);
	if (d)
		return json_is_object(d) ? d : NULL;
	struct kg_query_params p = {0};
	p.module = module;
	json_t *out = NULL;
	int rc = kg_query(c->graph, "module_details", &p, &out);
	if (rc == 0 && json_is_object(out)) {
		c->graph_ok = true;
	} else {
		json_decref(out);
		out = json_null();
	}
	gi_map_put(&c->details, module, out);
	return json_is_object(out) ? out : NULL;
}

json_t *fuse_join_function(struct ctx *c, const char *module, const char *fn, long arity)
{
	if (!c->graph)
		return NULL;
	char fa[FUSE_MAX_NAME + 16];
	snprintf(fa, sizeof(fa), "%.*s/%ld", FUSE_MAX_NAME, fn, arity);
	struct kg_query_params p = {0};
	p.module = module;
	p.function = fa;
	json_t *out = NULL;
	if (kg_query(c->graph, "function_details", &p, &out) != 0 || !json_is_object(out)) {
		json_decref(out);
		return NULL;
	}
	c->graph_ok = true;
	return out;
}

bool fuse_join_uses_ecto_repo(json_t *details)
{
	json_t *uses = json_object_get(details, "uses");
	size_t n = json_is_array(uses) ? json_array_size(uses) : 0;
	for (size_t i = 0; i < n; i++) {
		const char *u = json_string_value(json_array_get(uses, i));
		if (u && strcmp(u, "Ecto.Repo") == 0)
			return true;
	}
	return false;
}

/* How many distinct functions of `module` are named like Ecto.Repo's API
 * (get, all, insert, ...): from the graph when it knows the module, else
 * from the traced functions. */
static int repo_api_functions(struct ctx *c, const char *module, json_t *details)
{
	int n = 0;
	json_t *fns = json_object_get(details, "functions");
	if (json_array_size(fns) > 0) {
		for (size_t i = 0; i < json_array_size(fns) && i < FUSE_MAX_LIST; i++) {
			json_t *f = json_array_get(fns, i);
			const char *v = gi_json_str(f, "visibility");
			if ((!v || strcmp(v, "private") != 0) &&
			    fuse_repo_api_effect(gi_json_str(f, "name")) != FUSE_EFFECT_NONE)
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
	json_t *d = fuse_join_function(c, module, fn, arity);
	json_t *ce = json_object_get(d, "callees");
	bool found = false;
	for (size_t k = 0; !found && k < json_array_size(ce) && k < 200; k++) {
		json_t *e = json_array_get(ce, k);
		enum fuse_effect effect;
		found =
		    fuse_driver_effect(gi_json_str(e, "module"), gi_json_str(e, "name"), &effect) &&
		    effect != FUSE_EFFECT_NONE;
	}
	for (size_t k = 0; !found && depth > 0 && k < json_array_size(ce) && k < 50; k++) {
		json_t *e = json_array_get(ce, k);
		const char *cm = gi_json_str(e, "module"), *cn = gi_json_str(e, "name");
		double ca = gi_json_num(e, "arity");
		if (cm && cn && isfinite(ca) && strcmp(cm, module) == 0 &&
		    !(strcmp(cn, fn) == 0 && (long)ca == arity))
			found = calls_driver_locally(c, module, cn, (long)ca, depth - 1);
	}
	json_decref(d);
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
	json_t *d = fuse_join_module(c, module);
	if (d && gi_json_true(d, "external"))
		return NULL;
	if (d && fuse_join_uses_ecto_repo(d))
		return "it uses Ecto.Repo";
	json_t *deps = json_object_get(d, "dependencies");
	struct traced_mod *counted = fuse_traced_find(c, module);
	double hot = counted ? fuse_join_driver_call_share(c, counted) : NAN;
	for (size_t i = 0; i < json_array_size(deps) && i < FUSE_MAX_LIST; i++) {
		const char *m = gi_json_str(json_array_get(deps, i), "module");
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

/* What the function of `details` (module, name) reaches: driver calls
 * with their effect, Ecto.Repo API calls, and what its project callees
 * reach, `depth` edges deep. An effect the driver leaves to the statement
 * (UNKNOWN) is resolved by the function's name when nothing else tells. */
static void reach_compute(struct ctx *c, const char *module, const char *fn, json_t *details,
                          int depth, struct reach *r)
{
	unsigned direct = 0, inherited = 0;
	const char *layer = NULL;
	enum fuse_effect e;
	json_t *ce = json_object_get(details, "callees");
	size_t n = json_is_array(ce) ? json_array_size(ce) : 0;
	for (size_t k = 0; k < n && k < 200; k++) {
		json_t *callee = json_array_get(ce, k);
		const char *cm = gi_json_str(callee, "module"), *cn = gi_json_str(callee, "name");
		double ca = gi_json_num(callee, "arity");
		if (!cm || !cn || !isfinite(ca))
			continue;
		if (fuse_driver_effect(cm, cn, &e)) {
			direct |= effect_bits(e);
			if (e != FUSE_EFFECT_NONE)
				direct |= storage_bit(fuse_driver_storage(cm));
			if (!layer)
				layer = fuse_ctx_strdup(c, module);
			continue;
		}
		json_t *cd = strcmp(cm, module) != 0 ? fuse_join_module(c, cm) : NULL;
		if (cd && fuse_join_uses_ecto_repo(cd) &&
		    (e = fuse_repo_api_effect(cn)) != FUSE_EFFECT_NONE) {
			direct |= effect_bits(e) | REACH_OUTSIDE;
			if (!layer)
				layer = fuse_ctx_strdup(c, cm);
			continue;
		}
		if (depth <= 0 || (cd && gi_json_true(cd, "external")) ||
		    (strcmp(cm, module) != 0 && !cd))
			continue;
		const struct reach *sub = reach_function(c, cm, cn, (long)ca, depth - 1);
		inherited |= sub->effects;
		if (!layer && sub->layer)
			layer = sub->layer;
	}
	json_t *md = fuse_join_module(c, module);
	if (md && fuse_join_uses_ecto_repo(md) &&
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
	json_t *d = fuse_join_function(c, module, fn, arity);
	struct reach out = {0};
	if (d)
		reach_compute(c, module, fn, d, depth, &out);
	json_decref(d);
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

json_t *fuse_join_graph_fields(struct ctx *c, const char *module)
{
	json_t *d = fuse_join_module(c, module);
	json_t *g = json_object();
	json_object_set_new(g, "in_graph", json_boolean(d != NULL));
	static const char *const keys[][2] = {
	    {"ca", "ca"},
	    {"ce", "ce"},
	    {"in_degree", "in_degree"},
	    {"out_degree", "out_degree"},
	    {"complexity", "complexity_total"},
	    {"complexity_max", "complexity_max"},
	    {"instability", "instability"},
	    {"centrality", "centrality"},
	    {"hub", "hub"},
	    {"zone", "zone"},
	    {"heat", "heat"},
	    {"change_risk", "change_risk"},
	    {"file", "file"},
	    {"external", "external"},
	};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *v = d ? json_object_get(d, keys[i][1]) : NULL;
		json_object_set_new(g, keys[i][0], v ? json_incref(v) : json_null());
	}
	return g;
}

json_t *fuse_join_mfa_list(json_t *arr)
{
	json_t *out = json_array();
	size_t n = json_is_array(arr) ? json_array_size(arr) : 0;
	for (size_t i = 0; i < n && i < 50; i++) {
		json_t *e = json_array_get(arr, i);
		const char *m = gi_json_str(e, "module"), *f = gi_json_str(e, "name");
		double ar = gi_json_num(e, "arity");
		char text[2 * FUSE_MAX_NAME + 16];
		if (!m || !f)
			continue;
		if (isfinite(ar))
			snprintf(text, sizeof(text), "%.*s.%.*s/%d", FUSE_MAX_NAME, m,
			         FUSE_MAX_NAME, f, (int)ar);
		else
			snprintf(text, sizeof(text), "%.*s.%.*s", FUSE_MAX_NAME, m, FUSE_MAX_NAME,
			         f);
		json_array_append_new(out, json_string(text));
	}
	return out;
}

/* The database module a function calls, directly or through functions of
 * its own module (lookup/1 -> from_store/1 -> Store.get/1), looking `depth`
 * local calls deep; copied into `buf`, or NULL. */
const char *fuse_join_repo_callee(struct ctx *c, const char *module, json_t *details, int depth,
                                  char *buf, size_t size)
{
	json_t *ce = json_object_get(details, "callees");
	size_t n = json_is_array(ce) ? json_array_size(ce) : 0;
	for (size_t k = 0; k < n && k < 50; k++) {
		const char *cm = gi_json_str(json_array_get(ce, k), "module");
		if (cm && strcmp(cm, module) != 0 && fuse_join_module_is_database(c, cm)) {
			gi_strlcpy(buf, cm, size);
			return buf;
		}
	}
	for (size_t k = 0; depth > 0 && k < n && k < 20; k++) {
		json_t *e = json_array_get(ce, k);
		const char *cm = gi_json_str(e, "module"), *name = gi_json_str(e, "name");
		double arity = gi_json_num(e, "arity");
		if (!cm || !name || strcmp(cm, module) != 0 || !isfinite(arity))
			continue;
		json_t *local = fuse_join_function(c, module, name, (long)arity);
		const char *r =
		    local ? fuse_join_repo_callee(c, module, local, depth - 1, buf, size) : NULL;
		json_decref(local);
		if (r)
			return r;
	}
	return NULL;
}

/* True when function_details lists callers and all are in `module`: then
 * the function is a step of another operation of the module (lookup/1
 * calling fetch/1), and counting both would count one operation twice. */
bool fuse_join_only_local_callers(json_t *details, const char *module)
{
	json_t *callers = json_object_get(details, "callers");
	size_t n = json_is_array(callers) ? json_array_size(callers) : 0;
	for (size_t i = 0; i < n; i++) {
		const char *m = gi_json_str(json_array_get(callers, i), "module");
		if (!m || strcmp(m, module) != 0)
			return false;
	}
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
	json_t *d = fuse_join_function(c, g->module, g->function, g->arity);
	json_t *callers = json_object_get(d, "callers");
	double rest = g->total;
	for (size_t i = 0; i < json_array_size(callers) && i < 50; i++) {
		json_t *e = json_array_get(callers, i);
		const char *m = gi_json_str(e, "module"), *n = gi_json_str(e, "name");
		double a = gi_json_num(e, "arity");
		if (!m || !n || !isfinite(a))
			continue;
		if (strcmp(m, f->module) == 0 && strcmp(n, f->function) == 0 && (long)a == f->arity)
			continue;
		struct func_stat *other = fuse_func_find(c, m, n, (long)a);
		if (other)
			rest -= other->total;
	}
	json_decref(d);
	return rest > 0 ? rest : 0;
}

/* A function that reaches both reads and writes is a write, unless the
 * runtime counts bound its writes: each of its calls that writes calls one
 * of its callees that reach a write, so when those are all traced, their
 * calls (less what their other traced callers made) bound its writes, and
 * the rest of its calls are reads (a gen_server's handle_call serving many
 * lookups and a few registrations). An upper bound, so it errs towards
 * writes. No split when it calls a writing driver function itself. */
static void runtime_split(struct ctx *c, struct func_stat *f, json_t *d)
{
	json_t *ce = json_object_get(d, "callees");
	double writes = 0;
	bool reads = false;
	for (size_t k = 0; k < json_array_size(ce) && k < 50; k++) {
		json_t *e = json_array_get(ce, k);
		const char *cm = gi_json_str(e, "module"), *cn = gi_json_str(e, "name");
		double ca = gi_json_num(e, "arity");
		enum fuse_effect eff;
		if (!cm || !cn || !isfinite(ca))
			continue;
		if (fuse_driver_effect(cm, cn, &eff)) {
			if (eff == FUSE_EFFECT_WRITE || eff == FUSE_EFFECT_UNKNOWN)
				return; /* it writes itself: no callee counts bound it */
			reads |= eff == FUSE_EFFECT_READ;
			continue;
		}
		const struct reach *r = reach_function(c, cm, cn, (long)ca, REACH_DEPTH - 1);
		if (!(r->effects & (REACH_READ | REACH_WRITE)))
			continue;
		struct func_stat *g =
		    fuse_traced_find(c, cm) ? fuse_func_find(c, cm, cn, (long)ca) : NULL;
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

/* Whether `d` (a function's graph node) calls a generic server's call. */
static bool calls_server(json_t *d)
{
	static const char *const servers[] = {":gen_server", "GenServer", ":gen_statem", ":gen",
	                                      NULL};
	json_t *ce = json_object_get(d, "callees");
	for (size_t k = 0; k < json_array_size(ce) && k < 50; k++) {
		const char *cm = gi_json_str(json_array_get(ce, k), "module");
		const char *cn = gi_json_str(json_array_get(ce, k), "name");
		for (size_t i = 0; cm && cn && servers[i]; i++)
			if (strcmp(cm, servers[i]) == 0 && strcmp(cn, "call") == 0)
				return true;
	}
	return false;
}

/* A gen_server's client function (depot_of/1 calling gen_server:call) in
 * a traced module whose handle_call/3 is traced: the call and the clause
 * that serves it are one operation, counted once, at handle_call, where
 * its effect is known. */
static bool is_server_proxy(struct ctx *c, const struct func_stat *f, json_t *d)
{
	return fuse_func_find(c, f->module, "handle_call", 3) && calls_server(d);
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
void fuse_join_classify_traced(struct ctx *c, struct func_stat *f, json_t *d, const char *fn,
                               long arity)
{
	if (strcmp(f->kind, "pipeline") == 0) {
		f->cls = "pipeline";
		f->basis = "name";
		return;
	}
	if (!d) {
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
	json_t *d = fuse_join_function(c, module, fn, arity);
	bool found = d && calls_server(d) &&
	             fuse_join_reach_leaves_vm(
	                 reach_function(c, module, "handle_call", 3, REACH_DEPTH)->effects);
	json_t *ce = json_object_get(d, "callees");
	for (size_t k = 0; !found && depth > 0 && k < json_array_size(ce) && k < 20; k++) {
		json_t *e = json_array_get(ce, k);
		const char *cm = gi_json_str(e, "module"), *cn = gi_json_str(e, "name");
		double ca = gi_json_num(e, "arity");
		json_t *cd = cm ? fuse_join_module(c, cm) : NULL;
		if (!cm || !cn || !isfinite(ca) || !cd || gi_json_true(cd, "external") ||
		    fuse_module_is_platform(cm))
			continue;
		found = leads_to_database(c, cm, cn, (long)ca, depth - 1);
	}
	json_decref(d);
	return found;
}

/* Marks each blocked call site of the executing summary `x` with whether
 * its call leads to the database, and sums those samples: the waiting that
 * goes to the database (rule 8's headroom finding). */
void fuse_join_blocked_on_database(struct ctx *c, json_t *x)
{
	json_t *blocked = json_object_get(x, "blocked");
	json_t *sites = json_object_get(blocked, "call_sites");
	if (!json_is_object(blocked) || !c->graph)
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
void fuse_join_note_traced_callees(struct ctx *c, struct func_stat *f, json_t *d)
{
	struct traced_mod *t = fuse_traced_find(c, f->module);
	json_t *ce = json_object_get(d, "callees");
	for (size_t k = 0; t && k < json_array_size(ce) && k < 200; k++) {
		const char *cm = gi_json_str(json_array_get(ce, k), "module");
		if (!cm || strcmp(cm, f->module) == 0 || !fuse_traced_find(c, cm) ||
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