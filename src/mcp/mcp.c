/*
 * mcp.c - the JSON-RPC 2.0 core of the MCP server (see mcp.h): version
 * negotiation, dispatch of requests and notifications, tools/call around the
 * tool table of tools.c, resources and prompts, and the plumbing the tools
 * share (daemon calls, the in-process index, the observation reaper).
 *
 * Every reply is built here and nowhere else, so that both transports give
 * the same answers. A tool's failure is a result with isError (the assistant
 * reads the message and tries again); only a malformed request is a JSON-RPC
 * error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "net/client.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/log.h"
#include "base/str.h"
#include "graph/query.h"
#include "profile/latest.h"
#include "mcp/mcp_int.h"

#ifndef GIULIA_VERSION
#define GIULIA_VERSION "0.1.0"
#endif

#define RPC_PARSE_ERROR      -32700
#define RPC_INVALID_REQUEST  -32600
#define RPC_METHOD_NOT_FOUND -32601
#define RPC_INVALID_PARAMS   -32602
#define RPC_INTERNAL_ERROR   -32603
#define RPC_RESOURCE_MISSING -32002

static const char *const revisions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05",
                                        NULL};

bool mcp_revision_supported(const char *revision)
{
	for (const char *const *r = revisions; revision && *r; r++)
		if (strcmp(*r, revision) == 0)
			return true;
	return false;
}

bool mcp_revision_at_least(const char *a, const char *b)
{
	return a && strcmp(a, b) >= 0; /* YYYY-MM-DD orders as text */
}

/* ---- server ------------------------------------------------------------- */

static char *dup_or_null(const char *s)
{
	return s && *s ? gi_strdup(s) : NULL;
}

static void *reaper_main(void *arg);

int mcp_server_new(const struct mcp_config *cfg, struct mcp_server **out)
{
	*out = NULL;
	int n = 0;
	while (cfg->allow_nodes && cfg->allow_nodes[n])
		n++;
	if (n > MCP_NODES_MAX)
		return GI_EINVAL;
	struct mcp_server *s = gi_calloc(1, sizeof(*s));
	s->static_in_process = cfg->static_in_process;
	s->allow_runtime = cfg->allow_runtime;
	s->query = cfg->query;
	s->query_ctx = cfg->query_ctx;
	s->project = gi_strdup(cfg->project && *cfg->project ? cfg->project : ".");
	s->worker_url = gi_strdup(cfg->worker_url ? cfg->worker_url : "http://127.0.0.1:4000");
	s->monitor_url = gi_strdup(cfg->monitor_url ? cfg->monitor_url : "http://127.0.0.1:4001");
	s->token = dup_or_null(cfg->token);
	s->transport = gi_strdup(cfg->transport ? cfg->transport : "stdio");
	for (int i = 0; i < n; i++)
		s->nodes[s->nnodes++] = gi_strdup(cfg->allow_nodes[i]);
	s->last_profile_id = -1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->db_lock, NULL);
	pthread_cond_init(&s->wake, NULL);
	pthread_cond_init(&s->streams_wake, NULL);
	if (s->allow_runtime && pthread_create(&s->reaper, NULL, reaper_main, s) == 0)
		s->reaper_running = true;
	*out = s;
	return 0;
}

static void observe_stop(struct mcp_server *s, const char *node)
{
	char err[512];
	json_t *body = json_pack("{s:s, s:i}", "node", node, "wait_ms", 30000), *r = NULL;
	int rc = mcp_daemon_call(s, true, "POST", "/api/monitor/observe/stop", NULL, body, 60000,
	                         &r, err, sizeof(err));
	if (rc && rc != GI_ENOTFOUND)
		gi_log_warn("mcp", "could not stop the observation of %s: %s", node, err);
	else
		gi_log_info("mcp", "stopped the observation of %s", node);
	json_decref(body);
	json_decref(r);
}

