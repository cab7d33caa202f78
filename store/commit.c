/*
 * commit: commit and tag header parsing: a commit read only as far as its
 * header (commit_header_read()), a tag's first lines for peeling
 * (tag_target()). Every read stays inside the bytes read.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "commit.h"
#include "log.h"
#include "object.h"

/*
 * The first read of a header: a usual commit's (tree, parent, author,
 * committer: some 250 bytes) fits many times over, a signed one's too.
 * Doubled until the blank line is in, or COMMIT_HEADER_MAX + 1 bytes are.
 */
#define HEADER_STEP ((size_t)8 << 10)

/* If the line at *p is "name SP value", point at the value; advance *p. */
/*
 * The header line name at *p, if it is one: its value in val and len, and
 * *p past it. last_ok: end is where the object ends, and a last line may
 * lack its newline there, as git reads it; else end may cut a line short.
 */
static bool
header_at(const char **p, const char *end, const char *name,
    const char **val, size_t *len, bool last_ok)
{
	size_t n = strlen(name);
	const char *lf;

	if ((size_t)(end - *p) <= n || memcmp(*p, name, n) || (*p)[n] != ' ')
		return false;
	if (!(lf = memchr(*p + n + 1, '\n', (size_t)(end - *p - n - 1)))) {
		if (!last_ok)
			return false;
		lf = end;
	}
	*val = *p + n + 1;
	*len = (size_t)(lf - *val);
	*p = lf < end ? lf + 1 : end;
	return true;
}

/* Within a header whose end is a line's or the object's end. */
static bool
header(const char **p, const char *end, const char *name, const char **val,
    size_t *len)
{
	return header_at(p, end, name, val, len, true);
}

static bool
hex_value(const char *val, size_t len, size_t rawsz, unsigned char *raw)
{
	char hex[OID_HEXSZ_MAX + 1];

	if (len != 2 * rawsz)
		return false;
	/* git's get_oid_hex() takes either case; ids are named in lower. */
	for (size_t i = 0; i < len; i++)
		hex[i] = val[i] >= 'A' && val[i] <= 'F' ? (char)(val[i] + 32) :
		    val[i];
	hex[len] = '\0';
	return oid_parse_hex(raw, hex, rawsz);
}

/* The last second gmtime(3) can give a year of: 2147485547-12-31. */
#define IDENT_TIME_MAX INT64_C(67768036191676799)

/* The seconds in "Name <email> SECONDS TZ", or 0. */
static int64_t
ident_time(const char *val, size_t len)
{
	const char *gt = NULL, *p;
	int64_t t = 0;

	for (p = val; p < val + len; p++)
		if (*p == '>')
			gt = p;
	if (!gt)
		return 0;
	for (p = gt + 1; p < val + len && *p == ' '; p++)
		;
	for (; p < val + len && *p >= '0' && *p <= '9'; p++) {
		if (t > (INT64_MAX - 9) / 10)
			return 0;
		t = t * 10 + (*p - '0');
	}
	/* Past what gmtime(3) can say (year 2^31), git shows 1970: so 0. */
	return t > IDENT_TIME_MAX ? 0 : t;
}

int
commit_header_read(struct reader *r, const char *what, unsigned char **buf,
    size_t *len)
{
	uint64_t size = reader_info(r)->size;
	size_t max = size > COMMIT_HEADER_MAX ? COMMIT_HEADER_MAX + 1 :
	    (size_t)size, have = 0, alloc = 0;
	unsigned char *b = NULL, *grown;
	const unsigned char *blank = NULL;
	ssize_t n;
	int ret;

	*buf = NULL;
	*len = 0;
	while (!blank && have < max) {
		size_t from = have ? have - 1 : 0;

		if (have == alloc) {
			alloc = alloc ? 2 * alloc : HEADER_STEP;
			if (alloc > max)
				alloc = max;
			if (!(grown = realloc(b, alloc))) {
				ret = -ENOMEM;
				goto fail;
			}
			b = grown;
		}
		if ((n = reader_read(r, b + have, alloc - have, have)) < 0) {
			ret = (int)n;
			goto fail;
		}
		if (n == 0) {
			ret = log_corrupt("%s: ends at byte %zu of %llu", what,
			    have, (unsigned long long)size);
			goto fail;
		}
		have += (size_t)n;
		blank = memmem(b + from, have - from, "\n\n", 2);
	}
	if (!blank && size > COMMIT_HEADER_MAX) {
		ret = log_corrupt("%s: no blank line in its first %zu bytes: "
		    "its header runs past offset %zu, the most odbfs reads",
		    what, have, COMMIT_HEADER_MAX);
		goto fail;
	}
	*buf = b;
	*len = blank ? (size_t)(blank - b) + 2 : have;
	return 0;
fail:
	free(b);
	return ret;
}

/* Set *copy to a malloc'd copy of the len bytes at val, and a NUL. */
static int
copy_value(char **copy, size_t *copy_len, const char *val, size_t len)
{
	char *s = malloc(len + 1);

	if (!s)
		return -ENOMEM;
	memcpy(s, val, len);
	s[len] = '\0';
	free(*copy);
	*copy = s;
	*copy_len = len;
	return 0;
}

/*
 * Where the header of an object of size bytes ends, from its first len
 * bytes: at the first blank line, or with the object.
 */
