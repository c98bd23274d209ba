/*
 * headless.c - headless Chromium for the HTML report's tests (see
 * headless.h). No network: the pages are self-contained files.
 */
#include "base/str.h"
#include "headless.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "support.h"

const char *ts_chromium_path(void)
{
	static const char *const candidates[] = {"/usr/bin/chromium", "/usr/bin/chromium-browser",
	                                         NULL};
	for (size_t i = 0; candidates[i]; i++)
		if (access(candidates[i], X_OK) == 0)
			return candidates[i];
	return NULL;
}

char *ts_chromium_dom(const char *url, int width, int height)
{
	char user_dir[4096], size[64];
	snprintf(user_dir, sizeof(user_dir), "--user-data-dir=%s/chromium-%dx%d", th_tmpdir(),
	         width, height);
	snprintf(size, sizeof(size), "--window-size=%d,%d", width, height);
	const char *argv[] = {ts_chromium_path(),
	                      "--headless",
	                      "--no-sandbox",
	                      "--disable-gpu",
	                      "--disable-quic",
	                      "--no-first-run",
	                      "--disable-background-networking",
	                      "--disable-component-update",
	                      "--disable-sync",
	                      "--disable-dev-shm-usage",
	                      "--hide-scrollbars",
	                      "--allow-file-access-from-files",
	                      size,
	                      user_dir,
	                      "--dump-dom",
	                      url,
	                      NULL};
	char *out = NULL, *err = NULL;
	int st = ts_run(argv, NULL, 180000, &out, &err);
	TH_ASSERT_MSG(st == 0, "chromium exited with %d: %.2000s", st, err ? err : "");
	free(err);
	return out;
}

char *ts_chromium_frame(const char *path, int width, int height)
{
	char outer[4200], url[4300], page[8192];
	snprintf(outer, sizeof(outer), "%s/frame-%dx%d.html", th_tmpdir(), width, height);
	snprintf(page, sizeof(page),
	         "<!DOCTYPE html><html><body style=\"margin:0\"><iframe id=\"f\" "
	         "src=\"file://%s\" style=\"width:%dpx;height:%dpx;border:0\"></iframe>"
	         "<script>document.getElementById('f').onload=function(){"
	         "var b=this.contentDocument.body,p=document.createElement('pre');"
	         "p.id='frame-body';var a=[];for(var i=0;i<b.attributes.length;i++)"
	         "a.push(b.attributes[i].name+'=\"'+b.attributes[i].value+'\"');"
	         "p.textContent='<body '+a.join(' ')+'>';document.body.appendChild(p);};"
	         "</script></body></html>",
	         path, width, height);
	FILE *f = fopen(outer, "w");
	TH_ASSERT_MSG(f != NULL, "cannot write %s", outer);
	fputs(page, f);
	fclose(f);
	snprintf(url, sizeof(url), "file://%s", outer);
	char *dom = ts_chromium_dom(url, width + 100 > 500 ? width + 100 : 500, height + 100);
	/* the attributes were escaped as text: undo &lt; &gt; &quot; */
	char *start = strstr(dom, "id=\"frame-body\">");
	TH_ASSERT_MSG(start != NULL, "the framed page did not load: %.2000s", dom);
	start += strlen("id=\"frame-body\">");
	char *out = malloc(strlen(start) + 1);
	TH_ASSERT(out != NULL);
	size_t n = 0;
	for (const char *c = start; *c && !GI_STR_STARTS(c, "</pre>"); c++) {
		if (GI_STR_STARTS(c, "&lt;")) {
			out[n++] = '<';
			c += 3;
		} else if (GI_STR_STARTS(c, "&gt;")) {
			out[n++] = '>';
			c += 3;
		} else if (GI_STR_STARTS(c, "&quot;")) {
			out[n++] = '"';
			c += 5;
		} else if (GI_STR_STARTS(c, "&amp;")) {
			out[n++] = '&';
			c += 4;
		} else {
			out[n++] = *c;
		}
	}
	out[n] = '\0';
	free(dom);
	return out;
}
