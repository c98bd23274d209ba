/*
 * Integration tests of the dashboard's server side over real HTTP: the
 * worker serves the embedded page with a strict Content-Security-Policy
 * (and gzip); token mode still serves the page, which holds no data, and
 * refuses every data route and the monitor pass-through without the token;
 * the pass-through reaches only the monitor's API. The monitor's event
 * stream (GET /api/monitor/stream) against a real observed node: three
 * snapshots arrive, the client disconnects, snapshots keep coming, and a
 * reconnect with Last-Event-ID gets every one it missed (the snapshots'
 * seq numbers run on with no hole), directly and through the worker.
 * needs: erlang-base
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "api/dash.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "base/clock.h"
#include "harness.h"
#include "product.h"
#include "support.h"

/* The port of "http://127.0.0.1:PORT". */
static int port_of(const char *url)
{
	const char *c = strrchr(url, ':');
	return c ? (int)strtol(c + 1, NULL, 10) : 0;
}

/* Sends `request` (HTTP/1.0: no chunked framing, the server closes) to
 * 127.0.0.1:port and reads the answer into `out` until the server closes,
 * `events` SSE events ("\n\n" after an "id:") have arrived, or `wait_ms`. */
/* Sends `request` and reads the answer into `out` until `events` whole
 * events (of type `kind`, or of any type when it is NULL) have come, the
 * peer closes, or `wait_ms` passes. Counting one type matters (an alert may
 * come between two snapshots), and so does counting only events whose data
 * has all come (a snapshot is larger than one read). */
static void http10(int port, const char *request, const char *kind, int events, int wait_ms,
                   struct gi_buf *out)
{
	char mark[64];
	if (kind)
		snprintf(mark, sizeof(mark), "\nevent: %s\n", kind);
	else
		snprintf(mark, sizeof(mark), "\nid: ");
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	TH_ASSERT(fd >= 0);
	struct sockaddr_in a;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	TH_ASSERT_MSG(connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0, "connect to %d", port);
	TH_ASSERT(send(fd, request, strlen(request), 0) == (ssize_t)strlen(request));
	int64_t deadline = gi_clock_mono_ms() + wait_ms;
	char buf[8192];
	for (;;) {
		if (events > 0) {
			int seen = 0;
			/* whole events only: a snapshot's data spans several reads */
			for (const char *p = strstr(gi_buf_str(out), mark); p && strstr(p, "\n\n");
			     p = strstr(p + 1, mark))
				seen++;
			if (seen >= events)
				break;
		}
		int left = (int)(deadline - gi_clock_mono_ms());
		if (left <= 0)
			break;
		struct pollfd p = {fd, POLLIN, 0};
		if (poll(&p, 1, left) <= 0)
			break;
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0)
			break;
		gi_buf_append(out, buf, (size_t)n);
	}
	close(fd);
}

static void get(int port, const char *path, const char *headers, struct gi_buf *out)
{
	char req[2048];
	snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\n%s\r\n", path, headers ? headers : "");
	http10(port, req, NULL, 0, 30000, out);
}

static void page_is_served_with_a_strict_policy(void)
{
	char wurl[256];
	ts_serve_start(wurl, sizeof(wurl));
	int port = port_of(wurl);
	struct gi_buf r;
	gi_buf_init(&r, 0);
	get(port, "/", NULL, &r);
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&r), "HTTP/1.1 200");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&r), "Content-Type: text/html; charset=utf-8\r\n");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&r), "Content-Security-Policy: " API_DASH_CSP "\r\n");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&r), "X-Content-Type-Options: nosniff\r\n");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&r), "<script src=\"/dash/app.js\" defer></script>");
	/* No inline script or style, no other origin in the page. */
	TH_ASSERT(!strstr(gi_buf_str(&r), "<script>"));
	TH_ASSERT(!strstr(gi_buf_str(&r), "<style"));
	TH_ASSERT(!strstr(gi_buf_str(&r), "http://"));
	TH_ASSERT(!strstr(gi_buf_str(&r), "https://"));
	gi_buf_reset(&r);
	get(port, "/dash/app.js", "Accept-Encoding: gzip, deflate\r\n", &r);
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&r), "Content-Type: text/javascript; charset=utf-8\r\n");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&r), "Content-Encoding: gzip\r\n");
	gi_buf_reset(&r);
	get(port, "/dash/app.css", NULL, &r);
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&r), "Content-Type: text/css; charset=utf-8\r\n");
	TH_ASSERT(!strstr(gi_buf_str(&r), "Content-Encoding"));
	gi_buf_reset(&r);
	get(port, "/dash/../../etc/passwd", NULL, &r);
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&r), "HTTP/1.1 404");
	gi_buf_reset(&r);
	get(port, "/dash/nope.js", NULL, &r);
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&r), "HTTP/1.1 404");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&r), "application/json");
	/* The pass-through reaches the monitor's API and nothing else. */
	gi_buf_reset(&r);
	get(port, "/monitor/health", NULL, &r);
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&r), "HTTP/1.1 200");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&r), "\"role\":\"monitor\"");
	gi_buf_reset(&r);
	get(port, "/monitor/api/index/modules", NULL, &r);
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&r), "HTTP/1.1 404");
	gi_buf_reset(&r);
	get(port, "/monitor/api/monitor/stream?node=not%20a%20node", NULL, &r);
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&r), "HTTP/1.1 400");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&r), "node parameter required");
	gi_buf_destroy(&r);
}

