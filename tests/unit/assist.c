/*
 * Unit tests for the assist queries (src/graph/briefing.c, impact_check.c,
 * plan.c, live.c) through kg_query() on the fixture project
 * tests/fixtures/projects/ledger, indexed into a real SQLite file: a
 * GenServer, a behaviour with two implementations, a protocol and its
 * impl, an Ecto-style schema, a defdelegate, captures, a literal MFA and
 * apply, a two-module cycle and a web layer that reaches past its API.
 * And tests/fixtures/projects/kvs: Erlang-style module names in one file,
 * :gen_server by atom, an MFA through spawn/3.
 * Expectations are worked out by reading the fixtures, with what must NOT
 * be said beside what must; hostile plans and boundaries get clear errors.
 * needs:
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "graph/assist.h"
#include "graph/query.h"
#include "harness.h"

static struct kg_db *fixture_db(const char *name)
{
	char root[4096], db_path[4096];
	snprintf(root, sizeof(root), "%s/tests/fixtures/projects/%s", th_srcdir(), name);
	snprintf(db_path, sizeof(db_path), "%s/%s.db", th_tmpdir(), name);
	json_t *summary = NULL;
	struct kg_index_options opt = {0};
	opt.jobs = 1;
	TH_ASSERT_OK(kg_index_project(root, db_path, &opt, &summary));
	json_decref(summary);
	struct kg_db *db = NULL;
	TH_ASSERT_OK(kg_db_open(db_path, false, &db));
	return db;
}

static struct kg_db *ledger_db(void)
{
	return fixture_db("ledger");
}

static json_t *run(struct kg_db *db, const char *name, const char *module, const char *args,
                   int *rc)
{
	json_error_t e;
	json_t *a = args ? json_loads(args, 0, &e) : json_object();
	TH_ASSERT_MSG(a != NULL, "bad test arguments %s", args);
	struct kg_query_params p = {0};
	p.module = module;
	p.args = a;
	json_t *out = NULL;
	int r = kg_query(db, name, &p, &out);
	json_decref(a);
	if (rc)
		*rc = r;
	else
		TH_ASSERT_MSG(r == 0, "%s %s failed: %d (%s)", name, module ? module : "-", r,
		              kg_query_error_message() ? kg_query_error_message() : "-");
	return out;
}

/* Whether array `list` has an element whose `key` is `value` (or, with
 * key NULL, a string element equal to value). */
static bool has(const json_t *list, const char *key, const char *value)
{
	size_t i;
	json_t *v;
	json_array_foreach(list, i, v)
	{
		const char *s = json_string_value(key ? json_object_get(v, key) : v);
		if (s && strcmp(s, value) == 0)
			return true;
	}
	return false;
}

static json_t *path(json_t *o, const char *a, const char *b)
{
	json_t *x = json_object_get(o, a);
	return b ? json_object_get(x, b) : x;
}

static void briefing_says_what_the_project_is(void)
{
	struct kg_db *db = ledger_db();
	json_t *r = run(db, "briefing", NULL, NULL, NULL);
	TH_ASSERT_INT_EQ(json_integer_value(path(r, "size", "modules")), 11);
	TH_ASSERT_INT_EQ(json_integer_value(path(r, "size", "test_modules")), 1);
	TH_ASSERT_INT_EQ(json_integer_value(path(r, "cycles", "count")), 1);
	json_t *cycle = json_object_get(json_array_get(path(r, "cycles", "cycles"), 0), "modules");
	TH_ASSERT(has(cycle, NULL, "Ledger.Audit") && has(cycle, NULL, "Ledger.Report"));
	json_t *conv = json_object_get(r, "conventions");
	TH_ASSERT(has(json_object_get(conv, "otp_processes"), "module", "Ledger.Books"));
	/* a behaviour that is not an OTP process is not one */
	TH_ASSERT(!has(json_object_get(conv, "otp_processes"), "module", "Ledger.Store"));
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(conv, "otp_processes")), 1);
	TH_ASSERT(has(json_object_get(conv, "ecto_schemas"), "module", "Ledger.Entry"));
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(conv, "ecto_schemas")), 1);
	json_t *behaviours = json_object_get(conv, "behaviours");
	TH_ASSERT(has(behaviours, "behaviour", "Ledger.Backend"));
	TH_ASSERT_INT_EQ(
	    json_integer_value(json_object_get(json_array_get(behaviours, 0), "count")), 2);
	/* the protocol is counted as one, not as a behaviour */
	TH_ASSERT(!has(behaviours, "behaviour", "Ledger.Printable"));
	TH_ASSERT_INT_EQ(json_integer_value(path(conv, "protocols", "defined")), 1);
	TH_ASSERT_INT_EQ(json_integer_value(path(conv, "protocols", "impls")), 1);
	TH_ASSERT(has(json_object_get(r, "hubs"), "module", "Ledger.Entry"));
	TH_ASSERT(!has(json_object_get(r, "hubs"), "module", "LedgerWeb.Controller"));
	TH_ASSERT(json_is_null(path(r, "profile", "id")));
	TH_ASSERT(strstr(json_string_value(path(r, "profile", "note")), "no profile") != NULL);
	json_decref(r);
	kg_db_close(db);
}

