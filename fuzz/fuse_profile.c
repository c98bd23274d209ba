/*
 * fuse_profile.c - libFuzzer target for the profile builder and its reports:
 * snapshots and finalize objects come from live nodes through the monitor, so
 * any JSON must give a profile (or a clean error), and every report and the
 * comparison must render it without crashing.
 *
 * Input: a JSON array of snapshots, or {"finalize": {...}, "snapshots": [...]}.
 * Snapshots go through the typed view (obs_view_parse) and the executing
 * view (corpus: sampled2.json, two snapshots of the real observer); the
 * input itself, as a profile, through the profile's typed view
 * (fuse_view_parse) that the rules, reports and comparison read (corpus:
 * profile_every_section.json, a built profile with every section filled).
 * needs:
 */
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/runtime.h"
#include "fuse/fuse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gi_runtime_init();
	json_t *in = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
	if (!in)
		return 0;
	json_t *fin = NULL, *snaps = in;
	if (json_is_object(in)) {
		fin = json_object_get(in, "finalize");
		snaps = json_object_get(in, "snapshots");
	}
	json_t *p = NULL;
	if (fuse_profile_build(json_is_object(fin) ? fin : NULL,
	                       json_is_array(snaps) ? snaps : NULL, NULL, NULL, &p) == 0) {
		struct gi_buf out;
		gi_buf_init(&out, 0);
		fuse_report_text(p, &out);
		fuse_report_html(p, &out);
		json_t *c = NULL;
		if (fuse_compare(p, p, &c) == 0)
			fuse_compare_text(c, &out);
		json_decref(c);
		/* The profile itself as an input to the reports: the worker serves
		 * stored profiles, which may be edited by hand. */
		fuse_report_text(in, &out);
		fuse_report_html(in, &out);
		json_t *recs = NULL, *c2 = NULL;
		fuse_rules_evaluate(in, NULL, &recs);
		if (fuse_compare(in, p, &c2) == 0)
			fuse_compare_text(c2, &out);
		json_decref(recs);
		json_decref(c2);
		gi_buf_destroy(&out);
		json_decref(p);
	}
	json_decref(in);
	return 0;
}
