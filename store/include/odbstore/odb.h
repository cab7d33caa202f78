/*
 * odb: the object database of one repository, as the FUSE layer and the
 * tools see it. The entry point of store/'s public headers
 * (store/include/odbstore/), the only ones fs/ and tools/ are compiled
 * against; the rest of store/ is its own.
 *
 * Thread-safe: any thread may call any function at any time. Lookups read
 * the current snapshot under an RCU read lock (liburcu's memb flavour: a
 * thread-local counter, no system call, no lock, no spin); a refresh
 * builds a new snapshot and publishes it with one atomic store, then waits
 * for readers of the old one before freeing it.
 */
#ifndef ODBFS_ODB_H
#define ODBFS_ODB_H

#include <stdbool.h>
#include <stddef.h>

#include "object.h"
#include "reader.h"

struct odb;

/* Bytes of rebuilt delta bases kept for reuse (git keeps 96 MiB). */
#define ODB_CACHE_BYTES ((size_t)64 << 20)

/*
 * Open the repository at path. On failure *why says why in a few words.
 * Free with odb_close(). The first open installs the store's SIGBUS
 * handler (map.h), which passes on any fault outside the store's own
 * mappings to the handler it replaced.
 */
int odb_open(const char *path, struct odb **out, const char **why);
void odb_close(struct odb *odb);

/*
 * A delta base cache for many odbs to share, within one budget: a mount
 * of many repositories holds 64 MiB of bases in all, not 64 MiB for each
 * repository open. Its keys are packs' serials, unique in the process
 * and never reused: one repository's bases are never another's, and a
 * closed pack's age out. NULL when out of memory.
 */
struct odb_cache;
struct odb_cache *odb_cache_new(size_t max_bytes);
/* After every odb that shares it is closed. */
void odb_cache_free(struct odb_cache *c);

/* Drop the bases c holds (the kernel let go of much: so does odbfs). */
void odb_cache_clear(struct odb_cache *c);

/*
 * odb_open(), keeping its delta bases in shared (NULL: a cache of its
 * own). Its stats' cache_hits and cache_misses are then shared's.
 */
int odb_open_shared(const char *path, struct odb_cache *shared,
    struct odb **out, const char **why);

/* Drop the delta bases odb keeps, unless an odb_cache it shares holds them. */
void odb_shed(struct odb *odb);

/* Bytes of an object id: 20 (sha1) or 32 (sha256). */
size_t odb_rawsz(const struct odb *odb);

/* Its hash as git names it: "sha1" or "sha256". */
const char *odb_format(const struct odb *odb);

/*
 * The git directory, absolute, as the user's path resolved, and the
 * common directory, where refs, config and objects live (they differ in
 * a linked worktree); valid until odb_close().
 */
const char *odb_gitdir(const struct odb *odb);
const char *odb_commondir(const struct odb *odb);

/*
 * True when the object exists: from memory, with no system call, unless
 * the snapshot saw a pack go away while it was built and the id is not in
 * it; then the object directory is rescanned (twice at most) before it
 * says no, so that git gc never makes an object seem missing.
 */
bool odb_has(struct odb *odb, const unsigned char *raw);

/* Type and size: 0, -ENOENT, -EFSCORRUPTED (logged), or another -errno. */
int odb_info(struct odb *odb, const unsigned char *raw, struct objinfo *info);

/*
 * The whole payload. *buf is malloc'd (free() it) and holds info->size
 * bytes; objects above OBJ_MAX_INMEM give -EFBIG.
 */
int odb_read(struct odb *odb, const unsigned char *raw, struct objinfo *info,
    unsigned char **buf);

/*
 * Follow tags from raw to what they finally point at: *type is that
 * object's type and peeled its id (raw itself when it is no tag).
 * As git: -EFSCORRUPTED (logged) for a tag whose object or type line is
 * bad or whose type line names another type than its object's; -ELOOP
 * past 256 tags of tags; -ENOENT when an object is missing.
 */
int odb_peel(struct odb *odb, const unsigned char *raw, unsigned char *peeled,
    enum obj_type *type);

/*
 * The header of commit raw, parsed into *c (commit.h: bounded whatever
 * the message's size): 0; -ENOENT when raw is missing or no commit; the
 * parser's -EFSCORRUPTED (logged) or the store's errors. On failure *c is
 * left empty; else commit_release() it.
 */
struct commit;
int odb_commit_read(struct odb *odb, const unsigned char *raw,
    struct commit *c);

/*
 * The tree of commit raw: from the commit-graph when it names raw (memory
 * only), else odb_commit_read()'s. 0, or its errors.
 */
int odb_commit_tree(struct odb *odb, const unsigned char *raw,
    unsigned char *tree);

/* The header of tag raw, as odb_commit_read() reads a commit's. */
struct tag;
int odb_tag_read(struct odb *odb, const unsigned char *raw, struct tag *t);

/*
 * Is suffix one or more of git's ancestry steps, "~N" and "^N" (N
 * optional), and nothing else?
 */
bool rev_suffix_ok(const char *suffix);

/*
 * The commit suffix names from id (a commit, or a tag of one), as git's
 * rev-parse reads "<id><suffix>" (store/rev.c): 0 with out set; -ENOENT
 * when a step has no such parent or id is no commit; -EINVAL for what
 * rev_suffix_ok() refuses; -E2BIG past REV_STEPS_MAX commits; the
 * store's errors.
 */
