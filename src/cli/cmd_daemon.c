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

#include "net/client.h"
#include "api/http.h"
#include "api/monitor.h"
#include "api/worker.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/log.h"
#include "base/str.h"
#include "cli/cli.h"
#include "fuse/fuse.h"
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
	size_t body_limit;
	int request_timeout, ip_connection_limit;       /* 0: the HTTP layer's defaults */
	const char *monitor_url;                        /* worker: for /mcp's runtime tools */
	const char *mcp_nodes[MCP_ALLOW_NODES_MAX + 1]; /* --mcp-allow-node, NULL-terminated */
	int nmcp_nodes;
	bool new_store;
	int liveness;
	size_t ebin_cache_bytes;
	long long ebin_cache_age_ms;
};

static int daemon_parse(int argc, char **argv, struct daemon_opts *o, bool serve, const char *usage)
{
	memset(o, 0, sizeof(*o));
	o->token = env_or("GIULIA_TOKEN", NULL);
	for (int i = 1; i < argc; i++) {
		const char *v;
		if (is_help(argv[i])) {
			printf("usage: %s\n", usage);
			exit(CLI_EXIT_OK);
		} else if (opt_value(argc, argv, &i, serve ? "--worker-listen" : "--listen", &v))
			o->listen = v;
		else if (serve && opt_value(argc, argv, &i, "--monitor-listen", &v))
			o->listen2 = v;
		else if (opt_value(argc, argv, &i, "--data", &v))
			o->data = v;
		else if (opt_value(argc, argv, &i, "--token", &v))
			o->token = v;
		else if (!serve && opt_value(argc, argv, &i, "--worker", &v))
			o->worker_url = v;
		else if (opt_value(argc, argv, &i, "--worker-token", &v))
			o->worker_token = v;
		else if (!serve && opt_value(argc, argv, &i, "--monitor", &v))
			o->monitor_url = v;
		else if (opt_value(argc, argv, &i, "--mcp-allow-node", &v)) {
			if (o->nmcp_nodes == MCP_ALLOW_NODES_MAX) {
				fprintf(stderr, "giulia: at most %d --mcp-allow-node\n",
				        MCP_ALLOW_NODES_MAX);
				return CLI_EXIT_USAGE;
			}
			o->mcp_nodes[o->nmcp_nodes++] = v;
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
			fprintf(stderr, "giulia: unknown argument '%s'\nusage: %s\n", argv[i],
			        usage);
			return CLI_EXIT_USAGE;
		}
	}
	if (!o->worker_token)
		o->worker_token = env_or("GIULIA_WORKER_TOKEN", o->token);
	return 0;
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
    "giulia worker [--listen ADDR:PORT] [--data DIR] [--token TOKEN] [--body-limit BYTES]\n"
    "              [--request-timeout S] [--ip-connection-limit N] [--monitor URL]\n"
    "              [--mcp-allow-node NODE]... [--new-store] [--liveness INTERVALS]\n"
    "              [--ebin-cache-max BYTES] [--ebin-cache-days DAYS]";
static const char MONITOR_USAGE[] =
    "giulia monitor [--listen ADDR:PORT] [--worker URL] [--data DIR] [--token TOKEN] "
    "[--worker-token TOKEN] [--body-limit BYTES]\n    [--request-timeout S] [--ip-connection-limit "
    "N]";
static const char SERVE_USAGE[] =
    "giulia serve [--worker-listen ADDR:PORT] [--monitor-listen ADDR:PORT] [--data DIR] "
    "[--token TOKEN] [--body-limit BYTES]\n"
    "             [--request-timeout S] [--ip-connection-limit N] [--mcp-allow-node NODE]...\n"
    "             [--new-store] [--liveness INTERVALS] [--ebin-cache-max BYTES] "
    "[--ebin-cache-days DAYS]";

/* The worker's configuration from the options (borrowed: the strings stay
 * the options'), its MCP runtime tools asking the monitor at `monitor_url`
 * (NULL: GIULIA_MONITOR_URL or the default). */
static struct api_worker_config worker_config(const struct daemon_opts *o, const char *monitor_url)
{
	struct api_worker_config wc = {
	    .listen = o->listen,
	    .data_dir = o->data,
	    .token = o->token,
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
	struct api_worker_config wc = worker_config(&o, o.monitor_url);
	struct api_worker *w;
	rc = api_worker_start(&wc, &w);
	if (rc)
		return start_error("worker", rc);
	signals_wait(&set);
	api_worker_stop(w);
	return CLI_EXIT_OK;
}

static int cmd_monitor(int argc, char **argv)
{
	struct daemon_opts o;
	sigset_t set;
	int rc = daemon_setup(argc, argv, false, MONITOR_USAGE, &o, &set);
	if (rc)
		return rc;
	struct api_monitor_config mc = {
	    o.listen, o.worker_url, o.token,           o.worker_token,
	    o.data,   o.body_limit, o.request_timeout, o.ip_connection_limit};
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
	char monitor_url[128], maddr[64];
	int mport;
	if (api_listen_parse(o.listen2 ? o.listen2 : API_MONITOR_LISTEN_DEFAULT, maddr, &mport) !=
	    0)
		return start_error("serve (monitor)", GI_EINVAL);
	snprintf(monitor_url, sizeof(monitor_url), "http://%s:%d",
	         strcmp(maddr, "0.0.0.0") == 0 ? "127.0.0.1" : maddr, mport);
	struct api_worker_config wc = worker_config(&o, monitor_url);
	struct api_worker *w;
	rc = api_worker_start(&wc, &w);
	if (rc)
		return start_error("serve (worker)", rc);
	char url[128];
	char addr[64];
	int port;
	api_listen_parse(o.listen ? o.listen : API_WORKER_LISTEN_DEFAULT, addr, &port);
	snprintf(url, sizeof(url), "http://%s:%d",
	         strcmp(addr, "0.0.0.0") == 0 ? "127.0.0.1" : addr, api_worker_port(w));
	struct api_monitor_config mc = {
	    o.listen2, url,          o.token,           o.token,
	    o.data,    o.body_limit, o.request_timeout, o.ip_connection_limit};
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

const struct cli_command cli_daemon_commands[] = {
    {"worker", WORKER_USAGE, "run the worker daemon (static engine, store, profiles; :4000)",
     cmd_worker},
    {"monitor", MONITOR_USAGE, "run the monitor daemon (runtime observer; :4001)", cmd_monitor},
    {"serve", SERVE_USAGE, "run the worker and the monitor in one process", cmd_serve},
    {NULL, NULL, NULL, NULL},
};

/* ---- giulia-observe ---- */

static const char OBSERVE_USAGE[] =
    "usage: giulia-observe start NODE [COOKIE] [INTERVAL_MS] [Mod1,Mod2]\n"
    "                            [--cookie C] [--interval MS] [--trace Mod1,Mod2]\n"
    "                            [--project PATH] [--call-time] [--lease MS]\n"
    "                            [--overhead PCT] [--json]\n"
    "       giulia-observe stop NODE [--json]\n"
    "       giulia-observe status [--json]\n"
    "environment: GIULIA_MONITOR_URL (default " MONITOR_URL_DEFAULT "), GIULIA_TOKEN\n";

struct observe_opts {
	const char *positional[8];
	int npos;
	const char *cookie, *interval, *trace, *project, *lease, *overhead;
	bool json;
	bool call_time;
};

static int observe_parse(int argc, char **argv, struct observe_opts *o)
{
	memset(o, 0, sizeof(*o));
	for (int i = 2; i < argc; i++) {
		const char *v;
		if (strcmp(argv[i], "--json") == 0)
			o->json = true;
		else if (strcmp(argv[i], "--call-time") == 0)
			o->call_time = true;
		else if (opt_value(argc, argv, &i, "--cookie", &v))
			o->cookie = v;
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
		else if (argv[i][0] == '-' && argv[i][1] == '-') {
			fprintf(stderr, "giulia-observe: unknown option '%s'\n%s", argv[i],
			        OBSERVE_USAGE);
			return CLI_EXIT_USAGE;
		} else if (o->npos < 8)
			o->positional[o->npos++] = argv[i];
		else {
			fprintf(stderr, "giulia-observe: too many arguments\n%s", OBSERVE_USAGE);
			return CLI_EXIT_USAGE;
		}
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

/* Calls the monitor; prints a clear message and returns an exit code on failure. */
static int monitor_call(const char *method, const char *path, json_t *body, int timeout_ms,
                        int *status, json_t **resp)
{
	const char *base = env_or("GIULIA_MONITOR_URL", MONITOR_URL_DEFAULT);
	char url[1024];
	size_t blen = strlen(base);
	while (blen > 0 && base[blen - 1] == '/')
		blen--;
	int n = snprintf(url, sizeof(url), "%.*s%s", (int)blen, base, path);
	if (n < 0 || (size_t)n >= sizeof(url)) {
		fprintf(stderr,
		        "giulia-observe: GIULIA_MONITOR_URL is too long (%zu bytes; at most %zu)\n",
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
		        "`giulia monitor` or `giulia serve`, or set GIULIA_MONITOR_URL\n",
		        (int)blen, base, gi_strerror(rc));
		return CLI_EXIT_CONNECT;
	}
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

static int observe_start(struct observe_opts *o)
{
	if (o->npos < 1 || o->npos > 4) {
		fprintf(stderr, "%s", OBSERVE_USAGE);
		return CLI_EXIT_USAGE;
	}
	const char *node = o->positional[0];
	const char *cookie = o->cookie ? o->cookie : (o->npos > 1 ? o->positional[1] : NULL);
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
	int status;
	json_t *resp = NULL;
	int rc = monitor_call("POST", "/api/monitor/observe/start", body, 60000, &status, &resp);
	json_decref(body);
	if (rc == 0) {
		if (o->json)
			print_json(resp);
		else
			printf("observing %s every %lld ms (session %s)\n"
			       "run your workload, then: giulia-observe stop %s\n",
			       node,
			       (long long)json_integer_value(json_object_get(resp, "interval_ms")),
			       json_string_value(json_object_get(resp, "session_id")), node);
	}
	json_decref(resp);
	return rc;
}

static int observe_stop(struct observe_opts *o)
{
	if (o->npos != 1) {
		fprintf(stderr, "%s", OBSERVE_USAGE);
		return CLI_EXIT_USAGE;
	}
	json_t *body = json_pack("{s:s}", "node", o->positional[0]);
	int status;
	json_t *resp = NULL;
	int rc = monitor_call("POST", "/api/monitor/observe/stop", body, 300000, &status, &resp);
	json_decref(body);
	if (rc == 0 && o->json) {
		print_json(resp);
	} else if (rc == 0) {
		json_t *profile = json_object_get(resp, "profile");
		json_t *pid = json_object_get(resp, "profile_id");
		struct gi_buf text;
		gi_buf_init(&text, 0);
		if (json_is_true(json_object_get(resp, "ended_early")))
			printf("the observation of %s (session %s) had already ended: %s; %s\n",
			       o->positional[0],
			       json_string_value(json_object_get(resp, "session_id")),
			       json_string_value(json_object_get(resp, "reason")),
			       json_is_integer(pid) ? "its profile was built from what arrived"
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
			printf("profile id: %lld\n", (long long)json_integer_value(pid));
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
		if (json_array_size(list) == 0)
			printf("no observation running\n");
		else
			printf("%-18s %-32s %10s %9s %s\n", "SESSION", "NODE", "INTERVAL",
			       "SNAPSHOTS", "STATE");
		size_t i;
		json_t *s;
		json_array_foreach(list, i, s)
		{
			printf("%-18s %-32s %8lldms %9lld %s\n",
			       json_string_value(json_object_get(s, "session_id")),
			       json_string_value(json_object_get(s, "node")),
			       (long long)json_integer_value(json_object_get(s, "interval_ms")),
			       (long long)json_integer_value(json_object_get(s, "snapshots")),
			       json_string_value(json_object_get(s, "state")));
		}
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

int cli_observe_main(int argc, char **argv)
{
	if (argc < 2 || is_help(argv[1])) {
		fputs(OBSERVE_USAGE, argc < 2 ? stderr : stdout);
		return argc < 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
	}
	struct observe_opts o;
	int rc = observe_parse(argc, argv, &o);
	if (rc)
		return rc;
	if (strcmp(argv[1], "start") == 0)
		return observe_start(&o);
	if (strcmp(argv[1], "stop") == 0)
		return observe_stop(&o);
	if (strcmp(argv[1], "status") == 0)
		return observe_status(&o);
	fprintf(stderr, "giulia-observe: unknown command '%s'\n%s", argv[1], OBSERVE_USAGE);
	return CLI_EXIT_USAGE;
}
