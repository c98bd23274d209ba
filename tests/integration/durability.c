/*
 * Integration tests of what Giulia keeps and refuses when things go wrong
 * (issue 13, items 1-7): real `giulia worker` / `giulia monitor` processes,
 * real BEAM nodes, real SQLite files, faults injected by SIGKILL, a full
 * tmpfs and truncated files.
 * needs: erlang-base
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>

#include "api/base64.h"
#include "net/client.h"
#include "api/pusher.h"
#include "api_util.h"
#include "pusher_util.h"
#include "base/error.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "base/fs.h"
#include "fuse/fuse.h"

static const char FIN_TEMPLATE[] =
    "{\"session_id\":\"%s\",\"node\":\"demo@127.0.0.1\",\"status\":\"complete\","
    "\"reason\":null,\"interval_ms\":1000,\"trace_modules\":[],\"project\":null}";

static void ingest(const struct td_daemon *w, const char *sid, int seq)
{
	char *text = td_snapshot(sid, "demo@127.0.0.1", seq);
	TH_ASSERT_INT_EQ(td_post(w, "/api/runtime/ingest", text, NULL), 200);
	free(text);
}

static json_t *observation(const struct td_daemon *w, const char *sid)
{
	char path[256];
	snprintf(path, sizeof(path), "/api/runtime/observation/%s", sid);
	json_t *o = NULL;
	TH_ASSERT_INT_EQ(td_get(w, path, &o), 200);
	return o;
}

static long long int_of(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

/* Item 3: after finalize, a late snapshot is refused and changes nothing. */
static void late_ingest_after_finalize_is_refused(void)
{
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	for (int i = 0; i < 4; i++)
		ingest(&w, "late1", i);
	char fin[512];
	snprintf(fin, sizeof(fin), FIN_TEMPLATE, "late1");
	TH_ASSERT_INT_EQ(td_post(&w, "/api/runtime/ingest/finalize", fin, NULL), 200);
	json_t *before = observation(&w, "late1");

	/* A new seq with an earlier timestamp, and a retry of a stored one. */
	const char *late = "{\"version\":1,\"session_id\":\"late1\",\"node\":\"demo@127.0.0.1\","
	                   "\"seq\":100,\"timestamp_ms\":1}";
	TD_EXPECT_ERROR(&w, "POST", "/api/runtime/ingest", late, 409);
	char *retry = td_snapshot("late1", "demo@127.0.0.1", 2);
	TD_EXPECT_ERROR(&w, "POST", "/api/runtime/ingest", retry, 409);
	free(retry);

	json_t *after = observation(&w, "late1");
	TH_ASSERT_INT_EQ(int_of(after, "snapshots"), 4);
	TH_ASSERT_INT_EQ(int_of(after, "last_seq"), 3);
	TH_ASSERT_INT_EQ(int_of(after, "started_ms"), int_of(before, "started_ms"));
	TH_ASSERT_INT_EQ(int_of(after, "profile_id"), int_of(before, "profile_id"));
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(after, "status")), "complete");
	json_t *full = NULL;
	TH_ASSERT_INT_EQ(td_get(&w, "/api/runtime/observation/late1?include=snapshots", &full),
	                 200);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(full, "snapshot_data")), 4);
	json_decref(full);
	json_decref(before);
	json_decref(after);
}

static void write_text(const char *dir, const char *name, const char *text, size_t len)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	TH_ASSERT_MSG(f != NULL, "cannot write %s", path);
	TH_ASSERT_INT_EQ(fwrite(text, 1, len, f), len);
	fclose(f);
}

static void spool_snapshot(const char *dir, const char *sid, int seq, const char *suffix,
                           bool truncate)
{
	char name[128];
	snprintf(name, sizeof(name), "%020d.ingest.json%s", seq, suffix);
	char *text = td_snapshot(sid, "demo@127.0.0.1", seq);
	write_text(dir, name, text, truncate ? strlen(text) / 2 : strlen(text));
	free(text);
}

