/*
 * test_packtable: packtable.c over packs whose indexes are built in memory
 * (version 2, ids of 20 and 32 bytes), so that ids can be chosen: random
 * ones, ids copied into several packs, and ids made to collide. The
 * reference is the loop the table replaces: idx_find() on each pack in
 * turn, the first pack that holds an id winning. For every present id and
 * for many absent ones, packtable_find() must give the same pack and
 * position; an id that shares its home and tag with a present one and
 * differs later must be a miss; and the table must refuse to be built
 * (so that the caller searches pack by pack) for more packs than a slot
 * can name and for ids crowded into one run of slots; and a fan-out that
 * lies must not make it lose or misplace an id.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "idx.h"
#include "oid.h"
#include "pack.h"
#include "packtable.h"
#include "unit.h"

static int
cmp_ids(const void *a, const void *b, void *rawsz)
{
	return memcmp(a, b, *(size_t *)rawsz);
}

/*
 * A pack with only an index, its image in memory. The test keeps the
 * pack's first reference for its whole life, so a table's pack_unref()
 * never reaches zero (which would munmap the malloc'd image).
 */
static struct pack *
mkpack(unsigned char *ids, size_t nr, size_t rawsz)
{
	size_t size = IDX_HEADER_V2 + IDX_FANOUT_SIZE + nr * (rawsz + 8) +
	    2 * rawsz;
	unsigned char *map = calloc(1, size), *p;
	struct pack *pk = calloc(1, sizeof(*pk));
	int ret;

	if (!map || !pk)
		abort();
	qsort_r(ids, nr, rawsz, cmp_ids, &rawsz);
	memcpy(map, IDX_V2_MAGIC "\0\0\0\2", IDX_HEADER_V2);
	p = map + IDX_HEADER_V2;
	for (unsigned b = 0, n = 0; b < 256; b++) {
		while (n < nr && ids[n * rawsz] <= b)
			n++;
		p[4 * b] = (unsigned char)(n >> 24);
		p[4 * b + 1] = (unsigned char)(n >> 16);
		p[4 * b + 2] = (unsigned char)(n >> 8);
		p[4 * b + 3] = (unsigned char)n;
	}
	p += IDX_FANOUT_SIZE;
	memcpy(p, ids, nr * rawsz);
	/* offsets: 12 + 100 * i, so that a position names its offset */
	p += nr * rawsz + nr * 4;
	for (size_t i = 0; i < nr; i++) {
		uint32_t off = 12 + 100 * (uint32_t)i;

		p[4 * i] = (unsigned char)(off >> 24);
		p[4 * i + 1] = (unsigned char)(off >> 16);
		p[4 * i + 2] = (unsigned char)(off >> 8);
		p[4 * i + 3] = (unsigned char)off;
	}
	if ((ret = idx_parse(&pk->idx, map, size, rawsz, "test.idx")) < 0)
		abort();
	atomic_init(&pk->refs, 1);
	return pk;
}

static void
freepack(struct pack *p)
{
	free((void *)p->idx.map);
	free(p);
}

static void
random_id(unsigned char *id, size_t rawsz, uint64_t *seed)
{
	for (size_t i = 0; i < rawsz; i += 8) {
		uint64_t r = unit_rand(seed);

		memcpy(id + i, &r, rawsz - i < 8 ? rawsz - i : 8);
	}
}

/* The answer of the loop the table replaces: -1 when no pack has raw. */
static long
first_pack(struct pack *const *packs, size_t npacks, const unsigned char *raw,
    uint32_t *pos)
{
	for (size_t i = 0; i < npacks; i++)
		if (idx_find(&packs[i]->idx, raw, pos))
			return (long)i;
	return -1;
}

/*
 * Does the table answer as the loop does for raw? Counts disagreements in
 * *bad rather than printing a line per id.
 */
static void
agree(const struct packtable *t, struct pack *const *packs, size_t npacks,
    const unsigned char *raw, size_t *bad, size_t *found)
{
	uint32_t wpos = 0, gpos = UINT32_MAX;
	struct pack *got = NULL;
	long want = first_pack(packs, npacks, raw, &wpos);
	bool hit = packtable_find(t, raw, &got, &gpos);

	if (want < 0 ? hit : !hit || got != packs[want] || gpos != wpos)
		(*bad)++;
	if (hit)
		(*found)++;
}

