/*
 * snapshot_view.h - the one typed reading of a snapshot (docs/SNAPSHOT.md).
 *
 * Every reader of snapshots (the profile builder, the monitor, the runtime
 * routes, the CLI) goes through obs_view_parse instead of looking keys up by
 * string, so that a renamed field fails to compile here or fails the unit
 * test that parses a snapshot of the real observer (tests/unit/observe.c).
 *
 * Reading is tolerant: a missing, null or wrong-typed value is "unknown"
 * (NAN for numbers, NULL for strings, an empty list), never invented. Every
 * list is capped (OBS_VIEW_MAX_*): entries past a cap are dropped and
 * counted in `truncated`. Schema versions 1..OBS_VIEW_VERSION are read; a
 * newer one is refused (GI_EUNSUPPORTED) rather than half understood.
 *
 * No ei dependency: the view is observation data for every layer above
 * observe/. Not thread-safe per view; distinct views may be used from
 * distinct threads.
 */
#ifndef GIULIA_OBSERVE_SNAPSHOT_VIEW_H
#define GIULIA_OBSERVE_SNAPSHOT_VIEW_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define OBS_VIEW_VERSION 1 /* the newest snapshot schema this parser reads */

#define OBS_VIEW_MAX_PROCESSES  1000  /* per top list */
#define OBS_VIEW_MAX_SCHEDULERS 1024  /* per-scheduler values */
#define OBS_VIEW_MAX_ETS        100   /* ets.top */
#define OBS_VIEW_MAX_MODULES    1000  /* trace.modules, executing.origins */
#define OBS_VIEW_MAX_CALLS      20000 /* trace.calls */
#define OBS_VIEW_MAX_ERRORS     100
#define OBS_VIEW_MAX_STACKS     1000 /* executing.stacks */
#define OBS_VIEW_MAX_FRAMES     32   /* frames kept per stack */

/* A process of a top list. Strings are borrowed from the view's JSON. */
struct obs_view_process {
	const char *pid, *registered_name, *initial_call, *current_function, *module;
	double reductions, cpu_share, memory_bytes, message_queue_len;
};

struct obs_view_processes {
	struct obs_view_process *items;
	size_t len;
};

struct obs_view_ets {
	const char *name, *id, *owner_module;
	double size, memory_bytes;
};

/* One counted function of the traced modules. */
struct obs_view_call {
	const char *module, *function;
	double arity, count;
	double time_calls, time_us; /* call_time only (NAN without it) */
	double measured;            /* under an overhead budget: calls counted (else NAN) */
	double low, high;           /* under an overhead budget: the 95% interval (else NAN) */
	bool carried;               /* under a budget: the module's last counted figures */
	bool unsteady; /* under a budget: the node's load came and went while counting */
};

/* trace.duty: the overhead budget's duty cycling over the window (present
 * only under a budget; docs/OBSERVE.md "Overhead budget"). */
/* One module's counting in a window under a budget. */
struct obs_view_duty_module {
	const char *module;
	double duty;    /* the share of the window's time it counted */
	double sampled; /* the share of the node's work done while it counted */
	bool carried;   /* it did not count in this window */
	bool work_used; /* the work share is evidence (not a nearly idle node) */
};

struct obs_view_duty {
	bool present;
	struct obs_view_duty_module *modules; /* nmodules entries, owned by the view */
	size_t nmodules;
	double overhead, cost; /* NAN when absent */
	double duty_mean;      /* mean of the modules' duty; NAN without modules */
	double exposure_mean;  /* mean of the modules' exposure; NAN when absent */
	bool paused;
};

/* trace.call_time: what the session's call_time flagging did over the window
 * (present only when call_time was asked for). */
struct obs_view_call_time {
	bool present;
	double flagged, refused, trace_messages; /* NAN when absent */
	bool suspended;
	const char *isolation; /* "global", "trace_session", or NULL */
};

/* One distinct stack the sampler saw executing: frames innermost first
 * ("Mod.fun/arity" text), how many samples showed it and the reductions
 * those samples stand for (each sampled process's reductions over the
 * interval, spread over its executing samples). */
struct obs_view_stack {
	const char *frames[OBS_VIEW_MAX_FRAMES];
	size_t depth;
	double samples, reductions;
};

/* Where a module's object code lives on the target: "otp" (under the OTP
 * root), "elixir" (under Elixir's lib dir), "preloaded", "other" (anywhere else, or compiled in
 * memory) or "unknown" (not loaded: known only for its BIFs, such as :math). */
struct obs_view_origin {
	const char *module, *origin;
};

/* The sampler's section (docs/SNAPSHOT.md "executing"); present is false when
 * the snapshot has none (sampler off, one-shot pulse, older observer). */
