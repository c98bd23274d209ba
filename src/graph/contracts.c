/*
 * contracts.c - the `contracts`, `conventions`, `structs` and `duplicates`
 * queries (see contracts.h; every check, its id and severity in
 * docs/CHECKS.md).
 *
 * The graph gives modules, functions, their metrics and the behaviour and
 * use edges; the index's sites table (facts.h, struct facts_site) gives what
 * has a place in the source and that the graph does not keep: @impl, the
 * @specs without a function, @optional_callbacks, struct sites, to_atom and
 * apply calls, clause body hashes. Sites are read per query, filtered by
 * kind in SQL. A behaviour defined outside the project is read from its
 * object code, once per query.
 *
 * Invariant: a check reports only what it is sure of. A module that `use`s
 * a module Giulia cannot read (neither in the project nor installed object
 * code) may get callbacks and a @behaviour from it, so such a module gets
 * no missing-callback or @impl findings.
 */
#include "graph/contracts.h"

#include <glob.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/arena.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/hash.h"
#include "graph/args.h"
#include "base/map.h"
#include "base/modname.h"
#include "base/str.h"
#include "base/vec.h"
#include "graph/search.h"
#include "source/beam.h"
#include "source/elixir.h"
#include "store/store.h"

#define LIMIT_DEFAULT 1000
#define LIMIT_MAX     100000
#define BEAM_DIRS_MAX 16

/* ---- arguments ----------------------------------------------------------- */

/* ---- sites ----------------------------------------------------------------- */

struct ct_site {
	int module; /* graph index, -1 when the graph does not have it */
	const char *module_name, *file;
	enum facts_site_kind kind;
	const char *name; /* NULL: module body */
	int arity;
	uint32_t line;
	const char *detail;
	uint64_t hash, hash2;
	uint32_t size;
};

struct ct_sites {
	struct gi_arena arena;
	struct gi_vec sites;   /* struct ct_site */
	struct gi_map modules; /* store id (decimal) -> struct ct_module_id * */
	const struct kg_graph *g;
};

struct ct_module_id {
	const char *name, *file;
};

static int module_id_row(void *ctx, const struct st_module_row *r)
{
	struct ct_sites *s = ctx;
	char key[32];
	snprintf(key, sizeof(key), "%lld", (long long)r->id);
	struct ct_module_id *m = gi_arena_calloc(&s->arena, 1, sizeof(*m));
	m->name = gi_arena_strdup(&s->arena, r->name);
	m->file = r->file ? gi_arena_strdup(&s->arena, r->file) : NULL;
	gi_map_put(&s->modules, key, m);
	return 0;
}

static int site_row(void *ctx, const struct st_fact_site_row *r)
{
	struct ct_sites *s = ctx;
	if (r->kind < 0 || r->kind >= FACTS_SITE_KIND_COUNT)
		return 0;
	char key[32];
	snprintf(key, sizeof(key), "%lld", (long long)r->module_id);
	const struct ct_module_id *m = gi_map_get(&s->modules, key);
	if (!m)
		return 0;
	struct ct_site *t = gi_vec_push_zero(&s->sites);
	t->module = kg_graph_module_find(s->g, m->name);
	t->module_name = m->name;
	t->file = m->file;
	t->kind = (enum facts_site_kind)r->kind;
	t->name = r->name ? gi_arena_strdup(&s->arena, r->name) : NULL;
	t->arity = r->arity;
	t->line = r->line;
	t->detail = r->detail ? gi_arena_strdup(&s->arena, r->detail) : NULL;
	t->hash = r->hash;
	t->hash2 = r->hash2;
	t->size = r->size;
	return 0;
}

/* Reads the sites of the kinds in `kinds` (bits 1u << enum facts_site_kind). */
static int sites_load(struct st_db *db, const struct kg_graph *g, unsigned kinds,
                      uint32_t min_body_size, struct ct_sites *s)
{
	gi_arena_init(&s->arena);
	gi_vec_init(&s->sites, sizeof(struct ct_site));
	gi_map_init(&s->modules);
	s->g = g;
	int rc = st_read_begin(db);
	if (rc)
		return rc;
	rc = st_modules_each(db, module_id_row, s);
	if (!rc)
		rc = st_sites_each(db, kinds, min_body_size, site_row, s);
	st_read_end(db);
	return rc;
}

static void sites_destroy(struct ct_sites *s)
{
	gi_vec_destroy(&s->sites);
	gi_map_destroy(&s->modules);
	gi_arena_destroy(&s->arena);
}

static const struct ct_site *site_at(const struct ct_sites *s, size_t i)
{
	return gi_vec_get(&s->sites, i);
}

/* ---- findings ---------------------------------------------------------- */

enum ct_severity { CT_ERROR = 0, CT_WARNING, CT_INFO };

static const char *severity_name(enum ct_severity s)
{
	static const char *const names[] = {"error", "warning", "info"};
	return names[s];
}

struct ct_finding {
	const char *check;
	enum ct_severity severity;
	const char *module, *file;
	const char *function; /* "name/arity" or NULL */
	uint32_t line;
	char *message;      /* owned */
	const char *detail; /* borrowed: the callback, behaviour, call ... or NULL */
};

struct ct_findings {
	struct gi_vec list; /* struct ct_finding */
	const char *module; /* filter: a module and those nested in it, or NULL */
	const char *check;  /* filter: one check id, or NULL */
};

static void finding_add(struct ct_findings *f, const char *check, enum ct_severity sev,
                        const char *module, const char *file, const char *function, uint32_t line,
                        const char *detail, const char *fmt, ...)
    __attribute__((format(printf, 9, 10)));

