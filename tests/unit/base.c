/*
 * Unit tests for src/base: buffers, arrays, maps, arenas, strings, files.
 * needs:
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/alloc.h"
#include "base/arena.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/map.h"
#include "base/runtime.h"
#include "base/str.h"
#include "base/vec.h"
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
	TH_ASSERT_OK(gi_module_atom_name(":gen_server", out, sizeof(out)));
	TH_ASSERT_STR_EQ(out, "gen_server");
	TH_ASSERT_OK(gi_module_atom_name("Nexus.Repo", out, sizeof(out)));
	TH_ASSERT_STR_EQ(out, "Elixir.Nexus.Repo");
	TH_ASSERT_STR_EQ(gi_strerror(GI_ETIMEOUT), "timed out");
	TH_ASSERT_STR_EQ(gi_errname(GI_ECOOKIE), "COOKIE");
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
	    TH_TEST(jansson_allocates_through_gi_malloc),
	    TH_END,
	};
	return th_main(argc, argv, "unit_base", tests);
}
