/*
 * commit (private): the parsers of commit and tag headers behind
 * odb_commit_read() and odb_tag_read(), for the store, its tests and its
 * fuzzers; the structs they fill are public (odbstore/commit.h).
 */
#ifndef ODBSTORE_COMMIT_PRIV_H
#define ODBSTORE_COMMIT_PRIV_H

#include "odbstore/commit.h"

/*
 * The most parents a commit may have. git sets no limit, but octopus
 * merges past a few dozen parents are curiosities (the Linux kernel's
 * largest has 66). 1024 keeps the parent ids a commit directory holds
 * under 32 KiB (sha256) and its parents file under 66 KiB, where the
 * header cap alone would allow 21 000 parents; a commit with more is
 * refused (EIO, logged).
 */
#define COMMIT_PARENTS_MAX 1024

/*
 * The first bytes of the commit r reads, up to and including the blank
 * line that ends its header, or the whole object if it has none.
 * *buf is malloc'd (free() it) and holds *len bytes. A header longer than
 * COMMIT_HEADER_MAX gives -EFSCORRUPTED, logged with what (say "commit
 * <hex>") and the offset; other errors are the reader's. Reads at most
 * COMMIT_HEADER_MAX + 1 bytes, 8 KiB for a usual commit.
 */
int commit_header_read(struct reader *r, const char *what,
    unsigned char **buf, size_t *len);

/*
 * Parse a commit of size bytes from buf, its first len bytes (len <=
 * size), which must hold its header and the blank line after it, as
 * commit_header_read() gives them. Nothing in *c points into buf. A
 * commit without a valid tree line, with a bad parent line, with more
 * than COMMIT_PARENTS_MAX parents or whose header buf does not hold gives
 * -EFSCORRUPTED, logged with what and the offset; -ENOMEM. Free with
 * commit_release(), even after a failure.
 */
int commit_parse(struct commit *c, const char *what, const unsigned char *buf,
    size_t len, uint64_t size, size_t rawsz);

/*
 * Parse a tag as commit_parse() does a commit, from its header as
 * commit_header_read() gives it. A tag without valid object and type
 * lines gives -EFSCORRUPTED, logged with what. Free with tag_release(),
 * even after a failure.
 */
int tag_parse(struct tag *t, const char *what, const unsigned char *buf,
    size_t len, uint64_t size, size_t rawsz);

/*
 * The most bytes tag_target() looks at: a tag's "object" and "type" lines,
 * with the longest id and the longest type name. Whatever follows them
 * (the tag's name, tagger, message) may be any size and is not read.
 */
#define TAG_TARGET_MAX (sizeof("object \ntype commit\n") - 1 + OID_HEXSZ_MAX)

/*
 * The object a tag points to, and that object's type, from buf: the tag's
 * first len bytes, of which TAG_TARGET_MAX are all that matter.
 */
int tag_target(const unsigned char *buf, size_t len, size_t rawsz,
    unsigned char *target, enum obj_type *type);

#endif
