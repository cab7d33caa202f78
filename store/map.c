/*
 * map: the registry of the store's file mappings and the SIGBUS handler
 * that keeps a shrunk file from killing the daemon. Every file the store
 * maps goes through it; the handler is installed by the first
 * map_open().
 *
 * The registry is a fixed array of slots that the handler reads without a
 * lock: each slot is a small seqlock (an odd sequence number while it is
 * being written), so a handler that runs while another thread fills or
 * empties a slot skips it rather than reading half of it. The faulting
 * thread's own mapping cannot change meanwhile: whoever reads through a
 * mapping holds it open.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "map.h"
#include "log.h"

/*
 * Two mappings for each pack (its index and its data) and one for each
 * loose object being read: 2^17 slots serve 64 Ki packs, the most a
 * snapshot's pack table takes, with room for readers. 4 MiB of address
 * space, touched only as slots are used.
 */
#define MAP_SLOTS (1 << 17)

struct slot {
	atomic_uint seq;		/* odd while being written */
	atomic_uintptr_t base;		/* 0: free */
	atomic_size_t size;
	atomic_uint_least64_t lost;	/* offset + 1 of the first lost byte */
};

static struct slot slots[MAP_SLOTS];
static atomic_size_t used;		/* slots the handler looks at */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static size_t handed;			/* protected by lock */
static int free_slots[MAP_SLOTS];	/* protected by lock */
static size_t nfree;			/* protected by lock */

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct sigaction previous;
static uintptr_t page_size;
static int install_error;

/* Not a fault in one of ours: do what would have been done without us. */
static void
pass_on(int sig, siginfo_t *si, void *uctx)
{
	if (previous.sa_flags & SA_SIGINFO) {
		previous.sa_sigaction(sig, si, uctx);
		return;
	}
	if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
		previous.sa_handler(sig);
		return;
	}
	/* Returning re-runs the faulting access, which now kills. */
	signal(SIGBUS, SIG_DFL);
}

static void
on_sigbus(int sig, siginfo_t *si, void *uctx)
{
	uintptr_t a = (uintptr_t)si->si_addr;
	size_t n = atomic_load_explicit(&used, memory_order_acquire);
	int saved = errno;

	for (size_t i = 0; si->si_code == BUS_ADRERR && i < n; i++) {
		struct slot *s = &slots[i];
		unsigned seq = atomic_load_explicit(&s->seq,
		    memory_order_acquire);
		uintptr_t base = atomic_load_explicit(&s->base,
		    memory_order_relaxed);
		size_t size = atomic_load_explicit(&s->size,
		    memory_order_relaxed);
		uint_least64_t none = 0;

		atomic_thread_fence(memory_order_acquire);
		if ((seq & 1) || seq != atomic_load_explicit(&s->seq,
		    memory_order_relaxed) || !base || a < base ||
		    a - base >= size)
			continue;
		if (mmap((void *)(a & ~(page_size - 1)), page_size, PROT_READ,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
		    MAP_FAILED)
			break;
		atomic_compare_exchange_strong(&s->lost, &none,
		    (uint_least64_t)(a - base) + 1);
		errno = saved;
		return;
	}
	errno = saved;
	pass_on(sig, si, uctx);
}

static void
install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
	if (sigaction(SIGBUS, &sa, &previous) < 0)
		install_error = -errno;
}

static int
slot_get(void)
{
	int s = -1;

	pthread_mutex_lock(&lock);
	if (nfree)
		s = free_slots[--nfree];
	else if (handed < MAP_SLOTS)
		s = (int)handed++;
	pthread_mutex_unlock(&lock);
	return s;
}

/* Fill or empty slot s: the handler skips it until this is done. */
static void
slot_set(int s, uintptr_t base, size_t size)
{
	struct slot *sl = &slots[s];

	atomic_fetch_add_explicit(&sl->seq, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&sl->base, base, memory_order_relaxed);
	atomic_store_explicit(&sl->size, size, memory_order_relaxed);
	atomic_store_explicit(&sl->lost, 0, memory_order_relaxed);
	atomic_fetch_add_explicit(&sl->seq, 1, memory_order_release);
}

struct fileid
fileid_of(const struct stat *st)
{
	return (struct fileid){ st->st_dev, st->st_ino, st->st_size,
	    st->st_mtim };
}

bool
fileid_same(const struct fileid *a, const struct fileid *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	    a->mtime.tv_sec == b->mtime.tv_sec &&
	    a->mtime.tv_nsec == b->mtime.tv_nsec;
}

int
map_open(struct map *m, int fd, const struct stat *st)
{
	size_t size = (size_t)st->st_size;
	void *p;
	int s;

	memset(m, 0, sizeof(*m));
	m->slot = -1;
	pthread_once(&once, install);
	if (install_error)
		return install_error;
	if ((s = slot_get()) < 0)
		return -EMFILE;
	p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		int ret = -errno;

		pthread_mutex_lock(&lock);
		free_slots[nfree++] = s;
		pthread_mutex_unlock(&lock);
		return ret;
	}
	slot_set(s, (uintptr_t)p, size);
	/* A new slot becomes visible to the handler once it is filled. */
	pthread_mutex_lock(&lock);
	if ((size_t)s >= atomic_load_explicit(&used, memory_order_relaxed))
		atomic_store_explicit(&used, (size_t)s + 1,
		    memory_order_release);
	pthread_mutex_unlock(&lock);
	m->base = p;
	m->size = size;
	m->slot = s;
	m->id = fileid_of(st);
	return 0;
}

void
map_close(struct map *m)
{
	if (!m->base)
		return;
	slot_set(m->slot, 0, 0);
	munmap((void *)m->base, m->size);
	pthread_mutex_lock(&lock);
	free_slots[nfree++] = m->slot;
	pthread_mutex_unlock(&lock);
	m->base = NULL;
	m->slot = -1;
}

bool
map_shrank(const struct map *m, uint64_t *off)
{
	uint_least64_t lost;

	if (!m->base)
		return false;
	lost = atomic_load_explicit(&slots[m->slot].lost,
	    memory_order_relaxed);
	if (lost && off)
		*off = lost - 1;
	return lost != 0;
}

int
map_path(struct map *m, const char *path)
{
	struct stat st;
	int fd, ret;

	memset(m, 0, sizeof(*m));
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		close(fd);
		return log_corrupt("%s: not a regular, non-empty file "
		    "(offset 0)", path);
	}
	ret = map_open(m, fd, &st);
	close(fd);
	return ret;
}
