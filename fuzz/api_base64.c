/*
 * api_base64.c - libFuzzer target for the base64 decoder that reads object
 * code sent to the worker (src/api/base64.c): any input is decoded or
 * refused without an over-read, and what decodes re-encodes to the input.
 * needs:
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/base64.h"
#include "base/alloc.h"
#include "base/runtime.h"

int cli_exit_code_for(int gi_error);
int cli_exit_code_for(int gi_error)
{
	return gi_error ? 1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gi_runtime_init();
	unsigned char *out = NULL;
	size_t len = 0;
	if (api_base64_decode((const char *)data, size, &out, &len) == 0) {
		char *again = api_base64_encode(out, len);
		/* Canonical input round-trips; non-canonical trailing bits may not. */
		if (strlen(again) != size)
			abort();
		gi_free(again);
	}
	gi_free(out);
	char *enc = api_base64_encode(data, size);
	if (api_base64_decode(enc, strlen(enc), &out, &len) != 0 || len != size ||
	    (size && memcmp(out, data, size) != 0))
		abort();
	gi_free(out);
	gi_free(enc);
	return 0;
}
