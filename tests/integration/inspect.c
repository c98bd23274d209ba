/*
 * Integration tests of `giulia process NODE PID|NAME` and its REST route
 * against a real Elixir node: a process with links, monitors (by pid and
 * by name), a dictionary of 5000 keys and 20 queued messages; a GenServer
 * stuck in a callback; what the view says is checked against the node's
 * own process_info read from a second connection (erl_call), and what it
 * must not do: read messages, values or state unasked, hang on a stuck
 * process, create atoms from a name it is given, leave a message in a
 * process that does not answer system messages. `giulia ets` against a
 * node of 200 tables and one large named one, checked against ets:info;
 * `giulia ports` against loopback sockets, one busy and one quiet whose
 * byte count is known, and the node's own file descriptor count; `giulia
 * apps` against an application 7 supervisors deep with 60 leaves; `giulia
 * alloc` against the node's own allocator figures and `giulia binleak`
 * against a process holding 20 MB of refc binaries it dropped.
 * needs: elixir
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "harness.h"
#include "node_watch.h"
#include "product.h"
#include "support.h"

static const char NODE_CODE[] =
    "defmodule Demo.Stuck do\n"
    "  use GenServer\n"
    "  def init(x), do: {:ok, x}\n"
    "  def handle_cast(:block, s), do: (Process.sleep(:infinity); {:noreply, s})\n"
    "end\n"
    "{:ok, stuck} = GenServer.start(Demo.Stuck, %{}, name: Demo.Stuck)\n"
    "GenServer.cast(Demo.Stuck, :block)\n"
    "{:ok, _} = GenServer.start(Demo.Stuck, %{answer: 42}, name: Demo.Fine)\n"
    "peers = for _ <- 1..3, do: spawn(fn -> Process.sleep(:infinity) end)\n"
    "big = spawn(fn ->\n"
    "  for i <- 1..5000, do: Process.put({:k, i}, {:value, i})\n"
    "  Enum.each(peers, &Process.link/1)\n"
    "  Process.monitor(Demo.Fine)\n"
    "  Process.monitor(stuck)\n"
    "  Process.sleep(:infinity)\n"
    "end)\n"
    "Process.register(big, Demo.Big)\n"
    "for i <- 1..20, do: send(big, {:msg, i})\n"
    "Process.register(spawn(fn -> Process.sleep(:infinity) end), :plain_sleeper)\n";

static void node(struct ts_beam *n)
{
	ts_beam_start(n, TS_BEAM_ELIXIR_LONG, NODE_CODE, NULL);
	ts_beam_wait_answer(n, "is_pid(whereis(plain_sleeper)).", "true", 60000,
	                    "the node did not set up its processes");
	/* Demo.Big links and monitors after filling its dictionary: wait for it */
	ts_beam_wait_answer(n,
	                    "case process_info(whereis('Elixir.Demo.Big'), [links, monitors]) of "
	                    "[{links, L}, {monitors, M}] -> length(L) =:= 3 andalso "
	                    "length(M) =:= 2; _ -> false end.",
	                    "true", 60000, "Demo.Big did not link and monitor");
}

static json_t *process_json(const struct ts_beam *n, const char *who, const char *const *more)
{
	const char *args[24] = {"process", n->name,  who,        "--cookie",
	                        n->cookie, "--json", "--window", "100"};
	int k = 8;
	for (int i = 0; more && more[i] && k < 22; i++)
		args[k++] = more[i];
	args[k] = NULL;
	char *out = NULL;
	TH_ASSERT_INT_EQ(ts_product_run(false, args, &out), 0);
	json_t *j = json_loads(out ? out : "", 0, NULL);
	TH_ASSERT_MSG(json_is_object(j), "not JSON: %s", out ? out : "");
	free(out);
	return j;
}

/* An integer the node prints for `expr` (ground truth from erl_call). */
static long long node_int(const struct ts_beam *n, const char *expr)
{
	char *r = ts_beam_eval(n, expr);
	TH_ASSERT_MSG(r != NULL && GI_STR_STARTS(r, "{ok, "), "erl_call failed on %s: %s", expr,
	              r ? r : "");
	char *end = NULL;
	long long v = strtoll(r + 5, &end, 10);
	TH_ASSERT_MSG(end && *end == '}', "not an integer: %s", r);
	free(r);
	return v;
}

