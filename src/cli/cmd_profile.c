/*
 * cmd_profile.c - the profile commands of the giulia CLI (see cli.h).
 */
#include <stddef.h>

#include "cli/cli.h"

const struct cli_command cli_profile_commands[] = {
    {NULL, NULL, NULL, NULL},
};
