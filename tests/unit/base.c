/*
 * Unit tests for src/base: buffers, arrays, maps, arenas, strings, files,
 * JSON text.
 * needs:
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/alloc.h"
#include "base/arena.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/json_read.h"
#include "base/json_text.h"
#include "base/map.h"
#include "base/runtime.h"
#include "base/str.h"
#include "base/vec.h"
#include "cli/cli.h"
#include "harness.h"
#include "source/facts.h"

static void buf_appends_and_caps(void)
{
	struct gi_buf b;
	gi_buf_init(&b, 8);
	TH_ASSERT_OK(gi_buf_puts(&b, "abc"));
	TH_ASSERT_OK(gi_buf_printf(&b, "%d", 1234));
	TH_ASSERT_STR_EQ(gi_buf_str(&b), "abc1234");
	TH_ASSERT_INT_EQ(gi_buf_puts(&b, "xy"), GI_ETOOBIG);
	TH_ASSERT_STR_EQ(gi_buf_str(&b), "abc1234");
	gi_buf_destroy(&b);
}

static void vec_grows(void)
{
	struct gi_vec v;
	gi_vec_init(&v, sizeof(int));
	for (int i = 0; i < 1000; i++)
		gi_vec_push(&v, &i);
	TH_ASSERT_INT_EQ(v.len, 1000);
	TH_ASSERT_INT_EQ(GI_VEC_AT(&v, int, 999), 999);
	gi_vec_destroy(&v);
}

static void map_puts_and_gets(void)
{
	struct gi_map m;
	gi_map_init(&m);
	char key[32];
	for (long i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "k%ld", i);
		gi_map_put(&m, key, (void *)(i + 1));
	}
	TH_ASSERT_INT_EQ(m.len, 5000);
	TH_ASSERT_INT_EQ((long)gi_map_get(&m, "k4321"), 4322);
	TH_ASSERT(gi_map_get(&m, "nope") == NULL);
	TH_ASSERT_INT_EQ((long)gi_map_getn(&m, "k12xyz", 3), 13);
	TH_ASSERT_INT_EQ((long)gi_map_put(&m, "k1", (void *)7), 2);
	gi_map_destroy(&m);
}

static void arena_allocates(void)
{
	struct gi_arena a;
	gi_arena_init(&a);
	char *s = gi_arena_strdup(&a, "hello");
	char *big = gi_arena_alloc(&a, 200000);
	memset(big, 1, 200000);
	TH_ASSERT_STR_EQ(s, "hello");
	TH_ASSERT_STR_EQ(gi_arena_printf(&a, "%s-%d", "x", 3), "x-3");
	gi_arena_destroy(&a);
}

static void strings_are_checked(void)
{
	char small[4];
	TH_ASSERT_INT_EQ(gi_strlcpy(small, "abcdef", sizeof(small)), GI_ETOOBIG);
	TH_ASSERT_STR_EQ(small, "abc");
	int64_t v = 0;
	TH_ASSERT_OK(gi_parse_int64("250", 0, 1000, &v));
	TH_ASSERT_INT_EQ(v, 250);
	TH_ASSERT_INT_EQ(gi_parse_int64("25x", 0, 1000, &v), GI_EINVAL);
	TH_ASSERT_INT_EQ(gi_parse_int64("2500", 0, 1000, &v), GI_EINVAL);
	/* Strict: what strtoll would skip or accept is refused. */
	TH_ASSERT_INT_EQ(gi_parse_int64("+5", 0, 1000, &v), GI_EINVAL);
	TH_ASSERT_INT_EQ(gi_parse_int64(" 1", 0, 1000, &v), GI_EINVAL);
	TH_ASSERT_INT_EQ(gi_parse_int64("  1", 0, 1000, &v), GI_EINVAL);
	TH_ASSERT_INT_EQ(gi_parse_int64("0x10", 0, 1000, &v), GI_EINVAL);
	TH_ASSERT_INT_EQ(gi_parse_int64("-", -5, 5, &v), GI_EINVAL);
	TH_ASSERT_INT_EQ(gi_parse_int64("1 ", 0, 1000, &v), GI_EINVAL);
	TH_ASSERT_OK(gi_parse_int64("-3", -5, 5, &v));
	TH_ASSERT_INT_EQ(v, -3);
	TH_ASSERT(gi_utf8_valid("h\xc3\xa9llo", 6));
	TH_ASSERT(!gi_utf8_valid("\xc3", 1));
	TH_ASSERT(!gi_utf8_valid("\xed\xa0\x80", 3));
	TH_ASSERT(gi_str_secure_equal("token", "token"));
	TH_ASSERT(!gi_str_secure_equal("token", "tokem"));
	TH_ASSERT(!gi_str_secure_equal("token", "tok"));
}

