/*
 * client.h - a small HTTP client over libcurl for JSON APIs: the monitor's
 * pushes to the worker and the CLIs' calls to the daemons.
 *
 * Responses are capped (NET_CLIENT_RESPONSE_LIMIT) and parsed as JSON.
 * Thread-safe after net_client_global_init(): each call uses its own handle.
 */
#ifndef GIULIA_NET_CLIENT_H
#define GIULIA_NET_CLIENT_H

#include <jansson.h>

#define NET_CLIENT_RESPONSE_LIMIT (64 * 1024 * 1024)

/* Initialises libcurl once per process; call before starting threads. */
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

/* Joins a base URL and a path with a query made of `key=value` pairs
 * (NULL-terminated list of alternating keys and values; NULL values skipped),
 * escaping the values. Caller frees with gi_free. */
char *net_client_url(const char *base, const char *path, const char *const *query);

#endif
