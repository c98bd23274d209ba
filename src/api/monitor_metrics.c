/*
 * monitor_metrics.c - the monitor's /metrics exposition (see
 * monitor_metrics.h; the series are listed in docs/API.md).
 *
 * Every snapshot is parsed once into a view; then each family walks the
 * nodes, so that a family's samples stay together as the format requires.
 * Values a snapshot does not have are left out, never written as 0.
 */
#include "api/monitor_metrics.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api/runtime_stats.h"
#include "base/alloc.h"
#include "base/json_read.h"
#include "observe/snapshot_view.h"

struct node_view {
	const struct api_metrics_node *in;
	const char *name;
	bool have; /* `view` holds a parsed snapshot */
	struct obs_view view;
};

void api_node_totals_add_view(struct api_node_totals *t, const struct obs_view *v)
{
	if (!v)
		return;
	const double add[] = {v->reductions_delta, v->gc_count, v->gc_words_reclaimed,
	                      v->io_input_bytes, v->io_output_bytes};
	double *to[] = {&t->reductions, &t->gc_runs, &t->gc_words_reclaimed, &t->io_input_bytes,
	                &t->io_output_bytes};
	for (size_t i = 0; i < sizeof(add) / sizeof(add[0]); i++)
		if (isfinite(add[i]) && add[i] >= 0)
			*to[i] += add[i];
}

void api_node_totals_add(struct api_node_totals *t, json_t *snapshot)
{
	struct obs_view v;
	bool have = obs_view_parse(snapshot, &v) == 0;
	api_node_totals_add_view(t, have ? &v : NULL);
	obs_view_destroy(&v);
}

/* One gauge (or counter) per node with a value read from its view. */
typedef double (*view_value_fn)(const struct obs_view *v);

static void per_node(struct api_metrics *mx, const struct node_view *nodes, size_t n,
                     const char *name, enum api_metrics_type type, const char *help,
                     view_value_fn fn)
{
	api_metrics_family(mx, name, type, help);
	for (size_t i = 0; i < n; i++) {
		if (!nodes[i].have)
			continue;
		const char *labels[] = {"node", nodes[i].name, NULL};
		api_metrics_sample(mx, "", labels, fn(&nodes[i].view));
	}
}

static double v_util(const struct obs_view *v)
{
	return v->utilisation_total;
}
static double v_observer_cost(const struct obs_view *v)
{
	return v->observer.present ? v->observer.cost : NAN;
}
static double v_observer_budget(const struct obs_view *v)
{
	return v->observer.present ? v->observer.budget : NAN;
}
static double v_sched(const struct obs_view *v)
{
	return v->schedulers_online;
}
static double v_runq(const struct obs_view *v)
{
	return v->run_queue_total;
}
static double v_procs(const struct obs_view *v)
{
	return v->processes_count;
}
static double v_procs_limit(const struct obs_view *v)
{
	return v->processes_limit;
}
static double v_ports(const struct obs_view *v)
{
	return v->ports_count;
}
static double v_ports_limit(const struct obs_view *v)
{
	return v->ports_limit;
}
static double v_atoms(const struct obs_view *v)
{
	return v->atoms_count;
}
static double v_atoms_limit(const struct obs_view *v)
{
	return v->atoms_limit;
}
static double v_ets(const struct obs_view *v)
{
	return v->ets_count;
}
static double v_reds_rate(const struct obs_view *v)
{
	return v->reductions_per_second;
}
static double v_window(const struct obs_view *v)
{
	return v->window_ms / 1000.0;
}

