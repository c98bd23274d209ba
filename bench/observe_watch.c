/*
 * observe_watch.c - benchmark helper (bench/bench_observe.sh): one observer
 * process watching the given nodes through the session manager for a while,
 * then reporting its own CPU time, peak RSS and the snapshots it got.
 *
 *   observe_watch COOKIE INTERVAL_MS SECONDS TRACE_MODULES|- NODE...
 *
 * OBSERVE_WATCH_CALL_TIME=1 in the environment adds call_time to the traced
 * modules (bench/bench_calltime.sh).
 * OBSERVE_WATCH_BUDGET=FILE writes each snapshot's `observer` section and its
 * trace's `duty` section as one JSON line (the guest's budget at work).
 * GIULIA_SAMPLE_PERIOD_MS sets the sampler's period (-1 turns it off).
 * OBSERVE_WATCH_OVERHEAD=0.05 sets an overhead budget (duty-cycled counting;
 * the utilisation ceiling off, as a CPU-bound bench target is always above
 * it), and OBSERVE_WATCH_CALLS=FILE writes, per traced function, its calls
 * per second (estimated under a budget) over the snapshots after the first
 * two. OBSERVE_WATCH_WINDOWS=FILE writes every snapshot's window:
 * "W timestamp_ms window_ms node_reductions work_reductions" (the last
 * without the session's own, snapshot reductions.observer; -1 when
 * absent), then per traced function
 * "C module.function/arity count measured low high" (full counts: measured,
 * low and high are the count), so that a bench can compare estimates with
 * a reference over the very same windows (bench/bench_budget.sh).
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
/* per function over the snapshots after the first two: calls and window */
static json_t *calls_total;
static double calls_window_ms, duty_total, exposure_total;
static long duty_n;
static FILE *windows_out; /* OBSERVE_WATCH_WINDOWS, written on the manager's thread */
static FILE *budget_out;  /* OBSERVE_WATCH_BUDGET: each snapshot's observer and duty sections */

static void window_write(json_t *snap, json_t *trace)
{
	/* reductions.delta is the node's own work (observers' left out) and
	 * reductions.total everything; older observers had only delta, the
	 * session's own (observer) part of it */
	json_t *r = json_object_get(snap, "reductions");
	json_t *total = json_object_get(r, "total");
	json_t *reds = json_is_number(total) ? total : json_object_get(r, "delta");
	json_t *own = json_object_get(r, "observer");
	json_t *work = json_is_number(total) ? json_incref(json_object_get(r, "delta"))
	               : json_is_number(reds) && json_is_number(own)
	                   ? json_real(json_number_value(reds) - json_number_value(own))
	                   : json_null();
	fprintf(windows_out, "W %lld %.0f %.0f %.0f\n",
	        (long long)json_integer_value(json_object_get(snap, "timestamp_ms")),
	        json_number_value(json_object_get(trace, "window_ms")),
	        json_is_number(reds) ? json_number_value(reds) : -1.0,
	        json_is_number(work) ? json_number_value(work) : -1.0);
	json_decref(work);
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(trace, "calls"), i, c)
	{
		double count = json_number_value(json_object_get(c, "count"));
		json_t *measured = json_object_get(c, "measured");
		bool estimated = json_is_true(json_object_get(c, "estimated"));
		fprintf(windows_out, "C %s.%s/%lld %.0f %.0f %.0f %.0f %d\n",
		        json_string_value(json_object_get(c, "module")),
		        json_string_value(json_object_get(c, "function")),
		        (long long)json_integer_value(json_object_get(c, "arity")), count,
		        estimated ? json_number_value(measured) : count,
		        estimated ? json_number_value(json_object_get(c, "low")) : count,
		        estimated ? json_number_value(json_object_get(c, "high")) : count,
		        json_is_true(json_object_get(c, "carried")) ? 1 : 0);
	}
}

/* The observer's own cost as the session measured it on the target, over
 * the snapshots after the first (which holds the session's start). */
static double obs_window_ms, obs_cost_ms, obs_share_ms, obs_counting_ms, obs_scan_us,
    obs_sampler_us, obs_reds;
static long obs_n, obs_over, obs_scanned, obs_every_max;

static void observer_add(json_t *snap)
{
	json_t *o = json_object_get(snap, "observer");
	double w = json_number_value(json_object_get(snap, "window_ms"));
	if (!json_is_object(o) || snapshots <= 1 || w <= 0)
		return;
	obs_n++;
	obs_window_ms += w;
	obs_cost_ms += json_number_value(json_object_get(o, "cost")) * w;
	obs_share_ms += json_number_value(json_object_get(o, "share")) * w;
	obs_counting_ms += json_number_value(json_object_get(o, "counting")) * w;
	obs_scan_us += json_number_value(json_object_get(o, "scan_us"));
	obs_sampler_us += json_number_value(json_object_get(o, "sampler_us"));
	obs_reds += json_number_value(json_object_get(o, "reductions"));
	if (!json_is_true(json_object_get(o, "within_budget")))
		obs_over++;
	if (!json_is_false(json_object_get(o, "scanned")))
		obs_scanned++;
	long every = (long)json_number_value(json_object_get(o, "scan_every"));
	if (every > obs_every_max)
		obs_every_max = every;
}

