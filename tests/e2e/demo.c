/*
 * demo.c - the demo (issue 7) end to end, shortened: examples/nexus under a
 * few seconds of load, observed by the daemons, and the fused profile's
 * findings checked; then that nothing of Giulia's is left on the target.
 *
 * The target is started exactly as `make demo` starts it (scripts/nexus.sh),
 * on a unique node name, a free port and a run directory of the test's own.
 * A package of the needs: line below that is missing fails the test that
 * wants it (TH_NEED), in CI or not: it never skips.
 *
 * The profile is read in the shape of docs/PROFILE.md and docs/RULES.md
 * (rule ids, evidence keys), as the fuse area defines them.
 * needs: wrk scripts/nexus.sh examples/nexus/mix.exs
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fs.h"
#include "base/str.h"
#include "harness.h"
#include "json_util.h"
#include "support.h"

#define TRACED "Nexus.Repo,Nexus.Registry.TableRegistry"

struct nexus {
	struct ts_beam node; /* name and cookie, for ts_beam_eval */
	int port;
	char base[64]; /* http://127.0.0.1:PORT */
	char run_dir[4096];
	char ebin[4096];
	char script[4096];
};

static void nexus_stop(void *arg)
{
	struct nexus *nx = arg;
	const char *argv[] = {nx->script, "stop", NULL};
	ts_run(argv, NULL, 60000, NULL, NULL);
}

/* Builds examples/nexus into the test's directory and starts it with
 * scripts/nexus.sh on a unique node name and a free port. */
static void nexus_start(struct nexus *nx)
{
	TH_NEED(th_have_otp_app("p1_sqlite3"), "erlang-p1-sqlite3", "no :sqlite3 to compile Nexus");
	TH_NEED(th_have_otp_app("p1_pgsql"), "erlang-p1-pgsql", "no :pgsql to compile Nexus");
	TH_NEED(th_have_program("curl"), "curl", "scripts/nexus.sh finds no curl");
	memset(nx, 0, sizeof(*nx));
	char alive[16];
	ts_random_string(alive, 8);
	alive[0] = 'n';
	nx->port = ts_free_port();
	nx->node.kind = TS_BEAM_ELIXIR_LONG;
	snprintf(nx->node.name, sizeof(nx->node.name), "%s@127.0.0.1", alive);
	snprintf(nx->base, sizeof(nx->base), "http://127.0.0.1:%d", nx->port);
	snprintf(nx->run_dir, sizeof(nx->run_dir), "%s/nexus-run", th_tmpdir());
	snprintf(nx->ebin, sizeof(nx->ebin), "%s/nexus-ebin", th_tmpdir());
	snprintf(nx->script, sizeof(nx->script), "%s/scripts/nexus.sh", th_srcdir());
	char port[16];
	snprintf(port, sizeof(port), "%d", nx->port);
	setenv("NEXUS_NODE", nx->node.name, 1);
	setenv("NEXUS_PORT", port, 1);
	setenv("NEXUS_RUN_DIR", nx->run_dir, 1);
	setenv("NEXUS_EBIN", nx->ebin, 1);
	setenv("NEXUS_SEED", "100", 1);

	char *err = NULL;
	const char *build[] = {nx->script, "build", nx->ebin, NULL};
	int rc = ts_run(build, NULL, 300000, NULL, &err);
	TH_ASSERT_MSG(rc == 0, "nexus.sh build failed (%d): %.2000s", rc, err ? err : "");
	free(err);

	th_defer(nexus_stop, nx);
	const char *start[] = {nx->script, "start", NULL};
	rc = ts_run(start, NULL, 120000, NULL, &err);
	TH_ASSERT_MSG(rc == 0, "nexus.sh start failed (%d): %.2000s", rc, err ? err : "");
	free(err);

	char path[4200], *cookie = NULL;
	size_t cookie_len = 0;
	snprintf(path, sizeof(path), "%s/cookie", nx->run_dir);
	TH_ASSERT_OK(gi_fs_read_file(path, 1024, &cookie, &cookie_len));
	gi_strlcpy(nx->node.cookie, cookie, sizeof(nx->node.cookie));
	free(cookie);
}

