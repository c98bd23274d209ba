/*
 * Unit tests for src/source/beam.c: BEAM files built byte by byte (so that
 * the OTP 28 atom table, literals and attributes are checked whatever OTP is
 * installed), and hostile input: truncation, corruption, over-long counts,
 * deep terms, bombs. Real seeds come from fuzz/corpus/beam/.
 * needs:
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/fs.h"
#include "harness.h"
#include "source/beam.h"
#include "source/beam_ops.h"

/* ---- a tiny BEAM builder ---- */

static void put_u32(struct gi_buf *b, uint32_t v)
{
	unsigned char x[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16),
	                      (unsigned char)(v >> 8), (unsigned char)v};
	gi_buf_append(b, x, 4);
}

static void put_bytes(struct gi_buf *b, const void *p, size_t n)
{
	gi_buf_append(b, p, n);
}

static void put_u8(struct gi_buf *b, unsigned v)
{
	unsigned char x = (unsigned char)v;
	gi_buf_append(b, &x, 1);
}

static void put_chunk(struct gi_buf *file, const char *id, const struct gi_buf *body)
{
	static const char zeros[4] = {0};
	put_bytes(file, id, 4);
	put_u32(file, (uint32_t)body->len);
	put_bytes(file, body->data, body->len);
	put_bytes(file, zeros, (4 - (body->len & 3)) & 3);
}

/* An ETF atom (SMALL_ATOM_UTF8_EXT). */
static void put_atom(struct gi_buf *b, const char *a)
{
	put_u8(b, 119);
	put_u8(b, (unsigned)strlen(a));
	put_bytes(b, a, strlen(a));
}

static const char *const syn_atoms[] = {
    "Elixir.Syn.ModuleX", "run", "Elixir.Other", "go", "lists", "reverse"};

struct syn_options {
	bool long_atoms;                  /* the OTP 28 atom table */
	bool deep_literal;                /* a literal nested far past the cap */
	uint32_t lit_declare;             /* 0: the true size */
	unsigned extra_op;                /* an opcode appended before return (0: none) */
	unsigned lit_funs;                /* >0: the literal is a list of that many funs... */
	unsigned lit_refs;                /* ...referenced by that many more moves */
	const struct gi_buf *docs, *dbgi; /* extra chunks, or NULL */
};

/* Builds a module Syn.ModuleX with run/0 calling Other.go/0 and
 * :lists.reverse/1 on a literal {fun Elixir.Cap:f/2, %St{a: 1}}, and
 * @behaviour Beh. */
