/*
 * readers: the store readers of objects being read, shared by every read
 * request for the same object.
 *
 * The kernel does not open object files (ops.c replies ENOSYS to open, the
 * protocol's "no-open" mode), so a read arrives with nothing but the node.
 * An object that one reply covers is rebuilt for that reply and dropped;
 * a larger one is kept here between the kernel's reads of its pages, so it
 * is rebuilt once, not once per read. A failure is kept too, so that the
 * kernel's retry of a failed read neither logs the problem again nor
 * redoes the work, until the store publishes a new snapshot.
 *
 * Keyed by object id: content never changes under an id, so an entry is
 * never wrong, only old. Bounded in entries and in bytes held.
 *
 * And the one object ahead.c's thread is rebuilding to push: a read of it
 * that arrives meanwhile waits for that rebuild and shares its reader, so
 * no object is rebuilt twice because a walk caught up with the thread.
 */
#ifndef ODBFS_READERS_H
#define ODBFS_READERS_H

#include <stdint.h>

#include "odbstore/odb.h"
#include "odbstore/reader.h"

/*
 * A reader of the object raw with a reference for the caller, or its
 * negative error. size is the object's, or UINT64_MAX if the caller does
 * not know it. [off, end) is what the caller reads: unless that is the
 * whole object, the reader is kept for the reads of the rest.
 */
int readers_get(struct odb *odb, const unsigned char *raw, uint64_t size,
    uint64_t off, uint64_t end, struct reader **out);

/*
 * The calling thread is about to rebuild object raw with
 * readers_get_claimed(): until readers_unclaim(), a readers_get() of raw
 * waits for that rebuild and shares its reader. One object at a time.
 */
void readers_claim(struct odb *odb, const unsigned char *raw);

/* readers_get() of the claimed object, for [0, end). */
int readers_get_claimed(struct odb *odb, uint64_t end, struct reader **out);

/* What was claimed is stored: reads of it rebuild it again, if they must. */
void readers_unclaim(void);

/*
 * A read of r ended at byte end: have a thread inflate the bytes that
 * follow, if r is streamed (too large to rebuild whole), before the next
 * read asks for them. Only the latest such object is inflated ahead. Does
 * nothing before readers_start().
 */
void readers_prefetch(struct reader *r, uint64_t end);

/* Start the thread of readers_prefetch(); a negative errno. */
int readers_start(void);

/*
 * Stop that thread, and drop every kept reader (at exit, so leak checkers
 * see no reader).
 */
void readers_clear(void);

/*
 * Let go of every object kept for odb, before it is closed (served.c).
 * The prefetching thread may go on with a reader of odb it holds: a
 * reader holds its pack (or its loose object's bytes), not odb.
 */
void readers_drop(const struct odb *odb);

#endif
