/*
 * args.h - the named arguments of a kg_query (struct kg_query_params.args),
 * read the same way by every query: a JSON value or, from REST query
 * strings, its text. A bad value fails the query with GI_EINVAL and a
 * message through kg_query_fail() naming the argument.
 */
#ifndef GIULIA_GRAPH_ARGS_H
#define GIULIA_GRAPH_ARGS_H

#include <jansson.h>
#include <stdbool.h>

#include "graph/query.h"

/* Records the message kg_query_error_message() returns for the failing
 * query on this thread. Every analysis of graph/ fails through it; it lives
 * here, below them all, so that none of them depends on the dispatcher. */
void kg_query_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Forgets this thread's message: kg_query calls it before each query. */
void kg_query_fail_reset(void);

/* The argument `name` (borrowed), NULL when absent. */
const json_t *kg_arg(const struct kg_query_params *p, const char *name);
/* The argument `name` as a string (borrowed), NULL when absent or not one. */
const char *kg_arg_string(const struct kg_query_params *p, const char *name);
/* An integer argument in [min, max]: a JSON integer or its decimal string;
 * `dflt` when absent or null. */
int kg_arg_int(const struct kg_query_params *p, const char *name, int dflt, int min, int max,
               int *out);
/* A boolean argument: JSON true/false or "true"/"false"/"1"/"0" (or "");
 * false when absent. */
int kg_arg_bool(const struct kg_query_params *p, const char *name, bool *out);
/* True when module name `name` is `prefix` or nested in it (`prefix` may
 * carry the "Elixir." of the atom); a NULL or empty prefix holds every
 * module. */
bool kg_module_within(const char *name, const char *prefix);

#endif
