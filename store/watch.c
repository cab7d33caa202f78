/*
 * watch: keeping an odb's snapshot, refs and commit-graph up with the
 * repository on disk, and telling its owner after each publication: a
 * thread of its own per watch (inotify or polling), or one hub thread
 * (hub_run()) for many watches in inotify mode. Nothing here runs on a
 * lookup.
 *
 *   watch_loop()                  a watch's own thread, inotify mode
 *     poll(inotify, stop)         blocks: no timeout
 *     collect()                   every queued event, then those that
 *                                 arrive while it reads (non-blocking)
 *       on_event()                -> snapshot_change, or refs to read
 *                                 (loose refs, packed-refs, HEAD,
 *                                 reftable/tables.list)
 *     publish()
 *       publish_objects()
 *         odb_update()            publish one snapshot for the batch
 *       odb_graph_reload(), odb_refs_reload()   when their files moved
 *       published()               the owner's callback (the daemon
 *                                 invalidates kernel caches)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "log.h"
#include "odbstore/repo.h"
#include "odbstore/watch.h"
#include "odb.h"
#include "oid.h"
#include "snapshot.h"

enum wkind {
	W_NONE, W_OBJDIR, W_FANOUT, W_PACKDIR, W_INFO, W_GITDIR, W_REFS,
	W_REFTABLE,	/* a reftable/ directory: tables.list */
	W_GRAPHS,	/* info/commit-graphs: a split commit-graph */
	W_STALE,	/* during setup(): not yet watched again */
};

struct wentry {
	enum wkind kind;
	unsigned dir;		/* object directory number */
	unsigned byte;		/* W_FANOUT: first byte of its ids */
};

/*
 * Watch descriptors to what they stand for. The kernel hands them out
 * ever higher over an instance's life (a hub's: every repository opened
 * since the mount), so they key an open-addressing table, not index an
 * array; deleting shifts the run back, so a table holds only what is
 * watched now.
 */
struct wdmap {
	int *keys;		/* -1: empty */
	unsigned char *vals;	/* cap of size bytes each */
	size_t size, cap, n;	/* cap: a power of two, or 0 */
};

static size_t
wd_slot(const struct wdmap *m, int wd)
{
	return ((size_t)(unsigned)wd * 0x9e3779b1u) & (m->cap - 1);
}

static void *
wd_find(const struct wdmap *m, int wd)
{
	for (size_t i = m->cap ? wd_slot(m, wd) : 0; m->cap && m->keys[i] >= 0;
	    i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == wd)
			return m->vals + i * m->size;
	return NULL;
}

/* The value of wd, zeroed if new; NULL when out of memory. */
static void *
wd_put(struct wdmap *m, int wd)
{
	void *v = wd_find(m, wd);
	size_t i;

	if (v)
		return v;
	if (2 * (m->n + 1) > m->cap) {
		struct wdmap g = { .size = m->size, .cap = m->cap ? 2 * m->cap :
		    64 };

		if (!(g.keys = malloc(g.cap * sizeof(*g.keys))) ||
		    !(g.vals = calloc(g.cap, g.size))) {
			free(g.keys);
			return NULL;
		}
		memset(g.keys, 0xff, g.cap * sizeof(*g.keys));
		for (i = 0; i < m->cap; i++)
			if (m->keys[i] >= 0)
				memcpy(wd_put(&g, m->keys[i]), m->vals +
				    i * m->size, m->size);
		free(m->keys);
		free(m->vals);
		*m = g;
	}
	for (i = wd_slot(m, wd); m->keys[i] >= 0; i = (i + 1) & (m->cap - 1))
		;
	m->keys[i] = wd;
	m->n++;
	return memset(m->vals + i * m->size, 0, m->size);
}

static void
wd_del(struct wdmap *m, int wd)
{
	size_t i, j, k;

	if (!m->cap)
		return;
	for (i = wd_slot(m, wd); m->keys[i] != wd; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] < 0)
			return;
	/* Shift back what follows in the run, if its home allows. */
	for (j = i;;) {
		m->keys[i] = -1;
		do {
			j = (j + 1) & (m->cap - 1);
			if (m->keys[j] < 0) {
				m->n--;
				return;
			}
			k = wd_slot(m, m->keys[j]);
		} while (i <= j ? (i < k && k <= j) : (i < k || k <= j));
		m->keys[i] = m->keys[j];
		memcpy(m->vals + i * m->size, m->vals + j * m->size, m->size);
		i = j;
	}
}

