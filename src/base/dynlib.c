/*
 * dynlib.c - shared libraries loaded on first use (see dynlib.h).
 */
#include "base/dynlib.h"

#include <dlfcn.h>
#include <stdio.h>

#include "base/error.h"

int gi_dynlib_load(const char *const *sonames, const char *package,
                   const struct gi_dynlib_symbol *symbols, size_t count, char *err, size_t err_len)
{
	const char *why = "not found";
	const char *missing = NULL;
	for (const char *const *so = sonames; *so; so++) {
		void *h = dlopen(*so, RTLD_NOW | RTLD_LOCAL);
		if (!h)
			continue;
		size_t i = 0;
		for (; i < count; i++) {
			void *p = dlsym(h, symbols[i].name);
			if (!p)
				break;
			*symbols[i].slot = p;
		}
		if (i == count)
			return 0;
		missing = symbols[i].name;
		why = "lacks a function Giulia needs";
		dlclose(h);
	}
	if (missing)
		snprintf(err, err_len, "%s %s (%s); install a current %s", sonames[0], why, missing,
		         package);
	else
		snprintf(err, err_len, "%s %s; install the package %s", sonames[0], why, package);
	return GI_EUNSUPPORTED;
}
