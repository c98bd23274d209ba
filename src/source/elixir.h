/*
 * elixir.h - Elixir source reader: one file's text in, its facts out
 * (tree-sitter with the tree-sitter-elixir grammar).
 *
 * Thread-safe: each call uses its own parser and tree, freed before return.
 */
#ifndef GIULIA_SOURCE_ELIXIR_H
#define GIULIA_SOURCE_ELIXIR_H

#include <stddef.h>

#include "source/facts.h"

#define EX_MAX_FILE_SIZE (5u * 1024 * 1024)

/* Parses `len` bytes of Elixir source (`path` is used for messages and stored
 * in the facts) and returns its facts in *out (caller frees with
 * facts_file_free). Syntax errors do not fail the call: they are recorded in
 * (*out)->errors and whatever parsed is extracted. Fails with GI_ETOOBIG past
 * EX_MAX_FILE_SIZE and GI_EINVAL for binary content (NUL bytes). */
int ex_parse(const char *path, const char *source, size_t len, struct facts_file **out);

/* What ex_parse_with can leave out when the caller does not need it. */
enum ex_parse_flags {
	/* No FACTS_SITE_BODY sites: hashing the clause bodies is a second walk
	 * of every clause, a sixth of the extraction, and only `duplicates`
	 * reads them (it asks for them per file when it first runs, see
	 * graph/contracts.c). (*out)->bodies_hashed tells which was done. */
	EX_PARSE_NO_BODY_HASHES = 1u << 0,
};

/* ex_parse with `flags` (enum ex_parse_flags, or-ed); ex_parse is flags 0.
 * Same contract. */
int ex_parse_with(const char *path, const char *source, size_t len, unsigned flags,
                  struct facts_file **out);

#endif