static void files_round_trip(void)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/a/b/c", th_tmpdir());
	TH_ASSERT_OK(gi_fs_mkdir_p(path));
	snprintf(path, sizeof(path), "%s/a/b/c/f.txt", th_tmpdir());
	TH_ASSERT_OK(gi_fs_write_file(path, "data", 4));
	char *data = NULL;
	size_t len = 0;
	TH_ASSERT_OK(gi_fs_read_file(path, 100, &data, &len));
	TH_ASSERT_STR_EQ(data, "data");
	gi_free(data);
	TH_ASSERT_INT_EQ(gi_fs_read_file(path, 3, &data, &len), GI_ETOOBIG);
	TH_ASSERT_INT_EQ(gi_fs_read_file("/nonexistent/x", 3, &data, &len), GI_ENOENT);
	snprintf(path, sizeof(path), "%s/a", th_tmpdir());
	TH_ASSERT_OK(gi_fs_remove_tree(path));
}

static void module_names_convert(void)
{
	char out[64];
	TH_ASSERT_OK(gi_module_display_name("Elixir.Nexus.Repo", out, sizeof(out)));
	TH_ASSERT_STR_EQ(out, "Nexus.Repo");
	TH_ASSERT_OK(gi_module_display_name("ets", out, sizeof(out)));
	TH_ASSERT_STR_EQ(out, ":ets");
	TH_ASSERT_INT_EQ(gi_module_display_name("ets", out, 4), GI_ETOOBIG); /* as snprintf cuts */
	TH_ASSERT_STR_EQ(out, ":et");
	TH_ASSERT_OK(gi_module_display_name("ets", out, 5));
	TH_ASSERT_STR_EQ(out, ":ets");
	TH_ASSERT_OK(gi_module_atom_name(":gen_server", out, sizeof(out)));
	TH_ASSERT_STR_EQ(out, "gen_server");
	TH_ASSERT_OK(gi_module_atom_name("Nexus.Repo", out, sizeof(out)));
	TH_ASSERT_STR_EQ(out, "Elixir.Nexus.Repo");
	TH_ASSERT_STR_EQ(gi_strerror(GI_ETIMEOUT), "timed out");
	TH_ASSERT_STR_EQ(gi_errname(GI_ECOOKIE), "COOKIE");
}

/* The error table's columns: every code has its name, text and a status a
 * client can act on; the exit codes are the ones cli.h names (docs/CLI.md
 * documents them by number: a changed column would break scripts). */
