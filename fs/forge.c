/*
 * forge: a mount of every repository under a root (see forge.h).
 *
 *   forge_open()           store/scan.c's scan_root(): what is listed
 *   group_find/_list()     NODE_GROUP: a group's groups and repositories,
 *                          from the scan; a repository's directory is a
 *                          NODE_ROOT made in its own numbering
 *   forge_hold()           the repository's struct odbfs: its table entry
 *     repo_open()          odb_open(), reflinks, a watcher: as main.c
 *                          does for a single mount
 *     evict_locked()       past max_open, the least recently used that
 *                          nothing holds, closed once the lock is let go
 *   run()                  the forge's watcher: inotify on every group;
 *                          on a change, a new scan, published, and the
 *                          kernel's entries of what went dropped
 *
 * A repository's entry in the table lives as long as the mount, so that
 * its number, which its nodes carry, always means it; what an open
 * repository holds (struct live) is let go when it is closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "forge.h"
#include "odbstore/scan.h"
#include "odbstore/log.h"
#include "odbstore/repo.h"
#include "odbstore/watch.h"
#include "owner.h"
#include "readers.h"
#include "reflinks.h"
#include "stats.h"
#include "treecache.h"
#include "trim.h"
#include "view.h"

/* An open repository: what closing it lets go. */
struct live {
	struct odbfs fs;
	struct watch *watch;
	struct live *next;	/* on the forge's list to close */
	struct forge_fs *forge;
	int wds[2];		/* watch_repo()'s, or -1 */
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
	dev_t dev;		/* of the git directory it opened */
	ino_t ino;
	bool failed;		/* its open failed (logged): absent */
	uint64_t print;		/* ...and how it looked then (fail_print()) */
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
	struct live *closing;		/* for run() to close */
	dev_t self;			/* the mount's device, once run() knows */
	_Atomic int ifd;		/* run()'s inotify instance, or -1 */
	pthread_mutex_t wds_lock;	/* protects rwds */
	int *rwds;			/* watch_repo()'s descriptors */
	size_t nrwds, rwdcap;
	bool tell;			/* some frepo's tell is set */
	_Atomic uint64_t own[STAT_NR];	/* the root's and groups' counts */

	struct watch_hub *hub;		/* every repository's watches */
	struct odb_cache *cache;	/* every repository's delta bases */
	pthread_t thread;		/* run() */
	bool running;
	int stopfd;
	int wakefd;			/* run(): something to close or tell */
};

static uint64_t
path_seed(const char *path)
{
	return XXH3_64bits(path, strlen(path));
}

/* n bytes from f's pool, zeroed; NULL when out of memory. */
static void *
pool_alloc_locked(struct forge_fs *f, size_t n)
{
	const size_t room = POOL_BLOCK - offsetof(struct pool, data);
	struct pool *p = f->pool;
	void *v;

	n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) *
	    sizeof(max_align_t);
	if (n > room)
		return NULL;
	if (!p || p->used + n > room) {
		if (!(p = malloc(POOL_BLOCK)))
			return NULL;
		p->next = f->pool;
		p->used = 0;
		f->pool = p;
	}
	v = (char *)p->data + p->used;
	p->used += n;
	return memset(v, 0, n);
}

static char *
pool_strdup_locked(struct forge_fs *f, const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = pool_alloc_locked(f, n);

	return d ? memcpy(d, s, n) : NULL;
}

/*
 * The table entry of path, made if missing and make (with gitdir and the
 * time epoch); NULL otherwise.
 */
static struct frepo *
entry_locked(struct forge_fs *f, const char *path, const char *gitdir,
    int64_t epoch, bool make, uint32_t *index)
{
	uint64_t h = path_seed(path);
	size_t s = (size_t)h & (f->nslots - 1);
	struct frepo *r;

	for (; f->nslots && f->slots[s]; s = (s + 1) & (f->nslots - 1))
		if (!strcmp(f->v[f->slots[s] - 1]->path, path)) {
			*index = f->slots[s];
			return f->v[f->slots[s] - 1];
		}
	if (!make)
		return NULL;
	if (f->n == f->alloc || 2 * (f->n + 1) > f->nslots) {
		size_t na = f->alloc ? 2 * f->alloc : 64;
		struct frepo **grown = realloc(f->v, na * sizeof(*grown));
		uint32_t *slots;

		if (!grown)
			return NULL;
		f->v = grown;
		f->alloc = na;
		if (!(slots = calloc(2 * na, sizeof(*slots))))
			return NULL;
		free(f->slots);
		f->slots = slots;
		f->nslots = 2 * na;
		for (size_t i = 0; i < f->n; i++) {
			s = (size_t)f->v[i]->seed & (f->nslots - 1);
			while (f->slots[s])
				s = (s + 1) & (f->nslots - 1);
			f->slots[s] = (uint32_t)i + 1;
		}
		s = (size_t)h & (f->nslots - 1);
		while (f->slots[s])
			s = (s + 1) & (f->nslots - 1);
	}
	if (!(r = pool_alloc_locked(f, sizeof(*r))) ||
	    !(r->path = pool_strdup_locked(f, path)) ||
	    !(r->gitdir = pool_strdup_locked(f, gitdir)))
		return NULL;
	r->seed = h;
	r->epoch = epoch;
	f->v[f->n++] = r;
	f->slots[s] = (uint32_t)f->n;
	*index = (uint32_t)f->n;
	return r;
}