static void
wd_free(struct wdmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/*
 * Many watches on one inotify instance and one thread (watch_hub_new()):
 * a mount of many repositories would otherwise take an instance each,
 * of the 128 a user has on Debian. A descriptor's owners are the watches
 * that asked for its directory (forks share their parent's objects).
 */
struct owners {
	struct watch **v;
	size_t n;
};

struct watch_hub {
	int ifd;
	int stopfd;
	int kickfd;			/* watch_kick(): publish without events */
	pthread_t thread;
	bool running;
	pthread_mutex_t lock;		/* the tables, and each watch's wds */
	pthread_cond_t idle;		/* a watch's publication ended */
	struct wdmap by_wd;		/* struct owners; protected by lock */
	struct watch **all;		/* protected by lock */
	size_t nall;
};

struct watch {
	struct odb *odb;
	struct watch_hub *hub;		/* NULL: a thread of its own */
	bool dirty;			/* hub: events since it last published */
	bool in_event;			/* hub: on_event() runs, the lock held */
	unsigned busy;			/* hub: publications under way */
	unsigned poll_seconds;
	watch_fn *published;
	void *ctx;
	pthread_t thread;
	int stopfd;		/* eventfd: written once to stop */

	/* Used by the watcher thread only. */
	int ifd;
	struct wdmap wds;	/* struct wentry, by watch descriptor */
	char **dirs;
	size_t ndirs;
	size_t rawsz;
	struct snapshot_change change;
	size_t touched_alloc;
	bool alternates;	/* info/alternates changed */
	bool refs;		/* a ref, packed-refs or HEAD changed */
	bool graph;		/* a commit-graph or its chain changed */
	const struct repo *repo;
	uint64_t signature;	/* poll mode */
};

/* The i-th slot's entry of w's table (its key is w->wds.keys[i]). */
static struct wentry *
wentry_at(struct watch *w, size_t i)
{
	return (struct wentry *)(void *)w->wds.vals + i;
}

#define FANOUT_MASK (IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | \
	IN_ONLYDIR | IN_DELETE_SELF | IN_MOVE_SELF)
#define OBJDIR_MASK (IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | \
	IN_ONLYDIR | IN_DELETE_SELF | IN_MOVE_SELF)
#define PACKDIR_MASK (IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | \
	IN_MOVED_FROM | IN_ONLYDIR | IN_DELETE_SELF | IN_MOVE_SELF)
#define GITDIR_MASK (IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | \
	IN_MOVED_FROM | IN_ONLYDIR)
#define REFS_MASK (IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | \
	IN_MOVED_FROM | IN_ONLYDIR)
#define INFO_MASK (IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | \
	IN_MOVED_FROM | IN_ONLYDIR | IN_DELETE_SELF | IN_MOVE_SELF)

static void
free_dirs(struct watch *w)
{
	for (size_t i = 0; i < w->ndirs; i++)
		free(w->dirs[i]);
	free(w->dirs);
	w->dirs = NULL;
	w->ndirs = 0;
}

/* Make w an owner of wd on its hub (with the hub's lock held). */
static int
own_locked(struct watch_hub *h, int wd, struct watch *w)
{
	struct owners *o;
	struct watch **grown;

	if (!(o = wd_put(&h->by_wd, wd)))
		return -ENOMEM;
	for (size_t i = 0; i < o->n; i++)
		if (o->v[i] == w)
			return 0;
	if (!(grown = realloc(o->v, (o->n + 1) * sizeof(*grown))))
		return -ENOMEM;
	o->v = grown;
	o->v[o->n++] = w;
	return 0;
}

/* w no longer wants wd: the watch goes with its last owner. */
static void
disown_locked(struct watch_hub *h, int wd, struct watch *w)
{
	struct owners *o = wd_find(&h->by_wd, wd);

	for (size_t i = 0; o && i < o->n; i++)
		if (o->v[i] == w) {
			o->v[i] = o->v[--o->n];
			if (!o->n) {
				inotify_rm_watch(h->ifd, wd);
				free(o->v);
				wd_del(&h->by_wd, wd);
			}
			return;
		}
}

static int
add_watch_locked(struct watch *w, const char *path, uint32_t mask,
    enum wkind kind, unsigned dir, unsigned byte)
{
	/* On a hub another watch may have the directory: add to its mask. */
	int wd = inotify_add_watch(w->ifd, path, mask | (w->hub ?
	    IN_MASK_ADD : 0)), ret;
	struct wentry *e;