/* Stops observations past their deadline; at the end, every one left. */
static void *reaper_main(void *arg)
{
	struct mcp_server *s = arg;
	pthread_mutex_lock(&s->lock);
	for (;;) {
		long long now = gi_clock_mono_ms(), next = now + 60000;
		char due[256] = "";
		for (int i = 0; i < s->nwatches; i++) {
			if (s->stopping || s->watches[i].deadline_ms <= now) {
				gi_strlcpy(due, s->watches[i].node, sizeof(due));
				s->watches[i] = s->watches[--s->nwatches];
				break;
			}
			if (s->watches[i].deadline_ms < next)
				next = s->watches[i].deadline_ms;
		}
		if (due[0]) {
			pthread_mutex_unlock(&s->lock);
			observe_stop(s, due);
			pthread_mutex_lock(&s->lock);
			continue;
		}
		if (s->stopping)
			break;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		long long wait = next - now;
		ts.tv_sec += wait / 1000;
		ts.tv_nsec += (wait % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&s->wake, &s->lock, &ts);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

void mcp_watch_set(struct mcp_server *s, const char *node, long long duration_ms)
{
	pthread_mutex_lock(&s->lock);
	int i = 0;
	while (i < s->nwatches && strcmp(s->watches[i].node, node) != 0)
		i++;
	if (duration_ms < 0) {
		if (i < s->nwatches)
			s->watches[i] = s->watches[--s->nwatches];
	} else if (i < s->nwatches || s->nwatches < MCP_NODES_MAX) {
		if (i == s->nwatches)
			s->nwatches++;
		gi_strlcpy(s->watches[i].node, node, sizeof(s->watches[i].node));
		s->watches[i].deadline_ms = gi_clock_mono_ms() + duration_ms;
	}
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
}

void mcp_server_shutdown(struct mcp_server *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->streams_stopping = true;
	pthread_cond_broadcast(&s->streams_wake);
	pthread_mutex_unlock(&s->lock);
}

void mcp_server_free(struct mcp_server *s)
{
	if (!s)
		return;
	mcp_server_shutdown(s);
	pthread_mutex_lock(&s->lock);
	while (s->nstreams > 0) /* their connections are being torn down */
		pthread_cond_wait(&s->streams_wake, &s->lock);
	pthread_mutex_unlock(&s->lock);
	if (s->reaper_running) {
		pthread_mutex_lock(&s->lock);
		s->stopping = true;
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->reaper, NULL);
	}
	for (int i = 0; i < s->nsessions; i++)
		gi_free(s->sessions[i]);
	kg_db_close(s->db);
	gi_free(s->db_path);
	for (int i = 0; i < s->nnodes; i++)
		gi_free(s->nodes[i]);
	gi_free(s->project);
	gi_free(s->worker_url);
	gi_free(s->monitor_url);
	gi_free(s->token);
	gi_free(s->transport);
	pthread_cond_destroy(&s->wake);
	pthread_cond_destroy(&s->streams_wake);
	pthread_mutex_destroy(&s->db_lock);
	pthread_mutex_destroy(&s->lock);
	gi_free(s);
}

/* ---- reaching the daemons and the index --------------------------------- */

int mcp_daemon_call(struct mcp_server *s, bool monitor, const char *method, const char *path,
                    const char *const *query, json_t *body, int timeout_ms, json_t **out, char *err,
                    size_t n)
{
	*out = NULL;
	const char *base = monitor ? s->monitor_url : s->worker_url;
	const char *who = monitor ? "monitor" : "worker";
	char *url = net_client_url(base, path, query);
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	struct net_call call = {method, url, text, s->token, timeout_ms};
	int status = 0;
	json_t *resp = NULL;
	int rc = net_client_call(&call, &status, &resp);
	free(text);
	gi_free(url);
	if (rc == GI_ECONNECT) {
		snprintf(err, n,
		         "the %s at %s is not reachable: start the daemons with `giulia serve` "
		         "(or give the MCP server --%s URL)",
		         who, base, who);
		return rc;
	}
	if (rc) {
		snprintf(err, n, "calling the %s at %s failed: %s", who, base, gi_strerror(rc));
		return rc;
	}
	if (status >= 200 && status < 300 && json_is_object(resp)) {
		*out = resp;
		return 0;
	}
	const char *msg = json_string_value(json_object_get(resp, "error"));
	snprintf(err, n, "%s: %s", who, msg ? msg : "answered without JSON");
	json_decref(resp);
	switch (status) {
	case 400:
		return GI_EINVAL;
	case 401:
		return GI_EDENIED;
	case 404:
		return GI_ENOTFOUND;
	case 409:
		return GI_EBUSY;
	case 504:
		return GI_ETIMEOUT;
	default:
		return GI_EHTTP;
	}
}

void mcp_query_error(int rc, const char *name, const struct kg_query_params *p, const char *db,
                     char *err, size_t n)
{
	if (rc == GI_ENOTFOUND && p->function)
		snprintf(err, n,
		         "%s: unknown function %.256s.%.128s; index_functions with module %.256s "
		         "lists its functions",
		         name, p->module, p->function, p->module);
	else if (rc == GI_ENOTFOUND)
		snprintf(err, n,
		         "%s: unknown module '%.256s'; index_modules lists the project's "
		         "modules (names as in source, Erlang modules as :name)",
		         name, p->module ? p->module : (p->from ? p->from : "?"));
	else if (rc == GI_EINVAL && kg_query_error_message())
		snprintf(err, n, "%s: %s", name, kg_query_error_message());
	else if (rc == GI_EINVAL)
		snprintf(err, n, "%s: invalid or missing arguments", name);
	else if (rc == GI_ECORRUPT || rc == GI_EDBVERSION)
		snprintf(err, n, "the index %s is unusable (%s): call index_scan with force true",
		         db, gi_strerror(rc));
	else
		snprintf(err, n, "%s on %s failed: %s", name, db, gi_strerror(rc));
}

/* Opens (indexing first when there is none) the index of `project`; called
 * with db_lock held. */
static int index_open(struct mcp_server *s, const char *project, char *err, size_t n)
{
	char *real = NULL;
	if (gi_fs_realdir(project, &real) != 0) {
		snprintf(err, n, "project %.512s is not a directory", project);
		return GI_EINVAL;
	}
	char *path = kg_db_default_path(real);
	int rc = 0;
	if (s->db && s->db_path && strcmp(s->db_path, path) == 0)
		goto done;
	kg_db_close(s->db);
	gi_free(s->db_path);
	s->db = NULL;
	s->db_path = NULL;
	if (access(path, F_OK) != 0) {
		gi_log_info("mcp", "%s has no index yet: indexing it", real);
		struct kg_index_options opt = {0};
		json_t *summary = NULL;
		rc = kg_index_project(real, NULL, &opt, &summary);
		json_decref(summary);
		if (rc) {
			snprintf(err, n, "indexing %.512s failed: %s", real, gi_strerror(rc));
			goto done;
		}
	}
	rc = kg_db_open(path, false, &s->db);
	if (rc) {
		snprintf(err, n, "cannot open the index %.512s: %s", path, gi_strerror(rc));
		goto done;
	}
	kg_db_refresh_on_query(s->db, true); /* answers from the project's current source */
	s->db_path = path;
	path = NULL;
done:
	gi_free(path);
	gi_free(real);
	return rc;
}

int mcp_static_query(struct mcp_server *s, const char *project, const char *name,
                     const void *params, json_t **out, char *err, size_t n)
{
	const struct kg_query_params *p = params;
	*out = NULL;
	pthread_mutex_lock(&s->db_lock);
	int rc = index_open(s, project ? project : s->project, err, n);
	if (rc == 0) {
		/* preflight and briefing: the latest profile in the default data
		 * directory's store, as the CLI reads it (docs/ASSIST.md) */
		struct kg_query_params with = *p;
		json_t *profile = NULL;
		char *root = NULL;
		if ((strcmp(name, "preflight") == 0 || strcmp(name, "briefing") == 0) &&
		    kg_db_root(s->db, &root) == 0 &&
		    profile_latest_in_data_dir(NULL, root, &profile) != 0)
			profile = NULL;
		gi_free(root);
		with.profile = profile;
		rc = kg_query(s->db, name, &with, out);
		json_decref(profile);
		if (rc)
			mcp_query_error(rc, name, p, s->db_path, err, n);
	}
	pthread_mutex_unlock(&s->db_lock);
	return rc;
}

/* ---- JSON-RPC replies --------------------------------------------------- */

static json_t *rpc_result(json_t *id, json_t *result)
{
	return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(), "result",
	                 result);
}

