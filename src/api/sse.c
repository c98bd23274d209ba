/*
 * sse.c - the hub of Server-Sent Event streams (see sse.h).
 *
 * Each node has a ring of formatted events (the exact bytes sent: "id: N\n
 * event: KIND\ndata: JSON\n\n"), so that a resume copies bytes and never
 * serialises twice. A stream remembers the id it has sent up to and, on
 * each read, copies the next events of its node's ring into its pending
 * buffer; with nothing new it waits on the hub's condition variable for at
 * most the time left to its next heartbeat. One lock guards the hub: the
 * work done under it is a copy of a few kilobytes.
 */
#include "api/sse.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/map.h"
#include "base/str.h"

#define LATEST_KINDS 4 /* kinds of event whose latest a new client gets */

struct sse_event {
	uint64_t id;
	char kind[24];
	char *text; /* the formatted event */
	size_t len;
};

struct sse_ring {
	struct sse_event *events; /* `cap` slots, oldest at `head` */
	int head, count, cap;
	size_t bytes; /* of the events' texts, at most API_SSE_RING_BYTES past the newest */
};

struct api_sse_hub {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	struct gi_map nodes; /* node -> struct sse_ring* */
	int nodes_count;
	uint64_t next_id;
	int clients, client_cap, ring_cap, heartbeat_ms;
	bool closed;
};

struct sse_stream {
	struct api_sse_hub *hub;
	char node[API_NODE_NAME_MAX + 1];
	uint64_t sent; /* the id of the last event copied to `pending` */
	bool fresh;    /* no Last-Event-ID: start with the latest of each kind */
	bool started;  /* the retry line was sent */
	struct gi_buf pending;
	size_t offset; /* bytes of `pending` already handed out */
	int64_t last_write_ms;
};

struct api_sse_hub *api_sse_hub_new(int client_cap, int ring, int heartbeat_ms)
{
	struct api_sse_hub *hub = gi_calloc(1, sizeof(*hub));
	pthread_mutex_init(&hub->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&hub->changed, &ca);
	pthread_condattr_destroy(&ca);
	gi_map_init(&hub->nodes);
	hub->next_id = 1;
	hub->client_cap = client_cap > 0 ? client_cap : API_SSE_CLIENT_CAP_DEFAULT;
	hub->ring_cap = ring > 0 ? ring : API_SSE_RING_DEFAULT;
	hub->heartbeat_ms = heartbeat_ms > 0 ? heartbeat_ms : API_SSE_HEARTBEAT_MS_DEFAULT;
	return hub;
}

void api_sse_hub_close(struct api_sse_hub *hub)
{
	if (!hub)
		return;
	pthread_mutex_lock(&hub->lock);
	hub->closed = true;
	pthread_cond_broadcast(&hub->changed);
	pthread_mutex_unlock(&hub->lock);
}

void api_sse_hub_free(struct api_sse_hub *hub)
{
	if (!hub)
		return;
	for (size_t i = 0; i < hub->nodes.cap; i++) {
		struct sse_ring *r = hub->nodes.slots[i].key ? hub->nodes.slots[i].value : NULL;
		if (!r)
			continue;
		for (int k = 0; k < r->count; k++)
			gi_free(r->events[(r->head + k) % r->cap].text);
		gi_free(r->events);
		gi_free(r);
	}
	gi_map_destroy(&hub->nodes);
	pthread_cond_destroy(&hub->changed);
	pthread_mutex_destroy(&hub->lock);
	gi_free(hub);
}

static bool kind_valid(const char *kind)
{
	size_t n = strlen(kind);
	if (n == 0 || n >= sizeof(((struct sse_event *)0)->kind))
		return false;
	for (const char *p = kind; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || *p == '_'))
			return false;
	return true;
}

uint64_t api_sse_publish(struct api_sse_hub *hub, const char *node, const char *event, json_t *data)
{
	/* JSON_COMPACT output has no newline, so one data: line holds it. */
	char *json = json_dumps(data, JSON_COMPACT | JSON_ENSURE_ASCII);
	if (!json)
		return 0;
	uint64_t id = api_sse_publish_text(hub, node, event, json);
	free(json); /* jansson's allocator */
	return id;
}

