/*
 * product.c - the whole product from an end-to-end test (see product.h).
 */
#include "product.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "support.h"

const char *ts_target_build(const char *name)
{
	static char ebin[4096];
	char script[4096];
	snprintf(ebin, sizeof(ebin), "%s/%s-ebin", th_tmpdir(), name);
	snprintf(script, sizeof(script), "%s/tests/fixtures/targets/build.sh", th_srcdir());
	const char *argv[] = {script, name, ebin, NULL};
	char *err = NULL;
	int st = ts_run(argv, NULL, 300000, NULL, &err);
	TH_ASSERT_MSG(st == 0, "building the %s target failed (%d): %.2000s", name, st,
	              err ? err : "");
	free(err);
	return ebin;
}

const char *ts_target_index(const char *worker_url, const char *name)
{
	static char copy[4096];
	char root[4096], url[256], body[4200];
	snprintf(root, sizeof(root), "%s/tests/fixtures/targets/%s", th_srcdir(), name);
	snprintf(copy, sizeof(copy), "%s/%s", th_tmpdir(), name);
	const char *cp[] = {"cp", "-r", root, copy, NULL};
	TH_ASSERT_INT_EQ(ts_run(cp, NULL, 30000, NULL, NULL), 0);
	snprintf(url, sizeof(url), "%s/api/index/scan", worker_url);
	snprintf(body, sizeof(body), "{\"path\": \"%s\"}", copy);
	TH_ASSERT_INT_EQ(ts_http("POST", url, body, NULL, NULL), 200);
	return copy;
}

int ts_product_run(bool observe, const char *const *args, char **out)
{
	char bin[4096];
	snprintf(bin, sizeof(bin), "%s/%s", th_bindir(), observe ? "giulia-observe" : "giulia");
	const char *argv[24];
	int n = 0;
	argv[n++] = bin;
	for (int i = 0; args[i] && n < 23; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	char *err = NULL;
	int st = ts_run(argv, NULL, 300000, out, &err);
	if (st != 0)
		fprintf(stderr, "giulia %s: exit %d: %s\n", args[0], st, err ? err : "");
	free(err);
	return st;
}

static void stop_daemon(void *arg)
{
	pid_t *pid = arg;
	if (*pid > 0)
		ts_stop(*pid, 20000);
}

void ts_serve_start(char *worker_url, size_t size)
{
	ts_serve_start_with(worker_url, size, NULL);
}

void ts_serve_start_with(char *worker_url, size_t size, const char *const *extra)
{
	static pid_t pid;
	char data[4096], wlisten[64], mlisten[64], murl[64], bin[4096], log[4096], health[128];
	int wport = ts_free_port(), mport = ts_free_port();
	snprintf(data, sizeof(data), "%s/data", th_tmpdir());
	snprintf(wlisten, sizeof(wlisten), "127.0.0.1:%d", wport);
	snprintf(mlisten, sizeof(mlisten), "127.0.0.1:%d", mport);
	snprintf(worker_url, size, "http://127.0.0.1:%d", wport);
	snprintf(murl, sizeof(murl), "http://127.0.0.1:%d", mport);
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	snprintf(log, sizeof(log), "%s/serve.log", th_tmpdir());
	const char *serve[24] = {
	    bin,  "serve", "--worker-listen", wlisten, "--monitor-listen", mlisten, "--data",
	    data, NULL};
	for (size_t i = 0, n = 8; extra && extra[i] && n + 1 < sizeof(serve) / sizeof(serve[0]);
	     i++)
		serve[n++] = extra[i];
	pid = ts_spawn(serve, log);
	TH_ASSERT(pid > 0);
	th_defer(stop_daemon, &pid);
	snprintf(health, sizeof(health), "%s/health", worker_url);
	TH_ASSERT_MSG(ts_http_wait(health, 60000), "giulia serve did not come up; log %s", log);
	snprintf(health, sizeof(health), "%s/health", murl);
	TH_ASSERT_MSG(ts_http_wait(health, 60000), "the monitor did not come up; log %s", log);
	setenv("GIULIA_WORKER_URL", worker_url, 1);
	setenv("GIULIA_MONITOR_URL", murl, 1);
}

char *ts_observe_until(const char *const *start, const char *node, int snapshots)
{
	char *out = NULL;
	TH_ASSERT_INT_EQ(ts_product_run(true, start, &out), 0);
	free(out);
	for (int i = 0; i < 600; i++) {
		const char *status[] = {"status", "--json", NULL};
		out = NULL;
		TH_ASSERT_INT_EQ(ts_product_run(true, status, &out), 0);
		json_t *st = json_loads(out ? out : "", 0, NULL);
		free(out);
		json_t *obs = json_array_get(json_object_get(st, "observations"), 0);
		json_int_t n = json_integer_value(json_object_get(obs, "snapshots"));
		json_decref(st);
		if (n >= snapshots)
			break;
		usleep(200 * 1000);
	}
	const char *stop[] = {"stop", node, NULL};
	out = NULL;
	TH_ASSERT_INT_EQ(ts_product_run(true, stop, &out), 0);
	fprintf(stderr, "%s\n", out ? out : "");
	return out;
}

json_t *ts_profile_latest(void)
{
	const char *json[] = {"profile", "latest", "--format", "json", NULL};
	char *out = NULL;
	TH_ASSERT_INT_EQ(ts_product_run(false, json, &out), 0);
	json_t *p = json_loads(out ? out : "", 0, NULL);
	free(out);
	TH_ASSERT(p != NULL);
	return p;
}