static void finding_add(struct ct_findings *f, const char *check, enum ct_severity sev,
                        const char *module, const char *file, const char *function, uint32_t line,
                        const char *detail, const char *fmt, ...)
{
	if (!kg_module_within(module, f->module) || (f->check && strcmp(f->check, check) != 0))
		return;
	struct ct_finding *x = gi_vec_push_zero(&f->list);
	x->check = check;
	x->severity = sev;
	x->module = module;
	x->file = file;
	x->function = function;
	x->line = line;
	x->detail = detail;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	x->message = gi_strdup(buf);
}

static int finding_order(const void *a, const void *b)
{
	const struct ct_finding *x = a, *y = b;
	if (x->severity != y->severity)
		return (int)x->severity - (int)y->severity;
	int c = strcmp(x->module, y->module);
	if (c)
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return strcmp(x->check, y->check);
}

/* Writes findings, counts (per check id) and total into `out`, at most
 * `limit` findings; frees the list. */
static void findings_write(struct ct_findings *f, int limit, json_t *out)
{
	gi_vec_sort(&f->list, finding_order);
	json_t *arr = json_array(), *counts = json_object(), *sev = json_object();
	for (size_t i = 0; i < f->list.len; i++) {
		struct ct_finding *x = gi_vec_get(&f->list, i);
		json_t *n = json_object_get(counts, x->check);
		json_object_set_new(counts, x->check,
		                    json_integer(n ? json_integer_value(n) + 1 : 1));
		n = json_object_get(sev, severity_name(x->severity));
		json_object_set_new(sev, severity_name(x->severity),
		                    json_integer(n ? json_integer_value(n) + 1 : 1));
		if ((int)i < limit) {
			json_t *o = json_object();
			json_object_set_new(o, "check", json_string(x->check));
			json_object_set_new(o, "severity", json_string(severity_name(x->severity)));
			json_object_set_new(o, "module", json_string(x->module));
			json_object_set_new(o, "function",
			                    x->function ? json_string(x->function) : json_null());
			json_object_set_new(o, "file",
			                    x->file ? json_string(x->file) : json_null());
			json_object_set_new(o, "line", json_integer(x->line));
			if (x->detail)
				json_object_set_new(o, "detail", json_string(x->detail));
			json_object_set_new(o, "message", json_string(x->message));
			json_array_append_new(arr, o);
		}
		gi_free(x->message);
	}
	json_object_set_new(out, "total", json_integer((json_int_t)f->list.len));
	json_object_set_new(out, "counts", counts);
	json_object_set_new(out, "by_severity", sev);
	json_object_set_new(out, "findings", arr);
	gi_vec_destroy(&f->list);
}

static int findings_init(struct ct_findings *f, const struct kg_query_params *p, int *limit)
{
	gi_vec_init(&f->list, sizeof(struct ct_finding));
	f->module = p ? p->module : NULL;
	f->check = json_string_value(kg_arg(p, "check"));
	return kg_arg_int(p, "limit", p && p->top ? p->top : LIMIT_DEFAULT, 1, LIMIT_MAX, limit);
}

/* ---- behaviours ---------------------------------------------------------- */

struct ct_behaviour {
	const char *name;
	bool resolved;           /* its callbacks are known */
	struct gi_map callbacks; /* "name/arity" -> (void *)1 required, (void *)2 optional */
	struct gi_vec order;     /* const char *: the callbacks in declaration order */
};

struct ct_behaviours {
	struct gi_map by_name; /* name -> struct ct_behaviour * */
	struct gi_map known; /* name -> (void *)1 readable, (void *)2 not: module_known's answers */
	struct gi_arena arena;
	const struct kg_graph *g;
	const struct ct_sites *sites; /* OPTIONAL_CALLBACK sites of the project */
};

static void behaviour_callback_add(struct ct_behaviours *bs, struct ct_behaviour *b, const char *cb)
{
	if (gi_map_get(&b->callbacks, cb))
		return;
	gi_map_put(&b->callbacks, cb, (void *)1);
	const char *copy = gi_arena_strdup(&bs->arena, cb);
	gi_vec_push(&b->order, &copy);
}

static void behaviour_optional_add(struct ct_behaviour *b, const char *name, int arity)
{
	char cb[600];
	snprintf(cb, sizeof(cb), "%s/%d", name, arity);
	if (gi_map_get(&b->callbacks, cb))
		gi_map_put(&b->callbacks, cb, (void *)2);
}

/* The object code of module `name` under the installed ebin directories:
 * a path the caller frees, or NULL. */
static char *behaviour_beam_find(const char *name)
{
	char atom[512];
	if (gi_module_atom_name(name, atom, sizeof(atom)) != 0)
		return NULL;
	const char *dirs[BEAM_DIRS_MAX + 1] = {"/usr/lib/elixir/lib/*/ebin",
	                                       "/usr/lib/erlang/lib/*/ebin", NULL};
	char *env =
	    getenv("GIULIA_BEHAVIOUR_BEAMS") ? gi_strdup(getenv("GIULIA_BEHAVIOUR_BEAMS")) : NULL;
	if (env) {
		int n = 0;
		for (char *save = NULL, *t = strtok_r(env, ":", &save); t && n < BEAM_DIRS_MAX;
		     t = strtok_r(NULL, ":", &save))
			dirs[n++] = t;
		dirs[n] = NULL;
	}
	char *found = NULL;
	for (int i = 0; dirs[i] && !found; i++) {
		char pattern[2048];
		if (snprintf(pattern, sizeof(pattern), "%s/%s.beam", dirs[i], atom) >=
		    (int)sizeof(pattern))
			continue;
		glob_t gl;
		if (glob(pattern, 0, NULL, &gl) == 0 && gl.gl_pathc > 0)
			found = gi_strdup(gl.gl_pathv[gl.gl_pathc - 1]); /* the last version */
		globfree(&gl);
	}
	gi_free(env);
	return found;
}

