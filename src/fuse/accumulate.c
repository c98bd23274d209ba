/*
 * accumulate.c - the profile builder's one pass over the snapshots: each
 * snapshot, read through the typed snapshot view (observe/snapshot_view.h),
 * adds to per-metric statistics, per-module and per-process reductions,
 * mailbox and memory histories, per-function trace counts, the budget's,
 * call_time's and the observer's figures (build_int.h). Nothing here reads
 * the graph; every list taken from the input is capped (fuse_int.h).
 * Reductions per module are sums of per-interval deltas of the processes
 * attributed to it, never lifetime totals.
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

void fuse_metric_init(struct metric *m)
{
	memset(m, 0, sizeof(*m));
	m->first = m->last = m->peak = NAN;
	gi_vec_init(&m->values, sizeof(double));
}

static void metric_add(struct metric *m, double v)
{
	gi_vec_push(&m->values, &v);
	if (!isfinite(v))
		return;
	if (m->n == 0)
		m->first = v;
	m->last = v;
	m->sum += v;
	if (m->n == 0 || v > m->peak)
		m->peak = v;
	m->n++;
}

double fuse_metric_avg(const struct metric *m)
{
	return m->n ? m->sum / (double)m->n : NAN;
}

/* Average of the finite values in the first (head true) or last quarter. */
double fuse_metric_quarter(const struct metric *m, bool head)
{
	size_t n = m->values.len;
	size_t q = n / 4 ? n / 4 : 1;
	double sum = 0;
	long k = 0;
	for (size_t i = 0; i < q && i < n; i++) {
		double v = GI_VEC_AT(&m->values, double, head ? i : n - 1 - i);
		if (isfinite(v)) {
			sum += v;
			k++;
		}
	}
	return k ? sum / (double)k : NAN;
}

const char *fuse_ctx_strdup(struct ctx *c, const char *s)
{
	if (!s)
		return NULL;
	size_t len = strnlen(s, FUSE_MAX_NAME);
	return gi_arena_strndup(&c->arena, s, len);
}

static struct mod_stat *mod_get(struct ctx *c, const char *name)
{
	struct mod_stat *m = gi_map_get(&c->mods, name);
	if (m)
		return m;
	m = gi_arena_calloc(&c->arena, 1, sizeof(*m));
	m->name = fuse_ctx_strdup(c, name);
	m->seen_seq = m->mem_seq = m->proc_seq = -1;
	gi_map_put(&c->mods, name, m);
	gi_vec_push(&c->mod_list, &m);
	return m;
}

static struct traced_mod *traced_get(struct ctx *c, const char *name)
{
	struct traced_mod *t = gi_map_get(&c->traced, name);
	if (t)
		return t;
	t = gi_arena_calloc(&c->arena, 1, sizeof(*t));
	t->name = fuse_ctx_strdup(c, name);
	t->seen_seq = -1;
	t->layer_share = -1;
	t->calls_traced = json_array();
	gi_map_put(&c->traced, name, t);
	gi_vec_push(&c->traced_list, &t);
	return t;
}

/* Logger processes: Elixir 1.14's `Logger` gen_event and its backends, and
 * OTP's logger handler processes (logger_std_h, logger_disk_log_h, run by
 * logger_olp), recognised by registered name, attributed module or initial
 * call. */
static bool name_is_logger(const char *s)
{
	static const char *const exact[] = {"Elixir.Logger",
	                                    "Logger",
	                                    "logger",
	                                    ":logger",
	                                    ":logger_std_h",
	                                    ":logger_disk_log_h",
	                                    ":logger_h_common",
	                                    ":logger_olp",
	                                    ":logger_proxy",
	                                    "logger_proxy",
	                                    NULL};
	static const char *const prefixes[] = {"logger_std_h",    "logger_disk_log_h",
	                                       "Elixir.Logger.",  "Logger.",
	                                       ":logger_std_h",   ":logger_disk_log_h",
	                                       ":logger_olp",     ":logger_h_common",
	                                       ":Elixir.Logger.", NULL};
	if (!s)
		return false;
	for (size_t i = 0; exact[i]; i++)
		if (strcmp(s, exact[i]) == 0)
			return true;
	for (size_t i = 0; prefixes[i]; i++)
		if (gi_str_starts_with(s, prefixes[i]))
			return true;
	return false;
}