static json_t *site_of(json_t *r, const char *file)
{
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(r, "sites"), i, v)
	{
		if (strcmp(json_string_value(json_object_get(v, "file")), file) == 0)
			return v;
	}
	return NULL;
}

static void impact_check_lists_every_site(void)
{
	struct kg_db *db = ledger_db();
	/* captures and a remote call, each with its line */
	json_t *r = run(db, "impact_check", "Ledger.Entry.amount/1",
	                "{\"action\":\"rename\","
	                "\"new_name\":\"value\"}",
	                NULL);
	TH_ASSERT_INT_EQ(json_integer_value(path(r, "summary", "sites")), 3);
	json_t *s = site_of(r, "lib/ledger/books.ex");
	TH_ASSERT(s != NULL);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(s, "line")), 12);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(s, "kind")), "capture");
	TH_ASSERT_INT_EQ(
	    json_integer_value(json_object_get(site_of(r, "lib/ledger_web/controller.ex"), "line")),
	    6);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(r, "verdict")), "breaking");
	TH_ASSERT(json_is_null(json_object_get(r, "clash")));
	json_decref(r);

	/* a callback implementation: the contract is named */
	r = run(db, "impact_check", "Ledger.Store.fetch/1",
	        "{\"action\":\"arity\",\"new_arity\":2}", NULL);
	TH_ASSERT(has(json_object_get(r, "implements"), "behaviour", "Ledger.Backend"));
	TH_ASSERT_INT_EQ(json_integer_value(path(r, "summary", "sites")), 2);
	/* the other backend's fetch/1 is a different function: not a site */
	TH_ASSERT(site_of(r, "lib/ledger/memory_store.ex") == NULL);
	json_decref(r);

	/* a literal MFA and an apply are sites; a defdelegate points here */
	r = run(db, "impact_check", "Ledger.Audit.record/1", "{\"action\":\"remove\"}", NULL);
	TH_ASSERT_INT_EQ(
	    json_integer_value(json_object_get(path(r, "summary", "calls_by_kind"), "apply")), 1);
	TH_ASSERT(site_of(r, "lib/ledger/store.ex") != NULL);
	json_decref(r);
	r = run(db, "impact_check", "Ledger.Books.post/1", "{\"new_name\":\"put\"}", NULL);
	TH_ASSERT(has(json_object_get(r, "delegates"), "module", "Ledger"));
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(r, "action")), "rename");
	json_decref(r);

	/* a clash; a private-like local change; a module rename with refs */
	r = run(db, "impact_check", "Ledger.Report",
	        "{\"action\":\"rename\",\"new_name\":"
	        "\"Ledger.Audit\"}",
	        NULL);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(r, "verdict")), "clash");
	TH_ASSERT(site_of(r, "lib/ledger/audit.ex") != NULL);
	json_decref(r);
	r = run(db, "impact_check", "Ledger.Backend", "{\"action\":\"remove\"}", NULL);
	TH_ASSERT(has(json_object_get(r, "implementations"), "module", "Ledger.Store"));
	TH_ASSERT(has(json_object_get(r, "implementations"), "module", "Ledger.MemoryStore"));
	TH_ASSERT(!has(json_object_get(r, "implementations"), "module", "Ledger.Books"));
	json_decref(r);

	/* a @callback with no function: its implementations, and only those */
	r = run(db, "impact_check", "Ledger.Backend.fetch/1", "{\"action\":\"remove\"}", NULL);
	TH_ASSERT(json_is_true(json_object_get(r, "callback")));
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(r, "implementations")), 2);
	TH_ASSERT(has(json_object_get(r, "implementations"), "module", "Ledger.MemoryStore"));
	TH_ASSERT(!has(json_object_get(r, "implementations"), "module", "Ledger.Books"));
	json_decref(r);

	/* bad arguments say what is wrong */
	int rc = 0;
	TH_ASSERT(run(db, "impact_check", "Ledger.Report", "{\"action\":\"arity\",\"new_arity\":1}",
	              &rc) == NULL);
	TH_ASSERT_INT_EQ(rc, GI_EINVAL);
	TH_ASSERT(strstr(kg_query_error_message(), "function") != NULL);
	TH_ASSERT(run(db, "impact_check", "Ledger.Report.line/1",
	              "{\"action\":\"rename\",\"new_name\":\"Bad Name\"}", &rc) == NULL);
	TH_ASSERT_INT_EQ(rc, GI_EINVAL);
	TH_ASSERT(run(db, "impact_check", "No.Such", "{\"action\":\"remove\"}", &rc) == NULL);
	TH_ASSERT_INT_EQ(rc, GI_ENOTFOUND);
	TH_ASSERT(run(db, "impact_check", "Ledger.Report", "{}", &rc) == NULL);
	TH_ASSERT_INT_EQ(rc, GI_EINVAL);
	kg_db_close(db);
}

