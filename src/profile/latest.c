/*
 * latest.c - the latest stored profile of a project (see latest.h). The
 * profiles list is newest first and carries the project each was joined
 * with; the body of the first match is read.
 */
#include "profile/latest.h"

#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/fs.h"

int profile_latest_for_project(struct obs_store *st, const char *root, json_t **out)
{
	*out = NULL;
	json_t *list = NULL;
	int rc = obs_store_profiles_list(st, PROFILE_LATEST_SCAN, &list);
	if (rc)
		return rc;
	size_t i;
	json_t *row;
	long long id = 0;
	json_array_foreach(list, i, row)
	{
		const char *project = json_string_value(json_object_get(row, "project"));
		if (project && root && strcmp(project, root) == 0) {
			id = (long long)json_integer_value(json_object_get(row, "id"));
			break;
		}
	}
	json_decref(list);
	if (id > 0)
		rc = obs_store_profile_get(st, id, out);
	return rc;
}

int profile_latest_in_data_dir(const char *data_dir, const char *root, json_t **out)
{
	*out = NULL;
	char *dflt = data_dir ? NULL : gi_fs_data_dir(NULL);
	const char *dir = data_dir ? data_dir : dflt;
	int rc = 0;
	if (dir) {
		struct gi_buf path;
		gi_buf_init(&path, 0);
		gi_buf_printf(&path, "%s/%s", dir, OBS_STORE_FILE);
		struct stat sb;
		if (stat(path.data, &sb) == 0 && S_ISREG(sb.st_mode)) {
			struct obs_store *st = NULL;
			rc = obs_store_open(dir, &st);
			if (!rc)
				rc = profile_latest_for_project(st, root, out);
			obs_store_close(st);
		}
		gi_buf_destroy(&path);
	}
	gi_free(dflt);
	return rc;
}
