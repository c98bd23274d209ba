/*
 * snapshot.h - the sample reply of the session process to the snapshot of
 * docs/SNAPSHOT.md (snapshot.c). Thread-safe (no shared state).
 */
#ifndef GIULIA_OBSERVE_SNAPSHOT_H
#define GIULIA_OBSERVE_SNAPSHOT_H

#include <jansson.h>
#include <stdint.h>

/* Turns a sample reply (decoded to JSON by obs_term_to_json, borrowed) into a
 * snapshot; returns a new object (caller decrefs) or NULL when the reply is
 * not a sample. `session_id` may be NULL; `extra_errors` (borrowed, may be
 * NULL) are appended to the snapshot's errors. */
json_t *obs_snapshot_build(json_t *reply, const char *node, const char *session_id, long seq,
                           int64_t timestamp_ms, json_t *extra_errors);
/* "Foo.Bar.baz/2" or ":lists.map/2" from ["Elixir.Foo.Bar","baz",2]; NULL when
 * `mfa` is not such an array. Caller frees with gi_free. */
char *obs_mfa_display(json_t *mfa);

#endif
