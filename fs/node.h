/*
 * node: what each FUSE node id stands for.
 *
 * A node is one file, directory or symlink of the mount: its kind, its
 * attributes and whatever its kind needs to answer (a commit's header, a
 * symlink's target; a tree's id, whose parse treecache.h keeps apart). Nodes are immutable once made, so handlers
 * read them without locks. They live in a hash table keyed by what they
 * are (view.c builds the keys), counted by the kernel's lookups and freed
 * when the kernel forgets them; the root alone is fixed. A node id is the
 * node's address (as in libfuse's passthrough_ll), except the root's 1.
 *
 * The nodes of objects/<id>, by far the most numerous, are kept as cells
 * (cell.h) when a cell can hold all of them: 32 bytes rather than a
 * struct node and its key. Their node id is odd (2 * index + 1, never 1;
 * addresses are even), and node_get() and node_intern() hand out a copy
 * of one as a struct node.
 *
 * st_ino is not the node id: it is a hash of the key, so it stays the same
 * across remounts for backup tools.
 */
#ifndef ODBFS_NODE_H
#define ODBFS_NODE_H

#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "odbstore/commit.h"
#include "odbstore/object.h"
#include "odbstore/oid.h"
#include "odbstore/tree.h"

enum node_kind {
	NODE_ROOT,
	NODE_OBJECTS,		/* objects/ */
	NODE_FANOUT,		/* objects/xx/ */
	NODE_OBJECT,		/* objects/<id> */
	NODE_COMMITS,		/* commits/ */
	NODE_TREES,		/* trees/ */
	NODE_TAGS,		/* tags/ */
	NODE_REFDIR,		/* refs/ and below: path */
	NODE_COMMIT,		/* commits/<id>/ */
	NODE_TAG,		/* tags/<id>/ */
	NODE_TREE,		/* a tree as a directory: path */
	NODE_GITLINK,		/* a submodule: an empty directory */
	NODE_BLOB,		/* a file of a tree */
	NODE_DATA,		/* a file whose bytes the node holds */
	NODE_SLICE,		/* a file whose bytes are part of an object */
	NODE_SYMLINK,		/* a symlink: target */
	NODE_META,		/* .odbfs/ */
	NODE_STATS,		/* .odbfs/stats: made anew at each lookup */
	NODE_GROUP,		/* --root: the root or a group under it */
	NODE_BYID,		/* by-id/: looked up, never listed */
};

/*
 * Modes before -o umask= (ops.c applies it): git's 0644 and 0755 are these
 * under the default umask 022.
 */
#define NODE_MODE_FILE (S_IFREG | 0666)
#define NODE_MODE_EXEC (S_IFREG | 0777)
#define NODE_MODE_DIR (S_IFDIR | 0777)

/*
 * The time of a node that has none of its own (all but a commit and what
 * is below it): the repository's, which ops.c shows (struct odbfs epoch).
 */
#define NODE_TIME_REPO INT64_MIN

/* How long the kernel may keep what it learned about a node. */
#define NODE_TIMEOUT_IMMUTABLE 86400.0
#define NODE_TIMEOUT_MOVING 0.0

/*
 * What a node whose key holds no object id keeps of its object: commit and
 * tree directories, gitlinks, HEAD and refs, slices. One allocation, so
 * that the files of objects/ and of trees, by far the most nodes, pay
 * nothing for it.
 *
 * A commit directory keeps its commit's header fields, copied (bounded by
 * COMMIT_HEADER_MAX, a few hundred bytes as git writes them), never the
 * object: its message, which may be any size, is read from the object by
 * the message file, a NODE_SLICE, when that is read.
 */
struct node_ext {
	unsigned char id[OID_RAWSZ_MAX];	/* the object */
	union {
		struct commit commit;		/* NODE_COMMIT */
		struct {
			struct tag tag;		/* NODE_TAG */
			/* The tree it peels to, if it peels to one. */
			unsigned char tag_tree[OID_RAWSZ_MAX];
			bool tag_has_tree;
			/* Its object's type: the line's if it is missing. */
			uint8_t tag_object_type;
		};
		/*
		 * NODE_TREE: its entries that are directories. The tree
		 * itself is parsed when asked for (treecache.h). A tree's
		 * and a gitlink's node_ext ends here: node_ext_new() gives
		 * them no more.
		 */
		size_t subdirs;
		/*
		 * NODE_SLICE: where its bytes start in the object; they run
		 * for the node's size.
		 */
		uint64_t slice_off;
	};
};

/*
 * The nodes that are no cell are still many (a walk of a tree makes one a
 * file), so the fields are as small as their values allow and ordered so
 * that none pads: the key, which follows, starts at byte 71.
 */