	if (wd < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	if (!(e = wd_put(&w->wds, wd)))
		return -ENOMEM;
	if (w->hub && (ret = own_locked(w->hub, wd, w)) < 0)
		return ret;
	*e = (struct wentry){ kind, dir, byte };
	return 0;
}

static int
add_watch(struct watch *w, const char *path, uint32_t mask, enum wkind kind,
    unsigned dir, unsigned byte)
{
	/* on_event() adds a new fan-out directory with the lock held. */
	bool lock = w->hub && !w->in_event;
	int ret;

	if (lock)
		pthread_mutex_lock(&w->hub->lock);
	ret = add_watch_locked(w, path, mask, kind, dir, byte);
	if (lock)
		pthread_mutex_unlock(&w->hub->lock);
	return ret;
}

static int
touch(struct watch *w, const unsigned char *raw, unsigned dir)
{
	struct snapshot_change *c = &w->change;

	if (c->ntouched == w->touched_alloc) {
		size_t n = w->touched_alloc ? 2 * w->touched_alloc : 256;
		struct loose_touch *grown = realloc(c->touched,
		    n * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		c->touched = grown;
		w->touched_alloc = n;
	}
	memcpy(c->touched[c->ntouched].id, raw, w->rawsz);
	c->touched[c->ntouched++].dir = dir;
	return 0;
}

/* A loose file name in fan-out byte: touch it if it is an id. */
static void
touch_name(struct watch *w, unsigned dir, unsigned byte, const char *name)
{
	char hex[OID_HEXSZ_MAX + 1];
	unsigned char raw[OID_RAWSZ_MAX];

	if (strlen(name) != 2 * w->rawsz - 2)
		return;
	snprintf(hex, sizeof(hex), "%02x%s", byte & 255, name);
	if (oid_parse_hex(raw, hex, w->rawsz) && touch(w, raw, dir) < 0)
		w->change.full = true;
}

/* Watch a fan-out directory, then touch what is already in it. */
static void
watch_fanout(struct watch *w, unsigned dir, unsigned byte, bool scan)
{
	char path[4096];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%02x", w->dirs[dir], byte & 255);
	if (add_watch(w, path, FANOUT_MASK, W_FANOUT, dir, byte) < 0) {
		w->change.full = true;
		return;
	}
	if (!scan || !(d = opendir(path)))
		return;
	while ((de = readdir(d)))
		touch_name(w, dir, byte, de->d_name);
	closedir(d);
}

/* Watch a directory of loose refs and every directory below it. */
static void
watch_refs(struct watch *w, const char *path, unsigned depth)
{
	char child[4096];
	struct dirent *de;
	DIR *d;

	if (depth > 64 || add_watch(w, path, REFS_MASK, W_REFS, 0, 0) < 0)
		return;
	if (!(d = opendir(path)))
		return;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") ||
		    !strcmp(de->d_name, ".."))
			continue;
		if ((size_t)snprintf(child, sizeof(child), "%s/%s", path,
		    de->d_name) < sizeof(child))
			watch_refs(w, child, depth + 1);
	}
	closedir(d);
}

/*
 * Watch the reftable/ directories (the common one, and a linked
 * worktree's own): git renames tables.list.lock over tables.list for
 * every change. No such directory (the files backend) is no watch.
 */
static int
watch_reftable(struct watch *w)
{
	char path[4096];
	int ret;

	snprintf(path, sizeof(path), "%s/reftable", w->repo->commondir);
	if ((ret = add_watch(w, path, REFS_MASK, W_REFTABLE, 0, 0)) < 0 ||
	    !strcmp(w->repo->gitdir, w->repo->commondir))
		return ret;
	snprintf(path, sizeof(path), "%s/reftable", w->repo->gitdir);
	return add_watch(w, path, REFS_MASK, W_REFTABLE, 0, 0);
}

/*
 * Watch info/commit-graphs of object directory d: git renames a new
 * commit-graph-chain in there once its layers are written.
 */
static int
watch_graphs(struct watch *w, unsigned d)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/info/commit-graphs", w->dirs[d]);
	return add_watch(w, path, INFO_MASK, W_GRAPHS, d, 0);
}

