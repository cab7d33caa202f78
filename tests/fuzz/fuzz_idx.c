/*
 * fuzz_idx: pack index parsing and lookup (store/idx.c). The input is a
 * whole .idx file, version 1 or 2, tried both as a sha1 (rawsz 20) and as
 * a sha256 (rawsz 32) index; idx_parse() wants the exact length the object
 * count implies, so usually only one of them gets past it.
 *
 * An index that parses is then read as pack.c reads one: idx_range() for
 * every first byte, idx_find() and idx_offset() for every id it holds (as
 * stored, and with the first byte its fan-out bucket gives it), for
 * neighbours of those ids, and for ids cut from the input. A hit must be
 * the id looked up. When the index
 * is honest (ids sorted, fan-out counting them), idx_find() must agree
 * with a plain binary search: its interpolation probes are the part most
 * likely to be wrong.
 */
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "idx.h"

/* Enough lookups to cover an index near -max_len, not to be slow on one. */
#define MAX_POSITIONS 2048

static bool
honest(const struct idx *idx)
{
	uint32_t lo, hi;

	for (unsigned b = 0; b < 256; b++) {
		idx_range(idx, b, &lo, &hi);
		for (uint32_t pos = lo; pos < hi; pos++)
			if (idx_oid(idx, pos)[0] != b)
				return false;
	}
	for (uint32_t pos = 1; pos < idx->nr; pos++)
		if (memcmp(idx_oid(idx, pos - 1), idx_oid(idx, pos),
		    idx->rawsz) >= 0)
			return false;
	return true;
}

/* The first byte the fan-out gives the id at pos (< nr). */
static unsigned char
bucket_of(const struct idx *idx, uint32_t pos)
{
	uint32_t lo, hi;
	unsigned b = 0;

	for (idx_range(idx, b, &lo, &hi); pos >= hi && b < 255;
	    idx_range(idx, ++b, &lo, &hi))
		;
	return (unsigned char)b;
}

/* The reference: bisection over the whole (honest) index. */
static bool
bisect(const struct idx *idx, const unsigned char *raw, uint32_t *pos)
{
	uint32_t lo = 0, hi = idx->nr;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int cmp = memcmp(idx_oid(idx, mid), raw, idx->rawsz);

		if (!cmp) {
			*pos = mid;
			return true;
		}
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static void
lookup(const struct idx *idx, const unsigned char *raw, bool sorted)
{
	uint32_t pos = UINT32_MAX, want, lo, hi;
	uint64_t off;
	bool found = idx_find(idx, raw, &pos);

	idx_range(idx, raw[0], &lo, &hi);
	if (found) {
		FUZZ_CHECK(pos >= lo && pos < hi && pos < idx->nr);
		FUZZ_CHECK(!memcmp(idx_oid(idx, pos) + 1, raw + 1,
		    idx->rawsz - 1));
		/*
		 * idx_find() compares from the second byte on and trusts
		 * the fan-out for the first; an index whose fan-out lies
		 * makes it report a hit on another id.
		 */
		FUZZ_CHECK(idx_oid(idx, pos)[0] == raw[0]);
		(void)idx_offset(idx, pos, &off, "fuzz.idx");
	}
	if (sorted) {
		FUZZ_CHECK(found == bisect(idx, raw, &want));
		FUZZ_CHECK(!found || pos == want);
	}
}

static void
one(const uint8_t *data, size_t size, size_t rawsz)
{
	unsigned char raw[32];
	struct idx idx;
	uint32_t lo, hi, prev = 0, n;
	uint64_t off;
	bool sorted;

	if (idx_parse(&idx, data, size, rawsz, "fuzz.idx") < 0)
		return;
	FUZZ_CHECK(idx.version == 1 || idx.version == 2);
	FUZZ_CHECK(idx.rawsz == rawsz);
	FUZZ_CHECK(fuzz_within(idx.pack_checksum, 2 * rawsz, data, size));
	if (idx.nr) {
		FUZZ_CHECK(fuzz_within(idx.ids, (size_t)(idx.nr - 1) *
		    idx.stride + rawsz, data, size));
		if (idx.version == 2) {
			FUZZ_CHECK(fuzz_within(idx.off32, (size_t)idx.nr * 4,
			    data, size));
			FUZZ_CHECK(fuzz_within(idx.off64, idx.n64 * 8, data,
			    size));
		}
	}
	for (unsigned b = 0; b < 256; b++) {
		idx_range(&idx, b, &lo, &hi);
		FUZZ_CHECK(lo == prev && lo <= hi && hi <= idx.nr);
		prev = hi;
	}
	FUZZ_CHECK(prev == idx.nr);

	sorted = honest(&idx);
	n = idx.nr < MAX_POSITIONS ? idx.nr : MAX_POSITIONS;
	for (uint32_t pos = 0; pos < n; pos++) {
		uint32_t at = UINT32_MAX;

		(void)idx_offset(&idx, pos, &off, "fuzz.idx");
		memcpy(raw, idx_oid(&idx, pos), rawsz);
		if (sorted)
			FUZZ_CHECK(idx_find(&idx, raw, &at) && at == pos);
		else
			lookup(&idx, raw, false);
		/* The id as its fan-out bucket says it begins. */
		raw[0] = bucket_of(&idx, pos);
		lookup(&idx, raw, sorted);
		raw[0] = idx_oid(&idx, pos)[0];
		/* Neighbours, mostly absent; some share the 64-bit key. */
		raw[rawsz - 1]++;
		lookup(&idx, raw, sorted);
		raw[rawsz - 1] -= 2;
		lookup(&idx, raw, sorted);
		raw[rawsz - 1]++;
		raw[8] ^= 0x80;
		lookup(&idx, raw, sorted);
	}

	/* Ids the index never held: the checksums, slices, extremes. */
	lookup(&idx, idx.pack_checksum, sorted);
	lookup(&idx, idx.pack_checksum + rawsz, sorted);
	for (size_t at = 0; at + rawsz <= size && at < 64 * rawsz;
	    at += rawsz / 2)
		lookup(&idx, data + at, sorted);
	memset(raw, 0, sizeof(raw));
	lookup(&idx, raw, sorted);
	memset(raw, 0xff, sizeof(raw));
	lookup(&idx, raw, sorted);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_quiet();
	one(data, size, 20);
	one(data, size, 32);
	return 0;
}
