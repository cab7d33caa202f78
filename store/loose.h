/*
 * loose: loose objects (objects/xx/yyyy...) and the in-memory set of their
 * ids that lets a lookup miss without touching the file system.
 *
 *   file := zlib( type SP decimal-size NUL payload )
 *
 * The header is at most LOOSE_MAX_HEADER bytes, as in git. A loose object
 * file is opened only to read it; whether it exists is answered by the set.
 */
#ifndef ODBFS_LOOSE_H
#define ODBFS_LOOSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "map.h"
#include "odbstore/object.h"
#include "oid.h"

#define LOOSE_MAX_HEADER 32

/*
 * Sorted, duplicate-free ids with the object directory each came from;
 * fanout[b] is the number of ids whose first byte is <= b. Immutable once
 * built; owned by one snapshot.
 */
struct looseset {
	size_t nr;
	size_t rawsz;
	unsigned char *ids;	/* nr * rawsz bytes */
	unsigned char *dirs;	/* nr object directory numbers */
	uint32_t fanout[256];
};

/*
 * Scan the fan-out directories of each of the ndirs object directories
 * and build *set. Names that are not ids, symlinks and anything but regular
 * files are skipped.
 */
int looseset_scan(struct looseset *set, char *const *dirs, size_t ndirs,
    size_t rawsz);
void looseset_free(struct looseset *set);

/* A loose id whose file was created or deleted in object directory dir. */
struct loose_touch {
	unsigned char id[OID_RAWSZ_MAX];
	unsigned dir;
};

/*
 * *set becomes a copy of prev with each touched id added or removed as its
 * file now is (a file system check per touched id, none for the others).
 * touched is sorted in place.
 */
int looseset_update(struct looseset *set, const struct looseset *prev,
    struct loose_touch *touched, size_t n, char *const *dirs);

/* True, with *pos set, when raw is in the set. */
bool looseset_find(const struct looseset *set, const unsigned char *raw,
    size_t *pos);

/* A loose object file mapped into memory, its header parsed. */
struct loose {
	struct map file;
	const unsigned char *map;	/* file.base */
	size_t size;
	struct objinfo info;
	size_t hdrlen;		/* inflated header bytes before the payload */
	char path[4096];
};

/*
 * Map the loose object raw in the object directory dir and parse its
 * header. -ENOENT if the file is gone (git may have packed and pruned it).
 */
int loose_open(struct loose *lo, const char *dir, const unsigned char *raw,
    size_t rawsz);
void loose_close(struct loose *lo);

/* Parse "type SP size NUL" from the first inflated bytes. */
int loose_header_parse(const unsigned char *buf, size_t len,
    struct objinfo *info, size_t *hdrlen, const char *name);

/*
 * Inflate the whole object; *out is malloc'd (free() it) and holds
 * lo->info.size bytes. Garbage after the stream is an error.
 */
int loose_read(const struct loose *lo, unsigned char **out);

/*
 * -EFSCORRUPTED, logged, if a read of lo's file found it shrunk since it
 * was opened; else 0.
 */
int loose_check(const struct loose *lo);

#endif
