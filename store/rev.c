/*
 * rev: git's ancestry suffixes (gitrevisions(7)) after a commit, so that
 * the mount can name an ancestor without a chain of parent links, which
 * the kernel stops following after 40:
 *
 *   suffix := ( "~" digits? | "^" digits? )*
 *
 * "~N" is the N-th generation ancestor through first parents, "^N" the
 * N-th parent, "^0" and "~0" the commit itself; a bare "~" or "^" is one
 * step. A tag is peeled to its commit first, as git does. Each step takes
 * the parent from the commit-graph (a lookup in memory) or else reads one
 * commit's header (commit.h), so a walk is bounded by REV_STEPS_MAX.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commit.h"
#include "log.h"
#include "odb.h"

/*
 * The most commits one suffix may step through. A step costs what reading
 * a commit's header costs (a few microseconds from a pack), so a lookup
 * stays under a second or so; git itself would go on.
 */
#define REV_STEPS_MAX 100000

/*
 * The count after a '~' or '^' at *s (1 when no digits follow), moving *s
 * past it; -1 when it is too large to be any ancestor.
 */
static long
count(const char **s)
{
	long n = 0;

	if (**s < '0' || **s > '9')
		return 1;
	while (**s >= '0' && **s <= '9') {
		if (n > REV_STEPS_MAX)
			n = REV_STEPS_MAX + 1;	/* stays too large */
		else
			n = n * 10 + (**s - '0');
		(*s)++;
	}
	return n > REV_STEPS_MAX ? -1 : n;
}

bool
rev_suffix_ok(const char *suffix)
{
	if (!*suffix)
		return false;
	while (*suffix) {
		if (*suffix != '~' && *suffix != '^')
			return false;
		suffix++;
		while (*suffix >= '0' && *suffix <= '9')
			suffix++;
	}
	return true;
}

/*
 * The commits suffix steps through, or -1 past REV_STEPS_MAX; -ENOENT
 * (as -2) for a parent number no commit has. Counted before any is read.
 */
static long
steps_of(const char *suffix)
{
	unsigned long steps = 0;

	while (*suffix) {
		char op = *suffix++;
		long n = count(&suffix);

		if (op == '^' && (n < 0 || n > COMMIT_PARENTS_MAX))
			return -2;
		if (n < 0 || (steps += op == '^' ? 1 : (unsigned long)n) >
		    REV_STEPS_MAX)
			return -1;
	}
	return (long)steps;
}

/*
 * Step from commit id to its parent which (0 for the first), as the
 * commit names it: read from the commit, never from the commit-graph,
 * whose parent links a damaged or hostile graph may bend (git's rev-parse
 * would follow them; commits/<id>/parent, from the commit, would not).
 * -ENOENT when there is no such parent, or id is a shallow clone's
 * boundary (git stops there even when the parent is at hand).
 */
static int
parent_step(struct odb *odb, unsigned char *id, size_t which)
{
	size_t rawsz = odb_rawsz(odb);
	struct commit c;
	int ret;

	if (odb_is_shallow(odb, id))
		return -ENOENT;
	if ((ret = odb_commit_read(odb, id, &c)) == 0 && which >= c.nparents)
		ret = -ENOENT;
	if (ret == 0)
		memcpy(id, c.parents + which * rawsz, rawsz);
	commit_release(&c);
	return ret;
}

int
odb_rev_suffix(struct odb *odb, const unsigned char *id, const char *suffix,
    unsigned char *out)
{
	enum obj_type type;
	long steps;
	int ret;

	if (!rev_suffix_ok(suffix))
		return -EINVAL;
	if ((steps = steps_of(suffix)) < 0)
		return steps == -1 ? -E2BIG : -ENOENT;
	if ((ret = odb_peel(odb, id, out, &type)) < 0)
		return ret;
	if (type != OBJ_COMMIT)
		return -ENOENT;
	while (*suffix) {
		char op = *suffix++;
		long n = count(&suffix);

		/* ^N: one step to parent N; ~N: N steps to parent 1. */
		for (long k = op == '^' ? !!n : n; k > 0; k--)
			if ((ret = parent_step(odb, out, op == '^' ?
			    (size_t)n - 1 : 0)) < 0)
				return ret;
	}
	/* The last step is not read: it must be there (a shallow clone). */
	return odb_has(odb, out) ? 0 : -ENOENT;
}
