/*
 * map.h - a hash map from strings to pointers (open addressing, linear probing).
 *
 * The map copies its keys and owns the copies; values are borrowed pointers
 * that the caller manages. Embedded by its owner (gi_map_init / gi_map_destroy).
 * Not thread-safe.
 */
#ifndef GIULIA_BASE_MAP_H
#define GIULIA_BASE_MAP_H

#include <stdbool.h>
#include <stddef.h>

struct gi_map_slot {
	char *key; /* NULL: empty */
	void *value;
	unsigned long long hash;
};

struct gi_map {
	struct gi_map_slot *slots;
	size_t cap; /* power of two or 0 */
	size_t len;
	bool keys_borrowed; /* gi_map_put_borrowed: the keys are the caller's */
};

/* Iteration: for (size_t i = 0; i < m.cap; i++) if (m.slots[i].key) ... */

void gi_map_init(struct gi_map *m);
/* Frees the keys and the table; values are left to the caller. */
void gi_map_destroy(struct gi_map *m);
/* Returns the value for `key`, or NULL when absent. */
void *gi_map_get(const struct gi_map *m, const char *key);
/* Like gi_map_get for a key of `len` bytes that need not be NUL-terminated. */
void *gi_map_getn(const struct gi_map *m, const char *key, size_t len);
/* Sets `key` to `value`; returns the previous value or NULL. */
void *gi_map_put(struct gi_map *m, const char *key, void *value);
/* Sets `key` to `value` without copying `key`, which must outlive the map
 * and stay unchanged: for maps read back whole from a file (the graph's
 * snapshot), where a copy per key would cost more than the lookup saves.
 * Only on a map that is empty or filled this way; a later gi_map_put copies
 * every key first, so the map owns its keys again. Returns the previous
 * value or NULL. */
void *gi_map_put_borrowed(struct gi_map *m, const char *key, void *value);
/* gi_map_put_borrowed with the key's hash given: the one a gi_map holds in
 * its slot (gi_hash64 of the key with GI_HASH_SEED), read back from a file
 * the map was written to. A wrong hash only makes the key unfindable. */
void *gi_map_put_borrowed_hashed(struct gi_map *m, const char *key, unsigned long long hash,
                                 void *value);
/* Returns the map's own copy of `key` (stable until destroy), or NULL. */
const char *gi_map_key(const struct gi_map *m, const char *key);

#endif
