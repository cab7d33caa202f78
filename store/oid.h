/*
 * oid: what the store needs of ids beyond the public odbstore/oid.h,
 * which it includes: the lookup path's prefix, sorting runs of ids.
 */
#ifndef ODBFS_OID_H
#define ODBFS_OID_H

#include <stdint.h>

#include "be.h"
#include "odbstore/oid.h"

/* The two lengths an id has (OID_RAWSZ_MAX is the larger). */
#define OID_RAWSZ_SHA1 20
#define OID_RAWSZ_SHA256 32

/*
 * An id's first eight bytes as a big-endian number: one load and a byte
 * swap. The lookup path starts here (the snapshot's filter, the pack
 * table), and a byte loop, which gcc -O2 keeps as a loop, made a packed
 * hit a third slower in bench/lookup.
 */
static inline uint64_t
oid_prefix64(const unsigned char *raw)
{
	return be64(raw);
}

/* memcmp() of two ids of *(size_t *)rawsz bytes, for qsort_r(). */
int oid_cmp_r(const void *a, const void *b, void *rawsz);

/* Sort n ids of rawsz bytes and keep each once: the count kept. */
size_t oid_sort_unique(unsigned char *ids, size_t n, size_t rawsz);

#endif
