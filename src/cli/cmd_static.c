/*
 * cmd_static.c - the static commands of the giulia CLI (see cli.h and
 * docs/CLI.md "Static commands"): `giulia index` and the queries over an
 * index database. Every query goes through kg_query(), so `--json` prints
 * exactly what the worker's REST API returns; the default output is a
 * readable table built from the same JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/fmt.h"
#include "base/fs.h"
#include "base/json_read.h"
#include "base/table.h"
#include "base/str.h"
#include "cli/cli.h"
#include "cli/dead_runtime.h"
#include "graph/query.h"
#include "graph/query_registry.h"
#include "observe/beam_pull.h"

#define CLI_BEAM_DIRS_MAX 64
#define CLI_APPS_MAX      256

struct static_opts {
	const char *project;
	const char *db;
	bool json, force, external, direct, help, no_tests, no_build, tests;
	const char *label; /* xref --label */
	int depth, top, jobs;
	int window_ms; /* dead-code --for MS */
	const char *args[3];
	int nargs;
	const char *beam[CLI_BEAM_DIRS_MAX + 2]; /* --beam DIR..., NULL-terminated */
	int nbeam;
	const char *node, *apps, *cookie; /* index --node NODE --apps a,b [--cookie C] */
};

/* Prints "giulia CMD: WHAT" and the usage line; `what` is a whole message. */
static int usage_message(const char *cmd, const char *usage, const char *what)
{
	fprintf(stderr, "giulia %s: %s\nusage: giulia %s %s\n", cmd, what, cmd, usage);
	return CLI_EXIT_USAGE;
}

static int usage_error(const char *cmd, const char *usage, const char *prefix, const char *arg)
{
	char msg[512];
	snprintf(msg, sizeof(msg), "%s%s", prefix, arg);
	return usage_message(cmd, usage, msg);
}

static int int_option(const char *cmd, const char *usage, const char *name, const char *value,
                      int *out)
{
	int64_t v = 0;
	if (!value || gi_parse_int64(value, 1, 1000000, &v))
		return usage_error(cmd, usage, name, " needs a positive integer");
	*out = (int)v;
	return 0;
}

/* Parses the options shared by the static commands; positional arguments
 * (at most `max_args`) go to o->args. Returns 0 or an exit code. */
static int opts_parse(int argc, char **argv, const char *usage, int max_args, struct static_opts *o)
{
	memset(o, 0, sizeof(*o));
	const char *cmd = argv[0];
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *next = i + 1 < argc ? argv[i + 1] : NULL;
		int rc = 0;
		if (strcmp(a, "--json") == 0) {
			o->json = true;
		} else if (strcmp(a, "--force") == 0) {
			o->force = true;
		} else if (strcmp(a, "--no-build") == 0) {
			o->no_build = true;
		} else if (strcmp(a, "--external") == 0) {
			o->external = true;
		} else if (strcmp(a, "--direct") == 0) {
			o->direct = true;
		} else if (strcmp(a, "--label") == 0) {
			if (!next)
				return usage_error(cmd, usage, a, " needs a value");
			o->label = next;
			i++;
		} else if (strcmp(a, "--no-tests") == 0) {
			o->no_tests = true;
		} else if (strcmp(a, "--tests") == 0) {
			o->tests = true;
		} else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			o->help = true;
		} else if (strcmp(a, "--project") == 0 || strcmp(a, "--db") == 0) {
			if (!next)
				return usage_error(cmd, usage, a, " needs a value");
			if (a[2] == 'p')
				o->project = next;
			else
				o->db = next;
			i++;
		} else if (strcmp(a, "--depth") == 0) {
			rc = int_option(cmd, usage, a, next, &o->depth);
			i++;
		} else if (strcmp(a, "--top") == 0) {
			rc = int_option(cmd, usage, a, next, &o->top);
			i++;
		} else if (strcmp(a, "--node") == 0 || strcmp(a, "--apps") == 0 ||
		           strcmp(a, "--cookie") == 0) {
			if (!next)
				return usage_error(cmd, usage, a, " needs a value");
			if (a[2] == 'n')
				o->node = next;
			else if (a[2] == 'a')
				o->apps = next;
			else
				o->cookie = next;
			i++;
		} else if (strcmp(a, "--beam") == 0) {
			/* --beam DIR...: every following argument up to the next option */
			if (!next || next[0] == '-')
				return usage_error(cmd, usage, a, " needs a directory");
			while (i + 1 < argc && argv[i + 1][0] != '-') {
				if (o->nbeam == CLI_BEAM_DIRS_MAX)
					return usage_error(cmd, usage, "too many directories for ",
					                   a);
				o->beam[o->nbeam++] = argv[++i];
			}
		} else if (strcmp(a, "--jobs") == 0) {
			rc = int_option(cmd, usage, a, next, &o->jobs);
			i++;
		} else if (strcmp(a, "--for") == 0) {
			rc = int_option(cmd, usage, a, next, &o->window_ms);
			i++;
		} else if (a[0] == '-' && a[1] == '-') {
			return usage_error(cmd, usage, "unknown option ", a);
		} else if (o->nargs < max_args) {
			o->args[o->nargs++] = a;
		} else {
			return usage_error(cmd, usage, "unexpected argument ", a);
		}
		if (rc)
			return rc;
	}
	if (o->help) {
		printf("usage: giulia %s %s\n", cmd, usage);
		return -1;
	}
	return 0;
}

/* The database path: --db, else GIULIA_DB, else PROJECT/.giulia/index.db.
 * Caller frees. */
int cli_db_path_resolve(const char *cmd, const char *db, const char *project, char **out)
{
	*out = NULL;
	if (db) {
		*out = gi_strdup(db);
		return 0;
	}
	const char *env = getenv("GIULIA_DB");
	if (env && *env) {
		*out = gi_strdup(env);
		return 0;
	}
	char *real = NULL;
	int rc = project ? gi_fs_realdir(project, &real) : cli_project_find(&real);
	if (rc) {
		fprintf(stderr, "giulia %s: project directory '%s' does not exist\n", cmd,
		        project ? project : ".");
		return rc;
	}
	*out = kg_db_default_path(real);
	gi_free(real);
	return 0;
}

/* ---- giulia index -------------------------------------------------------- */

static const char index_usage[] = "[PATH] [--beam DIR... | --no-build] [--node NODE --apps APP,... "
                                  "[--cookie C]] [--db FILE] [--json] "
                                  "[--force] [--jobs N]";

/* `giulia index --node`: caches the applications' object code under
 * ROOT/.giulia/beam/NODE and adds that directory to o->beam. Returns 0 or an
 * exit code. `dest` (of `size` bytes) receives the directory. */
