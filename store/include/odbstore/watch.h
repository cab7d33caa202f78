/*
 * watch: keeps an odb's snapshot fresh while the repository changes.
 *
 * In inotify mode a thread blocks on the object directories, their fan-out
 * directories, pack directories, info/ (alternates, the commit-graph) and
 * info/commit-graphs/ (its chain). Each batch of
 * events becomes one snapshot_change: loose ids touched, packs changed, or
 * a full rescan (queue overflow, a watched directory replaced, alternates
 * changed); odb_update() publishes it and the callback is told. With no
 * events the thread sleeps in poll() with no timeout: an idle daemon uses
 * no CPU.
 *
 * In poll mode (network file systems, where inotify sees nothing) the
 * thread wakes every interval, compares the directories' stat signatures
 * and rescans only when they changed. Lookups never trigger either.
 */
#ifndef ODBFS_WATCH_H
#define ODBFS_WATCH_H

#include "odb.h"

struct watch;

/* Called on the watcher thread after each snapshot is published. */
typedef void watch_fn(void *ctx);

/*
 * Start watching odb. poll_seconds == 0: inotify; otherwise poll at that
 * interval. Stop with watch_stop(), which joins the thread.
 */
int watch_start(struct odb *odb, unsigned poll_seconds, watch_fn *published,
    void *ctx, struct watch **out);
void watch_stop(struct watch *w);

#endif
