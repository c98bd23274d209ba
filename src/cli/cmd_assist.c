/*
 * cmd_assist.c - the commands an assistant runs before it edits (see cli.h
 * and docs/CLI.md "Search"): `giulia search text PATTERN` and `giulia
 * search code WORDS...`. Each is one kg_query ("search_text",
 * "search_code"), so `--json` prints exactly what GET /api/search/text and
 * /api/search/code and the MCP tools search_text / search_code return; the
 * default output is a grep-like listing built from the same JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/str.h"
#include "cli/cli.h"
#include "graph/query.h"

static const char search_usage[] =
    "text PATTERN [--regex] [--ignore-case] [--file GLOB] [--module MODULE] [--context N] "
    "[--limit N] [--offset N] [--project PATH] [--db FILE] [--json]\n"
    "       giulia search code WORDS... [--mode ranked|hybrid] [--kind module|function] "
    "[--module MODULE] [--tests] "
    "[--limit N] [--offset N] [--project PATH] [--db FILE] [--json]";

struct search_opts {
	const char *project, *db;
	bool json;
	json_t *args; /* the query's named arguments */
	const char *module;
	struct gi_buf words; /* positional arguments joined by spaces */
};

static int usage_fail(const char *what, const char *arg)
{
	fprintf(stderr, "giulia search: %s%s\nusage: giulia search %s\n", what, arg ? arg : "",
	        search_usage);
	return CLI_EXIT_USAGE;
}

/* Parses argv[2..] (after `search text|code`); 0, -1 for --help, or an exit code. */
static int search_opts_parse(int argc, char **argv, bool text, struct search_opts *o)
{
	static const char *const int_options[] = {"--context", "--limit", "--offset", NULL};
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
		bool is_int = false;
		for (int k = 0; int_options[k]; k++)
			is_int |= strcmp(a, int_options[k]) == 0;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			printf("usage: giulia search %s\n", search_usage);
			return -1;
		} else if (strcmp(a, "--json") == 0) {
			o->json = true;
		} else if (text && strcmp(a, "--regex") == 0) {
			json_object_set_new(o->args, "regex", json_true());
		} else if (text && (strcmp(a, "--ignore-case") == 0 || strcmp(a, "-i") == 0)) {
			json_object_set_new(o->args, "ignore_case", json_true());
		} else if (!text && strcmp(a, "--tests") == 0) {
			json_object_set_new(o->args, "tests", json_true());
		} else if (is_int && (text || strcmp(a, "--context") != 0)) {
			int64_t v;
			if (!next || gi_parse_int64(next, 0, 1000000, &v))
				return usage_fail("a non-negative integer must follow ", a);
			json_object_set_new(o->args, a + 2, json_integer(v));
			i++;
		} else if (strcmp(a, "--project") == 0 || strcmp(a, "--db") == 0 ||
		           strcmp(a, "--module") == 0 || (text && strcmp(a, "--file") == 0) ||
		           (!text && (strcmp(a, "--kind") == 0 || strcmp(a, "--mode") == 0))) {
			if (!next)
				return usage_fail("a value must follow ", a);
			if (strcmp(a, "--project") == 0)
				o->project = next;
			else if (strcmp(a, "--db") == 0)
				o->db = next;
			else if (strcmp(a, "--module") == 0)
				o->module = next;
			else
				json_object_set_new(o->args, a + 2, json_string(next));
			i++;
		} else if (a[0] == '-' && a[1] == '-') {
			return usage_fail("unknown option ", a);
		} else if (text && o->words.len) {
			return usage_fail("one pattern only (quote it): unexpected ", a);
		} else {
			if (o->words.len)
				gi_buf_puts(&o->words, " ");
			gi_buf_puts(&o->words, a);
		}
	}
	if (!o->words.len)
		return usage_fail(text ? "missing PATTERN" : "missing WORDS", NULL);
	if (!gi_utf8_valid(o->words.data, o->words.len))
		return usage_fail("the pattern is not valid UTF-8", NULL);
	json_object_set_new(o->args, text ? "pattern" : "query",
	                    json_stringn(o->words.data, o->words.len));
	return 0;
}

/* --db, else GIULIA_DB, else the project's index (as the static commands). */
static char *db_path_for(const char *cmd, const struct search_opts *o)
{
	char *path = NULL;
	return cli_db_path_resolve(cmd, o->db, o->project, &path) ? NULL : path;
}

