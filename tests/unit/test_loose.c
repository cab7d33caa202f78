/*
 * test_loose: the parsers a loose object is read through. loose.c's
 * loose_header_parse() on inflated headers, "type SP decimal-size NUL",
 * good and malformed: unknown types, a missing space or NUL, sizes with
 * leading zeros, signs, non-digits or more than 64 bits, and headers
 * longer than git's 32 bytes. Then oid.c's hex ids, which name loose files
 * and must have one spelling only (lowercase, exact length), and object.c's
 * type names.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "odbstore/log.h"
#include "loose.h"
#include "object.h"
#include "oid.h"
#include "unit.h"

#define BYTES(s) (const unsigned char *)(s), sizeof(s) - 1
#define CORRUPT (-EFSCORRUPTED)
#define NAME "objects/12/3456"

struct header_case {
	const char *name;
	const unsigned char *buf;
	size_t len;
	int ret;
	enum obj_type type;
	uint64_t size;
	size_t hdrlen;
};

static const struct header_case headers[] = {
	{ "blob 12", BYTES("blob 12\0hello world\n"), 0, OBJ_BLOB, 12, 8 },
	{ "commit 0", BYTES("commit 0\0"), 0, OBJ_COMMIT, 0, 9 },
	{ "tree 1234567", BYTES("tree 1234567\0\x31\x30\x30"), 0, OBJ_TREE,
	    1234567, 13 },
	{ "tag 5", BYTES("tag 5\0"), 0, OBJ_TAG, 5, 6 },
	{ "blob 2^63-1", BYTES("blob 9223372036854775807\0"), 0, OBJ_BLOB,
	    INT64_MAX, 25 },
	{ "blob 10^19", BYTES("blob 10000000000000000000\0"), 0, OBJ_BLOB,
	    UINT64_C(10000000000000000000), 26 },
	{ "header read further than it runs", BYTES("blob 3\0abc" "\0\0\0\0"
	    "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"),
	    0, OBJ_BLOB, 3, 7 },

	{ "unknown type", BYTES("blab 12\0"), CORRUPT, 0, 0, 0 },
	{ "type in capitals", BYTES("Blob 12\0"), CORRUPT, 0, 0, 0 },
	{ "type that is a prefix", BYTES("blo 12\0"), CORRUPT, 0, 0, 0 },
	{ "type with a suffix", BYTES("blobs 12\0"), CORRUPT, 0, 0, 0 },
	{ "delta types are not object types", BYTES("ofs-delta 12\0"),
	    CORRUPT, 0, 0, 0 },
	{ "empty type", BYTES(" 12\0"), CORRUPT, 0, 0, 0 },
	{ "missing space", BYTES("blob12\0"), CORRUPT, 0, 0, 0 },
	{ "space after the NUL", BYTES("blob\0 12"), CORRUPT, 0, 0, 0 },
	{ "missing NUL", BYTES("blob 12"), CORRUPT, 0, 0, 0 },
	{ "empty buffer", BYTES(""), CORRUPT, 0, 0, 0 },
	{ "empty size", BYTES("blob \0"), CORRUPT, 0, 0, 0 },
	{ "leading zero", BYTES("blob 012\0"), CORRUPT, 0, 0, 0 },
	{ "two zeros", BYTES("blob 00\0"), CORRUPT, 0, 0, 0 },
	{ "two spaces", BYTES("blob  12\0"), CORRUPT, 0, 0, 0 },
	{ "space after the size", BYTES("blob 12 \0"), CORRUPT, 0, 0, 0 },
	{ "plus sign", BYTES("blob +12\0"), CORRUPT, 0, 0, 0 },
	{ "minus sign", BYTES("blob -1\0"), CORRUPT, 0, 0, 0 },
	{ "hex digit", BYTES("blob 1a\0"), CORRUPT, 0, 0, 0 },
	{ "hex prefix", BYTES("blob 0x12\0"), CORRUPT, 0, 0, 0 },
	{ "non-ASCII digit byte", BYTES("blob 1\xb2\0"), CORRUPT, 0, 0, 0 },
	{ "size of 2^64", BYTES("blob 18446744073709551616\0"), CORRUPT, 0, 0,
	    0 },
	{ "size of twenty nines", BYTES("blob 99999999999999999999\0"),
	    CORRUPT, 0, 0, 0 },
	/* the NUL is the 33rd byte: git's MAX_HEADER_LEN is 32 */
	{ "header of 33 bytes", BYTES("blob 1                          \0"),
	    CORRUPT, 0, 0, 0 },
	{ "header of 34 bytes, all digits",
	    BYTES("blob 12345678901234567890123456789\0"), CORRUPT, 0, 0, 0 },
};

