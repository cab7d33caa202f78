/*
 * commitgraph: reading git's commit-graph files, when the repository is
 * opened and whenever a graph is replaced; the result is published like
 * a snapshot (graph.c) and read from memory (the mapped layers) only.
 * Calls map.c, file.c (the chain file), oid.c and log.c, nothing else of
 * the store.
 *
 *   commitgraph_open(objdir)
 *     layer_open("info/commit-graph")            the single file, or
 *     read_chain("info/commit-graphs/...")       one line per layer
 *       layer_open("graph-<hash>.graph") ...     base first; stops at the
 *                                                first that fails
 *         commitgraph_parse()                    everything checked here
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "be.h"
#include "commitgraph.h"
#include "file.h"
#include "log.h"
#include "oid.h"
#include "repo.h"

#define ID(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | \
	(uint32_t)(c) << 8 | (uint32_t)(d))
#define CHUNK_OIDF ID('O', 'I', 'D', 'F')
#define CHUNK_OIDL ID('O', 'I', 'D', 'L')
#define CHUNK_CDAT ID('C', 'D', 'A', 'T')
#define CHUNK_EDGE ID('E', 'D', 'G', 'E')
#define CHUNK_BASE ID('B', 'A', 'S', 'E')

/* The chain file: CG_MAX_LAYERS lines of the longest id. */
#define CG_CHAIN_MAX (CG_MAX_LAYERS * (OID_HEXSZ_MAX + 1))

static size_t
cdat_size(size_t rawsz)
{
	return rawsz + 16;
}

/* Check every parent of commit k (at cdat) against limit positions. */
static int
check_parents(const struct cg_layer *l, uint32_t k, uint32_t limit,
    size_t rawsz, const char *name)
{
	const unsigned char *cd = l->cdat + (size_t)k * cdat_size(rawsz);
	size_t at = (size_t)(cd - l->map) + rawsz;
	uint32_t p1 = be32(cd + rawsz), p2 = be32(cd + rawsz + 4);

	if (p1 != CG_NO_PARENT && p1 >= limit)
		return log_corrupt("%s: commit %u's parent %u is beyond the "
		    "%u commits (offset %zu)", name, k, p1, limit, at);
	if (p2 == CG_NO_PARENT)
		return 0;
	if (!(p2 & CG_EDGE_BIT)) {
		if (p2 >= limit)
			return log_corrupt("%s: commit %u's parent %u is "
			    "beyond the %u commits (offset %zu)", name, k, p2,
			    limit, at + 4);
		return 0;
	}
	for (uint32_t j = p2 & ~CG_EDGE_BIT, n = 2;; j++, n++) {
		uint32_t e;

		if (!l->edge || j >= l->nedge)
			return log_corrupt("%s: commit %u's parents run past "
			    "the %u extra edges (offset %zu)", name, k,
			    l->nedge, at + 4);
		if (n > CG_MAX_PARENTS)
			return log_corrupt("%s: commit %u has more than %u "
			    "parents (offset %zu)", name, k, CG_MAX_PARENTS,
			    (size_t)(l->edge - l->map) + 4 * (size_t)j);
		e = be32(l->edge + 4 * (size_t)j);
		if ((e & ~CG_EDGE_BIT) >= limit)
			return log_corrupt("%s: commit %u's parent %u is "
			    "beyond the %u commits (offset %zu)", name, k,
			    e & ~CG_EDGE_BIT, limit,
			    (size_t)(l->edge - l->map) + 4 * (size_t)j);
		if (e & CG_EDGE_BIT)
			return 0;
	}
}

/* The fan-out counts the sorted ids, each in its first byte's bucket. */
static int
check_ids(const struct cg_layer *l, size_t rawsz, const char *name)
{
	uint32_t prev = 0;

	for (unsigned b = 0; b < 256; b++) {
		uint32_t n = be32(l->fanout + 4 * b);

		if (n < prev)
			return log_corrupt("%s: fan-out decreases at byte %u "
			    "(offset %zu)", name, b,
			    (size_t)(l->fanout - l->map) + 4 * b);
		prev = n;
	}
	for (uint32_t k = 0; k < l->nr; k++) {
		const unsigned char *id = l->oids + (size_t)k * rawsz;
		unsigned b = id[0];
		uint32_t lo = b ? be32(l->fanout + 4 * (b - 1)) : 0;
		uint32_t hi = be32(l->fanout + 4 * b);

		if (k && memcmp(id - rawsz, id, rawsz) >= 0)
			return log_corrupt("%s: commit ids not sorted at %u "
			    "(offset %zu)", name, k, (size_t)(id - l->map));
		if (k < lo || k >= hi)
			return log_corrupt("%s: fan-out does not count commit "
			    "%u (offset %zu)", name, k, (size_t)(id - l->map));
	}
	return 0;
}

