/*
 * snapshot.c - a session process's sample reply (a checked term, read in
 * place: term.h) to the snapshot of docs/SNAPSHOT.md: the envelope (version,
 * session, node, sequence, wall-clock time) around the measured sections,
 * module atoms to display names, {M, F, A} tuples to "Mod.fun/arity" text.
 * The reply is never decoded whole: the sections copied as they are become
 * JSON once, the rest is read where it lies (the top processes and the
 * sampler's stacks are most of a reply), and only the small trace sections
 * are decoded to JSON and rewritten.
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "base/alloc.h"
#include "base/modname.h"
#include "base/str.h"
#include "observe/snapshot.h"

/* The display name of a module atom's text as JSON, null when it has none
 * (the text is valid UTF-8: checked where it was read). */
static json_t *display_json(const char *atom)
{
	char name[512];
	if (!atom || gi_module_display_name(atom, name, sizeof(name)) != 0)
		return json_null();
	return json_stringn_nocheck(name, strlen(name));
}

static json_t *module_display(struct obs_term atom)
{
	/* a display name is never more than a few bytes shorter than the
	 * atom: one that does not fit here would not fit display_json's */
	char text[1024];
	return display_json(obs_term_cstr(atom, text, sizeof(text)) ? text : NULL);
}

/* The same for the sections decoded to JSON whole (trace, duty, call_time:
 * small, and rewritten in place). */
static json_t *module_display_json(json_t *atom)
{
	return display_json(json_string_value(atom));
}

static json_t *number_or_null_json(json_t *v)
{
	return json_is_number(v) ? json_incref(v) : json_null();
}

/* "name.f/arity" of an {M, F, A} into `out` (MFA_TEXT bytes), its length
 * in *len; false when `mfa` is not one. Put together by hand: a snapshot
 * has dozens of them. */
#define MFA_TEXT 2048
/* The estimator's limits (docs/RULES.md "The estimator"): the smallest
 * slowdown believed (a breakpoint on a tiny function made it 25 times
 * slower here: 0.04), and how far the busy rate may stray from what
 * counting explains before the window counts as unsteady. */
#define OBS_SLOWDOWN_MIN     0.02
#define OBS_STEADY_TOLERANCE 1.5
/* Below this scheduler utilisation the work share is not used. */
#define OBS_WORK_SHARE_MIN_UTILISATION 0.2
static bool mfa_text(struct obs_term mfa, char *out, size_t *len)
{
	if (obs_term_type(mfa) != JSON_ARRAY || obs_term_size(mfa) != 3)
		return false;
	struct obs_term_iter it = obs_term_items(mfa);
	struct obs_term mt, ft, at;
	obs_term_next(&it, &mt);
	obs_term_next(&it, &ft);
	obs_term_next(&it, &at);
	char m[1024], scratch[OBS_TERM_SCRATCH], name[512];
	size_t flen = 0;
	const char *f = obs_term_text(ft, scratch, &flen);
	if (!obs_term_cstr(mt, m, sizeof(m)) || !f || obs_term_type(at) != JSON_INTEGER ||
	    gi_module_display_name(m, name, sizeof(name)) != 0)
		return false;
	char arity[32];
	arity[0] = '/';
	size_t alen = 1 + gi_int_text(obs_term_integer(at), arity + 1);
	size_t nlen = strlen(name);
	if (nlen + 1 + flen + alen >= MFA_TEXT)
		return false;
	memcpy(out, name, nlen);
	out[nlen] = '.';
	memcpy(out + nlen + 1, f, flen);
	memcpy(out + nlen + 1 + flen, arity, alen);
	*len = nlen + 1 + flen + alen;
	out[*len] = '\0';
	return true;
}

char *obs_mfa_display(struct obs_term mfa)
{
	char text[MFA_TEXT];
	size_t len = 0;
	if (!mfa_text(mfa, text, &len))
		return NULL;
	char *out = gi_malloc(len + 1);
	memcpy(out, text, len + 1);
	return out;
}

