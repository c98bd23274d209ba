/*
 * executing.c - the executing view of a profile: where the time goes, from
 * the sampler's stacks (docs/SNAPSHOT.md "executing"), as opposed to the
 * ownership view (who started the processes that used it).
 *
 * Ingestion adds each snapshot's distinct stacks (frames innermost first,
 * samples, the reductions they stand for) into one table keyed by the
 * stack's text, and remembers where the target said each module's object
 * code lives. Attribution waits for the end, when the knowledge graph is
 * there: each stack goes to its first frame in the observed project
 * (seeing through wrappers: fuse_module_is_wrapper), else to its first frame
 * that is not a wrapper, else to process plumbing (named by nobody).
 *
 * Invariants: every size taken from input is capped (EXEC_MAX_*; what does
 * not fit is counted as dropped); all memory lives in one arena.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/arena.h"
#include "base/buf.h"
#include "base/map.h"
#include "base/str.h"
#include "base/vec.h"
#include "fuse/fuse_int.h"

#define EXEC_MAX_STACKS  20000 /* distinct stacks over a session */
#define EXEC_MAX_ORIGINS 20000 /* distinct modules with a known origin */

struct exec_stack {
	const char **frames;
	size_t depth;
	double samples, reductions;
};

struct fuse_executing {
	struct gi_arena arena;
	struct gi_map stacks, origins, modules, functions; /* key -> struct */
	struct gi_vec stack_list, module_list, function_list;
	/* Blocked callers (waiting for a call's reply), by stack, and the call
	 * sites they were blocked at; the project's log call sites by CPU. */
	struct gi_map blocked, blocked_sites, log_sites;
	struct gi_vec blocked_list, blocked_site_list, log_site_list;
	double blocked_samples, blocked_logger, log_reductions, log_samples;
	long snapshots;   /* snapshots that carried a sampler section */
	double period_ms; /* of the last such snapshot */
	double ticks, running, waiting, reductions_sampled, dropped, failed_ticks;
	double plumbing, platform, project; /* reductions by attribution class */
	bool attributed;
};

struct fuse_executing *fuse_executing_new(void)
{
	struct fuse_executing *x = gi_calloc(1, sizeof(*x));
	gi_arena_init(&x->arena);
	gi_map_init(&x->stacks);
	gi_map_init(&x->origins);
	gi_map_init(&x->modules);
	gi_map_init(&x->functions);
	gi_map_init(&x->blocked);
	gi_map_init(&x->blocked_sites);
	gi_map_init(&x->log_sites);
	gi_vec_init(&x->blocked_list, sizeof(struct exec_stack *));
	gi_vec_init(&x->blocked_site_list, sizeof(struct fuse_exec_entry *));
	gi_vec_init(&x->log_site_list, sizeof(struct fuse_exec_entry *));
	gi_vec_init(&x->stack_list, sizeof(struct exec_stack *));
	gi_vec_init(&x->module_list, sizeof(struct fuse_exec_entry *));
	gi_vec_init(&x->function_list, sizeof(struct fuse_exec_entry *));
	x->period_ms = NAN;
	return x;
}

void fuse_executing_free(struct fuse_executing *x)
{
	if (!x)
		return;
	gi_map_destroy(&x->stacks);
	gi_map_destroy(&x->origins);
	gi_map_destroy(&x->modules);
	gi_map_destroy(&x->functions);
	gi_map_destroy(&x->blocked);
	gi_map_destroy(&x->blocked_sites);
	gi_map_destroy(&x->log_sites);
	gi_vec_destroy(&x->blocked_list);
	gi_vec_destroy(&x->blocked_site_list);
	gi_vec_destroy(&x->log_site_list);
	gi_vec_destroy(&x->stack_list);
	gi_vec_destroy(&x->module_list);
	gi_vec_destroy(&x->function_list);
	gi_arena_destroy(&x->arena);
	gi_free(x);
}

static double add_finite(double sum, double v)
{
	return isfinite(v) && v > 0 ? sum + v : sum;
}

