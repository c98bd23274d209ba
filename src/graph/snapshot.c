/*
 * snapshot.c - the finished knowledge graph written to a file and read back
 * (graph.h, "snapshot"), so that a cold process answers without rebuilding
 * the graph from the database's rows (docs/SCHEMA.md, "The graph snapshot").
 *
 * The file, native byte order (a byte-order mark refuses another):
 *
 *   header  "GIUGRAPH", u32 format, u32 byte-order mark 0x01020304,
 *           u64 stamp, u64 body length, u64 checksum of the body
 *   body    u32 counts (modules, functions, edges, calls, pairs, sccs,
 *           scc members, list ints, list strings, the three maps' lengths,
 *           layer count, library), u32 string-blob length and the blob (NUL-
 *           terminated strings, the last byte NUL), then the records field by
 *           field as u32 (doubles as u64 bits; strings as blob offset + 1, 0
 *           for NULL; vectors as a u32 count and their items), then the maps'
 *           (key, value, the key's hash as the map held it) triples.
 *
 * Invariants of the reader: every read is bounds-checked against the body;
 * every count is checked against the bytes left before anything is sized by
 * it; every index a record holds (module, function, edge, call, SCC, member,
 * string) is checked against its table, so that a graph read from any file
 * is safe to query; the checksum catches what stays in range but was
 * damaged. The graph's strings are one copy of the blob in its arena, the
 * items of every module's and function's vectors one block (kg_graph.pool);
 * the maps' keys point into the blob with their stored hashes
 * (gi_map_put_borrowed_hashed): reading costs a copy, nothing per string
 * or key. Not thread-safe per graph; reading and writing different graphs
 * at once is.
 */
#include "graph/graph.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/fs.h"

#define MAGIC           "GIUGRAPH"
#define BYTE_ORDER_MARK 0x01020304u
#define HEADER_LEN      KG_SNAPSHOT_HEADER_LEN

enum count {
	C_MODULES,
	C_FUNCTIONS,
	C_EDGES,
	C_CALLS,
	C_PAIRS,
	C_SCCS,
	C_MEMBERS,
	C_LIST_INTS,
	C_LIST_STRS,
	C_MAP_MODULES,
	C_MAP_FUNCTIONS,
	C_MAP_DYNAMIC,
	C_LAYERS,
	C_LIBRARY,
	C_COUNT
};

/* A hash over 8-byte words in four independent lanes (so that the
 * multiplications overlap), for the checksum: damage, not attacks. */
