/*
 * reader: how the store opens a reader, beyond the public
 * odbstore/reader.h, which it includes.
 */
#ifndef ODBFS_READER_H
#define ODBFS_READER_H

#include "odbstore/reader.h"
#include "snapshot.h"

/* Open the object at loc of snapshot s; the reader outlives s. */
int reader_open(const struct snapshot *s, const struct objloc *loc,
    struct reader **out);

#endif
