/*
 * Integration tests of `giulia review --base REV` through the real binary,
 * a real git repository built in the test and a real worker: a project with
 * a hub function (eleven modules call App.Repo.get/1, a test reaches it), a
 * leaf, a test module and a module other code still calls; one commit, then
 * a working tree that changes the hub and the leaf, edits the test only,
 * renames a file, deletes a file and touches a README. What must be
 * reported (the hub first, with its reach and its test; the leaf, untested;
 * the deleted module still referenced; the test among the tests to run) and
 * what must not (the test module, the renamed module, a comment-only edit,
 * the README as code), the exit codes against the threshold, the live
 * weight from a profile file (and none from another project's profile), a
 * removed function still called,
 * clear errors for bad revisions, the MCP tool review_change over stdio,
 * and GET /api/review giving the CLI's answer.
 * needs: git
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_util.h"
#include "giulia_cli.h"
#include "harness.h"
#include "support.h"

#define RUN_TIMEOUT_MS 120000

#define GIULIA(...) ts_giulia_run((const char *const[]){__VA_ARGS__, NULL}, RUN_TIMEOUT_MS)

static void write_file(const char *dir, const char *rel, const char *text)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	FILE *f = fopen(path, "w");
	TH_ASSERT_MSG(f != NULL, "cannot write %s", path);
	fputs(text, f);
	fclose(f);
}

static void git(const char *dir, const char *const *args)
{
	const char *argv[16] = {"git", "-C",         dir, "-c", "user.email=t@example.com",
	                        "-c",  "user.name=t"};
	int n = 7;
	for (int i = 0; args[i] && n < 15; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	char *err = NULL;
	int rc = ts_run(argv, NULL, 30000, NULL, &err);
	TH_ASSERT_MSG(rc == 0, "git %s failed: %s", args[0], err ? err : "");
	free(err);
}

#define GIT(dir, ...) git(dir, (const char *const[]){__VA_ARGS__, NULL})

/* The project at its base commit, indexed. */
static const char *project_ready(void)
{
	static char dir[4096];
	TH_NEED(access("/usr/bin/git", X_OK) == 0, "git", "git (/usr/bin/git)");
	snprintf(dir, sizeof(dir), "%s/app", th_tmpdir());
	char sub[4200];
	snprintf(sub, sizeof(sub), "%s/lib/app", dir);
	const char *mk[] = {"mkdir", "-p", sub, NULL};
	TH_ASSERT_INT_EQ(ts_run(mk, NULL, 10000, NULL, NULL), 0);
	snprintf(sub, sizeof(sub), "%s/test", dir);
	const char *mk2[] = {"mkdir", "-p", sub, NULL};
	TH_ASSERT_INT_EQ(ts_run(mk2, NULL, 10000, NULL, NULL), 0);
	write_file(dir, "mix.exs",
	           "defmodule App.MixProject do\n  use Mix.Project\n"
	           "  def project, do: [app: :app, version: \"0.1.0\"]\nend\n");
	write_file(dir, "lib/app/repo.ex",
	           "defmodule App.Repo do\n  @moduledoc \"Storage.\"\n\n  def get(key) do\n"
	           "    # look it up\n    case key do\n      nil -> :error\n      k -> {:ok, k}\n"
	           "    end\n  end\n\n  def put(key, value), do: {key, value}\nend\n");
	for (int i = 1; i <= 11; i++) {
		char rel[64], text[256];
		snprintf(rel, sizeof(rel), "lib/app/user%d.ex", i);
		snprintf(text, sizeof(text),
		         "defmodule App.User%d do\n  def load(id), do: App.Repo.get(id)\nend\n", i);
		write_file(dir, rel, text);
	}
	write_file(dir, "lib/app/leaf.ex", "defmodule App.Leaf do\n  def helper, do: :ok\nend\n");
	write_file(dir, "lib/app/old.ex", "defmodule App.Old do\n  def legacy, do: :old\nend\n");
	write_file(
	    dir, "lib/app/caller.ex",
	    "defmodule App.Caller do\n  def run, do: {App.Old.legacy(), App.Repo.put(1, 2)}\n"
	    "end\n");
	write_file(dir, "test/repo_test.exs",
	           "defmodule App.RepoTest do\n  use ExUnit.Case\n  test \"get\" do\n"
	           "    assert App.Repo.get(1) == {:ok, 1}\n  end\nend\n");
	write_file(dir, "README.md", "# App\n");
	GIT(dir, "init", "-q", ".");
	GIT(dir, "add", "-A");
	GIT(dir, "commit", "-qm", "base");
	struct ts_giulia_result r = GIULIA("index", dir);
	TH_ASSERT_INT_EQ(r.status, 0);
	ts_giulia_result_free(&r);
	return dir;
}

