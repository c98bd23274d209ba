/*
 * static_query.c - in-process latency of kg_query() on an index database:
 * the first query (which loads the graph), then ITER rounds of `dependents`
 * and `impact` (depth 2) over the project's modules in turn. Prints
 * "load_ms", then p50/p99/max in microseconds for each query, as wall time
 * and as the thread's CPU time (which leaves out preemption on a shared
 * machine).
 *
 *   static_query DB [ITER]
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

static void report(const char *name, int64_t *us, size_t n)
{
	qsort(us, n, sizeof(int64_t), cmp_i64);
	printf("%s_p50_us %lld\n%s_p99_us %lld\n%s_max_us %lld\n", name, (long long)us[n / 2], name,
	       (long long)us[(n * 99) / 100], name, (long long)us[n - 1]);
}

int main(int argc, char **argv)
{
	gi_runtime_init();
	if (argc < 2) {
		fprintf(stderr, "usage: static_query DB [ITER]\n");
		return 2;
	}
	int64_t iter = 10000;
	if (argc > 2 && gi_parse_int64(argv[2], 1, 10000000, &iter) != 0)
		return 2;
	struct kg_db *db = NULL;
	json_t *mods = NULL;
	if (bench_graph_open("static_query", argv[1], 1, &db, &mods))
		return 1;
	int64_t *dep = gi_calloc((size_t)iter, sizeof(int64_t));
	int64_t *imp = gi_calloc((size_t)iter, sizeof(int64_t));
	int64_t *dep_cpu = gi_calloc((size_t)iter, sizeof(int64_t));
	int64_t *imp_cpu = gi_calloc((size_t)iter, sizeof(int64_t));
	size_t n = json_array_size(mods);
	for (int64_t i = 0; i < iter; i++) {
		struct kg_query_params p = {0};
		p.module = json_string_value(json_array_get(mods, (size_t)i % n));
		json_t *r = NULL;
		int64_t a = gi_clock_mono_us(), ac = thread_cpu_us();
		kg_query(db, "dependents", &p, &r);
		int64_t b = gi_clock_mono_us(), bc = thread_cpu_us();
		json_decref(r);
		p.depth = 2;
		int64_t c = gi_clock_mono_us(), cc = thread_cpu_us();
		kg_query(db, "impact", &p, &r);
		int64_t d = gi_clock_mono_us(), dc = thread_cpu_us();
		json_decref(r);
		dep[i] = b - a;
		imp[i] = d - c;
		dep_cpu[i] = bc - ac;
		imp_cpu[i] = dc - cc;
	}
	report("dependents", dep, (size_t)iter);
	report("impact", imp, (size_t)iter);
	report("dependents_cpu", dep_cpu, (size_t)iter);
	report("impact_cpu", imp_cpu, (size_t)iter);
	gi_free(dep);
	gi_free(imp);
	gi_free(dep_cpu);
	gi_free(imp_cpu);
	json_decref(mods);
	kg_db_close(db);
	return 0;
}
