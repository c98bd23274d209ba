/*
 * cmd_observe.c - the runtime commands of the giulia CLI (see cli.h and
 * docs/CLI.md "Runtime commands"): `pulse`, `top` and `trace`, one-shot
 * observations of a live node through src/observe/observe.h, and `process`
 * (src/observe/inspect.h). The other views of a node are in cmd_inspect.c;
 * what both share is in cmd_observe_int.h.
 *
 * Exit codes: 0, 1 (the command failed), 2 (usage), and the node errors of
 * cli_exit_code_for(). The cookie is passed through, never printed.
 */
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
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
#include "base/json_read.h"
#include "base/modname.h"
#include "base/str.h"
#include "base/table.h"
#include "cli/cli.h"
#include "cli/cmd_observe_int.h"
#include "observe/dist.h"
#include "observe/inspect.h"
#include "observe/observe.h"
#include "observe/snapshot_view.h"

#define MAX_TRACE_MODULES 64

int cli_obs_usage_error(const char *cmd, const char *what)
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

int cli_obs_parse_args(const char *cmd, int argc, char **argv, struct observe_args *a)
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
		} else if (strcmp(arg, "--values") == 0 && strcmp(cmd, "process") == 0) {
			a->values = true;
		} else if (strcmp(arg, "--state") == 0 && strcmp(cmd, "process") == 0) {
			a->state = true;
		} else if (strcmp(arg, "--state-timeout") == 0 && strcmp(cmd, "process") == 0) {
			rc = int_option(cmd, arg, next, 1, OBS_PROCESS_STATE_TIMEOUT_MAX,
			                &a->state_timeout_ms);
			i++;
		} else if (strcmp(arg, "--depth") == 0 && strcmp(cmd, "apps") == 0) {
			rc = int_option(cmd, arg, next, 1, OBS_APPS_DEPTH_MAX, &a->depth);
			i++;
		} else if (strcmp(arg, "--width") == 0 && strcmp(cmd, "apps") == 0) {
			rc = int_option(cmd, arg, next, 1, OBS_APPS_WIDTH_MAX, &a->width);
			i++;
		} else if (strcmp(arg, "--keys") == 0 && strcmp(cmd, "process") == 0) {
			rc = int_option(cmd, arg, next, 1, OBS_PROCESS_KEYS_MAX, &a->keys);
			i++;
		} else if (strcmp(arg, "--messages") == 0 && strcmp(cmd, "process") == 0) {
			rc = int_option(cmd, arg, next, 1, OBS_PROCESS_MESSAGES_MAX, &a->messages);
			i++;
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
				return cli_obs_usage_error(cmd, "--cookie needs a value");
			a->cookie = next;
			i++;
		} else if (strcmp(arg, "--cookie-file") == 0) {
			if (!next)
				return cli_obs_usage_error(cmd, "--cookie-file needs a file");
			a->cookie_file = next;
			i++;
		} else if (strcmp(arg, "--by") == 0) {
			if (!next)
				return cli_obs_usage_error(
				    cmd, "--by needs reductions, memory or mailbox");
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
			a->top_n_set = true;
			i++;
		} else if (arg[0] == '-' && arg[1] != '\0') {
			char what[300];
			snprintf(what, sizeof(what), "unknown option '%.200s'", arg);
			return cli_obs_usage_error(cmd, what);
		} else if (positional == 0) {
			a->node = arg;
			positional++;
		} else if (positional == 1 && strcmp(cmd, "trace") == 0) {
			a->modules = arg;
			positional++;
		} else if (positional == 1 &&
		           (strcmp(cmd, "process") == 0 || strcmp(cmd, "apps") == 0)) {
			a->who = arg;
			positional++;
		} else {
			return cli_obs_usage_error(cmd, "too many arguments");
		}
		if (rc != 0)
			return rc;
	}
	if (!a->node)
		return cli_obs_usage_error(
		    cmd, "which node? give NODE as name@host (or name on this host)");
	if (cli_node_name(a->node, a->node_buf, sizeof(a->node_buf)) != 0)
		return cli_obs_usage_error(cmd, "not a node name");
	a->node = a->node_buf;
	char prog[32];
	snprintf(prog, sizeof(prog), "giulia %s", cmd);
	int crc = cli_cookie(prog, a->cookie, a->cookie_file, a->cookie_buf, sizeof(a->cookie_buf),
	                     &a->cookie);
	if (crc)
		return crc;
	if (strcmp(cmd, "trace") == 0 && (!a->modules || !*a->modules))
		return cli_obs_usage_error(cmd, "which modules? give MOD[,MOD...]");
	if (strcmp(cmd, "process") == 0 && (!a->who || !*a->who))
		return cli_obs_usage_error(
		    cmd, "which process? give a pid (<0.123.0>) or a registered name");
	if ((a->depth || a->width) && !a->who)
		return cli_obs_usage_error(cmd, "--depth and --width go with an application");
	if (a->state_timeout_ms && !a->state)
		return cli_obs_usage_error(cmd, "--state-timeout goes with --state");
	if ((a->interval_ms || a->count) && !a->watch)
		return cli_obs_usage_error(cmd, "--interval and --count go with --watch");
	if (strcmp(cmd, "ets") == 0) {
		if (a->by && strcmp(a->by, "memory") != 0 && strcmp(a->by, "size") != 0)
			return cli_obs_usage_error(cmd, "--by takes memory or size");
	} else if (a->by && strcmp(a->by, "reductions") != 0 && strcmp(a->by, "memory") != 0 &&
	           strcmp(a->by, "mailbox") != 0) {
		return cli_obs_usage_error(cmd, "--by takes reductions, memory or mailbox");
	}
	return 0;
}

