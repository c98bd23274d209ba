/*
 * Integration tests of the checks (docs/CHECKS.md) through the real binary:
 * `giulia contracts|conventions|structs|duplicates --json` on a copy of the
 * contracts fixture (tests/fixtures/projects/contracts), whose expectations
 * are written here by hand, what must be reported and what must not; the
 * same JSON from GET /api/checks/NAME of a real worker and from the MCP
 * tools over stdio; a behaviour from the project's own object code (an
 * Erlang module compiled with erlc, indexed with --beam); the clause-body
 * hashes that `index` leaves out and the first `duplicates` stores, per
 * file, again after a file is re-indexed, never from a file edited since.
 * needs: elixir erlang-base src:elixir-lang
 */
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_util.h"
#include "base/map.h"
#include "giulia_cli.h"
#include "harness.h"
#include "support.h"

#define RUN_TIMEOUT_MS 120000

#define GIULIA(...) ts_giulia_run((const char *const[]){__VA_ARGS__, NULL}, RUN_TIMEOUT_MS)

/* Copies the contracts fixture into the test directory and indexes it. */
static const char *fixture_ready(void)
{
	static char dir[4096];
	snprintf(dir, sizeof(dir), "%s/contracts", th_tmpdir());
	char src[4096];
	snprintf(src, sizeof(src), "%s/tests/fixtures/projects/contracts", th_srcdir());
	const char *cp[] = {"cp", "-r", src, dir, NULL};
	TH_ASSERT_INT_EQ(ts_run(cp, NULL, 30000, NULL, NULL), 0);
	struct ts_giulia_result r = GIULIA("index", dir);
	TH_ASSERT_INT_EQ(r.status, 0);
	ts_giulia_result_free(&r);
	return dir;
}

/* The finding of `check` in `module` about `what` (its function, else its
 * detail), or NULL. */
static json_t *finding(json_t *r, const char *check, const char *module, const char *what)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(r, "findings"), i, f)
	{
		const char *fn = json_string_value(json_object_get(f, "function"));
		const char *detail = json_string_value(json_object_get(f, "detail"));
		if (strcmp(json_string_value(json_object_get(f, "check")), check) == 0 &&
		    strcmp(json_string_value(json_object_get(f, "module")), module) == 0 &&
		    (!what || (fn && strcmp(fn, what) == 0) ||
		     (detail && strcmp(detail, what) == 0)))
			return f;
	}
	return NULL;
}

/* The findings of any check about module `module`. */
static size_t findings_of(json_t *r, const char *module)
{
	size_t i, n = 0;
	json_t *f;
	json_array_foreach(json_object_get(r, "findings"), i, f)
	{
		n += strcmp(json_string_value(json_object_get(f, "module")), module) == 0;
	}
	return n;
}

static void behaviours_impl_and_specs(void)
{
	const char *dir = fixture_ready();
	struct ts_giulia_result c = GIULIA("contracts", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(c.status, 0);
	TH_ASSERT(c.json != NULL);
	json_t *r = c.json;
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "total")), 5);
	/* a project behaviour: the required put/2 is missing, the optional stats/0 is not */
	json_t *f = finding(r, "missing_callback", "Contracts.Broken", "put/2");
	TH_ASSERT(f != NULL);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(f, "severity")), "warning");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(f, "file")), "lib/broken.ex");
	TH_ASSERT(finding(r, "missing_callback", "Contracts.Broken", "stats/0") == NULL);
	TH_ASSERT(finding(r, "impl_not_callback", "Contracts.Broken", "helper/0") != NULL);
	TH_ASSERT(finding(r, "impl_not_callback", "Contracts.Broken", "get/1") == NULL);
	f = finding(r, "orphan_spec", "Contracts.Broken", "gone/1");
	TH_ASSERT(f != NULL);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(f, "line")), 11);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(f, "severity")), "error");
	TH_ASSERT(finding(r, "orphan_spec", "Contracts.Broken", "other/1") == NULL);
	/* OTP's object code: gen_server's init/1 is required, handle_info/2 optional */
	TH_ASSERT(finding(r, "missing_callback", "Contracts.Plain", "init/1") != NULL);
	TH_ASSERT(finding(r, "missing_callback", "Contracts.Plain", "handle_info/2") == NULL);
	TH_ASSERT_INT_EQ(findings_of(r, "Contracts.Plain"), 1);
	/* Elixir's: use GenServer defines the defaults, so nothing is missing */
	TH_ASSERT_INT_EQ(findings_of(r, "Contracts.Server"), 0);
	TH_ASSERT_INT_EQ(findings_of(r, "Contracts.Memory"), 0);
	TH_ASSERT(finding(r, "impl_without_behaviour", "Contracts.Loose", "run/0") != NULL);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(r, "unresolved_behaviours")), 0);
	ts_giulia_result_free(&c);

	/* filters, and the text form */
	c = GIULIA("contracts", "--project", dir, "--check", "orphan_spec", "--json");
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(c.json, "total")), 1);
	ts_giulia_result_free(&c);
	c = GIULIA("contracts", "--project", dir, "--module", "Contracts.Plain");
	TH_ASSERT_INT_EQ(c.status, 0);
	TH_ASSERT(strstr(c.out, "lib/server.ex:10: warning missing_callback: Contracts.Plain "
	                        "declares @behaviour :gen_server but does not define its "
	                        "callback init/1") != NULL);
	TH_ASSERT(strstr(c.out, "1 finding, 1 warning") != NULL);
	ts_giulia_result_free(&c);
}

