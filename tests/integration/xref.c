/*
 * `giulia xref --label L` against `mix xref graph --label L --format plain`
 * on the fixture project tests/fixtures/projects/xref, compiled by Mix in
 * the test (offline: the project has no dependencies). For each label
 * (compile, export, runtime, compile-connected) and for all of them, the
 * sets of "source -> sink (label)" lines must be equal: giulia reads the
 * source only, Mix compiles it. The fixture holds each kind of reference the
 * rules tell apart: `use` with an injected import, require and
 * @before_compile; macro calls from a module body and from a function;
 * attributes evaluated at compile time, interpolations in attributes,
 * @moduledoc and @doc (lib/shop/banner.ex); @behaviour; structs in patterns and
 * expressions; import with only:; an alias alone (no dependency); a protocol
 * and its implementation; MFA
 * tuples, modules as values, captures, defdelegate. The same compiled
 * project checks that `giulia index` fuses the object code of _build.
 * needs: elixir
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/map.h"
#include "base/str.h"
#include "giulia_cli.h"
#include "json_util.h"
#include "harness.h"
#include "support.h"

#define RUN_TIMEOUT_MS 300000

static void sh(const char *cmd, char **out)
{
	const char *argv[] = {"sh", "-c", cmd, NULL};
	char *err = NULL;
	int st = ts_run(argv, NULL, RUN_TIMEOUT_MS, out, &err);
	TH_ASSERT_MSG(st == 0, "`%s` failed: %s", cmd, err ? err : "");
	free(err);
}

/* "source -> sink (label)" lines of Mix's plain tree into `set`. */
static void mix_edges(const char *text, struct gi_map *set)
{
	char source[1024] = "", line[2200];
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char row[1024];
		snprintf(row, sizeof(row), "%.*s", (int)len, p);
		p += len + (nl ? 1 : 0);
		if (GI_STR_STARTS(row, "|-- ") || GI_STR_STARTS(row, "`-- ")) {
			char sink[1024], label[64] = "runtime";
			snprintf(sink, sizeof(sink), "%s", row + 4);
			char *paren = strstr(sink, " (");
			if (paren) {
				snprintf(label, sizeof(label), "%.*s", (int)strcspn(paren + 2, ")"),
				         paren + 2);
				*paren = '\0';
			}
			snprintf(line, sizeof(line), "%s -> %s (%s)", source, sink, label);
			gi_map_put(set, line, (void *)1);
		} else if (row[0]) {
			snprintf(source, sizeof(source), "%s", row);
		}
	}
}

/* The same lines from `giulia xref --json`. */
static void giulia_edges(json_t *r, struct gi_map *set)
{
	size_t i, k;
	json_t *f, *d;
	char line[2048];
	json_array_foreach(json_object_get(r, "files"), i, f)
	{
		json_array_foreach(json_object_get(f, "deps"), k, d)
		{
			snprintf(line, sizeof(line), "%s -> %s (%s)",
			         json_string_value(json_object_get(f, "file")),
			         json_string_value(json_object_get(d, "file")),
			         json_string_value(json_object_get(d, "label")));
			gi_map_put(set, line, (void *)1);
		}
	}
}

static void report_missing(const struct gi_map *a, const struct gi_map *b, const char *what,
                           const char *label, int *differences)
{
	for (size_t i = 0; i < a->cap; i++) {
		if (!a->slots[i].key || gi_map_get(b, a->slots[i].key))
			continue;
		fprintf(stderr, "--label %s: only %s has %s\n", label, what, a->slots[i].key);
		(*differences)++;
	}
}

/* The index of a compiled project, without --beam: the object code of the
 * project's own application under _build fills in what source cannot
 * know (docs/EXTRACTION.md, "Source + object code"): the functions a
 * comprehension over a computed list makes (Shop.Codes), and the calls the
 * compiler rewrites (Map.keys/1 is :maps.keys/1), each marked as from the
 * object code; `--no-build` leaves them out. */
