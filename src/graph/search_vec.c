/*
 * search_vec.c - word vectors learned on this machine, for the hybrid code
 * search (see search.h and docs/SEARCH.md "Hybrid").
 *
 * No model is downloaded: the text is the documentation already here, the
 * EEP-48 Docs chunks of every installed Elixir and OTP .beam plus the
 * project's own docs and identifiers (the sequences kept by the search
 * index). Method (Levy & Goldberg 2014): co-occurrence counts within a
 * window of VEC_WINDOW terms weighted 1/distance, positive PMI with context
 * smoothing 0.75, then a rank-VEC_DIM truncated eigendecomposition of the
 * symmetric PPMI matrix by randomized subspace iteration; a word's vector
 * is its row of U * sqrt(|lambda|), normalised. The vectors are cached in a
 * file next to the index database and rebuilt when the database is newer.
 *
 * Not thread-safe while building; a built set may be read by several
 * threads.
 */
#include <glob.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/hash.h"
#include "base/str.h"
#include "graph/search.h"
#include "source/beam.h"

#define VEC_VOCAB_MAX  12000 /* most frequent terms kept */
#define VEC_MIN_COUNT  3
#define VEC_WINDOW     2
#define VEC_DIM        64
#define VEC_OVERSAMPLE 16
#define VEC_POWER_ITER 3
#define VEC_MAGIC      "GIULIAWV1"
#define VEC_BEAM_MAX   (64u << 20)

struct kg_word_vectors {
	struct gi_map index; /* term -> (void *)(row + 1) */
	char **terms;
	size_t n;
	float *rows; /* n * VEC_DIM, unit length (or zero) */
};

/* ---- the corpus: term sequences ------------------------------------------ */

struct corpus {
	struct gi_map ids;    /* term -> (void *)(id + 1) */
	struct gi_vec names;  /* char *: the map's own keys by id */
	struct gi_vec counts; /* uint32_t per id */
	struct gi_vec seq;    /* uint32_t ids; UINT32_MAX separates documents */
};

static void corpus_term(void *ctx, const char *term)
{
	struct corpus *c = ctx;
	uintptr_t id = (uintptr_t)gi_map_get(&c->ids, term);
	if (!id) {
		gi_map_put(&c->ids, term, (void *)(uintptr_t)(c->names.len + 1));
		const char *key = gi_map_key(&c->ids, term);
		gi_vec_push(&c->names, &key);
		uint32_t zero = 0;
		gi_vec_push(&c->counts, &zero);
		id = c->names.len;
	}
	GI_VEC_AT(&c->counts, uint32_t, id - 1)++;
	uint32_t v = (uint32_t)(id - 1);
	gi_vec_push(&c->seq, &v);
}

static void corpus_end_document(void *ctx)
{
	struct corpus *c = ctx;
	uint32_t sep = UINT32_MAX;
	gi_vec_push(&c->seq, &sep);
}

static int corpus_doc(void *ctx, const char *kind, const char *name, int arity, const char *doc,
                      size_t len)
{
	struct corpus *c = ctx;
	(void)kind;
	(void)arity;
	if (name)
		kg_search_terms(name, strlen(name), corpus_term, c);
	kg_search_terms(doc, len, corpus_term, c);
	corpus_end_document(c);
	return 0;
}

/* Adds the docs of every .beam matched by the NULL-terminated `globs`. */
static size_t corpus_add_beams(struct corpus *c, const char *const *globs)
{
	size_t files = 0;
	for (int g = 0; globs && globs[g]; g++) {
		glob_t gl;
		if (glob(globs[g], 0, NULL, &gl) != 0)
			continue;
		for (size_t i = 0; i < gl.gl_pathc; i++) {
			char *data = NULL;
			size_t len = 0;
			if (gi_fs_read_file(gl.gl_pathv[i], VEC_BEAM_MAX, &data, &len))
				continue;
			if (beam_docs_read((const unsigned char *)data, len, corpus_doc, c) == 0)
				files++;
			gi_free(data);
		}
		globfree(&gl);
	}
	return files;
}

/* ---- sparse PPMI --------------------------------------------------------- */

struct pair_table {
	uint64_t *keys; /* (i << 32 | j) + 1; 0 empty */
	float *values;
	size_t cap, len;
};

static void pair_add(struct pair_table *t, uint32_t i, uint32_t j, float w);

