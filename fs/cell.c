/*
 * cell: the chunks that hold cells and the table that finds them (see
 * cell.h), used under the node table's lock. Chunks and tables are
 * mmap'd, so that what is given back leaves the process; the table
 * hashes with XXH3.
 *
 * Chunks are named by their place in a fixed array, so that cell_get()
 * finds one with a single atomic load and nothing a writer reallocates:
 * the array is in BSS and costs a page of memory for every 170 chunks
 * (some 700 000 cells) in use. A bit per chunk says whether it is full;
 * new cells come from the lowest chunk that is not.
 */
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <xxhash.h>

#include "cell.h"

struct chunk {
	_Atomic(struct cell *) cells;	/* NULL until mapped */
	uint32_t free;		/* a free cell (whose key holds the next), or 0 */
	uint32_t top;		/* cells top.. of the chunk were never used */
	uint32_t live;
};

static struct chunk chunks[CELL_CHUNKS_MAX];
static uint64_t full[CELL_CHUNKS_MAX / 64];	/* bit set: mapped, no room */
static size_t first_room;	/* every chunk below is full */

/*
 * The table: slot values are cell indices, 0 empty. It is first_slots
 * until it first grows, and again when it shrinks back, so that a table
 * always exists and a failed mapping only leaves it fuller.
 */
static uint32_t first_slots[CELL_SLOTS_MIN];
static uint32_t *slots = first_slots;
static size_t nslots = CELL_SLOTS_MIN;	/* a power of two */
static size_t ncells;

static struct cell *
cell_at(uint32_t idx)
{
	struct cell *cells = atomic_load_explicit(
	    &chunks[idx / CELL_CHUNK].cells, memory_order_acquire);

	return &cells[idx % CELL_CHUNK];
}

const struct cell *
cell_get(uint32_t idx)
{
	return cell_at(idx);
}

uint64_t
cell_size(const struct cell *c)
{
	uint64_t size = 0;

	for (int i = 5; i >= 0; i--)
		size = size << 8 | c->size[i];
	return size;
}

static void *
map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* A free cell from the lowest chunk with room: its index, or 0. */
static uint32_t
take_cell(void)
{
	size_t w = first_room / 64, c;
	struct cell *cells;
	struct chunk *k;
	uint32_t idx;

	while (w < CELL_CHUNKS_MAX / 64 && full[w] == UINT64_MAX)
		w++;
	if (w == CELL_CHUNKS_MAX / 64)
		return 0;
	c = w * 64 + (size_t)__builtin_ctzll(~full[w]);
	first_room = c;
	k = &chunks[c];
	cells = atomic_load_explicit(&k->cells, memory_order_relaxed);
	if (!cells) {
		if (!(cells = map(CELL_CHUNK * sizeof(*cells))))
			return 0;
		k->free = 0;
		k->top = c == 0;	/* index 0 is never a cell */
		k->live = 0;
		atomic_store_explicit(&k->cells, cells, memory_order_release);
	}
	if (k->free) {
		idx = k->free;
		memcpy(&k->free, cells[idx % CELL_CHUNK].key, sizeof(k->free));
	} else {
		idx = (uint32_t)(c * CELL_CHUNK + k->top++);
	}
	k->live++;
	if (!k->free && k->top == CELL_CHUNK)
		full[w] |= (uint64_t)1 << (c % 64);
	return idx;
}

/*
 * Give idx back to its chunk, and the chunk to the system if it was the
 * last cell (but the first chunk, which a mount with few nodes would
 * otherwise map and unmap at every lookup and forget).
 */
static void
put_cell(uint32_t idx)
{
	size_t c = idx / CELL_CHUNK;
	struct chunk *k = &chunks[c];
	struct cell *cells = atomic_load_explicit(&k->cells,
	    memory_order_relaxed);

	full[c / 64] &= ~((uint64_t)1 << (c % 64));
	if (c < first_room)
		first_room = c;
	if (--k->live == 0 && c != 0) {
		atomic_store_explicit(&k->cells, NULL, memory_order_relaxed);
		munmap(cells, CELL_CHUNK * sizeof(*cells));
		return;
	}
	memcpy(cells[idx % CELL_CHUNK].key, &k->free, sizeof(k->free));
	k->free = idx;
}

