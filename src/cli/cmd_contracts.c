/*
 * cmd_contracts.c - the checks of docs/CHECKS.md on the command line:
 * `giulia contracts`, `giulia conventions`, `giulia structs [STRUCT]` and
 * `giulia duplicates`. Each is one kg_query of the same name, so `--json`
 * prints exactly what GET /api/checks/NAME and the MCP tools return; the
 * default output is one line per finding (file:line: severity check:
 * message), struct sites or clone group built from the same JSON. Each
 * command's options are its query's parameters in the registry
 * (graph/query_list.h: their `cli` flag).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/error.h"
#include "base/str.h"
#include "cli/cli.h"
#include "graph/query.h"
#include "graph/query_registry.h"

struct check_opts {
	const char *project, *db, *target;
	bool json;
	json_t *args;
	struct kg_query_params p;
};

static int check_usage_fail(const char *cmd, const char *usage, const char *what, const char *arg)
{
	fprintf(stderr, "giulia %s: %s%s\nusage: giulia %s %s\n", cmd, what, arg ? arg : "", cmd,
	        usage);
	return CLI_EXIT_USAGE;
}

/* Sets what the registry's parameter `f` of the command's query
 * (graph/query_list.h) names from the flag's `value` (NULL for a boolean
 * flag); 0 or an exit code. */
static int check_flag_set(const char *cmd, const char *usage, const struct kg_param *f,
                          const char *value, struct check_opts *o)
{
	int64_t v = 0;
	if (f->type == KG_PARAM_INTEGER && gi_parse_int64(value, 0, 1000000, &v))
		return check_usage_fail(cmd, usage, "not a number 0..1000000: ", value);
	if (f->field == KG_FIELD_MODULE)
		o->p.module = value;
	else if (f->field == KG_FIELD_EXTERNAL)
		o->p.include_external = true;
	else if (f->type == KG_PARAM_BOOLEAN)
		json_object_set_new(o->args, f->name, json_true());
	else if (f->type == KG_PARAM_INTEGER)
		json_object_set_new(o->args, f->name, json_integer(v));
	else
		json_object_set_new(o->args, f->name, json_string(value));
	return 0;
}

/* Parses argv[1..] with the options the registry gives the command's query
 * (its flags and its positional STRUCT); 0, -1 for --help, or an exit code. */
static int check_opts_parse(int argc, char **argv, const char *usage, struct check_opts *o)
{
	const char *cmd = argv[0];
	const struct kg_query_def *def = kg_query_def_by_command(cmd);
	const struct kg_param *positional = NULL;
	if (!def) {
		fprintf(stderr,
		        "giulia %s: no query of the registry (src/graph/query_list.h) "
		        "names this command\n",
		        cmd);
		return CLI_EXIT_FAILURE;
	}
	for (const struct kg_param *q = def->params; q->name; q++)
		if (q->cli && q->cli[0] != '-')
			positional = q;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
		const struct kg_param *f = a[0] == '-' ? kg_query_param_by_cli(def, a) : NULL;
		int rc = 0;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			printf("usage: giulia %s %s\n", cmd, usage);
			return -1;
		} else if (strcmp(a, "--json") == 0) {
			o->json = true;
		} else if (f && f->type == KG_PARAM_BOOLEAN) {
			rc = check_flag_set(cmd, usage, f, NULL, o);
		} else if (f || strcmp(a, "--project") == 0 || strcmp(a, "--db") == 0) {
			if (!next)
				return check_usage_fail(cmd, usage, "a value is missing after ", a);
			if (f)
				rc = check_flag_set(cmd, usage, f, next, o);
			else if (strcmp(a, "--project") == 0)
				o->project = next;
			else
				o->db = next;
			i++;
		} else if (a[0] == '-' && a[1] == '-') {
			return check_usage_fail(cmd, usage, "unknown option ", a);
		} else if (positional && !o->target) {
			o->target = a;
			rc = check_flag_set(cmd, usage, positional, a, o);
		} else {
			return check_usage_fail(cmd, usage, "unexpected argument ", a);
		}
		if (rc)
			return rc;
	}
	return 0;
}

static void print_findings(json_t *r)
{
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(r, "findings"), i, v)
	{
		const char *file = json_string_value(json_object_get(v, "file"));
		printf("%s:%lld: %s %s: %s\n", file ? file : "-",
		       (long long)json_integer_value(json_object_get(v, "line")),
		       json_string_value(json_object_get(v, "severity")),
		       json_string_value(json_object_get(v, "check")),
		       json_string_value(json_object_get(v, "message")));
	}
	long long total = json_integer_value(json_object_get(r, "total"));
	printf("%lld finding%s", total, total == 1 ? "" : "s");
	const char *key;
	json_object_foreach(json_object_get(r, "by_severity"), key, v)
	{
		printf(", %lld %s", (long long)json_integer_value(v), key);
	}
	if (total > (long long)json_array_size(json_object_get(r, "findings")))
		printf(" (first %zu shown; --limit N)",
		       json_array_size(json_object_get(r, "findings")));
	printf("\n");
	json_array_foreach(json_object_get(r, "unresolved_behaviours"), i, v)
	{
		printf("note: %s declares @behaviour %s, whose callbacks are unknown (not in the "
		       "project nor installed object code)\n",
		       json_string_value(json_object_get(v, "module")),
		       json_string_value(json_object_get(v, "behaviour")));
	}
}