static json_t *rpc_error(json_t *id, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static json_t *rpc_error(json_t *id, int code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id ? id : json_null(),
	                 "error", "code", code, "message", msg);
}

/* ---- methods ------------------------------------------------------------ */

static const char instructions[] =
    "Giulia answers questions about an Elixir/Erlang codebase and its running BEAM nodes. "
    "Static tools (index_*, knowledge_*) read the project's knowledge graph: start with "
    "index_summary, find names with index_modules, check knowledge_impact before a change. "
    "Runtime tools (runtime_*) read observations and fused profiles; runtime_profile with "
    "format text gives ranked advice on what to change first.";

static json_t *method_initialize(struct mcp_server *s, struct mcp_session *sess, json_t *params,
                                 json_t *id, bool *ok)
{
	const char *asked = json_string_value(json_object_get(params, "protocolVersion"));
	if (!asked)
		return rpc_error(id, RPC_INVALID_PARAMS,
		                 "initialize needs params.protocolVersion (a string)");
	(void)s;
	const char *rev = mcp_revision_supported(asked) ? asked : MCP_REVISION_LATEST;
	gi_strlcpy(sess->revision, rev, sizeof(sess->revision));
	sess->initialized = false;
	/* stdio polls the worker for new profiles; HTTP pushes on the GET stream */
	json_t *caps =
	    json_pack("{s:{s:b}, s:{s:b, s:b}, s:{s:b}}", "tools", "listChanged", 0, "resources",
	              "subscribe", 0, "listChanged", 1, "prompts", "listChanged", 0);
	json_t *info = json_pack("{s:s, s:s}", "name", "giulia", "version", GIULIA_VERSION);
	if (mcp_revision_at_least(rev, "2025-06-18"))
		json_object_set_new(info, "title", json_string("Giulia code intelligence"));
	json_t *result = json_pack("{s:s, s:o, s:o, s:s}", "protocolVersion", rev, "capabilities",
	                           caps, "serverInfo", info, "instructions", instructions);
	*ok = true;
	return rpc_result(id, result);
}

