/*
 * index.c - kg_index_project (see query.h): walk a project, parse what
 * changed on parser threads, write the facts on this thread.
 *
 * Files are .ex and .exs under the root, outside deps/, _build/,
 * node_modules/, .git/ and .giulia/, and not ignored by the root .gitignore
 * (the subset of ignore.h). Incremental rule: a file whose size and mtime match the stored ones is
 * not read; one whose content hash matches is not parsed (only its mtime is updated); anything else
 * is parsed and its rows replaced. Files that disappeared are removed. The whole run is one
 * transaction, so a failed run leaves the previous index intact; a run that finds nothing changed
 * writes nothing but, when a directory's listing changed, the walk's record of the listings
 * (index_walk.h: a directory whose inode and ctime are the recorded ones is not read again).
 *
 * Threads: `jobs` threads parse. jobs - 1 of them take files from a shared
 * cursor and hand finished facts to the writer (the calling thread) through a
 * bounded queue, so that at most INDEX_QUEUE_MAX files' facts are alive at
 * once; the writer takes the next file from the same cursor itself whenever
 * nothing waits to be written. With one job nothing is handed over.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/hash.h"
#include "base/log.h"
#include "base/str.h"
#include "graph/graph.h"
#include "graph/ignore.h"
#include "graph/index_walk.h"
#include "graph/query.h"
#include "source/beam.h"
#include "source/eex.h"
#include "source/elixir.h"
#include "store/store.h"

#define INDEX_QUEUE_MAX 32
#define INDEX_JOBS_MAX  16
#define INDEX_WAL_MAX   (1 << 20) /* checkpoint after a run that left a bigger WAL */

static const char *const skip_dirs[] = {"deps", "_build", "node_modules", ".git", ".giulia", NULL};

struct index_job {
	char *relpath;
	char *abspath;
	uint64_t size;
	int64_t mtime_ns;
	int64_t old_id; /* 0: new file */
	uint64_t old_hash;
	bool is_test;
	bool is_beam; /* object code from a --beam directory (path is absolute) */
	/* results */
	struct facts_file *facts; /* NULL with touch_only */
	bool touch_only;
};

struct index_run {
	const char *root;
	size_t root_len;
	bool force;
	struct gi_map *known; /* relpath -> struct st_file_state * */
	struct kg_ignore ignore;
	char **test_paths;  /* mix.exs `test_paths:`, NULL-terminated; NULL: default */
	struct gi_vec jobs; /* struct index_job */
	size_t total_files;
	/* the hand-over between parser threads and the writer */
	pthread_mutex_t lock;
	pthread_cond_t changed;
	atomic_size_t next;
	size_t *done; /* ring of job indexes */
	size_t done_head, done_len;
	size_t finished;
};

static int64_t stat_mtime_ns(const struct stat *sb)
{
	return (int64_t)sb->st_mtim.tv_sec * 1000000000LL + sb->st_mtim.tv_nsec;
}

/* Queues `path` (known in the store as `rel`) unless unchanged since the last run. */
/* True when `rel` is under DIR/test/ where DIR holds a mix.exs of its own
 * (a nested Mix project: Elixir's lib/elixir/test/, an umbrella's app): the
 * tests of that project, whatever kg_path_is_test_in says of a `test`
 * directory below a `lib` one. `path` is `rel` made absolute. */
static bool nested_project_test(const char *path, const char *rel)
{
	size_t prefix = (size_t)(rel - path);
	for (const char *t = strstr(rel, "/test/"); t; t = strstr(t + 1, "/test/")) {
		char mix[4096];
		int n = snprintf(mix, sizeof(mix), "%.*s/mix.exs",
		                 (int)(prefix + (size_t)(t - rel)), path);
		if (n > 0 && (size_t)n < sizeof(mix) && access(mix, R_OK) == 0)
			return true;
	}
	return false;
}

