/*
 * unpack: rebuilding objects from where a snapshot found them, with a
 * snapshot that stays alive for the duration of the call.
 *
 * A deltified entry is read by walking its chain down to a whole object,
 * remembering each step, then applying the deltas back up:
 *
 *   unpack_object()
 *     chain_walk()      pack_entry() per step; OFS_DELTA stays in the pack,
 *                       REF_DELTA asks snapshot_find(); depth is bounded and
 *                       a REF_DELTA that comes back to an entry is a cycle
 *                       or at an object the delta base cache holds
 *     base_read()       the cached object, loose_read() or zio_inflate()
 *     delta_apply()     per step, from the base up; each result below
 *                       the top goes into the cache
 *
 * unpack_info() needs only the type at the bottom and the size in the top
 * delta's header: its walk stops at the first base whose type the pack
 * remembers (pack_delta_type), and it remembers the type of every delta
 * it walked.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "delta.h"
#include "log.h"
#include "object.h"
#include "oid.h"
#include "unpack.h"
#include "zio.h"

/* One step of a delta chain. */
struct step {
	struct pack *pack;
	struct pack_entry e;
};

struct chain {
	struct step *steps;	/* deltas, top first */
	size_t nr, alloc;
	struct objloc base;	/* the whole object at the bottom */
	struct pack_entry base_entry;	/* when base.pack is set */
	unsigned char *cached;	/* or the bottom, rebuilt, from the cache */
	size_t cached_len;
	enum obj_type cached_type;
	enum obj_type known;	/* or the bottom's type, remembered */
	unsigned known_depth;	/* with known: deltas below the last step */
};

static void
chain_release(struct chain *c)
{
	free(c->steps);
	free(c->cached);
}

static int
chain_push(struct chain *c, struct pack *p, const struct pack_entry *e)
{
	if (c->nr == c->alloc) {
		size_t n = c->alloc ? 2 * c->alloc : 16;
		struct step *s = realloc(c->steps, n * sizeof(*s));

		if (!s)
			return -ENOMEM;
		c->steps = s;
		c->alloc = n;
	}
	c->steps[c->nr].pack = p;
	c->steps[c->nr++].e = *e;
	return 0;
}

static bool
chain_has(const struct chain *c, const struct pack *p, uint64_t off)
{
	for (size_t i = 0; i < c->nr; i++)
		if (c->steps[i].pack == p && c->steps[i].e.off == off)
			return true;
	return false;
}

/*
 * Did a file of c's shrink while it was read (logged once for the pack)?
 * Then nothing read from it is to be trusted: -EFSCORRUPTED.
 */
static int
chain_check(const struct chain *c)
{
	for (size_t i = 0; i < c->nr; i++)
		if (pack_shrank(c->steps[i].pack))
			return -EFSCORRUPTED;
	if (c->base.pack && pack_shrank(c->base.pack))
		return -EFSCORRUPTED;
	return 0;
}

static int
too_deep(const struct chain *c)
{
	return log_corrupt("%s: delta chain from offset %llu is deeper than %d",
	    c->steps[0].pack->path, (unsigned long long)c->steps[0].e.off,
	    OBJ_MAX_DELTA_DEPTH);
}

/*
 * Does at's pack remember the type at the bottom of at's chain? Then c
 * ends there (c->known), unless that makes it too deep.
 */
static int
remembered(struct chain *c, const struct objloc *at)
{
	unsigned depth;

	if (!at->pack || (c->known = pack_delta_type(at->pack, at->off,
	    &depth)) == OBJ_NONE)
		return 0;
	if (c->nr + depth > OBJ_MAX_DELTA_DEPTH)
		return too_deep(c);
	c->known_depth = depth;
	return 1;
}

/*
 * Follow loc down to a whole object, recording every delta on the way.
 * With cache, stop early at an object the cache holds; with types_only,
 * at a delta whose type its pack remembers (c->known), below the first.
 */
static int
chain_walk(const struct snapshot *s, const struct objloc *loc, struct chain *c,
    struct cache *cache, bool types_only)
{
	struct objloc at = *loc;
	struct pack_entry e;
	int ret;

	memset(c, 0, sizeof(*c));
	while (at.pack) {
		if (cache && cache_get(cache, at.pack->serial, at.off,
		    &c->cached, &c->cached_len, &c->cached_type)) {
			c->base = at;
			return 0;
		}
		if ((ret = pack_entry(at.pack, at.off, &e)) < 0)
			return ret;
		if (e.type != OBJ_OFS_DELTA && e.type != OBJ_REF_DELTA) {
			c->base = at;
			c->base_entry = e;
			return 0;
		}
		if (c->nr >= OBJ_MAX_DELTA_DEPTH)
			return too_deep(c);
		if ((ret = chain_push(c, at.pack, &e)) < 0)
			return ret;
		if (e.type == OBJ_OFS_DELTA) {
			at.off = e.base_off;
			if (types_only && (ret = remembered(c, &at)) != 0)
				return ret < 0 ? ret : 0;
			continue;
		}
		if (!snapshot_find(s, e.base_oid, &at)) {
			char hex[OID_HEXSZ_MAX + 1];

			oid_to_hex(hex, e.base_oid, s->rawsz);
			return log_corrupt("%s: delta at offset %llu needs base "
			    "%s, which is missing", c->steps[c->nr - 1].pack->path,
			    (unsigned long long)e.off, hex);
		}
		if (at.pack && chain_has(c, at.pack, at.off))
			return log_corrupt("%s: delta at offset %llu is part of "
			    "a cycle through offset %llu", at.pack->path,
			    (unsigned long long)e.off,
			    (unsigned long long)at.off);
		if (types_only && (ret = remembered(c, &at)) != 0)
			return ret < 0 ? ret : 0;
	}
	c->base = at;
	return 0;
}

