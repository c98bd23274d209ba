/*
 * ts_parse.c - the bare tree-sitter parse of every .ex/.exs file under DIR
 * on THREADS threads (files read into memory first; each tree freed as soon
 * as it is made), for bench/bench_static.sh to compare the full index with.
 * Prints "files N", "bytes N", "parse_ms N" (wall time of the parse phase)
 * and "cpu_ms N" (user + system time of the parse phase, all threads).
 *
 *   ts_parse DIR [THREADS]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <tree_sitter/api.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "base/fs.h"
#include "base/runtime.h"
#include "base/str.h"
#include "base/vec.h"

const TSLanguage *tree_sitter_elixir(void);

struct source {
	char *text;
	size_t len;
};

static struct gi_vec sources;
static atomic_size_t next_file;

static int collect(const char *path, void *ctx)
{
	(void)ctx;
	if (!gi_str_ends_with(path, ".ex") && !gi_str_ends_with(path, ".exs"))
		return 0;
	struct source s = {0};
	if (gi_fs_read_file(path, 5u * 1024 * 1024, &s.text, &s.len) == 0)
		gi_vec_push(&sources, &s);
	return 0;
}

static void *parse_loop(void *arg)
{
	(void)arg;
	TSParser *p = ts_parser_new();
	ts_parser_set_language(p, tree_sitter_elixir());
	for (;;) {
		size_t i = atomic_fetch_add(&next_file, 1);
		if (i >= sources.len)
			break;
		struct source *s = gi_vec_get(&sources, i);
		TSTree *t = ts_parser_parse_string(p, NULL, s->text, (uint32_t)s->len);
		ts_tree_delete(t);
	}
	ts_parser_delete(p);
	return NULL;
}

int main(int argc, char **argv)
{
	gi_runtime_init();
	if (argc < 2) {
		fprintf(stderr, "usage: ts_parse DIR [THREADS]\n");
		return 2;
	}
	int64_t threads = 2;
	if (argc > 2 && gi_parse_int64(argv[2], 1, 64, &threads) != 0)
		return 2;
	gi_vec_init(&sources, sizeof(struct source));
	static const char *const skip[] = {".giulia", NULL};
	if (gi_fs_walk(argv[1], skip, collect, NULL) != 0) {
		fprintf(stderr, "ts_parse: cannot read %s\n", argv[1]);
		return 1;
	}
	size_t bytes = 0;
	for (size_t i = 0; i < sources.len; i++)
		bytes += ((struct source *)gi_vec_get(&sources, i))->len;
	pthread_t t[64];
	struct rusage r0, r1;
	getrusage(RUSAGE_SELF, &r0);
	int64_t t0 = gi_clock_mono_us();
	for (int64_t i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, parse_loop, NULL);
	for (int64_t i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	int64_t t1 = gi_clock_mono_us();
	getrusage(RUSAGE_SELF, &r1);
	double cpu = (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec + r1.ru_stime.tv_sec -
	                      r0.ru_stime.tv_sec) *
	                 1000.0 +
	             (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec + r1.ru_stime.tv_usec -
	                      r0.ru_stime.tv_usec) /
	                 1000.0;
	printf("files %zu\nbytes %zu\nparse_ms %.1f\ncpu_ms %.1f\n", sources.len, bytes,
	       (t1 - t0) / 1000.0, cpu);
	for (size_t i = 0; i < sources.len; i++)
		gi_free(((struct source *)gi_vec_get(&sources, i))->text);
	gi_vec_destroy(&sources);
	return 0;
}
