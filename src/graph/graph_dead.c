/*
 * graph_dead.c - which functions are reached and which are dead, and why
 * (graph.h's kg_function_dead_reason and friends; docs/SCHEMA.md): the
 * callbacks known without @impl (OTP and Elixir behaviours, OTP protocols,
 * compiler hooks), the reasons a function counts as API, and the walk from
 * core code and tests.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/str.h"
#include "graph/graph.h"
#include "graph/graph_int.h"

/* ---- dead code ----------------------------------------------------------- */

/* Callbacks of common external behaviours (OTP, Elixir, Mix), recognised as
 * callback implementations when the module uses or implements any external
 * behaviour, even without @impl. */
static const char *const known_callbacks[] = {
    "init/1",          "handle_call/3",  "handle_cast/2",   "handle_info/2",   "handle_continue/2",
    "terminate/2",     "code_change/3",  "format_status/1", "format_status/2", "child_spec/1",
    "start_link/1",    "start_link/0",   "start/2",         "stop/1",          "prep_stop/1",
    "config_change/3", "handle_event/3", "handle_event/4",  "callback_mode/0", "project/0",
    "application/0",   "run/1",          "__using__/1",     "handle_demand/2", NULL,
};

bool graph_name_arity_known(const char *na)
{
	for (const char *const *k = known_callbacks; *k; k++)
		if (strcmp(*k, na) == 0)
			return true;
	return false;
}

bool graph_name_arity_is(const struct kg_function *f, const char *na)
{
	size_t n = strlen(f->name);
	char want[16];
	snprintf(want, sizeof(want), "/%d", f->arity);
	return strncmp(na, f->name, n) == 0 && strcmp(na + n, want) == 0;
}

bool graph_name_arity_in(const struct gi_vec *list, const char *name_arity)
{
	for (size_t i = 0; i < list->len; i++)
		if (strcmp(GI_VEC_AT(list, const char *, i), name_arity) == 0)
			return true;
	return false;
}

/* OTP protocols a module implements by defining functions, with no
 * behaviour to declare: a name registry for `{:via, M, name}` (:global's
 * four functions), and a special process that :sys drives (proc_lib). A
 * module that defines the first two of a set implements it; the rest of
 * the set are its callbacks too. */
static const char *const otp_protocols[][7] = {
    {"register_name/2", "whereis_name/1", "unregister_name/1", "send/2", NULL},
    {"system_continue/3", "system_terminate/4", "system_code_change/4", "system_get_state/1",
     "system_replace_state/2", "format_status/2", NULL},
};

static bool module_defines(const struct kg_graph *g, const struct kg_module *m, const char *na)
{
	for (size_t i = 0; i < m->functions.len; i++) {
		const struct kg_function *f = kg_function_at(g, GI_VEC_AT(&m->functions, int, i));
		if (f->defined && graph_name_arity_is(f, na))
			return true;
	}
	return false;
}

/* True when `f` belongs to an OTP protocol its module implements. */
static bool otp_protocol_callback(const struct kg_graph *g, const struct kg_function *f)
{
	const struct kg_module *m = kg_module_at(g, f->module);
	for (size_t p = 0; p < sizeof(otp_protocols) / sizeof(otp_protocols[0]); p++) {
		bool member = false;
		for (size_t k = 0; otp_protocols[p][k] && !member; k++)
			member = graph_name_arity_is(f, otp_protocols[p][k]);
		if (member && module_defines(g, m, otp_protocols[p][0]) &&
		    module_defines(g, m, otp_protocols[p][1]))
			return true;
	}
	return false;
}

/* True when module `m` is a `defexception` (its generated functions say
 * so): it declares @behaviour Exception. */
static bool module_is_exception(const struct kg_graph *g, const struct kg_module *m)
{
	for (size_t i = 0; i < m->functions.len; i++) {
		const struct kg_function *f = kg_function_at(g, GI_VEC_AT(&m->functions, int, i));
		if (f->generated_by && strcmp(f->generated_by, "defexception") == 0)
			return true;
	}
	return false;
}