/* Item 4: temporaries left by a crash are recovered (complete) or deleted
 * (incomplete, or redundant next to their item), never counted as items. */
static void spool_temporaries_are_recovered_or_deleted(void)
{
	net_client_global_init();
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	char spool[600];
	snprintf(spool, sizeof(spool), "%s/spool", th_tmpdir());
	TH_ASSERT_OK(gi_fs_mkdir_p(spool));
	for (int i = 0; i < 3; i++)
		spool_snapshot(spool, "tmp1", i, "", false);
	spool_snapshot(spool, "tmp1", 1, ".tmp.4242", false); /* redundant */
	spool_snapshot(spool, "tmp1", 3, ".tmp.4242", false); /* complete, never renamed */
	spool_snapshot(spool, "tmp1", 4, ".tmp.4243", true);  /* cut short by the crash */
	struct api_pusher_config pc = {
	    .worker_url = w.url, .token = NULL, .spool_dir = spool, .timeout_ms = 5000};
	struct api_pusher *p = ts_pusher_new_deferred(&pc);
	TH_ASSERT_OK(api_pusher_drain(p, 60000));
	TH_ASSERT_INT_EQ(ts_pusher_stat(p, "delivered"), 4);
	TH_ASSERT_INT_EQ(ts_pusher_stat(p, "rejected"), 0);
	TH_ASSERT_INT_EQ(ts_count_files(spool), 0);
	json_t *o = observation(&w, "tmp1");
	TH_ASSERT_INT_EQ(int_of(o, "snapshots"), 4);
	TH_ASSERT_INT_EQ(int_of(o, "last_seq"), 3);
	json_decref(o);
}

static long long file_size(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
}

static int count_prefixed(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
			n++;
	if (d)
		closedir(d);
	return n;
}

/* Item 6: an empty or foreign worker.db refuses the start unless --new-store. */
static void unusable_store_refuses_to_start(void)
{
	char data[400], db[500], bin[1024], listen[64];
	snprintf(data, sizeof(data), "%s/worker", th_tmpdir());
	snprintf(db, sizeof(db), "%s/worker.db", data);
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", ts_free_port());
	TH_ASSERT_OK(gi_fs_mkdir_p(data));
	const char *contents[] = {"",
	                          "this is not a database, but it holds 64 bytes of text....\n"};
	for (int k = 0; k < 2; k++) {
		write_text(data, "worker.db", contents[k], strlen(contents[k]));
		const char *argv[] = {bin, "worker", "--listen", listen, "--data", data, NULL};
		char *err = NULL;
		int st = ts_run(argv, NULL, 30000, NULL, &err);
		TH_ASSERT_INT_EQ(st, 1);
		TH_ASSERT_STR_CONTAINS(err, "--new-store");
		TH_ASSERT_STR_CONTAINS(err, k == 0 ? "empty (0 bytes)" : "not a SQLite database");
		free(err);
		TH_ASSERT_INT_EQ(file_size(db), (long long)strlen(contents[k]));
	}
	/* Told to, it keeps the old file aside and starts on a new store. */
	struct td_daemon w = {0};
	snprintf(w.data, sizeof(w.data), "%s", data);
	const char *extra[] = {"--new-store", NULL};
	td_start(&w, "worker", extra);
	TH_ASSERT_INT_EQ(count_prefixed(data, "worker.db.broken-"), 1);
	ingest(&w, "fresh1", 0);
	TH_ASSERT_INT_EQ(td_stop(&w), 0);
	/* A store that is fine starts without the flag. */
	td_start(&w, "worker", NULL);
	json_t *o = observation(&w, "fresh1");
	TH_ASSERT_INT_EQ(int_of(o, "snapshots"), 1);
	json_decref(o);
}

static void tmpfs_unmount(void *arg)
{
	umount2(arg, MNT_DETACH);
	free(arg);
}

