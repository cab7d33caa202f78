/*
 * test_zio: zio.c on zlib streams made here with compress2() and deflate().
 * zio_inflate() must return exactly the bytes a stream holds when the
 * claimed size is right - across the sizes where its buffer grows - and
 * refuse a claim one byte off either way, a truncated or damaged stream,
 * garbage, a stream that needs a preset dictionary, and a claim of a
 * terabyte backed by a few bytes, which must fail at once without the
 * terabyte being allocated. zio_inflate_prefix() must give the first bytes,
 * and zio_stream_*() the whole stream read back in small pieces.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "odbstore/log.h"
#include "zio.h"
#include "unit.h"

#define CORRUPT (-EFSCORRUPTED)
#define MIB ((size_t)1 << 20)

/* Data that is half text, half noise, so streams mix block kinds. */
static unsigned char *
make_data(size_t len, uint32_t seed)
{
	static const char text[] = "tree 4b825dc642cb6eb9a060e54bf8d69288fbee"
	    "4904\nauthor A U Thor <author@example.com> 1112911993 -0700\n";
	unsigned char *d = malloc(len ? len : 1);
	uint32_t x = seed | 1;

	if (!d)
		abort();
	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		d[i] = (i / 4096) % 2 ? (unsigned char)x :
		    (unsigned char)text[i % (sizeof(text) - 1)];
	}
	return d;
}

/* compress2() src at level into a malloc'd stream of *zlen bytes. */
static unsigned char *
deflate_buf(const unsigned char *src, size_t len, int level, size_t *zlen)
{
	uLongf n = compressBound((uLong)len);
	unsigned char *z = malloc(n);

	if (!z || compress2(z, &n, src, (uLong)len, level) != Z_OK)
		abort();
	*zlen = n;
	return z;
}

/* A stream that needs dict to inflate. */
static unsigned char *
deflate_dict(const unsigned char *src, size_t len, const char *dict,
    size_t *zlen)
{
	z_stream z = { 0 };
	size_t cap = compressBound((uLong)len) + 64;
	unsigned char *out = malloc(cap);

	if (!out || deflateInit(&z, 9) != Z_OK ||
	    deflateSetDictionary(&z, (const Bytef *)dict, (uInt)strlen(dict)) !=
	    Z_OK)
		abort();
	z.next_in = (Bytef *)src;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END)
		abort();
	*zlen = cap - z.avail_out;
	deflateEnd(&z);
	return out;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Lengths around zio's first buffer (1 MiB) and its doublings, with the
 * levels to compress them at: 0 stores, 9 packs hard.
 */
static const struct {
	size_t len;
	int level;
} sizes[] = {
	{ 0, 6 }, { 1, 6 }, { 100, 0 }, { 100, 9 }, { 4096, 1 },
	{ MIB - 1, 6 }, { MIB, 0 }, { MIB, 9 }, { MIB + 1, 6 },
	{ 2 * MIB, 6 }, { 3 * MIB + 17, 0 },
};

static void
test_exact(void)
{
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t len = sizes[i].len, zlen, used = 0;
		unsigned char *d = make_data(len, (uint32_t)i), *z, *out;
		const char *why = NULL;
		int ret;

		z = deflate_buf(d, len, sizes[i].level, &zlen);
		ret = zio_inflate(z, zlen, len, &out, &used, &why);
		if (check_int(ret, 0, "inflate %zu bytes, level %d", len,
		    sizes[i].level)) {
			check_mem(out, len, d, len, "  the same %zu bytes",
			    len);
			check_u64(used, zlen, "  used all %zu stream bytes",
			    zlen);
			free(out);
		}
		ret = zio_inflate(z, zlen, len + 1, &out, NULL, &why);
		check(ret == CORRUPT && out == NULL && why,
		    "  a claim of %zu + 1 refused", len);
		if (len > 0) {
			ret = zio_inflate(z, zlen, len - 1, &out, NULL, &why);
			check(ret == CORRUPT && out == NULL && why,
			    "  a claim of %zu - 1 refused", len);
		}
		if (len > 1) {
			ret = zio_inflate(z, zlen, len / 2, &out, NULL, &why);
			check(ret == CORRUPT && out == NULL,
			    "  a claim of %zu / 2 refused", len);
		}
		free(z);
		free(d);
	}
}

