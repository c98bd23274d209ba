/*
 * dash.c - the dashboard's assets and its pass-through to the monitor (see
 * dash.h).
 *
 * Assets are compressed once, when the dashboard is created (a few hundred
 * kilobytes at most), and served from memory. The pass-through speaks
 * HTTP/1.0 to the monitor over a plain socket: the monitor then answers
 * without chunked framing and ends the body by closing, so an event stream
 * can be relayed byte for byte as it arrives, which libcurl's easy interface
 * cannot do from inside a pull-style response callback.
 */
#include "api/dash.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "base/str.h"
#include "dash_assets.h"
#include "net/client.h"

#define RELAY_HEADERS_MAX (16 * 1024)
#define RELAY_BODY_MAX    (64 * 1024 * 1024)
#define RELAY_CONNECT_MS  2000
#define RELAY_CALL_MS     330000 /* observe/stop may wait minutes for the profile */
#define RELAY_STREAM_IDLE 45000  /* the monitor's heartbeat is every 15 s */
#define RELAY_POLL_MS     500

struct gz_asset {
	unsigned char *data; /* NULL when compression did not help */
	size_t len;
};

struct api_dash {
	char host[256];
	char port[16];
	struct gz_asset *gz; /* one per dash_assets entry */
	int closing;         /* atomic */
};

static struct gz_asset gzip_of(const unsigned char *data, size_t len)
{
	struct gz_asset out = {NULL, 0};
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK)
		return out;
	size_t cap = deflateBound(&z, (uLong)len) + 32;
	unsigned char *buf = gi_malloc(cap);
	z.next_in = (unsigned char *)data;
	z.avail_in = (uInt)len;
	z.next_out = buf;
	z.avail_out = (uInt)cap;
	if (deflate(&z, Z_FINISH) == Z_STREAM_END && z.total_out < len) {
		out.data = buf;
		out.len = z.total_out;
	} else {
		gi_free(buf);
	}
	deflateEnd(&z);
	return out;
}

struct api_dash *api_dash_new(const char *monitor_url)
{
	struct api_dash *d = gi_calloc(1, sizeof(*d));
	const char *u = monitor_url ? monitor_url : "http://127.0.0.1:4001";
	if (GI_STR_STARTS(u, "http://"))
		u += 7;
	const char *colon = strrchr(u, ':');
	size_t hl = colon ? (size_t)(colon - u) : strlen(u);
	if (hl >= sizeof(d->host))
		hl = sizeof(d->host) - 1;
	memcpy(d->host, u, hl);
	d->host[hl] = '\0';
	size_t pl = 0;
	for (const char *p = colon ? colon + 1 : "80";
	     *p >= '0' && *p <= '9' && pl + 1 < sizeof(d->port); p++)
		d->port[pl++] = *p;
	d->port[pl] = '\0';
	d->gz = gi_calloc(dash_assets_count ? dash_assets_count : 1, sizeof(*d->gz));
	for (size_t i = 0; i < dash_assets_count; i++)
		d->gz[i] = gzip_of(dash_assets[i].data, dash_assets[i].len);
	return d;
}

void api_dash_close(struct api_dash *dash)
{
	if (dash)
		__atomic_store_n(&dash->closing, 1, __ATOMIC_RELEASE);
}

void api_dash_free(struct api_dash *dash)
{
	if (!dash)
		return;
	for (size_t i = 0; i < dash_assets_count; i++)
		gi_free(dash->gz[i].data);
	gi_free(dash->gz);
	gi_free(dash);
}

static void header_add(struct api_raw_response *resp, const char *name, const char *value)
{
	if (resp->nheaders >= API_RAW_HEADERS_MAX)
		return;
	resp->header_names[resp->nheaders] = name;
	gi_strlcpy(resp->header_values[resp->nheaders], value, sizeof(resp->header_values[0]));
	resp->nheaders++;
}

static void body_set(struct api_raw_response *resp, const void *data, size_t len)
{
	resp->body = gi_malloc(len + 1);
	memcpy(resp->body, data, len);
	resp->body[len] = '\0';
	resp->body_len = len;
}

