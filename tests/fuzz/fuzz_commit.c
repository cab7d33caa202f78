/*
 * fuzz_commit: commit and tag headers (commit_parse() and tag_target() in
 * store/commit.c). The input is a commit or tag payload, as `git cat-file
 * commit` or `git cat-file tag` prints it, and both functions read it with
 * sha1 and with sha256 ids whatever it is.
 *
 * A commit that parses must have begun with its tree line, whose id is
 * checked against a decoding of the hex done here; author and committer
 * must be copies of bytes of the input, and header and message must split
 * it at its first blank line. The commit parsed again from its header
 * alone (as odbfs reads it, not the whole object) must come out the same,
 * and from less than that must not parse. A tag's target is checked the
 * way a commit's tree is, and must be found in its first TAG_TARGET_MAX
 * bytes when it is found at all.
 */
#include <stdbool.h>
#include <string.h>

#include "commit.h"
#include "fuzz.h"

/* The id in the hex at p (2 * rawsz digits, either case), if it is one. */
static bool
ref_hex(const uint8_t *p, size_t rawsz, unsigned char *raw)
{
	for (size_t i = 0; i < 2 * rawsz; i++) {
		int v;

		if (p[i] >= '0' && p[i] <= '9')
			v = p[i] - '0';
		else if (p[i] >= 'a' && p[i] <= 'f')
			v = p[i] - 'a' + 10;
		else if (p[i] >= 'A' && p[i] <= 'F')
			v = p[i] - 'A' + 10;
		else
			return false;
		if (i % 2)
			raw[i / 2] = (unsigned char)(raw[i / 2] << 4 | v);
		else
			raw[i / 2] = (unsigned char)v;
	}
	return true;
}

/*
 * Does the input open with "name SP hex LF" (or, if last_ok, with the
 * hex ending the input)? The id goes to raw.
 */
static bool
ref_line(const uint8_t *data, size_t size, const char *name, size_t rawsz,
    unsigned char *raw, bool last_ok)
{
	size_t n = strlen(name);

	return size >= n + 1 + 2 * rawsz && !memcmp(data, name, n) &&
	    data[n] == ' ' && (size == n + 1 + 2 * rawsz ? last_ok :
	    data[n + 1 + 2 * rawsz] == '\n') &&
	    ref_hex(data + n + 1, rawsz, raw);
}

/* Do a and b hold the same header fields? */
static bool
same_commit(const struct commit *a, const struct commit *b, size_t rawsz)
{
	return !memcmp(a->tree, b->tree, rawsz) &&
	    a->nparents == b->nparents && (!a->nparents ||
	    !memcmp(a->parents, b->parents, a->nparents * rawsz)) &&
	    a->author_len == b->author_len && !a->author == !b->author &&
	    (!a->author || !memcmp(a->author, b->author, a->author_len)) &&
	    a->committer_len == b->committer_len &&
	    !a->committer == !b->committer && (!a->committer ||
	    !memcmp(a->committer, b->committer, a->committer_len)) &&
	    a->time == b->time && a->header_len == b->header_len &&
	    a->message_len == b->message_len;
}

/* Is the value (len bytes and a NUL) a copy of bytes of the input? */
static bool
copied(const char *v, size_t len, const uint8_t *data, size_t size)
{
	return !v || (v[len] == '\0' && memmem(data, size, v, len));
}

static void
one(const uint8_t *data, size_t size, size_t rawsz)
{
	unsigned char want[OID_RAWSZ_MAX], target[OID_RAWSZ_MAX];
	struct commit c, again;
	enum obj_type type = OBJ_NONE, part = OBJ_NONE;
	bool tree_line = ref_line(data, size, "tree", rawsz, want, true);
	const uint8_t *blank = memmem(data, size, "\n\n", 2);

	if (commit_parse(&c, "fuzz", data, size, size, rawsz) == 0) {
		size_t hlen = (size_t)c.header_len;

		FUZZ_CHECK(tree_line && !memcmp(c.tree, want, rawsz));
		FUZZ_CHECK((c.nparents == 0) == (c.parents == NULL));
		FUZZ_CHECK(c.nparents <= COMMIT_PARENTS_MAX);
		FUZZ_CHECK(copied(c.author, c.author_len, data, size));
		FUZZ_CHECK(copied(c.committer, c.committer_len, data, size));
		FUZZ_CHECK(c.time >= 0);
		FUZZ_CHECK(blank ? hlen == (size_t)(blank - data) + 1 &&
		    hlen + 1 + c.message_len == size :
		    hlen == size && c.message_len == 0);
		if (blank) {
			FUZZ_CHECK(commit_parse(&again, "fuzz", data,
			    hlen + 1, size, rawsz) == 0);
			FUZZ_CHECK(same_commit(&c, &again, rawsz));
			commit_release(&again);
			FUZZ_CHECK(commit_parse(&again, "fuzz", data, hlen,
			    size, rawsz) < 0);
		}
		commit_release(&c);
	} else {
		FUZZ_CHECK(!tree_line || size > 2 * rawsz + 6);
		FUZZ_CHECK(c.parents == NULL && c.nparents == 0);
		FUZZ_CHECK(c.author == NULL && c.committer == NULL);
	}

	if (tag_target(data, size, rawsz, target, &type) == 0) {
		FUZZ_CHECK(ref_line(data, size, "object", rawsz, want, false));
		FUZZ_CHECK(!memcmp(target, want, rawsz));
		FUZZ_CHECK(type >= OBJ_COMMIT && type <= OBJ_TAG);
		/* What odbfs reads of a tag is enough to say the same. */
		FUZZ_CHECK(tag_target(data, size < TAG_TARGET_MAX ? size :
		    TAG_TARGET_MAX, rawsz, want, &part) == 0 &&
		    !memcmp(target, want, rawsz) && part == type);
	} else {
		FUZZ_CHECK(tag_target(data, size < TAG_TARGET_MAX ? size :
		    TAG_TARGET_MAX, rawsz, want, &part) < 0);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_quiet();
	one(data, size, 20);
	one(data, size, 32);
	return 0;
}
