/*
 * alert_rules.c - built-in alert rules, the rule file parser and the
 * evaluation (see alert_rules.h, docs/ALERTS.md).
 *
 * Level metrics are read from the snapshot through its typed view; trend
 * metrics are the keys of the history points (api_stats_point). The two
 * tables below are the whole vocabulary a rule file may use.
 */
#include "api/alert_rules.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api/runtime_stats.h"
#include "base/alloc.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/str.h"
#include "observe/snapshot_view.h"

enum rule_kind { RULE_LEVEL, RULE_TREND };

struct rule {
	char name[API_ALERT_NAME_MAX + 1];
	const char *metric; /* static: a name of LEVEL_METRICS or TREND_METRICS */
	enum rule_kind kind;
	bool below;               /* level: fires at or below the thresholds */
	bool per_scheduler;       /* level: thresholds are per scheduler online */
	double warning, critical; /* NAN: not set (at least one is) */
	long min_points;          /* trend */
	double min_last;          /* trend: NAN, or the last value must be at least this */
	char summary[API_ALERT_SUMMARY_MAX + 1]; /* what the metric is, for messages */
};

struct api_alert_rules {
	struct rule rules[API_ALERT_RULES_MAX];
	size_t n;
};

/* ---- vocabulary ---- */

struct level_metric {
	const char *name, *summary;
};

static const struct level_metric LEVEL_METRICS[] = {
    {"scheduler_utilisation", "scheduler utilisation"},
    {"run_queue", "run queue length"},
    {"max_message_queue", "longest process message queue"},
    {"processes", "process count / limit"},
    {"atoms", "atom count / limit"},
    {"ports", "port count / limit"},
    {"process_count", "process count"},
    {"atom_count", "atom count"},
    {"port_count", "port count"},
    {"ets_tables", "ETS table count"},
    {"memory_total", "total memory (bytes)"},
    {"memory_processes", "process memory (bytes)"},
    {"memory_binary", "binary memory (bytes)"},
    {"memory_ets", "ETS memory (bytes)"},
    {"memory_atom", "atom memory (bytes)"},
    {"memory_code", "code memory (bytes)"},
    {"memory_system", "system memory (bytes)"},
    {"reductions_per_second", "reductions per second"},
    {"gc_per_second", "garbage collections per second"},
    {NULL, NULL},
};

/* The keys of a history point that trends are computed on. */
static const char *const TREND_METRICS[] = {
    "scheduler_utilisation", "run_queue",     "processes",  "memory_total",
    "memory_processes",      "memory_binary", "memory_ets", "reductions_per_second",
    "max_message_queue",     "atoms",         "ets_tables", NULL,
};

static double ratio(double count, double limit)
{
	return isnan(count) || isnan(limit) || limit <= 0 ? NAN : count / limit;
}

static double level_value(const char *metric, const struct obs_view *v)
{
	if (strcmp(metric, "scheduler_utilisation") == 0)
		return v->utilisation_total;
	if (strcmp(metric, "run_queue") == 0)
		return v->run_queue_total;
	if (strcmp(metric, "max_message_queue") == 0)
		return api_stats_max_message_queue_of_view(v);
	if (strcmp(metric, "processes") == 0)
		return ratio(v->processes_count, v->processes_limit);
	if (strcmp(metric, "atoms") == 0)
		return ratio(v->atoms_count, v->atoms_limit);
	if (strcmp(metric, "ports") == 0)
		return ratio(v->ports_count, v->ports_limit);
	if (strcmp(metric, "process_count") == 0)
		return v->processes_count;
	if (strcmp(metric, "atom_count") == 0)
		return v->atoms_count;
	if (strcmp(metric, "port_count") == 0)
		return v->ports_count;
	if (strcmp(metric, "ets_tables") == 0)
		return v->ets_count;
	if (strcmp(metric, "memory_total") == 0)
		return v->memory.total - obs_view_observer_memory(v);
	if (strcmp(metric, "memory_processes") == 0)
		return v->memory.processes - obs_view_observer_memory(v);
	if (strcmp(metric, "memory_binary") == 0)
		return v->memory.binary;
	if (strcmp(metric, "memory_ets") == 0)
		return v->memory.ets;
	if (strcmp(metric, "memory_atom") == 0)
		return v->memory.atom;
	if (strcmp(metric, "memory_code") == 0)
		return v->memory.code;
	if (strcmp(metric, "memory_system") == 0)
		return v->memory.system;
	if (strcmp(metric, "reductions_per_second") == 0)
		return v->reductions_per_second;
	if (strcmp(metric, "gc_per_second") == 0)
		return v->window_ms > 0 ? v->gc_count * 1000.0 / v->window_ms : NAN;
	return NAN;
}

