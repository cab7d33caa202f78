/*
 * odb: what the store's own modules call of an odb beyond the public
 * odbstore/odb.h, which it includes: the watcher's side (publishing a
 * snapshot, the refs or the commit-graph anew; the object directories;
 * the repository itself), the commit-graph's answers for a walk; and the
 * odb's insides, which the files that make it share.
 */
#ifndef ODBFS_ODB_PRIVATE_H
#define ODBFS_ODB_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "odbstore/odb.h"

/* The repository, the store's own; valid until odb_close(). */
struct repo;
const struct repo *odb_repo(const struct odb *odb);

/* Read the references again and publish them. */
int odb_refs_reload(struct odb *odb);

/*
 * Commits one walk reads at most: six to ten seconds of reading at
 * 6-9 us a commit (below). A history longer than that needs a commit-graph
 * (git commit-graph write --reachable) to be listed whole.
 */
#define ODB_WALK_MAX ((size_t)1 << 20)

/*
 * What the commit-graph says of the commit raw: its committer time and
 * up to max parent ids (in parents, max * rawsz bytes; *nparents is
 * how many it has, which may be more than max). Memory only. -ENOENT
 * when no graph names raw (read the commit instead), -EFSCORRUPTED
 * (logged) when the graph changed in place.
 */
int odb_graph_commit(struct odb *odb, const unsigned char *raw,
    unsigned char *parents, size_t max, size_t *nparents, int64_t *time);

/*
 * Open the commit-graph again if its files changed (a few stat(2)s when
 * they did not) and publish it: the watcher's side, when it sees
 * objects/info/commit-graph or info/commit-graphs/ replaced.
 */
int odb_graph_reload(struct odb *odb);

struct snapshot_change;

/* Build a fresh snapshot from disk and publish it. */
int odb_refresh(struct odb *odb);

/*
 * Publish a snapshot with change applied to the current one; see
 * snapshot_update(). With reload_alternates, the object directories are
 * read again first (and everything rescanned).
 */
int odb_update(struct odb *odb, struct snapshot_change *change,
    bool reload_alternates);

/* Read the alternates again, without publishing a snapshot yet. */
int odb_reload_alternates(struct odb *odb);

/*
 * The object directories of the current snapshot, for the watcher: a
 * malloc'd array of malloc'd strings (free each and the array).
 */
int odb_objdirs(struct odb *odb, char ***dirs, size_t *n);


/*
 * The odb's insides, for the files that make it: odb.c (open, close,
 * settings), lookup.c (the snapshot, its lookups and publication, the
 * refs), graph.c (the commit-graph and the shallow file) and history.c
 * (reading commits and tags, the walk, the listings). Those files define
 * _LGPL_SOURCE before any include, so that the read side below is
 * inlined.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <urcu/urcu-memb.h>

#include "snapshot.h"

struct odb {
	struct repo *repo;
	struct cache *cache;		/* delta bases, shared by snapshots */
	bool own_cache;			/* not an odb_cache's */
	struct snapshot *snap;		/* RCU-protected */
	struct refs *refs;		/* RCU-protected */
	struct commitgraph *graph;	/* RCU-protected; NULL: none */
	struct shallow *shallow;	/* RCU-protected; NULL: not shallow */
	pthread_mutex_t refresh_lock;	/* one refresh at a time */
	uint64_t graph_stamp;		/* protected by refresh_lock */
	atomic_uint_least64_t graphs;	/* graphs published since open */
	atomic_uint_least64_t refreshes;	/* refs published since open */
	pthread_mutex_t walk_lock;	/* one walk at a time */
	struct walked *walked;		/* protected by walk_lock */
	atomic_uint_least64_t snapshots;	/* published since open */
	atomic_uint_least64_t scans;	/* begun since open */
	bool verify;			/* set before any reader runs */
	bool frozen;			/* set before any reader runs */
};

/*
 * ThreadSanitizer cannot see liburcu's barriers: tell it that publishing a
 * pointer releases what was built before and reading it acquires that.
 */
#if defined(__SANITIZE_THREAD__)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define PUBLISHED(addr) __tsan_release(addr)
#define SUBSCRIBED(addr) __tsan_acquire(addr)
/* And that a grace period orders every read-side section before it. */
extern char odb_grace;
#define READ_DONE() __tsan_release(&odb_grace)
#define GRACE_DONE() __tsan_acquire(&odb_grace)
#else
#define PUBLISHED(addr) ((void)0)
#define SUBSCRIBED(addr) ((void)0)
#define READ_DONE() ((void)0)
#define GRACE_DONE() ((void)0)
#endif

/*
 * Has this thread registered with liburcu (odb_register_thread(), on its
 * first read; it unregisters when it exits)?
 */
extern _Thread_local bool odb_registered;
void odb_register_thread(void);

/*
 * Begin a read-side section: the thread registered on its first, then
 * rcu_read_lock(). No system call after the first, no lock.
 */
static inline void
odb_read_lock(void)
{
	if (__builtin_expect(!odb_registered, 0))
		odb_register_thread();
	urcu_memb_read_lock();
}

/*
 * A read-side section over the current snapshot, or the commit-graph:
 * odb_read_lock() and rcu_dereference(); snap_exit() ends either.
 */
static inline struct snapshot *
snap_enter(struct odb *odb)
{
	odb_read_lock();
	SUBSCRIBED(&odb->snap);
	return rcu_dereference(odb->snap);
}

static inline void
snap_exit(void)
{
	READ_DONE();
	urcu_memb_read_unlock();
}

static inline struct commitgraph *
graph_enter(struct odb *odb)
{
	odb_read_lock();
	SUBSCRIBED(&odb->graph);
	return rcu_dereference(odb->graph);
}

/*
 * A lookup failed in a snapshot that may be behind the disk: rescan,
 * unless one begun since is published (lookup.c). Outside any read-side
 * section.
 */
int odb_recheck(struct odb *odb);

/*
 * The references, from whichever backend the repository uses now: asked
 * each time, as git refs migrate switches backends in place. As
 * refs_load().
 */
struct refs;
int odb_refs_load(const struct repo *repo, const struct refs *prev,
    struct refs **out);

/* Free the walk history.c keeps (odb->walked); NULL is nothing. */
struct walked;
void odb_walked_free(struct walked *w);

/*
 * Tags peeled at most: git peels any depth, but a chain this long is no
 * one's history.
 */
#define PEEL_MAX_DEPTH 256

#endif
