/*
 * error.h - the project's one table of error codes.
 *
 * Functions that can fail return 0 on success or one of these negative codes,
 * and deliver results through out-parameters. gi_strerror() turns a code into
 * a short English phrase; callers add what failed and to what. The table is
 * an X-macro so that the enum and the strings can never drift apart.
 * Thread-safe.
 */
#ifndef GIULIA_BASE_ERROR_H
#define GIULIA_BASE_ERROR_H

#define GI_ERRNO_MAP(X)                                                           \
	X(NOMEM, "out of memory")                                                 \
	X(INVAL, "invalid argument")                                              \
	X(IO, "input/output error")                                               \
	X(NOENT, "no such file or directory")                                     \
	X(EXIST, "already exists")                                                \
	X(TOOBIG, "input too large")                                              \
	X(PARSE, "malformed input")                                               \
	X(UNSUPPORTED, "not supported")                                           \
	X(DB, "database error")                                                   \
	X(DBVERSION, "database schema version is not supported")                  \
	X(CORRUPT, "file is corrupt")                                             \
	X(NOTFOUND, "not found")                                                  \
	X(TIMEOUT, "timed out")                                                   \
	X(EPMD, "epmd is not reachable")                                          \
	X(NONODE, "node is not registered with epmd")                             \
	X(COOKIE, "cookie rejected by the node")                                  \
	X(NODEDOWN, "node went down")                                             \
	X(OTPVERSION, "node runs an unsupported Erlang/OTP release (24+ needed)") \
	X(BADRPC, "remote call failed on the node")                               \
	X(CONNECT, "cannot connect")                                              \
	X(HTTP, "HTTP request failed")                                            \
	X(BUSY, "resource busy")                                                  \
	X(STOPPED, "stopped")                                                     \
	X(DENIED, "permission denied")                                            \
	X(NOCOOKIE, "no cookie found")                                            \
	X(HANDSHAKE, "the node closed or garbled the handshake")                  \
	X(NAMEREFUSED, "the node refused our node name")

enum gi_error {
	GI_OK = 0,
#define GI_ERROR_ENUM(name, text) GI_E##name,
	GI_EFIRST_ = -1000,
	GI_ERRNO_MAP(GI_ERROR_ENUM)
#undef GI_ERROR_ENUM
	    GI_ELAST_
};

/* Returns a static, NUL-terminated description of `code` (0 gives "success"). */
const char *gi_strerror(int code);

/* Returns the enum name of `code` without the prefix, e.g. "TIMEOUT", for JSON errors. */
const char *gi_errname(int code);

#endif