/* Fills `b` from the object code of module b->name, when installed. */
static void behaviour_from_beam(struct ct_behaviours *bs, struct ct_behaviour *b)
{
	char *path = behaviour_beam_find(b->name);
	if (!path)
		return;
	struct facts_file *f = NULL;
	char err[256];
	if (beam_read_file(path, &f, err, sizeof(err)) == 0 && f && f->modules.len > 0) {
		const struct facts_module *m = gi_vec_get(&f->modules, 0);
		for (size_t i = 0; i < m->callbacks.len; i++)
			behaviour_callback_add(bs, b, GI_VEC_AT(&m->callbacks, const char *, i));
		for (size_t i = 0; i < m->sites.len; i++) {
			const struct facts_site *s = gi_vec_get(&m->sites, i);
			if (s->kind == FACTS_SITE_OPTIONAL_CALLBACK)
				behaviour_optional_add(b, s->name, s->arity);
		}
		b->resolved = m->callbacks.len > 0;
	}
	facts_file_free(f);
	gi_free(path);
}

/* The behaviour `name`: from the project when it defines the module, else
 * from installed object code; resolved false when neither declares
 * callbacks. */
static struct ct_behaviour *behaviour_get(struct ct_behaviours *bs, const char *name)
{
	struct ct_behaviour *b = gi_map_get(&bs->by_name, name);
	if (b)
		return b;
	b = gi_arena_calloc(&bs->arena, 1, sizeof(*b));
	b->name = gi_arena_strdup(&bs->arena, name);
	gi_map_init(&b->callbacks);
	gi_vec_init(&b->order, sizeof(const char *));
	gi_map_put(&bs->by_name, name, b);
	int m = kg_graph_module_find(bs->g, name);
	const struct kg_module *km = m >= 0 ? kg_module_at(bs->g, m) : NULL;
	if (km && km->project) {
		for (size_t i = 0; i < km->callbacks.len; i++)
			behaviour_callback_add(bs, b, GI_VEC_AT(&km->callbacks, const char *, i));
		for (size_t i = 0; i < bs->sites->sites.len; i++) {
			const struct ct_site *s = site_at(bs->sites, i);
			if (s->module == m && s->kind == FACTS_SITE_OPTIONAL_CALLBACK)
				behaviour_optional_add(b, s->name, s->arity);
		}
		b->resolved = km->callbacks.len > 0 && km->kind != FACTS_PROTOCOL;
	} else {
		behaviour_from_beam(bs, b);
	}
	return b;
}

/* True when `name` is a module Giulia can read: in the project, or
 * installed object code. */
static bool module_known(struct ct_behaviours *bs, const char *name)
{
	int m = kg_graph_module_find(bs->g, name);
	if (m >= 0 && kg_module_at(bs->g, m)->project)
		return true;
	struct ct_behaviour *b = behaviour_get(bs, name);
	if (b->resolved)
		return true;
	uintptr_t k = (uintptr_t)gi_map_get(&bs->known, name);
	if (!k) {
		char *path = behaviour_beam_find(name);
		k = path ? 1 : 2;
		gi_free(path);
		gi_map_put(&bs->known, name, (void *)k);
	}
	return k == 1;
}

static void behaviours_destroy(struct ct_behaviours *bs)
{
	for (size_t i = 0; i < bs->by_name.cap; i++) {
		struct ct_behaviour *b =
		    bs->by_name.slots[i].key ? bs->by_name.slots[i].value : NULL;
		if (b) {
			gi_map_destroy(&b->callbacks);
			gi_vec_destroy(&b->order);
		}
	}
	gi_map_destroy(&bs->by_name);
	gi_map_destroy(&bs->known);
	gi_arena_destroy(&bs->arena);
}

/* What one module declares: its behaviours (explicit, and those a `use`d
 * behaviour module brings) and whether a `use` of an unreadable module
 * leaves that uncertain. */
struct ct_declared {
	struct ct_behaviour *list[32];
	int count;
	bool uncertain;  /* a `use` of a module Giulia cannot read */
	bool unresolved; /* a declared behaviour whose callbacks are unknown */
	const char *unresolved_name;
};

static void declared_add(struct ct_declared *d, struct ct_behaviour *b)
{
	for (int i = 0; i < d->count; i++)
		if (d->list[i] == b)
			return;
	if (d->count < 32)
		d->list[d->count++] = b;
}

/* True when module `km` is an exception (`defexception`), which the
 * compiler makes declare `@behaviour Exception`. */
static bool module_is_exception(const struct kg_graph *g, const struct kg_module *km)
{
	for (size_t i = 0; i < km->functions.len; i++) {
		const struct kg_function *fn = kg_function_at(g, GI_VEC_AT(&km->functions, int, i));
		if (fn->generated_by && strcmp(fn->generated_by, "defexception") == 0)
			return true;
	}
	return false;
}

static void declared_read(struct ct_behaviours *bs, int m, struct ct_declared *d)
{
	memset(d, 0, sizeof(*d));
	const struct kg_module *km = kg_module_at(bs->g, m);
	if (km->inject_opaque)
		d->uncertain = true;
	if (module_is_exception(bs->g, km)) {
		struct ct_behaviour *b = behaviour_get(bs, "Exception");
		if (b->resolved)
			declared_add(d, b);
		else
			d->uncertain = true; /* Exception's object code is not installed */
	}
	for (size_t i = 0; i < km->out.len; i++) {
		const struct kg_edge *e = kg_edge_at(bs->g, GI_VEC_AT(&km->out, int, i));
		const char *target = kg_module_at(bs->g, e->to)->name;
		if (e->kinds & (1u << FACTS_REF_BEHAVIOUR)) {
			struct ct_behaviour *b = behaviour_get(bs, target);
			declared_add(d, b);
			if (!b->resolved && !d->unresolved) {
				d->unresolved = true;
				d->unresolved_name = b->name;
			}
		}
		if (e->kinds & (1u << FACTS_REF_USE)) {
			/* A project module whose __using__ was read declares what
			 * its quotes say (@behaviour injected: a behaviour edge);
			 * `use` alone declares nothing. */
			if (kg_module_at(bs->g, e->to)->using_read)
				continue;
			struct ct_behaviour *b = behaviour_get(bs, target);
			if (b->resolved)
				declared_add(d, b);
			else if (!module_known(bs, target))
				d->uncertain = true;
		}
	}
}

