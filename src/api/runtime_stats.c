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
#include "base/json_read.h"
#include "base/json_text.h"
#include "observe/snapshot_view.h"

double api_stats_num(json_t *o, const char *a, const char *b)
{
	return b ? gi_json_num(gi_json_get(o, a), b) : gi_json_num(o, a);
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

double api_stats_max_message_queue_of_view(const struct obs_view *v)
{
	double best = NAN;
	for (size_t i = 0; i < v->top_message_queue.len; i++) {
		double q = v->top_message_queue.items[i].message_queue_len;
		if (!isnan(q) && (isnan(best) || q > best))
			best = q;
	}
	return best;
}

static const char *const METRICS[] = {
    "scheduler_utilisation", "run_queue",     "processes",  "memory_total",
    "memory_processes",      "memory_binary", "memory_ets", "reductions_per_second",
    "max_message_queue",     "atoms",         "ets_tables", NULL,
};

const char *api_stats_metric_name(size_t i)
{
	return i < API_POINT_METRICS ? METRICS[i] : NULL;
}

int api_stats_metric_index(const char *metric)
{
	for (int i = 0; metric && METRICS[i]; i++)
		if (strcmp(METRICS[i], metric) == 0)
			return i;
	return -1;
}

void api_stats_point_of_view(const struct obs_view *v, struct api_point *out)
{
	out->timestamp_ms = out->seq = NAN;
	for (size_t i = 0; i < API_POINT_METRICS; i++)
		out->metrics[i] = NAN;
	if (v) {
		double values[API_POINT_METRICS] = {
		    v->utilisation_total,
		    v->run_queue_total,
		    v->processes_count,
		    v->memory.total - obs_view_observer_memory(v),
		    v->memory.processes - obs_view_observer_memory(v),
		    v->memory.binary,
		    v->memory.ets,
		    v->reductions_per_second,
		    api_stats_max_message_queue_of_view(v),
		    v->atoms_count,
		    v->ets_count,
		};
		out->timestamp_ms = v->timestamp_ms;
		out->seq = v->seq;
		memcpy(out->metrics, values, sizeof(values));
	}
}

void api_stats_point_read(json_t *snap, struct api_point *out)
{
	struct obs_view v;
	bool have = obs_view_parse(snap, &v) == 0;
	api_stats_point_of_view(have ? &v : NULL, out);
	obs_view_destroy(&v);
}

json_t *api_stats_point_json(const struct api_point *p)
{
	json_t *o = json_object();
	if (isnan(p->timestamp_ms) && isnan(p->seq))
		return o; /* a snapshot that could not be read: as api_stats_point did */
	json_object_set_new(o, "timestamp_ms", api_stats_count_json(p->timestamp_ms));
	json_object_set_new(o, "seq", api_stats_count_json(p->seq));
	for (size_t i = 0; i < API_POINT_METRICS; i++)
		json_object_set_new(o, METRICS[i], api_stats_num_json(p->metrics[i]));
	return o;
}

/* The compact history point of a snapshot. */
json_t *api_stats_point(json_t *snap)
{
	struct api_point p;
	api_stats_point_read(snap, &p);
	return api_stats_point_json(&p);
}

void api_history_init(struct api_history *h, size_t cap)
{
	h->cap = cap ? cap : 1;
	h->ring = gi_calloc(h->cap, sizeof(*h->ring));
	h->start = h->len = 0;
}

void api_history_destroy(struct api_history *h)
{
	gi_free(h->ring);
	memset(h, 0, sizeof(*h));
}

void api_history_add(struct api_history *h, const struct api_point *p)
{
	if (h->len < h->cap) {
		h->ring[(h->start + h->len) % h->cap] = *p;
		h->len++;
		return;
	}
	h->ring[h->start] = *p;
	h->start = (h->start + 1) % h->cap;
}

const struct api_point *api_history_at(const struct api_history *h, size_t i)
{
	return &h->ring[(h->start + i) % h->cap];
}

void api_history_from_json(json_t *points, struct api_history *out)
{
	size_t n = json_array_size(points), i;
	json_t *p;
	api_history_init(out, n);
	json_array_foreach(points, i, p)
	{
		struct api_point pt;
		pt.timestamp_ms = api_stats_num(p, "timestamp_ms", NULL);
		pt.seq = api_stats_num(p, "seq", NULL);
		for (size_t k = 0; k < API_POINT_METRICS; k++)
			pt.metrics[k] = api_stats_num(p, METRICS[k], NULL);
		api_history_add(out, &pt);
	}
}

static size_t history_from(const struct api_history *h, size_t limit)
{
	return limit > 0 && limit < h->len ? h->len - limit : 0;
}

json_t *api_history_json(const struct api_history *h, size_t limit)
{
	if (h->len == 0)
		return NULL;
	json_t *out = json_array();
	for (size_t i = history_from(h, limit); i < h->len; i++)
		json_array_append_new(out, api_stats_point_json(api_history_at(h, i)));
	return out;
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
	struct obs_view v;
	bool have = obs_view_parse(snap, &v) == 0;
	json_t *arr = api_stats_hot_modules_of_view(have ? &v : NULL);
	obs_view_destroy(&v);
	return arr;
}

/* A process of the top list by reductions with its module's display name,
 * for grouping them by module in one sort. */
struct hot_entry {
	const char *module;
	size_t index; /* in the top list */
};

static int cmp_entry_module(const void *a, const void *b)
{
	const struct hot_entry *x = a, *y = b;
	int c = strcmp(x->module, y->module);
	return c ? c : x->index < y->index ? -1 : x->index > y->index;
}

/* One entry of the hot modules list; `module` is borrowed from the view
 * ("(unknown)" for processes without one), `first` is where the module
 * first appears in the top list (the tie-break: equal reductions keep that
 * order). */
struct hot_module {
	const char *module;
	double reductions, cpu_share, memory_bytes; /* sums; unknown values add nothing */
	size_t processes;
	size_t first;
};

/* Descending by reductions; ties in the order the modules first appear
 * (what the JSON object's insertion order gave before). */
static int cmp_hot_desc(const void *a, const void *b)
{
	const struct hot_module *x = a, *y = b;
	if (x->reductions != y->reductions)
		return x->reductions < y->reductions ? 1 : -1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* The hot modules of `v`, ranked, into `out` (room for
 * v->top_reductions.len entries); returns how many. */
static size_t hot_modules_rank(const struct obs_view *v, struct hot_module *out)
{
	size_t n = v ? v->top_reductions.len : 0, count = 0;
	if (n == 0)
		return 0;
	struct hot_entry local[64];
	struct hot_entry *e = n <= 64 ? local : gi_malloc(n * sizeof(*e));
	for (size_t i = 0; i < n; i++) {
		const char *mod = v->top_reductions.items[i].module;
		e[i].module = mod ? mod : "(unknown)";
		e[i].index = i;
	}
	/* by module, each module's processes in list order: sums add up in the
	 * order they always did */
	qsort(e, n, sizeof(*e), cmp_entry_module);
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || strcmp(e[i].module, e[i - 1].module) != 0)
			out[count++] = (struct hot_module){e[i].module, 0, 0, 0, 0, e[i].index};
		struct hot_module *h = &out[count - 1];
		const struct obs_view_process *p = &v->top_reductions.items[e[i].index];
		if (!isnan(p->reductions))
			h->reductions += p->reductions;
		if (!isnan(p->cpu_share))
			h->cpu_share += p->cpu_share;
		if (!isnan(p->memory_bytes))
			h->memory_bytes += p->memory_bytes;
		h->processes++;
	}
	if (e != local)
		gi_free(e);
	qsort(out, count, sizeof(*out), cmp_hot_desc);
	return count;
}

