/*
 * unpack: what an object is and what bytes it holds, from where a snapshot
 * says it lies: a loose file, a whole pack entry, or a delta chain that may
 * cross packs (REF_DELTA bases are looked up in the whole snapshot).
 */
#ifndef ODBFS_UNPACK_H
#define ODBFS_UNPACK_H

#include "odbstore/object.h"
#include "snapshot.h"

/*
 * Type and size without inflating the object: entry headers along the
 * delta chain for the type, the first delta's header for the size.
 */
int unpack_info(const struct snapshot *s, const struct objloc *loc,
    struct objinfo *info);

/*
 * The whole payload. *buf is malloc'd (free() it) and holds info->size
 * bytes. -EFBIG for objects above OBJ_MAX_INMEM.
 */
int unpack_object(const struct snapshot *s, const struct objloc *loc,
    struct objinfo *info, unsigned char **buf);

#endif
