/*
 * ahead: recent listings under one mutex, and one thread that pushes.
 *
 * A listing remembers up to LIST_MAX files, each with a small hash from
 * st_ino to its place, so that the read handler finds which listing (if
 * any) a file came from in a few probes. The LISTS most recently used are
 * kept, until their stream is closed and their last file pushed. Each
 * has a window [next, end) of files to push; a read that lands
 * at or past end, once the listing has seen two reads, opens the next one.
 * The thread takes one file at a time under the mutex and rebuilds and
 * pushes it without; node_hold() keeps the node from being freed (and its
 * id handed to another) while its bytes go to the kernel.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ahead.h"
#include "odbstore/log.h"
#include "node.h"
#include "readers.h"
#include "stats.h"

#define LISTS 8			/* listings remembered */
#define LIST_MAX 8192		/* files remembered in one listing */
#define LIST_SMALL 64		/* kept on the heap, below that */
#define WINDOW 256		/* files pushed at a time */
#define WINDOW_BYTES ((uint64_t)8 << 20)
/* Larger files are left to the kernel's own readahead. */
#define FILE_MAX ((uint64_t)1 << 20)

struct entry {
	fuse_ino_t nodeid;
	uint64_t ino;
	unsigned char id[OID_RAWSZ_MAX];
	bool read;		/* the kernel asked for it: no push */
};

struct ahead_list {
	unsigned refs;		/* protected by lock, like every field */
	bool listed;		/* in recent[] */
	bool closed;		/* the stream is gone: n is final */
	struct entry *v;	/* LIST_SMALL, or LIST_MAX mapped; grow_locked() */
	size_t n, alloc;
	uint32_t *map;		/* 2 * alloc slots: position + 1, or 0 */
	size_t rawsz;
	size_t reads;		/* reads of its files that reached us */
	size_t next, end;	/* the window being pushed */
	uint64_t window_bytes;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;
/* Most recently used first; each holds a reference. */
static struct ahead_list *recent[LISTS];	/* protected by lock */
static bool stopping;				/* protected by lock */
static bool unsupported;	/* the kernel said ENOSYS: thread only */
static struct odbfs *fs_;
static pthread_t thread;
static bool running;

struct ahead_list *
ahead_list_new(void)
{
	struct ahead_list *l = calloc(1, sizeof(*l));

	if (l)
		l->refs = 1;
	return l;
}

static void
put_locked(struct ahead_list *l)
{
	if (--l->refs)
		return;
	if (l->alloc > LIST_SMALL)
		munmap(l->v, LIST_MAX * sizeof(*l->v));
	else
		free(l->v);
	free(l->map);
	free(l);
}

/* Take l out of recent[], and drop that reference. */
static void
unlist_locked(struct ahead_list *l)
{
	size_t i;

	for (i = 0; i < LISTS && recent[i] != l; i++)
		;
	if (i == LISTS)
		return;
	memmove(&recent[i], &recent[i + 1], (LISTS - 1 - i) *
	    sizeof(recent[0]));
	recent[LISTS - 1] = NULL;
	l->listed = false;
	put_locked(l);
}

/*
 * A listing whose stream is closed and whose last file has been pushed
 * has nothing left to give: what it holds can go now rather than when
 * newer listings push it out (a walk of a million objects would otherwise
 * end holding the largest ones).
 */
static void
drop_if_done_locked(struct ahead_list *l)
{
	if (l->listed && l->closed && l->reads >= 2 && l->next >= l->n)
		unlist_locked(l);
}

void
ahead_list_put(struct ahead_list *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&lock);
	l->closed = true;
	drop_if_done_locked(l);
	put_locked(l);
	pthread_mutex_unlock(&lock);
}

/* Move l to the front of recent[], putting it there if it is not. */
static void
touch_locked(struct ahead_list *l)
{
	size_t i;

	if (!l->listed) {
		if (recent[LISTS - 1]) {
			recent[LISTS - 1]->listed = false;
			put_locked(recent[LISTS - 1]);
		}
		recent[LISTS - 1] = l;
		l->refs++;
		l->listed = true;
	}
	for (i = 0; recent[i] != l; i++)
		;
	memmove(&recent[1], &recent[0], i * sizeof(recent[0]));
	recent[0] = l;
}

