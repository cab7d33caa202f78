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

/* Free what a commit holds (odb_commit_read()'s), even after a failure. */
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

/* Free what a tag holds (odb_tag_read()'s), even after a failure. */
void tag_release(struct tag *t);

#endif
