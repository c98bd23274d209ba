/*
 * fuse.c - builds a profile (docs/PROFILE.md) and drives its steps: one
 * pass over an observation's snapshots (docs/SNAPSHOT.md) fills the
 * accumulators (accumulate.c, fuse_builder_add); at the end the joins with
 * the knowledge graph (join.c) and the sections (sections.c) make the
 * profile (fuse_builder_finish), and the rules of rules.c rank its
 * recommendations. Also the word lists that classify function names.
 *
 * Invariants: every size taken from the input is capped (fuse_int.h); all
 * working memory lives in one arena freed at the end; the inputs are only
 * read.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/arena.h"
#include "base/error.h"
#include "base/map.h"
#include "base/str.h"
#include "base/vec.h"
#include "fuse/fuse.h"
#include "fuse/build_int.h"
#include "fuse/fuse_int.h"
#include "graph/query.h"
#include "observe/snapshot_view.h"

static const char *const default_reads[] = {
    "get",       "get_by", "all",     "one",    "fetch", "list",   "lookup", "exists", "count",
    "aggregate", "stream", "preload", "search", "find",  "select", "read",   "reload", NULL,
};
static const char *const default_writes[] = {
    "insert",     "update",     "delete",      "put",   "create", "upsert", "insert_all",
    "update_all", "delete_all", "transaction", "write", "remove", "save",   NULL,
};
static const char *const default_pipeline[] = {"prepare_opts", "default_options", "prepare_query",
                                               NULL};

/* A word matches a function name when the name, without a trailing ? or !,
 * equals it or starts with it followed by '_' (get matches get_by_id). */
static bool name_matches(const char *name, const char *word)
{
	size_t wl = strlen(word);
	while (wl > 0 && (word[wl - 1] == '?' || word[wl - 1] == '!'))
		wl--;
	size_t nl = strlen(name);
	while (nl > 0 && (name[nl - 1] == '?' || name[nl - 1] == '!'))
		nl--;
	if (wl == 0 || nl < wl || strncmp(name, word, wl) != 0)
		return false;
	return nl == wl || name[wl] == '_';
}

static bool list_matches(const char *const *list, const char *name)
{
	for (size_t i = 0; list[i]; i++)
		if (name_matches(name, list[i]))
			return true;
	return false;
}

static bool list_exact(const char *const *list, const char *name)
{
	for (size_t i = 0; list[i]; i++)
		if (strcmp(list[i], name) == 0)
			return true;
	return false;
}

const char *const *fuse_pipeline_names(const struct fuse_config *cfg)
{
	return cfg && cfg->pipeline_names ? cfg->pipeline_names : default_pipeline;
}

const char *fuse_classify_function(const struct fuse_config *cfg, const char *name)
{
	const char *const *reads = cfg && cfg->read_names ? cfg->read_names : default_reads;
	const char *const *writes = cfg && cfg->write_names ? cfg->write_names : default_writes;
	const char *const *pipe = fuse_pipeline_names(cfg);
	if (!name)
		return "other";
	if (list_exact(pipe, name))
		return "pipeline";
	/* Writes first: get_and_update changes data, list_updates is rare. */
	if (list_matches(writes, name))
		return "write";
	if (list_matches(reads, name))
		return "read";
	return "other";
}

static void ctx_destroy(struct ctx *c)
{
	gi_map_destroy(&c->mods);
	gi_map_destroy(&c->procs);
	gi_map_destroy(&c->funcs);
	gi_map_destroy(&c->traced);
	gi_map_destroy(&c->reach);
	for (size_t i = 0; i < c->traced_list.len; i++)
		json_decref(GI_VEC_AT(&c->traced_list, struct traced_mod *, i)->calls_traced);
	gi_vec_destroy(&c->mod_list);
	gi_vec_destroy(&c->proc_list);
	gi_vec_destroy(&c->func_list);
	gi_vec_destroy(&c->traced_list);
	struct metric *ms[] = {&c->m_mem,           &c->m_procs, &c->m_runq,   &c->m_util,
	                       &c->m_rps,           &c->m_t,     &c->m_binary, &c->m_ets,
	                       &c->m_processes_mem, &c->m_atom,  &c->m_code,   &c->m_system};
	for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++)
		gi_vec_destroy(&ms[i]->values);
	json_decref(c->errors);
	json_decref(c->foreign);
	fuse_executing_free(c->executing);
	gi_arena_destroy(&c->arena);
}

struct fuse_builder {
	struct ctx c;
};

