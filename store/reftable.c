/*
 * reftable: reading a repository's reftable stack (a repository whose
 * config says extensions.refStorage=reftable) into the refs list of
 * refs.h, at open and whenever tables.list is replaced; reftable_parse()
 * reads one table alone. Never on a lookup path.
 *
 *   reftable_load()
 *     stack_load()           tables.list, then each table mapped
 *                            (table_map(): no FIFO blocks, a sparse GiB
 *                            costs the pages parsed, a shrink reads as
 *                            zeros and is told after); again if a
 *                            table vanished or tables.list changed meanwhile
 *       reftable_parse()     header, footer and its CRC, ref blocks in
 *                            file order, then the ref index against them
 *                            (read_top_index(), read_index() below it)
 *     merge()                newest table's record of each name wins
 *     build()                deletions dropped, symbolic refs resolved
 *
 * Every offset and length read from a table is checked against the bytes
 * there before it is used; the first thing wrong gives one line naming
 * the table and the offset, and the whole stack shows no refs: git loads
 * no stack with a table it cannot read, and leaving one table out would
 * bring back refs its updates deleted, and old values of those it moved.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "be.h"
#include "file.h"
#include "log.h"
#include "map.h"
#include "reftable.h"

/*
 * Loads begun again because a table tables.list named had gone (a
 * compaction replaced it) or tables.list changed while they ran. git
 * renames the new tables.list in before it deletes the old tables, so a
 * second pass normally sees a whole stack.
 */
#define REFTABLE_LOAD_PASSES 4

/* The end of the one line that says why a stack shows no refs. */
#define REFTABLE_REFUSED "stack refused, no refs shown (as git)"

struct parser {
	const unsigned char *buf;
	size_t len;
	size_t rawsz;
	const char *path;
	size_t hsz, fsz;	/* header and footer sizes */
	uint32_t block_size;
	uint64_t min_ui, max_ui;
	struct reftable_table *t;
	size_t alloc;
	struct rblock {
		size_t pos;	/* of the ref block */
		size_t last;	/* index in t->v of its last record */
	} *blocks;
	size_t nblocks, blocks_alloc;
	size_t leaves;		/* ref index entries matched so far */
};

/* One block's frame: where its records and restart table are. */
struct block {
	size_t start;		/* offset in the file; 0 for the first */
	size_t recs;		/* first record */
	size_t recs_end;	/* the restart table */
	size_t nrestarts;
};

/* Walking a block's records: the current key, prefix compression undone. */
struct keyit {
	char *key;		/* NUL-terminated; malloc'd */
	size_t keylen, keycap;
	size_t at;		/* next byte to read */
	size_t restart;		/* next restart point to meet */
	unsigned vtype;		/* the low 3 bits of the last record */
};

