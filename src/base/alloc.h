/*
 * alloc.h - the one allocation wrapper of Giulia.
 *
 * Every heap allocation in the project goes through these functions. They
 * never return NULL: on out-of-memory they print a message and abort, so
 * callers do not carry error paths for a condition they cannot recover from.
 * Thread-safe (they only call the C library's allocator).
 */
#ifndef GIULIA_BASE_ALLOC_H
#define GIULIA_BASE_ALLOC_H

#include <stddef.h>

/* Returns a new block of `size` bytes (at least 1) that the caller frees with gi_free(). */
void *gi_malloc(size_t size);
/* Returns a zeroed block of count*size bytes; aborts on overflow as on out-of-memory. */
void *gi_calloc(size_t count, size_t size);
/* Resizes `ptr` (which may be NULL) to `size` bytes; the old pointer is invalid after the call. */
void *gi_realloc(void *ptr, size_t size);
/* Resizes an array of `count` elements of `size` bytes, checking the multiplication. */
void *gi_reallocarray(void *ptr, size_t count, size_t size);
/* Returns a copy of the NUL-terminated `s` (NULL gives NULL) that the caller frees. */
char *gi_strdup(const char *s);
/* Returns a NUL-terminated copy of the first `len` bytes of `s` that the caller frees. */
char *gi_strndup(const char *s, size_t len);
/* Releases a block from this module; NULL does nothing. */
void gi_free(void *ptr);

#endif
