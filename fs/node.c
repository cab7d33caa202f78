/*
 * node: the node table. Called by ops.c on lookup and forget. The table is
 * a fixed array of hash buckets under one mutex; only hits on objects come
 * here (a miss never creates a node), so the lock is held briefly and
 * never on the miss path.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "node.h"

#define BUCKETS 65536

static struct node root = { .kind = NODE_ROOT, .ino = FUSE_ROOT_ID };
static struct node objects = { .kind = NODE_OBJECTS };
static struct node fanouts[256];
static size_t id_rawsz;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct node *buckets[BUCKETS];	/* protected by lock */

/* A stable inode number: never 0, never the root's 1. */
static uint64_t
ino_of(const void *key, size_t len)
{
	uint64_t h = XXH3_64bits(key, len);

	return h <= FUSE_ROOT_ID ? h + 2 : h;
}

void
node_init(size_t rawsz)
{
	char key[32];

	id_rawsz = rawsz;
	objects.ino = ino_of("dir:objects", 11);
	for (unsigned b = 0; b < 256; b++) {
		int n = snprintf(key, sizeof(key), "dir:objects/%02x", b);

		fanouts[b].kind = NODE_FANOUT;
		fanouts[b].fanout = b;
		fanouts[b].ino = ino_of(key, (size_t)n);
	}
}

struct node *
node_root(void)
{
	return &root;
}

struct node *
node_objects(void)
{
	return &objects;
}

struct node *
node_fanout(unsigned b)
{
	return &fanouts[b & 255];
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

static size_t
bucket_of(const unsigned char *id)
{
	/* Ids are uniformly distributed: their bytes are a hash already. */
	return ((size_t)id[1] << 8 | id[2]) % BUCKETS;
}

uint64_t
node_object_ino(const unsigned char *id)
{
	unsigned char key[OID_RAWSZ_MAX + 2];

	/* Keyed by id and mode, as tree entries will be. */
	memcpy(key, id, id_rawsz);
	key[id_rawsz] = 0x81;	/* 0100444 >> 8: a regular file */
	key[id_rawsz + 1] = 0x24;
	return ino_of(key, id_rawsz + 2);
}

struct node *
node_object(const unsigned char *id, const struct objinfo *info)
{
	struct node **head = &buckets[bucket_of(id)], *n;

	pthread_mutex_lock(&lock);
	for (n = *head; n; n = n->next)
		if (!memcmp(n->id, id, id_rawsz))
			break;
	if (!n && (n = calloc(1, sizeof(*n)))) {
		n->kind = NODE_OBJECT;
		memcpy(n->id, id, id_rawsz);
		n->info = *info;
		n->ino = node_object_ino(id);
		n->next = *head;
		*head = n;
	}
	if (n)
		n->nlookup++;
	pthread_mutex_unlock(&lock);
	return n;
}

void
node_forget(fuse_ino_t nodeid, uint64_t nlookup)
{
	struct node *n = node_get(nodeid), **pp;

	if (n->kind != NODE_OBJECT)
		return;
	pthread_mutex_lock(&lock);
	n->nlookup -= nlookup < n->nlookup ? nlookup : n->nlookup;
	if (n->nlookup == 0) {
		for (pp = &buckets[bucket_of(n->id)]; *pp; pp = &(*pp)->next)
			if (*pp == n) {
				*pp = n->next;
				break;
			}
		free(n);
	}
	pthread_mutex_unlock(&lock);
}
