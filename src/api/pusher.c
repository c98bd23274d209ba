/*
 * pusher.c - ordered, durable delivery to the worker (see pusher.h).
 *
 * Queue: every item gets a sequence number when pushed. Items sit in the
 * memory FIFO while the spool is empty and the memory bounds allow; otherwise
 * they are written to SPOOL/NNNNNNNNNNNNNNNNNNNN.KIND.json. The sender takes
 * the memory head first, then the lowest-numbered spool file, so the order of
 * pushes is the order of delivery. The head is removed only after the worker
 * acknowledged it.
 */
#include "api/pusher.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "net/client.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/log.h"
#include "base/map.h"
#include "base/str.h"
#include "base/vec.h"

#define BACKOFF_MIN_MS       100
#define BACKOFF_MAX_MS       2000
#define SPOOL_ITEM_LIMIT     (16 * 1024 * 1024)
#define FINALIZE_RESULTS_MAX 256
#define DROPPED_SESSIONS_MAX 1024
/* Kept free in the spool directory for the finalize objects and the loss
 * record: released when the disk is full, taken again once the spool is
 * empty. A finalize is a few KB. */
#define RESERVE_BYTES (64 * 1024)
#define RESERVE_FILE  ".reserve"
#define LOSS_FILE     ".undelivered.json"
/* A batch (POST /api/runtime/ingest/batch): at most this many snapshots and
 * bytes, well inside the worker's default body limit (1 MiB) and its
 * 256-item bound: what is queued when the thread takes the head, after the
 * linger below when snapshots come fast. */
#define BATCH_ITEMS 64
#define BATCH_BYTES (512 * 1024)
/* When snapshots arrive at LINGER_MIN_RATE a second or more (a monitor of
 * 20+ nodes at 1 s), the thread holds the first queued one up to LINGER_MS
 * so that the next ones join its batch: at 100 nodes a request and a
 * wake-up per ten snapshots instead of per snapshot. The live feed and the
 * alerts come from the monitor itself, so only the worker's copy is later;
 * a lone session (below the rate) is delivered at once, as before. */
#define LINGER_MS       100
#define LINGER_MIN_RATE 20

struct item {
	uint64_t seq;
	enum api_push_kind kind;
	char *body; /* NULL for items on disk */
	size_t len;
	struct item *next;
	bool borrowed; /* in flight: `body` is the queued item's, not a copy */
};

struct disk_item {
	uint64_t seq;
	enum api_push_kind kind;
	size_t len;
};

struct api_pusher {
	char *worker_url;
	char *token;
	char *spool_dir;
	size_t memory_items, memory_bytes, disk_bytes_limit;
	int timeout_ms;

	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t changed; /* queue, results or stop changed */
	struct item *head, *tail;
	size_t mem_len, mem_bytes;
	struct gi_vec disk; /* struct disk_item, ascending seq */
	size_t disk_head;   /* index of the first undelivered disk item */
	size_t disk_bytes;
	uint64_t next_seq;
	bool stopping;
	int64_t flush_deadline;
	bool sending; /* the thread holds the head in flight */

	struct gi_map results; /* session_id -> json_t* finalize response */
	char *result_keys[FINALIZE_RESULTS_MAX];
	size_t result_next;

	uint64_t delivered, retries, rejected, dropped;
	void (*on_refused)(void *ctx, const char *session_id, int status, const char *error);
	void *refused_ctx;
	uint64_t batches, batched; /* batch requests acknowledged, items in them */
	bool batch_off;            /* the worker has no batch route (404/405) */
	bool batch_skip;           /* the worker refused the last batch whole: send singly once */
	/* Items pushed in the last whole second (the arrival rate the linger
	 * looks at), counted from rate_start_ms; `lingering` while the thread
	 * holds a batch open, when a push wakes it only to fill the batch. */
	int64_t rate_start_ms;
	unsigned rate_count, rate_last;
	bool lingering;
	/* The delivery thread's own client: one kept-alive connection to the
	 * worker rather than a new one per item (a fifth of the monitor's CPU
	 * at 100 nodes went to connecting and closing, BENCHMARKS.md "Fleet").
	 * `connections` is its count, copied under the lock for stats. */
	struct net_client *client;
	uint64_t connections;
	json_t *dropped_by_session; /* session_id -> count, at most DROPPED_SESSIONS_MAX */
	bool reserve_held;          /* RESERVE_FILE is in place */
	/* What this run could not deliver (kind -> count, "sessions": sid ->
	 * count), written to LOSS_FILE at stop; and what the previous run left
	 * there, reported by stats (or NULL). */
	json_t *lost, *previous_run;
	bool reachable;
	char last_error[256];
};

static const char *kind_name(enum api_push_kind k)
{
	return k == API_PUSH_FINALIZE      ? "finalize"
	       : k == API_PUSH_OBJECT_CODE ? "objectcode"
	                                   : "ingest";
}