static void one_process_against_process_info(void)
{
	struct ts_beam n;
	node(&n);
	/* the Elixir spelling of the registered name */
	json_t *p = process_json(&n, "Demo.Big", NULL);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(p, "registered_name")),
	                 "Elixir.Demo.Big");
	long long links = node_int(&n, "length(element(2, process_info(whereis('Elixir.Demo.Big'), "
	                               "links))).");
	long long mons = node_int(&n, "length(element(2, process_info(whereis('Elixir.Demo.Big'), "
	                              "monitors))).");
	TH_ASSERT_INT_EQ(links, 3);
	TH_ASSERT_INT_EQ(mons, 2);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(p, "links_count")), links);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(p, "links")), (size_t)links);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(p, "monitors_count")), mons);
	/* the monitor by name carries the name, written as the node has it */
	json_t *m;
	size_t i;
	bool by_name = false, by_pid = false;
	json_array_foreach(json_object_get(p, "monitors"), i, m)
	{
		const char *name = json_string_value(json_object_get(m, "name"));
		if (name && strcmp(name, "Elixir.Demo.Fine") == 0)
			by_name = true;
		if (name && strcmp(name, "Elixir.Demo.Stuck") == 0 &&
		    json_string_value(json_object_get(m, "id")))
			by_pid = true;
	}
	TH_ASSERT_MSG(by_name && by_pid, "monitors without their names");
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(p, "message_queue_len")), 20);
	json_t *dict = json_object_get(p, "dictionary");
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(dict, "count")), 5000);
	/* keys only, capped at the default 100; no messages, no state unasked */
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(dict, "entries")), 100);
	TH_ASSERT(json_object_get(json_array_get(json_object_get(dict, "entries"), 0), "value") ==
	          NULL);
	TH_ASSERT(json_is_null(json_object_get(p, "messages")));
	TH_ASSERT(json_is_null(json_object_get(p, "state")));
	/* memory as the node counts it, within what 100 ms of an idle process changes */
	long long mem =
	    node_int(&n, "element(2, process_info(whereis('Elixir.Demo.Big'), memory)).");
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(p, "memory_bytes")), mem);
	/* an idle process: no reductions over the window, ours left out */
	TH_ASSERT_MSG(json_number_value(json_object_get(p, "reductions_per_second")) == 0,
	              "an idle process did work: %f",
	              json_number_value(json_object_get(p, "reductions_per_second")));
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(p, "current_function")),
	                 "Process.sleep/1");
	const char *pid = json_string_value(json_object_get(p, "pid"));
	char *want = ts_beam_eval(&n, "pid_to_list(whereis('Elixir.Demo.Big')).");
	TH_ASSERT_STR_CONTAINS(want, pid);
	free(want);
	/* by pid, with values (cut) and three messages */
	char pidcopy[64];
	snprintf(pidcopy, sizeof(pidcopy), "%s", pid);
	json_decref(p);
	const char *more[] = {"--values", "--keys", "5", "--messages", "3", NULL};
	p = process_json(&n, pidcopy, more);
	dict = json_object_get(p, "dictionary");
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(dict, "entries")), 5);
	TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(
	                           json_array_get(json_object_get(dict, "entries"), 0), "value")),
	                       "{value,");
	json_t *shown = json_object_get(json_object_get(p, "messages"), "shown");
	TH_ASSERT_INT_EQ(json_array_size(shown), 3);
	TH_ASSERT_STR_EQ(json_string_value(json_array_get(shown, 0)), "{msg,1}");
	/* reading the messages took none of them */
	TH_ASSERT_INT_EQ(node_int(&n, "element(2, process_info(whereis('Elixir.Demo.Big'), "
	                              "message_queue_len))."),
	                 20);
	json_decref(p);
	/* the text view names things the way the CLI does everywhere */
	const char *args[] = {"process", n.name,     "Demo.Big", "--cookie",
	                      n.cookie,  "--window", "50",       NULL};
	char *out = NULL;
	TH_ASSERT_INT_EQ(ts_product_run(false, args, &out), 0);
	TH_ASSERT_STR_CONTAINS(out, "(Demo.Big)");
	TH_ASSERT_STR_CONTAINS(out, "executing in    Process.sleep/1");
	TH_ASSERT_STR_CONTAINS(out, "dictionary: 5000 keys");
	TH_ASSERT(strstr(out, "Elixir.") == NULL);
	free(out);
}

static void state_only_when_asked_and_bounded(void)
{
	struct ts_beam n;
	node(&n);
	const char *state[] = {"--state", NULL};
	json_t *p = process_json(&n, "Demo.Fine", state);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(p, "proc_lib_initial_call")),
	                 "Demo.Stuck.init/1");
	TH_ASSERT_STR_CONTAINS(
	    json_string_value(json_object_get(json_object_get(p, "state"), "text")), "answer");
	json_decref(p);
	/* a GenServer stuck in a callback: the wait is the timeout, then it says so */
	const char *stuck[] = {"--state", "--state-timeout", "300", NULL};
	p = process_json(&n, "Demo.Stuck", stuck);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(json_object_get(p, "state"), "error")),
	                 "timeout");
	json_decref(p);
	/* a plain process is never sent a system message (it would stay in its
	 * mailbox for good) */
	p = process_json(&n, "plain_sleeper", state);
	TH_ASSERT_STR_CONTAINS(
	    json_string_value(json_object_get(json_object_get(p, "state"), "error")),
	    "not an OTP process");
	json_decref(p);
	TH_ASSERT_INT_EQ(
	    node_int(&n, "element(2, process_info(whereis(plain_sleeper), message_queue_len))."),
	    0);
}