static bool function_is_callback(const struct kg_graph *g, const struct kg_function *f)
{
	const struct kg_module *m = kg_module_at(g, f->module);
	if (f->has_impl || m->kind == FACTS_IMPL || otp_protocol_callback(g, f))
		return true;
	if ((graph_name_arity_is(f, "exception/1") || graph_name_arity_is(f, "message/1") ||
	     graph_name_arity_is(f, "blame/2")) &&
	    module_is_exception(g, m))
		return true;
	char na[512];
	snprintf(na, sizeof(na), "%s/%d", f->name, f->arity);
	unsigned behaviourish = (1u << FACTS_REF_BEHAVIOUR) | (1u << FACTS_REF_USE);
	for (size_t i = 0; i < m->out.len; i++) {
		const struct kg_edge *e = kg_edge_at(g, GI_VEC_AT(&m->out, int, i));
		if (!(e->kinds & behaviourish))
			continue;
		const struct kg_module *b = kg_module_at(g, e->to);
		if (b->project && graph_name_arity_in(&b->callbacks, na))
			return true;
		if (!b->project)
			if (graph_name_arity_known(na))
				return true;
	}
	return false;
}

unsigned kg_function_dispatch_of(const struct kg_graph *g, int fn)
{
	const struct kg_function *f = kg_function_at(g, fn);
	unsigned by = f->reached;
	for (size_t i = 0; i < f->callers.len; i++) {
		const struct kg_call *c = kg_call_at(g, GI_VEC_AT(&f->callers, int, i));
		const struct kg_module *cm = kg_module_at(g, kg_function_at(g, c->from_fn)->module);
		if (c->from_fn != fn && kg_call_kind_is_dispatch(c->kind) && kg_module_is_core(cm))
			by |= kg_call_kind_edge_bit(c->kind);
	}
	return by;
}

enum kg_dead_reason kg_function_dead_reason(const struct kg_graph *g, int fn)
{
	return kg_function_dead_reason_opts(g, fn, false);
}

/* Hooks the compiler calls on a module that names it in an attribute
 * (@before_compile, @after_compile, @on_definition, @after_verify) or that
 * `@derive`s a protocol (__deriving__/3). */
static const char *const compiler_hooks[] = {
    "__before_compile__/1", "__after_compile__/2", "__on_definition__/6",
    "__after_verify__/1",   "__deriving__/3",      NULL,
};

const char *kg_function_api_reason(const struct kg_graph *g, int fn)
{
	const struct kg_function *f = kg_function_at(g, fn);
	const struct kg_module *m = kg_module_at(g, f->module);
	if (!f->is_public || !f->defined)
		return NULL;
	if (strcmp(f->name, "__using__") == 0)
		return "using";
	for (size_t i = 0; compiler_hooks[i]; i++)
		if (graph_name_arity_is(f, compiler_hooks[i]))
			return "compiler_hook";
	size_t n = strlen(f->name);
	if (n > 4 && GI_STR_STARTS(f->name, "__") && strcmp(f->name + n - 2, "__") == 0)
		return "macro_support"; /* __name__: called by code macros emit */
	if (f->deprecated)
		return "deprecated"; /* kept for the library's users */
	if (f->doc_false || !g->library)
		return NULL;
	if (f->has_doc || (m->has_moduledoc && !m->moduledoc_false))
		return "documented";
	return NULL;
}

bool kg_function_reached_from_tests(const struct kg_graph *g, int fn)
{
	const struct kg_function *f = kg_function_at(g, fn);
	for (size_t i = 0; i < f->callers.len; i++) {
		const struct kg_call *c = kg_call_at(g, GI_VEC_AT(&f->callers, int, i));
		if (c->from_fn != fn &&
		    kg_module_at(g, kg_function_at(g, c->from_fn)->module)->test)
			return true;
	}
	return false;
}

/* True for the modules every module imports without saying so. */
static bool module_imported_implicitly(const struct kg_module *m)
{
	return strcmp(m->name, "Kernel") == 0 || strcmp(m->name, "Kernel.SpecialForms") == 0;
}

/* Whether core code reaches `fn` (a call of any kind but its own
 * recursion, or its `reached` bits; dispatch left out when `direct_only`);
 * sets *from_test when a test module calls it. */
static bool core_reaches(const struct kg_graph *g, int fn, bool direct_only, bool *from_test)
{
	const struct kg_function *f = kg_function_at(g, fn);
	if (f->reached & (direct_only ? ~FACTS_REF_DISPATCH_MASK : ~0u))
		return true;
	for (size_t i = 0; i < f->callers.len; i++) {
		const struct kg_call *c = kg_call_at(g, GI_VEC_AT(&f->callers, int, i));
		if (c->from_fn == fn || (direct_only && kg_call_kind_is_dispatch(c->kind)))
			continue;
		const struct kg_module *cm = kg_module_at(g, kg_function_at(g, c->from_fn)->module);
		if (kg_module_is_core(cm))
			return true;
		if (cm->test)
			*from_test = true;
	}
	return false;
}

