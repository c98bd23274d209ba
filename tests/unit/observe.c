/*
 * Unit tests of the observer's parsers and builders: epmd replies, Erlang
 * external terms to JSON (byte sequences as term_to_binary/1 gives them on
 * OTP 25), and sample replies to snapshots.
 * needs:
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <ei.h>
#include <string.h>

#include "base/alloc.h"
#include "base/error.h"
#include "harness.h"
#include "observe/epmd.h"
#include "observe/snapshot.h"
#include "observe/snapshot_view.h"
#include "observe/term.h"
#include "term_util.h"

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

/* The reader in place gives what the JSON decoding gives, value by value,
 * on the edges of the mapping: equal keys (the last wins), keys that are
 * not strings (dropped), Latin-1 atoms, a string list's bytes, a bignum and
 * invalid UTF-8 (null), a pid (text), and absent members. */
static void term_read_in_place_agrees_with_json(void)
{
	ei_x_buff x;
	ei_x_new(&x);
	ei_x_encode_map_header(&x, 8);
	ei_x_encode_atom(&x, "k");
	ei_x_encode_long(&x, 1);
	ei_x_encode_binary(&x, "k", 1); /* the same key as a binary: last wins */
	ei_x_encode_long(&x, 2);
	ei_x_encode_atom(&x, "true"); /* not a string: dropped */
	ei_x_encode_long(&x, 3);
	ei_x_encode_atom_len_as(&x, "caf\xe9", 4, ERLANG_LATIN1, ERLANG_LATIN1);
	ei_x_encode_atom_len_as(&x, "\xe9t\xe9", 3, ERLANG_LATIN1, ERLANG_LATIN1);
	ei_x_encode_atom(&x, "bytes");
	ei_x_encode_string(&x, "AB");
	ei_x_encode_atom(&x, "nested");
	ei_x_encode_list_header(&x, 2);
	ei_x_encode_map_header(&x, 1);
	ei_x_encode_atom(&x, "deep");
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_binary(&x, "\xff", 1); /* invalid UTF-8: null */
	ei_x_encode_atom(&x, "undefined");
	ei_x_encode_double(&x, 2.5);
	ei_x_encode_empty_list(&x);
	ei_x_encode_atom(&x, "big");
	static const unsigned char big[] = {ERL_SMALL_BIG_EXT, 9, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1};
	ei_x_append_buf(&x, (const char *)big, sizeof(big));
	ei_x_encode_atom(&x, "pid");
	erlang_pid pid = {{0}, 42, 7, 0};
	snprintf(pid.node, sizeof(pid.node), "a@b");
	ei_x_encode_pid(&x, &pid);
	int i1 = 0, i2 = 0;
	json_t *j = NULL;
	TH_ASSERT_OK(obs_term_to_json(x.buff, x.index, &i1, &j));
	struct obs_term_doc doc = {0};
	struct obs_term root;
	TH_ASSERT_OK(obs_term_doc_parse(&doc, x.buff, x.index, &i2, &root));
	TH_ASSERT_INT_EQ(i1, i2);
	json_t *again = obs_term_json(root);
	TH_ASSERT(json_equal(j, again));
	TH_ASSERT_INT_EQ(obs_term_integer(obs_term_get(root, "k")), 2);
	TH_ASSERT(!obs_term_present(obs_term_get(root, "true")));
	char text[64];
	TH_ASSERT(obs_term_cstr(obs_term_get(root, "caf\xc3\xa9"), text, sizeof(text)));
	TH_ASSERT_STR_EQ(text, "\xc3\xa9t\xc3\xa9");
	struct obs_term bytes = obs_term_get(root, "bytes");
	TH_ASSERT_INT_EQ(obs_term_type(bytes), JSON_ARRAY);
	TH_ASSERT_INT_EQ(obs_term_size(bytes), 2);
	TH_ASSERT_INT_EQ(obs_term_integer(obs_term_item(bytes, 1)), 'B');
	struct obs_term nested = obs_term_get(root, "nested");
	struct obs_term deep = obs_term_get(obs_term_item(nested, 0), "deep");
	TH_ASSERT_INT_EQ(obs_term_type(obs_term_item(deep, 0)), JSON_NULL);
	TH_ASSERT(obs_term_present(obs_term_item(deep, 0)));
	TH_ASSERT_DBL_NEAR(obs_term_number(obs_term_item(nested, 1)), 2.5, 0);
	TH_ASSERT(!obs_term_present(obs_term_item(nested, 2)));
	TH_ASSERT_INT_EQ(obs_term_type(obs_term_get(root, "big")), JSON_NULL);
	TH_ASSERT_DBL_NEAR(obs_term_number(obs_term_get(root, "big")), 0, 0);
	TH_ASSERT(obs_term_cstr(obs_term_get(root, "pid"), text, sizeof(text)));
	TH_ASSERT_STR_EQ(text, "<0.42.7>");
	struct obs_term absent = obs_term_get(root, "nothing");
	TH_ASSERT(!obs_term_present(absent));
	TH_ASSERT_INT_EQ(obs_term_size(absent), 0);
	TH_ASSERT(obs_term_json(absent) == NULL);
	json_decref(again);
	json_decref(j);
	obs_term_doc_destroy(&doc);
	ei_x_free(&x);
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
	char *s = ts_mfa_display(mfa);
	TH_ASSERT_STR_EQ(s, "Nexus.Repo.get/2");
	gi_free(s);
	json_decref(mfa);
	mfa = json_pack("[ssi]", "gen_server", "loop", 7);
	s = ts_mfa_display(mfa);
	TH_ASSERT_STR_EQ(s, ":gen_server.loop/7");
	gi_free(s);
	json_decref(mfa);
	mfa = json_pack("[ss]", "a", "b");
	TH_ASSERT(ts_mfa_display(mfa) == NULL);
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
	json_t *s = ts_snapshot_build(reply, "n@h", "abc", 3, 1234, extra);
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
	TH_ASSERT(ts_snapshot_build(not_sample, "n@h", NULL, 0, 0, NULL) == NULL);
	json_decref(not_sample);
	json_decref(extra);
	json_decref(reply);
}