static size_t
slot_of(uint64_t ino, size_t nslots)
{
	/* ino is already a hash of the node's key. */
	return (size_t)(ino & (nslots - 1));
}

static void
map_put(uint32_t *map, size_t nslots, uint64_t ino, size_t pos)
{
	size_t s = slot_of(ino, nslots);

	while (map[s])
		s = (s + 1) & (nslots - 1);
	map[s] = (uint32_t)(pos + 1);
}

/*
 * Make room for one more entry; false when out of memory. A listing's
 * first LIST_SMALL entries are on the heap: most directories of a tree
 * are small, and mapping and unmapping each listing's entries cost
 * system calls and, in a process of many threads, TLB shootdowns. Past
 * that they are mapped for LIST_MAX at once and take memory as they are
 * written: growing them through malloc would free chunks of over
 * 128 KiB, which raises glibc's trim threshold for good, and each
 * thread's arena then keeps megabytes it no longer uses. The map stays
 * under 64 KiB.
 */
static bool
grow_locked(struct ahead_list *l)
{
	size_t na = l->alloc ? 2 * l->alloc : LIST_SMALL;
	uint32_t *map = calloc(2 * na, sizeof(*map));
	void *v = l->v;

	if (!map)
		return false;
	if (!l->v) {
		v = malloc(LIST_SMALL * sizeof(*l->v));
	} else if (l->alloc == LIST_SMALL) {
		v = mmap(NULL, LIST_MAX * sizeof(*l->v), PROT_READ |
		    PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (v == MAP_FAILED)
			v = NULL;
		else
			memcpy(v, l->v, l->n * sizeof(*l->v));
	}
	if (!v) {
		free(map);
		return false;
	}
	if (v != l->v)
		free(l->v);
	l->v = v;
	for (size_t i = 0; i < l->n; i++)
		map_put(map, 2 * na, l->v[i].ino, i);
	free(l->map);
	l->map = map;
	l->alloc = na;
	return true;
}

void
ahead_list_add(struct ahead_list *l, fuse_ino_t nodeid, uint64_t ino,
    const unsigned char *id, size_t rawsz)
{
	struct entry *e;

	if (!l)
		return;
	pthread_mutex_lock(&lock);
	if (l->n == LIST_MAX || (l->n == l->alloc && !grow_locked(l)))
		goto out;
	if (!l->n)
		touch_locked(l);
	e = &l->v[l->n];
	e->nodeid = nodeid;
	e->ino = ino;
	memcpy(e->id, id, rawsz);
	e->read = false;
	l->rawsz = rawsz;
	map_put(l->map, 2 * l->alloc, ino, l->n++);
out:
	pthread_mutex_unlock(&lock);
}

/* Where node nodeid is in l, or -1. */
static long
find_locked(const struct ahead_list *l, fuse_ino_t nodeid, uint64_t ino)
{
	size_t nslots = 2 * l->alloc, s;

	if (!l->map)
		return -1;
	for (s = slot_of(ino, nslots); l->map[s]; s = (s + 1) & (nslots - 1)) {
		size_t pos = l->map[s] - 1;

		if (l->v[pos].nodeid == nodeid)
			return (long)pos;
	}
	return -1;
}

void
ahead_read(fuse_ino_t nodeid, uint64_t ino)
{
	struct ahead_list *l = NULL;
	long pos = -1;
	size_t p;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < LISTS && recent[i] && pos < 0; i++)
		if ((pos = find_locked(recent[i], nodeid, ino)) >= 0)
			l = recent[i];
	if (!l)
		goto out;
	p = (size_t)pos;
	l->v[p].read = true;
	touch_locked(l);
	/* One read is a file; two from one listing are a walk. */
	if (++l->reads < 2)
		goto out;
	if (p >= l->end) {
		l->next = p + 1;
		l->end = p + 1 + WINDOW < l->n ? p + 1 + WINDOW : l->n;
		l->window_bytes = 0;
		if (l->next < l->end)
			pthread_cond_signal(&work);
	} else if (p >= l->next) {
		/* The walk overtook the thread: push ahead of it again. */
		l->next = p + 1;
	}
out:
	pthread_mutex_unlock(&lock);
}

