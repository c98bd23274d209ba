/*
 * load.c - the knowledge graph of everything an index database holds (see
 * kg_graph_load in graph.h): the store's rows, read in one read transaction,
 * fed to the graph builder, then kg_graph_finish.
 *
 * Row ids are mapped to graph indexes through sorted (id, index) pairs, so
 * memory follows the number of rows whatever the ids are (a damaged file may
 * hold any id), and rows that point at nothing known are skipped.
 */
#include "graph/graph.h"

#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "store/store.h"

struct id_pair {
	int64_t id;
	int idx;
};

static int id_pair_cmp(const void *a, const void *b)
{
	const struct id_pair *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void id_map_put(struct gi_vec *map, int64_t id, int idx)
{
	struct id_pair p = {id, idx};
	gi_vec_push(map, &p);
}

static int id_map_get(const struct gi_vec *map, int64_t id)
{
	/* bsearch with a NULL base is undefined even for zero items (C11 7.22.5). */
	if (map->len == 0)
		return -1;
	struct id_pair key = {id, 0};
	const struct id_pair *p = bsearch(&key, map->items, map->len, sizeof(key), id_pair_cmp);
	return p ? p->idx : -1;
}

struct loader {
	struct kg_graph *g;
	struct gi_vec module_of;   /* struct id_pair: module row id -> module index */
	struct gi_vec function_of; /* struct id_pair: function row id -> function index */
};

/* Splits a comma-joined list and calls add() for each item. */
static void split_add(struct kg_graph *g, int module, const char *list,
                      void (*add)(struct kg_graph *, int, const char *))
{
	if (!list)
		return;
	char item[512];
	while (*list) {
		const char *comma = strchr(list, ',');
		size_t len = comma ? (size_t)(comma - list) : strlen(list);
		if (len < sizeof(item)) {
			memcpy(item, list, len);
			item[len] = '\0';
			add(g, module, item);
		}
		list += len + (comma ? 1 : 0);
	}
}

static int on_module(void *ctx, const struct st_module_row *r)
{
	struct loader *l = ctx;
	struct kg_module_info info = {
	    .name = r->name,
	    .file = r->file,
	    .kind = r->kind,
	    .impl_for = r->impl_for,
	    .protocol = r->protocol,
	    .line_start = r->line_start,
	    .line_end = r->line_end,
	    .test = r->test,
	    .has_moduledoc = r->has_moduledoc,
	    .moduledoc_false = r->moduledoc_false,
	    .has_struct = r->has_struct,
	    .origin = r->origin,
	};
	int existing = kg_graph_module_find(l->g, info.name);
	if (existing >= 0 && info.origin == FACTS_FROM_BEAM &&
	    kg_module_at(l->g, existing)->origin == FACTS_FROM_SOURCE)
		return 0; /* source wins over beam */
	int m = kg_graph_module_add(l->g, &info);
	id_map_put(&l->module_of, r->id, m);
	split_add(l->g, m, r->struct_fields, kg_graph_struct_field_add);
	split_add(l->g, m, r->callbacks, kg_graph_callback_add);
	return 0;
}

static int on_function(void *ctx, const struct st_function_row *r)
{
	struct loader *l = ctx;
	int m = id_map_get(&l->module_of, r->module_id);
	if (m < 0)
		return 0;
	struct kg_function f = {
	    .name = r->name,
	    .arity = r->arity,
	    .kind = r->kind,
	    .is_public = r->is_public,
	    .line_start = r->line_start,
	    .line_end = r->line_end,
	    .clauses = r->clauses,
	    .lines = r->lines,
	    .has_doc = r->has_doc,
	    .has_spec = r->has_spec,
	    .has_impl = r->has_impl,
	    .has_guard = r->has_guard,
	    .doc_false = r->doc_false,
	    .cyclomatic = r->cyclomatic,
	    .cognitive = r->cognitive,
	    .max_nesting = r->max_nesting,
	    .delegate_to = r->delegate_to,
	    .generated_by = r->generated_by,
	};
	id_map_put(&l->function_of, r->id, kg_graph_function_add(l->g, m, &f));
	return 0;
}

static int on_ref(void *ctx, const struct st_ref_row *r)
{
	struct loader *l = ctx;
	int m = id_map_get(&l->module_of, r->module_id);
	if (m < 0 || r->kind < 0 || r->kind >= FACTS_REF_KIND_COUNT)
		return 0;
	kg_graph_ref_add(l->g, m, r->target, 1u << r->kind, r->count);
	return 0;
}

static int on_call(void *ctx, const struct st_call_row *r)
{
	struct loader *l = ctx;
	int fn = id_map_get(&l->function_of, r->function_id);
	if (fn >= 0)
		kg_graph_call_add(l->g, fn, r->kind, r->module, r->function, r->arity, r->count);
	return 0;
}

int kg_graph_load(struct st_db *db, struct kg_graph **out)
{
	*out = NULL;
	struct loader l = {.g = kg_graph_new()};
	gi_vec_init(&l.module_of, sizeof(struct id_pair));
	gi_vec_init(&l.function_of, sizeof(struct id_pair));
	int rc = st_read_begin(db);
	if (!rc) {
		rc = st_modules_each(db, on_module, &l);
		gi_vec_sort(&l.module_of, id_pair_cmp);
		if (!rc)
			rc = st_functions_each(db, on_function, &l);
		gi_vec_sort(&l.function_of, id_pair_cmp);
		if (!rc)
			rc = st_refs_each(db, on_ref, &l);
		if (!rc)
			rc = st_calls_each(db, on_call, &l);
		st_read_end(db);
	}
	gi_vec_destroy(&l.module_of);
	gi_vec_destroy(&l.function_of);
	if (rc) {
		kg_graph_free(l.g);
		return rc;
	}
	kg_graph_finish(l.g);
	*out = l.g;
	return 0;
}