static void
test_headers(void)
{
	for (size_t i = 0; i < sizeof(headers) / sizeof(headers[0]); i++) {
		const struct header_case *c = &headers[i];
		struct objinfo info = { OBJ_NONE, 0xdead };
		size_t hdrlen = 0xbeef;
		unsigned char *buf;
		int ret;

		/* on the heap and no longer than it is, for ASan */
		if (!(buf = malloc(c->len ? c->len : 1)))
			abort();
		memcpy(buf, c->buf, c->len);
		ret = loose_header_parse(buf, c->len, &info, &hdrlen, NAME);
		free(buf);
		if (!check_int(ret, c->ret, "header \"%s\": return", c->name))
			continue;
		if (ret < 0)
			check(strstr(log_last(), NAME) != NULL,
			    "header \"%s\": logged with the file's name",
			    c->name);
		else
			check(info.type == c->type && info.size == c->size &&
			    hdrlen == c->hdrlen,
			    "header \"%s\": type, size and length", c->name);
	}

	/* The header must be found within len, whatever lies beyond it. */
	{
		static const unsigned char buf[] = "blob 12\0";
		struct objinfo info;
		size_t hdrlen;

		check_int(loose_header_parse(buf, 7, &info, &hdrlen, NAME),
		    CORRUPT, "header whose NUL lies past len refused");
		check_int(loose_header_parse(buf, 4, &info, &hdrlen, NAME),
		    CORRUPT, "header whose space lies past len refused");
	}
	/*
	 * Read whole, this header would fail on its size; cut at 32 bytes,
	 * it has no NUL and fails on its length.
	 */
	{
		static const unsigned char buf[] =
		    "blob 12345678901234567890123456789";
		struct objinfo info;
		size_t hdrlen;

		loose_header_parse(buf, sizeof(buf), &info, &hdrlen, NAME);
		check(strstr(log_last(), "longer than 32") != NULL,
		    "a 35-byte header is refused for its length");
	}
}

struct hex_case {
	const char *hex;
	size_t rawsz;
	bool ok;
};

#define HEX40 "0123456789abcdef00ff7f80fedcba9876543210"
#define HEX64 HEX40 "a5a5a5a55a5a5a5a0f0f0f0f"

static const struct hex_case hexes[] = {
	{ HEX40, 20, true },
	{ HEX64, 32, true },
	{ "0000000000000000000000000000000000000000", 20, true },
	{ "ffffffffffffffffffffffffffffffffffffffff", 20, true },
	{ "0123456789ABCDEF00ff7f80fedcba9876543210", 20, false },
	{ "0123456789abcdef00ff7f80fedcba987654321F", 20, false },
	{ "F123456789abcdef00ff7f80fedcba9876543210", 20, false },
	{ "0123456789abcdef00ff7f80fedcba987654321", 20, false },
	{ HEX40 "0", 20, false },
	{ HEX40 "00", 20, false },
	{ HEX64, 20, false },
	{ HEX40, 32, false },
	{ "", 20, false },
	{ "g123456789abcdef00ff7f80fedcba9876543210", 20, false },
	{ "0g23456789abcdef00ff7f80fedcba9876543210", 20, false },
	{ "0123456789abcdef00ff7f80fedcba987654321g", 20, false },
	{ "0123456789abcdef00ff7f80 edcba9876543210", 20, false },
	{ "0123456789abcdef00ff7f80/edcba9876543210", 20, false },
	{ "0123456789abcdef00ff7f80:edcba9876543210", 20, false },
	{ "0123456789abcdef00ff7f80`edcba9876543210", 20, false },
	{ "0123456789abcdef00ff7f80\xe9" "edcba9876543210", 20, false },
	{ "0x23456789abcdef00ff7f80fedcba9876543210", 20, false },
	{ "-123456789abcdef00ff7f80fedcba9876543210", 20, false },
};