static void check_reports_boundary_violations(void)
{
	struct kg_db *db = ledger_db();
	/* the fixture's own .giulia-boundaries.json */
	json_t *r = run(db, "check", NULL, NULL, NULL);
	TH_ASSERT(!json_is_true(json_object_get(r, "ok")));
	size_t i;
	json_t *v;
	int layer = 0, forbidden = 0;
	json_array_foreach(json_object_get(r, "violations"), i, v)
	{
		const char *rule = json_string_value(json_object_get(v, "rule"));
		const char *to = json_string_value(json_object_get(v, "to"));
		TH_ASSERT_STR_EQ(json_string_value(json_object_get(v, "from")),
		                 "LedgerWeb.Controller");
		/* web -> api (Ledger) is allowed, never reported */
		TH_ASSERT(strcmp(to, "Ledger") != 0);
		layer += strcmp(rule, "layer") == 0;
		forbidden += strcmp(rule, "forbidden") == 0;
		if (strcmp(rule, "forbidden") == 0) {
			TH_ASSERT_STR_EQ(to, "Ledger.Store");
			TH_ASSERT_INT_EQ(json_integer_value(path(v, "evidence", "line")), 4);
		}
	}
	TH_ASSERT_INT_EQ(forbidden, 1);
	TH_ASSERT_INT_EQ(layer, 2); /* Ledger.Store and Ledger.Entry */
	json_decref(r);

	/* Erlang-style names and cycles: a clean document passes */
	r = run(db, "check", NULL,
	        "{\"boundaries\":{\"forbidden\":[{\"from\":\"Ledger.*\",\"to\":\":gen_tcp\"}]}}",
	        NULL);
	TH_ASSERT(json_is_true(json_object_get(r, "ok")));
	json_decref(r);
	r = run(db, "check", NULL, "{\"boundaries\":{\"forbid_cycles\":true}}", NULL);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "violation_count")), 1);
	json_decref(r);
	r = run(db, "check", NULL,
	        "{\"boundaries\":{\"forbidden\":[{\"from\":\"Ledger.*\",\"to\":\":ets\"}]}}", NULL);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "violation_count")), 1);
	json_decref(r);

	/* hostile documents */
	static const char *const bad[] = {
	    "{\"boundaries\":{\"layers\":[{\"name\":\"a\",\"modules\":[\"A\"],\"may_depend_on\":"
	    "[\"b\"]},{\"name\":\"b\",\"modules\":[\"B\"],\"may_depend_on\":[\"a\"]}]}}",
	    "{\"boundaries\":{\"layers\":[{\"name\":\"a\",\"modules\":[\"A\"],\"may_depend_on\":"
	    "[\"nope\"]}]}}",
	    "{\"boundaries\":{\"layers\":[{\"name\":\"a\",\"modules\":[]}]}}",
	    "{\"boundaries\":{\"lyers\":[]}}",
	    "{\"boundaries\":[]}",
	    "{\"boundaries\":{}}",
	    "{\"boundaries\":\"{not json\"}",
	    NULL};
	const char *words[] = {"cycle",  "not a layer",      "modules", "unknown key",
	                       "object", "nothing to check", "not JSON"};
	for (int k = 0; bad[k]; k++) {
		int rc = 0;
		TH_ASSERT(run(db, "check", NULL, bad[k], &rc) == NULL);
		TH_ASSERT_INT_EQ(rc, GI_EINVAL);
		TH_ASSERT_MSG(strstr(kg_query_error_message(), words[k]) != NULL, "%s: %s", bad[k],
		              kg_query_error_message());
	}
	TH_ASSERT(kg_module_pattern_match("LedgerWeb.*", "LedgerWeb.Controller"));
	TH_ASSERT(!kg_module_pattern_match("LedgerWeb.*", "LedgerWeb"));
	TH_ASSERT(!kg_module_pattern_match("Ledger", "Ledger.Store"));
	kg_db_close(db);
}

