/*
 * view: what each name of the mount is, shared by the files that say it.
 * Each kind of directory is described once, by a struct view_kind, in the
 * file of its kind; layout.c derives lookup, listing, inode numbers,
 * types and the rest from those descriptions alone:
 *
 *   view.c          keys and the makers of directory and link nodes
 *   view_root.c     the root of a repository: HEAD, refs/, commits/, ...
 *   view_objects.c  objects/, objects/xx/, abbreviated ids
 *   view_commit.c   commits/, commits/<id>/, the members of an object
 *   view_tree.c     trees/, a tree, a gitlink
 *   view_tag.c      tags/, tags/<id>/
 *   view_byid.c     by-id/, where commits/ and trees/ link
 *   view_refs.c     HEAD, refs/...
 *   view_meta.c     .odbfs/
 *   view_group.c    a mount of many: the root and its groups
 *
 * The layout, as a user sees it:
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
 * Every name a view file exports begins view_.
 */
#ifndef ODBFS_VIEW_H
#define ODBFS_VIEW_H

#include <errno.h>
#include <stdbool.h>

#include "dirlist.h"
#include "node.h"
#include "odbfs.h"

#define KEY_MAX (4096 + 64)
/* Longest symlink target a tree may give; the kernel's PATH_MAX. */
#define LINK_MAX_LEN 4095

/*
 * A fixed child of a directory kind: name, the type a listing gives it
 * (the lookup's node has it too, asserted), the kind of its node (and if
 * it is a directory, that kind's description), and how its key is made
 * (key, which writes at most KEY_MAX bytes and returns their count, 0 if
 * dir has no such child) and its node from that key.
 */
struct view_fixed {
	const char *name;
	mode_t type;			/* S_IFDIR, S_IFLNK or S_IFREG */
	enum node_kind kind;
	size_t (*key)(struct odbfs *fs, const struct node *dir,
	    const char *name, unsigned char *key);
	int (*make)(struct odbfs *fs, struct node *dir,
	    const struct view_fixed *f, const unsigned char *key,
	    size_t klen, struct node **out);
	const struct view_kind *dir;	/* S_IFDIR: what it is, else NULL */
};

/* What view_kind.negative says for -o negative_timeout=. */
#define VIEW_NEGATIVE_MOUNT (-1.0)

/*
 * A directory's st_nlink (view_kind.nlink): "." and its parent's entry,
 * and each subdirectory's "..", where that count is known without work
 * (the fixed directories it lists, and a tree's subtrees, node_ext's
 * subdirs); 1 elsewhere, which find and fts take as "unknown" (as on
 * btrfs).
 */
enum view_nlink {
	VIEW_NLINK_UNKNOWN,	/* 1 */
	VIEW_NLINK_COUNTED,	/* 2 + the fixed directories listed */
	VIEW_NLINK_SUBDIRS,	/* ... + node_ext's subdirs (a tree's) */
};

/*
 * A kind of directory: everything the mount's layout knows of it. The
 * attributes of a directory node of that kind (view_new_dir() gives
 * them), how long the kernel may cache a miss in it, its fixed children,
 * and its variable ones: find makes the node of name (-ENOENT if there
 * is none), list adds every one to l with the type and inode number
 * find's node has. Either may be NULL. layout.c serves every operation
 * from these alone; tests/unit/test_layout.c checks each against what
 * its directories list.
 */