static void beam_families(struct api_metrics *mx, const struct node_view *nodes, size_t n)
{
	api_metrics_family(mx, "giulia_beam_node_info", API_METRICS_GAUGE,
	                   "An observed node and its OTP release (always 1).");
	for (size_t i = 0; i < n; i++)
		if (nodes[i].have) {
			const char *otp = nodes[i].view.otp_release;
			const char *labels[] = {"node", nodes[i].name, "otp_release",
			                        otp ? otp : "unknown", NULL};
			api_metrics_sample(mx, "", labels, 1);
		}
	per_node(mx, nodes, n, "giulia_beam_scheduler_utilisation_ratio", API_METRICS_GAUGE,
	         "Scheduler utilisation over the last interval, 0 to 1 (all schedulers).", v_util);
	per_node(mx, nodes, n, "giulia_observer_cost_ratio", API_METRICS_GAUGE,
	         "Giulia's own work on the node over the last interval (its session process and "
	         "its call counting), as a share of one scheduler; left out of every other series.",
	         v_observer_cost);
	per_node(mx, nodes, n, "giulia_observer_budget_ratio", API_METRICS_GAUGE,
	         "The observer's budget on the node, as a share of one scheduler.",
	         v_observer_budget);
	per_node(mx, nodes, n, "giulia_beam_schedulers_online", API_METRICS_GAUGE,
	         "Schedulers online.", v_sched);
	per_node(mx, nodes, n, "giulia_beam_run_queue", API_METRICS_GAUGE,
	         "Processes and ports ready to run, all run queues.", v_runq);
	api_metrics_family(mx, "giulia_beam_memory_bytes", API_METRICS_GAUGE,
	                   "Memory by category (erlang:memory/0) in bytes.");
	for (size_t i = 0; i < n; i++) {
		if (!nodes[i].have)
			continue;
		const struct obs_view *v = &nodes[i].view;
		const char *kinds[] = {"total", "processes", "processes_used", "system",
		                       "atom",  "binary",    "code",           "ets"};
		const double values[] = {v->memory.total,          v->memory.processes,
		                         v->memory.processes_used, v->memory.system,
		                         v->memory.atom,           v->memory.binary,
		                         v->memory.code,           v->memory.ets};
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			const char *labels[] = {"node", nodes[i].name, "kind", kinds[k], NULL};
			api_metrics_sample(mx, "", labels, values[k]);
		}
	}
	per_node(mx, nodes, n, "giulia_beam_processes", API_METRICS_GAUGE, "Processes alive.",
	         v_procs);
	per_node(mx, nodes, n, "giulia_beam_processes_limit", API_METRICS_GAUGE,
	         "The node's process limit.", v_procs_limit);
	per_node(mx, nodes, n, "giulia_beam_ports", API_METRICS_GAUGE, "Ports open.", v_ports);
	per_node(mx, nodes, n, "giulia_beam_ports_limit", API_METRICS_GAUGE,
	         "The node's port limit.", v_ports_limit);
	per_node(mx, nodes, n, "giulia_beam_atoms", API_METRICS_GAUGE, "Atoms in the atom table.",
	         v_atoms);
	per_node(mx, nodes, n, "giulia_beam_atoms_limit", API_METRICS_GAUGE,
	         "The node's atom table limit.", v_atoms_limit);
	per_node(mx, nodes, n, "giulia_beam_ets_tables", API_METRICS_GAUGE, "ETS tables.", v_ets);
	per_node(mx, nodes, n, "giulia_beam_reductions_per_second", API_METRICS_GAUGE,
	         "Reductions per second over the last interval.", v_reds_rate);
	per_node(mx, nodes, n, "giulia_beam_snapshot_window_seconds", API_METRICS_GAUGE,
	         "The interval the latest snapshot measured, in seconds.", v_window);
}

static double total_of(const struct api_node_totals *t, size_t which)
{
	const double values[] = {t->reductions, t->gc_runs, t->gc_words_reclaimed,
	                         t->io_input_bytes, t->io_output_bytes};
	return values[which];
}

static void total_families(struct api_metrics *mx, const struct node_view *nodes, size_t n)
{
	/* In the order of total_of. */
	static const struct {
		const char *name, *help;
	} T[] = {
	    {"giulia_beam_reductions", "Reductions over the observation (sum of its intervals)."},
	    {"giulia_beam_gc_runs", "Garbage collections over the observation."},
	    {"giulia_beam_gc_words_reclaimed",
	     "Words reclaimed by garbage collection over the observation."},
	    {"giulia_beam_io_input_bytes", "Bytes received through ports over the observation."},
	    {"giulia_beam_io_output_bytes", "Bytes sent through ports over the observation."},
	};
	for (size_t t = 0; t < sizeof(T) / sizeof(T[0]); t++) {
		api_metrics_family(mx, T[t].name, API_METRICS_COUNTER, T[t].help);
		for (size_t i = 0; i < n; i++) {
			if (!nodes[i].have)
				continue;
			const char *labels[] = {"node", nodes[i].name, NULL};
			api_metrics_sample(mx, "", labels, total_of(&nodes[i].in->totals, t));
		}
	}
}

