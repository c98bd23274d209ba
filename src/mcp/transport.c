/*
 * transport.c - the two MCP transports over the core of mcp.c (see mcp.h):
 * stdio (newline-delimited JSON-RPC, one message per line, logs on stderr
 * only) and the Streamable HTTP rules of /mcp (Origin, protocol version
 * header, sessions, JSON or one-event SSE replies), independent of the HTTP
 * server that carries them.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "base/str.h"
#include "mcp/mcp_int.h"

#define STDIO_READ_CHUNK   65536
#define STDIO_IDLE_POLL_MS 2000

/* ---- stdio -------------------------------------------------------------- */

static int write_all(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return GI_EIO;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

static int write_line(int fd, const char *text)
{
	int rc = write_all(fd, text, strlen(text));
	return rc ? rc : write_all(fd, "\n", 1);
}

/* The id of the newest profile the worker has (0: none yet). */
static int latest_profile_id(struct mcp_server *s, long long *id)
{
	char err[256];
	json_t *r = NULL;
	const char *q[] = {"limit", "1", NULL};
	int rc = mcp_daemon_call(s, false, "GET", "/api/runtime/profiles", q, NULL, 1000, &r, err,
	                         sizeof(err));
	if (rc)
		return rc;
	json_t *first = json_array_get(json_object_get(r, "profiles"), 0);
	*id = first ? json_integer_value(json_object_get(first, "id")) : 0;
	json_decref(r);
	return 0;
}

static const char LIST_CHANGED[] =
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/list_changed\"}";

/* Sends notifications/resources/list_changed when the worker has a profile
 * this server has not seen yet (a profile was finalised). */
static int profiles_check(struct mcp_server *s, int out_fd)
{
	long long id = 0;
	if (latest_profile_id(s, &id) != 0)
		return 0;
	bool changed = s->last_profile_id >= 0 && id != s->last_profile_id;
	s->last_profile_id = id;
	return changed ? write_line(out_fd, LIST_CHANGED) : 0;
}

static int line_handle(struct mcp_server *s, struct mcp_session *sess, const char *line, size_t len,
                       int out_fd)
{
	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	if (len == 0)
		return 0;
	char *reply = NULL;
	mcp_session_handle(s, sess, line, len, &reply, NULL);
	int rc = reply ? write_line(out_fd, reply) : 0;
	gi_free(reply);
	return rc;
}

int mcp_stdio_run(struct mcp_server *s, int in_fd, int out_fd)
{
	struct mcp_session sess;
	memset(&sess, 0, sizeof(sess));
	struct gi_buf line;
	gi_buf_init(&line, 0);
	char *chunk = gi_malloc(STDIO_READ_CHUNK);
	bool skipping = false; /* inside a line over the cap: drop it to its end */
	int rc = 0;
	for (;;) {
		struct pollfd p = {in_fd, POLLIN, 0};
		int ready = poll(&p, 1, sess.initialized ? STDIO_IDLE_POLL_MS : -1);
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready == 0) {
			if ((rc = profiles_check(s, out_fd)) != 0)
				break;
			continue;
		}
		ssize_t n = read(in_fd, chunk, STDIO_READ_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		const char *c = chunk, *end = chunk + n;
		while (c < end) {
			const char *nl = memchr(c, '\n', (size_t)(end - c));
			size_t take = (size_t)((nl ? nl : end) - c);
			if (!skipping && line.len + take > MCP_MESSAGE_MAX) {
				skipping = true;
				gi_buf_reset(&line);
				rc = write_line(
				    out_fd, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":"
				            "-32600,\"message\":\"message larger than the 4 MB "
				            "cap: dropped\"}}");
				if (rc)
					goto done;
			}
			if (!skipping)
				gi_buf_append(&line, c, take);
			if (!nl)
				break;
			if (!skipping && line.len > 0)
				rc = line_handle(s, &sess, line.data, line.len, out_fd);
			skipping = false;
			gi_buf_reset(&line);
			if (rc)
				goto done;
			c = nl + 1;
		}
	}
	if (!skipping && line.len > 0)
		rc = line_handle(s, &sess, line.data, line.len, out_fd);
done:
	gi_free(chunk);
	gi_buf_destroy(&line);
	return rc;
}

/* ---- Streamable HTTP ---------------------------------------------------- */

bool mcp_origin_is_loopback(const char *origin)
{
	const char *host;
	if (gi_str_starts_with(origin, "http://"))
		host = origin + 7;
	else if (gi_str_starts_with(origin, "https://"))
		host = origin + 8;
	else
		return false;
	size_t len;
	if (host[0] == '[') {
		const char *close = strchr(host, ']');
		if (!close || !GI_STR_STARTS(host, "[::1]") || close != host + 4)
			return false;
		host = close + 1;
		len = 0;
	} else {
		len = strcspn(host, ":/");
		if (!((len == 9 && strncasecmp(host, "localhost", 9) == 0) ||
		      (len >= 7 && GI_STR_STARTS(host, "127.") &&
		       strspn(host, "0123456789.") >= len)))
			return false;
	}
	const char *rest = host + len;
	if (*rest == ':') {
		rest++;
		size_t digits = strspn(rest, "0123456789");
		if (digits == 0 || digits > 5)
			return false;
		rest += digits;
	}
	return *rest == '\0' || strcmp(rest, "/") == 0;
}

static void session_id_new(char out[40])
{
	unsigned char raw[16] = {0};
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, raw, sizeof(raw)) != (ssize_t)sizeof(raw)) {
		/* no entropy source: still unique in this process, if guessable */
		long long t = gi_clock_mono_us();
		memcpy(raw, &t, sizeof(t));
	}
	if (fd >= 0)
		close(fd);
	static const char hex[] = "0123456789abcdef";
	for (int i = 0; i < 16; i++) {
		out[2 * i] = hex[raw[i] >> 4];
		out[2 * i + 1] = hex[raw[i] & 15];
	}
	out[32] = '\0';
}

