/*
 * Integration tests of `giulia top NODE --watch` against a real node, in a
 * pseudo-terminal of 80x24 as an operator would run it: the alternate
 * screen, frames redrawn in place with the node's pulse in a header, keys
 * to switch the metric, pause and quit, the terminal restored at the end;
 * plain timestamped frames when stdout is a pipe, one JSON object a line
 * with --json; Enter on a selected row opens its process and any key
 * comes back; a countdown on stderr for --window when it is a terminal,
 * never with --json.
 * needs: elixir
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "node_watch.h"
#include "support.h"
#include "terminal.h"

static void node(struct ts_beam *n)
{
	ts_beam_start(n, TS_BEAM_ELIXIR_LONG,
	              "Process.register(spawn(fn -> Process.sleep(:infinity) end), Top.Sleeper)\n",
	              NULL);
	ts_beam_wait_answer(n, "is_pid(whereis('Elixir.Top.Sleeper')).", "true", 60000,
	                    "never registered its process");
}

static const char *bin(void)
{
	static char path[4096];
	snprintf(path, sizeof(path), "%s/giulia", th_bindir());
	return path;
}

static void watch_full_screen_with_keys(void)
{
	struct ts_beam n;
	node(&n);
	const char *argv[] = {bin(),     "top",        n.name, "--cookie", n.cookie,
	                      "--watch", "--interval", "400",  NULL};
	struct ts_pty p;
	ts_pty_spawn(&p, argv, 80, 24);
	TH_ASSERT_MSG(ts_pty_wait_for(&p, "top by reductions", 60000), "no first frame: %s", p.out);
	/* the alternate screen, the pulse in the header, the cursor home per frame */
	TH_ASSERT_STR_CONTAINS(p.out, "\x1b[?1049h");
	TH_ASSERT_STR_CONTAINS(p.out, "schedulers busy");
	TH_ASSERT_MSG(ts_pty_wait_for(&p, "REDS%", 30000), "no table header: %s", p.out);
	/* a second frame is drawn in place */
	size_t first = p.len;
	for (int i = 0; i < 120 && !strstr(p.out + first, "top by reductions"); i++)
		ts_pty_wait_for(&p, "\x01never\x01", 500);
	TH_ASSERT_MSG(strstr(p.out + first, "\x1b[H") && strstr(p.out + first, "top by reductions"),
	              "no second frame drawn in place");
	ts_pty_type(&p, "m");
	TH_ASSERT_MSG(ts_pty_wait_for(&p, "top by memory", 30000), "m did not switch: %s",
	              p.out + first);
	ts_pty_type(&p, "b");
	TH_ASSERT(ts_pty_wait_for(&p, "top by mailbox", 30000));
	ts_pty_type(&p, "p");
	TH_ASSERT(ts_pty_wait_for(&p, "[paused]", 30000));
	ts_pty_type(&p, "q");
	int st = ts_pty_wait(&p, 30000);
	TH_ASSERT_MSG(st == 0, "top --watch did not quit on q: %d", st);
	/* the terminal is given back: normal screen, cursor shown */
	TH_ASSERT_STR_CONTAINS(p.out, "\x1b[?1049l");
	TH_ASSERT_STR_CONTAINS(p.out, "\x1b[?25h");
	/* every frame fits the 80 columns */
	char *text = ts_pty_text(&p);
	for (const char *l = text; *l;) {
		size_t len = strcspn(l, "\n");
		TH_ASSERT_MSG(len <= 80 || strstr(l, "\xe2\x80\xa6"), "a line of %zu columns", len);
		l += len;
		if (*l)
			l++;
	}
	free(text);
	ts_pty_destroy(&p);
}

/* Enter on the selected row opens its process, as `giulia process` shows
 * it, over the watch's own connection; any key goes back to the list. */