static void conventions_with_thresholds(void)
{
	const char *dir = fixture_ready();
	struct ts_giulia_result c = GIULIA("conventions", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(c.status, 0);
	json_t *r = c.json;
	TH_ASSERT(finding(r, "missing_moduledoc", "Contracts.Undocumented", NULL) != NULL);
	TH_ASSERT(finding(r, "missing_moduledoc", "Contracts.Hidden", NULL) == NULL);
	TH_ASSERT(finding(r, "missing_moduledoc", "Contracts.MixProject", NULL) == NULL);
	TH_ASSERT(finding(r, "missing_moduledoc", "Contracts.StoreTest", NULL) == NULL);
	/* @doc only matters in documented modules; @doc false and @impl count as a choice */
	TH_ASSERT(finding(r, "missing_doc", "Contracts.Style", "undocumented/0") != NULL);
	TH_ASSERT(finding(r, "missing_doc", "Contracts.Broken", "other/1") != NULL);
	TH_ASSERT(finding(r, "missing_doc", "Contracts.Undocumented", "public/0") == NULL);
	TH_ASSERT(finding(r, "missing_doc", "Contracts.Style", "hidden/0") == NULL);
	TH_ASSERT(finding(r, "missing_doc", "Contracts.Broken", "helper/0") == NULL);
	TH_ASSERT(finding(r, "missing_doc", "Contracts.Style", "private_helper/0") == NULL);
	/* apply with literals only */
	json_t *f = finding(r, "apply_literal", "Contracts.Style", "dispatch/2");
	TH_ASSERT(f != NULL);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(f, "detail")), "Contracts.Memory.get/1");
	TH_ASSERT_INT_EQ(
	    json_integer_value(json_object_get(json_object_get(r, "counts"), "apply_literal")), 1);
	/* String.to_atom(input), input |> String.to_atom(), :erlang.binary_to_atom(input, _),
	 * :"key_#{input}"; not String.to_atom("fixed"), String.to_existing_atom, :"plain" */
	TH_ASSERT_INT_EQ(
	    json_integer_value(json_object_get(json_object_get(r, "counts"), "atom_from_input")),
	    4);
	TH_ASSERT(finding(r, "atom_from_input", "Contracts.Style", ":\"...#{}\"") != NULL);
	TH_ASSERT(finding(r, "atom_from_input", "Contracts.Style", ":erlang.binary_to_atom/2") !=
	          NULL);
	f = finding(r, "deep_nesting", "Contracts.Style", "nested/1");
	TH_ASSERT(f != NULL);
	TH_ASSERT(finding(r, "high_complexity", "Contracts.Style", "branchy/1") != NULL);
	TH_ASSERT(finding(r, "high_complexity", "Contracts.Style", "nested/1") == NULL);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "total")), 10);
	ts_giulia_result_free(&c);

	c = GIULIA("conventions", "--project", dir, "--max-nesting", "5", "--max-complexity", "11",
	           "--json");
	TH_ASSERT(finding(c.json, "deep_nesting", "Contracts.Style", "nested/1") == NULL);
	TH_ASSERT(finding(c.json, "high_complexity", "Contracts.Style", "branchy/1") == NULL);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(json_object_get(c.json, "thresholds"),
	                                                    "max_complexity")),
	                 11);
	ts_giulia_result_free(&c);
	c = GIULIA("conventions", "--project", dir, "--max-complexity", "10", "--json");
	TH_ASSERT(finding(c.json, "high_complexity", "Contracts.Style", "branchy/1") != NULL);
	ts_giulia_result_free(&c);
	c = GIULIA("conventions", "--project", dir, "--max-nesting", "x");
	TH_ASSERT_INT_EQ(c.status, 2);
	ts_giulia_result_free(&c);
}

