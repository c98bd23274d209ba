/*
 * store_ingest.c - ingest throughput of the observation store: snapshots
 * stored per second and the latency of each obs_store_snapshot_add (p50,
 * p99), for the SQLite backend (DATA/worker.db, synchronous=FULL) and the
 * PostgreSQL backend (a URI), in one run on the same snapshots.
 *
 *   store_ingest DATA_DIR LOCATION THREADS SNAPSHOTS_PER_THREAD LOCKED
 *
 * LOCATION "-" is SQLite under DATA_DIR; "http://HOST:PORT" posts each
 * snapshot to that worker's /api/runtime/ingest instead (the whole path:
 * HTTP, validation, the pool, the store), timing each request. Each thread has its own connection
 * and session, as the worker's request threads have; LOCKED 1 holds one
 * process-wide mutex around each ingest, as the worker's write_lock does.
 * The snapshot is a realistic 6 KB document (docs/SNAPSHOT.md shape, 20 top
 * processes). Prints `key value` lines.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/str.h"
#include "net/client.h"
#include "store/obs_store.h"

struct job {
	const char *data_dir, *location;
	int index, count;
	bool locked;
	long long *lat_us; /* count entries */
	int rc;
};

static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;

static json_t *snapshot(const char *sid, int seq)
{
	json_t *top = json_array();
	for (int i = 0; i < 20; i++)
		json_array_append_new(
		    top, json_pack("{s:s, s:s, s:s, s:i, s:f, s:i, s:i, s:s}", "pid", "<0.1234.0>",
		                   "module", "Elixir.Shop.Orders.Worker", "function",
		                   "handle_call/3", "reductions", 100000 + i * 7, "cpu_share",
		                   0.01 * i, "memory_bytes", 28000 + i, "message_queue_len", i,
		                   "registered_name", "Elixir.Shop.Orders.Worker.Supervisor"));
	return json_pack("{s:i, s:s, s:s, s:i, s:I, s:i, s:{s:f, s:[f,f]}, s:{s:i},"
	                 " s:{s:i, s:i}, s:{s:I, s:I, s:I, s:I}, s:{s:o, s:o}, s:[]}",
	                 "version", 1, "session_id", sid, "node", "shop@127.0.0.1", "seq", seq,
	                 "timestamp_ms", (json_int_t)(1764496229000LL + seq * 1000LL), "window_ms",
	                 1000, "scheduler_utilisation", "total", 0.25, "per_scheduler", 0.2, 0.3,
	                 "run_queue", "total", 0, "processes", "count", 4000 + seq, "limit", 262144,
	                 "memory", "total", (json_int_t)60000000, "processes", (json_int_t)20000000,
	                 "ets", (json_int_t)4000000, "binary", (json_int_t)1000000, "top_processes",
	                 "reductions", top, "memory", json_deep_copy(top), "errors");
}

static bool is_http(const char *location)
{
	return GI_STR_STARTS(location, "http://");
}

static void *run_http(struct job *j)
{
	char sid[64], url[256];
	snprintf(sid, sizeof(sid), "bench-%d-%lld", j->index, (long long)gi_clock_wall_ms());
	snprintf(url, sizeof(url), "%s/api/runtime/ingest", j->location);
	for (int i = 0; i < j->count && j->rc == 0; i++) {
		json_t *s = snapshot(sid, i);
		char *body = json_dumps(s, JSON_COMPACT);
		struct net_call call = {.method = "POST", .url = url, .body = body};
		int status = 0;
		int64_t t0 = gi_clock_mono_us();
		json_t *reply = NULL;
		j->rc = net_client_call(&call, &status, &reply);
		j->lat_us[i] = gi_clock_mono_us() - t0;
		json_decref(reply);
		if (j->rc == 0 && status != 200)
			j->rc = GI_EHTTP;
		free(body);
		json_decref(s);
	}
	return NULL;
}

static void *run(void *arg)
{
	struct job *j = arg;
	if (is_http(j->location))
		return run_http(j);
	struct obs_store *st = NULL;
	j->rc = obs_store_open_location(j->data_dir, strcmp(j->location, "-") ? j->location : NULL,
	                                &st);
	if (j->rc)
		return NULL;
	char sid[64];
	snprintf(sid, sizeof(sid), "bench-%d-%lld", j->index, (long long)gi_clock_wall_ms());
	for (int i = 0; i < j->count && j->rc == 0; i++) {
		json_t *s = snapshot(sid, i);
		bool dup = false;
		int64_t t0 = gi_clock_mono_us();
		if (j->locked)
			pthread_mutex_lock(&write_lock);
		j->rc = obs_store_snapshot_add(st, sid, "shop@127.0.0.1", i, s, &dup);
		if (j->locked)
			pthread_mutex_unlock(&write_lock);
		j->lat_us[i] = gi_clock_mono_us() - t0;
		json_decref(s);
	}
	obs_store_close(st);
	return NULL;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: store_ingest DATA_DIR LOCATION THREADS N LOCKED\n");
		return 2;
	}
	int threads = (int)strtol(argv[3], NULL, 10), n = (int)strtol(argv[4], NULL, 10);
	bool locked = strcmp(argv[5], "1") == 0;
	if (threads < 1 || threads > 64 || n < 1 || n > 1000000)
		return 2;
	/* Open once first so that the schema is made before the clock starts. */
	net_client_global_init();
	struct obs_store *st = NULL;
	int rc = is_http(argv[2])
	             ? 0
	             : obs_store_open_location(argv[1], strcmp(argv[2], "-") ? argv[2] : NULL, &st);
	if (rc) {
		fprintf(stderr, "store_ingest: %s\n", gi_strerror(rc));
		return 1;
	}
	obs_store_close(st);
	pthread_t t[64];
	struct job jobs[64];
	long long *lat = calloc((size_t)threads * (size_t)n, sizeof(*lat));
	int64_t t0 = gi_clock_mono_us();
	for (int i = 0; i < threads; i++) {
		jobs[i] = (struct job){argv[1], argv[2], i, n, locked, lat + (size_t)i * n, 0};
		pthread_create(&t[i], NULL, run, &jobs[i]);
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		if (jobs[i].rc) {
			fprintf(stderr, "store_ingest: %s\n", gi_strerror(jobs[i].rc));
			return 1;
		}
	}
	double wall_s = (double)(gi_clock_mono_us() - t0) / 1e6;
	size_t total = (size_t)threads * (size_t)n;
	qsort(lat, total, sizeof(*lat), cmp_ll);
	printf("backend %s\n", is_http(argv[2])                          ? "http"
	                       : obs_store_location_is_postgres(argv[2]) ? "postgres"
	                                                                 : "sqlite");
	printf("threads %d\n", threads);
	printf("snapshots %zu\n", total);
	json_t *one = snapshot("bench-size", 0);
	char *text = json_dumps(one, JSON_COMPACT);
	printf("body_bytes %zu\n", strlen(text));
	free(text);
	json_decref(one);
	printf("per_s %.0f\n", (double)total / wall_s);
	printf("p50_ms %.2f\n", (double)lat[total / 2] / 1000.0);
	printf("p99_ms %.2f\n", (double)lat[(total * 99) / 100] / 1000.0);
	free(lat);
	return 0;
}
