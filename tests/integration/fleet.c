/*
 * Integration tests of the fleet features (issue 19, docs/API.md "GET
 * /metrics", docs/ALERTS.md): both daemons' /metrics checked by Debian's
 * promtool and scraped by a real Prometheus server started here on
 * loopback; alert rules from a file as series; one monitor observing
 * several real nodes while one of them is frozen (SIGSTOP); and
 * `giulia-observe start --cluster` on a real three-node cluster. Every wait
 * polls with a generous deadline; nothing asserts on time.
 * needs: erlang-base prometheus
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api_util.h"
#include "base/alloc.h"
#include "product.h"

#define WAIT_MS 120000

/* A plain Erlang node with a process calling lists:reverse/1 in a loop. */
static const char *BUSY_EVAL =
    "F = fun L() -> lists:reverse([1,2,3]), timer:sleep(2), L() end, spawn(F).";

static void need_prometheus(void)
{
	TH_NEED(th_have_program("promtool"), "prometheus", "promtool is not installed");
	TH_NEED(th_have_program("prometheus"), "prometheus", "prometheus is not installed");
}

/* A worker and a monitor pushing to it (extra monitor arguments, may be NULL). */
static void daemons_start(struct td_daemon *w, struct td_daemon *m, const char *const *extra)
{
	td_worker(w, NULL);
	snprintf(m->data, sizeof(m->data), "%s/monitor", th_tmpdir());
	const char *args[16] = {"--worker", w->url};
	int n = 2;
	for (int i = 0; extra && extra[i] && n < 15; i++)
		args[n++] = extra[i];
	args[n] = NULL;
	td_start(m, "monitor", args);
}

static void observe(const struct td_daemon *m, const struct ts_beam *node, int interval_ms,
                    const char *trace)
{
	char body[1024];
	/* with tracing, every call counted (overhead 0): the tests name
	 * functions whose series must be there, not estimates of them */
	snprintf(body, sizeof(body), "{\"node\":\"%s\",\"cookie\":\"%s\",\"interval_ms\":%d%s%s%s}",
	         node->name, node->cookie, interval_ms,
	         trace ? ",\"overhead\":0,\"trace_modules\":[\"" : "", trace ? trace : "",
	         trace ? "\"]" : "");
	json_t *r = NULL;
	int st = td_post(m, "/api/monitor/observe/start", body, &r);
	TH_ASSERT_MSG(st == 200, "observe/start %s: %d %s", node->name, st,
	              json_string_value(json_object_get(r, "error")));
	json_decref(r);
}

/* The snapshots the monitor's observation of `node` has taken (-1: none). */
static long snapshots_of(const struct td_daemon *m, const char *node, long *failures)
{
	json_t *r = NULL;
	TH_ASSERT_INT_EQ(td_get(m, "/api/monitor/observe/status", &r), 200);
	long n = -1;
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(r, "observations"), i, o)
	{
		if (strcmp(json_string_value(json_object_get(o, "node")), node) == 0 &&
		    strcmp(json_string_value(json_object_get(o, "state")), "running") == 0) {
			n = (long)json_integer_value(json_object_get(o, "snapshots"));
			if (failures)
				*failures =
				    (long)json_integer_value(json_object_get(o, "failures"));
		}
	}
	json_decref(r);
	return n;
}

static void wait_snapshots(const struct td_daemon *m, const char *node, long want)
{
	int64_t deadline = gi_clock_mono_ms() + WAIT_MS;
	while (snapshots_of(m, node, NULL) < want) {
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "%s never reached %ld snapshots", node,
		              want);
		gi_clock_sleep_ms(100);
	}
}

static char *metrics_get(const struct td_daemon *d)
{
	char url[128];
	snprintf(url, sizeof(url), "%s/metrics", d->url);
	char *text = NULL;
	TH_ASSERT_INT_EQ(ts_http("GET", url, NULL, NULL, &text), 200);
	TH_ASSERT(text != NULL);
	return text;
}

static void promtool_check(const char *text, const char *what)
{
	const char *argv[] = {"promtool", "check", "metrics", NULL};
	char *out = NULL, *err = NULL;
	int st = ts_run(argv, text, 60000, &out, &err);
	TH_ASSERT_MSG(st == 0, "promtool check metrics on the %s's /metrics: exit %d: %s%s", what,
	              st, out ? out : "", err ? err : "");
	free(out);
	free(err);
}

