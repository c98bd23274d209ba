/*
 * cmd_inspect.c - the runtime views of the giulia CLI (see cli.h and
 * docs/CLI.md "Runtime commands"): `ets`, `ports`, `apps`, `alloc` and
 * `binleak`, each one read of a live node through src/observe/inspect.h.
 *
 * Exit codes: 0, 1 (the command failed), 2 (usage), and the node errors of
 * cli_exit_code_for(). The cookie is passed through, never printed.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/fmt.h"
#include "base/json_read.h"
#include "base/modname.h"
#include "base/str.h"
#include "base/table.h"
#include "cli/cli.h"
#include "cli/cmd_observe_int.h"
#include "observe/inspect.h"

/* ---- giulia ets ---- */

/* "rc" / "wc" flags of a table, or "-". */
static void ets_concurrency(json_t *t, char *out, size_t size)
{
	json_t *w = json_object_get(t, "write_concurrency");
	bool rc = json_is_true(json_object_get(t, "read_concurrency"));
	bool wc = json_is_true(w) || (json_is_string(w) && strcmp(json_string_value(w), "false"));
	snprintf(out, size, "%s%s%s", rc ? "read" : "", rc && wc ? "," : "",
	         wc ? (json_is_string(w) ? json_string_value(w) : "write") : "");
	if (!*out)
		snprintf(out, size, "-");
}

static void ets_render(json_t *e, struct gi_buf *out)
{
	static const struct gi_table_column cols[] = {
	    {"MEMORY", GI_COL_RIGHT, 0, 0},
	    {"SIZE", GI_COL_RIGHT, 0, 0},
	    {"TABLE", GI_COL_ELIDE, 0, 16},
	    {"OWNER", GI_COL_ELIDE, 1, 12},
	    {"TYPE", 0, 2, 0},
	    {"PROTECTION", 0, 3, 0},
	    {"CONCURRENCY", 0, 4, 0},
	};
	char total[GI_FMT_NUM_MAX], count[GI_FMT_NUM_MAX];
	gi_fmt_bytes(gi_json_num_or(e, "memory_bytes", 0), total, sizeof(total));
	gi_fmt_count(gi_json_num_or(e, "count", 0), count, sizeof(count));
	gi_buf_printf(out, "%s: %s ETS tables, %s in all; the %zu largest by %s:\n",
	              cli_obs_str_or(json_object_get(e, "node"), "?"), count, total,
	              json_array_size(json_object_get(e, "tables")),
	              cli_obs_str_or(json_object_get(e, "sort"), "memory"));
	if (gi_json_num_or(e, "scanned", 0) < gi_json_num_or(e, "count", 0))
		gi_buf_printf(out, "(the first %.0f tables looked at)\n",
		              gi_json_num_or(e, "scanned", 0));
	struct gi_table *t = gi_table_new(cols, 7, 2);
	size_t i;
	json_t *row;
	json_array_foreach(json_object_get(e, "tables"), i, row)
	{
		char mem[GI_FMT_NUM_MAX], size[GI_FMT_NUM_MAX], name[600], owner[600], conc[64];
		gi_fmt_bytes(gi_json_num_or(row, "memory_bytes", 0), mem, sizeof(mem));
		gi_fmt_count(gi_json_num_or(row, "size", 0), size, sizeof(size));
		const char *n = cli_obs_str_or(json_object_get(row, "name"), "?");
		const char *id = cli_obs_str_or(json_object_get(row, "id"), "?");
		char shown[512];
		gi_fmt_registered_name(n, shown, sizeof(shown));
		if (json_is_true(json_object_get(row, "named_table")))
			snprintf(name, sizeof(name), "%s", shown);
		else
			snprintf(name, sizeof(name), "%s %s", shown, id);
		const char *on = json_string_value(json_object_get(row, "owner_name"));
		if (on)
			gi_fmt_registered_name(on, owner, sizeof(owner));
		else
			snprintf(owner, sizeof(owner), "%s",
			         cli_obs_str_or(json_object_get(row, "owner"), "?"));
		ets_concurrency(row, conc, sizeof(conc));
		const char *cells[] = {mem,
		                       size,
		                       name,
		                       owner,
		                       cli_obs_str_or(json_object_get(row, "type"), "?"),
		                       cli_obs_str_or(json_object_get(row, "protection"), "?"),
		                       conc};
		gi_table_add(t, cells);
	}
	gi_table_render(t, cli_columns(), out);
	gi_table_free(t);
}

