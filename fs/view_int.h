/*
 * view_int: what the files of the view share, private to them: node keys,
 * the makers of directory and symlink nodes, the listing being built, and
 * each kind's lookup and listing of its children.
 */
#ifndef ODBFS_VIEW_INT_H
#define ODBFS_VIEW_INT_H

#include "view.h"

#define KEY_MAX (4096 + 64)
/* Longest symlink target a tree may give; the kernel's PATH_MAX. */
#define LINK_MAX_LEN 4095

struct dirent_rec {
	const char *name;	/* into the tree, or owned when names is set */
	mode_t type;
	uint64_t ino;
};

struct dirlist {
	struct node *dir;
	size_t n;
	struct dirent_rec *v;		/* or, for NODE_FANOUT: */
	unsigned char *ids;		/* sorted ids */
	size_t rawsz;
	char **names;			/* strings v[].name owns */
	bool corrupt;
	char *why;			/* what to log when it says so */
	size_t more;			/* bad entries after why's */
};

/* An entry of tree dir whose mode git never writes: the tree, name, where. */
#define BAD_MODE_FMT "tree %s: entry %s at offset %zu has a mode git never " \
	"writes"
#define BAD_MODE_ARGS(hex, dir, e) (hex), (e)->name, \
	(size_t)((const unsigned char *)(e)->name - (dir)->ext->buf)

/* Keys (see view.c). */
uint64_t child_dir_ino(const char *parent, const char *name);
size_t id_key(unsigned char *key, char tag, const unsigned char *id,
    size_t rawsz);
size_t path_key(unsigned char *key, char tag, const char *path);
size_t ref_key(unsigned char *key, const char *path, const char *target);

/* Node makers (view.c). */
struct node *new_dir(enum node_kind kind, const char *path, int64_t time);
struct node *new_link(const unsigned char *key, size_t keylen,
    const char *target, int64_t time);
int intern(struct node *n, struct node **out);
int add_rec(struct dirlist *l, size_t *alloc, const char *name, bool owned,
    mode_t type, uint64_t ino);

/* view_objects.c */
int lookup_id(struct odbfs *fs, const unsigned char *id,
    struct objinfo *info);
int object_file(struct odbfs *fs, const unsigned char *id,
    struct node **out);
bool is_abbrev(const struct odbfs *fs, const char *name);
int abbrev_link(struct odbfs *fs, struct node *dir, const char *name,
    enum obj_type want, struct node **out);

/* view_tree.c */
int tree_dir(struct odbfs *fs, const unsigned char *id, const char *path,
    int64_t time, uint64_t ino, struct node **out);
const struct tree_entry *tree_find(const struct node *dir, const char *name);
uint64_t tree_entry_ino(const struct node *dir, size_t i, const char *name);
int tree_entry_node(struct odbfs *fs, struct node *dir,
    const struct tree_entry *e, struct node **out);

/* view_commit.c */
int commit_dir(struct odbfs *fs, const unsigned char *id, struct node **out);
int commit_member(struct odbfs *fs, struct node *dir, const char *name,
    struct node **out);

/* view_refs.c */
int head_target(struct odbfs *fs, char *target, size_t size);
int head_link(struct odbfs *fs, struct node **out);
int refs_child(struct odbfs *fs, struct node *dir, const char *name,
    struct node **out);
int list_refs(struct odbfs *fs, struct dirlist *l, size_t *alloc);

/* view_meta.c */
int meta_dir(struct odbfs *fs, struct node **out);
int meta_child(struct odbfs *fs, const char *name, struct node **out);

#endif
