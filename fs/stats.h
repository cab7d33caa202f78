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

#include <stddef.h>
#include <stdint.h>

#include "odbstore/odb.h"

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
	STAT_NR
};

void stats_add(enum stat_id id, uint64_t n);

/* The sums over every thread, into sums[STAT_NR]. */
void stats_sum(uint64_t *sums);

/*
 * .odbfs/stats: one "name value" line per counter, per store figure and
 * per node table figure, malloc'd, *len bytes; NULL when out of memory.
 */
char *stats_report(struct odb *odb, size_t *len);

#endif