static int index_node_pull(struct static_opts *o, const char *root, char *dest, size_t size)
{
	char *apps[CLI_APPS_MAX + 1] = {0}, list[4096], err[1024], *save = NULL, *real = NULL;
	int napps = 0;
	if (!o->apps || !*o->apps)
		return usage_message("index", index_usage, "--node needs --apps APP,...");
	if (strchr(o->node, '/') || o->node[0] == '.')
		return usage_error("index", index_usage, "not a node name: ", o->node);
	if (gi_strlcpy(list, o->apps, sizeof(list)) != 0)
		return usage_message("index", index_usage, "--apps is too long");
	for (char *a = strtok_r(list, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
		if (napps == CLI_APPS_MAX)
			return usage_message("index", index_usage, "too many --apps");
		apps[napps++] = a;
	}
	if (gi_fs_realdir(root, &real) != 0) {
		fprintf(stderr, "giulia index: '%s' is not a directory\n", root);
		return CLI_EXIT_USAGE;
	}
	snprintf(dest, size, "%s/.giulia/beam/%s", real, o->node);
	gi_free(real);
	struct beam_pull_summary sum;
	int rc = beam_pull_apps(o->node, o->cookie, 0, (const char *const *)apps, dest, &sum, err,
	                        sizeof(err));
	if (rc) {
		fprintf(stderr, "giulia index: %s\n", err);
		return cli_exit_code_for(rc);
	}
	if (!o->json)
		printf("pulled %d modules of %d applications from %s (%d changed, %d without "
		       "object code)\n",
		       sum.modules, sum.apps, o->node, sum.written, sum.missing);
	o->beam[o->nbeam++] = dest;
	return 0;
}

static int cmd_index(int argc, char **argv)
{
	struct static_opts o;
	int rc = opts_parse(argc, argv, index_usage, 1, &o);
	if (rc)
		return rc < 0 ? CLI_EXIT_OK : rc;
	char found[4096] = ".";
	if (!o.nargs && !o.project) {
		char *dir = NULL;
		if (cli_project_find(&dir) != 0) {
			fprintf(stderr, "giulia index: the current directory is not readable\n");
			return CLI_EXIT_FAILURE;
		}
		gi_strlcpy(found, dir, sizeof(found));
		gi_free(dir);
		char probe[4200], idx[4200];
		snprintf(probe, sizeof(probe), "%s/mix.exs", found);
		snprintf(idx, sizeof(idx), "%s/.giulia/index.db", found);
		if (access(probe, F_OK) != 0 && access(idx, F_OK) != 0)
			fprintf(
			    stderr,
			    "giulia index: no mix.exs here or above (up to the repository root): "
			    "indexing %s itself; give PATH to index another directory\n",
			    found);
	}
	const char *root = o.nargs ? o.args[0] : (o.project ? o.project : found);
	const char *db = o.db ? o.db : getenv("GIULIA_DB");
	if (db && !*db)
		db = NULL;
	char pulled[4096];
	if (o.node && (rc = index_node_pull(&o, root, pulled, sizeof(pulled))) != 0)
		return rc;
	for (int i = 0; i < o.nbeam; i++) {
		struct stat sb;
		if (stat(o.beam[i], &sb) != 0 || !S_ISDIR(sb.st_mode)) {
			fprintf(stderr, "giulia index: --beam '%s' is not a directory\n",
			        o.beam[i]);
			return CLI_EXIT_USAGE;
		}
	}
	struct kg_index_options opt = {.force = o.force,
	                               .beam_dirs = o.nbeam ? o.beam : NULL,
	                               .jobs = o.jobs,
	                               .no_build = o.no_build};
	json_t *summary = NULL;
	rc = kg_index_project(root, db, &opt, &summary);
	if (rc) {
		char *real = NULL;
		bool root_ok = gi_fs_realdir(root, &real) == 0;
		gi_free(real);
		if (rc == GI_ENOENT && !root_ok)
			fprintf(stderr, "giulia index: '%s' is not a directory\n", root);
		else if (rc == GI_ENOENT || rc == GI_EDENIED)
			fprintf(stderr, "giulia index: cannot create the database %s: %s\n",
			        db ? db : ".giulia/index.db", gi_strerror(rc));
		else if (rc == GI_ECORRUPT)
			fprintf(stderr,
			        "giulia index: the database %s is not a SQLite file (corrupt?); "
			        "remove it and index again\n",
			        db ? db : ".giulia/index.db");
		else if (rc == GI_EDBVERSION)
			fprintf(
			    stderr,
			    "giulia index: the database %s was made by a newer Giulia or is not "
			    "a Giulia index; use another --db or remove it\n",
			    db ? db : ".giulia/index.db");
		else
			fprintf(stderr, "giulia index: indexing %s failed: %s\n", root,
			        gi_strerror(rc));
		return cli_exit_code_for(rc);
	}
	/* The graph snapshot (DB.graph) is not rewritten here: its stamp is the
	 * index's generation, so a run that changed facts leaves it stale, and
	 * the first query that needs the graph loads it from the rows and writes
	 * it back (docs/SCHEMA.md, "The graph snapshot"). An edit of one file
	 * then costs its parse and its rows, not a graph computed in full. */
	if (o.json) {
		cli_json_print(summary);
	} else {
		json_t *errors = json_object_get(summary, "parse_errors");
		json_t *skipped = json_object_get(summary, "skipped");
		printf("indexed %s into %s\n", json_string_value(json_object_get(summary, "root")),
		       json_string_value(json_object_get(summary, "db")));
		printf("  files      %lld (%lld parsed, %lld unchanged, %lld removed)\n",
		       json_integer_value(json_object_get(summary, "files")),
		       json_integer_value(json_object_get(summary, "parsed")),
		       json_integer_value(json_object_get(summary, "unchanged")),
		       json_integer_value(json_object_get(summary, "removed")));
		printf("  modules    %lld\n",
		       json_integer_value(json_object_get(summary, "modules")));
		printf("  functions  %lld\n",
		       json_integer_value(json_object_get(summary, "functions")));
		printf("  edges      %lld\n",
		       json_integer_value(json_object_get(summary, "edges")));
		printf("  elapsed    %.1f ms\n",
		       json_real_value(json_object_get(summary, "elapsed_ms")));
		size_t i;
		json_t *e;
		json_array_foreach(errors, i, e)
		{
			printf("parse error: %s:%lld: %s\n",
			       json_string_value(json_object_get(e, "file")),
			       json_integer_value(json_object_get(e, "line")),
			       json_string_value(json_object_get(e, "message")));
		}
		json_array_foreach(skipped, i, e)
		{
			printf("skipped: %s: %s\n", json_string_value(json_object_get(e, "file")),
			       json_string_value(json_object_get(e, "reason")));
		}
	}
	json_decref(summary);
	return CLI_EXIT_OK;
}

/* ---- queries ------------------------------------------------------------- */

static const char *jstr(json_t *o, const char *k)
{
	const char *s = gi_json_str(o, k);
	return s ? s : "-";
}

static long long jint(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

/* Prints table `t` fitted to the terminal (cli_columns) and frees it. */
static void table_flush(struct gi_table *t)
{
	struct gi_buf b;
	gi_buf_init(&b, 0);
	if (gi_table_render(t, cli_columns(), &b) == 0)
		fputs(gi_buf_str(&b), stdout);
	gi_buf_destroy(&b);
	gi_table_free(t);
}

static void cell_int(char *buf, size_t size, long long v)
{
	snprintf(buf, size, "%lld", v);
}

/* "file:line", the form terminals and editors open. */
static void file_line(char *buf, size_t size, const char *file, long long line)
{
	if (!file || !*file || strcmp(file, "-") == 0)
		snprintf(buf, size, "-");
	else if (line > 0)
		snprintf(buf, size, "%s:%lld", file, line);
	else
		snprintf(buf, size, "%s", file);
}

static void print_modules(json_t *r)
{
	static const struct gi_table_column cols[] = {
	    {"MODULE", GI_COL_ELIDE, 0, 30}, {"FUNS", GI_COL_RIGHT, 0, 0},
	    {"PUB", GI_COL_RIGHT, 3, 0},     {"PRIV", GI_COL_RIGHT, 4, 0},
	    {"CMPLX", GI_COL_RIGHT, 2, 0},   {"FILE", GI_COL_ELIDE, 1, 24},
	};
	struct gi_table *t = gi_table_new(cols, 6, 0);
	size_t i;
	json_t *m;
	json_array_foreach(json_object_get(r, "modules"), i, m)
	{
		char funs[24], pub[24], priv[24], cx[24], file[1024];
		cell_int(funs, sizeof(funs), jint(m, "functions"));
		cell_int(pub, sizeof(pub), jint(m, "public"));
		cell_int(priv, sizeof(priv), jint(m, "private"));
		cell_int(cx, sizeof(cx), jint(m, "complexity"));
		snprintf(file, sizeof(file), "%s%s", jstr(m, "file"),
		         json_is_true(json_object_get(m, "test")) ? " (test)" : "");
		const char *row[] = {jstr(m, "name"), funs, pub, priv, cx, file};
		gi_table_add(t, row);
	}
	table_flush(t);
	printf("%lld modules\n", jint(r, "count"));
}

static void print_functions(json_t *r)
{
	const char *file = json_string_value(json_object_get(r, "file"));
	static const struct gi_table_column cols[] = {
	    {"FUNCTION", GI_COL_ELIDE, 0, 24},
	    {"VISIB", 0, 3, 0},
	    {"KIND", 0, 4, 0},
	    {"CYCL", GI_COL_RIGHT, 0, 0},
	    {"COGN", GI_COL_RIGHT, 1, 0},
	    {"NEST", GI_COL_RIGHT, 2, 0},
	    {"WHERE", GI_COL_ELIDE, 0, 16},
	};
	struct gi_table *t = gi_table_new(cols, 7, 0);
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(r, "functions"), i, f)
	{
		char name[512], cy[24], co[24], ne[24], where[1024];
		gi_fmt_function(NULL, jstr(f, "name"), jint(f, "arity"), name, sizeof(name));
		cell_int(cy, sizeof(cy), jint(f, "cyclomatic"));
		cell_int(co, sizeof(co), jint(f, "cognitive"));
		cell_int(ne, sizeof(ne), jint(f, "max_nesting"));
		file_line(where, sizeof(where), file, jint(f, "line"));
		const char *row[] = {name, jstr(f, "visibility"), jstr(f, "kind"), cy, co, ne,
		                     where};
		gi_table_add(t, row);
	}
	table_flush(t);
	printf("%lld functions in %s\n", jint(r, "count"), jstr(r, "module"));
}

static void print_neighbours(json_t *r, const char *key)
{
	static const struct gi_table_column cols[] = {
	    {"MODULE", GI_COL_ELIDE, 0, 30},
	    {"KINDS", GI_COL_ELIDE, 0, 16},
	};
	struct gi_table *t = gi_table_new(cols, 2, 0);
	size_t i, j;
	json_t *m, *k;
	json_array_foreach(json_object_get(r, key), i, m)
	{
		struct gi_buf kinds;
		gi_buf_init(&kinds, 0);
		json_array_foreach(json_object_get(m, "kinds"), j, k)
		{
			gi_buf_printf(&kinds, "%s%s", j ? "," : "", json_string_value(k));
		}
		gi_buf_printf(&kinds, "%s%s",
		              json_is_true(json_object_get(m, "test")) ? " (test)" : "",
		              json_is_true(json_object_get(m, "external")) ? " (external)" : "");
		const char *row[] = {jstr(m, "module"), gi_buf_str(&kinds)};
		gi_table_add(t, row);
		gi_buf_destroy(&kinds);
	}
	table_flush(t);
	printf("%lld %s of %s\n", jint(r, "count"), key, jstr(r, "module"));
}

static void print_depth_list(json_t *list, bool functions)
{
	size_t i;
	json_t *m;
	json_array_foreach(list, i, m)
	{
		const char *via = json_string_value(json_object_get(m, "via"));
		if (functions)
			printf("  [%lld] %s.%s/%lld", jint(m, "depth"), jstr(m, "module"),
			       jstr(m, "name"), jint(m, "arity"));
		else
			printf("  [%lld] %s", jint(m, "depth"), jstr(m, "module"));
		printf(via ? " (via %s)\n" : "\n", via);
	}
}

/* Dependents, library code first and tests apart (left out with
 * --no-tests), each beyond depth 1 with the module it comes through. */
static void print_dependents_split(json_t *r, bool no_tests)
{
	json_t *list = json_object_get(r, "dependents");
	for (int tests = 0; tests < 2; tests++) {
		if (tests && no_tests)
			break;
		size_t i, n = 0;
		json_t *m;
		json_array_foreach(list, i, m)
		{
			if (json_is_true(json_object_get(m, "test")) == (tests == 1))
				n++;
		}
		printf("%s (%zu):\n", tests ? "test dependents" : "dependents", n);
		json_array_foreach(list, i, m)
		{
			if (json_is_true(json_object_get(m, "test")) != (tests == 1))
				continue;
			const char *via = json_string_value(json_object_get(m, "via"));
			if (via)
				printf("  [%lld] %s (via %s)\n", jint(m, "depth"),
				       jstr(m, "module"), via);
			else
				printf("  [%lld] %s\n", jint(m, "depth"), jstr(m, "module"));
		}
	}
}

static void print_impact(json_t *r, bool no_tests)
{
	if (json_object_get(r, "function")) {
		printf("impact of %s.%s (depth %lld)\n", jstr(r, "module"), jstr(r, "function"),
		       jint(r, "depth"));
		printf("callers (%lld):\n", jint(r, "caller_count"));
		print_depth_list(json_object_get(r, "callers"), true);
		printf("callees (%lld):\n", jint(r, "callee_count"));
		print_depth_list(json_object_get(r, "callees"), true);
		return;
	}
	long long in = jint(r, "in_degree");
	bool hub = json_is_true(json_object_get(r, "hub"));
	const char *risk = jstr(r, "risk");
	printf("impact of %s (depth %lld)\n", jstr(r, "module"), jint(r, "depth"));
	printf(
	    "risk %s: %lld module%s depend%s on it directly%s (medium for a hub, high from 10)\n",
	    risk, in, in == 1 ? "" : "s", in == 1 ? "s" : "", hub ? ", a hub" : ", not a hub");
	print_dependents_split(r, no_tests);
	printf("dependencies (%lld):\n", jint(r, "dependency_count"));
	print_depth_list(json_object_get(r, "dependencies"), false);
}

static void print_impact_placeholder(json_t *r)
{
	(void)r;
}

static void print_cycles(json_t *r)
{
	size_t i, j;
	json_t *c, *m;
	json_array_foreach(json_object_get(r, "cycles"), i, c)
	{
		printf("cycle %zu (%lld modules): ", i + 1, jint(c, "size"));
		json_array_foreach(json_object_get(c, "modules"), j, m)
		{
			printf("%s%s", j ? " <-> " : "", json_string_value(m));
		}
		printf("\n");
	}
	printf("%lld cycles\n", jint(r, "count"));
}

static void print_hubs(json_t *r)
{
	static const struct gi_table_column cols[] = {
	    {"MODULE", GI_COL_ELIDE, 0, 30},  {"IN (Ca)", GI_COL_RIGHT, 0, 0},
	    {"OUT (Ce)", GI_COL_RIGHT, 0, 0}, {"PAGERANK", GI_COL_RIGHT, 2, 0},
	    {"INSTAB", GI_COL_RIGHT, 1, 0},
	};
	struct gi_table *t = gi_table_new(cols, 5, 0);
	size_t i;
	json_t *m;
	json_array_foreach(json_object_get(r, "hubs"), i, m)
	{
		char in[24], out[24], pr[32], ins[32];
		cell_int(in, sizeof(in), jint(m, "in_degree"));
		cell_int(out, sizeof(out), jint(m, "out_degree"));
		snprintf(pr, sizeof(pr), "%.4f", gi_json_num_or(m, "centrality", 0));
		snprintf(ins, sizeof(ins), "%.3f", gi_json_num_or(m, "instability", 0));
		const char *row[] = {jstr(m, "module"), in, out, pr, ins};
		gi_table_add(t, row);
	}
	table_flush(t);
	printf("%lld hubs (in_degree >= %lld)\n"
	       "Ca: modules that depend on it; Ce: modules it depends on; INSTAB: Ce/(Ca+Ce)\n",
	       jint(r, "count"), jint(r, "threshold"));
}

static void print_coupling(json_t *r)
{
	static const struct gi_table_column cols[] = {
	    {"FROM", GI_COL_ELIDE, 0, 20},
	    {"TO", GI_COL_ELIDE, 0, 20},
	    {"CALLS", GI_COL_RIGHT, 0, 0},
	    {"FUNS", GI_COL_RIGHT, 1, 0},
	};
	struct gi_table *t = gi_table_new(cols, 4, 0);
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(r, "pairs"), i, p)
	{
		char calls[24], funs[24];
		cell_int(calls, sizeof(calls), jint(p, "calls"));
		cell_int(funs, sizeof(funs), jint(p, "functions"));
		const char *row[] = {jstr(p, "from"), jstr(p, "to"), calls, funs};
		gi_table_add(t, row);
	}
	table_flush(t);
}

