/*
 * search_eval.c - quality and latency of the code search on an index
 * database: for each query of the evaluation set (bench/search_eval.tsv)
 * whose project is PROJECT, the rank of the first acceptable answer in the
 * top 10 of three searches, then MRR@10 and recall@10 of each:
 *   text    search_text with the query's words as an alternation (ignore
 *           case); functions ranked by how many distinct words their hits
 *           hold, then by hits (a hit outside any function counts for its
 *           module) - what grep gives;
 *   ranked  search_code, mode ranked (BM25F);
 *   hybrid  search_code, mode hybrid (BM25F + learned word expansion).
 * Then the cost: the first ranked query (builds the search index), the
 * first hybrid one (learns or reads the word vectors), the index's bytes,
 * and p50/p99 wall and thread-CPU microseconds of ROUNDS warm runs of every
 * query in each mode. With VERBOSE=1 in the environment, each query's ranks.
 *
 *   search_eval DB QUERIES_TSV PROJECT [ROUNDS]
 * needs:
 */
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "base/runtime.h"
#include "base/str.h"
#include "graph/query.h"

#define QUERIES_MAX 512
#define TOP         10

struct query {
	char text[512];
	char expected[1024];
};

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static long max_rss_kb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static int64_t thread_cpu_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* True when `name` ("Mod.fun/2" or "Mod") is one of the `|`-separated answers. */
static bool acceptable(const char *expected, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = expected; *p;) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		if (len == n && strncmp(p, name, n) == 0)
			return true;
		p += len + (bar ? 1 : 0);
	}
	return false;
}

static json_t *run(struct kg_db *db, const char *name, json_t *args)
{
	struct kg_query_params p = {0};
	p.args = args;
	json_t *out = NULL;
	if (kg_query(db, name, &p, &out)) {
		fprintf(stderr, "search_eval: %s failed: %s\n", name,
		        kg_query_error_message() ? kg_query_error_message() : "?");
		exit(1);
	}
	return out;
}

static json_t *code_args(const char *text, const char *mode)
{
	return json_pack("{s:s, s:s, s:i}", "query", text, "mode", mode, "limit", TOP);
}

/* The query's words for the text search: letters and digits, 3 or more. */
static json_t *text_args(const char *text, char words[][64], int *nwords)
{
	char pattern[1024] = "";
	*nwords = 0;
	for (const char *p = text; *p && *nwords < 16;) {
		while (*p && !isalnum((unsigned char)*p))
			p++;
		const char *s = p;
		while (isalnum((unsigned char)*p))
			p++;
		if (p - s >= 3 && p - s < 64) {
			memcpy(words[*nwords], s, (size_t)(p - s));
			words[*nwords][p - s] = '\0';
			size_t len = strlen(pattern);
			snprintf(pattern + len, sizeof(pattern) - len, "%s%s", *nwords ? "|" : "",
			         words[*nwords]);
			(*nwords)++;
		}
	}
	return json_pack("{s:s, s:b, s:b, s:i}", "pattern", pattern, "regex", 1, "ignore_case", 1,
	                 "limit", 1000);
}

struct label {
	char name[600];
	unsigned words; /* bit per query word */
	int hits;
};

static int by_words(const void *a, const void *b)
{
	const struct label *x = a, *y = b;
	int wx = __builtin_popcount(x->words), wy = __builtin_popcount(y->words);
	if (wx != wy)
		return wy - wx;
	return y->hits - x->hits;
}

/* The text search's ranking of labels (functions, else modules). */
static size_t text_rank(json_t *out, char words[][64], int nwords, struct label *labels, size_t max)
{
	size_t n = 0, i;
	json_t *h;
	json_array_foreach(json_object_get(out, "hits"), i, h)
	{
		const char *mod = json_string_value(json_object_get(h, "module"));
		const char *fn = json_string_value(json_object_get(h, "function"));
		const char *line = json_string_value(json_object_get(h, "text"));
		if (!mod)
			continue;
		char name[600];
		snprintf(name, sizeof(name), "%s%s%s", mod, fn ? "." : "", fn ? fn : "");
		size_t k = 0;
		while (k < n && strcmp(labels[k].name, name) != 0)
			k++;
		if (k == n) {
			if (n == max)
				continue;
			memset(&labels[n], 0, sizeof(labels[n]));
			snprintf(labels[n].name, sizeof(labels[n].name), "%s", name);
			n++;
		}
		labels[k].hits++;
		for (int w = 0; w < nwords; w++)
			if (strcasestr(line, words[w]))
				labels[k].words |= 1u << w;
	}
	qsort(labels, n, sizeof(*labels), by_words);
	return n;
}

