/*
 * report_html.c - a profile as one self-contained HTML page: inline CSS,
 * charts drawn here as inline SVG (line charts of the time series, bar
 * charts of hot modules and functions), the recommendations and the tables.
 * No network fetch of any kind. A small inline script counts the charts that
 * the browser laid out with a non-empty box and records the count on
 * <body data-charts-rendered="N">, which the tests read from the DOM.
 *
 * Every text that comes from the profile is HTML-escaped.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/fmt.h"
#include "base/error.h"
#include "fuse/fuse.h"
#include "fuse/fuse_int.h"

#define CHART_W 460
#define CHART_H 170
#define PAD_L   58
#define PAD_R   12
#define PAD_T   14
#define PAD_B   26

static const char style[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0;"
    "background:#f5f6f8;color:#1d2330}"
    "header{background:#1d2330;color:#fff;padding:18px 28px}"
    "header h1{margin:0 0 4px;font-size:20px}header .meta{opacity:.8;font-size:13px}"
    "main{padding:18px 28px;max-width:1180px}"
    "@media(max-width:600px){header,main{padding-left:10px;padding-right:10px}}"
    "h2{font-size:16px;margin:26px 0 10px;border-bottom:1px solid #d7dbe2;padding-bottom:4px}"
    ".grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(480px,100%),1fr));"
    "gap:14px}"
    ".card{background:#fff;border:1px solid #dde1e8;border-radius:6px;padding:10px 12px;"
    "min-width:0;overflow:hidden}"
    ".card h3{margin:0 0 6px;font-size:13px;color:#4a5366;font-weight:600}"
    ".kpis{display:flex;flex-wrap:wrap;gap:10px}"
    ".kpi{background:#fff;border:1px solid #dde1e8;border-radius:6px;padding:8px 12px;"
    "min-width:140px;flex:1 1 140px}.kpi b{display:block;font-size:18px}.kpi "
    "span{font-size:12px;color:#5b6477}"
    ".rec{background:#fff;border:1px solid #dde1e8;border-left:5px solid #8a94a6;"
    "border-radius:6px;padding:10px 14px;margin-bottom:10px}"
    ".rec.high{border-left-color:#d64545}.rec.medium{border-left-color:#e0a030}"
    ".rec.low{border-left-color:#3f8fd2}"
    ".rec .t{font-weight:600}.rec .id{font-family:monospace;font-size:12px;color:#5b6477}"
    ".rec .advice{margin-top:6px}.ev{display:flex;flex-wrap:wrap;gap:4px 6px;margin-top:6px}"
    ".ev span{background:#eef0f4;border-radius:4px;padding:1px 7px;font:12px ui-monospace,"
    "monospace}.ev i{font-style:normal;color:#5b6477}"
    ".tw{overflow-x:auto;max-width:100%}"
    "table{border-collapse:collapse;font-size:12.5px;background:#fff}"
    "th,td{border:1px solid #e1e4ea;padding:3px 7px;text-align:left;vertical-align:top}"
    "th{background:#eef0f4}td.n{text-align:right;font-variant-numeric:tabular-nums;"
    "white-space:nowrap}th[title]{text-decoration:underline dotted;cursor:help}"
    "td.mono{overflow-wrap:anywhere;min-width:12em}"
    ".legend{font-size:12px;color:#5b6477;margin:4px 0 0}"
    ".bars .row{display:flex;align-items:center;gap:8px;margin:3px 0;font-size:12px}"
    ".bars .l{flex:0 1 40%;min-width:0;overflow:hidden;text-overflow:ellipsis;"
    "white-space:nowrap;text-align:right;font-family:ui-monospace,monospace}"
    ".bars .b{flex:1 1 auto;min-width:0;display:flex;align-items:center;gap:6px}"
    ".bars .mark{height:12px;border-radius:2px;min-width:1px}"
    ".bars .v{white-space:nowrap;color:#4a5366}"
    "@media(max-width:600px){.bars .row{flex-wrap:wrap}.bars .l{flex-basis:100%;"
    "text-align:left}}"
    ".errors{background:#fff4e5;border:1px solid #f0c36d;border-radius:6px;"
    "padding:8px 14px}.errors li{margin:2px 0}"
    ".mono{font-family:ui-monospace,monospace;font-size:12px}"
    "svg text{font-size:12px;fill:#4a5366}svg .grid line{stroke:#e6e9ee}"
    ".muted{color:#7a8397}.badge{display:inline-block;padding:0 6px;border-radius:8px;"
    "font-size:11px;color:#fff;background:#8a94a6}.badge.high{background:#d64545}"
    ".badge.medium{background:#e0a030}.badge.low{background:#3f8fd2}";

/* Marks the page with what a test (or a curious reader) can check: how many
 * charts drew something, and how many boxes overflow sideways (the page
 * itself, a card, the main column). */