static uint64_t checksum(const unsigned char *p, size_t len)
{
	uint64_t lane[4] = {0x9e3779b97f4a7c15ULL ^ len, 0xc2b2ae3d27d4eb4fULL,
	                    0x165667b19e3779f9ULL, 0x27d4eb2f165667c5ULL};
	size_t i = 0;
	for (; i + 32 <= len; i += 32)
		for (int k = 0; k < 4; k++) {
			uint64_t w;
			memcpy(&w, p + i + 8 * (size_t)k, 8);
			lane[k] = (lane[k] ^ w) * 0xff51afd7ed558ccdULL;
			lane[k] ^= lane[k] >> 32;
		}
	uint64_t h = lane[0] ^ (lane[1] * 3) ^ (lane[2] * 5) ^ (lane[3] * 7);
	for (; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	h ^= h >> 29;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 32;
	return h;
}

uint64_t kg_graph_snapshot_checksum(const void *body, size_t len)
{
	return checksum(body, len);
}

/* ---- writing -------------------------------------------------------------- */

struct writer {
	struct gi_buf out;
	struct gi_buf blob;
	struct gi_map offsets; /* string -> blob offset + 1 */
	int rc;
};

static void put_bytes(struct writer *w, const void *p, size_t len)
{
	if (!w->rc)
		w->rc = gi_buf_append(&w->out, p, len);
}

static void put_u32(struct writer *w, uint32_t v)
{
	put_bytes(w, &v, sizeof(v));
}

static void put_int(struct writer *w, int v)
{
	put_u32(w, (uint32_t)v);
}

static void put_real(struct writer *w, double v)
{
	uint64_t bits;
	memcpy(&bits, &v, sizeof(bits));
	put_bytes(w, &bits, sizeof(bits));
}

/* The string's blob offset + 1 (0 for NULL), adding it once. */
static uint32_t str_ref(struct writer *w, const char *s)
{
	if (!s)
		return 0;
	void *have = gi_map_get(&w->offsets, s);
	if (have)
		return (uint32_t)(uintptr_t)have;
	uint32_t ref = (uint32_t)w->blob.len + 1;
	if (!w->rc)
		w->rc = gi_buf_append(&w->blob, s, strlen(s) + 1);
	gi_map_put(&w->offsets, s, (void *)(uintptr_t)ref);
	return ref;
}

static void put_str(struct writer *w, const char *s)
{
	put_u32(w, str_ref(w, s));
}

static void put_ints(struct writer *w, const struct gi_vec *v)
{
	put_u32(w, (uint32_t)v->len);
	put_bytes(w, v->items, v->len * sizeof(int));
}

static void put_strs(struct writer *w, const struct gi_vec *v)
{
	put_u32(w, (uint32_t)v->len);
	for (size_t i = 0; i < v->len; i++)
		put_str(w, GI_VEC_AT(v, const char *, i));
}

static void put_map(struct writer *w, const struct gi_map *m)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].key) {
			put_str(w, m->slots[i].key);
			put_u32(w, (uint32_t)(uintptr_t)m->slots[i].value);
			uint64_t hash = m->slots[i].hash;
			put_bytes(w, &hash, sizeof(hash));
		}
}

static void put_module(struct writer *w, const struct kg_module *m)
{
	put_str(w, m->name);
	put_str(w, m->file);
	put_int(w, m->kind);
	put_str(w, m->impl_for);
	put_str(w, m->protocol);
	put_u32(w, m->line_start);
	put_u32(w, m->line_end);
	put_u32(w, (uint32_t)m->project | (uint32_t)m->test << 1 | (uint32_t)m->has_moduledoc << 2 |
	               (uint32_t)m->moduledoc_false << 3 | (uint32_t)m->has_struct << 4 |
	               (uint32_t)m->using_read << 5 | (uint32_t)m->inject_opaque << 6 |
	               (uint32_t)m->hub << 7 | (uint32_t)m->has_tests << 8);
	put_int(w, m->origin);
	put_ints(w, &m->functions);
	put_ints(w, &m->out);
	put_ints(w, &m->in);
	put_strs(w, &m->callbacks);
	put_strs(w, &m->struct_fields);
	const int ints[] = {m->public_count,
	                    m->private_count,
	                    m->complexity_total,
	                    m->complexity_max,
	                    m->ca,
	                    m->ce,
	                    m->in_degree,
	                    m->out_degree,
	                    m->max_coupling,
	                    m->god_score,
	                    m->specced,
	                    m->documented,
	                    m->scc,
	                    m->layer};
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		put_int(w, ints[i]);
	put_real(w, m->instability);
	put_real(w, m->centrality);
	put_real(w, m->heat);
	put_real(w, m->change_risk);
}

static void put_function(struct writer *w, const struct kg_function *f)
{
	put_int(w, f->module);
	put_str(w, f->name);
	put_int(w, f->arity);
	put_int(w, f->kind);
	put_u32(w, (uint32_t)f->is_public | (uint32_t)f->defined << 1 | (uint32_t)f->has_doc << 2 |
	               (uint32_t)f->has_spec << 3 | (uint32_t)f->has_impl << 4 |
	               (uint32_t)f->has_guard << 5 | (uint32_t)f->doc_false << 6 |
	               (uint32_t)f->deprecated << 7 | (uint32_t)f->from_defaults << 8);
	put_u32(w, f->line_start);
	put_u32(w, f->line_end);
	put_u32(w, f->clauses);
	put_u32(w, f->lines);
	put_int(w, f->cyclomatic);
	put_int(w, f->cognitive);
	put_int(w, f->max_nesting);
	put_str(w, f->delegate_to);
	put_str(w, f->generated_by);
	put_u32(w, f->reached);
	put_ints(w, &f->callers);
	put_ints(w, &f->callees);
}

