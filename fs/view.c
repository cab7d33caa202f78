/*
 * view: what each name of the mount is. Called by ops.c for lookups,
 * listings and readdirplus; calls store/ (odb, refs, tree and commit
 * parsing) and node.c.
 *
 * Node keys say what a node is, so the same thing looked up twice is one
 * node with one inode number:
 *   'D' path            a directory, by its path from the root
 *   'O' id              objects/<id>
 *   'B' id mode time    a file of a tree (blob and mode); st_ino
 *                       hashes 'B' id mode alone
 *   'S' id time         a symlink of a tree (its blob); st_ino hashes
 *                       'S' id alone
 *   'R' path NUL target HEAD or a ref, by path and where it points (a
 *                       ref that moves is a new symlink)
 *   'A' path            an abbreviated id, by path
 *   'M' id name         a file or link inside commits/<id>/
 * node_id() takes the id of 'O', 'B' and 'S' nodes from right after the
 * tag, so that the most numerous nodes hold it once; the others that stand
 * for an object keep it in their node_ext.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "log.h"
#include "miss.h"
#include "refs.h"
#include "stats.h"
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

/* st_ino of the directory at parent/name. */
static uint64_t
child_dir_ino(const char *parent, const char *name)
{
	unsigned char key[KEY_MAX];
	char path[KEY_MAX];

	snprintf(path, sizeof(path), "%s/%s", parent, name);
	return node_ino(key, view_dir_key(key, path));
}

size_t
view_dir_key(unsigned char *key, const char *path)
{
	size_t len = strlen(path);

	if (len > KEY_MAX - 2)
		len = KEY_MAX - 2;
	key[0] = 'D';
	memcpy(key + 1, path, len);
	return len + 1;
}

static size_t
id_key(unsigned char *key, char tag, const unsigned char *id, size_t rawsz)
{
	key[0] = (unsigned char)tag;
	memcpy(key + 1, id, rawsz);
	return rawsz + 1;
}

static size_t
path_key(unsigned char *key, char tag, const char *path)
{
	size_t len = view_dir_key(key, path);

	key[0] = (unsigned char)tag;
	return len;
}

static size_t
ref_key(unsigned char *key, const char *path, const char *target)
{
	size_t len = path_key(key, 'R', path), tlen = strlen(target);

	if (len + 1 + tlen > KEY_MAX)
		tlen = KEY_MAX - len - 1;
	key[len] = '\0';
	memcpy(key + len + 1, target, tlen);
	return len + 1 + tlen;
}

/* A new directory node at path. */
static struct node *
new_dir(enum node_kind kind, const char *path, int64_t time)
{
	unsigned char key[KEY_MAX];
	struct node *n = node_new(kind, key, view_dir_key(key, path));

	if (!n)
		return NULL;
	if (!(n->path = strdup(path))) {
		node_free(n);
		return NULL;
	}
	n->mode = NODE_MODE_DIR;
	n->time = time;
	return n;
}

/* A new symlink node with the given key and target. */
static struct node *
new_link(const unsigned char *key, size_t keylen, const char *target,
    int64_t time)
{
	struct node *n = node_new(NODE_SYMLINK, key, keylen);

	if (!n)
		return NULL;
	if (!(n->data = strdup(target))) {
		node_free(n);
		return NULL;
	}
	n->mode = S_IFLNK | 0777;
	n->size = strlen(target);
	n->time = time;
	return n;
}

static int
intern(struct node *n, struct node **out)
{
	if (!n)
		return -ENOMEM;
	*out = node_intern(n);
	return 0;
}

/* The directory of kind with a fixed name under the root. */
static int
top_dir(enum node_kind kind, const char *name, struct node **out)
{
	return intern(new_dir(kind, name, NODE_TIME_REPO), out);
}

/*
 * The lookup of a full id: a miss is counted and remembered (so its
 * negative entry can be dropped when the object arrives), with no
 * syscall; a hit gets its type and size.
 */
static int
lookup_id(struct odbfs *fs, const unsigned char *id, struct objinfo *info)
{
	if (!odb_has(fs->odb, id)) {
		miss_note(id, fs->rawsz);
		stats_add(STAT_MISSES, 1);
		return -ENOENT;
	}
	stats_add(STAT_HITS, 1);
	return odb_info(fs->odb, id, info);
}