static bool tool_offered(const struct mcp_server *s, const struct mcp_tool *t)
{
	return (!t->live || s->allow_runtime) && (!t->stdio_only || s->static_in_process);
}

json_t *mcp_tools_json(struct mcp_server *s, bool all)
{
	json_t *tools = json_array();
	for (const struct mcp_tool *t = mcp_tools(); t->name; t++)
		if (all || tool_offered(s, t))
			json_array_append_new(tools, mcp_tool_json(t, MCP_REVISION_LATEST));
	return tools;
}

static json_t *method_tools_list(struct mcp_server *s, struct mcp_session *sess, json_t *id)
{
	json_t *tools = json_array();
	for (const struct mcp_tool *t = mcp_tools(); t->name; t++)
		if (tool_offered(s, t))
			json_array_append_new(tools, mcp_tool_json(t, sess->revision));
	return rpc_result(id, json_pack("{s:o}", "tools", tools));
}

/* The short text of a result: its compact JSON. */
static json_t *tool_result(struct mcp_session *sess, json_t *structured)
{
	const char *text = json_string_value(json_object_get(structured, "text"));
	char *dump = text ? NULL : json_dumps(structured, JSON_COMPACT | JSON_REAL_PRECISION(12));
	json_t *r = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text",
	                      text ? text : (dump ? dump : "{}"), "isError", 0);
	free(dump);
	if (mcp_revision_at_least(sess->revision, "2025-06-18"))
		json_object_set(r, "structuredContent", structured);
	return r;
}

static json_t *tool_error(const char *msg)
{
	return json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", msg, "isError",
	                 1);
}

