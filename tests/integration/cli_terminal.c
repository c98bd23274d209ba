/*
 * Integration tests of text output fitted to the terminal, run in a
 * pseudo-terminal of 80x24 as a user would: the static tables stay within
 * 80 columns with long module names elided in the middle (the function's
 * name kept) and file:line locations; a pipe without COLUMNS gets whole
 * lines, COLUMNS is honoured; `pulse` and `top` of a real node print numbers
 * in units (KiB/MiB, k/M, /s), the reductions share named as such, and
 * Elixir names one way, while --json stays raw. Also node names completed
 * like `erl -sname`, --cookie-file and RELEASE_COOKIE.
 * needs: elixir
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fmt.h"
#include "base/fs.h"
#include "harness.h"
#include "node_watch.h"
#include "terminal.h"
#include "support.h"

static void write_file(const char *root, const char *rel, const char *text)
{
	char path[8192], dir[8192];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	TH_ASSERT_OK(gi_fs_mkdir_p(dir));
	TH_ASSERT_OK(gi_fs_write_file(path, text, strlen(text)));
}

#define LONG_MOD    "Acme.Platform.Infrastructure.Messaging.Registry.TableRegistry"
#define LONG_CALLER "Acme.Platform.Infrastructure.Messaging.Dispatcher.Coordinator"

/* A project whose module names are longer than half a terminal. */
static const char *long_names_project(void)
{
	static char root[4096];
	snprintf(root, sizeof(root), "%s/acme", th_tmpdir());
	write_file(root, "mix.exs",
	           "defmodule Acme.MixProject do\n  use Mix.Project\n"
	           "  def project, do: [app: :acme, version: \"0.1.0\"]\nend\n");
	write_file(root, "lib/acme/registry.ex",
	           "defmodule " LONG_MOD " do\n"
	           "  def handle_call({:get, k}, _from, s) do\n"
	           "    case Map.fetch(s, k) do\n"
	           "      {:ok, v} when is_list(v) -> {:reply, v, s}\n"
	           "      {:ok, v} -> if v > 0, do: {:reply, v, s}, else: {:reply, nil, s}\n"
	           "      :error -> {:reply, nil, s}\n"
	           "    end\n  end\n"
	           "  def lookup(k), do: handle_call({:get, k}, nil, %{})\nend\n");
	const char *callers[] = {"Coordinator", "Scheduler", "Supervisor", "Balancer"};
	for (int i = 0; i < 4; i++) {
		char rel[256], text[2048];
		snprintf(rel, sizeof(rel), "lib/acme/caller_%d.ex", i);
		snprintf(text, sizeof(text),
		         "defmodule Acme.Platform.Infrastructure.Messaging.Dispatcher.%s do\n"
		         "  alias " LONG_MOD "\n"
		         "  def dispatch_everything_now(k), do: TableRegistry.lookup(k)\nend\n",
		         callers[i]);
		write_file(root, rel, text);
	}
	char bin[4096];
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	const char *argv[] = {bin, "index", root, NULL};
	char *err = NULL;
	int st = ts_run(argv, NULL, 120000, NULL, &err);
	TH_ASSERT_MSG(st == 0, "giulia index: %d: %s", st, err ? err : "");
	free(err);
	return root;
}

static void assert_fits(const char *text, int width, const char *what)
{
	char line[4096];
	size_t w = ts_text_overflow(text, (size_t)width, line, sizeof(line));
	TH_ASSERT_MSG(w == 0, "%s: a line of %zu columns: %s", what, w, line);
}

/* Runs `giulia ARGS` in an 80x24 terminal; returns its text (caller frees). */
static char *in_terminal(const char *const *args)
{
	char bin[4096];
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	const char *argv[16] = {bin};
	int n = 1;
	for (const char *const *a = args; *a && n < 15; a++)
		argv[n++] = *a;
	argv[n] = NULL;
	struct ts_pty p;
	ts_pty_spawn(&p, argv, 80, 24);
	int st = ts_pty_wait(&p, 60000);
	char *text = ts_pty_text(&p);
	TH_ASSERT_MSG(st == 0, "giulia %s exited %d: %s", args[0], st, text);
	ts_pty_destroy(&p);
	return text;
}