/*
 * Sizes of the packs, and how many ids of pack 0 each later pack holds
 * too (as after a repack that left the old pack beside the new one).
 */
static const struct {
	const char *name;
	size_t nr[5];
	size_t npacks;
	size_t shared;
} layouts[] = {
	{ "one pack", { 5000 }, 1, 0 },
	{ "five packs, one empty", { 3000, 0, 1, 700, 20000 }, 5, 0 },
	{ "five packs sharing ids", { 4000, 100, 4000, 2500, 10 }, 5, 50 },
	{ "two packs, the second a copy", { 3000, 3000 }, 2, 3000 },
};

static void
test_agree(size_t rawsz)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull ^ rawsz;

	for (size_t l = 0; l < sizeof(layouts) / sizeof(layouts[0]); l++) {
		struct pack *packs[5], *reversed[5];
		struct packtable *t;
		unsigned char *first = NULL, id[OID_RAWSZ_MAX];
		size_t total = 0, bad = 0, found = 0, dups = 0, absent = 20000;
		const char *name = layouts[l].name;
		size_t n = layouts[l].npacks;

		for (size_t i = 0; i < n; i++) {
			size_t nr = layouts[l].nr[i];
			unsigned char *ids = malloc(nr * rawsz + 1);

			if (!ids)
				abort();
			for (size_t k = 0; k < nr; k++)
				random_id(ids + k * rawsz, rawsz, &seed);
			/* pack 0 is sorted in mkpack; copy its first ids */
			for (size_t k = 0; i && k < layouts[l].shared &&
			    k < nr; k++, dups++)
				memcpy(ids + k * rawsz, first + k * rawsz,
				    rawsz);
			packs[i] = reversed[n - 1 - i] = mkpack(ids, nr, rawsz);
			if (!i)
				first = (unsigned char *)packs[0]->idx.ids;
			free(ids);
			total += nr;
		}
		if (!check_int(packtable_build(packs, n, rawsz, &t), 0,
		    "%zu/%s: table built", rawsz, name))
			goto out;
		check(packtable_size(t) >= 2 * total * 8 &&
		    packtable_size(t) <= 4 * total * 8 + 128,
		    "%zu/%s: %zu slot bytes for %zu ids", rawsz, name,
		    packtable_size(t), total);
		for (size_t i = 0; i < n; i++)
			check_int(atomic_load(&packs[i]->refs), 2,
			    "%zu/%s: table holds pack %zu", rawsz, name, i);
		for (size_t i = 0; i < n; i++)
			for (uint32_t k = 0; k < packs[i]->idx.nr; k++)
				agree(t, packs, n, idx_oid(&packs[i]->idx, k),
				    &bad, &found);
		check(bad == 0 && found == total, "%zu/%s: each of %zu ids "
		    "(%zu in two packs) found where the loop finds it", rawsz,
		    name, total, dups);
		bad = found = 0;
		for (size_t k = 0; k < absent; k++) {
			random_id(id, rawsz, &seed);
			agree(t, packs, n, id, &bad, &found);
		}
		check(bad == 0 && found == 0, "%zu/%s: %zu random ids absent",
		    rawsz, name, absent);
		/*
		 * Same first eight bytes (home and tag), another last byte,
		 * or another ninth byte: only the full compare tells.
		 */
		bad = found = 0;
		for (size_t i = 0; i < n; i++)
			for (uint32_t k = 0; k < packs[i]->idx.nr; k++) {
				memcpy(id, idx_oid(&packs[i]->idx, k), rawsz);
				id[rawsz - 1] ^= 0x01;
				agree(t, packs, n, id, &bad, &found);
				id[rawsz - 1] ^= 0x01;
				id[8] ^= 0x80;
				agree(t, packs, n, id, &bad, &found);
			}
		check(bad == 0 && found == 0, "%zu/%s: ids differing from "
		    "present ones after their home and tag are absent",
		    rawsz, name);
		packtable_unref(t);
		for (size_t i = 0; i < n; i++)
			check_int(atomic_load(&packs[i]->refs), 1,
			    "%zu/%s: table gave pack %zu back", rawsz, name,
			    i);

		/* The other order: shared ids now resolve to a later pack. */
		if (n > 1 && check_int(packtable_build(reversed, n, rawsz,
		    &t), 0, "%zu/%s: reversed table built", rawsz, name)) {
			size_t last = 0;
			struct pack *got;
			uint32_t pos;

			bad = found = 0;
			for (size_t i = 0; i < n; i++)
				for (uint32_t k = 0; k < packs[i]->idx.nr;
				    k++)
					agree(t, reversed, n,
					    idx_oid(&packs[i]->idx, k), &bad,
					    &found);
			for (size_t k = 0; k < layouts[l].shared; k++)
				if (packtable_find(t, first + k * rawsz, &got,
				    &pos) && got != packs[0])
					last++;
			check(bad == 0 && found == total && last ==
			    layouts[l].shared, "%zu/%s: in reverse order, "
			    "shared ids found in the later pack", rawsz, name);
			packtable_unref(t);
		}
out:
		for (size_t i = 0; i < n; i++)
			freepack(packs[i]);
	}
}