/* The text as a JSON string (valid UTF-8: each part was checked; read up
 * to a NUL, as json_string reads it), or null when it is none. */
static json_t *mfa_value(struct obs_term mfa)
{
	char text[MFA_TEXT];
	size_t len = 0;
	json_t *v = mfa_text(mfa, text, &len) ? json_stringn_nocheck(text, strlen(text)) : NULL;
	return v ? v : json_null();
}

/* The value's JSON when it is of type `a` or `b`, else null. */
static json_t *json_if(struct obs_term v, json_type a, json_type b)
{
	json_type t = obs_term_type(v);
	json_t *j = t == a || t == b ? obs_term_json(v) : NULL;
	return j ? j : json_null();
}

static json_t *number_or_null(struct obs_term v)
{
	return json_if(v, JSON_INTEGER, JSON_REAL);
}

static json_t *string_or_null(struct obs_term v)
{
	return json_if(v, JSON_STRING, JSON_STRING);
}

static json_t *process_entry(struct obs_term p)
{
	static const char *const keys[] = {
	    "pid",        "registered_name", "initial_call", "current_function",  "module",
	    "reductions", "cpu_share",       "memory_bytes", "message_queue_len", NULL};
	struct obs_term f[9];
	obs_term_fields(p, keys, f);
	json_t *out = json_object();
	json_object_set_new_nocheck(out, keys[0], string_or_null(f[0]));
	json_object_set_new_nocheck(out, keys[1], string_or_null(f[1]));
	json_object_set_new_nocheck(out, keys[2], mfa_value(f[2]));
	json_object_set_new_nocheck(out, keys[3], mfa_value(f[3]));
	json_object_set_new_nocheck(out, keys[4], module_display(f[4]));
	for (size_t k = 5; k < 9; k++)
		json_object_set_new_nocheck(out, keys[k], number_or_null(f[k]));
	return out;
}

static json_t *process_list(struct obs_term list)
{
	json_t *out = json_array();
	struct obs_term_iter it = obs_term_items(list);
	struct obs_term p;
	while (obs_term_next(&it, &p))
		if (obs_term_type(p) == JSON_OBJECT)
			json_array_append_new(out, process_entry(p));
	return out;
}

static json_t *ets_section(struct obs_term ets)
{
	static const char *const section[] = {"count", "top", NULL};
	struct obs_term m[2];
	obs_term_fields(ets, section, m);
	json_t *out = json_object();
	json_object_set_new_nocheck(out, "count", number_or_null(m[0]));
	json_t *top = json_array();
	struct obs_term_iter it = obs_term_items(m[1]);
	struct obs_term t;
	static const char *const keys[] = {"name", "id",           "owner_module",
	                                   "size", "memory_bytes", NULL};
	while (obs_term_next(&it, &t)) {
		struct obs_term f[5];
		obs_term_fields(t, keys, f);
		json_t *e = json_object();
		json_object_set_new_nocheck(e, keys[0], string_or_null(f[0]));
		json_object_set_new_nocheck(e, keys[1], string_or_null(f[1]));
		json_object_set_new_nocheck(e, keys[2], module_display(f[2]));
		json_object_set_new_nocheck(e, keys[3], number_or_null(f[3]));
		json_object_set_new_nocheck(e, keys[4], number_or_null(f[4]));
		json_array_append_new(top, e);
	}
	json_object_set_new_nocheck(out, "top", top);
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
		json_object_set_new_nocheck(c, "time_calls", json_integer(0));
		json_object_set_new_nocheck(c, "time_us", json_integer(0));
	}
	json_t *v;
	json_array_foreach(json_object_get(ct, "calls"), i, v)
	{
		if (!json_is_array(v) || json_array_size(v) != 5)
			continue;
		json_t *mod = module_display_json(json_array_get(v, 0));
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
		json_object_set_new_nocheck(out, *k,
		                            json_is_number(x) || json_is_boolean(x) ? json_incref(x)
		                                                                    : json_null());
	}
	json_t *iso = json_object_get(ct, "isolation");
	json_object_set_new_nocheck(out, "isolation",
	                            json_is_string(iso) ? json_incref(iso) : json_null());
	json_t *procs = json_array();
	json_array_foreach(json_object_get(ct, "processes"), i, v)
	{
		json_t *pid = json_object_get(v, "pid");
		if (!json_is_string(pid))
			continue;
		json_array_append_new(
		    procs, json_pack("{s:O, s:o, s:o}", "pid", pid, "calls",
		                     number_or_null_json(json_object_get(v, "calls")), "time_us",
		                     number_or_null_json(json_object_get(v, "time_us"))));
	}
	json_object_set_new_nocheck(out, "processes", procs);
	json_object_set_new_nocheck(trace, "call_time", out);
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