uint64_t api_sse_publish_text(struct api_sse_hub *hub, const char *node, const char *event,
                              const char *json)
{
	size_t json_len = json ? strlen(json) : 0;
	if (!hub || !node || !json || !api_node_name_valid(node) || !kind_valid(event) ||
	    memchr(json, '\n', json_len) || memchr(json, '\r', json_len))
		return 0;
	uint64_t id = 0;
	pthread_mutex_lock(&hub->lock);
	struct sse_ring *r = gi_map_get(&hub->nodes, node);
	if (!r && !hub->closed && hub->nodes_count < API_SSE_NODES_MAX) {
		r = gi_calloc(1, sizeof(*r));
		r->cap = hub->ring_cap;
		r->events = gi_calloc((size_t)r->cap, sizeof(*r->events));
		gi_map_put(&hub->nodes, node, r);
		hub->nodes_count++;
	}
	if (r && !hub->closed) {
		id = hub->next_id++;
		struct gi_buf b;
		gi_buf_init(&b, 0);
		gi_buf_reserve(&b, json_len + 64);
		/* appended rather than printed: a snapshot's data is kilobytes */
		gi_buf_printf(&b, "id: %llu\nevent: %s\ndata: ", (unsigned long long)id, event);
		gi_buf_append(&b, json, json_len);
		GI_BUF_LIT(&b, "\n\n");
		/* Room: a slot, and the byte budget (the oldest go first, the
		 * newest always stays whatever its size). */
		while (r->count > 0 &&
		       (r->count == r->cap || r->bytes + b.len > API_SSE_RING_BYTES)) {
			struct sse_event *old = &r->events[r->head];
			r->bytes -= old->len;
			gi_free(old->text);
			old->text = NULL;
			r->head = (r->head + 1) % r->cap;
			r->count--;
		}
		struct sse_event *slot = &r->events[(r->head + r->count) % r->cap];
		r->count++;
		slot->id = id;
		gi_strlcpy(slot->kind, event, sizeof(slot->kind));
		slot->len = b.len;
		r->bytes += b.len;
		slot->text = gi_buf_take(&b);
		pthread_cond_broadcast(&hub->changed);
	}
	pthread_mutex_unlock(&hub->lock);
	return id;
}

/* Under the lock: copies the events due to `st` into its pending buffer;
 * returns true when it copied anything. */
static bool stream_collect(struct sse_stream *st)
{
	struct sse_ring *r = gi_map_get(&st->hub->nodes, st->node);
	if (!r || r->count == 0)
		return false;
	bool any = false;
	if (st->fresh) {
		/* The latest event of each kind, oldest first, then go on from the
		 * newest: the current picture without the backlog. */
		st->fresh = false;
		const char *kinds[LATEST_KINDS];
		int idx[LATEST_KINDS], nk = 0;
		for (int k = r->count - 1; k >= 0; k--) {
			int i = (r->head + k) % r->cap;
			bool seen = false;
			for (int j = 0; j < nk; j++)
				seen = seen || strcmp(kinds[j], r->events[i].kind) == 0;
			if (!seen && nk < LATEST_KINDS) {
				kinds[nk] = r->events[i].kind;
				idx[nk++] = i;
			}
		}
		for (int j = nk - 1; j >= 0; j--)
			gi_buf_append(&st->pending, r->events[idx[j]].text, r->events[idx[j]].len);
		st->sent = r->events[(r->head + r->count - 1) % r->cap].id;
		return nk > 0;
	}
	uint64_t first = r->events[r->head].id;
	if (st->sent + 1 < first) {
		gi_buf_printf(&st->pending, "event: gap\ndata: {\"from\":%llu,\"to\":%llu}\n\n",
		              (unsigned long long)(st->sent + 1), (unsigned long long)(first - 1));
		any = true;
	}
	for (int k = 0; k < r->count; k++) {
		struct sse_event *e = &r->events[(r->head + k) % r->cap];
		if (e->id <= st->sent)
			continue;
		gi_buf_append(&st->pending, e->text, e->len);
		st->sent = e->id;
		any = true;
	}
	return any;
}

