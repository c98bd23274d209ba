/*
 * metrics.c - Prometheus / OpenMetrics text exposition (see metrics.h).
 *
 * Numbers are written as integers when they are whole, else with 15
 * significant digits when that reads back exactly (so that `le="0.0025"`
 * stays that, not 0.0025000000000000001), else 17; infinities as +Inf /
 * -Inf. Label values are escaped here; label names and family names
 * are our own constants.
 */
#include "api/metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <dirent.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/fs.h"
#include "base/str.h"

enum api_metrics_format api_metrics_negotiate(const char *accept)
{
	const char *p = accept;
	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		while (n > 0 && (*p == ' ' || *p == '\t')) {
			p++;
			n--;
		}
		static const char OM[] = "application/openmetrics-text";
		if (n >= sizeof(OM) - 1 && strncasecmp(p, OM, sizeof(OM) - 1) == 0) {
			/* q=0 means "not this one". */
			const char *q = NULL;
			for (size_t i = 0; i + 2 < n; i++)
				if ((p[i] == 'q' || p[i] == 'Q') && p[i + 1] == '=') {
					q = p + i + 2;
					break;
				}
			if (!q || strtod(q, NULL) > 0)
				return API_METRICS_OPENMETRICS;
		}
		p = end ? end + 1 : NULL;
	}
	return API_METRICS_PROMETHEUS;
}

const char *api_metrics_content_type(enum api_metrics_format format)
{
	return format == API_METRICS_OPENMETRICS ? API_METRICS_CONTENT_TYPE_OPENMETRICS
	                                         : API_METRICS_CONTENT_TYPE_PROMETHEUS;
}

void api_metrics_init(struct api_metrics *mx, enum api_metrics_format format, size_t max_series)
{
	memset(mx, 0, sizeof(*mx));
	gi_buf_init(&mx->out, 0);
	mx->format = format;
	mx->max_series = max_series ? max_series : API_METRICS_SERIES_MAX;
}

void api_metrics_destroy(struct api_metrics *mx)
{
	gi_buf_destroy(&mx->out);
}

