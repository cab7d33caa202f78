/*
 * cache: the delta base cache: bases rebuilt while unpacking deltified
 * objects, kept for the next chain that needs them: get before walking
 * further down a chain, put for each base that had to be rebuilt.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "cache.h"

/*
 * Buckets to begin with; doubled whenever entries outnumber them. Few: a
 * mount of many opens hundreds of repositories, most of which never
 * rebuild a delta (4 096 cost 32 KiB each, most of what one open took).
 */
#define MIN_BUCKETS 64

struct entry {
	uint64_t pack, off;
	enum obj_type type;
	size_t len;
	unsigned char *buf;
	struct entry *hnext;		/* hash chain */
	struct entry *prev, *next;	/* LRU list, most recent first */
};

struct cache {
	pthread_mutex_t lock;
	size_t max_bytes;
	size_t bytes;			/* protected by lock */
	struct entry **buckets;		/* protected by lock */
	size_t nbuckets, nentries;	/* protected by lock */
	struct entry *head, *tail;	/* protected by lock */
	uint64_t hits, misses;		/* protected by lock */
};

struct cache *
cache_new(size_t max_bytes)
{
	struct cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if (!(c->buckets = calloc(MIN_BUCKETS, sizeof(*c->buckets)))) {
		free(c);
		return NULL;
	}
	c->nbuckets = MIN_BUCKETS;
	pthread_mutex_init(&c->lock, NULL);
	c->max_bytes = max_bytes;
	return c;
}

static uint64_t
hash_of(uint64_t pack, uint64_t off)
{
	uint64_t key[2] = { pack, off };

	return XXH3_64bits(key, sizeof(key));
}

static struct entry **
bucket_of(struct cache *c, uint64_t pack, uint64_t off)
{
	return &c->buckets[hash_of(pack, off) & (c->nbuckets - 1)];
}

/*
 * Small bases are many (a 64 MiB cache of 1 KiB trees holds 64 000): keep
 * the chains about one long. If the bigger array cannot be had, the
 * chains just grow.
 */
static void
grow_locked(struct cache *c)
{
	size_t n = c->nbuckets * 2;
	struct entry **b = calloc(n, sizeof(*b));

	if (!b)
		return;
	for (size_t i = 0; i < c->nbuckets; i++)
		while (c->buckets[i]) {
			struct entry *e = c->buckets[i];
			size_t k = hash_of(e->pack, e->off) & (n - 1);

			c->buckets[i] = e->hnext;
			e->hnext = b[k];
			b[k] = e;
		}
	free(c->buckets);
	c->buckets = b;
	c->nbuckets = n;
}

static void
lru_unlink(struct cache *c, struct entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		c->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		c->tail = e->prev;
	e->prev = e->next = NULL;
}

static void
lru_push(struct cache *c, struct entry *e)
{
	e->next = c->head;
	if (c->head)
		c->head->prev = e;
	c->head = e;
	if (!c->tail)
		c->tail = e;
}

static struct entry *
find(struct cache *c, uint64_t pack, uint64_t off)
{
	for (struct entry *e = *bucket_of(c, pack, off); e; e = e->hnext)
		if (e->pack == pack && e->off == off)
			return e;
	return NULL;
}

static void
evict(struct cache *c, struct entry *e)
{
	struct entry **pp = bucket_of(c, e->pack, e->off);

	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	lru_unlink(c, e);
	c->bytes -= e->len;
	c->nentries--;
	free(e->buf);
	free(e);
}

void
cache_free(struct cache *c)
{
	if (!c)
		return;
	while (c->head)
		evict(c, c->head);
	pthread_mutex_destroy(&c->lock);
	free(c->buckets);
	free(c);
}

void
cache_clear(struct cache *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	while (c->head)
		evict(c, c->head);
	pthread_mutex_unlock(&c->lock);
}

bool
cache_get(struct cache *c, uint64_t pack, uint64_t off, unsigned char **buf,
    size_t *len, enum obj_type *type)
{
	struct entry *e;
	bool hit = false;

	*buf = NULL;
	if (!c)
		return false;
	pthread_mutex_lock(&c->lock);
	if ((e = find(c, pack, off)) && (*buf = malloc(e->len ? e->len : 1))) {
		memcpy(*buf, e->buf, e->len);
		*len = e->len;
		*type = e->type;
		lru_unlink(c, e);
		lru_push(c, e);
		hit = true;
	}
	if (hit)
		c->hits++;
	else
		c->misses++;
	pthread_mutex_unlock(&c->lock);
	return hit;
}

void
cache_put(struct cache *c, uint64_t pack, uint64_t off,
    const unsigned char *buf, size_t len, enum obj_type type)
{
	struct entry *e;

	if (!c || len > CACHE_MAX_ENTRY || len > c->max_bytes)
		return;
	if (!(e = calloc(1, sizeof(*e))) || !(e->buf = malloc(len ? len : 1))) {
		free(e);
		return;
	}
	memcpy(e->buf, buf, len);
	e->pack = pack;
	e->off = off;
	e->len = len;
	e->type = type;
	pthread_mutex_lock(&c->lock);
	if (find(c, pack, off)) {
		pthread_mutex_unlock(&c->lock);
		free(e->buf);
		free(e);
		return;
	}
	while (c->tail && c->bytes + len > c->max_bytes)
		evict(c, c->tail);
	if (c->nentries >= c->nbuckets)
		grow_locked(c);
	e->hnext = *bucket_of(c, pack, off);
	*bucket_of(c, pack, off) = e;
	lru_push(c, e);
	c->bytes += len;
	c->nentries++;
	pthread_mutex_unlock(&c->lock);
}

void
cache_counts(struct cache *c, uint64_t *hits, uint64_t *misses)
{
	pthread_mutex_lock(&c->lock);
	*hits = c->hits;
	*misses = c->misses;
	pthread_mutex_unlock(&c->lock);
}