static const char *level_metric_find(const char *name, const char **summary)
{
	for (size_t i = 0; LEVEL_METRICS[i].name; i++)
		if (strcmp(LEVEL_METRICS[i].name, name) == 0) {
			*summary = LEVEL_METRICS[i].summary;
			return LEVEL_METRICS[i].name;
		}
	return NULL;
}

static const char *trend_metric_find(const char *name)
{
	for (size_t i = 0; TREND_METRICS[i]; i++)
		if (strcmp(TREND_METRICS[i], name) == 0)
			return TREND_METRICS[i];
	return NULL;
}

/* ---- built-in rules (docs/ALERTS.md; the table of GET /api/runtime/alerts) ---- */

static const struct api_alert_rules BUILTIN = {
    {
        {"scheduler_utilisation_high", "scheduler_utilisation", RULE_LEVEL, false, false, 0.75, 0.9,
         0, NAN, "scheduler utilisation"},
        {"run_queue_long", "run_queue", RULE_LEVEL, false, true, 2, 4, 0, NAN, "run queue length"},
        {"message_queue_long", "max_message_queue", RULE_LEVEL, false, false, 1000, 10000, 0, NAN,
         "longest process message queue"},
        {"process_limit_near", "processes", RULE_LEVEL, false, false, 0.8, 0.9, 0, NAN,
         "process count / limit"},
        {"atom_limit_near", "atoms", RULE_LEVEL, false, false, 0.8, 0.9, 0, NAN,
         "atom count / limit"},
        {"port_limit_near", "ports", RULE_LEVEL, false, false, 0.8, 0.9, 0, NAN,
         "port count / limit"},
        {"memory_growing", "memory_total", RULE_TREND, false, false, 20, NAN, 5, NAN, "memory"},
        {"message_queue_growing", "max_message_queue", RULE_TREND, false, false, 50, NAN, 5, 100,
         "the longest message queue"},
    },
    8,
};

const struct api_alert_rules *api_alert_rules_builtin(void)
{
	return &BUILTIN;
}

void api_alert_rules_free(struct api_alert_rules *r)
{
	if (r && r != &BUILTIN)
		gi_free(r);
}

size_t api_alert_rules_count(const struct api_alert_rules *r)
{
	return r ? r->n : 0;
}

const char *api_alert_rules_name(const struct api_alert_rules *r, size_t i)
{
	return r && i < r->n ? r->rules[i].name : NULL;
}

/* ---- parsing ---- */