struct node {
	uint64_t ino;			/* st_ino */
	uint64_t size;
	int64_t time;			/* st_mtime, or NODE_TIME_REPO */
	union {				/* malloc'd; never both */
		char *path;		/* directories: path from the root */
		char *data;		/* symlink target, NODE_DATA bytes */
		/* Either may point into key, which holds it (view.c). */
	};
	struct node_ext *ext;		/* see above; NULL for other nodes */
	uint64_t nlookup;		/* protected by the table lock */
	union {
		struct node *next;	/* protected by the table lock */
		fuse_ino_t cell;	/* a copy: the cell's node id */
	};
	uint32_t repo;			/* node_enter()'s; 0: a single mount */
	uint16_t mode;			/* NODE_MODE_DIR, ...: 16 bits do */
	uint16_t git_mode;		/* tree entries: mode in the tree */
	uint16_t keylen;		/* at most view.c's KEY_MAX, 4160 */
	uint8_t kind;			/* enum node_kind */
	uint8_t type;			/* enum obj_type, OBJ_NONE if none */
	uint8_t fanout;			/* NODE_FANOUT: first byte */
	bool moving;			/* NODE_TIMEOUT_MOVING, not IMMUTABLE */
	bool copy;			/* of a cell, by node_get(), node_intern() */
	unsigned char key[];
};

/* Room for the copy of a cell as a struct node, key included. */
union node_buf {
	struct node n;
	unsigned char room[offsetof(struct node, key) + 64];
};

/* The root node is of kind root (NODE_ROOT; --root: NODE_GROUP). */
void node_init(enum node_kind root);

struct node *node_root(void);

/*
 * The node of nodeid. That of a cell is a copy in *buf, valid as long as
 * buf; any other is the node itself.
 */
struct node *node_get(fuse_ino_t nodeid, union node_buf *buf);

fuse_ino_t node_nodeid(const struct node *n);

/*
 * A new, unshared node with the given key (at most UINT16_MAX bytes, and
 * a NUL after them), the repository's time and st_ino node_ino(key); NULL
 * when out of memory.
 */
struct node *node_new(enum node_kind kind, const void *key, size_t keylen);

/*
 * Give n a zeroed node_ext; -ENOMEM when out of memory (node_free frees it
 * either way).
 */
int node_ext_new(struct node *n);

/*
 * The object n stands for: in its key for objects/<id> and the files and
 * symlinks of trees ('O', 'B', 'S' keys: the id follows the tag), else in
 * its node_ext; all zeros when it has none (n->type is then OBJ_NONE).
 * Valid as long as n.
 */
const unsigned char *node_id(const struct node *n);

/* Entry and attribute timeout of n. */
double node_timeout(const struct node *n);

/* st_ino for a key, for entries listed without a node. */
uint64_t node_ino(const void *key, size_t keylen);

/*
 * The repository the calling thread works in, for a mount of many
 * (fs/forge.c): the nodes it makes from now on carry repo, their st_ino
 * is their key hashed with seed (so that the same path in two
 * repositories has two numbers, each the same at every mount), and
 * node_intern() and node_find() find only that repository's nodes. A
 * single mount's repository is repo 0, seed 0, whose numbers are the
 * ones odbfs always gave (its watcher's thread enters it too). Cells are
 * for repo 0 alone.
 */
void node_enter(uint32_t repo, uint64_t seed);

/*
 * Put n in the table, or find the node already there with its key (and
 * free n); either way its lookup count goes up by one. The caller replies
 * with the result to a lookup. A node kept as a cell comes back as a copy
 * in a buffer of the calling thread, valid until its next node_intern().
 */
struct node *node_intern(struct node *n);

/*
 * The node id of the node with this key, or 0 if the kernel does not know
 * it. A hint: the node may be forgotten meanwhile. Invalidating a name
 * under a stale id is harmless; anything more takes node_hold().
 */
fuse_ino_t node_find(const void *key, size_t keylen);

/* Nodes the kernel holds (the root aside), and how many are cells. */
void node_count(size_t *nodes, size_t *cells);

/*
 * Whether the table agrees with itself (each node in its inode number's
 * bucket, looked up, counted). For assertions and tests.
 */
bool node_check(void);

/* The most nodes one bucket of the table holds: a walk, for tests. */
size_t node_longest_chain(void);

/* The kernel forgot nlookup references to nodeid. */
void node_forget(fuse_ino_t nodeid, uint64_t nlookup);

/*
 * Keep node nodeid from being freed, so that its id goes to no other node,
 * until node_unhold(): if it is still in the table, has st_ino ino and
 * stands for object id. One node at a time, for ahead.c's thread, which
 * tells the kernel about the node meanwhile. A forget that would free it
 * waits.
 */
bool node_hold(fuse_ino_t nodeid, uint64_t ino, const unsigned char *id,
    size_t rawsz);
void node_unhold(void);

/* Free a node that was never interned. */
void node_free(struct node *n);

#endif
