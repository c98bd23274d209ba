/*
 * monitor_metrics.h - the monitor's /metrics exposition (docs/API.md, "GET
 * /metrics"): what it observes on each node, its alerts, and its own health.
 *
 * The monitor takes references to its state (and evaluates the alert rules
 * on each node's history) under its lock, then releases it and this renders
 * the text, so that a scrape never holds the monitor's lock while it
 * formats, and never copies the histories.
 *
 * Label cardinality: one `node` per observation the manager holds (at most
 * its session cap), at most API_METRICS_MODULES_PER_NODE `module` values and
 * API_METRICS_FUNCTIONS_PER_NODE `function` values per node (the busiest),
 * one `rule` per alert rule; the writer's series cap bounds the rest.
 *
 * Thread-safe: pure function of its input (borrowed).
 */
#ifndef GIULIA_API_MONITOR_METRICS_H
#define GIULIA_API_MONITOR_METRICS_H

#include <jansson.h>
#include <stdint.h>

#include "api/alert_rules.h"
#include "api/metrics.h"
#include "observe/observe.h"

#define API_METRICS_MODULES_PER_NODE   10
#define API_METRICS_FUNCTIONS_PER_NODE 20

/* Sums of a node's snapshots' interval counts over its observation (the
 * sources of the _total counters), kept by the monitor. */
struct api_node_totals {
	double reductions, gc_runs, gc_words_reclaimed, io_input_bytes, io_output_bytes;
};

struct api_metrics_node {
	json_t *session; /* the manager's status entry (obs_manager_status) */
	json_t *last;    /* latest snapshot while running, or NULL */
	json_t *alerts;  /* api_alert_rules_eval of `rules` on it, or NULL */
	struct api_node_totals totals;
};

struct api_monitor_metrics_input {
	struct api_metrics_node *nodes;
	size_t nnodes;
	const struct obs_manager_metrics *manager; /* NULL without the observer */
	json_t *delivery;                          /* api_pusher_stats */
	const struct api_alert_rules *rules;
	double uptime_seconds;
	int64_t now_wall_ms;
};

/* Renders the exposition; the text is the caller's (gi_free), *len_out its
 * length. */
char *api_monitor_metrics_render(const struct api_monitor_metrics_input *in,
                                 enum api_metrics_format format, size_t *len_out);

/* Adds a snapshot's interval counts (borrowed) to `t`. */
void api_node_totals_add(struct api_node_totals *t, json_t *snapshot);
/* The same from a parsed snapshot (NULL: nothing to add). */
struct obs_view;
void api_node_totals_add_view(struct api_node_totals *t, const struct obs_view *v);

#endif