int fuse_builder_new(const struct fuse_config *cfg, long snapshot_count, struct fuse_builder **out)
{
	*out = NULL;
	if (snapshot_count < 0 || snapshot_count > FUSE_MAX_SNAPSHOTS)
		return GI_EINVAL;
	struct fuse_builder *b = gi_calloc(1, sizeof(*b));
	struct ctx *c = &b->c;
	gi_arena_init(&c->arena);
	c->cfg = cfg;
	if (cfg && cfg->thresholds)
		c->thr = *cfg->thresholds;
	else
		fuse_thresholds_default(&c->thr);
	c->first_ts = c->last_ts = NAN;
	c->errors = json_array();
	c->foreign = json_array();
	c->executing = fuse_executing_new();
	gi_map_init(&c->mods);
	gi_map_init(&c->procs);
	gi_map_init(&c->funcs);
	gi_map_init(&c->traced);
	gi_map_init(&c->reach);
	gi_vec_init(&c->mod_list, sizeof(void *));
	gi_vec_init(&c->proc_list, sizeof(void *));
	gi_vec_init(&c->func_list, sizeof(void *));
	gi_vec_init(&c->traced_list, sizeof(void *));
	struct metric *ms[] = {&c->m_mem,           &c->m_procs, &c->m_runq,   &c->m_util,
	                       &c->m_rps,           &c->m_t,     &c->m_binary, &c->m_ets,
	                       &c->m_processes_mem, &c->m_atom,  &c->m_code,   &c->m_system};
	for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++)
		fuse_metric_init(ms[i]);
	c->total_snapshots = snapshot_count;
	c->quarter = snapshot_count / 4 ? snapshot_count / 4 : 1;
	*out = b;
	return 0;
}

int fuse_builder_add(struct fuse_builder *b, json_t *snapshot)
{
	if (!json_is_object(snapshot))
		return GI_EINVAL;
	if (b->c.nsnap >= FUSE_MAX_SNAPSHOTS)
		return GI_ETOOBIG;
	struct obs_view v;
	int rc = obs_view_parse(snapshot, &v);
	if (rc == GI_EUNSUPPORTED) {
		/* A newer observer's snapshot: skipped, and said once. */
		const char *msg = "snapshots of a newer schema version were skipped";
		bool dup = false;
		for (size_t k = 0; k < json_array_size(b->c.errors) && !dup; k++)
			dup = strcmp(json_string_value(json_array_get(b->c.errors, k)), msg) == 0;
		if (!dup)
			json_array_append_new(b->c.errors, json_string(msg));
		obs_view_destroy(&v);
		return 0;
	}
	if (rc == 0) {
		fuse_take_snapshot(&b->c, &v, b->c.nsnap);
		b->c.nsnap++;
	}
	obs_view_destroy(&v);
	return rc;
}

/* Without a snapshot count up front, the first and the last snapshot stand
 * for the first and the last quarter of the mailbox trend. */
static void mailbox_quarters_from_ends(struct ctx *c)
{
	c->quarter = 1;
	for (size_t i = 0; i < c->proc_list.len; i++) {
		struct proc_stat *p = GI_VEC_AT(&c->proc_list, struct proc_stat *, i);
		p->queue_head_sum = p->queue_first_seq == 0 ? p->queue_first : 0;
		p->queue_tail_sum = p->queue_last_seq == c->nsnap - 1 ? p->queue_last : 0;
	}
}

/* How much of the node's work the profile's views explain (docs/PROFILE.md
 * "explained"): the share of the node's reductions done by the processes the
 * sampler watched (the executing view's coverage). Work in processes it did
 * not see (short-lived ones: a task per request, a process per item; many
 * small ones below its cut) is unattributed, and when that is most of the
 * work the profile says so first, with what to do. */
static json_t *build_explained(json_t *executing_summary, bool executing)
{
	json_t *o = json_object();
	/* with the sampler on, its coverage, even with no process seen
	 * executing (all the work in processes too short-lived to be picked) */
	double sampler_on = gi_json_num(executing_summary, "snapshots");
	double share = executing || (isfinite(sampler_on) && sampler_on > 0)
	                   ? gi_json_num(executing_summary, "coverage")
	                   : NAN;
	json_object_set_new(o, "share", fuse_json_num(share));
	json_object_set_new(o, "basis", json_string(isfinite(share) ? "executing" : "none"));
	json_object_set_new(o, "low_below", json_real(FUSE_EXPLAINED_LOW));
	bool low = !isfinite(share) || share < FUSE_EXPLAINED_LOW;
	json_object_set_new(o, "low", json_boolean(low));
	char note[512];
	if (!isfinite(share))
		snprintf(note, sizeof(note),
		         "where the node's work ran is not known: the sampler was off or the node "
		         "did no work; hot modules are by process ownership");
	else if (low)
		snprintf(note, sizeof(note),
		         "the views explain only %.0f%% of the node's work: the rest ran in "
		         "processes the sampler did not see (short-lived ones, such as a task per "
		         "request, or many small ones); to attribute it, count the calls of the "
		         "project modules that do it (--trace MODULE counts them in every "
		         "process), or, for many small long-lived processes, sample more of them "
		         "(sample_processes, up to 50)",
		         100 * share);
	else
		snprintf(note, sizeof(note), "the views explain %.0f%% of the node's work",
		         100 * share);
	json_object_set_new(o, "note", json_string(note));
	return o;
}

