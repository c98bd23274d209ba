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
#include "graph/assist.h"
#include "graph/query.h"
#include "profile/latest.h"

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
		kg_db_refresh_on_query(db, true);
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
		cli_json_print(r);
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

/* The latest stored profile of the project `db` indexes, from the store
 * under `data_dir` (NULL: the default data directory), or NULL: the
 * queries then say "no profile". A store that cannot be read is
 * reported, not fatal. Caller decrefs. */
static json_t *cli_profile_for(struct kg_db *db, const char *data_dir)
{
	char *root = NULL;
	json_t *profile = NULL;
	if (kg_db_root(db, &root) == 0) {
		int rc = profile_latest_in_data_dir(data_dir, root, &profile);
		if (rc)
			fprintf(stderr,
			        "giulia: the profile store could not be read (%s): no live "
			        "weight\n",
			        gi_strerror(rc));
	}
	gi_free(root);
	return profile;
}

/* ---- giulia preflight ---------------------------------------------------- */

static const char preflight_usage[] =
    "MODULE|MOD.fun/arity [--depth N] [--data DIR] [--project PATH] [--db FILE] [--json]";

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
		    "  public API: %zu functions; dependents: %zu direct (and %zu test modules), "
		    "%lld within %lld hops\n",
		    json_array_size(json_object_get(r, "public_api")),
		    json_array_size(json_object_get(r, "dependents")),
		    json_array_size(json_object_get(r, "test_dependents")),
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
	json_t *live = json_object_get(r, "live");
	json_t *pid = json_object_get(json_object_get(live, "profile"), "id");
	if (json_is_integer(pid))
		printf("  live (profile %lld): %s\n", (long long)json_integer_value(pid),
		       json_string_value(json_object_get(live, "note")));
	else
		printf("  live: %s\n", json_string_value(json_object_get(live, "note")));
}

static int cmd_preflight(int argc, char **argv)
{
	struct search_opts o = {0};
	const char *target = NULL, *data_dir = NULL;
	int depth = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			printf("usage: giulia preflight %s\n", preflight_usage);
			return CLI_EXIT_OK;
		} else if (strcmp(a, "--json") == 0) {
			o.json = true;
		} else if (strcmp(a, "--data") == 0 && next) {
			data_dir = next;
			i++;
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
	json_t *profile = NULL;
	int rc = kg_db_open(db_path, false, &db);
	if (!rc)
		kg_db_refresh_on_query(db, true);
	if (!rc)
		profile = cli_profile_for(db, data_dir);
	p.profile = profile;
	if (!rc)
		rc = kg_query(db, "preflight", &p, &r);
	json_decref(profile);
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
		cli_json_print(r);
	} else {
		print_preflight(r);
	}
	json_decref(r);
	kg_db_close(db);
	gi_free(db_path);
	return exit_code;
}

/* ---- giulia briefing, impact-check, plan validate, check ------------------ */

struct assist_opts {
	const char *project, *db, *data;
	bool json;
	int depth, top;
	const char *target;
	json_t *args; /* the query's named arguments */
};

/* Runs query `name` for command `cmd`: opens the index, attaches the
 * latest profile when `profile`, reports errors in words. 0 with *out, or
 * an exit code. */