static void names_make_no_atoms_and_errors_are_clear(void)
{
	struct ts_beam n;
	node(&n);
	json_decref(process_json(&n, "plain_sleeper", NULL)); /* the probe's own atoms exist now */
	long long before = node_int(&n, "erlang:system_info(atom_count).");
	const char *args[] = {
	    "process", n.name, "Zz.Never.Seen.Name", "--cookie", n.cookie, "--window", "10", NULL};
	char *out = NULL, *err = NULL;
	char bin[4096];
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	const char *argv[] = {bin,     args[0], args[1], args[2], args[3],
	                      args[4], args[5], args[6], NULL};
	TH_ASSERT_INT_EQ(ts_run(argv, NULL, 60000, &out, &err), 1);
	TH_ASSERT_STR_CONTAINS(err, "no process Zz.Never.Seen.Name");
	free(out);
	free(err);
	long long after = node_int(&n, "erlang:system_info(atom_count).");
	TH_ASSERT_INT_EQ(after, before);
	char *r = ts_beam_eval(&n, "catch list_to_existing_atom(\"Elixir.Zz.Never.Seen.Name\").");
	TH_ASSERT_STR_CONTAINS(r, "badarg");
	free(r);
	/* a pid of another node, or not a pid at all: usage errors, nothing sent */
	const char *remote[] = {bin, "process", n.name, "<5.1.0>", "--cookie", n.cookie, NULL};
	TH_ASSERT_INT_EQ(ts_run(remote, NULL, 60000, &out, &err), 2);
	TH_ASSERT_STR_CONTAINS(err, "not a local pid");
	free(out);
	free(err);
	const char *spaced[] = {bin, "process", n.name, "a name", "--cookie", n.cookie, NULL};
	TH_ASSERT_INT_EQ(ts_run(spaced, NULL, 60000, &out, &err), 2);
	free(out);
	free(err);
}

static void rest_route_through_the_dashboard(void)
{
	struct ts_beam n;
	node(&n);
	char worker[256];
	ts_serve_start(worker, sizeof(worker));
	/* the monitor learns the cookie, then the page's route answers through
	 * the worker's pass-through */
	char body[512], url[1024], *resp = NULL;
	snprintf(body, sizeof(body), "{\"node\":\"%s\",\"cookie\":\"%s\"}", n.name, n.cookie);
	snprintf(url, sizeof(url), "%s/monitor/api/runtime/connect", worker);
	TH_ASSERT_INT_EQ(ts_http("POST", url, body, NULL, &resp), 200);
	free(resp);
	snprintf(url, sizeof(url),
	         "%s/monitor/api/runtime/process?node=%s&process=Demo.Big&window_ms=50&messages=2&"
	         "keys=3",
	         worker, n.name);
	TH_ASSERT_INT_EQ(ts_http("GET", url, NULL, NULL, &resp), 200);
	json_t *p = json_loads(resp, 0, NULL);
	TH_ASSERT_MSG(json_is_object(p), "not JSON: %s", resp);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(p, "links_count")), 3);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(json_object_get(p, "messages"), "shown")),
	                 2);
	TH_ASSERT_INT_EQ(
	    json_array_size(json_object_get(json_object_get(p, "dictionary"), "entries")), 3);
	json_decref(p);
	free(resp);
	snprintf(url, sizeof(url), "%s/monitor/api/runtime/process?node=%s&process=nobody_here",
	         worker, n.name);
	TH_ASSERT_INT_EQ(ts_http("GET", url, NULL, NULL, &resp), 404);
	free(resp);
	snprintf(url, sizeof(url), "%s/monitor/api/runtime/process?node=%s&process=Demo.Big&keys=0",
	         worker, n.name);
	TH_ASSERT_INT_EQ(ts_http("GET", url, NULL, NULL, &resp), 400);
	free(resp);
}

/* A node with many tables: 200 unnamed ones of 1..200 objects, and one
 * named, read-concurrent, larger than all of them, owned by a registered
 * process. */
static const char ETS_NODE[] =
    "register(owner, spawn(fun() -> "
    "  [begin T = ets:new(t, [public]), [ets:insert(T, {K}) || K <- lists:seq(1, I)] end "
    "   || I <- lists:seq(1, 200)], "
    "  ets:new(the_big_one, [named_table, bag, {read_concurrency, true}]), "
    "  [ets:insert(the_big_one, {K, lists:seq(1, 20)}) || K <- lists:seq(1, 3000)], "
    "  receive stop -> ok end end)).";