int fuse_builder_finish(struct fuse_builder *b, json_t *finalize, struct kg_db *graph,
                        json_t **profile_out)
{
	*profile_out = NULL;
	if (finalize && !json_is_object(finalize))
		return GI_EINVAL;
	struct ctx *c = &b->c;
	c->graph = graph;
	/* The joins read the typed graph (graph.h), never query JSON; without
	 * one every graph field is unknown. */
	if (graph && kg_db_graph(graph, &c->g) != 0)
		c->g = NULL;
	if (c->total_snapshots == 0)
		mailbox_quarters_from_ends(c);
	json_t *p = json_object();
	json_object_set_new(p, "version", json_integer(1));
	json_object_set_new(p, "session", fuse_section_session(c, finalize));
	json_object_set_new(p, "metrics", fuse_section_metrics(c));
	json_object_set_new(p, "series", fuse_section_series(c));
	json_object_set_new(json_object_get(p, "series"), "gaps",
	                    fuse_section_series_gaps(c, finalize));
	int top = c->cfg && c->cfg->hot_modules_top > 0 ? c->cfg->hot_modules_top : 15;
	fuse_section_pool_estimates(c);
	json_t *hotspots = fuse_section_hotspots(c);
	fuse_section_recount_operations(c);
	fuse_section_attribute_executing(c);
	bool executing = fuse_executing_has_samples(c->executing);
	json_object_set_new(p, "hot_modules_basis",
	                    json_string(executing ? "executing" : "ownership"));
	json_object_set_new(p, "hot_modules",
	                    executing ? fuse_section_executing_modules(c, top)
	                              : fuse_section_ownership_modules(c, top, true));
	json_object_set_new(p, "hot_functions", fuse_section_hot_functions(c, 20));
	json_object_set_new(p, "ownership_modules", fuse_section_ownership_modules(c, top, false));
	json_t *xs = fuse_executing_summary(c->executing, c->total_reductions,
	                                    c->source_graph ? "graph" : "target");
	fuse_join_blocked_on_database(c, xs);
	json_object_set_new(p, "explained", build_explained(xs, executing));
	json_object_set_new(p, "executing", xs);
	json_object_set_new(p, "trace_hotspots", hotspots);
	json_object_set_new(p, "workload", fuse_section_workload(c, hotspots));
	json_object_set_new(p, "pipeline_overhead", fuse_section_pipeline(c));
	json_object_set_new(p, "call_time", fuse_section_call_time(c));
	json_object_set_new(p, "trace_budget", fuse_section_budget(c));
	json_object_set_new(p, "tracing", fuse_section_tracing(c));
	json_object_set_new(p, "observer", fuse_section_observer(c));
	json_object_set_new(p, "processes", fuse_section_processes(c));
	json_object_set_new(p, "storage", fuse_section_storage(finalize));
	json_t *g = json_object();
	json_object_set_new(g, "attached", json_boolean(graph != NULL));
	json_object_set_new(g, "answered", json_boolean(c->graph_ok));
	json_object_set_new(p, "graph", g);
	json_object_set_new(p, "errors", json_incref(c->errors));
	json_t *recs = NULL;
	int rc = fuse_rules_evaluate(p, &c->thr, &recs);
	if (rc != 0) {
		json_decref(p);
		return rc;
	}
	json_object_set_new(p, "recommendations", recs);
	*profile_out = p;
	return 0;
}

void fuse_builder_free(struct fuse_builder *b)
{
	if (!b)
		return;
	ctx_destroy(&b->c);
	gi_free(b);
}

int fuse_profile_build(json_t *finalize, json_t *snapshots, struct kg_db *graph,
                       const struct fuse_config *cfg, json_t **profile_out)
{
	*profile_out = NULL;
	if ((finalize && !json_is_object(finalize)) || (snapshots && !json_is_array(snapshots)))
		return GI_EINVAL;
	size_t n = snapshots ? json_array_size(snapshots) : 0;
	if (n > FUSE_MAX_SNAPSHOTS)
		return GI_ETOOBIG;
	size_t objects = 0;
	for (size_t i = 0; i < n; i++)
		objects += json_is_object(json_array_get(snapshots, i));
	struct fuse_builder *b = NULL;
	int rc = fuse_builder_new(cfg, (long)objects, &b);
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (json_is_object(json_array_get(snapshots, i)))
			rc = fuse_builder_add(b, json_array_get(snapshots, i));
	if (rc == 0)
		rc = fuse_builder_finish(b, finalize, graph, profile_out);
	fuse_builder_free(b);
	return rc;
}
