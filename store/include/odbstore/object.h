/*
 * object: git's object types and the answer to "what is this object".
 * The numbers are the pack format's own (gitformat-pack: the 3-bit type in
 * an entry header), so a pack entry's type needs no translation.
 */
#ifndef ODBFS_OBJECT_H
#define ODBFS_OBJECT_H

#include <stddef.h>
#include <stdint.h>

enum obj_type {
	OBJ_NONE = 0,
	OBJ_COMMIT = 1,
	OBJ_TREE = 2,
	OBJ_BLOB = 3,
	OBJ_TAG = 4,
	/* 5 is reserved */
	OBJ_OFS_DELTA = 6,
	OBJ_REF_DELTA = 7,
};

struct objinfo {
	enum obj_type type;	/* commit, tree, blob or tag: never a delta */
	uint64_t size;		/* payload bytes, as git cat-file -s says */
};

/* "commit", "tree", "blob", "tag"; NULL for anything else. */
const char *object_type_name(enum obj_type type);

/*
 * The largest object odbfs will hold in memory at once: a delta's base and
 * result, or a small object materialized for reading. Larger undeltified
 * objects are streamed; larger deltified ones answer -EFBIG. git itself
 * never deltifies objects above core.bigFileThreshold (512 MiB).
 */
#define OBJ_MAX_INMEM ((uint64_t)1 << 30)

#endif
