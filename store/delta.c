/*
 * delta: applying git deltas. A result up to DELTA_ONE_PASS bytes is
 * allocated as the header says and written in one walk of the instruction
 * stream, every instruction checked as it is met. A larger claim is walked
 * twice: once to validate it and count the bytes it produces, once to
 * copy, so that a hostile header costs no large allocation.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "delta.h"
#include "log.h"

#define DELTA_ONE_PASS ((uint64_t)8 << 20)

static int
varint(const unsigned char **p, const unsigned char *end, uint64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;
	unsigned char c;

	do {
		if (*p >= end || shift > 63)
			return -1;
		c = *(*p)++;
		if (shift == 63 && (c & 0x7e))
			return -1;
		v |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
	} while (c & 0x80);
	*out = v;
	return 0;
}

int
delta_sizes(const unsigned char *delta, size_t len, uint64_t *base_size,
    uint64_t *result_size, size_t *hdrlen, const char **why)
{
	const unsigned char *p = delta, *end = delta + len;

	if (varint(&p, end, base_size) < 0 ||
	    varint(&p, end, result_size) < 0) {
		*why = "delta header is truncated or overflows";
		return -EFSCORRUPTED;
	}
	*hdrlen = (size_t)(p - delta);
	return 0;
}

/* One copy instruction's operands, read after its opcode byte. */
static int
copy_args(unsigned char cmd, const unsigned char **p, const unsigned char *end,
    uint64_t *off, uint64_t *size)
{
	uint64_t o = 0, s = 0;

	for (unsigned i = 0; i < 4; i++)
		if (cmd & (1u << i)) {
			if (*p >= end)
				return -1;
			o |= (uint64_t)*(*p)++ << (8 * i);
		}
	for (unsigned i = 0; i < 3; i++)
		if (cmd & (0x10u << i)) {
			if (*p >= end)
				return -1;
			s |= (uint64_t)*(*p)++ << (8 * i);
		}
	*off = o;
	*size = s ? s : 0x10000;
	return 0;
}

/*
 * Walk the instructions; with out == NULL only check them. Returns the
 * number of bytes produced, or -1 with *why set.
 */
static int64_t
run(const unsigned char *p, const unsigned char *end, const unsigned char *base,
    uint64_t baselen, uint64_t limit, unsigned char *out, const char **why)
{
	uint64_t produced = 0;

	while (p < end) {
		unsigned char cmd = *p++;
		uint64_t off, size;

		if (cmd & 0x80) {
			if (copy_args(cmd, &p, end, &off, &size) < 0) {
				*why = "delta copy instruction is truncated";
				return -1;
			}
			if (off > baselen || size > baselen - off) {
				*why = "delta copies from beyond its base";
				return -1;
			}
			if (size > limit - produced) {
				*why = "delta produces more than its header says";
				return -1;
			}
			if (out)
				memcpy(out + produced, base + off, (size_t)size);
			produced += size;
		} else if (cmd) {
			if (cmd > end - p) {
				*why = "delta literal runs past the delta's end";
				return -1;
			}
			if (cmd > limit - produced) {
				*why = "delta produces more than its header says";
				return -1;
			}
			if (out)
				memcpy(out + produced, p, cmd);
			p += cmd;
			produced += cmd;
		} else {
			*why = "delta uses the reserved opcode 0";
			return -1;
		}
	}
	return (int64_t)produced;
}

int
delta_apply(const unsigned char *base, size_t baselen,
    const unsigned char *delta, size_t deltalen, uint64_t max_result,
    unsigned char **out, size_t *outlen, const char **why)
{
	const unsigned char *end = delta + deltalen;
	uint64_t base_size, result_size;
	size_t hdrlen;
	unsigned char *buf;
	int ret;

	*out = NULL;
	*outlen = 0;
	ret = delta_sizes(delta, deltalen, &base_size, &result_size, &hdrlen,
	    why);
	if (ret < 0)
		return ret;
	if (base_size != baselen) {
		*why = "delta's base size does not match its base";
		return -EFSCORRUPTED;
	}
	if (result_size > max_result || result_size > INT64_MAX) {
		*why = "delta result is larger than odbfs holds in memory";
		return -EFBIG;
	}
	*why = NULL;
	if (result_size > DELTA_ONE_PASS && run(delta + hdrlen, end, base,
	    baselen, result_size, NULL, why) != (int64_t)result_size) {
		if (*why == NULL)
			*why = "delta produces less than its header says";
		return -EFSCORRUPTED;
	}
	if (!(buf = malloc(result_size ? (size_t)result_size : 1))) {
		*why = "out of memory";
		return -ENOMEM;
	}
	if (run(delta + hdrlen, end, base, baselen, result_size, buf, why) !=
	    (int64_t)result_size) {
		if (*why == NULL)
			*why = "delta produces less than its header says";
		free(buf);
		return -EFSCORRUPTED;
	}
	*out = buf;
	*outlen = (size_t)result_size;
	return 0;
}
