/*
 * support.h - helpers for integration and end-to-end tests: run programs,
 * start real BEAM nodes and daemons, talk HTTP. Everything started here is a
 * child of the test process, so the harness kills it with the test's process
 * group even when the test fails; the helpers also register orderly stops
 * with th_defer().
 */
#ifndef GIULIA_TESTS_SUPPORT_H
#define GIULIA_TESTS_SUPPORT_H

#include <stdbool.h>
#include <sys/types.h>

/* Runs argv[0] (searched in PATH) with `input` on its standard input (NULL for
 * none), waits at most `timeout_ms`, and returns its exit status (or -1 on a
 * signal or timeout). `out` and `err` (either may be NULL) receive what it
 * printed; free them with free(). */
int ts_run(const char *const argv[], const char *input, int timeout_ms, char **out, char **err);

/* Starts argv in the background with output to `log_path` (NULL: /dev/null). */
pid_t ts_spawn(const char *const argv[], const char *log_path);
/* Sends SIGTERM, waits up to `grace_ms`, then SIGKILL; returns the exit status or -1. */
int ts_stop(pid_t pid, int grace_ms);

/* A port on 127.0.0.1 that was free a moment ago. */
int ts_free_port(void);
/* A random alphanumeric string of `len` characters in `out` (len+1 bytes). */
void ts_random_string(char *out, size_t len);

enum ts_beam_kind {
	TS_BEAM_ELIXIR_LONG, /* elixir --name NAME@127.0.0.1 */
	TS_BEAM_ERL_LONG,    /* erl -name NAME@127.0.0.1, no Elixir on its code path */
	TS_BEAM_ERL_SHORT,   /* erl -sname NAME (host part: this machine's short name) */
};

struct ts_beam {
	enum ts_beam_kind kind;
	char name[256]; /* full node name, e.g. t1234a@127.0.0.1 */
	char cookie[64];
	pid_t pid;
	char log[4096];
};

/* Starts a node of `kind` with a unique name and a random cookie, evaluating
 * `eval` at start (Elixir code for TS_BEAM_ELIXIR_LONG, Erlang expressions
 * otherwise; NULL for none), and waits until it answers. `extra_args` (may be
 * NULL) are added to the command line (e.g. "-pa", dir). Fails the test when
 * the node does not come up in 30 s. Registers its stop with th_defer. */
void ts_beam_start(struct ts_beam *n, enum ts_beam_kind kind, const char *eval,
                   const char *const *extra_args);
/* Evaluates Erlang expressions (ending with '.') on the node from a second
 * connection (erl_call -e); returns what it printed, {ok, Value} or
 * {error, ...} (caller frees), or NULL when erl_call failed. */
char *ts_beam_eval(const struct ts_beam *n, const char *erlang_exprs);
/* Waits up to 60 s until Erlang expressions `expr` answer true on the node
 * (its load runs, say); fails the test naming `what`, the last answer and
 * the node's log otherwise. Mind that `catch` of an undefined function gives
 * {'EXIT', _}, a pair whose atom compares above any number: guard counts
 * with is_integer. */
void ts_beam_wait_true(const struct ts_beam *n, const char *expr, const char *what);
/* Stops the node (SIGTERM, then SIGKILL). */
void ts_beam_stop(struct ts_beam *n);

/* HTTP request with libcurl; returns the status code or -1. `body` may be NULL;
 * `bearer` adds an Authorization header when not NULL. *response is malloc'd. */
int ts_http(const char *method, const char *url, const char *body, const char *bearer,
            char **response);

/* Polls `url` until it answers 200 or `timeout_ms` passes; true when it did. */
bool ts_http_wait(const char *url, int timeout_ms);

#endif