/* Every proper prefix of a stream is refused, and so is any damage. */
static void
test_damage(void)
{
	static const unsigned char text[] = "hello, hello, hello, world\n";
	size_t len = sizeof(text) - 1, zlen, used, bad = 0;
	unsigned char *z, *out, *copy;
	const char *why;
	int ret;

	z = deflate_buf(text, len, 9, &zlen);
	for (size_t n = 0; n < zlen; n++) {
		ret = zio_inflate(z, n, len, &out, NULL, &why);
		if (ret != CORRUPT || out != NULL) {
			diag("  a prefix of %zu bytes gave %d", n, ret);
			bad++;
			free(out);
		}
	}
	check(bad == 0, "all %zu truncations of a %zu-byte stream refused",
	    zlen, zlen);

	copy = malloc(zlen + 8);
	if (!copy)
		abort();
	memcpy(copy, z, zlen);
	memcpy(copy + zlen, "garbage", 8);
	ret = zio_inflate(copy, zlen + 8, len, &out, &used, &why);
	check(ret == 0 && used == zlen && !memcmp(out, text, len),
	    "bytes after the stream are left to the caller");
	if (ret == 0)
		free(out);

	/*
	 * A flipped bit must never pass as other bytes: the adler32 catches
	 * what decodes. Only a padding bit of the last deflate byte may go
	 * unnoticed, as zlib does not check padding.
	 */
	bad = 0;
	for (size_t n = 0, quiet = 0; n < 8 * zlen; n++) {
		memcpy(copy, z, zlen);
		copy[n / 8] ^= (unsigned char)(1u << n % 8);
		ret = zio_inflate(copy, zlen, len, &out, NULL, &why);
		if (ret == 0 && (memcmp(out, text, len) || ++quiet > 7)) {
			diag("  bit %zu of byte %zu flipped went unnoticed",
			    n % 8, n / 8);
			bad++;
		}
		if (ret == 0)
			free(out);
	}
	check(bad == 0, "each bit of %zu bytes flipped: refused", zlen);
	memcpy(copy, z, zlen);
	copy[zlen - 1] ^= 1;
	check_int(zio_inflate(copy, zlen, len, &out, NULL, &why), CORRUPT,
	    "bad adler32 refused");
	free(copy);

	check_int(zio_inflate((const unsigned char *)"not zlib at all", 15, 15,
	    &out, NULL, &why), CORRUPT, "garbage refused");
	check_int(zio_inflate((const unsigned char *)"", 0, 0, &out, NULL,
	    &why), CORRUPT, "no stream at all refused, even for 0 bytes");
	/* a zlib header, then a deflate block of the reserved type 3 */
	check_int(zio_inflate((const unsigned char *)"\x78\x9c\x07\0\0", 5, 1,
	    &out, NULL, &why), CORRUPT, "reserved block type refused");
	free(z);
}

/* Give the stream at z the header cmf, with its check bits right. */
static void
set_header(unsigned char *z, unsigned cmf)
{
	unsigned flg = z[1] & 0xe0;

	z[0] = (unsigned char)cmf;
	z[1] = (unsigned char)(flg | (31 - (cmf << 8 | flg) % 31) % 31);
}

/* zio_stream_read() all of z; 0 if it gave exactly d[0..len). */
static long
stream_all(const unsigned char *z, size_t zlen, const unsigned char *d,
    size_t len)
{
	struct zio_stream s;
	unsigned char buf[4096];
	size_t have = 0;
	const char *why;
	long n;

	zio_stream_init(&s, z, zlen);
	while ((n = zio_stream_read(&s, buf, sizeof(buf), &why)) > 0) {
		if (have + (size_t)n > len || memcmp(buf, d + have, (size_t)n))
			n = -1;
		have += (size_t)n;
	}
	zio_stream_end(&s);
	return n < 0 ? n : have == len ? 0 : -1;
}

/*
 * The header names the window. A stream made with a 32 KiB window whose
 * header is changed to claim 512 bytes refers further back than that:
 * zlib refuses it, and so must zio's stream, which reads the header
 * itself. (libdeflate, for objects of up to 1 MiB, takes any window of
 * up to 32 KiB: the bytes are the same.)
 */
static void
test_window(void)
{
	size_t len = 16384, zlen;
	unsigned char *d = make_data(len, 3), *z;

	/* noise at 4 KiB, again 8 KiB later */
	memcpy(d + 12288, d + 4096, 2048);
	z = deflate_buf(d, len, 9, &zlen);
	check_int(stream_all(z, zlen, d, len), 0,
	    "a stream with a 32 KiB window streams");
	set_header(z, 0x78);
	check_int(stream_all(z, zlen, d, len), 0,
	    "  and again with the header rewritten as it was");
	set_header(z, 0x18);	/* deflate, a window of 2^(1+8) bytes */
	check_int(stream_all(z, zlen, d, len), CORRUPT,
	    "  with a header claiming a 512-byte window: refused");
	set_header(z, 0x88);	/* a window of 2^16: no such thing */
	check_int(stream_all(z, zlen, d, len), CORRUPT,
	    "  with a header claiming 64 KiB: refused");
	set_header(z, 0x77);	/* compression method 7 */
	check_int(stream_all(z, zlen, d, len), CORRUPT,
	    "  with a method other than deflate: refused");
	free(z);
	free(d);
}

