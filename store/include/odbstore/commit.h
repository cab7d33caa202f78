/*
 * commit: parsing commit and tag objects (gitformat: "commit", "tag").
 *
 *   commit := "tree" SP hex LF ("parent" SP hex LF)* header* LF message
 *   header := name SP value LF (SP continuation LF)*
 *   tag    := "object" SP hex LF "type" SP type LF header* LF message
 *
 * Only a commit's header is read: a message may be any size (git writes
 * what it is given, and zlib shrinks 100 MiB of one byte to 100 KiB on
 * disk), so it is left in the object, and what is kept of a commit is
 * bounded by COMMIT_HEADER_MAX whatever the object's size. Of a tag, only
 * the first two lines are read (TAG_TARGET_MAX).
 *
 *   offset 0                header_len          header_len + 1      size
 *   | tree ... LF parent ... | LF (blank line)   | message ...        |
 */
#ifndef ODBFS_COMMIT_H
#define ODBFS_COMMIT_H

#include <stddef.h>
#include <stdint.h>

#include "object.h"
#include "oid.h"
#include "reader.h"

/*
 * The longest header read, in bytes before the blank line. git writes a
 * few hundred; a gpgsig header adds one or two KiB, a mergetag header a
 * whole signed tag, message included: a few KiB. A cap 100 times that
 * leaves room for any header git writes and bounds what a hostile object
 * costs. A commit with a longer header is refused (EIO, logged).
 */
#define COMMIT_HEADER_MAX ((size_t)1 << 20)

/*
 * The most parents a commit may have. git sets no limit, but octopus
 * merges past a few dozen parents are curiosities (the Linux kernel's
 * largest has 66). 1024 keeps the parent ids a commit directory holds
 * under 32 KiB (sha256) and its parents file under 66 KiB, where the
 * header cap alone would allow 21 000 parents; a commit with more is
 * refused (EIO, logged).
 */
#define COMMIT_PARENTS_MAX 1024

struct commit {
	unsigned char tree[OID_RAWSZ_MAX];
	unsigned char *parents;		/* nparents ids; malloc'd */
	size_t nparents;
	/* Header values, malloc'd and NUL-terminated; NULL when absent. */
	char *author;
	size_t author_len;
	char *committer;
	size_t committer_len;
	int64_t time;			/* committer time, seconds */
	/*
	 * Bytes before the blank line that ends the header (all of them when
	 * there is none), and after it: the message, which starts at
	 * header_len + 1. message_len is 0 without a blank line.
	 */
	uint64_t header_len;
	uint64_t message_len;
};

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
void commit_release(struct commit *c);

/*
 * A tag's header: what it points at, and its name and tagger lines. Its
 * message starts at header_len + 1 and runs message_len bytes, as a
 * commit's.
 */
struct tag {
	unsigned char object[OID_RAWSZ_MAX];
	enum obj_type type;		/* of object, as the tag says */
	/* Header values, malloc'd and NUL-terminated; NULL when absent. */
	char *name;
	size_t name_len;
	char *tagger;
	size_t tagger_len;
	int64_t time;			/* tagger time, seconds; 0 without */
	uint64_t header_len;
	uint64_t message_len;
};

/*
 * Parse a tag as commit_parse() does a commit, from its header as
 * commit_header_read() gives it. A tag without valid object and type
 * lines gives -EFSCORRUPTED, logged with what. Free with tag_release(),
 * even after a failure.
 */
int tag_parse(struct tag *t, const char *what, const unsigned char *buf,
    size_t len, uint64_t size, size_t rawsz);
void tag_release(struct tag *t);

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