static void ets_tables_against_ets_info(void)
{
	struct ts_beam n;
	ts_beam_start(&n, TS_BEAM_ERL_LONG, ETS_NODE, NULL);
	ts_beam_wait_answer(&n, "ets:info(the_big_one, size).", "3000", 60000,
	                    "the node did not make its tables");
	const char *args[] = {"ets", n.name, "--cookie", n.cookie, "--json", "-n", "5", NULL};
	char *out = NULL;
	TH_ASSERT_INT_EQ(ts_product_run(false, args, &out), 0);
	json_t *e = json_loads(out ? out : "", 0, NULL);
	TH_ASSERT_MSG(json_is_object(e), "not JSON: %s", out ? out : "");
	free(out);
	long long count = node_int(&n, "length(ets:all()).");
	TH_ASSERT(count > 200);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(e, "count")), count);
	json_t *tables = json_object_get(e, "tables");
	TH_ASSERT_INT_EQ(json_array_size(tables), 5);
	json_t *top = json_array_get(tables, 0);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(top, "name")), "the_big_one");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(top, "owner_name")), "owner");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(top, "type")), "bag");
	TH_ASSERT(json_is_true(json_object_get(top, "read_concurrency")));
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(top, "memory_bytes")),
	                 node_int(&n, "ets:info(the_big_one, memory) * "
	                              "erlang:system_info(wordsize)."));
	/* largest first, by the node's own figures */
	long long prev = -1;
	size_t i;
	json_t *t;
	json_array_foreach(tables, i, t)
	{
		long long m = json_integer_value(json_object_get(t, "memory_bytes"));
		TH_ASSERT(prev < 0 || m <= prev);
		prev = m;
	}
	long long second = node_int(
	    &n, "element(1, lists:nth(2, lists:reverse(lists:sort([{ets:info(T, memory), T} || T "
	        "<- ets:all()])))) * erlang:system_info(wordsize).");
	TH_ASSERT_INT_EQ(
	    json_integer_value(json_object_get(json_array_get(tables, 1), "memory_bytes")), second);
	json_decref(e);
	/* by size: the 200-object table comes right after the big one */
	const char *by_size[] = {"ets", n.name, "--cookie", n.cookie, "--json",
	                         "-n",  "2",    "--by",     "size",   NULL};
	TH_ASSERT_INT_EQ(ts_product_run(false, by_size, &out), 0);
	e = json_loads(out ? out : "", 0, NULL);
	free(out);
	TH_ASSERT_INT_EQ(
	    json_integer_value(
	        json_object_get(json_array_get(json_object_get(e, "tables"), 1), "size")),
	    node_int(&n, "element(1, lists:nth(2, lists:reverse(lists:sort([{ets:info(T, size), T} "
	                 "|| T <- ets:all()]))))."));
	json_decref(e);
	/* the text view fits 80 columns */
	char bin[4096];
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	const char *text[] = {bin, "ets", n.name, "--cookie", n.cookie, NULL};
	char *err = NULL;
	setenv("COLUMNS", "80", 1);
	TH_ASSERT_INT_EQ(ts_run(text, NULL, 60000, &out, &err), 0);
	TH_ASSERT_STR_CONTAINS(out, "the_big_one");
	for (const char *l = out; *l;) {
		size_t len = strcspn(l, "\n");
		TH_ASSERT_MSG(len <= 80 || strstr(l, "\xe2\x80\xa6") != NULL,
		              "a line of %zu columns", len);
		l += len;
		if (*l)
			l++;
	}
	free(out);
	free(err);
}

/* A node with two loopback connections: `quiet` (exactly 123456 bytes sent
 * once, then idle) and `busy` (1000 bytes every 5 ms, for good); each
 * sending socket is handed to a process that stays (the -eval process ends,
 * and its sockets with it). */
static const char PORTS_NODE[] =
    "Pair = fun(Name) -> "
    "  {ok, L} = gen_tcp:listen(0, [binary, {active, false}]), {ok, P} = inet:port(L), "
    "  Self = self(), "
    "  spawn(fun() -> {ok, S} = gen_tcp:accept(L), register(Name, self()), "
    "    Self ! {accepted, S}, "
    "    Loop = fun Lp() -> case gen_tcp:recv(S, 0) of {ok, _} -> Lp(); _ -> ok end end, "
    "    Loop() end), "
    "  {ok, C} = gen_tcp:connect(\"127.0.0.1\", P, [binary]), "
    "  receive {accepted, S} -> {C, S} end end, "
    "{Q, QS} = Pair(quiet_rx), gen_tcp:send(Q, binary:copy(<<7>>, 123456)), "
    "{B, _} = Pair(busy_rx), "
    "Tx = spawn(fun() -> receive go -> ok end, "
    "  Send = fun Sd() -> gen_tcp:send(B, binary:copy(<<1>>, 1000)), timer:sleep(5), Sd() end, "
    "  Send() end), "
    "gen_tcp:controlling_process(B, Tx), register(busy_tx, Tx), Tx ! go, "
    "K = spawn(fun() -> receive stop -> {Q, QS} end end), "
    "gen_tcp:controlling_process(Q, K), register(keeper, K).";

