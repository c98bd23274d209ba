/*
 * bench_beam.c - reads every .beam file under the given roots with the BEAM
 * reader (src/source/beam.c) on N threads and prints one line of results:
 * files, bytes, modules, functions, calls, errors, wall and CPU time, peak RSS.
 * Built and run by bench/bench_beam.sh; not part of the library.
 *
 *   bench_beam THREADS ROOT...
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "base/fs.h"
#include "base/runtime.h"
#include "base/str.h"
#include "base/vec.h"
#include "source/beam.h"

struct job {
	struct gi_vec paths; /* char * */
	atomic_size_t next;
	atomic_long bytes, modules, functions, calls, errors;
};

static int collect(const char *path, void *ctx)
{
	struct job *j = ctx;
	if (gi_str_ends_with(path, ".beam")) {
		char *copy = gi_strdup(path);
		gi_vec_push(&j->paths, &copy);
	}
	return 0;
}

static void *work(void *arg)
{
	struct job *j = arg;
	for (;;) {
		size_t i = atomic_fetch_add(&j->next, 1);
		if (i >= j->paths.len)
			return NULL;
		struct facts_file *f = NULL;
		char err[512];
		if (beam_read_file(GI_VEC_AT(&j->paths, char *, i), &f, err, sizeof(err)) != 0) {
			fprintf(stderr, "%s\n", err);
			atomic_fetch_add(&j->errors, 1);
			continue;
		}
		long functions = 0, calls = 0;
		for (size_t m = 0; m < f->modules.len; m++) {
			struct facts_module *mod = gi_vec_get(&f->modules, m);
			functions += (long)mod->functions.len;
			for (size_t k = 0; k < mod->functions.len; k++)
				calls +=
				    (long)((struct facts_function *)gi_vec_get(&mod->functions, k))
				        ->calls.len;
		}
		atomic_fetch_add(&j->bytes, (long)f->size);
		atomic_fetch_add(&j->modules, (long)f->modules.len);
		atomic_fetch_add(&j->functions, functions);
		atomic_fetch_add(&j->calls, calls);
		facts_file_free(f);
	}
}

int main(int argc, char **argv)
{
	gi_runtime_init();
	if (argc < 3) {
		fprintf(stderr, "usage: bench_beam THREADS ROOT...\n");
		return 2;
	}
	int64_t threads = 0;
	if (gi_parse_int64(argv[1], 1, 64, &threads) != 0) {
		fprintf(stderr, "bench_beam: THREADS must be 1..64\n");
		return 2;
	}
	struct job j;
	memset(&j, 0, sizeof(j));
	gi_vec_init(&j.paths, sizeof(char *));
	int64_t t0 = gi_clock_mono_us();
	for (int i = 2; i < argc; i++)
		gi_fs_walk(argv[i], NULL, collect, &j);
	pthread_t tid[64];
	for (int64_t t = 0; t < threads; t++)
		pthread_create(&tid[t], NULL, work, &j);
	for (int64_t t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	int64_t us = gi_clock_mono_us() - t0;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("files=%zu bytes=%ld modules=%ld functions=%ld calls=%ld errors=%ld threads=%lld "
	       "wall_ms=%.1f cpu_ms=%.1f peak_rss_mb=%.1f\n",
	       j.paths.len, (long)j.bytes, (long)j.modules, (long)j.functions, (long)j.calls,
	       (long)j.errors, (long long)threads, (double)us / 1000.0,
	       (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000.0 +
	           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000.0,
	       (double)ru.ru_maxrss / 1024.0);
	for (size_t i = 0; i < j.paths.len; i++)
		gi_free(GI_VEC_AT(&j.paths, char *, i));
	gi_vec_destroy(&j.paths);
	return j.errors ? 1 : 0;
}