/* A reply with every field of the session process, through the snapshot
 * builder and the typed view: a field renamed on either side fails here. */
static void view_reads_every_field_of_a_built_snapshot(void)
{
	json_error_t err;
	json_t *reply = json_loads(
	    "{\"window_ms\": 1000, \"otp_release\": \"25\", \"schedulers_online\": 2,"
	    " \"scheduler_utilisation\": {\"total\": 0.5, \"per_scheduler\": [0.4, 0.6]},"
	    " \"run_queue\": {\"total\": 3, \"per_scheduler\": [1, 2]},"
	    " \"processes\": {\"count\": 10, \"limit\": 100, \"scanned\": 9},"
	    " \"ports\": {\"count\": 1, \"limit\": 10}, \"atoms\": {\"count\": 5, \"limit\": 9},"
	    " \"ets\": {\"count\": 4, \"top\": [{\"name\": \"t\", \"id\": \"#Ref<1>\","
	    "   \"owner_module\": \"Elixir.A.B\", \"size\": 3, \"memory_bytes\": 800}]},"
	    " \"memory\": {\"total\": 100, \"processes\": 11, \"processes_used\": 12, \"system\": "
	    "13,"
	    "   \"atom\": 14, \"binary\": 15, \"code\": 16, \"ets\": 17},"
	    " \"reductions\": {\"delta\": 10, \"per_second\": 20.5},"
	    " \"gc\": {\"count\": 21, \"words_reclaimed\": 22}, \"io\": {\"input_bytes\": 23,"
	    "   \"output_bytes\": 24},"
	    " \"top_processes\": {"
	    "   \"reductions\": [{\"pid\": \"<0.1.0>\", \"registered_name\": \"w\","
	    "     \"initial_call\": [\"Elixir.A.Worker\", \"init\", 1],"
	    "     \"current_function\": [\"gen_server\", \"loop\", 7],"
	    "     \"module\": \"Elixir.A.Worker\", \"reductions\": 9, \"cpu_share\": 0.9,"
	    "     \"memory_bytes\": 1000, \"message_queue_len\": 2}],"
	    "   \"memory\": [{\"pid\": \"<0.2.0>\", \"module\": \"ets\", \"memory_bytes\": 5}],"
	    "   \"message_queue\": [{\"pid\": \"<0.3.0>\", \"module\": \"lists\","
	    "     \"message_queue_len\": 7}]},"
	    " \"trace\": {\"modules\": [\"Elixir.A.Repo\"], \"window_ms\": 990,"
	    "   \"calls\": [[\"Elixir.A.Repo\", \"get\", 2, 42]]},"
	    " \"executing\": {\"period_ms\": 10, \"ticks\": 95, \"candidates\": 10,"
	    "   \"stack_candidates\": 5, \"depth\": 8, \"samples\": {\"running\": 60,"
	    "   \"waiting\": 30}, \"reductions_sampled\": 900, \"dropped\": 1, \"failed_ticks\": "
	    "0, \"tick_us\": 77,"
	    "   \"stacks\": [{\"frames\": [[\"lists\", \"foldl\", 3], [\"Elixir.A.Calc\", \"run\", "
	    "1]],"
	    "     \"samples\": 60, \"reductions\": 900}],"
	    "   \"origins\": [{\"module\": \"lists\", \"origin\": \"otp\"},"
	    "     {\"module\": \"Elixir.A.Calc\", \"origin\": \"other\"}]},"
	    " \"errors\": [\"processes: scanned 1 of 2\"], \"sample_us\": 1500}",
	    0, &err);
	TH_ASSERT_MSG(reply != NULL, "fixture: %s", err.text);
	json_t *s = ts_snapshot_build(reply, "n@h", "abc", 3, 1234, NULL);
	TH_ASSERT(s != NULL);
	struct obs_view v;
	TH_ASSERT_OK(obs_view_parse(s, &v));
	TH_ASSERT_INT_EQ(v.version, 1);
	TH_ASSERT_STR_EQ(v.session_id, "abc");
	TH_ASSERT_STR_EQ(v.node, "n@h");
	TH_ASSERT_STR_EQ(v.otp_release, "25");
	TH_ASSERT_DBL_NEAR(v.seq, 3, 0);
	TH_ASSERT_DBL_NEAR(v.timestamp_ms, 1234, 0);
	TH_ASSERT_DBL_NEAR(v.window_ms, 1000, 0);
	TH_ASSERT_DBL_NEAR(v.schedulers_online, 2, 0);
	TH_ASSERT_DBL_NEAR(v.sample_ms, 1.5, 1e-9);
	TH_ASSERT_DBL_NEAR(v.utilisation_total, 0.5, 0);
	TH_ASSERT_INT_EQ(v.nutilisation, 2);
	TH_ASSERT_DBL_NEAR(v.utilisation_per[1], 0.6, 0);
	TH_ASSERT_DBL_NEAR(v.run_queue_total, 3, 0);
	TH_ASSERT_INT_EQ(v.nrun_queue, 2);
	TH_ASSERT_DBL_NEAR(v.run_queue_per[1], 2, 0);
	TH_ASSERT_DBL_NEAR(v.processes_count, 10, 0);
	TH_ASSERT_DBL_NEAR(v.processes_limit, 100, 0);
	TH_ASSERT_DBL_NEAR(v.processes_scanned, 9, 0);
	TH_ASSERT_DBL_NEAR(v.ports_count, 1, 0);
	TH_ASSERT_DBL_NEAR(v.ports_limit, 10, 0);
	TH_ASSERT_DBL_NEAR(v.atoms_count, 5, 0);
	TH_ASSERT_DBL_NEAR(v.atoms_limit, 9, 0);
	TH_ASSERT_DBL_NEAR(v.ets_count, 4, 0);
	TH_ASSERT_INT_EQ(v.nets_top, 1);
	TH_ASSERT_STR_EQ(v.ets_top[0].name, "t");
	TH_ASSERT_STR_EQ(v.ets_top[0].id, "#Ref<1>");
	TH_ASSERT_STR_EQ(v.ets_top[0].owner_module, "A.B");
	TH_ASSERT_DBL_NEAR(v.ets_top[0].size, 3, 0);
	TH_ASSERT_DBL_NEAR(v.ets_top[0].memory_bytes, 800, 0);
	const double mem[] = {v.memory.total,  v.memory.processes, v.memory.processes_used,
	                      v.memory.system, v.memory.atom,      v.memory.binary,
	                      v.memory.code,   v.memory.ets};
	const double mem_want[] = {100, 11, 12, 13, 14, 15, 16, 17};
	for (size_t i = 0; i < 8; i++)
		TH_ASSERT_DBL_NEAR(mem[i], mem_want[i], 0);
	TH_ASSERT_DBL_NEAR(v.reductions_delta, 10, 0);
	TH_ASSERT_DBL_NEAR(v.reductions_per_second, 20.5, 0);
	TH_ASSERT_DBL_NEAR(v.gc_count, 21, 0);
	TH_ASSERT_DBL_NEAR(v.gc_words_reclaimed, 22, 0);
	TH_ASSERT_DBL_NEAR(v.io_input_bytes, 23, 0);
	TH_ASSERT_DBL_NEAR(v.io_output_bytes, 24, 0);
	TH_ASSERT_INT_EQ(v.top_reductions.len, 1);
	const struct obs_view_process *p = &v.top_reductions.items[0];
	TH_ASSERT_STR_EQ(p->pid, "<0.1.0>");
	TH_ASSERT_STR_EQ(p->registered_name, "w");
	TH_ASSERT_STR_EQ(p->initial_call, "A.Worker.init/1");
	TH_ASSERT_STR_EQ(p->current_function, ":gen_server.loop/7");
	TH_ASSERT_STR_EQ(p->module, "A.Worker");
	TH_ASSERT_DBL_NEAR(p->reductions, 9, 0);
	TH_ASSERT_DBL_NEAR(p->cpu_share, 0.9, 0);
	TH_ASSERT_DBL_NEAR(p->memory_bytes, 1000, 0);
	TH_ASSERT_DBL_NEAR(p->message_queue_len, 2, 0);
	TH_ASSERT_INT_EQ(v.top_memory.len, 1);
	TH_ASSERT_STR_EQ(v.top_memory.items[0].module, ":ets");
	TH_ASSERT(isnan(v.top_memory.items[0].reductions)); /* absent: unknown, not 0 */
	TH_ASSERT_INT_EQ(v.top_message_queue.len, 1);
	TH_ASSERT_DBL_NEAR(v.top_message_queue.items[0].message_queue_len, 7, 0);
	TH_ASSERT(v.has_trace);
	TH_ASSERT_INT_EQ(v.ntrace_modules, 1);
	TH_ASSERT_STR_EQ(v.trace_modules[0], "A.Repo");
	TH_ASSERT_DBL_NEAR(v.trace_window_ms, 990, 0);
	TH_ASSERT_INT_EQ(v.ncalls, 1);
	TH_ASSERT_STR_EQ(v.calls[0].module, "A.Repo");
	TH_ASSERT_STR_EQ(v.calls[0].function, "get");
	TH_ASSERT_DBL_NEAR(v.calls[0].arity, 2, 0);
	TH_ASSERT_DBL_NEAR(v.calls[0].count, 42, 0);
	TH_ASSERT_INT_EQ(v.nerrors, 1);
	const struct obs_view_executing *e = &v.executing;
	TH_ASSERT(e->present);
	const double ex[] = {
	    e->period_ms, e->ticks,           e->candidates,      e->stack_candidates,
	    e->depth,     e->samples_running, e->samples_waiting, e->reductions_sampled,
	    e->dropped,   e->failed_ticks,    e->tick_us};
	const double ex_want[] = {10, 95, 10, 5, 8, 60, 30, 900, 1, 0, 77};
	for (size_t i = 0; i < sizeof(ex) / sizeof(ex[0]); i++)
		TH_ASSERT_DBL_NEAR(ex[i], ex_want[i], 0);
	TH_ASSERT_INT_EQ(e->nstacks, 1);
	TH_ASSERT_INT_EQ(e->stacks[0].depth, 2);
	TH_ASSERT_STR_EQ(e->stacks[0].frames[0], ":lists.foldl/3");
	TH_ASSERT_STR_EQ(e->stacks[0].frames[1], "A.Calc.run/1");
	TH_ASSERT_DBL_NEAR(e->stacks[0].samples, 60, 0);
	TH_ASSERT_DBL_NEAR(e->stacks[0].reductions, 900, 0);
	TH_ASSERT_INT_EQ(e->norigins, 2);
	TH_ASSERT_STR_EQ(e->origins[0].module, ":lists");
	TH_ASSERT_STR_EQ(e->origins[0].origin, "otp");
	TH_ASSERT_INT_EQ(v.truncated, 0);
	obs_view_destroy(&v);
	json_decref(s);
	json_decref(reply);
}

