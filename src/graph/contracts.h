/*
 * contracts.h - contract, convention, struct-lifecycle and clone checks over
 * the knowledge graph and the index's sites (docs/CHECKS.md): the queries
 * `contracts`, `conventions`, `structs` and `duplicates` of kg_query.
 *
 * Each function borrows the store (read in one transaction), the finished
 * graph of the same database and the parameters, and fills the JSON object
 * `out` (borrowed). They return 0, GI_EINVAL for an argument out of range
 * (kg_query_fail says which) or a store error. Behaviours named by a project
 * module but defined outside it are read from the installed Elixir and OTP
 * object code (GIULIA_BEHAVIOUR_BEAMS: ':'-separated directories of .beam
 * files, default the ebin directories under /usr/lib/elixir/lib and
 * /usr/lib/erlang/lib). Thread-safe as far as their arguments are.
 */
#ifndef GIULIA_GRAPH_CONTRACTS_H
#define GIULIA_GRAPH_CONTRACTS_H

#include <jansson.h>

#include "graph/graph.h"
#include "graph/query.h"

struct st_db;

#define KG_CHECK_MAX_NESTING_DEFAULT    4  /* deep_nesting: max_nesting above this */
#define KG_CHECK_MAX_COMPLEXITY_DEFAULT 9  /* high_complexity: cyclomatic above this */
#define KG_DUP_MIN_SIZE_DEFAULT         25 /* duplicates: named nodes of a clause body */

int kg_contracts(struct st_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                 json_t *out);
int kg_conventions(struct st_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                   json_t *out);
int kg_structs(struct st_db *db, const struct kg_graph *g, const struct kg_query_params *p,
               json_t *out);
int kg_duplicates(struct st_db *db, const struct kg_graph *g, const struct kg_query_params *p,
                  json_t *out);

#endif
