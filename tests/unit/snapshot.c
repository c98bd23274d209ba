/*
 * Unit tests for the graph snapshot (src/graph/snapshot.c, docs/SCHEMA.md
 * "The graph snapshot"): a cold kg_db that reads the graph from DB.graph
 * answers exactly as one that rebuilds it from the index's rows, on every
 * fixture project and every query of its modules and functions; a snapshot
 * that is stale, of another format, truncated or damaged is refused with its
 * own error and the query answers from the rows; one edit of the project
 * makes the old snapshot stale. The same for the search index's file
 * (DB.search): search_code answers alike from it and from a fresh build.
 * needs:
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fs.h"
#include "graph/graph.h"
#include "graph/query.h"
#include "graph/search.h"
#include "harness.h"

static const char *const PROJECTS[] = {"shop",  "web",    "deadcode", "contracts", "xref",
                                       "notes", "ledger", "kvs",      NULL};

/* Queries of the whole graph, deterministic (no times, no paths). */
static const char *const GRAPH_QUERIES[] = {
    "summary",     "stats",       "modules",    "complexity",  "centrality",
    "cycles",      "god_modules", "fan_in_out", "coupling",    "dead_code",
    "heatmap",     "change_risk", "topology",   "hubs",        "unprotected_hubs",
    "api_surface", "xref",        "contracts",  "conventions", "structs",
    NULL,
};
/* Queries of one module. */
static const char *const MODULE_QUERIES[] = {"module_details", "functions", "dependents",
                                             "dependencies",   "impact",    NULL};

static char *dumps(json_t *j)
{
	char *s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
	TH_ASSERT(s != NULL);
	return s;
}

/* Appends the answer of `name` for (module, function) to `all` as text. */
static void answer(struct kg_db *db, const char *name, const char *module, const char *function,
                   json_t *all)
{
	struct kg_query_params p = {0};
	p.module = module;
	p.function = function;
	p.depth = 3;
	json_t *r = NULL;
	int rc = kg_query(db, name, &p, &r);
	char key[1024];
	snprintf(key, sizeof(key), "%s %s %s", name, module ? module : "-",
	         function ? function : "-");
	json_object_set_new(all, key, r ? r : json_integer(rc));
}

/* Every answer the project's graph gives, as one JSON object; *source gets
 * where the graph came from (status's graph_source). */
static char *answers(const char *db_path, char *source, size_t source_len)
{
	struct kg_db *db = NULL;
	TH_ASSERT_OK(kg_db_open(db_path, false, &db));
	json_t *all = json_object();
	for (const char *const *q = GRAPH_QUERIES; *q; q++)
		answer(db, *q, NULL, NULL, all);
	json_t *mods = json_object_get(all, "modules - -");
	json_t *list = json_object_get(mods, "modules");
	TH_ASSERT_MSG(json_array_size(list) > 0, "no modules in %s", db_path);
	size_t i;
	json_t *m;
	const char *first = NULL;
	json_array_foreach(list, i, m)
	{
		const char *name = json_string_value(json_object_get(m, "name"));
		TH_ASSERT(name != NULL);
		if (!first)
			first = name;
		for (const char *const *q = MODULE_QUERIES; *q; q++)
			answer(db, *q, name, NULL, all);
		struct kg_query_params p = {0};
		p.from = first;
		p.to = name;
		json_t *r = NULL;
		kg_query(db, "path", &p, &r);
		char key[1024];
		snprintf(key, sizeof(key), "path %s %s", first, name);
		json_object_set_new(all, key, r ? r : json_null());
		/* Every function of the module, by name/arity. */
		char fkey[1024];
		snprintf(fkey, sizeof(fkey), "functions %s -", name);
		json_t *fl = json_object_get(json_object_get(all, fkey), "functions");
		size_t k;
		json_t *f;
		json_array_foreach(fl, k, f)
		{
			char na[512];
			snprintf(na, sizeof(na), "%s/%lld",
			         json_string_value(json_object_get(f, "name")),
			         json_integer_value(json_object_get(f, "arity")));
			answer(db, "function_details", name, na, all);
			answer(db, "impact", name, na, all);
		}
	}
	static const char *const searches[] = {
	    "cart total", "log a message", "insert row", "render page", "parse", "x", NULL};
	for (const char *const *q = searches; *q; q++) {
		struct kg_query_params p = {0};
		json_t *args = json_pack("{s:s, s:i}", "query", *q, "limit", 50);
		p.args = args;
		json_t *r = NULL;
		int rc = kg_query(db, "search_code", &p, &r);
		json_decref(args);
		char key[1024];
		snprintf(key, sizeof(key), "search_code %s", *q);
		json_object_set_new(all, key, r ? r : json_integer(rc));
	}
	json_t *st = NULL;
	TH_ASSERT_OK(kg_query(db, "status", NULL, &st));
	const char *src = json_string_value(json_object_get(st, "graph_source"));
	snprintf(source, source_len, "%s", src ? src : "none");
	json_decref(st);
	char *text = dumps(all);
	json_decref(all);
	kg_db_close(db);
	return text;
}

