/*
 * node_watch.c - watching a real node while Giulia observes it (see
 * node_watch.h).
 */
#include "node_watch.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "harness.h"

void ts_beam_wait_answer(const struct ts_beam *n, const char *expr, const char *want,
                         int timeout_ms, const char *what)
{
	int64_t deadline = gi_clock_mono_ms() + timeout_ms;
	char last[1024] = "";
	for (;;) {
		char *r = ts_beam_eval(n, expr);
		bool ok = r && strstr(r, want);
		snprintf(last, sizeof(last), "%s", r ? r : "(no answer)");
		free(r);
		if (ok)
			return;
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "node %s %s: %s", n->name, what, last);
		gi_clock_sleep_ms(100);
	}
}

pid_t ts_observer_fork(const struct obs_session_config *cfg)
{
	pid_t child = fork();
	TH_ASSERT(child >= 0);
	if (child == 0) {
		struct obs_manager *m = NULL;
		struct obs_callbacks cb = {NULL, NULL, NULL};
		if (obs_manager_new(&cb, &m) != 0)
			_exit(1);
		char *id = NULL;
		if (obs_session_start(m, cfg, &id) != 0)
			_exit(1);
		for (;;)
			pause();
	}
	return child;
}
