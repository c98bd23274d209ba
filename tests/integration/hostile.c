/*
 * hostile.c - the daemons' HTTP layer against hostile and broken clients, on
 * real `giulia worker` / `giulia monitor` processes over raw loopback sockets:
 * embedded NUL, lax integers, smuggling-shaped framing, over-long names,
 * names that would share a directory, and slow clients at the connection
 * limit. All traffic stays on 127.0.0.1 and every wait is bounded.
 * needs:
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "net/client.h"
#include "api/pusher.h"
#include "api_util.h"
#include "base/error.h"

/* Sends `data` on a new connection and reads until the daemon closes it or
 * `timeout_ms` passes. Returns the bytes read (caller frees); *closed tells
 * whether the daemon closed the connection. */
static char *raw_exchange(int port, const char *data, size_t len, int timeout_ms, bool *closed)
{
	int fd = td_connect(port);
	TH_ASSERT_MSG(fd >= 0, "cannot connect to port %d", port);
	(void)td_send_all(fd, data, len);
	size_t cap = 65536, got = 0;
	char *buf = malloc(cap + 1);
	*closed = false;
	int64_t deadline = gi_clock_mono_ms() + timeout_ms;
	while (got < cap) {
		int left = (int)(deadline - gi_clock_mono_ms());
		if (left <= 0)
			break;
		struct pollfd p = {fd, POLLIN, 0};
		if (poll(&p, 1, left) <= 0)
			break;
		ssize_t n = recv(fd, buf + got, cap - got, 0);
		if (n <= 0) {
			*closed = true;
			break;
		}
		got += (size_t)n;
	}
	buf[got] = '\0';
	close(fd);
	return buf;
}

