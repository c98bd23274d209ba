/*
 * client.c - JSON over HTTP with libcurl (see client.h).
 */
#include "net/client.h"

#define CURL_DISABLE_TYPECHECK /* the calls go through pointers (curl_api) */
#include <curl/curl.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/dynlib.h"
#include "base/error.h"
#include "base/log.h"

/* libcurl, loaded on first use (base/dynlib.h): a process that speaks no
 * HTTP never maps it nor the libraries it pulls in. */
static struct {
	CURLcode (*global_init)(long);
	CURL *(*easy_init)(void);
	void (*easy_cleanup)(CURL *);
	void (*easy_reset)(CURL *);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_perform)(CURL *);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
} curl_api;
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static int curl_rc;
static char curl_err[256];

#undef curl_easy_setopt /* curl.h's own wrappers */
#undef curl_easy_getinfo
#define curl_easy_init      (*curl_api.easy_init)
#define curl_easy_cleanup   (*curl_api.easy_cleanup)
#define curl_easy_reset     (*curl_api.easy_reset)
#define curl_easy_setopt    (*curl_api.easy_setopt)
#define curl_easy_perform   (*curl_api.easy_perform)
#define curl_easy_getinfo   (*curl_api.easy_getinfo)
#define curl_slist_append   (*curl_api.slist_append)
#define curl_slist_free_all (*curl_api.slist_free_all)

static void curl_load(void)
{
	static const char *const sonames[] = {"libcurl.so.4", "libcurl-gnutls.so.4", "libcurl.so",
	                                      NULL};
	const struct gi_dynlib_symbol symbols[] = {
	    {"curl_global_init", (void **)&curl_api.global_init},
	    {"curl_easy_init", (void **)&curl_api.easy_init},
	    {"curl_easy_cleanup", (void **)&curl_api.easy_cleanup},
	    {"curl_easy_reset", (void **)&curl_api.easy_reset},
	    {"curl_easy_setopt", (void **)&curl_api.easy_setopt},
	    {"curl_easy_perform", (void **)&curl_api.easy_perform},
	    {"curl_easy_getinfo", (void **)&curl_api.easy_getinfo},
	    {"curl_slist_append", (void **)&curl_api.slist_append},
	    {"curl_slist_free_all", (void **)&curl_api.slist_free_all},
	};
	curl_rc = gi_dynlib_load(sonames, "libcurl4", symbols, sizeof(symbols) / sizeof(symbols[0]),
	                         curl_err, sizeof(curl_err));
	if (curl_rc)
		gi_log_error("net", "%s", curl_err);
	else
		curl_api.global_init(CURL_GLOBAL_DEFAULT);
}

/* 0 when libcurl is loaded, else GI_EUNSUPPORTED (logged once). */
static int curl_ready(void)
{
	pthread_once(&curl_once, curl_load);
	return curl_rc;
}

void net_client_global_init(void)
{
	/* Nothing to do before threads start: libcurl is loaded, and its
	 * global state set up, on the first call that needs it (once). */
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
	int rc = curl_ready();
	if (rc)
		return rc;
	CURL *h = curl_easy_init();
	if (!h)
		return GI_EHTTP;
	long connects = 0;
	rc = perform_on(h, call, false, status, json_out, &connects);
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
	if (curl_ready() == 0)
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

/* Percent-encodes every byte but the unreserved ones (RFC 3986), as
 * curl_easy_escape does, without loading libcurl to build a URL. */
static void url_escape(struct gi_buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '_' || *p == '~') {
			gi_buf_append(b, p, 1);
		} else {
			char esc[3] = {'%', hex[*p >> 4], hex[*p & 15]};
			gi_buf_append(b, esc, 3);
		}
	}
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
		gi_buf_printf(&b, "%c%s=", sep, query[i]);
		url_escape(&b, query[i + 1]);
		sep = '&';
	}
	return gi_buf_take(&b);
}
