/*
 * impact_check.c - what a planned rename, removal or arity change of a
 * function or a module touches (the query "impact_check", see assist.h and
 * docs/ASSIST.md "Pre-change impact"): every call site to update with its
 * file and line (calls, captures, literal MFAs and applies, imports), the
 * @spec, the @callback or protocol it belongs to, the implementations that
 * must follow, the defdelegates that point at it, and the name clashes the
 * new name or arity would make.
 *
 * Lines come from the store (one row per calling function and target: the
 * first line there and how many times); which rows are calls of the target
 * is decided by the graph's resolution (aliases, imports, `use`), so that a
 * call of a same-named function elsewhere is never listed. Dynamic calls
 * (apply with computed arguments) cannot be seen: the answer says so.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/error.h"
#include "graph/assist.h"
#include "graph/args.h"
#include "graph/search.h"
#include "store/store.h"

#define SITES_MAX 5000 /* sites listed; the counts go on */

enum action { ACTION_RENAME, ACTION_REMOVE, ACTION_ARITY };

struct sites {
	const struct kg_graph *g;
	int module, function; /* the target */
	json_t *list;
	int total, outside, tests, by_kind[FACTS_REF_KIND_COUNT + 16];
	json_t *files; /* set of files */
	bool module_refs;
};

static bool fn_calls(const struct kg_graph *g, int from_fn, int to_fn, int kind)
{
	const struct kg_function *f = kg_function_at(g, from_fn);
	for (size_t i = 0; i < f->callees.len; i++) {
		const struct kg_call *c = kg_call_at(g, GI_VEC_AT(&f->callees, int, i));
		if (c->to_fn == to_fn && (int)c->kind == kind)
			return true;
	}
	return false;
}

/* Whether a call row names a function of the target: the graph resolved
 * the calling function's call of that kind to it. */
static int target_fn_of(struct sites *s, const struct st_site_row *r, int caller)
{
	const struct kg_graph *g = s->g;
	if (s->function >= 0) {
		const struct kg_function *t = kg_function_at(g, s->function);
		if (r->arity != t->arity && r->arity != -1)
			return -1;
		return fn_calls(g, caller, s->function, r->kind) ? s->function : -1;
	}
	const struct kg_module *m = kg_module_at(g, s->module);
	for (size_t i = 0; i < m->functions.len; i++) {
		int fi = GI_VEC_AT(&m->functions, int, i);
		const struct kg_function *t = kg_function_at(g, fi);
		if (r->function && strcmp(t->name, r->function) == 0 &&
		    (r->arity == t->arity || r->arity == -1) && fn_calls(g, caller, fi, r->kind))
			return fi;
	}
	return -1;
}

static void site_add(struct sites *s, const struct st_site_row *r, const char *kind,
                     const char *target, bool test, bool outside)
{
	s->total++;
	s->outside += outside;
	s->tests += test;
	json_object_set_new(s->files, r->file, json_true());
	if (json_array_size(s->list) >= SITES_MAX)
		return;
	char caller[2 * KG_NAME_MAX];
	if (r->caller_function)
		snprintf(caller, sizeof(caller), "%s.%s/%d", r->caller_module, r->caller_function,
		         r->caller_arity);
	else
		snprintf(caller, sizeof(caller), "%s", r->caller_module);
	json_array_append_new(s->list,
	                      json_pack("{s:s, s:i, s:s, s:s, s:s, s:i, s:b}", "file", r->file,
	                                "line", (int)r->line, "caller", caller, "kind", kind,
	                                "target", target, "count", r->count, "test", test));
}

static int call_site(void *ctx, const struct st_site_row *r)
{
	struct sites *s = ctx;
	const struct kg_graph *g = s->g;
	if (r->kind < 0 || r->kind > FACTS_CALL_IMPL || r->kind == FACTS_CALL_DYNAMIC)
		return 0;
	int cm = kg_graph_module_find(g, r->caller_module);
	if (cm < 0 || !r->caller_function)
		return 0;
	int caller = kg_graph_function_find(g, cm, r->caller_function, r->caller_arity);
	if (caller < 0)
		return 0;
	int fi = target_fn_of(s, r, caller);
	if (fi < 0)
		return 0;
	const struct kg_function *t = kg_function_at(g, fi);
	char target[2 * KG_NAME_MAX];
	snprintf(target, sizeof(target), "%s.%s/%d", kg_module_at(g, t->module)->name, t->name,
	         t->arity);
	s->by_kind[r->kind]++;
	site_add(s, r, facts_call_kind_name((enum facts_call_kind)r->kind), target,
	         kg_module_at(g, cm)->test, cm != s->module);
	return 0;
}