static const char script[] =
    "(function(){var n=0;document.querySelectorAll('.chart').forEach(function(s){"
    "var r=s.getBoundingClientRect();var marks=s.querySelectorAll('.mark');"
    "var drawn=0;marks.forEach(function(m){var b=m.getBoundingClientRect();"
    "if(b.width>0||b.height>0)drawn++;});if(r.width>0&&r.height>0&&drawn>0)n++;});"
    "document.body.setAttribute('data-charts-rendered',String(n));"
    "var o=0,d=document.documentElement;if(d.scrollWidth>window.innerWidth+1)o++;"
    "document.querySelectorAll('main,.card,.kpis,.rec,h2,p').forEach(function(e){"
    "if(e.scrollWidth>e.clientWidth+1)o++;});"
    "document.body.setAttribute('data-overflow',String(o));"
    "document.body.setAttribute('data-viewport',String(window.innerWidth));})();";

static void esc(struct gi_buf *out, const char *s)
{
	fuse_html_escape(out, s ? s : "-");
}

static void fmt_axis(double v, const char *unit, char *out, size_t size)
{
	if (strcmp(unit, "bytes") == 0)
		fuse_fmt_bytes(v, out, size);
	else if (strcmp(unit, "share") == 0)
		snprintf(out, size, "%.0f%%", v * 100);
	else
		fuse_fmt_count(v, out, size);
}

/* The smallest of 1, 2, 4, 8 x 10^k at or above `x`: round axis labels. */
static double nice_ceiling(double x)
{
	if (!(x > 0))
		return 1;
	double p = pow(10, floor(log10(x)));
	static const double steps[] = {1, 2, 4, 8, 10}; /* quarters stay round */
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (steps[i] * p >= x)
			return steps[i] * p;
	return 10 * p;
}

/* The label of time `t_s` into a session started at `start_ms` (epoch ms):
 * the wall-clock time (UTC) when the start is known, else seconds. */
static void time_label(double start_ms, double t_s, bool zone, char *out, size_t size)
{
	if (!isfinite(start_ms) || start_ms <= 0) {
		snprintf(out, size, "%.0f s", t_s);
		return;
	}
	time_t t = (time_t)((start_ms + t_s * 1000.0) / 1000.0);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, size, zone ? "%H:%M:%S UTC" : "%H:%M:%S", &tm);
}

/* A line chart of series[key] against series.t_s, its time axis in wall-clock
 * time from `start_ms`. */
static void line_chart(struct gi_buf *out, json_t *series, const char *key, const char *title,
                       const char *unit, const char *colour, double start_ms)
{
	json_t *ts = json_object_get(series, "t_s"), *ys = json_object_get(series, key);
	size_t n = json_array_size(ys);
	if (json_array_size(ts) < n)
		n = json_array_size(ts);
	double tmax = 0, ymax = 0;
	for (size_t i = 0; i < n; i++) {
		double t = json_number_value(json_array_get(ts, i));
		double y = json_number_value(json_array_get(ys, i));
		if (json_is_number(json_array_get(ts, i)) && t > tmax)
			tmax = t;
		if (json_is_number(json_array_get(ys, i)) && y > ymax)
			ymax = y;
	}
	if (strcmp(unit, "share") == 0)
		ymax = 1.0;
	else if (ymax <= 0)
		ymax = 1;
	else
		ymax = nice_ceiling(ymax * 1.05);
	if (tmax <= 0)
		tmax = 1;
	double pw = CHART_W - PAD_L - PAD_R, ph = CHART_H - PAD_T - PAD_B;
	gi_buf_printf(out, "<div class=\"card\"><h3>");
	esc(out, title);
	gi_buf_printf(out,
	              "</h3><svg class=\"chart line\" data-series=\"%s\" viewBox=\"0 0 %d %d\" "
	              "width=\"100%%\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\">",
	              key, CHART_W, CHART_H);
	gi_buf_puts(out, "<g class=\"grid\">");
	for (int g = 0; g <= 4; g++) {
		double y = PAD_T + ph * g / 4.0;
		char label[32];
		fmt_axis(ymax * (4 - g) / 4.0, unit, label, sizeof(label));
		gi_buf_printf(out,
		              "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
		              "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
		              PAD_L, y, CHART_W - PAD_R, y, PAD_L - 6, y + 4, label);
	}
	char t0[32], t1[32], tm[32];
	time_label(start_ms, 0, false, t0, sizeof(t0));
	time_label(start_ms, tmax / 2, false, tm, sizeof(tm));
	time_label(start_ms, tmax, true, t1, sizeof(t1));
	gi_buf_printf(out,
	              "</g><text class=\"t-axis\" x=\"%d\" y=\"%d\">%s</text>"
	              "<text class=\"t-axis\" x=\"%.1f\" y=\"%d\" "
	              "text-anchor=\"middle\">%s</text>"
	              "<text class=\"t-axis\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>",
	              PAD_L, CHART_H - 6, t0, PAD_L + pw / 2, CHART_H - 6, tm, CHART_W - PAD_R,
	              CHART_H - 6, t1);
	if (n == 0) {
		gi_buf_printf(
		    out,
		    "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">no data</text></svg></div>",
		    CHART_W / 2, CHART_H / 2);
		return;
	}
	gi_buf_printf(out,
	              "<path class=\"mark\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\" "
	              "stroke-linejoin=\"round\" d=\"",
	              colour);
	bool pen = false;
	for (size_t i = 0; i < n; i++) {
		json_t *jy = json_array_get(ys, i), *jt = json_array_get(ts, i);
		if (!json_is_number(jy) || !json_is_number(jt)) {
			pen = false;
			continue;
		}
		double x = PAD_L + pw * json_number_value(jt) / tmax;
		double y = PAD_T + ph * (1 - json_number_value(jy) / ymax);
		gi_buf_printf(out, "%s%.1f %.1f ", pen ? "L" : "M", x, y);
		pen = true;
	}
	/* A single point still draws: a short tick. */
	if (n == 1)
		gi_buf_printf(out, "h4");
	gi_buf_puts(out, "\"/></svg></div>");
}

