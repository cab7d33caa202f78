/*
 * pack: opening packs and parsing their entries' headers, and the types
 * that delta chains resolve to. Every offset an index or an entry gives
 * is checked against the mapped bytes before it is used.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "be.h"
#include "log.h"
#include "object.h"
#include "pack.h"

/* The delta types remembered: at most this many words a pack. */
#define TYPES_MAX ((uint64_t)1 << 16)
/* A word: offset + 1, then TYPES_DEPTH_BITS of depth, then 3 of type. */
#define TYPES_DEPTH_BITS 14
#define TYPES_SHIFT (TYPES_DEPTH_BITS + 3)
/* Offsets from here on (64 TiB) are not remembered. */
#define TYPES_OFF_MAX ((uint64_t)1 << (63 - TYPES_SHIFT))
_Static_assert(OBJ_MAX_DELTA_DEPTH < 1 << TYPES_DEPTH_BITS,
    "a chain's depth fits its bits");

static atomic_uint_least64_t next_serial = 1;

/*
 * One word for each object, up to TYPES_MAX (512 KiB). Anonymous pages
 * take memory only once a delta is remembered in them, so a pack without
 * deltas costs none (calloc may hand out, and zero, heap pages).
 * Without the table, types are not remembered.
 */
static void
types_init(struct pack *p)
{
	uint64_t n = 512;	/* a page */
	void *map;

	while (n < p->idx.nr && n < TYPES_MAX)
		n *= 2;
	map = mmap(NULL, n * sizeof(*p->types), PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return;
	p->types = map;
	p->types_mask = n - 1;
}

static _Atomic uint64_t *
types_slot(const struct pack *p, uint64_t off)
{
	return &p->types[XXH3_64bits(&off, sizeof(off)) & p->types_mask];
}

enum obj_type
pack_delta_type(const struct pack *p, uint64_t off, unsigned *depth)
{
	uint64_t w;

	if (!p->types || off >= TYPES_OFF_MAX)
		return OBJ_NONE;
	w = atomic_load_explicit(types_slot(p, off), memory_order_relaxed);
	if (w >> TYPES_SHIFT != off + 1)
		return OBJ_NONE;
	*depth = (unsigned)(w >> 3) & ((1u << TYPES_DEPTH_BITS) - 1);
	return (enum obj_type)(w & 7);
}

void
pack_delta_type_set(struct pack *p, uint64_t off, enum obj_type type,
    unsigned depth)
{
	if (!p->types || off >= TYPES_OFF_MAX || type < OBJ_COMMIT ||
	    type > OBJ_TAG || depth == 0 || depth >> TYPES_DEPTH_BITS)
		return;
	atomic_store_explicit(types_slot(p, off), (off + 1) << TYPES_SHIFT |
	    (uint64_t)depth << 3 | type, memory_order_relaxed);
}

int
pack_open(const char *idxpath, const char *packpath, size_t rawsz,
    unsigned dir, struct pack **out)
{
	struct pack *p;
	struct stat st;
	int fd, ret;
	uint32_t version, nr;

	*out = NULL;
	if (!(p = calloc(1, sizeof(*p))) || !(p->path = strdup(packpath))) {
		free(p);
		return -ENOMEM;
	}
	atomic_init(&p->refs, 1);
	p->serial = atomic_fetch_add(&next_serial, 1);
	p->dir = dir;
	/*
	 * O_NONBLOCK: a FIFO put in its place must not stop the caller.
	 * Symlinks are followed, as git follows them; fstat() then checks
	 * what they lead to.
	 */
	fd = open(packpath, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto fail;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		ret = log_corrupt("%s: not a regular file (offset 0)",
		    packpath);
		goto fail;
	}
	if ((size_t)st.st_size < PACK_HEADER_SIZE + rawsz) {
		close(fd);
		ret = log_corrupt("%s: pack is too small (%lld bytes, offset 0)",
		    packpath, (long long)st.st_size);
		goto fail;
	}
	ret = map_open(&p->file, fd, &st);
	close(fd);
	if (ret < 0)
		goto fail;
	p->map = p->file.base;
	p->size = p->file.size;
	p->end = p->size - rawsz;
	version = be32(p->map + 4);
	if (memcmp(p->map, PACK_SIGNATURE, 4) ||
	    (version != 2 && version != 3)) {
		ret = log_corrupt("%s: not a pack of version 2 or 3 "
		    "(offset 0)", packpath);
		goto fail;
	}
	if ((ret = idx_open(&p->idx, idxpath, rawsz)) < 0)
		goto fail;
	/*
	 * git refuses such a pair outright; odbfs serves what it can and
	 * lets each bad entry fail on its own.
	 */
	nr = be32(p->map + 8);
	if (nr != p->idx.nr)
		log_msg(LOGL_WARN, "%s: pack holds %u objects, its index %u",
		    packpath, nr, p->idx.nr);
	else if (memcmp(p->idx.pack_checksum, p->map + p->end, rawsz))
		log_msg(LOGL_WARN, "%s: pack checksum does not match %s",
		    packpath, idxpath);
	if (pack_shrank_quietly(p)) {
		ret = -EFSCORRUPTED;
		goto fail;
	}
	types_init(p);
	*out = p;
	return 0;
fail:
	pack_unref(p);
	return ret;
}

/* Did a file of p shrink under a read? *data: its .pack; *off: where. */
static bool
shrank(struct pack *p, bool *data, uint64_t *off)
{
	*off = 0;
	*data = true;
	if (map_shrank(&p->file, off))
		goto yes;
	*data = false;
	if (!map_shrank(&p->idx.file, off))
		return atomic_load_explicit(&p->shrank, memory_order_relaxed);
yes:
	atomic_store_explicit(&p->shrank, true, memory_order_relaxed);
	return true;
}

bool
pack_shrank_quietly(struct pack *p)
{
	bool data;
	uint64_t off;

	return shrank(p, &data, &off);
}

bool
pack_shrank(struct pack *p)
{
	bool data;
	uint64_t off;

	if (!shrank(p, &data, &off))
		return false;
	/* Its index is the .pack path with .idx for .pack. */
	log_corrupt("%.*s.%s: file shrank while it was read (offset %llu)",
	    (int)(strlen(p->path) - 5), p->path, data ? "pack" : "idx",
	    (unsigned long long)off);
	return true;
}

void
pack_unref(struct pack *p)
{
	if (!p || atomic_fetch_sub_explicit(&p->refs, 1,
	    memory_order_acq_rel) != 1)
		return;
	idx_close(&p->idx);
	map_close(&p->file);
	free(p->path);
	if (p->types)
		munmap((void *)p->types, (p->types_mask + 1) *
		    sizeof(*p->types));
	free(p);
}

static _Thread_local char why_buf[256];

static int
bad(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why_buf, sizeof(why_buf), fmt, ap);
	va_end(ap);
	return -EFSCORRUPTED;
}

