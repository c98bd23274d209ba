/*
 * cmd_daemon.c - the daemon commands of the giulia CLI (see cli.h):
 * `giulia worker`, `giulia monitor`, `giulia serve`, and the `giulia-observe`
 * program that drives observations through the monitor.
 *
 * The daemons block SIGTERM, SIGINT and SIGHUP in every thread before any
 * thread starts, then the main thread waits for one of them with sigwait()
 * and runs the orderly stop of api_worker_stop / api_monitor_stop.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "net/client.h"
#include "api/http.h"
#include "api/monitor.h"
#include "api/worker.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/log.h"
#include "base/str.h"
#include "base/table.h"
#include "cli/cli.h"
#include "fuse/fuse.h"
#include "store/obs_store.h"
#include "observe/observe.h"

#define MONITOR_URL_DEFAULT "http://127.0.0.1:4001"

/* ---- option parsing shared by the commands ---- */

/* Matches `--name VALUE` or `--name=VALUE` at argv[*i]; advances *i. */
static bool opt_value(int argc, char **argv, int *i, const char *name, const char **out)
{
	size_t n = strlen(name);
	const char *a = argv[*i];
	if (strncmp(a, name, n) != 0)
		return false;
	if (a[n] == '=') {
		*out = a + n + 1;
		return true;
	}
	if (a[n] != '\0')
		return false;
	if (*i + 1 >= argc) {
		fprintf(stderr, "giulia: option %s needs a value\n", name);
		exit(CLI_EXIT_USAGE);
	}
	*out = argv[++*i];
	return true;
}

static bool is_help(const char *a)
{
	return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0 || strcmp(a, "help") == 0;
}

static int parse_size(const char *s, size_t *out)
{
	int64_t v;
	if (gi_parse_int64(s, 1024, (int64_t)1 << 32, &v) != 0)
		return GI_EINVAL;
	*out = (size_t)v;
	return 0;
}

static const char *env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);
	return v && v[0] ? v : dflt;
}

/* Raises the open-file limit to its hard maximum: each HTTP connection is a
 * descriptor, and the default soft limit (often 1024) would cap the daemon
 * below its own connection limit. */
