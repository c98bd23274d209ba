/*
 * support.c - test helpers for real processes, nodes and HTTP (see support.h).
 * needs: erlang-base elixir
 */
#include "support.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "harness.h"

static void append_fd(struct gi_buf *b, int fd, bool *open_flag)
{
	char chunk[8192];
	ssize_t n = read(fd, chunk, sizeof(chunk));
	if (n > 0)
		gi_buf_append(b, chunk, (size_t)n);
	else if (n == 0 || (errno != EINTR && errno != EAGAIN))
		*open_flag = false;
}

int ts_run(const char *const argv[], const char *input, int timeout_ms, char **out, char **err)
{
	int in_pipe[2], out_pipe[2], err_pipe[2];
	if (pipe2(in_pipe, O_CLOEXEC) || pipe2(out_pipe, O_CLOEXEC) || pipe2(err_pipe, O_CLOEXEC))
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(in_pipe[0], 0);
		dup2(out_pipe[1], 1);
		dup2(err_pipe[1], 2);
		close(in_pipe[1]);
		close(out_pipe[0]);
		close(err_pipe[0]);
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(in_pipe[0]);
	close(out_pipe[1]);
	close(err_pipe[1]);
	signal(SIGPIPE, SIG_IGN);
	if (input) {
		size_t len = strlen(input), off = 0;
		while (off < len) {
			ssize_t n = write(in_pipe[1], input + off, len - off);
			if (n <= 0)
				break;
			off += (size_t)n;
		}
	}
	close(in_pipe[1]);
	struct gi_buf ob, eb;
	gi_buf_init(&ob, 0);
	gi_buf_init(&eb, 0);
	bool out_open = true, err_open = true;
	int64_t deadline = gi_clock_mono_ms() + timeout_ms;
	int status = -1, timed_out = 0;
	while (out_open || err_open) {
		struct pollfd p[2] = {{out_open ? out_pipe[0] : -1, POLLIN, 0},
		                      {err_open ? err_pipe[0] : -1, POLLIN, 0}};
		int left = (int)(deadline - gi_clock_mono_ms());
		if (left <= 0) {
			timed_out = 1;
			break;
		}
		if (poll(p, 2, left) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			append_fd(&ob, out_pipe[0], &out_open);
		if (p[1].revents)
			append_fd(&eb, err_pipe[0], &err_open);
	}
	if (timed_out)
		kill(pid, SIGKILL);
	int wstatus = 0;
	waitpid(pid, &wstatus, 0);
	if (!timed_out && WIFEXITED(wstatus))
		status = WEXITSTATUS(wstatus);
	close(out_pipe[0]);
	close(err_pipe[0]);
	if (out)
		*out = strdup(gi_buf_str(&ob));
	if (err)
		*err = strdup(gi_buf_str(&eb));
	gi_buf_destroy(&ob);
	gi_buf_destroy(&eb);
	return status;
}

pid_t ts_spawn(const char *const argv[], const char *log_path)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	int fd = open(log_path ? log_path : "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0600);
	int null_in = open("/dev/null", O_RDONLY);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	if (null_in >= 0)
		dup2(null_in, 0);
	execvp(argv[0], (char *const *)argv);
	fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

int ts_stop(pid_t pid, int grace_ms)
{
	if (pid <= 0)
		return -1;
	int status = 0;
	kill(pid, SIGTERM);
	int64_t deadline = gi_clock_mono_ms() + grace_ms;
	while (gi_clock_mono_ms() < deadline) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		if (w < 0)
			return -1;
		gi_clock_sleep_ms(10);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

int ts_free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) != 0)
		th_fail(__FILE__, __LINE__, "no free port: %s", strerror(errno));
	close(fd);
	return ntohs(a.sin_port);
}

