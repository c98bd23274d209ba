/*
 * fuzz/beam_docs.c - libFuzzer target for the reader of a .beam file's
 * documentation text (src/source/beam_docs.c): any bytes in, docs or an
 * error out, never a crash, leak or over-read. Seeds: fuzz/corpus/beam_docs/ (a small Elixir
 * .beam with a Docs chunk).
 * needs:
 */
#include <stddef.h>
#include <stdint.h>

#include "base/runtime.h"
#include "source/beam.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int doc_seen(void *ctx, const char *kind, const char *name, int arity, const char *doc,
                    size_t len)
{
	size_t *total = ctx;
	(void)kind, (void)name, (void)arity;
	for (size_t i = 0; i < len; i++)
		*total += (unsigned char)doc[i];
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gi_runtime_init();
	size_t total = 0;
	(void)beam_docs_read(data, size, doc_seen, &total);
	return 0;
}