/* GET /metrics with an Accept header, over a raw socket: the whole response. */
static char *metrics_raw(int port, const char *accept)
{
	int fd = td_connect(port);
	TH_ASSERT(fd >= 0);
	char req[512];
	snprintf(req, sizeof(req),
	         "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: %s\r\nConnection: "
	         "close\r\n\r\n",
	         accept);
	TH_ASSERT(td_send_all(fd, req, strlen(req)));
	size_t cap = 1 << 20, len = 0;
	char *buf = gi_malloc(cap + 1);
	for (;;) {
		struct pollfd p = {fd, POLLIN, 0};
		if (poll(&p, 1, 30000) != 1)
			break;
		ssize_t n = recv(fd, buf + len, cap - len, 0);
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len == cap)
			break;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	TH_ASSERT(f != NULL);
	fputs(text, f);
	fclose(f);
}

/* A rule that fires on any live node, and one that never does. */
static const char *RULES = "{\"version\":1,\"rules\":["
                           "{\"name\":\"any_process\",\"metric\":\"process_count\","
                           "\"warning\":1,\"summary\":\"processes alive\"},"
                           "{\"name\":\"impossible\",\"metric\":\"process_count\","
                           "\"direction\":\"below\",\"critical\":0}]}";

/* The README's scrape configuration (and its rule file) pass promtool, and
 * every giulia_ series named in the Grafana dashboard is in `exposition`. */
static void examples_match(const char *exposition)
{
	char config[4096], dash[4096];
	snprintf(config, sizeof(config), "%s/examples/prometheus/prometheus.yml", th_srcdir());
	snprintf(dash, sizeof(dash), "%s/examples/grafana/giulia-dashboard.json", th_srcdir());
	const char *argv[] = {"promtool", "check", "config", config, NULL};
	char *out = NULL, *err = NULL;
	int st = ts_run(argv, NULL, 60000, &out, &err);
	TH_ASSERT_MSG(st == 0, "promtool check config %s: %s%s", config, out ? out : "",
	              err ? err : "");
	free(out);
	free(err);
	json_error_t je;
	json_t *d = json_load_file(dash, 0, &je);
	TH_ASSERT_MSG(d != NULL, "%s: %s", dash, je.text);
	size_t found = 0, i, k;
	json_t *panel, *target;
	json_array_foreach(json_object_get(d, "panels"), i, panel)
	{
		json_array_foreach(json_object_get(panel, "targets"), k, target)
		{
			const char *expr = json_string_value(json_object_get(target, "expr"));
			for (const char *p = expr ? strstr(expr, "giulia_") : NULL; p;
			     p = strstr(p + 1, "giulia_")) {
				char name[128];
				size_t n = 0;
				while (n + 1 < sizeof(name) &&
				       ((p[n] >= 'a' && p[n] <= 'z') || p[n] == '_')) {
					name[n] = p[n];
					n++;
				}
				name[n] = '\0';
				char line[160];
				snprintf(line, sizeof(line), "\n%s{", name);
				char bare[160];
				snprintf(bare, sizeof(bare), "\n%s ", name);
				TH_ASSERT_MSG(
				    strstr(exposition, line) || strstr(exposition, bare),
				    "the dashboard plots %s, which /metrics does not have", name);
				found++;
				p += n - 1;
			}
		}
	}
	TH_ASSERT_INT_GE(found, 10);
	json_decref(d);
}