static int assist_query(const char *cmd, const struct assist_opts *o, const char *name,
                        bool profile, json_t **out)
{
	*out = NULL;
	char *db_path = NULL;
	if (cli_db_path_resolve(cmd, o->db, o->project, &db_path))
		return CLI_EXIT_FAILURE;
	struct kg_query_params p = {0};
	p.module = o->target;
	p.depth = o->depth;
	p.top = o->top;
	p.args = o->args;
	struct kg_db *db = NULL;
	json_t *prof = NULL;
	int rc = kg_db_open(db_path, false, &db);
	if (!rc)
		kg_db_refresh_on_query(db, true);
	if (!rc && profile)
		prof = cli_profile_for(db, o->data);
	p.profile = prof;
	if (!rc)
		rc = kg_query(db, name, &p, out);
	int exit_code = CLI_EXIT_OK;
	if (rc == GI_ENOTFOUND) {
		fprintf(stderr,
		        "giulia %s: %s is not a module or function of the project (see `giulia "
		        "modules`, `giulia functions MODULE`)\n",
		        cmd, o->target ? o->target : "-");
		exit_code = CLI_EXIT_FAILURE;
	} else if (rc == GI_ENOENT) {
		fprintf(stderr,
		        "giulia %s: no index database at %s; run `giulia index PATH` first\n", cmd,
		        db_path);
		exit_code = CLI_EXIT_FAILURE;
	} else if (rc == GI_EINVAL) {
		const char *why = kg_query_error_message();
		fprintf(stderr, "giulia %s: %s\n", cmd, why ? why : "invalid arguments");
		exit_code = CLI_EXIT_USAGE;
	} else if (rc) {
		fprintf(stderr, "giulia %s: %s: %s\n", cmd, db_path, gi_strerror(rc));
		exit_code = cli_exit_code_for(rc);
	}
	json_decref(prof);
	kg_db_close(db);
	gi_free(db_path);
	return exit_code;
}

/* Reads a JSON document from `path` ("-": standard input), at most
 * KG_PLAN_TEXT_MAX bytes. NULL with a message on stderr. */
static json_t *json_file_read(const char *cmd, const char *path)
{
	char *text = NULL;
	size_t len = 0;
	int rc = 0;
	if (strcmp(path, "-") == 0) {
		struct gi_buf b;
		gi_buf_init(&b, KG_PLAN_TEXT_MAX);
		char chunk[65536];
		size_t n;
		while (!rc && (n = fread(chunk, 1, sizeof(chunk), stdin)) > 0)
			rc = gi_buf_append(&b, chunk, n);
		if (!rc && ferror(stdin))
			rc = GI_EIO;
		len = b.len;
		text = rc ? NULL : gi_buf_take(&b);
		gi_buf_destroy(&b);
		if (rc)
			rc = rc == GI_EIO ? GI_EIO : GI_ETOOBIG;
	} else {
		rc = gi_fs_read_file(path, KG_PLAN_TEXT_MAX, &text, &len);
	}
	if (rc) {
		fprintf(stderr, "giulia %s: %s: %s\n", cmd, path,
		        rc == GI_ETOOBIG ? "larger than 4 MiB" : gi_strerror(rc));
		return NULL;
	}
	json_error_t e;
	json_t *doc = json_loadb(text ? text : "", len, JSON_REJECT_DUPLICATES, &e);
	gi_free(text);
	if (!doc)
		fprintf(stderr, "giulia %s: %s is not JSON: %s (line %d, column %d)\n", cmd, path,
		        e.text, e.line, e.column);
	return doc;
}

/* Parses the options of an assist command: --json, --project, --db, and
 * those of `own` (" --data --depth --top " or a part) that it takes;
 * `extra` handles the command's own others (returns how many arguments it
 * took, 0 when it does not know the option, or an exit code + 100).
 * 0, -1 for --help, or an exit code. */
typedef int (*assist_option_fn)(struct assist_opts *o, const char *a, const char *next, int *taken);

static bool option_in(const char *own, const char *a)
{
	char key[32];
	int n = snprintf(key, sizeof(key), " %s ", a);
	return n > 0 && (size_t)n < sizeof(key) && strstr(own, key) != NULL;
}

