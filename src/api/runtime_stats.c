/*
 * runtime_stats.c - pure computations over snapshots for the monitor's
 * runtime routes (see runtime_stats.h): history points, trends, alerts and
 * hot modules. No state, no I/O.
 */
#include "api/runtime_stats.h"

#include "api/alert_rules.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "observe/snapshot_view.h"

double api_stats_num(json_t *o, const char *a, const char *b)
{
	json_t *v = json_object_get(o, a);
	if (b)
		v = json_object_get(v, b);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

json_t *api_stats_num_json(double x)
{
	return isnan(x) ? json_null() : json_real(x);
}

json_t *api_stats_count_json(double x)
{
	if (isfinite(x) && x == floor(x) && fabs(x) < 9007199254740992.0)
		return json_integer((json_int_t)x);
	return api_stats_num_json(x);
}

static double max_message_queue(const struct obs_view *v)
{
	double best = NAN;
	for (size_t i = 0; i < v->top_message_queue.len; i++) {
		double q = v->top_message_queue.items[i].message_queue_len;
		if (!isnan(q) && (isnan(best) || q > best))
			best = q;
	}
	return best;
}

double api_stats_max_message_queue(json_t *snap)
{
	struct obs_view v;
	double best = obs_view_parse(snap, &v) == 0 ? max_message_queue(&v) : NAN;
	obs_view_destroy(&v);
	return best;
}

static const char *const METRICS[] = {
    "scheduler_utilisation", "run_queue",     "processes",  "memory_total",
    "memory_processes",      "memory_binary", "memory_ets", "reductions_per_second",
    "max_message_queue",     "atoms",         "ets_tables", NULL,
};

/* The compact history point of a snapshot. */
json_t *api_stats_point(json_t *snap)
{
	struct obs_view v;
	json_t *p = json_object();
	if (obs_view_parse(snap, &v) != 0) {
		obs_view_destroy(&v);
		return p;
	}
	json_object_set_new(p, "timestamp_ms", api_stats_count_json(v.timestamp_ms));
	json_object_set_new(p, "seq", api_stats_count_json(v.seq));
	json_object_set_new(p, "scheduler_utilisation", api_stats_num_json(v.utilisation_total));
	json_object_set_new(p, "run_queue", api_stats_num_json(v.run_queue_total));
	json_object_set_new(p, "processes", api_stats_num_json(v.processes_count));
	json_object_set_new(p, "memory_total", api_stats_num_json(v.memory.total));
	json_object_set_new(p, "memory_processes", api_stats_num_json(v.memory.processes));
	json_object_set_new(p, "memory_binary", api_stats_num_json(v.memory.binary));
	json_object_set_new(p, "memory_ets", api_stats_num_json(v.memory.ets));
	json_object_set_new(p, "reductions_per_second",
	                    api_stats_num_json(v.reductions_per_second));
	json_object_set_new(p, "max_message_queue", api_stats_num_json(max_message_queue(&v)));
	json_object_set_new(p, "atoms", api_stats_num_json(v.atoms_count));
	json_object_set_new(p, "ets_tables", api_stats_num_json(v.ets_count));
	obs_view_destroy(&v);
	return p;
}

static int cmp_reductions_desc(const void *a, const void *b)
{
	double x = api_stats_num(*(json_t *const *)a, "reductions", NULL);
	double y = api_stats_num(*(json_t *const *)b, "reductions", NULL);
	return x < y ? 1 : x > y ? -1 : 0;
}

int api_stats_cmp_count_desc(const void *a, const void *b)
{
	double x = api_stats_num(*(json_t *const *)a, "count", NULL);
	double y = api_stats_num(*(json_t *const *)b, "count", NULL);
	return x < y ? 1 : x > y ? -1 : 0;
}

/* Sorts a JSON array in place with `cmp` over its elements. */
void api_stats_sort(json_t *arr, int (*cmp)(const void *, const void *))
{
	size_t n = json_array_size(arr);
	json_t **v = gi_calloc(n ? n : 1, sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(arr, i));
	qsort(v, n, sizeof(*v), cmp);
	json_array_clear(arr);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, v[i]);
	gi_free(v);
}