/* ---- contracts ----------------------------------------------------------- */

/* The defined functions of module `m`, "name/arity" -> function index + 1. */
static void functions_map(const struct kg_graph *g, int m, struct gi_map *out)
{
	gi_map_init(out);
	const struct kg_module *km = kg_module_at(g, m);
	for (size_t i = 0; i < km->functions.len; i++) {
		int fi = GI_VEC_AT(&km->functions, int, i);
		const struct kg_function *fn = kg_function_at(g, fi);
		if (!fn->defined)
			continue;
		char key[600];
		snprintf(key, sizeof(key), "%s/%d", fn->name, fn->arity);
		gi_map_put(out, key, (void *)(intptr_t)(fi + 1));
	}
}

static void missing_callbacks(struct ct_findings *f, const struct kg_graph *g, int m,
                              const struct ct_declared *d, const struct gi_map *fns)
{
	const struct kg_module *km = kg_module_at(g, m);
	for (int i = 0; i < d->count; i++) {
		const struct ct_behaviour *b = d->list[i];
		if (!b->resolved)
			continue;
		for (size_t j = 0; j < b->order.len; j++) {
			const char *cb = GI_VEC_AT(&b->order, const char *, j);
			if ((intptr_t)gi_map_get(&b->callbacks, cb) != 1 || gi_map_get(fns, cb))
				continue;
			finding_add(f, "missing_callback", CT_WARNING, km->name, km->file, NULL,
			            km->line_start, cb,
			            "%s declares @behaviour %s but does not define its callback %s",
			            km->name, b->name, cb);
		}
	}
}

static bool behaviour_has(const struct ct_behaviour *b, const char *cb)
{
	return b->resolved && gi_map_get(&b->callbacks, cb) != NULL;
}

/* True when `b` has a callback among the arities the @impl site `s` names:
 * its head's arity and the lower ones its default arguments generate (the
 * compiler's rule, Module.check_impls). */
static bool behaviour_has_any(const struct ct_behaviour *b, const struct ct_site *s)
{
	char cb[600];
	for (int arity = s->arity; arity >= 0 && arity >= s->arity - (int)s->size; arity--) {
		snprintf(cb, sizeof(cb), "%s/%d", s->name, arity);
		if (behaviour_has(b, cb))
			return true;
	}
	return false;
}

/* @impl sites of module `m` checked against what it declares. */
static void impl_checks(struct ct_findings *f, struct ct_behaviours *bs, const struct ct_site *s,
                        const struct ct_declared *d)
{
	const struct kg_module *km = kg_module_at(bs->g, s->module);
	char cb[600];
	snprintf(cb, sizeof(cb), "%s/%d", s->name, s->arity);
	const char *fn = gi_arena_strdup(&bs->arena, cb);
	bool is_true = !s->detail || strcmp(s->detail, "true") == 0;
	bool is_false = s->detail && strcmp(s->detail, "false") == 0;
	if (d->count == 0) {
		if (is_false)
			return; /* @impl false with no behaviour: nothing to contradict */
		finding_add(f, "impl_without_behaviour", CT_WARNING, km->name, km->file, fn,
		            s->line, s->detail, "@impl %s on %s, but %s declares no behaviour",
		            is_true ? "true" : s->detail, fn, km->name);
		return;
	}
	if (d->unresolved)
		return;
	if (is_false) {
		for (int i = 0; i < d->count; i++)
			if (behaviour_has_any(d->list[i], s))
				finding_add(f, "impl_not_callback", CT_WARNING, km->name, km->file,
				            fn, s->line, s->detail,
				            "@impl false on %s, which is a callback of %s", fn,
				            d->list[i]->name);
		return;
	}
	if (!is_true) {
		for (int i = 0; i < d->count; i++)
			if (strcmp(d->list[i]->name, s->detail) == 0) {
				if (!behaviour_has_any(d->list[i], s))
					finding_add(f, "impl_not_callback", CT_WARNING, km->name,
					            km->file, fn, s->line, s->detail,
					            "@impl %s on %s, which is no callback of %s",
					            s->detail, fn, s->detail);
				return;
			}
		finding_add(f, "impl_not_callback", CT_WARNING, km->name, km->file, fn, s->line,
		            s->detail, "@impl %s on %s, but %s does not declare @behaviour %s",
		            s->detail, fn, km->name, s->detail);
		return;
	}
	for (int i = 0; i < d->count; i++)
		if (behaviour_has_any(d->list[i], s))
			return;
	finding_add(f, "impl_not_callback", CT_WARNING, km->name, km->file, fn, s->line, NULL,
	            "@impl true on %s, which is no callback of the behaviours %s declares", fn,
	            km->name);
}

