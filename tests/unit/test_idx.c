/*
 * test_idx: idx.c on pack index images built in memory by build(), in
 * versions 1 and 2 and for ids of 20 and 32 bytes. idx_parse() must accept
 * them; idx_find() must find every id, including those in the fan-out's
 * first and last buckets, and none of the ids beside them; idx_offset()
 * must give each offset, 64-bit ones included. Hostile images - too small,
 * a bad version, a decreasing fan-out, a size that does not match the
 * object count, 64-bit offsets that index beyond their table - must be
 * refused. The size rule for v2 is git's load_idx() in packfile.c.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "idx.h"
#include "odbstore/log.h"
#include "oid.h"
#include "unit.h"

#define CORRUPT (-EFSCORRUPTED)
#define NAME "test.idx"
#define NR 10

struct obj {
	unsigned char id[OID_RAWSZ_MAX];
	uint64_t off;
};

/* An id: first byte, then fill, with last as its last byte. */
struct idspec {
	unsigned char first, fill, last;
};

/* Sorted; v1 cannot hold 0x123456789a and gets 0xffffffff instead. */
static const struct {
	struct idspec id;
	uint64_t off_v2, off_v1;
} objs[NR] = {
	{ { 0x00, 0x00, 0x00 }, 12, 12 },
	{ { 0x00, 0x00, 0x01 }, 100, 100 },
	{ { 0x00, 0xff, 0xff }, 200, 200 },
	{ { 0x01, 0x23, 0x45 }, 300, 300 },
	{ { 0x7f, 0x00, 0x00 }, 400, 400 },
	{ { 0x80, 0x55, 0x55 }, 0x7fffffff, 0x7fffffff },
	{ { 0xfe, 0xaa, 0xaa }, 0x80000000, 0x80000000 },
	{ { 0xff, 0x00, 0x00 }, 0x123456789a, 0xffffffff },
	{ { 0xff, 0xff, 0xfe }, 500, 500 },
	{ { 0xff, 0xff, 0xff }, 600, 600 },
};

/* Ids next to the present ones, or sharing all but their first byte. */
static const struct idspec absent[] = {
	{ 0x00, 0x00, 0x02 },
	{ 0x00, 0xff, 0xfe },
	{ 0x01, 0x00, 0x00 },	/* the tail of objs[0], another bucket */
	{ 0x01, 0x23, 0x44 },
	{ 0x01, 0x23, 0x46 },
	{ 0x02, 0x23, 0x45 },	/* the tail of objs[3], an empty bucket */
	{ 0x7e, 0xff, 0xff },
	{ 0x80, 0x55, 0x54 },
	{ 0x80, 0x55, 0x56 },
	{ 0x81, 0x00, 0x00 },
	{ 0xfe, 0xaa, 0xab },
	{ 0xff, 0x00, 0x01 },
	{ 0xff, 0xff, 0xfd },
};

static void
mkid(unsigned char *id, size_t rawsz, struct idspec s)
{
	id[0] = s.first;
	memset(id + 1, s.fill, rawsz - 2);
	id[rawsz - 1] = s.last;
}

static void
put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

/*
 * Lay out an index of version 1 or 2 for the nr objects at o, which must
 * be sorted by id; offsets of 2^31 and above go to the 64-bit table in v2.
 * The pack checksum is 0xc0, 0xc1, ...; the index's own 0xe0, 0xe1, ...
 * Returns a malloc'd image of *size bytes.
 */
