/*
 * giulia_cli.h - runs the built bin/giulia from a test and keeps what it
 * printed, parsed as JSON when it printed a JSON object (`--json`).
 */
#ifndef GIULIA_TESTS_GIULIA_CLI_H
#define GIULIA_TESTS_GIULIA_CLI_H

#include <jansson.h>

struct ts_giulia_result {
	int status;      /* exit status, -1 on a signal or timeout (see ts_run) */
	char *out, *err; /* what it printed (malloc'd, may be NULL) */
	json_t *json;    /* `out` parsed when it starts with '{', else NULL */
};

/* Runs bin/giulia with the NULL-terminated arguments `args` (at most 14),
 * waiting at most `timeout_ms`. Free the result with ts_giulia_result_free. */
struct ts_giulia_result ts_giulia_run(const char *const *args, int timeout_ms);
/* Frees what `r` holds and zeroes it. */
void ts_giulia_result_free(struct ts_giulia_result *r);

#endif
