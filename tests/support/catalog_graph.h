/*
 * catalog_graph.h - the knowledge graph of the catalog target's sources
 * (tests/fixtures/targets/catalog), indexed for the fuse tests that join a
 * runtime profile with it.
 */
#ifndef GIULIA_TESTS_CATALOG_GRAPH_H
#define GIULIA_TESTS_CATALOG_GRAPH_H

#include "graph/query.h"

/* Indexes the catalog target into TMPDIR/index.db (real tree-sitter parse,
 * real SQLite) and opens it read-only; fails the test when it cannot. Caller
 * closes with kg_db_close. */
struct kg_db *ts_catalog_graph(void);

#endif