static json_t *method_tools_call(struct mcp_server *s, struct mcp_session *sess, json_t *params,
                                 json_t *id)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments");
	if (!name)
		return rpc_error(id, RPC_INVALID_PARAMS, "tools/call needs params.name (a string)");
	if (args && !json_is_object(args) && !json_is_null(args))
		return rpc_error(id, RPC_INVALID_PARAMS, "params.arguments must be an object");
	const struct mcp_tool *t = mcp_tool_find(name);
	if (!t)
		return rpc_error(id, RPC_INVALID_PARAMS,
		                 "unknown tool '%.200s'; tools/list lists them", name);
	char err[2048];
	if (t->stdio_only && !s->static_in_process) {
		snprintf(err, sizeof(err),
		         "%s runs only in `giulia mcp` (stdio): the worker never holds a cookie; "
		         "use runtime_observe_start with trace_modules instead",
		         name);
		return rpc_result(id, tool_error(err));
	}
	if (!tool_offered(s, t)) {
		snprintf(err, sizeof(err),
		         "%s acts on a live node and is disabled on this server; restart it with "
		         "--allow-runtime --allow-node NODE to allow it for NODE",
		         name);
		return rpc_result(id, tool_error(err));
	}
	json_t *empty = json_object();
	json_t *a = json_is_object(args) ? args : empty;
	json_t *result = NULL;
	err[0] = '\0';
	int rc = mcp_tool_args_check(t, a, err, sizeof(err));
	if (rc == 0)
		rc = t->run(s, t, a, &result, err, sizeof(err));
	json_decref(empty);
	if (rc) {
		json_decref(result);
		if (!err[0])
			snprintf(err, sizeof(err), "%s failed: %s", name, gi_strerror(rc));
		return rpc_result(id, tool_error(err));
	}
	json_t *r = tool_result(sess, result);
	json_decref(result);
	return rpc_result(id, r);
}

/* ---- resources ---------------------------------------------------------- */

static json_t *resource(const char *uri, const char *name, const char *description)
{
	return json_pack("{s:s, s:s, s:s, s:s}", "uri", uri, "name", name, "description",
	                 description, "mimeType", "application/json");
}

static json_t *method_resources_list(struct mcp_server *s, json_t *id)
{
	json_t *list = json_array();
	json_array_append_new(list, resource("giulia://project/summary", "Project summary",
	                                     "index_summary of the server's project"));
	char err[512];
	json_t *profiles = NULL;
	const char *q[] = {"limit", "20", NULL};
	if (mcp_daemon_call(s, false, "GET", "/api/runtime/profiles", q, NULL, 5000, &profiles, err,
	                    sizeof(err)) == 0) {
		size_t i;
		json_t *p;
		json_array_foreach(json_object_get(profiles, "profiles"), i, p)
		{
			char uri[64], name[300];
			snprintf(uri, sizeof(uri), "giulia://profile/%lld",
			         (long long)json_integer_value(json_object_get(p, "id")));
			snprintf(name, sizeof(name), "Profile %lld of %.200s",
			         (long long)json_integer_value(json_object_get(p, "id")),
			         json_string_value(json_object_get(p, "node")) ?: "?");
			json_array_append_new(list, resource(uri, name, "A fused runtime profile"));
		}
	}
	json_decref(profiles);
	return rpc_result(id, json_pack("{s:o}", "resources", list));
}

static json_t *template(const char *uri, const char *name, const char *description)
{
	return json_pack("{s:s, s:s, s:s, s:s}", "uriTemplate", uri, "name", name, "description",
	                 description, "mimeType", "application/json");
}

static json_t *method_templates_list(json_t *id)
{
	json_t *list =
	    json_pack("[o, o, o]",
	              template("giulia://module/{name}", "Module details",
	                       "index_module_details of a module of the server's project"),
	              template("giulia://profile/{id}", "Runtime profile",
	                       "A fused profile by id, or giulia://profile/latest"),
	              template("giulia://observation/{session_id}", "Observation",
	                       "A stored observation of a live node"));
	return rpc_result(id, json_pack("{s:o}", "resourceTemplates", list));
}

