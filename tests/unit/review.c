/*
 * Unit tests for the review's diff parser and revision check
 * (src/graph/review.c): git's unified diff with zero context read into
 * files and hunks; a removed line that looks like a header ("--- a/x") is
 * content because the hunk's counts say so; C-quoted paths; renames,
 * deletions, binary files; comment-only hunks; defmodule and def names on
 * removed and added lines; hostile input (counts that lie, garbage, a path over
 * the cap, hunk headers with too many digits); and the revisions refused
 * before git sees them.
 * needs:
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "graph/review.h"
#include "harness.h"

static json_t *parse(const char *text)
{
	json_t *files = NULL;
	TH_ASSERT_OK(kg_diff_parse(text, strlen(text), &files));
	TH_ASSERT(json_is_array(files));
	return files;
}

static const char *str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static long long num(json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

static void diff_files_and_hunks(void)
{
	json_t *files = parse("diff --git a/lib/a.ex b/lib/a.ex\n"
	                      "index 1..2 100644\n"
	                      "--- a/lib/a.ex\n"
	                      "+++ b/lib/a.ex\n"
	                      "@@ -3,2 +3 @@ defmodule A do\n"
	                      "--- a/not/a/header\n"
	                      "-defmodule A.Gone do\n"
	                      "+  x = 1\n"
	                      "@@ -10 +9,0 @@\n"
	                      "-  # a comment\n"
	                      "diff --git a/lib/old.ex b/lib/old.ex\n"
	                      "deleted file mode 100644\n"
	                      "--- a/lib/old.ex\n"
	                      "+++ /dev/null\n"
	                      "@@ -1 +0,0 @@\n"
	                      "-defmodule Old do end\n"
	                      "diff --git a/lib/x.ex b/lib/y.ex\n"
	                      "similarity index 100%\n"
	                      "rename from lib/x.ex\n"
	                      "rename to lib/y.ex\n"
	                      "diff --git \"a/we ird\\tname.ex\" \"b/we ird\\tname.ex\"\n"
	                      "new file mode 100644\n"
	                      "--- /dev/null\n"
	                      "+++ \"b/we ird\\tname.ex\"\n"
	                      "@@ -0,0 +1 @@\n"
	                      "+defmodule New.One do end\n"
	                      "diff --git a/logo.png b/logo.png\n"
	                      "Binary files a/logo.png and b/logo.png differ\n");
	TH_ASSERT_INT_EQ((long long)json_array_size(files), 5);
	json_t *a = json_array_get(files, 0);
	TH_ASSERT_STR_EQ(str(a, "new_path"), "lib/a.ex");
	TH_ASSERT_STR_EQ(str(a, "status"), "modified");
	TH_ASSERT_INT_EQ(num(a, "removed"), 3);
	TH_ASSERT_INT_EQ(num(a, "added"), 1);
	json_t *hunks = json_object_get(a, "hunks");
	TH_ASSERT_INT_EQ((long long)json_array_size(hunks), 2);
	json_t *h0 = json_array_get(hunks, 0), *h1 = json_array_get(hunks, 1);
	TH_ASSERT_INT_EQ(num(h0, "old_start"), 3);
	TH_ASSERT_INT_EQ(num(h0, "old_count"), 2);
	TH_ASSERT_INT_EQ(num(h0, "new_start"), 3);
	TH_ASSERT_INT_EQ(num(h0, "new_count"), 1);
	TH_ASSERT(json_is_false(json_object_get(h0, "comment_only")));
	TH_ASSERT_INT_EQ(num(h1, "new_count"), 0);
	TH_ASSERT(json_is_true(json_object_get(h1, "comment_only")));
	TH_ASSERT_STR_EQ(
	    json_string_value(json_array_get(json_object_get(a, "removed_modules"), 0)), "A.Gone");
	json_t *old = json_array_get(files, 1);
	TH_ASSERT_STR_EQ(str(old, "status"), "deleted");
	TH_ASSERT_STR_EQ(str(old, "old_path"), "lib/old.ex");
	TH_ASSERT(json_is_null(json_object_get(old, "new_path")));
	json_t *ren = json_array_get(files, 2);
	TH_ASSERT_STR_EQ(str(ren, "status"), "renamed");
	TH_ASSERT_STR_EQ(str(ren, "old_path"), "lib/x.ex");
	TH_ASSERT_STR_EQ(str(ren, "new_path"), "lib/y.ex");
	TH_ASSERT_INT_EQ((long long)json_array_size(json_object_get(ren, "hunks")), 0);
	json_t *odd = json_array_get(files, 3);
	TH_ASSERT_STR_EQ(str(odd, "status"), "added");
	TH_ASSERT_STR_EQ(str(odd, "new_path"), "we ird\tname.ex");
	TH_ASSERT_STR_EQ(
	    json_string_value(json_array_get(json_object_get(odd, "added_modules"), 0)), "New.One");
	TH_ASSERT(json_is_true(json_object_get(json_array_get(files, 4), "binary")));
	json_decref(files);

	/* Function definitions on removed and added lines, by name. */
	files = parse("diff --git a/lib/b.ex b/lib/b.ex\n"
	              "--- a/lib/b.ex\n"
	              "+++ b/lib/b.ex\n"
	              "@@ -4,3 +4,2 @@\n"
	              "-  def put(key, value), do: {key, value}\n"
	              "-  defp valid?(x), do: x\n"
	              "-  defmacro  dsl!(block) do\n"
	              "+  defp valid?(x), do: !!x\n"
	              "+  default(1)\n");
	json_t *b = json_array_get(files, 0);
	json_t *removed = json_object_get(b, "removed_functions");
	TH_ASSERT_INT_EQ((long long)json_array_size(removed), 3);
	TH_ASSERT_STR_EQ(json_string_value(json_array_get(removed, 0)), "put");
	TH_ASSERT_STR_EQ(json_string_value(json_array_get(removed, 1)), "valid?");
	TH_ASSERT_STR_EQ(json_string_value(json_array_get(removed, 2)), "dsl!");
	json_t *added = json_object_get(b, "added_functions");
	TH_ASSERT_INT_EQ((long long)json_array_size(added), 1);
	TH_ASSERT_STR_EQ(json_string_value(json_array_get(added, 0)), "valid?");
	json_decref(files);
}

