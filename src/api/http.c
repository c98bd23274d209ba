/*
 * http.c - the HTTP server over libmicrohttpd (see http.h).
 *
 * One thread per connection (libmicrohttpd's own), so that a slow client or a
 * long handler (indexing, finalising an observation) never holds up another
 * connection. Each request gets a `struct request_state` from its first call
 * to the access handler until libmicrohttpd reports it complete; the count of
 * such states is what a graceful stop waits for.
 *
 * Order of checks on the first call of a request: framing (NUL anywhere in
 * the URL or a header, duplicate or conflicting Content-Length, HTTP/1.1
 * without one Host), a web page's request (a foreign Host or Origin),
 * authentication, route, method, a POST's Content-Type, declared body size. Any
 * failure answers at once without reading the body; a framing failure also
 * closes the connection, since what follows on it cannot be trusted.
 *
 * Slow clients: libmicrohttpd's timeout is an idle timeout (a byte every few
 * seconds resets it), so this file tracks every connection itself, from the
 * library's connection notifications: a connection must deliver each whole
 * request (headers and body) within `request_timeout` of its start or of the
 * end of the previous response, else a reaper thread shuts its socket down.
 * When the connection count or one address's count is over its cap, the
 * oldest connection still sending a request (of that address, for the
 * per-address cap) is shut down to make room for the new one, which is
 * refused only when every connection is busy in a handler. libmicrohttpd's
 * own limit is set `CONN_RESERVE` above ours so that there is always room
 * to accept, and then make that choice. Shutting a socket down from another
 * thread is safe here because the tracking entry is removed (under
 * conn_lock) before libmicrohttpd closes the descriptor.
 */
#include "api/http.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/dynlib.h"
#include "base/error.h"
#include "base/log.h"
#include "base/str.h"

/* libmicrohttpd, loaded when a server starts (base/dynlib.h): the commands
 * that serve nothing never map it nor the libraries it pulls in. */
#define MHD_FUNCTIONS(X)                     \
	X(MHD_add_response_header)           \
	X(MHD_create_response_from_buffer)   \
	X(MHD_create_response_from_callback) \
	X(MHD_destroy_response)              \
	X(MHD_get_connection_info)           \
	X(MHD_get_connection_values_n)       \
	X(MHD_get_daemon_info)               \
	X(MHD_lookup_connection_value)       \
	X(MHD_lookup_connection_value_n)     \
	X(MHD_queue_response)                \
	X(MHD_quiesce_daemon)                \
	X(MHD_start_daemon)                  \
	X(MHD_stop_daemon)
#define MHD_POINTER(f) __typeof__(f) *f;
static struct {
	MHD_FUNCTIONS(MHD_POINTER)
} mhd;
static pthread_once_t mhd_once = PTHREAD_ONCE_INIT;
static int mhd_rc;
static char mhd_err[256];

static void mhd_load(void)
{
	static const char *const sonames[] = {"libmicrohttpd.so.12", "libmicrohttpd.so", NULL};
#define MHD_SYMBOL(f) {#f, (void **)&mhd.f},
	const struct gi_dynlib_symbol symbols[] = {MHD_FUNCTIONS(MHD_SYMBOL)};
	mhd_rc = gi_dynlib_load(sonames, "libmicrohttpd12", symbols,
	                        sizeof(symbols) / sizeof(symbols[0]), mhd_err, sizeof(mhd_err));
}

/* The calls below go through the table. */
#define MHD_add_response_header           (*mhd.MHD_add_response_header)
#define MHD_create_response_from_buffer   (*mhd.MHD_create_response_from_buffer)
#define MHD_create_response_from_callback (*mhd.MHD_create_response_from_callback)
#define MHD_destroy_response              (*mhd.MHD_destroy_response)
#define MHD_get_connection_info           (*mhd.MHD_get_connection_info)
#define MHD_get_connection_values_n       (*mhd.MHD_get_connection_values_n)
#define MHD_get_daemon_info               (*mhd.MHD_get_daemon_info)
#define MHD_lookup_connection_value       (*mhd.MHD_lookup_connection_value)
#define MHD_lookup_connection_value_n     (*mhd.MHD_lookup_connection_value_n)
#define MHD_queue_response                (*mhd.MHD_queue_response)
#define MHD_quiesce_daemon                (*mhd.MHD_quiesce_daemon)
#define MHD_start_daemon                  (*mhd.MHD_start_daemon)
#define MHD_stop_daemon                   (*mhd.MHD_stop_daemon)

