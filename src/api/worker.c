/*
 * worker.c - the worker daemon's state and its life (see worker.h); its HTTP
 * routes are worker_routes.c, the state both share worker_int.h.
 *
 * Database connections: SQLite connections may not be shared between
 * threads, so each request borrows one from a small pool (one pool for the
 * observation store, one for project index databases keyed by path) and
 * gives it back when done. A scan bumps the generation of its project so that
 * pooled connections opened before it are closed rather than reused.
 *
 * Finalize is the library's profile_finalize (profile/finalize.h), given the
 * pooled connections and two mutexes: finalize_lock (one profile per
 * observation; the object code route holds it too, so that a finalize never
 * reads half a batch) and write_lock (one SQLite writer in this process).
 *
 * Object code (docs/BEAM.md, "Object code for profiles"): the monitor sends
 * the object code of the modules an observation saw to
 * /api/runtime/ingest/object_code before its finalize; it is cached as
 * DATA/nodes/NODE/ebin/MODULE.beam (NODE and MODULE checked to be plain file
 * names; the layout is profile_node_dir's), where the finalizer finds it.
 * Nothing is written outside the data directory; the worker never sees a
 * cookie.
 */
#include "api/worker.h"
#include "api/worker_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <math.h>
#include <sys/stat.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include "api/base64.h"
#include "api/dash.h"
#include "api/http.h"
#include "api/metrics.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/log.h"
#include "base/map.h"
#include "base/str.h"
#include "fuse/fuse.h"
#include "graph/query.h"
#include "graph/query_registry.h"
#include "mcp/mcp.h"
#include "profile/finalize.h"
#include "profile/latest.h"
#include "source/facts.h"
#include "store/obs_store.h"

/* ---- /metrics ---- */

const double INGEST_BOUNDS[WORKER_INGEST_BUCKETS] = {0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                     0.025,  0.05,  0.1,    0.25,  1};

void worker_count(struct api_worker *w, int route, int status, int64_t us)
{
	int outcome = status < 400 ? 0 : status < 500 ? 1 : 2;
	__atomic_add_fetch(&w->ingest_outcomes[route][outcome], 1, __ATOMIC_RELAXED);
	if (route != COUNT_INGEST)
		return;
	double s = (double)us / 1e6;
	size_t b = 0;
	while (b < WORKER_INGEST_BUCKETS && s > INGEST_BOUNDS[b])
		b++;
	__atomic_add_fetch(&w->ingest_buckets[b], 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&w->ingest_us_sum, (unsigned long long)us, __ATOMIC_RELAXED);
}

/* ---- pools ---- */

int worker_store_acquire(struct api_worker *w, struct obs_store **out)
{
	pthread_mutex_lock(&w->lock);
	struct obs_store *st = w->store_idle_len > 0 ? w->store_idle[--w->store_idle_len] : NULL;
	pthread_mutex_unlock(&w->lock);
	if (st) {
		*out = st;
		return 0;
	}
	int rc = obs_store_open_location(w->data_dir, w->store_location, out);
	if (rc == 0)
		obs_store_owner_set(*out, w->instance);
	return rc;
}

/* HOST/PID/RANDOM: unique among the workers sharing a store, also across
 * restarts (a PID is reused) and containers (every host name the same). */
static void instance_name(char *out, size_t n)
{
	char host[64] = "host";
	unsigned char r[4] = {0};
	if (gethostname(host, sizeof(host)) != 0)
		gi_strlcpy(host, "host", sizeof(host));
	host[sizeof(host) - 1] = '\0';
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, r, sizeof(r)) != (ssize_t)sizeof(r)) {
		int64_t t = gi_clock_mono_us();
		memcpy(r, &t, sizeof(r));
	}
	if (fd >= 0)
		close(fd);
	snprintf(out, n, "%.64s/%ld/%02x%02x%02x%02x", host, (long)getpid(), r[0], r[1], r[2],
	         r[3]);
}

void worker_store_release(struct api_worker *w, struct obs_store *st)
{
	if (!st)
		return;
	pthread_mutex_lock(&w->lock);
	if (w->store_idle_len < POOL_IDLE_MAX) {
		w->store_idle[w->store_idle_len++] = st;
		st = NULL;
	}
	pthread_mutex_unlock(&w->lock);
	obs_store_close(st);
}

