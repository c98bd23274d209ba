/*
 * harness.c - the test runner behind harness.h: fork per test, process-group
 * cleanup, temporary directories, totals.
 */
#include "base/runtime.h"
#include "harness.h"

#include <errno.h>
#include <glob.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fs.h"

#define TH_EXIT_SKIP 77
#define TH_MAX_DEFER 64

static char tmpdir[4096];
static struct {
	void (*fn)(void *);
	void *arg;
} defers[TH_MAX_DEFER];
static int defer_count;

const char *th_tmpdir(void)
{
	return tmpdir;
}

const char *th_bindir(void)
{
	const char *dir = getenv("GIULIA_BIN");
	return dir ? dir : "bin";
}

const char *th_srcdir(void)
{
	const char *dir = getenv("GIULIA_SRC");
	return dir ? dir : ".";
}

void th_defer(void (*fn)(void *), void *arg)
{
	if (defer_count == TH_MAX_DEFER) {
		fprintf(stderr, "harness: too many deferred cleanups\n");
		abort();
	}
	defers[defer_count].fn = fn;
	defers[defer_count].arg = arg;
	defer_count++;
}

static void run_defers(void)
{
	while (defer_count > 0) {
		defer_count--;
		defers[defer_count].fn(defers[defer_count].arg);
	}
}

void th_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stdout, "    %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
	run_defers();
	exit(1);
}

void th_skip(const char *fmt, ...)
{
	va_list ap;
	fprintf(stdout, "    skipped: ");
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
	run_defers();
	exit(TH_EXIT_SKIP);
}

void th_fail_missing(const char *file, int line, const char *package, const char *fmt, ...)
{
	va_list ap;
	fprintf(stdout, "    %s:%d: missing dependency: ", file, line);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fprintf(stdout,
	        "; it comes with the Debian package %s, which %s declares in its needs: line: "
	        "install it with scripts/deps.sh test\n",
	        package, file);
	fflush(stdout);
	run_defers();
	exit(1);
}

bool th_have_program(const char *program)
{
	if (strchr(program, '/'))
		return access(program, X_OK) == 0;
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (;;) {
		const char *end = strchr(path, ':');
		size_t len = end ? (size_t)(end - path) : strlen(path);
		char candidate[4096];
		/* An empty entry of $PATH is the current directory. */
		int n = snprintf(candidate, sizeof(candidate), "%.*s/%s", len ? (int)len : 1,
		                 len ? path : ".", program);
		if (n > 0 && (size_t)n < sizeof(candidate) && access(candidate, X_OK) == 0)
			return true;
		if (!end)
			return false;
		path = end + 1;
	}
}

bool th_have_otp_app(const char *app)
{
	char pattern[512];
	glob_t g;
	snprintf(pattern, sizeof(pattern), "/usr/lib/erlang/lib/%s-*/ebin", app);
	bool found = glob(pattern, GLOB_ONLYDIR, NULL, &g) == 0 && g.gl_pathc > 0;
	globfree(&g);
	return found;
}

static double now_ms(void)
{
	return (double)gi_clock_mono_us() / 1000.0;
}

static int selected(const char *name, int argc, char **argv)
{
	if (argc <= 1)
		return 1;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return 1;
	return 0;
}

/* Runs one test in a child; returns 0 pass, 1 fail, 2 skip. */
static int run_one(const char *suite, const struct th_test *t, int timeout_s)
{
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	snprintf(tmpdir, sizeof(tmpdir), "%s/giulia-test-XXXXXX", base);
	if (!mkdtemp(tmpdir)) {
		printf("FAIL %s.%s: cannot create a temporary directory: %s\n", suite, t->name,
		       strerror(errno));
		return 1;
	}
	fflush(stdout);
	fflush(stderr);
	double start = now_ms();
	pid_t pid = fork();
	if (pid < 0) {
		printf("FAIL %s.%s: fork: %s\n", suite, t->name, strerror(errno));
		return 1;
	}
	if (pid == 0) {
		setpgid(0, 0);
		signal(SIGPIPE, SIG_IGN);
		t->fn();
		run_defers();
		fflush(stdout);
		exit(0);
	}
	setpgid(pid, pid);
	int status = 0, timed_out = 0;
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			break;
		if (now_ms() - start > timeout_s * 1000.0) {
			timed_out = 1;
			kill(-pid, SIGKILL);
			waitpid(pid, &status, 0);
			break;
		}
		struct timespec ts = {0, 5 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	/* Whatever the test started and left behind goes with its group. */
	kill(-pid, SIGKILL);
	gi_fs_remove_tree(tmpdir);
	double ms = now_ms() - start;
	if (timed_out) {
		printf("FAIL %s.%s: timed out after %d s\n", suite, t->name, timeout_s);
		return 1;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		printf("ok   %s.%s (%.0f ms)\n", suite, t->name, ms);
		return 0;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == TH_EXIT_SKIP) {
		printf("skip %s.%s\n", suite, t->name);
		return 2;
	}
	if (WIFSIGNALED(status))
		printf("FAIL %s.%s: killed by signal %d\n", suite, t->name, WTERMSIG(status));
	else
		printf("FAIL %s.%s: exit status %d\n", suite, t->name, WEXITSTATUS(status));
	return 1;
}

int th_main(int argc, char **argv, const char *suite, const struct th_test *tests)
{
	gi_runtime_init();
	if (argc > 1 && strcmp(argv[1], "-l") == 0) {
		for (const struct th_test *t = tests; t->name; t++)
			printf("%s\n", t->name);
		return 0;
	}
	int timeout_s = 300;
	if (getenv("TH_TIMEOUT"))
		timeout_s = (int)strtol(getenv("TH_TIMEOUT"), NULL, 10);
	if (timeout_s <= 0)
		timeout_s = 300;
	setvbuf(stdout, NULL, _IOLBF, 0);
	int counts[3] = {0, 0, 0};
	for (const struct th_test *t = tests; t->name; t++) {
		if (!selected(t->name, argc, argv))
			continue;
		counts[run_one(suite, t, timeout_s)]++;
	}
	printf("%s: %d passed, %d failed, %d skipped\n", suite, counts[0], counts[1], counts[2]);
	printf("#TOTALS %d %d %d\n", counts[0], counts[1], counts[2]);
	return counts[1] ? 1 : 0;
}