static void put_number(struct gi_buf *b, double v)
{
	if (isinf(v)) {
		gi_buf_puts(b, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	char text[40];
	if (v == floor(v) && fabs(v) < 9007199254740992.0) {
		snprintf(text, sizeof(text), "%.0f", v);
		gi_buf_puts(b, strcmp(text, "-0") == 0 ? "0" : text);
		return;
	}
	/* 15 significant digits read back exactly for most values (and give
	 * 0.0025 for 0.0025); the rest need 17. */
	snprintf(text, sizeof(text), "%.15g", v);
	if (strtod(text, NULL) != v)
		snprintf(text, sizeof(text), "%.17g", v);
	gi_buf_puts(b, text);
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when it is not one. */
static size_t utf8_sequence(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	size_t n = (s[0] & 0xE0) == 0xC0   ? 2
	           : (s[0] & 0xF0) == 0xE0 ? 3
	           : (s[0] & 0xF8) == 0xF0 ? 4
	                                   : 0;
	if (n == 0 || (n == 2 && s[0] < 0xC2) || (n == 4 && s[0] > 0xF4))
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	if (n == 3 && s[0] == 0xE0 && s[1] < 0xA0)
		return 0; /* overlong */
	if (n == 3 && s[0] == 0xED && s[1] >= 0xA0)
		return 0; /* surrogate */
	if (n == 4 && s[0] == 0xF0 && s[1] < 0x90)
		return 0;
	if (n == 4 && s[0] == 0xF4 && s[1] >= 0x90)
		return 0;
	return n;
}

/* Appends `s` escaped for a label value (quotes == true) or HELP text. */
static void put_escaped(struct gi_buf *b, const char *s, bool quotes)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		/* Plain printable ASCII in one append: the common case. */
		size_t run = 0;
		while (p[run] >= 0x20 && p[run] < 0x7F && p[run] != '\\' && p[run] != '"')
			run++;
		if (run > 0) {
			gi_buf_append(b, p, run);
			p += run;
			continue;
		}
		if (*p == '\\') {
			gi_buf_puts(b, "\\\\");
			p++;
		} else if (*p == '\n') {
			gi_buf_puts(b, "\\n");
			p++;
		} else if (*p == '"' && quotes) {
			gi_buf_puts(b, "\\\"");
			p++;
		} else if (*p < 0x20 || *p == 0x7F) {
			gi_buf_puts(b, "?"); /* control characters: nothing a reader needs */
			p++;
		} else {
			size_t n = utf8_sequence(p);
			if (n == 0) {
				gi_buf_puts(b, "?");
				p++;
			} else {
				gi_buf_append(b, p, n);
				p += n;
			}
		}
	}
}

void api_metrics_family(struct api_metrics *mx, const char *name, enum api_metrics_type type,
                        const char *help)
{
	static const char *const TYPES[] = {"gauge", "counter", "histogram", "summary"};
	gi_strlcpy(mx->family, name, sizeof(mx->family));
	mx->type = type;
	/* Prometheus 0.0.4 names a counter's family by its sample name. */
	const char *suffix =
	    type == API_METRICS_COUNTER && mx->format == API_METRICS_PROMETHEUS ? "_total" : "";
	gi_buf_printf(&mx->out, "# HELP %s%s ", name, suffix);
	put_escaped(&mx->out, help, mx->format == API_METRICS_OPENMETRICS);
	gi_buf_printf(&mx->out, "\n# TYPE %s%s %s\n", name, suffix, TYPES[type]);
}

void api_metrics_sample(struct api_metrics *mx, const char *suffix, const char *const *labels,
                        double value)
{
	if (isnan(value))
		return;
	if (mx->series >= mx->max_series) {
		mx->dropped++;
		return;
	}
	mx->series++;
	struct gi_buf *b = &mx->out;
	gi_buf_puts(b, mx->family);
	gi_buf_puts(b, mx->type == API_METRICS_COUNTER ? "_total" : (suffix ? suffix : ""));
	if (labels && labels[0]) {
		gi_buf_puts(b, "{");
		for (size_t i = 0; labels[i] && labels[i + 1]; i += 2) {
			if (i)
				gi_buf_puts(b, ",");
			gi_buf_puts(b, labels[i]);
			gi_buf_puts(b, "=\"");
			put_escaped(b, labels[i + 1], true);
			gi_buf_puts(b, "\"");
		}
		gi_buf_puts(b, "}");
	}
	gi_buf_puts(b, " ");
	put_number(b, value);
	gi_buf_puts(b, "\n");
}

#define LABELS_MAX 16

void api_metrics_histogram(struct api_metrics *mx, const char *const *labels, const double *bounds,
                           const unsigned long long *counts, size_t n, double sum)
{
	/* The caller's labels plus le, in one list. */
	const char *with_le[2 * LABELS_MAX + 3];
	size_t k = 0;
	for (size_t i = 0; labels && labels[i] && labels[i + 1] && k < 2 * LABELS_MAX; i += 2) {
		with_le[k++] = labels[i];
		with_le[k++] = labels[i + 1];
	}
	char le[40];
	with_le[k] = "le";
	with_le[k + 1] = le;
	with_le[k + 2] = NULL;
	unsigned long long cumulative = 0;
	for (size_t i = 0; i <= n; i++) {
		cumulative += counts[i];
		if (i < n) {
			struct gi_buf tmp;
			gi_buf_init(&tmp, 0);
			put_number(&tmp, bounds[i]);
			gi_strlcpy(le, gi_buf_str(&tmp), sizeof(le));
			gi_buf_destroy(&tmp);
		} else {
			gi_strlcpy(le, "+Inf", sizeof(le));
		}
		api_metrics_sample(mx, "_bucket", with_le, (double)cumulative);
	}
	api_metrics_sample(mx, "_sum", labels, sum);
	api_metrics_sample(mx, "_count", labels, (double)cumulative);
}

char *api_metrics_finish(struct api_metrics *mx, size_t *len_out)
{
	size_t dropped = mx->dropped;
	mx->max_series = (size_t)-1; /* the dropped gauge itself always fits */
	api_metrics_family(mx, "giulia_metrics_series_dropped", API_METRICS_GAUGE,
	                   "Samples left out of this exposition by the series cap.");
	api_metrics_sample(mx, "", NULL, (double)dropped);
	if (mx->format == API_METRICS_OPENMETRICS)
		gi_buf_puts(&mx->out, "# EOF\n");
	*len_out = mx->out.len;
	char *text = gi_buf_take(&mx->out);
	if (!text) {
		text = gi_strdup("");
		*len_out = 0;
	}
	return text;
}

/* Fields 14 (utime), 15 (stime), 22 (starttime) of /proc/self/stat, in clock
 * ticks; false when unreadable. */
static bool proc_stat(double *cpu_s, double *start_s)
{
	char *text = NULL;
	size_t len = 0;
	if (gi_fs_read_file("/proc/self/stat", 4096, &text, &len) != 0)
		return false;
	/* The command name (field 2) may hold spaces: count from its ')'. */
	const char *p = strrchr(text, ')');
	unsigned long long utime = 0, stime = 0, start = 0;
	int field = 2;
	bool ok = false;
	for (; p && *p; p++) {
		if (*p != ' ')
			continue;
		field++;
		if (field == 14)
			utime = strtoull(p + 1, NULL, 10);
		else if (field == 15)
			stime = strtoull(p + 1, NULL, 10);
		else if (field == 22) {
			start = strtoull(p + 1, NULL, 10);
			ok = true;
			break;
		}
	}
	gi_free(text);
	long hz = sysconf(_SC_CLK_TCK);
	if (!ok || hz <= 0)
		return false;
	*cpu_s = (double)(utime + stime) / (double)hz;
	/* starttime is after boot: add the boot time from /proc/stat. */
	*start_s = NAN;
	if (gi_fs_read_file("/proc/stat", 1 << 20, &text, &len) == 0) {
		const char *b = strstr(text, "\nbtime ");
		if (b)
			*start_s = (double)strtoull(b + 7, NULL, 10) + (double)start / (double)hz;
		gi_free(text);
	}
	return true;
}

void api_metrics_process(struct api_metrics *mx)
{
	double cpu = NAN, start = NAN, rss = NAN, vsz = NAN, fds = NAN;
	proc_stat(&cpu, &start);
	char *text = NULL;
	size_t len = 0;
	if (gi_fs_read_file("/proc/self/statm", 256, &text, &len) == 0) {
		char *end = NULL;
		double pages = (double)strtoull(text, &end, 10);
		double resident = end ? (double)strtoull(end, NULL, 10) : NAN;
		double page = (double)sysconf(_SC_PAGESIZE);
		vsz = pages * page;
		rss = resident * page;
		gi_free(text);
	}
	DIR *d = opendir("/proc/self/fd");
	if (d) {
		fds = 0;
		struct dirent *e;
		while ((e = readdir(d)))
			fds += e->d_name[0] != '.';
		closedir(d);
		fds -= 1; /* the directory stream itself */
	}
	api_metrics_family(mx, "process_cpu_seconds", API_METRICS_COUNTER,
	                   "User and system CPU time of this process in seconds.");
	api_metrics_sample(mx, "", NULL, cpu);
	api_metrics_family(mx, "process_resident_memory_bytes", API_METRICS_GAUGE,
	                   "Resident memory of this process in bytes.");
	api_metrics_sample(mx, "", NULL, rss);
	api_metrics_family(mx, "process_virtual_memory_bytes", API_METRICS_GAUGE,
	                   "Virtual memory of this process in bytes.");
	api_metrics_sample(mx, "", NULL, vsz);
	api_metrics_family(mx, "process_start_time_seconds", API_METRICS_GAUGE,
	                   "Start time of this process since the Unix epoch in seconds.");
	api_metrics_sample(mx, "", NULL, start);
	api_metrics_family(mx, "process_open_fds", API_METRICS_GAUGE,
	                   "Open file descriptors of this process.");
	api_metrics_sample(mx, "", NULL, fds);
}