int worker_kg_acquire(struct api_worker *w, const char *db_path, struct kg_pooled *out)
{
	pthread_mutex_lock(&w->lock);
	unsigned gen = w->generation;
	for (int i = w->kg_idle_len - 1; i >= 0; i--) {
		if (strcmp(w->kg_idle[i].path, db_path) == 0 && w->kg_idle[i].generation == gen) {
			*out = w->kg_idle[i];
			w->kg_idle[i] = w->kg_idle[--w->kg_idle_len];
			pthread_mutex_unlock(&w->lock);
			return 0;
		}
	}
	pthread_mutex_unlock(&w->lock);
	struct kg_db *db;
	int rc = kg_db_open(db_path, false, &db);
	if (rc)
		return rc;
	kg_db_refresh_on_query(db, true); /* answers from the project's current source */
	out->path = gi_strdup(db_path);
	out->generation = gen;
	out->db = db;
	return 0;
}

static void kg_pooled_close(struct kg_pooled *p)
{
	kg_db_close(p->db);
	gi_free(p->path);
	p->db = NULL;
	p->path = NULL;
}

void worker_kg_release(struct api_worker *w, struct kg_pooled *p)
{
	if (!p->db)
		return;
	pthread_mutex_lock(&w->lock);
	bool kept = false;
	if (p->generation == w->generation && w->kg_idle_len < POOL_IDLE_MAX) {
		w->kg_idle[w->kg_idle_len++] = *p;
		kept = true;
	}
	pthread_mutex_unlock(&w->lock);
	if (!kept)
		kg_pooled_close(p);
	p->db = NULL;
	p->path = NULL;
}

/* Drops every pooled index connection (after a scan rewrote a database). */
void worker_kg_pool_invalidate(struct api_worker *w)
{
	struct kg_pooled old[POOL_IDLE_MAX];
	pthread_mutex_lock(&w->lock);
	int n = w->kg_idle_len;
	memcpy(old, w->kg_idle, sizeof(old[0]) * (size_t)n);
	w->kg_idle_len = 0;
	w->generation++;
	pthread_mutex_unlock(&w->lock);
	for (int i = 0; i < n; i++)
		kg_pooled_close(&old[i]);
}

/* The kg pool as the finalizer's graph provider (profile/finalize.h). */
static int pool_acquire(void *ctx, const char *db_path, struct kg_db **db, void **handle)
{
	struct kg_pooled *p = gi_calloc(1, sizeof(*p));
	int rc = worker_kg_acquire(ctx, db_path, p);
	if (rc) {
		gi_free(p);
		*db = NULL;
		*handle = NULL;
		return rc;
	}
	*db = p->db;
	*handle = p;
	return 0;
}

static void pool_release(void *ctx, void *handle)
{
	if (!handle)
		return;
	worker_kg_release(ctx, handle);
	gi_free(handle);
}

static void pool_invalidate(void *ctx, const char *db_path)
{
	(void)db_path;
	worker_kg_pool_invalidate(ctx);
}

/* ---- the object-code cache (DATA/nodes/NODE/ebin) ---- */

#define EBIN_CACHE_BYTES_DEFAULT  (256ull * 1024 * 1024)
#define EBIN_CACHE_AGE_MS_DEFAULT (30LL * 86400000LL)

struct cached_file {
	char *path;
	long long size;
	int64_t mtime_ms;
};

struct cache_walk {
	struct cached_file *files;
	size_t len, cap;
};

static int cache_collect(const char *path, void *ctx)
{
	struct cache_walk *c = ctx;
	size_t n = strlen(path);
	struct stat sb;
	/* Only the object code under some NODE/ebin/; never index.db. */
	if (n < 6 || strcmp(path + n - 5, ".beam") != 0 || !strstr(path, "/ebin/") ||
	    stat(path, &sb) != 0)
		return 0;
	if (c->len == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 64;
		c->files = gi_realloc(c->files, c->cap * sizeof(*c->files));
	}
	c->files[c->len].path = gi_strdup(path);
	c->files[c->len].size = (long long)sb.st_size;
	c->files[c->len].mtime_ms =
	    (int64_t)sb.st_mtim.tv_sec * 1000 + (int64_t)(sb.st_mtim.tv_nsec / 1000000);
	c->len++;
	return 0;
}

