/*
 * Integration tests of the worker's automatic use of object code pulled from
 * the observed node (issue 8): a real Elixir node running modules that no
 * indexed project has (compiled here with elixirc, started with -pa), a real
 * worker and monitor on free ports, giulia-observe start/stop; the stored
 * profile's hot modules and trace hotspots then carry graph fields. A node
 * whose module has no object code still gets a profile, with a note saying
 * why its topology is missing. Neither leaks the cookie.
 * needs: erlang-base elixir
 */
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "api_util.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/fs.h"
#include "observe/observe.h"

static const char APP_SRC[] =
    "defmodule AutoPull.Helper do\n"
    "  def compute(n), do: Enum.reduce(1..300, n, fn x, acc -> rem(acc * 31 + x, 1_000_003) "
    "end)\n"
    "  def twice(n), do: compute(compute(n))\n"
    "end\n"
    "defmodule AutoPull.Hot do\n"
    "  def loop(n) do\n"
    "    n = AutoPull.Helper.twice(n)\n"
    "    if rem(n, 3) == 0, do: :timer.sleep(1), else: :ok\n"
    "    loop(n + 1)\n"
    "  end\n"
    "end\n"
    "defmodule AutoPull.Caller do\n"
    "  def go, do: AutoPull.Helper.compute(1)\n"
    "end\n";

static const char APP_RESOURCE[] =
    "{application, autopull, [{description, \"autopull test\"}, {vsn, \"0.1.0\"},\n"
    " {modules, ['Elixir.AutoPull.Helper', 'Elixir.AutoPull.Hot', 'Elixir.AutoPull.Caller']},\n"
    " {registered, []}, {applications, [kernel, stdlib, elixir]}]}.\n";

/* A module loaded from a binary, with no file anywhere: no object code to pull. */
static const char HIDDEN_LOAD[] =
    "{ok, M, B} = compile:forms([{attribute,1,module,aphidden},"
    "{attribute,2,export,[{loop,1}]},"
    "{function,3,loop,1,[{clause,3,[{var,3,'N'}],[],"
    "[{call,3,{remote,3,{atom,3,lists},{atom,3,seq}},[{integer,3,1},{integer,3,3000}]},"
    "{call,3,{remote,3,{atom,3,timer},{atom,3,sleep}},[{integer,3,2}]},"
    "{call,3,{atom,3,loop},[{op,3,'+',{var,3,'N'},{integer,3,1}}]}]}]}]),"
    "{module, aphidden} = code:load_binary(M, \"/nonexistent/aphidden.beam\", B),"
    "spawn(aphidden, loop, [0]), ok.";

static void write_text(const char *path, const char *text)
{
	TH_ASSERT_OK(gi_fs_write_file(path, text, strlen(text)));
}

static long long monitor_snapshots(const struct td_daemon *m)
{
	json_t *s = NULL;
	td_get(m, "/api/monitor/observe/status", &s);
	long long n = json_integer_value(
	    json_object_get(json_array_get(json_object_get(s, "observations"), 0), "snapshots"));
	json_decref(s);
	return n;
}

static void wait_snapshots(const struct td_daemon *m, long long n)
{
	int64_t deadline = gi_clock_mono_ms() + 120000;
	while (monitor_snapshots(m) < n) {
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "fewer than %lld snapshots in 120 s",
		              n);
		gi_clock_sleep_ms(100);
	}
}

static json_t *find_by(json_t *array, const char *key, const char *value)
{
	size_t i;
	json_t *x;
	json_array_foreach(array, i, x)
	{
		const char *v = json_string_value(json_object_get(x, key));
		if (v && strcmp(v, value) == 0)
			return x;
	}
	return NULL;
}

static bool list_has(json_t *array, const char *value)
{
	size_t i;
	json_t *x;
	json_array_foreach(array, i, x)
	{
		if (json_is_string(x) && strcmp(json_string_value(x), value) == 0)
			return true;
	}
	return false;
}

/* Fails when any file under `dir` contains `secret`. */
static void assert_not_in_tree(const char *dir, const char *secret)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		struct stat st;
		if (lstat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			assert_not_in_tree(path, secret);
			continue;
		}
		char *data = NULL;
		size_t len = 0;
		if (!S_ISREG(st.st_mode) || gi_fs_read_file(path, 256u << 20, &data, &len) != 0)
			continue;
		bool found = memmem(data, len, secret, strlen(secret)) != NULL;
		gi_free(data);
		TH_ASSERT_MSG(!found, "the cookie was written to %s", path);
	}
	closedir(d);
}

