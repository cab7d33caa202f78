/*
 * test_odbcache: two repositories whose delta bases share one cache
 * (odb_open_shared(), as a mount of many opens each), their packs laid
 * out alike, so that the same pack offsets hold bases of both: every
 * object of each reads as git cat-file prints it, in turns, twice over,
 * the cache serving bases; and an odb closed leaves the other's bases
 * right.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "odbstore/odb.h"
#include "oid.h"
#include "unit.h"

/*
 * a and b: 40 versions of one 6 KiB file of "a line" or "b line" lines
 * and a last line of its own, packed with deltas, stored rather than
 * compressed (pack.compression=0) so that equal sizes lay the two packs
 * out alike (with one thread: threads split git's search for deltas by
 * timing, and laid the packs out differently now and then). For each,
 * ids (every object) and want/<id> (git cat-file's bytes); common: how
 * many pack offsets of deltas the packs share.
 */
static const char setup[] =
	"set -e; cd \"$0\"; exec >/dev/null 2>&1\n"
	"export GIT_AUTHOR_DATE='1700000000 +0000' "
	"GIT_COMMITTER_DATE='1700000000 +0000'\n"
	"for r in a b; do\n"
	"  git init -q $r; i=0\n"
	"  while [ $i -lt 40 ]; do\n"
	"    { seq 1 600 | sed \"s/^/$r line /\"; echo \"version $i\"; } >$r/f\n"
	"    git -C $r add f; git -C $r -c user.name=u -c user.email=u@e"
	"      commit -q -m v$i; i=$((i + 1))\n"
	"  done\n"
	"  git -C $r -c pack.compression=0 -c pack.threads=1 repack -adfq \\\n"
	"    --depth=50\n"
	"  git -C $r rev-list --objects --all | cut -c1-40 >$r/ids\n"
	"  mkdir $r/want\n"
	"  while read -r id; do\n"
	"    git -C $r cat-file $(git -C $r cat-file -t $id) $id >$r/want/$id\n"
	"  done <$r/ids\n"
	"  git verify-pack -v $r/.git/objects/pack/*.idx |"
	"    awk 'NF >= 7 { print $5 }' | sort >$r/deltas\n"
	"done\n"
	"comm -12 a/deltas b/deltas | wc -l >common\n";

struct side {
	const char *name;
	struct odb *odb;
	char (*ids)[OID_HEXSZ_MAX + 1];
	size_t n;
};

static bool
load_ids(const char *dir, struct side *s)
{
	char path[512], line[OID_HEXSZ_MAX + 2];
	size_t alloc = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/ids", dir, s->name);
	if (!(f = fopen(path, "r")))
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (s->n == alloc) {
			alloc = alloc ? 2 * alloc : 128;
			s->ids = realloc(s->ids, alloc * sizeof(*s->ids));
			if (!s->ids)
				break;
		}
		line[strcspn(line, "\n")] = 0;
		if (strlen(line) >= sizeof(*s->ids))
			break;
		strcpy(s->ids[s->n++], line);
	}
	fclose(f);
	return s->ids && s->n > 0;
}

/* Object i of s reads as git printed it. */
static bool
same_as_git(const char *dir, struct side *s, size_t i)
{
	unsigned char raw[OID_RAWSZ_MAX], *buf = NULL, *want = NULL;
	char path[512];
	struct objinfo info;
	size_t wlen = 0;
	bool same;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/want/%s", dir, s->name, s->ids[i]);
	if ((f = fopen(path, "r"))) {
		want = malloc(1 << 20);
		wlen = want ? fread(want, 1, 1 << 20, f) : 0;
		fclose(f);
	}
	same = want && oid_parse_hex(raw, s->ids[i], 20) &&
	    odb_read(s->odb, raw, &info, &buf) == 0 && info.size == wlen &&
	    memcmp(buf, want, wlen) == 0;
	free(buf);
	free(want);
	return same;
}

void
test_odbcache(void)
{
	char dir[] = "/tmp/odbfs-unit-odbcache-XXXXXX", path[512];
	struct side sides[2] = { { .name = "a" }, { .name = "b" } };
	struct odb_cache *shared;
	struct odb_stats st;
	size_t bad = 0, common = 0, reads = 0;
	const char *why;
	FILE *f;

	if (!check(mkdtemp(dir) != NULL, "odbcache: a scratch directory") ||
	    !check_int(unit_sh(setup, dir), 0, "odbcache: git made two "
	    "repositories of 40 versions, packed with deltas"))
		return;
	snprintf(path, sizeof(path), "%s/common", dir);
	if ((f = fopen(path, "r"))) {
		if (fscanf(f, "%zu", &common) != 1)
			common = 0;
		fclose(f);
	}
	check(common > 0, "odbcache: the packs share %zu offsets of deltas",
	    common);
	shared = odb_cache_new(ODB_CACHE_BYTES);
	check(shared != NULL, "odbcache: a shared cache");
	for (int k = 0; k < 2; k++) {
		snprintf(path, sizeof(path), "%s/%s", dir, sides[k].name);
		check(load_ids(dir, &sides[k]), "odbcache: %s's ids",
		    sides[k].name);
		check_int(odb_open_shared(path, shared, &sides[k].odb, &why),
		    0, "odbcache: %s opens on the shared cache", sides[k].name);
	}
	if (!sides[0].odb || !sides[1].odb || !shared)
		goto out;
	/* In turns, so that each one's bases are in the cache for the other. */
	for (int round = 0; round < 2; round++)
		for (size_t i = 0; i < sides[0].n || i < sides[1].n; i++)
			for (int k = 0; k < 2; k++)
				if (i < sides[k].n) {
					reads++;
					bad += !same_as_git(dir, &sides[k], i);
				}
	check_int((long long)bad, 0, "odbcache: %zu reads of a and b in "
	    "turns, as git cat-file", reads);
	odb_stats(sides[0].odb, &st);
	check(st.cache_hits > 0, "odbcache: the cache served %llu bases",
	    (unsigned long long)st.cache_hits);
	/* a goes; what it left in the cache is never b's. */
	odb_close(sides[0].odb);
	sides[0].odb = NULL;
	bad = 0;
	for (size_t i = 0; i < sides[1].n; i++)
		bad += !same_as_git(dir, &sides[1], i);
	check_int((long long)bad, 0, "odbcache: b after a closed, as git");
out:
	for (int k = 0; k < 2; k++) {
		odb_close(sides[k].odb);
		free(sides[k].ids);
	}
	odb_cache_free(shared);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path) != 0)
		diag("cannot remove %s", dir);
}
