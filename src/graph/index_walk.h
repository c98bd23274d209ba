/*
 * index_walk.h - the index's walk of a project's sources (kg_index_project),
 * remembering each directory's listing from one run to the next.
 *
 * The walk goes depth-first in name order, not following symbolic links,
 * skipping directories named in `skip`, as gi_fs_walk does. What it read is
 * kept as text, the record (meta "walk" in the index database): for each
 * directory, its inode, its change time (ctime) and the entries the walk kept
 * (subdirectories, and the files the caller took as sources). The next walk
 * stats each directory and, when its inode and ctime are the recorded ones,
 * takes its entries from the record instead of reading it again: adding,
 * removing or renaming an entry changes a directory's ctime, and so does
 * setting its times by hand. A directory whose ctime is less than
 * KG_WALK_SETTLE_NS before the walk started is recorded as unsettled and read
 * again by the next walk (a change in the same tick of the file system's
 * clock would leave its ctime as it was). Files themselves are the caller's
 * to stat every time: an edit in place changes no directory.
 *
 * A record carries the caller's `salt` (what decides which files are kept:
 * the ignore patterns, the readers' version); one made with another salt,
 * or damaged, is not used.
 *
 * Not thread-safe (nothing is shared between calls).
 */
#ifndef GIULIA_GRAPH_INDEX_WALK_H
#define GIULIA_GRAPH_INDEX_WALK_H

#include <stdbool.h>
#include <stdint.h>

#define KG_WALK_SETTLE_NS (2LL * 1000000000LL)

/* Called for each regular file: `path` absolute, `rel` relative to the
 * root. For a directory read from disk, for every file in it; returns true
 * when the file is a source, which the record keeps. For a directory taken
 * from the record, for the kept ones only (its answer is then not asked). */
typedef bool (*kg_walk_fn)(const char *path, const char *rel, void *ctx);

/* Walks `root` (an absolute directory path, no trailing '/') using `old`
 * (the previous record, or NULL). On success *record is the new record
 * (caller frees with gi_free) and *changed tells whether it differs from
 * `old`. Fails, with *record NULL, when `root` cannot be listed (GI_ENOENT,
 * GI_EDENIED, GI_EIO); a subdirectory that cannot be listed is passed over. */
int kg_walk_sources(const char *root, const char *const *skip, uint64_t salt, const char *old,
                    kg_walk_fn fn, void *ctx, char **record, bool *changed);

#endif
