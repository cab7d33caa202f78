/*
 * history: commits and tags read through the odb, and the listings of
 * them (part of odb, its odb_* functions declared in odbstore/odb.h): the
 * commits the commit-graph names and those found by walking history
 * beside it, their trees, the tags the refs reach.
 *
 *   odb_list_commits()
 *     walk_update()          under walk_lock, when the refs or the graph
 *                            were published since the last walk: from
 *                            every ref, read commits until the graph's
 *                            or the last walk's (ODB_WALK_MAX at most)
 *     graph ids + walked ids, each kept if snapshot_find() has it
 *
 * Not on a lookup path: the first listing after a ref moved reads
 * objects.
 */
#define _LGPL_SOURCE	/* inline the RCU read side */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <urcu/urcu-memb.h>

#include "commit.h"
#include "commitgraph.h"
#include "log.h"
#include "odb.h"
#include "oid.h"
#include "refs.h"
#include "repo.h"

/* Ids in a growing array, with an open-addressing set over them. */
struct walked {
	uint64_t graphs, refreshes;	/* the publications it followed */
	size_t rawsz;
	unsigned char *ids;		/* n of them, in the order found */
	size_t n, alloc;
	uint32_t *slots;		/* index + 1 into ids; 0: empty */
	size_t nslots;			/* a power of two */
	bool capped;			/* a walk stopped at ODB_WALK_MAX */
	uint64_t checked;		/* the graph publication weighed */
	bool graph_ok;			/* it names only commits at hand */
};

void
odb_walked_free(struct walked *w)
{
	if (!w)
		return;
	free(w->ids);
	free(w->slots);
	free(w);
}

static size_t
slot_of(const struct walked *w, const unsigned char *raw)
{
	return (size_t)oid_prefix64(raw) & (w->nslots - 1);
}

/* Where raw is in w->ids, plus one; 0 if w does not hold it. */
static size_t
walked_index(const struct walked *w, const unsigned char *raw)
{
	if (!w->nslots)
		return 0;
	for (size_t s = slot_of(w, raw);; s = (s + 1) & (w->nslots - 1)) {
		uint32_t i = w->slots[s];

		if (!i || !memcmp(w->ids + (size_t)(i - 1) * w->rawsz, raw,
		    w->rawsz))
			return i;
	}
}

static bool
walked_has(const struct walked *w, const unsigned char *raw)
{
	return walked_index(w, raw) != 0;
}

