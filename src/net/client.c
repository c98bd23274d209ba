/*
 * client.c - JSON over HTTP with libcurl (see client.h).
 */
#include "net/client.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"

void net_client_global_init(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct gi_buf *b = userdata;
	size_t n = size * nmemb;
	if (gi_buf_append(b, ptr, n) != 0)
		return 0; /* aborts the transfer: CURLE_WRITE_ERROR */
	return n;
}

/* One request on `h` (its options set here, after a reset that keeps its
 * live connections); *connects_out: how many new connections it opened (0:
 * it went over a kept one). `fresh` forbids reusing one. */
static int perform_on(CURL *h, const struct net_call *call, bool fresh, int *status,
                      json_t **json_out, long *connects_out)
{
	*status = 0;
	*json_out = NULL;
	*connects_out = 0;
	struct gi_buf resp;
	gi_buf_init(&resp, NET_CLIENT_RESPONSE_LIMIT);
	struct curl_slist *headers = NULL;
	char auth[1024];
	int rc = 0;

	curl_easy_reset(h);
	headers = curl_slist_append(headers, "Content-Type: application/json");
	headers = curl_slist_append(headers, "Expect:");
	if (call->token && call->token[0]) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", call->token);
		headers = curl_slist_append(headers, auth);
	}
	curl_easy_setopt(h, CURLOPT_URL, call->url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS,
	                 (long)(call->timeout_ms > 0 ? call->timeout_ms : 30000));
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &resp);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (fresh)
		curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
	if (strcmp(call->method, "POST") == 0) {
		const char *body = call->body ? call->body : "{}";
		curl_easy_setopt(h, CURLOPT_POST, 1L);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
	} else if (strcmp(call->method, "GET") != 0) {
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, call->method);
	}
	CURLcode cc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, connects_out);
	if (cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST ||
	    cc == CURLE_GOT_NOTHING || cc == CURLE_RECV_ERROR || cc == CURLE_SEND_ERROR) {
		rc = GI_ECONNECT;
		goto out;
	}
	if (cc == CURLE_OPERATION_TIMEDOUT) {
		rc = GI_ETIMEOUT;
		goto out;
	}
	if (cc == CURLE_WRITE_ERROR) {
		rc = GI_ETOOBIG;
		goto out;
	}
	if (cc != CURLE_OK) {
		rc = GI_EHTTP;
		goto out;
	}
	long code = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	*status = (int)code;
	if (resp.len > 0)
		*json_out = json_loadb(resp.data, resp.len, 0, NULL);
out:
	curl_slist_free_all(headers);
	gi_buf_destroy(&resp);
	return rc;
}

int net_client_call(const struct net_call *call, int *status, json_t **json_out)
{
	*status = 0;
	*json_out = NULL;
	CURL *h = curl_easy_init();
	if (!h)
		return GI_EHTTP;
	long connects = 0;
	int rc = perform_on(h, call, false, status, json_out, &connects);
	curl_easy_cleanup(h);
	return rc;
}

struct net_client {
	CURL *h;
	unsigned long long connections;
};

struct net_client *net_client_new(void)
{
	struct net_client *c = gi_calloc(1, sizeof(*c));
	c->h = curl_easy_init();
	return c;
}

void net_client_free(struct net_client *c)
{
	if (!c)
		return;
	if (c->h)
		curl_easy_cleanup(c->h);
	gi_free(c);
}

int net_client_perform(struct net_client *c, const struct net_call *call, int *status,
                       json_t **json_out)
{
	if (!c->h)
		return net_client_call(call, status, json_out);
	long connects = 0;
	int rc = perform_on(c->h, call, false, status, json_out, &connects);
	if (rc == GI_ECONNECT && connects == 0) {
		/* It went over a kept connection that the server had closed:
		 * libcurl retries some of these itself, this covers the rest. The
		 * answer (or error) is now that of a fresh connection. */
		rc = perform_on(c->h, call, true, status, json_out, &connects);
	}
	if (rc == 0 && connects > 0)
		c->connections += (unsigned long long)connects;
	return rc;
}

unsigned long long net_client_connections(const struct net_client *c)
{
	return c ? c->connections : 0;
}

char *net_client_url(const char *base, const char *path, const char *const *query)
{
	struct gi_buf b;
	gi_buf_init(&b, 0);
	size_t blen = strlen(base);
	while (blen > 0 && base[blen - 1] == '/')
		blen--;
	gi_buf_append(&b, base, blen);
	gi_buf_puts(&b, path);
	char sep = '?';
	for (size_t i = 0; query && query[i]; i += 2) {
		if (!query[i + 1])
			continue;
		char *esc = curl_easy_escape(NULL, query[i + 1], 0);
		gi_buf_printf(&b, "%c%s=%s", sep, query[i], esc ? esc : "");
		curl_free(esc);
		sep = '&';
	}
	return gi_buf_take(&b);
}
