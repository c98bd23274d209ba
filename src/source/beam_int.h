/*
 * beam_int.h - what the files of the object-code reader share (beam.h is
 * the contract; docs/BEAM.md the format): the bounded reader every byte of
 * the file goes through, the read state of one .beam (struct beam_ctx:
 * atoms, tables, raw functions and calls, scratch arena), the external
 * term format's walk, and the steps each file owns. beam.c reads the
 * container and its tables and runs the steps; beam_code.c decodes the
 * Code chunk's instructions; beam_etf.c walks terms (literals, attributes,
 * compile information); beam_facts.c turns raw records into facts and
 * reads the docs and specs. One read is one thread's; nothing here is
 * shared between reads.
 */
#ifndef GIULIA_SOURCE_BEAM_INT_H
#define GIULIA_SOURCE_BEAM_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/arena.h"
#include "base/map.h"
#include "base/vec.h"
#include "source/beam.h"
#include "source/facts.h"

/* ------------------------------------------------------------------------ */
/* Bounded reader                                                           */

struct rd {
	const uint8_t *start, *p, *end;
};

static inline void rd_init(struct rd *r, const uint8_t *data, size_t len)
{
	r->start = r->p = data;
	r->end = data + len;
}

static inline size_t rd_left(const struct rd *r)
{
	return (size_t)(r->end - r->p);
}

static inline size_t rd_offset(const struct rd *r)
{
	return (size_t)(r->p - r->start);
}

static inline bool rd_u8(struct rd *r, uint8_t *v)
{
	if (rd_left(r) < 1)
		return false;
	*v = *r->p++;
	return true;
}

static inline bool rd_u16(struct rd *r, uint32_t *v)
{
	if (rd_left(r) < 2)
		return false;
	*v = (uint32_t)r->p[0] << 8 | r->p[1];
	r->p += 2;
	return true;
}

static inline bool rd_u32(struct rd *r, uint32_t *v)
{
	if (rd_left(r) < 4)
		return false;
	*v = (uint32_t)r->p[0] << 24 | (uint32_t)r->p[1] << 16 | (uint32_t)r->p[2] << 8 | r->p[3];
	r->p += 4;
	return true;
}

static inline bool rd_bytes(struct rd *r, size_t n, const uint8_t **out)
{
	if (rd_left(r) < n)
		return false;
	if (out)
		*out = r->p;
	r->p += n;
	return true;
}

/* ------------------------------------------------------------------------ */
/* Read state                                                               */

struct import {
	uint32_t module, function, arity; /* atom, atom, arity */
};

struct lambda {
	uint32_t function, arity, label;
};

enum find_kind {
	FIND_CAPTURE,    /* fun M:F/A */
	FIND_STRUCT,     /* a map with __struct__ => M */
	FIND_NAME_ARITY, /* an element of a literal [{name, arity}] list (behaviour_info) */
};

struct lit_find {
	enum find_kind kind;
	const char *module; /* atom text */
	const char *function;
	int arity;
};

struct lit_range {
	uint32_t first, count; /* into ctx->finds */
};

enum raw_kind { RAW_IMPORT, RAW_LOCAL, RAW_LAMBDA, RAW_LITERAL, RAW_APPLY, RAW_STRUCT };

struct raw_call {
	enum raw_kind kind;
	uint32_t index; /* import, label, lambda, literal, arity or atom */
	uint32_t line;
};

struct raw_func {
	uint32_t name; /* atom */
	uint32_t arity;
	uint32_t info_label;
	uint32_t file; /* line-table file of its first line */
	uint32_t line_first, line_last;
	int branches;
	size_t first_call, call_count; /* into ctx->calls */
	int owner;                     /* function that receives its facts; -1: dropped */
	int facts_index;               /* its facts_function, -1: none */
};

enum operand_tag {
	OP_U = 0,
	OP_I,
	OP_A,
	OP_X,
	OP_Y,
	OP_F,
	OP_H,
	OP_Z,
	OP_LIST,
	OP_FR,
	OP_ALLOC,
	OP_LITERAL,
	OP_FLOAT,
};

struct operand {
	enum operand_tag tag;
	bool big; /* integer wider than 64 bits: val is meaningless */
	uint64_t val;
	uint32_t list_first, list_count; /* OP_LIST: elements in ctx->elems */
};

struct chunk {
	const uint8_t *data;
	uint32_t size;
	bool present;
};

struct beam_ctx {
	const char *path;
	char *err;
	size_t err_size;
	const char *chunk; /* for messages */
	struct gi_arena scratch;
	struct facts_file *facts;
	struct facts_module *module;
	const char *module_atom;
	bool elixir;

	const char **atoms; /* [1..atom_count] */
	uint32_t atom_count;
	struct import *imports;
	uint32_t import_count;
	struct lambda *lambdas;
	uint32_t lambda_count;
	bool *label_exported; /* by label, from ExpT */
	struct lambda *exports;
	uint32_t export_count;

	struct lit_range *lits;
	uint32_t lit_count;
	struct gi_vec finds; /* struct lit_find */
	bool self_struct_seen;

	uint32_t *line_of_item, *file_of_item;
	uint32_t line_item_count;

	uint32_t label_count;
	int32_t *label_func;
	struct gi_vec funcs;    /* struct raw_func */
	struct gi_vec calls;    /* struct raw_call */
	struct gi_vec elems;    /* struct operand, list elements of the current instruction */
	struct gi_map refs;     /* "kind:target" already added to the module */
	size_t emitted;         /* calls and references emitted, against BEAM_MAX_CALLS */
	struct gi_map fn_index; /* "name/arity" -> facts function index + 1 (after facts_build) */
	bool overflow;          /* a BEAM_MAX_* cap was reached */
};

