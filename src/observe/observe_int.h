/*
 * observe_int.h - what the files of src/observe/ share: the connection's
 * insides, message helpers on top of erl_interface, the term decoder, the
 * target-side session protocol and the snapshot builder. The only header
 * outside src/observe/ that may not see is this one: ei.h stays in here.
 *
 * Protocol with the session process (the parts in src/observe/probe/session/):
 *   C node -> session: {giulia, Ref, Request}   Request: sample | baseline | ping | stop
 *                                               | {attach, NewOwnerPid}
 *   session -> C node: {giulia, Ref, Reply}
 *   session -> C node: {giulia, 'end', Reason}  the session ended on its own
 * Ref is an integer chosen by the C node; replies with an unexpected Ref are
 * late answers to requests that timed out and are dropped.
 */
#ifndef GIULIA_OBSERVE_OBSERVE_INT_H
#define GIULIA_OBSERVE_OBSERVE_INT_H

#include <ei.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

#include "observe/dist.h"
#include "observe/snapshot.h"
#include "observe/term.h"

#define DIST_NAME_MAX    256
#define DIST_COOKIE_MAX  256
#define DIST_MAX_REPLY   (64 * 1024 * 1024) /* largest reply decoded (object code) */
#define TERM_MAX_DEPTH   32
#define OBS_MAX_MODULES  64 /* modules traced per session */
#define OBS_SCAN_CAP     2000000
#define OBS_SCAN_CHUNK   20000
#define OBS_HISTORY_KEEP 8
#define OBS_FLAG_CAP     100 /* processes carrying our `call` flag (call_time) */

struct dist_conn {
	ei_cnode ec;
	int fd;
	int timeout_ms;
	char node[DIST_NAME_MAX];
	char otp_release[16];
	char cookie[DIST_COOKIE_MAX]; /* wiped by dist_close */
	int name_fd;                  /* the lock on our node name's slot (dist.c), or -1 */
};

/* Milliseconds left until `deadline_ms` (monotonic), at least 1 (0 means
 * "forever" to ei, which we never want), or 0 when it has passed. */
unsigned dist_ms_left(int64_t deadline_ms);
/* The handshake status message `msg` (`len` bytes after the length prefix:
 * 's' then the status text) as the probe reads it: 0 for ok or
 * ok_simultaneous, GI_ENAMEREFUSED for not_allowed, else GI_EHANDSHAKE.
 * Exposed for fuzzing (fuzz/observe_handshake.c). */
int dist_handshake_status_parse(const unsigned char *msg, size_t len);

/* Sends the encoded term `x` (with version byte) to `to`. */
int dist_send(struct dist_conn *c, const erlang_pid *to, const ei_x_buff *x, int64_t deadline_ms);
/* Waits for the next message until `deadline_ms`, answering ticks; link,
 * exit and monitor signals are skipped. `x` receives the message (reset here;
 * the caller owns it). Returns 0, GI_ETIMEOUT or GI_ENODEDOWN. */
int dist_receive(struct dist_conn *c, erlang_msg *msg, ei_x_buff *x, int64_t deadline_ms);
/* Reads what is on the connection once (call it when poll says readable):
 * *got is true when a message is in `x`, false after a tick or a signal.
 * A message that does not complete within `tmo_ms` gives GI_ETIMEOUT (the
 * stream is then out of step: treat it as lost). */
int dist_receive_one(struct dist_conn *c, erlang_msg *msg, ei_x_buff *x, unsigned tmo_ms,
                     bool *got);
/* Sends rpc:call(M, F, Args) through the node's rex server without waiting;
 * `args` is an encoded list without version byte. */
int dist_rpc_send(struct dist_conn *c, const char *mod, const char *fun, const ei_x_buff *args);
/* True when message `x` is a rex reply {rex, Reply}; *index is then at Reply. */
bool dist_is_rex_reply(const ei_x_buff *x, int *index);
/* rpc:call with deadline: *index is set at the reply term inside `reply` (the
 * caller's, initialised). {badrpc, _} gives GI_EBADRPC. Other messages that
 * arrive meanwhile are dropped. */
int dist_rpc(struct dist_conn *c, const char *mod, const char *fun, const ei_x_buff *args,
             int64_t deadline_ms, ei_x_buff *reply, int *index);

/* Encodes the rpc argument list that evaluates Erlang expressions `src` on
 * the target with `Args` bound to the term `args_term` (encoded without
 * version byte): erl_eval:expr(Boot, [{'Src', Src}, {'Args', Args}], none,
 * none, value), where Boot scans, parses and evaluates Src and returns its
 * value. `out` is initialised here; the caller frees it. */
void dist_eval_args_encode(ei_x_buff *out, const char *src, size_t src_len,
                           const ei_x_buff *args_term);
