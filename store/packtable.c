/*
 * packtable: building and probing the merged id table of a snapshot's
 * packs (the layout is drawn in packtable.h). Built by snapshot.c when a
 * snapshot's list of packs is new; probed by snapshot_find() on every
 * lookup that the snapshot's filter lets through. Calls only mmap and the
 * packs' mapped indexes.
 *
 *   packtable_find()
 *     home = first k bits of the id     one slot, likely one cache line
 *     tag match -> idx_oid() compare    one id in the pack's index
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "oid.h"
#include "packtable.h"

#define SLOT_PACK_SHIFT 48
#define SLOT_TAG_SHIFT 32
#define SLOT_TAG_MASK ((uint64_t)0xffff << SLOT_TAG_SHIFT)
#define HUGE_PAGE ((size_t)2 << 20)

/* What a probe needs of a pack, without a detour through struct pack. */
struct ptpack {
	const unsigned char *ids;	/* the index's first id */
	size_t stride;
	struct pack *pack;		/* one reference */
};

struct packtable {
	atomic_uint refs;
	unsigned shift;		/* 64 - k: the home is key >> shift */
	size_t mask;		/* 2^k - 1 */
	unsigned maxprobe;	/* the longest displacement built, plus one */
	size_t rawsz;
	uint64_t *slots;	/* read-only once built */
	size_t size;		/* bytes mapped at slots */
	size_t npacks;
	struct ptpack packs[];	/* [0] unused: pack 0 marks empty slots */
};

/*
 * Zeroed memory for the slots, aligned to a huge page when it spans one
 * and marked for transparent huge pages: a probe lands anywhere in the
 * table, and with 4 KiB pages nearly every one would miss the TLB too.
 * Building gains more: 16 MiB is 8 page faults instead of 4096, which
 * took 65 ms and more on the 2-core test machine against about 10.
 */
