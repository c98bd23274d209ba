/*
 * worker_routes.c - the worker daemon's HTTP routes (docs/API.md): health,
 * scans and every static query of the registry (graph/query_list.h), the
 * ingest of snapshots, object code and finalize from the monitors, their
 * liveness word, observations, profiles and comparisons, /metrics, /mcp
 * and the dashboard. The state they borrow (pooled connections, locks,
 * what the monitors said) is worker.c's, through worker_int.h.
 */
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api/base64.h"
#include "api/dash.h"
#include "api/http.h"
#include "api/metrics.h"
#include "api/worker_int.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/log.h"
#include "base/map.h"
#include "base/str.h"
#include "fuse/fuse.h"
#include "graph/query.h"
#include "graph/query_registry.h"
#include "mcp/mcp.h"
#include "profile/finalize.h"
#include "profile/latest.h"
#include "source/facts.h"
#include "store/obs_store.h"

/* ---- helpers ---- */

/* Canonicalises a project path and checks it is a readable directory.
 * *out: caller frees. Fills *err on failure. */
static int project_canonical(const char *path, char **out, json_t **err, int *status)
{
	*out = NULL;
	if (!path || !path[0] || strlen(path) > API_PATH_PARAM_MAX) {
		*err = api_error(status, 400, "path must be a non-empty directory path");
		return GI_EINVAL;
	}
	char *real = NULL;
	if (gi_fs_realdir(path, &real) != 0) {
		*err = api_error(status, 400, "path %.512s is not a directory", path);
		return GI_EINVAL;
	}
	if (access(real, R_OK | X_OK) != 0) {
		*err = api_error(status, 403, "directory %.512s is not readable", real);
		gi_free(real);
		return GI_EDENIED;
	}
	*out = real;
	return 0;
}

static bool file_exists(const char *path)
{
	return path && access(path, F_OK) == 0;
}

/* Resolves a project path (or the latest indexed project when NULL) to the
 * project's index database path. */
static int project_db_for_path(struct api_worker *w, const char *path, char **db_path_out,
                               json_t **err, int *status)
{
	*db_path_out = NULL;
	char *canon = NULL;
	if (!path) {
		struct obs_store *st;
		json_t *projects = NULL;
		int rc = worker_store_acquire(w, &st);
		if (rc == 0) {
			rc = obs_store_projects_list(st, &projects);
			worker_store_release(w, st);
		}
		if (rc) {
			*err = api_error_code(status, rc, "reading projects");
			return rc;
		}
		json_t *first = json_array_get(projects, 0);
		if (!first) {
			json_decref(projects);
			*err = api_error(status, 400,
			                 "missing path parameter and no project indexed yet; "
			                 "POST /api/index/scan first");
			return GI_EINVAL;
		}
		path = json_string_value(json_object_get(first, "path"));
		int prc = project_canonical(path, &canon, err, status);
		json_decref(projects);
		if (prc)
			return prc;
	} else if (project_canonical(path, &canon, err, status) != 0) {
		return GI_EINVAL;
	}
	char *db_path = kg_db_default_path(canon);
	if (!db_path) {
		*err = api_error(status, 501, "the static engine is not available in this build");
		gi_free(canon);
		return GI_EUNSUPPORTED;
	}
	if (!file_exists(db_path)) {
		*err =
		    api_error(status, 404,
		              "project %.512s is not indexed; POST /api/index/scan first", canon);
		gi_free(canon);
		gi_free(db_path);
		return GI_ENOTFOUND;
	}
	gi_free(canon);
	*db_path_out = db_path;
	return 0;
}

/* Resolves the `path` query parameter (or the latest indexed project when
 * absent) to the project's index database path. */
static int project_db_for_request(struct api_worker *w, const struct api_request *req,
                                  char **db_path_out, json_t **err, int *status)
{
	*db_path_out = NULL;
	bool invalid = false;
	const char *path = api_request_query(req, "path", &invalid);
	if (invalid) {
		*err = api_error(status, 400, "path is too long or not valid UTF-8");
		return GI_EINVAL;
	}
	return project_db_for_path(w, path, db_path_out, err, status);
}

static int query_int(const struct api_request *req, const char *name, int64_t max, int *out,
                     json_t **err, int *status)
{
	bool invalid = false;
	const char *v = api_request_query(req, name, &invalid);
	int64_t x;
	if (invalid || (v && gi_parse_int64(v, 0, max, &x) != 0)) {
		*err = api_error(status, 400, "%s must be an integer between 0 and %lld", name,
		                 (long long)max);
		return GI_EINVAL;
	}
	if (v)
		*out = (int)x;
	return 0;
}

/* ---- routes: health and static queries ---- */

static json_t *route_health(void *ctx, const struct api_request *req, int *status)
{
	(void)req;
	(void)status;
	struct api_worker *w = ctx;
	return json_pack("{s:s, s:s, s:I, s:s}", "status", "ok", "role", "worker", "uptime_ms",
	                 (json_int_t)(gi_clock_mono_ms() - w->started_ms), "instance", w->instance);
}