static int count_of(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static int status_of(const char *response)
{
	int status = -1;
	if (sscanf(response, "HTTP/1.%*d %d", &status) != 1)
		return -1;
	return status;
}

/* A request with the given framing gets `want` and the connection is closed,
 * with nothing after it answered (no smuggled second request). */
static void expect_refused_and_closed(int port, const char *request, int want)
{
	bool closed = false;
	char *resp = raw_exchange(port, request, strlen(request), 20000, &closed);
	TH_ASSERT_MSG(status_of(resp) == want, "want %d for %.60s..., got: %.300s", want, request,
	              resp);
	TH_ASSERT_MSG(closed, "the connection stayed open after %.60s...", request);
	TH_ASSERT_MSG(strstr(resp, "\"status\":\"ok\"") == NULL,
	              "a request smuggled after %.60s... was answered: %.400s", request, resp);
	free(resp);
}

static void nul_and_lax_integers_are_refused(void)
{
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	/* Before: /health%00x answered 200, the others were cut at the NUL. */
	TD_EXPECT_ERROR(&w, "GET", "/health%00x", NULL, 400);
	TD_EXPECT_ERROR(&w, "GET", "/api/knowledge/summary?path=/tmp/shop%00/etc", NULL, 400);
	TD_EXPECT_ERROR(&w, "GET", "/api/runtime/profile/1%00", NULL, 400);
	TD_EXPECT_ERROR(&w, "GET", "/api/runtime/profile/1?x=%00", NULL, 400);
	/* Integers: no '+', no leading space, anywhere. */
	TD_EXPECT_ERROR(&w, "GET", "/api/runtime/profile/%20%201", NULL, 400);
	TD_EXPECT_ERROR(&w, "GET", "/api/runtime/profile/%2b1", NULL, 400);
	TD_EXPECT_ERROR(&w, "GET", "/api/knowledge/centrality?path=/tmp&top=%2b5", NULL, 400);
	TD_EXPECT_ERROR(&w, "GET", "/api/knowledge/centrality?path=/tmp&top=%205", NULL, 400);
	TH_ASSERT_INT_EQ(td_get(&w, "/health", NULL), 200);
	/* The header NUL check: a %00 never reaches a handler through a header either. */
	const char hdr[] = "GET /health HTTP/1.1\r\nHost: localhost\r\nX-Name: a%00b\r\n"
	                   "Connection: close\r\n\r\n";
	bool closed = false;
	char *resp = raw_exchange(w.port, hdr, sizeof(hdr) - 1, 20000, &closed);
	TH_ASSERT_INT_EQ(status_of(resp), 200); /* %00 in a header value is just text */
	free(resp);
}

static void framing_is_strict(void)
{
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	/* Two Content-Length headers: before, the first won and the rest of the
	 * body was served as a second request on the same connection. */
	expect_refused_and_closed(w.port,
	                          "POST /api/runtime/ingest HTTP/1.1\r\nHost: localhost\r\n"
	                          "Content-Length: 5\r\nContent-Length: 40\r\n\r\n"
	                          "{}   GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n",
	                          400);
	expect_refused_and_closed(w.port,
	                          "POST /api/runtime/ingest HTTP/1.1\r\nHost: localhost\r\n"
	                          "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
	                          400);
	expect_refused_and_closed(
	    w.port,
	    "POST /api/runtime/ingest HTTP/1.1\r\nHost: localhost\r\n"
	    "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"
	    "2\r\n{}\r\n0\r\n\r\nGET /health HTTP/1.1\r\nHost: localhost\r\n\r\n",
	    400);
	/* HTTP/1.1 needs exactly one Host. */
	expect_refused_and_closed(w.port, "GET /health HTTP/1.1\r\n\r\n", 400);
	expect_refused_and_closed(
	    w.port, "GET /health HTTP/1.1\r\nHost: localhost\r\nHost: localhost\r\n\r\n", 400);
	/* Content-Length the library cannot parse: refused and closed. */
	expect_refused_and_closed(w.port,
	                          "POST /api/runtime/ingest HTTP/1.1\r\nHost: localhost\r\n"
	                          "Content-Length: -1\r\n\r\n{}GET /health HTTP/1.1\r\n\r\n",
	                          400);
	bool closed = false;
	const char huge[] = "POST /api/runtime/ingest HTTP/1.1\r\nHost: localhost\r\n"
	                    "Content-Length: 99999999999999999999\r\n\r\n{}";
	char *resp = raw_exchange(w.port, huge, sizeof(huge) - 1, 20000, &closed);
	int st = status_of(resp);
	TH_ASSERT_MSG(st == 400 || st == 413, "huge Content-Length: %.300s", resp);
	TH_ASSERT(closed);
	free(resp);
	/* HTTP/1.0 without Host is fine, and the daemon is still serving. */
	resp = raw_exchange(w.port, "GET /health HTTP/1.0\r\n\r\n", 24, 20000, &closed);
	TH_ASSERT_INT_EQ(status_of(resp), 200);
	TH_ASSERT_INT_EQ(count_of(resp, "HTTP/1."), 1);
	free(resp);
	TH_ASSERT_INT_EQ(td_get(&w, "/health", NULL), 200);
}

/* ---- names and limits ---- */

static char *name_of_length(size_t total, const char *host)
{
	size_t hlen = strlen(host), alen = total - 1 - hlen;
	char *s = malloc(total + 1);
	memset(s, 'a', alen);
	s[alen] = '@';
	memcpy(s + alen + 1, host, hlen + 1);
	return s;
}

static int ingest_as(const struct td_daemon *w, const char *sid, const char *node, int seq)
{
	char *body = td_snapshot(sid, node, seq);
	int st = td_post(w, "/api/runtime/ingest", body, NULL);
	free(body);
	return st;
}

/* A tiny but valid .beam header, enough for the object code route. */
static char *object_code_body(const char *node, const char *module)
{
	json_t *b = json_pack("{s:s, s:[{s:s, s:s}]}", "node", node, "modules", "module", module,
	                      "code", "Rk9SMQAAAARCRUFNAAAAAA==");
	char *text = json_dumps(b, JSON_COMPACT);
	json_decref(b);
	return text;
}

static void names_are_checked_against_real_limits(void)
{
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	/* 255 bytes is Erlang's limit for a node name; 256 used to pass and then
	 * fail with 500 "input/output error". */
	char *n255 = name_of_length(255, "127.0.0.1");
	char *n256 = name_of_length(256, "127.0.0.1");
	TH_ASSERT_INT_EQ(ingest_as(&w, "long-1", n255, 0), 200);
	TH_ASSERT_INT_EQ(ingest_as(&w, "long-2", n256, 0), 400);
	char *body = object_code_body(n256, "m");
	TD_EXPECT_ERROR(&w, "POST", "/api/runtime/ingest/object_code", body, 400);
	free(body);
	/* Names that are not node names are refused, not mapped onto another
	 * node's directory (a@b;rm used to share DATA/nodes/a@b_rm). */
	TH_ASSERT_INT_EQ(ingest_as(&w, "odd-1", "a@b;rm", 0), 400);
	TH_ASSERT_INT_EQ(ingest_as(&w, "odd-2", "a b@host", 0), 400);
	TH_ASSERT_INT_EQ(ingest_as(&w, "odd-3", "a@b@c", 0), 400);
	body = object_code_body("a@b;rm", "m");
	TD_EXPECT_ERROR(&w, "POST", "/api/runtime/ingest/object_code", body, 400);
	free(body);
	body = object_code_body("a@b_rm", "m");
	TH_ASSERT_INT_EQ(td_post(&w, "/api/runtime/ingest/object_code", body, NULL), 200);
	free(body);
	char dir[1024];
	snprintf(dir, sizeof(dir), "%s/nodes/a@b_rm/ebin/m.beam", w.data);
	TH_ASSERT_MSG(access(dir, F_OK) == 0, "%s was not written", dir);

	/* Module names: the cache file NAME.beam and its temporary must fit
	 * 255 bytes; longer names get 400 and a reason, not 500. */
	for (size_t len = 239; len <= 255; len += 8) {
		char mod[300];
		memset(mod, 'm', len);
		mod[len] = '\0';
		body = object_code_body("shop@127.0.0.1", mod);
		json_t *r = NULL;
		TH_ASSERT_INT_EQ(td_post(&w, "/api/runtime/ingest/object_code", body, &r), 400);
		TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(r, "error")),
		                       "longer than");
		json_decref(r);
		free(body);
	}
	char mod[300];
	memset(mod, 'm', 238);
	mod[238] = '\0';
	body = object_code_body("shop@127.0.0.1", mod);
	TH_ASSERT_INT_EQ(td_post(&w, "/api/runtime/ingest/object_code", body, NULL), 200);
	free(body);

	/* The monitor checks node names with the same rule. */
	struct td_daemon m = {0};
	snprintf(m.data, sizeof(m.data), "%s/monitor", th_tmpdir());
	char worker_arg[128];
	snprintf(worker_arg, sizeof(worker_arg), "%s", w.url);
	const char *extra[] = {"--worker", worker_arg, NULL};
	td_start(&m, "monitor", extra);
	char path[600];
	snprintf(path, sizeof(path), "/api/runtime/pulse?node=%s", n256);
	TD_EXPECT_ERROR(&m, "GET", path, NULL, 400);
	TD_EXPECT_ERROR(&m, "GET", "/api/runtime/pulse?node=a@b%3Brm", NULL, 400);
	free(n255);
	free(n256);
}