void obs_estimate_window(double sum, double sumsq, long cycles,
                         const struct obs_window_share *share, struct obs_estimate *out)
{
	struct obs_estimate t, w;
	double time = share->time > 1 ? 1 : share->time;
	double work = share->work > 1 ? 1 : share->work;
	if (!(time > 0)) {
		obs_estimate_calls(sum, sumsq, cycles, work, out);
		return;
	}
	obs_estimate_calls(sum, sumsq, cycles, time, &t);
	if (!(work > 0) || time >= 1 || !share->work_used) {
		*out = t;
		return;
	}
	obs_estimate_calls(sum, sumsq, cycles, work, &w);
	/* the time share (the module's own exposure) gives the estimate; the
	 * work share, right where the time share is not (CPU-bound callers
	 * whose speed counting or the observer changes), widens the interval */
	out->estimate = t.estimate;
	out->low = t.low < w.low ? t.low : w.low;
	out->high = t.high > w.high ? t.high : w.high;
	if (out->low < sum)
		out->low = sum;
}

/* The slowdown and the steadiness of one module's window
 * (obs_window_share), written into `m`: "slowdown", 1 - the session's
 * measured cost of a counted call path (smoothed over windows: a single
 * window's reductions per busy time move as much with a burst of other work
 * as with counting, so it is only said, as "work_rate_ratio"), and
 * "steady": whether the node's busy scheduler time per second while the
 * module counted against while it did not ("busy_ratio") is what counting
 * explains, between 1 (CPU-bound callers: busy anyway) and 1 / slowdown
 * (callers at their own rate, each call dearer), within a tolerance;
 * outside it, other work came or went. Without busy figures (an older
 * session) the window counts as steady. */
