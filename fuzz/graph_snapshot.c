/*
 * graph_snapshot.c - libFuzzer target for the graph snapshot reader
 * (src/graph/snapshot.c, docs/SCHEMA.md "The graph snapshot"): a file of any
 * content is read into a graph or refused with an error code, never crashes,
 * over-reads or allocates beyond what the input's size allows; a graph that
 * is read is safe to walk (every index it holds points inside its tables,
 * every lookup by name answers). The input is a whole file when it starts
 * with the magic "GIUGRAPH", else a body behind a header made for it (the
 * right checksum), so that the fuzzer reaches the body's reader.
 * Seed: fuzz/corpus/graph_snapshot/ (the shop fixture's snapshot body).
 * needs:
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/runtime.h"
#include "base/str.h"
#include "graph/graph.h"

#define STAMP 0x5eedULL

int cli_exit_code_for(int gi_error);
int cli_exit_code_for(int gi_error)
{
	return gi_error ? 1 : 0;
}

/* Touches everything a query could follow. */
static void walk(const struct kg_graph *g)
{
	volatile size_t sink = 0;
	for (size_t i = 0; i < g->modules.len; i++) {
		const struct kg_module *m = kg_module_at(g, (int)i);
		sink += strlen(m->name) + (m->file ? strlen(m->file) : 0);
		for (size_t k = 0; k < m->functions.len; k++)
			sink += strlen(kg_function_at(g, GI_VEC_AT(&m->functions, int, k))->name);
		for (size_t k = 0; k < m->out.len; k++)
			sink += (size_t)kg_edge_at(g, GI_VEC_AT(&m->out, int, k))->to;
		for (size_t k = 0; k < m->callbacks.len; k++)
			sink += strlen(GI_VEC_AT(&m->callbacks, const char *, k));
		if (m->scc >= 0)
			sink += (size_t)GI_VEC_AT(&g->sccs, struct kg_scc, m->scc).count;
		sink += (size_t)(kg_graph_module_find(g, m->name) >= 0);
	}
	for (size_t i = 0; i < g->functions.len; i++) {
		const struct kg_function *f = kg_function_at(g, (int)i);
		for (size_t k = 0; k < f->callers.len; k++)
			sink += (size_t)kg_call_at(g, GI_VEC_AT(&f->callers, int, k))->from_fn;
		sink += (size_t)kg_graph_function_find(g, f->module, f->name, f->arity);
	}
	for (size_t i = 0; i < g->sccs.len; i++) {
		const struct kg_scc *s = gi_vec_get(&g->sccs, i);
		for (int k = 0; k < s->count; k++)
			sink += (size_t)GI_VEC_AT(&g->scc_members, int, s->first + k);
	}
	(void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gi_runtime_init();
	struct kg_graph *g = NULL;
	if (GI_MEM_STARTS(data, size, "GIUGRAPH")) {
		if (kg_graph_snapshot_parse(data, size, STAMP, &g) == 0)
			walk(g);
		kg_graph_free(g);
		return 0;
	}
	unsigned char *file = gi_malloc(size + KG_SNAPSHOT_HEADER_LEN);
	kg_snapshot_header_write(file, "GIUGRAPH", KG_SNAPSHOT_FORMAT, STAMP, data, size);
	if (size)
		memcpy(file + KG_SNAPSHOT_HEADER_LEN, data, size);
	if (kg_graph_snapshot_parse(file, size + KG_SNAPSHOT_HEADER_LEN, STAMP, &g) == 0)
		walk(g);
	kg_graph_free(g);
	gi_free(file);
	return 0;
}
