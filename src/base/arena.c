/*
 * arena.c - bump allocator (see arena.h). Blocks are 64 KiB unless one
 * allocation needs more, in which case it gets a block of its own.
 */
#include "base/arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"

#define ARENA_BLOCK_SIZE (64 * 1024)
#define ARENA_ALIGN      16

struct gi_arena_block {
	struct gi_arena_block *next;
	size_t size;
	_Alignas(ARENA_ALIGN) unsigned char data[];
};

void gi_arena_init(struct gi_arena *a)
{
	a->head = NULL;
	a->used = 0;
	a->total = 0;
}

void gi_arena_destroy(struct gi_arena *a)
{
	struct gi_arena_block *b = a->head;
	while (b) {
		struct gi_arena_block *next = b->next;
		gi_free(b);
		b = next;
	}
	gi_arena_init(a);
}

void *gi_arena_alloc(struct gi_arena *a, size_t size)
{
	if (size > SIZE_MAX - 2 * ARENA_ALIGN - sizeof(struct gi_arena_block))
		size = SIZE_MAX / 2; /* gi_malloc will abort: an impossible request */
	size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (!a->head || a->used + size > a->head->size) {
		size_t bsize = size > ARENA_BLOCK_SIZE ? size : ARENA_BLOCK_SIZE;
		struct gi_arena_block *b = gi_malloc(sizeof(*b) + bsize);
		b->size = bsize;
		b->next = a->head;
		a->head = b;
		a->used = 0;
	}
	void *p = a->head->data + a->used;
	a->used += size;
	a->total += size;
	return p;
}

void *gi_arena_calloc(struct gi_arena *a, size_t count, size_t size)
{
	if (size && count > SIZE_MAX / size)
		count = SIZE_MAX / size; /* gi_arena_alloc aborts */
	void *p = gi_arena_alloc(a, count * size);
	memset(p, 0, count * size);
	return p;
}

char *gi_arena_strndup(struct gi_arena *a, const char *s, size_t len)
{
	char *p = gi_arena_alloc(a, len + 1);
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *gi_arena_strdup(struct gi_arena *a, const char *s)
{
	return gi_arena_strndup(a, s, strlen(s));
}

char *gi_arena_printf(struct gi_arena *a, const char *fmt, ...)
{
	va_list ap, copy;
	va_start(ap, fmt);
	va_copy(copy, ap);
	int n = vsnprintf(NULL, 0, fmt, copy);
	va_end(copy);
	if (n < 0)
		n = 0;
	char *p = gi_arena_alloc(a, (size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}