int kg_contracts(struct st_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                 json_t *out)
{
	struct ct_findings f;
	int limit;
	int rc = findings_init(&f, p, &limit);
	if (rc) {
		gi_vec_destroy(&f.list);
		return rc;
	}
	struct ct_sites sites;
	rc = sites_load(db, g,
	                (1u << FACTS_SITE_IMPL) | (1u << FACTS_SITE_ORPHAN_SPEC) |
	                    (1u << FACTS_SITE_OPTIONAL_CALLBACK),
	                0, &sites);
	struct ct_behaviours bs = {.g = g, .sites = &sites};
	gi_map_init(&bs.by_name);
	gi_map_init(&bs.known);
	/* what each module declares, read once: index + 1 in `declared` */
	struct ct_declared *declared = gi_calloc(g->modules.len + 1, sizeof(*declared));
	bool *declared_done = gi_calloc(g->modules.len + 1, sizeof(bool));
	gi_arena_init(&bs.arena);
	json_t *unresolved = json_array();
	for (size_t m = 0; !rc && m < g->modules.len; m++) {
		const struct kg_module *km = kg_module_at(g, (int)m);
		if (!km->project || !kg_module_within(km->name, f.module))
			continue;
		struct ct_declared d;
		declared_read(&bs, (int)m, &d);
		declared[m] = d;
		declared_done[m] = true;
		if (d.unresolved)
			json_array_append_new(unresolved,
			                      json_pack("{s:s, s:s}", "module", km->name,
			                                "behaviour", d.unresolved_name));
		if (d.uncertain || d.count == 0)
			continue;
		struct gi_map fns;
		functions_map(g, (int)m, &fns);
		missing_callbacks(&f, g, (int)m, &d, &fns);
		gi_map_destroy(&fns);
	}
	for (size_t i = 0; !rc && i < sites.sites.len; i++) {
		const struct ct_site *s = site_at(&sites, i);
		if (s->module < 0 || !s->name)
			continue;
		const struct kg_module *km = kg_module_at(g, s->module);
		if (s->kind == FACTS_SITE_IMPL) {
			if (!declared_done[s->module]) {
				declared_read(&bs, s->module, &declared[s->module]);
				declared_done[s->module] = true;
			}
			if (!declared[s->module].uncertain)
				impl_checks(&f, &bs, s, &declared[s->module]);
		} else if (s->kind == FACTS_SITE_ORPHAN_SPEC) {
			int fi = kg_graph_function_find(g, s->module, s->name, s->arity);
			if (fi >= 0 && kg_function_at(g, fi)->defined)
				continue;
			const char *fn = gi_arena_printf(&bs.arena, "%s/%d", s->name, s->arity);
			finding_add(&f, "orphan_spec", CT_ERROR, km->name, km->file, fn, s->line,
			            NULL, "@spec %s in %s, which defines no function %s", fn,
			            km->name, fn);
		}
	}
	if (!rc) {
		findings_write(&f, limit, out);
		json_object_set_new(out, "unresolved_behaviours", unresolved);
	} else {
		for (size_t i = 0; i < f.list.len; i++)
			gi_free(GI_VEC_AT(&f.list, struct ct_finding, i).message);
		gi_vec_destroy(&f.list);
		json_decref(unresolved);
	}
	gi_free(declared);
	gi_free(declared_done);
	behaviours_destroy(&bs);
	sites_destroy(&sites);
	return rc;
}

/* ---- conventions ------------------------------------------------------- */

/* A public function that its module's documentation should cover. */
static bool wants_doc(const struct kg_function *fn)
{
	return fn->defined && fn->is_public && !fn->has_doc && !fn->has_impl && !fn->generated_by &&
	       fn->clauses > 0 && fn->kind != FACTS_DEFCALLBACK && !GI_STR_STARTS(fn->name, "__") &&
	       strcmp(fn->name, FACTS_MODULE_BODY) != 0;
}

static void module_conventions(struct ct_findings *f, const struct kg_graph *g, int m,
                               int max_nesting, int max_complexity, struct gi_arena *names)
{
	const struct kg_module *km = kg_module_at(g, m);
	/* Only compiled code (.ex) is public API; scripts (.exs: mix.exs, tests,
	 * config) are not documented. */
	bool source =
	    km->origin == FACTS_FROM_SOURCE && km->file && gi_str_ends_with(km->file, ".ex");
	if (source && km->kind != FACTS_IMPL && !km->has_moduledoc)
		finding_add(f, "missing_moduledoc", CT_INFO, km->name, km->file, NULL,
		            km->line_start, NULL,
		            "%s has no @moduledoc (write one, or @moduledoc false for an internal "
		            "module)",
		            km->name);
	bool documented = km->has_moduledoc && !km->moduledoc_false;
	for (size_t i = 0; i < km->functions.len; i++) {
		const struct kg_function *fn = kg_function_at(g, GI_VEC_AT(&km->functions, int, i));
		if (!fn->defined || strcmp(fn->name, FACTS_MODULE_BODY) == 0)
			continue;
		const char *name = gi_arena_printf(names, "%s/%d", fn->name, fn->arity);
		if (source && documented && wants_doc(fn))
			finding_add(
			    f, "missing_doc", CT_INFO, km->name, km->file, name, fn->line_start,
			    NULL,
			    "%s.%s is public in a documented module but has no @doc (or @doc "
			    "false)",
			    km->name, name);
		if (fn->max_nesting > max_nesting)
			finding_add(f, "deep_nesting", CT_INFO, km->name, km->file, name,
			            fn->line_start, NULL,
			            "%s.%s nests control structures %d deep (threshold %d)",
			            km->name, name, fn->max_nesting, max_nesting);
		if (fn->cyclomatic > max_complexity)
			finding_add(f, "high_complexity", CT_INFO, km->name, km->file, name,
			            fn->line_start, NULL,
			            "%s.%s has cyclomatic complexity %d (threshold %d)", km->name,
			            name, fn->cyclomatic, max_complexity);
	}
}