/*
 * An open repository's own directory (and its git directory, if another)
 * watched on run()'s instance for what says it may be a repository no
 * more (telling()): emptied and made a group, a work tree whose .git
 * went. That changes nothing in its group, whose watch would not see it.
 */
static void
watch_repo(struct forge_fs *f, struct live *l, const char *dir,
    const char *gitdir)
{
	const char *paths[2] = { dir, gitdir };
	int fd = atomic_load(&f->ifd), *grown;

	l->forge = f;
	l->wds[0] = l->wds[1] = -1;
	if (fd < 0)
		return;
	for (int i = 0; i < 2; i++) {
		if (i && !strcmp(dir, gitdir))
			break;
		l->wds[i] = inotify_add_watch(fd, paths[i], IN_DELETE |
		    IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF |
		    IN_ONLYDIR | IN_DONT_FOLLOW);
		if (l->wds[i] < 0)
			continue;
		pthread_mutex_lock(&f->wds_lock);
		if (f->nrwds == f->rwdcap && (grown = realloc(f->rwds,
		    (f->rwdcap = 2 * f->rwdcap + 8) * sizeof(*grown))))
			f->rwds = grown;
		if (f->nrwds < f->rwdcap)
			f->rwds[f->nrwds++] = l->wds[i];
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
			if (f->rwds[j] == l->wds[i]) {
				f->rwds[j] = f->rwds[--f->nrwds];
				break;
			}
		pthread_mutex_unlock(&f->wds_lock);
		inotify_rm_watch(atomic_load(&f->ifd), l->wds[i]);
	}
}

/* Let go of an open repository, with no lock held. */
static void
live_close(struct live *l)
{
	if (!l)
		return;
	unwatch_repo(l);
	watch_stop(l->watch);
	/*
	 * Closed, nothing watches its refs: the kernel would keep the links
	 * of HEAD and refs/ it has (a ref moved meanwhile stayed the old one
	 * until some operation opened the repository again). They go now;
	 * what is under an id never changes and stays.
	 */
	node_enter(l->fs.repo, l->fs.seed);
	view_drop_entry(&l->fs, "", "HEAD");
	view_drop_entry(&l->fs, "", "refs");
	node_enter(0, 0);
	readers_drop(l->fs.odb);
	treecache_forget(l->fs.odb);
	reflinks_free(&l->fs);
	odb_close(l->fs.odb);
	free(l);
}

/*
 * Hash into *h how path looks to lstat(2) (zeros for none): which entry
 * it is, its owner and mode, and unless only those, its size and times.
 */
static void
print_path(uint64_t *h, const char *path, bool only_owner)
{
	struct stat st;
	struct {
		uint64_t dev, ino, size, mode, uid, gid;
		struct timespec mtim, ctim;
	} key = { 0 };

	/* Fields one by one: no padding of struct stat is hashed. */
	if (lstat(path, &st) == 0) {
		key.dev = st.st_dev;
		key.ino = st.st_ino;
		key.mode = st.st_mode;
		key.uid = st.st_uid;
		key.gid = st.st_gid;
		if (!only_owner) {
			key.size = (uint64_t)st.st_size;
			key.mtim = st.st_mtim;
			key.ctim = st.st_ctim;
		}
	}
	*h = XXH3_64bits_withSeed(&key, sizeof(key), *h);
}

/*
 * How a repository that failed to open looks, hashed: each directory
 * from the root down to it, its .git, and in its git directory the
 * entries an open reads or weighs (owner_of_repo(), odb_open()), the
 * fan-out directories there included, as lstat(2) sees them. A rescan
 * tries it again only if this changed (a chmod, a fix, a file put back):
 * else it would come back into listings at every change in the root,
 * and fail again at the next lookup.
 */
static uint64_t
fail_print(const char *root, const char *rel, const char *gitdir)
{
	static const char *const rels[] = { "", "/HEAD", "/config",
	    "/commondir", "/objects", "/objects/info",
	    "/objects/info/alternates", "/objects/pack", "/refs",
	    "/refs/heads", "/refs/tags", "/reftable", "/packed-refs" };
	char path[PATH_MAX];
	uint64_t have[4], h = 0;

	/*
	 * The root and each group down, by owner and mode only: a group
	 * changes with every repository made in it, which is no reason.
	 * Then the repository and its .git, whole.
	 */
	print_path(&h, root, true);
	for (size_t at = 0; rel[at]; at++) {
		if (rel[at + 1] && rel[at + 1] != '/')
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%.*s", root,
		    (int)(at + 1), rel) < sizeof(path))
			print_path(&h, path, rel[at + 1] != '\0');
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/%s/.git", root, rel) <
	    sizeof(path))
		print_path(&h, path, false);
	for (size_t i = 0; i < sizeof(rels) / sizeof(*rels); i++)
		if ((size_t)snprintf(path, sizeof(path), "%s%s", gitdir,
		    rels[i]) < sizeof(path))
			print_path(&h, path, false);
	if ((size_t)snprintf(path, sizeof(path), "%s/objects", gitdir) >=
	    sizeof(path))
		return h;
	repo_fanouts(path, have);
	for (unsigned b = 0; b < 256; b++)
		if (repo_fanout_has(have, b) && (size_t)snprintf(path,
		    sizeof(path), "%s/objects/%02x", gitdir, b) < sizeof(path))
			print_path(&h, path, false);
	return h;
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
 * Open repository r (number index) as main.c opens one, unlocked: the
 * table's lock is not held, r->opening is. Its git directory's device and
 * inode in *st. -errno, logged once.
 */