/* Modules ranked by the reductions of the processes attributed to them. */
json_t *api_stats_hot_modules(json_t *snap)
{
	json_t *by_module = json_object();
	struct obs_view v;
	if (obs_view_parse(snap, &v) != 0)
		v.top_reductions.len = 0;
	for (size_t i = 0; i < v.top_reductions.len; i++) {
		const struct obs_view_process *p = &v.top_reductions.items[i];
		const char *mod = p->module;
		if (!mod)
			mod = "(unknown)";
		json_t *e = json_object_get(by_module, mod);
		if (!e) {
			e = json_pack("{s:s, s:f, s:f, s:f, s:i}", "module", mod, "reductions", 0.0,
			              "cpu_share", 0.0, "memory_bytes", 0.0, "processes", 0);
			json_object_set_new(by_module, mod, e);
		}
		const char *keys[] = {"reductions", "cpu_share", "memory_bytes"};
		const double values[] = {p->reductions, p->cpu_share, p->memory_bytes};
		for (int k = 0; k < 3; k++) {
			double add = values[k];
			if (!isnan(add))
				json_object_set_new(
				    e, keys[k], json_real(api_stats_num(e, keys[k], NULL) + add));
		}
		json_object_set_new(
		    e, "processes",
		    json_integer(json_integer_value(json_object_get(e, "processes")) + 1));
	}
	json_t *arr = json_array();
	obs_view_destroy(&v);
	const char *k;
	json_t *e;
	json_object_foreach(by_module, k, e)
	{
		json_array_append(arr, e);
	}
	json_decref(by_module);
	api_stats_sort(arr, cmp_reductions_desc);
	return arr;
}

/* The trend of one metric over `points` (see the file comment). */
json_t *api_stats_metric_trend(json_t *points, const char *metric)
{
	double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, mn = INFINITY, mx = -INFINITY;
	double first = NAN, last = NAN, t0 = NAN, t1 = NAN;
	size_t i;
	json_t *p;
	json_array_foreach(points, i, p)
	{
		double y = api_stats_num(p, metric, NULL);
		double t = api_stats_num(p, "timestamp_ms", NULL);
		if (isnan(y) || isnan(t))
			continue;
		if (isnan(t0))
			t0 = t;
		double x = (t - t0) / 60000.0; /* minutes */
		if (isnan(first))
			first = y;
		last = y;
		t1 = t;
		n++;
		sx += x;
		sy += y;
		sxx += x * x;
		sxy += x * y;
		mn = y < mn ? y : mn;
		mx = y > mx ? y : mx;
	}
	json_t *o = json_object();
	json_object_set_new(o, "points", json_integer((json_int_t)n));
	if (n < 2 || t1 <= t0) {
		json_object_set_new(o, "direction", json_string("insufficient_data"));
		json_object_set_new(o, "last", api_stats_num_json(last));
		return o;
	}
	double mean = sy / n;
	double denom = n * sxx - sx * sx;
	double slope = denom != 0 ? (n * sxy - sx * sy) / denom : 0;
	double span_min = (t1 - t0) / 60000.0;
	double base = fabs(mean) > 1e-9 ? fabs(mean) : 1e-9;
	double change_pct = slope * span_min / base * 100.0;
	if (fabs(mean) <= 1e-9 && fabs(slope) <= 1e-12)
		change_pct = 0;
	const char *dir = change_pct > API_TREND_THRESHOLD_PCT    ? "rising"
	                  : change_pct < -API_TREND_THRESHOLD_PCT ? "falling"
	                                                          : "stable";
	json_object_set_new(o, "first", json_real(first));
	json_object_set_new(o, "last", json_real(last));
	json_object_set_new(o, "min", json_real(mn));
	json_object_set_new(o, "max", json_real(mx));
	json_object_set_new(o, "mean", json_real(mean));
	json_object_set_new(o, "slope_per_minute", json_real(slope));
	json_object_set_new(o, "change_pct", json_real(change_pct));
	json_object_set_new(o, "direction", json_string(dir));
	return o;
}

json_t *api_stats_trend(json_t *points)
{
	json_t *metrics = json_object();
	for (size_t i = 0; METRICS[i]; i++)
		json_object_set_new(metrics, METRICS[i],
		                    api_stats_metric_trend(points, METRICS[i]));
	return metrics;
}

/* The built-in rules of alert_rules.c: one definition for both. */
json_t *api_stats_alerts(json_t *snap, json_t *points)
{
	return api_alert_rules_eval(api_alert_rules_builtin(), snap, points);
}
