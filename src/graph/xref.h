/*
 * xref.h - compile-time, export and runtime dependencies between a project's
 * files, as `mix xref graph --label` labels them, derived from a finished
 * knowledge graph without compiling anything (docs/EXTRACTION.md, "xref").
 *
 * Reads the graph only; thread-safe over a finished graph.
 */
#ifndef GIULIA_GRAPH_XREF_H
#define GIULIA_GRAPH_XREF_H

#include <jansson.h>

#include "graph/graph.h"

/* The labels of a dependency between two files, strongest last. */
enum kg_xref_label { KG_XREF_RUNTIME = 0, KG_XREF_EXPORT, KG_XREF_COMPILE };

/* Fills `out` (borrowed, a JSON object) with the file dependencies of the
 * core modules of `g`: {"label", "files": [{"file", "deps": [{"file",
 * "label"}]}], "edges"}. `label` filters as mix does: "compile", "export",
 * "runtime", "compile-connected" (compile dependencies on a file that has
 * dependencies of its own), or NULL for all. Returns 0, or GI_EINVAL for
 * an unknown label. */
int kg_xref_json(const struct kg_graph *g, const char *label, json_t *out);

#endif