/* A snapshot as the real observer produced it (an Elixir node computing in a
 * Task and a spawn(fn), traced): every section is read and known. */
static void view_reads_a_real_observer_snapshot(void)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/tests/fixtures/snapshots/observer/session.json",
	         th_srcdir());
	json_error_t err;
	json_t *s = json_load_file(path, 0, &err);
	TH_ASSERT_MSG(s != NULL, "%s: %s", path, err.text);
	struct obs_view v;
	TH_ASSERT_OK(obs_view_parse(s, &v));
	TH_ASSERT_INT_EQ(v.version, 1);
	TH_ASSERT(v.session_id && v.node && v.otp_release);
	const double known[] = {v.seq,
	                        v.timestamp_ms,
	                        v.window_ms,
	                        v.schedulers_online,
	                        v.sample_ms,
	                        v.utilisation_total,
	                        v.run_queue_total,
	                        v.processes_count,
	                        v.processes_limit,
	                        v.processes_scanned,
	                        v.ports_count,
	                        v.ports_limit,
	                        v.atoms_count,
	                        v.atoms_limit,
	                        v.ets_count,
	                        v.memory.total,
	                        v.memory.processes,
	                        v.memory.processes_used,
	                        v.memory.system,
	                        v.memory.atom,
	                        v.memory.binary,
	                        v.memory.code,
	                        v.memory.ets,
	                        v.reductions_delta,
	                        v.reductions_per_second,
	                        v.gc_count,
	                        v.gc_words_reclaimed,
	                        v.io_input_bytes,
	                        v.io_output_bytes,
	                        v.trace_window_ms,
	                        v.executing.period_ms,
	                        v.executing.ticks,
	                        v.executing.candidates,
	                        v.executing.stack_candidates,
	                        v.executing.depth,
	                        v.executing.samples_running,
	                        v.executing.samples_waiting,
	                        v.executing.reductions_sampled,
	                        v.executing.dropped,
	                        v.executing.failed_ticks};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		TH_ASSERT_MSG(isfinite(known[i]), "number %zu of the view is unknown", i);
	TH_ASSERT_INT_EQ(v.nutilisation, 2);
	TH_ASSERT(v.nets_top >= 1 && v.ets_top[0].name && v.ets_top[0].owner_module);
	TH_ASSERT(v.top_reductions.len >= 2 && v.top_memory.len >= 1);
	for (size_t i = 0; i < v.top_reductions.len; i++) {
		const struct obs_view_process *p = &v.top_reductions.items[i];
		TH_ASSERT(p->pid && p->initial_call && p->current_function && p->module);
		TH_ASSERT(isfinite(p->reductions) && isfinite(p->cpu_share) &&
		          isfinite(p->memory_bytes) && isfinite(p->message_queue_len));
	}
	TH_ASSERT(v.has_trace && v.ntrace_modules == 1 && v.ncalls >= 1);
	TH_ASSERT_STR_EQ(v.trace_modules[0], "Calc.Work");
	TH_ASSERT(v.executing.present && v.executing.nstacks >= 1 && v.executing.norigins >= 1);
	TH_ASSERT_STR_EQ(v.executing.stacks[0].frames[0], "Calc.Work.fib/1");
	TH_ASSERT(v.executing.stacks[0].reductions > 0 && v.executing.stacks[0].samples > 0);
	TH_ASSERT_INT_EQ(v.truncated, 0);
	obs_view_destroy(&v);
	json_decref(s);
}