/* Inflate the data of entry e of pack p: exactly e->size bytes. */
static int
entry_inflate(const struct pack *p, const struct pack_entry *e,
    unsigned char **out)
{
	const char *why;
	int ret;

	if (e->size > OBJ_MAX_INMEM) {
		log_msg(LOGL_ERROR, "%s: entry at offset %llu holds %llu bytes,"
		    " more than %llu: not read whole", p->path,
		    (unsigned long long)e->off, (unsigned long long)e->size,
		    (unsigned long long)OBJ_MAX_INMEM);
		return -EFBIG;
	}
	ret = zio_inflate(e->data, e->datalen, e->size, out, NULL, &why);
	/* A pack that shrank says so itself (chain_check()). */
	if (ret == -EFSCORRUPTED && !pack_shrank((struct pack *)p))
		return log_corrupt("%s: entry at offset %llu: %s", p->path,
		    (unsigned long long)e->off, why);
	return ret;
}

static int
loose_info(const struct snapshot *s, const struct objloc *loc,
    struct objinfo *info)
{
	struct loose lo;
	int ret;

	ret = loose_open(&lo, s->objdirs[loc->dir], loc->id, s->rawsz);
	if (ret < 0)
		return ret;
	*info = lo.info;
	loose_close(&lo);
	return 0;
}

int
unpack_info(const struct snapshot *s, const struct objloc *loc,
    struct objinfo *info)
{
	struct chain c;
	unsigned char head[32];
	uint64_t base_size;
	const char *why;
	size_t got, hdrlen;
	int ret;

	if ((ret = chain_walk(s, loc, &c, NULL, true)) < 0)
		goto out;
	if (c.known) {
		info->type = c.known;
	} else if (c.base.pack) {
		info->type = c.base_entry.type;
		info->size = c.base_entry.size;
	} else if ((ret = loose_info(s, &c.base, info)) < 0) {
		goto out;
	}
	if (!c.nr)
		goto out;
	for (size_t i = 0; i < c.nr; i++)
		pack_delta_type_set(c.steps[i].pack, c.steps[i].e.off,
		    info->type, (unsigned)(c.nr - i) + c.known_depth);
	/* The result size is in the header of the topmost delta. */
	ret = zio_inflate_prefix(c.steps[0].e.data, c.steps[0].e.datalen, head,
	    sizeof(head), &got, &why);
	if (ret == 0 || ret == -EFSCORRUPTED)
		ret = delta_sizes(head, got, &base_size, &info->size, &hdrlen,
		    &why);
	if (ret == -EFSCORRUPTED && !pack_shrank(c.steps[0].pack))
		ret = log_corrupt("%s: delta at offset %llu: %s",
		    c.steps[0].pack->path,
		    (unsigned long long)c.steps[0].e.off, why);
out:
	if (chain_check(&c) < 0)
		ret = -EFSCORRUPTED;
	chain_release(&c);
	return ret;
}

static int
base_read(const struct snapshot *s, struct chain *c,
    struct objinfo *info, unsigned char **buf)
{
	struct loose lo;
	int ret;

	if (c->cached) {
		info->type = c->cached_type;
		info->size = c->cached_len;
		*buf = c->cached;
		c->cached = NULL;
		return 0;
	}
	if (c->base.pack) {
		info->type = c->base_entry.type;
		info->size = c->base_entry.size;
		ret = entry_inflate(c->base.pack, &c->base_entry, buf);
		/* A base read for a delta is likely to be needed again. */
		if (ret == 0 && c->nr)
			cache_put(s->cache, c->base.pack->serial, c->base.off,
			    *buf, (size_t)info->size, info->type);
		return ret;
	}
	ret = loose_open(&lo, s->objdirs[c->base.dir], c->base.id, s->rawsz);
	if (ret < 0)
		return ret;
	*info = lo.info;
	ret = loose_read(&lo, buf);
	loose_close(&lo);
	return ret;
}

int
unpack_object(const struct snapshot *s, const struct objloc *loc,
    struct objinfo *info, unsigned char **buf)
{
	unsigned char *data = NULL, *delta = NULL, *result;
	struct chain c;
	const char *why;
	size_t len;
	int ret;

	*buf = NULL;
	if ((ret = chain_walk(s, loc, &c, s->cache, false)) < 0)
		goto out;
	if ((ret = base_read(s, &c, info, &data)) < 0)
		goto out;
	len = (size_t)info->size;
	for (size_t i = c.nr; i-- > 0;) {
		struct step *st = &c.steps[i];

		if ((ret = entry_inflate(st->pack, &st->e, &delta)) < 0)
			goto out;
		ret = delta_apply(data, len, delta, (size_t)st->e.size,
		    OBJ_MAX_INMEM, &result, &len, &why);
		free(delta);
		if (ret == -EFSCORRUPTED && !pack_shrank(st->pack))
			ret = log_corrupt("%s: delta at offset %llu: %s",
			    st->pack->path, (unsigned long long)st->e.off, why);
		else if (ret == -EFBIG)
			log_msg(LOGL_ERROR, "%s: delta at offset %llu: %s: "
			    "not rebuilt", st->pack->path,
			    (unsigned long long)st->e.off, why);
		if (ret < 0)
			goto out;
		free(data);
		data = result;
		/* Every step below the top is some other delta's base. */
		if (i > 0)
			cache_put(s->cache, st->pack->serial, st->e.off, data,
			    len, info->type);
	}
	info->size = len;
	*buf = data;
	data = NULL;
out:
	if (chain_check(&c) < 0) {
		ret = -EFSCORRUPTED;
		free(*buf);
		*buf = NULL;
	}
	free(data);
	chain_release(&c);
	return ret;
}
