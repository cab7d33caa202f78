/*
 * test_pack: pack_entry_parse() in pack.c, on entry headers built by hand
 * in a buffer that starts with a 12-byte pack header. Covers each object
 * type, sizes of one to nine varint bytes, OFS_DELTA base offsets in git's
 * encoding (each continuation byte adds one before shifting, as in
 * git's write_no_reuse_object()), REF_DELTA ids of 20 and 32 bytes, and
 * hostile headers: truncated anywhere, an endless size varint, invalid
 * types 0 and 5, and base offsets of 0 or reaching before the first entry.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "odbstore/log.h"
#include "pack.h"
#include "unit.h"

#define BYTES(s) (const unsigned char *)(s), sizeof(s) - 1
#define CORRUPT (-EFSCORRUPTED)
#define NAME "test.pack"

#define ID20 "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a" \
	"\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14"
#define ID32 ID20 "\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x20"

struct entry_case {
	const char *name;
	const unsigned char *bytes;	/* the entry; entries end with it */
	size_t len;
	size_t at;		/* its offset in the pack; 0 means 12 */
	size_t rawsz;		/* 0 means 20 */
	int ret;
	enum obj_type type;
	uint64_t size;
	uint64_t base_off;	/* OBJ_OFS_DELTA */
	size_t hdr;		/* header bytes before the zlib data */
};

/*
 * type-and-size is 1ttt ssss { 1sss ssss } 0sss ssss: the low four bits
 * of the size first, then seven bits a byte. 'x' stands for zlib data.
 */