static void take_stack(struct fuse_executing *x, struct gi_map *map, struct gi_vec *list,
                       const struct obs_view_stack *s)
{
	double samples = isfinite(s->samples) && s->samples > 0 ? s->samples : 0;
	double reds = isfinite(s->reductions) && s->reductions > 0 ? s->reductions : 0;
	if (samples <= 0)
		return;
	struct gi_buf key;
	gi_buf_init(&key, (size_t)OBS_VIEW_MAX_FRAMES * (FUSE_MAX_NAME + 1));
	for (size_t i = 0; i < s->depth; i++)
		if (gi_buf_printf(&key, "%s%.*s", i ? "\n" : "", FUSE_MAX_NAME, s->frames[i]) != 0)
			break;
	const char *k = key.data ? key.data : "";
	struct exec_stack *st = gi_map_get(map, k);
	if (!st) {
		if (list->len >= EXEC_MAX_STACKS) {
			x->dropped += samples;
			gi_buf_destroy(&key);
			return;
		}
		st = gi_arena_calloc(&x->arena, 1, sizeof(*st));
		st->frames = gi_arena_calloc(&x->arena, s->depth ? s->depth : 1, sizeof(char *));
		for (size_t i = 0; i < s->depth; i++)
			st->frames[i] = gi_arena_strndup(&x->arena, s->frames[i],
			                                 strnlen(s->frames[i], FUSE_MAX_NAME));
		st->depth = s->depth;
		gi_map_put(map, k, st);
		gi_vec_push(list, &st);
	}
	st->samples += samples;
	st->reductions += reds;
	gi_buf_destroy(&key);
}

void fuse_executing_take(struct fuse_executing *x, const struct obs_view *v)
{
	const struct obs_view_executing *e = &v->executing;
	if (!x || !e->present)
		return;
	x->snapshots++;
	if (isfinite(e->period_ms))
		x->period_ms = e->period_ms;
	x->ticks = add_finite(x->ticks, e->ticks);
	x->running = add_finite(x->running, e->samples_running);
	x->waiting = add_finite(x->waiting, e->samples_waiting);
	x->reductions_sampled = add_finite(x->reductions_sampled, e->reductions_sampled);
	x->dropped = add_finite(x->dropped, e->dropped);
	x->failed_ticks = add_finite(x->failed_ticks, e->failed_ticks);
	for (size_t i = 0; i < e->nstacks; i++)
		take_stack(x, &x->stacks, &x->stack_list, &e->stacks[i]);
	for (size_t i = 0; i < e->nblocked; i++)
		take_stack(x, &x->blocked, &x->blocked_list, &e->blocked[i]);
	for (size_t i = 0; i < e->norigins; i++) {
		const struct obs_view_origin *o = &e->origins[i];
		if (gi_map_get(&x->origins, o->module) || x->origins.len >= EXEC_MAX_ORIGINS)
			continue;
		gi_map_put(&x->origins, o->module,
		           gi_arena_strndup(&x->arena, o->origin, strnlen(o->origin, 32)));
	}
}

bool fuse_executing_has_samples(const struct fuse_executing *x)
{
	return x && x->snapshots > 0 && x->running > 0;
}

const char *fuse_executing_origin(const struct fuse_executing *x, const char *module)
{
	return x && module ? gi_map_get(&x->origins, module) : NULL;
}

int fuse_frame_split(const char *frame, char *module, size_t msize, char *function, size_t fsize,
                     long *arity)
{
	const char *slash = strrchr(frame, '/');
	if (!slash || slash == frame || !slash[1])
		return -1;
	char *end = NULL;
	long a = strtol(slash + 1, &end, 10);
	if (!end || *end || a < 0 || a > 255)
		return -1;
	/* The module ends at the last '.' before the arity: function names of
	 * lambdas ("-run/1-fun-0-") hold '/' and '-' but no '.'. */
	const char *dot = NULL;
	for (const char *p = frame; p < slash; p++)
		if (*p == '.')
			dot = p;
	if (!dot || dot == frame || dot + 1 >= slash)
		return -1;
	size_t ml = (size_t)(dot - frame), fl = (size_t)(slash - dot - 1);
	if (ml >= msize || fl >= fsize)
		return -1;
	memcpy(module, frame, ml);
	module[ml] = '\0';
	memcpy(function, dot + 1, fl);
	function[fl] = '\0';
	*arity = a;
	return 0;
}

