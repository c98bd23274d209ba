/*
 * sections.c - the profile's sections (docs/PROFILE.md), made from the
 * accumulators (accumulate.c) and the joins with the graph (join.c): the
 * session, metrics and series, the hot modules and functions of the
 * executing and ownership views, the trace hotspots with their estimates,
 * the workload and pipeline overhead, the processes, storage, tracing,
 * budget and observer. Each returns a new JSON reference.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/arena.h"
#include "base/error.h"
#include "base/map.h"
#include "base/str.h"
#include "base/vec.h"
#include "fuse/build_int.h"
#include "graph/graph.h"
#include "graph/lookup.h"

/* ---- output sections --------------------------------------------------- */

static json_t *metric_json(const struct metric *m)
{
	json_t *o = json_object();
	json_object_set_new(o, "peak", fuse_json_num(m->peak));
	json_object_set_new(o, "avg", fuse_json_num(fuse_metric_avg(m)));
	json_object_set_new(o, "first", fuse_json_num(m->first));
	json_object_set_new(o, "last", fuse_json_num(m->last));
	json_object_set_new(o, "samples", json_integer(m->n));
	return o;
}

static json_t *growth_json(const struct metric *m)
{
	json_t *o = json_object();
	double head = fuse_metric_quarter(m, true), tail = fuse_metric_quarter(m, false);
	json_object_set_new(o, "first", fuse_json_num(m->first));
	json_object_set_new(o, "last", fuse_json_num(m->last));
	json_object_set_new(o, "peak", fuse_json_num(m->peak));
	json_object_set_new(o, "growth_bytes", fuse_json_num(m->last - m->first));
	json_object_set_new(o, "start_quarter_avg", fuse_json_num(head));
	json_object_set_new(o, "end_quarter_avg", fuse_json_num(tail));
	json_object_set_new(o, "trend_bytes", fuse_json_num(tail - head));
	json_object_set_new(o, "trend_ratio", fuse_json_num(head > 0 ? (tail - head) / head : NAN));
	return o;
}

json_t *fuse_section_session(struct ctx *c, json_t *fin)
{
	json_t *s = json_object();
	const char *status = gi_json_str(fin, "status");
	double started = gi_json_num(fin, "started_ms"), stopped = gi_json_num(fin, "stopped_ms");
	if (!isfinite(started))
		started = c->first_ts;
	if (!isfinite(stopped))
		stopped = c->last_ts;
	json_object_set_new(s, "id",
	                    json_string(gi_json_str(fin, "session_id")
	                                    ? gi_json_str(fin, "session_id")
	                                    : "unknown"));
	const char *node = gi_json_str(fin, "node") ? gi_json_str(fin, "node") : c->node;
	json_object_set_new(s, "node", node ? json_string(node) : json_null());
	json_object_set_new(s, "status", json_string(status ? status : "interrupted"));
	const char *reason = gi_json_str(fin, "reason");
	if (!fin)
		reason = "the session was not finalised";
	json_object_set_new(s, "reason", reason ? json_string(reason) : json_null());
	json_object_set_new(s, "started_ms", fuse_json_num(started));
	json_object_set_new(s, "stopped_ms", fuse_json_num(stopped));
	json_object_set_new(s, "duration_ms", fuse_json_num(stopped - started));
	double interval = gi_json_num(fin, "interval_ms");
	json_object_set_new(s, "interval_ms", fuse_json_num(interval));
	json_object_set_new(s, "snapshot_count", json_integer(c->nsnap));
	/* Gaps in what arrived, as the worker found them (docs/PROFILE.md). */
	json_t *gaps = json_object_get(fin, "gaps");
	json_object_set_new(s, "gaps", json_is_array(gaps) ? json_deep_copy(gaps) : json_array());
	json_t *missing = json_object_get(fin, "snapshots_missing");
	json_object_set_new(
	    s, "snapshots_missing",
	    json_integer(json_is_integer(missing) ? json_integer_value(missing) : 0));
	json_t *dropped = json_object_get(fin, "dropped");
	json_object_set_new(
	    s, "dropped_by_monitor",
	    json_integer(json_is_integer(dropped) ? json_integer_value(dropped) : 0));
	json_t *tm = json_object_get(fin, "trace_modules");
	json_object_set_new(s, "traced_modules",
	                    json_is_array(tm) ? json_deep_copy(tm) : json_array());
	const char *project = gi_json_str(fin, "project");
	json_object_set_new(s, "project", project ? json_string(project) : json_null());
	json_object_set_new(s, "otp_release",
	                    c->otp_release ? json_string(c->otp_release) : json_null());
	json_object_set_new(s, "schedulers_online",
	                    c->schedulers ? json_integer(c->schedulers) : json_null());
	return s;
}

json_t *fuse_section_metrics(struct ctx *c)
{
	json_t *m = json_object();
	json_t *mem = metric_json(&c->m_mem);
	json_t *g = growth_json(&c->m_mem);
	json_object_update(mem, g);
	json_decref(g);
	json_object_set_new(m, "memory_bytes", mem);
	json_t *cats = json_object();
	json_object_set_new(cats, "binary", growth_json(&c->m_binary));
	json_object_set_new(cats, "ets", growth_json(&c->m_ets));
	json_object_set_new(cats, "processes", growth_json(&c->m_processes_mem));
	json_object_set_new(cats, "atom", growth_json(&c->m_atom));
	json_object_set_new(cats, "code", growth_json(&c->m_code));
	json_object_set_new(cats, "system", growth_json(&c->m_system));
	json_object_set_new(m, "memory_categories", cats);
	json_t *procs = metric_json(&c->m_procs);
	json_t *pg = growth_json(&c->m_procs);
	json_object_set(procs, "start_quarter_avg", json_object_get(pg, "start_quarter_avg"));
	json_object_set(procs, "end_quarter_avg", json_object_get(pg, "end_quarter_avg"));
	json_object_set(procs, "trend_ratio", json_object_get(pg, "trend_ratio"));
	json_decref(pg);
	json_object_set_new(m, "process_count", procs);
	json_t *rq = metric_json(&c->m_runq);
	json_object_set_new(
	    rq, "above_schedulers_share",
	    fuse_json_num(c->m_runq.n ? (double)c->runq_above / (double)c->m_runq.n : NAN));
	json_object_set_new(m, "run_queue", rq);
	json_t *util = metric_json(&c->m_util);
	json_object_set_new(
	    util, "high_share",
	    fuse_json_num(c->m_util.n ? (double)c->util_high / (double)c->m_util.n : NAN));
	json_object_set_new(m, "scheduler_utilisation", util);
	json_object_set_new(m, "reductions_per_second", metric_json(&c->m_rps));
	json_object_set_new(m, "reductions_total", fuse_json_num(c->total_reductions));
	return m;
}

