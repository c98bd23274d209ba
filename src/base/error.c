/*
 * error.c - the columns of the error table in error.h.
 */
#include "base/error.h"

const char *gi_strerror(int code)
{
	switch (code) {
	case GI_OK:
		return "success";
#define GI_ERROR_TEXT(name, text, status, exit, hint) \
	case GI_E##name:                              \
		return text;
		GI_ERRNO_MAP(GI_ERROR_TEXT)
#undef GI_ERROR_TEXT
	default:
		return "unknown error";
	}
}

const char *gi_errname(int code)
{
	switch (code) {
	case GI_OK:
		return "OK";
#define GI_ERROR_NAME(name, text, status, exit, hint) \
	case GI_E##name:                              \
		return #name;
		GI_ERRNO_MAP(GI_ERROR_NAME)
#undef GI_ERROR_NAME
	default:
		return "UNKNOWN";
	}
}

int gi_error_http_status(int code)
{
	switch (code) {
	case GI_OK:
		return 200;
#define GI_ERROR_STATUS(name, text, status, exit, hint) \
	case GI_E##name:                                \
		return status;
		GI_ERRNO_MAP(GI_ERROR_STATUS)
#undef GI_ERROR_STATUS
	default:
		return 500;
	}
}

int gi_error_exit_code(int code)
{
	switch (code) {
	case GI_OK:
		return 0;
#define GI_ERROR_EXIT(name, text, status, exit, hint) \
	case GI_E##name:                              \
		return exit;
		GI_ERRNO_MAP(GI_ERROR_EXIT)
#undef GI_ERROR_EXIT
	default:
		return 1;
	}
}

const char *gi_error_hint(int code)
{
	switch (code) {
#define GI_ERROR_HINT(name, text, status, exit, hint) \
	case GI_E##name:                              \
		return hint;
		GI_ERRNO_MAP(GI_ERROR_HINT)
#undef GI_ERROR_HINT
	default:
		return "";
	}
}
