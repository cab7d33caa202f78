/*
 * readers: a small, fully associative set of kept readers under one mutex,
 * evicted least recently used, for the reads of object files, which come
 * in pieces; the mutex is held to scan and to swap entries, never while
 * an object is rebuilt. What it holds stays within its budgets
 * (check_locked(), in debug builds).
 *
 * The object claimed by ahead.c's thread is one more entry, apart: a read
 * that finds it waits on a condition, under the same mutex, until the
 * thread has rebuilt it. The thread rebuilds without the mutex and never
 * waits for a read, so the wait ends; it must not wait for the kernel
 * either (the read that waits holds the page the thread would store).
 *
 * And one thread that inflates a streamed object ahead of its reads. The
 * kernel asks for the next piece of a file only once its reader has the
 * last one, so without it a large object's inflating and the kernel's
 * copying of it into the page cache take turns on one core; with it,
 * they run side by side.
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "odbstore/oid.h"
#include "readers.h"
#include "stats.h"

#define SLOTS 32
/* Bytes of rebuilt objects kept, at most: eight of the largest in memory. */
#define BUDGET ((uint64_t)64 << 20)
/*
 * A deltified object cannot be streamed: it is rebuilt whole, up to
 * OBJ_MAX_INMEM. Without a place for those above BUDGET, each of the
 * kernel's 128 KiB reads of a 1 GiB delta rebuilt all of it, and its
 * parallel reads each held a copy: a 164-byte pack of deltas on deltas
 * cost 2 GiB and minutes. So they are kept apart, within BIG_BUDGET
 * bytes, and rebuilt one at a time (big_gate), after making room. They
 * are let go once no read has wanted them for BIG_IDLE seconds: an idle
 * daemon holds none.
 */
#define BIG_BUDGET OBJ_MAX_INMEM
#define BIG_IDLE 1

struct slot {
	const struct odb *odb;	/* whose object: a hostile repository's */
	unsigned char id[OID_RAWSZ_MAX];	/* bytes are never another's */
	bool used;
	struct reader *r;	/* one reference; NULL with err */
	int err;
	uint64_t snapshots;	/* with err: the store's count when it failed */
	uint64_t bytes;		/* memory r holds */
	bool big;		/* bytes count in held_big, not held */
	uint64_t last;		/* LRU clock */
	time_t touched;		/* with big: when a read last had it */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot slots[SLOTS];	/* protected by lock */
static uint64_t held, held_big, clock_;	/* protected by lock */
static pthread_mutex_t big_gate = PTHREAD_MUTEX_INITIALIZER;

/* readers_claim(): the object ahead.c's thread is rebuilding. */
static struct {
	unsigned char id[OID_RAWSZ_MAX];
	bool busy;		/* claimed, until readers_unclaim() */
	bool built;		/* rebuilt (or failed): r is final */
	struct reader *r;	/* a reference, or NULL */
} claim;			/* protected by lock */
static pthread_cond_t claim_built = PTHREAD_COND_INITIALIZER;

/*
 * Inflated per turn of the prefetching thread, so that a read waits
 * little for the lock; and how far past a read: the window holds a chunk
 * before the read and three from its start.
 */
#define STEP ((size_t)256 << 10)
#define AHEAD (2 * READER_CHUNK)

static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	bool running, stop;
	struct reader *r;	/* a reference, or NULL: nothing to do */
	uint64_t upto;
} pf = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER };

/*
 * What the set keeps true, checked in debug builds (as SQLite's pcache1
 * checks its own): held and held_big are the bytes of the kept readers of
 * each kind, each within its budget, and a slot with no reader holds
 * nothing.
 */
static void
check_locked(void)
{
#ifndef NDEBUG
	uint64_t sum = 0, sum_big = 0;

	for (int i = 0; i < SLOTS; i++) {
		const struct slot *s = &slots[i];

		if (!s->used)
			continue;
		assert(s->r || (!s->bytes && !s->big));
		*(s->big ? &sum_big : &sum) += s->bytes;
	}
	assert(sum == held && sum_big == held_big);
	assert(held <= BUDGET && held_big <= BIG_BUDGET);
#endif
}

static struct slot *
find_locked(const struct odb *odb, const unsigned char *raw, size_t rawsz)
{
	for (int i = 0; i < SLOTS; i++)
		if (slots[i].used && slots[i].odb == odb &&
		    !memcmp(slots[i].id, raw, rawsz))
			return &slots[i];
	return NULL;
}