static uint32_t
be24(const unsigned char *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

/* Log what is wrong at off, once, and fail the table. */
static int __attribute__((format(printf, 3, 4)))
bad(const struct parser *p, size_t off, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	log_once(LOGL_ERROR, "%s: %s at offset %zu: " REFTABLE_REFUSED,
	    p->path, what, off);
	return -EFSCORRUPTED;
}

/* A varint (pack ofs-delta encoding) at *at, before end. */
static bool
get_varint(const unsigned char *buf, size_t end, size_t *at, uint64_t *out)
{
	size_t i = *at;
	uint64_t v;

	if (i >= end)
		return false;
	v = buf[i] & 0x7f;
	while (buf[i] & 0x80) {
		if (++i >= end || v > (UINT64_MAX >> 7) - 1)
			return false;
		v = ((v + 1) << 7) | (buf[i] & 0x7f);
	}
	*at = i + 1;
	*out = v;
	return true;
}

/*
 * The block of the given type at start, which must end by limit. A block
 * bigger than max (0: any) is corrupt too.
 */
static int
block_open(const struct parser *p, size_t start, size_t limit, int type,
    size_t max, struct block *b)
{
	size_t hdr = start == 0 ? p->hsz : 0, len, prev = 0;

	if (start > limit || limit - start < hdr + 4)
		return bad(p, start, "block header past the end of its "
		    "section (%zu)", limit);
	if (p->buf[start + hdr] != type)
		return bad(p, start + hdr, "block type 0x%02x where '%c' was "
		    "expected", p->buf[start + hdr], type);
	len = be24(p->buf + start + hdr + 1);
	if (len > limit - start)
		return bad(p, start + hdr + 1, "block length %zu past the end "
		    "of its section (%zu)", len, limit);
	if (max && len > max)
		return bad(p, start + hdr + 1, "block length %zu over the "
		    "block size %zu", len, max);
	if (len < hdr + 4 + 2)
		return bad(p, start + hdr + 1, "block length %zu too short",
		    len);
	b->start = start;
	b->recs = start + hdr + 4;
	b->nrestarts = (size_t)p->buf[start + len - 2] << 8 |
	    p->buf[start + len - 1];
	if (!b->nrestarts || 3 * b->nrestarts > len - hdr - 4 - 2)
		return bad(p, start + len - 2, "restart count %zu does not "
		    "fit the block", b->nrestarts);
	b->recs_end = start + len - 2 - 3 * b->nrestarts;
	for (size_t i = 0; i < b->nrestarts; i++) {
		size_t r = be24(p->buf + b->recs_end + 3 * i);

		if (r < b->recs - start || r >= b->recs_end - start ||
		    (i && r <= prev))
			return bad(p, b->recs_end + 3 * i, "restart offset %zu "
			    "out of range", r);
		prev = r;
	}
	return 0;
}

/*
 * The next record's key, into it->key; it->at is left at the record's
 * value. 1 when a record was read, 0 at the end of the block.
 */
static int
key_next(const struct parser *p, const struct block *b, struct keyit *it)
{
	uint64_t prefix, word;
	size_t rec = it->at, suffix;
	bool fresh = rec == b->recs;	/* no previous key to share */

	if (rec == b->recs_end) {
		if (it->restart != b->nrestarts)
			return bad(p, b->recs_end + 3 * it->restart, "restart "
			    "offset does not begin a record");
		return 0;
	}
	if (it->restart < b->nrestarts) {
		size_t r = b->start + be24(p->buf + b->recs_end +
		    3 * it->restart);

		if (r < rec)
			return bad(p, b->recs_end + 3 * it->restart, "restart "
			    "offset does not begin a record");
		if (r == rec) {
			it->restart++;
			fresh = true;
		}
	}
	if (!get_varint(p->buf, b->recs_end, &it->at, &prefix) ||
	    !get_varint(p->buf, b->recs_end, &it->at, &word))
		return bad(p, rec, "record header cut short");
	if (prefix > (fresh ? 0 : it->keylen))
		return bad(p, rec, "prefix length %llu longer than the "
		    "previous key (%zu)", (unsigned long long)prefix,
		    fresh ? (size_t)0 : it->keylen);
	if ((word >> 3) > b->recs_end - it->at)
		return bad(p, rec, "key suffix of %llu bytes past the "
		    "records", (unsigned long long)(word >> 3));
	suffix = (size_t)(word >> 3);
	if (prefix + suffix == 0)
		return bad(p, rec, "empty key");
	if (prefix + suffix + 1 > it->keycap) {
		size_t cap = prefix + suffix + 64;
		char *grown = realloc(it->key, cap);

		if (!grown)
			return -ENOMEM;
		it->key = grown;
		it->keycap = cap;
	}
	memcpy(it->key + prefix, p->buf + it->at, suffix);
	it->keylen = (size_t)prefix + suffix;
	it->key[it->keylen] = '\0';
	if (memchr(it->key, '\0', it->keylen))
		return bad(p, rec, "key holds a NUL byte");
	it->at += suffix;
	it->vtype = (unsigned)(word & 7);
	return 1;
}

static int
add_rec(struct parser *p, const char *name, size_t off,
    struct reftable_rec **out)
{
	struct reftable_table *t = p->t;
	struct reftable_rec *r;

	if (t->n && strcmp(t->v[t->n - 1].name, name) >= 0)
		return bad(p, off, "key %s not after %s", name,
		    t->v[t->n - 1].name);
	if (t->n == p->alloc) {
		size_t na = p->alloc ? 2 * p->alloc : 64;
		struct reftable_rec *grown = realloc(t->v, na * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		t->v = grown;
		p->alloc = na;
	}
	r = &t->v[t->n];
	memset(r, 0, sizeof(*r));
	if (!(r->name = strdup(name)))
		return -ENOMEM;
	t->n++;
	*out = r;
	return 0;
}

/* A ref record's value, after its key. */
static int
ref_value(struct parser *p, const struct block *b, struct keyit *it,
    size_t rec, struct reftable_rec *r)
{
	uint64_t delta, tlen;

	if (!get_varint(p->buf, b->recs_end, &it->at, &delta))
		return bad(p, rec, "update index cut short");
	if (delta > p->max_ui - p->min_ui)
		return bad(p, rec, "update index %llu+%llu outside the table's "
		    "range (up to %llu)", (unsigned long long)p->min_ui,
		    (unsigned long long)delta, (unsigned long long)p->max_ui);
	r->update_index = p->min_ui + delta;
	r->type = (enum reftable_value)it->vtype;
	switch (it->vtype) {
	case REFTABLE_DELETION:
		return 0;
	case REFTABLE_VAL1:
	case REFTABLE_VAL2:
		if ((it->vtype == REFTABLE_VAL1 ? 1 : 2) * p->rawsz >
		    b->recs_end - it->at)
			return bad(p, rec, "object id cut short");
		memcpy(r->id, p->buf + it->at, p->rawsz);
		it->at += p->rawsz;
		if (it->vtype == REFTABLE_VAL2) {
			memcpy(r->peeled, p->buf + it->at, p->rawsz);
			it->at += p->rawsz;
		}
		return 0;
	case REFTABLE_SYMREF:
		if (!get_varint(p->buf, b->recs_end, &it->at, &tlen) ||
		    tlen > b->recs_end - it->at)
			return bad(p, rec, "symbolic ref target cut short");
		if (memchr(p->buf + it->at, '\0', (size_t)tlen))
			return bad(p, rec, "symbolic ref target holds a NUL");
		if (!(r->target = strndup((const char *)p->buf + it->at,
		    (size_t)tlen)))
			return -ENOMEM;
		it->at += (size_t)tlen;
		return 0;
	default:
		return bad(p, rec, "value type %u unknown", it->vtype);
	}
}

/* The ref blocks, in file order, up to end (where other sections begin). */
static int
read_refs(struct parser *p, size_t end)
{
	struct keyit it = { 0 };
	size_t pos = 0;
	int ret = 0;

	while (ret == 0 && pos < end) {
		size_t hdr = pos == 0 ? p->hsz : 0, blen, next;
		struct block b;
		int type;

		if (pos + hdr >= end)
			break;
		type = p->buf[pos + hdr];
		if (type != REFTABLE_BLOCK_REF) {
			if (type == REFTABLE_BLOCK_INDEX || type ==
			    REFTABLE_BLOCK_OBJ || type == REFTABLE_BLOCK_LOG)
				break;
			ret = bad(p, pos + hdr, "block type 0x%02x unknown",
			    type);
			break;
		}
		if ((ret = block_open(p, pos, end, REFTABLE_BLOCK_REF,
		    p->block_size, &b)) < 0)
			break;
		it.at = b.recs;
		it.restart = 0;
		it.keylen = 0;
		while ((ret = key_next(p, &b, &it)) == 1) {
			struct reftable_rec *r = NULL;
			size_t rec = it.at;

			if ((ret = add_rec(p, it.key, rec, &r)) < 0 ||
			    (ret = ref_value(p, &b, &it, rec, r)) < 0)
				break;
		}
		if (ret < 0)
			break;
		if (p->nblocks == p->blocks_alloc) {
			size_t na = p->blocks_alloc ? 2 * p->blocks_alloc : 16;
			struct rblock *grown = realloc(p->blocks,
			    na * sizeof(*grown));

			if (!grown) {
				ret = -ENOMEM;
				break;
			}
			p->blocks = grown;
			p->blocks_alloc = na;
		}
		p->blocks[p->nblocks].pos = pos;
		p->blocks[p->nblocks++].last = p->t->n - 1;
		/*
		 * The next block: past the padding (NULs up to the block
		 * size) if there is some, else right after this one.
		 */
		blen = be24(p->buf + pos + hdr + 1);
		next = pos + blen;
		if (p->block_size && blen < p->block_size && next < end &&
		    p->buf[next] == 0)
			next = pos + p->block_size;
		if (next > end) {
			ret = bad(p, pos, "padding past the end of the ref "
			    "blocks (%zu)", end);
			break;
		}
		pos = next;
	}
	free(it.key);
	return ret;
}

/*
 * The ref index block at pos, and those below it: each leaf entry must
 * name the next ref block, by the key of its last record.
 */
static int
read_index(struct parser *p, size_t pos, unsigned depth)
{
	struct keyit it = { 0 };
	struct block b;
	int ret;

	if (depth > REFTABLE_MAX_INDEX_DEPTH)
		return bad(p, pos, "ref index deeper than %d levels",
		    REFTABLE_MAX_INDEX_DEPTH);
	if ((ret = block_open(p, pos, p->len - p->fsz, REFTABLE_BLOCK_INDEX,
	    0, &b)) < 0)
		return ret;
	it.at = b.recs;
	while ((ret = key_next(p, &b, &it)) == 1) {
		size_t rec = it.at, child;
		uint64_t cpos;
		const struct rblock *leaf;

		if (it.vtype != 0 || !get_varint(p->buf, b.recs_end, &it.at,
		    &cpos) || cpos >= p->len - p->fsz) {
			ret = bad(p, rec, "ref index record malformed");
			break;
		}
		child = (size_t)cpos;
		if (p->buf[child + (child ? 0 : p->hsz)] ==
		    REFTABLE_BLOCK_INDEX && child) {
			/* Its key is the last of the blocks below it. */
			if ((ret = read_index(p, child, depth + 1)) < 0)
				break;
			if (strcmp(p->t->v[p->blocks[p->leaves - 1].last].name,
			    it.key)) {
				ret = bad(p, rec, "ref index key %s is not the "
				    "last of index block %zu", it.key, child);
				break;
			}
			continue;
		}
		leaf = p->leaves < p->nblocks ? &p->blocks[p->leaves] : NULL;
		if (!leaf || leaf->pos != child) {
			ret = bad(p, rec, "ref index names block %zu, not the "
			    "next ref block", child);
			break;
		}
		if (strcmp(p->t->v[leaf->last].name, it.key)) {
			ret = bad(p, rec, "ref index key %s is not the last of "
			    "block %zu", it.key, child);
			break;
		}
		p->leaves++;
	}
	free(it.key);
	return ret;
}

/*
 * The top level of the ref index: the index blocks that follow one
 * another from ref_index_position (git writes up to three before it
 * makes another level above them), up to the next section.
 */
static int
read_top_index(struct parser *p, size_t pos)
{
	size_t end = p->len - p->fsz;
	int ret;

	do {
		size_t blen, next;

		if ((ret = read_index(p, pos, 0)) < 0)
			return ret;
		/* As between ref blocks: past any padding. */
		blen = be24(p->buf + pos + 1);
		next = pos + blen;
		if (p->block_size && blen < p->block_size && next < end &&
		    p->buf[next] == 0)
			next = pos + p->block_size;
		pos = next;
	} while (pos < end && p->buf[pos] == REFTABLE_BLOCK_INDEX);
	return 0;
}

void
reftable_table_release(struct reftable_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].name);
		free(t->v[i].target);
	}
	free(t->v);
	memset(t, 0, sizeof(*t));
}

