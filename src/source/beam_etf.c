/*
 * beam_etf.c - the external term format in a .beam (see beam_int.h,
 * docs/BEAM.md): the walk of one term, at most BEAM_MAX_TERM_DEPTH deep
 * (BEAM_MAX_DEBUG_DEPTH in Dbgi), recording what the facts need (captures,
 * structs, name/arity lists, specs), and its uses: the literal table
 * (LitT), the attributes (Attr: behaviours, Elixir's __impl__) and the
 * compile information (CInf). Damage in these optional chunks is a note
 * in the facts' errors, never a failed read.
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
/* External term format (LitT literals, Attr, CInf)                         */

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

bool beam_etf_is_atom(const struct etf_value *v, const char *text)
{
	size_t n = strlen(text);
	return v->kind == ETF_ATOM && v->len == n && memcmp(v->text, text, n) == 0;
}

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
bool beam_etf_atom(struct etf_walk *w, struct rd *r, struct etf_value *out)
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
		ok = beam_etf_term(w, r, depth + 1, &k) && beam_etf_term(w, r, depth + 1, &v);
		if (!ok || !w->collect)
			continue;
		if (beam_etf_is_atom(&k, "__struct__") && v.kind == ETF_ATOM)
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

/* The rest of a 4-tuple while looking for specs: {attribute, Anno, spec,
 * {{Name, Arity} | {Module, Name, Arity}, Types}} marks Name/Arity. */
static bool etf_attribute(struct etf_walk *w, struct rd *r, int depth)
{
	struct etf_value first, anno, third, last;
	if (!beam_etf_term(w, r, depth + 1, &first) || !beam_etf_term(w, r, depth + 1, &anno) ||
	    !beam_etf_term(w, r, depth + 1, &third))
		return false;
	if (beam_etf_is_atom(&first, "attribute") && beam_etf_is_atom(&third, "spec")) {
		struct rd probe = *r;
		uint8_t tag, arity, key_arity;
		struct etf_value a, b, n;
		if (rd_u8(&probe, &tag) && tag == ETF_TAG_SMALL_TUPLE_EXT &&
		    rd_u8(&probe, &arity) && arity == 2 && rd_u8(&probe, &tag) &&
		    tag == ETF_TAG_SMALL_TUPLE_EXT && rd_u8(&probe, &key_arity) &&
		    (key_arity == 2 || key_arity == 3) && beam_etf_term(w, &probe, depth + 3, &a) &&
		    beam_etf_term(w, &probe, depth + 3, &b) &&
		    (key_arity == 2 || beam_etf_term(w, &probe, depth + 3, &n))) {
			if (key_arity == 2 && a.kind == ETF_ATOM && b.kind == ETF_INT)
				beam_spec_mark(w->c, &a, b.integer);
			else if (key_arity == 3 && b.kind == ETF_ATOM && n.kind == ETF_INT)
				beam_spec_mark(w->c, &b, n.integer);
		}
		w->error = NULL;
	}
	return beam_etf_term(w, r, depth + 1, &last);
}

