/*
 * elixir_arena.c - the tree-sitter runtime's memory, one arena per parse.
 *
 * A parse makes tens of thousands of small allocations (about 300 per KB of
 * source) and the tree that holds them lives exactly as long as the file's
 * walk. The runtime's allocator (ts_set_allocator, set once before the first
 * parser exists) therefore hands out memory from the calling thread's current
 * arena, by bumping a pointer: a free is a no-op (or gives back the last
 * block), a realloc grows the last block in place, and the whole parse (its
 * parser, tree and cursors) is released at once by ex_arena_end, without
 * walking the tree to free its nodes. Outside a parse (no current arena) the
 * allocator falls back to the heap; every block carries a header that says
 * which, so either kind is freed correctly.
 *
 * Arenas are kept in a pool and reused by the next parse, on any thread, so
 * their memory is already mapped; one that grew past EX_ARENA_KEEP is given
 * back to the heap. A parse's memory is about 30 times its source file's
 * size (EX_MAX_FILE_SIZE bounds it).
 *
 * Thread-safe: the pool is guarded by a mutex; the current arena is
 * per thread.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/alloc.h"
#include "source/elixir_int.h"

/* The smallest chunk; a parse's first chunk is sized from its source
 * (EX_ARENA_PER_BYTE), later ones double. */
#define EX_ARENA_FIRST ((size_t)1 << 20)
/* A parse allocates about 22-30 bytes per byte of source (trees of Elixir's
 * lib). */
#define EX_ARENA_PER_BYTE 32
/* An arena bigger than this after a parse is freed rather than kept: a
 * large file's memory goes back at once, the pool stays small. */
#define EX_ARENA_KEEP ((size_t)8 << 20)
/* Every block starts with a header of this size (the block stays aligned). */
#define EX_ARENA_HEADER 16

enum { BLOCK_HEAP = 0x48, BLOCK_ARENA = 0x41 };

struct ex_arena_chunk {
	struct ex_arena_chunk *next;
	size_t cap, used;
	size_t mapped; /* bytes mapped for it, this header included */
	_Alignas(16) unsigned char data[];
};

/* Freed blocks, by capacity, in EX_ARENA_BINS lists (capacity / 16,
 * modulo the count): a block of the capacity at a list's head is reused. */
#define EX_ARENA_BINS 64

struct ex_arena {
	struct ex_arena_chunk *head; /* current chunk; older ones after it */
	size_t total;                /* bytes in all chunks */
	struct ex_arena *pool_next;
	/* Blocks freed before the parse's end (not the chunk's last one): an
	 * array that grows by doubling leaves its old copy, which the next
	 * block of that capacity takes, so that a parse touches fewer pages.
	 * Each links to the next through its first bytes. */
	void *freed[EX_ARENA_BINS];
};

struct ex_block_header {
	size_t size;
	size_t kind; /* BLOCK_HEAP or BLOCK_ARENA */
};

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ex_arena *pool;
static _Thread_local struct ex_arena *current;

static size_t round16(size_t n)
{
	return (n + 15) & ~(size_t)15;
}

/* Chunks are mapped and unmapped directly: given back to the heap, large
 * blocks would raise malloc's mmap threshold and stay in the process. A
 * chunk is a whole number of 2 MB pages, aligned, and asks for transparent
 * huge pages: a parse's tree fills it from one end, and one fault that
 * clears 2 MB costs a fifth of the 512 faults of its small pages (a
 * one-file index pays them all, in a fresh process). Where huge pages are
 * off, the advice is ignored. Out of memory aborts, as gi_malloc does. */
#define EX_ARENA_HUGE ((size_t)2 << 20)