static int assist_opts_parse(const char *cmd, const char *usage, int argc, char **argv, int first,
                             struct assist_opts *o, const char *own, assist_option_fn extra,
                             int positionals)
{
	int seen = 0;
	for (int i = first; i < argc; i++) {
		const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
		int taken = 0;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			printf("usage: giulia %s %s\n", cmd, usage);
			return -1;
		} else if (strcmp(a, "--json") == 0) {
			o->json = true;
		} else if (strcmp(a, "--project") == 0 || strcmp(a, "--db") == 0 ||
		           (strcmp(a, "--data") == 0 && option_in(own, a))) {
			if (!next) {
				fprintf(stderr, "giulia %s: a value must follow %s\n", cmd, a);
				return CLI_EXIT_USAGE;
			}
			if (a[2] == 'p')
				o->project = next;
			else if (a[3] == 'b')
				o->db = next;
			else
				o->data = next;
			i++;
		} else if ((strcmp(a, "--depth") == 0 || strcmp(a, "--top") == 0) &&
		           option_in(own, a)) {
			int64_t v;
			if (!next || gi_parse_int64(next, 1, 1000, &v)) {
				fprintf(stderr, "giulia %s: %s needs a number from 1 to 1000\n",
				        cmd, a);
				return CLI_EXIT_USAGE;
			}
			if (a[2] == 'd')
				o->depth = (int)v;
			else
				o->top = (int)v;
			i++;
		} else if (extra && (taken = extra(o, a, next, &taken), taken) != 0) {
			if (taken >= 100)
				return taken - 100;
			i += taken - 1;
		} else if (a[0] == '-' && a[1] != '\0') {
			fprintf(stderr, "giulia %s: unknown option %s\nusage: giulia %s %s\n", cmd,
			        a, cmd, usage);
			return CLI_EXIT_USAGE;
		} else if (seen < positionals) {
			o->target = a;
			seen++;
		} else {
			fprintf(stderr, "giulia %s: unexpected argument %s\nusage: giulia %s %s\n",
			        cmd, a, cmd, usage);
			return CLI_EXIT_USAGE;
		}
	}
	if (positionals && !seen) {
		fprintf(stderr, "giulia %s: missing argument\nusage: giulia %s %s\n", cmd, cmd,
		        usage);
		return CLI_EXIT_USAGE;
	}
	return 0;
}

/* -- briefing -- */

static const char briefing_usage[] = "[--top N] [--data DIR] [--project PATH] [--db FILE] [--json]";

static void print_names(const char *label, json_t *list, const char *key)
{
	size_t i;
	json_t *v;
	printf("%s", label);
	json_array_foreach(list, i, v)
	{
		printf("%s%s", i ? ", " : " ", json_string_value(json_object_get(v, key)));
	}
	printf("%s\n", json_array_size(list) ? "" : " none");
}

static void print_briefing(json_t *r)
{
	json_t *size = json_object_get(r, "size");
	printf("%lld modules (%lld test modules, %lld outside), %lld functions (%lld public), "
	       "%lld internal dependencies\n",
	       json_integer_value(json_object_get(size, "modules")),
	       json_integer_value(json_object_get(size, "test_modules")),
	       json_integer_value(json_object_get(size, "external_modules")),
	       json_integer_value(json_object_get(size, "functions")),
	       json_integer_value(json_object_get(size, "public_functions")),
	       json_integer_value(json_object_get(size, "internal_edges")));
	json_t *layers = json_object_get(r, "layers");
	printf("layers: %lld\n", json_integer_value(json_object_get(layers, "count")));
	size_t i, k;
	json_t *v, *m;
	json_array_foreach(json_object_get(layers, "layers"), i, v)
	{
		printf("  %lld (%lld):", json_integer_value(json_object_get(v, "layer")),
		       json_integer_value(json_object_get(v, "count")));
		json_array_foreach(json_object_get(v, "modules"), k, m)
		{
			printf(" %s", json_string_value(m));
		}
		printf("\n");
	}
	print_names("hubs:", json_object_get(r, "hubs"), "module");
	json_t *cycles = json_object_get(r, "cycles");
	printf("cycles: %lld\n", json_integer_value(json_object_get(cycles, "count")));
	json_array_foreach(json_object_get(cycles, "cycles"), i, v)
	{
		char *mods = json_dumps(json_object_get(v, "modules"), JSON_COMPACT);
		printf("  %s\n", mods ? mods : "");
		free(mods);
	}
	printf("riskiest:\n");
	json_array_foreach(json_object_get(r, "riskiest"), i, v)
	{
		printf("  %-40s change risk %8.1f  heat %5.1f %s\n",
		       json_string_value(json_object_get(v, "module")),
		       json_real_value(json_object_get(v, "change_risk")),
		       json_real_value(json_object_get(v, "heat")),
		       json_string_value(json_object_get(v, "zone")));
	}
	json_t *conv = json_object_get(r, "conventions");
	printf("conventions:\n");
	json_array_foreach(json_object_get(conv, "behaviours"), i, v)
	{
		printf("  @behaviour %s: %lld modules\n",
		       json_string_value(json_object_get(v, "behaviour")),
		       json_integer_value(json_object_get(v, "count")));
	}
	json_t *protocols = json_object_get(conv, "protocols");
	printf("  protocols: %lld defined, %lld impls\n",
	       json_integer_value(json_object_get(protocols, "defined")),
	       json_integer_value(json_object_get(protocols, "impls")));
	print_names("  OTP processes:", json_object_get(conv, "otp_processes"), "module");
	print_names("  Ecto schemas:", json_object_get(conv, "ecto_schemas"), "module");
	printf("  structs: %lld\n", json_integer_value(json_object_get(conv, "structs")));
	json_t *prof = json_object_get(r, "profile");
	if (!json_is_integer(json_object_get(prof, "id"))) {
		printf("profile: %s\n", json_string_value(json_object_get(prof, "note")));
		return;
	}
	printf("latest profile %lld (node %s):\n",
	       (long long)json_integer_value(json_object_get(prof, "id")),
	       json_string_value(json_object_get(prof, "node")));
	json_array_foreach(json_object_get(prof, "recommendations"), i, v)
	{
		printf("  [%s] %s: %s\n", json_string_value(json_object_get(v, "severity")),
		       json_string_value(json_object_get(v, "id")),
		       json_string_value(json_object_get(v, "finding")));
	}
	json_array_foreach(json_object_get(prof, "hot_modules"), i, v)
	{
		printf("  hot: %s %.1f%%\n", json_string_value(json_object_get(v, "module")),
		       100.0 * json_number_value(json_object_get(v, "reductions_share")));
	}
}

