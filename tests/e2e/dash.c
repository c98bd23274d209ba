/*
 * The dashboard (docs/DASHBOARD.md) in a real browser: Debian's chromium,
 * headless, driven by puppeteer-core (tests/browser/dash.mjs, installed by
 * scripts/deps.sh under build/browser-client), against a real `giulia serve`
 * with the catalog target indexed and observed on a real node, plus a
 * crafted project whose module names are HTML and script.
 *
 * What the browser checks (dash.mjs): the page's Content-Security-Policy;
 * the page's form starts the observation (the monitor's route, through the
 * worker); the live page draws at least three SSE updates; the graph explorer draws
 * Catalog.Registry's neighbourhood with the counts the fixture has (below)
 * and a click opens a module's details; hostile names stay text (a crafted
 * project's modules on the graph and in details; on the node, a module, a
 * function and a registered process named with markup, and an alert whose
 * summary is markup, on the live page, the profile and the compare page:
 * shown as text, no element injected, no dialog, no console error); the stop
 * button on the live page ends the observation and opens its profile, which
 * shows every recommendation the stored profile has; a click on a row of
 * the top processes opens that process's page (giulia process) and its back
 * link returns, at 1400 and 390 px, names in the tables on one line and the
 * table fitting 390 px with its numbers; the live page's links to the
 * node's ETS tables, ports and sockets, and applications (kernel's
 * supervision tree collapsed below its top supervisor), and memory
 * (allocators; binary leaks only once the forced GC is ticked); no console error; no
 * request leaves the origin. Screenshots at 1400 and 390 px go to
 * build/artefacts/dash/ (the README's come from there).
 * needs: chromium npm elixir erlang-p1-sqlite3 tests/fixtures/targets/build.sh
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fs.h"
#include "harness.h"
#include "product.h"
#include "support.h"

/* The catalog target's graph around Catalog.Registry, by hand from its
 * source (tests/fixtures/targets/catalog/lib): at depth 1 it calls Catalog
 * and Catalog.Store and is called by Catalog.Worker; at depth 2 Catalog.Store
 * is also reached from Catalog (Catalog.start/1 and stats/0), Catalog.Worker
 * from Catalog.WorkerPool, and Catalog from Catalog.Worker. */
#define CENTRE       "Catalog.Registry"
#define DEPTH1_NODES 4
#define DEPTH1_EDGES 3

/* A project whose module names are markup: an atom module `:"Evil<img ...>"`
 * in a cycle with Evil.Target. */
#define HOSTILE_MODULE ":Evil<img src=x onerror=alert(1)>"
static const char HOSTILE_SOURCE[] =
    "defmodule :\"Evil<img src=x onerror=alert(1)>\" do\n"
    "  def run(x), do: Evil.Target.go(x)\n"
    "end\n\n"
    "defmodule Evil.Target do\n"
    "  def go(x), do: :\"Evil<img src=x onerror=alert(1)>\".run(x)\n"
    "  def page, do: :\"'><svg onload=alert(2)>\".boom()\n"
    "end\n";

/* The same kind of names on the observed node, for the live page, the
 * profile and the compare page: a module (loaded from source compiled on
 * the node, never from a file of the project), one of its functions, and a
 * process registered under a name with a closing script tag and quotes,
 * busy enough (a few thousand reductions every millisecond) to be among the
 * top processes, the hot modules and, traced, the traced functions. */
#define HOSTILE_FUNCTION "\"><svg onload=alert(2)>"
#define HOSTILE_PROCESS  "Evil</script><script>alert(3)</script>'\""
static const char HOSTILE_NODE_SOURCE[] =
    "-module('Evil<img src=x onerror=alert(1)>').\n"
    "-export([start/0, spin/0, '\"><svg onload=alert(2)>'/1]).\n"
    "start() ->\n"
    "    P = spawn(?MODULE, spin, []),\n"
    "    true = register('Evil</script><script>alert(3)</script>\\'\"', P),\n"
    "    ok.\n"
    "spin() ->\n"
    "    receive stop -> ok after 1 -> _ = '\"><svg onload=alert(2)>'(2000), spin() end.\n"
    "'\"><svg onload=alert(2)>'(0) -> 0;\n"
    "'\"><svg onload=alert(2)>'(N) -> erlang:phash2(N) + '\"><svg onload=alert(2)>'(N - 1).\n";
/* An alert rule of the monitor's rule file whose summary is markup, firing
 * on every snapshot (fewer than a billion processes). */
#define HOSTILE_ALERT "<img src=x onerror=alert(4)></script>\"'"

static const char *browser_client(void)
{
	static char dir[4096];
	snprintf(dir, sizeof(dir), "%s/build/browser-client", th_srcdir());
	char ok[4200];
	snprintf(ok, sizeof(ok), "%s/node_modules/puppeteer-core/package.json", dir);
	TH_NEED(access(ok, R_OK) == 0, "npm",
	        "puppeteer-core is not installed under build/browser-client");
	return dir;
}

