/*
 * idx: pack index files, versions 1 and 2 (gitformat-pack, "pack-*.idx").
 *
 *   v1: fanout[256] (be32)  { be32 offset, id[rawsz] } * nr
 *       pack checksum[rawsz]  idx checksum[rawsz]
 *
 *   v2: "\377tOc" be32 2  fanout[256] (be32)
 *       id[rawsz] * nr  crc32 * nr  be32 offset * nr
 *       be64 offset * n64  (an offset with its MSB set indexes this table)
 *       pack checksum[rawsz]  idx checksum[rawsz]
 *
 * fanout[b] counts the ids whose first byte is <= b; ids are sorted. The
 * whole file is mapped read-only; idx_open() checks the header, the fan-out
 * and that the file is exactly as long as nr implies before any lookup.
 */
#ifndef ODBFS_IDX_H
#define ODBFS_IDX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "map.h"

#define IDX_V2_MAGIC "\377tOc"
#define IDX_HEADER_V2 8
#define IDX_FANOUT_SIZE (256 * 4)

struct idx {
	const unsigned char *map;	/* the file, read-only */
	size_t size;
	struct map file;		/* idx_open()'s mapping of it */
	size_t rawsz;
	unsigned version;
	uint32_t nr;
	const unsigned char *fanout;	/* 256 be32 */
	const unsigned char *ids;	/* first id; stride apart */
	size_t stride;
	const unsigned char *off32;	/* v2: nr be32; v1: inside entries */
	const unsigned char *off64;	/* v2: n64 be64 */
	size_t n64;
	const unsigned char *pack_checksum;
};

/*
 * Check the index in the size bytes at map and describe it in *idx.
 * Pointers in *idx point into map and are valid as long as it is. name is
 * used in log lines only.
 */
int idx_parse(struct idx *idx, const unsigned char *map, size_t size,
    size_t rawsz, const char *name);

/* Map the file at path and idx_parse() it; idx_close() unmaps it. */
int idx_open(struct idx *idx, const char *path, size_t rawsz);
void idx_close(struct idx *idx);

/*
 * The positions [*lo, *hi) of the ids whose first byte is b: within
 * [0, nr) whatever the mapped fan-out says now.
 */
void idx_range(const struct idx *idx, unsigned b, uint32_t *lo, uint32_t *hi);

static inline const unsigned char *
idx_oid(const struct idx *idx, uint32_t pos)
{
	return idx->ids + (size_t)pos * idx->stride;
}

/* True, with *pos set, when raw is in the index. */
bool idx_find(const struct idx *idx, const unsigned char *raw, uint32_t *pos);

/*
 * The pack offset of the entry at pos; -EFSCORRUPTED (logged) if the index
 * lies: a 64-bit offset past its table, or one no pack can reach (2^63
 * and up).
 */
int idx_offset(const struct idx *idx, uint32_t pos, uint64_t *off,
    const char *name);

#endif