/* (Re)create every watch for the current object directories. */
static int
setup(struct watch *w)
{
	uint64_t have[4];
	char path[4096];
	int ret;

	/*
	 * One inotify instance for the daemon's life: replacing it would
	 * drop the events it still holds. Watches are added again (for the
	 * same directory, the same descriptor) and the ones no longer
	 * wanted removed at the end.
	 */
	if (w->ifd < 0 && (w->ifd = inotify_init1(IN_NONBLOCK |
	    IN_CLOEXEC)) < 0)
		return -errno;
	if (w->hub)
		pthread_mutex_lock(&w->hub->lock);
	for (size_t i = 0; i < w->wds.cap; i++)
		if (w->wds.keys[i] >= 0 && wentry_at(w, i)->kind != W_NONE)
			wentry_at(w, i)->kind = W_STALE;
	if (w->hub)
		pthread_mutex_unlock(&w->hub->lock);
	free_dirs(w);
	if ((ret = odb_objdirs(w->odb, &w->dirs, &w->ndirs)) < 0)
		return ret;
	for (unsigned d = 0; d < w->ndirs; d++) {
		const char *o = w->dirs[d];

		if ((ret = add_watch(w, o, OBJDIR_MASK, W_OBJDIR, d, 0)) < 0)
			return ret;
		snprintf(path, sizeof(path), "%s/pack", o);
		if ((ret = add_watch(w, path, PACKDIR_MASK, W_PACKDIR, d,
		    0)) < 0)
			return ret;
		snprintf(path, sizeof(path), "%s/info", o);
		if ((ret = add_watch(w, path, INFO_MASK, W_INFO, d, 0)) < 0)
			return ret;
		if ((ret = watch_graphs(w, d)) < 0)
			return ret;
		/* After objects/'s own watch: one made since is an event. */
		repo_fanouts(o, have);
		for (unsigned b = 0; b < 256; b++)
			if (repo_fanout_has(have, b))
				watch_fanout(w, d, b, false);
	}
	/* HEAD lives in the git directory, refs in the common one. */
	if ((ret = add_watch(w, w->repo->gitdir, GITDIR_MASK, W_GITDIR, 0,
	    0)) < 0 || (ret = add_watch(w, w->repo->commondir, GITDIR_MASK,
	    W_GITDIR, 0, 0)) < 0)
		return ret;
	snprintf(path, sizeof(path), "%s/refs", w->repo->commondir);
	watch_refs(w, path, 0);
	if ((ret = watch_reftable(w)) < 0)
		return ret;
	w->refs = true;
	if (w->hub)
		pthread_mutex_lock(&w->hub->lock);
	for (size_t i = 0; i < w->wds.cap; i++)
		if (w->wds.keys[i] >= 0 && wentry_at(w, i)->kind == W_STALE) {
			if (w->hub)
				disown_locked(w->hub, w->wds.keys[i], w);
			else
				inotify_rm_watch(w->ifd, w->wds.keys[i]);
			wentry_at(w, i)->kind = W_NONE;
		}
	if (w->hub)
		pthread_mutex_unlock(&w->hub->lock);
	return 0;
}

/* Does name end with suffix? */
static bool
has_suffix(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);

	return n >= k && !strcmp(name + n - k, suffix);
}

static bool
is_pack_file(const char *name)
{
	size_t n = strlen(name);

	return !strncmp(name, "pack-", 5) && n > 9 &&
	    (has_suffix(name, ".idx") || has_suffix(name, ".pack"));
}