/* "Module.name/arity" of a function row (anonymous funs as "fn in ..."). */
static void function_label(json_t *f, char *buf, size_t size)
{
	gi_fmt_function(jstr(f, "module"), jstr(f, "name"), jint(f, "arity"), buf, size);
}

static void print_complexity(json_t *r)
{
	static const struct gi_table_column cols[] = {
	    {"FUNCTION", GI_COL_ELIDE, 0, 30}, {"CYCL", GI_COL_RIGHT, 0, 0},
	    {"COGN", GI_COL_RIGHT, 0, 0},      {"NEST", GI_COL_RIGHT, 1, 0},
	    {"WHERE", GI_COL_ELIDE, 0, 16},
	};
	struct gi_table *t = gi_table_new(cols, 5, 0);
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(r, "functions"), i, f)
	{
		char name[768], cy[24], co[24], ne[24], where[1024];
		function_label(f, name, sizeof(name));
		cell_int(cy, sizeof(cy), jint(f, "cyclomatic"));
		cell_int(co, sizeof(co), jint(f, "cognitive"));
		cell_int(ne, sizeof(ne), jint(f, "max_nesting"));
		file_line(where, sizeof(where), jstr(f, "file"), jint(f, "line"));
		const char *row[] = {name, cy, co, ne, where};
		gi_table_add(t, row);
	}
	table_flush(t);
}

