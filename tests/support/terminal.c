/*
 * terminal.c - programs in a pseudo-terminal (see terminal.h).
 */
#include "terminal.h"

#include "base/fmt.h"

#include <errno.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void ts_pty_spawn(struct ts_pty *p, const char *const argv[], int cols, int rows)
{
	memset(p, 0, sizeof(*p));
	p->status = -1;
	p->cap = 65536;
	p->out = calloc(1, p->cap);
	TH_ASSERT(p->out != NULL);
	struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
	pid_t pid = forkpty(&p->fd, NULL, NULL, &ws);
	TH_ASSERT_MSG(pid >= 0, "forkpty: %s", strerror(errno));
	if (pid == 0) {
		unsetenv("COLUMNS");
		unsetenv("LINES");
		setenv("TERM", "xterm", 1);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	p->pid = pid;
}

/* Reads what is there within `ms`; false once the terminal is closed. */
static bool read_some(struct ts_pty *p, int ms)
{
	struct pollfd pfd = {p->fd, POLLIN, 0};
	int r = poll(&pfd, 1, ms);
	if (r <= 0)
		return r == 0;
	if (p->len + 4096 + 1 > p->cap) {
		p->cap *= 2;
		p->out = realloc(p->out, p->cap);
		TH_ASSERT(p->out != NULL);
	}
	ssize_t n = read(p->fd, p->out + p->len, 4096);
	if (n <= 0)
		return false; /* EIO: the child closed its side */
	p->len += (size_t)n;
	p->out[p->len] = '\0';
	return true;
}

bool ts_pty_wait_for(struct ts_pty *p, const char *needle, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;
	while (!strstr(p->out, needle)) {
		long long left = end - now_ms();
		if (left <= 0 || !read_some(p, (int)(left < 100 ? left : 100)))
			return strstr(p->out, needle) != NULL;
	}
	return true;
}

void ts_pty_type(struct ts_pty *p, const char *keys)
{
	size_t n = strlen(keys);
	TH_ASSERT_MSG(write(p->fd, keys, n) == (ssize_t)n, "typing into the terminal failed");
}

int ts_pty_wait(struct ts_pty *p, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;
	int status = 0;
	for (;;) {
		pid_t w = waitpid(p->pid, &status, WNOHANG);
		if (w == p->pid)
			break;
		if (now_ms() >= end) {
			kill(p->pid, SIGKILL);
			waitpid(p->pid, &status, 0);
			p->status = -1;
			while (read_some(p, 0) && p->len < (64u << 20)) {
			}
			return -1;
		}
		read_some(p, 50);
	}
	while (read_some(p, 0) && p->len < (64u << 20)) {
	}
	p->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	return p->status;
}

void ts_pty_destroy(struct ts_pty *p)
{
	if (p->pid > 0 && p->status == -1 && waitpid(p->pid, NULL, WNOHANG) == 0) {
		kill(p->pid, SIGKILL);
		waitpid(p->pid, NULL, 0);
	}
	if (p->fd > 0)
		close(p->fd);
	free(p->out);
	memset(p, 0, sizeof(*p));
}

char *ts_pty_text(const struct ts_pty *p)
{
	char *t = malloc(p->len + 1);
	TH_ASSERT(t != NULL);
	size_t n = 0;
	for (size_t i = 0; i < p->len; i++) {
		char c = p->out[i];
		if (c == '\x1b' && i + 1 < p->len && p->out[i + 1] == '[') {
			i += 2;
			while (i < p->len && !(p->out[i] >= '@' && p->out[i] <= '~'))
				i++;
			continue;
		}
		if (c == '\x1b' && i + 1 < p->len && p->out[i + 1] == ']') {
			while (i < p->len && p->out[i] != '\a')
				i++;
			continue;
		}
		if (c == '\x1b') {
			i++;
			continue;
		}
		if (c == '\r') {
			/* a carriage return alone goes back to the line's start: what
			 * follows overwrites it (progress lines) */
			if (i + 1 < p->len && p->out[i + 1] != '\n')
				while (n > 0 && t[n - 1] != '\n')
					n--;
			continue;
		}
		t[n++] = c;
	}
	t[n] = '\0';
	return t;
}

size_t ts_text_overflow(const char *text, size_t width, char *line, size_t size)
{
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");
		snprintf(line, size, "%.*s", (int)n, p);
		size_t w = gi_fmt_width(line);
		if (w > width)
			return w;
		p += n;
		if (*p)
			p++;
	}
	if (size)
		line[0] = '\0';
	return 0;
}