static uint64_t *
slots_alloc(size_t size)
{
	size_t align = size >= HUGE_PAGE ? HUGE_PAGE : 0, lead;
	unsigned char *map;

	map = mmap(NULL, size + align, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return NULL;
	if (align) {
		lead = (align - (uintptr_t)map % align) % align;
		if (lead)
			munmap(map, lead);
		if (align - lead)
			munmap(map + lead + size, align - lead);
		map += lead;
		/* Advice only: without huge pages the table still works. */
		madvise(map, size, MADV_HUGEPAGE);
	}
	return (uint64_t *)map;
}

/*
 * Put the ids at [lo, hi) of pack p in. Fails when one would sit
 * PACKTABLE_MAX_PROBE slots or more from its home.
 */
static int
fill_range(struct packtable *t, size_t p, uint32_t lo, uint32_t hi,
    unsigned *longest)
{
	const struct idx *idx = &t->packs[p].pack->idx;

	for (uint32_t pos = lo; pos < hi; pos++) {
		uint64_t key = oid_prefix64(idx_oid(idx, pos));
		size_t i = (size_t)(key >> t->shift);
		unsigned d = 0;

		while (t->slots[i]) {
			if (++d == PACKTABLE_MAX_PROBE)
				return -ELOOP;
			i = (i + 1) & t->mask;
		}
		t->slots[i] = (uint64_t)p << SLOT_PACK_SHIFT |
		    (key & 0xffff) << SLOT_TAG_SHIFT | pos;
		if (d > *longest)
			*longest = d;
	}
	return 0;
}

/*
 * Put every pack's ids in, one first byte at a time: the ids of all packs
 * that begin with byte b have their homes in one 256th of the table, which
 * stays in cache while they go in, and each pack's are contiguous in its
 * index (the fan-out says where). Pack after pack instead would sweep the
 * whole table once per pack. Within a byte the packs go in in order, so of
 * two copies of an id the first pack's is inserted first and sits earlier
 * on their common probe sequence. A hostile fan-out can only cost locality:
 * its ranges still cover each position once, and each id goes to its home.
 */
static int
fill(struct packtable *t)
{
	unsigned longest = 0;
	uint32_t lo, hi;
	int ret;

	for (unsigned b = 0; b < 256; b++)
		for (size_t p = 1; p <= t->npacks; p++) {
			idx_range(&t->packs[p].pack->idx, b, &lo, &hi);
			if ((ret = fill_range(t, p, lo, hi, &longest)) < 0)
				return ret;
		}
	t->maxprobe = longest + 1;
	return 0;
}

int
packtable_build(struct pack *const *packs, size_t npacks, size_t rawsz,
    struct packtable **out)
{
	struct packtable *t;
	size_t total = 0;
	unsigned bits = 4;
	int ret;

	*out = NULL;
	if (npacks > PACKTABLE_MAX_PACKS)
		return -EOVERFLOW;
	for (size_t i = 0; i < npacks; i++)
		if ((total += packs[i]->idx.nr) > PACKTABLE_MAX_IDS)
			return -EOVERFLOW;
	/* A load of at most 1/2 keeps misses to about 2.5 probes. */
	while (((size_t)1 << bits) < 2 * total)
		bits++;
	if (!(t = calloc(1, sizeof(*t) + (npacks + 1) * sizeof(t->packs[0]))))
		return -ENOMEM;
	atomic_init(&t->refs, 1);
	t->shift = 64 - bits;
	t->mask = ((size_t)1 << bits) - 1;
	t->rawsz = rawsz;
	t->size = ((size_t)1 << bits) * sizeof(uint64_t);
	t->npacks = npacks;
	for (size_t i = 0; i < npacks; i++) {
		t->packs[i + 1].ids = packs[i]->idx.ids;
		t->packs[i + 1].stride = packs[i]->idx.stride;
		t->packs[i + 1].pack = pack_ref(packs[i]);
	}
	if (!(t->slots = slots_alloc(t->size))) {
		ret = -ENOMEM;
		goto fail;
	}
	if ((ret = fill(t)) < 0)
		goto fail;
	/* Immutable from here on: let a stray write fault, not corrupt. */
	mprotect(t->slots, t->size, PROT_READ);
	*out = t;
	return 0;
fail:
	packtable_unref(t);
	return ret;
}

struct packtable *
packtable_ref(struct packtable *t)
{
	atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
	return t;
}

void
packtable_unref(struct packtable *t)
{
	if (!t || atomic_fetch_sub_explicit(&t->refs, 1,
	    memory_order_acq_rel) != 1)
		return;
	if (t->slots)
		munmap(t->slots, t->size);
	for (size_t i = 1; i <= t->npacks; i++)
		pack_unref(t->packs[i].pack);
	free(t);
}

bool
packtable_find(const struct packtable *t, const unsigned char *raw,
    struct pack **pack, uint32_t *pos)
{
	/* The id's first 8 bytes: home in the high bits, tag in the low 16. */
	uint64_t key = oid_prefix64(raw), tag = (key & 0xffff) << SLOT_TAG_SHIFT;
	size_t i = (size_t)(key >> t->shift);

	/* No id sits further than maxprobe - 1 from its home. */
	for (unsigned n = t->maxprobe; n; n--, i = (i + 1) & t->mask) {
		uint64_t slot = t->slots[i];
		const struct ptpack *p;
		uint32_t at;

		if (slot == PACKTABLE_EMPTY)
			return false;
		if ((slot & SLOT_TAG_MASK) != tag)
			continue;
		p = &t->packs[slot >> SLOT_PACK_SHIFT];
		at = (uint32_t)slot;
		if (!memcmp(p->ids + (size_t)at * p->stride, raw, t->rawsz)) {
			*pack = p->pack;
			*pos = at;
			return true;
		}
	}
	return false;
}

size_t
packtable_size(const struct packtable *t)
{
	return t->size;
}