/* Empty s; its reader (if any) goes to *drop, for closing unlocked. */
static void
empty_locked(struct slot *s, struct reader **drop)
{
	*drop = s->r;
	*(s->big ? &held_big : &held) -= s->bytes;
	memset(s, 0, sizeof(*s));
}

/* An empty slot, made by evicting the least recently used if need be. */
static struct slot *
victim_locked(struct reader **drop)
{
	struct slot *v = &slots[0];

	for (int i = 0; i < SLOTS; i++) {
		if (!slots[i].used)
			return &slots[i];
		if (slots[i].last < v->last)
			v = &slots[i];
	}
	empty_locked(v, drop);
	return v;
}

static time_t
now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return ts.tv_sec;
}

static uint64_t
bytes_of(const struct reader *r)
{
	uint64_t size = reader_info(r)->size;

	if (reader_data(r))
		return size;
	return size < READER_WINDOW + READER_CHUNK ? size :
	    READER_WINDOW + READER_CHUNK;
}

/*
 * Evict the least recently used entries of the big or the small kind until
 * bytes more fit in its budget; the readers evicted go to drop.
 */
static int
make_room_locked(bool big, uint64_t bytes, struct reader **drop)
{
	uint64_t *used = big ? &held_big : &held;
	int ndrop = 0;

	while (*used + bytes > (big ? BIG_BUDGET : BUDGET)) {
		struct slot *v = NULL;

		for (int i = 0; i < SLOTS; i++)
			if (slots[i].used && slots[i].bytes &&
			    slots[i].big == big &&
			    (!v || slots[i].last < v->last))
				v = &slots[i];
		if (!v)
			break;		/* bytes alone are over the budget */
		empty_locked(v, &drop[ndrop++]);
	}
	return ndrop;
}

/* Keep r (or the failure err) for raw; drops what it displaces. */
static void
keep(struct odb *odb, const unsigned char *raw, size_t rawsz,
    struct reader *r, int err)
{
	struct reader *drop[SLOTS + 1] = { 0 };
	uint64_t bytes = r ? bytes_of(r) : 0;
	bool big = bytes > BUDGET;
	int ndrop;
	struct slot *s;

	if (bytes > BIG_BUDGET)
		return;
	pthread_mutex_lock(&lock);
	if (find_locked(odb, raw, rawsz)) {
		/* Another read of the object got there first. */
		pthread_mutex_unlock(&lock);
		return;
	}
	ndrop = make_room_locked(big, bytes, drop);
	s = victim_locked(&drop[ndrop++]);
	s->odb = odb;
	memcpy(s->id, raw, rawsz);
	s->used = true;
	s->r = r ? reader_ref(r) : NULL;
	s->err = err;
	s->snapshots = r ? 0 : odb_generation(odb);
	s->bytes = bytes;
	s->big = big;
	s->last = ++clock_;
	s->touched = big ? now_seconds() : 0;
	*(big ? &held_big : &held) += bytes;
	check_locked();
	pthread_mutex_unlock(&lock);
	if (big) {
		/* The prefetching thread lets it go when idle. */
		pthread_mutex_lock(&pf.lock);
		pthread_cond_signal(&pf.wake);
		pthread_mutex_unlock(&pf.lock);
	}
	for (int i = 0; i < ndrop; i++)
		if (drop[i])
			reader_close(drop[i]);
}

/*
 * If raw is claimed: wait until it is rebuilt, and its reader (a
 * reference) if that worked.
 */
static struct reader *
claimed_locked(const unsigned char *raw, size_t rawsz)
{
	if (!claim.busy || memcmp(claim.id, raw, rawsz))
		return NULL;
	while (claim.busy && !claim.built && !memcmp(claim.id, raw, rawsz))
		pthread_cond_wait(&claim_built, &lock);
	if (!claim.busy || !claim.r || memcmp(claim.id, raw, rawsz))
		return NULL;
	stats_add(STAT_SHARED, 1);
	return reader_ref(claim.r);
}

static int get(struct odb *odb, const unsigned char *raw, uint64_t size,
    uint64_t off, uint64_t end, bool claimed, struct reader **out);