void ts_random_string(char *out, size_t len)
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char raw[256];
	int fd = open("/dev/urandom", O_RDONLY);
	if (len > sizeof(raw) || fd < 0 || read(fd, raw, len) != (ssize_t)len)
		th_fail(__FILE__, __LINE__, "cannot read /dev/urandom");
	close(fd);
	for (size_t i = 0; i < len; i++)
		out[i] = alphabet[raw[i] % (sizeof(alphabet) - 1)];
	out[len] = '\0';
}

static void short_host(char *out, size_t size)
{
	if (gethostname(out, size) != 0)
		snprintf(out, size, "localhost");
	out[size - 1] = '\0';
	char *dot = strchr(out, '.');
	if (dot)
		*dot = '\0';
}

/* The nodes this test started, by pid, for the deferred stop: the caller's
 * struct ts_beam is often a local of the test function, gone by the time
 * th_defer's hooks run, so the hook must not read it. */
#define TS_MAX_NODES 64
static pid_t started_nodes[TS_MAX_NODES];

static void stop_node_deferred(void *arg)
{
	pid_t *slot = arg;
	int status;
	/* Only a running child of ours: never signal a pid that was reaped. */
	if (*slot > 0 && waitpid(*slot, &status, WNOHANG) == 0)
		ts_stop(*slot, 3000);
	*slot = 0;
}

static void forget_node(pid_t pid)
{
	for (int i = 0; i < TS_MAX_NODES; i++)
		if (started_nodes[i] == pid)
			started_nodes[i] = 0;
}

void ts_beam_start(struct ts_beam *n, enum ts_beam_kind kind, const char *eval,
                   const char *const *extra_args)
{
	char alive[32], host[200];
	ts_random_string(alive, 8);
	alive[0] = 't';
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	ts_random_string(n->cookie, 20);
	snprintf(n->log, sizeof(n->log), "%s/node-%s.log", th_tmpdir(), alive);
	const char *argv[64];
	int argc = 0;
	char full[300];
	switch (kind) {
	case TS_BEAM_ELIXIR_LONG:
		snprintf(n->name, sizeof(n->name), "%s@127.0.0.1", alive);
		argv[argc++] = "elixir";
		argv[argc++] = "--name";
		argv[argc++] = n->name;
		argv[argc++] = "--cookie";
		argv[argc++] = n->cookie;
		argv[argc++] = "--no-halt";
		if (eval) {
			argv[argc++] = "-e";
			argv[argc++] = eval;
		}
		break;
	case TS_BEAM_ERL_LONG:
	case TS_BEAM_ERL_SHORT:
		if (kind == TS_BEAM_ERL_LONG) {
			snprintf(n->name, sizeof(n->name), "%s@127.0.0.1", alive);
			argv[argc++] = "erl";
			argv[argc++] = "-name";
			argv[argc++] = n->name;
		} else {
			short_host(host, sizeof(host));
			snprintf(n->name, sizeof(n->name), "%s@%s", alive, host);
			snprintf(full, sizeof(full), "%s", alive);
			argv[argc++] = "erl";
			argv[argc++] = "-sname";
			argv[argc++] = full;
		}
		argv[argc++] = "-setcookie";
		argv[argc++] = n->cookie;
		argv[argc++] = "-noshell";
		argv[argc++] = "-noinput";
		if (eval) {
			argv[argc++] = "-eval";
			argv[argc++] = eval;
		}
		break;
	}
	for (const char *const *a = extra_args; a && *a && argc < 62; a++)
		argv[argc++] = *a;
	argv[argc] = NULL;
	n->pid = ts_spawn(argv, n->log);
	int slot = 0;
	while (slot < TS_MAX_NODES && started_nodes[slot] != 0)
		slot++;
	TH_ASSERT_MSG(slot < TS_MAX_NODES, "more than %d nodes in one test", TS_MAX_NODES);
	started_nodes[slot] = n->pid;
	th_defer(stop_node_deferred, &started_nodes[slot]);
	int64_t deadline = gi_clock_mono_ms() + 30000;
	while (gi_clock_mono_ms() < deadline) {
		char *r = ts_beam_eval(n, "ok.");
		bool up = r && strstr(r, "ok");
		free(r);
		if (up)
			return;
		int status;
		if (waitpid(n->pid, &status, WNOHANG) == n->pid) {
			forget_node(n->pid);
			n->pid = 0;
			th_fail(__FILE__, __LINE__, "node %s exited at start; see %s", n->name,
			        n->log);
		}
		gi_clock_sleep_ms(100);
	}
	th_fail(__FILE__, __LINE__, "node %s did not come up in 30 s; see %s", n->name, n->log);
}

