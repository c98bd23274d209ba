/*
 * client.h - a small HTTP client over libcurl for JSON APIs: the monitor's
 * pushes to the worker and the CLIs' calls to the daemons.
 *
 * Responses are capped (NET_CLIENT_RESPONSE_LIMIT) and parsed as JSON.
 * libcurl is loaded on the first call that needs it (base/dynlib.h); a
 * machine without it gets GI_EUNSUPPORTED and a logged reason.
 * Thread-safe: each net_client_call uses its
 * own handle. A `struct net_client` keeps its connections open between
 * calls (HTTP/1.1 keep-alive), for a caller that talks to one server again
 * and again (the monitor's delivery thread); it belongs to one thread at a
 * time.
 */
#ifndef GIULIA_NET_CLIENT_H
#define GIULIA_NET_CLIENT_H

#include <jansson.h>

#define NET_CLIENT_RESPONSE_LIMIT (64 * 1024 * 1024)

/* Kept for its callers: libcurl is now set up on first use, once. */
void net_client_global_init(void);

struct net_call {
	const char *method; /* "GET" or "POST" */
	const char *url;    /* full URL */
	const char *body;   /* request body (JSON text) for POST, or NULL */
	const char *token;  /* bearer token, or NULL */
	int timeout_ms;     /* whole request; 0: 30000 */
};

/* Performs the call. Returns 0 when an HTTP response came back (any status,
 * in *status), with *json_out (caller decrefs) holding the parsed body or NULL
 * when it was not JSON; GI_ECONNECT when nothing answered, GI_ETIMEOUT on a
 * timeout, GI_ETOOBIG past the response cap, GI_EHTTP otherwise. */
int net_client_call(const struct net_call *call, int *status, json_t **json_out);

/* A client that reuses its connections (keep-alive). Free with
 * net_client_free; net_client_free(NULL) does nothing. */
struct net_client;
struct net_client *net_client_new(void);
void net_client_free(struct net_client *c);

/* net_client_call over `c`'s kept connection when the server kept it open,
 * else over a new one. A request that fails on a reused connection without
 * an answer (the server closed it while idle: a restart, its idle timeout)
 * is sent once more on a new connection, so the caller sees the error of
 * that fresh attempt, never a stale connection's; the server may then see
 * the request twice, so use it for idempotent requests. */
int net_client_perform(struct net_client *c, const struct net_call *call, int *status,
                       json_t **json_out);
/* How many connections `c` has opened that answered (the first, and one
 * after each server restart or idle close): for /metrics and the tests. */
unsigned long long net_client_connections(const struct net_client *c);

/* Joins a base URL and a path with a query made of `key=value` pairs
 * (NULL-terminated list of alternating keys and values; NULL values skipped),
 * escaping the values. Caller frees with gi_free. */
char *net_client_url(const char *base, const char *path, const char *const *query);

#endif