/* The site of `list` ("built", ...) of `s` at `line` in `function`. */
static bool has_site(json_t *s, const char *list, const char *function, long long line)
{
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(s, list), i, v)
	{
		if (json_integer_value(json_object_get(v, "line")) == line &&
		    strcmp(json_string_value(json_object_get(v, "function")), function) == 0)
			return true;
	}
	return false;
}

static void struct_lifecycle(void)
{
	const char *dir = fixture_ready();
	struct ts_giulia_result c = GIULIA("structs", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(c.status, 0);
	json_t *list = json_object_get(c.json, "structs");
	TH_ASSERT_INT_EQ(json_array_size(list), 2);
	json_t *order = json_array_get(list, 0), *unused = json_array_get(list, 1);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(order, "struct")), "Contracts.Order");
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(order, "fields")), 3);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(order, "built")), 3);
	TH_ASSERT(has_site(order, "built", "new/1", 6));
	TH_ASSERT(has_site(order, "built", "from/1", 9));
	TH_ASSERT(has_site(order, "built", "blank/1", 23)); /* a default argument */
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(order, "updated")), 1);
	TH_ASSERT(has_site(order, "updated", "pay/1", 12));
	/* the head's %Order{} = order and the case clause, not the update */
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(order, "matched")), 2);
	TH_ASSERT(has_site(order, "matched", "pay/1", 12));
	TH_ASSERT(has_site(order, "matched", "paid?/1", 17));
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(unused, "struct")), "Contracts.Unused");
	TH_ASSERT_INT_EQ(
	    json_integer_value(json_object_get(json_object_get(unused, "counts"), "built")), 0);
	ts_giulia_result_free(&c);

	c = GIULIA("structs", "Contracts.Order", "--project", dir);
	TH_ASSERT_INT_EQ(c.status, 0);
	TH_ASSERT(
	    strstr(c.out, "%Contracts.Order{}  lib/order.ex  built 3, updated 1, matched 2") !=
	    NULL);
	TH_ASSERT(strstr(c.out, "Contracts.Unused") == NULL);
	ts_giulia_result_free(&c);
	c = GIULIA("structs", "No.Such", "--project", dir);
	TH_ASSERT_INT_EQ(c.status, 1);
	TH_ASSERT(strstr(c.err, "no struct No.Such") != NULL);
	ts_giulia_result_free(&c);
}

/* The group of `type` whose members are exactly functions `a` and `b` of
 * Contracts.Clones.A and .B, or NULL. */
static json_t *clone_group(json_t *r, int type, const char *fn)
{
	size_t i;
	json_t *g;
	json_array_foreach(json_object_get(r, "groups"), i, g)
	{
		json_t *m = json_object_get(g, "members");
		if (json_integer_value(json_object_get(g, "type")) != type ||
		    json_array_size(m) != 2)
			continue;
		json_t *a = json_array_get(m, 0), *b = json_array_get(m, 1);
		if (strcmp(json_string_value(json_object_get(a, "module")), "Contracts.Clones.A") ==
		        0 &&
		    strcmp(json_string_value(json_object_get(b, "module")), "Contracts.Clones.B") ==
		        0 &&
		    strcmp(json_string_value(json_object_get(a, "function")), fn) == 0 &&
		    strcmp(json_string_value(json_object_get(b, "function")), fn) == 0)
			return g;
	}
	return NULL;
}