#define PATH_SEGMENT_MAX 256
#define CONN_RESERVE     64 /* accepted above the limit, to choose whom to shut */
#define REAPER_PERIOD_MS 200

/* One accepted connection, from libmicrohttpd's STARTED to CLOSED notification. */
struct conn_track {
	struct conn_track *prev, *next; /* in api_server.conns */
	int fd;
	uint32_t ip;      /* IPv4, host order */
	int64_t since_ms; /* when its current request began (or may begin) */
	bool reading;     /* a request is being received (not in a handler) */
	bool shut;        /* already shut down by us */
};

struct api_server {
	struct MHD_Daemon *daemon;
	char *token; /* NULL: no authentication */
	size_t body_limit;
	const struct api_route *routes;
	const struct api_raw_route *raw_routes;
	const struct api_raw_route *public_raw_routes;
	void *ctx;
	char name[32];
	int port;
	pthread_mutex_t lock; /* guards in_flight */
	int in_flight;        /* requests between their first call and completion */

	pthread_mutex_t conn_lock; /* guards the connection tracking below */
	struct conn_track *conns;  /* every open connection, newest first */
	int conn_limit, ip_conn_limit;
	int64_t request_timeout_ms;
	int64_t shut_slow, shut_evicted, refused; /* counters, for logs and tests */
	pthread_t reaper;
	pthread_cond_t reaper_cond;
	bool reaper_started, stopping;
	/* Host names besides loopback that a request may name (Host, Origin):
	 * the listen address when it is a specific one, the machine's name when
	 * it listens on every address, and --allow-host. */
	char *hosts[API_ALLOWED_HOSTS_MAX + 2];
	int nhosts;
};