static const unsigned char raw40[20] = {
	0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x00, 0xff,
	0x7f, 0x80, 0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10,
};

static void
test_hex(void)
{
	static const struct {
		char c;
		int v;
	} digits[] = {
		{ '0', 0 }, { '9', 9 }, { 'a', 10 }, { 'f', 15 }, { 'A', -1 },
		{ 'F', -1 }, { 'g', -1 }, { '/', -1 }, { ':', -1 }, { '`', -1 },
		{ '\0', -1 }, { ' ', -1 }, { (char)0xb0, -1 },
		{ (char)0xe1, -1 },
	};
	unsigned char raw[OID_RAWSZ_MAX], back[OID_RAWSZ_MAX];
	char hex[OID_HEXSZ_MAX + 1];

	for (size_t i = 0; i < sizeof(digits) / sizeof(digits[0]); i++)
		check_int(hexval(digits[i].c), digits[i].v, "hexval(%#x)",
		    (unsigned char)digits[i].c);

	for (size_t i = 0; i < sizeof(hexes) / sizeof(hexes[0]); i++) {
		char shown[OID_HEXSZ_MAX + 16];
		size_t n = 0;

		/* for the TAP line: no bytes that are not printable ASCII */
		for (const char *p = hexes[i].hex; *p && n < sizeof(shown) - 1;
		    p++)
			shown[n++] = *p >= ' ' && *p <= '~' ? *p : '?';
		shown[n] = '\0';
		check(oid_parse_hex(raw, hexes[i].hex, hexes[i].rawsz) ==
		    hexes[i].ok, "oid_parse_hex(\"%s\", %zu) %s", shown,
		    hexes[i].rawsz, hexes[i].ok ? "accepted" : "refused");
	}

	check(oid_parse_hex(raw, HEX40, 20) && !memcmp(raw, raw40, 20),
	    "oid_parse_hex gives the right bytes");
	memset(hex, 'X', sizeof(hex));
	oid_to_hex(hex, raw40, 20);
	check(!strcmp(hex, HEX40), "oid_to_hex gives lowercase and a NUL");

	/* every byte value, both lengths, there and back */
	for (size_t rawsz = 20; rawsz <= 32; rawsz += 12) {
		bool ok = true;

		for (unsigned start = 0; start < 256; start++) {
			for (size_t i = 0; i < rawsz; i++)
				raw[i] = (unsigned char)(start + i * 37);
			memset(hex, 'X', sizeof(hex));
			oid_to_hex(hex, raw, rawsz);
			memset(back, 0, sizeof(back));
			if (strlen(hex) != 2 * rawsz ||
			    !oid_parse_hex(back, hex, rawsz) ||
			    memcmp(raw, back, rawsz))
				ok = false;
		}
		check(ok, "hex round trip of every byte value, %zu-byte ids",
		    rawsz);
	}
}

static void
test_types(void)
{
	static const struct {
		const char *name;
		enum obj_type type;
	} types[] = {
		{ "commit", OBJ_COMMIT }, { "tree", OBJ_TREE },
		{ "blob", OBJ_BLOB }, { "tag", OBJ_TAG },
	};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		const char *n = object_type_name(types[i].type);

		check(n && !strcmp(n, types[i].name) &&
		    object_type_parse(types[i].name, strlen(types[i].name)) ==
		    types[i].type, "type %s by name and number",
		    types[i].name);
	}
	check(object_type_name(OBJ_NONE) == NULL &&
	    object_type_name((enum obj_type)5) == NULL &&
	    object_type_name(OBJ_OFS_DELTA) == NULL &&
	    object_type_name(OBJ_REF_DELTA) == NULL &&
	    object_type_name((enum obj_type)8) == NULL &&
	    object_type_name((enum obj_type)1000) == NULL,
	    "types 0 and 5 to 8, and 1000, have no name");
	check(object_type_parse("blob", 3) == OBJ_NONE &&
	    object_type_parse("blobs", 5) == OBJ_NONE &&
	    object_type_parse("", 0) == OBJ_NONE &&
	    object_type_parse("ofs-delta", 9) == OBJ_NONE,
	    "names that are not types parse as OBJ_NONE");
}

void
test_loose(void)
{
	test_headers();
	test_hex();
	test_types();
}