int cli_obs_node_error(const char *cmd, const char *node, int rc)
{
	const char *hint = dist_error_hint(rc);
	fprintf(stderr, "giulia %s: cannot observe %s: %s%s%s\n", cmd, node, gi_strerror(rc),
	        *hint ? "; " : "", hint);
	return cli_exit_code_for(rc);
}

void cli_obs_print_json(json_t *v)
{
	char *text = json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (text) {
		puts(text);
		free(text);
	}
}

const char *cli_obs_str_or(json_t *v, const char *fallback)
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
	if (v->top_carried)
		gi_buf_printf(
		    out,
		    "process lists: the last scan's (to keep within its budget the observer "
		    "scans every %.0f snapshots)\n",
		    v->observer.scan_every);
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

/* ---- giulia process ---- */

void cli_obs_view_line(struct gi_buf *out, int width, const char *fmt, ...)
{
	char line[2048], cut[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (width > 8 && gi_fmt_width(line) > (size_t)width) {
		gi_fmt_elide_middle(line, (size_t)width, cut, sizeof(cut));
		gi_buf_printf(out, "%s\n", cut);
	} else {
		gi_buf_printf(out, "%s\n", line);
	}
}

/* "pid (name)" of an {id, name} entry, the name written as everywhere. */
static void process_ref(json_t *e, char *out, size_t size)
{
	const char *id = json_string_value(json_object_get(e, "id"));
	const char *name = json_string_value(json_object_get(e, "name"));
	char shown[512] = "";
	if (name)
		gi_fmt_registered_name(name, shown, sizeof(shown));
	if (id && name)
		snprintf(out, size, "%s (%s)", id, shown);
	else
		snprintf(out, size, "%s", id ? id : name ? shown : "?");
}

/* A list of {id, name} entries on one line after `label`, with its count. */
static void process_refs(struct gi_buf *out, int width, const char *label, json_t *list,
                         double total)
{
	struct gi_buf line;
	gi_buf_init(&line, 0);
	size_t i;
	json_t *e;
	json_array_foreach(list, i, e)
	{
		char ref[700];
		process_ref(e, ref, sizeof(ref));
		const char *kind = json_string_value(json_object_get(e, "kind"));
		gi_buf_printf(&line, "%s%s%s%s", i ? ", " : "",
		              kind && strcmp(kind, "process") ? kind : "",
		              kind && strcmp(kind, "process") ? " " : "", ref);
	}
	if (total > (double)json_array_size(list))
		gi_buf_printf(&line, ", ... (%zu of %.0f shown)", json_array_size(list), total);
	cli_obs_view_line(out, width, "%-16s%s", label,
	                  json_array_size(list) ? gi_buf_str(&line) : "none");
	gi_buf_destroy(&line);
}

/* The process view (`giulia process`, and Enter in `top --watch`) into
 * `out`, lines cut to `width` columns. */
static void process_render(json_t *p, struct gi_buf *out, int width)
{
	char name[512] = "", fn[1024], a[GI_FMT_NUM_MAX], b[GI_FMT_NUM_MAX], c[GI_FMT_NUM_MAX],
	     d[GI_FMT_NUM_MAX];
	const char *reg = json_string_value(json_object_get(p, "registered_name"));
	if (reg)
		gi_fmt_registered_name(reg, name, sizeof(name));
	cli_obs_view_line(
	    out, width, "process %s%s%s%s on %s%s", cli_obs_str_or(json_object_get(p, "pid"), "?"),
	    reg ? " (" : "", name, reg ? ")" : "", cli_obs_str_or(json_object_get(p, "node"), "?"),
	    json_is_false(json_object_get(p, "alive")) ? "  [exited during the window]" : "");
	cli_obs_view_line(out, width, "%-16s%s", "status",
	                  cli_obs_str_or(json_object_get(p, "status"), "?"));
	gi_fmt_mfa(cli_obs_str_or(json_object_get(p, "current_function"), "?"), fn, sizeof(fn));
	cli_obs_view_line(out, width, "%-16s%s", "executing in", fn);
	const char *plc = json_string_value(json_object_get(p, "proc_lib_initial_call"));
	gi_fmt_mfa(plc ? plc : cli_obs_str_or(json_object_get(p, "initial_call"), "?"), fn,
	           sizeof(fn));
	cli_obs_view_line(out, width, "%-16s%s%s", "initial call", fn, plc ? " (proc_lib)" : "");
	json_t *anc = json_object_get(p, "ancestors");
	if (json_array_size(anc) > 0) {
		struct gi_buf l;
		gi_buf_init(&l, 0);
		size_t i;
		json_t *e;
		json_array_foreach(anc, i, e)
		{
			char n[512];
			gi_fmt_registered_name(cli_obs_str_or(e, "?"), n, sizeof(n));
			gi_buf_printf(&l, "%s%s", i ? ", " : "", n);
		}
		cli_obs_view_line(out, width, "%-16s%s", "ancestors", gi_buf_str(&l));
		gi_buf_destroy(&l);
	}
	gi_fmt_bytes(gi_json_num_or(p, "memory_bytes", 0), a, sizeof(a));
	gi_fmt_bytes(gi_json_num_or(p, "heap_bytes", 0), b, sizeof(b));
	gi_fmt_bytes(gi_json_num_or(p, "total_heap_bytes", 0), c, sizeof(c));
	gi_fmt_bytes(gi_json_num_or(p, "stack_bytes", 0), d, sizeof(d));
	cli_obs_view_line(out, width, "%-16s%s  heap %s  total heap %s  stack %s", "memory", a, b,
	                  c, d);
	json_t *bins = json_object_get(p, "binaries");
	gi_fmt_count(gi_json_num_or(bins, "count", 0), a, sizeof(a));
	gi_fmt_bytes(gi_json_num_or(bins, "bytes", 0), b, sizeof(b));
	cli_obs_view_line(out, width, "%-16s%s refc binaries, %s", "binaries", a, b);
	gi_fmt_count(gi_json_num_or(p, "reductions", 0), a, sizeof(a));
	gi_fmt_rate(gi_json_num_or(p, "reductions_per_second", 0), b, sizeof(b));
	cli_obs_view_line(out, width, "%-16s%s  (%s over %.0f ms)", "reductions", a, b,
	                  gi_json_num_or(p, "window_ms", 0));
	gi_fmt_count(gi_json_num_or(p, "message_queue_len", 0), a, sizeof(a));
	cli_obs_view_line(out, width, "%-16s%s", "message queue", a);
	char gl[700];
	process_ref(json_object_get(p, "group_leader"), gl, sizeof(gl));
	cli_obs_view_line(out, width, "%-16s%s", "group leader", gl);
	cli_obs_view_line(
	    out, width, "%-16strap_exit %s  priority %s  minor gcs %.0f  fullsweep_after %.0f",
	    "flags", json_is_true(json_object_get(p, "trap_exit")) ? "true" : "false",
	    cli_obs_str_or(json_object_get(p, "priority"), "?"), gi_json_num_or(p, "minor_gcs", 0),
	    gi_json_num_or(p, "fullsweep_after", 0));
	process_refs(out, width, "links", json_object_get(p, "links"),
	             gi_json_num_or(p, "links_count", 0));
	process_refs(out, width, "monitors", json_object_get(p, "monitors"),
	             gi_json_num_or(p, "monitors_count", 0));
	process_refs(out, width, "monitored by", json_object_get(p, "monitored_by"),
	             gi_json_num_or(p, "monitored_by_count", 0));
	gi_buf_puts(out, "stack:\n");
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(p, "stack"), i, e)
	{
		gi_fmt_mfa(cli_obs_str_or(json_object_get(e, "function"), "?"), fn, sizeof(fn));
		const char *file = json_string_value(json_object_get(e, "file"));
		if (file)
			cli_obs_view_line(out, width, "  %s  %s:%.0f", fn, file,
			                  gi_json_num_or(e, "line", 0));
		else
			cli_obs_view_line(out, width, "  %s", fn);
	}
	json_t *dict = json_object_get(p, "dictionary");
	json_t *entries = json_object_get(dict, "entries");
	cli_obs_view_line(out, width, "dictionary: %.0f keys%s", gi_json_num_or(dict, "count", 0),
	                  gi_json_num_or(dict, "count", 0) > (double)json_array_size(entries)
	                      ? " (the first shown)"
	                      : "");
	json_array_foreach(entries, i, e)
	{
		json_t *v = json_object_get(e, "value");
		if (v)
			cli_obs_view_line(out, width, "  %s => %s",
			                  cli_obs_str_or(json_object_get(e, "key"), "?"),
			                  cli_obs_str_or(v, "?"));
		else
			cli_obs_view_line(out, width, "  %s",
			                  cli_obs_str_or(json_object_get(e, "key"), "?"));
	}
	json_t *msgs = json_object_get(p, "messages");
	if (json_is_object(msgs)) {
		if (json_is_true(json_object_get(msgs, "refused")))
			cli_obs_view_line(
			    out, width,
			    "messages: not read (the queue is longer than %d: reading it "
			    "would copy it all)",
			    OBS_PROCESS_COPY_MAX);
		else
			gi_buf_printf(out, "messages (the first %zu):\n",
			              json_array_size(json_object_get(msgs, "shown")));
		json_array_foreach(json_object_get(msgs, "shown"), i, e)
		{
			cli_obs_view_line(out, width, "  %s", cli_obs_str_or(e, "?"));
		}
	}
	json_t *st = json_object_get(p, "state");
	if (json_is_object(st)) {
		const char *err = json_string_value(json_object_get(st, "error"));
		if (err)
			cli_obs_view_line(out, width, "state: not read: %s", err);
		else
			gi_buf_printf(out, "state (sys:get_status):\n  %s\n",
			              cli_obs_str_or(json_object_get(st, "text"), "?"));
	}
}

