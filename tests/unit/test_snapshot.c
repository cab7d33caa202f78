/*
 * test_snapshot: snapshot_find() on repositories written by real git: three
 * packs made by git pack-objects from overlapping ranges of 1200 blobs (so
 * that some ids are in two packs) plus loose objects. Every id must be
 * found where a loop over the snapshot's packs in order finds it, at the
 * offset the index gives, with the pack table and without it (the path
 * taken when the table cannot be built); random ids and ids one bit away
 * from present ones must be absent. snapshot_update() must share the
 * table while the packs stay the same and build a new one when a pack is
 * added; snapshot_build() on an unchanged pack directory shares it too.
 *
 * test_snapshot_vanished: a snapshot says when a pack went away while it
 * was built, as git's repack deletes the packs it replaced (.pack, then
 * .idx), and the scan after it does not unless another one goes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oid.h"
#include "repo.h"
#include "snapshot.h"
#include "unit.h"

/* Blobs 0..1199 in one pack, repacked as [0, 500), [400, 900), [800, 1200) */
static const char setup[] =
	"set -e; cd \"$0\"; exec >/dev/null 2>&1\n"
	"git init -q --bare repo; cd repo\n"
	"awk 'BEGIN { for (i = 0; i < 1200; i++) { d = \"object \" i \"\\n\";"
	"  printf \"blob\\ndata %d\\n%s\\n\", length(d), d } }' |"
	"  git fast-import --quiet\n"
	"git cat-file --batch-all-objects --batch-check='%(objectname)' >../all\n"
	"first=$(ls objects/pack/*.pack)\n"
	"sed -n 1,500p ../all | git pack-objects -q objects/pack/pack\n"
	"sed -n 401,900p ../all | git pack-objects -q objects/pack/pack\n"
	"sed -n 801,1200p ../all | git pack-objects -q objects/pack/pack\n"
	"rm -f \"$first\" \"${first%.pack}.idx\"\n"
	"for i in 1 2 3 4 5; do echo \"loose $i\" | git hash-object -w --stdin;"
	"  done >../loose\n";

/* Ten more loose blobs, then a fourth pack of them. */
static const char add_loose[] =
	"set -e; cd \"$0/repo\"; exec >/dev/null 2>&1\n"
	"for i in 1 2 3 4 5 6 7 8 9 10; do echo \"more $i\" |"
	"  git hash-object -w --stdin; done >../more\n";
static const char add_pack[] =
	"set -e; cd \"$0/repo\"; exec >/dev/null 2>&1\n"
	"git pack-objects -q objects/pack/pack <../more\n";

/*
 * Where the loop over s's packs in order finds raw: the pack's number and
 * the offset, -1 when no pack has it.
 */
static long
first_pack(const struct snapshot *s, const unsigned char *raw, uint64_t *off)
{
	uint32_t pos;

	for (size_t i = 0; i < s->npacks; i++)
		if (idx_find(&s->packs[i]->idx, raw, &pos)) {
			if (idx_offset(&s->packs[i]->idx, pos, off, "") < 0)
				*off = PACK_OFF_BAD;
			return (long)i;
		}
	return -1;
}

/* Does snapshot_find() answer for raw as the loop does, or as loose? */
static bool
agrees(const struct snapshot *s, const unsigned char *raw)
{
	struct objloc loc;
	uint64_t off = 0;
	long want = first_pack(s, raw, &off);
	size_t lpos;
	bool loose = want < 0 && looseset_find(&s->loose, raw, &lpos);
	bool found = snapshot_find(s, raw, &loc);

	if (snapshot_find(s, raw, NULL) != found)
		return false;
	if (want >= 0)
		return found && loc.pack == s->packs[want] && loc.off == off &&
		    loc.dir == s->packs[want]->dir && !loc.id;
	if (loose)
		return found && !loc.pack && loc.id &&
		    !memcmp(loc.id, raw, s->rawsz);
	return !found;
}

/*
 * Every id of every pack and of the loose set, random ids, and ids one bit
 * from present ones; nhave distinct ids must be found.
 */
