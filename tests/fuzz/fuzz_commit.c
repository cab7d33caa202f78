/*
 * fuzz_commit: commit and tag headers (commit_parse() and tag_target() in
 * store/commit.c). The input is a commit or tag payload, as `git cat-file
 * commit` or `git cat-file tag` prints it, and both functions read it with
 * sha1 and with sha256 ids whatever it is.
 *
 * A commit that parses must have begun with its tree line, whose id is
 * checked against a decoding of the hex done here; author, committer and
 * message must point into the input, the message running to its end. A
 * tag's target is checked the same way, and must be found in its first
 * TAG_TARGET_MAX bytes when it is found at all.
 */
#include <stdbool.h>
#include <string.h>

#include "commit.h"
#include "fuzz.h"

/* The id in the hex at p (2 * rawsz digits, lowercase), if it is one. */
static bool
ref_hex(const uint8_t *p, size_t rawsz, unsigned char *raw)
{
	for (size_t i = 0; i < 2 * rawsz; i++) {
		int v;

		if (p[i] >= '0' && p[i] <= '9')
			v = p[i] - '0';
		else if (p[i] >= 'a' && p[i] <= 'f')
			v = p[i] - 'a' + 10;
		else
			return false;
		if (i % 2)
			raw[i / 2] = (unsigned char)(raw[i / 2] << 4 | v);
		else
			raw[i / 2] = (unsigned char)v;
	}
	return true;
}

/* Does the input open with "name SP hex LF"? The id goes to raw. */
static bool
ref_line(const uint8_t *data, size_t size, const char *name, size_t rawsz,
    unsigned char *raw)
{
	size_t n = strlen(name);

	return size >= n + 2 + 2 * rawsz && !memcmp(data, name, n) &&
	    data[n] == ' ' && data[n + 1 + 2 * rawsz] == '\n' &&
	    ref_hex(data + n + 1, rawsz, raw);
}

static void
one(const uint8_t *data, size_t size, size_t rawsz)
{
	unsigned char want[OID_RAWSZ_MAX], target[OID_RAWSZ_MAX];
	struct commit c;
	enum obj_type type = OBJ_NONE, part = OBJ_NONE;
	bool tree_line = ref_line(data, size, "tree", rawsz, want);

	if (commit_parse(&c, data, size, rawsz) == 0) {
		FUZZ_CHECK(tree_line && !memcmp(c.tree, want, rawsz));
		FUZZ_CHECK((c.nparents == 0) == (c.parents == NULL));
		FUZZ_CHECK(!c.author ||
		    fuzz_within(c.author, c.author_len, data, size));
		FUZZ_CHECK(!c.committer ||
		    fuzz_within(c.committer, c.committer_len, data, size));
		FUZZ_CHECK(c.time >= 0);
		FUZZ_CHECK(!c.message ||
		    ((const uint8_t *)c.message + c.message_len ==
		    data + size && c.message > (const char *)data));
		commit_release(&c);
	} else {
		FUZZ_CHECK(!tree_line || size > 2 * rawsz + 6);
		FUZZ_CHECK(c.parents == NULL && c.nparents == 0);
	}

	if (tag_target(data, size, rawsz, target, &type) == 0) {
		FUZZ_CHECK(ref_line(data, size, "object", rawsz, want));
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
