/*
 * dynlib.h - shared libraries loaded on first use (dlopen), for the ones only
 * some commands need: libcurl (HTTP clients), libpq (--store postgres) and
 * libmicrohttpd (the daemons). A process that does not speak HTTP or
 * PostgreSQL then never maps them and the dozens of libraries they pull in
 * (a cold `giulia hubs` paid about 5 ms in the dynamic linker for them;
 * BENCHMARKS.md "Cold queries").
 *
 * Each user keeps a table of the symbols it calls and resolves it once
 * (pthread_once) through gi_dynlib_load. Thread-safe.
 */
#ifndef GIULIA_BASE_DYNLIB_H
#define GIULIA_BASE_DYNLIB_H

#include <stddef.h>

/* One symbol to resolve: its name and where its address goes. */
struct gi_dynlib_symbol {
	const char *name;
	void **slot;
};

/* Opens the first of `sonames` (NULL-terminated, most specific first) that
 * loads and resolves every symbol of `symbols[0..count)`. Returns 0, or
 * GI_EUNSUPPORTED with `err` (of `err_len` bytes) saying which library or
 * symbol is missing and which package provides it (`package`). The library
 * stays loaded for the life of the process. */
int gi_dynlib_load(const char *const *sonames, const char *package,
                   const struct gi_dynlib_symbol *symbols, size_t count, char *err, size_t err_len);

#endif