static void print_text_hits(json_t *r)
{
	size_t i;
	json_t *h;
	json_array_foreach(json_object_get(r, "hits"), i, h)
	{
		const char *file = json_string_value(json_object_get(h, "file"));
		long long line = json_integer_value(json_object_get(h, "line"));
		json_t *before = json_object_get(h, "before"), *after = json_object_get(h, "after");
		size_t k;
		json_t *l;
		json_array_foreach(before, k, l)
		{
			printf("%s-%lld-%s\n", file,
			       line - (long long)json_array_size(before) + (long long)k,
			       json_string_value(l));
		}
		const char *mod = json_string_value(json_object_get(h, "module"));
		const char *fn = json_string_value(json_object_get(h, "function"));
		printf("%s:%lld:%lld: [%s%s%s] %s\n", file, line,
		       json_integer_value(json_object_get(h, "column")), mod ? mod : "-",
		       fn ? "." : "", fn ? fn : "", json_string_value(json_object_get(h, "text")));
		json_array_foreach(after, k, l)
		{
			printf("%s-%lld-%s\n", file, line + 1 + (long long)k, json_string_value(l));
		}
		if (json_array_size(before) || json_array_size(after))
			printf("--\n");
	}
	long long total = json_integer_value(json_object_get(r, "total"));
	json_t *next = json_object_get(r, "next_offset");
	printf("%lld hit%s in %lld file%s searched%s", total, total == 1 ? "" : "s",
	       json_integer_value(json_object_get(r, "files_searched")),
	       json_integer_value(json_object_get(r, "files_searched")) == 1 ? "" : "s",
	       json_is_true(json_object_get(r, "total_capped")) ? " (counting stopped)" : "");
	if (json_is_integer(next))
		printf("; more with --offset %lld", json_integer_value(next));
	printf("\n");
}

static void print_code_results(json_t *r)
{
	size_t i;
	json_t *h;
	long long offset = json_integer_value(json_object_get(r, "offset"));
	json_array_foreach(json_object_get(r, "results"), i, h)
	{
		const char *name = json_string_value(json_object_get(h, "name"));
		char what[600];
		if (name)
			snprintf(what, sizeof(what), "%s.%s/%lld",
			         json_string_value(json_object_get(h, "module")), name,
			         json_integer_value(json_object_get(h, "arity")));
		else
			snprintf(what, sizeof(what), "%s (module)",
			         json_string_value(json_object_get(h, "module")));
		const char *file = json_string_value(json_object_get(h, "file"));
		printf("%4lld. %7.3f  %-50s %s:%lld\n", offset + (long long)i + 1,
		       json_real_value(json_object_get(h, "score")), what, file ? file : "-",
		       json_integer_value(json_object_get(h, "line")));
	}
	json_t *next = json_object_get(r, "next_offset");
	printf("%lld result%s", json_integer_value(json_object_get(r, "total")),
	       json_integer_value(json_object_get(r, "total")) == 1 ? "" : "s");
	if (json_is_integer(next))
		printf("; more with --offset %lld", json_integer_value(next));
	printf("\n");
}

static int cmd_search(int argc, char **argv)
{
	if (argc < 2 || (strcmp(argv[1], "text") != 0 && strcmp(argv[1], "code") != 0)) {
		if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
			printf("usage: giulia search %s\n", search_usage);
			return CLI_EXIT_OK;
		}
		return usage_fail("say what to search: `text` or `code`", NULL);
	}
	bool text = strcmp(argv[1], "text") == 0;
	struct search_opts o = {0};
	o.args = json_object();
	gi_buf_init(&o.words, 0);
	int exit_code = search_opts_parse(argc, argv, text, &o);
	char *db_path = NULL;
	struct kg_db *db = NULL;
	json_t *r = NULL;
	if (exit_code) {
		exit_code = exit_code < 0 ? CLI_EXIT_OK : exit_code;
		goto done;
	}
	db_path = db_path_for("search", &o);
	if (!db_path) {
		exit_code = CLI_EXIT_FAILURE;
		goto done;
	}
	struct kg_query_params p = {0};
	p.module = o.module;
	p.args = o.args;
	int rc = kg_db_open(db_path, false, &db);
	if (!rc)
		rc = kg_query(db, text ? "search_text" : "search_code", &p, &r);
	if (rc == GI_EINVAL) {
		const char *why = kg_query_error_message();
		exit_code = usage_fail(why ? why : "invalid arguments", NULL);
		goto done;
	}
	if (rc == GI_ENOENT) {
		fprintf(stderr,
		        "giulia search: no index database at %s; run `giulia index PATH` first "
		        "(or pass --project/--db)\n",
		        db_path);
		exit_code = cli_exit_code_for(rc);
		goto done;
	}
	if (rc) {
		fprintf(stderr, "giulia search: %s: %s\n", db_path, gi_strerror(rc));
		exit_code = cli_exit_code_for(rc);
		goto done;
	}
	if (o.json) {
		char *s =
		    json_dumps(r, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
		if (s)
			puts(s);
		free(s);
	} else if (text) {
		print_text_hits(r);
	} else {
		print_code_results(r);
	}
	exit_code = CLI_EXIT_OK;
done:
	json_decref(r);
	kg_db_close(db);
	gi_free(db_path);
	gi_buf_destroy(&o.words);
	json_decref(o.args);
	return exit_code;
}

