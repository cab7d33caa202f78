/*
 * ahead: recent listings under one mutex, and one thread that pushes.
 *
 * Listings are remembered, least recently used first out, within
 * ENTRIES_MAX files in all (counted by the room their arrays take): a
 * walker may list many directories before it reads the files of the
 * first (rsync's sender lists about a thousand files ahead; restic's
 * walk runs ahead of its readers). One hash table, keyed by node id, says
 * where each remembered file is: the read handler finds it in a probe or
 * two, however many listings there are. The newest listing of a file wins.
 *
 * A listing that has seen two reads opens a window when one of its files
 * is read: from that file on, in the listing's order and around to its
 * start, the thread pushes up to WINDOW files (or WINDOW_BYTES) not yet
 * read nor pushed. Walkers that read in the listing's order (tar, rsync,
 * restic, cp and borg on mounts whose inode numbers follow it) find each
 * window ahead of them; one that reads in another order finds the files
 * it skipped pushed too, and each of its reads that still reaches us
 * moves the window there. At most ACTIVE listings have a window open.
 *
 * The thread takes one file at a time under the mutex, claims it in
 * readers.c (still under the mutex, so a read that marks it read after
 * that shares the rebuild instead of doing it again) and rebuilds and
 * pushes it without; node_hold() keeps the node from being freed (and its
 * id handed to another) while it is rebuilt and its bytes go to the
 * kernel, and a node already gone is not rebuilt.
 *
 * A file may be in several listings (a directory listed again): the
 * newest, which the table finds, says whether it was read or pushed, and
 * takes over what the older one knew.
 *
 * Memory: the arrays of at most ENTRIES_MAX files (56 bytes each, 1.75
 * MiB) and the table of 2 * ENTRIES_MAX slots (24 bytes each, 1.5 MiB),
 * plus a small header per listing remembered or open.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ahead.h"
#include "forge.h"
#include "odbstore/log.h"
#include "node.h"
#include "readers.h"
#include "stats.h"

#define ENTRIES_MAX 32768	/* files remembered, in all listings */
#define TABLE_SLOTS (2 * ENTRIES_MAX)
#define LIST_MAX 8192		/* files remembered in one listing */
#define LIST_SMALL 64		/* kept on the heap, below that */
#define LIST_FIRST 8		/* room a listing's first file makes */
#define ACTIVE 4		/* listings with a window open */
#define WINDOW 256		/* files pushed at a time */
#define WINDOW_BYTES ((uint64_t)8 << 20)
/* Larger files are left to the kernel's own readahead. */
#define FILE_MAX ((uint64_t)1 << 20)

struct entry {
	fuse_ino_t nodeid;
	uint64_t ino;
	unsigned char id[OID_RAWSZ_MAX];
	bool read;		/* the kernel asked for it: no push */
	bool pushed;		/* taken by the thread, whatever came of it */
};

struct ahead_list {
	unsigned refs;		/* protected by lock, like every field */
	uint32_t repo;		/* whose files: node_enter()'s number */
	bool listed;		/* remembered: in the LRU and the table */
	bool dead;		/* forgotten: records no more */
	bool closed;		/* the stream is gone: n is final */
	struct entry *v;	/* LIST_SMALL on the heap, or LIST_MAX mapped */
	size_t n, alloc;
	size_t rawsz;
	size_t reads;		/* reads of its files that reached us */
	size_t settled;		/* files read or pushed */
	size_t next;		/* where the window goes on */
	size_t visits;		/* positions the window may still look at */
	size_t left;		/* files it may still push */
	uint64_t window_bytes;
	struct ahead_list *newer, *older;	/* the LRU */
};

