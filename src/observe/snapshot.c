/*
 * snapshot.c - a session process's sample reply (decoded to JSON by term.c)
 * to the snapshot of docs/SNAPSHOT.md: the envelope (version, session, node,
 * sequence, wall-clock time) around the measured sections, module atoms to
 * display names, {M, F, A} tuples to "Mod.fun/arity" text.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/modname.h"
#include "observe/snapshot.h"

static json_t *module_display(json_t *atom)
{
	char name[512];
	const char *s = json_string_value(atom);
	if (!s || gi_module_display_name(s, name, sizeof(name)) != 0)
		return json_null();
	return json_string(name);
}

char *obs_mfa_display(json_t *mfa)
{
	if (!json_is_array(mfa) || json_array_size(mfa) != 3)
		return NULL;
	const char *m = json_string_value(json_array_get(mfa, 0));
	json_t *fv = json_array_get(mfa, 1);
	const char *f = json_string_value(fv);
	json_t *a = json_array_get(mfa, 2);
	char name[512];
	if (!m || !f || !json_is_integer(a) || gi_module_display_name(m, name, sizeof(name)) != 0)
		return NULL;
	/* "name.f/arity" put together by hand: a snapshot has dozens of them */
	char arity[32];
	int alen = snprintf(arity, sizeof(arity), "/%lld", (long long)json_integer_value(a));
	size_t nlen = strlen(name), flen = json_string_length(fv);
	if (alen < 0 || nlen + 1 + flen + (size_t)alen >= 2048)
		return NULL;
	char *out = gi_malloc(nlen + 1 + flen + (size_t)alen + 1);
	memcpy(out, name, nlen);
	out[nlen] = '.';
	memcpy(out + nlen + 1, f, flen);
	memcpy(out + nlen + 1 + flen, arity, (size_t)alen + 1);
	return out;
}

static json_t *mfa_value(json_t *mfa)
{
	char *text = obs_mfa_display(mfa);
	json_t *v = text ? json_string(text) : json_null();
	gi_free(text);
	return v ? v : json_null();
}

static json_t *number_or_null(json_t *v)
{
	return json_is_number(v) ? json_incref(v) : json_null();
}

static json_t *process_entry(json_t *p)
{
	json_t *out = json_object();
	json_t *pid = json_object_get(p, "pid");
	json_object_set_new(out, "pid", json_is_string(pid) ? json_incref(pid) : json_null());
	json_t *reg = json_object_get(p, "registered_name");
	json_object_set_new(out, "registered_name",
	                    json_is_string(reg) ? json_incref(reg) : json_null());
	json_object_set_new(out, "initial_call", mfa_value(json_object_get(p, "initial_call")));
	json_object_set_new(out, "current_function",
	                    mfa_value(json_object_get(p, "current_function")));
	json_object_set_new(out, "module", module_display(json_object_get(p, "module")));
	json_object_set_new(out, "reductions", number_or_null(json_object_get(p, "reductions")));
	json_object_set_new(out, "cpu_share", number_or_null(json_object_get(p, "cpu_share")));
	json_object_set_new(out, "memory_bytes",
	                    number_or_null(json_object_get(p, "memory_bytes")));
	json_object_set_new(out, "message_queue_len",
	                    number_or_null(json_object_get(p, "message_queue_len")));
	return out;
}

static json_t *process_list(json_t *list)
{
	json_t *out = json_array();
	size_t i;
	json_t *p;
	json_array_foreach(list, i, p)
	{
		if (json_is_object(p))
			json_array_append_new(out, process_entry(p));
	}
	return out;
}