/* A tmpfs of `size` at DIR (created), unmounted when the test ends. */
static void tmpfs_mount(const char *dir, const char *size)
{
	char opts[64];
	TH_ASSERT_OK(gi_fs_mkdir_p(dir));
	snprintf(opts, sizeof(opts), "size=%s", size);
	if (mount("tmpfs", dir, "tmpfs", 0, opts) != 0)
		th_skip("cannot mount a tmpfs (%s): needs root", strerror(errno));
	th_defer(tmpfs_unmount, gi_strdup(dir));
}

static void push_text(struct api_pusher *p, enum api_push_kind kind, const char *text)
{
	json_t *j = json_loads(text, 0, NULL);
	TH_ASSERT(j != NULL);
	api_pusher_push(p, kind, j); /* may drop: that is what is tested */
	json_decref(j);
}

/* Item 2: snapshots dropped on a full spool disk while the worker was down
 * are gaps in the observation and the profile: header, time axis, counts. */
static void dropped_snapshots_are_gaps_in_the_profile(void)
{
	net_client_global_init();
	static char spool[600];
	snprintf(spool, sizeof(spool), "%s/spool", th_tmpdir());
	tmpfs_mount(spool, "128k"); /* 16 pages for the reserve, 16 for files (a page each) */
	struct td_daemon w = {0};
	td_reserve(&w);
	struct api_pusher_config pc = {.worker_url = w.url,
	                               .token = NULL,
	                               .spool_dir = spool,
	                               .memory_items = 4,
	                               .timeout_ms = 2000};
	struct api_pusher *p = ts_pusher_new_deferred(&pc);
	const int total = 60;
	for (int i = 0; i < total; i++) {
		char *text = td_snapshot("gaps1", "demo@127.0.0.1", i);
		push_text(p, API_PUSH_INGEST, text);
		free(text);
	}
	long long dropped = ts_pusher_stat(p, "dropped");
	TH_ASSERT_INT_GE(dropped, 10);

	td_worker(&w, NULL);
	TH_ASSERT_OK(api_pusher_drain(p, 120000));
	/* The worker is back: these arrive, after a hole in the numbers. */
	const int after = 10;
	for (int i = total; i < total + after; i++) {
		char *text = td_snapshot("gaps1", "demo@127.0.0.1", i);
		push_text(p, API_PUSH_INGEST, text);
		free(text);
	}
	TH_ASSERT_OK(api_pusher_drain(p, 120000));
	json_t *o = observation(&w, "gaps1");
	TH_ASSERT_INT_EQ(int_of(o, "snapshots_missing"), dropped);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(o, "gaps")), 1);
	json_decref(o);
	char fin[1024];
	snprintf(fin, sizeof(fin),
	         "{\"session_id\":\"gaps1\",\"node\":\"demo@127.0.0.1\",\"status\":"
	         "\"complete\",\"interval_ms\":1000,\"next_seq\":%d,\"dropped\":%llu}",
	         total + after + 3, (unsigned long long)api_pusher_dropped_of(p, "gaps1"));
	push_text(p, API_PUSH_FINALIZE, fin);
	json_t *resp = NULL;
	TH_ASSERT_OK(api_pusher_wait_finalize(p, "gaps1", 120000, &resp));
	long long stored = int_of(resp, "snapshots");
	TH_ASSERT_INT_EQ(stored + dropped, total + after);
	long long by_monitor = dropped;
	dropped += 3; /* three more taken at the end and lost (next_seq says so) */
	json_t *pid = json_object_get(resp, "profile_id");
	TH_ASSERT(json_is_integer(pid));
	char path[128];
	snprintf(path, sizeof(path), "/api/runtime/profile/%lld",
	         (long long)json_integer_value(pid));
	json_decref(resp);

	o = observation(&w, "gaps1");
	TH_ASSERT_INT_EQ(int_of(o, "snapshots_missing"), dropped);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(o, "gaps")), 2);
	json_decref(o);

	json_t *prof = NULL;
	TH_ASSERT_INT_EQ(td_get(&w, path, &prof), 200);
	json_t *profile = json_object_get(prof, "profile");
	json_t *session = json_object_get(profile, "session");
	TH_ASSERT_INT_EQ(int_of(session, "snapshots_missing"), dropped);
	TH_ASSERT_INT_EQ(int_of(session, "dropped_by_monitor"), by_monitor);
	json_t *gaps = json_object_get(session, "gaps");
	size_t ngaps = json_array_size(gaps);
	TH_ASSERT_INT_GE(ngaps, 1);
	long long sum = 0;
	for (size_t i = 0; i < ngaps; i++)
		sum += int_of(json_array_get(gaps, i), "missing");
	TH_ASSERT_INT_EQ(sum, dropped);
	TH_ASSERT_INT_EQ(
	    json_array_size(json_object_get(json_object_get(profile, "series"), "gaps")), ngaps);
	struct gi_buf text;
	gi_buf_init(&text, 0);
	TH_ASSERT_OK(fuse_report_text(profile, &text));
	char want[128];
	snprintf(want, sizeof(want), "[complete, %zu gap%s, %lld snapshots missing]", ngaps,
	         ngaps == 1 ? "" : "s", dropped);
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&text), want);
	gi_buf_destroy(&text);
	json_decref(prof);
}