struct request_state {
	struct gi_buf body;
	const struct api_route *route;
	const struct api_raw_route *raw_route;
	char *path_param;
	bool too_big;
	bool responded;
	bool url_has_nul; /* the raw URL holds %00 */
	bool counted;     /* counted in in_flight (from the first access call) */
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

json_t *api_error_code(int *status, int gi_error, const char *what)
{
	return api_error(status, api_status_for(gi_error), "%s: %s", what, gi_strerror(gi_error));
}

bool api_node_name_valid(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > API_NODE_NAME_MAX)
		return false;
	const char *at = strchr(s, '@');
	if (!at || at == s || at[1] == '\0' || strchr(at + 1, '@'))
		return false;
	/* The alive part as Erlang accepts it ([A-Za-z0-9_-]); the host part a
	 * host name or address: letters, digits, '.', '-', '_' (IPv6 literals
	 * are not distribution host names). */
	for (const char *p = s; *p; p++) {
		char c = *p;
		bool alnum =
		    (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		if (p < at ? !(alnum || c == '_' || c == '-')
		           : !(alnum || c == '@' || c == '.' || c == '-' || c == '_'))
			return false;
	}
	return true;
}

int api_status_for(int gi_error)
{
	return gi_error_http_status(gi_error);
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
	const char *v = NULL;
	size_t size = 0;
	if (MHD_lookup_connection_value_n((struct MHD_Connection *)req->connection,
	                                  MHD_GET_ARGUMENT_KIND, name, strlen(name), &v,
	                                  &size) != MHD_YES ||
	    !v)
		return NULL;
	size_t len = strlen(v);
	if (len != size || len > API_PATH_PARAM_MAX || !gi_utf8_valid(v, len)) {
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

static enum MHD_Result send_json(struct MHD_Connection *c, int status, json_t *body, bool close)
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
	if (close)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	enum MHD_Result rc = MHD_queue_response(c, (unsigned)status, r);
	MHD_destroy_response(r);
	return rc;
}

/* Every error answer closes its connection: one answered before the body
 * was read leaves that body unread, and it must not be parsed as a request;
 * the others are rare enough that keeping the connection buys nothing. */
static enum MHD_Result send_error(struct request_state *st, struct MHD_Connection *c, int status,
                                  const char *msg)
{
	int s = status;
	json_t *e = api_error(&s, status, "%s", msg);
	st->responded = true;
	enum MHD_Result rc = send_json(c, s, e, true);
	json_decref(e);
	return rc;
}

/* What the header and argument walks count for framing_problem. */
struct framing {
	int content_length, transfer_encoding, host, authorization;
	bool nul;
};

static enum MHD_Result framing_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                      size_t key_size, const char *value, size_t value_size)
{
	(void)kind;
	struct framing *f = cls;
	if (!key || !value || strlen(key) != key_size || strlen(value) != value_size)
		f->nul = true;
	if (key && strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0)
		f->content_length++;
	else if (key && strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0)
		f->transfer_encoding++;
	else if (key && strcasecmp(key, MHD_HTTP_HEADER_HOST) == 0)
		f->host++;
	else if (key && strcasecmp(key, MHD_HTTP_HEADER_AUTHORIZATION) == 0)
		f->authorization++;
	return MHD_YES;
}

static enum MHD_Result framing_argument(void *cls, enum MHD_ValueKind kind, const char *key,
                                        size_t key_size, const char *value, size_t value_size)
{
	(void)kind;
	struct framing *f = cls;
	if ((key && strlen(key) != key_size) || (value && strlen(value) != value_size))
		f->nul = true;
	return MHD_YES;
}

/* Why a request's framing cannot be trusted (a static sentence), or NULL. */
static const char *framing_problem(struct MHD_Connection *c, const char *version,
                                   const struct request_state *st)
{
	struct framing f = {0, 0, 0, 0, st->url_has_nul};
	MHD_get_connection_values_n(c, MHD_HEADER_KIND, framing_header, &f);
	MHD_get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, framing_argument, &f);
	if (f.nul)
		/* A raw zero byte in the request line never gets here: the
		 * library cuts the line there (docs/API.md, "Framing"). */
		return "NUL (%00) in the URL or a query parameter, or a zero byte in a header";
	if (f.content_length > 1)
		return "more than one Content-Length header";
	if (f.content_length && f.transfer_encoding)
		return "both Content-Length and Transfer-Encoding";
	if (f.host > 1)
		return "more than one Host header";
	if (f.authorization > 1)
		return "more than one Authorization header";
	if (f.host == 0 && version && strcmp(version, MHD_HTTP_VERSION_1_1) == 0)
		return "an HTTP/1.1 request needs a Host header";
	return NULL;
}

/* ---- connection tracking (see the file comment) ---- */

static struct conn_track *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? (struct conn_track *)ci->socket_context : NULL;
}

/* Marks the connection's request as received (a handler or an error answer
 * now owns it) or, with `reading` true, a new request as due from now. */
static void conn_set_reading(struct api_server *s, struct MHD_Connection *c, bool reading)
{
	struct conn_track *t = conn_of(c);
	if (!t)
		return;
	pthread_mutex_lock(&s->conn_lock);
	t->reading = reading;
	if (reading)
		t->since_ms = gi_clock_mono_ms();
	pthread_mutex_unlock(&s->conn_lock);
}

/* Under conn_lock. */
static void conn_shut(struct conn_track *t)
{
	if (t->shut)
		return;
	t->shut = true;
	t->reading = false;
	shutdown(t->fd, SHUT_RDWR);
}

/* Under conn_lock: the oldest connection still sending a request, of address
 * `ip` unless `any_ip`, or NULL. */
static struct conn_track *conn_oldest_reading(struct api_server *s, uint32_t ip, bool any_ip,
                                              const struct conn_track *except)
{
	struct conn_track *best = NULL;
	for (struct conn_track *t = s->conns; t; t = t->next)
		if (t != except && t->reading && !t->shut && (any_ip || t->ip == ip) &&
		    (!best || t->since_ms < best->since_ms))
			best = t;
	return best;
}

