/*
 * briefing.c - what an assistant should know on entering a project, in one
 * answer (the query "briefing", see assist.h and docs/ASSIST.md): its
 * size, its layers, hubs, cycles and riskiest modules, the conventions in
 * use (the behaviours its modules adopt, protocols and their impls, OTP
 * processes, Ecto schemas, structs) and, when a profile exists, the latest
 * profile's top findings.
 *
 * Conventions are read from the graph's edges (`@behaviour` and `use`
 * references), never from module names: an OTP process is a module that
 * adopts an OTP process behaviour (GenServer, :gen_server, :gen_statem,
 * :gen_event, Supervisor, :supervisor, Agent, Task), an Ecto schema one
 * that uses Ecto.Schema. One pass over the modules and their edges.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "graph/assist.h"

#define EXAMPLES_MAX 5 /* module names listed per layer, behaviour, protocol */

static const char *const otp_behaviours[] = {
    "GenServer",  ":gen_server",       "GenStateMachine",     ":gen_statem",
    ":gen_event", "Supervisor",        ":supervisor",         "Agent",
    "Task",       "DynamicSupervisor", "PartitionSupervisor", NULL};

static bool is_otp_behaviour(const char *name)
{
	for (int i = 0; otp_behaviours[i]; i++)
		if (strcmp(otp_behaviours[i], name) == 0)
			return true;
	return false;
}

static _Thread_local const struct kg_graph *sort_graph; /* qsort has no context argument */

static int by_change_risk(const void *a, const void *b)
{
	const struct kg_module *x = kg_module_at(sort_graph, *(const int *)a);
	const struct kg_module *y = kg_module_at(sort_graph, *(const int *)b);
	if (x->change_risk != y->change_risk)
		return x->change_risk < y->change_risk ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int by_in_degree(const void *a, const void *b)
{
	const struct kg_module *x = kg_module_at(sort_graph, *(const int *)a);
	const struct kg_module *y = kg_module_at(sort_graph, *(const int *)b);
	if (x->in_degree != y->in_degree)
		return y->in_degree - x->in_degree;
	return strcmp(x->name, y->name);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(kg_module_at(sort_graph, *(const int *)a)->name,
	              kg_module_at(sort_graph, *(const int *)b)->name);
}

/* A name -> {count, modules[]} tally kept in a JSON object. */
static void tally(json_t *t, const char *key, const char *module)
{
	json_t *e = json_object_get(t, key);
	if (!e) {
		e = json_pack("{s:i, s:[]}", "count", 0, "modules");
		json_object_set_new(t, key, e);
	}
	json_object_set_new(e, "count",
	                    json_integer(json_integer_value(json_object_get(e, "count")) + 1));
	json_t *mods = json_object_get(e, "modules");
	if (json_array_size(mods) < EXAMPLES_MAX)
		json_array_append_new(mods, json_string(module));
}

/* The tally as [{KEY_NAME: key, count, modules}] by count, then key. */
static int by_count(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	json_int_t cx = json_integer_value(json_object_get(x, "count"));
	json_int_t cy = json_integer_value(json_object_get(y, "count"));
	if (cx != cy)
		return cx < cy ? 1 : -1;
	return strcmp(json_string_value(json_object_get(x, "name")),
	              json_string_value(json_object_get(y, "name")));
}

static json_t *tally_list(json_t *t, const char *key_name)
{
	size_t n = json_object_size(t), k = 0;
	json_t **items = gi_malloc(sizeof(json_t *) * (n + 1));
	const char *key;
	json_t *v;
	json_object_foreach(t, key, v)
	{
		json_object_set_new(v, "name", json_string(key));
		items[k++] = v;
	}
	qsort(items, k, sizeof(json_t *), by_count);
	json_t *a = json_array();
	for (size_t i = 0; i < k; i++) {
		json_t *e =
		    json_pack("{s:O, s:O, s:O}", key_name, json_object_get(items[i], "name"),
		              "count", json_object_get(items[i], "count"), "modules",
		              json_object_get(items[i], "modules"));
		json_array_append_new(a, e);
	}
	gi_free(items);
	return a;
}

static json_t *size_json(const struct kg_graph *g)
{
	int core = 0, tests = 0, external = 0, functions = 0, public_fns = 0, edges = 0;
	int complexity = 0;
	for (size_t i = 0; i < g->modules.len; i++) {
		const struct kg_module *m = kg_module_at(g, (int)i);
		if (!m->project) {
			external++;
			continue;
		}
		if (m->test) {
			tests++;
			continue;
		}
		core++;
		functions += m->public_count + m->private_count;
		public_fns += m->public_count;
		complexity += m->complexity_total;
	}
	for (size_t i = 0; i < g->edges.len; i++) {
		const struct kg_edge *e = kg_edge_at(g, (int)i);
		if (kg_module_is_core(kg_module_at(g, e->from)) &&
		    kg_module_is_core(kg_module_at(g, e->to)) && kg_edge_is_direct(e))
			edges++;
	}
	return json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:i}", "modules", core, "test_modules",
	                 tests, "external_modules", external, "functions", functions,
	                 "public_functions", public_fns, "internal_edges", edges,
	                 "complexity_total", complexity);
}

