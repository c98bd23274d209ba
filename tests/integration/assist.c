/*
 * Integration tests of the assist commands through the real binary and a
 * real worker: `giulia briefing`, `preflight`, `impact-check`, `plan
 * validate` and `check` on copies of the fixtures give the JSON of GET
 * /api/knowledge/{briefing,preflight,impact_check} and POST
 * /api/plan/validate and /api/check; `giulia check` exits 3 on violations
 * and 0 on a clean graph (for CI). The live weight comes from a real
 * stored profile: the busy snapshot series (tests/fixtures/snapshots) is
 * pushed through the worker's ingest API for a copy of the catalog target,
 * the worker builds and stores the profile, and preflight shows its calls/s
 * and share of reductions, through REST and the CLI reading the same store.
 * needs:
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"
#include "giulia_cli.h"
#include "harness.h"
#include "json_util.h"
#include "support.h"

#define RUN_TIMEOUT_MS 120000

#define GIULIA(...) ts_giulia_run((const char *const[]){__VA_ARGS__, NULL}, RUN_TIMEOUT_MS)

/* Copies `src` (relative to the source tree) to the test directory as
 * `name`, indexes it and asks the worker `w` to scan it. */
static const char *project_ready(const char *src_rel, const char *name, struct td_daemon *w)
{
	static char dirs[2][4096];
	static int next;
	char *dir = dirs[next++ % 2];
	snprintf(dir, 4096, "%s/%s", th_tmpdir(), name);
	char src[4096];
	snprintf(src, sizeof(src), "%s/%s", th_srcdir(), src_rel);
	const char *cp[] = {"cp", "-r", src, dir, NULL};
	TH_ASSERT_INT_EQ(ts_run(cp, NULL, 30000, NULL, NULL), 0);
	struct ts_giulia_result r = GIULIA("index", dir);
	TH_ASSERT_INT_EQ(r.status, 0);
	ts_giulia_result_free(&r);
	char body[4200];
	snprintf(body, sizeof(body), "{\"path\":\"%s\"}", dir);
	TH_ASSERT_INT_EQ(td_post(w, "/api/index/scan", body, NULL), 200);
	return dir;
}

