/*
 * beam_code.c - the Code chunk of a .beam (see beam_int.h, docs/BEAM.md):
 * compact terms (the encoding of operands, Line items and OTP 28 atoms),
 * then each instruction decoded by the opcode table (beam_ops.h) into raw
 * functions and calls: imports, locals, lambdas, literals, applies and
 * structs, with their lines. Every operand is bounds-checked against the
 * chunk and every index against what it indexes; an unknown opcode stops
 * the read (its operand count is unknown).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "base/alloc.h"
#include "base/arena.h"
#include "base/error.h"
#include "base/hash.h"
#include "base/map.h"
#include "base/modname.h"
#include "base/str.h"
#include "base/vec.h"
#include "source/beam_int.h"
#include "source/beam_ops.h"

/* ------------------------------------------------------------------------ */
/* Compact terms (the encoding of Code operands, Line items, OTP 28 atoms)  */

/* Decodes the value part of a compact term whose first byte `b` is read.
 * Values wider than 64 bits set *big. `nest` bounds the length-of-length
 * recursion. */
bool beam_compact_value(struct rd *r, uint8_t b, bool is_signed, uint64_t *val, bool *big, int nest)
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
		if (!beam_compact_value(r, lb, false, &extra, &lbig, nest + 1) || lbig ||
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
bool beam_compact_u(struct rd *r, uint64_t max, uint64_t *val)
{
	uint8_t b;
	bool big;
	if (!rd_u8(r, &b) || (b & 7) != OP_U)
		return false;
	return beam_compact_value(r, b, false, val, &big, 0) && !big && *val <= max;
}

/* ------------------------------------------------------------------------ */
/* Code                                                                     */

static int operand_read(struct beam_ctx *c, struct rd *r, struct operand *o, bool in_list)
{
	uint8_t b;
	memset(o, 0, sizeof(*o));
	if (!rd_u8(r, &b))
		return beam_ctx_fail(c, GI_ECORRUPT, "truncated operand at offset %zu",
		                     rd_offset(r));
	o->tag = (enum operand_tag)(b & 7);
	if (o->tag != OP_Z) {
		if (!beam_compact_value(r, b, o->tag == OP_I, &o->val, &o->big, 0))
			return beam_ctx_fail(c, GI_ECORRUPT, "truncated operand at offset %zu",
			                     rd_offset(r));
		return 0;
	}
	if (b & 0x08)
		return beam_ctx_fail(c, GI_ECORRUPT, "bad extended operand at offset %zu",
		                     rd_offset(r));
	uint64_t n, v;
	switch (b >> 4) {
	case 0: /* float, 8 bytes */
		o->tag = OP_FLOAT;
		if (!rd_bytes(r, 8, NULL))
			goto truncated;
		return 0;
	case 1: /* list */
		if (in_list)
			return beam_ctx_fail(c, GI_ECORRUPT, "nested list operand at offset %zu",
			                     rd_offset(r));
		if (!beam_compact_u(r, rd_left(r), &n))
			goto truncated;
		if (n > BEAM_MAX_LIST)
			return beam_ctx_fail(c, GI_ETOOBIG,
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
		if (!beam_compact_u(r, UINT32_MAX, &o->val))
			goto truncated;
		return 0;
	case 3: /* allocation list: count, then (kind, amount) pairs */
		o->tag = OP_ALLOC;
		if (!beam_compact_u(r, rd_left(r), &n))
			goto truncated;
		for (uint64_t i = 0; i < 2 * n; i++)
			if (!beam_compact_u(r, UINT64_MAX, &v))
				goto truncated;
		return 0;
	case 4: /* literal */
		o->tag = OP_LITERAL;
		if (!beam_compact_u(r, UINT32_MAX, &o->val))
			goto truncated;
		return 0;
	case 5: { /* typed register (OTP 25+): the register, then a type index */
		int rc = operand_read(c, r, o, true);
		if (rc < 0)
			return rc;
		if (o->tag != OP_X && o->tag != OP_Y)
			return beam_ctx_fail(
			    c, GI_ECORRUPT, "typed operand is not a register at %zu", rd_offset(r));
		if (!beam_compact_u(r, UINT32_MAX, &v))
			goto truncated;
		return 0;
	}
	default:
		return beam_ctx_fail(c, GI_ECORRUPT, "unknown extended operand %d at offset %zu",
		                     b >> 4, rd_offset(r));
	}
truncated:
	return beam_ctx_fail(c, GI_ECORRUPT, "truncated operand at offset %zu", rd_offset(r));
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
	const char *a = o->tag == OP_A ? beam_atom_at(c, o->val) : NULL;
	return a && strcmp(a, text) == 0;
}

static void struct_ref_raw(struct beam_ctx *c, const struct operand *o, uint32_t line)
{
	const char *a = o->tag == OP_A ? beam_atom_at(c, o->val) : NULL;
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
			return beam_ctx_fail(c, GI_ECORRUPT, "label %llu out of range (%u labels)",
			                     (unsigned long long)ops[0].val, c->label_count);
		s->last_label = (uint32_t)ops[0].val;
		c->label_func[s->last_label] = (int32_t)c->funcs.len - 1;
		s->struct_reg.tag = OP_U;
		return 0;
	case BEAM_OP_FUNC_INFO: { /* Module Function Arity */
		if (ops[1].tag != OP_A || !beam_atom_at(c, ops[1].val) || ops[2].tag != OP_U ||
		    ops[2].val > 255)
			return beam_ctx_fail(c, GI_ECORRUPT, "malformed func_info");
		if (c->funcs.len >= BEAM_MAX_FUNCTIONS)
			return beam_ctx_fail(c, GI_ETOOBIG, "more than %d functions",
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

int beam_code_parse(struct beam_ctx *c, const struct chunk *ch)
{
	struct rd r;
	uint32_t info_size, set, max_op, labels, functions;
	struct operand ops[8];
	struct code_state s;
	c->chunk = "Code";
	if (!ch->present)
		return beam_ctx_fail(c, GI_ECORRUPT, "no Code chunk");
	rd_init(&r, ch->data, ch->size);
	if (!rd_u32(&r, &info_size) || info_size < 16 || info_size > rd_left(&r))
		return beam_ctx_fail(c, GI_ECORRUPT, "truncated header");
	rd_u32(&r, &set);
	rd_u32(&r, &max_op);
	rd_u32(&r, &labels);
	rd_u32(&r, &functions);
	(void)max_op;
	if (set != 0)
		return beam_ctx_fail(c, GI_EUNSUPPORTED, "instruction set %u is not supported",
		                     set);
	r.p = ch->data + 4 + info_size;
	if (labels > ch->size)
		return beam_ctx_fail(c, GI_ECORRUPT, "%u labels cannot fit in %u bytes", labels,
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
			return beam_ctx_fail(
			    c, GI_EUNSUPPORTED,
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
			return beam_ctx_fail(c, GI_ETOOBIG, "more than %d call sites",
			                     BEAM_MAX_CALLS);
		if (c->lit_count) {
			for (int i = 0; i < info->arity; i++)
				literal_note(c, &ops[i], s.line);
			for (size_t i = 0; i < c->elems.len; i++)
				literal_note(c, gi_vec_get(&c->elems, i), s.line);
		}
	}
	return 0;
}
