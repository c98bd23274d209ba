/*
 * fuse.c - builds a profile: one pass over an observation's snapshots
 * (docs/SNAPSHOT.md) accumulates per-metric statistics, per-module and
 * per-process reductions, mailbox and memory histories and per-function
 * trace counts; a second step joins modules and functions with the knowledge
 * graph (kg_query module_details / function_details) and classifies traced
 * functions; the rules of rules.c then rank recommendations. The profile's
 * shape is docs/PROFILE.md.
 *
 * Invariants: every size taken from the input is capped (fuse_int.h); all
 * working memory lives in one arena freed at the end; the inputs are only
 * read. Reductions per module are sums of per-interval deltas of the
 * processes attributed to it, never lifetime totals.
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
#include "fuse/fuse.h"
#include "fuse/fuse_int.h"
#include "graph/query.h"
#include "observe/snapshot_view.h"

static const char *const default_reads[] = {
    "get",       "get_by", "all",     "one",    "fetch", "list",   "lookup", "exists", "count",
    "aggregate", "stream", "preload", "search", "find",  "select", "read",   "reload", NULL,
};
static const char *const default_writes[] = {
    "insert",     "update",     "delete",      "put",   "create", "upsert", "insert_all",
    "update_all", "delete_all", "transaction", "write", "remove", "save",   NULL,
};
static const char *const default_pipeline[] = {"prepare_opts", "default_options", "prepare_query",
                                               NULL};

/* A word matches a function name when the name, without a trailing ? or !,
 * equals it or starts with it followed by '_' (get matches get_by_id). */
static bool name_matches(const char *name, const char *word)
{
	size_t wl = strlen(word);
	while (wl > 0 && (word[wl - 1] == '?' || word[wl - 1] == '!'))
		wl--;
	size_t nl = strlen(name);
	while (nl > 0 && (name[nl - 1] == '?' || name[nl - 1] == '!'))
		nl--;
	if (wl == 0 || nl < wl || strncmp(name, word, wl) != 0)
		return false;
	return nl == wl || name[wl] == '_';
}

static bool list_matches(const char *const *list, const char *name)
{
	for (size_t i = 0; list[i]; i++)
		if (name_matches(name, list[i]))
			return true;
	return false;
}

static bool list_exact(const char *const *list, const char *name)
{
	for (size_t i = 0; list[i]; i++)
		if (strcmp(list[i], name) == 0)
			return true;
	return false;
}

const char *fuse_classify_function(const struct fuse_config *cfg, const char *name)
{
	const char *const *reads = cfg && cfg->read_names ? cfg->read_names : default_reads;
	const char *const *writes = cfg && cfg->write_names ? cfg->write_names : default_writes;
	const char *const *pipe =
	    cfg && cfg->pipeline_names ? cfg->pipeline_names : default_pipeline;
	if (!name)
		return "other";
	if (list_exact(pipe, name))
		return "pipeline";
	/* Writes first: get_and_update changes data, list_updates is rare. */
	if (list_matches(writes, name))
		return "write";
	if (list_matches(reads, name))
		return "read";
	return "other";
}

/* ---- accumulators -------------------------------------------------- */

struct metric {
	double sum, peak, first, last;
	long n;
	struct gi_vec values; /* double, one per snapshot (NAN when missing) */
};

struct mod_stat {
	const char *name;
	double reductions;
	long samples, seen_seq;
	double mem_cur, mem_peak;
	long mem_seq;
	long processes_max, proc_cur, proc_seq;
};

struct proc_stat {
	const char *pid, *name, *module, *initial_call;
	const char *running; /* the application module of its current function, last seen */
	double reductions;
	long cpu_samples, seen_seq;
	double queue_first, queue_last, queue_max;
	long queue_samples, queue_rises, queue_steps;
	double queue_head_sum, queue_tail_sum; /* over the first and last quarter */
	long queue_first_seq, queue_last_seq;
	double mem_first, mem_last;
	long mem_samples;
	bool logger;
};

struct func_stat {
	const char *module, *function;
	long arity;
	const char *kind; /* read/write/pipeline/other, or private (from the graph) */
	bool internal;    /* the graph knows only callers in its own module */
	double total, min_present, max;
	long present;
	double time_us, time_calls; /* call_time: own time and calls in flagged processes */
	/* Under an overhead budget: the calls counted, and the variance of the
	 * total from the windows' intervals (independent windows add their
	 * variances; a carried window repeats an earlier one's figures, so its
	 * error adds in full: carried_sd). */
	bool estimated, unsteady;
	double measured, variance, carried_sd, window_sumsq;
	double est_low, est_high; /* the pooled interval (pool_estimates) */
	bool pooled;              /* scaled by the counted time over the session */
	/* The workload model (docs/RULES.md): what the function does to the
	 * data, on which evidence, and through which data layer. */
	const char *cls;   /* read, write, mixed, unknown, compute, pipeline */
	const char *basis; /* driver, graph, runtime, name */
	const char *layer; /* the data-layer module it reaches, or NULL */
	unsigned reach;    /* REACH_* bits of its static paths (where its data lives) */
	bool split;        /* runtime split: op_reads/op_writes hold its operations */
	double op_reads, op_writes;
};

/* What a function reaches in the data layer (bit set) through its static
 * call paths; memoised per function in ctx.reach. */
#define REACH_READ    1u
#define REACH_WRITE   2u
#define REACH_UNKNOWN 4u
#define REACH_DB      8u
#define REACH_OUTSIDE 16u   /* a driver whose data leaves the VM (sockets, ports) */
#define REACH_IN_VM   32u   /* mnesia: ETS tables of the node (ram/disc_copies) */
#define REACH_DETS    64u   /* DETS: a file behind one server process */
#define REACH_DEPTH   6     /* call edges followed from a traced function */
#define REACH_QUERIES 20000 /* function_details queries per profile */
/* A traced module is a data layer by its driver calls only when functions
 * that touch the driver's data make at least this share of its counted
 * calls (docs/RULES.md, "Where data lives"). */
#define DATA_LAYER_CALL_SHARE 0.10

struct reach {
	unsigned effects;
	const char *layer; /* the data-layer module reached first */
	const char *basis; /* driver, graph, name, or NULL */
	int depth;         /* the depth it was computed with */
	bool busy;         /* being computed: a cycle sees nothing */
};

struct traced_mod {
	const char *name;
	long windows, seen_seq;
	double window_ms;
	double calls, raw_pipeline;            /* every traced call; pipeline helper calls */
	double reads, writes, pipeline, other; /* operations: see recount_operations */
	double reads_in_vm;                    /* reads whose data is ETS already (mnesia) */
	double layer_share;                    /* calls reaching a driver: NAN unknown, <0 unset */
	json_t *calls_traced;                  /* other traced modules its functions call */
	/* under a budget, over the session: the windows' time, the time it
	 * counted, and the node's work done while it counted (as time at the
	 * window's mean rate), for the pooled estimate (pool_estimates) */
	double budget_window_ms, budget_time_ms, budget_work_ms, budget_work_window_ms;
};

struct ctx {
	struct gi_arena arena;
	const struct fuse_config *cfg;
	struct fuse_thresholds thr;
	struct kg_db *graph;
	bool graph_ok;
	struct gi_map mods, procs, funcs, traced, details, reach;
	long graph_queries;
	struct gi_vec mod_list, proc_list, func_list, traced_list; /* pointers */
	struct metric m_mem, m_procs, m_runq, m_util, m_rps, m_t;
	struct metric m_binary, m_ets, m_processes_mem, m_atom, m_code, m_system;
	double total_reductions, total_window_ms;
	long runq_above, util_high;
	int schedulers;
	long nsnap, quarter, total_snapshots; /* quarter: snapshots in a quarter */
	const char *otp_release, *node;
	double first_ts, last_ts;
	json_t *errors; /* unique error strings */
	struct call_time_stat {
		long windows; /* snapshots with a call_time section */
		double flagged_sum, flagged_max, refused_max, trace_messages;
		bool suspended, isolated;
	} ct;
	struct budget_stat {
		long windows, paused, duty_n, exposure_n; /* snapshots under an overhead budget */
		double overhead, cost, duty_sum, exposure_sum, measured, traced_ms;
	} budget;
	/* the observer's own cost over the session (snapshots' `observer`),
	 * weighted by their windows */
	struct observer_stat {
		long windows, over, with_counting, counting_full;
		double window_ms, cost_ms, share_ms, counting_ms, cost_max, budget, reductions;
		double other_processes_max, period_asked, period_max;
	} obs;
	/* tracing over the session: windows with a trace section, their time,
	 * and what other tools held (unique notes, shared) */
	long trace_windows;
	double trace_ms;
	json_t *foreign;
	struct fuse_executing *executing;
	bool source_graph; /* the graph holds the project's source (not only object code) */
};

