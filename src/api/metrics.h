/*
 * metrics.h - Prometheus / OpenMetrics text exposition (docs/API.md,
 * "GET /metrics"): a writer that the monitor's and the worker's /metrics
 * routes fill family by family.
 *
 * Two formats from one writer: the Prometheus text format 0.0.4 (the
 * default) and OpenMetrics 1.0 (asked for with `Accept:
 * application/openmetrics-text`). They differ in how a counter's family is
 * named (OpenMetrics drops `_total` from its TYPE line), in the escaping of
 * HELP text and in the closing `# EOF`.
 *
 * Invariants the writer keeps, whatever its callers pass:
 *  - every family gets its HELP and TYPE lines once, before its samples, and
 *    the samples of a family are contiguous (callers open a family, write
 *    all its samples, then open the next one);
 *  - label values are escaped (backslash, double quote, newline) and bytes
 *    that are not valid UTF-8 become '?', so that a node or module name from
 *    outside can never break a line or the format;
 *  - a sample whose value is NaN (unknown) is left out rather than written;
 *  - at most `max_series` samples are written per exposition; the rest are
 *    counted in `dropped` (written by api_metrics_finish as
 *    giulia_metrics_series_dropped).
 *
 * Not thread-safe: one writer per request.
 */
#ifndef GIULIA_API_METRICS_H
#define GIULIA_API_METRICS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"

#define API_METRICS_SERIES_MAX 50000 /* samples per exposition */

#define API_METRICS_CONTENT_TYPE_PROMETHEUS "text/plain; version=0.0.4; charset=utf-8"
#define API_METRICS_CONTENT_TYPE_OPENMETRICS \
	"application/openmetrics-text; version=1.0.0; charset=utf-8"

enum api_metrics_format { API_METRICS_PROMETHEUS, API_METRICS_OPENMETRICS };

enum api_metrics_type {
	API_METRICS_GAUGE,
	API_METRICS_COUNTER, /* the family name has no `_total`; samples get it */
	API_METRICS_HISTOGRAM,
	API_METRICS_SUMMARY,
};

struct api_metrics {
	struct gi_buf out;
	enum api_metrics_format format;
	enum api_metrics_type type; /* of the open family */
	char family[128];           /* the open family's name */
	size_t series, max_series, dropped;
};

/* The format an Accept header asks for (NULL: Prometheus text). OpenMetrics
 * when the header names application/openmetrics-text with a q above 0. */
enum api_metrics_format api_metrics_negotiate(const char *accept);
/* The Content-Type of a format (static string). */
const char *api_metrics_content_type(enum api_metrics_format format);

/* Prepares an empty writer; max_series 0 means API_METRICS_SERIES_MAX. */
void api_metrics_init(struct api_metrics *mx, enum api_metrics_format format, size_t max_series);
/* Releases the writer's text. */
void api_metrics_destroy(struct api_metrics *mx);

/* Opens family `name` ([a-z_:][a-z0-9_:]*, a counter's without `_total`)
 * with its HELP text (borrowed). */
void api_metrics_family(struct api_metrics *mx, const char *name, enum api_metrics_type type,
                        const char *help);
/* One sample of the open family: its name is the family's plus `suffix`
 * ("" for gauges, "_total" is added for counters by this function, "_bucket",
 * "_sum", "_count" for histograms and summaries); `labels` is NULL or a
 * NULL-terminated list of name, value pairs (borrowed). NaN values are
 * skipped. */
void api_metrics_sample(struct api_metrics *mx, const char *suffix, const char *const *labels,
                        double value);
/* A histogram's samples from cumulative-free bucket counts: `bounds` (n
 * upper bounds, ascending, in the family's unit) and `counts` (n + 1 counts,
 * the last for values above every bound), with `sum` of the observed values. */
void api_metrics_histogram(struct api_metrics *mx, const char *const *labels, const double *bounds,
                           const unsigned long long *counts, size_t n, double sum);
/* process_cpu_seconds_total, process_resident_memory_bytes,
 * process_virtual_memory_bytes, process_start_time_seconds and
 * process_open_fds of this process (from /proc), the names every
 * Prometheus exporter uses for them. */
void api_metrics_process(struct api_metrics *mx);
/* Closes the exposition (the dropped-series gauge, then `# EOF` in
 * OpenMetrics) and hands the text to the caller (gi_free); *len_out its
 * length. The writer is empty afterwards. */
char *api_metrics_finish(struct api_metrics *mx, size_t *len_out);

#endif