int
commitgraph_parse(struct cg_layer *l, const unsigned char *map, size_t size,
    size_t rawsz, uint32_t base, unsigned nbases, const char *name)
{
	const unsigned char *oidl = NULL, *cdat = NULL;
	uint64_t oidl_len = 0, cdat_len = 0, base_len = 0, data_end;
	unsigned nchunks, seen = 0;
	size_t toc_end;
	int ret;

	memset(l, 0, sizeof(*l));
	l->map = map;
	l->size = size;
	l->base = base;
	if (size < CG_HEADER + CG_TOC_ENTRY + rawsz)
		return log_corrupt("%s: commit-graph is too small (%zu bytes, "
		    "offset 0)", name, size);
	if (memcmp(map, CG_SIGNATURE, 4))
		return log_corrupt("%s: no commit-graph signature (offset 0)",
		    name);
	if (map[4] != 1) {
		log_msg(LOGL_WARN, "%s: commit-graph version %u unknown "
		    "(offset 4): graph left out", name, map[4]);
		return -ENOTSUP;
	}
	if (map[5] != (rawsz == OID_RAWSZ_SHA1 ? 1 : 2)) {
		log_msg(LOGL_WARN, "%s: commit-graph of hash version %u in a "
		    "%s repository (offset 5): graph left out", name, map[5],
		    rawsz == OID_RAWSZ_SHA1 ? "sha1" : "sha256");
		return -ENOTSUP;
	}
	nchunks = map[6];
	if (map[7] != nbases)
		return log_corrupt("%s: %u base graphs where its chain has %u "
		    "(offset 7)", name, map[7], nbases);
	toc_end = CG_HEADER + ((size_t)nchunks + 1) * CG_TOC_ENTRY;
	data_end = size - rawsz;
	if (toc_end > data_end)
		return log_corrupt("%s: table of %u chunks runs past the end "
		    "(offset %d)", name, nchunks, CG_HEADER);
	for (unsigned i = 0; i < nchunks; i++) {
		const unsigned char *e = map + CG_HEADER + i * CG_TOC_ENTRY;
		uint32_t id = be32(e);
		uint64_t off = be64(e + 4), next = be64(e + 4 + CG_TOC_ENTRY);
		unsigned bit;
		size_t at = CG_HEADER + i * CG_TOC_ENTRY;

		if (id == 0)
			return log_corrupt("%s: table of contents ends at "
			    "chunk %u of %u (offset %zu)", name, i, nchunks,
			    at);
		if (off < toc_end || next < off || next > data_end)
			return log_corrupt("%s: chunk %u spans [%llu, %llu), "
			    "outside the data [%zu, %llu) (offset %zu)", name,
			    i, (unsigned long long)off,
			    (unsigned long long)next, toc_end,
			    (unsigned long long)data_end, at + 4);
		switch (id) {
		case CHUNK_OIDF: bit = 1; break;
		case CHUNK_OIDL: bit = 2; break;
		case CHUNK_CDAT: bit = 4; break;
		case CHUNK_EDGE: bit = 8; break;
		case CHUNK_BASE: bit = 16; break;
		default: continue;	/* GDA2, BIDX...: not read */
		}
		if (seen & bit)
			return log_corrupt("%s: chunk %u repeats an id "
			    "(offset %zu)", name, i, at);
		seen |= bit;
		switch (id) {
		case CHUNK_OIDF:
			if (next - off != CG_FANOUT_SIZE)
				return log_corrupt("%s: fan-out chunk of %llu "
				    "bytes (offset %zu)", name,
				    (unsigned long long)(next - off), at + 4);
			l->fanout = map + off;
			break;
		case CHUNK_OIDL:
			oidl = map + off;
			oidl_len = next - off;
			break;
		case CHUNK_CDAT:
			cdat = map + off;
			cdat_len = next - off;
			break;
		case CHUNK_EDGE:
			if ((next - off) % 4 || (next - off) / 4 > UINT32_MAX)
				return log_corrupt("%s: extra edge chunk of "
				    "%llu bytes (offset %zu)", name,
				    (unsigned long long)(next - off), at + 4);
			l->edge = map + off;
			l->nedge = (uint32_t)((next - off) / 4);
			break;
		case CHUNK_BASE:
			l->bases = map + off;
			base_len = next - off;
			break;
		}
	}
	if ((seen & 7) != 7)
		return log_corrupt("%s: no %s chunk (offset %d)", name,
		    !(seen & 1) ? "fan-out" : !(seen & 2) ? "id" : "commit data",
		    CG_HEADER);
	l->nr = be32(l->fanout + 4 * 255);
	if (l->nr > CG_MAX_COMMITS - base)
		return log_corrupt("%s: %u commits over %u in its bases are "
		    "too many (offset %zu)", name, l->nr, base,
		    (size_t)(l->fanout - map) + 4 * 255);
	if (oidl_len != (uint64_t)l->nr * rawsz)
		return log_corrupt("%s: id chunk of %llu bytes for %u commits "
		    "(offset %zu)", name, (unsigned long long)oidl_len, l->nr,
		    (size_t)(oidl - map));
	if (cdat_len != (uint64_t)l->nr * cdat_size(rawsz))
		return log_corrupt("%s: commit data chunk of %llu bytes for %u "
		    "commits (offset %zu)", name, (unsigned long long)cdat_len,
		    l->nr, (size_t)(cdat - map));
	if (nbases && (!l->bases || base_len != (uint64_t)nbases * rawsz))
		return log_corrupt("%s: base chunk of %llu bytes for %u bases "
		    "(offset %d)", name, (unsigned long long)base_len, nbases,
		    CG_HEADER);
	l->nbases = nbases;
	if (!nbases)
		l->bases = NULL;
	l->oids = oidl;
	l->cdat = cdat;
	if ((ret = check_ids(l, rawsz, name)) < 0)
		return ret;
	for (uint32_t k = 0; k < l->nr; k++)
		if ((ret = check_parents(l, k, base + l->nr, rawsz, name)) < 0)
			return ret;
	return 0;
}