static void
check_all(const struct snapshot *s, const char *what, size_t nhave)
{
	unsigned char id[OID_RAWSZ_MAX];
	uint64_t seed = 0x2545f4914f6cdd1dull, off;
	size_t bad = 0, found = 0, dups = 0, absent = 0, lpos;

	for (size_t i = 0; i < s->npacks; i++) {
		const struct idx *idx = &s->packs[i]->idx;

		for (uint32_t k = 0; k < idx->nr; k++) {
			const unsigned char *raw = idx_oid(idx, k);

			if (!agrees(s, raw))
				bad++;
			/* counted once, in the first pack holding it */
			if (first_pack(s, raw, &off) == (long)i)
				found++;
			else
				dups++;
		}
	}
	for (size_t k = 0; k < s->loose.nr; k++) {
		const unsigned char *raw = s->loose.ids + k * s->rawsz;

		if (!agrees(s, raw))
			bad++;
		if (first_pack(s, raw, &off) < 0)
			found++;
	}
	check(bad == 0 && found == nhave, "%s: %zu ids (%zu in two packs) "
	    "found as the loop over packs finds them", what, found, dups);
	check(dups > 0 || s->npacks < 2, "%s: the packs share ids", what);

	bad = 0;
	for (size_t k = 0; k < 20000; k++) {
		for (size_t i = 0; i < s->rawsz; i += 8) {
			uint64_t r = unit_rand(&seed);

			memcpy(id + i, &r, 8);
		}
		if (snapshot_find(s, id, NULL))
			bad++;
	}
	for (size_t i = 0; i < s->npacks; i++) {
		const struct idx *idx = &s->packs[i]->idx;

		for (uint32_t k = 0; k < idx->nr; k++)
			for (size_t at = 8; at < s->rawsz; at += 11) {
				memcpy(id, idx_oid(idx, k), s->rawsz);
				id[at] ^= 0x10;
				if (first_pack(s, id, &off) < 0 &&
				    !looseset_find(&s->loose, id, &lpos)) {
					absent++;
					bad += !agrees(s, id);
				}
			}
	}
	check(bad == 0 && absent > 0, "%s: random ids and %zu ids one bit "
	    "from present ones absent", what, absent);
}

/* Check s with its table, then as if it had none. */
static void
check_both(struct snapshot *s, const char *what, size_t nhave)
{
	struct packtable *t = s->table;
	char label[128];

	check(t != NULL, "%s: has a pack table", what);
	check_all(s, what, nhave);
	s->table = NULL;
	snprintf(label, sizeof(label), "%s, no table", what);
	check_all(s, label, nhave);
	s->table = t;
}

/* The ids git printed, one hex id a line, as touched loose ids. */
static size_t
read_touched(const char *path, struct loose_touch *touched, size_t max)
{
	char line[128];
	size_t n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (oid_parse_hex(touched[n].id, line, 20))
			touched[n++].dir = 0;
	}
	fclose(f);
	return n;
}

void
test_snapshot(void)
{
	char dir[] = "/tmp/odbfs-unit.XXXXXX", path[256];
	struct snapshot *s = NULL, *s2 = NULL, *s3 = NULL, *s4 = NULL;
	struct snapshot *s5 = NULL, *s6 = NULL;
	struct snapshot_change change = { 0 };
	struct loose_touch touched[16];
	struct repo *repo = NULL;
	const char *why;
	size_t n;

	if (!mkdtemp(dir) || !check_int(unit_sh(setup, dir), 0,
	    "git made a repository of three packs"))
		return;
	snprintf(path, sizeof(path), "%s/repo", dir);
	if (!check_int(repo_open(path, &repo, &why), 0, "repository opens") ||
	    !check_int(snapshot_build(repo, NULL, &s), 0, "snapshot built"))
		goto out;
	check_int((long long)s->npacks, 3, "three packs");
	check_both(s, "three packs", 1205);

	/* Loose objects come and the packs stay: the table is shared. */
	snprintf(path, sizeof(path), "%s/more", dir);
	if (!check_int(unit_sh(add_loose, dir), 0, "git wrote ten loose objects"))
		goto out;
	n = read_touched(path, touched, 16);
	change.touched = touched;
	change.ntouched = n;
	if (!check_int(snapshot_update(repo, s, &change, &s2), 0,
	    "updated for %zu loose objects", n))
		goto out;
	check(s2->table == s->table, "loose objects only: table shared");
	check_both(s2, "ten more loose", 1215);
	/* A pack directory event that changed no pack shares it too. */
	change.packs = true;
	change.ntouched = 0;
	if (!check_int(snapshot_update(repo, s2, &change, &s3), 0,
	    "updated for a pack event"))
		goto out;
	check(s3->table == s2->table, "same packs rescanned: table shared");

	/* A new pack: a new table, and the old snapshots can go. */
	if (!check_int(unit_sh(add_pack, dir), 0, "git packed them"))
		goto out;
	if (!check_int(snapshot_update(repo, s3, &change, &s4), 0,
	    "updated for a new pack"))
		goto out;
	check(s4->npacks == 4 && s4->table && s4->table != s3->table,
	    "a fourth pack: a new table");
	snapshot_free(s);
	snapshot_free(s2);
	snapshot_free(s3);
	s = s2 = s3 = NULL;
	check_both(s4, "four packs", 1215);

	/* A full rebuild finding the same packs shares the table. */
	if (check_int(snapshot_build(repo, s4, &s5), 0, "rebuilt"))
		check(s5->table == s4->table, "full rebuild: table shared");
	/* A snapshot without a table passes that on with its packs. */
	if (s5) {
		packtable_unref(s5->table);
		s5->table = NULL;
		change.packs = false;
		if (check_int(snapshot_update(repo, s5, &change, &s6), 0,
		    "updated a snapshot without a table")) {
			check(!s6->table, "still no table");
			check_all(s6, "inherited no table", 1215);
		}
	}
out:
	snapshot_free(s);
	snapshot_free(s2);
	snapshot_free(s3);
	snapshot_free(s4);
	snapshot_free(s5);
	snapshot_free(s6);
	repo_free(repo);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path) != 0)
		diag("could not remove %s", dir);
}