static void spool_path(const struct api_pusher *p, uint64_t seq, enum api_push_kind kind, char *out,
                       size_t size)
{
	snprintf(out, size, "%s/%020" PRIu64 ".%s.json", p->spool_dir, seq, kind_name(kind));
}

static int cmp_disk(const void *a, const void *b)
{
	uint64_t x = ((const struct disk_item *)a)->seq, y = ((const struct disk_item *)b)->seq;
	return x < y ? -1 : x > y;
}

/* Parses a spool item's file name, NNNNNNNNNNNNNNNNNNNN.KIND.json, exactly:
 * anything else (a temporary, a stray file) is not an item. */
static bool spool_name_parse(const char *name, unsigned long long *seq, char *kind, size_t size)
{
	size_t i = 0;
	*seq = 0;
	for (; i < 20; i++) {
		if (name[i] < '0' || name[i] > '9')
			return false;
		*seq = *seq * 10 + (unsigned long long)(name[i] - '0');
	}
	if (name[i++] != '.')
		return false;
	size_t k = 0;
	while (name[i] >= 'a' && name[i] <= 'z' && k + 1 < size)
		kind[k++] = name[i++];
	kind[k] = '\0';
	if (strcmp(name + i, ".json") != 0)
		return false;
	return strcmp(kind, "ingest") == 0 || strcmp(kind, "finalize") == 0 ||
	       strcmp(kind, "objectcode") == 0;
}

/* A temporary NAME.tmp.PID left by a crash between the write and the rename
 * (gi_fs_write_file): when NAME is a spool item that does not exist and the
 * temporary holds a whole JSON document, the write had finished and only the
 * rename was missing, so it is renamed; otherwise it is deleted. */
static void spool_temporary_settle(struct api_pusher *p, const char *name)
{
	const char *tmp = strstr(name, ".tmp.");
	if (!tmp || tmp[5] < '0' || tmp[5] > '9')
		return;
	char final_name[256], kind[16], path[4096], final_path[4096];
	unsigned long long seq;
	size_t n = (size_t)(tmp - name);
	if (n >= sizeof(final_name))
		return;
	memcpy(final_name, name, n);
	final_name[n] = '\0';
	snprintf(path, sizeof(path), "%s/%s", p->spool_dir, name);
	snprintf(final_path, sizeof(final_path), "%s/%s", p->spool_dir, final_name);
	bool kept = false;
	if (spool_name_parse(final_name, &seq, kind, sizeof(kind)) &&
	    access(final_path, F_OK) != 0) {
		char *body = NULL;
		size_t len = 0;
		json_t *doc = NULL;
		if (gi_fs_read_file(path, SPOOL_ITEM_LIMIT, &body, &len) == 0)
			doc = json_loadb(body, len, 0, NULL);
		kept = doc && rename(path, final_path) == 0;
		json_decref(doc);
		gi_free(body);
	}
	if (!kept)
		unlink(path);
	gi_log_warn("monitor", "spool temporary %s left by a crash: %s", name,
	            kept ? "complete, recovered" : "incomplete or redundant, deleted");
}

/* Loads the spool left by an earlier run: temporaries first (recovered or
 * deleted, never counted), then the items in order. */
static void spool_load(struct api_pusher *p)
{
	DIR *d = opendir(p->spool_dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)))
		spool_temporary_settle(p, e->d_name);
	rewinddir(d);
	while ((e = readdir(d))) {
		char kind[16];
		unsigned long long seq;
		if (!spool_name_parse(e->d_name, &seq, kind, sizeof(kind)))
			continue;
		struct disk_item it = {seq,
		                       strcmp(kind, "finalize") == 0     ? API_PUSH_FINALIZE
		                       : strcmp(kind, "objectcode") == 0 ? API_PUSH_OBJECT_CODE
		                                                         : API_PUSH_INGEST,
		                       0};
		char path[4096];
		spool_path(p, it.seq, it.kind, path, sizeof(path));
		FILE *f = fopen(path, "rb");
		if (!f)
			continue;
		if (fseek(f, 0, SEEK_END) == 0) {
			long n = ftell(f);
			it.len = n > 0 ? (size_t)n : 0;
		}
		fclose(f);
		gi_vec_push(&p->disk, &it);
		p->disk_bytes += it.len;
		if (it.seq >= p->next_seq)
			p->next_seq = it.seq + 1;
	}
	closedir(d);
	gi_vec_sort(&p->disk, cmp_disk);
	if (p->disk.len > 0)
		gi_log_info("monitor", "re-sending %zu item(s) spooled by an earlier run",
		            p->disk.len);
}

static void spool_file(const struct api_pusher *p, const char *name, char *out, size_t size)
{
	snprintf(out, size, "%s/%s", p->spool_dir, name);
}

/* Takes the reserve (RESERVE_BYTES of zeros) when it is not held. */
static void reserve_take(struct api_pusher *p)
{
	if (p->reserve_held)
		return;
	char path[4096];
	spool_file(p, RESERVE_FILE, path, sizeof(path));
	char *zeros = gi_calloc(1, RESERVE_BYTES);
	p->reserve_held = gi_fs_write_file(path, zeros, RESERVE_BYTES) == 0;
	gi_free(zeros);
}