static int resource_fetch(struct mcp_server *s, const char *uri, json_t **out, char *err, size_t n)
{
	const char *prefix[] = {"giulia://module/", "giulia://profile/", "giulia://observation/",
	                        "giulia://project/summary"};
	const char *tool = NULL, *key = NULL, *rest = NULL;
	if (gi_str_starts_with(uri, prefix[0])) {
		tool = "index_module_details";
		key = "module";
		rest = uri + strlen(prefix[0]);
	} else if (gi_str_starts_with(uri, prefix[1])) {
		tool = "runtime_profile";
		key = "id";
		rest = uri + strlen(prefix[1]);
	} else if (gi_str_starts_with(uri, prefix[2])) {
		tool = "runtime_observation";
		key = "session_id";
		rest = uri + strlen(prefix[2]);
	} else if (strcmp(uri, prefix[3]) == 0) {
		tool = "index_summary";
	} else {
		snprintf(err, n, "unknown resource %.300s", uri);
		return GI_ENOTFOUND;
	}
	const struct mcp_tool *t = mcp_tool_find(tool);
	json_t *args = key ? json_pack("{s:s}", key, rest) : json_object();
	int rc = mcp_tool_args_check(t, args, err, n);
	if (rc == 0)
		rc = t->run(s, t, args, out, err, n);
	json_decref(args);
	return rc;
}

static json_t *method_resources_read(struct mcp_server *s, json_t *params, json_t *id)
{
	const char *uri = json_string_value(json_object_get(params, "uri"));
	if (!uri || json_string_length(json_object_get(params, "uri")) > MCP_STRING_ARG_MAX)
		return rpc_error(id, RPC_INVALID_PARAMS,
		                 "resources/read needs params.uri (a string)");
	char err[2048] = "";
	json_t *doc = NULL;
	int rc = resource_fetch(s, uri, &doc, err, sizeof(err));
	if (rc) {
		json_t *e = rpc_error(
		    id, rc == GI_ENOTFOUND ? RPC_RESOURCE_MISSING : RPC_INTERNAL_ERROR, "%s", err);
		json_object_set_new(json_object_get(e, "error"), "data",
		                    json_pack("{s:s}", "uri", uri));
		return e;
	}
	char *text = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(12));
	json_decref(doc);
	json_t *r = json_pack("{s:[{s:s, s:s, s:s}]}", "contents", "uri", uri, "mimeType",
	                      "application/json", "text", text ? text : "{}");
	free(text);
	return rpc_result(id, r);
}

/* ---- prompts ------------------------------------------------------------ */

static json_t *method_prompts_list(json_t *id)
{
	json_t *list = json_pack(
	    "[{s:s, s:s, s:[{s:s, s:s, s:b}, {s:s, s:s, s:b}]},"
	    " {s:s, s:s, s:[{s:s, s:s, s:b}]}, {s:s, s:s, s:[]}]",
	    "name", "profile_node", "description",
	    "Profile a live node under load and say what to change first", "arguments", "name",
	    "node", "description", "node name (name@host), on the server's allow-list", "required",
	    1, "name", "seconds", "description", "how long to observe (default 30)", "required", 0,
	    "name", "change_impact", "description", "What breaks if I change MODULE", "arguments",
	    "name", "module", "description", "module name as in source", "required", 1, "name",
	    "project_overview", "description", "Orient yourself in the project", "arguments");
	return rpc_result(id, json_pack("{s:o}", "prompts", list));
}

static json_t *prompt_message(const char *description, const char *text)
{
	return json_pack("{s:s, s:[{s:s, s:{s:s, s:s}}]}", "description", description, "messages",
	                 "role", "user", "content", "type", "text", "text", text);
}