static void
on_event(struct watch *w, const struct inotify_event *ev)
{
	struct wentry *e;
	int hi, lo;

	if (ev->mask & IN_Q_OVERFLOW) {
		w->change.full = true;
		w->graph = true;
		return;
	}
	if (ev->wd < 0 || !(e = wd_find(&w->wds, ev->wd)))
		return;
	if (ev->mask & IN_IGNORED) {
		/* The directory went away (git prune removes empty ones). */
		if (e->kind == W_PACKDIR || e->kind == W_OBJDIR)
			w->change.full = true;
		w->graph |= e->kind == W_GRAPHS;
		e->kind = W_NONE;
		return;
	}
	if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
		if (e->kind != W_FANOUT)
			w->change.full = true;
		return;
	}
	if (!ev->len)
		return;
	switch (e->kind) {
	case W_OBJDIR:
		/*
		 * pack or info come, go or are replaced, by a directory or
		 * by a symlink to one (no IN_ISDIR, and the watch on what
		 * it replaced sees nothing): watch them from scratch.
		 */
		if (!strcmp(ev->name, "pack") || !strcmp(ev->name, "info")) {
			w->change.full = true;
			w->alternates |= !strcmp(ev->name, "info");
			break;
		}
		if (!(ev->mask & IN_ISDIR) || !(ev->mask & (IN_CREATE |
		    IN_MOVED_TO)))
			break;
		hi = hexval(ev->name[0]);
		lo = hi < 0 ? -1 : hexval(ev->name[1]);
		if (lo >= 0 && ev->name[2] == '\0')
			watch_fanout(w, e->dir, (unsigned)(hi << 4 | lo), true);
		break;
	case W_FANOUT:
		touch_name(w, e->dir, e->byte, ev->name);
		break;
	case W_PACKDIR:
		if (is_pack_file(ev->name))
			w->change.packs = true;
		break;
	case W_INFO:
		if (!strcmp(ev->name, "alternates"))
			w->alternates = true;
		if (!strcmp(ev->name, "commit-graph"))
			w->graph = true;
		if (!strcmp(ev->name, "commit-graphs")) {
			w->graph = true;
			if (watch_graphs(w, e->dir) < 0)
				w->change.full = true;
		}
		break;
	case W_GRAPHS:
		if (!strcmp(ev->name, "commit-graph-chain"))
			w->graph = true;
		break;
	case W_GITDIR:
		/* shallow: which commits are roots, read with the graph. */
		if (!strcmp(ev->name, "shallow"))
			w->graph = true;
		/* config: git refs migrate names the new backend there. */
		if (!strcmp(ev->name, "HEAD") || !strcmp(ev->name,
		    "packed-refs") || !strcmp(ev->name, "config"))
			w->refs = true;
		/*
		 * refs/ made or replaced (git refs migrate to files renames
		 * a new one in): watch the new one and all below it.
		 */
		if (!strcmp(ev->name, "refs")) {
			char path[4096];

			snprintf(path, sizeof(path), "%s/refs",
			    w->repo->commondir);
			watch_refs(w, path, 0);
			w->refs = true;
		}
		/* reftable/ made or replaced: watch the new one. */
		if (!strcmp(ev->name, "reftable")) {
			int ret = watch_reftable(w);

			if (ret < 0)
				log_msg(LOGL_ERROR, "watching %s/reftable: %s",
				    w->repo->commondir, strerror(-ret));
			w->refs = true;
		}
		break;
	case W_REFTABLE:
		if (!strcmp(ev->name, "tables.list"))
			w->refs = true;
		break;
	case W_REFS:
		if ((ev->mask & IN_ISDIR) && (ev->mask & (IN_CREATE |
		    IN_MOVED_TO))) {
			char path[4096];

			/* Find the directory's path again: rescan refs. */
			snprintf(path, sizeof(path), "%s/refs",
			    w->repo->commondir);
			watch_refs(w, path, 0);
		}
		/*
		 * A lock git takes, writes and removes is no ref (no ref name
		 * ends in .lock: git-check-ref-format(1)); what it does is
		 * seen when the lock is renamed to the ref's name, or the ref
		 * is deleted. Reloading 6 000 loose refs for the lock's
		 * events, too, tripled the cost of one update.
		 */
		if (!(ev->mask & IN_ISDIR) && ev->len && has_suffix(ev->name,
		    ".lock"))
			break;
		w->refs = true;
		break;
	case W_NONE:
	case W_STALE:
		break;
	}
}

/* Read every queued event; false when stopped. */
static bool
collect(struct watch *w)
{
	char buf[64 * 1024] __attribute__((aligned(8)));
	struct pollfd pfd[2] = {
		{ .fd = w->ifd, .events = POLLIN },
		{ .fd = w->stopfd, .events = POLLIN },
	};

	if (poll(pfd, 2, -1) < 0)
		return errno == EINTR;
	if (pfd[1].revents)
		return false;
	for (;;) {
		ssize_t n = read(w->ifd, buf, sizeof(buf));

		if (n <= 0)
			break;
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)p;

			on_event(w, ev);
			p += sizeof(*ev) + ev->len;
		}
	}
	return true;
}

/* The objects' part of publish(): one snapshot for the batch. */
static int
publish_objects(struct watch *w)
{
	struct snapshot_change *c = &w->change;
	bool alternates = w->alternates;
	int ret = 0;

	/*
	 * New object directories: learn them and watch them before the
	 * snapshot that shows them, or what lands there meanwhile is missed.
	 */
	if (alternates && !w->poll_seconds)
		ret = odb_reload_alternates(w->odb);
	if ((alternates || c->full) && !w->poll_seconds) {
		/*
		 * Watches first, then a full scan that reads the alternates
		 * again, so nothing falls between.
		 */
		if ((ret = setup(w)) < 0)
			log_msg(LOGL_ERROR, "watching %s: %s", w->ndirs ?
			    w->dirs[0] : "objects", strerror(-ret));
		c->full = true;
		alternates = true;
	}
	if (ret == 0)
		ret = odb_update(w->odb, c, alternates);
	if (ret == 0 && w->alternates)
		log_msg(LOGL_INFO, "%s: alternates changed: %zu object "
		    "directories", w->repo->commondir, w->repo->nobjdirs);
	if (ret < 0)
		log_msg(LOGL_ERROR, "%s: refreshing the object database: %s",
		    w->repo->commondir, strerror(-ret));
	c->full = c->packs = false;
	c->ntouched = 0;
	w->alternates = false;
	return ret;
}

