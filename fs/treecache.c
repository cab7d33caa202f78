/*
 * treecache: the table of parsed trees (see treecache.h): a hash table of
 * chains over (owner, id), and a list from the most to the least recently
 * used, both under one lock, held only to find, add or drop an entry.
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "treecache.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* All protected by lock: */
static struct ptree **buckets;		/* nbuckets of them, a power of two */
static size_t nbuckets, ntrees, nbytes;
static struct ptree *mru, *lru;		/* the list's ends */

/* The bucket of (owner, id) among n, a power of two. */
static size_t
bucket_of(const void *owner, const unsigned char *id, size_t rawsz, size_t n)
{
	return (size_t)XXH3_64bits_withSeed(id, rawsz,
	    (uint64_t)(uintptr_t)owner) & (n - 1);
}

static bool
same(const struct ptree *t, const void *owner, const unsigned char *id,
    size_t rawsz)
{
	return t->owner == owner && !memcmp(t->id, id, rawsz);
}

void
treecache_free(struct ptree *t)
{
	if (!t)
		return;
	tree_release(&t->tree);
	free(t->by_name);
	free(t->buf);
	free(t);
}

static void
lru_unlink(struct ptree *t)
{
	if (t->lru_prev)
		t->lru_prev->lru_next = t->lru_next;
	else
		mru = t->lru_next;
	if (t->lru_next)
		t->lru_next->lru_prev = t->lru_prev;
	else
		lru = t->lru_prev;
	t->lru_prev = t->lru_next = NULL;
}

static void
lru_push(struct ptree *t)
{
	t->lru_prev = NULL;
	t->lru_next = mru;
	if (mru)
		mru->lru_prev = t;
	mru = t;
	if (!lru)
		lru = t;
}

/*
 * Take t out of the table, with lock held; if nothing holds it, onto the
 * list *gone, which free_list() frees once the lock is let go.
 */
static void
drop_locked(struct ptree *t, struct ptree **gone)
{
	struct ptree **p = &buckets[bucket_of(t->owner, t->id, t->rawsz,
	    nbuckets)];

	while (*p != t)
		p = &(*p)->next;
	*p = t->next;
	lru_unlink(t);
	t->cached = false;
	ntrees--;
	nbytes -= t->bytes;
	if (t->refs == 0) {
		t->next = *gone;
		*gone = t;
	}
}

static void
free_list(struct ptree *gone)
{
	while (gone) {
		struct ptree *next = gone->next;

		treecache_free(gone);
		gone = next;
	}
}

int
treecache_get(const void *owner, const unsigned char *id, size_t rawsz,
    struct ptree **out)
{
	struct ptree *t = NULL;

	*out = NULL;
	pthread_mutex_lock(&lock);
	if (nbuckets)
		for (t = buckets[bucket_of(owner, id, rawsz, nbuckets)]; t &&
		    !same(t, owner, id, rawsz); t = t->next)
			;
	if (t) {
		t->refs++;
		lru_unlink(t);
		lru_push(t);
	}
	pthread_mutex_unlock(&lock);
	*out = t;
	return t ? 0 : -ENOENT;
}

/* Twice the buckets, with lock held; nothing if that fails. */
static void
grow_locked(void)
{
	size_t nb = nbuckets ? 2 * nbuckets : 1024;
	struct ptree **grown = calloc(nb, sizeof(*grown));

	if (!grown)
		return;
	for (size_t i = 0; i < nbuckets; i++)
		for (struct ptree *t = buckets[i], *next; t; t = next) {
			size_t b = bucket_of(t->owner, t->id, t->rawsz, nb);

			next = t->next;
			t->next = grown[b];
			grown[b] = t;
		}
	free(buckets);
	buckets = grown;
	nbuckets = nb;
}

struct ptree *
treecache_add(const void *owner, const unsigned char *id, size_t rawsz,
    struct ptree *t)
{
	struct ptree *old, *gone = NULL;
	size_t b;

	t->owner = owner;
	memcpy(t->id, id, rawsz);
	t->rawsz = rawsz;
	t->bytes = sizeof(*t) + t->len + t->tree.n * (sizeof(*t->tree.entries)
	    + sizeof(*t->by_name));
	t->refs = 1;
	pthread_mutex_lock(&lock);
	if (ntrees >= nbuckets)
		grow_locked();
	if (!nbuckets) {
		/* No table: held by the caller alone, freed when let go. */
		pthread_mutex_unlock(&lock);
		return t;
	}
	b = bucket_of(owner, id, rawsz, nbuckets);
	for (old = buckets[b]; old && !same(old, owner, id, rawsz);
	    old = old->next)
		;
	if (old) {
		old->refs++;
		pthread_mutex_unlock(&lock);
		treecache_free(t);
		return old;
	}
	t->next = buckets[b];
	buckets[b] = t;
	t->cached = true;
	lru_push(t);
	ntrees++;
	nbytes += t->bytes;
	/*
	 * Past the bound, the least recently used go: those nothing holds
	 * are freed below, one at a time, and those held when let go.
	 */
	while (nbytes > TREECACHE_MAX && lru != t)
		drop_locked(lru, &gone);
	pthread_mutex_unlock(&lock);
	free_list(gone);
	return t;
}

void
treecache_put(struct ptree *t)
{
	bool last;

	if (!t)
		return;
	pthread_mutex_lock(&lock);
	assert(t->refs > 0);
	last = --t->refs == 0 && !t->cached;
	pthread_mutex_unlock(&lock);
	if (last)
		treecache_free(t);
}

/* Drop owner's trees, or all with owner NULL. */
static void
drop_all(const void *owner)
{
	struct ptree *gone = NULL;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nbuckets; i++)
		for (struct ptree *t = buckets[i], *next; t; t = next) {
			next = t->next;
			if (!owner || t->owner == owner)
				drop_locked(t, &gone);
		}
	pthread_mutex_unlock(&lock);
	free_list(gone);
}

void
treecache_forget(const void *owner)
{
	drop_all(owner);
}

void
treecache_clear(void)
{
	drop_all(NULL);
}

void
treecache_count(size_t *trees, size_t *bytes)
{
	pthread_mutex_lock(&lock);
	*trees = ntrees;
	*bytes = nbytes;
	pthread_mutex_unlock(&lock);
}