static void a_session_observes_one_node(void)
{
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	TH_ASSERT_INT_EQ(ingest_as(&w, "one-node", "shop@127.0.0.1", 0), 200);
	TH_ASSERT_INT_EQ(ingest_as(&w, "one-node", "shop@127.0.0.1", 1), 200);
	json_t *r = NULL;
	char *body = td_snapshot("one-node", "other@127.0.0.1", 2);
	TH_ASSERT_INT_EQ(td_post(&w, "/api/runtime/ingest", body, &r), 409);
	TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(r, "error")), "shop@127.0.0.1");
	json_decref(r);
	free(body);
	json_t *o = NULL;
	TH_ASSERT_INT_EQ(td_get(&w, "/api/runtime/observation/one-node", &o), 200);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(o, "snapshots")), 2);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(o, "node")), "shop@127.0.0.1");
	json_decref(o);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	TH_ASSERT_MSG(f != NULL, "cannot write %s", path);
	fputs(text, f);
	fclose(f);
}

static void depth_is_what_the_docs_say(void)
{
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	char root[600], lib[700], file[800];
	snprintf(root, sizeof(root), "%s/chain", th_tmpdir());
	snprintf(lib, sizeof(lib), "%s/lib", root);
	TH_ASSERT(mkdir(root, 0755) == 0 && mkdir(lib, 0755) == 0);
	/* A chain M0 <- M1 <- ... <- M69: deeper than the old silent cap of 64. */
	for (int i = 0; i < 70; i++) {
		char text[256];
		if (i == 0)
			snprintf(text, sizeof(text), "defmodule M0 do\n  def f, do: :ok\nend\n");
		else
			snprintf(text, sizeof(text),
			         "defmodule M%d do\n  def f, do: M%d.f()\nend\n", i, i - 1);
		snprintf(file, sizeof(file), "%s/m%d.ex", lib, i);
		write_file(file, text);
	}
	json_t *body = json_pack("{s:s}", "path", root);
	char *text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	TH_ASSERT_INT_EQ(td_post(&w, "/api/index/scan", text, NULL), 200);
	free(text);
	char path[1024];
	snprintf(path, sizeof(path), "/api/knowledge/impact?path=%s&module=M0&depth=1000", root);
	json_t *r = NULL;
	TH_ASSERT_INT_EQ(td_get(&w, path, &r), 200);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "depth")), 1000);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "dependent_count")), 69);
	json_decref(r);
	snprintf(path, sizeof(path), "/api/knowledge/impact?path=%s&module=M0&depth=1001", root);
	TD_EXPECT_ERROR(&w, "GET", path, NULL, 400);
}