static void ports_over_a_window(void)
{
	struct ts_beam n;
	ts_beam_start(&n, TS_BEAM_ERL_LONG, PORTS_NODE, NULL);
	ts_beam_wait_answer(&n, "is_pid(whereis(keeper)).", "true", 60000,
	                    "the node did not open its sockets");
	/* the quiet pair has delivered its bytes */
	ts_beam_wait_answer(
	    &n,
	    "lists:sum([element(2, lists:keyfind(recv_oct, 1, element(2, inet:getstat(P, "
	    "[recv_oct])))) || P <- erlang:ports(), erlang:port_info(P, connected) =:= "
	    "{connected, whereis(quiet_rx)}]).",
	    "123456", 60000, "the quiet socket never received its bytes");
	const char *args[] = {"ports",    n.name, "--cookie", n.cookie, "--json",
	                      "--window", "500",  "-n",       "100",    NULL};
	char *out = NULL;
	TH_ASSERT_INT_EQ(ts_product_run(false, args, &out), 0);
	json_t *e = json_loads(out ? out : "", 0, NULL);
	TH_ASSERT_MSG(json_is_object(e), "not JSON: %s", out ? out : "");
	free(out);
	/* the node's ports less our own connection */
	long long ports = node_int(&n, "length(erlang:ports()).");
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(e, "observer_ports")), 1);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(e, "count")) + 1, ports);
	json_t *list = json_object_get(e, "ports");
	/* the busy sender first, with bytes and packets over the window */
	json_t *top = json_array_get(list, 0);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(top, "kind")), "tcp");
	bool busy_first = json_integer_value(json_object_get(top, "output_bytes")) > 0 ||
	                  json_integer_value(json_object_get(top, "input_bytes")) > 0;
	TH_ASSERT_MSG(busy_first, "the busiest port moved nothing");
	TH_ASSERT(json_integer_value(json_object_get(top, "send_packets")) +
	              json_integer_value(json_object_get(top, "recv_packets")) >
	          0);
	/* the quiet receiver: its total as the socket counts it, nothing in the window */
	size_t i;
	json_t *p;
	bool quiet = false, busy_tx = false;
	json_array_foreach(list, i, p)
	{
		const char *owner = json_string_value(json_object_get(p, "owner_name"));
		if (owner && strcmp(owner, "quiet_rx") == 0) {
			quiet = true;
			TH_ASSERT_INT_EQ(json_integer_value(json_object_get(p, "input_total")),
			                 123456);
			TH_ASSERT_INT_EQ(json_integer_value(json_object_get(p, "input_bytes")), 0);
			TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(p, "peer")),
			                       "127.0.0.1:");
		}
		if (owner && strcmp(owner, "busy_tx") == 0) {
			busy_tx = true;
			TH_ASSERT(json_integer_value(json_object_get(p, "output_bytes")) >= 1000);
		}
	}
	TH_ASSERT_MSG(quiet && busy_tx, "the quiet receiver or the busy sender is missing");
	/* file descriptors: the OS's count less our connection, within what the
	 * node opens meanwhile (nothing here) */
	json_t *fds = json_object_get(e, "fds");
	long long os_fds =
	    node_int(&n, "length(element(2, prim_file:list_dir(\"/proc/self/fd\"))).");
	/* erl_call's own connection is open while it asks: one more than ours */
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(fds, "used")) + 1 + 1, os_fds + 1);
	TH_ASSERT(json_integer_value(json_object_get(fds, "max")) > 0);
	json_decref(e);
}

/* An application whose supervision tree is 7 supervisors deep, the last
 * with 60 workers, and a worker beside each supervisor. */
static const char APPS_NODE[] =
    "defmodule Deep do\n"
    "  use Supervisor\n"
    "  def start_link(n), do: Supervisor.start_link(__MODULE__, n)\n"
    "  def init(0), do: Supervisor.init(for(i <- 1..60, do: Supervisor.child_spec({Agent, fn "
    "-> i end}, id: {:leaf, i})), strategy: :one_for_one)\n"
    "  def init(n), do: Supervisor.init([Supervisor.child_spec({Deep, n - 1}, id: {:level, n - "
    "1}), {Agent, fn -> n end}], strategy: :one_for_one)\n"
    "end\n"
    "defmodule DeepApp do\n"
    "  use Application\n"
    "  def start(_, _), do: Deep.start_link(6)\n"
    "end\n"
    ":ok = :application.load({:application, :deepapp, [vsn: ~c\"1.2.3\", description: "
    "~c\"deep\", modules: [], registered: [], applications: [:kernel, :stdlib], mod: "
    "{DeepApp, []}]})\n"
    ":ok = :application.start(:deepapp)\n";

