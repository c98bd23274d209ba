/*
 * latest.h - the latest stored profile of a project, for the queries that
 * show the live weight of code next to its static risk (preflight,
 * briefing: docs/ASSIST.md). Thread-safety: as the store passed in.
 */
#ifndef GIULIA_PROFILE_LATEST_H
#define GIULIA_PROFILE_LATEST_H

#include <jansson.h>

#include "store/obs_store.h"

#define PROFILE_LATEST_SCAN 200 /* newest profiles looked at for the project */

/* The newest profile among the PROFILE_LATEST_SCAN newest whose project is
 * `root` (canonical path, borrowed): 0 with *out the row of
 * obs_store_profile_get (caller decrefs), or 0 with *out NULL when there is
 * none; a store error otherwise. */
int profile_latest_for_project(struct obs_store *st, const char *root, json_t **out);

/* The same from the SQLite store under `data_dir` (NULL: the default data
 * directory, gi_fs_data_dir), opened only when its file exists, so that a
 * query never creates a store: *out NULL when there is none. */
int profile_latest_in_data_dir(const char *data_dir, const char *root, json_t **out);

#endif
