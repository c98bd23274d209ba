/*
 * Integration tests of the test support itself: real BEAM nodes of each kind
 * come up, answer a second connection, and go away with the test.
 * needs: erlang-base elixir
 */
#include <stdlib.h>

#include "harness.h"
#include "support.h"

static void elixir_long_node_answers(void)
{
	struct ts_beam n;
	ts_beam_start(&n, TS_BEAM_ELIXIR_LONG, NULL, NULL);
	char *r = ts_beam_eval(&n, "is_list(code:which('Elixir.Kernel')).");
	TH_ASSERT_STR_CONTAINS(r, "true");
	free(r);
}

static void erlang_short_node_answers(void)
{
	struct ts_beam n;
	ts_beam_start(&n, TS_BEAM_ERL_SHORT, NULL, NULL);
	char *r = ts_beam_eval(&n, "code:which('Elixir.Kernel').");
	TH_ASSERT_STR_CONTAINS(r, "non_existing");
	free(r);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(elixir_long_node_answers),
	    TH_TEST(erlang_short_node_answers),
	    TH_END,
	};
	return th_main(argc, argv, "integration_support", tests);
}
