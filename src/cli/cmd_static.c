/*
 * cmd_static.c - the static commands of the giulia CLI (see cli.h).
 */
#include <stddef.h>

#include "cli/cli.h"

const struct cli_command cli_static_commands[] = {
    {NULL, NULL, NULL, NULL},
};
