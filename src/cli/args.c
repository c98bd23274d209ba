/*
 * args.c - what several commands take alike (see cli.h): node names as
 * `erl -sname` completes them, cookies as BEAM people keep them, the daemon
 * URLs, the width of the terminal, and JSON as the commands print it.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fs.h"
#include "base/alloc.h"
#include "base/str.h"
#include "cli/cli.h"

int cli_node_name(const char *name, char *out, size_t size)
{
	if (!name || !*name)
		return GI_EINVAL;
	if (strchr(name, '@'))
		return gi_strlcpy(out, name, size) == 0 ? 0 : GI_ETOOBIG;
	char host[256];
	if (gethostname(host, sizeof(host)) != 0)
		return GI_EINVAL;
	host[sizeof(host) - 1] = '\0';
	host[strcspn(host, ".")] = '\0';
	int n = snprintf(out, size, "%s@%s", name, host);
	return n < 0 || (size_t)n >= size ? GI_ETOOBIG : 0;
}

#define COOKIE_FILE_MAX 4096

int cli_cookie(const char *prog, const char *cookie, const char *cookie_file, char *buf,
               size_t size, const char **out)
{
	*out = NULL;
	if (cookie) {
		*out = cookie;
		return 0;
	}
	if (cookie_file) {
		char *text = NULL;
		size_t len = 0;
		int rc = gi_fs_read_file(cookie_file, COOKIE_FILE_MAX, &text, &len);
		if (rc) {
			fprintf(stderr, "%s: cannot read the cookie file %s: %s\n", prog,
			        cookie_file, gi_strerror(rc));
			return CLI_EXIT_USAGE;
		}
		size_t n = strcspn(text, "\r\n");
		while (n > 0 && (text[n - 1] == ' ' || text[n - 1] == '\t'))
			n--;
		if (n == 0 || n >= size) {
			fprintf(stderr, "%s: the cookie file %s %s\n", prog, cookie_file,
			        n == 0 ? "is empty" : "holds a cookie too long");
			gi_free(text);
			return n == 0 ? CLI_EXIT_NOCOOKIE : CLI_EXIT_USAGE;
		}
		memcpy(buf, text, n);
		buf[n] = '\0';
		gi_free(text);
		*out = buf;
		return 0;
	}
	const char *giulia = getenv("GIULIA_COOKIE");
	const char *release = getenv("RELEASE_COOKIE");
	if ((!giulia || !*giulia) && release && *release)
		*out = release;
	return 0;
}

static const char *worker_flag, *monitor_flag;

void cli_worker_url_set(const char *url)
{
	worker_flag = url;
}

void cli_monitor_url_set(const char *url)
{
	monitor_flag = url;
}

static const char *url_or(const char *flag, const char *env, const char *dflt)
{
	if (flag && *flag)
		return flag;
	const char *v = getenv(env);
	return v && *v ? v : dflt;
}

const char *cli_worker_url(void)
{
	return url_or(worker_flag, "GIULIA_WORKER_URL", "http://127.0.0.1:4000");
}

const char *cli_monitor_url(void)
{
	return url_or(monitor_flag, "GIULIA_MONITOR_URL", "http://127.0.0.1:4001");
}

static bool has_file(const char *dir, const char *rel)
{
	char path[4096];
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, rel) >= sizeof(path))
		return false;
	return access(path, F_OK) == 0;
}

int cli_project_find(char **out)
{
	*out = NULL;
	char *cwd = NULL;
	int rc = gi_fs_realdir(".", &cwd);
	if (rc)
		return rc;
	char dir[4096];
	if (gi_strlcpy(dir, cwd, sizeof(dir)) != 0) {
		*out = cwd;
		return 0;
	}
	/* The boundary: the repository root (the nearest directory with .git),
	 * else the outermost directory with a mix.exs (an umbrella's root),
	 * else the current directory. An index above it belongs to another
	 * project (a shared temporary directory's, a home directory's) and is
	 * never adopted. */
	char boundary[4096] = "", probe[4096];
	gi_strlcpy(probe, cwd, sizeof(probe));
	for (;;) {
		if (has_file(probe, ".git")) {
			gi_strlcpy(boundary, probe, sizeof(boundary));
			break;
		}
		if (has_file(probe, "mix.exs"))
			gi_strlcpy(boundary, probe, sizeof(boundary));
		char *slash = strrchr(probe, '/');
		if (!slash || slash == probe)
			break;
		*slash = '\0';
	}
	if (!boundary[0])
		gi_strlcpy(boundary, cwd, sizeof(boundary));
	char mix[4096] = "";
	for (;;) {
		if (has_file(dir, ".giulia/index.db")) {
			*out = gi_strdup(dir);
			break;
		}
		if (!mix[0] && has_file(dir, "mix.exs"))
			gi_strlcpy(mix, dir, sizeof(mix));
		char *slash = strrchr(dir, '/');
		if (strcmp(dir, boundary) == 0 || !slash || slash == dir)
			break;
		*slash = '\0';
	}
	if (!*out)
		*out = gi_strdup(mix[0] ? mix : cwd);
	gi_free(cwd);
	return 0;
}

int cli_columns(void)
{
	const char *env = getenv("COLUMNS");
	int64_t v = 0;
	if (env && gi_parse_int64(env, 20, 10000, &v) == 0)
		return (int)v;
	struct winsize ws;
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 0;
}

void cli_json_print(json_t *v)
{
	char *s = json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
	if (s)
		puts(s);
	free(s);
}
