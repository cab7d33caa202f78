/*
 * stats: per-thread counters, summed when .odbfs/stats is looked up, with
 * the figures of the store, of the node table and, in a mount of many,
 * of the roster.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "roster.h"
#include "node.h"
#include "stats.h"

/* More threads than this share the last slot, with atomic adds. */
#define SLOTS 256

struct slot {
	_Atomic uint64_t v[STAT_NR];
} __attribute__((aligned(64)));

static struct slot slots[SLOTS];
static atomic_uint used;
static _Thread_local struct slot *mine;
static _Thread_local unsigned mine_index;
/* stats_enter()'s: the repository's own counters, in a mount of many. */
static _Thread_local _Atomic uint64_t *repo_counters;

const struct stats_figure stats_figures[STAT_FIGURES] = {
	[STAT_LOOKUPS] = { "lookups", "Lookups of a name.", true },
	[STAT_HITS] = { "hits", "Lookups of an object id that was there.", true },
	[STAT_MISSES] = { "misses",
	    "Lookups of an object id that was not there.", true },
	[STAT_OPENS] = { "opens", "Files opened.", true },
	[STAT_READS] = { "reads", "Reads answered.", true },
	[STAT_BYTES] = { "bytes_served", "Bytes served by reads.", true },
	[STAT_REBUILDS] = { "rebuilds",
	    "Objects rebuilt: inflated, deltas applied.", true },
	[STAT_ERRORS] = { "errors", "Replies of EIO.", true },
	[STAT_PUSHES] = { "pushes",
	    "Files stored in the kernel's page cache ahead of reads.", true },
	[STAT_PUSHED_BYTES] = { "bytes_pushed",
	    "Bytes stored in the kernel's page cache ahead of reads.", true },
	[STAT_PREFETCHED_BYTES] = { "bytes_prefetched",
	    "Bytes of large objects inflated ahead of reads.", true },
	[STAT_SHARED] = { "rebuilds_shared",
	    "Reads that waited for a rebuild made ahead.", true },
	[STAT_SNAPSHOTS] = { "snapshots_published",
	    "Snapshots of the store published since it was opened.", true },
	[STAT_PACKS] = { "packs", "Packs in the current snapshot.", false },
	[STAT_LOOSE] = { "loose_objects",
	    "Loose objects in the current snapshot.", false },
	[STAT_CACHE_HITS] = { "cache_hits", "Delta base cache hits.", true },
	[STAT_CACHE_MISSES] = { "cache_misses", "Delta base cache misses.",
	    true },
	[STAT_REPOS] = { "repositories",
	    "Repositories listed under the root.", false },
	[STAT_REPOS_OPEN] = { "repositories_open", "Repositories open.",
	    false },
	[STAT_NODES] = { "nodes", "Nodes the kernel holds.", false },
	[STAT_CELLS] = { "cells", "Of the nodes, those held in the compact form of cells.", false },
};

void
stats_enter(_Atomic uint64_t *counters)
{
	repo_counters = counters;
}

void
stats_add(enum stat_id id, uint64_t n)
{
	if (repo_counters)
		atomic_fetch_add_explicit(&repo_counters[id], n,
		    memory_order_relaxed);
	if (!mine) {
		mine_index = atomic_fetch_add(&used, 1);
		if (mine_index >= SLOTS)
			mine_index = SLOTS - 1;
		mine = &slots[mine_index];
	}
	if (mine_index == SLOTS - 1)
		atomic_fetch_add_explicit(&mine->v[id], n,
		    memory_order_relaxed);
	else
		atomic_store_explicit(&mine->v[id], atomic_load_explicit(
		    &mine->v[id], memory_order_relaxed) + n,
		    memory_order_relaxed);
}

void
stats_sum(uint64_t *sums)
{
	for (size_t k = 0; k < STAT_NR; k++)
		sums[k] = 0;
	for (size_t i = 0; i < SLOTS; i++)
		for (size_t k = 0; k < STAT_NR; k++)
			sums[k] += atomic_load_explicit(&slots[i].v[k],
			    memory_order_relaxed);
}

void
stats_store(struct odb *odb, uint64_t *v, bool *has)
{
	struct odb_stats st;

	odb_stats(odb, &st);
	v[STAT_SNAPSHOTS] = st.snapshots;
	v[STAT_PACKS] = st.packs;
	v[STAT_LOOSE] = st.loose;
	v[STAT_CACHE_HITS] = st.cache_hits;
	v[STAT_CACHE_MISSES] = st.cache_misses;
	for (int k = STAT_SNAPSHOTS; k <= STAT_CACHE_MISSES; k++)
		has[k] = true;
}

void
stats_gather(const struct odbfs *fs, uint64_t *v, bool *has)
{
	size_t nodes, cells, repos, open;

	for (int k = 0; k < STAT_FIGURES; k++) {
		v[k] = 0;
		has[k] = k < STAT_NR;
	}
	stats_sum(v);
	for (int k = 0; fs->counters && k < STAT_NR; k++)
		v[k] = atomic_load_explicit(&fs->counters[k],
		    memory_order_relaxed);
	if (fs->odb)
		stats_store(fs->odb, v, has);
	if (fs->forge && !fs->repo) {
		roster_count(fs, &repos, &open);
		v[STAT_REPOS] = repos;
		v[STAT_REPOS_OPEN] = open;
		has[STAT_REPOS] = has[STAT_REPOS_OPEN] = true;
	}
	node_count(&nodes, &cells);
	v[STAT_NODES] = nodes;
	v[STAT_CELLS] = cells;
	has[STAT_NODES] = has[STAT_CELLS] = true;
}

char *
stats_report(const struct odbfs *fs, size_t *len)
{
	uint64_t v[STAT_FIGURES];
	bool has[STAT_FIGURES];
	char *text = NULL;
	size_t cap = 0;
	FILE *f = open_memstream(&text, &cap);

	if (!f)
		return NULL;
	stats_gather(fs, v, has);
	for (int k = 0; k < STAT_FIGURES; k++)
		if (has[k])
			fprintf(f, "%s %llu\n", stats_figures[k].name,
			    (unsigned long long)v[k]);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	*len = cap;
	return text;
}
