/*
 * fuzz_commitgraph: commit-graph parsing and reading (store/commitgraph.c).
 * The input is one whole commit-graph file, tried as a sha1 (rawsz 20) and
 * as a sha256 (rawsz 32) graph, alone (commitgraph_from_memory()) and as
 * the layer of a chain with as many bases as its header says, holding 64
 * commits each (commitgraph_parse()), so that BASE chunks and parents
 * pointing into lower layers are reached too.
 *
 * A graph that parses must keep what the store promises: every chunk
 * inside the input, every id found where it is listed (the ids are
 * sorted and the fan-out counts them), every parent a position within
 * the graph, every EDGE run ending inside the chunk.
 */
#include <stdbool.h>
#include <string.h>

#include "commitgraph.h"
#include "fuzz.h"

/* Enough commits to cover a graph near -max_len, not to be slow on one. */
#define MAX_POSITIONS 2048

static void
layer_within(const struct cg_layer *l, const uint8_t *data, size_t size,
    size_t rawsz)
{
	FUZZ_CHECK(fuzz_within(l->fanout, CG_FANOUT_SIZE, data, size));
	FUZZ_CHECK(fuzz_within(l->oids, (size_t)l->nr * rawsz, data, size));
	FUZZ_CHECK(fuzz_within(l->cdat, (size_t)l->nr * (rawsz + 16), data,
	    size));
	FUZZ_CHECK(!l->edge || fuzz_within(l->edge, (size_t)l->nedge * 4,
	    data, size));
	FUZZ_CHECK(!l->nbases || fuzz_within(l->bases, l->nbases * rawsz,
	    data, size));
	FUZZ_CHECK(size >= rawsz);
}

static void
whole(const uint8_t *data, size_t size, size_t rawsz)
{
	struct commitgraph *g;
	unsigned char raw[32];
	uint32_t n, pos, p;

	if (commitgraph_from_memory(data, size, rawsz, &g) < 0)
		return;
	FUZZ_CHECK(g->nlayers == 1 && g->nr == g->layers[0].nr);
	layer_within(&g->layers[0], data, size, rawsz);
	n = g->nr < MAX_POSITIONS ? g->nr : MAX_POSITIONS;
	for (uint32_t k = 0; k < n; k++) {
		const unsigned char *id = commitgraph_oid(g, k);
		struct cg_commit c;

		FUZZ_CHECK(id && fuzz_within(id, rawsz, data, size));
		FUZZ_CHECK(commitgraph_find(g, id, &pos) && pos == k);
		FUZZ_CHECK(commitgraph_commit(g, k, &c) == 0);
		FUZZ_CHECK(c.nparents <= CG_MAX_PARENTS);
		FUZZ_CHECK(c.time >= 0 && c.time < (int64_t)1 << 34);
		for (uint32_t j = 0; j < c.nparents; j++) {
			FUZZ_CHECK(commitgraph_parent(g, k, j, &p) == 0);
			FUZZ_CHECK(p < g->nr);
			FUZZ_CHECK(j > 1 || p == c.parents[j]);
		}
		/* Neighbours of a present id: absent, or found as they are. */
		memcpy(raw, id, rawsz);
		raw[rawsz - 1] ^= 1;
		if (commitgraph_find(g, raw, &pos))
			FUZZ_CHECK(!memcmp(commitgraph_oid(g, pos), raw,
			    rawsz));
	}
	memset(raw, 0xff, sizeof(raw));
	if (commitgraph_find(g, raw, &pos))
		FUZZ_CHECK(!memcmp(commitgraph_oid(g, pos), raw, rawsz));
	FUZZ_CHECK(!commitgraph_oid(g, g->nr));
	commitgraph_free(g);
}

/* As the layer of a chain: its header's base count, 64 commits each. */
static void
layer(const uint8_t *data, size_t size, size_t rawsz)
{
	struct cg_layer l;
	unsigned nbases = size > 7 ? data[7] : 0;

	if (commitgraph_parse(&l, data, size, rawsz, 64 * nbases, nbases,
	    "fuzz.graph") < 0)
		return;
	layer_within(&l, data, size, rawsz);
	FUZZ_CHECK(l.base == 64 * nbases && l.nbases == nbases);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_quiet();
	whole(data, size, 20);
	whole(data, size, 32);
	layer(data, size, 20);
	layer(data, size, 32);
	return 0;
}
