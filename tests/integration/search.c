/*
 * Integration tests of the search commands through the real binary and a
 * real worker: `giulia search text|code` on a copy of the notes fixture
 * (tests/fixtures/projects/notes) gives the same JSON as GET
 * /api/search/text and /api/search/code; the readable output, the exit
 * codes and the HTTP errors for bad arguments (a regex that does not
 * compile, a back-reference, a huge pattern, a missing query, an unknown
 * option) say what is wrong. `giulia preflight` likewise against GET
 * /api/knowledge/preflight.
 * needs:
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"
#include "giulia_cli.h"
#include "harness.h"
#include "support.h"

#define RUN_TIMEOUT_MS 120000

#define GIULIA(...) ts_giulia_run((const char *const[]){__VA_ARGS__, NULL}, RUN_TIMEOUT_MS)

/* Copies the notes fixture into the test directory and indexes it. */
static const char *notes_ready(void)
{
	static char dir[4096];
	snprintf(dir, sizeof(dir), "%s/notes", th_tmpdir());
	char src[4096];
	snprintf(src, sizeof(src), "%s/tests/fixtures/projects/notes", th_srcdir());
	const char *cp[] = {"cp", "-r", src, dir, NULL};
	TH_ASSERT_INT_EQ(ts_run(cp, NULL, 30000, NULL, NULL), 0);
	struct ts_giulia_result r = GIULIA("index", dir);
	TH_ASSERT_INT_EQ(r.status, 0);
	ts_giulia_result_free(&r);
	return dir;
}

static void cli_and_rest_give_the_same_json(void)
{
	const char *dir = notes_ready();
	struct td_daemon w = {0};
	snprintf(w.data, sizeof(w.data), "%s/worker", th_tmpdir());
	td_start(&w, "worker", NULL);
	char body[4200];
	snprintf(body, sizeof(body), "{\"path\":\"%s\"}", dir);
	TH_ASSERT_INT_EQ(td_post(&w, "/api/index/scan", body, NULL), 200);

	struct ts_giulia_result c =
	    GIULIA("search", "code", "find", "notes", "by", "tag", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(c.status, 0);
	TH_ASSERT(c.json != NULL);
	char path[2048];
	json_t *rest = NULL;
	snprintf(path, sizeof(path), "/api/search/code?query=find+notes+by+tag&path=%s", dir);
	TH_ASSERT_INT_EQ(td_get(&w, path, &rest), 200);
	TH_ASSERT_MSG(json_equal(rest, c.json), "REST and CLI differ for search code");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(
	                     json_array_get(json_object_get(rest, "results"), 0), "name")),
	                 "by_tag");
	json_decref(rest);
	ts_giulia_result_free(&c);

	/* (ts_giulia_run takes at most 14 arguments) */
	c = GIULIA("search", "text", "note", "-i", "--module", "Notes.Store", "--context", "2",
	           "--offset", "1", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(c.status, 0);
	snprintf(path, sizeof(path),
	         "/api/search/text?pattern=note&ignore_case=true&module=Notes.Store&context=2&"
	         "offset=1&path=%s",
	         dir);
	TH_ASSERT_INT_EQ(td_get(&w, path, &rest), 200);
	TH_ASSERT_MSG(json_equal(rest, c.json), "REST and CLI differ for search text");
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(rest, "hits")),
	                 json_integer_value(json_object_get(rest, "total")) - 1);
	json_decref(rest);
	ts_giulia_result_free(&c);

	/* preflight: the CLI and GET /api/knowledge/preflight */
	c = GIULIA("preflight", "Notes.Store", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(c.status, 0);
	snprintf(path, sizeof(path), "/api/knowledge/preflight?module=Notes.Store&path=%s", dir);
	TH_ASSERT_INT_EQ(td_get(&w, path, &rest), 200);
	TH_ASSERT_MSG(json_equal(rest, c.json), "REST and CLI differ for preflight");
	json_decref(rest);
	ts_giulia_result_free(&c);
	c = GIULIA("preflight", "Notes.add/2", "--depth", "1", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(c.status, 0);
	snprintf(path, sizeof(path),
	         "/api/knowledge/preflight?module=Notes&function=add/2&depth=1&path=%s", dir);
	TH_ASSERT_INT_EQ(td_get(&w, path, &rest), 200);
	TH_ASSERT_MSG(json_equal(rest, c.json), "REST and CLI differ for a function's preflight");
	json_decref(rest);
	ts_giulia_result_free(&c);
	snprintf(path, sizeof(path), "/api/knowledge/preflight?module=No.Such&path=%s", dir);
	TH_ASSERT_INT_EQ(td_get(&w, path, NULL), 404);

	/* bad arguments: 400 with the reason */
	snprintf(path, sizeof(path), "/api/search/text?pattern=%%28x&regex=true&path=%s", dir);
	TH_ASSERT_INT_EQ(td_get(&w, path, &rest), 400);
	TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(rest, "error")),
	                       "does not compile");
	json_decref(rest);
	snprintf(path, sizeof(path), "/api/search/text?pattern=%%28a%%29%%5C1&regex=1&path=%s",
	         dir);
	TH_ASSERT_INT_EQ(td_get(&w, path, &rest), 400);
	TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(rest, "error")),
	                       "back-references");
	json_decref(rest);
	snprintf(path, sizeof(path), "/api/search/code?path=%s", dir);
	TH_ASSERT_INT_EQ(td_get(&w, path, &rest), 400);
	TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(rest, "error")), "needs a query");
	json_decref(rest);
	snprintf(path, sizeof(path), "/api/search/code?query=x&limit=-1&path=%s", dir);
	TH_ASSERT_INT_EQ(td_get(&w, path, &rest), 400);
	json_decref(rest);
}

