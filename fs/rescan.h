/*
 * rescan: the thread of a mount of many (--root) that sees repositories
 * come and go under the root, with -o refresh= (inotify, a poll, or
 * never), and closes the repositories operations let go (forge.c).
 */
#ifndef ODBFS_RESCAN_H
#define ODBFS_RESCAN_H

#include "odbfs.h"

/*
 * Start it, once the daemon has forked (a thread would not survive the
 * fork), before the first request: the repositories' shared inotify
 * instance too. -errno.
 */
int rescan_start(struct odbfs *top);

/*
 * Stop it, before forge_close(). -EBUSY if it still waits on a hung file
 * system after a while: then the forge is left to the exit (top->forge
 * is NULL, and forge_close() does nothing).
 */
int rescan_stop(struct odbfs *top);

#endif
