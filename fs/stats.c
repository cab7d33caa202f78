/*
 * stats: per-thread counters. Counted by ops.c and view.c, summed when
 * .odbfs/stats is looked up, with the figures of the store and of the node
 * table.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "forge.h"
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

static const char *const names[STAT_NR] = {
	[STAT_LOOKUPS] = "lookups",
	[STAT_HITS] = "hits",
	[STAT_MISSES] = "misses",
	[STAT_OPENS] = "opens",
	[STAT_READS] = "reads",
	[STAT_BYTES] = "bytes_served",
	[STAT_REBUILDS] = "rebuilds",
	[STAT_ERRORS] = "errors",
	[STAT_PUSHES] = "pushes",
	[STAT_PUSHED_BYTES] = "bytes_pushed",
	[STAT_PREFETCHED_BYTES] = "bytes_prefetched",
	[STAT_SHARED] = "rebuilds_shared",
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

char *
stats_report(const struct odbfs *fs, size_t *len)
{
	uint64_t sums[STAT_NR];
	struct odb_stats st;
	size_t nodes, cells, repos, open;
	char *text = NULL;
	size_t cap = 0;
	FILE *f = open_memstream(&text, &cap);

	if (!f)
		return NULL;
	stats_sum(sums);
	for (int k = 0; fs->counters && k < STAT_NR; k++)
		sums[k] = atomic_load_explicit(&fs->counters[k],
		    memory_order_relaxed);
	node_count(&nodes, &cells);
	for (int k = 0; k < STAT_NR; k++)
		fprintf(f, "%s %llu\n", names[k], (unsigned long long)sums[k]);
	if (fs->odb) {
		odb_stats(fs->odb, &st);
		fprintf(f, "snapshots_published %llu\npacks %llu\n"
		    "loose_objects %llu\ncache_hits %llu\ncache_misses %llu\n",
		    (unsigned long long)st.snapshots,
		    (unsigned long long)st.packs, (unsigned long long)st.loose,
		    (unsigned long long)st.cache_hits,
		    (unsigned long long)st.cache_misses);
	}
	if (fs->forge && !fs->repo) {
		forge_count(fs, &repos, &open);
		fprintf(f, "repositories %zu\nrepositories_open %zu\n", repos,
		    open);
	}
	fprintf(f, "nodes %zu\ncells %zu\n", nodes, cells);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	*len = cap;
	return text;
}