struct view_kind {
	const char *name;		/* for logs and tests */
	enum node_kind node;		/* the kind of its nodes */
	mode_t mode;			/* NODE_MODE_DIR, ... */
	bool moving;			/* NODE_TIMEOUT_MOVING */
	double negative;		/* seconds, or VIEW_NEGATIVE_MOUNT */
	const struct view_fixed *fixed;
	size_t nfixed;
	enum view_nlink nlink;
	/* Looked up, never listed in its parent (by-id/). */
	bool hidden;
	/*
	 * Its entries carry no attributes in a readdirplus, so that listing
	 * it makes no node: the kernel looks up only what is asked for.
	 */
	bool plain;
	/*
	 * The kernel may keep its listing as long as its node (a directory
	 * whose names never change once it is made: a tree, a commit).
	 */
	bool cache_listing;
	/*
	 * What it shows is read from the refs (HEAD and refs/): a lookup or
	 * listing in it holds reflinks' read lock from reading them to its
	 * reply.
	 */
	bool shows_refs;
	/*
	 * Its names are object ids, answered from the store: a publish
	 * drops the kernel's cached miss of every id that arrives (a child
	 * of the root), and with fanout, of the id in its xx/ subdirectory
	 * and of xx itself when the first id of that prefix arrives or the
	 * last goes.
	 */
	bool by_id;
	bool fanout;
	int (*find)(struct odbfs *fs, struct node *dir, const char *name,
	    struct node **out);
	int (*list)(struct odbfs *fs, struct node *dir, struct dirlist *l);
};

/* The .fixed and .nfixed of a struct view_kind, from a table. */
#define VIEW_FIXED_INIT(table) .fixed = (table), \
	.nfixed = sizeof(table) / sizeof((table)[0])

extern const struct view_kind view_root_kind;		/* view_root.c */
extern const struct view_kind view_objects_kind;	/* view_objects.c */
extern const struct view_kind view_fanout_kind;
extern const struct view_kind view_commits_kind;	/* view_commit.c */
extern const struct view_kind view_commit_kind;
extern const struct view_kind view_trees_kind;		/* view_tree.c */
extern const struct view_kind view_tree_kind;
extern const struct view_kind view_gitlink_kind;
extern const struct view_kind view_tags_kind;		/* view_tag.c */
extern const struct view_kind view_tag_kind;
extern const struct view_kind view_refs_kind;		/* view_refs.c */
extern const struct view_kind view_meta_kind;		/* view_meta.c */
extern const struct view_kind view_byid_kind;		/* view_byid.c */
extern const struct view_kind view_group_kind;		/* view_group.c */

/*
 * Keys (view.c). A child's path: name under the root, else dir's path,
 * '/', name; false if it does not fit in size.
 */
bool view_child_path(const struct node *dir, const char *name, char *buf,
    size_t size);
size_t view_id_key(unsigned char *key, char tag, const unsigned char *id,
    size_t rawsz);
size_t view_path_key(unsigned char *key, char tag, const char *path);
size_t view_ref_key(unsigned char *key, const char *path, const char *target);
/* A link's key: tag, path, NUL, target (view_ref_key() with tag 'R'). */
size_t view_link_key(unsigned char *key, char tag, const char *path,
    const char *target);

/* objects/<id>: the key of its node, and of the listing's entries. */
static inline size_t
view_object_key(unsigned char *key, const unsigned char *id, size_t rawsz)
{
	return view_id_key(key, 'O', id, rawsz);
}

/* Key functions of fixed children: 'D' and 'M' with the child's path. */
size_t view_key_dir(struct odbfs *fs, const struct node *dir, const char *name,
    unsigned char *key);
size_t view_key_path(struct odbfs *fs, const struct node *dir, const char *name,
    unsigned char *key);

/*
 * The path a 'D' or 'M' path key holds (view_key_dir(), view_key_path()), in buf of
 * KEY_MAX bytes.
 */
const char *view_key_to_path(const unsigned char *key, size_t klen, char *buf);

/* A fixed child that is a directory of f->dir, at the key's path. */
int view_make_dir(struct odbfs *fs, struct node *dir, const struct view_fixed *f,
    const unsigned char *key, size_t klen, struct node **out);

/* Node makers (view.c). A directory has its kind's mode and moving. */
struct node *view_new_dir(const struct view_kind *k, const char *path,
    int64_t time);
struct node *view_new_link(const unsigned char *key, size_t keylen,
    const char *target, int64_t time);
int view_intern(struct node *n, struct node **out);

/*
 * The link <dir>/<hex> -> ../by-id/<hex> of commits/ and
 * trees/ (key: 'L', its path, NUL, its target), and its key alone.
 */
