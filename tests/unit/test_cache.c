/*
 * The delta base cache: what was put is got back, byte for byte, under its
 * (pack, offset); bytes are bounded, least recently used first out; the
 * hash keeps every entry findable as it grows past its first buckets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "unit.h"

/* The bytes of entry k: its number, repeated, so a mix-up shows. */
static size_t
fill(unsigned char *buf, unsigned k)
{
	size_t len = 16 + k % 64;

	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(k >> (8 * (i % 4)));
	return len;
}

static bool
got_back(struct cache *c, uint64_t pack, unsigned k)
{
	unsigned char want[128], *got;
	size_t wantlen = fill(want, k), len;
	enum obj_type type;
	bool ok;

	if (!cache_get(c, pack, (uint64_t)k * 1000, &got, &len, &type))
		return false;
	ok = len == wantlen && !memcmp(got, want, len) && type == OBJ_BLOB;
	free(got);
	return ok;
}

void
test_cache(void)
{
	unsigned char buf[128], big[1001] = { 0 };
	uint64_t hits, misses;
	unsigned n = 20000, bad = 0;
	struct cache *c = cache_new((size_t)64 << 20);

	/* Many more entries than the 4096 buckets it starts with. */
	for (unsigned k = 0; k < n; k++)
		cache_put(c, 7, (uint64_t)k * 1000, buf, fill(buf, k), OBJ_BLOB);
	for (unsigned k = 0; k < n; k++)
		bad += !got_back(c, 7, k);
	check_int(bad, 0, "all %u entries come back whole past the first buckets", n);
	check(!cache_get(c, 8, 0, &(unsigned char *){ NULL }, &(size_t){ 0 },
	    &(enum obj_type){ 0 }), "the same offset in another pack is a miss");
	cache_counts(c, &hits, &misses);
	check_u64(hits, n, "hits counted");
	check_u64(misses, 1, "misses counted");
	cache_free(c);

	/* A cache of 1000 bytes keeps the most recently used entries. */
	c = cache_new(1000);
	for (unsigned k = 0; k < 100; k++) {
		cache_put(c, 1, (uint64_t)k * 1000, buf, fill(buf, k), OBJ_BLOB);
		if (k > 0 && k % 10 == 0)
			(void)got_back(c, 1, 0);	/* keep entry 0 fresh */
	}
	check(got_back(c, 1, 0), "a recently used entry stays");
	check(got_back(c, 1, 99), "the newest entry stays");
	check(!got_back(c, 1, 1), "the least recently used went first");
	cache_put(c, 1, 5000000, big, sizeof(big), OBJ_BLOB);
	check(!cache_get(c, 1, 5000000, &(unsigned char *){ NULL },
	    &(size_t){ 0 }, &(enum obj_type){ 0 }),
	    "an entry larger than the cache is not kept");
	cache_free(c);
}