static int ref_site(void *ctx, const struct st_site_row *r)
{
	struct sites *s = ctx;
	/* calls, captures, MFAs and applies are listed one by one as calls */
	if (r->kind < 0 || r->kind >= FACTS_REF_KIND_COUNT || r->kind == FACTS_REF_CALL ||
	    r->kind == FACTS_REF_CAPTURE || r->kind == FACTS_REF_MFA || r->kind == FACTS_REF_APPLY)
		return 0;
	int cm = kg_graph_module_find(s->g, r->caller_module);
	if (cm < 0 || cm == s->module)
		return 0;
	site_add(s, r, facts_ref_kind_name((enum facts_ref_kind)r->kind),
	         kg_module_at(s->g, s->module)->name, kg_module_at(s->g, cm)->test, true);
	return 0;
}

static bool valid_function_name(const char *n)
{
	size_t len = strlen(n);
	if (len == 0 || len > 255 || !(islower((unsigned char)n[0]) || n[0] == '_'))
		return false;
	for (size_t i = 1; i < len; i++) {
		unsigned char c = (unsigned char)n[i];
		bool last = i == len - 1;
		if (!(isalnum(c) || c == '_' || (last && (c == '?' || c == '!'))))
			return false;
	}
	return true;
}

static bool valid_module_name(const char *n)
{
	size_t len = strlen(n);
	if (len == 0 || len > KG_NAME_MAX)
		return false;
	if (n[0] == ':')
		return len > 1;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)n[i];
		bool start = i == 0 || n[i - 1] == '.';
		if (start ? !isupper(c) : !(isalnum(c) || c == '_' || c == '.'))
			return false;
	}
	return n[len - 1] != '.';
}

static const char *arg_string(const json_t *args, const char *key)
{
	return json_string_value(json_object_get(args, key));
}

static int arg_arity(const json_t *args, int *out)
{
	const json_t *v = json_object_get(args, "new_arity");
	long long a = -1;
	if (json_is_integer(v))
		a = json_integer_value(v);
	else if (json_is_string(v)) {
		char *end = NULL;
		a = strtoll(json_string_value(v), &end, 10);
		if (!end || *end || end == json_string_value(v))
			a = -1;
	} else if (v)
		a = -1;
	else
		return 1;
	if (a < 0 || a > 255) {
		kg_query_fail("new_arity must be an integer from 0 to 255");
		return GI_EINVAL;
	}
	*out = (int)a;
	return 0;
}

static int action_parse(const json_t *args, bool module, enum action *a, const char **new_name,
                        int *new_arity)
{
	const char *act = arg_string(args, "action");
	*new_name = arg_string(args, "new_name");
	*new_arity = -1;
	int rc = arg_arity(args, new_arity);
	if (rc < 0)
		return rc;
	if (!act)
		act = *new_name ? "rename" : *new_arity >= 0 ? "arity" : NULL;
	if (!act) {
		kg_query_fail(
		    "say what is planned: action rename (with new_name), remove, or arity "
		    "(with new_arity)");
		return GI_EINVAL;
	}
	if (strcmp(act, "rename") == 0)
		*a = ACTION_RENAME;
	else if (strcmp(act, "remove") == 0)
		*a = ACTION_REMOVE;
	else if (strcmp(act, "arity") == 0)
		*a = ACTION_ARITY;
	else {
		kg_query_fail("unknown action '%.100s': rename, remove or arity", act);
		return GI_EINVAL;
	}
	if (*a == ACTION_ARITY && module) {
		kg_query_fail("an arity change needs a function (MOD.fun/arity), not a module");
		return GI_EINVAL;
	}
	if (*a == ACTION_ARITY && *new_arity < 0) {
		kg_query_fail("an arity change needs new_arity");
		return GI_EINVAL;
	}
	if (*a == ACTION_RENAME && !*new_name) {
		kg_query_fail("a rename needs new_name");
		return GI_EINVAL;
	}
	if (*a == ACTION_RENAME &&
	    !(module ? valid_module_name(*new_name) : valid_function_name(*new_name))) {
		kg_query_fail("new_name '%.200s' is not a valid %s name", *new_name,
		              module ? "module" : "function");
		return GI_EINVAL;
	}
	return 0;
}