static unsigned char *
build(unsigned version, size_t rawsz, const struct obj *o, size_t nr,
    size_t *size)
{
	size_t n64 = 0, hdr = version == 2 ? IDX_HEADER_V2 : 0;
	unsigned char *buf, *p;

	for (size_t i = 0; i < nr; i++)
		if (version == 2 && o[i].off >= 0x80000000u)
			n64++;
	*size = hdr + IDX_FANOUT_SIZE + nr * (rawsz + 4) + 2 * rawsz;
	if (version == 2)
		*size += nr * 4 + n64 * 8;
	if (!(buf = calloc(1, *size)))
		abort();
	p = buf;
	if (version == 2) {
		memcpy(p, IDX_V2_MAGIC, 4);
		put32(p + 4, 2);
		p += IDX_HEADER_V2;
	}
	for (unsigned b = 0; b < 256; b++) {
		uint32_t n = 0;

		while (n < nr && o[n].id[0] <= b)
			n++;
		put32(p + 4 * b, n);
	}
	p += IDX_FANOUT_SIZE;
	if (version == 1) {
		for (size_t i = 0; i < nr; i++) {
			put32(p, (uint32_t)o[i].off);
			memcpy(p + 4, o[i].id, rawsz);
			p += rawsz + 4;
		}
	} else {
		unsigned char *crc = p + nr * rawsz, *off32 = crc + nr * 4;
		unsigned char *off64 = off32 + nr * 4;
		uint32_t k = 0;

		for (size_t i = 0; i < nr; i++) {
			memcpy(p + i * rawsz, o[i].id, rawsz);
			put32(crc + 4 * i, 0x01010101u * (uint32_t)i);
			if (o[i].off < 0x80000000u) {
				put32(off32 + 4 * i, (uint32_t)o[i].off);
				continue;
			}
			put32(off32 + 4 * i, 0x80000000u | k);
			put32(off64 + 8 * k, (uint32_t)(o[i].off >> 32));
			put32(off64 + 8 * k + 4, (uint32_t)o[i].off);
			k++;
		}
		p = off64 + n64 * 8;
	}
	for (size_t i = 0; i < rawsz; i++) {
		p[i] = (unsigned char)(0xc0 + i);
		p[rawsz + i] = (unsigned char)(0xe0 + i);
	}
	return buf;
}

/* The image of objs[] for this version and id length. */
static unsigned char *
build_objs(unsigned version, size_t rawsz, size_t *size)
{
	struct obj o[NR];

	for (size_t i = 0; i < NR; i++) {
		mkid(o[i].id, rawsz, objs[i].id);
		o[i].off = version == 2 ? objs[i].off_v2 : objs[i].off_v1;
	}
	return build(version, rawsz, o, NR, size);
}

static void
test_good(unsigned version, size_t rawsz)
{
	static const struct {
		unsigned b;
		uint32_t lo, hi;
	} ranges[] = {
		{ 0x00, 0, 3 }, { 0x01, 3, 4 }, { 0x02, 4, 4 }, { 0x7f, 4, 5 },
		{ 0x80, 5, 6 }, { 0x81, 6, 6 }, { 0xfe, 6, 7 }, { 0xff, 7, 10 },
	};
	unsigned char id[OID_RAWSZ_MAX], sum[OID_RAWSZ_MAX];
	struct idx idx;
	size_t size;
	unsigned char *map = build_objs(version, rawsz, &size);
	const char *v = version == 2 ? "v2" : "v1";

	if (!check_int(idx_parse(&idx, map, size, rawsz, NAME), 0,
	    "%s/%zu: parse a good index", v, rawsz)) {
		free(map);
		return;
	}
	for (size_t i = 0; i < rawsz; i++)
		sum[i] = (unsigned char)(0xc0 + i);
	check(idx.version == version && idx.nr == NR &&
	    idx.n64 == (version == 2 ? 2 : 0) &&
	    idx.pack_checksum == map + size - 2 * rawsz &&
	    !memcmp(idx.pack_checksum, sum, rawsz),
	    "%s/%zu: version, count, 64-bit entries and pack checksum", v,
	    rawsz);
	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
		uint32_t lo, hi;

		idx_range(&idx, ranges[i].b, &lo, &hi);
		check(lo == ranges[i].lo && hi == ranges[i].hi,
		    "%s/%zu: fan-out range of %02x is [%u, %u)", v, rawsz,
		    ranges[i].b, ranges[i].lo, ranges[i].hi);
	}
	for (uint32_t i = 0; i < NR; i++) {
		uint64_t want = version == 2 ? objs[i].off_v2 : objs[i].off_v1;
		uint64_t off = 0;
		uint32_t pos = UINT32_MAX;
		bool found;

		mkid(id, rawsz, objs[i].id);
		found = idx_find(&idx, id, &pos);
		check(found && pos == i && !memcmp(idx_oid(&idx, pos), id,
		    rawsz), "%s/%zu: find %02x%02x..%02x at %u", v, rawsz,
		    id[0], id[1], id[rawsz - 1], i);
		if (!found || pos >= NR)
			continue;
		if (check_int(idx_offset(&idx, pos, &off, NAME), 0,
		    "%s/%zu: offset of %u", v, rawsz, i))
			check_u64(off, want, "%s/%zu: offset of %u is %#llx",
			    v, rawsz, i, (unsigned long long)want);
	}
	for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++) {
		uint32_t pos;

		mkid(id, rawsz, absent[i]);
		check(!idx_find(&idx, id, &pos),
		    "%s/%zu: %02x%02x..%02x is absent", v, rawsz, id[0], id[1],
		    id[rawsz - 1]);
	}
	free(map);
}