/* A request to the target; returns the status, *body (caller frees) when asked. */
static int nexus_http(const struct nexus *nx, const char *method, const char *path,
                      const char *body, char **response)
{
	char url[4200];
	snprintf(url, sizeof(url), "%s%s", nx->base, path);
	char *r = NULL;
	int status = ts_http(method, url, body, NULL, &r);
	if (response)
		*response = r;
	else
		free(r);
	return status;
}

static void expect_status(const struct nexus *nx, const char *method, const char *path,
                          const char *body, int want, const char *contains)
{
	char *r = NULL;
	int status = nexus_http(nx, method, path, body, &r);
	TH_ASSERT_MSG(status == want, "%s %s: status %d, wanted %d: %.1000s", method, path, status,
	              want, r ? r : "");
	if (contains)
		TH_ASSERT_STR_CONTAINS(r, contains);
	free(r);
}

static void nexus_serves_its_api(void)
{
	static struct nexus nx; /* static: its deferred stop runs after this frame is gone */
	nexus_start(&nx);

	/* The cookie is readable by the user only. */
	char path[4200];
	struct stat st;
	snprintf(path, sizeof(path), "%s/cookie", nx.run_dir);
	TH_ASSERT_INT_EQ(stat(path, &st), 0);
	TH_ASSERT_INT_EQ(st.st_mode & 0777, 0600);

	expect_status(&nx, "GET", "/health", NULL, 200, nx.node.name);
	expect_status(&nx, "GET", "/api/tables", NULL, 200, "\"products\"");
	expect_status(&nx, "GET", "/api/users/1", NULL, 200, "\"email\"");
	expect_status(&nx, "GET", "/api/products?limit=5&order_by=price&desc=1", NULL, 200,
	              "\"limit\":5");
	expect_status(&nx, "GET", "/api/search?table=products&q=a&limit=3", NULL, 200, "\"data\"");
	expect_status(&nx, "GET", "/api/stats/orders?op=sum&field=total&group_by=status", NULL, 200,
	              "\"group\"");
	expect_status(&nx, "GET", "/api/export/users.csv?limit=2", NULL, 200,
	              "id,name,email,country,created_at");

	/* Create, read, update, delete an order; its total comes from the product. */
	char *r = NULL;
	TH_ASSERT_INT_EQ(nexus_http(&nx, "POST", "/api/orders",
	                            "{\"user_id\":1,\"product_id\":2,\"quantity\":3}", &r),
	                 201);
	json_t *created = json_loads(r, 0, NULL);
	TH_ASSERT_MSG(created, "not JSON: %s", r);
	free(r);
	json_int_t id = json_integer_value(json_object_get(created, "id"));
	TH_ASSERT(id > 0);
	TH_ASSERT(json_real_value(json_object_get(json_object_get(created, "data"), "total")) > 0);
	json_decref(created);
	char order[64];
	snprintf(order, sizeof(order), "/api/orders/%lld", (long long)id);
	expect_status(&nx, "PUT", order, "{\"status\":\"paid\"}", 200, "\"status\"");
	expect_status(&nx, "GET", order, NULL, 200, "\"paid\"");
	expect_status(&nx, "DELETE", order, NULL, 204, NULL);
	expect_status(&nx, "GET", order, NULL, 404, "not found");

	expect_status(&nx, "POST", "/api/batch",
	              "{\"requests\":[{\"method\":\"GET\",\"path\":\"/api/users/2\"},"
	              "{\"method\":\"GET\",\"path\":\"/api/nope/1\"}]}",
	              200, "{\"status\":404");

	/* Bad input gets a clear 4xx. */
	expect_status(&nx, "GET", "/api/nope/1", NULL, 404, "\"error\"");
	expect_status(&nx, "POST", "/api/users", "{\"name\":", 400, "\"error\"");
	expect_status(&nx, "POST", "/api/users", "{\"id\":3}", 422, "not writable");
	expect_status(&nx, "GET", "/api/users/-1", NULL, 400, "\"error\"");
	expect_status(&nx, "PUT", "/api/users", "{}", 405, "\"error\"");

	/* The node answers a second connection with its cookie, and only with it. */
	char *answer =
	    ts_beam_eval(&nx.node, "erlang:whereis('Elixir.Nexus.Registry.TableRegistry') "
	                           "=/= undefined.");
	TH_ASSERT_STR_CONTAINS(answer, "true");
	free(answer);
	struct ts_beam wrong = nx.node;
	gi_strlcpy(wrong.cookie, "not-the-cookie", sizeof(wrong.cookie));
	answer = ts_beam_eval(&wrong, "ok.");
	TH_ASSERT_MSG(answer == NULL || !strstr(answer, "ok"), "a wrong cookie was accepted");
	free(answer);
}