/* The node of `tree` at `path` (child indexes), or NULL. */
static json_t *tree_at(json_t *tree, const int *path, size_t n)
{
	for (size_t i = 0; i < n && tree; i++)
		tree = json_array_get(json_object_get(tree, "children"), (size_t)path[i]);
	return tree;
}

/* The child of `sup` that is a supervisor, or NULL. */
static json_t *sub_supervisor(json_t *sup)
{
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(sup, "children"), i, c)
	{
		const char *type = json_string_value(json_object_get(c, "type"));
		if (type && strcmp(type, "supervisor") == 0)
			return c;
	}
	return NULL;
}

static void applications_and_a_deep_tree(void)
{
	struct ts_beam n;
	ts_beam_start(&n, TS_BEAM_ELIXIR_LONG, APPS_NODE, NULL);
	ts_beam_wait_answer(&n, "lists:keymember(deepapp, 1, application:which_applications()).",
	                    "true", 60000, "the application did not start");
	const char *list[] = {"apps", n.name, "--cookie", n.cookie, "--json", NULL};
	char *out = NULL;
	TH_ASSERT_INT_EQ(ts_product_run(false, list, &out), 0);
	json_t *e = json_loads(out ? out : "", 0, NULL);
	TH_ASSERT_MSG(json_is_object(e), "not JSON: %s", out ? out : "");
	free(out);
	/* processes of the application: those whose group leader is its master */
	long long want = node_int(
	    &n, "[[M]] = ets:match(ac_tab, {{application_master, deepapp}, '$1'}), length([P || P "
	        "<- processes(), process_info(P, group_leader) =:= {group_leader, M}]).");
	TH_ASSERT(want >= 7 + 6 + 60);
	size_t i;
	json_t *a;
	bool found = false;
	json_array_foreach(json_object_get(e, "apps"), i, a)
	{
		if (strcmp(json_string_value(json_object_get(a, "name")), "deepapp") != 0)
			continue;
		found = true;
		TH_ASSERT_STR_EQ(json_string_value(json_object_get(a, "version")), "1.2.3");
		TH_ASSERT_INT_EQ(json_integer_value(json_object_get(a, "processes")), want);
		TH_ASSERT(json_integer_value(json_object_get(a, "memory_bytes")) > 0);
	}
	TH_ASSERT_MSG(found, "deepapp not listed");
	json_decref(e);
	/* the whole tree: 7 supervisors down, the last with 10 of its 60 shown */
	const char *whole[] = {"apps",    n.name, "deepapp", "--cookie", n.cookie, "--json",
	                       "--depth", "20",   "--width", "10",       NULL};
	TH_ASSERT_INT_EQ(ts_product_run(false, whole, &out), 0);
	e = json_loads(out ? out : "", 0, NULL);
	free(out);
	json_t *sup = json_object_get(e, "tree");
	int levels = 1;
	while (sub_supervisor(sup)) {
		sup = sub_supervisor(sup);
		levels++;
	}
	TH_ASSERT_INT_EQ(levels, 7);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(sup, "children_count")), 60);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(sup, "children")), 10);
	/* the leaves' supervisor as the node counts its children */
	TH_ASSERT_INT_EQ(
	    node_int(&n, "[[M]] = ets:match(ac_tab, {{application_master, deepapp}, "
	                 "'$1'}), {Top, _} = application_master:get_child(M), "
	                 "length(supervisor:which_children(Top))."),
	    json_integer_value(json_object_get(json_object_get(e, "tree"), "children_count")));
	json_decref(e);
	/* bounded depth: two levels below the top, the third supervisor not read */
	const char *shallow[] = {"apps",   n.name,    "deepapp", "--cookie", n.cookie,
	                         "--json", "--depth", "2",       NULL};
	TH_ASSERT_INT_EQ(ts_product_run(false, shallow, &out), 0);
	e = json_loads(out ? out : "", 0, NULL);
	free(out);
	json_t *second = sub_supervisor(json_object_get(e, "tree"));
	json_t *third = sub_supervisor(second);
	TH_ASSERT(second != NULL && third != NULL);
	TH_ASSERT(json_is_true(json_object_get(third, "cut")));
	TH_ASSERT(json_object_get(third, "children") == NULL);
	static const int first[] = {0};
	TH_ASSERT(tree_at(json_object_get(e, "tree"), first, 1) != NULL);
	json_decref(e);
	/* the text view, and an application that does not run */
	const char *text[] = {"apps", n.name, "deepapp", "--cookie", n.cookie, NULL};
	TH_ASSERT_INT_EQ(ts_product_run(false, text, &out), 0);
	TH_ASSERT_STR_CONTAINS(out, "deepapp 1.2.3");
	TH_ASSERT_STR_CONTAINS(out, "+ top");
	TH_ASSERT_STR_CONTAINS(out, "Deep");
	TH_ASSERT(strstr(out, "Elixir.") == NULL);
	free(out);
	char bin[4096];
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	const char *none[] = {bin, "apps", n.name, "no_such_app_here", "--cookie", n.cookie, NULL};
	char *err = NULL;
	TH_ASSERT_INT_EQ(ts_run(none, NULL, 60000, &out, &err), 1);
	TH_ASSERT_STR_CONTAINS(err, "no application no_such_app_here");
	free(out);
	free(err);
}

