/*
 * product.h - the whole product from an end-to-end test: a target of
 * tests/fixtures/targets built and (optionally) indexed, `giulia serve` on
 * loopback, an observation run with giulia-observe start/status/stop, and
 * the stored profile read back with `giulia profile latest`.
 */
#ifndef GIULIA_TESTS_PRODUCT_H
#define GIULIA_TESTS_PRODUCT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Builds target `name` with tests/fixtures/targets/build.sh into the test
 * directory; returns its ebin path (a static buffer, overwritten by the next
 * call). Fails the test when the build fails. */
const char *ts_target_build(const char *name);

/* Copies target `name`'s sources into the test directory and indexes the
 * copy through the worker at `worker_url` (POST /api/index/scan, asserted
 * 200); returns the copy's path (a static buffer, overwritten by the next
 * call). */
const char *ts_target_index(const char *worker_url, const char *name);

/* Runs `giulia ARGS...` (giulia-observe when `observe`) with the
 * NULL-terminated `args` (at most 22); returns its exit status, *out its
 * standard output (malloc'd, caller frees; may be NULL). A non-zero exit is
 * reported on stderr with what it printed there. */
int ts_product_run(bool observe, const char *const *args, char **out);

/* Starts `giulia serve` on free loopback ports with its data under the test
 * directory, stopped when the test ends (th_defer); waits until both daemons
 * answer /health, sets GIULIA_WORKER_URL and GIULIA_MONITOR_URL, and writes
 * the worker's URL to `worker_url` (`size` bytes). One per test. */
void ts_serve_start(char *worker_url, size_t size);
/* The same with more arguments for `giulia serve` (`extra`, NULL-ended,
 * borrowed; at most 15), such as "--alert-rules" FILE. */
void ts_serve_start_with(char *worker_url, size_t size, const char *const *extra);

/* `giulia-observe` with the NULL-terminated `start` arguments (asserted
 * exit 0), then polls `status --json` until the first observation has
 * taken `snapshots` snapshots (at most 600 polls, 200 ms apart), then
 * `stop NODE` (asserted exit 0). Returns what stop printed (malloc'd,
 * caller frees; may be NULL), after echoing it to stderr. */
char *ts_observe_until(const char *const *start, const char *node, int snapshots);

/* `giulia profile latest --format json` (asserted exit 0) parsed; asserted
 * not NULL. The caller owns the result (json_decref). */
json_t *ts_profile_latest(void);

#endif
