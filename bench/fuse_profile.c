/*
 * fuse_profile.c - how long fuse_profile_build and the reports take on long
 * sessions, and how big the outputs are (bench/bench_fuse.sh builds and runs
 * it). A session of N one-second snapshots, each with 10 processes in each
 * top list (30 distinct pids per snapshot out of a rotating population of
 * 2000) and 40 traced functions in 4 modules, no graph.
 *
 *   fuse_profile N [stream]   prints one Markdown table row
 *
 * `stream` feeds a fuse_builder one snapshot at a time, each freed after it
 * was added (how a worker reading rows would do it): its peak RSS is the
 * builder's own; the one-shot mode holds the whole array, as the worker does
 * when it loads every snapshot first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "../tests/unit/fuse_series.h"
#include "base/buf.h"
#include "base/runtime.h"
#include "fuse/fuse.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void tweak(json_t *s, long seq, void *arg)
{
	(void)arg;
	static const char *const lists[] = {"reductions", "memory", "message_queue"};
	char pid[32], mod[32], fn[32];
	for (int l = 0; l < 3; l++)
		for (int i = 0; i < 10; i++) {
			long p = (seq * 7 + i * 13 + l * 101) % 2000;
			snprintf(pid, sizeof(pid), "<0.%ld.0>", 100 + p);
			snprintf(mod, sizeof(mod), "App.Module%ld", p % 150);
			series_add_process(s, lists[l], pid, NULL, ":proc_lib.init_p/5", mod,
			                   1000.0 * (double)(10 - i), 1e5 + (double)p,
			                   (double)(i % 3));
		}
	for (int m = 0; m < 4; m++)
		for (int f = 0; f < 10; f++) {
			snprintf(mod, sizeof(mod), "App.Traced%d", m);
			snprintf(fn, sizeof(fn), f % 3 ? "get_%d" : "put_%d", f);
			series_add_call(s, mod, fn, 1, (double)(100 * f + seq % 17));
		}
	series_set(s, "memory", "total", 5e7 + (double)(seq % 100) * 1e5);
}

int main(int argc, char **argv)
{
	gi_runtime_init();
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 3600;
	if (argc > 2 && strcmp(argv[2], "stream") == 0) {
		json_t *fin = series_finalize("complete", n, NULL);
		struct fuse_builder *b = NULL;
		double bytes = 0, t0 = now_ms();
		if (fuse_builder_new(NULL, n, &b) != 0)
			return 1;
		for (long i = 0; i < n; i++) {
			json_t *s = series_snapshot(i);
			tweak(s, i, NULL);
			char *text = json_dumps(s, JSON_COMPACT);
			bytes += (double)strlen(text);
			free(text);
			fuse_builder_add(b, s);
			json_decref(s);
		}
		json_t *p = NULL;
		fuse_builder_finish(b, fin, NULL, &p);
		double t1 = now_ms();
		fuse_builder_free(b);
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		printf("| %ld (builder, streamed) | %.1f MB | %.0f ms (with generation) | - | - | "
		       "- | - "
		       "| %ld MB |\n",
		       n, bytes / 1e6, t1 - t0, ru.ru_maxrss / 1024);
		json_decref(p);
		json_decref(fin);
		return 0;
	}
	json_t *snaps = series_make(n, tweak, NULL);
	json_t *fin = series_finalize("complete", n, NULL);
	char *text = json_dumps(snaps, JSON_COMPACT);
	size_t input = strlen(text);
	free(text);
	double t0 = now_ms();
	json_t *p = NULL;
	if (fuse_profile_build(fin, snaps, NULL, NULL, &p) != 0)
		return 1;
	double t1 = now_ms();
	struct gi_buf txt, html;
	gi_buf_init(&txt, 0);
	gi_buf_init(&html, 0);
	fuse_report_text(p, &txt);
	double t2 = now_ms();
	fuse_report_html(p, &html);
	double t3 = now_ms();
	char *pj = json_dumps(p, JSON_COMPACT);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("| %ld | %.1f MB | %.0f ms | %.1f ms | %.1f ms | %zu kB | %zu kB | %ld MB |\n", n,
	       (double)input / 1e6, t1 - t0, t2 - t1, t3 - t2, strlen(pj) / 1024, html.len / 1024,
	       ru.ru_maxrss / 1024);
	free(pj);
	gi_buf_destroy(&txt);
	gi_buf_destroy(&html);
	json_decref(p);
	json_decref(snaps);
	json_decref(fin);
	return 0;
}
