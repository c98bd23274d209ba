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
#include "observe/beam_pull.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/map.h"
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

/* Where a pull says what went wrong: `err`, or `dummy` (one byte) when the
 * caller gave no buffer; emptied. */
static char *err_buffer(char *err, size_t *err_size, char *dummy)
{
	if (!err || *err_size == 0) {
		err = dummy;
		*err_size = 1;
	}
	err[0] = '\0';
	return err;
}

/* Connects to `node` for a pull; says why not in `err`. */
static int pull_connect(const char *node, const char *cookie, int timeout_ms,
                        struct dist_conn **conn, char *err, size_t err_size)
{
	struct dist_options o = {node, cookie, timeout_ms};
	int rc = dist_connect(&o, conn);
	if (rc)
		snprintf(err, err_size, "%s: %s; %s", node, gi_strerror(rc), dist_error_hint(rc));
	return rc;
}

int beam_pull_apps(const char *node, const char *cookie, int timeout_ms, const char *const *apps,
                   const char *dest, struct beam_pull_summary *summary, char *err, size_t err_size)
{
	struct dist_conn *conn = NULL;
	char dummy[1];
	err = err_buffer(err, &err_size, dummy);
	memset(summary, 0, sizeof(*summary));
	for (size_t i = 0; apps && apps[i]; i++) {
		if (!name_is_safe(apps[i])) {
			snprintf(err, err_size, "'%s' is not an application name", apps[i]);
			return GI_EINVAL;
		}
	}
	int rc = pull_connect(node, cookie, timeout_ms, &conn, err, err_size);
	if (rc)
		return rc;
	for (size_t i = 0; apps && apps[i] && rc == 0; i++)
		rc = app_pull(conn, apps[i], dest, summary, err, err_size);
	dist_close(conn);
	return rc;
}

/* Applications whose siblings are not worth pulling: OTP's and Elixir's own. */
static bool app_is_system(const char *app)
{
	static const char *const system[] = {
	    "kernel", "stdlib", "elixir",       "compiler", "logger", "sasl",
	    "crypto", "ssl",    "public_key",   "inets",    "mnesia", "iex",
	    "mix",    "eex",    "ex_unit",      "erts",     "asn1",   "runtime_tools",
	    "tools",  "os_mon", "syntax_tools", "xmerl",    NULL};
	for (size_t i = 0; system[i]; i++)
		if (strcmp(app, system[i]) == 0)
			return true;
	return false;
}

struct pull_set {
	struct gi_map seen; /* atom text -> (void *)1 */
	char **order;       /* owned copies, in pull order */
	size_t len, cap, max;
};

static void pull_set_add(struct pull_set *ps, const char *atom)
{
	if (ps->len >= ps->max || !name_is_safe(atom) || gi_map_get(&ps->seen, atom))
		return;
	gi_map_put(&ps->seen, atom, (void *)1);
	if (ps->len == ps->cap) {
		ps->cap = ps->cap ? ps->cap * 2 : 64;
		ps->order = gi_realloc(ps->order, ps->cap * sizeof(char *));
	}
	ps->order[ps->len++] = gi_strdup(atom);
}

static void pull_set_destroy(struct pull_set *ps)
{
	for (size_t i = 0; i < ps->len; i++)
		gi_free(ps->order[i]);
	gi_free(ps->order);
	gi_map_destroy(&ps->seen);
}

static void siblings_add(struct dist_conn *conn, struct pull_set *ps, size_t asked,
                         struct beam_pull_summary *s)
{
	char **apps = NULL;
	size_t napps = 0;
	if (dist_modules_apps(conn, (const char *const *)ps->order, asked, &apps, &napps) != 0)
		return; /* siblings are a bonus: the asked modules are still pulled */
	for (size_t i = 0; i < napps && ps->len < ps->max; i++) {
		char **mods = NULL;
		size_t n = 0;
		if (app_is_system(apps[i]) || dist_app_modules(conn, apps[i], &mods, &n) != 0)
			continue;
		s->apps++;
		for (size_t j = 0; j < n; j++)
			pull_set_add(ps, mods[j]);
		dist_strings_free(mods, n);
	}
	dist_strings_free(apps, napps);
}

int beam_pull_modules(const char *node, const char *cookie, int timeout_ms,
                      const struct beam_pull_request *rq, beam_pull_sink sink, void *ctx,
                      struct beam_pull_summary *summary, char *err, size_t err_size)
{
	struct dist_conn *conn = NULL;
	struct pull_set ps;
	char dummy[1];
	err = err_buffer(err, &err_size, dummy);
	memset(summary, 0, sizeof(*summary));
	memset(&ps, 0, sizeof(ps));
	gi_map_init(&ps.seen);
	ps.max = rq->max_modules && rq->max_modules < BEAM_PULL_MODULES_MAX ? rq->max_modules
	                                                                    : BEAM_PULL_MODULES_MAX;
	for (size_t i = 0; i < rq->count; i++)
		pull_set_add(&ps, rq->modules[i]);
	size_t asked = ps.len;
	summary->modules = (int)asked;
	if (rq->count > asked && asked == ps.max)
		summary->truncated = true;
	int rc = 0;
	if (asked == 0)
		goto out;
	rc = pull_connect(node, cookie, timeout_ms, &conn, err, err_size);
	if (rc)
		goto out;
	/* Once per pull, on the same connection: a failure leaves it unknown. */
	if (rq->storage &&
	    dist_storage_facts(conn, &summary->storage, &summary->storage_count) != 0) {
		summary->storage = NULL;
		summary->storage_count = 0;
	}
	if (rq->siblings)
		siblings_add(conn, &ps, asked, summary);
	for (size_t i = 0; i < ps.len; i++) {
		if (rq->deadline_ms > 0 && gi_clock_mono_ms() >= rq->deadline_ms) {
			summary->truncated = true;
			break;
		}
		unsigned char *code = NULL;
		size_t len = 0;
		char *filename = NULL;
		rc = dist_object_code_fetch(conn, ps.order[i], &code, &len, &filename);
		gi_free(filename);
		if (rc == GI_ENOTFOUND) {
			if (i < asked)
				summary->missing++;
			rc = 0;
			continue;
		}
		if (rc) {
			snprintf(err, err_size, "%s: module %s: %s", dist_node(conn), ps.order[i],
			         gi_strerror(rc));
			break;
		}
		rc = sink(ctx, ps.order[i], code, len);
		gi_free(code);
		if (rc) {
			snprintf(err, err_size, "module %s: %s", ps.order[i], gi_strerror(rc));
			break;
		}
		summary->written++;
	}
out:
	dist_close(conn);
	pull_set_destroy(&ps);
	return rc;
}