static void error_table_columns_agree(void)
{
	for (int code = GI_EFIRST_ + 1; code < GI_ELAST_; code++) {
		TH_ASSERT(strcmp(gi_errname(code), "UNKNOWN") != 0);
		TH_ASSERT(strcmp(gi_strerror(code), "unknown error") != 0);
		int status = gi_error_http_status(code);
		TH_ASSERT_MSG(status >= 400 && status < 600, "%s: %d", gi_errname(code), status);
		TH_ASSERT(gi_error_hint(code) != NULL);
	}
	TH_ASSERT_INT_EQ(gi_error_http_status(0), 200);
	TH_ASSERT_INT_EQ(gi_error_http_status(GI_ENOTFOUND), 404);
	TH_ASSERT_INT_EQ(gi_error_http_status(GI_ETIMEOUT), 504);
	TH_ASSERT_INT_EQ(gi_error_http_status(-1), 500);
	const struct {
		int code, exit;
	} exits[] = {{0, CLI_EXIT_OK},
	             {GI_EINVAL, CLI_EXIT_FAILURE},
	             {GI_EEPMD, CLI_EXIT_EPMD},
	             {GI_ENONODE, CLI_EXIT_NONODE},
	             {GI_ECOOKIE, CLI_EXIT_COOKIE},
	             {GI_ETIMEOUT, CLI_EXIT_TIMEOUT},
	             {GI_ENODEDOWN, CLI_EXIT_NODEDOWN},
	             {GI_EOTPVERSION, CLI_EXIT_OTPVERSION},
	             {GI_EBADRPC, CLI_EXIT_BADRPC},
	             {GI_ECONNECT, CLI_EXIT_CONNECT},
	             {GI_ENOCOOKIE, CLI_EXIT_NOCOOKIE},
	             {GI_EHANDSHAKE, CLI_EXIT_HANDSHAKE},
	             {GI_ENAMEREFUSED, CLI_EXIT_NAMEREFUSED},
	             {-1, CLI_EXIT_FAILURE}};
	for (size_t i = 0; i < sizeof(exits) / sizeof(exits[0]); i++)
		TH_ASSERT_INT_EQ(cli_exit_code_for(exits[i].code), exits[i].exit);
	TH_ASSERT_STR_CONTAINS(gi_error_hint(GI_ENOCOOKIE), "GIULIA_COOKIE");
	TH_ASSERT_STR_EQ(gi_error_hint(GI_EIO), "");
}

/* The tolerant readers answer "absent" for every shape they were not asked
 * for, and never crash on one. */
static void json_readers_are_tolerant(void)
{
	json_t *o = json_pack("{s:i, s:f, s:s, s:b, s:{s:{s:i}}, s:[i]}", "n", 3, "r", 0.5, "s",
	                      "x", "t", 1, "a", "b", "c", 7, "l", 1);
	TH_ASSERT_DBL_NEAR(gi_json_num(o, "n"), 3, 0);
	TH_ASSERT_DBL_NEAR(gi_json_num(o, "r"), 0.5, 0);
	TH_ASSERT(isnan(gi_json_num(o, "s")) && isnan(gi_json_num(o, "missing")));
	TH_ASSERT(isnan(gi_json_num(NULL, "n")) &&
	          isnan(gi_json_num(json_object_get(o, "l"), "n")));
	TH_ASSERT_DBL_NEAR(gi_json_num_or(o, "s", -1), -1, 0);
	TH_ASSERT_DBL_NEAR(gi_json_num_path(o, "a.b.c"), 7, 0);
	TH_ASSERT(isnan(gi_json_num_path(o, "a.b.c.d")) && isnan(gi_json_num_path(o, "a.x.c")));
	TH_ASSERT_STR_EQ(gi_json_str(o, "s"), "x");
	TH_ASSERT(gi_json_str(o, "n") == NULL && gi_json_str_path(o, "a.b") == NULL);
	TH_ASSERT(gi_json_obj(o, "a") != NULL && gi_json_obj(o, "l") == NULL);
	TH_ASSERT(gi_json_arr(o, "l") != NULL && gi_json_arr(o, "a") == NULL);
	TH_ASSERT(gi_json_true(o, "t") && !gi_json_true(o, "n") && !gi_json_true(NULL, "t"));
	char long_key[300];
	memset(long_key, 'k', sizeof(long_key) - 1);
	long_key[sizeof(long_key) - 1] = '\0';
	TH_ASSERT(gi_json_get_path(o, long_key) == NULL); /* a key over 127 bytes */
	json_decref(o);
}

