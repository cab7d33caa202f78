/*
 * be: big-endian numbers as git's formats store them (index and pack
 * headers, offsets, the zlib trailer, the start of an object id), read
 * from bytes of any alignment: one load and a byte swap each.
 */
#ifndef ODBFS_BE_H
#define ODBFS_BE_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t
be32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return be32toh(v);
}

static inline uint64_t
be64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return be64toh(v);
}

#endif