static const struct entry_case cases[] = {
	{ "commit, size 15", BYTES("\x1fx"), 0, 0, 0, OBJ_COMMIT, 15, 0, 1 },
	{ "tree, size 16 in two bytes", BYTES("\xa0\x01x"), 0, 0, 0, OBJ_TREE,
	    16, 0, 2 },
	{ "blob, size 0", BYTES("\x30x"), 0, 0, 0, OBJ_BLOB, 0, 0, 1 },
	/* 0x12345: 5, then 0x34 and 0x24 seven bits a byte */
	{ "tag, size 0x12345 in three bytes", BYTES("\xc5\xb4\x24x"), 0, 0,
	    0, OBJ_TAG, 0x12345, 0, 3 },
	{ "blob, size 2^60-1 in nine bytes",
	    BYTES("\xbf\xff\xff\xff\xff\xff\xff\xff\x7fx"), 0, 0, 0, OBJ_BLOB,
	    ((uint64_t)1 << 60) - 1, 0, 9 },
	{ "blob, size with a redundant zero byte", BYTES("\xb5\x80\0x"), 0, 0,
	    0, OBJ_BLOB, 5, 0, 3 },
	{ "blob at a later offset", BYTES("\x35xxxxx"), 1000, 0, 0, OBJ_BLOB,
	    5, 0, 1 },

	/* OFS_DELTA: type 6, size 5, then the distance back to the base */
	{ "ofs-delta 5 back", BYTES("\x65\x05x"), 100, 0, 0, OBJ_OFS_DELTA, 5,
	    95, 2 },
	{ "ofs-delta to the first entry", BYTES("\x65\x01x"), 13, 0, 0,
	    OBJ_OFS_DELTA, 5, 12, 2 },
	{ "ofs-delta 127 back, the most in one byte", BYTES("\x65\x7fx"), 139,
	    0, 0, OBJ_OFS_DELTA, 5, 12, 2 },
	/* git writes 128 as 80 00: ((0 + 1) << 7) | 0 */
	{ "ofs-delta 128 back", BYTES("\x65\x80\0x"), 200, 0, 0,
	    OBJ_OFS_DELTA, 5, 72, 3 },
	/* 200 = ((0 + 1) << 7) | 0x48 */
	{ "ofs-delta 200 back", BYTES("\x65\x80\x48x"), 300, 0, 0,
	    OBJ_OFS_DELTA, 5, 100, 3 },
	/* ((0x7f + 1) << 7) | 0x7f = 16511 */
	{ "ofs-delta 16511 back, the most in two bytes", BYTES("\x65\xff\x7fx"),
	    16523, 0, 0, OBJ_OFS_DELTA, 5, 12, 3 },
	/* ((((0 + 1) << 7 | 0) + 1) << 7) | 0 = 16512 */
	{ "ofs-delta 16512 back, the least in three bytes",
	    BYTES("\x65\x80\x80\0x"), 16524, 0, 0, OBJ_OFS_DELTA, 5, 12, 4 },
	{ "ofs-delta with a two-byte size", BYTES("\xe5\x01\x05x"), 100, 0, 0,
	    OBJ_OFS_DELTA, 21, 95, 3 },

	/* REF_DELTA: type 7, size 5, then the base's id */
	{ "ref-delta, sha1", BYTES("\x75" ID20 "x"), 0, 0, 0, OBJ_REF_DELTA, 5,
	    0, 21 },
	{ "ref-delta, sha256", BYTES("\x75" ID32 "x"), 0, 32, 0,
	    OBJ_REF_DELTA, 5, 0, 33 },
	{ "ref-delta with a two-byte size", BYTES("\xf5\x01" ID20 "x"), 0, 0,
	    0, OBJ_REF_DELTA, 21, 0, 22 },

	/* truncated: the entries end too early */
	{ "size varint truncated", BYTES("\xb5"), 0, 0, CORRUPT, 0, 0, 0, 0 },
	{ "size varint truncated after two bytes", BYTES("\xb5\x81"), 0, 0,
	    CORRUPT, 0, 0, 0, 0 },
	{ "endless size varint", BYTES("\xbf\xff\xff\xff\xff\xff\xff"), 0, 0,
	    CORRUPT, 0, 0, 0, 0 },
	{ "size varint of ten bytes",
	    BYTES("\xbf\xff\xff\xff\xff\xff\xff\xff\xff\x01x"), 0, 0, CORRUPT,
	    0, 0, 0, 0 },
	{ "header but no data", BYTES("\x35"), 0, 0, CORRUPT, 0, 0, 0, 0 },
	{ "ofs-delta without its offset", BYTES("\x65"), 100, 0, CORRUPT, 0,
	    0, 0, 0 },
	{ "ofs-delta offset truncated", BYTES("\x65\x80"), 200, 0, CORRUPT, 0,
	    0, 0, 0 },
	{ "ofs-delta but no data", BYTES("\x65\x05"), 100, 0, CORRUPT, 0, 0,
	    0, 0 },
	{ "ref-delta id truncated", BYTES("\x75" ID20), 0, 0, CORRUPT, 0, 0, 0,
	    0 },
	{ "ref-delta with 19 id bytes",
	    BYTES("\x75\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a"
	    "\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13"), 0, 0, CORRUPT, 0, 0,
	    0, 0 },
	{ "ref-delta, sha256 id cut at 25 bytes", BYTES("\x75" ID20 "xxxxx"),
	    0, 32, CORRUPT, 0, 0, 0, 0 },

	/* base offsets outside the pack */
	{ "ofs-delta 0 back (itself)", BYTES("\x65\0x"), 100, 0, CORRUPT, 0, 0,
	    0, 0 },
	{ "ofs-delta back to offset 0", BYTES("\x65\x14x"), 20, 0, CORRUPT, 0,
	    0, 0, 0 },
	{ "ofs-delta into the pack header", BYTES("\x65\x09x"), 20, 0, CORRUPT,
	    0, 0, 0, 0 },
	{ "ofs-delta 128 back from 100", BYTES("\x65\x80\0x"), 100, 0,
	    CORRUPT, 0, 0, 0, 0 },
	{ "ofs-delta one before the first entry", BYTES("\x65\xff\x7fx"),
	    16522, 0, CORRUPT, 0, 0, 0, 0 },
	{ "ofs-delta offset of eleven bytes",
	    BYTES("\x65\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7fx"), 0, 0,
	    CORRUPT, 0, 0, 0, 0 },

	/* types that do not exist */
	{ "type 0", BYTES("\x05x"), 0, 0, CORRUPT, 0, 0, 0, 0 },
	{ "type 0 with a two-byte size", BYTES("\x85\x01x"), 0, 0, CORRUPT, 0,
	    0, 0, 0 },
	{ "type 5 (reserved)", BYTES("\x55x"), 0, 0, CORRUPT, 0, 0, 0, 0 },
};