/* Add raw, which it does not hold. */
static int
walked_add(struct walked *w, const unsigned char *raw)
{
	size_t s;

	if (w->n == w->alloc) {
		size_t na = w->alloc ? 2 * w->alloc : 1024;
		unsigned char *grown = realloc(w->ids, na * w->rawsz);

		if (!grown)
			return -ENOMEM;
		w->ids = grown;
		w->alloc = na;
	}
	if (2 * (w->n + 1) > w->nslots) {
		size_t ns = w->nslots ? 2 * w->nslots : 2048;
		uint32_t *grown = calloc(ns, sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		free(w->slots);
		w->slots = grown;
		w->nslots = ns;
		for (size_t i = 0; i < w->n; i++) {
			for (s = slot_of(w, w->ids + i * w->rawsz);
			    w->slots[s]; s = (s + 1) & (ns - 1))
				;
			w->slots[s] = (uint32_t)i + 1;
		}
	}
	memcpy(w->ids + w->n * w->rawsz, raw, w->rawsz);
	for (s = slot_of(w, raw); w->slots[s]; s = (s + 1) & (w->nslots - 1))
		;
	w->slots[s] = (uint32_t)++w->n;
	return 0;
}

/*
 * Does the graph name only objects the repository has? git writes it
 * after pruning, so one that names an absent id is stale or damaged,
 * and its parent links may pass over a commit it does not name: the walk
 * must not stop at its commits. Logged with the layer and offset.
 */
static bool
graph_trusted(struct odb *odb)
{
	struct snapshot *s = snap_enter(odb);
	struct commitgraph *g = graph_enter(odb);
	bool ok = true;

	for (size_t i = 0; g && ok && i < g->nlayers; i++) {
		const struct cg_layer *l = &g->layers[i];

		for (uint32_t j = 0; ok && j < l->nr; j++) {
			const unsigned char *id = l->oids + (size_t)j * g->rawsz;
			char hex[OID_HEXSZ_MAX + 1];

			if (snapshot_find(s, id, NULL))
				continue;
			oid_to_hex(hex, id, g->rawsz);
			log_msg(LOGL_WARN, "%s: offset %zu: names commit %s, "
			    "which the repository lacks: commits are listed "
			    "by walking history", l->path,
			    (size_t)(id - l->map), hex);
			ok = false;
		}
	}
	snap_exit();
	snap_exit();
	return ok;
}

static bool
in_graph(struct odb *odb, const unsigned char *raw)
{
	struct commitgraph *g = graph_enter(odb);
	uint32_t pos;
	bool yes = g && commitgraph_find(g, raw, &pos);

	snap_exit();
	return yes;
}

/* Ids still to visit. */
struct stack {
	unsigned char *ids;
	size_t n, alloc, rawsz;
};

static int
push(struct stack *st, const unsigned char *raw)
{
	if (st->n == st->alloc) {
		size_t na = st->alloc ? 2 * st->alloc : 256;
		unsigned char *grown = realloc(st->ids, na * st->rawsz);

		if (!grown)
			return -ENOMEM;
		st->ids = grown;
		st->alloc = na;
	}
	memcpy(st->ids + st->n++ * st->rawsz, raw, st->rawsz);
	return 0;
}

/* Push the commit a ref's id peels to; skip what is no commit. */
static int
push_tip(struct odb *odb, struct stack *st, const unsigned char *raw)
{
	unsigned char peeled[OID_RAWSZ_MAX];
	enum obj_type type;

	if (odb_peel(odb, raw, peeled, &type) < 0 || type != OBJ_COMMIT)
		return 0;
	return push(st, peeled);
}

/*
 * The header of object raw, which must be of type (else -ENOENT), as
 * commit_header_read() gives it, with the object's size; what names it
 * in log lines ("commit <hex>").
 */
static int
header_read(struct odb *odb, const unsigned char *raw, enum obj_type type,
    char *what, unsigned char **buf, size_t *len, uint64_t *size)
{
	size_t rawsz = odb->repo->rawsz;
	struct reader *r;
	int ret;

	*buf = NULL;
	sprintf(what, "%s ", object_type_name(type));
	oid_to_hex(what + strlen(what), raw, rawsz);
	if ((ret = odb_reader_open(odb, raw, &r)) < 0)
		return ret;
	*size = reader_info(r)->size;
	ret = reader_info(r)->type != type ? -ENOENT :
	    commit_header_read(r, what, buf, len);
	reader_close(r);
	return ret;
}

int
odb_commit_read(struct odb *odb, const unsigned char *raw, struct commit *c)
{
	char what[8 + OID_HEXSZ_MAX];
	unsigned char *buf;
	uint64_t size;
	size_t len;
	int ret;

	memset(c, 0, sizeof(*c));
	if ((ret = header_read(odb, raw, OBJ_COMMIT, what, &buf, &len,
	    &size)) == 0)
		ret = commit_parse(c, what, buf, len, size, odb->repo->rawsz);
	free(buf);
	if (ret < 0)
		commit_release(c);
	return ret;
}

int
odb_tag_read(struct odb *odb, const unsigned char *raw, struct tag *t)
{
	char what[8 + OID_HEXSZ_MAX];
	unsigned char *buf;
	uint64_t size;
	size_t len;
	int ret;

	memset(t, 0, sizeof(*t));
	if ((ret = header_read(odb, raw, OBJ_TAG, what, &buf, &len,
	    &size)) == 0)
		ret = tag_parse(t, what, buf, len, size, odb->repo->rawsz);
	free(buf);
	if (ret < 0)
		tag_release(t);
	return ret;
}

/* The parents of commit raw, pushed; a commit that cannot be read: none. */
static int
push_parents(struct odb *odb, struct stack *st, const unsigned char *raw)
{
	struct commit c;
	int ret;

	if (odb_is_shallow(odb, raw))
		return 0;
	ret = odb_commit_read(odb, raw, &c);
	for (size_t i = 0; ret == 0 && i < c.nparents; i++)
		ret = push(st, c.parents + i * st->rawsz);
	commit_release(&c);
	return ret == -ENOMEM ? ret : 0;
}

static void walked_sort(struct walked *w);

/*
 * Bring odb->walked up to the refs and graph published now: walk from
 * every ref and HEAD to the commits the graph or an earlier walk holds.
 * With walk_lock held.
 */
static int
walk_update(struct odb *odb)
{
	uint64_t graphs = atomic_load(&odb->graphs);
	uint64_t refreshes = atomic_load(&odb->refreshes);
	struct walked *w = odb->walked;
	size_t rawsz = odb->repo->rawsz, read = 0;
	struct stack st = { .rawsz = rawsz }, tips = { 0 };
	const struct refs *refs;
	int ret = 0;

	if (w && w->graphs == graphs && w->refreshes == refreshes)
		return 0;
	if (!w) {
		if (!(w = calloc(1, sizeof(*w))))
			return -ENOMEM;
		w->rawsz = rawsz;
		odb->walked = w;
	} else if (w->graphs != graphs) {
		/*
		 * The last walk stopped at the old graph's commits: what
		 * lies below them may be in no graph now (one deleted, or
		 * written for fewer commits). Walk again from scratch.
		 */
		w->n = 0;
		if (w->slots)
			memset(w->slots, 0, w->nslots * sizeof(*w->slots));
		w->capped = false;
	}
	if (w->checked != graphs) {
		w->graph_ok = graph_trusted(odb);
		w->checked = graphs;
	}
	/* The tips, copied: the refs are not held across reads. */
	tips.rawsz = rawsz;
	refs = odb_refs_get(odb);
	for (size_t i = 0; ret == 0 && i < refs->n; i++)
		ret = push(&tips, refs->v[i].id);
	if (ret == 0 && refs->head_detached)
		ret = push(&tips, refs->head_id);
	odb_refs_put(odb);
	for (size_t i = 0; ret == 0 && i < tips.n; i++)
		ret = push_tip(odb, &st, tips.ids + i * rawsz);
	free(tips.ids);
	while (ret == 0 && st.n) {
		const unsigned char *raw = st.ids + --st.n * rawsz;
		unsigned char id[OID_RAWSZ_MAX];

		if (walked_has(w, raw) || (w->graph_ok && in_graph(odb, raw)) ||
		    !odb_has(odb, raw))
			continue;
		if (read == ODB_WALK_MAX) {
			if (!w->capped)
				log_msg(LOGL_WARN, "%s: listing commits stops "
				    "at %zu read: write a commit-graph (git "
				    "commit-graph write --reachable)",
				    odb->repo->commondir, read);
			w->capped = true;
			break;
		}
		memcpy(id, raw, rawsz);
		if ((ret = walked_add(w, id)) == 0)
			ret = push_parents(odb, &st, id);
		read++;
	}
	free(st.ids);
	if (read)
		walked_sort(w);
	if (ret == 0) {
		w->graphs = graphs;
		w->refreshes = refreshes;
	}
	return ret;
}

/* Sort the walk's ids, for listing, and index them again. */
static void
walked_sort(struct walked *w)
{
	size_t rawsz = w->rawsz;

	qsort_r(w->ids, w->n, rawsz, oid_cmp_r, &rawsz);
	memset(w->slots, 0, w->nslots * sizeof(*w->slots));
	for (size_t i = 0; i < w->n; i++) {
		size_t s = slot_of(w, w->ids + i * rawsz);

		while (w->slots[s])
			s = (s + 1) & (w->nslots - 1);
		w->slots[s] = (uint32_t)i + 1;
	}
}

/*
 * Merge the sorted runs a (na ids) and b (nb) into out, each id once;
 * the number of ids written.
 */
static size_t
merge(const unsigned char *a, size_t na, const unsigned char *b, size_t nb,
    unsigned char *out, size_t rawsz)
{
	size_t i = 0, j = 0, k = 0;

	while (i < na || j < nb) {
		const unsigned char *next;

		if (j == nb || (i < na && memcmp(a + i * rawsz, b + j * rawsz,
		    rawsz) <= 0))
			next = a + i++ * rawsz;
		else
			next = b + j++ * rawsz;
		if (!k || memcmp(out + (k - 1) * rawsz, next, rawsz))
			memcpy(out + k++ * rawsz, next, rawsz);
	}
	return k;
}

/*
 * The ids of the sorted run ids (n of them) that the snapshot has,
 * merged into the k ids at *all: *all and *spare swap.
 */
static size_t
merge_present(const struct snapshot *s, const unsigned char *ids, size_t n,
    unsigned char **all, size_t k, unsigned char **spare, size_t rawsz)
{
	unsigned char *run = *spare + k * rawsz, *swap;
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		if (snapshot_find(s, ids + i * rawsz, NULL))
			memcpy(run + m++ * rawsz, ids + i * rawsz, rawsz);
	if (!k) {
		memcpy(*all, run, m * rawsz);
		return m;
	}
	k = merge(*all, k, run, m, *spare, rawsz);
	swap = *all;
	*all = *spare;
	*spare = swap;
	return k;
}

int
odb_list_commits(struct odb *odb, unsigned char **ids, size_t *n)
{
	size_t rawsz = odb->repo->rawsz, total, k = 0;
	struct commitgraph *g;
	struct snapshot *s;
	unsigned char *all = NULL, *spare = NULL;
	int ret;

	*ids = NULL;
	*n = 0;
	pthread_mutex_lock(&odb->walk_lock);
	if ((ret = walk_update(odb)) < 0)
		goto out;
	/* A pack went away while the snapshot was built: see odb_recheck(). */
	s = snap_enter(odb);
	if (s->vanished && !odb->frozen) {
		snap_exit();
		(void)odb_recheck(odb);
		s = snap_enter(odb);
	}
	g = graph_enter(odb);
	total = odb->walked->n + (g ? g->nr : 0);
	/*
	 * The runs hold total ids together: what is merged so far and the
	 * next run fit in one buffer of that size.
	 */
	if (!(all = malloc(total * rawsz + 1)) ||
	    !(spare = malloc(total * rawsz + 1))) {
		ret = -ENOMEM;
		snap_exit();
		snap_exit();
		goto out;
	}
	/* The walk's ids and each layer's are sorted runs: merged. */
	k = merge_present(s, odb->walked->ids, odb->walked->n, &all, k,
	    &spare, rawsz);
	for (size_t i = 0; g && i < g->nlayers; i++)
		k = merge_present(s, g->layers[i].oids, g->layers[i].nr, &all,
		    k, &spare, rawsz);
	if (g && commitgraph_shrank(g))
		log_msg(LOGL_ERROR, "%s: commit-graph shrank while listed",
		    g->layers[0].path);
	snap_exit();
	snap_exit();
	*ids = all;
	*n = k;
	all = NULL;
out:
	pthread_mutex_unlock(&odb->walk_lock);
	free(all);
	free(spare);
	return ret;
}

int
odb_commit_tree(struct odb *odb, const unsigned char *raw, unsigned char *tree)
{
	struct commitgraph *g = graph_enter(odb);
	struct commit c;
	struct cg_commit cc;
	uint32_t pos;
	int ret = -ENOENT;

	if (g && commitgraph_find(g, raw, &pos) &&
	    commitgraph_commit(g, pos, &cc) == 0) {
		memcpy(tree, cc.tree, g->rawsz);
		ret = 0;
	}
	snap_exit();
	if (ret == 0)
		return 0;
	if ((ret = odb_commit_read(odb, raw, &c)) == 0)
		memcpy(tree, c.tree, odb->repo->rawsz);
	commit_release(&c);
	return ret;
}

static bool
is_tree(struct odb *odb, const unsigned char *raw)
{
	struct objinfo info;

	return odb_info(odb, raw, &info) == 0 && info.type == OBJ_TREE;
}

int
odb_list_trees(struct odb *odb, unsigned char **ids, size_t *n)
{
	size_t rawsz = odb->repo->rawsz, nc, k = 0, bad = 0;
	char bad_hex[OID_HEXSZ_MAX + 1];
	unsigned char *commits;
	int ret;

	*ids = NULL;
	*n = 0;
	if ((ret = odb_list_commits(odb, &commits, &nc)) < 0)
		return ret;
	/*
	 * In place: the tree of the i-th commit goes at k <= i, if it is a
	 * tree: the graph's, or, when the graph names something else (a
	 * damaged or hostile graph, said once), the commit's own.
	 */
	for (size_t i = 0; i < nc; i++) {
		unsigned char c[OID_RAWSZ_MAX], *tree = commits + k * rawsz;
		struct commit cm;

		/* The tree may go where the commit's id was: copied first. */
		memcpy(c, commits + i * rawsz, rawsz);
		if (odb_commit_tree(odb, c, tree) < 0)
			continue;
		if (is_tree(odb, tree)) {
			k++;
			continue;
		}
		if (odb_commit_read(odb, c, &cm) == 0 &&
		    memcmp(cm.tree, tree, rawsz) && is_tree(odb, cm.tree)) {
			if (!bad)
				oid_to_hex(bad_hex, c, rawsz);
			bad++;
			memcpy(tree, cm.tree, rawsz);
			k++;
		}
		commit_release(&cm);
	}
	if (bad)
		log_once(LOGL_WARN, "%s: the commit-graph names for %zu "
		    "commits a tree that is none (the first %s): their trees "
		    "are read from them", odb->repo->commondir, bad, bad_hex);
	*ids = commits;
	*n = oid_sort_unique(commits, k, rawsz);
	return 0;
}

int
odb_list_tags(struct odb *odb, unsigned char **ids, size_t *n)
{
	size_t rawsz = odb->repo->rawsz;
	struct stack tips = { .rawsz = rawsz };
	/*
	 * Each tag descended from once, with the most peels left it was met
	 * with (left[]): refs to the tags of one chain cost the chain, not
	 * the chain times the refs.
	 */
	struct walked tags = { .rawsz = rawsz };
	uint16_t *left = NULL;
	const struct refs *refs;
	int ret = 0;

	*ids = NULL;
	*n = 0;
	refs = odb_refs_get(odb);
	for (size_t i = 0; ret == 0 && i < refs->n; i++)
		ret = push(&tips, refs->v[i].id);
	if (ret == 0 && refs->head_detached)
		ret = push(&tips, refs->head_id);
	odb_refs_put(odb);
	for (size_t i = 0; ret == 0 && i < tips.n; i++) {
		unsigned char id[OID_RAWSZ_MAX];
		struct objinfo info;
		struct tag t;

		memcpy(id, tips.ids + i * rawsz, rawsz);
		for (int depth = 0; ret == 0 && depth < PEEL_MAX_DEPTH;
		    depth++) {
			uint16_t more = (uint16_t)(PEEL_MAX_DEPTH - depth);
			size_t at = walked_index(&tags, id);

			if (at && left[at - 1] >= more)
				break;
			if (!at) {
				uint16_t *grown;

				if (odb_info(odb, id, &info) < 0 ||
				    info.type != OBJ_TAG)
					break;
				if ((ret = walked_add(&tags, id)) < 0)
					break;
				if (!(grown = realloc(left, tags.alloc *
				    sizeof(*left)))) {
					ret = -ENOMEM;
					break;
				}
				left = grown;
				at = tags.n;
			}
			left[at - 1] = more;
			if (odb_tag_read(odb, id, &t) < 0)
				break;
			memcpy(id, t.object, rawsz);
			tag_release(&t);
		}
	}
	free(tips.ids);
	free(tags.slots);
	free(left);
	if (ret < 0) {
		free(tags.ids);
		return ret;
	}
	*ids = tags.ids;
	*n = oid_sort_unique(tags.ids, tags.n, rawsz);
	return 0;
}
