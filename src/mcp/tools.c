/*
 * tools.c - the MCP tool table (see mcp.h, docs/MCP.md): one tool per
 * read-only capability of Giulia, named AREA_THING (`index_*` for the index
 * of a project, `knowledge_*` for the graph's analyses, `runtime_*` for
 * observations, profiles and live nodes), each with its input schema built
 * from a parameter table, its output schema, and an implementation that goes
 * through the same function as the CLI or the REST route it mirrors.
 *
 * Static tools give exactly the JSON of `giulia ... --json` (kg_query), in
 * this process or through the worker; there is one per query of the
 * registry (graph/query_list.h), its entry and input schema built from the
 * query's declaration, so that a query added there is a tool here. Live tools check the allow-list
 * and their caps here, before anything reaches a node.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/client.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/str.h"
#include "fuse/fuse.h"
#include "graph/query.h"
#include "graph/query_registry.h"
#include "mcp/mcp_int.h"
#include "observe/dist.h"
#include "observe/inspect.h"
#include "observe/observe.h"

#define TIMEOUT_READ_MS 30000
#define TIMEOUT_LIVE_MS 20000

/* ---- parameters --------------------------------------------------------- */

#define P_PROJECT                                                                           \
	{                                                                                   \
		"project", MCP_PARAM_STRING, false, 0, 0, NULL,                             \
		    "Project directory whose index to query (absolute path). Default: the " \
		    "server's "                                                             \
		    "project (stdio) or the project the worker indexed last (HTTP)."        \
	}
#define P_NODE                                                                                \
	{                                                                                     \
		"node", MCP_PARAM_STRING, true, 0, 0, NULL,                                   \
		    "Erlang node name, `name@host` (e.g. `shop@127.0.0.1`); live-node tools " \
		    "accept only "                                                            \
		    "the nodes of the server's allow-list."                                   \
	}
#define P_LIMIT(max, what)                                                                     \
	{                                                                                      \
		"limit", MCP_PARAM_INTEGER, false, 1, max, NULL, "At most this many " what "." \
	}
#define P_END                                                   \
	{                                                       \
		NULL, MCP_PARAM_STRING, false, 0, 0, NULL, NULL \
	}

static const struct mcp_param params_scan[] = {
    P_PROJECT,
    {"force", MCP_PARAM_BOOLEAN, false, 0, 0, NULL,
     "Re-parse every file even when unchanged (default false: incremental)."},
    P_END};
static const struct mcp_param params_list[] = {P_LIMIT(1000, "entries, newest first"), P_END};
static const struct mcp_param params_observation[] = {
    {"session_id", MCP_PARAM_STRING, true, 0, 0, NULL,
     "The observation's session id (runtime_observations lists them)."},
    {"include_snapshots", MCP_PARAM_BOOLEAN, false, 0, 0, NULL,
     "Add every stored snapshot (large: prefer runtime_profile for conclusions)."},
    P_END};
static const char *const formats_profile[] = {"json", "text", NULL};
static const struct mcp_param params_profile[] = {
    {"id", MCP_PARAM_STRING, false, 0, 0, NULL,
     "Profile id (digits, from runtime_profiles or runtime_observe_stop) or `latest` "
     "(default)."},
    {"format", MCP_PARAM_STRING, false, 0, 0, formats_profile,
     "`json` (default: the whole profile, docs/PROFILE.md) or `text` (the report a person "
     "reads: ranked recommendations first)."},
    P_END};
static const struct mcp_param params_compare[] = {
    {"a", MCP_PARAM_STRING, true, 0, 0, NULL, "The profile before (id or `latest`)."},
    {"b", MCP_PARAM_STRING, true, 0, 0, NULL, "The profile after (id or `latest`)."},
    {"format", MCP_PARAM_STRING, false, 0, 0, formats_profile, "`json` (default) or `text`."},
    P_END};
static const struct mcp_param params_node_history[] = {
    P_NODE, P_LIMIT(720, "points, the newest kept"), P_END};
static const struct mcp_param params_node[] = {P_NODE, P_END};
static const struct mcp_param params_none[] = {P_END};
static const struct mcp_param params_pulse[] = {
    P_NODE,
    {"window_ms", MCP_PARAM_INTEGER, false, 10, MCP_PULSE_WINDOW_MAX, NULL,
     "Measuring window for a live pulse (default 500, at most 5000)."},
    P_END};
static const char *const metrics_top[] = {"reductions", "memory", "message_queue", NULL};
static const struct mcp_param params_top_processes[] = {
    P_NODE,
    {"metric", MCP_PARAM_STRING, false, 0, 0, metrics_top,
     "Rank by `reductions` over the window (CPU, default), `memory` or `message_queue` "
     "(mailbox length)."},
    {"window_ms", MCP_PARAM_INTEGER, false, 10, MCP_PULSE_WINDOW_MAX, NULL,
     "Measuring window for a live pulse (default 500, at most 5000)."},
    P_END};
static const struct mcp_param params_process[] = {
    P_NODE,
    {"process", MCP_PARAM_STRING, true, 0, 0, NULL,
     "A pid as `<0.123.0>` (from runtime_top_processes) or a registered name (`MyApp.Cache`, "
     "`logger`)."},
    {"window_ms", MCP_PARAM_INTEGER, false, 0, 5000, NULL,
     "Window for reductions per second (default 500, at most 5000)."},
    {"keys", MCP_PARAM_INTEGER, false, 1, 1000, NULL,
     "Dictionary keys shown (default 100, at most 1000)."},
    {"values", MCP_PARAM_BOOLEAN, false, 0, 0, NULL,
     "Also the dictionary's values, each cut at 400 characters."},
    {"messages", MCP_PARAM_INTEGER, false, 0, 100, NULL,
     "Show the first N queued messages (at most 100; not read when the queue is longer than "
     "10000)."},
    {"state", MCP_PARAM_BOOLEAN, false, 0, 0, NULL,
     "The OTP state (sys:get_status) of a proc_lib process, cut at 4000 characters, with a "
     "timeout."},
    P_END};
static const char *const sorts_ets[] = {"memory", "size", NULL};
static const struct mcp_param params_ets[] = {
    P_NODE,
    {"sort", MCP_PARAM_STRING, false, 0, 0, sorts_ets,
     "Largest first by `memory` (default) or `size` (objects)."},
    {"limit", MCP_PARAM_INTEGER, false, 1, 1000, NULL, "How many tables (default 30)."},
    P_END};
static const struct mcp_param params_ports[] = {
    P_NODE,
    {"window_ms", MCP_PARAM_INTEGER, false, 10, 10000, NULL,
     "How long bytes and packets are counted (default 1000, at most 10000)."},
    {"limit", MCP_PARAM_INTEGER, false, 1, 1000, NULL, "How many ports (default 30)."},
    P_END};