static void job_add(struct index_run *run, const char *path, const char *rel, bool is_beam)
{
	struct stat sb;
	if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
		return;
	run->total_files++;
	struct st_file_state *known = gi_map_get(run->known, rel);
	int64_t mtime = stat_mtime_ns(&sb);
	if (known) {
		known->seen = true;
		if (!run->force && known->size == (uint64_t)sb.st_size && known->mtime_ns == mtime)
			return;
	}
	struct index_job *j = gi_vec_push_zero(&run->jobs);
	j->relpath = gi_strdup(rel);
	j->abspath = gi_strdup(path);
	j->size = (uint64_t)sb.st_size;
	j->mtime_ns = mtime;
	j->old_id = known ? known->id : 0;
	j->old_hash = known ? known->hash : 0;
	j->is_test = !is_beam && (kg_path_is_test_in(rel, (const char *const *)run->test_paths) ||
	                          nested_project_test(path, rel));
	j->is_beam = is_beam;
}

#define TEST_PATHS_MAX 16

/* Parses the list of string literals at `p` (`["a", "b"]`) into a
 * NULL-terminated array the caller frees with test_paths_free; NULL when it
 * is anything else (a computed list: the default applies). */
static char **test_paths_parse(const char *p, const char *end)
{
	char **out = gi_calloc(TEST_PATHS_MAX + 1, sizeof(char *));
	size_t n = 0;
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	if (p >= end || *p != '[')
		goto bad;
	p++;
	for (;;) {
		while (p < end &&
		       (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == ','))
			p++;
		if (p >= end)
			goto bad;
		if (*p == ']')
			break;
		if (*p != '"' || n == TEST_PATHS_MAX)
			goto bad;
		const char *q = memchr(p + 1, '"', (size_t)(end - p - 1));
		if (!q || memchr(p + 1, '#', (size_t)(q - p - 1)) ||
		    memchr(p + 1, '\\', (size_t)(q - p - 1)))
			goto bad;
		out[n++] = gi_strndup(p + 1, (size_t)(q - p - 1));
		p = q + 1;
	}
	if (n > 0)
		return out;
bad:
	for (size_t i = 0; i < n; i++)
		gi_free(out[i]);
	gi_free(out);
	return NULL;
}

static void test_paths_free(char **paths)
{
	for (size_t i = 0; paths && paths[i]; i++)
		gi_free(paths[i]);
	gi_free(paths);
}

/* The project's test paths: the literal list of `test_paths:` in the root's
 * mix.exs, or NULL (the default, test/) when there is none or it is not a
 * literal. */
static char **test_paths_load(const char *root)
{
	char path[4096], *text = NULL;
	size_t len = 0;
	char **out = NULL;
	int n = snprintf(path, sizeof(path), "%s/mix.exs", root);
	if (n > 0 && (size_t)n < sizeof(path) && gi_fs_read_file(path, 1 << 20, &text, &len) == 0) {
		const char *key = memmem(text, len, "test_paths:", 11);
		if (key)
			out = test_paths_parse(key + 11, text + len);
	}
	gi_free(text);
	return out;
}

/* The walk's callback (kg_walk_sources): queues a source file unless it
 * is unchanged; true when it is a source. */
static bool walk_visit(const char *path, const char *rel, void *ctx)
{
	struct index_run *run = ctx;
	if (!gi_str_ends_with(path, ".ex") && !gi_str_ends_with(path, ".exs") &&
	    !eex_is_template(path))
		return false;
	if (kg_ignore_match(&run->ignore, rel))
		return false;
	job_add(run, path, rel, false);
	return true;
}

/* Queues the object code of `dirs` (beam_dirs_scan: one file per module), stored
 * under its absolute path. Modules also defined in source are read all the
 * same: the graph prefers source (kg_graph_load) and the beam facts fill what
 * source lacks. */
static int beam_jobs_add(struct index_run *run, const char *const *dirs)
{
	struct gi_vec entries;
	char err[512];
	int rc = beam_dirs_scan(dirs, &entries, err, sizeof(err));
	if (rc) {
		gi_log_error("index", "%s", err);
		return rc;
	}
	for (size_t i = 0; i < entries.len; i++) {
		const struct beam_entry *e = gi_vec_get(&entries, i);
		char *real = realpath(e->path, NULL);
		job_add(run, real ? real : e->path, real ? real : e->path, true);
		free(real);
	}
	beam_entries_free(&entries);
	return 0;
}

