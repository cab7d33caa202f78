/*
 * layout: the mount's layout, one row per kind of node, and what every
 * operation asks of it. A directory's row is its kind's description
 * (struct view_kind, in the view file of that kind); lookups, listings,
 * link counts, which listings the kernel may keep, which directories show
 * the refs, and which cached misses a new snapshot drops all come from
 * those rows. Adding a kind of directory is a view file and a row here.
 */
#ifndef ODBFS_LAYOUT_H
#define ODBFS_LAYOUT_H

#include <stdbool.h>
#include <sys/types.h>

#include "dirlist.h"
#include "node.h"
#include "odbfs.h"

struct view_kind;

/* The description of directories of kind, NULL if kind is no directory. */
const struct view_kind *layout_kind(enum node_kind kind);

/*
 * The child name of dir, interned (its lookup count raised by one): 0,
 * -ENOENT, -ENOTDIR, or -EIO for a corrupt entry (logged).
 */
int layout_lookup(struct odbfs *fs, struct node *dir, const char *name,
    struct node **out);

/* dir's entries, without "." and "..". */
int layout_list(struct odbfs *fs, struct node *dir, struct dirlist **out);

/* How long the kernel may cache a miss of a name in dir. */
double layout_negative_timeout(const struct odbfs *fs, const struct node *dir);

/* Directory n's st_nlink (see enum view_nlink). */
nlink_t layout_nlink(const struct odbfs *fs, const struct node *n);

/* May the kernel keep directory n's listing (FUSE's cache_readdir)? */
bool layout_cache_listing(const struct node *n);

/*
 * Is what dir shows read from the refs (HEAD and refs/)? Then a lookup or
 * listing in it holds reflinks' read lock from reading them to its reply.
 */
bool layout_shows_refs(const struct node *dir);

/* Are n's bytes its object's, rebuilt by the store (not held by n)? */
bool layout_object_bytes(const struct node *n);

/*
 * A new snapshot has the object raw, which a lookup missed: drop the
 * kernel's cached miss of it in every directory named by ids.
 */
void layout_drop_id(const struct odbfs *fs, const unsigned char *raw);

/* Ids of the first byte b came or went: drop the kernel's entry of xx. */
void layout_drop_prefix(const struct odbfs *fs, unsigned b);

/*
 * Whether the rows agree with themselves: each directory kind at its
 * node kind's row, each fixed directory child made of the kind it says.
 * For assertions and tests.
 */
bool layout_check(void);

#endif
