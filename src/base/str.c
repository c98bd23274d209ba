/*
 * str.c - bounded string helpers (see str.h).
 */
#include "base/str.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

int gi_strlcpy(char *dst, const char *src, size_t size)
{
	if (!size)
		return GI_ETOOBIG;
	size_t len = strlen(src);
	size_t n = len < size - 1 ? len : size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
	return n == len ? 0 : GI_ETOOBIG;
}

int gi_parse_int64(const char *s, int64_t min, int64_t max, int64_t *out)
{
	if (!s || !*s)
		return GI_EINVAL;
	/* strtoll alone skips leading space and accepts '+': " 1" and "+5" are not
	 * what a user or a client meant by an integer, so they are refused. */
	const char *digits = s[0] == '-' ? s + 1 : s;
	if (*digits < '0' || *digits > '9')
		return GI_EINVAL;
	char *end = NULL;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end != '\0' || v < min || v > max)
		return GI_EINVAL;
	*out = v;
	return 0;
}

bool gi_str_starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool gi_str_ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

bool gi_utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	while (i < len) {
		unsigned char c = p[i];
		size_t n;
		unsigned cp;
		if (c < 0x80) {
			i++;
			continue;
		} else if ((c & 0xe0) == 0xc0) {
			n = 1;
			cp = c & 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			n = 2;
			cp = c & 0x0f;
		} else if ((c & 0xf8) == 0xf0) {
			n = 3;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (i + n >= len)
			return false;
		for (size_t k = 1; k <= n; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (p[i + k] & 0x3f);
		}
		if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += n + 1;
	}
	return true;
}

bool gi_str_secure_equal(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	unsigned char diff = n != m;
	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)(a[i] ^ b[i < m ? i : 0]);
	return diff == 0 && n == m;
}

/* The decimal text of `v` into `out` (at least 21 bytes, no NUL); returns
 * its length. */
size_t gi_int_text(long long v, char *out)
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
