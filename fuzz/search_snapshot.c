/*
 * search_snapshot.c - libFuzzer target for the search index's file reader
 * (kg_search_index_parse in src/graph/search.c, docs/SCHEMA.md "The graph
 * snapshot"): any file is read into an index of a fixed graph (64 modules,
 * 512 functions, made here) or refused with an error code, never crashes or
 * over-reads; an index that is read answers search_code queries. The input
 * is a whole file when it starts with the magic "GIUSERCH", else a body
 * behind a header made for it (the right checksum), so that the fuzzer
 * reaches the body's reader.
 * Seed: fuzz/corpus/search_snapshot/ (the shop fixture's index body).
 * needs:
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/runtime.h"
#include "base/str.h"
#include "graph/graph.h"
#include "graph/search.h"

#define STAMP 0x5eedULL

int cli_exit_code_for(int gi_error);
int cli_exit_code_for(int gi_error)
{
	return gi_error ? 1 : 0;
}

static struct kg_graph *graph_make(void)
{
	struct kg_graph *g = kg_graph_new();
	char name[64];
	for (int m = 0; m < 64; m++) {
		snprintf(name, sizeof(name), "Fuzz.M%d", m);
		struct kg_module_info info = {.name = name, .file = "lib/fuzz.ex"};
		kg_graph_module_add(g, &info);
	}
	for (int f = 0; f < 512; f++) {
		snprintf(name, sizeof(name), "f%d", f);
		struct kg_function fn = {.name = name, .arity = f % 3, .is_public = true};
		kg_graph_function_add(g, f % 64, &fn);
	}
	kg_graph_finish(g);
	return g;
}

static void search(const struct kg_graph *g, const struct kg_search_index *ix)
{
	static const char *const queries[] = {"cart", "f1 total", "a b c d", NULL};
	for (const char *const *q = queries; *q; q++) {
		json_t *args = json_pack("{s:s}", "query", *q);
		struct kg_query_params p = {0};
		p.args = args;
		json_t *out = json_object();
		kg_search_code(g, ix, NULL, &p, out);
		json_decref(out);
		json_decref(args);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gi_runtime_init();
	static struct kg_graph *g;
	if (!g)
		g = graph_make();
	struct kg_search_index *ix = NULL;
	if (GI_MEM_STARTS(data, size, "GIUSERCH")) {
		if (kg_search_index_parse(data, size, STAMP, g, &ix) == 0)
			search(g, ix);
		kg_search_index_free(ix);
		return 0;
	}
	unsigned char *file = gi_malloc(size + KG_SNAPSHOT_HEADER_LEN);
	kg_snapshot_header_write(file, "GIUSERCH", KG_SEARCH_SNAPSHOT_FORMAT, STAMP, data, size);
	if (size)
		memcpy(file + KG_SNAPSHOT_HEADER_LEN, data, size);
	if (kg_search_index_parse(file, size + KG_SNAPSHOT_HEADER_LEN, STAMP, g, &ix) == 0)
		search(g, ix);
	kg_search_index_free(ix);
	gi_free(file);
	return 0;
}
