/*
 * metrics_render.c - the CPU time of one monitor /metrics scrape at N
 * observed nodes, measured in-process (bench/bench_fleet.sh runs it): what
 * the route does under and after its lock (taking each node's latest
 * snapshot and the alerts evaluated when it came, then
 * api_monitor_metrics_render: parsing each latest snapshot, hot modules,
 * traced functions, the text). The alerts' evaluation (once per snapshot,
 * not per scrape) is timed apart: its CPU time per node.
 * Process CPU time, not wall time, so that a loaded shared machine blurs it
 * less; median of 15 scrapes per N.
 *
 *   metrics_render SNAPSHOTS.json N...
 *
 * SNAPSHOTS.json: an array of snapshots (tests/fixtures/snapshots/busy):
 * every node gets the last one as its latest and a full compact history
 * (720 points, HISTORY_MAX of monitor.c) made of their points.
 * needs:
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/monitor_metrics.h"
#include "api/runtime_stats.h"
#include "base/alloc.h"
#include "base/runtime.h"

int cli_exit_code_for(int gi_error);
int cli_exit_code_for(int gi_error)
{
	return gi_error ? 1 : 0;
}

static double cpu_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	gi_runtime_init();
	if (argc < 3) {
		fprintf(stderr, "usage: metrics_render SNAPSHOTS.json N...\n");
		return 2;
	}
	json_error_t je;
	json_t *snaps = json_load_file(argv[1], 0, &je);
	if (!json_is_array(snaps) || json_array_size(snaps) == 0) {
		fprintf(stderr, "%s: not an array of snapshots (%s)\n", argv[1], je.text);
		return 1;
	}
	struct api_history history;
	api_history_init(&history, 720);
	for (size_t i = 0; history.len < 720; i = (i + 1) % json_array_size(snaps)) {
		struct api_point p;
		api_stats_point_read(json_array_get(snaps, i), &p);
		api_history_add(&history, &p);
	}
	json_t *last = json_array_get(snaps, json_array_size(snaps) - 1);
	printf("%-6s %14s %12s %20s\n", "nodes", "cpu_ms/scrape", "bytes", "alerts_us/snapshot");
	for (int a = 2; a < argc; a++) {
		size_t n = (size_t)strtoul(argv[a], NULL, 10);
		struct api_metrics_node *nodes = gi_calloc(n, sizeof(*nodes));
		for (size_t i = 0; i < n; i++) {
			char name[64];
			snprintf(name, sizeof(name), "fleet-%zu@127.0.0.1", i);
			nodes[i].session = json_pack(
			    "{s:s, s:s, s:i, s:i, s:i, s:i, s:I}", "node", name, "state", "running",
			    "snapshots", 600, "failures", 0, "timeouts", 0, "interval_ms", 1000,
			    "last_snapshot_ms", (json_int_t)1764496229000LL);
			nodes[i].last = json_deep_copy(last);
			json_object_set_new(nodes[i].last, "node", json_string(name));
		}
		struct obs_manager_metrics mm;
		memset(&mm, 0, sizeof(mm));
		json_t *delivery = json_pack("{s:i, s:i, s:i, s:i}", "queued_memory", 0,
		                             "queued_disk", 0, "delivered", 1000, "retries", 0);
		/* As each snapshot comes (history_add in monitor.c). */
		double a0 = cpu_ms();
		for (size_t i = 0; i < n; i++)
			nodes[i].alerts = api_alert_rules_eval_history(api_alert_rules_builtin(),
			                                               nodes[i].last, &history);
		double alerts_us = (cpu_ms() - a0) * 1000.0 / (double)n;
		double times[15];
		size_t bytes = 0;
		for (int r = 0; r < 15; r++) {
			double t0 = cpu_ms();
			struct api_monitor_metrics_input in = {
			    nodes,          n, &mm, delivery, api_alert_rules_builtin(), 100,
			    1764496230000LL};
			char *text =
			    api_monitor_metrics_render(&in, API_METRICS_OPENMETRICS, &bytes);
			times[r] = cpu_ms() - t0;
			gi_free(text);
		}
		qsort(times, 15, sizeof(double), cmp_double);
		printf("%-6zu %14.2f %12zu %20.1f\n", n, times[7], bytes, alerts_us);
		for (size_t i = 0; i < n; i++) {
			json_decref(nodes[i].session);
			json_decref(nodes[i].last);
			json_decref(nodes[i].alerts);
		}
		gi_free(nodes);
		json_decref(delivery);
	}
	api_history_destroy(&history);
	json_decref(snaps);
	return 0;
}