static void index_fixture(const char *name, char *db_path, size_t len)
{
	char root[4096];
	snprintf(root, sizeof(root), "%s/tests/fixtures/projects/%s", th_srcdir(), name);
	snprintf(db_path, len, "%s/%s.db", th_tmpdir(), name);
	struct kg_index_options opt = {.jobs = 1, .no_build = true};
	json_t *summary = NULL;
	TH_ASSERT_OK(kg_index_project(root, db_path, &opt, &summary));
	json_decref(summary);
}

static char *snapshot_path(const char *db_path)
{
	static char path[4200];
	snprintf(path, sizeof(path), "%s.graph", db_path);
	return path;
}

static void snapshot_update(const char *db_path)
{
	struct kg_db *db = NULL;
	TH_ASSERT_OK(kg_db_open(db_path, false, &db));
	TH_ASSERT_OK(kg_db_snapshot_update(db));
	kg_db_close(db);
}

/* The answers from the rows (snapshots switched off) are the reference. */
static char *reference_answers(const char *db_path)
{
	char source[32];
	setenv("GIULIA_GRAPH_SNAPSHOT", "0", 1);
	char *text = answers(db_path, source, sizeof(source));
	unsetenv("GIULIA_GRAPH_SNAPSHOT");
	TH_ASSERT_STR_EQ(source, "index");
	return text;
}

static void snapshot_answers_as_the_index(void)
{
	for (const char *const *p = PROJECTS; *p; p++) {
		char db_path[4096], source[32];
		index_fixture(*p, db_path, sizeof(db_path));
		char *want = reference_answers(db_path);
		struct stat sb;
		TH_ASSERT_MSG(stat(snapshot_path(db_path), &sb) != 0,
		              "%s: a snapshot was written with snapshots off", *p);
		snapshot_update(db_path);
		TH_ASSERT_MSG(stat(snapshot_path(db_path), &sb) == 0, "%s: no snapshot written",
		              *p);
		char *got = answers(db_path, source, sizeof(source));
		TH_ASSERT_MSG(strcmp(source, "snapshot") == 0, "%s: graph from %s", *p, source);
		TH_ASSERT_MSG(strcmp(want, got) == 0, "%s: the snapshot answers differently", *p);
		free(want);
		free(got);
	}
}

/* Reads the snapshot file whole. */
static char *file_read(const char *path, size_t *len)
{
	char *data = NULL;
	TH_ASSERT_OK(gi_fs_read_file(path, 1u << 30, &data, len));
	return data;
}

static void file_write(const char *path, const char *data, size_t len)
{
	TH_ASSERT_OK(gi_fs_write_file(path, data, len));
}

/* A damaged file is refused with its error, and the query answers from the
 * rows (and writes a good snapshot again). */
