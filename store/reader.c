/*
 * reader: reading objects by offset, as open files and odbfs-cat read
 * them; calls unpack.c for small and deltified objects and zio.c to
 * stream large ones.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "log.h"
#include "reader.h"
#include "unpack.h"
#include "zio.h"

struct reader {
	atomic_uint refs;
	struct objinfo info;
	unsigned char *data;	/* whole payload, or NULL when streaming */

	/* Streaming only; all protected by lock. */
	pthread_mutex_t lock;
	struct pack *pack;	/* a reference, or NULL for a loose object */
	struct loose loose;
	const unsigned char *src;	/* the zlib stream */
	size_t srclen;
	size_t populated;	/* src bytes mapped ahead, from the start */
	uint64_t skip;		/* inflated bytes before the payload */
	uint64_t src_off;	/* for log lines: where the stream starts */
	const char *name;
	struct zio_stream zs;
	int started;
	_Atomic int failed;	/* a stream error, logged once, returned
				   again; written under lock */
	/*
	 * A ring of READER_WINDOW bytes holding payload bytes [win_start,
	 * win_start + winlen), byte b at win[b % READER_WINDOW]: the window
	 * moves on with no copying.
	 */
	unsigned char *win;
	uint64_t win_start;
	size_t winlen;
	uint64_t asked;		/* where the latest read started */
};

#define RING_AT(b) ((size_t)((b) & (READER_WINDOW - 1)))
_Static_assert((READER_WINDOW & (READER_WINDOW - 1)) == 0,
    "the window is a ring indexed by a mask");
_Static_assert(READER_WINDOW >= 3 * READER_CHUNK,
    "a read's chunk and the chunk kept behind it fit in the window");

const struct objinfo *
reader_info(const struct reader *r)
{
	return &r->info;
}

const unsigned char *
reader_data(const struct reader *r)
{
	return r->data;
}

/* Set up streaming of a whole (undeltified) object at loc. */
static int
stream_setup(struct reader *r, const struct snapshot *s,
    const struct objloc *loc)
{
	struct pack_entry e;
	int ret;

	if (loc->pack) {
		if ((ret = pack_entry(loc->pack, loc->off, &e)) < 0)
			return ret;
		r->pack = pack_ref(loc->pack);
		r->src = e.data;
		r->srclen = e.datalen;
		r->src_off = e.off;
		r->name = r->pack->path;
	} else {
		ret = loose_open(&r->loose, s->objdirs[loc->dir], loc->id,
		    s->rawsz);
		if (ret < 0)
			return ret;
		r->src = r->loose.map;
		r->srclen = r->loose.size;
		r->skip = r->loose.hdrlen;
		r->name = r->loose.path;
	}
	if (!(r->win = malloc(READER_WINDOW)))
		return -ENOMEM;
	pthread_mutex_init(&r->lock, NULL);
	return 0;
}

int
reader_open(const struct snapshot *s, const struct objloc *loc,
    struct reader **out)
{
	struct reader *r;
	struct pack_entry e;
	int ret;

	*out = NULL;
	if (!(r = calloc(1, sizeof(*r))))
		return -ENOMEM;
	atomic_init(&r->refs, 1);
	if ((ret = unpack_info(s, loc, &r->info)) < 0)
		goto fail;
	if (r->info.size > READER_INMEM && (!loc->pack ||
	    (pack_entry(loc->pack, loc->off, &e) == 0 &&
	    e.type != OBJ_OFS_DELTA && e.type != OBJ_REF_DELTA))) {
		if ((ret = stream_setup(r, s, loc)) < 0)
			goto fail;
	} else if ((ret = unpack_object(s, loc, &r->info, &r->data)) < 0) {
		goto fail;
	}
	*out = r;
	return 0;
fail:
	reader_close(r);
	return ret;
}

/* Start the stream again from the first payload byte. */
static int
restart(struct reader *r)
{
	unsigned char scratch[64];
	const char *why;
	long n;

	if (r->started)
		zio_stream_end(&r->zs);
	r->started = 0;
	if (zio_stream_init(&r->zs, r->src, r->srclen) < 0)
		return -ENOMEM;
	r->started = 1;
	r->win_start = 0;
	r->winlen = 0;
	for (uint64_t left = r->skip; left; left -= (uint64_t)n) {
		n = zio_stream_read(&r->zs, scratch,
		    left < sizeof(scratch) ? left : sizeof(scratch), &why);
		if (n <= 0)
			return log_corrupt("%s: offset %llu: %s", r->name,
			    (unsigned long long)r->src_off,
			    n < 0 ? why : "stream ends in the header");
	}
	return 0;
}

/* Drop the window's bytes before keep. */
static void
drop_before(struct reader *r, uint64_t keep)
{
	uint64_t end = r->win_start + r->winlen;

	if (keep <= r->win_start)
		return;
	if (keep > end)
		keep = end;
	r->winlen -= (size_t)(keep - r->win_start);
	r->win_start = keep;
}

/*
 * Map the stream's next pages in one call rather than one fault for each
 * 64 KiB: in a virtual machine a fault costs microseconds, and a 1 GiB
 * object stored uncompressed made 16 000. Failure is harmless (the pages
 * fault in as before).
 */
#define POPULATE ((size_t)2 << 20)

static void
populate(struct reader *r, size_t upto)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), from, to;

	if (upto > r->srclen)
		upto = r->srclen;
	if (upto <= r->populated)
		return;
	upto = r->srclen - upto > POPULATE ? upto + POPULATE : r->srclen;
	from = (uintptr_t)(r->src + r->populated) & ~(page - 1);
	to = (uintptr_t)(r->src + upto);
	(void)madvise((void *)from, to - from, MADV_POPULATE_READ);
	r->populated = upto;
}