/* Gives the reserve back to the disk; true when there was one to give. */
static bool reserve_release(struct api_pusher *p)
{
	if (!p->reserve_held)
		return false;
	char path[4096];
	spool_file(p, RESERVE_FILE, path, sizeof(path));
	unlink(path);
	p->reserve_held = false;
	gi_log_warn("monitor", "spool disk full: the space reserved for finalize records is used");
	return true;
}

/* Writes one item to the spool (atomically); 0 or an error. A finalize that
 * does not fit uses the reserve: the end of an observation is what turns
 * its snapshots into a profile. */
static int spool_write(struct api_pusher *p, uint64_t seq, enum api_push_kind kind,
                       const char *body, size_t len)
{
	char path[4096];
	spool_path(p, seq, kind, path, sizeof(path));
	int rc = gi_fs_write_file(path, body, len);
	if (rc && kind == API_PUSH_FINALIZE && reserve_release(p))
		rc = gi_fs_write_file(path, body, len);
	return rc;
}

/* Counts an item that will never be delivered (called with the lock held,
 * or after the thread stopped). */
static void lost_count(struct api_pusher *p, enum api_push_kind kind, const char *sid)
{
	json_t *n = json_object_get(p->lost, kind_name(kind));
	json_object_set_new(p->lost, kind_name(kind),
	                    json_integer(n ? json_integer_value(n) + 1 : 1));
	json_t *sessions = json_object_get(p->lost, "sessions");
	if (!sessions) {
		sessions = json_object();
		json_object_set_new(p->lost, "sessions", sessions);
	}
	if (sid && (json_object_get(sessions, sid) || json_object_size(sessions) < 64)) {
		n = json_object_get(sessions, sid);
		json_object_set_new(sessions, sid, json_integer(n ? json_integer_value(n) + 1 : 1));
	}
}

/* At stop: records what this run lost in LOSS_FILE (the reserve makes room
 * if it must), so that the next run can say so. */
static void loss_record(struct api_pusher *p)
{
	if (json_object_size(p->lost) == 0)
		return;
	char path[4096];
	spool_file(p, LOSS_FILE, path, sizeof(path));
	json_t *all = json_object();
	/* What an earlier run left and this one did not report is kept. */
	if (p->previous_run)
		json_object_set(all, "earlier", p->previous_run);
	json_object_update(all, p->lost);
	json_object_set_new(all, "stopped_ms", json_integer(gi_clock_wall_ms()));
	char *text = json_dumps(all, JSON_COMPACT);
	int rc = text ? gi_fs_write_file(path, text, strlen(text)) : GI_ENOMEM;
	if (rc && text && reserve_release(p))
		rc = gi_fs_write_file(path, text, strlen(text));
	if (rc)
		gi_log_error("monitor", "could not record what was lost in %s", path);
	free(text);
	json_decref(all);
}

/* At start: reads (and removes) what the previous run could not deliver,
 * and says it loudly. */
static void loss_load(struct api_pusher *p)
{
	char path[4096];
	spool_file(p, LOSS_FILE, path, sizeof(path));
	char *text = NULL;
	size_t len = 0;
	if (gi_fs_read_file(path, 1024 * 1024, &text, &len) != 0)
		return;
	p->previous_run = json_loadb(text, len, 0, NULL);
	gi_free(text);
	unlink(path);
	if (!json_is_object(p->previous_run)) {
		json_decref(p->previous_run);
		p->previous_run = json_pack("{s:s}", "error", "the loss record was unreadable");
	}
	json_t *ing = json_object_get(p->previous_run, "ingest");
	json_t *fin = json_object_get(p->previous_run, "finalize");
	json_t *oc = json_object_get(p->previous_run, "objectcode");
	gi_log_error("monitor",
	             "THE PREVIOUS MONITOR RUN COULD NOT DELIVER: %lld snapshot(s), %lld "
	             "finalize record(s), %lld object-code batch(es) (the spool in %s was full "
	             "or unwritable); the profiles of the sessions concerned show them as gaps. "
	             "Details: delivery.previous_run in GET /api/monitor/observe/status",
	             (long long)json_integer_value(ing), (long long)json_integer_value(fin),
	             (long long)json_integer_value(oc), p->spool_dir);
}

static void free_item(struct item *it)
{
	if (!it)
		return;
	gi_free(it->body);
	gi_free(it);
}

/* Tells the owner that the worker refused a snapshot of `body` for good,
 * and counts it as dropped for its session (a loss the finalize reports).
 * Called without the lock. */
