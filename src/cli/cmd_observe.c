/*
 * cmd_observe.c - the runtime commands of the giulia CLI (see cli.h and
 * docs/CLI.md "Runtime commands"): `pulse`, `top` and `trace`, one-shot
 * observations of a live node through src/observe/observe.h.
 *
 * Exit codes: 0, 1 (the command failed), 2 (usage), and the node errors of
 * cli_exit_code_for(). The cookie is passed through, never printed.
 */
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/fmt.h"
#include "base/str.h"
#include "base/table.h"
#include "cli/cli.h"
#include "observe/dist.h"
#include "observe/observe.h"
#include "observe/snapshot_view.h"

#define MAX_TRACE_MODULES 64

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
};

static int usage_error(const char *cmd, const char *what)
{
	fprintf(stderr, "giulia %s: %s; `giulia %s --help` shows the options\n", cmd, what, cmd);
	return CLI_EXIT_USAGE;
}

static int int_option(const char *cmd, const char *name, const char *value, int64_t min,
                      int64_t max, int *out)
{
	int64_t v = 0;
	if (!value || gi_parse_int64(value, min, max, &v) != 0) {
		fprintf(stderr, "giulia %s: %s needs a whole number from %lld to %lld\n", cmd, name,
		        (long long)min, (long long)max);
		return CLI_EXIT_USAGE;
	}
	*out = (int)v;
	return 0;
}

/* Returns 0, CLI_EXIT_USAGE, or -1 after printing help. */
static int parse_args(const char *cmd, int argc, char **argv, struct observe_args *a)
{
	memset(a, 0, sizeof(*a));
	a->top_n = 10;
	int positional = 0;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const char *next = i + 1 < argc ? argv[i + 1] : NULL;
		int rc = 0;
		if (strcmp(arg, "--json") == 0) {
			a->json = true;
		} else if (strcmp(arg, "--call-time") == 0 && strcmp(cmd, "trace") == 0) {
			a->call_time = true;
		} else if (strcmp(arg, "--watch") == 0 && strcmp(cmd, "top") == 0) {
			a->watch = true;
		} else if (strcmp(arg, "--interval") == 0 && strcmp(cmd, "top") == 0) {
			rc = int_option(cmd, arg, next, 100, 3600 * 1000, &a->interval_ms);
			i++;
		} else if (strcmp(arg, "--count") == 0 && strcmp(cmd, "top") == 0) {
			rc = int_option(cmd, arg, next, 1, 1000000, &a->count);
			i++;
		} else if (strcmp(arg, "--cookie") == 0) {
			if (!next)
				return usage_error(cmd, "--cookie needs a value");
			a->cookie = next;
			i++;
		} else if (strcmp(arg, "--cookie-file") == 0) {
			if (!next)
				return usage_error(cmd, "--cookie-file needs a file");
			a->cookie_file = next;
			i++;
		} else if (strcmp(arg, "--by") == 0) {
			if (!next)
				return usage_error(cmd, "--by needs reductions, memory or mailbox");
			a->by = next;
			i++;
		} else if (strcmp(arg, "--window") == 0 || strcmp(arg, "--for") == 0) {
			rc = int_option(cmd, arg, next, 1, 24 * 3600 * 1000, &a->window_ms);
			i++;
		} else if (strcmp(arg, "--timeout") == 0) {
			rc = int_option(cmd, arg, next, 10, 3600 * 1000, &a->timeout_ms);
			i++;
		} else if (strcmp(arg, "-n") == 0) {
			rc = int_option(cmd, arg, next, 1, 1000, &a->top_n);
			i++;
		} else if (arg[0] == '-' && arg[1] != '\0') {
			char what[300];
			snprintf(what, sizeof(what), "unknown option '%.200s'", arg);
			return usage_error(cmd, what);
		} else if (positional == 0) {
			a->node = arg;
			positional++;
		} else if (positional == 1 && strcmp(cmd, "trace") == 0) {
			a->modules = arg;
			positional++;
		} else {
			return usage_error(cmd, "too many arguments");
		}
		if (rc != 0)
			return rc;
	}
	if (!a->node)
		return usage_error(cmd,
		                   "which node? give NODE as name@host (or name on this host)");
	if (cli_node_name(a->node, a->node_buf, sizeof(a->node_buf)) != 0)
		return usage_error(cmd, "not a node name");
	a->node = a->node_buf;
	char prog[32];
	snprintf(prog, sizeof(prog), "giulia %s", cmd);
	int crc = cli_cookie(prog, a->cookie, a->cookie_file, a->cookie_buf, sizeof(a->cookie_buf),
	                     &a->cookie);
	if (crc)
		return crc;
	if (strcmp(cmd, "trace") == 0 && (!a->modules || !*a->modules))
		return usage_error(cmd, "which modules? give MOD[,MOD...]");
	if ((a->interval_ms || a->count) && !a->watch)
		return usage_error(cmd, "--interval and --count go with --watch");
	if (a->by && strcmp(a->by, "reductions") != 0 && strcmp(a->by, "memory") != 0 &&
	    strcmp(a->by, "mailbox") != 0)
		return usage_error(cmd, "--by takes reductions, memory or mailbox");
	return 0;
}

