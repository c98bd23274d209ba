/*
 * inspect.h - read-only views of one part of a live node, each one bounded
 * call evaluated there (a probe of src/observe/probe/, nothing loaded):
 * one process (what recon:info/1 and observer_cli's process panel show),
 * the ETS tables (observer_cli's ETS view), ports and sockets over a window
 * (recon:inet_window/3), applications, the allocators (recon_alloc) and,
 * the one view that is not read-only, binary leaks (recon:bin_leak/1, a
 * forced GC of every process). docs/OBSERVE.md describes the views and
 * their caps.
 *
 * Names given here (registered names) are compared as text on the target
 * against what exists there; no atom is ever created from them.
 *
 * Threads: obs_process may run in any number of threads at once (each call
 * has its own connection); obs_watch_process uses the watch's connection
 * and is not thread-safe with other calls on that watch.
 */
#ifndef GIULIA_OBSERVE_INSPECT_H
#define GIULIA_OBSERVE_INSPECT_H

#include <jansson.h>
#include <stdbool.h>

#include "observe/observe.h"

/* Caps of a process view (docs/OBSERVE.md "One process"). */
#define OBS_PROCESS_WINDOW_DEFAULT_MS 500
#define OBS_PROCESS_WINDOW_MAX_MS     5000
#define OBS_PROCESS_KEYS_DEFAULT      100
#define OBS_PROCESS_KEYS_MAX          1000
#define OBS_PROCESS_MESSAGES_MAX      100
#define OBS_PROCESS_COPY_MAX          10000 /* longest queue whose messages are copied */
#define OBS_PROCESS_LIST_MAX          100   /* links, monitors, monitored_by, ancestors */
#define OBS_PROCESS_STACK_MAX         32
#define OBS_PROCESS_TEXT_CHARS        400  /* a rendered key, value or message */
#define OBS_PROCESS_STATE_CHARS       4000 /* the rendered sys:get_status */
#define OBS_PROCESS_STATE_TIMEOUT_MS  1000
#define OBS_PROCESS_STATE_TIMEOUT_MAX 5000

struct obs_process_request {
	/* "<0.123.0>" or "0.123.0" (a local pid), or a registered name written
	 * either way ("Nexus.Registry", "Elixir.Nexus.Registry", "logger",
	 * ":logger") */
	const char *who;
	int window_ms;          /* reductions per second over it; 0: default; <= max */
	int keys_max;           /* dictionary keys shown; 0: default; <= max */
	bool dictionary_values; /* the keys' values too, each cut */
	int messages;           /* how many messages to show (0: none); <= max */
	bool state;             /* sys:get_status of a proc_lib process */
	int state_timeout_ms;   /* 0: default; <= max */
};

/* Checks `r` (caps, the form of `who`); GI_EINVAL with a sentence for the
 * user in `err` (`n` bytes) when it is not valid. */
int obs_process_request_check(const struct obs_process_request *r, char *err, size_t n);

/* Rewrites the process probe's decoded answer `p` in place (borrowed):
 * {M, F, A} arrays to "Mod.fun/arity" with modules written as everywhere,
 * stack frames' "mfa" to "function"; anything of another shape becomes
 * null. Exposed for fuzzing (fuzz/observe_inspect.c): the answer comes
 * from the node. */
void obs_process_json_rewrite(json_t *p);

/* One process of `t` as a JSON object (docs/OBSERVE.md "One process"):
 * pid, registered_name, status, current_function, initial_call,
 * proc_lib_initial_call ("Mod.fun/arity", modules written as everywhere),
 * stack, message_queue_len, memory and heap bytes, reductions and
 * reductions_per_second over window_ms, links, monitors, monitored_by (with
 * names, capped, and their counts), group_leader, dictionary {count,
 * entries [{key, value?}]}, messages (null unless asked: {shown, refused}),
 * state (null unless asked: {text} or {error}). *out is the caller's.
 * Errors: GI_EINVAL (bad request), GI_ENOTFOUND (no such process or name
 * on the node), and the connection errors of obs_pulse. */
int obs_process(const struct obs_target *t, const struct obs_process_request *r, json_t **out);
/* The same over a watch's connection (`giulia top --watch`). */
int obs_watch_process(struct obs_watch *w, const struct obs_process_request *r, json_t **out);

/* The ETS tables (docs/OBSERVE.md "ETS tables"). */
#define OBS_ETS_LIMIT_DEFAULT 30
#define OBS_ETS_LIMIT_MAX     1000
#define OBS_ETS_SCAN_MAX      200000 /* tables looked at, in ets:all/0's order */

struct obs_ets_request {
	const char *sort; /* "memory" (NULL: default) or "size"; largest first */
	int limit;        /* tables listed; 0: default; <= max */
};

/* The largest `limit` ETS tables of `t` by memory or size:
 * {node, sort, count (every table), scanned, memory_bytes (all scanned),
 * tables: [{id, name, named_table, owner, owner_name, heir, size,
 * memory_bytes, type, protection, keypos, compressed, read_concurrency,
 * write_concurrency}]}. No table's contents are read. *out is the
 * caller's. Errors: GI_EINVAL, and the connection errors of obs_pulse. */
