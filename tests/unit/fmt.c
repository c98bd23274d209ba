/*
 * Unit tests for src/base/fmt and src/base/table: numbers and names written
 * one way, and tables fitted to a width by dropping the least important
 * columns and eliding names in the middle.
 * needs:
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/fmt.h"
#include "base/str.h"
#include "base/table.h"
#include "harness.h"

static void numbers_one_way(void)
{
	char b[GI_FMT_NUM_MAX];
	gi_fmt_bytes(512, b, sizeof(b));
	TH_ASSERT_STR_EQ(b, "512 B");
	gi_fmt_bytes(11685656, b, sizeof(b));
	TH_ASSERT_STR_EQ(b, "11.1 MiB");
	gi_fmt_bytes(2048, b, sizeof(b));
	TH_ASSERT_STR_EQ(b, "2.0 KiB");
	gi_fmt_bytes(3.0 * 1024 * 1024 * 1024, b, sizeof(b));
	TH_ASSERT_STR_EQ(b, "3.00 GiB");
	gi_fmt_count(7674, b, sizeof(b));
	TH_ASSERT_STR_EQ(b, "7674");
	gi_fmt_count(120143662, b, sizeof(b));
	TH_ASSERT_STR_EQ(b, "120.1M");
	gi_fmt_count(12345, b, sizeof(b));
	TH_ASSERT_STR_EQ(b, "12.3k");
	gi_fmt_rate(126939037, b, sizeof(b));
	TH_ASSERT_STR_EQ(b, "126.9M/s");
	gi_fmt_share(0.125, b, sizeof(b));
	TH_ASSERT_STR_EQ(b, "12.5%");
	gi_fmt_count(0.0 / 0.0, b, sizeof(b));
	TH_ASSERT_STR_EQ(b, "-");
}

static void names_one_way(void)
{
	char b[256];
	gi_fmt_registered_name("Elixir.Demo.Hog", b, sizeof(b));
	TH_ASSERT_STR_EQ(b, "Demo.Hog");
	gi_fmt_registered_name("code_server", b, sizeof(b));
	TH_ASSERT_STR_EQ(b, "code_server");
	gi_fmt_function("Nexus.Repo", "-to_maps/1-fun-0-", 2, b, sizeof(b));
	TH_ASSERT_STR_EQ(b, "fn in Nexus.Repo.to_maps/1");
	gi_fmt_function(":lists", "-foldl/3-lc$^0/1-0-", 1, b, sizeof(b));
	TH_ASSERT_STR_EQ(b, "fn in :lists.foldl/3");
	gi_fmt_function("Shop.Cart", "add", 2, b, sizeof(b));
	TH_ASSERT_STR_EQ(b, "Shop.Cart.add/2");
	/* an operator named like a fun is not one */
	gi_fmt_function("Kernel", "-", 1, b, sizeof(b));
	TH_ASSERT_STR_EQ(b, "Kernel.-/1");
	gi_fmt_function(NULL, "new", 1, b, sizeof(b));
	TH_ASSERT_STR_EQ(b, "new/1");
	gi_fmt_mfa("Nexus.Repo.-to_maps/1-fun-0-/2", b, sizeof(b));
	TH_ASSERT_STR_EQ(b, "fn in Nexus.Repo.to_maps/1");
	gi_fmt_mfa(":gen_server.loop/7", b, sizeof(b));
	TH_ASSERT_STR_EQ(b, ":gen_server.loop/7");
	gi_fmt_mfa("Kernel.-/2", b, sizeof(b));
	TH_ASSERT_STR_EQ(b, "Kernel.-/2");
}

static void middle_elision_keeps_both_ends(void)
{
	char b[256];
	const char *name = "Phoenix.PubSub.Registry.TableRegistry.handle_call/3";
	gi_fmt_elide_middle(name, 30, b, sizeof(b));
	TH_ASSERT_INT_EQ(gi_fmt_width(b), 30);
	TH_ASSERT(GI_STR_STARTS(b, "Phoenix"));
	size_t len = strlen(b);
	TH_ASSERT_STR_EQ(b + len - strlen("handle_call/3"), "handle_call/3");
	TH_ASSERT_STR_CONTAINS(b, "\xe2\x80\xa6");
	gi_fmt_elide_middle("short", 30, b, sizeof(b));
	TH_ASSERT_STR_EQ(b, "short");
}

static const struct gi_table_column cols[] = {
    {"NAME", GI_COL_ELIDE, 0, 20},
    {"COUNT", GI_COL_RIGHT, 0, 0},
    {"EXTRA", 0, 2, 0},
    {"MORE", 0, 1, 0},
};

static struct gi_table *sample(void)
{
	struct gi_table *t = gi_table_new(cols, 4, 2);
	const char *r1[] = {"Acme.Very.Long.Namespace.Subsystem.Worker.handle_info/2", "12",
	                    "something extra", "more"};
	const char *r2[] = {"Acme.A", "7", "x", NULL};
	gi_table_add(t, r1);
	gi_table_add(t, r2);
	return t;
}

static int widest_line(const char *text)
{
	int max = 0;
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");
		char line[1024];
		snprintf(line, sizeof(line), "%.*s", (int)n, p);
		int w = (int)gi_fmt_width(line);
		if (w > max)
			max = w;
		p += n;
		if (*p)
			p++;
	}
	return max;
}

static void tables_fit_the_width(void)
{
	struct gi_table *t = sample();
	struct gi_buf b;
	gi_buf_init(&b, 0);
	/* no limit: everything whole */
	TH_ASSERT_OK(gi_table_render(t, 0, &b));
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&b), "Acme.Very.Long.Namespace.Subsystem.Worker.");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&b), "something extra");
	TH_ASSERT(widest_line(gi_buf_str(&b)) > 80);
	/* 80: the least important column (highest drop) goes first, the name
	 * stays whole */
	gi_buf_reset(&b);
	TH_ASSERT_OK(gi_table_render(t, 80, &b));
	TH_ASSERT(widest_line(gi_buf_str(&b)) <= 80);
	TH_ASSERT(strstr(gi_buf_str(&b), "EXTRA") == NULL);
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&b), "MORE");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&b),
	                       "Acme.Very.Long.Namespace.Subsystem.Worker.handle_info/2");
	/* 40: every optional column gone, then the name cut in the middle */
	gi_buf_reset(&b);
	TH_ASSERT_OK(gi_table_render(t, 40, &b));
	TH_ASSERT(widest_line(gi_buf_str(&b)) <= 40);
	TH_ASSERT(strstr(gi_buf_str(&b), "MORE") == NULL);
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&b), "COUNT");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&b), "handle_info/2");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&b), "\xe2\x80\xa6");
	/* rows are indented and the last column is not padded */
	TH_ASSERT(GI_STR_STARTS(gi_buf_str(&b), "  NAME"));
	gi_buf_destroy(&b);
	gi_table_free(t);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(numbers_one_way),
	    TH_TEST(names_one_way),
	    TH_TEST(middle_elision_keeps_both_ends),
	    TH_TEST(tables_fit_the_width),
	    TH_END,
	};
	return th_main(argc, argv, "unit_fmt", tests);
}
