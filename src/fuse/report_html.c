/*
 * report_html.c - a profile as one self-contained HTML page.
 */
#include "base/error.h"
#include "fuse/fuse.h"

int fuse_report_html(json_t *profile, struct gi_buf *out)
{
	(void)profile;
	(void)out;
	return GI_EUNSUPPORTED;
}