static void print_dead_code(json_t *r)
{
	static const struct gi_table_column cols[] = {
	    {"FUNCTION", GI_COL_ELIDE, 0, 30},
	    {"REASON", 0, 0, 0},
	    {"WHERE", GI_COL_ELIDE, 0, 16},
	};
	struct gi_table *t = gi_table_new(cols, 3, 0);
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(r, "functions"), i, f)
	{
		char name[768], where[1024];
		function_label(f, name, sizeof(name));
		file_line(where, sizeof(where), jstr(f, "file"), jint(f, "line"));
		const char *row[] = {name, jstr(f, "reason"), where};
		gi_table_add(t, row);
	}
	table_flush(t);
	json_t *by = json_object_get(r, "by_reason");
	printf("%lld functions: %lld unreferenced, %lld test-only, %lld callbacks, %lld dynamic\n",
	       jint(r, "count"), jint(by, "unreferenced"), jint(by, "test_only"),
	       jint(by, "callback"), jint(by, "dynamic"));
	if (jint(by, "dynamic") > 0)
		printf("dynamic: a call on a module in a variable has its name and arity\n");
	if (jint(r, "public_api_count") > 0)
		printf(
		    "not dead: %lld public API functions nobody here calls (--json: public_api)\n",
		    jint(r, "public_api_count"));
	json_array_foreach(json_object_get(r, "incomplete_modules"), i, f)
	{
		char where[1024];
		file_line(where, sizeof(where), jstr(f, "file"), jint(f, "line"));
		printf("%s: functions of unknown names (%s, %s): its dead code may be "
		       "incomplete; index its _build to know them\n",
		       jstr(f, "module"), jstr(f, "generated_by"), where);
	}
}