static void syn_build(struct gi_buf *file, const struct syn_options *o)
{
	struct gi_buf body, chunks, term, table, z;
	gi_buf_init(&body, 0);
	gi_buf_init(&chunks, 0);
	gi_buf_init(&term, 0);
	gi_buf_init(&table, 0);
	gi_buf_init(&z, 0);
	size_t natoms = sizeof(syn_atoms) / sizeof(syn_atoms[0]);

	/* AtU8 */
	put_u32(&body, o->long_atoms ? (uint32_t) - (int32_t)natoms : (uint32_t)natoms);
	for (size_t i = 0; i < natoms; i++) {
		size_t n = strlen(syn_atoms[i]);
		if (!o->long_atoms) {
			put_u8(&body, (unsigned)n);
		} else if (n < 16) {
			put_u8(&body, (unsigned)(n << 4));
		} else {
			put_u8(&body, 0x08 | (unsigned)((n >> 8) << 5));
			put_u8(&body, (unsigned)(n & 0xff));
		}
		put_bytes(&body, syn_atoms[i], n);
	}
	put_chunk(&chunks, "AtU8", &body);

	/* Code */
	gi_buf_reset(&body);
	put_u32(&body, 16);
	put_u32(&body, 0);
	put_u32(&body, BEAM_OP_MAX);
	put_u32(&body, 3);
	put_u32(&body, 1);
	static const unsigned char code[] = {
	    0x01, 0x10,             /* label 1 */
	    0x02, 0x12, 0x22, 0x00, /* func_info 'Elixir.Syn.ModuleX' run 0 */
	    0x01, 0x20,             /* label 2 */
	    0x07, 0x00, 0x00,       /* call_ext 0 import#0 (Other.go/0) */
	    0x40, 0x47, 0x00, 0x03, /* move {literal,0} {x,0} */
	    0x2b, 0x15, 0x03, 0x12, /* is_eq_exact {f,1} {x,0} 'Elixir.Syn.ModuleX' */
	};
	put_bytes(&body, code, sizeof(code));
	for (unsigned i = 0; i < o->lit_refs; i++)
		put_bytes(&body, "\x40\x47\x00\x03", 4); /* move {literal,0} {x,0} */
	if (o->extra_op)
		put_u8(&body, o->extra_op);
	static const unsigned char tail[] = {
	    0x4e, 0x10, 0x10, /* call_ext_only 1 import#1 (:lists.reverse/1) */
	    0x13,             /* return */
	    0x03,             /* int_code_end */
	};
	put_bytes(&body, tail, sizeof(tail));
	put_chunk(&chunks, "Code", &body);

	/* ImpT, ExpT */
	gi_buf_reset(&body);
	put_u32(&body, 2);
	put_u32(&body, 3), put_u32(&body, 4), put_u32(&body, 0);
	put_u32(&body, 5), put_u32(&body, 6), put_u32(&body, 1);
	put_chunk(&chunks, "ImpT", &body);
	gi_buf_reset(&body);
	put_u32(&body, 1);
	put_u32(&body, 2), put_u32(&body, 0), put_u32(&body, 2);
	put_chunk(&chunks, "ExpT", &body);

	/* LitT: {fun 'Elixir.Cap':f/2, #{'__struct__' => 'Elixir.St', a => 1}} */
	put_u8(&term, 131);
	if (o->lit_funs) {
		put_u8(&term, 108), put_u32(&term, o->lit_funs);
		for (unsigned i = 0; i < o->lit_funs; i++) {
			put_u8(&term, 113), put_atom(&term, "Elixir.Cap"), put_atom(&term, "f");
			put_u8(&term, 97), put_u8(&term, 2);
		}
		put_u8(&term, 106);
	} else if (o->deep_literal) {
		for (int i = 0; i < 5000; i++)
			put_u8(&term, 104), put_u8(&term, 1);
		put_u8(&term, 106);
	} else {
		put_u8(&term, 104), put_u8(&term, 2);
		put_u8(&term, 113), put_atom(&term, "Elixir.Cap"), put_atom(&term, "f");
		put_u8(&term, 97), put_u8(&term, 2);
		put_u8(&term, 116), put_u32(&term, 2);
		put_atom(&term, "__struct__"), put_atom(&term, "Elixir.St");
		put_atom(&term, "a"), put_u8(&term, 97), put_u8(&term, 1);
	}
	put_u32(&table, 1);
	put_u32(&table, (uint32_t)term.len);
	put_bytes(&table, term.data, term.len);
	uLongf zlen = compressBound(table.len);
	unsigned char *zdata = gi_malloc(zlen);
	TH_ASSERT(compress(zdata, &zlen, (const Bytef *)table.data, table.len) == Z_OK);
	gi_buf_reset(&body);
	put_u32(&body, o->lit_declare ? o->lit_declare : (uint32_t)table.len);
	put_bytes(&body, zdata, zlen);
	gi_free(zdata);
	put_chunk(&chunks, "LitT", &body);

	/* Attr: [{behaviour, ['Elixir.Beh']}] */
	gi_buf_reset(&body);
	put_u8(&body, 131);
	put_u8(&body, 108), put_u32(&body, 1);
	put_u8(&body, 104), put_u8(&body, 2), put_atom(&body, "behaviour");
	put_u8(&body, 108), put_u32(&body, 1), put_atom(&body, "Elixir.Beh"), put_u8(&body, 106);
	put_u8(&body, 106);
	put_chunk(&chunks, "Attr", &body);

	if (o->docs)
		put_chunk(&chunks, "Docs", o->docs);
	if (o->dbgi)
		put_chunk(&chunks, "Dbgi", o->dbgi);
	put_bytes(file, "FOR1", 4);
	put_u32(file, (uint32_t)(chunks.len + 4));
	put_bytes(file, "BEAM", 4);
	put_bytes(file, chunks.data, chunks.len);
	gi_buf_destroy(&body);
	gi_buf_destroy(&chunks);
	gi_buf_destroy(&term);
	gi_buf_destroy(&table);
	gi_buf_destroy(&z);
}