/* A binary leak: a long-lived process that was sent 20 refc binaries of
 * 1 MB, dropped them, and does not collect (its heap and binary heap are
 * set large, as a router that touches binaries and allocates little). */
static const char LEAK_NODE[] =
    "register(leaker, spawn_opt(fun() -> Loop = fun L(N) -> receive {bin, B} -> "
    "L(N + byte_size(B)); stop -> N end end, Loop(0) end, "
    "[{min_bin_vheap_size, 10000000}, {min_heap_size, 100000}])), "
    "spawn(fun() -> [leaker ! {bin, binary:copy(<<1>>, 1000000)} || _ <- lists:seq(1, 20)] "
    "end).";

static json_t *run_json(const char *const *args)
{
	char *out = NULL;
	TH_ASSERT_INT_EQ(ts_product_run(false, args, &out), 0);
	json_t *e = json_loads(out ? out : "", 0, NULL);
	TH_ASSERT_MSG(json_is_object(e), "not JSON: %s", out ? out : "");
	free(out);
	return e;
}

/* The type `name` of an alloc answer. */
static json_t *alloc_type(json_t *e, const char *name)
{
	size_t i;
	json_t *t;
	json_array_foreach(json_object_get(e, "types"), i, t)
	{
		if (strcmp(json_string_value(json_object_get(t, "allocator")), name) == 0)
			return t;
	}
	return NULL;
}

