/*
 * idx: reading pack indexes, for the pack that owns one: parsed once when
 * the pack is opened, searched on every lookup that reaches the pack.
 * Lookups touch the mapping only: the fan-out gives the range of ids sharing a first byte,
 * and an interpolation search within it finds the id or proves it absent.
 * The mapped file may change after it was checked (map.h), so the fan-out
 * is clamped each time it is read.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "be.h"
#include "idx.h"
#include "log.h"

int
idx_parse(struct idx *idx, const unsigned char *map, size_t size, size_t rawsz,
    const char *name)
{
	size_t hdr = 0, fixed, per, rest;
	uint32_t prev = 0;

	memset(idx, 0, sizeof(*idx));
	idx->map = map;
	idx->size = size;
	idx->rawsz = rawsz;
	if (size >= IDX_HEADER_V2 && !memcmp(map, IDX_V2_MAGIC, 4)) {
		if (be32(map + 4) != 2)
			return log_corrupt("%s: unsupported index version %u "
			    "(offset 4)", name, be32(map + 4));
		idx->version = 2;
		hdr = IDX_HEADER_V2;
	} else {
		idx->version = 1;
	}
	if (size < hdr + IDX_FANOUT_SIZE + 2 * rawsz)
		return log_corrupt("%s: index is too small (%zu bytes, "
		    "offset %zu)", name, size, size);
	idx->fanout = map + hdr;
	for (unsigned b = 0; b < 256; b++) {
		uint32_t n = be32(idx->fanout + 4 * b);

		if (n < prev)
			return log_corrupt("%s: fan-out decreases at byte %u "
			    "(offset %zu)", name, b, hdr + 4 * b);
		prev = n;
	}
	idx->nr = prev;
	fixed = hdr + IDX_FANOUT_SIZE + 2 * rawsz;
	per = idx->version == 2 ? rawsz + 8 : rawsz + 4;
	if (idx->nr > (size - fixed) / per)
		return log_corrupt("%s: index is too small for %u objects "
		    "(offset %zu)", name, idx->nr, size);
	rest = size - fixed - (size_t)idx->nr * per;
	if (idx->version == 1) {
		if (rest)
			return log_corrupt("%s: index is %zu bytes longer than "
			    "%u objects need", name, rest, idx->nr);
		idx->stride = rawsz + 4;
		idx->off32 = map + hdr + IDX_FANOUT_SIZE;
		idx->ids = idx->off32 + 4;
	} else {
		/* At most one 64-bit offset for each object but the first. */
		if (rest % 8 || rest / 8 > (idx->nr ? idx->nr - 1 : 0))
			return log_corrupt("%s: index size does not match %u "
			    "objects", name, idx->nr);
		idx->stride = rawsz;
		idx->ids = map + hdr + IDX_FANOUT_SIZE;
		idx->off32 = idx->ids + (size_t)idx->nr * (rawsz + 4);
		idx->off64 = idx->off32 + (size_t)idx->nr * 4;
		idx->n64 = rest / 8;
	}
	idx->pack_checksum = map + size - 2 * rawsz;
	return 0;
}

int
idx_open(struct idx *idx, const char *path, size_t rawsz)
{
	struct map file;
	uint64_t lost;
	int ret;

	memset(idx, 0, sizeof(*idx));
	if ((ret = map_path(&file, path)) < 0)
		return ret;
	ret = idx_parse(idx, file.base, file.size, rawsz, path);
	if (ret == 0 && map_shrank(&file, &lost))
		ret = log_corrupt("%s: index shrank while it was read "
		    "(offset %llu)", path, (unsigned long long)lost);
	if (ret < 0) {
		map_close(&file);
		return ret;
	}
	idx->file = file;
	return 0;
}

void
idx_close(struct idx *idx)
{
	map_close(&idx->file);
	idx->map = NULL;
}

void
idx_range(const struct idx *idx, unsigned b, uint32_t *lo, uint32_t *hi)
{
	uint32_t l = b ? be32(idx->fanout + 4 * (b - 1)) : 0;
	uint32_t h = be32(idx->fanout + 4 * b);

	*hi = h < idx->nr ? h : idx->nr;
	*lo = l < *hi ? l : *hi;
}

#define IDX_INTERPOLATE 6

/* The 64 bits of an id after its first byte, which the fan-out settles. */
static inline uint64_t
key_of(const unsigned char *raw)
{
	return be64(raw + 1);
}

/*
 * Ids are hashes, so within a fan-out bucket their next bytes are uniform:
 * interpolation finds an id in about three probes where bisection takes
 * twelve for a million objects, and each probe is a cache miss. After
 * IDX_INTERPOLATE steps it bisects, so a hostile index cannot make a
 * lookup cost more than that many probes beyond a binary search.
 */
bool
idx_find(const struct idx *idx, const unsigned char *raw, uint32_t *pos)
{
	uint64_t key = key_of(raw), klo = 0, khi = UINT64_MAX;
	uint32_t lo, hi;
	unsigned step = 0, bound;

	idx_range(idx, raw[0], &lo, &hi);
	/* The bound promised above: bisection's probes, plus the steps. */
	bound = IDX_INTERPOLATE + 1 + (hi > lo ? 32 -
	    (unsigned)__builtin_clz(hi - lo) : 0);
	(void)bound;
	while (lo < hi) {
		uint32_t mid;
		int cmp;

		if (++step > IDX_INTERPOLATE || hi - lo < 8 || key < klo ||
		    key > khi)
			mid = lo + (hi - lo) / 2;
		else
			mid = lo + (uint32_t)(((unsigned __int128)(key - klo) *
			    (hi - lo)) / ((unsigned __int128)(khi - klo) + 1));
		assert(mid >= lo && mid < hi && step <= bound);
		/*
		 * The whole id, first byte too: a hostile fan-out may put an
		 * id in the wrong bucket, and must not make it match.
		 */
		cmp = memcmp(idx_oid(idx, mid), raw, idx->rawsz);
		if (!cmp) {
			*pos = mid;
			return true;
		}
		if (cmp > 0) {
			hi = mid;
			khi = key_of(idx_oid(idx, mid));
		} else {
			lo = mid + 1;
			klo = key_of(idx_oid(idx, mid));
		}
	}
	return false;
}

int
idx_offset(const struct idx *idx, uint32_t pos, uint64_t *off,
    const char *name)
{
	uint32_t o;

	if (idx->version == 1) {
		*off = be32(idx->ids + (size_t)pos * idx->stride - 4);
		return 0;
	}
	o = be32(idx->off32 + (size_t)pos * 4);
	if (!(o & 0x80000000u)) {
		*off = o;
		return 0;
	}
	o &= 0x7fffffffu;
	if (o >= idx->n64)
		return log_corrupt("%s: 64-bit offset %u of object %u is "
		    "beyond the table's %zu entries", name, o, pos, idx->n64);
	*off = be64(idx->off64 + (size_t)o * 8);
	if (*off >> 63)
		return log_corrupt("%s: 64-bit offset %u of object %u is %llu, "
		    "beyond any pack (index offset %zu)", name, o, pos,
		    (unsigned long long)*off,
		    (size_t)(idx->off64 - idx->map) + (size_t)o * 8);
	return 0;
}
