/*
 * alloc.c - allocation that aborts on out-of-memory (see alloc.h).
 */
#include "base/alloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void out_of_memory(size_t size)
{
	fprintf(stderr, "giulia: out of memory allocating %zu bytes\n", size);
	abort();
}

void *gi_malloc(size_t size)
{
	void *p = malloc(size ? size : 1);
	if (!p)
		out_of_memory(size);
	return p;
}

void *gi_calloc(size_t count, size_t size)
{
	if (size && count > SIZE_MAX / size)
		out_of_memory(SIZE_MAX);
	void *p = calloc(count ? count : 1, size ? size : 1);
	if (!p)
		out_of_memory(count * size);
	return p;
}

void *gi_realloc(void *ptr, size_t size)
{
	void *p = realloc(ptr, size ? size : 1);
	if (!p)
		out_of_memory(size);
	return p;
}

void *gi_reallocarray(void *ptr, size_t count, size_t size)
{
	if (size && count > SIZE_MAX / size)
		out_of_memory(SIZE_MAX);
	return gi_realloc(ptr, count * size);
}

char *gi_strdup(const char *s)
{
	if (!s)
		return NULL;
	return gi_strndup(s, strlen(s));
}

char *gi_strndup(const char *s, size_t len)
{
	char *p = gi_malloc(len + 1);
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

void gi_free(void *ptr)
{
	free(ptr);
}