static json_t *ets_section(json_t *ets)
{
	json_t *out = json_object();
	json_object_set_new(out, "count", number_or_null(json_object_get(ets, "count")));
	json_t *top = json_array();
	size_t i;
	json_t *t;
	json_array_foreach(json_object_get(ets, "top"), i, t)
	{
		json_t *e = json_object();
		json_t *name = json_object_get(t, "name"), *id = json_object_get(t, "id");
		json_object_set_new(e, "name",
		                    json_is_string(name) ? json_incref(name) : json_null());
		json_object_set_new(e, "id", json_is_string(id) ? json_incref(id) : json_null());
		json_object_set_new(e, "owner_module",
		                    module_display(json_object_get(t, "owner_module")));
		json_object_set_new(e, "size", number_or_null(json_object_get(t, "size")));
		json_object_set_new(e, "memory_bytes",
		                    number_or_null(json_object_get(t, "memory_bytes")));
		json_array_append_new(top, e);
	}
	json_object_set_new(out, "top", top);
	return out;
}

/* The call_time section of a sample reply: times go into the matching
 * entries of `calls` (time_calls, time_us; 0 where the flagged processes did
 * not call the function), and the flagging facts into trace.call_time. */
static void call_time_merge(json_t *trace, json_t *ct)
{
	json_t *calls = json_object_get(trace, "calls");
	size_t i;
	json_t *c;
	json_array_foreach(calls, i, c)
	{
		json_object_set_new(c, "time_calls", json_integer(0));
		json_object_set_new(c, "time_us", json_integer(0));
	}
	json_t *v;
	json_array_foreach(json_object_get(ct, "calls"), i, v)
	{
		if (!json_is_array(v) || json_array_size(v) != 5)
			continue;
		json_t *mod = module_display(json_array_get(v, 0));
		json_t *f = json_array_get(v, 1), *a = json_array_get(v, 2);
		json_t *n = json_array_get(v, 3), *us = json_array_get(v, 4);
		if (!json_is_string(mod) || !json_is_string(f) || !json_is_integer(a) ||
		    !json_is_integer(n) || !json_is_integer(us)) {
			json_decref(mod);
			continue;
		}
		json_t *found = NULL;
		size_t k;
		json_array_foreach(calls, k, c)
		{
			if (json_equal(json_object_get(c, "module"), mod) &&
			    json_equal(json_object_get(c, "function"), f) &&
			    json_equal(json_object_get(c, "arity"), a)) {
				found = c;
				break;
			}
		}
		if (!found) {
			/* counted by call_time but not call_count: a call at the edge of
			 * the window; its count is at least the timed calls */
			found = json_pack("{s:O, s:O, s:O, s:O}", "module", mod, "function", f,
			                  "arity", a, "count", n);
			json_array_append_new(calls, found);
		}
		json_decref(mod);
		/* call_count and call_time are paused and restarted one after the
		 * other, so call_count may miss timed calls at the window's edges:
		 * the count is at least the timed calls, as for a missing entry. */
		json_t *count = json_object_get(found, "count");
		if (!json_is_integer(count) || json_integer_value(count) < json_integer_value(n))
			json_object_set(found, "count", n);
		json_object_set(found, "time_calls", n);
		json_object_set(found, "time_us", us);
	}
	json_t *out = json_object();
	static const char *const keys[] = {"flagged",        "flag_cap",  "refused",
	                                   "trace_messages", "suspended", NULL};
	for (const char *const *k = keys; *k; k++) {
		json_t *x = json_object_get(ct, *k);
		json_object_set_new(out, *k,
		                    json_is_number(x) || json_is_boolean(x) ? json_incref(x)
		                                                            : json_null());
	}
	json_t *iso = json_object_get(ct, "isolation");
	json_object_set_new(out, "isolation", json_is_string(iso) ? json_incref(iso) : json_null());
	json_t *procs = json_array();
	json_array_foreach(json_object_get(ct, "processes"), i, v)
	{
		json_t *pid = json_object_get(v, "pid");
		if (!json_is_string(pid))
			continue;
		json_array_append_new(
		    procs, json_pack("{s:O, s:o, s:o}", "pid", pid, "calls",
		                     number_or_null(json_object_get(v, "calls")), "time_us",
		                     number_or_null(json_object_get(v, "time_us"))));
	}
	json_object_set_new(out, "processes", procs);
	json_object_set_new(trace, "call_time", out);
}