static int cmp_cached_oldest(const void *a, const void *b)
{
	int64_t x = ((const struct cached_file *)a)->mtime_ms;
	int64_t y = ((const struct cached_file *)b)->mtime_ms;
	return x < y ? -1 : x > y;
}

/* Keeps the cache within its bounds: files not received for longer than
 * the age go, then the oldest until the total fits. A file's time is when
 * it was last received (unchanged files are touched). Called with
 * finalize_lock held, so that no finalize reads a directory being pruned. */
void worker_ebin_cache_evict(struct api_worker *w)
{
	struct gi_buf root;
	gi_buf_init(&root, 0);
	gi_buf_printf(&root, "%s/nodes", w->data_dir);
	struct cache_walk c = {0};
	gi_fs_walk(gi_buf_str(&root), NULL, cache_collect, &c);
	if (c.len > 1)
		qsort(c.files, c.len, sizeof(*c.files), cmp_cached_oldest);
	long long total = 0;
	for (size_t i = 0; i < c.len; i++)
		total += c.files[i].size;
	int64_t now = gi_clock_wall_ms();
	size_t evicted = 0;
	for (size_t i = 0; i < c.len; i++) {
		bool old = now - c.files[i].mtime_ms > w->ebin_cache_age_ms;
		if ((old || total > (long long)w->ebin_cache_bytes) &&
		    unlink(c.files[i].path) == 0) {
			total -= c.files[i].size;
			evicted++;
		}
		gi_free(c.files[i].path);
	}
	gi_free(c.files);
	if (evicted > 0)
		gi_log_info("worker", "object-code cache: %zu file(s) evicted, %lld bytes kept",
		            evicted, total);
	gi_buf_destroy(&root);
}

/* Finalises through profile_finalize with the worker's pools and locks. */
int worker_finalize(struct api_worker *w, struct obs_store *st, json_t *finalize, json_t **resp,
                    const char **step)
{
	struct profile_graphs graphs = {w, pool_acquire, pool_release, pool_invalidate};
	struct profile_env env = {
	    .data_dir = w->data_dir,
	    .store = st,
	    .graphs = &graphs,
	    .finalize_lock = &w->finalize_lock,
	    .write_lock = &w->write_lock,
	};
	return profile_finalize(&env, finalize, resp, step);
}

/* ---- liveness ----
 *
 * An observation ends as interrupted here only when its monitor is gone:
 * nothing from it, neither a snapshot (stored or not: one that arrived
 * while the store failed counts) nor a word on /api/runtime/ingest/alive,
 * which a monitor sends every few seconds for every session it runs,
 * connected to its node or reconnecting within the lease. The deadline is
 * N intervals (--liveness, 30) and never less than the session's lease
 * plus LIVENESS_MARGIN_MS, so that a cut the monitor rides out within the
 * lease never ends it. What the monitors said is kept in memory only (a
 * restarted worker counts from its own start); a store that fails says
 * nothing about the monitor, and its failures never end anything. */

#define LIVENESS_INTERVALS_DEFAULT 30
#define LIVENESS_TICK_MS           1000
#define LIVENESS_INTERVAL_FALLBACK 5000  /* an observation whose interval is unknown */
#define LIVENESS_LEASE_FALLBACK    10000 /* the monitor's default lease */
#define LIVENESS_MARGIN_MS         10000
#define HEARD_MAX                  4096

/* Notes that the monitor of `sid` spoke now; `next_seq` (-1: unknown) is
 * the number its next snapshot will have, lease and interval 0 when not
 * said. Returns true when this worker has ended that observation. */
bool worker_heard_note(struct api_worker *w, const char *sid, long long next_seq, long long lease,
                       long long interval)
{
	pthread_mutex_lock(&w->heard_lock);
	json_t *e = json_object_get(w->heard, sid);
	if (!e && json_object_size(w->heard) < HEARD_MAX) {
		e = json_object();
		json_object_set_new(w->heard, sid, e);
	}
	bool ended = false;
	if (e) {
		json_object_set_new(e, "at_ms", json_integer(gi_clock_wall_ms()));
		if (next_seq > json_integer_value(json_object_get(e, "next_seq")))
			json_object_set_new(e, "next_seq", json_integer(next_seq));
		if (lease > 0)
			json_object_set_new(e, "lease_ms", json_integer(lease));
		if (interval > 0)
			json_object_set_new(e, "interval_ms", json_integer(interval));
		ended = json_is_true(json_object_get(e, "ended"));
	}
	pthread_mutex_unlock(&w->heard_lock);
	return ended;
}