int view_byid_link(struct odbfs *fs, struct node *dir, const char *hex,
    struct node **out);
size_t view_byid_key(unsigned char *key, const struct node *dir,
    const char *hex);

/* view_objects.c: ids and abbreviated ids, for commits/ and trees/ too. */
int view_lookup_id(struct odbfs *fs, const unsigned char *id,
    struct objinfo *info);
bool view_is_abbrev(const struct odbfs *fs, const char *name);
int view_abbrev_link(struct odbfs *fs, struct node *dir, const char *name,
    enum obj_type want, struct node **out);

/*
 * view_commit.c: names with git's ancestry steps. view_rev_suffix() is
 * where they start in name ("~2" of "main~2"), NULL if name has none or
 * only them. view_ancestor() makes the link name in dir to the commit
 * suffix names from base: up (what leads from dir to the root, "../...")
 * then commits/<id>, moving if base can move (HEAD, a ref).
 */
const char *view_rev_suffix(const char *name);
int view_ancestor(struct odbfs *fs, struct node *dir, const char *name,
    const unsigned char *base, const char *suffix, const char *up,
    bool moving, struct node **out);

/*
 * view_commit.c: the members of a directory of one object (a commit, a
 * tag), keyed view_member_key(): 'M', the object's id, the member's name.
 * view_member_link() links to prefix then id's hex; view_member_data() is a file
 * holding data (malloc'd, len bytes, taken; -ENOMEM if NULL);
 * view_member_line() one holding a header's value and a newline;
 * view_member_slice() one whose bytes are the object's after its header;
 * view_member_raw() makes the link raw -> ../../objects/<id>.
 */
size_t view_member_key(struct odbfs *fs, const struct node *dir, const char *name,
    unsigned char *key);
int view_member_link(struct odbfs *fs, struct node *dir, const char *prefix,
    const unsigned char *id, const unsigned char *key, size_t klen,
    struct node **out);
int view_member_data(struct node *dir, char *data, size_t len,
    const unsigned char *key, size_t klen, struct node **out);
int view_member_line(struct node *dir, const char *v, size_t vlen,
    const unsigned char *key, size_t klen, struct node **out);
int view_member_raw(struct odbfs *fs, struct node *dir, const struct view_fixed *f,
    const unsigned char *key, size_t klen, struct node **out);
struct node *view_member_slice(struct odbfs *fs, const struct node *dir,
    uint64_t header_len, uint64_t message_len, const unsigned char *key,
    size_t klen);

/*
 * The directory of commit (tag) id at path, its path under commits/
 * (tags/) whichever directory it is found in, so that its inode numbers
 * and those below it are the same through by-id/ (view_commit.c,
 * view_tag.c).
 */
int view_commit_dir(struct odbfs *fs, const char *path, const unsigned char *id,
    struct node **out);
int view_tag_dir(struct odbfs *fs, const char *path, const unsigned char *id,
    struct node **out);

/* view_tree.c: a tree as a directory; ino 0 for its path's. */
int view_tree_dir(struct odbfs *fs, const unsigned char *id, const char *path,
    int64_t time, uint64_t ino, struct node **out);

/* view_refs.c: the root's HEAD. */
size_t view_head_key(struct odbfs *fs, const struct node *dir, const char *name,
    unsigned char *key);
int view_head_make(struct odbfs *fs, struct node *dir, const struct view_fixed *f,
    const unsigned char *key, size_t klen, struct node **out);
int view_head_ancestor(struct odbfs *fs, struct node *dir, const char *name,
    struct node **out);

/* view_meta.c: whether the root has .odbfs/. */
size_t view_meta_key(struct odbfs *fs, const struct node *dir, const char *name,
    unsigned char *key);

/*
 * Where HEAD points (its "ref: " target, or when detached commits/<id>, or
 * tags/<id> etc. as a ref to that id links), or -ENOENT if it is neither
 * (view_refs.c).
 */
int view_head_target(struct odbfs *fs, char *target, size_t size);

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