/* Walks one term; `out` describes it when it is an atom or a small integer. */
bool beam_etf_term(struct etf_walk *w, struct rd *r, int depth, struct etf_value *out)
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
			if (!beam_etf_term(w, r, depth + 1, &e))
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
			if (!beam_etf_term(w, r, depth + 1, &e))
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
		if (!beam_etf_atom(w, r, &m) || !beam_etf_atom(w, r, &f) ||
		    !beam_etf_term(w, r, depth + 1, &a))
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
		if (!beam_etf_term(w, r, depth + 1, &node) || node.kind != ETF_ATOM)
			return etf_fail(w, "bad node in pid, port or reference");
		return rd_bytes(r, rest, NULL) || etf_fail(w, "truncated pid, port or reference");
	}
	case ETF_TAG_NEW_REFERENCE_EXT:
	case ETF_TAG_NEWER_REFERENCE_EXT: {
		struct etf_value node;
		if (!rd_u16(r, &n) || n > 5)
			return etf_fail(w, "bad reference length");
		if (!beam_etf_term(w, r, depth + 1, &node) || node.kind != ETF_ATOM)
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
		    arity != 2 || !beam_etf_atom(&w, &r, &name) || !rd_u8(&r, &tag) ||
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
void beam_callbacks_collect(struct beam_ctx *c, const struct raw_func *f)
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
void beam_literals_parse(struct beam_ctx *c, const struct chunk *ch)
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
		beam_ctx_note(c, "truncated size");
		return;
	}
	if (declared == 0) { /* stored uncompressed */
		table = r.p;
		table_len = rd_left(&r);
	} else {
		if (declared > BEAM_MAX_LITERALS_SIZE) {
			beam_ctx_note(c, "literals of %u bytes exceed the cap of %u", declared,
			              BEAM_MAX_LITERALS_SIZE);
			return;
		}
		uLongf out_len = declared;
		inflated = gi_malloc(declared);
		if (uncompress(inflated, &out_len, r.p, (uLong)rd_left(&r)) != Z_OK) {
			beam_ctx_note(c,
			              "zlib data is corrupt or larger than the declared %u bytes",
			              declared);
			gi_free(inflated);
			return;
		}
		table = inflated;
		table_len = out_len;
	}
	rd_init(&r, table, table_len);
	if (!rd_u32(&r, &count) || count > rd_left(&r) / 4) {
		beam_ctx_note(c, "literal count does not fit");
		goto done;
	}
	c->lits = gi_arena_calloc(&c->scratch, (size_t)count + 1, sizeof(*c->lits));
	c->lit_count = count;
	for (uint32_t i = 0; i < count; i++) {
		uint32_t size;
		const uint8_t *term;
		uint8_t version;
		if (!rd_u32(&r, &size) || !rd_bytes(&r, size, &term)) {
			beam_ctx_note(c, "literal %u runs past the table", i);
			c->lit_count = i;
			goto done;
		}
		struct rd tr;
		rd_init(&tr, term, size);
		struct etf_walk w = {.c = c, .collect = true};
		struct etf_value v;
		size_t before = c->finds.len;
		if (!rd_u8(&tr, &version) || version != ETF_TAG_VERSION ||
		    !beam_etf_term(&w, &tr, 0, &v)) {
			beam_ctx_note(c, "literal %u: %s", i,
			              w.error ? w.error : "bad version byte");
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

/* Reads an `[{behaviour, [M...]}, {'__impl__', [...]}, ...]` attribute list. */
void beam_attributes_parse(struct beam_ctx *c, const struct chunk *ch)
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
		beam_ctx_note(c, "bad version byte");
		return;
	}
	if (tag == ETF_TAG_NIL_EXT)
		return;
	if (tag != ETF_TAG_LIST_EXT || !rd_u32(&r, &n) || n > rd_left(&r)) {
		beam_ctx_note(c, "not a list of attributes");
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct etf_value name, v;
		uint8_t arity, vt;
		if (!rd_u8(&r, &tag) || tag != ETF_TAG_SMALL_TUPLE_EXT || !rd_u8(&r, &arity) ||
		    arity != 2 || !beam_etf_atom(&w, &r, &name)) {
			beam_ctx_note(c, "attribute %u is not a {Name, Value} pair", i);
			return;
		}
		bool behaviour =
		    beam_etf_is_atom(&name, "behaviour") || beam_etf_is_atom(&name, "behavior");
		bool impl = beam_etf_is_atom(&name, "__impl__");
		if (beam_etf_is_atom(&name, "__protocol__"))
			c->module->kind = FACTS_PROTOCOL;
		if ((behaviour || impl) && rd_left(&r) > 0 && *r.p == ETF_TAG_LIST_EXT) {
			uint32_t m;
			rd_u8(&r, &vt);
			if (!rd_u32(&r, &m) || m > rd_left(&r)) {
				beam_ctx_note(c, "attribute %u: bad list", i);
				return;
			}
			for (uint32_t j = 0; j < m; j++) {
				if (behaviour) {
					if (!beam_etf_atom(&w, &r, &v)) {
						beam_ctx_note(c, "behaviour is not an atom");
						return;
					}
					beam_ref_add(c, FACTS_REF_BEHAVIOUR, etf_atom_dup(c, &v),
					             0);
					continue;
				}
				struct etf_value k;
				if (!rd_u8(&r, &tag) || tag != ETF_TAG_SMALL_TUPLE_EXT ||
				    !rd_u8(&r, &arity) || arity != 2 ||
				    !beam_etf_atom(&w, &r, &k) || !beam_etf_term(&w, &r, 1, &v)) {
					beam_ctx_note(c, "__impl__ is not a keyword list");
					return;
				}
				if (v.kind != ETF_ATOM)
					continue;
				char display[512];
				if (gi_module_display_name(etf_atom_dup(c, &v), display,
				                           sizeof(display)) != 0)
					continue;
				c->module->kind = FACTS_IMPL;
				if (beam_etf_is_atom(&k, "protocol"))
					c->module->protocol =
					    gi_arena_strdup(&c->facts->arena, display);
				else if (beam_etf_is_atom(&k, "for"))
					c->module->impl_for =
					    gi_arena_strdup(&c->facts->arena, display);
			}
			if (!beam_etf_term(&w, &r, 1, &v)) { /* the tail */
				beam_ctx_note(c, "attribute %u: %s", i, w.error);
				return;
			}
		} else if (!beam_etf_term(&w, &r, 1, &v)) {
			beam_ctx_note(c, "attribute %u: %s", i, w.error);
			return;
		}
	}
}

/* Checks that the compile information is one well-formed term. */
void beam_compile_info_check(struct beam_ctx *c, const struct chunk *ch)
{
	struct rd r;
	uint8_t version;
	struct etf_walk w = {.c = c};
	struct etf_value v;
	c->chunk = "CInf";
	if (!ch->present)
		return;
	rd_init(&r, ch->data, ch->size);
	if (!rd_u8(&r, &version) || version != ETF_TAG_VERSION || !beam_etf_term(&w, &r, 0, &v))
		beam_ctx_note(c, "%s", w.error ? w.error : "bad version byte");
}