void obs_estimate_calls(double sum, double sumsq, long cycles, double duty,
                        struct obs_estimate *out)
{
	out->estimate = out->low = out->high = sum;
	if (!(duty > 0) || cycles <= 0 || !(sum >= 0))
		return;
	if (duty > 1)
		duty = 1;
	double k = (double)cycles;
	double mean = sum / k;
	double var = cycles > 1 ? (sumsq - sum * sum / k) / (k - 1) : mean;
	if (!(var >= mean))
		var = mean; /* a count varies at least as a Poisson count does */
	double half = 1.96 * sqrt(k * var * (1 - duty)) / duty;
	out->estimate = sum / duty;
	out->low = out->estimate - half > sum ? out->estimate - half : sum;
	out->high = out->estimate + half;
	if (sum == 0 && duty < 1)
		out->high = 3.0 * (1 - duty) / duty; /* none seen: the rule of three */
}

/* The duty figures per module, by display name: {module: {on_us, cycles,
 * duty}} for the calls' estimates, and the section as the snapshot shows it. */
static json_t *duty_section(json_t *duty, json_t *window_ms, json_t **by_module)
{
	json_t *out = json_deep_copy(duty);
	json_t *mods = json_array();
	*by_module = json_object();
	double window_us = json_number_value(window_ms) * 1000.0;
	double reds = json_number_value(json_object_get(duty, "reds"));
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(duty, "modules"), i, v)
	{
		json_t *m = json_deep_copy(v);
		json_t *name = module_display(json_object_get(v, "module"));
		json_object_set_new(m, "module", name);
		double on = json_number_value(json_object_get(v, "on_us"));
		double d = window_us > 0 ? on / window_us : 0;
		json_object_set_new(m, "duty", json_real(d > 1 ? 1 : d));
		/* what the estimate scales by: the share of the node's work (its
		 * reductions) done while the module counted; a counted call is
		 * slower, so the share of the time overstates it */
		double on_reds = json_number_value(json_object_get(v, "on_reds"));
		double s = reds > 0 && on_reds > 0 ? on_reds / reds : d;
		json_object_set_new(m, "sampled", json_real(s > 1 ? 1 : s));
		/* what it cost: the time the pattern was set, barriers included */
		json_t *exp_us = json_object_get(v, "exposed_us");
		if (json_is_number(exp_us)) {
			double x = window_us > 0 ? json_number_value(exp_us) / window_us : 0;
			json_object_set_new(m, "exposure", json_real(x > 1 ? 1 : x));
		}
		if (json_is_string(name))
			json_object_set(*by_module, json_string_value(name), m);
		json_array_append_new(mods, m);
	}
	json_object_set_new(out, "modules", mods);
	return out;
}

/* One calls entry of a duty-cycled window: [M, F, A, Sum, SumSq, Cycles]. */
static json_t *duty_call(json_t *v, json_t *by_module)
{
	json_t *c = json_object();
	json_t *mod = module_display(json_array_get(v, 0));
	json_object_set_new(c, "module", mod);
	json_t *f = json_array_get(v, 1);
	json_object_set_new(c, "function", json_is_string(f) ? json_incref(f) : json_null());
	json_object_set_new(c, "arity", number_or_null(json_array_get(v, 2)));
	double sum = json_number_value(json_array_get(v, 3));
	json_t *m = json_is_string(mod) ? json_object_get(by_module, json_string_value(mod)) : NULL;
	double duty = json_number_value(json_object_get(m, "sampled"));
	struct obs_estimate e;
	obs_estimate_calls(sum, json_number_value(json_array_get(v, 4)),
	                   (long)json_integer_value(json_array_get(v, 5)), duty, &e);
	json_object_set_new(c, "count", json_integer((json_int_t)llround(e.estimate)));
	/* a window the module did not count in carries its last counted calls
	 * per reduction: nothing was measured in it */
	bool carried = json_is_true(json_object_get(m, "carried"));
	json_object_set_new(c, "measured", json_integer(carried ? 0 : (json_int_t)sum));
	if (carried)
		json_object_set_new(c, "carried", json_true());
	json_object_set_new(c, "estimated", json_true());
	json_object_set_new(c, "duty", json_real(duty));
	json_object_set_new(c, "low", json_integer((json_int_t)floor(e.low)));
	json_object_set_new(c, "high", json_integer((json_int_t)ceil(e.high)));
	return c;
}

