/*
 * commit: commit and tag header parsing. Called by the FUSE layer (commit
 * directories) and odb.c (peeling tags). Every read stays inside buf.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "commit.h"
#include "log.h"

/* If the line at *p is "name SP value", point at the value; advance *p. */
static bool
header(const char **p, const char *end, const char *name, const char **val,
    size_t *len)
{
	size_t n = strlen(name);
	const char *lf;

	if ((size_t)(end - *p) <= n || memcmp(*p, name, n) || (*p)[n] != ' ')
		return false;
	lf = memchr(*p + n + 1, '\n', (size_t)(end - *p - n - 1));
	if (!lf)
		return false;
	*val = *p + n + 1;
	*len = (size_t)(lf - *val);
	*p = lf + 1;
	return true;
}

static bool
hex_value(const char *val, size_t len, size_t rawsz, unsigned char *raw)
{
	char hex[OID_HEXSZ_MAX + 1];

	if (len != 2 * rawsz)
		return false;
	memcpy(hex, val, len);
	hex[len] = '\0';
	return oid_parse_hex(raw, hex, rawsz);
}

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
	return t;
}

int
commit_parse(struct commit *c, const unsigned char *buf, size_t len,
    size_t rawsz)
{
	const char *p = (const char *)buf, *end = p + len, *val;
	size_t vlen, alloc = 0;

	memset(c, 0, sizeof(*c));
	if (!header(&p, end, "tree", &val, &vlen) ||
	    !hex_value(val, vlen, rawsz, c->tree))
		return -EFSCORRUPTED;
	while (header(&p, end, "parent", &val, &vlen)) {
		if (c->nparents == alloc) {
			size_t na = alloc ? 2 * alloc : 2;
			unsigned char *grown = realloc(c->parents, na * rawsz);

			if (!grown) {
				commit_release(c);
				return -ENOMEM;
			}
			c->parents = grown;
			alloc = na;
		}
		if (!hex_value(val, vlen, rawsz, c->parents +
		    c->nparents * rawsz)) {
			commit_release(c);
			return -EFSCORRUPTED;
		}
		c->nparents++;
	}
	/* The other headers, up to the blank line. */
	while (p < end && *p != '\n') {
		const char *lf = memchr(p, '\n', (size_t)(end - p));

		if (header(&p, end, "author", &val, &vlen)) {
			c->author = val;
			c->author_len = vlen;
		} else if (header(&p, end, "committer", &val, &vlen)) {
			c->committer = val;
			c->committer_len = vlen;
			c->time = ident_time(val, vlen);
		} else {
			p = lf ? lf + 1 : end;
		}
	}
	if (p < end) {
		c->message = p + 1;
		c->message_len = (size_t)(end - p - 1);
	}
	return 0;
}

void
commit_release(struct commit *c)
{
	free(c->parents);
	c->parents = NULL;
	c->nparents = 0;
}

int
tag_target(const unsigned char *buf, size_t len, size_t rawsz,
    unsigned char *target, enum obj_type *type)
{
	const char *p = (const char *)buf, *end = p + len, *val;
	size_t vlen;

	if (!header(&p, end, "object", &val, &vlen) ||
	    !hex_value(val, vlen, rawsz, target) ||
	    !header(&p, end, "type", &val, &vlen) ||
	    (*type = object_type_parse(val, vlen)) == OBJ_NONE)
		return -EFSCORRUPTED;
	return 0;
}
