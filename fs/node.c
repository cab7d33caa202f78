/*
 * node: the node table, where the view makes and shares nodes and the
 * kernel's lookups and forgets count them. Nodes that a cell holds whole are cells
 * (cell.c); the others are in an array of hash buckets. One mutex covers
 * both, held only to find, insert or remove; a miss never reaches it.
 *
 * The array doubles when there are more nodes than buckets and halves when
 * there are fewer than a quarter, so chains stay about one node long from
 * a handful of nodes to millions (a fixed array of 65536 buckets had
 * chains of 15 nodes at a million). Rehashing happens under the mutex
 * and holds up lookups meanwhile, once per doubling: some 80 ns per node,
 * 80 ms when a million nodes move to two million buckets. The cells'
 * table grows and shrinks in the same way (cell.c).
 *
 * A key is in one of the two at most: a key that a cell could hold is
 * looked for among cells first, then among nodes (its node was too large
 * for a cell, or no cell could be had), and only then added.
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <xxhash.h>

#include "cell.h"
#include "node.h"

/* The smallest table, and the one used before any other is allocated. */
#define BUCKETS_MIN 1024

static struct node root = {
	.kind = NODE_ROOT,
	.ino = FUSE_ROOT_ID,
	.mode = NODE_MODE_DIR,
	.time = NODE_TIME_REPO,
};

/* node_enter()'s: the repository the thread works in. */
static _Thread_local uint32_t cur_repo;
static _Thread_local uint64_t cur_seed;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/*
 * The buckets are first_buckets until the table first grows, and again
 * when it shrinks back to BUCKETS_MIN, so that a table always exists: a
 * failed allocation only leaves the chains longer.
 */
static struct node *first_buckets[BUCKETS_MIN];	/* protected by lock */
static struct node **buckets = first_buckets;	/* protected by lock */
/* A power of two. */
static size_t nbuckets = BUCKETS_MIN;	/* protected by lock */
static size_t nnodes;			/* protected by lock */
/* What node_hold() holds: a node, or a cell's index; 0 is no cell. */
static const struct node *held;		/* protected by lock */
static uint32_t held_cell;		/* protected by lock */
static pthread_cond_t unheld = PTHREAD_COND_INITIALIZER;

void
node_init(enum node_kind kind)
{
	root.kind = (uint8_t)kind;
	root.path = "";
}

struct node *
node_root(void)
{
	return &root;
}

/* Node ids of cells: odd, and never the root's 1, as no cell is 0. */
static fuse_ino_t
cell_nodeid(uint32_t idx)
{
	return (fuse_ino_t)idx << 1 | 1;
}

static bool
is_cell(fuse_ino_t nodeid)
{
	return nodeid & 1 && nodeid != FUSE_ROOT_ID;
}

/*
 * Does the cell of n reproduce it exactly? It must be an object file
 * (view.c's object_file(): 'O' and a SHA-1 id) with nothing else set.
 * copy_cell() makes the node back and must agree with this.
 */
static bool
fits_cell(const struct node *n)
{
	return !n->repo && n->kind == NODE_OBJECT && n->keylen == CELL_KEYLEN &&
	    n->key[0] == 'O' && n->mode == NODE_MODE_FILE &&
	    n->time == NODE_TIME_REPO &&
	    !n->path && !n->ext && !n->git_mode && !n->fanout && !n->moving &&
	    n->size <= CELL_SIZE_MAX && n->ino == node_ino(n->key, n->keylen);
}

/* The node cell idx stands for, with st_ino ino, made in *buf. */
static struct node *
copy_cell(uint32_t idx, uint64_t ino, union node_buf *buf)
{
	const struct cell *c = cell_get(idx);
	struct node *n = &buf->n;

	memset(n, 0, offsetof(struct node, key));
	n->ino = ino;
	n->size = cell_size(c);
	n->cell = cell_nodeid(idx);
	n->copy = true;
	n->mode = NODE_MODE_FILE;
	n->time = NODE_TIME_REPO;
	n->keylen = CELL_KEYLEN;
	n->kind = NODE_OBJECT;
	n->type = c->type;
	memcpy(n->key, c->key, CELL_KEYLEN);
	return n;
}

struct node *
node_get(fuse_ino_t nodeid, union node_buf *buf)
{
	if (nodeid == FUSE_ROOT_ID)
		return &root;
	if (is_cell(nodeid)) {
		uint32_t idx = (uint32_t)(nodeid >> 1);

		return copy_cell(idx, node_ino(cell_get(idx)->key,
		    CELL_KEYLEN), buf);
	}
	return (struct node *)nodeid;
}

fuse_ino_t
node_nodeid(const struct node *n)
{
	if (n == &root)
		return FUSE_ROOT_ID;
	if (n->copy)
		return n->cell;
	return (fuse_ino_t)n;
}