static void damaged_snapshot_falls_back(void)
{
	char db_path[4096], source[32];
	index_fixture("shop", db_path, sizeof(db_path));
	char *want = reference_answers(db_path);
	snapshot_update(db_path);
	const char *snap = snapshot_path(db_path);
	size_t len = 0;
	char *good = file_read(snap, &len);
	TH_ASSERT(len > 64);
	uint64_t stamp;
	memcpy(&stamp, good + 16, sizeof(stamp));
	struct kg_graph *g = NULL;
	TH_ASSERT_OK(kg_graph_snapshot_parse(good, len, stamp, &g));
	kg_graph_free(g);

	/* Refused in memory, each with its error. */
	TH_ASSERT_INT_EQ(kg_graph_snapshot_parse(good, len, stamp + 1, &g), GI_EDBVERSION);
	TH_ASSERT(g == NULL);
	char *bad = malloc(len);
	memcpy(bad, good, len);
	bad[8]++; /* format version */
	TH_ASSERT_INT_EQ(kg_graph_snapshot_parse(bad, len, stamp, &g), GI_EDBVERSION);
	memcpy(bad, good, len);
	bad[12] ^= 0x7; /* byte-order mark */
	TH_ASSERT_INT_EQ(kg_graph_snapshot_parse(bad, len, stamp, &g), GI_EDBVERSION);
	memcpy(bad, good, len);
	bad[0] = 'X'; /* not a snapshot */
	TH_ASSERT_INT_EQ(kg_graph_snapshot_parse(bad, len, stamp, &g), GI_ECORRUPT);
	for (size_t cut = 0; cut < len; cut += len / 17 + 1)
		TH_ASSERT_INT_EQ(kg_graph_snapshot_parse(good, cut, stamp, &g), GI_ECORRUPT);
	memcpy(bad, good, len);
	bad[len / 2] ^= 0x20; /* a damaged byte: the checksum */
	TH_ASSERT_INT_EQ(kg_graph_snapshot_parse(bad, len, stamp, &g), GI_ECORRUPT);
	TH_ASSERT(g == NULL);

	/* On disk: each refused, the answers unchanged, a good one written back. */
	struct {
		size_t len;
		int at; /* byte to change, -1: none */
	} cases[] = {{len / 3, -1}, {len, (int)(len / 2)}, {len, 8}, {0, -1}};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		memcpy(bad, good, len);
		if (cases[c].at >= 0)
			bad[cases[c].at] ^= 0x11;
		file_write(snap, bad, cases[c].len);
		char *got = answers(db_path, source, sizeof(source));
		TH_ASSERT_MSG(strcmp(source, "index") == 0, "case %zu: graph from %s", c, source);
		TH_ASSERT_MSG(strcmp(want, got) == 0, "case %zu: answers differ", c);
		free(got);
		got = answers(db_path, source, sizeof(source));
		TH_ASSERT_MSG(strcmp(source, "snapshot") == 0, "case %zu: not rewritten", c);
		free(got);
	}
	/* A missing file, the same. */
	TH_ASSERT(unlink(snap) == 0);
	char *got = answers(db_path, source, sizeof(source));
	TH_ASSERT_STR_EQ(source, "index");
	TH_ASSERT(strcmp(want, got) == 0);
	free(got);
	free(bad);
	free(good);
	free(want);
}

/* The search index's file: written by the first search_code, read by the
 * next process with the same answers, refused when damaged or stale. */