static bool process_is_logger(const struct obs_view_process *p)
{
	const char *reg = p->registered_name;
	const char *init = p->initial_call;
	if (name_is_logger(reg) || name_is_logger(p->module) || name_is_logger(init))
		return true;
	/* A gen_event registered as Logger whatever its attribution. */
	return init && reg && strstr(init, "gen_event") && strstr(reg, "Logger");
}

static struct proc_stat *proc_get(struct ctx *c, const struct obs_view_process *p)
{
	const char *pid = p->pid;
	if (!pid)
		return NULL;
	struct proc_stat *s = gi_map_get(&c->procs, pid);
	if (s)
		return s;
	if (c->proc_list.len >= FUSE_MAX_PROCESSES)
		return NULL;
	s = gi_arena_calloc(&c->arena, 1, sizeof(*s));
	s->pid = fuse_ctx_strdup(c, pid);
	s->name = fuse_ctx_strdup(c, p->registered_name);
	s->module = fuse_ctx_strdup(c, p->module);
	s->initial_call = fuse_ctx_strdup(c, p->initial_call);
	s->logger = process_is_logger(p);
	s->seen_seq = -1;
	s->queue_first = s->mem_first = NAN;
	gi_map_put(&c->procs, pid, s);
	gi_vec_push(&c->proc_list, &s);
	return s;
}

struct traced_mod *fuse_traced_find(struct ctx *c, const char *module)
{
	return gi_map_get(&c->traced, module);
}

/* The traced function module.function/arity, or NULL. */
struct func_stat *fuse_func_find(struct ctx *c, const char *module, const char *fn, long arity)
{
	char key[2 * FUSE_MAX_NAME + 16];
	snprintf(key, sizeof(key), "%.*s.%.*s/%d", FUSE_MAX_NAME, module, FUSE_MAX_NAME, fn,
	         (int)arity);
	return gi_map_get(&c->funcs, key);
}

/* ---- one snapshot ----------------------------------------------------- */

/* Remembers the module of `current_function` (display form) when it is
 * application code: a process started by spawn(fun) is owned by :erlang,
 * and its code is where it runs. */
static void proc_note_running(struct ctx *c, struct proc_stat *s, const char *current_function)
{
	char module[FUSE_MAX_NAME], function[FUSE_MAX_NAME];
	long arity;
	if (!current_function ||
	    fuse_frame_split(current_function, module, sizeof(module), function, sizeof(function),
	                     &arity) != 0 ||
	    fuse_module_is_platform(module))
		return;
	if (!s->running || strcmp(s->running, module) != 0)
		s->running = fuse_ctx_strdup(c, module);
}

static void take_cpu(struct ctx *c, const struct obs_view_processes *list, long seq)
{
	for (size_t i = 0; i < list->len && i < FUSE_MAX_LIST; i++) {
		const struct obs_view_process *p = &list->items[i];
		double r = p->reductions;
		if (!isfinite(r) || r < 0)
			continue;
		struct proc_stat *s = proc_get(c, p);
		if (s) {
			s->reductions += r;
			s->cpu_samples++;
			proc_note_running(c, s, p->current_function);
		}
		const char *mod = p->module;
		if (!mod)
			continue;
		struct mod_stat *m = mod_get(c, mod);
		m->reductions += r;
		if (m->seen_seq != seq) {
			m->seen_seq = seq;
			m->samples++;
		}
	}
}

