/*
 * Integration tests of the registry of static queries (graph/query_list.h)
 * against every surface that serves them, on the built binaries: a real
 * worker answers each query's route (on an indexed copy of the shop
 * fixture) with the query's own answer or reason; `giulia mcp
 * --list-tools` lists each query's tool with the registry's parameters,
 * types, bounds, choices and required list; each query's CLI command
 * exists and its help names every flag and positional of the registry;
 * docs/API.md's reference is exactly `giulia query --list --format
 * markdown`. And the other way: no MCP tool, CLI command or documented
 * route of a static query is missing from the registry.
 * needs:
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/http.h"
#include "api/worker.h"
#include "api_util.h"
#include "base/alloc.h"
#include "base/fs.h"
#include "base/str.h"
#include "giulia_cli.h"
#include "graph/query_registry.h"
#include "harness.h"
#include "support.h"

#define RUN_TIMEOUT_MS 120000
#define GIULIA(...)    ts_giulia_run((const char *const[]){__VA_ARGS__, NULL}, RUN_TIMEOUT_MS)

/* A value for a required parameter of a query on the shop fixture. */
static const char *sample_value(const struct kg_param *q)
{
	static const struct {
		const char *name, *value;
	} samples[] = {
	    {"module", "Shop.Repo"}, {"function", "start_link/1"},
	    {"from", "Shop.Cart"},   {"to", "Shop.Repo"},
	    {"pattern", "def"},      {"query", "repo"},
	    {"action", "remove"},    {"base", "HEAD"},
	};
	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++)
		if (strcmp(samples[i].name, q->name) == 0)
			return samples[i].value;
	TH_ASSERT_MSG(false, "no sample value for the required parameter %s", q->name);
	return NULL;
}

static void route_answers(const struct td_daemon *w, const struct kg_query_def *d,
                          const char *project)
{
	char path[2048], body[2048];
	json_t *r = NULL;
	int st;
	if (strcmp(d->method, "POST") == 0) {
		snprintf(body, sizeof(body), "{\"path\": \"%s\"%s}", project,
		         kg_query_param_find(d, "plan") ? ", \"plan\": {}" : "");
		st = td_post(w, d->path, body, &r);
	} else {
		int n = snprintf(path, sizeof(path), "%s?path=%s", d->path, project);
		for (const struct kg_param *q = d->params; q->name; q++)
			if (q->required)
				n += snprintf(path + n, sizeof(path) - (size_t)n, "&%s=%s", q->name,
				              sample_value(q));
		st = td_get(w, path, &r);
	}
	const char *error = json_string_value(json_object_get(r, "error"));
	/* The query's own answer: a result, or its reason (review without git
	 * is a 422, check without a boundaries file a 400), never the router's
	 * "no route", a 405, or the reason of an unknown query. */
	TH_ASSERT_MSG(st == 200 || ((st == 400 || st == 404 || st == 422) && error &&
	                            strncmp(error, d->name, strlen(d->name)) == 0 &&
	                            !strstr(error, "invalid or missing parameters")),
	              "%s %s: %d %s", d->method, d->path, st, error ? error : "");
	json_decref(r);
}

/* Every query of the registry is served at its route; a query's name under
 * the other prefix is no route (one route per query). */
static void routes_served(void)
{
	char project[1024], src[4096];
	snprintf(project, sizeof(project), "%s/shop", th_tmpdir());
	snprintf(src, sizeof(src), "%s/tests/fixtures/projects/shop", th_srcdir());
	const char *cp[] = {"cp", "-r", src, project, NULL};
	TH_ASSERT_INT_EQ(ts_run(cp, NULL, 30000, NULL, NULL), 0);
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	char body[1100];
	snprintf(body, sizeof(body), "{\"path\": \"%s\"}", project);
	TH_ASSERT_INT_EQ(td_post(&w, "/api/index/scan", body, NULL), 200);
	for (const struct kg_query_def *d = kg_query_defs; d->name; d++) {
		route_answers(&w, d, project);
		char other[256];
		snprintf(other, sizeof(other), "/api/%s/%s",
		         GI_STR_STARTS(d->path, "/api/index/") ? "knowledge" : "index", d->name);
		json_t *r = NULL;
		TH_ASSERT_INT_EQ(td_get(&w, other, &r), 404);
		TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(r, "error")), "no route");
		json_decref(r);
	}
}

/* The other way: every route of the worker under a static query's prefix
 * is a query of the registry (besides indexing). */
