/*
 * review.c - the review of a change (review.h, docs/REVIEW.md): git's diff
 * of the project against a base revision, read as hostile input, mapped
 * onto the graph's line ranges; each changed function or module gets the
 * preflight's walks (callers or dependents, the tests that reach it, the
 * risk factors), its live weight from a profile when one is given, and a
 * risk score that ranks them.
 *
 * Invariants: git runs with a fixed argument vector (no shell), read-only
 * (GIT_OPTIONAL_LOCKS=0: no index refresh written; no external diff, no
 * textconv, no fsmonitor hook), under a deadline and an output cap; the
 * parser trusts no count or path in the diff; the review reads a finished
 * graph and bounds its work by KG_REVIEW_ITEMS.
 */
#include "graph/review.h"
#include "graph/args.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/map.h"
#include "base/str.h"
#include "graph/search.h"

extern char **environ;

/* ---- the git call --------------------------------------------------------- */

bool kg_review_rev_valid(const char *rev)
{
	size_t n = rev ? strlen(rev) : 0;
	if (n == 0 || n > KG_REVIEW_REV_MAX || rev[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)rev[i] <= ' ' || (unsigned char)rev[i] >= 0x7f)
			return false;
	return true;
}

/* The environment of the git child: ours, with optional locks off (git
 * diff would otherwise refresh and rewrite .git/index), no prompt and C
 * messages. Returns a NULL-terminated array whose strings are borrowed or
 * static; free the array with gi_free. */
static char **git_environment(void)
{
	static char locks[] = "GIT_OPTIONAL_LOCKS=0", prompt[] = "GIT_TERMINAL_PROMPT=0",
	            lang[] = "LC_ALL=C";
	size_t n = 0;
	while (environ && environ[n])
		n++;
	char **env = gi_malloc(sizeof(char *) * (n + 4));
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!gi_str_starts_with(environ[i], "GIT_OPTIONAL_LOCKS=") &&
		    !gi_str_starts_with(environ[i], "GIT_TERMINAL_PROMPT=") &&
		    !gi_str_starts_with(environ[i], "LC_ALL=") &&
		    !gi_str_starts_with(environ[i], "GIT_EXTERNAL_DIFF="))
			env[k++] = environ[i];
	env[k++] = locks;
	env[k++] = prompt;
	env[k++] = lang;
	env[k] = NULL;
	return env;
}

/* Reads the child's stdout into `out` (capped) and stderr into `err` (its
 * first 4 kB) until both close or the deadline passes. */