static int
repo_open(struct forge_fs *f, struct frepo *r, uint32_t index,
    struct live **out, struct stat *st)
{
	struct live *l = NULL;
	const char *why;
	int ret = -EACCES;

	*out = NULL;
	if ((why = not_ours(f, r)))
		goto fail;
	why = "out of memory";
	ret = -ENOMEM;
	if (stat(r->gitdir, st) < 0)
		st->st_dev = st->st_ino = 0;
	if (!(l = calloc(1, sizeof(*l))))
		goto fail;
	l->fs = *f->top;
	l->fs.shown = NULL;
	l->fs.repo = index;
	l->fs.seed = r->seed;
	l->fs.epoch = r->epoch;
	l->fs.counters = r->stats;
	if ((ret = odb_open_shared(r->gitdir, f->cache, &l->fs.odb, &why)) < 0)
		goto fail;
	l->fs.rawsz = odb_rawsz(l->fs.odb);
	odb_set_verify(l->fs.odb, f->opts.verify);
	odb_set_frozen(l->fs.odb, f->opts.refresh < 0);
	for (unsigned b = 0; b < 256; b++)
		l->fs.prefixes[b] = odb_has_prefix(l->fs.odb, b);
	why = "out of memory";
	/*
	 * Opened again: the kernel may keep links of its refs from before,
	 * which no watcher dropped while it was closed. Its first publication
	 * (a kick, below) drops every one.
	 */
	if ((ret = reflinks_init(&l->fs, !r->opened)) < 0)
		goto fail;
	/*
	 * On the forge's hub: one inotify instance for all (a user has 128
	 * on Debian); polling, or without a hub, a thread each. One that
	 * cannot watch is served as it is now, which is still right, and
	 * says so once.
	 */
	if (f->hub)
		ret = watch_start_on(f->hub, l->fs.odb, f->opts.published,
		    &l->fs, &l->watch);
	else if (f->opts.refresh >= 0)
		ret = watch_start(l->fs.odb, (unsigned)f->opts.refresh,
		    f->opts.published, &l->fs, &l->watch);
	if (ret < 0)
		log_once(LOGL_WARN, "%s: cannot watch for changes: %s: served "
		    "as it is now until it is opened again", r->path,
		    strerror(-ret));
	else if (r->opened)
		watch_kick(l->watch);
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
	if (l) {
		reflinks_free(&l->fs);
		odb_close(l->fs.odb);
	}
	free(l);
	return ret;
}

/*
 * Past max_open, put the least recently used open repository that nothing
 * holds on the list to close (or, at any count, one no longer under the
 * root, after a rescan found one). A scan of the table, some 10 us over
 * 10 000: only when there is one to close. True when one was put there:
 * the caller wakes run() once it has let go of the lock. Operations never
 * close a repository themselves: closing joins its watcher, which may be
 * waiting for a lookup to end (reflinks.c).
 */