static void refused_tell(struct api_pusher *p, const char *body, size_t len, int status,
                         const char *error)
{
	json_t *j = json_loadb(body, len, 0, NULL);
	const char *sid = json_string_value(json_object_get(j, "session_id"));
	if (sid) {
		pthread_mutex_lock(&p->lock);
		json_t *n = json_object_get(p->dropped_by_session, sid);
		if (n)
			json_integer_set(n, json_integer_value(n) + 1);
		else if (json_object_size(p->dropped_by_session) < DROPPED_SESSIONS_MAX)
			json_object_set_new(p->dropped_by_session, sid, json_integer(1));
		pthread_mutex_unlock(&p->lock);
		if (p->on_refused)
			p->on_refused(p->refused_ctx, sid, status, error ? error : "");
	}
	json_decref(j);
}

/* Counts a dropped item against its session (called with the lock held). */
static void dropped_count(struct api_pusher *p, json_t *body)
{
	const char *sid = json_string_value(json_object_get(body, "session_id"));
	if (!sid)
		return;
	json_t *n = json_object_get(p->dropped_by_session, sid);
	if (n)
		json_integer_set(n, json_integer_value(n) + 1);
	else if (json_object_size(p->dropped_by_session) < DROPPED_SESSIONS_MAX)
		json_object_set_new(p->dropped_by_session, sid, json_integer(1));
}

uint64_t api_pusher_dropped_of(struct api_pusher *p, const char *session_id)
{
	pthread_mutex_lock(&p->lock);
	json_t *n = json_object_get(p->dropped_by_session, session_id);
	uint64_t v = n ? (uint64_t)json_integer_value(n) : 0;
	json_object_del(p->dropped_by_session, session_id);
	pthread_mutex_unlock(&p->lock);
	return v;
}

int api_pusher_push(struct api_pusher *p, enum api_push_kind kind, json_t *body)
{
	char *text = json_dumps(body, JSON_COMPACT);
	if (!text)
		return GI_EINVAL;
	int rc = api_pusher_push_text(p, kind, text, strlen(text));
	free(text); /* jansson's allocator */
	return rc;
}

int api_pusher_push_text(struct api_pusher *p, enum api_push_kind kind, const char *text,
                         size_t len)
{
	int rc = 0;
	pthread_mutex_lock(&p->lock);
	int64_t now = gi_clock_mono_ms();
	if (now - p->rate_start_ms >= 1000) {
		p->rate_last = now - p->rate_start_ms < 2000 ? p->rate_count : 0;
		p->rate_start_ms = now;
		p->rate_count = 0;
	}
	p->rate_count++;
	uint64_t seq = p->next_seq++;
	bool disk_empty = p->disk_head >= p->disk.len;
	if (disk_empty && p->mem_len < p->memory_items && p->mem_bytes + len <= p->memory_bytes) {
		struct item *it = gi_calloc(1, sizeof(*it));
		it->seq = seq;
		it->kind = kind;
		it->body = gi_strndup(text, len);
		it->len = len;
		if (p->tail)
			p->tail->next = it;
		else
			p->head = it;
		p->tail = it;
		p->mem_len++;
		p->mem_bytes += len;
	} else if ((p->disk_bytes + len > p->disk_bytes_limit && kind != API_PUSH_FINALIZE) ||
	           spool_write(p, seq, kind, text, len) != 0) {
		json_t *body = json_loadb(text, len, 0, NULL); /* rare: for the counts */
		p->dropped++;
		dropped_count(p, body);
		lost_count(p, kind, json_string_value(json_object_get(body, "session_id")));
		json_decref(body);
		rc = GI_ETOOBIG;
		snprintf(p->last_error, sizeof(p->last_error),
		         "queue and spool full: %s item dropped", kind_name(kind));
	} else {
		struct disk_item d = {seq, kind, len};
		gi_vec_push(&p->disk, &d);
		p->disk_bytes += len;
	}
	/* A lingering thread wakes for a full batch or another kind of item
	 * only: not once per snapshot. */
	if (!p->lingering || kind != API_PUSH_INGEST ||
	    p->mem_len + (p->disk.len - p->disk_head) >= BATCH_ITEMS)
		pthread_cond_broadcast(&p->changed);
	pthread_mutex_unlock(&p->lock);
	if (rc)
		gi_log_error("monitor", "delivery queue and spool full: %s item dropped",
		             kind_name(kind));
	return rc;
}

/* The head item (memory or disk) to send; false when empty. A memory
 * item's body is borrowed, not copied: only this thread removes queued
 * items (head_remove, after the send), and a queued body never changes. */
static bool head_peek(struct api_pusher *p, struct item *out)
{
	memset(out, 0, sizeof(*out));
	if (p->head) {
		out->seq = p->head->seq;
		out->kind = p->head->kind;
		out->body = p->head->body;
		out->len = p->head->len;
		out->borrowed = true;
		return true;
	}
	if (p->disk_head < p->disk.len) {
		struct disk_item *d = gi_vec_get(&p->disk, p->disk_head);
		out->seq = d->seq;
		out->kind = d->kind;
		return true;
	}
	return false;
}