#define TERMINAL(...) in_terminal((const char *const[]){__VA_ARGS__, NULL})

static void static_tables_fit_80_columns(void)
{
	const char *root = long_names_project();
	char *out = TERMINAL("complexity", "--project", root);
	assert_fits(out, 80, "complexity");
	/* elided in the middle: the start and the function's name stay */
	TH_ASSERT_STR_CONTAINS(out, "handle_call/3");
	TH_ASSERT_STR_CONTAINS(out, "Acme.Platform");
	TH_ASSERT_STR_CONTAINS(out, "\xe2\x80\xa6");
	TH_ASSERT_STR_CONTAINS(out, "lib/acme/registry.ex:2");
	free(out);
	out = TERMINAL("functions", LONG_MOD, "--project", root);
	assert_fits(out, 80, "functions");
	TH_ASSERT_STR_CONTAINS(out, "lib/acme/registry.ex:2");
	free(out);
	const char *cmds[][2] = {{"modules", NULL},   {"hubs", NULL},           {"coupling", NULL},
	                         {"dead-code", NULL}, {"dependents", LONG_MOD}, {"cycles", NULL}};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		out = cmds[i][1] ? TERMINAL(cmds[i][0], cmds[i][1], "--project", root)
		                 : TERMINAL(cmds[i][0], "--project", root);
		assert_fits(out, 80, cmds[i][0]);
		free(out);
	}
	/* The path says through which kinds of edge. */
	out = TERMINAL("path", LONG_CALLER, LONG_MOD, "--project", root);
	TH_ASSERT_STR_CONTAINS(out, "(alias,call)");
	TH_ASSERT_STR_CONTAINS(out, "1 hop\n");
	free(out);
}

static void pipes_get_whole_lines_unless_columns(void)
{
	const char *root = long_names_project();
	char bin[4096];
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	const char *argv[] = {bin, "complexity", "--project", root, NULL};
	unsetenv("COLUMNS");
	char *out = NULL;
	TH_ASSERT_INT_EQ(ts_run(argv, NULL, 60000, &out, NULL), 0);
	TH_ASSERT_STR_CONTAINS(out, LONG_MOD ".handle_call/3");
	free(out);
	setenv("COLUMNS", "60", 1);
	TH_ASSERT_INT_EQ(ts_run(argv, NULL, 60000, &out, NULL), 0);
	unsetenv("COLUMNS");
	assert_fits(out, 60, "complexity at COLUMNS=60");
	TH_ASSERT_STR_CONTAINS(out, "handle_call/3");
	free(out);
}

/* A node with a registered Elixir process doing some work. */
static void busy_node(struct ts_beam *n)
{
	ts_beam_start(n, TS_BEAM_ELIXIR_LONG,
	              "defmodule Spinner do\n"
	              "  def loop(acc), do: loop(rem(acc * 31 + 7, 1_000_003))\n"
	              "end\n"
	              "Process.register(spawn(fn -> Spinner.loop(1) end), Spinner.Worker)\n",
	              NULL);
	ts_beam_wait_answer(n, "is_pid(whereis('Elixir.Spinner.Worker')).", "true", 60000,
	                    "never registered its worker");
}