static void metric_init(struct metric *m)
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

static double metric_avg(const struct metric *m)
{
	return m->n ? m->sum / (double)m->n : NAN;
}

/* Average of the finite values in the first (head true) or last quarter. */
static double metric_quarter(const struct metric *m, bool head)
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

static const char *ctx_strdup(struct ctx *c, const char *s)
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
	m->name = ctx_strdup(c, name);
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
	t->name = ctx_strdup(c, name);
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
	s->pid = ctx_strdup(c, pid);
	s->name = ctx_strdup(c, p->registered_name);
	s->module = ctx_strdup(c, p->module);
	s->initial_call = ctx_strdup(c, p->initial_call);
	s->logger = process_is_logger(p);
	s->seen_seq = -1;
	s->queue_first = s->mem_first = NAN;
	gi_map_put(&c->procs, pid, s);
	gi_vec_push(&c->proc_list, &s);
	return s;
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
		s->running = ctx_strdup(c, module);
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
			f->module = ctx_strdup(c, mod);
			f->function = ctx_strdup(c, fn);
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
}

static void take_snapshot(struct ctx *c, const struct obs_view *s, long seq)
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
		c->otp_release = ctx_strdup(c, s->otp_release);
	if (!c->node)
		c->node = ctx_strdup(c, s->node);
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
	take_cpu(c, &s->top_reductions, seq);
	take_process_state(c, &s->top_reductions, seq);
	take_process_state(c, &s->top_memory, seq);
	take_process_state(c, &s->top_message_queue, seq);
	take_trace(c, s, seq);
	take_errors(c, s);
	fuse_executing_take(c->executing, s);
}

/* ---- graph ------------------------------------------------------------- */

/* module_details of `module`, cached (borrowed), or NULL when unknown. */
static json_t *graph_module(struct ctx *c, const char *module)
{
	if (!c->graph || !module)
		return NULL;
	json_t *d = gi_map_get(&c->details, module);
	if (d)
		return json_is_object(d) ? d : NULL;
	struct kg_query_params p = {0};
	p.module = module;
	json_t *out = NULL;
	int rc = kg_query(c->graph, "module_details", &p, &out);
	if (rc == 0 && json_is_object(out)) {
		c->graph_ok = true;
	} else {
		json_decref(out);
		out = json_null();
	}
	gi_map_put(&c->details, module, out);
	return json_is_object(out) ? out : NULL;
}

static json_t *graph_function(struct ctx *c, const char *module, const char *fn, long arity)
{
	if (!c->graph)
		return NULL;
	char fa[FUSE_MAX_NAME + 16];
	snprintf(fa, sizeof(fa), "%.*s/%ld", FUSE_MAX_NAME, fn, arity);
	struct kg_query_params p = {0};
	p.module = module;
	p.function = fa;
	json_t *out = NULL;
	if (kg_query(c->graph, "function_details", &p, &out) != 0 || !json_is_object(out)) {
		json_decref(out);
		return NULL;
	}
	c->graph_ok = true;
	return out;
}

static bool module_uses_ecto_repo(json_t *details)
{
	json_t *uses = json_object_get(details, "uses");
	size_t n = json_is_array(uses) ? json_array_size(uses) : 0;
	for (size_t i = 0; i < n; i++) {
		const char *u = json_string_value(json_array_get(uses, i));
		if (u && strcmp(u, "Ecto.Repo") == 0)
			return true;
	}
	return false;
}

static struct traced_mod *traced_find(struct ctx *c, const char *module)
{
	return gi_map_get(&c->traced, module);
}

/* How many distinct functions of `module` are named like Ecto.Repo's API
 * (get, all, insert, ...): from the graph when it knows the module, else
 * from the traced functions. */
static int repo_api_functions(struct ctx *c, const char *module, json_t *details)
{
	int n = 0;
	json_t *fns = json_object_get(details, "functions");
	if (json_array_size(fns) > 0) {
		for (size_t i = 0; i < json_array_size(fns) && i < FUSE_MAX_LIST; i++) {
			json_t *f = json_array_get(fns, i);
			const char *v = gi_json_str(f, "visibility");
			if ((!v || strcmp(v, "private") != 0) &&
			    fuse_repo_api_effect(gi_json_str(f, "name")) != FUSE_EFFECT_NONE)
				n++;
		}
		return n;
	}
	for (size_t i = 0; i < c->func_list.len; i++) {
		struct func_stat *f = GI_VEC_AT(&c->func_list, struct func_stat *, i);
		if (strcmp(f->module, module) == 0 &&
		    fuse_repo_api_effect(f->function) != FUSE_EFFECT_NONE)
			n++;
	}
	return n;
}

/* Whether `module`.`fn`/`arity` calls a driver function that touches data
 * (not connection management, not a schema change), itself or through the
 * functions of its own module, `depth` edges deep. */
static bool calls_driver_locally(struct ctx *c, const char *module, const char *fn, long arity,
                                 int depth)
{
	if (c->graph_queries >= REACH_QUERIES)
		return false;
	c->graph_queries++;
	json_t *d = graph_function(c, module, fn, arity);
	json_t *ce = json_object_get(d, "callees");
	bool found = false;
	for (size_t k = 0; !found && k < json_array_size(ce) && k < 200; k++) {
		json_t *e = json_array_get(ce, k);
		enum fuse_effect effect;
		found =
		    fuse_driver_effect(gi_json_str(e, "module"), gi_json_str(e, "name"), &effect) &&
		    effect != FUSE_EFFECT_NONE;
	}
	for (size_t k = 0; !found && depth > 0 && k < json_array_size(ce) && k < 50; k++) {
		json_t *e = json_array_get(ce, k);
		const char *cm = gi_json_str(e, "module"), *cn = gi_json_str(e, "name");
		double ca = gi_json_num(e, "arity");
		if (cm && cn && isfinite(ca) && strcmp(cm, module) == 0 &&
		    !(strcmp(cn, fn) == 0 && (long)ca == arity))
			found = calls_driver_locally(c, module, cn, (long)ca, depth - 1);
	}
	json_decref(d);
	return found;
}

/* The share of traced module `t`'s counted calls made by functions that
 * touch a driver's data (calls_driver_locally, three edges into its own
 * module), NAN when none was counted; memoised. A module is a data layer
 * for its callers when its hot paths reach the driver, not because one
 * cold function (a terminate/2, a start-up schema change) calls it. */
static double driver_call_share(struct ctx *c, struct traced_mod *t)
{
	if (t->layer_share >= 0 || isnan(t->layer_share))
		return t->layer_share;
	double all = 0, reaching = 0;
	for (size_t i = 0; i < c->func_list.len; i++) {
		struct func_stat *f = GI_VEC_AT(&c->func_list, struct func_stat *, i);
		if (strcmp(f->module, t->name) != 0 || !(f->total > 0))
			continue;
		all += f->total;
		if (calls_driver_locally(c, t->name, f->function, f->arity, 3))
			reaching += f->total;
	}
	t->layer_share = all > 0 ? reaching / all : NAN;
	return t->layer_share;
}