/* Keeps at most FUSE_MAX_SERIES points: buckets of consecutive snapshots,
 * averaged (the run queue keeps each bucket's maximum, so that spikes show). */
static json_t *series_json(const struct metric *m, bool use_max)
{
	json_t *a = json_array();
	size_t n = m->values.len;
	size_t bucket = (n + FUSE_MAX_SERIES - 1) / FUSE_MAX_SERIES;
	if (bucket == 0)
		bucket = 1;
	for (size_t i = 0; i < n; i += bucket) {
		double acc = use_max ? -INFINITY : 0;
		long k = 0;
		for (size_t j = i; j < i + bucket && j < n; j++) {
			double v = GI_VEC_AT(&m->values, double, j);
			if (!isfinite(v))
				continue;
			acc = use_max ? fmax(acc, v) : acc + v;
			k++;
		}
		json_array_append_new(a,
		                      fuse_json_num(k ? (use_max ? acc : acc / (double)k) : NAN));
	}
	return a;
}

json_t *fuse_section_series(struct ctx *c)
{
	json_t *s = json_object();
	json_object_set_new(s, "t_s", series_json(&c->m_t, false));
	json_object_set_new(s, "run_queue", series_json(&c->m_runq, true));
	json_object_set_new(s, "scheduler_utilisation", series_json(&c->m_util, false));
	json_object_set_new(s, "memory_bytes", series_json(&c->m_mem, false));
	json_object_set_new(s, "reductions_per_second", series_json(&c->m_rps, false));
	json_object_set_new(s, "process_count", series_json(&c->m_procs, false));
	return s;
}

/* The session's gaps on the time axis of the series (seconds from the first
 * snapshot, as t_s): [{from_s, to_s, missing, cause}]; to_s is null for a
 * gap at the end; cause is the session gap's ("time", "reconnect", ...). */
json_t *fuse_section_series_gaps(const struct ctx *c, json_t *fin)
{
	json_t *out = json_array(), *g;
	size_t i;
	json_array_foreach(json_object_get(fin, "gaps"), i, g)
	{
		double from = gi_json_num(g, "from_ms"), to = gi_json_num(g, "to_ms");
		json_array_append_new(
		    out,
		    json_pack(
		        "{s:o, s:o, s:O?, s:O?}", "from_s",
		        fuse_json_num(isfinite(c->first_ts) ? (from - c->first_ts) / 1000.0 : NAN),
		        "to_s",
		        fuse_json_num(isfinite(c->first_ts) ? (to - c->first_ts) / 1000.0 : NAN),
		        "missing", json_object_get(g, "missing"), "cause",
		        json_object_get(g, "cause")));
	}
	return out;
}

