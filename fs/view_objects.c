/*
 * view_objects: objects/, its fan-out directories objects/xx/, and the
 * ids and abbreviated ids of objects/, commits/ and trees/.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "miss.h"
#include "stats.h"
#include "view_int.h"

/*
 * The lookup of a full id: a miss is counted and remembered (so its
 * negative entry can be dropped when the object arrives), with no
 * syscall; a hit gets its type and size.
 */
int
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

int
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

/* Is name lowercase hex of 4 to 2 * rawsz - 1 digits? */
bool
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
int
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
