/*
 * mcp_latency.c - tools/call latency of Giulia's MCP server, measured from a
 * minimal client so that the numbers are the server's (bench/bench_mcp.sh).
 *
 *   mcp_latency stdio N TOOL ARGS_JSON GIULIA mcp ARG...   spawn `giulia mcp`
 *   mcp_latency http  N TOOL ARGS_JSON URL                 POST URL/mcp, one connection
 *   mcp_latency rest  N PATH URL                           GET URL+PATH (reference)
 *
 * Prints one JSON line: calls, p50_us, p99_us, max_us and, for stdio,
 * first_answer_us (spawn to the answer of the first tools/call, initialize
 * included).
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

static void report(long long *t, int n, long long first)
{
	qsort(t, (size_t)n, sizeof(t[0]), cmp);
	printf("{\"calls\":%d,\"p50_us\":%lld,\"p99_us\":%lld,\"max_us\":%lld", n, t[n / 2],
	       t[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1], t[n - 1]);
	if (first >= 0)
		printf(",\"first_answer_us\":%lld", first);
	printf("}\n");
}

/* ---- stdio ---- */

static int to_child, from_child;
static char rbuf[1 << 22];
static size_t rlen;

static void send_line(const char *s)
{
	size_t len = strlen(s);
	while (len > 0) {
		ssize_t n = write(to_child, s, len);
		if (n <= 0) {
			perror("write");
			exit(1);
		}
		s += n;
		len -= (size_t)n;
	}
	if (write(to_child, "\n", 1) != 1)
		exit(1);
}

/* Reads lines until one holds `"id":ID`; fails on an isError result. */
static void wait_reply(int id)
{
	char want[32];
	snprintf(want, sizeof(want), "\"id\":%d,", id);
	for (;;) {
		char *nl;
		while ((nl = memchr(rbuf, '\n', rlen)) != NULL) {
			*nl = '\0';
			int match = strstr(rbuf, want) != NULL;
			if (match && strstr(rbuf, "\"isError\":true")) {
				fprintf(stderr, "tool error: %.500s\n", rbuf);
				exit(1);
			}
			size_t used = (size_t)(nl - rbuf) + 1;
			memmove(rbuf, nl + 1, rlen - used);
			rlen -= used;
			if (match)
				return;
		}
		ssize_t n = read(from_child, rbuf + rlen, sizeof(rbuf) - rlen);
		if (n <= 0) {
			fprintf(stderr, "the server closed its output\n");
			exit(1);
		}
		rlen += (size_t)n;
	}
}

