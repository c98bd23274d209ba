/*
 * review_diff.c - libFuzzer target for the review's diff parser
 * (src/graph/review.c, kg_diff_parse): any bytes parse into a bounded list
 * of files and hunks, and mapping that list onto a small graph (kg_review)
 * never fails, whatever line numbers, counts and paths the input claims.
 * needs:
 */
#include <stddef.h>
#include <stdint.h>

#include "base/runtime.h"
#include "graph/graph.h"
#include "graph/review.h"

/* The library's CLI command tables call this, defined in src/cli/main.c,
 * which fuzz targets do not link. */
int cli_exit_code_for(int gi_error);
int cli_exit_code_for(int gi_error)
{
	return gi_error ? 1 : 0;
}

/* Two modules in one file, one calling the other, and a test module. */
static struct kg_graph *small_graph(void)
{
	struct kg_graph *g = kg_graph_new();
	struct kg_module_info a = {
	    .name = "App.Repo", .file = "lib/app/repo.ex", .line_start = 1, .line_end = 20};
	struct kg_module_info b = {
	    .name = "App.User", .file = "lib/app/repo.ex", .line_start = 22, .line_end = 30};
	struct kg_module_info t = {.name = "App.RepoTest",
	                           .file = "test/repo_test.exs",
	                           .line_start = 1,
	                           .line_end = 9,
	                           .test = true};
	int ma = kg_graph_module_add(g, &a), mb = kg_graph_module_add(g, &b);
	int mt = kg_graph_module_add(g, &t);
	struct kg_function get = {.name = "get",
	                          .arity = 1,
	                          .is_public = true,
	                          .defined = true,
	                          .line_start = 4,
	                          .line_end = 9,
	                          .cyclomatic = 2};
	struct kg_function load = {.name = "load",
	                           .arity = 1,
	                           .is_public = true,
	                           .defined = true,
	                           .line_start = 23,
	                           .line_end = 25,
	                           .cyclomatic = 1};
	struct kg_function test = {.name = "test get",
	                           .arity = 1,
	                           .defined = true,
	                           .line_start = 2,
	                           .line_end = 5,
	                           .cyclomatic = 1};
	kg_graph_function_add(g, ma, &get);
	int fl = kg_graph_function_add(g, mb, &load);
	int ft = kg_graph_function_add(g, mt, &test);
	kg_graph_call_add(g, fl, FACTS_CALL_REMOTE, "App.Repo", "get", 1, 1);
	kg_graph_call_add(g, ft, FACTS_CALL_REMOTE, "App.Repo", "get", 1, 1);
	kg_graph_finish(g);
	return g;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct kg_graph *g;
	gi_runtime_init();
	if (!g)
		g = small_graph();
	if (size > (1u << 20))
		return 0;
	json_t *files = NULL;
	kg_diff_parse((const char *)data, size, &files);
	struct kg_review_options opt = {.base = "HEAD", .depth = 3, .threshold = 60};
	json_t *out = json_object();
	kg_review(g, files, &opt, out);
	json_decref(out);
	json_decref(files);
	return 0;
}