static void no_route_outside_registry(void)
{
	static const char *const prefixes[] = {
	    "/api/index/", "/api/knowledge/", "/api/search/", "/api/checks/",
	    "/api/review", "/api/plan/",      "/api/check",   NULL};
	for (const struct api_route *r = api_worker_routes(); r->method; r++) {
		bool query_route = false;
		for (int i = 0; prefixes[i]; i++)
			query_route |= strncmp(r->pattern, prefixes[i], strlen(prefixes[i])) == 0;
		if (!query_route || strcmp(r->pattern, "/api/index/scan") == 0)
			continue;
		TH_ASSERT_MSG(kg_query_def_by_route(r->method, r->pattern),
		              "the worker serves %s %s, a static query missing from the registry "
		              "(src/graph/query_list.h)",
		              r->method, r->pattern);
	}
}

static const char *type_name(enum kg_param_type t)
{
	return t == KG_PARAM_INTEGER ? "integer" : t == KG_PARAM_BOOLEAN ? "boolean" : "string";
}

/* The tool's input schema has exactly the registry's parameters (those not
 * for REST only) and `project`, with their types, bounds and choices. */
static void tool_matches(json_t *tool, const struct kg_query_def *d)
{
	json_t *schema = json_object_get(tool, "inputSchema");
	json_t *props = json_object_get(schema, "properties");
	json_t *required = json_object_get(schema, "required");
	size_t want = 1, nreq = 0;
	TH_ASSERT_MSG(json_object_get(props, "project"), "%s: no project", d->tool);
	for (const struct kg_param *q = d->params; q->name; q++) {
		if (q->rest_only) {
			TH_ASSERT_MSG(!json_object_get(props, q->name), "%s: %s is REST only",
			              d->tool, q->name);
			continue;
		}
		want++;
		json_t *p = json_object_get(props, q->name);
		TH_ASSERT_MSG(p, "tool %s has no parameter %s", d->tool, q->name);
		TH_ASSERT_STR_EQ(json_string_value(json_object_get(p, "type")), type_name(q->type));
		TH_ASSERT_STR_EQ(json_string_value(json_object_get(p, "description")),
		                 q->description);
		if (q->type == KG_PARAM_INTEGER) {
			TH_ASSERT_INT_EQ(json_integer_value(json_object_get(p, "minimum")), q->min);
			TH_ASSERT_INT_EQ(json_integer_value(json_object_get(p, "maximum")), q->max);
		}
		json_t *choices = json_object_get(p, "enum");
		TH_ASSERT_MSG(!choices == !q->choices, "%s.%s: choices", d->tool, q->name);
		for (size_t i = 0; choices && i < json_array_size(choices); i++) {
			const char *c = json_string_value(json_array_get(choices, i));
			TH_ASSERT_MSG(kg_query_param_choice_ok(q, c), "%s.%s: %s", d->tool, q->name,
			              c);
		}
		bool listed = false;
		for (size_t i = 0; i < json_array_size(required); i++)
			listed |=
			    strcmp(json_string_value(json_array_get(required, i)), q->name) == 0;
		TH_ASSERT_MSG(listed == q->required, "%s.%s: required", d->tool, q->name);
		nreq += q->required;
	}
	TH_ASSERT_INT_EQ(json_object_size(props), want);
	TH_ASSERT_INT_EQ(json_array_size(required), nreq);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(tool, "description")), d->description);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(tool, "title")), d->title);
}

/* Tools that read the index or the graph but are no query: indexing, and
 * the worker's list of projects. */
static bool tool_not_a_query(const char *name)
{
	return strcmp(name, "index_scan") == 0 || strcmp(name, "index_projects") == 0;
}

static void tools_listed(void)
{
	struct ts_giulia_result r = GIULIA("mcp", "--list-tools", "--format", "json");
	TH_ASSERT_INT_EQ(r.status, 0);
	json_t *tools = json_loads(r.out, 0, NULL);
	TH_ASSERT(json_is_array(tools));
	for (const struct kg_query_def *d = kg_query_defs; d->name; d++) {
		json_t *found = NULL;
		size_t i;
		json_t *t;
		json_array_foreach(tools, i, t)
		{
			if (strcmp(json_string_value(json_object_get(t, "name")), d->tool) == 0)
				found = t;
		}
		TH_ASSERT_MSG(found, "no MCP tool %s for the query %s", d->tool, d->name);
		tool_matches(found, d);
	}
	/* the other way: a tool of the index, the graph, search or review is a
	 * query of the registry */
	size_t i;
	json_t *t;
	json_array_foreach(tools, i, t)
	{
		const char *name = json_string_value(json_object_get(t, "name"));
		bool static_area = GI_STR_STARTS(name, "index_") ||
		                   GI_STR_STARTS(name, "knowledge_") ||
		                   GI_STR_STARTS(name, "search_") || GI_STR_STARTS(name, "review_");
		TH_ASSERT_MSG(!static_area || tool_not_a_query(name) || kg_query_def_by_tool(name),
		              "MCP tool %s is a static query missing from the registry "
		              "(src/graph/query_list.h)",
		              name);
	}
	json_decref(tools);
	ts_giulia_result_free(&r);
}