static int node_error(const char *cmd, const char *node, int rc)
{
	const char *hint = dist_error_hint(rc);
	fprintf(stderr, "giulia %s: cannot observe %s: %s%s%s\n", cmd, node, gi_strerror(rc),
	        *hint ? "; " : "", hint);
	return cli_exit_code_for(rc);
}

static void print_json(json_t *v)
{
	char *text = json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (text) {
		puts(text);
		free(text);
	}
}

static double num(json_t *obj, const char *key)
{
	return json_number_value(json_object_get(obj, key));
}

static const char *str_or(json_t *v, const char *fallback)
{
	const char *s = json_string_value(v);
	return s ? s : fallback;
}

static const char *or_text(const char *s, const char *fallback)
{
	return s ? s : fallback;
}

/* The processes of `list` as a table fitted to the terminal. The share
 * column is the process's share of all reductions in the window (it is not
 * CPU time: reductions are the BEAM's unit of work). */
static void processes_render(const struct obs_view_processes *list, const char *title,
                             struct gi_buf *out)
{
	static const struct gi_table_column cols[] = {
	    {"PID", 0, 0, 0},
	    {"REDS", GI_COL_RIGHT, 0, 0},
	    {"REDS%", GI_COL_RIGHT, 0, 0},
	    {"MEMORY", GI_COL_RIGHT, 0, 0},
	    {"MSGQ", GI_COL_RIGHT, 0, 0},
	    {"NAME / MODULE", GI_COL_ELIDE, 0, 16},
	    {"CURRENT", GI_COL_ELIDE, 1, 20},
	};
	gi_buf_printf(out, "%s\n", title);
	struct gi_table *t = gi_table_new(cols, 7, 2);
	for (size_t i = 0; i < list->len; i++) {
		const struct obs_view_process *p = &list->items[i];
		char reds[GI_FMT_NUM_MAX], share[GI_FMT_NUM_MAX], mem[GI_FMT_NUM_MAX],
		    mq[GI_FMT_NUM_MAX], name[512], current[1024];
		gi_fmt_count(p->reductions, reds, sizeof(reds));
		gi_fmt_share(p->cpu_share, share, sizeof(share));
		gi_fmt_bytes(p->memory_bytes, mem, sizeof(mem));
		gi_fmt_count(p->message_queue_len, mq, sizeof(mq));
		if (p->registered_name && *p->registered_name)
			gi_fmt_registered_name(p->registered_name, name, sizeof(name));
		else
			snprintf(name, sizeof(name), "%s", or_text(p->module, "?"));
		gi_fmt_mfa(or_text(p->current_function, ""), current, sizeof(current));
		const char *row[] = {or_text(p->pid, "?"), reds, share, mem, mq, name, current};
		gi_table_add(t, row);
	}
	if (list->len == 0)
		gi_buf_puts(out, "  (none)\n");
	else
		gi_table_render(t, cli_columns(), out);
	gi_table_free(t);
}

