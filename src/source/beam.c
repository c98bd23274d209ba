/*
 * beam.c - BEAM object code to facts (see beam.h and docs/BEAM.md).
 *
 * One read goes: container -> chunk table -> atoms (required) -> ImpT, ExpT
 * (required) -> FunT, LitT, Attr, CInf, Line (optional: damage is recorded
 * in the facts' errors and the chunk skipped) -> Code (required), whose
 * instructions are decoded into per-function raw records -> facts -> Docs
 * and Dbgi (optional) mark documented and specced functions.
 *
 * Invariants: every read goes through struct rd, whose helpers check the
 * bytes left before touching them; every count or index from the file is
 * checked against what it indexes before use; term decoding recurses at most
 * BEAM_MAX_TERM_DEPTH levels (BEAM_MAX_DEBUG_DEPTH in Dbgi); inflated sizes are capped. Scratch
 * data lives in one arena per read, freed before return; the facts own their strings.
 */
#include "source/beam.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "base/alloc.h"
#include "base/arena.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/hash.h"
#include "base/map.h"
#include "base/str.h"
#include "base/vec.h"
#include "source/beam_ops.h"

/* ------------------------------------------------------------------------ */
/* Bounded reader                                                           */

struct rd {
	const uint8_t *start, *p, *end;
};

static void rd_init(struct rd *r, const uint8_t *data, size_t len)
{
	r->start = r->p = data;
	r->end = data + len;
}

static size_t rd_left(const struct rd *r)
{
	return (size_t)(r->end - r->p);
}

static size_t rd_offset(const struct rd *r)
{
	return (size_t)(r->p - r->start);
}

static bool rd_u8(struct rd *r, uint8_t *v)
{
	if (rd_left(r) < 1)
		return false;
	*v = *r->p++;
	return true;
}

static bool rd_u16(struct rd *r, uint32_t *v)
{
	if (rd_left(r) < 2)
		return false;
	*v = (uint32_t)r->p[0] << 8 | r->p[1];
	r->p += 2;
	return true;
}

static bool rd_u32(struct rd *r, uint32_t *v)
{
	if (rd_left(r) < 4)
		return false;
	*v = (uint32_t)r->p[0] << 24 | (uint32_t)r->p[1] << 16 | (uint32_t)r->p[2] << 8 | r->p[3];
	r->p += 4;
	return true;
}

static bool rd_bytes(struct rd *r, size_t n, const uint8_t **out)
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

