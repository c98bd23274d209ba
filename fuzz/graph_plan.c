/*
 * graph_plan.c - libFuzzer target for the plan and boundaries parsers
 * (src/graph/plan.c): any bytes, read as JSON, either parse as a
 * boundaries document and check a small graph (with a cycle, a test
 * module, an external module) or validate as a change plan against it
 * (with the same bytes' boundaries when they parse as both); never a crash,
 * a leak or an answer other than 0 or GI_EINVAL. The first byte picks.
 * needs:
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/error.h"
#include "base/runtime.h"
#include "graph/assist.h"
#include "graph/graph.h"

/* The library's CLI command tables call this, defined in src/cli/main.c,
 * which fuzz targets do not link. */
int cli_exit_code_for(int gi_error);
int cli_exit_code_for(int gi_error)
{
	return gi_error ? 1 : 0;
}

static struct kg_graph *small_graph(void)
{
	static const char *const names[] = {"App", "App.Repo", "App.Web", "App.Cache", ":ets"};
	struct kg_graph *g = kg_graph_new();
	int fns[4];
	for (int i = 0; i < 4; i++) {
		struct kg_module_info info = {
		    .name = names[i], .file = "lib/x.ex", .line_start = 1};
		int m = kg_graph_module_add(g, &info);
		struct kg_function f = {.name = "run",
		                        .arity = 1,
		                        .is_public = true,
		                        .defined = true,
		                        .line_start = 2,
		                        .cyclomatic = 1};
		fns[i] = kg_graph_function_add(g, m, &f);
	}
	struct kg_module_info t = {.name = "AppTest", .file = "test/app_test.exs", .test = true};
	int tm = kg_graph_module_add(g, &t);
	struct kg_function tf = {.name = "test", .arity = 0, .is_public = true, .defined = true};
	int tfn = kg_graph_function_add(g, tm, &tf);
	kg_graph_call_add(g, fns[2], FACTS_CALL_REMOTE, "App.Repo", "run", 1, 1);
	kg_graph_call_add(g, fns[1], FACTS_CALL_REMOTE, "App.Cache", "run", 1, 1);
	kg_graph_call_add(g, fns[3], FACTS_CALL_REMOTE, "App.Repo", "run", 1, 1);
	kg_graph_call_add(g, fns[3], FACTS_CALL_REMOTE, ":ets", "lookup", 2, 1);
	kg_graph_call_add(g, fns[0], FACTS_CALL_REMOTE, "App.Web", "run", 1, 1);
	kg_graph_call_add(g, tfn, FACTS_CALL_REMOTE, "App", "run", 1, 1);
	kg_graph_finish(g);
	return g;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gi_runtime_init();
	static struct kg_graph *g;
	if (!g)
		g = small_graph();
	if (size < 1 || size > KG_PLAN_TEXT_MAX)
		return 0;
	json_error_t e;
	json_t *doc = json_loadb((const char *)data + 1, size - 1, JSON_REJECT_DUPLICATES, &e);
	if (!doc)
		return 0;
	struct kg_boundaries *b = NULL;
	int rc = kg_boundaries_parse(doc, &b);
	if (rc != 0 && rc != GI_EINVAL)
		__builtin_trap();
	json_t *out = json_object();
	if (data[0] & 1) {
		if (b && kg_check(g, b, out) != 0)
			__builtin_trap();
	} else {
		rc = kg_plan_validate(g, doc, b, 1 + (data[0] >> 5), out);
		if (rc != 0 && rc != GI_EINVAL)
			__builtin_trap();
	}
	json_decref(out);
	kg_boundaries_free(b);
	json_decref(doc);
	return 0;
}