static void print_processes(const struct obs_view_processes *list, const char *title)
{
	struct gi_buf b;
	gi_buf_init(&b, 0);
	processes_render(list, title, &b);
	fputs(gi_buf_str(&b), stdout);
	gi_buf_destroy(&b);
}

static void print_errors(json_t *errors)
{
	size_t i;
	json_t *e;
	json_array_foreach(errors, i, e)
	{
		const char *s = json_string_value(e);
		fprintf(stderr, "warning: %s\n", s ? s : "?");
	}
}

/* The pulse of a node in a few lines, numbers formatted (fmt.h). */
static void pulse_header_render(const struct obs_view *v, struct gi_buf *out)
{
	char util[GI_FMT_NUM_MAX], rate[GI_FMT_NUM_MAX], procs[GI_FMT_NUM_MAX],
	    plimit[GI_FMT_NUM_MAX], atoms[GI_FMT_NUM_MAX], alimit[GI_FMT_NUM_MAX];
	if (isfinite(v->utilisation_total))
		gi_fmt_share(v->utilisation_total, util, sizeof(util));
	else
		snprintf(util, sizeof(util), "n/a");
	gi_fmt_rate(v->reductions_per_second, rate, sizeof(rate));
	gi_fmt_count(v->processes_count, procs, sizeof(procs));
	gi_fmt_count(v->processes_limit, plimit, sizeof(plimit));
	gi_fmt_count(v->atoms_count, atoms, sizeof(atoms));
	gi_fmt_count(v->atoms_limit, alimit, sizeof(alimit));
	gi_buf_printf(out, "node %s  OTP %s  schedulers %.0f  window %.0f ms\n",
	              or_text(v->node, "?"), or_text(v->otp_release, "?"), v->schedulers_online,
	              v->window_ms);
	gi_buf_printf(out, "schedulers busy %s  run queue %.0f  reductions %s\n", util,
	              v->run_queue_total, rate);
	gi_buf_printf(out, "processes %s/%s  ports %.0f  atoms %s/%s  ets tables %.0f\n", procs,
	              plimit, v->ports_count, atoms, alimit, v->ets_count);
	char total[GI_FMT_NUM_MAX], proc[GI_FMT_NUM_MAX], bin[GI_FMT_NUM_MAX], ets[GI_FMT_NUM_MAX],
	    code[GI_FMT_NUM_MAX];
	gi_fmt_bytes(v->memory.total, total, sizeof(total));
	gi_fmt_bytes(v->memory.processes, proc, sizeof(proc));
	gi_fmt_bytes(v->memory.binary, bin, sizeof(bin));
	gi_fmt_bytes(v->memory.ets, ets, sizeof(ets));
	gi_fmt_bytes(v->memory.code, code, sizeof(code));
	gi_buf_printf(out, "memory %s  processes %s  binary %s  ets %s\n", total, proc, bin, ets);
	char gc[GI_FMT_NUM_MAX], words[GI_FMT_NUM_MAX], in[GI_FMT_NUM_MAX], outb[GI_FMT_NUM_MAX];
	gi_fmt_count(v->gc_count, gc, sizeof(gc));
	gi_fmt_bytes(v->gc_words_reclaimed * (double)sizeof(void *), words, sizeof(words));
	gi_fmt_bytes(v->io_input_bytes, in, sizeof(in));
	gi_fmt_bytes(v->io_output_bytes, outb, sizeof(outb));
	gi_buf_printf(out, "code %s  io in %s  out %s\n", code, in, outb);
	gi_buf_printf(out, "gc %s collections, %s reclaimed\n", gc, words);
	if (v->observer.present && isfinite(v->observer.cost)) {
		char cost[GI_FMT_NUM_MAX], budget[GI_FMT_NUM_MAX];
		gi_fmt_share(v->observer.cost, cost, sizeof(cost));
		gi_fmt_share(v->observer.budget, budget, sizeof(budget));
		gi_buf_printf(out,
		              "observer %s of a core (%s its %s budget), left out of the figures\n",
		              cost, v->observer.within_budget ? "within" : "OVER", budget);
	}
}

