/*
 * pg.c - a real PostgreSQL server for a test (see pg.h).
 * needs: postgresql
 */
#include "pg.h"

#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "harness.h"
#include "support.h"

/* argv prefixed with setpriv to the postgres user when we are root. */
static int pg_argv(const char *const *args, const char **argv, int max)
{
	int n = 0;
	if (geteuid() == 0) {
		argv[n++] = "setpriv";
		argv[n++] = "--reuid=postgres";
		argv[n++] = "--regid=postgres";
		argv[n++] = "--clear-groups";
		argv[n++] = "--";
	}
	for (int i = 0; args[i] && n < max - 1; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	return n;
}

static void pg_spawn(struct ts_pg *pg)
{
	char bin[256], data[300], port[16], sock[300];
	snprintf(bin, sizeof(bin), "%s/postgres", TS_PG_BIN);
	snprintf(data, sizeof(data), "%s/data", pg->dir);
	snprintf(port, sizeof(port), "%d", pg->port);
	snprintf(sock, sizeof(sock), "unix_socket_directories=%s", pg->dir);
	const char *args[] = {bin,
	                      "-D",
	                      data,
	                      "-p",
	                      port,
	                      "-c",
	                      "listen_addresses=127.0.0.1",
	                      "-c",
	                      sock,
	                      "-c",
	                      "max_connections=200",
	                      NULL};
	const char *argv[24];
	pg_argv(args, argv, 24);
	pg->pid = ts_spawn(argv, pg->log);
	TH_ASSERT_MSG(pg->pid > 0, "could not start postgres");
	char uri[256];
	snprintf(uri, sizeof(uri), "postgresql://giulia:%s@127.0.0.1:%d/postgres", pg->password,
	         pg->port);
	int64_t deadline = gi_clock_mono_ms() + 60000;
	while (PQping(uri) != PQPING_OK) {
		int status;
		if (waitpid(pg->pid, &status, WNOHANG) == pg->pid)
			th_fail(__FILE__, __LINE__, "postgres exited at start; log %s", pg->log);
		TH_ASSERT_MSG(gi_clock_mono_ms() < deadline, "postgres did not come up; log %s",
		              pg->log);
		gi_clock_sleep_ms(50);
	}
}

void ts_pg_stop(struct ts_pg *pg)
{
	if (pg->pid <= 0)
		return;
	kill(pg->pid, SIGINT); /* fast shutdown */
	waitpid(pg->pid, NULL, 0);
	pg->pid = 0;
}

void ts_pg_restart(struct ts_pg *pg)
{
	ts_pg_stop(pg);
	pg_spawn(pg);
}

static void pg_deferred(void *arg)
{
	struct ts_pg *pg = arg;
	ts_pg_stop(pg);
	const char *rm[] = {"rm", "-rf", pg->dir, NULL};
	ts_run(rm, NULL, 60000, NULL, NULL);
	free(pg);
}

struct ts_pg *ts_pg_start(void)
{
	char initdb[256];
	snprintf(initdb, sizeof(initdb), "%s/initdb", TS_PG_BIN);
	TH_NEED(access(initdb, X_OK) == 0, "postgresql", "%s is missing", initdb);
	struct passwd *pw = getpwnam("postgres");
	TH_NEED(geteuid() != 0 || pw != NULL, "postgresql", "no postgres user to run the server");
	struct ts_pg *pg = calloc(1, sizeof(*pg));
	TH_ASSERT(pg != NULL);
	snprintf(pg->dir, sizeof(pg->dir), "/tmp/giulia-pg-XXXXXX");
	TH_ASSERT(mkdtemp(pg->dir) != NULL);
	if (geteuid() == 0)
		TH_ASSERT(chown(pg->dir, pw->pw_uid, pw->pw_gid) == 0);
	th_defer(pg_deferred, pg);
	ts_random_string(pg->password, 20);
	char pwfile[300], data[300];
	snprintf(pwfile, sizeof(pwfile), "%s/pw", pg->dir);
	snprintf(data, sizeof(data), "%s/data", pg->dir);
	snprintf(pg->log, sizeof(pg->log), "%s/postgres-%d.log", th_tmpdir(), (int)getpid());
	FILE *f = fopen(pwfile, "w");
	TH_ASSERT(f != NULL);
	fprintf(f, "%s\n", pg->password);
	fclose(f);
	if (geteuid() == 0)
		TH_ASSERT(chown(pwfile, pw->pw_uid, pw->pw_gid) == 0);
	const char *args[] = {initdb,
	                      "-D",
	                      data,
	                      "-U",
	                      "giulia",
	                      "--pwfile",
	                      pwfile,
	                      "--auth-local=trust",
	                      "--auth-host=scram-sha-256",
	                      "-E",
	                      "UTF8",
	                      "--no-sync",
	                      NULL};
	const char *argv[24];
	pg_argv(args, argv, 24);
	char *err = NULL;
	int st = ts_run(argv, NULL, 120000, NULL, &err);
	TH_ASSERT_MSG(st == 0, "initdb failed (%d): %s", st, err ? err : "");
	free(err);
	pg->port = ts_free_port();
	pg_spawn(pg);
	return pg;
}

void ts_pg_database(struct ts_pg *pg, const char *name, char *uri, size_t n)
{
	char admin[256], sql[256];
	snprintf(admin, sizeof(admin), "postgresql://giulia:%s@127.0.0.1:%d/postgres", pg->password,
	         pg->port);
	snprintf(sql, sizeof(sql), "CREATE DATABASE \"%s\"", name);
	ts_pg_exec(admin, sql);
	snprintf(uri, n, "postgresql://giulia:%s@127.0.0.1:%d/%s", pg->password, pg->port, name);
}

PGconn *ts_pg_connect(const char *uri)
{
	PGconn *c = PQconnectdb(uri);
	if (PQstatus(c) != CONNECTION_OK)
		th_fail(__FILE__, __LINE__, "cannot connect to the test database: %s",
		        PQerrorMessage(c));
	return c;
}

static PGresult *pg_query(const char *uri, const char *sql, ExecStatusType want)
{
	PGconn *c = ts_pg_connect(uri);
	PGresult *r = PQexec(c, sql);
	if (PQresultStatus(r) != want) {
		char msg[1024];
		snprintf(msg, sizeof(msg), "%s", PQresultErrorMessage(r));
		PQclear(r);
		PQfinish(c);
		th_fail(__FILE__, __LINE__, "%s: %s", sql, msg);
	}
	PQfinish(c);
	return r;
}

long long ts_pg_int(const char *uri, const char *sql)
{
	PGresult *r = pg_query(uri, sql, PGRES_TUPLES_OK);
	long long v = -1;
	if (PQntuples(r) > 0 && !PQgetisnull(r, 0, 0))
		v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return v;
}

void ts_pg_exec(const char *uri, const char *sql)
{
	PQclear(pg_query(uri, sql, PGRES_COMMAND_OK));
}