static void plan_validate_finds_cycles_and_layers(void)
{
	struct kg_db *db = ledger_db();
	json_t *r = run(db, "plan_validate", NULL,
	                "{\"plan\":{\"add_dependencies\":[{\"from\":\"Ledger.Entry\",\"to\":"
	                "\"Ledger.Books\"}],\"modify_modules\":[\"Ledger.Entry\"]}}",
	                NULL);
	TH_ASSERT(!json_is_true(json_object_get(r, "ok")));
	json_t *v0 = json_array_get(json_object_get(r, "violations"), 0);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(v0, "rule")), "cycle");
	TH_ASSERT(has(json_object_get(v0, "path"), NULL, "Ledger.Books"));
	/* the cycle is the error; the same edge is not also a layer warning */
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "warnings")), 0);
	TH_ASSERT(has(json_object_get(r, "hubs_touched"), NULL, "Ledger.Entry"));
	TH_ASSERT(json_integer_value(path(r, "blast_radius", "count")) > 0);
	json_decref(r);

	/* an added module that the web may use through a new dependency:
	 * the boundaries apply to it; a harmless plan is ok */
	r = run(db, "plan_validate", NULL,
	        "{\"plan\":{\"add_modules\":[{\"name\":\"LedgerWeb.Api\",\"depends_on\":"
	        "[\"Ledger.Store\"]}]}}",
	        NULL);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "errors")), 2);
	json_decref(r);
	r = run(db, "plan_validate", NULL,
	        "{\"plan\":{\"add_dependencies\":[{\"from\":\"Ledger.Books\",\"to\":"
	        "\"Ledger.Entry\"}]}}",
	        NULL);
	TH_ASSERT(json_is_true(json_object_get(r, "ok")));
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(r, "verdict")), "ok");
	json_decref(r);

	/* upwards in the computed layers, no cycle: a warning, still ok */
	r = run(db, "plan_validate", NULL,
	        "{\"plan\":{\"add_dependencies\":[{\"from\":\"Ledger.Audit\",\"to\":"
	        "\"Ledger.Store\"}]},\"boundaries\":{\"forbid_cycles\":true}}",
	        NULL);
	TH_ASSERT(json_is_true(json_object_get(r, "ok")));
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(r, "verdict")), "warnings");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(
	                     json_array_get(json_object_get(r, "violations"), 0), "rule")),
	                 "layer_order");
	json_decref(r);

	/* a move: its callers now depend on the destination */
	r = run(db, "plan_validate", NULL,
	        "{\"plan\":{\"move_functions\":[{\"function\":\"Ledger.Report.line/1\",\"to\":"
	        "\"Ledger.Store\"}]}}",
	        NULL);
	TH_ASSERT(has(json_object_get(r, "touched"), "module", "Ledger.Store"));
	bool audit_to_store = false;
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(r, "new_dependencies"), i, v)
	{
		audit_to_store |=
		    strcmp(json_string_value(json_object_get(v, "from")), "Ledger.Audit") == 0 &&
		    strcmp(json_string_value(json_object_get(v, "to")), "Ledger.Store") == 0;
	}
	TH_ASSERT(audit_to_store);
	json_decref(r);

	static const char *const bad[] = {
	    "{\"plan\":{\"modify_modules\":[\"No.Such\"]}}",
	    "{\"plan\":{\"add_dependencies\":[{\"from\":\"Ledger\"}]}}",
	    "{\"plan\":{\"move_functions\":[{\"function\":\"Ledger.nope/9\",\"to\":\"Ledger\"}]}}",
	    "{\"plan\":{\"refactor\":true}}",
	    "{\"plan\":[1,2]}",
	    "{\"plan\":\"{\\\"add_modules\\\": [\"}",
	    "{}",
	    NULL};
	const char *words[] = {"unknown module", "{from, to}", "not a function", "unknown key",
	                       "object",         "not JSON",   "needs a plan"};
	for (int k = 0; bad[k]; k++) {
		int rc = 0;
		TH_ASSERT(run(db, "plan_validate", NULL, bad[k], &rc) == NULL);
		TH_ASSERT_INT_EQ(rc, GI_EINVAL);
		TH_ASSERT_MSG(strstr(kg_query_error_message(), words[k]) != NULL, "%s: %s", bad[k],
		              kg_query_error_message());
	}
	/* an enormous list is refused, not walked */
	json_t *big = json_array();
	for (int k = 0; k < KG_PLAN_ITEMS_MAX + 1; k++)
		json_array_append_new(big, json_string("Ledger"));
	json_t *args = json_pack("{s:{s:o}}", "plan", "modify_modules", big);
	struct kg_query_params p = {0};
	p.args = args;
	json_t *out = NULL;
	TH_ASSERT_INT_EQ(kg_query(db, "plan_validate", &p, &out), GI_EINVAL);
	TH_ASSERT(strstr(kg_query_error_message(), "entries") != NULL);
	json_decref(args);
	kg_db_close(db);
}