static void module_families(struct api_metrics *mx, const struct node_view *nodes, size_t n)
{
	api_metrics_family(mx, "giulia_beam_module_reductions_ratio", API_METRICS_GAUGE,
	                   "Share of the node's reductions over the last interval done by the "
	                   "top processes attributed to a module (the busiest modules only).");
	for (size_t i = 0; i < n; i++) {
		if (!nodes[i].have)
			continue;
		json_t *mods = api_stats_hot_modules(nodes[i].in->last);
		for (size_t k = 0; k < json_array_size(mods) && k < API_METRICS_MODULES_PER_NODE;
		     k++) {
			json_t *m = json_array_get(mods, k);
			const char *mod = json_string_value(json_object_get(m, "module"));
			const char *labels[] = {"node", nodes[i].name, "module", mod ? mod : "",
			                        NULL};
			api_metrics_sample(mx, "", labels, api_stats_num(m, "cpu_share", NULL));
		}
		json_decref(mods);
	}
	api_metrics_family(mx, "giulia_beam_function_calls_per_second", API_METRICS_GAUGE,
	                   "Calls per second of a traced function over the last trace window "
	                   "(the most called functions only).");
	char function[320];
	for (size_t i = 0; i < n; i++) {
		if (!nodes[i].have)
			continue;
		const struct obs_view *v = &nodes[i].view;
		double window = isfinite(v->trace_window_ms) && v->trace_window_ms > 0
		                    ? v->trace_window_ms
		                    : v->window_ms;
		if (!(window > 0) || v->ncalls == 0)
			continue;
		/* The busiest first: indices sorted by count, descending. */
		size_t *order = gi_calloc(v->ncalls, sizeof(size_t));
		for (size_t k = 0; k < v->ncalls; k++)
			order[k] = k;
		for (size_t k = 0; k < v->ncalls && k < API_METRICS_FUNCTIONS_PER_NODE; k++) {
			size_t best = k;
			for (size_t j = k + 1; j < v->ncalls; j++)
				if (v->calls[order[j]].count > v->calls[order[best]].count)
					best = j;
			size_t tmp = order[k];
			order[k] = order[best];
			order[best] = tmp;
			const struct obs_view_call *c = &v->calls[order[k]];
			if (!c->module || !c->function || isnan(c->count))
				continue;
			snprintf(function, sizeof(function), "%.255s/%.0f", c->function, c->arity);
			const char *labels[] = {"node",     nodes[i].name, "module", c->module,
			                        "function", function,      NULL};
			api_metrics_sample(mx, "", labels, c->count * 1000.0 / window);
		}
		gi_free(order);
	}
}

static double session_num(const struct node_view *nv, const char *key)
{
	return gi_json_num(nv->in->session, key);
}

static void session_families(struct api_metrics *mx, const struct node_view *nodes, size_t n,
                             int64_t now_ms)
{
	api_metrics_family(mx, "giulia_observation_up", API_METRICS_GAUGE,
	                   "1 while the node's observation runs, 0 once it ended.");
	for (size_t i = 0; i < n; i++) {
		const char *st = json_string_value(json_object_get(nodes[i].in->session, "state"));
		const char *labels[] = {"node", nodes[i].name, NULL};
		api_metrics_sample(mx, "", labels, st && strcmp(st, "running") == 0 ? 1 : 0);
	}
	api_metrics_family(mx, "giulia_observation_state", API_METRICS_GAUGE,
	                   "The observation's state (starting, running, complete, interrupted): "
	                   "1 for the current one.");
	static const char *const STATES[] = {"starting", "running", "complete", "interrupted"};
	for (size_t i = 0; i < n; i++) {
		const char *st = json_string_value(json_object_get(nodes[i].in->session, "state"));
		for (size_t k = 0; k < 4; k++) {
			const char *labels[] = {"node", nodes[i].name, "state", STATES[k], NULL};
			api_metrics_sample(mx, "", labels, st && strcmp(st, STATES[k]) == 0);
		}
	}
	static const struct {
		const char *name, *key, *help;
		enum api_metrics_type type;
		double scale;
	} S[] = {
	    {"giulia_observation_snapshots", "snapshots", "Snapshots taken by the observation.",
	     API_METRICS_COUNTER, 1},
	    {"giulia_observation_failures", "failures",
	     "Samples of the observation that timed out or failed on the node.",
	     API_METRICS_COUNTER, 1},
	    {"giulia_observation_consecutive_timeouts", "timeouts",
	     "Samples in a row without a reply (0 once the node answers again).", API_METRICS_GAUGE,
	     1},
	    {"giulia_observation_interval_seconds", "interval_ms",
	     "The observation's interval in seconds.", API_METRICS_GAUGE, 0.001},
	};
	for (size_t s = 0; s < sizeof(S) / sizeof(S[0]); s++) {
		api_metrics_family(mx, S[s].name, S[s].type, S[s].help);
		for (size_t i = 0; i < n; i++) {
			const char *labels[] = {"node", nodes[i].name, NULL};
			api_metrics_sample(mx, "", labels,
			                   session_num(&nodes[i], S[s].key) * S[s].scale);
		}
	}
	api_metrics_family(mx, "giulia_observation_last_snapshot_age_seconds", API_METRICS_GAUGE,
	                   "Seconds since the observation's latest snapshot was taken.");
	for (size_t i = 0; i < n; i++) {
		double last = session_num(&nodes[i], "last_snapshot_ms");
		const char *labels[] = {"node", nodes[i].name, NULL};
		if (!isnan(last))
			api_metrics_sample(
			    mx, "", labels,
			    last > (double)now_ms ? 0 : ((double)now_ms - last) / 1000.0);
	}
}