static int
object_file(struct odbfs *fs, const unsigned char *id, struct node **out)
{
	unsigned char key[KEY_MAX];
	struct objinfo info;
	struct node *n;
	int ret;

	if ((ret = lookup_id(fs, id, &info)) < 0)
		return ret;
	if (!(n = node_new(NODE_OBJECT, key, id_key(key, 'O', id,
	    fs->rawsz))))
		return -ENOMEM;
	n->type = (uint8_t)info.type;
	n->size = info.size;
	n->mode = NODE_MODE_FILE;
	n->time = NODE_TIME_REPO;
	return intern(n, out);
}

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
static int
tree_dir(struct odbfs *fs, const unsigned char *id, const char *path,
    int64_t time, uint64_t ino, struct node **out)
{
	char hex[OID_HEXSZ_MAX + 1];
	size_t dups, dup_off = 0;
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
	for (size_t i = 0; i < x->tree.n; i++)
		x->subdirs += x->tree.entries[i].mode == TREE_MODE_DIR ||
		    x->tree.entries[i].mode == TREE_MODE_GITLINK;
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
 * A node whose inode number comes from the key's first klen bytes, made
 * distinct from others with that number by an 8-byte stamp after them:
 * .odbfs/stats is made anew at each lookup, with a count.
 */
static struct node *
stamped_node(enum node_kind kind, unsigned char *key, size_t klen,
    uint64_t stamp)
{
	uint64_t ino = node_ino(key, klen);
	struct node *n;

	memcpy(key + klen, &stamp, sizeof(stamp));
	if ((n = node_new(kind, key, klen + sizeof(stamp))))
		n->ino = ino;
	return n;
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

static int
tree_entry_node(struct odbfs *fs, struct node *dir,
    const struct tree_entry *e, struct node **out)
{
	uint64_t ino = tree_entry_ino(dir, (size_t)(e - dir->ext->tree.entries),
	    e->name);
	unsigned char key[KEY_MAX];
	char hex[OID_HEXSZ_MAX + 1], *path;
	struct objinfo info;
	unsigned char *buf;
	struct node *n;
	size_t klen;
	int ret;

	oid_to_hex(hex, e->id, fs->rawsz);
	switch (e->mode) {
	case TREE_MODE_DIR:
		if (asprintf(&path, "%s/%s", dir->path, e->name) < 0)
			return -ENOMEM;
		ret = tree_dir(fs, e->id, path, dir->time, ino, out);
		free(path);
		return ret;
	case TREE_MODE_GITLINK:
		if (asprintf(&path, "%s/%s", dir->path, e->name) < 0)
			return -ENOMEM;
		n = new_dir(NODE_GITLINK, path, dir->time);
		free(path);
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

/*
 * commits/<id>/: the commit's header, read and parsed, and what of it the
 * members need kept; not the object, whose message may be any size.
 */
static int
commit_dir(struct odbfs *fs, const unsigned char *id, struct node **out)
{
	char what[8 + OID_HEXSZ_MAX], path[16 + OID_HEXSZ_MAX];
	struct reader *r = NULL;
	unsigned char *buf = NULL;
	struct node_ext *x;
	struct node *n;
	size_t len;
	int ret;

	memcpy(what, "commit ", 7);
	oid_to_hex(what + 7, id, fs->rawsz);
	snprintf(path, sizeof(path), "commits/%s", what + 7);
	if (!(n = new_dir(NODE_COMMIT, path, NODE_TIME_REPO)))
		return -ENOMEM;
	if ((ret = node_ext_new(n)) < 0)
		goto out;
	x = n->ext;
	memcpy(x->id, id, fs->rawsz);
	n->type = OBJ_COMMIT;
	if ((ret = odb_reader_open(fs->odb, id, &r)) < 0)
		goto out;
	if (reader_info(r)->type != OBJ_COMMIT) {
		ret = -ENOENT;
		goto out;
	}
	if ((ret = commit_header_read(r, what, &buf, &len)) < 0 ||
	    (ret = commit_parse(&x->commit, what, buf, len,
	    reader_info(r)->size, fs->rawsz)) < 0)
		goto out;
	n->time = x->commit.time;
out:
	free(buf);
	reader_close(r);
	if (ret < 0) {
		node_free(n);
		return ret;
	}
	return intern(n, out);
}

/*
 * commits/<id>/message: the bytes after the header's blank line, read
 * from the object when the file is read (ops.c), never held.
 */
static struct node *
message_file(struct odbfs *fs, const struct node *dir,
    const unsigned char *key, size_t klen)
{
	const struct commit *c = &dir->ext->commit;
	struct node *n = node_new(NODE_SLICE, key, klen);

	if (!n || node_ext_new(n) < 0) {
		node_free(n);
		return NULL;
	}
	memcpy(n->ext->id, node_id(dir), fs->rawsz);
	n->ext->slice_off = c->header_len + 1;
	n->size = c->message_len;
	n->mode = NODE_MODE_FILE;
	n->time = dir->time;
	return n;
}

/* A file or link inside commits/<id>/. */
static int
commit_member(struct odbfs *fs, struct node *dir, const char *name,
    struct node **out)
{
	const struct commit *c = &dir->ext->commit;
	unsigned char key[KEY_MAX];
	char hex[OID_HEXSZ_MAX + 2], *path, *data = NULL;
	size_t klen = id_key(key, 'M', node_id(dir), fs->rawsz), len = 0;
	struct node *n;
	int ret;

	memcpy(key + klen, name, strlen(name));
	klen += strlen(name);
	if (!strcmp(name, "tree")) {
		if (asprintf(&path, "%s/tree", dir->path) < 0)
			return -ENOMEM;
		ret = tree_dir(fs, c->tree, path, dir->time, 0, out);
		free(path);
		return ret;
	}
	if (!strcmp(name, "parent") || !strcmp(name, "raw")) {
		char target[32 + OID_HEXSZ_MAX];

		if (!strcmp(name, "parent")) {
			if (!c->nparents)
				return -ENOENT;
			oid_to_hex(hex, c->parents, fs->rawsz);
			snprintf(target, sizeof(target), "../%s", hex);
		} else {
			oid_to_hex(hex, node_id(dir), fs->rawsz);
			snprintf(target, sizeof(target), "../../objects/%s",
			    hex);
		}
		return intern(new_link(key, klen, target, dir->time), out);
	}
	if (!strcmp(name, "message"))
		return intern(message_file(fs, dir, key, klen), out);
	if (!strcmp(name, "parents")) {
		len = c->nparents * (2 * fs->rawsz + 1);
		if (!(data = malloc(len + 1)))
			return -ENOMEM;
		for (size_t i = 0; i < c->nparents; i++) {
			oid_to_hex(data + i * (2 * fs->rawsz + 1),
			    c->parents + i * fs->rawsz, fs->rawsz);
			data[(i + 1) * (2 * fs->rawsz + 1) - 1] = '\n';
		}
	} else if (!strcmp(name, "author") || !strcmp(name, "committer")) {
		const char *v = name[0] == 'a' ? c->author : c->committer;

		if (!v)
			return -ENOENT;
		len = (name[0] == 'a' ? c->author_len : c->committer_len) + 1;
		if ((data = malloc(len + 1))) {
			memcpy(data, v, len - 1);
			data[len - 1] = '\n';
		}
	} else {
		return -ENOENT;
	}
	if (!data)
		return -ENOMEM;
	if (!(n = node_new(NODE_DATA, key, klen))) {
		free(data);
		return -ENOMEM;
	}
	n->data = data;
	n->size = len;
	n->mode = NODE_MODE_FILE;
	n->time = dir->time;
	return intern(n, out);
}

/* Why odb_peel() of id failed with ret, in a few words. */
static const char *
peel_failure(struct odbfs *fs, const unsigned char *id, int ret)
{
	switch (ret) {
	case -ELOOP:
		return "tags nested too deep";
	case -ENOENT:
		return odb_has(fs->odb, id) ? "a tag names a missing object" :
		    "the object is missing";
	case -EFSCORRUPTED:
		return "a tag without an object and a type line";
	default:
		return strerror(-ret);
	}
}

/*
 * The target of the ref at path pointing at id: relative to the ref's
 * directory, into commits/, trees/ or objects/ by what id peels to.
 * Returns the target's length, which is size or more if it did not fit.
 */
static size_t
ref_target(struct odbfs *fs, const char *path, const unsigned char *id,
    char *target, size_t size, unsigned char *peeled, enum obj_type *type)
{
	char hex[OID_HEXSZ_MAX + 1];
	const char *where = "objects";
	size_t len = 0;
	int ret;

	if ((ret = odb_peel(fs->odb, id, peeled, type)) < 0) {
		/* Shown as the object it names; said once, not per listing. */
		oid_to_hex(hex, id, fs->rawsz);
		log_once(LOGL_WARN, "%.200s: %s cannot be peeled (%s): linked "
		    "into objects/", path, hex, peel_failure(fs, id, ret));
		memcpy(peeled, id, fs->rawsz);
		*type = OBJ_NONE;
	}
	if (*type == OBJ_COMMIT)
		where = "commits";
	else if (*type == OBJ_TREE)
		where = "trees";
	for (const char *p = strchr(path, '/'); p; p = strchr(p + 1, '/')) {
		if (len + 3 < size)
			memcpy(target + len, "../", 3);
		len += 3;
	}
	oid_to_hex(hex, peeled, fs->rawsz);
	if (len < size)
		snprintf(target + len, size - len, "%s/%s", where, hex);
	else if (size > 0)
		target[size - 1] = '\0';
	return len + strlen(where) + 1 + strlen(hex);
}

static int
ref_link(struct odbfs *fs, const char *path, const unsigned char *id,
    struct node **out)
{
	unsigned char key[KEY_MAX], peeled[OID_RAWSZ_MAX];
	char target[LINK_MAX_LEN + 1];
	enum obj_type type;
	struct node *n;
	size_t len;

	len = ref_target(fs, path, id, target, sizeof(target), peeled, &type);
	if (len > LINK_MAX_LEN)
		return log_corrupt("%.200s%s: ref is nested too deep to show: "
		    "its link would be %zu bytes, more than %d", path,
		    strlen(path) > 200 ? "..." : "", len, LINK_MAX_LEN);
	n = new_link(key, ref_key(key, path, target), target,
	    NODE_TIME_REPO);
	if (n && node_ext_new(n) < 0) {
		node_free(n);
		n = NULL;
	}
	if (n) {
		n->moving = true;
		memcpy(n->ext->id, peeled, fs->rawsz);
		n->type = (uint8_t)type;
	}
	return intern(n, out);
}

/* Where HEAD points, or -ENOENT if it is neither symbolic nor an id. */
static int
head_target(struct odbfs *fs, char *target, size_t size)
{
	const struct refs *refs = odb_refs_get(fs->odb);
	char hex[OID_HEXSZ_MAX + 1];
	int ret = 0;

	if (refs->head_target) {
		snprintf(target, size, "%s", refs->head_target);
	} else if (refs->head_detached) {
		oid_to_hex(hex, refs->head_id, fs->rawsz);
		snprintf(target, size, "commits/%s", hex);
	} else {
		ret = -ENOENT;
	}
	odb_refs_put(fs->odb);
	return ret;
}

static int
head_link(struct odbfs *fs, struct node **out)
{
	unsigned char key[KEY_MAX];
	char target[4096 + 64];
	struct node *n;
	int ret;

	if ((ret = head_target(fs, target, sizeof(target))) < 0)
		return ret;
	n = new_link(key, ref_key(key, "HEAD", target), target,
	    NODE_TIME_REPO);
	if (n)
		n->moving = true;
	return intern(n, out);
}

static int
refs_child(struct odbfs *fs, struct node *dir, const char *name,
    struct node **out)
{
	unsigned char id[OID_RAWSZ_MAX];
	char *path, *under;
	const struct refs *refs;
	long i;
	bool isdir = false;
	struct node *n;

	if (asprintf(&path, "%s/%s", dir->path, name) < 0)
		return -ENOMEM;
	if (asprintf(&under, "%s/", path) < 0) {
		free(path);
		return -ENOMEM;
	}
	refs = odb_refs_get(fs->odb);
	if ((i = refs_find(refs, path)) >= 0)
		memcpy(id, refs->v[i].id, fs->rawsz);
	else
		isdir = refs_first_under(refs, under) >= 0;
	odb_refs_put(fs->odb);
	free(under);
	if (i >= 0) {
		int ret = ref_link(fs, path, id, out);

		free(path);
		return ret;
	}
	if (!isdir) {
		free(path);
		return -ENOENT;
	}
	n = new_dir(NODE_REFDIR, path, NODE_TIME_REPO);
	free(path);
	if (n)
		n->moving = true;
	return intern(n, out);
}

/* Is name lowercase hex of 4 to 2 * rawsz - 1 digits? */
static bool
is_abbrev(const struct odbfs *fs, const char *name)
{
	size_t len = strlen(name);

	if (len < 4 || len >= 2 * fs->rawsz)
		return false;
	for (size_t i = 0; i < len; i++)
		if (hexval(name[i]) < 0)
			return false;
	return true;
}

/* name in objects/, commits/ or trees/ as an abbreviated id. */
static int
abbrev_link(struct odbfs *fs, struct node *dir, const char *name,
    enum obj_type want, struct node **out)
{
	unsigned char id[OID_RAWSZ_MAX], key[KEY_MAX];
	char hex[OID_HEXSZ_MAX + 1], *path;
	struct objinfo info;
	struct node *n;
	int ret;

	if ((ret = odb_find_prefix(fs->odb, name, strlen(name), id)) < 0)
		return -ENOENT;
	if (want != OBJ_NONE && (odb_info(fs->odb, id, &info) < 0 ||
	    info.type != want))
		return -ENOENT;
	oid_to_hex(hex, id, fs->rawsz);
	if (asprintf(&path, "%s/%s", dir->path, name) < 0)
		return -ENOMEM;
	n = new_link(key, path_key(key, 'A', path), hex, NODE_TIME_REPO);
	free(path);
	return intern(n, out);
}

/*
 * .odbfs/ tells where the repository lives on the server and what the
 * daemon does: with allow_other, it is for the mount's owner (the uid
 * files show) and root, by mode (the mount has default_permissions).
 */
#define META_DIR_MODE (S_IFDIR | 0500)
#define META_FILE_MODE (S_IFREG | 0400)

static int
meta_dir(struct odbfs *fs, struct node **out)
{
	struct node *n;

	if (fs->nometa)
		return -ENOENT;
	if ((n = new_dir(NODE_META, ".odbfs", NODE_TIME_REPO)))
		n->mode = META_DIR_MODE;
	return intern(n, out);
}

/* A file of .odbfs/ whose bytes are fixed: repository, format. */
static int
meta_file(const char *name, const char *value, struct node **out)
{
	unsigned char key[KEY_MAX];
	struct node *n = node_new(NODE_DATA, key, path_key(key, 'M', name));

	if (!n || asprintf(&n->data, "%s\n", value) < 0) {
		if (n)
			n->data = NULL;
		node_free(n);
		return -ENOMEM;
	}
	n->mode = META_FILE_MODE;
	n->size = strlen(n->data);
	return intern(n, out);
}

/*
 * .odbfs/stats: the counters as they are at this lookup, in a node of its
 * own (no lookup shares it, so no cached page of an older one is read),
 * looked up again by every path walk. Its st_ino stays the same.
 */
static int
stats_file(struct odbfs *fs, struct node **out)
{
	static atomic_uint_least64_t generation;
	unsigned char key[KEY_MAX];
	struct node *n;

	if (!(n = stamped_node(NODE_STATS, key, path_key(key, 'M',
	    ".odbfs/stats"), atomic_fetch_add(&generation, 1))))
		return -ENOMEM;
	if (!(n->data = stats_report(fs->odb, &n->size))) {
		node_free(n);
		return -ENOMEM;
	}
	n->mode = META_FILE_MODE;
	n->moving = true;
	return intern(n, out);
}

static int
meta_child(struct odbfs *fs, const char *name, struct node **out)
{
	const struct repo *repo = odb_repo(fs->odb);

	if (!strcmp(name, "repository"))
		return meta_file(".odbfs/repository", repo->gitdir, out);
	if (!strcmp(name, "format"))
		return meta_file(".odbfs/format", repo->format, out);
	if (!strcmp(name, "stats"))
		return stats_file(fs, out);
	return -ENOENT;
}

int
view_lookup(struct odbfs *fs, struct node *dir, const char *name,
    struct node **out)
{
	unsigned char id[OID_RAWSZ_MAX];
	const struct tree_entry *e;
	struct objinfo info;
	int hi, lo, ret;

	*out = NULL;
	switch (dir->kind) {
	case NODE_ROOT:
		if (!strcmp(name, "objects"))
			return top_dir(NODE_OBJECTS, "objects", out);
		if (!strcmp(name, "commits"))
			return top_dir(NODE_COMMITS, "commits", out);
		if (!strcmp(name, "trees"))
			return top_dir(NODE_TREES, "trees", out);
		if (!strcmp(name, "HEAD"))
			return head_link(fs, out);
		if (!strcmp(name, ".odbfs"))
			return meta_dir(fs, out);
		if (!strcmp(name, "refs")) {
			struct node *n = new_dir(NODE_REFDIR, "refs",
			    NODE_TIME_REPO);

			if (n)
				n->moving = true;
			return intern(n, out);
		}
		return -ENOENT;
	case NODE_OBJECTS:
		if (oid_parse_hex(id, name, fs->rawsz))
			return object_file(fs, id, out);
		hi = hexval(name[0]);
		lo = hi < 0 ? -1 : hexval(name[1]);
		if (lo >= 0 && name[2] == '\0') {
			struct node *n;
			char path[16];
			unsigned b = (unsigned)(hi << 4 | lo);

			if (!odb_has_prefix(fs->odb, b))
				return -ENOENT;
			snprintf(path, sizeof(path), "objects/%s", name);
			if ((n = new_dir(NODE_FANOUT, path, NODE_TIME_REPO)))
				n->fanout = (uint8_t)b;
			return intern(n, out);
		}
		if (is_abbrev(fs, name))
			return abbrev_link(fs, dir, name, OBJ_NONE, out);
		return -ENOENT;
	case NODE_FANOUT:
		if (oid_parse_hex(id, name, fs->rawsz) && id[0] == dir->fanout)
			return object_file(fs, id, out);
		return -ENOENT;
	case NODE_COMMITS:
	case NODE_TREES:
		if (is_abbrev(fs, name))
			return abbrev_link(fs, dir, name, dir->kind ==
			    NODE_COMMITS ? OBJ_COMMIT : OBJ_TREE, out);
		if (!oid_parse_hex(id, name, fs->rawsz))
			return -ENOENT;
		if ((ret = lookup_id(fs, id, &info)) < 0)
			return ret;
		if (dir->kind == NODE_COMMITS)
			return info.type == OBJ_COMMIT ? commit_dir(fs, id,
			    out) : -ENOENT;
		if (info.type != OBJ_TREE)
			return -ENOENT;
		{
			char path[16 + OID_HEXSZ_MAX];

			snprintf(path, sizeof(path), "trees/%s", name);
			return tree_dir(fs, id, path, NODE_TIME_REPO, 0,
			    out);
		}
	case NODE_REFDIR:
		return refs_child(fs, dir, name, out);
	case NODE_COMMIT:
		return commit_member(fs, dir, name, out);
	case NODE_TREE:
		if (!(e = tree_find(dir, name)))
			return -ENOENT;
		return tree_entry_node(fs, dir, e, out);
	case NODE_META:
		return meta_child(fs, name, out);
	case NODE_GITLINK:
		return -ENOENT;
	default:
		return -ENOTDIR;
	}
}

double
view_negative_timeout(const struct odbfs *fs, const struct node *dir)
{
	switch (dir->kind) {
	case NODE_ROOT:
	case NODE_REFDIR:
		return 0;	/* HEAD and refs come and go */
	case NODE_COMMIT:
	case NODE_TREE:
	case NODE_GITLINK:
		return NODE_TIMEOUT_IMMUTABLE;
	default:
		return fs->negative_timeout;
	}
}

static int
add_rec(struct dirlist *l, size_t *alloc, const char *name, bool owned,
    mode_t type, uint64_t ino)
{
	if (l->n == *alloc) {
		size_t na = *alloc ? 2 * *alloc : 16;
		struct dirent_rec *grown = realloc(l->v, na * sizeof(*grown));
		char **names = realloc(l->names, na * sizeof(char *));

		if (grown)
			l->v = grown;
		if (names)
			l->names = names;
		if (!grown || !names)
			return -ENOMEM;
		*alloc = na;
	}
	l->names[l->n] = NULL;
	if (owned && !(name = l->names[l->n] = strdup(name)))
		return -ENOMEM;
	l->v[l->n++] = (struct dirent_rec){ name, type, ino };
	return 0;
}

/* The children of refs directory dir: next components of refs under it. */
static int
list_refs(struct odbfs *fs, struct dirlist *l, size_t *alloc)
{
	const struct refs *refs = odb_refs_get(fs->odb);
	size_t plen = strlen(l->dir->path), nleaf = 0, leaf_alloc = 0;
	struct leaf { char *name; unsigned char id[OID_RAWSZ_MAX]; } *leaf = NULL;
	unsigned char key[KEY_MAX], peeled[OID_RAWSZ_MAX];
	char *prefix, last[4096] = "", target[4096 + 64];
	enum obj_type type;
	long i, first;
	int ret = 0;

	if (asprintf(&prefix, "%s/", l->dir->path) < 0) {
		odb_refs_put(fs->odb);
		return -ENOMEM;
	}
	first = refs_first_under(refs, prefix);
	for (i = first; ret == 0 && i >= 0 && (size_t)i < refs->n &&
	    !strncmp(refs->v[i].name, prefix, plen + 1); i++) {
		const char *rest = refs->v[i].name + plen + 1;
		size_t clen = strcspn(rest, "/");
		char comp[4096];

		if (clen >= sizeof(comp))
			continue;
		memcpy(comp, rest, clen);
		comp[clen] = '\0';
		if (!strcmp(comp, last))
			continue;
		snprintf(last, sizeof(last), "%s", comp);
		if (rest[clen] == '/') {
			ret = add_rec(l, alloc, comp, true, S_IFDIR,
			    child_dir_ino(l->dir->path, comp));
			continue;
		}
		/* A ref: its target needs the object store, outside RCU. */
		ret = add_rec(l, alloc, comp, true, S_IFLNK, 0);
		if (ret == 0 && nleaf == leaf_alloc) {
			struct leaf *grown;

			leaf_alloc = leaf_alloc ? 2 * leaf_alloc : 16;
			if ((grown = realloc(leaf, leaf_alloc * sizeof(*leaf))))
				leaf = grown;
			else
				ret = -ENOMEM;
		}
		if (ret == 0 && !(leaf[nleaf].name = strdup(refs->v[i].name)))
			ret = -ENOMEM;
		if (ret == 0)
			memcpy(leaf[nleaf++].id, refs->v[i].id, fs->rawsz);
	}
	odb_refs_put(fs->odb);
	for (size_t k = 0, r = 0; k < nleaf; k++) {
		while (l->v[r].type != S_IFLNK)
			r++;
		if (ret == 0) {
			ref_target(fs, leaf[k].name, leaf[k].id, target,
			    sizeof(target), peeled, &type);
			l->v[r++].ino = node_ino(key, ref_key(key,
			    leaf[k].name, target));
		}
		free(leaf[k].name);
	}
	free(leaf);
	free(prefix);
	return ret;
}

int
view_list(struct odbfs *fs, struct node *dir, struct dirlist **out)
{
	static const char *const commit_names[] = { "tree", "parent",
	    "parents", "message", "author", "committer", "raw" };
	static const char *const root_names[] = { "HEAD", "refs", "commits",
	    "trees", "objects", ".odbfs" };
	static const char *const meta_names[] = { "stats", "repository",
	    "format" };
	unsigned char key[KEY_MAX];
	struct dirlist *l;
	size_t alloc = 0;
	int ret = 0;

	*out = NULL;
	if (!S_ISDIR(dir->mode))
		return -ENOTDIR;
	if (!(l = calloc(1, sizeof(*l))))
		return -ENOMEM;
	l->dir = dir;
	l->rawsz = fs->rawsz;
	switch (dir->kind) {
	case NODE_ROOT: {
		char target[4096 + 64];
		uint64_t head_ino = 0;

		if (head_target(fs, target, sizeof(target)) == 0)
			head_ino = node_ino(key, ref_key(key, "HEAD", target));
		/* .odbfs last: -o nometa leaves it out. */
		for (size_t i = 0; i < (fs->nometa ? 5u : 6u) && ret == 0; i++)
			ret = add_rec(l, &alloc, root_names[i], false,
			    i ? S_IFDIR : S_IFLNK, i ? node_ino(key,
			    view_dir_key(key, root_names[i])) : head_ino);
		break;
	}
	case NODE_OBJECTS:
		for (unsigned b = 0; b < 256 && ret == 0; b++) {
			char name[3], path[16];

			if (!odb_has_prefix(fs->odb, b))
				continue;
			snprintf(name, sizeof(name), "%02x", b);
			snprintf(path, sizeof(path), "objects/%02x", b);
			ret = add_rec(l, &alloc, name, true, S_IFDIR,
			    node_ino(key, view_dir_key(key, path)));
		}
		break;
	case NODE_FANOUT:
		ret = odb_list(fs->odb, dir->fanout, &l->ids, &l->n);
		break;
	case NODE_META:
		for (size_t i = 0; i < 3 && ret == 0; i++) {
			char path[32];

			snprintf(path, sizeof(path), ".odbfs/%s",
			    meta_names[i]);
			ret = add_rec(l, &alloc, meta_names[i], false, S_IFREG,
			    node_ino(key, path_key(key, 'M', path)));
		}
		break;
	case NODE_REFDIR:
		ret = list_refs(fs, l, &alloc);
		break;
	case NODE_COMMIT:
		for (size_t i = 0; i < 7 && ret == 0; i++) {
			size_t klen = id_key(key, 'M', node_id(dir),
			    fs->rawsz);

			if (i == 1 && !dir->ext->commit.nparents)
				continue;
			memcpy(key + klen, commit_names[i],
			    strlen(commit_names[i]));
			klen += strlen(commit_names[i]);
			ret = add_rec(l, &alloc, commit_names[i], false,
			    i == 0 ? S_IFDIR : i == 1 || i == 6 ? S_IFLNK :
			    S_IFREG, i == 0 ? child_dir_ino(dir->path, "tree") :
			    node_ino(key, klen));
		}
		break;
	case NODE_TREE:
		for (size_t i = 0; i < dir->ext->tree.n && ret == 0; i++) {
			const struct tree_entry *e = &dir->ext->tree.entries[i];
			unsigned m = e->mode;

			/*
			 * Not shown, and the listing ends in EIO, so that a
			 * walk (tar, a backup) cannot miss it silently.
			 */
			if (!m) {
				char hex[OID_HEXSZ_MAX + 1];

				oid_to_hex(hex, node_id(dir), fs->rawsz);
				if (l->corrupt)
					l->more++;
				else if (asprintf(&l->why, BAD_MODE_FMT,
				    BAD_MODE_ARGS(hex, dir, e)) < 0)
					l->why = NULL;
				l->corrupt = true;
				continue;
			}
			ret = add_rec(l, &alloc, e->name, false,
			    m == TREE_MODE_DIR || m == TREE_MODE_GITLINK ?
			    S_IFDIR : m == TREE_MODE_LINK ? S_IFLNK : S_IFREG,
			    tree_entry_ino(dir, i, e->name));
		}
		l->corrupt |= dir->ext->tree.truncated;
		break;
	default:
		break;
	}
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
dirlist_corrupt(const struct dirlist *l)
{
	return l->corrupt;
}

int
dirlist_error(const struct dirlist *l)
{
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
		*type = S_IFREG;
		*ino = node_ino(key, id_key(key, 'O', id, l->rawsz));
		return buf;
	}
	*type = l->v[i].type;
	*ino = l->v[i].ino;
	return l->v[i].name;
}

fuse_ino_t
dirlist_known(const struct dirlist *l, size_t i)
{
	const unsigned char *id = dirlist_id(l, i);
	unsigned char key[KEY_MAX];

	return id ? node_find(key, id_key(key, 'O', id, l->rawsz)) : 0;
}

const unsigned char *
dirlist_id(const struct dirlist *l, size_t i)
{
	return l->ids ? l->ids + i * l->rawsz : NULL;
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
	free(l);
}
