/*
 * buf.c - growable byte buffer (see buf.h).
 */
#include "base/buf.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/error.h"

void gi_buf_init(struct gi_buf *b, size_t limit)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->limit = limit;
}

void gi_buf_destroy(struct gi_buf *b)
{
	gi_free(b->data);
	gi_buf_init(b, b->limit);
}

void gi_buf_reset(struct gi_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

static int reserve(struct gi_buf *b, size_t extra)
{
	if (extra > SIZE_MAX / 2 - b->len)
		return GI_ETOOBIG;
	size_t need = b->len + extra + 1;
	if (b->limit && need - 1 > b->limit)
		return GI_ETOOBIG;
	if (need <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap *= 2;
	b->data = gi_realloc(b->data, cap);
	b->cap = cap;
	return 0;
}

int gi_buf_reserve(struct gi_buf *b, size_t extra)
{
	int rc = reserve(b, extra);
	if (rc == 0 && b->len == 0)
		b->data[0] = '\0';
	return rc;
}

int gi_buf_append(struct gi_buf *b, const void *data, size_t len)
{
	int rc = reserve(b, len);
	if (rc)
		return rc;
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

int gi_buf_puts(struct gi_buf *b, const char *s)
{
	return gi_buf_append(b, s, strlen(s));
}

int gi_buf_vprintf(struct gi_buf *b, const char *fmt, va_list ap)
{
	/* Formatted straight into the room there is, once, when it fits (a
	 * second pass only when the buffer must grow). */
	size_t room = b->cap > b->len ? b->cap - b->len : 0;
	va_list copy;
	va_copy(copy, ap);
	if (room == 0) {
		/* an empty buffer: through a small one on the stack */
		char local[256];
		int k = vsnprintf(local, sizeof(local), fmt, copy);
		va_end(copy);
		if (k < 0)
			return GI_EINVAL;
		if ((size_t)k < sizeof(local))
			return gi_buf_append(b, local, (size_t)k);
		va_copy(copy, ap);
	}
	int n = vsnprintf(room ? b->data + b->len : NULL, room, fmt, copy);
	va_end(copy);
	if (n >= 0 && (size_t)n < room && (!b->limit || b->len + (size_t)n <= b->limit)) {
		b->len += (size_t)n;
		return 0;
	}
	if (room)
		b->data[b->len] = '\0'; /* what did not fit, or a failure, leaves nothing */
	if (n < 0)
		return GI_EINVAL;
	int rc = reserve(b, (size_t)n);
	if (rc)
		return rc;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int gi_buf_printf(struct gi_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = gi_buf_vprintf(b, fmt, ap);
	va_end(ap);
	return rc;
}

char *gi_buf_take(struct gi_buf *b)
{
	char *s = b->data ? b->data : gi_strdup("");
	gi_buf_init(b, b->limit);
	return s;
}

const char *gi_buf_str(const struct gi_buf *b)
{
	return b->data ? b->data : "";
}
