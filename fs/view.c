/*
 * view: what each name of the mount is, for ops.c's lookups, listings and
 * readdirplus. The dispatcher: each kind of directory is described once
 * (view_int.h), in the file of its kind, and lookup, listing, inode
 * numbers and types come from that description here:
 *
 *   view.c          the root, the kinds by node kind, keys, node makers
 *   view_objects.c  objects/, objects/xx/, abbreviated ids
 *   view_commit.c   commits/, commits/<id>/
 *   view_tree.c     trees/, a tree, a gitlink
 *   view_tag.c      tags/, tags/<id>/
 *   view_byid.c     by-id/, where commits/ and trees/ link
 *   view_refs.c     HEAD, refs/...
 *   view_meta.c     .odbfs/
 *
 * Node keys say what a node is, so the same thing looked up twice is one
 * node with one inode number:
 *   'D' path            a directory, by its path from the root
 *   'O' id              objects/<id>
 *   'B' id ino          a file of a tree (its blob), then its st_ino
 *   'S' id ino          a symlink of a tree (its blob), then its st_ino
 *   'R' path NUL target HEAD or a ref, by path and where it points (a
 *                       ref that moves is a new symlink)
 *   'A' path NUL id     an abbreviated id, by path and the id it names
 *   'L' path NUL target a link of commits/ or trees/ to by-id/
 *   'M' id name         a file or link inside commits/<id>/
 *   'M' path            a file of .odbfs/ (stats: then a stamp)
 * The files of a tree are numbered by their place in it (tree_entry_ino(),
 * hashing 'E' and the directory's st_ino), not by their key.
 * node_id() takes the id of 'O', 'B' and 'S' nodes from right after the
 * tag, so that the most numerous nodes hold it once; the others that stand
 * for an object keep it in their node_ext.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include <sys/stat.h>

#include "odbstore/log.h"
#include "treecache.h"
#include "view_int.h"

size_t
view_dir_key(unsigned char *key, const char *path)
{
	size_t len = strlen(path), room = KEY_MAX - 2 - sizeof(uint64_t);
	uint64_t h;

	key[0] = 'D';
	if (len <= room) {
		memcpy(key + 1, path, len);
		return len + 1;
	}
	/*
	 * Longer than a key holds (a ref may be named so): its start and a
	 * hash of it all, so that a path and its parent never share a key,
	 * which would give the kernel one node for both, a loop.
	 */
	h = XXH3_64bits(path, len);
	memcpy(key + 1, path, room);
	memcpy(key + 1 + room, &h, sizeof(h));
	return 1 + room + sizeof(h);
}

size_t
view_id_key(unsigned char *key, char tag, const unsigned char *id, size_t rawsz)
{
	key[0] = (unsigned char)tag;
	memcpy(key + 1, id, rawsz);
	return rawsz + 1;
}

size_t
view_path_key(unsigned char *key, char tag, const char *path)
{
	size_t len = view_dir_key(key, path);

	key[0] = (unsigned char)tag;
	return len;
}

size_t
view_ref_key(unsigned char *key, const char *path, const char *target)
{
	return view_link_key(key, 'R', path, target);
}

size_t
view_link_key(unsigned char *key, char tag, const char *path, const char *target)
{
	size_t len = view_path_key(key, tag, path), tlen = strlen(target);

	if (len + 1 + tlen > KEY_MAX)
		tlen = KEY_MAX - len - 1;
	key[len] = '\0';
	memcpy(key + len + 1, target, tlen);
	return len + 1 + tlen;
}

void
view_drop_entry(const struct odbfs *fs, const char *path, const char *name)
{
	unsigned char key[KEY_MAX];
	fuse_ino_t dir = *path || fs->repo ? node_find(key, view_dir_key(key,
	    path)) : FUSE_ROOT_ID;

	if (dir)
		fuse_lowlevel_notify_inval_entry(fs->se, dir, name,
		    strlen(name));
}

