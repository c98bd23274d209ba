/*
 * Unit tests of the observer's parsers and builders: epmd replies, Erlang
 * external terms to JSON (byte sequences as term_to_binary/1 gives them on
 * OTP 25), and sample replies to snapshots.
 * needs:
 */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/error.h"
#include "harness.h"
#include "observe/epmd.h"
#include "observe/snapshot.h"
#include "observe/term.h"

static json_t *decode(const unsigned char *bytes, size_t len)
{
	int index = 1; /* past the version byte */
	json_t *out = NULL;
	int rc = obs_term_to_json((const char *)bytes, (int)len, &index, &out);
	if (rc != 0)
		return NULL;
	TH_ASSERT_INT_EQ(index, (long long)len);
	return out;
}

static char *dump(json_t *v)
{
	return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
}

static void term_map_tuple_atoms(void)
{
	/* #{a => [1,2], <<"b">> => {true, null, 1.5}} */
	static const unsigned char t[] = {131, 116, 0,   0,   0,   2,   100, 0, 1,  97,  107, 0,
	                                  2,   1,   2,   109, 0,   0,   0,   1, 98, 104, 3,   100,
	                                  0,   4,   116, 114, 117, 101, 100, 0, 4,  110, 117, 108,
	                                  108, 70,  63,  248, 0,   0,   0,   0, 0,  0};
	json_t *v = decode(t, sizeof(t));
	TH_ASSERT(v != NULL);
	char *s = dump(v);
	TH_ASSERT_STR_EQ(s, "{\"a\":[1,2],\"b\":[true,null,1.5]}");
	free(s);
	json_decref(v);
}

static void term_list_binary_ints(void)
{
	/* [<<"x">>, foo, -5, 123456789012] */
	static const unsigned char t[] = {131, 108, 0, 0, 0,   4,   109, 0,   0,   0,   1,
	                                  120, 100, 0, 3, 102, 111, 111, 98,  255, 255, 255,
	                                  251, 110, 5, 0, 20,  26,  153, 190, 28,  106};
	json_t *v = decode(t, sizeof(t));
	TH_ASSERT(v != NULL);
	char *s = dump(v);
	TH_ASSERT_STR_EQ(s, "[\"x\",\"foo\",-5,123456789012]");
	free(s);
	json_decref(v);
}

static void term_pid_and_improper_list(void)
{
	static const unsigned char pid[] = {131, 88, 100, 0,   13,  110, 111, 110, 111, 100,
	                                    101, 64, 110, 111, 104, 111, 115, 116, 0,   0,
	                                    0,   9,  0,   0,   0,   0,   0,   0,   0,   0};
	json_t *v = decode(pid, sizeof(pid));
	TH_ASSERT_STR_EQ(json_string_value(v), "<0.9.0>");
	json_decref(v);
	static const unsigned char improper[] = {131, 108, 0, 0, 0, 1, 97, 1, 97, 2};
	v = decode(improper, sizeof(improper));
	char *s = dump(v);
	TH_ASSERT_STR_EQ(s, "[1]");
	free(s);
	json_decref(v);
}

static void term_rejects_malformed(void)
{
	/* a binary claiming 1000 bytes in a 10-byte buffer */
	static const unsigned char big[] = {131, 109, 0, 0, 3, 232, 1, 2, 3, 4};
	int index = 1;
	json_t *out = NULL;
	TH_ASSERT_INT_EQ(obs_term_to_json((const char *)big, sizeof(big), &index, &out), GI_EPARSE);
	TH_ASSERT(out == NULL);
	/* a list claiming 2^31 elements */
	static const unsigned char list[] = {131, 108, 127, 255, 255, 255, 97, 1};
	index = 1;
	TH_ASSERT_INT_EQ(obs_term_to_json((const char *)list, sizeof(list), &index, &out),
	                 GI_EPARSE);
	/* nesting deeper than the limit: [[[[...]]]] */
	unsigned char deep[1 + 6 * 40 + 1];
	size_t n = 0;
	deep[n++] = 131;
	for (int i = 0; i < 40; i++) {
		static const unsigned char head[] = {108, 0, 0, 0, 1};
		memcpy(deep + n, head, sizeof(head));
		n += sizeof(head);
	}
	deep[n++] = 106;
	index = 1;
	TH_ASSERT_INT_EQ(obs_term_to_json((const char *)deep, (int)n, &index, &out), GI_EPARSE);
}

static void epmd_reply_parsing(void)
{
	struct epmd_port_reply r;
	static const unsigned char ok[] = {119, 0, 0x9c, 0x40, 77,  0,   0, 6, 0,
	                                   5,   0, 3,    'a',  'b', 'c', 0, 0};
	TH_ASSERT_OK(epmd_port_reply_parse(ok, sizeof(ok), &r));
	TH_ASSERT_INT_EQ(r.port, 40000);
	TH_ASSERT_INT_EQ(r.node_type, 77);
	TH_ASSERT_INT_EQ(r.highest_version, 6);
	TH_ASSERT_INT_EQ(r.lowest_version, 5);
	static const unsigned char missing[] = {119, 1};
	TH_ASSERT_INT_EQ(epmd_port_reply_parse(missing, sizeof(missing), &r), GI_ENONODE);
	TH_ASSERT_INT_EQ(epmd_port_reply_parse(ok, 8, &r), GI_EPARSE);
	static const unsigned char wrong[] = {120, 0};
	TH_ASSERT_INT_EQ(epmd_port_reply_parse(wrong, sizeof(wrong), &r), GI_EPARSE);
	static const unsigned char longname[] = {119, 0, 0x9c, 0x40, 77,  0,  0,
	                                         6,   0, 5,    0,    200, 'a'};
	TH_ASSERT_INT_EQ(epmd_port_reply_parse(longname, sizeof(longname), &r), GI_EPARSE);
}

