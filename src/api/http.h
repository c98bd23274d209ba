/*
 * http.h - the HTTP server shared by the worker and the monitor: a thin layer
 * over libmicrohttpd that owns the listening socket, authentication, body
 * caps, routing and JSON responses, so that route handlers only see a parsed
 * request and return a JSON value.
 *
 * Invariants:
 *  - every response is JSON; every error is `{"error": "..."}` with a 4xx/5xx
 *    status, and handlers never see a request that failed authentication,
 *    exceeded the body cap or named an unknown route or method;
 *  - a server bound to anything but a loopback address refuses to start
 *    without a token; with a token, every request needs
 *    `Authorization: Bearer TOKEN` (compared in constant time);
 *  - bodies are held in memory up to `body_limit` bytes and rejected with 413
 *    beyond it, before the rest is read;
 *  - a request with NUL anywhere in its URL or headers, more than one
 *    Content-Length, Content-Length with Transfer-Encoding, or HTTP/1.1
 *    without exactly one Host is answered 400 and its connection closed;
 *  - no web page can drive a daemon (every route, public ones included):
 *    a Host that is not a loopback name, the listen address or an allowed
 *    host (DNS rebinding), or an Origin whose host is none of them (CSRF),
 *    is answered 403; a POST whose Content-Type is not application/json
 *    (what a page can send with no preflight) is answered 415;
 *  - a connection that has not delivered a whole request within
 *    `request_timeout` is shut down; over `connection_limit` or
 *    `ip_connection_limit`, the oldest connection still sending a request is
 *    shut down to make room for the new one.
 *
 * Thread-safety: handlers run concurrently on the server's thread pool; the
 * server object itself is driven from one thread (start/stop).
 */
#ifndef GIULIA_API_HTTP_H
#define GIULIA_API_HTTP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define API_BODY_LIMIT_DEFAULT          (1024 * 1024)
#define API_PATH_PARAM_MAX              4096
#define API_NODE_NAME_MAX               255 /* Erlang's own limit on a node name */
#define API_CONNECTION_LIMIT_DEFAULT    4096
#define API_IP_CONNECTION_LIMIT_DEFAULT 1024
#define API_REQUEST_TIMEOUT_DEFAULT     10 /* seconds for a whole request */
#define API_ALLOWED_HOSTS_MAX           16 /* --allow-host names */

/* One request as handlers see it. All pointers are borrowed for the call. */
struct api_request {
	const char *method;     /* "GET", "POST", ... */
	const char *path;       /* URL path without the query string */
	const char *path_param; /* the value of a `:name` segment of the route, or NULL */
	json_t *body;           /* parsed JSON body for POST routes, or NULL */
	void *connection;       /* internal: the libmicrohttpd connection */
};

/* Returns the decoded query parameter `name`, or NULL when absent. Values that
 * are not valid UTF-8 or longer than API_PATH_PARAM_MAX are reported absent
 * through *invalid (set true) so that the handler can refuse them. */
const char *api_request_query(const struct api_request *req, const char *name, bool *invalid);

/* Returns the request header `name` (case-insensitive), or NULL when absent
 * or not valid UTF-8 or longer than API_PATH_PARAM_MAX. */
const char *api_request_header(const struct api_request *req, const char *name);

/* A handler sets *status (preset to 200) and returns the response body, whose
 * ownership passes to the server; errors return api_error(). NULL gives a 500. */
typedef json_t *(*api_handler_fn)(void *ctx, const struct api_request *req, int *status);

/* A raw response (routes that do not answer JSON, e.g. /mcp's event
 * streams and empty 202s). Headers are copied by the server. */
#define API_RAW_HEADERS_MAX 8
struct api_raw_response {
	int status;
	const char *content_type; /* static string; NULL: no body */
	char *body;               /* gi_malloc'd or NULL; the server frees it */
	size_t body_len;
	const char *header_names[API_RAW_HEADERS_MAX]; /* static strings */
	char header_values[API_RAW_HEADERS_MAX][256];
	int nheaders;
	/* A stream instead of `body` (e.g. text/event-stream): `read` fills up to
	 * `max` bytes and returns how many, blocking as it needs (one thread per
	 * connection), or -1 at the end; `done` frees `stream` when the
	 * connection ends. The server owns `stream` once the handler returns. */
	long (*read)(void *stream, char *buf, size_t max);
	void (*done)(void *stream);
	void *stream;
};

/* A raw handler gets the body as received (any method, any content, at most
 * the body cap) and fills *resp (preset to an empty 500). */