/* Map the layer at path and parse it; close with layer_close(). */
static int
layer_open(struct cg_layer *l, const char *path, size_t rawsz, uint32_t base,
    unsigned nbases)
{
	struct map file;
	uint64_t lost;
	int ret;

	memset(l, 0, sizeof(*l));
	if ((ret = map_path(&file, path)) < 0)
		return ret;
	ret = commitgraph_parse(l, file.base, file.size, rawsz, base, nbases,
	    path);
	if (ret == 0 && map_shrank(&file, &lost))
		ret = log_corrupt("%s: commit-graph shrank while it was read "
		    "(offset %llu)", path, (unsigned long long)lost);
	if (ret == 0 && !(l->path = strdup(path)))
		ret = -ENOMEM;
	if (ret < 0) {
		map_close(&file);
		memset(l, 0, sizeof(*l));
		return ret;
	}
	l->file = file;
	return 0;
}

static void
layer_close(struct cg_layer *l)
{
	map_close(&l->file);
	free(l->path);
}

static int
add_layer(struct commitgraph *g, const struct cg_layer *l)
{
	struct cg_layer *grown = realloc(g->layers, (g->nlayers + 1) *
	    sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	g->layers = grown;
	g->layers[g->nlayers++] = *l;
	g->nr = l->base + l->nr;
	return 0;
}

/*
 * Layer i of a chain must have the i layers below it as its bases and be
 * named by its own checksum, as git checks (add_graph_to_chain()).
 */
static int
check_chain(const struct commitgraph *g, const struct cg_layer *l,
    const unsigned char *names, const char *path)
{
	size_t rawsz = g->rawsz;

	for (size_t j = 0; j < g->nlayers; j++)
		if (memcmp(l->bases + j * rawsz, names + j * rawsz, rawsz))
			return log_corrupt("%s: base %zu is not the chain's "
			    "layer %zu (offset %zu)", path, j, j,
			    (size_t)(l->bases - l->map) + j * rawsz);
	if (memcmp(l->map + l->size - rawsz, names + g->nlayers * rawsz,
	    rawsz))
		return log_corrupt("%s: checksum is not its name (offset %zu)",
		    path, l->size - rawsz);
	return 0;
}

/*
 * Open the layers the chain file at dir/commit-graph-chain names, base
 * first, into g: as many as are valid from the base up (git keeps those
 * too). -ENOENT without a chain file.
 */
static int
read_chain(struct commitgraph *g, const char *dir)
{
	char chain[4096], path[4096 + 128], hex[OID_HEXSZ_MAX + 1];
	size_t rawsz = g->rawsz, hexsz = 2 * rawsz, len, nlines;
	unsigned char *names = NULL;
	char *text = NULL;
	int ret;

	if ((size_t)snprintf(chain, sizeof(chain), "%s/commit-graph-chain",
	    dir) >= sizeof(chain))
		return -ENAMETOOLONG;
	if ((ret = file_read_whole(chain, CG_CHAIN_MAX, &text, &len)) < 0) {
		if (ret != -ENOENT)
			log_msg(LOGL_WARN, "%s: %s: commit-graph chain left "
			    "out", chain, strerror(-ret));
		return ret == -ENOMEM ? ret : -ENOENT;
	}
	nlines = len / (hexsz + 1);
	if (!(names = malloc(nlines * rawsz + 1))) {
		free(text);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nlines; i++) {
		const char *line = text + i * (hexsz + 1);
		struct cg_layer l;

		memcpy(hex, line, hexsz);
		hex[hexsz] = '\0';
		if (line[hexsz] != '\n' ||
		    !oid_parse_hex(names + i * rawsz, hex, rawsz)) {
			log_corrupt("%s: line %zu is no id (offset %zu): the "
			    "chain stops at %zu layers", chain, i + 1,
			    i * (hexsz + 1), g->nlayers);
			break;
		}
		snprintf(path, sizeof(path), "%s/graph-%s.graph", dir, hex);
		ret = layer_open(&l, path, rawsz, g->nr, (unsigned)i);
		if (ret == 0 && (ret = check_chain(g, &l, names, path)) < 0)
			layer_close(&l);
		if (ret == 0 && (ret = add_layer(g, &l)) < 0)
			layer_close(&l);
		if (ret == -ENOMEM)
			break;
		if (ret < 0) {
			/* Corruption was logged where it was found. */
			if (ret != -EFSCORRUPTED && ret != -ENOTSUP)
				log_msg(LOGL_WARN, "%s: %s, named by line %zu "
				    "of %s: the chain stops at %zu layers",
				    path, strerror(-ret), i + 1, chain,
				    g->nlayers);
			break;
		}
	}
	if (ret == 0 && len % (hexsz + 1) && nlines < CG_MAX_LAYERS)
		log_corrupt("%s: a last line cut short (offset %zu)", chain,
		    nlines * (hexsz + 1));
	free(names);
	free(text);
	if (ret == -ENOMEM)
		return ret;
	return g->nlayers ? 0 : -ENOENT;
}

int
commitgraph_open(const char *objdir, size_t rawsz, struct commitgraph **out)
{
	char path[4096];
	struct commitgraph *g;
	struct cg_layer l;
	int ret;

	*out = NULL;
	if (!(g = calloc(1, sizeof(*g))))
		return -ENOMEM;
	g->rawsz = rawsz;
	if ((size_t)snprintf(path, sizeof(path), "%s/info/commit-graph",
	    objdir) >= sizeof(path)) {
		free(g);
		return -ENAMETOOLONG;
	}
	ret = layer_open(&l, path, rawsz, 0, 0);
	if (ret == 0 && (ret = add_layer(g, &l)) < 0)
		layer_close(&l);
	if (ret < 0 && ret != -ENOMEM) {
		if (ret != -ENOENT && ret != -EFSCORRUPTED && ret != -ENOTSUP)
			log_msg(LOGL_WARN, "%s: %s: commit-graph left out",
			    path, strerror(-ret));
		snprintf(path, sizeof(path), "%s/info/commit-graphs", objdir);
		ret = read_chain(g, path);
	}
	if (ret < 0) {
		commitgraph_free(g);
		return ret;
	}
	*out = g;
	return 0;
}

int
commitgraph_from_memory(const unsigned char *map, size_t size, size_t rawsz,
    struct commitgraph **out)
{
	struct commitgraph *g;
	struct cg_layer l;
	int ret;

	*out = NULL;
	if (!(g = calloc(1, sizeof(*g))))
		return -ENOMEM;
	g->rawsz = rawsz;
	if ((ret = commitgraph_parse(&l, map, size, rawsz, 0, 0,
	    "commit-graph")) == 0)
		ret = add_layer(g, &l);
	if (ret < 0) {
		commitgraph_free(g);
		return ret;
	}
	*out = g;
	return 0;
}

void
commitgraph_free(struct commitgraph *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nlayers; i++)
		layer_close(&g->layers[i]);
	free(g->layers);
	free(g);
}