static bool
evict_locked(struct forge_fs *f)
{
	struct frepo *lru = NULL;
	struct live *l;

	if (f->nopen <= f->opts.max_open && !f->sweep)
		return false;
	for (size_t i = 0; i < f->n && (!lru || !(lru->gone || lru->replaced));
	    i++) {
		struct frepo *r = f->v[i];

		/* One no longer under the root goes first, at any count. */
		if (r->live && !r->held && (!lru || r->gone || r->replaced ||
		    r->used < lru->used))
			lru = r;
	}
	if (!lru || !(lru->gone || lru->replaced))
		f->sweep = false;
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

/* Have run() close what is on the list, and tell what failed. */
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
	struct stat st;
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
		print = fail_print(f->root, r->path, r->gitdir);
		ret = repo_open(f, r, repo, &l, &st);
		pthread_mutex_lock(&f->lock);
		r->opening = false;
		if (ret < 0) {
			/* Absent from now on: its entry too, once run() can. */
			r->failed = r->tell = f->tell = woke = true;
			r->print = print;
			f->nfailed++;
		} else {
			r->live = l;
			r->opened = true;
			r->dev = st.st_dev;
			r->ino = st.st_ino;
			f->nopen++;
		}
		pthread_cond_broadcast(&f->opened);
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

/* Is path (not "") a group: some repository's path begins path + '/'? */
static const char *
repo_path(const void *v, size_t i)
{
	return ((const struct scan_repo *)v)[i].path;
}

static bool
is_group(const struct scan *s, const char *path)
{
	return view_names_under(s->repos, s->nrepos, repo_path, path);
}

/* A repository's directory: its root, in its own numbering. */
static int
repo_dir(struct odbfs *fs, const struct scan_repo *fr, struct node **out)
{
	struct forge_fs *f = fs->forge;
	struct frepo *r;
	uint32_t index;
	struct node *n;
	uint64_t seed;
	int64_t epoch;

	struct statx stx;
	bool bad;

	for (int make = 0; make < 2; make++) {
		/*
		 * Its time, the git directory's birth, when it is first met:
		 * looked at without the lock, which a slow or hung file
		 * system under the root must not hold.
		 */
		epoch = f->top->epoch;
		if (make && statx(AT_FDCWD, fr->gitdir, 0, STATX_BTIME,
		    &stx) == 0 && (stx.stx_mask & STATX_BTIME))
			epoch = stx.stx_btime.tv_sec;
		pthread_mutex_lock(&f->lock);
		if ((r = entry_locked(f, fr->path, fr->gitdir, epoch, make,
		    &index))) {
			seed = r->seed;
			epoch = r->epoch;
			bad = r->failed;
		}
		pthread_mutex_unlock(&f->lock);
		if (r)
			break;
	}
	if (!r)
		return -ENOMEM;
	if (bad)
		return -ENOENT;
	node_enter(index, seed);
	n = view_new_dir(&view_root_kind, "", epoch);
	node_enter(0, 0);
	return view_intern(n, out);
}

static int
group_find(struct odbfs *fs, struct node *dir, const char *name,
    struct node **out)
{
	struct forge_fs *f = fs->forge;
	const struct scan_repo *fr;
	char path[KEY_MAX];
	int ret = -ENOENT;

	if (!view_child_path(dir, name, path, sizeof(path)))
		return -ENOENT;
	pthread_rwlock_rdlock(&f->scan_lock);
	if ((fr = scan_find(f->scan, path)))
		ret = repo_dir(fs, fr, out);
	else if (is_group(f->scan, path))
		ret = view_intern(view_new_dir(&view_group_kind, path,
		    NODE_TIME_REPO), out);
	pthread_rwlock_unlock(&f->scan_lock);
	return ret;
}

void
forge_count(const struct odbfs *top, size_t *repos, size_t *open)
{
	struct forge_fs *f = top->forge;

	pthread_rwlock_rdlock(&f->scan_lock);
	*repos = f->scan->nrepos;
	pthread_rwlock_unlock(&f->scan_lock);
	pthread_mutex_lock(&f->lock);
	/* Those that failed are not listed: not counted either. */
	*repos -= f->nfailed < *repos ? f->nfailed : *repos;
	*open = f->nopen;
	pthread_mutex_unlock(&f->lock);
}

void
forge_each(const struct odbfs *top, void (*fn)(void *arg,
    const char *gitdir, const _Atomic uint64_t *counters, struct odb *odb),
    void *arg)
{
	struct forge_fs *f = top->forge;
	struct frepo *r;

	pthread_mutex_lock(&f->lock);
	fn(arg, NULL, f->own, NULL);
	for (size_t i = 0; i < f->n; i++)
		if (!(r = f->v[i])->failed && !r->gone)
			fn(arg, r->gitdir, r->stats,
			    r->live ? r->live->fs.odb : NULL);
	pthread_mutex_unlock(&f->lock);
}

const char *
forge_root(const struct odbfs *top)
{
	/* Set once by scan_root() from the root: the same in every scan. */
	return top->forge->root;
}

/* Has the repository at path failed to open? */
static bool
failed(struct forge_fs *f, const char *path)
{
	uint32_t index;
	struct frepo *r;
	bool yes;

	pthread_mutex_lock(&f->lock);
	yes = (r = entry_locked(f, path, "", 0, false, &index)) && r->failed;
	pthread_mutex_unlock(&f->lock);
	return yes;
}

static int
group_list(struct odbfs *fs, struct node *dir, struct dirlist *l)
{
	struct forge_fs *f = fs->forge;
	const struct scan *s;
	size_t plen = strlen(dir->path);
	char last[KEY_MAX] = "";
	int ret = 0;

	pthread_rwlock_rdlock(&f->scan_lock);
	s = f->scan;
	for (size_t i = 0; i < s->nrepos && ret == 0; i++) {
		const char *p = s->repos[i].path, *name, *slash;
		unsigned char key[KEY_MAX];
		char child[KEY_MAX];
		size_t len;

		if (plen && (strncmp(p, dir->path, plen) || p[plen] != '/'))
			continue;
		name = p + (plen ? plen + 1 : 0);
		slash = strchr(name, '/');
		len = slash ? (size_t)(slash - name) : strlen(name);
		if (len >= sizeof(last) || (!strncmp(last, name, len) &&
		    !last[len]))
			continue;
		memcpy(last, name, len);
		last[len] = '\0';
		/* The root's own .odbfs/ hides one of that name. */
		if (!plen && !fs->nometa && !strcmp(last, ".odbfs")) {
			log_once(LOGL_WARN, "%s/.odbfs: hidden by the mount's own "
			    ".odbfs/ (-o nometa shows it)", f->root);
			continue;
		}
		if (!slash) {
			/* A repository: its root's key in its numbering. */
			if (failed(f, p))
				continue;
			node_enter(0, path_seed(p));
			len = view_dir_key(key, "");
			ret = dirlist_add(l, last, true, S_IFDIR, node_ino(key,
			    len));
			node_enter(0, 0);
		} else if (view_child_path(dir, last, child, sizeof(child))) {
			ret = dirlist_add(l, last, true, S_IFDIR,
			    node_ino(key, view_dir_key(key, child)));
		}
	}
	pthread_rwlock_unlock(&f->scan_lock);
	return ret;
}

/* The root's .odbfs/: the mount's own, absent with -o nometa. */
static size_t
top_meta_key(struct odbfs *fs, const struct node *dir, const char *name,
    unsigned char *key)
{
	return dir->path[0] ? 0 : view_meta_key(fs, dir, name, key);
}

static const struct view_fixed group_fixed[] = {
	{ ".odbfs", S_IFDIR, NODE_META, top_meta_key, view_make_dir,
	    &view_meta_kind },
};

/* What is under the root comes and goes: a miss is never cached. */
const struct view_kind view_group_kind = {
	.name = "group",
	.node = NODE_GROUP,
	.mode = NODE_MODE_DIR,
	.negative = 0,
	VIEW_FIXED_INIT(group_fixed),
	.find = group_find,
	.list = group_list,
};

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

/* Watch every group of s on fd: -errno if none could be. */
static void
watch_groups(int fd, const struct scan *s)
{
	char path[8192];

	for (size_t i = 0; i < s->ndirs; i++) {
		const char *rel = scan_dir_path(s, i);

		snprintf(path, sizeof(path), "%s%s%s", s->root, *rel ? "/" :
		    "", rel);
		if (inotify_add_watch(fd, path, IN_CREATE | IN_DELETE |
		    IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_ONLYDIR |
		    IN_DONT_FOLLOW | IN_DELETE_SELF | IN_MOVE_SELF) < 0)
			log_once(LOGL_WARN, "%s: cannot watch: %s: new "
			    "repositories show at the next change above it",
			    path, strerror(errno));
	}
}

/* Drop the entry of path (a repository's or a group's) in its parent. */
static void
drop_path(struct forge_fs *f, const char *rel)
{
	char path[KEY_MAX], *slash;

	if (strlen(rel) >= sizeof(path))
		return;
	strcpy(path, rel);
	if ((slash = strrchr(path, '/'))) {
		*slash = '\0';
		view_drop_entry(f->top, path, slash + 1);
	} else {
		view_drop_entry(f->top, "", path);
	}
}

/*
 * Drop the kernel's entries that the scan now says otherwise of: each
 * repository of old's that is none now, at the highest level it went
 * (a group emptied goes whole), and each of now's that was none before
 * (a group turned repository, whose entry said directory of groups).
 */
static void
drop_changed(struct forge_fs *f, const struct scan *old,
    const struct scan *now)
{
	for (size_t i = 0; i < old->nrepos; i++) {
		char path[KEY_MAX], *slash;

		if (scan_find(now, old->repos[i].path) ||
		    strlen(old->repos[i].path) >= sizeof(path))
			continue;
		strcpy(path, old->repos[i].path);
		/* Up while the parent is gone too. */
		while ((slash = strrchr(path, '/'))) {
			*slash = '\0';
			if (is_group(now, path) || scan_find(now, path)) {
				*slash = '/';
				break;
			}
		}
		drop_path(f, path);
	}
	for (size_t i = 0; i < now->nrepos; i++)
		if (!scan_find(old, now->repos[i].path))
			drop_path(f, now->repos[i].path);
}

/*
 * What rescan() learns of a table entry without the table's lock: stat()
 * of its git directory, and of what a failed one was opened from. A slow
 * or hung file system under the root holds only the forge's thread.
 */
struct look {
	const char *gitdir;	/* where the new scan finds it, or NULL */
	const char *failed;	/* its own git directory, if it failed */
	const char *path;	/* ...and its path from the root */
	bool seen;		/* open or opened, when looked at */
	bool found;		/* gitdir is there: dev, ino */
	dev_t dev;
	ino_t ino;
	uint64_t print;		/* fail_print(failed) */
};

/* The looks for the first *n entries of the table, as now scanned. */
static struct look *
look_all(struct forge_fs *f, const struct scan *now, size_t *n)
{
	struct look *v;
	struct stat st;

	pthread_mutex_lock(&f->lock);
	*n = f->n;
	/* Strings from the scan and the table's pool: they stay put. */
	if ((v = calloc(*n + 1, sizeof(*v))))
		for (size_t i = 0; i < *n; i++) {
			const struct frepo *r = f->v[i];
			const struct scan_repo *fr = scan_find(now, r->path);

			v[i].seen = r->live || r->opened;
			v[i].gitdir = fr && v[i].seen ? fr->gitdir : NULL;
			v[i].failed = r->failed ? r->gitdir : NULL;
			v[i].path = r->path;
		}
	pthread_mutex_unlock(&f->lock);
	for (size_t i = 0; v && i < *n; i++) {
		if (v[i].gitdir && stat(v[i].gitdir, &st) == 0) {
			v[i].found = true;
			v[i].dev = st.st_dev;
			v[i].ino = st.st_ino;
		}
		if (v[i].failed)
			v[i].print = fail_print(f->root, v[i].path,
			    v[i].failed);
	}
	return v;
}

/* Scan again, publish, mark and drop what went. */
static void
rescan(struct forge_fs *f)
{
	struct scan *now, *old;
	struct live **closing = NULL;
	struct look *looks;
	char **replaced = NULL;
	size_t nclosing = 0, nreplaced = 0, nfailed = 0, nlooks;
	int ret;

	if ((ret = scan_root(f->root, f->self, &now)) < 0) {
		/*
		 * The root itself gone (removed, renamed away): nothing is
		 * under it now. Its parent's watch sees one come back.
		 */
		if ((ret != -ENOENT && ret != -ENOTDIR) ||
		    !(now = calloc(1, sizeof(*now))) ||
		    !(now->root = strdup(f->root))) {
			free(now);
			return;
		}
	}
	pthread_rwlock_wrlock(&f->scan_lock);
	old = f->scan;
	f->scan = now;
	pthread_rwlock_unlock(&f->scan_lock);
	looks = look_all(f, now, &nlooks);
	pthread_mutex_lock(&f->lock);
	if (looks) {
		closing = calloc(f->n + 1, sizeof(*closing));
		replaced = calloc(f->n + 1, sizeof(*replaced));
	}
	for (size_t i = 0; i < f->n; i++) {
		struct frepo *r = f->v[i];
		const struct scan_repo *fr = scan_find(now, r->path);
		/*
		 * Closed ones too (those opened once: the kernel may keep
		 * their objects' entries, for a day): another repository
		 * put in a closed one's place must not be served its ids.
		 * One opened since it was looked at is taken as it is.
		 */
		bool seen = i < nlooks && looks[i].seen;
		const struct look *k = seen ? &looks[i] : NULL;
		/* Another git directory, or another at the same place. */
		bool moved = fr && (strcmp(fr->gitdir, r->gitdir) || (k &&
		    (!k->found || k->dev != r->dev || k->ino != r->ino)));
		char *g;

		if (moved && seen && replaced &&
		    (replaced[nreplaced] = strdup(r->path)))
			nreplaced++;
		if (moved && k && k->found && !r->live) {
			r->dev = k->dev;	/* dropped once, not each rescan */
			r->ino = k->ino;
		}
		r->replaced |= moved && r->live;
		f->sweep |= moved && r->live;

		r->gone = !fr;
		f->sweep |= r->gone && r->live;
		/*
		 * One that failed is tried again once it is another, or
		 * what it was opened from changed (a fix, a chmod).
		 */
		if (r->failed && (moved || (i < nlooks && looks[i].failed &&
		    looks[i].print != r->print)))
			r->failed = false;
		nfailed += r->failed && !r->gone;
		/*
		 * Gone, or another repository at its path: closed now, or
		 * when what holds it lets go (evict_locked()).
		 */
		if ((r->gone || moved) && r->live && !r->held && closing) {
			closing[nclosing++] = r->live;
			r->live = NULL;
			r->replaced = false;
			f->nopen--;
		}
		if (moved && (g = pool_strdup_locked(f, fr->gitdir)))
			r->gitdir = g;
	}
	f->nfailed = nfailed;
	pthread_mutex_unlock(&f->lock);
	free(looks);
	node_enter(0, 0);
	drop_changed(f, old, now);
	for (size_t i = 0; i < nreplaced; i++) {
		drop_path(f, replaced[i]);
		free(replaced[i]);
	}
	free(replaced);
	for (size_t i = 0; i < nclosing; i++)
		live_close(closing[i]);
	free(closing);
	scan_free(old);
}

void
forge_shed(struct odbfs *top)
{
	if (top->forge)
		odb_cache_clear(top->forge->cache);
}

/* Close what operations put on the list (evict_locked()). */
static void
close_listed(struct forge_fs *f)
{
	struct live *l, *next;
	size_t n = 0;

	pthread_mutex_lock(&f->lock);
	l = f->closing;
	f->closing = NULL;
	pthread_mutex_unlock(&f->lock);
	for (; l; l = next) {
		next = l->next;
		live_close(l);
		n++;
	}
	/* A mount that touched 10 000 repositories costs what the open do. */
	trim_freed(n * TRIM_REPO);
}

/*
 * Drop the kernel's entry of each repository whose open failed, so that
 * its path, which a lookup no longer finds, goes too. Whether there was
 * one: then the root is searched again, for what it may be now (a group,
 * once gutted and filled with repositories; nothing, a work tree whose
 * .git went), which no group's change need have said.
 */
static bool
tell_failed(struct forge_fs *f)
{
	char **paths = NULL;
	size_t n = 0;

	pthread_mutex_lock(&f->lock);
	if (f->tell && (paths = calloc(f->n, sizeof(*paths))))
		for (size_t i = 0; i < f->n; i++)
			if (f->v[i]->tell) {
				f->v[i]->tell = false;
				paths[n++] = strdup(f->v[i]->path);
			}
	f->tell = false;
	pthread_mutex_unlock(&f->lock);
	node_enter(0, 0);
	for (size_t i = 0; i < n; i++) {
		if (paths[i])
			drop_path(f, paths[i]);
		free(paths[i]);
	}
	free(paths);
	return n > 0;
}

/*
 * The root's parent, for the root's own name only: a root removed and
 * made again (not a rename of its groups) is another directory, which no
 * watch of the old one sees. Its watch descriptor, or -1.
 */
static int
watch_parent(struct forge_fs *f, int fd)
{
	char *parent, *slash;
	int wd;

	if (!strcmp(f->root, "/") || !(parent = strdup(f->root)))
		return -1;
	slash = strrchr(parent, '/');
	slash[slash == parent] = '\0';
	wd = inotify_add_watch(fd, parent, IN_CREATE | IN_DELETE |
	    IN_MOVED_FROM | IN_MOVED_TO | IN_ONLYDIR);
	if (wd < 0)
		log_once(LOGL_WARN, "%s: cannot watch: %s: %s, if removed and "
		    "made again, shows at a remount", parent, strerror(errno),
		    f->root);
	free(parent);
	return wd;
}

/*
 * Whether the events in buf[0, len) are any but those of the root's
 * parent (parent_wd) about other names than the root's.
 */
static bool
relevant(struct forge_fs *f, const char *buf, size_t len, int parent_wd)
{
	static const char *const telling[] = { "HEAD", "objects", "refs",
	    ".git", "commondir" };
	const char *base = strrchr(f->root, '/') + 1, *name;
	struct inotify_event ev;
	bool repo;

	for (size_t at = 0; at + sizeof(ev) <= len; at += sizeof(ev) +
	    ev.len) {
		memcpy(&ev, buf + at, sizeof(ev));
		if (ev.mask & IN_Q_OVERFLOW)
			return true;
		/* A watch gone: what made it go was an event of its own. */
		if (ev.mask & IN_IGNORED)
			continue;
		/* The name is NUL-padded to ev.len. */
		name = ev.len && at + sizeof(ev) + ev.len <= len &&
		    strnlen(buf + at + sizeof(ev), ev.len) < ev.len ?
		    buf + at + sizeof(ev) : "";
		repo = false;
		pthread_mutex_lock(&f->wds_lock);
		for (size_t j = 0; j < f->nrwds && !repo; j++)
			repo = f->rwds[j] == ev.wd;
		pthread_mutex_unlock(&f->wds_lock);
		if (repo) {
			/* An open repository's: only what says it changed. */
			if (ev.mask & (IN_DELETE_SELF | IN_MOVE_SELF))
				return true;
			for (size_t i = 0; i < 5; i++)
				if (!strcmp(name, telling[i]))
					return true;
			continue;
		}
		if (ev.wd != parent_wd || !strcmp(name, base))
			return true;
	}
	return false;
}

/* A new inotify instance on every group of the scan; -1 if none. */
static int
watch_all(struct forge_fs *f)
{
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	if (fd < 0) {
		log_once(LOGL_ERROR, "%s: cannot watch for repositories that "
		    "come and go: %s", f->root, strerror(errno));
		return -1;
	}
	pthread_rwlock_rdlock(&f->scan_lock);
	watch_groups(fd, f->scan);
	pthread_rwlock_unlock(&f->scan_lock);
	return fd;
}

/* How long forge_close() waits for the forge's thread to stop. */
#define STOP_WAIT_S 2

/* CLOCK_MONOTONIC in milliseconds. */
static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Longest a burst of changes waits for its rescan: a search of 10 000
 * repositories takes some 300 ms, nine times that would be long to see a
 * new one in.
 */
#define SETTLE_MAX_MS 2000

/*
 * Read fd's events until none came for 20 ms and until (now_ms()) has
 * passed; whether any was relevant(). What operations ask meanwhile
 * (wakefd) is done; *stop when the mount ends.
 */
static bool
settle(struct forge_fs *f, int fd, int parent_wd, int64_t until,
    bool *stop)
{
	struct pollfd pfd[3] = {
		{ .fd = f->stopfd, .events = POLLIN },
		{ .fd = f->wakefd, .events = POLLIN },
		{ .fd = fd, .events = POLLIN },
	};
	/* Aligned for struct inotify_event, as inotify(7) does. */
	char buf[16384]
	    __attribute__((aligned(__alignof__(struct inotify_event))));
	bool changed = false;
	uint64_t count;
	int64_t wait;
	ssize_t got;
	int n;

	for (;;) {
		if (pfd[0].revents) {
			*stop = true;
			break;
		}
		if (pfd[1].revents && read(f->wakefd, &count,
		    sizeof(count)) == sizeof(count)) {
			close_listed(f);
			changed |= tell_failed(f);
		}
		while ((got = read(fd, buf, sizeof(buf))) > 0)
			changed |= relevant(f, buf, (size_t)got, parent_wd);
		wait = until - now_ms();
		wait = wait < 20 ? 20 : wait;
		if ((n = poll(pfd, 3, (int)wait)) == 0 ||
		    (n < 0 && errno != EINTR))
			break;
		if (n < 0)
			pfd[0].revents = pfd[1].revents = 0;
	}
	return changed;
}

/*
 * The device of the file system mounted last at mountpoint, from
 * /proc/self/mountinfo (a stat(2) of it could need the permission to
 * search the directories above it, which the user read as may not have);
 * 0 if none is found.
 */
static dev_t
mount_dev(const char *mountpoint)
{
	FILE *in = fopen("/proc/self/mountinfo", "re");
	char *line = NULL, at[PATH_MAX], *p, *q;
	unsigned maj, min;
	size_t cap = 0;
	dev_t dev = 0;

	if (!in)
		return 0;
	while (getline(&line, &cap, in) > 0) {
		if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &maj, &min, at) !=
		    3)
			continue;
		/* Spaces, tabs, newlines and backslashes come as \ooo. */
		for (p = q = at; *p; q++)
			if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' &&
			    p[2] >= '0' && p[2] <= '7' && p[3] >= '0' &&
			    p[3] <= '7') {
				*q = (char)((p[1] - '0') << 6 | (p[2] - '0') << 3 |
				    (p[3] - '0'));
				p += 4;
			} else {
				*q = *p++;
			}
		*q = '\0';
		if (!strcmp(at, mountpoint))
			dev = makedev(maj, min);
	}
	free(line);
	fclose(in);
	return dev;
}