static void body_write(struct writer *w, const struct kg_graph *g)
{
	size_t list_ints = 0, list_strs = 0;
	for (size_t i = 0; i < g->modules.len; i++) {
		const struct kg_module *m = kg_module_at(g, (int)i);
		list_ints += m->functions.len + m->out.len + m->in.len;
		list_strs += m->callbacks.len + m->struct_fields.len;
	}
	for (size_t i = 0; i < g->functions.len; i++) {
		const struct kg_function *f = kg_function_at(g, (int)i);
		list_ints += f->callers.len + f->callees.len;
	}
	/* The records first, into `out`, while the blob fills; then the
	 * counts and the blob go in front. */
	for (size_t i = 0; i < g->modules.len; i++)
		put_module(w, kg_module_at(g, (int)i));
	for (size_t i = 0; i < g->functions.len; i++)
		put_function(w, kg_function_at(g, (int)i));
	for (size_t i = 0; i < g->edges.len; i++) {
		const struct kg_edge *e = kg_edge_at(g, (int)i);
		put_int(w, e->from);
		put_int(w, e->to);
		put_u32(w, e->kinds);
		put_int(w, e->count);
	}
	for (size_t i = 0; i < g->calls.len; i++) {
		const struct kg_call *c = kg_call_at(g, (int)i);
		put_int(w, c->from_fn);
		put_int(w, c->to_module);
		put_int(w, c->to_fn);
		put_int(w, c->kind);
		put_int(w, c->count);
		put_int(w, c->origin);
	}
	for (size_t i = 0; i < g->pairs.len; i++) {
		const struct kg_pair *p = gi_vec_get(&g->pairs, i);
		put_int(w, p->from);
		put_int(w, p->to);
		put_int(w, p->calls);
		put_int(w, p->functions);
	}
	for (size_t i = 0; i < g->sccs.len; i++) {
		const struct kg_scc *s = gi_vec_get(&g->sccs, i);
		put_int(w, s->first);
		put_int(w, s->count);
		put_int(w, s->layer);
	}
	put_bytes(w, g->scc_members.items, g->scc_members.len * sizeof(int));
	put_map(w, &g->module_index);
	put_map(w, &g->function_index);
	put_map(w, &g->dynamic_names);

	struct gi_buf records = w->out;
	gi_buf_init(&w->out, 0);
	const uint32_t counts[C_COUNT] = {
	    [C_MODULES] = (uint32_t)g->modules.len,
	    [C_FUNCTIONS] = (uint32_t)g->functions.len,
	    [C_EDGES] = (uint32_t)g->edges.len,
	    [C_CALLS] = (uint32_t)g->calls.len,
	    [C_PAIRS] = (uint32_t)g->pairs.len,
	    [C_SCCS] = (uint32_t)g->sccs.len,
	    [C_MEMBERS] = (uint32_t)g->scc_members.len,
	    [C_LIST_INTS] = (uint32_t)list_ints,
	    [C_LIST_STRS] = (uint32_t)list_strs,
	    [C_MAP_MODULES] = (uint32_t)g->module_index.len,
	    [C_MAP_FUNCTIONS] = (uint32_t)g->function_index.len,
	    [C_MAP_DYNAMIC] = (uint32_t)g->dynamic_names.len,
	    [C_LAYERS] = (uint32_t)g->layer_count,
	    [C_LIBRARY] = g->library,
	};
	put_bytes(w, counts, sizeof(counts));
	put_u32(w, (uint32_t)w->blob.len);
	put_bytes(w, w->blob.data, w->blob.len);
	put_bytes(w, records.data, records.len);
	gi_buf_destroy(&records);
}

