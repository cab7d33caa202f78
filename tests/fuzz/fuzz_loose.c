/*
 * fuzz_loose: loose object files (loose_header_parse() in store/loose.c)
 * and the zlib layer under them (store/zio.c). The input is the file:
 *
 *   file := zlib( type SP decimal-size NUL payload )
 *
 * It goes through the steps of loose_open() and loose_read(): inflate a
 * LOOSE_MAX_HEADER prefix, parse the header, inflate the whole object at
 * the size the header claims (when that is at most FUZZ_MAX_OBJECT, which
 * is past zio's first allocation, so its buffer grows). The input is also
 * read with zio_stream_* in small pieces, up to about FUZZ_MAX_OBJECT
 * bytes; all three reads must agree on the bytes they share. A header
 * that does not parse is followed by a zio_inflate() at a size taken from
 * the input's last byte, so that zio sees streams that end early, late and
 * exactly.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "loose.h"
#include "zio.h"

/*
 * Read the stream into streamed[] in pieces: of piece bytes for its first
 * STREAM_SMALL bytes, then bigger. Returns 0 if the stream ended, 1 if it
 * was cut at STREAM_CAP bytes, or the error; *len is the bytes read. The
 * buffer is static: a fresh megabyte for every input costs the fuzzer
 * more than the inflating does.
 */
#define STREAM_SMALL 4096
#define STREAM_CAP (FUZZ_MAX_OBJECT + 2 * LOOSE_MAX_HEADER)

static unsigned char streamed[STREAM_CAP];

static long
stream(const uint8_t *data, size_t size, size_t piece, size_t *len)
{
	struct zio_stream s;
	const char *why = NULL;
	long n = 0;

	*len = 0;
	if (zio_stream_init(&s, data, size) < 0)
		abort();
	while (*len < STREAM_CAP) {
		size_t want = *len < STREAM_SMALL ? piece : 65536;

		if (want > STREAM_CAP - *len)
			want = STREAM_CAP - *len;
		n = zio_stream_read(&s, streamed + *len, want, &why);
		if (n <= 0)
			break;
		FUZZ_CHECK((size_t)n <= want);
		FUZZ_CHECK(s.consumed <= size);
		*len += (size_t)n;
	}
	if (n < 0)
		FUZZ_CHECK(why != NULL);
	/* Once ended, a stream stays ended. */
	if (n == 0 && *len < STREAM_CAP)
		FUZZ_CHECK(zio_stream_read(&s, streamed + *len, 1, &why) == 0);
	zio_stream_end(&s);
	return n < 0 ? n : *len == STREAM_CAP ? 1 : 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char head[LOOSE_MAX_HEADER], *whole = NULL;
	size_t got = 0, hdrlen = 0, used = 0, slen, piece;
	struct objinfo info;
	const char *why = NULL;
	uint64_t total = 0;
	long sret;
	int ret;

	fuzz_quiet();
	ret = zio_inflate_prefix(data, size, head, sizeof(head), &got, &why);
	FUZZ_CHECK(got <= sizeof(head));
	if (ret < 0)
		FUZZ_CHECK(why != NULL);
	if (ret == 0 || (ret == -EFSCORRUPTED && got > 0 &&
	    memchr(head, '\0', got)))
		ret = loose_header_parse(head, got, &info, &hdrlen,
		    "fuzz.loose");
	else
		ret = -EFSCORRUPTED;
	if (ret == 0) {
		FUZZ_CHECK(hdrlen > 0 && hdrlen <= got);
		FUZZ_CHECK(info.type >= OBJ_COMMIT && info.type <= OBJ_TAG);
		total = info.size <= FUZZ_MAX_OBJECT ? hdrlen + info.size : 0;
	} else if (size > 0) {
		total = data[size - 1];
	}

	if (total) {
		ret = zio_inflate(data, size, total, &whole, &used, &why);
		if (ret == 0) {
			FUZZ_CHECK(whole != NULL);
			FUZZ_CHECK(used > 0 && used <= size);
			/* The prefix is the start of the same bytes. */
			FUZZ_CHECK(got <= total && !memcmp(head, whole, got));
		} else {
			FUZZ_CHECK(whole == NULL && why != NULL);
		}
	}

	piece = 1 + size % 61;
	sret = stream(data, size, piece, &slen);
	FUZZ_CHECK(got <= slen || sret < 0);
	FUZZ_CHECK(!memcmp(head, streamed, got < slen ? got : slen));
	if (whole) {
		/* An inflate that succeeded is a stream that ended there. */
		FUZZ_CHECK(sret == 0 && slen == total);
		FUZZ_CHECK(!memcmp(whole, streamed, slen));
	}
	free(whole);
	return 0;
}