static void
test_claims(void)
{
	static const unsigned char text[] = "small";
	size_t zlen;
	unsigned char *z = deflate_buf(text, 5, 9, &zlen), *out;
	const char *why;
	double t;
	int ret;

	t = now();
	ret = zio_inflate(z, zlen, (uint64_t)1 << 40, &out, NULL, &why);
	t = now() - t;
	check(ret == CORRUPT && out == NULL,
	    "a claim of 1 TiB for 5 bytes is corrupt, not ENOMEM");
	check(t < 1.0, "and fails at once (%.3f s)", t);
	ret = zio_inflate(z, zlen, (uint64_t)1 << 62, &out, NULL, &why);
	check(ret == CORRUPT && out == NULL, "a claim of 2^62 bytes too");
	ret = zio_inflate(z, zlen, UINT64_MAX, &out, NULL, &why);
	check(ret == -EFBIG && out == NULL && why,
	    "a claim of 2^64-1 bytes is EFBIG");
	free(z);
}

static void
test_dict(void)
{
	static const unsigned char text[] = "a dictionary, a dictionary";
	unsigned char *z, *out, dst[64];
	struct zio_stream s;
	size_t zlen, got;
	const char *why = NULL;
	int ret;

	z = deflate_dict(text, sizeof(text) - 1, "a dictionary", &zlen);
	ret = zio_inflate(z, zlen, sizeof(text) - 1, &out, NULL, &why);
	check(ret == CORRUPT && out == NULL && why,
	    "zio_inflate: preset dictionary refused");
	check_int(zio_inflate_prefix(z, zlen, dst, 8, &got, &why), CORRUPT,
	    "zio_inflate_prefix: preset dictionary refused");
	check_int(zio_stream_init(&s, z, zlen), 0, "zio_stream_init");
	check(zio_stream_read(&s, dst, sizeof(dst), &why) == CORRUPT,
	    "zio_stream_read: preset dictionary refused");
	zio_stream_end(&s);
	free(z);
}

static void
test_prefix(void)
{
	static const unsigned char text[] = "blob 12\0hello world\n";
	size_t len = sizeof(text) - 1, zlen, slen, got;
	unsigned char dst[64], *z, *stored;
	const char *why;

	z = deflate_buf(text, len, 9, &zlen);
	memset(dst, 0, sizeof(dst));
	check(zio_inflate_prefix(z, zlen, dst, 8, &got, &why) == 0 &&
	    got == 8 && !memcmp(dst, "blob 12", 8) && dst[8] == 0,
	    "prefix of 8 bytes, nothing more written");
	check(zio_inflate_prefix(z, zlen, dst, 1, &got, &why) == 0 &&
	    got == 1 && dst[0] == 'b', "prefix of 1 byte");
	check(zio_inflate_prefix(z, zlen, dst, 0, &got, &why) == 0 &&
	    got == 0, "prefix of 0 bytes");
	check(zio_inflate_prefix(z, zlen, dst, len, &got, &why) == 0 &&
	    got == len && !memcmp(dst, text, len), "prefix of all bytes");
	check(zio_inflate_prefix(z, zlen, dst, sizeof(dst), &got, &why) ==
	    0 && got == len && !memcmp(dst, text, len),
	    "prefix longer than the stream gives the stream");
	check(zio_inflate_prefix(z, 2, dst, 8, &got, &why) == CORRUPT &&
	    got == 0, "prefix of a stream cut after its header refused");
	check(zio_inflate_prefix((const unsigned char *)"garbage!", 8, dst, 8,
	    &got, &why) == CORRUPT && got == 0, "prefix of garbage refused");

	/*
	 * A stored (level 0) stream cut inside its data: what arrived is
	 * reported, which loose_open() uses to read a header anyway. The
	 * stream is a 2-byte zlib header, a 5-byte block header, the data,
	 * and the adler32.
	 */
	stored = deflate_buf(text, len, 0, &slen);
	if (slen != 2 + 5 + len + 4)
		diag("  zlib made a stored stream of %zu bytes, not %zu", slen,
		    2 + 5 + len + 4);
	check(zio_inflate_prefix(stored, 2 + 5 + 8, dst, 8, &got, &why) == 0 &&
	    got == 8 && !memcmp(dst, text, 8),
	    "prefix does not need the rest of the stream");
	check(zio_inflate_prefix(stored, 2 + 5 + 10, dst, sizeof(dst), &got,
	    &why) == CORRUPT && got == 10 && !memcmp(dst, text, 10),
	    "prefix of a cut stored stream reports the 10 bytes that came");
	free(stored);

	/*
	 * want above UINT_MAX: z_stream's avail_out is an unsigned int. The
	 * stream ends first, so all of it must come and *got must say so.
	 */
	if (SIZE_MAX > UINT_MAX) {
		size_t want = (size_t)UINT_MAX + 1 + 5;
		int ret;

		memset(dst, 0, sizeof(dst));
		ret = zio_inflate_prefix(z, zlen, dst, want, &got, &why);
		check(ret == 0 && got == len && !memcmp(dst, text, len),
		    "prefix with want = 2^32 + 5 gives the %zu bytes (got %zu)",
		    len, got);
	}
	free(z);
}