int kg_conventions(struct st_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                   json_t *out)
{
	struct ct_findings f;
	int limit, max_nesting, max_complexity;
	bool tests;
	int rc = findings_init(&f, p, &limit);
	if (!rc)
		rc = kg_arg_int(p, "max_nesting", KG_CHECK_MAX_NESTING_DEFAULT, 0, 1000,
		                &max_nesting);
	if (!rc)
		rc = kg_arg_int(p, "max_complexity", KG_CHECK_MAX_COMPLEXITY_DEFAULT, 0, 100000,
		                &max_complexity);
	if (!rc)
		rc = kg_arg_bool(p, "tests", &tests);
	if (rc) {
		gi_vec_destroy(&f.list);
		return rc;
	}
	struct ct_sites sites;
	rc = sites_load(db, g, (1u << FACTS_SITE_APPLY) | (1u << FACTS_SITE_TO_ATOM), 0, &sites);
	struct gi_arena names;
	gi_arena_init(&names);
	for (size_t m = 0; !rc && m < g->modules.len; m++) {
		const struct kg_module *km = kg_module_at(g, (int)m);
		if (km->project && (tests || !km->test))
			module_conventions(&f, g, (int)m, max_nesting, max_complexity, &names);
	}
	for (size_t i = 0; !rc && i < sites.sites.len; i++) {
		const struct ct_site *s = site_at(&sites, i);
		if (s->module < 0 || (!tests && kg_module_at(g, s->module)->test))
			continue;
		const char *fn =
		    s->name ? gi_arena_printf(&names, "%s/%d", s->name, s->arity) : NULL;
		if (s->kind == FACTS_SITE_APPLY)
			finding_add(
			    &f, "apply_literal", CT_INFO, s->module_name, s->file, fn, s->line,
			    s->detail,
			    "apply/3 with a literal module and function (%s): call it directly",
			    s->detail ? s->detail : "?");
		else
			finding_add(
			    &f, "atom_from_input", CT_WARNING, s->module_name, s->file, fn, s->line,
			    s->detail,
			    "%s on a value that is not a literal: atoms are never collected, "
			    "so input can exhaust the atom table (use String.to_existing_atom "
			    "or a map of known values)",
			    s->detail ? s->detail : "to_atom");
	}
	if (!rc) {
		findings_write(&f, limit, out);
		json_object_set_new(out, "thresholds",
		                    json_pack("{s:i, s:i}", "max_nesting", max_nesting,
		                              "max_complexity", max_complexity));
	} else {
		for (size_t i = 0; i < f.list.len; i++)
			gi_free(GI_VEC_AT(&f.list, struct ct_finding, i).message);
		gi_vec_destroy(&f.list);
	}
	gi_arena_destroy(&names);
	sites_destroy(&sites);
	return rc;
}

/* ---- structs ------------------------------------------------------------- */

static json_t *site_json(const struct ct_site *s)
{
	json_t *o = json_object();
	json_object_set_new(o, "module", json_string(s->module_name));
	if (s->name) {
		char fn[600];
		snprintf(fn, sizeof(fn), "%s/%d", s->name, s->arity);
		json_object_set_new(o, "function", json_string(fn));
	} else {
		json_object_set_new(o, "function", json_null());
	}
	json_object_set_new(o, "file", s->file ? json_string(s->file) : json_null());
	json_object_set_new(o, "line", json_integer(s->line));
	return o;
}

static json_t *struct_entry(const struct kg_graph *g, const char *name)
{
	json_t *o = json_object();
	json_object_set_new(o, "struct", json_string(name));
	int m = kg_graph_module_find(g, name);
	const struct kg_module *km = m >= 0 ? kg_module_at(g, m) : NULL;
	bool defined = km && km->project && km->has_struct;
	json_object_set_new(o, "project", json_boolean(defined));
	json_object_set_new(o, "file", defined && km->file ? json_string(km->file) : json_null());
	json_object_set_new(o, "line", json_integer(defined ? km->line_start : 0));
	json_t *fields = json_array();
	if (defined)
		for (size_t i = 0; i < km->struct_fields.len; i++)
			json_array_append_new(
			    fields, json_string(GI_VEC_AT(&km->struct_fields, const char *, i)));
	json_object_set_new(o, "fields", fields);
	json_object_set_new(o, "built", json_array());
	json_object_set_new(o, "updated", json_array());
	json_object_set_new(o, "matched", json_array());
	return o;
}

static int struct_order(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	return strcmp(json_string_value(json_object_get(x, "struct")),
	              json_string_value(json_object_get(y, "struct")));
}

int kg_structs(struct st_db *db, const struct kg_graph *g, const struct kg_query_params *p,
               json_t *out)
{
	bool external = p && p->include_external;
	const char *only = p ? p->module : NULL;
	if (only && kg_graph_module_find(g, only) < 0) {
		kg_query_fail("no struct %s in the project", only);
		return GI_ENOTFOUND;
	}
	struct ct_sites sites;
	int rc = sites_load(db, g,
	                    (1u << FACTS_SITE_STRUCT_BUILD) | (1u << FACTS_SITE_STRUCT_UPDATE) |
	                        (1u << FACTS_SITE_STRUCT_MATCH),
	                    0, &sites);
	json_t *by_name = json_object();
	for (size_t m = 0; !rc && m < g->modules.len; m++) {
		const struct kg_module *km = kg_module_at(g, (int)m);
		if (km->project && km->has_struct && (!only || strcmp(km->name, only) == 0))
			json_object_set_new(by_name, km->name, struct_entry(g, km->name));
	}
	for (size_t i = 0; !rc && i < sites.sites.len; i++) {
		const struct ct_site *s = site_at(&sites, i);
		if (!s->detail || (only && strcmp(s->detail, only) != 0))
			continue;
		json_t *e = json_object_get(by_name, s->detail);
		if (!e) {
			if (!external)
				continue;
			e = struct_entry(g, s->detail);
			json_object_set_new(by_name, s->detail, e);
		}
		const char *list = s->kind == FACTS_SITE_STRUCT_BUILD    ? "built"
		                   : s->kind == FACTS_SITE_STRUCT_UPDATE ? "updated"
		                                                         : "matched";
		json_array_append_new(json_object_get(e, list), site_json(s));
	}
	if (!rc) {
		size_t n = json_object_size(by_name), k = 0;
		json_t **items = gi_malloc(sizeof(json_t *) * (n + 1));
		const char *key;
		json_t *v;
		json_object_foreach(by_name, key, v) items[k++] = v;
		qsort(items, k, sizeof(json_t *), struct_order);
		json_t *arr = json_array();
		for (size_t i = 0; i < k; i++) {
			json_t *e = items[i];
			json_object_set_new(
			    e, "counts",
			    json_pack("{s:I, s:I, s:I}", "built",
			              (json_int_t)json_array_size(json_object_get(e, "built")),
			              "updated",
			              (json_int_t)json_array_size(json_object_get(e, "updated")),
			              "matched",
			              (json_int_t)json_array_size(json_object_get(e, "matched"))));
			json_array_append(arr, e);
		}
		gi_free(items);
		json_object_set_new(out, "total", json_integer((json_int_t)k));
		json_object_set_new(out, "structs", arr);
	}
	json_decref(by_name);
	sites_destroy(&sites);
	return rc;
}

