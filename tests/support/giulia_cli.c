/*
 * giulia_cli.c - runs bin/giulia from a test (see giulia_cli.h).
 */
#include "giulia_cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "support.h"

struct ts_giulia_result ts_giulia_run(const char *const *args, int timeout_ms)
{
	char bin[4096];
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	const char *argv[16] = {bin};
	int n = 1;
	for (const char *const *a = args; *a && n < 15; a++)
		argv[n++] = *a;
	argv[n] = NULL;
	struct ts_giulia_result r = {0};
	r.status = ts_run(argv, NULL, timeout_ms, &r.out, &r.err);
	if (r.out && r.out[0] == '{')
		r.json = json_loads(r.out, 0, NULL);
	return r;
}

void ts_giulia_result_free(struct ts_giulia_result *r)
{
	free(r->out);
	free(r->err);
	json_decref(r->json);
	memset(r, 0, sizeof(*r));
}
