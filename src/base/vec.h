/*
 * vec.h - a growable array of fixed-size elements.
 *
 * Embedded by its owner (gi_vec_init / gi_vec_destroy). Elements are copied in
 * by value; pointers into the array are invalidated by any push. Typed access
 * goes through GI_VEC_AT. Not thread-safe.
 */
#ifndef GIULIA_BASE_VEC_H
#define GIULIA_BASE_VEC_H

#include <stddef.h>

struct gi_vec {
	void *items;
	size_t len;
	size_t cap;
	size_t elem_size;
};

#define GI_VEC_AT(vec, type, i) (((type *)(vec)->items)[i])

/* Prepares an empty array of elements of `elem_size` bytes. */
void gi_vec_init(struct gi_vec *v, size_t elem_size);
/* Releases the array's memory (not what its elements point to). */
void gi_vec_destroy(struct gi_vec *v);
/* Copies `elem` to the end; returns a pointer to the stored copy. */
void *gi_vec_push(struct gi_vec *v, const void *elem);
/* Appends a zeroed element and returns a pointer to it. */
void *gi_vec_push_zero(struct gi_vec *v);
/* Returns element `i` (asserts i < len). */
void *gi_vec_get(const struct gi_vec *v, size_t i);
/* Sorts the elements with qsort's comparison. */
void gi_vec_sort(struct gi_vec *v, int (*cmp)(const void *, const void *));

#endif