static const struct mcp_param params_apps[] = {
    P_NODE,
    {"app", MCP_PARAM_STRING, false, 0, 0, NULL,
     "An application's name: its supervision tree instead of the list."},
    {"depth", MCP_PARAM_INTEGER, false, 1, 20, NULL,
     "Levels of the tree below the top supervisor (default 4)."},
    {"width", MCP_PARAM_INTEGER, false, 1, 1000, NULL,
     "Children shown per supervisor (default 50)."},
    P_END};
static const struct mcp_param params_alloc[] = {
    P_NODE,
    {"limit", MCP_PARAM_INTEGER, false, 1, 1000, NULL, "How many instances (default 20)."},
    P_END};
static const struct mcp_param params_binleak[] = {
    P_NODE,
    {"confirm", MCP_PARAM_BOOLEAN, true, 0, 0, NULL,
     "Must be true: this forces a garbage collection of every process of the node."},
    {"limit", MCP_PARAM_INTEGER, false, 1, 100, NULL, "How many processes (default 10)."},
    P_END};
static const struct mcp_param params_trace[] = {
    P_NODE,
    {"modules", MCP_PARAM_STRINGS, true, 1, MCP_TRACE_MODULES_MAX, NULL,
     "Modules whose functions to count (1 to 16; `MyApp.Repo`, `:ets`)."},
    {"duration_ms", MCP_PARAM_INTEGER, false, 100, MCP_TRACE_MS_MAX, NULL,
     "How long to count, 100 to 10000 ms (default 2000)."},
    P_END};
static const struct mcp_param params_observe_start[] = {
    P_NODE,
    {"duration_ms", MCP_PARAM_INTEGER, true, 1000, MCP_OBSERVE_MS_MAX, NULL,
     "How long the observation may run, 1000 to 600000 ms: this server stops it then (or "
     "when it exits) if runtime_observe_stop did not."},
    {"interval_ms", MCP_PARAM_INTEGER, false, 1000, 60000, NULL,
     "Time between snapshots, 1000 to 60000 ms (default 2000)."},
    {"trace_modules", MCP_PARAM_STRINGS, false, 0, MCP_TRACE_MODULES_MAX, NULL,
     "Modules whose calls to count during the observation (at most 16)."},
    {"project", MCP_PARAM_STRING, false, 0, 0, NULL,
     "Project directory (absolute) whose graph the profile joins. Default: the server's "
     "project."},
    P_END};

/* ---- helpers ------------------------------------------------------------ */

static const char *arg_str(json_t *args, const char *name)
{
	return json_string_value(json_object_get(args, name));
}

static long long arg_int(json_t *args, const char *name, long long dflt)
{
	json_t *v = json_object_get(args, name);
	return json_is_integer(v) ? json_integer_value(v) : dflt;
}

static bool arg_bool(json_t *args, const char *name)
{
	return json_is_true(json_object_get(args, name));
}

static bool node_name_valid(const char *n)
{
	size_t len = n ? strlen(n) : 0;
	const char *at = n ? strchr(n, '@') : NULL;
	if (len == 0 || len > 255 || !at || at == n || at[1] == '\0' || strchr(at + 1, '@'))
		return false;
	for (const char *c = n; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '_' || *c == '-' || *c == '.' || *c == '@'))
			return false;
	return true;
}

/* Live tools: the node must be on the allow-list. */
static int node_allowed(struct mcp_server *s, const char *node, char *err, size_t n)
{
	if (!node_name_valid(node)) {
		snprintf(err, n, "'%.300s' is not a node name: use name@host, e.g. shop@127.0.0.1",
		         node ? node : "");
		return GI_EINVAL;
	}
	for (int i = 0; i < s->nnodes; i++)
		if (strcmp(s->nodes[i], node) == 0)
			return 0;
	snprintf(err, n,
	         "node %s is not on this server's allow-list; restart the MCP server with "
	         "--allow-runtime --allow-node %s to let it act on that node",
	         node, node);
	return GI_EDENIED;
}

/* The cookie this server hands to the monitor or uses itself: GIULIA_COOKIE
 * of `giulia mcp`; never the worker's (it holds none: the monitor's own
 * applies). */
static const char *server_cookie(const struct mcp_server *s)
{
	if (!s->static_in_process)
		return NULL;
	const char *c = getenv("GIULIA_COOKIE");
	return c && *c ? c : NULL;
}

/* ---- static queries (graph/query_list.h) ---------------------------------- */

/* At most this many arguments go into a tool's query string. */
#define QUERY_ARGS_MAX 12

/* The query over HTTP: GET the query's route with each argument given as
 * a query-string pair (integers and booleans as text), or POST it the
 * arguments as its body, `project` as `path`. */
static int query_http(struct mcp_server *s, const struct kg_query_def *def, json_t *args,
                      const char *project, const struct kg_query_params *p, json_t **result,
                      char *err, size_t n)
{
	if (strcmp(def->method, "POST") == 0) {
		json_t *body = json_deep_copy(args);
		if (project)
			json_object_set_new(body, "path", json_string(project));
		json_object_del(body, "project");
		int rc = mcp_daemon_call(s, false, "POST", def->path, NULL, body, TIMEOUT_READ_MS,
		                         result, err, n);
		json_decref(body);
		return rc;
	}
	const char *q[2 * (QUERY_ARGS_MAX + 1) + 1] = {"path", project};
	char values[QUERY_ARGS_MAX][32];
	int k = 2, nv = 0;
	for (const struct kg_param *d = def->params; d->name && nv < QUERY_ARGS_MAX; d++) {
		json_t *v = json_object_get(args, d->name);
		const char *text = json_string_value(v);
		if (json_is_integer(v))
			snprintf(values[nv], sizeof(values[0]), "%lld",
			         (long long)json_integer_value(v));
		else if (json_is_boolean(v))
			snprintf(values[nv], sizeof(values[0]), "%s",
			         json_is_true(v) ? "true" : "false");
		if (json_is_integer(v) || json_is_boolean(v))
			text = values[nv++];
		q[k++] = d->name;
		q[k++] = text;
	}
	q[k] = NULL;
	int rc =
	    mcp_daemon_call(s, false, "GET", def->path, q, NULL, TIMEOUT_READ_MS, result, err, n);
	if (rc == GI_ENOTFOUND && p->module && !strstr(err, "not indexed"))
		mcp_query_error(rc, def->name, p, s->worker_url, err, n);
	return rc;
}

/* Every tool of a static query: kg_query(t->target) with the arguments in
 * the fields the registry names and all of them as its named arguments, in
 * this process (stdio), through the worker's pooled indexes (the worker's
 * /mcp), or over HTTP; review goes through its route even inside the
 * worker, which adds the stored profile for the live weight. */