/* The harness ran gi_runtime_init(); a second call changes nothing. */
static void jansson_allocates_through_gi_malloc(void)
{
	gi_runtime_init();
	json_malloc_t m = NULL;
	json_free_t f = NULL;
	json_get_alloc_funcs(&m, &f);
	TH_ASSERT(m == gi_malloc);
	TH_ASSERT(f == gi_free);
	json_t *o = json_object();
	TH_ASSERT_INT_EQ(json_object_set_new(o, "k", json_string("v")), 0);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(o, "k")), "v");
	json_decref(o);
}

/* gi_json_text writes what json_dumps(JSON_COMPACT) writes, byte for byte. */
static void json_text_same_as_jansson_of(json_t *v)
{
	char *ours = gi_json_text(v, NULL);
	char *theirs = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	TH_ASSERT(ours != NULL && theirs != NULL);
	TH_ASSERT_STR_EQ(ours, theirs);
	gi_free(ours);
	free(theirs); /* jansson's allocator */
}

static void json_text_matches_jansson(void)
{
	static const double reals[] = {0.0,
	                               -0.0,
	                               1.0,
	                               -1.0,
	                               0.5,
	                               0.1,
	                               1.0 / 3,
	                               1e-7,
	                               1e-300,
	                               1e300,
	                               123.25,
	                               1e15,
	                               1e16,
	                               1e17,
	                               9007199254740991.0,
	                               9007199254740993.0,
	                               -2.5e-5,
	                               4.9e-324,
	                               1.7976931348623157e308,
	                               12345678.0};
	json_t *a = json_array();
	for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++) {
		json_t *r = json_real(reals[i]);
		json_text_same_as_jansson_of(r);
		/* and it reads back as the same double */
		char *text = gi_json_text(r, NULL);
		json_t *back = json_loads(text, JSON_DECODE_ANY, NULL);
		TH_ASSERT(json_is_real(back));
		TH_ASSERT(json_real_value(back) == reals[i]);
		TH_ASSERT(signbit(json_real_value(back)) == signbit(reals[i]));
		json_decref(back);
		gi_free(text);
		json_array_append_new(a, r);
	}
	static const long long ints[] = {0,
	                                 1,
	                                 -1,
	                                 9,
	                                 10,
	                                 -10,
	                                 1234567890123LL,
	                                 9223372036854775807LL,
	                                 -9223372036854775807LL - 1};
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		json_array_append_new(a, json_integer(ints[i]));
	json_array_append_new(a, json_string("plain"));
	json_array_append_new(a, json_string("quote \" back \\ slash / tab \t nl \n cr \r"));
	static const char controls[] = "\x01\x1f\b\f nul \0 end";
	json_array_append_new(a, json_stringn(controls, sizeof(controls) - 1));
	json_array_append_new(a, json_string("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \x7f"));
	json_array_append_new(a, json_string(""));
	json_array_append_new(a, json_true());
	json_array_append_new(a, json_false());
	json_array_append_new(a, json_null());
	json_array_append_new(a, json_object());
	json_array_append_new(a, json_array());
	json_t *o =
	    json_pack("{s:i, s:[i, {s:s}], s:n, s:{}}", "z", 1, "a\"key\n", 2, "x", "y", "m", "e");
	json_array_append_new(a, o);
	json_text_same_as_jansson_of(a);
	json_decref(a);

	/* real snapshots (every section the observer writes) */
	static const char *const files[] = {"busy/snapshots.json", "quiet/snapshots.json",
	                                    "observer/session.json", "busy/finalize.json"};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[1024];
		snprintf(path, sizeof(path), "%s/tests/fixtures/snapshots/%s", th_srcdir(),
		         files[i]);
		json_error_t err;
		json_t *doc = json_load_file(path, 0, &err);
		TH_ASSERT_MSG(doc != NULL, "%s: %s", path, err.text);
		json_text_same_as_jansson_of(doc);
		json_decref(doc);
	}

	/* a bounded buffer: past the limit nothing is left half written */
	struct gi_buf b;
	gi_buf_init(&b, 16);
	TH_ASSERT_OK(gi_buf_puts(&b, "ab"));
	json_t *big = json_pack("{s:s}", "key", "a value longer than the limit");
	TH_ASSERT_INT_EQ(gi_json_append(&b, big), GI_ETOOBIG);
	TH_ASSERT_STR_EQ(gi_buf_str(&b), "ab");
	json_decref(big);
	gi_buf_destroy(&b);
}