static json_t *route_scan(void *ctx, const struct api_request *req, int *status)
{
	struct api_worker *w = ctx;
	json_t *err = NULL;
	const char *path;
	if (api_body_string(req, "path", true, &path, &err, status))
		return err;
	json_t *force = json_object_get(req->body, "force");
	if (force && !json_is_boolean(force))
		return api_error(status, 400, "field \"force\" must be a boolean");
	char *canon;
	if (project_canonical(path, &canon, &err, status))
		return err;

	pthread_mutex_lock(&w->lock);
	bool busy = gi_map_get(&w->scanning, canon) != NULL;
	if (!busy)
		gi_map_put(&w->scanning, canon, (void *)1);
	pthread_mutex_unlock(&w->lock);
	if (busy) {
		json_t *e = api_error(status, 409, "a scan of %.512s is already running", canon);
		gi_free(canon);
		return e;
	}
	struct kg_index_options opt = {.force = force && json_is_true(force)};
	json_t *summary = NULL;
	int rc = kg_index_project(canon, NULL, &opt, &summary);
	worker_kg_pool_invalidate(w);
	pthread_mutex_lock(&w->lock);
	gi_map_put(&w->scanning, canon, NULL);
	pthread_mutex_unlock(&w->lock);

	json_t *resp;
	if (rc) {
		resp = api_error_code(status, rc, "indexing failed");
	} else {
		struct obs_store *st;
		int src = worker_store_acquire(w, &st);
		if (src == 0) {
			pthread_mutex_lock(&w->write_lock);
			src = obs_store_project_put(st, canon, summary);
			pthread_mutex_unlock(&w->write_lock);
			worker_store_release(w, st);
		}
		if (src)
			gi_log_warn("worker", "could not record project %s: %s", canon,
			            gi_strerror(src));
		resp = json_pack("{s:s, s:O}", "path", canon, "summary", summary);
	}
	json_decref(summary);
	gi_free(canon);
	return resp;
}

/* One parameter of a query from the query string: kg_query's fields checked
 * here (integers 0..max, 0 or absent meaning the query's default; booleans
 * true/false/1/0; strings among their choices), named arguments passed as
 * strings (the query parses and checks them). NULL, or the 400 to answer. */
static json_t *query_param(const struct api_request *req, const struct kg_param *q,
                           struct kg_query_params *p, json_t *args, int *status)
{
	json_t *err = NULL;
	bool invalid = false;
	const char *v = api_request_query(req, q->name, &invalid);
	if (invalid)
		return api_error(status, 400, "a query parameter is too long or not valid UTF-8");
	if (q->field == KG_FIELD_DEPTH || q->field == KG_FIELD_TOP) {
		query_int(req, q->name, q->max, q->field == KG_FIELD_DEPTH ? &p->depth : &p->top,
		          &err, status);
		return err;
	}
	if (!v)
		return NULL;
	if (q->field == KG_FIELD_EXTERNAL || q->field == KG_FIELD_DIRECT) {
		bool yes = strcmp(v, "true") == 0 || strcmp(v, "1") == 0;
		if (!yes && strcmp(v, "false") != 0 && strcmp(v, "0") != 0)
			return api_error(status, 400, "%s must be true or false", q->name);
		*(q->field == KG_FIELD_EXTERNAL ? &p->include_external : &p->direct_only) = yes;
		return NULL;
	}
	if (q->field != KG_FIELD_ARGS && !kg_query_param_choice_ok(q, v))
		return api_error(status, 400, "%s must be one of %s", q->name, q->choices);
	switch (q->field) {
	case KG_FIELD_MODULE:
		p->module = v;
		break;
	case KG_FIELD_FUNCTION:
		p->function = v;
		break;
	case KG_FIELD_FROM:
		p->from = v;
		break;
	case KG_FIELD_TO:
		p->to = v;
		break;
	case KG_FIELD_LABEL:
		p->label = v;
		break;
	default:
		json_object_set_new(args, q->name, json_string(v));
	}
	return NULL;
}

/* The latest stored profile of the project `db` indexes, or NULL (the
 * queries say "no profile"); a store error is logged, not fatal. */
static json_t *assist_profile(struct api_worker *w, struct kg_db *db)
{
	char *root = NULL;
	json_t *profile = NULL;
	struct obs_store *st;
	if (kg_db_root(db, &root) == 0 && worker_store_acquire(w, &st) == 0) {
		int rc = profile_latest_for_project(st, root, &profile);
		worker_store_release(w, st);
		if (rc)
			gi_log_warn("worker", "no live weight: reading profiles: %s",
			            gi_strerror(rc));
	}
	gi_free(root);
	return profile;
}

/* Review's live weight: the store's latest profile as its argument
 * "profile" (the query uses it when it is of this project), or why there is
 * none in "profile_note". */
static void store_profile_arg(struct api_worker *w, json_t *args)
{
	json_t *profile = NULL;
	struct obs_store *st;
	int rc = worker_store_acquire(w, &st);
	if (rc == 0) {
		rc = obs_store_profile_get(st, 0, &profile);
		worker_store_release(w, st);
	}
	if (profile)
		json_object_set_new(args, "profile", profile);
	else
		json_object_set_new(args, "profile_note",
		                    json_string(rc == GI_ENOTFOUND
		                                    ? "no profile stored yet"
		                                    : "the profiles could not be read"));
}

/* kg_query(def) with `p` and its named arguments `args` (borrowed) on the
 * index at `db_path`, given the profile the registry says it takes. A bad
 * argument is a 400 with the query's reason, a program the query runs that
 * failed (review's git) a 422, an unknown module a 404. */
static json_t *query_run(struct api_worker *w, const char *db_path, const struct kg_query_def *def,
                         struct kg_query_params *p, json_t *args, int *status)
{
	struct kg_pooled conn = {0};
	json_t *out = NULL, *profile = NULL, *err = NULL;
	if (def->profile == KG_PROFILE_STORE)
		store_profile_arg(w, args);
	p->args = args;
	int rc = worker_kg_acquire(w, db_path, &conn);
	if (rc == 0) {
		if (def->profile == KG_PROFILE_PROJECT)
			profile = assist_profile(w, conn.db);
		p->profile = profile;
		rc = kg_query(conn.db, def->name, p, &out);
		const char *why = kg_query_error_message();
		if (rc == GI_EINVAL || (rc == GI_EIO && why))
			err = api_error(status, rc == GI_EINVAL ? 400 : 422, "%s: %s", def->name,
			                why ? why : "invalid or missing parameters");
		else if (rc == GI_ENOTFOUND && why)
			err = api_error(status, 404, "%s: %s", def->name, why);
		worker_kg_release(w, &conn);
	}
	json_decref(profile);
	if (err)
		return err;
	if (rc == GI_ENOTFOUND)
		return api_error(status, 404, "%s: not found (module %.256s)", def->name,
		                 p->module ? p->module : "-");
	if (rc)
		return api_error_code(status, rc, def->name);
	return out;
}

