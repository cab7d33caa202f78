/*
 * forge: a mount of every repository under a root (see forge.h): each
 * repository opened when an operation first needs it, held while
 * operations use it, and closed when it has been the least recently used
 * of more than max_open, or is no longer there.
 *
 *   forge_hold()           the repository's struct odbfs: its table entry
 *                          (roster.c), opened if need be by
 *     open_live()          the owner weighed (not_ours()), then
 *                          served_open() and served_watch(), as a mount
 *                          of one opens its repository
 *     evict_locked()       past max_open, the least recently used that
 *                          nothing holds, put on the list rescan.c's
 *                          thread closes once the lock is let go
 *   forge_live_close()     served_close(), after the kernel's links of its
 *                          refs are dropped
 *
 * A repository's entry in the table lives as long as the mount, so that
 * its number, which its nodes carry, always means it; what an open
 * repository holds (struct live) is let go when it is closed.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fingerprint.h"
#include "forge_int.h"
#include "odbstore/log.h"
#include "odbstore/scan.h"
#include "odbstore/watch.h"
#include "owner.h"
#include "roster.h"
#include "served.h"
#include "trim.h"
#include "view.h"

/*
 * An open repository's own directory (and its git directory, if another)
 * watched on rescan.c's inotify instance for what says it may be a
 * repository no more, or another (rescan.c's relevant()): emptied and made
 * a group, a work tree whose .git went or points elsewhere now, the
 * directory itself removed or moved away. None of that changes its group,
 * whose watch would not see it.
 */
static void
watch_repo(struct forge_fs *f, struct live *l, const char *dir,
    const char *gitdir)
{
	const char *paths[2] = { dir, gitdir };
	int fd = atomic_load(&f->ifd);
	struct rwd *grown;

	l->forge = f;
	l->wds[0] = l->wds[1] = -1;
	if (fd < 0)
		return;
	for (int i = 0; i < 2; i++) {
		if (i && !strcmp(dir, gitdir))
			break;
		/*
		 * Its .git, HEAD, objects/ or refs/ made, moved in or
		 * written (a work tree's .git pointed elsewhere), too.
		 */
		l->wds[i] = inotify_add_watch(fd, paths[i], IN_DELETE |
		    IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF |
		    IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ONLYDIR |
		    IN_DONT_FOLLOW);
		if (l->wds[i] < 0)
			continue;
		pthread_mutex_lock(&f->wds_lock);
		/* Out of memory: not watched, as if it could not be. */
		if (f->nrwds == f->rwdcap && (grown = realloc(f->rwds,
		    (2 * f->rwdcap + 8) * sizeof(*grown)))) {
			f->rwds = grown;
			f->rwdcap = 2 * f->rwdcap + 8;
		}
		if (f->nrwds < f->rwdcap) {
			f->rwds[f->nrwds++] = (struct rwd){ l->wds[i], l };
		} else {
			inotify_rm_watch(fd, l->wds[i]);
			l->wds[i] = -1;
		}
		pthread_mutex_unlock(&f->wds_lock);
	}
}

static void
unwatch_repo(struct live *l)
{
	struct forge_fs *f = l->forge;

	for (int i = 0; f && i < 2; i++) {
		if (l->wds[i] < 0)
			continue;
		pthread_mutex_lock(&f->wds_lock);
		for (size_t j = 0; j < f->nrwds; j++)
			if (f->rwds[j].wd == l->wds[i]) {
				f->rwds[j] = f->rwds[--f->nrwds];
				break;
			}
		pthread_mutex_unlock(&f->wds_lock);
		inotify_rm_watch(atomic_load(&f->ifd), l->wds[i]);
	}
}

/* Let go of an open repository, with no lock held. */
void
forge_live_close(struct live *l)
{
	if (!l)
		return;
	unwatch_repo(l);
	/* Its watcher first: it drops the links below, as it publishes. */
	watch_stop(l->fs.watch);
	l->fs.watch = NULL;
	/*
	 * Closed, nothing watches its refs: the kernel would keep the links
	 * of HEAD and refs/ it has (a ref moved meanwhile stayed the old one
	 * until some operation opened the repository again). They go now;
	 * what is under an id never changes and stays.
	 */
	node_enter(l->fs.repo, l->fs.seed);
	view_drop_entry(&l->fs, "", "HEAD");
	view_drop_entry(&l->fs, "", "refs");
	/*
	 * Its format may be another's, if another takes its place: a new
	 * file then (view_meta.c), which the kernel must look up again.
	 */
	view_drop_entry(&l->fs, ".odbfs", "format");
	node_enter(0, 0);
	served_close(&l->fs);
	free(l);
}

