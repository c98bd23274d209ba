/*
 * api_http.c - libFuzzer target for the worker's HTTP surface: request
 * parsing (libmicrohttpd), routing, body caps, JSON parsing and the
 * validation of every route, down to the SQLite store.
 *
 * One worker runs in-process on a loopback port with its data in a fresh
 * temporary directory. Each input becomes one request: its first byte picks
 * the route, the bytes up to the first newline are the query string (or the
 * path parameter), the rest is the body. The server must answer every
 * request with an HTTP status and stay up.
 * needs:
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "api/worker.h"
#include "base/buf.h"
#include "base/log.h"
#include "base/runtime.h"

static const char *const ROUTES[][2] = {
    {"POST", "/api/runtime/ingest"},
    {"POST", "/api/runtime/ingest/finalize"},
    {"POST", "/api/index/scan"},
    {"GET", "/api/runtime/observation/"},
    {"GET", "/api/runtime/profile/"},
    {"GET", "/api/runtime/observations?"},
    {"GET", "/api/knowledge/dependents?"},
    {"GET", "/api/index/modules?"},
    {"DELETE", "/health?"},
    {"POST", "/nowhere/"},
};

static int port;

static void start_worker(void)
{
	char dir[] = "/tmp/giulia-fuzz-api-XXXXXX";
	if (!mkdtemp(dir))
		abort();
	gi_log_set_level(GI_LOG_ERROR);
	/* Designated: positional fields went wrong when the store option came
	 * (64 KB landed in `token`), so the target crashed on its first input. */
	struct api_worker_config cfg = {
	    .listen = "127.0.0.1:0", .data_dir = dir, .body_limit = 64 * 1024};
	struct api_worker *w;
	if (api_worker_start(&cfg, &w) != 0)
		abort();
	port = api_worker_port(w);
}

/* Sends the request and returns the response status, or -1. */
static int roundtrip(const char *req, size_t len)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
		abort();
	size_t off = 0;
	while (off < len) {
		ssize_t n = send(fd, req + off, len - off, MSG_NOSIGNAL);
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	shutdown(fd, SHUT_WR);
	char buf[64] = {0};
	size_t got = 0;
	while (got < sizeof(buf) - 1) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 10000) <= 0)
			break;
		ssize_t n = recv(fd, buf + got, sizeof(buf) - 1 - got, 0);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	int status = -1;
	if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
		return -1;
	return status;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gi_runtime_init();
	if (!port)
		start_worker();
	if (size < 1)
		return 0;
	const char *const *route = ROUTES[data[0] % (sizeof(ROUTES) / sizeof(ROUTES[0]))];
	const char *rest = (const char *)data + 1;
	size_t rest_len = size - 1;
	const char *nl = memchr(rest, '\n', rest_len);
	size_t qlen = nl ? (size_t)(nl - rest) : 0;
	const char *body = nl ? nl + 1 : rest;
	size_t blen = rest_len - (nl ? qlen + 1 : 0);

	struct gi_buf req;
	gi_buf_init(&req, 0);
	gi_buf_printf(&req, "%s %s", route[0], route[1]);
	/* The request line cannot hold spaces, CR, LF or NUL: escape those bytes. */
	for (size_t i = 0; i < qlen && i < 2048; i++) {
		unsigned char c = (unsigned char)rest[i];
		if (c <= ' ' || c >= 0x7f || c == '%')
			gi_buf_printf(&req, "%%%02X", c);
		else
			gi_buf_append(&req, &rest[i], 1);
	}
	gi_buf_printf(&req,
	              " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
	              "Content-Length: %zu\r\nConnection: close\r\n\r\n",
	              blen);
	gi_buf_append(&req, body, blen);
	int status = roundtrip(req.data, req.len);
	gi_buf_destroy(&req);
	if (status < 200 || status > 599) {
		fprintf(stderr, "api_http: no HTTP answer (status %d)\n", status);
		abort();
	}
	return 0;
}