/* Removes the head after delivery (or rejection). Called with the lock held. */
static void head_remove(struct api_pusher *p)
{
	if (p->head) {
		struct item *it = p->head;
		p->head = it->next;
		if (!p->head)
			p->tail = NULL;
		p->mem_len--;
		p->mem_bytes -= it->len;
		free_item(it);
		return;
	}
	struct disk_item *d = gi_vec_get(&p->disk, p->disk_head);
	char path[4096];
	spool_path(p, d->seq, d->kind, path, sizeof(path));
	unlink(path);
	p->disk_bytes -= d->len;
	p->disk_head++;
	if (p->disk_head == p->disk.len) {
		p->disk.len = 0;
		p->disk_head = 0;
		reserve_take(p); /* the spool is empty: room again */
	}
}

static void result_store(struct api_pusher *p, const char *session_id, json_t *resp)
{
	json_t *old = gi_map_get(&p->results, session_id);
	if (!old) {
		/* Bounded: forget the oldest answer when the table is full. */
		char *evict = p->result_keys[p->result_next];
		if (evict) {
			json_decref(gi_map_put(&p->results, evict, NULL));
			gi_free(evict);
		}
		p->result_keys[p->result_next] = gi_strdup(session_id);
		p->result_next = (p->result_next + 1) % FINALIZE_RESULTS_MAX;
	}
	json_decref(gi_map_put(&p->results, session_id, json_incref(resp)));
}

static bool retryable(int status)
{
	return status == 401 || status == 403 || status == 408 || status == 429 || status >= 500;
}

/* Sends one item; returns 1 delivered, 0 retry later, -1 rejected for good. */
static int send_item(struct api_pusher *p, struct item *it, json_t **resp_out)
{
	*resp_out = NULL;
	if (!it->body) {
		char path[4096];
		spool_path(p, it->seq, it->kind, path, sizeof(path));
		size_t len;
		int rc = gi_fs_read_file(path, SPOOL_ITEM_LIMIT, &it->body, &len);
		if (rc) {
			gi_log_error("monitor", "spooled item %s unreadable (%s): dropped", path,
			             gi_strerror(rc));
			return -1;
		}
		it->len = len;
	}
	char url[1024];
	snprintf(url, sizeof(url), "%s%s", p->worker_url,
	         it->kind == API_PUSH_FINALIZE      ? "/api/runtime/ingest/finalize"
	         : it->kind == API_PUSH_OBJECT_CODE ? "/api/runtime/ingest/object_code"
	                                            : "/api/runtime/ingest");
	struct net_call call = {"POST", url, it->body, p->token, p->timeout_ms};
	int status = 0;
	json_t *resp = NULL;
	int rc = net_client_perform(p->client, &call, &status, &resp);
	pthread_mutex_lock(&p->lock);
	p->connections = net_client_connections(p->client);
	p->reachable = rc == 0;
	if (rc)
		snprintf(p->last_error, sizeof(p->last_error), "worker %s: %s", p->worker_url,
		         gi_strerror(rc));
	else if (status < 200 || status >= 300)
		snprintf(p->last_error, sizeof(p->last_error), "worker answered %d to %s", status,
		         kind_name(it->kind));
	else
		p->last_error[0] = '\0'; /* delivered: an old error no longer describes it */
	pthread_mutex_unlock(&p->lock);
	if (rc == 0 && status >= 200 && status < 300) {
		size_t bad = json_array_size(json_object_get(resp, "rejected"));
		if (bad > 0)
			gi_log_warn("monitor",
			            "the worker kept a %s batch but refused %zu module(s) in it",
			            kind_name(it->kind), bad);
		*resp_out = resp;
		return 1;
	}
	if (rc == 0 && !retryable(status)) {
		const char *msg = json_string_value(json_object_get(resp, "error"));
		gi_log_error("monitor", "worker refused the %s item (%d: %s): dropped",
		             kind_name(it->kind), status, msg ? msg : "?");
		if (it->kind == API_PUSH_INGEST)
			refused_tell(p, it->body, it->len, status, msg);
		json_decref(resp);
		return -1;
	}
	json_decref(resp);
	return 0;
}

/* Takes up to BATCH_ITEMS consecutive snapshots from the head (memory,
 * then spool) totalling at most BATCH_BYTES; their count (called with the
 * lock held). Memory ones borrow their bodies (as head_peek); spooled ones
 * have none yet. */
static size_t batch_gather(struct api_pusher *p, struct item *out)
{
	size_t n = 0, bytes = 0;
	for (struct item *it = p->head; it && n < BATCH_ITEMS; it = it->next) {
		if (it->kind != API_PUSH_INGEST || (n > 0 && bytes + it->len > BATCH_BYTES))
			return n;
		out[n] = (struct item){it->seq, it->kind, it->body, it->len, NULL, true};
		bytes += it->len;
		n++;
	}
	for (size_t i = p->disk_head; i < p->disk.len && n < BATCH_ITEMS; i++) {
		const struct disk_item *d = gi_vec_get(&p->disk, i);
		if (d->kind != API_PUSH_INGEST || (n > 0 && bytes + d->len > BATCH_BYTES))
			break;
		out[n] = (struct item){d->seq, d->kind, NULL, d->len, NULL, false};
		bytes += d->len;
		n++;
	}
	return n;
}