/* A pack image: the header, zeros, then the entry at at. */
static unsigned char *
image(const unsigned char *entry, size_t len, size_t at)
{
	unsigned char *map = calloc(1, at + len);

	if (!map)
		abort();
	memcpy(map, PACK_SIGNATURE "\0\0\0\2\0\0\0\1", PACK_HEADER_SIZE);
	memcpy(map + at, entry, len);
	return map;
}

static bool
logged_name(void)
{
	return strstr(log_last(), NAME) != NULL;
}

static void
test_cases(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct entry_case *c = &cases[i];
		size_t at = c->at ? c->at : PACK_HEADER_SIZE;
		size_t rawsz = c->rawsz ? c->rawsz : 20;
		size_t end = at + c->len;
		unsigned char *map = image(c->bytes, c->len, at);
		struct pack_entry e;
		int ret;

		memset(&e, 0xa5, sizeof(e));
		ret = pack_entry_parse(map, end, rawsz, at, &e, NAME);
		if (!check_int(ret, c->ret, "%s: return", c->name)) {
			free(map);
			continue;
		}
		if (ret < 0) {
			check(logged_name(), "%s: logged with the pack's name",
			    c->name);
			free(map);
			continue;
		}
		check(e.off == at && e.type == c->type && e.size == c->size,
		    "%s: offset, type and size", c->name);
		check(e.data == map + at + c->hdr &&
		    e.datalen == c->len - c->hdr, "%s: data after %zu bytes",
		    c->name, c->hdr);
		if (c->type == OBJ_OFS_DELTA)
			check_u64(e.base_off, c->base_off, "%s: base offset",
			    c->name);
		else if (c->type == OBJ_REF_DELTA)
			check(e.base_oid == map + at + c->hdr - rawsz &&
			    !memcmp(e.base_oid, ID32, rawsz),
			    "%s: base id", c->name);
		else
			check(e.base_off == 0 && e.base_oid == NULL,
			    "%s: no base", c->name);
		free(map);
	}
}

/*
 * Offsets outside [PACK_HEADER_SIZE, end) are refused before any read. The
 * pack header here is all 0x35, which would parse as a blob of 5 bytes.
 */
static void
test_offsets(void)
{
	static const struct {
		uint64_t off;
		size_t end;
		int ret;
	} offs[] = {
		{ 0, 18, CORRUPT },
		{ 4, 18, CORRUPT },
		{ PACK_HEADER_SIZE - 1, 18, CORRUPT },
		{ PACK_HEADER_SIZE, 18, 0 },
		{ 18, 18, CORRUPT },
		{ 19, 18, CORRUPT },
		{ (uint64_t)1 << 32 | PACK_HEADER_SIZE, 18, CORRUPT },
		{ UINT64_MAX, 18, CORRUPT },
		{ PACK_HEADER_SIZE, PACK_HEADER_SIZE, CORRUPT },
		{ PACK_HEADER_SIZE, PACK_HEADER_SIZE + 1, CORRUPT },
	};
	unsigned char *map = image(BYTES("\x35xxxxx"), PACK_HEADER_SIZE);

	memset(map, 0x35, PACK_HEADER_SIZE);

	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		struct pack_entry e;

		check_int(pack_entry_parse(map, offs[i].end, 20, offs[i].off,
		    &e, NAME), offs[i].ret, "entry at offset %llu, end %zu",
		    (unsigned long long)offs[i].off, offs[i].end);
	}
	free(map);
}

void
test_pack(void)
{
	test_cases();
	test_offsets();
}