static void conn_started(struct api_server *s, struct MHD_Connection *c, void **socket_context)
{
	const union MHD_ConnectionInfo *fdi =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	const union MHD_ConnectionInfo *ai =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	struct conn_track *t = gi_calloc(1, sizeof(*t));
	t->fd = fdi ? fdi->connect_fd : -1;
	if (ai && ai->client_addr && ai->client_addr->sa_family == AF_INET)
		t->ip = ntohl(((const struct sockaddr_in *)ai->client_addr)->sin_addr.s_addr);
	t->since_ms = gi_clock_mono_ms();
	t->reading = true;
	*socket_context = t;

	pthread_mutex_lock(&s->conn_lock);
	t->next = s->conns;
	if (s->conns)
		s->conns->prev = t;
	s->conns = t;
	/* Connections already shut are on their way out: they do not count. */
	int same_ip = 0, live = 0;
	for (struct conn_track *o = s->conns; o; o = o->next) {
		if (o->shut)
			continue;
		live++;
		if (o->ip == t->ip)
			same_ip++;
	}
	bool over_ip = same_ip > s->ip_conn_limit;
	bool over_all = live > s->conn_limit;
	if (over_ip || over_all) {
		struct conn_track *victim = conn_oldest_reading(s, t->ip, !over_ip, t);
		if (victim) {
			conn_shut(victim);
			s->shut_evicted++;
		} else {
			conn_shut(t);
			s->refused++;
		}
	}
	pthread_mutex_unlock(&s->conn_lock);
}

static void conn_closed(struct api_server *s, void **socket_context)
{
	struct conn_track *t = *socket_context;
	if (!t)
		return;
	pthread_mutex_lock(&s->conn_lock);
	if (t->prev)
		t->prev->next = t->next;
	else
		s->conns = t->next;
	if (t->next)
		t->next->prev = t->prev;
	pthread_mutex_unlock(&s->conn_lock);
	gi_free(t);
	*socket_context = NULL;
}

static void notify_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                              enum MHD_ConnectionNotificationCode code)
{
	struct api_server *s = cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED)
		conn_started(s, c, socket_context);
	else
		conn_closed(s, socket_context);
}

/* Shuts down every connection whose request is overdue, every
 * REAPER_PERIOD_MS, until the server stops. */
static void *reaper_main(void *arg)
{
	struct api_server *s = arg;
	pthread_mutex_lock(&s->conn_lock);
	while (!s->stopping) {
		int64_t now = gi_clock_mono_ms();
		for (struct conn_track *t = s->conns; t; t = t->next)
			if (t->reading && !t->shut && now - t->since_ms > s->request_timeout_ms) {
				conn_shut(t);
				s->shut_slow++;
			}
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += (long)REAPER_PERIOD_MS * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&s->reaper_cond, &s->conn_lock, &ts);
	}
	pthread_mutex_unlock(&s->conn_lock);
	return NULL;
}

/* Called by libmicrohttpd with the raw URL (before %-decoding) once the
 * request line is in; what it returns is the request's *con_cls. */