int
reftable_parse(const unsigned char *buf, size_t len, size_t rawsz,
    const char *path, struct reftable_table *out)
{
	struct parser p = { .buf = buf, .len = len, .rawsz = rawsz,
	    .path = path, .t = out };
	const unsigned char *f;
	uint64_t pos[5];
	size_t end;
	int version, ret;

	memset(out, 0, sizeof(*out));
	if (len < REFTABLE_HEADER_V1 || memcmp(buf, REFTABLE_MAGIC, 4))
		return bad(&p, 0, "not a reftable (no REFT header)");
	version = buf[4];
	if (version != 1 && version != 2)
		return bad(&p, 4, "version %d unknown", version);
	p.hsz = version == 1 ? REFTABLE_HEADER_V1 : REFTABLE_HEADER_V2;
	p.fsz = version == 1 ? REFTABLE_FOOTER_V1 : REFTABLE_FOOTER_V2;
	if (len < p.hsz + p.fsz)
		return bad(&p, len, "file of %zu bytes shorter than a header "
		    "and a footer", len);
	p.block_size = be24(buf + 5);
	p.min_ui = be64(buf + 8);
	p.max_ui = be64(buf + 16);
	out->min_update_index = p.min_ui;
	out->max_update_index = p.max_ui;
	if (p.min_ui > p.max_ui)
		return bad(&p, 8, "update index range %llu-%llu backwards",
		    (unsigned long long)p.min_ui,
		    (unsigned long long)p.max_ui);
	if ((version == 1 ? REFTABLE_HASH_SHA1 : be32(buf + 24)) !=
	    (rawsz == OID_RAWSZ_SHA1 ? REFTABLE_HASH_SHA1 :
	    REFTABLE_HASH_SHA256))
		return bad(&p, 24, "object format not the repository's (%s)",
		    rawsz == OID_RAWSZ_SHA1 ? "sha1" : "sha256");
	f = buf + len - p.fsz;
	if (memcmp(f, buf, p.hsz))
		return bad(&p, len - p.fsz, "footer does not repeat the "
		    "header");
	if (crc32(0, f, (uInt)(p.fsz - 4)) != be32(f + p.fsz - 4))
		return bad(&p, len - 4, "footer CRC-32 mismatch");
	pos[0] = be64(f + p.hsz);		/* ref_index_position */
	pos[1] = be64(f + p.hsz + 8) >> 5;	/* obj_position */
	pos[2] = be64(f + p.hsz + 16);		/* obj_index_position */
	pos[3] = be64(f + p.hsz + 24);		/* log_position */
	pos[4] = be64(f + p.hsz + 32);		/* log_index_position */
	end = len - p.fsz;
	for (int i = 0; i < 5; i++) {
		if (pos[i] && (pos[i] < p.hsz || pos[i] >= len - p.fsz))
			return bad(&p, len - p.fsz + p.hsz, "section position "
			    "%llu out of range", (unsigned long long)pos[i]);
		if (pos[i] && pos[i] < end)
			end = (size_t)pos[i];
	}
	if ((ret = read_refs(&p, end)) == 0 && pos[0]) {
		ret = read_top_index(&p, (size_t)pos[0]);
		if (ret == 0 && p.leaves != p.nblocks)
			ret = bad(&p, (size_t)pos[0], "ref index names %zu of "
			    "%zu ref blocks", p.leaves, p.nblocks);
	}
	free(p.blocks);
	if (ret < 0)
		reftable_table_release(out);
	return ret;
}

