/*
 * Integration tests of what Giulia leaves in a node's atom table (issue 28,
 * item 6), on a real node: every distribution connection names its node,
 * and each new name is an atom the node never frees (the default limit,
 * 1,048,576, kills the node when reached). Giulia's names are stable (per
 * monitor, and per user and host for the CLI), so that pulses, top and
 * observations, however many, add no atom after the first. The node's
 * atom count is read from a second connection under one fixed name
 * (erl_call -h), whose own atom is made before the first reading.
 * needs: erlang-base
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"
#include "harness.h"
#include "support.h"

#define PULSES 50

/* The node's atom count, read under one fixed name. */
static long long atom_count(const struct ts_beam *n)
{
	char erl_call[512];
	char *out = NULL;
	const char *find[] = {
	    "sh", "-c", "ls -d /usr/lib/erlang/lib/erl_interface-*/bin/erl_call | tail -n 1", NULL};
	TH_ASSERT_INT_EQ(ts_run(find, NULL, 5000, &out, NULL), 0);
	snprintf(erl_call, sizeof(erl_call), "%s", out ? out : "erl_call");
	erl_call[strcspn(erl_call, "\n")] = '\0';
	free(out);
	out = NULL;
	const char *argv[] = {erl_call,    "-name",   n->name,
	                      "-c",        n->cookie, "-h",
	                      "atomcount", "-a",      "erlang system_info [atom_count]",
	                      NULL};
	TH_ASSERT_INT_EQ(ts_run(argv, NULL, 15000, &out, NULL), 0);
	long long v = strtoll(out ? out : "-1", NULL, 10);
	free(out);
	TH_ASSERT_MSG(v > 0, "no atom count from the node");
	return v;
}

static void cli_pulse(const struct ts_beam *n)
{
	char bin[1024];
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	const char *argv[] = {bin,        "pulse", n->name,  "--cookie", n->cookie,
	                      "--window", "50",    "--json", NULL};
	TH_ASSERT_INT_EQ(ts_run(argv, NULL, 60000, NULL, NULL), 0);
}

static void monitor_pulse(const struct td_daemon *m, const struct ts_beam *n)
{
	char path[512];
	snprintf(path, sizeof(path), "/api/runtime/pulse?node=%s&window_ms=50", n->name);
	TH_ASSERT_INT_EQ(td_get(m, path, NULL), 200);
}

static void observation(const struct td_daemon *m, const struct ts_beam *n)
{
	char body[1024];
	snprintf(body, sizeof(body), "{\"node\":\"%s\",\"cookie\":\"%s\",\"interval_ms\":250}",
	         n->name, n->cookie);
	TH_ASSERT_INT_EQ(td_post(m, "/api/monitor/observe/start", body, NULL), 200);
	/* A few snapshots, so that each observation runs the same code on the
	 * node (the first one makes the probe's atoms). */
	int64_t deadline = gi_clock_mono_ms() + 60000;
	for (;;) {
		json_t *s = NULL;
		TH_ASSERT_INT_EQ(td_get(m, "/api/monitor/observe/status", &s), 200);
		long long taken = json_integer_value(json_object_get(
		    json_array_get(json_object_get(s, "observations"), 0), "snapshots"));
		json_decref(s);
		if (taken >= 3)
			break;
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "fewer than 3 snapshots");
		gi_clock_sleep_ms(100);
	}
	snprintf(body, sizeof(body), "{\"node\":\"%s\",\"wait_ms\":30000}", n->name);
	int st = td_post(m, "/api/monitor/observe/stop", body, NULL);
	TH_ASSERT_MSG(st == 200 || st == 202, "observe/stop: %d", st);
}

static void pulses_and_observations_add_no_atom(void)
{
	struct ts_beam n;
	ts_beam_start(&n, TS_BEAM_ERL_LONG, NULL, NULL);
	struct td_daemon w, m;
	td_worker_and_monitor(&w, &m);
	char body[1024];
	snprintf(body, sizeof(body), "{\"node\":\"%s\",\"cookie\":\"%s\"}", n.name, n.cookie);
	TH_ASSERT_INT_EQ(td_post(&m, "/api/runtime/connect", body, NULL), 200);
	/* The first of each makes its names and the probe's atoms. */
	cli_pulse(&n);
	monitor_pulse(&m, &n);
	observation(&m, &n);
	long long before = atom_count(&n);
	before = atom_count(&n); /* the reading's own atoms exist now */
	for (int i = 0; i < PULSES; i++) {
		cli_pulse(&n);
		monitor_pulse(&m, &n);
	}
	observation(&m, &n);
	observation(&m, &n);
	long long after = atom_count(&n);
	TH_ASSERT_MSG(after == before,
	              "%d pulses from the CLI, %d from the monitor and 2 observations added %lld "
	              "atoms to the node",
	              PULSES, PULSES, after - before);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(pulses_and_observations_add_no_atom),
	    TH_END,
	};
	return th_main(argc, argv, "integration_atoms", tests);
}