int obs_ets(const struct obs_target *t, const struct obs_ets_request *r, json_t **out);

/* Ports and sockets over a window (docs/OBSERVE.md "Ports and sockets"). */
#define OBS_PORTS_WINDOW_DEFAULT_MS 1000
#define OBS_PORTS_WINDOW_MAX_MS     10000
#define OBS_PORTS_LIMIT_DEFAULT     30
#define OBS_PORTS_LIMIT_MAX         1000
#define OBS_PORTS_SCAN_MAX          100000 /* ports looked at, in erlang:ports/0's order */

struct obs_ports_request {
	int window_ms; /* 0: default; <= max */
	int limit;     /* ports listed, most bytes moved first; 0: default; <= max */
};

/* The ports of `t` that moved the most bytes over `window_ms`: {node,
 * window_ms, count, observer_ports (the distribution connections of this
 * and any other Giulia observer: left out of count, kinds and ports),
 * scanned, fds {used, max}, kinds {tcp: N, ...}, ports:
 * [{id, name, kind, owner, owner_name, os_pid, local, peer, input_bytes,
 * output_bytes (over the window), input_total, output_total, recv_packets,
 * send_packets (sockets only, else null)}]}. *out is the caller's. Errors:
 * GI_EINVAL, and the connection errors of obs_pulse. */
int obs_ports(const struct obs_target *t, const struct obs_ports_request *r, json_t **out);

/* Applications and one application's supervision tree (docs/OBSERVE.md
 * "Applications and supervision"). */
#define OBS_APPS_DEPTH_DEFAULT 4
#define OBS_APPS_DEPTH_MAX     20
#define OBS_APPS_WIDTH_DEFAULT 50
#define OBS_APPS_WIDTH_MAX     1000
#define OBS_APPS_NODES_MAX     2000 /* nodes of one tree in all */
#define OBS_APPS_SCAN_MAX      2000000
#define OBS_APPS_CALL_MS       1000 /* each supervisor's which_children */
#define OBS_APPS_BUDGET_MS     3000 /* no new call after it */

struct obs_apps_request {
	const char *app; /* NULL: the list; else this application's tree (text) */
	int depth;       /* levels below the top supervisor; 0: default; <= max */
	int width;       /* children shown per supervisor; 0: default; <= max */
};

/* Without r->app: {node, apps: [{name, description, version, processes,
 * memory_bytes}], unattributed {processes, memory_bytes},
 * processes_scanned}; with it: {node, app, version, nodes, tree: {id, pid,
 * name, type, modules, children_count, children: [...], cut?, error?}}.
 * GI_ENOTFOUND when no such application runs there. *out is the caller's.
 * Errors also GI_EINVAL and the connection errors of obs_pulse. */
int obs_apps(const struct obs_target *t, const struct obs_apps_request *r, json_t **out);

/* Allocators (docs/OBSERVE.md "Memory you can act on"). */
#define OBS_ALLOC_LIMIT_DEFAULT 20
#define OBS_ALLOC_LIMIT_MAX     1000

/* The allocators of `t`, as recon_alloc:fragmentation(current) and
 * cache_hit_rates/0 compute them from erlang:system_info({allocator, A}):
 * {node, allocators, instances, blocks_bytes, carriers_bytes, types:
 * [{allocator, instances, blocks_bytes, carriers_bytes, usage, sbcs_...,
 * mbcs_...}] (most carrier bytes first), rows: the `limit` instances with
 * the most carrier bytes unused [{allocator, instance, sbcs_blocks_bytes,
 * sbcs_carriers_bytes, sbcs_usage, mbcs_..., unused_bytes}], cache:
 * [{instance, hits, calls, hit_rate}] (mseg_alloc)}. Read-only. *out is
 * the caller's. Errors: GI_EINVAL, and the connection errors of obs_pulse. */
int obs_alloc(const struct obs_target *t, int limit, json_t **out);

/* Binary leaks (docs/OBSERVE.md "Memory you can act on"): forces a GC. */
#define OBS_BINLEAK_LIMIT_DEFAULT 10
#define OBS_BINLEAK_LIMIT_MAX     100
#define OBS_BINLEAK_SCAN_MAX      100000 /* processes looked at */
#define OBS_BINLEAK_BUDGET_MS     5000   /* no new process after it */

/* recon:bin_leak/1 measured per process: each process's refc binary bytes
 * before and after erlang:garbage_collect/1 of it, the `limit` that freed
 * the most: {node, count, scanned, collected, cut (budget reached),
 * freed_bytes, binary_before, binary_after (erlang:memory(binary)),
 * elapsed_ms, processes: [{pid, registered_name, current_function,
 * initial_call, freed_bytes, before_bytes, before_count, after_bytes,
 * after_count}]}. NOT read-only: every process looked at is garbage
 * collected (the observer's own are left out). *out is the caller's.
 * Errors: GI_EINVAL, and the connection errors of obs_pulse. */
int obs_binleak(const struct obs_target *t, int limit, json_t **out);

#endif
