/*
 * rules.c - the rules of docs/RULES.md, evaluated on a built profile.
 *
 * Each rule reads only the profile (so that it can be re-run on a stored
 * profile with other thresholds), is driven by data and thresholds, never by
 * a module name of a particular application, and emits recommendations
 * {rule, id, priority, severity, subject, finding, evidence, advice}. The
 * list is sorted by priority (highest first), then by rule number.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/fmt.h"
#include "base/vec.h"
#include "base/error.h"
#include "fuse/fuse.h"
#include "fuse/fuse_int.h"
#include "fuse/profile_view.h"

struct rules {
	const struct fuse_view *v;
	const struct fuse_thresholds *t;
	json_t *out;
	double schedulers;
	long snapshots;
};

/* The defaults live beside the rules that read them (docs/RULES.md gives
 * each one's reason). */
void fuse_thresholds_default(struct fuse_thresholds *t)
{
	t->min_snapshots = 3;
	t->cpu_run_queue_per_scheduler = 1.0;
	t->cpu_persistent_share = 0.5;
	t->cpu_utilisation = 0.90;
	t->logger_share = 0.05;
	t->logger_reductions_per_s = 5000;
	t->logger_top_rank = 5;
	t->cache_read_write_ratio = 5;
	t->cache_calls_per_s = 100;
	t->lookup_read_share = 0.8;
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
	t->headroom_utilisation = 0.75;
	t->headroom_blocked_share = 0.3;
	t->headroom_database_share = 0.5;
	t->advice_min_share = 0.05;
	t->in_vm_read_share = 0.5;
	t->single_process_share = 0.10;
	t->single_process_ratio = 3;
	t->single_process_reductions_per_s = 500e3;
}

static const char *severity_of(double priority)
{
	return priority >= 70 ? "high" : priority >= 40 ? "medium" : "low";
}