static void window_rates(json_t *m, json_t *v, json_t *duty, double window_us, double reds)
{
	double on_us = json_number_value(json_object_get(v, "on_us"));
	double on_reds = json_number_value(json_object_get(v, "on_reds"));
	double on_busy = json_number_value(json_object_get(v, "on_busy"));
	double busy = json_number_value(json_object_get(duty, "busy"));
	double cost = json_number_value(json_object_get(duty, "cost"));
	double q = isfinite(cost) && cost >= 0 && cost < 1 ? 1 - cost : 1;
	if (q < OBS_SLOWDOWN_MIN)
		q = OBS_SLOWDOWN_MIN;
	bool steady = true;
	double off_us = window_us - on_us, off_busy = busy - on_busy, off_reds = reds - on_reds;
	if (on_us > 0 && off_us > 0 && on_busy > 0 && off_busy > 0) {
		double b = (on_busy / on_us) / (off_busy / off_us);
		json_object_set_new_nocheck(m, "busy_ratio", json_real(b));
		steady = b >= 1 / OBS_STEADY_TOLERANCE && b <= OBS_STEADY_TOLERANCE / q;
		if (on_reds > 0 && off_reds > 0)
			json_object_set_new_nocheck(
			    m, "work_rate_ratio",
			    json_real((on_reds / on_busy) / (off_reds / off_busy)));
	} else if (on_us > 0 && off_us > 0 && isfinite(busy) && busy > 0 &&
	           (on_busy > 0) != (off_busy > 0)) {
		steady = false; /* busy in one part only: work came or went */
	}
	json_object_set_new_nocheck(m, "slowdown", json_real(q));
	json_object_set_new_nocheck(m, "steady", json_boolean(steady));
	json_object_set_new_nocheck(m, "window_us", json_real(window_us));
	/* on a nearly idle node the reductions are a few thousand of noise
	 * (timers, the distribution, a recorder) and the share of them done
	 * while counting says nothing about the callers */
	json_t *util = json_object_get(duty, "utilisation");
	json_object_set_new_nocheck(
	    m, "work_share_used",
	    json_boolean(!json_is_number(util) ||
	                 json_number_value(util) >= OBS_WORK_SHARE_MIN_UTILISATION));
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
		json_t *name = module_display_json(json_object_get(v, "module"));
		json_object_set_new_nocheck(m, "module", name);
		double on = json_number_value(json_object_get(v, "on_us"));
		double d = window_us > 0 ? on / window_us : 0;
		json_object_set_new_nocheck(m, "duty", json_real(d > 1 ? 1 : d));
		/* what the estimate scales by: the share of the node's work (its
		 * reductions) done while the module counted; a counted call is
		 * slower, so the share of the time overstates it */
		double on_reds = json_number_value(json_object_get(v, "on_reds"));
		double s = reds > 0 && on_reds > 0 ? on_reds / reds : d;
		json_object_set_new_nocheck(m, "sampled", json_real(s > 1 ? 1 : s));
		window_rates(m, v, duty, window_us, reds);
		/* what it cost: the time the pattern was set, barriers included */
		json_t *exp_us = json_object_get(v, "exposed_us");
		if (json_is_number(exp_us)) {
			double x = window_us > 0 ? json_number_value(exp_us) / window_us : 0;
			json_object_set_new_nocheck(m, "exposure", json_real(x > 1 ? 1 : x));
		}
		if (json_is_string(name))
			json_object_set(*by_module, json_string_value(name), m);
		json_array_append_new(mods, m);
	}
	json_object_set_new_nocheck(out, "modules", mods);
	return out;
}