/* {"module": name, "code": base64 of FOR1 and `pad` bytes} */
static json_t *module_json(const char *name, size_t pad)
{
	size_t len = 12 + pad;
	unsigned char *bytes = calloc(1, len);
	memcpy(bytes, "FOR1\0\0\0\0BEAM", 12);
	for (size_t i = 12; i < len; i++)
		bytes[i] = (unsigned char)(i * 31 + strlen(name));
	char *b64 = api_base64_encode(bytes, len);
	json_t *m = json_pack("{s:s, s:s}", "module", name, "code", b64);
	gi_free(b64);
	free(bytes);
	return m;
}

static int post_modules(const struct td_daemon *w, json_t *mods, json_t **resp)
{
	json_t *body = json_pack("{s:s, s:s, s:o}", "node", "demo@127.0.0.1", "session_id", "oc1",
	                         "modules", mods);
	char *text = json_dumps(body, JSON_COMPACT);
	int st = td_post(w, "/api/runtime/ingest/object_code", text, resp);
	free(text);
	json_decref(body);
	return st;
}

static bool cached(const struct td_daemon *w, const char *module)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/nodes/demo@127.0.0.1/ebin/%s.beam", w->data, module);
	return access(path, F_OK) == 0;
}

/* Item 7: a bad module in a batch costs only itself. */
static void object_code_bad_module_spares_its_neighbours(void)
{
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	json_t *mods = json_array();
	json_array_append_new(mods, module_json("Elixir.Good.One", 100));
	json_array_append_new(
	    mods, json_pack("{s:s, s:s}", "module", "Elixir.Bad", "code", "not base64 at all!"));
	json_array_append_new(mods, module_json("Elixir.Good.Two", 100));
	json_t *r = NULL;
	TH_ASSERT_INT_EQ(post_modules(&w, mods, &r), 200);
	TH_ASSERT_INT_EQ(int_of(r, "stored"), 2);
	json_t *rejected = json_object_get(r, "rejected");
	TH_ASSERT_INT_EQ(json_array_size(rejected), 1);
	TH_ASSERT_INT_EQ(int_of(json_array_get(rejected, 0), "index"), 1);
	json_decref(r);
	TH_ASSERT(cached(&w, "Elixir.Good.One"));
	TH_ASSERT(cached(&w, "Elixir.Good.Two"));
	TH_ASSERT(!cached(&w, "Elixir.Bad"));
	/* Nothing good in it: 400, and nothing is written. */
	mods = json_array();
	json_array_append_new(mods,
	                      json_pack("{s:s, s:s}", "module", "Elixir.Bad2", "code", "QUJD"));
	TH_ASSERT_INT_EQ(post_modules(&w, mods, &r), 400);
	TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(r, "error")), "modules[0]");
	json_decref(r);
	TH_ASSERT(!cached(&w, "Elixir.Bad2"));
}