struct bar {
	const char *label;
	double value;
	const char *text;
};

/* A bar chart in HTML rather than SVG: its labels keep their size at any
 * width (an SVG scales them down with it) and wrap above the bars on a
 * phone. */
static void bar_chart(struct gi_buf *out, const char *title, const char *cls,
                      const struct bar *bars, size_t n, const char *colour)
{
	double max = 0;
	for (size_t i = 0; i < n; i++)
		if (isfinite(bars[i].value) && bars[i].value > max)
			max = bars[i].value;
	if (max <= 0)
		max = 1;
	gi_buf_puts(out, "<div class=\"card\"><h3>");
	esc(out, title);
	gi_buf_printf(out, "</h3><div class=\"chart bars %s\" role=\"img\">", cls);
	if (n == 0)
		gi_buf_puts(out, "<p class=\"muted\">none recorded</p>");
	for (size_t i = 0; i < n; i++) {
		double v = isfinite(bars[i].value) ? bars[i].value : 0;
		double pct = 88.0 * v / max;
		char label[2 * FUSE_MAX_NAME + 16];
		gi_fmt_mfa(bars[i].label ? bars[i].label : "?", label, sizeof(label));
		gi_buf_puts(out, "<div class=\"row\"><span class=\"l\" title=\"");
		esc(out, label);
		gi_buf_puts(out, "\">");
		esc(out, label);
		gi_buf_printf(out,
		              "</span><span class=\"b\"><span class=\"mark\" "
		              "style=\"width:%.1f%%;background:%s\"></span><span class=\"v\">",
		              pct < 0.2 ? 0.2 : pct, colour);
		esc(out, bars[i].text);
		gi_buf_puts(out, "</span></span></div>");
	}
	gi_buf_puts(out, "</div></div>");
}

static void kpi(struct gi_buf *out, const char *label, const char *value, const char *sub)
{
	gi_buf_puts(out, "<div class=\"kpi\"><span>");
	esc(out, label);
	gi_buf_puts(out, "</span><b>");
	esc(out, value);
	gi_buf_puts(out, "</b><span>");
	esc(out, sub);
	gi_buf_puts(out, "</span></div>");
}

