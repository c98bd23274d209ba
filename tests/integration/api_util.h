/*
 * api_util.h - helpers shared by the daemon test suites (api.c, daemon.c):
 * start real `giulia worker` / `giulia monitor` processes on free loopback
 * ports, talk JSON to them, and send raw bytes for the hostile tests.
 * Header-only (static functions) because every tests/integration/ file is a
 * suite of its own.
 */
#ifndef GIULIA_TESTS_API_UTIL_H
#define GIULIA_TESTS_API_UTIL_H

#include <arpa/inet.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "harness.h"
#include "support.h"

struct td_daemon {
	pid_t pid;
	int port;
	char url[64];
	char data[512];
	char log[600];
	char token[64];
};

/* The daemons a test started, by pid, for the deferred stop: the caller's
 * struct td_daemon is often a local of the test function, gone when th_defer's
 * hooks run, so the hook reads only this table. A pid that is no longer a
 * running child of ours (stopped, or killed and reaped by the test) is left
 * alone rather than signalled. */
#define TD_MAX_DAEMONS 32
static pid_t td_started[TD_MAX_DAEMONS];

static inline void td_stop_deferred(void *arg)
{
	pid_t *slot = arg;
	int status;
	if (*slot > 0 && waitpid(*slot, &status, WNOHANG) == 0)
		ts_stop(*slot, 20000);
	*slot = 0;
}

/* Stops the daemon `pid` when the test ends (unless the test stopped it). */
static inline void td_track(pid_t pid)
{
	int slot = 0;
	while (slot < TD_MAX_DAEMONS && td_started[slot] > 0)
		slot++;
	TH_ASSERT_MSG(slot < TD_MAX_DAEMONS, "more than %d daemons in one test", TD_MAX_DAEMONS);
	td_started[slot] = pid;
	th_defer(td_stop_deferred, &td_started[slot]);
}

/* Starts `giulia ROLE` with extra arguments and waits for /health. */
static inline void td_start(struct td_daemon *d, const char *role, const char *const *extra)
{
	const char *argv[32];
	int n = 0;
	char bin[1024], listen[64];
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	if (d->port == 0)
		d->port = ts_free_port();
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", d->port);
	snprintf(d->url, sizeof(d->url), "http://127.0.0.1:%d", d->port);
	snprintf(d->log, sizeof(d->log), "%s/%s-%d.log", th_tmpdir(), role, d->port);
	argv[n++] = bin;
	argv[n++] = role;
	argv[n++] = "--listen";
	argv[n++] = listen;
	argv[n++] = "--data";
	argv[n++] = d->data;
	if (d->token[0]) {
		argv[n++] = "--token";
		argv[n++] = d->token;
	}
	for (int i = 0; extra && extra[i] && n < 30; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	d->pid = ts_spawn(argv, d->log);
	TH_ASSERT_MSG(d->pid > 0, "could not start giulia %s", role);
	char health[128];
	snprintf(health, sizeof(health), "%s/health", d->url);
	int64_t deadline = gi_clock_mono_ms() + 30000;
	for (;;) {
		int st = ts_http("GET", health, NULL, d->token[0] ? d->token : NULL, NULL);
		if (st == 200)
			break;
		int status;
		if (waitpid(d->pid, &status, WNOHANG) == d->pid)
			th_fail(__FILE__, __LINE__, "giulia %s exited at start; log %s", role,
			        d->log);
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "giulia %s did not come up; log %s",
		              role, d->log);
		gi_clock_sleep_ms(50);
	}
	td_track(d->pid);
}

/* Gives `d` a free loopback port and its URL without starting anything: a
 * daemon that is down for now (td_start or td_worker starts it there). */
static inline void td_reserve(struct td_daemon *d)
{
	d->port = ts_free_port();
	snprintf(d->url, sizeof(d->url), "http://127.0.0.1:%d", d->port);
}

/* A worker on a fresh port with its data under `data` (NULL: TMP/worker). */
static inline void td_worker(struct td_daemon *d, const char *data)
{
	if (!d->data[0])
		snprintf(d->data, sizeof(d->data), "%s", data ? data : "");
	if (!d->data[0])
		snprintf(d->data, sizeof(d->data), "%s/worker", th_tmpdir());
	td_start(d, "worker", NULL);
}

/* Starts a monitor that delivers to worker `w` (data in m->data, else
 * TMP/monitor). */
static inline void td_monitor_for(struct td_daemon *m, const struct td_daemon *w)
{
	if (!m->data[0])
		snprintf(m->data, sizeof(m->data), "%s/monitor", th_tmpdir());
	const char *extra[] = {"--worker", w->url, NULL};
	td_start(m, "monitor", extra);
}

/* A worker (data in TMP/worker) and a monitor (TMP/monitor) that delivers
 * to it, both started; `w` and `m` are zeroed first. */
static inline void td_worker_and_monitor(struct td_daemon *w, struct td_daemon *m)
{
	memset(w, 0, sizeof(*w));
	memset(m, 0, sizeof(*m));
	td_worker(w, NULL);
	td_monitor_for(m, w);
}

