/*
 * obs_store.h - the worker's observation store: the projects it has indexed,
 * observations, their snapshots and the fused profiles built from them.
 * One interface, two backends (docs/SCHEMA.md, "The observation store"):
 *
 *  - SQLite (the default): DATA/worker.db under the worker's data directory,
 *    WAL mode with synchronous=FULL, versioned with PRAGMA user_version.
 *  - PostgreSQL (a location "postgres://..." or "postgresql://..."), through
 *    libpq: one database that several workers share, versioned by the
 *    schema_version table, migrated under an advisory lock.
 *
 * Both keep the same rows with the same meaning; JSON documents are stored
 * as text, unchanged.
 *
 * Durability: once a write function returns 0 its transaction is committed
 * (on PostgreSQL: the server answered COMMIT), and the row survives a crash
 * or restart of the worker and of the database; that is what lets the worker
 * acknowledge a snapshot. A write that fails has changed nothing.
 *
 * Transactions: each write function is one transaction. snapshot_add,
 * finalize and profile_add of one session are serialised against each other
 * (SQLite: the database write lock; PostgreSQL: a per-session advisory
 * lock), so two workers ingesting into one database never interleave inside
 * one session. snapshots_each reads its count and rows in one snapshot of
 * the database.
 *
 * Idempotence: snapshot_add is idempotent per (session_id, seq), enforced
 * by the primary key (a UNIQUE constraint) of the snapshots table: a retry,
 * or the same snapshot sent through another worker, is stored once.
 * finalize is an upsert (repeating it leaves the same row); project_put
 * too. profile_add adds a profile each call on SQLite; on PostgreSQL, where
 * several workers may finalize one session, an observation that already has
 * a profile keeps it and *id_out receives that profile's id.
 * interrupt_running is idempotent.
 *
 * Owners: several workers may share one database (PostgreSQL). Each
 * connection may name the worker instance it writes for
 * (obs_store_owner_set); snapshot_add records it as the observation's
 * owner, so an observation belongs to the worker that stored its latest
 * snapshot (a monitor that fails over to another worker moves it), and
 * interrupt_running marks only the observations of its connection's owner,
 * plus those that have none (stored before schema v3 / PostgreSQL v2).
 * Without an owner a connection leaves the owner as it is and interrupts
 * every running observation, as a store used by one worker alone.
 *
 * Errors: GI_EDB (a statement failed), GI_EDBVERSION (a schema newer than
 * this build, or a database that is not ours), GI_ECORRUPT (SQLite: not a
 * database), GI_EBUSY (SQLite: locked past the busy timeout), GI_ECONNECT
 * (PostgreSQL: the server is down or unreachable, after one reconnection
 * attempt), GI_EDENIED (PostgreSQL: authentication failed). Passwords are
 * never logged: messages name the location as obs_store_location_redact
 * prints it.
 *
 * Thread-safety: one `struct obs_store` (one connection) per thread at a
 * time; any number of them may be open on the same database.
 */
#ifndef GIULIA_STORE_OBS_STORE_H
#define GIULIA_STORE_OBS_STORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define OBS_STORE_SCHEMA_VERSION 3
#define OBS_STORE_FILE           "worker.db"
#define OBS_STORE_OWNER_MAX      127

struct obs_store;

/* Whether `location` names a PostgreSQL database (postgres:// or
 * postgresql:// URI). NULL or "" is the SQLite default. */
bool obs_store_location_is_postgres(const char *location);
/* Writes `location` with any password replaced by "***" into buf (size n,
 * always terminated): what logs and messages may show. */
void obs_store_location_redact(const char *location, char *buf, size_t n);
/* Opens the store at `location` (borrowed): NULL or "" opens SQLite under
 * data_dir (obs_store_open); a postgres:// URI connects to that database
 * (creating or migrating its tables); anything else is GI_EINVAL. A failed
 * connection logs why (server down, authentication, schema version), with
 * the password redacted. *out: close with obs_store_close. */
int obs_store_open_location(const char *data_dir, const char *location, struct obs_store **out);
/* The backend's name: "sqlite" or "postgres" (static). */
const char *obs_store_backend(const struct obs_store *st);

/* Opens (creating the directory, file and schema as needed) DATA_DIR/worker.db.
 * *out: close with obs_store_close. GI_EIO when the directory cannot be made,
 * GI_EDB / GI_EDBVERSION / GI_ECORRUPT for the database. */
int obs_store_open(const char *data_dir, struct obs_store **out);
/* Closes the connection; NULL does nothing. */
void obs_store_close(struct obs_store *st);
/* Names the worker instance this connection writes for (copied, cut at
 * OBS_STORE_OWNER_MAX bytes; NULL or "" for none): see "Owners" above. */
