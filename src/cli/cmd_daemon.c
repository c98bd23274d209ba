/*
 * cmd_daemon.c - the daemon commands of the giulia CLI (see cli.h).
 */
#include <stddef.h>

#include "cli/cli.h"

const struct cli_command cli_daemon_commands[] = {
    {NULL, NULL, NULL, NULL},
};

#include <stdio.h>

int cli_observe_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "giulia-observe: not built yet\n");
	return CLI_EXIT_FAILURE;
}
