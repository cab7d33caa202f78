/*
 * refs: the repository's references, loose (refs/...) and packed
 * (packed-refs), and HEAD, read into an immutable sorted list.
 *
 *   loose ref   := hex LF | "ref: " refname LF
 *   packed-refs := ("#" comment LF)? (hex SP refname LF ("^" hex LF)?)*
 *
 * A loose ref overrides a packed one of the same name. Symbolic refs are
 * resolved (up to REFS_MAX_SYMREF_DEPTH). Names that git's
 * check-ref-format would refuse are left out and logged.
 *
 * A repository of the reftable backend is read by reftable.c into the
 * same list (reftable_load()); the one who holds a repository's refs asks
 * config_reftable_now() which of the two loads to call.
 *
 * What readers of the list call is public (odbstore/refs.h); loading it
 * is the store's.
 */
#ifndef ODBFS_REFS_H
#define ODBFS_REFS_H

#include <stdbool.h>
#include <stddef.h>

#include "odbstore/refs.h"
#include "oid.h"
#include "repo.h"

/*
 * The most refs read to resolve one, as git's SYMREF_MAXDEPTH: a chain of
 * up to 4 symbolic refs, then the ref that holds an id.
 */
#define REFS_MAX_SYMREF_DEPTH 5

/*
 * The longest packed-refs line read: an id, a space and a name of 64 KiB
 * (git sets no bound: a loose ref's path must fit PATH_MAX, but a packed
 * one's name need not, and git reads names of 4 KiB and more there). A
 * longer one ends the file, and so does a line that holds a NUL byte (no text has
 * one; a sparse file is all of them): the lines before are read, that
 * one and the rest are left out, with one log line. Neither makes the
 * daemon read on through gigabytes.
 */
#define PACKED_LINE_MAX (OID_HEXSZ_MAX + 1 + 65536)

struct ref {
	char *name;			/* "refs/heads/main" */
	unsigned char id[OID_RAWSZ_MAX];
};

struct refs {
	struct ref *v;			/* sorted by name */
	size_t n;
	char *head_target;		/* HEAD's "ref: " target, or NULL */
	unsigned char head_id[OID_RAWSZ_MAX];	/* detached HEAD */
	bool head_detached;
	unsigned left_out;		/* REFS_LEFT_OUT_*: not regular files */
};

#define REFS_LEFT_OUT_PACKED 1u	/* packed-refs */
#define REFS_LEFT_OUT_HEAD 2u	/* HEAD */

/*
 * Read the references of the files backend. prev is the list this one
 * replaces, or NULL: a file left out is logged once, when prev did not
 * leave it out already. Release the list with refs_free().
 */
int refs_load(const struct repo *repo, const struct refs *prev,
    struct refs **out);
void refs_free(struct refs *refs);

/* Would git's check-ref-format accept name (with at least one '/')? */
bool refname_ok(const char *name);

#endif