void obs_store_owner_set(struct obs_store *st, const char *owner);

/* Stores one snapshot (docs/SNAPSHOT.md; borrowed) of session `session_id`,
 * node `node`, number `seq`, creating the observation on its first snapshot
 * (status "running"). A snapshot already stored under (session_id, seq) is
 * left as it was and *duplicate set: retries are harmless. An observation
 * that was interrupted by a worker shutdown is running again. A finished
 * observation (finalised, or with a profile) is immutable: GI_EEXIST, and
 * nothing changes. PostgreSQL also answers GI_EEXIST, storing nothing, when
 * the observation exists with another node (the worker checks the node
 * first; between workers only the store can check it atomically). */
int obs_store_snapshot_add(struct obs_store *st, const char *session_id, const char *node,
                           long long seq, json_t *snapshot, bool *duplicate);

/* Records the end of an observation from the finalize object of
 * docs/SNAPSHOT.md (borrowed; fields already validated by the caller). The
 * observation is created when no snapshot arrived first. */
int obs_store_finalize(struct obs_store *st, json_t *finalize);

/* The snapshots of a session in seq order (caller decrefs); empty array when
 * there are none. */
int obs_store_snapshots(struct obs_store *st, const char *session_id, json_t **out);
/* The same one row at a time, so that a long session is never in memory at
 * once: calls fn(ctx, snapshot) for each snapshot in seq order (rows that do
 * not parse are skipped, as above). The snapshot is borrowed and freed when
 * fn returns. A non-zero return of fn stops the walk and is returned.
 * `count` (may be NULL) receives the number of rows before the first call
 * of fn; count and rows are read in one transaction. */
int obs_store_snapshots_each(struct obs_store *st, const char *session_id, long *count,
                             int (*fn)(void *ctx, json_t *snapshot), void *ctx);

/* The gaps in what arrived of a session, in seq order (caller decrefs
 * *gaps_out): [{after_seq, before_seq, from_ms, to_ms, missing, cause}] and
 * their total in *missing_out. A gap is a hole in the numbers (snapshots
 * taken and lost: dropped by a full spool, lost with a killed monitor; cause
 * "seq"), or, where the numbers run on, a pause of more than two intervals
 * (no snapshot was taken: the observer was down or the node frozen; cause
 * "time", missing = the intervals skipped). `next_seq` (the seq the next
 * snapshot would have had, from the finalize; <= 0: unknown) reveals a hole
 * at the end, `interval_ms` <= 0 disables pauses. The hole before the
 * first snapshot counts when it does not start at 0 (after_seq -1). */
int obs_store_gaps(struct obs_store *st, const char *session_id, long long interval_ms,
                   long long next_seq, json_t **gaps_out, long long *missing_out);

/* The observation `session_id` as an object {session_id, node, status,
 * reason, started_ms, stopped_ms, interval_ms, trace_modules, project,
 * snapshots, last_seq, profile_id, next_seq (from the finalize, or null)};
 * GI_ENOTFOUND when unknown. */
int obs_store_observation_get(struct obs_store *st, const char *session_id, json_t **out);
/* The newest `limit` observations, newest first (caller decrefs). */
int obs_store_observations_list(struct obs_store *st, int limit, json_t **out);
/* Marks the running observations of the connection's owner (every one
 * without an owner; see "Owners" above) interrupted with `reason`; *count
 * (may be NULL) receives how many. */
int obs_store_interrupt_running(struct obs_store *st, const char *reason, int *count);

/* The running observations (and those a worker shutdown interrupted, which
 * a snapshot would resume) as [{session_id, node, interval_ms, updated_ms
 * (wall time of the last stored snapshot), last_timestamp_ms}] (caller
 * decrefs), for the worker's liveness deadline. */
int obs_store_running_list(struct obs_store *st, json_t **out);

/* Stores a profile (borrowed) and links it to its observation; *id_out gets its id. */
int obs_store_profile_add(struct obs_store *st, const char *session_id, const char *node,
                          const char *project, json_t *profile, long long *id_out);
/* The profile `id` (0: the latest) as {id, session_id, node, project,
 * created_ms, profile}; GI_ENOTFOUND when there is none. */
int obs_store_profile_get(struct obs_store *st, long long id, json_t **out);
/* The newest `limit` profiles without their bodies, newest first. */
int obs_store_profiles_list(struct obs_store *st, int limit, json_t **out);

/* Remembers an indexed project (canonical path) with its index summary (borrowed, may be NULL). */
int obs_store_project_put(struct obs_store *st, const char *path, json_t *summary);
/* [{path, indexed_ms, summary}] newest first (caller decrefs). */
int obs_store_projects_list(struct obs_store *st, json_t **out);

#endif
