/*
 * served: one repository as the mount serves it, the same for a mount of
 * one and for each repository a mount of many (forge.c) opens: its store
 * opened and set as the options say, the refs it has shown, its watcher,
 * what each new snapshot drops from the kernel's caches, and closing.
 *
 *   served_open()       odb_open(), verify and frozen, the fan-outs shown,
 *                       reflinks_init()
 *   served_watch()      a watcher (on a hub, or a thread of its own) that
 *                       calls served_published() after each publication
 *   served_published()  misses that now hit, refs that moved, fan-outs
 *                       that came or went: dropped from the kernel
 *   served_close()      all of it let go
 *
 * A mount of one opens before it mounts (so that a bad repository is a
 * message and an exit code) and watches once the daemon has forked; a
 * mount of many does both when an operation first needs the repository.
 */
#ifndef ODBFS_SERVED_H
#define ODBFS_SERVED_H

#include <stdbool.h>

#include "odbfs.h"

struct odb_cache;
struct watch_hub;

/* How every repository of the mount is served (its options). */
struct served_how {
	bool verify;			/* -o verify */
	long refresh;			/* 0 inotify, N poll seconds, <0 never */
	struct odb_cache *cache;	/* delta bases shared, or NULL */
	struct watch_hub *hub;		/* inotify watches shared, or NULL */
};

/*
 * Open the repository at gitdir into fs, whose other fields the caller
 * set (uid, gid, repo, seed, ...). reopened: the kernel may keep links of
 * its refs from an earlier open, which its first publication drops.
 * -errno with *why (a static string) on failure; fs holds nothing then.
 */
int served_open(struct odbfs *fs, const char *gitdir,
    const struct served_how *how, bool reopened, const char **why);

/*
 * Start fs's watcher as how says (none with refresh < 0). A reopened
 * repository on a hub is made to publish at once. -errno if it cannot
 * watch: fs is served as it is now.
 */
int served_watch(struct odbfs *fs, const struct served_how *how,
    bool reopened);

/* After each publication, on the watcher's thread (watch_fn). */
void served_published(void *fs);

/* Stop its watcher and let go of everything served_open() made. */
void served_close(struct odbfs *fs);

#endif