static void print_pulse(json_t *snapshot)
{
	struct obs_view v;
	if (obs_view_parse(snapshot, &v) != 0) {
		fprintf(stderr, "warning: the snapshot is of an unknown schema version\n");
		obs_view_destroy(&v);
		return;
	}
	struct gi_buf b;
	gi_buf_init(&b, 0);
	pulse_header_render(&v, &b);
	fputs(gi_buf_str(&b), stdout);
	gi_buf_destroy(&b);
	print_processes(&v.top_reductions, "top processes by reductions over the window:");
	obs_view_destroy(&v);
}

/* ---- progress on stderr while a measurement runs ---- */

struct progress {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done, running;
	const char *what;
	int64_t end_ms;
};

static void *progress_main(void *arg)
{
	struct progress *p = arg;
	static const char spin[] = "|/-\\";
	int tick = 0;
	pthread_mutex_lock(&p->lock);
	while (!p->done) {
		int64_t left = p->end_ms - gi_clock_mono_ms();
		if (left > 0)
			fprintf(stderr, "\r%c %s: %lld s left \x1b[K", spin[tick % 4], p->what,
			        (long long)(left + 999) / 1000);
		else
			fprintf(stderr, "\r%c %s: collecting \x1b[K", spin[tick % 4], p->what);
		fflush(stderr);
		tick++;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 200 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&p->cond, &p->lock, &ts);
	}
	pthread_mutex_unlock(&p->lock);
	fputs("\r\x1b[K", stderr);
	fflush(stderr);
	return NULL;
}

/* Starts a countdown of `ms` on stderr, only when stderr is a terminal and
 * the output is not JSON (progress never mixes with what scripts read). */
static void progress_start(struct progress *p, const char *what, int ms, bool json)
{
	memset(p, 0, sizeof(*p));
	if (json || !isatty(STDERR_FILENO))
		return;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	p->what = what;
	p->end_ms = gi_clock_mono_ms() + ms;
	p->running = pthread_create(&p->thread, NULL, progress_main, p) == 0;
}

static void progress_stop(struct progress *p)
{
	if (!p->running)
		return;
	pthread_mutex_lock(&p->lock);
	p->done = true;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
}

/* ---- giulia top --watch ---- */

static volatile sig_atomic_t watch_stop;

static void watch_signal(int sig)
{
	(void)sig;
	watch_stop = 1;
}

static const char *const watch_metrics[] = {"reductions", "memory", "mailbox"};

static const struct obs_view_processes *watch_list(const struct obs_view *v, int metric)
{
	return metric == 1   ? &v->top_memory
	       : metric == 2 ? &v->top_message_queue
	                     : &v->top_reductions;
}

/* One frame: the pulse header, the key line, the processes; in a terminal
 * each line clears what the previous frame left after it. */