static void files_limit_raise(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* Blocks the stop signals in this thread and every thread it starts later. */
static void signals_block(sigset_t *set)
{
	files_limit_raise();
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, set, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static void signals_wait(const sigset_t *set)
{
	int sig = 0;
	while (sigwait(set, &sig) != 0) {
	}
	gi_log_info("giulia", "signal %d: shutting down", sig);
}

/* ---- giulia worker / monitor / serve ---- */

#define MCP_ALLOW_NODES_MAX 64

struct daemon_opts {
	const char *listen, *listen2, *data, *token, *worker_url, *worker_token;
	const char *store; /* --store or GIULIA_STORE: NULL is SQLite under --data */
	size_t body_limit;
	int request_timeout, ip_connection_limit;       /* 0: the HTTP layer's defaults */
	const char *monitor_url;                        /* worker: for /mcp's runtime tools */
	const char *alert_rules;                        /* monitor: docs/ALERTS.md */
	const char *mcp_nodes[MCP_ALLOW_NODES_MAX + 1]; /* --mcp-allow-node, NULL-terminated */
	int nmcp_nodes;
	const char *hosts[API_ALLOWED_HOSTS_MAX + 1]; /* --allow-host, NULL-terminated */
	int nhosts;
	bool new_store;
	int liveness;
	size_t ebin_cache_bytes;
	long long ebin_cache_age_ms;
};

static int daemon_parse(int argc, char **argv, struct daemon_opts *o, bool serve, const char *usage)
{
	memset(o, 0, sizeof(*o));
	o->token = env_or("GIULIA_TOKEN", NULL);
	o->store = env_or("GIULIA_STORE", NULL);
	for (int i = 1; i < argc; i++) {
		const char *v;
		if (is_help(argv[i])) {
			printf("usage: giulia %s %s\n", argv[0], usage);
			exit(CLI_EXIT_OK);
		} else if (opt_value(argc, argv, &i, serve ? "--worker-listen" : "--listen", &v))
			o->listen = v;
		else if (serve && opt_value(argc, argv, &i, "--monitor-listen", &v))
			o->listen2 = v;
		else if (opt_value(argc, argv, &i, "--data", &v))
			o->data = v;
		else if (!GI_STR_STARTS(usage, "giulia monitor") &&
		         opt_value(argc, argv, &i, "--store", &v))
			o->store = v;
		else if (opt_value(argc, argv, &i, "--token", &v))
			o->token = v;
		else if (!serve && opt_value(argc, argv, &i, "--worker", &v))
			o->worker_url = v;
		else if (opt_value(argc, argv, &i, "--worker-token", &v))
			o->worker_token = v;
		else if (!serve && opt_value(argc, argv, &i, "--monitor", &v))
			o->monitor_url = v;
		else if (opt_value(argc, argv, &i, "--alert-rules", &v))
			o->alert_rules = v;
		else if (opt_value(argc, argv, &i, "--mcp-allow-node", &v)) {
			if (o->nmcp_nodes == MCP_ALLOW_NODES_MAX) {
				fprintf(stderr, "giulia: at most %d --mcp-allow-node\n",
				        MCP_ALLOW_NODES_MAX);
				return CLI_EXIT_USAGE;
			}
			o->mcp_nodes[o->nmcp_nodes++] = v;
		} else if (opt_value(argc, argv, &i, "--allow-host", &v)) {
			if (o->nhosts == API_ALLOWED_HOSTS_MAX || !*v || strlen(v) > 255 ||
			    strpbrk(v, ":/ ")) {
				fprintf(
				    stderr,
				    "giulia: --allow-host wants a host name without port (at most "
				    "%d)\n",
				    API_ALLOWED_HOSTS_MAX);
				return CLI_EXIT_USAGE;
			}
			o->hosts[o->nhosts++] = v;
		} else if (strcmp(argv[i], "--new-store") == 0) {
			o->new_store = true;
		} else if (opt_value(argc, argv, &i, "--liveness", &v)) {
			int64_t n;
			if (gi_parse_int64(v, 2, 100000, &n) != 0) {
				fprintf(stderr, "giulia: --liveness wants a number of intervals "
				                "(2..100000)\n");
				return CLI_EXIT_USAGE;
			}
			o->liveness = (int)n;
		} else if (opt_value(argc, argv, &i, "--ebin-cache-max", &v)) {
			if (parse_size(v, &o->ebin_cache_bytes) != 0) {
				fprintf(stderr,
				        "giulia: --ebin-cache-max wants bytes (1024..4G)\n");
				return CLI_EXIT_USAGE;
			}
		} else if (opt_value(argc, argv, &i, "--ebin-cache-days", &v)) {
			int64_t d;
			if (gi_parse_int64(v, 1, 36500, &d) != 0) {
				fprintf(stderr, "giulia: --ebin-cache-days wants 1..36500\n");
				return CLI_EXIT_USAGE;
			}
			o->ebin_cache_age_ms = d * 86400000LL;
		} else if (opt_value(argc, argv, &i, "--body-limit", &v)) {
			if (parse_size(v, &o->body_limit) != 0) {
				fprintf(stderr, "giulia: --body-limit wants bytes (1024..4G)\n");
				return CLI_EXIT_USAGE;
			}
		} else if (opt_value(argc, argv, &i, "--request-timeout", &v)) {
			int64_t n;
			if (gi_parse_int64(v, 1, 3600, &n) != 0) {
				fprintf(stderr,
				        "giulia: --request-timeout wants seconds (1..3600)\n");
				return CLI_EXIT_USAGE;
			}
			o->request_timeout = (int)n;
		} else if (opt_value(argc, argv, &i, "--ip-connection-limit", &v)) {
			int64_t n;
			if (gi_parse_int64(v, 1, API_CONNECTION_LIMIT_DEFAULT, &n) != 0) {
				fprintf(stderr, "giulia: --ip-connection-limit wants 1..%d\n",
				        API_CONNECTION_LIMIT_DEFAULT);
				return CLI_EXIT_USAGE;
			}
			o->ip_connection_limit = (int)n;
		} else {
			fprintf(stderr, "giulia: unknown argument '%s'\nusage: giulia %s %s\n",
			        argv[i], argv[0], usage);
			return CLI_EXIT_USAGE;
		}
	}
	if (!o->worker_token)
		o->worker_token = env_or("GIULIA_WORKER_TOKEN", o->token);
	if (strcmp(argv[0], "monitor") == 0)
		o->store = NULL; /* the monitor keeps no store: GIULIA_STORE is the workers' */
	if (strcmp(argv[0], "worker") == 0 && o->alert_rules) {
		fprintf(stderr, "giulia worker: --alert-rules is the monitor's (giulia monitor or "
		                "giulia serve): the worker computes no alerts\n");
		return CLI_EXIT_USAGE;
	}
	if (o->store && *o->store && !obs_store_location_is_postgres(o->store)) {
		fprintf(stderr,
		        "giulia: --store wants a postgres://USER@HOST:PORT/DB URI (without it, "
		        "the store is SQLite under --data)\n");
		return CLI_EXIT_USAGE;
	}
	return 0;
}

/* A PostgreSQL store is tried once before the daemon starts, so that what
 * is wrong with it (server down, authentication, schema version) is said as
 * such. The password is never printed. 0 or an exit code. */
static int store_check(const char *what, const struct daemon_opts *o)
{
	if (!o->store || !*o->store)
		return 0;
	struct obs_store *st = NULL;
	int rc = obs_store_open_location(o->data, o->store, &st);
	obs_store_close(st);
	if (rc == 0)
		return 0;
	char shown[512];
	obs_store_location_redact(o->store, shown, sizeof(shown));
	const char *hint = rc == GI_ECONNECT     ? "is the PostgreSQL server running and reachable?"
	                   : rc == GI_EDENIED    ? "authentication failed: check the user and "
	                                           "password (URI, PGPASSWORD or ~/.pgpass)"
	                   : rc == GI_EDBVERSION ? "its schema is newer than this build, or the "
	                                           "database holds tables that are not Giulia's"
	                                         : "the log says which statement failed";
	fprintf(stderr, "giulia %s: cannot open the store %s: %s (%s)\n", what, shown,
	        gi_strerror(rc), hint);
	return CLI_EXIT_FAILURE;
}

/* What every daemon command does before it starts: parses its options, blocks
 * the stop signals (in `set`) and sets up the HTTP client. Returns 0 or an
 * exit code. */
static int daemon_setup(int argc, char **argv, bool serve, const char *usage, struct daemon_opts *o,
                        sigset_t *set)
{
	int rc = daemon_parse(argc, argv, o, serve, usage);
	if (rc)
		return rc;
	signals_block(set);
	net_client_global_init();
	return 0;
}

static int start_error(const char *what, int rc)
{
	if (rc == GI_ECORRUPT)
		fprintf(stderr,
		        "giulia %s: cannot start: the worker's store is empty, corrupt or not a "
		        "database (the log says which file); restore it, or start with "
		        "--new-store to move it aside and begin a new one\n",
		        what);
	else if (rc == GI_EDENIED)
		fprintf(stderr,
		        "giulia %s: listening on a non-loopback address needs --token or "
		        "GIULIA_TOKEN\n",
		        what);
	else
		fprintf(stderr, "giulia %s: cannot start: %s\n", what, gi_strerror(rc));
	return rc == GI_EINVAL || rc == GI_EDENIED ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE;
}

static const char WORKER_USAGE[] =
    "[--listen ADDR:PORT] [--data DIR] [--token TOKEN] [--allow-host NAME]... "
    "[--body-limit BYTES] [--request-timeout S] [--ip-connection-limit N] [--monitor URL] "
    "[--mcp-allow-node NODE]... [--new-store] [--liveness INTERVALS] "
    "[--ebin-cache-max BYTES] [--ebin-cache-days DAYS] [--store postgres://...]";
static const char MONITOR_USAGE[] =
    "[--listen ADDR:PORT] [--worker URL] [--data DIR] [--token TOKEN] [--allow-host NAME]... "
    "[--worker-token TOKEN] [--body-limit BYTES] [--request-timeout S] "
    "[--ip-connection-limit N] [--alert-rules FILE]";
static const char SERVE_USAGE[] =
    "[--worker-listen ADDR:PORT] [--monitor-listen ADDR:PORT] [--data DIR] "
    "[--token TOKEN] [--allow-host NAME]... [--body-limit BYTES] [--request-timeout S] "
    "[--ip-connection-limit N] [--mcp-allow-node NODE]... [--new-store] [--liveness INTERVALS] "
    "[--ebin-cache-max BYTES] [--ebin-cache-days DAYS] [--store postgres://...] [--alert-rules "
    "FILE]";

/* The worker's configuration from the options (borrowed: the strings stay
 * the options'), its MCP runtime tools asking the monitor at `monitor_url`
 * (NULL: GIULIA_MONITOR_URL or the default). */
static struct api_worker_config worker_config(const struct daemon_opts *o, const char *monitor_url)
{
	struct api_worker_config wc = {
	    .listen = o->listen,
	    .data_dir = o->data,
	    .store = o->store,
	    .token = o->token,
	    .allowed_hosts = o->hosts,
	    .body_limit = o->body_limit,
	    .request_timeout = o->request_timeout,
	    .ip_connection_limit = o->ip_connection_limit,
	    .monitor_url = monitor_url,
	    .mcp_allow_runtime = o->nmcp_nodes > 0,
	    .mcp_allow_nodes = o->mcp_nodes,
	    .new_store = o->new_store,
	    .liveness_intervals = o->liveness,
	    .ebin_cache_bytes = o->ebin_cache_bytes,
	    .ebin_cache_age_ms = o->ebin_cache_age_ms,
	};
	return wc;
}

static int cmd_worker(int argc, char **argv)
{
	struct daemon_opts o;
	sigset_t set;
	int rc = daemon_setup(argc, argv, false, WORKER_USAGE, &o, &set);
	if (rc)
		return rc;
	rc = store_check("worker", &o);
	if (rc)
		return rc;
	struct api_worker_config wc = worker_config(&o, o.monitor_url);
	struct api_worker *w;
	rc = api_worker_start(&wc, &w);
	if (rc)
		return start_error("worker", rc);
	signals_wait(&set);
	api_worker_stop(w);
	return CLI_EXIT_OK;
}

/* The monitor's configuration from the options (borrowed, as
 * worker_config's), listening at `listen` and asking the worker at
 * `worker_url` with `worker_token`. */
static struct api_monitor_config monitor_config(const struct daemon_opts *o, const char *listen,
                                                const char *worker_url, const char *worker_token)
{
	struct api_monitor_config mc = {
	    .listen = listen,
	    .worker_url = worker_url,
	    .token = o->token,
	    .allowed_hosts = o->hosts,
	    .worker_token = worker_token,
	    .data_dir = o->data,
	    .body_limit = o->body_limit,
	    .request_timeout = o->request_timeout,
	    .ip_connection_limit = o->ip_connection_limit,
	    .alert_rules = o->alert_rules,
	};
	return mc;
}

/* The URL a daemon listening on `addr`:`port` is reached at from here
 * (loopback for a daemon listening everywhere). */
static void local_url(char *url, size_t size, const char *addr, int port)
{
	snprintf(url, size, "http://%s:%d", strcmp(addr, "0.0.0.0") == 0 ? "127.0.0.1" : addr,
	         port);
}

static int cmd_monitor(int argc, char **argv)
{
	struct daemon_opts o;
	sigset_t set;
	int rc = daemon_setup(argc, argv, false, MONITOR_USAGE, &o, &set);
	if (rc)
		return rc;
	struct api_monitor_config mc = monitor_config(&o, o.listen, o.worker_url, o.worker_token);
	struct api_monitor *m;
	rc = api_monitor_start(&mc, &m);
	if (rc)
		return start_error("monitor", rc);
	signals_wait(&set);
	api_monitor_stop(m);
	return CLI_EXIT_OK;
}

static int cmd_serve(int argc, char **argv)
{
	struct daemon_opts o;
	sigset_t set;
	int rc = daemon_setup(argc, argv, true, SERVE_USAGE, &o, &set);
	if (rc)
		return rc;
	rc = store_check("serve", &o);
	if (rc)
		return rc;
	char monitor_url[128], maddr[64];
	int mport;
	if (api_listen_parse(o.listen2 ? o.listen2 : API_MONITOR_LISTEN_DEFAULT, maddr, &mport) !=
	    0)
		return start_error("serve (monitor)", GI_EINVAL);
	local_url(monitor_url, sizeof(monitor_url), maddr, mport);
	struct api_worker_config wc = worker_config(&o, monitor_url);
	struct api_worker *w;
	rc = api_worker_start(&wc, &w);
	if (rc)
		return start_error("serve (worker)", rc);
	char url[128];
	char addr[64];
	int port;
	api_listen_parse(o.listen ? o.listen : API_WORKER_LISTEN_DEFAULT, addr, &port);
	local_url(url, sizeof(url), addr, api_worker_port(w));
	struct api_monitor_config mc = monitor_config(&o, o.listen2, url, o.token);
	struct api_monitor *m;
	rc = api_monitor_start(&mc, &m);
	if (rc) {
		api_worker_stop(w);
		return start_error("serve (monitor)", rc);
	}
	signals_wait(&set);
	/* The monitor first, so that its last finalize objects reach the worker. */
	api_monitor_stop(m);
	api_worker_stop(w);
	return CLI_EXIT_OK;
}

static const struct cli_option daemon_common_options[] = {
    {"--data DIR", "where the daemon keeps its store and spool",
     "$XDG_DATA_HOME/giulia, else ~/.local/share/giulia"},
    {"--token TOKEN", "require this bearer token from clients; needed off loopback",
     "$GIULIA_TOKEN"},
    {"--allow-host NAME",
     "a name (DNS or proxy) clients reach the daemon by, accepted in Host and Origin besides "
     "loopback and the listen address (repeatable)",
     NULL},
    {"--body-limit BYTES", "largest request body accepted", "1048576"},
    {"--request-timeout S", "seconds a whole request may take to arrive", "10"},
    {"--ip-connection-limit N", "connections at once from one client address",
     "1024, at most 4096"},
    {NULL, NULL, NULL},
};

static const struct cli_option worker_own_options[] = {
    {"--listen ADDR:PORT", "where the worker listens", "127.0.0.1:4000"},
    {"--monitor URL", "the monitor /mcp's runtime tools ask",
     "$GIULIA_MONITOR_URL, else http://127.0.0.1:4001"},
    {"--mcp-allow-node NODE", "let /mcp's runtime tools act on NODE (repeatable)", NULL},
    {"--new-store", "move an empty or corrupt store aside and begin a new one", NULL},
    {"--liveness INTERVALS",
     "observation intervals without a snapshot before a session "
     "counts as dead",
     "30"},
    {"--ebin-cache-max BYTES", "size cap of the object-code cache", "268435456"},
    {"--ebin-cache-days DAYS", "age cap of the object-code cache", "30"},
    {"--store postgres://USER@HOST:PORT/DB",
     "keep observations, snapshots and profiles in a PostgreSQL database several workers "
     "share (the password is never printed)",
     "$GIULIA_STORE, else SQLite under --data"},
    {NULL, NULL, NULL},
};

static const struct cli_option monitor_own_options[] = {
    {"--listen ADDR:PORT", "where the monitor listens", "127.0.0.1:4001"},
    {"--worker URL", "the worker snapshots and profiles go to",
     "$GIULIA_WORKER_URL, else http://127.0.0.1:4000"},
    {"--worker-token TOKEN", "the token the worker wants", "$GIULIA_WORKER_TOKEN, else --token"},
    {"--alert-rules FILE",
     "alert rules to use instead of or besides the built-in ones (docs/ALERTS.md)",
     "the built-in rules"},
    {NULL, NULL, NULL},
};

static const struct cli_option serve_own_options[] = {
    {"--worker-listen ADDR:PORT", "where the worker listens", "127.0.0.1:4000"},
    {"--monitor-listen ADDR:PORT", "where the monitor listens", "127.0.0.1:4001"},
    {"--mcp-allow-node NODE", "let /mcp's runtime tools act on NODE (repeatable)", NULL},
    {"--new-store", "move an empty or corrupt store aside and begin a new one", NULL},
    {"--liveness INTERVALS", "intervals without a snapshot before a session counts as dead", "30"},
    {"--ebin-cache-max BYTES", "size cap of the object-code cache", "268435456"},
    {"--ebin-cache-days DAYS", "age cap of the object-code cache", "30"},
    {"--store postgres://USER@HOST:PORT/DB",
     "keep observations, snapshots and profiles in a PostgreSQL database several workers "
     "share (the password is never printed)",
     "$GIULIA_STORE, else SQLite under --data"},
    {"--alert-rules FILE",
     "alert rules to use instead of or besides the built-in ones (docs/ALERTS.md)",
     "the built-in rules"},
    {NULL, NULL, NULL},
};

static const struct cli_help worker_help = {
    "Runs the worker daemon in the foreground: the static engine, the store of snapshots "
    "and profiles, the REST API and /mcp. SIGTERM, SIGINT or SIGHUP stop it in order.",
    worker_own_options, daemon_common_options, 0, "giulia worker --listen 127.0.0.1:4000"};
static const struct cli_help monitor_help = {
    "Runs the monitor daemon in the foreground: it attaches to live nodes as a hidden C "
    "node, takes snapshots at an interval and delivers them to the worker (spooling to "
    "disk while the worker is away).",
    monitor_own_options, daemon_common_options, 0, "giulia monitor --worker http://127.0.0.1:4000"};
static const struct cli_help serve_help = {
    "Runs the worker and the monitor in one process, the monitor delivering to the worker "
    "directly; the simplest way to run Giulia on one machine.",
    serve_own_options, daemon_common_options, 0,
    "giulia serve\ngiulia serve --worker-listen 127.0.0.1:5000 --monitor-listen "
    "127.0.0.1:5001"};

const struct cli_command cli_daemon_commands[] = {
    {"worker", WORKER_USAGE, "run the worker daemon (static engine, store, profiles; :4000)",
     cmd_worker, &worker_help},
    {"monitor", MONITOR_USAGE, "run the monitor daemon (runtime observer; :4001)", cmd_monitor,
     &monitor_help},
    {"serve", SERVE_USAGE, "run the worker and the monitor in one process", cmd_serve, &serve_help},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ---- giulia-observe ---- */

struct observe_opts {
	const char *positional[8];
	int npos;
	const char *cookie, *cookie_file, *interval, *trace, *project, *cluster_max, *lease,
	    *overhead, *budget;
	bool json;
	bool call_time;
	bool cluster; /* start: NODE and the members of its cluster */
};

/* Prints a usage error of `giulia-observe CMD` and returns CLI_EXIT_USAGE. */
static int observe_usage(const char *cmd, const char *what, const char *arg)
{
	fprintf(stderr, "giulia-observe %s: %s%s; `giulia-observe %s --help` shows the options\n",
	        cmd, what, arg ? arg : "", cmd);
	return CLI_EXIT_USAGE;
}

/* argv[0] is the subcommand. Adding an option is one `else if` here and one
 * line in the command's cli_option list. */
static int observe_parse(int argc, char **argv, struct observe_opts *o)
{
	memset(o, 0, sizeof(*o));
	for (int i = 1; i < argc; i++) {
		const char *v;
		if (strcmp(argv[i], "--json") == 0)
			o->json = true;
		else if (strcmp(argv[i], "--call-time") == 0)
			o->call_time = true;
		else if (strcmp(argv[i], "--cluster") == 0)
			o->cluster = true;
		else if (opt_value(argc, argv, &i, "--cluster-max", &v))
			o->cluster_max = v;
		else if (opt_value(argc, argv, &i, "--cookie", &v))
			o->cookie = v;
		else if (opt_value(argc, argv, &i, "--cookie-file", &v))
			o->cookie_file = v;
		else if (opt_value(argc, argv, &i, "--interval", &v))
			o->interval = v;
		else if (opt_value(argc, argv, &i, "--trace", &v))
			o->trace = v;
		else if (opt_value(argc, argv, &i, "--project", &v))
			o->project = v;
		else if (opt_value(argc, argv, &i, "--lease", &v))
			o->lease = v;
		else if (opt_value(argc, argv, &i, "--overhead", &v))
			o->overhead = v;
		else if (opt_value(argc, argv, &i, "--budget", &v))
			o->budget = v;
		else if (opt_value(argc, argv, &i, "--monitor", &v))
			cli_monitor_url_set(v);
		else if (opt_value(argc, argv, &i, "--worker", &v))
			cli_worker_url_set(v);
		else if (argv[i][0] == '-' && argv[i][1] == '-')
			return observe_usage(argv[0], "unknown option ", argv[i]);
		else if (o->npos < 8)
			o->positional[o->npos++] = argv[i];
		else
			return observe_usage(argv[0], "too many arguments", NULL);
	}
	return 0;
}

/* The GI_E* code whose gi_errname is `name`, or 0. */
static int error_code_named(const char *name)
{
	if (!name)
		return 0;
	for (int code = GI_EFIRST_ + 1; code < GI_ELAST_; code++)
		if (strcmp(gi_errname(code), name) == 0)
			return code;
	return 0;
}

/* A 404 that the caller explains better (stop after the node died). */
static bool monitor_quiet_404;

/* Calls the monitor; prints a clear message and returns an exit code on failure. */
static int monitor_call(const char *method, const char *path, json_t *body, int timeout_ms,
                        int *status, json_t **resp)
{
	const char *base = cli_monitor_url();
	char url[1024];
	size_t blen = strlen(base);
	while (blen > 0 && base[blen - 1] == '/')
		blen--;
	int n = snprintf(url, sizeof(url), "%.*s%s", (int)blen, base, path);
	if (n < 0 || (size_t)n >= sizeof(url)) {
		fprintf(stderr,
		        "giulia-observe: the monitor URL is too long (%zu bytes; at most %zu)\n",
		        blen, sizeof(url) - strlen(path) - 1);
		return CLI_EXIT_USAGE;
	}
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	struct net_call call = {method, url, text, env_or("GIULIA_TOKEN", NULL), timeout_ms};
	net_client_global_init();
	int rc = net_client_call(&call, status, resp);
	free(text);
	if (rc) {
		fprintf(stderr,
		        "giulia-observe: the monitor at %.*s did not answer (%s); start it with "
		        "`giulia monitor` or `giulia serve`, or give --monitor URL\n",
		        (int)blen, base, gi_strerror(rc));
		return CLI_EXIT_CONNECT;
	}
	if (*status == 404 && monitor_quiet_404)
		return CLI_EXIT_FAILURE;
	if (*status >= 400) {
		const char *msg = json_string_value(json_object_get(*resp, "error"));
		const char *hint = json_string_value(json_object_get(*resp, "hint"));
		fprintf(stderr, "giulia-observe: %s%s%s\n",
		        msg ? msg : "the monitor refused the request", hint ? "; " : "",
		        hint ? hint : "");
		/* A node error carries its code: the exit code is then the one
		 * `giulia pulse` gives for it (10-20). */
		int code = error_code_named(json_string_value(json_object_get(*resp, "code")));
		if (code)
			return cli_exit_code_for(code);
		return *status == 400 ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE;
	}
	return CLI_EXIT_OK;
}

static void print_json(json_t *v)
{
	char *text = json_dumps(v, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (text)
		printf("%s\n", text);
	free(text);
}

static json_t *split_modules(const char *list)
{
	json_t *arr = json_array();
	const char *p = list;
	while (p && *p) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		while (n > 0 && *p == ' ') {
			p++;
			n--;
		}
		if (n > 0)
			json_array_append_new(arr, json_stringn(p, n));
		p = comma ? comma + 1 : NULL;
	}
	return arr;
}

/* After a start with modules to trace: waits for the first snapshot to
 * reach the worker (at most an interval and a few seconds) and says loudly
 * which modules could not be traced (not loaded, traced by another tool), so
 * that nobody waits through an observation that cannot show them. */
static void start_check_traced(const char *session, long long interval_ms)
{
	char path[256];
	snprintf(path, sizeof(path), "/api/runtime/observation/%s?include=snapshots", session);
	long long wait = interval_ms + 5000;
	if (wait > 20000)
		wait = 20000;
	int64_t end = gi_clock_mono_ms() + wait;
	while (gi_clock_mono_ms() < end) {
		int status = 0;
		json_t *obs = NULL;
		if (cli_worker_get(path, &status, &obs) == 0 && status == 200 &&
		    json_array_size(json_object_get(obs, "snapshot_data")) > 0) {
			json_t *snap = json_array_get(json_object_get(obs, "snapshot_data"), 0);
			size_t i;
			json_t *e;
			json_array_foreach(json_object_get(snap, "errors"), i, e)
			{
				const char *msg = json_string_value(e);
				if (msg && strstr(msg, "module "))
					fprintf(
					    stderr,
					    "giulia-observe start: WARNING: %s; its calls will not "
					    "be in the profile\n",
					    msg);
			}
			/* other tools' tracing found on the node, shared */
			json_array_foreach(
			    json_object_get(json_object_get(snap, "trace"), "foreign"), i, e)
			{
				if (json_is_string(e))
					fprintf(stderr, "giulia-observe start: note: %s\n",
					        json_string_value(e));
			}
			json_decref(obs);
			return;
		}
		json_decref(obs);
		struct timespec ts = {0, 200 * 1000000L};
		nanosleep(&ts, NULL);
	}
}

#define CLUSTER_MAX_DEFAULT 32

/* --cluster: asks the monitor for the seed's members (bounded by
 * --cluster-max), then starts the seed and each member with the same body
 * (its node replaced). A node already observed is reported, not a failure;
 * the exit code is that of the first other failure, after trying them all. */
static int observe_start_cluster(struct observe_opts *o, json_t *body)
{
	int64_t max = CLUSTER_MAX_DEFAULT;
	if (o->cluster_max && gi_parse_int64(o->cluster_max, 1, 1000, &max) != 0) {
		fprintf(stderr, "giulia-observe: --cluster-max needs a number from 1 to 1000\n");
		return CLI_EXIT_USAGE;
	}
	json_t *q =
	    json_pack("{s:O, s:I}", "node", json_object_get(body, "node"), "max", (json_int_t)max);
	if (json_object_get(body, "cookie"))
		json_object_set(q, "cookie", json_object_get(body, "cookie"));
	int status;
	json_t *cl = NULL;
	int rc = monitor_call("POST", "/api/monitor/cluster", q, 60000, &status, &cl);
	json_decref(q);
	if (rc) {
		json_decref(cl);
		return rc;
	}
	json_t *nodes = json_array();
	json_array_append(nodes, json_object_get(body, "node"));
	json_array_extend(nodes, json_object_get(cl, "members"));
	json_t *started = json_array(), *already = json_array(), *failed = json_array();
	int first_rc = 0;
	size_t i;
	json_t *n;
	json_array_foreach(nodes, i, n)
	{
		json_object_set(body, "node", n);
		json_t *resp = NULL;
		int one =
		    monitor_call("POST", "/api/monitor/observe/start", body, 60000, &status, &resp);
		const char *name = json_string_value(n);
		if (one == 0) {
			json_array_append(started, resp);
			if (!o->json)
				printf("observing %s every %lld ms (session %s)\n", name,
				       (long long)json_integer_value(
				           json_object_get(resp, "interval_ms")),
				       json_string_value(json_object_get(resp, "session_id")));
		} else if (status == 409) {
			json_array_append(already, n);
		} else {
			json_array_append_new(failed, json_pack("{s:O, s:O?}", "node", n, "error",
			                                        json_object_get(resp, "error")));
			if (!first_rc)
				first_rc = one;
		}
		json_decref(resp);
	}
	if (o->json) {
		json_t *out = json_pack(
		    "{s:O, s:O?, s:O?, s:O?, s:O?, s:o, s:o, s:o}", "node",
		    json_array_get(nodes, 0), "members", json_object_get(cl, "members"), "listed",
		    json_object_get(cl, "listed"), "truncated", json_object_get(cl, "truncated"),
		    "skipped", json_object_get(cl, "skipped"), "started", started,
		    "already_observed", already, "failed", failed);
		print_json(out);
		json_decref(out);
	} else {
		printf("cluster of %s: %zu member(s) listed%s; %zu observation(s) started, %zu "
		       "already running, %zu failed\n"
		       "run your workload, then stop each node with giulia-observe stop NODE\n",
		       json_string_value(json_array_get(nodes, 0)),
		       (size_t)json_integer_value(json_object_get(cl, "listed")),
		       json_is_true(json_object_get(cl, "truncated")) ? " (cut at --cluster-max)"
		                                                      : "",
		       json_array_size(started), json_array_size(already), json_array_size(failed));
		json_decref(started);
		json_decref(already);
		json_decref(failed);
	}
	json_decref(nodes);
	json_decref(cl);
	return first_rc;
}

static int observe_start(struct observe_opts *o)
{
	if (o->npos < 1)
		return observe_usage(
		    "start", "which node? give NODE (name@host, or name on this host)", NULL);
	if (o->npos > 4)
		return observe_usage("start", "too many arguments", NULL);
	char node[512], cookie_buf[1024];
	if (cli_node_name(o->positional[0], node, sizeof(node)) != 0)
		return observe_usage("start", "not a node name: ", o->positional[0]);
	const char *cookie = NULL;
	int crc = cli_cookie("giulia-observe start",
	                     o->cookie ? o->cookie : (o->npos > 1 ? o->positional[1] : NULL),
	                     o->cookie_file, cookie_buf, sizeof(cookie_buf), &cookie);
	if (crc)
		return crc;
	const char *interval = o->interval ? o->interval : (o->npos > 2 ? o->positional[2] : NULL);
	const char *trace = o->trace ? o->trace : (o->npos > 3 ? o->positional[3] : NULL);
	json_t *body = json_pack("{s:s}", "node", node);
	if (cookie && cookie[0])
		json_object_set_new(body, "cookie", json_string(cookie));
	if (interval) {
		int64_t ms;
		if (gi_parse_int64(interval, 1, 3600000, &ms) != 0) {
			fprintf(stderr,
			        "giulia-observe: INTERVAL_MS must be a number of milliseconds\n");
			json_decref(body);
			return CLI_EXIT_USAGE;
		}
		json_object_set_new(body, "interval_ms", json_integer(ms));
	}
	if (trace && trace[0])
		json_object_set_new(body, "trace_modules", split_modules(trace));
	if (o->lease) {
		int64_t ms;
		if (gi_parse_int64(o->lease, 1000, OBS_LEASE_MAX_MS, &ms) != 0) {
			fprintf(stderr, "giulia-observe: --lease must be 1000-%d milliseconds\n",
			        OBS_LEASE_MAX_MS);
			json_decref(body);
			return CLI_EXIT_USAGE;
		}
		json_object_set_new(body, "lease_ms", json_integer(ms));
	}
	if (o->overhead) {
		/* "5%" or "5": a percentage; the monitor checks the range */
		size_t n = strlen(o->overhead);
		char pct[32];
		snprintf(pct, sizeof(pct), "%s%s", o->overhead,
		         n > 0 && o->overhead[n - 1] == '%' ? "" : "%");
		json_object_set_new(body, "overhead", json_string(pct));
	}
	if (o->budget) {
		/* "1%" or "1": a percentage; the monitor checks the range */
		size_t n = strlen(o->budget);
		char pct[32];
		snprintf(pct, sizeof(pct), "%s%s", o->budget,
		         n > 0 && o->budget[n - 1] == '%' ? "" : "%");
		json_object_set_new(body, "budget", json_string(pct));
	}
	if (o->call_time) {
		if (!trace || !trace[0]) {
			fprintf(stderr, "giulia-observe: --call-time needs modules to trace "
			                "(Mod1,Mod2 or --trace)\n");
			json_decref(body);
			return CLI_EXIT_USAGE;
		}
		json_object_set_new(body, "call_time", json_true());
	}
	if (o->project) {
		char *real = NULL;
		if (gi_fs_realdir(o->project, &real) != 0) {
			fprintf(stderr, "giulia-observe: --project %s is not a directory\n",
			        o->project);
			json_decref(body);
			return CLI_EXIT_USAGE;
		}
		json_object_set_new(body, "project", json_string(real));
		gi_free(real);
	}
	if (o->cluster || o->cluster_max) {
		int cluster_rc = observe_start_cluster(o, body);
		json_decref(body);
		return cluster_rc;
	}
	int status;
	json_t *resp = NULL;
	int rc = monitor_call("POST", "/api/monitor/observe/start", body, 60000, &status, &resp);
	json_decref(body);
	if (rc == 0) {
		if (o->json)
			print_json(resp);
		else {
			printf("observing %s every %lld ms (session %s)\n", node,
			       (long long)json_integer_value(json_object_get(resp, "interval_ms")),
			       json_string_value(json_object_get(resp, "session_id")));
			/* which counts the profile will hold: estimates or exact */
			json_t *ov = json_object_get(resp, "overhead");
			if (trace && trace[0] && json_is_number(ov))
				printf("counting calls under a %.1f%% overhead budget: counts are "
				       "estimates (--overhead 0 counts every call)\n",
				       100.0 * json_number_value(ov));
			else if (trace && trace[0])
				printf("counting every call (no overhead budget)\n");
			printf("run your workload, then: giulia-observe stop %s\n", node);
		}
		fflush(stdout);
		const char *sid = json_string_value(json_object_get(resp, "session_id"));
		if (trace && trace[0] && sid)
			start_check_traced(
			    sid, json_integer_value(json_object_get(resp, "interval_ms")));
	}
	json_decref(resp);
	return rc;
}

/* `stop` of a node the monitor observes no more: the worker's newest
 * observation of it says whether it ended early, why, and where its
 * profile is. Returns the exit code. */
static int stop_not_running(const char *node, json_t *monitor_answer)
{
	int status = 0;
	json_t *list = NULL;
	json_t *found = NULL;
	if (cli_worker_get("/api/runtime/observations?limit=1000", &status, &list) == 0 &&
	    status == 200) {
		size_t i;
		json_t *o;
		json_array_foreach(json_object_get(list, "observations"), i, o)
		{
			const char *n = json_string_value(json_object_get(o, "node"));
			if (n && strcmp(n, node) == 0) {
				found = o;
				break;
			}
		}
	}
	const char *state = found ? json_string_value(json_object_get(found, "status")) : NULL;
	int rc = CLI_EXIT_FAILURE;
	if (!found || (state && strcmp(state, "running") == 0)) {
		const char *msg = json_string_value(json_object_get(monitor_answer, "error"));
		fprintf(stderr,
		        "giulia-observe stop: %s; `giulia-observe status` lists what runs\n",
		        msg ? msg : "no observation of this node is running");
	} else {
		const char *reason = json_string_value(json_object_get(found, "reason"));
		json_t *pid = json_object_get(found, "profile_id");
		printf("the observation of %s (session %s) had already ended early: %s (%s)\n",
		       node, json_string_value(json_object_get(found, "session_id")), state,
		       reason ? reason : "no reason recorded");
		if (json_is_integer(pid)) {
			printf(
			    "its profile was built from the %lld snapshot(s) that arrived: giulia "
			    "profile %lld\n",
			    (long long)json_integer_value(json_object_get(found, "snapshots")),
			    (long long)json_integer_value(pid));
			rc = CLI_EXIT_OK;
		} else {
			printf("no profile was built for it\n");
		}
	}
	json_decref(list);
	return rc;
}

static int observe_stop(struct observe_opts *o)
{
	if (o->npos != 1)
		return observe_usage(
		    "stop", o->npos ? "too many arguments" : "which node? give NODE", NULL);
	char node[512];
	if (cli_node_name(o->positional[0], node, sizeof(node)) != 0)
		return observe_usage("stop", "not a node name: ", o->positional[0]);
	json_t *body = json_pack("{s:s}", "node", node);
	int status;
	json_t *resp = NULL;
	monitor_quiet_404 = true;
	int rc = monitor_call("POST", "/api/monitor/observe/stop", body, 300000, &status, &resp);
	monitor_quiet_404 = false;
	json_decref(body);
	if (rc != 0 && status == 404) {
		rc = stop_not_running(node, resp);
		json_decref(resp);
		return rc;
	}
	if (rc == 0 && o->json) {
		print_json(resp);
	} else if (rc == 0) {
		json_t *profile = json_object_get(resp, "profile");
		json_t *pid = json_object_get(resp, "profile_id");
		struct gi_buf text;
		gi_buf_init(&text, 0);
		if (json_is_true(json_object_get(resp, "ended_early")))
			printf("the observation of %s (session %s) had already ended: %s; %s\n",
			       node, json_string_value(json_object_get(resp, "session_id")),
			       json_string_value(json_object_get(resp, "reason")),
			       json_is_integer(pid) ? "its profile was built from what arrived "
			                              "(below)"
			                            : "no profile yet");
		if (json_is_true(json_object_get(resp, "queued"))) {
			printf("stopped; the worker has not answered yet: the end of session %s is "
			       "queued and the profile will be built when it does\n",
			       json_string_value(json_object_get(resp, "session_id")));
		} else if (profile && fuse_report_text(profile, &text) == 0) {
			fputs(gi_buf_str(&text), stdout);
		} else {
			json_t *warnings =
			    json_object_get(json_object_get(resp, "finalize"), "warnings");
			printf("session %s: %lld snapshot(s) stored\n",
			       json_string_value(json_object_get(resp, "session_id")),
			       (long long)json_integer_value(json_object_get(resp, "snapshots")));
			size_t i;
			json_t *w;
			json_array_foreach(warnings, i, w)
			{
				printf("note: %s\n", json_string_value(w));
			}
		}
		if (json_is_integer(pid))
			printf("profile id: %lld (giulia profile %lld)\n",
			       (long long)json_integer_value(pid),
			       (long long)json_integer_value(pid));
		gi_buf_destroy(&text);
	}
	json_decref(resp);
	return rc;
}

static int observe_status(struct observe_opts *o)
{
	int status;
	json_t *resp = NULL;
	int rc = monitor_call("GET", "/api/monitor/observe/status", NULL, 30000, &status, &resp);
	if (rc == 0 && o->json) {
		print_json(resp);
	} else if (rc == 0) {
		json_t *list = json_object_get(resp, "observations");
		static const struct gi_table_column cols[] = {
		    {"SESSION", 0, 0, 0},
		    {"NODE", GI_COL_ELIDE, 0, 16},
		    {"INTERVAL", GI_COL_RIGHT, 1, 0},
		    {"SNAPSHOTS", GI_COL_RIGHT, 0, 0},
		    {"STATE", 0, 0, 0},
		};
		struct gi_table *t = gi_table_new(cols, 5, 0);
		size_t i;
		json_t *s;
		json_array_foreach(list, i, s)
		{
			char iv[32], snaps[32];
			snprintf(iv, sizeof(iv), "%lld ms",
			         (long long)json_integer_value(json_object_get(s, "interval_ms")));
			snprintf(snaps, sizeof(snaps), "%lld",
			         (long long)json_integer_value(json_object_get(s, "snapshots")));
			const char *row[] = {json_string_value(json_object_get(s, "session_id")),
			                     json_string_value(json_object_get(s, "node")), iv,
			                     snaps, json_string_value(json_object_get(s, "state"))};
			gi_table_add(t, row);
		}
		struct gi_buf tb;
		gi_buf_init(&tb, 0);
		if (json_array_size(list) == 0)
			printf("no observation running\n");
		else if (gi_table_render(t, cli_columns(), &tb) == 0)
			fputs(gi_buf_str(&tb), stdout);
		gi_buf_destroy(&tb);
		gi_table_free(t);
		json_t *d = json_object_get(resp, "delivery");
		json_t *prev = json_object_get(d, "previous_run");
		if (json_is_object(prev))
			printf(
			    "WARNING: the previous monitor run could not deliver %lld snapshot(s), "
			    "%lld finalize record(s) and %lld object-code batch(es) (spool full); "
			    "the profiles concerned show gaps\n",
			    (long long)json_integer_value(json_object_get(prev, "ingest")),
			    (long long)json_integer_value(json_object_get(prev, "finalize")),
			    (long long)json_integer_value(json_object_get(prev, "objectcode")));
		size_t no = json_array_size(json_object_get(resp, "orphans"));
		if (no > 0)
			printf("%zu observation(s) left running by a monitor that died: "
			       "`giulia-observe "
			       "start NODE` continues one, `giulia-observe stop NODE` ends it\n",
			       no);
		printf("delivery to %s: %lld delivered, %lld queued in memory, %lld on disk%s%s\n",
		       json_string_value(json_object_get(d, "worker_url")),
		       (long long)json_integer_value(json_object_get(d, "delivered")),
		       (long long)json_integer_value(json_object_get(d, "queued_memory")),
		       (long long)json_integer_value(json_object_get(d, "queued_disk")),
		       json_is_string(json_object_get(d, "last_error")) ? "; last error: " : "",
		       json_is_string(json_object_get(d, "last_error"))
		           ? json_string_value(json_object_get(d, "last_error"))
		           : "");
	}
	json_decref(resp);
	return rc;
}

static int run_observe_start(int argc, char **argv)
{
	struct observe_opts o;
	int rc = observe_parse(argc, argv, &o);
	return rc ? rc : observe_start(&o);
}

static int run_observe_stop(int argc, char **argv)
{
	struct observe_opts o;
	int rc = observe_parse(argc, argv, &o);
	return rc ? rc : observe_stop(&o);
}

static int run_observe_status(int argc, char **argv)
{
	struct observe_opts o;
	int rc = observe_parse(argc, argv, &o);
	if (rc == 0 && o.npos > 0)
		return observe_usage("status", "unexpected argument ", o.positional[0]);
	return rc ? rc : observe_status(&o);
}

static const struct cli_option observe_monitor_option[] = {
    {"--monitor URL", "the monitor", "$GIULIA_MONITOR_URL, else " MONITOR_URL_DEFAULT},
    {"--json", "print the monitor's JSON answer", NULL},
    {NULL, NULL, NULL},
};

static const struct cli_option observe_start_options[] = {
    {"--cookie C", "the node's cookie (also the second argument; never printed)",
     "$GIULIA_COOKIE, $RELEASE_COOKIE, else the monitor's ~/.erlang.cookie"},
    {"--cookie-file FILE", "read the cookie from FILE", NULL},
    {"--interval MS", "milliseconds between snapshots (also the third argument)", "5000"},
    {"--trace MOD,MOD", "count calls to these modules' functions (also the fourth argument)", NULL},
    {"--call-time", "time the traced functions too (in the hottest processes)", NULL},
    {"--project PATH", "the indexed project the profile is fused with", NULL},
    {"--worker URL",
     "the worker asked, after the first snapshot, whether every traced "
     "module could be traced (a loud warning names those that could not)",
     "$GIULIA_WORKER_URL, else http://127.0.0.1:4000"},
    {"--lease MS",
     "how long the node keeps the session (state and patterns) through a lost connection "
     "before cleaning up by itself (1000-600000, at least two intervals)",
     "10000"},
    {"--overhead PCT",
     "bound the cost of call counting by duty-cycling the patterns; counts become "
     "estimates with a 95% interval (docs/OBSERVE.md); 0 counts every call (exact counts "
     "for rare functions or a short investigation)",
     "5%"},
    {"--budget PCT",
     "the observer's budget on the node, as a share of one scheduler: its snapshots, "
     "sampler and counting together; over it the sampler slows and counting gets less, "
     "and the profile says so (docs/OBSERVE.md)",
     "1%"},
    {"--cluster", "also observe every visible member of NODE's cluster (its nodes())", NULL},
    {"--cluster-max N", "at most N members with --cluster (1..1000)", "32"},
    {NULL, NULL, NULL},
};

static const struct cli_help observe_start_help = {
    "Starts an observation of a live node through the monitor: a snapshot every interval, "
    "until `giulia-observe stop NODE`. NODE is name@host, or a bare name on this host "
    "(as `erl -sname` would complete it).",
    observe_start_options, observe_monitor_option, CLI_EXITS_NODE | CLI_EXITS_DAEMON,
    "giulia-observe start shop@localhost --interval 1000 --trace Shop.Cart\n"
    "giulia-observe start shop --cookie-file ~/.erlang.cookie"};
static const struct cli_help observe_stop_help = {
    "Stops the observation of NODE and prints its profile (the worker builds it from every "
    "snapshot); an observation that ended early (the node died) says so, why, and which "
    "profile holds what arrived.",
    NULL, observe_monitor_option, CLI_EXITS_DAEMON, "giulia-observe stop shop@localhost"};
static const struct cli_help observe_status_help = {
    "Lists the running observations and the delivery of their snapshots to the worker.", NULL,
    observe_monitor_option, CLI_EXITS_DAEMON, "giulia-observe status --json"};

const struct cli_command cli_observe_program_commands[] = {
    {"start",
     "NODE [COOKIE] [INTERVAL_MS] [MOD,MOD] [--interval MS] [--trace MOD,MOD] "
     "[--cookie C | --cookie-file FILE] [--call-time] [--project PATH] [--monitor URL] "
     "[--worker URL] [--lease MS] [--overhead PCT] [--budget PCT] [--cluster [--cluster-max N]] "
     "[--json]",
     "start observing a live node", run_observe_start, &observe_start_help},
    {"stop", "NODE [--monitor URL] [--json]", "stop an observation and print its profile",
     run_observe_stop, &observe_stop_help},
    {"status", "[--monitor URL] [--json]", "the running observations", run_observe_status,
     &observe_status_help},
    {NULL, NULL, NULL, NULL, NULL},
};

static void observe_program_usage(FILE *out)
{
	fprintf(out,
	        "giulia-observe %s - observations of live BEAM nodes through the monitor\n\n"
	        "usage: giulia-observe COMMAND [ARGS]\n\ncommands:\n",
	        cli_version);
	for (const struct cli_command *c = cli_observe_program_commands; c->name; c++)
		fprintf(out, "  %-12s %s\n", c->name, c->summary);
	fprintf(out, "\n`giulia-observe help COMMAND` or `giulia-observe COMMAND --help` shows its "
	             "options.\n");
}

int cli_observe_main(int argc, char **argv)
{
	const struct cli_command *table = cli_observe_program_commands;
	if (argc < 2) {
		observe_program_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0 ||
	    (argc > 2 && strcmp(argv[2], "--version") == 0)) {
		printf("giulia-observe %s\n", cli_version);
		return CLI_EXIT_OK;
	}
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
	    (strcmp(cmd, "help") == 0 && argc == 2)) {
		observe_program_usage(stdout);
		return CLI_EXIT_OK;
	}
	bool help = strcmp(cmd, "help") == 0;
	if (help)
		cmd = argv[2];
	const struct cli_command *c = cli_command_find(table, cmd);
	if (!c) {
		const char *near = cli_command_suggest(table, cmd);
		fprintf(stderr,
		        "giulia-observe: unknown command '%s'%s%s%s; the commands are start, "
		        "stop and status\n",
		        cmd, near ? " (did you mean `" : "", near ? near : "", near ? "`?)" : "");
		return CLI_EXIT_USAGE;
	}
	if (help || cli_wants_help(argc - 1, argv + 1)) {
		cli_help_print(stdout, "giulia-observe", c);
		return CLI_EXIT_OK;
	}
	return c->run(argc - 1, argv + 1);
}
