/*
 * cmd_observe_int.h - what the runtime commands of the CLI share between
 * cmd_observe.c (`pulse`, `top`, `trace`, `process`) and cmd_inspect.c
 * (`ets`, `ports`, `apps`, `alloc`, `binleak`): their arguments, their
 * errors, their output helpers and the progress line. Not thread-safe
 * unless a function says so; for the CLI's own files only.
 */
#ifndef GIULIA_CLI_CMD_OBSERVE_INT_H
#define GIULIA_CLI_CMD_OBSERVE_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/buf.h"

/* The options of every runtime command, parsed by cli_obs_parse_args. */
struct observe_args {
	const char *node;
	const char *cookie;
	const char *cookie_file;
	char node_buf[512], cookie_buf[1024];
	const char *modules; /* trace: comma-separated */
	const char *by;      /* top: reductions | memory | mailbox */
	int window_ms;
	int timeout_ms;
	int top_n;
	int interval_ms; /* top --watch: between refreshes */
	int count;       /* top --watch: refreshes, 0: until quit */
	bool watch;
	bool json;
	bool call_time; /* trace: time per function too */
	/* process: which, and what to read beyond the default */
	const char *who;
	int keys;
	int messages;
	int state_timeout_ms;
	bool values;
	bool state;
	bool top_n_set; /* -n given */
	int depth;      /* apps: tree levels */
	int width;      /* apps: children per supervisor */
};

/* Parses the options of runtime command `cmd` into `a` (which borrows from
 * argv). Returns 0, CLI_EXIT_USAGE after printing why, or -1 after printing
 * the command's help. */
int cli_obs_parse_args(const char *cmd, int argc, char **argv, struct observe_args *a);

/* Prints "giulia CMD: WHAT" and the way to the help on stderr; returns
 * CLI_EXIT_USAGE. */
int cli_obs_usage_error(const char *cmd, const char *what);

/* Prints why `node` could not be observed (error code `rc`, with its hint)
 * on stderr; returns the exit code for `rc`. */
int cli_obs_node_error(const char *cmd, const char *node, int rc);

/* Prints `v` (borrowed) as indented JSON on stdout. */
void cli_obs_print_json(json_t *v);

/* The string of `v` (borrowed), or `fallback` when it is not a string. */
const char *cli_obs_str_or(json_t *v, const char *fallback);

/* One line of a view appended to `out`, cut in its middle to `width`
 * columns (no cut when `width` is 8 or less). */
void cli_obs_view_line(struct gi_buf *out, int width, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A countdown on stderr while a measurement runs. */
struct cli_obs_progress {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done, running;
	const char *what;
	int64_t end_ms;
};

/* Starts a countdown of `ms` on stderr, only when stderr is a terminal and
 * the output is not JSON (progress never mixes with what scripts read).
 * `what` is borrowed until cli_obs_progress_stop. */
void cli_obs_progress_start(struct cli_obs_progress *p, const char *what, int ms, bool json);

/* Stops and joins the countdown (nothing when it never started). */
void cli_obs_progress_stop(struct cli_obs_progress *p);

#endif