char *ts_beam_eval(const struct ts_beam *n, const char *erlang_exprs)
{
	static const char *erl_call = NULL;
	static char path[512];
	if (!erl_call) {
		char *out = NULL;
		const char *argv[] = {
		    "sh", "-c",
		    "ls -d /usr/lib/erlang/lib/erl_interface-*/bin/erl_call | tail -n 1", NULL};
		ts_run(argv, NULL, 5000, &out, NULL);
		snprintf(path, sizeof(path), "%s", out ? out : "erl_call");
		path[strcspn(path, "\n")] = '\0';
		free(out);
		erl_call = path;
	}
	const char *mode = n->kind == TS_BEAM_ERL_SHORT ? "-sname" : "-name";
	const char *argv[] = {erl_call, mode, n->name, "-c", n->cookie, "-e", NULL};
	char *out = NULL;
	struct gi_buf input;
	gi_buf_init(&input, 0);
	gi_buf_printf(&input, "%s\n", erlang_exprs);
	int status = ts_run(argv, input.data, 15000, &out, NULL);
	gi_buf_destroy(&input);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}

void ts_beam_wait_true(const struct ts_beam *n, const char *expr, const char *what)
{
	char last[512] = "";
	int64_t deadline = gi_clock_mono_ms() + 60000;
	while (gi_clock_mono_ms() < deadline) {
		char *out = ts_beam_eval(n, expr);
		bool ok = out && strstr(out, "true");
		snprintf(last, sizeof(last), "%s", out ? out : "(no answer)");
		free(out);
		if (ok)
			return;
		gi_clock_sleep_ms(200);
	}
	char log[2048] = "";
	FILE *f = fopen(n->log, "r");
	if (f) {
		size_t got = fread(log, 1, sizeof(log) - 1, f);
		log[got] = '\0';
		fclose(f);
	}
	th_fail(__FILE__, __LINE__, "%s did not start working: %s; its log: %s", what, last, log);
}

void ts_beam_stop(struct ts_beam *n)
{
	if (n->pid > 0) {
		ts_stop(n->pid, 3000);
		forget_node(n->pid);
		n->pid = 0;
	}
}

static size_t collect(char *data, size_t size, size_t nmemb, void *ctx)
{
	gi_buf_append(ctx, data, size * nmemb);
	return size * nmemb;
}

int ts_http(const char *method, const char *url, const char *body, const char *bearer,
            char **response)
{
	CURL *c = curl_easy_init();
	if (!c)
		return -1;
	struct gi_buf b;
	gi_buf_init(&b, 0);
	struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json");
	char auth[512];
	if (bearer) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", bearer);
		headers = curl_slist_append(headers, auth);
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 60000L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	if (body)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	long status = -1;
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(headers);
	curl_easy_cleanup(c);
	if (response)
		*response = strdup(gi_buf_str(&b));
	gi_buf_destroy(&b);
	return (int)status;
}

bool ts_http_wait(const char *url, int timeout_ms)
{
	int64_t deadline = gi_clock_mono_ms() + timeout_ms;
	while (gi_clock_mono_ms() < deadline) {
		if (ts_http("GET", url, NULL, NULL, NULL) == 200)
			return true;
		gi_clock_sleep_ms(50);
	}
	return false;
}
