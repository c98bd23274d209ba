/*
 * error.c - strings for the error table in error.h.
 */
#include "base/error.h"

const char *gi_strerror(int code)
{
	switch (code) {
	case GI_OK:
		return "success";
#define GI_ERROR_TEXT(name, text) \
	case GI_E##name:          \
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
#define GI_ERROR_NAME(name, text) \
	case GI_E##name:          \
		return #name;
		GI_ERRNO_MAP(GI_ERROR_NAME)
#undef GI_ERROR_NAME
	default:
		return "UNKNOWN";
	}
}