/* Parses `key=NUMBER` out of the load's summary line. */
static double summary_value(const char *line, const char *key)
{
	char pattern[64];
	snprintf(pattern, sizeof(pattern), " %s=", key);
	const char *p = strstr(line, pattern);
	TH_ASSERT_MSG(p, "no %s in \"%s\"", key, line);
	return strtod(p + strlen(pattern), NULL);
}

/* Runs the mixed load for `seconds`; returns its summary line (caller frees). */
static char *run_load(const struct nexus *nx, const char *seconds, const char *connections)
{
	const char *argv[] = {nx->script, "load", seconds, connections, NULL};
	char *out = NULL;
	int rc = ts_run(argv, NULL, 120000, &out, NULL);
	TH_ASSERT_MSG(rc == 0, "nexus.sh load failed (%d): %.2000s", rc, out ? out : "");
	const char *line = strstr(out, "nexus-load:");
	TH_ASSERT_MSG(line, "no summary line in: %.2000s", out);
	char *copy = strndup(line, strcspn(line, "\n"));
	free(out);
	return copy;
}

/* Removes the blanks erl_call puts in its output ("{call_count, false}"). */
static void squeeze(char *s)
{
	char *w = s;
	for (char *r = s; s && *r; r++)
		if (*r != ' ' && *r != '\n' && *r != '\t')
			*w++ = *r;
	if (s)
		*w = '\0';
}

static void nexus_mixed_load_has_no_errors(void)
{
	TH_NEED(th_have_program("wrk"), "wrk", "wrk is not on PATH");
	static struct nexus nx; /* static: its deferred stop runs after this frame is gone */
	nexus_start(&nx);
	char *line = run_load(&nx, "3", "4");
	TH_ASSERT_MSG(summary_value(line, "requests") > 0, "no requests: %s", line);
	TH_ASSERT_MSG(summary_value(line, "rps") > 0, "no throughput: %s", line);
	TH_ASSERT_MSG(summary_value(line, "errors") == 0, "errors under load: %s", line);
	double read_pct = summary_value(line, "read_pct");
	TH_ASSERT_MSG(read_pct > 75 && read_pct < 97, "not a read-mostly mix: %s", line);
	free(line);
}

/* -- The profile ---------------------------------------------------------- */

static bool help_lists(const char *help, const char *command)
{
	char needle[64];
	snprintf(needle, sizeof(needle), "\n  %s ", command);
	return strstr(help, needle) != NULL;
}

static char *giulia_help(void)
{
	char bin[4200];
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	const char *argv[] = {bin, "help", NULL};
	char *out = NULL;
	ts_run(argv, NULL, 10000, &out, NULL);
	return out ? out : strdup("");
}

static double number_at(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	TH_ASSERT_MSG(json_is_number(v), "no number %s in %s", key,
	              obj ? json_dumps(obj, JSON_COMPACT) : "(null)");
	return json_number_value(v);
}

/* The recommendation of `rule_id` about `subject` (NULL: any), or NULL. */
static json_t *recommendation(json_t *profile, const char *rule_id, const char *subject)
{
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(profile, "recommendations"), i, r)
	{
		const char *id = json_string_value(json_object_get(r, "id"));
		const char *subj = json_string_value(json_object_get(r, "subject"));
		if (id && strcmp(id, rule_id) == 0 &&
		    (!subject || (subj && strcmp(subj, subject) == 0)))
			return r;
	}
	return NULL;
}

/* The worker's latest profile (docs/PROFILE.md; the row holds it under "profile"). */
static json_t *latest_profile(const char *worker_url)
{
	char url[256], *r = NULL;
	snprintf(url, sizeof(url), "%s/api/runtime/profile/latest", worker_url);
	int status = ts_http("GET", url, NULL, NULL, &r);
	TH_ASSERT_MSG(status == 200, "profile: %d %s", status, r ? r : "");
	json_error_t jerr;
	json_t *row = json_loads(r, 0, &jerr);
	TH_ASSERT_MSG(row, "profile is not JSON: %s", jerr.text);
	free(r);
	json_t *profile = json_object_get(row, "profile");
	profile = json_incref(profile ? profile : row);
	json_decref(row);
	return profile;
}

