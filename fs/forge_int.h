/*
 * forge_int: the state of a mount of many repositories, shared by the
 * three files that keep it and private to them: roster.c (the table of
 * repositories shown and the scan they come from), forge.c (opening,
 * holding and closing them) and rescan.c (the thread that sees them come
 * and go). Locks: scan_lock guards the scan, lock the table and what each
 * entry says, wds_lock the open repositories' watch descriptors.
 */
#ifndef ODBFS_FORGE_INT_H
#define ODBFS_FORGE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "forge.h"
#include "odbfs.h"
#include "served.h"
#include "stats.h"

/*
 * Which directory a git directory is: its device and inode number, and
 * when it was made. Inode numbers are reused: a repository removed and
 * made again at its path (rm -rf, git clone) often gets the number its
 * old one had, and only its birth tells them apart. Zero when it is not
 * there; a file system without birth times (statx(2)) leaves them 0.
 */
struct dirid {
	dev_t dev;
	ino_t ino;
	int64_t born_s;
	uint32_t born_ns;
};

/* An open repository: what closing it lets go. */
struct live {
	struct odbfs fs;		/* served.c's: its watcher too */
	struct live *next;	/* on the forge's list to close */
	struct forge_fs *forge;
	int wds[2];		/* watch_repo()'s, or -1 */
	/*
	 * A directory of it that watch_repo() watches was removed or moved
	 * away (rescan.c): whatever is at its path now is another, even
	 * with its inode number and no birth time to tell them apart.
	 */
	atomic_bool self_gone;
};

/* An open repository's watch descriptor, on rescan.c's instance. */
struct rwd {
	int wd;
	struct live *l;
};

/* A repository the mount has shown: its number is its index + 1. */
struct frepo {
	char *path;		/* as shown, from the root */
	char *gitdir;		/* where odb_open() finds it */
	uint64_t seed;		/* of its st_ino numbers: its path's hash */
	int64_t epoch;		/* its time, for its directory */
	struct live *live;	/* NULL when closed */
	_Atomic uint64_t stats[STAT_NR];	/* stats_enter()'s */
	unsigned held;		/* forge_hold()s not yet released */
	bool opening;		/* an open is under way, unlocked */
	bool opened;		/* once: the kernel may know its nodes */
	bool replaced;		/* open, but another is at its path now */
	struct dirid dir;	/* the git directory it opened */
	bool failed;		/* its open failed (logged): absent */
	uint64_t print;		/* ...and how it looked then (fingerprint_repo()) */
	bool tell;		/* ...and the kernel's entry of it is to go */
	bool gone;		/* no longer found under the root */
	uint64_t used;		/* LRU clock */
};

/*
 * Where the table's entries and their strings live: blocks that only
 * grow, freed with the forge. Entries are made as lookups first reach
 * each repository, between the nodes those lookups make; from malloc,
 * each one's few hundred bytes kept a page of freed nodes from going back
 * to the system (10 000 repositories: 27 MiB free in the heap, none of it
 * returned). Entries are never freed before the forge anyway.
 */
#define POOL_BLOCK ((size_t)64 << 10)

struct pool {
	struct pool *next;
	size_t used;
	max_align_t data[];
};

struct forge_fs {
	struct odbfs *top;
	struct forge_opts opts;
	char *root;			/* real path, as scanned */

	pthread_rwlock_t scan_lock;
	struct scan *scan;		/* protected by scan_lock */

	pthread_mutex_t lock;		/* the table */
	pthread_cond_t opened;		/* an open ended */
	struct frepo **v;		/* protected by lock */
	size_t n, alloc;
	struct pool *pool;		/* protected by lock: v's entries */
	uint32_t *slots;		/* path hash -> index + 1 */
	size_t nslots;			/* a power of two */
	size_t nopen;
	size_t nfailed;			/* failed, not gone: not listed */
	uint64_t clock;
	bool sweep;			/* a repository gone may be open */
	struct live *closing;		/* for rescan.c's thread to close */
	dev_t self;			/* the mount's device, once rescan knows */
	_Atomic int ifd;		/* rescan.c's inotify instance, or -1 */
	pthread_mutex_t wds_lock;	/* protects rwds */
	struct rwd *rwds;		/* watch_repo()'s descriptors */
	size_t nrwds, rwdcap;
	bool tell;			/* some frepo's tell is set */
	_Atomic uint64_t own[STAT_NR];	/* the root's and groups' counts */

	struct watch_hub *hub;		/* every repository's watches */
	struct odb_cache *cache;	/* every repository's delta bases */
	struct served_how how;		/* every repository's options */
	pthread_t thread;		/* rescan.c's */
	bool running;
	int stopfd;
	int wakefd;			/* rescan.c: something to close or tell */
};

/* roster.c: the table's entries, made under the table's lock. */
uint64_t roster_seed(const char *path);
char *roster_strdup_locked(struct forge_fs *f, const char *s);
struct frepo *roster_entry_locked(struct forge_fs *f, const char *path,
    const char *gitdir, int64_t epoch, bool make, uint32_t *index);
/* Is path (not "") a group of s: some repository's path begins path/? */
bool roster_is_group(const struct scan *s, const char *path);
/* The directory at path now; false (and zeros) if there is none. */
bool roster_dirid(const char *path, struct dirid *out);
/* Are a and b one directory? */
bool roster_same_dir(const struct dirid *a, const struct dirid *b);
/* roster_check(), with the table's lock held. */
bool roster_check_locked(struct forge_fs *f);
/* Free the table (the forge's end). */
void roster_free(struct forge_fs *f);

/* forge.c: what rescan.c's thread closes. */
void forge_live_close(struct live *l);
void forge_close_listed(struct forge_fs *f);

#endif
