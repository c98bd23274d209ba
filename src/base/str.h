/*
 * str.h - bounded string helpers used instead of the unsafe C library ones.
 * Thread-safe.
 */
#ifndef GIULIA_BASE_STR_H
#define GIULIA_BASE_STR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The length of string literal `lit` ("" lit makes anything else a compile
 * error): lengths are never counted by hand (make lint refuses a literal
 * beside a number in memcmp, strncmp and gi_buf_append). */
#define GI_LIT_LEN(lit) (sizeof("" lit) - 1)
/* Whether the `n` bytes at `p` begin with / are string literal `lit`. */
#define GI_MEM_STARTS(p, n, lit) \
	((size_t)(n) >= GI_LIT_LEN(lit) && memcmp((p), "" lit, GI_LIT_LEN(lit)) == 0)
#define GI_MEM_IS(p, n, lit) \
	((size_t)(n) == GI_LIT_LEN(lit) && memcmp((p), "" lit, GI_LIT_LEN(lit)) == 0)
/* Whether NUL-terminated `s` begins with string literal `lit`. */
#define GI_STR_STARTS(s, lit) (strncmp((s), "" lit, GI_LIT_LEN(lit)) == 0)

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