/*
 * Publish what the batch of events changed: objects first, then the
 * references, so that a ref never names an object not yet visible (git
 * writes the objects before the ref that points to them).
 */
static void
publish(struct watch *w)
{
	struct snapshot_change *c = &w->change;
	bool alternates = w->alternates;
	bool graph = w->graph || c->full || alternates;
	int ret, gret;

	if (c->full || c->packs || c->ntouched || alternates)
		ret = publish_objects(w);
	else
		ret = 0;
	/*
	 * After the objects it names, before the refs, so that listing
	 * commits walks from the new refs down to the new graph.
	 */
	w->graph = false;
	if (graph && (gret = odb_graph_reload(w->odb)) < 0)
		log_msg(LOGL_ERROR, "%s: reading the commit-graph: %s",
		    w->repo->commondir, strerror(-gret));
	if (w->refs) {
		int rret;

		w->refs = false;
		if ((rret = odb_refs_reload(w->odb)) < 0)
			log_msg(LOGL_ERROR, "%s: reading references: %s",
			    w->repo->commondir, strerror(-rret));
	}
	if (ret == 0 && w->published)
		w->published(w->ctx);
}

/* A hash of what the object directories look like, for poll mode. */
static uint64_t
signature(struct watch *w)
{
	XXH3_state_t *st = XXH3_createState();
	char path[4096];
	uint64_t h;

	XXH3_64bits_reset(st);
	for (size_t d = 0; d < w->ndirs; d++)
		for (int i = -3; i < 256; i++) {
			struct stat sb = { 0 };

			if (i == -3)
				snprintf(path, sizeof(path), "%s", w->dirs[d]);
			else if (i == -2)
				snprintf(path, sizeof(path), "%s/pack",
				    w->dirs[d]);
			else if (i == -1)
				snprintf(path, sizeof(path),
				    "%s/info/alternates", w->dirs[d]);
			else
				snprintf(path, sizeof(path), "%s/%02x",
				    w->dirs[d], (unsigned)i);
			if (stat(path, &sb) < 0)
				memset(&sb, 0, sizeof(sb));
			XXH3_64bits_update(st, &sb.st_ino, sizeof(sb.st_ino));
			XXH3_64bits_update(st, &sb.st_size,
			    sizeof(sb.st_size));
			XXH3_64bits_update(st, &sb.st_mtim,
			    sizeof(sb.st_mtim));
			XXH3_64bits_update(st, &sb.st_ctim,
			    sizeof(sb.st_ctim));
		}
	h = XXH3_64bits_digest(st);
	XXH3_freeState(st);
	return h;
}

/*
 * A watch's own thread: in poll mode, a signature every poll_seconds and
 * a publication; else inotify batches (collect()), each published.
 */
static void *
watch_loop(void *arg)
{
	struct watch *w = arg;

	if (w->poll_seconds) {
		struct pollfd pfd = { .fd = w->stopfd, .events = POLLIN };

		while (poll(&pfd, 1, (int)w->poll_seconds * 1000) == 0) {
			uint64_t sig = signature(w);

			if (sig == w->signature) {
				/*
				 * Refs are cheap to read: no signature; the
				 * graph is reloaded only if its files moved.
				 */
				w->refs = true;
				w->graph = true;
				publish(w);
				continue;
			}
			w->signature = sig;
			w->alternates = true;	/* rescan all, alternates too */
			w->refs = true;
			publish(w);
			free_dirs(w);
			odb_objdirs(w->odb, &w->dirs, &w->ndirs);
		}
		return NULL;
	}
	while (collect(w))
		publish(w);
	return NULL;
}

