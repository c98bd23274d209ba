/*
 * Unit tests of the MCP core (src/mcp): Origin rules, revision negotiation,
 * argument checks against the schemas, and the HTTP transport's status
 * codes, on a server whose daemons are a port where nothing listens.
 * needs:
 */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "harness.h"
#include "mcp/mcp.h"

static struct mcp_server *server_new(const char *transport)
{
	struct mcp_config cfg = {
	    .static_in_process = false,
	    .worker_url = "http://127.0.0.1:1",
	    .monitor_url = "http://127.0.0.1:1",
	    .transport = transport,
	};
	struct mcp_server *s = NULL;
	TH_ASSERT_OK(mcp_server_new(&cfg, &s));
	return s;
}

/* Sends `text` on `sess` and returns the parsed reply (caller decrefs). */
static json_t *ask(struct mcp_server *s, struct mcp_session *sess, const char *text)
{
	char *reply = NULL;
	mcp_session_handle(s, sess, text, strlen(text), &reply, NULL);
	json_t *j = reply ? json_loads(reply, JSON_DECODE_ANY, NULL) : NULL;
	gi_free(reply);
	return j;
}

static const char *tool_text(json_t *reply)
{
	json_t *content = json_object_get(json_object_get(reply, "result"), "content");
	return json_string_value(json_object_get(json_array_get(content, 0), "text"));
}

static void origins(void)
{
	TH_ASSERT(mcp_origin_is_loopback("http://localhost"));
	TH_ASSERT(mcp_origin_is_loopback("http://localhost:6274"));
	TH_ASSERT(mcp_origin_is_loopback("https://127.0.0.1:4000"));
	TH_ASSERT(mcp_origin_is_loopback("http://127.1.2.3"));
	TH_ASSERT(mcp_origin_is_loopback("http://[::1]:80"));
	TH_ASSERT(mcp_origin_is_loopback("http://LOCALHOST/"));
	TH_ASSERT(!mcp_origin_is_loopback("http://localhost.evil.com"));
	TH_ASSERT(!mcp_origin_is_loopback("http://127.0.0.1.evil.com"));
	TH_ASSERT(!mcp_origin_is_loopback("http://evil.com"));
	TH_ASSERT(!mcp_origin_is_loopback("null"));
	TH_ASSERT(!mcp_origin_is_loopback("file://"));
	TH_ASSERT(!mcp_origin_is_loopback("http://localhost:99999999"));
	TH_ASSERT(!mcp_origin_is_loopback("http://[::2]"));
	TH_ASSERT(!mcp_origin_is_loopback("http://127.0.0.1@evil.com"));
}

static void revisions_and_arguments(void)
{
	TH_ASSERT(mcp_revision_supported("2025-11-25"));
	TH_ASSERT(mcp_revision_supported("2024-11-05"));
	TH_ASSERT(!mcp_revision_supported("2026-07-28"));
	struct mcp_server *s = server_new("stdio");
	struct mcp_session sess;
	memset(&sess, 0, sizeof(sess));
	json_t *r = ask(s, &sess,
	                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
	                "\"protocolVersion\":\"2025-06-18\"}}");
	TH_ASSERT_STR_EQ(sess.revision, "2025-06-18");
	TH_ASSERT(json_is_true(json_object_get(
	    json_object_get(json_object_get(json_object_get(r, "result"), "capabilities"),
	                    "resources"),
	    "listChanged")));
	json_decref(r);

	r = ask(s, &sess,
	        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
	        "\"knowledge_impact\",\"arguments\":{\"module\":\"A\",\"depth\":0}}}");
	TH_ASSERT_STR_CONTAINS(tool_text(r), "from 1 to 1000");
	json_decref(r);
	r = ask(s, &sess,
	        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
	        "\"runtime_profile\",\"arguments\":{\"format\":\"html\"}}}");
	TH_ASSERT_STR_CONTAINS(tool_text(r), "one of: json, text");
	json_decref(r);
	r = ask(s, &sess,
	        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
	        "\"index_modules\",\"arguments\":{\"colour\":\"red\"}}}");
	TH_ASSERT_STR_CONTAINS(tool_text(r), "no argument 'colour'");
	json_decref(r);
	r = ask(s, &sess,
	        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":"
	        "\"runtime_profiles\"}}");
	TH_ASSERT_STR_CONTAINS(tool_text(r), "giulia serve");
	json_decref(r);
	r = ask(s, &sess,
	        "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":"
	        "\"runtime_trace\",\"arguments\":{\"node\":\"a@b\",\"modules\":[\"x\"]}}}");
	TH_ASSERT_STR_CONTAINS(tool_text(r), "stdio"); /* this server is the worker's kind */
	json_decref(r);
	r = ask(s, &sess,
	        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":"
	        "\"runtime_pulse\",\"arguments\":{\"node\":\"a@b\"}}}");
	TH_ASSERT_STR_CONTAINS(tool_text(r), "--allow-runtime");
	json_decref(r);
	/* a response from the client, and a notification: nothing to answer */
	TH_ASSERT(!ask(s, &sess, "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}"));
	TH_ASSERT(!ask(s, &sess, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\"}"));
	mcp_server_free(s);
}

