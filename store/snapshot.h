/*
 * snapshot: an immutable view of the object database: the packs that were
 * there and the loose ids that were there when it was built.
 *
 * Readers find a snapshot through lookup.c with one atomic load and never
 * see it change; a refresh builds a new one (reusing the packs that did not
 * change) and publishes it. A lookup touches only memory: a bit filter, a
 * table over all packs' ids (or, without it, each pack's mapped index)
 * and the sorted loose set.
 */
#ifndef ODBFS_SNAPSHOT_H
#define ODBFS_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "cache.h"
#include "loose.h"
#include "pack.h"
#include "packtable.h"
#include "repo.h"

struct snapshot {
	size_t rawsz;
	struct pack **packs;	/* one reference each */
	size_t npacks;
	struct looseset loose;
	char **objdirs;		/* copies of the repository's, for loose reads */
	size_t nobjdirs;
	/*
	 * One bit for each value of an id's first filter_bits bits, set when
	 * some object's id begins so: a clear bit proves a miss with one
	 * memory access, however many packs there are.
	 */
	uint64_t *filter;
	unsigned filter_bits;
	/*
	 * Every pack's ids in one hash table (one reference), shared with
	 * prev when the list of packs is the same. NULL when it could not be
	 * built: lookups then search pack by pack.
	 */
	struct packtable *table;
	struct cache *cache;	/* the odb's delta base cache, or NULL */
	/*
	 * Which of the odb's scans built it (lookup.c counts them as they
	 * begin): a lookup that failed can tell whether the snapshot now
	 * published was begun after it, or has to be rebuilt.
	 */
	uint64_t scan;
	/*
	 * A pack went away while this snapshot was built: an index listed
	 * had lost its files by the time they were opened, or a pack of
	 * prev was no longer listed. git renames new packs in before it
	 * deletes the old ones, but a directory read racing with both may
	 * see neither, so an id missing from such a snapshot may exist: a
	 * lookup that misses must scan again before it says so (as git
	 * re-reads its pack directory after a miss), and the builder had
	 * better scan again at once. Passed on by updates that keep prev's
	 * packs.
	 */
	bool vanished;
	/*
	 * Packs found corrupt, as their two files were: not tried (nor
	 * logged) again until either file changes.
	 */
	struct skipped {
		char *path;		/* the .idx */
		struct fileid idx, pack;
	} *skipped;
	size_t nskipped;
};

/* Where an object is: in a pack at an offset, or loose in a directory. */
struct objloc {
	struct pack *pack;	/* NULL: loose; valid while the snapshot is */
	uint64_t off;
	unsigned dir;
	const unsigned char *id;	/* loose: its id, in the snapshot */
};

/*
 * Build a snapshot of repo's object directories. Packs of prev (may be
 * NULL) whose files did not change are shared rather than reopened, and
 * so is prev's pack table when the packs come out the same. Loose objects
 * are read before packs, as git does: an object that moves from loose to
 * a pack meanwhile is then seen in at least one of them.
 */
int snapshot_build(const struct repo *repo, const struct snapshot *prev,
    struct snapshot **out);
void snapshot_free(struct snapshot *s);

/* What changed on disk since a snapshot was built. */
struct snapshot_change {
	bool full;			/* rescan everything */
	bool packs;			/* some pack directory changed */
	struct loose_touch *touched;	/* loose files created or deleted */
	size_t ntouched;
};

/*
 * A new snapshot: prev with change applied. Packs are rescanned only when
 * change->packs says so (unchanged ones are shared), loose ids only where
 * touched, and before the packs; change->full rebuilds from scratch.
 */
int snapshot_update(const struct repo *repo, const struct snapshot *prev,
    struct snapshot_change *change, struct snapshot **out);

/*
 * True when the snapshot holds raw, with *loc set unless loc is NULL (a
 * bare existence check, which saves reading the offset). Memory only.
 */
bool snapshot_find(const struct snapshot *s, const unsigned char *raw,
    struct objloc *loc);

/*
 * The ids beginning with the nibbles hex digits in prefix (rawsz bytes,
 * zero-padded), each once, in ids (max of them at most): how many there
 * are, or max + 1 when there are more than max.
 */
size_t snapshot_find_prefix(const struct snapshot *s,
    const unsigned char *prefix, size_t nibbles, unsigned char *ids,
    size_t max);

/* Every id whose first byte is b, sorted and without duplicates. */
int snapshot_list(const struct snapshot *s, unsigned b, unsigned char **ids,
    size_t *nr);

/* True when some object's id begins with byte b. */
bool snapshot_has_prefix(const struct snapshot *s, unsigned b);

#endif
