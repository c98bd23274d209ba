/*
 * beam_docs.c - the text of a .beam file's EEP-48 documentation (the Docs
 * chunk), for the ranked search (graph/search.c): beam.c reads only whether
 * a doc exists, this reads what it says.
 *
 * Input is outside data: every length is checked against what is left, the
 * inflated term is capped (BEAM_DOCS_MAX_INFLATED), nesting is capped
 * (BEAM_DOCS_MAX_DEPTH), and any term shape other than docs_v1 is refused
 * with GI_ECORRUPT. Thread-safe (no shared state).
 */
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include "base/alloc.h"
#include "base/error.h"
#include "base/str.h"
#include "source/beam.h"

#define BEAM_DOCS_MAX_INFLATED (32u << 20)
#define BEAM_DOCS_MAX_DEPTH    64

struct reader {
	const unsigned char *p, *end;
};

static bool get_u8(struct reader *r, unsigned *v)
{
	if (r->p >= r->end)
		return false;
	*v = *r->p++;
	return true;
}

static bool get_u16(struct reader *r, uint32_t *v)
{
	if (r->end - r->p < 2)
		return false;
	*v = (uint32_t)r->p[0] << 8 | r->p[1];
	r->p += 2;
	return true;
}

static bool get_u32(struct reader *r, uint32_t *v)
{
	if (r->end - r->p < 4)
		return false;
	*v = (uint32_t)r->p[0] << 24 | (uint32_t)r->p[1] << 16 | (uint32_t)r->p[2] << 8 | r->p[3];
	r->p += 4;
	return true;
}

static bool skip_bytes(struct reader *r, uint64_t n)
{
	if ((uint64_t)(r->end - r->p) < n)
		return false;
	r->p += n;
	return true;
}

/* A term's value, for the few shapes the docs need. */
struct term {
	unsigned tag;
	const unsigned char *text; /* atom or binary bytes */
	uint32_t len;              /* text length, or tuple/list/map arity */
	int64_t integer;
};

static bool term_skip(struct reader *r, int depth);

/* Reads a term's header (and the bytes of atoms, binaries and strings);
 * containers are left for the caller to walk. */
static bool term_head(struct reader *r, struct term *t)
{
	uint32_t n = 0;
	unsigned b = 0;
	memset(t, 0, sizeof(*t));
	if (!get_u8(r, &t->tag))
		return false;
	switch (t->tag) {
	case 97: /* SMALL_INTEGER */
		if (!get_u8(r, &b))
			return false;
		t->integer = b;
		return true;
	case 98: /* INTEGER */
		if (!get_u32(r, &n))
			return false;
		t->integer = (int32_t)n;
		return true;
	case 70: /* NEW_FLOAT */
		return skip_bytes(r, 8);
	case 100: /* ATOM */
	case 118: /* ATOM_UTF8 */
	case 107: /* STRING */
		if (!get_u16(r, &n))
			return false;
		break;
	case 115: /* SMALL_ATOM */
	case 119: /* SMALL_ATOM_UTF8 */
		if (!get_u8(r, &b))
			return false;
		n = b;
		break;
	case 109: /* BINARY */
		if (!get_u32(r, &n))
			return false;
		break;
	case 104: /* SMALL_TUPLE */
		if (!get_u8(r, &b))
			return false;
		t->len = b;
		return true;
	case 105: /* LARGE_TUPLE */
	case 108: /* LIST (then a tail) */
	case 116: /* MAP */
		return get_u32(r, &t->len);
	case 106: /* NIL */
		return true;
	case 110: /* SMALL_BIG */
		if (!get_u8(r, &b))
			return false;
		return skip_bytes(r, (uint64_t)b + 1);
	case 111: /* LARGE_BIG */
		if (!get_u32(r, &n))
			return false;
		return skip_bytes(r, (uint64_t)n + 1);
	case 77: /* BIT_BINARY */
		if (!get_u32(r, &n))
			return false;
		return skip_bytes(r, (uint64_t)n + 1);
	default:
		return false; /* pids, refs, funs: not in docs */
	}
	if ((uint64_t)(r->end - r->p) < n)
		return false;
	t->text = r->p;
	t->len = n;
	r->p += n;
	return true;
}

/* Skips the elements of container `t` (whose head was read). */
static bool children_skip(struct reader *r, const struct term *t, int depth)
{
	uint64_t count = t->len;
	if (t->tag == 116)
		count *= 2;
	else if (t->tag == 108)
		count += 1; /* the tail */
	else if (t->tag != 104 && t->tag != 105)
		return true;
	if (count > (uint64_t)(r->end - r->p))
		return false; /* every element takes at least one byte */
	for (uint64_t i = 0; i < count; i++)
		if (!term_skip(r, depth + 1))
			return false;
	return true;
}

static bool term_skip(struct reader *r, int depth)
{
	struct term t;
	if (depth > BEAM_DOCS_MAX_DEPTH || !term_head(r, &t))
		return false;
	return children_skip(r, &t, depth);
}

static bool term_is_atom(const struct term *t, const char *name)
{
	size_t n = strlen(name);
	return (t->tag == 100 || t->tag == 118 || t->tag == 115 || t->tag == 119) && t->len == n &&
	       memcmp(t->text, name, n) == 0;
}