static void http_statuses(void)
{
	struct mcp_server *s = server_new("http");
	const char *init = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
	                   "\"protocolVersion\":\"2025-11-25\"}}";
	struct mcp_http_request req = {.method = "POST", .body = init, .body_len = strlen(init)};
	struct mcp_http_response resp;
	mcp_http_handle(s, &req, &resp);
	TH_ASSERT_INT_EQ(resp.status, 200);
	TH_ASSERT_INT_EQ(strlen(resp.session_id), 32);
	char sid[40];
	memcpy(sid, resp.session_id, sizeof(sid));
	gi_free(resp.body);

	req.accept = "text/html";
	mcp_http_handle(s, &req, &resp);
	TH_ASSERT_INT_EQ(resp.status, 406);
	gi_free(resp.body);
	req.accept = NULL;

	const char *ping = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}";
	req.body = ping;
	req.body_len = strlen(ping);
	req.session_id = sid;
	req.protocol_version = "2025-06-18"; /* supported, but not this session's */
	mcp_http_handle(s, &req, &resp);
	TH_ASSERT_INT_EQ(resp.status, 400);
	gi_free(resp.body);
	req.protocol_version = "2025-11-25";
	req.accept = "text/event-stream";
	mcp_http_handle(s, &req, &resp);
	TH_ASSERT_INT_EQ(resp.status, 200);
	TH_ASSERT_STR_EQ(resp.content_type, "text/event-stream");
	gi_free(resp.body);

	/* the server keeps at most MCP_SESSIONS_MAX sessions: old ones go */
	req.session_id = NULL;
	req.protocol_version = NULL;
	req.accept = NULL;
	req.body = init;
	req.body_len = strlen(init);
	for (int i = 0; i < MCP_SESSIONS_MAX + 10; i++) {
		mcp_http_handle(s, &req, &resp);
		TH_ASSERT_INT_EQ(resp.status, 200);
		gi_free(resp.body);
	}
	req.session_id = sid;
	req.body = ping;
	req.body_len = strlen(ping);
	mcp_http_handle(s, &req, &resp);
	TH_ASSERT_INT_EQ(resp.status, 404);
	gi_free(resp.body);

	req.method = "GET";
	mcp_http_handle(s, &req, &resp);
	TH_ASSERT_INT_EQ(resp.status, 404); /* the evicted session */
	gi_free(resp.body);

	/* a stream: open, then ended by the shutdown */
	req.method = "POST";
	req.session_id = NULL;
	req.body = init;
	req.body_len = strlen(init);
	mcp_http_handle(s, &req, &resp);
	memcpy(sid, resp.session_id, sizeof(sid));
	gi_free(resp.body);
	req.method = "GET";
	req.session_id = sid;
	mcp_http_handle(s, &req, &resp);
	TH_ASSERT_INT_EQ(resp.status, 406); /* no Accept: text/event-stream */
	gi_free(resp.body);
	req.accept = "text/event-stream";
	mcp_http_handle(s, &req, &resp);
	TH_ASSERT_INT_EQ(resp.status, 200);
	TH_ASSERT(resp.read && resp.stream && !resp.body);
	char buf[256];
	long n = resp.read(resp.stream, buf, sizeof(buf));
	TH_ASSERT(n > 0 && buf[0] == ':');
	mcp_server_shutdown(s);
	TH_ASSERT_INT_EQ(resp.read(resp.stream, buf, sizeof(buf)), -1);
	resp.done(resp.stream);
	mcp_server_free(s);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(origins),
	    TH_TEST(revisions_and_arguments),
	    TH_TEST(http_statuses),
	    TH_END,
	};
	return th_main(argc, argv, "unit_mcp", tests);
}
