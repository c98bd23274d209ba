/*
 * profile_view.c - the typed view of a profile (see profile_view.h). The
 * only place outside the profile builder (fuse.c) that knows the profile's
 * key strings.
 *
 * Scalar fields are read through member tables (key, type, offset); lists
 * and nested sections through one function each. A profile is parsed once
 * per report, rule run or comparison, so a lookup per field is cheap enough.
 */
#include "fuse/profile_view.h"

#include <math.h>
#include <string.h>

#include "base/error.h"
#include "base/json_read.h"

enum member_type { MEMBER_STRING, MEMBER_NUMBER, MEMBER_TRUE, MEMBER_TRI };

struct member {
	const char *key;
	enum member_type type;
	size_t offset;
};

#define MEMBER(type, field, kind)                   \
	{                                           \
#field, kind, offsetof(type, field) \
	}
/* A member whose C name differs from its key ("class" is a keyword of
 * another language; a typed name reads better). */
#define MEMBER_AS(type, field, key, kind)        \
	{                                        \
		key, kind, offsetof(type, field) \
	}
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static void members_read(const json_t *o, const struct member *table, size_t n, void *out)
{
	char *base = out;
	for (size_t i = 0; i < n; i++) {
		char *field = base + table[i].offset;
		const json_t *val = gi_json_get(o, table[i].key);
		switch (table[i].type) {
		case MEMBER_STRING:
			*(const char **)(void *)field = json_string_value(val);
			break;
		case MEMBER_NUMBER:
			*(double *)(void *)field =
			    json_is_number(val) ? json_number_value(val) : NAN;
			break;
		case MEMBER_TRUE:
			*(bool *)(void *)field = json_is_true(val);
			break;
		case MEMBER_TRI:
			*(enum fuse_tri *)(void *)field = json_is_true(val)    ? FUSE_TRI_TRUE
			                                  : json_is_false(val) ? FUSE_TRI_FALSE
			                                                       : FUSE_TRI_UNKNOWN;
			break;
		}
	}
}

const char *fuse_view_tri_text(enum fuse_tri t)
{
	return t == FUSE_TRI_TRUE ? "yes" : t == FUSE_TRI_FALSE ? "no" : "-";
}

/* How many entries of `a` are read under `cap`; the rest count as truncated. */
static size_t capped(struct fuse_view *v, const json_t *a, size_t cap)
{
	size_t n = json_is_array(a) ? json_array_size(a) : 0;
	if (n > cap) {
		v->truncated += n - cap;
		n = cap;
	}
	return n;
}

static void names_read(struct fuse_view *v, const json_t *a, struct fuse_view_names *out)
{
	size_t n = capped(v, a, FUSE_VIEW_MAX_NAMES);
	out->items = n ? gi_arena_calloc(&v->arena, n, sizeof(*out->items)) : NULL;
	out->len = 0;
	for (size_t i = 0; i < n; i++) {
		const char *s = json_string_value(json_array_get(a, i));
		if (s)
			out->items[out->len++] = s;
	}
}

/* Reads the objects of list `a` (capped at `cap`) into a new array of
 * `size`-byte entries with `table`, calling `more` (may be NULL) on each
 * entry for what the table cannot say; entries that are not objects are
 * left out. Returns the array (NULL when empty), *len its length. */
static void *list_read(struct fuse_view *v, const json_t *a, size_t cap, size_t size,
                       const struct member *table, size_t ntable,
                       void (*more)(struct fuse_view *v, const json_t *o, void *entry), size_t *len)
{
	size_t n = capped(v, a, cap);
	char *out = n ? gi_arena_calloc(&v->arena, n, size) : NULL;
	*len = 0;
	for (size_t i = 0; i < n; i++) {
		const json_t *o = json_array_get(a, i);
		if (!json_is_object(o))
			continue;
		void *entry = out + *len * size;
		members_read(o, table, ntable, entry);
		if (more)
			more(v, o, entry);
		(*len)++;
	}
	return out;
}

static void points_read(struct fuse_view *v, const json_t *a, struct fuse_view_points *out)
{
	size_t n = capped(v, a, FUSE_VIEW_MAX_SERIES);
	out->values = n ? gi_arena_calloc(&v->arena, n, sizeof(*out->values)) : NULL;
	out->len = n;
	for (size_t i = 0; i < n; i++) {
		const json_t *x = json_array_get(a, i);
		out->values[i] = json_is_number(x) ? json_number_value(x) : NAN;
	}
}

/* ---- session, metrics, series ------------------------------------------ */

static const struct member SESSION_MEMBERS[] = {
    MEMBER(struct fuse_view_session, id, MEMBER_STRING),
    MEMBER(struct fuse_view_session, node, MEMBER_STRING),
    MEMBER(struct fuse_view_session, status, MEMBER_STRING),
    MEMBER(struct fuse_view_session, reason, MEMBER_STRING),
    MEMBER(struct fuse_view_session, project, MEMBER_STRING),
    MEMBER(struct fuse_view_session, otp_release, MEMBER_STRING),
    MEMBER(struct fuse_view_session, started_ms, MEMBER_NUMBER),
    MEMBER(struct fuse_view_session, stopped_ms, MEMBER_NUMBER),
    MEMBER(struct fuse_view_session, duration_ms, MEMBER_NUMBER),
    MEMBER(struct fuse_view_session, interval_ms, MEMBER_NUMBER),
    MEMBER(struct fuse_view_session, snapshot_count, MEMBER_NUMBER),
    MEMBER(struct fuse_view_session, snapshots_missing, MEMBER_NUMBER),
    MEMBER(struct fuse_view_session, schedulers_online, MEMBER_NUMBER),
};

