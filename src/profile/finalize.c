/*
 * finalize.c - finalising an observation into a stored profile (see
 * finalize.h; docs/API.md and docs/BEAM.md, "Object code for profiles").
 *
 * Invariants: the snapshots are read one row at a time; at most
 * PROFILE_OBSERVED_MODULES_MAX distinct module names are collected; the
 * project is matched on module names alone, before the finalize lock, and
 * only the chosen project's graph is loaded; every store write is made under
 * the write lock (when given); nothing is written outside the data
 * directory.
 */
#include "profile/finalize.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/log.h"
#include "base/modname.h"
#include "fuse/fuse.h"
#include "graph/query.h"
#include "observe/snapshot_view.h"
#include "store/obs_store.h"

#define NODE_NAME_MAX 256
#define MISSING_NAMED 8 /* missing modules a note names before "..." */

/* ---- graph connections ---- */

static int direct_acquire(void *ctx, const char *db_path, struct kg_db **db, void **handle)
{
	(void)ctx;
	int rc = kg_db_open(db_path, false, db);
	*handle = rc ? NULL : *db;
	return rc;
}

static void direct_release(void *ctx, void *handle)
{
	(void)ctx;
	kg_db_close(handle);
}

const struct profile_graphs profile_graphs_direct = {NULL, direct_acquire, direct_release, NULL};

/* A connection lent by a provider, with what gives it back. */
struct graph_conn {
	const struct profile_graphs *graphs;
	struct kg_db *db; /* NULL: none */
	void *handle;
};

static bool file_exists(const char *path)
{
	return path && access(path, F_OK) == 0;
}

static int graph_open(const struct profile_graphs *graphs, const char *db_path,
                      struct graph_conn *out)
{
	out->graphs = graphs;
	out->db = NULL;
	out->handle = NULL;
	if (!file_exists(db_path))
		return GI_ENOENT;
	return graphs->acquire(graphs->ctx, db_path, &out->db, &out->handle);
}

static void graph_close(struct graph_conn *c)
{
	if (c->graphs && c->handle)
		c->graphs->release(c->graphs->ctx, c->handle);
	c->db = NULL;
	c->handle = NULL;
}

static void lock(pthread_mutex_t *m)
{
	if (m)
		pthread_mutex_lock(m);
}

static void unlock(pthread_mutex_t *m)
{
	if (m)
		pthread_mutex_unlock(m);
}

/* ---- the object code cache ---- */

bool profile_file_name_safe(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 255 || s[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < ' ' || s[i] == '/' || s[i] == '\\')
			return false;
	return true;
}