/* Index of the session `id` (lock held), or -1. */
static int session_find(struct mcp_server *s, const char *id)
{
	for (int i = 0; i < s->nsessions; i++)
		if (gi_str_secure_equal(s->sessions[i]->id, id))
			return i;
	return -1;
}

static void session_add(struct mcp_server *s, const struct mcp_session *sess)
{
	pthread_mutex_lock(&s->lock);
	if (s->nsessions == MCP_SESSIONS_MAX) {
		int oldest = 0;
		for (int i = 1; i < s->nsessions; i++)
			if (s->sessions[i]->last_used_ms < s->sessions[oldest]->last_used_ms)
				oldest = i;
		gi_free(s->sessions[oldest]);
		s->sessions[oldest] = s->sessions[--s->nsessions];
	}
	struct mcp_session *copy = gi_malloc(sizeof(*copy));
	*copy = *sess;
	s->sessions[s->nsessions++] = copy;
	pthread_mutex_unlock(&s->lock);
}

static void respond_error(struct mcp_http_response *resp, int status, int code, const char *msg)
{
	json_t *e = json_pack("{s:s, s:n, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", "error", "code",
	                      code, "message", msg);
	char *text = json_dumps(e, JSON_COMPACT);
	json_decref(e);
	resp->status = status;
	resp->content_type = "application/json";
	resp->body = gi_strdup(text ? text : "{}");
	resp->body_len = strlen(resp->body);
	free(text);
}

static bool accepts(const char *accept, const char *type)
{
	return accept && strstr(accept, type) != NULL;
}

/* Whether the parsed message (or batch) holds at least one request. */
static bool has_request(json_t *msg)
{
	if (json_is_array(msg)) {
		size_t i;
		json_t *m;
		json_array_foreach(msg, i, m)
		{
			if (has_request(m))
				return true;
		}
		return false;
	}
	return json_is_object(msg) && json_object_get(msg, "method") && json_object_get(msg, "id");
}

static bool is_initialize_request(json_t *msg)
{
	const char *m = json_string_value(json_object_get(msg, "method"));
	return m && strcmp(m, "initialize") == 0;
}