/* ---- the project's own object code under _build --------------------------- */

#define BUILD_APPS_MAX 64

/* Adds to `apps` (arena-free copies, at most BUILD_APPS_MAX) the application
 * that the mix.exs at `path` names (`app: :name` in its project/0). */
static void build_app_read(const char *path, char **apps, int *count)
{
	char *text = NULL;
	size_t len = 0;
	if (*count >= BUILD_APPS_MAX || gi_fs_read_file(path, 1 << 20, &text, &len) != 0)
		return;
	for (const char *p = strstr(text, "app:"); p; p = strstr(p + 4, "app:")) {
		if (p > text && (p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z')))
			continue; /* another key ending in app: (e.g. `umbrella_app:`) */
		const char *q = p + 4;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q != ':')
			continue;
		const char *name = ++q;
		while ((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '_')
			q++;
		if (q > name && q - name < 256) {
			apps[(*count)++] = gi_strndup(name, (size_t)(q - name));
			break;
		}
	}
	gi_free(text);
}

struct build_scan {
	const char *root;
	char **apps;
	int napps;
};

static int build_umbrella_visit(const char *path, void *ctx)
{
	struct build_scan *b = ctx;
	const char *rel = path + strlen(b->root);
	/* apps/NAME/mix.exs only */
	if (gi_str_ends_with(path, "/mix.exs") && GI_STR_STARTS(rel, "/apps/") &&
	    strchr(rel + 6, '/') == strrchr(rel, '/'))
		build_app_read(path, b->apps, &b->napps);
	return 0;
}

/* The ebin directories of the project's own applications (named by its
 * mix.exs, and apps/ESC/mix.exs in an umbrella) under ROOT/_build/ENV/lib:
 * for each, the most recently built of the environments. Dependencies
 * (the other applications there) are left out: they are not the project.
 * Returns a NULL-terminated list (caller frees with build_dirs_free), or
 * NULL when there is none. */
static char **index_build_dirs(const char *root)
{
	char *apps[BUILD_APPS_MAX];
	struct build_scan b = {root, apps, 0};
	struct gi_buf path;
	gi_buf_init(&path, 0);
	gi_buf_printf(&path, "%s/mix.exs", root);
	build_app_read(gi_buf_str(&path), apps, &b.napps);
	gi_buf_reset(&path);
	gi_buf_printf(&path, "%s/apps", root);
	struct stat sb;
	if (stat(gi_buf_str(&path), &sb) == 0 && S_ISDIR(sb.st_mode)) {
		static const char *const skip[] = {"deps", "_build", "node_modules", ".git",
		                                   "lib",  "test",   "priv",         NULL};
		gi_fs_walk(gi_buf_str(&path), skip, build_umbrella_visit, &b);
	}
	char **dirs = NULL;
	int ndirs = 0;
	gi_buf_reset(&path);
	gi_buf_printf(&path, "%s/_build", root);
	DIR *d = b.napps ? opendir(gi_buf_str(&path)) : NULL;
	char *best[BUILD_APPS_MAX] = {0};
	int64_t best_mtime[BUILD_APPS_MAX] = {0};
	for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d)) {
		if (e->d_name[0] == '.')
			continue;
		for (int i = 0; i < b.napps; i++) {
			gi_buf_reset(&path);
			gi_buf_printf(&path, "%s/_build/%s/lib/%s/ebin", root, e->d_name, apps[i]);
			if (stat(gi_buf_str(&path), &sb) != 0 || !S_ISDIR(sb.st_mode))
				continue;
			int64_t mt = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
			if (!best[i] || mt > best_mtime[i]) {
				gi_free(best[i]);
				best[i] = gi_strdup(gi_buf_str(&path));
				best_mtime[i] = mt;
			}
		}
	}
	if (d)
		closedir(d);
	for (int i = 0; i < b.napps; i++) {
		if (best[i]) {
			dirs = gi_realloc(dirs, sizeof(char *) * (size_t)(ndirs + 2));
			dirs[ndirs++] = best[i];
			dirs[ndirs] = NULL;
		}
		gi_free(apps[i]);
	}
	gi_buf_destroy(&path);
	return dirs;
}