/* Whether core code reaches another arity of the same definition as `fn`
 * (default arguments: `def f(a, b \\ 1)` is f/1 and f/2, one function
 * to its author). */
static bool sibling_arity_reached(const struct kg_graph *g, int fn, bool direct_only,
                                  bool *from_test)
{
	const struct kg_function *f = kg_function_at(g, fn);
	const struct kg_module *m = kg_module_at(g, f->module);
	for (size_t i = 0; i < m->functions.len; i++) {
		int k = GI_VEC_AT(&m->functions, int, i);
		const struct kg_function *s = kg_function_at(g, k);
		if (k == fn || !s->defined || s->line_start != f->line_start ||
		    strcmp(s->name, f->name) != 0)
			continue;
		if (!f->from_defaults && !s->from_defaults)
			continue;
		if (core_reaches(g, k, direct_only, from_test))
			return true;
	}
	return false;
}

/* Elixir's and OTP's modules whose `use` brings callbacks the graph knows
 * (known_callbacks): a `use` of them says nothing more. */
static const char *const known_users[] = {
    "GenServer",   "Supervisor",        "Agent",       "Task",
    "Application", "DynamicSupervisor", "ExUnit.Case", "ExUnit.CaseTemplate",
    "Mix.Task",    "Mix.Project",       "GenEvent",    NULL,
};

/* True when module `m` declares (@behaviour) a behaviour outside the
 * project, or `use`s a module outside the project that is not one of
 * Elixir's known ones (`use Phoenix.Tracker` from a project that does not
 * hold it): its callbacks are unknown, so any public function may be one. */
static bool declares_external_behaviour(const struct kg_graph *g, const struct kg_module *m)
{
	for (size_t i = 0; i < m->out.len; i++) {
		const struct kg_edge *e = kg_edge_at(g, GI_VEC_AT(&m->out, int, i));
		const struct kg_module *to = kg_module_at(g, e->to);
		if (to->project)
			continue;
		if (e->kinds & (1u << FACTS_REF_BEHAVIOUR))
			return true;
		if (!(e->kinds & (1u << FACTS_REF_USE)))
			continue;
		bool known = false;
		for (size_t k = 0; known_users[k] && !known; k++)
			known = strcmp(known_users[k], to->name) == 0;
		if (!known)
			return true;
	}
	return false;
}

enum kg_dead_reason kg_function_dead_reason_opts(const struct kg_graph *g, int fn, bool direct_only)
{
	const struct kg_function *f = kg_function_at(g, fn);
	const struct kg_module *m = kg_module_at(g, f->module);
	/* Generated functions are not the author's to delete. */
	if (!kg_module_is_core(m) || !f->defined || !f->is_public || f->generated_by)
		return KG_ALIVE;
	/* Kernel's local calls are dropped by the reader (docs/EXTRACTION.md):
	 * every module imports it, so its functions are reached. Mix calls
	 * the functions of a project's mix.exs (project/0, cli/0, ...). */
	if (module_imported_implicitly(m) || (m->file && gi_str_ends_with(m->file, "mix.exs")))
		return KG_ALIVE;
	bool from_test = false;
	if (core_reaches(g, fn, direct_only, &from_test) ||
	    sibling_arity_reached(g, fn, direct_only, &from_test))
		return KG_ALIVE;
	if (function_is_callback(g, f) || declares_external_behaviour(g, m))
		return KG_DEAD_CALLBACK;
	if (kg_function_api_reason(g, fn))
		return KG_PUBLIC_API;
	if (!direct_only && g->dynamic_names.len > 0) {
		char key[600];
		snprintf(key, sizeof(key), "%s/%d", f->name, f->arity);
		if (gi_map_get(&g->dynamic_names, key))
			return KG_DEAD_DYNAMIC;
	}
	return from_test ? KG_DEAD_TEST_ONLY : KG_DEAD_UNREFERENCED;
}

const char *kg_dead_reason_name(enum kg_dead_reason r)
{
	switch (r) {
	case KG_DEAD_CALLBACK:
		return "callback";
	case KG_DEAD_TEST_ONLY:
		return "test_only";
	case KG_DEAD_UNREFERENCED:
		return "unreferenced";
	case KG_PUBLIC_API:
		return "public_api";
	case KG_DEAD_DYNAMIC:
		return "dynamic";
	default:
		return "alive";
	}
}