static bool has_ref(const struct facts_module *m, enum facts_ref_kind kind, const char *target)
{
	for (size_t i = 0; i < m->refs.len; i++) {
		const struct facts_ref *r = gi_vec_get(&m->refs, i);
		if (r->kind == kind && strcmp(r->target, target) == 0)
			return true;
	}
	return false;
}

static bool has_call(const struct facts_function *fn, enum facts_call_kind kind, const char *mod,
                     const char *fun, int arity)
{
	for (size_t i = 0; i < fn->calls.len; i++) {
		const struct facts_call *c = gi_vec_get(&fn->calls, i);
		if (c->kind == kind && strcmp(c->module, mod) == 0 &&
		    strcmp(c->function, fun) == 0 && c->arity == arity)
			return true;
	}
	return false;
}

static void syn_check(bool long_atoms)
{
	struct gi_buf file;
	struct facts_file *f = NULL;
	char err[512];
	struct syn_options o = {.long_atoms = long_atoms};
	gi_buf_init(&file, 0);
	syn_build(&file, &o);
	int rc =
	    beam_read("syn.beam", (const unsigned char *)file.data, file.len, &f, err, sizeof(err));
	TH_ASSERT_MSG(rc == 0, "beam_read: %d %s", rc, err);
	TH_ASSERT_INT_EQ(f->origin, FACTS_FROM_BEAM);
	TH_ASSERT_INT_EQ(f->errors.len, 0);
	TH_ASSERT_INT_EQ(f->modules.len, 1);
	struct facts_module *m = gi_vec_get(&f->modules, 0);
	TH_ASSERT_STR_EQ(m->name, "Syn.ModuleX");
	TH_ASSERT_INT_EQ(m->origin, FACTS_FROM_BEAM);
	TH_ASSERT_INT_EQ(m->functions.len, 1);
	struct facts_function *fn = gi_vec_get(&m->functions, 0);
	TH_ASSERT_STR_EQ(fn->name, "run");
	TH_ASSERT_INT_EQ(fn->arity, 0);
	TH_ASSERT(fn->is_public);
	TH_ASSERT_INT_EQ(fn->kind, FACTS_DEF);
	/* is_eq_exact fails to the func_info label: a clause mismatch, not a branch */
	TH_ASSERT_INT_EQ(fn->cyclomatic, 1);
	TH_ASSERT(has_call(fn, FACTS_CALL_REMOTE, "Other", "go", 0));
	TH_ASSERT(has_call(fn, FACTS_CALL_REMOTE, ":lists", "reverse", 1));
	TH_ASSERT(has_call(fn, FACTS_CALL_CAPTURE, "Cap", "f", 2));
	TH_ASSERT(has_ref(m, FACTS_REF_CALL, "Other"));
	TH_ASSERT(has_ref(m, FACTS_REF_CALL, ":lists"));
	TH_ASSERT(has_ref(m, FACTS_REF_CAPTURE, "Cap"));
	TH_ASSERT(has_ref(m, FACTS_REF_STRUCT, "St"));
	TH_ASSERT(has_ref(m, FACTS_REF_BEHAVIOUR, "Beh"));
	facts_file_free(f);

	char name[64];
	TH_ASSERT_OK(
	    beam_module_name((const unsigned char *)file.data, file.len, name, sizeof(name)));
	TH_ASSERT_STR_EQ(name, "Syn.ModuleX");
	gi_buf_destroy(&file);
}

static void reads_built_module(void)
{
	syn_check(false);
}

static void reads_otp28_atom_table(void)
{
	syn_check(true);
}

static void deep_literal_is_skipped_not_fatal(void)
{
	struct gi_buf file;
	struct facts_file *f = NULL;
	char err[512];
	struct syn_options o = {.deep_literal = true};
	gi_buf_init(&file, 0);
	syn_build(&file, &o);
	TH_ASSERT_OK(beam_read("deep.beam", (const unsigned char *)file.data, file.len, &f, err,
	                       sizeof(err)));
	TH_ASSERT_INT_EQ(f->errors.len, 1);
	const struct facts_error *e = gi_vec_get(&f->errors, 0);
	TH_ASSERT_STR_CONTAINS(e->message, "LitT");
	TH_ASSERT_STR_CONTAINS(e->message, "nested too deeply");
	struct facts_module *m = gi_vec_get(&f->modules, 0);
	TH_ASSERT(has_ref(m, FACTS_REF_CALL, "Other"));
	facts_file_free(f);
	gi_buf_destroy(&file);
}