void kg_snapshot_header_write(unsigned char *out, const char *magic, uint32_t format,
                              uint64_t stamp, const void *body, size_t len)
{
	const uint32_t mark = BYTE_ORDER_MARK;
	const uint64_t body_len = len, sum = checksum(body, len);
	memcpy(out, magic, 8);
	memcpy(out + 8, &format, 4);
	memcpy(out + 12, &mark, 4);
	memcpy(out + 16, &stamp, 8);
	memcpy(out + 24, &body_len, 8);
	memcpy(out + 32, &sum, 8);
}

int kg_snapshot_file_write(const char *path, const char *magic, uint32_t format, uint64_t stamp,
                           const void *body, size_t len)
{
	char tmp[4096];
	if (len > KG_SNAPSHOT_MAX - HEADER_LEN)
		return GI_ETOOBIG;
	/* A name of its own (two connections of one process may write at once). */
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= sizeof(tmp))
		return GI_ETOOBIG;
	unsigned char header[HEADER_LEN];
	kg_snapshot_header_write(header, magic, format, stamp, body, len);
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return errno == EACCES || errno == EROFS ? GI_EDENIED : GI_EIO;
	fchmod(fd, 0644); /* as the database beside it; best effort */
	int rc = gi_fs_write_all(fd, header, sizeof(header));
	if (!rc)
		rc = gi_fs_write_all(fd, body, len);
	if (close(fd) != 0 && !rc)
		rc = GI_EIO;
	if (!rc && rename(tmp, path) != 0)
		rc = GI_EIO;
	if (rc)
		unlink(tmp);
	return rc;
}

int kg_graph_snapshot_write(const struct kg_graph *g, uint64_t stamp, const char *path)
{
	struct writer w = {.rc = 0};
	gi_buf_init(&w.out, 0);
	gi_buf_init(&w.blob, 0);
	gi_map_init(&w.offsets);
	body_write(&w, g);
	int rc = w.rc;
	if (!rc && w.blob.len >= UINT32_MAX)
		rc = GI_ETOOBIG;
	if (!rc)
		rc = kg_snapshot_file_write(path, MAGIC, KG_SNAPSHOT_FORMAT, stamp, w.out.data,
		                            w.out.len);
	gi_map_destroy(&w.offsets);
	gi_buf_destroy(&w.blob);
	gi_buf_destroy(&w.out);
	return rc;
}

/* ---- reading -------------------------------------------------------------- */

struct reader {
	const unsigned char *p, *end;
	const char *blob;
	size_t blob_len;
	bool bad;
	/* The pool: the vectors' items, handed out in order. */
	const char **strs;
	size_t strs_left;
	int *ints;
	size_t ints_left;
};

/* Copies the next `len` bytes to `out`, or zeroes it and marks the file
 * bad when fewer are left. */
static void get_bytes(struct reader *r, void *out, size_t len)
{
	if ((size_t)(r->end - r->p) < len) {
		r->bad = true;
		memset(out, 0, len);
		return;
	}
	memcpy(out, r->p, len);
	r->p += len;
}

static uint32_t get_u32(struct reader *r)
{
	uint32_t v;
	get_bytes(r, &v, sizeof(v));
	return v;
}

static double get_real(struct reader *r)
{
	double v;
	get_bytes(r, &v, sizeof(v));
	return v;
}

/* An index below `limit` (or -1 when `minus_one`); a bad file otherwise. */
static int get_index(struct reader *r, size_t limit, bool minus_one)
{
	int v = (int)get_u32(r);
	if ((v == -1 && minus_one) || (v >= 0 && (size_t)v < limit))
		return v;
	r->bad = true;
	return minus_one ? -1 : 0;
}

static const char *get_str(struct reader *r)
{
	uint32_t ref = get_u32(r);
	if (ref == 0)
		return NULL;
	if (ref - 1 >= r->blob_len) {
		r->bad = true;
		return NULL;
	}
	return r->blob + (ref - 1);
}