static void json_error(struct api_raw_response *resp, int status, const char *msg)
{
	json_t *e = json_pack("{s:s}", "error", msg);
	char *text = json_dumps(e, JSON_COMPACT);
	json_decref(e);
	resp->status = status;
	resp->content_type = "application/json";
	body_set(resp, text ? text : "{}", text ? strlen(text) : 2);
	free(text); /* jansson's allocator */
}

static bool accepts_gzip(const struct api_request *req)
{
	const char *ae = api_request_header(req, "Accept-Encoding");
	return ae && strstr(ae, "gzip") != NULL;
}

void api_dash_route_asset(struct api_dash *dash, const struct api_request *req,
                          struct api_raw_response *resp)
{
	const struct dash_asset *a = NULL;
	size_t i;
	for (i = 0; i < dash_assets_count; i++)
		if (strcmp(dash_assets[i].path, req->path) == 0) {
			a = &dash_assets[i];
			break;
		}
	if (!a) {
		json_error(resp, 404, "no such dashboard file: the dashboard is at /");
		return;
	}
	resp->status = 200;
	resp->content_type = a->type;
	header_add(resp, "Content-Security-Policy", API_DASH_CSP);
	header_add(resp, "X-Content-Type-Options", "nosniff");
	header_add(resp, "Referrer-Policy", "no-referrer");
	header_add(resp, "X-Frame-Options", "DENY");
	header_add(resp, "Cache-Control", "no-cache");
	header_add(resp, "Vary", "Accept-Encoding");
	if (dash->gz[i].data && accepts_gzip(req)) {
		header_add(resp, "Content-Encoding", "gzip");
		body_set(resp, dash->gz[i].data, dash->gz[i].len);
	} else {
		body_set(resp, a->data, a->len);
	}
}

/* ---- the pass-through ---- */

struct relay {
	struct api_dash *dash;
	int fd;
	struct gi_buf pre; /* body bytes read with the headers */
	size_t pre_off;
	int64_t last_byte_ms;
};

static int relay_connect(struct api_dash *d)
{
	struct addrinfo hints, *res = NULL;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(d->host, d->port, &hints, &res) != 0 || !res)
		return -1;
	int fd = -1;
	for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
			continue;
		struct timeval tv = {RELAY_CONNECT_MS / 1000, 0};
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	return fd;
}

static bool send_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* Waits up to `ms` for bytes; returns what recv returned, or -2 on a timeout. */
static ssize_t recv_wait(int fd, char *buf, size_t max, int ms)
{
	struct pollfd p = {fd, POLLIN, 0};
	int r = poll(&p, 1, ms);
	if (r == 0)
		return -2;
	if (r < 0)
		return errno == EINTR ? -2 : -1;
	return recv(fd, buf, max, 0);
}

static bool monitor_path_allowed(const char *path)
{
	return strcmp(path, "/health") == 0 || GI_STR_STARTS(path, "/api/runtime/") ||
	       GI_STR_STARTS(path, "/api/monitor/");
}

static bool ascii_ieq(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char x = a[i], y = b[i];
		if (x >= 'A' && x <= 'Z')
			x = (char)(x - 'A' + 'a');
		if (y >= 'A' && y <= 'Z')
			y = (char)(y - 'A' + 'a');
		if (x != y)
			return false;
	}
	return true;
}