static void session_read(struct fuse_view *v, const json_t *s)
{
	struct fuse_view_session *out = &v->session;
	out->present = json_is_object(s);
	members_read(s, SESSION_MEMBERS, COUNT(SESSION_MEMBERS), out);
	const json_t *gaps = gi_json_arr(s, "gaps");
	out->ngaps = gaps ? json_array_size(gaps) : 0;
	names_read(v, gi_json_arr(s, "traced_modules"), &out->traced_modules);
}

static const struct member STAT_MEMBERS[] = {
    MEMBER(struct fuse_view_stat, peak, MEMBER_NUMBER),
    MEMBER(struct fuse_view_stat, avg, MEMBER_NUMBER),
    MEMBER(struct fuse_view_stat, first, MEMBER_NUMBER),
    MEMBER(struct fuse_view_stat, last, MEMBER_NUMBER),
    MEMBER(struct fuse_view_stat, samples, MEMBER_NUMBER),
    MEMBER(struct fuse_view_stat, growth_bytes, MEMBER_NUMBER),
    MEMBER(struct fuse_view_stat, start_quarter_avg, MEMBER_NUMBER),
    MEMBER(struct fuse_view_stat, end_quarter_avg, MEMBER_NUMBER),
    MEMBER(struct fuse_view_stat, trend_bytes, MEMBER_NUMBER),
    MEMBER(struct fuse_view_stat, trend_ratio, MEMBER_NUMBER),
    MEMBER(struct fuse_view_stat, above_schedulers_share, MEMBER_NUMBER),
    MEMBER(struct fuse_view_stat, high_share, MEMBER_NUMBER),
};

static void stat_read(const json_t *o, struct fuse_view_stat *out)
{
	out->present = json_is_object(o);
	members_read(o, STAT_MEMBERS, COUNT(STAT_MEMBERS), out);
}

static const char *const MEMORY_CATEGORY_NAMES[FUSE_MEM_CATEGORIES] = {
    "binary", "ets", "processes", "atom", "code", "system",
};

const char *fuse_view_memory_category_name(enum fuse_view_memory_category c)
{
	return c < FUSE_MEM_CATEGORIES ? MEMORY_CATEGORY_NAMES[c] : "?";
}

static void metrics_read(struct fuse_view *v, const json_t *m)
{
	struct fuse_view_metrics *out = &v->metrics;
	out->present = json_is_object(m);
	stat_read(gi_json_get(m, "memory_bytes"), &out->memory_bytes);
	stat_read(gi_json_get(m, "process_count"), &out->process_count);
	stat_read(gi_json_get(m, "reductions_per_second"), &out->reductions_per_second);
	stat_read(gi_json_get(m, "run_queue"), &out->run_queue);
	stat_read(gi_json_get(m, "scheduler_utilisation"), &out->scheduler_utilisation);
	const json_t *cats = gi_json_get(m, "memory_categories");
	for (size_t i = 0; i < FUSE_MEM_CATEGORIES; i++)
		stat_read(gi_json_get(cats, MEMORY_CATEGORY_NAMES[i]), &out->memory_categories[i]);
	out->reductions_total = gi_json_num(m, "reductions_total");
}

static void series_read(struct fuse_view *v, const json_t *s)
{
	struct fuse_view_series *out = &v->series;
	out->present = json_is_object(s);
	points_read(v, gi_json_arr(s, "t_s"), &out->t_s);
	points_read(v, gi_json_arr(s, "run_queue"), &out->run_queue);
	points_read(v, gi_json_arr(s, "scheduler_utilisation"), &out->scheduler_utilisation);
	points_read(v, gi_json_arr(s, "memory_bytes"), &out->memory_bytes);
	points_read(v, gi_json_arr(s, "reductions_per_second"), &out->reductions_per_second);
	points_read(v, gi_json_arr(s, "process_count"), &out->process_count);
}

static const struct member EXPLAINED_MEMBERS[] = {
    MEMBER(struct fuse_view_explained, share, MEMBER_NUMBER),
    MEMBER(struct fuse_view_explained, low_below, MEMBER_NUMBER),
    MEMBER(struct fuse_view_explained, basis, MEMBER_STRING),
    MEMBER(struct fuse_view_explained, note, MEMBER_STRING),
    MEMBER(struct fuse_view_explained, low, MEMBER_TRUE),
};

/* ---- hot modules and functions ------------------------------------------ */

