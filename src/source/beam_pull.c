/*
 * beam_pull.c - caches the object code of a live node's applications for
 * indexing (see beam_pull.h).
 *
 * Invariants: every path written is DEST/APP/ebin/MODULE.beam with APP and
 * MODULE checked to be plain file names (no '/', no leading '.', no NUL, at
 * most 255 bytes), so a hostile node cannot write outside DEST; what the
 * node sends is only stored here, the reader (beam.c) checks it when it is
 * indexed.
 */
#include "source/beam_pull.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/error.h"
#include "base/fs.h"
#include "observe/dist.h"
#include "source/beam.h"

static bool name_is_safe(const char *name)
{
	size_t n = strlen(name);
	return n > 0 && n <= 255 && name[0] != '.' && !strchr(name, '/');
}

/* Writes `len` bytes to `path` unless the file already holds exactly them. */
static int file_update(const char *path, const unsigned char *data, size_t len, bool *written)
{
	char *old = NULL;
	size_t old_len = 0;
	*written = false;
	if (gi_fs_read_file(path, BEAM_MAX_FILE_SIZE, &old, &old_len) == 0 && old_len == len &&
	    memcmp(old, data, len) == 0) {
		gi_free(old);
		return 0;
	}
	gi_free(old);
	*written = true;
	return gi_fs_write_file(path, data, len);
}

static int app_pull(struct dist_conn *conn, const char *app, const char *dest,
                    struct beam_pull_summary *s, char *err, size_t err_size)
{
	char **modules = NULL;
	size_t count = 0;
	char dir[4096];
	int rc = dist_app_modules(conn, app, &modules, &count);
	if (rc) {
		snprintf(err, err_size, "%s: application %s: %s", dist_node(conn), app,
		         rc == GI_ENOTFOUND ? "not loaded on the node" : gi_strerror(rc));
		return rc;
	}
	s->apps++;
	int n = snprintf(dir, sizeof(dir), "%s/%s/ebin", dest, app);
	if (n < 0 || (size_t)n >= sizeof(dir)) {
		rc = GI_ETOOBIG;
		snprintf(err, err_size, "%s: path too long", dest);
		goto done;
	}
	if ((rc = gi_fs_mkdir_p(dir)) != 0) {
		snprintf(err, err_size, "%s: cannot create: %s", dir, gi_strerror(rc));
		goto done;
	}
	for (size_t i = 0; i < count; i++) {
		unsigned char *code = NULL;
		size_t len = 0;
		char *filename = NULL, path[4400];
		s->modules++;
		if (!name_is_safe(modules[i])) {
			s->missing++;
			continue;
		}
		rc = dist_object_code_fetch(conn, modules[i], &code, &len, &filename);
		gi_free(filename);
		if (rc == GI_ENOTFOUND) { /* e.g. a module of the app that is not loadable */
			s->missing++;
			rc = 0;
			continue;
		}
		if (rc) {
			snprintf(err, err_size, "%s: module %s: %s", dist_node(conn), modules[i],
			         gi_strerror(rc));
			goto done;
		}
		bool written = false;
		snprintf(path, sizeof(path), "%s/%s.beam", dir, modules[i]);
		rc = file_update(path, code, len, &written);
		gi_free(code);
		if (rc) {
			snprintf(err, err_size, "%s: cannot write: %s", path, gi_strerror(rc));
			goto done;
		}
		if (written)
			s->written++;
		else
			s->unchanged++;
	}
done:
	dist_strings_free(modules, count);
	return rc;
}

int beam_pull_apps(const char *node, const char *cookie, int timeout_ms, const char *const *apps,
                   const char *dest, struct beam_pull_summary *summary, char *err, size_t err_size)
{
	struct dist_options o = {node, cookie, timeout_ms};
	struct dist_conn *conn = NULL;
	char dummy[1];
	if (!err || err_size == 0) {
		err = dummy;
		err_size = sizeof(dummy);
	}
	err[0] = '\0';
	memset(summary, 0, sizeof(*summary));
	for (size_t i = 0; apps && apps[i]; i++) {
		if (!name_is_safe(apps[i])) {
			snprintf(err, err_size, "'%s' is not an application name", apps[i]);
			return GI_EINVAL;
		}
	}
	int rc = dist_connect(&o, &conn);
	if (rc) {
		snprintf(err, err_size, "%s: %s; %s", node, gi_strerror(rc), dist_error_hint(rc));
		return rc;
	}
	for (size_t i = 0; apps && apps[i] && rc == 0; i++)
		rc = app_pull(conn, apps[i], dest, summary, err, err_size);
	dist_close(conn);
	return rc;
}
