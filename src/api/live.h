/*
 * live.h - the monitor's live feed for dashboards: every snapshot of an
 * observed node, each alert when it starts to fire and each observation's
 * end, as Server-Sent Events on GET /api/monitor/stream?node= (docs/API.md,
 * docs/DASHBOARD.md), over the hub of sse.h.
 *
 * Events (the data is one JSON object):
 *  - `snapshot`: {"snapshot": SNAPSHOT (docs/SNAPSHOT.md), "alerts": [...],
 *    "hot_modules": [...]} (alerts and hot modules as GET /api/runtime/alerts
 *    and hot_spots compute them);
 *  - `alert`: one alert of that list, the first time it fires (a metric at a
 *    severity it was not at in the previous snapshot), with timestamp_ms;
 *  - `end`: {"session_id", "node", "status", "reason"} when an observation ends;
 *  - `gap`: see sse.h.
 *
 * Thread-safety: thread-safe.
 */
#ifndef GIULIA_API_LIVE_H
#define GIULIA_API_LIVE_H

#include <jansson.h>

#include "api/http.h"

struct api_live;

/* A new feed (hub defaults of sse.h). Free with api_live_free. */
struct api_live *api_live_new(void);
/* Ends every stream now (before the HTTP server stops). NULL does nothing. */
void api_live_close(struct api_live *live);
/* Frees; every stream must be released first (the server stopped). NULL does nothing. */
void api_live_free(struct api_live *live);

/* Publishes snapshot `snap` with its `alerts` (both borrowed: the alerts
 * the monitor's rules give on the snapshot and the node's history), and
 * each alert that starts firing. */
void api_live_snapshot(struct api_live *live, json_t *snap, json_t *alerts);
/* The same with the snapshot's compact serialisation `snap_text` of
 * `snap_len` bytes (borrowed), which the event embeds as it is rather than
 * serialising `snap` again, and the snapshot already parsed into `view`
 * (borrowed; NULL: it could not be), from which the hot modules are
 * written. */
struct obs_view;
void api_live_snapshot_view(struct api_live *live, json_t *snap, const struct obs_view *view,
                            const char *snap_text, size_t snap_len, json_t *alerts);
/* Publishes the end of an observation (`finalize` borrowed). */
void api_live_end(struct api_live *live, const char *session_id, json_t *finalize);

/* The raw handler of GET /api/monitor/stream?node=NAME (ctx: the feed):
 * 400 for a bad node, 503 over the client cap, else the event stream. */
void api_live_route(struct api_live *live, const struct api_request *req,
                    struct api_raw_response *resp);

#endif