/* Sends items[0..*count) as one batch (*count is cut at a spooled item
 * that cannot be read, which then goes singly). Returns how many of them, from the first,
 * are settled (stored, duplicate or refused for good: `*rejected` of them
 * refused), the rest to be retried; or -1 when the worker cannot take
 * batches (404/405, an older worker) or refused this one whole (400/413),
 * and the items go singly. Nothing the worker did not answer "stored" or
 * "duplicate" or "refused" for is settled. */
static long send_batch(struct api_pusher *p, struct item *items, size_t *count, size_t *rejected)
{
	size_t n = *count;
	*rejected = 0;
	struct gi_buf body;
	gi_buf_init(&body, 0);
	GI_BUF_LIT(&body, "{\"items\":[");
	for (size_t i = 0; i < n; i++) {
		if (!items[i].body) {
			char path[4096];
			spool_path(p, items[i].seq, items[i].kind, path, sizeof(path));
			size_t len;
			if (gi_fs_read_file(path, SPOOL_ITEM_LIMIT, &items[i].body, &len) != 0) {
				n = *count =
				    i; /* sent singly later, which drops it if unreadable */
				break;
			}
			items[i].len = len;
		}
		if (i > 0)
			GI_BUF_LIT(&body, ",");
		gi_buf_append(&body, items[i].body, items[i].len);
	}
	GI_BUF_LIT(&body, "]}");
	if (n < 2) {
		gi_buf_destroy(&body);
		return -1;
	}
	char url[1024];
	snprintf(url, sizeof(url), "%s/api/runtime/ingest/batch", p->worker_url);
	struct net_call call = {"POST", url, gi_buf_str(&body), p->token, p->timeout_ms};
	int status = 0;
	json_t *resp = NULL;
	int rc = net_client_perform(p->client, &call, &status, &resp);
	gi_buf_destroy(&body);
	long settled = 0;
	json_t *refused = json_array(); /* [[index, status, error]] */
	pthread_mutex_lock(&p->lock);
	p->connections = net_client_connections(p->client);
	p->reachable = rc == 0;
	if (rc == 0 && (status == 404 || status == 405)) {
		p->batch_off = true;
		gi_log_info("monitor", "the worker has no batch ingest (%d): snapshots go singly",
		            status);
		settled = -1;
	} else if (rc == 0 && (status == 400 || status == 413)) {
		const char *msg = json_string_value(json_object_get(resp, "error"));
		gi_log_warn("monitor", "the worker refused a batch of %zu (%d: %s): sent singly", n,
		            status, msg ? msg : "?");
		p->batch_skip = true;
		settled = -1;
	} else if (rc)
		snprintf(p->last_error, sizeof(p->last_error), "worker %s: %s", p->worker_url,
		         gi_strerror(rc));
	else if (status < 200 || status >= 300)
		snprintf(p->last_error, sizeof(p->last_error), "worker answered %d to a batch",
		         status);
	else {
		p->last_error[0] = '\0';
		json_t *results = json_object_get(resp, "results");
		for (size_t i = 0; i < n && i < json_array_size(results); i++) {
			json_t *r = json_array_get(results, i);
			const char *what = json_string_value(json_object_get(r, "result"));
			json_t *index = json_object_get(r, "index");
			if (!what || !json_is_integer(index) ||
			    json_integer_value(index) != (json_int_t)i)
				break;
			if (strcmp(what, "refused") == 0) {
				const char *msg = json_string_value(json_object_get(r, "error"));
				gi_log_error("monitor",
				             "worker refused the ingest item (%d: %s): dropped",
				             (int)json_integer_value(json_object_get(r, "status")),
				             msg ? msg : "?");
				json_array_append_new(refused,
				                      json_pack("[I, O, s]", (json_int_t)i,
				                                json_object_get(r, "status"),
				                                msg ? msg : ""));
				(*rejected)++;
			} else if (strcmp(what, "stored") != 0 && strcmp(what, "duplicate") != 0) {
				break;
			}
			settled++;
		}
		p->batches++;
		p->batched += (uint64_t)settled;
	}
	pthread_mutex_unlock(&p->lock);
	size_t k;
	json_t *x;
	json_array_foreach(refused, k, x)
	{
		size_t at = (size_t)json_integer_value(json_array_get(x, 0));
		refused_tell(p, items[at].body, items[at].len,
		             (int)json_integer_value(json_array_get(x, 1)),
		             json_string_value(json_array_get(x, 2)));
	}
	json_decref(refused);
	json_decref(resp);
	return settled;
}

static void wait_ms(struct api_pusher *p, int ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&p->changed, &p->lock, &ts);
}