static struct ex_arena_chunk *chunk_new(size_t cap)
{
	size_t len =
	    (sizeof(struct ex_arena_chunk) + cap + EX_ARENA_HUGE - 1) & ~(EX_ARENA_HUGE - 1);
	unsigned char *m = mmap(NULL, len + EX_ARENA_HUGE, PROT_READ | PROT_WRITE,
	                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		abort();
	/* The aligned part; the rest goes back. */
	size_t lead = (EX_ARENA_HUGE - (uintptr_t)m % EX_ARENA_HUGE) % EX_ARENA_HUGE;
	if (lead)
		munmap(m, lead);
	munmap(m + lead + len, EX_ARENA_HUGE - lead);
	m += lead;
#ifdef MADV_HUGEPAGE
	madvise(m, len, MADV_HUGEPAGE);
#endif
	struct ex_arena_chunk *c = (struct ex_arena_chunk *)m;
	c->next = NULL;
	c->cap = len - sizeof(struct ex_arena_chunk);
	c->used = 0;
	c->mapped = len;
	return c;
}

static void chunk_free(struct ex_arena_chunk *c)
{
	if (c)
		munmap(c, c->mapped);
}

static size_t bin_of(size_t cap)
{
	return (cap / 16) % EX_ARENA_BINS;
}

static void *arena_alloc(struct ex_arena *a, size_t size)
{
	size_t want = round16(size), need = EX_ARENA_HEADER + want;
	void **bin = &a->freed[bin_of(want)];
	if (want >= sizeof(void *) && *bin &&
	    round16(((struct ex_block_header *)((unsigned char *)*bin - EX_ARENA_HEADER))->size) ==
	        want) {
		void *p = *bin;
		memcpy(bin, p, sizeof(void *));
		((struct ex_block_header *)((unsigned char *)p - EX_ARENA_HEADER))->size = size;
		return p;
	}
	struct ex_arena_chunk *c = a->head;
	if (!c || c->cap - c->used < need) {
		size_t cap = c ? c->cap * 2 : EX_ARENA_FIRST;
		if (cap < need)
			cap = round16(need);
		struct ex_arena_chunk *n = chunk_new(cap);
		n->next = c;
		a->head = c = n;
		a->total += n->cap;
	}
	struct ex_block_header *h = (struct ex_block_header *)(c->data + c->used);
	c->used += need;
	h->size = size;
	h->kind = BLOCK_ARENA;
	return (unsigned char *)h + EX_ARENA_HEADER;
}

static struct ex_block_header *header_of(void *p)
{
	return (struct ex_block_header *)((unsigned char *)p - EX_ARENA_HEADER);
}

/* True when `p` is the last block of the current arena's current chunk. */
static bool arena_is_last(const struct ex_arena *a, void *p)
{
	if (!a || !a->head)
		return false;
	const struct ex_arena_chunk *c = a->head;
	unsigned char *end = (unsigned char *)p + round16(header_of(p)->size);
	return end == c->data + c->used && (unsigned char *)p > c->data;
}

static void *ts_alloc(size_t size)
{
	if (current)
		return arena_alloc(current, size);
	struct ex_block_header *h = gi_malloc(EX_ARENA_HEADER + size);
	h->size = size;
	h->kind = BLOCK_HEAP;
	return (unsigned char *)h + EX_ARENA_HEADER;
}

static void *ts_calloc(size_t count, size_t size)
{
	if (size && count > SIZE_MAX / size - EX_ARENA_HEADER)
		abort();
	void *p = ts_alloc(count * size);
	memset(p, 0, count * size);
	return p;
}

static void ts_free(void *p)
{
	if (!p)
		return;
	struct ex_block_header *h = header_of(p);
	if (h->kind == BLOCK_HEAP) {
		free(h);
		return;
	}
	/* An arena block: the last one is given back, the others go to their
	 * list (or wait for ex_arena_end, too small to link). */
	if (!current)
		return;
	size_t cap = round16(h->size);
	if (arena_is_last(current, p)) {
		current->head->used -= EX_ARENA_HEADER + cap;
	} else if (cap >= sizeof(void *)) {
		void **bin = &current->freed[bin_of(cap)];
		memcpy(p, bin, sizeof(void *));
		*bin = p;
	}
}

static void *ts_realloc(void *p, size_t size)
{
	if (!p)
		return ts_alloc(size);
	struct ex_block_header *h = header_of(p);
	if (h->kind == BLOCK_HEAP) {
		h = gi_realloc(h, EX_ARENA_HEADER + size);
		h->size = size;
		return (unsigned char *)h + EX_ARENA_HEADER;
	}
	if (arena_is_last(current, p)) {
		struct ex_arena_chunk *c = current->head;
		size_t old = round16(h->size), want = round16(size);
		if (want <= old || c->cap - c->used >= want - old) {
			c->used = c->used - old + want;
			h->size = size;
			return p;
		}
	}
	void *n = ts_alloc(size);
	memcpy(n, p, h->size < size ? h->size : size);
	ts_free(p);
	return n;
}

void ex_arena_install(void)
{
	ts_set_allocator(ts_alloc, ts_calloc, ts_realloc, ts_free);
}

struct ex_arena *ex_arena_begin(size_t source_len)
{
	pthread_mutex_lock(&pool_lock);
	struct ex_arena *a = pool;
	if (a)
		pool = a->pool_next;
	pthread_mutex_unlock(&pool_lock);
	if (!a)
		a = gi_calloc(1, sizeof(*a));
	a->pool_next = NULL;
	/* One chunk for the whole parse where the source's size says how big. */
	size_t want = source_len * EX_ARENA_PER_BYTE;
	if (want < EX_ARENA_FIRST)
		want = EX_ARENA_FIRST;
	if (!a->head || a->head->cap < want) {
		chunk_free(a->head);
		a->head = chunk_new(want);
		a->total = a->head->cap;
	}
	current = a;
	return a;
}

void ex_arena_end(struct ex_arena *a)
{
	if (!a)
		return;
	current = NULL;
	/* Several chunks: one of their total size serves the next parse. */
	size_t total = a->total;
	if (a->head && a->head->next) {
		for (struct ex_arena_chunk *c = a->head, *next; c; c = next) {
			next = c->next;
			chunk_free(c);
		}
		a->head = NULL;
		a->total = 0;
		if (total <= EX_ARENA_KEEP) {
			a->head = chunk_new(total);
			a->total = a->head->cap;
		}
	} else if (a->head && total > EX_ARENA_KEEP) {
		chunk_free(a->head);
		a->head = NULL;
		a->total = 0;
	}
	if (a->head)
		a->head->used = 0;
	memset(a->freed, 0, sizeof(a->freed));
	pthread_mutex_lock(&pool_lock);
	a->pool_next = pool;
	pool = a;
	pthread_mutex_unlock(&pool_lock);
}
