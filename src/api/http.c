/*
 * http.c - the HTTP server over libmicrohttpd (see http.h).
 *
 * One thread per connection (libmicrohttpd's own), so that a slow client or a
 * long handler (indexing, finalising an observation) never holds up another
 * connection. Each request gets a `struct request_state` from its first call
 * to the access handler until libmicrohttpd reports it complete; the count of
 * such states is what a graceful stop waits for.
 *
 * Order of checks on the first call of a request: authentication, route,
 * method, declared body size. Any failure answers at once without reading
 * the body.
 */
#include "api/http.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "base/str.h"

#define PATH_SEGMENT_MAX 256

struct api_server {
	struct MHD_Daemon *daemon;
	char *token; /* NULL: no authentication */
	size_t body_limit;
	const struct api_route *routes;
	const struct api_raw_route *raw_routes;
	void *ctx;
	char name[32];
	int port;
	pthread_mutex_t lock; /* guards in_flight */
	int in_flight;        /* requests between their first call and completion */
};

struct request_state {
	struct gi_buf body;
	const struct api_route *route;
	const struct api_raw_route *raw_route;
	char *path_param;
	bool too_big;
	bool responded;
};

json_t *api_error(int *status, int http_status, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	*status = http_status;
	return json_pack("{s:s}", "error", msg);
}

int api_status_for(int gi_error)
{
	switch (gi_error) {
	case 0:
		return 200;
	case GI_EINVAL:
	case GI_EPARSE:
		return 400;
	case GI_EDENIED:
		return 403;
	case GI_ENOTFOUND:
	case GI_ENOENT:
	case GI_ENONODE:
		return 404;
	case GI_EEXIST:
	case GI_EBUSY:
		return 409;
	case GI_ETOOBIG:
		return 413;
	case GI_EUNSUPPORTED:
		return 501;
	case GI_ECONNECT:
	case GI_EEPMD:
	case GI_ECOOKIE:
	case GI_ENODEDOWN:
	case GI_EBADRPC:
	case GI_EOTPVERSION:
	case GI_EHTTP:
		return 502;
	case GI_ETIMEOUT:
		return 504;
	default:
		return 500;
	}
}

int api_listen_parse(const char *listen, char addr[64], int *port)
{
	const char *colon = listen ? strrchr(listen, ':') : NULL;
	if (!colon || colon == listen || (size_t)(colon - listen) >= 64)
		return GI_EINVAL;
	char host[64];
	memcpy(host, listen, (size_t)(colon - listen));
	host[colon - listen] = '\0';
	int64_t p;
	if (gi_parse_int64(colon + 1, 0, 65535, &p) != 0)
		return GI_EINVAL;
	if (strcmp(host, "localhost") == 0)
		gi_strlcpy(host, "127.0.0.1", sizeof(host));
	struct in_addr a;
	if (inet_pton(AF_INET, host, &a) != 1)
		return GI_EINVAL;
	gi_strlcpy(addr, host, 64);
	*port = (int)p;
	return 0;
}

static bool addr_is_loopback(const char *addr)
{
	struct in_addr a;
	if (inet_pton(AF_INET, addr, &a) != 1)
		return false;
	return (ntohl(a.s_addr) >> 24) == 127;
}

const char *api_request_query(const struct api_request *req, const char *name, bool *invalid)
{
	const char *v = MHD_lookup_connection_value((struct MHD_Connection *)req->connection,
	                                            MHD_GET_ARGUMENT_KIND, name);
	if (!v)
		return NULL;
	size_t len = strlen(v);
	if (len > API_PATH_PARAM_MAX || !gi_utf8_valid(v, len)) {
		if (invalid)
			*invalid = true;
		return NULL;
	}
	return v;
}

const char *api_request_header(const struct api_request *req, const char *name)
{
	const char *v = MHD_lookup_connection_value((struct MHD_Connection *)req->connection,
	                                            MHD_HEADER_KIND, name);
	if (!v)
		return NULL;
	size_t len = strlen(v);
	if (len > API_PATH_PARAM_MAX || !gi_utf8_valid(v, len))
		return NULL;
	return v;
}

static int field_error(json_t **err, int *status, const char *what, const char *field)
{
	*err = api_error(status, 400, "field \"%s\" %s", field, what);
	return GI_EINVAL;
}

