/*
 * term.h - Erlang external term format to JSON, for the replies of the
 * target-side probes (mapping in term.c). Thread-safe (no shared state).
 */
#ifndef GIULIA_OBSERVE_TERM_H
#define GIULIA_OBSERVE_TERM_H

#include <jansson.h>

/* Decodes the term at buf[*index] (no version byte there) into JSON; *index
 * moves past it. *out is the caller's (json_decref). GI_EPARSE on a
 * malformed or too deeply nested term; never reads past buf[len - 1] for the
 * sizes it checks. */
int obs_term_to_json(const char *buf, int len, int *index, json_t **out);

#endif
