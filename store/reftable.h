/*
 * reftable: git's reftable reference backend (extensions.refStorage =
 * reftable; git's Documentation/technical/reftable.adoc), read into the
 * same struct refs as the files backend, so that nothing that reads the
 * list knows which backend a repository uses.
 *
 *   $GIT_DIR/reftable/tables.list   one table file name a line, oldest
 *                                   first; replaced by rename
 *   table  := header ref_block* ref_index* obj_block* obj_index*
 *             log_block* log_index* footer
 *   header := "REFT" u8(version 1|2) u24(block_size)
 *             u64(min_update_index) u64(max_update_index) [u32(hash_id)]
 *   block  := u8(type) u24(block_len) record+ u24(restart_offset)+
 *             u16(restart_count) padding?
 *   ref record := varint(prefix_len) varint(suffix_len << 3 | type)
 *             suffix varint(update_index_delta) value
 *             type 0 deletion, 1 id, 2 id peeled, 3 varint(len) target
 *   footer := header u64(ref_index_position)
 *             u64(obj_position << 5 | obj_id_len) u64(obj_index_position)
 *             u64(log_position) u64(log_index_position) u32(CRC-32)
 *
 * The first block shares its bytes with the header (its block_len and
 * restart offsets count from the start of the file). Integers are big
 * endian; varints are the ofs-delta encoding of packs. Only ref blocks
 * are read, and the ref index, which is checked against them; obj and
 * log blocks are never looked at.
 *
 * A newer table's record of a name replaces an older one's; a deletion
 * record hides the name. A table that fails any check costs the whole
 * stack its refs (git loads no such stack), with one log line naming it
 * and the offset.
 */
#ifndef ODBFS_REFTABLE_H
#define ODBFS_REFTABLE_H

#include <stddef.h>
#include <stdint.h>

#include "oid.h"
#include "refs.h"
#include "repo.h"

/* Format constants (see above). */
#define REFTABLE_MAGIC "REFT"
#define REFTABLE_HEADER_V1 24
#define REFTABLE_HEADER_V2 28
#define REFTABLE_FOOTER_V1 68
#define REFTABLE_FOOTER_V2 72
#define REFTABLE_HASH_SHA1 0x73686131u	/* "sha1" */
#define REFTABLE_HASH_SHA256 0x73323536u	/* "s256" */

#define REFTABLE_BLOCK_REF 'r'
#define REFTABLE_BLOCK_INDEX 'i'
#define REFTABLE_BLOCK_OBJ 'o'
#define REFTABLE_BLOCK_LOG 'g'

enum reftable_value {
	REFTABLE_DELETION = 0,
	REFTABLE_VAL1 = 1,		/* id */
	REFTABLE_VAL2 = 2,		/* id, then the id it peels to */
	REFTABLE_SYMREF = 3,		/* target name */
};

/*
 * A table larger is refused: git writes about 40 bytes a ref, so this is
 * some 25 million refs, whose records would all be held in memory. The
 * table itself is mapped, not read: its size costs only the pages parsed.
 */
#define REFTABLE_MAX_FILE ((size_t)1 << 30)

/* Index levels followed at most: git writes one or two. */
#define REFTABLE_MAX_INDEX_DEPTH 8

struct reftable_rec {
	char *name;			/* malloc'd */
	char *target;			/* REFTABLE_SYMREF: malloc'd */
	uint64_t update_index;
	enum reftable_value type;
	unsigned char id[OID_RAWSZ_MAX];	/* VAL1, VAL2 */
	unsigned char peeled[OID_RAWSZ_MAX];	/* VAL2 */
};

struct reftable_table {
	uint64_t min_update_index, max_update_index;
	struct reftable_rec *v;		/* sorted by name, no duplicates */
	size_t n;
};

/*
 * Parse the table held in buf (len bytes) for an object format of rawsz
 * bytes: every ref record, checked. path names the table in the one log
 * line a failure gives; the failure is -EFSCORRUPTED (or -ENOMEM), with
 * nothing in *out. Release *out with reftable_table_release().
 */
int reftable_parse(const unsigned char *buf, size_t len, size_t rawsz,
    const char *path, struct reftable_table *out);
void reftable_table_release(struct reftable_table *t);

/*
 * Read the stack of repo->commondir/reftable (HEAD from repo->gitdir's,
 * for a linked worktree) into a refs list as refs_load() returns it. prev
 * is the list this one replaces, or NULL, as for refs_load(). A stack
 * with a table that cannot be read gives an empty list (no HEAD), logged.
 */
int reftable_load(const struct repo *repo, const struct refs *prev,
    struct refs **out);

#endif
