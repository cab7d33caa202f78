/*
 * rescan: the thread of a mount of many that sees repositories come and
 * go under the root, and closes what operations let go.
 *
 *   rescan_thread()      blocks until a group changes (inotify on every
 *                        group, or a poll), an operation put a repository
 *                        to close, or the mount ends
 *     settle()           gathers a burst of changes
 *     rescan()           scan_root() again: the new scan published, each
 *                        table entry marked gone, replaced or worth
 *                        another try, the kernel's entries of what
 *                        changed dropped (drop_changed())
 *     forge_close_listed()  what evicting put on the list, closed here
 *     tell_failed()      the entries of repositories whose open failed
 *
 * Its inotify instance also holds each open repository's own watch
 * (forge.c's watch_repo()), for what says it is a repository no more.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "fingerprint.h"
#include "forge_int.h"
#include "odbstore/log.h"
#include "odbstore/scan.h"
#include "odbstore/watch.h"
#include "rescan.h"
#include "roster.h"
#include "view.h"

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
			if (roster_is_group(now, path) || scan_find(now, path)) {
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
 * What rescan() learns of a table entry without the table's lock: statx(2)
 * of its git directory, and of what a failed one was opened from. A slow
 * or hung file system under the root holds only the forge's thread.
 */
struct look {
	const char *gitdir;	/* where the new scan finds it, or NULL */
	const char *failed;	/* its own git directory, if it failed */
	const char *path;	/* ...and its path from the root */
	bool seen;		/* open or opened, when looked at */
	bool found;		/* gitdir is there: dir */
	struct dirid dir;
	uint64_t print;		/* fingerprint_repo(failed) */
};

/* The looks for the first *n entries of the table, as now scanned. */
static struct look *
look_all(struct forge_fs *f, const struct scan *now, size_t *n)
{
	struct look *v;

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
		if (v[i].gitdir)
			v[i].found = roster_dirid(v[i].gitdir, &v[i].dir);
		if (v[i].failed)
			v[i].print = fingerprint_repo(f->root, v[i].path,
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
		/*
		 * Another git directory, or another at the same place, or
		 * the one it opened removed or moved away since.
		 */
		bool moved = fr && (strcmp(fr->gitdir, r->gitdir) || (k &&
		    (!k->found || !roster_same_dir(&k->dir, &r->dir))) ||
		    (r->live && atomic_load(&r->live->self_gone)));
		char *g;

		if (moved && seen && replaced &&
		    (replaced[nreplaced] = strdup(r->path)))
			nreplaced++;
		if (moved && k && k->found && !r->live) {
			r->dir = k->dir;	/* dropped once, not each rescan */
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
		if (moved && (g = roster_strdup_locked(f, fr->gitdir)))
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
		forge_live_close(closing[i]);
	free(closing);
	scan_free(old);
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
	/* What a repository is no more without, or is pointed at by. */
	static const char *const telling[] = { "HEAD", "objects", "refs",
	    ".git", "commondir" };
	static const char *const pointing[] = { ".git", "commondir" };
	const char *base = strrchr(f->root, '/') + 1, *name;
	struct inotify_event ev;
	struct live *repo;
	bool any = false;

	/* Every event: each open repository's removal is to be marked. */
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
		repo = NULL;
		pthread_mutex_lock(&f->wds_lock);
		for (size_t j = 0; j < f->nrwds && !repo; j++)
			if (f->rwds[j].wd == ev.wd)
				repo = f->rwds[j].l;
		/* Marked while the lock keeps it from being freed. */
		if (repo && (ev.mask & (IN_DELETE_SELF | IN_MOVE_SELF)))
			atomic_store(&repo->self_gone, true);
		pthread_mutex_unlock(&f->wds_lock);
		if (repo) {
			/*
			 * An open repository's: only what says it changed, not
			 * git rewriting its HEAD or refs/ (its watcher's).
			 */
			if (ev.mask & (IN_DELETE_SELF | IN_MOVE_SELF))
				any = true;
			else if (ev.mask & (IN_DELETE | IN_MOVED_FROM))
				for (size_t i = 0; i < sizeof(telling) /
				    sizeof(*telling); i++)
					any |= !strcmp(name, telling[i]);
			else
				for (size_t i = 0; i < sizeof(pointing) /
				    sizeof(*pointing); i++)
					any |= !strcmp(name, pointing[i]);
			continue;
		}
		any |= ev.wd != parent_wd || !strcmp(name, base);
	}
	return any;
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

/* How long rescan_stop() waits for the thread to stop. */
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
			forge_close_listed(f);
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
rescan_thread(void *arg)
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
			forge_close_listed(f);
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
		assert(roster_check(f->top));
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
rescan_start(struct odbfs *top)
{
	struct forge_fs *f = top->forge;
	int ret;

	/* inotify mode: the repositories' watches share one instance. */
	if (f->opts.refresh == 0 && (ret = watch_hub_new(&f->hub)) < 0)
		log_msg(LOGL_WARN, "%s: cannot watch repositories together: "
		    "%s: a thread and an inotify instance each", f->root,
		    strerror(-ret));
	f->how.hub = f->hub;
	if ((ret = pthread_create(&f->thread, NULL, rescan_thread, f)) != 0)
		return -ret;
	f->running = true;
	return 0;
}

int
rescan_stop(struct odbfs *top)
{
	struct forge_fs *f = top->forge;
	uint64_t one = 1;
	struct timespec by;

	if (!f || !f->running)
		return 0;
	/*
	 * A search waits on whatever it opens: a hung file system under the
	 * root holds it for as long. The mount ends all the same; what the
	 * thread uses is then left to the exit.
	 */
	clock_gettime(CLOCK_REALTIME, &by);
	by.tv_sec += STOP_WAIT_S;
	if (write(f->stopfd, &one, sizeof(one)) < 0) {
		log_msg(LOGL_ERROR, "cannot stop the forge's watcher");
		return -errno;
	}
	if (pthread_timedjoin_np(f->thread, NULL, &by) != 0) {
		log_msg(LOGL_ERROR, "%s: the search for repositories still "
		    "waits on a file system under it after %d s: left to the "
		    "exit", f->root, STOP_WAIT_S);
		top->forge = NULL;
		return -EBUSY;
	}
	f->running = false;
	return 0;
}