static void stop_serve(void *arg)
{
	pid_t *pid = arg;
	if (*pid > 0)
		ts_stop(*pid, 20000);
}

static void token_mode_serves_the_page_and_guards_the_data(void)
{
	static pid_t pid;
	int wport = ts_free_port(), mport = ts_free_port();
	char data[4096], wl[64], ml[64], bin[4096], log[4096], health[128];
	snprintf(data, sizeof(data), "%s/data", th_tmpdir());
	snprintf(wl, sizeof(wl), "127.0.0.1:%d", wport);
	snprintf(ml, sizeof(ml), "127.0.0.1:%d", mport);
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	snprintf(log, sizeof(log), "%s/serve.log", th_tmpdir());
	const char *serve[] = {bin, "serve",   "--worker-listen", wl,       "--monitor-listen",
	                       ml,  "--token", "s3cret-token",    "--data", data,
	                       NULL};
	pid = ts_spawn(serve, log);
	TH_ASSERT(pid > 0);
	th_defer(stop_serve, &pid);
	snprintf(health, sizeof(health), "http://127.0.0.1:%d/", wport);
	TH_ASSERT_MSG(ts_http_wait(health, 60000), "serve --token did not come up; log %s", log);
	struct gi_buf r;
	gi_buf_init(&r, 0);
	get(wport, "/", NULL, &r);
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&r), "HTTP/1.1 200");
	const char *guarded[] = {"/api/projects", "/health", "/monitor/health",
	                         "/monitor/api/monitor/stream?node=a@b", NULL};
	for (int i = 0; guarded[i]; i++) {
		gi_buf_reset(&r);
		get(wport, guarded[i], NULL, &r);
		TH_ASSERT_MSG(strstr(gi_buf_str(&r), "HTTP/1.1 401"), "%s: %.300s", guarded[i],
		              gi_buf_str(&r));
		gi_buf_reset(&r);
		get(wport, guarded[i], "Authorization: Bearer wrong\r\n", &r);
		TH_ASSERT_MSG(strstr(gi_buf_str(&r), "HTTP/1.1 401"), "%s: %.300s", guarded[i],
		              gi_buf_str(&r));
	}
	/* With the token, the pass-through carries it on to the monitor. */
	gi_buf_reset(&r);
	get(wport, "/monitor/health", "Authorization: Bearer s3cret-token\r\n", &r);
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&r), "HTTP/1.1 200");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&r), "\"role\":\"monitor\"");
	/* The monitor's own stream route wants it too. */
	gi_buf_reset(&r);
	get(mport, "/api/monitor/stream?node=a@b", NULL, &r);
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&r), "HTTP/1.1 401");
	gi_buf_destroy(&r);
	/* The token is in no log line. */
	char *text = NULL;
	const char *cat[] = {"cat", log, NULL};
	TH_ASSERT_INT_EQ(ts_run(cat, NULL, 10000, &text, NULL), 0);
	TH_ASSERT_MSG(!text || !strstr(text, "s3cret-token"), "the token is in the log");
	free(text);
}

/* The "seq" of every whole snapshot event in `text`, in order, into seqs (at
 * most max); `last_id` is the id of the last whole event of any type. */