/* The kinds of the edge from `from` to `to` ("alias,call"), from the
 * dependencies of `from`, into `out`; "?" when not found. */
static void edge_kinds(struct kg_db *db, const struct kg_query_params *base, const char *from,
                       const char *to, struct gi_buf *out)
{
	struct kg_query_params q = *base;
	q.module = from;
	q.function = NULL;
	q.from = q.to = NULL;
	q.include_external = true;
	json_t *deps = NULL;
	size_t i, j;
	json_t *m, *k;
	bool found = false;
	if (kg_query(db, "dependencies", &q, &deps) == 0)
		json_array_foreach(json_object_get(deps, "dependencies"), i, m)
		{
			if (strcmp(jstr(m, "module"), to) != 0)
				continue;
			json_array_foreach(json_object_get(m, "kinds"), j, k)
			{
				gi_buf_printf(out, "%s%s", j ? "," : "", json_string_value(k));
			}
			found = true;
		}
	if (!found)
		gi_buf_puts(out, "?");
	json_decref(deps);
}

static void print_path(json_t *r, struct kg_db *db, const struct kg_query_params *p)
{
	if (!json_is_true(json_object_get(r, "found"))) {
		printf("no dependency path from %s to %s\n", jstr(r, "from"), jstr(r, "to"));
		return;
	}
	json_t *path = json_object_get(r, "path");
	for (size_t i = 0; i < json_array_size(path); i++) {
		const char *m = json_string_value(json_array_get(path, i));
		if (i == 0) {
			printf("%s\n", m);
			continue;
		}
		struct gi_buf kinds;
		gi_buf_init(&kinds, 0);
		edge_kinds(db, p, json_string_value(json_array_get(path, i - 1)), m, &kinds);
		printf("  -> %s  (%s)\n", m, gi_buf_str(&kinds));
		gi_buf_destroy(&kinds);
	}
	long long hops = jint(r, "hops");
	printf("%lld hop%s\n", hops, hops == 1 ? "" : "s");
}

/* path prints through print_path, which needs the database for the kinds. */
static void print_path_placeholder(json_t *r)
{
	(void)r;
}

/* mix xref graph --format plain: each file, then its dependencies with
 * their label (none for runtime). */
static void print_xref(json_t *r)
{
	size_t i, k;
	json_t *f, *d;
	json_array_foreach(json_object_get(r, "files"), i, f)
	{
		printf("%s\n", jstr(f, "file"));
		json_t *deps = json_object_get(f, "deps");
		json_array_foreach(deps, k, d)
		{
			const char *label = jstr(d, "label");
			bool runtime = strcmp(label, "runtime") == 0;
			printf("%s %s%s%s%s\n", k + 1 == json_array_size(deps) ? "`--" : "|--",
			       jstr(d, "file"), runtime ? "" : " (", runtime ? "" : label,
			       runtime ? "" : ")");
		}
	}
}

/* A query's command: its query, positional arguments and options come from
 * the registry (graph/query_list.h: the query whose command it is); the
 * printer of its text output is here. */
struct query_command {
	const char *command;
	void (*print)(json_t *r); /* NULL: `giulia query NAME`, JSON only */
};

static bool dependents_tests; /* --tests: list the test modules too */

static void print_dependents(json_t *r)
{
	long long tests = jint(r, "test_count");
	if (!dependents_tests && tests > 0) {
		/* the code a change breaks first; its tests counted apart */
		json_t *core = json_array(), *copy = json_copy(r);
		size_t i;
		json_t *m;
		json_array_foreach(json_object_get(r, "dependents"), i, m)
		{
			if (!json_is_true(json_object_get(m, "test")))
				json_array_append(core, m);
		}
		json_object_set_new(copy, "dependents", core);
		json_object_set_new(copy, "count", json_integer(jint(r, "count") - tests));
		print_neighbours(copy, "dependents");
		printf("and %lld test modules (--tests lists them)\n", tests);
		json_decref(copy);
		return;
	}
	print_neighbours(r, "dependents");
}

static void print_dependencies(json_t *r)
{
	print_neighbours(r, "dependencies");
}

static const struct query_command query_commands[] = {
    {"modules", print_modules},
    {"functions", print_functions},
    {"dependents", print_dependents},
    {"dependencies", print_dependencies},
    {"impact", print_impact_placeholder},
    {"cycles", print_cycles},
    {"hubs", print_hubs},
    {"coupling", print_coupling},
    {"complexity", print_complexity},
    {"dead-code", print_dead_code},
    {"path", print_path_placeholder},
    {"xref", print_xref},
    {"query", NULL},
};

/* Splits "Mod.Name.fun/2" into module "Mod.Name" and function "fun/2";
 * returns false when `spec` names a module only. */
static bool function_spec_split(const char *spec, char *module, size_t msize, const char **fun)
{
	const char *slash = strrchr(spec, '/');
	if (!slash)
		return false;
	const char *dot = NULL;
	for (const char *c = spec; c < slash; c++)
		if (*c == '.')
			dot = c;
	if (!dot || (size_t)(dot - spec) >= msize)
		return false;
	memcpy(module, spec, (size_t)(dot - spec));
	module[dot - spec] = '\0';
	*fun = dot + 1;
	return true;
}

static int query_error(const char *cmd, int rc, const struct kg_query_params *p, const char *db)
{
	switch (rc) {
	case GI_ENOENT:
		fprintf(stderr,
		        "giulia %s: no index database at %s; run `giulia index PATH` first "
		        "(or pass --project/--db)\n",
		        cmd, db);
		break;
	case GI_ECORRUPT:
		fprintf(stderr,
		        "giulia %s: %s is not a SQLite database (corrupt?); remove it and run "
		        "`giulia index` again\n",
		        cmd, db);
		break;
	case GI_EDBVERSION:
		fprintf(stderr,
		        "giulia %s: %s was made by a newer Giulia or is not a Giulia index; "
		        "use another --db or remove it\n",
		        cmd, db);
		break;
	case GI_ENOTFOUND:
		if (p->function)
			fprintf(stderr,
			        "giulia %s: unknown function %s.%s (see `giulia functions %s`)\n",
			        cmd, p->module, p->function, p->module);
		else
			fprintf(stderr, "giulia %s: unknown module '%s' (see `giulia modules`)\n",
			        cmd, p->module ? p->module : "?");
		break;
	case GI_EINVAL:
		fprintf(stderr, "giulia %s: invalid arguments\n", cmd);
		return CLI_EXIT_USAGE;
	default:
		fprintf(stderr, "giulia %s: %s: %s\n", cmd, db, gi_strerror(rc));
	}
	return cli_exit_code_for(rc);
}