/* ---- giulia preflight ---------------------------------------------------- */

static const char preflight_usage[] =
    "MODULE|MOD.fun/arity [--depth N] [--project PATH] [--db FILE] [--json]";

static void print_preflight(json_t *r)
{
	const char *fn = json_string_value(json_object_get(r, "function"));
	const char *file = json_string_value(json_object_get(r, "file"));
	json_t *metrics = json_object_get(r, "metrics");
	printf("preflight %s%s%s (%s)  risk %s\n", json_string_value(json_object_get(r, "module")),
	       fn ? "." : "", fn ? fn : "", file ? file : "-",
	       json_string_value(json_object_get(r, "risk")));
	printf("  zone %s  heat %.1f  change risk %.1f  complexity %lld (max %lld)  hub %s\n",
	       json_string_value(json_object_get(metrics, "zone")),
	       json_real_value(json_object_get(metrics, "heat")),
	       json_real_value(json_object_get(metrics, "change_risk")),
	       json_integer_value(json_object_get(metrics, "complexity_total")),
	       json_integer_value(json_object_get(metrics, "complexity_max")),
	       json_is_true(json_object_get(metrics, "hub")) ? "yes" : "no");
	size_t i;
	json_t *v;
	if (fn) {
		printf("  callers within %lld hops: %lld\n",
		       json_integer_value(json_object_get(r, "depth")),
		       json_integer_value(json_object_get(r, "caller_count")));
		json_array_foreach(json_object_get(r, "callers"), i, v)
		{
			if (i == 20)
				break;
			printf("    [%lld] %s.%s/%lld\n",
			       json_integer_value(json_object_get(v, "depth")),
			       json_string_value(json_object_get(v, "module")),
			       json_string_value(json_object_get(v, "name")),
			       json_integer_value(json_object_get(v, "arity")));
		}
	} else {
		printf(
		    "  public API: %zu functions; dependents: %zu direct, %lld within %lld hops\n",
		    json_array_size(json_object_get(r, "public_api")),
		    json_array_size(json_object_get(r, "dependents")),
		    json_integer_value(json_object_get(r, "blast_count")),
		    json_integer_value(json_object_get(r, "depth")));
		json_array_foreach(json_object_get(r, "dependents"), i, v)
		{
			char *kinds = json_dumps(json_object_get(v, "kinds"), JSON_COMPACT);
			printf("    %s %s\n", json_string_value(json_object_get(v, "module")),
			       kinds ? kinds : "");
			free(kinds);
		}
	}
	printf("  tests that reach it: %zu\n", json_array_size(json_object_get(r, "tests")));
	json_array_foreach(json_object_get(r, "tests"), i, v)
	{
		const char *tf = json_string_value(json_object_get(v, "file"));
		printf("    %s (%s)\n", json_string_value(json_object_get(v, "module")),
		       tf ? tf : "-");
	}
	json_array_foreach(json_object_get(r, "risk_factors"), i, v)
	{
		printf("  risk: %s: %s\n", json_string_value(json_object_get(v, "factor")),
		       json_string_value(json_object_get(v, "why")));
	}
}