/* Every GET route of the registry (graph/query_list.h): kg_query of its
 * query with the query string's parameters, on the project of `path=`. */
static json_t *route_query(void *ctx, const struct api_request *req, int *status)
{
	struct api_worker *w = ctx;
	const struct kg_query_def *def = kg_query_def_by_route("GET", req->path);
	if (!def)
		return api_error(status, 404, "no query at %.256s", req->path);
	struct kg_query_params p;
	memset(&p, 0, sizeof(p));
	json_t *args = json_object(), *err = NULL;
	for (const struct kg_param *q = def->params; q->name && !err; q++)
		err = query_param(req, q, &p, args, status);
	char *db_path = NULL;
	if (!err)
		project_db_for_request(w, req, &db_path, &err, status);
	json_t *out = err ? err : query_run(w, db_path, def, &p, args, status);
	gi_free(db_path);
	json_decref(args);
	return out;
}

/* Every POST route of the registry (POST /api/plan/validate {path?, plan,
 * boundaries?, depth?}, POST /api/check {path?, boundaries?}): the body's
 * documents as the query's arguments (docs/ASSIST.md). */
static json_t *route_query_post(void *ctx, const struct api_request *req, int *status)
{
	struct api_worker *w = ctx;
	const struct kg_query_def *def = kg_query_def_by_route("POST", req->path);
	json_t *err = NULL;
	if (!def)
		return api_error(status, 404, "no query at %.256s", req->path);
	if (!json_is_object(req->body))
		return api_error(status, 400, "the body must be a JSON object");
	const json_t *path = json_object_get(req->body, "path");
	if (path && !json_is_string(path))
		return api_error(status, 400, "field \"path\" must be a string");
	const json_t *depth = json_object_get(req->body, "depth");
	if (depth && (!json_is_integer(depth) || json_integer_value(depth) < 1 ||
	              json_integer_value(depth) > 1000))
		return api_error(status, 400, "field \"depth\" must be an integer from 1 to 1000");
	struct kg_query_params p;
	memset(&p, 0, sizeof(p));
	p.depth = depth ? (int)json_integer_value(depth) : 0;
	char *db_path = NULL;
	if (project_db_for_path(w, json_string_value(path), &db_path, &err, status))
		return err;
	json_t *out = query_run(w, db_path, def, &p, req->body, status);
	gi_free(db_path);
	return out;
}

/* A store call that lists at most `limit` rows (the store's own cap when
 * it takes none) into *out (the caller's). */
typedef int (*store_list_fn)(struct obs_store *st, int limit, json_t **out);

/* {key: list} of `list_fn` with `limit`, the store acquired around it; a
 * store error is answered as `what` (the doing that failed). */
static json_t *store_list_answer(struct api_worker *w, int *status, store_list_fn list_fn,
                                 int limit, const char *key, const char *what)
{
	json_t *list = NULL;
	struct obs_store *st;
	int rc = worker_store_acquire(w, &st);
	if (rc == 0) {
		rc = list_fn(st, limit, &list);
		worker_store_release(w, st);
	}
	if (rc)
		return api_error_code(status, rc, what);
	return json_pack("{s:o}", key, list);
}

/* A list route with ?limit (100 unless given, at most LIST_LIMIT_MAX). */
static json_t *store_list_route(struct api_worker *w, const struct api_request *req, int *status,
                                store_list_fn list_fn, const char *key, const char *what)
{
	json_t *err = NULL;
	int limit = 100;
	if (query_int(req, "limit", LIST_LIMIT_MAX, &limit, &err, status))
		return err;
	return store_list_answer(w, status, list_fn, limit, key, what);
}

/* The store lists every project: it takes no limit. */
static int projects_list(struct obs_store *st, int limit, json_t **out)
{
	(void)limit;
	return obs_store_projects_list(st, out);
}

static json_t *route_projects(void *ctx, const struct api_request *req, int *status)
{
	(void)req;
	return store_list_answer(ctx, status, projects_list, 0, "projects", "reading projects");
}

/* ---- routes: observations ---- */

static bool session_id_valid(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > SESSION_ID_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_' || c == '.' || c == ':'))
			return false;
	}
	return true;
}

/* GI_EEXIST (and *other_out, caller frees) when session `sid` is already
 * stored for a node other than `node`; 0 when it is new or the same node. */
static int session_node_check(struct obs_store *st, const char *sid, const char *node,
                              char **other_out)
{
	json_t *o = NULL;
	int rc = obs_store_observation_get(st, sid, &o);
	if (rc == GI_ENOTFOUND)
		return 0;
	if (rc)
		return rc;
	const char *stored = json_string_value(json_object_get(o, "node"));
	if (stored && strcmp(stored, node) != 0) {
		*other_out = gi_strdup(stored);
		rc = GI_EEXIST;
	}
	json_decref(o);
	return rc;
}

