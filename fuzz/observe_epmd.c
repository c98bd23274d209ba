/*
 * Fuzz target: epmd PORT2_RESP replies (src/observe/epmd.c).
 * needs:
 */
#include <stddef.h>
#include <stdint.h>

#include "base/runtime.h"
#include "observe/epmd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gi_runtime_init();
	struct epmd_port_reply r;
	epmd_port_reply_parse(data, size, &r);
	return 0;
}
