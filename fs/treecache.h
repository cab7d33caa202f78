/*
 * treecache: parsed trees, shared by the directories that show them and
 * bounded in bytes.
 *
 * A tree directory's node keeps its tree's id and counts, never the tree:
 * a walk of every commit's tree makes hundreds of thousands of nodes that
 * the kernel keeps as long as it likes, and what each holds must not grow
 * with its tree. A lookup or a listing in a tree takes the parse from
 * here, and view_tree.c reads and parses the tree again when it has gone.
 *
 * One table for the whole mount, keyed by the repository (its struct odb,
 * as the readers are) and the tree's id: a hostile repository may store
 * other bytes under an id, so two repositories never share a parse. The
 * least recently used trees go once the table holds more than
 * TREECACHE_MAX bytes, never one that is held; so the table holds at most
 * TREECACHE_MAX bytes, or the one tree last added when that alone is more.
 */
#ifndef ODBFS_TREECACHE_H
#define ODBFS_TREECACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "odbstore/oid.h"
#include "odbstore/tree.h"

#define TREECACHE_MAX ((size_t)8 << 20)

/* A tree as view_tree.c parses it: immutable once added. */
struct ptree {
	unsigned char *buf;		/* the object, malloc'd */
	size_t len;
	struct tree tree;		/* into buf */
	size_t *by_name;		/* entries sorted by name, malloc'd */
	size_t subdirs;			/* entries that are directories */
	size_t dups, dup_off;		/* names given twice, not shown */
	size_t longs, long_off;		/* names too long to open */
	/* The table's: */
	const void *owner;
	unsigned char id[OID_RAWSZ_MAX];
	size_t rawsz;			/* of id */
	size_t bytes;			/* what it holds, for the bound */
	uint32_t refs;			/* protected by the table's lock */
	bool cached;			/* in the table; protected by it too */
	struct ptree *next, *lru_prev, *lru_next;
};

/*
 * The parse of tree id in owner's repository, held (treecache_put() it):
 * 0, or -ENOENT when the table does not have it.
 */
int treecache_get(const void *owner, const unsigned char *id, size_t rawsz,
    struct ptree **out);

/*
 * Put t, which the caller made (calloc'd, its buf, tree and by_name
 * filled), in the table for owner and id, held; or, when another thread
 * added the same tree first, free t and return that one, held.
 */
struct ptree *treecache_add(const void *owner, const unsigned char *id,
    size_t rawsz, struct ptree *t);

/* Let go of t; freed once neither the table nor anyone holds it. */
void treecache_put(struct ptree *t);

/* Free a parse the table never had (t may be NULL). */
void treecache_free(struct ptree *t);

/* Drop owner's trees: its repository is being closed. */
void treecache_forget(const void *owner);

/* Drop every tree: memory is short. */
void treecache_clear(void);

/* Trees and bytes the table holds now. */
void treecache_count(size_t *trees, size_t *bytes);

#endif