static void live_weight_from_a_profile(void)
{
	struct kg_db *db = ledger_db();
	/* no profile */
	struct kg_query_params p = {0};
	p.module = "Ledger.Store";
	json_t *r = NULL;
	TH_ASSERT_OK(kg_query(db, "preflight", &p, &r));
	TH_ASSERT(json_is_null(path(r, "live", "profile")));
	json_decref(r);
	/* a profile row as the store gives it (its shape: docs/PROFILE.md) */
	json_error_t e;
	json_t *row = json_loads(
	    "{\"id\":7,\"node\":\"ledger@127.0.0.1\",\"created_ms\":1,\"profile\":{"
	    "\"session\":{\"traced_modules\":[\"Ledger.Store\"],\"duration_ms\":10000},"
	    "\"hot_modules_basis\":\"executing\","
	    "\"hot_modules\":[{\"module\":\"Ledger.Store\",\"reductions_share\":0.25,\"samples\":"
	    "40}],"
	    "\"hot_functions\":[{\"module\":\"Ledger.Store\",\"function\":\"fetch\",\"arity\":1,"
	    "\"reductions_share\":0.2,\"samples\":30}],"
	    "\"trace_hotspots\":[{\"module\":\"Ledger.Store\",\"function\":\"fetch\",\"arity\":1,"
	    "\"calls\":5000,\"calls_per_second\":500}],"
	    "\"workload\":[{\"module\":\"Ledger.Store\",\"calls\":6000,\"calls_per_second\":600}],"
	    "\"recommendations\":[{\"rank\":1,\"id\":\"db-backed-lookup\",\"severity\":\"high\","
	    "\"subject\":\"Ledger.Store\",\"finding\":\"read-mostly\"}]}}",
	    0, &e);
	TH_ASSERT(row != NULL);
	p.profile = row;
	TH_ASSERT_OK(kg_query(db, "preflight", &p, &r));
	TH_ASSERT_INT_EQ(json_integer_value(path(r, "live", "calls")), 6000);
	TH_ASSERT(json_real_value(path(r, "live", "reductions_share")) == 0.25);
	TH_ASSERT(json_is_true(path(r, "live", "traced")));
	json_decref(r);
	p.module = "Ledger.Store.insert/1"; /* traced, never called */
	TH_ASSERT_OK(kg_query(db, "preflight", &p, &r));
	TH_ASSERT_INT_EQ(json_integer_value(path(r, "live", "calls")), 0);
	TH_ASSERT(json_is_null(path(r, "live", "reductions_share")));
	json_decref(r);
	p.module = "Ledger.Report"; /* not traced, not hot: no numbers invented */
	TH_ASSERT_OK(kg_query(db, "preflight", &p, &r));
	TH_ASSERT(json_is_null(path(r, "live", "calls")));
	TH_ASSERT(!json_is_true(path(r, "live", "hot")));
	TH_ASSERT(strstr(json_string_value(path(r, "live", "note")), "not traced") != NULL);
	json_decref(r);
	p.module = NULL;
	TH_ASSERT_OK(kg_query(db, "briefing", &p, &r));
	TH_ASSERT_INT_EQ(json_integer_value(path(r, "profile", "id")), 7);
	TH_ASSERT(has(path(r, "profile", "recommendations"), "id", "db-backed-lookup"));
	json_decref(r);
	json_decref(row);
	kg_db_close(db);
}

