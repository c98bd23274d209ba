/*
 * Integration tests of `giulia index --beam DIR`: object code compiled here
 * with elixirc joins a source project's knowledge graph, source wins over
 * object code for the same module, re-indexing is incremental, and a missing
 * directory is a clear usage error.
 * needs: elixir
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "base/str.h"
#include "giulia_cli.h"
#include "harness.h"
#include "support.h"

#define GIULIA(...) ts_giulia_run((const char *const[]){__VA_ARGS__, NULL}, 300000)

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	TH_ASSERT_OK(gi_fs_mkdir_p(dir));
	TH_ASSERT_OK(gi_fs_write_file(path, text, strlen(text)));
}

static bool function_named(json_t *details, const char *name)
{
	size_t i;
	json_t *fn;
	json_array_foreach(json_object_get(details, "functions"), i, fn)
	{
		if (strcmp(json_string_value(json_object_get(fn, "name")), name) == 0)
			return true;
	}
	return false;
}

static void beam_modules_join_the_graph(void)
{
	char proj[4096], lib[4096], ebin[4096], src[4096];
	snprintf(proj, sizeof(proj), "%s/proj", th_tmpdir());
	snprintf(lib, sizeof(lib), "%s/proj/lib", th_tmpdir());
	snprintf(ebin, sizeof(ebin), "%s/rel/lib/fx-0.1.0/ebin", th_tmpdir());
	snprintf(src, sizeof(src), "%s/beams.ex", th_tmpdir());
	write_file(lib, "point.ex",
	           "defmodule Fx.Point do\n  defstruct [:x]\n  def from_source, do: 1\nend\n");
	write_file(th_tmpdir(), "beams.ex",
	           "defmodule Fx.Point do\n  defstruct [:x]\n  def from_beam, do: 2\nend\n"
	           "defmodule Fx.User do\n  use GenServer\n"
	           "  def run(p), do: {Fx.Point.from_source(), %Fx.Point{x: p}}\n"
	           "  def init(a), do: {:ok, a}\nend\n");
	TH_ASSERT_OK(gi_fs_mkdir_p(ebin));
	const char *elixirc[] = {"elixirc", "-o", ebin, src, NULL};
	char *err = NULL;
	TH_ASSERT_MSG(ts_run(elixirc, NULL, 300000, NULL, &err) == 0, "elixirc: %s",
	              err ? err : "");
	free(err);

	char release_lib[4096];
	snprintf(release_lib, sizeof(release_lib), "%s/rel/lib", th_tmpdir());
	struct ts_giulia_result r = GIULIA("index", proj, "--beam", release_lib, "--json");
	TH_ASSERT_MSG(r.status == 0 && r.json, "index: %s %s", r.out, r.err);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r.json, "parsed")), 3);
	ts_giulia_result_free(&r);

	r = GIULIA("query", "module_details", "Fx.User", "--project", proj);
	TH_ASSERT_MSG(r.status == 0 && r.json, "module_details: %s %s", r.out, r.err);
	TH_ASSERT(gi_str_ends_with(json_string_value(json_object_get(r.json, "file")),
	                           "/Elixir.Fx.User.beam"));
	TH_ASSERT(function_named(r.json, "run"));
	TH_ASSERT(function_named(r.json, "init"));
	TH_ASSERT_STR_CONTAINS(r.out, "GenServer");
	ts_giulia_result_free(&r);

	/* source wins: Fx.Point is the one of lib/point.ex */
	r = GIULIA("query", "module_details", "Fx.Point", "--project", proj);
	TH_ASSERT_MSG(r.status == 0 && r.json, "module_details: %s %s", r.out, r.err);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(r.json, "file")), "lib/point.ex");
	TH_ASSERT(function_named(r.json, "from_source"));
	TH_ASSERT(!function_named(r.json, "from_beam"));
	ts_giulia_result_free(&r);

	r = GIULIA("dependents", "Fx.Point", "--project", proj, "--json");
	TH_ASSERT_MSG(r.status == 0, "dependents: %s %s", r.out, r.err);
	TH_ASSERT_STR_CONTAINS(r.out, "Fx.User");
	ts_giulia_result_free(&r);

	/* incremental: nothing changed, nothing parsed */
	r = GIULIA("index", proj, "--beam", release_lib, "--json");
	TH_ASSERT_MSG(r.status == 0 && r.json, "index: %s %s", r.out, r.err);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r.json, "parsed")), 0);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r.json, "unchanged")), 3);
	ts_giulia_result_free(&r);
}

static void missing_beam_dir_is_a_usage_error(void)
{
	char proj[4096], missing[4096];
	snprintf(proj, sizeof(proj), "%s/proj", th_tmpdir());
	snprintf(missing, sizeof(missing), "%s/no/such/ebin", th_tmpdir());
	TH_ASSERT_OK(gi_fs_mkdir_p(proj));
	struct ts_giulia_result r = GIULIA("index", proj, "--beam", missing);
	TH_ASSERT(r.status != 0);
	TH_ASSERT_STR_CONTAINS(r.err, "is not a directory");
	ts_giulia_result_free(&r);
	r = GIULIA("index", proj, "--beam");
	TH_ASSERT(r.status != 0);
	TH_ASSERT_STR_CONTAINS(r.err, "--beam needs a directory");
	ts_giulia_result_free(&r);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(beam_modules_join_the_graph),
	    TH_TEST(missing_beam_dir_is_a_usage_error),
	    TH_END,
	};
	return th_main(argc, argv, "integration_beam_index", tests);
}
