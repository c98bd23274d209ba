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
#include "base/str.h"

#define DEPTH_MAX 2048 /* jansson's JSON_PARSER_MAX_DEPTH, for symmetry */

static void put(struct gi_buf *b, const char *s, size_t n)
{
	memcpy(b->data + b->len, s, n);
	b->len += n;
}

static int append_integer(struct gi_buf *b, long long v)
{
	char text[24];
	size_t n = gi_int_text(v, text);
	int rc = gi_buf_reserve(b, n);
	if (rc == 0)
		put(b, text, n);
	return rc;
}

/* 10^0 .. 10^19, exact in 64 bits. */
static const unsigned long long POW10[20] = {1ULL,
                                             10ULL,
                                             100ULL,
                                             1000ULL,
                                             10000ULL,
                                             100000ULL,
                                             1000000ULL,
                                             10000000ULL,
                                             100000000ULL,
                                             1000000000ULL,
                                             10000000000ULL,
                                             100000000000ULL,
                                             1000000000000ULL,
                                             10000000000000ULL,
                                             100000000000000ULL,
                                             1000000000000000ULL,
                                             10000000000000000ULL,
                                             100000000000000000ULL,
                                             1000000000000000000ULL,
                                             10000000000000000000ULL};

/* A number of up to 4 64-bit limbs, least significant first. */
struct wide {
	unsigned long long limb[4];
	int n;
};

/* w *= f, exact: the callers keep w below 2^256. */
static void wide_mul(struct wide *w, unsigned long long f)
{
	unsigned long long carry = 0;
	for (int i = 0; i < w->n; i++) {
		unsigned __int128 p = (unsigned __int128)w->limb[i] * f + carry;
		w->limb[i] = (unsigned long long)p;
		carry = (unsigned long long)(p >> 64);
	}
	if (carry && w->n < 4)
		w->limb[w->n++] = carry;
}

/* The 64 bits of w from bit `at` up. */
static unsigned long long wide_bits(const struct wide *w, int at)
{
	int i = at / 64, o = at % 64;
	unsigned long long lo = i < w->n ? w->limb[i] >> o : 0;
	unsigned long long hi = o && i + 1 < w->n ? w->limb[i + 1] << (64 - o) : 0;
	return lo | hi;
}

/* True when any of the bits of w below `at` is set. */
static bool wide_any_below(const struct wide *w, int at)
{
	for (int i = 0; i < w->n && i * 64 < at; i++) {
		int top = at - i * 64;
		unsigned long long mask = top >= 64 ? ~0ULL : (1ULL << top) - 1;
		if (w->limb[i] & mask)
			return true;
	}
	return false;
}

/* The 17 significant digits of a = m / 2^s (m < 2^53) as printf rounds
 * them (the exact binary value to nearest, ties to even: the C library's
 * rule in the default rounding mode) into *digits (10^16 <= *digits <
 * 10^17), and the decimal exponent X of the first digit; false when a is
 * outside 1e-30 .. 2^53. a * 10^k, k = 16 - X, is m * 10^k / 2^s, with
 * m * 10^k exact in 256 bits for k <= 46. */
static bool digits17(unsigned long long m, int s, int x_guess, unsigned long long *digits,
                     int *x_out)
{
	int x = x_guess;
	for (int tries = 0; tries < 4; tries++) {
		int k = 16 - x;
		if (k < 0 || k > 46 || s < 1 || s > 190)
			return false;
		struct wide w = {{m, 0, 0, 0}, 1};
		for (int left = k; left > 0; left -= 19)
			wide_mul(&w, POW10[left < 19 ? left : 19]);
		unsigned long long q = wide_bits(&w, s);
		if (s + 64 < 256 && wide_bits(&w, s + 64) != 0) {
			x++; /* far too large: the quotient passes 64 bits */
			continue;
		}
		if (q < POW10[16]) {
			x--;
			continue;
		}
		if (q >= POW10[17]) {
			x++;
			continue;
		}
		bool half = (wide_bits(&w, s - 1) & 1) != 0;
		bool sticky = wide_any_below(&w, s - 1);
		if (half && (sticky || (q & 1)))
			q++;
		if (q == POW10[17]) { /* rounded up to the next power of ten */
			q = POW10[16];
			x++;
		}
		*digits = q;
		*x_out = x;
		return true;
	}
	return false;
}