/* Erlang-style modules, all in one file, an OTP behaviour named as an atom,
 * an MFA through spawn/3: the same queries, nothing tuned to the ledger. */
static void erlang_style_names_and_one_file(void)
{
	struct kg_db *db = fixture_db("kvs");
	json_t *r = run(db, "briefing", NULL, NULL, NULL);
	json_t *otp = path(r, "conventions", "otp_processes");
	TH_ASSERT_INT_EQ(json_array_size(otp), 1);
	TH_ASSERT(has(otp, "module", ":kvs_server"));
	TH_ASSERT_INT_EQ(json_array_size(path(r, "conventions", "ecto_schemas")), 0);
	TH_ASSERT_INT_EQ(json_integer_value(path(r, "cycles", "count")), 0);
	json_decref(r);

	r = run(db, "impact_check", ":kvs_table.new/0", "{\"action\":\"remove\"}", NULL);
	TH_ASSERT_INT_EQ(json_integer_value(path(r, "summary", "sites")), 2);
	TH_ASSERT_INT_EQ(
	    json_integer_value(json_object_get(path(r, "summary", "calls_by_kind"), "mfa")), 1);
	json_decref(r);
	/* same name, other module: :ets.new is not :kvs_table.new */
	r = run(db, "impact_check", ":kvs_table.get/2",
	        "{\"action\":\"rename\",\"new_name\":"
	        "\"new\"}",
	        NULL);
	TH_ASSERT_INT_EQ(json_integer_value(path(r, "summary", "sites")), 2);
	TH_ASSERT(json_is_null(json_object_get(r, "clash"))); /* new/0 is another arity */
	json_decref(r);

	r = run(db, "check", NULL,
	        "{\"boundaries\":{\"layers\":[{\"name\":\"api\",\"modules\":[\":kvs_api\"],"
	        "\"may_depend_on\":[\"server\"]},{\"name\":\"server\",\"modules\":["
	        "\":kvs_server\"],\"may_depend_on\":[\"table\"]},{\"name\":\"table\","
	        "\"modules\":[\":kvs_t*\"]}]}}",
	        NULL);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "violation_count")), 1);
	json_t *v = json_array_get(json_object_get(r, "violations"), 0);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(v, "from")), ":kvs_api");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(v, "to")), ":kvs_table");
	TH_ASSERT_INT_EQ(json_integer_value(path(v, "evidence", "line")), 16);
	json_decref(r);

	r = run(db, "plan_validate", NULL,
	        "{\"plan\":{\"add_dependencies\":[{\"from\":\":kvs_table\",\"to\":"
	        "\":kvs_api\"}]}}",
	        NULL);
	v = json_array_get(json_object_get(r, "violations"), 0);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(v, "rule")), "cycle");
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(v, "path")), 3);
	json_decref(r);
	kg_db_close(db);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(briefing_says_what_the_project_is),
	    TH_TEST(impact_check_lists_every_site),
	    TH_TEST(check_reports_boundary_violations),
	    TH_TEST(plan_validate_finds_cycles_and_layers),
	    TH_TEST(live_weight_from_a_profile),
	    TH_TEST(erlang_style_names_and_one_file),
	    TH_END,
	};
	return th_main(argc, argv, "unit_assist", tests);
}