static void build_dirs_free(char **dirs)
{
	for (size_t i = 0; dirs && dirs[i]; i++)
		gi_free(dirs[i]);
	gi_free(dirs);
}

static struct facts_file *facts_skipped(const char *relpath, const char *reason)
{
	struct facts_file *f = facts_file_new(relpath, FACTS_FROM_SOURCE);
	f->skipped = true;
	f->skip_reason = gi_arena_strdup(&f->arena, reason);
	gi_log_warn("index", "skipping %s: %s", relpath, reason);
	return f;
}

/* Reads one .beam file; a file that cannot be read is recorded as skipped. */
static void job_parse_beam(struct index_job *j, bool force)
{
	char *data = NULL, err[512];
	size_t len = 0;
	int rc = gi_fs_read_file(j->abspath, BEAM_MAX_FILE_SIZE, &data, &len);
	if (rc) {
		j->facts = facts_skipped(j->relpath,
		                         rc == GI_ETOOBIG ? "larger than 16 MB" : "unreadable");
		goto stamp;
	}
	uint64_t hash = gi_hash64(data, len, GI_HASH_SEED);
	if (!force && j->old_id && hash == j->old_hash) {
		j->touch_only = true;
		gi_free(data);
		return;
	}
	j->size = len;
	rc = beam_read(j->relpath, (const unsigned char *)data, len, &j->facts, err, sizeof(err));
	gi_free(data);
	if (rc)
		j->facts = facts_skipped(j->relpath, err);
	j->facts->content_hash = hash;
stamp:
	j->facts->size = j->size;
	j->facts->mtime_ns = j->mtime_ns;
}

static void job_parse(struct index_job *j, bool force)
{
	if (j->is_beam) {
		job_parse_beam(j, force);
		return;
	}
	if (j->size > EX_MAX_FILE_SIZE) {
		j->facts = facts_skipped(j->relpath, "larger than 5 MB");
		goto stamp;
	}
	char *text = NULL;
	size_t len = 0;
	int rc = gi_fs_read_file(j->abspath, EX_MAX_FILE_SIZE, &text, &len);
	if (rc) {
		j->facts =
		    facts_skipped(j->relpath, rc == GI_ETOOBIG ? "larger than 5 MB" : "unreadable");
		goto stamp;
	}
	uint64_t hash = gi_hash64(text, len, GI_HASH_SEED);
	if (!force && j->old_id && hash == j->old_hash) {
		j->touch_only = true;
		gi_free(text);
		return;
	}
	j->size = len;
	/* The clause-body hashes wait for the first `duplicates`
	 * (kg_duplicates asks for them per file). */
	rc = eex_is_template(j->relpath)
	         ? eex_parse(j->relpath, text, len, &j->facts)
	         : ex_parse_with(j->relpath, text, len, EX_PARSE_NO_BODY_HASHES, &j->facts);
	gi_free(text);
	if (rc || !j->facts) {
		facts_file_free(j->facts);
		j->facts = facts_skipped(j->relpath, rc == GI_EINVAL    ? "binary content"
		                                     : rc == GI_ETOOBIG ? "larger than 5 MB"
		                                                        : gi_strerror(rc));
	}
	j->facts->content_hash = hash;
stamp:
	j->facts->size = j->size;
	j->facts->mtime_ns = j->mtime_ns;
}

