/*
 * view_tree: trees/, where each root tree is a link to its directory in
 * by-id/ (view_byid.c); a tree as a directory, its entries as files, symlinks, directories and gitlinks,
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
#include "treecache.h"
#include "view.h"

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
 * The parse of tree id, held (treecache_put() it): from the table, or
 * read, parsed and added. path names it in log lines.
 */
static int
tree_get(struct odbfs *fs, const unsigned char *id, const char *path,
    struct ptree **out)
{
	char hex[OID_HEXSZ_MAX + 1];
	struct objinfo info;
	struct ptree *t;
	int ret;

	if (treecache_get(fs->odb, id, fs->rawsz, out) == 0)
		return 0;
	if (!(t = calloc(1, sizeof(*t))))
		return -ENOMEM;
	oid_to_hex(hex, id, fs->rawsz);
	ret = odb_read(fs->odb, id, &info, &t->buf);
	if (ret == 0 && info.type != OBJ_TREE)
		ret = log_corrupt("%s: %s is a %s, not a tree", path, hex,
		    object_type_name(info.type));
	if (ret == 0) {
		t->len = (size_t)info.size;
		ret = tree_parse(&t->tree, t->buf, t->len, fs->rawsz);
	}
	if (ret == 0 && !(t->by_name = malloc((t->tree.n + 1) *
	    sizeof(size_t))))
		ret = -ENOMEM;
	if (ret < 0) {
		treecache_free(t);
		return ret;
	}
	t->dups = sort_by_name(&t->tree, t->by_name, t->buf, &t->dup_off);
	for (size_t i = 0; i < t->tree.n; i++) {
		const struct tree_entry *e = &t->tree.entries[i];

		t->subdirs += e->mode == TREE_MODE_DIR ||
		    e->mode == TREE_MODE_GITLINK;
		if (e->namelen > TREE_NAME_MAX &&
		    e->namelen <= TREE_LIST_NAME_MAX && !t->longs++)
			t->long_off = (size_t)((const unsigned char *)e->name -
			    t->buf);
	}
	*out = treecache_add(fs->odb, id, fs->rawsz, t);
	return 0;
}

/*
 * A tree as a directory at path; time is its commit's, or NODE_TIME_REPO;
 * ino its st_ino, or 0 for its path's. The node keeps the tree's id, size
 * and subdirectories, not its parse: what is wrong with the tree is
 * logged here, as the kernel learns of the directory, once however often
 * it forgets and learns it again.
 */
int
view_tree_dir(struct odbfs *fs, const unsigned char *id, const char *path,
    int64_t time, uint64_t ino, struct node **out)
{
	char hex[OID_HEXSZ_MAX + 1];
	const struct tree *tr;
	struct ptree *t;
	struct node *n;
	int ret;

	if ((ret = tree_get(fs, id, path, &t)) < 0)
		return ret;
	if (!(n = view_new_dir(&view_tree_kind, path, time)) || node_ext_new(n) < 0) {
		node_free(n);
		treecache_put(t);
		return -ENOMEM;
	}
	if (ino)
		n->ino = ino;
	memcpy(n->ext->id, id, fs->rawsz);
	n->type = OBJ_TREE;
	n->git_mode = TREE_MODE_DIR;
	n->size = t->len;
	n->ext->subdirs = t->subdirs;
	oid_to_hex(hex, id, fs->rawsz);
	tr = &t->tree;
	if (t->dups)
		log_once(LOGL_WARN, "tree %s: %zu %s with a name used before "
		    "%s not shown (the first at offset %zu)", hex, t->dups,
		    t->dups > 1 ? "entries" : "entry", t->dups > 1 ? "are" :
		    "is", t->dup_off);
	if (tr->dropped)
		log_once(LOGL_WARN, "tree %s: %zu %s with names no directory "
		    "can hold %s not shown (the first at offset %zu)", hex,
		    tr->dropped, tr->dropped > 1 ? "entries" : "entry",
		    tr->dropped > 1 ? "are" : "is", tr->drop_off);
	if (tr->truncated)
		log_corrupt("tree %s: entry at offset %zu is cut short", hex,
		    tr->bad_off);
	if (t->longs)
		log_once(LOGL_WARN, "tree %s: %zu %s over %d bytes listed, "
		    "too long to open (the first at offset %zu)", hex, t->longs,
		    t->longs > 1 ? "names" : "name", TREE_NAME_MAX,
		    t->long_off);
	treecache_put(t);
	return view_intern(n, out);
}

