/*
 * fuzz_pack: pack entry headers (pack_entry_parse() in store/pack.c). The
 * input is a whole .pack file, tried with sha1 and sha256 ids (only
 * REF_DELTA bases and the trailing checksum differ); entries end where the
 * checksum starts, as in pack_entry().
 *
 * Headers are parsed at the first offsets, at the last ones before the
 * end (where every field is cut short) and at offsets outside the pack.
 * Then the pack is walked as git's index-pack would: entry after entry
 * from the header on, each entry's data inflated (sizes capped at
 * FUZZ_MAX_OBJECT) to find where the next one starts, with delta headers
 * read by delta_sizes() and OFS_DELTA bases parsed too.
 */
#include <stdbool.h>
#include <string.h>

#include "be.h"
#include "delta.h"
#include "fuzz.h"
#include "pack.h"
#include "zio.h"

#define FIRST_OFFSETS 256
#define LAST_OFFSETS 48
#define MAX_WALK 1024

/* Parse the entry at off and check what a success promises. */
static int
entry(const uint8_t *map, size_t end, size_t rawsz, uint64_t off,
    struct pack_entry *e)
{
	int ret = pack_entry_parse(map, end, rawsz, off, e, "fuzz.pack");

	if (ret < 0)
		return ret;
	FUZZ_CHECK(e->off == off);
	FUZZ_CHECK(off >= PACK_HEADER_SIZE && off < end);
	FUZZ_CHECK(e->datalen > 0);
	FUZZ_CHECK(e->data > map + off && e->data + e->datalen == map + end);
	switch (e->type) {
	case OBJ_COMMIT:
	case OBJ_TREE:
	case OBJ_BLOB:
	case OBJ_TAG:
		FUZZ_CHECK(!e->base_oid && !e->base_off);
		break;
	case OBJ_OFS_DELTA:
		FUZZ_CHECK(e->base_off >= PACK_HEADER_SIZE &&
		    e->base_off < off && !e->base_oid);
		break;
	case OBJ_REF_DELTA:
		FUZZ_CHECK(e->base_oid && e->base_oid > map + off &&
		    e->base_oid + rawsz == e->data);
		break;
	default:
		FUZZ_CHECK(!"entry type is not a pack type");
	}
	return 0;
}

static void
walk(const uint8_t *map, size_t end, size_t rawsz, uint32_t nr)
{
	uint64_t off = PACK_HEADER_SIZE;
	struct pack_entry e, base;

	for (uint32_t i = 0; i < nr && i < MAX_WALK; i++) {
		unsigned char *buf;
		const char *why = NULL;
		size_t used = 0, hdrlen;
		uint64_t base_size, result_size;

		if (entry(map, end, rawsz, off, &e) < 0 ||
		    e.size > FUZZ_MAX_OBJECT)
			return;
		if (e.type == OBJ_OFS_DELTA)
			(void)entry(map, end, rawsz, e.base_off, &base);
		if (zio_inflate(e.data, e.datalen, e.size, &buf, &used,
		    &why) < 0) {
			FUZZ_CHECK(why != NULL);
			return;
		}
		FUZZ_CHECK(used > 0 && used <= e.datalen);
		if (e.type == OBJ_OFS_DELTA || e.type == OBJ_REF_DELTA) {
			if (delta_sizes(buf, (size_t)e.size, &base_size,
			    &result_size, &hdrlen, &why) == 0)
				FUZZ_CHECK(hdrlen <= e.size);
		}
		free(buf);
		off = (uint64_t)(e.data - map) + used;
	}
}

static void
one(const uint8_t *data, size_t size, size_t rawsz)
{
	struct pack_entry e;
	size_t end = size >= PACK_HEADER_SIZE + rawsz ? size - rawsz : size;
	static const uint64_t outside[] = { 0, 1, PACK_HEADER_SIZE - 1,
	    UINT32_MAX, (uint64_t)UINT32_MAX + PACK_HEADER_SIZE, INT64_MAX,
	    UINT64_MAX };

	for (uint64_t off = 0; off < end && off < FIRST_OFFSETS; off++)
		(void)entry(data, end, rawsz, off, &e);
	for (uint64_t off = end > LAST_OFFSETS ? end - LAST_OFFSETS : 0;
	    off <= end + 1; off++)
		(void)entry(data, end, rawsz, off, &e);
	for (size_t i = 0; i < sizeof(outside) / sizeof(*outside); i++)
		(void)entry(data, end, rawsz, outside[i], &e);
	if (size >= PACK_HEADER_SIZE)
		walk(data, end, rawsz, be32(data + 8));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_quiet();
	one(data, size, 20);
	one(data, size, 32);
	return 0;
}