/* A vector of indexes below `limit`, its items from the pool. */
static void get_ints(struct reader *r, struct gi_vec *v, size_t limit)
{
	uint32_t n = get_u32(r);
	gi_vec_init(v, sizeof(int));
	if (n == 0 || r->bad)
		return;
	if (n > r->ints_left || (size_t)(r->end - r->p) / 4 < n) {
		r->bad = true;
		return;
	}
	int *items = r->ints;
	memcpy(items, r->p, (size_t)n * 4);
	r->p += (size_t)n * 4;
	for (uint32_t i = 0; i < n; i++)
		if (items[i] < 0 || (size_t)items[i] >= limit) {
			r->bad = true;
			return;
		}
	r->ints += n;
	r->ints_left -= n;
	v->items = items;
	v->len = v->cap = n;
}

static void get_strs(struct reader *r, struct gi_vec *v)
{
	uint32_t n = get_u32(r);
	gi_vec_init(v, sizeof(const char *));
	if (n == 0 || r->bad)
		return;
	if (n > r->strs_left || (size_t)(r->end - r->p) / 4 < n) {
		r->bad = true;
		return;
	}
	const char **items = r->strs;
	for (uint32_t i = 0; i < n; i++) {
		items[i] = get_str(r);
		if (!items[i])
			r->bad = true;
	}
	r->strs += n;
	r->strs_left -= n;
	v->items = items;
	v->len = v->cap = n;
}

static void get_module(struct reader *r, struct kg_module *m, const uint32_t *counts)
{
	m->name = get_str(r);
	m->file = get_str(r);
	m->kind = (enum facts_module_kind)get_index(r, FACTS_IMPL + 1, false);
	m->impl_for = get_str(r);
	m->protocol = get_str(r);
	m->line_start = get_u32(r);
	m->line_end = get_u32(r);
	uint32_t flags = get_u32(r);
	m->project = flags & 1;
	m->test = flags >> 1 & 1;
	m->has_moduledoc = flags >> 2 & 1;
	m->moduledoc_false = flags >> 3 & 1;
	m->has_struct = flags >> 4 & 1;
	m->using_read = flags >> 5 & 1;
	m->inject_opaque = flags >> 6 & 1;
	m->hub = flags >> 7 & 1;
	m->has_tests = flags >> 8 & 1;
	m->origin = (enum facts_origin)get_index(r, FACTS_FROM_BEAM + 1, false);
	get_ints(r, &m->functions, counts[C_FUNCTIONS]);
	get_ints(r, &m->out, counts[C_EDGES]);
	get_ints(r, &m->in, counts[C_EDGES]);
	get_strs(r, &m->callbacks);
	get_strs(r, &m->struct_fields);
	int *ints[] = {&m->public_count,
	               &m->private_count,
	               &m->complexity_total,
	               &m->complexity_max,
	               &m->ca,
	               &m->ce,
	               &m->in_degree,
	               &m->out_degree,
	               &m->max_coupling,
	               &m->god_score,
	               &m->specced,
	               &m->documented};
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		*ints[i] = (int)get_u32(r);
	m->scc = get_index(r, counts[C_SCCS], true);
	m->layer = get_index(r, (size_t)counts[C_LAYERS] + 1, true);
	m->instability = get_real(r);
	m->centrality = get_real(r);
	m->heat = get_real(r);
	m->change_risk = get_real(r);
	if (!m->name)
		r->bad = true;
}