/* Evaluates `src` on the target (see above) and waits for its value. */
int dist_eval(struct dist_conn *c, const char *src, size_t src_len, const ei_x_buff *args_term,
              int64_t deadline_ms, ei_x_buff *reply, int *index);

/* The start of a one-shot command (a view, a list, a sample): its
 * `window_ms` and `top_n` normalised in place where given (0 or less: the
 * defaults; a window over a day: GI_EINVAL before any connection; top_n
 * at most 1000), then a connection to `t` in *c_out and, where given,
 * `args` and `reply` initialised. On an error nothing is held. The caller
 * ends it with obs_oneshot_finish with the same buffers. */
struct obs_target;
int obs_oneshot_prepare(const struct obs_target *t, int *window_ms, int *top_n,
                        struct dist_conn **c_out, ei_x_buff *args, ei_x_buff *reply);
/* Frees `args` and `reply` where given and closes `c`. */
void obs_oneshot_finish(struct dist_conn *c, ei_x_buff *args, ei_x_buff *reply);

/* The connection of a watch (observe.c), for views read over it
 * (inspect.c); borrowed. */
struct obs_watch;
struct dist_conn *obs_watch_conn(struct obs_watch *w);

/* The session process on the target, as the C node sees it. */
struct obs_probe {
	erlang_pid pid;
	long next_ref;
	json_t *trace_errors; /* array of strings */
	json_t *traced;       /* array of display names */
};

struct obs_probe_config {
	const char *session_id;
	int lease_ms;
	int top_n;
	int budget_ms;
	const char *const *modules; /* display names, NULL-terminated, or NULL */
	bool call_time;             /* also time per function (docs/OBSERVE.md) */
	int flag_cap;               /* processes flagged for call_time; 0: default */
	double overhead;            /* budget (0-1) for duty-cycled counting; 0: count fully */
	int interval_ms;            /* the snapshot interval (bounds a duty cycle); 0: 1000 */
	double pause_above;         /* utilisation that pauses counting; 0: never */
	int sample_period_ms;       /* 0: no sampler */
	int sample_processes;
	int sample_stacks;
	int sample_depth;
	double guest_budget; /* share of one scheduler for all the session's work; 0: 1% */
	bool oneshot;        /* a pulse or a trace: clean up at once when the link drops */
};

/* The sampler's parameters from a session's configuration (clamped). */
void obs_sample_params(int period_ms, int processes, struct obs_probe_config *cfg);

/* Encodes the rpc arguments that start a session process (async start). */
void obs_probe_start_args(struct dist_conn *c, const struct obs_probe_config *cfg, ei_x_buff *out);
/* True when the module names `a` and `b` (as users write them: "Foo",
 * ":ets", "lists") may name one module on the target: they share an atom
 * the target would try for them (":relkv" and "relkv"; "Foo" and
 * ":Elixir.Foo"). */
bool obs_module_same(const char *a, const char *b);
/* Copies the names of the NULL-terminated `in` (borrowed) to `out`, at
 * most `max`, leaving out each that is the same module as an earlier one
 * (obs_module_same); returns how many. */
size_t obs_modules_merge(const char *const *in, const char **out, size_t max);
/* Reads the value of a start (the rpc reply) into `p`. */
int obs_probe_start_parse(const char *buf, int len, int *index, struct obs_probe *p);
/* Starts a session process and waits for it (synchronous). */
int obs_probe_start(struct dist_conn *c, const struct obs_probe_config *cfg, int64_t deadline_ms,
                    struct obs_probe *p);
/* Sends {giulia, Ref, Request}; *ref_out is the Ref to wait for. */
int obs_probe_send(struct dist_conn *c, struct obs_probe *p, const char *request, long *ref_out);
/* Classifies a received message: 1 and *index at Reply when it is
 * {giulia, Ref, Reply} with *ref_out set; 2 when it is {giulia, 'end', _};
 * 0 for anything else. */
int obs_probe_classify(const ei_x_buff *x, long *ref_out, int *index);
/* Sends `request` and waits for its reply (synchronous); *index at Reply. */
int obs_probe_call(struct dist_conn *c, struct obs_probe *p, const char *request,
                   int64_t deadline_ms, ei_x_buff *reply, int *index);
/* Hands the session process `p` over to connection `c` (a new connection
 * after the old one was lost): checks that it is alive, then sends
 * {attach, Self} and waits for `attached`. GI_ENOTFOUND when the process is
 * gone (its lease expired), else the connection errors. */
int obs_probe_attach(struct dist_conn *c, struct obs_probe *p, int64_t deadline_ms);
/* Releases what `p` holds (not the target process). */
void obs_probe_destroy(struct obs_probe *p);

#endif