bool
view_names_under(const void *v, size_t n,
    const char *(*name_at)(const void *v, size_t i), const char *dir)
{
	size_t lo = 0, hi = n, len = strlen(dir);

	/* The first name not below dir + '/', then whether it starts so. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *name = name_at(v, mid);
		int c = strncmp(name, dir, len);

		if (c < 0 || (c == 0 && name[len] < '/'))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && !strncmp(name_at(v, lo), dir, len) &&
	    name_at(v, lo)[len] == '/';
}

bool
view_child_path(const struct node *dir, const char *name, char *buf, size_t size)
{
	int len = dir->path[0] ? snprintf(buf, size, "%s/%s", dir->path, name) :
	    snprintf(buf, size, "%s", name);

	return len >= 0 && (size_t)len < size;
}

size_t
view_key_dir(struct odbfs *fs, const struct node *dir, const char *name,
    unsigned char *key)
{
	char path[KEY_MAX];

	(void)fs;
	view_child_path(dir, name, path, sizeof(path));
	return view_dir_key(key, path);
}

size_t
view_key_path(struct odbfs *fs, const struct node *dir, const char *name,
    unsigned char *key)
{
	char path[KEY_MAX];

	(void)fs;
	view_child_path(dir, name, path, sizeof(path));
	return view_path_key(key, 'M', path);
}

const char *
view_key_to_path(const unsigned char *key, size_t klen, char *buf)
{
	assert(klen >= 1 && klen <= KEY_MAX);
	memcpy(buf, key + 1, klen - 1);
	buf[klen - 1] = '\0';
	return buf;
}

/* A new directory node at path, with its kind's attributes. */
struct node *
view_new_dir(enum node_kind kind, const char *path, int64_t time)
{
	const struct view_kind *k = view_kind_of(kind);
	unsigned char key[KEY_MAX];
	struct node *n = node_new(kind, key, view_dir_key(key, path));

	assert(k);
	if (!n)
		return NULL;
	/* Its key is 'D' and the path, unless the path is too long for it. */
	n->path = (char *)n->key + 1;
	if (strcmp(n->path, path) && !(n->path = strdup(path))) {
		node_free(n);
		return NULL;
	}
	n->mode = (uint16_t)k->mode;
	n->moving = k->moving;
	n->time = time;
	return n;
}

/*
 * A new symlink node with the given key and target: the key's last bytes
 * when it ends with NUL and target, as view_link_key() makes it, else a copy.
 */
struct node *
view_new_link(const unsigned char *key, size_t keylen, const char *target,
    int64_t time)
{
	struct node *n = node_new(NODE_SYMLINK, key, keylen);
	size_t tlen = strlen(target);

	if (!n)
		return NULL;
	if (tlen < keylen && !n->key[keylen - tlen - 1] &&
	    !memcmp(n->key + keylen - tlen, target, tlen))
		n->data = (char *)n->key + keylen - tlen;
	else if (!(n->data = strdup(target))) {
		node_free(n);
		return NULL;
	}
	n->mode = S_IFLNK | 0777;
	n->size = strlen(target);
	n->time = time;
	return n;
}

int
view_intern(struct node *n, struct node **out)
{
	if (!n)
		return -ENOMEM;
	*out = node_intern(n);
	return 0;
}

int
view_make_dir(struct odbfs *fs, struct node *dir, const struct view_fixed *f,
    const unsigned char *key, size_t klen, struct node **out)
{
	char path[KEY_MAX];

	(void)fs;
	(void)dir;
	return view_intern(view_new_dir(f->kind, view_key_to_path(key, klen, path),
	    NODE_TIME_REPO), out);
}

/* The root: .odbfs last, so that -o nometa leaves the others in place. */
static const struct view_fixed root_fixed[] = {
	{ "HEAD", S_IFLNK, NODE_SYMLINK, view_head_key, view_head_make },
	{ "refs", S_IFDIR, NODE_REFDIR, view_key_dir, view_make_dir },
	{ "commits", S_IFDIR, NODE_COMMITS, view_key_dir, view_make_dir },
	{ "trees", S_IFDIR, NODE_TREES, view_key_dir, view_make_dir },
	{ "tags", S_IFDIR, NODE_TAGS, view_key_dir, view_make_dir },
	{ "objects", S_IFDIR, NODE_OBJECTS, view_key_dir, view_make_dir },
	{ ".odbfs", S_IFDIR, NODE_META, view_meta_key, view_make_dir },
};

/*
 * by-id/, looked up and never listed (view_byid.c); and HEAD with git's
 * ancestry steps.
 */
static int
root_find(struct odbfs *fs, struct node *dir, const char *name,
    struct node **out)
{
	if (!strcmp(name, "by-id")) {
		char path[KEY_MAX];

		view_child_path(dir, name, path, sizeof(path));
		return view_intern(view_new_dir(NODE_BYID, path, NODE_TIME_REPO), out);
	}
	return view_head_ancestor(fs, dir, name, out);
}

/* HEAD comes and goes: a miss at the root is never cached. */
static const struct view_kind root_kind = {
	.mode = NODE_MODE_DIR,
	.negative = 0,
	VIEW_FIXED_INIT(root_fixed),
	.find = root_find,
};

static const struct view_kind *const kinds[] = {
	[NODE_ROOT] = &root_kind,
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
view_kind_of(enum node_kind kind)
{
	return (size_t)kind < sizeof(kinds) / sizeof(kinds[0]) ? kinds[kind] :
	    NULL;
}

int
view_lookup(struct odbfs *fs, struct node *dir, const char *name,
    struct node **out)
{
	const struct view_kind *k = view_kind_of(dir->kind);
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
view_negative_timeout(const struct odbfs *fs, const struct node *dir)
{
	const struct view_kind *k = view_kind_of(dir->kind);

	if (!k || k->negative == VIEW_NEGATIVE_MOUNT)
		return fs->negative_timeout;
	return k->negative;
}

int
dirlist_add(struct dirlist *l, const char *name, bool owned, mode_t type,
    uint64_t ino)
{
	if (l->n == l->alloc) {
		size_t na = l->alloc ? 2 * l->alloc : 16;
		struct dirent_rec *grown = realloc(l->v, na * sizeof(*grown));
		char **names = realloc(l->names, na * sizeof(char *));

		if (grown)
			l->v = grown;
		if (names)
			l->names = names;
		if (!grown || !names)
			return -ENOMEM;
		l->alloc = na;
	}
	l->names[l->n] = NULL;
	if (owned && !(name = l->names[l->n] = strdup(name)))
		return -ENOMEM;
	l->v[l->n++] = (struct dirent_rec){ name, type, ino };
	return 0;
}

int
view_list(struct odbfs *fs, struct node *dir, struct dirlist **out)
{
	const struct view_kind *k = view_kind_of(dir->kind);
	unsigned char key[KEY_MAX];
	struct dirlist *l;
	int ret = 0;

	*out = NULL;
	if (!S_ISDIR(dir->mode) || !k)
		return -ENOTDIR;
	if (!(l = calloc(1, sizeof(*l))))
		return -ENOMEM;
	l->dir = dir;
	l->rawsz = fs->rawsz;
	l->plain = k->plain;
	for (size_t i = 0; i < k->nfixed && ret == 0; i++) {
		const struct view_fixed *f = &k->fixed[i];
		size_t klen = f->key(fs, dir, f->name, key);

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

size_t
dirlist_count(const struct dirlist *l)
{
	return l->n;
}

bool
dirlist_plain(const struct dirlist *l)
{
	return l->plain;
}

bool
dirlist_corrupt(const struct dirlist *l)
{
	return l->corrupt;
}

int
dirlist_error(const struct dirlist *l)
{
	if (l->why && l->why_once) {
		if (l->more)
			log_once(LOGL_ERROR, "%s (and %zu more entries after "
			    "it)", l->why, l->more);
		else
			log_once(LOGL_ERROR, "%s", l->why);
		return -EFSCORRUPTED;
	}
	if (l->why && l->more)
		return log_corrupt("%s (and %zu more entries after it)",
		    l->why, l->more);
	return l->why ? log_corrupt("%s", l->why) : -EFSCORRUPTED;
}

const char *
dirlist_entry(const struct dirlist *l, size_t i, char *buf, mode_t *type,
    uint64_t *ino)
{
	unsigned char key[KEY_MAX];

	if (l->ids) {
		const unsigned char *id = l->ids + i * l->rawsz;

		oid_to_hex(buf, id, l->rawsz);
		*type = l->links ? S_IFLNK : S_IFREG;
		*ino = node_ino(key, l->links ? view_byid_key(key, l->dir,
		    buf) : view_object_key(key, id, l->rawsz));
		return buf;
	}
	if (l->entry)
		return l->entry(l, i, type, ino);
	*type = l->v[i].type;
	*ino = l->v[i].ino;
	return l->v[i].name;
}

fuse_ino_t
dirlist_known(const struct dirlist *l, size_t i)
{
	const unsigned char *id = dirlist_id(l, i);
	unsigned char key[KEY_MAX];

	return id ? node_find(key, view_object_key(key, id, l->rawsz)) : 0;
}

const unsigned char *
dirlist_id(const struct dirlist *l, size_t i)
{
	return l->ids && !l->links ? l->ids + i * l->rawsz : NULL;
}

void
dirlist_free(struct dirlist *l)
{
	if (!l)
		return;
	for (size_t i = 0; l->names && i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	free(l->v);
	free(l->ids);
	free(l->why);
	treecache_put(l->tree);
	free(l);
}

int
dirlist_ids(struct odbfs *fs, struct node *dir, struct dirlist *l,
    int (*list)(struct odb *odb, unsigned char **ids, size_t *n),
    enum obj_type type, bool links)
{
	unsigned char key[KEY_MAX], *ids;
	char hex[OID_HEXSZ_MAX + 1], path[KEY_MAX];
	struct objinfo info;
	size_t n, k = 0;
	int ret;

	if ((ret = list(fs->odb, &ids, &n)) < 0)
		return ret;
	/* In place: the i-th id kept goes at k <= i. */
	for (size_t i = 0; i < n; i++) {
		const unsigned char *id = ids + i * fs->rawsz;

		if (type == OBJ_NONE || (odb_info(fs->odb, id, &info) == 0 &&
		    info.type == type))
			memmove(ids + k++ * fs->rawsz, id, fs->rawsz);
	}
	if (links) {
		/* dirlist_entry() spells and numbers each. */
		l->ids = ids;
		l->n = k;
		l->links = true;
		return 0;
	}
	for (size_t i = 0; i < k && ret == 0; i++) {
		oid_to_hex(hex, ids + i * fs->rawsz, fs->rawsz);
		view_child_path(dir, hex, path, sizeof(path));
		ret = dirlist_add(l, hex, true, S_IFDIR, node_ino(key,
		    view_dir_key(key, path)));
	}
	free(ids);
	return ret;
}
