/*
 * node: what each FUSE node id stands for.
 *
 * The root, objects/ and the 256 fan-out directories are fixed nodes that
 * live as long as the daemon. Every object the kernel looks up gets a node
 * from a hash table keyed by its id, counted by the kernel's lookups and
 * freed when the kernel forgets it. A node id is the node's address (as in
 * libfuse's passthrough_ll), except the root's, which FUSE fixes at 1.
 *
 * st_ino is not the node id: it is derived from what the node is with
 * xxHash, so it stays the same across remounts for backup tools.
 */
#ifndef ODBFS_NODE_H
#define ODBFS_NODE_H

#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>
#include <stdint.h>

#include "object.h"
#include "oid.h"

enum node_kind {
	NODE_ROOT,
	NODE_OBJECTS,		/* objects/ */
	NODE_FANOUT,		/* objects/xx/ */
	NODE_OBJECT,		/* objects/<id>, objects/xx/<id> */
};

struct node {
	enum node_kind kind;
	uint64_t ino;			/* st_ino */
	unsigned fanout;		/* NODE_FANOUT: the first byte */
	unsigned char id[OID_RAWSZ_MAX];	/* NODE_OBJECT */
	struct objinfo info;		/* NODE_OBJECT */
	uint64_t nlookup;		/* protected by the table lock */
	struct node *next;		/* hash chain; table lock */
};

/* Set up the fixed nodes for ids of rawsz bytes. */
void node_init(size_t rawsz);

struct node *node_root(void);
struct node *node_objects(void);
struct node *node_fanout(unsigned b);

/* The node behind a FUSE node id, and back. */
struct node *node_get(fuse_ino_t nodeid);
fuse_ino_t node_nodeid(const struct node *n);

/*
 * The node of object id with info, its lookup count raised by one: the
 * caller replies with it to a lookup. NULL when out of memory.
 */
struct node *node_object(const unsigned char *id, const struct objinfo *info);

/* The st_ino of object id's file, whether or not it has a node. */
uint64_t node_object_ino(const unsigned char *id);

/* The kernel forgot nlookup references to nodeid. */
void node_forget(fuse_ino_t nodeid, uint64_t nlookup);

#endif