/* A copy of what was heard of `sid` (caller decrefs), or NULL. */
static json_t *heard_get(struct api_worker *w, const char *sid)
{
	pthread_mutex_lock(&w->heard_lock);
	json_t *e = json_deep_copy(json_object_get(w->heard, sid));
	pthread_mutex_unlock(&w->heard_lock);
	return e;
}

/* This worker ended `sid` by its liveness deadline: a monitor that speaks
 * of it again is told so (its alive answer's `ended`). */
static void heard_ended(struct api_worker *w, const char *sid)
{
	pthread_mutex_lock(&w->heard_lock);
	json_t *e = json_object_get(w->heard, sid);
	if (e)
		json_object_set_new(e, "ended", json_true());
	pthread_mutex_unlock(&w->heard_lock);
}

/* Forgets `sid` (its observation was finalized by its monitor). */
void worker_heard_forget(struct api_worker *w, const char *sid)
{
	pthread_mutex_lock(&w->heard_lock);
	json_object_del(w->heard, sid);
	pthread_mutex_unlock(&w->heard_lock);
}

/* The wall time after which a running observation counts as abandoned by
 * its monitor: its last word (a stored snapshot at `updated_ms`, or what
 * was heard), counted from the worker's own start at the earliest (a
 * worker that was down has not heard from anybody, which says nothing
 * about the monitor), plus max(N intervals, lease + margin). */
static int64_t liveness_deadline(struct api_worker *w, json_t *row)
{
	const char *sid = json_string_value(json_object_get(row, "session_id"));
	json_t *heard = sid ? heard_get(w, sid) : NULL;
	long long interval = json_integer_value(json_object_get(row, "interval_ms"));
	if (interval <= 0)
		interval = json_integer_value(json_object_get(heard, "interval_ms"));
	if (interval <= 0)
		interval = LIVENESS_INTERVAL_FALLBACK;
	if (interval < 250)
		interval = 250;
	long long lease = json_integer_value(json_object_get(heard, "lease_ms"));
	if (lease <= 0)
		lease = LIVENESS_LEASE_FALLBACK;
	int64_t since = json_integer_value(json_object_get(row, "updated_ms"));
	int64_t heard_at = json_integer_value(json_object_get(heard, "at_ms"));
	json_decref(heard);
	if (heard_at > since)
		since = heard_at;
	if (since < w->started_wall_ms)
		since = w->started_wall_ms;
	int64_t span = (int64_t)w->liveness_intervals * interval;
	if (span < lease + LIVENESS_MARGIN_MS)
		span = lease + LIVENESS_MARGIN_MS;
	return since + span;
}

/* Ends one abandoned observation through profile_finalize, as if its
 * monitor had sent {status: interrupted}: the profile is built from what
 * arrived, and the snapshots its monitor said it took (next_seq) but that
 * never arrived are counted missing. Re-checked under finalize_lock, since
 * a snapshot may have come; the finalize itself takes that lock again (a
 * snapshot arriving in between is stored and profiled, or refused once the
 * observation has ended). */
