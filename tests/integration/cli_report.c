/*
 * Integration tests of the profile reports as people read them: the text
 * report of a real fused profile (the busy fixture series joined with the
 * catalog target's real knowledge graph) stays within 80 columns with
 * numbers in units and anonymous funs as "fn in Mod.fun/1", and shows every
 * error and note of the profile; the HTML report has no horizontal overflow
 * at 390 and 1400 px in a real headless Chromium, wall-clock times on its
 * time axes and the columns explained.
 * needs: chromium
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/fmt.h"
#include "base/fs.h"
#include "catalog_graph.h"
#include "fuse/fuse.h"
#include "harness.h"
#include "headless.h"
#include "json_util.h"
#include "support.h"

static json_t *joined_profile(void)
{
	struct kg_db *db = ts_catalog_graph();
	json_t *fin = ts_fixture_json("busy", "finalize.json");
	json_t *snaps = ts_fixture_json("busy", "snapshots.json");
	json_t *p = NULL;
	TH_ASSERT_OK(fuse_profile_build(fin, snaps, db, NULL, &p));
	json_decref(fin);
	json_decref(snaps);
	kg_db_close(db);
	return p;
}

static void assert_fits(const char *text, int width, const char *what)
{
	int bad = 0;
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");
		char line[4096];
		snprintf(line, sizeof(line), "%.*s", (int)n, p);
		if ((int)gi_fmt_width(line) > width) {
			fprintf(stderr, "%3zu: %s\n", gi_fmt_width(line), line);
			bad++;
		}
		p += n;
		if (*p)
			p++;
	}
	TH_ASSERT_MSG(bad == 0, "%s: %d lines wider than %d columns", what, bad, width);
}

static void text_report_fits_80_columns(void)
{
	json_t *p = joined_profile();
	struct gi_buf b;
	gi_buf_init(&b, 0);
	TH_ASSERT_OK(fuse_report_text(p, &b));
	assert_fits(gi_buf_str(&b), 80, "text report");
	gi_buf_destroy(&b);
	json_decref(p);
}

/* Every error of a profile is in its text and its HTML; anonymous funs are
 * written as people name them. */
static void errors_and_anonymous_funs_are_shown(void)
{
	json_t *p = joined_profile();
	json_t *errors = json_array();
	json_array_append_new(errors, json_string("trace: module Demo.Nope is not loaded"));
	json_array_append_new(errors, json_string("a second, unrelated note"));
	json_object_set_new(p, "errors", errors);
	json_t *hs = json_array_get(json_object_get(p, "trace_hotspots"), 0);
	json_object_set_new(hs, "mfa", json_string("Catalog.Store.-get/1-fun-0-/2"));
	struct gi_buf b;
	gi_buf_init(&b, 0);
	TH_ASSERT_OK(fuse_report_text(p, &b));
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&b), "Demo.Nope is not loaded");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&b), "a second, unrelated note");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&b), "fn in Catalog.Store.get/1");
	TH_ASSERT(strstr(gi_buf_str(&b), "-fun-0-") == NULL);
	gi_buf_reset(&b);
	TH_ASSERT_OK(fuse_report_html(p, &b));
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&b), "Demo.Nope is not loaded");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&b), "a second, unrelated note");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&b), "fn in Catalog.Store.get/1");
	gi_buf_destroy(&b);
	json_decref(p);
}

/* The attribute `name` of <body> in `dom`, as a number (-1: absent). */
static long body_attr(const char *dom, const char *name)
{
	char needle[64];
	snprintf(needle, sizeof(needle), " %s=\"", name);
	const char *body = strstr(dom, "<body");
	const char *at = body ? strstr(body, needle) : NULL;
	const char *end = body ? strchr(body, '>') : NULL;
	if (!at || (end && at > end))
		return -1;
	return strtol(at + strlen(needle), NULL, 10);
}

static void html_report_fits_phone_and_desktop(void)
{
	TH_NEED(ts_chromium_path() != NULL, "chromium", "no /usr/bin/chromium");
	json_t *p = joined_profile();
	struct gi_buf html;
	gi_buf_init(&html, 0);
	TH_ASSERT_OK(fuse_report_html(p, &html));
	const char *h = gi_buf_str(&html);
	/* wall-clock times on the time axes (the session started 09:50:00 UTC) */
	TH_ASSERT_STR_CONTAINS(h, ">09:50:00<");
	TH_ASSERT_STR_CONTAINS(h, ">09:50:39 UTC<");
	/* the columns explained where they appear */
	TH_ASSERT_STR_CONTAINS(h, "Ca (afferent)");
	TH_ASSERT_STR_CONTAINS(h, "min/avg/max: calls in one snapshot interval");
	TH_ASSERT_STR_CONTAINS(h, "samples: snapshots the module was seen in");
	char path[4096];
	snprintf(path, sizeof(path), "%s/profile.html", th_tmpdir());
	TH_ASSERT_OK(gi_fs_write_file(path, html.data, html.len));
	const int widths[] = {390, 1400};
	for (size_t i = 0; i < 2; i++) {
		char *dom = ts_chromium_frame(path, widths[i], 900);
		TH_ASSERT_MSG(body_attr(dom, "data-viewport") == widths[i],
		              "the page was laid out at %ld px, not %d",
		              body_attr(dom, "data-viewport"), widths[i]);
		TH_ASSERT_MSG(body_attr(dom, "data-overflow") == 0,
		              "at %d px %ld boxes overflow sideways", widths[i],
		              body_attr(dom, "data-overflow"));
		TH_ASSERT_INT_EQ(body_attr(dom, "data-charts-rendered"), 6);
		free(dom);
	}
	gi_buf_destroy(&html);
	json_decref(p);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(text_report_fits_80_columns),
	    TH_TEST(errors_and_anonymous_funs_are_shown),
	    TH_TEST(html_report_fits_phone_and_desktop),
	    TH_END,
	};
	return th_main(argc, argv, "integration_cli_report", tests);
}