/*
 * Rebuild e's object and store it as node e->nodeid's whole content; the
 * bytes that took (what counts against a window).
 */
static uint64_t
push(const struct entry *e, size_t rawsz)
{
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT(0);
	unsigned char *buf = NULL;
	const unsigned char *data;
	struct reader *r = NULL;
	uint64_t size;
	int ret;

	/*
	 * A larger object is left to the kernel's readahead. readers.c keeps
	 * what it rebuilt of it (the read did not cover it all), so the
	 * walk's first read of it finds that work done.
	 */
	if (readers_get(fs_->odb, e->id, UINT64_MAX, 0, FILE_MAX, &r) < 0)
		return 0;
	size = reader_info(r)->size;
	if (size == 0 || size > FILE_MAX)
		goto out;
	if (!(data = reader_data(r))) {
		if (!(buf = malloc((size_t)size)) ||
		    reader_read(r, buf, (size_t)size, 0) != (ssize_t)size) {
			size = 0;
			goto out;
		}
		data = buf;
	}
	bv.buf[0].size = (size_t)size;
	bv.buf[0].mem = (void *)data;
	if (!node_hold(e->nodeid, e->ino, e->id, rawsz)) {
		size = 0;
		goto out;
	}
	/* -ENOENT: the kernel let the inode go meanwhile. */
	ret = fuse_lowlevel_notify_store(fs_->se, e->nodeid, 0, &bv, 0);
	node_unhold();
	if (ret == -ENOSYS) {
		log_msg(LOGL_WARN, "the kernel takes no file data ahead of "
		    "reads; reading ahead stops");
		unsupported = true;
	}
	if (ret != 0)
		size = 0;
	if (size) {
		stats_add(STAT_PUSHES, 1);
		stats_add(STAT_PUSHED_BYTES, size);
	}
out:
	free(buf);
	reader_close(r);
	return size;
}

/* The most recently used listing with a file left to push, or NULL. */
static struct ahead_list *
pick_locked(void)
{
	for (size_t i = 0; i < LISTS && recent[i]; i++)
		if (recent[i]->next < recent[i]->end)
			return recent[i];
	return NULL;
}

static void *
run(void *arg)
{
	struct ahead_list *l;

	(void)arg;
	pthread_mutex_lock(&lock);
	while (!stopping) {
		struct entry e;
		uint64_t bytes;
		size_t rawsz;

		if (unsupported || !(l = pick_locked())) {
			pthread_cond_wait(&work, &lock);
			continue;
		}
		e = l->v[l->next++];
		if (e.read)
			continue;
		l->refs++;
		rawsz = l->rawsz;
		pthread_mutex_unlock(&lock);
		bytes = push(&e, rawsz);
		pthread_mutex_lock(&lock);
		if ((l->window_bytes += bytes) >= WINDOW_BYTES)
			l->end = l->next;
		drop_if_done_locked(l);
		put_locked(l);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

int
ahead_start(struct odbfs *fs)
{
	int err;

	fs_ = fs;
	if ((err = pthread_create(&thread, NULL, run, NULL)) != 0)
		return -err;
	running = true;
	return 0;
}

void
ahead_stop(void)
{
	pthread_mutex_lock(&lock);
	stopping = true;
	pthread_cond_signal(&work);
	pthread_mutex_unlock(&lock);
	if (running)
		pthread_join(thread, NULL);
	running = false;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < LISTS && recent[i]; i++) {
		recent[i]->listed = false;
		put_locked(recent[i]);
		recent[i] = NULL;
	}
	pthread_mutex_unlock(&lock);
}
