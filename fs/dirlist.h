/*
 * dirlist: a directory's listing, made once at opendir (layout_list())
 * and read by readdir and readdirplus. The view files build it; ops.c
 * reads it through the accessors below.
 *
 * Its entries are spelled one of three ways: records (v[]: name, type,
 * inode number), sorted ids (objects/xx/'s files, commits/' and trees/'
 * links to by-id/), or a parsed tree (held, entry() spells its i-th).
 */
#ifndef ODBFS_DIRLIST_H
#define ODBFS_DIRLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "node.h"
#include "odbfs.h"

struct dirent_rec {
	const char *name;	/* into the tree, or owned when names is set */
	mode_t type;
	uint64_t ino;
};

struct dirlist {
	struct node *dir;
	size_t n, alloc;
	struct dirent_rec *v;
	unsigned char *ids;		/* sorted ids */
	size_t rawsz;
	char **names;			/* strings v[].name owns */
	struct ptree *tree;		/* held: names point into it */
	const char *(*entry)(const struct dirlist *l, size_t i, mode_t *type,
	    uint64_t *ino);		/* the i-th of tree */
	bool links;			/* ids as links to by-id/, not files */
	bool plain;			/* entries without attributes */
	bool corrupt;
	char *why;			/* what to log when it says so */
	bool why_once;			/* logged by the first listing only */
	size_t more;			/* bad entries after why's */
};

/* An empty listing of dir; NULL when out of memory. */
struct dirlist *dirlist_new(const struct odbfs *fs, struct node *dir,
    bool plain);

/* Add an entry; name is copied when owned. 0 or -ENOMEM. */
int dirlist_add(struct dirlist *l, const char *name, bool owned, mode_t type,
    uint64_t ino);

/*
 * The objects list gives (odb_list_commits(), ...) that are of type
 * (all of them for OBJ_NONE: the list holds no other), as the
 * directories a lookup finds under dir (tags/), or, with links set,
 * as the links to by-id/ that view_byid_link() makes (commits/, trees/):
 * a walk of those meets each commit's tree only where it asks.
 */
int dirlist_ids(struct odbfs *fs, struct node *dir, struct dirlist *l,
    int (*list)(struct odb *odb, unsigned char **ids, size_t *n),
    enum obj_type type, bool links);

size_t dirlist_count(const struct dirlist *l);

/*
 * Are its entries listed without attributes, even in a readdirplus (the
 * links of commits/ and trees/, so that listing them makes no node)?
 */
bool dirlist_plain(const struct dirlist *l);

/* Is the listing followed by corrupt data (reported after the last)? */
bool dirlist_corrupt(const struct dirlist *l);

/*
 * The error that ends a corrupt listing, -EFSCORRUPTED, logged each time
 * it is reported when nothing logged it already (a tree cut short was
 * logged when its node was made).
 */
int dirlist_error(const struct dirlist *l);

/* Entry i: its name (valid until dirlist_free), type bits and st_ino. */
const char *dirlist_entry(const struct dirlist *l, size_t i, char *buf,
    mode_t *type, uint64_t *ino);

/*
 * If entry i is an object file (of objects/xx/) whose node the kernel
 * holds, that node's id, else 0. Its attributes never change, so a
 * readdirplus need not send them again. The node may be forgotten
 * meanwhile: the id is a hint (see node_hold()).
 */
fuse_ino_t dirlist_known(const struct dirlist *l, size_t i);

/* The object of entry i of objects/xx/, NULL in other listings. */
const unsigned char *dirlist_id(const struct dirlist *l, size_t i);

void dirlist_free(struct dirlist *l);

#endif