/* Why `module` is a database module (a data layer), best evidence first:
 * it `use`s Ecto.Repo; the graph shows it calling a database driver; it is
 * traced and calls Ecto-style pipeline callbacks (prepare_query ...); last,
 * and never on the name alone: its name ends in "Repo" and it defines at
 * least two of Ecto.Repo's API functions. NULL when it is not one. Drivers
 * themselves are not data layers of the application. The reason is a
 * static string, or copied into the arena. */
static const char *database_reason(struct ctx *c, const char *module)
{
	if (!module || fuse_driver_module(module))
		return NULL;
	json_t *d = graph_module(c, module);
	if (d && gi_json_true(d, "external"))
		return NULL;
	if (d && module_uses_ecto_repo(d))
		return "it uses Ecto.Repo";
	json_t *deps = json_object_get(d, "dependencies");
	struct traced_mod *counted = traced_find(c, module);
	double hot = counted ? driver_call_share(c, counted) : NAN;
	for (size_t i = 0; i < json_array_size(deps) && i < FUSE_MAX_LIST; i++) {
		const char *m = gi_json_str(json_array_get(deps, i), "module");
		/* Counted, and its driver calls are on cold paths only. */
		if (isfinite(hot) && hot < DATA_LAYER_CALL_SHARE)
			break;
		if (fuse_driver_module(m)) {
			char why[FUSE_MAX_NAME + 32];
			snprintf(why, sizeof(why), "it calls the driver %s", m);
			return ctx_strdup(c, why);
		}
	}
	struct traced_mod *t = traced_find(c, module);
	if (t && t->raw_pipeline > 0)
		return "it runs Ecto-style pipeline callbacks";
	if (gi_str_ends_with(module, "Repo") && repo_api_functions(c, module, d) >= 2)
		return "a Repo with Repo functions";
	return NULL;
}

static bool module_is_database(struct ctx *c, const char *module)
{
	return database_reason(c, module) != NULL;
}

static unsigned effect_bits(enum fuse_effect e)
{
	switch (e) {
	case FUSE_EFFECT_READ:
		return REACH_DB | REACH_READ;
	case FUSE_EFFECT_WRITE:
		return REACH_DB | REACH_WRITE;
	case FUSE_EFFECT_UNKNOWN:
		return REACH_DB | REACH_UNKNOWN;
	case FUSE_EFFECT_NONE:
		break;
	}
	return REACH_DB;
}

static const struct reach *reach_function(struct ctx *c, const char *module, const char *fn,
                                          long arity, int depth);

static unsigned storage_bit(enum fuse_storage s)
{
	return s == FUSE_STORAGE_MNESIA ? REACH_IN_VM
	       : s == FUSE_STORAGE_DETS ? REACH_DETS
	                                : REACH_OUTSIDE;
}

/* What the function of `details` (module, name) reaches: driver calls
 * with their effect, Ecto.Repo API calls, and what its project callees
 * reach, `depth` edges deep. An effect the driver leaves to the statement
 * (UNKNOWN) is resolved by the function's name when nothing else tells. */
static void reach_compute(struct ctx *c, const char *module, const char *fn, json_t *details,
                          int depth, struct reach *r)
{
	unsigned direct = 0, inherited = 0;
	const char *layer = NULL;
	enum fuse_effect e;
	json_t *ce = json_object_get(details, "callees");
	size_t n = json_is_array(ce) ? json_array_size(ce) : 0;
	for (size_t k = 0; k < n && k < 200; k++) {
		json_t *callee = json_array_get(ce, k);
		const char *cm = gi_json_str(callee, "module"), *cn = gi_json_str(callee, "name");
		double ca = gi_json_num(callee, "arity");
		if (!cm || !cn || !isfinite(ca))
			continue;
		if (fuse_driver_effect(cm, cn, &e)) {
			direct |= effect_bits(e);
			if (e != FUSE_EFFECT_NONE)
				direct |= storage_bit(fuse_driver_storage(cm));
			if (!layer)
				layer = ctx_strdup(c, module);
			continue;
		}
		json_t *cd = strcmp(cm, module) != 0 ? graph_module(c, cm) : NULL;
		if (cd && module_uses_ecto_repo(cd) &&
		    (e = fuse_repo_api_effect(cn)) != FUSE_EFFECT_NONE) {
			direct |= effect_bits(e) | REACH_OUTSIDE;
			if (!layer)
				layer = ctx_strdup(c, cm);
			continue;
		}
		if (depth <= 0 || (cd && gi_json_true(cd, "external")) ||
		    (strcmp(cm, module) != 0 && !cd))
			continue;
		const struct reach *sub = reach_function(c, cm, cn, (long)ca, depth - 1);
		inherited |= sub->effects;
		if (!layer && sub->layer)
			layer = sub->layer;
	}
	json_t *md = graph_module(c, module);
	if (md && module_uses_ecto_repo(md) && (e = fuse_repo_api_effect(fn)) != FUSE_EFFECT_NONE) {
		direct |= effect_bits(e) | REACH_OUTSIDE;
		layer = ctx_strdup(c, module);
	}
	unsigned all = direct | inherited;
	const unsigned rw = REACH_READ | REACH_WRITE;
	r->basis = (direct & rw) ? "driver" : (inherited & rw) ? "graph" : NULL;
	/* Last resort, the name: for a database call of unknown effect, and
	 * for the operations of a data layer whose driver calls the graph
	 * cannot see (an adapter called through a variable). */
	bool db_module = module_is_database(c, module);
	if (!(all & rw) && ((all & REACH_UNKNOWN) || (!all && db_module))) {
		const char *kind = fuse_classify_function(c->cfg, fn);
		if (strcmp(kind, "read") == 0 || strcmp(kind, "write") == 0) {
			all |= REACH_DB | (kind[0] == 'r' ? REACH_READ : REACH_WRITE);
			r->basis = "name";
			if (!layer)
				layer = ctx_strdup(c, module);
		}
	}
	if (!layer && (all & REACH_DB) && db_module)
		layer = ctx_strdup(c, module);
	r->effects = all;
	r->layer = layer;
}

static const struct reach *reach_function(struct ctx *c, const char *module, const char *fn,
                                          long arity, int depth)
{
	char key[2 * FUSE_MAX_NAME + 24];
	snprintf(key, sizeof(key), "%.*s.%.*s/%ld", FUSE_MAX_NAME, module, FUSE_MAX_NAME, fn,
	         arity);
	struct reach *r = gi_map_get(&c->reach, key);
	if (r && (r->busy || r->depth >= depth))
		return r;
	if (!r) {
		r = gi_arena_calloc(&c->arena, 1, sizeof(*r));
		gi_map_put(&c->reach, key, r);
	}
	if (c->graph_queries >= REACH_QUERIES)
		return r;
	c->graph_queries++;
	r->busy = true;
	r->depth = depth;
	json_t *d = graph_function(c, module, fn, arity);
	struct reach out = {0};
	if (d)
		reach_compute(c, module, fn, d, depth, &out);
	json_decref(d);
	r->effects = out.effects;
	r->layer = out.layer;
	r->basis = out.basis;
	r->busy = false;
	return r;
}

/* Whether a function reaching `effects` waits on data outside the VM (or
 * in DETS): a database it reaches whose storage is not known (an adapter
 * called through a variable, a name) counts as outside; reads of mnesia's
 * ETS tables alone do not. */
static bool reach_leaves_vm(unsigned effects)
{
	if (!(effects & REACH_DB))
		return false;
	return (effects & (REACH_OUTSIDE | REACH_DETS)) || !(effects & REACH_IN_VM);
}

/* Where the data a set of effects reaches lives: "external" (a driver
 * over sockets or ports, or a database whose driver the graph cannot see),
 * "dets", "mnesia" (ETS tables of the node, unless the node says a table
 * is disc_only_copies), or NULL when no database is reached. */
static const char *storage_of(unsigned effects)
{
	if (!(effects & REACH_DB))
		return NULL;
	if ((effects & REACH_OUTSIDE) || !(effects & (REACH_IN_VM | REACH_DETS)))
		return "external";
	return (effects & REACH_DETS) ? "dets" : "mnesia";
}

