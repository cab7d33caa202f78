/*
 * view_tree: trees/, where any tree is a directory by its id; a tree as a
 * directory, its entries as files, symlinks, directories and gitlinks,
 * each numbered by its place in the tree (tree_entry_ino()) and typed by
 * its mode (tree_entry_type()), both for the listing and the lookup; and
 * a gitlink, an empty directory.
 */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "odbstore/log.h"
#include "view_int.h"

/*
 * The longest name a FUSE listing carries (the kernel's FUSE_NAME_MAX):
 * a longer one makes the kernel fail the read it comes in.
 */
#define TREE_LIST_NAME_MAX 1024

static int
cmp_by_name(const void *a, const void *b, void *arg)
{
	const struct tree *t = arg;
	const struct tree_entry *x = &t->entries[*(const size_t *)a];
	const struct tree_entry *y = &t->entries[*(const size_t *)b];
	size_t n = x->namelen < y->namelen ? x->namelen : y->namelen;
	int c = memcmp(x->name, y->name, n);

	if (!c)
		c = (x->namelen > y->namelen) - (x->namelen < y->namelen);
	/* The same name twice: the first in the tree first. */
	return c ? c : (x > y) - (x < y);
}

static bool
same_name(const struct tree_entry *x, const struct tree_entry *y)
{
	return x->namelen == y->namelen && !memcmp(x->name, y->name,
	    x->namelen);
}

/*
 * Sort t's entries by name into by_name; of a name given twice (git fsck's
 * duplicateEntries) keep the first, and drop the others from t. Returns
 * how many were dropped, the first at *off in buf.
 */
static size_t
sort_by_name(struct tree *t, size_t *by_name, const unsigned char *buf,
    size_t *off)
{
	size_t dups = 0, kept = 0;
	bool *drop = NULL;

	for (size_t i = 0; i < t->n; i++)
		by_name[i] = i;
	qsort_r(by_name, t->n, sizeof(size_t), cmp_by_name, t);
	for (size_t k = 1; k < t->n; k++) {
		const struct tree_entry *e = &t->entries[by_name[k]];

		if (!same_name(e, &t->entries[by_name[k - 1]]))
			continue;
		if (!drop && !(drop = calloc(t->n, sizeof(*drop))))
			return 0;	/* shown twice, as before */
		drop[by_name[k]] = true;
		dups++;
	}
	if (!dups)
		return 0;
	*off = SIZE_MAX;
	for (size_t i = 0; i < t->n; i++) {
		if (drop[i]) {
			size_t at = (size_t)((const unsigned char *)
			    t->entries[i].name - buf);

			*off = at < *off ? at : *off;
			continue;
		}
		t->entries[kept++] = t->entries[i];
	}
	t->n = kept;
	free(drop);
	for (size_t i = 0; i < t->n; i++)
		by_name[i] = i;
	qsort_r(by_name, t->n, sizeof(size_t), cmp_by_name, t);
	return dups;
}

/*
 * A tree as a directory at path; time is its commit's, or NODE_TIME_REPO;
 * ino its st_ino, or 0 for its path's.
 */
