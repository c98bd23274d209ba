/*
 * Integration tests of the static engine through the real binary: bin/giulia
 * indexes fixture projects (copied into the test's directory) into real
 * SQLite files and answers the static queries, incrementally, with clear
 * errors for bad databases and bad input.
 *
 * Fixture: tests/fixtures/projects/shop (Shop, Shop.Cart, Shop.Repo, Shop.Log,
 * Shop.MixProject, test module ShopTest); Shop.Cart <-> Shop.Repo is a cycle,
 * Shop.Log (used by Shop, Shop.Cart and Shop.Repo) a hub. And
 * tests/fixtures/projects/web, a Phoenix-style project for dispatch edges.
 * Source + object code fusion compiles a small project with elixirc. And
 * tests/fixtures/projects/deadcode, the dead-code categories on every
 * pattern that reaches a function without a plain call, confirmed by the
 * compiler's tracer.
 * needs: elixir
 */
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/str.h"
#include "giulia_cli.h"
#include "harness.h"
#include "node_watch.h"
#include "support.h"

#define RUN_TIMEOUT_MS 120000

#define GIULIA(...) ts_giulia_run((const char *const[]){__VA_ARGS__, NULL}, RUN_TIMEOUT_MS)

static void sh(const char *cmd)
{
	const char *argv[] = {"sh", "-c", cmd, NULL};
	char *err = NULL;
	int st = ts_run(argv, NULL, RUN_TIMEOUT_MS, NULL, &err);
	TH_ASSERT_MSG(st == 0, "`%s` failed: %s", cmd, err ? err : "");
	free(err);
}

/* Copies the shop fixture into the test directory; returns its path. */
static const char *shop_copy(void)
{
	static char dir[4096];
	char cmd[9000];
	snprintf(dir, sizeof(dir), "%s/shop", th_tmpdir());
	snprintf(cmd, sizeof(cmd), "cp -r '%s/tests/fixtures/projects/shop' '%s'", th_srcdir(),
	         dir);
	sh(cmd);
	return dir;
}

static void write_file(const char *dir, const char *rel, const char *text)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	char *slash = strrchr(path, '/');
	*slash = '\0';
	char cmd[8200];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
	sh(cmd);
	*slash = '/';
	FILE *f = fopen(path, "w");
	TH_ASSERT_MSG(f != NULL, "cannot write %s", path);
	fputs(text, f);
	fclose(f);
}

static long long jint(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

static const char *jstr(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static bool has_module_row(json_t *list, const char *key, const char *name)
{
	size_t i;
	json_t *v;
	json_array_foreach(list, i, v)
	{
		if (json_is_string(v) ? strcmp(json_string_value(v), name) == 0
		                      : jstr(v, key) && strcmp(jstr(v, key), name) == 0)
			return true;
	}
	return false;
}

static struct ts_giulia_result index_json(const char *dir)
{
	struct ts_giulia_result r = GIULIA("index", dir, "--json");
	TH_ASSERT_MSG(r.status == 0 && r.json, "index failed (%d): %s %s", r.status,
	              r.out ? r.out : "", r.err ? r.err : "");
	return r;
}

static void index_reports_counts(void)
{
	const char *dir = shop_copy();
	struct ts_giulia_result r = index_json(dir);
	TH_ASSERT_INT_EQ(jint(r.json, "files"), 6);
	TH_ASSERT_INT_EQ(jint(r.json, "parsed"), 6);
	TH_ASSERT_INT_EQ(jint(r.json, "modules"), 6);
	/* 12 defs, plus the ExUnit test, which the reader counts as a function */
	TH_ASSERT_INT_EQ(jint(r.json, "functions"), 13);
	TH_ASSERT_INT_GE(jint(r.json, "edges"), 8);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(r.json, "parse_errors")), 0);
	TH_ASSERT(json_is_number(json_object_get(r.json, "elapsed_ms")));
	char db[4096];
	snprintf(db, sizeof(db), "%s/.giulia/index.db", dir);
	struct stat sb;
	TH_ASSERT_MSG(stat(db, &sb) == 0, "no database at %s", db);
	ts_giulia_result_free(&r);
	/* the text form */
	r = GIULIA("index", dir);
	TH_ASSERT_INT_EQ(r.status, 0);
	TH_ASSERT_STR_CONTAINS(r.out, "modules    6");
	ts_giulia_result_free(&r);
}

