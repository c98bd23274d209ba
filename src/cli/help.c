/*
 * help.c - the one source of the command line's help: `giulia help CMD` and
 * `CMD --help` print a command's struct cli_help; `giulia help --man` writes
 * the man page giulia(1), `--markdown` the command reference of docs/CLI.md
 * (a test checks that the file holds exactly it), `--completion bash|zsh`
 * the completion scripts. All of them walk the same tables, so a command
 * added to a table has its help, man page entry and completion at once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

#ifndef GIULIA_VERSION
#define GIULIA_VERSION "0.1.0"
#endif

const char cli_version[] = GIULIA_VERSION;

const struct cli_command *const cli_tables[] = {
    cli_static_commands,
    cli_observe_commands,
    cli_inspect_commands, /* cmd_inspect.c */
    cli_daemon_commands,
    cli_profile_commands,
    cli_mcp_commands,
    cli_assist_commands,
    cli_review_commands,    /* cmd_review.c */
    cli_contracts_commands, /* cmd_contracts.c */
    NULL,
};

const struct cli_option cli_node_options[] = {
    {"--cookie C", "the node's cookie (never printed)",
     "--cookie-file, $GIULIA_COOKIE, $RELEASE_COOKIE, else ~/.erlang.cookie"},
    {"--cookie-file FILE", "read the cookie from FILE", NULL},
    {"--timeout MS", "deadline of each call to the node", "5000"},
    {NULL, NULL, NULL},
};

const struct cli_option cli_static_options[] = {
    {"--project PATH", "the project whose index to read",
     "the nearest directory upwards holding .giulia/ or mix.exs, up to the repository "
     "root"},
    {"--db FILE", "the index database", "$GIULIA_DB, else PROJECT/.giulia/index.db"},
    {"--json", "print the query's JSON result (as the REST API answers)", NULL},
    {NULL, NULL, NULL},
};

#define HELP_WIDTH 79

/* Writes `text` word-wrapped to HELP_WIDTH, every line but the first
 * indented by `indent` columns, the first starting at column `col`. */
static void wrap(FILE *out, const char *text, int col, int indent)
{
	const char *p = text;
	bool first = true;
	while (*p) {
		if (*p == '\n') {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
			p++;
			first = true;
			continue;
		}
		size_t word = strcspn(p, " \n");
		if (!first && col + 1 + (int)word > HELP_WIDTH) {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
			first = true;
		}
		if (!first) {
			fputc(' ', out);
			col++;
		}
		fwrite(p, 1, word, out);
		col += (int)word;
		first = false;
		p += word;
		while (*p == ' ')
			p++;
	}
	fputc('\n', out);
}

static void options_print(FILE *out, const struct cli_option *opts)
{
	for (const struct cli_option *o = opts; o && o->flag; o++) {
		char text[1024];
		if (o->dflt)
			snprintf(text, sizeof(text), "%s (default: %s)", o->text, o->dflt);
		else
			snprintf(text, sizeof(text), "%s", o->text);
		int w = fprintf(out, "  %-20s ", o->flag);
		if (w > 23) {
			fprintf(out, "\n%23s", "");
			w = 23;
		}
		wrap(out, text, w, 23);
	}
}

/* The exit codes of a command, as lines of "CODE meaning". */
static const char *const exit_lines_base[] = {
    "0", "success", "1", "the command ran and failed", "2", "usage error (wrong arguments)", NULL};
static const char *const exit_lines_node[] = {
    "10", "epmd not reachable on the node's host",
    "11", "no such node registered with epmd",
    "12", "the node rejected the cookie",
    "13", "the node did not answer in time",
    "14", "the node went down during the command",
    "15", "the node's OTP is too old",
    "16", "a remote call failed on the node",
    "18", "no cookie found (give --cookie or --cookie-file)",
    "19", "the node closed the handshake",
    "20", "the node refused our name",
    NULL};
static const char *const exit_lines_daemon[] = {"17", "the daemon is not reachable", NULL};
static const char *const exit_lines_findings[] = {
    "3", "the command ran and found what it gates on (see above)", NULL};

static void exits_print(FILE *out, int exits)
{
	fprintf(out, "\nexit codes:\n");
	const char *const *sets[] = {exit_lines_base,
	                             exits & CLI_EXITS_FINDINGS ? exit_lines_findings : NULL,
	                             exits & CLI_EXITS_NODE ? exit_lines_node : NULL,
	                             exits & CLI_EXITS_DAEMON ? exit_lines_daemon : NULL};
	for (size_t s = 0; s < 4; s++)
		for (const char *const *l = sets[s]; l && *l; l += 2)
			fprintf(out, "  %-3s %s\n", l[0], l[1]);
}