/* "-run/1-fun-0-" (an anonymous function inside run/1) -> "run", 1: time
 * spent in a function's lambdas is time spent in that function. Leaves
 * `function` alone when it is not a lambda's name. */
static void lambda_to_parent(char *function, long *arity)
{
	if (function[0] != '-')
		return;
	char *fun = strstr(function, "-fun-");
	if (!fun)
		return;
	char *slash = NULL;
	for (char *p = function; p < fun; p++)
		if (*p == '/')
			slash = p;
	if (!slash || slash == function + 1)
		return;
	char *end = NULL;
	long a = strtol(slash + 1, &end, 10);
	if (end != fun || a < 0 || a > 255)
		return;
	size_t len = (size_t)(slash - function - 1);
	memmove(function, function + 1, len);
	function[len] = '\0';
	*arity = a;
}

static struct fuse_exec_entry *entry_get(struct fuse_executing *x, struct gi_map *map,
                                         struct gi_vec *list, const char *key, const char *module,
                                         const char *function, long arity)
{
	struct fuse_exec_entry *e = gi_map_get(map, key);
	if (e)
		return e;
	e = gi_arena_calloc(&x->arena, 1, sizeof(*e));
	e->module = gi_arena_strdup(&x->arena, module);
	e->function = function ? gi_arena_strdup(&x->arena, function) : NULL;
	e->arity = arity;
	gi_map_put(map, key, e);
	gi_vec_push(list, &e);
	return e;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct fuse_exec_entry *x = *(struct fuse_exec_entry *const *)a;
	const struct fuse_exec_entry *y = *(struct fuse_exec_entry *const *)b;
	if (x->reductions != y->reductions)
		return x->reductions < y->reductions ? 1 : -1;
	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	int r = strcmp(x->module, y->module);
	if (r || !x->function)
		return r;
	r = strcmp(x->function, y->function);
	return r ? r : (x->arity > y->arity) - (x->arity < y->arity);
}

/* The project call site of stack `s`: its first frame in the project
 * (lambdas folded into their function) into `key`, and whether any frame is
 * the logger's. False when no frame is in the project. */
static bool call_site(const struct exec_stack *s, bool (*in_project)(void *ctx, const char *module),
                      void *ctx, char *key, size_t size, bool *logger)
{
	char module[FUSE_MAX_NAME], function[FUSE_MAX_NAME];
	bool found = false;
	*logger = false;
	for (size_t f = 0; f < s->depth; f++) {
		long a;
		if (fuse_frame_split(s->frames[f], module, sizeof(module), function,
		                     sizeof(function), &a) != 0)
			continue;
		if (fuse_module_is_logger(module))
			*logger = true;
		if (found || fuse_module_is_wrapper(module) || !in_project(ctx, module))
			continue;
		lambda_to_parent(function, &a);
		snprintf(key, size, "%s.%s/%ld", module, function, a);
		found = true;
	}
	return found;
}

static void site_add(struct fuse_executing *x, struct gi_map *map, struct gi_vec *list,
                     const char *key, double samples, double reductions)
{
	struct fuse_exec_entry *e = entry_get(x, map, list, key, key, NULL, 0);
	e->samples += samples;
	e->reductions += reductions;
	e->project = true;
}

static int cmp_samples(const void *a, const void *b)
{
	const struct fuse_exec_entry *x = *(struct fuse_exec_entry *const *)a;
	const struct fuse_exec_entry *y = *(struct fuse_exec_entry *const *)b;
	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return strcmp(x->module, y->module);
}

/* Blocked callers by call site (and whether they waited in a log call),
 * and the CPU the project's log calls cost in the callers' own processes. */
