/*
 * reader: what the store needs of readers (opening one, the in-memory
 * bound) beyond the public odbstore/reader.h, which it includes.
 */
#ifndef ODBFS_READER_H
#define ODBFS_READER_H

#include "odbstore/reader.h"
#include "snapshot.h"

/* Objects up to this size are rebuilt at open and served from memory. */
#define READER_INMEM ((uint64_t)8 << 20)

/* Open the object at loc of snapshot s; the reader outlives s. */
int reader_open(const struct snapshot *s, const struct objloc *loc,
    struct reader **out);

#endif