static size_t
home(const unsigned char *key, size_t n)
{
	return (size_t)XXH3_64bits(key, CELL_KEYLEN) & (n - 1);
}

/* Move every index to a table of n slots, if one can be had. */
static void
resize(size_t n)
{
	uint32_t *to;

	if (n == CELL_SLOTS_MIN) {
		to = first_slots;
		memset(to, 0, sizeof(first_slots));
	} else if (!(to = map(n * sizeof(*to)))) {
		return;
	}
	for (size_t i = 0; i < nslots; i++) {
		size_t j;

		if (!slots[i])
			continue;
		j = home(cell_at(slots[i])->key, n);
		while (to[j])
			j = (j + 1) & (n - 1);
		to[j] = slots[i];
	}
	if (slots != first_slots)
		munmap(slots, nslots * sizeof(*slots));
	slots = to;
	nslots = n;
}

uint32_t
cell_find(const unsigned char *key)
{
	for (size_t i = home(key, nslots); slots[i]; i = (i + 1) & (nslots - 1))
		if (!memcmp(cell_at(slots[i])->key, key, CELL_KEYLEN))
			return slots[i];
	return 0;
}

uint32_t
cell_add(const unsigned char *key, uint64_t size, uint8_t type)
{
	struct cell *c;
	uint32_t idx;
	size_t i;

	if (size > CELL_SIZE_MAX)
		return 0;
	if (ncells + 1 > nslots / 2)
		resize(2 * nslots);
	/* A table that could not grow takes cells until 3/4 full. */
	if (ncells + 1 > nslots / 4 * 3 || !(idx = take_cell()))
		return 0;
	c = cell_at(idx);
	memcpy(c->key, key, CELL_KEYLEN);
	c->type = type;
	for (int b = 0; b < 6; b++)
		c->size[b] = (uint8_t)(size >> (8 * b));
	c->nlookup = 1;
	for (i = home(key, nslots); slots[i]; i = (i + 1) & (nslots - 1))
		;
	slots[i] = idx;
	ncells++;
	return idx;
}

void
cell_ref(uint32_t idx)
{
	struct cell *c = cell_at(idx);

	if (c->nlookup < UINT32_MAX)
		c->nlookup++;
}

/*
 * Empty the slot of idx, whose key is key, and move back into it the
 * entries after it that may sit there (backward-shift deletion): no
 * tombstones, so probes stay as short as the load allows.
 */
static void
unlink_slot(uint32_t idx, const unsigned char *key)
{
	size_t mask = nslots - 1, i = home(key, nslots);

	while (slots[i] != idx)
		i = (i + 1) & mask;
	for (size_t j = (i + 1) & mask; slots[j]; j = (j + 1) & mask) {
		size_t h = home(cell_at(slots[j])->key, nslots);

		/* It may not move before its home h, in (i, j]. */
		if (((j - h) & mask) >= ((j - i) & mask)) {
			slots[i] = slots[j];
			i = j;
		}
	}
	slots[i] = 0;
}

bool
cell_forget(uint32_t idx, uint64_t n)
{
	struct cell *c = cell_at(idx);

	if (c->nlookup == UINT32_MAX)
		return false;
	c->nlookup -= n < c->nlookup ? (uint32_t)n : c->nlookup;
	if (c->nlookup)
		return false;
	unlink_slot(idx, c->key);
	put_cell(idx);
	ncells--;
	if (nslots > CELL_SLOTS_MIN && ncells < nslots / 8)
		resize(nslots / 2);
	return true;
}

size_t
cell_count(void)
{
	return ncells;
}

size_t
cell_slots(void)
{
	return nslots;
}