static void cli_and_rest_agree_and_check_exits_for_ci(void)
{
	struct td_daemon w = {0};
	snprintf(w.data, sizeof(w.data), "%s/worker", th_tmpdir());
	td_start(&w, "worker", NULL);
	const char *dir = project_ready("tests/fixtures/projects/ledger", "ledger", &w);
	char url[3000];

	struct ts_giulia_result c =
	    GIULIA("briefing", "--project", dir, "--data", w.data, "--json");
	TH_ASSERT_INT_EQ(c.status, 0);
	json_t *rest = NULL;
	snprintf(url, sizeof(url), "/api/knowledge/briefing?path=%s", dir);
	TH_ASSERT_INT_EQ(td_get(&w, url, &rest), 200);
	TH_ASSERT_MSG(json_equal(rest, c.json), "REST and CLI differ for briefing");
	json_decref(rest);
	ts_giulia_result_free(&c);

	c = GIULIA("impact-check", "Ledger.Entry.amount/1", "--rename", "value", "--project", dir,
	           "--json");
	TH_ASSERT_INT_EQ(c.status, 0);
	snprintf(url, sizeof(url),
	         "/api/knowledge/impact_check?path=%s&module=Ledger.Entry.amount/1&action=rename&"
	         "new_name=value",
	         dir);
	TH_ASSERT_INT_EQ(td_get(&w, url, &rest), 200);
	TH_ASSERT_MSG(json_equal(rest, c.json), "REST and CLI differ for impact_check");
	json_decref(rest);
	ts_giulia_result_free(&c);

	/* the fixture's boundaries are broken by the web layer: exit 3 */
	c = GIULIA("check", "--project", dir, "--json");
	TH_ASSERT_INT_EQ(c.status, 3);
	char body[8192];
	snprintf(body, sizeof(body), "{\"path\":\"%s\"}", dir);
	TH_ASSERT_INT_EQ(td_post(&w, "/api/check", body, &rest), 200);
	TH_ASSERT_MSG(json_equal(rest, c.json), "REST and CLI differ for check");
	json_decref(rest);
	ts_giulia_result_free(&c);
	c = GIULIA("check", "--project", dir);
	TH_ASSERT(strstr(c.out, "lib/ledger_web/controller.ex:4: error: [forbidden]") != NULL);
	ts_giulia_result_free(&c);
	/* a document it keeps: exit 0 */
	char ok_file[4200];
	snprintf(ok_file, sizeof(ok_file), "%s/ok.json", th_tmpdir());
	FILE *f = fopen(ok_file, "w");
	TH_ASSERT(f != NULL);
	fputs("{\"forbidden\":[{\"from\":\"Ledger.*\",\"to\":\"LedgerWeb.*\"}]}", f);
	fclose(f);
	c = GIULIA("check", "--project", dir, "--boundaries", ok_file);
	TH_ASSERT_INT_EQ(c.status, 0);
	ts_giulia_result_free(&c);

	/* plan validate from a file; the same body over REST */
	char plan_file[4200];
	snprintf(plan_file, sizeof(plan_file), "%s/plan.json", th_tmpdir());
	const char *plan = "{\"add_dependencies\":[{\"from\":\"Ledger.Entry\",\"to\":"
	                   "\"Ledger.Books\"}]}";
	f = fopen(plan_file, "w");
	TH_ASSERT(f != NULL);
	fputs(plan, f);
	fclose(f);
	c = GIULIA("plan", "validate", plan_file, "--project", dir, "--json");
	TH_ASSERT_INT_EQ(c.status, 3);
	snprintf(body, sizeof(body), "{\"path\":\"%s\",\"plan\":%s}", dir, plan);
	TH_ASSERT_INT_EQ(td_post(&w, "/api/plan/validate", body, &rest), 200);
	TH_ASSERT_MSG(json_equal(rest, c.json), "REST and CLI differ for plan validate");
	json_decref(rest);
	ts_giulia_result_free(&c);
	/* hostile: malformed plan, unknown module */
	f = fopen(plan_file, "w");
	TH_ASSERT(f != NULL);
	fputs("{\"add_modules\": [", f);
	fclose(f);
	c = GIULIA("plan", "validate", plan_file, "--project", dir);
	TH_ASSERT_INT_EQ(c.status, 2);
	TH_ASSERT(strstr(c.err, "is not JSON") != NULL);
	ts_giulia_result_free(&c);
	/* an enormous plan is refused before it is parsed */
	f = fopen(plan_file, "w");
	TH_ASSERT(f != NULL);
	fputs("{\"modify_modules\": [", f);
	for (int k = 0; k < 500000; k++)
		fputs("\"Ledger\",", f);
	fputs("\"Ledger\"]}", f);
	fclose(f);
	c = GIULIA("plan", "validate", plan_file, "--project", dir);
	TH_ASSERT_INT_EQ(c.status, 2);
	TH_ASSERT(strstr(c.err, "larger than 4 MiB") != NULL);
	ts_giulia_result_free(&c);
	snprintf(body, sizeof(body), "{\"path\":\"%s\",\"plan\":{\"modify_modules\":[\"Nope\"]}}",
	         dir);
	TH_ASSERT_INT_EQ(td_post(&w, "/api/plan/validate", body, &rest), 400);
	TH_ASSERT(strstr(json_string_value(json_object_get(rest, "error")), "unknown module") !=
	          NULL);
	json_decref(rest);
	/* a broken boundaries file in the project: said where and why */
	char bfile[4200];
	snprintf(bfile, sizeof(bfile), "%s/.giulia-boundaries.json", dir);
	f = fopen(bfile, "w");
	TH_ASSERT(f != NULL);
	fputs("{\"layers\": [{\"name\": \"web\",", f);
	fclose(f);
	c = GIULIA("check", "--project", dir);
	TH_ASSERT_INT_EQ(c.status, 2);
	TH_ASSERT(strstr(c.err, ".giulia-boundaries.json: not JSON") != NULL);
	ts_giulia_result_free(&c);
}