/* A stack: its tables, oldest first. */
struct stack {
	struct reftable_table *t;
	size_t n;
};

static void
stack_release(struct stack *s)
{
	for (size_t i = 0; i < s->n; i++)
		reftable_table_release(&s->t[i]);
	free(s->t);
	s->t = NULL;
	s->n = 0;
}

static struct fileid
list_id(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		memset(&st, 0, sizeof(st));
	return fileid_of(&st);
}

/*
 * Map the table at path, not copy it: a table of a GiB, sparse or not,
 * costs only the pages parsing reads (its header, footer and blocks), and
 * a page lost to a shrink reads as zeros, which map_shrank() tells after
 * (map.h). An empty one is left unmapped (m->base NULL). -ENOTREG for a
 * FIFO or anything else not a file (opened without blocking), -EFBIG past
 * REFTABLE_MAX_FILE, or another -errno.
 */
static int
table_map(const char *path, struct map *m)
{
	struct stat st;
	int fd, ret = 0;

	m->base = NULL;
	m->size = 0;
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY |
	    O_CLOEXEC)) < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		ret = -errno;
	else if (!S_ISREG(st.st_mode))
		ret = -ENOTREG;
	else if ((uint64_t)st.st_size > REFTABLE_MAX_FILE)
		ret = -EFBIG;
	else if (st.st_size > 0)
		ret = map_open(m, fd, &st);
	close(fd);
	return ret;
}