static void print_sites(const char *what, json_t *list)
{
	size_t i;
	json_t *v;
	json_array_foreach(list, i, v)
	{
		const char *file = json_string_value(json_object_get(v, "file"));
		const char *fn = json_string_value(json_object_get(v, "function"));
		printf("    %s %s:%lld  %s%s%s\n", what, file ? file : "-",
		       (long long)json_integer_value(json_object_get(v, "line")),
		       json_string_value(json_object_get(v, "module")), fn ? "." : "",
		       fn ? fn : "");
	}
}

static void print_structs(json_t *r)
{
	size_t i;
	json_t *s;
	json_array_foreach(json_object_get(r, "structs"), i, s)
	{
		json_t *c = json_object_get(s, "counts");
		const char *file = json_string_value(json_object_get(s, "file"));
		printf("%%%s{}  %s  built %lld, updated %lld, matched %lld\n",
		       json_string_value(json_object_get(s, "struct")), file ? file : "(external)",
		       (long long)json_integer_value(json_object_get(c, "built")),
		       (long long)json_integer_value(json_object_get(c, "updated")),
		       (long long)json_integer_value(json_object_get(c, "matched")));
		print_sites("built  ", json_object_get(s, "built"));
		print_sites("updated", json_object_get(s, "updated"));
		print_sites("matched", json_object_get(s, "matched"));
	}
	printf("%lld struct%s\n", (long long)json_integer_value(json_object_get(r, "total")),
	       json_integer_value(json_object_get(r, "total")) == 1 ? "" : "s");
}

static void print_duplicates(json_t *r)
{
	size_t i;
	json_t *g;
	json_array_foreach(json_object_get(r, "groups"), i, g)
	{
		json_t *members = json_object_get(g, "members");
		printf("type-%lld clone, %lld nodes, %zu copies:\n",
		       (long long)json_integer_value(json_object_get(g, "type")),
		       (long long)json_integer_value(json_object_get(g, "size")),
		       json_array_size(members));
		print_sites("", members);
	}
	printf("%lld clone group%s (bodies of at least %lld nodes: %lld)\n",
	       (long long)json_integer_value(json_object_get(r, "total")),
	       json_integer_value(json_object_get(r, "total")) == 1 ? "" : "s",
	       (long long)json_integer_value(json_object_get(r, "min_size")),
	       (long long)json_integer_value(json_object_get(r, "bodies")));
}