static json_t *trace_section(json_t *trace)
{
	json_t *out = json_object();
	json_t *mods = json_array();
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(trace, "modules"), i, v)
	{
		json_array_append_new(mods, module_display(v));
	}
	json_object_set_new(out, "modules", mods);
	json_object_set_new(out, "window_ms", number_or_null(json_object_get(trace, "window_ms")));
	json_t *calls = json_array();
	json_t *duty = json_object_get(trace, "duty"), *by_module = NULL;
	if (json_is_object(duty))
		json_object_set_new(
		    out, "duty",
		    duty_section(duty, json_object_get(trace, "window_ms"), &by_module));
	json_array_foreach(json_object_get(trace, "calls"), i, v)
	{
		if (json_is_array(v) && json_array_size(v) == 6 && by_module) {
			json_array_append_new(calls, duty_call(v, by_module));
			continue;
		}
		if (!json_is_array(v) || json_array_size(v) != 4)
			continue;
		json_t *c = json_object();
		json_object_set_new(c, "module", module_display(json_array_get(v, 0)));
		json_t *f = json_array_get(v, 1);
		json_object_set_new(c, "function",
		                    json_is_string(f) ? json_incref(f) : json_null());
		json_object_set_new(c, "arity", number_or_null(json_array_get(v, 2)));
		json_object_set_new(c, "count", number_or_null(json_array_get(v, 3)));
		json_array_append_new(calls, c);
	}
	json_object_set_new(out, "calls", calls);
	json_decref(by_module);
	/* what other tools held on the node when tracing started (shared) */
	json_t *foreign = json_array();
	json_array_foreach(json_object_get(trace, "foreign"), i, v)
	{
		if (json_is_string(v))
			json_array_append(foreign, v);
	}
	json_object_set_new(out, "foreign", foreign);
	/* where our call_count patterns live: the global session, or a trace
	 * session of our own (OTP 27+) */
	json_t *iso = json_object_get(trace, "isolation");
	json_object_set_new(out, "isolation", json_is_string(iso) ? json_incref(iso) : json_null());
	return out;
}

/* A list of the sampler's stacks with "Mod.fun/arity" frames; `keys` are
 * the numbers each entry carries besides its frames. Malformed entries are
 * left out. */
static json_t *stack_list(json_t *list, const char *const *keys)
{
	json_t *stacks = json_array();
	size_t i, k;
	json_t *st, *f;
	json_array_foreach(list, i, st)
	{
		json_t *frames = json_array();
		json_array_foreach(json_object_get(st, "frames"), k, f)
		{
			char *text = obs_mfa_display(f);
			if (!text)
				break;
			json_array_append_new(frames, json_string(text));
			gi_free(text);
		}
		if (json_array_size(frames) == 0) {
			json_decref(frames);
			continue;
		}
		json_t *o = json_object();
		json_object_set_new(o, "frames", frames);
		for (const char *const *key = keys; *key; key++)
			json_object_set_new(o, *key, number_or_null(json_object_get(st, *key)));
		json_array_append_new(stacks, o);
	}
	return stacks;
}

/* The sampler's section: frames become "Mod.fun/arity" text, module atoms
 * display names; anything malformed is left out. */
