/*
 * fuse.c - placeholder until the profile builder lands (see fuse.h).
 */
#include "fuse/fuse.h"

#include "base/error.h"

int fuse_profile_build(json_t *finalize, json_t *snapshots, struct kg_db *graph,
                       const struct fuse_config *cfg, json_t **profile_out)
{
	(void)finalize;
	(void)snapshots;
	(void)graph;
	(void)cfg;
	*profile_out = NULL;
	return GI_EUNSUPPORTED;
}

int fuse_report_text(json_t *profile, struct gi_buf *out)
{
	(void)profile;
	(void)out;
	return GI_EUNSUPPORTED;
}

int fuse_report_html(json_t *profile, struct gi_buf *out)
{
	(void)profile;
	(void)out;
	return GI_EUNSUPPORTED;
}

int fuse_compare(json_t *a, json_t *b, json_t **out)
{
	(void)a;
	(void)b;
	*out = NULL;
	return GI_EUNSUPPORTED;
}

int fuse_compare_text(json_t *comparison, struct gi_buf *out)
{
	(void)comparison;
	(void)out;
	return GI_EUNSUPPORTED;
}
