/*
 * api_alert_rules.c - libFuzzer target for the alert rule file parser
 * (src/api/alert_rules.c, docs/ALERTS.md): any input is parsed or refused
 * with a message, never crashes or over-reads; a rule set that parses has
 * at most API_ALERT_RULES_MAX rules with valid names, and evaluating it on a
 * snapshot and a short history never fails. The same input is also fed to
 * the /metrics writer as a label value and HELP text, which must keep every
 * line of the exposition intact.
 * needs:
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/alert_rules.h"
#include "api/metrics.h"
#include "base/alloc.h"
#include "base/runtime.h"

int cli_exit_code_for(int gi_error);
int cli_exit_code_for(int gi_error)
{
	return gi_error ? 1 : 0;
}

static void check_exposition(const uint8_t *data, size_t size)
{
	char *value = gi_malloc(size + 1);
	memcpy(value, data, size);
	value[size] = '\0';
	struct api_metrics mx;
	api_metrics_init(&mx, size % 2 ? API_METRICS_OPENMETRICS : API_METRICS_PROMETHEUS, 0);
	api_metrics_family(&mx, "giulia_fuzz", API_METRICS_GAUGE, value);
	const char *labels[] = {"node", value, NULL};
	api_metrics_sample(&mx, "", labels, 1);
	size_t len = 0;
	char *text = api_metrics_finish(&mx, &len);
	/* Exactly the lines written: HELP, TYPE, the sample, then the dropped
	 * gauge's three (and # EOF): no newline leaked from the input. */
	size_t lines = 0;
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	if (lines != (size % 2 ? 7u : 6u) || memchr(text, '\0', len) != NULL)
		abort();
	gi_free(text);
	api_metrics_destroy(&mx);
	gi_free(value);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gi_runtime_init();
	struct api_alert_rules *r = NULL;
	char err[512];
	int rc = api_alert_rules_parse((const char *)data, size, &r, err, sizeof(err));
	if (rc == 0) {
		size_t n = api_alert_rules_count(r);
		if (n > API_ALERT_RULES_MAX)
			abort();
		for (size_t i = 0; i < n; i++) {
			const char *name = api_alert_rules_name(r, i);
			if (!name || !name[0] || strlen(name) > API_ALERT_NAME_MAX)
				abort();
		}
		json_t *snap =
		    json_pack("{s:i, s:i, s:{s:f}, s:{s:i}, s:{s:i, s:i}}", "version", 1,
		              "schedulers_online", 2, "scheduler_utilisation", "total", 0.95,
		              "run_queue", "total", 9, "processes", "count", 10, "limit", 100);
		json_t *points = json_array();
		for (int i = 0; i < 8; i++)
			json_array_append_new(points,
			                      json_pack("{s:i, s:i, s:i}", "timestamp_ms", i * 1000,
			                                "memory_total", 1000 + i * 500,
			                                "max_message_queue", 100 * i));
		json_t *alerts = api_alert_rules_eval(r, snap, points);
		if (!json_is_array(alerts))
			abort();
		json_decref(alerts);
		json_decref(points);
		json_decref(snap);
		api_alert_rules_free(r);
	} else if (r != NULL || err[0] == '\0') {
		abort();
	}
	if (size < 4096)
		check_exposition(data, size);
	return 0;
}