static void *pusher_thread(void *arg)
{
	struct api_pusher *p = arg;
	int backoff = BACKOFF_MIN_MS;
	int64_t linger_until = 0;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		size_t queued = p->mem_len + (p->disk.len - p->disk_head);
		if (p->stopping && (queued == 0 || gi_clock_mono_ms() >= p->flush_deadline))
			break;
		if (queued == 0) {
			wait_ms(p, 1000);
			continue;
		}
		enum api_push_kind head_kind =
		    p->head ? p->head->kind
		            : ((const struct disk_item *)gi_vec_get(&p->disk, p->disk_head))->kind;
		bool batching = head_kind == API_PUSH_INGEST && !p->batch_off && !p->batch_skip;
		if (batching && !p->stopping && queued < BATCH_ITEMS &&
		    p->rate_last >= LINGER_MIN_RATE) {
			int64_t now = gi_clock_mono_ms();
			if (linger_until == 0)
				linger_until = now + LINGER_MS;
			if (now < linger_until) {
				p->lingering = true;
				wait_ms(p, (int)(linger_until - now));
				p->lingering = false;
				continue;
			}
		}
		linger_until = 0;
		if (batching && queued > 1) {
			p->sending = true;
			struct item *batch = gi_calloc(BATCH_ITEMS, sizeof(*batch));
			size_t n = batch_gather(p, batch), sent = n, rejected = 0;
			pthread_mutex_unlock(&p->lock);
			long settled = send_batch(p, batch, &sent, &rejected);
			pthread_mutex_lock(&p->lock);
			p->sending = false;
			for (size_t i = 0; i < n; i++)
				if (!batch[i].borrowed)
					gi_free(batch[i].body);
			gi_free(batch);
			if (settled >= 0) {
				for (long i = 0; i < settled; i++)
					head_remove(p);
				p->rejected += rejected;
				p->delivered += (uint64_t)settled - rejected;
				if (settled > 0)
					pthread_cond_broadcast(&p->changed);
				if ((size_t)settled == sent) {
					backoff = BACKOFF_MIN_MS;
				} else {
					p->retries++;
					wait_ms(p, backoff);
					backoff = backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS
					                                       : backoff * 2;
				}
				continue;
			}
			/* The worker takes no batch (or not this one): the head goes singly. */
		}
		p->batch_skip = false;
		struct item it;
		head_peek(p, &it);
		p->sending = true;
		pthread_mutex_unlock(&p->lock);
		json_t *resp = NULL;
		int outcome = send_item(p, &it, &resp);
		pthread_mutex_lock(&p->lock);
		p->sending = false;
		if (outcome != 0) {
			if (outcome > 0) {
				p->delivered++;
				if (it.kind == API_PUSH_FINALIZE) {
					json_t *body = json_loadb(it.body, it.len, 0, NULL);
					const char *sid =
					    json_string_value(json_object_get(body, "session_id"));
					if (sid)
						result_store(p, sid, resp);
					json_decref(body);
				}
			} else {
				p->rejected++;
			}
			head_remove(p);
			backoff = BACKOFF_MIN_MS;
			pthread_cond_broadcast(&p->changed);
		} else {
			p->retries++;
			wait_ms(p, backoff);
			backoff = backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2;
		}
		json_decref(resp);
		if (!it.borrowed)
			gi_free(it.body);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int api_pusher_new(const struct api_pusher_config *cfg, struct api_pusher **out)
{
	*out = NULL;
	if (!cfg->worker_url || !cfg->spool_dir)
		return GI_EINVAL;
	int rc = gi_fs_mkdir_p(cfg->spool_dir);
	if (rc) {
		gi_log_error("monitor", "cannot create spool directory %s", cfg->spool_dir);
		return rc;
	}
	struct api_pusher *p = gi_calloc(1, sizeof(*p));
	p->worker_url = gi_strdup(cfg->worker_url);
	p->on_refused = cfg->on_refused;
	p->refused_ctx = cfg->ctx;
	size_t n = strlen(p->worker_url);
	while (n > 0 && p->worker_url[n - 1] == '/')
		p->worker_url[--n] = '\0';
	p->token = cfg->token && cfg->token[0] ? gi_strdup(cfg->token) : NULL;
	p->spool_dir = gi_strdup(cfg->spool_dir);
	p->memory_items = cfg->memory_items ? cfg->memory_items : 512;
	p->memory_bytes = cfg->memory_bytes ? cfg->memory_bytes : 64u * 1024 * 1024;
	p->disk_bytes_limit = cfg->disk_bytes ? cfg->disk_bytes : 1024u * 1024 * 1024;
	p->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : 15000;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->changed, NULL);
	gi_vec_init(&p->disk, sizeof(struct disk_item));
	gi_map_init(&p->results);
	p->client = net_client_new();
	p->dropped_by_session = json_object();
	p->lost = json_object();
	spool_load(p);
	loss_load(p);
	reserve_take(p);
	if (!p->reserve_held)
		gi_log_warn("monitor",
		            "no room for the %d KB kept free for finalize records in %s: a full "
		            "disk may lose the end of an observation",
		            RESERVE_BYTES / 1024, p->spool_dir);
	if (pthread_create(&p->thread, NULL, pusher_thread, p) != 0) {
		net_client_free(p->client);
		gi_vec_destroy(&p->disk);
		gi_map_destroy(&p->results);
		json_decref(p->dropped_by_session);
		json_decref(p->lost);
		json_decref(p->previous_run);
		gi_free(p->worker_url);
		gi_free(p->token);
		gi_free(p->spool_dir);
		gi_free(p);
		return GI_EIO;
	}
	*out = p;
	return 0;
}

