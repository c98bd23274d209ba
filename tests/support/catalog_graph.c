/*
 * catalog_graph.c - the catalog target's knowledge graph (see catalog_graph.h).
 */
#include "catalog_graph.h"

#include <stdio.h>

#include "base/error.h"
#include "harness.h"

struct kg_db *ts_catalog_graph(void)
{
	char root[4096], db_path[4096];
	snprintf(root, sizeof(root), "%s/tests/fixtures/targets/catalog", th_srcdir());
	snprintf(db_path, sizeof(db_path), "%s/index.db", th_tmpdir());
	json_t *summary = NULL;
	int rc = kg_index_project(root, db_path, NULL, &summary);
	TH_ASSERT_OK(rc);
	json_decref(summary);
	struct kg_db *db = NULL;
	TH_ASSERT_OK(kg_db_open(db_path, false, &db));
	return db;
}
