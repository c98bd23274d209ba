/*
 * alert_rules.h - the monitor's alert rules: the built-in set, a rule file
 * that replaces or extends it (docs/ALERTS.md), and their evaluation on a
 * node's latest snapshot and history.
 *
 * A rule watches one metric. A "level" rule compares the latest snapshot's
 * value with a warning and a critical threshold (above them, or below them
 * with "direction": "below"; thresholds of "per": "scheduler" rules are
 * multiplied by the node's schedulers online). A "trend" rule compares the
 * rise of the metric over the kept history (change_pct of
 * api_stats_metric_trend) with its thresholds, once at least min_points
 * points exist and, with min_last, while the last value is at least that.
 *
 * The rule file is outside input: it is read whole (at most
 * API_ALERT_RULES_FILE_MAX bytes), every field is checked (unknown keys,
 * metrics, duplicate names, non-finite or disordered thresholds are
 * refused with a message naming the rule and the field), and nothing of it
 * reaches a target node.
 *
 * A rule set is immutable once built: evaluation is thread-safe.
 */
#ifndef GIULIA_API_ALERT_RULES_H
#define GIULIA_API_ALERT_RULES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define API_ALERT_RULES_FILE_MAX (64 * 1024)
#define API_ALERT_RULES_MAX      64
#define API_ALERT_NAME_MAX       63
#define API_ALERT_SUMMARY_MAX    200

struct api_alert_rules;
struct api_history;

/* The built-in rules (docs/ALERTS.md); static, never freed. */
const struct api_alert_rules *api_alert_rules_builtin(void);

/* Parses a rule file's text (borrowed). *out: free with api_alert_rules_free.
 * GI_EINVAL (or GI_ETOOBIG past the size cap) with a message in err. */
int api_alert_rules_parse(const char *text, size_t len, struct api_alert_rules **out, char *err,
                          size_t errsize);
/* Reads and parses the file at `path`; errors name the file. GI_EIO when it
 * cannot be read. */
int api_alert_rules_load(const char *path, struct api_alert_rules **out, char *err, size_t errsize);
/* NULL and the built-in set do nothing. */
void api_alert_rules_free(struct api_alert_rules *r);

/* How many rules, and the name of rule i (borrowed from the set). */
size_t api_alert_rules_count(const struct api_alert_rules *r);
const char *api_alert_rules_name(const struct api_alert_rules *r, size_t i);

/* The alerts that fire on the latest snapshot `snap` and the history
 * `points` (api_stats_point objects, newest last; may be NULL), both
 * borrowed: [{rule, severity, metric, value, threshold, message}], in the
 * rules' order (caller decrefs). */
json_t *api_alert_rules_eval(const struct api_alert_rules *r, json_t *snap, json_t *points);
/* The same over a compact history (runtime_stats.h; borrowed, may be NULL). */
json_t *api_alert_rules_eval_history(const struct api_alert_rules *r, json_t *snap,
                                     const struct api_history *h);
/* The same with the snapshot already parsed into `v` (borrowed; NULL: it
 * could not be, or there is no snapshot): nothing of it is parsed again. */
struct obs_view;
json_t *api_alert_rules_eval_view(const struct api_alert_rules *r, const struct obs_view *v,
                                  const struct api_history *h);

#endif