/* An index of no objects is valid; nothing is in it. */
static void
test_empty(unsigned version, size_t rawsz)
{
	unsigned char id[OID_RAWSZ_MAX];
	struct idx idx;
	size_t size;
	unsigned char *map = build(version, rawsz, NULL, 0, &size);
	uint32_t pos;
	int ret;

	ret = idx_parse(&idx, map, size, rawsz, NAME);
	check(ret == 0 && idx.nr == 0, "v%u/%zu: empty index parses", version,
	    rawsz);
	if (ret == 0) {
		memset(id, 0, sizeof(id));
		check(!idx_find(&idx, id, &pos),
		    "v%u/%zu: empty index finds nothing", version, rawsz);
	}
	free(map);
}

static bool
refused(const unsigned char *map, size_t size, size_t rawsz)
{
	struct idx idx;

	return idx_parse(&idx, map, size, rawsz, NAME) == CORRUPT &&
	    strstr(log_last(), NAME);
}

/* Images whose header, fan-out or size is wrong. */
static void
test_bad_layout(void)
{
	unsigned char *map, *copy;
	size_t size, size1, size0;
	unsigned char *v1 = build_objs(1, 20, &size1);
	unsigned char *empty = build(2, 20, NULL, 0, &size0);

	map = build_objs(2, 20, &size);
	copy = malloc(size + 16);
	if (!copy)
		abort();

	check(refused(map, 0, 20), "empty file refused");
	check(refused(map, IDX_HEADER_V2, 20), "v2 header only refused");
	check(refused(empty, size0 - 1, 20),
	    "empty v2 index one byte short refused");
	check(refused(empty, size0 - 2 * 20, 20),
	    "v2 index without checksums refused");
	memcpy(copy, empty, size0);
	memset(copy + size0, 0, 8);
	check(refused(copy, size0 + 8, 20),
	    "empty v2 index with a 64-bit entry refused");

	memcpy(copy, map, size);
	put32(copy + 4, 3);
	check(refused(copy, size, 20), "version 3 refused");
	put32(copy + 4, 1);
	check(refused(copy, size, 20), "version 1 after the v2 magic refused");
	put32(copy + 4, 0xffffffff);
	check(refused(copy, size, 20), "version 0xffffffff refused");

	memcpy(copy, map, size);
	put32(copy + IDX_HEADER_V2 + 4 * 0x7f, NR + 1);
	check(refused(copy, size, 20), "v2 fan-out decreasing at 0x80 refused");
	memcpy(copy, map, size);
	put32(copy + IDX_HEADER_V2, 5);
	check(refused(copy, size, 20), "v2 fan-out decreasing at 0x01 refused");
	memcpy(copy, v1, size1);
	put32(copy + 4 * 0xfe, NR + 1);
	check(refused(copy, size1, 20),
	    "v1 fan-out decreasing at 0xff refused");
	memcpy(copy, map, size);
	put32(copy + IDX_HEADER_V2 + 4 * 0xff, 0xffffffff);
	check(refused(copy, size, 20),
	    "v2 fan-out claiming 2^32-1 ids refused");
	memcpy(copy, v1, size1);
	put32(copy + 4 * 0xff, 0xffffffff);
	check(refused(copy, size1, 20),
	    "v1 fan-out claiming 2^32-1 ids refused");

	memcpy(copy, map, size);
	memset(copy + size, 0, 16);
	check(refused(copy, size + 1, 20), "v2 index one byte long refused");
	check(refused(copy, size + 4, 20), "v2 index four bytes long refused");
	check(refused(copy, size - 1, 20), "v2 index one byte short refused");
	check(refused(map, size - 9 * 20, 20),
	    "v2 index missing nine ids' worth refused");
	memcpy(copy, v1, size1);
	memset(copy + size1, 0, 16);
	check(refused(copy, size1 + 1, 20), "v1 index one byte long refused");
	check(refused(copy, size1 + 4, 20), "v1 index four bytes long refused");
	check(refused(copy, size1 - 1, 20), "v1 index one byte short refused");
	check(refused(copy, size1 - 24, 20),
	    "v1 index one entry short refused");
	check(refused(map, size, 32), "v2 sha1 index read as sha256 refused");
	check(refused(v1, size1, 32), "v1 sha1 index read as sha256 refused");

	free(copy);
	free(empty);
	free(v1);
	free(map);
}