/* `giulia ets NODE` */
static int run_ets(int argc, char **argv)
{
	struct observe_args a;
	int rc = cli_obs_parse_args("ets", argc, argv, &a);
	if (rc != 0)
		return rc < 0 ? CLI_EXIT_OK : rc;
	struct obs_ets_request r = {a.by, a.top_n_set ? a.top_n : 0};
	struct obs_target t = {a.node, a.cookie, a.timeout_ms};
	json_t *e = NULL;
	rc = obs_ets(&t, &r, &e);
	if (rc != 0)
		return cli_obs_node_error("ets", a.node, rc);
	if (a.json) {
		cli_obs_print_json(e);
	} else {
		struct gi_buf b;
		gi_buf_init(&b, 0);
		ets_render(e, &b);
		fputs(gi_buf_str(&b), stdout);
		gi_buf_destroy(&b);
	}
	json_decref(e);
	return CLI_EXIT_OK;
}

/* ---- giulia alloc, giulia binleak ---- */

static void usage_pct(double u, char *out, size_t size)
{
	snprintf(out, size, "%.0f%%", u * 100.0);
}

static void alloc_render(json_t *e, struct gi_buf *out)
{
	static const struct gi_table_column types_cols[] = {
	    {"ALLOCATOR", GI_COL_ELIDE, 0, 12}, {"INST", GI_COL_RIGHT, 3, 0},
	    {"CARRIERS", GI_COL_RIGHT, 0, 0},   {"BLOCKS", GI_COL_RIGHT, 0, 0},
	    {"USED", GI_COL_RIGHT, 0, 0},       {"SBCS USED", GI_COL_RIGHT, 2, 0},
	    {"MBCS USED", GI_COL_RIGHT, 1, 0},
	};
	static const struct gi_table_column rows_cols[] = {
	    {"ALLOCATOR", GI_COL_ELIDE, 0, 12}, {"UNUSED", GI_COL_RIGHT, 0, 0},
	    {"SBCS", GI_COL_RIGHT, 1, 0},       {"SBCS USED", GI_COL_RIGHT, 0, 0},
	    {"MBCS", GI_COL_RIGHT, 1, 0},       {"MBCS USED", GI_COL_RIGHT, 0, 0},
	};
	char car[GI_FMT_NUM_MAX], blk[GI_FMT_NUM_MAX], pct[16];
	gi_fmt_bytes(gi_json_num_or(e, "carriers_bytes", 0), car, sizeof(car));
	gi_fmt_bytes(gi_json_num_or(e, "blocks_bytes", 0), blk, sizeof(blk));
	usage_pct(gi_json_num_or(e, "carriers_bytes", 0) > 0
	              ? gi_json_num_or(e, "blocks_bytes", 0) /
	                    gi_json_num_or(e, "carriers_bytes", 0)
	              : 1.0,
	          pct, sizeof(pct));
	gi_buf_printf(out,
	              "%s: %.0f allocators, %.0f instances: carriers %s, blocks in use %s (%s "
	              "used)\n",
	              cli_obs_str_or(json_object_get(e, "node"), "?"),
	              gi_json_num_or(e, "allocators", 0), gi_json_num_or(e, "instances", 0), car,
	              blk, pct);
	struct gi_table *t = gi_table_new(types_cols, 7, 2);
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(e, "types"), i, r)
	{
		char inst[GI_FMT_NUM_MAX], c[GI_FMT_NUM_MAX], b[GI_FMT_NUM_MAX], u[16], su[16],
		    mu[16];
		gi_fmt_count(gi_json_num_or(r, "instances", 0), inst, sizeof(inst));
		gi_fmt_bytes(gi_json_num_or(r, "carriers_bytes", 0), c, sizeof(c));
		gi_fmt_bytes(gi_json_num_or(r, "blocks_bytes", 0), b, sizeof(b));
		usage_pct(gi_json_num_or(r, "usage", 0), u, sizeof(u));
		double sc = gi_json_num_or(r, "sbcs_carriers_bytes", 0),
		       mc = gi_json_num_or(r, "mbcs_carriers_bytes", 0);
		usage_pct(sc > 0 ? gi_json_num_or(r, "sbcs_blocks_bytes", 0) / sc : 1.0, su,
		          sizeof(su));
		usage_pct(mc > 0 ? gi_json_num_or(r, "mbcs_blocks_bytes", 0) / mc : 1.0, mu,
		          sizeof(mu));
		const char *cells[] = {cli_obs_str_or(json_object_get(r, "allocator"), "?"),
		                       inst,
		                       c,
		                       b,
		                       u,
		                       sc > 0 ? su : "-",
		                       mc > 0 ? mu : "-"};
		gi_table_add(t, cells);
	}
	gi_table_render(t, cli_columns(), out);
	gi_table_free(t);
	gi_buf_puts(out, "\ninstances with the most carrier bytes unused "
	                 "(recon_alloc:fragmentation):\n");
	t = gi_table_new(rows_cols, 6, 2);
	json_array_foreach(json_object_get(e, "rows"), i, r)
	{
		char name[128], un[GI_FMT_NUM_MAX], sc[GI_FMT_NUM_MAX], mc[GI_FMT_NUM_MAX], su[16],
		    mu[16];
		snprintf(name, sizeof(name), "%.100s #%.0f",
		         cli_obs_str_or(json_object_get(r, "allocator"), "?"),
		         gi_json_num_or(r, "instance", 0));
		gi_fmt_bytes(gi_json_num_or(r, "unused_bytes", 0), un, sizeof(un));
		gi_fmt_bytes(gi_json_num_or(r, "sbcs_carriers_bytes", 0), sc, sizeof(sc));
		gi_fmt_bytes(gi_json_num_or(r, "mbcs_carriers_bytes", 0), mc, sizeof(mc));
		usage_pct(gi_json_num_or(r, "sbcs_usage", 0), su, sizeof(su));
		usage_pct(gi_json_num_or(r, "mbcs_usage", 0), mu, sizeof(mu));
		const char *cells[] = {name, un, sc, su, mc, mu};
		gi_table_add(t, cells);
	}
	gi_table_render(t, cli_columns(), out);
	gi_table_free(t);
	gi_buf_puts(out, "\nmseg_alloc cache hit rates (recon_alloc:cache_hit_rates):\n");
	json_array_foreach(json_object_get(e, "cache"), i, r)
	{
		char hits[GI_FMT_NUM_MAX], calls[GI_FMT_NUM_MAX], rate[16];
		gi_fmt_count(gi_json_num_or(r, "hits", 0), hits, sizeof(hits));
		gi_fmt_count(gi_json_num_or(r, "calls", 0), calls, sizeof(calls));
		usage_pct(gi_json_num_or(r, "hit_rate", 0), rate, sizeof(rate));
		gi_buf_printf(out, "  instance %.0f: %s hits of %s calls (%s)\n",
		              gi_json_num_or(r, "instance", 0), hits, calls, rate);
	}
	if (json_array_size(json_object_get(e, "cache")) == 0)
		gi_buf_puts(out, "  (no mseg_alloc on this node)\n");
}

