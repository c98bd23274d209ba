/*
 * beam_ops.h - the generic BEAM opcode table (OTP's genop.tab) for the
 * object-code reader: the operand count of each opcode is what lets a reader
 * walk the Code chunk's instruction stream. Covers OTP 24 to 29.
 * Thread-safe (constant data).
 */
#ifndef GIULIA_SOURCE_BEAM_OPS_H
#define GIULIA_SOURCE_BEAM_OPS_H

#define BEAM_OP_MAX 185

struct beam_op {
	const char *name;
	int arity; /* number of operands */
};

/* The opcode's entry (static), or NULL for 0 and numbers past BEAM_OP_MAX. */
const struct beam_op *beam_op_lookup(unsigned opcode);

#endif
