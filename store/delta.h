/*
 * delta: git's delta format (gitformat-pack, "Deltified representation").
 *
 *   delta := base-size result-size instruction*
 *   size  := little-endian base-128 varint, 7 bits a byte, MSB = more
 *   copy  := 1xxxxxxx [offset bytes per bits 0-3] [size bytes per bits 4-6]
 *            (a size of 0 means 0x10000)
 *   insert:= 0nnnnnnn followed by n literal bytes (n = 0 is reserved)
 *
 * Applying one rebuilds a deltified object from its base. Every copy is
 * checked against the base and every insert against the delta's end, and
 * the result size is proven by a dry run before anything is allocated.
 */
#ifndef ODBFS_DELTA_H
#define ODBFS_DELTA_H

#include <stddef.h>
#include <stdint.h>

/*
 * Read the two sizes that open a delta. *hdrlen is the number of bytes they
 * took. -EFSCORRUPTED (with *why) if the varints run off the end or
 * overflow 64 bits.
 */
int delta_sizes(const unsigned char *delta, size_t len, uint64_t *base_size,
    uint64_t *result_size, size_t *hdrlen, const char **why);

/*
 * Apply delta to base. On success *out is malloc'd (free() it) and holds
 * *outlen bytes, exactly the result size the delta declares. Results above
 * max_result give -EFBIG.
 */
int delta_apply(const unsigned char *base, size_t baselen,
    const unsigned char *delta, size_t deltalen, uint64_t max_result,
    unsigned char **out, size_t *outlen, const char **why);

#endif