static int run_query(struct mcp_server *s, const struct mcp_tool *t, json_t *args, json_t **result,
                     char *err, size_t n)
{
	const struct kg_query_def *def = kg_query_def_find(t->target);
	struct kg_query_params p;
	memset(&p, 0, sizeof(p));
	for (const struct kg_param *d = def->params; d->name; d++) {
		switch (d->field) {
		case KG_FIELD_MODULE:
			p.module = arg_str(args, d->name);
			break;
		case KG_FIELD_FUNCTION:
			p.function = arg_str(args, d->name);
			break;
		case KG_FIELD_FROM:
			p.from = arg_str(args, d->name);
			break;
		case KG_FIELD_TO:
			p.to = arg_str(args, d->name);
			break;
		case KG_FIELD_LABEL:
			p.label = arg_str(args, d->name);
			break;
		case KG_FIELD_DEPTH:
			p.depth = (int)arg_int(args, d->name, 0);
			break;
		case KG_FIELD_TOP:
			p.top = (int)arg_int(args, d->name, 0);
			break;
		case KG_FIELD_EXTERNAL:
			p.include_external = arg_bool(args, d->name);
			break;
		case KG_FIELD_DIRECT:
			p.direct_only = arg_bool(args, d->name);
			break;
		case KG_FIELD_ARGS:
			break;
		}
	}
	p.args = args;
	const char *project = arg_str(args, "project");
	if (s->static_in_process)
		return mcp_static_query(s, project, t->target, &p, result, err, n);
	if (s->query && def->profile != KG_PROFILE_STORE)
		return s->query(s->query_ctx, project, t->target, &p, result, err, n);
	return query_http(s, def, args, project, &p, result, err, n);
}

static int run_scan(struct mcp_server *s, const struct mcp_tool *t, json_t *args, json_t **result,
                    char *err, size_t n)
{
	(void)t;
	const char *project = arg_str(args, "project");
	if (!s->static_in_process) {
		/* the worker has no project of its own: the one it indexed last */
		json_t *projects = NULL;
		int rc = 0;
		if (!project) {
			rc = mcp_daemon_call(s, false, "GET", "/api/projects", NULL, NULL,
			                     TIMEOUT_READ_MS, &projects, err, n);
			project = json_string_value(json_object_get(
			    json_array_get(json_object_get(projects, "projects"), 0), "path"));
			if (rc == 0 && !project) {
				snprintf(err, n,
				         "no project indexed yet: give the argument 'project'");
				rc = GI_EINVAL;
			}
		}
		if (rc == 0) {
			json_t *body = json_pack("{s:s, s:b}", "path", project, "force",
			                         arg_bool(args, "force"));
			rc = mcp_daemon_call(s, false, "POST", "/api/index/scan", NULL, body,
			                     600000, result, err, n);
			json_decref(body);
		}
		json_decref(projects);
		return rc;
	}
	if (!project)
		project = s->project;
	char *real = NULL;
	if (gi_fs_realdir(project, &real) != 0) {
		snprintf(err, n, "project %.512s is not a directory", project);
		return GI_EINVAL;
	}
	struct kg_index_options opt = {.force = arg_bool(args, "force")};
	json_t *summary = NULL;
	pthread_mutex_lock(&s->db_lock);
	int rc = kg_index_project(real, NULL, &opt, &summary);
	pthread_mutex_unlock(&s->db_lock);
	if (rc) {
		snprintf(err, n, "indexing %.512s failed: %s", real, gi_strerror(rc));
		gi_free(real);
		return rc;
	}
	*result = json_pack("{s:s, s:o}", "path", real, "summary", summary);
	gi_free(real);
	return 0;
}

/* ---- worker and monitor reads ------------------------------------------- */

static int run_worker_get(struct mcp_server *s, const struct mcp_tool *t, json_t *args,
                          json_t **result, char *err, size_t n)
{
	char limit[32];
	long long l = arg_int(args, "limit", 0);
	snprintf(limit, sizeof(limit), "%lld", l);
	const char *q[] = {"limit", l ? limit : NULL, NULL};
	return mcp_daemon_call(s, false, "GET", t->target, q, NULL, TIMEOUT_READ_MS, result, err,
	                       n);
}

static bool session_id_safe(const char *sid)
{
	size_t len = strlen(sid);
	if (len == 0 || len > 128)
		return false;
	for (const char *c = sid; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '-' || *c == '_'))
			return false;
	return true;
}

static int run_observation(struct mcp_server *s, const struct mcp_tool *t, json_t *args,
                           json_t **result, char *err, size_t n)
{
	(void)t;
	const char *sid = arg_str(args, "session_id");
	if (!session_id_safe(sid)) {
		snprintf(err, n,
		         "session_id must be letters, digits, - or _ (runtime_observations "
		         "lists the ids)");
		return GI_EINVAL;
	}
	char path[256];
	snprintf(path, sizeof(path), "/api/runtime/observation/%s", sid);
	const char *q[] = {"include", arg_bool(args, "include_snapshots") ? "snapshots" : NULL,
	                   NULL};
	return mcp_daemon_call(s, false, "GET", path, q, NULL, TIMEOUT_READ_MS, result, err, n);
}

/* "latest" or a positive integer. */
static bool profile_id_valid(const char *id)
{
	if (strcmp(id, "latest") == 0)
		return true;
	int64_t v;
	return gi_parse_int64(id, 1, INT64_MAX, &v) == 0;
}

static int profile_fetch(struct mcp_server *s, const char *id, json_t **out, char *err, size_t n)
{
	if (!profile_id_valid(id)) {
		snprintf(err, n, "profile id must be a positive integer or `latest`, not '%.100s'",
		         id);
		return GI_EINVAL;
	}
	char path[128];
	snprintf(path, sizeof(path), "/api/runtime/profile/%s", id);
	return mcp_daemon_call(s, false, "GET", path, NULL, NULL, TIMEOUT_READ_MS, out, err, n);
}

static bool format_is_text(json_t *args)
{
	const char *f = arg_str(args, "format");
	return f && strcmp(f, "text") == 0;
}

static int run_profile(struct mcp_server *s, const struct mcp_tool *t, json_t *args,
                       json_t **result, char *err, size_t n)
{
	(void)t;
	const char *id = arg_str(args, "id");
	json_t *row = NULL;
	int rc = profile_fetch(s, id ? id : "latest", &row, err, n);
	if (rc)
		return rc;
	if (!format_is_text(args)) {
		*result = row;
		return 0;
	}
	json_t *profile = json_object_get(row, "profile");
	struct gi_buf text;
	gi_buf_init(&text, 0);
	rc = fuse_report_text(profile ? profile : row, &text);
	if (rc) {
		snprintf(err, n, "rendering the profile failed: %s", gi_strerror(rc));
	} else {
		*result = json_pack("{s:O?, s:s, s:s}", "id", json_object_get(row, "id"), "format",
		                    "text", "text", gi_buf_str(&text));
	}
	gi_buf_destroy(&text);
	json_decref(row);
	return rc;
}