static int run_stdio(int n, const char *tool, const char *args, char **argv)
{
	int in[2], out[2];
	if (pipe(in) || pipe(out))
		return 1;
	long long t0 = now_us();
	pid_t pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		int devnull = getenv("MCP_BENCH_STDERR") ? -1 : open("/dev/null", O_WRONLY);
		if (devnull >= 0)
			dup2(devnull, 2);
		close(in[1]);
		close(out[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	to_child = in[1];
	from_child = out[0];
	char call[8192];
	send_line("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
	          "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{"
	          "\"name\":\"bench\",\"version\":\"1\"}}}");
	wait_reply(0);
	send_line("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
	snprintf(call, sizeof(call),
	         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
	         "\"%s\",\"arguments\":%s}}",
	         tool, args);
	send_line(call);
	wait_reply(1);
	long long first = now_us() - t0;
	long long *t = calloc((size_t)n, sizeof(*t));
	for (int i = 0; i < n; i++) {
		snprintf(call, sizeof(call),
		         "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{"
		         "\"name\":\"%s\",\"arguments\":%s}}",
		         i + 2, tool, args);
		long long s = now_us();
		send_line(call);
		wait_reply(i + 2);
		t[i] = now_us() - s;
	}
	close(to_child);
	waitpid(pid, NULL, 0);
	report(t, n, first);
	free(t);
	return 0;
}

/* ---- HTTP ---- */

struct body {
	char data[1 << 22];
	size_t len;
};

static size_t on_data(char *p, size_t size, size_t nmemb, void *ud)
{
	struct body *b = ud;
	size_t len = size * nmemb;
	if (b->len + len < sizeof(b->data)) {
		memcpy(b->data + b->len, p, len);
		b->len += len;
		b->data[b->len] = '\0';
	}
	return len;
}

static char session[64];

static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
	(void)ud;
	size_t len = size * nmemb;
	if (len > 16 && strncasecmp(p, "mcp-session-id:", 15) == 0) {
		const char *v = p + 15;
		while (*v == ' ')
			v++;
		size_t k = strcspn(v, "\r\n");
		if (k < sizeof(session)) {
			memcpy(session, v, k);
			session[k] = '\0';
		}
	}
	return len;
}

static long post(CURL *c, const char *url, const char *json, struct body *b)
{
	struct curl_slist *h = NULL;
	char sid[128];
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Accept: application/json, text/event-stream");
	if (session[0]) {
		snprintf(sid, sizeof(sid), "Mcp-Session-Id: %s", session);
		h = curl_slist_append(h, sid);
		h = curl_slist_append(h, "MCP-Protocol-Version: 2025-11-25");
	}
	b->len = 0;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, json);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	long status = 0;
	if (curl_easy_perform(c) != CURLE_OK)
		status = -1;
	else
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(h);
	return status;
}

static int run_http(int n, const char *tool, const char *args, const char *base)
{
	static struct body b;
	char url[512], call[8192];
	snprintf(url, sizeof(url), "%s/mcp", base);
	CURL *c = curl_easy_init();
	post(c, url,
	     "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
	     "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{"
	     "\"name\":\"bench\",\"version\":\"1\"}}}",
	     &b);
	if (!session[0]) {
		fprintf(stderr, "no session from %s: %s\n", url, b.data);
		return 1;
	}
	post(c, url, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &b);
	snprintf(call, sizeof(call),
	         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
	         "\"%s\",\"arguments\":%s}}",
	         tool, args);
	long long *t = calloc((size_t)n, sizeof(*t));
	for (int i = 0; i < n; i++) {
		long long s = now_us();
		long st = post(c, url, call, &b);
		t[i] = now_us() - s;
		if (st != 200 || strstr(b.data, "\"isError\":true")) {
			fprintf(stderr, "call failed (%ld): %.500s\n", st, b.data);
			return 1;
		}
	}
	curl_easy_cleanup(c);
	report(t, n, -1);
	free(t);
	return 0;
}

static int run_rest(int n, const char *path, const char *base)
{
	static struct body b;
	char url[1024];
	snprintf(url, sizeof(url), "%s%s", base, path);
	CURL *c = curl_easy_init();
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	long long *t = calloc((size_t)n, sizeof(*t));
	for (int i = 0; i < n; i++) {
		b.len = 0;
		long long s = now_us();
		long st = 0;
		if (curl_easy_perform(c) == CURLE_OK)
			curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &st);
		t[i] = now_us() - s;
		if (st != 200) {
			fprintf(stderr, "GET %s: %ld\n", url, st);
			return 1;
		}
	}
	curl_easy_cleanup(c);
	report(t, n, -1);
	free(t);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: see the comment at the top of bench/mcp_latency.c\n");
		return 2;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	long calls = strtol(argv[2], NULL, 10);
	int n = calls > 0 && calls < 1000000 ? (int)calls : 1000;
	if (strcmp(argv[1], "stdio") == 0 && argc >= 7)
		return run_stdio(n, argv[3], argv[4], argv + 5);
	if (strcmp(argv[1], "http") == 0 && argc >= 6)
		return run_http(n, argv[3], argv[4], argv[5]);
	if (strcmp(argv[1], "rest") == 0)
		return run_rest(n, argv[3], argv[4]);
	fprintf(stderr, "unknown mode %s\n", argv[1]);
	return 2;
}