static void get_function(struct reader *r, struct kg_function *f, const uint32_t *counts)
{
	f->module = get_index(r, counts[C_MODULES], false);
	f->name = get_str(r);
	f->arity = (int)get_u32(r);
	f->kind = (enum facts_function_kind)get_index(r, FACTS_DEFCALLBACK + 1, false);
	uint32_t flags = get_u32(r);
	f->is_public = flags & 1;
	f->defined = flags >> 1 & 1;
	f->has_doc = flags >> 2 & 1;
	f->has_spec = flags >> 3 & 1;
	f->has_impl = flags >> 4 & 1;
	f->has_guard = flags >> 5 & 1;
	f->doc_false = flags >> 6 & 1;
	f->deprecated = flags >> 7 & 1;
	f->from_defaults = flags >> 8 & 1;
	f->line_start = get_u32(r);
	f->line_end = get_u32(r);
	f->clauses = get_u32(r);
	f->lines = get_u32(r);
	f->cyclomatic = (int)get_u32(r);
	f->cognitive = (int)get_u32(r);
	f->max_nesting = (int)get_u32(r);
	f->delegate_to = get_str(r);
	f->generated_by = get_str(r);
	f->reached = get_u32(r);
	get_ints(r, &f->callers, counts[C_CALLS]);
	get_ints(r, &f->callees, counts[C_CALLS]);
	if (!f->name)
		r->bad = true;
}

static void get_map(struct reader *r, struct gi_map *m, uint32_t n, size_t values)
{
	for (uint32_t i = 0; i < n && !r->bad; i++) {
		const char *key = get_str(r);
		uint32_t value = get_u32(r);
		uint64_t hash;
		get_bytes(r, &hash, sizeof(hash));
		if (!key || value == 0 || value > values)
			r->bad = true;
		else
			gi_map_put_borrowed_hashed(m, key, hash, (void *)(uintptr_t)value);
	}
}

/* A table of `n` records of at least `min` bytes each: refused when the
 * body cannot hold them, before anything is sized by `n`. */
static bool table_fits(const struct reader *r, uint32_t n, size_t min)
{
	return (size_t)(r->end - r->p) / min >= n;
}

static void *table_new(struct gi_vec *v, uint32_t n, size_t elem_size)
{
	gi_vec_init(v, elem_size);
	if (n == 0)
		return NULL;
	v->items = gi_calloc(n, elem_size);
	v->len = v->cap = n;
	return v->items;
}