static void watch_frame(const struct obs_view *v, int metric, bool paused, bool tty, int rows,
                        int interval_ms)
{
	struct gi_buf b;
	gi_buf_init(&b, 0);
	pulse_header_render(v, &b);
	char title[256];
	snprintf(title, sizeof(title), "top by %s, every %.1f s%s", watch_metrics[metric],
	         interval_ms / 1000.0, paused ? "  [paused]" : "");
	if (tty)
		gi_buf_puts(&b,
		            "keys: r reductions  m memory  b mailbox  s next  p pause  q quit\n");
	processes_render(watch_list(v, metric), title, &b);
	if (!tty) {
		char when[32];
		time_t now = time(NULL);
		struct tm tm;
		gmtime_r(&now, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
		printf("--- %s\n%s\n", when, gi_buf_str(&b));
		fflush(stdout);
		gi_buf_destroy(&b);
		return;
	}
	fputs("\x1b[H", stdout);
	int line = 0;
	for (const char *p = gi_buf_str(&b); *p && line < rows - 1; line++) {
		size_t n = strcspn(p, "\n");
		fwrite(p, 1, n, stdout);
		fputs("\x1b[K\r\n", stdout);
		p += n;
		if (*p)
			p++;
	}
	fputs("\x1b[J", stdout);
	fflush(stdout);
	gi_buf_destroy(&b);
}

/* The metric for key `c` (-1: not a metric key). */
static int watch_key_metric(int c, int current)
{
	switch (c) {
	case 'r':
		return 0;
	case 'm':
		return 1;
	case 'b':
	case 'x':
		return 2;
	case 's':
	case '\t':
		return (current + 1) % 3;
	default:
		return -1;
	}
}

/* Waits up to `ms` answering keys (a terminal) or sleeping (a pipe); returns
 * true when the frame must be drawn again at once. */
static bool watch_wait(bool tty, int64_t ms, int *metric, bool *paused)
{
	int64_t until = gi_clock_mono_ms() + ms;
	bool once = true; /* keys typed meanwhile are read even when no time is left */
	while (!watch_stop) {
		int64_t left = until - gi_clock_mono_ms();
		if (left <= 0 && !(tty && once))
			return false;
		once = false;
		if (left < 0)
			left = 0;
		if (!tty) {
			struct timespec ts = {(time_t)(left / 1000),
			                      (long)(left % 1000) * 1000000L};
			nanosleep(&ts, NULL);
			return false;
		}
		struct pollfd pfd = {STDIN_FILENO, POLLIN, 0};
		if (poll(&pfd, 1, (int)(left > 250 ? 250 : left)) <= 0) {
			if (left == 0)
				return false;
			continue;
		}
		char c = 0;
		if (read(STDIN_FILENO, &c, 1) != 1)
			continue;
		int m = watch_key_metric(c, *metric);
		if (c == 'q' || c == 'Q' || c == 3) {
			watch_stop = 1;
		} else if (c == 'p' || c == ' ') {
			*paused = !*paused;
			return true;
		} else if (m >= 0) {
			*metric = m;
			return true;
		}
	}
	return false;
}

/* watch_wait for `wait` ms, keeping the watch's session alive meanwhile
 * (its lease is renewed and the connection's ticks answered every few
 * seconds, a pause included). */
static bool watch_wait_alive(struct obs_watch *w, bool tty, int64_t wait, int *metric, bool *paused)
{
	int64_t until = gi_clock_mono_ms() + wait;
	for (;;) {
		int64_t left = until - gi_clock_mono_ms();
		bool key =
		    watch_wait(tty, left < 2000 ? (left > 0 ? left : 0) : 2000, metric, paused);
		/* kept alive on every pass, keys or not (a lost session is
		 * started again at the next refresh) */
		if (w)
			obs_watch_keepalive(w);
		if (key)
			return true;
		if (watch_stop || gi_clock_mono_ms() >= until)
			return false;
	}
}

/* `giulia top --watch`: a snapshot every interval from one session on the
 * node (one connection, one parse of the session's text); the session
 * cleans up when the watch ends, at once if the watch is killed. */
static int run_top_watch(const struct observe_args *a)
{
	bool tty = isatty(STDOUT_FILENO) && isatty(STDIN_FILENO) && !a->json;
	int interval = a->interval_ms ? a->interval_ms : 2000;
	/* half the interval measures, the other half answers keys */
	int window = a->window_ms ? a->window_ms : (interval / 2 < 1000 ? interval / 2 : 1000);
	int metric = a->by && strcmp(a->by, "memory") == 0    ? 1
	             : a->by && strcmp(a->by, "mailbox") == 0 ? 2
	                                                      : 0;
	struct termios saved;
	bool raw = false;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = watch_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (tty && tcgetattr(STDIN_FILENO, &saved) == 0) {
		struct termios t = saved;
		t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		t.c_cc[VMIN] = 0;
		t.c_cc[VTIME] = 0;
		raw = tcsetattr(STDIN_FILENO, TCSANOW, &t) == 0;
		fputs("\x1b[?1049h\x1b[?25l\x1b[H\x1b[J", stdout);
		fflush(stdout);
	}
	struct obs_target t = {a->node, a->cookie, a->timeout_ms};
	struct obs_watch *w = NULL;
	struct obs_view v;
	bool have = false, paused = false, fresh = true;
	int rc = 0, frames = 0;
	while (!watch_stop) {
		int rows = 24;
		struct winsize ws;
		if (tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0)
			rows = ws.ws_row;
		if (!paused && fresh) {
			json_t *snap = NULL;
			int n = tty && rows > 12 ? rows : a->top_n;
			if (!w)
				rc = obs_watch_open(&t, n, &w);
			if (rc == 0)
				rc = obs_watch_sample(w, window, &snap);
			if (rc != 0 && w) {
				/* the session ended (its lease ran out while the watch was
				 * suspended, say): one new session, then give up */
				obs_watch_close(w);
				w = NULL;
				rc = obs_watch_open(&t, n, &w);
				if (rc == 0)
					rc = obs_watch_sample(w, window, &snap);
			}
			if (rc != 0)
				break;
			if (a->json) {
				char *line = json_dumps(snap, JSON_COMPACT);
				if (line)
					printf("%s\n", line);
				free(line);
				fflush(stdout);
			} else {
				if (have)
					obs_view_destroy(&v);
				have = obs_view_parse(snap, &v) == 0;
			}
			json_decref(snap);
			frames++;
		}
		if (have && !a->json)
			watch_frame(&v, metric, paused, tty, rows, interval);
		if (a->count && frames >= a->count)
			break;
		int64_t wait = paused ? 3600000 : interval - window;
		/* a key redraws the last snapshot at once; the interval fetches a new one */
		fresh = !watch_wait_alive(w, tty, wait > 0 ? wait : 0, &metric, &paused);
	}
	obs_watch_close(w);
	if (tty) {
		fputs("\x1b[?25h\x1b[?1049l", stdout);
		fflush(stdout);
	}
	if (raw)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	if (have)
		obs_view_destroy(&v);
	if (rc != 0)
		return node_error("top", a->node, rc);
	return CLI_EXIT_OK;
}

static int run_pulse_or_top(const char *cmd, int argc, char **argv)
{
	struct observe_args a;
	int rc = parse_args(cmd, argc, argv, &a);
	if (rc != 0)
		return rc < 0 ? CLI_EXIT_OK : rc;
	if (a.watch)
		return run_top_watch(&a);
	struct obs_target t = {a.node, a.cookie, a.timeout_ms};
	json_t *snap = NULL;
	struct progress prog;
	progress_start(&prog, "measuring", a.window_ms ? a.window_ms : 1000, a.json);
	rc = obs_pulse(&t, a.window_ms, a.top_n, &snap);
	progress_stop(&prog);
	if (rc != 0)
		return node_error(cmd, a.node, rc);
	bool top = strcmp(cmd, "top") == 0;
	if (a.json) {
		if (top) {
			const char *by = a.by ? a.by : "reductions";
			const char *key = strcmp(by, "mailbox") == 0 ? "message_queue" : by;
			json_t *out = json_object();
			json_object_set(out, "node", json_object_get(snap, "node"));
			json_object_set(out, "window_ms", json_object_get(snap, "window_ms"));
			json_object_set_new(out, "by", json_string(by));
			json_object_set(
			    out, "processes",
			    json_object_get(json_object_get(snap, "top_processes"), key));
			print_json(out);
			json_decref(out);
		} else {
			print_json(snap);
		}
	} else if (top) {
		const char *by = a.by ? a.by : "reductions";
		const char *key = strcmp(by, "mailbox") == 0 ? "message_queue" : by;
		struct obs_view v;
		if (obs_view_parse(snap, &v) == 0) {
			char title[128];
			snprintf(title, sizeof(title),
			         "%s: top %d processes by %s (window %.0f ms)",
			         or_text(v.node, "?"), a.top_n, by, v.window_ms);
			print_processes(strcmp(key, "memory") == 0          ? &v.top_memory
			                : strcmp(key, "message_queue") == 0 ? &v.top_message_queue
			                                                    : &v.top_reductions,
			                title);
		}
		obs_view_destroy(&v);
	} else {
		print_pulse(snap);
	}
	print_errors(json_object_get(snap, "errors"));
	json_decref(snap);
	return CLI_EXIT_OK;
}

static int run_pulse(int argc, char **argv)
{
	return run_pulse_or_top("pulse", argc, argv);
}

static int run_top(int argc, char **argv)
{
	return run_pulse_or_top("top", argc, argv);
}

static int run_trace(int argc, char **argv)
{
	struct observe_args a;
	int rc = parse_args("trace", argc, argv, &a);
	if (rc != 0)
		return rc < 0 ? CLI_EXIT_OK : rc;
	char *list = gi_strdup(a.modules);
	const char *mods[MAX_TRACE_MODULES + 1];
	size_t n = 0;
	for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ')
			tok++;
		if (!*tok)
			continue;
		if (n == MAX_TRACE_MODULES) {
			gi_free(list);
			return usage_error("trace", "at most 64 modules at once");
		}
		mods[n++] = tok;
	}
	mods[n] = NULL;
	if (n == 0) {
		gi_free(list);
		return usage_error("trace", "which modules? give MOD[,MOD...]");
	}
	struct obs_target t = {a.node, a.cookie, a.timeout_ms};
	json_t *out = NULL;
	struct progress prog;
	progress_start(&prog, "tracing", a.window_ms > 0 ? a.window_ms : 5000, a.json);
	rc = obs_trace_timed(&t, mods, a.window_ms > 0 ? a.window_ms : 5000, a.call_time, &out);
	progress_stop(&prog);
	gi_free(list);
	if (rc != 0)
		return node_error("trace", a.node, rc);
	json_t *errors = json_object_get(out, "errors");
	bool none_traced = json_array_size(json_object_get(out, "modules")) == 0;
	if (a.json) {
		print_json(out);
	} else {
		printf("%s: calls per function over %.0f ms\n",
		       str_or(json_object_get(out, "node"), "?"), num(out, "window_ms"));
		static const struct gi_table_column cols[] = {
		    {"CALLS", GI_COL_RIGHT, 0, 0},
		    {"TIMED", GI_COL_RIGHT, 1, 0},
		    {"MEAN_US", GI_COL_RIGHT, 0, 0},
		    {"FUNCTION", GI_COL_ELIDE, 0, 24},
		};
		static const struct gi_table_column plain[] = {
		    {"CALLS", GI_COL_RIGHT, 0, 0},
		    {"FUNCTION", GI_COL_ELIDE, 0, 24},
		};
		struct gi_table *tbl =
		    a.call_time ? gi_table_new(cols, 4, 2) : gi_table_new(plain, 2, 2);
		size_t i;
		json_t *c;
		json_array_foreach(json_object_get(out, "calls"), i, c)
		{
			char count[GI_FMT_NUM_MAX], fn[1024], tc[GI_FMT_NUM_MAX], mean[32];
			gi_fmt_count(num(c, "count"), count, sizeof(count));
			gi_fmt_function(str_or(json_object_get(c, "module"), "?"),
			                str_or(json_object_get(c, "function"), "?"),
			                (long long)num(c, "arity"), fn, sizeof(fn));
			double timed = num(c, "time_calls"), us = num(c, "time_us");
			gi_fmt_count(timed, tc, sizeof(tc));
			snprintf(mean, sizeof(mean), "%.1f", timed > 0 ? us / timed : 0.0);
			const char *row4[] = {count, tc, mean, fn};
			const char *row2[] = {count, fn};
			gi_table_add(tbl, a.call_time ? row4 : row2);
		}
		struct gi_buf tb;
		gi_buf_init(&tb, 0);
		if (gi_table_rows(tbl) > 0 && gi_table_render(tbl, cli_columns(), &tb) == 0)
			fputs(gi_buf_str(&tb), stdout);
		gi_buf_destroy(&tb);
		gi_table_free(tbl);
		json_t *ct = json_object_get(out, "call_time");
		if (ct)
			printf("  call_time: %.0f processes flagged (cap %.0f), %.0f refused\n",
			       num(ct, "flagged"), num(ct, "flag_cap"), num(ct, "refused"));
		if (json_array_size(json_object_get(out, "calls")) == 0)
			printf("  (no calls)\n");
	}
	print_errors(errors);
	json_decref(out);
	if (none_traced) {
		fprintf(stderr, "giulia trace: none of the modules could be traced\n");
		return CLI_EXIT_FAILURE;
	}
	return CLI_EXIT_OK;
}

