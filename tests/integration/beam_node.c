/*
 * Integration tests of `giulia index --node NODE --apps ...`: object code
 * pulled from a real Elixir node over the observer's connection joins the
 * graph, matches what the same .beam files give when read from disk, and
 * re-indexing is incremental; wrong cookies and unknown applications are
 * clear errors.
 * needs: erlang-base
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "giulia_cli.h"
#include "harness.h"
#include "source/beam.h"
#include "support.h"

#define GIULIA(...) ts_giulia_run((const char *const[]){__VA_ARGS__, NULL}, 300000)

static void node_code_joins_the_graph(void)
{
	struct ts_beam n;
	char proj[4096];
	ts_beam_start(&n, TS_BEAM_ELIXIR_LONG, NULL, NULL);
	snprintf(proj, sizeof(proj), "%s/proj", th_tmpdir());
	TH_ASSERT_OK(gi_fs_mkdir_p(proj));

	struct ts_giulia_result r = GIULIA("index", proj, "--node", n.name, "--cookie", n.cookie,
	                                   "--apps", "stdlib,elixir", "--json");
	TH_ASSERT_MSG(r.status == 0 && r.json, "index: %s %s", r.out, r.err);
	TH_ASSERT_INT_GE(json_integer_value(json_object_get(r.json, "modules")), 200);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(r.json, "skipped")), 0);
	TH_ASSERT(strstr(r.out, n.cookie) == NULL);
	ts_giulia_result_free(&r);

	/* the pulled :lists is the node's lists.beam, read like the file on disk */
	r = GIULIA("query", "module_details", ":lists", "--project", proj);
	TH_ASSERT_MSG(r.status == 0 && r.json, "module_details: %s %s", r.out, r.err);
	const char *file = json_string_value(json_object_get(r.json, "file"));
	TH_ASSERT_STR_CONTAINS(file, "/.giulia/beam/");
	TH_ASSERT_STR_CONTAINS(file, "/stdlib/ebin/lists.beam");
	struct facts_file *f = NULL;
	char err[512];
	TH_ASSERT_OK(beam_read_file(file, &f, err, sizeof(err)));
	const struct facts_module *m = gi_vec_get(&f->modules, 0);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(r.json, "functions")), m->functions.len);
	facts_file_free(f);
	ts_giulia_result_free(&r);

	r = GIULIA("dependents", "Enum", "--project", proj, "--json");
	TH_ASSERT_MSG(r.status == 0, "dependents: %s %s", r.out, r.err);
	TH_ASSERT_STR_CONTAINS(r.out, "Stream");
	ts_giulia_result_free(&r);

	/* the same code again: cached files keep their mtime, nothing is parsed */
	r = GIULIA("index", proj, "--node", n.name, "--cookie", n.cookie, "--apps", "stdlib,elixir",
	           "--json");
	TH_ASSERT_MSG(r.status == 0 && r.json, "index: %s %s", r.out, r.err);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r.json, "parsed")), 0);
	ts_giulia_result_free(&r);

	r = GIULIA("index", proj, "--node", n.name, "--cookie", "not-the-cookie", "--apps",
	           "stdlib");
	TH_ASSERT(r.status != 0);
	TH_ASSERT_STR_CONTAINS(r.err, "cookie");
	TH_ASSERT(strstr(r.err, "not-the-cookie") == NULL);
	ts_giulia_result_free(&r);

	r = GIULIA("index", proj, "--node", n.name, "--cookie", n.cookie, "--apps", "no_such_app");
	TH_ASSERT(r.status != 0);
	TH_ASSERT_STR_CONTAINS(r.err, "application no_such_app: not loaded on the node");
	ts_giulia_result_free(&r);

	r = GIULIA("index", proj, "--node", n.name, "--cookie", n.cookie, "--apps", "../etc");
	TH_ASSERT(r.status != 0);
	TH_ASSERT_STR_CONTAINS(r.err, "not an application name");
	ts_giulia_result_free(&r);

	r = GIULIA("index", proj, "--node", n.name);
	TH_ASSERT(r.status != 0);
	TH_ASSERT_STR_CONTAINS(r.err, "--node needs --apps");
	ts_giulia_result_free(&r);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(node_code_joins_the_graph),
	    TH_END,
	};
	return th_main(argc, argv, "integration_beam_node", tests);
}