/* One calls entry of a duty-cycled window: [M, F, A, Sum, SumSq, Cycles]. */
static json_t *duty_call(json_t *v, json_t *by_module)
{
	json_t *c = json_object();
	json_t *mod = module_display_json(json_array_get(v, 0));
	json_object_set_new_nocheck(c, "module", mod);
	json_t *f = json_array_get(v, 1);
	json_object_set_new_nocheck(c, "function",
	                            json_is_string(f) ? json_incref(f) : json_null());
	json_object_set_new_nocheck(c, "arity", number_or_null_json(json_array_get(v, 2)));
	double sum = json_number_value(json_array_get(v, 3));
	json_t *m = json_is_string(mod) ? json_object_get(by_module, json_string_value(mod)) : NULL;
	double duty = json_number_value(json_object_get(m, "duty"));
	/* a window the module did not count in carries the calls per counted
	 * second of the last window that did (carried_on_us, its counted time;
	 * an older session's carried window: its calls per reduction) */
	struct obs_window_share share = {
	    .time = duty,
	    .work = json_number_value(json_object_get(m, "sampled")),
	    .slowdown = json_number_value(json_object_get(m, "slowdown")),
	    .steady = !json_is_false(json_object_get(m, "steady")),
	    .work_used = !json_is_false(json_object_get(m, "work_share_used")),
	};
	if (json_is_true(json_object_get(m, "carried"))) {
		double last_on = json_number_value(json_object_get(m, "carried_on_us"));
		double window_us = json_number_value(json_object_get(m, "window_us"));
		share.time = last_on > 0 && window_us > 0 ? last_on / window_us : 0;
		share.steady = true;
	}
	if (!(share.time > 0))
		share.time = 0;
	duty = share.time > 0 ? share.time : share.work;
	struct obs_estimate e;
	obs_estimate_window(sum, json_number_value(json_array_get(v, 4)),
	                    (long)json_integer_value(json_array_get(v, 5)), &share, &e);
	json_object_set_new_nocheck(c, "count", json_integer((json_int_t)llround(e.estimate)));
	/* a window the module did not count in carries its last counted calls
	 * per reduction: nothing was measured in it */
	bool carried = json_is_true(json_object_get(m, "carried"));
	json_object_set_new_nocheck(c, "measured", json_integer(carried ? 0 : (json_int_t)sum));
	if (carried)
		json_object_set_new_nocheck(c, "carried", json_true());
	json_object_set_new_nocheck(c, "estimated", json_true());
	json_object_set_new_nocheck(c, "duty", json_real(duty));
	if (!share.steady)
		json_object_set_new_nocheck(c, "unsteady", json_true());
	json_object_set_new_nocheck(c, "low", json_integer((json_int_t)floor(e.low)));
	json_object_set_new_nocheck(c, "high", json_integer((json_int_t)ceil(e.high)));
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
		json_array_append_new(mods, module_display_json(v));
	}
	json_object_set_new_nocheck(out, "modules", mods);
	json_object_set_new_nocheck(out, "window_ms",
	                            number_or_null_json(json_object_get(trace, "window_ms")));
	json_t *calls = json_array();
	json_t *duty = json_object_get(trace, "duty"), *by_module = NULL;
	if (json_is_object(duty))
		json_object_set_new_nocheck(
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
		json_object_set_new_nocheck(c, "module", module_display_json(json_array_get(v, 0)));
		json_t *f = json_array_get(v, 1);
		json_object_set_new_nocheck(c, "function",
		                            json_is_string(f) ? json_incref(f) : json_null());
		json_object_set_new_nocheck(c, "arity", number_or_null_json(json_array_get(v, 2)));
		json_object_set_new_nocheck(c, "count", number_or_null_json(json_array_get(v, 3)));
		json_array_append_new(calls, c);
	}
	json_object_set_new_nocheck(out, "calls", calls);
	json_decref(by_module);
	/* what other tools held on the node when tracing started (shared) */
	json_t *foreign = json_array();
	json_array_foreach(json_object_get(trace, "foreign"), i, v)
	{
		if (json_is_string(v))
			json_array_append(foreign, v);
	}
	json_object_set_new_nocheck(out, "foreign", foreign);
	/* where our call_count patterns live: the global session, or a trace
	 * session of our own (OTP 27+) */
	json_t *iso = json_object_get(trace, "isolation");
	json_object_set_new_nocheck(out, "isolation",
	                            json_is_string(iso) ? json_incref(iso) : json_null());
	return out;
}

/* A list of the sampler's stacks with "Mod.fun/arity" frames; `keys` are
 * the numbers each entry carries besides its frames (keys[0] is "frames").
 * Malformed entries are left out. */
static json_t *stack_list(struct obs_term list, const char *const *keys)
{
	json_t *stacks = json_array();
	struct obs_term_iter it = obs_term_items(list);
	struct obs_term st, f, member[4];
	while (obs_term_next(&it, &st)) {
		obs_term_fields(st, keys, member);
		json_t *frames = json_array();
		struct obs_term_iter fit = obs_term_items(member[0]);
		while (obs_term_next(&fit, &f)) {
			char text[MFA_TEXT];
			size_t len = 0;
			if (!mfa_text(f, text, &len))
				break;
			json_array_append_new(frames, json_stringn_nocheck(text, strlen(text)));
		}
		if (json_array_size(frames) == 0) {
			json_decref(frames);
			continue;
		}
		json_t *o = json_object();
		json_object_set_new_nocheck(o, "frames", frames);
		for (size_t k = 1; keys[k]; k++)
			json_object_set_new_nocheck(o, keys[k], number_or_null(member[k]));
		json_array_append_new(stacks, o);
	}
	return stacks;
}