/* Writes a usage line wrapped to HELP_WIDTH, breaking only between the
 * top-level words (never inside "[--cookie C | --cookie-file FILE]"). */
static void usage_print(FILE *out, const char *prog, const struct cli_command *c)
{
	int indent = fprintf(out, "usage: %s %s", prog, c->name);
	int col = indent;
	if (indent > 40)
		indent = 8;
	int first = 0; /* words of "PROG NAME" still to print on a new form's line */
	for (const char *p = c->usage; *p;) {
		/* A newline in the usage starts another form of the command
		 * ("text PATTERN ...\n       giulia search code ..."): a line of its
		 * own, under the first. */
		while (*p == ' ' || *p == '\n') {
			if (*p == '\n') {
				fputs("\n      ", out);
				col = indent = 6;
				first = 2;
			}
			p++;
		}
		const char *q = p;
		int depth = 0;
		while (*q && (depth > 0 || (*q != ' ' && *q != '\n'))) {
			if (*q == '[')
				depth++;
			else if (*q == ']' && depth > 0)
				depth--;
			q++;
		}
		if (q == p)
			break;
		int word = (int)(q - p);
		if (!first && col + 1 + word > HELP_WIDTH && col > indent) {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
		}
		fprintf(out, " %.*s", word, p);
		col += 1 + word;
		if (first > 0 && --first == 0)
			indent = col > 40 ? 8 : col;
		p = q;
	}
	fputs("\n\n", out);
}

void cli_help_print(FILE *out, const char *prog, const struct cli_command *c)
{
	usage_print(out, prog, c);
	const struct cli_help *h = c->help;
	if (!h || !h->description) {
		wrap(out, c->summary, 0, 0);
	} else {
		wrap(out, h->description, 0, 0);
	}
	if (h && (h->options || h->common)) {
		fprintf(out, "\noptions:\n");
		options_print(out, h->options);
		options_print(out, h->common);
		fprintf(out, "  %-20s %s\n", "-h, --help", "show this help");
	}
	exits_print(out, h ? h->exits : 0);
	if (h && h->example) {
		fprintf(out, "\nexample:\n");
		for (const char *p = h->example; *p;) {
			size_t n = strcspn(p, "\n");
			fprintf(out, "  %.*s\n", (int)n, p);
			p += n;
			if (*p)
				p++;
		}
	}
}

const struct cli_command *cli_command_find(const struct cli_command *table, const char *name)
{
	for (const struct cli_command *c = table; c && c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

const struct cli_command *cli_command_lookup(const char *name)
{
	for (size_t t = 0; cli_tables[t]; t++) {
		const struct cli_command *c = cli_command_find(cli_tables[t], name);
		if (c)
			return c;
	}
	return NULL;
}

/* Optimal string alignment distance (edits, adjacent swaps counting one),
 * capped: names longer than 63 bytes are never near. */
static int edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 63 || lb > 63)
		return 99;
	int d[64][64];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			int cost = a[i - 1] != b[j - 1];
			int best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < best)
				best = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

static void suggest_in(const struct cli_command *table, const char *name, const char **best,
                       int *best_d)
{
	for (const struct cli_command *c = table; c && c->name; c++) {
		int d = edit_distance(name, c->name);
		if (d < *best_d) {
			*best_d = d;
			*best = c->name;
		}
	}
}

const char *cli_command_suggest(const struct cli_command *table, const char *name)
{
	const char *best = NULL;
	int best_d = 3;
	if (table)
		suggest_in(table, name, &best, &best_d);
	else
		for (size_t t = 0; cli_tables[t]; t++)
			suggest_in(cli_tables[t], name, &best, &best_d);
	if (best && best_d >= (int)strlen(name))
		return NULL;
	return best;
}

bool cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return false;
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return true;
	}
	return false;
}

/* ---- the man page ---- */

/* Writes `s` escaped for roff: backslashes and hyphens, and a line that
 * would start with a control character. */
static void roff(FILE *out, const char *s)
{
	bool bol = true;
	for (const char *p = s; *p; p++) {
		if (bol && (*p == '.' || *p == '\''))
			fputs("\\&", out);
		if (*p == '\\')
			fputs("\\e", out);
		else if (*p == '-')
			fputs("\\-", out);
		else
			fputc(*p, out);
		bol = *p == '\n';
	}
}

