/*
 * observe_watch.c - benchmark helper (bench/bench_observe.sh): one observer
 * process watching the given nodes through the session manager for a while,
 * then reporting its own CPU time, peak RSS and the snapshots it got.
 *
 *   observe_watch COOKIE INTERVAL_MS SECONDS TRACE_MODULES|- NODE...
 *
 * OBSERVE_WATCH_CALL_TIME=1 in the environment adds call_time to the traced
 * modules (bench/bench_calltime.sh).
 * GIULIA_SAMPLE_PERIOD_MS sets the sampler's period (-1 turns it off).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/runtime.h"
#include "base/str.h"
#include "observe/observe.h"

static long snapshots;
static double sample_ms_total;

static void on_snapshot(void *ctx, const char *id, json_t *snap)
{
	(void)ctx;
	(void)id;
	__atomic_add_fetch(&snapshots, 1, __ATOMIC_RELAXED);
	sample_ms_total += json_number_value(json_object_get(snap, "sample_ms"));
}

static long rss_peak_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "VmHWM:", 6) == 0)
			kb = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	gi_runtime_init();
	if (argc < 6) {
		fprintf(stderr, "usage: observe_watch COOKIE INTERVAL_MS SECONDS MODS|- NODE...\n");
		return 2;
	}
	int64_t interval = 0, seconds = 0;
	if (gi_parse_int64(argv[2], 250, 600000, &interval) != 0 ||
	    gi_parse_int64(argv[3], 1, 3600, &seconds) != 0)
		return 2;
	const char *mods[3] = {NULL, NULL, NULL};
	char modbuf[256];
	if (strcmp(argv[4], "-") != 0) {
		gi_strlcpy(modbuf, argv[4], sizeof(modbuf));
		char *comma = strchr(modbuf, ',');
		mods[0] = modbuf;
		if (comma) {
			*comma = '\0';
			mods[1] = comma + 1;
		}
	}
	const char *ct_env = getenv("OBSERVE_WATCH_CALL_TIME");
	bool call_time = ct_env && strcmp(ct_env, "1") == 0;
	struct obs_callbacks cb = {on_snapshot, NULL, NULL};
	struct obs_manager *m = NULL;
	if (obs_manager_new(&cb, &m) != 0)
		return 1;
	int started = 0;
	for (int i = 5; i < argc; i++) {
		struct obs_session_config cfg = {.node = argv[i],
		                                 .cookie = argv[1],
		                                 .interval_ms = (int)interval,
		                                 .top_n = 10,
		                                 .trace_modules = mods[0] ? mods : NULL,
		                                 .call_time = call_time};
		/* GIULIA_SAMPLE_PERIOD_MS: the sampler's period (-1: off; unset: default). */
		const char *period = getenv("GIULIA_SAMPLE_PERIOD_MS");
		int64_t pv = 0;
		if (period && gi_parse_int64(period, -1, 1000, &pv) == 0)
			cfg.sample_period_ms = (int)pv;
		char *id = NULL;
		int rc = obs_session_start(m, &cfg, &id);
		if (rc != 0)
			fprintf(stderr, "observe_watch: %s: error %d\n", argv[i], rc);
		else
			started++;
		free(id);
	}
	struct rusage r0, r1;
	getrusage(RUSAGE_SELF, &r0);
	int64_t t0 = gi_clock_mono_ms();
	gi_clock_sleep_ms(seconds * 1000);
	getrusage(RUSAGE_SELF, &r1);
	int64_t t1 = gi_clock_mono_ms();
	double cpu = (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) +
	             (double)(r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) +
	             (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec) / 1e6 +
	             (double)(r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) / 1e6;
	long n = __atomic_load_n(&snapshots, __ATOMIC_RELAXED);
	printf(
	    "sessions=%d snapshots=%ld cpu_pct=%.2f rss_peak_mb=%.1f target_sample_ms_avg=%.1f\n",
	    started, n, 100.0 * cpu / ((double)(t1 - t0) / 1000.0), (double)rss_peak_kb() / 1024.0,
	    n ? sample_ms_total / (double)n : 0.0);
	fflush(stdout);
	obs_manager_free(m);
	return 0;
}