static bool name_valid(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > API_ALERT_NAME_MAX || !(s[0] >= 'a' && s[0] <= 'z'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

static bool summary_valid(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7F)
			return false;
	return strlen(s) <= API_ALERT_SUMMARY_MAX;
}

/* A finite number field, or NAN when absent; false for a wrong type. */
static bool number_field(json_t *o, const char *key, double *out)
{
	json_t *v = json_object_get(o, key);
	*out = NAN;
	if (!v || json_is_null(v))
		return true;
	if (!json_is_number(v) || !isfinite(json_number_value(v)))
		return false;
	*out = json_number_value(v);
	return true;
}

static const char *const RULE_KEYS[] = {"name",     "metric",  "kind",     "direction",
                                        "per",      "warning", "critical", "min_points",
                                        "min_last", "summary", NULL};

#define FAIL(...)                                    \
	do {                                         \
		snprintf(err, errsize, __VA_ARGS__); \
		return GI_EINVAL;                    \
	} while (0)

static int rule_parse(json_t *o, size_t index, struct rule *r, char *err, size_t errsize)
{
	memset(r, 0, sizeof(*r));
	if (!json_is_object(o))
		FAIL("rule %zu: must be an object", index + 1);
	const char *key;
	json_t *val;
	json_object_foreach(o, key, val)
	{
		bool known = false;
		for (size_t i = 0; RULE_KEYS[i]; i++)
			known = known || strcmp(RULE_KEYS[i], key) == 0;
		if (!known)
			FAIL("rule %zu: unknown field \"%.64s\"", index + 1, key);
	}
	const char *name = json_string_value(json_object_get(o, "name"));
	if (!name || !name_valid(name))
		FAIL(
		    "rule %zu: \"name\" must be 1-%d characters of a-z, 0-9 and _, starting with a "
		    "letter",
		    index + 1, API_ALERT_NAME_MAX);
	gi_strlcpy(r->name, name, sizeof(r->name));
	json_t *kind = json_object_get(o, "kind");
	const char *ks = kind ? json_string_value(kind) : "level";
	if (!ks || (strcmp(ks, "level") != 0 && strcmp(ks, "trend") != 0))
		FAIL("rule \"%s\": \"kind\" must be \"level\" or \"trend\"", name);
	r->kind = strcmp(ks, "trend") == 0 ? RULE_TREND : RULE_LEVEL;
	const char *metric = json_string_value(json_object_get(o, "metric"));
	const char *summary = NULL;
	if (!metric)
		FAIL("rule \"%s\": \"metric\" is required", name);
	r->metric =
	    r->kind == RULE_LEVEL ? level_metric_find(metric, &summary) : trend_metric_find(metric);
	if (!r->metric)
		FAIL("rule \"%s\": unknown %s metric \"%.64s\" (docs/ALERTS.md lists them)", name,
		     ks, metric);
	json_t *dir = json_object_get(o, "direction");
	if (dir) {
		const char *d = json_string_value(dir);
		if (!d || (strcmp(d, "above") != 0 && strcmp(d, "below") != 0))
			FAIL("rule \"%s\": \"direction\" must be \"above\" or \"below\"", name);
		if (r->kind == RULE_TREND && strcmp(d, "below") == 0)
			FAIL("rule \"%s\": trend rules fire on growth: \"direction\" must be "
			     "\"above\"",
			     name);
		r->below = strcmp(d, "below") == 0;
	}
	json_t *per = json_object_get(o, "per");
	if (per) {
		const char *p = json_string_value(per);
		if (!p || strcmp(p, "scheduler") != 0 || r->kind != RULE_LEVEL)
			FAIL("rule \"%s\": \"per\" can only be \"scheduler\", on a level rule",
			     name);
		r->per_scheduler = true;
	}
	if (!number_field(o, "warning", &r->warning) || !number_field(o, "critical", &r->critical))
		FAIL("rule \"%s\": \"warning\" and \"critical\" must be finite numbers", name);
	if (isnan(r->warning) && isnan(r->critical))
		FAIL("rule \"%s\": give \"warning\", \"critical\" or both", name);
	if (!isnan(r->warning) && !isnan(r->critical) &&
	    (r->below ? r->critical > r->warning : r->critical < r->warning))
		FAIL("rule \"%s\": \"critical\" must be %s \"warning\"", name,
		     r->below ? "at most" : "at least");
	double mp, ml;
	if (!number_field(o, "min_points", &mp) || !number_field(o, "min_last", &ml))
		FAIL("rule \"%s\": \"min_points\" and \"min_last\" must be finite numbers", name);
	if (r->kind == RULE_LEVEL && (!isnan(mp) || !isnan(ml)))
		FAIL("rule \"%s\": \"min_points\" and \"min_last\" belong to trend rules", name);
	if (!isnan(mp) && (mp != floor(mp) || mp < 2 || mp > 720))
		FAIL("rule \"%s\": \"min_points\" must be a whole number from 2 to 720", name);
	r->min_points = isnan(mp) ? 5 : (long)mp;
	r->min_last = ml;
	json_t *sum = json_object_get(o, "summary");
	if (sum && (!json_is_string(sum) || !summary_valid(json_string_value(sum))))
		FAIL("rule \"%s\": \"summary\" must be text of at most %d characters without "
		     "control characters",
		     name, API_ALERT_SUMMARY_MAX);
	gi_strlcpy(r->summary,
	           sum       ? json_string_value(sum)
	           : summary ? summary
	                     : metric,
	           sizeof(r->summary));
	return 0;
}

static int rules_add(struct api_alert_rules *set, const struct rule *r, bool replace, char *err,
                     size_t errsize)
{
	for (size_t i = 0; i < set->n; i++)
		if (strcmp(set->rules[i].name, r->name) == 0) {
			if (!replace)
				FAIL("rule \"%s\" is defined twice", r->name);
			set->rules[i] = *r;
			return 0;
		}
	if (set->n == API_ALERT_RULES_MAX)
		FAIL("at most %d rules", API_ALERT_RULES_MAX);
	set->rules[set->n++] = *r;
	return 0;
}

int api_alert_rules_parse(const char *text, size_t len, struct api_alert_rules **out, char *err,
                          size_t errsize)
{
	*out = NULL;
	if (len > API_ALERT_RULES_FILE_MAX) {
		snprintf(err, errsize, "the rule file is over %d bytes", API_ALERT_RULES_FILE_MAX);
		return GI_ETOOBIG;
	}
	json_error_t je;
	json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!doc) {
		snprintf(err, errsize, "not JSON (line %d, column %d): %.120s", je.line, je.column,
		         je.text);
		return GI_EINVAL;
	}
	struct api_alert_rules *set = gi_calloc(1, sizeof(*set));
	struct api_alert_rules *file = gi_calloc(1, sizeof(*file));
	int rc = GI_EINVAL;
	if (!json_is_object(doc)) {
		snprintf(err, errsize, "the rule file must be a JSON object");
		goto out;
	}
	const char *key;
	json_t *val;
	json_object_foreach(doc, key, val)
	{
		if (strcmp(key, "version") != 0 && strcmp(key, "builtin") != 0 &&
		    strcmp(key, "rules") != 0) {
			snprintf(err, errsize, "unknown top-level field \"%.64s\"", key);
			goto out;
		}
	}
	json_t *version = json_object_get(doc, "version");
	if (!json_is_integer(version) || json_integer_value(version) != 1) {
		snprintf(err, errsize, "\"version\" must be 1");
		goto out;
	}
	json_t *builtin = json_object_get(doc, "builtin");
	if (builtin && !json_is_boolean(builtin)) {
		snprintf(err, errsize, "\"builtin\" must be true or false");
		goto out;
	}
	json_t *rules = json_object_get(doc, "rules");
	if (!json_is_array(rules) || json_array_size(rules) > API_ALERT_RULES_MAX) {
		snprintf(err, errsize, "\"rules\" must be an array of at most %d rules",
		         API_ALERT_RULES_MAX);
		goto out;
	}
	size_t i;
	json_t *o;
	json_array_foreach(rules, i, o)
	{
		struct rule r;
		if (rule_parse(o, i, &r, err, errsize) != 0 ||
		    rules_add(file, &r, false, err, errsize) != 0)
			goto out;
	}
	if (!builtin || json_is_true(builtin))
		*set = BUILTIN;
	for (size_t k = 0; k < file->n; k++)
		if (rules_add(set, &file->rules[k], true, err, errsize) != 0)
			goto out;
	*out = set;
	set = NULL;
	rc = 0;
out:
	gi_free(set);
	gi_free(file);
	json_decref(doc);
	return rc;
}

