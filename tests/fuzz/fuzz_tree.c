/*
 * fuzz_tree: tree objects (tree_parse() and tree_name_ok() in
 * store/tree.c). The input is a tree object's payload, as `git cat-file
 * tree` prints it, parsed with sha1 and with sha256 ids:
 *
 *   tree  := entry*
 *   entry := octal-mode SP name NUL id[rawsz]
 *
 * Every entry kept must point into the input, be NUL-terminated there,
 * carry a mode git writes (or 0), and have a name tree_name_ok() accepts;
 * a truncated tree says where. Each NUL-separated piece of the input is
 * also checked as a name against the rule tree.h states.
 */
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "tree.h"

static bool
ref_name_ok(const char *name, size_t len)
{
	if (len == 0 || len > 255 || (len == 1 && !memcmp(name, ".", 1)) ||
	    (len == 2 && !memcmp(name, "..", 2)))
		return false;
	for (size_t i = 0; i < len; i++)
		if (name[i] == '/')
			return false;
	return true;
}

static void
one(const uint8_t *data, size_t size, size_t rawsz)
{
	const unsigned char *prev = data;
	struct tree t;

	if (tree_parse(&t, data, size, rawsz) < 0) {
		FUZZ_CHECK(t.entries == NULL && t.n == 0);
		return;
	}
	FUZZ_CHECK(t.n == 0 || t.entries != NULL);
	FUZZ_CHECK(!t.truncated || t.bad_off < size);
	for (size_t i = 0; i < t.n; i++) {
		const struct tree_entry *e = &t.entries[i];

		FUZZ_CHECK(fuzz_within(e->name, e->namelen + 1, data, size));
		FUZZ_CHECK((const unsigned char *)e->name > prev);
		FUZZ_CHECK(e->name[e->namelen] == '\0');
		FUZZ_CHECK(!memchr(e->name, '\0', e->namelen));
		FUZZ_CHECK(tree_name_ok(e->name, e->namelen));
		FUZZ_CHECK(e->id == (const unsigned char *)e->name +
		    e->namelen + 1);
		FUZZ_CHECK(fuzz_within(e->id, rawsz, data, size));
		FUZZ_CHECK(!t.truncated || e->id + rawsz <= data + t.bad_off);
		FUZZ_CHECK(e->mode == 0 || e->mode == TREE_MODE_FILE ||
		    e->mode == TREE_MODE_EXEC || e->mode == TREE_MODE_LINK ||
		    e->mode == TREE_MODE_DIR || e->mode == TREE_MODE_GITLINK);
		prev = e->id;
	}
	tree_release(&t);
	FUZZ_CHECK(t.entries == NULL && t.n == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;

	fuzz_quiet();
	one(data, size, 20);
	one(data, size, 32);
	while (p <= end) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		size_t len = nul ? (size_t)(nul - p) : (size_t)(end - p);

		FUZZ_CHECK(tree_name_ok(p, len) == ref_name_ok(p, len));
		if (!nul)
			break;
		p = nul + 1;
	}
	return 0;
}
