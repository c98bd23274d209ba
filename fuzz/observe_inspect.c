/*
 * observe_inspect.c - libFuzzer target for what the inspection views
 * (src/observe/inspect.c) take from outside: a process named by a user (a
 * pid's text or a registered name, checked before anything is sent) and the
 * process probe's answer from a node, decoded to JSON and rewritten (any
 * shape: never a crash, every {M, F, A} either a string or null).
 * needs:
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/runtime.h"
#include "observe/inspect.h"

int cli_exit_code_for(int gi_error);
int cli_exit_code_for(int gi_error)
{
	return gi_error ? 1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gi_runtime_init();
	char *who = gi_strndup((const char *)data, size);
	struct obs_process_request r = {.who = who, .window_ms = (int)(size % 7000)};
	char err[256];
	if (obs_process_request_check(&r, err, sizeof(err)) != 0 && err[0] == '\0')
		abort(); /* a refusal always says why */
	gi_free(who);
	json_t *p = json_loadb((const char *)data, size, 0, NULL);
	if (json_is_object(p)) {
		obs_process_json_rewrite(p);
		json_t *cf = json_object_get(p, "current_function");
		if (cf && !json_is_string(cf) && !json_is_null(cf))
			abort();
	}
	json_decref(p);
	return 0;
}