static void pusher_free_deferred(void *arg)
{
	api_pusher_free(arg, 0);
}

static json_t *stats_of(struct api_pusher *p)
{
	return api_pusher_stats(p);
}

static void delivery_error_clears_when_delivery_recovers(void)
{
	net_client_global_init();
	struct td_daemon w = {0};
	w.port = ts_free_port();
	snprintf(w.url, sizeof(w.url), "http://127.0.0.1:%d", w.port);
	char spool[600];
	snprintf(spool, sizeof(spool), "%s/spool", th_tmpdir());
	struct api_pusher_config pc = {
	    .worker_url = w.url, .token = NULL, .spool_dir = spool, .timeout_ms = 5000};
	struct api_pusher *p;
	TH_ASSERT_OK(api_pusher_new(&pc, &p));
	th_defer(pusher_free_deferred, p);
	char *text = td_snapshot("recover-1", "demo@127.0.0.1", 0);
	json_t *snap = json_loads(text, 0, NULL);
	free(text);
	TH_ASSERT_OK(api_pusher_push(p, API_PUSH_INGEST, snap));
	json_decref(snap);
	/* No worker yet: the delivery error is reported. */
	int64_t deadline = gi_clock_mono_ms() + 30000;
	json_t *s = NULL;
	for (;;) {
		s = stats_of(p);
		if (json_is_string(json_object_get(s, "last_error")) ||
		    gi_clock_mono_ms() > deadline)
			break;
		json_decref(s);
		gi_clock_sleep_ms(50);
	}
	TH_ASSERT(json_is_string(json_object_get(s, "last_error")));
	json_decref(s);
	td_worker(&w, NULL);
	TH_ASSERT_OK(api_pusher_drain(p, 60000));
	s = stats_of(p);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(s, "delivered")), 1);
	TH_ASSERT_MSG(json_is_null(json_object_get(s, "last_error")) ||
	                  !json_object_get(s, "last_error"),
	              "last_error still says %s after delivery recovered",
	              json_string_value(json_object_get(s, "last_error")));
	json_decref(s);
}

/* ---- slow clients ---- */

