/*
 * facts.c - construction and naming helpers for source facts (see facts.h).
 */
#include "source/facts.h"

#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/error.h"
#include "base/str.h"

struct facts_file *facts_file_new(const char *path, enum facts_origin origin)
{
	struct facts_file *f = gi_calloc(1, sizeof(*f));
	gi_arena_init(&f->arena);
	f->path = gi_arena_strdup(&f->arena, path);
	f->origin = origin;
	f->bodies_hashed = true;
	gi_vec_init(&f->modules, sizeof(struct facts_module));
	gi_vec_init(&f->errors, sizeof(struct facts_error));
	return f;
}

void facts_file_free(struct facts_file *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->modules.len; i++) {
		struct facts_module *m = gi_vec_get(&f->modules, i);
		for (size_t j = 0; j < m->functions.len; j++) {
			struct facts_function *fn = gi_vec_get(&m->functions, j);
			gi_vec_destroy(&fn->calls);
		}
		gi_vec_destroy(&m->functions);
		gi_vec_destroy(&m->refs);
		gi_vec_destroy(&m->struct_fields);
		gi_vec_destroy(&m->callbacks);
		gi_vec_destroy(&m->sites);
	}
	gi_vec_destroy(&f->modules);
	gi_vec_destroy(&f->errors);
	gi_arena_destroy(&f->arena);
	gi_free(f);
}

struct facts_module *facts_module_add(struct facts_file *f, const char *name)
{
	struct facts_module *m = gi_vec_push_zero(&f->modules);
	m->name = gi_arena_strdup(&f->arena, name);
	m->origin = f->origin;
	gi_vec_init(&m->functions, sizeof(struct facts_function));
	gi_vec_init(&m->refs, sizeof(struct facts_ref));
	gi_vec_init(&m->struct_fields, sizeof(const char *));
	gi_vec_init(&m->callbacks, sizeof(const char *));
	gi_vec_init(&m->sites, sizeof(struct facts_site));
	return m;
}

struct facts_function *facts_function_add(struct facts_file *f, struct facts_module *m,
                                          const char *name, int arity)
{
	struct facts_function *fn = gi_vec_push_zero(&m->functions);
	fn->name = gi_arena_strdup(&f->arena, name);
	fn->arity = arity;
	fn->is_public = true;
	gi_vec_init(&fn->calls, sizeof(struct facts_call));
	return fn;
}

void facts_ref_add(struct facts_file *f, struct facts_module *m, enum facts_ref_kind kind,
                   const char *target, uint32_t line)
{
	struct facts_ref *r = gi_vec_push_zero(&m->refs);
	r->kind = kind;
	r->target = gi_arena_strdup(&f->arena, target);
	r->line = line;
}

void facts_call_add(struct facts_file *f, struct facts_function *fn, enum facts_call_kind kind,
                    const char *module, const char *function, int arity, uint32_t line)
{
	struct facts_call *c = gi_vec_push_zero(&fn->calls);
	c->kind = kind;
	c->module = module ? gi_arena_strdup(&f->arena, module) : NULL;
	c->function = function ? gi_arena_strdup(&f->arena, function) : NULL;
	c->arity = arity;
	c->line = line;
}

void facts_error_add(struct facts_file *f, uint32_t line, const char *message)
{
	struct facts_error *e = gi_vec_push_zero(&f->errors);
	e->line = line;
	e->message = gi_arena_strdup(&f->arena, message);
}

struct facts_site *facts_site_add(struct facts_module *m, enum facts_site_kind kind,
                                  const char *name, int arity, uint32_t line, const char *detail)
{
	struct facts_site *s = gi_vec_push_zero(&m->sites);
	s->kind = kind;
	s->name = name;
	s->arity = arity;
	s->line = line;
	s->detail = detail;
	return s;
}

static const char *const ref_kind_names[FACTS_REF_KIND_COUNT] = {
    "alias",   "import", "use",      "require", "call", "struct", "behaviour",
    "capture", "impl",   "callback", "value",   "mfa",  "apply",
};

const char *facts_ref_kind_name(enum facts_ref_kind kind)
{
	return (unsigned)kind < FACTS_REF_KIND_COUNT ? ref_kind_names[kind] : "unknown";
}

int facts_ref_kind_parse(const char *name, enum facts_ref_kind *out)
{
	for (int i = 0; i < FACTS_REF_KIND_COUNT; i++) {
		if (strcmp(name, ref_kind_names[i]) == 0) {
			*out = (enum facts_ref_kind)i;
			return 0;
		}
	}
	return GI_EINVAL;
}

const char *facts_function_kind_name(enum facts_function_kind kind)
{
	static const char *const names[] = {"def",      "defp",      "defmacro",    "defmacrop",
	                                    "defguard", "defguardp", "defdelegate", "callback"};
	return (unsigned)kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "unknown";
}

const char *facts_module_kind_name(enum facts_module_kind kind)
{
	static const char *const names[] = {"module", "protocol", "impl"};
	return (unsigned)kind < 3 ? names[kind] : "unknown";
}

const char *facts_call_kind_name(enum facts_call_kind kind)
{
	static const char *const names[] = {
	    "remote", "local",      "capture", "dynamic",      "mfa",      "apply",       "impl",
	    "inject", "inject_def", "use",     "inject_macro", "compiler", "inject_quote"};
	return (unsigned)kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "unknown";
}

const char *facts_site_kind_name(enum facts_site_kind kind)
{
	static const char *const names[FACTS_SITE_KIND_COUNT] = {
	    "orphan_spec",  "impl",          "optional_callback",
	    "struct_build", "struct_update", "struct_match",
	    "to_atom",      "apply",         "body"};
	return (unsigned)kind < FACTS_SITE_KIND_COUNT ? names[kind] : "unknown";
}