static void pulse_and_top_format_numbers(void)
{
	struct ts_beam n;
	busy_node(&n);
	char *out = TERMINAL("pulse", n.name, "--cookie", n.cookie, "--window", "300");
	assert_fits(out, 80, "pulse");
	TH_ASSERT_STR_CONTAINS(out, " MiB");
	TH_ASSERT_STR_CONTAINS(out, "/s");
	TH_ASSERT_STR_CONTAINS(out, "REDS%");
	TH_ASSERT(strstr(out, "CPU%") == NULL);
	TH_ASSERT_STR_CONTAINS(out, "Spinner.Worker");
	TH_ASSERT_MSG(strstr(out, "Elixir.") == NULL, "an Elixir name written raw: %s", out);
	free(out);
	out = TERMINAL("top", n.name, "--cookie", n.cookie, "--by", "memory");
	assert_fits(out, 80, "top");
	TH_ASSERT(strstr(out, "Elixir.") == NULL);
	free(out);
	out = TERMINAL("trace", n.name, "Spinner", "--cookie", n.cookie, "--for", "300");
	assert_fits(out, 80, "trace");
	TH_ASSERT_STR_CONTAINS(out, "Spinner.loop/1");
	free(out);
	/* --json stays raw: byte counts are integers. */
	char bin[4096];
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	const char *argv[] = {bin, "pulse", n.name, "--cookie", n.cookie, "--json", NULL};
	TH_ASSERT_INT_EQ(ts_run(argv, NULL, 60000, &out, NULL), 0);
	json_t *j = json_loads(out, 0, NULL);
	TH_ASSERT(j != NULL);
	TH_ASSERT(json_is_integer(json_object_get(json_object_get(j, "memory"), "total")));
	json_decref(j);
	free(out);
}

static void node_names_and_cookies_as_beam_people_keep_them(void)
{
	struct ts_beam n;
	ts_beam_start(&n, TS_BEAM_ERL_SHORT, NULL, NULL);
	char bin[4096], bare[256], file[4096];
	snprintf(bin, sizeof(bin), "%s/giulia", th_bindir());
	snprintf(bare, sizeof(bare), "%.*s", (int)strcspn(n.name, "@"), n.name);
	/* A bare name is completed with this host, as erl -sname does. */
	const char *a[] = {bin, "pulse", bare, "--cookie", n.cookie, "--window", "100", NULL};
	char *err = NULL;
	TH_ASSERT_MSG(ts_run(a, NULL, 60000, NULL, &err) == 0, "pulse %s: %s", bare,
	              err ? err : "");
	free(err);
	/* --cookie-file */
	snprintf(file, sizeof(file), "%s/cookie", th_tmpdir());
	char line[128];
	snprintf(line, sizeof(line), "%s\n", n.cookie);
	TH_ASSERT_OK(gi_fs_write_file(file, line, strlen(line)));
	const char *b[] = {bin, "pulse", n.name, "--cookie-file", file, "--window", "100", NULL};
	TH_ASSERT_INT_EQ(ts_run(b, NULL, 60000, NULL, NULL), 0);
	TH_ASSERT_OK(gi_fs_write_file(file, "wrong\n", 6));
	TH_ASSERT_INT_EQ(ts_run(b, NULL, 60000, NULL, NULL), 12);
	/* RELEASE_COOKIE, with no GIULIA_COOKIE and no ~/.erlang.cookie */
	const char *c[] = {bin, "pulse", n.name, "--window", "100", NULL};
	char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	char *giulia = getenv("GIULIA_COOKIE") ? strdup(getenv("GIULIA_COOKIE")) : NULL;
	setenv("HOME", th_tmpdir(), 1);
	unsetenv("GIULIA_COOKIE");
	setenv("RELEASE_COOKIE", n.cookie, 1);
	int st = ts_run(c, NULL, 60000, NULL, &err);
	unsetenv("RELEASE_COOKIE");
	if (home)
		setenv("HOME", home, 1);
	if (giulia)
		setenv("GIULIA_COOKIE", giulia, 1);
	free(home);
	free(giulia);
	TH_ASSERT_MSG(st == 0, "pulse with RELEASE_COOKIE: %d: %s", st, err ? err : "");
	free(err);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(static_tables_fit_80_columns),
	    TH_TEST(pipes_get_whole_lines_unless_columns),
	    TH_TEST(pulse_and_top_format_numbers),
	    TH_TEST(node_names_and_cookies_as_beam_people_keep_them),
	    TH_END,
	};
	return th_main(argc, argv, "integration_cli_terminal", tests);
}