static const struct member MODULE_GRAPH_MEMBERS[] = {
    MEMBER(struct fuse_view_module_graph, in_graph, MEMBER_TRUE),
    MEMBER(struct fuse_view_module_graph, external, MEMBER_TRUE),
    MEMBER(struct fuse_view_module_graph, ca, MEMBER_NUMBER),
    MEMBER(struct fuse_view_module_graph, ce, MEMBER_NUMBER),
    MEMBER(struct fuse_view_module_graph, in_degree, MEMBER_NUMBER),
    MEMBER(struct fuse_view_module_graph, out_degree, MEMBER_NUMBER),
    MEMBER(struct fuse_view_module_graph, complexity, MEMBER_NUMBER),
    MEMBER(struct fuse_view_module_graph, complexity_max, MEMBER_NUMBER),
    MEMBER(struct fuse_view_module_graph, instability, MEMBER_NUMBER),
    MEMBER(struct fuse_view_module_graph, centrality, MEMBER_NUMBER),
    MEMBER(struct fuse_view_module_graph, heat, MEMBER_NUMBER),
    MEMBER(struct fuse_view_module_graph, change_risk, MEMBER_NUMBER),
    MEMBER(struct fuse_view_module_graph, hub, MEMBER_TRI),
    MEMBER(struct fuse_view_module_graph, zone, MEMBER_STRING),
    MEMBER(struct fuse_view_module_graph, file, MEMBER_STRING),
};

static const struct member HOTTEST_MEMBERS[] = {
    MEMBER(struct fuse_view_hottest, name, MEMBER_STRING),
    MEMBER(struct fuse_view_hottest, by, MEMBER_STRING),
    MEMBER(struct fuse_view_hottest, arity, MEMBER_NUMBER),
    MEMBER(struct fuse_view_hottest, reductions_share, MEMBER_NUMBER),
    MEMBER(struct fuse_view_hottest, samples, MEMBER_NUMBER),
    MEMBER(struct fuse_view_hottest, calls, MEMBER_NUMBER),
    MEMBER(struct fuse_view_hottest, calls_per_second, MEMBER_NUMBER),
};

static const struct member MODULE_MEMBERS[] = {
    MEMBER(struct fuse_view_module, module, MEMBER_STRING),
    MEMBER(struct fuse_view_module, basis, MEMBER_STRING),
    MEMBER(struct fuse_view_module, reductions, MEMBER_NUMBER),
    MEMBER(struct fuse_view_module, reductions_share, MEMBER_NUMBER),
    MEMBER(struct fuse_view_module, samples, MEMBER_NUMBER),
    MEMBER(struct fuse_view_module, memory_bytes, MEMBER_NUMBER),
    MEMBER(struct fuse_view_module, processes, MEMBER_NUMBER),
    MEMBER(struct fuse_view_module, sample_count, MEMBER_NUMBER),
    MEMBER(struct fuse_view_module, project, MEMBER_TRUE),
    MEMBER(struct fuse_view_module, traced, MEMBER_TRUE),
};

static void module_more(struct fuse_view *v, const json_t *o, void *entry)
{
	struct fuse_view_module *m = entry;
	const json_t *g = gi_json_get(o, "graph");
	m->graph.present = json_is_object(g);
	members_read(g, MODULE_GRAPH_MEMBERS, COUNT(MODULE_GRAPH_MEMBERS), &m->graph);
	m->hottest = list_read(v, gi_json_arr(o, "hottest_functions"), FUSE_VIEW_MAX_SUBLIST,
	                       sizeof(*m->hottest), HOTTEST_MEMBERS, COUNT(HOTTEST_MEMBERS), NULL,
	                       &m->nhottest);
}

static struct fuse_view_module *modules_read(struct fuse_view *v, const json_t *a, size_t *len)
{
	return list_read(v, a, FUSE_VIEW_MAX_LIST, sizeof(struct fuse_view_module), MODULE_MEMBERS,
	                 COUNT(MODULE_MEMBERS), module_more, len);
}

static const struct member FUNCTION_MEMBERS[] = {
    MEMBER(struct fuse_view_function, module, MEMBER_STRING),
    MEMBER(struct fuse_view_function, function, MEMBER_STRING),
    MEMBER(struct fuse_view_function, arity, MEMBER_NUMBER),
    MEMBER(struct fuse_view_function, reductions, MEMBER_NUMBER),
    MEMBER(struct fuse_view_function, reductions_share, MEMBER_NUMBER),
    MEMBER(struct fuse_view_function, samples, MEMBER_NUMBER),
    MEMBER(struct fuse_view_function, calls, MEMBER_NUMBER),
    MEMBER(struct fuse_view_function, cyclomatic, MEMBER_NUMBER),
    MEMBER(struct fuse_view_function, project, MEMBER_TRUE),
};

/* ---- executing ----------------------------------------------------------- */

static const struct member CALL_SITE_MEMBERS[] = {
    MEMBER(struct fuse_view_call_site, function, MEMBER_STRING),
    MEMBER(struct fuse_view_call_site, samples, MEMBER_NUMBER),
    MEMBER(struct fuse_view_call_site, logger_samples, MEMBER_NUMBER),
    MEMBER(struct fuse_view_call_site, reductions, MEMBER_NUMBER),
    MEMBER(struct fuse_view_call_site, database, MEMBER_TRUE),
};