/* Unlink p's .pack, its .idx, or both. */
enum cut { CUT_PACK = 1, CUT_IDX = 2, CUT_BOTH = 3 };

static void
cut_pack(const char *packpath, enum cut what)
{
	char idx[4096];

	snprintf(idx, sizeof(idx), "%.*s.idx", (int)strlen(packpath) - 5,
	    packpath);
	if (what & CUT_PACK)
		unlink(packpath);
	if (what & CUT_IDX)
		unlink(idx);
}

void
test_snapshot_vanished(void)
{
	/*
	 * Each step: which pack of the first snapshot loses which files,
	 * then whether the next pack scan finds a pack gone and how many
	 * packs it opens. Step 0 cuts nothing.
	 */
	static const struct step {
		int pack;		/* -1: none */
		enum cut what;
		bool loose_only;	/* an update that keeps the packs */
		bool vanished;
		size_t npacks;
		const char *what_for;
	} steps[] = {
		{ -1, 0, false, false, 3, "nothing changed" },
		{ 0, CUT_PACK, false, true, 2, ".pack deleted, .idx left" },
		{ -1, 0, false, false, 2, "the same .idx still alone" },
		{ 0, CUT_IDX, false, false, 2, "then its .idx deleted" },
		{ 1, CUT_BOTH, false, true, 1, "a whole pack deleted" },
		{ -1, 0, true, true, 1, "loose only: passed on" },
		{ -1, 0, false, false, 1, "scanned again: clean" },
	};
	char dir[] = "/tmp/odbfs-unit.XXXXXX", path[256], *packs[3] = { 0 };
	struct snapshot *s = NULL, *next;
	struct repo *repo = NULL;
	const char *why;

	if (!mkdtemp(dir) || !check_int(unit_sh(setup, dir), 0,
	    "git made a repository of three packs"))
		return;
	snprintf(path, sizeof(path), "%s/repo", dir);
	if (!check_int(repo_open(path, &repo, &why), 0, "repository opens") ||
	    !check_int(snapshot_build(repo, NULL, &s), 0, "snapshot built") ||
	    !check_int((long long)s->npacks, 3, "three packs"))
		goto out;
	check(!s->vanished, "a first scan of a still directory: nothing gone");
	for (size_t i = 0; i < 3; i++)
		packs[i] = strdup(s->packs[i]->path);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		const struct step *t = &steps[i];
		struct snapshot_change change = { .packs = !t->loose_only };

		if (t->pack >= 0 && packs[t->pack])
			cut_pack(packs[t->pack], t->what);
		if (!check_int(snapshot_update(repo, s, &change, &next), 0,
		    "vanished: updated: %s", t->what_for))
			break;
		snapshot_free(s);
		s = next;
		check(s->vanished == t->vanished, "vanished: %s: %s",
		    t->what_for, t->vanished ? "a pack went" : "none went");
		check_int((long long)s->npacks, (long long)t->npacks,
		    "vanished: %s: packs", t->what_for);
	}
out:
	for (size_t i = 0; i < 3; i++)
		free(packs[i]);
	snapshot_free(s);
	repo_free(repo);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path) != 0)
		diag("could not remove %s", dir);
}