/* The entry of `at_risk` for module (and function, or NULL), or NULL. */
static json_t *risk_entry(json_t *review, const char *module, const char *function)
{
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(review, "at_risk"), i, v)
	{
		const char *m = json_string_value(json_object_get(v, "module"));
		const char *f = json_string_value(json_object_get(v, "function"));
		if (strcmp(m, module) == 0 && (function ? f && strcmp(f, function) == 0 : !f))
			return v;
	}
	return NULL;
}

static bool strings_hold(json_t *array, const char *s)
{
	size_t i;
	json_t *v;
	json_array_foreach(array, i, v)
	{
		if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
			return true;
		if (json_is_object(v) &&
		    strcmp(json_string_value(json_object_get(v, "module")), s) == 0)
			return true;
	}
	return false;
}

static json_t *file_entry(json_t *review, const char *path)
{
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(review, "files"), i, v)
	{
		if (strcmp(json_string_value(json_object_get(v, "path")), path) == 0)
			return v;
	}
	return NULL;
}

static void review_reports_what_the_change_puts_at_risk(void)
{
	const char *dir = project_ready();
	char path[2048];
	/* hub, leaf, test only, rename, delete, non-Elixir */
	write_file(dir, "lib/app/repo.ex",
	           "defmodule App.Repo do\n  @moduledoc \"Storage.\"\n\n  def get(key) do\n"
	           "    # look it up\n    case key do\n      nil -> :error\n"
	           "      k -> {:ok, k, :new}\n    end\n  end\n\n  def put(key, value), do: "
	           "{key, value}\nend\n");
	write_file(dir, "lib/app/leaf.ex", "defmodule App.Leaf do\n  def helper, do: :done\nend\n");
	write_file(dir, "test/repo_test.exs",
	           "defmodule App.RepoTest do\n  use ExUnit.Case\n  test \"get\" do\n"
	           "    assert App.Repo.get(1) == {:ok, 1, :new}\n  end\nend\n");
	GIT(dir, "mv", "lib/app/user11.ex", "lib/app/user_eleven.ex");
	GIT(dir, "rm", "-q", "lib/app/old.ex");
	write_file(dir, "README.md", "# App\n\nMore.\n");

	struct ts_giulia_result r =
	    GIULIA("review", "--base", "HEAD", "--project", dir, "--no-profile", "--json");
	TH_ASSERT_MSG(r.json != NULL, "no JSON: %s %s", r.out ? r.out : "", r.err ? r.err : "");
	/* The deleted module is still called by App.Caller: risky. */
	TH_ASSERT_INT_EQ(r.status, 3);
	json_t *j = r.json;
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(j, "verdict")), "risky");
	json_t *first = json_array_get(json_object_get(j, "at_risk"), 0);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(first, "module")), "App.Repo");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(first, "function")), "get/1");
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(first, "reach")), 11);
	TH_ASSERT(strings_hold(json_object_get(first, "tests"), "App.RepoTest"));
	TH_ASSERT_INT_EQ(json_integer_value(json_array_get(json_object_get(first, "lines"), 0)), 8);
	TH_ASSERT(json_is_null(json_object_get(first, "live")));
	json_t *leaf = risk_entry(j, "App.Leaf", "helper/0");
	TH_ASSERT(leaf != NULL);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(leaf, "reach")), 0);
	TH_ASSERT(json_number_value(
	              json_object_get(json_object_get(leaf, "score_parts"), "untested")) == 20.0);
	TH_ASSERT(json_number_value(json_object_get(leaf, "score")) <
	          json_number_value(json_object_get(first, "score")));
	/* put/2 and the module's other lines did not change; nor did the
	 * test module, the renamed module or the README count as code. */
	TH_ASSERT(risk_entry(j, "App.Repo", "put/2") == NULL);
	TH_ASSERT(risk_entry(j, "App.Repo", NULL) == NULL);
	TH_ASSERT(risk_entry(j, "App.RepoTest", "test get/1") == NULL);
	TH_ASSERT(risk_entry(j, "App.User11", "load/1") == NULL);
	TH_ASSERT_INT_EQ((long long)json_array_size(json_object_get(j, "at_risk")), 2);
	TH_ASSERT(strings_hold(json_object_get(j, "tests_changed"), "App.RepoTest"));
	TH_ASSERT(strings_hold(json_object_get(j, "tests_to_run"), "App.RepoTest"));
	TH_ASSERT_INT_EQ((long long)json_array_size(json_object_get(j, "tests_to_run")), 1);
	json_t *renamed = file_entry(j, "lib/app/user_eleven.ex");
	TH_ASSERT(renamed != NULL);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(renamed, "status")), "renamed");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(renamed, "old_path")),
	                 "lib/app/user11.ex");
	json_t *deleted = file_entry(j, "lib/app/old.ex");
	TH_ASSERT(deleted != NULL);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(deleted, "status")), "deleted");
	json_t *removed = json_array_get(json_object_get(j, "removed_modules"), 0);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(removed, "module")), "App.Old");
	TH_ASSERT(strings_hold(json_object_get(removed, "still_referenced_by"), "App.Caller"));
	TH_ASSERT_INT_EQ((long long)json_array_size(json_object_get(j, "unindexed_files")), 1);
	TH_ASSERT_STR_EQ(
	    json_string_value(json_array_get(json_object_get(j, "unindexed_files"), 0)),
	    "README.md");
	ts_giulia_result_free(&r);

	/* The readable form says the same. */
	r = GIULIA("review", "--base", "HEAD", "--project", dir, "--no-profile");
	TH_ASSERT_INT_EQ(r.status, 3);
	TH_ASSERT_STR_CONTAINS(r.out, "App.Repo.get/1");
	TH_ASSERT_STR_CONTAINS(r.out, "removed: App.Old, still referenced by App.Caller");
	TH_ASSERT_STR_CONTAINS(r.out, "Tests to run (1)");
	TH_ASSERT_STR_CONTAINS(r.out, "Not in the index (not reviewed): README.md");
	ts_giulia_result_free(&r);

	/* The worker answers the same for the index as it now is. */
	struct td_daemon w = {0};
	snprintf(w.data, sizeof(w.data), "%s/worker", th_tmpdir());
	td_start(&w, "worker", NULL);
	r = GIULIA("review", "--base", "HEAD", "--project", dir, "--no-profile", "--json");
	json_t *rest = NULL;
	snprintf(path, sizeof(path), "/api/review?base=HEAD&path=%s", dir);
	TH_ASSERT_INT_EQ(td_get(&w, path, &rest), 200);
	TH_ASSERT_MSG(
	    json_equal(json_object_get(rest, "at_risk"), json_object_get(r.json, "at_risk")),
	    "REST and CLI differ");
	TH_ASSERT_STR_EQ(
	    json_string_value(json_object_get(json_object_get(rest, "profile"), "note")),
	    "no profile stored yet");
	json_decref(rest);
	ts_giulia_result_free(&r);
	snprintf(path, sizeof(path), "/api/review?base=--output%%3D/tmp/x&path=%s", dir);
	TH_ASSERT_INT_EQ(td_get(&w, path, &rest), 400);
	json_decref(rest);
	snprintf(path, sizeof(path), "/api/review?path=%s", dir);
	TH_ASSERT_INT_EQ(td_get(&w, path, &rest), 400);
	json_decref(rest);
}