static int run_compare(struct mcp_server *s, const struct mcp_tool *t, json_t *args,
                       json_t **result, char *err, size_t n)
{
	(void)t;
	const char *a = arg_str(args, "a"), *b = arg_str(args, "b");
	if (!profile_id_valid(a) || !profile_id_valid(b)) {
		snprintf(err, n, "a and b must be profile ids (positive integers) or `latest`");
		return GI_EINVAL;
	}
	const char *q[] = {"a", a, "b", b, NULL};
	json_t *cmp = NULL;
	int rc = mcp_daemon_call(s, false, "GET", "/api/runtime/compare", q, NULL, TIMEOUT_READ_MS,
	                         &cmp, err, n);
	if (rc || !format_is_text(args)) {
		*result = cmp;
		return rc;
	}
	struct gi_buf text;
	gi_buf_init(&text, 0);
	rc = fuse_compare_text(cmp, &text);
	if (rc)
		snprintf(err, n, "rendering the comparison failed: %s", gi_strerror(rc));
	else
		*result = json_pack("{s:s, s:s}", "format", "text", "text", gi_buf_str(&text));
	gi_buf_destroy(&text);
	json_decref(cmp);
	return rc;
}

static int run_monitor_node(struct mcp_server *s, const struct mcp_tool *t, json_t *args,
                            json_t **result, char *err, size_t n)
{
	const char *node = arg_str(args, "node");
	if (!node_name_valid(node)) {
		snprintf(err, n, "'%.300s' is not a node name: use name@host", node ? node : "");
		return GI_EINVAL;
	}
	char limit[32], window[32];
	long long l = arg_int(args, "limit", 0), w = arg_int(args, "window_ms", 0);
	snprintf(limit, sizeof(limit), "%lld", l);
	snprintf(window, sizeof(window), "%lld", w);
	const char *q[] = {"node",      node,
	                   "limit",     l ? limit : NULL,
	                   "metric",    arg_str(args, "metric"),
	                   "window_ms", w ? window : NULL,
	                   NULL};
	return mcp_daemon_call(s, true, "GET", t->target, q, NULL, TIMEOUT_LIVE_MS, result, err, n);
}

static int run_observe_status(struct mcp_server *s, const struct mcp_tool *t, json_t *args,
                              json_t **result, char *err, size_t n)
{
	(void)args;
	return mcp_daemon_call(s, true, "GET", t->target, NULL, NULL, TIMEOUT_READ_MS, result, err,
	                       n);
}

/* ---- live-node tools ---------------------------------------------------- */

/* Gives the monitor the server's cookie for `node` once (POST
 * /api/runtime/connect), so that its live reads use it; nothing to do
 * without GIULIA_COOKIE (the monitor uses its own). */
static int monitor_connect(struct mcp_server *s, const char *node, char *err, size_t n)
{
	const char *cookie = server_cookie(s);
	int i = 0;
	while (i < s->nnodes && strcmp(s->nodes[i], node) != 0)
		i++;
	pthread_mutex_lock(&s->lock);
	bool done = i == s->nnodes || s->connected[i];
	pthread_mutex_unlock(&s->lock);
	if (!cookie || done)
		return 0;
	json_t *body = json_pack("{s:s, s:s}", "node", node, "cookie", cookie), *r = NULL;
	int rc = mcp_daemon_call(s, true, "POST", "/api/runtime/connect", NULL, body,
	                         TIMEOUT_LIVE_MS, &r, err, n);
	json_decref(body);
	json_decref(r);
	if (rc == 0) {
		pthread_mutex_lock(&s->lock);
		s->connected[i] = true;
		pthread_mutex_unlock(&s->lock);
	}
	return rc;
}

static int run_live_read(struct mcp_server *s, const struct mcp_tool *t, json_t *args,
                         json_t **result, char *err, size_t n)
{
	int rc = node_allowed(s, arg_str(args, "node"), err, n);
	if (rc)
		return rc;
	rc = monitor_connect(s, arg_str(args, "node"), err, n);
	if (rc == 0)
		rc = run_monitor_node(s, t, args, result, err, n);
	if (rc != GI_ECONNECT || strcmp(t->name, "runtime_pulse") != 0 || !s->static_in_process)
		return rc;
	/* No monitor: the pulse is one bounded call, taken from here. */
	struct obs_target target = {arg_str(args, "node"), server_cookie(s), TIMEOUT_LIVE_MS / 2};
	int window = (int)arg_int(args, "window_ms", 500);
	rc = obs_pulse(&target, window, 0, result);
	if (rc)
		snprintf(err, n, "pulse of %s failed: %s (%s)", target.node, gi_strerror(rc),
		         dist_error_hint(rc));
	return rc;
}

/* A view read from a node from here when no monitor answers (stdio). */
typedef int (*local_view_fn)(const struct obs_target *t, const void *req, json_t **out);

static int local_process(const struct obs_target *t, const void *req, json_t **out)
{
	return obs_process(t, req, out);
}

static int local_ets(const struct obs_target *t, const void *req, json_t **out)
{
	return obs_ets(t, req, out);
}

static int local_ports(const struct obs_target *t, const void *req, json_t **out)
{
	return obs_ports(t, req, out);
}

/* A live view of an allowed `node`: the monitor's route t->target with the
 * NULL-terminated query `q`; without a monitor (stdio), one bounded call
 * from here (`local` with `req`). `what` names it in errors. */
static int live_view(struct mcp_server *s, const struct mcp_tool *t, const char *node,
                     const char *const *q, local_view_fn local, const void *req, const char *what,
                     json_t **result, char *err, size_t n)
{
	int rc = monitor_connect(s, node, err, n);
	if (rc == 0)
		rc = mcp_daemon_call(s, true, "GET", t->target, q, NULL, TIMEOUT_LIVE_MS, result,
		                     err, n);
	if (rc != GI_ECONNECT || !s->static_in_process)
		return rc;
	struct obs_target target = {node, server_cookie(s), TIMEOUT_LIVE_MS / 4};
	rc = local(&target, req, result);
	if (rc == GI_ENOTFOUND)
		snprintf(err, n, "no %s on %s (it may have exited)", what, node);
	else if (rc)
		snprintf(err, n, "%s on %s: %s (%s)", what, node, gi_strerror(rc),
		         dist_error_hint(rc));
	return rc;
}