static void metrics_pass_promtool_and_carry_alerts(void)
{
	need_prometheus();
	char rules[700];
	snprintf(rules, sizeof(rules), "%s/rules.json", th_tmpdir());
	write_file(rules, RULES);
	struct td_daemon w = {0}, m = {0};
	const char *extra[] = {"--alert-rules", rules, NULL};
	daemons_start(&w, &m, extra);
	struct ts_beam node;
	ts_beam_start(&node, TS_BEAM_ERL_LONG, BUSY_EVAL, NULL);
	observe(&m, &node, 250, "lists");
	wait_snapshots(&m, node.name, 4);

	char *text = metrics_get(&m);
	promtool_check(text, "monitor");
	char want[512];
	snprintf(want, sizeof(want), "giulia_beam_run_queue{node=\"%s\"} ", node.name);
	TH_ASSERT_STR_CONTAINS(text, want);
	snprintf(want, sizeof(want), "giulia_beam_memory_bytes{node=\"%s\",kind=\"binary\"} ",
	         node.name);
	TH_ASSERT_STR_CONTAINS(text, want);
	snprintf(want, sizeof(want),
	         "giulia_beam_function_calls_per_second{node=\"%s\",module=\":lists\","
	         "function=\"reverse/1\"} ",
	         node.name);
	TH_ASSERT_STR_CONTAINS(text, want);
	snprintf(want, sizeof(want), "giulia_observation_up{node=\"%s\"} 1\n", node.name);
	TH_ASSERT_STR_CONTAINS(text, want);
	snprintf(want, sizeof(want),
	         "giulia_alert_active{node=\"%s\",rule=\"any_process\",severity=\"warning\"} 1\n",
	         node.name);
	TH_ASSERT_STR_CONTAINS(text, want);
	snprintf(want, sizeof(want),
	         "giulia_alert_active{node=\"%s\",rule=\"impossible\",severity=\"critical\"} 0\n",
	         node.name);
	TH_ASSERT_STR_CONTAINS(text, want);
	TH_ASSERT_STR_CONTAINS(text, "# TYPE giulia_monitor_sample_rpc_duration_seconds histogram");
	TH_ASSERT_STR_CONTAINS(text,
	                       "giulia_monitor_snapshot_lateness_seconds_bucket{le=\"+Inf\"} ");
	TH_ASSERT_STR_CONTAINS(text, "process_resident_memory_bytes ");
	/* Every Giulia series the committed Grafana dashboard plots exists. */
	examples_match(text);
	free(text);

	/* The same rules answer /api/runtime/alerts. */
	char path[512];
	snprintf(path, sizeof(path), "/api/runtime/alerts?node=%s", node.name);
	json_t *a = NULL;
	TH_ASSERT_INT_EQ(td_get(&m, path, &a), 200);
	json_t *first = json_array_get(json_object_get(a, "alerts"), 0);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(first, "rule")), "any_process");
	json_decref(a);

	/* OpenMetrics when asked for, with its EOF. */
	char *om = metrics_raw(m.port, "application/openmetrics-text;version=1.0.0");
	TH_ASSERT_STR_CONTAINS(om, "Content-Type: application/openmetrics-text; version=1.0.0");
	TH_ASSERT_STR_CONTAINS(om, "# TYPE giulia_monitor_snapshots counter\n");
	size_t n = strlen(om);
	TH_ASSERT(n > 6 && strcmp(om + n - 6, "# EOF\n") == 0);
	gi_free(om);
	char *plain = metrics_raw(m.port, "text/plain");
	TH_ASSERT_STR_CONTAINS(plain, "Content-Type: text/plain; version=0.0.4");
	TH_ASSERT(strstr(plain, "# EOF") == NULL);
	gi_free(plain);

	/* The worker's own. */
	text = metrics_get(&w);
	promtool_check(text, "worker");
	TH_ASSERT_STR_CONTAINS(text, "giulia_worker_ingest_requests_total{route=\"ingest\","
	                             "outcome=\"ok\"} ");
	TH_ASSERT(strstr(text, "giulia_worker_ingest_requests_total{route=\"ingest\","
	                       "outcome=\"ok\"} 0\n") == NULL);
	free(text);
}

static void a_bad_rule_file_stops_the_monitor(void)
{
	char rules[700], bin[1024], listen[64], data[700];
	snprintf(rules, sizeof(rules), "%s/bad.json", th_tmpdir());
	write_file(rules, "{\"version\":1,\"rules\":[{\"name\":\"x\",\"metric\":\"cpu\","
	                  "\"warning\":1}]}");
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", ts_free_port());
	snprintf(data, sizeof(data), "%s/m", th_tmpdir());
	const char *argv[] = {bin,  "monitor",       "--listen", listen, "--data",
	                      data, "--alert-rules", rules,      NULL};
	char *err = NULL;
	int st = ts_run(argv, NULL, 60000, NULL, &err);
	TH_ASSERT_INT_EQ(st, 2);
	TH_ASSERT_STR_CONTAINS(err, rules);
	TH_ASSERT_STR_CONTAINS(err, "unknown level metric \"cpu\"");
	free(err);
}

/* Prometheus 2.x on loopback with its data in the test directory, scraping
 * `target` (host:port) every second. Returns its base URL. */