/* The class of a set of effects: any write makes a write (read-then-write
 * changes data), reads alone a read. */
static const char *class_of(unsigned effects)
{
	if (effects & REACH_WRITE)
		return "write";
	if (effects & REACH_READ)
		return "read";
	if (effects & REACH_UNKNOWN)
		return "unknown";
	return "compute";
}

static json_t *graph_fields(struct ctx *c, const char *module)
{
	json_t *d = graph_module(c, module);
	json_t *g = json_object();
	json_object_set_new(g, "in_graph", json_boolean(d != NULL));
	static const char *const keys[][2] = {
	    {"ca", "ca"},
	    {"ce", "ce"},
	    {"in_degree", "in_degree"},
	    {"out_degree", "out_degree"},
	    {"complexity", "complexity_total"},
	    {"complexity_max", "complexity_max"},
	    {"instability", "instability"},
	    {"centrality", "centrality"},
	    {"hub", "hub"},
	    {"zone", "zone"},
	    {"heat", "heat"},
	    {"change_risk", "change_risk"},
	    {"file", "file"},
	    {"external", "external"},
	};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *v = d ? json_object_get(d, keys[i][1]) : NULL;
		json_object_set_new(g, keys[i][0], v ? json_incref(v) : json_null());
	}
	return g;
}

/* ---- output sections --------------------------------------------------- */

static json_t *metric_json(const struct metric *m)
{
	json_t *o = json_object();
	json_object_set_new(o, "peak", fuse_json_num(m->peak));
	json_object_set_new(o, "avg", fuse_json_num(metric_avg(m)));
	json_object_set_new(o, "first", fuse_json_num(m->first));
	json_object_set_new(o, "last", fuse_json_num(m->last));
	json_object_set_new(o, "samples", json_integer(m->n));
	return o;
}

static json_t *growth_json(const struct metric *m)
{
	json_t *o = json_object();
	double head = metric_quarter(m, true), tail = metric_quarter(m, false);
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

static json_t *build_session(struct ctx *c, json_t *fin)
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

static json_t *build_metrics(struct ctx *c)
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

static json_t *build_series(struct ctx *c)
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
static json_t *series_gaps(const struct ctx *c, json_t *fin)
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
	struct traced_mod *t = traced_find(c, f->module);
	return t && t->window_ms > 0 ? f->total / (t->window_ms / 1000.0) : NAN;
}

/* The traced function module.function/arity, or NULL. */
static struct func_stat *func_find(struct ctx *c, const char *module, const char *fn, long arity)
{
	char key[2 * FUSE_MAX_NAME + 16];
	snprintf(key, sizeof(key), "%.*s.%.*s/%d", FUSE_MAX_NAME, module, FUSE_MAX_NAME, fn,
	         (int)arity);
	return gi_map_get(&c->funcs, key);
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
		struct func_stat *t = func_find(c, module, f->function, f->arity);
		if (t)
			json_object_set_new(o, "calls", fuse_json_num(t->total));
		json_object_set_new(o, "by", json_string("samples"));
		json_array_append_new(a, o);
	}
	if (json_array_size(a) > 0 || !traced_find(c, module))
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
static json_t *build_ownership_modules(struct ctx *c, int top, bool skip_wrappers)
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
		json_object_set_new(o, "traced", json_boolean(traced_find(c, m->name) != NULL));
		json_object_set_new(o, "basis", json_string("ownership"));
		json_object_set_new(o, "graph", graph_fields(c, m->name));
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
	json_t *d = graph_module(c, module);
	const char *origin = d ? gi_json_str(d, "origin") : NULL;
	return d && origin && strcmp(origin, "source") == 0 && !gi_json_true(d, "external");
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

static void attribute_executing(struct ctx *c)
{
	c->source_graph = c->graph && fuse_executing_any_module(c->executing, module_in_source, c);
	fuse_executing_attribute(c->executing, module_in_project, c);
}

/* Hot modules from the executing view (where the sampled processes ran),
 * project and platform alike, wrappers never, above the floor. */
static json_t *build_executing_modules(struct ctx *c, int top)
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
		json_object_set_new(o, "traced", json_boolean(traced_find(c, e->module) != NULL));
		json_object_set_new(o, "basis", json_string("executing"));
		json_object_set_new(o, "graph", graph_fields(c, e->module));
		json_object_set_new(o, "hottest_functions", hottest_functions(c, e->module));
		json_array_append_new(a, o);
	}
	return a;
}

/* Hot functions from the executing view, above the floor, joined with the
 * trace counts and the graph's complexity where known. */
static json_t *build_hot_functions(struct ctx *c, int top)
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
		struct func_stat *t = func_find(c, e->module, e->function, e->arity);
		json_object_set_new(o, "calls", t ? fuse_json_num(t->total) : json_null());
		json_t *d = graph_function(c, e->module, e->function, e->arity);
		json_object_set_new(o, "cyclomatic",
		                    fuse_json_num(d ? gi_json_num(d, "cyclomatic") : NAN));
		json_decref(d);
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *mfa_list(json_t *arr)
{
	json_t *out = json_array();
	size_t n = json_is_array(arr) ? json_array_size(arr) : 0;
	for (size_t i = 0; i < n && i < 50; i++) {
		json_t *e = json_array_get(arr, i);
		const char *m = gi_json_str(e, "module"), *f = gi_json_str(e, "name");
		double ar = gi_json_num(e, "arity");
		char text[2 * FUSE_MAX_NAME + 16];
		if (!m || !f)
			continue;
		if (isfinite(ar))
			snprintf(text, sizeof(text), "%.*s.%.*s/%d", FUSE_MAX_NAME, m,
			         FUSE_MAX_NAME, f, (int)ar);
		else
			snprintf(text, sizeof(text), "%.*s.%.*s", FUSE_MAX_NAME, m, FUSE_MAX_NAME,
			         f);
		json_array_append_new(out, json_string(text));
	}
	return out;
}

/* The database module a function calls, directly or through functions of
 * its own module (lookup/1 -> from_store/1 -> Store.get/1), looking `depth`
 * local calls deep; copied into `buf`, or NULL. */
static const char *repo_callee(struct ctx *c, const char *module, json_t *details, int depth,
                               char *buf, size_t size)
{
	json_t *ce = json_object_get(details, "callees");
	size_t n = json_is_array(ce) ? json_array_size(ce) : 0;
	for (size_t k = 0; k < n && k < 50; k++) {
		const char *cm = gi_json_str(json_array_get(ce, k), "module");
		if (cm && strcmp(cm, module) != 0 && module_is_database(c, cm)) {
			gi_strlcpy(buf, cm, size);
			return buf;
		}
	}
	for (size_t k = 0; depth > 0 && k < n && k < 20; k++) {
		json_t *e = json_array_get(ce, k);
		const char *cm = gi_json_str(e, "module"), *name = gi_json_str(e, "name");
		double arity = gi_json_num(e, "arity");
		if (!cm || !name || strcmp(cm, module) != 0 || !isfinite(arity))
			continue;
		json_t *local = graph_function(c, module, name, (long)arity);
		const char *r = local ? repo_callee(c, module, local, depth - 1, buf, size) : NULL;
		json_decref(local);
		if (r)
			return r;
	}
	return NULL;
}

/* True when function_details lists callers and all are in `module`: then
 * the function is a step of another operation of the module (lookup/1
 * calling fetch/1), and counting both would count one operation twice. */
static bool only_local_callers(json_t *details, const char *module)
{
	json_t *callers = json_object_get(details, "callers");
	size_t n = json_is_array(callers) ? json_array_size(callers) : 0;
	for (size_t i = 0; i < n; i++) {
		const char *m = gi_json_str(json_array_get(callers, i), "module");
		if (!m || strcmp(m, module) != 0)
			return false;
	}
	return n > 0;
}