/* Memory, mailbox and process counts: each process once per snapshot. */
static void take_process_state(struct ctx *c, const struct obs_view_processes *list, long seq)
{
	for (size_t i = 0; i < list->len && i < FUSE_MAX_LIST; i++) {
		const struct obs_view_process *p = &list->items[i];
		struct proc_stat *s = proc_get(c, p);
		if (!s || s->seen_seq == seq)
			continue;
		s->seen_seq = seq;
		double q = p->message_queue_len;
		if (isfinite(q)) {
			if (s->queue_samples == 0) {
				s->queue_first = q;
				s->queue_first_seq = seq;
			} else {
				s->queue_steps++;
				if (q > s->queue_last)
					s->queue_rises++;
			}
			s->queue_last = q;
			s->queue_last_seq = seq;
			if (seq < c->quarter)
				s->queue_head_sum += q;
			if (seq >= c->total_snapshots - c->quarter)
				s->queue_tail_sum += q;
			if (q > s->queue_max)
				s->queue_max = q;
			s->queue_samples++;
		}
		double mem = p->memory_bytes;
		if (isfinite(mem)) {
			if (s->mem_samples == 0)
				s->mem_first = mem;
			s->mem_last = mem;
			s->mem_samples++;
		}
		const char *mod = p->module;
		if (!mod)
			continue;
		struct mod_stat *m = mod_get(c, mod);
		if (m->mem_seq != seq) {
			m->mem_seq = seq;
			m->mem_cur = 0;
			m->proc_cur = 0;
		}
		if (isfinite(mem))
			m->mem_cur += mem;
		m->proc_cur++;
		if (m->mem_cur > m->mem_peak)
			m->mem_peak = m->mem_cur;
		if (m->proc_cur > m->processes_max)
			m->processes_max = m->proc_cur;
	}
}

static void mark_traced_window(struct ctx *c, const char *module, long seq, double window_ms)
{
	struct traced_mod *t = traced_get(c, module);
	if (t->seen_seq == seq)
		return;
	t->seen_seq = seq;
	t->windows++;
	if (isfinite(window_ms))
		t->window_ms += window_ms;
}

/* The call_time facts of one snapshot (docs/SNAPSHOT.md trace.call_time). */
static void take_call_time(struct ctx *c, const struct obs_view_call_time *ct)
{
	if (!ct->present)
		return;
	c->ct.windows++;
	double flagged = ct->flagged, refused = ct->refused;
	double messages = ct->trace_messages;
	if (isfinite(flagged) && flagged >= 0) {
		c->ct.flagged_sum += flagged;
		if (flagged > c->ct.flagged_max)
			c->ct.flagged_max = flagged;
	}
	if (isfinite(refused) && refused > c->ct.refused_max)
		c->ct.refused_max = refused;
	if (isfinite(messages) && messages > 0)
		c->ct.trace_messages += messages;
	if (ct->suspended)
		c->ct.suspended = true;
	const char *iso = ct->isolation;
	if (iso && strcmp(iso, "trace_session") == 0)
		c->ct.isolated = true;
}

/* The overhead budget's facts of one snapshot (docs/SNAPSHOT.md trace.duty). */
static void take_budget(struct ctx *c, const struct obs_view *v)
{
	const struct obs_view_duty *d = &v->duty;
	if (!d->present)
		return;
	c->budget.windows++;
	if (d->paused)
		c->budget.paused++;
	if (isfinite(d->overhead))
		c->budget.overhead = d->overhead;
	if (isfinite(d->cost))
		c->budget.cost = d->cost;
	if (isfinite(d->duty_mean)) {
		c->budget.duty_sum += d->duty_mean;
		c->budget.duty_n++;
	}
	if (isfinite(d->exposure_mean)) {
		c->budget.exposure_sum += d->exposure_mean;
		c->budget.exposure_n++;
	}
	if (isfinite(v->trace_window_ms) && v->trace_window_ms > 0) {
		c->budget.traced_ms += v->trace_window_ms;
		for (size_t i = 0; i < d->nmodules; i++) {
			const struct obs_view_duty_module *m = &d->modules[i];
			struct traced_mod *t = traced_get(c, m->module);
			t->budget_window_ms += v->trace_window_ms;
			if (m->carried)
				continue;
			if (isfinite(m->duty) && m->duty > 0)
				t->budget_time_ms +=
				    (m->duty > 1 ? 1 : m->duty) * v->trace_window_ms;
			if (m->work_used && isfinite(m->sampled) && m->sampled > 0) {
				t->budget_work_ms +=
				    (m->sampled > 1 ? 1 : m->sampled) * v->trace_window_ms;
				t->budget_work_window_ms += v->trace_window_ms;
			}
		}
	}
	for (size_t i = 0; i < v->ncalls; i++)
		if (isfinite(v->calls[i].measured) && isfinite(v->calls[i].count))
			c->budget.measured += v->calls[i].measured;
}