static int cmd_briefing(int argc, char **argv)
{
	struct assist_opts o = {0};
	int rc = assist_opts_parse("briefing", briefing_usage, argc, argv, 1, &o, " --data --top ",
	                           NULL, 0);
	if (rc)
		return rc < 0 ? CLI_EXIT_OK : rc;
	json_t *r = NULL;
	rc = assist_query("briefing", &o, "briefing", true, &r);
	if (!rc) {
		if (o.json)
			cli_json_print(r);
		else
			print_briefing(r);
	}
	json_decref(r);
	return rc;
}

/* -- impact-check -- */

static const char impact_check_usage[] =
    "MODULE|MOD.fun/arity (--rename NEW | --remove | --arity N) [--project PATH] [--db FILE] "
    "[--json]";

static int impact_option(struct assist_opts *o, const char *a, const char *next, int *taken)
{
	(void)taken;
	if (strcmp(a, "--remove") == 0) {
		json_object_set_new(o->args, "action", json_string("remove"));
		return 1;
	}
	if (strcmp(a, "--rename") == 0 || strcmp(a, "--arity") == 0) {
		if (!next) {
			fprintf(stderr, "giulia impact-check: a value must follow %s\n", a);
			return 100 + CLI_EXIT_USAGE;
		}
		bool rename = a[2] == 'r';
		json_object_set_new(o->args, "action", json_string(rename ? "rename" : "arity"));
		json_object_set_new(o->args, rename ? "new_name" : "new_arity", json_string(next));
		return 2;
	}
	return 0;
}