/* "%.17g" of a finite `d` that is not an integer and has 1e-30 <= |d|,
 * computed exactly without printf (the snapshot's shares and rates are
 * such reals, and snprintf takes ~3,000 instructions for each), with
 * jansson's touches to the exponent (no '+', no leading zeros). Writes the
 * text into `out` (at least 32 bytes) and returns its length, or 0 when
 * `d` is outside this path (the caller then asks snprintf). */
static size_t real_text_exact(double d, char *out)
{
#ifdef __SIZEOF_INT128__
	double a = fabs(d);
	if (!(a >= 1e-30 && a < 4503599627370496.0) || a == trunc(a))
		return 0; /* past 2^52 every double is an integer */
	unsigned long long bits;
	memcpy(&bits, &a, sizeof(bits));
	int biased = (int)((bits >> 52) & 0x7FF); /* normal at these magnitudes */
	unsigned long long m = (bits & ((1ULL << 52) - 1)) | (1ULL << 52);
	/* a = m / 2^s, and a < 2^e2: X is about (e2 - 1) log10(2), corrected
	 * on the exact quotient */
	int s = 1075 - biased, e2 = biased - 1022;
	unsigned long long q;
	int x;
	if (!digits17(m, s, (int)floor((e2 - 1) * 0.30102999566398119521), &q, &x))
		return 0;
	char dg[17];
	for (int i = 16; i >= 0; i--) {
		dg[i] = (char)('0' + q % 10);
		q /= 10;
	}
	int last = 16; /* the last digit written: trailing zeros go */
	while (last > 0 && dg[last] == '0')
		last--;
	size_t n = 0;
	if (d < 0)
		out[n++] = '-';
	if (x >= 0) { /* %g's fixed style: X < 17 always here */
		memcpy(out + n, dg, (size_t)x + 1);
		n += (size_t)x + 1;
		if (last > x) {
			out[n++] = '.';
			memcpy(out + n, dg + x + 1, (size_t)(last - x));
			n += (size_t)(last - x);
		}
	} else if (x >= -4) {
		out[n++] = '0';
		out[n++] = '.';
		for (int i = 0; i < -x - 1; i++)
			out[n++] = '0';
		memcpy(out + n, dg, (size_t)last + 1);
		n += (size_t)last + 1;
	} else { /* %g's exponent style, the exponent as jansson leaves it */
		out[n++] = dg[0];
		if (last > 0) {
			out[n++] = '.';
			memcpy(out + n, dg + 1, (size_t)last);
			n += (size_t)last;
		}
		out[n++] = 'e';
		out[n++] = '-';
		n += gi_int_text(-x, out + n);
	}
	return n;
#else
	(void)d;
	(void)out;
	return 0;
#endif
}

/* jansson's jsonp_dtostr at precision 17. */
static int append_real(struct gi_buf *b, double d)
{
	if (!isfinite(d))
		return GI_EINVAL;
	char text[64];
	size_t n = real_text_exact(d, text);
	if (n > 0) {
		if (!memchr(text, '.', n) && !memchr(text, 'e', n)) {
			memcpy(text + n, ".0", 2);
			n += 2;
		}
	} else if (d == trunc(d) && fabs(d) < 9007199254740992.0 && !(d == 0 && signbit(d))) {
		/* An integer-valued real below 2^53 has at most 16 digits, which
		 * "%.17g" writes in full, without exponent: the digits then ".0". */
		n = gi_int_text((long long)d, text);
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