char *profile_node_dir(const char *data_dir, const char *node)
{
	struct gi_buf b;
	gi_buf_init(&b, 0);
	gi_buf_printf(&b, "%s/nodes/", data_dir);
	for (size_t i = 0; i < NODE_NAME_MAX && node[i]; i++) {
		char c = node[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		          (c >= '0' && c <= '9') || c == '@' || c == '-' || c == '_' ||
		          (c == '.' && i > 0);
		if (ok)
			gi_buf_printf(&b, "%c", c);
		else
			gi_buf_printf(&b, "%%%02X", (unsigned char)c);
	}
	return gi_buf_take(&b);
}

/* ---- reading the snapshots ---- */

static void add_module_name(json_t *set, json_t *v)
{
	if (json_is_string(v))
		json_object_set_new(set, json_string_value(v), json_true());
}

/* One pass over the snapshots of an observation, one row at a time, so that
 * a long observation is never in memory at once: collects the modules it
 * saw working (attributed hot processes, traced calls; at most
 * PROFILE_OBSERVED_MODULES_MAX distinct names) for picking the project and
 * graph, and feeds the profile builder, which needs the graph only at
 * finish. */
struct observed {
	json_t *seen;           /* set: module name -> true */
	long count;             /* rows, read before the first snapshot */
	long parsed;            /* snapshots read */
	long objects;           /* of which objects (what the profile builder takes) */
	struct fuse_builder *b; /* NULL until the first snapshot, or on build_rc */
	int build_rc;           /* the builder's first error */
};

/* Adds `name` to the modules seen, up to the cap (the callback of
 * obs_view_modules_each; `ctx` is the struct observed). */
static void observed_module(void *ctx, const char *name)
{
	struct observed *o = ctx;
	if (json_object_size(o->seen) < PROFILE_OBSERVED_MODULES_MAX)
		json_object_set_new(o->seen, name, json_true());
}

static void observed_builder(struct observed *o, long snapshot_count)
{
	if (o->b || o->build_rc)
		return;
	o->build_rc = fuse_builder_new(NULL, snapshot_count, &o->b);
	if (o->build_rc == GI_EINVAL)
		o->build_rc = GI_ETOOBIG; /* the count is past the builder's cap */
}

static int observed_add(void *ctx, json_t *snap)
{
	struct observed *o = ctx;
	o->parsed++;
	if (!json_is_object(snap))
		return 0; /* not counted, not fed: as fuse_profile_build does */
	o->objects++;
	observed_builder(o, o->count);
	/* Past the count: stored after it was read; not part of this profile. */
	if (o->build_rc == 0 && o->objects <= o->count)
		o->build_rc = fuse_builder_add(o->b, snap);
	struct obs_view v;
	if (obs_view_parse(snap, &v) == 0)
		obs_view_modules_each(&v, observed_module, o);
	obs_view_destroy(&v);
	return 0;
}

static int feed_add(void *ctx, json_t *snap)
{
	struct observed *o = ctx;
	if (!json_is_object(snap) || o->build_rc || o->objects >= o->count)
		return 0;
	o->objects++;
	o->build_rc = fuse_builder_add(o->b, snap);
	return 0;
}

/* The pass: o->seen gets the modules, traced ones of `finalize` included, and
 * o->b the snapshots (release both with observed_done). When some row was
 * not a snapshot object the count given to the builder was wrong: a second
 * pass feeds a new builder with the right one, so that the profile is always
 * the one fuse_profile_build gives on the array of the snapshots. */
static int observed_read(struct obs_store *st, const char *session_id, json_t *finalize,
                         struct observed *o)
{
	size_t i;
	json_t *x;
	memset(o, 0, sizeof(*o));
	o->seen = json_object();
	json_t *traced = json_object_get(finalize, "trace_modules");
	json_array_foreach(traced, i, x)
	{
		if (json_is_string(x))
			observed_module(o, json_string_value(x));
	}
	int rc = obs_store_snapshots_each(st, session_id, &o->count, observed_add, o);
	if (rc)
		return rc;
	long objects = o->objects < o->count ? o->objects : o->count;
	if (o->b && objects == o->count) /* the usual case: every row a snapshot */
		return 0;
	fuse_builder_free(o->b);
	o->b = NULL;
	o->build_rc = 0;
	observed_builder(o, objects);
	if (o->build_rc || objects == 0)
		return 0;
	struct observed feed = {.count = objects, .b = o->b};
	rc = obs_store_snapshots_each(st, session_id, NULL, feed_add, &feed);
	o->build_rc = rc ? rc : feed.build_rc;
	return 0;
}

static void observed_done(struct observed *o)
{
	json_decref(o->seen);
	fuse_builder_free(o->b);
}

/* ---- the project and its graph ---- */

int profile_project_match(struct obs_store *st, const struct profile_graphs *graphs, json_t *seen,
                          char **path_out)
{
	*path_out = NULL;
	if (!graphs)
		graphs = &profile_graphs_direct;
	json_t *projects = NULL;
	int rc = obs_store_projects_list(st, &projects);
	if (rc)
		return rc;
	size_t best = 0, i;
	json_t *p;
	json_array_foreach(projects, i, p)
	{
		const char *root = json_string_value(json_object_get(p, "path"));
		char *db_path = root ? kg_db_default_path(root) : NULL;
		struct graph_conn conn;
		size_t hits = 0;
		if (db_path && graph_open(graphs, db_path, &conn) == 0) {
			if (kg_db_defined_count(conn.db, seen, &hits) != 0)
				hits = 0;
			graph_close(&conn);
		}
		if (hits > best) {
			best = hits;
			gi_free(*path_out);
			*path_out = gi_strdup(root);
		}
		gi_free(db_path);
	}
	json_decref(projects);
	return 0;
}

/* The canonical path of the project a finalize names, or NULL with a
 * warning appended (the profile is then built without that project). */
static char *project_given(const char *given, json_t *warnings)
{
	char *real = NULL;
	if (!given[0] || gi_fs_realdir(given, &real) != 0) {
		json_array_append_new(warnings,
		                      json_sprintf("path %.512s is not a directory", given));
		return NULL;
	}
	if (access(real, R_OK | X_OK) != 0) {
		json_array_append_new(warnings,
		                      json_sprintf("directory %.512s is not readable", real));
		gi_free(real);
		return NULL;
	}
	return real;
}

/* The modules of `seen` (a set) that `db` (may be NULL) does not define. */
static json_t *modules_missing(struct kg_db *db, json_t *seen)
{
	json_t *have = json_object(), *mods = NULL, *out = json_array(), *v;
	size_t i;
	const char *key;
	if (db && kg_project_modules(db, &mods) == 0)
		json_array_foreach(mods, i, v)
		{
			add_module_name(have, v);
		}
	json_object_foreach(seen, key, v)
	{
		if (!json_object_get(have, key))
			json_array_append_new(out, json_string(key));
	}
	json_decref(mods);
	json_decref(have);
	return out;
}

/* Whether DIR/ebin holds the object code of any module in `names`. */
static bool object_code_cached(const char *dir, json_t *names)
{
	size_t i;
	json_t *v;
	json_array_foreach(names, i, v)
	{
		char atom[512], path[4096];
		if (gi_module_atom_name(json_string_value(v), atom, sizeof(atom)) != 0 ||
		    !profile_file_name_safe(atom))
			continue;
		int n = snprintf(path, sizeof(path), "%s/ebin/%s.beam", dir, atom);
		if (n > 0 && (size_t)n < sizeof(path) && file_exists(path))
			return true;
	}
	return false;
}

/* Indexes DIR/index.db from the project's source (or an empty tree) plus the
 * object code in DIR/ebin, and swaps *graph for a connection to it. */
static int index_with_object_code(const struct profile_graphs *graphs, const char *dir,
                                  const char *project, struct graph_conn *graph)
{
	struct gi_buf ebin, root, db;
	gi_buf_init(&ebin, 0);
	gi_buf_init(&root, 0);
	gi_buf_init(&db, 0);
	gi_buf_printf(&ebin, "%s/ebin", dir);
	gi_buf_printf(&db, "%s/index.db", dir);
	if (project)
		gi_buf_printf(&root, "%s", project);
	else
		gi_buf_printf(&root, "%s/nosrc", dir); /* an empty source tree */
	const char *dirs[] = {gi_buf_str(&ebin), NULL};
	struct kg_index_options opt = {.beam_dirs = dirs};
	json_t *summary = NULL;
	struct graph_conn ng = {0};
	int rc = project ? 0 : gi_fs_mkdir_p(gi_buf_str(&root));
	if (rc == 0) {
		rc = kg_index_project(gi_buf_str(&root), gi_buf_str(&db), &opt, &summary);
		if (graphs->invalidate)
			graphs->invalidate(graphs->ctx, gi_buf_str(&db));
	}
	if (rc == 0)
		rc = graph_open(graphs, gi_buf_str(&db), &ng);
	if (rc == 0) {
		graph_close(graph);
		*graph = ng;
	}
	json_decref(summary);
	gi_buf_destroy(&ebin);
	gi_buf_destroy(&root);
	gi_buf_destroy(&db);
	return rc;
}

/* When observed modules are missing from *graph (the project's, or none),
 * indexes DATA/nodes/NODE/index.db from the project's source (if any) plus
 * the node's cached object code and swaps *graph for it. Appends a note to
 * `notes` for observed modules that still have no topology. */
static void graph_with_object_code(const struct profile_env *env, json_t *fin, json_t *seen,
                                   const char *project, struct graph_conn *graph, json_t *notes)
{
	json_t *missing = modules_missing(graph->db, seen);
	const char *node = json_string_value(json_object_get(fin, "node"));
	char *dir = profile_node_dir(env->data_dir, node);
	const char *index_error = NULL;
	char rc_text[256];
	if (json_array_size(missing) > 0 && object_code_cached(dir, missing)) {
		int rc = index_with_object_code(env->graphs, dir, project, graph);
		if (rc == 0) {
			json_decref(missing);
			missing = modules_missing(graph->db, seen);
		} else {
			snprintf(rc_text, sizeof(rc_text),
			         "indexing the node's object code failed: %s", gi_strerror(rc));
			index_error = rc_text;
			gi_log_warn("finalize", "%s", rc_text);
		}
	}
	size_t n = json_array_size(missing);
	if (n > 0) {
		json_t *oc = json_object_get(fin, "object_code");
		const char *why = index_error;
		char pulled[600];
		if (!why && json_is_string(json_object_get(oc, "error"))) {
			snprintf(pulled, sizeof(pulled), "object code not pulled: %.500s",
			         json_string_value(json_object_get(oc, "error")));
			why = pulled;
		}
		if (!why)
			why = json_is_object(oc)
			          ? "the node has no object code for them"
			          : "no source in the project and no object code was "
			            "received from the monitor";
		struct gi_buf b;
		gi_buf_init(&b, 0);
		gi_buf_printf(&b, "no topology for %zu observed module(s) (", n);
		for (size_t i = 0; i < n && i < MISSING_NAMED; i++)
			gi_buf_printf(&b, "%s%s", i ? ", " : "",
			              json_string_value(json_array_get(missing, i)));
		gi_buf_printf(&b, "%s): %s", n > MISSING_NAMED ? ", ..." : "", why);
		json_array_append_new(notes, json_string(gi_buf_str(&b)));
		gi_buf_destroy(&b);
	}
	gi_free(dir);
	json_decref(missing);
}

/* ---- finalize ---- */

/* *out: the answer to a retry when `session_id` already has a profile, else
 * NULL. */
static int already_finalised(struct obs_store *st, const char *session_id, json_t **out)
{
	json_t *obs = NULL;
	*out = NULL;
	int rc = obs_store_observation_get(st, session_id, &obs);
	if (rc == GI_ENOTFOUND)
		return 0;
	if (rc == 0 && json_is_integer(json_object_get(obs, "profile_id")))
		*out = json_pack("{s:s, s:s?, s:O, s:O, s:b}", "session_id", session_id, "status",
		                 json_string_value(json_object_get(obs, "status")), "snapshots",
		                 json_object_get(obs, "snapshots"), "profile_id",
		                 json_object_get(obs, "profile_id"), "duplicate", 1);
	json_decref(obs);
	return rc;
}

/* Builds the profile with `graph` (may be NULL) and stores it; what goes
 * wrong becomes a warning. Returns the profile's id, 0 when none. */
static long long profile_store(const struct profile_env *env, struct observed *seen, json_t *fin,
                               struct kg_db *graph, const char *project, json_t *notes,
                               json_t *warnings)
{
	const char *session_id = json_string_value(json_object_get(fin, "session_id"));
	const char *node = json_string_value(json_object_get(fin, "node"));
	json_t *profile = NULL;
	long long profile_id = 0;
	int rc = seen->build_rc;
	if (rc == 0)
		rc = fuse_builder_finish(seen->b, fin, graph, &profile);
	if (rc) {
		json_array_append_new(warnings,
		                      json_sprintf("profile not built: %s", gi_strerror(rc)));
		return 0;
	}
	json_t *errors = json_object_get(profile, "errors");
	if (!json_is_array(errors)) {
		errors = json_array();
		json_object_set_new(profile, "errors", errors);
	}
	json_array_extend(errors, notes);
	json_array_extend(warnings, notes);
	if (json_object_get(fin, "object_code"))
		json_object_set(profile, "object_code", json_object_get(fin, "object_code"));
	lock(env->write_lock);
	rc = obs_store_profile_add(env->store, session_id, node, project, profile, &profile_id);
	unlock(env->write_lock);
	if (rc) {
		json_array_append_new(warnings,
		                      json_sprintf("profile not stored: %s", gi_strerror(rc)));
		profile_id = 0;
	}
	json_decref(profile);
	return profile_id;
}

/* Merges the monitor's record of lost connections (`reconnects` of the
 * finalize: [{after_seq, before_seq, from_ms, to_ms, missing}]) into `gaps`
 * (sorted by after_seq): a gap the store found after the same snapshot gets
 * the cause "reconnect"; one too short for the store to see (under two
 * intervals) is added. Returns the snapshots missing that were added. */
static long long reconnect_gaps(json_t *gaps, json_t *reconnects)
{
	long long added = 0;
	size_t i;
	json_t *r;
	json_array_foreach(reconnects, i, r)
	{
		json_int_t after = json_integer_value(json_object_get(r, "after_seq"));
		json_int_t lost = json_integer_value(json_object_get(r, "missing"));
		size_t at = 0, j;
		json_t *g, *same = NULL;
		json_array_foreach(gaps, j, g)
		{
			json_int_t ga = json_integer_value(json_object_get(g, "after_seq"));
			if (ga == after)
				same = g;
			if (ga <= after)
				at = j + 1;
		}
		if (same) {
			json_object_set_new(same, "cause", json_string("reconnect"));
		} else if (lost > 0) {
			json_t *add = json_pack(
			    "{s:I, s:O, s:O, s:O, s:I, s:s}", "after_seq", after, "before_seq",
			    json_object_get(r, "before_seq"), "from_ms",
			    json_object_get(r, "from_ms"), "to_ms", json_object_get(r, "to_ms"),
			    "missing", lost, "cause", "reconnect");
			if (add) {
				json_array_insert_new(gaps, at, add);
				added += lost;
			}
		}
	}
	return added;
}

/* Adds to `fin` (the finalize copy) the gaps in what arrived: sequence
 * holes, pauses and losses after the last snapshot (docs/API.md "What is
 * kept, marked and refused"). Without them (a store error) the profile is
 * built without gaps; the snapshot read fails the same way. */
static void finalize_gaps(struct obs_store *st, json_t *fin)
{
	const char *sid = json_string_value(json_object_get(fin, "session_id"));
	json_t *interval = json_object_get(fin, "interval_ms"), *obs = NULL;
	long long interval_ms = json_is_integer(interval) ? json_integer_value(interval) : 0;
	if (interval_ms <= 0 && obs_store_observation_get(st, sid, &obs) == 0)
		interval_ms = json_integer_value(json_object_get(obs, "interval_ms"));
	json_decref(obs);
	json_t *next = json_object_get(fin, "next_seq");
	json_t *gaps = NULL;
	long long missing = 0;
	if (obs_store_gaps(st, sid, interval_ms,
	                   json_is_integer(next) ? json_integer_value(next) : 0, &gaps,
	                   &missing) != 0)
		return;
	missing += reconnect_gaps(gaps, json_object_get(fin, "reconnects"));
	json_object_set_new(fin, "gaps", gaps);
	json_object_set_new(fin, "snapshots_missing", json_integer(missing));
}

int profile_finalize(const struct profile_env *env_in, json_t *finalize, json_t **result,
                     const char **step)
{
	struct profile_env env = *env_in;
	if (!env.graphs)
		env.graphs = &profile_graphs_direct;
	const char *session_id = json_string_value(json_object_get(finalize, "session_id"));
	const char *status = json_string_value(json_object_get(finalize, "status"));
	const char *given = json_string_value(json_object_get(finalize, "project"));
	json_t *fin = NULL, *warnings = json_array(), *notes = json_array();
	struct observed seen = {0};
	struct graph_conn graph = {0};
	char *project = NULL, *db_path = NULL;
	bool locked = false;
	int rc;
	*result = NULL;
	*step = "finalizing";
	if (!session_id || !status || !json_is_string(json_object_get(finalize, "node")) ||
	    !env.data_dir || !env.store) {
		rc = GI_EINVAL;
		goto out;
	}
	/* A retry is answered before any work; checked again under the lock. */
	*step = "reading the observation";
	rc = already_finalised(env.store, session_id, result);
	if (rc || *result)
		goto out;
	*step = "reading the snapshots";
	rc = observed_read(env.store, session_id, finalize, &seen);
	if (rc)
		goto out;
	if (given)
		project = project_given(given, warnings);
	else if (profile_project_match(env.store, env.graphs, seen.seen, &project) != 0)
		project = NULL;

	lock(env.finalize_lock);
	locked = true;
	*step = "reading the observation";
	rc = already_finalised(env.store, session_id, result);
	if (rc || *result)
		goto out;
	if (project) {
		db_path = kg_db_default_path(project);
		if (!db_path || graph_open(env.graphs, db_path, &graph) != 0)
			json_array_append_new(
			    warnings,
			    json_sprintf("project %s is not indexed; profile built without "
			                 "the knowledge graph",
			                 project));
	}
	/* The observation and the profile record the project actually used. */
	fin = json_deep_copy(finalize);
	json_object_set_new(fin, "project", project ? json_string(project) : json_null());
	finalize_gaps(env.store, fin);
	graph_with_object_code(&env, fin, seen.seen, project, &graph, notes);
	*step = "recording the end of the observation";
	lock(env.write_lock);
	rc = obs_store_finalize(env.store, fin);
	unlock(env.write_lock);
	if (rc)
		goto out;
	long long profile_id = profile_store(&env, &seen, fin, graph.db, project, notes, warnings);
	*result = json_pack("{s:s, s:s, s:I, s:s?}", "session_id", session_id, "status", status,
	                    "snapshots", (json_int_t)seen.parsed, "project", project);
	json_object_set_new(*result, "profile_id",
	                    profile_id > 0 ? json_integer(profile_id) : json_null());
	json_object_set(*result, "warnings", warnings);
out:
	graph_close(&graph);
	if (locked)
		unlock(env.finalize_lock);
	json_decref(fin);
	json_decref(warnings);
	json_decref(notes);
	observed_done(&seen);
	gi_free(project);
	gi_free(db_path);
	return rc;
}
