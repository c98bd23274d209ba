/*
 * mcp.h - Giulia as a Model Context Protocol server (docs/MCP.md): the
 * JSON-RPC 2.0 core shared by the two transports, `giulia mcp` (stdio,
 * newline-delimited) and `/mcp` on the worker (Streamable HTTP).
 *
 * One struct mcp_server holds the configuration, the tool table and the HTTP
 * sessions; one struct mcp_session is the state of one client (the revision
 * negotiated by `initialize`). Tools are read-only views of Giulia: the
 * static queries (kg_query, in this process or through the worker's REST
 * API), the worker's observations and profiles, and the monitor's runtime
 * reads. Tools that act on a live node (connect, pulse, top, hot spots,
 * alerts, trace, observe start/stop) exist only when the server was started
 * with `allow_runtime` and only for the nodes of `allow_nodes`, with the caps
 * MCP_TRACE_MS_MAX, MCP_TRACE_MODULES_MAX and MCP_OBSERVE_MS_MAX enforced
 * here. No tool evaluates code given by the client; a cookie is never a tool
 * argument and never appears in a reply or a log line.
 *
 * Revisions negotiated: 2025-11-25 (latest), 2025-06-18, 2025-03-26 and
 * 2024-11-05; outputSchema and structuredContent from 2025-06-18, batches
 * only in 2025-03-26 (the one revision that had them).
 *
 * Thread-safety: an mcp_server may serve any number of threads at once (its
 * HTTP sessions are guarded; static queries in this process are serialised
 * on one connection). One mcp_session is used by one thread at a time.
 */
#ifndef GIULIA_MCP_MCP_H
#define GIULIA_MCP_MCP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define MCP_MESSAGE_MAX       (4 * 1024 * 1024) /* one JSON-RPC message, bytes */
#define MCP_STRING_ARG_MAX    4096              /* one string argument of a tool */
#define MCP_BATCH_MAX         64                /* messages in one 2025-03-26 batch */
#define MCP_SESSIONS_MAX      256               /* HTTP sessions kept; the oldest idle goes */
#define MCP_TRACE_MS_MAX      10000             /* runtime_trace duration_ms */
#define MCP_TRACE_MODULES_MAX 16                /* runtime_trace modules */
#define MCP_OBSERVE_MS_MAX    600000            /* runtime_observe_start duration_ms */
#define MCP_PULSE_WINDOW_MAX  5000              /* runtime_pulse/top window_ms */
#define MCP_NODES_MAX         64                /* allow_nodes entries */
#define MCP_STREAMS_MAX       32                /* open GET event streams */

#define MCP_REVISION_LATEST "2025-11-25"

struct kg_query_params;

/* Answers the static query `name` on the project at `project` (NULL: the
 * default one) with kg_query: 0 with *out (caller decrefs), or a GI_E* code
 * with a message in `err`. Called from any thread. */
typedef int (*mcp_query_fn)(void *ctx, const char *project, const char *name,
                            const struct kg_query_params *p, json_t **out, char *err,
                            size_t err_size);

struct mcp_config {
	/* Static tools: true runs kg_query in this process on `project`'s index
	 * (stdio; indexes the project first when it has no index) and lets
	 * runtime tools connect from this process; false uses `query` (the
	 * worker's own /mcp, from its connection pool), else the worker's REST
	 * API. */
	bool static_in_process;
	mcp_query_fn query;
	void *query_ctx;
	const char *project;            /* default project directory (NULL: "."); copied */
	const char *worker_url;         /* e.g. http://127.0.0.1:4000; copied */
	const char *monitor_url;        /* e.g. http://127.0.0.1:4001; copied */
	const char *token;              /* bearer token for both daemons, or NULL; copied */
	bool allow_runtime;             /* offer the tools that act on a live node */
	const char *const *allow_nodes; /* NULL-terminated node names; copied */
	const char *transport;          /* "stdio" or "http", for capabilities */
};

struct mcp_server;

struct mcp_session {
	char revision[16]; /* negotiated revision, "" before initialize */
	bool initialized;  /* the client sent notifications/initialized */
	char id[40];       /* HTTP session id, "" for stdio */
	long long last_used_ms;
};

