/*
 * Integration tests of the MCP server (docs/MCP.md) with a real client
 * written by others: the official TypeScript SDK (tests/mcp/client.mjs,
 * installed by scripts/deps.sh under build/mcp-client) over stdio
 * (`giulia mcp`) and over Streamable HTTP (a real worker's /mcp), against
 * the fixture project (answers compared with the CLI's --json) and a real
 * BEAM node; plus hostile input sent by hand to both transports.
 * needs: npm erlang-base
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api_util.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "base/fs.h"
#include "harness.h"
#include "support.h"

/* ---- fixtures ----------------------------------------------------------- */

/* Copies the fixture project to TMP/shop and indexes it with the CLI. */
static const char *project_ready(void)
{
	static char dir[4096];
	snprintf(dir, sizeof(dir), "%s/shop", th_tmpdir());
	char src[4096];
	snprintf(src, sizeof(src), "%s/tests/fixtures/projects/shop", th_srcdir());
	const char *cp[] = {"cp", "-r", src, dir, NULL};
	TH_ASSERT_INT_EQ(ts_run(cp, NULL, 30000, NULL, NULL), 0);
	char bin[4096];
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	const char *index[] = {bin, "index", dir, NULL};
	TH_ASSERT_INT_EQ(ts_run(index, NULL, 120000, NULL, NULL), 0);
	return dir;
}

static const char *sdk_dir(void)
{
	static char dir[4096];
	snprintf(dir, sizeof(dir), "%s/build/mcp-client", th_srcdir());
	char ok[4200];
	snprintf(ok, sizeof(ok), "%s/node_modules/@modelcontextprotocol/sdk/package.json", dir);
	TH_ASSERT_MSG(access(ok, R_OK) == 0,
	              "the MCP SDK client is not installed: run scripts/deps.sh test");
	return dir;
}

/* Runs tests/mcp/client.mjs with the JSON config `cfg` (consumed) and
 * asserts that every check passed. */
static void sdk_client(json_t *cfg)
{
	char bin[4096], script[4096];
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	snprintf(script, sizeof(script), "%s/tests/mcp/client.mjs", th_srcdir());
	json_object_set_new(cfg, "sdk", json_string(sdk_dir()));
	json_object_set_new(cfg, "giulia", json_string(bin));
	char *text = json_dumps(cfg, JSON_COMPACT);
	json_decref(cfg);
	const char *argv[] = {"node", script, text, NULL};
	char *out = NULL, *err = NULL;
	int st = ts_run(argv, NULL, 240000, &out, &err);
	printf("%s", out ? out : "");
	if (st != 0 || !out || strstr(out, "FAIL"))
		th_fail(__FILE__, __LINE__, "the SDK client failed (%d):\n%s\n%.4000s", st,
		        out ? out : "", err ? err : "");
	free(out);
	free(err);
	free(text);
}

/* ---- the SDK client over both transports -------------------------------- */

static void sdk_stdio_static_tools_equal_the_cli(void)
{
	const char *project = project_ready();
	sdk_client(json_pack("{s:s, s:s, s:s}", "mode", "static", "transport", "stdio", "project",
	                     project));
}

static void worker_with_project(struct td_daemon *w, const char *const *extra, const char *project)
{
	snprintf(w->data, sizeof(w->data), "%s/worker", th_tmpdir());
	td_start(w, "worker", extra);
	char body[4200];
	snprintf(body, sizeof(body), "{\"path\":\"%s\"}", project);
	TH_ASSERT_INT_EQ(td_post(w, "/api/index/scan", body, NULL), 200);
}

static void sdk_http_static_tools_equal_the_cli(void)
{
	const char *project = project_ready();
	struct td_daemon w = {0};
	worker_with_project(&w, NULL, project);
	sdk_client(json_pack("{s:s, s:s, s:s, s:s}", "mode", "static", "transport", "http",
	                     "project", project, "url", w.url));
	sdk_client(json_pack("{s:s, s:s, s:s, s:s}", "mode", "http", "transport", "http", "project",
	                     project, "url", w.url));
}

