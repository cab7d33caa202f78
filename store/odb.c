/*
 * odb: one repository's object database as a whole: opening it (the
 * repository, the delta base cache, the first snapshot, the refs and the
 * commit-graph) and closing it, what it was opened with, its settings
 * and statistics. Its parts each have a file: lookup.c (the snapshot and
 * the lookups in it, the refs handed to readers, and their publication),
 * graph.c (the commit-graph and the shallow file), history.c (commits and
 * tags read, the walk, the listings).
 */
#define _LGPL_SOURCE	/* inline the RCU read side */
#include <errno.h>
#include <stdlib.h>

#include "cache.h"
#include "commitgraph.h"
#include "odb.h"
#include "refs.h"
#include "repo.h"
#include "snapshot.h"

/* Only a wrapper: its cache is an odb's like any other. */
struct odb_cache {
	struct cache *c;
};

struct odb_cache *
odb_cache_new(size_t max_bytes)
{
	struct odb_cache *oc = malloc(sizeof(*oc));

	if (oc && !(oc->c = cache_new(max_bytes))) {
		free(oc);
		oc = NULL;
	}
	return oc;
}

void
odb_cache_free(struct odb_cache *oc)
{
	if (!oc)
		return;
	cache_free(oc->c);
	free(oc);
}

int
odb_open(const char *path, struct odb **out, const char **why)
{
	return odb_open_shared(path, NULL, out, why);
}

void
odb_cache_clear(struct odb_cache *oc)
{
	cache_clear(oc->c);
}

void
odb_shed(struct odb *odb)
{
	if (odb->own_cache)
		cache_clear(odb->cache);
}

int
odb_open_shared(const char *path, struct odb_cache *shared, struct odb **out,
    const char **why)
{
	struct odb *odb;
	int ret;

	*out = NULL;
	if (!(odb = calloc(1, sizeof(*odb)))) {
		*why = "out of memory";
		return -ENOMEM;
	}
	pthread_mutex_init(&odb->refresh_lock, NULL);
	pthread_mutex_init(&odb->walk_lock, NULL);
	if ((ret = repo_open(path, &odb->repo, why)) < 0)
		goto fail;
	if (shared) {
		odb->cache = shared->c;
	} else if ((odb->cache = cache_new(ODB_CACHE_BYTES))) {
		odb->own_cache = true;
	} else {
		*why = "out of memory";
		ret = -ENOMEM;
		goto fail;
	}
	if ((ret = snapshot_build(odb->repo, NULL, &odb->snap)) < 0) {
		*why = "cannot read its object directory";
		goto fail;
	}
	odb->snap->cache = odb->cache;
	if ((ret = odb_refs_load(odb->repo, NULL, &odb->refs)) < 0) {
		*why = "cannot read its references";
		goto fail;
	}
	/* Without a graph, listing commits walks history: not fatal. */
	if ((ret = odb_graph_reload(odb)) == -ENOMEM) {
		*why = "out of memory";
		goto fail;
	}
	*out = odb;
	return 0;
fail:
	odb_close(odb);
	return ret;
}

void
odb_close(struct odb *odb)
{
	if (!odb)
		return;
	snapshot_free(odb->snap);
	if (odb->own_cache)
		cache_free(odb->cache);
	refs_free(odb->refs);
	commitgraph_free(odb->graph);
	free(odb->shallow);
	odb_walked_free(odb->walked);
	repo_free(odb->repo);
	pthread_mutex_destroy(&odb->refresh_lock);
	pthread_mutex_destroy(&odb->walk_lock);
	free(odb);
}

const struct repo *
odb_repo(const struct odb *odb)
{
	return odb->repo;
}

size_t
odb_rawsz(const struct odb *odb)
{
	return odb_repo(odb)->rawsz;
}

const char *
odb_format(const struct odb *odb)
{
	return odb_repo(odb)->format;
}

const char *
odb_gitdir(const struct odb *odb)
{
	return odb_repo(odb)->gitdir;
}

const char *
odb_commondir(const struct odb *odb)
{
	return odb_repo(odb)->commondir;
}

void
odb_set_verify(struct odb *odb, bool verify)
{
	odb->verify = verify;
}

void
odb_set_frozen(struct odb *odb, bool frozen)
{
	odb->frozen = frozen;
}

void
odb_stats(struct odb *odb, struct odb_stats *st)
{
	struct snapshot *s = snap_enter(odb);

	st->packs = s->npacks;
	st->loose = s->loose.nr;
	snap_exit();
	st->snapshots = odb_generation(odb);
	cache_counts(odb->cache, &st->cache_hits, &st->cache_misses);
}
