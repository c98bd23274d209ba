/*
 * dead_runtime.c - `giulia dead-code --node NODE --for MS`: the static dead
 * code split by what a live node runs (docs/CLI.md, "giulia dead-code").
 *
 * Every public function of the project's (non-test) modules is counted on
 * the node with call-count tracing (obs_trace: the observer's own path, its
 * patterns removed at the end whatever happens), local calls included, for
 * the window; batches of at most OBS trace's 64 modules run one after the
 * other, each for the whole window. The static answer is then split:
 * functions the graph calls dead that the node called (what the graph
 * missed: each one a gap of the static analysis), functions the graph
 * reaches that the node never called in the window, and functions dead on
 * both counts. A module the node has not loaded is named, and its
 * functions are left out of the split (nothing can be said of them).
 */
#include "cli/dead_runtime.h"

#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/map.h"
#include "observe/observe.h"

#define TRACE_BATCH 64

/* "Mod.name/arity" keys of `f` (module, name or function, arity). */
static void mfa_key(char *key, size_t n, const char *module, const char *name, long long arity)
{
	snprintf(key, n, "%s.%s/%lld", module, name, arity);
}

static const char *jstr_or(const json_t *o, const char *k, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : dflt;
}

/* The non-test project modules of the index, as a JSON array of names. */
static int project_modules(struct kg_db *db, json_t **out)
{
	json_t *r = NULL;
	int rc = kg_query(db, "modules", NULL, &r);
	if (rc)
		return rc;
	json_t *names = json_array();
	size_t i;
	json_t *m;
	json_array_foreach(json_object_get(r, "modules"), i, m)
	{
		const char *name = jstr_or(m, "name", NULL);
		if (!name || json_is_true(json_object_get(m, "test")) ||
		    json_is_true(json_object_get(m, "external")) || name[0] == '(')
			continue;
		json_array_append_new(names, json_string(name));
	}
	json_decref(r);
	*out = names;
	return 0;
}

int cli_dead_code_runtime(struct kg_db *db, const json_t *dead, const struct obs_target *t,
                          int window_ms, json_t **out)
{
	*out = NULL;
	json_t *modules = NULL;
	int rc = project_modules(db, &modules);
	if (rc)
		return rc;
	struct gi_map counts, traced;
	gi_map_init(&counts);
	gi_map_init(&traced);
	json_t *errors = json_array(), *result = json_object();
	size_t nmods = json_array_size(modules);
	int batches = 0;
	for (size_t first = 0; first < nmods && !rc; first += TRACE_BATCH) {
		const char *names[TRACE_BATCH + 1];
		size_t n = 0;
		for (size_t k = first; k < nmods && n < TRACE_BATCH; k++)
			names[n++] = json_string_value(json_array_get(modules, k));
		names[n] = NULL;
		json_t *tr = NULL;
		rc = obs_trace(t, names, window_ms, &tr);
		if (rc)
			break;
		batches++;
		size_t i;
		json_t *v;
		json_array_foreach(json_object_get(tr, "modules"), i, v)
		{
			if (json_is_string(v))
				gi_map_put(&traced, json_string_value(v), (void *)1);
		}
		json_array_foreach(json_object_get(tr, "calls"), i, v)
		{
			char key[1024];
			mfa_key(key, sizeof(key), jstr_or(v, "module", "?"),
			        jstr_or(v, "function", "?"),
			        (long long)json_number_value(json_object_get(v, "arity")));
			uintptr_t c = (uintptr_t)gi_map_get(&counts, key);
			gi_map_put(&counts, key,
			           (void *)(c + (uintptr_t)json_number_value(
			                            json_object_get(v, "count"))));
		}
		json_array_extend(errors, json_object_get(tr, "errors"));
		json_decref(tr);
	}
	if (rc)
		goto done;

	/* the static answer's dead functions, by key */
	struct gi_map dead_by_key;
	gi_map_init(&dead_by_key);
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(dead, "functions"), i, f)
	{
		char key[1024];
		mfa_key(key, sizeof(key), jstr_or(f, "module", "?"), jstr_or(f, "name", "?"),
		        (long long)json_integer_value(json_object_get(f, "arity")));
		gi_map_put(&dead_by_key, key, f);
	}
	json_t *missed = json_array(), *confirmed = json_array(), *idle = json_array();
	json_t *untraced = json_array();
	for (size_t k = 0; k < nmods; k++) {
		const char *mod = json_string_value(json_array_get(modules, k));
		if (!gi_map_get(&traced, mod)) {
			json_array_append_new(untraced, json_string(mod));
			continue;
		}
		struct kg_query_params p = {.module = mod};
		json_t *fns = NULL;
		if (kg_query(db, "functions", &p, &fns) != 0)
			continue;
		json_t *fn;
		size_t j;
		json_array_foreach(json_object_get(fns, "functions"), j, fn)
		{
			if (strcmp(jstr_or(fn, "visibility", ""), "public") != 0 ||
			    json_is_true(json_object_get(fn, "generated")))
				continue;
			char key[1024];
			long long arity =
			    (long long)json_integer_value(json_object_get(fn, "arity"));
			mfa_key(key, sizeof(key), mod, jstr_or(fn, "name", "?"), arity);
			uintptr_t calls = (uintptr_t)gi_map_get(&counts, key);
			const json_t *d = gi_map_get(&dead_by_key, key);
			json_t *row = json_pack("{s:s, s:s, s:I, s:I}", "module", mod, "name",
			                        jstr_or(fn, "name", "?"), "arity",
			                        (json_int_t)arity, "calls", (json_int_t)calls);
			if (d)
				json_object_set_new(row, "static_reason",
				                    json_string(jstr_or(d, "reason", "?")));
			if (d && calls > 0)
				json_array_append_new(missed, row);
			else if (d)
				json_array_append_new(confirmed, row);
			else if (calls == 0)
				json_array_append_new(idle, row);
			else
				json_decref(row);
		}
		json_decref(fns);
	}
	gi_map_destroy(&dead_by_key);
	json_object_set_new(result, "node", json_string(t->node));
	json_object_set_new(result, "window_ms", json_integer(window_ms));
	json_object_set_new(result, "windows", json_integer(batches));
	json_object_set_new(result, "modules_traced", json_integer((json_int_t)traced.len));
	json_object_set_new(result, "modules_not_loaded", untraced);
	json_object_set_new(result, "called_but_static_dead", missed);
	json_object_set_new(result, "dead_and_not_called", confirmed);
	json_object_set_new(result, "referenced_not_called", idle);
	json_object_set_new(result, "errors", json_incref(errors));
done:
	json_decref(errors);
	json_decref(modules);
	gi_map_destroy(&counts);
	gi_map_destroy(&traced);
	if (rc) {
		json_decref(result);
		return rc;
	}
	*out = result;
	return 0;
}
