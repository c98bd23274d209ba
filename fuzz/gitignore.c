/*
 * gitignore.c - libFuzzer target for the indexer's .gitignore reader
 * (src/graph/ignore.c): any text parses, and matching never fails.
 * needs:
 */
#include <stddef.h>
#include <stdint.h>

#include "base/runtime.h"
#include "graph/ignore.h"

/* The library's CLI command tables call this, defined in src/cli/main.c,
 * which fuzz targets do not link. */
int cli_exit_code_for(int gi_error);
int cli_exit_code_for(int gi_error)
{
	return gi_error ? 1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gi_runtime_init();
	if (size > KG_IGNORE_MAX_BYTES)
		return 0;
	struct kg_ignore ig;
	kg_ignore_parse(&ig, (const char *)data, size);
	static const char *const paths[] = {
	    "lib/a.ex", "lib/gen/deep/b_gen.exs", "a", "x/y/z/w.ex", "", NULL};
	for (const char *const *p = paths; *p; p++)
		(void)kg_ignore_match(&ig, *p);
	kg_ignore_destroy(&ig);
	return 0;
}