static void put_header(struct gi_buf *out, json_t *p)
{
	json_t *s = json_object_get(p, "session");
	gi_buf_puts(out, "<header><h1>Giulia profile ");
	esc(out, gi_json_str(s, "id"));
	gi_buf_puts(out, "</h1><div class=\"meta\">node ");
	esc(out, gi_json_str(s, "node"));
	gi_buf_puts(out, " &middot; ");
	esc(out, gi_json_str(s, "status"));
	if (gi_json_str(s, "reason")) {
		gi_buf_puts(out, " (");
		esc(out, gi_json_str(s, "reason"));
		gi_buf_puts(out, ")");
	}
	double started = gi_json_num(s, "started_ms");
	if (isfinite(started)) {
		char when[64];
		time_t t = (time_t)(started / 1000);
		struct tm tm;
		gmtime_r(&t, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
		gi_buf_printf(out, " &middot; started %s", when);
	}
	double dur = gi_json_num(s, "duration_ms");
	gi_buf_printf(out, " &middot; %.1f s &middot; %.0f snapshots",
	              isfinite(dur) ? dur / 1000 : 0, gi_json_num(s, "snapshot_count"));
	size_t gaps = json_array_size(json_object_get(s, "gaps"));
	if (gaps > 0)
		gi_buf_printf(out,
		              " &middot; <b class=\"gaps\">%zu gap%s, %.0f snapshots missing</b>",
		              gaps, gaps == 1 ? "" : "s", gi_json_num(s, "snapshots_missing"));
	if (gi_json_str(s, "otp_release")) {
		gi_buf_puts(out, " &middot; OTP ");
		esc(out, gi_json_str(s, "otp_release"));
	}
	json_t *tm = json_object_get(s, "traced_modules");
	if (json_array_size(tm)) {
		gi_buf_puts(out, "<br>traced: ");
		for (size_t i = 0; i < json_array_size(tm); i++) {
			if (i)
				gi_buf_puts(out, ", ");
			esc(out, json_string_value(json_array_get(tm, i)));
		}
	}
	json_t *ex = json_object_get(p, "explained");
	if (gi_json_str(ex, "note")) {
		bool low =
		    json_is_true(json_object_get(ex, "low")) && isfinite(gi_json_num(ex, "share"));
		gi_buf_printf(out, "<div class=\"%s\" id=\"explained\">%s", low ? "gaps" : "meta",
		              low ? "<b>Mostly unattributed:</b> " : "");
		esc(out, gi_json_str(ex, "note"));
		gi_buf_puts(out, "</div>");
	}
	gi_buf_puts(out, "</div></header>");
}

static void put_kpis(struct gi_buf *out, json_t *p)
{
	json_t *m = json_object_get(p, "metrics");
	char a[32], b[32], sub[80];
	gi_buf_puts(out, "<div class=\"kpis\">");
	json_t *mem = json_object_get(m, "memory_bytes");
	fuse_fmt_bytes(gi_json_num(mem, "peak"), a, sizeof(a));
	fuse_fmt_bytes(gi_json_num(mem, "growth_bytes"), b, sizeof(b));
	snprintf(sub, sizeof(sub), "peak; growth %s", b);
	kpi(out, "memory", a, sub);
	fuse_fmt_pct(gi_json_num_path(m, "scheduler_utilisation.avg"), a, sizeof(a));
	fuse_fmt_pct(gi_json_num_path(m, "scheduler_utilisation.peak"), b, sizeof(b));
	snprintf(sub, sizeof(sub), "average; peak %s", b);
	kpi(out, "scheduler utilisation", a, sub);
	double rq = gi_json_num_path(m, "run_queue.avg");
	snprintf(a, sizeof(a), isfinite(rq) ? "%.2f" : "-", rq);
	fuse_fmt_count(gi_json_num_path(m, "run_queue.peak"), b, sizeof(b));
	snprintf(sub, sizeof(sub), "average; peak %s", b);
	kpi(out, "run queue", a, sub);
	fuse_fmt_count(gi_json_num_path(m, "reductions_per_second.avg"), a, sizeof(a));
	fuse_fmt_count(gi_json_num_path(m, "reductions_per_second.peak"), b, sizeof(b));
	snprintf(sub, sizeof(sub), "average; peak %s", b);
	kpi(out, "reductions/s", a, sub);
	fuse_fmt_count(gi_json_num_path(m, "process_count.avg"), a, sizeof(a));
	fuse_fmt_count(gi_json_num_path(m, "process_count.peak"), b, sizeof(b));
	snprintf(sub, sizeof(sub), "average; peak %s", b);
	kpi(out, "processes", a, sub);
	gi_buf_puts(out, "</div>");
}

static void put_value(struct gi_buf *out, json_t *v)
{
	char text[64];
	if (json_is_number(v)) {
		double d = json_number_value(v);
		if (d != floor(d) && fabs(d) < 10)
			snprintf(text, sizeof(text), "%.3g", d);
		else
			fuse_fmt_count(d, text, sizeof(text));
		esc(out, text);
	} else if (json_is_string(v)) {
		esc(out, json_string_value(v));
	} else if (json_is_boolean(v)) {
		gi_buf_puts(out, json_is_true(v) ? "yes" : "no");
	} else if (json_is_null(v) || !v) {
		gi_buf_puts(out, "-");
	} else {
		char *d = json_dumps(v, JSON_COMPACT);
		esc(out, d);
		free(d);
	}
}

/* Every error and note of the profile: what could not be observed. */
static void put_errors(struct gi_buf *out, json_t *errors)
{
	size_t n = json_array_size(errors);
	if (n == 0)
		return;
	gi_buf_printf(out,
	              "<h2 id=\"errors\">Errors and notes (%zu)</h2><div class=\"errors\"><p>What "
	              "could not be observed; the findings below may be incomplete.</p><ul>",
	              n);
	for (size_t i = 0; i < n; i++) {
		json_t *e = json_array_get(errors, i);
		gi_buf_puts(out, "<li>");
		if (json_is_string(e)) {
			esc(out, json_string_value(e));
		} else {
			char *d = json_dumps(e, JSON_COMPACT);
			esc(out, d);
			free(d);
		}
		gi_buf_puts(out, "</li>");
	}
	gi_buf_puts(out, "</ul></div>");
}

static void put_recommendations(struct gi_buf *out, json_t *recs)
{
	gi_buf_printf(out, "<h2 id=\"recommendations\">Recommendations (%zu)</h2>",
	              json_array_size(recs));
	if (json_array_size(recs) == 0)
		gi_buf_puts(out, "<p class=\"muted\">No rule fired on this session.</p>");
	for (size_t i = 0; i < json_array_size(recs); i++) {
		json_t *r = json_array_get(recs, i);
		const char *sev = gi_json_str(r, "severity") ? gi_json_str(r, "severity") : "low";
		gi_buf_puts(out, "<div class=\"rec ");
		esc(out, sev);
		gi_buf_printf(out, "\" data-rule=\"%.0f\"><div><span class=\"badge ",
		              gi_json_num(r, "rule"));
		esc(out, sev);
		gi_buf_puts(out, "\">");
		esc(out, sev);
		gi_buf_printf(out, "</span> <span class=\"t\">%zu. ", i + 1);
		esc(out, gi_json_str(r, "finding"));
		gi_buf_printf(out, "</span></div><div class=\"id\">rule %.0f &middot; ",
		              gi_json_num(r, "rule"));
		esc(out, gi_json_str(r, "id"));
		gi_buf_printf(out, " &middot; priority %.0f", gi_json_num(r, "priority"));
		/* Findings merged into this one (one subject, one remedy). */
		json_t *also = json_object_get(r, "also");
		for (size_t k = 0; json_is_array(also) && k < json_array_size(also); k++) {
			json_t *a = json_array_get(also, k);
			gi_buf_printf(out, " &middot; also rule %.0f ", gi_json_num(a, "rule"));
			esc(out, gi_json_str(a, "id"));
			gi_buf_puts(out, ": ");
			esc(out, gi_json_str(a, "finding"));
		}
		gi_buf_puts(out, "</div><div class=\"ev\">");
		json_t *evidence = json_object_get(r, "evidence");
		for (void *it = json_object_iter(evidence); it;
		     it = json_object_iter_next(evidence, it)) {
			const char *key = json_object_iter_key(it);
			json_t *v = json_object_iter_value(it);
			if (json_is_null(v))
				continue;
			gi_buf_puts(out, "<span><i>");
			esc(out, key);
			gi_buf_puts(out, "</i> ");
			put_value(out, v);
			gi_buf_puts(out, "</span>");
		}
		gi_buf_puts(out, "</div><div class=\"advice\">");
		esc(out, gi_json_str(r, "advice"));
		gi_buf_puts(out, "</div></div>");
	}
}

static void put_charts(struct gi_buf *out, json_t *p)
{
	json_t *series = json_object_get(p, "series");
	double start = gi_json_num_path(p, "session.started_ms");
	gi_buf_puts(out, "<h2>Over time</h2><div class=\"grid\">");
	line_chart(out, series, "run_queue", "Run queue", "count", "#d64545", start);
	line_chart(out, series, "scheduler_utilisation", "Scheduler utilisation", "share",
	           "#3f8fd2", start);
	line_chart(out, series, "memory_bytes", "Memory", "bytes", "#7a52c7", start);
	line_chart(out, series, "reductions_per_second", "Reductions per second", "count",
	           "#2f9e6e", start);
	gi_buf_puts(out, "</div>");

	struct bar bars[20];
	char texts[20][48];
	static char labels[20][2 * FUSE_MAX_NAME + 16];
	json_t *hm = json_object_get(p, "hot_modules");
	size_t n = 0;
	for (size_t i = 0; i < json_array_size(hm) && n < 20; i++, n++) {
		json_t *m = json_array_get(hm, i);
		bars[n].label = gi_json_str(m, "module");
		bars[n].value = gi_json_num(m, "reductions_share");
		fuse_fmt_pct(bars[n].value, texts[n], sizeof(texts[n]));
		bars[n].text = texts[n];
	}
	const char *basis = gi_json_str(p, "hot_modules_basis");
	bool executing = basis && strcmp(basis, "executing") == 0;
	gi_buf_puts(out, "<h2>Hot spots</h2>");
	bar_chart(out,
	          executing ? "Hot modules (executing in, sampled): share of reductions"
	                    : "Hot modules (process ownership): share of reductions",
	          "modules", bars, n, "#e07b39");
	json_t *hf = json_object_get(p, "hot_functions");
	n = 0;
	for (size_t i = 0; i < json_array_size(hf) && n < 20; i++, n++) {
		json_t *f = json_array_get(hf, i);
		gi_fmt_function(gi_json_str(f, "module"), gi_json_str(f, "function"),
		                (long long)gi_json_num(f, "arity"), labels[n], sizeof(labels[n]));
		bars[n].label = labels[n];
		bars[n].value = gi_json_num(f, "reductions_share");
		fuse_fmt_pct(bars[n].value, texts[n], sizeof(texts[n]));
		bars[n].text = texts[n];
	}
	if (n > 0)
		bar_chart(out, "Hot functions (executing in, sampled): share of reductions",
		          "functions", bars, n, "#d64545");
	json_t *hs = json_object_get(p, "trace_hotspots");
	n = 0;
	for (size_t i = 0; i < json_array_size(hs) && n < 20; i++, n++) {
		json_t *f = json_array_get(hs, i);
		bars[n].label = gi_json_str(f, "mfa");
		bars[n].value = gi_json_num(f, "calls_per_second");
		char c[32];
		fuse_fmt_count(bars[n].value, c, sizeof(c));
		snprintf(texts[n], sizeof(texts[n]), "%s calls/s", c);
		bars[n].text = texts[n];
	}
	if (n > 0)
		bar_chart(out, "Hot functions: calls per second (traced)", "functions", bars, n,
		          "#3f8fd2");
}

static void cell_num(struct gi_buf *out, double v, int kind)
{
	char t[32];
	if (kind == 1)
		fuse_fmt_bytes(v, t, sizeof(t));
	else if (kind == 2)
		fuse_fmt_pct(v, t, sizeof(t));
	else
		fuse_fmt_count(v, t, sizeof(t));
	gi_buf_puts(out, "<td class=\"n\">");
	esc(out, t);
	gi_buf_puts(out, "</td>");
}

static void cell_text(struct gi_buf *out, const char *s, const char *cls)
{
	gi_buf_printf(out, "<td%s%s%s>", cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "");
	esc(out, s);
	gi_buf_puts(out, "</td>");
}

/* A hotspot's calls; an estimate the model does not stand behind (not
 * firm, docs/RULES.md "The estimator") shows its range, marked "?", with
 * the profile's note in its title, as the text report does. */
static void cell_calls(struct gi_buf *out, json_t *f)
{
	double high = gi_json_num(f, "high");
	if (!json_is_false(json_object_get(f, "firm")) || !isfinite(high)) {
		cell_num(out, gi_json_num(f, "calls"), 0);
		return;
	}
	char lo[32], hi[32];
	fuse_fmt_count(gi_json_num(f, "low"), lo, sizeof(lo));
	fuse_fmt_count(high, hi, sizeof(hi));
	gi_buf_puts(out, "<td class=\"n\" title=\"");
	esc(out, gi_json_str(f, "estimate_note"));
	gi_buf_puts(out, "\">?");
	esc(out, lo);
	gi_buf_puts(out, "-");
	esc(out, hi);
	gi_buf_puts(out, "</td>");
}

static void put_list_cell(struct gi_buf *out, json_t *list, size_t max)
{
	gi_buf_puts(out, "<td class=\"mono\">");
	size_t n = json_array_size(list);
	for (size_t i = 0; i < n && i < max; i++) {
		if (i)
			gi_buf_puts(out, "<br>");
		esc(out, json_string_value(json_array_get(list, i)));
	}
	if (n > max)
		gi_buf_printf(out, "<br>&hellip; %zu more", n - max);
	if (n == 0)
		gi_buf_puts(out, "-");
	gi_buf_puts(out, "</td>");
}

static void put_module_table(struct gi_buf *out, json_t *hm, const char *title, const char *note)
{
	gi_buf_puts(out, "<h2>");
	esc(out, title);
	gi_buf_puts(out, "</h2><p class=\"note\">");
	esc(out, note);
	gi_buf_puts(
	    out, "</p><div class=\"tw\"><table><tr><th>module</th><th>share</th>"
	         "<th>reductions</th><th>memory</th><th title=\"snapshots the module was seen in\">"
	         "samples</th><th title=\"afferent coupling: modules that depend on it\">"
	         "Ca</th><th title=\"efferent coupling: modules it depends on\">Ce</th>"
	         "<th title=\"dependency edges into it\">in</th>"
	         "<th title=\"dependency edges out of it\">out</th>"
	         "<th title=\"total cyclomatic complexity of its functions\">complexity"
	         "</th><th>hub</th><th title=\"main sequence zone: instability against "
	         "abstractness\">zone</th>"
	         "<th>hottest functions</th></tr>");
	for (size_t i = 0; i < json_array_size(hm); i++) {
		json_t *m = json_array_get(hm, i), *g = json_object_get(m, "graph");
		gi_buf_puts(out, "<tr>");
		cell_text(out, gi_json_str(m, "module"), "mono");
		cell_num(out, gi_json_num(m, "reductions_share"), 2);
		cell_num(out, gi_json_num(m, "reductions"), 0);
		cell_num(out, gi_json_num(m, "memory_bytes"), 1);
		double smp = gi_json_num(m, "samples");
		cell_num(out, isfinite(smp) ? smp : gi_json_num(m, "sample_count"), 0);
		cell_num(out, gi_json_num(g, "ca"), 0);
		cell_num(out, gi_json_num(g, "ce"), 0);
		cell_num(out, gi_json_num(g, "in_degree"), 0);
		cell_num(out, gi_json_num(g, "out_degree"), 0);
		cell_num(out, gi_json_num(g, "complexity"), 0);
		json_t *hub = json_object_get(g, "hub");
		cell_text(out, json_is_boolean(hub) ? (json_is_true(hub) ? "yes" : "no") : "-",
		          NULL);
		cell_text(out, gi_json_str(g, "zone"), NULL);
		gi_buf_puts(out, "<td class=\"mono\">");
		json_t *hf = json_object_get(m, "hottest_functions");
		for (size_t k = 0; k < json_array_size(hf); k++) {
			json_t *f = json_array_get(hf, k);
			const char *by = gi_json_str(f, "by");
			bool sampled = by && strcmp(by, "samples") == 0;
			char v[32];
			if (sampled)
				fuse_fmt_pct(gi_json_num(f, "reductions_share"), v, sizeof(v));
			else
				fuse_fmt_count(gi_json_num(f, "calls"), v, sizeof(v));
			if (k)
				gi_buf_puts(out, "<br>");
			char fn[2 * FUSE_MAX_NAME + 16];
			gi_fmt_function(NULL, gi_json_str(f, "name") ? gi_json_str(f, "name") : "?",
			                (long long)gi_json_num(f, "arity"), fn, sizeof(fn));
			esc(out, fn);
			gi_buf_printf(out, " (%s %s)", v, sampled ? "executing" : "calls");
		}
		gi_buf_puts(out, "</td></tr>");
	}
	if (json_array_size(hm) == 0)
		gi_buf_puts(out, "<tr><td colspan=\"13\">none above 0.5% of reductions</td></tr>");
	gi_buf_puts(out, "</table></div><p class=\"legend\">share, reductions: of all reductions "
	                 "in the session; samples: snapshots the module was seen in; Ca "
	                 "(afferent): modules that depend on it; Ce (efferent): modules it "
	                 "depends on; in/out: dependency edges; zone: where instability "
	                 "Ce/(Ca+Ce) and abstractness put it.</p>");
}

static void put_function_table(struct gi_buf *out, json_t *hf)
{
	if (json_array_size(hf) == 0)
		return;
	gi_buf_puts(
	    out,
	    "<h2>Hot functions (executing in)</h2><div class=\"tw\"><table><tr><th>function</th>"
	    "<th>share</th><th>samples</th><th>calls</th><th>cyclomatic</th>"
	    "<th>owner</th></tr>");
	for (size_t i = 0; i < json_array_size(hf); i++) {
		json_t *f = json_array_get(hf, i);
		char name[2 * FUSE_MAX_NAME + 16];
		gi_fmt_function(gi_json_str(f, "module") ? gi_json_str(f, "module") : "?",
		                gi_json_str(f, "function") ? gi_json_str(f, "function") : "?",
		                (long long)gi_json_num(f, "arity"), name, sizeof(name));
		gi_buf_puts(out, "<tr>");
		cell_text(out, name, "mono");
		cell_num(out, gi_json_num(f, "reductions_share"), 2);
		cell_num(out, gi_json_num(f, "samples"), 0);
		cell_num(out, gi_json_num(f, "calls"), 0);
		cell_num(out, gi_json_num(f, "cyclomatic"), 0);
		cell_text(out, gi_json_true(f, "project") ? "project" : "platform", NULL);
		gi_buf_puts(out, "</tr>");
	}
	gi_buf_puts(out, "</table></div>");
}

static void put_tables(struct gi_buf *out, json_t *p)
{
	const char *basis = gi_json_str(p, "hot_modules_basis");
	bool executing = basis && strcmp(basis, "executing") == 0;
	put_module_table(
	    out, json_object_get(p, "hot_modules"),
	    executing ? "Hot modules (executing in)" : "Hot modules (process ownership)",
	    executing ? "Where the sampled processes executed: each sample goes to its "
	                "first frame in the project, seeing through process plumbing."
	              : "This session has no samples: modules are those that own the "
	                "busiest processes (registered name or initial call).");
	put_function_table(out, json_object_get(p, "hot_functions"));
	if (executing)
		put_module_table(out, json_object_get(p, "ownership_modules"), "Process ownership",
		                 "Reductions of processes by the module that registered or started "
		                 "them: who started the work, not where it runs.");

	json_t *hs = json_object_get(p, "trace_hotspots");
	/* call_time measured: own time, mean per call, share of traced time */
	bool timed = json_is_object(json_object_get(p, "call_time"));
	if (json_array_size(hs)) {
		gi_buf_printf(
		    out,
		    "<h2>Trace hotspots (%zu functions)</h2><div "
		    "class=\"tw\"><table><tr><th>function</th>"
		    "<th>kind</th><th>calls</th><th>calls/s</th>"
		    "<th title=\"fewest calls in one snapshot interval\">min</th>"
		    "<th title=\"mean calls per snapshot interval\">avg</th>"
		    "<th title=\"most calls in one snapshot "
		    "interval\">max</th>%s<th>cyclomatic</th><th>cognitive</th><th>callers</th>"
		    "<th>callees</th></tr>",
		    json_array_size(hs),
		    timed ? "<th>time (&micro;s)</th><th>&micro;s/call</th>"
		            "<th>time share</th><th>fan-in</th><th>hub</th>"
		          : "");
		for (size_t i = 0; i < json_array_size(hs); i++) {
			json_t *f = json_array_get(hs, i), *w = json_object_get(f, "per_window");
			gi_buf_puts(out, "<tr>");
			char mfa[2 * FUSE_MAX_NAME + 16];
			gi_fmt_mfa(gi_json_str(f, "mfa") ? gi_json_str(f, "mfa") : "-", mfa,
			           sizeof(mfa));
			cell_text(out, mfa, "mono");
			cell_text(out, gi_json_str(f, "kind"), NULL);
			cell_calls(out, f);
			cell_num(out, gi_json_num(f, "calls_per_second"), 0);
			cell_num(out, gi_json_num(w, "min"), 0);
			cell_num(out, round(gi_json_num(w, "avg")), 0);
			cell_num(out, gi_json_num(w, "max"), 0);
			if (timed) {
				json_t *hub = json_object_get(f, "module_hub");
				cell_num(out, gi_json_num(f, "time_us"), 0);
				cell_num(out, gi_json_num(f, "mean_us"), 2);
				cell_num(out, gi_json_num(f, "time_share"), 3);
				cell_num(out, gi_json_num(f, "fan_in"), 0);
				cell_text(out,
				          json_is_true(hub)    ? "yes"
				          : json_is_false(hub) ? "no"
				                               : "-",
				          NULL);
			}
			cell_num(out, gi_json_num(f, "cyclomatic"), 0);
			cell_num(out, gi_json_num(f, "cognitive"), 0);
			put_list_cell(out, json_object_get(f, "callers"), 5);
			put_list_cell(out, json_object_get(f, "callees"), 5);
			gi_buf_puts(out, "</tr>");
		}
		gi_buf_puts(out, "</table></div><p class=\"legend\">min/avg/max: calls in one "
		                 "snapshot interval; callers, callees: from the knowledge graph; "
		                 "cyclomatic and cognitive: the function's complexity.</p>");
	}

	json_t *wl = json_object_get(p, "workload");
	if (json_array_size(wl)) {
		gi_buf_puts(out,
		            "<h2>Workload of traced modules</h2><div "
		            "class=\"tw\"><table><tr><th>module</th>"
		            "<th>reads</th><th>writes</th><th>read/write</th><th>read share</th>"
		            "<th>operations/s</th><th>calls/s</th><th>pipeline helpers</th></tr>");
		for (size_t i = 0; i < json_array_size(wl); i++) {
			json_t *w = json_array_get(wl, i);
			gi_buf_puts(out, "<tr>");
			cell_text(out, gi_json_str(w, "module"), "mono");
			cell_num(out, gi_json_num(w, "reads"), 0);
			cell_num(out, gi_json_num(w, "writes"), 0);
			cell_num(out, gi_json_num(w, "read_write_ratio"), 0);
			cell_num(out, gi_json_num(w, "read_share"), 2);
			cell_num(out, gi_json_num(w, "operations_per_second"), 0);
			cell_num(out, gi_json_num(w, "calls_per_second"), 0);
			cell_num(out, gi_json_num(w, "pipeline"), 0);
			gi_buf_puts(out, "</tr>");
		}
		gi_buf_puts(out, "</table></div>");
		json_t *po = json_object_get(p, "pipeline_overhead");
		double ratio = gi_json_num(po, "ratio");
		if (isfinite(ratio) && gi_json_num(po, "helper_calls") > 0)
			gi_buf_printf(out,
			              "<p>Pipeline overhead: %.0f helper calls for %.0f database "
			              "operations (%.2f per operation).</p>",
			              gi_json_num(po, "helper_calls"),
			              gi_json_num(po, "db_operations"), ratio);
	}
}

int fuse_report_html(json_t *profile, struct gi_buf *dst)
{
	if (!json_is_object(profile) || !dst)
		return GI_EINVAL;
	struct gi_buf local, *out = &local;
	gi_buf_init(&local, 0);
	gi_buf_puts(out, "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
	                 "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
	                 "<title>Giulia profile ");
	esc(out, gi_json_str_path(profile, "session.id"));
	gi_buf_printf(out, "</title><style>%s</style></head><body data-charts-rendered=\"0\">",
	              style);
	put_header(out, profile);
	gi_buf_puts(out, "<main>");
	put_kpis(out, profile);
	put_errors(out, json_object_get(profile, "errors"));
	put_recommendations(out, json_object_get(profile, "recommendations"));
	put_charts(out, profile);
	put_tables(out, profile);
	json_t *g = json_object_get(profile, "graph");
	if (json_is_object(g) && !gi_json_true(g, "answered"))
		gi_buf_puts(out,
		            "<p class=\"muted\">No knowledge graph for this node: graph columns "
		            "are empty. Index the project with <code>giulia index</code> to fill "
		            "them.</p>");
	gi_buf_printf(out, "</main><script>%s</script></body></html>\n", script);
	int rc = gi_buf_append(dst, local.data ? local.data : "", local.len);
	gi_buf_destroy(&local);
	return rc;
}
