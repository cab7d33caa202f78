/*
 * zio: zlib over bounded memory. An object of up to ONE_SHOT bytes, which
 * is most objects, is inflated by one call of libdeflate, which does whole
 * buffers about twice as fast as zlib's inflate(). Larger ones stream
 * through zlib: input is fed in pieces no larger than zlib's uInt so that
 * packs over 4 GiB work, and output buffers grow with what actually
 * inflates, so a header claiming terabytes costs nothing until the bytes
 * are really there.
 */
#include <errno.h>
#include <libdeflate.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "be.h"
#include "log.h"
#include "zio.h"

#define FIRST_ALLOC ((size_t)1 << 20)
#define ONE_SHOT FIRST_ALLOC
#define PIECE ((size_t)1 << 30)

/*
 * Per thread, freed when the thread ends: a libdeflate decompressor, and a
 * zlib stream reset for each use, so that reading a delta's header (done
 * for every delta whose size is asked) allocates nothing: inflateInit()
 * takes 7 KiB and inflate() 32 KiB more for its window.
 */
struct per_thread {
	struct libdeflate_decompressor *d;
	struct zio_stream s;
	bool s_ready;
};

static pthread_key_t key;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool key_made;

static void
free_per_thread(void *arg)
{
	struct per_thread *t = arg;

	if (t->d)
		libdeflate_free_decompressor(t->d);
	if (t->s_ready)
		zio_stream_end(&t->s);
	free(t);
}

static void
make_key(void)
{
	key_made = pthread_key_create(&key, free_per_thread) == 0;
}

static struct per_thread *
per_thread(void)
{
	struct per_thread *t;

	pthread_once(&once, make_key);
	if (!key_made)
		return NULL;
	if (!(t = pthread_getspecific(key)) &&
	    (t = calloc(1, sizeof(*t))) && pthread_setspecific(key, t) != 0) {
		free(t);
		t = NULL;
	}
	return t;
}

static struct libdeflate_decompressor *
decompressor(void)
{
	struct per_thread *t = per_thread();

	if (t && !t->d)
		t->d = libdeflate_alloc_decompressor();
	return t ? t->d : NULL;
}

/*
 * zio_inflate() for a size we can allocate at once. 1 when libdeflate
 * could not do it (no decompressor, or a stream it refuses): zlib then
 * does it again and says exactly what is wrong, as for a larger object.
 */
static int
inflate_one_shot(const unsigned char *src, size_t srclen, size_t size,
    unsigned char **out, size_t *used, const char **why)
{
	struct libdeflate_decompressor *d = decompressor();
	unsigned char *buf;
	size_t in, got;

	if (!d)
		return 1;
	if (!(buf = malloc(size ? size : 1))) {
		*why = "out of memory";
		return -ENOMEM;
	}
	if (libdeflate_zlib_decompress_ex(d, src, srclen, buf, size, &in,
	    &got) != LIBDEFLATE_SUCCESS || got != size) {
		free(buf);
		return 1;
	}
	if (used)
		*used = in;
	*out = buf;
	return 0;
}

static int
zerr(int zret, const char **why)
{
	switch (zret) {
	case Z_MEM_ERROR:
		*why = "out of memory in zlib";
		return -ENOMEM;
	case Z_BUF_ERROR:
		*why = "zlib stream is truncated";
		break;
	default:
		*why = "zlib stream is corrupt";
		break;
	}
	return -EFSCORRUPTED;
}

/*
 * The two header bytes of RFC 1950: deflate, a window of at most 32 KiB,
 * a check that makes them a multiple of 31, and no preset dictionary.
 * zlib's window is then set to the one the header names, as zlib itself
 * would, so that a distance beyond it is refused here too.
 */
static int
header(struct zio_stream *s, const char **why)
{
	unsigned cmf, flg;

	if (s->srclen < 2) {
		*why = "zlib stream is truncated";
		return -EFSCORRUPTED;
	}
	cmf = s->src[0];
	flg = s->src[1];
	if ((cmf << 8 | flg) % 31 != 0 || (cmf & 0xf) != Z_DEFLATED ||
	    (cmf >> 4) > 7) {
		*why = "zlib stream is corrupt";
		return -EFSCORRUPTED;
	}
	if (flg & 0x20) {
		*why = "zlib stream asks for a preset dictionary";
		return -EFSCORRUPTED;
	}
	if (inflateReset2(&s->z, -(int)((cmf >> 4) + 8)) != Z_OK) {
		*why = "zlib stream is corrupt";
		return -EFSCORRUPTED;
	}
	s->consumed = 2;
	s->state = ZIO_BODY;
	return 0;
}

/* The adler32 of RFC 1950, big-endian after the deflate data. */
static int
trailer(struct zio_stream *s, const char **why)
{
	const unsigned char *t = s->src + s->consumed;

	if (s->srclen - s->consumed < 4) {
		*why = "zlib stream is truncated";
		return -EFSCORRUPTED;
	}
	if (be32(t) != s->adler) {
		*why = "zlib stream fails its adler32 check";
		return -EFSCORRUPTED;
	}
	s->consumed += 4;
	s->state = ZIO_ENDED;
	return 0;
}

static void
feed(struct zio_stream *s)
{
	size_t left = s->srclen - s->consumed;

	s->z.next_in = (unsigned char *)s->src + s->consumed;
	s->z.avail_in = (uInt)(left < PIECE ? left : PIECE);
}

/*
 * Runs inflate() until z.avail_out is 0 or the stream ends, summing what
 * comes out. zlib inflates raw deflate, and the header and trailer are
 * checked here: zlib's own adler32 does about a byte a cycle, libdeflate's
 * is vectorized, and for a large object stored uncompressed zlib's was a
 * quarter of the daemon's time.
 */