static int run_process(struct mcp_server *s, const struct mcp_tool *t, json_t *args,
                       json_t **result, char *err, size_t n)
{
	const char *node = arg_str(args, "node");
	int rc = node_allowed(s, node, err, n);
	if (rc)
		return rc;
	struct obs_process_request r = {
	    .who = arg_str(args, "process"),
	    .window_ms = (int)arg_int(args, "window_ms", 0),
	    .keys_max = (int)arg_int(args, "keys", 0),
	    .dictionary_values = arg_bool(args, "values"),
	    .messages = (int)arg_int(args, "messages", 0),
	    .state = arg_bool(args, "state"),
	};
	if (obs_process_request_check(&r, err, n) != 0)
		return GI_EINVAL;
	char window[32], keys[32], messages[32], what[160];
	snprintf(window, sizeof(window), "%d", r.window_ms);
	snprintf(keys, sizeof(keys), "%d", r.keys_max);
	snprintf(messages, sizeof(messages), "%d", r.messages);
	snprintf(what, sizeof(what), "process %.100s", r.who);
	const char *q[] = {"node",      node,
	                   "process",   r.who,
	                   "window_ms", r.window_ms ? window : NULL,
	                   "keys",      r.keys_max ? keys : NULL,
	                   "messages",  r.messages ? messages : NULL,
	                   "values",    r.dictionary_values ? "true" : NULL,
	                   "state",     r.state ? "true" : NULL,
	                   NULL};
	return live_view(s, t, node, q, local_process, &r, what, result, err, n);
}

static int run_ets(struct mcp_server *s, const struct mcp_tool *t, json_t *args, json_t **result,
                   char *err, size_t n)
{
	const char *node = arg_str(args, "node");
	int rc = node_allowed(s, node, err, n);
	if (rc)
		return rc;
	struct obs_ets_request r = {arg_str(args, "sort"), (int)arg_int(args, "limit", 0)};
	char limit[32];
	snprintf(limit, sizeof(limit), "%d", r.limit);
	const char *q[] = {"node", node, "sort", r.sort, "limit", r.limit ? limit : NULL, NULL};
	return live_view(s, t, node, q, local_ets, &r, "ETS tables", result, err, n);
}

static int run_ports(struct mcp_server *s, const struct mcp_tool *t, json_t *args, json_t **result,
                     char *err, size_t n)
{
	const char *node = arg_str(args, "node");
	int rc = node_allowed(s, node, err, n);
	if (rc)
		return rc;
	struct obs_ports_request r = {(int)arg_int(args, "window_ms", 0),
	                              (int)arg_int(args, "limit", 0)};
	char window[32], limit[32];
	snprintf(window, sizeof(window), "%d", r.window_ms);
	snprintf(limit, sizeof(limit), "%d", r.limit);
	const char *q[] = {
	    "node", node, "window_ms", r.window_ms ? window : NULL, "limit", r.limit ? limit : NULL,
	    NULL};
	return live_view(s, t, node, q, local_ports, &r, "ports", result, err, n);
}

static int local_apps(const struct obs_target *t, const void *req, json_t **out)
{
	return obs_apps(t, req, out);
}

static int run_apps(struct mcp_server *s, const struct mcp_tool *t, json_t *args, json_t **result,
                    char *err, size_t n)
{
	const char *node = arg_str(args, "node");
	int rc = node_allowed(s, node, err, n);
	if (rc)
		return rc;
	struct obs_apps_request r = {arg_str(args, "app"), (int)arg_int(args, "depth", 0),
	                             (int)arg_int(args, "width", 0)};
	char depth[32], width[32], what[160];
	snprintf(depth, sizeof(depth), "%d", r.depth);
	snprintf(width, sizeof(width), "%d", r.width);
	snprintf(what, sizeof(what), "application %.100s", r.app ? r.app : "");
	const char *q[] = {"node",  node,
	                   "app",   r.app,
	                   "depth", r.depth ? depth : NULL,
	                   "width", r.width ? width : NULL,
	                   NULL};
	return live_view(s, t, node, q, local_apps, &r, r.app ? what : "applications", result, err,
	                 n);
}

static int local_memory(const struct obs_target *t, const void *req, json_t **out)
{
	const int *r = req; /* {binleak?, limit} */
	return r[0] ? obs_binleak(t, r[1], out) : obs_alloc(t, r[1], out);
}

/* runtime_alloc, and runtime_binleak (only with confirm: it forces GCs) */
static int run_memory(struct mcp_server *s, const struct mcp_tool *t, json_t *args, json_t **result,
                      char *err, size_t n)
{
	const char *node = arg_str(args, "node");
	int rc = node_allowed(s, node, err, n);
	if (rc)
		return rc;
	int r[2] = {strcmp(t->name, "runtime_binleak") == 0, (int)arg_int(args, "limit", 0)};
	if (r[0] && !arg_bool(args, "confirm")) {
		snprintf(err, n,
		         "runtime_binleak forces a garbage collection of every process of "
		         "the node: pass confirm: true");
		return GI_EINVAL;
	}
	char limit[32];
	snprintf(limit, sizeof(limit), "%d", r[1]);
	const char *q[] = {
	    "node", node, "limit", r[1] ? limit : NULL, "confirm", r[0] ? "true" : NULL, NULL};
	return live_view(s, t, node, q, local_memory, r, r[0] ? "binary leaks" : "allocators",
	                 result, err, n);
}

static int run_connect(struct mcp_server *s, const struct mcp_tool *t, json_t *args,
                       json_t **result, char *err, size_t n)
{
	const char *node = arg_str(args, "node");
	int rc = node_allowed(s, node, err, n);
	if (rc)
		return rc;
	json_t *body = json_pack("{s:s, s:s?}", "node", node, "cookie", server_cookie(s));
	rc = mcp_daemon_call(s, true, "POST", t->target, NULL, body, TIMEOUT_LIVE_MS, result, err,
	                     n);
	json_decref(body);
	return rc;
}

/* Copies a JSON array of strings into `out` (NULL-terminated, at most max). */
static int strings_of(json_t *arr, const char **out, size_t max)
{
	size_t i, k = 0;
	json_t *v;
	json_array_foreach(arr, i, v)
	{
		if (k == max)
			return GI_EINVAL;
		out[k++] = json_string_value(v);
	}
	out[k] = NULL;
	return 0;
}

static int run_trace(struct mcp_server *s, const struct mcp_tool *t, json_t *args, json_t **result,
                     char *err, size_t n)
{
	(void)t;
	const char *node = arg_str(args, "node");
	int rc = node_allowed(s, node, err, n);
	if (rc)
		return rc;
	const char *mods[MCP_TRACE_MODULES_MAX + 1];
	if (strings_of(json_object_get(args, "modules"), mods, MCP_TRACE_MODULES_MAX) != 0) {
		snprintf(err, n, "at most %d modules per trace", MCP_TRACE_MODULES_MAX);
		return GI_EINVAL;
	}
	int window = (int)arg_int(args, "duration_ms", 2000);
	if (window > MCP_TRACE_MS_MAX)
		window = MCP_TRACE_MS_MAX;
	struct obs_target target = {node, server_cookie(s), TIMEOUT_LIVE_MS / 2};
	rc = obs_trace(&target, mods, window, result);
	if (rc)
		snprintf(err, n, "trace on %s failed: %s (%s)", node, gi_strerror(rc),
		         dist_error_hint(rc));
	return rc;
}

