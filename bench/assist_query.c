/*
 * assist_query.c - in-process latency of the assist queries (docs/ASSIST.md)
 * on an index database: after the first query (which loads the graph),
 * `briefing` ROUNDS times, and per project module in turn (at most ITER):
 * `preflight` with a stored-profile-shaped live weight, `impact_check` of a
 * rename of its first public function and of a removal of the module,
 * `plan_validate` of a plan that adds a dependency to the next module and
 * moves that function there, and `check` of a boundaries document with
 * layers and forbidden rules. Prints p50/p99/max in microseconds per query,
 * wall and thread CPU time.
 *
 *   assist_query DB [ITER]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "base/runtime.h"
#include "base/str.h"
#include "graph/query.h"
#include "graph_open.h"

enum { Q_BRIEFING, Q_PREFLIGHT, Q_RENAME, Q_REMOVE, Q_PLAN, Q_CHECK, Q_COUNT };
static const char *const names[Q_COUNT] = {"briefing",      "preflight",     "impact_rename",
                                           "impact_remove", "plan_validate", "check"};

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

struct samples {
	int64_t *wall, *cpu;
	size_t n;
};

static void timed(struct kg_db *db, const char *query, struct kg_query_params *p, struct samples *s)
{
	json_t *r = NULL;
	int64_t a = gi_clock_mono_us(), ac = thread_cpu_us();
	int rc = kg_query(db, query, p, &r);
	int64_t b = gi_clock_mono_us(), bc = thread_cpu_us();
	json_decref(r);
	if (rc) {
		fprintf(stderr, "assist_query: %s %s: %d (%s)\n", query,
		        p->module ? p->module : "-", rc,
		        kg_query_error_message() ? kg_query_error_message() : "-");
		return;
	}
	s->wall[s->n] = b - a;
	s->cpu[s->n++] = bc - ac;
}

static void report(const char *name, struct samples *s)
{
	if (!s->n)
		return;
	qsort(s->wall, s->n, sizeof(int64_t), cmp_i64);
	qsort(s->cpu, s->n, sizeof(int64_t), cmp_i64);
	printf("%-14s n %5zu  p50_us %7lld  p99_us %7lld  max_us %7lld  cpu_p50_us %7lld  "
	       "cpu_p99_us %7lld\n",
	       name, s->n, (long long)s->wall[s->n / 2], (long long)s->wall[(s->n * 99) / 100],
	       (long long)s->wall[s->n - 1], (long long)s->cpu[s->n / 2],
	       (long long)s->cpu[(s->n * 99) / 100]);
}

/* The module's first public function as "name/arity", or "" (buf). */
static const char *first_function(struct kg_db *db, const char *module, char *buf, size_t n)
{
	struct kg_query_params p = {0};
	p.module = module;
	json_t *r = NULL;
	buf[0] = '\0';
	if (kg_query(db, "functions", &p, &r) == 0) {
		size_t i;
		json_t *f;
		json_array_foreach(json_object_get(r, "functions"), i, f)
		{
			const char *vis = json_string_value(json_object_get(f, "visibility"));
			if (vis && strcmp(vis, "public") == 0) {
				snprintf(
				    buf, n, "%s/%lld",
				    json_string_value(json_object_get(f, "name")),
				    (long long)json_integer_value(json_object_get(f, "arity")));
				break;
			}
		}
	}
	json_decref(r);
	return buf;
}

int main(int argc, char **argv)
{
	gi_runtime_init();
	if (argc < 2) {
		fprintf(stderr, "usage: assist_query DB [ITER]\n");
		return 2;
	}
	int64_t iter = 2000;
	if (argc > 2 && gi_parse_int64(argv[2], 1, 1000000, &iter) != 0)
		return 2;
	struct kg_db *db = NULL;
	json_t *mods = NULL;
	if (bench_graph_open("assist_query", argv[1], 2, &db, &mods))
		return 1;
	size_t nmods = json_array_size(mods);
	size_t rounds = (size_t)iter < nmods ? (size_t)iter : nmods;
	struct samples s[Q_COUNT];
	for (int q = 0; q < Q_COUNT; q++) {
		s[q].wall = gi_calloc(rounds + 100, sizeof(int64_t));
		s[q].cpu = gi_calloc(rounds + 100, sizeof(int64_t));
		s[q].n = 0;
	}
	json_t *profile = json_pack(
	    "{s:i, s:s, s:i, s:{s:{s:[s], s:i}, s:s, s:[{s:s, s:f}], s:[], s:[], s:[]}}", "id", 1,
	    "node", "bench@127.0.0.1", "created_ms", 1, "profile", "session", "traced_modules",
	    json_string_value(json_array_get(mods, 0)), "duration_ms", 10000, "hot_modules_basis",
	    "executing", "hot_modules", "module", json_string_value(json_array_get(mods, 0)),
	    "reductions_share", 0.3, "hot_functions", "trace_hotspots", "workload");
	for (int k = 0; k < 50; k++) {
		struct kg_query_params p = {0};
		p.profile = profile;
		timed(db, "briefing", &p, &s[Q_BRIEFING]);
	}
	json_t *boundaries = json_loads(
	    "{\"layers\":[{\"name\":\"top\",\"modules\":[\"Mix\",\"Mix.*\",\"IEx\",\"IEx.*\","
	    "\"ExUnit\",\"ExUnit.*\"],\"may_depend_on\":[\"core\"]},{\"name\":\"core\","
	    "\"modules\":[\"*\"]}],\"forbidden\":[{\"from\":\"Kernel*\",\"to\":\"Mix.*\"},"
	    "{\"from\":\"String*\",\"to\":\":ets\"}],\"forbid_cycles\":true}",
	    0, NULL);
	for (int k = 0; k < 50; k++) {
		struct kg_query_params p = {0};
		json_t *args = json_pack("{s:O}", "boundaries", boundaries);
		p.args = args;
		timed(db, "check", &p, &s[Q_CHECK]);
		json_decref(args);
	}
	for (size_t i = 0; i < rounds; i++) {
		const char *m = json_string_value(json_array_get(mods, i));
		const char *next = json_string_value(json_array_get(mods, (i + 7) % nmods));
		char fn[300], target[800];
		struct kg_query_params p = {0};
		p.module = m;
		p.profile = profile;
		timed(db, "preflight", &p, &s[Q_PREFLIGHT]);
		json_t *args = json_pack("{s:s}", "action", "remove");
		p.args = args;
		p.profile = NULL;
		timed(db, "impact_check", &p, &s[Q_REMOVE]);
		json_decref(args);
		if (first_function(db, m, fn, sizeof(fn))[0]) {
			snprintf(target, sizeof(target), "%s.%s", m, fn);
			args =
			    json_pack("{s:s, s:s}", "action", "rename", "new_name", "renamed_fn");
			p.module = target;
			p.args = args;
			timed(db, "impact_check", &p, &s[Q_RENAME]);
			json_decref(args);
			args =
			    json_pack("{s:{s:[{s:s, s:s}], s:[{s:s, s:s}], s:[s]}}", "plan",
			              "add_dependencies", "from", m, "to", next, "move_functions",
			              "function", target, "to", next, "modify_modules", m);
			struct kg_query_params q = {0};
			q.args = args;
			timed(db, "plan_validate", &q, &s[Q_PLAN]);
			json_decref(args);
		}
	}
	for (int q = 0; q < Q_COUNT; q++) {
		report(names[q], &s[q]);
		gi_free(s[q].wall);
		gi_free(s[q].cpu);
	}
	json_decref(boundaries);
	json_decref(profile);
	json_decref(mods);
	kg_db_close(db);
	return 0;
}
