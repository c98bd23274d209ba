/*
 * Integration tests of the monitor under concurrent requests for one node,
 * on a real node and real daemons: several clients (forked processes, each
 * with its own HTTP connections) start, stop and start the observation of
 * the same node at once, and keep starting it while the node is killed, so
 * that a start retires the ended session of that node while the manager's
 * thread is still in the round that ended it (issue 28, item 2: a session
 * freed by a caller of obs_session_start under the manager's thread). Under
 * `make test SANITIZE=1` any use after free in the monitor is an ASan report,
 * which fails the suite; in every build the monitor must still answer and
 * hold a consistent state. No assertion is on time.
 * needs: erlang-base
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api_util.h"
#include "base/clock.h"
#include "harness.h"
#include "node_watch.h"
#include "support.h"

#define CLIENTS 4
#define ROUNDS  12

/* The status of the monitor's observation of `node`, or "" (none). */
static void observation_state(const struct td_daemon *m, const char *node, char *out, size_t size)
{
	json_t *s = NULL;
	out[0] = '\0';
	TH_ASSERT_INT_EQ(td_get(m, "/api/monitor/observe/status", &s), 200);
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(s, "observations"), i, o)
	{
		const char *n = json_string_value(json_object_get(o, "node"));
		const char *st = json_string_value(json_object_get(o, "state"));
		if (n && st && strcmp(n, node) == 0)
			snprintf(out, size, "%s", st);
	}
	json_decref(s);
}

/* One client: `rounds` of start, stop (wait_ms 100), start, stop. Any
 * answer is fine (200, 202, 404, 409, 502 ...) except none at all: the
 * monitor is gone. Exits 0, or 1 when the monitor stopped answering. */
static void client_run(const struct td_daemon *m, const char *start_body, const char *stop_body,
                       int rounds)
{
	for (int r = 0; r < rounds; r++) {
		if (td_post(m, "/api/monitor/observe/start", start_body, NULL) <= 0 ||
		    td_post(m, "/api/monitor/observe/stop", stop_body, NULL) <= 0 ||
		    td_post(m, "/api/monitor/observe/start", start_body, NULL) <= 0)
			_exit(1);
	}
	_exit(0);
}

/* Starts the observation of the node until a start succeeds (this one's or
 * another starter's: the file `flag` exists), a few ms apart; exits 0, or
 * 1 when the monitor stopped answering. */
static void starter_run(const struct td_daemon *m, const char *start_body, const char *flag)
{
	while (access(flag, F_OK) != 0) {
		int st = td_post(m, "/api/monitor/observe/start", start_body, NULL);
		if (st <= 0)
			_exit(1);
		if (st == 200) {
			FILE *f = fopen(flag, "w");
			if (f)
				fclose(f);
		}
		gi_clock_sleep_ms(5);
	}
	_exit(0);
}

static pid_t client_spawn(const struct td_daemon *m, const char *start_body, const char *stop_body,
                          int rounds)
{
	pid_t pid = fork();
	TH_ASSERT_MSG(pid >= 0, "fork failed");
	if (pid == 0)
		client_run(m, start_body, stop_body, rounds);
	return pid;
}

static void clients_wait(pid_t *pids, int n)
{
	for (int i = 0; i < n; i++) {
		int status = 0;
		TH_ASSERT_INT_EQ(waitpid(pids[i], &status, 0), pids[i]);
		TH_ASSERT_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		              "client %d: the monitor stopped answering", i);
	}
}

static void start_stop_start_of_one_node_from_several_clients(void)
{
	struct ts_beam node;
	memset(&node, 0, sizeof(node));
	ts_beam_start(&node, TS_BEAM_ERL_LONG, NULL, NULL);
	struct td_daemon w, m;
	td_worker_and_monitor(&w, &m);
	char start_body[1024], stop_body[512];
	snprintf(start_body, sizeof(start_body),
	         "{\"node\":\"%s\",\"cookie\":\"%s\",\"interval_ms\":250}", node.name, node.cookie);
	snprintf(stop_body, sizeof(stop_body), "{\"node\":\"%s\",\"wait_ms\":100}", node.name);

	/* Round one: the node lives; starts, stops and starts race. */
	pid_t pids[CLIENTS];
	for (int i = 0; i < CLIENTS; i++)
		pids[i] = client_spawn(&m, start_body, stop_body, ROUNDS);
	clients_wait(pids, CLIENTS);
	TH_ASSERT_INT_EQ(td_get(&m, "/health", NULL), 200);

	/* Round two: the node's session process is killed (it cannot say so),
	 * so the stop waits out its deadline and the session ends in the
	 * manager's own tick; meanwhile the other clients keep starting the
	 * node, and the first start after that end retires the ended session
	 * while the manager's thread is still in the round that ended it. */
	td_post(&m, "/api/monitor/observe/stop", stop_body, NULL);
	TH_ASSERT_INT_EQ(td_post(&m, "/api/monitor/observe/start", start_body, NULL), 200);
	char *r = ts_beam_eval(&node, TS_OURS_EXPR "[exit(P, kill) || P <- Ours], length(Ours).");
	TH_ASSERT_MSG(r && strstr(r, "{ok, 0}") == NULL, "no session process to kill: %s",
	              r ? r : "erl_call failed");
	free(r);
	char flag[600];
	snprintf(flag, sizeof(flag), "%s/started-again", th_tmpdir());
	pid_t stopper = fork();
	TH_ASSERT_MSG(stopper >= 0, "fork failed");
	if (stopper == 0)
		_exit(td_post(&m, "/api/monitor/observe/stop", stop_body, NULL) > 0 ? 0 : 1);
	for (int i = 0; i < CLIENTS - 1; i++) {
		pids[i] = fork();
		TH_ASSERT_MSG(pids[i] >= 0, "fork failed");
		if (pids[i] == 0)
			starter_run(&m, start_body, flag);
	}
	pids[CLIENTS - 1] = stopper;
	clients_wait(pids, CLIENTS);
	TH_ASSERT_INT_EQ(td_get(&m, "/health", NULL), 200);
	TH_ASSERT_INT_EQ(td_post(&m, "/api/monitor/observe/stop", stop_body, NULL) / 100, 2);
	ts_beam_stop(&node);

	/* Nothing runs on the stopped node, and the monitor says so. */
	char state[32];
	int64_t deadline = gi_clock_mono_ms() + 60000;
	for (;;) {
		observation_state(&m, node.name, state, sizeof(state));
		if (strcmp(state, "running") != 0 && strcmp(state, "starting") != 0)
			break;
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "still %s on a dead node", state);
		gi_clock_sleep_ms(100);
	}
	/* The monitor shuts down cleanly (under ASan: no leak, no report). */
	TH_ASSERT_INT_EQ(td_stop(&m), 0);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(start_stop_start_of_one_node_from_several_clients),
	    TH_END,
	};
	return th_main(argc, argv, "integration_races", tests);
}
