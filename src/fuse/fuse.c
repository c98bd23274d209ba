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

void fuse_thresholds_default(struct fuse_thresholds *t)
{
	t->min_snapshots = 3;
	t->cpu_run_queue_per_scheduler = 1.0;
	t->cpu_persistent_share = 0.5;
	t->cpu_utilisation = 0.90;
	t->logger_share = 0.05;
	t->logger_reductions_per_s = 5000;
	t->logger_top_rank = 5;
	t->cache_read_write_ratio = 10;
	t->cache_calls_per_s = 100;
	t->lookup_read_share = 0.9;
	t->lookup_calls_per_s = 10;
	t->lookup_repo_share = 0.5;
	t->hub_share = 0.10;
	t->hub_dependents = 10;
	t->hub_cyclomatic = 10;
	t->hub_cognitive = 15;
	t->hub_function_calls_per_s = 100;
	t->mailbox_min = 100;
	t->mailbox_rising_share = 0.6;
	t->memory_growth_ratio = 0.20;
	t->memory_growth_bytes = 16.0 * 1024 * 1024;
	t->idle_utilisation = 0.30;
	t->idle_run_queue = 0.5;
	t->idle_reductions_per_scheduler = 5e6;
}

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
};

struct traced_mod {
	const char *name;
	long windows, seen_seq;
	double window_ms;
	double calls, raw_pipeline;            /* every traced call; pipeline helper calls */
	double reads, writes, pipeline, other; /* operations: see recount_operations */
};

