/*
 * mcp_jsonrpc.c - libFuzzer target for the MCP server's JSON-RPC framing and
 * dispatch (src/mcp): any bytes, as one stdio line or as the body of a
 * Streamable HTTP POST (with the first byte choosing the headers), get a
 * well-formed reply or none, and never crash or leak. Daemon calls go to a
 * port where nothing listens, so tools fail fast with isError results.
 * needs:
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/alloc.h"
#include "mcp/mcp.h"

int cli_exit_code_for(int gi_error);
int cli_exit_code_for(int gi_error)
{
	return gi_error ? 1 : 0;
}

static struct mcp_server *server;

static struct mcp_server *server_get(void)
{
	if (!server) {
		struct mcp_config cfg = {
		    .static_in_process = false,
		    .worker_url = "http://127.0.0.1:1",
		    .monitor_url = "http://127.0.0.1:1",
		    .transport = "http",
		};
		if (mcp_server_new(&cfg, &server) != 0)
			abort();
	}
	return server;
}

static void reply_check(const char *reply)
{
	if (!reply)
		return;
	json_t *j = json_loads(reply, JSON_DECODE_ANY, NULL);
	if (!j || !(json_is_object(j) || json_is_array(j)))
		abort();
	json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mcp_server *s = server_get();
	static const char *const revisions[] = {"", "2025-11-25", "2025-06-18", "2025-03-26",
	                                        "2024-11-05"};
	if (size == 0)
		return 0;
	uint8_t mode = data[0];
	const char *body = (const char *)data + 1;
	size_t len = size - 1;

	struct mcp_session sess;
	memset(&sess, 0, sizeof(sess));
	const char *rev = revisions[mode % 5];
	memcpy(sess.revision, rev, strlen(rev) + 1);
	sess.initialized = rev[0] != '\0';
	char *reply = NULL;
	mcp_session_handle(s, &sess, body, len, &reply, NULL);
	reply_check(reply);
	gi_free(reply);

	static const char *const origins[] = {NULL, "http://localhost:1", "http://evil.example",
	                                      "null"};
	static const char *const accepts[] = {NULL, "application/json", "text/event-stream",
	                                      "text/html"};
	static const char *const methods[] = {"POST", "POST", "GET", "DELETE"};
	struct mcp_http_request req = {
	    .method = methods[(mode >> 2) & 3],
	    .origin = origins[(mode >> 4) & 3],
	    .accept = accepts[(mode >> 6) & 3],
	    .protocol_version = (mode & 1) ? rev : NULL,
	    .session_id = (mode & 2) ? "00000000000000000000000000000000" : NULL,
	    .body = body,
	    .body_len = len,
	};
	struct mcp_http_response resp;
	mcp_http_handle(s, &req, &resp);
	if (resp.status < 200 || resp.status > 599 || (resp.body && !resp.content_type))
		abort();
	gi_free(resp.body);
	return 0;
}