/* The function a compiler-generated lambda or comprehension belongs to:
 * "-to_maps/1-fun-0-" and "-all/2-lc$^0/1-0-" name to_maps/1 and all/2.
 * Copies the name into `name` and returns true, or false for other names. */
static bool lambda_parent(const char *fn, char *name, size_t size, long *arity)
{
	if (fn[0] != '-')
		return false;
	for (const char *slash = strchr(fn + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		const char *p = slash + 1;
		long a = 0;
		while (*p >= '0' && *p <= '9' && a < 256)
			a = a * 10 + (*p++ - '0');
		if (p == slash + 1 || *p != '-' || a >= 256)
			continue;
		size_t len = (size_t)(slash - (fn + 1));
		if (len == 0 || len >= size)
			return false;
		memcpy(name, fn + 1, len);
		name[len] = '\0';
		*arity = a;
		return true;
	}
	return false;
}

/* At most how many of the traced callee `g`'s calls `f` made: its calls
 * minus those of its other callers that are traced (their counts are
 * known); callers outside the traced modules may have made some too, so
 * this is an upper bound. */
static double calls_upper_bound(struct ctx *c, const struct func_stat *f, const struct func_stat *g)
{
	json_t *d = graph_function(c, g->module, g->function, g->arity);
	json_t *callers = json_object_get(d, "callers");
	double rest = g->total;
	for (size_t i = 0; i < json_array_size(callers) && i < 50; i++) {
		json_t *e = json_array_get(callers, i);
		const char *m = gi_json_str(e, "module"), *n = gi_json_str(e, "name");
		double a = gi_json_num(e, "arity");
		if (!m || !n || !isfinite(a))
			continue;
		if (strcmp(m, f->module) == 0 && strcmp(n, f->function) == 0 && (long)a == f->arity)
			continue;
		struct func_stat *other = func_find(c, m, n, (long)a);
		if (other)
			rest -= other->total;
	}
	json_decref(d);
	return rest > 0 ? rest : 0;
}

/* A function that reaches both reads and writes is a write, unless the
 * runtime counts bound its writes: each of its calls that writes calls one
 * of its callees that reach a write, so when those are all traced, their
 * calls (less what their other traced callers made) bound its writes, and
 * the rest of its calls are reads (a gen_server's handle_call serving many
 * lookups and a few registrations). An upper bound, so it errs towards
 * writes. No split when it calls a writing driver function itself. */
static void runtime_split(struct ctx *c, struct func_stat *f, json_t *d)
{
	json_t *ce = json_object_get(d, "callees");
	double writes = 0;
	bool reads = false;
	for (size_t k = 0; k < json_array_size(ce) && k < 50; k++) {
		json_t *e = json_array_get(ce, k);
		const char *cm = gi_json_str(e, "module"), *cn = gi_json_str(e, "name");
		double ca = gi_json_num(e, "arity");
		enum fuse_effect eff;
		if (!cm || !cn || !isfinite(ca))
			continue;
		if (fuse_driver_effect(cm, cn, &eff)) {
			if (eff == FUSE_EFFECT_WRITE || eff == FUSE_EFFECT_UNKNOWN)
				return; /* it writes itself: no callee counts bound it */
			reads |= eff == FUSE_EFFECT_READ;
			continue;
		}
		const struct reach *r = reach_function(c, cm, cn, (long)ca, REACH_DEPTH - 1);
		if (!(r->effects & (REACH_READ | REACH_WRITE)))
			continue;
		struct func_stat *g = traced_find(c, cm) ? func_find(c, cm, cn, (long)ca) : NULL;
		bool traced_module = traced_find(c, cm) != NULL;
		if (r->effects & REACH_WRITE) {
			if (!traced_module)
				return; /* an untraced writer: nothing bounds it */
			writes += g ? calls_upper_bound(c, f, g) : 0;
		} else {
			reads |= !traced_module || (g && g->total > 0);
		}
	}
	f->split = true;
	f->op_writes = fmin(writes, f->total);
	f->op_reads = reads ? f->total - f->op_writes : 0;
	f->cls = f->op_writes > 0 && f->op_reads > 0 ? "mixed"
	         : f->op_writes > 0                  ? "write"
	         : f->op_reads > 0                   ? "read"
	                                             : "compute";
	f->basis = "runtime";
}

/* Whether `d` (a function's graph node) calls a generic server's call. */
static bool calls_server(json_t *d)
{
	static const char *const servers[] = {":gen_server", "GenServer", ":gen_statem", ":gen",
	                                      NULL};
	json_t *ce = json_object_get(d, "callees");
	for (size_t k = 0; k < json_array_size(ce) && k < 50; k++) {
		const char *cm = gi_json_str(json_array_get(ce, k), "module");
		const char *cn = gi_json_str(json_array_get(ce, k), "name");
		for (size_t i = 0; cm && cn && servers[i]; i++)
			if (strcmp(cm, servers[i]) == 0 && strcmp(cn, "call") == 0)
				return true;
	}
	return false;
}

/* A gen_server's client function (depot_of/1 calling gen_server:call) in
 * a traced module whose handle_call/3 is traced: the call and the clause
 * that serves it are one operation, counted once, at handle_call, where
 * its effect is known. */
static bool is_server_proxy(struct ctx *c, const struct func_stat *f, json_t *d)
{
	return func_find(c, f->module, "handle_call", 3) && calls_server(d);
}

/* OTP behaviour callbacks that dispatch on the message they get (gen_server,
 * gen_event, gen_statem): each call runs one of many clauses. */
static bool is_message_dispatcher(const char *fn, long arity)
{
	static const struct {
		const char *name;
		long arity;
	} callbacks[] = {{"handle_call", 3},  {"handle_cast", 2},  {"handle_info", 2},
	                 {"handle_event", 2}, {"handle_event", 3}, {"handle_event", 4}};
	for (size_t i = 0; i < sizeof(callbacks) / sizeof(callbacks[0]); i++)
		if (strcmp(fn, callbacks[i].name) == 0 && arity == callbacks[i].arity)
			return true;
	return false;
}

/* Sets f->cls, f->basis and f->layer (docs/RULES.md, "The workload
 * model"). `d` is the function's graph node (or its parent's for a
 * lambda, named `fn`/`arity`), NULL when the graph does not know it. */
static void classify_traced(struct ctx *c, struct func_stat *f, json_t *d, const char *fn,
                            long arity)
{
	if (strcmp(f->kind, "pipeline") == 0) {
		f->cls = "pipeline";
		f->basis = "name";
		return;
	}
	if (!d) {
		/* No graph: the name word list is all there is. */
		const char *k = fuse_classify_function(c->cfg, f->function);
		f->cls = strcmp(k, "read") == 0 || strcmp(k, "write") == 0 ? k : "compute";
		f->basis = "name";
		if (strcmp(f->cls, "compute") != 0 && module_is_database(c, f->module))
			f->layer = f->module;
		return;
	}
	const struct reach *r = reach_function(c, f->module, fn, arity, REACH_DEPTH);
	f->cls = class_of(r->effects);
	f->basis = r->basis ? r->basis : "graph";
	f->layer = r->layer;
	f->reach = r->effects;
	if (!r->effects && is_server_proxy(c, f, d)) {
		f->cls = "proxy";
		return;
	}
	if ((r->effects & REACH_READ) && (r->effects & REACH_WRITE)) {
		runtime_split(c, f, d);
		/* A callback that serves many messages, one clause each (the graph
		 * folds the clauses into one function), is not a read-then-write:
		 * without the counts to split it, what its calls did is unknown. */
		if (!f->split && is_message_dispatcher(fn, arity))
			f->cls = "unknown";
	}
}

/* Whether a call made at module.fn/arity leads to the database: its call
 * paths reach a database call, or it (or a project function it calls,
 * `depth` edges deep) is a client of a server of its module whose
 * handle_call/3 reaches one (the graph does not follow a message, so the
 * client is joined with the callback that serves it). */
static bool leads_to_database(struct ctx *c, const char *module, const char *fn, long arity,
                              int depth)
{
	if (reach_leaves_vm(reach_function(c, module, fn, arity, REACH_DEPTH)->effects))
		return true;
	if (c->graph_queries >= REACH_QUERIES)
		return false;
	c->graph_queries++;
	json_t *d = graph_function(c, module, fn, arity);
	bool found =
	    d && calls_server(d) &&
	    reach_leaves_vm(reach_function(c, module, "handle_call", 3, REACH_DEPTH)->effects);
	json_t *ce = json_object_get(d, "callees");
	for (size_t k = 0; !found && depth > 0 && k < json_array_size(ce) && k < 20; k++) {
		json_t *e = json_array_get(ce, k);
		const char *cm = gi_json_str(e, "module"), *cn = gi_json_str(e, "name");
		double ca = gi_json_num(e, "arity");
		json_t *cd = cm ? graph_module(c, cm) : NULL;
		if (!cm || !cn || !isfinite(ca) || !cd || gi_json_true(cd, "external") ||
		    fuse_module_is_platform(cm))
			continue;
		found = leads_to_database(c, cm, cn, (long)ca, depth - 1);
	}
	json_decref(d);
	return found;
}

/* Marks each blocked call site of the executing summary `x` with whether
 * its call leads to the database, and sums those samples: the waiting that
 * goes to the database (rule 8's headroom finding). */
static void blocked_on_database(struct ctx *c, json_t *x)
{
	json_t *blocked = json_object_get(x, "blocked");
	json_t *sites = json_object_get(blocked, "call_sites");
	if (!json_is_object(blocked) || !c->graph)
		return;
	double samples = 0;
	for (size_t i = 0; i < json_array_size(sites); i++) {
		json_t *site = json_array_get(sites, i);
		char module[FUSE_MAX_NAME], function[FUSE_MAX_NAME];
		long arity;
		const char *mfa = gi_json_str(site, "function");
		bool db = mfa &&
		          fuse_frame_split(mfa, module, sizeof(module), function, sizeof(function),
		                           &arity) == 0 &&
		          leads_to_database(c, module, function, arity, 2);
		json_object_set_new(site, "database", json_boolean(db));
		/* Its samples waiting in log calls waited for the logger. */
		double n = gi_json_num(site, "samples"),
		       in_log = gi_json_num(site, "logger_samples");
		if (db && isfinite(n))
			samples += n - (isfinite(in_log) ? fmin(in_log, n) : 0);
	}
	double all = gi_json_num(blocked, "samples");
	double share = gi_json_num(blocked, "share_of_samples");
	json_object_set_new(blocked, "database_samples", fuse_json_num(samples));
	json_object_set_new(blocked, "database_share_of_blocked",
	                    fuse_json_num(all > 0 ? samples / all : NAN));
	json_object_set_new(
	    blocked, "database_share_of_samples",
	    fuse_json_num(all > 0 && isfinite(share) ? share * samples / all : NAN));
}

/* Records in f's module which other traced modules its function calls. */
static void note_traced_callees(struct ctx *c, struct func_stat *f, json_t *d)
{
	struct traced_mod *t = traced_find(c, f->module);
	json_t *ce = json_object_get(d, "callees");
	for (size_t k = 0; t && k < json_array_size(ce) && k < 200; k++) {
		const char *cm = gi_json_str(json_array_get(ce, k), "module");
		if (!cm || strcmp(cm, f->module) == 0 || !traced_find(c, cm) ||
		    json_array_size(t->calls_traced) >= 64)
			continue;
		bool dup = false;
		for (size_t i = 0; i < json_array_size(t->calls_traced) && !dup; i++)
			dup =
			    strcmp(json_string_value(json_array_get(t->calls_traced, i)), cm) == 0;
		if (!dup)
			json_array_append_new(t->calls_traced, json_string(cm));
	}
}

/* Under an overhead budget, a hotspot's calls are an estimate: the calls
 * counted (`measured`) and the 95% interval of the session's total (`low`,
 * `high`; docs/PROFILE.md); null when every call was counted. */
/* The session's estimate of each function counted under a budget
 * (docs/RULES.md "The estimator"): its calls counted over the session
 * (only the windows in which its module counted) scaled two ways, pooled
 * over the windows (ratios of sums, which a window with a tiny counted
 * interval cannot throw off as it throws off its own ratio): by the time
 * share, the windows' time over the time its module counted (calls per
 * counted second: right for callers at a pace of their own), and by the
 * work share, the windows' time over the node's work done while it counted
 * expressed as time (calls per reduction: right for a steady CPU-bound
 * mix, wrong where unrelated work comes and goes). The estimate is the
 * time-scaled one (its own exposure); the interval spans both,
 * widened by the windows' own error: their intervals, or, where the
 * windows' estimates scatter more than those say (a function called in
 * bursts), n windows x their variance (conservative, as it holds the
 * load's own changes too). The module's calls follow its functions'. */
static void pool_estimates(struct ctx *c)
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
		struct traced_mod *t = traced_find(c, f->module);
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

/* Every traced function, by calls, joined with function_details. Also sets
 * "calls_repo" (the Repo-like module it calls, or null) for the database
 * signature of rule 4. */
static json_t *build_hotspots(struct ctx *c)
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
		struct traced_mod *t = traced_find(c, f->module);
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
		json_t *d = graph_function(c, f->module, f->function, f->arity);
		/* A lambda has no node of its own: the readers fold its body into the
		 * function that defines it, so it joins that function, and it is a
		 * step of that function's work, never an operation of its own. */
		char parent[FUSE_MAX_NAME + 1];
		long parent_arity = 0;
		bool lambda =
		    !d && lambda_parent(f->function, parent, sizeof(parent), &parent_arity);
		if (lambda) {
			d = graph_function(c, f->module, parent, parent_arity);
			char of[FUSE_MAX_NAME + 24];
			snprintf(of, sizeof(of), "%s/%ld", parent, parent_arity);
			json_object_set_new(o, "lambda_of", json_string(of));
		}
		const char *visibility = lambda ? "private" : gi_json_str(d, "visibility");
		/* Pipeline helpers are steps by nature: always counted as such. */
		bool helper = strcmp(f->kind, "pipeline") == 0;
		if (!helper && visibility && strcmp(visibility, "private") == 0)
			f->kind = "private";
		json_object_set_new(o, "kind", json_string(f->kind));
		json_object_set_new(o, "visibility",
		                    visibility ? json_string(visibility) : json_null());
		f->internal = !helper && only_local_callers(d, f->module);
		json_object_set_new(o, "internal", json_boolean(f->internal));
		json_object_set_new(o, "in_graph", json_boolean(d != NULL));
		json_object_set_new(o, "cyclomatic", fuse_json_num(gi_json_num(d, "cyclomatic")));
		json_object_set_new(o, "cognitive", fuse_json_num(gi_json_num(d, "cognitive")));
		json_object_set_new(o, "line", fuse_json_num(gi_json_num(d, "line")));
		json_t *callees = mfa_list(d ? json_object_get(d, "callees") : NULL);
		char repo_buf[FUSE_MAX_NAME + 1], direct_buf[FUSE_MAX_NAME + 1];
		const char *repo = repo_callee(c, f->module, d, 3, repo_buf, sizeof(repo_buf));
		const char *direct =
		    repo_callee(c, f->module, d, 0, direct_buf, sizeof(direct_buf));
		json_t *callers = mfa_list(d ? json_object_get(d, "callers") : NULL);
		if (lambda) {
			char mfa_parent[2 * FUSE_MAX_NAME + 24];
			snprintf(mfa_parent, sizeof(mfa_parent), "%s.%s/%ld", f->module, parent,
			         parent_arity);
			json_array_clear(callers);
			json_array_append_new(callers, json_string(mfa_parent));
		}
		json_t *all_callers = d ? json_object_get(d, "callers") : NULL;
		json_object_set_new(
		    o, "fan_in",
		    d ? json_integer((json_int_t)(lambda ? 1 : json_array_size(all_callers)))
		      : json_null());
		json_t *gm = graph_module(c, f->module);
		json_t *hub = gm ? json_object_get(gm, "hub") : NULL;
		json_object_set_new(o, "module_hub",
		                    json_is_boolean(hub) ? json_incref(hub) : json_null());
		json_object_set_new(o, "callers", callers);
		json_object_set_new(o, "callees", callees);
		classify_traced(c, f, d, lambda ? parent : f->function,
		                lambda ? parent_arity : f->arity);
		note_traced_callees(c, f, d);
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
		json_decref(d);
		json_array_append_new(a, o);
	}
	return a;
}

