/*
 * main.c - entry point of the `giulia` binary: dispatches on the program name
 * (`giulia-observe`) and on the first argument (the command tables of cli.h).
 */
#include <stdio.h>
#include <string.h>

#include "base/runtime.h"
#include "cli/cli.h"

#ifndef GIULIA_VERSION
#define GIULIA_VERSION "0.1.0"
#endif

static const struct cli_command *const tables[] = {
    cli_static_commands,  cli_observe_commands, cli_daemon_commands,
    cli_profile_commands, cli_mcp_commands,     cli_assist_commands,
};

static void usage(FILE *out)
{
	fprintf(out,
	        "giulia %s - static and runtime code intelligence for BEAM systems\n\n"
	        "usage: giulia COMMAND [ARGS]\n\ncommands:\n",
	        GIULIA_VERSION);
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (const struct cli_command *c = tables[t]; c->name; c++)
			fprintf(out, "  %-12s %s\n", c->name, c->summary);
	fprintf(out,
	        "\n`giulia COMMAND --help` shows a command's options; docs/CLI.md has them all.\n");
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

int main(int argc, char **argv)
{
	gi_runtime_init();
	if (argc > 0 && strcmp(base_name(argv[0]), "giulia-observe") == 0)
		return cli_observe_main(argc, argv);
	if (argc < 2 || strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
	}
	if (strcmp(argv[1], "version") == 0 || strcmp(argv[1], "--version") == 0) {
		printf("giulia %s\n", GIULIA_VERSION);
		return CLI_EXIT_OK;
	}
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (const struct cli_command *c = tables[t]; c->name; c++)
			if (strcmp(c->name, argv[1]) == 0)
				return c->run(argc - 1, argv + 1);
	fprintf(stderr, "giulia: unknown command '%s'; `giulia help` lists them\n", argv[1]);
	return CLI_EXIT_USAGE;
}
