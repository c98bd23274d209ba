/*
 * cli.h - the command table of the `giulia` binary.
 *
 * Each area of the CLI lives in its own file (cmd_static.c, cmd_observe.c,
 * cmd_inspect.c, cmd_daemon.c, cmd_profile.c) and exports a table of
 * commands terminated by an entry whose name is NULL; main.c dispatches on
 * the first argument.
 * `giulia-observe` is the same binary under another name: main.c sends it to
 * cli_observe_main().
 *
 * Exit codes shared by all commands are below; commands that talk to nodes
 * add the distinct codes of cli_exit_code_for().
 */
#ifndef GIULIA_CLI_CLI_H
#define GIULIA_CLI_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

enum cli_exit {
	CLI_EXIT_OK = 0,
	CLI_EXIT_FAILURE = 1, /* the command ran and failed */
	CLI_EXIT_USAGE = 2,   /* wrong arguments */
	/* the command ran and found what it gates on, for CI: a rule broken
	 * (check, plan validate), a risky change (review) */
	CLI_EXIT_FINDINGS = 3,
	CLI_EXIT_EPMD = 10,
	CLI_EXIT_NONODE = 11,
	CLI_EXIT_COOKIE = 12,
	CLI_EXIT_TIMEOUT = 13,
	CLI_EXIT_NODEDOWN = 14,
	CLI_EXIT_OTPVERSION = 15,
	CLI_EXIT_BADRPC = 16,
	CLI_EXIT_CONNECT = 17, /* a daemon is not reachable */
	CLI_EXIT_NOCOOKIE = 18,
	CLI_EXIT_HANDSHAKE = 19,
	CLI_EXIT_NAMEREFUSED = 20,
};

/* One option of a command's help: "--depth N", its meaning, its default
 * (NULL: none). The list of a command ends with an entry whose flag is NULL. */
struct cli_option {
	const char *flag; /* "--depth N", "-n N", "--json" */
	const char *text; /* what it does, one sentence */
	const char *dflt; /* the default in words ("2"), or NULL */
};

/* Which exit codes besides 0/1/2 a command can return (bits). */
enum cli_exits {
	CLI_EXITS_NODE = 1,     /* talks to a live node: 10-16, 18-20 */
	CLI_EXITS_DAEMON = 2,   /* talks to a daemon: 17 */
	CLI_EXITS_FINDINGS = 4, /* gates CI: 3 */
};

/* The help of one command: the one source of `giulia help CMD`, `CMD
 * --help`, the man page, the completion scripts and docs/CLI.md's command
 * reference (help.c). Static data; all fields but description may be NULL. */
struct cli_help {
	const char *description;          /* what it does, in sentences */
	const struct cli_option *options; /* its own options */
	const struct cli_option *common;  /* options shared with other commands */
	int exits;                        /* enum cli_exits bits */
	const char *example;              /* one or more command lines */
};

/* A command: adding one is one entry in a table below (its file's), with a
 * struct cli_help beside it; main.c, help.c, the man page and the completion
 * pick it up from the table. */
struct cli_command {
	const char *name;
	const char *usage;                 /* one line: arguments and options */
	const char *summary;               /* one line: what it does */
	int (*run)(int argc, char **argv); /* argv[0] is the command name */
	const struct cli_help *help;       /* NULL: usage and summary only */
};

extern const struct cli_command cli_static_commands[];
extern const struct cli_command cli_observe_commands[];
extern const struct cli_command cli_inspect_commands[];
extern const struct cli_command cli_daemon_commands[];
extern const struct cli_command cli_profile_commands[];
extern const struct cli_command cli_mcp_commands[];
extern const struct cli_command cli_assist_commands[];
extern const struct cli_command cli_review_commands[];
extern const struct cli_command cli_contracts_commands[];
/* The subcommands of `giulia-observe` (start, stop, status). */
extern const struct cli_command cli_observe_program_commands[];

/* Every table of `giulia` commands, NULL-terminated (help.c). */
extern const struct cli_command *const cli_tables[];

/* The version printed by --version. */
extern const char cli_version[];

/* Prints the help of `c` (a command of program `prog`, "giulia" or
 * "giulia-observe") to `out`: usage, description, options with defaults,
 * exit codes, example. */
