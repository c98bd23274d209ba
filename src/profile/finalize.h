/*
 * finalize.h - finalising an observation: the step that turns an
 * observation's stored snapshots into a stored, fused profile. The worker's
 * POST /api/runtime/ingest/finalize is a thin route over profile_finalize;
 * the CLI, tests and benchmarks call it the same way, without HTTP.
 *
 * What profile_finalize does, in order (docs/API.md, "Finalize"):
 *  1. Reads the observation's snapshots once, one row at a time (a long
 *     observation is never in memory at once), collecting the modules seen
 *     working (attributed hot processes, traced calls, the finalize's
 *     trace_modules) and feeding the profile builder.
 *  2. Picks the project: the one the finalize names, else the registered
 *     project (obs_store_projects_list) whose index database defines most of
 *     the modules seen. Matching reads module names only
 *     (kg_db_defined_count), never a graph, and runs outside every lock.
 *  3. Takes the finalize lock, loads the chosen project's graph, and when
 *     observed modules are missing from it while the node's object code is
 *     cached (DATA/nodes/NODE/ebin/MODULE.beam, written by the worker's
 *     object code route), indexes DATA/nodes/NODE/index.db from the
 *     project's source (source wins) plus that object code and uses it.
 *  4. Records the end of the observation, builds the profile and stores it.
 * A retried finalize of an observation that already has a profile answers as
 * the first time did (duplicate true) and builds nothing.
 *
 * Nothing is written outside the data directory and the store.
 *
 * Thread-safety: profile_finalize may run on several threads at once, each
 * with its own store connection; the locks of struct profile_env serialise
 * what must be (one profile per observation, one SQLite writer).
 */
#ifndef GIULIA_PROFILE_FINALIZE_H
#define GIULIA_PROFILE_FINALIZE_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>

#define PROFILE_OBSERVED_MODULES_MAX 65536 /* distinct module names a finalize collects */

struct kg_db;
struct obs_store;

/* Where the finalizer gets connections to index databases: the worker lends
 * pooled ones, others use profile_graphs_direct. Called from the finalizing
 * thread only. */
struct profile_graphs {
	void *ctx;
	/* A connection to the existing index database at `db_path` in *db;
	 * *handle is what release gets back. Returns 0 or a GI_E* code. */
	int (*acquire)(void *ctx, const char *db_path, struct kg_db **db, void **handle);
	/* Gives back what acquire lent; a NULL handle does nothing. */
	void (*release)(void *ctx, void *handle);
	/* The database at `db_path` was just rewritten: connections opened
	 * before must not be reused. NULL: nothing to do. */
	void (*invalidate)(void *ctx, const char *db_path);
};

/* Opens a connection at each acquire and closes it at release. */
extern const struct profile_graphs profile_graphs_direct;

struct profile_env {
	const char *data_dir;                /* the worker's data directory (object code cache) */
	struct obs_store *store;             /* borrowed; used by this thread only */
	const struct profile_graphs *graphs; /* NULL: &profile_graphs_direct */
	/* NULL: none. Held from the check for an existing profile to storing the
	 * new one; whoever writes the object code cache holds it too, so that a
	 * finalize never reads half a batch. */
	pthread_mutex_t *finalize_lock;
	pthread_mutex_t *write_lock; /* NULL: none. Held around each write to the store */
};

/* Finalises the observation that `finalize` (borrowed) describes: the
 * finalize object of docs/API.md ({session_id, node, status, reason?,
 * project?, started_ms?, stopped_ms?, interval_ms?, trace_modules?,
 * object_code?}), its fields checked by the caller; a missing session_id,
 * node or status gives GI_EINVAL. On success *result (caller decrefs) is
 * {session_id, status, snapshots, project, profile_id (null when no profile
 * was stored), warnings: [text]}, or for a retry {session_id, status,
 * snapshots, profile_id, duplicate: true}. A profile that cannot be built or
 * stored is not a failure: the observation is recorded and the warnings say
 * why. On failure returns a GI_E* code and *step (static text) names what
 * failed, e.g. "reading the snapshots". */
int profile_finalize(const struct profile_env *env, json_t *finalize, json_t **result,
                     const char **step);

/* Picks the registered project whose index database defines most of the
 * modules in `seen` (a JSON object used as a set of display names;
 * borrowed), through `graphs` (NULL: direct). *path_out (caller frees with
 * gi_free) stays NULL when no project defines any of them. Projects whose
 * database is missing or unreadable are passed over. */
int profile_project_match(struct obs_store *st, const struct profile_graphs *graphs, json_t *seen,
                          char **path_out);

/* DATA/nodes/NODE, the directory of a node's object code cache. A name that
 * api_node_name_valid accepts is its own directory name ([A-Za-z0-9@._-],
 * never a leading '.'); any other byte is written %XX, so that two names
 * never share a directory (`a@b;rm` and `a@b_rm` used to). At most 256
 * characters of NODE. Caller frees with gi_free. */
char *profile_node_dir(const char *data_dir, const char *node);
/* Whether `name` (a module's atom text or a node name) can be one file name
 * in the cache: 1-255 bytes, no '/', '\\' or control character, no leading
 * '.'. */
bool profile_file_name_safe(const char *name);

#endif