struct ctx {
	struct gi_arena arena;
	const struct fuse_config *cfg;
	struct fuse_thresholds thr;
	struct kg_db *graph;
	bool graph_ok;
	struct gi_map mods, procs, funcs, traced, details;
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

static bool process_is_logger(const json_t *p)
{
	const char *reg = fuse_str(p, "registered_name");
	const char *init = fuse_str(p, "initial_call");
	if (name_is_logger(reg) || name_is_logger(fuse_str(p, "module")) || name_is_logger(init))
		return true;
	/* A gen_event registered as Logger whatever its attribution. */
	return init && reg && strstr(init, "gen_event") && strstr(reg, "Logger");
}

static struct proc_stat *proc_get(struct ctx *c, const json_t *p)
{
	const char *pid = fuse_str(p, "pid");
	if (!pid)
		return NULL;
	struct proc_stat *s = gi_map_get(&c->procs, pid);
	if (s)
		return s;
	if (c->proc_list.len >= FUSE_MAX_PROCESSES)
		return NULL;
	s = gi_arena_calloc(&c->arena, 1, sizeof(*s));
	s->pid = ctx_strdup(c, pid);
	s->name = ctx_strdup(c, fuse_str(p, "registered_name"));
	s->module = ctx_strdup(c, fuse_str(p, "module"));
	s->initial_call = ctx_strdup(c, fuse_str(p, "initial_call"));
	s->logger = process_is_logger(p);
	s->seen_seq = -1;
	s->queue_first = s->mem_first = NAN;
	gi_map_put(&c->procs, pid, s);
	gi_vec_push(&c->proc_list, &s);
	return s;
}

/* ---- one snapshot ----------------------------------------------------- */

static void take_cpu(struct ctx *c, const json_t *list, long seq)
{
	size_t n = json_is_array(list) ? json_array_size(list) : 0;
	for (size_t i = 0; i < n && i < FUSE_MAX_LIST; i++) {
		const json_t *p = json_array_get(list, i);
		double r = fuse_num(p, "reductions");
		if (!isfinite(r) || r < 0)
			continue;
		struct proc_stat *s = proc_get(c, p);
		if (s) {
			s->reductions += r;
			s->cpu_samples++;
		}
		const char *mod = fuse_str(p, "module");
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
static void take_process_state(struct ctx *c, const json_t *list, long seq)
{
	size_t n = json_is_array(list) ? json_array_size(list) : 0;
	for (size_t i = 0; i < n && i < FUSE_MAX_LIST; i++) {
		const json_t *p = json_array_get(list, i);
		struct proc_stat *s = proc_get(c, p);
		if (!s || s->seen_seq == seq)
			continue;
		s->seen_seq = seq;
		double q = fuse_num(p, "message_queue_len");
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
		double mem = fuse_num(p, "memory_bytes");
		if (isfinite(mem)) {
			if (s->mem_samples == 0)
				s->mem_first = mem;
			s->mem_last = mem;
			s->mem_samples++;
		}
		const char *mod = fuse_str(p, "module");
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

static void take_trace(struct ctx *c, const json_t *trace, long seq)
{
	if (!json_is_object(trace))
		return;
	double window_ms = fuse_num(trace, "window_ms");
	const json_t *mods = json_object_get(trace, "modules");
	size_t nm = json_is_array(mods) ? json_array_size(mods) : 0;
	for (size_t i = 0; i < nm && i < FUSE_MAX_LIST; i++) {
		const json_t *m = json_array_get(mods, i);
		if (json_is_string(m))
			mark_traced_window(c, json_string_value(m), seq, window_ms);
	}
	const json_t *calls = json_object_get(trace, "calls");
	size_t n = json_is_array(calls) ? json_array_size(calls) : 0;
	for (size_t i = 0; i < n && i < FUSE_MAX_FUNCTIONS; i++) {
		const json_t *e = json_array_get(calls, i);
		const char *mod = fuse_str(e, "module"), *fn = fuse_str(e, "function");
		double arity = fuse_num(e, "arity"), count = fuse_num(e, "count");
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

static void take_errors(struct ctx *c, const json_t *errs)
{
	size_t n = json_is_array(errs) ? json_array_size(errs) : 0;
	for (size_t i = 0; i < n && i < FUSE_MAX_LIST; i++) {
		const json_t *e = json_array_get(errs, i);
		if (!json_is_string(e) || json_array_size(c->errors) >= 20)
			continue;
		bool dup = false;
		for (size_t k = 0; k < json_array_size(c->errors) && !dup; k++)
			dup = json_equal(json_array_get(c->errors, k), e);
		if (!dup)
			json_array_append(c->errors, (json_t *)e);
	}
}

static void take_snapshot(struct ctx *c, const json_t *s, long seq)
{
	double ts = fuse_num(s, "timestamp_ms");
	if (isfinite(ts)) {
		if (!isfinite(c->first_ts))
			c->first_ts = ts;
		c->last_ts = ts;
	}
	metric_add(&c->m_t, isfinite(ts) && isfinite(c->first_ts) ? (ts - c->first_ts) / 1000.0
	                                                          : (double)seq);
	double sched = fuse_num(s, "schedulers_online");
	if (isfinite(sched) && sched > c->schedulers && sched < 100000)
		c->schedulers = (int)sched;
	if (!c->otp_release)
		c->otp_release = ctx_strdup(c, fuse_str(s, "otp_release"));
	if (!c->node)
		c->node = ctx_strdup(c, fuse_str(s, "node"));
	metric_add(&c->m_mem, fuse_num_path(s, "memory.total"));
	metric_add(&c->m_binary, fuse_num_path(s, "memory.binary"));
	metric_add(&c->m_ets, fuse_num_path(s, "memory.ets"));
	metric_add(&c->m_processes_mem, fuse_num_path(s, "memory.processes"));
	metric_add(&c->m_atom, fuse_num_path(s, "memory.atom"));
	metric_add(&c->m_code, fuse_num_path(s, "memory.code"));
	metric_add(&c->m_system, fuse_num_path(s, "memory.system"));
	metric_add(&c->m_procs, fuse_num_path(s, "processes.count"));
	double rq = fuse_num_path(s, "run_queue.total");
	metric_add(&c->m_runq, rq);
	double util = fuse_num_path(s, "scheduler_utilisation.total");
	metric_add(&c->m_util, util);
	metric_add(&c->m_rps, fuse_num_path(s, "reductions.per_second"));
	double sched_now = isfinite(sched) && sched > 0 ? sched : 1;
	if (isfinite(rq) && rq > c->thr.cpu_run_queue_per_scheduler * sched_now)
		c->runq_above++;
	if (isfinite(util) && util >= c->thr.cpu_utilisation)
		c->util_high++;
	double delta = fuse_num_path(s, "reductions.delta");
	if (isfinite(delta) && delta > 0)
		c->total_reductions += delta;
	double w = fuse_num(s, "window_ms");
	if (isfinite(w) && w > 0)
		c->total_window_ms += w;
	take_cpu(c, fuse_get_path(s, "top_processes.reductions"), seq);
	take_process_state(c, fuse_get_path(s, "top_processes.reductions"), seq);
	take_process_state(c, fuse_get_path(s, "top_processes.memory"), seq);
	take_process_state(c, fuse_get_path(s, "top_processes.message_queue"), seq);
	take_trace(c, json_object_get(s, "trace"), seq);
	take_errors(c, json_object_get(s, "errors"));
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

/* A Repo-like module: its name ends in "Repo", or it `use`s Ecto.Repo
 * according to the graph. */
static bool module_is_repo_like(struct ctx *c, const char *module)
{
	if (!module)
		return false;
	if (gi_str_ends_with(module, "Repo"))
		return true;
	json_t *d = graph_module(c, module);
	return d && module_uses_ecto_repo(d);
}

static struct traced_mod *traced_find(struct ctx *c, const char *module)
{
	return gi_map_get(&c->traced, module);
}

/* A database module: Repo-like, or traced with calls to the pipeline helpers
 * (a hand-written data layer shaped like a repo). */
static bool module_is_database(struct ctx *c, const char *module)
{
	struct traced_mod *t = module ? traced_find(c, module) : NULL;
	return (t && t->raw_pipeline > 0) || module_is_repo_like(c, module);
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
	const char *status = fuse_str(fin, "status");
	double started = fuse_num(fin, "started_ms"), stopped = fuse_num(fin, "stopped_ms");
	if (!isfinite(started))
		started = c->first_ts;
	if (!isfinite(stopped))
		stopped = c->last_ts;
	json_object_set_new(
	    s, "id",
	    json_string(fuse_str(fin, "session_id") ? fuse_str(fin, "session_id") : "unknown"));
	const char *node = fuse_str(fin, "node") ? fuse_str(fin, "node") : c->node;
	json_object_set_new(s, "node", node ? json_string(node) : json_null());
	json_object_set_new(s, "status", json_string(status ? status : "interrupted"));
	const char *reason = fuse_str(fin, "reason");
	if (!fin)
		reason = "the session was not finalised";
	json_object_set_new(s, "reason", reason ? json_string(reason) : json_null());
	json_object_set_new(s, "started_ms", fuse_json_num(started));
	json_object_set_new(s, "stopped_ms", fuse_json_num(stopped));
	json_object_set_new(s, "duration_ms", fuse_json_num(stopped - started));
	double interval = fuse_num(fin, "interval_ms");
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
	const char *project = fuse_str(fin, "project");
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
	json_object_set_new(m, "process_count", metric_json(&c->m_procs));
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
 * snapshot, as t_s): [{from_s, to_s, missing}]; to_s is null for a gap at
 * the end. */
static json_t *series_gaps(const struct ctx *c, json_t *fin)
{
	json_t *out = json_array(), *g;
	size_t i;
	json_array_foreach(json_object_get(fin, "gaps"), i, g)
	{
		double from = fuse_num(g, "from_ms"), to = fuse_num(g, "to_ms");
		json_array_append_new(
		    out,
		    json_pack(
		        "{s:o, s:o, s:O?}", "from_s",
		        fuse_json_num(isfinite(c->first_ts) ? (from - c->first_ts) / 1000.0 : NAN),
		        "to_s",
		        fuse_json_num(isfinite(c->first_ts) ? (to - c->first_ts) / 1000.0 : NAN),
		        "missing", json_object_get(g, "missing")));
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

/* The hottest functions of a module: by trace counts when traced, else by
 * static complexity from the graph. */
static json_t *hottest_functions(struct ctx *c, const char *module)
{
	json_t *a = json_array();
	if (traced_find(c, module)) {
		for (size_t i = 0; i < c->func_list.len && json_array_size(a) < 5; i++) {
			struct func_stat *f = GI_VEC_AT(&c->func_list, struct func_stat *, i);
			if (strcmp(f->module, module) != 0 || f->total <= 0)
				continue;
			json_t *o = json_object();
			json_object_set_new(o, "name", json_string(f->function));
			json_object_set_new(o, "arity", json_integer(f->arity));
			json_object_set_new(o, "calls", fuse_json_num(f->total));
			json_object_set_new(o, "calls_per_second",
			                    fuse_json_num(func_calls_per_s(c, f)));
			json_object_set_new(o, "by", json_string("trace"));
			json_array_append_new(a, o);
		}
		if (json_array_size(a) > 0)
			return a;
	}
	json_t *d = graph_module(c, module);
	json_t *fns = d ? json_object_get(d, "functions") : NULL;
	size_t n = json_is_array(fns) ? json_array_size(fns) : 0;
	/* Selection of the 5 most complex without reordering the graph's array. */
	bool picked[FUSE_MAX_LIST] = {false};
	for (int k = 0; k < 5; k++) {
		long best = -1;
		double best_cc = -1;
		for (size_t i = 0; i < n && i < FUSE_MAX_LIST; i++) {
			double cc = fuse_num(json_array_get(fns, i), "cyclomatic");
			if (!picked[i] && isfinite(cc) && cc > best_cc) {
				best_cc = cc;
				best = (long)i;
			}
		}
		if (best < 0)
			break;
		picked[best] = true;
		json_t *f = json_array_get(fns, (size_t)best);
		json_t *o = json_object();
		json_object_set_new(o, "name",
		                    json_string(fuse_str(f, "name") ? fuse_str(f, "name") : "?"));
		json_object_set_new(o, "arity", fuse_json_num(fuse_num(f, "arity")));
		json_object_set_new(o, "cyclomatic", fuse_json_num(best_cc));
		json_object_set_new(o, "cognitive", fuse_json_num(fuse_num(f, "cognitive")));
		json_object_set_new(o, "by", json_string("complexity"));
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *build_hot_modules(struct ctx *c, int top)
{
	json_t *a = json_array();
	gi_vec_sort(&c->mod_list, cmp_mod_reductions);
	double total = c->total_reductions;
	if (total <= 0)
		for (size_t i = 0; i < c->mod_list.len; i++)
			total += GI_VEC_AT(&c->mod_list, struct mod_stat *, i)->reductions;
	for (size_t i = 0; i < c->mod_list.len && (int)json_array_size(a) < top; i++) {
		struct mod_stat *m = GI_VEC_AT(&c->mod_list, struct mod_stat *, i);
		if (m->reductions <= 0)
			break;
		json_t *o = json_object();
		json_object_set_new(o, "module", json_string(m->name));
		json_object_set_new(o, "reductions", fuse_json_num(m->reductions));
		json_object_set_new(o, "reductions_share",
		                    fuse_json_num(total > 0 ? m->reductions / total : NAN));
		json_object_set_new(o, "memory_bytes", fuse_json_num(m->mem_peak));
		json_object_set_new(o, "processes", json_integer(m->processes_max));
		json_object_set_new(o, "sample_count", json_integer(m->samples));
		json_object_set_new(o, "traced", json_boolean(traced_find(c, m->name) != NULL));
		json_object_set_new(o, "graph", graph_fields(c, m->name));
		json_object_set_new(o, "hottest_functions", hottest_functions(c, m->name));
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
		const char *m = fuse_str(e, "module"), *f = fuse_str(e, "name");
		double ar = fuse_num(e, "arity");
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
		const char *cm = fuse_str(json_array_get(ce, k), "module");
		if (cm && strcmp(cm, module) != 0 && module_is_database(c, cm)) {
			gi_strlcpy(buf, cm, size);
			return buf;
		}
	}
	for (size_t k = 0; depth > 0 && k < n && k < 20; k++) {
		json_t *e = json_array_get(ce, k);
		const char *cm = fuse_str(e, "module"), *name = fuse_str(e, "name");
		double arity = fuse_num(e, "arity");
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
		const char *m = fuse_str(json_array_get(callers, i), "module");
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

/* Every traced function, by calls, joined with function_details. Also sets
 * "calls_repo" (the Repo-like module it calls, or null) for the database
 * signature of rule 4. */
static json_t *build_hotspots(struct ctx *c)
{
	json_t *a = json_array();
	gi_vec_sort(&c->func_list, cmp_func_total);
	double all_calls = 0;
	for (size_t i = 0; i < c->func_list.len; i++)
		all_calls += GI_VEC_AT(&c->func_list, struct func_stat *, i)->total;
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
		json_t *w = json_object();
		json_object_set_new(w, "windows", json_integer(windows));
		json_object_set_new(w, "min",
		                    fuse_json_num(f->present < windows ? 0 : f->min_present));
		json_object_set_new(w, "avg",
		                    fuse_json_num(windows > 0 ? f->total / (double)windows : NAN));
		json_object_set_new(w, "max", fuse_json_num(f->max));
		json_object_set_new(o, "per_window", w);
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
		const char *visibility = lambda ? "private" : fuse_str(d, "visibility");
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
		json_object_set_new(o, "cyclomatic", fuse_json_num(fuse_num(d, "cyclomatic")));
		json_object_set_new(o, "cognitive", fuse_json_num(fuse_num(d, "cognitive")));
		json_object_set_new(o, "line", fuse_json_num(fuse_num(d, "line")));
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
		json_object_set_new(o, "callers", callers);
		json_object_set_new(o, "callees", callees);
		json_object_set_new(o, "calls_repo", repo ? json_string(repo) : json_null());
		json_object_set_new(o, "calls_repo_directly", json_boolean(direct != NULL));
		json_decref(d);
		json_array_append_new(a, o);
	}
	return a;
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
		if (strcmp(f->kind, "read") == 0)
			t->reads += f->total;
		else if (strcmp(f->kind, "write") == 0)
			t->writes += f->total;
		else if (strcmp(f->kind, "pipeline") == 0)
			t->pipeline += f->total;
		else
			t->other += f->total;
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
		const char *m = json_is_string(e) ? json_string_value(e) : fuse_str(e, "module");
		if (m && strcmp(m, module) != 0 && module_is_database(c, m))
			return m;
	}
	return NULL;
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
		json_object_set_new(db, "repo_like", json_boolean(module_is_repo_like(c, t->name)));
		const char *repo = repo_dependency(c, t->name);
		double via_static = 0, mine_static = 0, via_direct = 0;
		bool local_tracing = false;
		for (size_t k = 0; k < json_array_size(hotspots); k++) {
			json_t *h = json_array_get(hotspots, k);
			const char *hm = fuse_str(h, "module"), *kind = fuse_str(h, "kind");
			if (!hm || strcmp(hm, t->name) != 0)
				continue;
			double calls = fuse_num(h, "calls");
			const char *callee_repo = fuse_str(h, "calls_repo");
			bool private_fn = kind && strcmp(kind, "private") == 0;
			local_tracing |= private_fn;
			if (fuse_bool(h, "calls_repo_directly"))
				via_direct += calls;
			if (callee_repo && !repo)
				repo = callee_repo;
			if (private_fn || fuse_bool(h, "internal"))
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
	json_object_set_new(o, "ratio", fuse_json_num(ops > 0 ? helpers / ops : NAN));
	json_t *names = json_array();
	const char *const *pipe =
	    c->cfg && c->cfg->pipeline_names ? c->cfg->pipeline_names : default_pipeline;
	for (size_t i = 0; pipe[i]; i++)
		json_array_append_new(names, json_string(pipe[i]));
	json_object_set_new(o, "helpers", names);
	json_object_set_new(o, "modules", mods);
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
		json_object_set_new(e, "hub", d ? json_boolean(fuse_bool(d, "hub")) : json_null());
		json_object_set_new(e, "dependents", fuse_json_num(fuse_num(d, "ca")));
		json_array_append_new(boxes, e);
	}
	for (size_t i = 0; i < c->proc_list.len; i++) {
		struct proc_stat *p = GI_VEC_AT(&c->proc_list, struct proc_stat *, i);
		if (p->mem_samples < 2 || p->mem_last <= p->mem_first)
			continue;
		/* Insertion into a short list ordered by growth. */
		double g = p->mem_last - p->mem_first;
		size_t at = json_array_size(grew);
		while (at > 0 && fuse_num(json_array_get(grew, at - 1), "growth_bytes") < g)
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
	gi_map_init(&c->mods);
	gi_map_init(&c->procs);
	gi_map_init(&c->funcs);
	gi_map_init(&c->traced);
	gi_map_init(&c->details);
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
	take_snapshot(&b->c, snapshot, b->c.nsnap);
	b->c.nsnap++;
	return 0;
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
	json_t *hotspots = build_hotspots(c);
	recount_operations(c);
	json_object_set_new(p, "hot_modules", build_hot_modules(c, top));
	json_object_set_new(p, "trace_hotspots", hotspots);
	json_object_set_new(p, "workload", build_workload(c, hotspots));
	json_object_set_new(p, "pipeline_overhead", build_pipeline(c));
	json_object_set_new(p, "processes", build_processes(c));
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