static void build_fusion_check(const struct ts_giulia_result *r, const char *dir)
{
	TH_ASSERT(r->json != NULL);
	TH_ASSERT(json_is_true(json_object_get(r->json, "beam_from_build")));
	json_t *dirs = json_object_get(r->json, "beam_dirs");
	TH_ASSERT_INT_EQ((long long)json_array_size(dirs), 1);
	const char *ebin = json_string_value(json_array_get(dirs, 0));
	TH_ASSERT_MSG(ebin && strstr(ebin, "/_build/dev/lib/xref_shop/ebin"), "beam_dirs: %s",
	              ebin ? ebin : "(none)");
	struct ts_giulia_result f = ts_giulia_run(
	    (const char *const[]){"functions", "Shop.Codes", "--project", dir, "--json", NULL},
	    RUN_TIMEOUT_MS);
	TH_ASSERT_INT_EQ(f.status, 0);
	json_t *france = ts_json_find(json_object_get(f.json, "functions"), "name", "france");
	TH_ASSERT_MSG(france, "Shop.Codes.france/0 is not filled in: %s", f.out ? f.out : "");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(france, "generated_by")), "object code");
	ts_giulia_result_free(&f);
	f = ts_giulia_run((const char *const[]){"query", "function_details", "Shop.Codes.all/0",
	                                        "--project", dir, NULL},
	                  RUN_TIMEOUT_MS);
	TH_ASSERT_INT_EQ(f.status, 0);
	json_t *maps = ts_json_find(json_object_get(f.json, "callees"), "module", ":maps");
	TH_ASSERT_MSG(maps, "no call to :maps from Shop.Codes.all/0: %s", f.out ? f.out : "");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(maps, "origin")), "beam");
	TH_ASSERT(ts_json_find(json_object_get(f.json, "callees"), "module", "Map") != NULL);
	ts_giulia_result_free(&f);

	/* --no-build: source alone, in a database of its own */
	char db[4096];
	snprintf(db, sizeof(db), "%s/source-only.db", th_tmpdir());
	f = ts_giulia_run(
	    (const char *const[]){"index", dir, "--no-build", "--db", db, "--json", NULL},
	    RUN_TIMEOUT_MS);
	TH_ASSERT_INT_EQ(f.status, 0);
	TH_ASSERT(json_is_false(json_object_get(f.json, "beam_from_build")));
	TH_ASSERT_INT_EQ((long long)json_array_size(json_object_get(f.json, "beam_dirs")), 0);
	ts_giulia_result_free(&f);
	f = ts_giulia_run(
	    (const char *const[]){"functions", "Shop.Codes", "--db", db, "--json", NULL},
	    RUN_TIMEOUT_MS);
	TH_ASSERT_INT_EQ(f.status, 0);
	TH_ASSERT(ts_json_find(json_object_get(f.json, "functions"), "name", "france") == NULL);
	ts_giulia_result_free(&f);
	/* source alone: Shop.Codes's list of functions is not complete, and
	 * dead code says so; fused, it is */
	f = ts_giulia_run((const char *const[]){"dead-code", "--db", db, "--json", NULL},
	                  RUN_TIMEOUT_MS);
	TH_ASSERT_INT_EQ(f.status, 0);
	json_t *inc =
	    ts_json_find(json_object_get(f.json, "incomplete_modules"), "module", "Shop.Codes");
	TH_ASSERT_MSG(inc, "Shop.Codes not incomplete: %s", f.out ? f.out : "");
	TH_ASSERT(strstr(json_string_value(json_object_get(inc, "generated_by")), "Enum.zip"));
	ts_giulia_result_free(&f);
	f = ts_giulia_run((const char *const[]){"dead-code", "--project", dir, "--json", NULL},
	                  RUN_TIMEOUT_MS);
	TH_ASSERT_INT_EQ(f.status, 0);
	TH_ASSERT(ts_json_find(json_object_get(f.json, "incomplete_modules"), "module",
	                       "Shop.Codes") == NULL);
	ts_giulia_result_free(&f);
}

static void labels_match_mix_xref(void)
{
	char dir[4096], cmd[12000];
	snprintf(dir, sizeof(dir), "%s/xref", th_tmpdir());
	snprintf(cmd, sizeof(cmd), "cp -r '%s/tests/fixtures/projects/xref' '%s'", th_srcdir(),
	         dir);
	sh(cmd, NULL);
	snprintf(cmd, sizeof(cmd),
	         "cd '%s' && MIX_HOME='%s/mix' HEX_OFFLINE=1 MIX_ENV=dev mix compile 2>&1", dir,
	         th_tmpdir());
	sh(cmd, NULL);
	struct ts_giulia_result r =
	    ts_giulia_run((const char *const[]){"index", dir, "--json", NULL}, RUN_TIMEOUT_MS);
	TH_ASSERT_INT_EQ(r.status, 0);
	build_fusion_check(&r, dir);
	ts_giulia_result_free(&r);

	static const char *const labels[] = {"compile", "export", "runtime", "compile-connected",
	                                     NULL};
	int differences = 0, total = 0;
	for (int l = 0; l < 5; l++) {
		const char *label = labels[l]; /* NULL last: every label */
		char *out = NULL;
		snprintf(cmd, sizeof(cmd),
		         "cd '%s' && MIX_HOME='%s/mix' mix xref graph --format plain%s%s", dir,
		         th_tmpdir(), label ? " --label " : "", label ? label : "");
		sh(cmd, &out);
		struct gi_map want, got;
		gi_map_init(&want);
		gi_map_init(&got);
		mix_edges(out ? out : "", &want);
		free(out);
		r = label ? ts_giulia_run((const char *const[]){"xref", "--label", label,
		                                                "--project", dir, "--json", NULL},
		                          RUN_TIMEOUT_MS)
		          : ts_giulia_run(
		                (const char *const[]){"xref", "--project", dir, "--json", NULL},
		                RUN_TIMEOUT_MS);
		TH_ASSERT_INT_EQ(r.status, 0);
		giulia_edges(r.json, &got);
		ts_giulia_result_free(&r);
		report_missing(&want, &got, "mix", label ? label : "(all)", &differences);
		report_missing(&got, &want, "giulia", label ? label : "(all)", &differences);
		total += (int)want.len;
		gi_map_destroy(&want);
		gi_map_destroy(&got);
	}
	TH_ASSERT_INT_GE(total, 15);
	TH_ASSERT_INT_EQ(differences, 0);

	/* an unknown label is a usage error that names the labels */
	r = ts_giulia_run((const char *const[]){"xref", "--label", "bogus", "--project", dir, NULL},
	                  RUN_TIMEOUT_MS);
	TH_ASSERT_INT_EQ(r.status, 2);
	TH_ASSERT(r.err && strstr(r.err, "compile-connected"));
	ts_giulia_result_free(&r);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(labels_match_mix_xref),
	    TH_END,
	};
	return th_main(argc, argv, "integration_xref", tests);
}