static void man_options(FILE *out, const struct cli_option *opts)
{
	for (const struct cli_option *o = opts; o && o->flag; o++) {
		fputs(".TP\n.B ", out);
		roff(out, o->flag);
		fputc('\n', out);
		roff(out, o->text);
		if (o->dflt) {
			fputs(" (default: ", out);
			roff(out, o->dflt);
			fputc(')', out);
		}
		fputc('\n', out);
	}
}

static void man_command(FILE *out, const char *prog, const struct cli_command *c)
{
	fputs(".SS ", out);
	roff(out, prog);
	fputc(' ', out);
	roff(out, c->name);
	fputs("\n.nf\n", out);
	roff(out, prog);
	fputc(' ', out);
	roff(out, c->name);
	fputc(' ', out);
	roff(out, c->usage);
	fputs("\n.fi\n.PP\n", out);
	roff(out, c->help && c->help->description ? c->help->description : c->summary);
	fputc('\n', out);
	if (c->help) {
		man_options(out, c->help->options);
		man_options(out, c->help->common);
		if (c->help->example) {
			fputs(".PP\nExample:\n.PP\n.RS\n.nf\n", out);
			roff(out, c->help->example);
			fputs("\n.fi\n.RE\n", out);
		}
	}
}

static void man_exits(FILE *out, const char *const *lines)
{
	for (const char *const *l = lines; *l; l += 2) {
		fprintf(out, ".TP\n.B %s\n", l[0]);
		roff(out, l[1]);
		fputc('\n', out);
	}
}

static void man_page(FILE *out)
{
	fprintf(out, ".TH GIULIA 1 \"\" \"giulia %s\" \"User Commands\"\n", cli_version);
	fputs(".SH NAME\ngiulia, giulia\\-observe \\- static and runtime code intelligence for "
	      "BEAM (Elixir and Erlang) systems\n",
	      out);
	fputs(".SH SYNOPSIS\n.B giulia\n.I COMMAND\n[\\fIARGS\\fR]\n.br\n.B giulia\\-observe\n"
	      ".I start|stop|status\n[\\fIARGS\\fR]\n",
	      out);
	fputs(".SH DESCRIPTION\nGiulia indexes Elixir source or .beam object code into a "
	      "knowledge graph in SQLite, attaches to live BEAM nodes as a hidden C node (nothing "
	      "loaded on the target, nothing left behind), and fuses both into profiles with "
	      "ranked, evidence\\-backed advice. Every command answers \\fB\\-\\-help\\fR; "
	      "\\fBgiulia help\\fR \\fICOMMAND\\fR prints the same text as this page.\n",
	      out);
	fputs(".SH COMMANDS\n", out);
	for (size_t t = 0; cli_tables[t]; t++)
		for (const struct cli_command *c = cli_tables[t]; c->name; c++)
			man_command(out, "giulia", c);
	for (const struct cli_command *c = cli_observe_program_commands; c->name; c++)
		man_command(out, "giulia-observe", c);
	fputs(".SH EXIT STATUS\n", out);
	man_exits(out, exit_lines_base);
	man_exits(out, exit_lines_node);
	man_exits(out, exit_lines_daemon);
	fputs(".SH ENVIRONMENT\n"
	      ".TP\n.B GIULIA_WORKER_URL\nthe worker (default http://127.0.0.1:4000); "
	      "\\fB\\-\\-worker\\fR URL overrides it\n"
	      ".TP\n.B GIULIA_MONITOR_URL\nthe monitor (default http://127.0.0.1:4001); "
	      "\\fB\\-\\-monitor\\fR URL overrides it\n"
	      ".TP\n.B GIULIA_TOKEN\nbearer token sent to the daemons\n"
	      ".TP\n.B RELEASE_COOKIE, GIULIA_COOKIE\nthe cookie of live nodes\n"
	      ".TP\n.B GIULIA_DB\nthe index database of the static commands\n"
	      ".TP\n.B COLUMNS\nthe width tables fit (default: the terminal's)\n",
	      out);
	fputs(".SH SEE ALSO\n.BR erl (1),\n.BR epmd (1)\n", out);
}

/* ---- docs/CLI.md's command reference ---- */

static void md_options(FILE *out, const struct cli_option *opts)
{
	for (const struct cli_option *o = opts; o && o->flag; o++)
		fprintf(out, "- `%s`: %s%s%s%s\n", o->flag, o->text, o->dflt ? " (default: " : "",
		        o->dflt ? o->dflt : "", o->dflt ? ")" : "");
}

