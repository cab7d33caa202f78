/*
 * cache: recently rebuilt delta bases, so that reading neighbouring
 * objects of a pack does not inflate and apply the same chain again (git
 * keeps a delta_base_cache for the same reason).
 *
 * Keyed by (pack serial, offset): a serial, unlike a pack's address, is
 * never reused, so an entry can never answer for another pack. Bounded in
 * bytes, least recently used out first; get and put copy, so callers own
 * what they hold. Thread-safe: one mutex, held for a hash lookup and a
 * memcpy.
 */
#ifndef ODBFS_CACHE_H
#define ODBFS_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "odbstore/object.h"

/* Objects larger than this are not cached: they would crowd out the rest. */
#define CACHE_MAX_ENTRY ((size_t)8 << 20)

struct cache;

/* A cache holding at most max_bytes of object data; NULL: no memory. */
struct cache *cache_new(size_t max_bytes);
void cache_free(struct cache *c);

/*
 * The object rebuilt at (pack, off): true with *buf a malloc'd copy
 * (free() it) of *len bytes and its type.
 */
bool cache_get(struct cache *c, uint64_t pack, uint64_t off,
    unsigned char **buf, size_t *len, enum obj_type *type);

/* Remember a copy of buf as the object at (pack, off). */
void cache_put(struct cache *c, uint64_t pack, uint64_t off,
    const unsigned char *buf, size_t len, enum obj_type type);

/* Drop every entry: memory is short, or the daemon idle. */
void cache_clear(struct cache *c);

/* Counters since the cache was made. */
void cache_counts(struct cache *c, uint64_t *hits, uint64_t *misses);

#endif
