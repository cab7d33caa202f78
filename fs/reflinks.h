/*
 * reflinks: the kernel keeps HEAD, the refs and their directories as long
 * as anything else, and the watcher drops exactly what a ref that moved
 * makes wrong (see reflinks.c).
 *
 * ops.c wraps each lookup and listing in the root and under refs/, from
 * reading the refs to its reply, in reflinks_lookup_begin()/_end();
 * main.c calls reflinks_init() before the session, reflinks_published()
 * on the watcher's thread after each publication, reflinks_free() last.
 */
#ifndef ODBFS_REFLINKS_H
#define ODBFS_REFLINKS_H

#include "odbfs.h"

void reflinks_init(struct odbfs *fs);
void reflinks_lookup_begin(void);
void reflinks_lookup_end(void);
void reflinks_published(struct odbfs *fs);
void reflinks_free(void);

#endif