/*
 * The forge's thread: blocks until a group changes (then scans again),
 * an operation put a repository to close or one failed to open, or the
 * mount ends.
 *
 * Repositories made one after another (a migration, a script) would cost
 * a search of the whole root each: 300 made in ten seconds in a root of
 * 2 000 kept this thread busy 56 % of the time. So after a search that
 * took t, changes are gathered for up to 9 t (at most SETTLE_MAX_MS)
 * before the next: searching takes a tenth of its time at most, and a
 * lone change is seen within 20 ms as before.
 */
static void *
run(void *arg)
{
	struct forge_fs *f = arg;
	/*
	 * Polling: groups looked at every N seconds, inotify or not, by the
	 * clock: what wakes the thread meanwhile does not put it off.
	 */
	int64_t every = f->opts.refresh > 0 ? f->opts.refresh * 1000 : -1;
	int64_t done = 0, cost = 0, start, due = now_ms() + every;
	bool stop = false;
	int fd, parent_wd, timeout;

	/* Before any search: the mount bound back under the root is not. */
	if (f->opts.mountpoint)
		f->self = mount_dev(f->opts.mountpoint);
	fd = f->opts.refresh >= 0 ? watch_all(f) : -1;
	parent_wd = fd >= 0 ? watch_parent(f, fd) : -1;
	atomic_store(&f->ifd, fd);

	while (!stop) {
		struct pollfd pfd[3] = {
			{ .fd = f->stopfd, .events = POLLIN },
			{ .fd = f->wakefd, .events = POLLIN },
			{ .fd = fd, .events = POLLIN },
		};
		bool changed = false;
		uint64_t count;
		int n;

		timeout = every < 0 ? -1 : due <= now_ms() ? 0 :
		    (int)(due - now_ms());
		if ((n = poll(pfd, 3, timeout)) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents)
			break;
		if (pfd[1].revents && read(f->wakefd, &count,
		    sizeof(count)) == sizeof(count)) {
			close_listed(f);
			/* Not with refresh=never: nothing is searched again. */
			changed = tell_failed(f) && fd >= 0;
		}
		if (every > 0 && now_ms() >= due) {
			due = now_ms() + every;
			pthread_rwlock_rdlock(&f->scan_lock);
			changed |= scan_changed(f->scan);
			pthread_rwlock_unlock(&f->scan_lock);
		}
		if (fd >= 0 && (pfd[2].revents || changed)) {
			int64_t hold = 9 * cost < SETTLE_MAX_MS ? 9 * cost :
			    SETTLE_MAX_MS;

			/* The batch, then what follows it. */
			changed |= settle(f, fd, parent_wd, done + hold, &stop);
		}
		if (!changed || stop)
			continue;
		start = now_ms();
		rescan(f);
		/*
		 * Watch the groups that came; those that went the kernel
		 * dropped itself, and the others' watches stay what they are.
		 */
		if (fd >= 0) {
			pthread_rwlock_rdlock(&f->scan_lock);
			watch_groups(fd, f->scan);
			pthread_rwlock_unlock(&f->scan_lock);
		}
		/* What changed while the watches were away. */
		if (scan_changed(f->scan))
			rescan(f);
		done = now_ms();
		cost = done - start;
	}
	atomic_store(&f->ifd, -1);
	if (fd >= 0)
		close(fd);
	return NULL;
}