/* `giulia process NODE PID|NAME` */
static int run_process(int argc, char **argv)
{
	struct observe_args a;
	int rc = cli_obs_parse_args("process", argc, argv, &a);
	if (rc != 0)
		return rc < 0 ? CLI_EXIT_OK : rc;
	struct obs_process_request r = {
	    .who = a.who,
	    .window_ms = a.window_ms,
	    .keys_max = a.keys,
	    .dictionary_values = a.values,
	    .messages = a.messages,
	    .state = a.state,
	    .state_timeout_ms = a.state_timeout_ms,
	};
	char err[256];
	if (obs_process_request_check(&r, err, sizeof(err)) != 0)
		return cli_obs_usage_error("process", err);
	struct obs_target t = {a.node, a.cookie, a.timeout_ms};
	json_t *p = NULL;
	rc = obs_process(&t, &r, &p);
	if (rc == GI_ENOTFOUND) {
		fprintf(stderr, "giulia process: no process %s on %s (it may have exited)\n", a.who,
		        a.node);
		return CLI_EXIT_FAILURE;
	}
	if (rc != 0)
		return cli_obs_node_error("process", a.node, rc);
	if (a.json) {
		cli_obs_print_json(p);
	} else {
		struct gi_buf b;
		gi_buf_init(&b, 0);
		process_render(p, &b, isatty(STDOUT_FILENO) ? cli_columns() : 0);
		fputs(gi_buf_str(&b), stdout);
		gi_buf_destroy(&b);
	}
	json_decref(p);
	return CLI_EXIT_OK;
}

