/*
 * Integration tests of what Giulia keeps and refuses when things go wrong
 * (issue 13, items 1-7): real `giulia worker` / `giulia monitor` processes,
 * real BEAM nodes, real SQLite files, faults injected by SIGKILL, a full
 * tmpfs and truncated files.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "api/client.h"
#include "api/pusher.h"
#include "api_util.h"
#include "base/error.h"
#include "base/fs.h"

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

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(late_ingest_after_finalize_is_refused),
	    TH_END,
	};
	return th_main(argc, argv, "integration_durability", tests);
}
