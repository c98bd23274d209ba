/*
 * Unit tests of the Server-Sent Events hub behind GET /api/monitor/stream
 * (src/api/sse.c): a client that reconnects with Last-Event-ID gets every
 * event it missed, in order, and only those; a ring that overflowed says so
 * with a gap event, and so does one bounded by its bytes; a new client starts from the latest
 * picture; heartbeats when idle; the client cap; close ends every stream; data stays on one line
 * whatever the strings hold. The stream's read callback is called the way the HTTP server calls it.
 * needs:
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/sse.h"
#include "base/buf.h"
#include "base/error.h"
#include "harness.h"

#define HEARTBEAT_MS 30

/* Reads a stream until a heartbeat shows it has nothing more (or the hub
 * closes it), into `out`; returns the last read's result. */
static long drain(struct api_raw_response *r, struct gi_buf *out)
{
	char buf[512];
	for (int i = 0; i < 10000; i++) {
		long n = r->read(r->stream, buf, sizeof(buf));
		if (n < 0)
			return n;
		gi_buf_append(out, buf, (size_t)n);
		if (strstr(gi_buf_str(out), ": heartbeat\n\n"))
			return n;
	}
	return 0;
}

/* The ids of the events in `text`, comma-separated ("3,4,5"). */
static void ids_of(const char *text, char *out, size_t size)
{
	out[0] = '\0';
	size_t len = 0;
	for (const char *p = strstr(text, "id: "); p; p = strstr(p + 1, "\nid: ")) {
		const char *v = p[0] == '\n' ? p + 5 : p + 4;
		int n =
		    snprintf(out + len, size - len, "%s%lld", len ? "," : "", strtoll(v, NULL, 10));
		if (n < 0 || (size_t)n >= size - len)
			break;
		len += (size_t)n;
	}
}

static void publish(struct api_sse_hub *hub, const char *node, int seq)
{
	json_t *d = json_pack("{s:i}", "seq", seq);
	TH_ASSERT(api_sse_publish(hub, node, "snapshot", d) > 0);
	json_decref(d);
}

static void open_stream(struct api_sse_hub *hub, const char *node, const char *last,
                        struct api_raw_response *r)
{
	memset(r, 0, sizeof(*r));
	TH_ASSERT_OK(api_sse_open(hub, node, last, r));
	TH_ASSERT_INT_EQ(r->status, 200);
	TH_ASSERT_STR_EQ(r->content_type, "text/event-stream");
}

static void reconnect_with_last_event_id_loses_nothing(void)
{
	struct api_sse_hub *hub = api_sse_hub_new(0, 0, HEARTBEAT_MS);
	publish(hub, "a@h", 0); /* id 1 */
	publish(hub, "b@h", 0); /* id 2: another node's */
	publish(hub, "a@h", 1); /* id 3 */
	struct api_raw_response r;
	open_stream(hub, "a@h", NULL, &r);
	struct gi_buf got;
	gi_buf_init(&got, 0);
	drain(&r, &got);
	char ids[256];
	ids_of(gi_buf_str(&got), ids, sizeof(ids));
	/* A new client: the latest snapshot only, after the retry advice. */
	TH_ASSERT_STR_EQ(ids, "3");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&got), "retry: 2000\n\n");
	publish(hub, "a@h", 2); /* id 4 */
	publish(hub, "a@h", 3); /* id 5 */
	gi_buf_reset(&got);
	drain(&r, &got);
	ids_of(gi_buf_str(&got), ids, sizeof(ids));
	TH_ASSERT_STR_EQ(ids, "4,5");
	r.done(r.stream); /* the client goes away */

	for (int i = 4; i < 8; i++) /* ids 6..9 while it is away, one of b's */
		publish(hub, i == 5 ? "b@h" : "a@h", i);
	open_stream(hub, "a@h", "5", &r);
	gi_buf_reset(&got);
	drain(&r, &got);
	ids_of(gi_buf_str(&got), ids, sizeof(ids));
	TH_ASSERT_STR_EQ(ids, "6,8,9");
	TH_ASSERT(!strstr(gi_buf_str(&got), "event: gap"));
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&got), "id: 6\nevent: snapshot\ndata: {\"seq\":4}\n\n");
	r.done(r.stream);
	gi_buf_destroy(&got);
	TH_ASSERT_INT_EQ(api_sse_clients(hub), 0);
	api_sse_hub_free(hub);
}

