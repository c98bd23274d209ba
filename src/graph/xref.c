/*
 * xref.c - file dependencies labelled as `mix xref graph` labels them (see
 * xref.h), from a finished graph: which module references which, and how.
 *
 * Rules (Elixir 1.14's tracer, checked against `mix xref graph` on the
 * fixture tests/fixtures/projects/xref; docs/EXTRACTION.md, "xref"):
 * - compile: `use` and `@behaviour`; any call made by a module body (the
 *   FACTS_MODULE_BODY function: DSL macro calls, attribute values,
 *   @before_compile); any call to a macro or guard (expanded when the caller
 *   compiles), from anywhere;
 * - export: struct usage, `import`, `require`;
 * - runtime: the other calls and captures, modules used as values
 *   (value, mfa, apply references), and an implementation's `for:` type;
 * - `alias` alone is no dependency; the edges the graph derives (impl,
 *   callback) are not either.
 * Between two files the strongest label wins (compile > export > runtime);
 * a file's references to itself are left out, and only core modules
 * (project code outside tests) count, as Mix compiles `elixirc_paths` only.
 */
#include "graph/xref.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/vec.h"

struct xref_edge {
	const char *from, *to; /* files, borrowed from the graph */
	int label;             /* enum kg_xref_label */
};

static const char *const label_names[] = {"runtime", "export", "compile"};

static void edge_add(struct gi_vec *edges, const struct kg_graph *g, int from, int to, int label)
{
	const struct kg_module *a = kg_module_at(g, from), *b = kg_module_at(g, to);
	if (!kg_module_is_core(a) || !kg_module_is_core(b) || !a->file || !b->file ||
	    strcmp(a->file, b->file) == 0)
		return;
	struct xref_edge e = {a->file, b->file, label};
	gi_vec_push(edges, &e);
}

static int edge_cmp(const void *x, const void *y)
{
	const struct xref_edge *a = x, *b = y;
	int c = strcmp(a->from, b->from);
	if (c == 0)
		c = strcmp(a->to, b->to);
	return c ? c : b->label - a->label; /* strongest first */
}

static bool function_is_macro(const struct kg_function *f)
{
	return f->kind == FACTS_DEFMACRO || f->kind == FACTS_DEFMACROP ||
	       f->kind == FACTS_DEFGUARD || f->kind == FACTS_DEFGUARDP;
}

/* Every labelled module reference of the graph as file pairs, sorted, one
 * per pair with its strongest label. */
static void edges_collect(const struct kg_graph *g, struct gi_vec *edges)
{
	for (size_t i = 0; i < g->calls.len; i++) {
		const struct kg_call *c = kg_call_at(g, (int)i);
		if (c->kind == FACTS_CALL_IMPL)
			continue;
		const struct kg_function *from = kg_function_at(g, c->from_fn);
		bool compile = strcmp(from->name, FACTS_MODULE_BODY) == 0 ||
		               function_is_macro(kg_function_at(g, c->to_fn));
		edge_add(edges, g, from->module, c->to_module,
		         compile ? KG_XREF_COMPILE : KG_XREF_RUNTIME);
	}
	unsigned compile = (1u << FACTS_REF_USE) | (1u << FACTS_REF_BEHAVIOUR);
	unsigned export =
	    (1u << FACTS_REF_STRUCT) | (1u << FACTS_REF_IMPORT) | (1u << FACTS_REF_REQUIRE);
	unsigned runtime =
	    (1u << FACTS_REF_VALUE) | (1u << FACTS_REF_MFA) | (1u << FACTS_REF_APPLY);
	for (size_t i = 0; i < g->edges.len; i++) {
		const struct kg_edge *e = kg_edge_at(g, (int)i);
		if (e->kinds & compile)
			edge_add(edges, g, e->from, e->to, KG_XREF_COMPILE);
		else if (e->kinds & export)
			edge_add(edges, g, e->from, e->to, KG_XREF_EXPORT);
		else if (e->kinds & runtime)
			edge_add(edges, g, e->from, e->to, KG_XREF_RUNTIME);
	}
	/* defimpl P, for: T refers to T at runtime (the impl's __impl__/1) */
	for (size_t i = 0; i < g->modules.len; i++) {
		const struct kg_module *m = kg_module_at(g, (int)i);
		int target = m->kind == FACTS_IMPL && m->impl_for
		                 ? kg_graph_module_find(g, m->impl_for)
		                 : -1;
		if (target >= 0)
			edge_add(edges, g, (int)i, target, KG_XREF_RUNTIME);
	}
	if (edges->len > 1)
		qsort(edges->items, edges->len, sizeof(struct xref_edge), edge_cmp);
	size_t out = 0;
	for (size_t i = 0; i < edges->len; i++) {
		struct xref_edge *e = gi_vec_get(edges, i);
		if (out > 0) {
			struct xref_edge *prev = gi_vec_get(edges, out - 1);
			if (strcmp(prev->from, e->from) == 0 && strcmp(prev->to, e->to) == 0)
				continue; /* sorted strongest first */
		}
		GI_VEC_AT(edges, struct xref_edge, out++) = *e;
	}
	edges->len = out;
}

/* True when `file` has a dependency (edges sorted by source file). */
static bool has_dependencies(const struct gi_vec *edges, const char *file)
{
	size_t lo = 0, hi = edges->len;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(GI_VEC_AT(edges, struct xref_edge, mid).from, file);
		if (c == 0)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

int kg_xref_json(const struct kg_graph *g, const char *label, json_t *out)
{
	int want = -1; /* -1 all, 3 compile-connected */
	if (label) {
		for (int i = 0; i < 3; i++)
			if (strcmp(label, label_names[i]) == 0)
				want = i;
		if (strcmp(label, "compile-connected") == 0)
			want = 3;
		if (want < 0)
			return GI_EINVAL;
	}
	struct gi_vec edges;
	gi_vec_init(&edges, sizeof(struct xref_edge));
	edges_collect(g, &edges);
	json_t *files = json_array(), *deps = NULL;
	const char *current = NULL;
	long long count = 0;
	for (size_t i = 0; i < edges.len; i++) {
		const struct xref_edge *e = gi_vec_get(&edges, i);
		bool keep =
		    want < 0 || e->label == want ||
		    (want == 3 && e->label == KG_XREF_COMPILE && has_dependencies(&edges, e->to));
		if (!keep)
			continue;
		if (!current || strcmp(current, e->from) != 0) {
			json_t *f = json_object();
			json_object_set_new(f, "file", json_string(e->from));
			deps = json_array();
			json_object_set_new(f, "deps", deps);
			json_array_append_new(files, f);
			current = e->from;
		}
		json_t *d = json_object();
		json_object_set_new(d, "file", json_string(e->to));
		json_object_set_new(d, "label", json_string(label_names[e->label]));
		json_array_append_new(deps, d);
		count++;
	}
	json_object_set_new(out, "label", label ? json_string(label) : json_null());
	json_object_set_new(out, "files", files);
	json_object_set_new(out, "edges", json_integer(count));
	gi_vec_destroy(&edges);
	return 0;
}