static void attribute_waits(struct fuse_executing *x,
                            bool (*in_project)(void *ctx, const char *module), void *ctx)
{
	char key[2 * FUSE_MAX_NAME + 16];
	bool logger;
	for (size_t i = 0; i < x->blocked_list.len; i++) {
		struct exec_stack *s = GI_VEC_AT(&x->blocked_list, struct exec_stack *, i);
		bool site = call_site(s, in_project, ctx, key, sizeof(key), &logger);
		x->blocked_samples += s->samples;
		if (logger)
			x->blocked_logger += s->samples;
		if (!site)
			snprintf(key, sizeof(key), "%s", "(outside the project)");
		/* The site's reductions field counts its samples blocked in logging. */
		site_add(x, &x->blocked_sites, &x->blocked_site_list, key, s->samples,
		         logger ? s->samples : 0);
	}
	for (size_t i = 0; i < x->stack_list.len; i++) {
		struct exec_stack *s = GI_VEC_AT(&x->stack_list, struct exec_stack *, i);
		if (!call_site(s, in_project, ctx, key, sizeof(key), &logger) || !logger)
			continue;
		x->log_reductions += s->reductions;
		x->log_samples += s->samples;
		site_add(x, &x->log_sites, &x->log_site_list, key, s->samples, s->reductions);
	}
	gi_vec_sort(&x->blocked_site_list, cmp_samples);
	gi_vec_sort(&x->log_site_list, cmp_entry);
}

void fuse_executing_attribute(struct fuse_executing *x,
                              bool (*in_project)(void *ctx, const char *module), void *ctx)
{
	if (!x || x->attributed)
		return;
	x->attributed = true;
	attribute_waits(x, in_project, ctx);
	char module[FUSE_MAX_NAME], function[FUSE_MAX_NAME];
	for (size_t i = 0; i < x->stack_list.len; i++) {
		struct exec_stack *s = GI_VEC_AT(&x->stack_list, struct exec_stack *, i);
		long arity = 0, chosen = -1;
		bool project = false;
		/* First frame in the project, else first frame that is not plumbing. */
		for (size_t f = 0; f < s->depth && !project; f++) {
			long a;
			if (fuse_frame_split(s->frames[f], module, sizeof(module), function,
			                     sizeof(function), &a) != 0 ||
			    fuse_module_is_wrapper(module))
				continue;
			if (in_project(ctx, module)) {
				chosen = (long)f;
				project = true;
			} else if (chosen < 0) {
				chosen = (long)f;
			}
		}
		if (chosen < 0) {
			x->plumbing += s->reductions;
			continue;
		}
		fuse_frame_split(s->frames[chosen], module, sizeof(module), function,
		                 sizeof(function), &arity);
		lambda_to_parent(function, &arity);
		char key[2 * FUSE_MAX_NAME + 16];
		snprintf(key, sizeof(key), "%s.%s/%ld", module, function, arity);
		if (project)
			x->project += s->reductions;
		else
			x->platform += s->reductions;
		struct fuse_exec_entry *m =
		    entry_get(x, &x->modules, &x->module_list, module, module, NULL, 0);
		m->reductions += s->reductions;
		m->samples += s->samples;
		m->project = project;
		struct fuse_exec_entry *fn =
		    entry_get(x, &x->functions, &x->function_list, key, module, function, arity);
		fn->reductions += s->reductions;
		fn->samples += s->samples;
		fn->project = project;
	}
	gi_vec_sort(&x->module_list, cmp_entry);
	gi_vec_sort(&x->function_list, cmp_entry);
}

bool fuse_executing_any_module(const struct fuse_executing *x,
                               bool (*pred)(void *ctx, const char *module), void *ctx)
{
	char module[FUSE_MAX_NAME], function[FUSE_MAX_NAME];
	for (size_t i = 0; x && i < x->stack_list.len; i++) {
		const struct exec_stack *s = GI_VEC_AT(&x->stack_list, struct exec_stack *, i);
		for (size_t f = 0; f < s->depth; f++) {
			long a;
			if (fuse_frame_split(s->frames[f], module, sizeof(module), function,
			                     sizeof(function), &a) == 0 &&
			    pred(ctx, module))
				return true;
		}
	}
	return false;
}

size_t fuse_executing_modules(const struct fuse_executing *x,
                              const struct fuse_exec_entry *const **out)
{
	*out = x ? (const struct fuse_exec_entry *const *)x->module_list.items : NULL;
	return x ? x->module_list.len : 0;
}

size_t fuse_executing_functions(const struct fuse_executing *x,
                                const struct fuse_exec_entry *const **out)
{
	*out = x ? (const struct fuse_exec_entry *const *)x->function_list.items : NULL;
	return x ? x->function_list.len : 0;
}

