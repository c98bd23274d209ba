/*
 * error.h - the project's one table of error codes.
 *
 * Functions that can fail return 0 on success or one of these negative codes,
 * and deliver results through out-parameters. gi_strerror() turns a code into
 * a short English phrase; callers add what failed and to what. The table is
 * an X-macro so that the enum, the strings, the HTTP statuses, the CLI's exit
 * codes and the hints can never drift apart: a new code is one row.
 * Thread-safe.
 */
#ifndef GIULIA_BASE_ERROR_H
#define GIULIA_BASE_ERROR_H

/* One row per error: X(name, text, HTTP status, CLI exit code, hint).
 *   text:   a short English phrase (gi_strerror); callers add what failed
 *           and to what;
 *   status: the HTTP status a daemon answers with (api/http.c);
 *   exit:   the CLI's exit code (cli/cli.h's CLI_EXIT_*, docs/CLI.md);
 *   hint:   what a user can do about it, "" when there is nothing general
 *           to say (printed after the message by the CLI, the monitor and
 *           MCP when a node is involved). */
#define GI_ERRNO_MAP(X)                                                                            \
	X(NOMEM, "out of memory", 500, 1, "")                                                      \
	X(INVAL, "invalid argument", 400, 1, "")                                                   \
	X(IO, "input/output error", 500, 1, "")                                                    \
	X(NOENT, "no such file or directory", 404, 1, "")                                          \
	X(EXIST, "already exists", 409, 1, "")                                                     \
	X(TOOBIG, "input too large", 413, 1, "")                                                   \
	X(PARSE, "malformed input", 400, 1, "")                                                    \
	X(UNSUPPORTED, "not supported", 501, 1, "")                                                \
	X(DB, "database error", 500, 1, "")                                                        \
	X(DBVERSION, "database schema version is not supported", 500, 1, "")                       \
	X(CORRUPT, "file is corrupt", 500, 1, "")                                                  \
	X(NOTFOUND, "not found", 404, 1, "")                                                       \
	X(TIMEOUT, "timed out", 504, 13,                                                           \
	  "the node did not answer in time: it may be overloaded or stopped; try a longer "        \
	  "--timeout")                                                                             \
	X(EPMD, "epmd is not reachable", 502, 10,                                                  \
	  "check that the host is right and epmd runs there (ERL_EPMD_PORT, if set, must be the "  \
	  "port it listens on)")                                                                   \
	X(NONODE, "node is not registered with epmd", 404, 11,                                     \
	  "check the node name (`epmd -names` on its host lists the running nodes)")               \
	X(COOKIE, "cookie rejected by the node", 502, 12,                                          \
	  "the node accepted our name but not our cookie: give the node's cookie with --cookie, "  \
	  "GIULIA_COOKIE or ~/.erlang.cookie")                                                     \
	X(NODEDOWN, "node went down", 502, 14, "the connection to the node was lost")              \
	X(OTPVERSION, "node runs an unsupported Erlang/OTP release (24+ needed)", 502, 15,         \
	  "the node runs Erlang/OTP older than 24, which Giulia does not support")                 \
	X(BADRPC, "remote call failed on the node", 502, 16,                                       \
	  "the node refused or failed the call; its log may say why")                              \
	X(CONNECT, "cannot connect", 502, 17, "")                                                  \
	X(HTTP, "HTTP request failed", 502, 1, "")                                                 \
	X(BUSY, "resource busy", 409, 1, "")                                                       \
	X(STOPPED, "stopped", 500, 1, "")                                                          \
	X(DENIED, "permission denied", 403, 1, "")                                                 \
	X(NOCOOKIE, "no cookie found", 400, 18,                                                    \
	  "looked for one in --cookie, then GIULIA_COOKIE, then ~/.erlang.cookie (missing, "       \
	  "unreadable or empty): give the node's cookie in one of them")                           \
	X(HANDSHAKE, "the node closed or garbled the handshake", 502, 19,                          \
	  "the node closed the connection before the cookie was checked, or answered with "        \
	  "something that is not a distribution handshake (a program other than an Erlang node "   \
	  "on its port, or a name it still holds: \"alive\"): it may be stopping, or refusing "    \
	  "connections (net_kernel, a connection limit); its log may say why")                     \
	X(NAMEREFUSED, "the node refused our node name", 502, 20,                                  \
	  "the node answered not_allowed to our name: its net_kernel allow list, or a short/long " \
	  "names mismatch (write the node as it names itself: name@host for -sname, "              \
	  "name@host.domain or name@ip for -name)")

enum gi_error {
	GI_OK = 0,
#define GI_ERROR_ENUM(name, text, status, exit, hint) GI_E##name,
	GI_EFIRST_ = -1000,
	GI_ERRNO_MAP(GI_ERROR_ENUM)
#undef GI_ERROR_ENUM
	    GI_ELAST_
};

/* Returns a static, NUL-terminated description of `code` (0 gives "success"). */
const char *gi_strerror(int code);

/* Returns the enum name of `code` without the prefix, e.g. "TIMEOUT", for JSON errors. */
const char *gi_errname(int code);

/* The HTTP status for `code`: 200 for 0, 500 for a code outside the table. */
int gi_error_http_status(int code);

/* The CLI's exit code for `code`: 0 for 0, 1 (the command failed) for a code
 * outside the table. */
int gi_error_exit_code(int code);

/* What a user can do about `code` (static, "" when nothing general). */
const char *gi_error_hint(int code);

#endif
