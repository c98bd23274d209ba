/*
 * util.c - tolerant JSON access and number formatting for src/fuse (see
 * fuse_int.h). Nothing here trusts the shape of its input.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/fmt.h"
#include "base/error.h"
#include "fuse/fuse_int.h"

json_t *fuse_get_path(const json_t *obj, const char *path)
{
	char key[128];
	const json_t *cur = obj;
	const char *p = path;
	while (cur && *p) {
		const char *dot = strchr(p, '.');
		size_t len = dot ? (size_t)(dot - p) : strlen(p);
		if (len >= sizeof(key) || !json_is_object(cur))
			return NULL;
		memcpy(key, p, len);
		key[len] = '\0';
		cur = json_object_get(cur, key);
		p += len + (dot ? 1 : 0);
	}
	return (json_t *)cur;
}

double fuse_num(const json_t *obj, const char *key)
{
	const json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
	return json_is_number(v) ? json_number_value(v) : NAN;
}

double fuse_num_path(const json_t *obj, const char *path)
{
	const json_t *v = fuse_get_path(obj, path);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *fuse_str(const json_t *obj, const char *key)
{
	const json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
	return json_is_string(v) ? json_string_value(v) : NULL;
}

const char *fuse_str_path(const json_t *obj, const char *path)
{
	const json_t *v = fuse_get_path(obj, path);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

bool fuse_bool(const json_t *obj, const char *key)
{
	const json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
	return json_is_true(v);
}

json_t *fuse_json_num(double x)
{
	if (!isfinite(x))
		return json_null();
	if (x == floor(x) && fabs(x) < 9007199254740992.0)
		return json_integer((json_int_t)x);
	return json_real(round(x * 10000.0) / 10000.0);
}

/* The formats are base/fmt's, the one way every text output writes numbers. */
void fuse_fmt_bytes(double bytes, char *out, size_t size)
{
	gi_fmt_bytes(bytes, out, size);
}

void fuse_fmt_count(double n, char *out, size_t size)
{
	gi_fmt_count(n, out, size);
}

void fuse_fmt_pct(double share, char *out, size_t size)
{
	gi_fmt_share(share, out, size);
}

int fuse_html_escape(struct gi_buf *out, const char *s)
{
	int rc = 0;
	for (const char *p = s ? s : ""; *p && rc == 0; p++) {
		switch (*p) {
		case '&':
			rc = gi_buf_puts(out, "&amp;");
			break;
		case '<':
			rc = gi_buf_puts(out, "&lt;");
			break;
		case '>':
			rc = gi_buf_puts(out, "&gt;");
			break;
		case '"':
			rc = gi_buf_puts(out, "&quot;");
			break;
		case '\'':
			rc = gi_buf_puts(out, "&#39;");
			break;
		default:
			rc = gi_buf_append(out, p, 1);
		}
	}
	return rc;
}