static void binleak_render(json_t *e, struct gi_buf *out)
{
	static const struct gi_table_column cols[] = {
	    {"PID", 0, 0, 0},
	    {"FREED", GI_COL_RIGHT, 0, 0},
	    {"BEFORE", GI_COL_RIGHT, 1, 0},
	    {"AFTER", GI_COL_RIGHT, 0, 0},
	    {"BINARIES", GI_COL_RIGHT, 2, 0},
	    {"NAME / INITIAL CALL", GI_COL_ELIDE, 0, 16},
	};
	char freed[GI_FMT_NUM_MAX], b0[GI_FMT_NUM_MAX], b1[GI_FMT_NUM_MAX];
	gi_fmt_bytes(gi_json_num_or(e, "freed_bytes", 0), freed, sizeof(freed));
	gi_fmt_bytes(gi_json_num_or(e, "binary_before", 0), b0, sizeof(b0));
	gi_fmt_bytes(gi_json_num_or(e, "binary_after", 0), b1, sizeof(b1));
	gi_buf_printf(
	    out,
	    "%s: garbage collected %.0f of %.0f processes in %.0f ms%s; they freed %s "
	    "of refc binaries (binary memory %s -> %s)\n",
	    cli_obs_str_or(json_object_get(e, "node"), "?"), gi_json_num_or(e, "collected", 0),
	    gi_json_num_or(e, "count", 0), gi_json_num_or(e, "elapsed_ms", 0),
	    json_is_true(json_object_get(e, "cut")) ? " (time budget reached)" : "", freed, b0, b1);
	struct gi_table *t = gi_table_new(cols, 6, 2);
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(e, "processes"), i, r)
	{
		char f[GI_FMT_NUM_MAX], bb[GI_FMT_NUM_MAX], ab[GI_FMT_NUM_MAX], bins[64],
		    name[1024];
		gi_fmt_bytes(gi_json_num_or(r, "freed_bytes", 0), f, sizeof(f));
		gi_fmt_bytes(gi_json_num_or(r, "before_bytes", 0), bb, sizeof(bb));
		gi_fmt_bytes(gi_json_num_or(r, "after_bytes", 0), ab, sizeof(ab));
		snprintf(bins, sizeof(bins), "%.0f -> %.0f", gi_json_num_or(r, "before_count", 0),
		         gi_json_num_or(r, "after_count", 0));
		const char *rn = json_string_value(json_object_get(r, "registered_name"));
		if (rn)
			gi_fmt_registered_name(rn, name, sizeof(name));
		else
			gi_fmt_mfa(cli_obs_str_or(json_object_get(r, "initial_call"), "?"), name,
			           sizeof(name));
		const char *cells[] = {
		    cli_obs_str_or(json_object_get(r, "pid"), "?"), f, bb, ab, bins, name};
		gi_table_add(t, cells);
	}
	if (json_array_size(json_object_get(e, "processes")) == 0)
		gi_buf_puts(out, "  (none)\n");
	else
		gi_table_render(t, cli_columns(), out);
	gi_table_free(t);
}