static void overflowed_ring_sends_a_gap(void)
{
	struct api_sse_hub *hub = api_sse_hub_new(0, 4, HEARTBEAT_MS);
	for (int i = 0; i < 10; i++) /* ids 1..10; the ring keeps 7..10 */
		publish(hub, "a@h", i);
	struct api_raw_response r;
	open_stream(hub, "a@h", "2", &r);
	struct gi_buf got;
	gi_buf_init(&got, 0);
	drain(&r, &got);
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&got), "event: gap\ndata: {\"from\":3,\"to\":6}\n\n");
	char ids[256];
	ids_of(gi_buf_str(&got), ids, sizeof(ids));
	TH_ASSERT_STR_EQ(ids, "7,8,9,10");
	r.done(r.stream);
	/* An id this hub never gave (a previous run's): a fresh start. */
	open_stream(hub, "a@h", "99", &r);
	gi_buf_reset(&got);
	drain(&r, &got);
	ids_of(gi_buf_str(&got), ids, sizeof(ids));
	TH_ASSERT_STR_EQ(ids, "10");
	r.done(r.stream);
	/* Not a number: a fresh start too. */
	open_stream(hub, "a@h", "1; drop", &r);
	gi_buf_reset(&got);
	drain(&r, &got);
	ids_of(gi_buf_str(&got), ids, sizeof(ids));
	TH_ASSERT_STR_EQ(ids, "10");
	r.done(r.stream);
	gi_buf_destroy(&got);
	api_sse_hub_free(hub);
}

/* Large events (a busy node's snapshots) are kept by bytes, not only by
 * count: a hundred nodes must not hold 512 snapshots each. The newest is
 * always kept, whatever its size. */
static void the_ring_is_bounded_in_bytes(void)
{
	struct api_sse_hub *hub = api_sse_hub_new(0, 0, HEARTBEAT_MS);
	enum { EVENT_BYTES = 20000, EVENTS = 20 };
	char *pad = malloc(EVENT_BYTES + 1);
	memset(pad, 'x', EVENT_BYTES);
	pad[EVENT_BYTES] = '\0';
	for (int i = 0; i < EVENTS; i++) { /* ids 1..20 */
		json_t *d = json_pack("{s:i, s:s}", "seq", i, "pad", pad);
		TH_ASSERT(api_sse_publish(hub, "a@h", "snapshot", d) > 0);
		json_decref(d);
	}
	struct api_raw_response r;
	open_stream(hub, "a@h", "1", &r);
	struct gi_buf got;
	gi_buf_init(&got, 0);
	drain(&r, &got);
	char ids[256];
	ids_of(gi_buf_str(&got), ids, sizeof(ids));
	/* 128 KiB hold 6 of them: 15..20, and a gap says what went before. */
	TH_ASSERT_STR_EQ(ids, "15,16,17,18,19,20");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&got), "event: gap\ndata: {\"from\":2,\"to\":14}\n\n");
	r.done(r.stream);
	/* One event over the budget on its own is still the node's latest. */
	char *big = malloc(API_SSE_RING_BYTES + 2);
	memset(big, 'y', API_SSE_RING_BYTES + 1);
	big[API_SSE_RING_BYTES + 1] = '\0';
	json_t *d = json_pack("{s:s}", "pad", big);
	TH_ASSERT_INT_EQ(api_sse_publish(hub, "a@h", "snapshot", d), 21);
	json_decref(d);
	open_stream(hub, "a@h", NULL, &r);
	gi_buf_reset(&got);
	drain(&r, &got);
	ids_of(gi_buf_str(&got), ids, sizeof(ids));
	TH_ASSERT_STR_EQ(ids, "21");
	r.done(r.stream);
	gi_buf_destroy(&got);
	free(big);
	free(pad);
	api_sse_hub_free(hub);
}

