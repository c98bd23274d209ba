/*
 * runtime_stats.h - what the monitor computes from snapshots
 * (docs/SNAPSHOT.md): compact history points, trends, alerts and hot
 * modules. Pure functions of their arguments (borrowed; results are new
 * references the caller decrefs): thread-safe on unshared inputs.
 *
 * Trend: per metric, a least-squares line over the points (time in minutes);
 * change_pct is the line's rise over the window relative to the mean; a
 * metric is "rising" above +API_TREND_THRESHOLD_PCT, "falling" below its
 * negative, else "stable", and "insufficient_data" with fewer than two
 * points. Alerts: fixed thresholds on the latest snapshot plus growth rules
 * on the trend; the table is in docs/API.md (GET /api/runtime/alerts).
 */
#ifndef GIULIA_API_RUNTIME_STATS_H
#define GIULIA_API_RUNTIME_STATS_H

#include <jansson.h>

#define API_TREND_THRESHOLD_PCT 10.0

/* The number at o.a (or o.a.b when b is not NULL), or NAN. */
double api_stats_num(json_t *o, const char *a, const char *b);
/* A JSON real, or null for NAN. */
json_t *api_stats_num_json(double x);
/* Like api_stats_num_json, but an integral value becomes a JSON integer
 * (timestamps, sequence numbers, counts). */
json_t *api_stats_count_json(double x);
/* The longest message queue among the snapshot's top processes, or NAN. */
double api_stats_max_message_queue(json_t *snap);

/* The compact history point of a snapshot: timestamp_ms, seq and the metrics
 * scheduler_utilisation, run_queue, processes, memory_total,
 * memory_processes, memory_binary, memory_ets, reductions_per_second,
 * max_message_queue, atoms, ets_tables (null when unknown). */
json_t *api_stats_point(json_t *snap);
/* The trend of one metric over an array of points (see above). */
json_t *api_stats_metric_trend(json_t *points, const char *metric);
/* {metric: trend} for every metric of a point. */
json_t *api_stats_trend(json_t *points);
/* [{rule, severity, metric, value, threshold, message}] of the built-in
 * rules (api/alert_rules.h) for the latest snapshot and the points (may be
 * NULL). */
json_t *api_stats_alerts(json_t *snap, json_t *points);
/* Modules ranked by the reductions of the top processes attributed to them:
 * [{module, reductions, cpu_share, memory_bytes, processes}]. */
json_t *api_stats_hot_modules(json_t *snap);

/* Sorts a JSON array in place with a qsort comparison over (json_t *const *). */
void api_stats_sort(json_t *arr, int (*cmp)(const void *, const void *));
/* Descending by the "count" member. */
int api_stats_cmp_count_desc(const void *a, const void *b);

#endif
