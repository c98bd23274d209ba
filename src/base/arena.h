/*
 * arena.h - a bump allocator for data that lives and dies together
 * (the facts of one file, the work of one request).
 *
 * Blocks come from gi_malloc, so allocation never fails. Freeing the arena
 * frees everything allocated from it at once. Not thread-safe.
 */
#ifndef GIULIA_BASE_ARENA_H
#define GIULIA_BASE_ARENA_H

#include <stddef.h>

struct gi_arena_block;

struct gi_arena {
	struct gi_arena_block *head;
	size_t used;  /* bytes in head */
	size_t total; /* bytes handed out, for accounting */
};

void gi_arena_init(struct gi_arena *a);
/* Frees every block; the arena is empty and reusable afterwards. */
void gi_arena_destroy(struct gi_arena *a);
/* Returns `size` bytes aligned for any type, valid until destroy. */
void *gi_arena_alloc(struct gi_arena *a, size_t size);
/* Zeroed variant of gi_arena_alloc, for `count` elements of `size` bytes. */
void *gi_arena_calloc(struct gi_arena *a, size_t count, size_t size);
/* Copies `len` bytes of `s` plus a NUL into the arena. */
char *gi_arena_strndup(struct gi_arena *a, const char *s, size_t len);
char *gi_arena_strdup(struct gi_arena *a, const char *s);
/* Formats into the arena. */
char *gi_arena_printf(struct gi_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
