/*
 * Fuzz target: the distribution handshake status message read by the
 * handshake probe of src/observe/dist.c (what a node, or anything listening
 * on a port epmd gave, answers to our name).
 * needs:
 */
#include <stddef.h>
#include <stdint.h>

#include "observe/observe_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	dist_handshake_status_parse(data, size);
	return 0;
}
