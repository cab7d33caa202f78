/*
 * reflinks: the kernel keeps HEAD, the refs and their directories as long
 * as anything else, and the watcher drops exactly what a ref that moved
 * makes wrong (see reflinks.c).
 *
 * ops.c wraps each lookup and listing in the root and under refs/, from
 * reading the refs to its reply, in reflinks_lookup_begin()/_end();
 * served.c, which opens every repository served, calls reflinks_init()
 * before serving it, reflinks_published() on its watcher's thread after
 * each publication, reflinks_free() last. What was shown is kept in the
 * repository's struct odbfs; the lock is one for all.
 */
#ifndef ODBFS_REFLINKS_H
#define ODBFS_REFLINKS_H

#include "odbfs.h"

/*
 * -ENOMEM, or 0. known: the kernel has seen the refs as they are now, or
 * none of them; else (a repository opened again, whose links the kernel
 * may keep from before) the first reflinks_published() drops them all.
 */
int reflinks_init(struct odbfs *fs, bool known);
void reflinks_lookup_begin(void);
void reflinks_lookup_end(void);
void reflinks_published(struct odbfs *fs);
void reflinks_free(struct odbfs *fs);

#endif