static void liveness_end(struct api_worker *w, struct obs_store *st, json_t *row)
{
	const char *sid = json_string_value(json_object_get(row, "session_id"));
	pthread_mutex_lock(&w->finalize_lock);
	json_t *again = NULL, *match = NULL, *body = NULL;
	size_t i;
	json_t *r;
	char reason[300];
	if (obs_store_running_list(st, &again) == 0)
		json_array_foreach(again, i, r)
		{
			const char *s2 = json_string_value(json_object_get(r, "session_id"));
			if (s2 && strcmp(s2, sid) == 0)
				match = r;
		}
	int64_t now = gi_clock_wall_ms();
	if (match && now >= liveness_deadline(w, match)) {
		long long interval = json_integer_value(json_object_get(match, "interval_ms"));
		json_t *heard = heard_get(w, sid);
		int64_t last = json_integer_value(json_object_get(heard, "at_ms"));
		int64_t stored = json_integer_value(json_object_get(match, "updated_ms"));
		if (stored > last)
			last = stored;
		if (last < w->started_wall_ms)
			last = w->started_wall_ms;
		snprintf(reason, sizeof(reason),
		         "the monitor stopped sending: no snapshot and no word from it for %lld s "
		         "(it died, was paused or lost its way to this worker)",
		         (long long)((now - last) / 1000));
		body = json_pack("{s:s, s:O, s:s, s:s}", "session_id", sid, "node",
		                 json_object_get(match, "node"), "status", "interrupted", "reason",
		                 reason);
		json_t *last_ts = json_object_get(match, "last_timestamp_ms");
		if (json_is_integer(last_ts))
			json_object_set(body, "stopped_ms", last_ts);
		if (interval > 0)
			json_object_set_new(body, "interval_ms", json_integer(interval));
		/* The snapshots it said it had taken, stored or not. */
		json_t *next = json_object_get(heard, "next_seq");
		if (json_is_integer(next) && json_integer_value(next) > 0)
			json_object_set(body, "next_seq", next);
		json_decref(heard);
	}
	pthread_mutex_unlock(&w->finalize_lock);
	if (body) {
		json_t *resp = NULL;
		const char *step = NULL;
		int rc = worker_finalize(w, st, body, &resp, &step);
		json_t *pid = json_object_get(resp, "profile_id");
		if (rc) {
			gi_log_warn("worker", "observation %s: %s; ending it failed (%s: %s)", sid,
			            reason, step, gi_strerror(rc));
		} else {
			heard_ended(w, sid);
			gi_log_warn("worker",
			            "observation %s of %s: %s; ended as interrupted (profile %lld)",
			            sid, json_string_value(json_object_get(body, "node")), reason,
			            json_is_integer(pid) ? (long long)json_integer_value(pid)
			                                 : 0LL);
		}
		json_decref(resp);
		json_decref(body);
	}
	json_decref(again);
}

static void liveness_check(struct api_worker *w)
{
	struct obs_store *st;
	json_t *rows = NULL;
	if (worker_store_acquire(w, &st) != 0)
		return;
	if (obs_store_running_list(st, &rows) == 0) {
		int64_t now = gi_clock_wall_ms();
		size_t i;
		json_t *row;
		json_array_foreach(rows, i, row)
		{
			if (now >= liveness_deadline(w, row))
				liveness_end(w, st, row);
		}
	}
	json_decref(rows);
	worker_store_release(w, st);
}

