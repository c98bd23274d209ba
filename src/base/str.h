/*
 * str.h - bounded string helpers used instead of the unsafe C library ones.
 * Thread-safe.
 */
#ifndef GIULIA_BASE_STR_H
#define GIULIA_BASE_STR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Copies `src` into `dst` of `size` bytes, always NUL-terminating; returns
 * 0, or GI_ETOOBIG when `src` was truncated. */
int gi_strlcpy(char *dst, const char *src, size_t size);
/* Parses a whole decimal integer within [min, max]: an optional '-' then
 * digits only (no space, no '+', no other base), as every route and option
 * of the project needs. Returns 0 or GI_EINVAL. */
int gi_parse_int64(const char *s, int64_t min, int64_t max, int64_t *out);
/* True when `s` starts with / ends with `affix`. */
bool gi_str_starts_with(const char *s, const char *prefix);
bool gi_str_ends_with(const char *s, const char *suffix);
/* True when the `len` bytes at `s` are valid UTF-8. */
bool gi_utf8_valid(const char *s, size_t len);
/* The decimal text of `v` into `out` (at least 21 bytes, no NUL); returns
 * its length. Without snprintf: for the texts made per snapshot. */
size_t gi_int_text(long long v, char *out);
/* Constant-time comparison of two byte strings (lengths are not secret). */
bool gi_str_secure_equal(const char *a, const char *b);

#endif