static const struct tree_entry *
tree_find(const struct ptree *t, const char *name)
{
	size_t lo = 0, hi = t->tree.n, len = strlen(name);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct tree_entry *e = &t->tree.entries[t->by_name[mid]];
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
#define BAD_MODE_ARGS(hex, t, e) (hex), (e)->name, \
	(size_t)((const unsigned char *)(e)->name - (t)->buf)

/* Log entry e of tree t, whose mode git never writes: -EFSCORRUPTED. */
static int
bad_mode(const struct odbfs *fs, const struct ptree *t,
    const struct tree_entry *e)
{
	char hex[OID_HEXSZ_MAX + 1];

	oid_to_hex(hex, t->id, fs->rawsz);
	return log_corrupt(BAD_MODE_FMT, BAD_MODE_ARGS(hex, t, e));
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
tree_entry_node(struct odbfs *fs, struct node *dir, const struct ptree *t,
    const struct tree_entry *e, struct node **out)
{
	uint64_t ino = tree_entry_ino(dir, (size_t)(e - t->tree.entries),
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
		view_child_path(dir, e->name, path, sizeof(path));
		return view_tree_dir(fs, e->id, path, dir->time, ino, out);
	case TREE_MODE_GITLINK:
		view_child_path(dir, e->name, path, sizeof(path));
		n = view_new_dir(&view_gitlink_kind, path, dir->time);
		if (!n || node_ext_new(n) < 0) {
			node_free(n);
			return -ENOMEM;
		}
		n->ino = ino;
		memcpy(n->ext->id, e->id, fs->rawsz);
		n->type = OBJ_COMMIT;
		n->git_mode = (uint16_t)e->mode;
		return view_intern(n, out);
	case TREE_MODE_FILE:
	case TREE_MODE_EXEC:
		if ((ret = odb_info(fs->odb, e->id, &info)) < 0)
			return ret;
		if (info.type != OBJ_BLOB)
			return log_corrupt("%s/%s: %s is a %s, not a blob",
			    dir->path, e->name, hex,
			    object_type_name(info.type));
		/* Its st_ino tells it from any other: its mode is its own. */
		klen = view_id_key(key, 'B', e->id, fs->rawsz);
		if (!(n = entry_node(NODE_BLOB, key, klen, ino)))
			return -ENOMEM;
		n->type = OBJ_BLOB;
		n->git_mode = (uint16_t)e->mode;
		n->mode = e->mode == TREE_MODE_EXEC ? NODE_MODE_EXEC :
		    NODE_MODE_FILE;
		n->size = info.size;
		n->time = dir->time;
		return view_intern(n, out);
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
		n = entry_node(NODE_SYMLINK, key, view_id_key(key, 'S', e->id,
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
		return view_intern(n, out);
	default:
		return bad_mode(fs, t, e);
	}
}

/*
 * trees/<id>: a tree by its full id, a link to by-id/; or a link from a
 * prefix of it.
 */
static int
trees_find(struct odbfs *fs, struct node *dir, const char *name,
    struct node **out)
{
	unsigned char id[OID_RAWSZ_MAX];
	struct objinfo info;
	int ret;

	if (view_is_abbrev(fs, name))
		return view_abbrev_link(fs, dir, name, OBJ_TREE, out);
	if (!oid_parse_hex(id, name, fs->rawsz))
		return -ENOENT;
	if ((ret = view_lookup_id(fs, id, &info)) < 0)
		return ret;
	return info.type == OBJ_TREE ? view_byid_link(fs, dir, name, out) :
	    -ENOENT;
}

/*
 * The tree of every commit commits/ lists (odb_list_trees()); a subtree
 * is found by its id but not listed: there is no cheap list of them.
 */
static int
trees_list(struct odbfs *fs, struct node *dir, struct dirlist *l)
{
	/* Each is a tree: odb_list_trees() weighed them. */
	return dirlist_ids(fs, dir, l, odb_list_trees, OBJ_NONE, true);
}

const struct view_kind view_trees_kind = {
	.name = "trees",
	.node = NODE_TREES,
	.mode = NODE_MODE_DIR,
	.negative = VIEW_NEGATIVE_MOUNT,
	.plain = true,
	.by_id = true,
	.find = trees_find,
	.list = trees_list,
};

static int
tree_child(struct odbfs *fs, struct node *dir, const char *name,
    struct node **out)
{
	const struct tree_entry *e;
	struct ptree *t;
	int ret;

	/* Listed, and too long to look up: see tree_list(). */
	if (strlen(name) > TREE_NAME_MAX)
		return -ENAMETOOLONG;
	if ((ret = tree_get(fs, node_id(dir), dir->path, &t)) < 0)
		return ret;
	if (!(e = tree_find(t, name))) {
		treecache_put(t);
		return -ENOENT;
	}
	ret = tree_entry_node(fs, dir, t, e, out);
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
	treecache_put(t);
	return ret;
}

/*
 * Leave an entry out of l, which then ends in EIO; why is the first's,
 * logged at each listing's end, or at the first listing only if once.
 */
static void __attribute__((format(printf, 3, 4)))
unlisted(struct dirlist *l, bool once, const char *fmt, ...)
{
	va_list ap;

	if (l->corrupt) {
		l->more++;
		return;
	}
	l->corrupt = true;
	l->why_once = once;
	va_start(ap, fmt);
	if (vasprintf(&l->why, fmt, ap) < 0)
		l->why = NULL;
	va_end(ap);
}

/*
 * Trees of more entries than this are listed without attributes, as
 * commits/ is: a readdirplus of a million entries would make a million
 * nodes; the kernel looks up only what is asked for. git.git's largest
 * tree has some 1 500.
 */
#define TREE_PLAIN_MIN 65536

/* Can entry e be listed: a mode git writes, a name FUSE carries? */
static bool
listable(const struct tree_entry *e)
{
	return tree_entry_type(e->mode) && e->namelen <= TREE_LIST_NAME_MAX;
}

/* Entry i of a listing of a tree whose every entry is listable(). */
static const char *
tree_list_entry(const struct dirlist *l, size_t i, mode_t *type,
    uint64_t *ino)
{
	const struct tree_entry *e = &l->tree->tree.entries[i];

	*type = tree_entry_type(e->mode);
	*ino = tree_entry_ino(l->dir, i, e->name);
	return e->name;
}

/*
 * A tree's entries in the tree's order, their names in its parse, which
 * the listing holds: spelled from it, or, when some entry cannot be
 * listed, from a copy of the others. A name over TREE_NAME_MAX is
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
	char hex[OID_HEXSZ_MAX + 1];
	struct ptree *t;
	size_t bad = 0;
	int ret;

	if ((ret = tree_get(fs, node_id(dir), dir->path, &t)) < 0)
		return ret;
	l->tree = t;
	l->plain = t->tree.n > TREE_PLAIN_MIN;
	l->corrupt = t->tree.truncated;
	for (size_t i = 0; i < t->tree.n; i++)
		bad += !listable(&t->tree.entries[i]);
	if (!bad) {
		l->n = t->tree.n;
		l->entry = tree_list_entry;
		return 0;
	}
	oid_to_hex(hex, node_id(dir), fs->rawsz);
	for (size_t i = 0; i < t->tree.n && ret == 0; i++) {
		const struct tree_entry *e = &t->tree.entries[i];
		mode_t type = tree_entry_type(e->mode);

		if (!type) {
			unlisted(l, false, BAD_MODE_FMT,
			    BAD_MODE_ARGS(hex, t, e));
			continue;
		}
		/*
		 * Said once: a tree never changes, and each listing (a tar
		 * or rsync retries) would say it again.
		 */
		if (e->namelen > TREE_LIST_NAME_MAX) {
			unlisted(l, true, "tree %s: entry at offset %zu has a name of "
			    "%zu bytes, more than a listing carries", hex,
			    (size_t)((const unsigned char *)e->name - t->buf),
			    e->namelen);
			continue;
		}
		ret = dirlist_add(l, e->name, false, type, tree_entry_ino(dir, i,
		    e->name));
	}
	return ret;
}

/* A tree never changes: neither does what it lacks. */
const struct view_kind view_tree_kind = {
	.name = "tree",
	.node = NODE_TREE,
	.mode = NODE_MODE_DIR,
	.negative = NODE_TIMEOUT_IMMUTABLE,
	.nlink = VIEW_NLINK_SUBDIRS,
	.cache_listing = true,
	.find = tree_child,
	.list = tree_list,
};

/* A submodule's commit is not in this repository: an empty directory. */
const struct view_kind view_gitlink_kind = {
	.name = "gitlink",
	.node = NODE_GITLINK,
	.mode = NODE_MODE_DIR,
	.negative = NODE_TIMEOUT_IMMUTABLE,
	.nlink = VIEW_NLINK_COUNTED,
	.cache_listing = true,
};