static void take_trace(struct ctx *c, const struct obs_view *v, long seq)
{
	if (!v->has_trace)
		return;
	take_call_time(c, &v->call_time);
	take_budget(c, v);
	double window_ms = v->trace_window_ms;
	c->trace_windows++;
	if (isfinite(window_ms) && window_ms > 0)
		c->trace_ms += window_ms;
	for (size_t i = 0; i < v->ntrace_foreign && json_array_size(c->foreign) < 20; i++) {
		bool dup = false;
		for (size_t k = 0; k < json_array_size(c->foreign) && !dup; k++)
			dup = strcmp(json_string_value(json_array_get(c->foreign, k)),
			             v->trace_foreign[i]) == 0;
		if (!dup)
			json_array_append_new(c->foreign, json_string(v->trace_foreign[i]));
	}
	for (size_t i = 0; i < v->ntrace_modules && i < FUSE_MAX_LIST; i++)
		mark_traced_window(c, v->trace_modules[i], seq, window_ms);
	for (size_t i = 0; i < v->ncalls && i < FUSE_MAX_FUNCTIONS; i++) {
		const struct obs_view_call *e = &v->calls[i];
		const char *mod = e->module, *fn = e->function;
		double arity = e->arity, count = e->count;
		if (!mod || !fn || !isfinite(arity) || arity < 0 || arity > 255 ||
		    !isfinite(count) || count < 0)
			continue;
		mark_traced_window(c, mod, seq, window_ms);
		char key[2 * FUSE_MAX_NAME + 16];
		snprintf(key, sizeof(key), "%.*s.%.*s/%d", FUSE_MAX_NAME, mod, FUSE_MAX_NAME, fn,
		         (int)arity);
		struct func_stat *f = gi_map_get(&c->funcs, key);
		if (!f) {
			if (c->func_list.len >= FUSE_MAX_FUNCTIONS)
				continue;
			f = gi_arena_calloc(&c->arena, 1, sizeof(*f));
			f->module = fuse_ctx_strdup(c, mod);
			f->function = fuse_ctx_strdup(c, fn);
			f->arity = (long)arity;
			f->kind = fuse_classify_function(c->cfg, fn);
			f->min_present = INFINITY;
			gi_map_put(&c->funcs, key, f);
			gi_vec_push(&c->func_list, &f);
		}
		double time_us = e->time_us, time_calls = e->time_calls;
		if (isfinite(time_us) && time_us >= 0 && isfinite(time_calls) && time_calls >= 0) {
			f->time_us += time_us;
			f->time_calls += time_calls;
		}
		if (isfinite(e->measured) && isfinite(e->high) && e->high >= count) {
			f->estimated = true;
			f->measured += e->measured;
			double sd = (e->high - count) / 1.96; /* the upper side: never clipped */
			if (e->carried)
				f->carried_sd += sd;
			else
				f->variance += sd * sd;
			f->window_sumsq += count * count;
			if (e->unsteady)
				f->unsteady = true;
		}
		f->total += count;
		f->present++;
		if (count < f->min_present)
			f->min_present = count;
		if (count > f->max)
			f->max = count;
		struct traced_mod *t = traced_get(c, mod);
		t->calls += count;
		if (strcmp(f->kind, "pipeline") == 0)
			t->raw_pipeline += count;
	}
}

static void take_errors(struct ctx *c, const struct obs_view *v)
{
	for (size_t i = 0; i < v->nerrors && i < FUSE_MAX_LIST; i++) {
		if (json_array_size(c->errors) >= 20)
			break;
		bool dup = false;
		for (size_t k = 0; k < json_array_size(c->errors) && !dup; k++)
			dup = strcmp(json_string_value(json_array_get(c->errors, k)),
			             v->errors[i]) == 0;
		if (!dup)
			json_array_append_new(c->errors, json_string(v->errors[i]));
	}
}