typedef void (*api_raw_handler_fn)(void *ctx, const struct api_request *req, const char *body,
                                   size_t body_len, struct api_raw_response *resp);

struct api_route {
	const char *method;  /* "GET" or "POST" */
	const char *pattern; /* "/api/runtime/profile/:id": one trailing `:name` segment at most */
	api_handler_fn handler;
	bool wants_body; /* POST with a JSON object body (required) */
};

/* A route answered by a raw handler; exact path (or a prefix, for a pattern
 * ending in a star: "/dash/" followed by '*' is every path under /dash/),
 * any method of `methods`. */
struct api_raw_route {
	const char *pattern;        /* exact path, e.g. "/mcp", or a prefix (above) */
	const char *const *methods; /* NULL-terminated, e.g. {"POST", "GET", "DELETE", NULL} */
	api_raw_handler_fn handler;
};

struct api_server_config {
	const char *listen;             /* "ADDR:PORT"; ADDR an IPv4 address or "localhost" */
	const char *token;              /* NULL or "": no authentication (loopback only) */
	size_t body_limit;              /* 0: API_BODY_LIMIT_DEFAULT */
	int connection_timeout;         /* seconds without a byte before closing; 0: 30 */
	int request_timeout;            /* seconds to deliver a whole request (headers and
	                                   body) from its start or the previous response; 0: 10 */
	int connection_limit;           /* concurrent connections; 0: 4096 */
	int ip_connection_limit;        /* concurrent connections of one address; 0: 1024 */
	const char *name;               /* for logs: "worker", "monitor" */
	const struct api_route *routes; /* terminated by a route whose method is NULL */
	const struct api_raw_route *raw_routes; /* NULL, or terminated by a NULL pattern */
	/* Raw routes answered without the bearer token, matched first: only for
	 * content that holds no data (the dashboard's page, script and styles),
	 * so that a browser can load the page that then asks for the token.
	 * Framing checks still apply. NULL, or terminated by a NULL pattern. */
	const struct api_raw_route *public_raw_routes;
	/* Host names, besides loopback ones and the listen address (the
	 * machine's name when it is 0.0.0.0), that the Host and Origin of a
	 * request may name (a proxy's or DNS name of this daemon): NULL, or
	 * NULL-terminated, at most API_ALLOWED_HOSTS_MAX. Borrowed for the
	 * call (copied). */
	const char *const *allowed_hosts;
	void *ctx; /* passed to every handler */
};

struct api_server;

/* Parses "ADDR:PORT" into a dotted IPv4 address and a port; "localhost" gives
 * 127.0.0.1. Returns 0 or GI_EINVAL. */
int api_listen_parse(const char *listen, char addr[64], int *port);

/* Starts listening and serving. Fails with GI_EINVAL for a bad address,
 * GI_EDENIED for a non-loopback address without a token, GI_EIO when the
 * port cannot be bound. *out: free with api_server_stop(). */
int api_server_start(const struct api_server_config *cfg, struct api_server **out);

/* The port the server listens on (useful after asking for port 0). */
int api_server_port(const struct api_server *s);

/* Stops accepting connections, lets the requests in flight finish (waiting up
 * to `grace_ms`), then stops the threads and frees the server. NULL does
 * nothing. */
void api_server_stop(struct api_server *s, int grace_ms);

/* Builds the error response of a handler: sets *status and returns
 * {"error": message} (caller owns it). */
json_t *api_error(int *status, int http_status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Maps a GI_E* code to an HTTP status (GI_EINVAL 400, GI_ENOTFOUND 404, ...). */
int api_status_for(int gi_error);

/* The error response for GI_E* code `gi_error` while doing `what`: its status
 * from api_status_for, {"error": "WHAT: the code's text"} (caller owns it). */
json_t *api_error_code(int *status, int gi_error, const char *what);

/* True when `s` is a distribution node name as Erlang accepts it: ALIVE@HOST,
 * ALIVE of [A-Za-z0-9_-], HOST of [A-Za-z0-9._-], at most API_NODE_NAME_MAX
 * bytes in all. Every route that takes a node name checks it with this. */
bool api_node_name_valid(const char *s);

/* Field helpers for handlers: fetch a member of the body with a type check.
 * They return 0, or GI_EINVAL after filling *err (a JSON error response with
 * *status 400) when the field is missing (required) or of the wrong type. */
int api_body_string(const struct api_request *req, const char *field, bool required,
                    const char **out, json_t **err, int *status);
int api_body_int(const struct api_request *req, const char *field, bool required, long long min,
                 long long max, long long *out, json_t **err, int *status);

#endif
