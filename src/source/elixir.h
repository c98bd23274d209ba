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

#endif