static void prometheus_start(const char *target, char *url, size_t size)
{
	char dir[700], config[800], tsdb[800], listen[64], log[800];
	snprintf(dir, sizeof(dir), "%s/prometheus", th_tmpdir());
	mkdir(dir, 0700);
	snprintf(config, sizeof(config), "%s/prometheus.yml", dir);
	snprintf(tsdb, sizeof(tsdb), "--storage.tsdb.path=%s/data", dir);
	snprintf(log, sizeof(log), "%s/prometheus.log", dir);
	char yml[1024];
	snprintf(yml, sizeof(yml),
	         "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
	         "scrape_configs:\n  - job_name: giulia\n    static_configs:\n"
	         "      - targets: ['%s']\n",
	         target);
	write_file(config, yml);
	int port = ts_free_port();
	snprintf(listen, sizeof(listen), "--web.listen-address=127.0.0.1:%d", port);
	char cfg_arg[900];
	snprintf(cfg_arg, sizeof(cfg_arg), "--config.file=%s", config);
	const char *argv[] = {"prometheus", cfg_arg, tsdb, listen, "--log.level=warn", NULL};
	static struct td_daemon prom;
	memset(&prom, 0, sizeof(prom));
	prom.pid = ts_spawn(argv, log);
	TH_ASSERT_MSG(prom.pid > 0, "could not start prometheus");
	th_defer(td_stop_deferred, &prom);
	snprintf(url, size, "http://127.0.0.1:%d", port);
	char ready[256];
	snprintf(ready, sizeof(ready), "%s/-/ready", url);
	TH_ASSERT_MSG(ts_http_wait(ready, WAIT_MS), "prometheus did not become ready; log %s", log);
}

/* The first sample of `query` at Prometheus (instant query), or NULL. */
static json_t *prometheus_query(const char *base, const char *query)
{
	char url[1024];
	snprintf(url, sizeof(url), "%s/api/v1/query?query=%s", base, query);
	char *body = NULL;
	if (ts_http("GET", url, NULL, NULL, &body) != 200) {
		free(body);
		return NULL;
	}
	json_t *r = json_loads(body ? body : "", 0, NULL);
	free(body);
	json_t *first =
	    json_incref(json_array_get(json_object_get(json_object_get(r, "data"), "result"), 0));
	json_decref(r);
	return first;
}

static void prometheus_scrapes_a_monitor(void)
{
	need_prometheus();
	struct td_daemon w = {0}, m = {0};
	daemons_start(&w, &m, NULL);
	struct ts_beam node;
	ts_beam_start(&node, TS_BEAM_ERL_LONG, BUSY_EVAL, NULL);
	observe(&m, &node, 500, NULL);
	wait_snapshots(&m, node.name, 2);
	char target[64], prom[128];
	snprintf(target, sizeof(target), "127.0.0.1:%d", m.port);
	prometheus_start(target, prom, sizeof(prom));
	/* Poll until Prometheus has stored a Giulia series of the node. */
	json_t *sample = NULL;
	int64_t deadline = gi_clock_mono_ms() + WAIT_MS;
	while (!(sample = prometheus_query(prom, "giulia_beam_processes"))) {
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline,
		              "Prometheus never stored giulia_beam_processes");
		gi_clock_sleep_ms(250);
	}
	json_t *metric = json_object_get(sample, "metric");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(metric, "node")), node.name);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(metric, "job")), "giulia");
	const char *value = json_string_value(json_array_get(json_object_get(sample, "value"), 1));
	TH_ASSERT(value != NULL && atof(value) > 10); /* an idle erl runs dozens */
	json_decref(sample);
	/* The scrape itself is healthy, and counters came through as counters. */
	json_t *up = prometheus_query(prom, "up%7Bjob%3D%22giulia%22%7D");
	TH_ASSERT(up != NULL);
	TH_ASSERT_STR_EQ(json_string_value(json_array_get(json_object_get(up, "value"), 1)), "1");
	json_decref(up);
	json_t *snaps = NULL;
	deadline = gi_clock_mono_ms() + WAIT_MS;
	while (!(snaps = prometheus_query(prom, "giulia_observation_snapshots_total"))) {
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline,
		              "Prometheus never stored giulia_observation_snapshots_total");
		gi_clock_sleep_ms(250);
	}
	json_decref(snaps);
}

