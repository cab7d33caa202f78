/*
 * view: the layout of the mount, independent of the FUSE protocol.
 *
 *   HEAD                 symlink: refs/heads/<branch> or commits/<id>
 *   refs/...             one symlink per ref, to commits/, trees/ or objects/
 *   commits/<id>         symlink: ../by-id/<id>
 *   trees/<id>           symlink: ../by-id/<id>
 *   by-id/<id>/          looked up, never listed: a commit (tree/ parent
 *                        parents message author committer raw), a tree as
 *                        a directory, or an annotated tag
 *   tags/<id>/           an annotated tag
 *   objects/<id>         every object as a file; objects/xx/ lists them
 *   <dir>/<abbrev>       in objects/, commits/, trees/: a unique prefix of
 *                        4 or more hex digits, a symlink to the full id
 *   .odbfs/              stats (counters), repository, format; for the
 *                        mount's owner only, absent with -o nometa
 *
 * view_lookup() makes (or shares) the node for one name; a directory's
 * listing is made once at opendir with view_list().
 */
#ifndef ODBFS_VIEW_H
#define ODBFS_VIEW_H

#include <stdbool.h>

#include "node.h"
#include "odbfs.h"

/*
 * The child name of dir, interned (its lookup count raised by one): 0,
 * -ENOENT, -ENOTDIR, or -EIO for a corrupt entry (logged).
 */
int view_lookup(struct odbfs *fs, struct node *dir, const char *name,
    struct node **out);

/* How long the kernel may cache a miss of a name in dir. */
double view_negative_timeout(const struct odbfs *fs, const struct node *dir);

/*
 * Where HEAD points (its "ref: " target, or when detached commits/<id>, or
 * tags/<id> etc. as a ref to that id links),
 * or -ENOENT if it is neither.
 */
int view_head_target(struct odbfs *fs, char *target, size_t size);

struct dirlist;

/* dir's entries, without "." and "..". */
int view_list(struct odbfs *fs, struct node *dir, struct dirlist **out);

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

/*
 * Whether a name of a sorted list (n of them, the i-th name_at(v, i))
 * lies under dir: begins dir and '/'. The refs a refs directory holds, the
 * repositories a group of a forge does.
 */
bool view_names_under(const void *v, size_t n,
    const char *(*name_at)(const void *v, size_t i), const char *dir);

/*
 * Drop the kernel's entry of name in the directory at path ("" the root)
 * of fs's repository, if the kernel holds that directory: the watcher's
 * and the forge's way to say a name changed. A single mount's root, and
 * a forge's, is no node of the table; a forge's repositories' are.
 */
void view_drop_entry(const struct odbfs *fs, const char *path,
    const char *name);

/* Keys of the directories whose cached entries the watcher drops. */
size_t view_dir_key(unsigned char *key, const char *path);

#endif