static int run_observe_start(struct mcp_server *s, const struct mcp_tool *t, json_t *args,
                             json_t **result, char *err, size_t n)
{
	const char *node = arg_str(args, "node");
	int rc = node_allowed(s, node, err, n);
	if (rc)
		return rc;
	long long duration = arg_int(args, "duration_ms", MCP_OBSERVE_MS_MAX);
	if (duration > MCP_OBSERVE_MS_MAX)
		duration = MCP_OBSERVE_MS_MAX;
	const char *project = arg_str(args, "project");
	char *real = NULL;
	/* stdio: the server's project; the worker has no project of its own */
	if (!project && s->static_in_process && gi_fs_realdir(s->project, &real) == 0)
		project = real;
	json_t *body = json_pack("{s:s, s:s?, s:I, s:s?}", "node", node, "cookie", server_cookie(s),
	                         "interval_ms", (json_int_t)arg_int(args, "interval_ms", 2000),
	                         "project", project);
	json_t *mods = json_object_get(args, "trace_modules");
	if (mods)
		json_object_set(body, "trace_modules", mods);
	rc = mcp_daemon_call(s, true, "POST", t->target, NULL, body, TIMEOUT_LIVE_MS, result, err,
	                     n);
	json_decref(body);
	gi_free(real);
	if (rc == 0) {
		mcp_watch_set(s, node, duration);
		json_object_set_new(*result, "stops_after_ms", json_integer(duration));
	}
	return rc;
}

static int run_observe_stop(struct mcp_server *s, const struct mcp_tool *t, json_t *args,
                            json_t **result, char *err, size_t n)
{
	const char *node = arg_str(args, "node");
	int rc = node_allowed(s, node, err, n);
	if (rc)
		return rc;
	json_t *body = json_pack("{s:s, s:i}", "node", node, "wait_ms", 60000);
	rc = mcp_daemon_call(s, true, "POST", t->target, NULL, body, 90000, result, err, n);
	json_decref(body);
	if (rc == 0 || rc == GI_ENOTFOUND)
		mcp_watch_set(s, node, -1);
	return rc;
}

/* ---- the table ---------------------------------------------------------- */

/* The tools besides the static queries', which mcp_tools() adds first
 * from the registry (graph/query_list.h). */
static const struct mcp_tool other_tools[] = {
    {"index_scan", "Index the project",
     "Index (or re-index, incrementally) a project's Elixir "
     "source into its knowledge graph (PROJECT/.giulia/index.db). Use after the code changed "
     "a lot, or when index_status says the project is not indexed. Writes only under "
     "PROJECT/.giulia/.",
     params_scan, "path:string summary:object", run_scan, NULL, false, true, false},
    {"index_projects", "Indexed projects", "The projects the worker has indexed, newest first.",
     params_none, "projects:array", run_worker_get, "/api/projects", false, false, false},
    {"runtime_observations", "Observations",
     "Stored observations of live nodes (session id, node, status, snapshots, profile id), "
     "newest first.",
     params_list, "observations:array", run_worker_get, "/api/runtime/observations", false, false,
     false},
    {"runtime_observation", "One observation",
     "One stored observation by session id, optionally with its snapshots.", params_observation,
     "session_id:string node:string status:string", run_observation, NULL, false, false, false},
    {"runtime_profiles", "Profiles",
     "Stored fused profiles (id, session, node, project), "
     "newest first. Ids feed runtime_profile and runtime_compare.",
     params_list, "profiles:array", run_worker_get, "/api/runtime/profiles", false, false, false},
    {"runtime_profile", "A fused profile",
     "A fused runtime profile (latest or by id): ranked recommendations with evidence, hot "
     "modules joined with the graph, trace hotspots. Use `format: text` for the report to "
     "read, `json` for every number.",
     params_profile, "", run_profile, NULL, false, false, false},
    {"runtime_compare", "Compare two profiles",
     "What changed between two profiles (before/after a fix): metric deltas, hot modules "
     "that entered or left, recommendations resolved, new or remaining.",
     params_compare, "", run_compare, NULL, false, false, false},
    {"runtime_history", "Runtime history",
     "The compact history points the monitor kept for a node (scheduler utilisation, run "
     "queue, memory, processes, reductions per second), oldest first. Reads the monitor's "
     "memory only: never touches the node.",
     params_node_history, "node:string points:array", run_monitor_node, "/api/runtime/history",
     false, false, false},
    {"runtime_trend", "Runtime trend",
     "For each history metric of a node: least-squares slope, change over the window and "
     "direction (rising/falling/stable). Reads the monitor's memory only.",
     params_node_history, "node:string metrics:object", run_monitor_node, "/api/runtime/trend",
     false, false, false},
    {"runtime_observe_status", "Running observations",
     "The monitor's observations (running and recent) and its delivery queue to the worker.",
     params_none, "observations:array", run_observe_status, "/api/monitor/observe/status", false,
     false, false},
    {"runtime_connect", "Connect to a node",
     "Checks that an allowed node answers (one short pulse) and lets the monitor keep the "
     "server's cookie for later calls. The cookie is the server's (GIULIA_COOKIE or "
     "~/.erlang.cookie), never an argument.",
     params_node, "node:string connected:boolean", run_connect, "/api/runtime/connect", true, false,
     false},
    {"runtime_pulse", "Pulse of a node",
     "One snapshot of an allowed node (docs/SNAPSHOT.md): scheduler utilisation, run "
     "queue, memory, process counts and the busiest processes. Uses the running "
     "observation's latest snapshot when there is one, else measures for window_ms (at most "
     "5000 ms) with bounded work on the node.",
     params_pulse, "node:string", run_live_read, "/api/runtime/pulse", true, false, false},
    {"runtime_top_processes", "Top processes",
     "The top processes of an allowed node by reductions, memory or mailbox length, "
     "attributed to modules.",
     params_top_processes, "node:string metric:string processes:array", run_live_read,
     "/api/runtime/top_processes", true, false, false},
    {"runtime_process", "One process",
     "One process of an allowed node, as recon:info/1 shows it: status, where it executes and "
     "its stack, initial call, memory, reductions per second over window_ms, message queue "
     "length, links, monitors and monitored_by with names, group leader, the dictionary's "
     "keys. Values, messages and the OTP state only when asked, each capped; nothing is "
     "loaded on the node.",
     params_process, "node:string pid:string status:string", run_process, "/api/runtime/process",
     true, false, false},
    {"runtime_ets", "ETS tables",
     "The largest ETS tables of an allowed node by memory or size: owner (with its "
     "registered name), type, protection, read/write concurrency, and the node's table "
     "count and ETS memory. Reads ets:info only, never a table's contents.",
     params_ets, "node:string count:integer tables:array", run_ets, "/api/runtime/ets", true, false,
     false},
    {"runtime_ports", "Ports and sockets",
     "The ports and sockets of an allowed node that moved the most bytes over window_ms (at "
     "most 10000 ms), as recon:inet_window gives them: bytes and packets in and out, owner, "
     "peer; the ports by kind and file descriptors in use against the limit.",
     params_ports, "node:string count:integer ports:array fds:object", run_ports,
     "/api/runtime/ports", true, false, false},
    {"runtime_apps", "Applications and supervision",
     "The applications running on an allowed node with versions and the processes and "
     "memory attributed to each; with app, that application's supervision tree, bounded in "
     "depth and width, each supervisor asked with a timeout.",
     params_apps, "node:string", run_apps, "/api/runtime/apps", true, false, false},
    {"runtime_alloc", "Allocators",
     "Allocator fragmentation and mseg_alloc cache hit rates of an allowed node, as "
     "recon_alloc:fragmentation(current) and cache_hit_rates() give them: carrier bytes "
     "against block bytes in use per allocator and instance. Read-only.",
     params_alloc, "node:string types:array rows:array cache:array", run_memory,
     "/api/runtime/alloc", true, false, false},
    {"runtime_binleak", "Binary leaks (forces GC)",
     "recon:bin_leak/1 on an allowed node: FORCES A GARBAGE COLLECTION of every process "
     "(at most 100000, 5 s budget) and lists those that freed the most refc binary memory. "
     "Requires confirm: true.",
     params_binleak, "node:string processes:array", run_memory, "/api/runtime/binleak", true, true,
     false},
    {"runtime_hot_spots", "Hot spots",
     "Modules of an allowed node ranked by the reductions of the processes attributed to "
     "them, and the most called traced functions.",
     params_node, "node:string modules:array", run_live_read, "/api/runtime/hot_spots", true, false,
     false},
    {"runtime_alerts", "Alerts",
     "Threshold and trend alerts for an allowed node (scheduler, run queue, mailboxes, "
     "limits, memory growth); an empty list means none fired.",
     params_node, "node:string alerts:array", run_live_read, "/api/runtime/alerts", true, false,
     false},
    {"runtime_trace", "Count calls",
     "Counts calls per function of up to 16 modules of an allowed node for duration_ms (at "
     "most 10000 ms) with call-count tracing (about 10% overhead on the traced functions, "
     "no trace messages), then removes every pattern it set.",
     params_trace, "node:string calls:array", run_trace, NULL, true, false, true},
    {"runtime_observe_start", "Start an observation",
     "Starts observing an allowed node through the monitor: a snapshot every interval_ms, "
     "optional call counts of trace_modules (estimates under the monitor's default 5% "
     "overhead budget, with their interval). This server stops it after duration_ms (at most "
     "600000 ms) or when it exits; runtime_observe_stop ends it earlier and builds the "
     "profile.",
     params_observe_start, "session_id:string node:string", run_observe_start,
     "/api/monitor/observe/start", true, false, false},
    {"runtime_observe_stop", "Stop an observation",
     "Stops the node's observation, waits for the fused profile and returns it (with its "
     "profile_id for runtime_profile and runtime_compare). Leaves nothing on the node.",
     params_node, "session_id:string node:string", run_observe_stop, "/api/monitor/observe/stop",
     true, false, false},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, false, false, false},
};