/* Runs query `name` (the command's own name) and prints it. */
static int check_run(int argc, char **argv, const char *usage, void (*print)(json_t *))
{
	const char *cmd = argv[0];
	struct check_opts o = {0};
	o.args = json_object();
	int exit_code = check_opts_parse(argc, argv, usage, &o);
	if (exit_code) {
		json_decref(o.args);
		return exit_code < 0 ? CLI_EXIT_OK : exit_code;
	}
	char *db_path = NULL;
	if (cli_db_path_resolve(cmd, o.db, o.project, &db_path)) {
		json_decref(o.args);
		return CLI_EXIT_FAILURE;
	}
	o.p.args = o.args;
	struct kg_db *db = NULL;
	json_t *r = NULL;
	int rc = kg_db_open(db_path, false, &db);
	if (!rc)
		kg_db_refresh_on_query(db, true);
	if (!rc)
		rc = kg_query(db, cmd, &o.p, &r);
	exit_code = CLI_EXIT_OK;
	if (rc == GI_ENOENT) {
		fprintf(stderr, "giulia %s: no index database at %s; run `giulia index PATH`\n",
		        cmd, db_path);
		exit_code = CLI_EXIT_FAILURE;
	} else if (rc == GI_EINVAL || rc == GI_ENOTFOUND) {
		const char *why = kg_query_error_message();
		fprintf(stderr, "giulia %s: %s\n", cmd, why ? why : gi_strerror(rc));
		exit_code = rc == GI_EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE;
	} else if (rc) {
		fprintf(stderr, "giulia %s: %s: %s\n", cmd, db_path, gi_strerror(rc));
		exit_code = cli_exit_code_for(rc);
	} else if (o.json) {
		char *s = json_dumps(r, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		if (s)
			puts(s);
		free(s);
	} else {
		print(r);
	}
	json_decref(r);
	kg_db_close(db);
	gi_free(db_path);
	json_decref(o.args);
	return exit_code;
}

static const char contracts_usage[] =
    "[--module MODULE] [--check ID] [--limit N] [--project PATH] [--db FILE] [--json]";
static const char conventions_usage[] =
    "[--module MODULE] [--check ID] [--max-nesting N] [--max-complexity N] [--tests] "
    "[--limit N] [--project PATH] [--db FILE] [--json]";
static const char structs_usage[] = "[STRUCT] [--external] [--project PATH] [--db FILE] [--json]";
static const char duplicates_usage[] =
    "[--min-size N] [--module MODULE] [--tests] [--limit N] [--project PATH] [--db FILE] "
    "[--json]";

static int cmd_contracts(int argc, char **argv)
{
	return check_run(argc, argv, contracts_usage, print_findings);
}

static int cmd_conventions(int argc, char **argv)
{
	return check_run(argc, argv, conventions_usage, print_findings);
}

static int cmd_structs(int argc, char **argv)
{
	return check_run(argc, argv, structs_usage, print_structs);
}

static int cmd_duplicates(int argc, char **argv)
{
	return check_run(argc, argv, duplicates_usage, print_duplicates);
}

static const struct cli_option contracts_options[] = {
    {"--module MODULE", "only findings in MODULE and the modules nested in it", NULL},
    {"--check ID", "only the findings of one check (docs/CHECKS.md)", NULL},
    {"--limit N", "at most N findings listed (the counts cover all)", "1000"},
    {NULL, NULL, NULL},
};

static const struct cli_option conventions_options[] = {
    {"--module MODULE", "only findings in MODULE and the modules nested in it", NULL},
    {"--check ID", "only the findings of one check (docs/CHECKS.md)", NULL},
    {"--max-nesting N", "deep_nesting: report functions nesting deeper than N", "4"},
    {"--max-complexity N", "high_complexity: report cyclomatic complexity above N", "9"},
    {"--tests", "check test modules too", NULL},
    {"--limit N", "at most N findings listed (the counts cover all)", "1000"},
    {NULL, NULL, NULL},
};

static const struct cli_option structs_options[] = {
    {"--external", "also structs defined outside the project (%MapSet{}, %URI{})", NULL},
    {NULL, NULL, NULL},
};

static const struct cli_option duplicates_options[] = {
    {"--min-size N", "smallest clause body compared, in syntax nodes", "25"},
    {"--module MODULE", "only groups with a copy in MODULE or a module nested in it", NULL},
    {"--tests", "compare test modules too", NULL},
    {"--limit N", "at most N groups listed", "100"},
    {NULL, NULL, NULL},
};

static const struct cli_help contracts_help = {
    "Behaviour integrity and specs: modules missing a required callback of a behaviour they "
    "declare (the behaviour from the project or from installed OTP/Elixir object code), "
    "@impl on a function that is no callback, @impl without a behaviour, and @specs without "
    "a function (docs/CHECKS.md).",
    contracts_options, cli_static_options, 0,
    "giulia contracts\ngiulia contracts --module Shop --check missing_callback --json"};

static const struct cli_help conventions_help = {
    "Convention checks, each with an id and a severity: missing @moduledoc, public functions "
    "without @doc in documented modules, apply/3 with a literal module and function, "
    "String.to_atom on non-literals, deep nesting and high complexity (thresholds "
    "overridable; docs/CHECKS.md).",
    conventions_options, cli_static_options, 0,
    "giulia conventions\ngiulia conventions --check atom_from_input --json"};

static const struct cli_help structs_help = {
    "Struct lifecycle: for each struct of the project (or STRUCT), where it is built "
    "(%S{...}, struct/2), updated (%S{s | ...}) and matched (in patterns), with file and "
    "line.",
    structs_options, cli_static_options, 0, "giulia structs\ngiulia structs Shop.Order --json"};

static const struct cli_help duplicates_help = {
    "Structural clones of function clause bodies: type-1 (identical but for layout and "
    "comments) and type-2 (identical once variables and literals are abstracted), grouped "
    "and ranked by size times copies (docs/CHECKS.md).",
    duplicates_options, cli_static_options, 0,
    "giulia duplicates\ngiulia duplicates --min-size 40 --json"};

const struct cli_command cli_contracts_commands[] = {
    {"contracts", contracts_usage,
     "behaviour callbacks, @impl and orphan @specs checked against the code", cmd_contracts,
     &contracts_help},
    {"conventions", conventions_usage,
     "convention checks: docs, apply/3, to_atom, nesting, complexity", cmd_conventions,
     &conventions_help},
    {"structs", structs_usage, "where each struct is built, updated and matched", cmd_structs,
     &structs_help},
    {"duplicates", duplicates_usage, "structural clones of function bodies, ranked by size",
     cmd_duplicates, &duplicates_help},
    {NULL, NULL, NULL, NULL, NULL},
};