int api_body_string(const struct api_request *req, const char *field, bool required,
                    const char **out, json_t **err, int *status)
{
	*out = NULL;
	json_t *v = req->body ? json_object_get(req->body, field) : NULL;
	if (!v || json_is_null(v)) {
		if (required)
			return field_error(err, status, "is missing", field);
		return 0;
	}
	if (!json_is_string(v))
		return field_error(err, status, "must be a string", field);
	if (json_string_length(v) > API_PATH_PARAM_MAX ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return field_error(err, status, "is too long or contains NUL", field);
	*out = json_string_value(v);
	return 0;
}

int api_body_int(const struct api_request *req, const char *field, bool required, long long min,
                 long long max, long long *out, json_t **err, int *status)
{
	json_t *v = req->body ? json_object_get(req->body, field) : NULL;
	if (!v || json_is_null(v)) {
		if (required)
			return field_error(err, status, "is missing", field);
		return 0;
	}
	if (!json_is_integer(v))
		return field_error(err, status, "must be an integer", field);
	long long x = json_integer_value(v);
	if (x < min || x > max)
		return field_error(err, status, "is out of range", field);
	*out = x;
	return 0;
}

static enum MHD_Result send_json(struct MHD_Connection *c, int status, json_t *body)
{
	static const char FALLBACK[] = "{\"error\":\"internal error: no response\"}";
	/* json_dumps allocates with jansson's allocator (malloc): released with free(). */
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	if (!text)
		status = 500;
	const char *out = text ? text : FALLBACK;
	struct MHD_Response *r =
	    MHD_create_response_from_buffer(strlen(out), (void *)out, MHD_RESPMEM_MUST_COPY);
	free(text);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	if (status == 401)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
	enum MHD_Result rc = MHD_queue_response(c, (unsigned)status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result send_error(struct request_state *st, struct MHD_Connection *c, int status,
                                  const char *msg)
{
	int s = status;
	json_t *e = api_error(&s, status, "%s", msg);
	st->responded = true;
	enum MHD_Result rc = send_json(c, s, e);
	json_decref(e);
	return rc;
}

/* Matches `path` against `pattern`; a trailing ":name" segment captures one
 * non-empty segment into *param (caller frees). */
static bool route_matches(const char *pattern, const char *path, char **param)
{
	const char *colon = strchr(pattern, ':');
	if (!colon)
		return strcmp(pattern, path) == 0;
	size_t prefix = (size_t)(colon - pattern);
	if (strncmp(pattern, path, prefix) != 0)
		return false;
	const char *seg = path + prefix;
	size_t len = strlen(seg);
	if (len == 0 || len > PATH_SEGMENT_MAX || strchr(seg, '/') || !gi_utf8_valid(seg, len))
		return false;
	*param = gi_strdup(seg);
	return true;
}

/* Finds the route for method+path; *method_known false when the path exists
 * under another method only. */
static const struct api_route *route_find(const struct api_route *routes, const char *method,
                                          const char *path, bool *path_known, char **param)
{
	*path_known = false;
	for (const struct api_route *r = routes; r->method; r++) {
		char *p = NULL;
		if (!route_matches(r->pattern, path, &p))
			continue;
		if (strcmp(r->method, method) == 0) {
			*param = p;
			return r;
		}
		gi_free(p);
		*path_known = true;
	}
	return NULL;
}

static bool authorised(const struct api_server *s, struct MHD_Connection *c)
{
	if (!s->token)
		return true;
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	if (!h || strncmp(h, "Bearer ", 7) != 0)
		return false;
	return gi_str_secure_equal(h + 7, s->token);
}

static enum MHD_Result first_call(struct api_server *s, struct request_state *st,
                                  struct MHD_Connection *c, const char *url, const char *method)
{
	if (!authorised(s, c))
		return send_error(st, c, 401, "missing or wrong bearer token");
	if (!gi_utf8_valid(url, strlen(url)))
		return send_error(st, c, 400, "the URL is not valid UTF-8");
	bool path_known = false;
	for (const struct api_raw_route *r = s->raw_routes; r && r->pattern; r++) {
		if (strcmp(r->pattern, url) != 0)
			continue;
		path_known = true;
		for (const char *const *m = r->methods; *m; m++)
			if (strcmp(*m, method) == 0)
				st->raw_route = r;
	}
	if (!st->raw_route && !path_known)
		st->route = route_find(s->routes, method, url, &path_known, &st->path_param);
	if (!st->route && !st->raw_route) {
		char msg[512];
		if (path_known)
			snprintf(msg, sizeof(msg), "method %.16s is not allowed on %.400s", method,
			         url);
		else
			snprintf(msg, sizeof(msg), "no route %.16s %.400s", method, url);
		return send_error(st, c, path_known ? 405 : 404, msg);
	}
	const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
	int64_t declared;
	if (cl && gi_parse_int64(cl, 0, INT64_MAX, &declared) == 0 &&
	    (uint64_t)declared > s->body_limit) {
		char msg[128];
		snprintf(msg, sizeof(msg), "request body larger than %zu bytes", s->body_limit);
		return send_error(st, c, 413, msg);
	}
	return MHD_YES;
}

struct raw_stream {
	long (*read)(void *stream, char *buf, size_t max);
	void (*done)(void *stream);
	void *stream;
};

static ssize_t raw_stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	struct raw_stream *rs = cls;
	long n = rs->read(rs->stream, buf, max);
	return n < 0 ? MHD_CONTENT_READER_END_OF_STREAM : (ssize_t)n;
}

static void raw_stream_free(void *cls)
{
	struct raw_stream *rs = cls;
	rs->done(rs->stream);
	gi_free(rs);
}

static enum MHD_Result send_raw(struct MHD_Connection *c, struct api_raw_response *raw)
{
	if (raw->read) {
		struct raw_stream *rs = gi_malloc(sizeof(*rs));
		rs->read = raw->read;
		rs->done = raw->done;
		rs->stream = raw->stream;
		struct MHD_Response *r = MHD_create_response_from_callback(
		    MHD_SIZE_UNKNOWN, 4096, raw_stream_read, rs, raw_stream_free);
		if (!r) {
			raw_stream_free(rs);
			return MHD_NO;
		}
		if (raw->content_type)
			MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, raw->content_type);
		for (int i = 0; i < raw->nheaders && i < API_RAW_HEADERS_MAX; i++)
			MHD_add_response_header(r, raw->header_names[i], raw->header_values[i]);
		enum MHD_Result rc = MHD_queue_response(c, (unsigned)raw->status, r);
		MHD_destroy_response(r);
		return rc;
	}
	struct MHD_Response *r = MHD_create_response_from_buffer(raw->body ? raw->body_len : 0,
	                                                         raw->body ? raw->body : (void *)"",
	                                                         MHD_RESPMEM_MUST_COPY);
	gi_free(raw->body);
	raw->body = NULL;
	if (!r)
		return MHD_NO;
	if (raw->content_type)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, raw->content_type);
	for (int i = 0; i < raw->nheaders && i < API_RAW_HEADERS_MAX; i++)
		MHD_add_response_header(r, raw->header_names[i], raw->header_values[i]);
	enum MHD_Result rc = MHD_queue_response(c, (unsigned)raw->status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result run_handler(struct api_server *s, struct request_state *st,
                                   struct MHD_Connection *c, const char *url, const char *method)
{
	struct api_request req = {method, url, st->path_param, NULL, c};
	if (st->too_big) {
		char msg[128];
		snprintf(msg, sizeof(msg), "request body larger than %zu bytes", s->body_limit);
		return send_error(st, c, 413, msg);
	}
	if (st->raw_route) {
		struct api_raw_response raw;
		memset(&raw, 0, sizeof(raw));
		raw.status = 500;
		st->raw_route->handler(s->ctx, &req, st->body.data ? st->body.data : "",
		                       st->body.len, &raw);
		st->responded = true;
		return send_raw(c, &raw);
	}
	if (st->route->wants_body) {
		json_error_t jerr;
		if (st->body.len == 0)
			return send_error(st, c, 400, "a JSON object body is required");
		req.body = json_loadb(st->body.data, st->body.len, JSON_REJECT_DUPLICATES, &jerr);
		if (!req.body) {
			char msg[300];
			snprintf(msg, sizeof(msg), "malformed JSON at line %d column %d: %.200s",
			         jerr.line, jerr.column, jerr.text);
			return send_error(st, c, 400, msg);
		}
		if (!json_is_object(req.body)) {
			json_decref(req.body);
			return send_error(st, c, 400, "the body must be a JSON object");
		}
	}
	int status = 200;
	json_t *resp = st->route->handler(s->ctx, &req, &status);
	json_decref(req.body);
	if (!resp) {
		resp = json_pack("{s:s}", "error", "internal error");
		status = 500;
	}
	st->responded = true;
	enum MHD_Result rc = send_json(c, status, resp);
	json_decref(resp);
	return rc;
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *c, const char *url,
                                      const char *method, const char *version,
                                      const char *upload_data, size_t *upload_data_size,
                                      void **con_cls)
{
	(void)version;
	struct api_server *s = cls;
	struct request_state *st = *con_cls;
	if (!st) {
		st = gi_calloc(1, sizeof(*st));
		gi_buf_init(&st->body, s->body_limit);
		*con_cls = st;
		pthread_mutex_lock(&s->lock);
		s->in_flight++;
		pthread_mutex_unlock(&s->lock);
		return first_call(s, st, c, url, method);
	}
	if (st->responded) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (*upload_data_size > 0) {
		if (!st->too_big && gi_buf_append(&st->body, upload_data, *upload_data_size) != 0) {
			st->too_big = true;
			gi_buf_destroy(&st->body);
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	return run_handler(s, st, c, url, method);
}

static void request_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                              enum MHD_RequestTerminationCode toe)
{
	(void)c;
	(void)toe;
	struct api_server *s = cls;
	struct request_state *st = *con_cls;
	if (!st)
		return;
	gi_buf_destroy(&st->body);
	gi_free(st->path_param);
	gi_free(st);
	*con_cls = NULL;
	pthread_mutex_lock(&s->lock);
	s->in_flight--;
	pthread_mutex_unlock(&s->lock);
}

int api_server_start(const struct api_server_config *cfg, struct api_server **out)
{
	*out = NULL;
	char addr[64];
	int port;
	if (api_listen_parse(cfg->listen, addr, &port) != 0)
		return GI_EINVAL;
	bool has_token = cfg->token && cfg->token[0];
	if (!addr_is_loopback(addr) && !has_token)
		return GI_EDENIED;

	struct api_server *s = gi_calloc(1, sizeof(*s));
	s->token = has_token ? gi_strdup(cfg->token) : NULL;
	s->body_limit = cfg->body_limit ? cfg->body_limit : API_BODY_LIMIT_DEFAULT;
	s->routes = cfg->routes;
	s->raw_routes = cfg->raw_routes;
	s->ctx = cfg->ctx;
	gi_strlcpy(s->name, cfg->name ? cfg->name : "http", sizeof(s->name));
	pthread_mutex_init(&s->lock, NULL);

	struct sockaddr_in sa;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, addr, &sa.sin_addr);

	unsigned timeout = cfg->connection_timeout > 0 ? (unsigned)cfg->connection_timeout : 30;
	unsigned limit = cfg->connection_limit > 0 ? (unsigned)cfg->connection_limit : 4096;
	unsigned flags = MHD_USE_AUTO | MHD_USE_INTERNAL_POLLING_THREAD |
	                 MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ITC;
	s->daemon = MHD_start_daemon(
	    flags, (uint16_t)port, NULL, NULL, access_handler, s, MHD_OPTION_SOCK_ADDR,
	    (struct sockaddr *)&sa, MHD_OPTION_NOTIFY_COMPLETED, request_completed, s,
	    MHD_OPTION_CONNECTION_TIMEOUT, timeout, MHD_OPTION_CONNECTION_LIMIT, limit,
	    MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u, MHD_OPTION_THREAD_STACK_SIZE,
	    (size_t)(1024 * 1024), MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024),
	    MHD_OPTION_END);
	if (!s->daemon) {
		gi_log_error(s->name, "cannot listen on %s:%d (port in use?)", addr, port);
		pthread_mutex_destroy(&s->lock);
		gi_free(s->token);
		gi_free(s);
		return GI_EIO;
	}
	const union MHD_DaemonInfo *info =
	    MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info ? info->port : port;
	gi_log_info(s->name, "listening on http://%s:%d%s", addr, s->port,
	            s->token ? " (bearer token required)" : "");
	*out = s;
	return 0;
}

int api_server_port(const struct api_server *s)
{
	return s->port;
}

void api_server_stop(struct api_server *s, int grace_ms)
{
	if (!s)
		return;
	MHD_socket fd = MHD_quiesce_daemon(s->daemon);
	if (fd != MHD_INVALID_SOCKET)
		close(fd);
	int64_t deadline = gi_clock_mono_ms() + grace_ms;
	pthread_mutex_lock(&s->lock);
	while (s->in_flight > 0 && gi_clock_mono_ms() < deadline) {
		pthread_mutex_unlock(&s->lock);
		gi_clock_sleep_ms(20);
		pthread_mutex_lock(&s->lock);
	}
	int left = s->in_flight;
	pthread_mutex_unlock(&s->lock);
	if (left > 0)
		gi_log_warn(s->name, "%d request(s) still running at shutdown", left);
	MHD_stop_daemon(s->daemon);
	pthread_mutex_destroy(&s->lock);
	gi_free(s->token);
	gi_free(s);
	gi_log_info("http", "server stopped");
}
