/*
 * snapshot_view.c - the typed view of a snapshot (see snapshot_view.h). The
 * only place outside the snapshot builder (snapshot.c) that knows the
 * snapshot's key strings.
 */
#include "observe/snapshot_view.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "base/alloc.h"
#include "base/error.h"
#include "base/json_read.h"

/* How many entries of `a` are read under `cap`; the rest count as truncated. */
static size_t capped(struct obs_view *v, const json_t *a, size_t cap)
{
	size_t n = a ? json_array_size(a) : 0;
	if (n > cap) {
		v->truncated += n - cap;
		n = cap;
	}
	return n;
}

static void numbers(struct obs_view *v, const json_t *a, double *out, size_t *len)
{
	size_t n = capped(v, a, OBS_VIEW_MAX_SCHEDULERS);
	*len = 0;
	for (size_t i = 0; i < n; i++) {
		const json_t *x = json_array_get(a, i);
		out[(*len)++] = json_is_number(x) ? json_number_value(x) : NAN;
	}
}

/* How an entry's members are read: one pass over the object's members
 * matched against a table in the order the snapshot builder writes them,
 * rather than a hash lookup per field (entries of top lists and trace
 * calls are the bulk of a snapshot; the monitor reads each one as it
 * arrives). What a lookup would find, the pass finds: keys are unique. */
enum member_type { MEMBER_STRING, MEMBER_NUMBER, MEMBER_TRUE };

struct member {
	const char *key;
	enum member_type type;
	size_t offset;
};

static void members_read(const json_t *o, const struct member *table, size_t n, void *out)
{
	char *base = out;
	for (size_t i = 0; i < n; i++) {
		char *field = base + table[i].offset;
		if (table[i].type == MEMBER_STRING)
			*(const char **)(void *)field = NULL;
		else if (table[i].type == MEMBER_NUMBER)
			*(double *)(void *)field = NAN;
		else
			*(bool *)(void *)field = false;
	}
	json_t *obj = (json_t *)o; /* jansson's iterators take no const */
	size_t next = 0;           /* where the previous match was: the usual order */
	for (void *it = json_object_iter(obj); it; it = json_object_iter_next(obj, it)) {
		const char *key = json_object_iter_key(it);
		for (size_t k = 0; k < n; k++) {
			size_t j = (next + k) % n;
			if (key[0] != table[j].key[0] || strcmp(key, table[j].key) != 0)
				continue;
			const json_t *val = json_object_iter_value(it);
			char *field = base + table[j].offset;
			if (table[j].type == MEMBER_STRING)
				*(const char **)(void *)field = json_string_value(val);
			else if (table[j].type == MEMBER_NUMBER)
				*(double *)(void *)field =
				    json_is_number(val) ? json_number_value(val) : NAN;
			else
				*(bool *)(void *)field = json_is_true(val);
			next = j + 1;
			break;
		}
	}
}

#define MEMBER(type, field, kind)                   \
	{                                           \
#field, kind, offsetof(type, field) \
	}

static const struct member PROCESS_MEMBERS[] = {
    MEMBER(struct obs_view_process, pid, MEMBER_STRING),
    MEMBER(struct obs_view_process, registered_name, MEMBER_STRING),
    MEMBER(struct obs_view_process, initial_call, MEMBER_STRING),
    MEMBER(struct obs_view_process, current_function, MEMBER_STRING),
    MEMBER(struct obs_view_process, module, MEMBER_STRING),
    MEMBER(struct obs_view_process, reductions, MEMBER_NUMBER),
    MEMBER(struct obs_view_process, cpu_share, MEMBER_NUMBER),
    MEMBER(struct obs_view_process, memory_bytes, MEMBER_NUMBER),
    MEMBER(struct obs_view_process, message_queue_len, MEMBER_NUMBER),
};

