/*
 * base64.c - RFC 4648 base64 (see base64.h).
 *
 * Invariant: the decoder writes at most text_len / 4 * 3 bytes and rejects
 * any length that is not a multiple of 4, any byte outside the alphabet and
 * padding anywhere but the last one or two places.
 */
#include "api/base64.h"

#include <stdbool.h>

#include "base/alloc.h"
#include "base/error.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *api_base64_encode(const unsigned char *data, size_t len)
{
	char *out = gi_malloc((len + 2) / 3 * 4 + 1);
	size_t o = 0;
	for (size_t i = 0; i < len; i += 3) {
		unsigned v = (unsigned)data[i] << 16;
		if (i + 1 < len)
			v |= (unsigned)data[i + 1] << 8;
		if (i + 2 < len)
			v |= data[i + 2];
		out[o++] = alphabet[(v >> 18) & 63];
		out[o++] = alphabet[(v >> 12) & 63];
		out[o++] = i + 1 < len ? alphabet[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < len ? alphabet[v & 63] : '=';
	}
	out[o] = '\0';
	return out;
}

static int value_of(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int api_base64_decode(const char *text, size_t text_len, unsigned char **out, size_t *out_len)
{
	*out = NULL;
	*out_len = 0;
	if (text_len % 4 != 0)
		return GI_EINVAL;
	unsigned char *buf = gi_malloc(text_len / 4 * 3 + 1);
	size_t o = 0;
	for (size_t i = 0; i < text_len; i += 4) {
		bool last = i + 4 == text_len;
		int pad = 0;
		unsigned v = 0;
		for (int k = 0; k < 4; k++) {
			char c = text[i + (size_t)k];
			int x;
			if (c == '=' && last && k >= 2 && (k == 3 || text[i + 3] == '=')) {
				pad++;
				x = 0;
			} else if (pad > 0 || (x = value_of(c)) < 0) {
				gi_free(buf);
				return GI_EINVAL;
			}
			v = v << 6 | (unsigned)x;
		}
		buf[o++] = (unsigned char)(v >> 16);
		if (pad < 2)
			buf[o++] = (unsigned char)(v >> 8);
		if (pad < 1)
			buf[o++] = (unsigned char)v;
	}
	*out = buf;
	*out_len = o;
	return 0;
}
