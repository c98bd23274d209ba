/*
 * static_db.c - libFuzzer target for the index database reader: the input is
 * written as a database file, opened with kg_db_open() and queried. A damaged
 * file must give an error code, never a crash or an unbounded allocation.
 * Seed: fuzz/corpus/static_db/ (the shop fixture's index).
 * needs:
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/runtime.h"
#include "graph/query.h"

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
	char path[] = "/tmp/giulia-fuzz-db-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		unlink(path);
		return 0;
	}
	close(fd);
	struct kg_db *db = NULL;
	if (kg_db_open(path, false, &db) == 0) {
		static const char *const names[] = {
		    "summary",   "cycles",  "dead_code",  "topology",    "heatmap", "coupling",
		    "contracts", "structs", "duplicates", "conventions", NULL};
		for (const char *const *n = names; *n; n++) {
			json_t *r = NULL;
			if (kg_query(db, *n, NULL, &r) == 0)
				json_decref(r);
		}
		json_t *mods = NULL;
		if (kg_project_modules(db, &mods) == 0 && json_array_size(mods) > 0) {
			struct kg_query_params p = {0};
			p.module = json_string_value(json_array_get(mods, 0));
			json_t *r = NULL;
			if (kg_query(db, "module_details", &p, &r) == 0)
				json_decref(r);
			if (kg_query(db, "impact", &p, &r) == 0)
				json_decref(r);
		}
		json_decref(mods);
		kg_db_close(db);
	}
	unlink(path);
	char side[64];
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
	return 0;
}