/* `giulia alloc NODE` and `giulia binleak NODE` */
static int run_memory_view(const char *cmd, int argc, char **argv)
{
	struct observe_args a;
	int rc = cli_obs_parse_args(cmd, argc, argv, &a);
	if (rc != 0)
		return rc < 0 ? CLI_EXIT_OK : rc;
	bool leak = strcmp(cmd, "binleak") == 0;
	int n = a.top_n_set ? a.top_n : 0;
	if (n > (leak ? OBS_BINLEAK_LIMIT_MAX : OBS_ALLOC_LIMIT_MAX))
		return cli_obs_usage_error(cmd, leak ? "-n is at most 100" : "-n is at most 1000");
	struct obs_target t = {a.node, a.cookie, a.timeout_ms};
	json_t *e = NULL;
	if (leak)
		fprintf(stderr,
		        "giulia binleak: forcing a garbage collection of every process on %s\n",
		        a.node);
	rc = leak ? obs_binleak(&t, n, &e) : obs_alloc(&t, n, &e);
	if (rc != 0)
		return cli_obs_node_error(cmd, a.node, rc);
	if (a.json) {
		cli_obs_print_json(e);
	} else {
		struct gi_buf b;
		gi_buf_init(&b, 0);
		(leak ? binleak_render : alloc_render)(e, &b);
		fputs(gi_buf_str(&b), stdout);
		gi_buf_destroy(&b);
	}
	json_decref(e);
	return CLI_EXIT_OK;
}

static int run_alloc(int argc, char **argv)
{
	return run_memory_view("alloc", argc, argv);
}

static int run_binleak(int argc, char **argv)
{
	return run_memory_view("binleak", argc, argv);
}

/* ---- giulia ports ---- */