/* The static queries' tools, from the registry: its parameters with
 * `project` added, as mcp_param. */
static struct mcp_tool *tool_table;

static const struct mcp_param param_project = P_PROJECT;

/* The choices "a|b|c" as a NULL-terminated array (kept for the process's
 * life, like the table). */
static const char *const *choices_split(const char *choices)
{
	if (!choices)
		return NULL;
	size_t n = 1;
	for (const char *c = choices; *c; c++)
		n += *c == '|';
	char *copy = gi_strdup(choices), *save = NULL;
	const char **out = gi_calloc(n + 1, sizeof(*out));
	size_t k = 0;
	for (char *v = strtok_r(copy, "|", &save); v && k < n; v = strtok_r(NULL, "|", &save))
		out[k++] = v;
	return out;
}

static void query_tool_build(const struct kg_query_def *d, struct mcp_tool *t)
{
	size_t n = 0;
	while (d->params[n].name)
		n++;
	struct mcp_param *params = gi_calloc(n + 2, sizeof(*params));
	size_t k = 0;
	for (const struct kg_param *q = d->params; q->name; q++) {
		if (q->rest_only)
			continue;
		params[k++] = (struct mcp_param){q->name,
		                                 q->type == KG_PARAM_INTEGER   ? MCP_PARAM_INTEGER
		                                 : q->type == KG_PARAM_BOOLEAN ? MCP_PARAM_BOOLEAN
		                                                               : MCP_PARAM_STRING,
		                                 q->required,
		                                 q->min,
		                                 q->max,
		                                 choices_split(q->choices),
		                                 q->description};
	}
	params[k] = param_project;
	*t = (struct mcp_tool){d->tool,   d->title, d->description, params, d->result,
	                       run_query, d->name,  false,          false,  false};
}

static void tool_table_build(void)
{
	size_t nq = 0, no = 0;
	while (kg_query_defs[nq].name)
		nq++;
	while (other_tools[no].name)
		no++;
	struct mcp_tool *t = gi_calloc(nq + no + 1, sizeof(*t));
	for (size_t i = 0; i < nq; i++)
		query_tool_build(&kg_query_defs[i], &t[i]);
	memcpy(t + nq, other_tools, (no + 1) * sizeof(*t));
	tool_table = t;
}

const struct mcp_tool *mcp_tools(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, tool_table_build);
	return tool_table;
}

const struct mcp_tool *mcp_tool_find(const char *name)
{
	for (const struct mcp_tool *t = mcp_tools(); t->name; t++)
		if (strcmp(t->name, name) == 0)
			return t;
	return NULL;
}

/* ---- schemas ------------------------------------------------------------ */

static const char *param_type_name(enum mcp_param_type t)
{
	switch (t) {
	case MCP_PARAM_INTEGER:
		return "integer";
	case MCP_PARAM_BOOLEAN:
		return "boolean";
	case MCP_PARAM_STRINGS:
		return "array";
	default:
		return "string";
	}
}

