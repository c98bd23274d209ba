/*
 * exit.c - the mapping from error codes to the CLI's exit codes (see cli.h).
 * Kept apart from main.c so that programs linking the library without the
 * CLI's main (fuzz targets, tests) still have it.
 */
#include "base/error.h"
#include "cli/cli.h"

int cli_exit_code_for(int gi_error)
{
	switch (gi_error) {
	case 0:
		return CLI_EXIT_OK;
	case GI_EEPMD:
		return CLI_EXIT_EPMD;
	case GI_ENONODE:
		return CLI_EXIT_NONODE;
	case GI_ECOOKIE:
		return CLI_EXIT_COOKIE;
	case GI_ETIMEOUT:
		return CLI_EXIT_TIMEOUT;
	case GI_ENODEDOWN:
		return CLI_EXIT_NODEDOWN;
	case GI_EOTPVERSION:
		return CLI_EXIT_OTPVERSION;
	case GI_EBADRPC:
		return CLI_EXIT_BADRPC;
	case GI_ECONNECT:
		return CLI_EXIT_CONNECT;
	case GI_ENOCOOKIE:
		return CLI_EXIT_NOCOOKIE;
	case GI_EHANDSHAKE:
		return CLI_EXIT_HANDSHAKE;
	case GI_ENAMEREFUSED:
		return CLI_EXIT_NAMEREFUSED;
	default:
		return CLI_EXIT_FAILURE;
	}
}
