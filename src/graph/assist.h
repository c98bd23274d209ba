/*
 * assist.h - the queries an assistant runs before it edits, beyond search
 * and preflight (docs/ASSIST.md): the project briefing, the live weight of
 * a module or function from the latest profile, the pre-change impact of a
 * rename or removal, the validation of a change plan, and the boundaries
 * check. kg_query() (query.c) calls them for "briefing", "impact_check",
 * "plan_validate" and "check"; preflight adds the live weight.
 *
 * Each reads a finished graph (borrowed) and fills a JSON object; bad
 * arguments give GI_EINVAL with a message through kg_query_fail(). The
 * plan and boundaries parsers take outside input (files, HTTP bodies, MCP
 * arguments) and cap everything they read (the limits below). Reentrant: a
 * finished graph may be read by several threads at once.
 */
#ifndef GIULIA_GRAPH_ASSIST_H
#define GIULIA_GRAPH_ASSIST_H

#include <jansson.h>
#include <stddef.h>

#include "graph/graph.h"

struct st_db;

#define KG_PLAN_ITEMS_MAX      10000                     /* entries of any one list of a plan */
#define KG_PLAN_TEXT_MAX       (4u << 20)                /* bytes of a plan or boundaries file */
#define KG_BOUNDARY_LAYERS_MAX 256                       /* layers of a boundaries file */
#define KG_BOUNDARY_RULES_MAX  1000                      /* forbidden rules, patterns per layer */
#define KG_BOUNDARY_FILE       ".giulia-boundaries.json" /* at the project root */
#define KG_NAME_MAX            500                       /* bytes of a module or function name */

/* briefing: what to know on entering the project (size, layers, hubs,
 * cycles, riskiest modules, conventions, the latest profile's findings from
 * `profile`, a stored profile row or NULL). `top` entries per list. */
int kg_briefing(const struct kg_graph *g, const json_t *profile, int top, json_t *out);

/* The live weight of module `module` (function -1) or its function
 * `function` in `profile` (a stored profile row {id, created_ms, profile},
 * borrowed, or NULL): calls/s, share of reductions, whether traced. A new
 * object (caller decrefs); {"profile": null, "note": "no profile"} when
 * there is none. */
json_t *kg_live_weight(const struct kg_graph *g, int module, int function, const json_t *profile);

/* impact_check: what a rename, removal or arity change of module `module`
 * (function -1) or its function `function` touches. `args` (borrowed):
 * action ("rename" | "remove" | "arity"), new_name, new_arity. Call sites
 * come from the store `st` (borrowed) with their lines. */
int kg_impact_check(const struct kg_graph *g, struct st_db *st, int module, int function,
                    const json_t *args, json_t *out);

/* impact_check of `name/arity`, a @callback of behaviour module `module`
 * with no function of that name: the implementations that must follow. */
int kg_impact_check_callback(const struct kg_graph *g, int module, const char *name, int arity,
                             const json_t *args, json_t *out);

/* A parsed boundaries file (kg_boundaries_parse); free with
 * kg_boundaries_free. */
struct kg_boundaries;
/* Parses and checks a boundaries document (docs/ASSIST.md): layers with
 * module patterns and allowed dependencies (acyclic), forbidden rules.
 * Borrows `doc`. GI_EINVAL with a message (kg_query_fail) when it is not
 * one. */
int kg_boundaries_parse(const json_t *doc, struct kg_boundaries **out);
void kg_boundaries_free(struct kg_boundaries *b);

/* check: the boundaries' violations on the current graph (direct edges of
 * core modules), in `out` {ok, violation_count, violations, ...}. */
int kg_check(const struct kg_graph *g, const struct kg_boundaries *b, json_t *out);

/* plan_validate: `plan` (borrowed, docs/ASSIST.md "Plan format") against
 * the graph, with `b` (may be NULL: computed layers only) and the blast
 * radius to `depth` hops. Unknown modules and malformed plans give
 * GI_EINVAL with a message. */
int kg_plan_validate(const struct kg_graph *g, const json_t *plan, const struct kg_boundaries *b,
                     int depth, json_t *out);

/* Whether module name `name` matches boundaries pattern `pattern`: an exact
 * name, or a glob where `*` matches any characters (dots included): `Web.*`
 * is every module nested in Web, not Web itself. Exposed for the tests. */
bool kg_module_pattern_match(const char *pattern, const char *name);

#endif