/* Read the stream at z in pieces of piece bytes; compare with d. */
static void
read_pieces(const unsigned char *z, size_t zlen, const unsigned char *d,
    size_t len, size_t piece)
{
	struct zio_stream s;
	unsigned char *buf = malloc(len + piece), *pbuf = malloc(piece);
	size_t have = 0, calls = 0;
	const char *why = NULL;
	long n;

	if (!buf || !pbuf)
		abort();
	if (!check_int(zio_stream_init(&s, z, zlen), 0, "stream init"))
		goto out;
	while ((n = zio_stream_read(&s, pbuf, piece, &why)) > 0) {
		if ((size_t)n > piece || have + (size_t)n > len + piece)
			break;
		memcpy(buf + have, pbuf, (size_t)n);
		have += (size_t)n;
		calls++;
	}
	check(n == 0, "stream of %zu bytes in pieces of %zu ends cleanly",
	    len, piece);
	check_mem(buf, have, d, len, "  and gives the same bytes");
	check(zio_stream_read(&s, pbuf, piece, &why) == 0 &&
	    s.consumed == zlen, "  then stays at its end, all %zu bytes used",
	    zlen);
	zio_stream_end(&s);
out:
	free(pbuf);
	free(buf);
}

static void
test_stream(void)
{
	static const size_t pieces[] = { 1, 7, 4096, 65536, 3 * MIB };
	size_t len = 200000, big = 3 * MIB + 17, zlen, zbig, have = 0;
	unsigned char *d = make_data(len, 7), *db = make_data(big, 8);
	unsigned char *z = deflate_buf(d, len, 9, &zlen);
	unsigned char *zb = deflate_buf(db, big, 6, &zbig);
	unsigned char buf[4096];
	struct zio_stream s;
	const char *why = NULL;
	long n;

	for (size_t i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++)
		read_pieces(z, zlen, d, len, pieces[i]);
	read_pieces(zb, zbig, db, big, 65536);

	zio_stream_init(&s, z, zlen);
	check(zio_stream_read(&s, buf, 0, &why) == 0 &&
	    zio_stream_read(&s, buf, 10, &why) == 10 &&
	    !memcmp(buf, d, 10), "a read of 0 bytes does not end the stream");
	zio_stream_end(&s);

	zio_stream_init(&s, z, zlen / 2);
	while ((n = zio_stream_read(&s, buf, sizeof(buf), &why)) > 0)
		have += (size_t)n;
	check(n == CORRUPT && have < len && why,
	    "a stream cut in half fails after %zu good bytes", have);
	zio_stream_end(&s);

	zio_stream_init(&s, z, zlen - 1);
	while ((n = zio_stream_read(&s, buf, sizeof(buf), &why)) > 0)
		;
	check(n == CORRUPT, "a stream missing its last byte fails");
	zio_stream_end(&s);

	zio_stream_init(&s, (const unsigned char *)"garbage!", 8);
	check(zio_stream_read(&s, buf, sizeof(buf), &why) == CORRUPT,
	    "a stream of garbage fails");
	zio_stream_end(&s);

	/* zio checks the adler32 itself: a wrong one, read in pieces */
	zb[zbig - 2] ^= 0x10;
	have = 0;
	zio_stream_init(&s, zb, zbig);
	while ((n = zio_stream_read(&s, buf, sizeof(buf), &why)) > 0)
		have += (size_t)n;
	check(n == CORRUPT && have + sizeof(buf) >= big && why &&
	    strstr(why, "adler32"),
	    "a streamed %zu bytes with a wrong adler32 fail at the end (%s)",
	    big, why ? why : "no reason");
	zio_stream_end(&s);

	free(zb);
	free(db);
	free(z);
	free(d);
}

void
test_zio(void)
{
	test_exact();
	test_damage();
	test_window();
	test_claims();
	test_dict();
	test_prefix();
	test_stream();
}
