/*
 * main.c - entry point of the `giulia` binary: dispatches on the program name
 * (`giulia-observe`) and on the first argument (the command tables of cli.h).
 * Help is answered here for every command alike: `giulia help CMD`,
 * `giulia CMD --help` / `-h`, and `--version` anywhere.
 */
#include <stdio.h>
#include <string.h>

#include "base/runtime.h"
#include "cli/cli.h"

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static bool is_version(const char *a)
{
	return strcmp(a, "--version") == 0 || strcmp(a, "version") == 0;
}

int main(int argc, char **argv)
{
	gi_runtime_init();
	if (argc > 0 && strcmp(base_name(argv[0]), "giulia-observe") == 0)
		return cli_observe_main(argc, argv);
	if (argc < 2) {
		cli_general_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		cli_general_usage(stdout);
		return CLI_EXIT_OK;
	}
	if (strcmp(argv[1], "help") == 0)
		return cli_help_command(argc - 1, argv + 1);
	if (is_version(argv[1]) || (argc > 2 && strcmp(argv[2], "--version") == 0)) {
		printf("giulia %s\n", cli_version);
		return CLI_EXIT_OK;
	}
	const struct cli_command *c = cli_command_lookup(argv[1]);
	if (c) {
		if (cli_wants_help(argc - 1, argv + 1)) {
			cli_help_print(stdout, "giulia", c);
			return CLI_EXIT_OK;
		}
		return c->run(argc - 1, argv + 1);
	}
	const char *near = cli_command_suggest(NULL, argv[1]);
	if (near)
		fprintf(stderr, "giulia: unknown command '%s'; did you mean `giulia %s`?\n",
		        argv[1], near);
	else
		fprintf(stderr, "giulia: unknown command '%s'; `giulia help` lists them\n",
		        argv[1]);
	return CLI_EXIT_USAGE;
}
