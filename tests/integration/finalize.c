/*
 * Integration tests of profile/finalize: finalising an observation from
 * stored snapshots as a library call, with no HTTP and no daemon. A real
 * observation store (SQLite) in the test's directory, real project indexes
 * (tree-sitter parse of copies of the fixture projects), real object code
 * compiled by erlc for the object-code path.
 * needs: erlang-base
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/error.h"
#include "base/fs.h"
#include "graph/query.h"
#include "harness.h"
#include "json_util.h"
#include "profile/finalize.h"
#include "store/obs_store.h"
#include "support.h"

/* Copies tests/fixtures/REL to TMPDIR/NAME (indexing writes NAME/.giulia,
 * never into the repository), indexes it and registers it with the store;
 * `out` gets the canonical path. */
static void project_add(struct obs_store *st, const char *rel, const char *name, char *out,
                        size_t size)
{
	char src[4096], dst[4096];
	snprintf(src, sizeof(src), "%s/tests/fixtures/%s", th_srcdir(), rel);
	snprintf(dst, sizeof(dst), "%s/%s", th_tmpdir(), name);
	const char *cp[] = {"cp", "-R", src, dst, NULL};
	char *err = NULL;
	TH_ASSERT_MSG(ts_run(cp, NULL, 60000, NULL, &err) == 0, "cp: %s", err ? err : "");
	free(err);
	char *canon = NULL;
	TH_ASSERT_OK(gi_fs_realdir(dst, &canon));
	json_t *summary = NULL;
	TH_ASSERT_OK(kg_index_project(canon, NULL, NULL, &summary));
	TH_ASSERT_OK(obs_store_project_put(st, canon, summary));
	json_decref(summary);
	snprintf(out, size, "%s", canon);
	gi_free(canon);
}

static void data_dir(char *out, size_t size)
{
	snprintf(out, size, "%s/data", th_tmpdir());
}

/* Stores every snapshot of the fixture series under its own session id. */
static void snapshots_add(struct obs_store *st, json_t *snaps)
{
	size_t i;
	json_t *s;
	json_array_foreach(snaps, i, s)
	{
		bool dup = false;
		TH_ASSERT_OK(
		    obs_store_snapshot_add(st, json_string_value(json_object_get(s, "session_id")),
		                           json_string_value(json_object_get(s, "node")),
		                           json_integer_value(json_object_get(s, "seq")), s, &dup));
		TH_ASSERT(!dup);
	}
}

static json_t *finalize_ok(const struct profile_env *env, json_t *fin)
{
	json_t *r = NULL;
	const char *step = NULL;
	int rc = profile_finalize(env, fin, &r, &step);
	TH_ASSERT_MSG(rc == 0, "%s: %s", step ? step : "?", gi_strerror(rc));
	TH_ASSERT(r != NULL);
	return r;
}

/* The busy series (shaped like the catalog target) finalised with two
 * projects registered: the catalog's is picked by its modules, its graph
 * joins the stored profile, and a retry answers with the same profile. */
static void finalize_from_stored_snapshots(void)
{
	char dir[4096], catalog[4096], shop[4096];
	data_dir(dir, sizeof(dir));
	struct obs_store *st = NULL;
	TH_ASSERT_OK(obs_store_open(dir, &st));
	project_add(st, "projects/shop", "shop", shop, sizeof(shop));
	project_add(st, "targets/catalog", "catalog", catalog, sizeof(catalog));
	json_t *snaps = ts_fixture_json("busy", "snapshots.json");
	json_t *fin = ts_fixture_json("busy", "finalize.json");
	json_object_del(fin, "project");
	snapshots_add(st, snaps);

	struct profile_env env = {.data_dir = dir, .store = st};
	json_t *r = finalize_ok(&env, fin);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(r, "project")), catalog);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "snapshots")),
	                 (long long)json_array_size(snaps));
	json_t *pid = json_object_get(r, "profile_id");
	TH_ASSERT(json_is_integer(pid));
	long long id = json_integer_value(pid);

	/* The stored profile is joined with the catalog's graph. */
	json_t *stored = NULL;
	TH_ASSERT_OK(obs_store_profile_get(st, id, &stored));
	json_t *p = json_object_get(stored, "profile");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(stored, "project")), catalog);
	TH_ASSERT_STR_EQ(
	    json_string_value(json_object_get(json_object_get(p, "session"), "project")), catalog);
	json_t *worker =
	    ts_json_find(json_object_get(p, "hot_modules"), "module", "Catalog.Worker");
	TH_ASSERT(worker != NULL);
	json_t *g = json_object_get(worker, "graph");
	TH_ASSERT(json_is_true(json_object_get(g, "in_graph")));
	TH_ASSERT(json_is_integer(json_object_get(g, "ce")));
	TH_ASSERT(ts_rec_find(p, 4, "Catalog.Registry") != NULL);
	json_decref(stored);

	/* The observation records the end and the project used. */
	json_t *obs = NULL;
	TH_ASSERT_OK(obs_store_observation_get(st, "fixture-busy", &obs));
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(obs, "status")), "complete");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(obs, "project")), catalog);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(obs, "profile_id")), id);
	json_decref(obs);

	/* A retry builds nothing and answers with the same profile. */
	json_t *again = finalize_ok(&env, fin);
	TH_ASSERT(json_is_true(json_object_get(again, "duplicate")));
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(again, "profile_id")), id);
	json_t *list = NULL;
	TH_ASSERT_OK(obs_store_profiles_list(st, 10, &list));
	TH_ASSERT_INT_EQ(json_array_size(list), 1);
	json_decref(list);

	json_decref(again);
	json_decref(r);
	json_decref(fin);
	json_decref(snaps);
	obs_store_close(st);
}