static void review_exit_codes_follow_the_threshold(void)
{
	const char *dir = project_ready();
	/* A comment in the hub and a test edit: nothing at risk. */
	write_file(
	    dir, "lib/app/repo.ex",
	    "defmodule App.Repo do\n  @moduledoc \"Storage.\"\n\n  def get(key) do\n"
	    "    # look the key up\n    case key do\n      nil -> :error\n      k -> {:ok, k}\n"
	    "    end\n  end\n\n  def put(key, value), do: {key, value}\nend\n");
	write_file(dir, "test/repo_test.exs",
	           "defmodule App.RepoTest do\n  use ExUnit.Case\n  test \"get\" do\n"
	           "    assert App.Repo.get(2) == {:ok, 2}\n  end\nend\n");
	struct ts_giulia_result r =
	    GIULIA("review", "HEAD", "--project", dir, "--no-profile", "--json");
	TH_ASSERT_INT_EQ(r.status, 0);
	TH_ASSERT_INT_EQ((long long)json_array_size(json_object_get(r.json, "at_risk")), 0);
	TH_ASSERT(strings_hold(json_object_get(r.json, "tests_to_run"), "App.RepoTest"));
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(r.json, "verdict")), "ok");
	ts_giulia_result_free(&r);

	/* The leaf alone: low (untested, no callers) under the default
	 * threshold, risky under a threshold of 20. */
	GIT(dir, "commit", "-qam", "comment");
	write_file(dir, "lib/app/leaf.ex", "defmodule App.Leaf do\n  def helper, do: :done\nend\n");
	r = GIULIA("review", "--base", "HEAD", "--project", dir, "--no-profile", "--json");
	TH_ASSERT_INT_EQ(r.status, 0);
	json_t *leaf = risk_entry(r.json, "App.Leaf", "helper/0");
	TH_ASSERT(leaf != NULL);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(leaf, "risk")), "low");
	ts_giulia_result_free(&r);
	r = GIULIA("review", "--base", "HEAD", "--project", dir, "--no-profile", "--threshold",
	           "20");
	TH_ASSERT_INT_EQ(r.status, 3);
	ts_giulia_result_free(&r);

	/* The hub weighed with a profile where it is hot: high, exit 3. */
	write_file(
	    dir, "lib/app/repo.ex",
	    "defmodule App.Repo do\n  @moduledoc \"Storage.\"\n\n  def get(key) do\n"
	    "    # look the key up\n    case key do\n      nil -> :none\n      k -> {:ok, k}\n"
	    "    end\n  end\n\n  def put(key, value), do: {key, value}\nend\n");
	char profile[4200], text[8600];
	snprintf(profile, sizeof(profile), "%s/profile.json", th_tmpdir());
	snprintf(text, sizeof(text),
	         "{\"session\": {\"node\": \"app@127.0.0.1\", \"project\": \"%s\"},"
	         " \"hot_functions\": [{\"module\": \"App.Repo\", \"function\": \"get\","
	         " \"arity\": 1, \"reductions_share\": 0.2, \"samples\": 40}]}",
	         dir);
	write_file(th_tmpdir(), "profile.json", text);
	r = GIULIA("review", "--base", "HEAD", "--project", dir, "--profile", profile, "--json");
	TH_ASSERT_INT_EQ(r.status, 3);
	json_t *hub = risk_entry(r.json, "App.Repo", "get/1");
	TH_ASSERT(hub != NULL);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(hub, "risk")), "high");
	TH_ASSERT(json_number_value(
	              json_object_get(json_object_get(hub, "live"), "reductions_share")) == 0.2);
	TH_ASSERT(json_is_true(json_object_get(json_object_get(r.json, "profile"), "used")));
	ts_giulia_result_free(&r);
	/* Another project's profile weighs nothing. */
	write_file(
	    th_tmpdir(), "profile.json",
	    "{\"session\": {\"project\": \"/elsewhere\"}, \"hot_functions\": [{\"module\":"
	    " \"App.Repo\", \"function\": \"get\", \"arity\": 1, \"reductions_share\": 0.2}]}");
	r = GIULIA("review", "--base", "HEAD", "--project", dir, "--profile", profile, "--json");
	TH_ASSERT_INT_EQ(r.status, 0);
	TH_ASSERT(json_is_null(json_object_get(risk_entry(r.json, "App.Repo", "get/1"), "live")));
	TH_ASSERT_STR_CONTAINS(
	    json_string_value(json_object_get(json_object_get(r.json, "profile"), "note")),
	    "another project");
	ts_giulia_result_free(&r);

	/* A function removed while App.Caller still calls it: risky whatever
	 * the threshold; the lines deleted between two functions change the
	 * module, not its neighbour get/1. */
	GIT(dir, "commit", "-qam", "none");
	write_file(
	    dir, "lib/app/repo.ex",
	    "defmodule App.Repo do\n  @moduledoc \"Storage.\"\n\n  def get(key) do\n"
	    "    # look the key up\n    case key do\n      nil -> :none\n      k -> {:ok, k}\n"
	    "    end\n  end\nend\n");
	r = GIULIA("review", "--base", "HEAD", "--project", dir, "--no-profile", "--threshold",
	           "100", "--json");
	TH_ASSERT_INT_EQ(r.status, 3);
	json_t *gone = json_array_get(json_object_get(r.json, "removed_functions"), 0);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(gone, "module")), "App.Repo");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(gone, "function")), "put/2");
	TH_ASSERT(strings_hold(json_object_get(gone, "still_called_by"), "App.Caller.run/0"));
	TH_ASSERT(risk_entry(r.json, "App.Repo", NULL) != NULL);
	TH_ASSERT(risk_entry(r.json, "App.Repo", "get/1") == NULL);
	ts_giulia_result_free(&r);

	/* A function removed while a test still calls it: that test is to
	 * run (it no longer compiles), and says why. */
	GIT(dir, "commit", "-qam", "put gone");
	write_file(dir, "lib/app/repo.ex",
	           "defmodule App.Repo do\n  @moduledoc \"Storage.\"\nend\n");
	r = GIULIA("review", "--base", "HEAD", "--project", dir, "--no-profile", "--json");
	TH_ASSERT_INT_EQ(r.status, 3);
	json_t *run = NULL;
	size_t i;
	json_t *t;
	json_array_foreach(json_object_get(r.json, "tests_to_run"), i, t)
	{
		if (strcmp(json_string_value(json_object_get(t, "module")), "App.RepoTest") == 0)
			run = t;
	}
	TH_ASSERT_MSG(run != NULL, "tests to run: %s", r.out);
	TH_ASSERT(
	    strings_hold(json_object_get(run, "because"), "calls the removed App.Repo.get/1"));
	ts_giulia_result_free(&r);
}