static void *uri_logger(void *cls, const char *uri, struct MHD_Connection *c)
{
	(void)c;
	struct api_server *s = cls;
	struct request_state *st = gi_calloc(1, sizeof(*st));
	gi_buf_init(&st->body, s->body_limit);
	st->url_has_nul = uri && strstr(uri, "%00") != NULL;
	return st;
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

/* An exact path, or a prefix for a pattern ending in '*'. */
static bool raw_route_matches(const char *pattern, const char *url)
{
	size_t n = strlen(pattern);
	if (n > 0 && pattern[n - 1] == '*')
		return strncmp(pattern, url, n - 1) == 0;
	return strcmp(pattern, url) == 0;
}

/* The route of `routes` for url and method; *path_known when the path is
 * one of theirs (under any method). */
static const struct api_raw_route *raw_route_find(const struct api_raw_route *routes,
                                                  const char *url, const char *method,
                                                  bool *path_known)
{
	for (const struct api_raw_route *r = routes; r && r->pattern; r++) {
		if (!raw_route_matches(r->pattern, url))
			continue;
		*path_known = true;
		for (const char *const *m = r->methods; *m; m++)
			if (strcmp(*m, method) == 0)
				return r;
		return NULL;
	}
	return NULL;
}

static bool authorised(const struct api_server *s, struct MHD_Connection *c)
{
	if (!s->token)
		return true;
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	/* The scheme is case-insensitive (RFC 9110 11.1): "bearer" is Bearer. */
	if (!h || strncasecmp(h, "Bearer ", 7) != 0)
		return false;
	return gi_str_secure_equal(h + 7, s->token);
}

/* True when `name` (a host, no port; `len` bytes) is one a request may
 * name: a loopback name or address, or one of the server's own. */
static bool host_allowed(const struct api_server *s, const char *name, size_t len)
{
	if (len == 0 || len >= 256)
		return false;
	char host[256];
	memcpy(host, name, len);
	host[len] = '\0';
	if (strcasecmp(host, "localhost") == 0 || strcmp(host, "::1") == 0 ||
	    addr_is_loopback(host))
		return true;
	for (int i = 0; i < s->nhosts; i++)
		if (strcasecmp(host, s->hosts[i]) == 0)
			return true;
	return false;
}

/* Splits "HOST[:PORT]" or "[V6]:PORT" (an authority) into the host's start
 * and length; false when it is not of that form. */
static bool authority_host(const char *a, const char **host, size_t *len)
{
	if (a[0] == '[') {
		const char *close = strchr(a, ']');
		if (!close || (close[1] && close[1] != ':'))
			return false;
		*host = a + 1;
		*len = (size_t)(close - a - 1);
	} else {
		*host = a;
		*len = strcspn(a, ":");
	}
	const char *port = *host + *len + (a[0] == '[' ? 1 : 0);
	return *port == '\0' ||
	       (port[0] == ':' && port[1] && strspn(port + 1, "0123456789") == strlen(port + 1));
}

/* Why a request must not be served because a web page may have sent it
 * (a static sentence), or NULL. A browser names the page's origin in
 * Origin on every cross-origin request (and on same-origin POSTs): one
 * that is not a loopback or configured host is another site's page (CSRF).
 * A page of another site whose name was made to resolve to 127.0.0.1 (DNS
 * rebinding) is same-origin to the browser, but its requests carry that
 * name in Host: so Host must be loopback or configured too. */
static const char *browser_problem(const struct api_server *s, struct MHD_Connection *c)
{
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
	const char *name;
	size_t len;
	if (host && (!authority_host(host, &name, &len) || !host_allowed(s, name, len)))
		return "Host is not this daemon's name (a loopback name, its listen address or an "
		       "--allow-host name): refused, as a page of another site made to resolve to "
		       "this address sends it (DNS rebinding)";
	const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	if (!origin)
		return NULL;
	const char *rest = NULL;
	if (strncasecmp(origin, "http://", 7) == 0)
		rest = origin + 7;
	else if (strncasecmp(origin, "https://", 8) == 0)
		rest = origin + 8;
	if (!rest || strchr(rest, '/') || !authority_host(rest, &name, &len) ||
	    !host_allowed(s, name, len))
		return "Origin is not a loopback or configured origin: requests from web pages of "
		       "other sites are refused";
	return NULL;
}

/* True when the request's Content-Type is application/json (parameters such
 * as charset allowed). */
static bool content_type_json(struct MHD_Connection *c)
{
	const char *ct =
	    MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
	if (!ct)
		return false;
	while (*ct == ' ' || *ct == '\t')
		ct++;
	size_t n = strcspn(ct, "; \t");
	return n == 16 && strncasecmp(ct, "application/json", 16) == 0;
}

static enum MHD_Result first_call(struct api_server *s, struct request_state *st,
                                  struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version)
{
	const char *framing = framing_problem(c, version, st);
	if (framing) {
		conn_set_reading(s, c, false);
		return send_error(st, c, 400, framing);
	}
	const char *browser = browser_problem(s, c);
	if (browser)
		return send_error(st, c, 403, browser);
	bool path_known = false, public_route = false;
	st->raw_route = raw_route_find(s->public_raw_routes, url, method, &path_known);
	public_route = path_known;
	if (!path_known)
		st->raw_route = raw_route_find(s->raw_routes, url, method, &path_known);
	if (!public_route && !authorised(s, c))
		return send_error(st, c, 401, "missing or wrong bearer token");
	if (!gi_utf8_valid(url, strlen(url)))
		return send_error(st, c, 400, "the URL is not valid UTF-8");
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
	/* A page may send a POST of text/plain, a form or no body with no
	 * preflight: only application/json, which needs one, is taken. */
	if (strcmp(method, "POST") == 0 && !content_type_json(c))
		return send_error(
		    st, c, 415, "POST bodies must be JSON, sent as Content-Type: application/json");
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

/* Adds the headers of `raw` to `r`, queues it and drops our reference. */
static enum MHD_Result raw_queue(struct MHD_Connection *c, const struct api_raw_response *raw,
                                 struct MHD_Response *r)
{
	if (raw->content_type)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, raw->content_type);
	for (int i = 0; i < raw->nheaders && i < API_RAW_HEADERS_MAX; i++)
		MHD_add_response_header(r, raw->header_names[i], raw->header_values[i]);
	enum MHD_Result rc = MHD_queue_response(c, (unsigned)raw->status, r);
	MHD_destroy_response(r);
	return rc;
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
		return raw_queue(c, raw, r);
	}
	struct MHD_Response *r = MHD_create_response_from_buffer(raw->body ? raw->body_len : 0,
	                                                         raw->body ? raw->body : (void *)"",
	                                                         MHD_RESPMEM_MUST_COPY);
	gi_free(raw->body);
	raw->body = NULL;
	if (!r)
		return MHD_NO;
	return raw_queue(c, raw, r);
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
	enum MHD_Result rc = send_json(c, status, resp, false);
	json_decref(resp);
	return rc;
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *c, const char *url,
                                      const char *method, const char *version,
                                      const char *upload_data, size_t *upload_data_size,
                                      void **con_cls)
{
	struct api_server *s = cls;
	struct request_state *st = *con_cls;
	if (!st) /* the URI logger always runs first; this is only a fallback */
		*con_cls = st = uri_logger(s, NULL, c);
	if (!st->counted) {
		/* Counted from here (all headers in), as a graceful stop waits for
		 * these: a client still trickling its headers does not hold it up. */
		st->counted = true;
		pthread_mutex_lock(&s->lock);
		s->in_flight++;
		pthread_mutex_unlock(&s->lock);
		return first_call(s, st, c, url, method, version);
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
	conn_set_reading(s, c, false); /* the whole request is in: no deadline in a handler */
	return run_handler(s, st, c, url, method);
}

static void request_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                              enum MHD_RequestTerminationCode toe)
{
	(void)toe;
	struct api_server *s = cls;
	conn_set_reading(s, c, true); /* the next request on this connection is due from now */
	struct request_state *st = *con_cls;
	if (!st)
		return;
	gi_buf_destroy(&st->body);
	gi_free(st->path_param);
	bool counted = st->counted;
	gi_free(st);
	*con_cls = NULL;
	if (counted) {
		pthread_mutex_lock(&s->lock);
		s->in_flight--;
		pthread_mutex_unlock(&s->lock);
	}
}