int api_alert_rules_load(const char *path, struct api_alert_rules **out, char *err, size_t errsize)
{
	*out = NULL;
	char *text = NULL;
	size_t len = 0;
	int rc = gi_fs_read_file(path, API_ALERT_RULES_FILE_MAX + 1, &text, &len);
	if (rc != 0) {
		snprintf(err, errsize, "alert rules %.300s: %s", path,
		         rc == GI_ETOOBIG ? "the file is over 64 KiB" : "cannot be read");
		return rc == GI_ETOOBIG ? rc : GI_EIO;
	}
	char why[512];
	rc = api_alert_rules_parse(text, len, out, why, sizeof(why));
	gi_free(text);
	if (rc != 0)
		snprintf(err, errsize, "alert rules %.300s: %s", path, why);
	return rc;
}

/* ---- evaluation ---- */

static void alert_add(json_t *alerts, const struct rule *r, const char *severity, double value,
                      double threshold, const char *message)
{
	json_array_append_new(alerts, json_pack("{s:s, s:s, s:s, s:f, s:f, s:s}", "rule", r->name,
	                                        "severity", severity, "metric", r->metric, "value",
	                                        value, "threshold", threshold, "message", message));
}

static bool passes(const struct rule *r, double value, double threshold)
{
	if (isnan(threshold))
		return false;
	return r->below ? value <= threshold : value >= threshold;
}