static void print_impact(json_t *r)
{
	const char *fn = json_string_value(json_object_get(r, "function"));
	json_t *sum = json_object_get(r, "summary");
	printf("%s %s%s%s%s%s: %s\n", json_string_value(json_object_get(r, "action")),
	       json_string_value(json_object_get(r, "module")), fn ? "." : "", fn ? fn : "",
	       json_is_string(json_object_get(r, "new")) ? " -> " : "",
	       json_is_string(json_object_get(r, "new"))
	           ? json_string_value(json_object_get(r, "new"))
	           : "",
	       json_string_value(json_object_get(r, "verdict")));
	printf("  %lld sites in %lld files (%lld outside the module, %lld in tests)\n",
	       json_integer_value(json_object_get(sum, "sites")),
	       json_integer_value(json_object_get(sum, "files")),
	       json_integer_value(json_object_get(sum, "outside_module")),
	       json_integer_value(json_object_get(sum, "in_tests")));
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(r, "sites"), i, v)
	{
		printf("  %s:%lld: %s %s (%s)\n", json_string_value(json_object_get(v, "file")),
		       json_integer_value(json_object_get(v, "line")),
		       json_string_value(json_object_get(v, "kind")),
		       json_string_value(json_object_get(v, "target")),
		       json_string_value(json_object_get(v, "caller")));
	}
	json_array_foreach(json_object_get(r, "imported_calls"), i, v)
	{
		const char *file = json_string_value(json_object_get(v, "file"));
		printf("  %s:%lld: imported call (%s.%s/%lld)\n", file ? file : "-",
		       json_integer_value(json_object_get(v, "line")),
		       json_string_value(json_object_get(v, "module")),
		       json_string_value(json_object_get(v, "name")),
		       json_integer_value(json_object_get(v, "arity")));
	}
	json_array_foreach(json_object_get(r, "implementations"), i, v)
	{
		const char *file = json_string_value(json_object_get(v, "file"));
		printf("  implementation: %s (%s)\n",
		       json_string_value(json_object_get(v, "module")), file ? file : "-");
	}
	json_array_foreach(json_object_get(r, "delegates"), i, v)
	{
		printf("  defdelegate: %s.%s/%lld\n",
		       json_string_value(json_object_get(v, "module")),
		       json_string_value(json_object_get(v, "name")),
		       json_integer_value(json_object_get(v, "arity")));
	}
	json_array_foreach(json_object_get(r, "notes"), i, v)
	{
		printf("  note: %s\n", json_string_value(v));
	}
}

static int cmd_impact_check(int argc, char **argv)
{
	struct assist_opts o = {0};
	o.args = json_object();
	json_t *r = NULL;
	int rc = assist_opts_parse("impact-check", impact_check_usage, argc, argv, 1, &o, "",
	                           impact_option, 1);
	if (rc) {
		rc = rc < 0 ? CLI_EXIT_OK : rc;
		goto done;
	}
	if (!json_object_get(o.args, "action")) {
		fprintf(stderr,
		        "giulia impact-check: say what is planned: --rename NEW, --remove or "
		        "--arity N\n");
		rc = CLI_EXIT_USAGE;
		goto done;
	}
	rc = assist_query("impact-check", &o, "impact_check", false, &r);
	if (!rc) {
		if (o.json)
			cli_json_print(r);
		else
			print_impact(r);
	}
done:
	json_decref(r);
	json_decref(o.args);
	return rc;
}

/* -- plan validate, check -- */

static const char plan_usage[] =
    "validate FILE|- [--boundaries FILE] [--depth N] [--project PATH] [--db FILE] [--json]";
static const char check_usage[] = "[--boundaries FILE] [--project PATH] [--db FILE] [--json]";

static const char *boundaries_path;

static int boundaries_option(struct assist_opts *o, const char *a, const char *next, int *taken)
{
	(void)o;
	(void)taken;
	if (strcmp(a, "--boundaries") != 0)
		return 0;
	if (!next) {
		fprintf(stderr, "giulia: a file must follow --boundaries\n");
		return 100 + CLI_EXIT_USAGE;
	}
	boundaries_path = next;
	return 2;
}

static void print_violations(json_t *list)
{
	size_t i;
	json_t *v;
	json_array_foreach(list, i, v)
	{
		json_t *ev = json_object_get(v, "evidence");
		const char *file = json_string_value(json_object_get(ev, "file"));
		if (file)
			printf("%s:%lld: ", file, json_integer_value(json_object_get(ev, "line")));
		printf("%s: [%s] %s\n", json_string_value(json_object_get(v, "severity")),
		       json_string_value(json_object_get(v, "rule")),
		       json_string_value(json_object_get(v, "message")));
	}
}

