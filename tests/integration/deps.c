/*
 * deps.c - scripts/deps.sh --check: every goal's package list holds what its
 * targets declare in their needs: lines, and an omission fails naming the
 * package and the declaring file. Runs the real script on this repository and
 * on small trees of the test's own (nothing is installed).
 * needs:
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "base/fs.h"
#include "harness.h"
#include "support.h"

/* Runs `deps.sh ARGS...` from the repository (root NULL) or from a copy of
 * the script under `root`; returns its exit status, its stderr in *err. */
static int deps_run(const char *root, const char *arg1, const char *arg2, char **err)
{
	char script[4096];
	snprintf(script, sizeof(script), "%s/scripts/deps.sh", root ? root : th_srcdir());
	const char *argv[] = {"bash", script, arg1, arg2, NULL};
	return ts_run(argv, NULL, 60000, NULL, err);
}

static void write_file(const char *root, const char *rel, const char *text)
{
	char path[4096], dir[4096];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	TH_ASSERT_OK(gi_fs_mkdir_p(dir));
	TH_ASSERT_OK(gi_fs_write_file(path, text, strlen(text)));
}

/* A tree with the real deps.sh and one e2e suite that runs a script. */
static const char *small_tree(const char *suite_needs, const char *script_needs)
{
	static char root[4096];
	snprintf(root, sizeof(root), "%s/tree", th_tmpdir());
	char src[4096], *text = NULL;
	size_t len = 0;
	snprintf(src, sizeof(src), "%s/scripts/deps.sh", th_srcdir());
	TH_ASSERT_OK(gi_fs_read_file(src, 1 << 20, &text, &len));
	write_file(root, "scripts/deps.sh", text);
	gi_free(text);
	char body[1024];
	snprintf(body, sizeof(body), "/*\n * x.c - a suite.\n * needs: %s\n */\n", suite_needs);
	write_file(root, "tests/e2e/x.c", body);
	snprintf(body, sizeof(body), "#!/bin/sh\n# run.sh - a helper.\n# needs: %s\n",
	         script_needs);
	write_file(root, "tests/run.sh", body);
	return root;
}

static void repository_declarations_hold(void)
{
	char *err = NULL;
	int st = deps_run(NULL, "--check", NULL, &err);
	TH_ASSERT_MSG(st == 0, "deps.sh --check failed (%d): %s", st, err ? err : "");
	free(err);
}

static void test_list_has_what_the_demo_test_needs(void)
{
	/* The issue that started this: e2e_demo compiles Nexus, which needs
	 * erlang-p1-pgsql; `make test` must install it. */
	char *out = NULL;
	char script[4096];
	snprintf(script, sizeof(script), "%s/scripts/deps.sh", th_srcdir());
	const char *argv[] = {"bash", script, "--list", "test", NULL};
	TH_ASSERT_INT_EQ(ts_run(argv, NULL, 60000, &out, NULL), 0);
	TH_ASSERT_STR_CONTAINS(out, "\nerlang-p1-pgsql\n");
	TH_ASSERT_STR_CONTAINS(out, "\nwrk\n");
	TH_ASSERT_STR_CONTAINS(out, "build-essential\n"); /* test builds first */
	free(out);
}

static void omission_fails_naming_package_and_file(void)
{
	const char *root = small_tree("wrk tests/run.sh", "chromium python3");
	char *err = NULL;
	int st = deps_run(root, "--check", "test", &err);
	TH_ASSERT_INT_EQ(st, 1);
	/* python3 is bench's only: reached through the helper the suite runs. */
	TH_ASSERT_STR_CONTAINS(err, "tests/e2e/x.c needs python3 (through tests/run.sh), which "
	                            "goal 'test' does not install");
	TH_ASSERT(strstr(err, "needs wrk") == NULL);
	TH_ASSERT(strstr(err, "needs chromium") == NULL);
	free(err);
}

static void unknown_package_and_missing_line_fail(void)
{
	const char *root = small_tree("giulia-no-such-package", "");
	write_file(root, "tests/unit/y.c", "/*\n * y.c - a suite that declares nothing.\n */\n");
	char *err = NULL;
	TH_ASSERT_INT_EQ(deps_run(root, "--check", "test", &err), 1);
	TH_ASSERT_STR_CONTAINS(err, "tests/e2e/x.c needs giulia-no-such-package, a package the "
	                            "table of scripts/deps.sh does not know");
	TH_ASSERT_STR_CONTAINS(err, "tests/unit/y.c has no needs: line");
	free(err);
}

static void th_need_without_declaration_fails(void)
{
	const char *root = small_tree("wrk", "");
	write_file(root, "tests/integration/z.c",
	           "/*\n * z.c - a suite.\n * needs: wrk\n */\nstatic void t(void)\n{\n"
	           "\tTH_NEED(th_have_program(\"wrk\"), \"wrk\", \"no wrk\");\n"
	           "\tTH_NEED(th_have_program(\"chromium\"),\n\t        \"chromium\", \"no "
	           "chromium\");\n}\n");
	char *err = NULL;
	TH_ASSERT_INT_EQ(deps_run(root, "--check", "test", &err), 1);
	TH_ASSERT_STR_CONTAINS(err, "tests/integration/z.c checks for chromium (TH_NEED) but its "
	                            "needs: line does not declare it");
	TH_ASSERT(strstr(err, "checks for wrk") == NULL);
	free(err);
}

static void clean_small_tree_passes(void)
{
	const char *root = small_tree("", "wrk");
	char *err = NULL;
	int st = deps_run(root, "--check", "test", &err);
	TH_ASSERT_MSG(st == 0, "deps.sh --check test failed (%d): %s", st, err ? err : "");
	free(err);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(repository_declarations_hold),
	    TH_TEST(test_list_has_what_the_demo_test_needs),
	    TH_TEST(omission_fails_naming_package_and_file),
	    TH_TEST(unknown_package_and_missing_line_fail),
	    TH_TEST(th_need_without_declaration_fails),
	    TH_TEST(clean_small_tree_passes),
	    TH_END,
	};
	return th_main(argc, argv, "integration_deps", tests);
}
