/*
 * Integration tests of giulia-observe as a user meets it, against a real
 * `giulia serve` and a real node: a module to trace that is not loaded is
 * named loudly at start (not discovered in the profile afterwards), and the
 * profile's text shows that error too.
 * needs:
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "product.h"
#include "support.h"

static void unloaded_module_is_named_at_start(void)
{
	struct ts_beam n;
	ts_beam_start(&n, TS_BEAM_ERL_LONG, NULL, NULL);
	char worker[256];
	ts_serve_start(worker, sizeof(worker));
	char bin[4096];
	snprintf(bin, sizeof(bin), "%s/giulia-observe", th_bindir());
	const char *start[] = {bin,          "start", n.name,    "--cookie",        n.cookie,
	                       "--interval", "300",   "--trace", "Demo.Nope,lists", NULL};
	char *out = NULL, *err = NULL;
	TH_ASSERT_MSG(ts_run(start, NULL, 120000, &out, &err) == 0, "start: %s", err ? err : "");
	TH_ASSERT_STR_CONTAINS(out, "observing ");
	/* no --overhead: the default budget, said at the start */
	TH_ASSERT_STR_CONTAINS(out, "counting calls under a 5.0% overhead budget");
	TH_ASSERT_STR_CONTAINS(err, "WARNING: module Demo.Nope is not loaded");
	TH_ASSERT(strstr(err, "module lists") == NULL);
	free(out);
	free(err);
	const char *stop[] = {bin, "stop", n.name, NULL};
	TH_ASSERT_MSG(ts_run(stop, NULL, 300000, &out, &err) == 0, "stop: %s", err ? err : "");
	/* the profile's text says so too */
	TH_ASSERT_STR_CONTAINS(out, "Errors and notes");
	TH_ASSERT_STR_CONTAINS(out, "Demo.Nope is not loaded");
	free(out);
	free(err);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(unloaded_module_is_named_at_start),
	    TH_END,
	};
	return th_main(argc, argv, "integration_cli_observe", tests);
}
