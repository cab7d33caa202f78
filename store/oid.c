/* oid: hex conversion for object ids. */
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