static const char *action_name(enum action a)
{
	return a == ACTION_RENAME ? "rename" : a == ACTION_REMOVE ? "remove" : "arity";
}

static void note(json_t *notes, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(json_t *notes, const char *fmt, ...)
{
	char buf[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_array_append_new(notes, json_string(buf));
}

static bool has_callback(const struct kg_module *m, const char *name_arity)
{
	for (size_t i = 0; i < m->callbacks.len; i++)
		if (strcmp(GI_VEC_AT(&m->callbacks, const char *, i), name_arity) == 0)
			return true;
	return false;
}

static json_t *fn_ref(const struct kg_graph *g, int fi)
{
	const struct kg_function *f = kg_function_at(g, fi);
	const struct kg_module *m = kg_module_at(g, f->module);
	return json_pack("{s:s, s:s, s:i, s:s?, s:i}", "module", m->name, "name", f->name, "arity",
	                 f->arity, "file", m->file, "line", f->line_start);
}

/* The contracts a function is part of: the behaviour callback it
 * implements or defines, the protocol function it implements or is. */
static void function_contracts(const struct kg_graph *g, int fi, json_t *out, json_t *notes)
{
	const struct kg_function *f = kg_function_at(g, fi);
	const struct kg_module *m = kg_module_at(g, f->module);
	char na[KG_NAME_MAX + 16];
	snprintf(na, sizeof(na), "%s/%d", f->name, f->arity);
	json_t *implements = json_array(), *implementations = json_array();
	/* a callback of a behaviour the module adopts */
	for (size_t i = 0; i < m->out.len; i++) {
		const struct kg_edge *e = kg_edge_at(g, GI_VEC_AT(&m->out, int, i));
		if (!(e->kinds & (1u << FACTS_REF_BEHAVIOUR)))
			continue;
		const struct kg_module *b = kg_module_at(g, e->to);
		if (has_callback(b, na))
			json_array_append_new(implements,
			                      json_pack("{s:s, s:s, s:s}", "kind", "callback",
			                                "behaviour", b->name, "callback", na));
	}
	if (m->kind == FACTS_IMPL && m->protocol)
		json_array_append_new(implements, json_pack("{s:s, s:s, s:s, s:s?}", "kind",
		                                            "protocol", "protocol", m->protocol,
		                                            "function", na, "for", m->impl_for));
	if (f->has_impl && json_array_size(implements) == 0)
		json_array_append_new(implements,
		                      json_pack("{s:s, s:s, s:s}", "kind", "callback", "behaviour",
		                                "(outside the project)", "callback", na));
	/* defined here: a @callback of this behaviour, or a protocol function */
	bool is_callback = has_callback(m, na), is_protocol_fn = m->kind == FACTS_PROTOCOL;
	if (is_callback || is_protocol_fn) {
		for (size_t i = 0; i < g->modules.len; i++) {
			const struct kg_module *x = kg_module_at(g, (int)i);
			bool impl = false;
			if (is_protocol_fn)
				impl = x->kind == FACTS_IMPL && x->protocol &&
				       strcmp(x->protocol, m->name) == 0;
			for (size_t k = 0; is_callback && !impl && k < x->out.len; k++) {
				const struct kg_edge *e = kg_edge_at(g, GI_VEC_AT(&x->out, int, k));
				impl =
				    e->to == f->module && (e->kinds & (1u << FACTS_REF_BEHAVIOUR));
			}
			if (!impl)
				continue;
			int xf = kg_graph_function_find(g, (int)i, f->name, f->arity);
			json_t *o = xf >= 0 && kg_function_at(g, xf)->defined
			                ? fn_ref(g, xf)
			                : json_pack("{s:s, s:s?, s:b}", "module", x->name, "file",
			                            x->file, "missing", 1);
			json_array_append_new(implementations, o);
		}
	}
	json_object_set_new(out, "implements", implements);
	json_object_set_new(
	    out, "defines",
	    json_pack("{s:b, s:b}", "callback", is_callback, "protocol_function", is_protocol_fn));
	json_object_set_new(out, "implementations", implementations);
	if (json_array_size(implements))
		note(
		    notes,
		    "%s implements a behaviour callback or protocol function: renaming or removing "
		    "it breaks the contract",
		    na);
	if (json_array_size(implementations))
		note(notes, "%s is part of a contract: each of its implementations must change too",
		     na);
}

/* defdelegates in the project that point at function `fi`. */
static json_t *delegates_to(const struct kg_graph *g, int fi)
{
	json_t *a = json_array();
	const struct kg_function *t = kg_function_at(g, fi);
	for (size_t i = 0; i < t->callers.len; i++) {
		const struct kg_call *c = kg_call_at(g, GI_VEC_AT(&t->callers, int, i));
		const struct kg_function *from = kg_function_at(g, c->from_fn);
		if (from->delegate_to &&
		    strcmp(from->delegate_to, kg_module_at(g, t->module)->name) == 0)
			json_array_append_new(a, fn_ref(g, c->from_fn));
	}
	return a;
}

static void summary_json(struct sites *s, json_t *out)
{
	json_t *kinds = json_object();
	for (int k = 0; k <= FACTS_CALL_IMPL; k++)
		if (s->by_kind[k])
			json_object_set_new(kinds, facts_call_kind_name((enum facts_call_kind)k),
			                    json_integer(s->by_kind[k]));
	json_object_set_new(out, "sites", s->list);
	json_object_set_new(out, "summary",
	                    json_pack("{s:i, s:i, s:i, s:i, s:o, s:b}", "sites", s->total,
	                              "outside_module", s->outside, "in_tests", s->tests, "files",
	                              (int)json_object_size(s->files), "calls_by_kind", kinds,
	                              "truncated", s->total > SITES_MAX));
	json_decref(s->files);
}

static int function_check(const struct kg_graph *g, struct st_db *st, int fi, enum action a,
                          const char *new_name, int new_arity, json_t *out, json_t *notes)
{
	const struct kg_function *f = kg_function_at(g, fi);
	const struct kg_module *m = kg_module_at(g, f->module);
	struct sites s = {.g = g, .module = f->module, .function = fi};
	s.list = json_array();
	s.files = json_object();
	int rc = st_call_sites_each(st, f->name, call_site, &s);
	if (rc) {
		json_decref(s.list);
		json_decref(s.files);
		return rc;
	}
	json_object_set_new(out, "definition",
	                    json_pack("{s:s?, s:i, s:i, s:s, s:b, s:b, s:s?}", "file", m->file,
	                              "line", f->line_start, "line_end", f->line_end, "visibility",
	                              f->is_public ? "public" : "private", "has_spec", f->has_spec,
	                              "has_doc", f->has_doc && !f->doc_false, "delegates_to",
	                              f->delegate_to));
	int captures = s.by_kind[FACTS_CALL_CAPTURE],
	    literal = s.by_kind[FACTS_CALL_MFA] + s.by_kind[FACTS_CALL_APPLY];
	summary_json(&s, out);
	if (f->has_spec && a != ACTION_REMOVE)
		note(notes, "update the @spec of %s too", f->name);
	if (f->has_spec && a == ACTION_REMOVE)
		note(notes, "remove the @spec of %s too", f->name);
	json_t *delegates = delegates_to(g, fi);
	json_object_set_new(out, "delegates", delegates);
	if (json_array_size(delegates))
		note(notes, "defdelegates point at %s: change their name or `as:` too", f->name);
	if (captures)
		note(notes, "captures (&%s/n) fix the arity: update each", f->name);
	if (literal)
		note(notes,
		     "literal MFAs or apply/3 name %s as an atom: a compiler will not catch them",
		     f->name);
	function_contracts(g, fi, out, notes);
	json_t *clash = json_null();
	if (a == ACTION_RENAME || a == ACTION_ARITY) {
		const char *name = a == ACTION_RENAME ? new_name : f->name;
		int arity = a == ACTION_ARITY ? new_arity : f->arity;
		int other = kg_graph_function_find(g, f->module, name, arity);
		if (other >= 0 && other != fi && kg_function_at(g, other)->defined) {
			clash = fn_ref(g, other);
			note(notes, "%s already exists: the change would merge two functions",
			     name);
		}
		char target[KG_NAME_MAX + 16];
		snprintf(target, sizeof(target), "%s/%d", name, arity);
		json_object_set_new(out, "new", json_string(target));
	}
	json_object_set_new(out, "clash", clash);
	if (!f->is_public && s.outside == 0)
		note(notes, "%s is private: only its own module calls it", f->name);
	return 0;
}

static int module_check(const struct kg_graph *g, struct st_db *st, int mi, enum action a,
                        const char *new_name, json_t *out, json_t *notes)
{
	const struct kg_module *m = kg_module_at(g, mi);
	struct sites s = {.g = g, .module = mi, .function = -1};
	s.list = json_array();
	s.files = json_object();
	int rc = st_ref_sites_each(st, m->name, ref_site, &s);
	if (!rc)
		rc = st_module_call_sites_each(st, m->name, call_site, &s);
	if (rc) {
		json_decref(s.list);
		json_decref(s.files);
		return rc;
	}
	/* imported and `use`-injected calls name no module: the graph's callers */
	json_t *imported = json_array();
	for (size_t i = 0; i < m->functions.len; i++) {
		const struct kg_function *f = kg_function_at(g, GI_VEC_AT(&m->functions, int, i));
		for (size_t k = 0; k < f->callers.len; k++) {
			const struct kg_call *c = kg_call_at(g, GI_VEC_AT(&f->callers, int, k));
			int from_module = kg_function_at(g, c->from_fn)->module;
			if (c->kind == FACTS_CALL_LOCAL && from_module != mi &&
			    json_array_size(imported) < SITES_MAX)
				json_array_append_new(imported, fn_ref(g, c->from_fn));
		}
	}
	summary_json(&s, out);
	json_object_set_new(out, "imported_calls", imported);
	json_object_set_new(out, "definition",
	                    json_pack("{s:s?, s:i, s:i, s:s}", "file", m->file, "line",
	                              m->line_start, "line_end", m->line_end, "kind",
	                              facts_module_kind_name(m->kind)));
	json_t *nested = json_array();
	size_t len = strlen(m->name);
	for (size_t i = 0; i < g->modules.len; i++) {
		const struct kg_module *x = kg_module_at(g, (int)i);
		if (x->project && strncmp(x->name, m->name, len) == 0 && x->name[len] == '.')
			json_array_append_new(nested, json_string(x->name));
	}
	json_object_set_new(out, "nested_modules", nested);
	if (json_array_size(nested))
		note(notes,
		     "modules are nested under %s: a rename of the namespace renames them too "
		     "(they are not counted here)",
		     m->name);
	json_t *implementations = json_array();
	for (size_t i = 0; i < g->modules.len; i++) {
		const struct kg_module *x = kg_module_at(g, (int)i);
		bool impl = m->kind == FACTS_PROTOCOL && x->kind == FACTS_IMPL && x->protocol &&
		            strcmp(x->protocol, m->name) == 0;
		for (size_t k = 0; !impl && m->callbacks.len && k < x->out.len; k++) {
			const struct kg_edge *e = kg_edge_at(g, GI_VEC_AT(&x->out, int, k));
			impl = e->to == mi && (e->kinds & (1u << FACTS_REF_BEHAVIOUR));
		}
		if (impl)
			json_array_append_new(implementations, json_pack("{s:s, s:s?}", "module",
			                                                 x->name, "file", x->file));
	}
	json_object_set_new(out, "implementations", implementations);
	if (json_array_size(implementations))
		note(notes, "%s is a %s: its implementations name it and must follow", m->name,
		     m->kind == FACTS_PROTOCOL ? "protocol" : "behaviour");
	if (m->kind == FACTS_IMPL && m->protocol)
		note(notes, "%s implements the protocol %s", m->name, m->protocol);
	json_t *clash = json_null();
	if (a == ACTION_RENAME) {
		int other = kg_graph_module_find(g, new_name);
		if (other >= 0 && kg_module_at(g, other)->project) {
			const struct kg_module *o = kg_module_at(g, other);
			clash = json_pack("{s:s, s:s?}", "module", o->name, "file", o->file);
			note(notes, "%s already exists in the project", new_name);
		}
		json_object_set_new(out, "new", json_string(new_name));
	}
	json_object_set_new(out, "clash", clash);
	return 0;
}

int kg_impact_check(const struct kg_graph *g, struct st_db *st, int module, int function,
                    const json_t *args, json_t *out)
{
	enum action a;
	const char *new_name = NULL;
	int new_arity = -1;
	int rc = action_parse(args, function < 0, &a, &new_name, &new_arity);
	if (rc)
		return rc;
	const struct kg_module *m = kg_module_at(g, module);
	json_object_set_new(out, "action", json_string(action_name(a)));
	json_object_set_new(out, "module", json_string(m->name));
	if (function >= 0) {
		const struct kg_function *f = kg_function_at(g, function);
		char na[KG_NAME_MAX + 16];
		snprintf(na, sizeof(na), "%s/%d", f->name, f->arity);
		json_object_set_new(out, "function", json_string(na));
	} else {
		json_object_set_new(out, "function", json_null());
	}
	json_t *notes = json_array();
	rc = function >= 0 ? function_check(g, st, function, a, new_name, new_arity, out, notes)
	                   : module_check(g, st, module, a, new_name, out, notes);
	if (rc) {
		json_decref(notes);
		return rc;
	}
	note(notes,
	     "dynamic calls (apply/3 or a module held in a variable) cannot be seen: search the "
	     "text for the name too");
	json_object_set_new(out, "notes", notes);
	long long outside =
	    json_integer_value(json_object_get(json_object_get(out, "summary"), "outside_module"));
	bool contract = json_array_size(json_object_get(out, "implements")) ||
	                json_array_size(json_object_get(out, "implementations"));
	const char *verdict = !json_is_null(json_object_get(out, "clash")) ? "clash"
	                      : outside || contract                        ? "breaking"
	                                                                   : "local";
	json_object_set_new(out, "verdict", json_string(verdict));
	return 0;
}

int kg_impact_check_callback(const struct kg_graph *g, int module, const char *name, int arity,
                             const json_t *args, json_t *out)
{
	enum action a;
	const char *new_name = NULL;
	int new_arity = -1;
	int rc = action_parse(args, false, &a, &new_name, &new_arity);
	if (rc)
		return rc;
	const struct kg_module *m = kg_module_at(g, module);
	char na[KG_NAME_MAX + 16];
	snprintf(na, sizeof(na), "%s/%d", name, arity);
	json_object_set_new(out, "action", json_string(action_name(a)));
	json_object_set_new(out, "module", json_string(m->name));
	json_object_set_new(out, "function", json_string(na));
	json_object_set_new(out, "callback", json_true());
	json_t *impls = json_array(), *notes = json_array();
	int missing = 0;
	for (size_t i = 0; i < g->modules.len; i++) {
		const struct kg_module *x = kg_module_at(g, (int)i);
		bool adopts = false;
		for (size_t k = 0; !adopts && k < x->out.len; k++) {
			const struct kg_edge *e = kg_edge_at(g, GI_VEC_AT(&x->out, int, k));
			adopts = e->to == module && (e->kinds & (1u << FACTS_REF_BEHAVIOUR));
		}
		if (!adopts)
			continue;
		int xf = kg_graph_function_find(g, (int)i, name, arity);
		if (xf >= 0 && kg_function_at(g, xf)->defined) {
			json_array_append_new(impls, fn_ref(g, xf));
		} else {
			missing++;
			json_array_append_new(impls,
			                      json_pack("{s:s, s:s?, s:b}", "module", x->name,
			                                "file", x->file, "missing", 1));
		}
	}
	json_object_set_new(out, "implementations", impls);
	json_object_set_new(out, "summary",
	                    json_pack("{s:i, s:i}", "implementations",
	                              (int)json_array_size(impls) - missing, "missing", missing));
	note(notes,
	     "%s is a @callback of %s: each implementation must change with it, and the modules "
	     "that call it through the behaviour (a module held in a variable) are not visible",
	     na, m->name);
	if (missing)
		note(notes, "%d module(s) adopting %s do not define %s", missing, m->name, na);
	json_object_set_new(out, "notes", notes);
	json_object_set_new(out, "verdict",
	                    json_string(json_array_size(impls) ? "breaking" : "local"));
	return 0;
}