static void md_command(FILE *out, const char *prog, const struct cli_command *c)
{
	fprintf(out, "#### %s %s\n\n    %s %s %s\n\n", prog, c->name, prog, c->name, c->usage);
	fprintf(out, "%s\n\n", c->help && c->help->description ? c->help->description : c->summary);
	if (c->help && (c->help->options || c->help->common)) {
		md_options(out, c->help->options);
		md_options(out, c->help->common);
		fputc('\n', out);
	}
	int exits = c->help ? c->help->exits : 0;
	fprintf(out, "Exit codes: 0, 1, 2%s%s%s.\n\n",
	        exits & CLI_EXITS_FINDINGS ? ", 3 (findings)" : "",
	        exits & CLI_EXITS_NODE ? ", 10-16, 18-20 (node)" : "",
	        exits & CLI_EXITS_DAEMON ? ", 17 (daemon not reachable)" : "");
	if (c->help && c->help->example) {
		fputs("Example:\n\n", out);
		for (const char *p = c->help->example; *p;) {
			size_t n = strcspn(p, "\n");
			fprintf(out, "    %.*s\n", (int)n, p);
			p += n;
			if (*p)
				p++;
		}
		fputc('\n', out);
	}
}

static void markdown(FILE *out)
{
	for (size_t t = 0; cli_tables[t]; t++)
		for (const struct cli_command *c = cli_tables[t]; c->name; c++)
			md_command(out, "giulia", c);
	for (const struct cli_command *c = cli_observe_program_commands; c->name; c++)
		md_command(out, "giulia-observe", c);
}

/* ---- completion ---- */

static void words_options(FILE *out, const struct cli_option *opts)
{
	for (const struct cli_option *o = opts; o && o->flag; o++) {
		size_t n = strcspn(o->flag, " ,=");
		if (o->flag[0] == '-')
			fprintf(out, " %.*s", (int)n, o->flag);
	}
}

static void words_command(FILE *out, const struct cli_command *c)
{
	fputs("--help", out);
	if (c->help) {
		words_options(out, c->help->options);
		words_options(out, c->help->common);
	}
}

static void bash_cases(FILE *out, const struct cli_command *table)
{
	for (const struct cli_command *c = table; c->name; c++) {
		fprintf(out, "\t\t%s) opts=\"", c->name);
		words_command(out, c);
		fputs("\" ;;\n", out);
	}
}

static void bash_completion(FILE *out)
{
	fputs("# bash completion for giulia and giulia-observe (giulia help --completion bash)\n"
	      "_giulia() {\n"
	      "\tlocal cur=${COMP_WORDS[COMP_CWORD]} cmds opts=\"\"\n"
	      "\tif [ \"$1\" = giulia-observe ] || [ \"${1##*/}\" = giulia-observe ]; then\n"
	      "\t\tcmds=\"help",
	      out);
	for (const struct cli_command *c = cli_observe_program_commands; c->name; c++)
		fprintf(out, " %s", c->name);
	fputs("\"\n\telse\n\t\tcmds=\"help", out);
	for (size_t t = 0; cli_tables[t]; t++)
		for (const struct cli_command *c = cli_tables[t]; c->name; c++)
			fprintf(out, " %s", c->name);
	fputs("\"\n\tfi\n"
	      "\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"$cmds --help --version\" -- \"$cur\"))\n"
	      "\t\treturn\n\tfi\n"
	      "\tif [ \"${COMP_WORDS[1]}\" = help ]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"$cmds\" -- \"$cur\"))\n"
	      "\t\treturn\n\tfi\n"
	      "\tif [ \"$1\" = giulia-observe ] || [ \"${1##*/}\" = giulia-observe ]; then\n"
	      "\t\tcase ${COMP_WORDS[1]} in\n",
	      out);
	bash_cases(out, cli_observe_program_commands);
	fputs("\t\tesac\n\telse\n\t\tcase ${COMP_WORDS[1]} in\n", out);
	for (size_t t = 0; cli_tables[t]; t++)
		bash_cases(out, cli_tables[t]);
	fputs("\t\tesac\n\tfi\n"
	      "\tif [[ $cur == -* ]]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
	      "\telse\n"
	      "\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n"
	      "\tfi\n"
	      "}\n"
	      "complete -o default -F _giulia giulia giulia-observe\n",
	      out);
}