static void set_add(json_t *set, const char *name)
{
	json_object_set_new(set, name, json_true());
}

/* Matching counts the observed modules each project defines and picks the
 * most; nothing in common gives no project. */
static void project_match_counts_defined_modules(void)
{
	char dir[4096], catalog[4096], shop[4096];
	data_dir(dir, sizeof(dir));
	struct obs_store *st = NULL;
	TH_ASSERT_OK(obs_store_open(dir, &st));
	char *path = NULL;
	json_t *seen = json_object();
	set_add(seen, "Shop.Cart");
	TH_ASSERT_OK(profile_project_match(st, NULL, seen, &path));
	TH_ASSERT(path == NULL); /* no project registered yet */

	project_add(st, "targets/catalog", "catalog", catalog, sizeof(catalog));
	project_add(st, "projects/shop", "shop", shop, sizeof(shop));
	set_add(seen, "Shop.Repo");
	set_add(seen, "Catalog.Store");
	set_add(seen, ":ets");
	TH_ASSERT_OK(profile_project_match(st, NULL, seen, &path));
	TH_ASSERT_STR_EQ(path, shop);
	gi_free(path);

	json_t *other = json_object();
	set_add(other, "Catalog.Registry");
	set_add(other, "Catalog.Worker");
	set_add(other, "Shop.Cart");
	TH_ASSERT_OK(profile_project_match(st, &profile_graphs_direct, other, &path));
	TH_ASSERT_STR_EQ(path, catalog);
	gi_free(path);

	json_t *none = json_object();
	set_add(none, ":lists");
	set_add(none, "Elsewhere.Thing");
	TH_ASSERT_OK(profile_project_match(st, NULL, none, &path));
	TH_ASSERT(path == NULL);

	/* A registered project whose database went away is passed over. */
	char db[4200];
	snprintf(db, sizeof(db), "%s/.giulia/index.db", shop);
	TH_ASSERT_INT_EQ(remove(db), 0);
	TH_ASSERT_OK(profile_project_match(st, NULL, seen, &path));
	TH_ASSERT_STR_EQ(path, catalog);
	gi_free(path);

	json_decref(none);
	json_decref(other);
	json_decref(seen);
	obs_store_close(st);
}

static json_t *snapshot_with(const char *sid, const char *node, int seq, const char *module)
{
	return json_pack("{s:i, s:s, s:s, s:i, s:I, s:i, s:{s:[{s:s, s:s, s:i, s:i}]}}", "version",
	                 1, "session_id", sid, "node", node, "seq", seq, "timestamp_ms",
	                 (json_int_t)(1764496229000LL + seq * 1000LL), "window_ms", 1000,
	                 "top_processes", "reductions", "pid", "<0.90.0>", "module", module,
	                 "reductions", 1000 + seq, "memory_bytes", 1000);
}

/* No project defines the hot module, but the node's object code is in the
 * cache (as the worker's object code route leaves it): the profile gets its
 * topology from DATA/nodes/NODE/index.db; a module without object code gets
 * a note saying why it has none. */
