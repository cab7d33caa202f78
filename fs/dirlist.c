/*
 * dirlist: a directory's listing (see dirlist.h): its entries, however
 * spelled, and the error that ends a corrupt one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dirlist.h"
#include "odbstore/log.h"
#include "treecache.h"
#include "view.h"

struct dirlist *
dirlist_new(const struct odbfs *fs, struct node *dir, bool plain)
{
	struct dirlist *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->dir = dir;
	l->rawsz = fs->rawsz;
	l->plain = plain;
	return l;
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