static void pair_grow(struct pair_table *t)
{
	struct pair_table old = *t;
	t->cap = old.cap ? old.cap * 2 : 1u << 16;
	t->keys = gi_calloc(t->cap, sizeof(uint64_t));
	t->values = gi_calloc(t->cap, sizeof(float));
	t->len = 0;
	for (size_t k = 0; k < old.cap; k++)
		if (old.keys[k]) {
			uint64_t key = old.keys[k] - 1;
			pair_add(t, (uint32_t)(key >> 32), (uint32_t)key, old.values[k]);
		}
	gi_free(old.keys);
	gi_free(old.values);
}

static void pair_add(struct pair_table *t, uint32_t i, uint32_t j, float w)
{
	if ((t->len + 1) * 2 > t->cap)
		pair_grow(t);
	uint64_t key = ((uint64_t)i << 32 | j) + 1;
	size_t mask = t->cap - 1, k = (size_t)gi_hash64(&key, sizeof(key), 7) & mask;
	while (t->keys[k] && t->keys[k] != key)
		k = (k + 1) & mask;
	if (!t->keys[k]) {
		t->keys[k] = key;
		t->len++;
	}
	t->values[k] += w;
}

/* A symmetric sparse matrix in coordinate form. */
struct sparse {
	uint32_t *row, *col;
	float *value;
	size_t nnz;
};

static void sparse_multiply(const struct sparse *m, const double *x, double *y, size_t n,
                            size_t cols)
{
	memset(y, 0, sizeof(double) * n * cols);
	for (size_t k = 0; k < m->nnz; k++) {
		const double *xr = x + (size_t)m->col[k] * cols;
		double *yr = y + (size_t)m->row[k] * cols;
		double v = m->value[k];
		for (size_t c = 0; c < cols; c++)
			yr[c] += v * xr[c];
	}
}

/* Orthonormalises the `cols` columns of the n x cols row-major matrix a. */
static void orthonormalise(double *a, size_t n, size_t cols)
{
	for (size_t c = 0; c < cols; c++) {
		for (size_t p = 0; p < c; p++) {
			double dot = 0;
			for (size_t r = 0; r < n; r++)
				dot += a[r * cols + c] * a[r * cols + p];
			for (size_t r = 0; r < n; r++)
				a[r * cols + c] -= dot * a[r * cols + p];
		}
		double norm = 0;
		for (size_t r = 0; r < n; r++)
			norm += a[r * cols + c] * a[r * cols + c];
		norm = sqrt(norm);
		for (size_t r = 0; r < n; r++)
			a[r * cols + c] = norm > 1e-12 ? a[r * cols + c] / norm : 0;
	}
}

/* Cyclic Jacobi eigendecomposition of the symmetric k x k matrix a (destroyed):
 * eigenvalues in w, eigenvectors in the columns of v. */
static void jacobi_eigen(double *a, size_t k, double *w, double *v)
{
	for (size_t i = 0; i < k; i++)
		for (size_t j = 0; j < k; j++)
			v[i * k + j] = i == j;
	for (int sweep = 0; sweep < 60; sweep++) {
		double off = 0;
		for (size_t i = 0; i < k; i++)
			for (size_t j = i + 1; j < k; j++)
				off += a[i * k + j] * a[i * k + j];
		if (off < 1e-20)
			break;
		for (size_t p = 0; p < k; p++)
			for (size_t q = p + 1; q < k; q++) {
				double apq = a[p * k + q];
				if (fabs(apq) < 1e-300)
					continue;
				double theta = (a[q * k + q] - a[p * k + p]) / (2 * apq);
				double t =
				    (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(theta * theta + 1));
				double c = 1 / sqrt(t * t + 1), s = t * c;
				for (size_t r = 0; r < k; r++) {
					double arp = a[r * k + p], arq = a[r * k + q];
					a[r * k + p] = c * arp - s * arq;
					a[r * k + q] = s * arp + c * arq;
				}
				for (size_t r = 0; r < k; r++) {
					double apr = a[p * k + r], aqr = a[q * k + r];
					a[p * k + r] = c * apr - s * aqr;
					a[q * k + r] = s * apr + c * aqr;
				}
				for (size_t r = 0; r < k; r++) {
					double vrp = v[r * k + p], vrq = v[r * k + q];
					v[r * k + p] = c * vrp - s * vrq;
					v[r * k + q] = s * vrp + c * vrq;
				}
			}
	}
	for (size_t i = 0; i < k; i++)
		w[i] = a[i * k + i];
}

