/*
 * oid: object ids in raw and hex form, for sha1 (20 bytes) and sha256
 * (32 bytes) repositories alike. The length travels beside the bytes as
 * `rawsz`; a struct oid simply has room for the longest.
 */
#ifndef ODBSTORE_OID_H
#define ODBSTORE_OID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OID_RAWSZ_MAX 32
#define OID_HEXSZ_MAX (2 * OID_RAWSZ_MAX)

struct oid {
	unsigned char raw[OID_RAWSZ_MAX];
};

/* 0..15 for a lowercase hex digit, -1 for anything else. */
int hexval(char c);

/*
 * True when hex is exactly 2 * rawsz lowercase hex digits (no more: hex must
 * end there); the id is then written to raw. Uppercase is refused, as a
 * mount must not show one object under two names.
 */
bool oid_parse_hex(unsigned char *raw, const char *hex, size_t rawsz);

/* Writes 2 * rawsz hex digits and a NUL to hex. */
void oid_to_hex(char *hex, const unsigned char *raw, size_t rawsz);

#endif