/*
 * One pass over dir's stack. -EAGAIN when a table tables.list names is
 * not there (and last is false): a compaction replaced it since.
 * -EFSCORRUPTED, logged once, when a table cannot be read: git then loads
 * no stack at all, and leaving the table out would bring back what its
 * updates deleted or moved.
 */
static int
stack_pass(const char *dir, size_t rawsz, bool last, struct stack *s)
{
	char list[4096], line[NAME_MAX + 1], path[sizeof(list) + sizeof(line)];
	uint64_t prev_max = 0;
	size_t len;
	FILE *f;
	int ret;

	snprintf(list, sizeof(list), "%s/tables.list", dir);
	if ((ret = file_stream(list, &f)) < 0) {
		if (ret == -ENOTREG)
			log_once(LOGL_WARN, "%s: not a regular file: ignored",
			    list);
		else if (ret != -ENOENT && ret != -ENOMEM)
			log_once(LOGL_WARN, "%s: %s: ignored", list,
			    strerror(-ret));
		return ret == -ENOMEM ? ret : 0;
	}
	/* Read as it comes, however long; empty lines skipped, as git. */
	while ((ret = file_getline(f, line, sizeof(line), &len)) > 0) {
		struct reftable_table t, *grown;
		struct map m = { .slot = -1 };
		uint64_t lost;

		if (!len)
			continue;
		if (len >= sizeof(line) || strchr(line, '/') ||
		    line[0] == '.') {
			log_once(LOGL_ERROR, "%s: table name '%s%s' refused: "
			    REFTABLE_REFUSED, list, line,
			    len >= sizeof(line) ? "..." : "");
			ret = -EFSCORRUPTED;
			break;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, line);
		ret = table_map(path, &m);
		if (ret == -ENOENT && !last) {
			ret = -EAGAIN;
			break;
		}
		if (ret == -ENOMEM)
			break;
		if (ret < 0) {
			log_once(LOGL_ERROR, "%s: %s: " REFTABLE_REFUSED, path,
			    ret == -ENOTREG ? "not a regular file" :
			    ret == -EFBIG ? "too large" : strerror(-ret));
			ret = -EFSCORRUPTED;
			break;
		}
		ret = reftable_parse(m.base ? m.base : (const unsigned char *)"",
		    m.size, rawsz, path, &t);
		if (ret == 0 && map_shrank(&m, &lost)) {
			log_once(LOGL_ERROR, "%s: cut short at offset %llu while "
			    "it was read: " REFTABLE_REFUSED, path,
			    (unsigned long long)lost);
			reftable_table_release(&t);
			ret = -EFSCORRUPTED;
		}
		map_close(&m);
		if (ret < 0)
			break;
		/* Each table's updates follow the previous one's. */
		if (s->n && t.min_update_index <= prev_max) {
			log_once(LOGL_ERROR, "%s: update indexes %llu-%llu do "
			    "not follow the previous table's (up to %llu) at "
			    "offset 8: " REFTABLE_REFUSED, path,
			    (unsigned long long)t.min_update_index,
			    (unsigned long long)t.max_update_index,
			    (unsigned long long)prev_max);
			reftable_table_release(&t);
			ret = -EFSCORRUPTED;
			break;
		}
		if (!(grown = realloc(s->t, (s->n + 1) * sizeof(*grown)))) {
			reftable_table_release(&t);
			ret = -ENOMEM;
			break;
		}
		s->t = grown;
		s->t[s->n++] = t;
		prev_max = t.max_update_index;
	}
	if (ret == -EIO)
		log_once(LOGL_ERROR, "%s: read error at offset %lld", list,
		    (long long)ftello(f));
	fclose(f);
	return ret;
}

