/*
 * checks_query.c - in-process latency of the checks (docs/CHECKS.md) on an
 * index database: after a first query that loads the graph, ITER rounds of
 * each of `contracts`, `conventions`, `structs` (with external structs) and
 * `duplicates` over the whole project, then of `contracts` and
 * `conventions` for one module in turn (`module` filter). Prints p50/p99/max
 * in microseconds for each, as wall time and as the thread's CPU time.
 *
 *   checks_query DB [ITER]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "base/runtime.h"
#include "base/str.h"
#include "graph/query.h"
#include "graph_open.h"

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static int64_t thread_cpu_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void report(const char *name, const char *suffix, int64_t *us, size_t n)
{
	qsort(us, n, sizeof(int64_t), cmp_i64);
	printf("%s%s_p50_us %lld\n%s%s_p99_us %lld\n%s%s_max_us %lld\n", name, suffix,
	       (long long)us[n / 2], name, suffix, (long long)us[(n * 99) / 100], name, suffix,
	       (long long)us[n - 1]);
}

/* Runs `name` `iter` times (module `i % n` of `mods` when `per_module`). */
static int run(struct kg_db *db, const char *name, const char *label, json_t *mods, bool per_module,
               int64_t iter)
{
	int64_t *wall = gi_calloc((size_t)iter, sizeof(int64_t));
	int64_t *cpu = gi_calloc((size_t)iter, sizeof(int64_t));
	size_t n = json_array_size(mods);
	int rc = 0;
	for (int64_t i = 0; i < iter && !rc; i++) {
		struct kg_query_params p = {0};
		p.include_external = true;
		if (per_module)
			p.module = json_string_value(json_array_get(mods, (size_t)i % n));
		json_t *r = NULL;
		int64_t a = gi_clock_mono_us(), ac = thread_cpu_us();
		rc = kg_query(db, name, &p, &r);
		wall[i] = gi_clock_mono_us() - a;
		cpu[i] = thread_cpu_us() - ac;
		json_decref(r);
	}
	if (!rc) {
		report(label, "", wall, (size_t)iter);
		report(label, "_cpu", cpu, (size_t)iter);
	} else {
		fprintf(stderr, "checks_query: %s failed (%d)\n", name, rc);
	}
	gi_free(wall);
	gi_free(cpu);
	return rc;
}

int main(int argc, char **argv)
{
	gi_runtime_init();
	if (argc < 2) {
		fprintf(stderr, "usage: checks_query DB [ITER]\n");
		return 2;
	}
	int64_t iter = 50;
	if (argc > 2 && gi_parse_int64(argv[2], 1, 10000000, &iter) != 0)
		return 2;
	struct kg_db *db = NULL;
	json_t *mods = NULL;
	if (bench_graph_open("checks_query", argv[1], 1, &db, &mods))
		return 1;
	int rc = run(db, "contracts", "contracts", mods, false, iter);
	if (!rc)
		rc = run(db, "conventions", "conventions", mods, false, iter);
	if (!rc)
		rc = run(db, "structs", "structs", mods, false, iter);
	if (!rc)
		rc = run(db, "duplicates", "duplicates", mods, false, iter);
	if (!rc)
		rc = run(db, "contracts", "contracts_module", mods, true, iter);
	if (!rc)
		rc = run(db, "conventions", "conventions_module", mods, true, iter);
	json_decref(mods);
	kg_db_close(db);
	return rc ? 1 : 0;
}