/* Unknown stays unknown, newer versions are refused, caps hold. */
static void view_is_tolerant_and_capped(void)
{
	struct obs_view v;
	TH_ASSERT_INT_EQ(obs_view_parse(NULL, &v), GI_EINVAL);
	obs_view_destroy(&v);
	json_t *newer = json_pack("{s:i}", "version", OBS_VIEW_VERSION + 1);
	TH_ASSERT_INT_EQ(obs_view_parse(newer, &v), GI_EUNSUPPORTED);
	obs_view_destroy(&v);
	json_decref(newer);
	json_t *odd = json_pack("{s:s, s:s, s:{s:s}, s:[i,s]}", "window_ms", "soon", "node", "n",
	                        "memory", "total", "big", "errors", 1, "real");
	json_t *list = json_array();
	for (int i = 0; i < OBS_VIEW_MAX_PROCESSES + 5; i++)
		json_array_append_new(list, json_pack("{s:i}", "reductions", i));
	json_object_set_new(odd, "top_processes", json_pack("{s:o}", "reductions", list));
	TH_ASSERT_OK(obs_view_parse(odd, &v));
	TH_ASSERT_INT_EQ(v.version, -1);
	TH_ASSERT(isnan(v.window_ms) && isnan(v.memory.total) && isnan(v.sample_ms));
	TH_ASSERT_STR_EQ(v.node, "n");
	TH_ASSERT_INT_EQ(v.nerrors, 1);
	TH_ASSERT_INT_EQ(v.top_reductions.len, OBS_VIEW_MAX_PROCESSES);
	TH_ASSERT_INT_EQ(v.truncated, 5);
	TH_ASSERT(!v.has_trace && !v.executing.present);
	obs_view_destroy(&v);
	json_decref(odd);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(term_map_tuple_atoms),
	    TH_TEST(term_list_binary_ints),
	    TH_TEST(term_pid_and_improper_list),
	    TH_TEST(term_rejects_malformed),
	    TH_TEST(term_read_in_place_agrees_with_json),
	    TH_TEST(epmd_reply_parsing),
	    TH_TEST(mfa_display_names),
	    TH_TEST(snapshot_from_reply),
	    TH_TEST(view_reads_every_field_of_a_built_snapshot),
	    TH_TEST(view_reads_a_real_observer_snapshot),
	    TH_TEST(view_is_tolerant_and_capped),
	    TH_END,
	};
	return th_main(argc, argv, "unit_observe", tests);
}