static json_t *latest_profile(const struct td_daemon *w)
{
	json_t *r = NULL;
	TH_ASSERT_INT_EQ(td_get(w, "/api/runtime/profile/latest", &r), 200);
	json_t *p = json_incref(json_object_get(r, "profile"));
	if (!p)
		p = json_incref(r);
	json_decref(r);
	json_t *brief = json_pack(
	    "{s:O?, s:O?, s:O?, s:O?}", "object_code", json_object_get(p, "object_code"), "errors",
	    json_object_get(p, "errors"), "hot_modules", json_object_get(p, "hot_modules"),
	    "trace_hotspots", json_object_get(p, "trace_hotspots"));
	char *text = json_dumps(brief, JSON_INDENT(1));
	fprintf(stderr, "profile (parts): %.6000s\n", text);
	free(text);
	json_decref(brief);
	return p;
}

static void hot_modules_without_source_get_topology(void)
{
	char ebin[4096], src[4096], app[4200], node_ebin[4096];
	snprintf(ebin, sizeof(ebin), "%s/app/ebin", th_tmpdir());
	snprintf(src, sizeof(src), "%s/autopull.ex", th_tmpdir());
	snprintf(app, sizeof(app), "%s/autopull.app", ebin);
	TH_ASSERT_OK(gi_fs_mkdir_p(ebin));
	write_text(src, APP_SRC);
	write_text(app, APP_RESOURCE);
	const char *elixirc[] = {"elixirc", "-o", ebin, src, NULL};
	char *err = NULL;
	TH_ASSERT_MSG(ts_run(elixirc, NULL, 300000, NULL, &err) == 0, "elixirc: %s",
	              err ? err : "");
	free(err);

	struct ts_beam node;
	const char *pa[] = {"-pa", ebin, NULL};
	ts_beam_start(&node, TS_BEAM_ELIXIR_LONG, NULL, pa);
	/* elixir applies -pa after the node is up: wait until the code path has it. */
	char *r = NULL;
	int64_t deadline = gi_clock_mono_ms() + 60000;
	for (;;) {
		r = ts_beam_eval(&node, "ok = application:load(autopull),"
		                        " spawn('Elixir.AutoPull.Hot', loop, [1]), ok.");
		if ((r && strstr(r, "{ok")) || gi_clock_mono_ms() > deadline)
			break;
		free(r);
		gi_clock_sleep_ms(200);
	}
	TH_ASSERT_MSG(r && strstr(r, "{ok"), "load: %s", r ? r : "(erl_call failed)");
	free(r);

	struct td_daemon w = {0}, m = {0};
	td_worker(&w, NULL);
	td_monitor_for(&m, &w);
	setenv("GIULIA_MONITOR_URL", m.url, 1);
	char bin[1024];
	snprintf(bin, sizeof(bin), "%s/giulia-observe", th_bindir());
	/* every call counted: the trace hotspot of compute/1 is asserted */
	const char *start[] = {bin,          "start", node.name,
	                       node.cookie,  "300",   "AutoPull.Helper",
	                       "--overhead", "0",     NULL};
	char *out = NULL;
	TH_ASSERT_INT_EQ(ts_run(start, NULL, 60000, &out, NULL), 0);
	free(out);
	wait_snapshots(&m, 5);
	const char *stop[] = {bin, "stop", node.name, NULL};
	TH_ASSERT_INT_EQ(ts_run(stop, NULL, 300000, &out, NULL), 0);
	TH_ASSERT_MSG(strstr(out, node.cookie) == NULL, "stop printed the cookie");
	free(out);

	/* Cached in the worker's data dir, with the application's other module. */
	snprintf(node_ebin, sizeof(node_ebin), "%s/nodes/%s/ebin/Elixir.AutoPull.Caller.beam",
	         w.data, node.name);
	struct stat st;
	TH_ASSERT_MSG(stat(node_ebin, &st) == 0, "%s missing", node_ebin);

	json_t *p = latest_profile(&w);
	json_t *oc = json_object_get(p, "object_code");
	TH_ASSERT(json_integer_value(json_object_get(oc, "pulled")) >= 3);
	TH_ASSERT(json_object_get(oc, "error") == NULL);
	json_t *hot = find_by(json_object_get(p, "hot_modules"), "module", "AutoPull.Hot");
	TH_ASSERT_MSG(hot, "AutoPull.Hot is not a hot module");
	json_t *g = json_object_get(hot, "graph");
	TH_ASSERT(json_is_true(json_object_get(g, "in_graph")));
	TH_ASSERT(json_integer_value(json_object_get(g, "ce")) >= 1); /* AutoPull.Helper */
	TH_ASSERT(json_is_number(json_object_get(g, "complexity")));
	json_t *spot =
	    find_by(json_object_get(p, "trace_hotspots"), "mfa", "AutoPull.Helper.compute/1");
	TH_ASSERT_MSG(spot, "no trace hotspot for AutoPull.Helper.compute/1");
	TH_ASSERT(json_is_true(json_object_get(spot, "in_graph")));
	json_t *callers = json_object_get(spot, "callers");
	TH_ASSERT(list_has(callers, "AutoPull.Helper.twice/1"));
	/* A sibling module that never ran: its code came with the application. */
	TH_ASSERT(list_has(callers, "AutoPull.Caller.go/0"));
	char *text = json_dumps(p, 0);
	TH_ASSERT_MSG(strstr(text, node.cookie) == NULL, "the profile holds the cookie");
	free(text);
	json_decref(p);

	TH_ASSERT_INT_EQ(td_stop(&m), 0);
	TH_ASSERT_INT_EQ(td_stop(&w), 0);
	assert_not_in_tree(w.data, node.cookie);
	assert_not_in_tree(m.data, node.cookie);
	char *log = NULL;
	size_t len = 0;
	TH_ASSERT_OK(gi_fs_read_file(m.log, 64u << 20, &log, &len));
	TH_ASSERT_MSG(memmem(log, len, node.cookie, strlen(node.cookie)) == NULL,
	              "the monitor logged the cookie");
	gi_free(log);
}