/*
 * Inflate up to max (> 0) more payload bytes into the ring's free space,
 * which must not be empty; returns how many came, or an error (logged).
 */
static long
grow(struct reader *r, size_t max)
{
	uint64_t end = r->win_start + r->winlen;
	size_t at = RING_AT(end), room = READER_WINDOW - r->winlen;
	const char *why;
	long n;

	if (room > READER_WINDOW - at)
		room = READER_WINDOW - at;
	if (room > max)
		room = max;
	populate(r, r->zs.consumed + room);
	n = zio_stream_read(&r->zs, r->win + at, room, &why);
	/* Its file shrank under it (logged there): nothing read is sure. */
	if (r->pack ? pack_shrank(r->pack) : loose_check(&r->loose) < 0)
		return -EFSCORRUPTED;
	if (n < 0)
		return log_corrupt("%s: zlib stream at offset %llu: "
		    "%s at payload byte %llu", r->name,
		    (unsigned long long)r->src_off, why,
		    (unsigned long long)end);
	if (n == 0)
		return log_corrupt("%s: zlib stream at offset %llu "
		    "ends at payload byte %llu of %llu", r->name,
		    (unsigned long long)r->src_off, (unsigned long long)end,
		    (unsigned long long)r->info.size);
	r->winlen += (size_t)n;
	return n;
}

/* Make the window hold payload bytes [off, off + len), len <= CHUNK. */
static int
fill(struct reader *r, uint64_t off, size_t len)
{
	long n;
	int ret;

	if (r->started && off >= r->win_start &&
	    off + len <= r->win_start + r->winlen)
		return 0;
	if (r->failed)
		return r->failed;
	if (!r->started || off < r->win_start)
		if ((ret = restart(r)) < 0)
			return ret;
	while (r->win_start + r->winlen < off + len) {
		/*
		 * Keep up to a chunk behind off for late readers. The ring
		 * is full only with off at least two chunks past its start.
		 */
		if (r->winlen == READER_WINDOW)
			drop_before(r, off > READER_CHUNK ?
			    off - READER_CHUNK : 0);
		/* Only what this read needs: the rest is for prefetching. */
		if ((n = grow(r, (size_t)(off + len - r->win_start -
		    r->winlen))) < 0)
			return (int)n;
	}
	return 0;
}

/* Copy window bytes [off, off + len) out of the ring. */
static void
copy_out(const struct reader *r, unsigned char *dst, uint64_t off,
    size_t len)
{
	size_t at = RING_AT(off), first = READER_WINDOW - at;

	if (first > len)
		first = len;
	memcpy(dst, r->win + at, first);
	memcpy(dst + first, r->win, len - first);
}

long
reader_prefetch(struct reader *r, uint64_t upto, size_t max)
{
	long n = 0;
	uint64_t end;

	if (r->data || max == 0)
		return 0;
	pthread_mutex_lock(&r->lock);
	end = r->win_start + r->winlen;
	if (upto > r->info.size)
		upto = r->info.size;
	/* Not a stream nobody reads, not past a failure, not behind. */
	if (!r->started || r->failed || end >= upto)
		goto out;
	if (max > upto - end)
		max = (size_t)(upto - end);
	if (r->winlen == READER_WINDOW)
		drop_before(r, r->asked > READER_CHUNK ?
		    r->asked - READER_CHUNK : 0);
	if (r->winlen == READER_WINDOW)
		goto out;	/* full of bytes still to be read */
	if ((n = grow(r, max)) == -EFSCORRUPTED)
		r->failed = (int)n;
out:
	pthread_mutex_unlock(&r->lock);
	return n;
}

ssize_t
reader_read(struct reader *r, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	int ret = 0;

	if (off >= r->info.size)
		return 0;
	if (len > r->info.size - off)
		len = (size_t)(r->info.size - off);
	if (len > SSIZE_MAX)
		len = SSIZE_MAX;
	if (r->data) {
		memcpy(buf, r->data + off, len);
		return (ssize_t)len;
	}
	pthread_mutex_lock(&r->lock);
	r->asked = off;
	while (done < len) {
		size_t n = len - done < READER_CHUNK ? len - done : READER_CHUNK;

		if ((ret = fill(r, off + done, n)) < 0) {
			if (ret == -EFSCORRUPTED)
				r->failed = ret;
			break;
		}
		copy_out(r, (unsigned char *)buf + done, off + done, n);
		done += n;
	}
	pthread_mutex_unlock(&r->lock);
	return ret < 0 ? ret : (ssize_t)done;
}

int
reader_error(struct reader *r)
{
	return r->data ? 0 : atomic_load_explicit(&r->failed,
	    memory_order_relaxed);
}

struct reader *
reader_ref(struct reader *r)
{
	atomic_fetch_add_explicit(&r->refs, 1, memory_order_relaxed);
	return r;
}

void
reader_close(struct reader *r)
{
	if (!r || atomic_fetch_sub_explicit(&r->refs, 1,
	    memory_order_acq_rel) != 1)
		return;
	if (r->win) {
		if (r->started)
			zio_stream_end(&r->zs);
		pthread_mutex_destroy(&r->lock);
		free(r->win);
	}
	if (r->pack)
		pack_unref(r->pack);
	loose_close(&r->loose);
	free(r->data);
	free(r);
}