static void search_snapshot_falls_back(void)
{
	char db_path[4096], source[32], search[4200];
	index_fixture("notes", db_path, sizeof(db_path));
	char *want = reference_answers(db_path);
	snprintf(search, sizeof(search), "%s.search", db_path);
	struct stat sb;
	TH_ASSERT(stat(search, &sb) != 0);
	char *got = answers(db_path, source, sizeof(source)); /* writes both files */
	TH_ASSERT(strcmp(want, got) == 0);
	free(got);
	TH_ASSERT_MSG(stat(search, &sb) == 0, "no search snapshot written");
	got = answers(db_path, source, sizeof(source)); /* reads both */
	TH_ASSERT_STR_EQ(source, "snapshot");
	TH_ASSERT(strcmp(want, got) == 0);
	free(got);

	size_t len = 0;
	char *good = file_read(search, &len);
	uint64_t stamp;
	memcpy(&stamp, good + 16, sizeof(stamp));
	struct kg_db *db = NULL;
	TH_ASSERT_OK(kg_db_open(db_path, false, &db));
	json_t *r = NULL;
	TH_ASSERT_OK(kg_query(db, "hubs", NULL, &r)); /* loads the graph */
	json_decref(r);
	kg_db_close(db);
	struct kg_graph *g = NULL;
	uint64_t gstamp;
	size_t glen = 0;
	char *graph = file_read(snapshot_path(db_path), &glen);
	memcpy(&gstamp, graph + 16, sizeof(gstamp));
	TH_ASSERT(gstamp == stamp);
	TH_ASSERT_OK(kg_graph_snapshot_parse(graph, glen, gstamp, &g));
	struct kg_search_index *ix = NULL;
	TH_ASSERT_OK(kg_search_index_parse(good, len, stamp, g, &ix));
	kg_search_index_free(ix);
	TH_ASSERT_INT_EQ(kg_search_index_parse(good, len, stamp + 1, g, &ix), GI_EDBVERSION);
	for (size_t cut = 0; cut < len; cut += len / 13 + 1)
		TH_ASSERT_INT_EQ(kg_search_index_parse(good, cut, stamp, g, &ix), GI_ECORRUPT);
	char *bad = malloc(len);
	memcpy(bad, good, len);
	bad[len - 3] ^= 0x40;
	TH_ASSERT_INT_EQ(kg_search_index_parse(bad, len, stamp, g, &ix), GI_ECORRUPT);
	TH_ASSERT(ix == NULL);
	/* On disk, damaged: the next search rebuilds it with the same answers. */
	file_write(search, bad, len);
	got = answers(db_path, source, sizeof(source));
	TH_ASSERT(strcmp(want, got) == 0);
	free(got);
	size_t again_len = 0;
	char *again = file_read(search, &again_len);
	TH_ASSERT(again_len == len && memcmp(again, good, len) == 0);
	free(again);
	kg_graph_free(g);
	free(graph);
	free(bad);
	free(good);
	free(want);
}

/* An edit indexed after the snapshot was written makes it stale: the next
 * cold query answers the new graph, not the snapshot's. */
static void edit_makes_the_snapshot_stale(void)
{
	char root[4096], cmd[9000], db_path[4096], source[32];
	snprintf(root, sizeof(root), "%s/shop", th_tmpdir());
	snprintf(cmd, sizeof(cmd), "cp -r '%s/tests/fixtures/projects/shop' '%s'", th_srcdir(),
	         root);
	TH_ASSERT(system(cmd) == 0);
	snprintf(db_path, sizeof(db_path), "%s/shop.db", th_tmpdir());
	struct kg_index_options opt = {.jobs = 1, .no_build = true};
	json_t *summary = NULL;
	TH_ASSERT_OK(kg_index_project(root, db_path, &opt, &summary));
	json_decref(summary);
	snapshot_update(db_path);
	char *before = answers(db_path, source, sizeof(source));
	TH_ASSERT_STR_EQ(source, "snapshot");
	char file[4200];
	snprintf(file, sizeof(file), "%s/lib/shop/extra.ex", root);
	static const char extra[] =
	    "defmodule Shop.Extra do\n  def go, do: Shop.Log.info(:x)\nend\n";
	file_write(file, extra, sizeof(extra) - 1);
	TH_ASSERT_OK(kg_index_project(root, db_path, &opt, &summary));
	json_decref(summary);
	char *after = answers(db_path, source, sizeof(source));
	TH_ASSERT_STR_EQ(source, "index");
	TH_ASSERT(strcmp(before, after) != 0);
	TH_ASSERT(strstr(after, "Shop.Extra") != NULL);
	char *want = reference_answers(db_path);
	TH_ASSERT(strcmp(want, after) == 0);
	free(before);
	free(after);
	free(want);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(snapshot_answers_as_the_index),
	    TH_TEST(damaged_snapshot_falls_back),
	    TH_TEST(search_snapshot_falls_back),
	    TH_TEST(edit_makes_the_snapshot_stale),
	    TH_END,
	};
	return th_main(argc, argv, "unit_snapshot", tests);
}