void cli_help_print(FILE *out, const char *prog, const struct cli_command *c);
/* The command of `table` named `name`, or NULL. */
const struct cli_command *cli_command_find(const struct cli_command *table, const char *name);
/* The command of any `giulia` table named `name`, or NULL. */
const struct cli_command *cli_command_lookup(const char *name);
/* The name in `table` (NULL: every `giulia` table) nearest to the mistyped
 * `name` (at most 2 edits, fewer than its length), or NULL. Borrowed. */
const char *cli_command_suggest(const struct cli_command *table, const char *name);
/* True when argv[1..argc-1] asks for help (--help or -h, before any "--"). */
bool cli_wants_help(int argc, char **argv);
/* The list of commands (`giulia`, `giulia --help`, `giulia help`). */
void cli_general_usage(FILE *out);
/* `giulia help [CMD | --man | --markdown | --completion bash|zsh]`. */
int cli_help_command(int argc, char **argv);
/* The options shared by commands, for their cli_help.common. */
extern const struct cli_option cli_node_options[];   /* --cookie, --cookie-file, --timeout */
extern const struct cli_option cli_static_options[]; /* --project, --db, --json */

/* The `giulia-observe` program (start/stop/status against the monitor). */
int cli_observe_main(int argc, char **argv);

/* Maps a GI_E* code to the CLI exit code (CLI_EXIT_FAILURE for most). */
int cli_exit_code_for(int gi_error);

/* ---- arguments shared by the commands (args.c) ---- */

/* A node name as `erl -sname` completes it: "demo" becomes "demo@HOST" with
 * this host's short name; a name with '@' is copied. Writes `out` of `size`
 * bytes; returns 0 or GI_ETOOBIG / GI_EINVAL (empty). */
int cli_node_name(const char *name, char *out, size_t size);
/* The cookie for a node: `cookie` when given, else the first line of
 * `cookie_file` (into `buf` of `size` bytes), else $RELEASE_COOKIE when
 * $GIULIA_COOKIE is unset, else NULL (the observer then reads GIULIA_COOKIE
 * or ~/.erlang.cookie). Returns 0, or prints why and returns
 * CLI_EXIT_USAGE / CLI_EXIT_NOCOOKIE. Borrowed result. */
int cli_cookie(const char *prog, const char *cookie, const char *cookie_file, char *buf,
               size_t size, const char **out);
/* The daemon URLs: the --worker/--monitor flag when given (cli_*_url_set),
 * else GIULIA_WORKER_URL / GIULIA_MONITOR_URL, else the loopback defaults. */
void cli_worker_url_set(const char *url);
void cli_monitor_url_set(const char *url);
const char *cli_worker_url(void);
const char *cli_monitor_url(void);
/* The project the static commands work on when none is given, found like
 * git and mix do: from the current directory upwards, never above the
 * repository root (the nearest directory holding .git) or, outside a
 * repository, above the outermost directory holding a mix.exs (or the
 * current directory when there is none), the nearest directory holding
 * .giulia/index.db, else the nearest holding mix.exs (the umbrella root
 * wins over an app when it has the index), else the current directory.
 * Caller frees *out with gi_free. */
int cli_project_find(char **out);
/* The index database of a static command `cmd`: `db` (--db) when given,
 * else $GIULIA_DB, else PROJECT/.giulia/index.db where PROJECT is `project`
 * (--project) or cli_project_find's. Caller frees *out; the error is printed. */
int cli_db_path_resolve(const char *cmd, const char *db, const char *project, char **out);
/* GET `path` from the worker (cli_worker_url); *status and *body (caller
 * decrefs; NULL when not JSON). Returns 0 or a GI_E* code (cmd_profile.c). */
int cli_worker_get(const char *path, int *status, json_t **body);
/* The width tables fit: $COLUMNS when a number, else the terminal's when
 * stdout is one, else 0 (no limit). */
int cli_columns(void);
/* Prints `v` (borrowed) to stdout as --json output is: indented, in its
 * keys' order, reals to 12 digits, and a newline. */
void cli_json_print(json_t *v);

#endif
