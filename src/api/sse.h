/*
 * sse.h - a hub of Server-Sent Event streams per node: the monitor publishes
 * each snapshot (and each alert when it starts to fire) as an event, and
 * every client streaming that node receives it in order.
 *
 * Invariants:
 *  - event ids are one increasing counter for the whole hub (1, 2, ...), so
 *    that a client's `Last-Event-ID` names a point in every node's stream;
 *  - each node keeps its last `ring` events, and no more than
 *    API_SSE_RING_BYTES of them (snapshots of a busy node are tens of
 *    kilobytes; a monitor of a hundred nodes must not keep hundreds of each,
 *    docs/API.md), the newest always: a client resuming with
 *    Last-Event-ID N gets every one of them with an id above N, in order;
 *    when some were pushed out of the ring meanwhile, it first gets one
 *    `gap` event ({"from": N+1, "to": first-1}) instead of a silent hole;
 *  - a client that names no Last-Event-ID gets the node's latest event of
 *    each kind it has (the current picture), then everything new;
 *  - a stream that has nothing to send writes a comment line (": heartbeat")
 *    every `heartbeat_ms`, so that proxies keep it open and a client that
 *    went away is noticed;
 *  - at most `client_cap` streams at once: api_sse_open answers GI_EBUSY
 *    beyond it;
 *  - api_sse_hub_close ends every stream at its next read (the server can
 *    then stop without waiting for them).
 *
 * Thread-safety: every function is thread-safe; streams are read on the
 * HTTP server's connection threads while the observer's thread publishes.
 */
#ifndef GIULIA_API_SSE_H
#define GIULIA_API_SSE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/http.h"

#define API_SSE_CLIENT_CAP_DEFAULT   256
#define API_SSE_RING_DEFAULT         512
#define API_SSE_HEARTBEAT_MS_DEFAULT 15000
#define API_SSE_NODES_MAX            1024         /* nodes with a ring; more are not published */
#define API_SSE_RING_BYTES           (128 * 1024) /* per node */

struct api_sse_hub;

/* A new hub; 0 for any argument takes its default. Free with api_sse_hub_free. */
struct api_sse_hub *api_sse_hub_new(int client_cap, int ring, int heartbeat_ms);
/* Ends every stream at its next read (they answer end of stream) and
 * refuses new ones. Idempotent. */
void api_sse_hub_close(struct api_sse_hub *hub);
/* Frees the hub; every stream it opened must have been released (done)
 * before. NULL does nothing. */
void api_sse_hub_free(struct api_sse_hub *hub);

/* Publishes one event of kind `event` ([a-z_]+) for `node` with `data`
 * (borrowed, serialised at once). Returns the event's id, 0 when the hub
 * is closed or full of nodes. */
uint64_t api_sse_publish(struct api_sse_hub *hub, const char *node, const char *event,
                         json_t *data);
/* The same with `data` already serialised: one line of JSON (compact: no
 * CR or LF in it), borrowed. */
uint64_t api_sse_publish_text(struct api_sse_hub *hub, const char *node, const char *event,
                              const char *json);

/* Opens a stream of `node` into *resp (status 200, text/event-stream, the
 * read/done/stream members); `last_event_id` NULL or "" for a new client,
 * else the id the client saw last (digits; anything else counts as none).
 * Returns 0, or GI_EBUSY over the client cap or once the hub is closed. */
int api_sse_open(struct api_sse_hub *hub, const char *node, const char *last_event_id,
                 struct api_raw_response *resp);

/* Streams open now (for status and tests). */
int api_sse_clients(struct api_sse_hub *hub);

#endif
