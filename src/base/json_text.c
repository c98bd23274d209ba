/*
 * json_text.c - compact JSON text of a jansson value (see json_text.h).
 *
 * One pass over the tree into one growing buffer: room is reserved per
 * token, integers are converted by hand, strings copied in runs between
 * the characters that need escaping. The output is jansson's own
 * (dump.c, strconv.c jsonp_dtostr), which the unit tests compare byte for
 * byte.
 */
#include "base/json_text.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/error.h"

#define DEPTH_MAX 2048 /* jansson's JSON_PARSER_MAX_DEPTH, for symmetry */

static void put(struct gi_buf *b, const char *s, size_t n)
{
	memcpy(b->data + b->len, s, n);
	b->len += n;
}

/* The decimal text of `v` into `out` (at least 21 bytes, no NUL); returns
 * its length. */
static size_t int_text(long long v, char *out)
{
	char digits[24];
	size_t n = 0;
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
	do {
		digits[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	size_t k = 0;
	if (v < 0)
		out[k++] = '-';
	while (n > 0)
		out[k++] = digits[--n];
	return k;
}

static int append_integer(struct gi_buf *b, long long v)
{
	char text[24];
	size_t n = int_text(v, text);
	int rc = gi_buf_reserve(b, n);
	if (rc == 0)
		put(b, text, n);
	return rc;
}

/* jansson's jsonp_dtostr at precision 17. */
static int append_real(struct gi_buf *b, double d)
{
	if (!isfinite(d))
		return GI_EINVAL;
	char text[64];
	size_t n;
	if (d == trunc(d) && fabs(d) < 9007199254740992.0 && !(d == 0 && signbit(d))) {
		/* An integer-valued real below 2^53 has at most 16 digits, which
		 * "%.17g" writes in full, without exponent: the digits then ".0". */
		n = int_text((long long)d, text);
		memcpy(text + n, ".0", 2);
		n += 2;
	} else {
		int k = snprintf(text, sizeof(text), "%.17g", d);
		if (k < 0 || (size_t)k >= sizeof(text) - 3)
			return GI_EINVAL;
		n = (size_t)k;
		/* a locale may write ',' for the point: JSON needs '.' */
		char *comma = strchr(text, ',');
		if (comma)
			*comma = '.';
		if (!strchr(text, '.') && !strchr(text, 'e')) {
			memcpy(text + n, ".0", 3);
			n += 2;
		}
		char *start = strchr(text, 'e');
		if (start) {
			/* no '+' and no leading zeros in the exponent */
			start++;
			char *end = start + 1;
			if (*start == '-')
				start++;
			while (*end == '0')
				end++;
			if (end != start) {
				memmove(start, end, n - (size_t)(end - text) + 1);
				n -= (size_t)(end - start);
			}
		}
	}
	int rc = gi_buf_reserve(b, n);
	if (rc == 0)
		put(b, text, n);
	return rc;
}

static int append_string(struct gi_buf *b, const char *s, size_t len)
{
	size_t extra = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			extra += 1;
		else if (c < 0x20)
			extra +=
			    c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t' ? 1 : 5;
	}
	int rc = gi_buf_reserve(b, len + extra + 2);
	if (rc)
		return rc;
	char *out = b->data + b->len;
	*out++ = '"';
	size_t run = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		memcpy(out, s + run, i - run);
		out += i - run;
		run = i + 1;
		*out++ = '\\';
		switch (c) {
		case '"':
		case '\\':
			*out++ = (char)c;
			break;
		case '\b':
			*out++ = 'b';
			break;
		case '\f':
			*out++ = 'f';
			break;
		case '\n':
			*out++ = 'n';
			break;
		case '\r':
			*out++ = 'r';
			break;
		case '\t':
			*out++ = 't';
			break;
		default: {
			static const char hex[] = "0123456789ABCDEF";
			memcpy(out, "u00", 3);
			out[3] = hex[c >> 4];
			out[4] = hex[c & 15];
			out += 5;
		}
		}
	}
	memcpy(out, s + run, len - run);
	out += len - run;
	*out++ = '"';
	b->len = (size_t)(out - b->data);
	return 0;
}

static int append_char(struct gi_buf *b, char c)
{
	int rc = gi_buf_reserve(b, 1);
	if (rc == 0)
		b->data[b->len++] = c;
	return rc;
}

static int append_value(struct gi_buf *b, const json_t *v, int depth)
{
	if (depth > DEPTH_MAX)
		return GI_EINVAL;
	int rc = 0;
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		rc = append_char(b, '{');
		json_t *obj = (json_t *)v; /* jansson's iterators take no const */
		bool first = true;
		for (void *it = json_object_iter(obj); rc == 0 && it;
		     it = json_object_iter_next(obj, it)) {
			if (!first)
				rc = append_char(b, ',');
			first = false;
			if (rc == 0)
				rc = append_string(b, json_object_iter_key(it),
				                   json_object_iter_key_len(it));
			if (rc == 0)
				rc = append_char(b, ':');
			if (rc == 0)
				rc = append_value(b, json_object_iter_value(it), depth + 1);
		}
		return rc ? rc : append_char(b, '}');
	}
	case JSON_ARRAY: {
		rc = append_char(b, '[');
		size_t n = json_array_size(v);
		for (size_t i = 0; rc == 0 && i < n; i++) {
			if (i > 0)
				rc = append_char(b, ',');
			if (rc == 0)
				rc = append_value(b, json_array_get(v, i), depth + 1);
		}
		return rc ? rc : append_char(b, ']');
	}
	case JSON_STRING:
		return append_string(b, json_string_value(v), json_string_length(v));
	case JSON_INTEGER:
		return append_integer(b, (long long)json_integer_value(v));
	case JSON_REAL:
		return append_real(b, json_real_value(v));
	case JSON_TRUE:
		rc = gi_buf_reserve(b, 4);
		if (rc == 0)
			put(b, "true", 4);
		return rc;
	case JSON_FALSE:
		rc = gi_buf_reserve(b, 5);
		if (rc == 0)
			put(b, "false", 5);
		return rc;
	case JSON_NULL:
	default:
		rc = gi_buf_reserve(b, 4);
		if (rc == 0)
			put(b, "null", 4);
		return rc;
	}
}

int gi_json_append(struct gi_buf *b, const json_t *v)
{
	size_t was = b->len;
	int rc = v ? append_value(b, v, 0) : GI_EINVAL;
	if (rc)
		b->len = was; /* nothing half written */
	if (b->data)
		b->data[b->len] = '\0';
	return rc;
}

/* The buffer's NUL after a piece (reserve always leaves room for it). */
static int terminated(struct gi_buf *b, int rc)
{
	if (b->data)
		b->data[b->len] = '\0';
	return rc;
}

int gi_json_append_string(struct gi_buf *b, const char *s, size_t len)
{
	return terminated(b, append_string(b, s, len));
}

int gi_json_append_integer(struct gi_buf *b, long long v)
{
	return terminated(b, append_integer(b, v));
}

int gi_json_append_real(struct gi_buf *b, double d)
{
	return terminated(b, append_real(b, d));
}

char *gi_json_text(const json_t *v, size_t *len_out)
{
	struct gi_buf b;
	gi_buf_init(&b, 0);
	if (gi_json_append(&b, v) != 0) {
		gi_buf_destroy(&b);
		return NULL;
	}
	if (len_out)
		*len_out = b.len;
	if (!b.data)
		return gi_strdup("");
	return gi_buf_take(&b);
}
