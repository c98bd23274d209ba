/*
 * ignore.h - the subset of a project's root .gitignore that the indexer
 * honours: blank lines and comments are skipped; `!` negations are not
 * supported (such lines are ignored); a pattern with a trailing `/` matches
 * directories only; a pattern containing another `/` is anchored at the root
 * and matched against the whole relative path; any other pattern is matched
 * against each path component (fnmatch(3) globs: `*`, `?`, `[...]`).
 *
 * Not thread-safe to build; a loaded list may be read from several threads.
 */
#ifndef GIULIA_GRAPH_IGNORE_H
#define GIULIA_GRAPH_IGNORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/vec.h"

#define KG_IGNORE_MAX_BYTES (256u * 1024) /* a bigger .gitignore is not read */

struct kg_ignore {
	struct gi_vec patterns; /* struct kg_ignore_pattern */
	uint64_t text_hash;     /* of the text parsed (gi_hash64): what the patterns are */
};

/* Parses .gitignore text; the patterns are copied. */
void kg_ignore_parse(struct kg_ignore *ig, const char *text, size_t len);
/* Loads ROOT/.gitignore if there is one (none: an empty list). */
void kg_ignore_load(struct kg_ignore *ig, const char *root);
/* True when the file at `relpath` (relative, '/'-separated) is ignored. */
bool kg_ignore_match(const struct kg_ignore *ig, const char *relpath);
void kg_ignore_destroy(struct kg_ignore *ig);

#endif