static json_t *layers_json(const struct kg_graph *g, const int *core, size_t n)
{
	json_t *a = json_array();
	for (int layer = 0; layer < g->layer_count; layer++) {
		json_t *mods = json_array();
		int count = 0;
		for (size_t i = 0; i < n; i++) {
			const struct kg_module *m = kg_module_at(g, core[i]);
			if (m->layer != layer)
				continue;
			if (count++ < EXAMPLES_MAX)
				json_array_append_new(mods, json_string(m->name));
		}
		if (count)
			json_array_append_new(a, json_pack("{s:i, s:i, s:o}", "layer", layer,
			                                   "count", count, "modules", mods));
		else
			json_decref(mods);
	}
	return json_pack("{s:i, s:o}", "count", g->layer_count, "layers", a);
}

static json_t *cycles_json(const struct kg_graph *g, int top)
{
	json_t *a = json_array();
	int count = 0;
	for (size_t i = 0; i < g->sccs.len; i++) {
		const struct kg_scc *c = &GI_VEC_AT(&g->sccs, struct kg_scc, i);
		if (c->count < 2)
			continue;
		if (count++ >= top)
			continue;
		json_t *mods = json_array();
		for (int k = 0; k < c->count && k < 20; k++)
			json_array_append_new(
			    mods, json_string(kg_module_at(g, GI_VEC_AT(&g->scc_members, int,
			                                                (size_t)(c->first + k)))
			                          ->name));
		json_array_append_new(a,
		                      json_pack("{s:i, s:o}", "size", c->count, "modules", mods));
	}
	return json_pack("{s:i, s:o}", "count", count, "cycles", a);
}

static json_t *conventions_json(const struct kg_graph *g, const int *core, size_t n)
{
	json_t *behaviours = json_object(), *protocols = json_object();
	json_t *otp = json_array(), *schemas = json_array();
	int structs = 0, impls_total = 0;
	for (size_t i = 0; i < n; i++) {
		const struct kg_module *m = kg_module_at(g, core[i]);
		if (m->has_struct)
			structs++;
		if (m->kind == FACTS_IMPL && m->protocol) {
			tally(protocols, m->protocol, m->name);
			impls_total++;
		}
		const char *process = NULL;
		bool schema = false;
		for (size_t k = 0; k < m->out.len; k++) {
			const struct kg_edge *e = kg_edge_at(g, GI_VEC_AT(&m->out, int, k));
			const char *to = kg_module_at(g, e->to)->name;
			bool adopts = (e->kinds & (1u << FACTS_REF_BEHAVIOUR)) ||
			              ((e->kinds & (1u << FACTS_REF_USE)) && is_otp_behaviour(to));
			/* a defimpl's protocol is counted with the protocols */
			if (adopts && kg_module_at(g, e->to)->kind != FACTS_PROTOCOL)
				tally(behaviours, to, m->name);
			if (adopts && !process && is_otp_behaviour(to))
				process = to;
			if ((e->kinds & (1u << FACTS_REF_USE)) && strcmp(to, "Ecto.Schema") == 0)
				schema = true;
		}
		if (process)
			json_array_append_new(otp,
			                      json_pack("{s:s, s:s, s:s?}", "module", m->name,
			                                "behaviour", process, "file", m->file));
		if (schema)
			json_array_append_new(
			    schemas, json_pack("{s:s, s:s?}", "module", m->name, "file", m->file));
	}
	int defined_protocols = 0;
	for (size_t i = 0; i < n; i++)
		if (kg_module_at(g, core[i])->kind == FACTS_PROTOCOL)
			defined_protocols++;
	json_t *o = json_pack("{s:o, s:{s:i, s:i, s:o}, s:o, s:o, s:i}", "behaviours",
	                      tally_list(behaviours, "behaviour"), "protocols", "defined",
	                      defined_protocols, "impls", impls_total, "by_protocol",
	                      tally_list(protocols, "protocol"), "otp_processes", otp,
	                      "ecto_schemas", schemas, "structs", structs);
	json_decref(behaviours);
	json_decref(protocols);
	return o;
}