/* The layer holding position pos (< g->nr), and pos within it. */
static const struct cg_layer *
layer_of(const struct commitgraph *g, uint32_t pos, uint32_t *k)
{
	for (size_t i = g->nlayers; i-- > 0;) {
		const struct cg_layer *l = &g->layers[i];

		if (pos >= l->base && pos - l->base < l->nr) {
			*k = pos - l->base;
			return l;
		}
	}
	*k = 0;
	return NULL;
}

const unsigned char *
commitgraph_oid(const struct commitgraph *g, uint32_t pos)
{
	uint32_t k;
	const struct cg_layer *l = layer_of(g, pos, &k);

	return l ? l->oids + (size_t)k * g->rawsz : NULL;
}

bool
commitgraph_find(const struct commitgraph *g, const unsigned char *raw,
    uint32_t *pos)
{
	size_t rawsz = g->rawsz;

	for (size_t i = 0; i < g->nlayers; i++) {
		const struct cg_layer *l = &g->layers[i];
		unsigned b = raw[0];
		uint32_t lo = b ? be32(l->fanout + 4 * (b - 1)) : 0;
		uint32_t hi = be32(l->fanout + 4 * b);

		/* Clamped: the mapping may have changed since it was checked. */
		hi = hi < l->nr ? hi : l->nr;
		lo = lo < hi ? lo : hi;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			int cmp = memcmp(l->oids + (size_t)mid * rawsz, raw,
			    rawsz);

			if (!cmp) {
				*pos = l->base + mid;
				return true;
			}
			if (cmp < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	return false;
}

/* A parent position read from the mapping, checked again. */
static int
checked(const struct cg_layer *l, uint32_t p, uint32_t *out)
{
	if (p >= l->base + l->nr)
		return log_corrupt("%s: parent %u is beyond the %u commits: "
		    "the file changed in place", l->path ? l->path :
		    "commit-graph", p, l->base + l->nr);
	*out = p;
	return 0;
}

int
commitgraph_commit(const struct commitgraph *g, uint32_t pos,
    struct cg_commit *c)
{
	uint32_t k, p1, p2;
	const struct cg_layer *l = layer_of(g, pos, &k);
	const unsigned char *cd;
	int ret = 0;

	memset(c, 0, sizeof(*c));
	c->parents[0] = c->parents[1] = CG_NO_PARENT;
	if (!l)
		return -ENOENT;
	cd = l->cdat + (size_t)k * cdat_size(g->rawsz);
	c->tree = cd;
	p1 = be32(cd + g->rawsz);
	p2 = be32(cd + g->rawsz + 4);
	c->generation = be32(cd + g->rawsz + 8) >> 2;
	c->time = (int64_t)((uint64_t)(be32(cd + g->rawsz + 8) & 3) << 32 |
	    be32(cd + g->rawsz + 12));
	if (p1 == CG_NO_PARENT)
		return 0;
	if ((ret = checked(l, p1, &c->parents[0])) < 0)
		return ret;
	c->nparents = 1;
	if (p2 == CG_NO_PARENT)
		return 0;
	if (!(p2 & CG_EDGE_BIT)) {
		c->nparents = 2;
		return checked(l, p2, &c->parents[1]);
	}
	for (uint32_t j = p2 & ~CG_EDGE_BIT;; j++) {
		uint32_t e;

		if (!l->edge || j >= l->nedge || c->nparents >= CG_MAX_PARENTS)
			return log_corrupt("%s: commit %u's parents run past "
			    "the extra edges: the file changed in place",
			    l->path ? l->path : "commit-graph", k);
		e = be32(l->edge + 4 * (size_t)j);
		if (c->nparents == 1 &&
		    (ret = checked(l, e & ~CG_EDGE_BIT, &c->parents[1])) < 0)
			return ret;
		c->nparents++;
		if (e & CG_EDGE_BIT)
			return 0;
	}
}

int
commitgraph_parent(const struct commitgraph *g, uint32_t pos, uint32_t n,
    uint32_t *parent)
{
	uint32_t k, p2, j;
	const struct cg_layer *l = layer_of(g, pos, &k);
	const unsigned char *cd;

	if (!l)
		return -ENOENT;
	cd = l->cdat + (size_t)k * cdat_size(g->rawsz);
	if (n == 0)
		return checked(l, be32(cd + g->rawsz), parent);
	p2 = be32(cd + g->rawsz + 4);
	if (!(p2 & CG_EDGE_BIT))
		return n == 1 ? checked(l, p2, parent) : -ENOENT;
	j = (p2 & ~CG_EDGE_BIT) + (n - 1);
	if (!l->edge || j < n - 1 || j >= l->nedge)
		return -ENOENT;
	return checked(l, be32(l->edge + 4 * (size_t)j) & ~CG_EDGE_BIT,
	    parent);
}

bool
commitgraph_shrank(const struct commitgraph *g)
{
	for (size_t i = 0; i < g->nlayers; i++)
		if (map_shrank(&g->layers[i].file, NULL))
			return true;
	return false;
}