int
readers_get(struct odb *odb, const unsigned char *raw, uint64_t size,
    uint64_t off, uint64_t end, struct reader **out)
{
	return get(odb, raw, size, off, end, false, out);
}

void
readers_claim(struct odb *odb, const unsigned char *raw)
{
	pthread_mutex_lock(&lock);
	memcpy(claim.id, raw, odb_rawsz(odb));
	claim.busy = true;
	claim.built = false;
	claim.r = NULL;
	pthread_mutex_unlock(&lock);
}

int
readers_get_claimed(struct odb *odb, uint64_t end, struct reader **out)
{
	int ret = get(odb, claim.id, UINT64_MAX, 0, end, true, out);

	pthread_mutex_lock(&lock);
	claim.r = *out ? reader_ref(*out) : NULL;
	claim.built = true;
	pthread_cond_broadcast(&claim_built);
	pthread_mutex_unlock(&lock);
	return ret;
}

void
readers_unclaim(void)
{
	struct reader *r;

	pthread_mutex_lock(&lock);
	r = claim.r;
	claim.r = NULL;
	claim.busy = false;
	/* A read that waited and was not woken yet rebuilds it itself. */
	claim.built = true;
	pthread_cond_broadcast(&claim_built);
	pthread_mutex_unlock(&lock);
	reader_close(r);
}

/*
 * readers_get(); claimed: by the thread that claimed raw (whose id is
 * claim.id, read without the lock: only that thread changes it).
 */
static int
get(struct odb *odb, const unsigned char *raw, uint64_t size, uint64_t off,
    uint64_t end, bool claimed, struct reader **out)
{
	size_t rawsz = odb_rawsz(odb);
	struct reader *r = NULL, *stale = NULL;
	struct objinfo info;
	bool gated = false;
	struct slot *s;
	int ret = 0;

	*out = NULL;
	pthread_mutex_lock(&lock);
	if (!claimed && (r = claimed_locked(raw, rawsz))) {
		pthread_mutex_unlock(&lock);
		/* As if this read had rebuilt it. */
		if (off > 0 || end < reader_info(r)->size)
			keep(odb, raw, rawsz, r, 0);
		*out = r;
		return 0;
	}
	if ((s = find_locked(odb, raw, rawsz))) {
		/*
		 * A kept stream that failed fails again: keep its error in
		 * its place, so that a later store (the file written anew)
		 * gets another try.
		 */
		if (s->r && (s->err = reader_error(s->r)) < 0) {
			stale = s->r;
			s->r = NULL;
			*(s->big ? &held_big : &held) -= s->bytes;
			s->bytes = 0;
			s->big = false;
			s->snapshots = odb_generation(odb);
		}
		if (s->r) {
			s->last = ++clock_;
			if (s->big)
				s->touched = now_seconds();
			*out = reader_ref(s->r);
		} else if (s->snapshots == odb_generation(odb)) {
			ret = s->err;
		} else {
			/* The store changed since: worth another try. */
			empty_locked(s, &stale);
		}
	}
	check_locked();
	pthread_mutex_unlock(&lock);
	reader_close(stale);
	if (*out || ret < 0)
		return ret;

	if (size == UINT64_MAX && odb_info(odb, raw, &info) == 0)
		size = info.size;
	/*
	 * Larger than BIG_BUDGET, it is streamed (stored whole) or refused
	 * (EFBIG): nothing to make room for.
	 */
	if (size > BUDGET && size <= BIG_BUDGET) {
		struct reader *drop[SLOTS] = { 0 };
		int ndrop = 0;

		pthread_mutex_lock(&big_gate);
		gated = true;
		pthread_mutex_lock(&lock);
		if ((s = find_locked(odb, raw, rawsz)) && s->r) {
			/* The read we waited for rebuilt it. */
			s->last = ++clock_;
			s->touched = now_seconds();
			*out = reader_ref(s->r);
		} else {
			ndrop = make_room_locked(true, size, drop);
		}
		pthread_mutex_unlock(&lock);
		for (int i = 0; i < ndrop; i++)
			reader_close(drop[i]);
		if (*out)
			goto out;
	}
	stats_add(STAT_REBUILDS, 1);
	if ((ret = odb_reader_open(odb, raw, &r)) < 0) {
		if (ret != -ENOMEM)
			keep(odb, raw, rawsz, NULL, ret);
		goto out;
	}
	if (off > 0 || end < reader_info(r)->size)
		keep(odb, raw, rawsz, r, 0);
	*out = r;
out:
	if (gated)
		pthread_mutex_unlock(&big_gate);
	return ret;
}