/* Signals are the main thread's: see start(). */
static int
spawn(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int ret;

	/*
	 * Signals are the main thread's business (libfuse ends the session
	 * there): a SIGTERM taken by a watcher would only interrupt its
	 * poll(). So it starts with all of them blocked, as libfuse's own
	 * workers do; all but the ones a fault raises, which the kernel
	 * delivers to the faulting thread, killing the process if that
	 * thread blocks them: a SIGBUS from a file that shrank is the
	 * store's to handle (map.h).
	 */
	sigfillset(&all);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGILL);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = -pthread_create(thread, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

static int
start(struct odb *odb, struct watch_hub *hub, unsigned poll_seconds,
    watch_fn *published, void *ctx, struct watch **out)
{
	struct watch *w;
	int ret;

	*out = NULL;
	if (!(w = calloc(1, sizeof(*w))))
		return -ENOMEM;
	w->odb = odb;
	w->hub = hub;
	w->wds.size = sizeof(struct wentry);
	w->poll_seconds = poll_seconds;
	w->published = published;
	w->ctx = ctx;
	w->rawsz = odb_repo(odb)->rawsz;
	w->repo = odb_repo(odb);
	w->ifd = hub ? hub->ifd : -1;
	w->stopfd = -1;
	if (!hub && (w->stopfd = eventfd(0, EFD_CLOEXEC)) < 0) {
		free(w);
		return -errno;
	}
	if (hub) {
		struct watch **grown;

		pthread_mutex_lock(&hub->lock);
		if ((grown = realloc(hub->all, (hub->nall + 1) *
		    sizeof(*grown)))) {
			hub->all = grown;
			hub->all[hub->nall++] = w;
		}
		pthread_mutex_unlock(&hub->lock);
		if (!grown) {
			free(w);
			return -ENOMEM;
		}
	}
	ret = poll_seconds ? odb_objdirs(odb, &w->dirs, &w->ndirs) : setup(w);
	/*
	 * Anything that landed between odb_open() and the watches (or the
	 * first signature, which a change after it will not match).
	 */
	if (ret == 0 && poll_seconds)
		w->signature = signature(w);
	if (hub)
		pthread_mutex_lock(&hub->lock);
	w->refs = false;
	if (hub)
		pthread_mutex_unlock(&hub->lock);
	if (ret == 0)
		ret = odb_refresh(odb);
	if (ret == 0)
		ret = odb_refs_reload(odb);
	if (ret == 0 && !hub)
		ret = spawn(&w->thread, watch_loop, w);
	if (ret == 0) {
		*out = w;
		return 0;
	}
	watch_stop(w);
	return ret;
}

int
watch_start(struct odb *odb, unsigned poll_seconds, watch_fn *published,
    void *ctx, struct watch **out)
{
	return start(odb, NULL, poll_seconds, published, ctx, out);
}

int
watch_start_on(struct watch_hub *hub, struct odb *odb, watch_fn *published,
    void *ctx, struct watch **out)
{
	return start(odb, hub, 0, published, ctx, out);
}

/*
 * The hub's thread: each batch of events goes to the watches that own
 * their descriptors (on_event() with the lock held, as watch_start_on()
 * and setup() change the tables); then each watch that got any publishes,
 * without the lock (a publication calls the daemon back, which may wait
 * for lookups, which may be opening a repository), marked busy so that
 * watch_stop() waits for it.
 */
/* An event for w, on the hub's thread with its lock held. */
static void
hub_event(struct watch *w, const struct inotify_event *ev)
{
	w->in_event = true;
	on_event(w, ev);
	w->in_event = false;
	w->dirty = true;
}

static void *
hub_run(void *arg)
{
	struct watch_hub *h = arg;
	char buf[64 * 1024] __attribute__((aligned(8)));

	for (;;) {
		struct pollfd pfd[3] = {
			{ .fd = h->ifd, .events = POLLIN },
			{ .fd = h->stopfd, .events = POLLIN },
			{ .fd = h->kickfd, .events = POLLIN },
		};
		struct watch **dirty = NULL;
		struct owners *o;
		size_t ndirty = 0;
		uint64_t kicks;
		ssize_t n;

		if (poll(pfd, 3, -1) < 0 && errno != EINTR)
			break;
		if (pfd[1].revents)
			break;
		if (pfd[2].revents && read(h->kickfd, &kicks, sizeof(kicks)) <
		    0)
			continue;
		pthread_mutex_lock(&h->lock);
		while ((n = read(h->ifd, buf, sizeof(buf))) > 0)
			for (char *p = buf; p < buf + n;) {
				struct inotify_event *ev = (void *)p;

				p += sizeof(*ev) + ev->len;
				if (ev->mask & IN_Q_OVERFLOW) {
					for (size_t i = 0; i < h->nall; i++)
						hub_event(h->all[i], ev);
					continue;
				}
				if (ev->wd < 0 || !(o = wd_find(&h->by_wd,
				    ev->wd)))
					continue;
				for (size_t i = 0; i < o->n; i++)
					hub_event(o->v[i], ev);
				/* The kernel dropped it: no owner has it. */
				if (ev->mask & IN_IGNORED) {
					free(o->v);
					wd_del(&h->by_wd, ev->wd);
				}
			}
		if ((dirty = calloc(h->nall + 1, sizeof(*dirty))))
			for (size_t i = 0; i < h->nall; i++)
				if (h->all[i]->dirty) {
					h->all[i]->dirty = false;
					h->all[i]->busy++;
					dirty[ndirty++] = h->all[i];
				}
		pthread_mutex_unlock(&h->lock);
		for (size_t i = 0; i < ndirty; i++)
			publish(dirty[i]);
		pthread_mutex_lock(&h->lock);
		for (size_t i = 0; i < ndirty; i++)
			dirty[i]->busy--;
		pthread_cond_broadcast(&h->idle);
		pthread_mutex_unlock(&h->lock);
		free(dirty);
	}
	return NULL;
}

void
watch_kick(struct watch *w)
{
	uint64_t one = 1;

	if (!w || !w->hub)
		return;
	pthread_mutex_lock(&w->hub->lock);
	w->dirty = w->refs = true;
	pthread_mutex_unlock(&w->hub->lock);
	if (write(w->hub->kickfd, &one, sizeof(one)) < 0)
		log_msg(LOGL_WARN, "waking the watcher: %s", strerror(errno));
}

int
watch_hub_new(struct watch_hub **out)
{
	struct watch_hub *h;
	int ret;

	*out = NULL;
	if (!(h = calloc(1, sizeof(*h))))
		return -ENOMEM;
	h->stopfd = h->kickfd = -1;
	h->by_wd.size = sizeof(struct owners);
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->idle, NULL);
	if ((h->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0 ||
	    (h->stopfd = eventfd(0, EFD_CLOEXEC)) < 0 ||
	    (h->kickfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		ret = -errno;
		watch_hub_free(h);
		return ret;
	}
	if ((ret = spawn(&h->thread, hub_run, h)) < 0) {
		watch_hub_free(h);
		return ret;
	}
	h->running = true;
	*out = h;
	return 0;
}

void
watch_hub_free(struct watch_hub *h)
{
	uint64_t one = 1;

	if (!h)
		return;
	if (h->running && write(h->stopfd, &one, sizeof(one)) ==
	    sizeof(one))
		pthread_join(h->thread, NULL);
	if (h->ifd >= 0)
		close(h->ifd);
	if (h->stopfd >= 0)
		close(h->stopfd);
	if (h->kickfd >= 0)
		close(h->kickfd);
	for (size_t i = 0; i < h->by_wd.cap; i++)
		if (h->by_wd.keys[i] >= 0)
			free(((struct owners *)h->by_wd.vals)[i].v);
	wd_free(&h->by_wd);
	free(h->all);
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->idle);
	free(h);
}

void
watch_stop(struct watch *w)
{
	uint64_t one = 1;

	if (!w)
		return;
	if (w->hub) {
		struct watch_hub *h = w->hub;

		pthread_mutex_lock(&h->lock);
		for (size_t i = 0; i < h->nall; i++)
			if (h->all[i] == w) {
				h->all[i] = h->all[--h->nall];
				break;
			}
		for (size_t i = 0; i < w->wds.cap; i++)
			if (w->wds.keys[i] >= 0 &&
			    wentry_at(w, i)->kind != W_NONE)
				disown_locked(h, w->wds.keys[i], w);
		/* Its publication under way ends first. */
		while (w->busy)
			pthread_cond_wait(&h->idle, &h->lock);
		pthread_mutex_unlock(&h->lock);
		w->ifd = -1;	/* the hub's */
	}
	if (w->thread) {
		if (write(w->stopfd, &one, sizeof(one)) < 0)
			log_msg(LOGL_WARN, "stopping the watcher: %s",
			    strerror(errno));
		pthread_join(w->thread, NULL);
	}
	if (w->stopfd >= 0)
		close(w->stopfd);
	if (w->ifd >= 0)
		close(w->ifd);
	wd_free(&w->wds);
	free(w->change.touched);
	free_dirs(w);
	free(w);
}