void
node_enter(uint32_t repo, uint64_t seed)
{
	cur_repo = repo;
	cur_seed = seed;
}

uint64_t
node_ino(const void *key, size_t keylen)
{
	/* Seed 0 is XXH3_64bits()'s: a single mount's numbers. */
	uint64_t h = XXH3_64bits_withSeed(key, keylen, cur_seed);

	/* Never 0, never the root's 1. */
	return h <= FUSE_ROOT_ID ? h + 2 : h;
}

struct node *
node_new(enum node_kind kind, const void *key, size_t keylen)
{
	struct node *n;

	if (keylen > UINT16_MAX)
		return NULL;
	/*
	 * Not sizeof(*n): the key starts before the struct's tail padding.
	 * A NUL after it, so that a directory's path can be its key's.
	 */
	if (!(n = calloc(1, offsetof(struct node, key) + keylen + 1)))
		return NULL;
	n->kind = (uint8_t)kind;
	n->repo = cur_repo;
	n->keylen = (uint16_t)keylen;
	memcpy(n->key, key, keylen);
	n->ino = node_ino(key, keylen);
	n->time = NODE_TIME_REPO;
	return n;
}

int
node_ext_new(struct node *n)
{
	/* A tree's, a gitlink's: the id and the count, not the union. */
	size_t size = n->kind == NODE_TREE || n->kind == NODE_GITLINK ?
	    offsetof(struct node_ext, subdirs) + sizeof(n->ext->subdirs) :
	    sizeof(*n->ext);

	return (n->ext = calloc(1, size)) ? 0 : -ENOMEM;
}

const unsigned char *
node_id(const struct node *n)
{
	static const unsigned char none[OID_RAWSZ_MAX];

	if (n->ext)
		return n->ext->id;
	/* view.c's view_id_key(): the tag, then the id. */
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
	if (!n || n == &root || n->copy)
		return;
	/* Or n->data: they share their place. Either may be in the key. */
	if (n->path < (char *)n->key || n->path > (char *)n->key + n->keylen)
		free(n->path);
	if (n->ext) {
		if (n->kind == NODE_COMMIT)
			commit_release(&n->ext->commit);
		if (n->kind == NODE_TAG)
			tag_release(&n->ext->tag);
		free(n->ext);
	}
	free(n);
}

/*
 * The bucket of ino in a table of nb, its bits mixed first (Fibonacci
 * hashing: the product's upper half depends on every bit). The low bits
 * alone will not do: a tree entry's number keeps its index there
 * (view_tree.c), so the first entry of every tree shared one bucket, and
 * tar over 200 repositories walked chains of 640 nodes in every lookup.
 */
static size_t
slot_of(uint64_t ino, size_t nb)
{
	return (size_t)((ino * UINT64_C(0x9e3779b97f4a7c15)) >> 32) &
	    (nb - 1);
}

static struct node **
bucket(uint64_t ino)
{
	return &buckets[slot_of(ino, nbuckets)];
}

/*
 * What the table keeps true: nnodes nodes, each in its ino's bucket, each
 * looked up at least once and none a copy; a power of two of buckets.
 * Asserted where a walk of it costs nothing more (a resize, a count).
 */
static bool
check_locked(void)
{
	size_t count = 0;

	if (nbuckets < BUCKETS_MIN || (nbuckets & (nbuckets - 1)))
		return false;
	for (size_t i = 0; i < nbuckets; i++)
		for (const struct node *n = buckets[i]; n; n = n->next) {
			if (slot_of(n->ino, nbuckets) != i || n->nlookup == 0 ||
			    n->copy)
				return false;
			count++;
		}
	return count == nnodes;
}

bool
node_check(void)
{
	bool ok;

	pthread_mutex_lock(&lock);
	ok = check_locked();
	pthread_mutex_unlock(&lock);
	return ok;
}

/* Move every node to a table of nb buckets, if one can be had. */
static void
resize_locked(size_t nb)
{
	struct node **to, *n, *next;

	if (nb == BUCKETS_MIN) {
		to = first_buckets;
		memset(to, 0, sizeof(first_buckets));
	} else if (!(to = calloc(nb, sizeof(*to)))) {
		return;
	}
	for (size_t i = 0; i < nbuckets; i++)
		for (n = buckets[i]; n; n = next) {
			next = n->next;
			n->next = to[slot_of(n->ino, nb)];
			to[slot_of(n->ino, nb)] = n;
		}
	if (buckets != first_buckets)
		free(buckets);
	buckets = to;
	nbuckets = nb;
	assert(check_locked());
}

static struct node *
find_locked(uint32_t repo, uint64_t ino, const void *key, size_t keylen)
{
	for (struct node *n = *bucket(ino); n; n = n->next)
		if (n->ino == ino && n->repo == repo && n->keylen == keylen &&
		    !memcmp(n->key, key, keylen))
			return n;
	return NULL;
}

