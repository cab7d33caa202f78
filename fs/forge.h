/*
 * forge: one mount for every repository under a root (odbfs --root DIR).
 *
 * The root and the groups under it (the roster, roster.h, lists them) are
 * directories of kind NODE_GROUP, of the forge's own struct odbfs; each
 * repository is a directory of kind NODE_ROOT whose nodes carry its
 * number (node_enter()) and are served with its own struct odbfs
 * (served.h), made when an operation first needs its objects and let go
 * when it has been the least recently used of more than max_open (the
 * kernel's nodes of it stay: the next operation on one opens it again).
 * Operations are bracketed by forge_hold() and forge_release(); the
 * thread that sees repositories come and go is rescan.h's.
 */
#ifndef ODBFS_FORGE_H
#define ODBFS_FORGE_H

#include <stdbool.h>
#include <stdint.h>

#include "odbfs.h"

struct forge_opts {
	unsigned max_open;	/* -o max_repos= */
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

/* Drop the delta bases every repository shares (trim.h's shed). */
void forge_shed(struct odbfs *top);

/* Close every repository and free the forge (after rescan_stop()). */
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