static void literal_bomb_is_capped(void)
{
	struct gi_buf file;
	struct facts_file *f = NULL;
	char err[512];
	struct syn_options o = {.lit_declare = 0x7fffffff};
	gi_buf_init(&file, 0);
	syn_build(&file, &o);
	TH_ASSERT_OK(beam_read("bomb.beam", (const unsigned char *)file.data, file.len, &f, err,
	                       sizeof(err)));
	TH_ASSERT_INT_EQ(f->errors.len, 1);
	const struct facts_error *e = gi_vec_get(&f->errors, 0);
	TH_ASSERT_STR_CONTAINS(e->message, "exceed the cap");
	facts_file_free(f);

	/* declared smaller than the data: zlib must stop, not overflow */
	gi_buf_reset(&file);
	o.lit_declare = 3;
	syn_build(&file, &o);
	TH_ASSERT_OK(beam_read("short.beam", (const unsigned char *)file.data, file.len, &f, err,
	                       sizeof(err)));
	TH_ASSERT_INT_EQ(f->errors.len, 1);
	facts_file_free(f);
	gi_buf_destroy(&file);
}

static void literal_amplification_is_capped(void)
{
	struct gi_buf file;
	struct facts_file *f = NULL;
	char err[512];
	/* 2000 captures referenced 600 times: 1.2 million calls from 60 KB */
	struct syn_options o = {.lit_funs = 2000, .lit_refs = 600};
	gi_buf_init(&file, 0);
	syn_build(&file, &o);
	TH_ASSERT_INT_EQ(
	    beam_read("amp.beam", (const unsigned char *)file.data, file.len, &f, err, sizeof(err)),
	    GI_ETOOBIG);
	TH_ASSERT(f == NULL);
	TH_ASSERT_STR_CONTAINS(err, "amp.beam: Code: more than");
	gi_buf_reset(&file);
	o.lit_refs = 10;
	syn_build(&file, &o);
	TH_ASSERT_OK(beam_read("amp.beam", (const unsigned char *)file.data, file.len, &f, err,
	                       sizeof(err)));
	facts_file_free(f);
	gi_buf_destroy(&file);
}

/* term_to_binary(Term, [compressed]) of the term in `raw` (which starts with 131). */
static void compress_term(struct gi_buf *out, const struct gi_buf *raw)
{
	uLongf zlen = compressBound(raw->len);
	unsigned char *z = gi_malloc(zlen);
	TH_ASSERT(compress(z, &zlen, (const Bytef *)raw->data + 1, raw->len - 1) == Z_OK);
	put_u8(out, 131), put_u8(out, 80), put_u32(out, (uint32_t)(raw->len - 1));
	put_bytes(out, z, zlen);
	gi_free(z);
}