/* Each query's command exists and its help names every flag and positional
 * the registry gives; a command named after a query is that query's. */
static void commands_exist(void)
{
	for (const struct kg_query_def *d = kg_query_defs; d->name; d++) {
		const char *cmd = d->command ? d->command : "query";
		struct ts_giulia_result r = GIULIA("help", cmd);
		TH_ASSERT_MSG(r.status == 0, "no CLI command %s for the query %s", cmd, d->name);
		for (const struct kg_param *q = d->params; d->command && q->name; q++)
			TH_ASSERT_MSG(!q->cli || strstr(r.out, q->cli),
			              "`giulia help %s` does not name %s (the query %s's %s)", cmd,
			              q->cli, d->name, q->name);
		ts_giulia_result_free(&r);
	}
	struct ts_giulia_result r = GIULIA("help");
	TH_ASSERT_INT_EQ(r.status, 0);
	char *save = NULL;
	for (char *line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!GI_STR_STARTS(line, "  ") || line[2] == ' ')
			continue;
		char name[64];
		size_t len = strcspn(line + 2, " ");
		if (len >= sizeof(name))
			continue;
		memcpy(name, line + 2, len);
		name[len] = '\0';
		for (char *c = name; *c; c++)
			if (*c == '-')
				*c = '_';
		const struct kg_query_def *d = kg_query_def_find(name);
		TH_ASSERT_MSG(!d || (d->command && strncmp(d->command, line + 2, len) == 0),
		              "`giulia %.*s` runs the query %s, whose registry entry names no "
		              "such command",
		              (int)len, line + 2, name);
	}
	ts_giulia_result_free(&r);
}

/* docs/API.md's reference is the registry's, and every route of a static
 * query that it names is one of the registry's. */
static void docs_match_registry(void)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/docs/API.md", th_srcdir());
	char *doc = NULL;
	size_t len = 0;
	TH_ASSERT_OK(gi_fs_read_file(path, 4 << 20, &doc, &len));
	const char *begin = strstr(doc, "\n<!-- query-registry:begin -->\n");
	const char *end = strstr(doc, "\n<!-- query-registry:end -->\n");
	TH_ASSERT_MSG(begin && end && end > begin,
	              "docs/API.md has no query-registry:begin/end markers");
	begin += strlen("\n<!-- query-registry:begin -->\n");
	struct ts_giulia_result r = GIULIA("query", "--list", "--format", "markdown");
	TH_ASSERT_INT_EQ(r.status, 0);
	size_t n = (size_t)(end + 1 - begin);
	TH_ASSERT_MSG(strlen(r.out) == n && memcmp(r.out, begin, n) == 0,
	              "docs/API.md's query reference differs from the registry: run `make "
	              "api-docs`");
	ts_giulia_result_free(&r);
	static const char *const prefixes[] = {
	    "/api/index/", "/api/knowledge/", "/api/search/", "/api/checks/",
	    "/api/review", "/api/plan/",      "/api/check",   NULL};
	for (const char *c = doc; (c = strstr(c, "/api/")) != NULL; c++) {
		bool query_route = false;
		for (int i = 0; prefixes[i]; i++)
			query_route |= strncmp(c, prefixes[i], strlen(prefixes[i])) == 0;
		if (!query_route || GI_STR_STARTS(c, "/api/index/scan"))
			continue;
		size_t k = strcspn(c, " `?&)'\"|,\n");
		char route[256];
		TH_ASSERT(k < sizeof(route));
		memcpy(route, c, k);
		route[k] = '\0';
		if (strcmp(route, "/api/index/NAME") == 0 ||
		    strcmp(route, "/api/knowledge/NAME") == 0)
			continue;
		TH_ASSERT_MSG(kg_query_def_by_route("GET", route) ||
		                  kg_query_def_by_route("POST", route),
		              "docs/API.md names %s, which is no query of the registry", route);
	}
	gi_free(doc);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(docs_match_registry),
	    TH_TEST(tools_listed),
	    TH_TEST(commands_exist),
	    TH_TEST(routes_served),
	    TH_TEST(no_route_outside_registry),
	    TH_END,
	};
	return th_main(argc, argv, "integration_query_registry", tests);
}
