/*
 * view_int: what the files of the view share, private to them: the
 * description of a directory kind, node keys, the makers of directory and
 * symlink nodes, and the listing being built.
 *
 * Each kind of directory is described once, by a struct view_kind: the
 * attributes of a directory of that kind, its fixed children as a table
 * of struct view_fixed, and its variable children as a find/list pair.
 * view.c derives lookup, listing, inode numbers and types from it alone:
 *
 *   view_lookup(dir, name)          view_list(dir)
 *     fixed[i].name == name ?         for each fixed[i]:
 *       key(dir, name) -> key           key(dir, name) -> key
 *       make(key) -> node               (name, type, node_ino(key))
 *     else find(dir, name) -> node    list(dir): (name, type, ino)...
 *
 * A fixed child's key says what its node is (see view.c for the tags);
 * the lookup makes the node with that very key, the listing numbers the
 * entry node_ino() of it, so the two cannot disagree. key() returning 0
 * says the child is absent (a root commit's parent, .odbfs with -o
 * nometa). A find/list pair shares its key and type functions in its
 * file (tree_entry_ino() and tree_entry_type(), view_ref_key(), ...).
 */
#ifndef ODBFS_VIEW_INT_H
#define ODBFS_VIEW_INT_H

#include <errno.h>

#include "view.h"

#define KEY_MAX (4096 + 64)
/* Longest symlink target a tree may give; the kernel's PATH_MAX. */
#define LINK_MAX_LEN 4095

struct dirent_rec {
	const char *name;	/* into the tree, or owned when names is set */
	mode_t type;
	uint64_t ino;
};

/*
 * A listing: its entries are v[], or the ids of objects/xx/, commits/ and
 * trees/ (ids), or those of a tree's parse, which entry() spells.
 */
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

/*
 * A fixed child of a directory kind: name, the type a listing gives it
 * (the lookup's node has it too, asserted), the kind of its node, and how
 * its key is made (key, which writes at most KEY_MAX bytes and returns
 * their count, 0 if dir has no such child) and its node from that key.
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
};

/* What view_kind.negative says for -o negative_timeout=. */
#define VIEW_NEGATIVE_MOUNT (-1.0)

/*
 * A kind of directory: the attributes of a directory node of that kind
 * (view_new_dir() gives them), how long the kernel may cache a miss in it, its
 * fixed children, and its variable ones: find makes the node of name
 * (-ENOENT if there is none), list adds every one to l with the type and
 * inode number find's node has. Either may be NULL.
 */
struct view_kind {
	mode_t mode;			/* NODE_MODE_DIR, ... */
	bool moving;			/* NODE_TIMEOUT_MOVING */
	double negative;		/* seconds, or VIEW_NEGATIVE_MOUNT */
	const struct view_fixed *fixed;
	size_t nfixed;
	/*
	 * Its entries carry no attributes in a readdirplus, so that listing
	 * it makes no node: the kernel looks up only what is asked for.
	 */
	bool plain;
	int (*find)(struct odbfs *fs, struct node *dir, const char *name,
	    struct node **out);
	int (*list)(struct odbfs *fs, struct node *dir, struct dirlist *l);
};

/* The .fixed and .nfixed of a struct view_kind, from a table. */
#define VIEW_FIXED_INIT(table) .fixed = (table), \
	.nfixed = sizeof(table) / sizeof((table)[0])

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
extern const struct view_kind view_group_kind;		/* forge.c */

/* The description of directories of kind, NULL if kind is no directory. */
const struct view_kind *view_kind_of(enum node_kind kind);

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

/* A fixed child that is a directory of f->kind, at the key's path. */
int view_make_dir(struct odbfs *fs, struct node *dir, const struct view_fixed *f,
    const unsigned char *key, size_t klen, struct node **out);

/* Node makers (view.c). A directory has its kind's mode and moving. */
struct node *view_new_dir(enum node_kind kind, const char *path, int64_t time);
struct node *view_new_link(const unsigned char *key, size_t keylen,
    const char *target, int64_t time);
int view_intern(struct node *n, struct node **out);

/* Add an entry to a listing; name is copied when owned. */
int dirlist_add(struct dirlist *l, const char *name, bool owned, mode_t type,
    uint64_t ino);

/*
 * The objects list gives (odb_list_commits(), ...) that are of type
 * (all of them for OBJ_NONE: the list holds no other), as the
 * directories a lookup finds under dir (tags/), or, with links set,
 * as the links to by-id/ that view_byid_link() makes (commits/, trees/): a
 * walk of those meets each commit's tree only where it asks (view.c).
 */
int dirlist_ids(struct odbfs *fs, struct node *dir, struct dirlist *l,
    int (*list)(struct odb *odb, unsigned char **ids, size_t *n),
    enum obj_type type, bool links);

/*
 * view_byid.c: the link <dir>/<hex> -> ../by-id/<hex> of commits/ and
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

#endif
