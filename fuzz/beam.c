/*
 * fuzz/beam.c - libFuzzer target for the BEAM object-code reader
 * (src/source/beam.c): any bytes in, facts or an error out, never a crash,
 * leak or over-read. Seeds: fuzz/corpus/beam/ (small real .beam files).
 * needs:
 */
#include <stddef.h>
#include <stdint.h>

#include "base/runtime.h"
#include "source/beam.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gi_runtime_init();
	struct facts_file *facts = NULL;
	char err[256], name[256];
	if (beam_read("fuzz.beam", data, size, &facts, err, sizeof(err)) == 0)
		facts_file_free(facts);
	(void)beam_module_name(data, size, name, sizeof(name));
	return 0;
}
