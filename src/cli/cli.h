/*
 * cli.h - the command table of the `giulia` binary.
 *
 * Each area of the CLI lives in its own file (cmd_static.c, cmd_observe.c,
 * cmd_daemon.c, cmd_profile.c) and exports a table of commands terminated by
 * an entry whose name is NULL; main.c dispatches on the first argument.
 * `giulia-observe` is the same binary under another name: main.c sends it to
 * cli_observe_main().
 *
 * Exit codes shared by all commands are below; commands that talk to nodes
 * add the distinct codes of cli_exit_code_for().
 */
#ifndef GIULIA_CLI_CLI_H
#define GIULIA_CLI_CLI_H

enum cli_exit {
	CLI_EXIT_OK = 0,
	CLI_EXIT_FAILURE = 1, /* the command ran and failed */
	CLI_EXIT_USAGE = 2,   /* wrong arguments */
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

struct cli_command {
	const char *name;
	const char *usage;                 /* one line: arguments and options */
	const char *summary;               /* one line: what it does */
	int (*run)(int argc, char **argv); /* argv[0] is the command name */
};

extern const struct cli_command cli_static_commands[];
extern const struct cli_command cli_observe_commands[];
extern const struct cli_command cli_daemon_commands[];
extern const struct cli_command cli_profile_commands[];
extern const struct cli_command cli_mcp_commands[];
extern const struct cli_command cli_assist_commands[];

/* The `giulia-observe` program (start/stop/status against the monitor). */
int cli_observe_main(int argc, char **argv);

/* Maps a GI_E* code to the CLI exit code (CLI_EXIT_FAILURE for most). */
int cli_exit_code_for(int gi_error);

#endif
