/*
 * index_walk.c - the index's walk of a project's sources, with the record of
 * each directory's listing (see index_walk.h).
 *
 * The record is text: a first line "giulia-walk 1 SALT", then one block per
 * directory, children before their parent (the order the walk finishes
 * them, so that a walk that reads nothing again writes the same text):
 *
 *     INODE CTIME_NS COUNT RELPATH      ("." for the root; CTIME_NS -1: unsettled)
 *     dNAME | fNAME                      (COUNT lines: a subdirectory, a source)
 *
 * A name holding a newline cannot be written so: its directory is recorded
 * unsettled, with no entries, and read again every time.
 */
#include "graph/index_walk.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/map.h"
#include "base/str.h"

#define WALK_DEPTH_MAX 64

struct old_dir {
	unsigned long long ino;
	long long ctime_ns;
	size_t count;
	const char *rel;
	const char *block; /* its lines in the old record, as they were */
	size_t block_len;
	const char *entries; /* `count` NUL-terminated "dNAME"/"fNAME", one after another */
};

struct walk {
	const char *const *skip;
	kg_walk_fn fn;
	void *ctx;
	struct gi_map old; /* relpath -> struct old_dir *, keys borrowed from `text` */
	struct old_dir *dirs;
	char *text;        /* the old record, its newlines made NULs */
	struct gi_buf out; /* the new record */
	struct gi_buf path;
	size_t root_len;
	long long settled_before; /* ns: a directory changed since then is unsettled */
};

static long long ctime_ns(const struct stat *sb)
{
	return (long long)sb->st_ctim.tv_sec * 1000000000LL + sb->st_ctim.tv_nsec;
}

/* Reads `old` into w->old; a record of another salt or damaged is dropped
 * whole. */
static void old_parse(struct walk *w, const char *old, uint64_t salt)
{
	char head[64];
	snprintf(head, sizeof(head), "giulia-walk 1 %016" PRIx64, salt);
	size_t head_len = strlen(head);
	if (!old || strncmp(old, head, head_len) != 0 || old[head_len] != '\n')
		return;
	size_t len = strlen(old);
	w->text = gi_strndup(old, len);
	size_t ndirs = 0, cap = 0;
	char *end = w->text + len;
	for (char *p = w->text; p < end; p++)
		if (*p == '\n')
			*p = '\0';
	char *p = w->text + head_len + 1;
	while (p < end) {
		struct old_dir d;
		char *q = NULL;
		d.block = old + (p - w->text);
		d.ino = strtoull(p, &q, 10);
		if (q == p || *q != ' ')
			goto bad;
		p = q + 1;
		d.ctime_ns = strtoll(p, &q, 10);
		if (q == p || *q != ' ')
			goto bad;
		p = q + 1;
		d.count = (size_t)strtoull(p, &q, 10);
		if (q == p || *q != ' ')
			goto bad;
		d.rel = q + 1;
		p = (char *)d.rel + strlen(d.rel) + 1;
		d.entries = p;
		for (size_t i = 0; i < d.count; i++) {
			if (p >= end || (*p != 'd' && *p != 'f') || p[1] == '\0')
				goto bad;
			p += strlen(p) + 1;
		}
		if (p > end + 1)
			goto bad;
		d.block_len = (size_t)(p - w->text) - (size_t)(d.block - old);
		if (p > end) /* the last line, without its newline */
			d.block_len--;
		if (ndirs == cap) {
			cap = cap ? cap * 2 : 64;
			w->dirs = gi_reallocarray(w->dirs, cap, sizeof(*w->dirs));
		}
		w->dirs[ndirs++] = d;
	}
	/* The map's values point into w->dirs, final now. */
	for (size_t i = 0; i < ndirs; i++)
		gi_map_put_borrowed(&w->old, w->dirs[i].rel, &w->dirs[i]);
	return;
bad:
	gi_free(w->dirs);
	w->dirs = NULL;
	gi_free(w->text);
	w->text = NULL;
}

static const char *rel_of(const struct walk *w)
{
	return w->path.len > w->root_len ? w->path.data + w->root_len + 1 : ".";
}

static bool skipped(const struct walk *w, const char *name)
{
	for (const char *const *s = w->skip; s && *s; s++)
		if (strcmp(name, *s) == 0)
			return true;
	return false;
}

static void path_push(struct walk *w, const char *name)
{
	GI_BUF_LIT(&w->path, "/");
	gi_buf_puts(&w->path, name);
}

static void path_pop(struct walk *w, size_t len)
{
	w->path.len = len;
	w->path.data[len] = '\0';
}

static int walk_dir(struct walk *w, int depth);