/* ---- progress on stderr while a measurement runs ---- */

static void *progress_main(void *arg)
{
	struct cli_obs_progress *p = arg;
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

void cli_obs_progress_start(struct cli_obs_progress *p, const char *what, int ms, bool json)
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

void cli_obs_progress_stop(struct cli_obs_progress *p)
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

/* What the keys of `top --watch` changed. */
struct watch_ui {
	int metric;
	bool paused;
	int sel;         /* the selected row (a terminal only) */
	bool open;       /* Enter: open the selected process */
	bool inspecting; /* a process is on screen: the next key goes back */
	json_t *process; /* the process on screen (inspecting) */
};

/* Writes `text` to the terminal from its home, each line clearing what the
 * previous frame left after it, at most rows - 1 lines. */
static void watch_paint(const char *text, int rows)
{
	fputs("\x1b[H", stdout);
	int line = 0;
	for (const char *p = text; *p && line < rows - 1; line++) {
		size_t n = strcspn(p, "\n");
		fwrite(p, 1, n, stdout);
		fputs("\x1b[K\r\n", stdout);
		p += n;
		if (*p)
			p++;
	}
	fputs("\x1b[J", stdout);
	fflush(stdout);
}

/* One frame: the pulse header, the key line, the processes (in a terminal
 * the selected one in reverse video); or the process opened with Enter. */
static void watch_frame(const struct obs_view *v, struct watch_ui *ui, bool tty, int rows,
                        int interval_ms)
{
	struct gi_buf b;
	gi_buf_init(&b, 0);
	if (tty && ui->inspecting && ui->process) {
		gi_buf_puts(&b, "keys: any key goes back to the list  q quit\n");
		process_render(ui->process, &b, cli_columns());
		watch_paint(gi_buf_str(&b), rows);
		gi_buf_destroy(&b);
		return;
	}
	pulse_header_render(v, &b);
	char title[256];
	snprintf(title, sizeof(title), "top by %s, every %.1f s%s", watch_metrics[ui->metric],
	         interval_ms / 1000.0, ui->paused ? "  [paused]" : "");
	if (tty)
		gi_buf_puts(&b, "keys: r reductions  m memory  b mailbox  s next  p pause  "
		                "up/down (j/k) select  Enter process  q quit\n");
	const struct obs_view_processes *list = watch_list(v, ui->metric);
	if (ui->sel >= (int)list->len)
		ui->sel = list->len > 0 ? (int)list->len - 1 : 0;
	struct gi_buf table;
	gi_buf_init(&table, 0);
	processes_render(list, title, &table);
	/* the title, the column header, then one line per process */
	int line = 0;
	for (const char *p = gi_buf_str(&table); *p; line++) {
		size_t n = strcspn(p, "\n");
		bool selected = tty && list->len > 0 && line == ui->sel + 2;
		gi_buf_printf(&b, "%s%.*s%s\n", selected ? "\x1b[7m" : "", (int)n, p,
		              selected ? "\x1b[27m" : "");
		p += n;
		if (*p)
			p++;
	}
	gi_buf_destroy(&table);
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
	watch_paint(gi_buf_str(&b), rows);
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

/* Reads the rest of an escape sequence (arrow keys: ESC [ A / B) when it
 * is there; returns 'k' for up, 'j' for down, else 0. */
static int watch_arrow(void)
{
	char seq[2] = {0, 0};
	struct pollfd pfd = {STDIN_FILENO, POLLIN, 0};
	if (poll(&pfd, 1, 20) <= 0 || read(STDIN_FILENO, &seq[0], 1) != 1 || seq[0] != '[')
		return 0;
	if (poll(&pfd, 1, 20) <= 0 || read(STDIN_FILENO, &seq[1], 1) != 1)
		return 0;
	return seq[1] == 'A' ? 'k' : seq[1] == 'B' ? 'j' : 0;
}

/* Waits up to `ms` answering keys (a terminal) or sleeping (a pipe); returns
 * true when the frame must be drawn again at once. */
static bool watch_wait(bool tty, int64_t ms, struct watch_ui *ui)
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
		int arrow = c == 0x1b ? watch_arrow() : 0;
		if (arrow)
			c = (char)arrow;
		if (c == 'q' || c == 'Q' || c == 3) {
			watch_stop = 1;
			continue;
		}
		if (ui->inspecting) {
			/* any other key goes back to the list */
			ui->inspecting = false;
			json_decref(ui->process);
			ui->process = NULL;
			return true;
		}
		int m = watch_key_metric(c, ui->metric);
		if (c == 'p' || c == ' ') {
			ui->paused = !ui->paused;
			return true;
		} else if (c == 'j' || c == 'k') {
			ui->sel += c == 'j' ? 1 : (ui->sel > 0 ? -1 : 0);
			return true;
		} else if (c == '\r' || c == '\n') {
			ui->open = true;
			return true;
		} else if (m >= 0) {
			ui->metric = m;
			return true;
		}
	}
	return false;
}