/* Item 7: the object-code cache is bounded by total size and by age,
 * the oldest going first. */
static void object_code_cache_is_bounded(void)
{
	struct td_daemon w = {0};
	snprintf(w.data, sizeof(w.data), "%s/worker", th_tmpdir());
	const char *extra[] = {"--ebin-cache-max", "5000", "--ebin-cache-days", "1", NULL};
	td_start(&w, "worker", extra);
	char name[64];
	for (int i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "Elixir.Size%d", i);
		json_t *mods = json_array();
		json_array_append_new(mods, module_json(name, 1200));
		TH_ASSERT_INT_EQ(post_modules(&w, mods, NULL), 200);
		gi_clock_sleep_ms(20); /* distinct file times */
	}
	/* 6 x 1212 bytes > 5000: the two oldest went. */
	TH_ASSERT(!cached(&w, "Elixir.Size0"));
	TH_ASSERT(!cached(&w, "Elixir.Size1"));
	for (int i = 2; i < 6; i++) {
		snprintf(name, sizeof(name), "Elixir.Size%d", i);
		TH_ASSERT_MSG(cached(&w, name), "%s was evicted", name);
	}
	/* Not received for two days: older than the age bound, evicted at the
	 * next batch even though the total fits. */
	char path[1024];
	snprintf(path, sizeof(path), "%s/nodes/demo@127.0.0.1/ebin/Elixir.Size2.beam", w.data);
	struct timespec old[2] = {{time(NULL) - 2 * 86400, 0}, {time(NULL) - 2 * 86400, 0}};
	TH_ASSERT_INT_EQ(utimensat(AT_FDCWD, path, old, 0), 0);
	json_t *mods = json_array();
	json_array_append_new(mods, module_json("Elixir.Small", 10));
	TH_ASSERT_INT_EQ(post_modules(&w, mods, NULL), 200);
	TH_ASSERT(!cached(&w, "Elixir.Size2"));
	TH_ASSERT(cached(&w, "Elixir.Size3"));
	TH_ASSERT(cached(&w, "Elixir.Small"));
}

/* Item 2: a pause where the numbers run on (no monitor, a frozen node) is a
 * gap counted in intervals; a hole in the numbers is one counted in
 * snapshots. */
static void pauses_and_holes_are_gaps(void)
{
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	long long offsets[] = {0, 1000, 2000, 3000, 8000, 9000}; /* 4 intervals skipped */
	for (int i = 0; i < 6; i++) {
		char *text = td_snapshot("pause1", "demo@127.0.0.1", i < 5 ? i : 7);
		json_t *j = json_loads(text, 0, NULL);
		json_object_set_new(j, "timestamp_ms", json_integer(1764496229000LL + offsets[i]));
		char *body = json_dumps(j, JSON_COMPACT);
		TH_ASSERT_INT_EQ(td_post(&w, "/api/runtime/ingest", body, NULL), 200);
		free(body);
		free(text);
		json_decref(j);
	}
	json_t *o = observation(&w, "pause1");
	json_t *gaps = json_object_get(o, "gaps");
	TH_ASSERT_INT_EQ(json_array_size(gaps), 2);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(json_array_get(gaps, 0), "cause")),
	                 "time");
	TH_ASSERT_INT_EQ(int_of(json_array_get(gaps, 0), "missing"), 4);
	TH_ASSERT_INT_EQ(int_of(json_array_get(gaps, 0), "after_seq"), 3);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(json_array_get(gaps, 1), "cause")),
	                 "seq");
	TH_ASSERT_INT_EQ(int_of(json_array_get(gaps, 1), "missing"), 2);
	TH_ASSERT_INT_EQ(int_of(o, "snapshots_missing"), 6);
	json_decref(o);
}