static void missing_object_code_is_noted(void)
{
	struct ts_beam node;
	ts_beam_start(&node, TS_BEAM_ERL_LONG, NULL, NULL);
	char *r = ts_beam_eval(&node, HIDDEN_LOAD);
	TH_ASSERT_MSG(r && strstr(r, "ok"), "load: %s", r ? r : "(erl_call failed)");
	free(r);
	struct td_daemon w = {0}, m = {0};
	td_worker(&w, NULL);
	td_monitor_for(&m, &w);
	char body[1024];
	snprintf(body, sizeof(body),
	         "{\"node\":\"%s\",\"cookie\":\"%s\",\"interval_ms\":300,"
	         "\"trace_modules\":[\":aphidden\"]}",
	         node.name, node.cookie);
	TH_ASSERT_INT_EQ(td_post(&m, "/api/monitor/observe/start", body, NULL), 200);
	wait_snapshots(&m, 4);
	snprintf(body, sizeof(body), "{\"node\":\"%s\"}", node.name);
	json_t *resp = NULL;
	TH_ASSERT_INT_EQ(td_post(&m, "/api/monitor/observe/stop", body, &resp), 200);
	TH_ASSERT(json_is_integer(json_object_get(resp, "profile_id")));
	json_decref(resp);
	json_t *p = latest_profile(&w);
	json_t *errors = json_object_get(p, "errors");
	bool noted = false;
	size_t i;
	json_t *e;
	json_array_foreach(errors, i, e)
	{
		const char *s = json_string_value(e);
		if (s && strstr(s, "no topology") && strstr(s, ":aphidden") &&
		    strstr(s, "no object code"))
			noted = true;
	}
	TH_ASSERT_MSG(noted, "no note on the missing topology of :aphidden");
	json_decref(p);
}

/* A bare Erlang module name ("calendar", as people write `calendar` in
 * Erlang) is the Erlang module: its object code is pulled and the profile
 * has its topology (before, it was looked up as Elixir.calendar, and the
 * profile said "no object code" though the node had it). */
static void bare_erlang_module_name_gets_its_object_code(void)
{
	struct ts_beam node;
	ts_beam_start(
	    &node, TS_BEAM_ERL_LONG,
	    "spawn(fun() -> L = fun F() -> _ = calendar:local_time(), timer:sleep(2), F() "
	    "end, L() end).",
	    NULL);
	struct td_daemon w = {0}, m = {0};
	td_worker(&w, NULL);
	td_monitor_for(&m, &w);
	char body[1024];
	snprintf(body, sizeof(body),
	         "{\"node\":\"%s\",\"cookie\":\"%s\",\"interval_ms\":300,"
	         "\"trace_modules\":[\"calendar\"],\"overhead\":0}",
	         node.name, node.cookie);
	json_t *resp = NULL;
	TH_ASSERT_INT_EQ(td_post(&m, "/api/monitor/observe/start", body, NULL), 200);
	wait_snapshots(&m, 4);
	snprintf(body, sizeof(body), "{\"node\":\"%s\"}", node.name);
	TH_ASSERT_INT_EQ(td_post(&m, "/api/monitor/observe/stop", body, &resp), 200);
	json_decref(resp);
	json_t *p = latest_profile(&w);
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(p, "errors"), i, e)
	{
		const char *text = json_string_value(e);
		TH_ASSERT_MSG(!text || !strstr(text, "no object code"), "%s", text);
	}
	char *all = json_dumps(json_object_get(p, "trace_hotspots"), JSON_COMPACT);
	TH_ASSERT_MSG(all && strstr(all, ":calendar"), "no :calendar hotspot: %s", all ? all : "");
	free(all);
	json_decref(p);
}