/* What call_time measured and in how many processes, or null when the
 * session did not measure times (docs/PROFILE.md). */
static json_t *build_call_time(struct ctx *c)
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
static json_t *build_budget(struct ctx *c)
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
static json_t *build_observer(struct ctx *c)
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
	json_object_set_new(o, "within_budget",
	                    json_boolean(c->obs.over == 0 && c->obs.cost_ms / w <= c->obs.budget));
	json_object_set_new(o, "reductions", fuse_json_num(c->obs.reductions));
	json_object_set_new(o, "other_observers",
	                    json_integer((json_int_t)c->obs.other_processes_max));
	json_object_set_new(o, "sample_period_ms", fuse_json_num(c->obs.period_asked));
	json_object_set_new(o, "sample_period_max_ms", fuse_json_num(c->obs.period_max));
	json_object_set_new(
	    o, "sampler_slowed",
	    json_boolean(c->obs.period_max > c->obs.period_asked && c->obs.period_asked > 0));
	return o;
}

/* Call counting over the session: how long, whether under a budget, and
 * what other tools held on the node (shared). */
static json_t *build_tracing(struct ctx *c)
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
static void recount_operations(struct ctx *c)
{
	struct gi_map seen;
	gi_map_init(&seen);
	for (size_t i = 0; i < c->func_list.len; i++) {
		struct func_stat *f = GI_VEC_AT(&c->func_list, struct func_stat *, i);
		struct traced_mod *t = traced_find(c, f->module);
		char key[2 * FUSE_MAX_NAME + 4];
		snprintf(key, sizeof(key), "%s\x1f%s", f->module, f->function);
		if (!t || strcmp(f->kind, "private") == 0 || f->internal || gi_map_get(&seen, key))
			continue;
		gi_map_put(&seen, key, f);
		const char *cls = f->cls ? f->cls : "compute";
		if (strcmp(cls, "proxy") == 0)
			continue; /* counted at the handle_call it goes to */
		bool in_vm = !reach_leaves_vm(f->reach) && (f->reach & REACH_IN_VM);
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
	json_t *d = graph_module(c, module);
	json_t *deps = d ? json_object_get(d, "dependencies") : NULL;
	size_t n = json_is_array(deps) ? json_array_size(deps) : 0;
	for (size_t i = 0; i < n && i < FUSE_MAX_LIST; i++) {
		json_t *e = json_array_get(deps, i);
		const char *m = json_is_string(e) ? json_string_value(e) : gi_json_str(e, "module");
		if (m && strcmp(m, module) != 0 && module_is_database(c, m))
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

static json_t *build_workload(struct ctx *c, json_t *hotspots)
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
		json_t *d = graph_module(c, t->name);
		json_object_set_new(db, "pipeline_helper_calls", fuse_json_num(t->pipeline));
		json_object_set_new(db, "uses_ecto_repo",
		                    json_boolean(d && module_uses_ecto_repo(d)));
		/* A data layer itself (docs/RULES.md: Ecto.Repo, a driver caller,
		 * Ecto-style callbacks, or a Repo name with Repo functions). */
		const char *why = database_reason(c, t->name);
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
		const char *storage = storage_of(bits);
		json_object_set_new(db, "storage", storage ? json_string(storage) : json_null());
		json_object_set_new(
		    db, "reads_in_vm_share",
		    fuse_json_num(t->reads > 0 ? fmin(t->reads_in_vm / t->reads, 1) : NAN));
		double layer_share = driver_call_share(c, t);
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
		struct traced_mod *rt = repo ? traced_find(c, repo) : NULL;
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

static json_t *build_pipeline(struct ctx *c)
{
	json_t *o = json_object();
	json_t *mods = json_array();
	double helpers = 0, ops = 0;
	for (size_t i = 0; i < c->traced_list.len; i++) {
		struct traced_mod *t = GI_VEC_AT(&c->traced_list, struct traced_mod *, i);
		if (!module_is_database(c, t->name))
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
	const char *const *pipe =
	    c->cfg && c->cfg->pipeline_names ? c->cfg->pipeline_names : default_pipeline;
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
static json_t *build_storage(json_t *fin)
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

static json_t *build_processes(struct ctx *c)
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
		json_t *d = graph_module(c, p->module);
		json_object_set_new(e, "hub",
		                    d ? json_boolean(gi_json_true(d, "hub")) : json_null());
		json_object_set_new(e, "dependents", fuse_json_num(gi_json_num(d, "ca")));
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

static void ctx_destroy(struct ctx *c)
{
	for (size_t i = 0; i < c->details.cap; i++)
		if (c->details.slots[i].key)
			json_decref(c->details.slots[i].value);
	gi_map_destroy(&c->mods);
	gi_map_destroy(&c->procs);
	gi_map_destroy(&c->funcs);
	gi_map_destroy(&c->traced);
	gi_map_destroy(&c->details);
	gi_map_destroy(&c->reach);
	for (size_t i = 0; i < c->traced_list.len; i++)
		json_decref(GI_VEC_AT(&c->traced_list, struct traced_mod *, i)->calls_traced);
	gi_vec_destroy(&c->mod_list);
	gi_vec_destroy(&c->proc_list);
	gi_vec_destroy(&c->func_list);
	gi_vec_destroy(&c->traced_list);
	struct metric *ms[] = {&c->m_mem,           &c->m_procs, &c->m_runq,   &c->m_util,
	                       &c->m_rps,           &c->m_t,     &c->m_binary, &c->m_ets,
	                       &c->m_processes_mem, &c->m_atom,  &c->m_code,   &c->m_system};
	for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++)
		gi_vec_destroy(&ms[i]->values);
	json_decref(c->errors);
	json_decref(c->foreign);
	fuse_executing_free(c->executing);
	gi_arena_destroy(&c->arena);
}

struct fuse_builder {
	struct ctx c;
};

int fuse_builder_new(const struct fuse_config *cfg, long snapshot_count, struct fuse_builder **out)
{
	*out = NULL;
	if (snapshot_count < 0 || snapshot_count > FUSE_MAX_SNAPSHOTS)
		return GI_EINVAL;
	struct fuse_builder *b = gi_calloc(1, sizeof(*b));
	struct ctx *c = &b->c;
	gi_arena_init(&c->arena);
	c->cfg = cfg;
	if (cfg && cfg->thresholds)
		c->thr = *cfg->thresholds;
	else
		fuse_thresholds_default(&c->thr);
	c->first_ts = c->last_ts = NAN;
	c->errors = json_array();
	c->foreign = json_array();
	c->executing = fuse_executing_new();
	gi_map_init(&c->mods);
	gi_map_init(&c->procs);
	gi_map_init(&c->funcs);
	gi_map_init(&c->traced);
	gi_map_init(&c->details);
	gi_map_init(&c->reach);
	gi_vec_init(&c->mod_list, sizeof(void *));
	gi_vec_init(&c->proc_list, sizeof(void *));
	gi_vec_init(&c->func_list, sizeof(void *));
	gi_vec_init(&c->traced_list, sizeof(void *));
	struct metric *ms[] = {&c->m_mem,           &c->m_procs, &c->m_runq,   &c->m_util,
	                       &c->m_rps,           &c->m_t,     &c->m_binary, &c->m_ets,
	                       &c->m_processes_mem, &c->m_atom,  &c->m_code,   &c->m_system};
	for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++)
		metric_init(ms[i]);
	c->total_snapshots = snapshot_count;
	c->quarter = snapshot_count / 4 ? snapshot_count / 4 : 1;
	*out = b;
	return 0;
}

int fuse_builder_add(struct fuse_builder *b, json_t *snapshot)
{
	if (!json_is_object(snapshot))
		return GI_EINVAL;
	if (b->c.nsnap >= FUSE_MAX_SNAPSHOTS)
		return GI_ETOOBIG;
	struct obs_view v;
	int rc = obs_view_parse(snapshot, &v);
	if (rc == GI_EUNSUPPORTED) {
		/* A newer observer's snapshot: skipped, and said once. */
		const char *msg = "snapshots of a newer schema version were skipped";
		bool dup = false;
		for (size_t k = 0; k < json_array_size(b->c.errors) && !dup; k++)
			dup = strcmp(json_string_value(json_array_get(b->c.errors, k)), msg) == 0;
		if (!dup)
			json_array_append_new(b->c.errors, json_string(msg));
		obs_view_destroy(&v);
		return 0;
	}
	if (rc == 0) {
		take_snapshot(&b->c, &v, b->c.nsnap);
		b->c.nsnap++;
	}
	obs_view_destroy(&v);
	return rc;
}

/* Without a snapshot count up front, the first and the last snapshot stand
 * for the first and the last quarter of the mailbox trend. */
static void mailbox_quarters_from_ends(struct ctx *c)
{
	c->quarter = 1;
	for (size_t i = 0; i < c->proc_list.len; i++) {
		struct proc_stat *p = GI_VEC_AT(&c->proc_list, struct proc_stat *, i);
		p->queue_head_sum = p->queue_first_seq == 0 ? p->queue_first : 0;
		p->queue_tail_sum = p->queue_last_seq == c->nsnap - 1 ? p->queue_last : 0;
	}
}

/* How much of the node's work the profile's views explain (docs/PROFILE.md
 * "explained"): the share of the node's reductions done by the processes the
 * sampler watched (the executing view's coverage). Work in processes it did
 * not see (short-lived ones: a task per request, a process per item; many
 * small ones below its cut) is unattributed, and when that is most of the
 * work the profile says so first, with what to do. */
static json_t *build_explained(json_t *executing_summary, bool executing)
{
	json_t *o = json_object();
	/* with the sampler on, its coverage, even with no process seen
	 * executing (all the work in processes too short-lived to be picked) */
	double sampler_on = gi_json_num(executing_summary, "snapshots");
	double share = executing || (isfinite(sampler_on) && sampler_on > 0)
	                   ? gi_json_num(executing_summary, "coverage")
	                   : NAN;
	json_object_set_new(o, "share", fuse_json_num(share));
	json_object_set_new(o, "basis", json_string(isfinite(share) ? "executing" : "none"));
	json_object_set_new(o, "low_below", json_real(FUSE_EXPLAINED_LOW));
	bool low = !isfinite(share) || share < FUSE_EXPLAINED_LOW;
	json_object_set_new(o, "low", json_boolean(low));
	char note[512];
	if (!isfinite(share))
		snprintf(note, sizeof(note),
		         "where the node's work ran is not known: the sampler was off or the node "
		         "did no work; hot modules are by process ownership");
	else if (low)
		snprintf(note, sizeof(note),
		         "the views explain only %.0f%% of the node's work: the rest ran in "
		         "processes the sampler did not see (short-lived ones, such as a task per "
		         "request, or many small ones); to attribute it, count the calls of the "
		         "project modules that do it (--trace MODULE counts them in every "
		         "process), or, for many small long-lived processes, sample more of them "
		         "(sample_processes, up to 50)",
		         100 * share);
	else
		snprintf(note, sizeof(note), "the views explain %.0f%% of the node's work",
		         100 * share);
	json_object_set_new(o, "note", json_string(note));
	return o;
}

int fuse_builder_finish(struct fuse_builder *b, json_t *finalize, struct kg_db *graph,
                        json_t **profile_out)
{
	*profile_out = NULL;
	if (finalize && !json_is_object(finalize))
		return GI_EINVAL;
	struct ctx *c = &b->c;
	c->graph = graph;
	if (c->total_snapshots == 0)
		mailbox_quarters_from_ends(c);
	json_t *p = json_object();
	json_object_set_new(p, "version", json_integer(1));
	json_object_set_new(p, "session", build_session(c, finalize));
	json_object_set_new(p, "metrics", build_metrics(c));
	json_object_set_new(p, "series", build_series(c));
	json_object_set_new(json_object_get(p, "series"), "gaps", series_gaps(c, finalize));
	int top = c->cfg && c->cfg->hot_modules_top > 0 ? c->cfg->hot_modules_top : 15;
	pool_estimates(c);
	json_t *hotspots = build_hotspots(c);
	recount_operations(c);
	attribute_executing(c);
	bool executing = fuse_executing_has_samples(c->executing);
	json_object_set_new(p, "hot_modules_basis",
	                    json_string(executing ? "executing" : "ownership"));
	json_object_set_new(p, "hot_modules",
	                    executing ? build_executing_modules(c, top)
	                              : build_ownership_modules(c, top, true));
	json_object_set_new(p, "hot_functions", build_hot_functions(c, 20));
	json_object_set_new(p, "ownership_modules", build_ownership_modules(c, top, false));
	json_t *xs = fuse_executing_summary(c->executing, c->total_reductions,
	                                    c->source_graph ? "graph" : "target");
	blocked_on_database(c, xs);
	json_object_set_new(p, "explained", build_explained(xs, executing));
	json_object_set_new(p, "executing", xs);
	json_object_set_new(p, "trace_hotspots", hotspots);
	json_object_set_new(p, "workload", build_workload(c, hotspots));
	json_object_set_new(p, "pipeline_overhead", build_pipeline(c));
	json_object_set_new(p, "call_time", build_call_time(c));
	json_object_set_new(p, "trace_budget", build_budget(c));
	json_object_set_new(p, "tracing", build_tracing(c));
	json_object_set_new(p, "observer", build_observer(c));
	json_object_set_new(p, "processes", build_processes(c));
	json_object_set_new(p, "storage", build_storage(finalize));
	json_t *g = json_object();
	json_object_set_new(g, "attached", json_boolean(graph != NULL));
	json_object_set_new(g, "answered", json_boolean(c->graph_ok));
	json_object_set_new(p, "graph", g);
	json_object_set_new(p, "errors", json_incref(c->errors));
	json_t *recs = NULL;
	int rc = fuse_rules_evaluate(p, &c->thr, &recs);
	if (rc != 0) {
		json_decref(p);
		return rc;
	}
	json_object_set_new(p, "recommendations", recs);
	*profile_out = p;
	return 0;
}

void fuse_builder_free(struct fuse_builder *b)
{
	if (!b)
		return;
	ctx_destroy(&b->c);
	gi_free(b);
}

int fuse_profile_build(json_t *finalize, json_t *snapshots, struct kg_db *graph,
                       const struct fuse_config *cfg, json_t **profile_out)
{
	*profile_out = NULL;
	if ((finalize && !json_is_object(finalize)) || (snapshots && !json_is_array(snapshots)))
		return GI_EINVAL;
	size_t n = snapshots ? json_array_size(snapshots) : 0;
	if (n > FUSE_MAX_SNAPSHOTS)
		return GI_ETOOBIG;
	size_t objects = 0;
	for (size_t i = 0; i < n; i++)
		objects += json_is_object(json_array_get(snapshots, i));
	struct fuse_builder *b = NULL;
	int rc = fuse_builder_new(cfg, (long)objects, &b);
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (json_is_object(json_array_get(snapshots, i)))
			rc = fuse_builder_add(b, json_array_get(snapshots, i));
	if (rc == 0)
		rc = fuse_builder_finish(b, finalize, graph, profile_out);
	fuse_builder_free(b);
	return rc;
}