/* Item 5: with the spool disk full, the finalize still goes to the spool
 * (the reserve), and the next run says what the previous one lost. */
static void full_spool_keeps_the_finalize_and_reports_losses(void)
{
	net_client_global_init();
	static char spool[600];
	snprintf(spool, sizeof(spool), "%s/spool", th_tmpdir());
	tmpfs_mount(spool, "256k");
	struct td_daemon w = {0};
	td_reserve(&w);
	struct api_pusher_config pc = {.worker_url = w.url,
	                               .token = NULL,
	                               .spool_dir = spool,
	                               .memory_items = 4,
	                               .timeout_ms = 2000};
	struct api_pusher *p;
	TH_ASSERT_OK(api_pusher_new(&pc, &p));
	json_t *s0 = api_pusher_stats(p);
	TH_ASSERT(json_is_true(json_object_get(s0, "reserve_held")));
	json_decref(s0);
	const int total = 120;
	for (int i = 0; i < total; i++) {
		char *text = td_snapshot("full1", "demo@127.0.0.1", i);
		push_text(p, API_PUSH_INGEST, text);
		free(text);
	}
	long long dropped = ts_pusher_stat(p, "dropped");
	TH_ASSERT_INT_GE(dropped, 10);
	char fin[512];
	snprintf(fin, sizeof(fin),
	         "{\"session_id\":\"full1\",\"node\":\"demo@127.0.0.1\",\"status\":"
	         "\"complete\",\"interval_ms\":1000,\"next_seq\":%d}",
	         total);
	push_text(p, API_PUSH_FINALIZE, fin);
	TH_ASSERT_INT_EQ(ts_pusher_stat(p, "dropped"), dropped); /* the finalize was kept */
	api_pusher_free(p, 0);

	/* The next run: says what was lost, then delivers what was kept. */
	p = ts_pusher_new_deferred(&pc);
	json_t *stats = api_pusher_stats(p);
	json_t *prev = json_object_get(stats, "previous_run");
	TH_ASSERT(json_is_object(prev));
	TH_ASSERT_INT_EQ(int_of(prev, "ingest"), dropped);
	TH_ASSERT_INT_EQ(int_of(json_object_get(prev, "sessions"), "full1"), dropped);
	json_decref(stats);
	td_worker(&w, NULL);
	json_t *resp = NULL;
	TH_ASSERT_OK(api_pusher_wait_finalize(p, "full1", 120000, &resp));
	TH_ASSERT_INT_EQ(int_of(resp, "snapshots"), total - dropped);
	TH_ASSERT(json_is_integer(json_object_get(resp, "profile_id")));
	json_decref(resp);
	json_t *o = observation(&w, "full1");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(o, "status")), "complete");
	TH_ASSERT_INT_EQ(int_of(o, "snapshots_missing"), dropped);
	json_decref(o);
}

/* ---- with a real node ---- */

static const char WORKLOAD[] =
    "spawn(fun() -> L = fun Loop(N) -> _ = lists:seq(1, 2000), timer:sleep(5), Loop(N + 1) end,"
    " L(0) end).";

/* POST observe/start; returns the response (caller decrefs). */
static json_t *observe_start(const struct td_daemon *m, const struct ts_beam *n, int interval_ms)
{
	char body[1024];
	snprintf(body, sizeof(body), "{\"node\":\"%s\",\"cookie\":\"%s\",\"interval_ms\":%d}",
	         n->name, n->cookie, interval_ms);
	json_t *r = NULL;
	int st = td_post(m, "/api/monitor/observe/start", body, &r);
	TH_ASSERT_MSG(st == 200, "observe/start: %d", st);
	return r;
}