static void *parser_thread(void *arg)
{
	struct index_run *run = arg;
	for (;;) {
		size_t i = atomic_fetch_add(&run->next, 1);
		if (i >= run->jobs.len)
			break;
		pthread_mutex_lock(&run->lock);
		while (run->done_len >= INDEX_QUEUE_MAX)
			pthread_cond_wait(&run->changed, &run->lock);
		pthread_mutex_unlock(&run->lock);
		job_parse(gi_vec_get(&run->jobs, i), run->force);
		pthread_mutex_lock(&run->lock);
		run->done[(run->done_head + run->done_len) % run->jobs.len] = i;
		run->done_len++;
		pthread_cond_broadcast(&run->changed);
		pthread_mutex_unlock(&run->lock);
	}
	return NULL;
}

/* Writes one job's result. A file whose content hash had not changed
 * (touched, same bytes) only gets its new mtime and counts as unchanged. */
static int job_store(struct st_db *db, struct index_job *j, int *parsed, int *touched)
{
	int rc;
	if (j->touch_only) {
		rc = st_file_touch(db, j->old_id, j->mtime_ns);
		(*touched)++;
	} else {
		rc = st_file_write(db, j->relpath, j->facts, j->is_test);
		(*parsed)++;
	}
	facts_file_free(j->facts);
	j->facts = NULL;
	return rc;
}

/* Runs `nthreads` threads in all: this one writes the results as they
 * come and parses a file itself whenever none is waiting to be written, the
 * other nthreads - 1 only parse. One thread parses and writes in turn, with
 * no hand-over between threads (the least CPU; BENCHMARKS.md, "Index against
 * Elixir's parser and incremental"). */
static int jobs_run(struct index_run *run, struct st_db *db, int nthreads, int *parsed,
                    int *touched)
{
	if (run->jobs.len == 0)
		return 0;
	if (run->jobs.len == 1) /* an edit: no thread hand-over to wait for */
		nthreads = 1;
	run->done = gi_calloc(run->jobs.len, sizeof(size_t));
	pthread_t threads[INDEX_JOBS_MAX];
	int started = 0;
	for (int t = 1; t < nthreads; t++)
		if (pthread_create(&threads[started], NULL, parser_thread, run) == 0)
			started++;
	int rc = 0;
	if (started == 0) { /* one thread, or no other could start: parse here */
		for (size_t i = 0; i < run->jobs.len && !rc; i++) {
			job_parse(gi_vec_get(&run->jobs, i), run->force);
			rc = job_store(db, gi_vec_get(&run->jobs, i), parsed, touched);
		}
		return rc;
	}
	size_t written = 0;
	while (written < run->jobs.len) {
		pthread_mutex_lock(&run->lock);
		while (run->done_len == 0 && atomic_load(&run->next) >= run->jobs.len)
			pthread_cond_wait(&run->changed, &run->lock);
		if (run->done_len == 0) { /* nothing to write: parse the next file here */
			pthread_mutex_unlock(&run->lock);
			size_t i = atomic_fetch_add(&run->next, 1);
			if (i < run->jobs.len) {
				struct index_job *j = gi_vec_get(&run->jobs, i);
				job_parse(j, run->force);
				if (!rc)
					rc = job_store(db, j, parsed, touched);
				facts_file_free(j->facts);
				j->facts = NULL;
				written++;
			}
			continue;
		}
		size_t i = run->done[run->done_head];
		run->done_head = (run->done_head + 1) % run->jobs.len;
		run->done_len--;
		pthread_cond_broadcast(&run->changed);
		pthread_mutex_unlock(&run->lock);
		struct index_job *j = gi_vec_get(&run->jobs, i);
		if (!rc)
			rc = job_store(db, j, parsed, touched);
		facts_file_free(j->facts);
		j->facts = NULL;
		written++;
	}
	for (int t = 0; t < started; t++)
		pthread_join(threads[t], NULL);
	return rc;
}

static int default_jobs(const struct kg_index_options *opt)
{
	int n = opt && opt->jobs > 0 ? opt->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		n = 1;
	return n > INDEX_JOBS_MAX ? INDEX_JOBS_MAX : n;
}

/* Marks the object code files (stored under absolute paths) as seen, so
 * that a sources-only run keeps them. */
