/*
 * node: the node table. Called by view.c (to make and share nodes) and
 * ops.c (lookups and forgets). The table is a fixed array of hash buckets
 * under one mutex, held only to find, insert or remove; a miss never
 * reaches it.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "node.h"

#define BUCKETS 65536

static struct node root = {
	.kind = NODE_ROOT,
	.ino = FUSE_ROOT_ID,
	.mode = S_IFDIR | 0555,
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
	struct node *n;

	if (keylen > UINT16_MAX)
		return NULL;
	/* Not sizeof(*n): the key starts before the struct's tail padding. */
	if (!(n = calloc(1, offsetof(struct node, key) + keylen)))
		return NULL;
	n->kind = (uint8_t)kind;
	n->keylen = (uint16_t)keylen;
	memcpy(n->key, key, keylen);
	n->ino = node_ino(key, keylen);
	return n;
}

int
node_ext_new(struct node *n)
{
	return (n->ext = calloc(1, sizeof(*n->ext))) ? 0 : -ENOMEM;
}

const unsigned char *
node_id(const struct node *n)
{
	static const unsigned char none[OID_RAWSZ_MAX];

	if (n->ext)
		return n->ext->id;
	/* view.c's id_key(): the tag, then the id. */
	if (n->keylen > 0 && (n->key[0] == 'O' || n->key[0] == 'B' ||
	    n->key[0] == 'S'))
		return n->key + 1;
	return none;
}

double
node_timeout(const struct node *n)
{
	return n->moving ? NODE_TIMEOUT_MOVING : NODE_TIMEOUT_IMMUTABLE;
}

void
node_free(struct node *n)
{
	if (!n || n == &root)
		return;
	free(n->path);		/* or n->data: they share their place */
	if (n->ext) {
		free(n->ext->buf);
		if (n->kind == NODE_COMMIT)
			commit_release(&n->ext->commit);
		if (n->kind == NODE_TREE) {
			tree_release(&n->ext->tree);
			free(n->ext->by_name);
		}
		free(n->ext);
	}
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