static void idle_stream_sends_heartbeats_and_close_ends_it(void)
{
	struct api_sse_hub *hub = api_sse_hub_new(0, 0, HEARTBEAT_MS);
	struct api_raw_response r;
	open_stream(hub, "quiet@h", NULL, &r);
	struct gi_buf got;
	gi_buf_init(&got, 0);
	TH_ASSERT(drain(&r, &got) > 0);
	TH_ASSERT_STR_EQ(gi_buf_str(&got), "retry: 2000\n\n: heartbeat\n\n");
	api_sse_hub_close(hub);
	char buf[64];
	TH_ASSERT_INT_EQ(r.read(r.stream, buf, sizeof(buf)), -1);
	json_t *late = json_object();
	TH_ASSERT_INT_EQ(api_sse_publish(hub, "quiet@h", "snapshot", late), 0);
	json_decref(late);
	struct api_raw_response r2;
	memset(&r2, 0, sizeof(r2));
	TH_ASSERT_INT_EQ(api_sse_open(hub, "quiet@h", NULL, &r2), GI_EBUSY);
	r.done(r.stream);
	gi_buf_destroy(&got);
	api_sse_hub_free(hub);
}

static void client_cap_refuses_then_frees_a_slot(void)
{
	struct api_sse_hub *hub = api_sse_hub_new(2, 0, HEARTBEAT_MS);
	struct api_raw_response a, b, c;
	open_stream(hub, "a@h", NULL, &a);
	open_stream(hub, "b@h", NULL, &b);
	memset(&c, 0, sizeof(c));
	TH_ASSERT_INT_EQ(api_sse_open(hub, "a@h", NULL, &c), GI_EBUSY);
	TH_ASSERT_INT_EQ(api_sse_clients(hub), 2);
	a.done(a.stream);
	open_stream(hub, "a@h", NULL, &c);
	b.done(b.stream);
	c.done(c.stream);
	TH_ASSERT_INT_EQ(api_sse_clients(hub), 0);
	api_sse_hub_free(hub);
}

static void hostile_data_stays_on_one_line(void)
{
	struct api_sse_hub *hub = api_sse_hub_new(0, 0, HEARTBEAT_MS);
	json_t *d =
	    json_pack("{s:s}", "module", "A\n\ndata: forged\r\nid: 999\n</script>\xe2\x80\xa8");
	TH_ASSERT(api_sse_publish(hub, "a@h", "snapshot", d) > 0);
	json_decref(d);
	/* Names and kinds outside their alphabets are refused. */
	TH_ASSERT_INT_EQ(api_sse_publish(hub, "not a node", "snapshot", NULL), 0);
	TH_ASSERT_INT_EQ(api_sse_publish(hub, "a@h", "snap\nshot", NULL), 0);
	struct api_raw_response r;
	open_stream(hub, "a@h", "0", &r);
	struct gi_buf got;
	gi_buf_init(&got, 0);
	drain(&r, &got);
	const char *t = gi_buf_str(&got);
	const char *data = strstr(t, "data: ");
	TH_ASSERT(data != NULL);
	const char *eol = strchr(data, '\n');
	TH_ASSERT(eol && eol[1] == '\n'); /* the event ends right after its one data line */
	TH_ASSERT(!strstr(t, "\nid: 999"));
	TH_ASSERT(!memchr(data, '\r', (size_t)(eol - data)));
	r.done(r.stream);
	gi_buf_destroy(&got);
	api_sse_hub_free(hub);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(reconnect_with_last_event_id_loses_nothing),
	    TH_TEST(overflowed_ring_sends_a_gap),
	    TH_TEST(the_ring_is_bounded_in_bytes),
	    TH_TEST(idle_stream_sends_heartbeats_and_close_ends_it),
	    TH_TEST(client_cap_refuses_then_frees_a_slot),
	    TH_TEST(hostile_data_stays_on_one_line),
	    TH_END,
	};
	return th_main(argc, argv, "unit_api_sse", tests);
}