/* `giulia serve` on free ports; extra arguments (NULL-terminated) appended. */
static pid_t serve_start(int wport, int mport, const char *const *extra)
{
	char bin[4096], wl[64], ml[64], data[4200], log[4200], health[128];
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	snprintf(wl, sizeof(wl), "127.0.0.1:%d", wport);
	snprintf(ml, sizeof(ml), "127.0.0.1:%d", mport);
	snprintf(data, sizeof(data), "%s/serve-%d", th_tmpdir(), wport);
	snprintf(log, sizeof(log), "%s/serve-%d.log", th_tmpdir(), wport);
	const char *argv[16] = {bin,      "serve", "--worker-listen", wl, "--monitor-listen", ml,
	                        "--data", data};
	int n = 8;
	for (int i = 0; extra && extra[i] && n < 15; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	pid_t pid = ts_spawn(argv, log);
	snprintf(health, sizeof(health), "http://127.0.0.1:%d/health", mport);
	TH_ASSERT_MSG(ts_http_wait(health, 30000), "giulia serve did not come up; log %s", log);
	snprintf(health, sizeof(health), "http://127.0.0.1:%d/health", wport);
	TH_ASSERT_MSG(ts_http_wait(health, 30000), "giulia serve did not come up; log %s", log);
	return pid;
}

static void sdk_runtime_tools_on_a_real_node(void)
{
	const char *project = project_ready();
	struct ts_beam node;
	ts_beam_start(&node, TS_BEAM_ERL_LONG, NULL, NULL);
	int wport = ts_free_port(), mport = ts_free_port();
	while (mport == wport)
		mport = ts_free_port();
	/* the monitor's own cookie; `giulia mcp` gets it through its environment */
	setenv("GIULIA_COOKIE", node.cookie, 1);
	const char *extra[] = {"--mcp-allow-node", node.name, NULL};
	pid_t serve = serve_start(wport, mport, extra);
	char worker[64], monitor[64];
	snprintf(worker, sizeof(worker), "http://127.0.0.1:%d", wport);
	snprintf(monitor, sizeof(monitor), "http://127.0.0.1:%d", mport);

	/* stdio, without the opt-in: no live tools, and a refusal that says why
	 * (GIULIA_COOKIE is set: the opt-in alone decides) */
	sdk_client(json_pack("{s:s, s:s, s:s, s:s, s:b, s:[s, s, s, s]}", "mode", "runtime",
	                     "transport", "stdio", "project", project, "node", node.name, "allowed",
	                     0, "args", "--worker", worker, "--monitor", monitor));
	/* stdio with the opt-in: pulse, trace (capped), observe start/stop, profile,
	 * list_changed once the profile is stored */
	sdk_client(json_pack("{s:s, s:s, s:s, s:s, s:b, s:b, s:{s:s}, s:[s, s, s, s, s, s, s]}",
	                     "mode", "runtime", "transport", "stdio", "project", project, "node",
	                     node.name, "allowed", 1, "observe", 1, "env", "GIULIA_COOKIE",
	                     node.cookie, "args", "--allow-runtime", "--allow-node", node.name,
	                     "--worker", worker, "--monitor", monitor));
	/* HTTP: the worker of `serve` was started with --mcp-allow-node */
	sdk_client(json_pack("{s:s, s:s, s:s, s:s, s:b, s:b, s:s}", "mode", "runtime", "transport",
	                     "http", "project", project, "node", node.name, "allowed", 1, "observe",
	                     1, "url", worker));
	ts_stop(serve, 30000);

	/* nothing left on the node: no observer process, no trace patterns */
	char *left = ts_beam_eval(&node, "erlang:trace_info({lists,seq,2}, call_count).");
	TH_ASSERT_STR_CONTAINS(left, "false");
	free(left);
}

static void sdk_http_refuses_live_tools_without_the_opt_in(void)
{
	const char *project = project_ready();
	struct td_daemon w = {0};
	worker_with_project(&w, NULL, project);
	sdk_client(json_pack("{s:s, s:s, s:s, s:s, s:s, s:b}", "mode", "runtime", "transport",
	                     "http", "project", project, "url", w.url, "node", "any@127.0.0.1",
	                     "allowed", 0));
}

/* ---- hostile input on stdio, by hand ------------------------------------ */

struct mcp_proc {
	pid_t pid;
	int in, out;
	struct gi_buf pending;
};

static bool fd_write_all(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, data, len);
		if (n <= 0)
			return false;
		data += n;
		len -= (size_t)n;
	}
	return true;
}