/* The findings the demo promises for the default scenario. */
static void check_default_findings(json_t *profile)
{
	/* The registry is database-backed and read-mostly: ETS, round trips saved. */
	json_t *rec = recommendation(profile, "db-backed-lookup", "Nexus.Registry.TableRegistry");
	TH_ASSERT_MSG(rec, "no db-backed-lookup recommendation for the registry: %.3000s",
	              json_dumps(json_object_get(profile, "recommendations"), JSON_COMPACT));
	TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(rec, "advice")), "ETS");
	TH_ASSERT(number_at(json_object_get(rec, "evidence"), "round_trips_saved_per_window") > 0);

	/* The Repo's read/write shape: the load is ~87% reads, and every registry
	 * lookup is two more reads. */
	json_t *repo = ts_json_find(json_object_get(profile, "workload"), "module", "Nexus.Repo");
	TH_ASSERT_MSG(repo, "no workload of Nexus.Repo");
	double reads = number_at(repo, "reads"), writes = number_at(repo, "writes");
	TH_ASSERT_MSG(writes > 0 && reads > 5 * writes, "Repo reads %g, writes %g", reads, writes);

	/* Pipeline overhead: prepare_opts, default_options, prepare_query per operation. */
	json_t *pipe =
	    ts_json_find(json_object_get(json_object_get(profile, "pipeline_overhead"), "modules"),
	                 "module", "Nexus.Repo");
	TH_ASSERT_MSG(pipe, "no pipeline overhead of Nexus.Repo");
	TH_ASSERT(number_at(pipe, "helper_calls") > 0);
	TH_ASSERT(number_at(pipe, "db_operations") > 0);
	TH_ASSERT(number_at(pipe, "ratio") >= 1);

	/* The registry joined with the graph: dependents and complexity. Its
	 * process is busy (the ownership view), but the CPU it burns executes
	 * mostly in Nexus.Repo and the driver, where the executing view puts it. */
	json_t *hot = ts_json_find(json_object_get(profile, "hot_modules"), "module",
	                           "Nexus.Registry.TableRegistry");
	if (!hot)
		hot = ts_json_find(json_object_get(profile, "ownership_modules"), "module",
		                   "Nexus.Registry.TableRegistry");
	TH_ASSERT_MSG(hot, "the registry is neither hot nor a busy owner: %.3000s",
	              json_dumps(json_object_get(profile, "hot_modules"), JSON_COMPACT));
	json_t *hm = json_object_get(profile, "hot_modules");
	bool nexus = false;
	for (size_t i = 0; i < json_array_size(hm); i++) {
		const char *m = json_string_value(json_object_get(json_array_get(hm, i), "module"));
		TH_ASSERT_MSG(strcmp(m, ":proc_lib") && strcmp(m, ":gen_server") &&
		                  strcmp(m, ":erlang"),
		              "hot module %s is plumbing", m);
		nexus = nexus || GI_STR_STARTS(m, "Nexus.");
	}
	TH_ASSERT_MSG(nexus, "no Nexus module among the hot modules: %.3000s",
	              json_dumps(hm, JSON_COMPACT));
	json_t *graph = json_object_get(hot, "graph");
	TH_ASSERT(number_at(graph, "ca") >= 1);
	TH_ASSERT(number_at(graph, "complexity") >= 1);

	/* Traced functions are joined with the graph, callers included. */
	json_t *get =
	    ts_json_find(json_object_get(profile, "trace_hotspots"), "mfa", "Nexus.Repo.get/2");
	TH_ASSERT_MSG(get, "Nexus.Repo.get/2 is not among the trace hotspots");
	TH_ASSERT(json_is_true(json_object_get(get, "in_graph")));
	TH_ASSERT(json_array_size(json_object_get(get, "callers")) > 0);
}

static void daemon_stop(void *arg)
{
	pid_t *pid = arg;
	ts_stop(*pid, 15000);
}

struct giulia {
	char bin[4200], observe[4200];
	char worker_url[64], monitor_url[64];
};