/* The entries of a directory whose record still holds. */
static void walk_recorded(struct walk *w, const struct old_dir *d, int depth)
{
	size_t len = w->path.len;
	const char *e = d->entries;
	for (size_t i = 0; i < d->count; i++, e += strlen(e) + 1) {
		path_push(w, e + 1);
		if (e[0] == 'd')
			walk_dir(w, depth + 1);
		else
			w->fn(w->path.data, rel_of(w), w->ctx);
		path_pop(w, len);
	}
}

/* Reads a directory from disk; its kept entries go to `entries` ("dNAME\n"
 * or "fNAME\n"), their count to *count; *recordable becomes false when a
 * name cannot be recorded (a newline in it). */
static int walk_listed(struct walk *w, int depth, struct gi_buf *entries, size_t *count,
                       bool *recordable)
{
	char **names = NULL;
	size_t n = 0;
	int rc = gi_fs_list_dir(w->path.data, &names, &n);
	if (rc)
		return rc;
	size_t len = w->path.len;
	for (size_t i = 0; i < n; i++) {
		unsigned char type = (unsigned char)names[i][-1];
		mode_t mode = type == DT_DIR ? S_IFDIR : type == DT_REG ? S_IFREG : 0;
		if (type != DT_UNKNOWN && mode == 0)
			continue; /* a symbolic link, a device, ...: neither */
		path_push(w, names[i]);
		struct stat st;
		if (mode == 0)
			mode = lstat(w->path.data, &st) == 0 ? st.st_mode : 0;
		char kind = 0;
		if (S_ISDIR(mode) && !skipped(w, names[i])) {
			walk_dir(w, depth + 1);
			kind = 'd';
		} else if (S_ISREG(mode) && w->fn(w->path.data, rel_of(w), w->ctx)) {
			kind = 'f';
		}
		path_pop(w, len);
		if (!kind)
			continue;
		if (strchr(names[i], '\n'))
			*recordable = false;
		gi_buf_append(entries, &kind, 1);
		gi_buf_puts(entries, names[i]);
		GI_BUF_LIT(entries, "\n");
		(*count)++;
	}
	gi_fs_list_free(names, n);
	return 0;
}

static int walk_dir(struct walk *w, int depth)
{
	if (depth > WALK_DEPTH_MAX)
		return 0; /* deeper trees are not source trees */
	struct stat sb;
	if (lstat(w->path.data, &sb) != 0 || !S_ISDIR(sb.st_mode))
		return depth == 0 ? GI_ENOENT : 0;
	const char *rel = rel_of(w);
	long long ct = ctime_ns(&sb);
	const struct old_dir *d = gi_map_get(&w->old, rel);
	if (d && d->ctime_ns >= 0 && d->ctime_ns == ct && d->ino == (unsigned long long)sb.st_ino) {
		walk_recorded(w, d, depth);
		gi_buf_append(&w->out, d->block, d->block_len);
		if (w->out.data[w->out.len - 1] != '\n')
			GI_BUF_LIT(&w->out, "\n");
		return 0;
	}
	struct gi_buf entries;
	gi_buf_init(&entries, 0);
	size_t count = 0;
	bool recordable = strchr(rel, '\n') == NULL;
	int rc = walk_listed(w, depth, &entries, &count, &recordable);
	if (rc) {
		gi_buf_destroy(&entries);
		return depth == 0 ? rc : 0;
	}
	rel = rel_of(w);
	if (recordable)
		gi_buf_printf(&w->out, "%llu %lld %zu %s\n", (unsigned long long)sb.st_ino,
		              ct < w->settled_before ? ct : -1LL, count, rel);
	if (recordable && count)
		gi_buf_append(&w->out, entries.data, entries.len);
	gi_buf_destroy(&entries);
	return 0;
}

int kg_walk_sources(const char *root, const char *const *skip, uint64_t salt, const char *old,
                    kg_walk_fn fn, void *ctx, char **record, bool *changed)
{
	*record = NULL;
	*changed = true;
	struct walk w;
	memset(&w, 0, sizeof(w));
	w.skip = skip;
	w.fn = fn;
	w.ctx = ctx;
	gi_map_init(&w.old);
	gi_buf_init(&w.out, 0);
	gi_buf_init(&w.path, 0);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	w.settled_before = (long long)now.tv_sec * 1000000000LL + now.tv_nsec - KG_WALK_SETTLE_NS;
	old_parse(&w, old, salt);
	gi_buf_printf(&w.out, "giulia-walk 1 %016" PRIx64 "\n", salt);
	gi_buf_puts(&w.path, root);
	w.root_len = w.path.len;
	int rc = walk_dir(&w, 0);
	if (!rc) {
		*changed = !old || strcmp(old, gi_buf_str(&w.out)) != 0;
		*record = gi_buf_take(&w.out);
	}
	gi_buf_destroy(&w.out);
	gi_buf_destroy(&w.path);
	gi_map_destroy(&w.old);
	gi_free(w.dirs);
	gi_free(w.text);
	return rc;
}