static void duplicates_type1_type2_and_negatives(void)
{
	const char *dir = fixture_ready();
	struct ts_giulia_result c = GIULIA("duplicates", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(c.status, 0);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(c.json, "total")), 2);
	TH_ASSERT(clone_group(c.json, 1, "total/1") != NULL);
	TH_ASSERT(clone_group(c.json, 2, "weight/1") != NULL);
	/* a comment and other layout keep a type-1 clone type-1 */
	TH_ASSERT(clone_group(c.json, 2, "total/1") == NULL);
	ts_giulia_result_free(&c);

	/* small/1's bodies have the same shape but are below the minimum size;
	 * other/1's differ in a called function and an operator: never clones */
	c = GIULIA("duplicates", "--project", dir, "--min-size", "1", "--json");
	TH_ASSERT(clone_group(c.json, 2, "small/1") != NULL);
	TH_ASSERT(clone_group(c.json, 1, "other/1") == NULL);
	TH_ASSERT(clone_group(c.json, 2, "other/1") == NULL);
	ts_giulia_result_free(&c);
	c = GIULIA("duplicates", "--project", dir);
	TH_ASSERT(strstr(c.out, "type-1 clone, ") != NULL);
	TH_ASSERT(strstr(c.out, "2 clone groups") != NULL);
	ts_giulia_result_free(&c);
}

/* The integer the query `sql` answers on the fixture's index database. */
static long long db_count(const char *dir, const char *sql)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/.giulia/index.db", dir);
	sqlite3 *db = NULL;
	TH_ASSERT_INT_EQ(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_stmt *st = NULL;
	TH_ASSERT_INT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	TH_ASSERT_INT_EQ(sqlite3_step(st), SQLITE_ROW);
	long long n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

/* Appends `text` to the fixture file `rel`. */
static void fixture_append(const char *dir, const char *rel, const char *text)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	FILE *f = fopen(path, "a");
	TH_ASSERT(f != NULL);
	fputs(text, f);
	fclose(f);
}

#define BODY_SITES "SELECT count(*) FROM sites WHERE kind = 8"
#define UNHASHED   "SELECT count(*) FROM files WHERE NOT bodies_hashed"

static void duplicates_hash_bodies_when_first_asked(void)
{
	const char *dir = fixture_ready();
	TH_ASSERT_INT_EQ(db_count(dir, BODY_SITES), 0);
	long long files = db_count(dir, "SELECT count(*) FROM files");
	TH_ASSERT_INT_EQ(db_count(dir, UNHASHED), files);

	struct ts_giulia_result first = GIULIA("duplicates", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(first.status, 0);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(first.json, "total")), 2);
	TH_ASSERT(json_object_get(first.json, "stale_files") == NULL);
	long long bodies = db_count(dir, BODY_SITES);
	TH_ASSERT(bodies > 0);
	TH_ASSERT_INT_EQ(db_count(dir, UNHASHED), 0);
	/* stored once: the second run reads them and answers the same */
	struct ts_giulia_result c = GIULIA("duplicates", "--project", dir, "--json");
	TH_ASSERT_MSG(json_equal(first.json, c.json), "second duplicates differs: %s", c.out);
	TH_ASSERT_INT_EQ(db_count(dir, BODY_SITES), bodies);
	ts_giulia_result_free(&c);

	/* a re-indexed file loses its hashes until the next duplicates */
	fixture_append(dir, "lib/clones.ex", "\n# edited\n");
	c = GIULIA("index", dir);
	TH_ASSERT_INT_EQ(c.status, 0);
	ts_giulia_result_free(&c);
	TH_ASSERT_INT_EQ(db_count(dir, UNHASHED), 1);
	TH_ASSERT(db_count(dir, BODY_SITES) < bodies);
	c = GIULIA("duplicates", "--project", dir, "--json");
	TH_ASSERT_MSG(json_equal(first.json, c.json), "after a re-index: %s", c.out);
	TH_ASSERT_INT_EQ(db_count(dir, BODY_SITES), bodies);
	ts_giulia_result_free(&c);

	/* re-indexed, then edited again with no `index`: the query brings the
	 * index up to date first (kg_db_refresh_on_query), so the answer is
	 * the code on disk, never a stale one */
	fixture_append(dir, "lib/clones.ex", "\n# edited again\n");
	c = GIULIA("index", dir);
	ts_giulia_result_free(&c);
	fixture_append(dir, "lib/clones.ex", "\n# and once more\n");
	c = GIULIA("duplicates", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(c.status, 0);
	TH_ASSERT(json_object_get(c.json, "stale_files") == NULL);
	TH_ASSERT_MSG(json_equal(first.json, c.json), "after an edit, no index: %s", c.out);
	TH_ASSERT_INT_EQ(db_count(dir, UNHASHED), 0);
	ts_giulia_result_free(&c);
	ts_giulia_result_free(&first);
}