static int snapshot_seqs(const char *text, long long *seqs, int max, long long *last_id)
{
	int n = 0;
	for (const char *p = strstr(text, "id: "); p && n < max; p = strstr(p + 1, "\nid: ")) {
		const char *id = p[0] == '\n' ? p + 5 : p + 4;
		const char *ev = strstr(id, "\nevent: ");
		const char *end = ev ? strstr(ev, "\n\n") : NULL;
		if (!end)
			break; /* the last event, cut by the disconnect: not seen */
		*last_id = strtoll(id, NULL, 10);
		if (strncmp(ev, "\nevent: snapshot\n", 17) != 0)
			continue;
		const char *seq = strstr(ev, "\"seq\":");
		if (seq && seq < end)
			seqs[n++] = strtoll(seq + 6, NULL, 10);
	}
	return n;
}

/* Reads three snapshots from `port`+`path`, disconnects for a while, then
 * reconnects with Last-Event-ID: the snapshots run on with no hole. */
static void resume_loses_nothing(int port, const char *path)
{
	char req[1024];
	snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nAccept: text/event-stream\r\n\r\n", path);
	struct gi_buf r;
	gi_buf_init(&r, 0);
	http10(port, req, "snapshot", 3, 60000, &r);
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&r), "Content-Type: text/event-stream");
	long long seqs[64], last_id = 0;
	int n = snapshot_seqs(gi_buf_str(&r), seqs, 64, &last_id);
	TH_ASSERT_MSG(n >= 3, "%d snapshots before the disconnect: %.2000s", n, gi_buf_str(&r));
	long long before = seqs[n - 1];
	gi_clock_sleep_ms(1500); /* at least two more snapshots (250 ms) while away */
	snprintf(req, sizeof(req),
	         "GET %s HTTP/1.0\r\nAccept: text/event-stream\r\nLast-Event-ID: %lld\r\n\r\n",
	         path, last_id);
	gi_buf_reset(&r);
	http10(port, req, "snapshot", 4, 60000, &r);
	long long id2 = 0;
	n = snapshot_seqs(gi_buf_str(&r), seqs, 64, &id2);
	TH_ASSERT_MSG(n >= 4, "%d snapshots after the reconnect to %d%s with id %lld: %.3000s", n,
	              port, path, last_id, gi_buf_str(&r));
	TH_ASSERT_MSG(!strstr(gi_buf_str(&r), "event: gap"), "a gap: %.500s", gi_buf_str(&r));
	for (int i = 0; i < n; i++)
		TH_ASSERT_MSG(seqs[i] == before + 1 + i, "after seq %lld came %lld (at %d)", before,
		              seqs[i], i);
	gi_buf_destroy(&r);
}

static void stream_resumes_with_last_event_id(void)
{
	char wurl[256];
	ts_serve_start(wurl, sizeof(wurl));
	struct ts_beam node;
	ts_beam_start(&node, TS_BEAM_ERL_LONG, NULL, NULL);
	const char *start[] = {"start",      node.name, "--cookie", node.cookie,
	                       "--interval", "250",     NULL};
	TH_ASSERT_INT_EQ(ts_product_run(true, start, NULL), 0);
	char path[512];
	snprintf(path, sizeof(path), "/api/monitor/stream?node=%s", node.name);
	resume_loses_nothing(port_of(getenv("GIULIA_MONITOR_URL")), path);
	snprintf(path, sizeof(path), "/monitor/api/monitor/stream?node=%s", node.name);
	resume_loses_nothing(port_of(wurl), path);
	/* The end of the observation is an event too. */
	char req[1024];
	const char *stop[] = {"stop", node.name, NULL};
	TH_ASSERT_INT_EQ(ts_product_run(true, stop, NULL), 0);
	struct gi_buf r;
	gi_buf_init(&r, 0);
	snprintf(req, sizeof(req), "GET /api/monitor/stream?node=%s HTTP/1.0\r\n\r\n", node.name);
	http10(port_of(getenv("GIULIA_MONITOR_URL")), req, NULL, 2, 5000, &r);
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&r), "event: end\ndata: ");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&r), "\"status\":\"complete\"");
	gi_buf_destroy(&r);
}

/* Follows the stream of `node` across reconnects (each resumes with the
 * last id seen: every event lands in `out` once) until `needle` shows in
 * what was read, at most 30 s. */