/* Reads until end of stream or `timeout_ms`; true when the daemon closed. */
static bool closed_by_daemon(int fd, int timeout_ms)
{
	int64_t deadline = gi_clock_mono_ms() + timeout_ms;
	char buf[512];
	for (;;) {
		int left = (int)(deadline - gi_clock_mono_ms());
		if (left <= 0)
			return false;
		struct pollfd p = {fd, POLLIN, 0};
		if (poll(&p, 1, left) <= 0)
			return false;
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0)
			return true;
	}
}

static void per_address_cap_and_request_deadline_options(void)
{
	struct td_daemon w = {0};
	snprintf(w.data, sizeof(w.data), "%s/worker", th_tmpdir());
	const char *extra[] = {"--request-timeout", "2", "--ip-connection-limit", "2", NULL};
	td_start(&w, "worker", extra);
	static const char partial[] = "GET /health HTTP/1.1\r\nHost: localhost\r\nX-Slow: ";
	int a = td_connect(w.port);
	TH_ASSERT(a >= 0 && td_send_all(a, partial, sizeof(partial) - 1));
	gi_clock_sleep_ms(100);
	int b = td_connect(w.port);
	TH_ASSERT(b >= 0 && td_send_all(b, partial, sizeof(partial) - 1));
	gi_clock_sleep_ms(100);
	/* A third connection from the same address: over the cap of 2, the oldest
	 * one still sending its request (a) makes room, and /health answers. */
	TH_ASSERT_INT_EQ(td_get(&w, "/health", NULL), 200);
	TH_ASSERT_MSG(closed_by_daemon(a, 20000), "the oldest slow connection was not shut");
	/* b never finishes its request: shut at the 2 s deadline, though it trickles. */
	bool shut = false;
	int64_t deadline = gi_clock_mono_ms() + 30000;
	while (!shut && gi_clock_mono_ms() < deadline) {
		(void)send(b, "x", 1, MSG_NOSIGNAL);
		shut = closed_by_daemon(b, 500);
	}
	TH_ASSERT_MSG(shut, "a trickling connection outlived the request deadline");
	close(a);
	close(b);
	/* Bad values are usage errors. */
	char bin[1024];
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	const char *argv[] = {bin, "worker", "--request-timeout", "+5", NULL};
	char *out = NULL, *err = NULL;
	TH_ASSERT_INT_EQ(ts_run(argv, NULL, 20000, &out, &err), 2);
	free(out);
	free(err);
}

#define TRICKLERS 4200

static void raise_fd_limit(int want)
{
	struct rlimit rl;
	TH_ASSERT(getrlimit(RLIMIT_NOFILE, &rl) == 0);
	if (rl.rlim_cur >= (rlim_t)want)
		return;
	if (rl.rlim_max < (rlim_t)want)
		th_skip("RLIMIT_NOFILE hard limit %llu is below the %d descriptors the test needs",
		        (unsigned long long)rl.rlim_max, want);
	rl.rlim_cur = (rlim_t)want;
	TH_ASSERT(setrlimit(RLIMIT_NOFILE, &rl) == 0);
}

/* Starts a non-blocking connection to 127.0.0.1:port; -1 when out of sockets. */
static int connect_nonblocking(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	return fd;
}

/* One byte on each open trickler; closes those the daemon has shut (a send
 * error or an end of stream) and returns how many are still open. */
