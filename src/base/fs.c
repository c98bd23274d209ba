/*
 * fs.c - file system helpers (see fs.h).
 */
#include "base/fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"

static int errno_to_gi(int e)
{
	return e == ENOENT || e == ENOTDIR ? GI_ENOENT : e == EACCES ? GI_EDENIED : GI_EIO;
}

int gi_fs_read_file(const char *path, size_t limit, char **out, size_t *out_len)
{
	int rc = 0;
	char *data = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno_to_gi(errno);
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		rc = GI_EIO;
		goto out;
	}
	if ((uint64_t)st.st_size > limit) {
		rc = GI_ETOOBIG;
		goto out;
	}
	size_t cap = (size_t)st.st_size + 1, len = 0;
	data = gi_malloc(cap);
	for (;;) {
		if (len + 1 >= cap) {
			if (cap > limit) {
				rc = GI_ETOOBIG;
				goto out;
			}
			cap *= 2;
			data = gi_realloc(data, cap);
		}
		ssize_t n = read(fd, data + len, cap - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = GI_EIO;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > limit) {
		rc = GI_ETOOBIG;
		goto out;
	}
	data[len] = '\0';
	*out = data;
	if (out_len)
		*out_len = len;
	data = NULL;
out:
	gi_free(data);
	close(fd);
	return rc;
}

int gi_fs_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return GI_EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int gi_fs_write_file(const char *path, const void *data, size_t len)
{
	struct gi_buf tmp;
	gi_buf_init(&tmp, 0);
	gi_buf_printf(&tmp, "%s.tmp.%ld", path, (long)getpid());
	int rc = 0;
	int fd = open(tmp.data, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = errno_to_gi(errno);
		goto out;
	}
	rc = gi_fs_write_all(fd, data, len);
	if (close(fd) != 0 && !rc)
		rc = GI_EIO;
	if (!rc && rename(tmp.data, path) != 0)
		rc = errno_to_gi(errno);
	if (rc)
		unlink(tmp.data);
out:
	gi_buf_destroy(&tmp);
	return rc;
}

int gi_fs_mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);
	if (len == 0 || len >= sizeof(buf))
		return GI_EINVAL;
	memcpy(buf, path, len + 1);
	for (size_t i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		char saved = buf[i];
		buf[i] = '\0';
		if (mkdir(buf, 0700) != 0 && errno != EEXIST)
			return errno_to_gi(errno);
		buf[i] = saved;
	}
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return GI_EIO;
	return 0;
}

int gi_fs_realdir(const char *path, char **out)
{
	char *real = realpath(path, NULL);
	if (!real)
		return errno_to_gi(errno);
	struct stat st;
	if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
		free(real);
		return GI_ENOENT;
	}
	*out = gi_strdup(real);
	free(real);
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int gi_fs_list_dir(const char *dir, char ***names_out, size_t *count_out)
{
	DIR *d = opendir(dir);
	if (!d)
		return errno_to_gi(errno);
	char **names = NULL;
	size_t count = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (count == cap) {
			cap = cap ? cap * 2 : 32;
			names = gi_reallocarray(names, cap, sizeof(*names));
		}
		size_t len = strlen(e->d_name);
		char *entry = gi_malloc(len + 2);
		entry[0] = (char)e->d_type;
		memcpy(entry + 1, e->d_name, len + 1);
		names[count++] = entry + 1;
	}
	closedir(d);
	if (count)
		qsort(names, count, sizeof(*names), name_cmp);
	*names_out = names;
	*count_out = count;
	return 0;
}

void gi_fs_list_free(char **names, size_t count)
{
	for (size_t i = 0; i < count; i++)
		gi_free(names[i] - 1);
	gi_free(names);
}

static int walk(const char *dir, const char *const *skip, gi_fs_walk_fn fn, void *ctx, int depth)
{
	if (depth > 64)
		return 0; /* deeper trees are not source trees */
	char **names = NULL;
	size_t count = 0;
	int rc = gi_fs_list_dir(dir, &names, &count);
	if (rc)
		return depth == 0 ? rc : 0;
	struct gi_buf path;
	gi_buf_init(&path, 0);
	for (size_t i = 0; i < count && rc == 0; i++) {
		gi_buf_reset(&path);
		gi_buf_printf(&path, "%s/%s", dir, names[i]);
		/* The directory entry's type when the file system gives it (a
		 * symbolic link is neither a directory nor a file, as lstat says);
		 * lstat otherwise. */
		unsigned char type = (unsigned char)names[i][-1];
		mode_t mode = type == DT_DIR   ? S_IFDIR
		              : type == DT_REG ? S_IFREG
		              : type == DT_LNK ? S_IFLNK
		                               : 0;
		struct stat st;
		if (type != DT_UNKNOWN && mode == 0)
			continue;
		if (mode == 0) {
			if (lstat(path.data, &st) != 0)
				continue;
			mode = st.st_mode;
		}
		if (S_ISDIR(mode)) {
			int skipped = 0;
			for (const char *const *s = skip; s && *s; s++)
				skipped |= strcmp(names[i], *s) == 0;
			if (!skipped)
				rc = walk(path.data, skip, fn, ctx, depth + 1);
		} else if (S_ISREG(mode)) {
			rc = fn(path.data, ctx);
		}
	}
	gi_fs_list_free(names, count);
	gi_buf_destroy(&path);
	return rc;
}

int gi_fs_walk(const char *root, const char *const *skip, gi_fs_walk_fn fn, void *ctx)
{
	return walk(root, skip, fn, ctx, 0);
}

static int remove_entry(const char *path, int depth)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : GI_EIO;
	if (!S_ISDIR(st.st_mode))
		return unlink(path) == 0 ? 0 : GI_EIO;
	if (depth > 128)
		return GI_EIO;
	char **names = NULL;
	size_t count = 0;
	int rc = gi_fs_list_dir(path, &names, &count);
	struct gi_buf child;
	gi_buf_init(&child, 0);
	for (size_t i = 0; i < count; i++) {
		gi_buf_reset(&child);
		gi_buf_printf(&child, "%s/%s", path, names[i]);
		if (!rc)
			rc = remove_entry(child.data, depth + 1);
		gi_free(names[i] - 1);
	}
	gi_free(names);
	gi_buf_destroy(&child);
	if (!rc && rmdir(path) != 0)
		rc = GI_EIO;
	return rc;
}

int gi_fs_remove_tree(const char *path)
{
	return remove_entry(path, 0);
}

char *gi_fs_data_dir(const char *leaf)
{
	struct gi_buf b;
	const char *xdg = getenv("XDG_DATA_HOME");
	const char *home = getenv("HOME");
	if (!(xdg && xdg[0] == '/') && !(home && home[0]))
		return NULL;
	gi_buf_init(&b, 0);
	if (xdg && xdg[0] == '/')
		gi_buf_printf(&b, "%s/giulia", xdg);
	else
		gi_buf_printf(&b, "%s/.local/share/giulia", home);
	if (leaf)
		gi_buf_printf(&b, "/%s", leaf);
	return gi_buf_take(&b);
}