static int
pump(struct zio_stream *s, const char **why)
{
	int ret;

	if (s->state == ZIO_HEADER && s->z.avail_out > 0 &&
	    (ret = header(s, why)) < 0)
		return ret;
	while (s->state == ZIO_BODY && s->z.avail_out > 0) {
		unsigned char *out = s->z.next_out;
		size_t before;

		if (s->z.avail_in == 0) {
			if (s->consumed >= s->srclen) {
				*why = "zlib stream is truncated";
				return -EFSCORRUPTED;
			}
			feed(s);
		}
		before = s->z.avail_in;
		ret = inflate(&s->z, Z_NO_FLUSH);
		s->consumed += before - s->z.avail_in;
		s->adler = (uint32_t)libdeflate_adler32(s->adler, out,
		    (size_t)(s->z.next_out - out));
		if (ret == Z_STREAM_END)
			return trailer(s, why);
		if (ret != Z_OK)
			return zerr(ret, why);
	}
	return 0;
}

/* Point s at the stream src, from its start; header() resets zlib. */
static void
start(struct zio_stream *s, const unsigned char *src, size_t srclen)
{
	s->src = src;
	s->srclen = srclen;
	s->consumed = 0;
	s->adler = 1;
	s->state = ZIO_HEADER;
	s->z.next_in = NULL;
	s->z.avail_in = 0;
}

int
zio_stream_init(struct zio_stream *s, const unsigned char *src, size_t srclen)
{
	memset(s, 0, sizeof(*s));
	start(s, src, srclen);
	if (inflateInit2(&s->z, -MAX_WBITS) != Z_OK)
		return -ENOMEM;
	return 0;
}

/*
 * This thread's stream, set to start at src; NULL without memory. Only
 * for use within one call: the next call starts it again.
 */
static struct zio_stream *
thread_stream(const unsigned char *src, size_t srclen)
{
	struct per_thread *t = per_thread();
	struct zio_stream *s;

	if (!t)
		return NULL;
	s = &t->s;
	if (t->s_ready)
		start(s, src, srclen);
	else if (zio_stream_init(s, src, srclen) == 0)
		t->s_ready = true;
	else
		return NULL;
	return s;
}

long
zio_stream_read(struct zio_stream *s, unsigned char *dst, size_t len,
    const char **why)
{
	int ret;

	if (s->state == ZIO_ENDED || len == 0)
		return 0;
	if (len > LONG_MAX || len > PIECE)
		len = PIECE;
	s->z.next_out = dst;
	s->z.avail_out = (uInt)len;
	ret = pump(s, why);
	if (ret < 0)
		return ret;
	return (long)(len - s->z.avail_out);
}

void
zio_stream_end(struct zio_stream *s)
{
	inflateEnd(&s->z);
}

int
zio_inflate(const unsigned char *src, size_t srclen, uint64_t size,
    unsigned char **out, size_t *used, const char **why)
{
	struct zio_stream *s;
	unsigned char *buf = NULL, *grown;
	size_t cap, have = 0;
	int ret;
	unsigned char probe;

	*out = NULL;
	if (size > SIZE_MAX - 1) {
		*why = "object too large for this machine";
		return -EFBIG;
	}
	if (size <= ONE_SHOT &&
	    (ret = inflate_one_shot(src, srclen, (size_t)size, out, used,
	    why)) <= 0)
		return ret;
	cap = size < FIRST_ALLOC ? (size_t)size : FIRST_ALLOC;
	if (!(buf = malloc(cap ? cap : 1))) {
		*why = "out of memory";
		return -ENOMEM;
	}
	if (!(s = thread_stream(src, srclen))) {
		free(buf);
		*why = "out of memory in zlib";
		return -ENOMEM;
	}
	for (;;) {
		s->z.next_out = buf + have;
		s->z.avail_out = (uInt)(cap - have < PIECE ? cap - have : PIECE);
		ret = pump(s, why);
		have = (size_t)(s->z.next_out - buf);
		if (ret < 0 || s->state == ZIO_ENDED)
			break;
		if (have < cap)
			continue;
		if (have == size) {
			/* Full: the stream must end now, with no byte more. */
			s->z.next_out = &probe;
			s->z.avail_out = 1;
			ret = pump(s, why);
			if (ret == 0 && (s->state != ZIO_ENDED ||
			    s->z.avail_out == 0)) {
				*why = "zlib stream is longer than its header says";
				ret = -EFSCORRUPTED;
			}
			break;
		}
		cap = size - have > cap ? cap * 2 : (size_t)size;
		if (cap > size)
			cap = (size_t)size;
		if (!(grown = realloc(buf, cap))) {
			*why = "out of memory";
			ret = -ENOMEM;
			break;
		}
		buf = grown;
	}
	if (ret == 0 && have != size) {
		*why = "zlib stream is shorter than its header says";
		ret = -EFSCORRUPTED;
	}
	if (ret < 0) {
		free(buf);
		return ret;
	}
	if (used)
		*used = s->consumed;
	*out = buf;
	return 0;
}

int
zio_inflate_prefix(const unsigned char *src, size_t srclen, unsigned char *dst,
    size_t want, size_t *got, const char **why)
{
	struct zio_stream *s;
	int ret;

	*got = 0;
	if (want > PIECE)
		want = PIECE;
	if (!(s = thread_stream(src, srclen))) {
		*why = "out of memory in zlib";
		return -ENOMEM;
	}
	s->z.next_out = dst;
	s->z.avail_out = (uInt)want;
	ret = pump(s, why);
	*got = want - s->z.avail_out;
	return ret;
}
