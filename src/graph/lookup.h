/*
 * lookup.h - typed lookups on a finished knowledge graph for readers that
 * join other data with it (the profile builder, fuse/join.c), finding
 * modules and functions the way the queries do (module_details,
 * function_details) without going through their JSON. Pure functions of a
 * finished graph (graph.h): safe from several threads at once.
 */
#ifndef GIULIA_GRAPH_LOOKUP_H
#define GIULIA_GRAPH_LOOKUP_H

#include <stdbool.h>
#include <stddef.h>

#include "graph/graph.h"

/* The module `name` (display form; an "Elixir." prefix accepted, as the
 * queries take it), or -1 when the graph does not know it. */
int kg_module_lookup(const struct kg_graph *g, const char *name);

/* The function `name`/`arity` that module `module` defines, or -1 when it
 * does not (an external module's called-only functions are not defined).
 * Names of 256 bytes or more and arities outside 0..255 are never found,
 * as in function_details. */
int kg_function_lookup(const struct kg_graph *g, int module, const char *name, long arity);

/* Whether module `module` `use`s the module named `target` (an edge of the
 * `use` kind). */
bool kg_module_uses(const struct kg_graph *g, int module, const char *target);

/* The modules `module` depends on (its out edges, external modules and
 * dispatch edges included, as module_details' "dependencies" lists them),
 * sorted by name: writes at most `cap` module indexes to `out` and returns
 * how many it wrote. */
size_t kg_module_dependencies(const struct kg_graph *g, int module, int *out, size_t cap);

#endif