int api_dash_parse_head(const char *data, size_t len, int *status, char *type, size_t type_size,
                        size_t *head_len)
{
	*status = 0;
	*head_len = 0;
	if (type_size)
		type[0] = '\0';
	size_t scan = len < API_DASH_HEAD_MAX ? len : API_DASH_HEAD_MAX;
	size_t end = 0;
	for (size_t i = 0; i + 3 < scan; i++)
		if (data[i] == '\r' && data[i + 1] == '\n' && data[i + 2] == '\r' &&
		    data[i + 3] == '\n') {
			end = i + 4;
			break;
		}
	if (!end)
		return len < API_DASH_HEAD_MAX ? 0 : GI_EPARSE;
	/* "HTTP/1.x NNN" */
	if (end < 12 || !GI_MEM_IS(data, 7, "HTTP/1.") || data[8] != ' ')
		return GI_EPARSE;
	int code = 0;
	for (int i = 9; i < 12; i++) {
		if (data[i] < '0' || data[i] > '9')
			return GI_EPARSE;
		code = code * 10 + (data[i] - '0');
	}
	if (code < 100 || code > 599 || (data[12] != ' ' && data[12] != '\r'))
		return GI_EPARSE;
	/* Header lines: the first Content-Type wins. */
	static const char CT[] = "content-type:";
	size_t ctl = sizeof(CT) - 1;
	for (size_t i = 0; i + 2 < end; i++) {
		if (data[i] != '\r' || data[i + 1] != '\n')
			continue;
		size_t h = i + 2;
		if (h + ctl > end || !ascii_ieq(data + h, CT, ctl))
			continue;
		h += ctl;
		while (h < end && data[h] == ' ')
			h++;
		size_t n = 0;
		while (h + n < end && data[h + n] != '\r' && data[h + n] != '\n')
			n++;
		if (type_size) {
			if (n >= type_size)
				n = type_size - 1;
			memcpy(type, data + h, n);
			type[n] = '\0';
		}
		break;
	}
	*status = code;
	*head_len = end;
	return 0;
}

static long relay_read(void *arg, char *buf, size_t max)
{
	struct relay *r = arg;
	if (r->pre_off < r->pre.len) {
		size_t n = r->pre.len - r->pre_off;
		if (n > max)
			n = max;
		memcpy(buf, r->pre.data + r->pre_off, n);
		r->pre_off += n;
		return (long)n;
	}
	for (;;) {
		if (__atomic_load_n(&r->dash->closing, __ATOMIC_ACQUIRE))
			return -1;
		ssize_t n = recv_wait(r->fd, buf, max, RELAY_POLL_MS);
		if (n > 0) {
			r->last_byte_ms = gi_clock_mono_ms();
			return (long)n;
		}
		if (n != -2 || gi_clock_mono_ms() - r->last_byte_ms > RELAY_STREAM_IDLE)
			return -1;
	}
}

static void relay_done(void *arg)
{
	struct relay *r = arg;
	close(r->fd);
	gi_buf_destroy(&r->pre);
	gi_free(r);
}

static const char *const RELAY_QUERY[] = {
    "node",   "metric",   "limit", "window_ms",        "fresh", "process", "keys",
    "values", "messages", "state", "state_timeout_ms", "sort",  "app",     "depth",
    "width",  "confirm"};
#define RELAY_QUERY_COUNT (sizeof(RELAY_QUERY) / sizeof(RELAY_QUERY[0]))

/* The request line's target: the monitor path and the known parameters. */
static char *relay_target(const struct api_request *req, const char *path, bool *bad)
{
	const char *query[2 * RELAY_QUERY_COUNT + 1];
	size_t q = 0;
	for (size_t i = 0; i < RELAY_QUERY_COUNT; i++) {
		bool invalid = false;
		const char *v = api_request_query(req, RELAY_QUERY[i], &invalid);
		if (invalid)
			*bad = true;
		if (v) {
			query[q++] = RELAY_QUERY[i];
			query[q++] = v;
		}
	}
	query[q] = NULL;
	return net_client_url("", path, query);
}

