/*
 * pg.h - a real PostgreSQL server for a test: Debian's postgresql 15
 * binaries, a cluster made by initdb in a directory of its own under /tmp,
 * `postgres` started directly (a child of the test, in its process group)
 * on a free loopback port, with password (SCRAM) authentication over TCP.
 * When the tests run as root the server runs as the `postgres` user (setpriv),
 * since PostgreSQL refuses to run as root.
 */
#ifndef GIULIA_TESTS_PG_H
#define GIULIA_TESTS_PG_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define TS_PG_BIN "/usr/lib/postgresql/15/bin"

struct ts_pg {
	char dir[256];     /* the cluster and its socket, removed when the test ends */
	char password[32]; /* of the superuser `giulia` */
	int port;
	pid_t pid;
	char log[512];
};

/* Makes and starts a cluster (TH_NEED on the postgresql package), waits
 * until it accepts connections, and registers its stop, the removal of its
 * directory and the free of the result with th_defer (deferred hooks run
 * after the test function returned: the server's state cannot live in its
 * frame). */
struct ts_pg *ts_pg_start(void);
/* Stops the server (fast shutdown: connected clients are cut off). */
void ts_pg_stop(struct ts_pg *pg);
/* Starts it again on the same port and data after ts_pg_stop. */
void ts_pg_restart(struct ts_pg *pg);

/* Creates database `name` and writes its URI (with the password) to uri. */
void ts_pg_database(struct ts_pg *pg, const char *name, char *uri, size_t n);
/* Connects to `uri`; fails the test when it cannot. PQfinish the result. */
PGconn *ts_pg_connect(const char *uri);
/* The first column of the first row of `sql` on `uri` as an integer (-1:
 * NULL); fails the test on an error. */
long long ts_pg_int(const char *uri, const char *sql);
/* Runs `sql` (no result wanted) on `uri`; fails the test on an error. */
void ts_pg_exec(const char *uri, const char *sql);

#endif