static void http_post(struct mcp_server *s, const struct mcp_http_request *req,
                      struct mcp_http_response *resp)
{
	bool sse =
	    !accepts(req->accept, "application/json") && accepts(req->accept, "text/event-stream");
	if (!sse && !accepts(req->accept, "application/json") && !accepts(req->accept, "*/*") &&
	    req->accept) {
		respond_error(resp, 406, -32600,
		              "Accept must allow application/json or text/event-stream");
		return;
	}
	json_t *msg = json_loadb(req->body ? req->body : "", req->body_len,
	                         JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, NULL);
	bool init = msg && is_initialize_request(msg);
	struct mcp_session sess;
	memset(&sess, 0, sizeof(sess));
	int idx = -1;
	if (!init && msg) {
		if (!req->session_id) {
			json_decref(msg);
			respond_error(resp, 400, -32600,
			              "missing Mcp-Session-Id header: send initialize first");
			return;
		}
		pthread_mutex_lock(&s->lock);
		idx = session_find(s, req->session_id);
		if (idx >= 0) {
			s->sessions[idx]->last_used_ms = gi_clock_mono_ms();
			sess = *s->sessions[idx];
		}
		pthread_mutex_unlock(&s->lock);
		if (idx < 0) {
			json_decref(msg);
			respond_error(resp, 404, -32001,
			              "unknown or expired session: initialize a new one");
			return;
		}
		if (req->protocol_version && strcmp(req->protocol_version, sess.revision) != 0) {
			json_decref(msg);
			respond_error(
			    resp, 400, -32600,
			    "MCP-Protocol-Version does not match the negotiated revision");
			return;
		}
	}
	bool request = msg && has_request(msg);
	bool msg_parsed = msg != NULL;
	json_decref(msg);
	char *reply = NULL;
	bool initialized = false;
	mcp_session_handle(s, &sess, req->body ? req->body : "", req->body_len, &reply,
	                   &initialized);
	if (initialized) {
		session_id_new(sess.id);
		sess.last_used_ms = gi_clock_mono_ms();
		session_add(s, &sess);
		gi_strlcpy(resp->session_id, sess.id, sizeof(resp->session_id));
	} else if (idx >= 0) {
		pthread_mutex_lock(&s->lock);
		int again = session_find(s, sess.id);
		if (again >= 0)
			s->sessions[again]->initialized = sess.initialized;
		pthread_mutex_unlock(&s->lock);
	}
	if (!reply && !request) {
		resp->status = 202;
		return;
	}
	if (!reply) {
		respond_error(resp, 500, -32603, "no reply");
		return;
	}
	resp->status = msg_parsed ? 200 : 400;
	if (sse) {
		struct gi_buf b;
		gi_buf_init(&b, 0);
		gi_buf_printf(&b, "event: message\ndata: %s\n\n", reply);
		gi_free(reply);
		resp->content_type = "text/event-stream";
		resp->body_len = b.len;
		resp->body = gi_buf_take(&b);
	} else {
		resp->content_type = "application/json";
		resp->body_len = strlen(reply);
		resp->body = reply;
	}
}

/* ---- the GET event stream ---- */

#define STREAM_CHECK_MS     2000
#define STREAM_KEEPALIVE_MS 10000

struct mcp_stream {
	struct mcp_server *s;
	char session[40];
	long long last_profile_id; /* -1: not read yet */
	char pending[256];
	size_t len, off;
	long long next_check_ms, next_keepalive_ms;
};

static void stream_queue(struct mcp_stream *st, const char *text)
{
	int n = snprintf(st->pending, sizeof(st->pending), "%s", text);
	st->len = n > 0 && (size_t)n < sizeof(st->pending) ? (size_t)n : 0;
	st->off = 0;
	st->next_keepalive_ms = gi_clock_mono_ms() + STREAM_KEEPALIVE_MS;
}

/* Waits (lock held) until `deadline_ms` or a shutdown; true when the stream
 * must end. */
static bool stream_wait(struct mcp_stream *st, long long deadline_ms)
{
	struct mcp_server *s = st->s;
	long long wait = deadline_ms - gi_clock_mono_ms();
	if (wait > 1000)
		wait = 1000;
	if (wait > 0 && !s->streams_stopping) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (wait % 1000) * 1000000L;
		ts.tv_sec += wait / 1000 + ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&s->streams_wake, &s->lock, &ts);
	}
	return s->streams_stopping || session_find(s, st->session) < 0;
}