int odb_rev_suffix(struct odb *odb, const unsigned char *id,
    const char *suffix, unsigned char *out);

/*
 * The one object whose id begins with the hex digits in hex (len of
 * them, at least 4): 0 with raw set, -ENOENT, or -ENOTUNIQ. With types
 * 0, any object, in memory only; else one whose type t has the bit
 * 1 << t in types, among objects of other types, as git's disambiguation
 * hints take a prefix (<prefix>~1 names the one commit or tag): each
 * candidate's type is read (a microsecond or so each), and a prefix more
 * than 65 536 objects share is ambiguous.
 */
int odb_find_prefix(struct odb *odb, const char *hex, size_t len,
    unsigned types, unsigned char *raw);

/* odb_find_prefix()'s types: one bit per object type. */
#define ODB_TYPE(t) (1u << (t))

/*
 * The current references, valid until odb_refs_put() (an RCU read-side
 * section: do not block in between).
 */
struct refs;
const struct refs *odb_refs_get(struct odb *odb);
void odb_refs_put(struct odb *odb);

/*
 * Check every object opened from now on against its id (-o verify):
 * a mismatch makes odb_reader_open() fail with -EFSCORRUPTED.
 */
void odb_set_verify(struct odb *odb, bool verify);

/*
 * With frozen (-o refresh=never), a read that finds the snapshot stale
 * fails rather than rescanning: the view stays what it was at mount.
 */
void odb_set_frozen(struct odb *odb, bool frozen);

/* Open the object for reading; see reader.h. */
int odb_reader_open(struct odb *odb, const unsigned char *raw,
    struct reader **out);

/*
 * Every id whose first byte is b, sorted, each once. *ids is malloc'd
 * (free() it) and holds *nr ids of odb_repo()->rawsz bytes.
 */
int odb_list(struct odb *odb, unsigned b, unsigned char **ids, size_t *nr);

/* True when some object's id begins with byte b. */
bool odb_has_prefix(struct odb *odb, unsigned b);

/*
 * Every commit the store has that can be listed cheaply, sorted by id,
 * each once: *ids is malloc'd (free() it) and holds *n ids of
 * odb_repo()->rawsz bytes.
 *
 * They come from two places. The commit-graph (commitgraph.h) names most:
 * each id it holds that odb_has() finds (a graph may name commits gc
 * removed since; a hostile one may name any object, so a caller still
 * checks the type of what it shows). The rest, commits newer than the
 * graph, or all of them without one, are found by walking history from
 * every ref and HEAD, reading each commit not in the graph, down to the
 * graph's commits or to the commits an earlier walk found; at most
 * ODB_WALK_MAX (store/odb.h: a million) commits are read per walk
 * (logged once when that stops it). The walk is kept: after the refs are published anew, the next
 * call reads only the commits it has not seen; after the graph is, it
 * walks again from scratch (down to the new graph's commits).
 *
 * Cost, measured on 50 000 linear commits in one pack (2 loaded cores):
 * with a graph, 9-15 ms for the first call and 7-9 ms after (a look-up
 * per id; loading the 3 MB graph and checking it, about 10 ms, is the
 * watcher's); without one, 0.3-0.4 s for the first call (6-9 us per
 * commit read, against 0.5-0.8 s for git rev-list --all without its
 * graph and 0.2 s with it) and 11-17 ms after, as long as the refs only
 * gain commits. Commits that no ref reaches and no graph names are not
 * listed. Not for the lookup path: the first call after a ref moved
 * reads objects.
 */
int odb_list_commits(struct odb *odb, unsigned char **ids, size_t *n);

/*
 * The tree of every commit odb_list_commits() lists, sorted, each once,
 * as it gives commits: from the commit-graph for the commits it names,
 * else by reading each commit (6-9 us each); each one the repository has
 * as a tree. Subtrees are not listed.
 */
int odb_list_trees(struct odb *odb, unsigned char **ids, size_t *n);

/*
 * Every tag object a ref or HEAD reaches, tags of tags included, sorted,
 * each once: an odb_info() per ref and a read per tag. A tag no ref
 * reaches is not listed.
 */
int odb_list_tags(struct odb *odb, unsigned char **ids, size_t *n);

/*
 * Is raw one of the commits the shallow file names (a shallow clone's
 * boundary)? git takes such a commit for a root: no parent is followed
 * from it, whatever it names, and a shallow repository's commit-graph is
 * not used. Memory only; the watcher reads the file again when it
 * changes (git fetch --deepen, --unshallow).
 */
bool odb_is_shallow(struct odb *odb, const unsigned char *raw);

/* What the store has done and holds, for statistics. */
struct odb_stats {
	uint64_t snapshots;	/* snapshots published since open */
	uint64_t packs;		/* packs in the current snapshot */
	uint64_t loose;		/* loose objects in it */
	uint64_t cache_hits;	/* delta base cache */
	uint64_t cache_misses;
};

void odb_stats(struct odb *odb, struct odb_stats *st);

/*
 * How many snapshots have been published since open: a number that
 * changes whenever what the store holds may have. One atomic load.
 */
uint64_t odb_generation(struct odb *odb);

/*
 * Has a snapshot been published since odb_generation() said gen? After a
 * full barrier, so that of a miss noted before the call (fs/miss.h) and
 * a publication counted after gen, at least one sees the other: either
 * the watcher's sweep after the publication finds the note, or this is
 * true and the lookup can be tried again. One fence and one load.
 */
bool odb_moved(struct odb *odb, uint64_t gen);

#endif
