/*
 * roster: the repositories a mount of many (--root) shows, as its last
 * scan found them, and the table that numbers each the first time it is
 * met: what the group directories (view_group.c) list and find, and what
 * .odbfs/ counts (metrics.c). Opening them is forge.c's.
 */
#ifndef ODBFS_ROSTER_H
#define ODBFS_ROSTER_H

#include <stdbool.h>
#include <stdint.h>

#include "odbfs.h"

/* What is at a path under the root. */
struct roster_place {
	bool repo;		/* a repository, else a group */
	uint32_t index;		/* a repository's number (node_enter()) */
	uint64_t seed;		/* ...of its st_ino numbers */
	int64_t epoch;		/* ...its time: its git directory's birth */
};

/*
 * What is at path ("a/b", not "") under top's root: 0, -ENOENT if nothing
 * (or a repository whose open failed), -ENOMEM.
 */
int roster_at(struct odbfs *top, const char *path, struct roster_place *out);

/*
 * fn(arg, name, seed) for each name directly under the group at dir (""
 * the root), in order and once each: seed is a repository's (of its
 * st_ino numbers), 0 for a group. Repositories that failed to open are
 * left out. Stops at fn's first non-zero return, which it returns. fn
 * must not call into the roster.
 */
int roster_names(struct odbfs *top, const char *dir,
    int (*fn)(void *arg, const char *name, uint64_t seed), void *arg);

/* Repositories listed under the root, and how many of them are open. */
void roster_count(const struct odbfs *top, size_t *repos, size_t *open);

/*
 * fn(arg, NULL, counters, NULL) with the counts of operations on the
 * root and its groups, then fn(arg, gitdir, counters, odb) for each
 * repository the mount has shown and not lost, with odb NULL when it is
 * closed. Called under the table's lock: fn must not call into the
 * forge, and what it is given is valid only during the call.
 */
void roster_each(const struct odbfs *top, void (*fn)(void *arg,
    const char *gitdir, const _Atomic uint64_t *counters, struct odb *odb),
    void *arg);

/* The root, as scanned (its real path). */
const char *roster_root(const struct odbfs *top);

/*
 * Whether the table agrees with itself: every entry at its path's slot,
 * the counts of open and failed ones what the entries say, no entry both
 * open and failed. Under the table's lock; for assertions and tests.
 */
bool roster_check(const struct odbfs *top);

#endif