void
readers_prefetch(struct reader *r, uint64_t end)
{
	struct reader *drop = NULL;
	uint64_t upto = end + AHEAD;

	if (reader_data(r))
		return;
	pthread_mutex_lock(&pf.lock);
	if (pf.running) {
		if (pf.r != r) {
			drop = pf.r;
			pf.r = reader_ref(r);
			pf.upto = upto;
		} else if (upto > pf.upto) {
			pf.upto = upto;
		}
		pthread_cond_signal(&pf.wake);
	}
	pthread_mutex_unlock(&pf.lock);
	reader_close(drop);
}

/*
 * Let go of big objects no read has wanted for BIG_IDLE seconds. Whether
 * any is left, to wait for.
 */
static bool
expire_big(void)
{
	struct reader *drop[SLOTS] = { 0 };
	time_t now = now_seconds();
	int ndrop = 0;
	bool left;

	pthread_mutex_lock(&lock);
	for (int i = 0; i < SLOTS; i++)
		if (slots[i].used && slots[i].big &&
		    now - slots[i].touched > BIG_IDLE)
			empty_locked(&slots[i], &drop[ndrop++]);
	left = held_big > 0;
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < ndrop; i++)
		reader_close(drop[i]);
	return left;
}

static void *
prefetch_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pf.lock);
	while (!pf.stop) {
		struct reader *r = pf.r, *done = NULL;
		uint64_t upto = pf.upto;
		long n;

		if (!r) {
			bool big;

			pthread_mutex_unlock(&pf.lock);
			big = expire_big();
			pthread_mutex_lock(&pf.lock);
			if (pf.stop || pf.r) {
				continue;
			} else if (big) {
				/* Sleep in a blocking call, woken once a second. */
				struct timespec until;

				clock_gettime(CLOCK_REALTIME, &until);
				until.tv_sec += 1;
				pthread_cond_timedwait(&pf.wake, &pf.lock, &until);
			} else {
				pthread_cond_wait(&pf.wake, &pf.lock);
			}
			continue;
		}
		reader_ref(r);
		pthread_mutex_unlock(&pf.lock);
		if ((n = reader_prefetch(r, upto, STEP)) > 0)
			stats_add(STAT_PREFETCHED_BYTES, (uint64_t)n);
		pthread_mutex_lock(&pf.lock);
		/* Nothing more to do until a read asks again. */
		if (n <= 0 && pf.r == r && pf.upto == upto) {
			done = r;
			pf.r = NULL;
		}
		pthread_mutex_unlock(&pf.lock);
		reader_close(done);
		reader_close(r);
		pthread_mutex_lock(&pf.lock);
	}
	pthread_mutex_unlock(&pf.lock);
	return NULL;
}

int
readers_start(void)
{
	int err;

	pf.stop = false;
	if ((err = pthread_create(&pf.thread, NULL, prefetch_main, NULL)))
		return -err;
	pf.running = true;
	return 0;
}

void
readers_clear(void)
{
	struct reader *r;

	pthread_mutex_lock(&pf.lock);
	pf.stop = true;
	pthread_cond_signal(&pf.wake);
	pthread_mutex_unlock(&pf.lock);
	if (pf.running)
		pthread_join(pf.thread, NULL);
	pthread_mutex_lock(&pf.lock);
	pf.running = false;
	r = pf.r;
	pf.r = NULL;
	pthread_mutex_unlock(&pf.lock);
	reader_close(r);

	pthread_mutex_lock(&lock);
	for (int i = 0; i < SLOTS; i++) {
		reader_close(slots[i].r);
		memset(&slots[i], 0, sizeof(slots[i]));
	}
	held = held_big = 0;
	pthread_mutex_unlock(&lock);
}

void
readers_drop(const struct odb *odb)
{
	struct reader *drop[SLOTS] = { 0 };
	int n = 0;

	pthread_mutex_lock(&lock);
	for (int i = 0; i < SLOTS; i++)
		if (slots[i].used && slots[i].odb == odb)
			empty_locked(&slots[i], &drop[n++]);
	check_locked();
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < n; i++)
		reader_close(drop[i]);
}