static const struct member CALL_MEMBERS[] = {
    MEMBER(struct obs_view_call, module, MEMBER_STRING),
    MEMBER(struct obs_view_call, function, MEMBER_STRING),
    MEMBER(struct obs_view_call, arity, MEMBER_NUMBER),
    MEMBER(struct obs_view_call, count, MEMBER_NUMBER),
    MEMBER(struct obs_view_call, time_calls, MEMBER_NUMBER),
    MEMBER(struct obs_view_call, time_us, MEMBER_NUMBER),
    MEMBER(struct obs_view_call, measured, MEMBER_NUMBER),
    MEMBER(struct obs_view_call, low, MEMBER_NUMBER),
    MEMBER(struct obs_view_call, high, MEMBER_NUMBER),
    MEMBER(struct obs_view_call, carried, MEMBER_TRUE),
    MEMBER(struct obs_view_call, unsteady, MEMBER_TRUE),
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static void processes(struct obs_view *v, const json_t *a, struct obs_view_processes *out)
{
	size_t n = capped(v, a, OBS_VIEW_MAX_PROCESSES);
	out->items = n ? gi_calloc(n, sizeof(*out->items)) : NULL;
	out->len = 0;
	for (size_t i = 0; i < n; i++) {
		const json_t *p = json_array_get(a, i);
		if (json_is_object(p))
			members_read(p, PROCESS_MEMBERS, COUNT(PROCESS_MEMBERS),
			             &out->items[out->len++]);
	}
}

static const char **strings(struct obs_view *v, const json_t *a, size_t cap, size_t *len)
{
	size_t n = capped(v, a, cap);
	const char **out = n ? gi_calloc(n, sizeof(*out)) : NULL;
	*len = 0;
	for (size_t i = 0; i < n; i++) {
		const char *s = json_string_value(json_array_get(a, i));
		if (s)
			out[(*len)++] = s;
	}
	return out;
}

static void ets(struct obs_view *v, const json_t *e)
{
	v->ets_count = gi_json_num(e, "count");
	const json_t *top = gi_json_arr(e, "top");
	size_t n = capped(v, top, OBS_VIEW_MAX_ETS);
	for (size_t i = 0; i < n; i++) {
		const json_t *t = json_array_get(top, i);
		if (!json_is_object(t))
			continue;
		struct obs_view_ets *x = &v->ets_top[v->nets_top++];
		x->name = gi_json_str(t, "name");
		x->id = gi_json_str(t, "id");
		x->owner_module = gi_json_str(t, "owner_module");
		x->size = gi_json_num(t, "size");
		x->memory_bytes = gi_json_num(t, "memory_bytes");
	}
}

static void trace(struct obs_view *v, const json_t *t)
{
	if (!t)
		return;
	v->has_trace = true;
	v->trace_window_ms = gi_json_num(t, "window_ms");
	v->trace_modules =
	    strings(v, gi_json_arr(t, "modules"), OBS_VIEW_MAX_MODULES, &v->ntrace_modules);
	v->trace_foreign =
	    strings(v, gi_json_arr(t, "foreign"), OBS_VIEW_MAX_ERRORS, &v->ntrace_foreign);
	const json_t *calls = gi_json_arr(t, "calls");
	size_t n = capped(v, calls, OBS_VIEW_MAX_CALLS);
	v->calls = n ? gi_calloc(n, sizeof(*v->calls)) : NULL;
	for (size_t i = 0; i < n; i++) {
		const json_t *c = json_array_get(calls, i);
		if (!json_is_object(c))
			continue;
		members_read(c, CALL_MEMBERS, COUNT(CALL_MEMBERS), &v->calls[v->ncalls++]);
	}
	const json_t *duty = json_object_get(t, "duty");
	if (json_is_object(duty)) {
		v->duty.present = true;
		v->duty.overhead = gi_json_num(duty, "overhead");
		v->duty.cost = gi_json_num(duty, "cost");
		v->duty.paused = json_is_true(json_object_get(duty, "paused"));
		double sum = 0, xsum = 0;
		size_t nmods = 0, nx = 0, i;
		const json_t *m;
		const json_t *dm = json_object_get(duty, "modules");
		size_t ndm = json_array_size(dm) < OBS_VIEW_MAX_CALLS ? json_array_size(dm)
		                                                      : OBS_VIEW_MAX_CALLS;
		v->duty.modules = ndm ? gi_calloc(ndm, sizeof(*v->duty.modules)) : NULL;
		json_array_foreach(dm, i, m)
		{
			if (i < ndm && json_is_string(json_object_get(m, "module"))) {
				struct obs_view_duty_module *o =
				    &v->duty.modules[v->duty.nmodules++];
				o->module = json_string_value(json_object_get(m, "module"));
				o->duty = gi_json_num(m, "duty");
				o->sampled = gi_json_num(m, "sampled");
				o->carried = json_is_true(json_object_get(m, "carried"));
				o->work_used =
				    !json_is_false(json_object_get(m, "work_share_used"));
			}
			double d = gi_json_num(m, "duty");
			if (isfinite(d) && d >= 0 && d <= 1) {
				sum += d;
				nmods++;
			}
			double x = gi_json_num(m, "exposure");
			if (isfinite(x) && x >= 0 && x <= 1) {
				xsum += x;
				nx++;
			}
		}
		v->duty.duty_mean = nmods ? sum / (double)nmods : NAN;
		v->duty.exposure_mean = nx ? xsum / (double)nx : NAN;
	}
	const json_t *ct = json_object_get(t, "call_time");
	if (json_is_object(ct)) {
		v->call_time.present = true;
		v->call_time.flagged = gi_json_num(ct, "flagged");
		v->call_time.refused = gi_json_num(ct, "refused");
		v->call_time.trace_messages = gi_json_num(ct, "trace_messages");
		v->call_time.suspended = json_is_true(json_object_get(ct, "suspended"));
		v->call_time.isolation = gi_json_str(ct, "isolation");
	}
}

static void stack(struct obs_view *v, const json_t *s, struct obs_view_stack *out)
{
	const json_t *frames = gi_json_arr(s, "frames");
	size_t n = frames ? json_array_size(frames) : 0;
	if (n > OBS_VIEW_MAX_FRAMES)
		n = OBS_VIEW_MAX_FRAMES; /* outer frames past the cap are not an entry lost */
	for (size_t i = 0; i < n; i++) {
		const char *f = json_string_value(json_array_get(frames, i));
		/* An unreadable frame ends the stack: what follows it is not known
		 * to be the caller of what precedes it. */
		if (!f)
			break;
		out->frames[out->depth++] = f;
	}
	out->samples = gi_json_num(s, "samples");
	out->reductions = gi_json_num(s, "reductions");
	(void)v;
}

/* The stacks of `list` (capped), those with no frame left out; *count gets
 * how many. Returns a gi_calloc'd array or NULL. */
static struct obs_view_stack *stack_list(struct obs_view *v, const json_t *list, size_t *count)
{
	size_t n = capped(v, list, OBS_VIEW_MAX_STACKS);
	struct obs_view_stack *out = n ? gi_calloc(n, sizeof(*out)) : NULL;
	*count = 0;
	for (size_t i = 0; i < n; i++) {
		const json_t *s = json_array_get(list, i);
		if (!json_is_object(s))
			continue;
		struct obs_view_stack *st = &out[*count];
		stack(v, s, st);
		if (st->depth > 0)
			(*count)++;
		else
			memset(st, 0, sizeof(*st));
	}
	return out;
}

static void executing(struct obs_view *v, const json_t *e)
{
	struct obs_view_executing *x = &v->executing;
	if (!e)
		return;
	x->present = true;
	x->period_ms = gi_json_num(e, "period_ms");
	x->ticks = gi_json_num(e, "ticks");
	x->candidates = gi_json_num(e, "candidates");
	x->stack_candidates = gi_json_num(e, "stack_candidates");
	x->depth = gi_json_num(e, "depth");
	const json_t *samples = gi_json_obj(e, "samples");
	x->samples_running = gi_json_num(samples, "running");
	x->samples_waiting = gi_json_num(samples, "waiting");
	x->reductions_sampled = gi_json_num(e, "reductions_sampled");
	x->dropped = gi_json_num(e, "dropped");
	x->failed_ticks = gi_json_num(e, "failed_ticks");
	x->tick_us = gi_json_num(e, "tick_us");
	x->stacks = stack_list(v, gi_json_arr(e, "stacks"), &x->nstacks);
	x->blocked = stack_list(v, gi_json_arr(e, "blocked"), &x->nblocked);
	const json_t *origins = gi_json_arr(e, "origins");
	size_t n = capped(v, origins, OBS_VIEW_MAX_MODULES);
	x->origins = n ? gi_calloc(n, sizeof(*x->origins)) : NULL;
	for (size_t i = 0; i < n; i++) {
		const json_t *o = json_array_get(origins, i);
		const char *m = gi_json_str(o, "module"), *origin = gi_json_str(o, "origin");
		if (m && origin) {
			x->origins[x->norigins].module = m;
			x->origins[x->norigins].origin = origin;
			x->norigins++;
		}
	}
}

static void observer(struct obs_view *v, const json_t *o)
{
	if (!json_is_object(o))
		return;
	struct obs_view_observer *x = &v->observer;
	x->present = true;
	x->within_budget = json_is_true(json_object_get(o, "within_budget"));
	x->cost = gi_json_num(o, "cost");
	x->budget = gi_json_num(o, "budget");
	x->share = gi_json_num(o, "share");
	x->counting = gi_json_num(o, "counting");
	x->reductions = gi_json_num(o, "reductions");
	x->busy_us = gi_json_num(o, "busy_us");
	x->other_processes = gi_json_num(gi_json_obj(o, "others"), "processes");
	x->other_reductions = gi_json_num(gi_json_obj(o, "others"), "reductions");
	x->memory = gi_json_num(o, "memory");
	x->sample_period_ms = gi_json_num(o, "sample_period_ms");
	x->sample_period_used_ms = gi_json_num(o, "sample_period_used_ms");
	x->scan_every = gi_json_num(o, "scan_every");
}

static void numbers_init(struct obs_view *v)
{
	double *all[] = {&v->seq,
	                 &v->timestamp_ms,
	                 &v->window_ms,
	                 &v->schedulers_online,
	                 &v->sample_ms,
	                 &v->utilisation_total,
	                 &v->run_queue_total,
	                 &v->processes_count,
	                 &v->processes_limit,
	                 &v->processes_scanned,
	                 &v->ports_count,
	                 &v->ports_limit,
	                 &v->atoms_count,
	                 &v->atoms_limit,
	                 &v->ets_count,
	                 &v->memory.total,
	                 &v->memory.processes,
	                 &v->memory.processes_used,
	                 &v->memory.system,
	                 &v->memory.atom,
	                 &v->memory.binary,
	                 &v->memory.code,
	                 &v->memory.ets,
	                 &v->reductions_delta,
	                 &v->reductions_per_second,
	                 &v->gc_count,
	                 &v->gc_words_reclaimed,
	                 &v->io_input_bytes,
	                 &v->io_output_bytes,
	                 &v->trace_window_ms,
	                 &v->call_time.flagged,
	                 &v->call_time.refused,
	                 &v->call_time.trace_messages,
	                 &v->executing.period_ms,
	                 &v->executing.ticks,
	                 &v->executing.candidates,
	                 &v->executing.stack_candidates,
	                 &v->executing.depth,
	                 &v->executing.samples_running,
	                 &v->executing.samples_waiting,
	                 &v->executing.reductions_sampled,
	                 &v->executing.dropped,
	                 &v->executing.failed_ticks,
	                 &v->executing.tick_us,
	                 &v->observer.cost,
	                 &v->observer.budget,
	                 &v->observer.share,
	                 &v->observer.counting,
	                 &v->observer.reductions,
	                 &v->observer.busy_us,
	                 &v->observer.other_processes,
	                 &v->observer.other_reductions,
	                 &v->observer.memory,
	                 &v->observer.sample_period_ms,
	                 &v->observer.sample_period_used_ms,
	                 &v->observer.scan_every,
	                 &v->utilisation_observer};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		*all[i] = NAN;
}

/* Clears everything of the view but its fixed arrays (see the header). */
static void view_clear(struct obs_view *v)
{
	memset(v, 0, offsetof(struct obs_view, utilisation_per));
}

int obs_view_parse(json_t *snapshot, struct obs_view *out)
{
	view_clear(out);
	out->version = -1;
	numbers_init(out);
	if (!json_is_object(snapshot))
		return GI_EINVAL;
	const json_t *version = json_object_get(snapshot, "version");
	if (json_is_integer(version)) {
		json_int_t n = json_integer_value(version);
		if (n > OBS_VIEW_VERSION || n < 1)
			return GI_EUNSUPPORTED;
		out->version = (long)n;
	}
	out->json = json_incref(snapshot);
	const json_t *s = snapshot;
	out->session_id = gi_json_str(s, "session_id");
	out->node = gi_json_str(s, "node");
	out->otp_release = gi_json_str(s, "otp_release");
	out->seq = gi_json_num(s, "seq");
	out->timestamp_ms = gi_json_num(s, "timestamp_ms");
	out->window_ms = gi_json_num(s, "window_ms");
	out->schedulers_online = gi_json_num(s, "schedulers_online");
	out->sample_ms = gi_json_num(s, "sample_ms");
	const json_t *util = gi_json_obj(s, "scheduler_utilisation");
	out->utilisation_total = gi_json_num(util, "total");
	numbers(out, gi_json_arr(util, "per_scheduler"), out->utilisation_per, &out->nutilisation);
	const json_t *rq = gi_json_obj(s, "run_queue");
	out->run_queue_total = gi_json_num(rq, "total");
	numbers(out, gi_json_arr(rq, "per_scheduler"), out->run_queue_per, &out->nrun_queue);
	const json_t *procs = gi_json_obj(s, "processes");
	out->processes_count = gi_json_num(procs, "count");
	out->processes_limit = gi_json_num(procs, "limit");
	out->processes_scanned = gi_json_num(procs, "scanned");
	out->ports_count = gi_json_num(gi_json_obj(s, "ports"), "count");
	out->ports_limit = gi_json_num(gi_json_obj(s, "ports"), "limit");
	out->atoms_count = gi_json_num(gi_json_obj(s, "atoms"), "count");
	out->atoms_limit = gi_json_num(gi_json_obj(s, "atoms"), "limit");
	ets(out, gi_json_obj(s, "ets"));
	const json_t *mem = gi_json_obj(s, "memory");
	out->memory.total = gi_json_num(mem, "total");
	out->memory.processes = gi_json_num(mem, "processes");
	out->memory.processes_used = gi_json_num(mem, "processes_used");
	out->memory.system = gi_json_num(mem, "system");
	out->memory.atom = gi_json_num(mem, "atom");
	out->memory.binary = gi_json_num(mem, "binary");
	out->memory.code = gi_json_num(mem, "code");
	out->memory.ets = gi_json_num(mem, "ets");
	out->reductions_delta = gi_json_num(gi_json_obj(s, "reductions"), "delta");
	out->reductions_per_second = gi_json_num(gi_json_obj(s, "reductions"), "per_second");
	out->gc_count = gi_json_num(gi_json_obj(s, "gc"), "count");
	out->gc_words_reclaimed = gi_json_num(gi_json_obj(s, "gc"), "words_reclaimed");
	out->io_input_bytes = gi_json_num(gi_json_obj(s, "io"), "input_bytes");
	out->io_output_bytes = gi_json_num(gi_json_obj(s, "io"), "output_bytes");
	const json_t *top = gi_json_obj(s, "top_processes");
	processes(out, gi_json_arr(top, "reductions"), &out->top_reductions);
	processes(out, gi_json_arr(top, "memory"), &out->top_memory);
	processes(out, gi_json_arr(top, "message_queue"), &out->top_message_queue);
	out->top_carried = json_is_true(json_object_get(top, "carried"));
	trace(out, gi_json_obj(s, "trace"));
	out->errors = strings(out, gi_json_arr(s, "errors"), OBS_VIEW_MAX_ERRORS, &out->nerrors);
	executing(out, gi_json_obj(s, "executing"));
	observer(out, gi_json_obj(s, "observer"));
	out->utilisation_observer =
	    gi_json_num(gi_json_obj(s, "scheduler_utilisation"), "observer");
	return 0;
}

void obs_view_destroy(struct obs_view *v)
{
	if (!v)
		return;
	gi_free(v->top_reductions.items);
	gi_free(v->top_memory.items);
	gi_free(v->top_message_queue.items);
	gi_free(v->trace_modules);
	gi_free(v->trace_foreign);
	gi_free(v->calls);
	gi_free(v->duty.modules);
	gi_free(v->errors);
	gi_free(v->executing.stacks);
	gi_free(v->executing.blocked);
	gi_free(v->executing.origins);
	json_decref(v->json);
	view_clear(v);
}

void obs_view_modules_each(const struct obs_view *v, void (*fn)(void *ctx, const char *module),
                           void *ctx)
{
	for (size_t i = 0; i < v->top_reductions.len; i++)
		if (v->top_reductions.items[i].module)
			fn(ctx, v->top_reductions.items[i].module);
	for (size_t i = 0; i < v->ncalls; i++)
		if (v->calls[i].module)
			fn(ctx, v->calls[i].module);
	for (size_t i = 0; i < v->executing.norigins; i++)
		if (v->executing.origins[i].module)
			fn(ctx, v->executing.origins[i].module);
}