/* watch_wait for `wait` ms, keeping the watch's session alive meanwhile
 * (its lease is renewed and the connection's ticks answered every few
 * seconds, a pause included). */
static bool watch_wait_alive(struct obs_watch *w, bool tty, int64_t wait, struct watch_ui *ui)
{
	int64_t until = gi_clock_mono_ms() + wait;
	for (;;) {
		int64_t left = until - gi_clock_mono_ms();
		bool key = watch_wait(tty, left < 2000 ? (left > 0 ? left : 0) : 2000, ui);
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

/* Enter on a row: the selected process, read over the watch's connection
 * (one bounded call on the node). */
static void watch_open(struct obs_watch *w, const struct obs_view *v, struct watch_ui *ui)
{
	ui->open = false;
	const struct obs_view_processes *list = watch_list(v, ui->metric);
	if (!w || ui->sel < 0 || ui->sel >= (int)list->len || !list->items[ui->sel].pid)
		return;
	struct obs_process_request r = {.who = list->items[ui->sel].pid, .keys_max = 20};
	json_t *p = NULL;
	if (obs_watch_process(w, &r, &p) != 0) {
		/* it exited meanwhile: say so in place of the view */
		p = json_pack("{s:s, s:s, s:b}", "pid", list->items[ui->sel].pid, "status",
		              "exited (or not readable)", "alive", 0);
	}
	json_decref(ui->process);
	ui->process = p;
	ui->inspecting = true;
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
	struct watch_ui ui = {0};
	ui.metric = a->by && strcmp(a->by, "memory") == 0    ? 1
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
	bool have = false, fresh = true;
	int rc = 0, frames = 0;
	while (!watch_stop) {
		int rows = 24;
		struct winsize ws;
		if (tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0)
			rows = ws.ws_row;
		if (have && ui.open)
			watch_open(w, &v, &ui);
		if (!ui.paused && !ui.inspecting && fresh) {
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
			watch_frame(&v, &ui, tty, rows, interval);
		if (a->count && frames >= a->count)
			break;
		int64_t wait = ui.paused || ui.inspecting ? 3600000 : interval - window;
		/* a key redraws the last snapshot at once; the interval fetches a new one */
		fresh = !watch_wait_alive(w, tty, wait > 0 ? wait : 0, &ui);
	}
	json_decref(ui.process);
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
		return cli_obs_node_error("top", a->node, rc);
	return CLI_EXIT_OK;
}

static int run_pulse_or_top(const char *cmd, int argc, char **argv)
{
	struct observe_args a;
	int rc = cli_obs_parse_args(cmd, argc, argv, &a);
	if (rc != 0)
		return rc < 0 ? CLI_EXIT_OK : rc;
	if (a.watch)
		return run_top_watch(&a);
	struct obs_target t = {a.node, a.cookie, a.timeout_ms};
	json_t *snap = NULL;
	bool top = strcmp(cmd, "top") == 0;
	const char *by = a.by ? a.by : "reductions";
	const char *key = strcmp(by, "mailbox") == 0 ? "message_queue" : by;
	struct cli_obs_progress prog;
	cli_obs_progress_start(&prog, "measuring", a.window_ms ? a.window_ms : 1000, a.json);
	rc = top ? obs_top(&t, a.window_ms, a.top_n, key, &snap)
	         : obs_pulse(&t, a.window_ms, a.top_n, &snap);
	cli_obs_progress_stop(&prog);
	if (rc != 0)
		return cli_obs_node_error(cmd, a.node, rc);
	if (a.json) {
		if (top) {
			json_t *out = json_object();
			json_object_set(out, "node", json_object_get(snap, "node"));
			json_object_set(out, "window_ms", json_object_get(snap, "window_ms"));
			json_object_set_new(out, "by", json_string(by));
			json_object_set(
			    out, "processes",
			    json_object_get(json_object_get(snap, "top_processes"), key));
			cli_obs_print_json(out);
			json_decref(out);
		} else {
			cli_obs_print_json(snap);
		}
	} else if (top) {
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
	int rc = cli_obs_parse_args("trace", argc, argv, &a);
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
			return cli_obs_usage_error("trace", "at most 64 modules at once");
		}
		mods[n++] = tok;
	}
	mods[n] = NULL;
	if (n == 0) {
		gi_free(list);
		return cli_obs_usage_error("trace", "which modules? give MOD[,MOD...]");
	}
	struct obs_target t = {a.node, a.cookie, a.timeout_ms};
	json_t *out = NULL;
	struct cli_obs_progress prog;
	cli_obs_progress_start(&prog, "tracing", a.window_ms > 0 ? a.window_ms : 5000, a.json);
	rc = obs_trace_timed(&t, mods, a.window_ms > 0 ? a.window_ms : 5000, a.call_time, &out);
	cli_obs_progress_stop(&prog);
	gi_free(list);
	if (rc != 0)
		return cli_obs_node_error("trace", a.node, rc);
	json_t *errors = json_object_get(out, "errors");
	bool none_traced = json_array_size(json_object_get(out, "modules")) == 0;
	if (a.json) {
		cli_obs_print_json(out);
	} else {
		printf("%s: calls per function over %.0f ms\n",
		       cli_obs_str_or(json_object_get(out, "node"), "?"),
		       gi_json_num_or(out, "window_ms", 0));
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
			gi_fmt_count(gi_json_num_or(c, "count", 0), count, sizeof(count));
			gi_fmt_function(cli_obs_str_or(json_object_get(c, "module"), "?"),
			                cli_obs_str_or(json_object_get(c, "function"), "?"),
			                (long long)gi_json_num_or(c, "arity", 0), fn, sizeof(fn));
			double timed = gi_json_num_or(c, "time_calls", 0),
			       us = gi_json_num_or(c, "time_us", 0);
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
			       gi_json_num_or(ct, "flagged", 0), gi_json_num_or(ct, "flag_cap", 0),
			       gi_json_num_or(ct, "refused", 0));
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
     "refresh in place, full screen (keys: r, m, b metric; s next; p pause; up/down "
     "or j/k select a row, Enter opens its process as `giulia process` shows it; q "
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

static const struct cli_option process_options[] = {
    {"--window MS", "reductions per second measured over it (at most 5000)", "500"},
    {"--keys N", "dictionary keys shown (at most 1000)", "100"},
    {"--values", "the dictionary's values too, each cut at 400 characters", NULL},
    {"--messages N",
     "show the first N messages of the queue (at most 100; not read when the queue is "
     "longer than 10000)",
     NULL},
    {"--state",
     "the state of an OTP process (sys:get_status), cut at 4000 characters; only for "
     "proc_lib processes",
     NULL},
    {"--state-timeout MS", "with --state: how long to wait for the process (at most 5000)", "1000"},
    {"--json", "print the process as JSON (raw numbers)", NULL},
    {NULL, NULL, NULL},
};

static const struct cli_help process_help = {
    "One process of a live node, as recon:info/1 and observer_cli's process view show it: "
    "status, where it executes and its stack, initial call (the proc_lib one for OTP "
    "processes), memory, reductions per second over a short window, message queue length, "
    "links, monitors and monitored_by with names, group leader, and the dictionary's keys. "
    "Message contents, dictionary values and the OTP state are read only when asked, each "
    "capped; the state with a timeout, so a stuck process costs the wait, never a hang. "
    "PID is <0.123.0>; NAME a registered name, Elixir (Nexus.Registry) or Erlang (logger) "
    "spelling, compared with the node's names (no atom is created). Nothing is loaded.",
    process_options, cli_node_options, CLI_EXITS_NODE,
    "giulia process shop@localhost '<0.123.0>'\n"
    "giulia process shop Shop.Cache --values --messages 5\n"
    "giulia process shop Shop.Cache --state --state-timeout 2000"};

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
    {"process",
     "NODE PID|NAME [--window MS] [--keys N] [--values] [--messages N] [--state "
     "[--state-timeout MS]] [--cookie C | --cookie-file FILE] [--timeout MS] [--json]",
     "one process of a live node (recon:info)", run_process, &process_help},
    {NULL, NULL, NULL, NULL, NULL},
};
