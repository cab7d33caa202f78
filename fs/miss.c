/*
 * miss: the table of recent misses (see miss.h): written by the lookup of
 * a full id that misses, swept after each snapshot the watcher publishes.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "miss.h"
#include "odbstore/oid.h"

#define WORDS (OID_RAWSZ_MAX / 8)

static _Atomic uint64_t slots[MISS_SLOTS][WORDS];

static size_t
slot_of(const unsigned char *raw)
{
	/* Ids are hashes: any bytes index the table evenly. */
	return ((size_t)raw[3] << 8 | raw[4]) % MISS_SLOTS;
}

/*
 * ODBFS_TEST_MISS_DELAY_MS=N: each note waits N ms first, so that a test
 * can have the watcher publish and sweep between a miss and its note, the
 * race odb_moved() closes. Read once; 0 (unset) costs one relaxed load.
 */
static _Atomic int test_delay_ms = -1;

static void
test_delay(void)
{
	int ms = atomic_load_explicit(&test_delay_ms, memory_order_relaxed);

	if (ms < 0) {
		const char *v = getenv("ODBFS_TEST_MISS_DELAY_MS");

		ms = v ? atoi(v) : 0;
		atomic_store_explicit(&test_delay_ms, ms < 0 ? 0 : ms,
		    memory_order_relaxed);
	}
	if (ms > 0)
		nanosleep(&(struct timespec){ ms / 1000,
		    (long)(ms % 1000) * 1000000 }, NULL);
}

void
miss_note(const unsigned char *raw, size_t rawsz)
{
	_Atomic uint64_t *slot = slots[slot_of(raw)];
	uint64_t w[WORDS] = { 0 };

	test_delay();

	memcpy(w, raw, rawsz);
	for (size_t i = 0; i < WORDS; i++)
		atomic_store_explicit(&slot[i], w[i], memory_order_relaxed);
}

void
miss_sweep(size_t rawsz, bool (*found)(void *ctx, const unsigned char *),
    void (*arrived)(void *ctx, const unsigned char *), void *ctx)
{
	/* After the publication's count, before the notes: odb_moved(). */
	atomic_thread_fence(memory_order_seq_cst);
	for (size_t s = 0; s < MISS_SLOTS; s++) {
		uint64_t w[WORDS], any = 0;
		unsigned char raw[OID_RAWSZ_MAX];

		for (size_t i = 0; i < WORDS; i++)
			any |= w[i] = atomic_load_explicit(&slots[s][i],
			    memory_order_relaxed);
		if (!any)
			continue;
		memcpy(raw, w, rawsz);
		if (!found(ctx, raw))
			continue;
		arrived(ctx, raw);
		for (size_t i = 0; i < WORDS; i++)
			atomic_store_explicit(&slots[s][i], 0,
			    memory_order_relaxed);
	}
}