static json_t *input_schema(const struct mcp_tool *t)
{
	json_t *props = json_object(), *required = json_array();
	for (const struct mcp_param *p = t->params; p->name; p++) {
		json_t *d = json_pack("{s:s, s:s}", "type", param_type_name(p->type), "description",
		                      p->description);
		if (p->type == MCP_PARAM_INTEGER) {
			json_object_set_new(d, "minimum", json_integer(p->min));
			json_object_set_new(d, "maximum", json_integer(p->max));
		} else if (p->type == MCP_PARAM_STRING) {
			json_object_set_new(d, "maxLength", json_integer(MCP_STRING_ARG_MAX));
		} else if (p->type == MCP_PARAM_STRINGS) {
			json_object_set_new(d, "items",
			                    json_pack("{s:s, s:i}", "type", "string", "maxLength",
			                              MCP_STRING_ARG_MAX));
			json_object_set_new(d, "minItems", json_integer(p->min));
			json_object_set_new(d, "maxItems", json_integer(p->max));
		}
		if (p->enums) {
			json_t *e = json_array();
			for (const char *const *v = p->enums; *v; v++)
				json_array_append_new(e, json_string(*v));
			json_object_set_new(d, "enum", e);
		}
		json_object_set_new(props, p->name, d);
		if (p->required)
			json_array_append_new(required, json_string(p->name));
	}
	json_t *schema = json_pack("{s:s, s:o, s:b}", "type", "object", "properties", props,
	                           "additionalProperties", 0);
	if (json_array_size(required))
		json_object_set_new(schema, "required", required);
	else
		json_decref(required);
	return schema;
}

/* {"type":"object","properties":{key:{type}},"required":[keys]} from "key:type ...". */
static json_t *output_schema(const struct mcp_tool *t)
{
	json_t *props = json_object(), *required = json_array();
	char spec[512];
	gi_strlcpy(spec, t->output ? t->output : "", sizeof(spec));
	char *save = NULL;
	for (char *item = strtok_r(spec, " ", &save); item; item = strtok_r(NULL, " ", &save)) {
		char *colon = strchr(item, ':');
		if (!colon)
			continue;
		*colon = '\0';
		json_object_set_new(props, item, json_pack("{s:s}", "type", colon + 1));
		json_array_append_new(required, json_string(item));
	}
	json_t *schema = json_pack("{s:s, s:o}", "type", "object", "properties", props);
	if (json_array_size(required))
		json_object_set_new(schema, "required", required);
	else
		json_decref(required);
	return schema;
}

json_t *mcp_tool_json(const struct mcp_tool *t, const char *revision)
{
	char desc[2048];
	snprintf(desc, sizeof(desc), "%s%s", t->description,
	         t->live ? " Acts on a live node: offered only with --allow-runtime, for the "
	                   "nodes of --allow-node."
	                 : "");
	json_t *o = json_pack("{s:s, s:s, s:o}", "name", t->name, "description", desc,
	                      "inputSchema", input_schema(t));
	if (mcp_revision_at_least(revision, "2025-06-18")) {
		json_object_set_new(o, "title", json_string(t->title));
		json_object_set_new(o, "outputSchema", output_schema(t));
	}
	if (mcp_revision_at_least(revision, "2025-03-26"))
		json_object_set_new(o, "annotations",
		                    json_pack("{s:s, s:b, s:b, s:b, s:b}", "title", t->title,
		                              "readOnlyHint", !t->writes, "destructiveHint", 0,
		                              "idempotentHint", !t->live, "openWorldHint",
		                              t->live));
	return o;
}

/* ---- argument checks ---------------------------------------------------- */

static const struct mcp_param *param_find(const struct mcp_tool *t, const char *name)
{
	for (const struct mcp_param *p = t->params; p->name; p++)
		if (strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

static int string_check(json_t *v, const char *what, char *err, size_t n)
{
	if (!json_is_string(v)) {
		snprintf(err, n, "%s must be a string", what);
		return GI_EINVAL;
	}
	size_t len = json_string_length(v);
	if (len > MCP_STRING_ARG_MAX || strlen(json_string_value(v)) != len) {
		snprintf(err, n, "%s is longer than %d bytes or contains NUL", what,
		         MCP_STRING_ARG_MAX);
		return GI_EINVAL;
	}
	if (len == 0) {
		snprintf(err, n, "%s must not be empty", what);
		return GI_EINVAL;
	}
	return 0;
}

static int param_check(const struct mcp_param *p, json_t *v, char *err, size_t n)
{
	char what[128];
	snprintf(what, sizeof(what), "argument '%s'", p->name);
	switch (p->type) {
	case MCP_PARAM_STRING:
		if (string_check(v, what, err, n))
			return GI_EINVAL;
		if (p->enums) {
			for (const char *const *e = p->enums; *e; e++)
				if (strcmp(*e, json_string_value(v)) == 0)
					return 0;
			struct gi_buf b;
			gi_buf_init(&b, 0);
			for (const char *const *e = p->enums; *e; e++)
				gi_buf_printf(&b, "%s%s", e == p->enums ? "" : ", ", *e);
			snprintf(err, n, "%s must be one of: %s", what, gi_buf_str(&b));
			gi_buf_destroy(&b);
			return GI_EINVAL;
		}
		return 0;
	case MCP_PARAM_INTEGER:
		if (!json_is_integer(v) || json_integer_value(v) < p->min ||
		    json_integer_value(v) > p->max) {
			snprintf(err, n, "%s must be an integer from %lld to %lld", what, p->min,
			         p->max);
			return GI_EINVAL;
		}
		return 0;
	case MCP_PARAM_BOOLEAN:
		if (!json_is_boolean(v)) {
			snprintf(err, n, "%s must be true or false", what);
			return GI_EINVAL;
		}
		return 0;
	case MCP_PARAM_STRINGS:
		if (!json_is_array(v) || (long long)json_array_size(v) < p->min ||
		    (long long)json_array_size(v) > p->max) {
			snprintf(err, n, "%s must be an array of %lld to %lld strings", what,
			         p->min, p->max);
			return GI_EINVAL;
		}
		for (size_t i = 0; i < json_array_size(v); i++) {
			char item[160];
			snprintf(item, sizeof(item), "%s[%zu]", what, i);
			if (string_check(json_array_get(v, i), item, err, n))
				return GI_EINVAL;
		}
		return 0;
	}
	return GI_EINVAL;
}

int mcp_tool_args_check(const struct mcp_tool *t, json_t *args, char *err, size_t n)
{
	const char *key;
	json_t *v;
	json_object_foreach(args, key, v)
	{
		const struct mcp_param *p = param_find(t, key);
		if (!p) {
			struct gi_buf b;
			gi_buf_init(&b, 0);
			for (const struct mcp_param *q = t->params; q->name; q++)
				gi_buf_printf(&b, "%s%s", q == t->params ? "" : ", ", q->name);
			snprintf(err, n, "%s takes no argument '%.100s'; its arguments: %s",
			         t->name, key, b.len ? gi_buf_str(&b) : "none");
			gi_buf_destroy(&b);
			return GI_EINVAL;
		}
		if (json_is_null(v) && !p->required)
			continue;
		if (param_check(p, v, err, n))
			return GI_EINVAL;
	}
	for (const struct mcp_param *p = t->params; p->name; p++) {
		json_t *a = json_object_get(args, p->name);
		if (p->required && (!a || json_is_null(a))) {
			snprintf(err, n, "%s needs the argument '%s': %s", t->name, p->name,
			         p->description);
			return GI_EINVAL;
		}
	}
	return 0;
}
