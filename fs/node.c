/*
 * node: the node table. Called by view.c (to make and share nodes) and
 * ops.c (lookups and forgets). The table is a fixed array of hash buckets
 * under one mutex, held only to find, insert or remove; a miss never
 * reaches it.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "node.h"

#define BUCKETS 65536

static struct node root = {
	.kind = NODE_ROOT,
	.ino = FUSE_ROOT_ID,
	.mode = S_IFDIR | 0555,
	.timeout = NODE_TIMEOUT_IMMUTABLE,
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct node *buckets[BUCKETS];	/* protected by lock */

void
node_init(void)
{
	root.path = "";
}

struct node *
node_root(void)
{
	return &root;
}

struct node *
node_get(fuse_ino_t nodeid)
{
	return nodeid == FUSE_ROOT_ID ? &root : (struct node *)nodeid;
}

fuse_ino_t
node_nodeid(const struct node *n)
{
	return n == &root ? FUSE_ROOT_ID : (fuse_ino_t)n;
}

uint64_t
node_ino(const void *key, size_t keylen)
{
	uint64_t h = XXH3_64bits(key, keylen);

	/* Never 0, never the root's 1. */
	return h <= FUSE_ROOT_ID ? h + 2 : h;
}

struct node *
node_new(enum node_kind kind, const void *key, size_t keylen)
{
	struct node *n = calloc(1, sizeof(*n) + keylen);

	if (!n)
		return NULL;
	n->kind = kind;
	n->keylen = keylen;
	memcpy(n->key, key, keylen);
	n->ino = node_ino(key, keylen);
	n->timeout = NODE_TIMEOUT_IMMUTABLE;
	return n;
}

void
node_free(struct node *n)
{
	if (!n || n == &root)
		return;
	free(n->path);
	free(n->data);
	free(n->buf);
	commit_release(&n->commit);
	tree_release(&n->tree);
	free(n->by_name);
	free(n);
}

static struct node **
bucket(uint64_t ino)
{
	return &buckets[ino % BUCKETS];
}

static struct node *
find_locked(uint64_t ino, const void *key, size_t keylen)
{
	for (struct node *n = *bucket(ino); n; n = n->next)
		if (n->ino == ino && n->keylen == keylen &&
		    !memcmp(n->key, key, keylen))
			return n;
	return NULL;
}

struct node *
node_intern(struct node *n)
{
	struct node *have;

	pthread_mutex_lock(&lock);
	if ((have = find_locked(n->ino, n->key, n->keylen))) {
		have->nlookup++;
		pthread_mutex_unlock(&lock);
		node_free(n);
		return have;
	}
	n->nlookup = 1;
	n->next = *bucket(n->ino);
	*bucket(n->ino) = n;
	pthread_mutex_unlock(&lock);
	return n;
}

fuse_ino_t
node_find(const void *key, size_t keylen)
{
	struct node *n;

	pthread_mutex_lock(&lock);
	n = find_locked(node_ino(key, keylen), key, keylen);
	pthread_mutex_unlock(&lock);
	return n ? node_nodeid(n) : 0;
}

void
node_forget(fuse_ino_t nodeid, uint64_t nlookup)
{
	struct node *n = node_get(nodeid), **pp;

	if (n == &root)
		return;
	pthread_mutex_lock(&lock);
	n->nlookup -= nlookup < n->nlookup ? nlookup : n->nlookup;
	if (n->nlookup) {
		pthread_mutex_unlock(&lock);
		return;
	}
	for (pp = bucket(n->ino); *pp; pp = &(*pp)->next)
		if (*pp == n) {
			*pp = n->next;
			break;
		}
	pthread_mutex_unlock(&lock);
	node_free(n);
}