static void on_snapshot(void *ctx, const char *id, json_t *snap)
{
	(void)ctx;
	(void)id;
	__atomic_add_fetch(&snapshots, 1, __ATOMIC_RELAXED);
	sample_ms_total += json_number_value(json_object_get(snap, "sample_ms"));
	observer_add(snap);
	json_t *trace = json_object_get(snap, "trace");
	if (budget_out) {
		json_t *line = json_pack("{sO?sO?}", "observer", json_object_get(snap, "observer"),
		                         "duty", json_object_get(trace, "duty"));
		if (line)
			json_dumpf(line, budget_out, JSON_COMPACT);
		fputc('\n', budget_out);
		json_decref(line);
	}
	if (windows_out && trace)
		window_write(snap, trace);
	if (!calls_total || snapshots <= 2 || !trace)
		return;
	calls_window_ms += json_number_value(json_object_get(trace, "window_ms"));
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(trace, "calls"), i, c)
	{
		char key[512];
		snprintf(key, sizeof(key), "%s.%s/%lld",
		         json_string_value(json_object_get(c, "module")),
		         json_string_value(json_object_get(c, "function")),
		         (long long)json_integer_value(json_object_get(c, "arity")));
		double n = json_number_value(json_object_get(calls_total, key));
		json_object_set_new(calls_total, key,
		                    json_real(n + json_number_value(json_object_get(c, "count"))));
	}
	json_array_foreach(json_object_get(json_object_get(trace, "duty"), "modules"), i, c)
	{
		duty_total += json_number_value(json_object_get(c, "duty"));
		exposure_total += json_number_value(json_object_get(c, "exposure"));
		duty_n++;
	}
}

static long rss_peak_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	while (f && fgets(line, sizeof(line), f))
		if (GI_STR_STARTS(line, "VmHWM:"))
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
	const char *overhead_env = getenv("OBSERVE_WATCH_OVERHEAD");
	double overhead = overhead_env ? strtod(overhead_env, NULL) : 0;
	const char *calls_path = getenv("OBSERVE_WATCH_CALLS");
	if (calls_path)
		calls_total = json_object();
	const char *budget_path = getenv("OBSERVE_WATCH_BUDGET");
	if (budget_path && !(budget_out = fopen(budget_path, "w"))) {
		perror(budget_path);
		return 1;
	}
	const char *windows_path = getenv("OBSERVE_WATCH_WINDOWS");
	if (windows_path && !(windows_out = fopen(windows_path, "w"))) {
		perror(windows_path);
		return 1;
	}
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
		                                 .call_time = call_time,
		                                 .overhead = overhead,
		                                 .pause_above = 1.0};
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
	if (obs_n > 0)
		printf("observer_cost=%.5f observer_scan_ms=%.2f observer_sampler_ms_per_s=%.2f "
		       "observer_reds_per_snapshot=%.0f observer_over_budget=%ld/%ld "
		       "observer_scanned=%ld/%ld observer_scan_every_max=%ld "
		       "observer_share=%.5f observer_counting=%.5f\n",
		       obs_cost_ms / obs_window_ms, obs_scan_us / 1000.0 / (double)obs_n,
		       obs_sampler_us / obs_window_ms, obs_reds / (double)obs_n, obs_over, obs_n,
		       obs_scanned, obs_n, obs_every_max, obs_share_ms / obs_window_ms,
		       obs_counting_ms / obs_window_ms);
	fflush(stdout);
	obs_manager_free(m);
	if (windows_out)
		fclose(windows_out);
	if (budget_out)
		fclose(budget_out);
	FILE *out = calls_path ? fopen(calls_path, "w") : NULL;
	if (out) {
		const char *key;
		json_t *v;
		json_object_foreach(calls_total, key, v)
		{
			fprintf(out, "%s %.1f\n", key,
			        calls_window_ms > 0
			            ? json_number_value(v) * 1000.0 / calls_window_ms
			            : 0);
		}
		fprintf(out, "#duty %.4f\n", duty_n ? duty_total / (double)duty_n : 1.0);
		fprintf(out, "#exposure %.4f\n", duty_n ? exposure_total / (double)duty_n : 1.0);
		fclose(out);
	}
	json_decref(calls_total);
	return 0;
}