/* node_intern()'s copies of cells. */
static _Thread_local union node_buf interned;

struct node *
node_intern(struct node *n)
{
	struct node *have = NULL;
	uint32_t idx = 0;

	pthread_mutex_lock(&lock);
	if (!n->repo && n->keylen == CELL_KEYLEN &&
	    (idx = cell_find(n->key)))
		cell_ref(idx);
	else if ((have = find_locked(n->repo, n->ino, n->key, n->keylen)))
		have->nlookup++;
	else if (fits_cell(n))
		idx = cell_add(n->key, n->size, n->type);
	if (idx)
		have = copy_cell(idx, n->ino, &interned);
	if (idx || have) {
		pthread_mutex_unlock(&lock);
		node_free(n);
		return have;
	}
	if (nnodes >= nbuckets)
		resize_locked(2 * nbuckets);
	n->nlookup = 1;
	n->next = *bucket(n->ino);
	*bucket(n->ino) = n;
	nnodes++;
	pthread_mutex_unlock(&lock);
	return n;
}

fuse_ino_t
node_find(const void *key, size_t keylen)
{
	fuse_ino_t nodeid = 0;
	struct node *n;
	uint32_t idx;

	pthread_mutex_lock(&lock);
	if (!cur_repo && keylen == CELL_KEYLEN && (idx = cell_find(key)))
		nodeid = cell_nodeid(idx);
	else if ((n = find_locked(cur_repo, node_ino(key, keylen), key,
	    keylen)))
		nodeid = node_nodeid(n);
	pthread_mutex_unlock(&lock);
	return nodeid;
}

void
node_count(size_t *nodes, size_t *cells)
{
	pthread_mutex_lock(&lock);
	assert(check_locked());
	*cells = cell_count();
	*nodes = nnodes + *cells;
	pthread_mutex_unlock(&lock);
}

size_t
node_longest_chain(void)
{
	size_t most = 0, len;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nbuckets; i++) {
		len = 0;
		for (const struct node *n = buckets[i]; n; n = n->next)
			len++;
		most = len > most ? len : most;
	}
	pthread_mutex_unlock(&lock);
	return most;
}

bool
node_hold(fuse_ino_t nodeid, uint64_t ino, const unsigned char *id,
    size_t rawsz)
{
	const struct node *want = (const struct node *)nodeid;
	unsigned char key[CELL_KEYLEN];
	bool found = false;

	if (nodeid == FUSE_ROOT_ID)
		return false;
	pthread_mutex_lock(&lock);
	if (is_cell(nodeid)) {
		/* Only a live cell is found by its key. */
		key[0] = 'O';
		if (rawsz == CELL_KEYLEN - 1) {
			memcpy(key + 1, id, rawsz);
			found = cell_find(key) == (uint32_t)(nodeid >> 1) &&
			    node_ino(key, CELL_KEYLEN) == ino;
		}
		if (found)
			held_cell = (uint32_t)(nodeid >> 1);
		pthread_mutex_unlock(&lock);
		return found;
	}
	/* Compare addresses first: only a node found in the table is read. */
	for (struct node *n = *bucket(ino); n && !found; n = n->next)
		if (n == want && n->ino == ino &&
		    !memcmp(node_id(n), id, rawsz)) {
			held = n;
			found = true;
		}
	pthread_mutex_unlock(&lock);
	return found;
}

void
node_unhold(void)
{
	pthread_mutex_lock(&lock);
	held = NULL;
	held_cell = 0;
	pthread_cond_broadcast(&unheld);
	pthread_mutex_unlock(&lock);
}

void
node_forget(fuse_ino_t nodeid, uint64_t nlookup)
{
	struct node *n, **pp;

	if (nodeid == FUSE_ROOT_ID)
		return;
	if (is_cell(nodeid)) {
		pthread_mutex_lock(&lock);
		while (held_cell == (uint32_t)(nodeid >> 1))
			pthread_cond_wait(&unheld, &lock);
		cell_forget((uint32_t)(nodeid >> 1), nlookup);
		pthread_mutex_unlock(&lock);
		return;
	}
	n = (struct node *)nodeid;
	pthread_mutex_lock(&lock);
	n->nlookup -= nlookup < n->nlookup ? nlookup : n->nlookup;
	if (n->nlookup) {
		pthread_mutex_unlock(&lock);
		return;
	}
	for (pp = bucket(n->ino); *pp && *pp != n; pp = &(*pp)->next)
		;
	assert(*pp == n);	/* a node the kernel forgets is in the table */
	if (*pp) {
		*pp = n->next;
		nnodes--;
	}
	if (nbuckets > BUCKETS_MIN && nnodes < nbuckets / 4)
		resize_locked(nbuckets / 2);
	while (held == n)
		pthread_cond_wait(&unheld, &lock);
	pthread_mutex_unlock(&lock);
	node_free(n);
}