/*
 * The 64-bit offset table: at most nr - 1 entries (the entry at the
 * lowest offset is below 2^31), and an index into it must be in range.
 */
static void
test_off64(void)
{
	struct obj o[2];
	struct idx idx;
	size_t size, at;
	unsigned char *map;
	uint64_t off;

	mkid(o[0].id, 20, (struct idspec){ 0x10, 0x10, 0x10 });
	mkid(o[1].id, 20, (struct idspec){ 0x20, 0x20, 0x20 });
	o[0].off = (uint64_t)1 << 32;
	map = build(2, 20, o, 1, &size);
	check(refused(map, size, 20),
	    "one object with a 64-bit offset refused, as git does");
	free(map);

	o[0].off = 12;
	o[1].off = (uint64_t)1 << 32;
	map = build(2, 20, o, 2, &size);
	check(idx_parse(&idx, map, size, 20, NAME) == 0 && idx.n64 == 1 &&
	    idx_offset(&idx, 1, &off, NAME) == 0 && off == (uint64_t)1 << 32,
	    "two objects, one 64-bit offset");
	free(map);

	/* objs[7] uses 64-bit entry 1 of 2; objs[6] entry 0 */
	map = build_objs(2, 20, &size);
	at = IDX_HEADER_V2 + IDX_FANOUT_SIZE + NR * (20 + 4);
	if (!check_int(idx_parse(&idx, map, size, 20, NAME), 0,
	    "index with two 64-bit offsets parses")) {
		free(map);
		return;
	}
	put32(map + at + 4 * 9, 0x80000002u);
	check_int(idx_offset(&idx, 9, &off, NAME), CORRUPT,
	    "64-bit entry 2 of 2 refused");
	check(strstr(log_last(), NAME) != NULL, "and logged with the name");
	put32(map + at + 4 * 9, 0xffffffffu);
	check_int(idx_offset(&idx, 9, &off, NAME), CORRUPT,
	    "64-bit entry 0x7fffffff of 2 refused");
	check(idx_offset(&idx, 6, &off, NAME) == 0 && off == 0x80000000u,
	    "64-bit entry 0 still read");
	free(map);

	/* an index cut by one 64-bit entry still parses... */
	map = build_objs(2, 20, &size);
	memmove(map + size - 48, map + size - 40, 40);
	if (check_int(idx_parse(&idx, map, size - 8, 20, NAME), 0,
	    "index with its last 64-bit entry cut parses")) {
		/* ...but objs[7] now points past its table */
		check(idx.n64 == 1 && idx_offset(&idx, 7, &off, NAME) ==
		    CORRUPT, "and the object using it is refused");
	}
	free(map);

	/* a 64-bit offset in an index without the table */
	mkid(o[0].id, 20, (struct idspec){ 0x10, 0x10, 0x10 });
	o[0].off = 12;
	o[1].off = 24;
	map = build(2, 20, o, 2, &size);
	at = IDX_HEADER_V2 + IDX_FANOUT_SIZE + 2 * (20 + 4);
	put32(map + at, 0x80000000u);
	check(idx_parse(&idx, map, size, 20, NAME) == 0 && idx.n64 == 0 &&
	    idx_offset(&idx, 0, &off, NAME) == CORRUPT &&
	    idx_offset(&idx, 1, &off, NAME) == 0 && off == 24,
	    "64-bit entry 0 of none refused");
	free(map);

	/* v1 offsets are plain 32 bits: the MSB indexes nothing */
	map = build_objs(1, 20, &size);
	check(idx_parse(&idx, map, size, 20, NAME) == 0 &&
	    idx_offset(&idx, 6, &off, NAME) == 0 && off == 0x80000000u &&
	    idx_offset(&idx, 7, &off, NAME) == 0 && off == 0xffffffffu,
	    "v1 offsets 0x80000000 and 0xffffffff are offsets");
	free(map);
}

void
test_idx(void)
{
	test_good(2, OID_RAWSZ_SHA1);
	test_good(2, OID_RAWSZ_SHA256);
	test_good(1, OID_RAWSZ_SHA1);
	test_good(1, OID_RAWSZ_SHA256);
	test_empty(2, OID_RAWSZ_SHA1);
	test_empty(2, OID_RAWSZ_SHA256);
	test_empty(1, OID_RAWSZ_SHA1);
	test_empty(1, OID_RAWSZ_SHA256);
	test_bad_layout();
	test_off64();
}
