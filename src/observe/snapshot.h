/*
 * snapshot.h - the sample reply of the session process to the snapshot of
 * docs/SNAPSHOT.md (snapshot.c). Thread-safe (no shared state).
 */
#ifndef GIULIA_OBSERVE_SNAPSHOT_H
#define GIULIA_OBSERVE_SNAPSHOT_H

#include <jansson.h>
#include <stdbool.h>
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
/* How one module counted in one window, for the estimate of its calls
 * (docs/RULES.md "The estimator"):
 *   time      its own exposure: the share of the window's time it counted;
 *   work      the share of the node's reductions done while it counted;
 *   slowdown, steady  said about the window (1 - the measured cost of a
 *             counted call path; whether the node's busy time moved as
 *             counting explains), not used by the estimate. */
struct obs_window_share {
	double time, work, slowdown;
	bool steady;
	bool work_used; /* false: the work share says nothing (a nearly idle node) */
};
/* The estimate of a function's calls in one window. Scaled by the time
 * share (calls per counted second), a count is right where the callers run
 * at a pace of their own (requests) and wrong where they are CPU-bound and
 * counting or the observer's own work changes their speed; scaled by the
 * work share (calls per reduction), it is right for a steady CPU-bound mix
 * and wrong where unrelated work comes and goes (or the node is nearly
 * idle, where a few reductions of noise make the share). The estimate is
 * the time-scaled one (the module's own exposure, as every window's
 * counted time is its own: no other work can move it), and the 95%
 * interval spans both intervals (obs_estimate_calls), never below the
 * calls seen; with one share only, that one's. */
void obs_estimate_window(double sum, double sumsq, long cycles,
                         const struct obs_window_share *share, struct obs_estimate *out);
/* "Foo.Bar.baz/2" or ":lists.map/2" from {'Elixir.Foo.Bar', baz, 2}; NULL
 * when `mfa` is not such a tuple (or list). Caller frees with gi_free. */
char *obs_mfa_display(struct obs_term mfa);

#endif
