/*
 * buf.h - a growable byte buffer, always NUL-terminated.
 *
 * `struct gi_buf` is embedded by its owner (gi_buf_init / gi_buf_destroy).
 * An optional cap bounds its size: appends that would pass it fail with
 * GI_ETOOBIG and leave the buffer as it was, so that sizes driven by input
 * are always bounded. Not thread-safe.
 */
#ifndef GIULIA_BASE_BUF_H
#define GIULIA_BASE_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct gi_buf {
	char *data; /* NUL-terminated; NULL until the first append */
	size_t len;
	size_t cap;
	size_t limit; /* 0: unbounded */
};

/* Prepares an empty buffer bounded by `limit` bytes (0 for no bound). */
void gi_buf_init(struct gi_buf *b, size_t limit);
/* Releases the buffer's memory and leaves it empty and reusable. */
void gi_buf_destroy(struct gi_buf *b);
/* Empties the buffer, keeping its memory. */
void gi_buf_reset(struct gi_buf *b);
/* Makes room for `extra` more bytes at once (one allocation where appends
 * would grow it step by step); returns 0 or GI_ETOOBIG. */
int gi_buf_reserve(struct gi_buf *b, size_t extra);
/* Appends `len` bytes; returns 0 or GI_ETOOBIG. */
int gi_buf_append(struct gi_buf *b, const void *data, size_t len);
/* Appends a NUL-terminated string; returns 0 or GI_ETOOBIG. */
int gi_buf_puts(struct gi_buf *b, const char *s);
/* Appends string literal `lit`, its length counted by the compiler. */
#define GI_BUF_LIT(b, lit) gi_buf_append((b), "" lit, sizeof("" lit) - 1)
/* Appends formatted text; returns 0 or GI_ETOOBIG. */
int gi_buf_printf(struct gi_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int gi_buf_vprintf(struct gi_buf *b, const char *fmt, va_list ap);
/* Hands the contents to the caller (free with gi_free) and empties the buffer. */
char *gi_buf_take(struct gi_buf *b);
/* Returns the contents, "" for an empty buffer; borrowed until the next change. */
const char *gi_buf_str(const struct gi_buf *b);

#endif
