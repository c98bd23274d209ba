/*
 * mcp_int.h - what the files of src/mcp share: the server's state, the tool
 * table's types, and the helpers that reach the daemons.
 */
#ifndef GIULIA_MCP_MCP_INT_H
#define GIULIA_MCP_MCP_INT_H

#include <pthread.h>

#include "mcp/mcp.h"

struct kg_db;

/* An observation this server started, stopped at `deadline_ms` at the
 * latest (MCP_OBSERVE_MS_MAX) or when the server is freed. */
struct mcp_watch {
	char node[256];
	long long deadline_ms;
};

struct mcp_server {
	bool static_in_process, allow_runtime;
	mcp_query_fn query;
	void *query_ctx;
	char *project, *worker_url, *monitor_url, *token, *transport;
	char *nodes[MCP_NODES_MAX + 1];
	bool connected[MCP_NODES_MAX]; /* the monitor has the server's cookie (lock) */
	int nnodes;

	pthread_mutex_t db_lock; /* guards db and db_path */
	struct kg_db *db;
	char *db_path;

	pthread_mutex_t lock; /* guards sessions, watches, last_profile_id */
	struct mcp_session *sessions[MCP_SESSIONS_MAX];
	int nsessions;
	struct mcp_watch watches[MCP_NODES_MAX];
	int nwatches;
	long long last_profile_id; /* -1: not read yet */

	pthread_cond_t wake;         /* reaper: a watch was added, or stopping */
	pthread_cond_t streams_wake; /* event streams: shutting down */
	int nstreams;                /* open GET streams (lock) */
	bool streams_stopping;
	pthread_t reaper;
	bool reaper_running, stopping;
};

enum mcp_param_type { MCP_PARAM_STRING, MCP_PARAM_INTEGER, MCP_PARAM_BOOLEAN, MCP_PARAM_STRINGS };

struct mcp_param {
	const char *name;
	enum mcp_param_type type;
	bool required;
	long long min, max;       /* integers: bounds; strings arrays: max items */
	const char *const *enums; /* strings: allowed values (NULL-terminated), or NULL */
	const char *description;
};

struct mcp_tool;

/* A tool's implementation: 0 with *result (an object, caller decrefs), or a
 * GI_E* code with a message an assistant can act on in `err`. */
typedef int (*mcp_tool_fn)(struct mcp_server *s, const struct mcp_tool *t, json_t *args,
                           json_t **result, char *err, size_t err_size);

struct mcp_tool {
	const char *name;
	const char *title;
	const char *description;
	const struct mcp_param *params; /* terminated by a NULL name */
	const char *output;             /* "key:type ..." of the output schema */
	mcp_tool_fn run;
	const char *target; /* kg_query name, or the REST path */
	bool live;          /* acts on a live node: needs allow_runtime */
	bool writes;        /* not read-only (index_scan writes .giulia/) */
	bool stdio_only;    /* connects to the node from this process: not in the worker,
	                     * which never holds a cookie */
};

/* Every tool, NULL-name terminated: one per static query of the registry
 * (graph/query_list.h), then the others (tools.c). Built once; static. */
const struct mcp_tool *mcp_tools(void);

/* The tool named `name`, or NULL. */
const struct mcp_tool *mcp_tool_find(const char *name);
/* The tool's definition for tools/list at `revision`. */
json_t *mcp_tool_json(const struct mcp_tool *t, const char *revision);
/* Checks `args` (an object or NULL) against the tool's parameters; 0 or
 * GI_EINVAL with a message in `err`. */
int mcp_tool_args_check(const struct mcp_tool *t, json_t *args, char *err, size_t err_size);

/* Calls the worker (`monitor` false) or the monitor: METHOD PATH with the
 * query pairs `query` (NULL-terminated key, value list; NULL values skipped)
 * and a JSON `body` for POST (borrowed, may be NULL). 0 with *out (caller
 * decrefs) for a 2xx answer; else a GI_E* code with the daemon's message or
 * what to start in `err`. */
int mcp_daemon_call(struct mcp_server *s, bool monitor, const char *method, const char *path,
                    const char *const *query, json_t *body, int timeout_ms, json_t **out, char *err,
                    size_t err_size);

/* Whether revision `a` is at least `b` (both YYYY-MM-DD). */
bool mcp_revision_at_least(const char *a, const char *b);

/* Registers an observation of `node` started by this server, to be stopped
 * after `duration_ms`; removes it with duration_ms < 0 (stopped by the
 * client). */
void mcp_watch_set(struct mcp_server *s, const char *node, long long duration_ms);

/* Runs `fn` with the server's index connection of the project `project`
 * (NULL: the default), opening (and first indexing, when there is no index)
 * as needed. */
int mcp_static_query(struct mcp_server *s, const char *project, const char *name,
                     const void *params, json_t **out, char *err, size_t err_size);

#endif
