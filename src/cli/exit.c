/*
 * exit.c - the mapping from error codes to the CLI's exit codes (see cli.h):
 * a column of the error table (base/error.h), which cli.h's CLI_EXIT_* name;
 * tests/unit/base.c checks that the two agree.
 * Kept apart from main.c so that programs linking the library without the
 * CLI's main (fuzz targets, tests) still have it.
 */
#include "base/error.h"
#include "cli/cli.h"

int cli_exit_code_for(int gi_error)
{
	return gi_error_exit_code(gi_error);
}
