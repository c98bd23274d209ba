/*
 * hash.c - FNV-1a, 64-bit (see hash.h).
 */
#include "base/hash.h"

uint64_t gi_hash64(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = seed;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}