static void ports_render(json_t *e, struct gi_buf *out)
{
	static const struct gi_table_column cols[] = {
	    {"IN", GI_COL_RIGHT, 0, 0},
	    {"OUT", GI_COL_RIGHT, 0, 0},
	    {"PKTS IN", GI_COL_RIGHT, 4, 0},
	    {"PKTS OUT", GI_COL_RIGHT, 4, 0},
	    {"PORT", 0, 0, 0},
	    {"KIND", 0, 3, 0},
	    {"OWNER", GI_COL_ELIDE, 1, 12},
	    {"PEER / NAME", GI_COL_ELIDE, 2, 16},
	};
	char count[GI_FMT_NUM_MAX];
	gi_fmt_count(gi_json_num_or(e, "count", 0), count, sizeof(count));
	json_t *fds = json_object_get(e, "fds");
	gi_buf_printf(out, "%s: %s ports", cli_obs_str_or(json_object_get(e, "node"), "?"), count);
	if (json_is_number(json_object_get(fds, "used")))
		gi_buf_printf(out, ", %.0f file descriptors of %.0f",
		              gi_json_num_or(fds, "used", 0), gi_json_num_or(fds, "max", 0));
	gi_buf_puts(out, "; by kind:");
	const char *k;
	json_t *v;
	json_object_foreach(json_object_get(e, "kinds"), k, v)
	{
		gi_buf_printf(out, " %s %.0f", k, json_number_value(v));
	}
	if (gi_json_num_or(e, "observer_ports", 0) > 0)
		gi_buf_printf(out, " (the observer's own connection%s left out)",
		              gi_json_num_or(e, "observer_ports", 0) > 1 ? "s" : "");
	gi_buf_printf(out, "\nbytes and packets over %.0f ms, most bytes first:\n",
	              gi_json_num_or(e, "window_ms", 0));
	struct gi_table *t = gi_table_new(cols, 8, 2);
	size_t i;
	json_t *row;
	json_array_foreach(json_object_get(e, "ports"), i, row)
	{
		char in[GI_FMT_NUM_MAX], outb[GI_FMT_NUM_MAX],
		    pin[GI_FMT_NUM_MAX] = "-", pout[GI_FMT_NUM_MAX] = "-", owner[600], peer[600];
		gi_fmt_bytes(gi_json_num_or(row, "input_bytes", 0), in, sizeof(in));
		gi_fmt_bytes(gi_json_num_or(row, "output_bytes", 0), outb, sizeof(outb));
		if (json_is_number(json_object_get(row, "recv_packets"))) {
			gi_fmt_count(gi_json_num_or(row, "recv_packets", 0), pin, sizeof(pin));
			gi_fmt_count(gi_json_num_or(row, "send_packets", 0), pout, sizeof(pout));
		}
		const char *on = json_string_value(json_object_get(row, "owner_name"));
		if (on)
			gi_fmt_registered_name(on, owner, sizeof(owner));
		else
			snprintf(owner, sizeof(owner), "%s",
			         cli_obs_str_or(json_object_get(row, "owner"), "-"));
		const char *p = json_string_value(json_object_get(row, "peer"));
		const char *l = json_string_value(json_object_get(row, "local"));
		if (p)
			snprintf(peer, sizeof(peer), "%s", p);
		else if (l)
			snprintf(peer, sizeof(peer), "listening on %s", l);
		else
			snprintf(peer, sizeof(peer), "%s",
			         cli_obs_str_or(json_object_get(row, "name"), "?"));
		const char *cells[] = {in,
		                       outb,
		                       pin,
		                       pout,
		                       cli_obs_str_or(json_object_get(row, "id"), "?"),
		                       cli_obs_str_or(json_object_get(row, "kind"), "?"),
		                       owner,
		                       peer};
		gi_table_add(t, cells);
	}
	gi_table_render(t, cli_columns(), out);
	gi_table_free(t);
}