static json_t *profile_json(const json_t *row, int top)
{
	const json_t *body = json_object_get(row, "profile");
	if (!json_is_object(body))
		return json_pack("{s:n, s:s}", "id", "note",
		                 "no profile: observe the node (giulia-observe start/stop) to add "
		                 "its live findings");
	json_t *recs = json_array(), *hot = json_array();
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(body, "recommendations"), i, r)
	{
		if ((int)i >= top)
			break;
		json_array_append_new(recs, json_pack("{s:O?, s:O?, s:O?, s:O?, s:O?}", "rank",
		                                      json_object_get(r, "rank"), "id",
		                                      json_object_get(r, "id"), "severity",
		                                      json_object_get(r, "severity"), "subject",
		                                      json_object_get(r, "subject"), "finding",
		                                      json_object_get(r, "finding")));
	}
	json_array_foreach(json_object_get(body, "hot_modules"), i, r)
	{
		if ((int)i >= top)
			break;
		json_array_append_new(
		    hot, json_pack("{s:O?, s:O?, s:O?}", "module", json_object_get(r, "module"),
		                   "reductions_share", json_object_get(r, "reductions_share"),
		                   "project", json_object_get(r, "project")));
	}
	const json_t *session = json_object_get(body, "session");
	return json_pack("{s:O?, s:O?, s:O?, s:O?, s:o, s:o}", "id", json_object_get(row, "id"),
	                 "node", json_object_get(row, "node"), "created_ms",
	                 json_object_get(row, "created_ms"), "duration_ms",
	                 json_object_get(session, "duration_ms"), "recommendations", recs,
	                 "hot_modules", hot);
}

int kg_briefing(const struct kg_graph *g, const json_t *profile, int top, json_t *out)
{
	size_t n = 0;
	int *core = gi_malloc(sizeof(int) * (g->modules.len + 1));
	for (size_t i = 0; i < g->modules.len; i++)
		if (kg_module_is_core(kg_module_at(g, (int)i)))
			core[n++] = (int)i;
	sort_graph = g;
	qsort(core, n, sizeof(int), by_name);
	json_object_set_new(out, "size", size_json(g));
	json_object_set_new(out, "layers", layers_json(g, core, n));
	json_object_set_new(out, "cycles", cycles_json(g, top));

	int *order = gi_malloc(sizeof(int) * (n + 1));
	memcpy(order, core, sizeof(int) * n);
	qsort(order, n, sizeof(int), by_in_degree);
	json_t *hubs = json_array();
	for (size_t i = 0; i < n && (int)json_array_size(hubs) < top; i++) {
		const struct kg_module *m = kg_module_at(g, order[i]);
		if (m->hub)
			json_array_append_new(hubs,
			                      json_pack("{s:s, s:i, s:i, s:s?}", "module", m->name,
			                                "in_degree", m->in_degree, "out_degree",
			                                m->out_degree, "file", m->file));
	}
	json_object_set_new(out, "hubs", hubs);
	qsort(order, n, sizeof(int), by_change_risk);
	json_t *risky = json_array();
	for (size_t i = 0; i < n && (int)i < top; i++) {
		const struct kg_module *m = kg_module_at(g, order[i]);
		if (m->change_risk <= 0)
			break;
		json_array_append_new(
		    risky, json_pack("{s:s, s:f, s:f, s:s, s:b, s:s?}", "module", m->name,
		                     "change_risk", round(m->change_risk * 100) / 100, "heat",
		                     round(m->heat * 100) / 100, "zone", kg_heat_zone(m->heat),
		                     "has_tests", m->has_tests, "file", m->file));
	}
	json_object_set_new(out, "riskiest", risky);
	json_object_set_new(out, "conventions", conventions_json(g, core, n));
	json_object_set_new(out, "profile", profile_json(profile, top));
	gi_free(order);
	gi_free(core);
	return 0;
}