/* Rank-VEC_DIM vectors of the symmetric n x n matrix m into out (n x VEC_DIM). */
static void truncated_eigen(const struct sparse *m, size_t n, float *out)
{
	size_t k = VEC_DIM + VEC_OVERSAMPLE;
	double *q = gi_malloc(sizeof(double) * n * k), *y = gi_malloc(sizeof(double) * n * k);
	uint64_t state = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < n * k; i++) {
		state ^= state << 13, state ^= state >> 7, state ^= state << 17;
		q[i] = (double)(state >> 11) / 9007199254740992.0 - 0.5;
	}
	orthonormalise(q, n, k);
	for (int it = 0; it < VEC_POWER_ITER; it++) {
		sparse_multiply(m, q, y, n, k);
		memcpy(q, y, sizeof(double) * n * k);
		orthonormalise(q, n, k);
	}
	/* B = Q^T M Q */
	sparse_multiply(m, q, y, n, k);
	double *b = gi_calloc(k * k, sizeof(double)), *w = gi_malloc(sizeof(double) * k);
	double *v = gi_malloc(sizeof(double) * k * k);
	for (size_t r = 0; r < n; r++)
		for (size_t i = 0; i < k; i++)
			for (size_t j = 0; j < k; j++)
				b[i * k + j] += q[r * k + i] * y[r * k + j];
	jacobi_eigen(b, k, w, v);
	/* the VEC_DIM eigenpairs of largest |lambda| */
	size_t order[VEC_DIM + VEC_OVERSAMPLE] = {0};
	for (size_t i = 0; i < k; i++)
		order[i] = i;
	for (size_t i = 0; i < k; i++)
		for (size_t j = i + 1; j < k; j++)
			if (fabs(w[order[j]]) > fabs(w[order[i]])) {
				size_t t = order[i];
				order[i] = order[j];
				order[j] = t;
			}
	for (size_t r = 0; r < n; r++) {
		double norm = 0;
		for (size_t d = 0; d < VEC_DIM; d++) {
			size_t e = order[d];
			double x = 0;
			for (size_t i = 0; i < k; i++)
				x += q[r * k + i] * v[i * k + e];
			x *= sqrt(fabs(w[e]));
			out[r * VEC_DIM + d] = (float)x;
			norm += x * x;
		}
		norm = sqrt(norm);
		for (size_t d = 0; d < VEC_DIM; d++)
			out[r * VEC_DIM + d] = norm > 0 ? (float)(out[r * VEC_DIM + d] / norm) : 0;
	}
	gi_free(q);
	gi_free(y);
	gi_free(b);
	gi_free(w);
	gi_free(v);
}

static _Thread_local const uint32_t *sort_counts;

static int by_count_desc(const void *a, const void *b)
{
	uint32_t x = sort_counts[*(const uint32_t *)a], y = sort_counts[*(const uint32_t *)b];
	return x < y ? 1 : x > y ? -1 : 0;
}

static struct kg_word_vectors *vectors_learn(struct corpus *c)
{
	/* the vocabulary: the most frequent terms seen at least VEC_MIN_COUNT times */
	size_t nterms = c->names.len;
	uint32_t *order = gi_malloc(sizeof(uint32_t) * (nterms + 1));
	for (size_t i = 0; i < nterms; i++)
		order[i] = (uint32_t)i;
	sort_counts = c->counts.items;
	qsort(order, nterms, sizeof(uint32_t), by_count_desc);
	sort_counts = NULL;
	uint32_t *row_of = gi_malloc(sizeof(uint32_t) * (nterms + 1));
	for (size_t i = 0; i < nterms; i++)
		row_of[i] = UINT32_MAX;
	size_t n = 0;
	for (size_t i = 0; i < nterms && n < VEC_VOCAB_MAX; i++)
		if (GI_VEC_AT(&c->counts, uint32_t, order[i]) >= VEC_MIN_COUNT)
			row_of[order[i]] = (uint32_t)n++;