static const struct member BLOCKED_MEMBERS[] = {
    MEMBER(struct fuse_view_blocked, samples, MEMBER_NUMBER),
    MEMBER(struct fuse_view_blocked, share_of_samples, MEMBER_NUMBER),
    MEMBER(struct fuse_view_blocked, callers_avg, MEMBER_NUMBER),
    MEMBER(struct fuse_view_blocked, logger_samples, MEMBER_NUMBER),
    MEMBER(struct fuse_view_blocked, logger_share_of_samples, MEMBER_NUMBER),
    MEMBER(struct fuse_view_blocked, logger_share_of_blocked, MEMBER_NUMBER),
    MEMBER(struct fuse_view_blocked, logger_callers_avg, MEMBER_NUMBER),
    MEMBER(struct fuse_view_blocked, database_samples, MEMBER_NUMBER),
    MEMBER(struct fuse_view_blocked, database_share_of_blocked, MEMBER_NUMBER),
    MEMBER(struct fuse_view_blocked, database_share_of_samples, MEMBER_NUMBER),
};

static const struct member EXECUTING_MEMBERS[] = {
    MEMBER(struct fuse_view_executing, sampled, MEMBER_TRUE),
    MEMBER(struct fuse_view_executing, snapshots, MEMBER_NUMBER),
    MEMBER(struct fuse_view_executing, period_ms, MEMBER_NUMBER),
    MEMBER(struct fuse_view_executing, ticks, MEMBER_NUMBER),
    MEMBER(struct fuse_view_executing, samples_running, MEMBER_NUMBER),
    MEMBER(struct fuse_view_executing, samples_waiting, MEMBER_NUMBER),
    MEMBER(struct fuse_view_executing, failed_ticks, MEMBER_NUMBER),
    MEMBER(struct fuse_view_executing, dropped_samples, MEMBER_NUMBER),
    MEMBER(struct fuse_view_executing, reductions_sampled, MEMBER_NUMBER),
    MEMBER(struct fuse_view_executing, coverage, MEMBER_NUMBER),
    MEMBER(struct fuse_view_executing, project_share, MEMBER_NUMBER),
    MEMBER(struct fuse_view_executing, platform_share, MEMBER_NUMBER),
    MEMBER(struct fuse_view_executing, plumbing_share, MEMBER_NUMBER),
    MEMBER(struct fuse_view_executing, project_rule, MEMBER_STRING),
};

static void executing_read(struct fuse_view *v, const json_t *e)
{
	struct fuse_view_executing *out = &v->executing;
	out->present = json_is_object(e);
	members_read(e, EXECUTING_MEMBERS, COUNT(EXECUTING_MEMBERS), out);
	const json_t *b = gi_json_get(e, "blocked");
	struct fuse_view_blocked *bl = &out->blocked;
	bl->present = json_is_object(b);
	members_read(b, BLOCKED_MEMBERS, COUNT(BLOCKED_MEMBERS), bl);
	bl->call_sites = list_read(v, gi_json_arr(b, "call_sites"), FUSE_VIEW_MAX_SUBLIST,
	                           sizeof(*bl->call_sites), CALL_SITE_MEMBERS,
	                           COUNT(CALL_SITE_MEMBERS), NULL, &bl->ncall_sites);
	const json_t *l = gi_json_get(b, "logging");
	bl->logging.present = json_is_object(l);
	bl->logging.caller_reductions = gi_json_num(l, "caller_reductions");
	bl->logging.caller_share = gi_json_num(l, "caller_share");
	bl->logging.samples = gi_json_num(l, "samples");
	bl->logging.call_sites = list_read(
	    v, gi_json_arr(l, "call_sites"), FUSE_VIEW_MAX_SUBLIST, sizeof(*bl->logging.call_sites),
	    CALL_SITE_MEMBERS, COUNT(CALL_SITE_MEMBERS), NULL, &bl->logging.ncall_sites);
}

/* ---- trace hotspots, budget, tracing, observer, call_time ---------------- */

static const struct member HOTSPOT_MEMBERS[] = {
    MEMBER(struct fuse_view_hotspot, mfa, MEMBER_STRING),
    MEMBER(struct fuse_view_hotspot, module, MEMBER_STRING),
    MEMBER(struct fuse_view_hotspot, function, MEMBER_STRING),
    MEMBER(struct fuse_view_hotspot, kind, MEMBER_STRING),
    MEMBER(struct fuse_view_hotspot, visibility, MEMBER_STRING),
    MEMBER(struct fuse_view_hotspot, lambda_of, MEMBER_STRING),
    MEMBER_AS(struct fuse_view_hotspot, class_name, "class", MEMBER_STRING),
    MEMBER(struct fuse_view_hotspot, class_basis, MEMBER_STRING),
    MEMBER(struct fuse_view_hotspot, data_layer, MEMBER_STRING),
    MEMBER(struct fuse_view_hotspot, calls_repo, MEMBER_STRING),
    MEMBER(struct fuse_view_hotspot, estimate_note, MEMBER_STRING),
    MEMBER(struct fuse_view_hotspot, arity, MEMBER_NUMBER),
    MEMBER(struct fuse_view_hotspot, calls, MEMBER_NUMBER),
    MEMBER(struct fuse_view_hotspot, calls_share, MEMBER_NUMBER),
    MEMBER(struct fuse_view_hotspot, calls_per_second, MEMBER_NUMBER),
    MEMBER(struct fuse_view_hotspot, measured, MEMBER_NUMBER),
    MEMBER(struct fuse_view_hotspot, low, MEMBER_NUMBER),
    MEMBER(struct fuse_view_hotspot, high, MEMBER_NUMBER),
    MEMBER(struct fuse_view_hotspot, cyclomatic, MEMBER_NUMBER),
    MEMBER(struct fuse_view_hotspot, cognitive, MEMBER_NUMBER),
    MEMBER(struct fuse_view_hotspot, line, MEMBER_NUMBER),
    MEMBER(struct fuse_view_hotspot, time_us, MEMBER_NUMBER),
    MEMBER(struct fuse_view_hotspot, time_calls, MEMBER_NUMBER),
    MEMBER(struct fuse_view_hotspot, mean_us, MEMBER_NUMBER),
    MEMBER(struct fuse_view_hotspot, time_share, MEMBER_NUMBER),
    MEMBER(struct fuse_view_hotspot, fan_in, MEMBER_NUMBER),
    MEMBER(struct fuse_view_hotspot, internal, MEMBER_TRUE),
    MEMBER(struct fuse_view_hotspot, in_graph, MEMBER_TRUE),
    MEMBER(struct fuse_view_hotspot, firm, MEMBER_TRI),
    MEMBER(struct fuse_view_hotspot, module_hub, MEMBER_TRI),
};