/*
 * Hand-made collisions: ids equal in their first eight bytes (one home,
 * one tag) and in all but one later byte, in one pack and across two.
 */
static void
test_collisions(void)
{
	unsigned char a[3 * 20], b[2 * 20], id[20];
	struct pack *packs[2];
	struct packtable *t;
	struct pack *got;
	uint32_t pos;

	memset(a, 0x5a, sizeof(a));
	a[19] = 1;
	a[20 + 19] = 2;
	a[40 + 10] = 0x00;	/* sorts first */
	memset(b, 0x5a, sizeof(b));
	b[19] = 2;		/* as a[1] */
	b[20 + 19] = 3;
	packs[0] = mkpack(a, 3, 20);
	packs[1] = mkpack(b, 2, 20);
	if (!check_int(packtable_build(packs, 2, 20, &t), 0,
	    "colliding ids: table built"))
		goto out;
	for (unsigned last = 0; last < 6; last++) {
		bool want = last >= 1 && last <= 3;

		memset(id, 0x5a, sizeof(id));
		id[19] = (unsigned char)last;
		check(packtable_find(t, id, &got, &pos) == want &&
		    (!want || got == packs[last == 3]),
		    "colliding ids: 5a..5a%02x %s", last, want ? last == 3 ?
		    "in the second pack" : "in the first pack" : "absent");
	}
	memset(id, 0x5a, sizeof(id));
	id[10] = 0x00;
	id[19] = 0x5a;
	check(packtable_find(t, id, &got, &pos) && got == packs[0] &&
	    !memcmp(idx_oid(&packs[0]->idx, pos), id, 20),
	    "colliding ids: 5a..00..5a found at its position");
	packtable_unref(t);
out:
	freepack(packs[0]);
	freepack(packs[1]);
}

/*
 * Limits of the encoding and of probing: the table is refused, and
 * snapshot.c then searches pack by pack.
 */
