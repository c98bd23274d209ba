/*
 * modname.c - display name <-> atom text of modules (see modname.h).
 */
#include "base/modname.h"

#include <stdio.h>

#include "base/error.h"
#include "base/str.h"

int gi_module_display_name(const char *atom, char *out, size_t size)
{
	if (gi_str_starts_with(atom, "Elixir.") && atom[7] != '\0')
		return gi_strlcpy(out, atom + 7, size);
	/* ":" then the atom, as snprintf would write it (truncated to fit),
	 * without its formatting: every process of every snapshot comes here */
	if (size == 0)
		return GI_ETOOBIG;
	out[0] = ':';
	if (size == 1) {
		out[0] = '\0';
		return GI_ETOOBIG;
	}
	return gi_strlcpy(out + 1, atom, size - 1);
}

int gi_module_atom_name(const char *display, char *out, size_t size)
{
	if (display[0] == ':')
		return gi_strlcpy(out, display + 1, size);
	if (gi_str_starts_with(display, "Elixir."))
		return gi_strlcpy(out, display, size);
	int n = snprintf(out, size, "Elixir.%s", display);
	return n >= 0 && (size_t)n < size ? 0 : GI_ETOOBIG;
}