static void hotspot_more(struct fuse_view *v, const json_t *o, void *entry)
{
	struct fuse_view_hotspot *h = entry;
	const json_t *w = gi_json_get(o, "per_window");
	h->per_window.present = json_is_object(w);
	h->per_window.windows = gi_json_num(w, "windows");
	h->per_window.min = gi_json_num(w, "min");
	h->per_window.avg = gi_json_num(w, "avg");
	h->per_window.max = gi_json_num(w, "max");
	names_read(v, gi_json_arr(o, "callers"), &h->callers);
	names_read(v, gi_json_arr(o, "callees"), &h->callees);
}

static const struct member BUDGET_MEMBERS[] = {
    MEMBER(struct fuse_view_trace_budget, overhead, MEMBER_NUMBER),
    MEMBER(struct fuse_view_trace_budget, windows, MEMBER_NUMBER),
    MEMBER(struct fuse_view_trace_budget, duty_mean, MEMBER_NUMBER),
    MEMBER(struct fuse_view_trace_budget, cost, MEMBER_NUMBER),
    MEMBER(struct fuse_view_trace_budget, exposure_mean, MEMBER_NUMBER),
    MEMBER(struct fuse_view_trace_budget, node_cost, MEMBER_NUMBER),
    MEMBER(struct fuse_view_trace_budget, traced_ms, MEMBER_NUMBER),
    MEMBER(struct fuse_view_trace_budget, paused_windows, MEMBER_NUMBER),
    MEMBER(struct fuse_view_trace_budget, calls_measured, MEMBER_NUMBER),
    MEMBER(struct fuse_view_trace_budget, calls_estimated, MEMBER_NUMBER),
    MEMBER(struct fuse_view_trace_budget, counts, MEMBER_STRING),
};

static const struct member TRACING_MEMBERS[] = {
    MEMBER(struct fuse_view_tracing, mode, MEMBER_STRING),
    MEMBER(struct fuse_view_tracing, windows, MEMBER_NUMBER),
    MEMBER(struct fuse_view_tracing, traced_ms, MEMBER_NUMBER),
};

static const struct member OBSERVER_MEMBERS[] = {
    MEMBER(struct fuse_view_observer, windows, MEMBER_NUMBER),
    MEMBER(struct fuse_view_observer, cost, MEMBER_NUMBER),
    MEMBER(struct fuse_view_observer, cost_max, MEMBER_NUMBER),
    MEMBER(struct fuse_view_observer, session, MEMBER_NUMBER),
    MEMBER(struct fuse_view_observer, counting, MEMBER_NUMBER),
    MEMBER(struct fuse_view_observer, budget, MEMBER_NUMBER),
    MEMBER(struct fuse_view_observer, over_budget_windows, MEMBER_NUMBER),
    MEMBER(struct fuse_view_observer, reductions, MEMBER_NUMBER),
    MEMBER(struct fuse_view_observer, other_observers, MEMBER_NUMBER),
    MEMBER(struct fuse_view_observer, sample_period_ms, MEMBER_NUMBER),
    MEMBER(struct fuse_view_observer, sample_period_max_ms, MEMBER_NUMBER),
    MEMBER(struct fuse_view_observer, scan_every_max, MEMBER_NUMBER),
    MEMBER(struct fuse_view_observer, scan_every_max_ms, MEMBER_NUMBER),
    MEMBER(struct fuse_view_observer, scan_thinned, MEMBER_TRUE),
    MEMBER(struct fuse_view_observer, within_budget, MEMBER_TRUE),
    MEMBER(struct fuse_view_observer, sampler_slowed, MEMBER_TRUE),
};

static const struct member CALL_TIME_MEMBERS[] = {
    MEMBER(struct fuse_view_call_time, windows, MEMBER_NUMBER),
    MEMBER(struct fuse_view_call_time, time_us, MEMBER_NUMBER),
    MEMBER(struct fuse_view_call_time, flagged_avg, MEMBER_NUMBER),
    MEMBER(struct fuse_view_call_time, flagged_max, MEMBER_NUMBER),
    MEMBER(struct fuse_view_call_time, refused_max, MEMBER_NUMBER),
    MEMBER(struct fuse_view_call_time, trace_messages, MEMBER_NUMBER),
    MEMBER(struct fuse_view_call_time, suspended, MEMBER_TRUE),
    MEMBER(struct fuse_view_call_time, isolation, MEMBER_STRING),
};