int
tree_dir(struct odbfs *fs, const unsigned char *id, const char *path,
    int64_t time, uint64_t ino, struct node **out)
{
	char hex[OID_HEXSZ_MAX + 1];
	size_t dups, dup_off = 0, longs = 0, long_off = 0;
	struct objinfo info;
	struct node_ext *x;
	struct node *n;
	int ret;

	if (!(n = new_dir(NODE_TREE, path, time)))
		return -ENOMEM;
	if (ino)
		n->ino = ino;
	if ((ret = node_ext_new(n)) < 0) {
		node_free(n);
		return ret;
	}
	x = n->ext;
	memcpy(x->id, id, fs->rawsz);
	n->type = OBJ_TREE;
	n->git_mode = TREE_MODE_DIR;
	oid_to_hex(hex, id, fs->rawsz);
	ret = odb_read(fs->odb, id, &info, &x->buf);
	if (ret == 0 && info.type != OBJ_TREE)
		ret = log_corrupt("%s: %s is a %s, not a tree", path, hex,
		    object_type_name(info.type));
	if (ret == 0)
		ret = tree_parse(&x->tree, x->buf, (size_t)info.size,
		    fs->rawsz);
	if (ret == 0 && !(x->by_name = malloc((x->tree.n + 1) *
	    sizeof(size_t))))
		ret = -ENOMEM;
	if (ret < 0) {
		node_free(n);
		return ret;
	}
	n->size = info.size;
	if ((dups = sort_by_name(&x->tree, x->by_name, x->buf, &dup_off)))
		log_msg(LOGL_WARN, "tree %s: %zu %s with a name used before "
		    "%s not shown (the first at offset %zu)", hex, dups,
		    dups > 1 ? "entries" : "entry", dups > 1 ? "are" : "is",
		    dup_off);
	if (x->tree.dropped)
		log_msg(LOGL_WARN, "tree %s: %zu %s with names no directory "
		    "can hold %s not shown (the first at offset %zu)", hex,
		    x->tree.dropped, x->tree.dropped > 1 ? "entries" : "entry",
		    x->tree.dropped > 1 ? "are" : "is", x->tree.drop_off);
	if (x->tree.truncated)
		log_corrupt("tree %s: entry at offset %zu is cut short", hex,
		    x->tree.bad_off);
	for (size_t i = 0; i < x->tree.n; i++) {
		const struct tree_entry *e = &x->tree.entries[i];

		x->subdirs += e->mode == TREE_MODE_DIR ||
		    e->mode == TREE_MODE_GITLINK;
		if (e->namelen > TREE_NAME_MAX &&
		    e->namelen <= TREE_LIST_NAME_MAX && !longs++)
			long_off = (size_t)((const unsigned char *)e->name -
			    x->buf);
	}
	if (longs)
		log_msg(LOGL_WARN, "tree %s: %zu %s over %d bytes listed, "
		    "too long to open (the first at offset %zu)", hex, longs,
		    longs > 1 ? "names" : "name", TREE_NAME_MAX, long_off);
	return intern(n, out);
}

