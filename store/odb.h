/*
 * odb: what the store's own modules call of an odb beyond the public
 * odbstore/odb.h, which it includes: the watcher's side (publishing a
 * snapshot, the refs or the commit-graph anew; the object directories;
 * the repository itself) and the commit-graph's answers for a walk.
 */
#ifndef ODBFS_ODB_PRIVATE_H
#define ODBFS_ODB_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "odbstore/odb.h"

/* The repository, the store's own; valid until odb_close(). */
struct repo;
const struct repo *odb_repo(const struct odb *odb);

/* Read the references again and publish them. */
int odb_refs_reload(struct odb *odb);

/*
 * Commits one walk reads at most: six to ten seconds of reading at
 * 6-9 us a commit (below). A history longer than that needs a commit-graph
 * (git commit-graph write --reachable) to be listed whole.
 */
#define ODB_WALK_MAX ((size_t)1 << 20)

/*
 * What the commit-graph says of the commit raw: its committer time and
 * up to max parent ids (in parents, max * rawsz bytes; *nparents is
 * how many it has, which may be more than max). Memory only. -ENOENT
 * when no graph names raw (read the commit instead), -EFSCORRUPTED
 * (logged) when the graph changed in place.
 */
int odb_graph_commit(struct odb *odb, const unsigned char *raw,
    unsigned char *parents, size_t max, size_t *nparents, int64_t *time);

/*
 * Open the commit-graph again if its files changed (a few stat(2)s when
 * they did not) and publish it: the watcher's side, when it sees
 * objects/info/commit-graph or info/commit-graphs/ replaced.
 */
int odb_graph_reload(struct odb *odb);

struct snapshot_change;

/* Build a fresh snapshot from disk and publish it. */
int odb_refresh(struct odb *odb);

/*
 * Publish a snapshot with change applied to the current one; see
 * snapshot_update(). With reload_alternates, the object directories are
 * read again first (and everything rescanned).
 */
int odb_update(struct odb *odb, struct snapshot_change *change,
    bool reload_alternates);

/* Read the alternates again, without publishing a snapshot yet. */
int odb_reload_alternates(struct odb *odb);

/*
 * The object directories of the current snapshot, for the watcher: a
 * malloc'd array of malloc'd strings (free each and the array).
 */
int odb_objdirs(struct odb *odb, char ***dirs, size_t *n);

#endif
