/*
 * forge: one mount for every repository under a root (odbfs --root DIR).
 *
 * The root and the groups under it (store/scan.c finds them) are
 * directories of kind NODE_GROUP, of the forge's own struct odbfs; each
 * repository is a directory of kind NODE_ROOT whose nodes carry its
 * number (node_enter()) and are served with its own struct odbfs, made
 * when an operation first needs its objects and let go when it has been
 * the least recently used of more than max_open (the kernel's nodes of it
 * stay: the next operation on one opens it again).
 *
 * ops.c brackets every operation on a node with forge_hold() and
 * forge_release(); main.c calls forge_open() before mounting, forge_run()
 * once the session serves, forge_close() at the end.
 */
#ifndef ODBFS_FORGE_H
#define ODBFS_FORGE_H

#include <stdbool.h>
#include <stdint.h>

#include "odbfs.h"

struct forge_opts {
	unsigned max_open;	/* -o max_repos= */
	void (*published)(void *fs);	/* odbfs_published(), for watchers */
	long refresh;		/* as for a single mount: 0 watch, N poll */
	bool verify;		/* -o verify */
	const char *mountpoint;	/* a real path: not searched if bound under
				 * the root */
	bool owner_named;	/* -o owner=: no repository is weighed */
};

/* Repositories open at once unless -o max_repos= says otherwise. */
#define FORGE_MAX_OPEN 64

/*
 * Find the repositories under root for top (whose settings each
 * repository's struct odbfs copies). -errno after a line on stderr.
 */
int forge_open(struct odbfs *top, const char *root,
    const struct forge_opts *opts);

/*
 * Start the forge's thread: it closes what operations let go and, unless
 * refresh is never, sees repositories come and go.
 */
int forge_run(struct odbfs *top);

/* Repositories listed under the root, and how many of them are open. */
void forge_count(const struct odbfs *top, size_t *repos, size_t *open);

/*
 * For .odbfs/metrics: fn(arg, NULL, counters, NULL) with the counts of
 * operations on the root and its groups, then fn(arg, gitdir, counters,
 * odb) for each repository the mount has shown and not lost, with odb
 * NULL when it is closed. Called under the table's lock: fn must not call
 * into the forge, and what it is given is valid only during the call.
 */
void forge_each(const struct odbfs *top, void (*fn)(void *arg,
    const char *gitdir, const _Atomic uint64_t *counters, struct odb *odb),
    void *arg);

/* The root, as scanned (its real path). */
const char *forge_root(const struct odbfs *top);

/* Drop the delta bases every repository shares (trim.h's shed). */
void forge_shed(struct odbfs *top);

/* Stop it and close every repository. */
void forge_close(struct odbfs *top);

/*
 * The struct odbfs that serves node repo (0: the forge's own), the
 * repository opened if need_odb and it is closed, and entered for the
 * calling thread (node_enter()). NULL with *err (-ENOENT when it is gone
 * or failed to open, logged once) when it cannot serve. Each hold is
 * released with forge_release(); a held repository is never closed.
 */
struct odbfs *forge_hold(struct odbfs *top, uint32_t repo, bool need_odb,
    int *err);

/*
 * forge_hold(top, repo, true, ...) if repo is open now, NULL if it is
 * not: never opens one. For work a read did not ask for (ahead.c): a
 * walk's next files are not worth opening a repository again.
 */
struct odbfs *forge_hold_open(struct odbfs *top, uint32_t repo);
void forge_release(struct odbfs *fs);

#endif
