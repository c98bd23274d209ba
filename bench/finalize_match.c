/*
 * finalize_match.c - what project matching at finalize costs with many
 * indexed projects: profile_project_match (module names only, one SELECT
 * per project) against the way it was done before (each project's whole
 * graph loaded, metrics and all, to list its modules), in one run, on fresh
 * connections for both, as wall and CPU time (best of ROUNDS).
 *
 * Generates PROJECTS Elixir projects of MODULES modules each under DIR (each
 * module calls the next three and has a few functions with branches),
 * indexes and registers them in DIR/data/worker.db, and matches a set of
 * observed modules that only the last project defines.
 *
 *   finalize_match DIR [PROJECTS] [MODULES] [ROUNDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "base/fs.h"
#include "base/runtime.h"
#include "base/str.h"
#include "graph/query.h"
#include "profile/finalize.h"
#include "store/obs_store.h"

static int64_t cpu_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int write_project(const char *root, int p, int modules)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/lib", root);
	if (gi_fs_mkdir_p(path) != 0)
		return 1;
	for (int m = 0; m < modules; m++) {
		snprintf(path, sizeof(path), "%s/lib/m%d.ex", root, m);
		FILE *f = fopen(path, "w");
		if (!f)
			return 1;
		fprintf(f, "defmodule P%d.M%d do\n", p, m);
		for (int k = 1; k <= 3; k++)
			fprintf(f, "  def call%d(x), do: P%d.M%d.run(x)\n", k, p,
			        (m + k) % modules);
		fprintf(f,
		        "  def run(x) do\n    case x do\n      0 -> :zero\n      n when n > 10 -> "
		        "helper(n)\n      _ -> Enum.map([x], &(&1 + 1))\n    end\n  end\n");
		fprintf(f, "  defp helper(n), do: if(n > 100, do: :big, else: :small)\nend\n");
		fclose(f);
	}
	return 0;
}

/* The old way: every project's graph loaded to list its modules. */
static char *match_by_graphs(json_t *projects, json_t *seen)
{
	size_t best = 0, i, j;
	json_t *p, *m;
	char *out = NULL;
	json_array_foreach(projects, i, p)
	{
		const char *root = json_string_value(json_object_get(p, "path"));
		char *db_path = kg_db_default_path(root);
		struct kg_db *db = NULL;
		json_t *mods = NULL;
		size_t hits = 0;
		if (kg_db_open(db_path, false, &db) == 0 && kg_project_modules(db, &mods) == 0)
			json_array_foreach(mods, j, m)
			{
				if (json_object_get(seen, json_string_value(m)))
					hits++;
			}
		kg_db_close(db);
		json_decref(mods);
		gi_free(db_path);
		if (hits > best) {
			best = hits;
			gi_free(out);
			out = gi_strdup(root);
		}
	}
	return out;
}

int main(int argc, char **argv)
{
	int64_t projects = 8, modules = 400, rounds = 5;
	gi_runtime_init();
	if (argc < 2 || (argc > 2 && gi_parse_int64(argv[2], 1, 1000, &projects) != 0) ||
	    (argc > 3 && gi_parse_int64(argv[3], 2, 100000, &modules) != 0) ||
	    (argc > 4 && gi_parse_int64(argv[4], 1, 1000, &rounds) != 0)) {
		fprintf(stderr, "usage: finalize_match DIR [PROJECTS] [MODULES] [ROUNDS]\n");
		return 2;
	}
	char data[4096];
	snprintf(data, sizeof(data), "%s/data", argv[1]);
	struct obs_store *st = NULL;
	if (obs_store_open(data, &st) != 0) {
		fprintf(stderr, "finalize_match: cannot open the store in %s\n", data);
		return 1;
	}
	for (int p = 0; p < projects; p++) {
		char root[4096];
		snprintf(root, sizeof(root), "%s/p%d", argv[1], p);
		json_t *summary = NULL;
		if (write_project(root, p, (int)modules) != 0 ||
		    kg_index_project(root, NULL, NULL, &summary) != 0) {
			fprintf(stderr, "finalize_match: cannot index %s\n", root);
			return 1;
		}
		char *canon = NULL;
		gi_fs_realdir(root, &canon);
		obs_store_project_put(st, canon, summary);
		gi_free(canon);
		json_decref(summary);
	}
	json_t *seen = json_object(), *projects_list = NULL;
	for (int m = 0; m < 20; m++) {
		char name[64];
		snprintf(name, sizeof(name), "P%d.M%d", (int)projects - 1, m);
		json_object_set_new(seen, name, json_true());
	}
	json_object_set_new(seen, ":ets", json_true());
	obs_store_projects_list(st, &projects_list);

	int64_t names_wall = INT64_MAX, names_cpu = INT64_MAX;
	int64_t graphs_wall = INT64_MAX, graphs_cpu = INT64_MAX;
	for (int r = 0; r < rounds; r++) {
		int64_t w0 = gi_clock_mono_us(), c0 = cpu_us();
		char *a = NULL;
		profile_project_match(st, NULL, seen, &a);
		int64_t w1 = gi_clock_mono_us(), c1 = cpu_us();
		char *b = match_by_graphs(projects_list, seen);
		int64_t w2 = gi_clock_mono_us(), c2 = cpu_us();
		if (!a || !b || strcmp(a, b) != 0) {
			fprintf(stderr, "finalize_match: the two ways disagree (%s, %s)\n",
			        a ? a : "none", b ? b : "none");
			return 1;
		}
		gi_free(a);
		gi_free(b);
		names_wall = w1 - w0 < names_wall ? w1 - w0 : names_wall;
		names_cpu = c1 - c0 < names_cpu ? c1 - c0 : names_cpu;
		graphs_wall = w2 - w1 < graphs_wall ? w2 - w1 : graphs_wall;
		graphs_cpu = c2 - c1 < graphs_cpu ? c2 - c1 : graphs_cpu;
	}
	printf("projects %lld\nmodules_per_project %lld\n", (long long)projects,
	       (long long)modules);
	printf("names_wall_ms %.2f\nnames_cpu_ms %.2f\n", names_wall / 1000.0, names_cpu / 1000.0);
	printf("graphs_wall_ms %.2f\ngraphs_cpu_ms %.2f\n", graphs_wall / 1000.0,
	       graphs_cpu / 1000.0);
	printf("ratio_cpu %.1f\nratio_wall %.1f\n", (double)graphs_cpu / (double)names_cpu,
	       (double)graphs_wall / (double)names_wall);
	json_decref(projects_list);
	json_decref(seen);
	obs_store_close(st);
	return 0;
}