static json_t *route_ingest(void *ctx, const struct api_request *req, int *status)
{
	struct api_worker *w = ctx;
	json_t *err = NULL;
	const char *session_id, *node;
	long long seq = -1;
	if (api_body_string(req, "session_id", true, &session_id, &err, status) ||
	    api_body_string(req, "node", true, &node, &err, status) ||
	    api_body_int(req, "seq", true, 0, 1LL << 53, &seq, &err, status))
		return err;
	if (!session_id_valid(session_id))
		return api_error(status, 400,
		                 "session_id must be 1-128 characters of [A-Za-z0-9._:-]");
	if (!api_node_name_valid(node))
		return api_error(status, 400, "node must be a node name like name@host");
	json_t *ts = json_object_get(req->body, "timestamp_ms");
	if (ts && !json_is_integer(ts) && !json_is_null(ts))
		return api_error(status, 400, "field \"timestamp_ms\" must be an integer");
	/* Its monitor is alive, whether or not the store takes the snapshot. */
	worker_heard_note(w, session_id, seq + 1, 0, 0);

	struct obs_store *st;
	bool duplicate = false;
	char *other_node = NULL;
	int rc = worker_store_acquire(w, &st);
	if (rc == 0) {
		/* SQLite has one writer anyway; PostgreSQL serialises per session
		 * and commits concurrent ingests together (BENCHMARKS.md). */
		bool serialise = strcmp(obs_store_backend(st), "sqlite") == 0;
		if (serialise)
			pthread_mutex_lock(&w->write_lock);
		rc = session_node_check(st, session_id, node, &other_node);
		if (rc == 0)
			rc = obs_store_snapshot_add(st, session_id, node, seq, req->body,
			                            &duplicate);
		if (serialise)
			pthread_mutex_unlock(&w->write_lock);
		worker_store_release(w, st);
	}
	if (rc == GI_EEXIST && other_node) {
		json_t *e =
		    api_error(status, 409,
		              "session %.128s belongs to node %.256s, not %.256s: a session "
		              "observes one node",
		              session_id, other_node, node);
		gi_free(other_node);
		return e;
	}
	if (rc == GI_EEXIST)
		return api_error(status, 409,
		                 "observation %s has ended and its profile is built: a late "
		                 "snapshot (seq %lld) cannot change it",
		                 session_id, seq);
	if (rc)
		return api_error_code(status, rc, "storing the snapshot");
	return json_pack("{s:b, s:s, s:I, s:b}", "ok", 1, "session_id", session_id, "seq",
	                 (json_int_t)seq, "duplicate", duplicate);
}

/* A module or node name usable as one path component (the cache layout is
 * the finalizer's: profile/finalize.h). */
static bool file_name_safe(const char *s)
{
	return profile_file_name_safe(s);
}

/* DATA/nodes/NODE (profile_node_dir). Caller frees. */
static char *node_dir(const struct api_worker *w, const char *node)
{
	return profile_node_dir(w->data_dir, node);
}

/* Writes `len` bytes to `path` unless it already holds exactly them. */
static int file_update(const char *path, const unsigned char *data, size_t len, bool *written)
{
	char *old = NULL;
	size_t old_len = 0;
	*written = false;
	if (gi_fs_read_file(path, OBJECT_CODE_MAX, &old, &old_len) == 0 && old_len == len &&
	    memcmp(old, data, len) == 0) {
		gi_free(old);
		return 0;
	}
	gi_free(old);
	*written = true;
	return gi_fs_write_file(path, data, len);
}

struct module_code {
	const char *name; /* borrowed from the request */
	unsigned char *bytes;
	size_t len;
};

/* Checks and decodes modules[i]; NULL, or why it is refused. */
static const char *module_decode(json_t *m, struct module_code *out)
{
	const char *name = json_string_value(json_object_get(m, "module"));
	json_t *code = json_object_get(m, "code");
	memset(out, 0, sizeof(*out));
	if (!name || !file_name_safe(name) || !json_is_string(code) ||
	    json_string_length(code) > OBJECT_CODE_MAX / 3 * 4)
		return "must be {\"module\": name, \"code\": base64}";
	if (strlen(name) > OBJECT_MODULE_NAME_MAX)
		return "module names longer than 238 bytes cannot be cached as files";
	if (api_base64_decode(json_string_value(code), json_string_length(code), &out->bytes,
	                      &out->len) != 0 ||
	    out->len < 12 || !GI_MEM_IS(out->bytes, 4, "FOR1")) {
		gi_free(out->bytes);
		out->bytes = NULL;
		return "code is not a .beam in base64";
	}
	out->name = name;
	return NULL;
}

/* POST /api/runtime/ingest/object_code {"node", "session_id"?, "modules":
 * [{"module": atom text, "code": base64 of the .beam}]}. Every module is
 * checked first; the good ones are stored and the bad ones listed in
 * `rejected`, so that a bad module never costs its neighbours (400 only when
 * none is good, and then nothing is written). */
static json_t *route_object_code(void *ctx, const struct api_request *req, int *status)
{
	struct api_worker *w = ctx;
	json_t *err = NULL;
	const char *node, *sid;
	if (api_body_string(req, "node", true, &node, &err, status) ||
	    api_body_string(req, "session_id", false, &sid, &err, status))
		return err;
	if (!api_node_name_valid(node))
		return api_error(status, 400, "node must be a node name like name@host");
	json_t *mods = json_object_get(req->body, "modules");
	if (!json_is_array(mods) || json_array_size(mods) > OBJECT_CODE_BATCH)
		return api_error(status, 400, "modules must be an array of at most %d objects",
		                 OBJECT_CODE_BATCH);
	size_t n = json_array_size(mods), good = 0, i;
	struct module_code *codes = gi_calloc(n + 1, sizeof(*codes));
	json_t *rejected = json_array(), *m, *resp = NULL;
	char first_error[300] = "";
	json_array_foreach(mods, i, m)
	{
		const char *why = module_decode(m, &codes[good]);
		if (why) {
			const char *name = json_string_value(json_object_get(m, "module"));
			json_array_append_new(rejected,
			                      json_pack("{s:I, s:s?, s:s}", "index", (json_int_t)i,
			                                "module", name, "error", why));
			if (!first_error[0])
				snprintf(first_error, sizeof(first_error), "modules[%zu]: %s", i,
				         why);
		} else {
			good++;
		}
	}
	char *dir = node_dir(w, node);
	struct gi_buf path;
	gi_buf_init(&path, 0);
	int stored = 0, unchanged = 0, rc = 0;
	if (good == 0 && n > 0) {
		resp = api_error(status, 400, "%s", first_error);
		json_object_set(resp, "rejected", rejected);
		goto out;
	}
	gi_buf_printf(&path, "%s/ebin", dir);
	rc = gi_fs_mkdir_p(gi_buf_str(&path));
	if (rc) {
		resp = api_error_code(status, rc, "creating the object code cache");
		goto out;
	}
	pthread_mutex_lock(&w->finalize_lock); /* a finalize never reads half a batch */
	for (i = 0; i < good; i++) {
		gi_buf_reset(&path);
		gi_buf_printf(&path, "%s/ebin/%s.beam", dir, codes[i].name);
		bool written = false;
		rc = file_update(gi_buf_str(&path), codes[i].bytes, codes[i].len, &written);
		if (rc) {
			/* 5xx: the monitor sends the batch again; what was written is then
			 * unchanged. */
			resp = api_error_code(status, rc, "storing object code");
			break;
		}
		if (written) {
			stored++;
		} else {
			unchanged++;
			utimensat(AT_FDCWD, gi_buf_str(&path), NULL, 0); /* received again: young */
		}
	}
	worker_ebin_cache_evict(w);
	pthread_mutex_unlock(&w->finalize_lock);
	if (!resp)
		resp = json_pack("{s:b, s:s, s:i, s:i, s:O}", "ok", 1, "node", node, "stored",
		                 stored, "unchanged", unchanged, "rejected", rejected);
out:
	for (i = 0; i < good; i++)
		gi_free(codes[i].bytes);
	gi_free(codes);
	json_decref(rejected);
	gi_buf_destroy(&path);
	gi_free(dir);
	return resp;
}