static double clampd(double x, double lo, double hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

/* The module of a recommendation's subject: the subject itself, or the
 * module part of "Mod.fun/arity". Copied into `buf`. */
static const char *subject_module(const char *subject, char *buf, size_t size)
{
	snprintf(buf, size, "%s", subject);
	char *slash = strrchr(buf, '/');
	if (slash) {
		*slash = '\0';
		char *dot = strrchr(buf, '.');
		if (dot)
			*dot = '\0';
	}
	return buf;
}

/* Whether the graph, as the profile carries it, puts `module` outside the
 * project (hot_modules[].graph.external). */
static bool graph_external(struct rules *r, const char *module)
{
	const struct fuse_view_module *m = fuse_view_hot_module(r->v, module);
	return m && m->graph.external;
}

/* A recommendation is about the application's code: never about process
 * plumbing (a wrapper) or a platform module (OTP, Elixir, dependencies). */
static bool subject_is_platform(struct rules *r, const char *subject)
{
	char buf[1024];
	if (!subject)
		return false;
	const char *m = subject_module(subject, buf, sizeof(buf));
	return fuse_module_is_platform(m) || graph_external(r, m);
}

/* Adds one recommendation; takes ownership of `evidence`. A subject that
 * is a platform module is dropped (see subject_is_platform). */
static void emit(struct rules *r, int number, const char *id, double priority, const char *subject,
                 const char *finding, json_t *evidence, const char *advice)
{
	if (subject_is_platform(r, subject)) {
		json_decref(evidence);
		return;
	}
	json_t *o = json_object();
	json_object_set_new(o, "rule", json_integer(number));
	json_object_set_new(o, "id", json_string(id));
	priority = round(clampd(priority, 1, 100));
	json_object_set_new(o, "priority", json_integer((json_int_t)priority));
	json_object_set_new(o, "severity", json_string(severity_of(priority)));
	json_object_set_new(o, "subject", subject ? json_string(subject) : json_null());
	json_object_set_new(o, "finding", json_string(finding));
	json_object_set_new(o, "evidence", evidence);
	json_object_set_new(o, "advice", json_string(advice));
	json_array_append_new(r->out, o);
}

static void ev_num(json_t *ev, const char *key, double v)
{
	json_object_set_new(ev, key, fuse_json_num(v));
}

/* The project's hottest functions of the executing view (at most 3) into
 * `text` ("Mod.f/1 12.3%, ..."), and as evidence "project_hot_functions". */
static void project_hot_functions(struct rules *r, json_t *ev, char *text, size_t size)
{
	json_t *names = json_array();
	text[0] = '\0';
	for (size_t i = 0; i < r->v->nhot_functions; i++) {
		const struct fuse_view_function *f = &r->v->hot_functions[i];
		const char *mod = f->module, *fn = f->function;
		double arity = f->arity;
		if (!f->project || !mod || !fn || !isfinite(arity) || json_array_size(names) >= 3)
			continue;
		char mfa[600];
		snprintf(mfa, sizeof(mfa), "%s.%s/%.0f", mod, fn, arity);
		json_array_append_new(names, json_string(mfa));
		char pct[32];
		fuse_fmt_pct(f->reductions_share, pct, sizeof(pct));
		size_t len = strlen(text);
		if (len + strlen(mfa) + strlen(pct) + 3 < size)
			snprintf(text + len, size - len, "%s%.*s %s", len ? ", " : "",
			         (int)(size - len - strlen(pct) - 4), mfa, pct);
	}
	json_object_set_new(ev, "project_hot_functions", names);
}

/* 1. CPU saturation. */
static void rule_cpu(struct rules *r)
{
	const struct fuse_view_metrics *m = &r->v->metrics;
	double above = m->run_queue.above_schedulers_share;
	double rq_avg = m->run_queue.avg, rq_peak = m->run_queue.peak;
	double util_avg = m->scheduler_utilisation.avg;
	double util_high = m->scheduler_utilisation.high_share;
	if (r->snapshots < r->t->min_snapshots)
		return;
	bool queue = isfinite(above) && above >= r->t->cpu_persistent_share;
	bool util = (isfinite(util_avg) && util_avg >= r->t->cpu_utilisation) ||
	            (isfinite(util_high) && util_high >= r->t->cpu_persistent_share);
	if (!queue && !util)
		return;
	json_t *ev = json_object();
	ev_num(ev, "schedulers_online", r->schedulers);
	ev_num(ev, "run_queue_avg", rq_avg);
	ev_num(ev, "run_queue_peak", rq_peak);
	ev_num(ev, "run_queue_above_schedulers_share", above);
	ev_num(ev, "scheduler_utilisation_avg", util_avg);
	ev_num(ev, "scheduler_utilisation_high_share", util_high);
	char finding[256];
	char pct[32];
	fuse_fmt_pct(util_avg, pct, sizeof(pct));
	if (queue)
		snprintf(finding, sizeof(finding),
		         "CPU saturated: run queue above %g schedulers in %.0f%% of snapshots "
		         "(avg %.1f, peak %.0f), utilisation %s",
		         r->schedulers, above * 100, rq_avg, rq_peak, pct);
	else
		snprintf(finding, sizeof(finding),
		         "CPU saturated: scheduler utilisation averages %s (run queue avg %.1f)",
		         pct, rq_avg);
	double pri =
	    70 +
	    25 * clampd(fmax(isfinite(above) ? above : 0, isfinite(util_avg) ? util_avg : 0), 0, 1);
	char advice[1024], sites[512];
	project_hot_functions(r, ev, sites, sizeof(sites));
	snprintf(advice, sizeof(advice),
	         "The node has more runnable work than schedulers. Cut the work of the hottest "
	         "code first%s%s%s, move blocking or CPU-heavy work out of request paths, or add "
	         "cores; adding processes will not help.",
	         sites[0] ? " (the project's hottest functions where the time went: " : "", sites,
	         sites[0] ? ")" : " (see hot modules and trace hotspots)");
	emit(r, 1, "cpu-saturation", pri, NULL, finding, ev, advice);
}

/* 2. Logger bottleneck. */
static void rule_logger(struct rules *r)
{
	size_t n = r->v->loggers.len;
	double share = 0, rate = 0, queue = 0, best_rank = INFINITY;
	json_t *names = json_array();
	for (size_t i = 0; i < n; i++) {
		const struct fuse_view_process *p = &r->v->loggers.items[i];
		double s = p->reductions_share, rps = p->reductions_per_second;
		double rank = p->rank, q = p->max_queue;
		if (isfinite(s))
			share += s;
		if (isfinite(rps))
			rate += rps;
		if (isfinite(q) && q > queue)
			queue = q;
		if (isfinite(rank) && rank < best_rank)
			best_rank = rank;
		const char *name = p->registered_name;
		if (!name)
			name = p->module;
		char label[600];
		snprintf(label, sizeof(label), "%s (%s)", name ? name : "?", p->pid ? p->pid : "?");
		if (json_array_size(names) < 5)
			json_array_append_new(names, json_string(label));
	}
	if (n == 0 || share < r->t->logger_share || rate < r->t->logger_reductions_per_s ||
	    best_rank > r->t->logger_top_rank) {
		json_decref(names);
		return;
	}
	json_t *ev = json_object();
	json_object_set_new(ev, "processes", names);
	ev_num(ev, "reductions_share", share);
	ev_num(ev, "reductions_per_second", rate);
	ev_num(ev, "best_rank", best_rank);
	ev_num(ev, "max_message_queue", queue);
	const struct fuse_view_blocked *blocked = &r->v->executing.blocked;
	double wait_share = blocked->logger_share_of_samples;
	double wait_callers = blocked->logger_callers_avg;
	double other_share = blocked->share_of_samples - wait_share;
	double caller_share = blocked->logging.caller_share;
	ev_num(ev, "blocked_in_log_calls_share", wait_share);
	ev_num(ev, "blocked_in_log_calls_callers_avg", wait_callers);
	ev_num(ev, "blocked_in_other_calls_share", other_share);
	ev_num(ev, "log_calls_caller_share", caller_share);
	json_t *sites = json_array();
	char site_text[512] = "";
	for (size_t i = 0; i < blocked->logging.ncall_sites && i < 3; i++) {
		const char *fn = blocked->logging.call_sites[i].function;
		if (!fn)
			continue;
		json_array_append_new(sites, json_string(fn));
		size_t len = strlen(site_text);
		snprintf(site_text + len, sizeof(site_text) - len, "%s%s", len ? ", " : "", fn);
	}
	json_object_set_new(ev, "call_sites", sites);
	char finding[512], pct[32], waitp[32], otherp[32], rate_text[GI_FMT_NUM_MAX];
	fuse_fmt_pct(share, pct, sizeof(pct));
	gi_fmt_count(rate, rate_text, sizeof(rate_text));
	if (isfinite(wait_share)) {
		fuse_fmt_pct(wait_share, waitp, sizeof(waitp));
		fuse_fmt_pct(isfinite(other_share) ? other_share : 0, otherp, sizeof(otherp));
		snprintf(finding, sizeof(finding),
		         "Logger processes take %s of all reductions (rank %.0f among processes, "
		         "%s reductions/s); callers blocked in log calls %s of the sampled time "
		         "(in other calls %s)",
		         pct, best_rank, rate_text, waitp, otherp);
	} else {
		snprintf(finding, sizeof(finding),
		         "Logger processes take %s of all reductions (rank %.0f among processes, "
		         "%s reductions/s)",
		         pct, best_rank, rate_text);
	}
	/* What each remedy changes, from the measured parts of the cost. */
	char advice[1800], async_part[600];
	if (isfinite(wait_share))
		snprintf(async_part, sizeof(async_part),
		         "Asynchronous mode (Elixir 1.14 Logger: a higher sync_threshold and "
		         "discard_threshold; OTP handlers: sync_mode_qlen, drop_mode_qlen, "
		         "flush_qlen) removes only the callers' waiting for the logger, measured "
		         "here at %s of the sampled time%s; it does not change the logger's own "
		         "work (%s of reductions): every event is still formatted and written.",
		         waitp, wait_share < 0.01 ? " (so it will change little on this node)" : "",
		         pct);
	else
		snprintf(async_part, sizeof(async_part),
		         "Asynchronous mode (Elixir 1.14 Logger: sync_threshold and "
		         "discard_threshold; OTP handlers: sync_mode_qlen, drop_mode_qlen, "
		         "flush_qlen) removes only the callers' waiting (not measured: no sampler "
		         "in this session); it does not change the logger's own work (%s of "
		         "reductions).",
		         pct);
	snprintf(advice, sizeof(advice),
	         "%s Raising the level (to :warning) removes the formatting and the write of "
	         "every event below it, so the logger's share falls with the number of "
	         "suppressed calls, not their size; each call site still pays its level check. "
	         "What removes the cost is fewer log calls on the hot path%s%s%s: drop or "
	         "aggregate per-request and per-query info lines, or compile them out "
	         "(compile_time_purge_matching).",
	         async_part, site_text[0] ? " (the project's busiest log call sites: " : "",
	         site_text, site_text[0] ? ")" : "");
	emit(r, 2, "logger-bottleneck", 55 + 150 * share, NULL, finding, ev, advice);
}

static bool cache_candidate(struct rules *r, const struct fuse_view_workload *w)
{
	double reads = w->reads, writes = w->writes;
	double cps = w->operations_per_second;
	if (!w->module || !isfinite(reads) || reads <= 0 || !isfinite(cps) ||
	    cps < r->t->cache_calls_per_s)
		return false;
	double ratio = writes > 0 ? reads / writes : INFINITY;
	return ratio >= r->t->cache_read_write_ratio;
}

/* Candidates of rules 3 and 4: workload entries borrowed from the view. */
struct candidates {
	const struct fuse_view_workload *items[FUSE_VIEW_MAX_LIST];
	size_t len;
};

static bool has_caller_candidate(struct rules *r, const struct candidates *cands,
                                 const char *module);

/* Whether most of the reads of workload entry `w` are served from memory
 * already (mnesia ram_copies/disc_copies tables are ETS tables of the node):
 * a cache in front of them would recommend what is there. */
static bool reads_in_memory(struct rules *r, const struct fuse_view_workload *w)
{
	double s = w->database.reads_in_vm_share;
	return isfinite(s) && s > r->t->in_vm_read_share;
}

/* The share of the node's time module `module` carries: its share of the
 * executing view (or of the ownership view), NAN when not among the hot
 * modules. */
static double module_time_share(struct rules *r, const char *module)
{
	const struct fuse_view_module *m = fuse_view_hot_module(r->v, module);
	return m ? m->reductions_share : NAN;
}

/* The share of the time function `mfa` of `module` carries, and of what
 * (`basis`: "node" from the executing view's reductions, "traced" from
 * call_time's own time among the traced functions); NAN when neither
 * measured it. When both did, the smaller: a sampled stack names the
 * function a process was in, which for a server may be where it waits
 * (a receive inside it), while call_time measures its own time; advice
 * needs both to call it hot. */
static double function_time_share(struct rules *r, const struct fuse_view_hotspot *hotspot,
                                  const char **basis)
{
	const char *mod = hotspot->module, *fn = hotspot->function;
	double arity = hotspot->arity;
	double node = NAN;
	*basis = NULL;
	for (size_t i = 0; mod && fn && i < r->v->nhot_functions; i++) {
		const struct fuse_view_function *f = &r->v->hot_functions[i];
		const char *m = f->module, *n = f->function;
		if (m && n && strcmp(m, mod) == 0 && strcmp(n, fn) == 0 && f->arity == arity) {
			node = f->reductions_share;
			break;
		}
	}
	/* Sampled, and not among the hot functions: below their floor. */
	if (!isfinite(node) && r->v->nhot_functions > 0)
		node = 0;
	double traced = hotspot->time_share;
	if (isfinite(traced) && (!isfinite(node) || traced < node)) {
		*basis = "traced";
		return traced;
	}
	if (isfinite(node))
		*basis = "node";
	return node;
}

/* 3. Read-through cache candidate. */
static void rule_cache(struct rules *r)
{
	struct candidates *cands = gi_calloc(1, sizeof(*cands));
	for (size_t i = 0; i < r->v->nworkload; i++)
		if (cache_candidate(r, &r->v->workload[i]))
			cands->items[cands->len++] = &r->v->workload[i];
	for (size_t i = 0; i < cands->len; i++) {
		const struct fuse_view_workload *w = cands->items[i];
		const char *mod = w->module;
		/* A data layer whose caller is a candidate too: cache in the caller.
		 * Reads served from memory already need no cache. */
		if (has_caller_candidate(r, cands, mod) || reads_in_memory(r, w))
			continue;
		double reads = w->reads, writes = w->writes;
		double cps = w->operations_per_second;
		double ratio = writes > 0 ? reads / writes : INFINITY;
		json_t *ev = json_object();
		ev_num(ev, "reads", reads);
		ev_num(ev, "writes", writes);
		ev_num(ev, "read_write_ratio", writes > 0 ? ratio : NAN);
		ev_num(ev, "operations_per_second", cps);
		ev_num(ev, "reads_per_window", w->reads_per_window);
		ev_num(ev, "time_share", module_time_share(r, mod));
		json_object_set_new(ev, "storage", fuse_json_str(w->database.storage));
		char finding[512], rt[32], rd[GI_FMT_NUM_MAX], wr[GI_FMT_NUM_MAX],
		    ops[GI_FMT_NUM_MAX];
		gi_fmt_count(reads, rd, sizeof(rd));
		gi_fmt_count(writes, wr, sizeof(wr));
		gi_fmt_count(cps, ops, sizeof(ops));
		if (writes > 0)
			snprintf(rt, sizeof(rt), "%.0f:1", ratio);
		else
			snprintf(rt, sizeof(rt), "no writes");
		snprintf(finding, sizeof(finding),
		         "%s is read-mostly (%s reads, %s writes, %s) at %s operations/s", mod, rd,
		         wr, rt, ops);
		double pri = 45 + 10 * log10(fmax(cps, 1)) + (writes == 0 ? 5 : 0);
		/* A data layer's reads are every caller's, of many keys: the ratio
		 * bounds the misses that writes cause, not the cold ones. */
		bool layer = w->database.data_layer;
		json_object_set_new(ev, "data_layer", json_boolean(layer));
		emit(r, 3, "read-through-cache", pri, mod, finding, ev,
		     layer ? "It is the data layer, so its reads are every caller's: a cache "
		             "belongs in front of the queries that repeat (the same key asked "
		             "again and again), in ETS (read_concurrency: true), filled on miss "
		             "and invalidated on each write to that data. The ratio bounds the "
		             "misses writes cause; how often keys repeat, which call counts "
		             "cannot show, decides the rest: trace the callers to find them."
		           : "Put a read-through cache in front of it: serve reads from ETS "
		             "(read_concurrency: true) filled on miss, and invalidate or refresh "
		             "the entry on each write; with this read/write ratio nearly every "
		             "call becomes a local lookup.");
	}
	gi_free(cands);
}

/* Whether the workload entry's database facts make its module a data layer
 * (pipeline helpers inside it, `use Ecto.Repo`, driver calls or a
 * Repo-shaped module), with why in `via`. */
static bool data_layer_signature(const struct fuse_view_database *db, char *via, size_t via_size)
{
	double helpers = db->pipeline_helper_calls;
	if (isfinite(helpers) && helpers > 0) {
		snprintf(via, via_size, "calls to pipeline helpers inside the module");
		return true;
	}
	if (db->uses_ecto_repo) {
		snprintf(via, via_size, "it uses Ecto.Repo");
		return true;
	}
	if (db->data_layer) {
		const char *why = db->data_layer_reason;
		snprintf(via, via_size, "a data layer: %s", why ? why : "it talks to a database");
		return true;
	}
	return false;
}

/* True when at least the lookup share of the calls of the workload entry
 * whose database facts are `db` go to a data layer other than `self` (may
 * be NULL), said in `via`. */
static bool mostly_to_data_layer(struct rules *r, const struct fuse_view_database *db,
                                 const char *self, char *via, size_t via_size)
{
	double share = db->repo_call_share;
	const char *repo = db->repo;
	if (!repo || (self && strcmp(repo, self) == 0) || !isfinite(share) ||
	    share < r->t->lookup_repo_share)
		return false;
	snprintf(via, via_size, "%.0f%% of its calls go to %s", share * 100, repo);
	return true;
}

/* The signature of a module that goes to the database: a data layer, or
 * one most of whose calls go to one. */
static bool db_signature(struct rules *r, const struct fuse_view_workload *w, char *via,
                         size_t via_size)
{
	const struct fuse_view_database *db = &w->database;
	return data_layer_signature(db, via, via_size) ||
	       mostly_to_data_layer(r, db, NULL, via, via_size);
}

/* The signature of a lookup in front of the database (rule 4): a module
 * that is not itself a data layer (it issues no driver calls, does not use
 * Ecto.Repo, runs no pipeline callbacks, is not shaped like a Repo) and
 * whose operations cause operations of a data layer below it, most of its
 * work going there. The data layer itself is never a lookup: it answers
 * every caller's queries, so its read share is the mix of all the data the
 * application reads and writes, which says nothing about how often any one
 * kind of data changes; the table belongs in the caller that asks for one
 * kind of data again and again. */
static bool lookup_signature(struct rules *r, const struct fuse_view_workload *w, char *via,
                             size_t via_size)
{
	const struct fuse_view_database *db = &w->database;
	return !data_layer_signature(db, via, via_size) &&
	       mostly_to_data_layer(r, db, w->module, via, via_size);
}

/* Whether traced module `from` reaches `to` through the traced modules its
 * functions call (database.calls_traced_modules) or the data layer it
 * depends on (database.repo), at most `depth` modules deep. */
static bool module_reaches(const struct fuse_view *v, const char *from, const char *to, int depth)
{
	const struct fuse_view_workload *w = fuse_view_workload_of(v, from);
	if (!w || depth <= 0)
		return false;
	const char *repo = w->database.repo;
	if (repo && strcmp(repo, to) == 0)
		return true;
	const struct fuse_view_names *next = &w->database.calls_traced_modules;
	for (size_t i = 0; i < next->len; i++) {
		const char *m = next->items[i];
		if (m && strcmp(m, from) != 0 &&
		    (strcmp(m, to) == 0 || module_reaches(v, m, to, depth - 1)))
			return true;
	}
	return false;
}

/* True when another candidate goes through `module` for its work: the
 * cache or the table belongs in that outermost caller, where the lookups
 * start, not in the layers below it. */
static bool has_caller_candidate(struct rules *r, const struct candidates *cands,
                                 const char *module)
{
	for (size_t i = 0; i < cands->len; i++) {
		const char *other = cands->items[i]->module;
		if (other && strcmp(other, module) != 0 && module_reaches(r->v, other, module, 8))
			return true;
	}
	return false;
}

/* 4. Database-backed lookup of rarely changing data. */
static void rule_lookup(struct rules *r)
{
	struct candidates *cands = gi_calloc(1, sizeof(*cands));
	for (size_t i = 0; i < r->v->nworkload; i++) {
		const struct fuse_view_workload *w = &r->v->workload[i];
		char via[256];
		double share = w->read_share, cps = w->operations_per_second;
		if (!isfinite(share) || share < r->t->lookup_read_share || !isfinite(cps) ||
		    cps < r->t->lookup_calls_per_s || !lookup_signature(r, w, via, sizeof(via)))
			continue;
		cands->items[cands->len++] = w;
	}
	for (size_t i = 0; i < cands->len; i++) {
		const struct fuse_view_workload *w = cands->items[i];
		const char *mod = w->module;
		char via[256];
		if (!mod || !lookup_signature(r, w, via, sizeof(via)))
			continue;
		if (has_caller_candidate(r, cands, mod) || reads_in_memory(r, w))
			continue;
		const struct fuse_view_database *db = &w->database;
		double reads_w = w->reads_per_window;
		double writes_w = w->writes_per_window;
		double rshare = db->repo_call_share;
		/* Its reads that reach the database, and never more than the data
		 * layer's own reads when that is traced. */
		double trips = reads_w * fmin(rshare, 1.0);
		double repo_reads = db->repo_reads_per_window;
		if (isfinite(repo_reads) && repo_reads < trips)
			trips = repo_reads;
		double saved = trips - (isfinite(writes_w) ? writes_w : 0);
		if (!isfinite(saved) || saved < 0)
			saved = 0;
		json_t *ev = json_object();
		json_object_set_new(ev, "signature", json_string(via));
		ev_num(ev, "read_share", w->read_share);
		ev_num(ev, "reads", w->reads);
		ev_num(ev, "writes", w->writes);
		ev_num(ev, "operations_per_second", w->operations_per_second);
		ev_num(ev, "pipeline_helper_calls", db->pipeline_helper_calls);
		json_object_set_new(ev, "repo", fuse_json_str(db->repo));
		ev_num(ev, "reads_per_window", reads_w);
		ev_num(ev, "writes_per_window", writes_w);
		ev_num(ev, "round_trips_saved_per_window", round(saved));
		ev_num(ev, "time_share", module_time_share(r, mod));
		json_object_set_new(ev, "storage", fuse_json_str(db->storage));
		char finding[640];
		snprintf(finding, sizeof(finding),
		         "%s serves read-mostly lookups (%.1f%% reads) from the database (%s); "
		         "about %.0f round trips per window could be saved",
		         mod, w->read_share * 100, via, round(saved));
		double pri = 60 + 10 * log10(fmax(saved, 1));
		emit(r, 4, "db-backed-lookup", pri, mod, finding, ev,
		     "Keep this rarely changing data in ETS (a table owned by a long-lived "
		     "process, read_concurrency: true), load it at start, and refresh the changed "
		     "entries on write (or on a change notification) instead of querying the "
		     "database for every lookup.");
	}
	gi_free(cands);
}

/* 5. Hot hub: a hot module with many dependents, or a hot complex function. */
static void rule_hub(struct rules *r)
{
	for (size_t i = 0; i < r->v->nhot_modules; i++) {
		const struct fuse_view_module *m = &r->v->hot_modules[i];
		const struct fuse_view_module_graph *g = &m->graph;
		double share = m->reductions_share, ca = g->ca;
		bool hub = g->hub == FUSE_TRI_TRUE;
		if (!isfinite(share) || share < r->t->hub_share)
			continue;
		if (!hub && !(isfinite(ca) && ca >= r->t->hub_dependents))
			continue;
		const char *mod = m->module;
		json_t *ev = json_object();
		ev_num(ev, "reductions_share", share);
		ev_num(ev, "dependents", ca);
		json_object_set_new(ev, "hub", json_boolean(hub));
		ev_num(ev, "complexity", g->complexity);
		json_object_set_new(ev, "zone", fuse_json_str(g->zone));
		char finding[512], pct[32];
		fuse_fmt_pct(share, pct, sizeof(pct));
		snprintf(finding, sizeof(finding),
		         "%s is hot (%s of reductions) and a hub with %.0f dependents", mod, pct,
		         isfinite(ca) ? ca : 0);
		emit(r, 5, "hot-hub", 45 + 100 * share, mod, finding, ev,
		     "Optimise or split this module first: it is both where the CPU goes and what "
		     "most code depends on, so a change there pays off most and risks most. Keep "
		     "its interface, move the hot path into a focused module, and cover it with "
		     "tests before changing it.");
	}
	int functions = 0;
	for (size_t i = 0; i < r->v->nhotspots && functions < 5; i++) {
		const struct fuse_view_hotspot *f = &r->v->hotspots[i];
		double cps = f->calls_per_second;
		double cc = f->cyclomatic, cog = f->cognitive;
		if (!isfinite(cps) || cps < r->t->hub_function_calls_per_s)
			continue;
		if (!(isfinite(cc) && cc >= r->t->hub_cyclomatic) &&
		    !(isfinite(cog) && cog >= r->t->hub_cognitive))
			continue;
		/* Magnitude before mechanism: complexity alone never makes advice
		 * on cold code; the function must carry a share of the time. */
		const char *basis = NULL;
		double tshare = function_time_share(r, f, &basis);
		if (!isfinite(tshare) || tshare < r->t->advice_min_share)
			continue;
		const char *mfa = f->mfa;
		functions++;
		json_t *ev = json_object();
		ev_num(ev, "time_share", tshare);
		json_object_set_new(ev, "time_share_of", json_string(basis));
		ev_num(ev, "calls_per_second", cps);
		ev_num(ev, "cyclomatic", cc);
		ev_num(ev, "cognitive", cog);
		ev_num(ev, "callers", (double)f->callers.len);
		char finding[640], times[GI_FMT_NUM_MAX], tp[32];
		gi_fmt_count(cps, times, sizeof(times));
		fuse_fmt_pct(tshare, tp, sizeof(tp));
		snprintf(finding, sizeof(finding),
		         "%s carries %s of the %s time, is called %s times/s and is complex "
		         "(cyclomatic %.0f, cognitive %.0f)",
		         mfa ? mfa : "?", tp, strcmp(basis, "node") == 0 ? "node's" : "traced",
		         times, isfinite(cc) ? cc : 0, isfinite(cog) ? cog : 0);
		/* Ranked by expected gain: the time it carries. */
		emit(r, 5, "hot-hub", 35 + 100 * tshare + 4 * log10(fmax(cps, 1)), mfa, finding, ev,
		     "Simplify this function before tuning elsewhere: split its clauses, move rare "
		     "branches out of the hot path, and precompute what does not change per call.");
	}
}

/* 6. Mailbox build-up. */
static void rule_mailbox(struct rules *r)
{
	for (size_t i = 0; i < r->v->mailboxes.len && i < 10; i++) {
		const struct fuse_view_process *b = &r->v->mailboxes.items[i];
		double first = b->first, last = b->last;
		double max = b->max, samples = b->samples;
		double rises = b->rising_steps, steps = b->steps;
		double head = b->start_quarter_avg, tail = b->end_quarter_avg;
		/* Grown by mailbox_min from the first to the last quarter, and rising
		 * in most of the steps where it was seen: a trend, not a burst. */
		if (!isfinite(max) || samples < r->t->min_snapshots || !isfinite(head) ||
		    !isfinite(tail) || tail - head < r->t->mailbox_min || !(last > first) ||
		    steps <= 0 || rises / steps < r->t->mailbox_rising_share)
			continue;
		const char *mod = b->module, *name = b->registered_name;
		const char *pid = b->pid;
		json_t *ev = json_object();
		json_object_set_new(ev, "pid", json_string(pid ? pid : "?"));
		json_object_set_new(ev, "module", mod ? json_string(mod) : json_null());
		json_object_set_new(ev, "registered_name", name ? json_string(name) : json_null());
		ev_num(ev, "queue_first", first);
		ev_num(ev, "queue_last", last);
		ev_num(ev, "queue_max", max);
		ev_num(ev, "start_quarter_avg", head);
		ev_num(ev, "end_quarter_avg", tail);
		ev_num(ev, "rising_steps", rises);
		ev_num(ev, "steps", steps);
		json_object_set_new(ev, "hub",
		                    b->hub == FUSE_TRI_UNKNOWN
		                        ? json_null()
		                        : json_boolean(b->hub == FUSE_TRI_TRUE));
		ev_num(ev, "dependents", b->dependents);
		/* Reads it serves, if any: a spool or a sink serves none, and
		 * moving reads into ETS is no remedy for it. */
		const struct fuse_view_workload *w = fuse_view_workload_of(r->v, mod);
		double reads = w ? w->reads : NAN;
		bool serves_reads = isfinite(reads) && reads > 0;
		ev_num(ev, "time_share", module_time_share(r, mod));
		json_object_set_new(ev, "serves_reads",
		                    w ? json_boolean(serves_reads) : json_null());
		char finding[640];
		snprintf(finding, sizeof(finding),
		         "Mailbox of %s (%s%s%s) grows: %.0f -> %.0f messages (max %.0f)%s", pid,
		         mod ? mod : "unknown module", name ? ", " : "", name ? name : "", first,
		         last, max,
		         b->hub == FUSE_TRI_TRUE ? "; the module is a hub: a singleton bottleneck"
		                                 : "");
		emit(r, 6, "mailbox-buildup", 60 + 10 * log10(fmax(max, 1)), mod ? mod : pid,
		     finding, ev,
		     serves_reads
		         ? "One process receives more than it can handle. Shard the work (a pool, "
		           "or "
		           "partitions by key), move reads it serves into ETS so callers skip it, "
		           "replace calls with casts only where back-pressure is not needed, and "
		           "bound the producers."
		         : "One process receives more than it can handle. Shard the work (a pool, "
		           "or "
		           "partitions by key), batch what it does per message (one write for many "
		           "messages), and bound the producers (calls instead of casts where "
		           "back-pressure is needed).");
	}
}

/* 7. Memory growth. */
static void rule_memory(struct rules *r)
{
	const struct fuse_view_stat *mem = &r->v->metrics.memory_bytes;
	double trend = mem->trend_bytes, ratio = mem->trend_ratio;
	double growth = mem->growth_bytes, first = mem->first;
	if (r->snapshots < r->t->min_snapshots || !isfinite(trend) || !isfinite(growth))
		return;
	if (trend < r->t->memory_growth_bytes || growth < r->t->memory_growth_bytes ||
	    !isfinite(ratio) || ratio < r->t->memory_growth_ratio)
		return;
	/* A trend needs continuity: when more of the session is missing than
	 * was seen, the two ends are not one series, and nothing is claimed. */
	double missing = r->v->session.snapshots_missing;
	size_t gaps = r->v->session.ngaps;
	if (!isfinite(missing))
		missing = 0;
	if (missing > (double)r->snapshots)
		return;
	json_t *ev = json_object();
	if (gaps > 0) {
		ev_num(ev, "gaps", (double)gaps);
		ev_num(ev, "snapshots_missing", missing);
	}
	ev_num(ev, "first_bytes", first);
	ev_num(ev, "last_bytes", mem->last);
	ev_num(ev, "growth_bytes", growth);
	ev_num(ev, "trend_bytes", trend);
	ev_num(ev, "trend_ratio", ratio);
	json_t *cats = json_object();
	char names[256] = "";
	for (size_t i = 0; i < FUSE_MEM_CATEGORIES; i++) {
		const char *key = fuse_view_memory_category_name(i);
		double g = r->v->metrics.memory_categories[i].trend_bytes;
		if (!isfinite(g) || g <= 0)
			continue;
		ev_num(cats, key, g);
		/* Name the categories that carry at least a fifth of the growth. */
		if (g >= 0.2 * trend && i != FUSE_MEM_SYSTEM) {
			size_t len = strlen(names);
			snprintf(names + len, sizeof(names) - len, "%s%s", len ? ", " : "", key);
		}
	}
	json_object_set_new(ev, "categories", cats);
	json_t *plist = json_array();
	for (size_t i = 0; i < r->v->memory_growth.len && i < 5; i++) {
		const struct fuse_view_process *p = &r->v->memory_growth.items[i];
		json_t *e = json_object();
		json_object_set_new(e, "pid", fuse_json_str(p->pid));
		json_object_set_new(e, "module", fuse_json_str(p->module));
		ev_num(e, "growth_bytes", p->growth_bytes);
		json_array_append_new(plist, e);
	}
	json_object_set_new(ev, "processes", plist);
	/* Memory that grew with the processes, per process steady, is the
	 * load ramping up (connections, sessions) or processes that never
	 * exit: a different finding, said as such, at low severity. */
	const struct fuse_view_stat *pc = &r->v->metrics.process_count;
	double ph = pc->start_quarter_avg, pt = pc->end_quarter_avg;
	double mh = mem->start_quarter_avg, mt = mem->end_quarter_avg;
	bool with_processes = false;
	if (isfinite(ph) && isfinite(pt) && ph > 0 && pt > ph * (1 + r->t->memory_growth_ratio) &&
	    isfinite(mh) && isfinite(mt) && mh > 0) {
		double per_process = (mt / pt) / (mh / ph) - 1;
		with_processes = per_process < r->t->memory_growth_ratio;
		ev_num(ev, "process_count_trend_ratio", pt / ph - 1);
		ev_num(ev, "memory_per_process_trend_ratio", per_process);
	}
	char finding[512], g1[32], g2[32];
	fuse_fmt_bytes(trend, g1, sizeof(g1));
	fuse_fmt_bytes(first, g2, sizeof(g2));
	if (with_processes) {
		snprintf(finding, sizeof(finding),
		         "Memory grew by %s (+%.0f%%) with the processes (%.0f -> %.0f on "
		         "average), memory per process steady",
		         g1, ratio * 100, ph, pt);
		emit(r, 7, "memory-growth", 35, NULL, finding, ev,
		     "Memory follows the number of processes: the load ramping up (connections, "
		     "sessions) or processes that never exit. Observe at a steady load: if the "
		     "process count keeps growing there, find the processes that should have "
		     "exited (their initial call in the process list).");
		return;
	}
	char across[96] = "";
	if (gaps > 0)
		snprintf(across, sizeof(across),
		         " (measured across %zu gap%s, %.0f snapshots missing)", gaps,
		         gaps == 1 ? "" : "s", missing);
	snprintf(finding, sizeof(finding),
	         "Memory grew by %s (+%.0f%%) from %s over the session%s%s%s", g1, ratio * 100, g2,
	         across, names[0] ? "; mostly " : "", names);
	emit(r, 7, "memory-growth", 50 + 40 * clampd(ratio, 0, 1), NULL, finding, ev,
	     "Find what keeps growing: for binary, processes holding large or many refc "
	     "binaries (hibernate idle processes, copy sub-binaries you keep with "
	     ":binary.copy/1); for ets, tables without eviction; for processes, the processes "
	     "listed in the evidence (state or mailbox that only grows). Observe longer to "
	     "tell a leak from a warm-up.");
}

/* 8, second form: the BEAM has headroom while its processes wait on the
 * database. Returns whether it emitted. */
static bool rule_waiting(struct rules *r, double util, double rq, const char *db_module)
{
	const struct fuse_view_blocked *b = &r->v->executing.blocked;
	double blocked = b->share_of_samples;
	double db_share = b->database_share_of_blocked;
	double sched = r->schedulers > 0 ? r->schedulers : 1;
	if (!isfinite(blocked) || !isfinite(db_share) || util >= r->t->headroom_utilisation ||
	    rq >= r->t->cpu_run_queue_per_scheduler * sched ||
	    blocked < r->t->headroom_blocked_share || db_share < r->t->headroom_database_share)
		return false;
	json_t *sites = json_array();
	char names[512] = "";
	size_t used = 0;
	for (size_t i = 0; i < b->ncall_sites && json_array_size(sites) < 3; i++) {
		const struct fuse_view_call_site *site = &b->call_sites[i];
		const char *fn = site->function;
		if (!fn || !site->database)
			continue;
		json_array_append_new(sites, json_string(fn));
		int n = snprintf(names + used, sizeof(names) - used, "%s%s", used ? ", " : "", fn);
		if (n > 0 && (size_t)n < sizeof(names) - used)
			used += (size_t)n;
	}
	json_t *ev = json_object();
	json_object_set_new(ev, "basis", json_string("waiting"));
	ev_num(ev, "scheduler_utilisation_avg", util);
	ev_num(ev, "run_queue_avg", rq);
	ev_num(ev, "schedulers", sched);
	ev_num(ev, "blocked_share", blocked);
	ev_num(ev, "database_share_of_blocked", db_share);
	json_object_set_new(ev, "call_sites", sites);
	json_object_set_new(ev, "database_module",
	                    db_module ? json_string(db_module) : json_null());
	char finding[1024], pct[32];
	fuse_fmt_pct(util, pct, sizeof(pct));
	snprintf(finding, sizeof(finding),
	         "The BEAM has headroom (utilisation %s, run queue %.2f for %.0f schedulers) while "
	         "the sampled processes spend %.0f%% of their time waiting for replies, %.0f%% of "
	         "it in calls that lead to the database (%s): the database path, not the VM, is "
	         "the likely bottleneck",
	         pct, rq, sched, blocked * 100, db_share * 100, names[0] ? names : "-");
	emit(r, 8, "beam-not-bottleneck", 35, NULL, finding, ev,
	     "Look at the database path, not at CPU: the processes every call waits on in line "
	     "(a single connection, or a server in front of it such as a registry: the call "
	     "sites above say which calls wait), the queries' own time (the database's "
	     "statistics, e.g. PostgreSQL pg_stat_statements; the pool's queue time), and take "
	     "work off it (keep rarely changing lookups in ETS, batch, more connections where "
	     "the database allows). More schedulers or faster code on the BEAM would not help "
	     "while the calls wait.");
	return true;
}

/* 8. The BEAM is not the bottleneck. */
static void rule_idle(struct rules *r)
{
	const struct fuse_view_metrics *m = &r->v->metrics;
	double util = m->scheduler_utilisation.avg;
	double rq = m->run_queue.avg;
	double rps = m->reductions_per_second.avg;
	double sched = r->schedulers > 0 ? r->schedulers : 1;
	if (r->snapshots < r->t->min_snapshots || !isfinite(util) || !isfinite(rq) ||
	    !isfinite(rps))
		return;
	/* Traced operations flowing (the busiest module's rate: layers would
	 * count twice), and the data layer when one is seen. */
	double calls_per_s = 0;
	const char *db_module = NULL;
	for (size_t i = 0; i < r->v->nworkload; i++) {
		const struct fuse_view_workload *w = &r->v->workload[i];
		double c = w->operations_per_second;
		if (isfinite(c) && c > calls_per_s)
			calls_per_s = c;
		char via[256];
		/* A database outside the VM only: mnesia's tables and DETS files
		 * are the node's own (docs/RULES.md, "Where data lives"). */
		const char *storage = w->database.storage;
		bool outside = !storage || strcmp(storage, "external") == 0;
		if (!db_module && outside && db_signature(r, w, via, sizeof(via))) {
			/* Name the data layer itself when the module is a caller of it. */
			const char *repo = w->database.repo;
			db_module = repo ? repo : w->module;
		}
	}
	if (util >= r->t->idle_utilisation || rq >= r->t->idle_run_queue ||
	    rps >= r->t->idle_reductions_per_scheduler * sched) {
		/* Busier than idle: headroom is still there when the processes
		 * wait on the database rather than for a CPU. */
		rule_waiting(r, util, rq, db_module);
		return;
	}
	/* Only when the node is serving something. */
	if (calls_per_s < 1)
		return;
	/* "Time goes elsewhere" needs processes that wait: sampled, with few
	 * of them blocked in calls, the node is lightly loaded and healthy,
	 * not waiting on anything outside. */
	double blocked = r->v->executing.blocked.share_of_samples;
	if (isfinite(blocked) && blocked < r->t->headroom_blocked_share)
		return;
	json_t *ev = json_object();
	ev_num(ev, "scheduler_utilisation_avg", util);
	ev_num(ev, "run_queue_avg", rq);
	ev_num(ev, "reductions_per_second_avg", rps);
	ev_num(ev, "busiest_module_operations_per_second", calls_per_s);
	json_object_set_new(ev, "database_module",
	                    db_module ? json_string(db_module) : json_null());
	char finding[512], pct[32], ops[GI_FMT_NUM_MAX];
	fuse_fmt_pct(util, pct, sizeof(pct));
	gi_fmt_count(calls_per_s, ops, sizeof(ops));
	snprintf(finding, sizeof(finding),
	         "The BEAM is mostly idle (utilisation %s, run queue %.2f) while a traced module "
	         "serves %s operations/s: time goes elsewhere",
	         pct, rq, ops);
	/* Database steps only where the profile saw a database. */
	if (db_module)
		emit(r, 8, "beam-not-bottleneck", 35, NULL, finding, ev,
		     "Look outside the VM: database round trips, network calls, pool checkout "
		     "waits. Confirm with the database's statistics (PostgreSQL "
		     "pg_stat_statements: calls and mean_exec_time of the top queries), pool "
		     "queue times (Ecto's queue_time in telemetry) and request latency; then "
		     "cache or batch the slow external calls.");
	else
		emit(r, 8, "beam-not-bottleneck", 35, NULL, finding, ev,
		     "Look outside the VM: the time goes to waiting, not computing. Measure "
		     "request latency against the work done here, then find the waits: calls "
		     "to other services (HTTP, queues), disk or network I/O, timers and "
		     "receive timeouts, pool checkouts and locks. No database was seen on this "
		     "node's traced paths.");
}

/* 9. The single-process ceiling: one process doing much more of the
 * node's work than any other can use one scheduler at most, so the work
 * that goes through it stops scaling there, whatever the cores. */
static void rule_single_process(struct rules *r)
{
	const struct fuse_view_processes *top = &r->v->top_cpu;
	size_t n = top->len;
	double util = r->v->metrics.scheduler_utilisation.avg;
	int emitted = 0;
	if (r->snapshots < r->t->min_snapshots || n < 2)
		return;
	for (size_t i = 0; i < n && emitted < 3; i++) {
		const struct fuse_view_process *p = &top->items[i];
		double share = p->reductions_share;
		if (p->logger || !isfinite(share) || share < r->t->single_process_share)
			continue;
		/* Far above the other busiest processes: a funnel, not one of many
		 * workers of the same size. */
		double others = 0;
		size_t k = 0;
		for (size_t j = 0; j < n; j++) {
			double s = top->items[j].reductions_share;
			if (j != i && isfinite(s)) {
				others += s;
				k++;
			}
		}
		double mean = k > 0 ? others / (double)k : 0;
		if (share < r->t->single_process_ratio * mean)
			continue;
		const char *mod = p->module, *pid = p->pid;
		const char *name = p->registered_name;
		/* A process started by spawn(fun) or by plumbing: its code. */
		if ((!mod || fuse_module_is_wrapper(mod)) && p->running_module)
			mod = p->running_module;
		/* What one scheduler it uses: its share of the node's busy time. */
		double scheduler = isfinite(util) ? share * util * r->schedulers : NAN;
		/* Busy enough to matter: an idle node's busiest process is none. */
		double rps = p->reductions_per_second;
		if (!isfinite(rps) || rps < r->t->single_process_reductions_per_s)
			continue;
		json_t *ev = json_object();
		json_object_set_new(ev, "pid", json_string(pid ? pid : "?"));
		json_object_set_new(ev, "module", mod ? json_string(mod) : json_null());
		json_object_set_new(ev, "registered_name", name ? json_string(name) : json_null());
		ev_num(ev, "time_share", share);
		ev_num(ev, "others_mean_share", mean);
		ev_num(ev, "scheduler_share", scheduler);
		ev_num(ev, "reductions_per_second", rps);
		ev_num(ev, "max_queue", p->max_queue);
		char finding[768], pct[32], sch[64] = "";
		fuse_fmt_pct(share, pct, sizeof(pct));
		if (isfinite(scheduler))
			snprintf(sch, sizeof(sch), ", about %.0f%% of one scheduler",
			         scheduler * 100);
		snprintf(
		    finding, sizeof(finding),
		    "%s (%s%s%s) is the single-process ceiling: it does %s of the node's work, "
		    "%.1fx the mean of the other busiest processes%s; the work through it "
		    "cannot use more than one scheduler",
		    pid ? pid : "?", mod ? mod : "unknown module", name ? ", " : "",
		    name ? name : "", pct, mean > 0 ? share / mean : 0, sch);
		emitted++;
		emit(
		    r, 9, "single-process",
		    35 + 60 * clampd(isfinite(scheduler) ? scheduler : share, 0, 1),
		    mod ? mod : pid, finding, ev,
		    "Nothing to change while it has headroom; it is where throughput stops first "
		    "as the load grows. Before that, take work out of it: keep in the process only "
		    "what must be serialised (the order, the state changes), move the rest to its "
		    "callers (encoding, validation, reads of data that could live in ETS), and "
		    "split it by key (one process per queue, room or partition) when one key "
		    "carries the load.");
	}
}

/* 10. A mnesia table on DETS under the traced reads: disc_only_copies
 * tables are DETS files, read through one server process with file I/O;
 * disc_copies keeps the same durability with reads from ETS. */
static void rule_disc_only(struct rules *r)
{
	/* The traced module that reads mnesia most: the evidence of reads. */
	const char *reader = NULL;
	double reads_ps = 0;
	for (size_t i = 0; i < r->v->nworkload; i++) {
		const struct fuse_view_workload *w = &r->v->workload[i];
		const char *st = w->database.storage;
		double ops = w->operations_per_second, share = w->read_share;
		double rps = isfinite(ops) && isfinite(share) ? ops * share : 0;
		if (st && strcmp(st, "mnesia") == 0 && rps > reads_ps) {
			reads_ps = rps;
			reader = w->module;
		}
	}
	if (!reader || reads_ps < r->t->lookup_calls_per_s)
		return;
	for (size_t i = 0; i < r->v->storage.nmnesia_tables; i++) {
		const struct fuse_view_table *t = &r->v->storage.mnesia_tables[i];
		const char *name = t->name, *st = t->storage;
		if (!name || !st || strcmp(st, "disc_only_copies") != 0)
			continue;
		json_t *ev = json_object();
		json_object_set_new(ev, "table", json_string(name));
		json_object_set_new(ev, "storage_type", json_string(st));
		ev_num(ev, "size", t->size);
		json_object_set_new(ev, "reader", json_string(reader));
		ev_num(ev, "mnesia_reads_per_second", reads_ps);
		char finding[768], rps[GI_FMT_NUM_MAX];
		gi_fmt_count(reads_ps, rps, sizeof(rps));
		snprintf(finding, sizeof(finding),
		         "mnesia table %s is disc_only_copies: a DETS file, read through its dets "
		         "server with file I/O; %s, whose reads reach mnesia, serves %s reads/s",
		         name, reader, rps);
		emit(r, 10, "disc-only-table", 45, name, finding, ev,
		     "Make the table disc_copies (mnesia:change_table_copy_type/3): the same "
		     "durability, reads served from ETS in memory. Another ETS cache in front of "
		     "it is not the remedy: it duplicates the data and its invalidation. Keep "
		     "disc_only_copies only for tables too large for memory.");
	}
}

static int cmp_priority(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	json_int_t px = json_integer_value(json_object_get(x, "priority"));
	json_int_t py = json_integer_value(json_object_get(y, "priority"));
	if (px != py)
		return px < py ? 1 : -1;
	json_int_t rx = json_integer_value(json_object_get(x, "rule"));
	json_int_t ry = json_integer_value(json_object_get(y, "rule"));
	return rx < ry ? -1 : rx > ry;
}

/* The remedy a recommendation prescribes: findings on one subject with one
 * remedy are one finding. A read-through cache and a table of rarely
 * changing data are both "keep the data in ETS in front of the database". */
static const char *remedy_of(const char *id)
{
	if (strcmp(id, "read-through-cache") == 0 || strcmp(id, "db-backed-lookup") == 0)
		return "ets";
	return id;
}

static bool same_finding(json_t *a, json_t *b)
{
	const char *sa = gi_json_str(a, "subject"), *sb = gi_json_str(b, "subject");
	const char *ia = gi_json_str(a, "id"), *ib = gi_json_str(b, "id");
	if (!sa || !sb || !ia || !ib || strcmp(sa, sb) != 0)
		return false;
	return strcmp(remedy_of(ia), remedy_of(ib)) == 0;
}

/* Folds `other` into `primary` (the higher priority): its rule and id join
 * "rules" and "ids", its finding and evidence go to "also", and evidence
 * keys the primary lacks are copied, so either rule's evidence reads the
 * same on the merged recommendation. */
static void merge_into(json_t *primary, json_t *other)
{
	json_t *rules = json_object_get(primary, "rules"), *ids = json_object_get(primary, "ids");
	json_array_append(rules, json_object_get(other, "rule"));
	json_array_append(ids, json_object_get(other, "id"));
	json_t *also = json_object();
	const char *keys[] = {"rule", "id", "priority", "finding", "evidence", "advice"};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		json_object_set(also, keys[i], json_object_get(other, keys[i]));
	json_array_append_new(json_object_get(primary, "also"), also);
	json_t *ev = json_object_get(primary, "evidence");
	if (json_is_object(ev) && json_is_object(json_object_get(other, "evidence")))
		json_object_update_missing(ev, json_object_get(other, "evidence"));
}

/* One recommendation per subject and remedy (rules/ids list all that
 * fired). Takes `recs`, returns the merged array (new). */
static json_t *merge_findings(json_t *recs)
{
	json_t *out = json_array();
	for (size_t i = 0; i < json_array_size(recs); i++) {
		json_t *rec = json_array_get(recs, i);
		json_object_set_new(rec, "rules", json_pack("[O]", json_object_get(rec, "rule")));
		json_object_set_new(rec, "ids", json_pack("[O]", json_object_get(rec, "id")));
		json_object_set_new(rec, "also", json_array());
		size_t k = 0;
		while (k < json_array_size(out) && !same_finding(json_array_get(out, k), rec))
			k++;
		if (k == json_array_size(out)) {
			json_array_append(out, rec);
			continue;
		}
		json_t *have = json_array_get(out, k);
		if (gi_json_num(rec, "priority") > gi_json_num(have, "priority")) {
			/* The new one leads: fold what was there (and what it held). */
			json_t *held = json_object_get(have, "also");
			merge_into(rec, have);
			for (size_t h = 0; h < json_array_size(held); h++) {
				json_t *x = json_array_get(held, h);
				json_array_append(json_object_get(rec, "rules"),
				                  json_object_get(x, "rule"));
				json_array_append(json_object_get(rec, "ids"),
				                  json_object_get(x, "id"));
				json_array_append(json_object_get(rec, "also"), x);
			}
			json_array_set(out, k, rec);
		} else {
			merge_into(have, rec);
		}
	}
	json_decref(recs);
	return out;
}

int fuse_rules_evaluate(json_t *profile, const struct fuse_thresholds *t, json_t **out)
{
	*out = NULL;
	if (!json_is_object(profile))
		return GI_EINVAL;
	struct fuse_thresholds defaults;
	if (!t) {
		fuse_thresholds_default(&defaults);
		t = &defaults;
	}
	struct fuse_view view;
	int rc = fuse_view_parse(profile, &view);
	if (rc != 0) {
		fuse_view_destroy(&view);
		return rc;
	}
	struct rules r = {&view, t, json_array(), 0, 0};
	r.schedulers = view.session.schedulers_online;
	if (!isfinite(r.schedulers) || r.schedulers <= 0)
		r.schedulers = 1;
	double n = view.session.snapshot_count;
	r.snapshots = isfinite(n) ? (long)n : 0;
	rule_cpu(&r);
	rule_logger(&r);
	rule_cache(&r);
	rule_lookup(&r);
	rule_hub(&r);
	rule_mailbox(&r);
	rule_memory(&r);
	rule_idle(&r);
	rule_single_process(&r);
	rule_disc_only(&r);
	r.out = merge_findings(r.out);
	/* Sort an array of borrowed pointers, then rebuild the JSON array. */
	struct gi_vec items;
	gi_vec_init(&items, sizeof(json_t *));
	for (size_t i = 0; i < json_array_size(r.out); i++) {
		json_t *rec = json_array_get(r.out, i);
		gi_vec_push(&items, &rec);
	}
	gi_vec_sort(&items, cmp_priority);
	json_t *sorted = json_array();
	for (size_t i = 0; i < items.len; i++) {
		json_t *rec = GI_VEC_AT(&items, json_t *, i);
		json_object_set_new(rec, "rank", json_integer((json_int_t)i + 1));
		json_array_append(sorted, rec);
	}
	gi_vec_destroy(&items);
	json_decref(r.out);
	fuse_view_destroy(&view);
	*out = sorted;
	return 0;
}