static void diff_hostile_input(void)
{
	/* Counts that promise more lines than come, garbage, NUL bytes, a
	 * header with too many digits, a path over the cap. */
	json_t *files = parse("@@ -1 +1 @@\n+outside any file\n"
	                      "diff --git a/a b/a\n"
	                      "@@ -1,999999999 +1,999999999 @@\n"
	                      "+x\n"
	                      "garbage\n"
	                      "@@ -12345678901 +1 @@\n"
	                      "@@ -1 +1 @\n");
	TH_ASSERT_INT_EQ((long long)json_array_size(files), 1);
	json_t *hunks = json_object_get(json_array_get(files, 0), "hunks");
	TH_ASSERT_INT_EQ((long long)json_array_size(hunks), 1);
	json_decref(files);

	size_t n = KG_DIFF_PATH_MAX + 100;
	char *big = malloc(n + 64);
	TH_ASSERT(big != NULL);
	memcpy(big, "+++ b/", 6);
	memset(big + 6, 'x', n);
	memcpy(big + 6 + n, "\n", 2);
	char *text = malloc(n + 200);
	TH_ASSERT(text != NULL);
	snprintf(text, n + 200, "diff --git a/q b/q\n%s", big);
	files = parse(text);
	TH_ASSERT(json_is_null(json_object_get(json_array_get(files, 0), "new_path")));
	json_decref(files);
	free(big);
	free(text);

	static const char nul[] = "diff --git a/z b/z\n\0\n@@ -1 +1 @@\n+\0x\n";
	files = NULL;
	TH_ASSERT_OK(kg_diff_parse(nul, sizeof(nul) - 1, &files));
	TH_ASSERT_INT_EQ((long long)json_array_size(files), 1);
	json_decref(files);
	files = parse("");
	TH_ASSERT_INT_EQ((long long)json_array_size(files), 0);
	json_decref(files);
}

static void revisions_refused_before_git(void)
{
	TH_ASSERT(kg_review_rev_valid("main"));
	TH_ASSERT(kg_review_rev_valid("HEAD~1"));
	TH_ASSERT(kg_review_rev_valid("origin/main^{commit}"));
	TH_ASSERT(!kg_review_rev_valid("--output=/tmp/x"));
	TH_ASSERT(!kg_review_rev_valid("-p"));
	TH_ASSERT(!kg_review_rev_valid(""));
	TH_ASSERT(!kg_review_rev_valid(NULL));
	TH_ASSERT(!kg_review_rev_valid("a b"));
	TH_ASSERT(!kg_review_rev_valid("a\nb"));
	char longrev[KG_REVIEW_REV_MAX + 2];
	memset(longrev, 'a', sizeof(longrev) - 1);
	longrev[sizeof(longrev) - 1] = '\0';
	TH_ASSERT(!kg_review_rev_valid(longrev));
	char *text = NULL;
	size_t len = 0;
	TH_ASSERT_INT_EQ(kg_review_git_diff("/", "-x", 1000, &text, &len, NULL), GI_EINVAL);
	TH_ASSERT(text == NULL);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(diff_files_and_hunks),
	    TH_TEST(diff_hostile_input),
	    TH_TEST(revisions_refused_before_git),
	    TH_END,
	};
	return th_main(argc, argv, "unit_review", tests);
}