static void alert_families(struct api_metrics *mx, const struct node_view *nodes, size_t n,
                           const struct api_alert_rules *rules)
{
	size_t nr = api_alert_rules_count(rules);
	api_metrics_family(mx, "giulia_alert_rules", API_METRICS_GAUGE,
	                   "Alert rules the monitor evaluates.");
	api_metrics_sample(mx, "", NULL, (double)nr);
	api_metrics_family(mx, "giulia_alert_active", API_METRICS_GAUGE,
	                   "1 when the rule fires on the node at that severity, else 0.");
	for (size_t i = 0; i < n; i++) {
		if (!nodes[i].have)
			continue;
		json_t *alerts = nodes[i].in->alerts;
		for (size_t r = 0; r < nr; r++) {
			const char *name = api_alert_rules_name(rules, r);
			const char *fired = NULL;
			size_t k;
			json_t *a;
			json_array_foreach(alerts, k, a)
			{
				const char *rule = json_string_value(json_object_get(a, "rule"));
				if (rule && strcmp(rule, name) == 0)
					fired = json_string_value(json_object_get(a, "severity"));
			}
			static const char *const SEV[] = {"warning", "critical"};
			for (size_t s = 0; s < 2; s++) {
				const char *labels[] = {"node",     nodes[i].name, "rule", name,
				                        "severity", SEV[s],        NULL};
				api_metrics_sample(mx, "", labels,
				                   fired && strcmp(fired, SEV[s]) == 0 ? 1 : 0);
			}
		}
	}
}