/* ------------------------------------------------------------------------ */
/* External term format                                                     */

enum etf_kind { ETF_OTHER, ETF_ATOM, ETF_INT };

struct etf_value {
	enum etf_kind kind;
	const char *text; /* ETF_ATOM: not NUL-terminated */
	size_t len;
	bool latin1;
	int64_t integer;
};

struct etf_walk {
	struct beam_ctx *c;
	bool collect; /* record captures and structs into c->finds */
	const char *error;
	bool specs;    /* mark functions with an {attribute, _, spec, {{F, A}, _}} (Dbgi) */
	int max_depth; /* 0: BEAM_MAX_TERM_DEPTH */
};

/* ---- the read's errors and atoms (inline: every file fails through
 * them, and none of them depends on beam.c) ---- */

/* Records the first failure's message as "PATH: CHUNK: text" and returns `code`. */
__attribute__((format(printf, 3, 4))) static inline int beam_ctx_fail(struct beam_ctx *c, int code,
                                                                      const char *fmt, ...)
{
	if (c->err && c->err_size > 0 && c->err[0] == '\0') {
		char text[512];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(text, sizeof(text), fmt, ap);
		va_end(ap);
		snprintf(c->err, c->err_size, "%s: %s: %s", c->path, c->chunk ? c->chunk : "file",
		         text);
	}
	return code;
}

/* Records damage in an optional chunk as a facts error (the file still counts). */
__attribute__((format(printf, 2, 3))) static inline void beam_ctx_note(struct beam_ctx *c,
                                                                       const char *fmt, ...)
{
	char text[512], msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	snprintf(msg, sizeof(msg), "%s: %s (chunk skipped)", c->chunk ? c->chunk : "file", text);
	facts_error_add(c->facts, 0, msg);
}

/* The text of atom `index` (1-based, the file's numbering), or NULL when
 * there is no such atom. */
static inline const char *beam_atom_at(const struct beam_ctx *c, uint64_t index)
{
	return index >= 1 && index <= c->atom_count ? c->atoms[index] : NULL;
}

/* ---- the Code chunk (beam_code.c) ---- */

/* Decodes the value part of a compact term whose first byte `b` is read.
 * Values wider than 64 bits set *big. `nest` bounds the length-of-length
 * recursion. */
bool beam_compact_value(struct rd *r, uint8_t b, bool is_signed, uint64_t *val, bool *big,
                        int nest);

/* Reads a compact term that must be an unsigned (tag u) of at most `max`. */
bool beam_compact_u(struct rd *r, uint64_t max, uint64_t *val);

/* Decodes the Code chunk's instructions into c->funcs and c->calls (raw,
 * per function); 0 or a negative code with the message recorded. */
int beam_code_parse(struct beam_ctx *c, const struct chunk *ch);

/* ---- the external term format (beam_etf.c) ---- */

/* Whether `v` is the atom `text`. */
bool beam_etf_is_atom(const struct etf_value *v, const char *text);

/* Reads an atom term (any atom encoding). */
bool beam_etf_atom(struct etf_walk *w, struct rd *r, struct etf_value *out);

/* Walks one term; `out` describes it when it is an atom or a small integer. */
bool beam_etf_term(struct etf_walk *w, struct rd *r, int depth, struct etf_value *out);

/* The callbacks a behaviour declares, from the literals behaviour_info/1 returns.
 * behaviour_info(callbacks) lists them all and behaviour_info(optional_callbacks)
 * the optional ones: a callback found in two of the literal lists is optional
 * (a FACTS_SITE_OPTIONAL_CALLBACK site). */
void beam_callbacks_collect(struct beam_ctx *c, const struct raw_func *f);

/* Walks the literal table (LitT): records captures and struct maps per literal. */
void beam_literals_parse(struct beam_ctx *c, const struct chunk *ch);

/* Reads an `[{behaviour, [M...]}, {'__impl__', [...]}, ...]` attribute list. */
void beam_attributes_parse(struct beam_ctx *c, const struct chunk *ch);

/* Checks that the compile information is one well-formed term. */
void beam_compile_info_check(struct beam_ctx *c, const struct chunk *ch);

/* ---- facts, docs and specs (beam_facts.c) ---- */

/* Adds a reference of `kind` from the module to module `atom` (once per
 * kind and target; none to the module itself). */
void beam_ref_add(struct beam_ctx *c, enum facts_ref_kind kind, const char *atom, uint32_t line);

/* Turns the raw functions and calls into the module's facts; 0 or a
 * negative code with the message recorded. */
int beam_facts_build(struct beam_ctx *c);

/* Indexes the module's facts functions by "name/arity" (after
 * beam_facts_build), for the docs and specs that mark them. */
void beam_fn_index_build(struct beam_ctx *c);

/* Marks function `name`/`arity` (an Elixir macro by its MACRO- name) as
 * having a spec. */
void beam_spec_mark(struct beam_ctx *c, const struct etf_value *name, int64_t arity);

/* Reads {docs_v1, Anno, Lang, Format, ModuleDoc, Meta, [{{Kind, Name, Arity}, Anno, Sig, Doc,
 * Meta}]} into has_moduledoc, moduledoc_false, has_doc and doc_false. */
void beam_docs_parse(struct beam_ctx *c, const struct chunk *ch);

/* Walks the debug information (abstract code, or Elixir's) for -spec attributes. */
void beam_specs_parse(struct beam_ctx *c, const struct chunk *ch);

#endif