/* A doc: #{<<"en">> => Text} gives the English text (else the first
 * language's); none, hidden and other shapes give no text. */
static bool doc_text(struct reader *r, const unsigned char **text, uint32_t *len)
{
	struct term t, k, v;
	*text = NULL;
	*len = 0;
	if (!term_head(r, &t))
		return false;
	if (t.tag != 116)
		return children_skip(r, &t, 1);
	for (uint32_t i = 0; i < t.len; i++) {
		if (!term_head(r, &k) || !children_skip(r, &k, 1) || !term_head(r, &v))
			return false;
		if (v.tag == 109 && (!*text || GI_MEM_IS(k.text, k.len, "en"))) {
			*text = v.text;
			*len = v.len;
		} else if (!children_skip(r, &v, 1)) {
			return false;
		}
	}
	return true;
}

/* Walks the docs_v1 term at r. */
static int docs_walk(struct reader *r, beam_doc_fn fn, void *ctx)
{
	struct term t, v;
	const unsigned char *text;
	uint32_t len;
	unsigned version;
	if (!get_u8(r, &version) || version != 131 || !term_head(r, &t) || t.tag != 104 ||
	    t.len != 7 || !term_head(r, &v) || !term_is_atom(&v, "docs_v1"))
		return GI_ECORRUPT;
	for (int i = 0; i < 3; i++) /* anno, language, format */
		if (!term_skip(r, 1))
			return GI_ECORRUPT;
	if (!doc_text(r, &text, &len) || !term_skip(r, 1))
		return GI_ECORRUPT;
	if (text && fn(ctx, "module", NULL, 0, (const char *)text, len))
		return 0;
	if (!term_head(r, &t) || (t.tag != 108 && t.tag != 106))
		return GI_ECORRUPT;
	for (uint32_t i = 0; t.tag == 108 && i < t.len; i++) {
		struct term entry, key, kind, name, arity;
		if (!term_head(r, &entry) || entry.tag != 104 || entry.len != 5 ||
		    !term_head(r, &key) || key.tag != 104 || key.len != 3 || !term_head(r, &kind) ||
		    !term_head(r, &name) || !term_head(r, &arity) ||
		    (arity.tag != 97 && arity.tag != 98) || !term_skip(r, 2) || !term_skip(r, 2) ||
		    !doc_text(r, &text, &len) || !term_skip(r, 2))
			return GI_ECORRUPT;
		if (!text || !name.text || name.len >= 256 || kind.len >= 32 || !kind.text)
			continue;
		char kind_s[32], name_s[256];
		memcpy(kind_s, kind.text, kind.len);
		kind_s[kind.len] = '\0';
		memcpy(name_s, name.text, name.len);
		name_s[name.len] = '\0';
		if (fn(ctx, kind_s, name_s, (int)arity.integer, (const char *)text, len))
			return 0;
	}
	return 0;
}

/* The Docs chunk of the IFF container at data, or NULL. */
static const unsigned char *docs_chunk(const unsigned char *data, size_t size, uint32_t *len)
{
	struct reader r = {data, data + size};
	uint32_t form_len, chunk_len;
	if (size < 12 || !GI_MEM_IS(data, 4, "FOR1") || !GI_MEM_IS(data + 8, 4, "BEAM"))
		return NULL;
	r.p += 4;
	if (!get_u32(&r, &form_len))
		return NULL;
	r.p += 4;
	while (r.end - r.p >= 8) {
		const unsigned char *id = r.p;
		r.p += 4;
		if (!get_u32(&r, &chunk_len) || (uint64_t)(r.end - r.p) < chunk_len)
			return NULL;
		if (GI_MEM_IS(id, 4, "Docs")) {
			*len = chunk_len;
			return r.p;
		}
		uint64_t padded = ((uint64_t)chunk_len + 3) & ~(uint64_t)3;
		if ((uint64_t)(r.end - r.p) < padded)
			return NULL;
		r.p += padded;
	}
	return NULL;
}

int beam_docs_read(const unsigned char *data, size_t len, beam_doc_fn fn, void *ctx)
{
	uint32_t clen = 0;
	const unsigned char *chunk = docs_chunk(data, len, &clen);
	if (!chunk)
		return len >= 2 && data[0] == 0x1f && data[1] == 0x8b ? GI_EUNSUPPORTED
		                                                      : GI_ENOTFOUND;
	struct reader r = {chunk, chunk + clen};
	if (clen < 6 || chunk[0] != 131 || chunk[1] != 80)
		return docs_walk(&r, fn, ctx);
	/* compressed: 131, 80, u32 inflated size, zlib data (the term without its version) */
	uint32_t size = (uint32_t)chunk[2] << 24 | (uint32_t)chunk[3] << 16 |
	                (uint32_t)chunk[4] << 8 | chunk[5];
	if (size == 0 || size > BEAM_DOCS_MAX_INFLATED)
		return GI_ETOOBIG;
	unsigned char *buf = gi_malloc((size_t)size + 1);
	buf[0] = 131;
	uLongf out_len = size;
	int rc = GI_ECORRUPT;
	if (uncompress(buf + 1, &out_len, chunk + 6, (uLong)(clen - 6)) == Z_OK) {
		struct reader inflated = {buf, buf + 1 + out_len};
		rc = docs_walk(&inflated, fn, ctx);
	}
	gi_free(buf);
	return rc;
}
