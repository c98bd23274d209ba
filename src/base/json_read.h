/*
 * json_read.h - tolerant reading of JSON from outside (snapshots, profiles,
 * answers of daemons): every reader takes any value, of any shape, and
 * answers "absent" (NULL, NAN, false) for a missing key, a parent that is
 * not an object, or a value of another type. One set of readers for every
 * layer, in place of a private copy in each. Borrowed results; thread-safe
 * (no state).
 */
#ifndef GIULIA_BASE_JSON_READ_H
#define GIULIA_BASE_JSON_READ_H

#include <jansson.h>
#include <stdbool.h>

/* The value at `key` of `obj`, or NULL when `obj` is not an object or has
 * no such key. */
const json_t *gi_json_get(const json_t *obj, const char *key);
/* The value at a dotted path ("run_queue.total"; keys under 128 bytes), or
 * NULL. */
json_t *gi_json_get_path(const json_t *obj, const char *path);
/* The number (integer or real) at `key` / at a dotted path, or NAN. */
double gi_json_num(const json_t *obj, const char *key);
double gi_json_num_path(const json_t *obj, const char *path);
/* The number at `key`, or `dflt` when absent or not a number. */
double gi_json_num_or(const json_t *obj, const char *key, double dflt);
/* The string at `key` / at a dotted path, or NULL. */
const char *gi_json_str(const json_t *obj, const char *key);
const char *gi_json_str_path(const json_t *obj, const char *path);
/* The object / array at `key`, or NULL. */
const json_t *gi_json_obj(const json_t *obj, const char *key);
const json_t *gi_json_arr(const json_t *obj, const char *key);
/* True only for a JSON true at `key`. */
bool gi_json_true(const json_t *obj, const char *key);

#endif
