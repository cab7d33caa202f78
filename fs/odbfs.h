/*
 * odbfs: what serving one repository needs (struct odbfs): its store, its
 * numbering, the identity and times its files show, the mount's options.
 * A mount has one, set up before the session starts; a mount of many has
 * one more for each repository it opens (served.h). Handlers read it;
 * only FUSE's init (no_open) writes it, before any other request.
 */
#ifndef ODBFS_ODBFS_H
#define ODBFS_ODBFS_H

#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "odbstore/odb.h"

/* Objects never change: the kernel may keep what it learns for a day. */
#define ODBFS_TIMEOUT_IMMUTABLE 86400.0

struct shown;
struct forge_fs;
struct watch;

/*
 * A single mount has one; a mount of many repositories (--root, forge.c)
 * one for itself (forge set, odb NULL) and one for each repository it
 * has opened, with repo and seed as node_enter() takes them.
 */
struct odbfs {
	struct odb *odb;
	size_t rawsz;
	uint32_t repo;			/* 0: a single mount, or the forge */
	uint64_t seed;			/* of its st_ino numbers */
	struct forge_fs *forge;		/* --root: the repositories */
	struct shown *shown;		/* reflinks.c's */
	struct watch *watch;		/* served.c's: its watcher, or NULL */
	_Atomic uint64_t *counters;	/* its repository's (stats.h) */
	uid_t uid;			/* the identity files show: the one */
	gid_t gid;			/* the daemon reads with */
	mode_t umask;			/* -o umask=, cleared from modes */
	time_t epoch;			/* the repository's time: its birth */
	double negative_timeout;	/* -o negative_timeout= */
	struct fuse_session *se;	/* for cache invalidation */
	bool no_open;			/* the kernel takes ENOSYS from open */
	bool ahead;			/* push the files walks will read */
	bool nometa;			/* -o nometa: no .odbfs/ */
	bool prefixes[256];		/* watcher thread only: fan-outs shown */
};

extern const struct fuse_lowlevel_ops odbfs_ops;

#endif
