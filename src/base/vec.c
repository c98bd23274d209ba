/*
 * vec.c - growable array (see vec.h).
 */
#include "base/vec.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

void gi_vec_init(struct gi_vec *v, size_t elem_size)
{
	v->items = NULL;
	v->len = 0;
	v->cap = 0;
	v->elem_size = elem_size;
}

void gi_vec_destroy(struct gi_vec *v)
{
	gi_free(v->items);
	gi_vec_init(v, v->elem_size);
}

void *gi_vec_push_zero(struct gi_vec *v)
{
	if (v->len == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 8;
		v->items = gi_reallocarray(v->items, v->cap, v->elem_size);
	}
	void *slot = (char *)v->items + v->len * v->elem_size;
	memset(slot, 0, v->elem_size);
	v->len++;
	return slot;
}

void *gi_vec_push(struct gi_vec *v, const void *elem)
{
	void *slot = gi_vec_push_zero(v);
	memcpy(slot, elem, v->elem_size);
	return slot;
}

void *gi_vec_get(const struct gi_vec *v, size_t i)
{
	assert(i < v->len);
	return (char *)v->items + i * v->elem_size;
}

void gi_vec_sort(struct gi_vec *v, int (*cmp)(const void *, const void *))
{
	if (v->len > 1)
		qsort(v->items, v->len, v->elem_size, cmp);
}