static void a_frozen_node_costs_only_itself(void)
{
	struct td_daemon w = {0}, m = {0};
	daemons_start(&w, &m, NULL);
	struct ts_beam nodes[3];
	for (int i = 0; i < 3; i++) {
		ts_beam_start(&nodes[i], TS_BEAM_ERL_LONG, NULL, NULL);
		observe(&m, &nodes[i], 250, NULL);
	}
	for (int i = 0; i < 3; i++)
		wait_snapshots(&m, nodes[i].name, 2);
	struct ts_beam *frozen = &nodes[2];
	TH_ASSERT_INT_EQ(kill(frozen->pid, SIGSTOP), 0);
	long before[3];
	for (int i = 0; i < 3; i++)
		before[i] = snapshots_of(&m, nodes[i].name, NULL);
	/* 40 more intervals of the live nodes: longer than the frozen node's
	 * reply deadline (timeout plus budget, 8 s at the defaults). */
	for (int i = 0; i < 2; i++)
		wait_snapshots(&m, nodes[i].name, before[i] + 40);
	long failures = 0;
	long frozen_now = snapshots_of(&m, frozen->name, &failures);
	/* At most the one sample that was on its way when it stopped. */
	TH_ASSERT_MSG(frozen_now <= before[2] + 1, "frozen node: %ld snapshots, was %ld",
	              frozen_now, before[2]);
	TH_ASSERT_INT_GE(failures, 1);
	char *text = metrics_get(&m);
	char want[512];
	snprintf(want, sizeof(want), "giulia_observation_failures_total{node=\"%s\"} 0\n",
	         nodes[0].name);
	TH_ASSERT_STR_CONTAINS(text, want);
	free(text);
	/* Thawed, it comes back on its own. */
	TH_ASSERT_INT_EQ(kill(frozen->pid, SIGCONT), 0);
	wait_snapshots(&m, frozen->name, frozen_now + 3);
}

static void cluster_start_observes_every_member(void)
{
	struct td_daemon w = {0}, m = {0};
	daemons_start(&w, &m, NULL);
	struct ts_beam seed, b, c;
	ts_beam_start(&seed, TS_BEAM_ERL_LONG, NULL, NULL);
	ts_beam_start(&b, TS_BEAM_ERL_LONG, NULL, NULL);
	ts_beam_start(&c, TS_BEAM_ERL_LONG, NULL, NULL);
	/* One cookie for the cluster (as in production), then connect. */
	struct ts_beam *members[] = {&b, &c};
	for (int i = 0; i < 2; i++) {
		char expr[512];
		snprintf(expr, sizeof(expr), "erlang:set_cookie(node(), '%s').", seed.cookie);
		free(ts_beam_eval(members[i], expr));
		snprintf(members[i]->cookie, sizeof(members[i]->cookie), "%s", seed.cookie);
		snprintf(expr, sizeof(expr), "net_adm:ping('%s').", members[i]->name);
		char *r = ts_beam_eval(&seed, expr);
		TH_ASSERT_STR_CONTAINS(r, "pong");
		free(r);
	}
	setenv("GIULIA_MONITOR_URL", m.url, 1);
	const char *start[] = {"start", seed.name,   "--cookie", seed.cookie, "--interval",
	                       "500",   "--cluster", "--json",   NULL};
	char *out = NULL;
	TH_ASSERT_INT_EQ(ts_product_run(true, start, &out), 0);
	json_t *r = json_loads(out ? out : "", 0, NULL);
	free(out);
	TH_ASSERT_MSG(r != NULL, "giulia-observe start --cluster --json printed no JSON");
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(r, "members")), 2);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(r, "started")), 3);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(r, "failed")), 0);
	json_decref(r);
	wait_snapshots(&m, seed.name, 1);
	wait_snapshots(&m, b.name, 1);
	wait_snapshots(&m, c.name, 1);
	/* Bounded: --cluster-max 1 lists one member and says it cut the list;
	 * the nodes already observed are reported, not failed. */
	const char *again[] = {"start",         seed.name, "--cookie", seed.cookie,
	                       "--cluster-max", "1",       "--json",   NULL};
	out = NULL;
	TH_ASSERT_INT_EQ(ts_product_run(true, again, &out), 0);
	r = json_loads(out ? out : "", 0, NULL);
	free(out);
	TH_ASSERT(r != NULL);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(r, "members")), 1);
	TH_ASSERT(json_is_true(json_object_get(r, "truncated")));
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "listed")), 2);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(r, "already_observed")), 2);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(r, "started")), 0);
	json_decref(r);
	/* A seed that cannot be reached fails with the node error's exit code. */
	const char *bad[] = {"start", "nobody@127.0.0.1", "--cookie", "x", "--cluster", NULL};
	TH_ASSERT_INT_EQ(ts_product_run(true, bad, NULL), 11);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(metrics_pass_promtool_and_carry_alerts),
	    TH_TEST(a_bad_rule_file_stops_the_monitor),
	    TH_TEST(prometheus_scrapes_a_monitor),
	    TH_TEST(a_frozen_node_costs_only_itself),
	    TH_TEST(cluster_start_observes_every_member),
	    TH_END,
	};
	return th_main(argc, argv, "integration_fleet", tests);
}
