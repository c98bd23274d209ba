/*
 * fuse.h - fused profiles: an observation's snapshots joined with the
 * knowledge graph, with ranked rules, and its reports.
 *
 * A profile is a JSON object (shape in docs/PROFILE.md); the worker stores it
 * and serves it; `giulia profile` renders it. Rules and thresholds are in
 * docs/RULES.md. Pure functions of their inputs: thread-safe as long as the
 * inputs are not shared between threads.
 */
#ifndef GIULIA_FUSE_FUSE_H
#define GIULIA_FUSE_FUSE_H

#include <jansson.h>

#include "base/buf.h"

struct kg_db;

struct fuse_config {
	const char *const *read_names; /* NULL: the defaults of docs/RULES.md */
	const char *const *write_names;
	const char *const *pipeline_names; /* NULL: prepare_opts, default_options, prepare_query */
};

/* Builds the profile of one observation. `finalize` is the object of
 * docs/SNAPSHOT.md; `snapshots` a JSON array in seq order; `graph` may be
 * NULL (no project: graph fields are null). *profile_out: caller decrefs. */
int fuse_profile_build(json_t *finalize, json_t *snapshots, struct kg_db *graph,
                       const struct fuse_config *cfg, json_t **profile_out);

/* Renders a profile for the terminal, as a self-contained HTML page. */
int fuse_report_text(json_t *profile, struct gi_buf *out);
int fuse_report_html(json_t *profile, struct gi_buf *out);

/* What changed between two profiles: metric deltas, hot modules that entered
 * or left, recommendations resolved or new. */
int fuse_compare(json_t *a, json_t *b, json_t **out);
int fuse_compare_text(json_t *comparison, struct gi_buf *out);

#endif