/* The sampler's section: frames become "Mod.fun/arity" text, module atoms
 * display names; anything malformed is left out. */
static json_t *executing_section(struct obs_term e)
{
	enum { PLAIN = 12 };
	static const char *const keys[] = {"period_ms",  "ticks",
	                                   "candidates", "stack_candidates",
	                                   "depth",      "reductions_sampled",
	                                   "dropped",    "failed_ticks",
	                                   "tick_us",    "run_ms",
	                                   "located",    "born",
	                                   "samples",    "stacks",
	                                   "blocked",    "origins",
	                                   NULL};
	struct obs_term f[16];
	obs_term_fields(e, keys, f);
	json_t *out = json_object();
	for (size_t k = 0; k < PLAIN; k++)
		json_object_set_new_nocheck(out, keys[k], number_or_null(f[k]));
	static const char *const sample_keys[] = {"running", "waiting", NULL};
	struct obs_term sampled[2];
	obs_term_fields(f[12], sample_keys, sampled);
	json_t *counts = json_object();
	for (size_t k = 0; k < 2; k++)
		json_object_set_new_nocheck(counts, sample_keys[k], number_or_null(sampled[k]));
	json_object_set_new_nocheck(out, "samples", counts);
	static const char *const executing_keys[] = {"frames", "samples", "reductions", NULL};
	static const char *const blocked_keys[] = {"frames", "samples", NULL};
	json_t *stacks = stack_list(f[13], executing_keys);
	json_object_set_new_nocheck(out, "blocked", stack_list(f[14], blocked_keys));
	json_object_set_new_nocheck(out, "stacks", stacks);
	json_t *origins = json_array();
	struct obs_term_iter it = obs_term_items(f[15]);
	struct obs_term st, mo[2];
	static const char *const origin_keys[] = {"module", "origin", NULL};
	while (obs_term_next(&it, &st)) {
		obs_term_fields(st, origin_keys, mo);
		json_t *m = module_display(mo[0]);
		if (json_is_string(m) && obs_term_type(mo[1]) == JSON_STRING) {
			json_t *o = json_object();
			json_object_set_new_nocheck(o, "module", m);
			json_object_set_new_nocheck(o, "origin", obs_term_json(mo[1]));
			json_array_append_new(origins, o);
		} else {
			json_decref(m);
		}
	}
	json_object_set_new_nocheck(out, "origins", origins);
	return out;
}

/* The JSON of a member copied as it is, or null when it is absent. */
static json_t *plain(struct obs_term v)
{
	json_t *j = obs_term_json(v);
	return j ? j : json_null();
}

/* The strings of a list, as JSON, appended to `out`. */
static void strings_append(json_t *out, struct obs_term list)
{
	struct obs_term_iter it = obs_term_items(list);
	struct obs_term v;
	while (obs_term_next(&it, &v))
		if (obs_term_type(v) == JSON_STRING)
			json_array_append_new(out, obs_term_json(v));
}

/* The members of a reply, in the order of a snapshot's sections. */
enum reply_member {
	R_WINDOW_MS, /* the head, copied as it is */
	R_OTP_RELEASE,
	R_SCHEDULERS_ONLINE,
	R_SCHEDULER_UTILISATION,
	R_RUN_QUEUE,
	R_PROCESSES,
	R_PORTS,
	R_ATOMS,
	R_ETS,
	R_MEMORY, /* the middle, copied as it is */
	R_REDUCTIONS,
	R_GC,
	R_IO,
	R_OBSERVER, /* the guest's own cost, copied as it is */
	R_TOP_PROCESSES,
	R_TRACE,
	R_CALL_TIME,
	R_EXECUTING,
	R_ERRORS,
	R_SAMPLE_US,
	R_MEMBERS
};