static void finalize_uses_cached_object_code(void)
{
	const char *node = "oc@127.0.0.1";
	char dir[4096], src[4200];
	data_dir(dir, sizeof(dir));
	struct obs_store *st = NULL;
	TH_ASSERT_OK(obs_store_open(dir, &st));
	char *ndir = profile_node_dir(dir, node);
	char ebin[4200];
	snprintf(ebin, sizeof(ebin), "%s/ebin", ndir);
	TH_ASSERT_OK(gi_fs_mkdir_p(ebin));
	snprintf(src, sizeof(src), "%s/fin_cached.erl", th_tmpdir());
	const char *code = "-module(fin_cached).\n-export([run/1]).\n"
	                   "run(X) -> lists:reverse(X) ++ helper(X).\n"
	                   "helper(X) -> case X of [] -> []; _ -> [1] end.\n";
	TH_ASSERT_OK(gi_fs_write_file(src, code, strlen(code)));
	const char *erlc[] = {"erlc", "-o", ebin, src, NULL};
	char *err = NULL;
	TH_ASSERT_MSG(ts_run(erlc, NULL, 120000, NULL, &err) == 0, "erlc: %s", err ? err : "");
	free(err);

	for (int seq = 0; seq < 3; seq++) {
		json_t *s =
		    snapshot_with("oc-1", node, seq, seq == 2 ? ":fin_absent" : ":fin_cached");
		bool dup;
		TH_ASSERT_OK(obs_store_snapshot_add(st, "oc-1", node, seq, s, &dup));
		json_decref(s);
	}
	json_t *fin =
	    json_pack("{s:s, s:s, s:s}", "session_id", "oc-1", "node", node, "status", "complete");
	struct profile_env env = {.data_dir = dir, .store = st, .graphs = &profile_graphs_direct};
	json_t *r = finalize_ok(&env, fin);
	TH_ASSERT(json_is_null(json_object_get(r, "project")) || !json_object_get(r, "project"));
	TH_ASSERT(json_is_integer(json_object_get(r, "profile_id")));
	char *warnings = json_dumps(json_object_get(r, "warnings"), JSON_COMPACT);
	TH_ASSERT_STR_CONTAINS(warnings, "no topology for 1 observed module(s) (:fin_absent)");
	TH_ASSERT_MSG(strstr(warnings, ":fin_cached") == NULL, "warnings: %s", warnings);
	free(warnings);

	json_t *stored = NULL;
	TH_ASSERT_OK(obs_store_profile_get(st, json_integer_value(json_object_get(r, "profile_id")),
	                                   &stored));
	json_t *hot =
	    ts_json_find(json_object_get(json_object_get(stored, "profile"), "hot_modules"),
	                 "module", ":fin_cached");
	TH_ASSERT(hot != NULL);
	TH_ASSERT(json_is_true(json_object_get(json_object_get(hot, "graph"), "in_graph")));
	char idx[4200];
	snprintf(idx, sizeof(idx), "%s/index.db", ndir);
	TH_ASSERT_MSG(access(idx, F_OK) == 0, "no %s", idx);

	json_decref(stored);
	json_decref(r);
	json_decref(fin);
	gi_free(ndir);
	obs_store_close(st);
}

/* What the caller must give is checked, not assumed; a project the finalize
 * names that is no directory is a warning, and the profile is still built. */
static void finalize_checks_its_input(void)
{
	char dir[4096];
	data_dir(dir, sizeof(dir));
	struct obs_store *st = NULL;
	TH_ASSERT_OK(obs_store_open(dir, &st));
	struct profile_env env = {.data_dir = dir, .store = st};
	json_t *r = NULL;
	const char *step = NULL;
	json_t *bad = json_pack("{s:s, s:s}", "session_id", "x-1", "status", "complete");
	TH_ASSERT_INT_EQ(profile_finalize(&env, bad, &r, &step), GI_EINVAL);
	TH_ASSERT(r == NULL);
	TH_ASSERT(step != NULL);
	json_decref(bad);

	json_t *s = snapshot_with("x-2", "x@127.0.0.1", 0, "Some.Module");
	bool dup;
	TH_ASSERT_OK(obs_store_snapshot_add(st, "x-2", "x@127.0.0.1", 0, s, &dup));
	json_decref(s);
	json_t *fin = json_pack("{s:s, s:s, s:s, s:s}", "session_id", "x-2", "node", "x@127.0.0.1",
	                        "status", "interrupted", "project", "/no/such/project/dir");
	r = finalize_ok(&env, fin);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(r, "status")), "interrupted");
	char *warnings = json_dumps(json_object_get(r, "warnings"), JSON_COMPACT);
	TH_ASSERT_STR_CONTAINS(warnings, "/no/such/project/dir is not a directory");
	free(warnings);
	TH_ASSERT(json_is_integer(json_object_get(r, "profile_id")));
	json_decref(r);
	json_decref(fin);
	obs_store_close(st);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(finalize_from_stored_snapshots),
	    TH_TEST(project_match_counts_defined_modules),
	    TH_TEST(finalize_uses_cached_object_code),
	    TH_TEST(finalize_checks_its_input),
	    TH_END,
	};
	return th_main(argc, argv, "integration_finalize", tests);
}
