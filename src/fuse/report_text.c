/*
 * report_text.c - a profile and a comparison for the terminal: plain text,
 * at most 80 columns (tables fitted by base/table, numbers and names written
 * by base/fmt, as in every text output), sections in the order a reader acts on them (session,
 * recommendations, metrics, hot modules, hotspots, workload, pipeline).
 * Tolerates any profile shape: missing fields print as "-".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/error.h"
#include "base/fmt.h"
#include "base/table.h"
#include "fuse/fuse.h"
#include "fuse/fuse_int.h"
#include "fuse/profile_view.h"

#define WIDTH 80

/* Appends `text` wrapped at WIDTH, the first line indented by `first`
 * spaces and the others by `rest`. */
static int put_hanging(struct gi_buf *out, int first, int rest, const char *text)
{
	int rc = 0;
	const char *p = text ? text : "";
	for (int indent = first; *p && rc == 0; indent = rest) {
		while (*p == ' ')
			p++;
		size_t room = (size_t)(WIDTH - indent);
		size_t len = strlen(p);
		size_t take = len;
		if (len > room) {
			take = room;
			while (take > 0 && p[take] != ' ')
				take--;
			if (take == 0)
				take = room;
		}
		rc = gi_buf_printf(out, "%*s%.*s\n", indent, "", (int)take, p);
		p += take;
	}
	return rc;
}

/* Appends `text` wrapped at WIDTH with `indent` spaces on every line. */
static int put_wrapped(struct gi_buf *out, int indent, const char *text)
{
	return put_hanging(out, indent, indent, text);
}

/* A section heading after a blank line, wrapped at WIDTH (its explanation
 * in parentheses continues indented by 2). */
static void put_heading(struct gi_buf *out, const char *text)
{
	gi_buf_puts(out, "\n");
	put_hanging(out, 0, 2, text);
}