/* The ranked modules of `v` into a gi_malloc'd array (or `local` when they
 * fit its `cap`); returns how many. */
static size_t hot_ranked(const struct obs_view *v, struct hot_module *local, size_t cap,
                         struct hot_module **out)
{
	size_t n = v ? v->top_reductions.len : 0;
	*out = n <= cap ? local : gi_malloc(n * sizeof(**out));
	return hot_modules_rank(v, *out);
}

json_t *api_stats_hot_modules_of_view(const struct obs_view *v)
{
	struct hot_module local[32], *mods;
	size_t n = hot_ranked(v, local, 32, &mods);
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(
		    arr,
		    json_pack("{s:s, s:f, s:f, s:f, s:I}", "module", mods[i].module, "reductions",
		              mods[i].reductions, "cpu_share", mods[i].cpu_share, "memory_bytes",
		              mods[i].memory_bytes, "processes", (json_int_t)mods[i].processes));
	if (mods != local)
		gi_free(mods);
	return arr;
}

int api_stats_hot_modules_append(struct gi_buf *b, const struct obs_view *v)
{
	struct hot_module local[32], *mods;
	size_t n = hot_ranked(v, local, 32, &mods);
	size_t was = b->len;
	int rc = GI_BUF_LIT(b, "[");
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const struct hot_module *h = &mods[i];
		rc = gi_buf_append(b, i ? ",{\"module\":" : "{\"module\":", i ? 11 : 10);
		if (rc == 0)
			rc = gi_json_append_string(b, h->module, strlen(h->module));
		if (rc == 0)
			rc = GI_BUF_LIT(b, ",\"reductions\":");
		if (rc == 0)
			rc = gi_json_append_real(b, h->reductions);
		if (rc == 0)
			rc = GI_BUF_LIT(b, ",\"cpu_share\":");
		if (rc == 0)
			rc = gi_json_append_real(b, h->cpu_share);
		if (rc == 0)
			rc = GI_BUF_LIT(b, ",\"memory_bytes\":");
		if (rc == 0)
			rc = gi_json_append_real(b, h->memory_bytes);
		if (rc == 0)
			rc = GI_BUF_LIT(b, ",\"processes\":");
		if (rc == 0)
			rc = gi_json_append_integer(b, (long long)h->processes);
		if (rc == 0)
			rc = GI_BUF_LIT(b, "}");
	}
	if (rc == 0)
		rc = GI_BUF_LIT(b, "]");
	if (mods != local)
		gi_free(mods);
	if (rc != 0 && b->data) {
		b->len = was; /* nothing half written */
		b->data[was] = '\0';
	}
	return rc;
}