/* ---- workload and pipeline ------------------------------------------------ */

static const struct member CLASS_MEMBERS[] = {
    MEMBER(struct fuse_view_class, function, MEMBER_STRING),
    MEMBER_AS(struct fuse_view_class, class_name, "class", MEMBER_STRING),
    MEMBER(struct fuse_view_class, basis, MEMBER_STRING),
    MEMBER(struct fuse_view_class, calls, MEMBER_NUMBER),
};

static const struct member DATABASE_MEMBERS[] = {
    MEMBER(struct fuse_view_database, pipeline_helper_calls, MEMBER_NUMBER),
    MEMBER(struct fuse_view_database, repo_reads_per_window, MEMBER_NUMBER),
    MEMBER(struct fuse_view_database, repo_call_share, MEMBER_NUMBER),
    MEMBER(struct fuse_view_database, reads_in_vm_share, MEMBER_NUMBER),
    MEMBER(struct fuse_view_database, driver_call_share, MEMBER_NUMBER),
    MEMBER(struct fuse_view_database, uses_ecto_repo, MEMBER_TRUE),
    MEMBER(struct fuse_view_database, data_layer, MEMBER_TRUE),
    MEMBER(struct fuse_view_database, repo_traced, MEMBER_TRUE),
    MEMBER(struct fuse_view_database, data_layer_reason, MEMBER_STRING),
    MEMBER(struct fuse_view_database, repo, MEMBER_STRING),
    MEMBER(struct fuse_view_database, repo_share_basis, MEMBER_STRING),
    MEMBER(struct fuse_view_database, storage, MEMBER_STRING),
};

static const struct member WORKLOAD_MEMBERS[] = {
    MEMBER(struct fuse_view_workload, module, MEMBER_STRING),
    MEMBER(struct fuse_view_workload, calls, MEMBER_NUMBER),
    MEMBER(struct fuse_view_workload, calls_per_second, MEMBER_NUMBER),
    MEMBER(struct fuse_view_workload, operations, MEMBER_NUMBER),
    MEMBER(struct fuse_view_workload, operations_per_second, MEMBER_NUMBER),
    MEMBER(struct fuse_view_workload, windows, MEMBER_NUMBER),
    MEMBER(struct fuse_view_workload, reads, MEMBER_NUMBER),
    MEMBER(struct fuse_view_workload, writes, MEMBER_NUMBER),
    MEMBER(struct fuse_view_workload, pipeline, MEMBER_NUMBER),
    MEMBER(struct fuse_view_workload, other, MEMBER_NUMBER),
    MEMBER(struct fuse_view_workload, read_write_ratio, MEMBER_NUMBER),
    MEMBER(struct fuse_view_workload, read_share, MEMBER_NUMBER),
    MEMBER(struct fuse_view_workload, reads_per_window, MEMBER_NUMBER),
    MEMBER(struct fuse_view_workload, writes_per_window, MEMBER_NUMBER),
};

static void workload_more(struct fuse_view *v, const json_t *o, void *entry)
{
	struct fuse_view_workload *w = entry;
	w->classes =
	    list_read(v, gi_json_arr(o, "classes"), FUSE_VIEW_MAX_SUBLIST, sizeof(*w->classes),
	              CLASS_MEMBERS, COUNT(CLASS_MEMBERS), NULL, &w->nclasses);
	const json_t *db = gi_json_get(o, "database");
	w->database.present = json_is_object(db);
	members_read(db, DATABASE_MEMBERS, COUNT(DATABASE_MEMBERS), &w->database);
	names_read(v, gi_json_arr(db, "calls_traced_modules"), &w->database.calls_traced_modules);
}

static const struct member PIPELINE_MODULE_MEMBERS[] = {
    MEMBER(struct fuse_view_pipeline_module, module, MEMBER_STRING),
    MEMBER(struct fuse_view_pipeline_module, helper_calls, MEMBER_NUMBER),
    MEMBER(struct fuse_view_pipeline_module, db_operations, MEMBER_NUMBER),
    MEMBER(struct fuse_view_pipeline_module, ratio, MEMBER_NUMBER),
};

static const struct member PIPELINE_MEMBERS[] = {
    MEMBER(struct fuse_view_pipeline, helper_calls, MEMBER_NUMBER),
    MEMBER(struct fuse_view_pipeline, db_operations, MEMBER_NUMBER),
    MEMBER(struct fuse_view_pipeline, ratio, MEMBER_NUMBER),
    MEMBER(struct fuse_view_pipeline, verdict, MEMBER_STRING),
};

static void pipeline_read(struct fuse_view *v, const json_t *p)
{
	struct fuse_view_pipeline *out = &v->pipeline;
	out->present = json_is_object(p);
	members_read(p, PIPELINE_MEMBERS, COUNT(PIPELINE_MEMBERS), out);
	names_read(v, gi_json_arr(p, "helpers"), &out->helpers);
	out->modules = list_read(v, gi_json_arr(p, "modules"), FUSE_VIEW_MAX_LIST,
	                         sizeof(*out->modules), PIPELINE_MODULE_MEMBERS,
	                         COUNT(PIPELINE_MODULE_MEMBERS), NULL, &out->nmodules);
}

/* ---- processes, storage, recommendations ---------------------------------- */