static json_t *site_list(const struct gi_vec *list, size_t max, const char *count_key)
{
	json_t *a = json_array();
	for (size_t i = 0; i < list->len && i < max; i++) {
		const struct fuse_exec_entry *e = GI_VEC_AT(list, struct fuse_exec_entry *, i);
		json_t *o = json_object();
		json_object_set_new(o, "function", json_string(e->module));
		json_object_set_new(o, "samples", fuse_json_num(e->samples));
		json_object_set_new(o, count_key, fuse_json_num(e->reductions));
		json_array_append_new(a, o);
	}
	return a;
}

/* "blocked" and "logging" of the summary (docs/PROFILE.md). A sample stands
 * for one sampled process during one period, so samples / ticks is the
 * average number of the sampled processes in that state at a tick. */
static json_t *blocked_summary(const struct fuse_executing *x, double total_reductions)
{
	json_t *o = json_object();
	double all = x->running + x->waiting;
	double ticks = x->ticks > 0 ? x->ticks : NAN;
	json_object_set_new(o, "samples", fuse_json_num(x->blocked_samples));
	json_object_set_new(o, "share_of_samples",
	                    fuse_json_num(all > 0 ? x->blocked_samples / all : NAN));
	json_object_set_new(o, "callers_avg", fuse_json_num(x->blocked_samples / ticks));
	json_object_set_new(o, "logger_samples", fuse_json_num(x->blocked_logger));
	json_object_set_new(o, "logger_share_of_samples",
	                    fuse_json_num(all > 0 ? x->blocked_logger / all : NAN));
	json_object_set_new(
	    o, "logger_share_of_blocked",
	    fuse_json_num(x->blocked_samples > 0 ? x->blocked_logger / x->blocked_samples : NAN));
	json_object_set_new(o, "logger_callers_avg", fuse_json_num(x->blocked_logger / ticks));
	json_object_set_new(o, "call_sites",
	                    site_list(&x->blocked_site_list, 10, "logger_samples"));
	json_t *log = json_object();
	json_object_set_new(log, "caller_reductions", fuse_json_num(x->log_reductions));
	json_object_set_new(
	    log, "caller_share",
	    fuse_json_num(total_reductions > 0 ? x->log_reductions / total_reductions : NAN));
	json_object_set_new(log, "samples", fuse_json_num(x->log_samples));
	json_object_set_new(log, "call_sites", site_list(&x->log_site_list, 10, "reductions"));
	json_object_set_new(o, "logging", log);
	return o;
}

json_t *fuse_executing_summary(const struct fuse_executing *x, double total_reductions,
                               const char *project_rule)
{
	json_t *o = json_object();
	bool any = fuse_executing_has_samples(x);
	json_object_set_new(o, "sampled", json_boolean(any));
	if (!x)
		return o;
	json_object_set_new(o, "snapshots", json_integer(x->snapshots));
	json_object_set_new(o, "period_ms", fuse_json_num(x->period_ms));
	json_object_set_new(o, "ticks", fuse_json_num(x->ticks));
	json_object_set_new(o, "samples_running", fuse_json_num(x->running));
	json_object_set_new(o, "samples_waiting", fuse_json_num(x->waiting));
	json_object_set_new(o, "failed_ticks", fuse_json_num(x->failed_ticks));
	json_object_set_new(o, "dropped_samples", fuse_json_num(x->dropped));
	json_object_set_new(o, "reductions_sampled", fuse_json_num(x->reductions_sampled));
	double t = total_reductions > 0 ? total_reductions : NAN;
	json_object_set_new(
	    o, "coverage", fuse_json_num(isfinite(t) ? fmin(1.0, x->reductions_sampled / t) : NAN));
	json_object_set_new(o, "project_share", fuse_json_num(x->project / t));
	json_object_set_new(o, "platform_share", fuse_json_num(x->platform / t));
	json_object_set_new(o, "plumbing_share", fuse_json_num(x->plumbing / t));
	json_object_set_new(o, "project_rule", json_string(project_rule ? project_rule : "target"));
	json_object_set_new(o, "blocked", blocked_summary(x, t));
	return o;
}