static void cli_prints_readable_hits_and_refuses_bad_input(void)
{
	const char *dir = notes_ready();
	struct ts_giulia_result r = GIULIA("search", "text", "Store.all", "--project", dir);
	TH_ASSERT_INT_EQ(r.status, 0);
	TH_ASSERT_STR_CONTAINS(r.out, "lib/notes.ex:17:36: [Notes.by_tag/1]");
	TH_ASSERT_STR_CONTAINS(r.out, "1 hit in ");
	ts_giulia_result_free(&r);
	r = GIULIA("search", "code", "comma", "separated", "--project", dir);
	TH_ASSERT_INT_EQ(r.status, 0);
	TH_ASSERT_STR_CONTAINS(r.out, "   1.   ");
	TH_ASSERT_STR_CONTAINS(r.out, "Notes.Export.to_csv/1");
	TH_ASSERT_STR_CONTAINS(r.out, "lib/notes/export.ex:7");
	ts_giulia_result_free(&r);
	r = GIULIA("search", "code", "note", "--limit", "1", "--project", dir);
	TH_ASSERT_INT_EQ(r.status, 0);
	TH_ASSERT_STR_CONTAINS(r.out, "more with --offset 1");
	ts_giulia_result_free(&r);

	r = GIULIA("search", "text", "(x", "--regex", "--project", dir);
	TH_ASSERT_INT_EQ(r.status, 2);
	TH_ASSERT_STR_CONTAINS(r.err, "does not compile");
	ts_giulia_result_free(&r);
	r = GIULIA("search", "text", "--project", dir);
	TH_ASSERT_INT_EQ(r.status, 2);
	TH_ASSERT_STR_CONTAINS(r.err, "missing PATTERN");
	ts_giulia_result_free(&r);
	r = GIULIA("search", "code", "x", "--regex", "--project", dir);
	TH_ASSERT_INT_EQ(r.status, 2);
	TH_ASSERT_STR_CONTAINS(r.err, "unknown option --regex");
	ts_giulia_result_free(&r);
	r = GIULIA("search", "files", "x");
	TH_ASSERT_INT_EQ(r.status, 2);
	TH_ASSERT_STR_CONTAINS(r.err, "`text` or `code`");
	ts_giulia_result_free(&r);
	char missing[4200];
	snprintf(missing, sizeof(missing), "%s/nothing.db", th_tmpdir());
	r = GIULIA("search", "code", "x", "--db", missing);
	TH_ASSERT_INT_EQ(r.status, 1);
	TH_ASSERT_STR_CONTAINS(r.err, "giulia index");
	ts_giulia_result_free(&r);
	r = GIULIA("preflight", "Notes.Store", "--project", dir);
	TH_ASSERT_INT_EQ(r.status, 0);
	TH_ASSERT_STR_CONTAINS(r.out, "tests that reach it: 1");
	TH_ASSERT_STR_CONTAINS(r.out, "NotesTest (test/notes_test.exs)");
	ts_giulia_result_free(&r);
	r = GIULIA("preflight", "No.Such", "--project", dir);
	TH_ASSERT_INT_EQ(r.status, 1);
	TH_ASSERT_STR_CONTAINS(r.err, "not a module or function of the project");
	ts_giulia_result_free(&r);
	r = GIULIA("preflight", "--project", dir);
	TH_ASSERT_INT_EQ(r.status, 2);
	ts_giulia_result_free(&r);
	r = GIULIA("search", "--help");
	TH_ASSERT_INT_EQ(r.status, 0);
	TH_ASSERT_STR_CONTAINS(r.out, "search code WORDS");
	ts_giulia_result_free(&r);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(cli_and_rest_give_the_same_json),
	    TH_TEST(cli_prints_readable_hits_and_refuses_bad_input),
	    TH_END,
	};
	return th_main(argc, argv, "integration_search", tests);
}