/* The node goes away during the observation: the object code cannot be
 * pulled, and the profile says so. */
static void unreachable_node_is_noted(void)
{
	struct ts_beam node;
	ts_beam_start(&node, TS_BEAM_ERL_LONG, NULL, NULL);
	char *r = ts_beam_eval(&node, HIDDEN_LOAD);
	TH_ASSERT_MSG(r && strstr(r, "ok"), "load: %s", r ? r : "(erl_call failed)");
	free(r);
	struct td_daemon w = {0}, m = {0};
	td_worker(&w, NULL);
	td_monitor_for(&m, &w);
	char body[1024];
	snprintf(body, sizeof(body),
	         "{\"node\":\"%s\",\"cookie\":\"%s\",\"interval_ms\":300,"
	         "\"trace_modules\":[\":aphidden\"]}",
	         node.name, node.cookie);
	TH_ASSERT_INT_EQ(td_post(&m, "/api/monitor/observe/start", body, NULL), 200);
	wait_snapshots(&m, 3);
	ts_beam_stop(&node);
	json_t *p = NULL;
	int64_t deadline = gi_clock_mono_ms() + 180000;
	while (td_get(&w, "/api/runtime/profile/latest", &p) != 200) {
		json_decref(p);
		p = NULL;
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline,
		              "no profile 180 s after the node died");
		gi_clock_sleep_ms(200);
	}
	json_decref(p);
	p = latest_profile(&w);
	TH_ASSERT(json_is_string(json_object_get(json_object_get(p, "object_code"), "error")));
	bool noted = false;
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(p, "errors"), i, e)
	{
		const char *s = json_string_value(e);
		if (s && strstr(s, ":aphidden") && strstr(s, "object code not pulled"))
			noted = true;
	}
	TH_ASSERT_MSG(noted, "no note that the object code could not be pulled");
	char *text = json_dumps(p, 0);
	TH_ASSERT_MSG(strstr(text, node.cookie) == NULL, "the profile holds the cookie");
	free(text);
	json_decref(p);
}

static void object_code_route_refuses_bad_input(void)
{
	struct td_daemon w = {0};
	td_worker(&w, NULL);
	const char *path = "/api/runtime/ingest/object_code";
	TD_EXPECT_ERROR(&w, "POST", path, "{\"node\":\"a@b\"}", 400);
	TD_EXPECT_ERROR(&w, "POST", path, "{\"node\":\"nohost\",\"modules\":[]}", 400);
	TD_EXPECT_ERROR(&w, "POST", path,
	                "{\"node\":\"a@b\",\"modules\":[{\"module\":\"../x\",\"code\":\"\"}]}",
	                400);
	TD_EXPECT_ERROR(&w, "POST", path,
	                "{\"node\":\"a@b\",\"modules\":[{\"module\":\"x\",\"code\":\"!!!!\"}]}",
	                400);
	/* base64 of "notabeamfile" */
	TD_EXPECT_ERROR(
	    &w, "POST", path,
	    "{\"node\":\"a@b\",\"modules\":[{\"module\":\"x\",\"code\":\"bm90YWJlYW1maWxl\"}]}",
	    400);
	/* A node name cannot lead outside the data dir: it is not a node name. */
	TD_EXPECT_ERROR(&w, "POST", path, "{\"node\":\"../../evil@h/x\",\"modules\":[]}", 400);
	char outside[4096];
	struct stat st;
	snprintf(outside, sizeof(outside), "%s/../evil@h", w.data);
	TH_ASSERT(stat(outside, &st) != 0);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(object_code_route_refuses_bad_input),
	    TH_TEST(hot_modules_without_source_get_topology),
	    TH_TEST(missing_object_code_is_noted),
	    TH_TEST(unreachable_node_is_noted),
	    TH_TEST(bare_erlang_module_name_gets_its_object_code),
	    {NULL, NULL},
	};
	(void)td_snapshot; /* api_util.h's, unused here */
	return th_main(argc, argv, "integration_autopull", tests);
}
