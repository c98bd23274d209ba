/*
 * search.h - the search queries of the static engine, called by kg_query()
 * (query.c) for "search_text" and "search_code" (docs/SEARCH.md).
 *
 * search_text scans the indexed source files for a literal or a POSIX
 * extended regular expression and labels each hit with the module and
 * function around it. search_code ranks the project's modules and functions
 * with BM25F over their names (split on `.`, `_`, case changes and digits),
 * @moduledoc/@doc text, @spec text, struct fields and the names they call.
 *
 * Both read their named arguments from kg_query_params.args (a JSON object;
 * values may be JSON numbers/booleans or their string forms, as query
 * strings carry them). Bad arguments give GI_EINVAL with a message through
 * kg_query_fail(). Not thread-safe per index; an index may be read by
 * several threads once built.
 */
#ifndef GIULIA_GRAPH_SEARCH_H
#define GIULIA_GRAPH_SEARCH_H

#include <jansson.h>
#include <stddef.h>

#include "graph/graph.h"
#include "graph/query.h"

#define KG_SEARCH_PATTERN_MAX 1024       /* bytes of a text pattern or a code query */
#define KG_SEARCH_LIMIT_MAX   1000       /* hits per page */
#define KG_SEARCH_CONTEXT_MAX 20         /* context lines either side of a text hit */
#define KG_SEARCH_FILE_MAX    (8u << 20) /* bytes: larger files are not searched */
#define KG_SEARCH_LINE_MAX    4096       /* bytes of a line a regex is run on */
#define KG_SEARCH_COUNT_MAX   100000     /* text hits counted before giving up counting */

struct kg_search_index;
struct kg_word_vectors;

/* Builds the ranked-search index of the finished graph `g` (borrowed; the
 * index keeps pointers into it and must be freed before it). Documentation
 * and specs are read from the source files under `root` (NULL: names,
 * fields and calls only). Returns the index; free with
 * kg_search_index_free. */
struct kg_search_index *kg_search_index_build(const struct kg_graph *g, const char *root);
/* The index as a file beside the database (DB.search, docs/SCHEMA.md "The
 * graph snapshot"), tied like the graph's snapshot to the contents of the
 * database by `stamp`, and to the graph it indexes: written atomically;
 * read (mapped, copied) into a new index of `g` (borrowed, the graph of the
 * same stamp), GI_ENOENT without a file, GI_EDBVERSION when stale,
 * GI_ECORRUPT when damaged or pointing outside `g` or its own tables. */
#define KG_SEARCH_SNAPSHOT_FORMAT 2 /* bump when the file or the ranking's inputs change */
int kg_search_index_write(const struct kg_search_index *ix, uint64_t stamp, const char *path);
int kg_search_index_read(const char *path, uint64_t stamp, const struct kg_graph *g,
                         struct kg_search_index **out);
int kg_search_index_parse(const void *data, size_t len, uint64_t stamp, const struct kg_graph *g,
                          struct kg_search_index **out);
/* Frees the index; NULL does nothing. */
void kg_search_index_free(struct kg_search_index *ix);
/* Bytes held by the index (for the benchmarks' memory figures). */
size_t kg_search_index_bytes(const struct kg_search_index *ix);

/* search_code: args query (required), limit, offset, kind ("module" |
 * "function"), tests (include test modules), mode ("ranked" | "hybrid":
 * query terms expanded with their nearest words in `vec`, which hybrid
 * needs and ranked ignores); p->module restricts the results to that
 * module and its nested modules. Fills `out`. */
int kg_search_code(const struct kg_graph *g, const struct kg_search_index *ix,
                   const struct kg_word_vectors *vec, const struct kg_query_params *p, json_t *out);
/* The mode search_code's arguments ask for: 0 ranked, 1 hybrid, or
 * GI_EINVAL. */
int kg_search_code_mode(const struct kg_query_params *p);

/* search_text: args pattern (required), regex, ignore_case, file (a glob if
 * it has * ? or [, else a substring of the path), context, limit, offset;
 * p->module keeps hits inside that module (or nested ones). `files` are the
 * indexed files relative to `root` (borrowed), searched in the given order.
 * Fills `out`. */
int kg_search_text(const struct kg_graph *g, const char *root, const char *const *files,
                   size_t nfiles, const struct kg_query_params *p, json_t *out);

/* Replays the term sequences the index kept (per document: its name, doc
 * and struct field terms in order), calling `term` for each term and
 * `end_document` after each document: the project's share of the corpus
 * the word vectors learn from. */
void kg_search_index_sequences(const struct kg_search_index *ix,
                               void (*term)(void *ctx, const char *term),
                               void (*end_document)(void *ctx), void *ctx);

/* Word vectors (graph/search_vec.c) for the hybrid search. */
struct kg_word_vectors;
/* The word vectors for index `ix`: read from `cache_path` (may be NULL)
 * when that file is newer than `db_path`, else learned from the index's
 * sequences plus the Docs chunks of the .beam files matched by the
 * NULL-terminated `beam_globs`, and written to `cache_path`. Returns 0 with
 * *out (free with kg_word_vectors_free). */
int kg_word_vectors_get(const struct kg_search_index *ix, const char *cache_path,
                        const char *db_path, const char *const *beam_globs,
                        struct kg_word_vectors **out);
void kg_word_vectors_free(struct kg_word_vectors *v);
/* How many words have a vector. */
size_t kg_word_vectors_count(const struct kg_word_vectors *v);
/* The at most `max` words nearest to `term` with a cosine of at least
 * `min_cos`, nearest first, into terms (borrowed from `v`) and cos;
 * returns how many. */
int kg_word_vectors_neighbours(const struct kg_word_vectors *v, const char *term, int max,
                               double min_cos, const char **terms, double *cos);

/* Splits `text` into lower-case search terms (identifier parts and words,
 * stop words dropped, a light suffix stemming applied), calling `fn` for
 * each; exposed for the tests. */
void kg_search_terms(const char *text, size_t len, void (*fn)(void *ctx, const char *term),
                     void *ctx);

/* preflight (graph/preflight.c): what to know before editing module
 * `module` (function -1) or its function `function`, following dependents
 * or callers up to `depth` hops. Fills `out` (docs/SEARCH.md "Preflight"). */
int kg_preflight(const struct kg_graph *g, int module, int function, int depth, json_t *out);

#endif