static int trickle_round(int *fds, int n, char byte)
{
	int open_count = 0;
	for (int i = 0; i < n; i++) {
		if (fds[i] < 0)
			continue;
		char sink[512];
		ssize_t r = recv(fds[i], sink, sizeof(sink), MSG_DONTWAIT);
		bool dead = r == 0 ||
		            (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOTCONN);
		if (!dead && send(fds[i], &byte, 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
		    errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOTCONN &&
		    errno != EINPROGRESS)
			dead = true;
		if (dead) {
			close(fds[i]);
			fds[i] = -1;
		} else {
			open_count++;
		}
	}
	return open_count;
}

static void slow_clients_cannot_take_the_worker(void)
{
	raise_fd_limit(TRICKLERS + 256);
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	static int fds[TRICKLERS];
	for (int i = 0; i < TRICKLERS; i++)
		fds[i] = connect_nonblocking(w.port);
	/* Each starts a request and never finishes it: one byte a second keeps
	 * the idle timeout (30 s) from ever firing. */
	gi_clock_sleep_ms(500);
	static const char start[] =
	    "POST /api/runtime/ingest HTTP/1.1\r\nHost: localhost\r\nX-Slow: ";
	for (int i = 0; i < TRICKLERS; i++)
		if (fds[i] >= 0)
			(void)send(fds[i], start, sizeof(start) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);

	/* While they trickle, /health and an ingest still answer. */
	int64_t deadline = gi_clock_mono_ms() + 120000;
	int rounds = 0, open_count = TRICKLERS;
	bool health_ok = false, ingest_ok = false;
	while (gi_clock_mono_ms() < deadline) {
		open_count = trickle_round(fds, TRICKLERS, 'x');
		if (!health_ok)
			health_ok = td_get(&w, "/health", NULL) == 200;
		if (!ingest_ok) {
			char *body = td_snapshot("slow-1", "demo@127.0.0.1", 1);
			ingest_ok = td_post(&w, "/api/runtime/ingest", body, NULL) == 200;
			free(body);
		}
		rounds++;
		if (health_ok && ingest_ok && open_count == 0)
			break;
		gi_clock_sleep_ms(1000);
	}
	TH_ASSERT_MSG(health_ok, "/health never answered among %d slow clients", TRICKLERS);
	TH_ASSERT_MSG(ingest_ok, "an ingest never answered among %d slow clients", TRICKLERS);
	/* None of them outlives the request deadline, however steadily it trickles. */
	TH_ASSERT_MSG(open_count == 0, "%d slow clients still open after %d rounds", open_count,
	              rounds);
	TH_ASSERT_INT_EQ(td_get(&w, "/health", NULL), 200);
	json_t *o = NULL;
	TH_ASSERT_INT_EQ(td_get(&w, "/api/runtime/observation/slow-1", &o), 200);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(o, "snapshots")), 1);
	json_decref(o);
}

/* The bearer scheme is case-insensitive; two Authorization headers are
 * refused as framing (before, the first won whatever the second said). */
static void authorization_is_read_as_the_rfc_says(void)
{
	struct td_daemon w = {0};
	snprintf(w.token, sizeof(w.token), "tok");
	td_worker(&w, NULL);
	const char *ok[] = {"Bearer tok", "bearer tok", "BEARER tok"};
	for (size_t i = 0; i < 3; i++) {
		char req[256];
		int n = snprintf(req, sizeof(req),
		                 "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: %s\r\n"
		                 "Connection: close\r\n\r\n",
		                 ok[i]);
		TH_ASSERT_MSG(td_raw(w.port, req, (size_t)n) == 200, "Authorization: %s", ok[i]);
	}
	static const char wrong_first[] =
	    "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	    "Authorization: Bearer nope\r\nAuthorization: Bearer tok\r\n"
	    "\r\n";
	static const char right_first[] =
	    "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	    "Authorization: Bearer tok\r\nAuthorization: Bearer nope\r\n"
	    "\r\n";
	expect_refused_and_closed(w.port, wrong_first, 400);
	expect_refused_and_closed(w.port, right_first, 400);
}

/* ---- web pages (issue 28, item 3) ---- */

struct route_probe {
	const char *method, *path, *body;
};

/* One route of each family of each daemon: their paths, public dashboard
 * assets and the dashboard's pass-through included. */