static int validate_finalize(const struct api_request *req, json_t **err, int *status)
{
	const char *s;
	long long v;
	if (api_body_string(req, "session_id", true, &s, err, status))
		return GI_EINVAL;
	if (!session_id_valid(s)) {
		*err = api_error(status, 400,
		                 "session_id must be 1-128 characters of [A-Za-z0-9._:-]");
		return GI_EINVAL;
	}
	if (api_body_string(req, "node", true, &s, err, status))
		return GI_EINVAL;
	if (!api_node_name_valid(s)) {
		*err = api_error(status, 400, "node must be a node name like name@host");
		return GI_EINVAL;
	}
	if (api_body_string(req, "status", true, &s, err, status))
		return GI_EINVAL;
	if (strcmp(s, "complete") != 0 && strcmp(s, "interrupted") != 0) {
		*err = api_error(status, 400, "status must be \"complete\" or \"interrupted\"");
		return GI_EINVAL;
	}
	if (api_body_string(req, "reason", false, &s, err, status) ||
	    api_body_string(req, "project", false, &s, err, status) ||
	    api_body_int(req, "started_ms", false, 0, 1LL << 53, &v, err, status) ||
	    api_body_int(req, "stopped_ms", false, 0, 1LL << 53, &v, err, status) ||
	    api_body_int(req, "interval_ms", false, 0, 1LL << 31, &v, err, status))
		return GI_EINVAL;
	json_t *mods = json_object_get(req->body, "trace_modules");
	if (mods && !json_is_null(mods)) {
		size_t i;
		json_t *m;
		if (!json_is_array(mods) || json_array_size(mods) > 1000) {
			*err = api_error(status, 400, "trace_modules must be an array of strings");
			return GI_EINVAL;
		}
		json_array_foreach(mods, i, m)
		{
			if (!json_is_string(m)) {
				*err = api_error(status, 400,
				                 "trace_modules must be an array of strings");
				return GI_EINVAL;
			}
		}
	}
	return 0;
}

static json_t *route_finalize(void *ctx, const struct api_request *req, int *status)
{
	struct api_worker *w = ctx;
	json_t *err = NULL, *resp = NULL;
	if (validate_finalize(req, &err, status))
		return err;
	struct obs_store *st;
	int rc = worker_store_acquire(w, &st);
	if (rc)
		return api_error_code(status, rc, "opening the store");
	const char *step = NULL;
	rc = worker_finalize(w, st, req->body, &resp, &step);
	worker_store_release(w, st);
	if (rc)
		return api_error_code(status, rc, step);
	worker_heard_forget(w, json_string_value(json_object_get(req->body, "session_id")));
	return resp;
}

/* POST /api/runtime/ingest/alive {"sessions": [{"session_id", "interval_ms"?,
 * "lease_ms"?, "next_seq"?}, ...]}: a monitor's word, every few seconds,
 * that it still runs these sessions (connected or reconnecting within
 * their lease), whether or not their snapshots are stored: the liveness
 * deadline counts from it. Needs no store. Answers {"ok": true, "ended":
 * [session_id, ...]}, the sessions among them that this worker has ended
 * (their monitor should stop them on their nodes). */
static json_t *route_alive(void *ctx, const struct api_request *req, int *status)
{
	struct api_worker *w = ctx;
	json_t *sessions = json_object_get(req->body, "sessions");
	if (!json_is_array(sessions) || json_array_size(sessions) > ALIVE_SESSIONS_MAX)
		return api_error(status, 400, "sessions must be an array of at most %d objects",
		                 ALIVE_SESSIONS_MAX);
	size_t i;
	json_t *e;
	json_array_foreach(sessions, i, e)
	{
		const char *sid = json_string_value(json_object_get(e, "session_id"));
		if (!json_is_object(e) || !sid || !session_id_valid(sid))
			return api_error(
			    status, 400,
			    "sessions[%zu] must be {\"session_id\": 1-128 characters of "
			    "[A-Za-z0-9._:-], ...}",
			    i);
		static const char *const INTS[] = {"interval_ms", "lease_ms", "next_seq"};
		for (size_t k = 0; k < 3; k++) {
			json_t *v = json_object_get(e, INTS[k]);
			if (v && (!json_is_integer(v) || json_integer_value(v) < 0 ||
			          json_integer_value(v) > (1LL << 53)))
				return api_error(status, 400,
				                 "sessions[%zu].%s must be a non-negative integer",
				                 i, INTS[k]);
		}
	}
	json_t *ended = json_array();
	json_array_foreach(sessions, i, e)
	{
		const char *sid = json_string_value(json_object_get(e, "session_id"));
		json_t *next = json_object_get(e, "next_seq");
		if (worker_heard_note(w, sid, json_is_integer(next) ? json_integer_value(next) : -1,
		                      json_integer_value(json_object_get(e, "lease_ms")),
		                      json_integer_value(json_object_get(e, "interval_ms"))))
			json_array_append_new(ended, json_string(sid));
	}
	return json_pack("{s:b, s:o}", "ok", 1, "ended", ended);
}

