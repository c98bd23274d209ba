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
/* The longest message queue among a parsed snapshot's top processes (the
 * view is never NULL), or NAN. */
struct obs_view;
double api_stats_max_message_queue_of_view(const struct obs_view *v);

/* The compact history point of a snapshot: timestamp_ms, seq and the metrics
 * scheduler_utilisation, run_queue, processes, memory_total,
 * memory_processes, memory_binary, memory_ets, reductions_per_second,
 * max_message_queue, atoms, ets_tables (null when unknown). */
json_t *api_stats_point(json_t *snap);
/* The trend of one metric over an array of points (see above). */
json_t *api_stats_metric_trend(json_t *points, const char *metric);
/* {metric: trend} for every metric of a point. */
json_t *api_stats_trend(json_t *points);

/* ---- compact history: the same points as numbers, in a ring ----
 *
 * A point is 13 doubles (NAN: unknown) instead of a JSON object of 13
 * members: the monitor keeps 720 of them per node, and JSON is built only
 * when a route asks (api_history_json). Not thread-safe: the owner locks. */
#define API_POINT_METRICS 11
struct api_point {
	double timestamp_ms, seq;
	double metrics[API_POINT_METRICS]; /* in api_stats_metric_name order */
};
/* The name of metric i (< API_POINT_METRICS), and the index of a name or -1. */
const char *api_stats_metric_name(size_t i);
int api_stats_metric_index(const char *metric);
/* Fills *out from a snapshot (borrowed); every member NAN when it has none. */
void api_stats_point_read(json_t *snap, struct api_point *out);
/* The same from a snapshot already parsed (NULL: one that could not be):
 * a caller that reads several things of one snapshot parses it once. */
void api_stats_point_of_view(const struct obs_view *v, struct api_point *out);
/* The JSON form of a point (api_stats_point's), a new reference. */
json_t *api_stats_point_json(const struct api_point *p);

struct api_history {
	struct api_point *ring; /* `cap` slots, the oldest at `start` */
	size_t cap, start, len;
};
/* An empty history of at most `cap` (> 0) points; api_history_destroy frees. */
void api_history_init(struct api_history *h, size_t cap);
void api_history_destroy(struct api_history *h);
/* Appends a copy of *p, dropping the oldest point when full. */
void api_history_add(struct api_history *h, const struct api_point *p);
/* The i-th point, 0 the oldest (i < len). */
const struct api_point *api_history_at(const struct api_history *h, size_t i);
/* A history holding the JSON points' values (an array of api_stats_point
 * objects, borrowed), for callers that have JSON; destroy it after. */
void api_history_from_json(json_t *points, struct api_history *out);
/* The newest `limit` points (0: all) as a JSON array, or NULL when empty. */
json_t *api_history_json(const struct api_history *h, size_t limit);

/* The trend of one metric (see the file comment) as numbers. */
struct api_trend {
	size_t points;
	double first, last, min, max, mean, slope_per_minute, change_pct;
	const char *direction; /* rising, falling, stable, insufficient_data */
};
/* The trend of metric `metric` (an index) over the newest `limit` points
 * (0: all). */
void api_history_metric_trend(const struct api_history *h, size_t limit, int metric,
                              struct api_trend *out);
/* {metric: trend} over the newest `limit` points (api_stats_trend's form). */
json_t *api_history_trend(const struct api_history *h, size_t limit);
/* [{rule, severity, metric, value, threshold, message}] of the built-in
 * rules (api/alert_rules.h) for the latest snapshot and the points (may be
 * NULL). */
json_t *api_stats_alerts(json_t *snap, json_t *points);
/* Modules ranked by the reductions of the top processes attributed to them:
 * [{module, reductions, cpu_share, memory_bytes, processes}]. */
json_t *api_stats_hot_modules(json_t *snap);
/* The same from a parsed snapshot (NULL: none, an empty array). */
json_t *api_stats_hot_modules_of_view(const struct obs_view *v);
/* Appends the JSON text of api_stats_hot_modules_of_view(v) to `b`, the
 * same bytes gi_json_append writes of it, without building it (the live
 * feed's per-snapshot path). 0, or GI_ETOOBIG (GI_EINVAL for a sum that
 * is not finite, as gi_json_append) with `b` as it was. */
struct gi_buf;
int api_stats_hot_modules_append(struct gi_buf *b, const struct obs_view *v);

/* Sorts a JSON array in place with a qsort comparison over (json_t *const *). */
void api_stats_sort(json_t *arr, int (*cmp)(const void *, const void *));
/* Descending by the "count" member. */
int api_stats_cmp_count_desc(const void *a, const void *b);

#endif
