/*
 * dist.h - a deadline-bounded Distributed Erlang connection to a live node, as
 * a hidden C node (erl_interface). The observer's sessions and
 * `giulia index --node` (object code pulled from a running node) use it.
 *
 * Naming: the target's mode is read from its name (a dot in the host part:
 * long names, else short names) and our own node name is made to match, so a
 * user never meets the short/long mismatch. epmd is asked on ERL_EPMD_PORT
 * when it is set, else 4369.
 *
 * Cookie: `cookie`, else $GIULIA_COOKIE, else ~/.erlang.cookie. It is kept
 * only inside the connection's memory (wiped on close) and is never printed,
 * logged, stored or returned.
 *
 * Deadlines: every network operation (epmd, connect and handshake, send,
 * receive, rpc) is bounded by the connection's timeout. Errors: GI_EEPMD (no
 * epmd on the host), GI_ENONODE (epmd does not know the name), GI_ENOCOOKIE
 * (no cookie given, in GIULIA_COOKIE or in ~/.erlang.cookie), GI_ECOOKIE (the
 * node accepted our name and rejected the challenge reply: the only cookie
 * case), GI_ENAMEREFUSED (the node answered not_allowed to our name),
 * GI_EHANDSHAKE (the node closed the connection before the challenge, or
 * sent something that is not a handshake: the two are not told apart),
 * GI_ETIMEOUT, GI_ENODEDOWN (the connection was refused or lost),
 * GI_EOTPVERSION (OTP older than 24), GI_EBADRPC (the call failed on the
 * node), GI_EINVAL (a malformed node name or a cookie over 255 bytes).
 *
 * No atom is created on the target from a name given here: module and
 * application names are looked up as existing atoms on the target side.
 *
 * Threads: a connection is used by one thread at a time; different
 * connections may be used from different threads at once.
 */
#ifndef GIULIA_OBSERVE_DIST_H
#define GIULIA_OBSERVE_DIST_H

#include <stddef.h>

#define DIST_TIMEOUT_DEFAULT_MS 5000

struct dist_conn;

struct dist_options {
	const char *node;   /* name@host */
	const char *cookie; /* NULL: $GIULIA_COOKIE, else ~/.erlang.cookie */
	int timeout_ms;     /* per operation; 0: DIST_TIMEOUT_DEFAULT_MS */
};

/* Connects to o->node and checks its OTP release. *out is the caller's, to
 * free with dist_close(). Our node name is stable (each name is an atom the
 * target never frees): BASE@HOST, where BASE is dist_name_base_set's or,
 * by default, giulia_u<UID> (one per user and host), with a suffix _N only
 * while N other connections of the same base to the same node are open
 * (slots held as locks on files in $XDG_RUNTIME_DIR/giulia-names, else
 * /tmp/giulia-names-UID, so that processes of one user never share a name
 * on one node at once); a node that still holds the name (a connection it
 * has not seen end) makes the next slot be tried. Where no lock can be
 * taken, the name is giulia_PID_N as before. */
int dist_connect(const struct dist_options *o, struct dist_conn **out);
/* Sets the base of our node names for this process (copied; [A-Za-z0-9_],
 * at most 40 characters, else ignored): a daemon names itself once at
 * start, before its first connection. Thread-safe. */
void dist_name_base_set(const char *base);
/* Closes the connection and wipes the cookie; NULL does nothing. */
void dist_close(struct dist_conn *c);

/* The target's node name and OTP release ("25"); borrowed from `c`. */
const char *dist_node(const struct dist_conn *c);
const char *dist_otp_release(const struct dist_conn *c);
/* The per-operation timeout of `c` in milliseconds. */
int dist_timeout_ms(const struct dist_conn *c);

/* Object code of module `atom_text` (e.g. "Elixir.Foo.Bar", "lists") as
 * code:get_object_code/1 gives it. *code_out (*len_out bytes) and
 * *filename_out are the caller's, to free with gi_free. GI_ENOTFOUND when no
 * such atom exists on the node or the module has no object code there. */
int dist_object_code_fetch(struct dist_conn *c, const char *atom_text, unsigned char **code_out,
                           size_t *len_out, char **filename_out);

/* Modules of application `app` (application:get_key(App, modules)) as atom
 * texts: *modules_out is an array of *count_out strings, freed with
 * dist_strings_free. GI_ENOTFOUND when the application is not known there. */
int dist_app_modules(struct dist_conn *c, const char *app, char ***modules_out, size_t *count_out);
/* Applications (atom texts, sorted, unique) of the `count` modules
 * `modules` (atom texts) according to application:get_application/1 on
 * the target; modules it does not know are skipped. *apps_out: freed with
 * dist_strings_free. */
int dist_modules_apps(struct dist_conn *c, const char *const *modules, size_t count,
                      char ***apps_out, size_t *count_out);
/* Where the node keeps its tables (probe/storage.erl, bounded, nothing
 * started or loaded there): lines "kind\tname\tstorage\tsize\tmemory" for
 * its mnesia tables (storage ram_copies, disc_copies, disc_only_copies) and
 * its DETS files open outside mnesia. *lines_out: freed with
 * dist_strings_free. */
int dist_storage_facts(struct dist_conn *c, char ***lines_out, size_t *count_out);
/* Frees an array from dist_app_modules, dist_modules_apps or dist_storage_facts;
 * NULL does nothing. */
void dist_strings_free(char **strings, size_t count);

/* A sentence for users on what to check after error `code` from this module
 * (static string), e.g. for GI_EEPMD "is epmd running on the node's host ...". */
const char *dist_error_hint(int code);

#endif