/* A tools/call of `tool` over `giulia mcp` on stdio: its structured result. */
static json_t *mcp_tool(const char *dir, const char *tool, const char *arguments)
{
	char input[4096];
	snprintf(input, sizeof(input),
	         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
	         "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":"
	         "\"t\",\"version\":\"1\"}}}\n"
	         "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
	         "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
	         "\"%s\",\"arguments\":%s}}\n",
	         tool, arguments);
	char bin[4096];
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	const char *argv[] = {bin, "mcp", "--project", dir, "--worker", "http://127.0.0.1:1", NULL};
	char *out = NULL;
	TH_ASSERT_INT_EQ(ts_run(argv, input, 60000, &out, NULL), 0);
	const char *line = out ? strstr(out, "\"id\":2") : NULL;
	TH_ASSERT_MSG(line != NULL, "no answer to the tool call: %s", out ? out : "");
	while (line > out && line[-1] != '\n')
		line--;
	json_t *reply = json_loads(line, JSON_DISABLE_EOF_CHECK, NULL);
	free(out);
	TH_ASSERT(reply != NULL);
	json_t *r =
	    json_incref(json_object_get(json_object_get(reply, "result"), "structuredContent"));
	json_decref(reply);
	TH_ASSERT(r != NULL);
	return r;
}

static void rest_and_mcp_give_the_cli_json(void)
{
	const char *dir = fixture_ready();
	struct td_daemon w = {0};
	snprintf(w.data, sizeof(w.data), "%s/worker", th_tmpdir());
	td_start(&w, "worker", NULL);
	char body[4200], path[2048];
	snprintf(body, sizeof(body), "{\"path\":\"%s\"}", dir);
	TH_ASSERT_INT_EQ(td_post(&w, "/api/index/scan", body, NULL), 200);
	static const char *const names[] = {"contracts", "conventions", "structs", "duplicates"};
	for (int i = 0; i < 4; i++) {
		struct ts_giulia_result c = GIULIA(names[i], "--project", dir, "--json");
		TH_ASSERT_INT_EQ(c.status, 0);
		json_t *rest = NULL;
		snprintf(path, sizeof(path), "/api/checks/%s?path=%s", names[i], dir);
		TH_ASSERT_INT_EQ(td_get(&w, path, &rest), 200);
		TH_ASSERT_MSG(json_equal(rest, c.json), "REST and CLI differ for %s", names[i]);
		json_decref(rest);
		ts_giulia_result_free(&c);
	}
	struct ts_giulia_result c =
	    GIULIA("conventions", "--project", dir, "--max-nesting", "5", "--json");
	json_t *rest = NULL;
	snprintf(path, sizeof(path), "/api/checks/conventions?max_nesting=5&path=%s", dir);
	TH_ASSERT_INT_EQ(td_get(&w, path, &rest), 200);
	TH_ASSERT(json_equal(rest, c.json));
	json_decref(rest);
	json_t *m = mcp_tool(dir, "knowledge_conventions", "{\"max_nesting\":5}");
	TH_ASSERT_MSG(json_equal(m, c.json), "MCP and CLI differ for conventions");
	json_decref(m);
	ts_giulia_result_free(&c);
	c = GIULIA("duplicates", "--project", dir, "--json");
	m = mcp_tool(dir, "knowledge_duplicates", "{}");
	TH_ASSERT_MSG(json_equal(m, c.json), "MCP and CLI differ for duplicates");
	json_decref(m);
	ts_giulia_result_free(&c);

	/* a bad argument is a 400 that says which */
	snprintf(path, sizeof(path), "/api/checks/conventions?max_nesting=deep&path=%s", dir);
	json_t *err = NULL;
	TH_ASSERT_INT_EQ(td_get(&w, path, &err), 400);
	TH_ASSERT(strstr(json_string_value(json_object_get(err, "error")), "max_nesting") != NULL);
	json_decref(err);
	snprintf(path, sizeof(path), "/api/checks/duplicates?min_size=0&path=%s", dir);
	TH_ASSERT_INT_EQ(td_get(&w, path, &err), 400);
	json_decref(err);
	td_stop(&w);
}

/* After an edit, and no `giulia index`, every way of asking answers from
 * the edited code: the CLI, a running worker (whose pooled connection has
 * its graph loaded already) and MCP; a removed file's findings go too. */