static void print_plan(json_t *r)
{
	print_violations(json_object_get(r, "violations"));
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(r, "touched"), i, v)
	{
		printf("touched: %s (%s)%s, zone %s\n",
		       json_string_value(json_object_get(v, "module")),
		       json_string_value(json_object_get(v, "why")),
		       json_is_true(json_object_get(v, "hub")) ? ", a hub" : "",
		       json_string_value(json_object_get(v, "zone")));
	}
	json_t *blast = json_object_get(r, "blast_radius");
	printf("blast radius: %lld modules within %lld hops, %zu test modules\n",
	       json_integer_value(json_object_get(blast, "count")),
	       json_integer_value(json_object_get(blast, "depth")),
	       json_array_size(json_object_get(blast, "tests")));
	printf("plan: %s (%lld errors, %lld warnings)\n",
	       json_string_value(json_object_get(r, "verdict")),
	       json_integer_value(json_object_get(r, "errors")),
	       json_integer_value(json_object_get(r, "warnings")));
}

static int plan_or_check(const char *cmd, const char *usage, int argc, char **argv, int first,
                         bool plan)
{
	struct assist_opts o = {0};
	o.args = json_object();
	boundaries_path = NULL;
	json_t *r = NULL;
	int rc = assist_opts_parse(cmd, usage, argc, argv, first, &o, plan ? " --depth " : "",
	                           boundaries_option, plan ? 1 : 0);
	if (rc) {
		rc = rc < 0 ? CLI_EXIT_OK : rc;
		goto done;
	}
	if (plan) {
		json_t *doc = json_file_read(cmd, o.target);
		if (!doc) {
			rc = CLI_EXIT_USAGE;
			goto done;
		}
		json_object_set_new(o.args, "plan", doc);
		o.target = NULL;
	}
	if (boundaries_path) {
		json_t *doc = json_file_read(cmd, boundaries_path);
		if (!doc) {
			rc = CLI_EXIT_USAGE;
			goto done;
		}
		json_object_set_new(o.args, "boundaries", doc);
	}
	rc = assist_query(cmd, &o, plan ? "plan_validate" : "check", false, &r);
	if (rc)
		goto done;
	if (o.json)
		cli_json_print(r);
	else if (plan)
		print_plan(r);
	else {
		print_violations(json_object_get(r, "violations"));
		printf("%lld violation%s in %lld dependencies checked\n",
		       json_integer_value(json_object_get(r, "violation_count")),
		       json_integer_value(json_object_get(r, "violation_count")) == 1 ? "" : "s",
		       json_integer_value(json_object_get(r, "edges_checked")));
	}
	rc = json_is_true(json_object_get(r, "ok")) ? CLI_EXIT_OK : CLI_EXIT_FINDINGS;
done:
	json_decref(r);
	json_decref(o.args);
	return rc;
}

static int cmd_plan(int argc, char **argv)
{
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("usage: giulia plan %s\n", plan_usage);
		return CLI_EXIT_OK;
	}
	if (argc < 2 || strcmp(argv[1], "validate") != 0) {
		fprintf(stderr, "giulia plan: say `validate FILE|-`\nusage: giulia plan %s\n",
		        plan_usage);
		return CLI_EXIT_USAGE;
	}
	return plan_or_check("plan validate", plan_usage + strlen("validate "), argc, argv, 2,
	                     true);
}

static int cmd_check(int argc, char **argv)
{
	return plan_or_check("check", check_usage, argc, argv, 1, false);
}

static const struct cli_option briefing_options[] = {
    {"--top N", "entries per list (hubs, cycles, riskiest, findings)", "5"},
    {"--data DIR",
     "the worker's data directory whose latest profile of the project adds its "
     "findings",
     "$XDG_DATA_HOME/giulia, else ~/.local/share/giulia"},
    {NULL, NULL, NULL},
};

static const struct cli_help briefing_help = {
    "What to know on entering the project, in one answer: its size, layers, hubs, cycles and "
    "riskiest modules, the conventions in use (behaviours, protocols, OTP processes, Ecto "
    "schemas, structs) and, when the node was observed, the latest profile's top findings "
    "(docs/ASSIST.md).",
    briefing_options, cli_static_options, 0, "giulia briefing\ngiulia briefing --top 10 --json"};