static int body_read(struct reader *r, struct kg_graph *g)
{
	uint32_t counts[C_COUNT];
	for (int i = 0; i < C_COUNT; i++)
		counts[i] = get_u32(r);
	uint32_t blob_len = get_u32(r);
	if (r->bad || (size_t)(r->end - r->p) < blob_len || (blob_len && r->p[blob_len - 1]))
		return GI_ECORRUPT;
	char *blob = gi_arena_alloc(&g->arena, blob_len ? blob_len : 1);
	memcpy(blob, r->p, blob_len);
	r->blob = blob;
	r->blob_len = blob_len;
	r->p += blob_len;
	/* Each module record is at least 144 bytes, each function 68; each
	 * list item 4 bytes. */
	if (!table_fits(r, counts[C_MODULES], 144) || !table_fits(r, counts[C_FUNCTIONS], 68) ||
	    !table_fits(r, counts[C_LIST_INTS], 4) || !table_fits(r, counts[C_LIST_STRS], 4) ||
	    !table_fits(r, counts[C_EDGES], 16) || !table_fits(r, counts[C_CALLS], 24) ||
	    !table_fits(r, counts[C_PAIRS], 16) || !table_fits(r, counts[C_SCCS], 12) ||
	    !table_fits(r, counts[C_MEMBERS], 4) || counts[C_LIBRARY] > 1 ||
	    counts[C_LAYERS] > counts[C_MODULES] || counts[C_MODULES] > INT32_MAX / 2 ||
	    counts[C_FUNCTIONS] > INT32_MAX / 2)
		return GI_ECORRUPT;
	size_t pool_len = (size_t)counts[C_LIST_STRS] * sizeof(char *) +
	                  (size_t)counts[C_LIST_INTS] * sizeof(int);
	g->pool = gi_malloc(pool_len ? pool_len : 1);
	r->strs = g->pool;
	r->strs_left = counts[C_LIST_STRS];
	r->ints = (int *)((char *)g->pool + (size_t)counts[C_LIST_STRS] * sizeof(char *));
	r->ints_left = counts[C_LIST_INTS];

	struct kg_module *mods = table_new(&g->modules, counts[C_MODULES], sizeof(*mods));
	for (uint32_t i = 0; i < counts[C_MODULES] && !r->bad; i++)
		get_module(r, &mods[i], counts);
	struct kg_function *fns = table_new(&g->functions, counts[C_FUNCTIONS], sizeof(*fns));
	for (uint32_t i = 0; i < counts[C_FUNCTIONS] && !r->bad; i++)
		get_function(r, &fns[i], counts);
	if (r->bad || !table_fits(r, counts[C_EDGES], 16))
		return GI_ECORRUPT;
	struct kg_edge *edges = table_new(&g->edges, counts[C_EDGES], sizeof(*edges));
	for (uint32_t i = 0; i < counts[C_EDGES]; i++) {
		edges[i].from = get_index(r, counts[C_MODULES], false);
		edges[i].to = get_index(r, counts[C_MODULES], false);
		edges[i].kinds = get_u32(r);
		edges[i].count = (int)get_u32(r);
	}
	if (r->bad || !table_fits(r, counts[C_CALLS], 24))
		return GI_ECORRUPT;
	struct kg_call *calls = table_new(&g->calls, counts[C_CALLS], sizeof(*calls));
	for (uint32_t i = 0; i < counts[C_CALLS]; i++) {
		calls[i].from_fn = get_index(r, counts[C_FUNCTIONS], false);
		calls[i].to_module = get_index(r, counts[C_MODULES], false);
		calls[i].to_fn = get_index(r, counts[C_FUNCTIONS], false);
		calls[i].kind =
		    (enum facts_call_kind)get_index(r, FACTS_CALL_INJECT_QUOTE + 1, false);
		calls[i].count = (int)get_u32(r);
		calls[i].origin = (enum facts_origin)get_index(r, FACTS_FROM_BEAM + 1, false);
	}
	if (r->bad || !table_fits(r, counts[C_PAIRS], 16))
		return GI_ECORRUPT;
	struct kg_pair *pairs = table_new(&g->pairs, counts[C_PAIRS], sizeof(*pairs));
	for (uint32_t i = 0; i < counts[C_PAIRS]; i++) {
		pairs[i].from = get_index(r, counts[C_MODULES], false);
		pairs[i].to = get_index(r, counts[C_MODULES], false);
		pairs[i].calls = (int)get_u32(r);
		pairs[i].functions = (int)get_u32(r);
	}
	if (r->bad || !table_fits(r, counts[C_SCCS], 12))
		return GI_ECORRUPT;
	struct kg_scc *sccs = table_new(&g->sccs, counts[C_SCCS], sizeof(*sccs));
	for (uint32_t i = 0; i < counts[C_SCCS]; i++) {
		sccs[i].first = get_index(r, (size_t)counts[C_MEMBERS] + 1, false);
		sccs[i].count = get_index(r, (size_t)counts[C_MEMBERS] + 1, false);
		sccs[i].layer = get_index(r, (size_t)counts[C_LAYERS] + 1, false);
		if ((size_t)sccs[i].first + (size_t)sccs[i].count > counts[C_MEMBERS])
			r->bad = true;
	}
	if (r->bad || !table_fits(r, counts[C_MEMBERS], 4))
		return GI_ECORRUPT;
	int *members = table_new(&g->scc_members, counts[C_MEMBERS], sizeof(int));
	for (uint32_t i = 0; i < counts[C_MEMBERS]; i++)
		members[i] = get_index(r, counts[C_MODULES], false);
	get_map(r, &g->module_index, counts[C_MAP_MODULES], counts[C_MODULES]);
	get_map(r, &g->function_index, counts[C_MAP_FUNCTIONS], counts[C_FUNCTIONS]);
	get_map(r, &g->dynamic_names, counts[C_MAP_DYNAMIC], 1);
	if (r->bad || r->p != r->end || r->ints_left || r->strs_left)
		return GI_ECORRUPT;
	g->layer_count = (int)counts[C_LAYERS];
	g->library = counts[C_LIBRARY] == 1;
	g->finished = true;
	return 0;
}

