/*
 * fuse_series.h - builders of synthetic snapshot series (docs/SNAPSHOT.md)
 * for the fuse tests: a quiet node by default, to which a test adds the
 * processes, trace counts and metric changes whose rule it checks. Header-only
 * (static functions) so each suite that includes it stays one file.
 */
#ifndef GIULIA_TESTS_FUSE_SERIES_H
#define GIULIA_TESTS_FUSE_SERIES_H

#include <jansson.h>

#define SERIES_T0 1764496200000LL

/* A quiet snapshot: 2 schedulers at 5%, empty run queue, 50 MB, 100k
 * reductions/s, three idle processes. */
static json_t *series_snapshot(long seq)
{
	json_t *s = json_pack(
	    "{s:i, s:s, s:s, s:I, s:I, s:i, s:s, s:i, s:{s:f, s:[f,f]}, s:{s:i, s:[i,i]},"
	    " s:{s:i, s:i}, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I},"
	    " s:{s:I, s:f}, s:{s:[], s:[], s:[]}, s:[]}",
	    "version", 1, "session_id", "s1", "node", "quiet@127.0.0.1", "seq", (json_int_t)seq,
	    "timestamp_ms", (json_int_t)(SERIES_T0 + seq * 1000), "window_ms", 1000, "otp_release",
	    "25", "schedulers_online", 2, "scheduler_utilisation", "total", 0.05, "per_scheduler",
	    0.05, 0.05, "run_queue", "total", 0, "per_scheduler", 0, 0, "processes", "count", 300,
	    "limit", 262144, "memory", "total", (json_int_t)50000000, "processes",
	    (json_int_t)12000000, "processes_used", (json_int_t)11900000, "system",
	    (json_int_t)38000000, "atom", (json_int_t)500000, "binary", (json_int_t)900000, "code",
	    (json_int_t)12000000, "ets", (json_int_t)1500000, "reductions", "delta",
	    (json_int_t)100000, "per_second", 100000.0, "top_processes", "reductions", "memory",
	    "message_queue", "errors");
	return s;
}

/* Adds a process to one of the top lists ("reductions", "memory",
 * "message_queue"). `reg` and `init` may be NULL. */
static void series_add_process(json_t *s, const char *list, const char *pid, const char *reg,
                               const char *init, const char *module, double reductions,
                               double memory, double queue)
{
	json_t *l = json_object_get(json_object_get(s, "top_processes"), list);
	double total =
	    json_number_value(json_object_get(json_object_get(s, "reductions"), "delta"));
	json_array_append_new(
	    l, json_pack("{s:s, s:o, s:o, s:s, s:s, s:f, s:f, s:f, s:f}", "pid", pid,
	                 "registered_name", reg ? json_string(reg) : json_null(), "initial_call",
	                 init ? json_string(init) : json_null(), "current_function",
	                 ":gen_server.loop/7", "module", module, "reductions", reductions,
	                 "cpu_share", total > 0 ? reductions / total : 0.0, "memory_bytes", memory,
	                 "message_queue_len", queue));
}

/* Sets a number at a two-level path ("memory", "total"). */
static void series_set(json_t *s, const char *obj, const char *key, double v)
{
	json_t *o = obj ? json_object_get(s, obj) : s;
	json_object_set_new(
	    o, key, v == (double)(json_int_t)v ? json_integer((json_int_t)v) : json_real(v));
}

/* Adds trace counts for one window; creates the trace block on first use. */
static void series_add_call(json_t *s, const char *module, const char *fn, int arity, double n)
{
	json_t *t = json_object_get(s, "trace");
	if (!t) {
		t = json_pack("{s:[], s:i, s:[]}", "modules", "window_ms", 1000, "calls");
		json_object_set_new(s, "trace", t);
	}
	json_t *mods = json_object_get(t, "modules");
	int seen = 0;
	for (size_t i = 0; i < json_array_size(mods); i++)
		seen |= strcmp(json_string_value(json_array_get(mods, i)), module) == 0;
	if (!seen)
		json_array_append_new(mods, json_string(module));
	if (n > 0)
		json_array_append_new(json_object_get(t, "calls"),
		                      json_pack("{s:s, s:s, s:i, s:f}", "module", module,
		                                "function", fn, "arity", arity, "count", n));
}

typedef void (*series_tweak)(json_t *snapshot, long seq, void *arg);

/* `n` snapshots, each passed to `tweak` (may be NULL). */
static json_t *series_make(long n, series_tweak tweak, void *arg)
{
	json_t *a = json_array();
	for (long i = 0; i < n; i++) {
		json_t *s = series_snapshot(i);
		if (tweak)
			tweak(s, i, arg);
		json_array_append_new(a, s);
	}
	return a;
}

static json_t *series_finalize(const char *status, long n, const char *const *traced)
{
	json_t *f =
	    json_pack("{s:s, s:s, s:s, s:n, s:I, s:I, s:i, s:[], s:n}", "session_id", "s1", "node",
	              "quiet@127.0.0.1", "status", status, "reason", "started_ms",
	              (json_int_t)SERIES_T0, "stopped_ms", (json_int_t)(SERIES_T0 + n * 1000),
	              "interval_ms", 1000, "trace_modules", "project");
	for (size_t i = 0; traced && traced[i]; i++)
		json_array_append_new(json_object_get(f, "trace_modules"), json_string(traced[i]));
	return f;
}

#endif