static void queries_answer_from_the_edited_code(void)
{
	const char *dir = fixture_ready();
	struct td_daemon w = {0};
	snprintf(w.data, sizeof(w.data), "%s/worker", th_tmpdir());
	td_start(&w, "worker", NULL);
	char body[4200], path[2048], file[4200];
	snprintf(body, sizeof(body), "{\"path\":\"%s\"}", dir);
	TH_ASSERT_INT_EQ(td_post(&w, "/api/index/scan", body, NULL), 200);
	snprintf(path, sizeof(path), "/api/checks/contracts?path=%s", dir);
	json_t *rest = NULL;
	TH_ASSERT_INT_EQ(td_get(&w, path, &rest), 200); /* loads the graph */
	TH_ASSERT(finding(rest, "impl_without_behaviour", "Contracts.Edited", NULL) == NULL);
	json_decref(rest);

	snprintf(file, sizeof(file), "%s/lib/edited.ex", dir);
	FILE *f = fopen(file, "w");
	TH_ASSERT(f != NULL);
	fputs("defmodule Contracts.Edited do\n  @moduledoc false\n  @impl true\n"
	      "  def run(x), do: x\nend\n",
	      f);
	fclose(f);
	struct ts_giulia_result c = GIULIA("contracts", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(c.status, 0);
	TH_ASSERT_MSG(finding(c.json, "impl_without_behaviour", "Contracts.Edited", "run/1"),
	              "CLI after an edit: %s", c.out);
	TH_ASSERT(json_object_get(c.json, "index_stale") == NULL);
	TH_ASSERT_INT_EQ(td_get(&w, path, &rest), 200);
	TH_ASSERT_MSG(json_equal(rest, c.json), "REST after an edit differs from the CLI");
	json_decref(rest);
	json_t *m = mcp_tool(dir, "knowledge_contracts", "{}");
	TH_ASSERT_MSG(json_equal(m, c.json), "MCP after an edit differs from the CLI");
	json_decref(m);
	ts_giulia_result_free(&c);

	TH_ASSERT_INT_EQ(unlink(file), 0);
	TH_ASSERT_INT_EQ(td_get(&w, path, &rest), 200);
	TH_ASSERT(finding(rest, "impl_without_behaviour", "Contracts.Edited", NULL) == NULL);
	json_decref(rest);
	td_stop(&w);
}

/* An Erlang behaviour of the project known only from its object code: its
 * required callbacks from behaviour_info(callbacks), its optional ones from
 * behaviour_info(optional_callbacks). */
static void behaviour_from_project_object_code(void)
{
	TH_NEED(access("/usr/bin/erlc", X_OK) == 0, "erlang-base", "erlc");
	char dir[4096], ebin[4200], erl[4200];
	snprintf(dir, sizeof(dir), "%s/proj", th_tmpdir());
	snprintf(ebin, sizeof(ebin), "%s/ebin", th_tmpdir());
	snprintf(erl, sizeof(erl), "%s/sink.erl", th_tmpdir());
	const char *mk[] = {"mkdir", "-p", dir, ebin, NULL};
	TH_ASSERT_INT_EQ(ts_run(mk, NULL, 10000, NULL, NULL), 0);
	FILE *f = fopen(erl, "w");
	TH_ASSERT(f != NULL);
	fputs("-module(sink).\n-callback write(term()) -> ok.\n-callback flush() -> ok.\n"
	      "-callback close() -> ok.\n-optional_callbacks([close/0]).\n",
	      f);
	fclose(f);
	char lib[4200];
	snprintf(lib, sizeof(lib), "%s/lib.ex", dir);
	f = fopen(lib, "w");
	TH_ASSERT(f != NULL);
	fputs("defmodule Writer do\n  @moduledoc false\n  @behaviour :sink\n  @impl true\n"
	      "  def write(_), do: :ok\n  @impl :sink\n  def close, do: :ok\nend\n",
	      f);
	fclose(f);
	const char *erlc[] = {"erlc", "-o", ebin, erl, NULL};
	TH_ASSERT_INT_EQ(ts_run(erlc, NULL, 60000, NULL, NULL), 0);
	struct ts_giulia_result c = GIULIA("index", dir, "--beam", ebin);
	TH_ASSERT_INT_EQ(c.status, 0);
	ts_giulia_result_free(&c);
	c = GIULIA("contracts", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(c.status, 0);
	TH_ASSERT(finding(c.json, "missing_callback", "Writer", "flush/0") != NULL);
	TH_ASSERT(finding(c.json, "impl_not_callback", "Writer", NULL) == NULL);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(c.json, "total")), 1);
	ts_giulia_result_free(&c);
}