/* Waits until the worker's observation `sid` has at least `n` snapshots. */
static void wait_worker_snapshots(const struct td_daemon *w, const char *sid, long long n)
{
	char path[256];
	snprintf(path, sizeof(path), "/api/runtime/observation/%s", sid);
	int64_t deadline = gi_clock_mono_ms() + 120000;
	for (;;) {
		json_t *o = NULL;
		long long have = td_get(w, path, &o) == 200 ? int_of(o, "snapshots") : 0;
		json_decref(o);
		if (have >= n)
			return;
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "fewer than %lld snapshots in 120 s",
		              n);
		gi_clock_sleep_ms(100);
	}
}

/* Item 1: the monitor dies (SIGKILL); the worker's liveness deadline ends the
 * observation as interrupted with a profile of what arrived, and stop on a
 * new monitor says so instead of 404. */
static void dead_monitor_observation_is_ended_and_reported(void)
{
	struct ts_beam node;
	ts_beam_start(&node, TS_BEAM_ERL_LONG, NULL, NULL);
	free(ts_beam_eval(&node, WORKLOAD));
	struct td_daemon w = {0}, m = {0};
	snprintf(w.data, sizeof(w.data), "%s/worker", th_tmpdir());
	const char *wextra[] = {"--liveness", "4", NULL};
	td_start(&w, "worker", wextra);
	td_monitor_for(&m, &w);
	json_t *r = observe_start(&m, &node, 250);
	char sid[64];
	snprintf(sid, sizeof(sid), "%s", json_string_value(json_object_get(r, "session_id")));
	json_decref(r);
	wait_worker_snapshots(&w, sid, 3);
	td_kill(&m);

	/* 4 intervals of 250 ms without a snapshot: interrupted, with a profile. */
	char path[256];
	snprintf(path, sizeof(path), "/api/runtime/observation/%s", sid);
	json_t *o = NULL;
	int64_t deadline = gi_clock_mono_ms() + 60000;
	for (;;) {
		TH_ASSERT_INT_EQ(td_get(&w, path, &o), 200);
		if (json_is_integer(json_object_get(o, "profile_id")))
			break;
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline,
		              "the observation stayed %s without a profile",
		              json_string_value(json_object_get(o, "status")));
		json_decref(o);
		gi_clock_sleep_ms(100);
	}
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(o, "status")), "interrupted");
	TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(o, "reason")), "no snapshot");
	long long profile_id = int_of(o, "profile_id");
	long long stored = int_of(o, "snapshots");
	json_decref(o);
	json_t *p = NULL;
	snprintf(path, sizeof(path), "/api/runtime/profile/%lld", profile_id);
	TH_ASSERT_INT_EQ(td_get(&w, path, &p), 200);
	json_t *session = json_object_get(json_object_get(p, "profile"), "session");
	TH_ASSERT_INT_EQ(int_of(session, "snapshot_count"), stored);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(session, "status")), "interrupted");
	json_decref(p);

	/* A new monitor on the same data directory knows the orphan; stop tells
	 * the truth: ended early, why, and the profile. */
	td_monitor_for(&m, &w);
	setenv("GIULIA_MONITOR_URL", m.url, 1);
	char bin[1024], want[64];
	snprintf(bin, sizeof(bin), "%s/giulia-observe", th_bindir());
	const char *stop[] = {bin, "stop", node.name, NULL};
	char *out = NULL;
	TH_ASSERT_INT_EQ(ts_run(stop, NULL, 120000, &out, NULL), 0);
	TH_ASSERT_STR_CONTAINS(out, "had already ended");
	TH_ASSERT_STR_CONTAINS(out, "no snapshot");
	snprintf(want, sizeof(want), "profile id: %lld", profile_id);
	TH_ASSERT_STR_CONTAINS(out, want);
	free(out);
	/* Told once; after that there is nothing to stop. */
	char body[512];
	snprintf(body, sizeof(body), "{\"node\":\"%s\"}", node.name);
	TD_EXPECT_ERROR(&m, "POST", "/api/monitor/observe/stop", body, 404);
}