/* `giulia ports NODE` */
static int run_ports(int argc, char **argv)
{
	struct observe_args a;
	int rc = cli_obs_parse_args("ports", argc, argv, &a);
	if (rc != 0)
		return rc < 0 ? CLI_EXIT_OK : rc;
	if (a.window_ms > OBS_PORTS_WINDOW_MAX_MS)
		return cli_obs_usage_error("ports", "the window is at most 10000 ms");
	struct obs_ports_request r = {a.window_ms, a.top_n_set ? a.top_n : 0};
	struct obs_target t = {a.node, a.cookie, a.timeout_ms};
	json_t *e = NULL;
	struct cli_obs_progress prog;
	cli_obs_progress_start(&prog, "measuring",
	                       a.window_ms ? a.window_ms : OBS_PORTS_WINDOW_DEFAULT_MS, a.json);
	rc = obs_ports(&t, &r, &e);
	cli_obs_progress_stop(&prog);
	if (rc != 0)
		return cli_obs_node_error("ports", a.node, rc);
	if (a.json) {
		cli_obs_print_json(e);
	} else {
		struct gi_buf b;
		gi_buf_init(&b, 0);
		ports_render(e, &b);
		fputs(gi_buf_str(&b), stdout);
		gi_buf_destroy(&b);
	}
	json_decref(e);
	return CLI_EXIT_OK;
}

/* ---- giulia apps ---- */

static void apps_list_render(json_t *e, struct gi_buf *out)
{
	static const struct gi_table_column cols[] = {
	    {"APPLICATION", GI_COL_ELIDE, 0, 12}, {"VERSION", 0, 2, 0},
	    {"PROCESSES", GI_COL_RIGHT, 0, 0},    {"MEMORY", GI_COL_RIGHT, 0, 0},
	    {"DESCRIPTION", GI_COL_ELIDE, 1, 16},
	};
	gi_buf_printf(out, "%s: %zu applications running\n",
	              cli_obs_str_or(json_object_get(e, "node"), "?"),
	              json_array_size(json_object_get(e, "apps")));
	struct gi_table *t = gi_table_new(cols, 5, 2);
	size_t i;
	json_t *a;
	json_array_foreach(json_object_get(e, "apps"), i, a)
	{
		char procs[GI_FMT_NUM_MAX], mem[GI_FMT_NUM_MAX];
		gi_fmt_count(gi_json_num_or(a, "processes", 0), procs, sizeof(procs));
		gi_fmt_bytes(gi_json_num_or(a, "memory_bytes", 0), mem, sizeof(mem));
		const char *row[] = {cli_obs_str_or(json_object_get(a, "name"), "?"),
		                     cli_obs_str_or(json_object_get(a, "version"), "?"), procs, mem,
		                     cli_obs_str_or(json_object_get(a, "description"), "")};
		gi_table_add(t, row);
	}
	gi_table_render(t, cli_columns(), out);
	gi_table_free(t);
	json_t *u = json_object_get(e, "unattributed");
	char procs[GI_FMT_NUM_MAX], mem[GI_FMT_NUM_MAX];
	gi_fmt_count(gi_json_num_or(u, "processes", 0), procs, sizeof(procs));
	gi_fmt_bytes(gi_json_num_or(u, "memory_bytes", 0), mem, sizeof(mem));
	gi_buf_printf(out, "not in any application: %s processes, %s\n", procs, mem);
}

/* One node of a supervision tree and, indented, its children. */
static void apps_tree_render(json_t *n, int level, int width, struct gi_buf *out)
{
	char name[600] = "", mods[300] = "";
	const char *reg = json_string_value(json_object_get(n, "name"));
	if (reg)
		gi_fmt_registered_name(reg, name, sizeof(name));
	size_t i;
	json_t *m;
	json_array_foreach(json_object_get(n, "modules"), i, m)
	{
		char d[200];
		const char *mod = cli_obs_str_or(m, "?");
		/* "dynamic": a gen_event's modules, known only to it */
		if (strcmp(mod, "dynamic") == 0 || gi_module_display_name(mod, d, sizeof(d)) != 0)
			snprintf(d, sizeof(d), "%s", mod);
		size_t len = strlen(mods);
		snprintf(mods + len, sizeof(mods) - len, "%s%s", len ? ", " : "", d);
	}
	const char *type = cli_obs_str_or(json_object_get(n, "type"), "?");
	char extra[128] = "";
	json_t *cc = json_object_get(n, "children_count");
	size_t shown = json_array_size(json_object_get(n, "children"));
	if (json_is_integer(cc) && (size_t)json_integer_value(cc) > shown)
		snprintf(extra, sizeof(extra), "  (%zu of %lld children shown)", shown,
		         (long long)json_integer_value(cc));
	if (json_is_true(json_object_get(n, "cut")))
		snprintf(extra, sizeof(extra), "  (deeper levels not read)");
	const char *err = json_string_value(json_object_get(n, "error"));
	if (err)
		snprintf(extra, sizeof(extra), "  (which_children: %.80s)", err);
	char id[600];
	gi_fmt_registered_name(cli_obs_str_or(json_object_get(n, "id"), "?"), id, sizeof(id));
	cli_obs_view_line(out, width, "%*s%s %s%s%s%s%s%s%s%s", level * 2, "",
	                  strcmp(type, "supervisor") == 0 ? "+" : "-", id, reg ? " (" : "", name,
	                  reg ? ")" : "", *mods ? " [" : "", mods, *mods ? "]" : "", extra);
	json_t *c;
	json_array_foreach(json_object_get(n, "children"), i, c)
	{
		apps_tree_render(c, level + 1, width, out);
	}
}