static void docs_and_specs_are_read(void)
{
	struct gi_buf docs, dbgi, raw, file;
	gi_buf_init(&docs, 0);
	gi_buf_init(&dbgi, 0);
	gi_buf_init(&raw, 0);
	gi_buf_init(&file, 0);
	/* {docs_v1, 1, elixir, <<"text/markdown">>, #{<<"en">> => <<"M">>}, #{},
	 *  [{{function, run, 0}, 1, [], hidden, #{}}]} */
	put_u8(&raw, 131), put_u8(&raw, 104), put_u8(&raw, 7), put_atom(&raw, "docs_v1");
	put_u8(&raw, 97), put_u8(&raw, 1), put_atom(&raw, "elixir");
	put_u8(&raw, 109), put_u32(&raw, 13), put_bytes(&raw, "text/markdown", 13);
	put_u8(&raw, 116), put_u32(&raw, 1);
	put_u8(&raw, 109), put_u32(&raw, 2), put_bytes(&raw, "en", 2);
	put_u8(&raw, 109), put_u32(&raw, 1), put_bytes(&raw, "M", 1);
	put_u8(&raw, 116), put_u32(&raw, 0);
	put_u8(&raw, 108), put_u32(&raw, 1);
	put_u8(&raw, 104), put_u8(&raw, 5);
	put_u8(&raw, 104), put_u8(&raw, 3), put_atom(&raw, "function"), put_atom(&raw, "run");
	put_u8(&raw, 97), put_u8(&raw, 0);
	put_u8(&raw, 97), put_u8(&raw, 1), put_u8(&raw, 106), put_atom(&raw, "hidden");
	put_u8(&raw, 116), put_u32(&raw, 0);
	put_u8(&raw, 106);
	compress_term(&docs, &raw);
	/* {debug_info_v1, erl_abstract_code, {[{attribute, 1, spec, {{run, 0}, []}}], []}},
	 * uncompressed */
	put_u8(&dbgi, 131), put_u8(&dbgi, 104), put_u8(&dbgi, 3), put_atom(&dbgi, "debug_info_v1");
	put_atom(&dbgi, "erl_abstract_code");
	put_u8(&dbgi, 104), put_u8(&dbgi, 2), put_u8(&dbgi, 108), put_u32(&dbgi, 1);
	put_u8(&dbgi, 104), put_u8(&dbgi, 4), put_atom(&dbgi, "attribute");
	put_u8(&dbgi, 97), put_u8(&dbgi, 1), put_atom(&dbgi, "spec");
	put_u8(&dbgi, 104), put_u8(&dbgi, 2), put_u8(&dbgi, 104), put_u8(&dbgi, 2);
	put_atom(&dbgi, "run"), put_u8(&dbgi, 97), put_u8(&dbgi, 0), put_u8(&dbgi, 106);
	put_u8(&dbgi, 106), put_u8(&dbgi, 106);

	struct syn_options o = {.docs = &docs, .dbgi = &dbgi};
	struct facts_file *f = NULL;
	char err[512];
	syn_build(&file, &o);
	TH_ASSERT_OK(beam_read("doc.beam", (const unsigned char *)file.data, file.len, &f, err,
	                       sizeof(err)));
	TH_ASSERT_INT_EQ(f->errors.len, 0);
	struct facts_module *m = gi_vec_get(&f->modules, 0);
	struct facts_function *fn = gi_vec_get(&m->functions, 0);
	TH_ASSERT(m->has_moduledoc && !m->moduledoc_false);
	TH_ASSERT(fn->doc_false);
	TH_ASSERT(fn->has_spec);
	facts_file_free(f);

	/* debug information nested past the cap, and docs that are not docs_v1:
	 * both noted, the module still read */
	gi_buf_reset(&dbgi);
	put_u8(&dbgi, 131);
	for (int i = 0; i < BEAM_MAX_DEBUG_DEPTH + 10; i++)
		put_u8(&dbgi, 104), put_u8(&dbgi, 1);
	put_u8(&dbgi, 106);
	gi_buf_reset(&docs);
	put_u8(&docs, 131), put_atom(&docs, "nope");
	gi_buf_reset(&file);
	syn_build(&file, &o);
	TH_ASSERT_OK(beam_read("doc.beam", (const unsigned char *)file.data, file.len, &f, err,
	                       sizeof(err)));
	TH_ASSERT_INT_EQ(f->errors.len, 2);
	TH_ASSERT_STR_CONTAINS(((struct facts_error *)gi_vec_get(&f->errors, 0))->message,
	                       "Docs: not an EEP 48");
	TH_ASSERT_STR_CONTAINS(((struct facts_error *)gi_vec_get(&f->errors, 1))->message,
	                       "Dbgi: term nested too deeply");
	facts_file_free(f);
	gi_buf_destroy(&docs);
	gi_buf_destroy(&dbgi);
	gi_buf_destroy(&raw);
	gi_buf_destroy(&file);
}

static void unknown_opcode_names_chunk(void)
{
	struct gi_buf file;
	struct facts_file *f = NULL;
	char err[512];
	struct syn_options o = {.extra_op = 250};
	gi_buf_init(&file, 0);
	syn_build(&file, &o);
	int rc =
	    beam_read("new.beam", (const unsigned char *)file.data, file.len, &f, err, sizeof(err));
	TH_ASSERT_INT_EQ(rc, GI_EUNSUPPORTED);
	TH_ASSERT(f == NULL);
	TH_ASSERT_STR_CONTAINS(err, "new.beam: Code: unknown opcode 250");
	gi_buf_destroy(&file);
}

