/*
 * query_int.h - what the files of kg_query share (query.h is the
 * contract): the open database (struct kg_db), the signature every query
 * q_NAME has and their declarations from the registry (query_list.h), and
 * the JSON and argument helpers of query_json.c. query.c opens databases,
 * loads their graph and dispatches; the analyses answering from the graph
 * are query_modules.c (modules and functions), query_metrics.c (rankings,
 * coupling, cycles, topology) and query_walks.c (dead code, impact, path,
 * xref); the others delegate to their own files (search, assist, review,
 * contracts). A query runs on the one thread that uses its kg_db.
 */
#ifndef GIULIA_GRAPH_QUERY_INT_H
#define GIULIA_GRAPH_QUERY_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/graph.h"
#include "graph/query.h"
#include "graph/search.h"
#include "store/store.h"

#define DEFAULT_DEPTH 2
/* The walk visits each module or function once whatever the depth, so the
 * cap only bounds the number in the answer; it is the API's documented 1000. */
#define MAX_DEPTH   1000
#define DEFAULT_TOP 20

struct kg_db {
	struct st_db *store;
	struct kg_graph *graph;
	int64_t version;
	char *path;
	/* search_code's index of `graph` and the hybrid mode's word vectors,
	 * built on first use, dropped with the graph */
	struct kg_search_index *search;
	struct kg_word_vectors *vectors;
	bool refresh; /* kg_db_refresh_on_query */
	/* Where `graph` came from: "snapshot" (DB.graph) or "index" (the rows). */
	const char *graph_source;
	/* The stamp `graph` was read or written under (graph_open), for the
	 * search index's file; graph_stamped false: none (snapshots off). */
	uint64_t graph_stamp;
	bool graph_stamped;
};

/* A query: answers `p` from graph `g` of `db` into the object `out`; 0 or
 * a negative code (its message through kg_query_fail). */
typedef int (*query_fn)(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                        json_t *out);

/* q_NAME for every query of the registry, in query.c or a query_*.c. */
#define KG_QUERY(name, ...)                                                                       \
	int q_##name(struct kg_db *db, const struct kg_graph *g, const struct kg_query_params *p, \
	             json_t *out);
#define KG_PARAM(...)
#define KG_QUERY_END
#include "graph/query_list.h"
#undef KG_QUERY
#undef KG_PARAM
#undef KG_QUERY_END

/* ---- JSON and arguments (query_json.c) ---- */

/* Members of `o`: an integer; a real rounded to 1/scale; a string (NULL:
 * null); a boolean. */
void query_set_int(json_t *o, const char *k, long long v);
void query_set_real(json_t *o, const char *k, double v, double scale);
void query_set_str(json_t *o, const char *k, const char *v);
void query_set_bool(json_t *o, const char *k, bool v);

/* The names of the reference kinds (enum facts_ref_kind) whose bits are set
 * in `kinds`, an array (new reference). */
json_t *query_kinds_json(unsigned kinds);
/* Function `fi` as {module, name, arity} (new reference). */
json_t *query_function_ref_json(const struct kg_graph *g, int fi);
/* Function `fi` in full, with its module's name when `with_module` (new
 * reference). */
json_t *query_function_json(const struct kg_graph *g, int fi, bool with_module);
/* A module's row of the module lists (new reference). */
json_t *query_module_row_json(const struct kg_module *m);

/* The module named by p->module ("Elixir." prefix accepted). */
int query_module_lookup(const struct kg_graph *g, const struct kg_query_params *p, int *out);
/* The function named by p->function ("name/arity") in module `m`. */
int query_function_lookup(const struct kg_graph *g, int m, const char *spec, int *out);

/* The parameters every query reads alike (`p` may be NULL): p->top, else
 * `def`; p->depth, else DEFAULT_DEPTH, at most MAX_DEPTH; direct_only;
 * include_external. */
int query_top_of(const struct kg_query_params *p, int def);
int query_depth_of(const struct kg_query_params *p);
bool query_direct_only(const struct kg_query_params *p);
bool query_include_external(const struct kg_query_params *p);

/* Sorts `n` module indexes of `g` by `cmp`, one of the comparators below. */
void query_module_indexes_sort(const struct kg_graph *g, int *idx, size_t n,
                               int (*cmp)(const void *, const void *));
/* Indexes of the modules selected by `keep`, sorted by `cmp` (NULL: graph
 * order); the caller frees them with gi_free(). */
int *query_modules_sorted(const struct kg_graph *g, bool (*keep)(const struct kg_module *),
                          int (*cmp)(const void *, const void *), size_t *count);

/* Comparators of module indexes for query_module_indexes_sort (only): by
 * name, and the metrics' orders, largest first. */
int query_by_name(const void *a, const void *b);
int query_by_centrality(const void *a, const void *b);
int query_by_in_degree(const void *a, const void *b);
int query_by_god(const void *a, const void *b);
int query_by_fan(const void *a, const void *b);
int query_by_heat(const void *a, const void *b);
int query_by_risk(const void *a, const void *b);
int query_by_complexity(const void *a, const void *b);

/* Module selections for query_modules_sorted: core (kg_module_is_core),
 * the project's, all, and hubs. */
bool query_keep_core(const struct kg_module *m);
bool query_keep_project(const struct kg_module *m);
bool query_keep_all(const struct kg_module *m);
bool query_keep_hub(const struct kg_module *m);

#endif