static int git_read(int out_fd, int err_fd, int64_t deadline, struct gi_buf *out,
                    struct gi_buf *err)
{
	struct pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
	char chunk[65536];
	int open_fds = 2;
	while (open_fds > 0) {
		int64_t left = deadline - gi_clock_mono_ms();
		if (left <= 0)
			return GI_ETIMEOUT;
		int r = poll(fds, 2, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return GI_EIO;
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			ssize_t got = read(fds[i].fd, chunk, sizeof(chunk));
			if (got < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (got <= 0) {
				fds[i].fd = -1;
				open_fds--;
				continue;
			}
			if (i == 0 && gi_buf_append(out, chunk, (size_t)got))
				return GI_ETOOBIG;
			if (i == 1 && err->len < 4096)
				gi_buf_append(err, chunk, (size_t)got);
		}
	}
	return 0;
}

/* Runs git with `argv` (fixed, NULL-terminated) under the deadline; its
 * stdout into *text and *len (capped) and the start of its stderr into *error. */
static int git_run(char *const *argv, int timeout_ms, char **text, size_t *len, char **error)
{
	int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
	if (pipe2(out_pipe, O_CLOEXEC) || pipe2(err_pipe, O_CLOEXEC)) {
		if (out_pipe[0] >= 0) {
			close(out_pipe[0]);
			close(out_pipe[1]);
		}
		return GI_EIO;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
	char **env = git_environment();
	pid_t pid = -1;
	int spawn_rc = posix_spawnp(&pid, "git", &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	gi_free(env);
	close(out_pipe[1]);
	close(err_pipe[1]);
	struct gi_buf out, err;
	gi_buf_init(&out, KG_DIFF_BYTES_MAX);
	gi_buf_init(&err, 0);
	int rc = 0;
	if (spawn_rc != 0) {
		rc = spawn_rc == ENOENT ? GI_ENOENT : GI_EIO;
	} else {
		rc =
		    git_read(out_pipe[0], err_pipe[0], gi_clock_mono_ms() + timeout_ms, &out, &err);
		if (rc)
			kill(pid, SIGKILL);
		int status = 0;
		pid_t got;
		while ((got = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
			;
		if (got < 0 && !rc)
			rc = GI_EIO; /* no status to trust (SIGCHLD ignored by the host) */
		else if (!rc && WIFEXITED(status) && WEXITSTATUS(status) == 127)
			rc = GI_ENOENT;
		else if (!rc && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
			rc = GI_EIO;
	}
	close(out_pipe[0]);
	close(err_pipe[0]);
	if (rc == 0) {
		*len = out.len;
		*text = out.data ? gi_buf_take(&out) : gi_strdup("");
	} else if (error && err.len) {
		while (err.len && (err.data[err.len - 1] == '\n' || err.data[err.len - 1] == '\r'))
			err.data[--err.len] = '\0';
		*error = gi_buf_take(&err);
	}
	gi_buf_destroy(&out);
	gi_buf_destroy(&err);
	return rc;
}

int kg_review_git_diff(const char *root, const char *base, int timeout_ms, char **text, size_t *len,
                       char **error)
{
	*text = NULL;
	*len = 0;
	if (error)
		*error = NULL;
	if (!kg_review_rev_valid(base) || !root)
		return GI_EINVAL;
	/* Outside a work tree `git diff` falls back to comparing two paths
	 * (--no-index): ask first, so that the revision is only ever one. */
	char *check[] = {"git", "-C", (char *)root, "rev-parse", "--is-inside-work-tree", NULL};
	int64_t start = gi_clock_mono_ms();
	int rc = git_run(check, timeout_ms, text, len, error);
	bool inside = rc == 0 && *text && strncmp(*text, "true", 4) == 0;
	gi_free(*text);
	*text = NULL;
	*len = 0;
	if (rc == 0 && !inside) {
		if (error) {
			gi_free(*error);
			*error = gi_strdup("not inside a git work tree");
		}
		rc = GI_EIO;
	}
	if (rc)
		return rc;
	if (error) {
		gi_free(*error);
		*error = NULL;
	}
	int left = timeout_ms - (int)(gi_clock_mono_ms() - start);
	if (left <= 0)
		return GI_ETIMEOUT;
	/* Fixed argv: the only values from outside are root (a directory, after
	 * -C) and base (checked above, after --end-of-options). */
	char *argv[] = {"git",
	                "-C",
	                (char *)root,
	                "--no-pager",
	                "-c",
	                "core.fsmonitor=false",
	                "-c",
	                "core.quotePath=true",
	                "-c",
	                "diff.noprefix=false",
	                "-c",
	                "diff.mnemonicPrefix=false",
	                "diff",
	                "--no-ext-diff",
	                "--no-textconv",
	                "--no-color",
	                "--unified=0",
	                "--find-renames",
	                "--relative",
	                "--src-prefix=a/",
	                "--dst-prefix=b/",
	                "--end-of-options",
	                (char *)base,
	                "--",
	                NULL};
	return git_run(argv, left, text, len, error);
}

/* ---- the diff parser ------------------------------------------------------ */

struct diff_parser {
	json_t *files;
	json_t *file;  /* the file being read, or NULL */
	json_t *hunks; /* its hunks */
	size_t hunk_count;
	/* The hunk being read: lines still expected on each side. */
	long old_left, new_left;
	bool hunk_comment_only;
	bool truncated;
};

/* Whether line `s` of `n` bytes, the text of a changed line, is blank or a
 * comment (Elixir `#`, Erlang `%`). */
static bool line_is_comment(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
		i++;
	return i == n || s[i] == '#' || s[i] == '%';
}

/* A path of a diff header: `prefix` stripped, C-quoted ("a/x\tb") undone,
 * capped; NULL for /dev/null or an unreadable path. Caller frees. */
static char *diff_path(const char *s, size_t n, const char *prefix)
{
	while (n && (s[n - 1] == '\r' || s[n - 1] == '\t'))
		n--;
	if (n == 9 && memcmp(s, "/dev/null", 9) == 0)
		return NULL;
	struct gi_buf b;
	gi_buf_init(&b, KG_DIFF_PATH_MAX);
	bool too_long = false;
	if (n >= 2 && s[0] == '"') {
		for (size_t i = 1; i < n && s[i] != '"' && !too_long; i++) {
			char c = s[i];
			if (c == '\\' && i + 1 < n) {
				char e = s[++i];
				if (e >= '0' && e <= '3' && i + 2 < n && s[i + 1] >= '0' &&
				    s[i + 1] <= '7' && s[i + 2] >= '0' && s[i + 2] <= '7') {
					c = (char)((e - '0') * 64 + (s[i + 1] - '0') * 8 +
					           (s[i + 2] - '0'));
					i += 2;
				} else {
					c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
				}
			}
			too_long = gi_buf_append(&b, &c, 1) != 0;
		}
	} else {
		too_long = gi_buf_append(&b, s, n) != 0;
	}
	char *p = gi_buf_take(&b);
	gi_buf_destroy(&b);
	size_t pl = strlen(prefix), len = strlen(p);
	if (!too_long && pl && strncmp(p, prefix, pl) == 0) {
		memmove(p, p + pl, len - pl + 1);
		len -= pl;
	}
	if (too_long || len == 0 || !gi_utf8_valid(p, len)) {
		gi_free(p);
		return NULL;
	}
	return p;
}

static void file_set_path(json_t *file, const char *key, char *path)
{
	json_object_set_new(file, key, path ? json_string(path) : json_null());
	gi_free(path);
}

static void diff_file_begin(struct diff_parser *dp)
{
	dp->file = NULL;
	dp->hunks = NULL;
	dp->old_left = dp->new_left = 0;
	if (json_array_size(dp->files) >= KG_DIFF_FILES_MAX) {
		dp->truncated = true;
		return;
	}
	dp->file = json_pack("{s:n, s:n, s:s, s:b, s:i, s:i, s:[], s:[], s:[], s:[], s:[]}",
	                     "old_path", "new_path", "status", "modified", "binary", 0, "added", 0,
	                     "removed", 0, "hunks", "removed_modules", "added_modules",
	                     "removed_functions", "added_functions");
	dp->hunks = json_object_get(dp->file, "hunks");
	json_array_append_new(dp->files, dp->file);
}

/* Parses a decimal of at most 9 digits at *s; false when there is none. */
static bool parse_count(const char **s, const char *end, long *out)
{
	long v = 0;
	int digits = 0;
	while (*s < end && **s >= '0' && **s <= '9' && digits < 9) {
		v = v * 10 + (**s - '0');
		(*s)++;
		digits++;
	}
	*out = v;
	return digits > 0 && !(*s < end && **s >= '0' && **s <= '9');
}

/* "@@ -a[,b] +c[,d] @@": a hunk header, or false. */
static bool parse_hunk_header(const char *s, size_t n, long v[4])
{
	const char *p = s + 2, *end = s + n;
	v[1] = v[3] = 1;
	if (p >= end || *p++ != ' ' || p >= end || *p++ != '-' || !parse_count(&p, end, &v[0]))
		return false;
	if (p < end && *p == ',') {
		p++;
		if (!parse_count(&p, end, &v[1]))
			return false;
	}
	if (p >= end || *p++ != ' ' || p >= end || *p++ != '+' || !parse_count(&p, end, &v[2]))
		return false;
	if (p < end && *p == ',') {
		p++;
		if (!parse_count(&p, end, &v[3]))
			return false;
	}
	return p + 3 <= end && memcmp(p, " @@", 3) == 0;
}

/* The module name after `defmodule` on a changed line, into `name`. */
static bool line_defmodule(const char *s, size_t n, char *name, size_t size)
{
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (n - i < 10 || memcmp(s + i, "defmodule", 9) != 0 ||
	    (s[i + 9] != ' ' && s[i + 9] != '\t'))
		return false;
	i += 9;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	size_t start = i;
	if (i >= n || s[i] < 'A' || s[i] > 'Z')
		return false;
	while (i < n && (s[i] == '.' || s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') ||
	                 (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9')))
		i++;
	if (i - start >= size)
		return false;
	memcpy(name, s + start, i - start);
	name[i - start] = '\0';
	return true;
}

/* The function name after `def`, `defp`, `defmacro` or `defmacrop` on a
 * changed line, into `name`. */
static bool line_def(const char *s, size_t n, char *name, size_t size)
{
	static const char *const keywords[] = {"defmacrop", "defmacro", "defp", "def", NULL};
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	size_t k;
	for (k = 0; keywords[k]; k++) {
		size_t kl = strlen(keywords[k]);
		if (n - i > kl && memcmp(s + i, keywords[k], kl) == 0 &&
		    (s[i + kl] == ' ' || s[i + kl] == '\t')) {
			i += kl;
			break;
		}
	}
	if (!keywords[k])
		return false;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	size_t start = i;
	if (i >= n || !((s[i] >= 'a' && s[i] <= 'z') || s[i] == '_'))
		return false;
	while (i < n && (s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') ||
	                 (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9')))
		i++;
	if (i < n && (s[i] == '?' || s[i] == '!'))
		i++;
	if (i - start >= size)
		return false;
	memcpy(name, s + start, i - start);
	name[i - start] = '\0';
	return true;
}

static void diff_changed_line(struct diff_parser *dp, char side, const char *s, size_t n)
{
	const char *key = side == '+' ? "added" : "removed";
	json_t *count = json_object_get(dp->file, key);
	json_integer_set(count, json_integer_value(count) + 1);
	if (!line_is_comment(s, n))
		dp->hunk_comment_only = false;
	char name[256];
	json_t *defs = json_object_get(dp->file, side == '+' ? "added_modules" : "removed_modules");
	if (line_defmodule(s, n, name, sizeof(name)) && json_array_size(defs) < KG_DIFF_DEFS_MAX)
		json_array_append_new(defs, json_string(name));
	json_t *fns =
	    json_object_get(dp->file, side == '+' ? "added_functions" : "removed_functions");
	if (line_def(s, n, name, sizeof(name)) && json_array_size(fns) < KG_DIFF_DEFS_MAX)
		json_array_append_new(fns, json_string(name));
}

/* Closes the hunk being read: records whether all its lines were comments. */
static void diff_hunk_end(struct diff_parser *dp)
{
	size_t n = dp->hunks ? json_array_size(dp->hunks) : 0;
	if (n)
		json_object_set_new(json_array_get(dp->hunks, n - 1), "comment_only",
		                    json_boolean(dp->hunk_comment_only));
	dp->old_left = dp->new_left = 0;
}

static void diff_line(struct diff_parser *dp, const char *s, size_t n)
{
	/* Inside a hunk the counts say which lines are its own: a removed
	 * line "--- x" is content, not a header. */
	if (dp->file && (dp->old_left > 0 || dp->new_left > 0)) {
		if (n && s[0] == '-' && dp->old_left > 0) {
			dp->old_left--;
			diff_changed_line(dp, '-', s + 1, n - 1);
		} else if (n && s[0] == '+' && dp->new_left > 0) {
			dp->new_left--;
			diff_changed_line(dp, '+', s + 1, n - 1);
		} else if (n && s[0] == ' ' && dp->old_left > 0 && dp->new_left > 0) {
			dp->old_left--;
			dp->new_left--;
		} else if (n && s[0] == '\\') {
			/* "\ No newline at end of file" */
		} else {
			diff_hunk_end(dp);
			diff_line(dp, s, n);
			return;
		}
		if (dp->old_left == 0 && dp->new_left == 0)
			diff_hunk_end(dp);
		return;
	}
	if (n >= 11 && memcmp(s, "diff --git ", 11) == 0) {
		diff_file_begin(dp);
		/* Paths from the header, for files without ---/+++ lines (a pure
		 * rename, a mode change, a binary file); ---/+++ replace them. */
		const char *a = s + 11, *end = s + n, *sp = NULL;
		if (dp->file && end - a > 4 && a[0] == 'a' && a[1] == '/') {
			/* "a/X b/X": split in the middle when both halves agree. */
			size_t rest = (size_t)(end - a);
			if (rest % 2 == 1) {
				size_t half = rest / 2;
				if (a[half] == ' ' && a[half + 1] == 'b' && a[half + 2] == '/' &&
				    memcmp(a + 2, a + half + 3, half - 2) == 0)
					sp = a + half;
			}
			if (sp) {
				file_set_path(dp->file, "old_path",
				              diff_path(a, (size_t)(sp - a), "a/"));
				file_set_path(dp->file, "new_path",
				              diff_path(sp + 1, (size_t)(end - sp - 1), "b/"));
			}
		}
		return;
	}
	if (!dp->file)
		return;
	if (n >= 4 && memcmp(s, "--- ", 4) == 0) {
		file_set_path(dp->file, "old_path", diff_path(s + 4, n - 4, "a/"));
	} else if (n >= 4 && memcmp(s, "+++ ", 4) == 0) {
		file_set_path(dp->file, "new_path", diff_path(s + 4, n - 4, "b/"));
	} else if (n >= 14 && memcmp(s, "new file mode ", 14) == 0) {
		json_object_set_new(dp->file, "status", json_string("added"));
		json_object_set_new(dp->file, "old_path", json_null());
	} else if (n >= 18 && memcmp(s, "deleted file mode ", 18) == 0) {
		json_object_set_new(dp->file, "status", json_string("deleted"));
		json_object_set_new(dp->file, "new_path", json_null());
	} else if (n >= 12 && memcmp(s, "rename from ", 12) == 0) {
		json_object_set_new(dp->file, "status", json_string("renamed"));
		file_set_path(dp->file, "old_path", diff_path(s + 12, n - 12, ""));
	} else if (n >= 10 && memcmp(s, "rename to ", 10) == 0) {
		file_set_path(dp->file, "new_path", diff_path(s + 10, n - 10, ""));
	} else if (n >= 10 && memcmp(s, "copy from ", 10) == 0) {
		json_object_set_new(dp->file, "status", json_string("copied"));
		file_set_path(dp->file, "old_path", diff_path(s + 10, n - 10, ""));
	} else if (n >= 8 && memcmp(s, "copy to ", 8) == 0) {
		file_set_path(dp->file, "new_path", diff_path(s + 8, n - 8, ""));
	} else if ((n >= 13 && memcmp(s, "Binary files ", 13) == 0) ||
	           (n >= 15 && memcmp(s, "GIT binary patch", 15) == 0)) {
		json_object_set_new(dp->file, "binary", json_true());
	} else if (n >= 2 && s[0] == '@' && s[1] == '@') {
		long v[4];
		if (!parse_hunk_header(s, n, v))
			return;
		if (dp->hunk_count >= KG_DIFF_HUNKS_MAX) {
			dp->truncated = true;
			return;
		}
		dp->hunk_count++;
		json_array_append_new(dp->hunks,
		                      json_pack("{s:I, s:I, s:I, s:I, s:b}", "old_start",
		                                (json_int_t)v[0], "old_count", (json_int_t)v[1],
		                                "new_start", (json_int_t)v[2], "new_count",
		                                (json_int_t)v[3], "comment_only", 1));
		dp->old_left = v[1];
		dp->new_left = v[3];
		dp->hunk_comment_only = true;
		if (dp->old_left == 0 && dp->new_left == 0)
			diff_hunk_end(dp);
	}
}

int kg_diff_parse(const char *text, size_t len, json_t **out)
{
	struct diff_parser dp = {0};
	dp.files = json_array();
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		diff_line(&dp, p, n);
		p += n + (nl ? 1 : 0);
	}
	if (dp.old_left || dp.new_left)
		diff_hunk_end(&dp);
	size_t nf = json_array_size(dp.files);
	if (dp.truncated && nf)
		json_object_set_new(json_array_get(dp.files, nf - 1), "truncated", json_true());
	*out = dp.files;
	return 0;
}

/* ---- the review ----------------------------------------------------------- */

#define LIVE_SHARE_FULL 0.05   /* a share of reductions that counts fully */
#define LIVE_CALLS_FULL 1000.0 /* calls per second that count fully */

/* One changed function (fn >= 0) or module-level change (fn -1). */
struct review_item {
	int module, fn;
	bool added;   /* every line of it is new */
	int lines[2]; /* the first and last changed line of the new side */
};

struct review {
	const struct kg_graph *g;
	const struct kg_review_options *opt;
	struct gi_vec items; /* struct review_item */
	struct gi_map seen;  /* "m:f" -> item index + 1 */
	json_t *files_out, *unmapped, *tests_changed, *removed, *removed_fns, *items_out;
	struct gi_map tests; /* test module name -> json object (borrowed from tests_out) */
	json_t *tests_out;
	bool truncated;
};

static void item_touch(struct review *rv, int module, int fn, long first, long last, bool added)
{
	char key[48];
	snprintf(key, sizeof(key), "%d:%d", module, fn);
	size_t at = (size_t)(uintptr_t)gi_map_get(&rv->seen, key);
	struct review_item *it;
	if (at) {
		it = &GI_VEC_AT(&rv->items, struct review_item, at - 1);
		it->added = it->added && added;
	} else {
		if (rv->items.len >= KG_REVIEW_ITEMS) {
			rv->truncated = true;
			return;
		}
		it = gi_vec_push_zero(&rv->items);
		it->module = module;
		it->fn = fn;
		it->added = added;
		it->lines[0] = (int)first;
		it->lines[1] = (int)last;
		gi_map_put(&rv->seen, key, (void *)(uintptr_t)rv->items.len);
	}
	if (first < it->lines[0])
		it->lines[0] = (int)first;
	if (last > it->lines[1])
		it->lines[1] = (int)last;
}

static bool ranges_meet(long a0, long a1, long b0, long b1)
{
	return a0 <= b1 && b0 <= a1;
}

/* Maps one hunk's new-side lines [first, last] onto the modules of the
 * file: the functions they meet, else the innermost module around them. */
static void hunk_map(struct review *rv, const int *mods, size_t nmods, long first, long last,
                     bool pure_add, bool pure_delete, bool comment_only)
{
	const struct kg_graph *g = rv->g;
	int inner = -1;
	bool any_fn = false;
	for (size_t k = 0; k < nmods; k++) {
		const struct kg_module *m = kg_module_at(g, mods[k]);
		if (!ranges_meet(first, last, m->line_start, m->line_end))
			continue;
		if (inner < 0 || (m->line_start >= kg_module_at(g, inner)->line_start &&
		                  m->line_end <= kg_module_at(g, inner)->line_end))
			inner = mods[k];
		for (size_t i = 0; i < m->functions.len; i++) {
			int fi = GI_VEC_AT(&m->functions, int, i);
			const struct kg_function *f = kg_function_at(g, fi);
			if (!f->defined || f->generated_by || f->line_start == 0 ||
			    !ranges_meet(first, last, f->line_start, f->line_end))
				continue;
			/* Lines deleted between new lines `first` and `last` are
			 * inside a function only when both neighbours are. */
			if (pure_delete &&
			    !(f->line_start <= (uint32_t)first && f->line_end >= (uint32_t)last))
				continue;
			any_fn = true;
			if (comment_only)
				continue;
			bool added =
			    pure_add && first <= (long)f->line_start && last >= (long)f->line_end;
			item_touch(rv, mods[k], fi,
			           first > (long)f->line_start ? first : f->line_start,
			           last < (long)f->line_end ? last : f->line_end, added);
		}
	}
	/* Lines outside any function (attributes, aliases, `use`, docs) change
	 * the module as a whole; comments and blank lines change nothing. */
	if (!any_fn && !comment_only && inner >= 0)
		item_touch(rv, inner, -1, first, last, false);
}

static bool names_hold(const json_t *names, const char *name)
{
	size_t i;
	json_t *v;
	json_array_foreach(names, i, v)
	{
		if (strcmp(json_string_value(v), name) == 0)
			return true;
	}
	return false;
}

static void tests_add(struct review *rv, const json_t *tests, const char *reason);

/* Functions whose `def` the diff removes (and does not add back) that the
 * file's modules no longer define but project code still calls: the graph
 * keeps each as an undefined function of the module, with its callers. The
 * test modules among the callers are tests to run (they no longer
 * compile). */
static void removed_functions(struct review *rv, const json_t *file, const int *mods, size_t nmods)
{
	const json_t *removed = json_object_get(file, "removed_functions");
	const json_t *added = json_object_get(file, "added_functions");
	if (!json_array_size(removed))
		return;
	/* Undefined functions are not in their module's list: one pass over
	 * the graph's functions, made only for files that remove a `def`. */
	for (size_t i = 0; i < rv->g->functions.len; i++) {
		const struct kg_function *f = kg_function_at(rv->g, (int)i);
		bool ours = false;
		for (size_t k = 0; k < nmods; k++)
			ours |= f->module == mods[k];
		if (!ours || f->defined || !f->callers.len || !names_hold(removed, f->name) ||
		    names_hold(added, f->name))
			continue;
		const struct kg_module *m = kg_module_at(rv->g, f->module);
		{
			if (json_array_size(rv->removed_fns) >= KG_REVIEW_ITEMS) {
				rv->truncated = true;
				return;
			}
			char name[320], reason[900];
			snprintf(name, sizeof(name), "%s/%d", f->name, f->arity);
			snprintf(reason, sizeof(reason), "calls the removed %s.%s", m->name, name);
			json_t *by = json_array(), *tests = json_array();
			for (size_t c = 0; c < f->callers.len && json_array_size(by) < 50; c++) {
				const struct kg_function *from = kg_function_at(
				    rv->g,
				    kg_call_at(rv->g, GI_VEC_AT(&f->callers, int, c))->from_fn);
				const struct kg_module *fm = kg_module_at(rv->g, from->module);
				char who[700];
				snprintf(who, sizeof(who), "%s.%s/%d", fm->name, from->name,
				         from->arity);
				if (!names_hold(by, who))
					json_array_append_new(by, json_string(who));
				if (fm->test)
					json_array_append_new(tests, json_pack("{s:s, s:s?}",
					                                       "module", fm->name,
					                                       "file", fm->file));
			}
			tests_add(rv, tests, reason);
			json_decref(tests);
			json_array_append_new(rv->removed_fns,
			                      json_pack("{s:s, s:s, s:s?, s:o}", "module", m->name,
			                                "function", name, "file", m->file,
			                                "still_called_by", by));
		}
	}
}

static void review_file(struct review *rv, const json_t *file, const struct gi_map *by_file)
{
	const char *status = json_string_value(json_object_get(file, "status"));
	const char *path = json_string_value(json_object_get(file, "new_path"));
	const char *old_path = json_string_value(json_object_get(file, "old_path"));
	const char *shown = path ? path : old_path;
	const json_t *hunks = json_object_get(file, "hunks");
	json_t *fo =
	    json_pack("{s:s?, s:s?, s:s?, s:O?, s:O?, s:i}", "path", shown, "old_path",
	              old_path && path && strcmp(old_path, path) ? old_path : NULL, "status",
	              status, "added", json_object_get(file, "added"), "removed",
	              json_object_get(file, "removed"), "hunks", (int)json_array_size(hunks));
	json_array_append_new(rv->files_out, fo);
	/* Modules a removed or deleted file defined that the graph no longer
	 * has as project modules: removed (still referenced, or not). */
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(file, "removed_modules"), i, v)
	{
		const char *name = json_string_value(v);
		bool readded = false;
		size_t j;
		json_t *w;
		json_array_foreach(json_object_get(file, "added_modules"), j, w)
		{
			readded |= strcmp(json_string_value(w), name) == 0;
		}
		int m = kg_graph_module_find(rv->g, name);
		if (readded || (m >= 0 && kg_module_at(rv->g, m)->project))
			continue;
		json_t *refs = json_array();
		if (m >= 0) {
			const struct kg_module *mm = kg_module_at(rv->g, m);
			for (size_t e = 0; e < mm->in.len; e++) {
				const struct kg_module *from = kg_module_at(
				    rv->g, kg_edge_at(rv->g, GI_VEC_AT(&mm->in, int, e))->from);
				if (from->project)
					json_array_append_new(refs, json_string(from->name));
			}
		}
		json_array_append_new(rv->removed,
		                      json_pack("{s:s, s:s?, s:o}", "module", name, "file",
		                                old_path, "still_referenced_by", refs));
	}
	const int *mods = path ? gi_map_get(by_file, path) : NULL;
	if (!path || json_is_true(json_object_get(file, "binary")))
		return;
	if (!mods) {
		json_array_append_new(rv->unmapped, json_string(path));
		json_object_set_new(fo, "indexed", json_false());
		return;
	}
	json_object_set_new(fo, "indexed", json_true());
	size_t nmods = (size_t)mods[0];
	bool test = true;
	for (size_t k = 0; k < nmods; k++)
		test &= kg_module_at(rv->g, mods[1 + k])->test;
	if (test) {
		for (size_t k = 0; k < nmods; k++) {
			const struct kg_module *m = kg_module_at(rv->g, mods[1 + k]);
			json_array_append_new(rv->tests_changed, json_string(m->name));
		}
		json_object_set_new(fo, "test", json_true());
		return;
	}
	removed_functions(rv, file, mods + 1, nmods);
	json_array_foreach(hunks, i, v)
	{
		long ns = (long)json_integer_value(json_object_get(v, "new_start"));
		long nc = (long)json_integer_value(json_object_get(v, "new_count"));
		long oc = (long)json_integer_value(json_object_get(v, "old_count"));
		/* A pure deletion sits between new lines ns and ns + 1. */
		long first = nc > 0 ? ns : ns, last = nc > 0 ? ns + nc - 1 : ns + 1;
		if (first < 1)
			first = 1;
		hunk_map(rv, mods + 1, nmods, first, last, oc == 0, nc == 0,
		         json_is_true(json_object_get(v, "comment_only")));
	}
}

/* The profile entry of a function or module: share of reductions, calls/s. */
struct live {
	bool found;
	double share, calls_per_second;
	long long samples;
};

static void live_of(const json_t *profile, const char *module, const char *fn, int arity,
                    struct live *lv)
{
	memset(lv, 0, sizeof(*lv));
	if (!profile)
		return;
	size_t i;
	json_t *v;
	if (fn) {
		json_array_foreach(json_object_get(profile, "hot_functions"), i, v)
		{
			const char *m = json_string_value(json_object_get(v, "module"));
			const char *f = json_string_value(json_object_get(v, "function"));
			if (m && f && strcmp(m, module) == 0 && strcmp(f, fn) == 0 &&
			    json_integer_value(json_object_get(v, "arity")) == arity) {
				lv->found = true;
				lv->share =
				    json_number_value(json_object_get(v, "reductions_share"));
				lv->samples = json_integer_value(json_object_get(v, "samples"));
			}
		}
		json_array_foreach(json_object_get(profile, "trace_hotspots"), i, v)
		{
			const char *m = json_string_value(json_object_get(v, "module"));
			const char *f = json_string_value(json_object_get(v, "function"));
			if (m && f && strcmp(m, module) == 0 && strcmp(f, fn) == 0 &&
			    json_integer_value(json_object_get(v, "arity")) == arity) {
				lv->found = true;
				lv->calls_per_second =
				    json_number_value(json_object_get(v, "calls_per_second"));
			}
		}
		return;
	}
	json_array_foreach(json_object_get(profile, "hot_modules"), i, v)
	{
		const char *m = json_string_value(json_object_get(v, "module"));
		if (m && strcmp(m, module) == 0) {
			lv->found = true;
			lv->share = json_number_value(json_object_get(v, "reductions_share"));
			lv->samples = json_integer_value(json_object_get(v, "samples"));
		}
	}
	json_array_foreach(json_object_get(profile, "trace_hotspots"), i, v)
	{
		const char *m = json_string_value(json_object_get(v, "module"));
		if (m && strcmp(m, module) == 0) {
			lv->found = true;
			lv->calls_per_second +=
			    json_number_value(json_object_get(v, "calls_per_second"));
		}
	}
}

static double clamp01(double v)
{
	return v < 0 ? 0 : v > 1 ? 1 : v;
}

static double round1(double v)
{
	return round(v * 10) / 10;
}

static const char *risk_level(double score)
{
	return score >= 60 ? "high" : score >= 30 ? "medium" : "low";
}

/* Adds the test modules of a preflight answer to the tests to run. */
static void tests_add(struct review *rv, const json_t *tests, const char *reason)
{
	size_t i;
	json_t *t;
	json_array_foreach(tests, i, t)
	{
		const char *name = json_string_value(json_object_get(t, "module"));
		if (!name)
			continue;
		json_t *have = gi_map_get(&rv->tests, name);
		if (!have) {
			have = json_pack("{s:s, s:O?, s:[]}", "module", name, "file",
			                 json_object_get(t, "file"), "because");
			json_array_append_new(rv->tests_out, have);
			gi_map_put(&rv->tests, name, have);
		}
		json_t *because = json_object_get(have, "because");
		if (json_array_size(because) < 10)
			json_array_append_new(because, json_string(reason));
	}
}

/* The analysis of one item: preflight's walks, the live weight, the score. */
static json_t *item_json(struct review *rv, const struct review_item *it)
{
	const struct kg_graph *g = rv->g;
	const struct kg_module *m = kg_module_at(g, it->module);
	const struct kg_function *f = it->fn >= 0 ? kg_function_at(g, it->fn) : NULL;
	json_t *pf = json_object();
	kg_preflight(g, it->module, it->fn, rv->opt->depth, pf);
	/* Reach: the other non-test project modules the change can break. */
	size_t reach = 0, callers = 0;
	json_t *reached = json_array();
	if (f) {
		struct gi_map mods;
		gi_map_init(&mods);
		size_t i;
		json_t *c;
		json_array_foreach(json_object_get(pf, "callers"), i, c)
		{
			const char *cm = json_string_value(json_object_get(c, "module"));
			callers++;
			if (json_is_true(json_object_get(c, "test")) || strcmp(cm, m->name) == 0 ||
			    gi_map_get(&mods, cm))
				continue;
			gi_map_put(&mods, cm, (void *)1);
			reach++;
			if (json_array_size(reached) < 20)
				json_array_append_new(reached, json_string(cm));
		}
		gi_map_destroy(&mods);
	} else {
		size_t i;
		json_t *c;
		json_array_foreach(json_object_get(pf, "blast_radius"), i, c)
		{
			if (json_is_true(json_object_get(c, "test")))
				continue;
			reach++;
			if (json_array_size(reached) < 20)
				json_array_append_new(reached,
				                      json_incref(json_object_get(c, "module")));
		}
	}
	json_t *tests = json_object_get(pf, "tests");
	int cyclomatic = f ? f->cyclomatic : m->complexity_max;
	struct live lv;
	live_of(rv->opt->profile, m->name, f ? f->name : NULL, f ? f->arity : 0, &lv);

	double s_reach = 40 * clamp01((double)reach / 10);
	double s_tests = json_array_size(tests) == 0 ? 20 : 0;
	double s_complex = 15 * clamp01((double)cyclomatic / 15);
	double s_live =
	    25 * clamp01(fmax(lv.share / LIVE_SHARE_FULL, lv.calls_per_second / LIVE_CALLS_FULL));
	if (it->added)
		s_reach = 0; /* new code: nothing that exists depends on how it behaved */
	double score = round1(s_reach + s_tests + s_complex + s_live);

	char name[320] = "";
	if (f)
		snprintf(name, sizeof(name), "%s/%d", f->name, f->arity);
	json_t *o =
	    json_pack("{s:s, s:s, s:s?, s:s?, s:s, s:[i,i], s:f, s:s}", "kind",
	              f ? "function" : "module", "module", m->name, "function", f ? name : NULL,
	              "file", m->file, "change", it->added ? "added" : "modified", "lines",
	              it->lines[0], it->lines[1], "score", score, "risk", risk_level(score));
	json_object_set_new(o, "score_parts",
	                    json_pack("{s:f, s:f, s:f, s:f}", "reach", round1(s_reach), "untested",
	                              s_tests, "complexity", round1(s_complex), "live",
	                              round1(s_live)));
	json_object_set_new(o, "reach", json_integer((json_int_t)reach));
	json_object_set_new(o, "reached_modules", reached);
	if (f) {
		json_object_set_new(o, "callers", json_integer((json_int_t)callers));
		json_object_set_new(o, "visibility",
		                    json_string(f->is_public ? "public" : "private"));
	}
	json_object_set_new(o, "cyclomatic", json_integer(cyclomatic));
	json_object_set_new(o, "change_risk", json_real(round(m->change_risk * 100) / 100));
	json_object_set_new(o, "zone", json_string(kg_heat_zone(m->heat)));
	json_object_set_new(o, "hub", json_boolean(m->hub));
	json_object_set_new(o, "live",
	                    lv.found ? json_pack("{s:f, s:f, s:I}", "reductions_share",
	                                         round(lv.share * 1e4) / 1e4, "calls_per_second",
	                                         round1(lv.calls_per_second), "samples",
	                                         (json_int_t)lv.samples)
	                             : json_null());
	json_t *tnames = json_array();
	size_t i;
	json_t *t;
	json_array_foreach(tests, i, t)
	{
		json_array_append_new(tnames, json_incref(json_object_get(t, "module")));
	}
	json_object_set_new(o, "tests", tnames);
	json_object_set(o, "factors", json_object_get(pf, "risk_factors"));
	char reason[400];
	snprintf(reason, sizeof(reason), "%s%s%s", m->name, f ? "." : "", f ? name : "");
	tests_add(rv, tests, reason);
	json_decref(pf);
	return o;
}

static int by_score(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	double sx = json_real_value(json_object_get(x, "score"));
	double sy = json_real_value(json_object_get(y, "score"));
	if (sx != sy)
		return sx < sy ? 1 : -1;
	json_int_t rx = json_integer_value(json_object_get(x, "reach"));
	json_int_t ry = json_integer_value(json_object_get(y, "reach"));
	if (rx != ry)
		return rx < ry ? 1 : -1;
	int c = strcmp(json_string_value(json_object_get(x, "module")),
	               json_string_value(json_object_get(y, "module")));
	if (c)
		return c;
	const char *fx = json_string_value(json_object_get(x, "function"));
	const char *fy = json_string_value(json_object_get(y, "function"));
	return strcmp(fx ? fx : "", fy ? fy : "");
}

/* file -> [count, module indexes...] of the project modules defined in it. */
static void modules_by_file(const struct kg_graph *g, struct gi_map *by_file)
{
	gi_map_init(by_file);
	for (size_t i = 0; i < g->modules.len; i++) {
		const struct kg_module *m = kg_module_at(g, (int)i);
		if (!m->project || !m->file)
			continue;
		int *have = gi_map_get(by_file, m->file);
		int n = have ? have[0] : 0;
		int *next = gi_realloc(have, sizeof(int) * (size_t)(n + 2));
		next[0] = n + 1;
		next[n + 1] = (int)i;
		gi_map_put(by_file, m->file, next);
	}
}

int kg_review(const struct kg_graph *g, const json_t *files, const struct kg_review_options *opt,
              json_t *out)
{
	struct review rv = {0};
	rv.g = g;
	rv.opt = opt;
	gi_vec_init(&rv.items, sizeof(struct review_item));
	gi_map_init(&rv.seen);
	gi_map_init(&rv.tests);
	rv.files_out = json_array();
	rv.unmapped = json_array();
	rv.tests_changed = json_array();
	rv.removed = json_array();
	rv.removed_fns = json_array();
	rv.tests_out = json_array();
	struct gi_map by_file;
	modules_by_file(g, &by_file);
	size_t i;
	json_t *v;
	bool diff_truncated = false;
	json_array_foreach(files, i, v)
	{
		review_file(&rv, v, &by_file);
		diff_truncated |= json_is_true(json_object_get(v, "truncated"));
	}
	for (size_t k = 0; k < by_file.cap; k++)
		if (by_file.slots[k].key)
			gi_free(by_file.slots[k].value);
	gi_map_destroy(&by_file);

	size_t n = rv.items.len;
	json_t **items = gi_malloc(sizeof(json_t *) * (n + 1));
	for (size_t k = 0; k < n; k++)
		items[k] = item_json(&rv, &GI_VEC_AT(&rv.items, struct review_item, k));
	qsort(items, n, sizeof(json_t *), by_score);
	json_t *at_risk = json_array();
	double max_score = 0;
	size_t risky = 0;
	for (size_t k = 0; k < n; k++) {
		double s = json_real_value(json_object_get(items[k], "score"));
		max_score = fmax(max_score, s);
		risky += s >= opt->threshold;
		json_array_append_new(at_risk, items[k]);
	}
	gi_free(items);
	/* A removed module that project code still references breaks the
	 * build: risky whatever the threshold. */
	json_array_foreach(rv.removed, i, v)
	{
		if (json_array_size(json_object_get(v, "still_referenced_by")) > 0)
			risky++;
	}
	risky += json_array_size(rv.removed_fns);
	/* The changed test modules are tests to run too. */
	json_array_foreach(rv.tests_changed, i, v)
	{
		json_t *t = json_pack("[{s:O}]", "module", v);
		tests_add(&rv, t, "changed");
		json_decref(t);
	}

	json_object_set_new(out, "base", opt->base ? json_string(opt->base) : json_null());
	json_object_set_new(out, "depth", json_integer(opt->depth));
	json_object_set_new(out, "threshold", json_real(opt->threshold));
	json_object_set_new(out, "verdict", json_string(risky ? "risky" : "ok"));
	json_object_set_new(out, "risky", json_integer((json_int_t)risky));
	json_object_set_new(out, "max_score", json_real(max_score));
	json_object_set_new(out, "files", rv.files_out);
	json_object_set_new(out, "at_risk", at_risk);
	json_object_set_new(out, "removed_modules", rv.removed);
	json_object_set_new(out, "removed_functions", rv.removed_fns);
	json_object_set_new(out, "tests_changed", rv.tests_changed);
	json_object_set_new(out, "tests_to_run", rv.tests_out);
	json_object_set_new(out, "unindexed_files", rv.unmapped);
	json_object_set_new(out, "truncated", json_boolean(rv.truncated || diff_truncated));
	json_t *pinfo = json_object();
	json_object_set_new(pinfo, "used", json_boolean(opt->profile != NULL));
	if (opt->profile) {
		json_t *session = json_object_get(opt->profile, "session");
		json_object_set(pinfo, "node", json_object_get(session, "node"));
		json_object_set(pinfo, "started_ms", json_object_get(session, "started_ms"));
	}
	if (opt->profile_note)
		json_object_set_new(pinfo, "note", json_string(opt->profile_note));
	json_object_set_new(out, "profile", pinfo);
	gi_vec_destroy(&rv.items);
	gi_map_destroy(&rv.seen);
	gi_map_destroy(&rv.tests);
	return 0;
}

/* ---- the query ------------------------------------------------------------ */

int kg_review_query(const struct kg_graph *g, const char *root, const struct kg_query_params *p,
                    json_t *out)
{
	const json_t *args = p ? p->args : NULL;
	const char *base = json_string_value(json_object_get(args, "base"));
	if (!base) {
		kg_query_fail("review needs base: the revision to compare the working tree with");
		return GI_EINVAL;
	}
	if (!kg_review_rev_valid(base)) {
		kg_query_fail("base must be a revision (1..%d printable characters, no spaces, not "
		              "starting with '-')",
		              KG_REVIEW_REV_MAX);
		return GI_EINVAL;
	}
	struct kg_review_options opt = {base, p->depth > 0 ? p->depth : 3,
	                                KG_REVIEW_DEFAULT_THRESHOLD, NULL, NULL};
	if (opt.depth > 100)
		opt.depth = 100;
	const json_t *th = json_object_get(args, "threshold");
	if (th && !json_is_null(th)) {
		double v = -1;
		if (json_is_number(th))
			v = json_number_value(th);
		else if (json_string_value(th)) {
			char *end = NULL;
			v = strtod(json_string_value(th), &end);
			if (!end || *end || end == json_string_value(th))
				v = -1;
		}
		if (!(v >= 0 && v <= 100)) {
			kg_query_fail("threshold must be a number from 0 to 100");
			return GI_EINVAL;
		}
		opt.threshold = v;
	}
	const json_t *profile = json_object_get(args, "profile");
	if (json_is_object(json_object_get(profile, "profile")))
		profile = json_object_get(profile, "profile");
	opt.profile = json_is_object(profile) ? profile : NULL;
	opt.profile_note = json_string_value(json_object_get(args, "profile_note"));
	if (!root) {
		kg_query_fail("the index records no project root to run git in");
		return GI_EINVAL;
	}
	/* A profile of another project weighs nothing here. */
	const char *of =
	    json_string_value(json_object_get(json_object_get(opt.profile, "session"), "project"));
	if (opt.profile && of && strcmp(of, root) != 0) {
		opt.profile = NULL;
		opt.profile_note = "the latest profile is of another project";
	}
	char *text = NULL, *error = NULL;
	size_t len = 0;
	int rc = kg_review_git_diff(root, base, KG_REVIEW_GIT_MS, &text, &len, &error);
	if (rc == GI_ENOENT)
		kg_query_fail("git is not installed (install git)");
	else if (rc == GI_ETIMEOUT)
		kg_query_fail("git diff %s did not finish within %d ms", base, KG_REVIEW_GIT_MS);
	else if (rc == GI_ETOOBIG)
		kg_query_fail("git diff %s is larger than %u MB", base, KG_DIFF_BYTES_MAX >> 20);
	else if (rc)
		kg_query_fail("git diff %s failed in %s: %s", base, root,
		              error ? error : gi_strerror(rc));
	gi_free(error);
	if (rc) {
		gi_free(text);
		return rc == GI_ENOENT || rc == GI_ETIMEOUT || rc == GI_ETOOBIG ? rc : GI_EIO;
	}
	json_t *files = NULL;
	kg_diff_parse(text, len, &files);
	gi_free(text);
	rc = kg_review(g, files, &opt, out);
	json_decref(files);
	return rc;
}