int api_pusher_wait_finalize(struct api_pusher *p, const char *session_id, int timeout_ms,
                             json_t **response_out)
{
	*response_out = NULL;
	int64_t deadline = gi_clock_mono_ms() + timeout_ms;
	pthread_mutex_lock(&p->lock);
	json_t *r;
	while (!(r = gi_map_get(&p->results, session_id)) && gi_clock_mono_ms() < deadline)
		wait_ms(p, 100);
	if (r)
		*response_out = json_incref(r);
	pthread_mutex_unlock(&p->lock);
	return r ? 0 : GI_ETIMEOUT;
}

int api_pusher_drain(struct api_pusher *p, int timeout_ms)
{
	int64_t deadline = gi_clock_mono_ms() + timeout_ms;
	pthread_mutex_lock(&p->lock);
	while ((p->head || p->disk_head < p->disk.len) && gi_clock_mono_ms() < deadline)
		wait_ms(p, 50);
	bool empty = !p->head && p->disk_head >= p->disk.len;
	pthread_mutex_unlock(&p->lock);
	return empty ? 0 : GI_ETIMEOUT;
}

json_t *api_pusher_stats(struct api_pusher *p)
{
	pthread_mutex_lock(&p->lock);
	json_t *s = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:s?}", "worker_url",
	                      p->worker_url, "queued_memory", (json_int_t)p->mem_len, "queued_disk",
	                      (json_int_t)(p->disk.len - p->disk_head), "delivered",
	                      (json_int_t)p->delivered, "retries", (json_int_t)p->retries,
	                      "rejected", (json_int_t)p->rejected, "dropped",
	                      (json_int_t)p->dropped, "worker_reachable", p->reachable,
	                      "last_error", p->last_error[0] ? p->last_error : NULL);
	json_object_set_new(s, "reserve_held", json_boolean(p->reserve_held));
	json_object_set_new(s, "queued_memory_bytes", json_integer((json_int_t)p->mem_bytes));
	json_object_set_new(s, "spool_bytes", json_integer((json_int_t)p->disk_bytes));
	json_object_set_new(s, "connections", json_integer((json_int_t)p->connections));
	json_object_set_new(s, "batches", json_integer((json_int_t)p->batches));
	json_object_set_new(s, "batched", json_integer((json_int_t)p->batched));
	json_object_set_new(s, "previous_run",
	                    p->previous_run ? json_deep_copy(p->previous_run) : json_null());
	pthread_mutex_unlock(&p->lock);
	return s;
}

void api_pusher_free(struct api_pusher *p, int flush_ms)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	p->flush_deadline = gi_clock_mono_ms() + flush_ms;
	pthread_cond_broadcast(&p->changed);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);

	/* What is left in memory is older than the spool: write it under its own
	 * numbers so that the next run sends it first. */
	size_t spilled = 0;
	for (struct item *it = p->head; it;) {
		struct item *next = it->next;
		if (spool_write(p, it->seq, it->kind, it->body, it->len) == 0) {
			spilled++;
		} else {
			gi_log_error("monitor", "could not spool a %s item: lost",
			             kind_name(it->kind));
			json_t *b = json_loadb(it->body, it->len, 0, NULL);
			lost_count(p, it->kind,
			           json_string_value(json_object_get(b, "session_id")));
			json_decref(b);
		}
		free_item(it);
		it = next;
	}
	loss_record(p);
	size_t on_disk = p->disk.len - p->disk_head + spilled;
	if (on_disk > 0)
		gi_log_warn("monitor", "%zu undelivered item(s) kept in %s for the next run",
		            on_disk, p->spool_dir);
	for (size_t i = 0; i < FINALIZE_RESULTS_MAX; i++) {
		if (p->result_keys[i]) {
			json_decref(gi_map_get(&p->results, p->result_keys[i]));
			gi_free(p->result_keys[i]);
		}
	}
	gi_map_destroy(&p->results);
	json_decref(p->dropped_by_session);
	json_decref(p->lost);
	json_decref(p->previous_run);
	gi_vec_destroy(&p->disk);
	net_client_free(p->client);
	pthread_cond_destroy(&p->changed);
	pthread_mutex_destroy(&p->lock);
	gi_free(p->worker_url);
	gi_free(p->token);
	gi_free(p->spool_dir);
	gi_free(p);
}