static int code_rank(json_t *out, const char *expected)
{
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(out, "results"), i, r)
	{
		char name[600];
		const char *fn = json_string_value(json_object_get(r, "name"));
		if (fn)
			snprintf(name, sizeof(name), "%s.%s/%lld",
			         json_string_value(json_object_get(r, "module")), fn,
			         (long long)json_integer_value(json_object_get(r, "arity")));
		else
			snprintf(name, sizeof(name), "%s",
			         json_string_value(json_object_get(r, "module")));
		if (i < TOP && acceptable(expected, name))
			return (int)i + 1;
	}
	return 0;
}

static void report(const char *mode, const int *ranks, size_t n, int64_t *wall, int64_t *cpu,
                   size_t runs)
{
	double mrr = 0;
	size_t found = 0;
	for (size_t i = 0; i < n; i++)
		if (ranks[i]) {
			mrr += 1.0 / ranks[i];
			found++;
		}
	qsort(wall, runs, sizeof(int64_t), cmp_i64);
	qsort(cpu, runs, sizeof(int64_t), cmp_i64);
	printf("%-6s mrr10 %.3f recall10 %.3f  p50_us %lld p99_us %lld  cpu_p50_us %lld "
	       "cpu_p99_us %lld\n",
	       mode, n ? mrr / (double)n : 0, n ? (double)found / (double)n : 0,
	       (long long)wall[runs / 2], (long long)wall[runs * 99 / 100],
	       (long long)cpu[runs / 2], (long long)cpu[runs * 99 / 100]);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: search_eval DB QUERIES_TSV PROJECT [ROUNDS]\n");
		return 2;
	}
	gi_runtime_init();
	int64_t rounds_arg = 5;
	if (argc > 4 && gi_parse_int64(argv[4], 1, 1000, &rounds_arg)) {
		fprintf(stderr, "search_eval: ROUNDS must be 1..1000\n");
		return 2;
	}
	int rounds = (int)rounds_arg;
	FILE *f = fopen(argv[2], "r");
	if (!f) {
		perror(argv[2]);
		return 1;
	}
	static struct query queries[QUERIES_MAX];
	size_t n = 0;
	char line[2048];
	while (fgets(line, sizeof(line), f) && n < QUERIES_MAX) {
		line[strcspn(line, "\r\n")] = '\0';
		char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
		if (line[0] == '#' || !t2)
			continue;
		*t1 = *t2 = '\0';
		if (strcmp(line, argv[3]) != 0)
			continue;
		snprintf(queries[n].text, sizeof(queries[n].text), "%s", t1 + 1);
		snprintf(queries[n].expected, sizeof(queries[n].expected), "%s", t2 + 1);
		n++;
	}
	fclose(f);
	struct kg_db *db = NULL;
	if (kg_db_open(argv[1], false, &db)) {
		fprintf(stderr, "search_eval: cannot open %s\n", argv[1]);
		return 1;
	}
	json_t *probe = json_pack("{s:s}", "pattern", "zzzz_nothing");
	int64_t t0 = gi_clock_mono_us();
	json_decref(run(db, "search_text", probe)); /* loads the graph */
	json_decref(probe);
	int64_t t1 = gi_clock_mono_us();
	long rss1 = max_rss_kb();
	json_t *a = code_args("index", "ranked");
	json_decref(run(db, "search_code", a));
	json_decref(a);
	int64_t t2 = gi_clock_mono_us();
	long rss2 = max_rss_kb();
	a = code_args("index", "hybrid");
	json_t *h = run(db, "search_code", a);
	json_decref(a);
	int64_t t3 = gi_clock_mono_us();
	long rss3 = max_rss_kb();
	printf("queries %zu  graph_load_ms %.1f  search_index_ms %.1f  vectors_ms %.1f  "
	       "rss_graph_kb %ld  rss_search_index_kb +%ld  rss_vectors_kb +%ld\n",
	       n, (double)(t1 - t0) / 1000, (double)(t2 - t1) / 1000, (double)(t3 - t2) / 1000,
	       rss1, rss2 - rss1, rss3 - rss2);
	json_decref(h);

	static const char *const modes[] = {"text", "ranked", "hybrid"};
	size_t runs = n * (size_t)rounds;
	int64_t *wall = gi_malloc(sizeof(int64_t) * (runs + 1));
	int64_t *cpu = gi_malloc(sizeof(int64_t) * (runs + 1));
	int *ranks = gi_calloc(n + 1, sizeof(int));
	static struct label labels[4096];
	bool verbose = getenv("VERBOSE") != NULL;
	for (int m = getenv("SKIP_TEXT") ? 1 : 0; m < 3; m++) {
		size_t k = 0;
		for (int r = 0; r < rounds; r++)
			for (size_t i = 0; i < n; i++) {
				char words[16][64];
				int nwords = 0;
				json_t *args = m == 0 ? text_args(queries[i].text, words, &nwords)
				                      : code_args(queries[i].text, modes[m]);
				int64_t w0 = gi_clock_mono_us(), c0 = thread_cpu_us();
				json_t *out = run(db, m == 0 ? "search_text" : "search_code", args);
				wall[k] = gi_clock_mono_us() - w0;
				cpu[k++] = thread_cpu_us() - c0;
				if (r == 0 && m == 0) {
					size_t nl = text_rank(out, words, nwords, labels, 4096);
					ranks[i] = 0;
					for (size_t j = 0; j < nl && j < TOP; j++)
						if (acceptable(queries[i].expected,
						               labels[j].name)) {
							ranks[i] = (int)j + 1;
							break;
						}
				} else if (r == 0) {
					ranks[i] = code_rank(out, queries[i].expected);
				}
				if (r == 0 && verbose)
					printf("  %-6s %2d  %s\n", modes[m], ranks[i],
					       queries[i].text);
				json_decref(out);
				json_decref(args);
			}
		report(modes[m], ranks, n, wall, cpu, runs);
	}
	/* preflight of every project module, ROUNDS times */
	json_t *mods = NULL;
	if (kg_project_modules(db, &mods) == 0 && json_array_size(mods)) {
		size_t nm = json_array_size(mods), k = 0;
		gi_free(wall);
		gi_free(cpu);
		wall = gi_malloc(sizeof(int64_t) * (nm * (size_t)rounds + 1));
		cpu = gi_malloc(sizeof(int64_t) * (nm * (size_t)rounds + 1));
		for (int r = 0; r < rounds; r++)
			for (size_t i = 0; i < nm; i++) {
				struct kg_query_params p = {0};
				p.module = json_string_value(json_array_get(mods, i));
				json_t *out = NULL;
				int64_t w0 = gi_clock_mono_us(), c0 = thread_cpu_us();
				if (kg_query(db, "preflight", &p, &out) == 0) {
					wall[k] = gi_clock_mono_us() - w0;
					cpu[k++] = thread_cpu_us() - c0;
				}
				json_decref(out);
			}
		qsort(wall, k, sizeof(int64_t), cmp_i64);
		qsort(cpu, k, sizeof(int64_t), cmp_i64);
		if (k)
			printf("preflight (%zu modules)  p50_us %lld p99_us %lld  cpu_p50_us %lld "
			       "cpu_p99_us %lld\n",
			       nm, (long long)wall[k / 2], (long long)wall[k * 99 / 100],
			       (long long)cpu[k / 2], (long long)cpu[k * 99 / 100]);
	}
	json_decref(mods);
	gi_free(wall);
	gi_free(cpu);
	gi_free(ranks);
	kg_db_close(db);
	return 0;
}
