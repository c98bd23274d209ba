/*
 * fs.h - file system helpers with bounded reads.
 * Thread-safe (no shared state).
 */
#ifndef GIULIA_BASE_FS_H
#define GIULIA_BASE_FS_H

#include <stddef.h>
#include <stdint.h>

/* Reads the whole file at `path` into a NUL-terminated buffer that the caller
 * frees with gi_free. Fails with GI_ETOOBIG past `limit` bytes, GI_ENOENT when
 * absent, GI_EIO otherwise. `out_len` may be NULL. */
int gi_fs_read_file(const char *path, size_t limit, char **out, size_t *out_len);
/* Writes all `len` bytes to `fd` (retrying short writes and EINTR);
 * GI_EIO on failure. */
int gi_fs_write_all(int fd, const void *data, size_t len);
/* Writes `len` bytes to `path` atomically (temporary file + rename). */
int gi_fs_write_file(const char *path, const void *data, size_t len);
/* Creates `path` and its parents with mode 0700 where missing. */
int gi_fs_mkdir_p(const char *path);
/* Canonical absolute path of an existing directory (caller frees), or GI_ENOENT. */
int gi_fs_realdir(const char *path, char **out);
/* Removes `path` and everything under it; a missing path is not an error. */
int gi_fs_remove_tree(const char *path);

/* Giulia's data directory, $XDG_DATA_HOME/giulia (when absolute) or
 * ~/.local/share/giulia, with "/leaf" appended when `leaf` is not NULL: the
 * one default that the worker (its database, the object code cache) and the
 * monitor (its spool) share. Caller frees with gi_free; NULL when neither
 * XDG_DATA_HOME nor HOME is set. */
char *gi_fs_data_dir(const char *leaf);

/* Lists the entries of `dir` (without . and ..) sorted by name into an
 * array the caller frees with gi_fs_list_free. Each name is preceded, in the
 * same allocation, by one byte: its d_type (names[i][-1]; DT_UNKNOWN when
 * the file system does not say), so that a walk stats only what it must.
 * Fails with the open's error (GI_ENOENT, GI_EDENIED, GI_EIO). */
int gi_fs_list_dir(const char *dir, char ***names, size_t *count);
void gi_fs_list_free(char **names, size_t count);

/* Called for every regular file found by gi_fs_walk; return non-zero to stop. */
typedef int (*gi_fs_walk_fn)(const char *path, void *ctx);
/* Walks `root` depth-first in name order, not following symlinks, skipping
 * directories whose name is in the NULL-terminated `skip` list. */
int gi_fs_walk(const char *root, const char *const *skip, gi_fs_walk_fn fn, void *ctx);

#endif
