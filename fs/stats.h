/*
 * stats: the daemon's counters, shown in .odbfs/stats.
 *
 * Each thread counts into a slot of its own (taken on its first count),
 * with relaxed atomic stores that no other thread writes: no lock, no
 * shared cache line on the lookup path. A reader sums the slots without
 * locks; a sum read while threads count may be a few counts behind.
 */
#ifndef ODBFS_STATS_H
#define ODBFS_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>

#include "odbfs.h"

enum stat_id {
	STAT_LOOKUPS,		/* every lookup */
	STAT_HITS,		/* lookups of an object id that was there */
	STAT_MISSES,		/* lookups of an object id that was not */
	STAT_OPENS,
	STAT_READS,
	STAT_BYTES,		/* bytes served by read */
	STAT_REBUILDS,		/* objects rebuilt (inflated, deltas applied) */
	STAT_ERRORS,		/* replies with EIO */
	STAT_PUSHES,		/* files stored in the kernel's cache ahead */
	STAT_PUSHED_BYTES,
	STAT_PREFETCHED_BYTES,	/* of large objects, inflated ahead of reads */
	STAT_SHARED,		/* reads that waited for a push's rebuild */
	STAT_NR,		/* the counted ones; figures read follow */
	STAT_SNAPSHOTS = STAT_NR,	/* of a store: snapshots published */
	STAT_PACKS,
	STAT_LOOSE,
	STAT_CACHE_HITS,	/* delta base cache (shared in a mount of many) */
	STAT_CACHE_MISSES,
	STAT_REPOS,		/* of a mount of many: repositories listed */
	STAT_REPOS_OPEN,
	STAT_NODES,		/* of the node table: the mount's */
	STAT_CELLS,
	STAT_FIGURES
};

/*
 * What a figure is, for .odbfs/stats (name) and .odbfs/metrics (all of
 * it): one description of each.
 */
struct stats_figure {
	const char *name;
	const char *help;	/* one line */
	bool counter;		/* only grows, from 0 at each open; else a gauge */
};

extern const struct stats_figure stats_figures[STAT_FIGURES];

void stats_add(enum stat_id id, uint64_t n);

/*
 * Count from now on, on the calling thread, into counters (STAT_NR of
 * them) too: in a mount of many (forge.c), a repository's own or the
 * root's; NULL for none but the mount's.
 */
void stats_enter(_Atomic uint64_t *counters);

/* The sums over every thread, into sums[STAT_NR]. */
void stats_sum(uint64_t *sums);

/*
 * The figures of .odbfs/stats of fs into v[STAT_FIGURES], has[k] set for
 * each one it shows: see stats_report().
 */
void stats_gather(const struct odbfs *fs, uint64_t *v, bool *has);

/*
 * A store's figures, into v[STAT_SNAPSHOTS] to v[STAT_CACHE_MISSES] and
 * has[] the same.
 */
void stats_store(struct odb *odb, uint64_t *v, bool *has);

/*
 * .odbfs/stats of fs: one "name value" line per counter (fs's own
 * repository's in a mount of many, else the mount's), per store figure
 * (when fs has a store), per repository count (a mount of many's own)
 * and per node table figure (the mount's), malloc'd, *len bytes; NULL
 * when out of memory.
 */
char *stats_report(const struct odbfs *fs, size_t *len);

#endif