static void mcp_proc_start(struct mcp_proc *p, const char *project)
{
	char bin[4096], log[4200];
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	snprintf(log, sizeof(log), "%s/mcp-stdio.log", th_tmpdir());
	int in[2], out[2];
	TH_ASSERT(pipe2(in, O_CLOEXEC) == 0 && pipe2(out, O_CLOEXEC) == 0);
	p->pid = fork();
	TH_ASSERT(p->pid >= 0);
	if (p->pid == 0) {
		int logfd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		dup2(in[0], 0);
		dup2(out[1], 1);
		if (logfd >= 0)
			dup2(logfd, 2);
		/* Under ASan, freed blocks wait in a quarantine that would look like
		 * growth to the RSS check; leaks still fail the exit status. */
		char asan[1024];
		const char *prev = getenv("ASAN_OPTIONS");
		snprintf(asan, sizeof(asan), "%s%squarantine_size_mb=0", prev ? prev : "",
		         prev && *prev ? ":" : "");
		setenv("ASAN_OPTIONS", asan, 1);
		execl(bin, bin, "mcp", "--project", project, "--worker", "http://127.0.0.1:1",
		      (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	p->in = in[1];
	p->out = out[0];
	gi_buf_init(&p->pending, 0);
	signal(SIGPIPE, SIG_IGN);
}

static void mcp_send(struct mcp_proc *p, const char *line)
{
	TH_ASSERT(fd_write_all(p->in, line, strlen(line)));
	TH_ASSERT(fd_write_all(p->in, "\n", 1));
}

/* The next line the server wrote, parsed (caller decrefs). */
static json_t *mcp_recv(struct mcp_proc *p)
{
	for (;;) {
		char *nl = p->pending.data ? memchr(p->pending.data, '\n', p->pending.len) : NULL;
		if (nl) {
			size_t len = (size_t)(nl - p->pending.data);
			json_t *j = json_loadb(p->pending.data, len, 0, NULL);
			TH_ASSERT_MSG(j, "the server wrote a line that is not JSON: %.200s",
			              p->pending.data);
			memmove(p->pending.data, nl + 1, p->pending.len - len - 1);
			p->pending.len -= len + 1;
			p->pending.data[p->pending.len] = '\0';
			return j;
		}
		struct pollfd pf = {p->out, POLLIN, 0};
		TH_ASSERT_MSG(poll(&pf, 1, 60000) == 1, "the MCP server did not answer");
		char chunk[65536];
		ssize_t n = read(p->out, chunk, sizeof(chunk));
		TH_ASSERT_MSG(n > 0, "the MCP server closed its output");
		gi_buf_append(&p->pending, chunk, (size_t)n);
	}
}

static json_t *mcp_ask(struct mcp_proc *p, const char *line)
{
	mcp_send(p, line);
	return mcp_recv(p);
}

static long long error_code(json_t *reply)
{
	return json_integer_value(json_object_get(json_object_get(reply, "error"), "code"));
}

static void expect_error(struct mcp_proc *p, const char *line, long long code)
{
	json_t *r = mcp_ask(p, line);
	if (error_code(r) != code) {
		char *t = json_dumps(r, JSON_COMPACT);
		th_fail(__FILE__, __LINE__, "%s: want error %lld, got %s", line, code, t);
	}
	json_decref(r);
}

static void initialize(struct mcp_proc *p, const char *revision, const char *want)
{
	char line[512];
	snprintf(line, sizeof(line),
	         "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\",\"params\":{"
	         "\"protocolVersion\":\"%s\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\","
	         "\"version\":\"1\"}}}",
	         revision);
	json_t *r = mcp_ask(p, line);
	TH_ASSERT_STR_EQ(
	    json_string_value(json_object_get(json_object_get(r, "result"), "protocolVersion")),
	    want);
	json_decref(r);
	mcp_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
}

static long rss_kb(pid_t pid)
{
	char path[64], *text = NULL;
	size_t len = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (gi_fs_read_file(path, 1 << 20, &text, &len) != 0)
		return -1;
	const char *v = strstr(text, "VmRSS:");
	long kb = v ? strtol(v + 6, NULL, 10) : -1;
	gi_free(text);
	return kb;
}

static int mcp_proc_end(struct mcp_proc *p)
{
	close(p->in);
	int status = -1;
	for (int i = 0; i < 600; i++) {
		if (waitpid(p->pid, &status, WNOHANG) == p->pid)
			break;
		gi_clock_sleep_ms(50);
	}
	close(p->out);
	gi_buf_destroy(&p->pending);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void stdio_hostile_input_gets_json_rpc_errors(void)
{
	const char *project = project_ready();
	struct mcp_proc p;
	mcp_proc_start(&p, project);
	expect_error(&p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", -32600);
	expect_error(&p, "not json at all", -32700);
	expect_error(&p, "{\"jsonrpc\":\"2.0\",\"id\":1,", -32700);
	expect_error(&p, "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", -32600);
	expect_error(&p, "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", -32600);
	expect_error(&p, "42", -32600);
	initialize(&p, "1999-01-01", "2025-11-25"); /* unknown revision: the latest */
	initialize(&p, "2025-06-18", "2025-06-18");
	expect_error(&p, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", -32600);
	expect_error(&p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"no/such\"}", -32601);
	expect_error(&p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":[]}",
	             -32602);
	expect_error(
	    &p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":5}}",
	    -32602);
	expect_error(&p,
	             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
	             "\"index_modules\",\"arguments\":\"x\"}}",
	             -32602);
	expect_error(&p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"ping\"}", -32700);

	/* a line over the 4 MB cap is refused whole; the next line is served */
	size_t huge = 5u * 1024 * 1024;
	char *big = gi_malloc(huge + 1);
	memset(big, 'x', huge);
	big[huge] = '\0';
	TH_ASSERT(fd_write_all(p.in, big, huge));
	gi_free(big);
	json_t *r = mcp_ask(&p, "");
	TH_ASSERT_INT_EQ(error_code(r), -32600);
	json_decref(r);
	r = mcp_ask(&p, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}");
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "id")), 7);
	json_decref(r);

	/* 2025-03-26 has batches; 2024-11-05 has no output schemas */
	initialize(&p, "2025-03-26", "2025-03-26");
	r = mcp_ask(&p, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\","
	                "\"method\":\"notifications/x\"},{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	                "\"nope\"}]");
	TH_ASSERT(json_is_array(r) && json_array_size(r) == 2);
	TH_ASSERT_INT_EQ(error_code(json_array_get(r, 1)), -32601);
	json_decref(r);
	initialize(&p, "2024-11-05", "2024-11-05");
	r = mcp_ask(&p, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
	json_t *tool = json_array_get(json_object_get(json_object_get(r, "result"), "tools"), 0);
	TH_ASSERT(tool && json_object_get(tool, "inputSchema") &&
	          !json_object_get(tool, "outputSchema"));
	json_decref(r);
	TH_ASSERT_INT_EQ(mcp_proc_end(&p), 0);
}

static void stdio_ten_thousand_calls_keep_memory_flat(void)
{
	const char *project = project_ready();
	struct mcp_proc p;
	mcp_proc_start(&p, project);
	initialize(&p, "2025-11-25", "2025-11-25");
	const char *call = "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{"
	                   "\"name\":\"knowledge_dependents\",\"arguments\":{\"module\":"
	                   "\"Shop.Repo\"}}}";
	const char *bad = "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{"
	                  "\"name\":\"knowledge_dependents\",\"arguments\":{\"module\":7}}}";
	long after_warmup = 0;
	for (int i = 0; i < 10000; i++) {
		json_t *r = mcp_ask(&p, i % 10 == 9 ? bad : call);
		TH_ASSERT(json_object_get(r, "result"));
		json_decref(r);
		if (i == 999)
			after_warmup = rss_kb(p.pid);
	}
	long end = rss_kb(p.pid);
	printf("RSS after 1000 calls %ld kB, after 10000 %ld kB\n", after_warmup, end);
	TH_ASSERT(after_warmup > 0 && end > 0);
	TH_ASSERT_MSG(end - after_warmup < 4096, "RSS grew by %ld kB over 9000 calls",
	              end - after_warmup);
	/* the client goes away in the middle of a message: a clean exit */
	TH_ASSERT(fd_write_all(p.in, "{\"jsonrpc\":\"2.0\",\"id\":1,\"meth", 30));
	TH_ASSERT_INT_EQ(mcp_proc_end(&p), 0);

	/* ... or while a call runs, closing both ends: the server ends (status 1:
	 * its answer had nowhere to go) instead of hanging or crashing */
	mcp_proc_start(&p, project);
	initialize(&p, "2025-11-25", "2025-11-25");
	mcp_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{"
	             "\"name\":\"index_scan\",\"arguments\":{\"force\":true}}}");
	close(p.out);
	p.out = open("/dev/null", O_RDONLY);
	int st = mcp_proc_end(&p);
	TH_ASSERT_MSG(st == 0 || st == 1, "giulia mcp ended with %d", st);
}

/* ---- hostile input over HTTP -------------------------------------------- */

static int mcp_post(const struct td_daemon *w, const char *body, const char *headers)
{
	struct gi_buf req;
	gi_buf_init(&req, 0);
	gi_buf_printf(
	    &req,
	    "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n%sContent-Length: %zu\r\n\r\n%s",
	    headers, strlen(body), body);
	int st = td_raw(w->port, req.data, req.len);
	gi_buf_destroy(&req);
	return st;
}

static void http_hostile_input_and_disconnects(void)
{
	const char *project = project_ready();
	struct td_daemon w = {0};
	worker_with_project(&w, NULL, project);
	/* over the body cap: 413 before the rest is read */
	size_t huge = 2u * 1024 * 1024;
	char *big = gi_malloc(huge + 1);
	memset(big, ' ', huge);
	big[huge] = '\0';
	TH_ASSERT_INT_EQ(mcp_post(&w, big, ""), 413);
	gi_free(big);
	TH_ASSERT_INT_EQ(mcp_post(&w, "{}", "Origin: http://127.0.0.1.evil.com\r\n"), 403);
	TH_ASSERT_INT_EQ(mcp_post(&w, "{}", "Origin: null\r\n"), 403);
	TH_ASSERT_INT_EQ(mcp_post(&w, "{}", "MCP-Protocol-Version: 2026-99-99\r\n"), 400);
	TH_ASSERT_INT_EQ(mcp_post(&w, "{}", "Accept: text/html\r\n"), 400); /* no session */

	/* clients that go away mid-request, many times over */
	const char *init = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
	                   "\"protocolVersion\":\"2025-03-26\",\"capabilities\":{},"
	                   "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
	for (int i = 0; i < 50; i++) {
		int fd = td_connect(w.port);
		TH_ASSERT(fd >= 0);
		char req[1024];
		int n = snprintf(req, sizeof(req),
		                 "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: "
		                 "application/json\r\nContent-Length: %zu\r\n\r\n%.*s",
		                 strlen(init), (int)(strlen(init) / 2), init);
		td_send_all(fd, req, (size_t)n);
		close(fd);
	}
	TH_ASSERT_INT_EQ(mcp_post(&w, init, ""), 200);

	/* a client that goes away while its tool call runs (a forced re-index) */
	char sid[64] = "";
	int fd = td_connect(w.port);
	char req[2048];
	int n = snprintf(req, sizeof(req),
	                 "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: "
	                 "application/json\r\nContent-Length: %zu\r\n\r\n%s",
	                 strlen(init), init);
	TH_ASSERT(td_send_all(fd, req, (size_t)n));
	char resp[8192] = "";
	size_t got = 0;
	while (got < sizeof(resp) - 1 && !strstr(resp, "\"result\"")) {
		ssize_t k = recv(fd, resp + got, sizeof(resp) - 1 - got, 0);
		if (k <= 0)
			break;
		got += (size_t)k;
		resp[got] = '\0';
	}
	close(fd);
	const char *h = strcasestr(resp, "Mcp-Session-Id: ");
	TH_ASSERT_MSG(h, "no session id in %s", resp);
	snprintf(sid, sizeof(sid), "%.32s", h + 16);
	char call[512], headers[128];
	snprintf(call, sizeof(call),
	         "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":"
	         "\"index_scan\",\"arguments\":{\"project\":\"%s\",\"force\":true}}}",
	         project);
	snprintf(headers, sizeof(headers), "Mcp-Session-Id: %s\r\n", sid);
	for (int i = 0; i < 3; i++) {
		fd = td_connect(w.port);
		n = snprintf(req, sizeof(req),
		             "POST /mcp HTTP/1.1\r\nHost: localhost\r\n%sContent-Type: "
		             "application/json\r\nContent-Length: %zu\r\n\r\n%s",
		             headers, strlen(call), call);
		TH_ASSERT(td_send_all(fd, req, (size_t)n));
		close(fd);
	}
	TH_ASSERT_INT_EQ(mcp_post(&w, call, headers), 200);
	TH_ASSERT_INT_EQ(td_get(&w, "/health", NULL), 200);
}

static void tool_list_doc_is_current(void)
{
	char bin[4096], doc[4096];
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	snprintf(doc, sizeof(doc), "%s/docs/MCP_TOOLS.md", th_srcdir());
	const char *argv[] = {bin, "mcp", "--list-tools", "--format", "markdown", NULL};
	char *out = NULL;
	TH_ASSERT_INT_EQ(ts_run(argv, NULL, 30000, &out, NULL), 0);
	char *want = NULL;
	size_t len = 0;
	TH_ASSERT_MSG(gi_fs_read_file(doc, 1 << 20, &want, &len) == 0, "cannot read %s", doc);
	TH_ASSERT_MSG(strcmp(out, want) == 0,
	              "docs/MCP_TOOLS.md is stale: regenerate it with `bin/giulia mcp --list-tools "
	              "--format markdown > docs/MCP_TOOLS.md`");
	free(out);
	gi_free(want);
	const char *json[] = {bin, "mcp", "--list-tools", NULL};
	TH_ASSERT_INT_EQ(ts_run(json, NULL, 30000, &out, NULL), 0);
	json_t *tools = json_loads(out, 0, NULL);
	TH_ASSERT(json_is_array(tools) && json_array_size(tools) >= 40);
	json_decref(tools);
	free(out);
}

static const struct th_test tests[] = {
    TH_TEST(sdk_stdio_static_tools_equal_the_cli),
    TH_TEST(sdk_http_static_tools_equal_the_cli),
    TH_TEST(sdk_http_refuses_live_tools_without_the_opt_in),
    TH_TEST(sdk_runtime_tools_on_a_real_node),
    TH_TEST(stdio_hostile_input_gets_json_rpc_errors),
    TH_TEST(stdio_ten_thousand_calls_keep_memory_flat),
    TH_TEST(http_hostile_input_and_disconnects),
    TH_TEST(tool_list_doc_is_current),
    TH_END,
};

int main(int argc, char **argv)
{
	return th_main(argc, argv, "integration_mcp", tests);
}