/* Creates a server; *out is the caller's (mcp_server_free). GI_EINVAL for a
 * node list over MCP_NODES_MAX or an invalid node name. */
int mcp_server_new(const struct mcp_config *cfg, struct mcp_server **out);
/* Ends the open event streams (their readers return -1 within a second), so
 * that an HTTP server can stop without waiting on them. Thread-safe. */
void mcp_server_shutdown(struct mcp_server *s);
/* Stops the observations this server started (nothing left running on the
 * monitor on its behalf), closes its index connection and frees it. NULL does
 * nothing. */
void mcp_server_free(struct mcp_server *s);

/* Handles one JSON-RPC message (or a batch where the session's revision has
 * them) of `len` bytes. *reply_out gets the reply text (caller frees with
 * gi_free), or NULL when nothing is to be answered (notifications,
 * responses). Never fails: malformed input gets a JSON-RPC error reply
 * (-32700 parse error, -32600 invalid request, -32601 unknown method,
 * -32602 invalid params). *is_initialize (may be NULL) is set when the
 * message was an initialize request that succeeded. */
void mcp_session_handle(struct mcp_server *s, struct mcp_session *sess, const char *text,
                        size_t len, char **reply_out, bool *is_initialize);

/* The message for a failed kg_query `name` with `params` (GI_ENOTFOUND: what
 * was not found and which tool lists the right names), into `err`. */
void mcp_query_error(int rc, const char *name, const struct kg_query_params *params, const char *db,
                     char *err, size_t err_size);

/* True when `revision` is one this server negotiates. */
bool mcp_revision_supported(const char *revision);

/* The tool list as `tools/list` gives it at the latest revision (caller
 * decrefs); with `all`, the live-node tools are included whatever the
 * configuration. */
json_t *mcp_tools_json(struct mcp_server *s, bool all);
/* The tool list as Markdown (docs/MCP_TOOLS.md is this text); caller frees
 * with gi_free. */
char *mcp_tools_markdown(struct mcp_server *s);

/* ---- transports ---- */

/* Serves newline-delimited JSON-RPC on `in_fd`/`out_fd` until end of input.
 * Lines longer than MCP_MESSAGE_MAX are answered with a parse error and
 * skipped. With a worker configured, sends
 * notifications/resources/list_changed when a new profile appears. Returns 0
 * at end of input, GI_EIO when the output cannot be written. */
int mcp_stdio_run(struct mcp_server *s, int in_fd, int out_fd);

/* One request of the Streamable HTTP transport, as the worker's route sees
 * it. Pointers are borrowed for the call; absent headers are NULL. */
struct mcp_http_request {
	const char *method; /* POST, GET, DELETE */
	const char *origin, *accept, *protocol_version, *session_id;
	const char *body;
	size_t body_len;
};

struct mcp_http_response {
	int status;
	const char *content_type; /* static string, or NULL for no body */
	char *body;               /* gi_malloc'd (caller frees), or NULL */
	size_t body_len;
	char session_id[40]; /* Mcp-Session-Id to send, or "" */
	/* GET: an event stream instead of `body`. `read` blocks until it has
	 * bytes (notifications, or a keep-alive comment every 10 s) and returns
	 * their count, or -1 when the stream ends (mcp_server_shutdown, the
	 * session deleted); `done(stream)` frees it. */
	long (*read)(void *stream, char *buf, size_t max);
	void (*done)(void *stream);
	void *stream;
};

/* Answers one /mcp request: 403 for an Origin that is not loopback, 400 for
 * an unsupported MCP-Protocol-Version or a missing session id, 404 for an
 * unknown session, 406 when the Accept header allows neither JSON nor an
 * event stream, 202 for notifications, else 200 with a JSON or SSE (one
 * event) reply; GET with a session opens the server's event stream
 * (notifications/resources/list_changed when a profile is stored), at most
 * MCP_STREAMS_MAX at once (503 beyond). */
void mcp_http_handle(struct mcp_server *s, const struct mcp_http_request *req,
                     struct mcp_http_response *resp);

/* True when `origin` names a loopback host (localhost, 127.x, [::1]) with
 * an http or https scheme and any port. */
bool mcp_origin_is_loopback(const char *origin);

#endif