static json_t *route_observations(void *ctx, const struct api_request *req, int *status)
{
	return store_list_route(ctx, req, status, obs_store_observations_list, "observations",
	                        "listing observations");
}

static json_t *route_observation(void *ctx, const struct api_request *req, int *status)
{
	struct api_worker *w = ctx;
	const char *sid = req->path_param;
	if (!session_id_valid(sid))
		return api_error(status, 400, "bad session id");
	bool invalid = false;
	const char *include = api_request_query(req, "include", &invalid);
	bool with_snaps = include && strcmp(include, "snapshots") == 0;
	json_t *obs = NULL, *snaps = NULL;
	struct obs_store *st;
	int rc = worker_store_acquire(w, &st);
	if (rc == 0) {
		rc = obs_store_observation_get(st, sid, &obs);
		json_t *gaps = NULL;
		long long missing = 0;
		if (rc == 0)
			rc = obs_store_gaps(
			    st, sid, json_integer_value(json_object_get(obs, "interval_ms")),
			    json_integer_value(json_object_get(obs, "next_seq")), &gaps, &missing);
		if (rc == 0) {
			json_object_set_new(obs, "gaps", gaps);
			json_object_set_new(obs, "snapshots_missing", json_integer(missing));
		}
		if (rc == 0 && with_snaps)
			rc = obs_store_snapshots(st, sid, &snaps);
		worker_store_release(w, st);
	}
	if (rc == GI_ENOTFOUND)
		return api_error(status, 404, "no observation %s", sid);
	if (rc) {
		json_decref(obs);
		return api_error_code(status, rc, "reading the observation");
	}
	if (snaps)
		json_object_set_new(obs, "snapshot_data", snaps);
	return obs;
}

static json_t *route_profiles(void *ctx, const struct api_request *req, int *status)
{
	return store_list_route(ctx, req, status, obs_store_profiles_list, "profiles",
	                        "listing profiles");
}

static json_t *profile_by_id(struct api_worker *w, long long id, int *status)
{
	json_t *p = NULL;
	struct obs_store *st;
	int rc = worker_store_acquire(w, &st);
	if (rc == 0) {
		rc = obs_store_profile_get(st, id, &p);
		worker_store_release(w, st);
	}
	if (rc == GI_ENOTFOUND)
		return id > 0 ? api_error(status, 404, "no profile %lld", id)
		              : api_error(status, 404, "no profile yet");
	if (rc)
		return api_error_code(status, rc, "reading the profile");
	return p;
}

static json_t *route_profile_latest(void *ctx, const struct api_request *req, int *status)
{
	(void)req;
	return profile_by_id(ctx, 0, status);
}

static json_t *route_profile(void *ctx, const struct api_request *req, int *status)
{
	int64_t id;
	if (gi_parse_int64(req->path_param, 1, INT64_MAX, &id) != 0)
		return api_error(status, 400, "profile id must be a positive integer");
	return profile_by_id(ctx, id, status);
}

/* Reads the profile id in query parameter `name`: a positive integer or "latest". */
static int compare_side(const struct api_request *req, const char *name, long long *id,
                        json_t **err, int *status)
{
	bool invalid = false;
	const char *value = api_request_query(req, name, &invalid);
	int64_t parsed;
	if (!value || invalid) {
		*err =
		    api_error(status, 400, "missing parameter %s (a profile id or latest)", name);
		return GI_EINVAL;
	}
	if (strcmp(value, "latest") == 0) {
		*id = 0;
		return 0;
	}
	if (gi_parse_int64(value, 1, INT64_MAX, &parsed) != 0) {
		*err = api_error(status, 400, "%s must be a positive profile id or latest", name);
		return GI_EINVAL;
	}
	*id = parsed;
	return 0;
}

/* GET /api/runtime/compare?a=ID&b=ID: what changed from profile a to profile b
 * (fuse_compare; the same object `giulia compare --format json` prints). */
static json_t *route_compare(void *ctx, const struct api_request *req, int *status)
{
	struct api_worker *w = ctx;
	json_t *err = NULL, *a = NULL, *b = NULL, *out = NULL;
	long long id_a, id_b;
	if (compare_side(req, "a", &id_a, &err, status) ||
	    compare_side(req, "b", &id_b, &err, status))
		return err;
	a = profile_by_id(w, id_a, status);
	if (*status != 200)
		return a;
	b = profile_by_id(w, id_b, status);
	if (*status != 200) {
		json_decref(a);
		return b;
	}
	int rc = fuse_compare(json_object_get(a, "profile"), json_object_get(b, "profile"), &out);
	json_decref(a);
	json_decref(b);
	if (rc)
		return api_error_code(status, rc, "comparing the profiles");
	return out;
}