/* The compiler's behaviour and @impl warnings in `text` (elixirc's stderr)
 * as "check module function" lines in `set`. */
static void compiler_findings(char *text, struct gi_map *set)
{
	char kind[32] = "", fn[256] = "";
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *w = strstr(line, "warning: ");
		if (w) {
			const char *f = strstr(w, "function ");
			kind[0] = fn[0] = '\0';
			if (!f)
				continue;
			sscanf(f + 9, "%255s", fn);
			if (strstr(w, "required by behaviour"))
				snprintf(kind, sizeof(kind), "missing_callback");
			else if (strstr(w, "no behaviour was declared"))
				snprintf(kind, sizeof(kind), "impl_without_behaviour");
			else if (strstr(w, "@impl"))
				snprintf(kind, sizeof(kind), "impl_not_callback");
			continue;
		}
		char *end = strstr(line, " (module)");
		if (!end || !kind[0])
			continue;
		*end = '\0';
		const char *m = strrchr(line, ' ');
		char key[600];
		snprintf(key, sizeof(key), "%s %s %s", kind, m ? m + 1 : line, fn);
		gi_map_put(set, key, (void *)1);
		kind[0] = '\0';
	}
}

/* Giulia's contract findings (orphan specs aside) as "check module
 * function" lines in `set`, their count returned. */
static size_t giulia_findings(json_t *r, struct gi_map *set)
{
	size_t i, n = 0;
	json_t *f;
	json_array_foreach(json_object_get(r, "findings"), i, f)
	{
		const char *check = json_string_value(json_object_get(f, "check"));
		if (strcmp(check, "orphan_spec") == 0)
			continue;
		const char *fn = strcmp(check, "missing_callback") == 0
		                     ? json_string_value(json_object_get(f, "detail"))
		                     : json_string_value(json_object_get(f, "function"));
		char key[600];
		snprintf(key, sizeof(key), "%s %s %s", check,
		         json_string_value(json_object_get(f, "module")), fn ? fn : "?");
		gi_map_put(set, key, (void *)1);
		n++;
	}
	return n;
}

/* The contracts_truth fixture (callbacks spliced in by __using__'s helpers,
 * overridable defaults, a behaviour whose __using__ does not declare it,
 * defexception's implicit @behaviour Exception, default-argument arities,
 * and three true findings) compiled by elixirc: Giulia's findings are
 * exactly the compiler's warnings. */