/* Once a second: ends the running observations that nobody feeds any more. */
static void *liveness_run(void *arg)
{
	struct api_worker *w = arg;
	pthread_mutex_lock(&w->lock);
	while (!w->stopping) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += LIVENESS_TICK_MS / 1000;
		pthread_cond_timedwait(&w->liveness_wake, &w->lock, &ts);
		if (w->stopping)
			break;
		pthread_mutex_unlock(&w->lock);
		liveness_check(w);
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

static int worker_mcp_start(struct api_worker *w, const struct api_worker_config *cfg,
                            const char *listen)
{
	char addr[64], url[128];
	int port;
	if (api_listen_parse(listen, addr, &port) != 0)
		return GI_EINVAL;
	snprintf(url, sizeof(url), "http://%s:%d",
	         strcmp(addr, "0.0.0.0") == 0 ? "127.0.0.1" : addr, api_server_port(w->server));
	const char *monitor = cfg->monitor_url;
	if (!monitor || !*monitor)
		monitor = getenv("GIULIA_MONITOR_URL");
	struct mcp_config mc = {
	    .static_in_process = false,
	    .query = worker_mcp_query,
	    .query_ctx = w,
	    .worker_url = url,
	    .monitor_url = monitor && *monitor ? monitor : "http://127.0.0.1:4001",
	    .token = cfg->token,
	    .allow_runtime = cfg->mcp_allow_runtime,
	    .allow_nodes = cfg->mcp_allow_nodes,
	    .transport = "http",
	};
	struct mcp_server *mcp = NULL;
	int rc = mcp_server_new(&mc, &mcp);
	if (rc == 0)
		__atomic_store_n(&w->mcp, mcp, __ATOMIC_RELEASE);
	return rc;
}

/* Whether DATA/worker.db, which exists, can be a SQLite database: at least
 * its 100-byte header, starting with the SQLite magic. */
static bool store_file_plausible(const char *path, long long *size)
{
	struct stat sb;
	*size = stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
	if (*size < 100)
		return false;
	char head[16] = {0};
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(head, 1, sizeof(head), f) : 0;
	if (f)
		fclose(f);
	return n == sizeof(head) && GI_MEM_IS(head, 16, "SQLite format 3\0");
}

/* Moves DATA/worker.db (and its -wal and -shm) aside as worker.db.broken-MS. */
static int store_move_aside(const char *data_dir)
{
	static const char *const suffixes[] = {"", "-wal", "-shm"};
	long long now = (long long)gi_clock_wall_ms();
	int rc = 0;
	for (size_t i = 0; i < 3; i++) {
		char from[4096], to[4096];
		snprintf(from, sizeof(from), "%s/%s%s", data_dir, OBS_STORE_FILE, suffixes[i]);
		snprintf(to, sizeof(to), "%s/%s%s.broken-%lld", data_dir, OBS_STORE_FILE,
		         suffixes[i], now);
		if (access(from, F_OK) == 0 && rename(from, to) != 0)
			rc = GI_EIO;
		else if (i == 0)
			gi_log_warn("worker", "--new-store: the old store is kept as %s", to);
	}
	return rc;
}

/* Opens the store at start-up: never replaces an unusable file silently. A
 * PostgreSQL store has no file here: its open says what is wrong. */
static int store_open_at_start(const char *data_dir, const char *location, bool new_store,
                               struct obs_store **out)
{
	if (location && *location)
		return obs_store_open_location(data_dir, location, out);
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", data_dir, OBS_STORE_FILE);
	long long size = -1;
	bool exists = access(path, F_OK) == 0;
	if (exists && !store_file_plausible(path, &size)) {
		if (!new_store) {
			gi_log_error("worker",
			             "the store %s is %s: refusing to start, which would replace "
			             "it with an empty store and lose the history it should hold. "
			             "Restore it from a backup, or start with --new-store to move "
			             "it aside and begin a new store",
			             path, size == 0 ? "empty (0 bytes)" : "not a SQLite database");
			return GI_ECORRUPT;
		}
		if (store_move_aside(data_dir) != 0)
			return GI_EIO;
	}
	int rc = obs_store_open(data_dir, out);
	if ((rc == GI_ECORRUPT || rc == GI_EDB) && exists && new_store) {
		if (store_move_aside(data_dir) != 0)
			return GI_EIO;
		rc = obs_store_open(data_dir, out);
	} else if (rc == GI_ECORRUPT) {
		gi_log_error("worker",
		             "the store %s is corrupt: refusing to start; restore it from a "
		             "backup, or start with --new-store to move it aside",
		             path);
	}
	return rc;
}

int api_worker_start(const struct api_worker_config *cfg, struct api_worker **out)
{
	*out = NULL;
	struct api_worker *w = gi_calloc(1, sizeof(*w));
	w->data_dir = cfg->data_dir ? gi_strdup(cfg->data_dir) : gi_fs_data_dir(NULL);
	w->started_ms = gi_clock_mono_ms();
	w->started_wall_ms = gi_clock_wall_ms();
	instance_name(w->instance, sizeof(w->instance));
	w->liveness_intervals =
	    cfg->liveness_intervals > 0 ? cfg->liveness_intervals : LIVENESS_INTERVALS_DEFAULT;
	w->ebin_cache_bytes =
	    cfg->ebin_cache_bytes > 0 ? cfg->ebin_cache_bytes : (size_t)EBIN_CACHE_BYTES_DEFAULT;
	w->ebin_cache_age_ms =
	    cfg->ebin_cache_age_ms > 0 ? cfg->ebin_cache_age_ms : EBIN_CACHE_AGE_MS_DEFAULT;
	pthread_cond_init(&w->liveness_wake, NULL);
	pthread_mutex_init(&w->lock, NULL);
	pthread_mutex_init(&w->finalize_lock, NULL);
	pthread_mutex_init(&w->write_lock, NULL);
	pthread_mutex_init(&w->heard_lock, NULL);
	w->heard = json_object();
	gi_map_init(&w->scanning);
	struct obs_store *st = NULL;
	w->store_location = cfg->store && *cfg->store ? gi_strdup(cfg->store) : NULL;
	int rc = w->data_dir
	             ? store_open_at_start(w->data_dir, w->store_location, cfg->new_store, &st)
	             : GI_EINVAL;
	if (rc == 0)
		obs_store_owner_set(st, w->instance);
	if (rc) {
		char shown[512];
		obs_store_location_redact(w->store_location, shown, sizeof(shown));
		gi_log_error("worker", "cannot open the store %s%s: %s",
		             w->store_location ? "" : "in ",
		             w->store_location ? shown : (w->data_dir ? w->data_dir : "(no HOME)"),
		             gi_strerror(rc));
		goto fail;
	}
	worker_store_release(w, st);
	const char *monitor = cfg->monitor_url;
	if (!monitor || !*monitor)
		monitor = getenv("GIULIA_MONITOR_URL");
	w->dash = api_dash_new(monitor && *monitor ? monitor : NULL);
	struct api_server_config sc = {
	    .listen = cfg->listen ? cfg->listen : API_WORKER_LISTEN_DEFAULT,
	    .token = cfg->token,
	    .body_limit = cfg->body_limit,
	    .request_timeout = cfg->request_timeout,
	    .ip_connection_limit = cfg->ip_connection_limit,
	    .allowed_hosts = cfg->allowed_hosts,
	    .name = "worker",
	    .routes = api_worker_routes(),
	    .raw_routes = worker_raw_routes,
	    .public_raw_routes = worker_public_routes,
	    .ctx = w,
	};
	rc = api_server_start(&sc, &w->server);
	if (rc)
		goto fail;
	rc = worker_mcp_start(w, cfg, sc.listen);
	if (rc)
		goto fail;
	pthread_mutex_lock(&w->finalize_lock);
	worker_ebin_cache_evict(w); /* the bounds may have changed since the last run */
	pthread_mutex_unlock(&w->finalize_lock);
	if (pthread_create(&w->liveness_thread, NULL, liveness_run, w) != 0) {
		rc = GI_EIO;
		goto fail;
	}
	w->liveness_started = true;
	gi_log_info("worker", "data directory %s", w->data_dir);
	if (w->store_location) {
		char shown[512];
		obs_store_location_redact(w->store_location, shown, sizeof(shown));
		gi_log_info("worker", "observation store %s", shown);
	}
	*out = w;
	return 0;
fail:
	api_worker_stop(w);
	return rc;
}

int api_worker_port(const struct api_worker *w)
{
	return api_server_port(w->server);
}

void api_worker_stop(struct api_worker *w)
{
	if (!w)
		return;
	if (w->liveness_started) {
		pthread_mutex_lock(&w->lock);
		w->stopping = true;
		pthread_cond_broadcast(&w->liveness_wake);
		pthread_mutex_unlock(&w->lock);
		pthread_join(w->liveness_thread, NULL);
	}
	if (w->server) {
		mcp_server_shutdown(w->mcp); /* its event streams would hold the stop up */
		api_dash_close(w->dash);     /* and so would the dashboard's */
		api_server_stop(w->server, SHUTDOWN_GRACE_MS);
		struct obs_store *st;
		if (worker_store_acquire(w, &st) == 0) {
			int n = 0;
			obs_store_interrupt_running(st, "worker shut down", &n);
			if (n > 0)
				gi_log_info("worker",
				            "%d running observation(s) marked interrupted", n);
			worker_store_release(w, st);
		}
	}
	mcp_server_free(w->mcp);
	api_dash_free(w->dash);
	for (int i = 0; i < w->store_idle_len; i++)
		obs_store_close(w->store_idle[i]);
	for (int i = 0; i < w->kg_idle_len; i++)
		kg_pooled_close(&w->kg_idle[i]);
	gi_map_destroy(&w->scanning);
	pthread_mutex_destroy(&w->finalize_lock);
	pthread_mutex_destroy(&w->write_lock);
	pthread_mutex_destroy(&w->heard_lock);
	json_decref(w->heard);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->liveness_wake);
	gi_free(w->data_dir);
	gi_free(w->store_location);
	gi_free(w);
}