/* A summary for zsh's _describe: colons escaped. */
static void zsh_described(FILE *out, const struct cli_command *c)
{
	fprintf(out, "\t\t'%s:", c->name);
	for (const char *p = c->summary; *p; p++) {
		if (*p == ':')
			fputs("\\:", out);
		else if (*p == '\'')
			fputs("'\\''", out);
		else
			fputc(*p, out);
	}
	fputs("'\n", out);
}

static void zsh_cases(FILE *out, const struct cli_command *table)
{
	for (const struct cli_command *c = table; c->name; c++) {
		fprintf(out, "\t\t%s) opts=(", c->name);
		words_command(out, c);
		fputs(") ;;\n", out);
	}
}

static void zsh_completion(FILE *out)
{
	fputs("#compdef giulia giulia-observe\n"
	      "# zsh completion for giulia and giulia-observe (giulia help --completion zsh)\n"
	      "_giulia() {\n"
	      "\tlocal -a cmds opts\n"
	      "\tif [[ $service == giulia-observe ]]; then\n"
	      "\t\tcmds=(\n",
	      out);
	for (const struct cli_command *c = cli_observe_program_commands; c->name; c++)
		zsh_described(out, c);
	fputs("\t\t)\n\telse\n\t\tcmds=(\n", out);
	for (size_t t = 0; cli_tables[t]; t++)
		for (const struct cli_command *c = cli_tables[t]; c->name; c++)
			zsh_described(out, c);
	fputs("\t\t)\n\tfi\n"
	      "\tif (( CURRENT == 2 )); then\n"
	      "\t\t_describe 'command' cmds\n"
	      "\t\treturn\n\tfi\n"
	      "\tcase $words[2] in\n",
	      out);
	for (size_t t = 0; cli_tables[t]; t++)
		zsh_cases(out, cli_tables[t]);
	zsh_cases(out, cli_observe_program_commands);
	fputs("\tesac\n"
	      "\tif [[ $PREFIX == -* ]]; then\n"
	      "\t\tcompadd -- $opts\n"
	      "\telse\n"
	      "\t\t_files\n"
	      "\tfi\n"
	      "}\n"
	      "_giulia \"$@\"\n",
	      out);
}

static void general_usage(FILE *out)
{
	fprintf(out,
	        "giulia %s - static and runtime code intelligence for BEAM systems\n\n"
	        "usage: giulia COMMAND [ARGS]\n\ncommands:\n",
	        cli_version);
	for (size_t t = 0; cli_tables[t]; t++)
		for (const struct cli_command *c = cli_tables[t]; c->name; c++)
			fprintf(out, "  %-12s %s\n", c->name, c->summary);
	fprintf(out, "\n`giulia help COMMAND` or `giulia COMMAND --help` shows a command's "
	             "options,\ndefaults, exit codes and an example; `man giulia` has them all.\n");
}

int cli_help_command(int argc, char **argv)
{
	if (argc < 2) {
		general_usage(stdout);
		return CLI_EXIT_OK;
	}
	const char *what = argv[1];
	if (strcmp(what, "--man") == 0) {
		man_page(stdout);
		return CLI_EXIT_OK;
	}
	if (strcmp(what, "--markdown") == 0) {
		markdown(stdout);
		return CLI_EXIT_OK;
	}
	if (strcmp(what, "--completion") == 0) {
		if (argc > 2 && strcmp(argv[2], "bash") == 0) {
			bash_completion(stdout);
			return CLI_EXIT_OK;
		}
		if (argc > 2 && strcmp(argv[2], "zsh") == 0) {
			zsh_completion(stdout);
			return CLI_EXIT_OK;
		}
		fprintf(stderr, "giulia help: --completion takes bash or zsh\n");
		return CLI_EXIT_USAGE;
	}
	if (strcmp(what, "--help") == 0 || strcmp(what, "-h") == 0) {
		general_usage(stdout);
		return CLI_EXIT_OK;
	}
	const struct cli_command *c = cli_command_lookup(what);
	if (c) {
		cli_help_print(stdout, "giulia", c);
		return CLI_EXIT_OK;
	}
	const char *near = cli_command_suggest(NULL, what);
	fprintf(stderr, "giulia help: unknown command '%s'%s%s%s; `giulia help` lists them\n", what,
	        near ? " (did you mean `" : "", near ? near : "", near ? "`?)" : "");
	return CLI_EXIT_USAGE;
}

void cli_general_usage(FILE *out)
{
	general_usage(out);
}
