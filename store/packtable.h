/*
 * packtable: one hash table over the ids of every pack of a snapshot, so
 * that finding an id costs one table probe and one id comparison however
 * many packs there are (rather than one index search per pack).
 *
 * Open addressing, linear probing, 2^k slots for at most 2^(k-1) ids
 * (16 to 32 bytes an id: 16 MiB for 1 000 000). A slot is 64 bits:
 *
 *   63       48 47      32 31                 0
 *   +----------+----------+--------------------+
 *   | pack + 1 | tag      | position in the    |
 *   |          | (id byte | pack's .idx        |
 *   |          |  6 and 7)|                    |
 *   +----------+----------+--------------------+
 *
 * A slot of all zeros is empty: no id has pack 0, and a fresh anonymous
 * mapping is zero-filled already, so building writes only the ids.
 * An id's home slot is its first k bits: ids are hashes, so their prefix
 * is already uniform. The tag is two bytes the home does not use, so all
 * but about one slot in 65536 whose tag matches holds the id; the id is
 * still compared in full against the pack's index before it counts (the
 * table holds positions only, and an index is hostile input). Packs go in
 * in the order given, and a lookup takes the first match along the probe
 * sequence: an id in several packs resolves to the first of them, as a
 * loop over the packs in that order would.
 *
 * Built once by snapshot.c and never changed: a table is reference
 * counted and shared by every snapshot whose list of packs is the same.
 */
#ifndef ODBFS_PACKTABLE_H
#define ODBFS_PACKTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pack.h"

#define PACKTABLE_EMPTY 0
#define PACKTABLE_MAX_PACKS 0xffff	/* pack + 1 must fit in 16 bits */
#define PACKTABLE_MAX_IDS ((size_t)1 << 31)	/* 2^32 slots of 8 bytes */
/*
 * The longest an id may sit from its home. With ids that are hashes and a
 * load of at most 1/2, a displacement of d has a chance of about 0.82^d:
 * 128 is never reached by honest packs (1e-11 per id), while an index
 * listing ids made to share their first bits gets no table at all, rather
 * than a table whose probes run through all of them.
 */
#define PACKTABLE_MAX_PROBE 128

struct packtable;

/*
 * Build a table over the ids of packs[0..npacks), taking one reference on
 * each pack and leaving the caller's. -EOVERFLOW when the packs or ids are
 * too many for the slot encoding, -ELOOP when some id would sit more than
 * PACKTABLE_MAX_PROBE slots from its home, -ENOMEM: the caller then
 * searches pack by pack. On success *out holds one reference; drop it with
 * packtable_unref().
 */
int packtable_build(struct pack *const *packs, size_t npacks, size_t rawsz,
    struct packtable **out);

struct packtable *packtable_ref(struct packtable *t);
void packtable_unref(struct packtable *t);

/*
 * True, with *pack and *pos set, when one of the table's packs holds raw:
 * the first such pack in build order, and raw's position in its index.
 * *pack is valid as long as the table is. Memory only, no lock.
 */
bool packtable_find(const struct packtable *t, const unsigned char *raw,
    struct pack **pack, uint32_t *pos);

/* Bytes the slots take, for reports. */
size_t packtable_size(const struct packtable *t);

#endif