static int cmp_mod_reductions(const void *a, const void *b)
{
	const struct mod_stat *x = *(struct mod_stat *const *)a, *y = *(struct mod_stat *const *)b;
	if (x->reductions != y->reductions)
		return x->reductions < y->reductions ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int cmp_func_total(const void *a, const void *b)
{
	const struct func_stat *x = *(struct func_stat *const *)a;
	const struct func_stat *y = *(struct func_stat *const *)b;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	int r = strcmp(x->module, y->module);
	return r ? r : strcmp(x->function, y->function);
}

static double func_calls_per_s(struct ctx *c, const struct func_stat *f)
{
	struct traced_mod *t = fuse_traced_find(c, f->module);
	return t && t->window_ms > 0 ? f->total / (t->window_ms / 1000.0) : NAN;
}

static double share_of(struct ctx *c, double reductions)
{
	return c->total_reductions > 0 ? reductions / c->total_reductions : NAN;
}

/* The hottest functions of a module: by the executing view's samples when
 * the sampler ran, else by trace counts when traced; never by complexity
 * (a complex function is not a busy one). */
static json_t *hottest_functions(struct ctx *c, const char *module)
{
	json_t *a = json_array();
	const struct fuse_exec_entry *const *fns = NULL;
	size_t nf = fuse_executing_functions(c->executing, &fns);
	for (size_t i = 0; i < nf && json_array_size(a) < 5; i++) {
		const struct fuse_exec_entry *f = fns[i];
		if (strcmp(f->module, module) != 0)
			continue;
		json_t *o = json_object();
		json_object_set_new(o, "name", json_string(f->function));
		json_object_set_new(o, "arity", json_integer(f->arity));
		json_object_set_new(o, "reductions_share",
		                    fuse_json_num(share_of(c, f->reductions)));
		json_object_set_new(o, "samples", fuse_json_num(f->samples));
		struct func_stat *t = fuse_func_find(c, module, f->function, f->arity);
		if (t)
			json_object_set_new(o, "calls", fuse_json_num(t->total));
		json_object_set_new(o, "by", json_string("samples"));
		json_array_append_new(a, o);
	}
	if (json_array_size(a) > 0 || !fuse_traced_find(c, module))
		return a;
	for (size_t i = 0; i < c->func_list.len && json_array_size(a) < 5; i++) {
		struct func_stat *f = GI_VEC_AT(&c->func_list, struct func_stat *, i);
		if (strcmp(f->module, module) != 0 || f->total <= 0)
			continue;
		json_t *o = json_object();
		json_object_set_new(o, "name", json_string(f->function));
		json_object_set_new(o, "arity", json_integer(f->arity));
		json_object_set_new(o, "calls", fuse_json_num(f->total));
		json_object_set_new(o, "calls_per_second", fuse_json_num(func_calls_per_s(c, f)));
		json_object_set_new(o, "by", json_string("trace"));
		json_array_append_new(a, o);
	}
	return a;
}

/* The ownership view: reductions of the processes attributed to a module by
 * registered name or initial call (docs/SNAPSHOT.md), i.e. who started or
 * registered them, not where they execute. Modules under the floor are left
 * out. */
json_t *fuse_section_ownership_modules(struct ctx *c, int top, bool skip_wrappers)
{
	json_t *a = json_array();
	gi_vec_sort(&c->mod_list, cmp_mod_reductions);
	double total = c->total_reductions;
	if (total <= 0)
		for (size_t i = 0; i < c->mod_list.len; i++)
			total += GI_VEC_AT(&c->mod_list, struct mod_stat *, i)->reductions;
	for (size_t i = 0; i < c->mod_list.len && (int)json_array_size(a) < top; i++) {
		struct mod_stat *m = GI_VEC_AT(&c->mod_list, struct mod_stat *, i);
		double share = total > 0 ? m->reductions / total : NAN;
		if (m->reductions <= 0 || !(share >= FUSE_HOT_FLOOR))
			break;
		if (skip_wrappers && fuse_module_is_wrapper(m->name))
			continue;
		json_t *o = json_object();
		json_object_set_new(o, "module", json_string(m->name));
		json_object_set_new(o, "reductions", fuse_json_num(m->reductions));
		json_object_set_new(o, "reductions_share", fuse_json_num(share));
		json_object_set_new(o, "memory_bytes", fuse_json_num(m->mem_peak));
		json_object_set_new(o, "processes", json_integer(m->processes_max));
		json_object_set_new(o, "sample_count", json_integer(m->samples));
		json_object_set_new(o, "traced",
		                    json_boolean(fuse_traced_find(c, m->name) != NULL));
		json_object_set_new(o, "basis", json_string("ownership"));
		json_object_set_new(o, "graph", fuse_join_graph_fields(c, m->name));
		json_object_set_new(o, "hottest_functions", hottest_functions(c, m->name));
		json_array_append_new(a, o);
	}
	return a;
}

/* The project's source defines `module` (per the knowledge graph: indexed
 * from source, not from object code, and not external). */
static bool module_in_source(void *ctx, const char *module)
{
	struct ctx *c = ctx;
	int d = fuse_join_module(c, module);
	return d >= 0 && kg_module_at(c->g, d)->origin != FACTS_FROM_BEAM &&
	       !fuse_join_external(c, d);
}

/* Whether `module` belongs to the observed project (docs/PROFILE.md): the
 * graph decides when it holds the project's source; else the target's word
 * on where the module's object code lives (neither under the OTP root nor
 * under Elixir's lib dir, nor preloaded). */
static bool module_in_project(void *ctx, const char *module)
{
	struct ctx *c = ctx;
	if (c->source_graph)
		return module_in_source(c, module);
	const char *origin = fuse_executing_origin(c->executing, module);
	return origin && strcmp(origin, "other") == 0;
}

void fuse_section_attribute_executing(struct ctx *c)
{
	c->source_graph = c->g && fuse_executing_any_module(c->executing, module_in_source, c);
	fuse_executing_attribute(c->executing, module_in_project, c);
}

/* Hot modules from the executing view (where the sampled processes ran),
 * project and platform alike, wrappers never, above the floor. */
json_t *fuse_section_executing_modules(struct ctx *c, int top)
{
	json_t *a = json_array();
	const struct fuse_exec_entry *const *ms = NULL;
	size_t n = fuse_executing_modules(c->executing, &ms);
	for (size_t i = 0; i < n && (int)json_array_size(a) < top; i++) {
		const struct fuse_exec_entry *e = ms[i];
		double share = share_of(c, e->reductions);
		if (!(share >= FUSE_HOT_FLOOR))
			break;
		if (fuse_module_is_wrapper(e->module))
			continue;
		struct mod_stat *own = gi_map_get(&c->mods, e->module);
		json_t *o = json_object();
		json_object_set_new(o, "module", json_string(e->module));
		json_object_set_new(o, "reductions", fuse_json_num(e->reductions));
		json_object_set_new(o, "reductions_share", fuse_json_num(share));
		json_object_set_new(o, "samples", fuse_json_num(e->samples));
		json_object_set_new(o, "project", json_boolean(e->project));
		json_object_set_new(o, "memory_bytes", fuse_json_num(own ? own->mem_peak : NAN));
		json_object_set_new(o, "processes",
		                    own ? json_integer(own->processes_max) : json_null());
		json_object_set_new(o, "sample_count", json_integer(own ? own->samples : 0));
		json_object_set_new(o, "traced",
		                    json_boolean(fuse_traced_find(c, e->module) != NULL));
		json_object_set_new(o, "basis", json_string("executing"));
		json_object_set_new(o, "graph", fuse_join_graph_fields(c, e->module));
		json_object_set_new(o, "hottest_functions", hottest_functions(c, e->module));
		json_array_append_new(a, o);
	}
	return a;
}

/* Hot functions from the executing view, above the floor, joined with the
 * trace counts and the graph's complexity where known. */
json_t *fuse_section_hot_functions(struct ctx *c, int top)
{
	json_t *a = json_array();
	const struct fuse_exec_entry *const *fs = NULL;
	size_t n = fuse_executing_functions(c->executing, &fs);
	for (size_t i = 0; i < n && (int)json_array_size(a) < top; i++) {
		const struct fuse_exec_entry *e = fs[i];
		double share = share_of(c, e->reductions);
		if (!(share >= FUSE_HOT_FLOOR))
			break;
		json_t *o = json_object();
		json_object_set_new(o, "module", json_string(e->module));
		json_object_set_new(o, "function", json_string(e->function));
		json_object_set_new(o, "arity", json_integer(e->arity));
		json_object_set_new(o, "reductions", fuse_json_num(e->reductions));
		json_object_set_new(o, "reductions_share", fuse_json_num(share));
		json_object_set_new(o, "samples", fuse_json_num(e->samples));
		json_object_set_new(o, "project", json_boolean(e->project));
		struct func_stat *t = fuse_func_find(c, e->module, e->function, e->arity);
		json_object_set_new(o, "calls", t ? fuse_json_num(t->total) : json_null());
		int d = fuse_join_function(c, e->module, e->function, e->arity);
		json_object_set_new(o, "cyclomatic",
		                    d >= 0 ? json_integer(kg_function_at(c->g, d)->cyclomatic)
		                           : json_null());
		json_array_append_new(a, o);
	}
	return a;
}

void fuse_section_pool_estimates(struct ctx *c)
{
	long n = c->budget.windows;
	for (size_t i = 0; i < c->func_list.len; i++) {
		struct func_stat *f = GI_VEC_AT(&c->func_list, struct func_stat *, i);
		if (!f->estimated)
			continue;
		double summed = f->total;
		double variance = f->variance;
		if (n >= 3) {
			double between =
			    (f->window_sumsq - summed * summed / (double)n) / (double)(n - 1);
			if (between * (double)n > variance)
				variance = between * (double)n;
		}
		double half = 1.96 * (sqrt(variance) + f->carried_sd);
		double rel = summed > 0 ? half / summed : 1;
		f->est_low = summed - half;
		f->est_high = summed + half;
		struct traced_mod *t = fuse_traced_find(c, f->module);
		if (t && f->measured > 0 && t->budget_window_ms > 0 && t->budget_time_ms > 0) {
			double by_time = f->measured * t->budget_window_ms / t->budget_time_ms;
			/* the work share only where it is evidence (windows of a busy
			 * node) */
			double by_work = t->budget_work_ms > 0
			                     ? f->measured * t->budget_window_ms / t->budget_work_ms
			                     : by_time;
			double e = by_time;
			double lo = by_time < by_work ? by_time : by_work;
			double hi = by_time > by_work ? by_time : by_work;
			double poisson = 1.96 / sqrt(f->measured);
			if (poisson > rel)
				rel = poisson;
			f->est_low = lo * (1 - rel);
			f->est_high = hi * (1 + rel);
			t->calls += e - summed;
			if (strcmp(f->kind, "pipeline") == 0)
				t->raw_pipeline += e - summed;
			f->total = e;
			f->pooled = true;
		} else if (!(f->est_high > summed)) {
			/* no counted time to scale by (every window carried over,
			 * or none said how long it counted): not an estimate the
			 * budget stands behind, and its upper side is unknown */
			f->est_high = NAN;
		}
		if (f->est_low < f->measured)
			f->est_low = f->measured;
	}
}

static void hotspot_estimate(const struct ctx *c, json_t *o, const struct func_stat *f)
{
	if (!f->estimated) {
		json_object_set_new(o, "measured", json_null());
		json_object_set_new(o, "low", json_null());
		json_object_set_new(o, "high", json_null());
		return;
	}
	double low = f->est_low, high = f->est_high;
	(void)c;
	json_object_set_new(o, "measured", fuse_json_num(f->measured));
	json_object_set_new(o, "low", fuse_json_num(floor(low)));
	json_object_set_new(o, "high", fuse_json_num(ceil(high)));
	/* the model stands behind a count whose interval lies within a factor
	 * of 2 of it (docs/RULES.md "The estimator"); else it says so */
	bool firm = f->pooled && f->total > 0 && isfinite(high) && low >= f->total / 2 &&
	            high <= 2 * f->total;
	json_object_set_new(o, "firm", json_boolean(firm));
	if (!firm)
		json_object_set_new(
		    o, "estimate_note",
		    json_string(f->unsteady
		                    ? "uncertain: the node's load came and went while counting; "
		                      "count exactly with --overhead 0"
		                    : "uncertain: too few calls counted or counted unevenly; "
		                      "count exactly with --overhead 0 or count longer"));
}

/* Every traced function, by calls, joined with its function in the graph.
 * Also sets "calls_repo" (the Repo-like module it calls, or null) for the
 * database signature of rule 4. */
json_t *fuse_section_hotspots(struct ctx *c)
{
	json_t *a = json_array();
	gi_vec_sort(&c->func_list, cmp_func_total);
	double all_calls = 0, all_time = 0;
	for (size_t i = 0; i < c->func_list.len; i++) {
		all_calls += GI_VEC_AT(&c->func_list, struct func_stat *, i)->total;
		all_time += GI_VEC_AT(&c->func_list, struct func_stat *, i)->time_us;
	}
	bool timed = c->ct.windows > 0;
	for (size_t i = 0; i < c->func_list.len; i++) {
		struct func_stat *f = GI_VEC_AT(&c->func_list, struct func_stat *, i);
		struct traced_mod *t = fuse_traced_find(c, f->module);
		long windows = t ? t->windows : f->present;
		json_t *o = json_object();
		char mfa[2 * FUSE_MAX_NAME + 16];
		snprintf(mfa, sizeof(mfa), "%s.%s/%ld", f->module, f->function, f->arity);
		json_object_set_new(o, "mfa", json_string(mfa));
		json_object_set_new(o, "module", json_string(f->module));
		json_object_set_new(o, "function", json_string(f->function));
		json_object_set_new(o, "arity", json_integer(f->arity));
		json_object_set_new(o, "calls", fuse_json_num(f->total));
		json_object_set_new(o, "calls_share",
		                    fuse_json_num(all_calls > 0 ? f->total / all_calls : NAN));
		json_object_set_new(o, "calls_per_second", fuse_json_num(func_calls_per_s(c, f)));
		hotspot_estimate(c, o, f);
		json_t *w = json_object();
		json_object_set_new(w, "windows", json_integer(windows));
		json_object_set_new(w, "min",
		                    fuse_json_num(f->present < windows ? 0 : f->min_present));
		json_object_set_new(w, "avg",
		                    fuse_json_num(windows > 0 ? f->total / (double)windows : NAN));
		json_object_set_new(w, "max", fuse_json_num(f->max));
		json_object_set_new(o, "per_window", w);
		/* call_time: own time in the flagged processes (null when not measured) */
		json_object_set_new(o, "time_us", timed ? fuse_json_num(f->time_us) : json_null());
		json_object_set_new(o, "time_calls",
		                    timed ? fuse_json_num(f->time_calls) : json_null());
		json_object_set_new(o, "mean_us",
		                    timed && f->time_calls > 0
		                        ? fuse_json_num(f->time_us / f->time_calls)
		                        : json_null());
		json_object_set_new(o, "time_share",
		                    timed && all_time > 0 ? fuse_json_num(f->time_us / all_time)
		                                          : json_null());
		int d = fuse_join_function(c, f->module, f->function, f->arity);
		/* A lambda has no node of its own: the readers fold its body into the
		 * function that defines it, so it joins that function, and it is a
		 * step of that function's work, never an operation of its own. */
		char parent[FUSE_MAX_NAME + 1];
		long parent_arity = 0;
		bool lambda = d < 0 && fuse_join_lambda_parent(f->function, parent, sizeof(parent),
		                                               &parent_arity);
		if (lambda) {
			d = fuse_join_function(c, f->module, parent, parent_arity);
			char of[FUSE_MAX_NAME + 24];
			snprintf(of, sizeof(of), "%s/%ld", parent, parent_arity);
			json_object_set_new(o, "lambda_of", json_string(of));
		}
		const struct kg_function *gf = d >= 0 ? kg_function_at(c->g, d) : NULL;
		const char *visibility = lambda ? "private"
		                         : gf   ? (gf->is_public ? "public" : "private")
		                                : NULL;
		/* Pipeline helpers are steps by nature: always counted as such. */
		bool helper = strcmp(f->kind, "pipeline") == 0;
		if (!helper && visibility && strcmp(visibility, "private") == 0)
			f->kind = "private";
		json_object_set_new(o, "kind", json_string(f->kind));
		json_object_set_new(o, "visibility",
		                    visibility ? json_string(visibility) : json_null());
		f->internal = !helper && fuse_join_only_local_callers(c, d, f->module);
		json_object_set_new(o, "internal", json_boolean(f->internal));
		json_object_set_new(o, "in_graph", json_boolean(gf != NULL));
		json_object_set_new(o, "cyclomatic",
		                    gf ? json_integer(gf->cyclomatic) : json_null());
		json_object_set_new(o, "cognitive", gf ? json_integer(gf->cognitive) : json_null());
		json_object_set_new(o, "line", gf ? json_integer(gf->line_start) : json_null());
		json_t *callees = fuse_join_mfa_list(c, d, false);
		char repo_buf[FUSE_MAX_NAME + 1], direct_buf[FUSE_MAX_NAME + 1];
		const char *repo =
		    fuse_join_repo_callee(c, f->module, d, 3, repo_buf, sizeof(repo_buf));
		const char *direct =
		    fuse_join_repo_callee(c, f->module, d, 0, direct_buf, sizeof(direct_buf));
		json_t *callers = fuse_join_mfa_list(c, d, true);
		if (lambda) {
			char mfa_parent[2 * FUSE_MAX_NAME + 24];
			snprintf(mfa_parent, sizeof(mfa_parent), "%s.%s/%ld", f->module, parent,
			         parent_arity);
			json_array_clear(callers);
			json_array_append_new(callers, json_string(mfa_parent));
		}
		json_object_set_new(
		    o, "fan_in",
		    gf ? json_integer((json_int_t)(lambda ? 1 : fuse_join_ncalls(c, d, true)))
		       : json_null());
		int gm = fuse_join_module(c, f->module);
		json_object_set_new(o, "module_hub",
		                    gm >= 0 ? json_boolean(kg_module_at(c->g, gm)->hub)
		                            : json_null());
		json_object_set_new(o, "callers", callers);
		json_object_set_new(o, "callees", callees);
		fuse_join_classify_traced(c, f, d, lambda ? parent : f->function,
		                          lambda ? parent_arity : f->arity);
		fuse_join_note_traced_callees(c, f, d);
		/* The data layer its paths reach, when that is another module. */
		if (f->layer && strcmp(f->layer, f->module) != 0)
			repo = f->layer;
		json_object_set_new(o, "class", json_string(f->cls));
		json_object_set_new(o, "class_basis", json_string(f->basis));
		json_object_set_new(o, "data_layer",
		                    f->layer ? json_string(f->layer) : json_null());
		if (f->split) {
			json_t *ops = json_object();
			json_object_set_new(ops, "reads", fuse_json_num(f->op_reads));
			json_object_set_new(ops, "writes", fuse_json_num(f->op_writes));
			json_object_set_new(o, "operations", ops);
		}
		json_object_set_new(o, "calls_repo", repo ? json_string(repo) : json_null());
		json_object_set_new(o, "calls_repo_directly", json_boolean(direct != NULL));
		json_array_append_new(a, o);
	}
	return a;
}

/* What call_time measured and in how many processes, or null when the
 * session did not measure times (docs/PROFILE.md). */
json_t *fuse_section_call_time(struct ctx *c)
{
	if (c->ct.windows == 0)
		return json_null();
	double all_time = 0;
	for (size_t i = 0; i < c->func_list.len; i++)
		all_time += GI_VEC_AT(&c->func_list, struct func_stat *, i)->time_us;
	json_t *o = json_object();
	json_object_set_new(o, "windows", json_integer(c->ct.windows));
	json_object_set_new(o, "time_us", fuse_json_num(all_time));
	json_object_set_new(o, "flagged_avg",
	                    fuse_json_num(c->ct.flagged_sum / (double)c->ct.windows));
	json_object_set_new(o, "flagged_max", fuse_json_num(c->ct.flagged_max));
	json_object_set_new(o, "refused_max", fuse_json_num(c->ct.refused_max));
	json_object_set_new(o, "trace_messages", fuse_json_num(c->ct.trace_messages));
	json_object_set_new(o, "suspended", json_boolean(c->ct.suspended));
	json_object_set_new(o, "isolation",
	                    json_string(c->ct.isolated ? "trace_session" : "global"));
	return o;
}

/* The overhead budget over the session, or null without one: the trace
 * counts are then estimates (docs/OBSERVE.md "Overhead budget"). */
json_t *fuse_section_budget(struct ctx *c)
{
	if (c->budget.windows == 0)
		return json_null();
	json_t *o = json_object();
	json_object_set_new(o, "overhead", fuse_json_num(c->budget.overhead));
	json_object_set_new(o, "windows", json_integer(c->budget.windows));
	json_object_set_new(o, "duty_mean",
	                    c->budget.duty_n
	                        ? fuse_json_num(c->budget.duty_sum / (double)c->budget.duty_n)
	                        : json_null());
	json_object_set_new(o, "cost", fuse_json_num(c->budget.cost));
	/* what it cost the node: the share of the time the patterns were set
	 * (barriers included) times the cost of a counted call path */
	double exposure =
	    c->budget.exposure_n ? c->budget.exposure_sum / (double)c->budget.exposure_n : NAN;
	json_object_set_new(o, "exposure_mean", fuse_json_num(exposure));
	json_object_set_new(o, "node_cost", fuse_json_num(exposure * c->budget.cost));
	json_object_set_new(o, "traced_ms", fuse_json_num(c->budget.traced_ms));
	json_object_set_new(o, "paused_windows", json_integer(c->budget.paused));
	json_object_set_new(o, "calls_measured", fuse_json_num(c->budget.measured));
	/* the session's estimate is the functions' pooled ones (pool_estimates,
	 * a ratio of sums), not the windows' own estimates summed, which one
	 * window with a tiny counted interval throws off */
	double estimated = 0;
	for (size_t i = 0; i < c->func_list.len; i++) {
		const struct func_stat *f = GI_VEC_AT(&c->func_list, struct func_stat *, i);
		if (f->estimated)
			estimated += f->total;
	}
	json_object_set_new(o, "calls_estimated", fuse_json_num(estimated));
	json_object_set_new(o, "counts", json_string("estimated"));
	return o;
}

/* What the observer cost the node over the session, measured on the node
 * (docs/PROFILE.md "observer"): null when no snapshot measured it (older
 * observers). */
json_t *fuse_section_observer(struct ctx *c)
{
	if (c->obs.windows == 0)
		return json_null();
	double w = c->obs.window_ms;
	json_t *o = json_object();
	json_object_set_new(o, "windows", json_integer(c->obs.windows));
	json_object_set_new(o, "cost", fuse_json_num(c->obs.cost_ms / w));
	json_object_set_new(o, "cost_max", fuse_json_num(c->obs.cost_max));
	json_object_set_new(o, "session", fuse_json_num(c->obs.share_ms / w));
	json_object_set_new(o, "counting",
	                    c->obs.with_counting ? fuse_json_num(c->obs.counting_ms / w)
	                                         : json_null());
	json_object_set_new(o, "budget", fuse_json_num(c->obs.budget));
	json_object_set_new(o, "over_budget_windows", json_integer(c->obs.over));
	/* The budget is a rate: kept when the mean over the windows is within it.
	 * Single windows over it (a duty cycle's counting falls in some windows
	 * and not others; a timer late under load) are counted and shown apart. */
	json_object_set_new(o, "within_budget", json_boolean(c->obs.cost_ms / w <= c->obs.budget));
	json_object_set_new(o, "reductions", fuse_json_num(c->obs.reductions));
	json_object_set_new(o, "other_observers",
	                    json_integer((json_int_t)c->obs.other_processes_max));
	json_object_set_new(o, "sample_period_ms", fuse_json_num(c->obs.period_asked));
	json_object_set_new(o, "sample_period_max_ms", fuse_json_num(c->obs.period_max));
	json_object_set_new(
	    o, "sampler_slowed",
	    json_boolean(c->obs.period_max > c->obs.period_asked && c->obs.period_asked > 0));
	json_object_set_new(o, "scan_every_max",
	                    fuse_json_num(c->obs.scan_every_max > 0 ? c->obs.scan_every_max : 1));
	json_object_set_new(o, "scan_every_max_ms",
	                    c->obs.scan_every_max > 1 ? fuse_json_num(c->obs.scan_every_ms)
	                                              : json_null());
	json_object_set_new(o, "scan_thinned", json_boolean(c->obs.scan_every_max > 1));
	return o;
}

/* Call counting over the session: how long, whether under a budget, and
 * what other tools held on the node (shared). */
json_t *fuse_section_tracing(struct ctx *c)
{
	json_t *o = json_object();
	json_object_set_new(o, "windows", json_integer(c->trace_windows));
	json_object_set_new(o, "traced_ms", fuse_json_num(c->trace_ms));
	json_object_set_new(o, "mode",
	                    json_string(c->trace_windows == 0   ? "none"
	                                : c->budget.windows > 0 ? "budget"
	                                                        : "full"));
	json_object_set_new(o, "foreign", json_incref(c->foreign));
	return o;
}

/* Operations of each traced module, from its functions' calls: each name
 * counts once, with the arity that has the most calls (default-argument
 * wrappers call the full arity, so adding every arity would count one
 * operation twice), and private functions and internal steps (known from the
 * graph; local call counting sees them) are left out. Needs func_list sorted
 * by calls. */
void fuse_section_recount_operations(struct ctx *c)
{
	struct gi_map seen;
	gi_map_init(&seen);
	for (size_t i = 0; i < c->func_list.len; i++) {
		struct func_stat *f = GI_VEC_AT(&c->func_list, struct func_stat *, i);
		struct traced_mod *t = fuse_traced_find(c, f->module);
		char key[2 * FUSE_MAX_NAME + 4];
		snprintf(key, sizeof(key), "%s\x1f%s", f->module, f->function);
		if (!t || strcmp(f->kind, "private") == 0 || f->internal || gi_map_get(&seen, key))
			continue;
		gi_map_put(&seen, key, f);
		const char *cls = f->cls ? f->cls : "compute";
		if (strcmp(cls, "proxy") == 0)
			continue; /* counted at the handle_call it goes to */
		bool in_vm = !fuse_join_reach_leaves_vm(f->reach) && (f->reach & REACH_IN_VM);
		if (in_vm)
			t->reads_in_vm += f->split                   ? f->op_reads
			                  : strcmp(cls, "read") == 0 ? f->total
			                                             : 0;
		if (f->split) {
			t->reads += f->op_reads;
			t->writes += f->op_writes;
			t->other += f->total - f->op_reads - f->op_writes;
		} else if (strcmp(cls, "read") == 0) {
			t->reads += f->total;
		} else if (strcmp(cls, "write") == 0) {
			t->writes += f->total;
		} else if (strcmp(cls, "pipeline") == 0) {
			t->pipeline += f->total;
		} else {
			t->other += f->total;
		}
	}
	gi_map_destroy(&seen);
}

/* The database module `module` depends on in the graph, or NULL. */
static const char *repo_dependency(struct ctx *c, const char *module)
{
	int d = fuse_join_module(c, module);
	int deps[FUSE_MAX_LIST];
	size_t n = d >= 0 ? kg_module_dependencies(c->g, d, deps, FUSE_MAX_LIST) : 0;
	for (size_t i = 0; i < n; i++) {
		const char *m = kg_module_at(c->g, deps[i])->name;
		if (strcmp(m, module) != 0 && fuse_join_module_is_database(c, m))
			return m;
	}
	return NULL;
}

/* The operations of `module` with their class and its basis, by calls
 * (at most 20; steps of other operations are left out). */
static json_t *module_classes(struct ctx *c, const char *module)
{
	json_t *a = json_array();
	for (size_t i = 0; i < c->func_list.len && json_array_size(a) < 20; i++) {
		struct func_stat *f = GI_VEC_AT(&c->func_list, struct func_stat *, i);
		if (strcmp(f->module, module) != 0 || strcmp(f->kind, "private") == 0 ||
		    f->internal || f->total <= 0)
			continue;
		char fa[FUSE_MAX_NAME + 16];
		snprintf(fa, sizeof(fa), "%s/%ld", f->function, f->arity);
		json_t *o = json_object();
		json_object_set_new(o, "function", json_string(fa));
		json_object_set_new(o, "calls", fuse_json_num(f->total));
		json_object_set_new(o, "class", json_string(f->cls ? f->cls : "compute"));
		json_object_set_new(o, "basis", json_string(f->basis ? f->basis : "name"));
		json_array_append_new(a, o);
	}
	return a;
}

json_t *fuse_section_workload(struct ctx *c, json_t *hotspots)
{
	json_t *a = json_array(), *o;
	for (size_t i = 0; i < c->traced_list.len; i++) {
		struct traced_mod *t = GI_VEC_AT(&c->traced_list, struct traced_mod *, i);
		/* Pipeline helpers are steps of an operation, not operations. */
		double ops = t->reads + t->writes + t->other;
		double secs = t->window_ms / 1000.0;
		json_object_set_new(o = json_object(), "module", json_string(t->name));
		json_object_set_new(o, "calls", fuse_json_num(t->calls));
		json_object_set_new(o, "calls_per_second",
		                    fuse_json_num(secs > 0 ? t->calls / secs : NAN));
		json_object_set_new(o, "operations", fuse_json_num(ops));
		json_object_set_new(o, "operations_per_second",
		                    fuse_json_num(secs > 0 ? ops / secs : NAN));
		json_object_set_new(o, "windows", json_integer(t->windows));
		json_object_set_new(o, "reads", fuse_json_num(t->reads));
		json_object_set_new(o, "writes", fuse_json_num(t->writes));
		json_object_set_new(o, "pipeline", fuse_json_num(t->pipeline));
		json_object_set_new(o, "other", fuse_json_num(t->other));
		json_object_set_new(o, "read_write_ratio",
		                    fuse_json_num(t->writes > 0 ? t->reads / t->writes : NAN));
		json_object_set_new(o, "read_share",
		                    fuse_json_num(t->reads + t->writes > 0
		                                      ? t->reads / (t->reads + t->writes)
		                                      : NAN));
		double w = t->windows > 0 ? (double)t->windows : NAN;
		json_object_set_new(o, "reads_per_window", fuse_json_num(t->reads / w));
		json_object_set_new(o, "writes_per_window", fuse_json_num(t->writes / w));
		/* Database signature facts; rule 4 decides. */
		json_t *db = json_object();
		int d = fuse_join_module(c, t->name);
		json_object_set_new(db, "pipeline_helper_calls", fuse_json_num(t->pipeline));
		json_object_set_new(db, "uses_ecto_repo",
		                    json_boolean(fuse_join_uses_ecto_repo(c, d)));
		/* A data layer itself (docs/RULES.md: Ecto.Repo, a driver caller,
		 * Ecto-style callbacks, or a Repo name with Repo functions). */
		const char *why = fuse_join_database_reason(c, t->name);
		json_object_set_new(db, "data_layer", json_boolean(why != NULL));
		json_object_set_new(db, "data_layer_reason", why ? json_string(why) : json_null());
		json_object_set_new(db, "calls_traced_modules", json_incref(t->calls_traced));
		/* Where its data lives, from the hot paths of its counted calls. */
		unsigned bits = 0;
		for (size_t k = 0; k < c->func_list.len; k++) {
			struct func_stat *f = GI_VEC_AT(&c->func_list, struct func_stat *, k);
			if (strcmp(f->module, t->name) == 0 && f->total > 0)
				bits |= f->reach;
		}
		const char *storage = fuse_join_storage_of(bits);
		json_object_set_new(db, "storage", storage ? json_string(storage) : json_null());
		json_object_set_new(
		    db, "reads_in_vm_share",
		    fuse_json_num(t->reads > 0 ? fmin(t->reads_in_vm / t->reads, 1) : NAN));
		double layer_share = fuse_join_driver_call_share(c, t);
		json_object_set_new(db, "driver_call_share",
		                    fuse_json_num(layer_share >= 0 ? layer_share : NAN));
		json_object_set_new(o, "classes", module_classes(c, t->name));
		const char *repo = repo_dependency(c, t->name);
		double via_static = 0, mine_static = 0, via_direct = 0;
		bool local_tracing = false;
		for (size_t k = 0; k < json_array_size(hotspots); k++) {
			json_t *h = json_array_get(hotspots, k);
			const char *hm = gi_json_str(h, "module"), *kind = gi_json_str(h, "kind");
			if (!hm || strcmp(hm, t->name) != 0)
				continue;
			double calls = gi_json_num(h, "calls");
			const char *callee_repo = gi_json_str(h, "calls_repo");
			bool private_fn = kind && strcmp(kind, "private") == 0;
			local_tracing |= private_fn;
			if (gi_json_true(h, "calls_repo_directly"))
				via_direct += calls;
			if (callee_repo && !repo)
				repo = callee_repo;
			const char *cls = gi_json_str(h, "class");
			if (private_fn || gi_json_true(h, "internal") ||
			    (cls && strcmp(cls, "proxy") == 0))
				continue;
			mine_static += calls;
			if (callee_repo)
				via_static += calls;
		}
		/* How much of its work goes to the database module, best evidence
		 * first: with local calls traced, the runtime calls of the functions
		 * that call it directly (a cache in front of the database keeps the
		 * static path but stops taking it); else the static call paths of
		 * its traced functions; else the traced data layer's operations per
		 * operation of this module (shared with its other callers). */
		double share = NAN;
		const char *basis = NULL;
		struct traced_mod *rt = repo ? fuse_traced_find(c, repo) : NULL;
		if (repo && local_tracing && ops > 0) {
			share = fmin(via_direct / ops, 1.0);
			basis = "runtime";
		} else if (mine_static > 0 && via_static > 0) {
			share = fmin(via_static / mine_static, 1.0);
			basis = "static";
		} else if (rt && t->reads + t->writes > 0) {
			share = fmin((rt->reads + rt->writes) / (t->reads + t->writes), 1.0);
			basis = "data layer";
		}
		json_object_set_new(db, "repo", repo ? json_string(repo) : json_null());
		json_object_set_new(db, "repo_traced", json_boolean(rt != NULL));
		json_object_set_new(
		    db, "repo_reads_per_window",
		    fuse_json_num(rt && rt->windows > 0 ? rt->reads / (double)rt->windows : NAN));
		json_object_set_new(db, "repo_call_share", fuse_json_num(share));
		json_object_set_new(db, "repo_share_basis",
		                    basis ? json_string(basis) : json_null());
		json_object_set_new(o, "database", db);
		json_array_append_new(a, o);
	}
	return a;
}

#define PIPELINE_NORMAL_MAX 4.0

json_t *fuse_section_pipeline(struct ctx *c)
{
	json_t *o = json_object();
	json_t *mods = json_array();
	double helpers = 0, ops = 0;
	for (size_t i = 0; i < c->traced_list.len; i++) {
		struct traced_mod *t = GI_VEC_AT(&c->traced_list, struct traced_mod *, i);
		if (!fuse_join_module_is_database(c, t->name))
			continue;
		double mine = t->reads + t->writes;
		helpers += t->pipeline;
		ops += mine;
		json_t *m = json_object();
		json_object_set_new(m, "module", json_string(t->name));
		json_object_set_new(m, "helper_calls", fuse_json_num(t->pipeline));
		json_object_set_new(m, "db_operations", fuse_json_num(mine));
		json_object_set_new(m, "ratio", fuse_json_num(mine > 0 ? t->pipeline / mine : NAN));
		json_array_append_new(mods, m);
	}
	json_object_set_new(o, "helper_calls", fuse_json_num(helpers));
	json_object_set_new(o, "db_operations", fuse_json_num(ops));
	double ratio = ops > 0 ? helpers / ops : NAN;
	json_object_set_new(o, "ratio", fuse_json_num(ratio));
	/* docs/RULES.md "Pipeline overhead": an Ecto-style repo runs up to
	 * PIPELINE_NORMAL_MAX callbacks per operation by design; more means a
	 * helper runs several times per operation. */
	json_object_set_new(o, "normal_max", fuse_json_num(PIPELINE_NORMAL_MAX));
	json_object_set_new(o, "verdict",
	                    isfinite(ratio) && helpers > 0
	                        ? json_string(ratio <= PIPELINE_NORMAL_MAX ? "normal" : "high")
	                        : json_null());
	json_t *names = json_array();
	const char *const *pipe = fuse_pipeline_names(c->cfg);
	for (size_t i = 0; pipe[i]; i++)
		json_array_append_new(names, json_string(pipe[i]));
	json_object_set_new(o, "helpers", names);
	json_object_set_new(o, "modules", mods);
	return o;
}

/* Where the node keeps its tables (docs/PROFILE.md "storage"), from the
 * lines the monitor read at the end (probe/storage.erl): each mnesia table
 * with its storage type, DETS files open outside mnesia; null when the node
 * was not asked. Lines that do not parse are skipped. */
json_t *fuse_section_storage(json_t *fin)
{
	json_t *lines = json_object_get(fin, "storage");
	if (!json_is_array(lines))
		return json_null();
	json_t *o = json_object(), *tables = json_array(), *dets = json_array();
	size_t ram = 0, disc = 0, disc_only = 0;
	for (size_t i = 0; i < json_array_size(lines) && i < FUSE_MAX_LIST; i++) {
		const char *line = json_string_value(json_array_get(lines, i));
		char kind[16], name[FUSE_MAX_NAME], storage[32], size[32];
		if (!line || sscanf(line, "%15[^\t]\t%511[^\t]\t%31[^\t]\t%31[^\t]", kind, name,
		                    storage, size) != 4)
			continue;
		char *end = NULL;
		double n = strtod(size, &end);
		json_t *t = json_pack("{s:s, s:s}", "name", name, "storage", storage);
		json_object_set_new(t, "size", fuse_json_num(end && *end == '\0' ? n : NAN));
		if (strcmp(kind, "mnesia") == 0) {
			ram += strcmp(storage, "ram_copies") == 0;
			disc += strcmp(storage, "disc_copies") == 0;
			disc_only += strcmp(storage, "disc_only_copies") == 0;
			json_array_append_new(tables, t);
		} else if (strcmp(kind, "dets") == 0) {
			json_array_append_new(dets, t);
		} else {
			json_decref(t);
		}
	}
	json_object_set_new(o, "mnesia_tables", tables);
	json_object_set_new(o, "dets_files", dets);
	json_object_set_new(o, "mnesia_ram_copies", json_integer((json_int_t)ram));
	json_object_set_new(o, "mnesia_disc_copies", json_integer((json_int_t)disc));
	json_object_set_new(o, "mnesia_disc_only_copies", json_integer((json_int_t)disc_only));
	return o;
}

static int cmp_proc_reductions(const void *a, const void *b)
{
	const struct proc_stat *x = *(struct proc_stat *const *)a;
	const struct proc_stat *y = *(struct proc_stat *const *)b;
	if (x->reductions != y->reductions)
		return x->reductions < y->reductions ? 1 : -1;
	return strcmp(x->pid, y->pid);
}

static json_t *proc_base(const struct proc_stat *p)
{
	json_t *o = json_object();
	json_object_set_new(o, "pid", json_string(p->pid));
	json_object_set_new(o, "registered_name", p->name ? json_string(p->name) : json_null());
	json_object_set_new(o, "module", p->module ? json_string(p->module) : json_null());
	json_object_set_new(o, "running_module",
	                    p->running ? json_string(p->running) : json_null());
	json_object_set_new(o, "initial_call",
	                    p->initial_call ? json_string(p->initial_call) : json_null());
	json_object_set_new(o, "logger", json_boolean(p->logger));
	return o;
}

json_t *fuse_section_processes(struct ctx *c)
{
	json_t *o = json_object();
	gi_vec_sort(&c->proc_list, cmp_proc_reductions);
	double total = c->total_reductions;
	double secs = c->total_window_ms / 1000.0;
	json_t *top = json_array(), *logger = json_array(), *boxes = json_array(),
	       *grew = json_array();
	for (size_t i = 0; i < c->proc_list.len; i++) {
		struct proc_stat *p = GI_VEC_AT(&c->proc_list, struct proc_stat *, i);
		if (p->reductions <= 0)
			continue;
		bool in_top = json_array_size(top) < 10;
		if (!in_top && !p->logger)
			continue;
		json_t *e = proc_base(p);
		json_object_set_new(e, "rank", json_integer((json_int_t)i + 1));
		json_object_set_new(e, "reductions", fuse_json_num(p->reductions));
		json_object_set_new(e, "reductions_share",
		                    fuse_json_num(total > 0 ? p->reductions / total : NAN));
		json_object_set_new(e, "reductions_per_second",
		                    fuse_json_num(secs > 0 ? p->reductions / secs : NAN));
		json_object_set_new(e, "samples", json_integer(p->cpu_samples));
		json_object_set_new(e, "max_queue", fuse_json_num(p->queue_max));
		if (p->logger && json_array_size(logger) < 20)
			json_array_append(logger, e);
		if (in_top)
			json_array_append(top, e);
		json_decref(e);
	}
	for (size_t i = 0; i < c->proc_list.len && json_array_size(boxes) < 20; i++) {
		struct proc_stat *p = GI_VEC_AT(&c->proc_list, struct proc_stat *, i);
		if (p->queue_max <= 0 || p->queue_samples < 2)
			continue;
		json_t *e = proc_base(p);
		json_object_set_new(e, "first", fuse_json_num(p->queue_first));
		json_object_set_new(e, "last", fuse_json_num(p->queue_last));
		json_object_set_new(e, "max", fuse_json_num(p->queue_max));
		json_object_set_new(e, "samples", json_integer(p->queue_samples));
		/* A process missing from a snapshot's top lists counts as 0 there. */
		json_object_set_new(e, "start_quarter_avg",
		                    fuse_json_num(p->queue_head_sum / (double)c->quarter));
		json_object_set_new(e, "end_quarter_avg",
		                    fuse_json_num(p->queue_tail_sum / (double)c->quarter));
		json_object_set_new(e, "rising_steps", json_integer(p->queue_rises));
		json_object_set_new(e, "steps", json_integer(p->queue_steps));
		int d = fuse_join_module(c, p->module);
		const struct kg_module *gm = d >= 0 ? kg_module_at(c->g, d) : NULL;
		json_object_set_new(e, "hub", gm ? json_boolean(gm->hub) : json_null());
		json_object_set_new(e, "dependents", gm ? json_integer(gm->ca) : json_null());
		json_array_append_new(boxes, e);
	}
	for (size_t i = 0; i < c->proc_list.len; i++) {
		struct proc_stat *p = GI_VEC_AT(&c->proc_list, struct proc_stat *, i);
		if (p->mem_samples < 2 || p->mem_last <= p->mem_first)
			continue;
		/* Insertion into a short list ordered by growth. */
		double g = p->mem_last - p->mem_first;
		size_t at = json_array_size(grew);
		while (at > 0 && gi_json_num(json_array_get(grew, at - 1), "growth_bytes") < g)
			at--;
		if (at >= 10)
			continue;
		json_t *e = proc_base(p);
		json_object_set_new(e, "first_bytes", fuse_json_num(p->mem_first));
		json_object_set_new(e, "last_bytes", fuse_json_num(p->mem_last));
		json_object_set_new(e, "growth_bytes", fuse_json_num(g));
		json_array_insert_new(grew, at, e);
		if (json_array_size(grew) > 10)
			json_array_remove(grew, 10);
	}
	json_object_set_new(o, "top_cpu", top);
	json_object_set_new(o, "logger", logger);
	json_object_set_new(o, "mailboxes", boxes);
	json_object_set_new(o, "memory_growth", grew);
	return o;
}