static void beam_files_keep(struct gi_map *known)
{
	for (size_t i = 0; i < known->cap; i++)
		if (known->slots[i].key && known->slots[i].key[0] == '/')
			((struct st_file_state *)known->slots[i].value)->seen = true;
}

static size_t unseen_count(const struct gi_map *known)
{
	size_t n = 0;
	for (size_t i = 0; i < known->cap; i++)
		if (known->slots[i].key && !((struct st_file_state *)known->slots[i].value)->seen)
			n++;
	return n;
}

/* The readers' version: what they extract from a file changes with it
 * (a new kind of call, a category the graph needs), so that an index made by
 * an older Giulia parses every file again once, as --force does, though the
 * schema is the same. Bump it whenever elixir.c, eex.c or beam.c extract
 * something new. */
#define INDEX_READER_VERSION "2026-12-02.30"

/* True when the facts of the database were made by other readers. */
static bool reader_changed(struct st_db *db)
{
	char *v = NULL;
	st_meta_get(db, "reader", &v);
	bool changed = v == NULL || strcmp(v, INDEX_READER_VERSION) != 0;
	gi_free(v);
	return changed;
}

/* True when the database has not recorded `real` as its root yet: a new
 * database (even of an empty project), or a project that moved. */
static bool root_changed(struct st_db *db, const char *real)
{
	char *root = NULL;
	st_meta_get(db, "root", &root);
	bool changed = root == NULL || strcmp(root, real) != 0;
	gi_free(root);
	return changed;
}

static int deleted_remove(struct st_db *db, struct gi_map *known, int *removed)
{
	for (size_t i = 0; i < known->cap; i++) {
		struct st_file_state *s = known->slots[i].value;
		if (!known->slots[i].key || s->seen)
			continue;
		int rc = st_file_delete(db, s->id);
		if (rc)
			return rc;
		(*removed)++;
	}
	return 0;
}

/* Counts the index's writes in meta "generation", in the write's own
 * transaction: the graph snapshot (kg_db_snapshot_stamp) is tied to it. */
static int generation_bump(struct st_db *db)
{
	char *v = NULL;
	int rc = st_meta_get(db, "generation", &v);
	long long n = v ? strtoll(v, NULL, 10) : 0;
	gi_free(v);
	if (rc)
		return rc;
	char next[32];
	snprintf(next, sizeof(next), "%lld", n + 1);
	return st_meta_set(db, "generation", next);
}

/* The summary kept in meta "summary" (summary_store) when it counts the
 * current generation, else NULL. */
static json_t *summary_cached(struct st_db *db)
{
	char *generation = NULL, *of = NULL, *text = NULL;
	json_t *cached = NULL;
	if (st_meta_get(db, "generation", &generation) == 0 &&
	    st_meta_get(db, "summary_generation", &of) == 0 && generation && of &&
	    strcmp(generation, of) == 0 && st_meta_get(db, "summary", &text) == 0 && text)
		cached = json_loads(text, 0, NULL);
	gi_free(generation);
	gi_free(of);
	gi_free(text);
	if (!json_is_object(cached)) {
		json_decref(cached);
		return NULL;
	}
	return cached;
}

/* The summary's counts made in the write's transaction, from `previous`
 * (the one of the generation before the writes, or NULL) and what the
 * writes changed (st_summary_after_writes), and kept in meta "summary" with
 * the generation they count, so that a run that writes nothing reads them
 * back instead of counting every table. */
static int summary_store(struct st_db *db, const json_t *previous, json_t **out)
{
	json_t *counts = json_object();
	char *generation = NULL, *text = NULL;
	int rc = st_summary_after_writes(db, previous, counts);
	if (!rc)
		rc = st_meta_get(db, "generation", &generation);
	if (!rc && generation) {
		text = json_dumps(counts, JSON_COMPACT);
		rc = st_meta_set(db, "summary", text ? text : "");
		if (!rc)
			rc = st_meta_set(db, "summary_generation", generation);
	}
	free(text);
	gi_free(generation);
	if (rc) {
		json_decref(counts);
		return rc;
	}
	*out = counts;
	return 0;
}