static const struct tree_entry *
tree_find(const struct node *dir, const char *name)
{
	const struct node_ext *x = dir->ext;
	size_t lo = 0, hi = x->tree.n, len = strlen(name);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct tree_entry *e = &x->tree.entries[x->by_name[mid]];
		size_t n = e->namelen < len ? e->namelen : len;
		int c = memcmp(e->name, name, n);

		if (!c)
			c = (e->namelen > len) - (e->namelen < len);
		if (!c)
			return e;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * st_ino of entry i (in the tree's order) of tree directory dir: one per
 * path, as tools that key files by (st_dev, st_ino) need, and ascending in
 * the tree's order, in which tar and rsync read a directory, for borg,
 * which reads one in inode order. The directory's number, mixed, keeps
 * all but its low TREE_INO_BITS bits; those number the entry. Entries past
 * what they can number get a hash of directory and name.
 */
#define TREE_INO_BITS 20

static uint64_t
tree_entry_ino(const struct node *dir, size_t i, const char *name)
{
	const uint64_t low = ((uint64_t)1 << TREE_INO_BITS) - 1;
	unsigned char key[1 + sizeof(uint64_t) + 256];
	size_t len = strlen(name);
	uint64_t ino;

	key[0] = 'E';
	memcpy(key + 1, &dir->ino, sizeof(dir->ino));
	if (i + 1 < low && (ino = (node_ino(key, 1 + sizeof(dir->ino)) &
	    ~low) | (i + 1)) > FUSE_ROOT_ID)
		return ino;
	if (len > sizeof(key) - 1 - sizeof(dir->ino))
		len = sizeof(key) - 1 - sizeof(dir->ino);
	memcpy(key + 1 + sizeof(dir->ino), name, len);
	return node_ino(key, 1 + sizeof(dir->ino) + len);
}

/* A file or symlink of a tree: key, then st_ino ino, which makes it one. */
static struct node *
entry_node(enum node_kind kind, unsigned char *key, size_t klen, uint64_t ino)
{
	struct node *n;

	memcpy(key + klen, &ino, sizeof(ino));
	if ((n = node_new(kind, key, klen + sizeof(ino))))
		n->ino = ino;
	return n;
}

/* An entry of tree dir whose mode git never writes: the tree, name, where. */
#define BAD_MODE_FMT "tree %s: entry %s at offset %zu has a mode git never " \
	"writes"
#define BAD_MODE_ARGS(hex, dir, e) (hex), (e)->name, \
	(size_t)((const unsigned char *)(e)->name - (dir)->ext->buf)

/* Log entry e of tree dir, whose mode git never writes: -EFSCORRUPTED. */
static int
bad_mode(const struct odbfs *fs, const struct node *dir,
    const struct tree_entry *e)
{
	char hex[OID_HEXSZ_MAX + 1];

	oid_to_hex(hex, node_id(dir), fs->rawsz);
	return log_corrupt(BAD_MODE_FMT, BAD_MODE_ARGS(hex, dir, e));
}

/*
 * The type a tree entry's mode gives it, as listed and as looked up; 0
 * for a mode git never writes (parsed as 0).
 */
static mode_t
tree_entry_type(unsigned mode)
{
	switch (mode) {
	case TREE_MODE_DIR:
	case TREE_MODE_GITLINK:
		return S_IFDIR;
	case TREE_MODE_LINK:
		return S_IFLNK;
	case TREE_MODE_FILE:
	case TREE_MODE_EXEC:
		return S_IFREG;
	default:
		return 0;
	}
}

static int
tree_entry_node(struct odbfs *fs, struct node *dir,
    const struct tree_entry *e, struct node **out)
{
	uint64_t ino = tree_entry_ino(dir, (size_t)(e - dir->ext->tree.entries),
	    e->name);
	unsigned char key[KEY_MAX];
	char hex[OID_HEXSZ_MAX + 1], path[KEY_MAX];
	struct objinfo info;
	unsigned char *buf;
	struct node *n;
	size_t klen;
	int ret;

	oid_to_hex(hex, e->id, fs->rawsz);
	switch (e->mode) {
	case TREE_MODE_DIR:
		child_path(dir, e->name, path, sizeof(path));
		return tree_dir(fs, e->id, path, dir->time, ino, out);
	case TREE_MODE_GITLINK:
		child_path(dir, e->name, path, sizeof(path));
		n = new_dir(NODE_GITLINK, path, dir->time);
		if (!n || node_ext_new(n) < 0) {
			node_free(n);
			return -ENOMEM;
		}
		n->ino = ino;
		memcpy(n->ext->id, e->id, fs->rawsz);
		n->type = OBJ_COMMIT;
		n->git_mode = (uint16_t)e->mode;
		return intern(n, out);
	case TREE_MODE_FILE:
	case TREE_MODE_EXEC:
		if ((ret = odb_info(fs->odb, e->id, &info)) < 0)
			return ret;
		if (info.type != OBJ_BLOB)
			return log_corrupt("%s/%s: %s is a %s, not a blob",
			    dir->path, e->name, hex,
			    object_type_name(info.type));
		klen = id_key(key, 'B', e->id, fs->rawsz);
		memcpy(key + klen, &e->mode, sizeof(e->mode));
		klen += sizeof(e->mode);
		if (!(n = entry_node(NODE_BLOB, key, klen, ino)))
			return -ENOMEM;
		n->type = OBJ_BLOB;
		n->git_mode = (uint16_t)e->mode;
		n->mode = e->mode == TREE_MODE_EXEC ? NODE_MODE_EXEC :
		    NODE_MODE_FILE;
		n->size = info.size;
		n->time = dir->time;
		return intern(n, out);
	case TREE_MODE_LINK:
		if ((ret = odb_info(fs->odb, e->id, &info)) < 0)
			return ret;
		if (info.type != OBJ_BLOB || info.size > LINK_MAX_LEN ||
		    info.size == 0)
			return log_corrupt("%s/%s: %s cannot be a symlink's "
			    "target", dir->path, e->name, hex);
		if ((ret = odb_read(fs->odb, e->id, &info, &buf)) < 0)
			return ret;
		if (memchr(buf, '\0', (size_t)info.size)) {
			free(buf);
			return log_corrupt("%s/%s: symlink target %s holds a "
			    "NUL byte", dir->path, e->name, hex);
		}
		n = entry_node(NODE_SYMLINK, key, id_key(key, 'S', e->id,
		    fs->rawsz), ino);
		if (n && (n->data = malloc((size_t)info.size + 1))) {
			memcpy(n->data, buf, (size_t)info.size);
			n->data[info.size] = '\0';
		}
		free(buf);
		if (!n || !n->data) {
			node_free(n);
			return -ENOMEM;
		}
		n->type = OBJ_BLOB;
		n->git_mode = (uint16_t)e->mode;
		n->mode = S_IFLNK | 0777;
		n->size = info.size;
		n->time = dir->time;
		return intern(n, out);
	default:
		return bad_mode(fs, dir, e);
	}
}

/* trees/<id>: a tree by its full id, or a link from a prefix of it. */
static int
trees_find(struct odbfs *fs, struct node *dir, const char *name,
    struct node **out)
{
	unsigned char id[OID_RAWSZ_MAX];
	char path[KEY_MAX];
	struct objinfo info;
	int ret;

	if (is_abbrev(fs, name))
		return abbrev_link(fs, dir, name, OBJ_TREE, out);
	if (!oid_parse_hex(id, name, fs->rawsz))
		return -ENOENT;
	if ((ret = lookup_id(fs, id, &info)) < 0)
		return ret;
	if (info.type != OBJ_TREE)
		return -ENOENT;
	child_path(dir, name, path, sizeof(path));
	return tree_dir(fs, id, path, NODE_TIME_REPO, 0, out);
}

/*
 * The tree of every commit commits/ lists (odb_list_trees()); a subtree
 * is found by its id but not listed: there is no cheap list of them.
 */
static int
trees_list(struct odbfs *fs, struct node *dir, struct dirlist *l)
{
	return list_ids(fs, dir, l, odb_list_trees, OBJ_TREE);
}

const struct view_kind view_trees_kind = {
	.mode = NODE_MODE_DIR,
	.negative = VIEW_NEGATIVE_MOUNT,
	.find = trees_find,
	.list = trees_list,
};

static int
tree_child(struct odbfs *fs, struct node *dir, const char *name,
    struct node **out)
{
	const struct tree_entry *e;
	int ret;

	/* Listed, and too long to look up: see tree_list(). */
	if (strlen(name) > TREE_NAME_MAX)
		return -ENAMETOOLONG;
	if (!(e = tree_find(dir, name)))
		return -ENOENT;
	ret = tree_entry_node(fs, dir, e, out);
	/*
	 * The tree names an object the repository does not have: one a
	 * partial clone's promisor remote holds, or one lost. Listed, as git
	 * ls-tree shows it, but EIO, so that a copy or a backup reports it
	 * rather than take it for a file removed under it; said once.
	 */
	if (ret == -ENOENT) {
		char hex[OID_HEXSZ_MAX + 1];

		oid_to_hex(hex, e->id, fs->rawsz);
		log_once(LOGL_WARN, "%.200s/%.200s: %s is not in the "
		    "repository (held by a partial clone's promisor remote, "
		    "or lost)", dir->path, e->name, hex);
		ret = -EIO;
	}
	assert(ret < 0 || ((*out)->mode & S_IFMT) == tree_entry_type(e->mode));
	return ret;
}

/* Leave an entry out of l, which then ends in EIO; why is the first's. */
static void
unlisted(struct dirlist *l, const char *fmt, ...)
{
	va_list ap;

	if (l->corrupt) {
		l->more++;
		return;
	}
	l->corrupt = true;
	va_start(ap, fmt);
	if (vasprintf(&l->why, fmt, ap) < 0)
		l->why = NULL;
	va_end(ap);
}

/*
 * A tree's entries in the tree's order. A name over TREE_NAME_MAX is
 * listed, and its lookup fails with ENAMETOOLONG: tar, rsync, restic and
 * borg then report that one file and copy the rest. An entry that cannot
 * be listed (a mode git never writes, a name longer than FUSE carries) is
 * left out, and the listing ends in EIO, so that a walk cannot miss it
 * silently either. (Names no path can hold, "", ".", ".." or one with a
 * '/', tree_parse() dropped, as git checkout refuses them.)
 */
static int
tree_list(struct odbfs *fs, struct node *dir, struct dirlist *l)
{
	const struct tree *t = &dir->ext->tree;
	char hex[OID_HEXSZ_MAX + 1];
	int ret = 0;

	oid_to_hex(hex, node_id(dir), fs->rawsz);
	for (size_t i = 0; i < t->n && ret == 0; i++) {
		const struct tree_entry *e = &t->entries[i];
		mode_t type = tree_entry_type(e->mode);

		if (!type) {
			unlisted(l, BAD_MODE_FMT, BAD_MODE_ARGS(hex, dir, e));
			continue;
		}
		if (e->namelen > TREE_LIST_NAME_MAX) {
			unlisted(l, "tree %s: entry at offset %zu has a name of "
			    "%zu bytes, more than a listing carries", hex,
			    (size_t)((const unsigned char *)e->name -
			    dir->ext->buf), e->namelen);
			continue;
		}
		ret = add_rec(l, e->name, false, type, tree_entry_ino(dir, i,
		    e->name));
	}
	l->corrupt |= t->truncated;
	return ret;
}

/* A tree never changes: neither does what it lacks. */
const struct view_kind view_tree_kind = {
	.mode = NODE_MODE_DIR,
	.negative = NODE_TIMEOUT_IMMUTABLE,
	.find = tree_child,
	.list = tree_list,
};

/* A submodule's commit is not in this repository: an empty directory. */
const struct view_kind view_gitlink_kind = {
	.mode = NODE_MODE_DIR,
	.negative = NODE_TIMEOUT_IMMUTABLE,
};