static void header_errors_are_clear(void)
{
	struct facts_file *f = NULL;
	char err[512];
	TH_ASSERT_INT_EQ(beam_read("empty.beam", NULL, 0, &f, err, sizeof(err)), GI_ECORRUPT);
	TH_ASSERT_STR_CONTAINS(err, "empty.beam: header: not a BEAM file");
	static const unsigned char longer[] = "FOR1\x00\x00\x10\x00"
	                                      "BEAM";
	TH_ASSERT_INT_EQ(beam_read("cut.beam", longer, 12, &f, err, sizeof(err)), GI_ECORRUPT);
	TH_ASSERT_STR_CONTAINS(err, "cut.beam: header: truncated");
	static const unsigned char chunk[] = "FOR1\x00\x00\x00\x10"
	                                     "BEAM"
	                                     "AtU8\xff\xff\xff\xf0"
	                                     "abcd";
	TH_ASSERT_INT_EQ(beam_read("chunk.beam", chunk, 24, &f, err, sizeof(err)), GI_ECORRUPT);
	TH_ASSERT_STR_CONTAINS(err, "chunk AtU8 announces");
	static const unsigned char noatoms[] = "FOR1\x00\x00\x00\x04"
	                                       "BEAM";
	TH_ASSERT_INT_EQ(beam_read("none.beam", noatoms, 12, &f, err, sizeof(err)), GI_ECORRUPT);
	TH_ASSERT_STR_CONTAINS(err, "none.beam: AtU8: no atom table");
	/* a huge atom count */
	static const unsigned char count[] = "FOR1\x00\x00\x00\x14"
	                                     "BEAM"
	                                     "AtU8\x00\x00\x00\x08"
	                                     "\x7f\xff\xff\xff\x01x\x00\x00";
	TH_ASSERT_INT_EQ(beam_read("count.beam", count, 28, &f, err, sizeof(err)), GI_ECORRUPT);
	TH_ASSERT_STR_CONTAINS(err, "count.beam: AtU8: atom count");
	/* a cap on size */
	TH_ASSERT_INT_EQ(
	    beam_read("big.beam", count, (size_t)BEAM_MAX_FILE_SIZE + 1, &f, err, sizeof(err)),
	    GI_ETOOBIG);
	TH_ASSERT(f == NULL);
}

static char *seed_read(const char *name, size_t *len)
{
	char path[4096], *data = NULL;
	snprintf(path, sizeof(path), "%s/fuzz/corpus/beam/%s", th_srcdir(), name);
	TH_ASSERT_OK(gi_fs_read_file(path, BEAM_MAX_FILE_SIZE, &data, len));
	return data;
}

static void every_truncation_fails_cleanly(void)
{
	static const char *const seeds[] = {"dets_sup", "impl_full", "math_gz"};
	for (size_t s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++) {
		size_t len;
		char *data = seed_read(seeds[s], &len);
		struct facts_file *f = NULL;
		char err[512];
		TH_ASSERT_OK(beam_read(seeds[s], (unsigned char *)data, len, &f, err, sizeof(err)));
		facts_file_free(f);
		for (size_t cut = 0; cut < len; cut++) {
			/* malloc'ed copies so that ASan sees any read past the end */
			unsigned char *copy = gi_malloc(cut + 1);
			memcpy(copy, data, cut);
			int rc = beam_read(seeds[s], copy, cut, &f, err, sizeof(err));
			TH_ASSERT_MSG(rc < 0, "%s cut at %zu was accepted", seeds[s], cut);
			TH_ASSERT_MSG(strstr(err, seeds[s]) == err, "message without the file: %s",
			              err);
			gi_free(copy);
		}
		gi_free(data);
	}
}

static void every_byte_corruption_is_survived(void)
{
	size_t len;
	char *data = seed_read("impl_full", &len);
	unsigned char *copy = gi_malloc(len);
	int accepted = 0, refused = 0;
	for (size_t at = 0; at < len; at++) {
		static const unsigned char values[] = {0x00, 0xff, 0x7f, 0x80};
		for (size_t v = 0; v < sizeof(values); v++) {
			struct facts_file *f = NULL;
			char err[512];
			memcpy(copy, data, len);
			copy[at] = values[v];
			if (beam_read("x.beam", copy, len, &f, err, sizeof(err)) == 0) {
				accepted++;
				facts_file_free(f);
			} else {
				TH_ASSERT(f == NULL);
				TH_ASSERT(err[0] != '\0');
				refused++;
			}
		}
	}
	TH_ASSERT(accepted > 0 && refused > 0);
	gi_free(copy);
	gi_free(data);
}