/* The same text as jansson's "%.17g" for every kind of real the exact path
 * takes (1e-30 <= |d|, not an integer) and those at its edges, which
 * snprintf writes: random bit patterns over the exponents around the
 * range, short decimals (shares, rates), exact ties at the 18th digit
 * (rounded half to even), values next to powers of ten (where the digit
 * count, the rounding carry and %g's choice of notation change). */
static bool real_text_same(double d)
{
	json_t *r = json_real(d);
	char *ours = gi_json_text(r, NULL);
	char *theirs = json_dumps(r, JSON_COMPACT | JSON_ENCODE_ANY);
	bool same = ours && theirs && strcmp(ours, theirs) == 0;
	if (!same)
		fprintf(stderr, "real %a: ours %s, jansson %s\n", d, ours ? ours : "(none)",
		        theirs ? theirs : "(none)");
	gi_free(ours);
	free(theirs); /* jansson's allocator */
	json_decref(r);
	return same;
}

static void json_text_reals_match_jansson(void)
{
	unsigned long long state = 0x9E3779B97F4A7C15ULL;
	size_t bad = 0;
	for (int i = 0; i < 40000; i++) {
		state = state * 6364136223846793005ULL + 1442695040888963407ULL;
		unsigned long long bits = state >> 12; /* 52 bits of mantissa */
		unsigned long long biased = 1023 - 110 + (state >> 56) % 165; /* 2^-110 .. 2^54 */
		bits |= biased << 52;
		if (i & 1)
			bits |= 1ULL << 63;
		double d;
		memcpy(&d, &bits, sizeof(d));
		bad += !real_text_same(d);
		/* short decimals: k / 10^j */
		double dec = (double)(state % 100000000) / pow(10, (double)((state >> 40) % 40));
		bad += !real_text_same(dec);
	}
	/* ties at the 18th significant digit: an integer part and a dyadic
	 * fraction, 18 digits in all, exact in a double */
	static const double ties[] = {123456789012345.125, 123456789012345.375, 123456789012345.625,
	                              123456789012345.875, 12345678901234.5625, 1234567890123.03125,
	                              0.001953125,         0.0009765625,        2.98023223876953125,
	                              9.5367431640625};
	for (size_t i = 0; i < sizeof(ties) / sizeof(ties[0]); i++)
		bad += !real_text_same(ties[i]) + !real_text_same(-ties[i]);
	for (int e = -32; e <= 17; e++) {
		double p = pow(10, e);
		double x = p;
		for (int k = 0; k < 40; k++) {
			bad += !real_text_same(x) + !real_text_same(-x);
			x = nextafter(x, 0);
		}
		x = p;
		for (int k = 0; k < 40; k++) {
			bad += !real_text_same(x);
			x = nextafter(x, INFINITY);
		}
		bad += !real_text_same(p * 0.99999999999999999) + !real_text_same(p - p / 3e17);
	}
	TH_ASSERT_INT_EQ(bad, 0);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(buf_appends_and_caps),
	    TH_TEST(vec_grows),
	    TH_TEST(map_puts_and_gets),
	    TH_TEST(arena_allocates),
	    TH_TEST(strings_are_checked),
	    TH_TEST(files_round_trip),
	    TH_TEST(module_names_convert),
	    TH_TEST(error_table_columns_agree),
	    TH_TEST(json_readers_are_tolerant),
	    TH_TEST(jansson_allocates_through_gi_malloc),
	    TH_TEST(json_text_matches_jansson),
	    TH_TEST(json_text_reals_match_jansson),
	    TH_END,
	};
	return th_main(argc, argv, "unit_base", tests);
}