/* `giulia apps NODE [APP]` */
static int run_apps(int argc, char **argv)
{
	struct observe_args a;
	int rc = cli_obs_parse_args("apps", argc, argv, &a);
	if (rc != 0)
		return rc < 0 ? CLI_EXIT_OK : rc;
	struct obs_apps_request r = {a.who, a.depth, a.width};
	struct obs_target t = {a.node, a.cookie, a.timeout_ms};
	json_t *e = NULL;
	rc = obs_apps(&t, &r, &e);
	if (rc == GI_ENOTFOUND) {
		fprintf(stderr, "giulia apps: no application %s runs on %s\n", a.who, a.node);
		return CLI_EXIT_FAILURE;
	}
	if (rc == GI_EINVAL)
		return cli_obs_usage_error("apps", "not an application name");
	if (rc != 0)
		return cli_obs_node_error("apps", a.node, rc);
	if (a.json) {
		cli_obs_print_json(e);
	} else {
		struct gi_buf b;
		gi_buf_init(&b, 0);
		if (!a.who) {
			apps_list_render(e, &b);
		} else {
			gi_buf_printf(&b, "%s %s on %s: supervision tree (%.0f nodes read)\n",
			              cli_obs_str_or(json_object_get(e, "app"), "?"),
			              cli_obs_str_or(json_object_get(e, "version"), "?"),
			              cli_obs_str_or(json_object_get(e, "node"), "?"),
			              gi_json_num_or(e, "nodes", 0));
			json_t *tree = json_object_get(e, "tree");
			if (json_is_object(tree))
				apps_tree_render(tree, 0, isatty(STDOUT_FILENO) ? cli_columns() : 0,
				                 &b);
			else
				gi_buf_puts(&b, "  (no supervisor: a library application)\n");
		}
		fputs(gi_buf_str(&b), stdout);
		gi_buf_destroy(&b);
	}
	json_decref(e);
	return CLI_EXIT_OK;
}

static const struct cli_option ets_options[] = {
    {"--by KEY", "memory or size (objects)", "memory"},
    {"-n N", "how many tables, largest first (at most 1000)", "30"},
    {"--json", "print the tables as JSON (raw numbers)", NULL},
    {NULL, NULL, NULL},
};

static const struct cli_help ets_help = {
    "The ETS tables of a live node, largest first, as observer_cli's ETS view lists them: "
    "memory, size, name (unnamed tables with their id), owner (registered name or pid), "
    "type, protection and read/write concurrency. Only ets:info is read, never a table's "
    "contents; the per-table work runs in compiled code on the node, nothing loaded.",
    ets_options, cli_node_options, CLI_EXITS_NODE,
    "giulia ets shop@localhost\ngiulia ets shop --by size -n 100 --json"};

static const struct cli_option ports_options[] = {
    {"--window MS", "how long bytes and packets are counted (at most 10000)", "1000"},
    {"-n N", "how many ports, most bytes first (at most 1000)", "30"},
    {"--json", "print the ports as JSON (raw numbers)", NULL},
    {NULL, NULL, NULL},
};

static const struct cli_help ports_help = {
    "The ports and sockets of a live node over a window, as recon:inet_window/3 gives them: "
    "bytes in and out (and packets, for TCP, UDP and SCTP sockets) over the window, the owner "
    "process, the peer or local address or the port's program; the ports by kind and the "
    "file descriptors in use against the node's limit. Only statistics are asked of the "
    "ports; nothing loaded.",
    ports_options, cli_node_options, CLI_EXITS_NODE,
    "giulia ports shop@localhost\ngiulia ports shop --window 5000 -n 10"};

