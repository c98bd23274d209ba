/*
 * Unit tests of the snapshot builder's call_time merge (src/observe/
 * snapshot.c): per-function times of a sample reply go into the matching
 * trace.calls entries, a timed function call_count missed gets an entry of
 * its own, malformed entries are skipped, and trace.call_time carries the
 * flagging facts (docs/SNAPSHOT.md).
 * needs:
 */
#include <string.h>

#include "harness.h"
#include "term_util.h"
#include "json_util.h"
#include "observe/snapshot.h"

static void call_time_merges_into_calls(void)
{
	json_error_t err;
	json_t *reply = json_loads(
	    "{\"window_ms\": 1000, \"errors\": [],"
	    " \"trace\": {\"modules\": [\"Elixir.Calc\"], \"window_ms\": 1000,"
	    "   \"calls\": [[\"Elixir.Calc\", \"slow\", 1, 10], [\"Elixir.Calc\", \"idle\", 0, "
	    "3]]},"
	    " \"call_time\": {\"calls\": [[\"Elixir.Calc\", \"slow\", 1, 4, 9000],"
	    "                             [\"Elixir.Calc\", \"edge\", 2, 1, 50],"
	    "                             [\"Elixir.Calc\", \"bad\"], [1, 2, 3, 4, 5]],"
	    "   \"processes\": [{\"pid\": \"<0.9.0>\", \"calls\": 5, \"time_us\": 9050}, 7],"
	    "   \"flagged\": 2, \"flag_cap\": 100, \"refused\": 1, \"trace_messages\": 0,"
	    "   \"suspended\": false, \"isolation\": \"global\"}}",
	    0, &err);
	TH_ASSERT_MSG(reply != NULL, "fixture: %s", err.text);
	json_t *s = ts_snapshot_build(reply, "n@h", "abc", 0, 1234, NULL);
	TH_ASSERT(s != NULL);
	json_t *trace = json_object_get(s, "trace");
	json_t *calls = json_object_get(trace, "calls");
	TH_ASSERT_INT_EQ(json_array_size(calls), 3);
	json_t *slow = ts_json_find(calls, "function", "slow");
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(slow, "count")), 10);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(slow, "time_calls")), 4);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(slow, "time_us")), 9000);
	/* called, but not in a flagged process: measured as zero time */
	json_t *idle = ts_json_find(calls, "function", "idle");
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(idle, "time_calls")), 0);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(idle, "time_us")), 0);
	/* timed at the edge of the window, missed by call_count */
	json_t *edge = ts_json_find(calls, "function", "edge");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(edge, "module")), "Calc");
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(edge, "count")), 1);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(edge, "time_us")), 50);
	json_t *ct = json_object_get(trace, "call_time");
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(ct, "flagged")), 2);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(ct, "refused")), 1);
	TH_ASSERT(json_is_false(json_object_get(ct, "suspended")));
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(ct, "isolation")), "global");
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(ct, "processes")), 1);
	json_decref(s);
	/* without a call_time section nothing changes */
	json_object_del(reply, "call_time");
	s = ts_snapshot_build(reply, "n@h", "abc", 0, 1234, NULL);
	trace = json_object_get(s, "trace");
	TH_ASSERT(json_object_get(trace, "call_time") == NULL);
	slow = ts_json_find(json_object_get(trace, "calls"), "function", "slow");
	TH_ASSERT(json_object_get(slow, "time_us") == NULL);
	json_decref(s);
	json_decref(reply);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(call_time_merges_into_calls),
	    TH_END,
	};
	return th_main(argc, argv, "unit_observe_calltime", tests);
}