static const struct cli_option pulse_options[] = {
    {"--window MS", "how long the busiest processes are measured", "1000"},
    {"-n N", "how many of the busiest processes", "10"},
    {"--json", "print the snapshot as JSON (raw numbers)", NULL},
    {NULL, NULL, NULL},
};
static const struct cli_option top_options[] = {
    {"--by METRIC", "reductions, memory or mailbox", "reductions"},
    {"--watch",
     "refresh in place, full screen (keys: r, m, b metric; s next; p pause; q "
     "quit); plain lines when stdout is not a terminal, one JSON object a line "
     "with --json",
     NULL},
    {"--interval MS", "with --watch: time between refreshes", "2000"},
    {"--count N", "with --watch: stop after N refreshes", "until q or Ctrl-C"},
    {"--window MS", "how long reductions are measured", "1000"},
    {"-n N", "how many processes", "10"},
    {"--json", "print the processes as JSON (raw numbers)", NULL},
    {NULL, NULL, NULL},
};
static const struct cli_option trace_options[] = {
    {"--for MS", "how long calls are counted", "5000"},
    {"--call-time",
     "also time each function in the hottest processes (at most 100 carry a "
     "trace flag)",
     NULL},
    {"--json", "print the counts as JSON", NULL},
    {NULL, NULL, NULL},
};