static void gzip_and_plain_agree(void)
{
	size_t len_gz;
	char *gz = seed_read("math_gz", &len_gz);
	struct facts_file *f = NULL;
	char err[512];
	TH_ASSERT_OK(beam_read("math_gz", (unsigned char *)gz, len_gz, &f, err, sizeof(err)));
	struct facts_module *m = gi_vec_get(&f->modules, 0);
	TH_ASSERT_STR_EQ(m->name, ":math");
	TH_ASSERT_INT_GE(m->functions.len, 20);
	facts_file_free(f);
	/* a gzip stream cut short */
	TH_ASSERT(beam_read("gz", (unsigned char *)gz, len_gz / 2, &f, err, sizeof(err)) < 0);
	TH_ASSERT_STR_CONTAINS(err, "gz: gzip:");
	gi_free(gz);
}

static void opcode_table_is_complete(void)
{
	TH_ASSERT(beam_op_lookup(0) == NULL);
	TH_ASSERT(beam_op_lookup(BEAM_OP_MAX + 1) == NULL);
	for (unsigned i = 1; i <= BEAM_OP_MAX; i++) {
		const struct beam_op *op = beam_op_lookup(i);
		TH_ASSERT_MSG(op && op->name && op->arity >= 0 && op->arity <= 8, "opcode %u", i);
	}
	TH_ASSERT_STR_EQ(beam_op_lookup(171)->name, "make_fun3");
	TH_ASSERT_INT_EQ(beam_op_lookup(182)->arity, 3);
	TH_ASSERT_INT_EQ(beam_op_lookup(184)->arity, 4);
	TH_ASSERT_STR_EQ(beam_op_lookup(185)->name, "bif3");
}

static void touch(const char *rel)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", th_tmpdir(), rel);
	char *slash = strrchr(path, '/');
	*slash = '\0';
	TH_ASSERT_OK(gi_fs_mkdir_p(path));
	*slash = '/';
	TH_ASSERT_OK(gi_fs_write_file(path, "x", 1));
}

static void dirs_scan_finds_one_file_per_module(void)
{
	touch("rel/lib/app-1.9/ebin/foo.beam");
	touch("rel/lib/app-1.10/ebin/foo.beam");
	touch("rel/lib/app-1.10/ebin/Elixir.Bar.Baz.beam");
	touch("rel/lib/app-1.10/ebin/app.app");
	touch("rel/lib/app-1.10/ebin/.beam");
	char root[4096], missing[4096], err[512];
	snprintf(root, sizeof(root), "%s/rel/lib", th_tmpdir());
	snprintf(missing, sizeof(missing), "%s/nope", th_tmpdir());
	const char *dirs[] = {root, NULL};
	struct gi_vec entries;
	TH_ASSERT_OK(beam_dirs_scan(dirs, &entries, err, sizeof(err)));
	TH_ASSERT_INT_EQ(entries.len, 2);
	for (size_t i = 0; i < entries.len; i++) {
		struct beam_entry *e = gi_vec_get(&entries, i);
		if (strcmp(e->module, ":foo") == 0)
			TH_ASSERT_STR_CONTAINS(e->path, "/app-1.10/ebin/foo.beam");
		else
			TH_ASSERT_STR_EQ(e->module, "Bar.Baz");
	}
	beam_entries_free(&entries);
	const char *bad[] = {root, missing, NULL};
	TH_ASSERT_INT_EQ(beam_dirs_scan(bad, &entries, err, sizeof(err)), GI_ENOENT);
	TH_ASSERT_STR_CONTAINS(err, "nope: not a directory");
	TH_ASSERT_INT_EQ(entries.len, 0);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(reads_built_module),
	    TH_TEST(reads_otp28_atom_table),
	    TH_TEST(deep_literal_is_skipped_not_fatal),
	    TH_TEST(literal_bomb_is_capped),
	    TH_TEST(literal_amplification_is_capped),
	    TH_TEST(docs_and_specs_are_read),
	    TH_TEST(unknown_opcode_names_chunk),
	    TH_TEST(header_errors_are_clear),
	    TH_TEST(every_truncation_fails_cleanly),
	    TH_TEST(every_byte_corruption_is_survived),
	    TH_TEST(gzip_and_plain_agree),
	    TH_TEST(opcode_table_is_complete),
	    TH_TEST(dirs_scan_finds_one_file_per_module),
	    TH_END,
	};
	return th_main(argc, argv, "unit_beam", tests);
}