static void
test_refused(void)
{
	size_t crowd = PACKTABLE_MAX_PROBE + 1, many = PACKTABLE_MAX_PACKS + 1;
	unsigned char *ids = malloc(crowd * 20), id[20];
	struct pack **packs = malloc(many * sizeof(*packs));
	struct pack *empty, *one, *crowded, *fits, *got;
	struct packtable *t;
	uint64_t seed = 42;
	uint32_t pos;

	if (!ids || !packs)
		abort();
	/* One home for them all: only their last bytes differ. */
	for (size_t k = 0; k < crowd; k++) {
		random_id(ids + k * 20, 20, &seed);
		memset(ids + k * 20, 0x77, 8);
	}
	crowded = mkpack(ids, crowd, 20);
	check_int(packtable_build(&crowded, 1, 20, &t), -ELOOP,
	    "%zu ids of one home refused", crowd);
	check(t == NULL && atomic_load(&crowded->refs) == 1,
	    "and no table, no reference kept");
	/* One fewer fits: the longest probe is then just allowed. */
	fits = mkpack(ids, crowd - 1, 20);
	if (check_int(packtable_build(&fits, 1, 20, &t), 0,
	    "%zu ids of one home accepted", crowd - 1)) {
		size_t bad = 0, found = 0;

		for (uint32_t k = 0; k < fits->idx.nr; k++)
			agree(t, &fits, 1, idx_oid(&fits->idx, k), &bad,
			    &found);
		check(bad == 0 && found == crowd - 1,
		    "and each found, the last %zu slots from home",
		    crowd - 2);
		packtable_unref(t);
	}
	freepack(fits);

	empty = mkpack(ids, 0, 20);
	one = mkpack(ids, 1, 20);
	for (size_t i = 0; i < many; i++)
		packs[i] = empty;
	check_int(packtable_build(packs, many, 20, &t), -EOVERFLOW,
	    "%zu packs refused", many);
	check(t == NULL && atomic_load(&empty->refs) == 1,
	    "and no table, no reference kept");
	/* The last pack that fits is numbered 0xffff in its slots. */
	packs[many - 2] = one;
	memcpy(id, idx_oid(&one->idx, 0), 20);
	if (check_int(packtable_build(packs, many - 1, 20, &t), 0,
	    "%zu packs accepted", many - 1)) {
		check(packtable_find(t, id, &got, &pos) && got == one &&
		    pos == 0, "an id of pack %zu found", many - 2);
		id[19] ^= 1;
		check(!packtable_find(t, id, &got, &pos),
		    "and its neighbour absent");
		packtable_unref(t);
	}
	check_int(packtable_build(packs, 0, 20, &t), 0, "no packs: built");
	if (t) {
		check(!packtable_find(t, idx_oid(&one->idx, 0), &got, &pos),
		    "no packs: nothing found");
		packtable_unref(t);
	}
	freepack(crowded);
	freepack(empty);
	freepack(one);
	free(packs);
	free(ids);
}

/*
 * An index whose fan-out lies (idx_parse() checks only that it never
 * decreases): every id in the range of one first byte. The table is built
 * from the fan-out's ranges, so each id must still go to its own home and
 * be found at its own position, and nothing else found.
 */
static void
test_lying_fanout(void)
{
	static const unsigned bytes[] = { 0x00, 0x7f, 0xff };
	unsigned char *ids = malloc(1000 * 20), id[20];
	uint64_t seed = 7;

	if (!ids)
		abort();
	for (size_t k = 0; k < 1000; k++)
		random_id(ids + k * 20, 20, &seed);
	for (size_t i = 0; i < sizeof(bytes) / sizeof(bytes[0]); i++) {
		struct pack *pk = mkpack(ids, 1000, 20), *got;
		unsigned char *fanout = (unsigned char *)pk->idx.fanout;
		struct packtable *t;
		size_t bad = 0;
		uint32_t pos;

		for (unsigned b = 0; b < 256; b++) {
			uint32_t n = b < bytes[i] ? 0 : 1000;

			fanout[4 * b] = (unsigned char)(n >> 24);
			fanout[4 * b + 1] = (unsigned char)(n >> 16);
			fanout[4 * b + 2] = (unsigned char)(n >> 8);
			fanout[4 * b + 3] = (unsigned char)n;
		}
		if (!check_int(packtable_build(&pk, 1, 20, &t), 0,
		    "fan-out putting every id under %02x: table built",
		    bytes[i])) {
			freepack(pk);
			continue;
		}
		for (uint32_t k = 0; k < 1000; k++)
			if (!packtable_find(t, idx_oid(&pk->idx, k), &got,
			    &pos) || got != pk || pos != k)
				bad++;
		for (size_t k = 0; k < 1000; k++) {
			random_id(id, 20, &seed);
			bad += packtable_find(t, id, &got, &pos);
		}
		check(bad == 0, "fan-out putting every id under %02x: each "
		    "id found at its position, random ids absent", bytes[i]);
		packtable_unref(t);
		freepack(pk);
	}
	free(ids);
}

void
test_packtable(void)
{
	test_agree(OID_RAWSZ_SHA1);
	test_agree(OID_RAWSZ_SHA256);
	test_collisions();
	test_refused();
	test_lying_fanout();
}