static const struct cli_help pulse_help = {
    "One snapshot of a live node: schedulers, memory, processes, and the busiest processes "
    "over a short window. NODE is name@host, or a bare name on this host (as `erl -sname` "
    "completes it). Nothing is loaded on the node.",
    pulse_options, cli_node_options, CLI_EXITS_NODE,
    "giulia pulse shop@localhost\n"
    "giulia pulse shop --window 2000 -n 5"};
static const struct cli_help top_help = {
    "The top N processes of a live node by reductions over the window, by memory, or by "
    "mailbox length. REDS% is the process's share of all reductions in the window (the "
    "BEAM's unit of work, not CPU time). --watch keeps it on screen like observer_cli, with "
    "the node's pulse in a header.",
    top_options, cli_node_options, CLI_EXITS_NODE,
    "giulia top shop@localhost --by memory -n 20\ngiulia top shop --watch --interval 1000"};
static const struct cli_help trace_help = {
    "Calls per function of the given modules (Elixir or :erlang names) counted with "
    "call-count tracing; every trace pattern is removed when it ends, also on a deadline "
    "or an error.",
    trace_options, cli_node_options, CLI_EXITS_NODE,
    "giulia trace shop@localhost Shop.Cart,Shop.Repo --for 10000 --call-time"};

const struct cli_command cli_observe_commands[] = {
    {"pulse",
     "NODE [--window MS] [-n N] [--cookie C | --cookie-file FILE] [--timeout MS] "
     "[--json]",
     "one snapshot of a live node", run_pulse, &pulse_help},
    {"top",
     "NODE [--by reductions|memory|mailbox] [--watch [--interval MS] [--count N]] "
     "[--window MS] [-n N] [--cookie C | --cookie-file FILE] [--timeout MS] [--json]",
     "the busiest processes of a live node", run_top, &top_help},
    {"trace",
     "NODE MOD[,MOD...] [--for MS] [--call-time] [--cookie C | --cookie-file FILE] "
     "[--timeout MS] [--json]",
     "calls per function of modules on a live node", run_trace, &trace_help},
    {NULL, NULL, NULL, NULL, NULL},
};