static void contracts_agree_with_the_compiler(void)
{
	char src[4096], dir[4096], out[4200];
	snprintf(src, sizeof(src), "%s/tests/fixtures/projects/contracts_truth", th_srcdir());
	snprintf(dir, sizeof(dir), "%s/truth", th_tmpdir());
	snprintf(out, sizeof(out), "%s/ebin", th_tmpdir());
	const char *cp[] = {"cp", "-r", src, dir, NULL};
	TH_ASSERT_INT_EQ(ts_run(cp, NULL, 30000, NULL, NULL), 0);
	const char *mk[] = {"mkdir", "-p", out, NULL};
	TH_ASSERT_INT_EQ(ts_run(mk, NULL, 10000, NULL, NULL), 0);
	char kv[4200], errors[4200];
	snprintf(kv, sizeof(kv), "%s/lib/kv.ex", dir);
	snprintf(errors, sizeof(errors), "%s/lib/errors.ex", dir);
	const char *elixirc[] = {"elixirc", "-o", out, kv, errors, NULL};
	char *se = NULL;
	TH_ASSERT_INT_EQ(ts_run(elixirc, NULL, 120000, NULL, &se), 0);
	TH_ASSERT(se != NULL);
	struct gi_map compiler, giulia;
	gi_map_init(&compiler);
	gi_map_init(&giulia);
	compiler_findings(se, &compiler);
	free(se);
	struct ts_giulia_result r = GIULIA("index", dir);
	TH_ASSERT_INT_EQ(r.status, 0);
	ts_giulia_result_free(&r);
	r = GIULIA("contracts", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(r.status, 0);
	size_t n = giulia_findings(r.json, &giulia);
	TH_ASSERT_INT_EQ(n, 3);
	TH_ASSERT_INT_EQ(compiler.len, 3);
	for (size_t i = 0; i < compiler.cap; i++)
		if (compiler.slots[i].key)
			TH_ASSERT_MSG(gi_map_get(&giulia, compiler.slots[i].key),
			              "the compiler warns, Giulia does not: %s",
			              compiler.slots[i].key);
	for (size_t i = 0; i < giulia.cap; i++)
		if (giulia.slots[i].key)
			TH_ASSERT_MSG(gi_map_get(&compiler, giulia.slots[i].key),
			              "Giulia reports, the compiler does not: %s",
			              giulia.slots[i].key);
	ts_giulia_result_free(&r);
	gi_map_destroy(&compiler);
	gi_map_destroy(&giulia);
}

/* Elixir 1.14's own standard library (Debian's source package, unpacked by
 * scripts/deps.sh into build/elixir-src), which that compiler builds
 * without a single behaviour or @impl warning: no contract finding either
 * (defexception's @behaviour Exception, @impl on default-argument heads,
 * callbacks that `use` brings). */
static void stdlib_contracts_agree_with_the_compiler(void)
{
	char lib[4096], probe[4200], db[4096];
	snprintf(lib, sizeof(lib), "%s/build/elixir-src/lib", th_srcdir());
	snprintf(probe, sizeof(probe), "%s/elixir/lib/kernel.ex", lib);
	TH_NEED(access(probe, R_OK) == 0, "src:elixir-lang", "no Elixir source at %s", lib);
	snprintf(db, sizeof(db), "%s/stdlib.db", th_tmpdir());
	struct ts_giulia_result r = GIULIA("index", lib, "--db", db, "--jobs", "2");
	TH_ASSERT_INT_EQ(r.status, 0);
	ts_giulia_result_free(&r);
	r = GIULIA("contracts", "--project", lib, "--db", db, "--check", "missing_callback",
	           "--json");
	TH_ASSERT_INT_EQ(r.status, 0);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r.json, "total")), 0);
	ts_giulia_result_free(&r);
	r = GIULIA("contracts", "--project", lib, "--db", db, "--json");
	TH_ASSERT_INT_EQ(r.status, 0);
	json_t *counts = json_object_get(r.json, "counts");
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(counts, "impl_not_callback")), 0);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(counts, "impl_without_behaviour")), 0);
	ts_giulia_result_free(&r);

	/* dead code: Kernel's functions and macros are imported by every
	 * module (none is dead), and `import Module.Types.{Helpers, Unify}`
	 * makes edges (Module.Types.Expr calls Helpers' functions through it) */
	r = GIULIA("dead-code", "--project", lib, "--db", db, "--json");
	TH_ASSERT_INT_EQ(r.status, 0);
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(r.json, "functions"), i, f)
	{
		const char *m = json_string_value(json_object_get(f, "module"));
		TH_ASSERT_MSG(strcmp(m, "Kernel") != 0 && strcmp(m, "Kernel.SpecialForms") != 0,
		              "%s.%s is dead?", m, json_string_value(json_object_get(f, "name")));
	}
	ts_giulia_result_free(&r);
	r = GIULIA("dependents", "Module.Types.Helpers", "--project", lib, "--db", db, "--json");
	TH_ASSERT_INT_EQ(r.status, 0);
	TH_ASSERT_MSG(strstr(r.out, "\"Module.Types.Expr\"") != NULL, "dependents: %s", r.out);
	ts_giulia_result_free(&r);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(behaviours_impl_and_specs),
	    TH_TEST(conventions_with_thresholds),
	    TH_TEST(struct_lifecycle),
	    TH_TEST(duplicates_type1_type2_and_negatives),
	    TH_TEST(duplicates_hash_bodies_when_first_asked),
	    TH_TEST(rest_and_mcp_give_the_cli_json),
	    TH_TEST(behaviour_from_project_object_code),
	    TH_TEST(contracts_agree_with_the_compiler),
	    TH_TEST(queries_answer_from_the_edited_code),
	    TH_TEST(stdlib_contracts_agree_with_the_compiler),
	    TH_END,
	};
	return th_main(argc, argv, "integration_contracts", tests);
}