/* The counts of the current generation: from meta when stored for it
 * (summary_store), else counted. */
static int summary_load(struct st_db *db, json_t *summary)
{
	json_t *cached = summary_cached(db);
	int rc = 0;
	if (cached)
		json_object_update(summary, cached);
	else
		rc = st_summary_fill(db, summary);
	json_decref(cached);
	return rc;
}

/* The index directory `dir` (ROOT/.giulia) ignores itself in git, so that
 * an indexed repository's `git status` stays clean. Best effort. */
static void gitignore_ensure(const char *dir)
{
	char path[4096];
	if ((size_t)snprintf(path, sizeof(path), "%s/.gitignore", dir) >= sizeof(path) ||
	    access(path, F_OK) == 0)
		return;
	static const char text[] = "# Giulia's index: a cache of the sources, never committed\n*\n";
	if (gi_fs_write_file(path, text, sizeof(text) - 1) != 0)
		gi_log_warn("index", "could not write %s", path);
}

int kg_index_project(const char *root, const char *db_path, const struct kg_index_options *opt,
                     json_t **summary_out)
{
	*summary_out = NULL;
	int64_t t0 = gi_clock_mono_us();
	char *real = NULL, *path = NULL;
	struct st_db *db = NULL;
	struct gi_map known;
	gi_map_init(&known);
	struct index_run run;
	memset(&run, 0, sizeof(run));
	gi_vec_init(&run.jobs, sizeof(struct index_job));
	pthread_mutex_init(&run.lock, NULL);
	pthread_cond_init(&run.changed, NULL);
	int parsed = 0, removed = 0, touched = 0;
	json_t *counts = NULL; /* the summary made in the write (summary_store) */
	char **build_dirs = NULL;
	const char *const *beam_dirs = NULL;
	char *walk_old = NULL, *walk_new = NULL;
	bool walk_changed = false;
	int rc = gi_fs_realdir(root, &real);
	if (rc)
		goto done;
	if (db_path) {
		path = gi_strdup(db_path);
	} else {
		path = kg_db_default_path(real);
		char *dir = kg_db_default_path(real);
		char *slash = strrchr(dir, '/');
		*slash = '\0';
		rc = gi_fs_mkdir_p(dir);
		if (!rc)
			gitignore_ensure(dir);
		gi_free(dir);
		if (rc)
			goto done;
	}
	rc = st_open(path, true, &db);
	if (rc)
		goto done;
	rc = st_files_load(db, &known);
	if (rc)
		goto done;
	run.root = real;
	run.root_len = strlen(real);
	run.force = (opt && opt->force) || reader_changed(db);
	run.known = &known;
	kg_ignore_load(&run.ignore, real);
	run.test_paths = test_paths_load(real);
	/* The directories' listings as the last run recorded them
	 * (index_walk.h), valid for the same ignore patterns and readers. */
	rc = st_meta_get(db, "walk", &walk_old);
	uint64_t salt =
	    gi_hash64(INDEX_READER_VERSION, strlen(INDEX_READER_VERSION), run.ignore.text_hash);
	if (!rc)
		rc = kg_walk_sources(real, skip_dirs, salt, walk_old, walk_visit, &run, &walk_new,
		                     &walk_changed);
	kg_ignore_destroy(&run.ignore);
	if (opt && opt->sources_only)
		beam_files_keep(&known);
	else if (opt && opt->beam_dirs && opt->beam_dirs[0])
		beam_dirs = (const char *const *)opt->beam_dirs;
	if (!beam_dirs && !(opt && (opt->no_build || opt->sources_only))) {
		build_dirs = index_build_dirs(real);
		beam_dirs = (const char *const *)build_dirs;
	}
	if (!rc && beam_dirs)
		rc = beam_jobs_add(&run, beam_dirs);
	if (rc)
		goto done;
	if (run.jobs.len > 0 || unseen_count(&known) > 0 || root_changed(db, real) ||
	    reader_changed(db)) {
		bool moved = root_changed(db, real) || reader_changed(db);
		rc = st_begin(db);
		if (rc)
			goto done;
		rc = jobs_run(&run, db, default_jobs(opt), &parsed, &touched);
		if (!rc)
			rc = deleted_remove(db, &known, &removed);
		/* Files touched with the same bytes only get their new mtimes:
		 * the facts, and so the generation and the graph snapshot tied
		 * to it, stay as they were. */
		bool facts_changed = moved || parsed > 0 || removed > 0;
		if (!rc && walk_changed)
			rc = st_meta_set(db, "walk", walk_new);
		walk_changed = false;
		if (!rc && facts_changed)
			rc = st_meta_set(db, "root", real);
		if (!rc && facts_changed)
			rc = st_meta_set(db, "reader", INDEX_READER_VERSION);
		if (!rc && facts_changed) {
			char now[32];
			snprintf(now, sizeof(now), "%lld", (long long)gi_clock_wall_ms());
			rc = st_meta_set(db, "indexed_at_ms", now);
		}
		/* Read before the generation moves on. */
		json_t *previous =
		    facts_changed && !(opt && opt->no_counts) ? summary_cached(db) : NULL;
		if (!rc && facts_changed)
			rc = generation_bump(db);
		if (!rc && facts_changed && !(opt && opt->no_counts))
			rc = summary_store(db, previous, &counts);
		json_decref(previous);
		if (!rc)
			rc = st_commit(db);
		else
			st_rollback(db);
		if (!rc)
			rc = st_checkpoint_if_large(db, INDEX_WAL_MAX);
		if (rc)
			goto done;
	}
	/* A run that changes nothing else still keeps the listings it read
	 * again (a directory settled, a file that is not a source added), so
	 * that the next walk need not read them; a cache, so best effort, and
	 * never waiting for another connection's write. */
	if (walk_changed && st_meta_try_set(db, "walk", walk_new) != 0)
		gi_log_debug("index", "could not record the walk's listings");
	bool counted = counts != NULL;
	json_t *summary = counted ? counts : json_object();
	counts = NULL;
	rc = (opt && opt->no_counts) || counted ? 0 : summary_load(db, summary);
	if (rc) {
		json_decref(summary);
		goto done;
	}
	json_object_set_new(summary, "root", json_string(real));
	json_object_set_new(summary, "db", json_string(path));
	json_object_set_new(summary, "parsed", json_integer(parsed));
	json_object_set_new(summary, "unchanged",
	                    json_integer((json_int_t)(run.total_files - run.jobs.len) + touched));
	json_object_set_new(summary, "removed", json_integer(removed));
	json_t *dirs = json_array();
	for (size_t i = 0; beam_dirs && beam_dirs[i]; i++)
		json_array_append_new(dirs, json_string(beam_dirs[i]));
	json_object_set_new(summary, "beam_dirs", dirs);
	json_object_set_new(summary, "beam_from_build", json_boolean(build_dirs != NULL));
	json_object_set_new(summary, "elapsed_ms",
	                    json_real((double)(gi_clock_mono_us() - t0) / 1000.0));
	*summary_out = summary;
done:
	json_decref(counts);
	for (size_t i = 0; i < run.jobs.len; i++) {
		struct index_job *j = gi_vec_get(&run.jobs, i);
		gi_free(j->relpath);
		gi_free(j->abspath);
		facts_file_free(j->facts);
	}
	gi_vec_destroy(&run.jobs);
	build_dirs_free(build_dirs);
	test_paths_free(run.test_paths);
	gi_free(run.done);
	pthread_mutex_destroy(&run.lock);
	pthread_cond_destroy(&run.changed);
	for (size_t i = 0; i < known.cap; i++)
		gi_free(known.slots[i].value);
	gi_map_destroy(&known);
	st_close(db);
	gi_free(path);
	gi_free(real);
	gi_free(walk_old);
	gi_free(walk_new);
	return rc;
}