static const struct cli_option apps_options[] = {
    {"--depth N", "with APP: levels of the tree below its top supervisor (at most 20)", "4"},
    {"--width N", "with APP: children shown per supervisor (at most 1000)", "50"},
    {"--json", "print the applications or the tree as JSON", NULL},
    {NULL, NULL, NULL},
};

static const struct cli_help apps_help = {
    "The applications running on a live node, with their versions and the processes and "
    "memory attributed to each (a process belongs to the application whose master is its "
    "group leader); with APP, that application's supervision tree (+ supervisor, - worker), "
    "each supervisor asked which_children with a 1 s timeout, bounded in depth, width and "
    "2000 nodes in all. APP is compared with the running applications' names (no atom is "
    "created). Nothing is loaded.",
    apps_options, cli_node_options, CLI_EXITS_NODE,
    "giulia apps shop@localhost\ngiulia apps shop shop --depth 2 --width 20"};

static const struct cli_option alloc_options[] = {
    {"-n N", "how many allocator instances, most carrier bytes unused first (at most 1000)", "20"},
    {"--json", "print the allocators as JSON (raw numbers)", NULL},
    {NULL, NULL, NULL},
};

static const struct cli_help alloc_help = {
    "The memory allocators of a live node, as recon_alloc:fragmentation(current) and "
    "recon_alloc:cache_hit_rates() compute them from erlang:system_info({allocator, A}): per "
    "allocator type and per instance, the bytes of carriers the VM holds against the bytes "
    "of blocks in use in them, for single-block (sbcs) and multi-block (mbcs) carriers; the "
    "instances with the most carrier bytes unused first; and mseg_alloc's segment cache "
    "hits against its calls. Read-only; nothing loaded.",
    alloc_options, cli_node_options, CLI_EXITS_NODE,
    "giulia alloc shop@localhost\ngiulia alloc shop -n 50 --json"};

static const struct cli_option binleak_options[] = {
    {"-n N", "how many processes, most binary memory freed first (at most 100)", "10"},
    {"--json", "print the processes as JSON (raw numbers)", NULL},
    {NULL, NULL, NULL},
};

static const struct cli_help binleak_help = {
    "Which processes hold refc binary memory they no longer need, as recon:bin_leak/1 finds "
    "them. NOT read-only: it FORCES A GARBAGE COLLECTION of every process of the node "
    "(at most 100000, for at most 5 s), measuring each one's refc binaries "
    "(process_info(P, binary)) just before and after its collection, and lists the "
    "processes that freed the most. Giulia's own processes on the node are left alone. "
    "Nothing loaded.",
    binleak_options, cli_node_options, CLI_EXITS_NODE,
    "giulia binleak shop@localhost\ngiulia binleak shop -n 20 --json"};

const struct cli_command cli_inspect_commands[] = {
    {"ets",
     "NODE [--by memory|size] [-n N] [--cookie C | --cookie-file FILE] [--timeout MS] "
     "[--json]",
     "the ETS tables of a live node, largest first", run_ets, &ets_help},
    {"ports", "NODE [--window MS] [-n N] [--cookie C | --cookie-file FILE] [--timeout MS] [--json]",
     "the ports and sockets of a live node over a window", run_ports, &ports_help},
    {"apps",
     "NODE [APP [--depth N] [--width N]] [--cookie C | --cookie-file FILE] [--timeout MS] "
     "[--json]",
     "the applications of a live node, or one's supervision tree", run_apps, &apps_help},
    {"alloc", "NODE [-n N] [--cookie C | --cookie-file FILE] [--timeout MS] [--json]",
     "allocator fragmentation and cache hit rates of a live node", run_alloc, &alloc_help},
    {"binleak", "NODE [-n N] [--cookie C | --cookie-file FILE] [--timeout MS] [--json]",
     "processes freeing the most binary memory after a forced GC (recon:bin_leak)", run_binleak,
     &binleak_help},
    {NULL, NULL, NULL, NULL, NULL},
};