	struct kg_word_vectors *v = gi_calloc(1, sizeof(*v));
	gi_map_init(&v->index);
	v->n = n;
	v->terms = gi_calloc(n + 1, sizeof(char *));
	v->rows = gi_calloc(n * VEC_DIM + 1, sizeof(float));
	for (size_t i = 0; i < nterms; i++)
		if (row_of[i] != UINT32_MAX) {
			v->terms[row_of[i]] = gi_strdup(GI_VEC_AT(&c->names, const char *, i));
			gi_map_put(&v->index, v->terms[row_of[i]],
			           (void *)(uintptr_t)(row_of[i] + 1));
		}

	/* co-occurrences within the window, both directions */
	struct pair_table t = {0};
	const uint32_t *seq = c->seq.items;
	for (size_t i = 0; i < c->seq.len; i++) {
		if (seq[i] == UINT32_MAX || row_of[seq[i]] == UINT32_MAX)
			continue;
		for (size_t d = 1; d <= VEC_WINDOW && i + d < c->seq.len; d++) {
			if (seq[i + d] == UINT32_MAX)
				break;
			uint32_t a = row_of[seq[i]], b = row_of[seq[i + d]];
			if (b == UINT32_MAX || a == b)
				continue;
			pair_add(&t, a, b, 1.0f / (float)d);
			pair_add(&t, b, a, 1.0f / (float)d);
		}
	}
	/* PPMI with context smoothing */
	double *row_sum = gi_calloc(n + 1, sizeof(double)),
	       *ctx_sum = gi_calloc(n + 1, sizeof(double));
	double total = 0, ctx_total = 0;
	for (size_t k = 0; k < t.cap; k++)
		if (t.keys[k]) {
			uint64_t key = t.keys[k] - 1;
			row_sum[key >> 32] += t.values[k];
			total += t.values[k];
		}
	for (size_t j = 0; j < n; j++) {
		ctx_sum[j] = pow(row_sum[j], 0.75);
		ctx_total += ctx_sum[j];
	}
	struct sparse m = {gi_malloc(sizeof(uint32_t) * (t.len + 1)),
	                   gi_malloc(sizeof(uint32_t) * (t.len + 1)),
	                   gi_malloc(sizeof(float) * (t.len + 1)), 0};
	for (size_t k = 0; k < t.cap; k++)
		if (t.keys[k]) {
			uint64_t key = t.keys[k] - 1;
			uint32_t i = (uint32_t)(key >> 32), j = (uint32_t)key;
			double pmi = log((t.values[k] / total) /
			                 ((row_sum[i] / total) * (ctx_sum[j] / ctx_total)));
			if (pmi > 0) {
				m.row[m.nnz] = i;
				m.col[m.nnz] = j;
				m.value[m.nnz++] = (float)pmi;
			}
		}
	if (n > VEC_DIM + VEC_OVERSAMPLE)
		truncated_eigen(&m, n, v->rows);
	gi_free(m.row);
	gi_free(m.col);
	gi_free(m.value);
	gi_free(row_sum);
	gi_free(ctx_sum);
	gi_free(t.keys);
	gi_free(t.values);
	gi_free(order);
	gi_free(row_of);
	return v;
}

/* ---- the cache file ------------------------------------------------------ */

static int vectors_save(const struct kg_word_vectors *v, const char *path)
{
	struct gi_buf b;
	gi_buf_init(&b, 0);
	uint32_t n = (uint32_t)v->n, dim = VEC_DIM;
	gi_buf_append(&b, VEC_MAGIC, sizeof(VEC_MAGIC));
	gi_buf_append(&b, &n, sizeof(n));
	gi_buf_append(&b, &dim, sizeof(dim));
	for (size_t i = 0; i < v->n; i++)
		gi_buf_append(&b, v->terms[i], strlen(v->terms[i]) + 1);
	gi_buf_append(&b, v->rows, sizeof(float) * v->n * VEC_DIM);
	int rc = gi_fs_write_file(path, b.data, b.len);
	gi_buf_destroy(&b);
	return rc;
}

