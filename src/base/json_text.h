/*
 * json_text.h - compact JSON text of a jansson value, byte for byte what
 * json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) writes, in a fraction of
 * its time: the monitor serialises every snapshot it takes (a hundred a
 * second at 100 nodes), and jansson's dump formats every integer with
 * snprintf and writes through a callback per token (BENCHMARKS.md "Fleet").
 *
 * Same output: objects in insertion order, strings escaped as jansson
 * escapes them (", \, control characters; '/' and non-ASCII as they are),
 * integers in decimal, reals as "%.17g" with jansson's touches (".0" added
 * when the text has neither '.' nor 'e', the exponent without '+' or
 * leading zeros), so that every real reads back as the same double; a
 * real that holds an integer below 2^53, and any other of magnitude 1e-30
 * or more, is written without snprintf (its 17 digits computed exactly, as
 * printf rounds them), to the same text. Thread-safe (no shared state).
 */
#ifndef GIULIA_BASE_JSON_TEXT_H
#define GIULIA_BASE_JSON_TEXT_H

#include <jansson.h>
#include <stddef.h>

#include "base/buf.h"

/* Appends the text of `v` (borrowed) to `b`; 0, GI_ETOOBIG past the
 * buffer's limit, or GI_EINVAL for a value nested deeper than 2048 levels
 * or a real that is not finite (jansson refuses both). */
int gi_json_append(struct gi_buf *b, const json_t *v);

/* The pieces of gi_json_append, for writers of JSON text without a tree
 * (the same bytes as the value's text): a string of `len` bytes at `s`,
 * an integer, a real (GI_EINVAL when it is not finite). 0 or GI_ETOOBIG;
 * nothing is written on failure. */
int gi_json_append_string(struct gi_buf *b, const char *s, size_t len);
int gi_json_append_integer(struct gi_buf *b, long long v);
int gi_json_append_real(struct gi_buf *b, double d);

/* The text of `v` as a new string (gi_free), its length in *len_out (may
 * be NULL); NULL when gi_json_append fails. */
char *gi_json_text(const json_t *v, size_t *len_out);

#endif
