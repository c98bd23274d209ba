/*
 * cmd_observe.c - the observe commands of the giulia CLI (see cli.h).
 */
#include <stddef.h>

#include "cli/cli.h"

const struct cli_command cli_observe_commands[] = {
    {NULL, NULL, NULL, NULL},
};