json_t *obs_snapshot_build(struct obs_term reply, const char *node, const char *session_id,
                           long seq, int64_t timestamp_ms, json_t *extra_errors)
{
	static const char *const keys[R_MEMBERS + 1] = {"window_ms",
	                                                "otp_release",
	                                                "schedulers_online",
	                                                "scheduler_utilisation",
	                                                "run_queue",
	                                                "processes",
	                                                "ports",
	                                                "atoms",
	                                                "ets",
	                                                "memory",
	                                                "reductions",
	                                                "gc",
	                                                "io",
	                                                "observer",
	                                                "top_processes",
	                                                "trace",
	                                                "call_time",
	                                                "executing",
	                                                "errors",
	                                                "sample_us",
	                                                NULL};
	struct obs_term r[R_MEMBERS];
	obs_term_fields(reply, keys, r);
	if (obs_term_type(reply) != JSON_OBJECT || !obs_term_present(r[R_WINDOW_MS]))
		return NULL;
	json_t *s = json_object();
	json_object_set_new_nocheck(s, "version", json_integer(1));
	json_object_set_new_nocheck(s, "session_id",
	                            session_id ? json_string(session_id) : json_null());
	json_object_set_new_nocheck(s, "node", json_string(node));
	json_object_set_new_nocheck(s, "seq", json_integer(seq));
	json_object_set_new_nocheck(s, "timestamp_ms", json_integer(timestamp_ms));
	for (int k = R_WINDOW_MS; k < R_ETS; k++)
		json_object_set_new_nocheck(s, keys[k], plain(r[k]));
	json_object_set_new_nocheck(s, "ets", ets_section(r[R_ETS]));
	for (int k = R_MEMORY; k < R_TOP_PROCESSES; k++)
		json_object_set_new_nocheck(s, keys[k], plain(r[k]));
	static const char *const lists[] = {"reductions", "memory", "message_queue", "carried",
	                                    NULL};
	struct obs_term top[4];
	obs_term_fields(r[R_TOP_PROCESSES], lists, top);
	json_t *tp = json_object();
	for (int k = 0; k < 3; k++)
		json_object_set_new_nocheck(tp, lists[k], process_list(top[k]));
	/* a snapshot without a scan (the guest's budget thinned them) repeats
	 * the last scan's lists, said so */
	if (obs_term_present(top[3]) && obs_term_type(top[3]) == JSON_TRUE)
		json_object_set_new_nocheck(tp, "carried", json_true());
	json_object_set_new_nocheck(s, "top_processes", tp);
	if (obs_term_type(r[R_TRACE]) == JSON_OBJECT) {
		json_t *tj = obs_term_json(r[R_TRACE]);
		json_t *ts = trace_section(tj);
		json_decref(tj);
		if (obs_term_type(r[R_CALL_TIME]) == JSON_OBJECT) {
			json_t *cj = obs_term_json(r[R_CALL_TIME]);
			call_time_merge(ts, cj);
			json_decref(cj);
		}
		json_object_set_new_nocheck(s, "trace", ts);
	}
	if (obs_term_type(r[R_EXECUTING]) == JSON_OBJECT)
		json_object_set_new_nocheck(s, "executing", executing_section(r[R_EXECUTING]));
	json_t *errors = json_array();
	strings_append(errors, r[R_ERRORS]);
	size_t i;
	json_t *v;
	json_array_foreach(extra_errors, i, v)
	{
		if (json_is_string(v))
			json_array_append(errors, v);
	}
	json_object_set_new_nocheck(s, "errors", errors);
	json_object_set_new_nocheck(
	    s, "sample_ms",
	    obs_term_type(r[R_SAMPLE_US]) == JSON_INTEGER
	        ? json_real((double)obs_term_integer(r[R_SAMPLE_US]) / 1000.0)
	        : json_null());
	return s;
}
