/*
 * api_dash_head.c - libFuzzer target for the head parser of the dashboard's
 * pass-through (src/api/dash.c: api_dash_parse_head), which reads whatever
 * answers at the monitor's address: any input is parsed or refused without
 * reading past `size`, and what parses is consistent (a status of three
 * digits, a head inside the input, a terminated content type).
 * needs:
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/dash.h"
#include "base/runtime.h"

int cli_exit_code_for(int gi_error);
int cli_exit_code_for(int gi_error)
{
	return gi_error ? 1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gi_runtime_init();
	/* A copy of exactly `size` bytes, so that ASan sees any over-read. */
	char *copy = malloc(size ? size : 1);
	memcpy(copy, data, size);
	int status = 0;
	size_t head = 0;
	char type[64];
	if (api_dash_parse_head(copy, size, &status, type, sizeof(type), &head) == 0 && head) {
		if (head > size || status < 100 || status > 599 || strlen(type) >= sizeof(type))
			abort();
	}
	free(copy);
	return 0;
}