int
forge_run(struct odbfs *top)
{
	struct forge_fs *f = top->forge;
	int ret;

	/* inotify mode: the repositories' watches share one instance. */
	if (f->opts.refresh == 0 && (ret = watch_hub_new(&f->hub)) <
	    0)
		log_msg(LOGL_WARN, "%s: cannot watch repositories together: "
		    "%s: a thread and an inotify instance each", f->root,
		    strerror(-ret));
	if ((ret = pthread_create(&f->thread, NULL, run, f)) != 0)
		return -ret;
	f->running = true;
	return 0;
}

void
forge_close(struct odbfs *top)
{
	struct forge_fs *f = top->forge;

	if (!f)
		return;
	if (f->running) {
		uint64_t one = 1;
		struct timespec by;

		/*
		 * A search waits on whatever it opens: a hung file system
		 * under the root holds it for as long. The mount ends all
		 * the same; what the thread uses is then left to the exit.
		 */
		clock_gettime(CLOCK_REALTIME, &by);
		by.tv_sec += STOP_WAIT_S;
		if (write(f->stopfd, &one, sizeof(one)) < 0) {
			log_msg(LOGL_ERROR, "cannot stop the forge's watcher");
		} else if (pthread_timedjoin_np(f->thread, NULL, &by) != 0) {
			log_msg(LOGL_ERROR, "%s: the search for repositories "
			    "still waits on a file system under it after %d s: "
			    "left to the exit", f->root, STOP_WAIT_S);
			top->forge = NULL;
			return;
		}
	}
	if (f->stopfd >= 0)
		close(f->stopfd);
	if (f->wakefd >= 0)
		close(f->wakefd);
	close_listed(f);
	for (size_t i = 0; i < f->n; i++)
		live_close(f->v[i]->live);
	while (f->pool) {
		struct pool *p = f->pool;

		f->pool = p->next;
		free(p);
	}
	watch_hub_free(f->hub);
	odb_cache_free(f->cache);
	free(f->v);
	free(f->slots);
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
