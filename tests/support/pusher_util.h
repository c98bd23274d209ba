/*
 * pusher_util.h - driving the monitor's pusher (api/pusher.h) in-process
 * from a test: one made for the test and freed when it ends, its counters,
 * and the files its spool directory holds.
 */
#ifndef GIULIA_TESTS_PUSHER_UTIL_H
#define GIULIA_TESTS_PUSHER_UTIL_H

#include "api/pusher.h"

/* A new pusher for `cfg` (asserted to start), freed without flushing when
 * the test ends (th_defer); the test borrows it and must not free it. */
struct api_pusher *ts_pusher_new_deferred(const struct api_pusher_config *cfg);

/* The integer counter `key` of api_pusher_stats(p) (0 when absent). */
long long ts_pusher_stat(struct api_pusher *p, const char *key);

/* How many entries of `dir` do not start with '.' (0 when it cannot be
 * opened). */
int ts_count_files(const char *dir);

#endif