static const struct member PROCESS_MEMBERS[] = {
    MEMBER(struct fuse_view_process, pid, MEMBER_STRING),
    MEMBER(struct fuse_view_process, registered_name, MEMBER_STRING),
    MEMBER(struct fuse_view_process, module, MEMBER_STRING),
    MEMBER(struct fuse_view_process, running_module, MEMBER_STRING),
    MEMBER(struct fuse_view_process, initial_call, MEMBER_STRING),
    MEMBER(struct fuse_view_process, logger, MEMBER_TRUE),
    MEMBER(struct fuse_view_process, rank, MEMBER_NUMBER),
    MEMBER(struct fuse_view_process, reductions, MEMBER_NUMBER),
    MEMBER(struct fuse_view_process, reductions_share, MEMBER_NUMBER),
    MEMBER(struct fuse_view_process, reductions_per_second, MEMBER_NUMBER),
    MEMBER(struct fuse_view_process, samples, MEMBER_NUMBER),
    MEMBER(struct fuse_view_process, max_queue, MEMBER_NUMBER),
    MEMBER(struct fuse_view_process, first, MEMBER_NUMBER),
    MEMBER(struct fuse_view_process, last, MEMBER_NUMBER),
    MEMBER(struct fuse_view_process, max, MEMBER_NUMBER),
    MEMBER(struct fuse_view_process, start_quarter_avg, MEMBER_NUMBER),
    MEMBER(struct fuse_view_process, end_quarter_avg, MEMBER_NUMBER),
    MEMBER(struct fuse_view_process, rising_steps, MEMBER_NUMBER),
    MEMBER(struct fuse_view_process, steps, MEMBER_NUMBER),
    MEMBER(struct fuse_view_process, dependents, MEMBER_NUMBER),
    MEMBER(struct fuse_view_process, hub, MEMBER_TRI),
    MEMBER(struct fuse_view_process, first_bytes, MEMBER_NUMBER),
    MEMBER(struct fuse_view_process, last_bytes, MEMBER_NUMBER),
    MEMBER(struct fuse_view_process, growth_bytes, MEMBER_NUMBER),
};

static void processes_read(struct fuse_view *v, const json_t *a, struct fuse_view_processes *out)
{
	out->items = list_read(v, a, FUSE_VIEW_MAX_LIST, sizeof(*out->items), PROCESS_MEMBERS,
	                       COUNT(PROCESS_MEMBERS), NULL, &out->len);
}

static const struct member TABLE_MEMBERS[] = {
    MEMBER(struct fuse_view_table, name, MEMBER_STRING),
    MEMBER(struct fuse_view_table, storage, MEMBER_STRING),
    MEMBER(struct fuse_view_table, size, MEMBER_NUMBER),
};

static void storage_read(struct fuse_view *v, const json_t *s)
{
	struct fuse_view_storage *out = &v->storage;
	out->present = json_is_object(s);
	out->mnesia_tables = list_read(v, gi_json_arr(s, "mnesia_tables"), FUSE_VIEW_MAX_LIST,
	                               sizeof(*out->mnesia_tables), TABLE_MEMBERS,
	                               COUNT(TABLE_MEMBERS), NULL, &out->nmnesia_tables);
	out->dets_files =
	    list_read(v, gi_json_arr(s, "dets_files"), FUSE_VIEW_MAX_LIST, sizeof(*out->dets_files),
	              TABLE_MEMBERS, COUNT(TABLE_MEMBERS), NULL, &out->ndets_files);
}

static const struct member RECOMMENDATION_MEMBERS[] = {
    MEMBER(struct fuse_view_recommendation, id, MEMBER_STRING),
    MEMBER(struct fuse_view_recommendation, severity, MEMBER_STRING),
    MEMBER(struct fuse_view_recommendation, subject, MEMBER_STRING),
    MEMBER(struct fuse_view_recommendation, finding, MEMBER_STRING),
    MEMBER(struct fuse_view_recommendation, advice, MEMBER_STRING),
    MEMBER(struct fuse_view_recommendation, rule, MEMBER_NUMBER),
    MEMBER(struct fuse_view_recommendation, priority, MEMBER_NUMBER),
};

static const struct member ALSO_MEMBERS[] = {
    MEMBER(struct fuse_view_also, id, MEMBER_STRING),
    MEMBER(struct fuse_view_also, finding, MEMBER_STRING),
    MEMBER(struct fuse_view_also, rule, MEMBER_NUMBER),
};

static void recommendation_more(struct fuse_view *v, const json_t *o, void *entry)
{
	struct fuse_view_recommendation *r = entry;
	names_read(v, gi_json_arr(o, "ids"), &r->ids);
	r->evidence = gi_json_obj(o, "evidence");
	r->reader = gi_json_str(r->evidence, "reader");
	r->also = list_read(v, gi_json_arr(o, "also"), FUSE_VIEW_MAX_SUBLIST, sizeof(*r->also),
	                    ALSO_MEMBERS, COUNT(ALSO_MEMBERS), NULL, &r->nalso);
}

/* ---- the view ------------------------------------------------------------- */

