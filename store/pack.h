/*
 * pack: one packfile and its index, mapped read-only and shared by every
 * snapshot that lists it and every open file reading from it.
 *
 *   pack    := "PACK" be32 version(2|3) be32 nr  entry*  checksum[rawsz]
 *   entry   := type-and-size [base]  zlib-data
 *   type-and-size := 1ttt ssss { 1sss ssss }  0sss ssss   (size LE base-128)
 *   base    := OFS_DELTA: be base-128, +1 per continuation (negative offset)
 *              REF_DELTA: id[rawsz]
 *
 * A pack is reference counted: pack_ref()/pack_unref(); the last unref
 * unmaps it, so a pack git deleted keeps serving the readers that hold it
 * and gives its disk space back as soon as none does.
 */
#ifndef ODBFS_PACK_H
#define ODBFS_PACK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "idx.h"
#include "odbstore/object.h"

#define PACK_SIGNATURE "PACK"
#define PACK_HEADER_SIZE 12

struct pack {
	atomic_uint refs;
	uint64_t serial;	/* unique in the process, never reused */
	struct idx idx;
	struct map file;	/* the .pack file */
	const unsigned char *map;	/* file.base */
	size_t size;
	size_t end;		/* where entries stop: size - rawsz */
	unsigned dir;		/* which object directory it lives in */
	char *path;		/* the .pack path, for log lines */
	atomic_bool shrank;	/* pack_shrank() found it so */
	_Atomic uint64_t *types;	/* see pack_delta_type(); may be NULL */
	uint64_t types_mask;
};

/* A parsed entry header. data points into the pack mapping. */
struct pack_entry {
	uint64_t off;			/* where the entry starts */
	enum obj_type type;		/* may be OBJ_OFS_DELTA/OBJ_REF_DELTA */
	uint64_t size;			/* inflated size of this entry's data */
	uint64_t base_off;		/* OBJ_OFS_DELTA: the base's offset */
	const unsigned char *base_oid;	/* OBJ_REF_DELTA: the base's id */
	const unsigned char *data;	/* zlib stream */
	size_t datalen;			/* bytes from data to the entries' end */
};

/*
 * Open the pack at packpath with the index at idxpath. Symlinks are
 * followed, as git follows them, and anything but a regular file is
 * refused (logged) without blocking. On success *out holds one reference.
 */
int pack_open(const char *idxpath, const char *packpath, size_t rawsz,
    unsigned dir, struct pack **out);

/*
 * Did a read of either of p's files find its page gone? Then it logs which
 * file shrank and where, each time it says yes (a read that fails several
 * ways holds all but one line: log_hold()), and whatever was read from p
 * since is not to be trusted.
 */
bool pack_shrank(struct pack *p);

/* The same question, not logged: for the rescan's bookkeeping. */
bool pack_shrank_quietly(struct pack *p);

static inline struct pack *
pack_ref(struct pack *p)
{
	atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
	return p;
}

void pack_unref(struct pack *p);

/*
 * An offset the index could not give (already logged): pack_entry()
 * refuses it without a second line.
 */
#define PACK_OFF_BAD UINT64_MAX

/*
 * What the delta entry at off resolves to (the type of the whole object at
 * the bottom of its chain) and how many deltas its chain holds, from it
 * down, if remembered; else OBJ_NONE. Finding a delta's type otherwise
 * means parsing every entry of its chain: 25 on average in a pack of
 * history written by git's default --depth=50. The depth lets a walk
 * that stops here still refuse a chain deeper than OBJ_MAX_DELTA_DEPTH.
 *
 * Each pack remembers in a lossy table of 64-bit words, each
 * (offset + 1) << 17 | depth << 3 | type, written and read with relaxed
 * atomics: a word names its own offset, so a read never takes another
 * entry's, and a pack never changes, so what is remembered is never stale.
 */
enum obj_type pack_delta_type(const struct pack *p, uint64_t off,
    unsigned *depth);

/* Remember that the delta entry at off resolves to type, depth deltas. */
void pack_delta_type_set(struct pack *p, uint64_t off, enum obj_type type,
    unsigned depth);

/* Parse the entry header at off. */
int pack_entry(const struct pack *p, uint64_t off, struct pack_entry *e);

/* The same, from a bare buffer: for unit tests and fuzzing. */
int pack_entry_parse(const unsigned char *map, size_t end, size_t rawsz,
    uint64_t off, struct pack_entry *e, const char *name);

#endif
