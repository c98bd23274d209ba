/*
 * worker.h - the worker daemon: the static engine's queries, the observation
 * store and fused profiles behind the REST routes of docs/API.md.
 *
 * The worker writes only under its data directory (its database) and under
 * the `.giulia/` directory of the projects it is asked to index.
 *
 * Thread-safety: start and stop from one thread; requests are served on the
 * HTTP server's threads, each with its own database connections.
 */
#ifndef GIULIA_API_WORKER_H
#define GIULIA_API_WORKER_H

#include <stdbool.h>
#include <stddef.h>

#define API_WORKER_LISTEN_DEFAULT "127.0.0.1:4000"

struct api_worker_config {
	const char *listen;   /* NULL: API_WORKER_LISTEN_DEFAULT */
	const char *data_dir; /* NULL: gi_fs_data_dir(NULL) */
	/* The observation store (obs_store_open_location): NULL or "" is SQLite
	 * under data_dir; "postgres://..." a PostgreSQL database that several
	 * workers may share (docs/SCHEMA.md). The object-code cache stays in
	 * data_dir either way. */
	const char *store;
	const char *token; /* NULL or "": none (loopback only) */
	/* Names besides loopback and the listen address that requests may
	 * carry in Host and Origin (http.h): NULL or NULL-terminated. */
	const char *const *allowed_hosts;
	size_t body_limit;       /* 0: default */
	int request_timeout;     /* seconds for a whole request; 0: API_REQUEST_TIMEOUT_DEFAULT */
	int ip_connection_limit; /* connections of one address; 0: the default (http.h) */
	/* The MCP server at /mcp (docs/MCP.md): the monitor its runtime tools ask
	 * (NULL: GIULIA_MONITOR_URL, else http://127.0.0.1:4001), and the live-node
	 * tools, offered only with mcp_allow_runtime for the NULL-terminated
	 * mcp_allow_nodes. */
	const char *monitor_url;
	bool mcp_allow_runtime;
	const char *const *mcp_allow_nodes;
	/* A DATA/worker.db that exists but is empty (0 bytes) or not a SQLite
	 * database refuses the start (GI_ECORRUPT), so that history is never
	 * replaced without a word; true moves it aside (worker.db.broken-MS) and
	 * creates a new store. A missing file is always created. */
	bool new_store;
	/* Liveness: a running observation that received no snapshot for this
	 * many of its intervals (counted from the worker's start at the
	 * earliest) is ended as interrupted and profiled. 0: 30. */
	int liveness_intervals;
	/* The object-code cache DATA/nodes/NODE/ebin: total size (0: 256 MB)
	 * and age of unused files (0: 30 days); the oldest go first. */
	size_t ebin_cache_bytes;
	long long ebin_cache_age_ms;
};

struct api_worker;

/* Opens the store (failing early on a bad data directory) and starts serving. */
int api_worker_start(const struct api_worker_config *cfg, struct api_worker **out);
/* The port it listens on. */
int api_worker_port(const struct api_worker *w);
/* Finishes requests in flight, marks running observations interrupted
 * ("worker shut down"), closes the databases and frees. NULL does nothing. */
void api_worker_stop(struct api_worker *w);

struct api_route;
/* The worker's routes, terminated by a route whose method is NULL: one per
 * static query of the registry (graph/query_list.h), then the others.
 * Built once; static data, thread-safe. */
const struct api_route *api_worker_routes(void);

#endif