void api_dash_route_monitor(struct api_dash *dash, const struct api_request *req, const char *body,
                            size_t body_len, struct api_raw_response *resp)
{
	const char *path = req->path + strlen("/monitor");
	if (!monitor_path_allowed(path)) {
		json_error(resp, 404,
		           "the pass-through reaches the monitor's API only "
		           "(/monitor/health, /monitor/api/runtime/..., "
		           "/monitor/api/monitor/...)");
		return;
	}
	bool bad = false;
	char *target = relay_target(req, path, &bad);
	if (bad) {
		gi_free(target);
		json_error(resp, 400, "a query parameter is not valid UTF-8 or too long");
		return;
	}
	struct gi_buf out;
	gi_buf_init(&out, 0);
	gi_buf_printf(&out, "%s %s HTTP/1.0\r\nHost: %s:%s\r\nConnection: close\r\n",
	              strcmp(req->method, "POST") == 0 ? "POST" : "GET", target, dash->host,
	              dash->port);
	gi_free(target);
	const char *auth = api_request_header(req, "Authorization");
	const char *last = api_request_header(req, "Last-Event-ID");
	if (auth && !strpbrk(auth, "\r\n"))
		gi_buf_printf(&out, "Authorization: %s\r\n", auth);
	if (last && !strpbrk(last, "\r\n") && strlen(last) <= 32)
		gi_buf_printf(&out, "Last-Event-ID: %s\r\n", last);
	if (strcmp(req->method, "POST") == 0)
		gi_buf_printf(&out, "Content-Type: application/json\r\nContent-Length: %zu\r\n",
		              body_len);
	gi_buf_puts(&out, "\r\n");

	int fd = relay_connect(dash);
	bool sent = fd >= 0 && send_all(fd, out.data, out.len) &&
	            (strcmp(req->method, "POST") != 0 || send_all(fd, body, body_len));
	gi_buf_destroy(&out);
	if (!sent) {
		if (fd >= 0)
			close(fd);
		json_error(resp, 502,
		           "the monitor does not answer: start it (`giulia serve` "
		           "runs both) or give the worker its address (--monitor)");
		return;
	}
	/* Headers first, with whatever body bytes came with them. */
	struct gi_buf in;
	gi_buf_init(&in, RELAY_BODY_MAX);
	char chunk[16384];
	char type[128];
	int status = 0;
	size_t head_len = 0;
	int parsed = 0;
	int64_t deadline = gi_clock_mono_ms() + RELAY_CALL_MS;
	while (parsed == 0 && head_len == 0) {
		int left = (int)(deadline - gi_clock_mono_ms());
		ssize_t n = left > 0 ? recv_wait(fd, chunk, sizeof(chunk), left) : -2;
		if (n <= 0 || gi_buf_append(&in, chunk, (size_t)n) != 0)
			break;
		parsed =
		    api_dash_parse_head(in.data, in.len, &status, type, sizeof(type), &head_len);
	}
	if (parsed != 0 || head_len == 0) {
		close(fd);
		gi_buf_destroy(&in);
		json_error(resp, 502, "the monitor's answer was cut or malformed");
		return;
	}
	resp->status = status;
	if (GI_STR_STARTS(type, "text/event-stream")) {
		struct relay *r = gi_calloc(1, sizeof(*r));
		r->dash = dash;
		r->fd = fd;
		gi_buf_init(&r->pre, 0);
		gi_buf_append(&r->pre, in.data + head_len, in.len - head_len);
		r->last_byte_ms = gi_clock_mono_ms();
		gi_buf_destroy(&in);
		resp->content_type = "text/event-stream";
		header_add(resp, "Cache-Control", "no-store");
		resp->read = relay_read;
		resp->done = relay_done;
		resp->stream = r;
		return;
	}
	/* A plain answer: read to the end (the monitor closes). */
	for (;;) {
		int left = (int)(deadline - gi_clock_mono_ms());
		ssize_t n = left > 0 ? recv_wait(fd, chunk, sizeof(chunk), left) : -2;
		if (n == 0)
			break;
		if (n < 0 || gi_buf_append(&in, chunk, (size_t)n) != 0) {
			close(fd);
			gi_buf_destroy(&in);
			json_error(resp, 502,
			           "the monitor's answer was cut, too large or too slow");
			return;
		}
	}
	close(fd);
	resp->content_type =
	    GI_STR_STARTS(type, "application/json") ? "application/json" : "text/plain";
	body_set(resp, in.data + head_len, in.len - head_len);
	gi_buf_destroy(&in);
}