/*
 * dir's stack, whole: read again while a table vanished under the load or
 * tables.list changed during it (git renamed a new one in), so that no
 * load mixes two stacks. -EFSCORRUPTED (logged) if a table of the last
 * pass could not be read: the stack is refused whole, s left empty.
 */
static int
stack_load(const char *dir, size_t rawsz, struct stack *s)
{
	char list[4096];
	int ret;

	snprintf(list, sizeof(list), "%s/tables.list", dir);
	for (int pass = 1;; pass++) {
		struct fileid before = list_id(list), after;

		ret = stack_pass(dir, rawsz, pass == REFTABLE_LOAD_PASSES, s);
		if (ret == 0) {
			after = list_id(list);
			if (fileid_same(&before, &after) ||
			    pass == REFTABLE_LOAD_PASSES)
				return 0;
		}
		stack_release(s);
		/* A table refused in a stack replaced under the pass. */
		after = list_id(list);
		if (ret == -EFSCORRUPTED && pass < REFTABLE_LOAD_PASSES &&
		    !fileid_same(&before, &after))
			continue;
		if (ret < 0 && ret != -EAGAIN)
			return ret;
	}
}

static int
cmp_rec_ptr(const void *a, const void *b)
{
	const struct reftable_rec *x = *(const struct reftable_rec *const *)a;
	const struct reftable_rec *y = *(const struct reftable_rec *const *)b;
	int c = strcmp(x->name, y->name);

	/* The same name: the newer first (tables are in update order). */
	if (c)
		return c;
	return x->update_index < y->update_index ? 1 :
	    x->update_index > y->update_index ? -1 : 0;
}