static void fmt_time(double ms, char *out, size_t size)
{
	if (!isfinite(ms)) {
		snprintf(out, size, "-");
		return;
	}
	time_t t = (time_t)(ms / 1000.0);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, size, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

static void fmt_num(double v, char *out, size_t size)
{
	fuse_fmt_count(v, out, size);
}

/* Appends table `t` fitted to WIDTH and frees it. */
static void table_put(struct gi_buf *out, struct gi_table *t)
{
	gi_table_render(t, WIDTH, out);
	gi_table_free(t);
}

/* Evidence as "key=value, ..." for one line of text. */
static int put_evidence(struct gi_buf *out, const json_t *evidence)
{
	json_t *ev = (json_t *)evidence; /* jansson's iterators take no const */
	struct gi_buf line;
	gi_buf_init(&line, 4096);
	gi_buf_puts(&line, "evidence: ");
	int first = 1;
	for (void *it = json_object_iter(ev); it; it = json_object_iter_next(ev, it)) {
		const char *key = json_object_iter_key(it);
		json_t *v = json_object_iter_value(it);
		char val[256];
		if (json_is_number(v)) {
			double d = json_number_value(v);
			if (d != floor(d) && fabs(d) < 10)
				snprintf(val, sizeof(val), "%.3g", d);
			else
				fuse_fmt_count(d, val, sizeof(val));
		} else if (json_is_string(v)) {
			snprintf(val, sizeof(val), "%s", json_string_value(v));
		} else if (json_is_boolean(v)) {
			snprintf(val, sizeof(val), "%s", json_is_true(v) ? "yes" : "no");
		} else if (json_is_null(v)) {
			continue;
		} else {
			char *dump = json_dumps(v, JSON_COMPACT);
			snprintf(val, sizeof(val), "%s", dump ? dump : "?");
			free(dump);
		}
		gi_buf_printf(&line, "%s%s=%s", first ? "" : ", ", key, val);
		first = 0;
	}
	int rc = put_wrapped(out, 6, gi_buf_str(&line));
	gi_buf_destroy(&line);
	return rc;
}

static void put_session(struct gi_buf *out, const struct fuse_view_session *s)
{
	char start[64];
	fmt_time(s->started_ms, start, sizeof(start));
	const char *id = s->id, *node = s->node;
	const char *status = s->status;
	size_t gaps = s->ngaps;
	double missing = s->snapshots_missing;
	gi_buf_printf(out, "Giulia profile %s  node %s  [%s", id ? id : "-", node ? node : "-",
	              status ? status : "-");
	if (gaps > 0)
		gi_buf_printf(out, ", %zu gap%s, %.0f snapshot%s missing", gaps,
		              gaps == 1 ? "" : "s", isfinite(missing) ? missing : 0,
		              missing == 1 ? "" : "s");
	gi_buf_puts(out, "]\n");
	if (s->reason) {
		struct gi_buf why;
		gi_buf_init(&why, 4096);
		gi_buf_printf(&why, "stopped early: %s", s->reason);
		put_wrapped(out, 2, gi_buf_str(&why));
		gi_buf_destroy(&why);
	}
	double dur = s->duration_ms, iv = s->interval_ms;
	struct gi_buf when;
	gi_buf_init(&when, 4096);
	gi_buf_printf(&when, "started %s, %.1f s, %.0f snapshots", start,
	              isfinite(dur) ? dur / 1000.0 : 0, s->snapshot_count);
	if (isfinite(iv))
		gi_buf_printf(&when, " every %.0f ms", iv);
	const char *otp = s->otp_release;
	double sched = s->schedulers_online;
	if (otp)
		gi_buf_printf(&when, ", OTP %s", otp);
	if (isfinite(sched))
		gi_buf_printf(&when, ", %.0f schedulers", sched);
	put_wrapped(out, 2, gi_buf_str(&when));
	gi_buf_destroy(&when);
	const struct fuse_view_names *tm = &s->traced_modules;
	if (tm->len > 0) {
		struct gi_buf line;
		gi_buf_init(&line, 8192);
		gi_buf_puts(&line, "traced: ");
		for (size_t i = 0; i < tm->len; i++)
			gi_buf_printf(&line, "%s%s", i ? ", " : "", tm->items[i]);
		put_wrapped(out, 2, gi_buf_str(&line));
		gi_buf_destroy(&line);
	}
}

/* A session where no rule warns (nothing above low) is a healthy node:
 * said so, with the figures that make its baseline. */
static void put_health(struct gi_buf *out, const struct fuse_view *v)
{
	for (size_t i = 0; i < v->nrecommendations; i++) {
		const char *sev = v->recommendations[i].severity;
		if (sev && strcmp(sev, "low") != 0)
			return;
	}
	const struct fuse_view_metrics *m = &v->metrics;
	char util[32], mem[32], reds[GI_FMT_NUM_MAX], procs[GI_FMT_NUM_MAX];
	fuse_fmt_pct(m->scheduler_utilisation.avg, util, sizeof(util));
	fuse_fmt_bytes(m->memory_bytes.avg, mem, sizeof(mem));
	gi_fmt_rate(m->reductions_per_second.avg, reds, sizeof(reds));
	gi_fmt_count(m->process_count.avg, procs, sizeof(procs));
	struct gi_buf line;
	gi_buf_init(&line, 512);
	gi_buf_printf(&line,
	              "healthy: no warning. Baseline: utilisation %s, run queue %.2f, reductions "
	              "%s, %s processes, memory %s",
	              util, m->run_queue.avg, reds, procs, mem);
	put_wrapped(out, 2, gi_buf_str(&line));
	gi_buf_destroy(&line);
}

/* Every error and note of the profile (what the observer could not do),
 * before the findings they may qualify. */
static void put_errors(struct gi_buf *out, const struct fuse_view_names *errors)
{
	size_t n = errors->len;
	if (n == 0)
		return;
	gi_buf_printf(out, "\nErrors and notes (%zu): what could not be observed\n", n);
	for (size_t i = 0; i < n; i++) {
		struct gi_buf line;
		gi_buf_init(&line, 8192);
		gi_buf_printf(&line, "- %s", errors->items[i]);
		put_wrapped(out, 2, gi_buf_str(&line));
		gi_buf_destroy(&line);
	}
}

static void put_recommendations(struct gi_buf *out, const struct fuse_view *v)
{
	size_t n = v->nrecommendations;
	gi_buf_printf(out, "\nRecommendations (%zu)\n", n);
	if (n == 0)
		gi_buf_puts(out, "  none: no rule fired on this session\n");
	put_health(out, v);
	for (size_t i = 0; i < n; i++) {
		const struct fuse_view_recommendation *r = &v->recommendations[i];
		const char *sev = r->severity, *id = r->id;
		char merged[256] = "";
		for (size_t k = 0; k < r->nalso; k++) {
			size_t len = strlen(merged);
			const struct fuse_view_also *a = &r->also[k];
			snprintf(merged + len, sizeof(merged) - len, " + %s (rule %.0f)",
			         a->id ? a->id : "?", a->rule);
		}
		gi_buf_printf(out, "%2zu. [%s] %s (rule %.0f, priority %.0f)%s\n", i + 1,
		              sev ? sev : "-", id ? id : "-", r->rule, r->priority, merged);
		put_wrapped(out, 4, r->finding);
		for (size_t k = 0; k < r->nalso; k++) {
			const struct fuse_view_also *a = &r->also[k];
			struct gi_buf line;
			gi_buf_init(&line, 8192);
			gi_buf_printf(&line, "also (%s): %s", a->id ? a->id : "?",
			              a->finding ? a->finding : "");
			put_wrapped(out, 4, gi_buf_str(&line));
			gi_buf_destroy(&line);
		}
		put_evidence(out, r->evidence);
		struct gi_buf line;
		gi_buf_init(&line, 8192);
		gi_buf_printf(&line, "advice: %s", r->advice ? r->advice : "");
		put_wrapped(out, 6, gi_buf_str(&line));
		gi_buf_destroy(&line);
	}
}

static void put_metric(struct gi_buf *out, const char *label, const struct fuse_view_stat *m,
                       int kind)
{
	char avg[32], peak[32];
	double a = m->avg, p = m->peak;
	if (kind == 1) {
		fuse_fmt_bytes(a, avg, sizeof(avg));
		fuse_fmt_bytes(p, peak, sizeof(peak));
	} else if (kind == 2) {
		fuse_fmt_pct(a, avg, sizeof(avg));
		fuse_fmt_pct(p, peak, sizeof(peak));
	} else if (kind == 3) {
		snprintf(avg, sizeof(avg), isfinite(a) ? "%.2f" : "-", a);
		fmt_num(p, peak, sizeof(peak));
	} else {
		fmt_num(a, avg, sizeof(avg));
		fmt_num(p, peak, sizeof(peak));
	}
	gi_buf_printf(out, "  %-24s %12s %12s", label, avg, peak);
}

static void put_metrics(struct gi_buf *out, const struct fuse_view_metrics *m)
{
	gi_buf_printf(out, "\nMetrics                         %9s %12s\n", "average", "peak");
	const struct fuse_view_stat *mem = &m->memory_bytes;
	put_metric(out, "memory", mem, 1);
	double g = mem->growth_bytes, first = mem->first;
	if (isfinite(g)) {
		char gb[32];
		fuse_fmt_bytes(g, gb, sizeof(gb));
		gi_buf_printf(out, "   growth %s%s", g >= 0 ? "+" : "", gb);
		if (first > 0)
			gi_buf_printf(out, " (%+.1f%%)", 100.0 * g / first);
	}
	gi_buf_puts(out, "\n");
	put_metric(out, "processes", &m->process_count, 0);
	gi_buf_puts(out, "\n");
	put_metric(out, "run queue", &m->run_queue, 3);
	gi_buf_puts(out, "\n");
	put_metric(out, "scheduler utilisation", &m->scheduler_utilisation, 2);
	gi_buf_puts(out, "\n");
	put_metric(out, "reductions/s", &m->reductions_per_second, 0);
	gi_buf_puts(out, "\n");
}

static void put_hot_modules(struct gi_buf *out, const struct fuse_view_module *hm, size_t n,
                            const char *title)
{
	put_heading(out, title);
	if (n == 0) {
		gi_buf_puts(out, "  none above 0.5% of reductions\n");
		return;
	}
	static const struct gi_table_column cols[] = {
	    {"module", GI_COL_ELIDE, 0, 20},
	    {"share", GI_COL_RIGHT, 0, 0},
	    {"reds", GI_COL_RIGHT, 0, 0},
	    {"memory", GI_COL_RIGHT, 0, 0},
	    {"smp", GI_COL_RIGHT, 3, 0},
	    {"Ca", GI_COL_RIGHT, 2, 0},
	    {"Ce", GI_COL_RIGHT, 2, 0},
	    {"cplx", GI_COL_RIGHT, 1, 0},
	    {"hub", 0, 4, 0},
	    {"zone", 0, 5, 0},
	};
	struct gi_table *t = gi_table_new(cols, 10, 2);
	for (size_t i = 0; i < n; i++) {
		const struct fuse_view_module *m = &hm[i];
		const struct fuse_view_module_graph *g = &m->graph;
		char sh[16], rd[16], mem[16], smp[16], ca[16], ce[16], cx[16];
		fuse_fmt_pct(m->reductions_share, sh, sizeof(sh));
		fmt_num(m->reductions, rd, sizeof(rd));
		fuse_fmt_bytes(m->memory_bytes, mem, sizeof(mem));
		fmt_num(isfinite(m->samples) ? m->samples : m->sample_count, smp, sizeof(smp));
		fmt_num(g->ca, ca, sizeof(ca));
		fmt_num(g->ce, ce, sizeof(ce));
		fmt_num(g->complexity, cx, sizeof(cx));
		const char *zone = g->zone;
		const char *row[] = {m->module ? m->module : "-",
		                     sh,
		                     rd,
		                     mem,
		                     smp,
		                     ca,
		                     ce,
		                     cx,
		                     fuse_view_tri_text(g->hub),
		                     zone ? zone : "-"};
		gi_table_add(t, row);
		if (m->nhottest == 0)
			continue;
		struct gi_buf line;
		gi_buf_init(&line, 4096);
		gi_buf_puts(&line, "hottest: ");
		for (size_t k = 0; k < m->nhottest; k++) {
			const struct fuse_view_hottest *f = &m->hottest[k];
			char v[32], fn[2 * FUSE_MAX_NAME + 16];
			const char *by = f->by;
			bool sampled = by && strcmp(by, "samples") == 0;
			if (sampled)
				fuse_fmt_pct(f->reductions_share, v, sizeof(v));
			else
				fmt_num(f->calls, v, sizeof(v));
			gi_fmt_function(NULL, f->name ? f->name : "?", (long long)f->arity, fn,
			                sizeof(fn));
			gi_buf_printf(&line, "%s%s (%s %s)", k ? ", " : "", fn, v,
			              sampled ? "executing" : "calls");
		}
		gi_table_note(t, gi_buf_str(&line));
		gi_buf_destroy(&line);
	}
	table_put(out, t);
	put_wrapped(out, 2,
	            "(share and reds: of all reductions; smp: snapshots it was seen in; Ca: "
	            "modules that depend on it, Ce: modules it depends on; cplx: its total "
	            "complexity)");
}

/* A duration in microseconds, short: "850 us", "12.3 ms", "4.56 s". */
static void fmt_us(double us, char *out, size_t size)
{
	if (!isfinite(us))
		snprintf(out, size, "-");
	else if (us < 1000)
		snprintf(out, size, "%.0f us", us);
	else if (us < 1e6)
		snprintf(out, size, "%.1f ms", us / 1000.0);
	else
		snprintf(out, size, "%.2f s", us / 1e6);
}

static int cmp_time_desc(const void *a, const void *b)
{
	double x = (*(const struct fuse_view_hotspot *const *)a)->time_us;
	double y = (*(const struct fuse_view_hotspot *const *)b)->time_us;
	if (!isfinite(x))
		x = -1;
	if (!isfinite(y))
		y = -1;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* The hotspots of a session that measured call_time: by own time, with the
 * mean per call and the share of all traced time, joined with the graph. */
static void put_hotspots_timed(struct gi_buf *out, const struct fuse_view *v)
{
	size_t n = v->nhotspots;
	const struct fuse_view_call_time *ct = &v->call_time;
	const struct fuse_view_hotspot **rows = gi_calloc(n, sizeof(*rows));
	for (size_t i = 0; i < n; i++)
		rows[i] = &v->hotspots[i];
	qsort(rows, n, sizeof(*rows), cmp_time_desc);
	char head[256];
	snprintf(head, sizeof(head),
	         "Trace hotspots by time (%zu traced functions%s; own time in up to %.0f flagged "
	         "processes)",
	         n, n > 20 ? ", top 20 shown; the JSON has all" : "", ct->flagged_max);
	put_heading(out, head);
	static const struct gi_table_column cols[] = {
	    {"function", GI_COL_ELIDE, 0, 24},
	    {"calls", GI_COL_RIGHT, 0, 0},
	    {"time", GI_COL_RIGHT, 0, 0},
	    {"us/call", GI_COL_RIGHT, 0, 0},
	    {"time%", GI_COL_RIGHT, 1, 0},
	    {"cc", GI_COL_RIGHT, 2, 0},
	    {"cog", GI_COL_RIGHT, 2, 0},
	    {"in", GI_COL_RIGHT, 3, 0},
	    {"hub", 0, 4, 0},
	};
	struct gi_table *t = gi_table_new(cols, 9, 2);
	for (size_t i = 0; i < n && i < 20; i++) {
		const struct fuse_view_hotspot *f = rows[i];
		char nb[2 * FUSE_MAX_NAME + 16], calls[16], tm[16], mean[16], share[16], cc[16],
		    cog[16], in[16];
		gi_fmt_mfa(f->mfa ? f->mfa : "-", nb, sizeof(nb));
		fmt_num(f->calls, calls, sizeof(calls));
		fmt_us(f->time_us, tm, sizeof(tm));
		double m = f->mean_us;
		if (isfinite(m))
			snprintf(mean, sizeof(mean), m < 10 ? "%.2f" : "%.0f", m);
		else
			snprintf(mean, sizeof(mean), "-");
		fuse_fmt_pct(f->time_share, share, sizeof(share));
		fmt_num(f->cyclomatic, cc, sizeof(cc));
		fmt_num(f->cognitive, cog, sizeof(cog));
		fmt_num(f->fan_in, in, sizeof(in));
		const char *row[] = {
		    nb, calls, tm, mean, share, cc, cog, in, fuse_view_tri_text(f->module_hub)};
		gi_table_add(t, row);
	}
	table_put(out, t);
	put_wrapped(out, 2,
	            "(time: own time of all calls; time%: share of all traced time; cc, cog: "
	            "cyclomatic and cognitive complexity; in: callers in the graph)");
	gi_free(rows);
	if (ct->refused_max > 0 || ct->trace_messages > 0) {
		char note[512];
		snprintf(note, sizeof(note),
		         "call_time: up to %.0f processes refused (traced by another tool), %.0f "
		         "foreign trace messages dropped%s",
		         ct->refused_max, ct->trace_messages,
		         ct->suspended ? "; flagging suspended (too many)" : "");
		put_wrapped(out, 2, note);
	}
}

static void put_hot_functions(struct gi_buf *out, const struct fuse_view *v)
{
	const struct fuse_view_executing *summary = &v->executing;
	if (v->nhot_functions == 0)
		return;
	char cov[16];
	fuse_fmt_pct(summary->coverage, cov, sizeof(cov));
	char head[256];
	snprintf(head, sizeof(head),
	         "Hot functions (executing in: sampled every %.0f ms, %.0f ticks; the sampled "
	         "processes did %s of the reductions)",
	         summary->period_ms, summary->ticks, cov);
	put_heading(out, head);
	static const struct gi_table_column cols[] = {
	    {"function", GI_COL_ELIDE, 0, 24}, {"share", GI_COL_RIGHT, 0, 0},
	    {"samples", GI_COL_RIGHT, 1, 0},   {"calls", GI_COL_RIGHT, 2, 0},
	    {"cc", GI_COL_RIGHT, 3, 0},        {"owner", 0, 4, 0},
	};
	struct gi_table *t = gi_table_new(cols, 6, 2);
	for (size_t i = 0; i < v->nhot_functions; i++) {
		const struct fuse_view_function *f = &v->hot_functions[i];
		char name[2 * FUSE_MAX_NAME + 16], sh[16], smp[16], calls[16], cc[16];
		gi_fmt_function(f->module ? f->module : "?", f->function ? f->function : "?",
		                (long long)f->arity, name, sizeof(name));
		fuse_fmt_pct(f->reductions_share, sh, sizeof(sh));
		fmt_num(f->samples, smp, sizeof(smp));
		fmt_num(f->calls, calls, sizeof(calls));
		fmt_num(f->cyclomatic, cc, sizeof(cc));
		const char *row[] = {name, sh, smp, calls, cc, f->project ? "project" : "platform"};
		gi_table_add(t, row);
	}
	table_put(out, t);
}

static void put_hotspots(struct gi_buf *out, const struct fuse_view *v)
{
	size_t n = v->nhotspots;
	if (n == 0)
		return;
	if (v->call_time.present) {
		put_hotspots_timed(out, v);
		return;
	}
	char head[128];
	snprintf(head, sizeof(head), "Trace hotspots (%zu traced functions%s)", n,
	         n > 20 ? ", top 20 shown; the JSON has all" : "");
	put_heading(out, head);
	static const struct gi_table_column cols[] = {
	    {"function", GI_COL_ELIDE, 0, 24}, {"calls", GI_COL_RIGHT, 0, 0},
	    {"/s", GI_COL_RIGHT, 0, 0},        {"min/avg/max", GI_COL_RIGHT, 1, 0},
	    {"cc", GI_COL_RIGHT, 2, 0},        {"cog", GI_COL_RIGHT, 2, 0},
	    {"in", GI_COL_RIGHT, 3, 0},        {"out", GI_COL_RIGHT, 3, 0},
	};
	struct gi_table *t = gi_table_new(cols, 8, 2);
	for (size_t i = 0; i < n && i < 20; i++) {
		const struct fuse_view_hotspot *f = &v->hotspots[i];
		char nb[2 * FUSE_MAX_NAME + 16], calls[40], cps[16], mn[16], av[16], mx[16], mm[48],
		    cc[16], cog[16];
		gi_fmt_mfa(f->mfa ? f->mfa : "-", nb, sizeof(nb));
		fuse_fmt_hotspot_calls(f, calls, sizeof(calls));
		fmt_num(f->calls_per_second, cps, sizeof(cps));
		fmt_num(f->per_window.min, mn, sizeof(mn));
		fmt_num(round(f->per_window.avg), av, sizeof(av));
		fmt_num(f->per_window.max, mx, sizeof(mx));
		snprintf(mm, sizeof(mm), "%s/%s/%s", mn, av, mx);
		fmt_num(f->cyclomatic, cc, sizeof(cc));
		fmt_num(f->cognitive, cog, sizeof(cog));
		char in[16] = "-", outs[16] = "-";
		if (f->in_graph) {
			snprintf(in, sizeof(in), "%zu", f->callers.len);
			snprintf(outs, sizeof(outs), "%zu", f->callees.len);
		}
		const char *row[] = {nb, calls, cps, mm, cc, cog, in, outs};
		gi_table_add(t, row);
	}
	table_put(out, t);
	put_wrapped(out, 2,
	            "(min/avg/max: calls per snapshot interval; +/-: the 95% interval of an "
	            "estimated count; cc, cog: cyclomatic and cognitive complexity; in, out: "
	            "callers and callees in the graph)");
	size_t unsure = 0;
	for (size_t i = 0; i < n; i++)
		if (v->hotspots[i].firm == FUSE_TRI_FALSE)
			unsure++;
	if (unsure > 0) {
		char note[256];
		snprintf(note, sizeof(note),
		         "?low-high: %zu estimated count%s the budget cannot stand behind (its "
		         "95%% interval is wider than 2x); count exactly with --overhead 0 for a "
		         "short while",
		         unsure, unsure == 1 ? "" : "s");
		put_wrapped(out, 2, note);
	}
}

/* One wrapped line under a workload row: each operation's class and the
 * evidence it rests on (docs/RULES.md, "The workload model"), and what
 * makes the module a data layer. */
static void put_classes(struct gi_table *t, const struct fuse_view_workload *w)
{
	struct gi_buf line;
	gi_buf_init(&line, 8192);
	const char *why = w->database.data_layer_reason;
	if (why)
		gi_buf_printf(&line, "data layer (%s); ", why);
	for (size_t k = 0; k < w->nclasses && k < 8; k++) {
		const struct fuse_view_class *c = &w->classes[k];
		gi_buf_printf(&line, "%s%s %s (%s)", k ? ", " : "", c->function ? c->function : "?",
		              c->class_name ? c->class_name : "?", c->basis ? c->basis : "?");
	}
	if (line.len > 0)
		gi_table_note(t, gi_buf_str(&line));
	gi_buf_destroy(&line);
}

static void put_workload(struct gi_buf *out, const struct fuse_view *v)
{
	const struct fuse_view_pipeline *pipe = &v->pipeline;
	if (v->nworkload == 0)
		return;
	gi_buf_puts(out, "\nWorkload of traced modules\n");
	static const struct gi_table_column cols[] = {
	    {"module", GI_COL_ELIDE, 0, 20}, {"reads", GI_COL_RIGHT, 0, 0},
	    {"writes", GI_COL_RIGHT, 0, 0},  {"r/w", GI_COL_RIGHT, 1, 0},
	    {"read%", GI_COL_RIGHT, 0, 0},   {"ops/s", GI_COL_RIGHT, 0, 0},
	};
	struct gi_table *t = gi_table_new(cols, 6, 2);
	for (size_t i = 0; i < v->nworkload; i++) {
		const struct fuse_view_workload *w = &v->workload[i];
		char r[16], wr[16], ratio[16], rs[16], cps[16];
		fmt_num(w->reads, r, sizeof(r));
		fmt_num(w->writes, wr, sizeof(wr));
		double rw = w->read_write_ratio;
		if (isfinite(rw))
			snprintf(ratio, sizeof(ratio), "%.1f", rw);
		else
			snprintf(ratio, sizeof(ratio), w->reads > 0 ? "inf" : "-");
		fuse_fmt_pct(w->read_share, rs, sizeof(rs));
		fmt_num(w->operations_per_second, cps, sizeof(cps));
		const char *row[] = {w->module ? w->module : "-", r, wr, ratio, rs, cps};
		gi_table_add(t, row);
		put_classes(t, w);
	}
	table_put(out, t);
	double helpers = pipe->helper_calls, ops = pipe->db_operations;
	if (isfinite(helpers) && helpers > 0) {
		char h[16], o[16];
		fmt_num(helpers, h, sizeof(h));
		fmt_num(ops, o, sizeof(o));
		double ratio = pipe->ratio;
		const char *verdict = pipe->verdict;
		struct gi_buf line;
		gi_buf_init(&line, 4096);
		if (isfinite(ratio))
			gi_buf_printf(
			    &line,
			    "pipeline overhead: %s helper calls for %s database operations "
			    "(%.2f per operation)%s",
			    h, o, ratio,
			    verdict && strcmp(verdict, "normal") == 0
			        ? ": normal for an Ecto-style repo, not worth optimising"
			    : verdict ? ": above the normal band, a helper runs more than once per "
			                "operation"
			              : "");
		else
			gi_buf_printf(&line,
			              "pipeline overhead: %s helper calls, no classified operation",
			              h);
		put_wrapped(out, 2, gi_buf_str(&line));
		gi_buf_destroy(&line);
	}
}

/* Where the sampled callers waited for a reply, and the part spent in
 * synchronous log calls (executing.blocked). */
static void put_waits(struct gi_buf *out, const struct fuse_view_blocked *b)
{
	double samples = b->samples;
	if (!isfinite(samples) || samples <= 0)
		return;
	char all[32], log[32];
	fuse_fmt_pct(b->share_of_samples, all, sizeof(all));
	fuse_fmt_pct(b->logger_share_of_samples, log, sizeof(log));
	struct gi_buf head;
	gi_buf_init(&head, 256);
	gi_buf_printf(&head,
	              "Blocked callers (sampled processes waiting for a call's reply): %s of the "
	              "sampled time, in log calls %s",
	              all, log);
	double db = b->database_share_of_samples;
	if (isfinite(db)) {
		char dbs[32];
		fuse_fmt_pct(db, dbs, sizeof(dbs));
		gi_buf_printf(&head, ", in calls that lead to the database %s", dbs);
	}
	put_heading(out, gi_buf_str(&head));
	gi_buf_destroy(&head);
	static const struct gi_table_column cols[] = {
	    {"call site", GI_COL_ELIDE, 0, 24},
	    {"samples", GI_COL_RIGHT, 0, 0},
	    {"in log calls", GI_COL_RIGHT, 1, 0},
	    {"leads to", 0, 2, 0},
	};
	struct gi_table *t = gi_table_new(cols, 4, 2);
	for (size_t i = 0; i < b->ncall_sites && i < 5; i++) {
		const struct fuse_view_call_site *e = &b->call_sites[i];
		char smp[16], lg[16];
		fmt_num(e->samples, smp, sizeof(smp));
		fmt_num(e->logger_samples, lg, sizeof(lg));
		const char *row[] = {e->function ? e->function : "?", smp, lg,
		                     e->database ? "the database" : "-"};
		gi_table_add(t, row);
	}
	table_put(out, t);
}

/* What call counting did to the node: how long it ran, under which budget,
 * the share of the time counted and set, the cost, and what other tools
 * held (shared). Nothing without tracing. */
static void put_tracing(struct gi_buf *out, const struct fuse_view_tracing *tracing,
                        const struct fuse_view_trace_budget *budget)
{
	const char *mode = tracing->mode;
	if (!mode || strcmp(mode, "none") == 0)
		return;
	struct gi_buf line;
	gi_buf_init(&line, 4096);
	double ms = tracing->traced_ms;
	gi_buf_printf(&line, "call counting: %.0f windows, %.1f s", tracing->windows,
	              isfinite(ms) ? ms / 1000.0 : 0);
	if (strcmp(mode, "budget") == 0 && budget->present) {
		char ov[32], duty[32], exp[32], cost[32], node[32];
		fuse_fmt_pct(budget->overhead, ov, sizeof(ov));
		fuse_fmt_pct(budget->duty_mean, duty, sizeof(duty));
		fuse_fmt_pct(budget->exposure_mean, exp, sizeof(exp));
		fuse_fmt_pct(budget->cost, cost, sizeof(cost));
		fuse_fmt_pct(budget->node_cost, node, sizeof(node));
		gi_buf_printf(
		    &line,
		    ", under a %s budget: counted for %s of the time, with the patterns set "
		    "for %s (barriers included); a counted call path cost %s of its work, "
		    "so about %s of the node's work went to counting; counts are "
		    "estimates",
		    ov, duty, exp, cost, node);
		double paused = budget->paused_windows;
		if (isfinite(paused) && paused > 0)
			gi_buf_printf(&line, "; paused in %.0f windows (utilisation ceiling)",
			              paused);
	} else {
		gi_buf_puts(&line, ", every call counted (--overhead 0: exact counts; the cost was "
		                   "not measured)");
	}
	put_wrapped(out, 2, gi_buf_str(&line));
	gi_buf_destroy(&line);
	for (size_t i = 0; i < tracing->foreign.len; i++) {
		const char *f = tracing->foreign.items[i];
		struct gi_buf l;
		gi_buf_init(&l, 1024);
		gi_buf_printf(&l, "another tool: %s", f);
		put_wrapped(out, 2, gi_buf_str(&l));
		gi_buf_destroy(&l);
	}
}

/* The observer's own cost, measured on the node: one bracketed line under
 * the header, loud when the budget was not kept. Nothing for profiles of
 * older observers. */
static void put_observer(struct gi_buf *out, const struct fuse_view_observer *o)
{
	if (!o->present)
		return;
	char cost[32], budget[32], max[32];
	fuse_fmt_pct(o->cost, cost, sizeof(cost));
	fuse_fmt_pct(o->budget, budget, sizeof(budget));
	fuse_fmt_pct(o->cost_max, max, sizeof(max));
	struct gi_buf line;
	gi_buf_init(&line, 1024);
	double over = o->over_budget_windows;
	if (o->within_budget) {
		gi_buf_printf(&line, "[observer %s of a core, within its %s budget", cost, budget);
		if (isfinite(over) && over > 0)
			gi_buf_printf(&line,
			              " on average; over it in %.0f of %.0f windows, %s at most",
			              over, o->windows, max);
	} else
		gi_buf_printf(&line,
		              "[OVER BUDGET: the observer took %s of a core (%s at most in a "
		              "window) against its %s budget, over it in %.0f of %.0f windows",
		              cost, max, budget, isfinite(over) ? over : 0, o->windows);
	if (o->sampler_slowed)
		gi_buf_printf(&line,
		              "; the sampler's period was lengthened from %.0f ms to up to %.0f ms "
		              "to keep within it",
		              o->sample_period_ms, o->sample_period_max_ms);
	if (o->scan_thinned)
		gi_buf_printf(&line,
		              "; the scan of every process ran every %.0f snapshots at most (about "
		              "every %.0f ms), the process lists between two scans being the last "
		              "scan's, to keep within it",
		              o->scan_every_max, o->scan_every_max_ms);
	double others = o->other_observers;
	if (isfinite(others) && others > 0)
		gi_buf_printf(&line, "; %.0f process%s of other observers left out of the figures",
		              others, others == 1 ? "" : "es");
	gi_buf_puts(&line, "]");
	put_wrapped(out, 2, gi_buf_str(&line));
	gi_buf_destroy(&line);
}

/* How much of the node's work the views explain: one bracketed line under
 * the header, loud when it is low (docs/PROFILE.md "explained"). */
static void put_explained(struct gi_buf *out, const struct fuse_view_explained *e)
{
	const char *note = e->note;
	if (!note)
		return;
	struct gi_buf line;
	gi_buf_init(&line, 1024);
	bool low = e->low && isfinite(e->share);
	gi_buf_printf(&line, "[%s%s]", low ? "MOSTLY UNATTRIBUTED: " : "", note);
	put_wrapped(out, 2, gi_buf_str(&line));
	gi_buf_destroy(&line);
}

int fuse_report_text(json_t *profile, struct gi_buf *dst)
{
	if (!json_is_object(profile) || !dst)
		return GI_EINVAL;
	struct fuse_view view, *v = &view;
	int rc = fuse_view_parse(profile, &view);
	if (rc != 0) {
		fuse_view_destroy(&view);
		return rc;
	}
	/* Rendered in a buffer of our own, handed over in one append, so that a
	 * capped `dst` gets all or nothing. */
	struct gi_buf local, *out = &local;
	gi_buf_init(&local, 0);
	put_session(out, &v->session);
	put_observer(out, &v->observer);
	put_explained(out, &v->explained);
	put_tracing(out, &v->tracing, &v->trace_budget);
	put_errors(out, &v->errors);
	put_recommendations(out, v);
	put_metrics(out, &v->metrics);
	const char *basis = v->hot_modules_basis;
	bool executing = basis && strcmp(basis, "executing") == 0;
	put_hot_modules(out, v->hot_modules, v->nhot_modules,
	                executing ? "Hot modules (executing in: where the sampled processes ran, "
	                            "share of reductions)"
	                          : "Hot modules (process ownership: no samples in this session)");
	put_hot_functions(out, v);
	put_waits(out, &v->executing.blocked);
	if (executing)
		put_hot_modules(out, v->ownership_modules, v->nownership_modules,
		                "Process ownership (reductions of processes by the module that "
		                "registered or started them: who, not where)");
	put_hotspots(out, v);
	put_workload(out, v);
	if (v->graph.present && !v->graph.answered) {
		gi_buf_puts(out, "\n");
		put_wrapped(out, 0,
		            "(no knowledge graph for this node: graph columns are empty; index the "
		            "project with `giulia index` to fill them)");
	}
	rc = gi_buf_append(dst, local.data ? local.data : "", local.len);
	gi_buf_destroy(&local);
	fuse_view_destroy(&view);
	return rc;
}
