/*
 * beam.c - BEAM object code to facts (see beam.h and docs/BEAM.md): the
 * container, its chunk table and tables, and the order of the steps; the
 * steps of the other files are named in beam_int.h.
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
#include "source/beam_int.h"

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
		return beam_ctx_fail(c, GI_ECORRUPT, "not a BEAM file (no FOR1 header)");
	r.p += 4;
	rd_u32(&r, &form_size);
	rd_bytes(&r, 4, &magic);
	if (!GI_MEM_IS(magic, 4, "BEAM"))
		return beam_ctx_fail(c, GI_ECORRUPT, "not a BEAM file (form type is not BEAM)");
	if (form_size < 4 || (size_t)form_size > len - 8)
		return beam_ctx_fail(c, GI_ECORRUPT,
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
			return beam_ctx_fail(c, GI_ECORRUPT, "truncated chunk header at offset %zu",
			                     rd_offset(&r));
		}
		memcpy(name, id, 4);
		name[4] = '\0';
		for (int i = 0; i < 4; i++)
			if (name[i] < 0x20 || name[i] > 0x7e)
				name[i] = '?';
		if (!rd_bytes(&r, size, &body)) {
			c->chunk = "chunk table";
			return beam_ctx_fail(c, GI_ECORRUPT,
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
/* Atoms, imports, exports, lambdas                                         */

static int atoms_parse(struct beam_ctx *c, const struct chunk *ch, bool utf8)
{
	struct rd r;
	uint32_t raw;
	c->chunk = utf8 || !ch->present ? "AtU8" : "Atom";
	if (!ch->present)
		return beam_ctx_fail(c, GI_ECORRUPT, "no atom table (AtU8 or Atom chunk)");
	rd_init(&r, ch->data, ch->size);
	if (!rd_u32(&r, &raw))
		return beam_ctx_fail(c, GI_ECORRUPT, "truncated count");
	int32_t count = (int32_t)raw;
	bool long_lengths = count < 0; /* OTP 28: lengths are compact terms */
	uint64_t n = long_lengths ? (uint64_t)(-(int64_t)count) : (uint64_t)count;
	if (n < 1 || n > rd_left(&r))
		return beam_ctx_fail(c, GI_ECORRUPT, "atom count %lld does not fit the chunk",
		                     (long long)count);
	c->atom_count = (uint32_t)n;
	c->atoms = gi_arena_calloc(&c->scratch, n + 1, sizeof(*c->atoms));
	for (uint32_t i = 1; i <= n; i++) {
		uint64_t alen;
		const uint8_t *text;
		if (long_lengths) {
			if (!beam_compact_u(&r, 4096, &alen))
				return beam_ctx_fail(c, GI_ECORRUPT,
				                     "bad length of atom %u at offset %zu", i,
				                     rd_offset(&r));
		} else {
			uint8_t l8;
			if (!rd_u8(&r, &l8))
				return beam_ctx_fail(c, GI_ECORRUPT, "truncated at atom %u", i);
			alen = l8;
		}
		if (!rd_bytes(&r, (size_t)alen, &text))
			return beam_ctx_fail(c, GI_ECORRUPT, "atom %u runs past the chunk", i);
		if (memchr(text, '\0', (size_t)alen))
			return beam_ctx_fail(c, GI_ECORRUPT, "atom %u contains a NUL byte", i);
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
		return beam_ctx_fail(c, GI_ECORRUPT, "truncated count");
	if ((uint64_t)count * 4 * (uint64_t)width > rd_left(&r))
		return beam_ctx_fail(c, GI_ECORRUPT, "%u entries do not fit in %zu bytes", count,
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
		if (!beam_atom_at(c, c->imports[i].module) ||
		    !beam_atom_at(c, c->imports[i].function) || c->imports[i].arity > 255)
			return beam_ctx_fail(c, GI_ECORRUPT,
			                     "import %u names atoms or an arity out of range", i);
	}
	c->chunk = "ExpT";
	if (!ch->exports.present)
		return beam_ctx_fail(c, GI_ECORRUPT, "no export table (ExpT chunk)");
	if ((rc = table_parse(c, &ch->exports, 3, &rows, &n)) < 0)
		return rc;
	c->exports = (struct lambda *)rows;
	c->export_count = n;
	for (uint32_t i = 0; i < n; i++) {
		if (!beam_atom_at(c, c->exports[i].function) || c->exports[i].arity > 255)
			return beam_ctx_fail(c, GI_ECORRUPT, "export %u is out of range", i);
	}
	c->chunk = "FunT";
	if (ch->lambdas.present && !table_fits(&ch->lambdas, 6)) {
		beam_ctx_note(c, "lambda count does not fit the chunk");
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
		if (!rd_u8(&r, &b) || !beam_compact_value(&r, b, true, &v, &big, 0) || big)
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
	beam_ctx_note(c, "malformed line table");
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
		return beam_ctx_fail(c, GI_ETOOBIG, "compressed file larger than %u bytes",
		                     BEAM_MAX_FILE_SIZE);
	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
		return beam_ctx_fail(c, GI_EIO, "zlib cannot start");
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
				return beam_ctx_fail(c, GI_ETOOBIG, "inflates past %u bytes",
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
	return beam_ctx_fail(c, GI_ECORRUPT, "gzip data is corrupt or truncated");
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
		rc = beam_ctx_fail(&c, GI_ETOOBIG, "%zu bytes is over the cap of %u", len,
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
		rc = beam_ctx_fail(&c, GI_ECORRUPT, "bad module name");
		goto done;
	}
	c.module = facts_module_add(c.facts, display);
	if ((rc = tables_parse(&c, &ch)) < 0)
		goto done;
	beam_attributes_parse(&c, &ch.attributes);
	beam_compile_info_check(&c, &ch.compile_info);
	beam_literals_parse(&c, &ch.literals);
	lines_parse(&c, &ch.lines);
	if ((rc = beam_code_parse(&c, &ch.code)) < 0)
		goto done;
	c.module = gi_vec_get(&c.facts->modules, 0);
	rc = beam_facts_build(&c);
	if (rc == 0) {
		beam_fn_index_build(&c);
		beam_docs_parse(&c, &ch.docs);
		beam_specs_parse(&c, &ch.debug_info);
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
		if (!beam_compact_u(&r, sizeof(atom) - 1, &alen))
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
