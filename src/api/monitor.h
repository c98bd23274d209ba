/*
 * monitor.h - the monitor daemon: runs observation sessions next to the
 * nodes (src/observe/), pushes every snapshot to the worker as it is taken
 * (src/api/pusher.h) and answers runtime questions (pulse, top processes,
 * hot spots, history, trend, alerts) over the REST routes of docs/API.md.
 *
 * Cookies given to it are kept in memory only, for the life of the
 * observation or of the daemon for /api/runtime/connect, never written to
 * disk, logged or returned.
 *
 * Thread-safety: start and stop from one thread.
 */
#ifndef GIULIA_API_MONITOR_H
#define GIULIA_API_MONITOR_H

#include <stddef.h>

#define API_MONITOR_LISTEN_DEFAULT "127.0.0.1:4001"
#define API_MONITOR_WORKER_DEFAULT "http://127.0.0.1:4000"

struct api_monitor_config {
	const char *listen;     /* NULL: API_MONITOR_LISTEN_DEFAULT */
	const char *worker_url; /* NULL: API_MONITOR_WORKER_DEFAULT */
	const char *token;      /* this daemon's bearer token, or NULL */
	/* Names besides loopback and the listen address that requests may
	 * carry in Host and Origin (http.h): NULL or NULL-terminated. */
	const char *const *allowed_hosts;
	const char *worker_token; /* the worker's bearer token, or NULL */
	const char *data_dir;     /* spool lives in DATA/monitor-spool; NULL: default */
	size_t body_limit;        /* 0: default */
	int request_timeout;      /* seconds for a whole request; 0: the default (http.h) */
	int ip_connection_limit;  /* connections of one address; 0: the default (http.h) */
	/* A rule file (docs/ALERTS.md) for the alerts of /api/runtime/alerts and
	 * /metrics; NULL: the built-in rules. A file that does not parse fails the
	 * start (GI_EINVAL, the reason in the log). */
	const char *alert_rules;
};

struct api_monitor;

/* Starts the observer's manager, the delivery thread and the HTTP server. */
int api_monitor_start(const struct api_monitor_config *cfg, struct api_monitor **out);
/* The port it listens on. */
int api_monitor_port(const struct api_monitor *m);
/* Finishes requests in flight, stops every running observation as
 * interrupted (its finalize is queued like the snapshots), tries to deliver
 * the queue for a grace period, spools the rest, and frees. NULL does nothing. */
void api_monitor_stop(struct api_monitor *m);

#endif