static void queries_answer_on_fixture(void)
{
	const char *dir = shop_copy();
	struct ts_giulia_result r = index_json(dir);
	ts_giulia_result_free(&r);

	r = GIULIA("modules", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(r.status, 0);
	TH_ASSERT_INT_EQ(jint(r.json, "count"), 6);
	TH_ASSERT(has_module_row(json_object_get(r.json, "modules"), "name", "Shop.Cart"));
	ts_giulia_result_free(&r);

	r = GIULIA("functions", "Shop.Repo", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(r.status, 0);
	json_t *fns = json_object_get(r.json, "functions");
	size_t i;
	json_t *f;
	int seen = 0;
	json_array_foreach(fns, i, f)
	{
		if (strcmp(jstr(f, "name"), "price_of") == 0) {
			TH_ASSERT_INT_EQ(jint(f, "arity"), 1);
			TH_ASSERT_INT_EQ(jint(f, "cyclomatic"), 3); /* def + 2 case clauses */
			TH_ASSERT_STR_EQ(jstr(f, "visibility"), "public");
			TH_ASSERT_STR_EQ(jstr(f, "kind"), "def");
			seen++;
		}
	}
	TH_ASSERT_INT_EQ(seen, 1);
	ts_giulia_result_free(&r);

	r = GIULIA("dependents", "Shop.Repo", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(r.status, 0);
	json_t *deps = json_object_get(r.json, "dependents");
	TH_ASSERT(has_module_row(deps, "module", "Shop"));
	TH_ASSERT(has_module_row(deps, "module", "Shop.Cart"));
	ts_giulia_result_free(&r);

	r = GIULIA("dependencies", "Shop.Repo", "--project", dir, "--json", "--external");
	deps = json_object_get(r.json, "dependencies");
	TH_ASSERT(has_module_row(deps, "module", "Shop.Cart"));
	TH_ASSERT(has_module_row(deps, "module", "GenServer"));
	TH_ASSERT(has_module_row(deps, "module", ":ets"));
	ts_giulia_result_free(&r);

	r = GIULIA("cycles", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(jint(r.json, "count"), 1);
	json_t *cyc =
	    json_object_get(json_array_get(json_object_get(r.json, "cycles"), 0), "modules");
	TH_ASSERT(has_module_row(cyc, NULL, "Shop.Cart"));
	TH_ASSERT(has_module_row(cyc, NULL, "Shop.Repo"));
	ts_giulia_result_free(&r);

	r = GIULIA("dead-code", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(r.status, 0);
	json_t *dead = json_object_get(r.json, "functions");
	bool unused = false, total = false, init = false, checkout = false;
	json_array_foreach(dead, i, f)
	{
		const char *name = jstr(f, "name"), *why = jstr(f, "reason");
		if (strcmp(name, "unused_api") == 0)
			unused = strcmp(why, "unreferenced") == 0;
		if (strcmp(name, "total") == 0)
			total = strcmp(why, "test_only") == 0;
		if (strcmp(name, "init") == 0)
			init = strcmp(why, "callback") == 0;
		if (strcmp(name, "checkout") == 0) /* called from an ExUnit test only */
			checkout = strcmp(why, "test_only") == 0;
		TH_ASSERT_MSG(strcmp(name, "save") != 0 && strcmp(name, "add") != 0,
		              "%s is called, not dead", name);
	}
	/* by default a behaviour's callbacks are referenced through it */
	TH_ASSERT_MSG(unused && total && !init && checkout, "dead code: %s", r.out);
	ts_giulia_result_free(&r);
	r = GIULIA("dead-code", "--project", dir, "--json", "--direct");
	TH_ASSERT_INT_EQ(r.status, 0);
	init = false;
	json_array_foreach(json_object_get(r.json, "functions"), i, f)
	{
		if (strcmp(jstr(f, "name"), "init") == 0)
			init = strcmp(jstr(f, "reason"), "callback") == 0;
	}
	TH_ASSERT_MSG(init, "--direct dead code: %s", r.out);
	ts_giulia_result_free(&r);

	r = GIULIA("impact", "Shop.Cart", "--depth", "1", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(r.status, 0);
	TH_ASSERT(has_module_row(json_object_get(r.json, "dependents"), "module", "Shop"));
	TH_ASSERT(has_module_row(json_object_get(r.json, "dependents"), "module", "Shop.Repo"));
	ts_giulia_result_free(&r);

	r = GIULIA("impact", "Shop.Repo.save/1", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(r.status, 0);
	json_t *callers = json_object_get(r.json, "callers");
	TH_ASSERT_INT_EQ(json_array_size(callers), 2); /* Shop.checkout/1, then the test */
	TH_ASSERT_STR_EQ(jstr(json_array_get(callers, 0), "name"), "checkout");
	TH_ASSERT_INT_EQ(jint(json_array_get(callers, 0), "depth"), 1);
	TH_ASSERT_STR_EQ(jstr(json_array_get(callers, 1), "module"), "ShopTest");
	TH_ASSERT_INT_EQ(jint(json_array_get(callers, 1), "depth"), 2);
	ts_giulia_result_free(&r);

	r = GIULIA("path", "Shop", "Shop.Repo", "--project", dir, "--json");
	TH_ASSERT(json_is_true(json_object_get(r.json, "found")));
	TH_ASSERT_INT_EQ(jint(r.json, "hops"), 1);
	ts_giulia_result_free(&r);

	r = GIULIA("complexity", "--top", "1", "--project", dir, "--json");
	json_t *top = json_array_get(json_object_get(r.json, "functions"), 0);
	TH_ASSERT_STR_EQ(jstr(top, "name"), "price_of");
	ts_giulia_result_free(&r);

	r = GIULIA("coupling", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(r.status, 0);
	TH_ASSERT_INT_GE(jint(r.json, "count"), 3);
	ts_giulia_result_free(&r);

	r = GIULIA("hubs", "--project", dir);
	TH_ASSERT_INT_EQ(r.status, 0);
	TH_ASSERT_STR_CONTAINS(r.out, "1 hubs (in_degree >= 3)");
	TH_ASSERT_STR_CONTAINS(r.out, "Shop.Log");
	ts_giulia_result_free(&r);

	r = GIULIA("query", "module_details", "Shop.Log", "--project", dir);
	TH_ASSERT_INT_EQ(r.status, 0);
	TH_ASSERT(json_is_true(json_object_get(r.json, "hub")));
	TH_ASSERT_INT_EQ(jint(r.json, "ca"), 3);
	TH_ASSERT_INT_EQ(jint(r.json, "ce"), 0);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(r.json, "dependents")), 3);
	ts_giulia_result_free(&r);

	/* readable tables by default */
	r = GIULIA("dependents", "Shop.Repo", "--project", dir);
	TH_ASSERT_STR_CONTAINS(r.out, "MODULE");
	TH_ASSERT_STR_CONTAINS(r.out, "Shop.Cart");
	ts_giulia_result_free(&r);
}

static void reindex_parses_only_changes(void)
{
	const char *dir = shop_copy();
	struct ts_giulia_result r = index_json(dir);
	long long functions = jint(r.json, "functions");
	ts_giulia_result_free(&r);

	r = index_json(dir);
	TH_ASSERT_INT_EQ(jint(r.json, "parsed"), 0);
	TH_ASSERT_INT_EQ(jint(r.json, "unchanged"), 6);
	ts_giulia_result_free(&r);

	/* same content, new mtime: hashed, not parsed */
	char cmd[8400];
	snprintf(cmd, sizeof(cmd), "touch -d '2030-01-01' '%s/lib/shop.ex'", dir);
	sh(cmd);
	r = index_json(dir);
	TH_ASSERT_INT_EQ(jint(r.json, "parsed"), 0);
	TH_ASSERT_INT_EQ(jint(r.json, "unchanged"), 6); /* the touched file too */
	ts_giulia_result_free(&r);

	write_file(dir, "lib/shop.ex",
	           "defmodule Shop do\n"
	           "  alias Shop.{Cart, Repo}\n"
	           "  def checkout(user), do: user |> Cart.new() |> Repo.save()\n"
	           "  def unused_api, do: :ok\n"
	           "  def another, do: :ok\n"
	           "end\n");
	r = index_json(dir);
	TH_ASSERT_INT_EQ(jint(r.json, "parsed"), 1);
	TH_ASSERT_INT_EQ(jint(r.json, "unchanged"), 5);
	TH_ASSERT_INT_EQ(jint(r.json, "functions"), functions + 1);
	ts_giulia_result_free(&r);

	/* the queries see the change: Shop no longer calls Cart.add/2 */
	r = GIULIA("query", "function_details", "Shop.Cart.add/2", "--project", dir);
	TH_ASSERT_INT_EQ(r.status, 0);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(r.json, "callers")), 0);
	ts_giulia_result_free(&r);

	snprintf(cmd, sizeof(cmd), "rm '%s/test/shop_test.exs'", dir);
	sh(cmd);
	r = index_json(dir);
	TH_ASSERT_INT_EQ(jint(r.json, "removed"), 1);
	TH_ASSERT_INT_EQ(jint(r.json, "files"), 5);
	TH_ASSERT_INT_EQ(jint(r.json, "modules"), 5);
	ts_giulia_result_free(&r);

	r = GIULIA("index", dir, "--json", "--force");
	TH_ASSERT_INT_EQ(jint(r.json, "parsed"), 5);
	ts_giulia_result_free(&r);
}

/* True when the index at DIR holds a walk record (meta "walk") in which
 * every directory has settled (none recorded with ctime -1). */
static bool walk_record_settled(const char *dir)
{
	char db[4096];
	snprintf(db, sizeof(db), "%s/.giulia/index.db", dir);
	sqlite3 *s = NULL;
	sqlite3_stmt *st = NULL;
	TH_ASSERT_INT_EQ(sqlite3_open_v2(db, &s, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	TH_ASSERT_INT_EQ(
	    sqlite3_prepare_v2(s, "SELECT value FROM meta WHERE key = 'walk'", -1, &st, NULL),
	    SQLITE_OK);
	bool settled = false;
	if (sqlite3_step(st) == SQLITE_ROW) {
		const char *v = (const char *)sqlite3_column_text(st, 0);
		settled = v && GI_STR_STARTS(v, "giulia-walk 1 ") && strstr(v, " -1 ") == NULL;
	}
	sqlite3_finalize(st);
	sqlite3_close(s);
	return settled;
}

/* Directories whose listing the last run recorded, unchanged since
 * (src/graph/index_walk.h), are not read again; every file added to,
 * removed from or ignored in a directory is seen all the same. */
static void reindex_sees_directory_changes(void)
{
	const char *dir = shop_copy();
	struct ts_giulia_result r = index_json(dir);
	TH_ASSERT_INT_EQ(jint(r.json, "files"), 6);
	ts_giulia_result_free(&r);
	/* A directory changed less than 2 s before a walk (KG_WALK_SETTLE_NS)
	 * is read again by the next: let the copy's (and .giulia/'s) settle,
	 * then a walk records them settled. */
	sh("sleep 2.2");
	r = index_json(dir);
	TH_ASSERT_INT_EQ(jint(r.json, "parsed"), 0);
	ts_giulia_result_free(&r);
	TH_ASSERT_MSG(walk_record_settled(dir), "no settled walk record in %s", dir);
	r = index_json(dir);
	TH_ASSERT_INT_EQ(jint(r.json, "parsed"), 0);
	TH_ASSERT_INT_EQ(jint(r.json, "unchanged"), 6);
	ts_giulia_result_free(&r);

	write_file(dir, "lib/shop/extra.ex", "defmodule Shop.Extra do\n  def x, do: 1\nend\n");
	r = index_json(dir);
	TH_ASSERT_INT_EQ(jint(r.json, "parsed"), 1);
	TH_ASSERT_INT_EQ(jint(r.json, "files"), 7);
	TH_ASSERT_INT_EQ(jint(r.json, "modules"), 7);
	ts_giulia_result_free(&r);

	/* a new directory below a recorded one */
	write_file(dir, "lib/shop/deeper/more.ex", "defmodule Shop.More do\nend\n");
	r = index_json(dir);
	TH_ASSERT_INT_EQ(jint(r.json, "parsed"), 1);
	TH_ASSERT_INT_EQ(jint(r.json, "files"), 8);
	ts_giulia_result_free(&r);

	/* a file that is not a source changes nothing */
	write_file(dir, "lib/notes.txt", "not a source\n");
	r = index_json(dir);
	TH_ASSERT_INT_EQ(jint(r.json, "parsed"), 0);
	TH_ASSERT_INT_EQ(jint(r.json, "files"), 8);
	ts_giulia_result_free(&r);

	char cmd[8400];
	snprintf(cmd, sizeof(cmd), "rm '%s/lib/shop/extra.ex'", dir);
	sh(cmd);
	r = index_json(dir);
	TH_ASSERT_INT_EQ(jint(r.json, "removed"), 1);
	TH_ASSERT_INT_EQ(jint(r.json, "files"), 7);
	TH_ASSERT_INT_EQ(jint(r.json, "modules"), 6 + 1);
	ts_giulia_result_free(&r);

	/* new ignore patterns apply to recorded directories too */
	write_file(dir, ".gitignore", "more.ex\n");
	r = index_json(dir);
	TH_ASSERT_INT_EQ(jint(r.json, "removed"), 1);
	TH_ASSERT_INT_EQ(jint(r.json, "files"), 6);
	TH_ASSERT_INT_EQ(jint(r.json, "modules"), 6);
	ts_giulia_result_free(&r);
}

/* `index` counts modules as the queries do: a module defined in two files is
 * one module. */
static void index_counts_distinct_modules(void)
{
	const char *dir = shop_copy();
	write_file(dir, "lib/shop/log_more.ex", "defmodule Shop.Log do\n  def more, do: 1\nend\n");
	struct ts_giulia_result r = index_json(dir);
	TH_ASSERT_INT_EQ(jint(r.json, "files"), 7);
	TH_ASSERT_INT_EQ(jint(r.json, "modules"), 6);
	ts_giulia_result_free(&r);
	r = GIULIA("modules", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(jint(r.json, "count"), 6);
	ts_giulia_result_free(&r);
}

static bool module_is_test(const char *dir, const char *name)
{
	struct ts_giulia_result r = GIULIA("query", "module_details", name, "--project", dir);
	TH_ASSERT_MSG(r.status == 0 && r.json, "module_details %s: %s", name, r.err ? r.err : "");
	bool test = json_is_true(json_object_get(r.json, "test"));
	ts_giulia_result_free(&r);
	return test;
}

/* Test code is what Mix runs as tests: the project's test_paths (default
 * test/) and *_test.exs. A module under lib/ ships with the library even with
 * `test` in its path (Phoenix's lib/phoenix/test/conn_test.ex). */
static void test_code_is_what_mix_says(void)
{
	const char *dir = shop_copy();
	write_file(dir, "lib/shop/test/conn_test.ex",
	           "defmodule Shop.ConnTest do\n  def build, do: Shop.Log.info(:x)\nend\n");
	write_file(dir, "apps/web/test/web_helper.ex", "defmodule Web.Helper do\nend\n");
	write_file(dir, "check/extra.ex", "defmodule Shop.Check do\nend\n");
	struct ts_giulia_result r = index_json(dir);
	ts_giulia_result_free(&r);
	TH_ASSERT_MSG(!module_is_test(dir, "Shop.ConnTest"), "lib/ code classed as test");
	TH_ASSERT(module_is_test(dir, "ShopTest"));
	TH_ASSERT(module_is_test(dir, "Web.Helper"));
	TH_ASSERT(!module_is_test(dir, "Shop.Check"));

	/* test_paths in mix.exs, as a literal list */
	write_file(dir, "mix.exs",
	           "defmodule Shop.MixProject do\n  use Mix.Project\n"
	           "  def project, do: [app: :shop, test_paths: [\"test\", \"check\"]]\nend\n");
	r = GIULIA("index", dir, "--json", "--force");
	TH_ASSERT_INT_EQ(r.status, 0);
	ts_giulia_result_free(&r);
	TH_ASSERT(module_is_test(dir, "Shop.Check"));
	TH_ASSERT(!module_is_test(dir, "Shop.ConnTest"));
}

/* A Phoenix-style project (tests/fixtures/projects/web): a DSL module used
 * through __using__, a protocol and its impl, a supervisor's children list,
 * MFA tuples and arguments, apply/3. Dead code finds only the function
 * nobody reaches, and says how the others are reached; --direct shows the
 * view without dispatch. */
static void dispatch_on_phoenix_style_fixture(void)
{
	char dir[4096], cmd[9000];
	snprintf(dir, sizeof(dir), "%s/web", th_tmpdir());
	snprintf(cmd, sizeof(cmd), "cp -r '%s/tests/fixtures/projects/web' '%s'", th_srcdir(), dir);
	sh(cmd);
	struct ts_giulia_result r = index_json(dir);
	ts_giulia_result_free(&r);

	r = GIULIA("dead-code", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(r.status, 0);
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(r.json, "functions"), i, f)
	{
		if (strcmp(jstr(f, "reason"), "unreferenced") == 0)
			TH_ASSERT_MSG(strcmp(jstr(f, "name"), "unused") == 0 ||
			                  strcmp(jstr(f, "name"), "never_imported_by_anyone") == 0,
			              "false unreferenced: %s.%s/%lld", jstr(f, "module"),
			              jstr(f, "name"), jint(f, "arity"));
	}
	TH_ASSERT_INT_EQ(jint(json_object_get(r.json, "by_reason"), "unreferenced"), 2);
	json_t *by = json_object_get(r.json, "reached_by_dispatch");
	TH_ASSERT_INT_GE(jint(by, "impl"), 1);
	TH_ASSERT_INT_GE(jint(by, "callback"), 3);
	TH_ASSERT_INT_GE(jint(by, "value"), 2);
	TH_ASSERT_INT_GE(jint(by, "mfa"), 3);
	TH_ASSERT_INT_GE(jint(by, "apply"), 1);
	ts_giulia_result_free(&r);

	r = GIULIA("dead-code", "--project", dir, "--json", "--direct");
	TH_ASSERT_INT_GE(jint(json_object_get(r.json, "by_reason"), "unreferenced"), 5);
	ts_giulia_result_free(&r);

	/* a call to the protocol reaches the impl, as kind impl */
	r = GIULIA("query", "function_details", "Web.Render.Web.Page.render/1", "--project", dir);
	TH_ASSERT_INT_EQ(r.status, 0);
	json_t *caller = json_array_get(json_object_get(r.json, "callers"), 0);
	TH_ASSERT_STR_EQ(jstr(caller, "module"), "Web.Page");
	TH_ASSERT_STR_EQ(jstr(caller, "kind"), "impl");
	TH_ASSERT_STR_EQ(
	    json_string_value(json_array_get(json_object_get(r.json, "reached_by"), 0)), "impl");
	ts_giulia_result_free(&r);

	/* a call inside &( ... ) has its caller */
	r = GIULIA("impact", "Web.Format.title/1", "--project", dir, "--json");
	TH_ASSERT_STR_EQ(jstr(json_array_get(json_object_get(r.json, "callers"), 0), "name"),
	                 "captured");
	ts_giulia_result_free(&r);

	/* the functions `use GenServer` and defstruct generate, marked */
	r = GIULIA("functions", "Web.Worker", "--project", dir, "--json");
	bool code_change = false;
	json_array_foreach(json_object_get(r.json, "functions"), i, f)
	{
		if (strcmp(jstr(f, "name"), "code_change") == 0)
			code_change = json_is_true(json_object_get(f, "generated")) &&
			              strcmp(jstr(f, "generated_by"), "use GenServer") == 0;
		if (strcmp(jstr(f, "name"), "init") == 0) /* written: not generated */
			TH_ASSERT(json_object_get(f, "generated") == NULL);
	}
	TH_ASSERT_MSG(code_change, "no generated code_change/3: %s", r.out);
	ts_giulia_result_free(&r);
	r = GIULIA("query", "function_details", "Web.Page.__struct__/0", "--project", dir);
	TH_ASSERT_INT_EQ(r.status, 0);
	TH_ASSERT_STR_EQ(jstr(r.json, "generated_by"), "defstruct");
	ts_giulia_result_free(&r);

	/* dependents include dispatch edges unless --direct */
	r = GIULIA("dependents", "Web.Jobs", "--project", dir, "--json");
	TH_ASSERT(has_module_row(json_object_get(r.json, "dependents"), "module", "Web.Ticker"));
	ts_giulia_result_free(&r);
	r = GIULIA("dependents", "Web.Jobs", "--project", dir, "--json", "--direct");
	TH_ASSERT(!has_module_row(json_object_get(r.json, "dependents"), "module", "Web.Ticker"));
	ts_giulia_result_free(&r);
}

/* The caller (module and function name) and kind of the first caller of
 * `fn` from module `from`, in function_details; NULLs when none. */
static void caller_from(const char *dir, const char *fn, const char *from, char *name,
                        size_t name_size, char *kind, size_t kind_size)
{
	struct ts_giulia_result r = GIULIA("query", "function_details", fn, "--project", dir);
	TH_ASSERT_MSG(r.status == 0, "function_details %s: %s", fn, r.err ? r.err : "");
	name[0] = kind[0] = '\0';
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(r.json, "callers"), i, c)
	{
		if (strcmp(jstr(c, "module"), from) != 0)
			continue;
		snprintf(name, name_size, "%s", jstr(c, "name"));
		snprintf(kind, kind_size, "%s", jstr(c, "kind"));
		break;
	}
	ts_giulia_result_free(&r);
}

/* The generated_by of function `name`/`arity` in `module`'s function list:
 * "" when written by hand, NULL when absent. */
static const char *generated_by_of(const char *dir, const char *module, const char *name, int arity,
                                   char *out, size_t size)
{
	struct ts_giulia_result r = GIULIA("functions", module, "--project", dir, "--json");
	TH_ASSERT_INT_EQ(r.status, 0);
	const char *found = NULL;
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(r.json, "functions"), i, f)
	{
		if (strcmp(jstr(f, "name"), name) != 0 || jint(f, "arity") != arity)
			continue;
		json_t *by = json_object_get(f, "generated_by");
		snprintf(out, size, "%s", by ? json_string_value(by) : "");
		found = out;
	}
	ts_giulia_result_free(&r);
	return found;
}

/* A router DSL used through its own __using__ (tests/fixtures/projects/web,
 * lib/web/router_dsl.ex and base.ex): the macros called in the router's
 * body have the module body as caller, the quote's import resolves the
 * calls, its public defs are generated functions of the router (not its
 * defp), its @before_compile calls __before_compile__/1, and `use Web.Base,
 * :controller` applies controller/0's quote. Nothing there is dead. */
static void use_injection_on_phoenix_style_fixture(void)
{
	char dir[4096], cmd[9000], name[256], kind[64], by[256];
	snprintf(dir, sizeof(dir), "%s/web", th_tmpdir());
	snprintf(cmd, sizeof(cmd), "cp -r '%s/tests/fixtures/projects/web' '%s'", th_srcdir(), dir);
	sh(cmd);
	struct ts_giulia_result r = index_json(dir);
	ts_giulia_result_free(&r);

	static const char *const macros[] = {"Web.RouterDSL.scope/2", "Web.RouterDSL.get/2",
	                                     "Web.RouterDSL.resources/2",
	                                     "Web.RouterDSL.pipe_through/1"};
	for (size_t i = 0; i < sizeof(macros) / sizeof(macros[0]); i++) {
		caller_from(dir, macros[i], "Web.Router", name, sizeof(name), kind, sizeof(kind));
		TH_ASSERT_MSG(strcmp(name, "(module body)") == 0, "%s: caller %s", macros[i], name);
		TH_ASSERT_STR_EQ(kind, "local");
	}
	caller_from(dir, "Web.RouterDSL.__before_compile__/1", "Web.Router", name, sizeof(name),
	            kind, sizeof(kind));
	TH_ASSERT_STR_EQ(name, "(module body)");
	TH_ASSERT_STR_EQ(kind, "remote");
	/* the router's own function calls the injected call/1 */
	caller_from(dir, "Web.Router.call/1", "Web.Router", name, sizeof(name), kind, sizeof(kind));
	TH_ASSERT_STR_EQ(name, "dispatch");
	TH_ASSERT(generated_by_of(dir, "Web.Router", "call", 1, by, sizeof(by)) != NULL);
	TH_ASSERT_STR_EQ(by, "use Web.RouterDSL");
	TH_ASSERT(generated_by_of(dir, "Web.Router", "call", 2, by, sizeof(by)) != NULL);
	TH_ASSERT(generated_by_of(dir, "Web.Router", "dispatch", 1, by, sizeof(by)) != NULL);
	TH_ASSERT_STR_EQ(by, "");
	TH_ASSERT(generated_by_of(dir, "Web.Router", "injected_helper", 0, by, sizeof(by)) == NULL);
	/* a module that does not use the DSL gets nothing */
	TH_ASSERT(generated_by_of(dir, "Web.Jobs", "call", 1, by, sizeof(by)) == NULL);

	/* use Web.Base, :controller: controller/0's quote */
	caller_from(dir, "Web.Base.controller/0", "Web.PageController", name, sizeof(name), kind,
	            sizeof(kind));
	TH_ASSERT_STR_EQ(name, "(module body)");
	TH_ASSERT_STR_EQ(kind, "use");
	caller_from(dir, "Web.Base.Helpers.html/2", "Web.PageController", name, sizeof(name), kind,
	            sizeof(kind));
	TH_ASSERT_STR_EQ(name, "show");
	TH_ASSERT(generated_by_of(dir, "Web.PageController", "action_name", 0, by, sizeof(by)) !=
	          NULL);
	TH_ASSERT_STR_EQ(by, "use Web.Base");

	/* none of it is dead, even without dispatch edges */
	static const char *const direct[] = {"--json", "--direct"};
	for (int d = 0; d < 2; d++) {
		r = d ? GIULIA("dead-code", "--project", dir, direct[0], direct[1])
		      : GIULIA("dead-code", "--project", dir, "--json");
		TH_ASSERT_INT_EQ(r.status, 0);
		size_t i;
		json_t *f;
		json_array_foreach(json_object_get(r.json, "functions"), i, f)
		{
			const char *m = jstr(f, "module");
			TH_ASSERT_MSG(strcmp(m, "Web.RouterDSL") != 0 &&
			                  strcmp(m, "Web.Base") != 0 &&
			                  strcmp(m, "Web.Router") != 0 &&
			                  strcmp(m, "Web.PageController") != 0,
			              "reported dead: %s.%s/%lld (%s)", m, jstr(f, "name"),
			              jint(f, "arity"), jstr(f, "reason"));
		}
		ts_giulia_result_free(&r);
	}
}

/* A project indexed from its source and its compiled .beam files: the
 * source stays the truth for what it shows (lines, calls, counted once);
 * the object code adds the functions a comprehension over a computed list
 * defines ("object code") and the calls a macro expanded into the caller
 * (origin beam); object code older than the source is not fused. */
static void source_and_object_code_fused(void)
{
	char dir[4096], cmd[13000];
	snprintf(dir, sizeof(dir), "%s/fused", th_tmpdir());
	write_file(dir, "lib/helper.ex",
	           "defmodule Fu.Helper do\n"
	           "  defmacro traced(x), do: quote(do: Fu.Audit.note(unquote(x)))\n"
	           "end\n");
	write_file(dir, "lib/audit.ex",
	           "defmodule Fu.Audit do\n  def note(x), do: x\n  def write(x), do: x\nend\n");
	write_file(dir, "lib/colors.ex",
	           "defmodule Fu.Colors do\n"
	           "  require Fu.Helper\n"
	           "  for {name, code} <- Enum.with_index([:red, :green]) do\n"
	           "    def unquote(name)(), do: unquote(code)\n"
	           "  end\n"
	           "\n"
	           "  def paint(x) do\n"
	           "    Fu.Helper.traced(x)\n"
	           "    Fu.Audit.write(x)\n"
	           "  end\n"
	           "end\n");
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/ebin' && elixirc -o '%s/ebin' '%s'/lib/*.ex", dir,
	         dir, dir);
	sh(cmd);
	char ebin[4200];
	snprintf(ebin, sizeof(ebin), "%s/ebin", dir);
	struct ts_giulia_result r = GIULIA("index", dir, "--beam", ebin, "--json", "--force");
	TH_ASSERT_MSG(r.status == 0, "index: %s", r.err ? r.err : "");
	ts_giulia_result_free(&r);

	char by[256], name[256], kind[64];
	TH_ASSERT(generated_by_of(dir, "Fu.Colors", "red", 0, by, sizeof(by)) != NULL);
	TH_ASSERT_STR_EQ(by, "object code");
	TH_ASSERT(generated_by_of(dir, "Fu.Colors", "paint", 1, by, sizeof(by)) != NULL);
	TH_ASSERT_STR_EQ(by, ""); /* written: the source's */
	r = GIULIA("query", "function_details", "Fu.Colors.paint/1", "--project", dir);
	TH_ASSERT_INT_EQ(jint(r.json, "line"), 7);
	ts_giulia_result_free(&r);

	/* the call the macro expanded into paint/1: from the object code */
	r = GIULIA("query", "function_details", "Fu.Audit.note/1", "--project", dir);
	bool from_beam = false;
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(r.json, "callers"), i, c)
	{
		if (strcmp(jstr(c, "name"), "paint") == 0)
			from_beam =
			    json_object_get(c, "origin") && strcmp(jstr(c, "origin"), "beam") == 0;
	}
	TH_ASSERT_MSG(from_beam, "no call from paint/1 of origin beam: %s", r.out);
	ts_giulia_result_free(&r);
	/* a call both show is the source's, counted once */
	caller_from(dir, "Fu.Audit.write/1", "Fu.Colors", name, sizeof(name), kind, sizeof(kind));
	TH_ASSERT_STR_EQ(name, "paint");
	r = GIULIA("query", "function_details", "Fu.Audit.write/1", "--project", dir);
	json_t *first = json_array_get(json_object_get(r.json, "callers"), 0);
	TH_ASSERT_INT_EQ(jint(first, "count"), 1);
	TH_ASSERT(json_object_get(first, "origin") == NULL);
	ts_giulia_result_free(&r);

	/* a stale build (the source has a public function its object code
	 * lacks) is other code: not fused */
	write_file(dir, "lib/colors.ex",
	           "defmodule Fu.Colors do\n  def paint(x), do: x\n  def added, do: 1\nend\n");
	r = GIULIA("index", dir, "--beam", ebin, "--json");
	TH_ASSERT_INT_EQ(r.status, 0);
	ts_giulia_result_free(&r);
	TH_ASSERT(generated_by_of(dir, "Fu.Colors", "red", 0, by, sizeof(by)) == NULL);
	TH_ASSERT(generated_by_of(dir, "Fu.Colors", "added", 0, by, sizeof(by)) != NULL);
}

static void index_skips_and_reports_bad_files(void)
{
	const char *dir = shop_copy();
	write_file(dir, "lib/broken.ex",
	           "defmodule Broken do\n"
	           "  def ok, do: 1\n"
	           "  def bad(x do\n"
	           "end\n");
	write_file(dir, "deps/dep/lib/dep.ex", "defmodule Dep do\nend\n");
	write_file(dir, "_build/dev/x.ex", "defmodule Built do\nend\n");
	write_file(dir, "node_modules/y/z.ex", "defmodule Node do\nend\n");
	write_file(dir, "README.md", "not elixir\n");
	write_file(dir, ".gitignore", "# generated code\ngen/\n*_skip.ex\n");
	write_file(dir, "lib/gen/made.ex", "defmodule Made do\nend\n");
	write_file(dir, "lib/this_skip.ex", "defmodule ThisSkip do\nend\n");
	char path[4096];
	snprintf(path, sizeof(path), "%s/lib/blob.ex", dir);
	FILE *f = fopen(path, "wb");
	TH_ASSERT(f != NULL);
	fwrite("defmodule\0\0\1\2binary", 1, 20, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/lib/huge.ex", dir);
	f = fopen(path, "wb");
	TH_ASSERT(f != NULL);
	static char line[1024];
	memset(line, '#', sizeof(line) - 1);
	line[sizeof(line) - 2] = '\n';
	line[sizeof(line) - 1] = '\0';
	for (int i = 0; i < 5300; i++)
		fputs(line, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/lib/secret.ex", dir);
	write_file(dir, "lib/secret.ex", "defmodule Secret do\nend\n");
	chmod(path, 0);
	bool root = access(path, R_OK) == 0; /* root reads anything */

	struct ts_giulia_result r = index_json(dir);
	json_t *errors = json_object_get(r.json, "parse_errors");
	TH_ASSERT_MSG(json_array_size(errors) >= 1, "no parse error in %s", r.out);
	TH_ASSERT_STR_EQ(jstr(json_array_get(errors, 0), "file"), "lib/broken.ex");
	TH_ASSERT_INT_GE(jint(json_array_get(errors, 0), "line"), 1);
	json_t *skipped = json_object_get(r.json, "skipped");
	TH_ASSERT(has_module_row(skipped, "file", "lib/blob.ex"));
	TH_ASSERT(has_module_row(skipped, "file", "lib/huge.ex"));
	if (!root)
		TH_ASSERT(has_module_row(skipped, "file", "lib/secret.ex"));
	TH_ASSERT_STR_CONTAINS(r.err, "skipping lib/huge.ex");
	ts_giulia_result_free(&r);

	r = GIULIA("modules", "--project", dir, "--json");
	json_t *mods = json_object_get(r.json, "modules");
	TH_ASSERT(has_module_row(mods, "name", "Broken")); /* what parsed is indexed */
	TH_ASSERT(!has_module_row(mods, "name", "Dep"));
	TH_ASSERT(!has_module_row(mods, "name", "Built"));
	TH_ASSERT(!has_module_row(mods, "name", "Node"));
	TH_ASSERT(!has_module_row(mods, "name", "Made"));
	TH_ASSERT(!has_module_row(mods, "name", "ThisSkip"));
	ts_giulia_result_free(&r);
}

/* Enough files to fill the parser-to-writer queue (32) several times over:
 * a chain M0 -> M1 -> ... -> M199 of remote calls. */
static void index_many_files_on_threads(void)
{
	char dir[4096], rel[64], text[512];
	snprintf(dir, sizeof(dir), "%s/chain", th_tmpdir());
	for (int i = 0; i < 200; i++) {
		snprintf(rel, sizeof(rel), "lib/m%d.ex", i);
		if (i < 199)
			snprintf(
			    text, sizeof(text),
			    "defmodule Chain.M%d do\n  def f(x), do: Chain.M%d.f(x + 1)\nend\n", i,
			    i + 1);
		else
			snprintf(text, sizeof(text),
			         "defmodule Chain.M%d do\n  def f(x), do: x\nend\n", i);
		write_file(dir, rel, text);
	}
	struct ts_giulia_result r = GIULIA("index", dir, "--jobs", "2", "--json");
	TH_ASSERT_INT_EQ(r.status, 0);
	TH_ASSERT_INT_EQ(jint(r.json, "files"), 200);
	TH_ASSERT_INT_EQ(jint(r.json, "parsed"), 200);
	TH_ASSERT_INT_EQ(jint(r.json, "modules"), 200);
	TH_ASSERT_INT_EQ(jint(r.json, "edges"), 199);
	ts_giulia_result_free(&r);
	r = GIULIA("path", "Chain.M0", "Chain.M199", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(jint(r.json, "hops"), 199);
	ts_giulia_result_free(&r);
	r = GIULIA("impact", "Chain.M100", "--depth", "3", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(jint(r.json, "dependent_count"), 3);
	TH_ASSERT_INT_EQ(jint(r.json, "dependency_count"), 3);
	ts_giulia_result_free(&r);
	r = GIULIA("query", "topology", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(jint(r.json, "layer_count"), 200);
	ts_giulia_result_free(&r);
	r = GIULIA("dead-code", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(jint(r.json, "count"), 1); /* Chain.M0.f/1 */
	ts_giulia_result_free(&r);
}

static void db_option_and_environment(void)
{
	const char *dir = shop_copy();
	char db[4096];
	snprintf(db, sizeof(db), "%s/elsewhere.db", th_tmpdir());
	struct ts_giulia_result r = GIULIA("index", dir, "--db", db, "--json");
	TH_ASSERT_INT_EQ(r.status, 0);
	ts_giulia_result_free(&r);
	r = GIULIA("modules", "--db", db, "--json");
	TH_ASSERT_INT_EQ(r.status, 0);
	TH_ASSERT_INT_EQ(jint(r.json, "count"), 6);
	ts_giulia_result_free(&r);
	setenv("GIULIA_DB", db, 1);
	r = GIULIA("hubs", "--json");
	TH_ASSERT_INT_EQ(r.status, 0);
	ts_giulia_result_free(&r);
	unsetenv("GIULIA_DB");
}

static void clear_errors_for_bad_input(void)
{
	const char *dir = shop_copy();
	struct ts_giulia_result r = GIULIA("modules", "--project", dir);
	TH_ASSERT_INT_EQ(r.status, 1);
	TH_ASSERT_STR_CONTAINS(r.err, "run `giulia index PATH` first");
	ts_giulia_result_free(&r);

	r = index_json(dir);
	ts_giulia_result_free(&r);
	r = GIULIA("dependents", "No.Such", "--project", dir);
	TH_ASSERT_INT_EQ(r.status, 1);
	TH_ASSERT_STR_CONTAINS(r.err, "unknown module 'No.Such'");
	ts_giulia_result_free(&r);
	r = GIULIA("impact", "Shop.nope/3", "--project", dir);
	TH_ASSERT_INT_EQ(r.status, 1);
	TH_ASSERT_STR_CONTAINS(r.err, "unknown function Shop.nope/3");
	ts_giulia_result_free(&r);
	r = GIULIA("path", "Shop", "Nowhere", "--project", dir);
	TH_ASSERT_INT_EQ(r.status, 1);
	TH_ASSERT_STR_CONTAINS(r.err, "unknown module 'Nowhere'");
	ts_giulia_result_free(&r);
	r = GIULIA("dependents", "--project", dir);
	TH_ASSERT_INT_EQ(r.status, 2);
	ts_giulia_result_free(&r);
	r = GIULIA("complexity", "--top", "zero", "--project", dir);
	TH_ASSERT_INT_EQ(r.status, 2);
	ts_giulia_result_free(&r);
	r = GIULIA("index", "/no/such/dir");
	TH_ASSERT_INT_EQ(r.status, 1);
	TH_ASSERT_STR_CONTAINS(r.err, "not a directory");
	ts_giulia_result_free(&r);
	r = GIULIA("index", dir, "--db", "/no/such/dir/x.db");
	TH_ASSERT_INT_EQ(r.status, 1);
	TH_ASSERT_STR_CONTAINS(r.err, "cannot create the database /no/such/dir/x.db");
	ts_giulia_result_free(&r);
}

static void corrupt_and_foreign_databases(void)
{
	const char *dir = shop_copy();
	char db[4096];
	snprintf(db, sizeof(db), "%s/bad.db", th_tmpdir());
	write_file(th_tmpdir(), "bad.db",
	           "garbage garbage garbage garbage garbage garbage garbage garbage garbage\n"
	           "garbage garbage garbage garbage garbage garbage garbage garbage garbage\n");
	struct ts_giulia_result r = GIULIA("modules", "--db", db);
	TH_ASSERT_INT_EQ(r.status, 1);
	TH_ASSERT_STR_CONTAINS(r.err, "not a SQLite database");
	ts_giulia_result_free(&r);
	r = GIULIA("index", dir, "--db", db);
	TH_ASSERT_INT_EQ(r.status, 1);
	TH_ASSERT_STR_CONTAINS(r.err, "corrupt");
	ts_giulia_result_free(&r);

	/* a SQLite file that is not ours, and one from a newer Giulia */
	snprintf(db, sizeof(db), "%s/foreign.db", th_tmpdir());
	sqlite3 *s = NULL;
	TH_ASSERT_INT_EQ(sqlite3_open(db, &s), SQLITE_OK);
	TH_ASSERT_INT_EQ(sqlite3_exec(s, "CREATE TABLE t(x)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(s);
	r = GIULIA("modules", "--db", db);
	TH_ASSERT_INT_EQ(r.status, 1);
	TH_ASSERT_STR_CONTAINS(r.err, "not a Giulia index");
	ts_giulia_result_free(&r);

	snprintf(db, sizeof(db), "%s/newer.db", th_tmpdir());
	r = GIULIA("index", dir, "--db", db);
	TH_ASSERT_INT_EQ(r.status, 0);
	ts_giulia_result_free(&r);
	TH_ASSERT_INT_EQ(sqlite3_open(db, &s), SQLITE_OK);
	TH_ASSERT_INT_EQ(sqlite3_exec(s, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(s);
	r = GIULIA("modules", "--db", db);
	TH_ASSERT_INT_EQ(r.status, 1);
	TH_ASSERT_STR_CONTAINS(r.err, "newer Giulia");
	ts_giulia_result_free(&r);
}

/* Prints "CALLER MOD.name/arity" for every call the compiler resolves from
 * one module to another while compiling SRC_FILES (':'-separated) into
 * OUT_DIR: remote and imported functions and macros, and the calls the
 * code macros emit into their callers makes. */
static const char tracer_script[] =
    "defmodule GiuliaTracer do\n"
    "  @kinds [:remote_function, :remote_macro, :imported_function, :imported_macro]\n"
    "  def trace({kind, _meta, module, name, arity}, env) when kind in @kinds do\n"
    "    if module != env.module,\n"
    "      do: IO.puts(\"#{inspect(env.module)} #{inspect(module)}.#{name}/#{arity}\")\n"
    "    :ok\n"
    "  end\n"
    "  def trace(_event, _env), do: :ok\n"
    "end\n"
    "files = String.split(System.fetch_env!(\"SRC_FILES\"), \":\")\n"
    "Code.put_compiler_option(:tracers, [GiuliaTracer])\n"
    "{:ok, _, _} = Kernel.ParallelCompiler.compile_to_path(files, "
    "System.fetch_env!(\"OUT_DIR\"))\n";

/* The category Giulia gives `Mod.name/arity` in a dead_code answer:
 * functions' reason, "public_api", or "alive" when it lists it nowhere. */
static const char *dead_category(json_t *r, const char *mfa)
{
	static const char *const lists[] = {"functions", "public_api"};
	for (int l = 0; l < 2; l++) {
		size_t i;
		json_t *f;
		json_array_foreach(json_object_get(r, lists[l]), i, f)
		{
			char key[700];
			snprintf(key, sizeof(key), "%s.%s/%lld", jstr(f, "module"), jstr(f, "name"),
			         (long long)json_integer_value(json_object_get(f, "arity")));
			if (strcmp(key, mfa) == 0)
				return l == 0 ? jstr(f, "reason") : "public_api";
		}
	}
	return "alive";
}

/* The deadcode fixture: every public function's category as written beside
 * it, and no call the compiler resolves while compiling the library
 * reaches a function Giulia calls dead. */
static void dead_code_categories_agree_with_the_compiler(void)
{
	char src[4096], dir[4096], out[4200];
	static char cmd[16384], files[24576];
	snprintf(src, sizeof(src), "%s/tests/fixtures/projects/deadcode", th_srcdir());
	snprintf(dir, sizeof(dir), "%s/deadcode", th_tmpdir());
	snprintf(out, sizeof(out), "%s/ebin", th_tmpdir());
	snprintf(cmd, sizeof(cmd), "cp -r '%s' '%s' && mkdir -p '%s'", src, dir, out);
	sh(cmd);
	struct ts_giulia_result r = GIULIA("index", dir);
	TH_ASSERT_INT_EQ(r.status, 0);
	ts_giulia_result_free(&r);
	r = GIULIA("dead-code", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(r.status, 0);
	static const char *const expected[][2] = {
	    {"Dc.Types.Helpers.helper_unused/1", "unreferenced"},
	    {"Dc.Tmpl.never/1", "unreferenced"},
	    {"Dc.Tmpl.label/1", "alive"},
	    {"Dc.Names.whereis_name/1", "callback"},
	    {"Dc.Names.send/2", "callback"},
	    {"Dc.Legacy.only_tests/0", "test_only"},
	    {"Dc.Adapter.child_specs/2", "dynamic"},
	    {"Dc.run/1", "public_api"},
	    {"Dc.Documented.api/1", "public_api"},
	    {"Dc.Legacy.old/0", "public_api"},
	    {"Dc.Routes.__on_definition__/6", "public_api"},
	    {"Dc.Routes.__using__/1", "alive"},
	    {"Dc.Routes.sigil_q/2", "alive"},
	    {"Dc.Routes.encode_path/1", "alive"},
	    {"Dc.Types.Helpers.helper_a/1", "alive"},
	    {"Dc.Types.Descr.descr_b/1", "alive"},
	    {"Dc.Version.version/0", "alive"},
	    {"Dc.Handler.handle_error/2", "alive"},
	    {"Dc.Defaults.fetch/1", "alive"},
	    {"Dc.Defaults.fetch/2", "alive"},
	    {"Dc.Defaults.fetch/3", "alive"},
	};
	for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++)
		TH_ASSERT_MSG(strcmp(dead_category(r.json, expected[i][0]), expected[i][1]) == 0,
		              "%s: %s, expected %s", expected[i][0],
		              dead_category(r.json, expected[i][0]), expected[i][1]);
	TH_ASSERT_INT_EQ(json_integer_value(
	                     json_object_get(json_object_get(r.json, "by_reason"), "unreferenced")),
	                 2);

	ts_giulia_result_free(&r);
	/* ExUnit.CaseTemplate's `using` injects its import: the test calls
	 * Dc.TestHelpers.fixture/0 through it */
	r = GIULIA("query", "function_details", "Dc.TestHelpers.fixture/0", "--project", dir,
	           "--json");
	TH_ASSERT_INT_EQ(r.status, 0);
	TH_ASSERT_MSG(strstr(r.out, "\"DcTest\"") != NULL, "callers of fixture/0: %s", r.out);
	ts_giulia_result_free(&r);
	r = GIULIA("dead-code", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(r.status, 0);

	/* the compiler's view: what it resolves is never dead */
	snprintf(files, sizeof(files),
	         "%s/lib/dc.ex:%s/lib/dc/types.ex:%s/lib/dc/docs.ex:%s/lib/dc/routes.ex:"
	         "%s/lib/dc/options.ex",
	         dir, dir, dir, dir, dir);
	setenv("SRC_FILES", files, 1);
	setenv("OUT_DIR", out, 1);
	const char *argv[] = {"elixir", "-e", tracer_script, NULL};
	char *traced = NULL, *err = NULL;
	int st = ts_run(argv, NULL, RUN_TIMEOUT_MS, &traced, &err);
	TH_ASSERT_MSG(st == 0 && traced, "the tracer failed: %s", err ? err : "");
	TH_ASSERT(strstr(traced, "Dc.Types.Helpers.helper_a/1") != NULL);
	TH_ASSERT(strstr(traced, "Dc.Routes.encode_path/1") != NULL);
	TH_ASSERT(strstr(traced, "Dc.Version.version/0") != NULL);
	int seen = 0;
	char *save = NULL;
	for (char *line = strtok_r(traced, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *callee = strchr(line, ' ');
		if (!callee || !GI_STR_STARTS(callee + 1, "Dc"))
			continue;
		seen++;
		const char *cat = dead_category(r.json, callee + 1);
		TH_ASSERT_MSG(strcmp(cat, "alive") == 0 || strcmp(cat, "public_api") == 0,
		              "the compiler resolves %s, Giulia says %s", line, cat);
	}
	TH_ASSERT_MSG(seen >= 8, "the tracer saw %d calls into the library", seen);
	free(traced);
	free(err);
	ts_giulia_result_free(&r);
}

/* The row of `mfa` ("Mod.f/a") in the array `rows` of a runtime split, or
 * NULL. */
static json_t *runtime_row(json_t *split, const char *list, const char *mfa)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(split, list), i, f)
	{
		char key[700];
		snprintf(key, sizeof(key), "%s.%s/%lld", jstr(f, "module"), jstr(f, "name"),
		         (long long)json_integer_value(json_object_get(f, "arity")));
		if (strcmp(key, mfa) == 0)
			return f;
	}
	return NULL;
}

/* dead-code --node: the deadcode fixture loaded on a live node that runs
 * Dc.run(Dc.Adapter) in a loop; the static answer split by the node's
 * calls, and no trace pattern left on the node afterwards. */
static void dead_code_split_by_a_live_node(void)
{
	char src[4096], dir[4096];
	static char cmd[16384], eval[16384];
	snprintf(src, sizeof(src), "%s/tests/fixtures/projects/deadcode", th_srcdir());
	snprintf(dir, sizeof(dir), "%s/deadcode", th_tmpdir());
	snprintf(cmd, sizeof(cmd), "cp -r '%s' '%s'", src, dir);
	sh(cmd);
	struct ts_giulia_result r = GIULIA("index", dir);
	TH_ASSERT_INT_EQ(r.status, 0);
	ts_giulia_result_free(&r);
	snprintf(eval, sizeof(eval),
	         "Code.compiler_options(ignore_module_conflict: true)\n"
	         "for f <- Path.wildcard(\"%s/lib/**/*.ex\"), do: Code.require_file(f)\n"
	         "loop = fn loop -> Dc.run(Dc.Adapter); Process.sleep(5); loop.(loop) end\n"
	         "Process.register(spawn(fn -> loop.(loop) end), :dc_loop)\n",
	         dir);
	struct ts_beam n;
	ts_beam_start(&n, TS_BEAM_ELIXIR_LONG, eval, NULL);
	ts_beam_wait_answer(&n, "is_pid(whereis(dc_loop)).", "true", 60000,
	                    "never started its loop");
	r = GIULIA("dead-code", "--project", dir, "--node", n.name, "--cookie", n.cookie, "--for",
	           "1000", "--json");
	TH_ASSERT_MSG(r.status == 0, "dead-code --node: %s", r.out ? r.out : "");
	json_t *split = json_object_get(r.json, "runtime");
	TH_ASSERT(split != NULL);
	/* the static graph calls it dynamic; the node calls it: shown */
	json_t *row = runtime_row(split, "called_but_static_dead", "Dc.Adapter.child_specs/2");
	TH_ASSERT_MSG(row != NULL, "runtime: %s", r.out);
	TH_ASSERT(json_integer_value(json_object_get(row, "calls")) > 0);
	TH_ASSERT_STR_EQ(jstr(row, "static_reason"), "dynamic");
	/* dead on both counts */
	TH_ASSERT(runtime_row(split, "dead_and_not_called", "Dc.Types.Helpers.helper_unused/1"));
	TH_ASSERT(runtime_row(split, "dead_and_not_called", "Dc.Tmpl.never/1"));
	/* reached statically (an MFA in options), never called in the window */
	TH_ASSERT(runtime_row(split, "referenced_not_called", "Dc.Handler.handle_error/2"));
	/* called by the loop: in no list */
	TH_ASSERT(!runtime_row(split, "referenced_not_called", "Dc.Types.Helpers.helper_a/1"));
	TH_ASSERT(!runtime_row(split, "referenced_not_called", "Dc.Defaults.fetch/1"));
	ts_giulia_result_free(&r);
	/* nothing of ours left on the node: no call-count pattern */
	char *left = ts_beam_eval(
	    &n, "erlang:trace_info({'Elixir.Dc.Types.Helpers', helper_a, 1}, call_count).");
	TH_ASSERT_MSG(left && strstr(left, "false") != NULL, "trace left: %s", left ? left : "");
	free(left);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(index_reports_counts),
	    TH_TEST(queries_answer_on_fixture),
	    TH_TEST(reindex_parses_only_changes),
	    TH_TEST(reindex_sees_directory_changes),
	    TH_TEST(index_skips_and_reports_bad_files),
	    TH_TEST(index_counts_distinct_modules),
	    TH_TEST(test_code_is_what_mix_says),
	    TH_TEST(dispatch_on_phoenix_style_fixture),
	    TH_TEST(use_injection_on_phoenix_style_fixture),
	    TH_TEST(source_and_object_code_fused),
	    TH_TEST(index_many_files_on_threads),
	    TH_TEST(db_option_and_environment),
	    TH_TEST(clear_errors_for_bad_input),
	    TH_TEST(corrupt_and_foreign_databases),
	    TH_TEST(dead_code_categories_agree_with_the_compiler),
	    TH_TEST(dead_code_split_by_a_live_node),
	    TH_END,
	};
	return th_main(argc, argv, "integration_static_index", tests);
}