/* ---- duplicates ---------------------------------------------------------- */

static int by_hash(const void *a, const void *b)
{
	const struct ct_site *x = *(const struct ct_site *const *)a,
	                     *y = *(const struct ct_site *const *)b;
	if (x->hash2 != y->hash2)
		return x->hash2 < y->hash2 ? -1 : 1;
	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	int c = strcmp(x->module_name, y->module_name);
	if (c)
		return c;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int by_place(const void *a, const void *b)
{
	const struct ct_site *x = *(const struct ct_site *const *)a,
	                     *y = *(const struct ct_site *const *)b;
	int c = strcmp(x->module_name, y->module_name);
	if (c)
		return c;
	return x->line < y->line ? -1 : x->line > y->line;
}

struct ct_group {
	int type;
	uint32_t size;
	size_t first, count; /* a slice of the sorted sites */
};

static int group_order(const void *a, const void *b)
{
	const struct ct_group *x = a, *y = b;
	uint64_t wx = (uint64_t)x->size * (x->count - 1), wy = (uint64_t)y->size * (y->count - 1);
	if (wx != wy)
		return wx > wy ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return x->type - y->type;
}

/* True when the sites of the slice are all clauses of one function. */
static bool one_function(const struct ct_site *const *s, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (strcmp(s[i]->module_name, s[0]->module_name) != 0 ||
		    s[i]->arity != s[0]->arity || strcmp(s[i]->name, s[0]->name) != 0)
			return false;
	return true;
}

/* ---- clause-body hashes, made when first needed --------------------- */

/* Files parsed (on BODIES_THREADS threads, like the index) before their
 * body sites are written in one transaction: the write lock is held for the
 * writes only, never for the parsing. */
#define BODIES_BATCH   64
#define BODIES_THREADS 2

struct unhashed {
	int64_t id;
	char *path;
	uint64_t hash;
	struct facts_file *facts; /* NULL: stale (changed, gone, unreadable) */
};

static int unhashed_row(void *ctx, const struct st_unhashed_file *r)
{
	struct unhashed u = {r->id, gi_strdup(r->path), r->hash, NULL};
	gi_vec_push(ctx, &u);
	return 0;
}

/* One batch of files to parse: [next, end) of `files`, shared by the
 * threads through `next`. */
struct bodies_batch {
	const char *root;
	struct unhashed *files;
	atomic_size_t next;
	size_t end;
};

/* Reads and parses, with the hashes, the file `u` if its content is still
 * the one indexed; leaves u->facts NULL otherwise. */
static void bodies_parse(const char *root, struct unhashed *u)
{
	char path[4096];
	int n = snprintf(path, sizeof(path), "%s/%s", root, u->path);
	char *text = NULL;
	size_t len = 0;
	if (n > 0 && (size_t)n < sizeof(path) &&
	    gi_fs_read_file(path, EX_MAX_FILE_SIZE, &text, &len) == 0 &&
	    gi_hash64(text, len, GI_HASH_SEED) == u->hash &&
	    ex_parse_with(u->path, text, len, 0, &u->facts) == 0)
		u->facts->content_hash = u->hash;
	gi_free(text);
}

static void *bodies_thread(void *arg)
{
	struct bodies_batch *b = arg;
	for (size_t i; (i = atomic_fetch_add(&b->next, 1)) < b->end;)
		bodies_parse(b->root, &b->files[i]);
	return NULL;
}

/* Writes the parsed files of [first, end) in one transaction and frees
 * their facts; counts the stale ones. */
static int bodies_flush(struct st_db *db, struct unhashed *files, size_t first, size_t end,
                        int *stale)
{
	int rc = st_begin(db);
	bool begun = rc == 0;
	for (size_t i = first; i < end; i++) {
		bool written;
		if (!files[i].facts)
			(*stale)++;
		else if (!rc)
			rc = st_file_bodies_write(db, files[i].id, files[i].facts, &written);
		facts_file_free(files[i].facts);
		files[i].facts = NULL;
	}
	if (!rc)
		rc = st_commit(db);
	else if (begun)
		st_rollback(db);
	return rc;
}

/* The index leaves the clause-body hashes out (they cost a second walk of
 * every clause, EX_PARSE_NO_BODY_HASHES): this reads again each indexed
 * source file that has none stored, parses it with them and stores them,
 * so that only the first `duplicates` after an index pays, and only for
 * the files indexed since. A file whose content is no longer what was
 * indexed (edited since, or gone) is left out and counted in *stale: its
 * bodies come with the next index and the next `duplicates`. When the
 * hashes cannot be stored (an index run holds the write lock past the busy
 * timeout, or the database is read-only), the files not stored yet are
 * counted in *unstored and the answer goes on with what is stored. */
static int bodies_ensure(struct st_db *db, int *stale, int *unstored)
{
	*stale = 0;
	*unstored = 0;
	struct gi_vec files;
	gi_vec_init(&files, sizeof(struct unhashed));
	char *root = NULL;
	int rc = st_files_unhashed_each(db, unhashed_row, &files);
	if (!rc && files.len)
		rc = st_meta_get(db, "root", &root);
	struct unhashed *all = files.len ? gi_vec_get(&files, 0) : NULL;
	size_t first = 0;
	for (; first < files.len && root && !rc; first += BODIES_BATCH) {
		struct bodies_batch b = {.root = root, .files = all, .end = first + BODIES_BATCH};
		atomic_init(&b.next, first);
		if (b.end > files.len)
			b.end = files.len;
		pthread_t threads[BODIES_THREADS - 1];
		int started = 0;
		for (; started < BODIES_THREADS - 1; started++)
			if (pthread_create(&threads[started], NULL, bodies_thread, &b) != 0)
				break;
		bodies_thread(&b);
		for (int t = 0; t < started; t++)
			pthread_join(threads[t], NULL);
		rc = bodies_flush(db, all, first, b.end, stale);
		if (rc == GI_EBUSY || rc == GI_EDENIED) {
			*unstored = (int)(files.len - first);
			rc = 0;
			break;
		}
	}
	for (size_t i = 0; i < files.len; i++)
		gi_free(all[i].path);
	gi_vec_destroy(&files);
	gi_free(root);
	return rc;
}

int kg_duplicates(struct st_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                  json_t *out)
{
	int min_size, limit;
	bool tests;
	int rc = kg_arg_int(p, "min_size", KG_DUP_MIN_SIZE_DEFAULT, 1, 1000000, &min_size);
	if (!rc)
		rc = kg_arg_int(p, "limit", p && p->top ? p->top : 100, 1, LIMIT_MAX, &limit);
	if (!rc)
		rc = kg_arg_bool(p, "tests", &tests);
	if (rc)
		return rc;
	const char *only = p ? p->module : NULL;
	int stale = 0, unstored = 0;
	rc = bodies_ensure(db, &stale, &unstored);
	if (rc)
		return rc;
	struct ct_sites sites;
	rc = sites_load(db, g, 1u << FACTS_SITE_BODY, (uint32_t)min_size, &sites);
	if (rc) {
		sites_destroy(&sites);
		return rc;
	}
	const struct ct_site **sorted = gi_malloc(sizeof(*sorted) * (sites.sites.len + 1));
	size_t n = 0;
	for (size_t i = 0; i < sites.sites.len; i++) {
		const struct ct_site *s = site_at(&sites, i);
		if (s->module < 0 || s->size < (uint32_t)min_size || !s->name)
			continue;
		const struct kg_module *km = kg_module_at(g, s->module);
		if (!km->project || (!tests && km->test))
			continue;
		sorted[n++] = s;
	}
	qsort(sorted, n, sizeof(*sorted), by_hash);
	struct gi_vec groups;
	gi_vec_init(&groups, sizeof(struct ct_group));
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && sorted[j]->hash2 == sorted[i]->hash2)
			j++;
		/* type 1 inside: runs of the same exact hash */
		size_t exact_runs = 0;
		for (size_t a = i; a < j;) {
			size_t b = a;
			while (b < j && sorted[b]->hash == sorted[a]->hash)
				b++;
			exact_runs++;
			if (b - a >= 2 && !one_function(sorted + a, b - a)) {
				struct ct_group gr = {1, sorted[a]->size, a, b - a};
				gi_vec_push(&groups, &gr);
			}
			a = b;
		}
		if (exact_runs >= 2 && j - i >= 2 && !one_function(sorted + i, j - i)) {
			struct ct_group gr = {2, sorted[i]->size, i, j - i};
			gi_vec_push(&groups, &gr);
		}
		i = j;
	}
	gi_vec_sort(&groups, group_order);
	for (size_t k = 0; k < groups.len; k++) {
		const struct ct_group *gr = gi_vec_get(&groups, k);
		qsort(sorted + gr->first, gr->count, sizeof(*sorted), by_place);
	}
	json_t *arr = json_array();
	size_t total = 0;
	for (size_t k = 0; k < groups.len; k++) {
		const struct ct_group *gr = gi_vec_get(&groups, k);
		bool wanted = !only;
		for (size_t i = 0; i < gr->count && !wanted; i++)
			wanted = kg_module_within(sorted[gr->first + i]->module_name, only);
		if (!wanted)
			continue;
		total++;
		if ((int)json_array_size(arr) >= limit)
			continue;
		json_t *members = json_array();
		for (size_t i = 0; i < gr->count; i++)
			json_array_append_new(members, site_json(sorted[gr->first + i]));
		char hash[20];
		snprintf(hash, sizeof(hash), "%016llx",
		         (unsigned long long)(gr->type == 1 ? sorted[gr->first]->hash
		                                            : sorted[gr->first]->hash2));
		json_array_append_new(arr,
		                      json_pack("{s:i, s:i, s:s, s:o}", "type", gr->type, "size",
		                                (int)gr->size, "hash", hash, "members", members));
	}
	json_object_set_new(out, "min_size", json_integer(min_size));
	json_object_set_new(out, "bodies", json_integer((json_int_t)n));
	json_object_set_new(out, "total", json_integer((json_int_t)total));
	/* files edited (or removed) since the index: their bodies are not in
	 * the answer until the next index */
	if (stale)
		json_object_set_new(out, "stale_files", json_integer(stale));
	/* files whose hashes could not be stored (the index busy past the
	 * timeout, a read-only database): left out of this answer */
	if (unstored)
		json_object_set_new(out, "unhashed_files", json_integer(unstored));
	json_object_set_new(out, "groups", arr);
	gi_vec_destroy(&groups);
	gi_free(sorted);
	sites_destroy(&sites);
	return 0;
}
