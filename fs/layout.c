/*
 * layout: the mount's layout (see layout.h): the rows of the kinds of
 * node, and lookup, listing and the rest of what the kernel is told,
 * derived from each directory kind's description:
 *
 *   layout_lookup(dir, name)        layout_list(dir)
 *     fixed[i].name == name ?         for each fixed[i] not hidden:
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
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "layout.h"
#include "odbstore/oid.h"
#include "view.h"

/* The directory kinds, by node kind; the files' are below. */
static const struct view_kind *const kinds[] = {
	[NODE_ROOT] = &view_root_kind,
	[NODE_OBJECTS] = &view_objects_kind,
	[NODE_FANOUT] = &view_fanout_kind,
	[NODE_COMMITS] = &view_commits_kind,
	[NODE_TREES] = &view_trees_kind,
	[NODE_TAGS] = &view_tags_kind,
	[NODE_TAG] = &view_tag_kind,
	[NODE_REFDIR] = &view_refs_kind,
	[NODE_COMMIT] = &view_commit_kind,
	[NODE_TREE] = &view_tree_kind,
	[NODE_GITLINK] = &view_gitlink_kind,
	[NODE_META] = &view_meta_kind,
	[NODE_GROUP] = &view_group_kind,
	[NODE_BYID] = &view_byid_kind,
};

const struct view_kind *
layout_kind(enum node_kind kind)
{
	return (size_t)kind < sizeof(kinds) / sizeof(kinds[0]) ? kinds[kind] :
	    NULL;
}

int
layout_lookup(struct odbfs *fs, struct node *dir, const char *name,
    struct node **out)
{
	const struct view_kind *k = layout_kind(dir->kind);
	unsigned char key[KEY_MAX];

	*out = NULL;
	if (!k)
		return -ENOTDIR;
	for (size_t i = 0; i < k->nfixed; i++) {
		const struct view_fixed *f = &k->fixed[i];
		size_t klen;
		int ret;

		if (strcmp(name, f->name))
			continue;
		if (!(klen = f->key(fs, dir, name, key)))
			return -ENOENT;
		ret = f->make(fs, dir, f, key, klen, out);
		/* The listing says what the table says: so must the node. */
		assert(ret < 0 || (((*out)->mode & S_IFMT) == f->type &&
		    (*out)->kind == f->kind));
		return ret;
	}
	return k->find ? k->find(fs, dir, name, out) : -ENOENT;
}

double
layout_negative_timeout(const struct odbfs *fs, const struct node *dir)
{
	const struct view_kind *k = layout_kind(dir->kind);

	if (!k || k->negative == VIEW_NEGATIVE_MOUNT)
		return fs->negative_timeout;
	return k->negative;
}

int
layout_list(struct odbfs *fs, struct node *dir, struct dirlist **out)
{
	const struct view_kind *k = layout_kind(dir->kind);
	unsigned char key[KEY_MAX];
	struct dirlist *l;
	int ret = 0;

	*out = NULL;
	if (!S_ISDIR(dir->mode) || !k)
		return -ENOTDIR;
	if (!(l = dirlist_new(fs, dir, k->plain)))
		return -ENOMEM;
	for (size_t i = 0; i < k->nfixed && ret == 0; i++) {
		const struct view_fixed *f = &k->fixed[i];
		size_t klen = f->dir && f->dir->hidden ? 0 :
		    f->key(fs, dir, f->name, key);

		if (klen)
			ret = dirlist_add(l, f->name, false, f->type,
			    node_ino(key, klen));
	}
	if (ret == 0 && k->list)
		ret = k->list(fs, dir, l);
	if (ret < 0) {
		dirlist_free(l);
		return ret;
	}
	*out = l;
	return 0;
}

nlink_t
layout_nlink(const struct odbfs *fs, const struct node *n)
{
	const struct view_kind *k = layout_kind(n->kind);
	unsigned char key[KEY_MAX];
	nlink_t links = 2;

	if (!k || k->nlink == VIEW_NLINK_UNKNOWN)
		return 1;
	/* A key function reads fs, never writes it. */
	for (size_t i = 0; i < k->nfixed; i++) {
		const struct view_fixed *f = &k->fixed[i];

		if (f->dir && !f->dir->hidden &&
		    f->key((struct odbfs *)fs, n, f->name, key))
			links++;
	}
	if (k->nlink == VIEW_NLINK_SUBDIRS)
		links += (nlink_t)n->ext->subdirs;
	return links;
}

bool
layout_cache_listing(const struct node *n)
{
	const struct view_kind *k = layout_kind(n->kind);

	return k && k->cache_listing && node_timeout(n) > 0;
}

bool
layout_shows_refs(const struct node *dir)
{
	const struct view_kind *k = layout_kind(dir->kind);

	return k && k->shows_refs;
}

bool
layout_object_bytes(const struct node *n)
{
	return n->kind == NODE_OBJECT || n->kind == NODE_BLOB;
}

void
layout_drop_id(const struct odbfs *fs, const unsigned char *raw)
{
	const struct view_kind *root = &view_root_kind;
	char hex[OID_HEXSZ_MAX + 1], fanout[KEY_MAX];

	oid_to_hex(hex, raw, fs->rawsz);
	for (size_t i = 0; i < root->nfixed; i++) {
		const struct view_fixed *f = &root->fixed[i];

		if (!f->dir || !f->dir->by_id)
			continue;
		view_drop_entry(fs, f->name, hex);
		if (f->dir->fanout) {
			snprintf(fanout, sizeof(fanout), "%s/%.2s", f->name,
			    hex);
			view_drop_entry(fs, fanout, hex);
		}
	}
}

void
layout_drop_prefix(const struct odbfs *fs, unsigned b)
{
	const struct view_kind *root = &view_root_kind;
	char name[3];

	snprintf(name, sizeof(name), "%02x", b & 0xff);
	for (size_t i = 0; i < root->nfixed; i++)
		if (root->fixed[i].dir && root->fixed[i].dir->fanout)
			view_drop_entry(fs, root->fixed[i].name, name);
}

bool
layout_check(void)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		const struct view_kind *k = kinds[i];

		if (!k)
			continue;
		if (k->node != (enum node_kind)i || !k->name ||
		    (k->mode & S_IFMT) != S_IFDIR)
			return false;
		for (size_t j = 0; j < k->nfixed; j++) {
			const struct view_fixed *f = &k->fixed[j];

			if ((f->type == S_IFDIR) != (f->dir != NULL) ||
			    (f->dir && (f->dir->node != f->kind ||
			    kinds[f->kind] != f->dir)) ||
			    (!f->dir && layout_kind(f->kind)) || !f->key ||
			    !f->make)
				return false;
		}
		/* A fan-out is found by the ids of its parent. */
		if (k->fanout && !k->by_id)
			return false;
	}
	return true;
}
