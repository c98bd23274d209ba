/*
 * node_watch.h - watching a real node (support.h's ts_beam) while Giulia
 * observes it: polling it until an Erlang expression gives the expected
 * answer, the residue expression's common part (our own processes), and an
 * observer run in a child process that a test can kill or freeze.
 */
#ifndef GIULIA_TESTS_NODE_WATCH_H
#define GIULIA_TESTS_NODE_WATCH_H

#include <sys/types.h>

#include "observe/observe.h"
#include "support.h"

/* Erlang that binds Ours to the node's processes that are ours (a session,
 * a guardian or the process that starts a session, by their process
 * dictionary); the start of a residue expression, to be followed by more
 * expressions. */
#define TS_OURS_EXPR                                                                           \
	"Ours = [P || P <- processes(), {dictionary, D} <- [process_info(P, dictionary)], "    \
	"lists:keymember(giulia_session, 1, D) orelse lists:keymember(giulia_guardian, 1, D) " \
	"orelse lists:keymember(giulia_probe, 1, D)], "

/* Evaluates `expr` on `n` every 100 ms until its answer contains `want`;
 * fails the test once `timeout_ms` have passed, with "node NAME WHAT: " and
 * the last answer. */
void ts_beam_wait_answer(const struct ts_beam *n, const char *expr, const char *want,
                         int timeout_ms, const char *what);

/* Forks a child that starts a session with `cfg` in a manager of its own
 * and then waits for signals forever (the test kills it); the child exits 1
 * when the manager or the session does not start. Returns the child's pid
 * at once (asserted >= 0); the caller reaps it (waitpid). */
pid_t ts_observer_fork(const struct obs_session_config *cfg);

#endif