/* Item 1: a monitor started after one died continues its observation: same
 * session, numbering after what the dead one handed out, one profile. */
static void new_monitor_adopts_the_orphan(void)
{
	struct ts_beam node;
	ts_beam_start(&node, TS_BEAM_ERL_LONG, NULL, NULL);
	free(ts_beam_eval(&node, WORKLOAD));
	struct td_daemon w = {0}, m = {0};
	td_worker(&w, NULL);
	td_monitor_for(&m, &w);
	json_t *r = observe_start(&m, &node, 250);
	char sid[64];
	snprintf(sid, sizeof(sid), "%s", json_string_value(json_object_get(r, "session_id")));
	json_decref(r);
	/* The state file is written in place: the same file (inode) from its
	 * first snapshot on, whole JSON whenever the monitor dies. */
	char state_path[1024];
	snprintf(state_path, sizeof(state_path), "%s/monitor-sessions/%s.json", m.data, sid);
	wait_worker_snapshots(&w, sid, 1);
	struct stat first;
	TH_ASSERT_INT_EQ(stat(state_path, &first), 0);
	wait_worker_snapshots(&w, sid, 4);
	td_kill(&m);
	json_t *o = observation(&w, sid);
	long long before = int_of(o, "last_seq");
	json_decref(o);
	struct stat now;
	TH_ASSERT_INT_EQ(stat(state_path, &now), 0);
	TH_ASSERT(now.st_ino == first.st_ino);
	json_error_t je;
	json_t *state = json_load_file(state_path, JSON_REJECT_DUPLICATES, &je);
	TH_ASSERT_MSG(state != NULL, "the state file is not JSON: %s", je.text);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(state, "session_id")), sid);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(state, "node")), node.name);
	TH_ASSERT_INT_GE(int_of(state, "next_seq"), before + 1);
	json_decref(state);

	td_monitor_for(&m, &w);
	json_t *st = NULL;
	TH_ASSERT_INT_EQ(td_get(&m, "/api/monitor/observe/status", &st), 200);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(st, "orphans")), 1);
	json_decref(st);
	r = observe_start(&m, &node, 250);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(r, "session_id")), sid);
	json_t *adopted = json_object_get(r, "adopted");
	TH_ASSERT(json_is_object(adopted));
	TH_ASSERT_INT_GE(int_of(adopted, "from_seq"), before + 1);
	json_decref(r);
	wait_worker_snapshots(&w, sid, before + 5);
	char body[512];
	snprintf(body, sizeof(body), "{\"node\":\"%s\"}", node.name);
	TH_ASSERT_INT_EQ(td_post(&m, "/api/monitor/observe/stop", body, &r), 200);
	TH_ASSERT(json_is_integer(json_object_get(r, "profile_id")));
	json_decref(r);
	o = observation(&w, sid);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(o, "status")), "complete");
	TH_ASSERT_INT_GE(int_of(o, "last_seq"), before + 5);
	json_decref(o);
	json_t *list = NULL;
	TH_ASSERT_INT_EQ(td_get(&w, "/api/runtime/profiles", &list), 200);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(list, "profiles")), 1);
	json_decref(list);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(late_ingest_after_finalize_is_refused),
	    TH_TEST(spool_temporaries_are_recovered_or_deleted),
	    TH_TEST(unusable_store_refuses_to_start),
	    TH_TEST(dropped_snapshots_are_gaps_in_the_profile),
	    TH_TEST(pauses_and_holes_are_gaps),
	    TH_TEST(full_spool_keeps_the_finalize_and_reports_losses),
	    TH_TEST(object_code_bad_module_spares_its_neighbours),
	    TH_TEST(object_code_cache_is_bounded),
	    TH_TEST(dead_monitor_observation_is_ended_and_reported),
	    TH_TEST(new_monitor_adopts_the_orphan),
	    TH_END,
	};
	return th_main(argc, argv, "integration_durability", tests);
}