/*
 * Parse the entry header at off; on corrupt data, -EFSCORRUPTED with what
 * was wrong in why_buf, logged by the caller: a pack that shrank under
 * the parse says so instead.
 */
static int
entry_parse(const unsigned char *map, size_t end, size_t rawsz,
    uint64_t off, struct pack_entry *e)
{
	const unsigned char *p, *stop = map + end;
	unsigned char c;
	unsigned shift = 4;
	uint64_t size;

	memset(e, 0, sizeof(*e));
	e->off = off;
	if (off == PACK_OFF_BAD)
		return -EFSCORRUPTED;
	if (off < PACK_HEADER_SIZE || off >= end)
		return bad("entry offset %llu is outside the pack",
		    (unsigned long long)off);
	p = map + off;
	c = *p++;
	e->type = (enum obj_type)((c >> 4) & 7);
	size = c & 15;
	while (c & 0x80) {
		if (p >= stop || shift > 57)
			return bad("entry size at offset %llu is "
			    "truncated or too long",
			    (unsigned long long)off);
		c = *p++;
		size |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
	}
	e->size = size;
	switch (e->type) {
	case OBJ_COMMIT:
	case OBJ_TREE:
	case OBJ_BLOB:
	case OBJ_TAG:
		break;
	case OBJ_OFS_DELTA: {
		uint64_t rel;

		if (p >= stop)
			goto truncated;
		c = *p++;
		rel = c & 0x7f;
		while (c & 0x80) {
			if (p >= stop || rel >> 56)
				return bad("delta base offset at "
				    "offset %llu is truncated or too long",
				    (unsigned long long)off);
			c = *p++;
			rel = ((rel + 1) << 7) | (c & 0x7f);
		}
		if (rel == 0 || rel > off - PACK_HEADER_SIZE)
			return bad("delta at offset %llu names a "
			    "base %llu bytes back, outside the pack",
			    (unsigned long long)off, (unsigned long long)rel);
		e->base_off = off - rel;
		break;
	}
	case OBJ_REF_DELTA:
		if ((size_t)(stop - p) < rawsz)
			goto truncated;
		e->base_oid = p;
		p += rawsz;
		break;
	default:
		return bad("entry at offset %llu has invalid "
		    "type %u", (unsigned long long)off, e->type);
	}
	if (p >= stop)
		goto truncated;
	e->data = p;
	e->datalen = (size_t)(stop - p);
	return 0;
truncated:
	return bad("entry at offset %llu is truncated",
	    (unsigned long long)off);
}

int
pack_entry_parse(const unsigned char *map, size_t end, size_t rawsz,
    uint64_t off, struct pack_entry *e, const char *name)
{
	int ret = entry_parse(map, end, rawsz, off, e);

	if (ret == -EFSCORRUPTED && off != PACK_OFF_BAD)
		return log_corrupt("%s: %s", name, why_buf);
	return ret;
}

int
pack_entry(const struct pack *p, uint64_t off, struct pack_entry *e)
{
	int ret = entry_parse(p->map, p->end, p->idx.rawsz, off, e);

	/* Zeros where pages went: the shrink is the news, not the zeros. */
	if (ret != -EFSCORRUPTED || off == PACK_OFF_BAD ||
	    pack_shrank((struct pack *)p))
		return ret;
	return log_corrupt("%s: %s", p->path, why_buf);
}
