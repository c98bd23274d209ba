/*
 * beam.h - BEAM object-code reader: one .beam file in, its facts out
 * (the source-less half of the static layer, see docs/BEAM.md).
 *
 * From the FOR1/BEAM container it reads the atom table (AtU8/Atom, also the
 * OTP 28 form), ImpT, ExpT, FunT, LitT (zlib; external term format), Attr,
 * CInf, Line, Docs (EEP 48), Dbgi (for -spec forms) and Code, whose
 * instruction stream it walks with the generic opcode
 * table (beam_ops.h) to find, per function, remote, local, captured and
 * dynamic calls and a branch count. The facts have origin FACTS_FROM_BEAM;
 * one module per file, named in display form ("Foo.Bar", ":lists").
 *
 * Every size and index read from the file is checked: bad input gives
 * GI_ECORRUPT (or GI_ETOOBIG / GI_EUNSUPPORTED) and a message naming the
 * file and the chunk, never an over-read. Optional chunks (LitT, Attr, CInf,
 * Line, FunT, Docs, Dbgi) that are damaged are recorded in the facts' errors and skipped.
 *
 * beam_dirs_scan finds the files to read under ebin directories or release
 * lib/ trees, one per module.
 *
 * Thread-safe: each call works on its own data.
 */
#ifndef GIULIA_SOURCE_BEAM_H
#define GIULIA_SOURCE_BEAM_H

#include <stddef.h>

#include "base/vec.h"
#include "source/facts.h"

/* Caps on what one file may make the reader do; the largest .beam of OTP 25 and
 * Elixir 1.14 (elixir_parser) is 1 MB with 2600 calls. */
#define BEAM_MAX_FILE_SIZE     (16u * 1024 * 1024) /* a .beam (or its gzip'ed form, inflated) */
#define BEAM_MAX_LITERALS_SIZE (16u * 1024 * 1024) /* LitT once inflated */
#define BEAM_MAX_TERM_DEPTH    128                 /* nesting of one literal or attribute */
#define BEAM_MAX_DEBUG_DEPTH   1024       /* nesting of the debug information (whole ASTs) */
#define BEAM_MAX_FUNCTIONS     200000     /* func_info instructions */
#define BEAM_MAX_CALLS         1000000    /* call sites, and calls plus references emitted */
#define BEAM_MAX_LIST          (1u << 20) /* elements of one list operand */

/* Reads the `len` bytes of object code at `data` (a .beam file, plain or
 * gzip-compressed; `path` is used in messages and stored in the facts) and
 * returns its facts in *out (caller frees with facts_file_free). On failure
 * *out is NULL, the return is a negative GI_E* code and `err` (of `err_size`
 * bytes, may be NULL) holds "PATH: CHUNK: what is wrong". */
int beam_read(const char *path, const unsigned char *data, size_t len, struct facts_file **out,
              char *err, size_t err_size);

/* Reads the file at `path` (at most BEAM_MAX_FILE_SIZE bytes) with beam_read
 * and fills the facts' size, mtime_ns and content_hash. Same contract. */
int beam_read_file(const char *path, struct facts_file **out, char *err, size_t err_size);

/* Writes the display name of the module in the object code at `data` (its
 * first atom) into `out` of `size` bytes without decoding anything else:
 * cheap enough to decide whether a module is already known from source.
 * Returns 0, GI_ECORRUPT or GI_ETOOBIG. gzip-compressed files give
 * GI_EUNSUPPORTED (use beam_read). */
int beam_module_name(const unsigned char *data, size_t len, char *out, size_t size);

/* Called by beam_docs_read for each documented entry: `kind` "module" (name
 * NULL, arity 0) for the moduledoc, else the entry's kind ("function",
 * "macro", "type", "callback", ...), name and arity; `doc` is the English
 * text (Markdown, not NUL-terminated, borrowed for the call). Return
 * non-zero to stop. */
typedef int (*beam_doc_fn)(void *ctx, const char *kind, const char *name, int arity,
                           const char *doc, size_t len);
/* Reads the documentation text of the EEP-48 Docs chunk of the object code
 * at `data` (source/beam_docs.c); hidden and missing docs are skipped.
 * Returns 0, GI_ENOTFOUND (no Docs chunk), GI_EUNSUPPORTED (gzip-compressed
 * file), GI_ETOOBIG or GI_ECORRUPT. Thread-safe. */
int beam_docs_read(const unsigned char *data, size_t len, beam_doc_fn fn, void *ctx);

/* A module's object code found by beam_dirs_scan. */
struct beam_entry {
	char *module; /* display name */
	char *path;
};

/* Collects into `out` (initialised here; free with beam_entries_free) one
 * entry per module for the .beam files under each of the NULL-terminated
 * `dirs`: ebin directories or whole trees such as a release's lib/. The
 * module name is the file's name; of two files for one module, the path
 * later in version order wins. Fails with GI_ENOENT (a dir is missing) or
 * GI_ETOOBIG (over 200000 files), with a message in `err`. */
int beam_dirs_scan(const char *const *dirs, struct gi_vec *out, char *err, size_t err_size);
/* Frees the entries and the array; the vector is empty afterwards. */
void beam_entries_free(struct gi_vec *entries);

#endif