static void print_runtime_rows(const char *title, json_t *rows, int max)
{
	printf("%s (%zu):\n", title, json_array_size(rows));
	size_t i;
	json_t *f;
	json_array_foreach(rows, i, f)
	{
		if ((int)i == max) {
			printf("  ... %zu more (--json lists them all)\n",
			       json_array_size(rows) - i);
			break;
		}
		const char *why = json_string_value(json_object_get(f, "static_reason"));
		printf("  %s.%s/%lld  %lld calls%s%s\n", jstr(f, "module"), jstr(f, "name"),
		       jint(f, "arity"), jint(f, "calls"), why ? "  static: " : "", why ? why : "");
	}
}

/* dead-code --node NODE --for MS: the static answer `r` split by the calls
 * the node makes in the window (cli/dead_runtime.h). */
static int dead_code_on_node(json_t *r, struct kg_db *db, const struct static_opts *o)
{
	struct obs_target t = {o->node, o->cookie, 0};
	int window = o->window_ms > 0 ? o->window_ms : 10000;
	json_t *split = NULL;
	int rc = cli_dead_code_runtime(db, r, &t, window, &split);
	if (rc) {
		fprintf(stderr, "giulia dead-code: %s: %s\n", o->node, gi_strerror(rc));
		return cli_exit_code_for(rc);
	}
	json_object_set_new(r, "runtime", split);
	if (o->json) {
		cli_json_print(r);
		return CLI_EXIT_OK;
	}
	printf("%s: %lld modules counted over %lld ms (%lld windows)\n", o->node,
	       jint(split, "modules_traced"), jint(split, "window_ms"), jint(split, "windows"));
	print_runtime_rows("called, but the static graph calls them dead (its gaps)",
	                   json_object_get(split, "called_but_static_dead"), 50);
	print_runtime_rows("dead statically and not called in the window",
	                   json_object_get(split, "dead_and_not_called"), 50);
	print_runtime_rows("referenced statically, never called in the window",
	                   json_object_get(split, "referenced_not_called"), 20);
	if (json_array_size(json_object_get(split, "modules_not_loaded")) > 0)
		printf("not loaded on the node (left out): %zu modules\n",
		       json_array_size(json_object_get(split, "modules_not_loaded")));
	return CLI_EXIT_OK;
}

/* A positional argument of the registry's parameter `q` (its CLI name is
 * not a flag: "MODULE", "[MODULE]", "FROM"). */
static bool positional(const struct kg_param *q)
{
	return q->cli && q->cli[0] != '-';
}

/* The positional arguments `args` into `p`, in the order of the query's
 * positional parameters (graph/query_list.h): a MODULE (Mod.fun/arity names
 * a function when the query takes one), or FROM and TO. */
static void positionals_set(const struct kg_query_def *def, const char *const *args, int nargs,
                            struct kg_query_params *p, char *module, size_t size)
{
	const struct kg_param *fun = kg_query_param_find(def, "function");
	int k = 0;
	for (const struct kg_param *q = def->params; q->name && k < nargs; q++) {
		if (!positional(q) || q->field == KG_FIELD_FUNCTION)
			continue;
		const char *v = args[k++];
		if (q->field == KG_FIELD_FROM)
			p->from = v;
		else if (q->field == KG_FIELD_TO)
			p->to = v;
		else if (q->field == KG_FIELD_MODULE)
			p->module = v;
		if (q->field == KG_FIELD_MODULE && fun && positional(fun) &&
		    function_spec_split(v, module, size, &p->function))
			p->module = module;
	}
}

/* `giulia query --list [--format text|markdown]`: the registry of static
 * queries; markdown is docs/API.md's reference (`make api-docs`). */
static int query_list(int argc, char **argv)
{
	bool markdown = false;
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--format") == 0 && i + 1 < argc &&
		    (strcmp(argv[i + 1], "markdown") == 0 || strcmp(argv[i + 1], "text") == 0))
			markdown = strcmp(argv[++i], "markdown") == 0;
		else
			return usage_error("query", "--list [--format text|markdown]",
			                   "unexpected argument ", argv[i]);
	}
	struct gi_buf b;
	gi_buf_init(&b, 0);
	if (markdown) {
		kg_query_registry_markdown(&b);
	} else {
		for (const struct kg_query_def *d = kg_query_defs; d->name; d++)
			gi_buf_printf(
			    &b, "%-18s %-4s %-34s %-28s giulia %s%s\n", d->name, d->method, d->path,
			    d->tool, d->command ? d->command : "query ", d->command ? "" : d->name);
	}
	fputs(gi_buf_str(&b), stdout);
	gi_buf_destroy(&b);
	return CLI_EXIT_OK;
}

static int query_run(const struct query_command *qc, int argc, char **argv, const char *usage)
{
	struct static_opts o;
	bool pretend = qc->print == NULL; /* `giulia query NAME` */
	const struct kg_query_def *def = pretend ? NULL : kg_query_def_by_command(argv[0]);
	if (!pretend && !def) {
		fprintf(stderr,
		        "giulia %s: no query of the registry (src/graph/query_list.h) "
		        "names this command\n",
		        argv[0]);
		return CLI_EXIT_FAILURE;
	}
	int required = 0, max_args = pretend ? 3 : 0;
	for (const struct kg_param *q = def ? def->params : NULL; q && q->name; q++) {
		if (positional(q) && q->field != KG_FIELD_FUNCTION) {
			max_args++;
			required += q->required;
		}
	}
	int rc = opts_parse(argc, argv, usage, max_args, &o);
	if (rc)
		return rc < 0 ? CLI_EXIT_OK : rc;
	if (o.nargs < (pretend ? 1 : required))
		return usage_message(argv[0], usage, "missing argument");
	const char *query = pretend ? o.args[0] : def->name;
	if (pretend)
		def = kg_query_def_find(query);
	struct kg_query_params p = {0};
	p.depth = o.depth;
	p.top = o.top;
	p.include_external = o.external;
	p.direct_only = o.direct;
	p.label = o.label;
	const struct kg_param *label = def ? kg_query_param_find(def, "label") : NULL;
	if (o.label && label && !kg_query_param_choice_ok(label, o.label)) {
		struct gi_buf msg;
		gi_buf_init(&msg, 0);
		gi_buf_puts(&msg, "--label is one of ");
		for (const char *c = label->choices; *c; c++)
			gi_buf_puts(&msg, *c == '|' ? ", " : (char[]){*c, '\0'});
		rc = usage_message(argv[0], usage, gi_buf_str(&msg));
		gi_buf_destroy(&msg);
		return rc;
	}
	char module[512];
	if (pretend) {
		p.module = o.nargs > 1 ? o.args[1] : NULL;
		if (p.module && function_spec_split(p.module, module, sizeof(module), &p.function))
			p.module = module;
		if (strcmp(query, "path") == 0 && o.nargs > 2) {
			p.from = o.args[1];
			p.to = o.args[2];
		}
	} else {
		positionals_set(def, (const char *const *)o.args, o.nargs, &p, module,
		                sizeof(module));
	}
	char *db_path = NULL;
	rc = cli_db_path_resolve(argv[0], o.db, o.project, &db_path);
	if (rc)
		return CLI_EXIT_FAILURE;
	struct kg_db *db = NULL;
	json_t *r = NULL;
	rc = kg_db_open(db_path, false, &db);
	if (!rc)
		kg_db_refresh_on_query(db, true);
	if (!rc)
		rc = kg_query(db, query, &p, &r);
	if (rc == GI_ENOTFOUND && p.from && !p.module) {
		/* say which end of the path is unknown */
		json_t *probe = NULL;
		struct kg_query_params q = p;
		q.module = p.from;
		p.module = kg_query(db, "module_details", &q, &probe) ? p.from : p.to;
		json_decref(probe);
	}
	if (rc) {
		if (rc == GI_EINVAL && pretend)
			fprintf(stderr, "giulia query: unknown query '%s' or missing parameters\n",
			        query);
		else
			rc = query_error(argv[0], rc, &p, db_path);
		kg_db_close(db);
		gi_free(db_path);
		return rc == GI_EINVAL ? CLI_EXIT_USAGE : rc;
	}
	if (!o.json && strcmp(query, "functions") == 0) {
		/* the rows carry lines; their file is the module's */
		json_t *details = NULL;
		if (kg_query(db, "module_details", &p, &details) == 0)
			json_object_set(r, "file", json_object_get(details, "file"));
		json_decref(details);
	}
	dependents_tests = o.tests;
	if (strcmp(query, "dead_code") == 0 && o.node) {
		rc = dead_code_on_node(r, db, &o);
		json_decref(r);
		kg_db_close(db);
		gi_free(db_path);
		return rc;
	}
	if (o.json || !qc->print)
		cli_json_print(r);
	else if (strcmp(query, "path") == 0)
		print_path(r, db, &p);
	else if (strcmp(query, "impact") == 0)
		print_impact(r, o.no_tests);
	else
		qc->print(r);
	json_decref(r);
	kg_db_close(db);
	gi_free(db_path);
	return CLI_EXIT_OK;
}

