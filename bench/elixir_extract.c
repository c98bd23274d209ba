/*
 * elixir_extract.c - throughput of the Elixir reader on one core: the bare
 * tree-sitter parse of every file against ex_parse_with (parse + extraction,
 * as `giulia index` runs it: EX_PARSE_NO_BODY_HASHES) of the same files, both over the same
 * in-memory corpus, best of N rounds. Built and run by bench/bench_elixir_extract.sh.
 *
 *   elixir_extract DIR [ROUNDS [bare|full]]
 *
 * With `bare` or `full` only that half runs (for `perf stat`, whose
 * instruction counts do not depend on the machine's load).
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <tree_sitter/api.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "base/fs.h"
#include "base/runtime.h"
#include "base/str.h"
#include "source/elixir.h"

const TSLanguage *tree_sitter_elixir(void);

/* CPU time of this thread in microseconds: the machine may be shared, so
 * CPU time is reported beside wall time. */
static int64_t cpu_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

struct file {
	char *path;
	char *text;
	size_t len;
};

int main(int argc, char **argv)
{
	gi_runtime_init();
	if (argc < 2) {
		fprintf(stderr, "usage: elixir_extract DIR [ROUNDS]\n");
		return 2;
	}
	int64_t rounds = 3;
	if (argc > 2 && gi_parse_int64(argv[2], 1, 100, &rounds) != 0)
		return 2;
	bool run_bare = argc <= 3 || strcmp(argv[3], "full") != 0;
	bool run_full = argc <= 3 || strcmp(argv[3], "bare") != 0;
	DIR *d = opendir(argv[1]);
	if (!d) {
		perror(argv[1]);
		return 1;
	}
	struct file *files = NULL;
	size_t n = 0, cap = 0, bytes = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!gi_str_ends_with(e->d_name, ".ex") && !gi_str_ends_with(e->d_name, ".exs"))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			files = gi_reallocarray(files, cap, sizeof(*files));
		}
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", argv[1], e->d_name);
		if (gi_fs_read_file(path, EX_MAX_FILE_SIZE, &files[n].text, &files[n].len) != 0)
			continue;
		files[n].path = gi_strdup(path);
		bytes += files[n].len;
		n++;
	}
	closedir(d);

	double best_bare = 1e99, best_full = 1e99, cpu_bare = 1e99, cpu_full = 1e99;
	size_t modules = 0, functions = 0, calls = 0, errors = 0;
	for (int64_t r = 0; r < rounds; r++) {
		int64_t t0 = gi_clock_mono_us(), c0 = cpu_us();
		TSParser *p = ts_parser_new();
		ts_parser_set_language(p, tree_sitter_elixir());
		for (size_t i = 0; run_bare && i < n; i++) {
			TSTree *t =
			    ts_parser_parse_string(p, NULL, files[i].text, (uint32_t)files[i].len);
			ts_tree_delete(t);
		}
		ts_parser_delete(p);
		int64_t t1 = gi_clock_mono_us(), c1 = cpu_us();
		modules = functions = calls = errors = 0;
		for (size_t i = 0; run_full && i < n; i++) {
			struct facts_file *f = NULL;
			/* what `giulia index` runs: the body hashes wait for duplicates */
			if (ex_parse_with(files[i].path, files[i].text, files[i].len,
			                  EX_PARSE_NO_BODY_HASHES, &f) != 0)
				continue;
			errors += f->errors.len;
			for (size_t m = 0; m < f->modules.len; m++) {
				struct facts_module *mod = gi_vec_get(&f->modules, m);
				modules++;
				functions += mod->functions.len;
				for (size_t k = 0; k < mod->functions.len; k++)
					calls += ((struct facts_function *)gi_vec_get(
					              &mod->functions, k))
					             ->calls.len;
			}
			facts_file_free(f);
		}
		int64_t t2 = gi_clock_mono_us(), c2 = cpu_us();
		if ((c1 - c0) / 1e6 < cpu_bare)
			cpu_bare = (c1 - c0) / 1e6;
		if ((c2 - c1) / 1e6 < cpu_full)
			cpu_full = (c2 - c1) / 1e6;
		if ((t1 - t0) / 1e6 < best_bare)
			best_bare = (t1 - t0) / 1e6;
		if ((t2 - t1) / 1e6 < best_full)
			best_full = (t2 - t1) / 1e6;
	}
	double mb = bytes / 1e6;
	printf("files %zu, %.2f MB; modules %zu, functions %zu, calls %zu, files with errors %zu\n",
	       n, mb, modules, functions, calls, errors);
	printf("bare tree-sitter parse:   wall %.3f s (%.2f MB/s), cpu %.3f s (%.2f MB/s)\n",
	       best_bare, mb / best_bare, cpu_bare, mb / cpu_bare);
	printf("ex_parse (parse+extract): wall %.3f s (%.2f MB/s), cpu %.3f s (%.2f MB/s)\n",
	       best_full, mb / best_full, cpu_full, mb / cpu_full);
	printf("ratio ex_parse / bare: wall %.3f, cpu %.3f\n", best_full / best_bare,
	       cpu_full / cpu_bare);
	for (size_t i = 0; i < n; i++) {
		gi_free(files[i].path);
		gi_free(files[i].text);
	}
	gi_free(files);
	return 0;
}