int kg_snapshot_file_check(const void *data, size_t len, const char *magic, uint32_t format,
                           uint64_t stamp, const unsigned char **body, size_t *body_len)
{
	const unsigned char *p = data;
	*body = NULL;
	*body_len = 0;
	if (len < HEADER_LEN || memcmp(p, magic, 8) != 0)
		return GI_ECORRUPT;
	uint32_t file_format, mark;
	uint64_t file_stamp, file_len, sum;
	memcpy(&file_format, p + 8, 4);
	memcpy(&mark, p + 12, 4);
	memcpy(&file_stamp, p + 16, 8);
	memcpy(&file_len, p + 24, 8);
	memcpy(&sum, p + 32, 8);
	if (file_format != format || mark != BYTE_ORDER_MARK || file_stamp != stamp)
		return GI_EDBVERSION;
	if (file_len != len - HEADER_LEN || checksum(p + HEADER_LEN, (size_t)file_len) != sum)
		return GI_ECORRUPT;
	*body = p + HEADER_LEN;
	*body_len = (size_t)file_len;
	return 0;
}

int kg_graph_snapshot_parse(const void *data, size_t len, uint64_t stamp, struct kg_graph **out)
{
	*out = NULL;
	const unsigned char *body = NULL;
	size_t body_len = 0;
	int rc =
	    kg_snapshot_file_check(data, len, MAGIC, KG_SNAPSHOT_FORMAT, stamp, &body, &body_len);
	if (rc)
		return rc;
	struct kg_graph *g = kg_graph_new();
	struct reader r = {.p = body, .end = body + body_len};
	rc = body_read(&r, g);
	if (rc) {
		kg_graph_free(g);
		return rc;
	}
	*out = g;
	return 0;
}

int kg_snapshot_file_map(const char *path, void **map, size_t *len)
{
	*map = NULL;
	*len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? GI_ENOENT : GI_EIO;
	struct stat st;
	int rc = 0;
	if (fstat(fd, &st) != 0)
		rc = GI_EIO;
	else if (!S_ISREG(st.st_mode) || st.st_size < HEADER_LEN)
		rc = GI_ECORRUPT;
	else if ((uint64_t)st.st_size > KG_SNAPSHOT_MAX)
		rc = GI_ETOOBIG;
	if (!rc) {
		void *m =
		    mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
		if (m == MAP_FAILED) {
			rc = GI_EIO;
		} else {
			*map = m;
			*len = (size_t)st.st_size;
		}
	}
	close(fd);
	return rc;
}

void kg_snapshot_file_unmap(void *map, size_t len)
{
	if (map)
		munmap(map, len);
}

int kg_graph_snapshot_read(const char *path, uint64_t stamp, struct kg_graph **out)
{
	*out = NULL;
	void *map = NULL;
	size_t len = 0;
	int rc = kg_snapshot_file_map(path, &map, &len);
	if (rc)
		return rc;
	rc = kg_graph_snapshot_parse(map, len, stamp, out);
	kg_snapshot_file_unmap(map, len);
	return rc;
}

bool kg_graph_snapshot_current(const char *path, uint64_t stamp)
{
	unsigned char header[HEADER_LEN];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, header, sizeof(header));
	close(fd);
	uint32_t format, mark;
	uint64_t file_stamp;
	if (n != (ssize_t)sizeof(header) || memcmp(header, MAGIC, 8) != 0)
		return false;
	memcpy(&format, header + 8, 4);
	memcpy(&mark, header + 12, 4);
	memcpy(&file_stamp, header + 16, 8);
	return format == KG_SNAPSHOT_FORMAT && mark == BYTE_ORDER_MARK && file_stamp == stamp;
}