static long stream_read(void *arg, char *buf, size_t max)
{
	struct sse_stream *st = arg;
	struct api_sse_hub *hub = st->hub;
	if (st->offset >= st->pending.len) {
		gi_buf_reset(&st->pending);
		st->offset = 0;
		if (!st->started) {
			st->started = true;
			gi_buf_puts(&st->pending, "retry: 2000\n\n");
		}
		pthread_mutex_lock(&hub->lock);
		while (!hub->closed && st->pending.len == 0 && !stream_collect(st)) {
			int64_t due = st->last_write_ms + hub->heartbeat_ms;
			int64_t now = gi_clock_mono_ms();
			if (now >= due) {
				gi_buf_puts(&st->pending, ": heartbeat\n\n");
				break;
			}
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			int64_t ns = (int64_t)ts.tv_nsec + (due - now) * 1000000LL;
			ts.tv_sec += (time_t)(ns / 1000000000LL);
			ts.tv_nsec = (long)(ns % 1000000000LL);
			pthread_cond_timedwait(&hub->changed, &hub->lock, &ts);
		}
		bool closed = hub->closed;
		pthread_mutex_unlock(&hub->lock);
		if (closed)
			return -1;
	}
	size_t n = st->pending.len - st->offset;
	if (n > max)
		n = max;
	memcpy(buf, st->pending.data + st->offset, n);
	st->offset += n;
	st->last_write_ms = gi_clock_mono_ms();
	return (long)n;
}

static void stream_done(void *arg)
{
	struct sse_stream *st = arg;
	pthread_mutex_lock(&st->hub->lock);
	st->hub->clients--;
	pthread_mutex_unlock(&st->hub->lock);
	gi_buf_destroy(&st->pending);
	gi_free(st);
}

int api_sse_open(struct api_sse_hub *hub, const char *node, const char *last_event_id,
                 struct api_raw_response *resp)
{
	int64_t last = -1;
	if (last_event_id && last_event_id[0] &&
	    gi_parse_int64(last_event_id, 0, INT64_MAX, &last) != 0)
		last = -1;
	pthread_mutex_lock(&hub->lock);
	bool refused = hub->closed || hub->clients >= hub->client_cap;
	if (!refused)
		hub->clients++;
	/* An id this hub never gave (a client of a previous daemon run) starts
	 * afresh rather than waiting for the counter to pass it. */
	if (last >= 0 && (uint64_t)last >= hub->next_id)
		last = -1;
	pthread_mutex_unlock(&hub->lock);
	if (refused)
		return GI_EBUSY;
	struct sse_stream *st = gi_calloc(1, sizeof(*st));
	st->hub = hub;
	gi_strlcpy(st->node, node, sizeof(st->node));
	st->fresh = last < 0;
	st->sent = last < 0 ? 0 : (uint64_t)last;
	gi_buf_init(&st->pending, 0);
	st->last_write_ms = gi_clock_mono_ms();
	resp->status = 200;
	resp->content_type = "text/event-stream";
	resp->header_names[0] = "Cache-Control";
	gi_strlcpy(resp->header_values[0], "no-store", sizeof(resp->header_values[0]));
	resp->header_names[1] = "X-Accel-Buffering";
	gi_strlcpy(resp->header_values[1], "no", sizeof(resp->header_values[1]));
	resp->nheaders = 2;
	resp->read = stream_read;
	resp->done = stream_done;
	resp->stream = st;
	return 0;
}

int api_sse_clients(struct api_sse_hub *hub)
{
	pthread_mutex_lock(&hub->lock);
	int n = hub->clients;
	pthread_mutex_unlock(&hub->lock);
	return n;
}