static const struct route_probe WORKER_ROUTES[] = {
    {"GET", "/health", NULL},
    {"GET", "/", NULL},
    {"GET", "/dash/app.js", NULL},
    {"GET", "/metrics", NULL},
    {"GET", "/api/projects", NULL},
    {"GET", "/api/search/text?q=secret", NULL},
    {"GET", "/api/knowledge/briefing", NULL},
    {"GET", "/api/checks/contracts", NULL},
    {"GET", "/api/review", NULL},
    {"GET", "/api/runtime/observations", NULL},
    {"GET", "/api/runtime/profile/latest", NULL},
    {"POST", "/api/index/scan", "{\"path\":\"/nonexistent/giulia-probe\"}"},
    {"POST", "/api/plan/validate", "{}"},
    {"POST", "/api/check", "{}"},
    {"POST", "/api/runtime/ingest", "{\"session_id\":\"s\",\"node\":\"a@b\",\"seq\":0}"},
    {"POST", "/api/runtime/ingest/batch", "{\"items\":[]}"},
    {"POST", "/api/runtime/ingest/finalize", "{\"session_id\":\"s\",\"node\":\"a@b\"}"},
    {"POST", "/api/runtime/ingest/object_code", "{\"node\":\"a@b\",\"modules\":[]}"},
    {"POST", "/mcp", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"},
    {"GET", "/monitor/api/monitor/observe/status", NULL},
    {"POST", "/monitor/api/monitor/observe/start", "{\"node\":\"app@127.0.0.1\"}"},
    {NULL, NULL, NULL},
};

static const struct route_probe MONITOR_ROUTES[] = {
    {"GET", "/health", NULL},
    {"GET", "/metrics", NULL},
    {"GET", "/api/monitor/observe/status", NULL},
    {"GET", "/api/runtime/pulse?node=app@127.0.0.1", NULL},
    {"GET", "/api/runtime/alerts?node=app@127.0.0.1", NULL},
    {"POST", "/api/monitor/observe/start",
     "{\"node\":\"app@127.0.0.1\",\"trace_modules\":[\"Elixir.App.Repo\"],\"lease_ms\":600000}"},
    {"POST", "/api/monitor/observe/stop", "{\"node\":\"app@127.0.0.1\"}"},
    {"POST", "/api/runtime/connect", "{\"node\":\"app@127.0.0.1\",\"cookie\":\"c\"}"},
    {"POST", "/api/monitor/cluster", "{\"node\":\"app@127.0.0.1\"}"},
    {NULL, NULL, NULL},
};

/* The status of METHOD PATH sent with `host` (the Host header's value) and
 * the extra header lines `extra` ("" or lines ending in \r\n). */
static int probe_status(int port, const struct route_probe *r, const char *host, const char *extra)
{
	char req[2048];
	const char *body = r->body ? r->body : "";
	int n = snprintf(req, sizeof(req),
	                 "%s %s HTTP/1.1\r\nHost: %s\r\n%sContent-Length: %zu\r\n"
	                 "Connection: close\r\n\r\n%s",
	                 r->method, r->path, host, extra, strlen(body), body);
	TH_ASSERT(n > 0 && (size_t)n < sizeof(req));
	return td_raw(port, req, (size_t)n);
}

/* Every route of `routes` on `port`: a foreign Origin (another site's
 * page: CSRF) and a foreign Host (a page of a name rebound to 127.0.0.1)
 * are refused with 403; a POST that is not application/json (a page's
 * simple request) with 415; the same request from loopback with JSON gets
 * past those checks. */
static void expect_browser_safe(int port, const struct route_probe *routes)
{
	char loop[64], rebound[64], json[128];
	snprintf(loop, sizeof(loop), "127.0.0.1:%d", port);
	snprintf(rebound, sizeof(rebound), "attacker.example:%d", port);
	snprintf(json, sizeof(json), "Content-Type: application/json\r\n");
	for (const struct route_probe *r = routes; r->method; r++) {
		bool post = strcmp(r->method, "POST") == 0;
		const char *ct = post ? json : "";
		char extra[512];
		int st;
		snprintf(extra, sizeof(extra), "Origin: http://evil.example\r\n%s", ct);
		st = probe_status(port, r, loop, extra);
		TH_ASSERT_MSG(st == 403, "%s %s with a foreign Origin: %d", r->method, r->path, st);
		snprintf(extra, sizeof(extra), "Origin: null\r\n%s", ct);
		st = probe_status(port, r, loop, extra);
		TH_ASSERT_MSG(st == 403, "%s %s with Origin null: %d", r->method, r->path, st);
		st = probe_status(port, r, rebound, ct);
		TH_ASSERT_MSG(st == 403, "%s %s with Host %s: %d", r->method, r->path, rebound, st);
		snprintf(extra, sizeof(extra), "Origin: http://%s\r\n%s", rebound, ct);
		st = probe_status(port, r, rebound, extra);
		TH_ASSERT_MSG(st == 403, "%s %s rebound, same origin: %d", r->method, r->path, st);
		if (post) {
			st = probe_status(port, r, loop, "Content-Type: text/plain\r\n");
			TH_ASSERT_MSG(st == 415, "%s %s as text/plain: %d", r->method, r->path, st);
			st = probe_status(port, r, loop,
			                  "Content-Type: application/x-www-form-urlencoded\r\n");
			TH_ASSERT_MSG(st == 415, "%s %s as a form: %d", r->method, r->path, st);
			st = probe_status(port, r, loop, "");
			TH_ASSERT_MSG(st == 415, "%s %s without Content-Type: %d", r->method,
			              r->path, st);
		}
		/* From loopback (the dashboard's own origin), JSON: past the checks. */
		snprintf(extra, sizeof(extra), "Origin: http://localhost:%d\r\n%s", port, ct);
		st = probe_status(port, r, loop, extra);
		TH_ASSERT_MSG(st > 0 && st != 403 && st != 415, "%s %s from loopback: %d",
		              r->method, r->path, st);
		st = probe_status(port, r, "localhost", ct);
		TH_ASSERT_MSG(st > 0 && st != 403 && st != 415, "%s %s Host localhost: %d",
		              r->method, r->path, st);
	}
}

static void web_pages_cannot_drive_the_daemons(void)
{
	struct td_daemon w = {0}, m = {0};
	td_reserve(&m);
	setenv("GIULIA_MONITOR_URL", m.url, 1); /* the dashboard's pass-through */
	td_worker(&w, NULL);
	td_monitor_for(&m, &w);
	expect_browser_safe(m.port, MONITOR_ROUTES);
	expect_browser_safe(w.port, WORKER_ROUTES);
	/* The attack: a text/plain start from another site set nothing,
	 * and a scan from a page left no index behind. */
	json_t *s = NULL;
	TH_ASSERT_INT_EQ(td_get(&m, "/api/monitor/observe/status", &s), 200);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(s, "observations")), 0);
	json_decref(s);
	/* --allow-host names a daemon's other name: accepted in Host and Origin. */
	struct td_daemon named = {0};
	snprintf(named.data, sizeof(named.data), "%s/named", th_tmpdir());
	const char *extra[] = {"--allow-host", "giulia.example", NULL};
	td_start(&named, "worker", extra);
	const struct route_probe health = {"GET", "/health", NULL};
	char host[64];
	snprintf(host, sizeof(host), "giulia.example:%d", named.port);
	TH_ASSERT_INT_EQ(
	    probe_status(named.port, &health, host, "Origin: http://giulia.example\r\n"), 200);
	TH_ASSERT_INT_EQ(probe_status(named.port, &health, "other.example", ""), 403);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(nul_and_lax_integers_are_refused),
	    TH_TEST(framing_is_strict),
	    TH_TEST(web_pages_cannot_drive_the_daemons),
	    TH_TEST(authorization_is_read_as_the_rfc_says),
	    TH_TEST(names_are_checked_against_real_limits),
	    TH_TEST(a_session_observes_one_node),
	    TH_TEST(depth_is_what_the_docs_say),
	    TH_TEST(delivery_error_clears_when_delivery_recovers),
	    TH_TEST(per_address_cap_and_request_deadline_options),
	    TH_TEST(slow_clients_cannot_take_the_worker),
	    TH_END,
	};
	return th_main(argc, argv, "integration_hostile", tests);
}