static void watch_enter_opens_a_process(void)
{
	struct ts_beam n;
	node(&n);
	const char *argv[] = {bin(),     "top",        n.name, "--cookie", n.cookie,
	                      "--watch", "--interval", "400",  NULL};
	struct ts_pty p;
	ts_pty_spawn(&p, argv, 100, 40);
	TH_ASSERT_MSG(ts_pty_wait_for(&p, "REDS%", 60000), "no first frame: %s", p.out);
	TH_ASSERT_STR_CONTAINS(p.out, "Enter process");
	/* the selected row is in reverse video */
	TH_ASSERT_MSG(ts_pty_wait_for(&p, "\x1b[7m", 30000), "no row selected");
	ts_pty_type(&p, "j");
	ts_pty_type(&p, "\r");
	TH_ASSERT_MSG(ts_pty_wait_for(&p, "executing in", 30000), "Enter opened nothing: %s",
	              p.out);
	TH_ASSERT_MSG(ts_pty_wait_for(&p, "dictionary:", 30000), "no process view");
	size_t at = p.len;
	ts_pty_type(&p, "x");
	for (int i = 0; i < 120 && !strstr(p.out + at, "top by reductions"); i++)
		ts_pty_wait_for(&p, "\x01never\x01", 500);
	TH_ASSERT_MSG(strstr(p.out + at, "top by reductions") != NULL, "no way back to the list");
	ts_pty_type(&p, "q");
	TH_ASSERT_INT_EQ(ts_pty_wait(&p, 30000), 0);
	ts_pty_destroy(&p);
}

static void watch_plain_in_a_pipe(void)
{
	struct ts_beam n;
	node(&n);
	const char *argv[] = {bin(),        "top", n.name,    "--cookie", n.cookie, "--watch",
	                      "--interval", "300", "--count", "2",        NULL};
	char *out = NULL, *err = NULL;
	TH_ASSERT_INT_EQ(ts_run(argv, NULL, 120000, &out, &err), 0);
	TH_ASSERT_MSG(strchr(out, '\x1b') == NULL, "escape sequences in a pipe: %s", out);
	int frames = 0;
	for (const char *c = out; (c = strstr(c, "--- ")) != NULL; c++)
		frames++;
	TH_ASSERT_INT_EQ(frames, 2);
	TH_ASSERT_STR_CONTAINS(out, "schedulers busy");
	TH_ASSERT_STR_CONTAINS(out, "top by reductions");
	free(out);
	free(err);
	const char *json[] = {bin(),        "top", n.name,    "--cookie", n.cookie, "--watch",
	                      "--interval", "300", "--count", "2",        "--json", NULL};
	TH_ASSERT_INT_EQ(ts_run(json, NULL, 120000, &out, &err), 0);
	int lines = 0;
	for (char *save = NULL, *l = strtok_r(out, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		json_t *j = json_loads(l, 0, NULL);
		TH_ASSERT_MSG(json_is_object(j), "not one JSON object a line: %s", l);
		json_decref(j);
		lines++;
	}
	TH_ASSERT_INT_EQ(lines, 2);
	TH_ASSERT_MSG(!err || !*err, "stderr with --json: %s", err);
	free(out);
	free(err);
}

static void countdown_only_on_a_terminal(void)
{
	struct ts_beam n;
	node(&n);
	const char *argv[] = {bin(),    "pulse",    n.name, "--cookie",
	                      n.cookie, "--window", "2500", NULL};
	struct ts_pty p;
	ts_pty_spawn(&p, argv, 80, 24);
	TH_ASSERT_INT_EQ(ts_pty_wait(&p, 60000), 0);
	TH_ASSERT_STR_CONTAINS(p.out, "measuring: ");
	TH_ASSERT_STR_CONTAINS(p.out, " s left");
	ts_pty_destroy(&p);
	const char *json[] = {bin(),      "pulse", n.name,   "--cookie", n.cookie,
	                      "--window", "500",   "--json", NULL};
	ts_pty_spawn(&p, json, 80, 24);
	TH_ASSERT_INT_EQ(ts_pty_wait(&p, 60000), 0);
	TH_ASSERT(strstr(p.out, "s left") == NULL);
	ts_pty_destroy(&p);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(watch_full_screen_with_keys),
	    TH_TEST(watch_enter_opens_a_process),
	    TH_TEST(watch_plain_in_a_pipe),
	    TH_TEST(countdown_only_on_a_terminal),
	    TH_END,
	};
	return th_main(argc, argv, "integration_cli_top", tests);
}
