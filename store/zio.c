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

#include "log.h"
#include "zio.h"

#define FIRST_ALLOC ((size_t)1 << 20)
#define ONE_SHOT FIRST_ALLOC
#define PIECE ((size_t)1 << 30)

/* One libdeflate decompressor per thread, freed when the thread ends. */
static pthread_key_t dkey;
static pthread_once_t donce = PTHREAD_ONCE_INIT;
static bool dkey_made;

static void
free_decompressor(void *d)
{
	libdeflate_free_decompressor(d);
}

static void
make_dkey(void)
{
	dkey_made = pthread_key_create(&dkey, free_decompressor) == 0;
}

static struct libdeflate_decompressor *
decompressor(void)
{
	struct libdeflate_decompressor *d;

	pthread_once(&donce, make_dkey);
	if (!dkey_made)
		return NULL;
	if (!(d = pthread_getspecific(dkey)) &&
	    (d = libdeflate_alloc_decompressor()) &&
	    pthread_setspecific(dkey, d) != 0) {
		libdeflate_free_decompressor(d);
		d = NULL;
	}
	return d;
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
	case Z_NEED_DICT:
		*why = "zlib stream asks for a preset dictionary";
		break;
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

static void
feed(z_stream *z, const unsigned char *src, size_t srclen, size_t consumed)
{
	size_t left = srclen - consumed;

	z->next_in = (unsigned char *)src + consumed;
	z->avail_in = (uInt)(left < PIECE ? left : PIECE);
}

/* Runs inflate() until dst is full or the stream ends; sets *ended. */
static int
pump(z_stream *z, const unsigned char *src, size_t srclen, size_t *consumed,
    int *ended, const char **why)
{
	while (z->avail_out > 0) {
		int ret;
		size_t before;

		if (z->avail_in == 0) {
			if (*consumed >= srclen) {
				*why = "zlib stream is truncated";
				return -EFSCORRUPTED;
			}
			feed(z, src, srclen, *consumed);
		}
		before = z->avail_in;
		ret = inflate(z, Z_NO_FLUSH);
		*consumed += before - z->avail_in;
		if (ret == Z_STREAM_END) {
			*ended = 1;
			return 0;
		}
		if (ret != Z_OK)
			return zerr(ret, why);
	}
	return 0;
}

int
zio_inflate(const unsigned char *src, size_t srclen, uint64_t size,
    unsigned char **out, size_t *used, const char **why)
{
	z_stream z = { 0 };
	unsigned char *buf = NULL, *grown;
	size_t cap, have = 0, consumed = 0;
	int ended = 0, ret;
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
	if (inflateInit(&z) != Z_OK) {
		free(buf);
		*why = "out of memory in zlib";
		return -ENOMEM;
	}
	for (;;) {
		z.next_out = buf + have;
		z.avail_out = (uInt)(cap - have < PIECE ? cap - have : PIECE);
		ret = pump(&z, src, srclen, &consumed, &ended, why);
		have = (size_t)((unsigned char *)z.next_out - buf);
		if (ret < 0 || ended)
			break;
		if (have < cap)
			continue;
		if (have == size) {
			/* Full: the stream must end now, with no byte more. */
			z.next_out = &probe;
			z.avail_out = 1;
			ret = pump(&z, src, srclen, &consumed, &ended, why);
			if (ret == 0 && (!ended || z.avail_out == 0)) {
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
	inflateEnd(&z);
	if (ret == 0 && have != size) {
		*why = "zlib stream is shorter than its header says";
		ret = -EFSCORRUPTED;
	}
	if (ret < 0) {
		free(buf);
		return ret;
	}
	if (used)
		*used = consumed;
	*out = buf;
	return 0;
}

int
zio_inflate_prefix(const unsigned char *src, size_t srclen, unsigned char *dst,
    size_t want, size_t *got, const char **why)
{
	z_stream z = { 0 };
	size_t consumed = 0;
	int ended = 0, ret;

	*got = 0;
	if (want > PIECE)
		want = PIECE;
	if (inflateInit(&z) != Z_OK) {
		*why = "out of memory in zlib";
		return -ENOMEM;
	}
	z.next_out = dst;
	z.avail_out = (uInt)want;
	ret = pump(&z, src, srclen, &consumed, &ended, why);
	*got = want - z.avail_out;
	inflateEnd(&z);
	return ret;
}

int
zio_stream_init(struct zio_stream *s, const unsigned char *src, size_t srclen)
{
	memset(s, 0, sizeof(*s));
	s->src = src;
	s->srclen = srclen;
	if (inflateInit(&s->z) != Z_OK)
		return -ENOMEM;
	return 0;
}

long
zio_stream_read(struct zio_stream *s, unsigned char *dst, size_t len,
    const char **why)
{
	int ret;

	if (s->ended || len == 0)
		return 0;
	if (len > LONG_MAX || len > PIECE)
		len = PIECE;
	s->z.next_out = dst;
	s->z.avail_out = (uInt)len;
	ret = pump(&s->z, s->src, s->srclen, &s->consumed, &s->ended, why);
	if (ret < 0)
		return ret;
	return (long)(len - s->z.avail_out);
}

void
zio_stream_end(struct zio_stream *s)
{
	inflateEnd(&s->z);
}
