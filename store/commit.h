/*
 * commit: parsing commit and tag objects (gitformat: "commit", "tag").
 *
 *   commit := "tree" SP hex LF ("parent" SP hex LF)* header* LF message
 *   header := name SP value LF (SP continuation LF)*
 *   tag    := "object" SP hex LF "type" SP type LF header* LF message
 */
#ifndef ODBFS_COMMIT_H
#define ODBFS_COMMIT_H

#include <stddef.h>
#include <stdint.h>

#include "object.h"
#include "oid.h"

struct commit {
	unsigned char tree[OID_RAWSZ_MAX];
	unsigned char *parents;		/* nparents ids; malloc'd */
	size_t nparents;
	const char *author;		/* header value, into the buffer */
	size_t author_len;
	const char *committer;
	size_t committer_len;
	int64_t time;			/* committer time, seconds */
	const char *message;		/* after the blank line */
	size_t message_len;
};

/*
 * Parse the commit in buf (which must outlive *c). -EFSCORRUPTED for a
 * commit without a valid tree line. Free with commit_release().
 */
int commit_parse(struct commit *c, const unsigned char *buf, size_t len,
    size_t rawsz);
void commit_release(struct commit *c);

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