static void own_families(struct api_metrics *mx, const struct api_monitor_metrics_input *in)
{
	api_metrics_family(mx, "giulia_monitor_uptime_seconds", API_METRICS_GAUGE,
	                   "Seconds since the monitor started.");
	api_metrics_sample(mx, "", NULL, in->uptime_seconds);
	const struct obs_manager_metrics *mm = in->manager;
	api_metrics_family(mx, "giulia_monitor_observations_running", API_METRICS_GAUGE,
	                   "Observations running.");
	api_metrics_sample(mx, "", NULL, mm ? (double)mm->sessions_running : 0);
	api_metrics_family(mx, "giulia_monitor_snapshots", API_METRICS_COUNTER,
	                   "Snapshots taken, all observations.");
	api_metrics_sample(mx, "", NULL, mm ? (double)mm->snapshots : 0);
	api_metrics_family(mx, "giulia_monitor_snapshot_failures", API_METRICS_COUNTER,
	                   "Samples that timed out or failed on their node, all observations.");
	api_metrics_sample(mx, "", NULL, mm ? (double)mm->failures : 0);
	if (mm) {
		api_metrics_family(mx, "giulia_monitor_sample_rpc_duration_seconds",
		                   API_METRICS_HISTOGRAM,
		                   "From sending a sample request to a node to its reply.");
		api_metrics_histogram(mx, NULL, obs_metrics_bucket_bounds, mm->rpc_counts,
		                      OBS_METRICS_BUCKETS, mm->rpc_sum_s);
		api_metrics_family(mx, "giulia_monitor_snapshot_lateness_seconds",
		                   API_METRICS_HISTOGRAM,
		                   "From the tick a snapshot was due to its completion: dispatch "
		                   "delay, rpc and processing.");
		api_metrics_histogram(mx, NULL, obs_metrics_bucket_bounds, mm->lateness_counts,
		                      OBS_METRICS_BUCKETS, mm->lateness_sum_s);
		api_metrics_family(mx, "giulia_monitor_sample_dispatch_delay_seconds",
		                   API_METRICS_HISTOGRAM,
		                   "From the tick a sample was due to its request sent (the "
		                   "monitor's scheduling).");
		api_metrics_histogram(mx, NULL, obs_metrics_bucket_bounds, mm->dispatch_counts,
		                      OBS_METRICS_BUCKETS, mm->dispatch_sum_s);
		api_metrics_family(mx, "giulia_monitor_snapshot_processing_seconds",
		                   API_METRICS_HISTOGRAM,
		                   "From a sample's reply to the snapshot's completion (the "
		                   "monitor's decoding and delivery).");
		api_metrics_histogram(mx, NULL, obs_metrics_bucket_bounds, mm->processing_counts,
		                      OBS_METRICS_BUCKETS, mm->processing_sum_s);
	}
	json_t *d = in->delivery;
	api_metrics_family(mx, "giulia_monitor_push_queue_items", API_METRICS_GAUGE,
	                   "Items waiting for delivery to the worker, in memory and spooled.");
	const char *mem[] = {"where", "memory", NULL}, *disk[] = {"where", "disk", NULL};
	api_metrics_sample(mx, "", mem, gi_json_num(d, "queued_memory"));
	api_metrics_sample(mx, "", disk, gi_json_num(d, "queued_disk"));
	api_metrics_family(mx, "giulia_monitor_push_queue_bytes", API_METRICS_GAUGE,
	                   "Bytes waiting for delivery to the worker, in memory and spooled.");
	api_metrics_sample(mx, "", mem, gi_json_num(d, "queued_memory_bytes"));
	api_metrics_sample(mx, "", disk, gi_json_num(d, "spool_bytes"));
	static const struct {
		const char *name, *key, *help;
	} P[] = {
	    {"giulia_monitor_push_delivered", "delivered", "Items the worker acknowledged."},
	    {"giulia_monitor_push_retries", "retries", "Deliveries retried."},
	    {"giulia_monitor_push_rejected", "rejected", "Items the worker refused for good."},
	    {"giulia_monitor_push_dropped", "dropped",
	     "Items dropped because the queue and the spool were full."},
	};
	for (size_t p = 0; p < sizeof(P) / sizeof(P[0]); p++) {
		api_metrics_family(mx, P[p].name, API_METRICS_COUNTER, P[p].help);
		api_metrics_sample(mx, "", NULL, gi_json_num(d, P[p].key));
	}
	api_metrics_family(mx, "giulia_monitor_worker_reachable", API_METRICS_GAUGE,
	                   "1 when the latest delivery attempt reached the worker.");
	json_t *reach = json_object_get(d, "worker_reachable");
	api_metrics_sample(mx, "", NULL, json_is_boolean(reach) ? json_is_true(reach) : NAN);
	api_metrics_process(mx);
}

char *api_monitor_metrics_render(const struct api_monitor_metrics_input *in,
                                 enum api_metrics_format format, size_t *len_out)
{
	struct api_metrics mx;
	api_metrics_init(&mx, format, 0);
	struct node_view *nodes = gi_calloc(in->nnodes ? in->nnodes : 1, sizeof(*nodes));
	for (size_t i = 0; i < in->nnodes; i++) {
		nodes[i].in = &in->nodes[i];
		nodes[i].name = json_string_value(json_object_get(in->nodes[i].session, "node"));
		if (!nodes[i].name)
			nodes[i].name = "";
		nodes[i].have =
		    in->nodes[i].last && obs_view_parse(in->nodes[i].last, &nodes[i].view) == 0;
	}
	session_families(&mx, nodes, in->nnodes, in->now_wall_ms);
	beam_families(&mx, nodes, in->nnodes);
	total_families(&mx, nodes, in->nnodes);
	module_families(&mx, nodes, in->nnodes);
	alert_families(&mx, nodes, in->nnodes, in->rules);
	own_families(&mx, in);
	for (size_t i = 0; i < in->nnodes; i++)
		if (in->nodes[i].last)
			obs_view_destroy(&nodes[i].view);
	gi_free(nodes);
	char *text = api_metrics_finish(&mx, len_out);
	api_metrics_destroy(&mx);
	return text;
}