static const struct cli_option impact_check_options[] = {
    {"--rename NEW", "a rename: NEW is the function's (or module's) new name", NULL},
    {"--remove", "a removal", NULL},
    {"--arity N", "an arity change of a function to N arguments", NULL},
    {NULL, NULL, NULL},
};

static const struct cli_help impact_check_help = {
    "Before a rename, removal or arity change of a function or module: every call site to "
    "update with its file and line (calls, captures, literal MFAs and applies, imports, "
    "aliases), the @spec, the behaviour callback or protocol it implements or defines and the "
    "implementations that must follow, the defdelegates that point at it, and the clash a new "
    "name would make (docs/ASSIST.md).",
    impact_check_options, cli_static_options, 0,
    "giulia impact-check Shop.Cart.add/2 --rename put\ngiulia impact-check Shop.Cart --remove "
    "--json"};

static const struct cli_option plan_options[] = {
    {"--boundaries FILE", "the boundaries to check the plan against (docs/ASSIST.md)",
     "PROJECT/.giulia-boundaries.json when it exists"},
    {"--depth N", "how many steps of dependents the blast radius follows", "3"},
    {NULL, NULL, NULL},
};

static const struct cli_help plan_help = {
    "Validates a change plan (JSON, docs/ASSIST.md: modules to add or modify, dependencies to "
    "introduce, functions to move) against the graph: the cycles it would close, layer "
    "violations (computed layers, and the boundaries file), the hubs and red zones it touches, "
    "and its combined blast radius. Exit status 3 when the plan breaks a rule.",
    plan_options, cli_static_options, CLI_EXITS_FINDINGS,
    "giulia plan validate plan.json\ngiulia plan validate - --json < plan.json"};

static const struct cli_option check_options[] = {
    {"--boundaries FILE", "the boundaries file (docs/ASSIST.md)",
     "PROJECT/.giulia-boundaries.json"},
    {NULL, NULL, NULL},
};

static const struct cli_help check_help = {
    "Checks the current graph against the boundaries file (layers and the layers each may "
    "depend on, forbidden dependencies, optionally no cycles), for CI: each violation with the "
    "file and line that makes it; exit status 3 when there is one.",
    check_options, cli_static_options, CLI_EXITS_FINDINGS,
    "giulia check\ngiulia check --boundaries ci/boundaries.json --json"};

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
    {"--data DIR",
     "the worker's data directory whose latest profile of the project gives "
     "the live weight",
     "$XDG_DATA_HOME/giulia, else ~/.local/share/giulia"},
    {NULL, NULL, NULL},
};

static const struct cli_help preflight_help = {
    "Before editing a module or function: its role and public API, its dependents with the "
    "kinds of dependency, the blast radius, the test modules that reach it (the tests to "
    "run), the risk factors, each with its number and reason, and its live weight "
    "(calls/s, share of reductions) from the project's latest profile when there is one.",
    preflight_options, cli_static_options, 0,
    "giulia preflight Shop.Cart\ngiulia preflight Shop.Cart.add/2 --json"};

const struct cli_command cli_assist_commands[] = {
    {"search", search_usage, "search the project's text (grep) or its code by meaning (ranked)",
     cmd_search, &search_help},
    {"preflight", preflight_usage,
     "before editing: dependents, blast radius, tests that reach it, risk factors", cmd_preflight,
     &preflight_help},
    {"briefing", briefing_usage,
     "what to know on entering the project: size, layers, hubs, risk, conventions, profile",
     cmd_briefing, &briefing_help},
    {"impact-check", impact_check_usage,
     "before a rename or removal: every call site with file:line, contracts, clashes",
     cmd_impact_check, &impact_check_help},
    {"plan", plan_usage, "validate a change plan: cycles, layers, hubs touched, blast radius",
     cmd_plan, &plan_help},
    {"check", check_usage, "check the boundaries file on the graph (CI: exit 3 on violations)",
     cmd_check, &check_help},
    {NULL, NULL, NULL, NULL, NULL},
};