static void review_refuses_bad_revisions_clearly(void)
{
	const char *dir = project_ready();
	struct ts_giulia_result r =
	    GIULIA("review", "--base", "--output=/tmp/x", "--project", dir, "--no-profile");
	TH_ASSERT_INT_EQ(r.status, 2);
	TH_ASSERT_STR_CONTAINS(r.err, "base must be a revision");
	ts_giulia_result_free(&r);
	r = GIULIA("review", "--base", "no-such-rev", "--project", dir, "--no-profile");
	TH_ASSERT_INT_EQ(r.status, 1);
	TH_ASSERT_STR_CONTAINS(r.err, "git diff no-such-rev failed");
	ts_giulia_result_free(&r);
	r = GIULIA("review", "--project", dir);
	TH_ASSERT_INT_EQ(r.status, 2);
	TH_ASSERT_STR_CONTAINS(r.err, "missing --base");
	ts_giulia_result_free(&r);
	/* The MCP tool over stdio: an answer, and a refused revision as a tool
	 * error, not a protocol error. */
	char bin[4096], input[8192];
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	snprintf(input, sizeof(input),
	         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
	         "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{"
	         "\"name\":\"t\",\"version\":\"1\"}}}\n"
	         "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
	         "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{"
	         "\"name\":\"review_change\",\"arguments\":{\"base\":\"HEAD\"}}}\n"
	         "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{"
	         "\"name\":\"review_change\",\"arguments\":{\"base\":\"-x\"}}}\n");
	const char *mcp[] = {bin, "mcp", "--project", dir, NULL};
	char *out = NULL;
	TH_ASSERT_INT_EQ(ts_run(mcp, input, RUN_TIMEOUT_MS, &out, NULL), 0);
	TH_ASSERT_STR_CONTAINS(out, "\"id\":2,\"result\"");
	TH_ASSERT_STR_CONTAINS(out, "\\\"verdict\\\":\\\"ok\\\"");
	TH_ASSERT_STR_CONTAINS(out, "base must be a revision");
	TH_ASSERT_STR_CONTAINS(out, "\"isError\":true");
	free(out);
	/* Not a git repository. */
	char git_dir[4200], moved[4200];
	snprintf(git_dir, sizeof(git_dir), "%s/.git", dir);
	snprintf(moved, sizeof(moved), "%s/dot-git", th_tmpdir());
	TH_ASSERT_INT_EQ(rename(git_dir, moved), 0);
	r = GIULIA("review", "--base", "HEAD", "--project", dir, "--no-profile");
	TH_ASSERT_INT_EQ(r.status, 1);
	TH_ASSERT_STR_CONTAINS(r.err, "git diff HEAD failed");
	ts_giulia_result_free(&r);
	r = GIULIA("review", "--help");
	TH_ASSERT_INT_EQ(r.status, 0);
	TH_ASSERT_STR_CONTAINS(r.out, "--threshold");
	ts_giulia_result_free(&r);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(review_reports_what_the_change_puts_at_risk),
	    TH_TEST(review_exit_codes_follow_the_threshold),
	    TH_TEST(review_refuses_bad_revisions_clearly),
	    TH_END,
	};
	return th_main(argc, argv, "integration_review", tests);
}