static long stream_read(void *arg, char *buf, size_t max)
{
	struct mcp_stream *st = arg;
	for (;;) {
		if (st->off < st->len) {
			size_t n = st->len - st->off < max ? st->len - st->off : max;
			memcpy(buf, st->pending + st->off, n);
			st->off += n;
			return (long)n;
		}
		long long next = st->next_check_ms < st->next_keepalive_ms ? st->next_check_ms
		                                                           : st->next_keepalive_ms;
		pthread_mutex_lock(&st->s->lock);
		bool end = stream_wait(st, next);
		pthread_mutex_unlock(&st->s->lock);
		if (end)
			return -1;
		long long now = gi_clock_mono_ms(), id = 0;
		if (now >= st->next_check_ms) {
			st->next_check_ms = now + STREAM_CHECK_MS;
			if (latest_profile_id(st->s, &id) == 0) {
				bool changed =
				    st->last_profile_id >= 0 && id != st->last_profile_id;
				st->last_profile_id = id;
				if (changed) {
					char event[200];
					snprintf(event, sizeof(event),
					         "event: message\ndata: %s\n\n", LIST_CHANGED);
					stream_queue(st, event);
					continue;
				}
			}
		}
		if (gi_clock_mono_ms() >= st->next_keepalive_ms)
			stream_queue(st, ": keep-alive\n\n");
	}
}

static void stream_done(void *arg)
{
	struct mcp_stream *st = arg;
	struct mcp_server *s = st->s;
	gi_free(st);
	pthread_mutex_lock(&s->lock);
	s->nstreams--;
	pthread_cond_broadcast(&s->streams_wake);
	pthread_mutex_unlock(&s->lock);
}

static void http_get(struct mcp_server *s, const struct mcp_http_request *req,
                     struct mcp_http_response *resp)
{
	if (!req->session_id) {
		respond_error(resp, 400, -32600,
		              "missing Mcp-Session-Id header: send initialize first");
		return;
	}
	bool wants_stream = accepts(req->accept, "text/event-stream");
	pthread_mutex_lock(&s->lock);
	bool known = session_find(s, req->session_id) >= 0;
	bool full = s->nstreams >= MCP_STREAMS_MAX || s->streams_stopping;
	if (known && wants_stream && !full)
		s->nstreams++;
	pthread_mutex_unlock(&s->lock);
	if (!known) {
		respond_error(resp, 404, -32001,
		              "unknown or expired session: initialize a new one");
		return;
	}
	if (!wants_stream) {
		respond_error(resp, 406, -32600, "GET /mcp needs Accept: text/event-stream");
		return;
	}
	if (full) {
		respond_error(resp, 503, -32603, "too many open event streams; try again later");
		return;
	}
	struct mcp_stream *st = gi_calloc(1, sizeof(*st));
	st->s = s;
	gi_strlcpy(st->session, req->session_id, sizeof(st->session));
	st->last_profile_id = -1;
	if (latest_profile_id(s, &st->last_profile_id) != 0)
		st->last_profile_id = -1;
	st->next_check_ms = gi_clock_mono_ms() + STREAM_CHECK_MS;
	/* an SSE comment first, so that the client sees the stream open */
	stream_queue(st, ": stream open\n\n");
	resp->status = 200;
	resp->content_type = "text/event-stream";
	resp->read = stream_read;
	resp->done = stream_done;
	resp->stream = st;
}

void mcp_http_handle(struct mcp_server *s, const struct mcp_http_request *req,
                     struct mcp_http_response *resp)
{
	memset(resp, 0, sizeof(*resp));
	if (req->origin && !mcp_origin_is_loopback(req->origin)) {
		respond_error(resp, 403, -32600,
		              "Origin is not a loopback origin: requests from web pages of other "
		              "sites are refused");
		return;
	}
	if (req->protocol_version && !mcp_revision_supported(req->protocol_version)) {
		char msg[256];
		snprintf(msg, sizeof(msg),
		         "unsupported MCP-Protocol-Version '%.32s'; supported: 2025-11-25, "
		         "2025-06-18, 2025-03-26",
		         req->protocol_version);
		respond_error(resp, 400, -32600, msg);
		return;
	}
	if (strcmp(req->method, "POST") == 0) {
		http_post(s, req, resp);
		return;
	}
	if (strcmp(req->method, "DELETE") == 0) {
		if (!req->session_id) {
			respond_error(resp, 400, -32600, "missing Mcp-Session-Id header");
			return;
		}
		pthread_mutex_lock(&s->lock);
		int idx = session_find(s, req->session_id);
		if (idx >= 0) {
			gi_free(s->sessions[idx]);
			s->sessions[idx] = s->sessions[--s->nsessions];
			pthread_cond_broadcast(&s->streams_wake); /* its stream ends */
		}
		pthread_mutex_unlock(&s->lock);
		if (idx < 0)
			respond_error(resp, 404, -32001, "unknown or expired session");
		else
			resp->status = 200;
		return;
	}
	http_get(s, req, resp);
}