/* The trend of one metric over the newest `limit` points (see the file
 * comment); NAN for what is not known. */
void api_history_metric_trend(const struct api_history *h, size_t limit, int metric,
                              struct api_trend *out)
{
	double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, mn = INFINITY, mx = -INFINITY;
	double first = NAN, last = NAN, t0 = NAN, t1 = NAN;
	memset(out, 0, sizeof(*out));
	for (size_t i = history_from(h, limit);
	     metric >= 0 && metric < API_POINT_METRICS && i < h->len; i++) {
		const struct api_point *p = api_history_at(h, i);
		double y = p->metrics[metric];
		double t = p->timestamp_ms;
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
	out->points = (size_t)n;
	out->last = last;
	out->first = out->min = out->max = out->mean = NAN;
	out->slope_per_minute = out->change_pct = NAN;
	if (n < 2 || t1 <= t0) {
		out->direction = "insufficient_data";
		return;
	}
	double mean = sy / n;
	double denom = n * sxx - sx * sx;
	double slope = denom != 0 ? (n * sxy - sx * sy) / denom : 0;
	double span_min = (t1 - t0) / 60000.0;
	double base = fabs(mean) > 1e-9 ? fabs(mean) : 1e-9;
	double change_pct = slope * span_min / base * 100.0;
	if (fabs(mean) <= 1e-9 && fabs(slope) <= 1e-12)
		change_pct = 0;
	out->direction = change_pct > API_TREND_THRESHOLD_PCT    ? "rising"
	                 : change_pct < -API_TREND_THRESHOLD_PCT ? "falling"
	                                                         : "stable";
	out->first = first;
	out->min = mn;
	out->max = mx;
	out->mean = mean;
	out->slope_per_minute = slope;
	out->change_pct = change_pct;
}

static json_t *trend_json(const struct api_trend *t)
{
	json_t *o = json_object();
	json_object_set_new(o, "points", json_integer((json_int_t)t->points));
	if (strcmp(t->direction, "insufficient_data") == 0) {
		json_object_set_new(o, "direction", json_string(t->direction));
		json_object_set_new(o, "last", api_stats_num_json(t->last));
		return o;
	}
	json_object_set_new(o, "first", json_real(t->first));
	json_object_set_new(o, "last", json_real(t->last));
	json_object_set_new(o, "min", json_real(t->min));
	json_object_set_new(o, "max", json_real(t->max));
	json_object_set_new(o, "mean", json_real(t->mean));
	json_object_set_new(o, "slope_per_minute", json_real(t->slope_per_minute));
	json_object_set_new(o, "change_pct", json_real(t->change_pct));
	json_object_set_new(o, "direction", json_string(t->direction));
	return o;
}

json_t *api_history_trend(const struct api_history *h, size_t limit)
{
	json_t *metrics = json_object();
	for (int i = 0; METRICS[i]; i++) {
		struct api_trend t;
		api_history_metric_trend(h, limit, i, &t);
		json_object_set_new(metrics, METRICS[i], trend_json(&t));
	}
	return metrics;
}

/* The trend of one metric over `points` (see the file comment). */
json_t *api_stats_metric_trend(json_t *points, const char *metric)
{
	struct api_history h;
	struct api_trend t;
	api_history_from_json(points, &h);
	api_history_metric_trend(&h, 0, api_stats_metric_index(metric), &t);
	api_history_destroy(&h);
	return trend_json(&t);
}

json_t *api_stats_trend(json_t *points)
{
	struct api_history h;
	api_history_from_json(points, &h);
	json_t *metrics = api_history_trend(&h, 0);
	api_history_destroy(&h);
	return metrics;
}

/* The built-in rules of alert_rules.c: one definition for both. */
json_t *api_stats_alerts(json_t *snap, json_t *points)
{
	return api_alert_rules_eval(api_alert_rules_builtin(), snap, points);
}
