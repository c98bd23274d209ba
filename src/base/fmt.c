/*
 * fmt.c - the one way numbers and names are written in text (see fmt.h).
 */
#include "base/fmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"

void gi_fmt_bytes(double bytes, char *out, size_t size)
{
	if (!isfinite(bytes)) {
		snprintf(out, size, "-");
		return;
	}
	double a = fabs(bytes);
	if (a >= 1024.0 * 1024 * 1024)
		snprintf(out, size, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
	else if (a >= 1024.0 * 1024)
		snprintf(out, size, "%.1f MiB", bytes / (1024.0 * 1024));
	else if (a >= 1024.0)
		snprintf(out, size, "%.1f KiB", bytes / 1024.0);
	else
		snprintf(out, size, "%.0f B", bytes);
}

void gi_fmt_count(double n, char *out, size_t size)
{
	if (!isfinite(n)) {
		snprintf(out, size, "-");
		return;
	}
	double a = fabs(n);
	if (a >= 1e9)
		snprintf(out, size, "%.2fG", n / 1e9);
	else if (a >= 1e6)
		snprintf(out, size, "%.1fM", n / 1e6);
	else if (a >= 1e4)
		snprintf(out, size, "%.1fk", n / 1e3);
	else if (a >= 100 || n == floor(n))
		snprintf(out, size, "%.0f", n);
	else
		snprintf(out, size, "%.2f", n);
}

void gi_fmt_rate(double per_second, char *out, size_t size)
{
	char n[GI_FMT_NUM_MAX];
	gi_fmt_count(per_second, n, sizeof(n));
	snprintf(out, size, "%s/s", n);
}

void gi_fmt_share(double share, char *out, size_t size)
{
	if (!isfinite(share))
		snprintf(out, size, "-");
	else
		snprintf(out, size, "%.1f%%", share * 100.0);
}

void gi_fmt_registered_name(const char *atom, char *out, size_t size)
{
	if (!atom) {
		snprintf(out, size, "%s", "");
		return;
	}
	if (gi_str_starts_with(atom, "Elixir.") && atom[7] != '\0')
		atom += 7;
	snprintf(out, size, "%s", atom);
}

/* Parses "-NAME/ARITY-..." (the compiler's anonymous fun names): the span of
 * NAME and the arity. Returns 1 when `name` is one. */
static int anonymous_parse(const char *name, size_t *name_len, long long *arity)
{
	if (!name || name[0] != '-')
		return 0;
	const char *slash = NULL;
	/* the last '/' followed by digits and '-': names may contain '/' */
	for (const char *p = name + 1; *p; p++) {
		if (*p != '/' || p == name + 1)
			continue;
		const char *d = p + 1;
		while (*d >= '0' && *d <= '9')
			d++;
		if (d > p + 1 && *d == '-' && d[1] != '\0') {
			slash = p;
			break;
		}
	}
	if (!slash)
		return 0;
	*name_len = (size_t)(slash - name - 1);
	*arity = strtoll(slash + 1, NULL, 10);
	return 1;
}

int gi_fmt_is_anonymous(const char *name)
{
	size_t len;
	long long arity;
	return anonymous_parse(name, &len, &arity);
}

void gi_fmt_function(const char *module, const char *name, long long arity, char *out, size_t size)
{
	size_t len = 0;
	long long outer = 0;
	const char *sep = module && *module ? "." : "";
	if (!module)
		module = "";
	if (anonymous_parse(name, &len, &outer))
		snprintf(out, size, "fn in %s%s%.*s/%lld", module, sep, (int)len, name + 1, outer);
	else
		snprintf(out, size, "%s%s%s/%lld", module, sep, name ? name : "?", arity);
}

void gi_fmt_mfa(const char *mfa, char *out, size_t size)
{
	const char *dash = mfa ? strstr(mfa, ".-") : NULL;
	const char *slash = mfa ? strrchr(mfa, '/') : NULL;
	if (!dash || !slash || slash < dash) {
		snprintf(out, size, "%s", mfa ? mfa : "");
		return;
	}
	char module[512], name[512];
	size_t mlen = (size_t)(dash - mfa), nlen = (size_t)(slash - dash - 1);
	if (mlen >= sizeof(module) || nlen >= sizeof(name)) {
		snprintf(out, size, "%s", mfa);
		return;
	}
	memcpy(module, mfa, mlen);
	module[mlen] = '\0';
	memcpy(name, dash + 1, nlen);
	name[nlen] = '\0';
	if (!gi_fmt_is_anonymous(name)) {
		snprintf(out, size, "%s", mfa);
		return;
	}
	gi_fmt_function(module, name, strtoll(slash + 1, NULL, 10), out, size);
}

size_t gi_fmt_width(const char *s)
{
	size_t w = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if ((*p & 0xC0) != 0x80)
			w++;
	return w;
}

/* The byte offset of the `n`th code point of `s` (or its end). */
static size_t offset_of(const char *s, size_t n)
{
	size_t i = 0, seen = 0;
	while (s[i]) {
		if (((unsigned char)s[i] & 0xC0) != 0x80) {
			if (seen == n)
				return i;
			seen++;
		}
		i++;
	}
	return i;
}

void gi_fmt_elide_middle(const char *s, size_t width, char *out, size_t size)
{
	size_t w = gi_fmt_width(s);
	if (w <= width || width < 3) {
		snprintf(out, size, "%s", w <= width ? s : "");
		if (w > width)
			snprintf(out, size, "%.*s", (int)offset_of(s, width), s);
		return;
	}
	/* keep more of the end: it holds the function's or module's own name */
	size_t keep = width - 1, head = keep * 2 / 5, tail = keep - head;
	size_t head_end = offset_of(s, head), tail_start = offset_of(s, w - tail);
	snprintf(out, size, "%.*s\xe2\x80\xa6%s", (int)head_end, s, s + tail_start);
}