/* GET /metrics (docs/API.md): the worker's own health. */
static void route_metrics(void *ctx, const struct api_request *req, const char *body, size_t len,
                          struct api_raw_response *out)
{
	(void)body;
	(void)len;
	struct api_worker *w = ctx;
	enum api_metrics_format f = api_metrics_negotiate(api_request_header(req, "Accept"));
	struct api_metrics mx;
	api_metrics_init(&mx, f, 0);
	api_metrics_family(&mx, "giulia_worker_uptime_seconds", API_METRICS_GAUGE,
	                   "Seconds since the worker started.");
	api_metrics_sample(&mx, "", NULL, (double)(gi_clock_mono_ms() - w->started_ms) / 1000.0);
	static const char *const ROUTES[] = {"ingest", "finalize", "object_code"};
	static const char *const OUTCOMES[] = {"ok", "refused", "failed"};
	api_metrics_family(&mx, "giulia_worker_ingest_requests", API_METRICS_COUNTER,
	                   "Requests of the ingest routes by route and outcome (ok: 2xx, "
	                   "refused: 4xx, failed: 5xx).");
	for (int r = 0; r < 3; r++)
		for (int o = 0; o < 3; o++) {
			const char *labels[] = {"route", ROUTES[r], "outcome", OUTCOMES[o], NULL};
			api_metrics_sample(
			    &mx, "", labels,
			    (double)__atomic_load_n(&w->ingest_outcomes[r][o], __ATOMIC_RELAXED));
		}
	unsigned long long counts[WORKER_INGEST_BUCKETS + 1];
	for (int b = 0; b <= WORKER_INGEST_BUCKETS; b++)
		counts[b] = __atomic_load_n(&w->ingest_buckets[b], __ATOMIC_RELAXED);
	api_metrics_family(&mx, "giulia_worker_ingest_duration_seconds", API_METRICS_HISTOGRAM,
	                   "Time to store one snapshot (POST /api/runtime/ingest).");
	api_metrics_histogram(&mx, NULL, INGEST_BOUNDS, counts, WORKER_INGEST_BUCKETS,
	                      (double)__atomic_load_n(&w->ingest_us_sum, __ATOMIC_RELAXED) / 1e6);
	char path[4096];
	struct stat st;
	snprintf(path, sizeof(path), "%s/worker.db", w->data_dir);
	api_metrics_family(&mx, "giulia_worker_store_bytes", API_METRICS_GAUGE,
	                   "Size of the worker's SQLite store (worker.db) in bytes.");
	api_metrics_sample(&mx, "", NULL, stat(path, &st) == 0 ? (double)st.st_size : NAN);
	api_metrics_process(&mx);
	out->status = 200;
	out->content_type = api_metrics_content_type(f);
	out->body = api_metrics_finish(&mx, &out->body_len);
	api_metrics_destroy(&mx);
}

static json_t *route_ingest(void *ctx, const struct api_request *req, int *status);
static json_t *route_finalize(void *ctx, const struct api_request *req, int *status);
static json_t *route_object_code(void *ctx, const struct api_request *req, int *status);

/* The ingest routes, counted for /metrics. */
static json_t *counted(int route, json_t *(*fn)(void *, const struct api_request *, int *),
                       void *ctx, const struct api_request *req, int *status)
{
	int64_t t0 = gi_clock_mono_us();
	json_t *r = fn(ctx, req, status);
	worker_count(ctx, route, r ? *status : 500, gi_clock_mono_us() - t0);
	return r;
}

static json_t *route_ingest_counted(void *ctx, const struct api_request *req, int *status)
{
	return counted(COUNT_INGEST, route_ingest, ctx, req, status);
}

static json_t *route_finalize_counted(void *ctx, const struct api_request *req, int *status)
{
	return counted(COUNT_FINALIZE, route_finalize, ctx, req, status);
}

static json_t *route_object_code_counted(void *ctx, const struct api_request *req, int *status)
{
	return counted(COUNT_OBJECT_CODE, route_object_code, ctx, req, status);
}

/* POST /api/runtime/ingest/batch {"items": [snapshot, ...]}: each item is
 * stored exactly as POST /api/runtime/ingest would store it (the same
 * checks, the same idempotence per (session_id, seq), its own transaction)
 * and answered in order with its own outcome, so that the monitor
 * acknowledges only what was stored. One request per batch instead of one
 * per snapshot: the monitor's wake-ups, sends and receives (BENCHMARKS.md
 * "Fleet"). Each item counts in /metrics as one ingest. */
static json_t *route_ingest_batch(void *ctx, const struct api_request *req, int *status)
{
	json_t *items = json_object_get(req->body, "items");
	if (!json_is_array(items))
		return api_error(status, 400, "field \"items\" must be an array of snapshots");
	size_t n = json_array_size(items);
	if (n == 0)
		return api_error(status, 400, "field \"items\" is empty");
	if (n > WORKER_INGEST_BATCH_MAX)
		return api_error(status, 413, "a batch holds at most %d snapshots, not %zu",
		                 WORKER_INGEST_BATCH_MAX, n);
	json_t *results = json_array();
	size_t counts[4] = {0}; /* stored, duplicate, refused, failed */
	static const char *const OUTCOMES[] = {"stored", "duplicate", "refused", "failed"};
	for (size_t i = 0; i < n; i++) {
		json_t *item = json_array_get(items, i);
		json_t *seq = json_object_get(item, "seq");
		json_t *r;
		int st = 200, outcome;
		if (!json_is_object(item)) {
			st = 400;
			r = json_pack("{s:s}", "error", "the item must be a JSON object");
		} else {
			struct api_request one = *req;
			one.body = item;
			int64_t t0 = gi_clock_mono_us();
			r = route_ingest(ctx, &one, &st);
			if (!r) {
				st = 500;
				r = json_pack("{s:s}", "error", "internal error");
			}
			worker_count(ctx, COUNT_INGEST, st, gi_clock_mono_us() - t0);
		}
		if (st >= 200 && st < 300)
			outcome = json_is_true(json_object_get(r, "duplicate")) ? 1 : 0;
		else
			outcome = st >= 500 ? 3 : 2;
		counts[outcome]++;
		json_t *res = json_pack("{s:I, s:s, s:i}", "index", (json_int_t)i, "result",
		                        OUTCOMES[outcome], "status", st);
		if (json_is_integer(seq))
			json_object_set(res, "seq", seq);
		json_t *msg = json_object_get(r, "error");
		if (msg)
			json_object_set(res, "error", msg);
		json_array_append_new(results, res);
		json_decref(r);
	}
	return json_pack("{s:b, s:I, s:I, s:I, s:I, s:o}", "ok", 1, "stored", (json_int_t)counts[0],
	                 "duplicate", (json_int_t)counts[1], "refused", (json_int_t)counts[2],
	                 "failed", (json_int_t)counts[3], "results", results);
}

/* ---- /mcp: the MCP server's Streamable HTTP transport (src/mcp) ---- */