static long long jint(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

static void allocators_and_a_binary_leak(void)
{
	struct ts_beam n;
	ts_beam_start(&n, TS_BEAM_ERL_LONG, LEAK_NODE, NULL);
	static const char LEAKED[] = "lists:sum([S || {_, S, _} <- element(2, "
	                             "process_info(whereis(leaker), binary))]).";
	ts_beam_wait_answer(&n, LEAKED, "20000000", 60000, "the leaker did not get its binaries");
	/* allocators, against the node's own erlang:system_info({allocator, A}) */
	const char *alloc[] = {"alloc", n.name, "--cookie", n.cookie, "--json", "-n", "1000", NULL};
	json_t *a = run_json(alloc);
	TH_ASSERT_INT_EQ(jint(a, "allocators"),
	                 node_int(&n, "length(erlang:system_info(alloc_util_allocators))."));
	TH_ASSERT_INT_EQ(jint(a, "instances"),
	                 node_int(&n, "length(lists:append([erlang:system_info({allocator, A}) "
	                              "|| A <- erlang:system_info(alloc_util_allocators)]))."));
	TH_ASSERT_INT_EQ((long long)json_array_size(json_object_get(a, "rows")),
	                 jint(a, "instances"));
	/* literal_alloc changes only when code is loaded: its carriers exactly */
	TH_ASSERT_INT_EQ(
	    jint(alloc_type(a, "literal_alloc"), "carriers_bytes"),
	    node_int(&n,
	             "lists:sum([element(2, lists:keyfind(carriers_size, 1, proplists:get_value("
	             "K, P))) || {instance, _, P} <- erlang:system_info({allocator, "
	             "literal_alloc}), K <- [sbcs, mbcs]])."));
	/* the 20 leaked binaries are single-block carriers' blocks of binary_alloc */
	json_t *bin = alloc_type(a, "binary_alloc");
	long long sbcs_before = jint(bin, "sbcs_blocks_bytes");
	TH_ASSERT_MSG(sbcs_before >= 20000000, "binary_alloc sbcs blocks %lld", sbcs_before);
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(a, "rows"), i, r)
	{
		double u = json_real_value(json_object_get(r, "mbcs_usage"));
		TH_ASSERT(u >= 0.0 && u <= 1.0);
		TH_ASSERT(jint(r, "unused_bytes") >= 0);
	}
	json_array_foreach(json_object_get(a, "cache"), i, r)
	{
		TH_ASSERT(jint(r, "hits") <= jint(r, "calls") || jint(r, "calls") == 0);
	}
	TH_ASSERT_INT_EQ((long long)json_array_size(json_object_get(a, "cache")),
	                 node_int(&n, "length(erlang:system_info({allocator, mseg_alloc}))."));
	json_decref(a);
	/* binleak names the leaker first; its binaries after are the node's reading */
	const char *leak[] = {"binleak", n.name, "--cookie", n.cookie, "--json", "-n", "3", NULL};
	json_t *b = run_json(leak);
	json_t *top = json_array_get(json_object_get(b, "processes"), 0);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(top, "registered_name")), "leaker");
	TH_ASSERT_INT_EQ(jint(top, "before_bytes"), 20000000);
	TH_ASSERT_INT_EQ(jint(top, "before_count"), 20);
	TH_ASSERT_INT_EQ(jint(top, "after_bytes"), node_int(&n, LEAKED));
	TH_ASSERT_INT_EQ(jint(top, "freed_bytes"), 20000000 - jint(top, "after_bytes"));
	TH_ASSERT_INT_EQ(jint(b, "count") - 1, jint(b, "collected")); /* all but the probe */
	TH_ASSERT(json_is_false(json_object_get(b, "cut")));
	json_decref(b);
	/* and the allocator says the carriers' blocks went with them */
	a = run_json(alloc);
	TH_ASSERT(jint(alloc_type(a, "binary_alloc"), "sbcs_blocks_bytes") <=
	          sbcs_before - 19000000);
	json_decref(a);
	/* the text views, and -n beyond the cap */
	char *out = NULL;
	const char *text[] = {"binleak", n.name, "--cookie", n.cookie, NULL};
	TH_ASSERT_INT_EQ(ts_product_run(false, text, &out), 0);
	TH_ASSERT_STR_CONTAINS(out, "garbage collected");
	free(out);
	const char *atext[] = {"alloc", n.name, "--cookie", n.cookie, NULL};
	TH_ASSERT_INT_EQ(ts_product_run(false, atext, &out), 0);
	TH_ASSERT_STR_CONTAINS(out, "binary_alloc");
	TH_ASSERT_STR_CONTAINS(out, "cache hit rates");
	free(out);
	char bin_path[4096];
	snprintf(bin_path, sizeof(bin_path), "%s/giulia", th_bindir());
	const char *many[] = {bin_path, "binleak", n.name, "--cookie", n.cookie, "-n", "101", NULL};
	char *err = NULL;
	TH_ASSERT_INT_EQ(ts_run(many, NULL, 60000, &out, &err), 2);
	free(out);
	free(err);
	/* REST: binleak only with confirm=true */
	char worker[256];
	ts_serve_start(worker, sizeof(worker));
	char body[512], url[1024], *resp = NULL;
	snprintf(body, sizeof(body), "{\"node\":\"%s\",\"cookie\":\"%s\"}", n.name, n.cookie);
	snprintf(url, sizeof(url), "%s/monitor/api/runtime/connect", worker);
	TH_ASSERT_INT_EQ(ts_http("POST", url, body, NULL, &resp), 200);
	free(resp);
	snprintf(url, sizeof(url), "%s/monitor/api/runtime/binleak?node=%s&limit=2", worker,
	         n.name);
	TH_ASSERT_INT_EQ(ts_http("GET", url, NULL, NULL, &resp), 400);
	TH_ASSERT_STR_CONTAINS(resp, "confirm=true");
	free(resp);
	snprintf(url, sizeof(url), "%s/monitor/api/runtime/binleak?node=%s&limit=2&confirm=true",
	         worker, n.name);
	TH_ASSERT_INT_EQ(ts_http("GET", url, NULL, NULL, &resp), 200);
	b = json_loads(resp, 0, NULL);
	TH_ASSERT(json_array_size(json_object_get(b, "processes")) <= 2);
	json_decref(b);
	free(resp);
	snprintf(url, sizeof(url), "%s/monitor/api/runtime/alloc?node=%s&limit=2", worker, n.name);
	TH_ASSERT_INT_EQ(ts_http("GET", url, NULL, NULL, &resp), 200);
	a = json_loads(resp, 0, NULL);
	TH_ASSERT_INT_EQ((long long)json_array_size(json_object_get(a, "rows")), 2);
	json_decref(a);
	free(resp);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(one_process_against_process_info),
	    TH_TEST(state_only_when_asked_and_bounded),
	    TH_TEST(names_make_no_atoms_and_errors_are_clear),
	    TH_TEST(rest_route_through_the_dashboard),
	    TH_TEST(ets_tables_against_ets_info),
	    TH_TEST(ports_over_a_window),
	    TH_TEST(applications_and_a_deep_tree),
	    TH_TEST(allocators_and_a_binary_leak),
	    TH_END,
	};
	return th_main(argc, argv, "integration_inspect", tests);
}