static json_t *method_prompts_get(json_t *params, json_t *id)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments");
	if (!name)
		return rpc_error(id, RPC_INVALID_PARAMS,
		                 "prompts/get needs params.name (a string)");
	if (args && !json_is_object(args))
		return rpc_error(id, RPC_INVALID_PARAMS, "params.arguments must be an object");
	const char *node = json_string_value(json_object_get(args, "node"));
	const char *seconds = json_string_value(json_object_get(args, "seconds"));
	const char *module = json_string_value(json_object_get(args, "module"));
	char text[2048];
	if (strcmp(name, "profile_node") == 0) {
		if (!node || strlen(node) > 255)
			return rpc_error(id, RPC_INVALID_PARAMS,
			                 "profile_node needs the argument node");
		int64_t secs = 30;
		if (seconds && gi_parse_int64(seconds, 1, MCP_OBSERVE_MS_MAX / 1000, &secs) != 0)
			return rpc_error(id, RPC_INVALID_PARAMS, "seconds must be 1 to %d",
			                 MCP_OBSERVE_MS_MAX / 1000);
		snprintf(
		    text, sizeof(text),
		    "Profile the BEAM node %s while it is under its usual load and tell me what "
		    "to change first. Use runtime_observe_start on %s with duration_ms %lld "
		    "(trace the modules knowledge_change_risk or knowledge_hubs point at), wait, "
		    "then runtime_observe_stop and read the profile with runtime_profile "
		    "format text. Explain the top recommendation with its evidence and the code "
		    "to change (index_module_details, index_functions).",
		    node, node, (long long)secs * 1000);
		return rpc_result(id, prompt_message("Profile a node and advise", text));
	}
	if (strcmp(name, "change_impact") == 0) {
		if (!module || strlen(module) > 512)
			return rpc_error(id, RPC_INVALID_PARAMS,
			                 "change_impact needs the argument module");
		snprintf(text, sizeof(text),
		         "What breaks if I change %s? Use knowledge_impact (module %s), "
		         "knowledge_dependents and index_module_details to list the modules and "
		         "functions affected, how far away they are, which are tested, and what to "
		         "re-test first.",
		         module, module);
		return rpc_result(id, prompt_message("Impact of a change", text));
	}
	if (strcmp(name, "project_overview") == 0)
		return rpc_result(
		    id, prompt_message("Project overview",
		                       "Give me an overview of this project: use index_summary, "
		                       "knowledge_topology, knowledge_hubs and knowledge_heatmap, "
		                       "then name the three modules a newcomer should read first "
		                       "and the riskiest ones to touch."));
	return rpc_error(id, RPC_INVALID_PARAMS, "unknown prompt '%.200s'; prompts/list lists them",
	                 name);
}

/* ---- dispatch ----------------------------------------------------------- */

static bool id_valid(json_t *id)
{
	return json_is_string(id) || json_is_integer(id);
}

static json_t *handle_one(struct mcp_server *s, struct mcp_session *sess, json_t *msg,
                          bool *is_initialize)
{
	if (!json_is_object(msg))
		return rpc_error(NULL, RPC_INVALID_REQUEST, "a JSON-RPC message must be an object");
	json_t *id = json_object_get(msg, "id");
	const char *version = json_string_value(json_object_get(msg, "jsonrpc"));
	json_t *method_v = json_object_get(msg, "method");
	if (!version || strcmp(version, "2.0") != 0)
		return rpc_error(id_valid(id) ? id : NULL, RPC_INVALID_REQUEST,
		                 "jsonrpc must be \"2.0\"");
	if (!method_v) {
		if (id && (json_object_get(msg, "result") || json_object_get(msg, "error")))
			return NULL; /* a response to us: we send no requests, so nothing to do */
		return rpc_error(id_valid(id) ? id : NULL, RPC_INVALID_REQUEST,
		                 "a request needs a method");
	}
	const char *method = json_string_value(method_v);
	if (!method)
		return rpc_error(id_valid(id) ? id : NULL, RPC_INVALID_REQUEST,
		                 "method must be a string");
	if (id && !id_valid(id))
		return rpc_error(NULL, RPC_INVALID_REQUEST, "id must be a string or an integer");
	json_t *params = json_object_get(msg, "params");
	if (params && !json_is_object(params))
		return id ? rpc_error(id, RPC_INVALID_PARAMS, "params must be an object") : NULL;
	if (!id) {
		if (strcmp(method, "notifications/initialized") == 0 && sess->revision[0])
			sess->initialized = true;
		return NULL; /* other notifications (cancelled, progress, roots) need nothing */
	}
	if (strcmp(method, "initialize") == 0)
		return method_initialize(s, sess, params, id, is_initialize);
	if (strcmp(method, "ping") == 0)
		return rpc_result(id, json_object());
	if (!sess->revision[0])
		return rpc_error(id, RPC_INVALID_REQUEST,
		                 "%s before initialize: send initialize first", method);
	if (strcmp(method, "tools/list") == 0)
		return method_tools_list(s, sess, id);
	if (strcmp(method, "tools/call") == 0)
		return method_tools_call(s, sess, params, id);
	if (strcmp(method, "resources/list") == 0)
		return method_resources_list(s, id);
	if (strcmp(method, "resources/templates/list") == 0)
		return method_templates_list(id);
	if (strcmp(method, "resources/read") == 0)
		return method_resources_read(s, params, id);
	if (strcmp(method, "prompts/list") == 0)
		return method_prompts_list(id);
	if (strcmp(method, "prompts/get") == 0)
		return method_prompts_get(params, id);
	return rpc_error(id, RPC_METHOD_NOT_FOUND, "unknown method '%.200s'", method);
}

