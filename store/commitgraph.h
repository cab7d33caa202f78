/*
 * commitgraph: git's commit-graph files (gitformat-commit-graph), read-only:
 * the single objects/info/commit-graph, or the split chain
 * objects/info/commit-graphs/commit-graph-chain naming graph-<hash>.graph
 * layers, base first. sha1 and sha256.
 *
 *   header:  "CGPH"  version 1  hash version (1 sha1, 2 sha256)
 *            C (chunks)  B (base graphs)
 *   table:   (C + 1) * { be32 id, be64 offset }   the last one ends it
 *   chunks:  OIDF  256 * be32          fanout[b]: ids with first byte <= b
 *            OIDL  N * id[H]           sorted
 *            CDAT  N * { tree[H], be32 parent1, be32 parent2,
 *                        be32 generation << 2 | time >> 32, be32 time }
 *            EDGE  be32 *              optional: parents 2.. of octopuses
 *            BASE  B * id[H]           a layer's bases, by checksum
 *            (GDA2, GDO2, BIDX, BDAT: not read)
 *   trailer: checksum[H]               a layer's name in the chain
 *
 * A parent is a position in the whole chain: layer i's commit k is at
 * position k + the commits of layers 0..i-1. CG_NO_PARENT is none; a
 * parent2 with CG_EDGE_BIT set indexes EDGE, whose run of positions ends
 * at the one with CG_EDGE_BIT set.
 *
 * Every layer is mapped read-only through map.h and checked whole when it
 * is opened: the table of contents, each chunk's size against N and the
 * file, the fan-out against the sorted ids, every parent position and
 * EDGE run. A layer that fails is logged once (file and offset) and left
 * out with the layers above it; the valid layers below stay. Accessors
 * clamp what they read again, as the mapping may change in place.
 *
 * A graph names the commits that were there when git wrote it: after a
 * gc some may be gone, and a hostile graph may name any id. Callers check
 * each id against the object store (odb_has()) before they show it.
 */
#ifndef ODBFS_COMMITGRAPH_H
#define ODBFS_COMMITGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "map.h"

#define CG_SIGNATURE "CGPH"
#define CG_HEADER 8
#define CG_TOC_ENTRY 12
#define CG_FANOUT_SIZE (256 * 4)
#define CG_NO_PARENT 0x70000000u
#define CG_EDGE_BIT 0x80000000u
/*
 * Positions at and above CG_NO_PARENT would be read as "no parent": no
 * graph may hold that many commits (git's own limit is near it).
 */
#define CG_MAX_COMMITS CG_NO_PARENT
/* Layers in a chain: git merges layers long before (--split's factor 2). */
#define CG_MAX_LAYERS 512
/*
 * Parents of one commit read from EDGE: as COMMIT_PARENTS_MAX (commit.h)
 * for a commit object; it also bounds what a hostile EDGE chunk, with
 * every octopus pointing into one long run, costs to check.
 */
#define CG_MAX_PARENTS 1024

struct cg_layer {
	struct map file;		/* NULL base: parsed from memory */
	const unsigned char *map;	/* the file, read-only */
	size_t size;
	char *path;			/* for log lines */
	uint32_t nr;			/* commits in this layer */
	uint32_t base;			/* commits in the layers below */
	const unsigned char *fanout;	/* OIDF */
	const unsigned char *oids;	/* OIDL */
	const unsigned char *cdat;	/* CDAT */
	const unsigned char *edge;	/* EDGE, or NULL */
	uint32_t nedge;
	const unsigned char *bases;	/* BASE: its B checksums, or NULL */
	unsigned nbases;
};

struct commitgraph {
	size_t rawsz;
	struct cg_layer *layers;	/* [0] is the base */
	size_t nlayers;
	uint32_t nr;			/* commits in all layers */
};

/* One commit as the graph records it. */
struct cg_commit {
	uint32_t parents[2];		/* positions; CG_NO_PARENT: none */
	uint32_t nparents;		/* all of them, EDGE included */
	int64_t time;			/* committer time, 34 bits */
	uint32_t generation;		/* topological level */
	const unsigned char *tree;	/* in the mapping */
};

/*
 * Check size bytes at map as one layer whose bases hold base commits
 * (and whose BASE chunk, if nbases is not 0, must list nbases
 * checksums), and describe it in *l. Pointers in *l point into map.
 * name is for log lines. -EFSCORRUPTED, logged; -ENOTSUP (logged) for
 * another hash or version. Memory only: the fuzz target's entry.
 */
int commitgraph_parse(struct cg_layer *l, const unsigned char *map,
    size_t size, size_t rawsz, uint32_t base, unsigned nbases,
    const char *name);

/*
 * Open the graph of the object directory objdir, as git does: the single
 * file first, else the chain. -ENOENT when there is neither (or when
 * neither yields one valid layer: logged), -ENOMEM. Free with
 * commitgraph_free(); pointers into it stay valid until then.
 */
int commitgraph_open(const char *objdir, size_t rawsz,
    struct commitgraph **out);

/*
 * A graph of one layer parsed from size bytes at map (which must outlive
 * it), for tests and the fuzz target.
 */
int commitgraph_from_memory(const unsigned char *map, size_t size,
    size_t rawsz, struct commitgraph **out);

void commitgraph_free(struct commitgraph *g);

/* The id at position pos (< g->nr), in the mapping. */
const unsigned char *commitgraph_oid(const struct commitgraph *g,
    uint32_t pos);

/* True, with *pos set, when the graph holds raw. */
bool commitgraph_find(const struct commitgraph *g, const unsigned char *raw,
    uint32_t *pos);

/*
 * The commit at pos (< g->nr). parents[] holds the first two; the others
 * come from commitgraph_parent(). -EFSCORRUPTED (logged) when the mapping
 * changed since it was checked.
 */
int commitgraph_commit(const struct commitgraph *g, uint32_t pos,
    struct cg_commit *c);

/*
 * The nth parent's position of the commit at pos (n < its nparents).
 * -EFSCORRUPTED (logged) when the mapping no longer says.
 */
int commitgraph_parent(const struct commitgraph *g, uint32_t pos, uint32_t n,
    uint32_t *parent);

/* True when some read found a layer's file shrunk since it was mapped. */
bool commitgraph_shrank(const struct commitgraph *g);

#endif