static json_t *executing_section(json_t *e)
{
	json_t *out = json_object();
	static const char *const plain[] = {
	    "period_ms",          "ticks",   "candidates",   "stack_candidates", "depth",
	    "reductions_sampled", "dropped", "failed_ticks", "tick_us",          NULL};
	for (const char *const *k = plain; *k; k++)
		json_object_set_new(out, *k, number_or_null(json_object_get(e, *k)));
	json_t *samples = json_object_get(e, "samples");
	json_object_set_new(
	    out, "samples",
	    json_pack("{s:o, s:o}", "running", number_or_null(json_object_get(samples, "running")),
	              "waiting", number_or_null(json_object_get(samples, "waiting"))));
	static const char *const executing_keys[] = {"samples", "reductions", NULL};
	static const char *const blocked_keys[] = {"samples", NULL};
	json_t *stacks = stack_list(json_object_get(e, "stacks"), executing_keys);
	json_object_set_new(out, "blocked",
	                    stack_list(json_object_get(e, "blocked"), blocked_keys));
	json_object_set_new(out, "stacks", stacks);
	json_t *origins = json_array();
	size_t i;
	json_t *st;
	json_array_foreach(json_object_get(e, "origins"), i, st)
	{
		json_t *m = module_display(json_object_get(st, "module"));
		json_t *o = json_object_get(st, "origin");
		if (json_is_string(m) && json_is_string(o))
			json_array_append_new(origins,
			                      json_pack("{s:o, s:O}", "module", m, "origin", o));
		else
			json_decref(m);
	}
	json_object_set_new(out, "origins", origins);
	return out;
}

/* Copies the named sections that need no conversion. */
static void copy_plain(json_t *out, json_t *reply, const char *const *keys)
{
	for (const char *const *k = keys; *k; k++) {
		json_t *v = json_object_get(reply, *k);
		json_object_set_new(out, *k, v ? json_incref(v) : json_null());
	}
}

json_t *obs_snapshot_build(json_t *reply, const char *node, const char *session_id, long seq,
                           int64_t timestamp_ms, json_t *extra_errors)
{
	if (!json_is_object(reply) || !json_object_get(reply, "window_ms"))
		return NULL;
	json_t *s = json_object();
	json_object_set_new(s, "version", json_integer(1));
	json_object_set_new(s, "session_id", session_id ? json_string(session_id) : json_null());
	json_object_set_new(s, "node", json_string(node));
	json_object_set_new(s, "seq", json_integer(seq));
	json_object_set_new(s, "timestamp_ms", json_integer(timestamp_ms));
	static const char *const head[] = {"window_ms",
	                                   "otp_release",
	                                   "schedulers_online",
	                                   "scheduler_utilisation",
	                                   "run_queue",
	                                   "processes",
	                                   "ports",
	                                   "atoms",
	                                   NULL};
	copy_plain(s, reply, head);
	json_object_set_new(s, "ets", ets_section(json_object_get(reply, "ets")));
	static const char *const middle[] = {"memory", "reductions", "gc", "io", NULL};
	copy_plain(s, reply, middle);
	json_t *top = json_object_get(reply, "top_processes");
	json_t *tp = json_object();
	json_object_set_new(tp, "reductions", process_list(json_object_get(top, "reductions")));
	json_object_set_new(tp, "memory", process_list(json_object_get(top, "memory")));
	json_object_set_new(tp, "message_queue",
	                    process_list(json_object_get(top, "message_queue")));
	json_object_set_new(s, "top_processes", tp);
	json_t *trace = json_object_get(reply, "trace");
	if (json_is_object(trace)) {
		json_t *ts = trace_section(trace);
		json_t *ct = json_object_get(reply, "call_time");
		if (json_is_object(ct))
			call_time_merge(ts, ct);
		json_object_set_new(s, "trace", ts);
	}
	json_t *exec = json_object_get(reply, "executing");
	if (json_is_object(exec))
		json_object_set_new(s, "executing", executing_section(exec));
	json_t *errors = json_array();
	json_t *re = json_object_get(reply, "errors");
	size_t i;
	json_t *v;
	json_array_foreach(re, i, v)
	{
		if (json_is_string(v))
			json_array_append(errors, v);
	}
	json_array_foreach(extra_errors, i, v)
	{
		if (json_is_string(v))
			json_array_append(errors, v);
	}
	json_object_set_new(s, "errors", errors);
	json_t *us = json_object_get(reply, "sample_us");
	json_object_set_new(s, "sample_ms",
	                    json_is_integer(us) ? json_real((double)json_integer_value(us) / 1000.0)
	                                        : json_null());
	return s;
}