/*
 * Whether r may be read as the user the mount reads as (the owner of the
 * root, or -o owner=), NULL if so, else why not. Each repository is
 * weighed as a mount of one weighs its own (owner_of_repo()): its own
 * entries, and, when root owns them, every entry on the way to its git,
 * common and object directories and alternates. A repository whose
 * owner is another user could name, in its alternates or a link for
 * objects/, what only the user read as may read, and a root's one that
 * a group or everyone may change could be made to. (Whoever may rename
 * in a directory above could still swap one in between this look and
 * the open.)
 */
static const char *
not_ours(const struct forge_fs *f, const struct frepo *r)
{
	static _Thread_local char msg[200];
	const char *why = "out of memory";
	struct owner o;
	char *path;
	int ret;

	/* Named by -o owner=: that user's rights bound it, as for one. */
	if (f->opts.owner_named)
		return NULL;
	if (!r->path[0])
		path = strdup(f->root);
	else if (asprintf(&path, "%s/%s", f->root, r->path) < 0)
		path = NULL;
	if (!path)
		return why;
	ret = owner_of_repo(path, &o, &why);
	free(path);
	if (ret < 0)
		return why;
	if (o.uid == 0 || o.uid == geteuid())
		return NULL;
	snprintf(msg, sizeof(msg), "owned by %s, another user than the one "
	    "the mount reads as (see -o owner=)", o.name);
	return msg;
}

/*
 * Open repository r (number index) as a mount of one opens its own
 * (served.c), unlocked: the table's lock is not held, r->opening is.
 * Which directory its git directory was, in *dir. -errno, logged once.
 */
static int
open_live(struct forge_fs *f, struct frepo *r, uint32_t index,
    struct live **out, struct dirid *dir)
{
	struct live *l = NULL;
	const char *why;
	int ret = -EACCES;

	*out = NULL;
	if ((why = not_ours(f, r)))
		goto fail;
	why = "out of memory";
	ret = -ENOMEM;
	roster_dirid(r->gitdir, dir);
	if (!(l = calloc(1, sizeof(*l))))
		goto fail;
	l->fs = *f->top;
	l->fs.repo = index;
	l->fs.seed = r->seed;
	l->fs.epoch = r->epoch;
	l->fs.counters = r->stats;
	/*
	 * Opened again: the kernel may keep links of its refs from before,
	 * which no watcher dropped while it was closed. Its first publication
	 * drops every one.
	 */
	if ((ret = served_open(&l->fs, r->gitdir, &f->how, r->opened,
	    &why)) < 0)
		goto fail;
	/*
	 * On the forge's hub: one inotify instance for all (a user has 128
	 * on Debian); polling, or without a hub, a thread each. One that
	 * cannot watch is served as it is now, which is still right, and
	 * says so once.
	 */
	if ((ret = served_watch(&l->fs, &f->how, r->opened)) < 0)
		log_once(LOGL_WARN, "%s: cannot watch for changes: %s: served "
		    "as it is now until it is opened again", r->path,
		    strerror(-ret));
	/* The root itself a repository: its watch, a group's, says all. */
	l->wds[0] = l->wds[1] = -1;
	if (r->path[0]) {
		char *dir;

		if (asprintf(&dir, "%s/%s", f->root, r->path) >= 0) {
			watch_repo(f, l, dir, r->gitdir);
			free(dir);
		}
	}
	*out = l;
	return 0;
fail:
	log_once(LOGL_ERROR, "%s: %s: not served", r->path, why);
	free(l);
	return ret;
}

/*
 * Past max_open, put the least recently used open repository that nothing
 * holds on the list to close (or, at any count, one no longer under the
 * root, after a rescan found one). A scan of the table, some 10 us over
 * 10 000: only when there is one to close. True when one was put there:
 * the caller wakes rescan.c's thread once it lets go of the lock
 * (wake()). Operations never close a repository themselves: closing
 * joins its watcher, which may be waiting for a lookup to end
 * (reflinks.c).
 */
