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
#include "view_int.h"

/* st_ino of the directory at parent/name. */
uint64_t
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

size_t
id_key(unsigned char *key, char tag, const unsigned char *id, size_t rawsz)
{
	key[0] = (unsigned char)tag;
	memcpy(key + 1, id, rawsz);
	return rawsz + 1;
}

size_t
path_key(unsigned char *key, char tag, const char *path)
{
	size_t len = view_dir_key(key, path);

	key[0] = (unsigned char)tag;
	return len;
}

size_t
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
struct node *
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
struct node *
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

int
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

int
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