static struct kg_word_vectors *vectors_load(const char *path)
{
	char *data = NULL;
	size_t len = 0;
	if (gi_fs_read_file(path, 256u << 20, &data, &len))
		return NULL;
	struct kg_word_vectors *v = NULL;
	uint32_t n, dim;
	size_t at = sizeof(VEC_MAGIC);
	if (len < at + 8 || memcmp(data, VEC_MAGIC, sizeof(VEC_MAGIC)) != 0)
		goto done;
	memcpy(&n, data + at, 4);
	memcpy(&dim, data + at + 4, 4);
	at += 8;
	if (dim != VEC_DIM || n > VEC_VOCAB_MAX)
		goto done;
	v = gi_calloc(1, sizeof(*v));
	gi_map_init(&v->index);
	v->terms = gi_calloc((size_t)n + 1, sizeof(char *));
	for (uint32_t i = 0; i < n; i++) {
		const char *end = at < len ? memchr(data + at, '\0', len - at) : NULL;
		if (!end) {
			kg_word_vectors_free(v);
			v = NULL;
			goto done;
		}
		v->terms[i] = gi_strdup(data + at);
		gi_map_put(&v->index, v->terms[i], (void *)(uintptr_t)(i + 1));
		at = (size_t)(end - data) + 1;
		v->n = i + 1;
	}
	if (len - at != sizeof(float) * (size_t)n * VEC_DIM) {
		kg_word_vectors_free(v);
		v = NULL;
		goto done;
	}
	v->rows = gi_malloc(sizeof(float) * (size_t)n * VEC_DIM + 1);
	memcpy(v->rows, data + at, sizeof(float) * (size_t)n * VEC_DIM);
done:
	gi_free(data);
	return v;
}

/* The cache is fresh while newer than the database and its write-ahead log
 * (a re-index may touch only the log until a checkpoint). */
static bool cache_fresh(const char *cache, const char *db)
{
	struct stat c, d;
	if (stat(cache, &c) != 0)
		return false;
	if (!db)
		return true;
	if (stat(db, &d) == 0 && d.st_mtime > c.st_mtime)
		return false;
	char wal[4200];
	snprintf(wal, sizeof(wal), "%s-wal", db);
	return stat(wal, &d) != 0 || d.st_mtime <= c.st_mtime;
}

/* ---- public -------------------------------------------------------------- */

int kg_word_vectors_get(const struct kg_search_index *ix, const char *cache_path,
                        const char *db_path, const char *const *beam_globs,
                        struct kg_word_vectors **out)
{
	*out = NULL;
	if (cache_path && cache_fresh(cache_path, db_path)) {
		*out = vectors_load(cache_path);
		if (*out)
			return 0;
	}
	struct corpus c;
	gi_map_init(&c.ids);
	gi_vec_init(&c.names, sizeof(char *));
	gi_vec_init(&c.counts, sizeof(uint32_t));
	gi_vec_init(&c.seq, sizeof(uint32_t));
	kg_search_index_sequences(ix, corpus_term, corpus_end_document, &c);
	corpus_add_beams(&c, beam_globs);
	*out = vectors_learn(&c);
	gi_map_destroy(&c.ids);
	gi_vec_destroy(&c.names);
	gi_vec_destroy(&c.counts);
	gi_vec_destroy(&c.seq);
	if (cache_path)
		(void)vectors_save(*out, cache_path); /* a read-only index dir costs a rebuild */
	return 0;
}

void kg_word_vectors_free(struct kg_word_vectors *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++)
		gi_free(v->terms[i]);
	gi_free(v->terms);
	gi_free(v->rows);
	gi_map_destroy(&v->index);
	gi_free(v);
}

size_t kg_word_vectors_count(const struct kg_word_vectors *v)
{
	return v ? v->n : 0;
}

int kg_word_vectors_neighbours(const struct kg_word_vectors *v, const char *term, int max,
                               double min_cos, const char **terms, double *cos)
{
	uintptr_t id = v ? (uintptr_t)gi_map_get(&v->index, term) : 0;
	if (!id || max <= 0)
		return 0;
	const float *q = v->rows + (id - 1) * VEC_DIM;
	int found = 0;
	for (size_t r = 0; r < v->n; r++) {
		if (r == id - 1)
			continue;
		const float *x = v->rows + r * VEC_DIM;
		double dot = 0;
		for (int d = 0; d < VEC_DIM; d++)
			dot += (double)q[d] * x[d];
		if (dot < min_cos)
			continue;
		/* insertion into the sorted top `max` */
		int at = found < max ? found++ : max;
		if (at == max && dot <= cos[max - 1])
			continue;
		if (at == max)
			at = max - 1;
		while (at > 0 && cos[at - 1] < dot) {
			cos[at] = cos[at - 1];
			terms[at] = terms[at - 1];
			at--;
		}
		cos[at] = dot;
		terms[at] = v->terms[r];
	}
	return found;
}