static void follow_until(int port, const char *node, long long *last_id, const char *needle,
                         struct gi_buf *out)
{
	int64_t deadline = gi_clock_mono_ms() + 30000;
	size_t from = out->len;
	while (gi_clock_mono_ms() < deadline) {
		char req[1024];
		snprintf(req, sizeof(req),
		         "GET /api/monitor/stream?node=%s HTTP/1.0\r\nLast-Event-ID: %lld\r\n\r\n",
		         node, *last_id);
		struct gi_buf chunk;
		gi_buf_init(&chunk, 0);
		http10(port, req, NULL, 3, 2000, &chunk);
		const char *body = strstr(gi_buf_str(&chunk), "\r\n\r\n");
		if (body)
			gi_buf_puts(out, body + 4);
		for (const char *p = strstr(gi_buf_str(&chunk), "\nid: "); p;
		     p = strstr(p + 1, "\nid: "))
			*last_id = strtoll(p + 5, NULL, 10);
		gi_buf_destroy(&chunk);
		if (strstr(gi_buf_str(out) + from, needle))
			return;
	}
}

/* The alert events in `log` of `metric` at `severity` (any field order). */
static int alert_events(const char *log, const char *severity, const char *metric)
{
	char sev[64], met[96];
	snprintf(sev, sizeof(sev), "\"severity\":\"%s\"", severity);
	snprintf(met, sizeof(met), "\"metric\":\"%s\"", metric);
	int n = 0;
	for (const char *p = strstr(log, "event: alert\ndata: "); p;
	     p = strstr(p + 1, "event: alert\ndata: ")) {
		const char *end = strchr(p + 20, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char *line = gi_strndup(p, len);
		n += strstr(line, sev) && strstr(line, met);
		gi_free(line);
	}
	return n;
}

static void alerts_are_events_when_they_fire(void)
{
	char wurl[256];
	ts_serve_start(wurl, sizeof(wurl));
	int mport = port_of(getenv("GIULIA_MONITOR_URL"));
	/* A node with room for 1024 processes: 850 more make "processes" fire
	 * (count / limit >= 0.8), 80 more make it critical (>= 0.9). */
	const char *extra[] = {"+P", "1024", NULL};
	struct ts_beam node;
	ts_beam_start(&node, TS_BEAM_ERL_LONG, NULL, extra);
	const char *start[] = {"start",      node.name, "--cookie", node.cookie,
	                       "--interval", "250",     NULL};
	TH_ASSERT_INT_EQ(ts_product_run(true, start, NULL), 0);
	struct gi_buf log; /* every event of the session, once */
	gi_buf_init(&log, 0);
	long long last = 0;
	follow_until(mport, node.name, &last, "event: snapshot", &log);
	TH_ASSERT_MSG(!strstr(gi_buf_str(&log), "event: alert"), "an alert on a calm node");
	char *ok = ts_beam_eval(&node, "[spawn(fun() -> receive stop -> ok end end) || "
	                               "_ <- lists:seq(1, 850)], ok.");
	TH_ASSERT_MSG(ok && strstr(ok, "ok"), "spawning: %s", ok ? ok : "(no answer)");
	free(ok);
	follow_until(mport, node.name, &last, "event: alert", &log);
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&log), "event: alert\ndata: {");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&log), "\"metric\":\"processes\"");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&log), "\"severity\":\"warning\"");
	/* It keeps firing (in every snapshot's list) and is announced once. */
	long long seen = last;
	while (last < seen + 6)
		follow_until(mport, node.name, &last, "event: snapshot", &log);
	/* Other rules may fire too (850 processes grow the memory by a fifth):
	 * count the process-count alert's announcements. */
	TH_ASSERT_INT_EQ(alert_events(gi_buf_str(&log), "warning", "processes"), 1);
	ok = ts_beam_eval(&node, "[spawn(fun() -> receive stop -> ok end end) || "
	                         "_ <- lists:seq(1, 80)], ok.");
	free(ok);
	follow_until(mport, node.name, &last, "\"severity\":\"critical\",\"metric\":\"processes\"",
	             &log); /* the field order of alert_rules.c's alerts */
	TH_ASSERT_INT_EQ(alert_events(gi_buf_str(&log), "warning", "processes"), 1);
	TH_ASSERT_INT_EQ(alert_events(gi_buf_str(&log), "critical", "processes"), 1);
	gi_buf_destroy(&log);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(page_is_served_with_a_strict_policy),
	    TH_TEST(token_mode_serves_the_page_and_guards_the_data),
	    TH_TEST(stream_resumes_with_last_event_id),
	    TH_TEST(alerts_are_events_when_they_fire),
	    TH_END,
	};
	return th_main(argc, argv, "integration_dash", tests);
}