/* The daemon is gone: the cleanup hooks no longer stop it. */
static inline void td_forget(struct td_daemon *d)
{
	for (int i = 0; i < TD_MAX_DAEMONS; i++)
		if (td_started[i] == d->pid)
			td_started[i] = 0;
	d->pid = 0;
}

/* Stops a daemon with SIGTERM and returns its exit status. */
static inline int td_stop(struct td_daemon *d)
{
	int st = ts_stop(d->pid, 30000);
	td_forget(d);
	return st;
}

/* Kills a daemon with SIGKILL (no shutdown of its own) and reaps it. */
static inline void td_kill(struct td_daemon *d)
{
	kill(d->pid, SIGKILL);
	waitpid(d->pid, NULL, 0);
	td_forget(d);
}

/* METHOD PATH with an optional body; *out (may be NULL) gets parsed JSON. */
static inline int td_call(const struct td_daemon *d, const char *method, const char *path,
                          const char *body, json_t **out)
{
	char url[4096];
	snprintf(url, sizeof(url), "%s%s", d->url, path);
	char *resp = NULL;
	int st = ts_http(method, url, body, d->token[0] ? d->token : NULL, &resp);
	if (out)
		*out = resp ? json_loads(resp, 0, NULL) : NULL;
	free(resp);
	return st;
}

static inline int td_get(const struct td_daemon *d, const char *path, json_t **out)
{
	return td_call(d, "GET", path, NULL, out);
}

static inline int td_post(const struct td_daemon *d, const char *path, const char *body,
                          json_t **out)
{
	return td_call(d, "POST", path, body, out);
}

/* Calls METHOD PATH and asserts a JSON error response with status `want`. */
#define TD_EXPECT_ERROR(d, method, path, body, want) \
	td_expect_error(__FILE__, __LINE__, d, method, path, body, want)

static inline void td_expect_error(const char *file, int line, const struct td_daemon *d,
                                   const char *method, const char *path, const char *body, int want)
{
	json_t *j = NULL;
	int st = td_call(d, method, path, body, &j);
	const char *msg = json_string_value(json_object_get(j, "error"));
	if (st != want || !msg)
		th_fail(file, line, "%s %s: status %d (want %d), error %s", method, path, st, want,
		        msg ? msg : "(missing)");
	json_decref(j);
}

/* A snapshot body for session `sid`, number `seq`. */
static inline char *td_snapshot(const char *sid, const char *node, int seq)
{
	json_t *s = json_pack(
	    "{s:i, s:s, s:s, s:i, s:I, s:i, s:{s:f}, s:{s:i}, s:{s:i, s:i},"
	    " s:{s:I}, s:{s:[{s:s, s:s, s:i, s:f, s:i, s:i}]}, s:[]}",
	    "version", 1, "session_id", sid, "node", node, "seq", seq, "timestamp_ms",
	    (json_int_t)(1764496229000LL + seq * 1000LL), "window_ms", 1000,
	    "scheduler_utilisation", "total", 0.25, "run_queue", "total", 0, "processes", "count",
	    400 + seq, "limit", 262144, "memory", "total", (json_int_t)(60000000 + seq * 1000),
	    "top_processes", "reductions", "pid", "<0.1.0>", "module", "Demo.Worker", "reductions",
	    1000 + seq, "cpu_share", 0.5, "memory_bytes", 1000, "message_queue_len", 0, "errors");
	char *text = json_dumps(s, JSON_COMPACT);
	json_decref(s);
	return text;
}

/* Connects to 127.0.0.1:port; returns the socket or -1. */
static inline int td_connect(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static inline bool td_send_all(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
		if (n <= 0)
			return false;
		data += n;
		len -= (size_t)n;
	}
	return true;
}

/* Reads until the peer closes or `timeout_ms` passes; returns the status of
 * the HTTP response read (or -1). */
static inline int td_read_status(int fd, int timeout_ms)
{
	char buf[8192];
	size_t got = 0;
	int64_t deadline = gi_clock_mono_ms() + timeout_ms;
	while (got < sizeof(buf) - 1) {
		int left = (int)(deadline - gi_clock_mono_ms());
		if (left <= 0)
			break;
		struct pollfd p = {fd, POLLIN, 0};
		if (poll(&p, 1, left) <= 0)
			break;
		ssize_t n = recv(fd, buf + got, sizeof(buf) - 1 - got, 0);
		if (n <= 0)
			break;
		got += (size_t)n;
		buf[got] = '\0';
		if (strstr(buf, "\r\n\r\n"))
			break;
	}
	buf[got] = '\0';
	int status = -1;
	if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
		status = -1;
	return status;
}

/* Sends raw request bytes on a new connection and returns the response status. */
static inline int td_raw(int port, const char *data, size_t len)
{
	int fd = td_connect(port);
	if (fd < 0)
		return -1;
	/* The daemon may answer (413, 400) and close before the request is all
	 * sent: the send then fails, but the answer is already there to read. */
	(void)td_send_all(fd, data, len);
	int st = td_read_status(fd, 30000);
	close(fd);
	return st;
}

#endif