/* Stops the reaper thread (if running) and frees the tracking locks. */
static void reaper_stop(struct api_server *s)
{
	pthread_mutex_lock(&s->conn_lock);
	s->stopping = true;
	pthread_cond_signal(&s->reaper_cond);
	pthread_mutex_unlock(&s->conn_lock);
	if (s->reaper_started)
		pthread_join(s->reaper, NULL);
	s->reaper_started = false;
	pthread_cond_destroy(&s->reaper_cond);
	pthread_mutex_destroy(&s->conn_lock);
}

int api_server_start(const struct api_server_config *cfg, struct api_server **out)
{
	*out = NULL;
	pthread_once(&mhd_once, mhd_load);
	if (mhd_rc) {
		gi_log_error(cfg->name ? cfg->name : "http", "cannot serve HTTP: %s", mhd_err);
		return mhd_rc;
	}
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
	s->public_raw_routes = cfg->public_raw_routes;
	s->ctx = cfg->ctx;
	if (strcmp(addr, "0.0.0.0") != 0) {
		s->hosts[s->nhosts++] = gi_strdup(addr);
	} else {
		char own[256];
		if (gethostname(own, sizeof(own)) == 0) {
			own[sizeof(own) - 1] = '\0';
			s->hosts[s->nhosts++] = gi_strdup(own);
		}
	}
	for (int i = 0; cfg->allowed_hosts && cfg->allowed_hosts[i] && i < API_ALLOWED_HOSTS_MAX;
	     i++)
		s->hosts[s->nhosts++] = gi_strdup(cfg->allowed_hosts[i]);
	gi_strlcpy(s->name, cfg->name ? cfg->name : "http", sizeof(s->name));
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->conn_lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->reaper_cond, &ca);
	pthread_condattr_destroy(&ca);
	s->conn_limit =
	    cfg->connection_limit > 0 ? cfg->connection_limit : API_CONNECTION_LIMIT_DEFAULT;
	s->ip_conn_limit = cfg->ip_connection_limit > 0 ? cfg->ip_connection_limit
	                                                : API_IP_CONNECTION_LIMIT_DEFAULT;
	if (s->ip_conn_limit > s->conn_limit)
		s->ip_conn_limit = s->conn_limit;
	s->request_timeout_ms = 1000LL * (cfg->request_timeout > 0 ? cfg->request_timeout
	                                                           : API_REQUEST_TIMEOUT_DEFAULT);
	if (pthread_create(&s->reaper, NULL, reaper_main, s) == 0)
		s->reaper_started = true;

	struct sockaddr_in sa;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, addr, &sa.sin_addr);

	unsigned timeout = cfg->connection_timeout > 0 ? (unsigned)cfg->connection_timeout : 30;
	unsigned limit = (unsigned)s->conn_limit + CONN_RESERVE;
	unsigned flags = MHD_USE_AUTO | MHD_USE_INTERNAL_POLLING_THREAD |
	                 MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ITC;
	s->daemon = MHD_start_daemon(
	    flags, (uint16_t)port, NULL, NULL, access_handler, s, MHD_OPTION_SOCK_ADDR,
	    (struct sockaddr *)&sa, MHD_OPTION_NOTIFY_COMPLETED, request_completed, s,
	    MHD_OPTION_NOTIFY_CONNECTION, notify_connection, s, MHD_OPTION_URI_LOG_CALLBACK,
	    uri_logger, s, MHD_OPTION_CONNECTION_TIMEOUT, timeout, MHD_OPTION_CONNECTION_LIMIT,
	    limit, MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u, MHD_OPTION_THREAD_STACK_SIZE,
	    (size_t)(1024 * 1024), MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024),
	    MHD_OPTION_STRICT_FOR_CLIENT, (int)1, MHD_OPTION_END);
	if (!s->daemon) {
		gi_log_error(s->name, "cannot listen on %s:%d (port in use?)", addr, port);
		reaper_stop(s);
		pthread_mutex_destroy(&s->lock);
		for (int i = 0; i < s->nhosts; i++)
			gi_free(s->hosts[i]);
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
	reaper_stop(s);
	if (s->shut_slow || s->shut_evicted || s->refused)
		gi_log_info(s->name,
		            "connections shut: %lld past the request deadline, %lld to make room, "
		            "%lld refused",
		            (long long)s->shut_slow, (long long)s->shut_evicted,
		            (long long)s->refused);
	pthread_mutex_destroy(&s->lock);
	for (int i = 0; i < s->nhosts; i++)
		gi_free(s->hosts[i]);
	gi_free(s->token);
	gi_free(s);
	gi_log_info("http", "server stopped");
}