/* Where a remembered file is: l->v[pos], whose node id is nodeid. */
struct slot {
	fuse_ino_t nodeid;
	struct ahead_list *l;	/* NULL: empty */
	uint32_t pos;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;
/* Every field below is protected by lock. */
static struct ahead_list *newest, *oldest;	/* each holds a reference */
static size_t remembered;		/* room of the listings in the LRU */
static struct slot table[TABLE_SLOTS];
/* Listings with a window open, the one read last first; in the LRU. */
static struct ahead_list *active[ACTIVE];
static bool stopping;
static bool unsupported;	/* the kernel said ENOSYS: thread only */
static struct odbfs *fs_;
static pthread_t thread;
static bool running;

struct ahead_list *
ahead_list_new(uint32_t repo)
{
	struct ahead_list *l = calloc(1, sizeof(*l));

	if (l) {
		l->refs = 1;
		l->repo = repo;
	}
	return l;
}

static void
free_entries(struct ahead_list *l)
{
	if (l->alloc > LIST_SMALL)
		munmap(l->v, LIST_MAX * sizeof(*l->v));
	else
		free(l->v);
	l->v = NULL;
	l->n = l->alloc = 0;
}

static void
put_locked(struct ahead_list *l)
{
	if (--l->refs)
		return;
	free_entries(l);
	free(l);
}

static size_t
slot_of(fuse_ino_t nodeid)
{
	/* Node ids are addresses or small odd numbers: mix them. */
	return (size_t)(((uint64_t)nodeid * 0x9e3779b97f4a7c15ull) >> 48) &
	    (TABLE_SLOTS - 1);
}

/*
 * Remember that l->v[pos] is there, in place of an older listing's entry
 * for the same node, whose read and pushed it takes over: a directory
 * listed again (the kernel dropped its cached listing) is not pushed
 * again.
 */
static void
table_put(struct ahead_list *l, size_t pos)
{
	struct entry *e = &l->v[pos];
	size_t s = slot_of(e->nodeid);

	while (table[s].l && table[s].nodeid != e->nodeid)
		s = (s + 1) & (TABLE_SLOTS - 1);
	if (table[s].l) {
		const struct entry *old = &table[s].l->v[table[s].pos];

		if (old->ino == e->ino && (old->read || old->pushed)) {
			e->read = old->read;
			e->pushed = old->pushed;
			l->settled++;
		}
	}
	table[s].nodeid = e->nodeid;
	table[s].l = l;
	table[s].pos = (uint32_t)pos;
}

static struct slot *
table_find(fuse_ino_t nodeid)
{
	size_t s;

	for (s = slot_of(nodeid); table[s].l; s = (s + 1) & (TABLE_SLOTS - 1))
		if (table[s].nodeid == nodeid)
			return &table[s];
	return NULL;
}

/*
 * Forget l->v[pos] unless a newer listing took its place. Linear probing:
 * the slots after it that would not be found past the hole move into it.
 */
static void
table_del(struct ahead_list *l, size_t pos)
{
	struct slot *sl = table_find(l->v[pos].nodeid);
	size_t i, j, k;

	if (!sl || sl->l != l || sl->pos != pos)
		return;
	i = j = (size_t)(sl - table);
	table[i].l = NULL;
	for (;;) {
		j = (j + 1) & (TABLE_SLOTS - 1);
		if (!table[j].l)
			return;
		k = slot_of(table[j].nodeid);
		/* Stays if its home is cyclically in (i, j]. */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		table[i] = table[j];
		table[j].l = NULL;
		i = j;
	}
}

static void
deactivate_locked(struct ahead_list *l)
{
	size_t i;

	l->visits = l->left = 0;
	for (i = 0; i < ACTIVE && active[i] != l; i++)
		;
	if (i == ACTIVE)
		return;
	memmove(&active[i], &active[i + 1], (ACTIVE - 1 - i) *
	    sizeof(active[0]));
	active[ACTIVE - 1] = NULL;
}

/* Put l first among the listings with a window open. */
static void
activate_locked(struct ahead_list *l)
{
	size_t i;

	for (i = 0; i < ACTIVE - 1 && active[i] && active[i] != l; i++)
		;
	if (active[i] && active[i] != l)
		active[i]->visits = active[i]->left = 0;
	memmove(&active[1], &active[0], i * sizeof(active[0]));
	active[0] = l;
}

/*
 * Forget l: out of the LRU, the table and the windows, its files freed,
 * and the LRU's reference dropped. It records nothing more.
 */
static void
unlist_locked(struct ahead_list *l)
{
	if (!l->listed)
		return;
	deactivate_locked(l);
	for (size_t i = 0; i < l->n; i++)
		table_del(l, i);
	*(l->newer ? &l->newer->older : &newest) = l->older;
	*(l->older ? &l->older->newer : &oldest) = l->newer;
	l->newer = l->older = NULL;
	remembered -= l->alloc;
	l->listed = false;
	l->dead = true;
	free_entries(l);
	put_locked(l);
}

/*
 * A listing whose stream is closed and whose every file has been read or
 * pushed has nothing left to give: what it holds can go now rather than
 * when newer listings push it out.
 */
static void
drop_if_done_locked(struct ahead_list *l)
{
	if (l->listed && l->closed && l->settled == l->n)
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

/* Move l to the front of the LRU, putting it there if it is not. */
static void
touch_locked(struct ahead_list *l)
{
	if (newest == l)
		return;
	if (l->listed) {
		*(l->newer ? &l->newer->older : &newest) = l->older;
		*(l->older ? &l->older->newer : &oldest) = l->newer;
	} else {
		l->refs++;
		l->listed = true;
	}
	l->newer = NULL;
	l->older = newest;
	*(newest ? &newest->newer : &oldest) = l;
	newest = l;
}

/*
 * Make room for more entries in l (listed); false when out of memory. A
 * listing's first LIST_SMALL entries are on the heap: most directories
 * of a tree are small, and mapping and unmapping each listing's entries
 * cost system calls and, in a process of many threads, TLB shootdowns.
 * Past that they are mapped for LIST_MAX at once and take memory as they
 * are written: growing them through malloc would free chunks of over
 * 128 KiB, which raises glibc's trim threshold for good, and each
 * thread's arena then keeps megabytes it no longer uses. The listings
 * used least recently are forgotten until the room fits ENTRIES_MAX.
 */
static bool
grow_locked(struct ahead_list *l)
{
	size_t na = l->alloc ? 2 * l->alloc : LIST_FIRST;
	void *v = l->v;

	while (remembered + (na - l->alloc) > ENTRIES_MAX && oldest != l)
		unlist_locked(oldest);
	if (na <= LIST_SMALL) {
		v = realloc(l->v, na * sizeof(*l->v));
	} else if (l->alloc == LIST_SMALL) {
		v = mmap(NULL, LIST_MAX * sizeof(*l->v), PROT_READ |
		    PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (v == MAP_FAILED) {
			v = NULL;
		} else {
			memcpy(v, l->v, l->n * sizeof(*l->v));
			free(l->v);
		}
	}
	if (!v)
		return false;
	l->v = v;
	remembered += na - l->alloc;
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
	if (l->dead || l->n == LIST_MAX)
		goto out;
	touch_locked(l);
	if (l->n == l->alloc && !grow_locked(l))
		goto out;
	e = &l->v[l->n];
	e->nodeid = nodeid;
	e->ino = ino;
	memcpy(e->id, id, rawsz);
	e->read = e->pushed = false;
	l->rawsz = rawsz;
	table_put(l, l->n++);
	if (l->visits)
		l->visits++;
out:
	pthread_mutex_unlock(&lock);
}

void
ahead_read(fuse_ino_t nodeid, uint64_t ino)
{
	struct ahead_list *l;
	struct slot *sl;
	size_t p;

	pthread_mutex_lock(&lock);
	/* A listing older than the node that now has that id: not it. */
	if (!(sl = table_find(nodeid)) || sl->l->v[sl->pos].ino != ino)
		goto out;
	l = sl->l;
	p = sl->pos;
	if (!l->v[p].read && !l->v[p].pushed)
		l->settled++;
	l->v[p].read = true;
	touch_locked(l);
	/* One read is a file; two from one listing are a walk. */
	if (++l->reads < 2)
		goto out;
	/* From the next file on, around to this one. */
	l->next = p + 1 < l->n ? p + 1 : 0;
	l->visits = l->n - 1;
	l->left = WINDOW;
	l->window_bytes = 0;
	if (l->settled < l->n) {
		activate_locked(l);
		pthread_cond_signal(&work);
	} else {
		deactivate_locked(l);
		drop_if_done_locked(l);
	}
out:
	pthread_mutex_unlock(&lock);
}

/*
 * Rebuild e's object and store it as node e->nodeid's whole content; the
 * bytes that took (what counts against a window).
 */
static uint64_t
push(struct odbfs *fs, const struct entry *e, size_t rawsz)
{
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT(0);
	unsigned char *buf = NULL;
	const unsigned char *data;
	struct reader *r = NULL;
	uint64_t size;
	int ret;

	/*
	 * A node the kernel let go is not rebuilt for nothing: its next
	 * lookup makes another, which a read rebuilds.
	 */
	if (!node_hold(e->nodeid, e->ino, e->id, rawsz)) {
		readers_unclaim();
		return 0;
	}
	/*
	 * A larger object is left to the kernel's readahead. readers.c keeps
	 * what it rebuilt of it (the read did not cover it all), so the
	 * walk's first read of it finds that work done.
	 */
	if (readers_get_claimed(fs->odb, FILE_MAX, &r) < 0) {
		size = 0;
		goto out;
	}
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
	/* -ENOENT: the kernel let the inode go meanwhile. */
	ret = fuse_lowlevel_notify_store(fs->se, e->nodeid, 0, &bv, 0);
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
	node_unhold();
	readers_unclaim();
	free(buf);
	reader_close(r);
	return size;
}

/*
 * Whether e, just taken, is to be pushed: unless a newer listing of the
 * same file, which reads mark, has it read or pushed. Its entry there is
 * marked pushed too.
 */
static bool
newest_take_locked(const struct entry *e)
{
	struct slot *sl = table_find(e->nodeid);
	struct entry *t;

	if (!sl || (t = &sl->l->v[sl->pos]) == e || t->ino != e->ino)
		return true;
	if (t->read || t->pushed)
		return false;
	t->pushed = true;
	sl->l->settled++;
	return true;
}

/*
 * The next file of the first window open, marked pushed; NULL if there is
 * none. *lp is its listing.
 */
static struct entry *
pick_locked(struct ahead_list **lp)
{
	struct ahead_list *l;

	while ((l = active[0])) {
		while (l->visits && l->left) {
			struct entry *e = &l->v[l->next];

			l->visits--;
			l->next = l->next + 1 < l->n ? l->next + 1 : 0;
			if (e->read || e->pushed)
				continue;
			e->pushed = true;
			l->settled++;
			if (!newest_take_locked(e))
				continue;
			l->left--;
			*lp = l;
			return e;
		}
		deactivate_locked(l);
	}
	return NULL;
}

static void *
ahead_thread(void *arg)
{
	struct ahead_list *l;
	struct entry *pe;

	(void)arg;
	pthread_mutex_lock(&lock);
	while (!stopping) {
		struct odbfs *fs;
		struct entry e;
		uint64_t bytes;
		size_t rawsz;

		if (unsupported || !(pe = pick_locked(&l))) {
			pthread_cond_wait(&work, &lock);
			continue;
		}
		e = *pe;
		/*
		 * In a mount of many, its repository held while it is pushed,
		 * so that it is not closed meanwhile. One closed since the
		 * walk read from it: the walk went elsewhere, and opening it
		 * again for files nobody asked for is not worth it.
		 */
		if (!(fs = forge_hold_open(fs_, l->repo)) || !fs->odb) {
			forge_release(fs);
			deactivate_locked(l);
			continue;
		}
		l->refs++;
		rawsz = l->rawsz;
		/* Before a read can see it unread and not claimed. */
		readers_claim(fs->odb, e.id);
		pthread_mutex_unlock(&lock);
		bytes = push(fs, &e, rawsz);
		forge_release(fs);
		pthread_mutex_lock(&lock);
		if ((l->window_bytes += bytes) >= WINDOW_BYTES)
			l->visits = l->left = 0;
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
	if ((err = pthread_create(&thread, NULL, ahead_thread, NULL)) != 0)
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
	while (oldest)
		unlist_locked(oldest);
	pthread_mutex_unlock(&lock);
}
