/*
 * pusher.h - the monitor's ordered, durable delivery of snapshots and
 * finalize objects to the worker.
 *
 * Items are sent one at a time in the order they were pushed, over one
 * kept-alive connection to the worker (a new one after the worker closed
 * it: a restart, its idle timeout), each retried
 * (with back-off) until the worker acknowledges it, so that a worker restart
 * during an observation loses nothing. The queue lives in memory up to a
 * bound, then spills to files under the spool directory; every item in
 * memory is older than every item on disk, which keeps the order. At stop,
 * what could not be delivered in the grace time is written to the spool and
 * sent by the next monitor started on the same directory.
 *
 * Space: RESERVE_BYTES are kept free in the spool (a file released when
 * the disk is full) so that a finalize is never lost to a full disk; what a
 * run could not deliver at all is recorded at stop and reported by the next
 * run (log and stats).
 *
 * Delivery rules: 2xx is delivered; 401, 403, 408, 429 and 5xx, a timeout or
 * no connection are retried; any other 4xx means the worker will never take
 * the item, which is logged and dropped (counted as `rejected`).
 *
 * Thread-safety: every function may be called from any thread.
 */
#ifndef GIULIA_API_PUSHER_H
#define GIULIA_API_PUSHER_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* OBJECT_CODE: a batch of a node's object code (POST
 * /api/runtime/ingest/object_code), queued before the finalize it serves. */
enum api_push_kind { API_PUSH_INGEST, API_PUSH_FINALIZE, API_PUSH_OBJECT_CODE };

struct api_pusher_config {
	const char *worker_url; /* e.g. http://127.0.0.1:4000 */
	const char *token;      /* bearer token for the worker, or NULL */
	const char *spool_dir;  /* created if missing */
	size_t memory_items;    /* 0: 512 */
	size_t memory_bytes;    /* 0: 64 MB */
	size_t disk_bytes;      /* 0: 1 GB; beyond it new items are dropped and counted */
	int timeout_ms;         /* per request; 0: 15000 */
	/* Called from the delivery thread, without the pusher's lock, for each
	 * snapshot the worker refused for good (a 4xx other than 401, 403,
	 * 408, 429): its session, the worker's status and error text
	 * (borrowed for the call). NULL: none. */
	void (*on_refused)(void *ctx, const char *session_id, int status, const char *error);
	void *ctx;
};

struct api_pusher;

/* Starts the delivery thread, first re-queueing what an earlier run left in
 * the spool. *out: free with api_pusher_free. */
int api_pusher_new(const struct api_pusher_config *cfg, struct api_pusher **out);

/* Queues `body` (borrowed; serialised at once) for delivery. Returns 0, or
 * GI_ETOOBIG when the queue and the spool are both full (the item is dropped). */
int api_pusher_push(struct api_pusher *p, enum api_push_kind kind, json_t *body);
/* The same for a body already serialised (compact JSON, `len` bytes,
 * borrowed and copied): a caller that needs the text for something else
 * too serialises once. */
int api_pusher_push_text(struct api_pusher *p, enum api_push_kind kind, const char *text,
                         size_t len);

/* How many items of `session_id` were dropped (queue and spool full) since
 * the last call for it; forgets the count. */
uint64_t api_pusher_dropped_of(struct api_pusher *p, const char *session_id);

/* Waits up to `timeout_ms` until the finalize of `session_id` has been
 * delivered; *response_out (caller decrefs) is the worker's answer. Returns
 * 0, or GI_ETIMEOUT. */
int api_pusher_wait_finalize(struct api_pusher *p, const char *session_id, int timeout_ms,
                             json_t **response_out);

/* Waits up to `timeout_ms` until the queue is empty; 0 or GI_ETIMEOUT. */
int api_pusher_drain(struct api_pusher *p, int timeout_ms);

/* {worker_url, queued_memory, queued_disk, delivered, retries, rejected,
 *  dropped, worker_reachable, last_error, reserve_held, connections,
 *  batches, batched, previous_run}; connections: how many connections to
 *  the worker were opened (kept alive between items: one more per worker
 *  restart or idle close); batches: batch requests answered (what was
 *  queued together, POST /api/runtime/ingest/batch), batched: the items
 *  they settled
 * (caller decrefs). previous_run: what the run before this one on the same
 * spool could not deliver ({ingest, finalize, objectcode: counts,
 * sessions: {id: count}, stopped_ms}), or null. */
json_t *api_pusher_stats(struct api_pusher *p);

/* Tries to deliver what is queued for up to `flush_ms`, spills the rest to
 * the spool, stops the thread and frees. NULL does nothing. */
void api_pusher_free(struct api_pusher *p, int flush_ms);

#endif
