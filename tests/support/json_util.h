/*
 * json_util.h - reading JSON in tests: elements of arrays, fuse profiles
 * (docs/SNAPSHOT.md "Profile") with their recommendations and evidence, and
 * the recorded snapshot series of tests/fixtures/snapshots.
 */
#ifndef GIULIA_TESTS_JSON_UTIL_H
#define GIULIA_TESTS_JSON_UTIL_H

#include <jansson.h>

/* The first element of `array` whose string member `key` equals `value`, or
 * NULL; borrowed from `array`. */
json_t *ts_json_find(json_t *array, const char *key, const char *value);

/* The storage of the database behind `module`'s workload entry in
 * `profile` (its "database"."storage": "mnesia", "external", ...), or NULL
 * when the profile has no such entry or it no storage; borrowed from
 * `profile`. */
const char *ts_workload_storage(json_t *profile, const char *module);

/* The first recommendation of rule `rule` (and `subject` when not NULL) in
 * `profile`, or NULL; borrowed from `profile`. */
json_t *ts_rec_find(json_t *profile, int rule, const char *subject);
/* The number `key` of the recommendation's evidence (0 when absent). */
double ts_rec_ev(json_t *rec, const char *key);
/* The text report of `profile` (fuse_report_text) with its wrapping undone:
 * its words one space apart, so that a wrapped line is searched whole.
 * Fails the test when it does not render; caller frees with gi_free. */
char *ts_report_text_flat(json_t *profile);
/* Loads tests/fixtures/snapshots/SERIES/FILE; fails the test when it cannot.
 * Caller owns the result. */
json_t *ts_fixture_json(const char *series, const char *file);

#endif
