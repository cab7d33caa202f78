/* oid: hex conversion for object ids, and sorting runs of them. */
#include <stdlib.h>
#include <string.h>

#include "oid.h"

int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

bool
oid_parse_hex(unsigned char *raw, const char *hex, size_t rawsz)
{
	for (size_t i = 0; i < rawsz; i++) {
		int hi = hexval(hex[2 * i]);
		int lo = hi < 0 ? -1 : hexval(hex[2 * i + 1]);

		if (lo < 0)
			return false;
		raw[i] = (unsigned char)(hi << 4 | lo);
	}
	return hex[2 * rawsz] == '\0';
}

void
oid_to_hex(char *hex, const unsigned char *raw, size_t rawsz)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < rawsz; i++) {
		hex[2 * i] = digits[raw[i] >> 4];
		hex[2 * i + 1] = digits[raw[i] & 15];
	}
	hex[2 * rawsz] = '\0';
}

int
oid_cmp_r(const void *a, const void *b, void *rawsz)
{
	return memcmp(a, b, *(size_t *)rawsz);
}

size_t
oid_sort_unique(unsigned char *ids, size_t n, size_t rawsz)
{
	size_t k = 0;

	if (n == 0)
		return 0;	/* ids may be NULL: no qsort_r() of it */
	qsort_r(ids, n, rawsz, oid_cmp_r, &rawsz);
	for (size_t i = 0; i < n; i++)
		if (k == 0 || memcmp(ids + (k - 1) * rawsz, ids + i * rawsz,
		    rawsz))
			memmove(ids + k++ * rawsz, ids + i * rawsz, rawsz);
	return k;
}
