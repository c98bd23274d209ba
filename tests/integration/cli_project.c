/*
 * Integration tests of how the static commands find their project: like
 * git and mix, from the current directory upwards (the nearest index, else
 * the nearest mix.exs); `giulia index` with no PATH does the same, as its
 * help says, never adopting an index above the repository root (or, out
 * of a repository, above the outermost mix.exs); the index directory
 * ignores itself in git; `--beam DIR...` takes several directories.
 * needs: git
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fs.h"
#include "harness.h"
#include "support.h"

static void write_file(const char *root, const char *rel, const char *text)
{
	char path[8192], dir[8192];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	TH_ASSERT_OK(gi_fs_mkdir_p(dir));
	TH_ASSERT_OK(gi_fs_write_file(path, text, strlen(text)));
}

static const char *project(void)
{
	static char root[4096];
	snprintf(root, sizeof(root), "%s/nexus", th_tmpdir());
	write_file(root, "mix.exs",
	           "defmodule Nexus.MixProject do\n  use Mix.Project\n"
	           "  def project, do: [app: :nexus, version: \"0.1.0\"]\nend\n");
	write_file(root, "lib/nexus/repo.ex",
	           "defmodule Nexus.Repo do\n  def get(k), do: k\nend\n");
	write_file(root, "lib/nexus/a.ex",
	           "defmodule Nexus.A do\n  def f, do: Nexus.Repo.get(1)\nend\n");
	write_file(root, "lib/nexus/b.ex",
	           "defmodule Nexus.B do\n  def f, do: Nexus.Repo.get(2)\nend\n");
	write_file(root, "lib/nexus/c.ex",
	           "defmodule Nexus.C do\n  def f, do: Nexus.Repo.get(3)\nend\n");
	write_file(
	    root, "test/nexus_test.exs",
	    "defmodule NexusTest do\n  use ExUnit.Case\n  test \"a\", do: Nexus.A.f()\nend\n");
	return root;
}

/* Runs `giulia ARGS` from directory `cwd`; returns the exit status. */
static int giulia_in(const char *cwd, const char *const *args, char **out, char **err)
{
	char bin[4096], here[4096];
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	const char *argv[16] = {bin};
	int n = 1;
	for (const char *const *a = args; *a && n < 15; a++)
		argv[n++] = *a;
	argv[n] = NULL;
	TH_ASSERT(getcwd(here, sizeof(here)) != NULL);
	TH_ASSERT(chdir(cwd) == 0);
	int st = ts_run(argv, NULL, 120000, out, err);
	TH_ASSERT(chdir(here) == 0);
	return st;
}

#define IN(cwd, out, err, ...) giulia_in(cwd, (const char *const[]){__VA_ARGS__, NULL}, out, err)

static void found_upwards_like_git_and_mix(void)
{
	const char *root = project();
	char sub[4200];
	snprintf(sub, sizeof(sub), "%s/lib/nexus", root);
	unsetenv("GIULIA_DB");
	/* index with no PATH, from deep inside: the mix.exs root */
	char *out = NULL, *err = NULL;
	TH_ASSERT_MSG(IN(sub, &out, &err, "index") == 0, "index: %s", err ? err : "");
	char want[4300];
	snprintf(want, sizeof(want), "into %s/.giulia/index.db", root);
	TH_ASSERT_STR_CONTAINS(out, want);
	free(out);
	free(err);
	/* queries from inside find that index */
	TH_ASSERT_MSG(IN(sub, &out, &err, "hubs") == 0, "hubs: %s", err ? err : "");
	TH_ASSERT_STR_CONTAINS(out, "Nexus.Repo");
	free(out);
	free(err);
	TH_ASSERT_INT_EQ(IN(sub, &out, NULL, "functions", "Nexus.A"), 0);
	TH_ASSERT_STR_CONTAINS(out, "lib/nexus/a.ex:2");
	free(out);
	/* --project still wins, and a directory with no project says so */
	char empty[4200];
	snprintf(empty, sizeof(empty), "%s/elsewhere", th_tmpdir());
	TH_ASSERT_OK(gi_fs_mkdir_p(empty));
	TH_ASSERT_INT_EQ(IN(empty, &out, NULL, "hubs", "--project", root), 0);
	TH_ASSERT_STR_CONTAINS(out, "Nexus.Repo");
	free(out);
	TH_ASSERT(IN(empty, NULL, &err, "hubs") != 0);
	TH_ASSERT_STR_CONTAINS(err, "giulia index");
	free(err);
}

/* An index in an ancestor (a shared temporary directory's, a home
 * directory's) is not the project of a repository below it: `giulia index`
 * there indexes the repository (saying so when it has no mix.exs), and the
 * index leaves `git status` clean. */
