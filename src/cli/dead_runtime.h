/*
 * dead_runtime.h - the static dead code split by a live node's calls
 * (`giulia dead-code --node NODE --for MS`). Not thread-safe (one CLI run).
 */
#ifndef GIULIA_CLI_DEAD_RUNTIME_H
#define GIULIA_CLI_DEAD_RUNTIME_H

#include <jansson.h>

#include "graph/query.h"
#include "observe/observe.h"

/* Counts the calls of every public function of the project's non-test
 * modules (db's index) on the node `t` over `window_ms` (one window per 64
 * modules), and splits `dead` (the dead_code query's answer, borrowed) by
 * them: *out (the caller decrefs) is {node, window_ms, windows,
 * modules_traced, modules_not_loaded: [names], called_but_static_dead:
 * [{module, name, arity, calls, static_reason}] (what the static graph
 * missed), dead_and_not_called: [same, calls 0], referenced_not_called:
 * [{module, name, arity, calls: 0}], errors: [the observer's]}. Errors as
 * obs_trace (the node), or the query's. */
int cli_dead_code_runtime(struct kg_db *db, const json_t *dead, const struct obs_target *t,
                          int window_ms, json_t **out);

#endif
