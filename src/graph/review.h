/*
 * review.h - the review of a change (the query "review", docs/REVIEW.md):
 * what `git diff BASE` of the project changes, mapped onto the indexed
 * modules and functions by their line ranges, each with its blast radius,
 * change risk, the tests that reach it and, when a profile is given, its
 * live weight; ranked by a documented risk score.
 *
 * Three parts, each usable alone: kg_review_git_diff runs git (fixed argv,
 * no shell, a deadline, output capped), kg_diff_parse reads a unified diff
 * (hostile input: every size capped, anything unknown skipped) and
 * kg_review maps a parsed diff onto a finished graph. None keeps state;
 * each is safe to call from several threads on different arguments.
 */
#ifndef GIULIA_GRAPH_REVIEW_H
#define GIULIA_GRAPH_REVIEW_H

#include <jansson.h>
#include <stddef.h>

#include "graph/graph.h"
#include "graph/query.h"

#define KG_DIFF_BYTES_MAX           (64u << 20) /* bytes of diff read from git */
#define KG_DIFF_FILES_MAX           20000       /* files of a diff kept */
#define KG_DIFF_HUNKS_MAX           200000      /* hunks of a diff kept, all files together */
#define KG_DIFF_DEFS_MAX            1000        /* defmodule names kept per file and side */
#define KG_DIFF_PATH_MAX            4096        /* bytes of a path */
#define KG_REVIEW_REV_MAX           256         /* bytes of a revision argument */
#define KG_REVIEW_ITEMS             2000        /* changed functions and modules analysed */
#define KG_REVIEW_GIT_MS            20000       /* deadline of the git call */
#define KG_REVIEW_DEFAULT_THRESHOLD 60          /* risk score from which a change counts as risky */

/* Whether `rev` may be handed to git as a revision: 1..KG_REVIEW_REV_MAX
 * bytes, not starting with '-', printable ASCII without spaces. */
bool kg_review_rev_valid(const char *rev);

/* Runs `git diff BASE` in `root` (read-only: no external diff drivers, no
 * textconv, no pager, no colour, zero context lines, renames found, paths
 * relative to `root`) with a deadline of `timeout_ms`. On success *text
 * (caller frees with gi_free, NUL-terminated) and *len hold the diff. Git's
 * complaint, if it fails, goes to *error (caller frees; may be NULL).
 * GI_EINVAL: `base` is not a valid revision argument; GI_ENOENT: no git;
 * GI_TIMEOUT; GI_ETOOBIG: more than KG_DIFF_BYTES_MAX; GI_EIO: git failed
 * (not a repository, unknown revision: see *error). */
int kg_review_git_diff(const char *root, const char *base, int timeout_ms, char **text, size_t *len,
                       char **error);

/* Parses the unified diff `text` of `len` bytes (git's format, any bytes)
 * into *out (caller decrefs): an array of files {old_path, new_path (null
 * for /dev/null), status ("modified" | "added" | "deleted" | "renamed" |
 * "copied"), binary, added, removed (line counts), hunks [{old_start,
 * old_count, new_start, new_count, comment_only}], removed_modules,
 * added_modules (names after `defmodule` on removed and added lines),
 * removed_functions, added_functions (names after def, defp, defmacro,
 * defmacrop)}.
 * Never fails on content: lines it does not know are skipped; beyond the
 * caps files and hunks are dropped and "truncated" set on the last file.
 * Returns 0. */
int kg_diff_parse(const char *text, size_t len, json_t **out);

struct kg_review_options {
	const char *base;         /* echoed in the answer */
	int depth;                /* hops of callers / dependents followed */
	double threshold;         /* risk score from which an item is risky */
	const json_t *profile;    /* a stored profile (docs/PROFILE.md), or NULL; borrowed */
	const char *profile_note; /* why no profile is used, or NULL */
};

/* Maps the parsed diff `files` (kg_diff_parse's array, borrowed) onto the
 * finished graph `g` and fills `out` (docs/REVIEW.md). Returns 0. */
int kg_review(const struct kg_graph *g, const json_t *files, const struct kg_review_options *opt,
              json_t *out);

/* The query "review" (kg_query): args base (required), threshold (0..100,
 * default KG_REVIEW_DEFAULT_THRESHOLD), profile (a profile object, or a
 * stored row {"profile": {...}}), profile_note (why none is given);
 * p->depth (default 3). Runs git in `root`, parses and maps its diff. Bad
 * arguments give GI_EINVAL and git's failures GI_EIO with a message
 * (kg_query_fail). */
int kg_review_query(const struct kg_graph *g, const char *root, const struct kg_query_params *p,
                    json_t *out);

#endif
