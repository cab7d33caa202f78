/*
 * view: the keys of the view's nodes and the makers of its directory and
 * link nodes, which every view file shares (see view.h for the files).
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
 *   'M' path            a file of .odbfs/ (stats: then a stamp; format:
 *                       then NUL and the format), numbered by its path
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

#include "view.h"

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
view_new_dir(const struct view_kind *k, const char *path, int64_t time)
{
	unsigned char key[KEY_MAX];
	struct node *n = node_new(k->node, key, view_dir_key(key, path));

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
	assert(f->dir && f->dir->node == f->kind);
	return view_intern(view_new_dir(f->dir, view_key_to_path(key, klen,
	    path), NODE_TIME_REPO), out);
}

#define BY_ID_UP "../by-id/"

/* The link's target: BY_ID_UP and hex, in target of KEY_MAX bytes. */
static const char *
by_id_target(char *target, const char *hex)
{
	snprintf(target, KEY_MAX, "%s%s", BY_ID_UP, hex);
	return target;
}

size_t
view_byid_key(unsigned char *key, const struct node *dir, const char *hex)
{
	char path[KEY_MAX], target[KEY_MAX];

	view_child_path(dir, hex, path, sizeof(path));
	return view_link_key(key, 'L', path, by_id_target(target, hex));
}

int
view_byid_link(struct odbfs *fs, struct node *dir, const char *hex,
    struct node **out)
{
	unsigned char key[KEY_MAX];
	char target[KEY_MAX];

	(void)fs;
	return view_intern(view_new_link(key, view_byid_key(key, dir, hex),
	    by_id_target(target, hex), NODE_TIME_REPO), out);
}
