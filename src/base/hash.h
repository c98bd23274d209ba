/*
 * hash.h - non-cryptographic 64-bit hashing (FNV-1a) for tables and content checks.
 * Thread-safe.
 */
#ifndef GIULIA_BASE_HASH_H
#define GIULIA_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define GI_HASH_SEED 0xcbf29ce484222325ULL

/* Hashes `len` bytes, continuing from `seed` (GI_HASH_SEED to start). */
uint64_t gi_hash64(const void *data, size_t len, uint64_t seed);

#endif
