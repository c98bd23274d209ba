/*
 * dash.h - the dashboard (docs/DASHBOARD.md) as the worker serves it: the
 * page, script and styles of web/, embedded at build time, at "/" and
 * "/dash/...", and a pass-through to the monitor at "/monitor/..." so that
 * the page reads live data from its own origin with one token.
 *
 * Invariants:
 *  - assets hold no data: they are served without the token (the page then
 *    asks for it, keeps it in sessionStorage and sends it as a header);
 *    every other answer needs the token like any API route;
 *  - every asset carries a Content-Security-Policy that allows nothing but
 *    this origin (no inline script, no other host), nosniff, no referrer
 *    and no framing; gzip when the client accepts it;
 *  - the pass-through forwards only monitor API paths (/health,
 *    /api/runtime/..., /api/monitor/...), only known query parameters, and
 *    the client's Authorization and Last-Event-ID headers; it never logs
 *    them. Event streams are relayed as they come, until either side ends
 *    or api_dash_close.
 *
 * Thread-safety: thread-safe after api_dash_new.
 */
#ifndef GIULIA_API_DASH_H
#define GIULIA_API_DASH_H

#include <stddef.h>

#include "api/http.h"

/* The page's policy: this origin only (also sent by tests to check). */
#define API_DASH_CSP                                                                      \
	"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " \
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

struct api_dash;

/* A dashboard whose live data comes from the monitor at `monitor_url`
 * ("http://HOST:PORT", copied). Free with api_dash_free. */
struct api_dash *api_dash_new(const char *monitor_url);
/* Ends relayed event streams (before the HTTP server stops). NULL does nothing. */
void api_dash_close(struct api_dash *dash);
/* NULL does nothing. */
void api_dash_free(struct api_dash *dash);

/* Parses the head of an HTTP answer, `len` bytes at `data` (not
 * NUL-terminated; what follows the head is the body): *status (100-599),
 * the Content-Type into `type` (empty when absent; cut to `type_size`) and
 * *head_len (bytes up to and including the blank line). Returns 0, with
 * *head_len 0 while the head is not complete yet (and within
 * API_DASH_HEAD_MAX), or GI_EPARSE for anything else. Used by the
 * pass-through on the monitor's answers; exported for its fuzz target. */
#define API_DASH_HEAD_MAX (16 * 1024)
int api_dash_parse_head(const char *data, size_t len, int *status, char *type, size_t type_size,
                        size_t *head_len);

/* Raw handler of GET "/" and "/dash/..." (ctx: the dashboard). */
void api_dash_route_asset(struct api_dash *dash, const struct api_request *req,
                          struct api_raw_response *resp);
/* Raw handler of "/monitor/..." (GET, POST): the pass-through. */
void api_dash_route_monitor(struct api_dash *dash, const struct api_request *req, const char *body,
                            size_t body_len, struct api_raw_response *resp);

#endif
