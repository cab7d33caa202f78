/*
 * zio: inflating zlib streams that lie in memory (an mmapped pack or loose
 * file), with every length bounded by the bytes that exist.
 *
 * Callers know where the stream is and log; zio says what was wrong through
 * *why (a static string) and returns -EFSCORRUPTED, -ENOMEM or -EFBIG.
 */
#ifndef ODBFS_ZIO_H
#define ODBFS_ZIO_H

#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

/*
 * Inflate the stream at src[0..srclen), which must produce exactly size
 * bytes and then end. The buffer is grown as bytes actually arrive: no
 * more than 1 MiB is allocated on the claim alone. On success *out is malloc'd (free() it),
 * holds size bytes, and *used (if not NULL) is the compressed length.
 */
int zio_inflate(const unsigned char *src, size_t srclen, uint64_t size,
    unsigned char **out, size_t *used, const char **why);

/*
 * Inflate at most want bytes (at most 1 GiB) from the start of the stream
 * into dst; *got is how many came. For reading headers without inflating
 * a whole object.
 */
int zio_inflate_prefix(const unsigned char *src, size_t srclen,
    unsigned char *dst, size_t want, size_t *got, const char **why);

/*
 * A stream being inflated piece by piece, for objects too large to hold.
 * zio_stream_init() starts at src; zio_stream_read() fills up to len bytes
 * and returns how many (0 at the end of the stream) or a negative error.
 */
struct zio_stream {
	z_stream z;
	const unsigned char *src;
	size_t srclen;
	size_t consumed;
	uint32_t adler;		/* of the bytes inflated so far */
	enum { ZIO_HEADER, ZIO_BODY, ZIO_ENDED } state;
};

int zio_stream_init(struct zio_stream *s, const unsigned char *src,
    size_t srclen);
long zio_stream_read(struct zio_stream *s, unsigned char *dst, size_t len,
    const char **why);
void zio_stream_end(struct zio_stream *s);

#endif