static int ctx_fail(struct beam_ctx *c, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Records the first failure's message as "PATH: CHUNK: text" and returns `code`. */
static int ctx_fail(struct beam_ctx *c, int code, const char *fmt, ...)
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
static void ctx_note(struct beam_ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void ctx_note(struct beam_ctx *c, const char *fmt, ...)
{
	char text[512], msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	snprintf(msg, sizeof(msg), "%s: %s (chunk skipped)", c->chunk ? c->chunk : "file", text);
	facts_error_add(c->facts, 0, msg);
}

static const char *atom_at(const struct beam_ctx *c, uint64_t index)
{
	return index >= 1 && index <= c->atom_count ? c->atoms[index] : NULL;
}

/* ------------------------------------------------------------------------ */
/* Container                                                                */

struct chunks {
	struct chunk atoms, code, imports, exports, lambdas, literals, attributes, compile_info,
	    lines, docs, debug_info;
	bool atoms_utf8;
};

static int container_parse(struct beam_ctx *c, const uint8_t *data, size_t len, struct chunks *ch)
{
	struct rd r;
	uint32_t form_size;
	const uint8_t *magic;
	rd_init(&r, data, len);
	c->chunk = "header";
	if (len < 12 || !GI_MEM_IS(data, 4, "FOR1"))
		return ctx_fail(c, GI_ECORRUPT, "not a BEAM file (no FOR1 header)");
	r.p += 4;
	rd_u32(&r, &form_size);
	rd_bytes(&r, 4, &magic);
	if (!GI_MEM_IS(magic, 4, "BEAM"))
		return ctx_fail(c, GI_ECORRUPT, "not a BEAM file (form type is not BEAM)");
	if (form_size < 4 || (size_t)form_size > len - 8)
		return ctx_fail(c, GI_ECORRUPT,
		                "truncated: the header announces %u bytes, the file has %zu",
		                form_size, len - 8);
	r.end = data + 8 + form_size;
	memset(ch, 0, sizeof(*ch));
	while (rd_left(&r) > 0) {
		const uint8_t *id, *body;
		uint32_t size;
		char name[5];
		if (!rd_bytes(&r, 4, &id) || !rd_u32(&r, &size)) {
			c->chunk = "chunk table";
			return ctx_fail(c, GI_ECORRUPT, "truncated chunk header at offset %zu",
			                rd_offset(&r));
		}
		memcpy(name, id, 4);
		name[4] = '\0';
		for (int i = 0; i < 4; i++)
			if (name[i] < 0x20 || name[i] > 0x7e)
				name[i] = '?';
		if (!rd_bytes(&r, size, &body)) {
			c->chunk = "chunk table";
			return ctx_fail(c, GI_ECORRUPT,
			                "chunk %s announces %u bytes, only %zu are left", name,
			                size, rd_left(&r));
		}
		size_t pad = (4 - (size & 3)) & 3;
		r.p += pad < rd_left(&r) ? pad : rd_left(&r);
		struct chunk *slot = NULL;
		if (GI_MEM_IS(id, 4, "AtU8")) {
			slot = &ch->atoms;
			ch->atoms_utf8 = true;
		} else if (GI_MEM_IS(id, 4, "Atom")) {
			if (!ch->atoms_utf8)
				slot = &ch->atoms;
		} else if (GI_MEM_IS(id, 4, "Code")) {
			slot = &ch->code;
		} else if (GI_MEM_IS(id, 4, "ImpT")) {
			slot = &ch->imports;
		} else if (GI_MEM_IS(id, 4, "ExpT")) {
			slot = &ch->exports;
		} else if (GI_MEM_IS(id, 4, "FunT")) {
			slot = &ch->lambdas;
		} else if (GI_MEM_IS(id, 4, "LitT")) {
			slot = &ch->literals;
		} else if (GI_MEM_IS(id, 4, "Attr")) {
			slot = &ch->attributes;
		} else if (GI_MEM_IS(id, 4, "CInf")) {
			slot = &ch->compile_info;
		} else if (GI_MEM_IS(id, 4, "Line")) {
			slot = &ch->lines;
		} else if (GI_MEM_IS(id, 4, "Docs")) {
			slot = &ch->docs;
		} else if (GI_MEM_IS(id, 4, "Dbgi")) {
			slot = &ch->debug_info;
		}
		if (slot) {
			slot->data = body;
			slot->size = size;
			slot->present = true;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Compact terms (the encoding of Code operands, Line items, OTP 28 atoms)  */

/* Decodes the value part of a compact term whose first byte `b` is read.
 * Values wider than 64 bits set *big. `nest` bounds the length-of-length
 * recursion. */
static bool compact_value(struct rd *r, uint8_t b, bool is_signed, uint64_t *val, bool *big,
                          int nest)
{
	*big = false;
	if ((b & 0x08) == 0) {
		*val = b >> 4;
		return true;
	}
	if ((b & 0x10) == 0) {
		uint8_t next;
		if (!rd_u8(r, &next))
			return false;
		*val = (uint64_t)(b >> 5) << 8 | next;
		return true;
	}
	uint64_t count = (uint64_t)(b >> 5) + 2;
	if ((b >> 5) == 7) {
		uint8_t lb;
		uint64_t extra;
		bool lbig;
		if (nest > 2 || !rd_u8(r, &lb) || (lb & 7) != 0)
			return false;
		if (!compact_value(r, lb, false, &extra, &lbig, nest + 1) || lbig ||
		    extra > rd_left(r))
			return false;
		count = extra + 9;
	}
	const uint8_t *bytes;
	if (count > rd_left(r) || !rd_bytes(r, (size_t)count, &bytes))
		return false;
	if (count > 8) {
		*big = true;
		*val = 0;
		return true;
	}
	uint64_t v = 0;
	for (uint64_t i = 0; i < count; i++)
		v = v << 8 | bytes[i];
	if (is_signed && count < 8 && (bytes[0] & 0x80))
		v |= ~(uint64_t)0 << (count * 8);
	*val = v;
	return true;
}

/* Reads a compact term that must be an unsigned (tag u) of at most `max`. */
static bool compact_u(struct rd *r, uint64_t max, uint64_t *val)
{
	uint8_t b;
	bool big;
	if (!rd_u8(r, &b) || (b & 7) != OP_U)
		return false;
	return compact_value(r, b, false, val, &big, 0) && !big && *val <= max;
}

/* ------------------------------------------------------------------------ */
/* Atoms, imports, exports, lambdas                                         */

static int atoms_parse(struct beam_ctx *c, const struct chunk *ch, bool utf8)
{
	struct rd r;
	uint32_t raw;
	c->chunk = utf8 || !ch->present ? "AtU8" : "Atom";
	if (!ch->present)
		return ctx_fail(c, GI_ECORRUPT, "no atom table (AtU8 or Atom chunk)");
	rd_init(&r, ch->data, ch->size);
	if (!rd_u32(&r, &raw))
		return ctx_fail(c, GI_ECORRUPT, "truncated count");
	int32_t count = (int32_t)raw;
	bool long_lengths = count < 0; /* OTP 28: lengths are compact terms */
	uint64_t n = long_lengths ? (uint64_t)(-(int64_t)count) : (uint64_t)count;
	if (n < 1 || n > rd_left(&r))
		return ctx_fail(c, GI_ECORRUPT, "atom count %lld does not fit the chunk",
		                (long long)count);
	c->atom_count = (uint32_t)n;
	c->atoms = gi_arena_calloc(&c->scratch, n + 1, sizeof(*c->atoms));
	for (uint32_t i = 1; i <= n; i++) {
		uint64_t alen;
		const uint8_t *text;
		if (long_lengths) {
			if (!compact_u(&r, 4096, &alen))
				return ctx_fail(c, GI_ECORRUPT,
				                "bad length of atom %u at offset %zu", i,
				                rd_offset(&r));
		} else {
			uint8_t l8;
			if (!rd_u8(&r, &l8))
				return ctx_fail(c, GI_ECORRUPT, "truncated at atom %u", i);
			alen = l8;
		}
		if (!rd_bytes(&r, (size_t)alen, &text))
			return ctx_fail(c, GI_ECORRUPT, "atom %u runs past the chunk", i);
		if (memchr(text, '\0', (size_t)alen))
			return ctx_fail(c, GI_ECORRUPT, "atom %u contains a NUL byte", i);
		c->atoms[i] = gi_arena_strndup(&c->scratch, (const char *)text, (size_t)alen);
	}
	return 0;
}

/* Reads a table of `width` u32 columns; returns its row count or a negative code. */
static int table_parse(struct beam_ctx *c, const struct chunk *ch, int width, uint32_t **rows,
                       uint32_t *row_count)
{
	struct rd r;
	uint32_t count;
	*rows = NULL;
	*row_count = 0;
	if (!ch->present)
		return 0;
	rd_init(&r, ch->data, ch->size);
	if (!rd_u32(&r, &count))
		return ctx_fail(c, GI_ECORRUPT, "truncated count");
	if ((uint64_t)count * 4 * (uint64_t)width > rd_left(&r))
		return ctx_fail(c, GI_ECORRUPT, "%u entries do not fit in %zu bytes", count,
		                rd_left(&r));
	uint32_t *t = gi_arena_calloc(&c->scratch, (size_t)count * (size_t)width + 1, 4);
	for (size_t i = 0; i < (size_t)count * (size_t)width; i++)
		rd_u32(&r, &t[i]);
	*rows = t;
	*row_count = count;
	return 0;
}

/* True when the chunk's leading count of `width`-column rows fits in it. */
static bool table_fits(const struct chunk *ch, int width)
{
	struct rd r;
	uint32_t count;
	rd_init(&r, ch->data, ch->size);
	return rd_u32(&r, &count) && (uint64_t)count * 4 * (uint64_t)width <= rd_left(&r);
}

static int tables_parse(struct beam_ctx *c, const struct chunks *ch)
{
	uint32_t *rows, n;
	int rc;
	c->chunk = "ImpT";
	if ((rc = table_parse(c, &ch->imports, 3, &rows, &n)) < 0)
		return rc;
	c->imports = (struct import *)rows;
	c->import_count = n;
	for (uint32_t i = 0; i < n; i++) {
		if (!atom_at(c, c->imports[i].module) || !atom_at(c, c->imports[i].function) ||
		    c->imports[i].arity > 255)
			return ctx_fail(c, GI_ECORRUPT,
			                "import %u names atoms or an arity out of range", i);
	}
	c->chunk = "ExpT";
	if (!ch->exports.present)
		return ctx_fail(c, GI_ECORRUPT, "no export table (ExpT chunk)");
	if ((rc = table_parse(c, &ch->exports, 3, &rows, &n)) < 0)
		return rc;
	c->exports = (struct lambda *)rows;
	c->export_count = n;
	for (uint32_t i = 0; i < n; i++) {
		if (!atom_at(c, c->exports[i].function) || c->exports[i].arity > 255)
			return ctx_fail(c, GI_ECORRUPT, "export %u is out of range", i);
	}
	c->chunk = "FunT";
	if (ch->lambdas.present && !table_fits(&ch->lambdas, 6)) {
		ctx_note(c, "lambda count does not fit the chunk");
		return 0;
	}
	if ((rc = table_parse(c, &ch->lambdas, 6, &rows, &n)) < 0)
		return rc;
	c->lambdas = gi_arena_calloc(&c->scratch, (size_t)n + 1, sizeof(*c->lambdas));
	c->lambda_count = n;
	for (uint32_t i = 0; i < n; i++) {
		c->lambdas[i].function = rows[i * 6];
		c->lambdas[i].arity = rows[i * 6 + 1];
		c->lambdas[i].label = rows[i * 6 + 2];
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* External term format (LitT literals, Attr, CInf)                         */

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

/* Copies an atom's text NUL-terminated into the scratch arena, converting Latin-1. */
static const char *etf_atom_dup(struct beam_ctx *c, const struct etf_value *v)
{
	if (!v->latin1)
		return gi_arena_strndup(&c->scratch, v->text, v->len);
	char *out = gi_arena_alloc(&c->scratch, v->len * 2 + 1);
	size_t o = 0;
	for (size_t i = 0; i < v->len; i++) {
		uint8_t ch = (uint8_t)v->text[i];
		if (ch < 0x80) {
			out[o++] = (char)ch;
		} else {
			out[o++] = (char)(0xc0 | ch >> 6);
			out[o++] = (char)(0x80 | (ch & 0x3f));
		}
	}
	out[o] = '\0';
	return out;
}

static bool etf_is_atom(const struct etf_value *v, const char *text)
{
	size_t n = strlen(text);
	return v->kind == ETF_ATOM && v->len == n && memcmp(v->text, text, n) == 0;
}

static bool etf_term(struct etf_walk *w, struct rd *r, int depth, struct etf_value *out);

static bool etf_fail(struct etf_walk *w, const char *why)
{
	if (!w->error)
		w->error = why;
	return false;
}

static bool etf_atom_body(struct rd *r, uint8_t tag, struct etf_value *out)
{
	uint32_t n;
	const uint8_t *text;
	if (tag == ETF_TAG_SMALL_ATOM_EXT || tag == ETF_TAG_SMALL_ATOM_UTF8_EXT) {
		uint8_t n8;
		if (!rd_u8(r, &n8))
			return false;
		n = n8;
	} else if (!rd_u16(r, &n)) {
		return false;
	}
	if (!rd_bytes(r, n, &text))
		return false;
	out->kind = ETF_ATOM; /* a NUL inside only shortens the copy of etf_atom_dup */
	out->text = (const char *)text;
	out->len = n;
	out->latin1 = tag == ETF_TAG_ATOM_EXT || tag == ETF_TAG_SMALL_ATOM_EXT;
	return true;
}

/* Reads an atom term (any atom encoding). */
static bool etf_atom(struct etf_walk *w, struct rd *r, struct etf_value *out)
{
	uint8_t tag;
	if (!rd_u8(r, &tag))
		return etf_fail(w, "truncated term");
	if (tag != ETF_TAG_ATOM_EXT && tag != ETF_TAG_SMALL_ATOM_EXT &&
	    tag != ETF_TAG_ATOM_UTF8_EXT && tag != ETF_TAG_SMALL_ATOM_UTF8_EXT)
		return etf_fail(w, "atom expected");
	if (!etf_atom_body(r, tag, out))
		return etf_fail(w, "truncated atom");
	return true;
}

static void finds_add(struct beam_ctx *c, enum find_kind kind, const char *module,
                      const char *function, int arity)
{
	struct lit_find *f = gi_vec_push_zero(&c->finds);
	f->kind = kind;
	f->module = module;
	f->function = function;
	f->arity = arity;
}

static bool etf_map(struct etf_walk *w, struct rd *r, int depth, uint32_t pairs)
{
	struct beam_ctx *c = w->c;
	const char *struct_name = NULL;
	struct gi_vec keys; /* const char *, atom keys (for the module's own struct) */
	gi_vec_init(&keys, sizeof(const char *));
	bool ok = true;
	for (uint32_t i = 0; i < pairs && ok; i++) {
		struct etf_value k, v;
		ok = etf_term(w, r, depth + 1, &k) && etf_term(w, r, depth + 1, &v);
		if (!ok || !w->collect)
			continue;
		if (etf_is_atom(&k, "__struct__") && v.kind == ETF_ATOM)
			struct_name = etf_atom_dup(c, &v);
		else if (k.kind == ETF_ATOM)
			gi_vec_push(&keys, &(const char *){etf_atom_dup(c, &k)});
	}
	if (ok && struct_name) {
		finds_add(c, FIND_STRUCT, struct_name, NULL, -1);
		if (!c->self_struct_seen && strcmp(struct_name, c->module_atom) == 0) {
			c->self_struct_seen = true;
			for (size_t i = 0; i < keys.len; i++) {
				const char *key = GI_VEC_AT(&keys, const char *, i);
				const char *copy = gi_arena_strdup(&c->facts->arena, key);
				gi_vec_push(&c->module->struct_fields, &copy);
			}
		}
	}
	gi_vec_destroy(&keys);
	return ok;
}

static void spec_mark(struct beam_ctx *c, const struct etf_value *name, int64_t arity);

/* The rest of a 4-tuple while looking for specs: {attribute, Anno, spec,
 * {{Name, Arity} | {Module, Name, Arity}, Types}} marks Name/Arity. */
static bool etf_attribute(struct etf_walk *w, struct rd *r, int depth)
{
	struct etf_value first, anno, third, last;
	if (!etf_term(w, r, depth + 1, &first) || !etf_term(w, r, depth + 1, &anno) ||
	    !etf_term(w, r, depth + 1, &third))
		return false;
	if (etf_is_atom(&first, "attribute") && etf_is_atom(&third, "spec")) {
		struct rd probe = *r;
		uint8_t tag, arity, key_arity;
		struct etf_value a, b, n;
		if (rd_u8(&probe, &tag) && tag == ETF_TAG_SMALL_TUPLE_EXT &&
		    rd_u8(&probe, &arity) && arity == 2 && rd_u8(&probe, &tag) &&
		    tag == ETF_TAG_SMALL_TUPLE_EXT && rd_u8(&probe, &key_arity) &&
		    (key_arity == 2 || key_arity == 3) && etf_term(w, &probe, depth + 3, &a) &&
		    etf_term(w, &probe, depth + 3, &b) &&
		    (key_arity == 2 || etf_term(w, &probe, depth + 3, &n))) {
			if (key_arity == 2 && a.kind == ETF_ATOM && b.kind == ETF_INT)
				spec_mark(w->c, &a, b.integer);
			else if (key_arity == 3 && b.kind == ETF_ATOM && n.kind == ETF_INT)
				spec_mark(w->c, &b, n.integer);
		}
		w->error = NULL;
	}
	return etf_term(w, r, depth + 1, &last);
}

/* Walks one term; `out` describes it when it is an atom or a small integer. */
static bool etf_term(struct etf_walk *w, struct rd *r, int depth, struct etf_value *out)
{
	uint8_t tag;
	uint32_t n;
	out->kind = ETF_OTHER; /* the other fields are meaningful only for their kind */
	if (depth > (w->max_depth ? w->max_depth : BEAM_MAX_TERM_DEPTH))
		return etf_fail(w, "term nested too deeply");
	if (!rd_u8(r, &tag))
		return etf_fail(w, "truncated term");
	switch (tag) {
	case ETF_TAG_SMALL_INTEGER_EXT: {
		uint8_t v;
		if (!rd_u8(r, &v))
			return etf_fail(w, "truncated integer");
		out->kind = ETF_INT;
		out->integer = v;
		return true;
	}
	case ETF_TAG_INTEGER_EXT:
		if (!rd_u32(r, &n))
			return etf_fail(w, "truncated integer");
		out->kind = ETF_INT;
		out->integer = (int32_t)n;
		return true;
	case ETF_TAG_NEW_FLOAT_EXT:
		return rd_bytes(r, 8, NULL) || etf_fail(w, "truncated float");
	case ETF_TAG_FLOAT_EXT:
		return rd_bytes(r, 31, NULL) || etf_fail(w, "truncated float");
	case ETF_TAG_ATOM_EXT:
	case ETF_TAG_SMALL_ATOM_EXT:
	case ETF_TAG_ATOM_UTF8_EXT:
	case ETF_TAG_SMALL_ATOM_UTF8_EXT:
		return etf_atom_body(r, tag, out) || etf_fail(w, "truncated atom");
	case ETF_TAG_SMALL_TUPLE_EXT:
	case ETF_TAG_LARGE_TUPLE_EXT:
		if (tag == ETF_TAG_SMALL_TUPLE_EXT) {
			uint8_t a;
			if (!rd_u8(r, &a))
				return etf_fail(w, "truncated tuple");
			n = a;
		} else if (!rd_u32(r, &n)) {
			return etf_fail(w, "truncated tuple");
		}
		if (n > rd_left(r))
			return etf_fail(w, "tuple arity past the end");
		if (w->specs && n == 4)
			return etf_attribute(w, r, depth);
		for (uint32_t i = 0; i < n; i++) {
			struct etf_value e;
			if (!etf_term(w, r, depth + 1, &e))
				return false;
		}
		return true;
	case ETF_TAG_NIL_EXT:
		return true;
	case ETF_TAG_STRING_EXT:
		return (rd_u16(r, &n) && rd_bytes(r, n, NULL)) || etf_fail(w, "truncated string");
	case ETF_TAG_LIST_EXT:
		if (!rd_u32(r, &n) || n > rd_left(r))
			return etf_fail(w, "list length past the end");
		for (uint32_t i = 0; i <= n; i++) { /* elements, then the tail */
			struct etf_value e;
			if (!etf_term(w, r, depth + 1, &e))
				return false;
		}
		return true;
	case ETF_TAG_BINARY_EXT:
		return (rd_u32(r, &n) && rd_bytes(r, n, NULL)) || etf_fail(w, "truncated binary");
	case ETF_TAG_BIT_BINARY_EXT:
		return (rd_u32(r, &n) && rd_bytes(r, (size_t)n + 1, NULL)) ||
		       etf_fail(w, "truncated bitstring");
	case ETF_TAG_SMALL_BIG_EXT: {
		uint8_t d;
		return (rd_u8(r, &d) && rd_bytes(r, (size_t)d + 1, NULL)) ||
		       etf_fail(w, "truncated integer");
	}
	case ETF_TAG_LARGE_BIG_EXT:
		return (rd_u32(r, &n) && rd_bytes(r, (size_t)n + 1, NULL)) ||
		       etf_fail(w, "truncated integer");
	case ETF_TAG_MAP_EXT:
		if (!rd_u32(r, &n) || n > rd_left(r) / 2)
			return etf_fail(w, "map size past the end");
		return etf_map(w, r, depth, n);
	case ETF_TAG_EXPORT_EXT: { /* Fun M:F/A */
		struct etf_value m, f, a;
		if (!etf_atom(w, r, &m) || !etf_atom(w, r, &f) || !etf_term(w, r, depth + 1, &a))
			return false;
		if (a.kind != ETF_INT || a.integer < 0 || a.integer > 255)
			return etf_fail(w, "bad arity in external fun");
		if (w->collect)
			finds_add(w->c, FIND_CAPTURE, etf_atom_dup(w->c, &m),
			          etf_atom_dup(w->c, &f), (int)a.integer);
		return true;
	}
	case ETF_TAG_NEW_FUN_EXT: /* Skip by its size (which counts the size field) */
		if (!rd_u32(r, &n) || n < 4 || !rd_bytes(r, (size_t)n - 4, NULL))
			return etf_fail(w, "truncated fun");
		return true;
	case ETF_TAG_PID_EXT:
	case ETF_TAG_NEW_PID_EXT:
	case ETF_TAG_PORT_EXT:
	case ETF_TAG_NEW_PORT_EXT:
	case ETF_TAG_V4_PORT_EXT:
	case ETF_TAG_REFERENCE_EXT: {
		struct etf_value node;
		size_t rest = tag == ETF_TAG_PID_EXT        ? 9
		              : tag == ETF_TAG_NEW_PID_EXT  ? 12
		              : tag == ETF_TAG_PORT_EXT     ? 5
		              : tag == ETF_TAG_NEW_PORT_EXT ? 8
		              : tag == ETF_TAG_V4_PORT_EXT  ? 12
		                                            : 5;
		if (!etf_term(w, r, depth + 1, &node) || node.kind != ETF_ATOM)
			return etf_fail(w, "bad node in pid, port or reference");
		return rd_bytes(r, rest, NULL) || etf_fail(w, "truncated pid, port or reference");
	}
	case ETF_TAG_NEW_REFERENCE_EXT:
	case ETF_TAG_NEWER_REFERENCE_EXT: {
		struct etf_value node;
		if (!rd_u16(r, &n) || n > 5)
			return etf_fail(w, "bad reference length");
		if (!etf_term(w, r, depth + 1, &node) || node.kind != ETF_ATOM)
			return etf_fail(w, "bad node in reference");
		return rd_bytes(r, (tag == ETF_TAG_NEW_REFERENCE_EXT ? 1 : 4) + 4 * (size_t)n,
		                NULL) ||
		       etf_fail(w, "truncated reference");
	}
	default:
		return etf_fail(w, "unsupported term tag");
	}
}

/* Records the elements of a literal [{Name, Arity}, ...] (what behaviour_info/1
 * returns) as FIND_NAME_ARITY; anything else records nothing. */
static void name_arity_list(struct beam_ctx *c, const uint8_t *term, size_t len)
{
	struct rd r;
	uint8_t tag, arity, small;
	uint32_t n;
	struct etf_walk w = {.c = c};
	size_t before = c->finds.len;
	rd_init(&r, term, len);
	if (!rd_u8(&r, &tag) || tag != ETF_TAG_LIST_EXT || !rd_u32(&r, &n) || n > rd_left(&r))
		return;
	for (uint32_t i = 0; i < n; i++) {
		struct etf_value name;
		if (!rd_u8(&r, &tag) || tag != ETF_TAG_SMALL_TUPLE_EXT || !rd_u8(&r, &arity) ||
		    arity != 2 || !etf_atom(&w, &r, &name) || !rd_u8(&r, &tag) ||
		    tag != ETF_TAG_SMALL_INTEGER_EXT || !rd_u8(&r, &small)) {
			c->finds.len = before;
			return;
		}
		finds_add(c, FIND_NAME_ARITY, NULL, etf_atom_dup(c, &name), small);
	}
	if (!rd_u8(&r, &tag) || tag != ETF_TAG_NIL_EXT)
		c->finds.len = before;
}

/* The callbacks a behaviour declares, from the literals behaviour_info/1 returns.
 * behaviour_info(callbacks) lists them all and behaviour_info(optional_callbacks)
 * the optional ones: a callback found in two of the literal lists is optional
 * (a FACTS_SITE_OPTIONAL_CALLBACK site). */
static void callbacks_collect(struct beam_ctx *c, const struct raw_func *f)
{
	struct gi_map seen; /* "name/arity" -> lists it is in (as a pointer-sized count) */
	gi_map_init(&seen);
	for (size_t k = 0; k < f->call_count; k++) {
		const struct raw_call *rc = gi_vec_get(&c->calls, f->first_call + k);
		if (rc->kind != RAW_LITERAL)
			continue;
		const struct lit_range *lr = &c->lits[rc->index];
		struct gi_map in_list;
		gi_map_init(&in_list);
		for (uint32_t i = 0; i < lr->count; i++) {
			const struct lit_find *lf = gi_vec_get(&c->finds, lr->first + i);
			if (++c->emitted > BEAM_MAX_CALLS) {
				c->overflow = true;
				break;
			}
			if (lf->kind != FIND_NAME_ARITY)
				continue;
			const char *name = lf->function;
			int arity = lf->arity;
			if (c->elixir && gi_str_starts_with(name, "MACRO-") && arity >= 1) {
				name += 6;
				arity--;
			}
			char *cb = gi_arena_printf(&c->facts->arena, "%s/%d", name, arity);
			if (gi_map_get(&in_list, cb))
				continue;
			gi_map_put(&in_list, cb, (void *)1);
			uintptr_t lists = (uintptr_t)gi_map_get(&seen, cb);
			gi_map_put(&seen, cb, (void *)(lists + 1));
			if (lists == 0)
				gi_vec_push(&c->module->callbacks, &(const char *){cb});
			else if (lists == 1)
				facts_site_add(c->module, FACTS_SITE_OPTIONAL_CALLBACK,
				               gi_arena_strdup(&c->facts->arena, name), arity, 0,
				               NULL);
		}
		gi_map_destroy(&in_list);
	}
	gi_map_destroy(&seen);
}

/* Walks the literal table (LitT): records captures and struct maps per literal. */
static void literals_parse(struct beam_ctx *c, const struct chunk *ch)
{
	struct rd r;
	uint32_t declared, count;
	uint8_t *inflated = NULL;
	const uint8_t *table;
	size_t table_len;
	c->chunk = "LitT";
	if (!ch->present)
		return;
	rd_init(&r, ch->data, ch->size);
	if (!rd_u32(&r, &declared)) {
		ctx_note(c, "truncated size");
		return;
	}
	if (declared == 0) { /* stored uncompressed */
		table = r.p;
		table_len = rd_left(&r);
	} else {
		if (declared > BEAM_MAX_LITERALS_SIZE) {
			ctx_note(c, "literals of %u bytes exceed the cap of %u", declared,
			         BEAM_MAX_LITERALS_SIZE);
			return;
		}
		uLongf out_len = declared;
		inflated = gi_malloc(declared);
		if (uncompress(inflated, &out_len, r.p, (uLong)rd_left(&r)) != Z_OK) {
			ctx_note(c, "zlib data is corrupt or larger than the declared %u bytes",
			         declared);
			gi_free(inflated);
			return;
		}
		table = inflated;
		table_len = out_len;
	}
	rd_init(&r, table, table_len);
	if (!rd_u32(&r, &count) || count > rd_left(&r) / 4) {
		ctx_note(c, "literal count does not fit");
		goto done;
	}
	c->lits = gi_arena_calloc(&c->scratch, (size_t)count + 1, sizeof(*c->lits));
	c->lit_count = count;
	for (uint32_t i = 0; i < count; i++) {
		uint32_t size;
		const uint8_t *term;
		uint8_t version;
		if (!rd_u32(&r, &size) || !rd_bytes(&r, size, &term)) {
			ctx_note(c, "literal %u runs past the table", i);
			c->lit_count = i;
			goto done;
		}
		struct rd tr;
		rd_init(&tr, term, size);
		struct etf_walk w = {.c = c, .collect = true};
		struct etf_value v;
		size_t before = c->finds.len;
		if (!rd_u8(&tr, &version) || version != ETF_TAG_VERSION ||
		    !etf_term(&w, &tr, 0, &v)) {
			ctx_note(c, "literal %u: %s", i, w.error ? w.error : "bad version byte");
			c->finds.len = before;
			continue;
		}
		name_arity_list(c, term + 1, size - 1);
		c->lits[i].first = (uint32_t)before;
		c->lits[i].count = (uint32_t)(c->finds.len - before);
	}
done:
	gi_free(inflated);
}

static void ref_add(struct beam_ctx *c, enum facts_ref_kind kind, const char *atom, uint32_t line);

/* Reads an `[{behaviour, [M...]}, {'__impl__', [...]}, ...]` attribute list. */
static void attributes_parse(struct beam_ctx *c, const struct chunk *ch)
{
	struct rd r;
	uint8_t tag;
	uint32_t n;
	struct etf_walk w = {.c = c};
	c->chunk = "Attr";
	if (!ch->present)
		return;
	rd_init(&r, ch->data, ch->size);
	if (!rd_u8(&r, &tag) || tag != ETF_TAG_VERSION || !rd_u8(&r, &tag)) {
		ctx_note(c, "bad version byte");
		return;
	}
	if (tag == ETF_TAG_NIL_EXT)
		return;
	if (tag != ETF_TAG_LIST_EXT || !rd_u32(&r, &n) || n > rd_left(&r)) {
		ctx_note(c, "not a list of attributes");
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct etf_value name, v;
		uint8_t arity, vt;
		if (!rd_u8(&r, &tag) || tag != ETF_TAG_SMALL_TUPLE_EXT || !rd_u8(&r, &arity) ||
		    arity != 2 || !etf_atom(&w, &r, &name)) {
			ctx_note(c, "attribute %u is not a {Name, Value} pair", i);
			return;
		}
		bool behaviour = etf_is_atom(&name, "behaviour") || etf_is_atom(&name, "behavior");
		bool impl = etf_is_atom(&name, "__impl__");
		if (etf_is_atom(&name, "__protocol__"))
			c->module->kind = FACTS_PROTOCOL;
		if ((behaviour || impl) && rd_left(&r) > 0 && *r.p == ETF_TAG_LIST_EXT) {
			uint32_t m;
			rd_u8(&r, &vt);
			if (!rd_u32(&r, &m) || m > rd_left(&r)) {
				ctx_note(c, "attribute %u: bad list", i);
				return;
			}
			for (uint32_t j = 0; j < m; j++) {
				if (behaviour) {
					if (!etf_atom(&w, &r, &v)) {
						ctx_note(c, "behaviour is not an atom");
						return;
					}
					ref_add(c, FACTS_REF_BEHAVIOUR, etf_atom_dup(c, &v), 0);
					continue;
				}
				struct etf_value k;
				if (!rd_u8(&r, &tag) || tag != ETF_TAG_SMALL_TUPLE_EXT ||
				    !rd_u8(&r, &arity) || arity != 2 || !etf_atom(&w, &r, &k) ||
				    !etf_term(&w, &r, 1, &v)) {
					ctx_note(c, "__impl__ is not a keyword list");
					return;
				}
				if (v.kind != ETF_ATOM)
					continue;
				char display[512];
				if (gi_module_display_name(etf_atom_dup(c, &v), display,
				                           sizeof(display)) != 0)
					continue;
				c->module->kind = FACTS_IMPL;
				if (etf_is_atom(&k, "protocol"))
					c->module->protocol =
					    gi_arena_strdup(&c->facts->arena, display);
				else if (etf_is_atom(&k, "for"))
					c->module->impl_for =
					    gi_arena_strdup(&c->facts->arena, display);
			}
			if (!etf_term(&w, &r, 1, &v)) { /* the tail */
				ctx_note(c, "attribute %u: %s", i, w.error);
				return;
			}
		} else if (!etf_term(&w, &r, 1, &v)) {
			ctx_note(c, "attribute %u: %s", i, w.error);
			return;
		}
	}
}

/* Checks that the compile information is one well-formed term. */
static void compile_info_check(struct beam_ctx *c, const struct chunk *ch)
{
	struct rd r;
	uint8_t version;
	struct etf_walk w = {.c = c};
	struct etf_value v;
	c->chunk = "CInf";
	if (!ch->present)
		return;
	rd_init(&r, ch->data, ch->size);
	if (!rd_u8(&r, &version) || version != ETF_TAG_VERSION || !etf_term(&w, &r, 0, &v))
		ctx_note(c, "%s", w.error ? w.error : "bad version byte");
}

/* ------------------------------------------------------------------------ */
/* Line table                                                               */

static void lines_parse(struct beam_ctx *c, const struct chunk *ch)
{
	struct rd r;
	uint32_t version, flags, instr_count, item_count, name_count;
	c->chunk = "Line";
	if (!ch->present)
		return;
	rd_init(&r, ch->data, ch->size);
	if (!rd_u32(&r, &version))
		goto bad;
	if (version != 0)
		return; /* a future format: lines are a nicety */
	if (!rd_u32(&r, &flags) || !rd_u32(&r, &instr_count) || !rd_u32(&r, &item_count) ||
	    !rd_u32(&r, &name_count) || item_count > rd_left(&r))
		goto bad;
	uint32_t *lines = gi_arena_calloc(&c->scratch, (size_t)item_count + 1, 4);
	uint32_t *files = gi_arena_calloc(&c->scratch, (size_t)item_count + 1, 4);
	uint32_t file = 0;
	for (uint32_t i = 1; i <= item_count;) {
		uint8_t b;
		uint64_t v;
		bool big;
		if (!rd_u8(&r, &b) || !compact_value(&r, b, true, &v, &big, 0) || big)
			goto bad;
		if ((b & 7) == OP_A) {
			file = (uint32_t)(v > UINT32_MAX ? UINT32_MAX : v);
		} else if ((b & 7) == OP_I) {
			lines[i] = v > UINT32_MAX ? 0 : (uint32_t)v;
			files[i] = file;
			i++;
		} else {
			goto bad;
		}
	}
	c->line_of_item = lines;
	c->file_of_item = files;
	c->line_item_count = item_count;
	return;
bad:
	ctx_note(c, "malformed line table");
}

/* ------------------------------------------------------------------------ */
/* Code                                                                     */

static int operand_read(struct beam_ctx *c, struct rd *r, struct operand *o, bool in_list)
{
	uint8_t b;
	memset(o, 0, sizeof(*o));
	if (!rd_u8(r, &b))
		return ctx_fail(c, GI_ECORRUPT, "truncated operand at offset %zu", rd_offset(r));
	o->tag = (enum operand_tag)(b & 7);
	if (o->tag != OP_Z) {
		if (!compact_value(r, b, o->tag == OP_I, &o->val, &o->big, 0))
			return ctx_fail(c, GI_ECORRUPT, "truncated operand at offset %zu",
			                rd_offset(r));
		return 0;
	}
	if (b & 0x08)
		return ctx_fail(c, GI_ECORRUPT, "bad extended operand at offset %zu", rd_offset(r));
	uint64_t n, v;
	switch (b >> 4) {
	case 0: /* float, 8 bytes */
		o->tag = OP_FLOAT;
		if (!rd_bytes(r, 8, NULL))
			goto truncated;
		return 0;
	case 1: /* list */
		if (in_list)
			return ctx_fail(c, GI_ECORRUPT, "nested list operand at offset %zu",
			                rd_offset(r));
		if (!compact_u(r, rd_left(r), &n))
			goto truncated;
		if (n > BEAM_MAX_LIST)
			return ctx_fail(c, GI_ETOOBIG,
			                "list operand of %llu elements at offset %zu",
			                (unsigned long long)n, rd_offset(r));
		o->tag = OP_LIST;
		o->list_first = (uint32_t)c->elems.len;
		o->list_count = (uint32_t)n;
		for (uint64_t i = 0; i < n; i++) {
			struct operand e;
			int rc = operand_read(c, r, &e, true);
			if (rc < 0)
				return rc;
			gi_vec_push(&c->elems, &e);
		}
		return 0;
	case 2: /* floating-point register */
		o->tag = OP_FR;
		if (!compact_u(r, UINT32_MAX, &o->val))
			goto truncated;
		return 0;
	case 3: /* allocation list: count, then (kind, amount) pairs */
		o->tag = OP_ALLOC;
		if (!compact_u(r, rd_left(r), &n))
			goto truncated;
		for (uint64_t i = 0; i < 2 * n; i++)
			if (!compact_u(r, UINT64_MAX, &v))
				goto truncated;
		return 0;
	case 4: /* literal */
		o->tag = OP_LITERAL;
		if (!compact_u(r, UINT32_MAX, &o->val))
			goto truncated;
		return 0;
	case 5: { /* typed register (OTP 25+): the register, then a type index */
		int rc = operand_read(c, r, o, true);
		if (rc < 0)
			return rc;
		if (o->tag != OP_X && o->tag != OP_Y)
			return ctx_fail(c, GI_ECORRUPT, "typed operand is not a register at %zu",
			                rd_offset(r));
		if (!compact_u(r, UINT32_MAX, &v))
			goto truncated;
		return 0;
	}
	default:
		return ctx_fail(c, GI_ECORRUPT, "unknown extended operand %d at offset %zu", b >> 4,
		                rd_offset(r));
	}
truncated:
	return ctx_fail(c, GI_ECORRUPT, "truncated operand at offset %zu", rd_offset(r));
}

static struct raw_func *func_current(struct beam_ctx *c)
{
	return c->funcs.len ? gi_vec_get(&c->funcs, c->funcs.len - 1) : NULL;
}

static void call_raw(struct beam_ctx *c, enum raw_kind kind, uint64_t index, uint32_t line)
{
	struct raw_func *f = func_current(c);
	if (!f || index > UINT32_MAX)
		return;
	if (c->calls.len >= BEAM_MAX_CALLS) {
		c->overflow = true;
		return;
	}
	struct raw_call *rc = gi_vec_push_zero(&c->calls);
	rc->kind = kind;
	rc->index = (uint32_t)index;
	rc->line = line;
	f->call_count++;
}

static bool is_test_op(unsigned op)
{
	return (op >= BEAM_OP_IS_LT && op <= BEAM_OP_TEST_ARITY) || op == BEAM_OP_IS_FUNCTION ||
	       op == BEAM_OP_IS_BOOLEAN || op == BEAM_OP_IS_FUNCTION2 || op == BEAM_OP_IS_BITSTR ||
	       op == BEAM_OP_IS_MAP || op == BEAM_OP_HAS_MAP_FIELDS ||
	       op == BEAM_OP_IS_TAGGED_TUPLE;
}

static void literal_note(struct beam_ctx *c, const struct operand *o, uint32_t line)
{
	if (o->tag == OP_LITERAL && o->val < c->lit_count && c->lits[o->val].count > 0)
		call_raw(c, RAW_LITERAL, o->val, line);
}

struct code_state {
	uint32_t last_label;
	uint32_t line;      /* current source line, 0: unknown */
	uint32_t line_file; /* its file in the line table */
	bool line_known;
	bool line_pending;         /* the line is not yet counted in the current function */
	struct operand struct_reg; /* register holding a map's __struct__, tag OP_U: none */
};

static bool atom_is(const struct beam_ctx *c, const struct operand *o, const char *text)
{
	const char *a = o->tag == OP_A ? atom_at(c, o->val) : NULL;
	return a && strcmp(a, text) == 0;
}

static void struct_ref_raw(struct beam_ctx *c, const struct operand *o, uint32_t line)
{
	const char *a = o->tag == OP_A ? atom_at(c, o->val) : NULL;
	if (a && gi_str_starts_with(a, "Elixir."))
		call_raw(c, RAW_STRUCT, o->val, line);
}

static int instruction_apply(struct beam_ctx *c, unsigned op, struct operand *ops,
                             struct code_state *s)
{
	struct raw_func *f = func_current(c);
	if (s->line_pending && f && op != BEAM_OP_LABEL && op != BEAM_OP_FUNC_INFO &&
	    op != BEAM_OP_LINE) {
		s->line_pending = false;
		if (f->line_first == 0) {
			f->line_first = f->line_last = s->line;
			f->file = s->line_file;
		} else if (s->line_file == f->file && s->line > f->line_last) {
			f->line_last = s->line;
		}
	}
	switch (op) {
	case BEAM_OP_LABEL:
		if (ops[0].tag != OP_U || ops[0].val > c->label_count)
			return ctx_fail(c, GI_ECORRUPT, "label %llu out of range (%u labels)",
			                (unsigned long long)ops[0].val, c->label_count);
		s->last_label = (uint32_t)ops[0].val;
		c->label_func[s->last_label] = (int32_t)c->funcs.len - 1;
		s->struct_reg.tag = OP_U;
		return 0;
	case BEAM_OP_FUNC_INFO: { /* Module Function Arity */
		if (ops[1].tag != OP_A || !atom_at(c, ops[1].val) || ops[2].tag != OP_U ||
		    ops[2].val > 255)
			return ctx_fail(c, GI_ECORRUPT, "malformed func_info");
		if (c->funcs.len >= BEAM_MAX_FUNCTIONS)
			return ctx_fail(c, GI_ETOOBIG, "more than %d functions",
			                BEAM_MAX_FUNCTIONS);
		struct raw_func *nf = gi_vec_push_zero(&c->funcs);
		nf->name = (uint32_t)ops[1].val;
		nf->arity = (uint32_t)ops[2].val;
		nf->info_label = s->last_label;
		nf->first_call = c->calls.len;
		nf->owner = -1;
		nf->facts_index = -1;
		if (s->line_known) {
			nf->line_first = nf->line_last = s->line;
			nf->file = s->line_file;
		}
		c->label_func[s->last_label] = (int32_t)c->funcs.len - 1;
		s->struct_reg.tag = OP_U;
		s->line_pending = false;
		return 0;
	}
	case BEAM_OP_LINE: /* Applies to the instructions after it (or the next func_info) */
		if (ops[0].tag == OP_U && ops[0].val >= 1 && ops[0].val <= c->line_item_count) {
			s->line = c->line_of_item[ops[0].val];
			s->line_file = c->file_of_item[ops[0].val];
			s->line_known = true;
			s->line_pending = true;
		}
		return 0;
	case BEAM_OP_CALL:      /* Arity Label */
	case BEAM_OP_CALL_LAST: /* Arity Label Dealloc */
	case BEAM_OP_CALL_ONLY: /* Arity Label */
		if (ops[1].tag == OP_F)
			call_raw(c, RAW_LOCAL, ops[1].val, s->line);
		return 0;
	case BEAM_OP_CALL_EXT: /* Arity Import */
	case BEAM_OP_CALL_EXT_LAST:
	case BEAM_OP_CALL_EXT_ONLY:
		call_raw(c, RAW_IMPORT, ops[1].val, s->line);
		return 0;
	case BEAM_OP_BIF0: /* Bif Reg */
		call_raw(c, RAW_IMPORT, ops[0].val, s->line);
		return 0;
	case BEAM_OP_BIF1: /* Fail Bif ... */
	case BEAM_OP_BIF2:
	case BEAM_OP_BIF3: /* (OTP 29) */
		call_raw(c, RAW_IMPORT, ops[1].val, s->line);
		return 0;
	case BEAM_OP_GC_BIF1: /* Fail Live Bif ... */
	case BEAM_OP_GC_BIF2:
	case BEAM_OP_GC_BIF3:
		call_raw(c, RAW_IMPORT, ops[2].val, s->line);
		return 0;
	case BEAM_OP_APPLY:      /* Arity */
	case BEAM_OP_APPLY_LAST: /* Arity Dealloc */
		call_raw(c, RAW_APPLY, ops[0].val, s->line);
		return 0;
	case BEAM_OP_MAKE_FUN2: /* Index */
	case BEAM_OP_MAKE_FUN3: /* Index Dst Env */
		call_raw(c, RAW_LAMBDA, ops[0].val, s->line);
		return 0;
	case BEAM_OP_CATCH:
	case BEAM_OP_TRY:
		if (f)
			f->branches++;
		return 0;
	case BEAM_OP_SELECT_VAL: /* Src Fail [Value Label ...] */
	case BEAM_OP_SELECT_TUPLE_ARITY:
		if (f && ops[2].tag == OP_LIST)
			f->branches += (int)(ops[2].list_count / 2);
		if (op == BEAM_OP_SELECT_VAL && s->struct_reg.tag != OP_U &&
		    ops[0].tag == s->struct_reg.tag && ops[0].val == s->struct_reg.val &&
		    ops[2].tag == OP_LIST) {
			for (uint32_t i = 0; i + 1 < ops[2].list_count; i += 2)
				struct_ref_raw(c, gi_vec_get(&c->elems, ops[2].list_first + i),
				               s->line);
		}
		return 0;
	case BEAM_OP_PUT_MAP_ASSOC: /* Fail Src Dst Live [Key Value ...] */
	case BEAM_OP_PUT_MAP_EXACT:
		if (ops[4].tag == OP_LIST) {
			for (uint32_t i = 0; i + 1 < ops[4].list_count; i += 2) {
				struct operand *k = gi_vec_get(&c->elems, ops[4].list_first + i);
				if (atom_is(c, k, "__struct__"))
					struct_ref_raw(c, k + 1, s->line);
			}
		}
		return 0;
	case BEAM_OP_GET_MAP_ELEMENTS: /* Fail Src [Key Dst ...] */
		if (f && ops[0].tag == OP_F && ops[0].val != 0 && ops[0].val != f->info_label)
			f->branches++;
		if (ops[2].tag == OP_LIST) {
			for (uint32_t i = 0; i + 1 < ops[2].list_count; i += 2) {
				struct operand *k = gi_vec_get(&c->elems, ops[2].list_first + i);
				if (atom_is(c, k, "__struct__"))
					s->struct_reg = k[1];
			}
		}
		return 0;
	default:
		break;
	}
	if (is_test_op(op) && f && ops[0].tag == OP_F && ops[0].val != 0 &&
	    ops[0].val != f->info_label)
		f->branches++;
	if ((op == BEAM_OP_IS_EQ_EXACT || op == BEAM_OP_IS_NE_EXACT) && s->struct_reg.tag != OP_U &&
	    ops[1].tag == s->struct_reg.tag && ops[1].val == s->struct_reg.val)
		struct_ref_raw(c, &ops[2], s->line);
	return 0;
}

static int code_parse(struct beam_ctx *c, const struct chunk *ch)
{
	struct rd r;
	uint32_t info_size, set, max_op, labels, functions;
	struct operand ops[8];
	struct code_state s;
	c->chunk = "Code";
	if (!ch->present)
		return ctx_fail(c, GI_ECORRUPT, "no Code chunk");
	rd_init(&r, ch->data, ch->size);
	if (!rd_u32(&r, &info_size) || info_size < 16 || info_size > rd_left(&r))
		return ctx_fail(c, GI_ECORRUPT, "truncated header");
	rd_u32(&r, &set);
	rd_u32(&r, &max_op);
	rd_u32(&r, &labels);
	rd_u32(&r, &functions);
	(void)max_op;
	if (set != 0)
		return ctx_fail(c, GI_EUNSUPPORTED, "instruction set %u is not supported", set);
	r.p = ch->data + 4 + info_size;
	if (labels > ch->size)
		return ctx_fail(c, GI_ECORRUPT, "%u labels cannot fit in %u bytes", labels,
		                ch->size);
	c->label_count = labels;
	c->label_func = gi_arena_calloc(&c->scratch, (size_t)labels + 1, sizeof(int32_t));
	for (uint32_t i = 0; i <= labels; i++)
		c->label_func[i] = -1;
	memset(&s, 0, sizeof(s));
	s.struct_reg.tag = OP_U;
	while (rd_left(&r) > 0) {
		uint8_t opcode;
		size_t at = rd_offset(&r);
		rd_u8(&r, &opcode);
		const struct beam_op *info = beam_op_lookup(opcode);
		if (!info || info->arity > 8)
			return ctx_fail(c, GI_EUNSUPPORTED,
			                "unknown opcode %u at offset %zu (object code newer than "
			                "OTP 29?)",
			                opcode, at);
		if (opcode == BEAM_OP_INT_CODE_END)
			break;
		c->elems.len = 0;
		for (int i = 0; i < info->arity; i++) {
			int rc = operand_read(c, &r, &ops[i], false);
			if (rc < 0)
				return rc;
		}
		for (int i = info->arity; i < 8; i++)
			memset(&ops[i], 0, sizeof(ops[i]));
		int rc = instruction_apply(c, opcode, ops, &s);
		if (rc < 0)
			return rc;
		if (c->overflow)
			return ctx_fail(c, GI_ETOOBIG, "more than %d call sites", BEAM_MAX_CALLS);
		if (c->lit_count) {
			for (int i = 0; i < info->arity; i++)
				literal_note(c, &ops[i], s.line);
			for (size_t i = 0; i < c->elems.len; i++)
				literal_note(c, gi_vec_get(&c->elems, i), s.line);
		}
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Facts                                                                    */

static void ref_add(struct beam_ctx *c, enum facts_ref_kind kind, const char *atom, uint32_t line)
{
	char display[600], key[620];
	if (!atom || strcmp(atom, c->module_atom) == 0)
		return;
	if (gi_module_display_name(atom, display, sizeof(display)) != 0)
		return;
	snprintf(key, sizeof(key), "%d:%s", (int)kind, display);
	if (gi_map_get(&c->refs, key))
		return;
	gi_map_put(&c->refs, key, (void *)1);
	facts_ref_add(c->facts, c->module, kind, display, line);
}

/* Operators compiled to BIF calls (a + b, a and b) are not calls in the source. */
static bool bif_is_operator(const char *module, const char *name)
{
	static const char *const words[] = {"div", "rem",  "band", "bor", "bxor", "bsl",
	                                    "bsr", "bnot", "and",  "or",  "xor",  "not"};
	if (strcmp(module, "erlang") != 0)
		return false;
	if (!(name[0] >= 'a' && name[0] <= 'z'))
		return true;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcmp(name, words[i]) == 0)
			return true;
	return false;
}

/* For a generated function "-parent/2-fun-0-" (or "-inlined-parent/2-"), the
 * index of its parent among c->funcs, or -1. */
static int generated_parent(struct beam_ctx *c, const char *name, const struct gi_map *by_name)
{
	const char *s = name + 1;
	if (gi_str_starts_with(s, "inlined-"))
		s += 8;
	for (const char *p = s; *p; p++) {
		if (*p != '/' || p == s)
			continue;
		const char *q = p + 1;
		while (*q >= '0' && *q <= '9')
			q++;
		if (q == p + 1 || *q != '-' || q - p > 4)
			continue;
		char key[600];
		int n = snprintf(key, sizeof(key), "%.*s", (int)(q - s), s);
		if (n < 0 || (size_t)n >= sizeof(key))
			return -1;
		void *v = gi_map_get(by_name, key);
		return v ? (int)((intptr_t)v - 1) : -1;
	}
	(void)c;
	return -1;
}

static bool func_is_skipped(const struct beam_ctx *c, const char *name, uint32_t arity)
{
	if (strcmp(name, "module_info") == 0 && arity <= 1)
		return true;
	if (strcmp(name, "behaviour_info") == 0 && arity == 1)
		return true;
	if (!c->elixir)
		return false;
	if ((strcmp(name, "__info__") == 0 && arity == 1) ||
	    (strcmp(name, "__struct__") == 0 && arity <= 1) ||
	    (strcmp(name, "__impl__") == 0 && arity == 1))
		return true;
	return c->module->kind == FACTS_PROTOCOL && arity == 1 &&
	       (strcmp(name, "__protocol__") == 0 || strcmp(name, "impl_for") == 0 ||
	        strcmp(name, "impl_for!") == 0);
}

static void emit_call(struct beam_ctx *c, struct facts_function *fn, const struct raw_call *rc,
                      const char *self_display)
{
	char display[600];
	if (++c->emitted > BEAM_MAX_CALLS) {
		c->overflow = true;
		return;
	}
	switch (rc->kind) {
	case RAW_IMPORT: {
		if (rc->index >= c->import_count)
			return;
		const struct import *im = &c->imports[rc->index];
		const char *mod = c->atoms[im->module], *fun = c->atoms[im->function];
		if (bif_is_operator(mod, fun))
			return;
		if (gi_module_display_name(mod, display, sizeof(display)) != 0)
			return;
		facts_call_add(c->facts, fn, FACTS_CALL_REMOTE, display, fun, (int)im->arity,
		               rc->line);
		ref_add(c, FACTS_REF_CALL, mod, rc->line);
		return;
	}
	case RAW_LOCAL: {
		if (rc->index > c->label_count || c->label_func[rc->index] < 0)
			return;
		const struct raw_func *t = gi_vec_get(&c->funcs, (size_t)c->label_func[rc->index]);
		const char *name = c->atoms[t->name];
		if (name[0] == '-' || func_is_skipped(c, name, t->arity))
			return; /* a lambda or comprehension body (folded), or generated code */
		facts_call_add(c->facts, fn, FACTS_CALL_LOCAL, self_display, name, (int)t->arity,
		               rc->line);
		return;
	}
	case RAW_LAMBDA: {
		if (rc->index >= c->lambda_count || !atom_at(c, c->lambdas[rc->index].function))
			return;
		const char *name = c->atoms[c->lambdas[rc->index].function];
		if (name[0] == '-' || func_is_skipped(c, name, c->lambdas[rc->index].arity))
			return;
		facts_call_add(c->facts, fn, FACTS_CALL_CAPTURE, self_display, name,
		               (int)c->lambdas[rc->index].arity, rc->line);
		return;
	}
	case RAW_LITERAL: {
		const struct lit_range *lr = &c->lits[rc->index];
		for (uint32_t i = 0; i < lr->count; i++) {
			const struct lit_find *lf = gi_vec_get(&c->finds, lr->first + i);
			if (++c->emitted > BEAM_MAX_CALLS) {
				c->overflow = true;
				return;
			}
			if (lf->kind == FIND_STRUCT) {
				ref_add(c, FACTS_REF_STRUCT, lf->module, rc->line);
				continue;
			}
			if (lf->kind != FIND_CAPTURE)
				continue;
			if (gi_module_display_name(lf->module, display, sizeof(display)) != 0)
				continue;
			facts_call_add(c->facts, fn, FACTS_CALL_CAPTURE, display, lf->function,
			               lf->arity, rc->line);
			ref_add(c, FACTS_REF_CAPTURE, lf->module, rc->line);
		}
		return;
	}
	case RAW_APPLY:
		facts_call_add(c->facts, fn, FACTS_CALL_DYNAMIC, NULL, NULL, (int)rc->index,
		               rc->line);
		return;
	case RAW_STRUCT:
		ref_add(c, FACTS_REF_STRUCT, atom_at(c, rc->index), rc->line);
		return;
	}
}

/* The line-table file of most functions: the module's own source file. */
static uint32_t main_file_of(struct beam_ctx *c)
{
	uint32_t files[32], counts[32], n = 0, best = 0;
	for (size_t i = 0; i < c->funcs.len; i++) {
		const struct raw_func *f = gi_vec_get(&c->funcs, i);
		uint32_t k = 0;
		if (!f->line_first)
			continue;
		while (k < n && files[k] != f->file)
			k++;
		if (k == n && n < 32) {
			files[n] = f->file;
			counts[n++] = 0;
		}
		if (k < n)
			counts[k]++;
	}
	for (uint32_t k = 1; k < n; k++)
		if (counts[k] > counts[best])
			best = k;
	return n ? files[best] : 0;
}

static int facts_build(struct beam_ctx *c)
{
	struct gi_map by_name; /* "name/arity" -> index + 1 */
	char key[600];
	const char *self_display = c->module->name;
	size_t nf = c->funcs.len;
	bool *exported = gi_arena_calloc(&c->scratch, nf + 1, sizeof(bool));
	gi_map_init(&by_name);
	for (size_t i = 0; i < nf; i++) {
		struct raw_func *f = gi_vec_get(&c->funcs, i);
		snprintf(key, sizeof(key), "%s/%u", c->atoms[f->name], f->arity);
		gi_map_put(&by_name, key, (void *)(intptr_t)(i + 1));
	}
	for (uint32_t i = 0; i < c->export_count; i++) {
		snprintf(key, sizeof(key), "%s/%u", c->atoms[c->exports[i].function],
		         c->exports[i].arity);
		void *v = gi_map_get(&by_name, key);
		if (v)
			exported[(intptr_t)v - 1] = true;
	}
	/* Owners: a generated function's facts go to its parent. */
	for (size_t i = 0; i < nf; i++) {
		struct raw_func *f = gi_vec_get(&c->funcs, i);
		const char *name = c->atoms[f->name];
		if (func_is_skipped(c, name, f->arity)) {
			if (strcmp(name, "__struct__") == 0)
				c->module->has_struct = true;
			if (strcmp(name, "behaviour_info") == 0 &&
			    c->module->kind != FACTS_PROTOCOL)
				callbacks_collect(c, f);
			continue;
		}
		f->owner = (int)i;
		if (name[0] == '-' && !exported[i]) {
			int p = generated_parent(c, name, &by_name);
			for (int hops = 0; p >= 0 && hops < 8; hops++) {
				struct raw_func *pf = gi_vec_get(&c->funcs, (size_t)p);
				const char *pn = c->atoms[pf->name];
				if (pn[0] != '-')
					break;
				p = generated_parent(c, pn, &by_name);
			}
			if (p >= 0) {
				struct raw_func *pf = gi_vec_get(&c->funcs, (size_t)p);
				f->owner =
				    func_is_skipped(c, c->atoms[pf->name], pf->arity) ? -1 : p;
			}
		}
	}
	uint32_t main_file = main_file_of(c);
	/* Functions, in code order. */
	for (size_t i = 0; i < nf; i++) {
		struct raw_func *f = gi_vec_get(&c->funcs, i);
		if (f->owner != (int)i)
			continue;
		const char *name = c->atoms[f->name];
		int arity = (int)f->arity;
		enum facts_function_kind kind = exported[i] ? FACTS_DEF : FACTS_DEFP;
		if (c->elixir && gi_str_starts_with(name, "MACRO-") && arity >= 1) {
			name += 6;
			arity--;
			kind = exported[i] ? FACTS_DEFMACRO : FACTS_DEFMACROP;
		} else if (c->module->kind == FACTS_PROTOCOL && exported[i]) {
			kind = FACTS_DEFCALLBACK;
		}
		struct facts_function *fn = facts_function_add(c->facts, c->module, name, arity);
		fn->kind = kind;
		fn->is_public = exported[i];
		if (f->file == main_file) { /* code injected from elsewhere has foreign lines */
			fn->line_start = f->line_first;
			fn->line_end = f->line_last;
		}
		fn->lines = fn->line_start ? fn->line_end - fn->line_start + 1 : 0;
		fn->clauses = 1;
		f->facts_index = (int)(c->module->functions.len - 1);
	}
	/* Calls and branches, generated functions folded into their owners. */
	for (size_t i = 0; i < nf; i++) {
		struct raw_func *f = gi_vec_get(&c->funcs, i);
		if (f->owner < 0)
			continue;
		struct raw_func *o = gi_vec_get(&c->funcs, (size_t)f->owner);
		struct facts_function *fn =
		    gi_vec_get(&c->module->functions, (size_t)o->facts_index);
		fn->cyclomatic += f->branches;
		for (size_t k = 0; k < f->call_count; k++) {
			const struct raw_call *rc = gi_vec_get(&c->calls, f->first_call + k);
			emit_call(c, fn, rc, self_display);
			if (c->overflow)
				goto overflow;
		}
	}
	uint32_t first = 0, last = 0;
	for (size_t i = 0; i < c->module->functions.len; i++) {
		struct facts_function *fn = gi_vec_get(&c->module->functions, i);
		fn->cyclomatic += 1;
		if (fn->line_start && (first == 0 || fn->line_start < first))
			first = fn->line_start;
		if (fn->line_end > last)
			last = fn->line_end;
	}
	c->module->line_start = first;
	c->module->line_end = last;
	if (c->module->kind == FACTS_PROTOCOL) {
		for (size_t i = 0; i < c->module->functions.len; i++) {
			struct facts_function *fn = gi_vec_get(&c->module->functions, i);
			if (fn->kind != FACTS_DEFCALLBACK)
				continue;
			const char *cb =
			    gi_arena_printf(&c->facts->arena, "%s/%d", fn->name, fn->arity);
			gi_vec_push(&c->module->callbacks, &cb);
		}
	}
overflow:
	gi_map_destroy(&by_name);
	if (c->overflow) {
		c->chunk = "Code";
		return ctx_fail(c, GI_ETOOBIG, "more than %d calls and references", BEAM_MAX_CALLS);
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Docs (EEP 48) and specs (Dbgi)                                           */

static struct facts_function *fn_find(struct beam_ctx *c, const char *name, size_t len,
                                      int64_t arity)
{
	char key[600];
	int n = snprintf(key, sizeof(key), "%.*s/%lld", (int)len, name, (long long)arity);
	if (n < 0 || (size_t)n >= sizeof(key))
		return NULL;
	void *v = gi_map_get(&c->fn_index, key);
	return v ? gi_vec_get(&c->module->functions, (size_t)((intptr_t)v - 1)) : NULL;
}

static void fn_index_build(struct beam_ctx *c)
{
	char key[600];
	for (size_t i = 0; i < c->module->functions.len; i++) {
		const struct facts_function *fn = gi_vec_get(&c->module->functions, i);
		snprintf(key, sizeof(key), "%s/%d", fn->name, fn->arity);
		gi_map_put(&c->fn_index, key, (void *)(intptr_t)(i + 1));
	}
}

static void spec_mark(struct beam_ctx *c, const struct etf_value *name, int64_t arity)
{
	const char *text = name->text;
	size_t len = name->len;
	if (c->elixir && len > 6 && GI_MEM_IS(text, 6, "MACRO-") && arity >= 1) {
		text += 6;
		len -= 6;
		arity--;
	}
	struct facts_function *fn = fn_find(c, text, len, arity);
	if (fn)
		fn->has_spec = true;
}

/* Opens a term_to_binary blob (version byte, maybe compressed, tag 80): *r
 * reads the term; *buf (caller frees) holds the inflated bytes, if any. */
static bool etf_open(struct beam_ctx *c, const struct chunk *ch, uint8_t **buf, struct rd *r)
{
	uint8_t version, tag;
	uint32_t size;
	*buf = NULL;
	rd_init(r, ch->data, ch->size);
	if (!rd_u8(r, &version) || version != ETF_TAG_VERSION) {
		ctx_note(c, "bad version byte");
		return false;
	}
	if (rd_left(r) == 0 || r->p[0] != ETF_TAG_COMPRESSED)
		return true;
	rd_u8(r, &tag);
	if (!rd_u32(r, &size) || size > BEAM_MAX_LITERALS_SIZE) {
		ctx_note(c, "compressed term larger than the cap of %u bytes",
		         BEAM_MAX_LITERALS_SIZE);
		return false;
	}
	uLongf out_len = size;
	*buf = gi_malloc((size_t)size + 1);
	if (uncompress(*buf, &out_len, r->p, (uLong)rd_left(r)) != Z_OK) {
		ctx_note(c, "zlib data is corrupt or larger than the declared %u bytes", size);
		gi_free(*buf);
		*buf = NULL;
		return false;
	}
	rd_init(r, *buf, out_len);
	return true;
}

/* What a docs entry's Doc is: a non-empty map (documented), hidden, or none. */
static bool doc_read(struct etf_walk *w, struct rd *r, bool *has, bool *hidden)
{
	struct etf_value v;
	*has = *hidden = false;
	if (rd_left(r) > 0 && r->p[0] == ETF_TAG_MAP_EXT) {
		*has = rd_left(r) >= 5 && (r->p[1] | r->p[2] | r->p[3] | r->p[4]) != 0;
		return etf_term(w, r, 1, &v);
	}
	if (!etf_term(w, r, 1, &v))
		return false;
	*has = *hidden = etf_is_atom(&v, "hidden");
	return true;
}

/* Reads {docs_v1, Anno, Lang, Format, ModuleDoc, Meta, [{{Kind, Name, Arity}, Anno, Sig, Doc,
 * Meta}]} into has_moduledoc, moduledoc_false, has_doc and doc_false. */
static void docs_parse(struct beam_ctx *c, const struct chunk *ch)
{
	struct rd r;
	uint8_t *buf = NULL, tag, arity;
	uint32_t n;
	struct etf_walk w = {.c = c};
	struct etf_value v;
	bool has, hidden;
	c->chunk = "Docs";
	if (!ch->present || !etf_open(c, ch, &buf, &r))
		goto done;
	if (!rd_u8(&r, &tag) || tag != ETF_TAG_SMALL_TUPLE_EXT || !rd_u8(&r, &arity) ||
	    arity != 7 || !etf_atom(&w, &r, &v) || !etf_is_atom(&v, "docs_v1"))
		goto bad;
	for (int i = 0; i < 3; i++) /* anno, language, format */
		if (!etf_term(&w, &r, 1, &v))
			goto bad;
	if (!doc_read(&w, &r, &has, &hidden) || !etf_term(&w, &r, 1, &v))
		goto bad;
	c->module->has_moduledoc = has;
	c->module->moduledoc_false = hidden;
	if (!rd_u8(&r, &tag))
		goto bad;
	if (tag == ETF_TAG_NIL_EXT)
		goto done;
	if (tag != ETF_TAG_LIST_EXT || !rd_u32(&r, &n) || n > rd_left(&r))
		goto bad;
	for (uint32_t i = 0; i < n; i++) {
		struct etf_value kind, name, ar;
		if (!rd_u8(&r, &tag) || tag != ETF_TAG_SMALL_TUPLE_EXT || !rd_u8(&r, &arity) ||
		    arity != 5 || !rd_u8(&r, &tag) || tag != ETF_TAG_SMALL_TUPLE_EXT ||
		    !rd_u8(&r, &arity) || arity != 3 || !etf_atom(&w, &r, &kind) ||
		    !etf_atom(&w, &r, &name) || !etf_term(&w, &r, 2, &ar) || ar.kind != ETF_INT)
			goto bad;
		if (!etf_term(&w, &r, 1, &v) || !etf_term(&w, &r, 1, &v) ||
		    !doc_read(&w, &r, &has, &hidden) || !etf_term(&w, &r, 1, &v))
			goto bad;
		if (!etf_is_atom(&kind, "function") && !etf_is_atom(&kind, "macro"))
			continue;
		struct facts_function *fn = fn_find(c, name.text, name.len, ar.integer);
		if (fn) {
			fn->has_doc = has;
			fn->doc_false = hidden;
		}
	}
	goto done;
bad:
	ctx_note(c, "not an EEP 48 docs_v1 term%s%s", w.error ? ": " : "", w.error ? w.error : "");
done:
	gi_free(buf);
}

/* Walks the debug information (abstract code, or Elixir's) for -spec attributes. */
static void specs_parse(struct beam_ctx *c, const struct chunk *ch)
{
	struct rd r;
	uint8_t *buf = NULL;
	struct etf_walk w = {.c = c, .specs = true, .max_depth = BEAM_MAX_DEBUG_DEPTH};
	struct etf_value v;
	c->chunk = "Dbgi";
	if (ch->present && etf_open(c, ch, &buf, &r) && !etf_term(&w, &r, 0, &v))
		ctx_note(c, "%s", w.error ? w.error : "malformed");
	gi_free(buf);
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                             */

/* Inflates a gzip'ed .beam into *out (caller frees), capped at BEAM_MAX_FILE_SIZE. */
static int gunzip(struct beam_ctx *c, const unsigned char *data, size_t len, uint8_t **out,
                  size_t *out_len)
{
	z_stream zs;
	size_t cap = len * 4 + 4096, used = 0;
	uint8_t *buf;
	int zrc;
	c->chunk = "gzip";
	if (len > BEAM_MAX_FILE_SIZE)
		return ctx_fail(c, GI_ETOOBIG, "compressed file larger than %u bytes",
		                BEAM_MAX_FILE_SIZE);
	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
		return ctx_fail(c, GI_EIO, "zlib cannot start");
	if (cap > BEAM_MAX_FILE_SIZE)
		cap = BEAM_MAX_FILE_SIZE;
	buf = gi_malloc(cap);
	zs.next_in = (Bytef *)(uintptr_t)data;
	zs.avail_in = (uInt)len;
	for (;;) {
		zs.next_out = buf + used;
		zs.avail_out = (uInt)(cap - used);
		zrc = inflate(&zs, Z_NO_FLUSH);
		used = cap - zs.avail_out;
		if (zrc == Z_STREAM_END)
			break;
		if (zrc != Z_OK && zrc != Z_BUF_ERROR)
			goto corrupt;
		if (zs.avail_out == 0) {
			if (cap >= BEAM_MAX_FILE_SIZE) {
				inflateEnd(&zs);
				gi_free(buf);
				return ctx_fail(c, GI_ETOOBIG, "inflates past %u bytes",
				                BEAM_MAX_FILE_SIZE);
			}
			cap = cap * 2 > BEAM_MAX_FILE_SIZE ? BEAM_MAX_FILE_SIZE : cap * 2;
			buf = gi_realloc(buf, cap);
		} else if (zs.avail_in == 0 || zrc == Z_BUF_ERROR) {
			goto corrupt;
		}
	}
	inflateEnd(&zs);
	*out = buf;
	*out_len = used;
	return 0;
corrupt:
	inflateEnd(&zs);
	gi_free(buf);
	return ctx_fail(c, GI_ECORRUPT, "gzip data is corrupt or truncated");
}

int beam_read(const char *path, const unsigned char *data, size_t len, struct facts_file **out,
              char *err, size_t err_size)
{
	struct beam_ctx c;
	struct chunks ch;
	uint8_t *inflated = NULL;
	int rc;
	*out = NULL;
	if (err && err_size)
		err[0] = '\0';
	memset(&c, 0, sizeof(c));
	c.path = path ? path : "(memory)";
	c.err = err;
	c.err_size = err_size;
	gi_arena_init(&c.scratch);
	gi_vec_init(&c.funcs, sizeof(struct raw_func));
	gi_vec_init(&c.calls, sizeof(struct raw_call));
	gi_vec_init(&c.elems, sizeof(struct operand));
	gi_vec_init(&c.finds, sizeof(struct lit_find));
	gi_map_init(&c.refs);
	gi_map_init(&c.fn_index);
	c.facts = facts_file_new(c.path, FACTS_FROM_BEAM);
	c.facts->size = len;
	if (len > BEAM_MAX_FILE_SIZE) {
		rc = ctx_fail(&c, GI_ETOOBIG, "%zu bytes is over the cap of %u", len,
		              BEAM_MAX_FILE_SIZE);
		goto done;
	}
	if (len >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
		if ((rc = gunzip(&c, data, len, &inflated, &len)) < 0)
			goto done;
		data = inflated;
	}
	if ((rc = container_parse(&c, data, len, &ch)) < 0)
		goto done;
	if ((rc = atoms_parse(&c, &ch.atoms, ch.atoms_utf8)) < 0)
		goto done;
	c.module_atom = c.atoms[1];
	c.elixir = gi_str_starts_with(c.module_atom, "Elixir.");
	char display[600];
	if (c.module_atom[0] == '\0' ||
	    gi_module_display_name(c.module_atom, display, sizeof(display)) != 0) {
		c.chunk = "AtU8";
		rc = ctx_fail(&c, GI_ECORRUPT, "bad module name");
		goto done;
	}
	c.module = facts_module_add(c.facts, display);
	if ((rc = tables_parse(&c, &ch)) < 0)
		goto done;
	attributes_parse(&c, &ch.attributes);
	compile_info_check(&c, &ch.compile_info);
	literals_parse(&c, &ch.literals);
	lines_parse(&c, &ch.lines);
	if ((rc = code_parse(&c, &ch.code)) < 0)
		goto done;
	c.module = gi_vec_get(&c.facts->modules, 0);
	rc = facts_build(&c);
	if (rc == 0) {
		fn_index_build(&c);
		docs_parse(&c, &ch.docs);
		specs_parse(&c, &ch.debug_info);
	}
done:
	if (rc < 0) {
		facts_file_free(c.facts);
	} else {
		*out = c.facts;
	}
	gi_map_destroy(&c.refs);
	gi_map_destroy(&c.fn_index);
	gi_vec_destroy(&c.finds);
	gi_vec_destroy(&c.elems);
	gi_vec_destroy(&c.calls);
	gi_vec_destroy(&c.funcs);
	gi_arena_destroy(&c.scratch);
	gi_free(inflated);
	return rc;
}

int beam_read_file(const char *path, struct facts_file **out, char *err, size_t err_size)
{
	char *data = NULL;
	size_t len = 0;
	struct stat st;
	*out = NULL;
	int rc = gi_fs_read_file(path, BEAM_MAX_FILE_SIZE, &data, &len);
	if (rc < 0) {
		if (err && err_size)
			snprintf(err, err_size, "%s: %s", path, gi_strerror(rc));
		return rc;
	}
	rc = beam_read(path, (const unsigned char *)data, len, out, err, err_size);
	if (rc == 0) {
		(*out)->content_hash = gi_hash64(data, len, GI_HASH_SEED);
		if (stat(path, &st) == 0)
			(*out)->mtime_ns =
			    (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	}
	gi_free(data);
	return rc;
}

int beam_module_name(const unsigned char *data, size_t len, char *out, size_t size)
{
	struct beam_ctx c;
	struct chunks ch;
	struct rd r;
	uint32_t raw;
	uint64_t alen;
	const uint8_t *text;
	char atom[1024];
	if (len >= 2 && data[0] == 0x1f && data[1] == 0x8b)
		return GI_EUNSUPPORTED;
	memset(&c, 0, sizeof(c));
	c.path = "";
	if (container_parse(&c, data, len, &ch) < 0 || !ch.atoms.present)
		return GI_ECORRUPT;
	rd_init(&r, ch.atoms.data, ch.atoms.size);
	if (!rd_u32(&r, &raw) || raw == 0)
		return GI_ECORRUPT;
	if ((int32_t)raw < 0) {
		if (!compact_u(&r, sizeof(atom) - 1, &alen))
			return GI_ECORRUPT;
	} else {
		uint8_t l8;
		if (!rd_u8(&r, &l8))
			return GI_ECORRUPT;
		alen = l8;
	}
	if (alen == 0 || !rd_bytes(&r, (size_t)alen, &text) || memchr(text, '\0', (size_t)alen))
		return GI_ECORRUPT;
	memcpy(atom, text, (size_t)alen);
	atom[alen] = '\0';
	return gi_module_display_name(atom, out, size);
}
