/*
 * live.c - the live weight of a module or function (see assist.h): what the
 * latest stored profile of the project says about it (docs/PROFILE.md):
 * its share of the reductions (the hot modules and hot functions of the
 * executing view, else the ownership view), and, when it was traced, its
 * calls and calls per second (the workload and trace hotspots).
 *
 * Reads the profile JSON only (the graph gives the names): a profile of an
 * older or partial shape yields nulls, never an error.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "graph/assist.h"

#define HOT_FLOOR 0.005 /* the profile lists modules and functions from 0.5% of reductions */

static double rounded(double v)
{
	return round(v * 1e4) / 1e4;
}

static const json_t *entry_for(const json_t *list, const char *module, const char *fn, int arity)
{
	size_t i;
	json_t *e;
	json_array_foreach(list, i, e)
	{
		const char *m = json_string_value(json_object_get(e, "module"));
		if (!m || strcmp(m, module) != 0)
			continue;
		if (!fn)
			return e;
		const char *f = json_string_value(json_object_get(e, "function"));
		if (f && strcmp(f, fn) == 0 &&
		    json_integer_value(json_object_get(e, "arity")) == arity)
			return e;
	}
	return NULL;
}

static bool traced(const json_t *body, const char *module)
{
	size_t i;
	json_t *m;
	json_array_foreach(json_object_get(json_object_get(body, "session"), "traced_modules"), i,
	                   m)
	{
		if (json_string_value(m) && strcmp(json_string_value(m), module) == 0)
			return true;
	}
	return false;
}

static void set_number(json_t *o, const char *key, const json_t *v)
{
	json_object_set_new(
	    o, key, json_is_number(v) ? json_real(rounded(json_number_value(v))) : json_null());
}

static json_t *profile_ref(const json_t *row, const json_t *body)
{
	const json_t *session = json_object_get(body, "session");
	return json_pack("{s:O?, s:O?, s:O?, s:O?, s:O?}", "id", json_object_get(row, "id"), "node",
	                 json_object_get(row, "node"), "created_ms",
	                 json_object_get(row, "created_ms"), "duration_ms",
	                 json_object_get(session, "duration_ms"), "hot_modules_basis",
	                 json_object_get(body, "hot_modules_basis"));
}

json_t *kg_live_weight(const struct kg_graph *g, int module, int function, const json_t *profile)
{
	const json_t *body = json_object_get(profile, "profile");
	if (!json_is_object(body))
		return json_pack("{s:n, s:s}", "profile", "note",
		                 "no profile: observe the node (giulia-observe start/stop) to see "
		                 "its live weight");
	const struct kg_module *m = kg_module_at(g, module);
	const struct kg_function *f = function >= 0 ? kg_function_at(g, function) : NULL;
	json_t *o = json_object();
	json_object_set_new(o, "profile", profile_ref(profile, body));
	bool is_traced = traced(body, m->name);
	json_object_set_new(o, "traced", json_boolean(is_traced));
	const json_t *hot =
	    f ? entry_for(json_object_get(body, "hot_functions"), m->name, f->name, f->arity)
	      : entry_for(json_object_get(body, "hot_modules"), m->name, NULL, 0);
	const json_t *owner =
	    f ? NULL : entry_for(json_object_get(body, "ownership_modules"), m->name, NULL, 0);
	set_number(o, "reductions_share", json_object_get(hot, "reductions_share"));
	json_object_set_new(o, "samples",
	                    json_is_integer(json_object_get(hot, "samples"))
	                        ? json_deep_copy(json_object_get(hot, "samples"))
	                        : json_null());
	if (!f)
		set_number(o, "ownership_share", json_object_get(owner, "reductions_share"));
	const json_t *calls = NULL, *rate = NULL;
	if (f) {
		const json_t *t =
		    entry_for(json_object_get(body, "trace_hotspots"), m->name, f->name, f->arity);
		calls = json_object_get(t, "calls");
		rate = json_object_get(t, "calls_per_second");
		set_number(o, "mean_us", json_object_get(t, "mean_us"));
	} else {
		const json_t *w = entry_for(json_object_get(body, "workload"), m->name, NULL, 0);
		calls = json_object_get(w, "calls");
		rate = json_object_get(w, "calls_per_second");
	}
	/* a traced module's functions that were never called have no hotspot */
	json_t *zero = json_integer(0);
	if (is_traced && !json_is_number(calls)) {
		calls = zero;
		rate = zero;
	}
	json_object_set_new(o, "calls",
	                    json_is_number(calls)
	                        ? json_integer((json_int_t)json_number_value(calls))
	                        : json_null());
	set_number(o, "calls_per_second", rate);
	bool is_hot = hot != NULL;
	json_object_set_new(o, "hot", json_boolean(is_hot));
	char note[400];
	int n = 0;
	const char *basis = json_string_value(json_object_get(body, "hot_modules_basis"));
	bool sampled = !basis || strcmp(basis, "ownership") != 0;
	if (is_hot)
		n = snprintf(note, sizeof(note), "%.1f%% of the node's reductions%s",
		             100.0 * json_number_value(json_object_get(hot, "reductions_share")),
		             sampled ? "" : " (by the processes it owns)");
	else if (sampled)
		n = snprintf(note, sizeof(note),
		             "not among the profile's hot %s (under %.1f%% of reductions)",
		             f ? "functions" : "modules", 100.0 * HOT_FLOOR);
	else
		n = snprintf(note, sizeof(note),
		             "no share of reductions: the session took no executing samples%s",
		             f ? "" : ", and no process it owns was among the busiest");
	if (n > 0 && (size_t)n < sizeof(note)) {
		if (json_is_number(rate))
			snprintf(note + n, sizeof(note) - (size_t)n, "; %.0f calls/s traced",
			         json_number_value(rate));
		else
			snprintf(note + n, sizeof(note) - (size_t)n, "; %s",
			         is_traced ? "traced, no calls counted"
			                   : "not traced (no call rate)");
	}
	json_object_set_new(o, "note", json_string(note));
	json_decref(zero);
	return o;
}
