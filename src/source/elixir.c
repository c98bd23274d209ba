/*
 * elixir.c - placeholder until the Elixir reader lands (see elixir.h).
 */
#include "source/elixir.h"

#include "base/error.h"

int ex_parse(const char *path, const char *source, size_t len, struct facts_file **out)
{
	(void)path;
	(void)source;
	(void)len;
	*out = NULL;
	return GI_EUNSUPPORTED;
}
