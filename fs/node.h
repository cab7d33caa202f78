/*
 * node: what each FUSE node id stands for.
 *
 * A node is one file, directory or symlink of the mount: its kind, its
 * attributes and whatever its kind needs to answer (a parsed tree, a
 * commit, a symlink's target). Nodes are immutable once made, so handlers
 * read them without locks. They live in a hash table keyed by what they
 * are (view.c builds the keys), counted by the kernel's lookups and freed
 * when the kernel forgets them; the root alone is fixed. A node id is the
 * node's address (as in libfuse's passthrough_ll), except the root's 1.
 *
 * st_ino is not the node id: it is a hash of the key, so it stays the same
 * across remounts for backup tools.
 */
#ifndef ODBFS_NODE_H
#define ODBFS_NODE_H

#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>
#include <stdint.h>
#include <sys/types.h>

#include "commit.h"
#include "object.h"
#include "oid.h"
#include "tree.h"

enum node_kind {
	NODE_ROOT,
	NODE_OBJECTS,		/* objects/ */
	NODE_FANOUT,		/* objects/xx/ */
	NODE_OBJECT,		/* objects/<id> */
	NODE_COMMITS,		/* commits/ */
	NODE_TREES,		/* trees/ */
	NODE_REFDIR,		/* refs/ and below: path */
	NODE_COMMIT,		/* commits/<id>/ */
	NODE_TREE,		/* a tree as a directory: path */
	NODE_GITLINK,		/* a submodule: an empty directory */
	NODE_BLOB,		/* a file of a tree */
	NODE_DATA,		/* a file whose bytes the node holds */
	NODE_SYMLINK,		/* a symlink: target */
	NODE_META,		/* .odbfs/ */
	NODE_STATS,		/* .odbfs/stats: made anew at each lookup */
};

/* How long the kernel may keep what it learned about a node. */
#define NODE_TIMEOUT_IMMUTABLE 86400.0
#define NODE_TIMEOUT_MOVING 0.0

struct node {
	enum node_kind kind;
	uint64_t ino;			/* st_ino */
	mode_t mode;			/* S_IFDIR | 0555, ... */
	uint64_t size;
	int64_t time;			/* st_mtime, st_ctime, st_atime */
	double timeout;			/* entry and attribute timeout */
	unsigned char id[OID_RAWSZ_MAX];	/* the object, where one is */
	enum obj_type type;		/* its type, OBJ_NONE if none */
	unsigned git_mode;		/* tree entries: mode in the tree */
	unsigned fanout;		/* NODE_FANOUT: first byte */
	char *path;			/* directories: path from the root */
	char *data;			/* symlink target, NODE_DATA bytes */
	unsigned char *buf;		/* NODE_COMMIT, NODE_TREE: the object */
	struct commit commit;		/* NODE_COMMIT */
	struct tree tree;		/* NODE_TREE */
	size_t *by_name;		/* NODE_TREE: entries sorted by name */

	uint64_t nlookup;		/* protected by the table lock */
	struct node *next;		/* protected by the table lock */
	size_t keylen;
	unsigned char key[];
};

void node_init(void);

struct node *node_root(void);
struct node *node_get(fuse_ino_t nodeid);
fuse_ino_t node_nodeid(const struct node *n);

/* A new, unshared node with the given key; NULL when out of memory. */
struct node *node_new(enum node_kind kind, const void *key, size_t keylen);

/* st_ino for a key, for entries listed without a node. */
uint64_t node_ino(const void *key, size_t keylen);

/*
 * Put n in the table, or find the node already there with its key (and
 * free n); either way its lookup count goes up by one. The caller replies
 * with the result to a lookup.
 */
struct node *node_intern(struct node *n);

/*
 * The node id of the node with this key, or 0 if the kernel does not know
 * it. Only for cache invalidation: the node may be forgotten meanwhile,
 * and invalidating a name under a stale id is harmless.
 */
fuse_ino_t node_find(const void *key, size_t keylen);

/* The kernel forgot nlookup references to nodeid. */
void node_forget(fuse_ino_t nodeid, uint64_t nlookup);

/* Free a node that was never interned. */
void node_free(struct node *n);

#endif
