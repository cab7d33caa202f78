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
#include "view.h"

/*
 * The lookup of a full id: a miss is counted and remembered (so its
 * negative entry can be dropped when the object arrives), with no
 * syscall; a hit gets its type and size.
 */
int
view_lookup_id(struct odbfs *fs, const unsigned char *id, struct objinfo *info)
{
	if (!odb_has(fs->odb, id)) {
		miss_note(id, fs->rawsz);
		stats_add(STAT_MISSES, 1);
		return -ENOENT;
	}
	stats_add(STAT_HITS, 1);
	return odb_info(fs->odb, id, info);
}

/* objects/<id>, a file of the object's bytes. */
static int
object_file(struct odbfs *fs, const unsigned char *id, struct node **out)
{
	unsigned char key[KEY_MAX];
	struct objinfo info;
	struct node *n;
	int ret;

	if ((ret = view_lookup_id(fs, id, &info)) < 0)
		return ret;
	if (!(n = node_new(NODE_OBJECT, key, view_object_key(key, id,
	    fs->rawsz))))
		return -ENOMEM;
	n->type = (uint8_t)info.type;
	n->size = info.size;
	n->mode = NODE_MODE_FILE;
	n->time = NODE_TIME_REPO;
	return view_intern(n, out);
}

/* Is name lowercase hex of 4 to 2 * rawsz - 1 digits? */
bool
view_is_abbrev(const struct odbfs *fs, const char *name)
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
view_abbrev_link(struct odbfs *fs, struct node *dir, const char *name,
    enum obj_type want, struct node **out)
{
	unsigned char id[OID_RAWSZ_MAX], key[KEY_MAX];
	char hex[OID_HEXSZ_MAX + 1], path[KEY_MAX];
	struct node *n;

	unsigned types = want == OBJ_NONE ? 0 : ODB_TYPE(want);
	struct objinfo info;

	/*
	 * In commits/ a tag is a rival, as git reads a committish (and so
	 * does <prefix>~N there): the prefix names a commit only if no other
	 * commit or tag shares it.
	 */
	if (want == OBJ_COMMIT)
		types |= ODB_TYPE(OBJ_TAG);
	if (odb_find_prefix(fs->odb, name, strlen(name), types, id) < 0 ||
	    (want == OBJ_COMMIT && (odb_info(fs->odb, id, &info) < 0 ||
	    info.type != OBJ_COMMIT)))
		return -ENOENT;
	oid_to_hex(hex, id, fs->rawsz);
	view_child_path(dir, name, path, sizeof(path));
	/*
	 * Keyed by its target too, and never cached: an object that comes
	 * later may make the prefix ambiguous, or (after gc) name another.
	 */
	if ((n = view_new_link(key, view_link_key(key, 'A', path, hex), hex,
	    NODE_TIME_REPO)))
		n->moving = true;
	return view_intern(n, out);
}

/* objects/xx/ is there when some object's id begins with byte xx. */
static int
objects_find(struct odbfs *fs, struct node *dir, const char *name,
    struct node **out)
{
	unsigned char id[OID_RAWSZ_MAX];
	char path[KEY_MAX];
	struct node *n;
	int hi, lo;

	if (oid_parse_hex(id, name, fs->rawsz))
		return object_file(fs, id, out);
	hi = hexval(name[0]);
	lo = hi < 0 ? -1 : hexval(name[1]);
	if (lo >= 0 && name[2] == '\0') {
		unsigned b = (unsigned)(hi << 4 | lo);

		if (!odb_has_prefix(fs->odb, b))
			return -ENOENT;
		view_child_path(dir, name, path, sizeof(path));
		if ((n = view_new_dir(&view_fanout_kind, path, NODE_TIME_REPO)))
			n->fanout = (uint8_t)b;
		return view_intern(n, out);
	}
	if (view_is_abbrev(fs, name))
		return view_abbrev_link(fs, dir, name, OBJ_NONE, out);
	return -ENOENT;
}

/* objects/ lists its fan-out directories, not the objects. */
static int
objects_list(struct odbfs *fs, struct node *dir, struct dirlist *l)
{
	unsigned char key[KEY_MAX];
	char name[3], path[KEY_MAX];
	int ret = 0;

	for (unsigned b = 0; b < 256 && ret == 0; b++) {
		if (!odb_has_prefix(fs->odb, b))
			continue;
		snprintf(name, sizeof(name), "%02x", b);
		view_child_path(dir, name, path, sizeof(path));
		ret = dirlist_add(l, name, true, S_IFDIR, node_ino(key,
		    view_dir_key(key, path)));
	}
	return ret;
}

const struct view_kind view_objects_kind = {
	.name = "objects",
	.node = NODE_OBJECTS,
	.mode = NODE_MODE_DIR,
	.negative = VIEW_NEGATIVE_MOUNT,
	.by_id = true,
	.fanout = true,
	.find = objects_find,
	.list = objects_list,
};

static int
fanout_find(struct odbfs *fs, struct node *dir, const char *name,
    struct node **out)
{
	unsigned char id[OID_RAWSZ_MAX];

	if (oid_parse_hex(id, name, fs->rawsz) && id[0] == dir->fanout)
		return object_file(fs, id, out);
	return -ENOENT;
}

/*
 * objects/xx/ lists ids, not names: dirlist_entry() spells each and
 * numbers it by view_object_key(), as object_file() keys its node.
 */
static int
fanout_list(struct odbfs *fs, struct node *dir, struct dirlist *l)
{
	return odb_list(fs->odb, dir->fanout, &l->ids, &l->n);
}

const struct view_kind view_fanout_kind = {
	.name = "fanout",
	.node = NODE_FANOUT,
	.mode = NODE_MODE_DIR,
	.negative = VIEW_NEGATIVE_MOUNT,
	.find = fanout_find,
	.list = fanout_list,
};
