/*
 * tree: tree object parsing, for listing and looking up directories;
 * takes no lock and allocates only the entry array.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tree.h"

bool
tree_name_ok(const char *name, size_t len)
{
	if (len == 0 || (len == 1 && name[0] == '.') ||
	    (len == 2 && name[0] == '.' && name[1] == '.'))
		return false;
	return memchr(name, '/', len) == NULL;
}

/* The mode in octal at p..end (up to the space), or 0 if malformed. */
static unsigned
parse_mode(const unsigned char *p, const unsigned char *sp)
{
	unsigned mode = 0;

	if (sp - p < 5 || sp - p > 6)
		return 0;
	for (; p < sp; p++) {
		if (*p < '0' || *p > '7')
			return 0;
		mode = mode << 3 | (unsigned)(*p - '0');
	}
	switch (mode) {
	case TREE_MODE_FILE:
	case TREE_MODE_EXEC:
	case TREE_MODE_LINK:
	case TREE_MODE_DIR:
	case TREE_MODE_GITLINK:
		return mode;
	case 0100664:	/* written by old versions of git */
		return TREE_MODE_FILE;
	default:
		return 0;
	}
}

int
tree_parse(struct tree *t, const unsigned char *buf, size_t len, size_t rawsz)
{
	const unsigned char *p = buf, *end = buf + len;
	size_t alloc = 0;

	memset(t, 0, sizeof(*t));
	while (p < end) {
		const unsigned char *sp = memchr(p, ' ', (size_t)(end - p));
		const unsigned char *nul = sp ? memchr(sp + 1, '\0',
		    (size_t)(end - sp - 1)) : NULL;
		struct tree_entry e;

		if (!sp || !nul || (size_t)(end - nul - 1) < rawsz) {
			t->truncated = true;
			t->bad_off = (size_t)(p - buf);
			break;
		}
		e.mode = parse_mode(p, sp);
		e.name = (const char *)sp + 1;
		e.namelen = (size_t)(nul - sp - 1);
		e.id = nul + 1;
		p = nul + 1 + rawsz;
		if (!tree_name_ok(e.name, e.namelen)) {
			if (!t->dropped++)
				t->drop_off = (size_t)((const unsigned char *)
				    e.name - buf);
			continue;
		}
		if (t->n == alloc) {
			size_t na = alloc ? 2 * alloc : 16;
			struct tree_entry *grown = realloc(t->entries,
			    na * sizeof(*grown));

			if (!grown) {
				tree_release(t);
				return -ENOMEM;
			}
			t->entries = grown;
			alloc = na;
		}
		t->entries[t->n++] = e;
	}
	return 0;
}

void
tree_release(struct tree *t)
{
	free(t->entries);
	t->entries = NULL;
	t->n = 0;
}