static bool
evict_locked(struct forge_fs *f)
{
	struct frepo *lru = NULL;
	bool waiting = false;
	struct live *l;

	if (f->nopen <= f->opts.max_open && !f->sweep)
		return false;
	for (size_t i = 0; i < f->n && (!lru || !(lru->gone || lru->replaced));
	    i++) {
		struct frepo *r = f->v[i];

		/* Gone or replaced, but held: closed at a later release. */
		waiting |= r->live && r->held && (r->gone || r->replaced);
		/* One no longer under the root goes first, at any count. */
		if (r->live && !r->held && (!lru || r->gone || r->replaced ||
		    r->used < lru->used))
			lru = r;
	}
	if (!lru || !(lru->gone || lru->replaced))
		f->sweep = waiting;
	if (!lru || (!(lru->gone || lru->replaced) &&
	    f->nopen <= f->opts.max_open))
		return false;
	l = lru->live;
	lru->live = NULL;
	lru->replaced = false;
	f->nopen--;
	l->next = f->closing;
	f->closing = l;
	return true;
}

/* Have rescan.c's thread close what is on the list, tell what failed. */
static void
wake(struct forge_fs *f)
{
	uint64_t one = 1;

	if (f->wakefd >= 0 && write(f->wakefd, &one, sizeof(one)) < 0)
		log_once(LOGL_ERROR, "cannot wake the forge's thread: %s",
		    strerror(errno));
}

/* forge_hold(); may_open false: only if it is open (forge_hold_open()). */
static struct odbfs *
hold(struct odbfs *top, uint32_t repo, bool need_odb, bool may_open,
    int *err)
{
	struct forge_fs *f = top->forge;
	struct live *l;
	struct frepo *r;
	struct dirid dir;
	uint64_t print;
	bool woke = false;
	int ret;

	*err = 0;
	log_context(NULL);
	if (!f || !repo) {
		node_enter(0, 0);
		stats_enter(f ? f->own : NULL);
		return top;
	}
	pthread_mutex_lock(&f->lock);
	if (repo > f->n) {
		pthread_mutex_unlock(&f->lock);
		*err = -ENOENT;
		return NULL;
	}
	r = f->v[repo - 1];
	while (need_odb && may_open && !r->live && !r->failed && !r->gone) {
		if (r->opening) {
			pthread_cond_wait(&f->opened, &f->lock);
			continue;
		}
		r->opening = true;
		pthread_mutex_unlock(&f->lock);
		/* Before: a change made while it opens is one to retry on. */
		print = fingerprint_repo(f->root, r->path, r->gitdir);
		ret = open_live(f, r, repo, &l, &dir);
		pthread_mutex_lock(&f->lock);
		r->opening = false;
		if (ret < 0) {
			/* Absent from now on: its entry too, once rescan.c can. */
			r->failed = r->tell = f->tell = woke = true;
			r->print = print;
			f->nfailed++;
		} else {
			r->live = l;
			r->opened = true;
			r->dir = dir;
			f->nopen++;
		}
		pthread_cond_broadcast(&f->opened);
		assert(roster_check_locked(f));
	}
	if (need_odb && !r->live) {
		/* A file of a repository removed since: as NFS says it. */
		*err = r->gone ? -ESTALE : -ENOENT;
		pthread_mutex_unlock(&f->lock);
		if (woke)
			wake(f);
		return NULL;
	}
	r->used = ++f->clock;
	/* Its path, from the pool: it stays put. */
	log_context(r->path);
	if (!r->live) {
		/* Attributes only: what a node of it needs shown. */
		static _Thread_local struct odbfs attrs;

		attrs = *top;
		attrs.repo = repo;
		attrs.seed = r->seed;
		attrs.epoch = r->epoch;
		attrs.counters = r->stats;
		pthread_mutex_unlock(&f->lock);
		node_enter(repo, r->seed);
		stats_enter(r->stats);
		return &attrs;
	}
	r->held++;
	woke |= evict_locked(f);
	l = r->live;
	pthread_mutex_unlock(&f->lock);
	if (woke)
		wake(f);
	node_enter(repo, r->seed);
	stats_enter(r->stats);
	return &l->fs;
}