/* The worker and the monitor on free ports, with a data directory of ours. */
static void giulia_start(struct giulia *g)
{
	static pid_t wpid, mpid;
	int wport = ts_free_port(), mport = ts_free_port();
	char wlisten[64], mlisten[64], data[4200], wlog[4200], mlog[4200], health[128];
	snprintf(g->bin, sizeof(g->bin), "%s/giulia", th_bindir());
	snprintf(g->observe, sizeof(g->observe), "%s/giulia-observe", th_bindir());
	snprintf(wlisten, sizeof(wlisten), "127.0.0.1:%d", wport);
	snprintf(mlisten, sizeof(mlisten), "127.0.0.1:%d", mport);
	snprintf(g->worker_url, sizeof(g->worker_url), "http://127.0.0.1:%d", wport);
	snprintf(g->monitor_url, sizeof(g->monitor_url), "http://127.0.0.1:%d", mport);
	snprintf(data, sizeof(data), "%s/giulia-data", th_tmpdir());
	snprintf(wlog, sizeof(wlog), "%s/worker.log", th_tmpdir());
	snprintf(mlog, sizeof(mlog), "%s/monitor.log", th_tmpdir());
	setenv("GIULIA_MONITOR_URL", g->monitor_url, 1);
	setenv("GIULIA_WORKER_URL", g->worker_url, 1);
	const char *worker[] = {g->bin, "worker", "--listen", wlisten, "--data", data, NULL};
	wpid = ts_spawn(worker, wlog);
	th_defer(daemon_stop, &wpid);
	const char *monitor[] = {g->bin,     "monitor",     "--listen", mlisten,
	                         "--worker", g->worker_url, NULL};
	mpid = ts_spawn(monitor, mlog);
	th_defer(daemon_stop, &mpid);
	snprintf(health, sizeof(health), "%s/health", g->worker_url);
	TH_ASSERT_MSG(ts_http_wait(health, 30000), "the worker does not answer; see %s", wlog);
	snprintf(health, sizeof(health), "%s/health", g->monitor_url);
	TH_ASSERT_MSG(ts_http_wait(health, 30000), "the monitor does not answer; see %s", mlog);
}

/* giulia-observe start, the load, giulia-observe stop; returns the profile id.
 * `expect` (may be NULL) must appear in the printed profile. */
static long long observed_run_expecting(const struct giulia *g, const struct nexus *nx,
                                        const char *project, const char *expect)
{
	char *out = NULL, *err = NULL;
	/* every call counted (the default is a 5% budget, whose estimates
	 * would blur them): the findings asserted below are exact ratios
	 * (3.00 helper calls per operation, 100% reads) */
	const char *start[] = {g->observe,  "start", nx->node.name, nx->node.cookie,
	                       "1000",      TRACED,  "--overhead",  "0",
	                       "--project", project, NULL};
	int rc = ts_run(start, NULL, 60000, &out, &err);
	TH_ASSERT_MSG(rc == 0, "giulia-observe start: %d %s %s", rc, out, err);
	free(out);
	free(err);

	char *line = run_load(nx, "6", "8");
	TH_ASSERT_MSG(summary_value(line, "errors") == 0, "errors under load: %s", line);
	free(line);

	const char *stop[] = {g->observe, "stop", nx->node.name, NULL};
	rc = ts_run(stop, NULL, 120000, &out, &err);
	TH_ASSERT_MSG(rc == 0, "giulia-observe stop: %d %s %s", rc, out, err);
	TH_ASSERT_STR_CONTAINS(out, "Nexus.Registry.TableRegistry");
	if (expect)
		TH_ASSERT_STR_CONTAINS(out, expect);
	const char *id = strstr(out, "profile id: ");
	TH_ASSERT_MSG(id, "no profile id in: %.2000s", out);
	long long profile_id = strtoll(id + strlen("profile id: "), NULL, 10);
	free(out);
	free(err);
	return profile_id;
}

static long long observed_run(const struct giulia *g, const struct nexus *nx, const char *project)
{
	return observed_run_expecting(g, nx, project, "db-backed-lookup");
}

/* Nothing of Giulia's is left on the target: no trace pattern, no
 * scheduler_wall_time flag, no process running interpreted code. */