/*
 * The live records of a stack: for each name, the newest record, unless
 * it is a deletion. *out (malloc'd) points into s, sorted by name.
 */
static int
merge(const struct stack *s, const struct reftable_rec ***out, size_t *n)
{
	const struct reftable_rec **all;
	size_t total = 0, live = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < s->n; i++)
		total += s->t[i].n;
	if (!(all = malloc((total ? total : 1) * sizeof(*all))))
		return -ENOMEM;
	total = 0;
	for (size_t i = 0; i < s->n; i++)
		for (size_t j = 0; j < s->t[i].n; j++)
			all[total++] = &s->t[i].v[j];
	if (total)
		qsort(all, total, sizeof(*all), cmp_rec_ptr);
	for (size_t i = 0; i < total; i++) {
		if (i && !strcmp(all[i - 1]->name, all[i]->name))
			continue;
		if (all[i]->type != REFTABLE_DELETION)
			all[live++] = all[i];
	}
	/* Names compared equal above are dropped in order: still sorted. */
	*out = all;
	*n = live;
	return 0;
}

static const struct reftable_rec *
find(const struct reftable_rec *const *v, size_t n, const char *name)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(v[mid]->name, name);

		if (!c)
			return v[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The id r names, following symbolic refs as the files backend does. */
static int
resolve(const struct reftable_rec *const *v, size_t n,
    const struct reftable_rec *r, size_t rawsz, unsigned char *id)
{
	for (unsigned depth = 0; r; depth++) {
		if (r->type != REFTABLE_SYMREF) {
			memcpy(id, r->id, rawsz);
			return 0;
		}
		/* As git: at most REFS_MAX_SYMREF_DEPTH records read. */
		if (depth + 1 >= REFS_MAX_SYMREF_DEPTH)
			return -ELOOP;
		r = find(v, n, r->target);
	}
	return -ENOENT;
}

/* The refs list of the live records; HEAD from head (may be NULL). */
static int
build(const char *dir, const struct reftable_rec *const *v, size_t n,
    const struct reftable_rec *head, size_t rawsz, struct refs *refs)
{
	if (n && !(refs->v = calloc(n, sizeof(*refs->v))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct reftable_rec *r = v[i];
		struct ref *ref = &refs->v[refs->n];

		if (strncmp(r->name, "refs/", 5))
			continue;
		if (!refname_ok(r->name)) {
			log_once(LOGL_WARN, "%s: ref name not shown: %s", dir,
			    r->name);
			continue;
		}
		switch (resolve(v, n, r, rawsz, ref->id)) {
		case 0:
			break;
		case -ELOOP:
			log_once(LOGL_WARN, "%s: %s: symbolic refs nested "
			    "deeper than %d: not shown", dir, r->name,
			    REFS_MAX_SYMREF_DEPTH - 1);
			continue;
		default:
			log_once(LOGL_WARN, "%s: %s: dangling symbolic ref: "
			    "not shown", dir, r->name);
			continue;
		}
		if (!(ref->name = strdup(r->name)))
			return -ENOMEM;
		refs->n++;
	}
	/* Sorted already: the records are, by strcmp() as refs.h wants. */
	if (!head)
		return 0;
	if (head->type == REFTABLE_SYMREF) {
		if (refname_ok(head->target) &&
		    !(refs->head_target = strdup(head->target)))
			return -ENOMEM;
	} else {
		memcpy(refs->head_id, head->id, rawsz);
		refs->head_detached = true;
	}
	return 0;
}

int
reftable_load(const struct repo *repo, const struct refs *prev,
    struct refs **out)
{
	struct stack common = { 0 }, own = { 0 };
	const struct reftable_rec **v = NULL, **wv = NULL, *head;
	struct refs *refs;
	char dir[4096], wdir[4096];
	size_t n = 0, wn = 0;
	bool linked = strcmp(repo->gitdir, repo->commondir) != 0;
	int ret;

	(void)prev;	/* a stack refused is said once by log_once() */
	*out = NULL;
	if (!(refs = calloc(1, sizeof(*refs))))
		return -ENOMEM;
	snprintf(dir, sizeof(dir), "%s/reftable", repo->commondir);
	snprintf(wdir, sizeof(wdir), "%s/reftable", repo->gitdir);
	/*
	 * A stack that cannot be read whole shows no refs (and no HEAD), as
	 * git, which then loads none: said once where it was found.
	 */
	if ((ret = stack_load(dir, repo->rawsz, &common)) < 0 ||
	    (ret = merge(&common, &v, &n)) < 0)
		goto done;
	/* A linked worktree keeps its own HEAD in its own stack. */
	if (linked && ((ret = stack_load(wdir, repo->rawsz, &own)) < 0 ||
	    (ret = merge(&own, &wv, &wn)) < 0))
		goto done;
	head = linked ? find(wv, wn, "HEAD") : find(v, n, "HEAD");
	ret = build(dir, v, n, head, repo->rawsz, refs);
done:
	free(v);
	free(wv);
	stack_release(&common);
	stack_release(&own);
	if (ret == -EFSCORRUPTED) {
		refs_free(refs);
		refs = calloc(1, sizeof(*refs));
		ret = refs ? 0 : -ENOMEM;
	}
	if (ret < 0) {
		refs_free(refs);
		return ret;
	}
	*out = refs;
	return 0;
}
