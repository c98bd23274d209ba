/*
 * util.c - number formatting and HTML escaping for src/fuse (see fuse_int.h);
 * its JSON is read through base/json_read.h, which trusts no shape.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/fmt.h"
#include "base/error.h"
#include "fuse/fuse_int.h"
#include "fuse/profile_view.h"

json_t *fuse_json_num(double x)
{
	if (!isfinite(x))
		return json_null();
	if (x == floor(x) && fabs(x) < 9007199254740992.0)
		return json_integer((json_int_t)x);
	return json_real(round(x * 10000.0) / 10000.0);
}

json_t *fuse_json_str(const char *s)
{
	return s ? json_string(s) : json_null();
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

bool fuse_fmt_hotspot_calls(const struct fuse_view_hotspot *f, char *buf, size_t size)
{
	char n[GI_FMT_NUM_MAX];
	double calls = f->calls, high = f->high;
	fuse_fmt_count(calls, n, sizeof(n));
	if (f->firm == FUSE_TRI_FALSE && isfinite(high)) {
		/* an estimate the model does not stand behind: its range, marked */
		char lo[GI_FMT_NUM_MAX], hi[GI_FMT_NUM_MAX];
		fuse_fmt_count(f->low, lo, sizeof(lo));
		fuse_fmt_count(high, hi, sizeof(hi));
		snprintf(buf, size, "?%s-%s", lo, hi);
		return false;
	}
	if (isfinite(high) && calls > 0 && high > calls)
		snprintf(buf, size, "%s +/-%.0f%%", n, 100.0 * (high - calls) / calls);
	else
		snprintf(buf, size, "%s", n);
	return true;
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
