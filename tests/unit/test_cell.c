/*
 * test_cell: fs/cell.c against a model, an array that says which keys have
 * a cell, under which index and with how many lookups. Each workload of
 * the table below adds, refs and forgets random keys in random order, so
 * that the table grows from its smallest size through several doublings
 * and shrinks back, probes wrap around its end, and backward-shift
 * deletion moves entries; then every key the model holds must be found
 * with its index, type and size, and no other. Then the edges: sizes
 * around 48 bits, and a lookup count that reaches its maximum.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cell.h"
#include "unit.h"

struct ent {
	unsigned char key[CELL_KEYLEN];
	uint32_t idx;		/* 0: no cell */
	uint64_t refs;
	uint64_t size;
	uint8_t type;
};

static const struct {
	const char *name;
	size_t nkeys;
	size_t steps;
	unsigned forget;	/* per cent of steps on a live key */
} workloads[] = {
	{ "a few keys, looked up and forgotten often", 50, 20000, 50 },
	{ "5000 keys, added, looked up and forgotten at random", 5000, 200000, 50 },
	{ "100000 keys, mostly kept", 100000, 300000, 10 },
	{ "300000 keys, all added before any is forgotten", 300000, 300000,
	    0 },
};

/* Do the cells say what the model says? Counts disagreements. */
static size_t
disagree(const struct ent *e, size_t n, size_t *live)
{
	size_t bad = 0;

	*live = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t idx = cell_find(e[i].key);
		const struct cell *c;

		if (idx != e[i].idx) {
			bad++;
			continue;
		}
		if (!idx)
			continue;
		(*live)++;
		c = cell_get(idx);
		if (memcmp(c->key, e[i].key, CELL_KEYLEN) ||
		    c->type != e[i].type || cell_size(c) != e[i].size ||
		    c->nlookup != e[i].refs)
			bad++;
	}
	return bad;
}

static void
run_workload(size_t w, uint64_t *seed)
{
	size_t n = workloads[w].nkeys, bad = 0, live = 0, most = 0, far = 0;
	size_t maxslots = cell_slots();
	struct ent *e = calloc(n, sizeof(*e));

	if (!e)
		abort();
	for (size_t i = 0; i < n; i++) {
		e[i].key[0] = 'O';
		for (size_t b = 1; b < CELL_KEYLEN; b += 8) {
			uint64_t r = unit_rand(seed);

			memcpy(e[i].key + b, &r, CELL_KEYLEN - b < 8 ?
			    CELL_KEYLEN - b : 8);
		}
	}
	for (size_t s = 0; s < workloads[w].steps; s++) {
		struct ent *x = &e[workloads[w].forget ? unit_rand(seed) % n :
		    s % n];
		uint64_t r = unit_rand(seed);

		if (!x->idx) {
			if (cell_find(x->key))
				bad++;
			x->size = r >> (r & 63) & CELL_SIZE_MAX;
			x->type = (uint8_t)(1 + r % 4);
			if (!(x->idx = cell_add(x->key, x->size, x->type))) {
				bad++;
				continue;
			}
			x->refs = 1;
			/* Every chunk below the one it came from is full. */
			if (x->idx >= ++live + CELL_CHUNK)
				far++;
			most = live > most ? live : most;
		} else if (r % 100 < workloads[w].forget) {
			uint64_t k = 1 + (r >> 32) % (x->refs + 1);
			bool freed = cell_forget(x->idx, k);

			if (freed != (k >= x->refs))
				bad++;
			x->refs -= k < x->refs ? k : x->refs;
			if (freed) {
				x->idx = 0;
				live--;
			}
		} else {
			cell_ref(x->idx);
			x->refs++;
		}
		if (cell_slots() > maxslots)
			maxslots = cell_slots();
		if (cell_count() != live || cell_slots() < 2 * live)
			bad++;
	}
	check_int((long long)bad, 0, "%s: every step as the model says",
	    workloads[w].name);
	check_int((long long)disagree(e, n, &live), 0, "%s: %zu cells, "
	    "each found with its index, type and size",
	    workloads[w].name, live);
	check_int((long long)far, 0, "%s: new cells come from the lowest "
	    "chunk with room", workloads[w].name);
	check(maxslots >= 2 * most && (maxslots <= 4 * most ||
	    maxslots == CELL_SLOTS_MIN),
	    "%s: %zu slots at most for %zu cells at most",
	    workloads[w].name, maxslots, most);
	for (size_t i = 0; i < n; i++)
		if (e[i].idx && !cell_forget(e[i].idx, e[i].refs))
			bad++;
	check(bad == 0 && cell_count() == 0 && cell_slots() ==
	    CELL_SLOTS_MIN, "%s: all forgotten, the table is its smallest "
	    "again", workloads[w].name);
	free(e);
}

static void
edges(void)
{
	static const struct {
		uint64_t size;
		bool fits;
	} sizes[] = {
		{ 0, true },
		{ 1, true },
		{ 0xffffffff, true },
		{ (uint64_t)1 << 40, true },
		{ CELL_SIZE_MAX, true },
		{ CELL_SIZE_MAX + 1, false },
		{ UINT64_MAX, false },
	};
	unsigned char key[CELL_KEYLEN] = "O";
	struct cell *c;
	uint32_t idx;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		key[1] = (unsigned char)i;
		idx = cell_add(key, sizes[i].size, 3);
		check(sizes[i].fits ? idx && cell_size(cell_get(idx)) ==
		    sizes[i].size : !idx, "size %llu %s", (unsigned long long)
		    sizes[i].size, sizes[i].fits ? "kept" : "refused");
		if (idx)
			cell_forget(idx, 1);
	}
	/* The count stops at its maximum, and the cell then stays. */
	idx = cell_add(key, 1, 3);
	c = (struct cell *)cell_get(idx);
	c->nlookup = UINT32_MAX - 1;
	cell_ref(idx);
	cell_ref(idx);
	check(c->nlookup == UINT32_MAX, "a lookup count stops at 2^32 - 1");
	check(!cell_forget(idx, UINT64_MAX) && cell_find(key) == idx,
	    "a cell whose count stopped is never freed");
	c->nlookup = 1;
	check(cell_forget(idx, 1) && cell_count() == 0, "one forgotten at 1 "
	    "lookup is freed");
}

void
test_cell(void)
{
	uint64_t seed = 0x2545f4914f6cdd1dull;

	check(cell_count() == 0 && cell_slots() == CELL_SLOTS_MIN &&
	    !cell_find((const unsigned char *)"O12345678901234567890"),
	    "no cell at first");
	for (size_t w = 0; w < sizeof(workloads) / sizeof(workloads[0]); w++)
		run_workload(w, &seed);
	edges();
}
