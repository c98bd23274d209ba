/*
 * base64.h - standard base64 (RFC 4648, with padding) for object code sent
 * between the monitor and the worker inside JSON.
 */
#ifndef GIULIA_API_BASE64_H
#define GIULIA_API_BASE64_H

#include <stddef.h>

/* Encodes `len` bytes; returns a NUL-terminated string the caller frees. */
char *api_base64_encode(const unsigned char *data, size_t len);
/* Decodes `text` (no whitespace); *out (caller frees, *out_len bytes) on 0;
 * GI_EINVAL on bad input. */
int api_base64_decode(const char *text, size_t text_len, unsigned char **out, size_t *out_len);

#endif
