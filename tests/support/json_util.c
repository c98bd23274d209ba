/*
 * json_util.c - reading JSON in tests (see json_util.h).
 */
#include "json_util.h"

#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "fuse/fuse.h"
#include "harness.h"

json_t *ts_json_find(json_t *array, const char *key, const char *value)
{
	for (size_t i = 0; i < json_array_size(array); i++) {
		json_t *e = json_array_get(array, i);
		const char *v = json_string_value(json_object_get(e, key));
		if (v && strcmp(v, value) == 0)
			return e;
	}
	return NULL;
}

const char *ts_workload_storage(json_t *profile, const char *module)
{
	json_t *w = ts_json_find(json_object_get(profile, "workload"), "module", module);
	return json_string_value(json_object_get(json_object_get(w, "database"), "storage"));
}

json_t *ts_rec_find(json_t *profile, int rule, const char *subject)
{
	json_t *recs = json_object_get(profile, "recommendations");
	for (size_t i = 0; i < json_array_size(recs); i++) {
		json_t *r = json_array_get(recs, i);
		const char *s = json_string_value(json_object_get(r, "subject"));
		/* A merged recommendation answers for each rule that fired. */
		bool fired = json_integer_value(json_object_get(r, "rule")) == rule;
		json_t *rules = json_object_get(r, "rules");
		for (size_t k = 0; !fired && k < json_array_size(rules); k++)
			fired = json_integer_value(json_array_get(rules, k)) == rule;
		if (fired && (!subject || (s && strcmp(s, subject) == 0)))
			return r;
	}
	return NULL;
}

double ts_rec_ev(json_t *rec, const char *key)
{
	return json_number_value(json_object_get(json_object_get(rec, "evidence"), key));
}

char *ts_report_text_flat(json_t *profile)
{
	struct gi_buf text;
	gi_buf_init(&text, 4096);
	TH_ASSERT_OK(fuse_report_text(profile, &text));
	char *flat = gi_strdup(gi_buf_str(&text));
	gi_buf_destroy(&text);
	size_t o = 0;
	for (size_t k = 0; flat[k]; k++) {
		char ch = flat[k] == '\n' ? ' ' : flat[k];
		if (ch != ' ' || (o > 0 && flat[o - 1] != ' '))
			flat[o++] = ch;
	}
	flat[o] = '\0';
	return flat;
}

json_t *ts_fixture_json(const char *series, const char *file)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/tests/fixtures/snapshots/%s/%s", th_srcdir(), series,
	         file);
	json_error_t err;
	json_t *j = json_load_file(path, 0, &err);
	TH_ASSERT_MSG(j != NULL, "cannot load %s: %s (line %d)", path, err.text, err.line);
	return j;
}