struct obs_view_executing {
	bool present;
	double period_ms, ticks, candidates, stack_candidates, depth;
	double samples_running, samples_waiting, reductions_sampled, dropped, failed_ticks;
	double tick_us; /* time the ticks of the interval took on the target */
	struct obs_view_stack *stacks;
	size_t nstacks;
	/* Blocked callers: waiting samples of processes waiting for a call's
	 * reply, by stack (innermost first: the wait, then the call site);
	 * reductions are NAN. */
	struct obs_view_stack *blocked;
	size_t nblocked;
	struct obs_view_origin *origins;
	size_t norigins;
};

/* observer: the observer's own work on the node over the window (the
 * session's steps and, under a counting budget, the counting), as shares of
 * one scheduler, against its budget (docs/SNAPSHOT.md, docs/OBSERVE.md). */
struct obs_view_observer {
	bool present;
	bool within_budget;
	double cost, budget, share, counting; /* NAN when absent */
	double reductions, busy_us, other_processes, other_reductions;
	double memory; /* bytes held by the observer's processes at the sample */
	double sample_period_ms, sample_period_used_ms; /* the period asked for, and used */
	double scan_every; /* the scan's period in snapshots (1: every snapshot) */
};

struct obs_view {
	json_t *json; /* the snapshot, one reference held by the view */
	long version; /* -1 when absent */
	const char *session_id, *node, *otp_release;
	double seq, timestamp_ms, window_ms, schedulers_online, sample_ms;
	double utilisation_total;
	size_t nutilisation; /* of utilisation_per */
	double run_queue_total;
	size_t nrun_queue; /* of run_queue_per */
	double processes_count, processes_limit, processes_scanned;
	double ports_count, ports_limit, atoms_count, atoms_limit;
	double ets_count;
	size_t nets_top; /* of ets_top */
	struct {
		double total, processes, processes_used, system, atom, binary, code, ets;
	} memory;
	double reductions_delta, reductions_per_second;
	double gc_count, gc_words_reclaimed;
	double io_input_bytes, io_output_bytes;
	struct obs_view_processes top_reductions, top_memory, top_message_queue;
	bool top_carried; /* the lists are the last scan's, not this window's */
	bool has_trace;
	const char **trace_modules;
	size_t ntrace_modules;
	double trace_window_ms;
	struct obs_view_call *calls;
	size_t ncalls;
	struct obs_view_call_time call_time;
	struct obs_view_duty duty;
	const char **trace_foreign; /* trace.foreign: other tools' tracing, shared */
	size_t ntrace_foreign;
	const char **errors;
	size_t nerrors;
	struct obs_view_executing executing;
	struct obs_view_observer observer;
	double utilisation_observer; /* the observer's share of the schedulers (left out of the
	                                total) */
	size_t truncated;            /* list entries dropped by the caps */
	/* The fixed arrays last, and only their first n* entries are set: a
	 * parse clears the view up to here, not their 22 KB (a view is parsed
	 * per snapshot and per node at each /metrics scrape). */
	double utilisation_per[OBS_VIEW_MAX_SCHEDULERS];
	double run_queue_per[OBS_VIEW_MAX_SCHEDULERS];
	struct obs_view_ets ets_top[OBS_VIEW_MAX_ETS];
};

/* The bytes the observer's own processes hold (0 when the snapshot does not
 * say): the node's memory figures (history, trends, alerts) leave them out,
 * so that the observer warming up never reads as the node growing. */
static inline double obs_view_observer_memory(const struct obs_view *v)
{
	double m = v->observer.memory;
	return m > 0 && m < 1e300 ? m : 0; /* NAN compares false */
}

/* Fills `out` from `snapshot` (borrowed; the view takes its own reference,
 * released by obs_view_destroy). Errors: GI_EINVAL when `snapshot` is not an
 * object, GI_EUNSUPPORTED when its version is newer than OBS_VIEW_VERSION
 * (`out` is then empty but may still be destroyed). */
int obs_view_parse(json_t *snapshot, struct obs_view *out);
/* Releases what `v` holds; the view is empty afterwards. NULL does nothing. */
void obs_view_destroy(struct obs_view *v);

/* Calls fn(ctx, module) for each module the snapshot shows working: the
 * attributed top processes by reductions, the traced calls and the modules
 * of the sampler's stacks (its origins list), in that order, duplicates
 * included. What the monitor pulls object code for and what finalize
 * matches projects on; one definition so that both see the same modules.
 * `module` is borrowed from the view. */
void obs_view_modules_each(const struct obs_view *v, void (*fn)(void *ctx, const char *module),
                           void *ctx);

#endif