static char *reply_text(json_t *reply)
{
	if (!reply)
		return NULL;
	char *text = json_dumps(reply, JSON_COMPACT | JSON_REAL_PRECISION(12));
	json_decref(reply);
	char *out = text ? gi_strdup(text) : NULL;
	free(text);
	return out;
}

void mcp_session_handle(struct mcp_server *s, struct mcp_session *sess, const char *text,
                        size_t len, char **reply_out, bool *is_initialize)
{
	bool init = false;
	*reply_out = NULL;
	if (is_initialize)
		*is_initialize = false;
	if (len > MCP_MESSAGE_MAX) {
		*reply_out = reply_text(rpc_error(NULL, RPC_INVALID_REQUEST,
		                                  "message larger than %d bytes", MCP_MESSAGE_MAX));
		return;
	}
	json_error_t jerr;
	json_t *msg = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (!msg) {
		*reply_out = reply_text(rpc_error(NULL, RPC_PARSE_ERROR,
		                                  "parse error at line %d column %d: %.200s",
		                                  jerr.line, jerr.column, jerr.text));
		return;
	}
	json_t *reply = NULL;
	if (json_is_array(msg)) {
		if (strcmp(sess->revision, "2025-03-26") != 0 || json_array_size(msg) == 0 ||
		    json_array_size(msg) > MCP_BATCH_MAX) {
			reply =
			    rpc_error(NULL, RPC_INVALID_REQUEST,
			              "batches are accepted only in revision 2025-03-26, with 1 to "
			              "%d messages",
			              MCP_BATCH_MAX);
		} else {
			reply = json_array();
			size_t i;
			json_t *m;
			json_array_foreach(msg, i, m)
			{
				json_t *method = json_object_get(m, "method");
				bool initialize =
				    json_is_string(method) &&
				    strcmp(json_string_value(method), "initialize") == 0;
				json_t *r = initialize ? rpc_error(json_object_get(m, "id"),
				                                   RPC_INVALID_REQUEST,
				                                   "initialize cannot be batched")
				                       : handle_one(s, sess, m, &init);
				if (r)
					json_array_append_new(reply, r);
			}
			if (json_array_size(reply) == 0) {
				json_decref(reply);
				reply = NULL;
			}
		}
	} else {
		reply = handle_one(s, sess, msg, &init);
	}
	json_decref(msg);
	if (is_initialize)
		*is_initialize = init;
	*reply_out = reply_text(reply);
}

/* ---- the tool list as documentation ------------------------------------- */

char *mcp_tools_markdown(struct mcp_server *s)
{
	(void)s;
	struct gi_buf b;
	gi_buf_init(&b, 0);
	gi_buf_puts(&b, "# Giulia MCP tools\n\n"
	                "Generated by `giulia mcp --list-tools --format markdown` from the "
	                "registry of static queries (src/graph/query_list.h) and the tool table "
	                "(src/mcp/tools.c); a test checks that this file matches it.\n"
	                "Tools marked *live* are offered only with `--allow-runtime` and act "
	                "only on the nodes of `--allow-node`.\n\n"
	                "| tool | arguments | what it does |\n|---|---|---|\n");
	for (const struct mcp_tool *t = mcp_tools(); t->name; t++) {
		gi_buf_printf(&b, "| `%s`%s | ", t->name, t->live ? " (live)" : "");
		for (const struct mcp_param *p = t->params; p->name; p++)
			gi_buf_printf(&b, "%s`%s`%s", p == t->params ? "" : ", ", p->name,
			              p->required ? "" : "?");
		if (!t->params->name)
			gi_buf_puts(&b, "-");
		gi_buf_printf(&b, " | %s |\n", t->description);
	}
	return gi_buf_take(&b);
}
