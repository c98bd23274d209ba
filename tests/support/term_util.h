/*
 * term_util.h - sample replies written as JSON in tests, sent through the
 * snapshot builder as the external terms a session process would send:
 * objects become maps with atom keys, strings atoms (binaries when longer
 * than an atom, or when they would read as true, false or null), null the
 * atom undefined, arrays lists.
 */
#ifndef GIULIA_TESTS_TERM_UTIL_H
#define GIULIA_TESTS_TERM_UTIL_H

#include <jansson.h>
#include <stdint.h>

/* obs_snapshot_build of `reply` (borrowed) encoded as a term; fails the
 * test when it does not encode or check. */
json_t *ts_snapshot_build(json_t *reply, const char *node, const char *session_id, long seq,
                          int64_t timestamp_ms, json_t *extra_errors);
/* obs_mfa_display of `mfa` (an array, borrowed) encoded as a tuple. */
char *ts_mfa_display(json_t *mfa);

#endif
