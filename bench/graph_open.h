/*
 * graph_open.h - the start shared by the in-process query benches
 * (static_query.c, checks_query.c, assist_query.c): open the index
 * database, list the project's modules (which loads the graph) and print
 * "load_ms" and "modules". Header-only: each bench is one compile.
 */
#ifndef GIULIA_BENCH_GRAPH_OPEN_H
#define GIULIA_BENCH_GRAPH_OPEN_H

#include <stdio.h>

#include "base/clock.h"
#include "graph/query.h"

/* Opens `path` and sets *db and *mods (the module list, owned); fails with a
 * message naming `tool` when it cannot be opened or has fewer than
 * `min_modules` modules. Returns 0 or 1 (the exit status). */
static int bench_graph_open(const char *tool, const char *path, size_t min_modules,
                            struct kg_db **db, json_t **mods)
{
	*db = NULL;
	*mods = NULL;
	if (kg_db_open(path, false, db) != 0) {
		fprintf(stderr, "%s: cannot open %s\n", tool, path);
		return 1;
	}
	int64_t t0 = gi_clock_mono_us();
	if (kg_project_modules(*db, mods) != 0 || json_array_size(*mods) < min_modules) {
		fprintf(stderr, "%s: %s modules in %s\n", tool, min_modules > 1 ? "too few" : "no",
		        path);
		return 1;
	}
	printf("load_ms %.1f\nmodules %zu\n", (gi_clock_mono_us() - t0) / 1000.0,
	       json_array_size(*mods));
	return 0;
}

#endif