static int cmd_preflight(int argc, char **argv)
{
	struct search_opts o = {0};
	const char *target = NULL;
	int depth = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			printf("usage: giulia preflight %s\n", preflight_usage);
			return CLI_EXIT_OK;
		} else if (strcmp(a, "--json") == 0) {
			o.json = true;
		} else if (strcmp(a, "--depth") == 0 || strcmp(a, "--project") == 0 ||
		           strcmp(a, "--db") == 0) {
			int64_t v = 0;
			if (!next ||
			    (a[2] == 'd' && a[3] == 'e' && gi_parse_int64(next, 1, 1000, &v))) {
				fprintf(stderr,
				        "giulia preflight: %s needs a value (--depth: 1..1000)\n",
				        a);
				return CLI_EXIT_USAGE;
			}
			if (strcmp(a, "--depth") == 0)
				depth = (int)v;
			else if (strcmp(a, "--project") == 0)
				o.project = next;
			else
				o.db = next;
			i++;
		} else if (a[0] == '-' && a[1] == '-') {
			fprintf(stderr,
			        "giulia preflight: unknown option %s\nusage: giulia preflight %s\n",
			        a, preflight_usage);
			return CLI_EXIT_USAGE;
		} else if (!target) {
			target = a;
		} else {
			fprintf(stderr,
			        "giulia preflight: one module or function only, not also %s\n", a);
			return CLI_EXIT_USAGE;
		}
	}
	if (!target) {
		fprintf(stderr, "giulia preflight: missing MODULE\nusage: giulia preflight %s\n",
		        preflight_usage);
		return CLI_EXIT_USAGE;
	}
	char *db_path = db_path_for("search", &o);
	if (!db_path)
		return CLI_EXIT_FAILURE;
	struct kg_query_params p = {0};
	p.module = target; /* "Mod.fun/2" names a function (kg_query) */
	p.depth = depth;
	struct kg_db *db = NULL;
	json_t *r = NULL;
	int rc = kg_db_open(db_path, false, &db);
	if (!rc)
		rc = kg_query(db, "preflight", &p, &r);
	int exit_code = CLI_EXIT_OK;
	if (rc == GI_ENOTFOUND) {
		fprintf(stderr,
		        "giulia preflight: %s is not a module or function of the project (see "
		        "`giulia modules`, `giulia functions MODULE`)\n",
		        target);
		exit_code = CLI_EXIT_FAILURE;
	} else if (rc == GI_ENOENT) {
		fprintf(stderr,
		        "giulia preflight: no index database at %s; run `giulia index PATH`\n",
		        db_path);
		exit_code = CLI_EXIT_FAILURE;
	} else if (rc) {
		fprintf(stderr, "giulia preflight: %s: %s\n", db_path, gi_strerror(rc));
		exit_code = cli_exit_code_for(rc);
	} else if (o.json) {
		char *s =
		    json_dumps(r, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
		if (s)
			puts(s);
		free(s);
	} else {
		print_preflight(r);
	}
	json_decref(r);
	kg_db_close(db);
	gi_free(db_path);
	return exit_code;
}

static const struct cli_option search_options[] = {
    {"--regex", "text: PATTERN is a POSIX extended regular expression", "a literal string"},
    {"--ignore-case, -i", "text: match regardless of case", NULL},
    {"--file GLOB", "text: only the files whose path matches GLOB", NULL},
    {"--context N", "text: N lines before and after each hit", "0"},
    {"--mode ranked|hybrid", "code: BM25F alone, or with the learned word vectors", "ranked"},
    {"--kind module|function", "code: only modules or only functions", "both"},
    {"--tests", "code: include test modules", NULL},
    {"--module MODULE", "only hits in MODULE", NULL},
    {"--limit N", "at most N hits", "20 (code), 100 (text)"},
    {"--offset N", "skip the first N hits (paging)", "0"},
    {NULL, NULL, NULL},
};

static const struct cli_help search_help = {
    "search text finds PATTERN in the indexed files, each hit with its module, function and "
    "line; search code ranks modules and functions for WORDS by their names, docs, specs, "
    "struct fields and the names they call (docs/SEARCH.md).",
    search_options, cli_static_options, 0,
    "giulia search text 'Repo.get' --context 2\ngiulia search code split a string on a pattern"};

static const struct cli_option preflight_options[] = {
    {"--depth N", "how many steps of dependents the blast radius follows", "3"},
    {NULL, NULL, NULL},
};

static const struct cli_help preflight_help = {
    "Before editing a module or function: its role and public API, its dependents with the "
    "kinds of dependency, the blast radius, the test modules that reach it (the tests to "
    "run) and the risk factors, each with its number and reason.",
    preflight_options, cli_static_options, 0,
    "giulia preflight Shop.Cart\ngiulia preflight Shop.Cart.add/2 --json"};

const struct cli_command cli_assist_commands[] = {
    {"search", search_usage, "search the project's text (grep) or its code by meaning (ranked)",
     cmd_search, &search_help},
    {"preflight", preflight_usage,
     "before editing: dependents, blast radius, tests that reach it, risk factors", cmd_preflight,
     &preflight_help},
    {NULL, NULL, NULL, NULL, NULL},
};