struct odbfs *
forge_hold(struct odbfs *top, uint32_t repo, bool need_odb, int *err)
{
	return hold(top, repo, need_odb, true, err);
}

struct odbfs *
forge_hold_open(struct odbfs *top, uint32_t repo)
{
	int err;

	return hold(top, repo, true, false, &err);
}

void
forge_release(struct odbfs *fs)
{
	struct forge_fs *f = fs ? fs->forge : NULL;
	bool woke;

	log_context(NULL);
	/* A single mount's, the forge's own, or attributes only. */
	if (!f || !fs->repo || !fs->odb)
		return;
	pthread_mutex_lock(&f->lock);
	f->v[fs->repo - 1]->held--;
	woke = evict_locked(f);
	pthread_mutex_unlock(&f->lock);
	if (woke)
		wake(f);
}

int
forge_open(struct odbfs *top, const char *root,
    const struct forge_opts *opts)
{
	struct forge_fs *f;
	int ret;

	if (!(f = calloc(1, sizeof(*f))))
		return -ENOMEM;
	/* One budget for all: 64 open must not take 64 times a mount's. */
	if (!(f->cache = odb_cache_new(ODB_CACHE_BYTES))) {
		free(f);
		return -ENOMEM;
	}
	f->top = top;
	f->opts = *opts;
	f->how = (struct served_how){ .verify = opts->verify,
	    .refresh = opts->refresh, .cache = f->cache };
	if ((f->stopfd = eventfd(0, EFD_CLOEXEC)) < 0 ||
	    (f->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		ret = -errno;
		fprintf(stderr, "odbfs: %s\n", strerror(-ret));
		if (f->stopfd >= 0)
			close(f->stopfd);
		odb_cache_free(f->cache);
		free(f);
		return ret;
	}
	pthread_rwlock_init(&f->scan_lock, NULL);
	pthread_mutex_init(&f->lock, NULL);
	pthread_mutex_init(&f->wds_lock, NULL);
	atomic_init(&f->ifd, -1);
	pthread_cond_init(&f->opened, NULL);
	if ((ret = scan_root(root, 0, &f->scan)) < 0 ||
	    !(f->root = strdup(f->scan->root))) {
		ret = ret < 0 ? ret : -ENOMEM;
		fprintf(stderr, "odbfs: %s: %s\n", root, strerror(-ret));
		scan_free(f->scan);
		close(f->stopfd);
		close(f->wakefd);
		odb_cache_free(f->cache);
		free(f);
		return ret;
	}
	top->forge = f;
	return 0;
}

void
forge_shed(struct odbfs *top)
{
	if (top->forge)
		odb_cache_clear(top->forge->cache);
}

/* Close what operations put on the list (evict_locked()). */
void
forge_close_listed(struct forge_fs *f)
{
	struct live *l, *next;
	size_t n = 0;

	pthread_mutex_lock(&f->lock);
	l = f->closing;
	f->closing = NULL;
	pthread_mutex_unlock(&f->lock);
	for (; l; l = next) {
		next = l->next;
		forge_live_close(l);
		n++;
	}
	/* A mount that touched 10 000 repositories costs what the open do. */
	trim_freed(n * TRIM_REPO);
}

void
forge_close(struct odbfs *top)
{
	struct forge_fs *f = top->forge;

	/* rescan_stop() first: its thread is not running now. */
	if (!f)
		return;
	assert(!f->running);
	if (f->stopfd >= 0)
		close(f->stopfd);
	if (f->wakefd >= 0)
		close(f->wakefd);
	forge_close_listed(f);
	assert(roster_check(top));
	for (size_t i = 0; i < f->n; i++)
		forge_live_close(f->v[i]->live);
	roster_free(f);
	watch_hub_free(f->hub);
	odb_cache_free(f->cache);
	scan_free(f->scan);
	free(f->root);
	pthread_rwlock_destroy(&f->scan_lock);
	pthread_mutex_destroy(&f->lock);
	pthread_mutex_destroy(&f->wds_lock);
	free(f->rwds);
	pthread_cond_destroy(&f->opened);
	free(f);
	top->forge = NULL;
}