/* Pushes the busy series for project `dir`; returns the profile id. */
static long long push_busy(const struct td_daemon *w, const char *dir)
{
	json_t *snaps = ts_fixture_json("busy", "snapshots.json");
	for (size_t i = 0; i < json_array_size(snaps); i++) {
		char *body = json_dumps(json_array_get(snaps, i), JSON_COMPACT);
		TH_ASSERT_INT_EQ(td_call(w, "POST", "/api/runtime/ingest", body, NULL), 200);
		free(body);
	}
	json_decref(snaps);
	json_t *fin = ts_fixture_json("busy", "finalize.json");
	json_object_set_new(fin, "project", json_string(dir));
	char *body = json_dumps(fin, JSON_COMPACT);
	json_t *resp = NULL;
	TH_ASSERT_INT_EQ(td_call(w, "POST", "/api/runtime/ingest/finalize", body, &resp), 200);
	free(body);
	json_decref(fin);
	long long id = json_integer_value(json_object_get(resp, "profile_id"));
	json_decref(resp);
	TH_ASSERT(id > 0);
	return id;
}

static void preflight_shows_the_live_weight_of_a_stored_profile(void)
{
	struct td_daemon w = {0};
	snprintf(w.data, sizeof(w.data), "%s/worker", th_tmpdir());
	td_start(&w, "worker", NULL);
	const char *dir = project_ready("tests/fixtures/targets/catalog", "catalog", &w);
	/* before any profile: said so */
	struct ts_giulia_result c =
	    GIULIA("preflight", "Catalog.Registry", "--project", dir, "--data", w.data, "--json");
	TH_ASSERT_INT_EQ(c.status, 0);
	TH_ASSERT(json_is_null(json_object_get(json_object_get(c.json, "live"), "profile")));
	ts_giulia_result_free(&c);

	long long id = push_busy(&w, dir);
	c = GIULIA("preflight", "Catalog.Registry", "--project", dir, "--data", w.data, "--json");
	TH_ASSERT_INT_EQ(c.status, 0);
	json_t *live = json_object_get(c.json, "live");
	TH_ASSERT_INT_EQ(
	    json_integer_value(json_object_get(json_object_get(live, "profile"), "id")), id);
	TH_ASSERT(json_is_true(json_object_get(live, "traced")));
	/* the series runs Catalog.Registry at about 2000 calls/s */
	double rate = json_number_value(json_object_get(live, "calls_per_second"));
	TH_ASSERT_MSG(rate > 1000 && rate < 4000, "calls/s %f", rate);
	json_t *rest = NULL;
	char url[3000];
	snprintf(url, sizeof(url), "/api/knowledge/preflight?path=%s&module=Catalog.Registry", dir);
	TH_ASSERT_INT_EQ(td_get(&w, url, &rest), 200);
	TH_ASSERT_MSG(json_equal(json_object_get(rest, "live"), live),
	              "REST and CLI differ for the live weight");
	json_decref(rest);
	ts_giulia_result_free(&c);
	/* the text form names the profile */
	c = GIULIA("preflight", "Catalog.Registry", "--project", dir, "--data", w.data);
	TH_ASSERT(strstr(c.out, "live (profile ") != NULL);
	ts_giulia_result_free(&c);
	c = GIULIA("briefing", "--project", dir, "--data", w.data, "--json");
	TH_ASSERT_INT_EQ(
	    json_integer_value(json_object_get(json_object_get(c.json, "profile"), "id")), id);
	TH_ASSERT(json_array_size(
	              json_object_get(json_object_get(c.json, "profile"), "recommendations")) > 0);
	ts_giulia_result_free(&c);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(cli_and_rest_agree_and_check_exits_for_ci),
	    TH_TEST(preflight_shows_the_live_weight_of_a_stored_profile),
	    TH_END,
	};
	return th_main(argc, argv, "integration_assist", tests);
}
