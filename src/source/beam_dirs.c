/*
 * beam_dirs.c - finds the object code to index under ebin directories or
 * release trees (see beam.h, beam_dirs_scan).
 *
 * A module's name is its file's name: the code server only loads
 * NAME.beam as module NAME, so no file needs to be opened here. When a
 * module is found twice (two versions of an application side by side in a
 * release's lib/), the path that sorts last in version order wins
 * (stdlib-4.2 over stdlib-3.17).
 */
#include "source/beam.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/map.h"
#include "base/str.h"

#define BEAM_SCAN_MAX_FILES 200000

struct scan {
	struct gi_vec *out;      /* struct beam_entry */
	struct gi_map by_module; /* display name -> index + 1 */
	int rc;
};

static int scan_visit(const char *path, void *ctx)
{
	struct scan *s = ctx;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t len = strlen(base);
	if (len <= 5 || !gi_str_ends_with(base, ".beam"))
		return 0;
	char atom[512], display[600];
	if (len - 5 >= sizeof(atom))
		return 0;
	memcpy(atom, base, len - 5);
	atom[len - 5] = '\0';
	if (gi_module_display_name(atom, display, sizeof(display)) != 0)
		return 0;
	void *v = gi_map_get(&s->by_module, display);
	if (v) {
		struct beam_entry *e = gi_vec_get(s->out, (size_t)((intptr_t)v - 1));
		if (strverscmp(path, e->path) > 0) {
			gi_free(e->path);
			e->path = gi_strdup(path);
		}
		return 0;
	}
	if (s->out->len >= BEAM_SCAN_MAX_FILES) {
		s->rc = GI_ETOOBIG;
		return 1;
	}
	struct beam_entry *e = gi_vec_push_zero(s->out);
	e->module = gi_strdup(display);
	e->path = gi_strdup(path);
	gi_map_put(&s->by_module, display, (void *)(intptr_t)s->out->len);
	return 0;
}

int beam_dirs_scan(const char *const *dirs, struct gi_vec *out, char *err, size_t err_size)
{
	struct scan s;
	struct stat st;
	int rc = 0;
	gi_vec_init(out, sizeof(struct beam_entry));
	memset(&s, 0, sizeof(s));
	s.out = out;
	gi_map_init(&s.by_module);
	for (size_t i = 0; dirs && dirs[i] && rc == 0; i++) {
		if (stat(dirs[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
			rc = GI_ENOENT;
			if (err && err_size)
				snprintf(err, err_size, "%s: not a directory", dirs[i]);
			break;
		}
		rc = gi_fs_walk(dirs[i], NULL, scan_visit, &s);
		if (rc == 0)
			rc = s.rc;
		if (rc && err && err_size)
			snprintf(err, err_size, "%s: %s", dirs[i],
			         rc == GI_ETOOBIG ? "more than 200000 .beam files"
			                          : gi_strerror(rc));
	}
	gi_map_destroy(&s.by_module);
	if (rc)
		beam_entries_free(out);
	return rc;
}

void beam_entries_free(struct gi_vec *entries)
{
	for (size_t i = 0; i < entries->len; i++) {
		struct beam_entry *e = gi_vec_get(entries, i);
		gi_free(e->module);
		gi_free(e->path);
	}
	gi_vec_destroy(entries);
}
