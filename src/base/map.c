/*
 * map.c - string-keyed hash map (see map.h). The table is kept at most
 * half full so that probe sequences stay short.
 */
#include "base/map.h"

#include <assert.h>
#include <string.h>

#include "base/alloc.h"
#include "base/hash.h"

void gi_map_init(struct gi_map *m)
{
	m->slots = NULL;
	m->cap = 0;
	m->len = 0;
	m->keys_borrowed = false;
}

void gi_map_destroy(struct gi_map *m)
{
	for (size_t i = 0; m->keys_borrowed == false && i < m->cap; i++)
		gi_free(m->slots[i].key);
	gi_free(m->slots);
	gi_map_init(m);
}

static struct gi_map_slot *find(const struct gi_map *m, const char *key, size_t len, uint64_t h)
{
	if (!m->cap)
		return NULL;
	size_t mask = m->cap - 1;
	for (size_t i = h & mask;; i = (i + 1) & mask) {
		struct gi_map_slot *s = &m->slots[i];
		if (!s->key)
			return s;
		if (s->hash == h && strncmp(s->key, key, len) == 0 && s->key[len] == '\0')
			return s;
	}
}

void *gi_map_getn(const struct gi_map *m, const char *key, size_t len)
{
	struct gi_map_slot *s = find(m, key, len, gi_hash64(key, len, GI_HASH_SEED));
	return s && s->key ? s->value : NULL;
}

void *gi_map_get(const struct gi_map *m, const char *key)
{
	return gi_map_getn(m, key, strlen(key));
}

const char *gi_map_key(const struct gi_map *m, const char *key)
{
	size_t len = strlen(key);
	struct gi_map_slot *s = find(m, key, len, gi_hash64(key, len, GI_HASH_SEED));
	return s ? s->key : NULL;
}

static void grow(struct gi_map *m)
{
	struct gi_map_slot *old = m->slots;
	size_t old_cap = m->cap;
	m->cap = old_cap ? old_cap * 2 : 16;
	m->slots = gi_calloc(m->cap, sizeof(*m->slots));
	for (size_t i = 0; i < old_cap; i++) {
		if (!old[i].key)
			continue;
		size_t mask = m->cap - 1;
		size_t j = old[i].hash & mask;
		while (m->slots[j].key)
			j = (j + 1) & mask;
		m->slots[j] = old[i];
	}
	gi_free(old);
}

static void *put(struct gi_map *m, const char *key, uint64_t h, void *value, bool copy)
{
	if ((m->len + 1) * 2 > m->cap)
		grow(m);
	size_t len = strlen(key);
	struct gi_map_slot *s = find(m, key, len, h);
	if (s->key) {
		void *prev = s->value;
		s->value = value;
		return prev;
	}
	s->key = copy ? gi_strndup(key, len) : (char *)key;
	s->hash = h;
	s->value = value;
	m->len++;
	return NULL;
}

void *gi_map_put(struct gi_map *m, const char *key, void *value)
{
	if (m->keys_borrowed) {
		for (size_t i = 0; i < m->cap; i++)
			if (m->slots[i].key)
				m->slots[i].key = gi_strdup(m->slots[i].key);
		m->keys_borrowed = false;
	}
	return put(m, key, gi_hash64(key, strlen(key), GI_HASH_SEED), value, true);
}

void *gi_map_put_borrowed(struct gi_map *m, const char *key, void *value)
{
	assert(m->keys_borrowed || m->len == 0);
	m->keys_borrowed = true;
	return put(m, key, gi_hash64(key, strlen(key), GI_HASH_SEED), value, false);
}

void *gi_map_put_borrowed_hashed(struct gi_map *m, const char *key, unsigned long long hash,
                                 void *value)
{
	assert(m->keys_borrowed || m->len == 0);
	m->keys_borrowed = true;
	return put(m, key, hash, value, false);
}
