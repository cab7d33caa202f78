/*
 * test_unpack: unpack_info() on delta chains written by real git: 60
 * versions of a file, repacked with --depth=50, so chains run about 50
 * deep, plus the trees and commits. Every object's type and size must be
 * what git cat-file --batch-check says, on a first pass (no delta's type
 * remembered yet) and a second (remembered). The pack's table of types
 * (pack_delta_type) must never give one offset's type or depth for
 * another's, and must ignore what it cannot hold. (That a remembered depth
 * still bounds a chain is tests/hostile.bats' "chain of 10000 deltas".)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "object.h"
#include "oid.h"
#include "repo.h"
#include "snapshot.h"
#include "unit.h"
#include "unpack.h"

static const char setup[] =
	"set -e; cd \"$0\"; exec >/dev/null 2>&1\n"
	"git init -q repo; cd repo\n"
	"for i in $(seq 1 60); do\n"
	"  seq 1 400 | sed \"$((i * 7))s/\\$/ changed in $i/\" >>f\n"
	"  git add f\n"
	"  git -c user.name=a -c user.email=a@example.com commit -qm $i\n"
	"done\n"
	"git repack -adfq --depth=50 --window=60\n"
	"git cat-file --batch-all-objects"
	"  --batch-check='%(objectname) %(objecttype) %(objectsize)' >../want\n";

struct want {
	unsigned char id[OID_RAWSZ_MAX];
	enum obj_type type;
	uint64_t size;
};

static size_t
read_want(const char *path, struct want *w, size_t max)
{
	char hex[OID_HEXSZ_MAX + 1], type[16];
	unsigned long long size;
	FILE *f = fopen(path, "r");
	size_t n = 0;

	while (f && n < max &&
	    fscanf(f, "%64s %15s %llu", hex, type, &size) == 3) {
		if (!oid_parse_hex(w[n].id, hex, 20))
			continue;
		w[n].type = object_type_parse(type, strlen(type));
		w[n++].size = size;
	}
	if (f)
		fclose(f);
	return n;
}

/* How many of the n objects unpack_info() gets wrong. */
static size_t
pass(const struct snapshot *s, const struct want *w, size_t n)
{
	size_t bad = 0;

	for (size_t i = 0; i < n; i++) {
		struct objinfo info;
		struct objloc loc;

		if (!snapshot_find(s, w[i].id, &loc) ||
		    unpack_info(s, &loc, &info) < 0 ||
		    info.type != w[i].type || info.size != w[i].size)
			bad++;
	}
	return bad;
}

/*
 * How many of the n objects are deltas whose type the pack remembers;
 * how many are deltas in *deltas.
 */
static size_t
remembered(const struct snapshot *s, const struct want *w, size_t n,
    size_t *deltas)
{
	unsigned depth;
	size_t k = 0;

	*deltas = 0;
	for (size_t i = 0; i < n; i++) {
		struct pack_entry e;
		struct objloc loc;

		if (!snapshot_find(s, w[i].id, &loc) || !loc.pack ||
		    pack_entry(loc.pack, loc.off, &e) < 0)
			continue;
		if (e.type == OBJ_OFS_DELTA || e.type == OBJ_REF_DELTA)
			(*deltas)++;
		if (pack_delta_type(loc.pack, loc.off, &depth) != OBJ_NONE)
			k++;
	}
	return k;
}

/* The table's own promises, on offsets no entry of the pack has. */
static void
check_table(struct pack *p)
{
	const uint64_t base = (uint64_t)1 << 40, n = 100000;
	size_t wrong = 0, kept = 0;
	unsigned depth = 0;

	pack_delta_type_set(p, (uint64_t)1 << 46, OBJ_BLOB, 1);
	check_int(pack_delta_type(p, (uint64_t)1 << 46, &depth), OBJ_NONE,
	    "an offset of 2^46 is not remembered");
	pack_delta_type_set(p, base - 1, OBJ_OFS_DELTA, 1);
	check_int(pack_delta_type(p, base - 1, &depth), OBJ_NONE,
	    "a delta type is not a type to remember");
	pack_delta_type_set(p, base - 2, OBJ_BLOB, 0);
	pack_delta_type_set(p, base - 3, OBJ_BLOB, 1 << 14);
	check(pack_delta_type(p, base - 2, &depth) == OBJ_NONE &&
	    pack_delta_type(p, base - 3, &depth) == OBJ_NONE,
	    "depths 0 and 2^14 are not remembered");
	pack_delta_type_set(p, base - 4, OBJ_TAG, OBJ_MAX_DELTA_DEPTH);
	check(pack_delta_type(p, base - 4, &depth) == OBJ_TAG &&
	    depth == OBJ_MAX_DELTA_DEPTH, "the deepest chain allowed is");
	/* More offsets than words: most collide, none is mistaken. */
	for (uint64_t k = 0; k < n; k++)
		pack_delta_type_set(p, base + k, k % 2 ? OBJ_TREE : OBJ_BLOB,
		    (unsigned)(k % 5000) + 1);
	for (uint64_t k = 0; k < n; k++) {
		enum obj_type t = pack_delta_type(p, base + k, &depth);

		if (t != OBJ_NONE && (t != (k % 2 ? OBJ_TREE : OBJ_BLOB) ||
		    depth != k % 5000 + 1))
			wrong++;
		kept += t != OBJ_NONE;
		if (pack_delta_type(p, base + n + k, &depth) != OBJ_NONE)
			wrong++;
	}
	check_int((long long)wrong, 0, "no offset takes another's type or "
	    "depth (%zu of %llu kept)", kept, (unsigned long long)n);
	check(kept > 0, "the table keeps some");
}

void
test_unpack(void)
{
	char dir[] = "/tmp/odbfs-unit.XXXXXX", path[256];
	static struct want w[512];
	struct snapshot *s = NULL;
	struct repo *repo = NULL;
	const char *why;
	size_t n, before, after, deltas;

	if (!mkdtemp(dir) || !check_int(unit_sh(setup, dir), 0,
	    "git made 60 versions of a file, in one pack"))
		return;
	snprintf(path, sizeof(path), "%s/want", dir);
	n = read_want(path, w, sizeof(w) / sizeof(w[0]));
	snprintf(path, sizeof(path), "%s/repo", dir);
	if (!check_int((long long)n, 180, "180 objects") ||
	    !check_int(repo_open(path, &repo, &why), 0, "repository opens") ||
	    !check_int(snapshot_build(repo, NULL, &s), 0, "snapshot built") ||
	    !check_int((long long)s->npacks, 1, "one pack"))
		goto out;
	before = remembered(s, w, n, &deltas);
	check_int((long long)pass(s, w, n), 0, "first pass: as git says");
	check_int((long long)before, 0, "no type remembered before");
	after = remembered(s, w, n, &deltas);
	/* Some share a word of the 512 and push each other out. */
	check(deltas >= 50 && after >= deltas * 3 / 4, "%zu of the %zu "
	    "deltas remembered after one pass", after, deltas);
	check_int((long long)pass(s, w, n), 0, "second pass: as git says");
	check_table(s->packs[0]);
	check_int((long long)pass(s, w, n), 0, "third pass: as git says");
out:
	snapshot_free(s);
	repo_free(repo);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path) != 0)
		diag("could not remove %s", dir);
}