int fuse_view_parse(json_t *profile, struct fuse_view *out)
{
	memset(out, 0, sizeof(*out));
	gi_arena_init(&out->arena);
	out->version = -1;
	if (!json_is_object(profile))
		return GI_EINVAL;
	const json_t *version = json_object_get(profile, "version");
	if (json_is_integer(version))
		out->version = (long)json_integer_value(version);
	if (out->version > FUSE_VIEW_VERSION)
		return GI_EUNSUPPORTED;
	out->json = json_incref(profile);
	const json_t *p = profile;
	session_read(out, gi_json_get(p, "session"));
	metrics_read(out, gi_json_get(p, "metrics"));
	series_read(out, gi_json_get(p, "series"));
	const json_t *ex = gi_json_get(p, "explained");
	out->explained.present = json_is_object(ex);
	members_read(ex, EXPLAINED_MEMBERS, COUNT(EXPLAINED_MEMBERS), &out->explained);
	out->hot_modules_basis = gi_json_str(p, "hot_modules_basis");
	out->hot_modules = modules_read(out, gi_json_arr(p, "hot_modules"), &out->nhot_modules);
	out->ownership_modules =
	    modules_read(out, gi_json_arr(p, "ownership_modules"), &out->nownership_modules);
	const json_t *hf = gi_json_arr(p, "hot_functions");
	out->has_hot_functions = hf != NULL;
	out->hot_functions =
	    list_read(out, hf, FUSE_VIEW_MAX_LIST, sizeof(*out->hot_functions), FUNCTION_MEMBERS,
	              COUNT(FUNCTION_MEMBERS), NULL, &out->nhot_functions);
	executing_read(out, gi_json_get(p, "executing"));
	out->hotspots = list_read(out, gi_json_arr(p, "trace_hotspots"), FUSE_VIEW_MAX_HOTSPOTS,
	                          sizeof(*out->hotspots), HOTSPOT_MEMBERS, COUNT(HOTSPOT_MEMBERS),
	                          hotspot_more, &out->nhotspots);
	const json_t *tb = gi_json_get(p, "trace_budget");
	out->trace_budget.present = json_is_object(tb);
	members_read(tb, BUDGET_MEMBERS, COUNT(BUDGET_MEMBERS), &out->trace_budget);
	const json_t *tr = gi_json_get(p, "tracing");
	out->tracing.present = json_is_object(tr);
	members_read(tr, TRACING_MEMBERS, COUNT(TRACING_MEMBERS), &out->tracing);
	names_read(out, gi_json_arr(tr, "foreign"), &out->tracing.foreign);
	const json_t *ob = gi_json_get(p, "observer");
	out->observer.present = json_is_object(ob);
	members_read(ob, OBSERVER_MEMBERS, COUNT(OBSERVER_MEMBERS), &out->observer);
	const json_t *ct = gi_json_get(p, "call_time");
	out->call_time.present = json_is_object(ct);
	members_read(ct, CALL_TIME_MEMBERS, COUNT(CALL_TIME_MEMBERS), &out->call_time);
	const json_t *wl = gi_json_arr(p, "workload");
	out->has_workload = wl != NULL;
	out->workload =
	    list_read(out, wl, FUSE_VIEW_MAX_LIST, sizeof(*out->workload), WORKLOAD_MEMBERS,
	              COUNT(WORKLOAD_MEMBERS), workload_more, &out->nworkload);
	pipeline_read(out, gi_json_get(p, "pipeline_overhead"));
	const json_t *procs = gi_json_get(p, "processes");
	out->has_processes = json_is_object(procs);
	out->has_loggers = gi_json_arr(procs, "logger") != NULL;
	processes_read(out, gi_json_arr(procs, "top_cpu"), &out->top_cpu);
	processes_read(out, gi_json_arr(procs, "logger"), &out->loggers);
	processes_read(out, gi_json_arr(procs, "mailboxes"), &out->mailboxes);
	processes_read(out, gi_json_arr(procs, "memory_growth"), &out->memory_growth);
	storage_read(out, gi_json_get(p, "storage"));
	const json_t *g = gi_json_get(p, "graph");
	out->graph.present = json_is_object(g);
	out->graph.attached = gi_json_true(g, "attached");
	out->graph.answered = gi_json_true(g, "answered");
	names_read(out, gi_json_arr(p, "errors"), &out->errors);
	out->recommendations =
	    list_read(out, gi_json_arr(p, "recommendations"), FUSE_VIEW_MAX_LIST,
	              sizeof(*out->recommendations), RECOMMENDATION_MEMBERS,
	              COUNT(RECOMMENDATION_MEMBERS), recommendation_more, &out->nrecommendations);
	return 0;
}

void fuse_view_destroy(struct fuse_view *v)
{
	if (!v)
		return;
	gi_arena_destroy(&v->arena);
	json_decref(v->json);
	memset(v, 0, sizeof(*v));
	v->version = -1;
}

const struct fuse_view_module *fuse_view_hot_module(const struct fuse_view *v, const char *module)
{
	for (size_t i = 0; module && i < v->nhot_modules; i++)
		if (v->hot_modules[i].module && strcmp(v->hot_modules[i].module, module) == 0)
			return &v->hot_modules[i];
	return NULL;
}

const struct fuse_view_workload *fuse_view_workload_of(const struct fuse_view *v,
                                                       const char *module)
{
	for (size_t i = 0; module && i < v->nworkload; i++)
		if (v->workload[i].module && strcmp(v->workload[i].module, module) == 0)
			return &v->workload[i];
	return NULL;
}