#define COMMON " [--project PATH] [--db FILE] [--json]"

#define U_MODULES      "" COMMON " [--external]"
#define U_FUNCTIONS    "MODULE" COMMON
#define U_DEPENDENTS   "MODULE" COMMON " [--direct] [--tests]"
#define U_DEPENDENCIES "MODULE" COMMON " [--external] [--direct]"
#define U_IMPACT       "MODULE|MOD.fun/arity [--depth N]" COMMON " [--external] [--direct] [--no-tests]"
#define U_CYCLES       "" COMMON
#define U_HUBS         "" COMMON " [--top N]"
#define U_COUPLING     "[MODULE]" COMMON " [--top N]"
#define U_COMPLEXITY   "[MODULE]" COMMON " [--top N]"
#define U_DEAD_CODE    "" COMMON " [--direct] [--node NODE [--for MS] [--cookie C]]"
#define U_PATH         "FROM TO" COMMON " [--external] [--direct]"
#define U_XREF         "[--label compile|export|runtime|compile-connected]" COMMON
#define U_QUERY                                                                            \
	"NAME [MODULE|MOD.fun/arity|FROM TO] [--depth N] [--top N]" COMMON " [--direct]\n" \
	"       giulia query --list [--format text|markdown]"

static const char *const query_usages[] = {
    U_MODULES,  U_FUNCTIONS,  U_DEPENDENTS, U_DEPENDENCIES, U_IMPACT, U_CYCLES, U_HUBS,
    U_COUPLING, U_COMPLEXITY, U_DEAD_CODE,  U_PATH,         U_XREF,   U_QUERY,
};

static int run_query_command(int argc, char **argv)
{
	if (strcmp(argv[0], "query") == 0 && argc > 1 && strcmp(argv[1], "--list") == 0)
		return query_list(argc, argv);
	for (size_t i = 0; i < sizeof(query_commands) / sizeof(query_commands[0]); i++)
		if (strcmp(query_commands[i].command, argv[0]) == 0)
			return query_run(&query_commands[i], argc, argv, query_usages[i]);
	return CLI_EXIT_USAGE;
}

/* ---- help ---------------------------------------------------------------- */

#define OPT_EXTERNAL                                                                  \
	{                                                                             \
		"--external", "include modules outside the project (OTP, deps)", NULL \
	}
#define OPT_DIRECT                                                                        \
	{                                                                                 \
		"--direct",                                                               \
		    "direct edges only: leave out dispatch (impl, callback, value, mfa, " \
		    "apply)",                                                             \
		    NULL                                                                  \
	}
#define OPT_END                  \
	{                        \
		NULL, NULL, NULL \
	}

static const struct cli_option index_options[] = {
    {"--beam DIR...",
     "also index the .beam files of these directories (several, or "
     "repeated)",
     NULL},
    {"--node NODE", "pull the object code of --apps from a live node first", NULL},
    {"--apps APP,...", "the applications --node pulls", NULL},
    {"--cookie C", "the cookie of --node", "$GIULIA_COOKIE, else ~/.erlang.cookie"},
    {"--db FILE", "the index database", "$GIULIA_DB, else PATH/.giulia/index.db"},
    {"--force", "parse every file again, changed or not", NULL},
    {"--no-build",
     "do not read the object code of the project's own applications under "
     "PATH/_build (read when --beam is not given)",
     NULL},
    {"--jobs N", "parser threads", "the number of cores"},
    {"--json", "print the summary as JSON", NULL},
    OPT_END,
};
static const struct cli_option external_options[] = {OPT_EXTERNAL, OPT_END};
static const struct cli_option dependents_options[] = {
    {"--tests", "list the test modules that depend on it too (counted apart otherwise)", NULL},
    OPT_DIRECT,
    OPT_END,
};
static const struct cli_option external_direct_options[] = {OPT_EXTERNAL, OPT_DIRECT, OPT_END};
static const struct cli_option impact_options[] = {
    {"--depth N", "how many steps of dependents and dependencies to follow", "2"},
    {"--no-tests", "leave test modules out of the dependents (text output)", NULL},
    OPT_EXTERNAL,
    OPT_DIRECT,
    OPT_END,
};
static const struct cli_option hubs_options[] = {
    {"--top N", "at most N modules", "all with in-degree >= 3"}, OPT_END};
static const struct cli_option top20_options[] = {{"--top N", "at most N rows", "20"}, OPT_END};
static const struct cli_option query_options[] = {
    {"--depth N", "depth of impact-like queries", "2"},
    {"--top N", "rows of ranked queries", "20"},
    OPT_DIRECT,
    {"--list", "list the static queries: name, REST route, MCP tool and command", NULL},
    {"--format FORMAT", "--list: text (a table) or markdown (docs/API.md's reference)", "text"},
    OPT_END,
};