static void route_mcp(void *ctx, const struct api_request *req, const char *body, size_t len,
                      struct api_raw_response *out)
{
	struct api_worker *w = ctx;
	struct mcp_server *mcp = __atomic_load_n(&w->mcp, __ATOMIC_ACQUIRE);
	if (!mcp) {
		out->status = 503;
		return;
	}
	struct mcp_http_request r = {
	    .method = req->method,
	    .origin = api_request_header(req, "Origin"),
	    .accept = api_request_header(req, "Accept"),
	    .protocol_version = api_request_header(req, "MCP-Protocol-Version"),
	    .session_id = api_request_header(req, "Mcp-Session-Id"),
	    .body = body,
	    .body_len = len,
	};
	struct mcp_http_response resp;
	mcp_http_handle(mcp, &r, &resp);
	out->status = resp.status;
	out->content_type = resp.content_type;
	out->body = resp.body;
	out->body_len = resp.body_len;
	if (resp.session_id[0]) {
		out->header_names[out->nheaders] = "Mcp-Session-Id";
		gi_strlcpy(out->header_values[out->nheaders++], resp.session_id,
		           sizeof(out->header_values[0]));
	}
	out->read = resp.read;
	out->done = resp.done;
	out->stream = resp.stream;
}

/* The MCP server's static queries, answered here from the pooled index
 * connections (the same kg_query as GET /api/knowledge/NAME). */
int worker_mcp_query(void *ctx, const char *project, const char *name,
                     const struct kg_query_params *p, json_t **out, char *err, size_t err_size)
{
	struct api_worker *w = ctx;
	json_t *e = NULL;
	int status = 200;
	char *db_path = NULL;
	int rc = project_db_for_path(w, project, &db_path, &e, &status);
	if (rc) {
		snprintf(err, err_size, "%s", json_string_value(json_object_get(e, "error")));
		json_decref(e);
		return rc == GI_ENOTFOUND ? GI_ENOENT : rc;
	}
	struct kg_pooled conn = {0};
	rc = worker_kg_acquire(w, db_path, &conn);
	if (rc == 0) {
		struct kg_query_params with = *p;
		const struct kg_query_def *def = kg_query_def_find(name);
		json_t *profile =
		    def && def->profile == KG_PROFILE_PROJECT ? assist_profile(w, conn.db) : NULL;
		with.profile = profile;
		rc = kg_query(conn.db, name, &with, out);
		json_decref(profile);
		worker_kg_release(w, &conn);
	}
	if (rc)
		mcp_query_error(rc, name, p, db_path, err, err_size);
	gi_free(db_path);
	return rc;
}

static void route_dash_asset(void *ctx, const struct api_request *req, const char *body,
                             size_t body_len, struct api_raw_response *resp)
{
	(void)body;
	(void)body_len;
	api_dash_route_asset(((struct api_worker *)ctx)->dash, req, resp);
}

static void route_dash_monitor(void *ctx, const struct api_request *req, const char *body,
                               size_t body_len, struct api_raw_response *resp)
{
	api_dash_route_monitor(((struct api_worker *)ctx)->dash, req, body, body_len, resp);
}

static const char *const mcp_methods[] = {"POST", "GET", "DELETE", NULL};
static const char *const dash_methods[] = {"GET", NULL};
static const char *const dash_monitor_methods[] = {"GET", "POST", NULL};
static const char *const metrics_methods[] = {"GET", NULL};
const struct api_raw_route worker_raw_routes[] = {
    {"/mcp", mcp_methods, route_mcp},
    {"/metrics", metrics_methods, route_metrics},
    {"/monitor/*", dash_monitor_methods, route_dash_monitor},
    {NULL, NULL, NULL},
};
/* The dashboard's files hold no data: a browser loads them without the token. */
const struct api_raw_route worker_public_routes[] = {
    {"/", dash_methods, route_dash_asset},
    {"/dash/*", dash_methods, route_dash_asset},
    {NULL, NULL, NULL},
};

/* The routes besides the static queries', which api_worker_routes() adds from
 * the registry. */
static const struct api_route worker_fixed_routes[] = {
    {"GET", "/health", route_health, false},
    {"POST", "/api/index/scan", route_scan, true},
    {"GET", "/api/projects", route_projects, false},
    {"POST", "/api/runtime/ingest", route_ingest_counted, true},
    {"POST", "/api/runtime/ingest/batch", route_ingest_batch, true},
    {"POST", "/api/runtime/ingest/finalize", route_finalize_counted, true},
    {"POST", "/api/runtime/ingest/object_code", route_object_code_counted, true},
    {"POST", "/api/runtime/ingest/alive", route_alive, true},
    {"GET", "/api/runtime/observations", route_observations, false},
    {"GET", "/api/runtime/observation/:session_id", route_observation, false},
    {"GET", "/api/runtime/profiles", route_profiles, false},
    {"GET", "/api/runtime/profile/latest", route_profile_latest, false},
    {"GET", "/api/runtime/profile/:id", route_profile, false},
    {"GET", "/api/runtime/compare", route_compare, false},
    {NULL, NULL, NULL, false},
};

static struct api_route *worker_route_table;

/* Builds worker_route_table: a route per query of the registry
 * (graph/query_list.h), then worker_fixed_routes. */
static void worker_routes_build(void)
{
	size_t nq = 0, nf = 0;
	while (kg_query_defs[nq].name)
		nq++;
	while (worker_fixed_routes[nf].method)
		nf++;
	struct api_route *t = gi_calloc(nq + nf + 1, sizeof(*t));
	for (size_t i = 0; i < nq; i++) {
		const struct kg_query_def *d = &kg_query_defs[i];
		bool post = strcmp(d->method, "POST") == 0;
		t[i] = (struct api_route){d->method, d->path, post ? route_query_post : route_query,
		                          post};
	}
	memcpy(t + nq, worker_fixed_routes, (nf + 1) * sizeof(*t));
	worker_route_table = t;
}

const struct api_route *api_worker_routes(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, worker_routes_build);
	return worker_route_table;
}