static void check_target_clean(const struct nexus *nx)
{
	char *a =
	    ts_beam_eval(&nx->node, "erlang:trace_info({'Elixir.Nexus.Repo',get,2}, call_count).");
	squeeze(a);
	TH_ASSERT_STR_CONTAINS(a, "{call_count,false}");
	free(a);
	a = ts_beam_eval(&nx->node,
	                 "erlang:trace_info({'Elixir.Nexus.Registry.TableRegistry',fetch,1}, "
	                 "call_count).");
	squeeze(a);
	TH_ASSERT_STR_CONTAINS(a, "{call_count,false}");
	free(a);
	a = ts_beam_eval(&nx->node, "erlang:statistics(scheduler_wall_time).");
	TH_ASSERT_STR_CONTAINS(a, "undefined");
	free(a);
	a = ts_beam_eval(&nx->node,
	                 "Self = self(), [P || P <- erlang:processes(), P =/= Self, "
	                 "case erlang:process_info(P, current_function) of "
	                 "{current_function, {erl_eval, _, _}} -> true; _ -> false end].");
	squeeze(a);
	TH_ASSERT_STR_CONTAINS(a, "{ok,[]}");
	free(a);
}

/* Skips unless the daemons, profiles and wrk are there. */
static void require_full_demo(void)
{
	char *help = giulia_help();
	const char *need[] = {"worker", "monitor", "serve", "profile", "compare"};
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!help_lists(help, need[i])) {
			free(help);
			th_fail(__FILE__, __LINE__, "`giulia help` lists no `%s`", need[i]);
		}
	free(help);
	TH_NEED(th_have_program("wrk"), "wrk", "wrk is not on PATH");
}

/* Copies examples/nexus into the test's directory (so that indexing writes
 * nothing in the source tree) and indexes it through the worker. */
static void index_copy(const struct giulia *g, char *project, size_t size)
{
	char copy_cmd[9000], url[256], body[4400], *r = NULL;
	snprintf(project, size, "%s/nexus-src", th_tmpdir());
	snprintf(copy_cmd, sizeof(copy_cmd), "cp -r '%s/examples/nexus' '%s'", th_srcdir(),
	         project);
	const char *cp[] = {"sh", "-c", copy_cmd, NULL};
	TH_ASSERT_INT_EQ(ts_run(cp, NULL, 30000, NULL, NULL), 0);
	snprintf(url, sizeof(url), "%s/api/index/scan", g->worker_url);
	snprintf(body, sizeof(body), "{\"path\":\"%s\"}", project);
	int status = ts_http("POST", url, body, NULL, &r);
	TH_ASSERT_MSG(status == 200, "index scan: %d %s", status, r ? r : "");
	free(r);
}

/* `giulia compare A B --format json` (caller decrefs). */
static json_t *compare_profiles(const struct giulia *g, long long a, long long b)
{
	char ida[32], idb[32], *out = NULL;
	snprintf(ida, sizeof(ida), "%lld", a);
	snprintf(idb, sizeof(idb), "%lld", b);
	const char *argv[] = {g->bin, "compare", ida, idb, "--format", "json", NULL};
	TH_ASSERT_INT_EQ(ts_run(argv, NULL, 60000, &out, NULL), 0);
	json_error_t jerr;
	json_t *c = json_loads(out, 0, &jerr);
	TH_ASSERT_MSG(c, "compare is not JSON (%s): %.2000s", jerr.text, out);
	free(out);
	return c;
}