static void eval_level(const struct rule *r, const struct obs_view *v, json_t *alerts)
{
	double value = level_value(r->metric, v);
	if (isnan(value))
		return;
	double scale = 1;
	if (r->per_scheduler) {
		if (isnan(v->schedulers_online) || v->schedulers_online <= 0)
			return;
		scale = v->schedulers_online;
	}
	double warn = r->warning * scale, crit = r->critical * scale;
	bool critical = passes(r, value, crit);
	if (!critical && !passes(r, value, warn))
		return;
	char msg[512];
	snprintf(msg, sizeof(msg), "%s is %.4g (%s threshold %.4g)", r->summary, value,
	         critical ? "critical" : "warning", critical ? crit : warn);
	alert_add(alerts, r, critical ? "critical" : "warning", value, critical ? crit : warn, msg);
}

static void eval_trend(const struct rule *r, const struct api_history *h, json_t *alerts)
{
	if (!h || h->len < (size_t)r->min_points)
		return;
	struct api_trend t;
	api_history_metric_trend(h, 0, api_stats_metric_index(r->metric), &t);
	double change = t.change_pct, last = t.last;
	if (isnan(change) || (!isnan(r->min_last) && (isnan(last) || last < r->min_last)))
		return;
	/* Growth: strictly above the threshold (a flat series never fires a 0 rule). */
	bool critical = !isnan(r->critical) && change > r->critical;
	if (!critical && !(!isnan(r->warning) && change > r->warning))
		return;
	double threshold = critical ? r->critical : r->warning;
	char msg[512];
	snprintf(msg, sizeof(msg), "%s grew %.1f%% over the history window (%s threshold %.4g%%)",
	         r->summary, change, critical ? "critical" : "warning", threshold);
	alert_add(alerts, r, critical ? "critical" : "warning", change, threshold, msg);
}

json_t *api_alert_rules_eval_history(const struct api_alert_rules *r, json_t *snap,
                                     const struct api_history *h)
{
	struct obs_view v;
	bool have = snap && obs_view_parse(snap, &v) == 0;
	json_t *alerts = api_alert_rules_eval_view(r, have ? &v : NULL, h);
	if (snap)
		obs_view_destroy(&v);
	return alerts;
}

json_t *api_alert_rules_eval_view(const struct api_alert_rules *r, const struct obs_view *v,
                                  const struct api_history *h)
{
	json_t *alerts = json_array();
	for (size_t i = 0; r && i < r->n; i++) {
		if (r->rules[i].kind == RULE_LEVEL && v)
			eval_level(&r->rules[i], v, alerts);
		else if (r->rules[i].kind == RULE_TREND)
			eval_trend(&r->rules[i], h, alerts);
	}
	return alerts;
}

json_t *api_alert_rules_eval(const struct api_alert_rules *r, json_t *snap, json_t *points)
{
	if (!points)
		return api_alert_rules_eval_history(r, snap, NULL);
	struct api_history h;
	api_history_from_json(points, &h);
	json_t *alerts = api_alert_rules_eval_history(r, snap, &h);
	api_history_destroy(&h);
	return alerts;
}
