/*
 * hostile.c - the daemons' HTTP layer against hostile and broken clients, on
 * real `giulia worker` / `giulia monitor` processes over raw loopback sockets:
 * embedded NUL, lax integers, smuggling-shaped framing, over-long names,
 * names that would share a directory, and slow clients at the connection
 * limit. All traffic stays on 127.0.0.1 and every wait is bounded.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>

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
	const char hdr[] = "GET /health HTTP/1.1\r\nHost: a\r\nX-Name: a%00b\r\n"
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
	                          "POST /api/runtime/ingest HTTP/1.1\r\nHost: a\r\n"
	                          "Content-Length: 5\r\nContent-Length: 40\r\n\r\n"
	                          "{}   GET /health HTTP/1.1\r\nHost: a\r\n\r\n",
	                          400);
	expect_refused_and_closed(w.port,
	                          "POST /api/runtime/ingest HTTP/1.1\r\nHost: a\r\n"
	                          "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
	                          400);
	expect_refused_and_closed(w.port,
	                          "POST /api/runtime/ingest HTTP/1.1\r\nHost: a\r\n"
	                          "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"
	                          "2\r\n{}\r\n0\r\n\r\nGET /health HTTP/1.1\r\nHost: a\r\n\r\n",
	                          400);
	/* HTTP/1.1 needs exactly one Host. */
	expect_refused_and_closed(w.port, "GET /health HTTP/1.1\r\n\r\n", 400);
	expect_refused_and_closed(w.port, "GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
	                          400);
	/* Content-Length the library cannot parse: refused and closed. */
	expect_refused_and_closed(w.port,
	                          "POST /api/runtime/ingest HTTP/1.1\r\nHost: a\r\n"
	                          "Content-Length: -1\r\n\r\n{}GET /health HTTP/1.1\r\n\r\n",
	                          400);
	bool closed = false;
	const char huge[] = "POST /api/runtime/ingest HTTP/1.1\r\nHost: a\r\n"
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

/* ---- slow clients ---- */

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
	static const char start[] = "POST /api/runtime/ingest HTTP/1.1\r\nHost: a\r\nX-Slow: ";
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

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(nul_and_lax_integers_are_refused),
	    TH_TEST(framing_is_strict),
	    TH_TEST(slow_clients_cannot_take_the_worker),
	    TH_END,
	};
	return th_main(argc, argv, "integration_hostile", tests);
}