static void never_adopts_an_ancestors_index(void)
{
	char outer[4200], repo[4300];
	snprintf(outer, sizeof(outer), "%s/shared", th_tmpdir());
	snprintf(repo, sizeof(repo), "%s/scratch/repo", outer);
	write_file(outer, "lib/other.ex", "defmodule Other do\n  def o, do: 1\nend\n");
	char *out = NULL, *err = NULL;
	TH_ASSERT_INT_EQ(IN(outer, NULL, NULL, "index", outer), 0);
	write_file(repo, "lib/tool.ex", "defmodule Tool do\n  def t, do: 1\nend\n");
	const char *init[] = {"git", "init", "-q", repo, NULL};
	TH_ASSERT_INT_EQ(ts_run(init, NULL, 30000, NULL, NULL), 0);
	/* no mix.exs, no PATH: the repository itself, said on stderr */
	TH_ASSERT_MSG(IN(repo, &out, &err, "index") == 0, "index: %s", err ? err : "");
	char want[4400];
	snprintf(want, sizeof(want), "into %s/.giulia/index.db", repo);
	TH_ASSERT_STR_CONTAINS(out, want);
	TH_ASSERT_STR_CONTAINS(err, "no mix.exs here or above");
	free(out);
	free(err);
	/* queries from inside see the repository's modules, not the ancestor's */
	TH_ASSERT_INT_EQ(IN(repo, &out, NULL, "modules"), 0);
	TH_ASSERT_STR_CONTAINS(out, "Tool");
	TH_ASSERT(strstr(out, "Other") == NULL);
	free(out);
	/* .giulia/ ignores itself: git status shows the source only */
	char ignore[4400];
	snprintf(ignore, sizeof(ignore), "%s/.giulia/.gitignore", repo);
	TH_ASSERT(access(ignore, R_OK) == 0);
	const char *status[] = {"git", "-C", repo, "status", "--porcelain", "--untracked-files=all",
	                        NULL};
	TH_ASSERT_INT_EQ(ts_run(status, NULL, 30000, &out, NULL), 0);
	TH_ASSERT_MSG(out && strstr(out, ".giulia") == NULL, "git status: %s", out ? out : "");
	TH_ASSERT_STR_CONTAINS(out, "lib/tool.ex");
	free(out);
}

static void beam_takes_several_directories(void)
{
	const char *root = project();
	char d1[4200], d2[4200], missing[4200];
	snprintf(d1, sizeof(d1), "%s/ebin1", th_tmpdir());
	snprintf(d2, sizeof(d2), "%s/ebin2", th_tmpdir());
	snprintf(missing, sizeof(missing), "%s/ebin3", th_tmpdir());
	TH_ASSERT_OK(gi_fs_mkdir_p(d1));
	TH_ASSERT_OK(gi_fs_mkdir_p(d2));
	char *out = NULL, *err = NULL;
	TH_ASSERT_MSG(IN(root, &out, &err, "index", root, "--beam", d1, d2, "--json") == 0,
	              "index --beam D1 D2: %s", err ? err : "");
	TH_ASSERT(out && out[0] == '{');
	free(out);
	free(err);
	/* every one of them is read: the third, missing, is named */
	TH_ASSERT_INT_EQ(IN(root, NULL, &err, "index", root, "--beam", d1, d2, missing), 2);
	TH_ASSERT_STR_CONTAINS(err, "ebin3");
	free(err);
}

static void impact_says_why_through_what_and_apart_from_tests(void)
{
	const char *root = project();
	char *out = NULL, *err = NULL;
	TH_ASSERT_INT_EQ(IN(root, NULL, NULL, "index", root), 0);
	TH_ASSERT_MSG(IN(root, &out, &err, "impact", "Nexus.Repo") == 0, "impact: %s", err);
	/* the factors of the risk */
	TH_ASSERT_STR_CONTAINS(out, "risk medium: 3 modules depend on it directly, a hub");
	/* tests apart, and through which module they come */
	TH_ASSERT_STR_CONTAINS(out, "dependents (3):");
	TH_ASSERT_STR_CONTAINS(out, "test dependents (1):\n  [2] NexusTest (via Nexus.A)");
	free(out);
	free(err);
	TH_ASSERT_INT_EQ(IN(root, &out, NULL, "impact", "Nexus.Repo", "--no-tests"), 0);
	TH_ASSERT(strstr(out, "NexusTest") == NULL);
	free(out);
	/* the JSON (what the REST route and the MCP tool answer) carries both */
	TH_ASSERT_INT_EQ(IN(root, &out, NULL, "impact", "Nexus.Repo", "--json"), 0);
	TH_ASSERT_STR_CONTAINS(out, "\"module\": \"NexusTest\"");
	TH_ASSERT_STR_CONTAINS(out, "\"via\": \"Nexus.A\"");
	TH_ASSERT_STR_CONTAINS(out, "\"test\": true");
	free(out);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(found_upwards_like_git_and_mix),
	    TH_TEST(never_adopts_an_ancestors_index),
	    TH_TEST(beam_takes_several_directories),
	    TH_TEST(impact_says_why_through_what_and_apart_from_tests),
	    TH_END,
	};
	return th_main(argc, argv, "integration_cli_project", tests);
}