static const char *hostile_project(const char *worker_url)
{
	static char dir[4096];
	char lib[4200], file[4300];
	snprintf(dir, sizeof(dir), "%s/evil", th_tmpdir());
	snprintf(lib, sizeof(lib), "%s/lib", dir);
	TH_ASSERT_OK(gi_fs_mkdir_p(lib));
	snprintf(file, sizeof(file), "%s/evil.ex", lib);
	FILE *f = fopen(file, "w");
	TH_ASSERT(f != NULL);
	fputs(HOSTILE_SOURCE, f);
	fclose(f);
	char url[4200], body[4300], *resp = NULL;
	snprintf(url, sizeof(url), "%s/api/index/scan", worker_url);
	snprintf(body, sizeof(body), "{\"path\":\"%s\"}", dir);
	int st = ts_http("POST", url, body, NULL, &resp);
	TH_ASSERT_MSG(st == 200, "indexing the hostile project: %d %s", st, resp ? resp : "");
	free(resp);
	return dir;
}

/* Compiles HOSTILE_NODE_SOURCE on `node` and starts its process. */
static void hostile_on_node(const struct ts_beam *node)
{
	char path[4200], expr[4600];
	snprintf(path, sizeof(path), "%s/evil_node.erl", th_tmpdir());
	FILE *f = fopen(path, "w");
	TH_ASSERT(f != NULL);
	fputs(HOSTILE_NODE_SOURCE, f);
	fclose(f);
	snprintf(expr, sizeof(expr),
	         "{ok, M, B} = compile:file(\"%s\", [binary, return_errors]), "
	         "{module, M} = code:load_binary(M, \"evil_node.erl\", B), M:start().",
	         path);
	char *out = ts_beam_eval(node, expr);
	TH_ASSERT_MSG(out && strstr(out, "ok"), "loading the hostile module: %s",
	              out ? out : "(no answer)");
	free(out);
}

/* A rule file for the monitor with HOSTILE_ALERT as a summary. */
static const char *hostile_alert_rules(void)
{
	static char path[4200];
	snprintf(path, sizeof(path), "%s/alerts.json", th_tmpdir());
	json_t *rules =
	    json_pack("{s:i, s:[{s:s, s:s, s:s, s:f, s:f, s:s}]}", "version", 1, "rules", "name",
	              "hostile_summary", "metric", "process_count", "direction", "below", "warning",
	              2e9, "critical", 1e9, "summary", HOSTILE_ALERT);
	TH_ASSERT(rules != NULL);
	TH_ASSERT(json_dump_file(rules, path, JSON_COMPACT) == 0);
	json_decref(rules);
	return path;
}

static void dashboard_in_a_real_browser(void)
{
	TH_NEED(access("/usr/bin/chromium", X_OK) == 0, "chromium", "no /usr/bin/chromium");
	TH_NEED(th_have_otp_app("p1_sqlite3"), "erlang-p1-sqlite3", "no :sqlite3 for catalog");
	const char *client = browser_client();
	char wurl[256];
	const char *serve_args[] = {"--alert-rules", hostile_alert_rules(), NULL};
	ts_serve_start_with(wurl, sizeof(wurl), serve_args);
	const char *ebin = ts_target_build("catalog");
	char project[4096];
	snprintf(project, sizeof(project), "%s", ts_target_index(wurl, "catalog"));
	const char *evil = hostile_project(wurl);
	const char *extra[] = {"-pa", ebin, NULL};
	struct ts_beam node;
	ts_beam_start(&node, TS_BEAM_ELIXIR_LONG, "Catalog.start()", extra);
	hostile_on_node(&node);
	char artefacts[4200];
	snprintf(artefacts, sizeof(artefacts), "%s/build/artefacts/dash", th_srcdir());
	TH_ASSERT_OK(gi_fs_mkdir_p(artefacts));
	/* The page starts the observation (its form) and stops it (its button). */
	json_t *cfg = json_pack(
	    "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:{s:s, s:s, s:i, s:i, s:i, s:s}, "
	    "s:{s:s, s:s, s:s, s:s, s:s}}",
	    "puppeteer", client, "chromium", "/usr/bin/chromium", "base", wurl, "artefacts",
	    artefacts, "node", node.name, "cookie", node.cookie, "trace",
	    "Catalog.Registry,Catalog.Store," HOSTILE_MODULE, "project", project, "graph", "path",
	    project, "module", CENTRE, "depth", 1, "nodes", DEPTH1_NODES, "edges", DEPTH1_EDGES,
	    "click", "Catalog.Store", "hostile", "path", evil, "module", HOSTILE_MODULE, "function",
	    HOSTILE_FUNCTION, "process", HOSTILE_PROCESS, "alert", HOSTILE_ALERT);
	char *text = json_dumps(cfg, JSON_COMPACT);
	json_decref(cfg);
	char script[4200];
	snprintf(script, sizeof(script), "%s/tests/browser/dash.mjs", th_srcdir());
	const char *argv[] = {"node", script, text, NULL};
	char *out = NULL, *err = NULL;
	int st = ts_run(argv, NULL, 300000, &out, &err);
	printf("%s", out ? out : "");
	if (st != 0 || !out || strstr(out, "FAIL"))
		th_fail(__FILE__, __LINE__, "the browser checks failed (%d):\n%s\n%.4000s", st,
		        out ? out : "", err ? err : "");
	/* The page stopped the observation: none is running any more. */
	const char *status[] = {"status", "--json", NULL};
	char *sj = NULL;
	TH_ASSERT_INT_EQ(ts_product_run(true, status, &sj), 0);
	TH_ASSERT_MSG(sj && !strstr(sj, "\"running\""), "an observation still runs: %s",
	              sj ? sj : "");
	free(sj);
	free(out);
	free(err);
	free(text);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(dashboard_in_a_real_browser),
	    TH_END,
	};
	return th_main(argc, argv, "e2e_dash", tests);
}