static void demo_profile_findings(void)
{
	require_full_demo();
	static struct nexus nx; /* static: its deferred stop runs after this frame is gone */
	nexus_start(&nx);
	struct giulia g = {0};
	giulia_start(&g);
	char project[4200];
	index_copy(&g, project, sizeof(project));

	/* The default scenario. */
	long long first = observed_run(&g, &nx, project);
	json_t *profile = latest_profile(g.worker_url);
	check_default_findings(profile);
	json_decref(profile);
	check_target_clean(&nx);

	char html[4200], id[32];
	snprintf(html, sizeof(html), "%s/profile.html", th_tmpdir());
	snprintf(id, sizeof(id), "%lld", first);
	const char *report[] = {g.bin, "profile", id, "--format", "html", "--out", html, NULL};
	TH_ASSERT_INT_EQ(ts_run(report, NULL, 60000, NULL, NULL), 0);
	char *page = NULL;
	size_t page_len = 0;
	TH_ASSERT_OK(gi_fs_read_file(html, 16u << 20, &page, &page_len));
	TH_ASSERT_STR_CONTAINS(page, "<svg");
	TH_ASSERT_STR_CONTAINS(page, "Nexus.Registry.TableRegistry");
	free(page);

	/* The logger scenario, shortened: the per-query log at info makes the
	 * Logger hot; the profile says so, and compare shows the rule as new. */
	char *a =
	    ts_beam_eval(&nx.node, "persistent_term:put({'Elixir.Nexus.Repo', query_log}, info).");
	TH_ASSERT_STR_CONTAINS(a, "ok");
	free(a);
	long long second = observed_run(&g, &nx, project);
	profile = latest_profile(g.worker_url);
	json_t *logger = recommendation(profile, "logger-bottleneck", NULL);
	TH_ASSERT_MSG(logger,
	              "no logger-bottleneck recommendation with the query log at info: %.3000s",
	              json_dumps(json_object_get(profile, "recommendations"), JSON_COMPACT));
	TH_ASSERT(number_at(json_object_get(logger, "evidence"), "reductions_share") >= 0.05);
	json_decref(profile);
	check_target_clean(&nx);

	json_t *c = compare_profiles(&g, first, second);
	json_t *fresh = json_object_get(json_object_get(c, "recommendations"), "new");
	TH_ASSERT_MSG(ts_json_find(fresh, "id", "logger-bottleneck"),
	              "compare does not list logger-bottleneck as new: %.2000s",
	              json_dumps(c, JSON_COMPACT));
	json_decref(c);
}

/* The fix the profile advises (the registry's metadata in ETS, switched on
 * the running node) makes its database findings go away: what the profile
 * says comes from the measurements, not from the module's name. */
static void demo_fix_resolves_the_registry_findings(void)
{
	require_full_demo();
	static struct nexus nx; /* static: its deferred stop runs after this frame is gone */
	nexus_start(&nx);
	struct giulia g = {0};
	giulia_start(&g);
	char project[4200];
	index_copy(&g, project, sizeof(project));

	long long before = observed_run(&g, &nx, project);
	json_t *profile = latest_profile(g.worker_url);
	TH_ASSERT(recommendation(profile, "db-backed-lookup", "Nexus.Registry.TableRegistry"));
	json_decref(profile);

	char *a = ts_beam_eval(&nx.node, "'Elixir.Nexus.Registry.TableRegistry':set_mode(ets).");
	TH_ASSERT_STR_CONTAINS(a, "ok");
	free(a);
	char *line = run_load(&nx, "2", "4"); /* the new code path is loaded and warm */
	free(line);

	long long after = observed_run_expecting(&g, &nx, project, NULL);
	profile = latest_profile(g.worker_url);
	json_t *rec = recommendation(profile, "db-backed-lookup", "Nexus.Registry.TableRegistry");
	TH_ASSERT_MSG(!rec, "db-backed-lookup still fires for the registry in ETS: %.2000s",
	              rec ? json_dumps(rec, JSON_COMPACT) : "");
	/* Nor on the repo, read-mostly now that the registry's reads are gone
	 * from it: the data layer is no lookup of rarely changing data. */
	rec = recommendation(profile, "db-backed-lookup", "Nexus.Repo");
	TH_ASSERT_MSG(!rec, "db-backed-lookup on the data layer after the fix: %.2000s",
	              rec ? json_dumps(rec, JSON_COMPACT) : "");
	json_decref(profile);
	check_target_clean(&nx);

	json_t *c = compare_profiles(&g, before, after);
	json_t *resolved = json_object_get(json_object_get(c, "recommendations"), "resolved");
	TH_ASSERT_MSG(ts_json_find(resolved, "id", "db-backed-lookup"),
	              "compare does not list db-backed-lookup as resolved: %.2000s",
	              json_dumps(c, JSON_COMPACT));
	json_decref(c);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(nexus_serves_its_api),
	    TH_TEST(nexus_mixed_load_has_no_errors),
	    TH_TEST(demo_profile_findings),
	    TH_TEST(demo_fix_resolves_the_registry_findings),
	    TH_END,
	};
	return th_main(argc, argv, "e2e_demo", tests);
}
