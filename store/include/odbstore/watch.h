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

/*
 * One inotify instance and one thread for many watches (a mount of many
 * repositories): each takes no instance of its own, of the 128 a user
 * has on Debian. watch_start_on() watches odb in inotify mode on the
 * hub; watch_stop() stops it, waiting for a publication under way.
 * Callbacks run on the hub's thread, one watch at a time. Free the hub
 * after the last watch on it is stopped.
 */
struct watch_hub;
int watch_hub_new(struct watch_hub **out);
int watch_start_on(struct watch_hub *hub, struct odb *odb,
    watch_fn *published, void *ctx, struct watch **out);
void watch_hub_free(struct watch_hub *hub);

/* Have a watch on a hub publish (refs read again) as if it saw events. */
void watch_kick(struct watch *w);

#endif
