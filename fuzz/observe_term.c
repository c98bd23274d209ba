/*
 * Fuzz target: Erlang external terms from a node (src/observe/term.c).
 * The input is a term without version byte; what decodes is also read as a
 * sample reply (src/observe/snapshot.c), call_time section included.
 * needs:
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/alloc.h"
#include "base/runtime.h"
#include "observe/snapshot.h"
#include "observe/term.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gi_runtime_init();
	if (size > 1 << 20)
		return 0;
	/* an exact-size copy so that any read past the end is caught */
	char *copy = gi_malloc(size ? size : 1);
	if (size)
		memcpy(copy, data, size);
	int index = 0;
	json_t *out = NULL;
	if (obs_term_to_json(copy, (int)size, &index, &out) == 0) {
		json_decref(obs_snapshot_build(out, "n@h", NULL, 0, 0, NULL));
		json_decref(out);
	}
	gi_free(copy);
	return 0;
}