static void mfa_display_names(void)
{
	json_t *mfa = json_pack("[ssi]", "Elixir.Nexus.Repo", "get", 2);
	char *s = obs_mfa_display(mfa);
	TH_ASSERT_STR_EQ(s, "Nexus.Repo.get/2");
	gi_free(s);
	json_decref(mfa);
	mfa = json_pack("[ssi]", "gen_server", "loop", 7);
	s = obs_mfa_display(mfa);
	TH_ASSERT_STR_EQ(s, ":gen_server.loop/7");
	gi_free(s);
	json_decref(mfa);
	mfa = json_pack("[ss]", "a", "b");
	TH_ASSERT(obs_mfa_display(mfa) == NULL);
	json_decref(mfa);
}

static void snapshot_from_reply(void)
{
	json_error_t err;
	json_t *reply = json_loads(
	    "{\"window_ms\": 1000, \"otp_release\": \"25\", \"schedulers_online\": 2,"
	    " \"scheduler_utilisation\": {\"total\": 0.5, \"per_scheduler\": [0.4, 0.6]},"
	    " \"run_queue\": {\"total\": 0, \"per_scheduler\": [0, 0]},"
	    " \"processes\": {\"count\": 10, \"limit\": 100, \"scanned\": 10},"
	    " \"ports\": {\"count\": 1, \"limit\": 10}, \"atoms\": {\"count\": 5, \"limit\": 9},"
	    " \"ets\": {\"count\": 1, \"top\": [{\"name\": \"t\", \"id\": \"t\","
	    "   \"owner_module\": \"Elixir.Nexus.Registry\", \"size\": 3, \"memory_bytes\": 800}]},"
	    " \"memory\": {\"total\": 100}, \"reductions\": {\"delta\": 10, \"per_second\": 10.0},"
	    " \"gc\": {\"count\": 1, \"words_reclaimed\": 2}, \"io\": {\"input_bytes\": 0,"
	    "   \"output_bytes\": 0},"
	    " \"top_processes\": {\"reductions\": [{\"pid\": \"<0.1.0>\", \"registered_name\": "
	    "null,"
	    "   \"initial_call\": [\"Elixir.Nexus.Worker\", \"init\", 1],"
	    "   \"current_function\": [\"gen_server\", \"loop\", 7],"
	    "   \"module\": \"Elixir.Nexus.Worker\", \"reductions\": 9, \"cpu_share\": 0.9,"
	    "   \"memory_bytes\": 1000, \"message_queue_len\": 0}], \"memory\": [],"
	    "   \"message_queue\": []},"
	    " \"trace\": {\"modules\": [\"Elixir.Nexus.Repo\"], \"window_ms\": 1000,"
	    "   \"calls\": [[\"Elixir.Nexus.Repo\", \"get\", 2, 42]]},"
	    " \"errors\": [\"processes: scanned 1 of 2\"], \"sample_us\": 1500}",
	    0, &err);
	TH_ASSERT_MSG(reply != NULL, "fixture: %s", err.text);
	json_t *extra = json_pack("[s]", "trace: module Foo is not loaded");
	json_t *s = obs_snapshot_build(reply, "n@h", "abc", 3, 1234, extra);
	TH_ASSERT(s != NULL);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(s, "version")), 1);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(s, "seq")), 3);
	json_t *p =
	    json_array_get(json_object_get(json_object_get(s, "top_processes"), "reductions"), 0);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(p, "module")), "Nexus.Worker");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(p, "initial_call")),
	                 "Nexus.Worker.init/1");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(p, "current_function")),
	                 ":gen_server.loop/7");
	json_t *ets = json_array_get(json_object_get(json_object_get(s, "ets"), "top"), 0);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(ets, "owner_module")), "Nexus.Registry");
	json_t *call = json_array_get(json_object_get(json_object_get(s, "trace"), "calls"), 0);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(call, "module")), "Nexus.Repo");
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(call, "count")), 42);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(s, "errors")), 2);
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(s, "sample_ms")), 1.5, 1e-9);
	json_decref(s);
	json_t *not_sample = json_pack("[ss]", "error", "boom");
	TH_ASSERT(obs_snapshot_build(not_sample, "n@h", NULL, 0, 0, NULL) == NULL);
	json_decref(not_sample);
	json_decref(extra);
	json_decref(reply);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(term_map_tuple_atoms),       TH_TEST(term_list_binary_ints),
	    TH_TEST(term_pid_and_improper_list), TH_TEST(term_rejects_malformed),
	    TH_TEST(epmd_reply_parsing),         TH_TEST(mfa_display_names),
	    TH_TEST(snapshot_from_reply),        TH_END,
	};
	return th_main(argc, argv, "unit_observe", tests);
}