static int
header_bounds(const char *what, const unsigned char *buf, size_t len,
    uint64_t size, uint64_t *header_len, uint64_t *message_len)
{
	const unsigned char *blank;

	if (len > size)
		len = (size_t)size;
	*message_len = 0;
	if ((blank = memmem(buf, len, "\n\n", 2))) {
		*header_len = (uint64_t)(blank - buf) + 1;
		*message_len = size - *header_len - 1;
	} else if (len == size) {
		*header_len = size;
	} else {
		return log_corrupt("%s: no blank line in its first %zu bytes, "
		    "all that was read", what, len);
	}
	return 0;
}

int
commit_parse(struct commit *c, const char *what, const unsigned char *buf,
    size_t len, uint64_t size, size_t rawsz)
{
	const char *start = (const char *)buf, *p = start, *end, *val;
	size_t vlen, at, alloc = 0;
	int ret = 0;

	memset(c, 0, sizeof(*c));
	if ((ret = header_bounds(what, buf, len, size, &c->header_len,
	    &c->message_len)) < 0)
		return ret;
	end = start + c->header_len;
	if (!header(&p, end, "tree", &val, &vlen) ||
	    !hex_value(val, vlen, rawsz, c->tree)) {
		ret = log_corrupt("%s: no valid tree line at offset 0", what);
		goto fail;
	}
	while (at = (size_t)(p - start), header(&p, end, "parent", &val,
	    &vlen)) {
		if (c->nparents == COMMIT_PARENTS_MAX) {
			ret = log_corrupt("%s: more than %d parents, at offset "
			    "%zu", what, COMMIT_PARENTS_MAX, at);
			goto fail;
		}
		if (c->nparents == alloc) {
			size_t na = alloc ? 2 * alloc : 2;
			unsigned char *grown;

			if (na > COMMIT_PARENTS_MAX)
				na = COMMIT_PARENTS_MAX;
			if (!(grown = realloc(c->parents, na * rawsz))) {
				ret = -ENOMEM;
				goto fail;
			}
			c->parents = grown;
			alloc = na;
		}
		if (!hex_value(val, vlen, rawsz, c->parents +
		    c->nparents * rawsz)) {
			ret = log_corrupt("%s: bad parent line at offset %zu",
			    what, at);
			goto fail;
		}
		c->nparents++;
	}
	/* The other headers, up to the blank line; the last of each wins. */
	while (ret == 0 && p < end) {
		const char *lf = memchr(p, '\n', (size_t)(end - p));

		if (header(&p, end, "author", &val, &vlen)) {
			ret = copy_value(&c->author, &c->author_len, val, vlen);
		} else if (header(&p, end, "committer", &val, &vlen)) {
			ret = copy_value(&c->committer, &c->committer_len, val,
			    vlen);
			c->time = ident_time(val, vlen);
		} else {
			p = lf ? lf + 1 : end;
		}
	}
	if (ret == 0)
		return 0;
fail:
	commit_release(c);
	return ret;
}

void
commit_release(struct commit *c)
{
	free(c->parents);
	free(c->author);
	free(c->committer);
	memset(c, 0, sizeof(*c));
}

int
tag_target(const unsigned char *buf, size_t len, size_t rawsz,
    unsigned char *target, enum obj_type *type)
{
	const char *p = (const char *)buf, *end = p + len, *val;
	size_t vlen;

	/* The first bytes of a tag: a line may be cut short at len. */
	if (!header_at(&p, end, "object", &val, &vlen, false) ||
	    !hex_value(val, vlen, rawsz, target) ||
	    !header_at(&p, end, "type", &val, &vlen, false) ||
	    (*type = object_type_parse(val, vlen)) == OBJ_NONE)
		return -EFSCORRUPTED;
	return 0;
}

int
tag_parse(struct tag *t, const char *what, const unsigned char *buf,
    size_t len, uint64_t size, size_t rawsz)
{
	const char *p = (const char *)buf, *end, *val, *line;
	size_t vlen;
	int ret;

	memset(t, 0, sizeof(*t));
	if ((ret = header_bounds(what, buf, len, size, &t->header_len,
	    &t->message_len)) < 0)
		return ret;
	end = p + t->header_len;
	if (!header(&p, end, "object", &val, &vlen) ||
	    !hex_value(val, vlen, rawsz, t->object))
		return log_corrupt("%s: no valid object line at offset 0",
		    what);
	line = p;
	if (!header(&p, end, "type", &val, &vlen) ||
	    (t->type = object_type_parse(val, vlen)) == OBJ_NONE)
		return log_corrupt("%s: no valid type line at offset %zu",
		    what, (size_t)(line - (const char *)buf));
	/* The other headers, up to the blank line; the last of each wins. */
	while (ret == 0 && p < end) {
		const char *lf = memchr(p, '\n', (size_t)(end - p));

		if (header(&p, end, "tag", &val, &vlen)) {
			ret = copy_value(&t->name, &t->name_len, val, vlen);
		} else if (header(&p, end, "tagger", &val, &vlen)) {
			ret = copy_value(&t->tagger, &t->tagger_len, val, vlen);
			t->time = ident_time(val, vlen);
		} else {
			p = lf ? lf + 1 : end;
		}
	}
	if (ret < 0)
		tag_release(t);
	return ret;
}

void
tag_release(struct tag *t)
{
	free(t->name);
	free(t->tagger);
	memset(t, 0, sizeof(*t));
}
