/*
 * fuzz_delta: delta application (delta_apply() and delta_sizes() in
 * store/delta.c). The input is a base and a delta:
 *
 *   input := base-length(le16) base[base-length] delta
 *
 * (a base-length past the end takes all that is left). Base and delta are
 * copied into buffers of their own, so that AddressSanitizer sees a read
 * past either; results are capped at FUZZ_MAX_OBJECT.
 *
 * The outcome is compared with a second, deliberately plain reading of
 * gitformat-pack's "Deltified representation" below: the same inputs must
 * succeed with the same bytes, or fail the same way.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "delta.h"
#include "fuzz.h"

/* A size varint: at most 64 bits, and not cut off by the delta's end. */
static bool
ref_varint(const uint8_t *d, size_t n, size_t *i, uint64_t *out)
{
	uint64_t v = 0;

	for (unsigned k = 0; ; k++) {
		uint8_t c;

		if (*i >= n || k == 10)
			return false;
		c = d[(*i)++];
		if (k == 9 && (c & 0x7f) > 1)
			return false;
		v |= (uint64_t)(c & 0x7f) << (7 * k);
		if (!(c & 0x80))
			break;
	}
	*out = v;
	return true;
}

/* 0, -EFBIG or -EFSCORRUPTED, as delta_apply() should answer. */
static int
ref_apply(const uint8_t *base, size_t baselen, const uint8_t *d, size_t n,
    uint64_t max, unsigned char **out, size_t *outlen)
{
	uint64_t base_size, result_size, w = 0;
	unsigned char *buf;
	size_t i = 0;

	*out = NULL;
	if (!ref_varint(d, n, &i, &base_size) ||
	    !ref_varint(d, n, &i, &result_size))
		return -EFSCORRUPTED;
	if (base_size != baselen)
		return -EFSCORRUPTED;
	if (result_size > max)
		return -EFBIG;
	if (!(buf = malloc(result_size ? (size_t)result_size : 1)))
		abort();
	while (i < n) {
		uint8_t c = d[i++];

		if (c & 0x80) {
			uint64_t off = 0, len = 0;

			for (unsigned k = 0; k < 7; k++) {
				if (!(c & (1u << k)))
					continue;
				if (i >= n)
					goto corrupt;
				if (k < 4)
					off |= (uint64_t)d[i++] << 8 * k;
				else
					len |= (uint64_t)d[i++] << 8 * (k - 4);
			}
			if (len == 0)
				len = 0x10000;
			if (off + len > baselen || len > result_size - w)
				goto corrupt;
			memcpy(buf + w, base + off, (size_t)len);
			w += len;
		} else if (c != 0) {
			if (c > n - i || c > result_size - w)
				goto corrupt;
			memcpy(buf + w, d + i, c);
			i += c;
			w += c;
		} else {
			goto corrupt;
		}
	}
	if (w != result_size)
		goto corrupt;
	*out = buf;
	*outlen = (size_t)result_size;
	return 0;
corrupt:
	free(buf);
	return -EFSCORRUPTED;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *base, *delta, *got, *want;
	size_t baselen = 0, deltalen, gotlen = 0, wantlen = 0, hdrlen;
	uint64_t base_size, result_size;
	const char *why = NULL;
	int ret, ref;

	fuzz_quiet();
	if (size >= 2) {
		baselen = (size_t)data[0] | (size_t)data[1] << 8;
		if (baselen > size - 2)
			baselen = size - 2;
		data += 2;
		size -= 2;
	}
	deltalen = size - baselen;
	if (!(base = malloc(baselen ? baselen : 1)) ||
	    !(delta = malloc(deltalen ? deltalen : 1)))
		abort();
	memcpy(base, data, baselen);
	memcpy(delta, data + baselen, deltalen);

	if (delta_sizes(delta, deltalen, &base_size, &result_size, &hdrlen,
	    &why) == 0)
		FUZZ_CHECK(hdrlen > 0 && hdrlen <= deltalen);
	else
		FUZZ_CHECK(why != NULL);

	ret = delta_apply(base, baselen, delta, deltalen, FUZZ_MAX_OBJECT,
	    &got, &gotlen, &why);
	ref = ref_apply(base, baselen, delta, deltalen, FUZZ_MAX_OBJECT,
	    &want, &wantlen);
	FUZZ_CHECK(ret == ref);
	if (ret == 0) {
		FUZZ_CHECK(got != NULL && gotlen == wantlen);
		FUZZ_CHECK(gotlen == 0 || !memcmp(got, want, gotlen));
	} else {
		FUZZ_CHECK(got == NULL && gotlen == 0 && why != NULL);
	}
	free(got);
	free(want);
	free(base);
	free(delta);
	return 0;
}
