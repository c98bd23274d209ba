/*
 * fuse_int.h - what the files of src/fuse share and nobody else needs:
 * tolerant JSON readers (profiles and snapshots come from outside, so every
 * field may be missing, null or of the wrong type) and number writers.
 */
#ifndef GIULIA_FUSE_FUSE_INT_H
#define GIULIA_FUSE_FUSE_INT_H

#include <jansson.h>
#include <stdbool.h>

#include "base/buf.h"

/* Caps on sizes that come from input. */
#define FUSE_MAX_SNAPSHOTS 200000
#define FUSE_MAX_LIST      1000   /* entries read from one list of one snapshot */
#define FUSE_MAX_PROCESSES 100000 /* distinct pids tracked over a session */
#define FUSE_MAX_FUNCTIONS 20000  /* distinct traced functions */
#define FUSE_MAX_SERIES    240    /* points kept per time series */
#define FUSE_MAX_NAME      512    /* longest module/function/pid text kept */

/* The number at `key` of `obj` (integer or real), or NAN. */
double fuse_num(const json_t *obj, const char *key);
/* The number at a dotted path ("run_queue.total"), or NAN. */
double fuse_num_path(const json_t *obj, const char *path);
/* The string at `key`, or NULL (borrowed). */
const char *fuse_str(const json_t *obj, const char *key);
/* The string at a dotted path, or NULL. */
const char *fuse_str_path(const json_t *obj, const char *path);
/* The array/object at a dotted path, or NULL. */
json_t *fuse_get_path(const json_t *obj, const char *path);
/* A JSON number for `x`: null for NAN, an integer when integral, else a
 * real rounded to 4 decimals. New reference. */
json_t *fuse_json_num(double x);
/* True for a JSON true. */
bool fuse_bool(const json_t *obj, const char *key);

/* Human forms for reports: "61.2 MB", "1.23 M", "42.0%". */
void fuse_fmt_bytes(double bytes, char *out, size_t size);
void fuse_fmt_count(double n, char *out, size_t size);
void fuse_fmt_pct(double share, char *out, size_t size);

/* Whether `module` (display name, docs/SNAPSHOT.md) is process plumbing:
 * code that says how a process was started or how it waits (proc_lib, the
 * generic behaviours' loops, a spawn(fn) trampoline, erl_eval, Elixir's
 * script compiler, Task), never what the application does. Attribution
 * sees through these, and no recommendation is ever about one of them. */
bool fuse_module_is_wrapper(const char *module);

/* Appends `s` to `out` escaped for HTML text and attributes. */
int fuse_html_escape(struct gi_buf *out, const char *s);

#endif