#define STATIC_HELP(var, text, opts, example) \
	static const struct cli_help var = {text, opts, cli_static_options, 0, example}

static const struct cli_help index_help = {
    "Indexes every .ex and .exs file under PATH (default: the nearest directory upwards "
    "holding .giulia/ or mix.exs, never above the repository root (.git) or the "
    "outermost mix.exs, else the current one, said on stderr) into "
    "PATH/.giulia/index.db, which ignores itself in git (.giulia/.gitignore). The "
    "run is incremental: unchanged files are not parsed again. When PATH/_build holds "
    "the compiled code of the project's own applications (the apps its mix.exs files "
    "name), it fills in what source cannot show (generated functions, rewritten calls, "
    "origin beam); --beam names other compiled modules (.beam) instead, --node pulls "
    "them from a live node first.",
    index_options, NULL, CLI_EXITS_NODE,
    "giulia index ~/src/shop\ngiulia index . --beam _build/dev/lib/shop/ebin "
    "_build/dev/lib/plug/ebin"};
STATIC_HELP(modules_help,
            "Lists the project's modules: functions, public and private, total complexity "
            "and file.",
            external_options, "giulia modules --project ~/src/shop");
STATIC_HELP(functions_help,
            "Lists a module's functions: visibility, kind, file:line, cyclomatic and "
            "cognitive complexity, nesting.",
            NULL, "giulia functions Shop.Cart");
STATIC_HELP(dependents_help,
            "Modules that depend on MODULE, with the kinds of dependency (alias, import, "
            "use, require, call, struct, behaviour, capture, and dispatch); test modules "
            "are counted apart (--tests lists them; --json always has them, test: true).",
            dependents_options, "giulia dependents Shop.Repo");
STATIC_HELP(dependencies_help, "Modules MODULE depends on, with the kinds of dependency.",
            external_direct_options, "giulia dependencies Shop.Cart --external");
STATIC_HELP(impact_help,
            "The blast radius of a change: the transitive dependents (library code, then "
            "tests; beyond depth 1 with the module each comes through) and dependencies of "
            "a module up to --depth, with its risk and why; for MOD.fun/arity the "
            "transitive callers and callees.",
            impact_options, "giulia impact Shop.Repo --depth 3\ngiulia impact Shop.Cart.add/2");
STATIC_HELP(cycles_help, "Dependency cycles between modules (strongly connected components).", NULL,
            "giulia cycles");
STATIC_HELP(hubs_help,
            "Modules many others depend on (in-degree >= 3), by in-degree, with PageRank "
            "and instability (Ce / (Ca + Ce)).",
            hubs_options, "giulia hubs --top 10");
STATIC_HELP(coupling_help,
            "Pairs of modules by the calls between them and the distinct functions called; "
            "with MODULE, the pairs it is part of.",
            top20_options, "giulia coupling Shop.Cart");
STATIC_HELP(complexity_help,
            "The most complex functions, by cyclomatic then cognitive complexity, with "
            "file:line; with "
            "MODULE, that module's.",
            top20_options, "giulia complexity --top 10");
static const struct cli_option dead_code_options[] = {
    OPT_DIRECT,
    {"--node NODE",
     "also count, on this live node, the calls of every public function of "
     "the project's modules and split the answer by them",
     NULL},
    {"--for MS", "--node: how long calls are counted (one window per 64 modules)", "10000"},
    {"--cookie C", "--node: the node's cookie", "$GIULIA_COOKIE, else ~/.erlang.cookie"},
    OPT_END,
};
STATIC_HELP(dead_code_help,
            "Public functions no other project module reaches: unreferenced, reached from "
            "tests only, callbacks, or perhaps called on a module in a variable (dynamic); "
            "a library's public API is counted apart. With --node, the node's calls split "
            "the answer: dead code the node calls (what the static graph missed), dead code "
            "it does not call, and referenced code it never called in the window.",
            dead_code_options,
            "giulia dead-code\ngiulia dead-code --node shop@localhost --for 60000");
STATIC_HELP(path_help, "The shortest dependency path from FROM to TO, with each edge's kinds.",
            external_direct_options, "giulia path ShopWeb.CartController Shop.Repo");
static const struct cli_option xref_options[] = {
    {"--label compile|export|runtime|compile-connected",
     "only the dependencies of that kind, as mix xref graph --label", "every dependency"},
    OPT_END,
};
STATIC_HELP(xref_help,
            "Dependencies between the project's files labelled as mix xref graph labels them: "
            "compile (macros, use, @before_compile, module attributes evaluated at compile "
            "time), export (structs, import and require) and runtime (calls); "
            "compile-connected lists the files a compile dependency makes recompile.",
            xref_options, "giulia xref --label compile");
STATIC_HELP(query_help,
            "Any static query of docs/SCHEMA.md by name (summary, heatmap, module_details, "
            "change_risk, ...), printed as JSON; --list lists them all from their registry "
            "(src/graph/query_list.h) with their route, MCP tool and command.",
            query_options,
            "giulia query summary\ngiulia query module_details Shop.Cart\ngiulia query --list");

const struct cli_command cli_static_commands[] = {
    {"index", index_usage, "index an Elixir project into its knowledge graph", cmd_index,
     &index_help},
    {"modules", U_MODULES, "list the project's modules", run_query_command, &modules_help},
    {"functions", U_FUNCTIONS, "list a module's functions with complexity", run_query_command,
     &functions_help},
    {"dependents", U_DEPENDENTS, "modules that depend on MODULE", run_query_command,
     &dependents_help},
    {"dependencies", U_DEPENDENCIES, "modules MODULE depends on", run_query_command,
     &dependencies_help},
    {"impact", U_IMPACT, "blast radius of a module or function", run_query_command, &impact_help},
    {"cycles", U_CYCLES, "dependency cycles between modules", run_query_command, &cycles_help},
    {"hubs", U_HUBS, "modules many others depend on", run_query_command, &hubs_help},
    {"coupling", U_COUPLING, "pairs of modules by calls between them", run_query_command,
     &coupling_help},
    {"complexity", U_COMPLEXITY, "the most complex functions", run_query_command, &complexity_help},
    {"dead-code", U_DEAD_CODE, "public functions nobody in the project calls", run_query_command,
     &dead_code_help},
    {"path", U_PATH, "shortest dependency path between two modules", run_query_command, &path_help},
    {"xref", U_XREF, "compile/export/runtime dependencies between files, as mix xref",
     run_query_command, &xref_help},
    {"query", U_QUERY, "any static query by name, as JSON (see docs/SCHEMA.md)", run_query_command,
     &query_help},
    {NULL, NULL, NULL, NULL, NULL},
};
