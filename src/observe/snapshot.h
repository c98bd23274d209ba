/*
 * snapshot.h - the sample reply of the session process to the snapshot of
 * docs/SNAPSHOT.md (snapshot.c). Thread-safe (no shared state).
 */
#ifndef GIULIA_OBSERVE_SNAPSHOT_H
#define GIULIA_OBSERVE_SNAPSHOT_H

#include <jansson.h>
#include <stdint.h>

#include "observe/term.h"

/* Turns a sample reply (checked by obs_term_doc_parse) into a snapshot;
 * returns a new object (caller decrefs) or NULL when the reply is not a
 * sample. `session_id` may be NULL; `extra_errors` (borrowed, may be NULL)
 * are appended to the snapshot's errors. */
json_t *obs_snapshot_build(struct obs_term reply, const char *node, const char *session_id,
                           long seq, int64_t timestamp_ms, json_t *extra_errors);
/* An estimated call count from duty-cycled counting (docs/OBSERVE.md
 * "Overhead budget"): `sum` and `sumsq` of the counts of `cycles` on-phases
 * that covered the fraction `duty` (0-1] of the window. The estimate is
 * sum / duty; its 95% interval treats the cycles as independent samples of
 * the call rate, with their observed variance (at least the count's own,
 * Poisson) and a finite-population correction (1 - duty): at duty 1 the
 * interval is the count itself. low is never below the measured sum; a
 * sum of 0 has the upper bound of the rule of three. With no duty or no
 * cycle everything is the sum. */
struct obs_estimate {
	double estimate, low, high;
};
void obs_estimate_calls(double sum, double sumsq, long cycles, double duty,
                        struct obs_estimate *out);
/* "Foo.Bar.baz/2" or ":lists.map/2" from {'Elixir.Foo.Bar', baz, 2}; NULL
 * when `mfa` is not such a tuple (or list). Caller frees with gi_free. */
char *obs_mfa_display(struct obs_term mfa);

#endif