/* The observer's cost in this snapshot's window, added to the session's. */
static void take_observer(struct ctx *c, const struct obs_view *s)
{
	const struct obs_view_observer *o = &s->observer;
	double w = s->window_ms;
	if (!o->present || !isfinite(o->cost) || !isfinite(w) || w <= 0)
		return;
	c->obs.windows++;
	c->obs.window_ms += w;
	c->obs.cost_ms += o->cost * w;
	if (isfinite(o->share))
		c->obs.share_ms += o->share * w;
	if (isfinite(o->counting)) {
		c->obs.counting_ms += o->counting * w;
		c->obs.with_counting++;
	}
	if (o->cost > c->obs.cost_max)
		c->obs.cost_max = o->cost;
	if (isfinite(o->budget))
		c->obs.budget = o->budget;
	if (!o->within_budget)
		c->obs.over++;
	if (isfinite(o->reductions))
		c->obs.reductions += o->reductions;
	if (isfinite(o->other_processes) && o->other_processes > c->obs.other_processes_max)
		c->obs.other_processes_max = o->other_processes;
	if (isfinite(o->sample_period_ms))
		c->obs.period_asked = o->sample_period_ms;
	if (isfinite(o->sample_period_used_ms) && o->sample_period_used_ms > c->obs.period_max)
		c->obs.period_max = o->sample_period_used_ms;
	if (isfinite(o->scan_every) && o->scan_every > c->obs.scan_every_max) {
		c->obs.scan_every_max = o->scan_every;
		c->obs.scan_every_ms = o->scan_every * w;
	}
}

void fuse_take_snapshot(struct ctx *c, const struct obs_view *s, long seq)
{
	take_observer(c, s);
	double ts = s->timestamp_ms;
	if (isfinite(ts)) {
		if (!isfinite(c->first_ts))
			c->first_ts = ts;
		c->last_ts = ts;
	}
	metric_add(&c->m_t, isfinite(ts) && isfinite(c->first_ts) ? (ts - c->first_ts) / 1000.0
	                                                          : (double)seq);
	double sched = s->schedulers_online;
	if (isfinite(sched) && sched > c->schedulers && sched < 100000)
		c->schedulers = (int)sched;
	if (!c->otp_release)
		c->otp_release = fuse_ctx_strdup(c, s->otp_release);
	if (!c->node)
		c->node = fuse_ctx_strdup(c, s->node);
	metric_add(&c->m_mem, s->memory.total);
	metric_add(&c->m_binary, s->memory.binary);
	metric_add(&c->m_ets, s->memory.ets);
	metric_add(&c->m_processes_mem, s->memory.processes);
	metric_add(&c->m_atom, s->memory.atom);
	metric_add(&c->m_code, s->memory.code);
	metric_add(&c->m_system, s->memory.system);
	metric_add(&c->m_procs, s->processes_count);
	double rq = s->run_queue_total;
	metric_add(&c->m_runq, rq);
	double util = s->utilisation_total;
	metric_add(&c->m_util, util);
	metric_add(&c->m_rps, s->reductions_per_second);
	double sched_now = isfinite(sched) && sched > 0 ? sched : 1;
	if (isfinite(rq) && rq > c->thr.cpu_run_queue_per_scheduler * sched_now)
		c->runq_above++;
	if (isfinite(util) && util >= c->thr.cpu_utilisation)
		c->util_high++;
	double delta = s->reductions_delta;
	if (isfinite(delta) && delta > 0)
		c->total_reductions += delta;
	double w = s->window_ms;
	if (isfinite(w) && w > 0)
		c->total_window_ms += w;
	/* a snapshot without a scan repeats the last scan's lists: counted
	 * once, at the scan (whose deltas span the windows since the one before) */
	if (!s->top_carried) {
		take_cpu(c, &s->top_reductions, seq);
		take_process_state(c, &s->top_reductions, seq);
		take_process_state(c, &s->top_memory, seq);
		take_process_state(c, &s->top_message_queue, seq);
	}
	take_trace(c, s, seq);
	take_errors(c, s);
	fuse_executing_take(c->executing, s);
}
