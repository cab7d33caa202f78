/*
 * test_rev: store/rev.c's ancestry suffixes against git rev-parse on a
 * history git made: first parents, merges of two and three parents, a
 * root, an annotated tag; and the suffixes git refuses or that lead past
 * a root or a last parent; then the same with a commit-graph.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "odb.h"
#include "odbstore/oid.h"
#include "unit.h"

/*
 * main: c1 c2 c3 m2 c4 m3 c5 c6, where m2 merges c3 and s2 (s1 s2 branch
 * from c2) and m3 is an octopus of c4, s2 and o1 (from c2); the
 * annotated tag v points at m3.
 */
static const char setup[] =
    "set -e; cd \"$0\"; export HOME=\"$0\" GIT_CONFIG_NOSYSTEM=1 "
    "GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@b GIT_COMMITTER_NAME=a "
    "GIT_COMMITTER_EMAIL=a@b;"
    "git init -q -b main repo; cd repo; echo x >f; git add f;"
    "t=$(git write-tree); c() { m=$1; shift; echo $m | git commit-tree $t \"$@\"; };"
    "c1=$(c c1); c2=$(c c2 -p $c1); c3=$(c c3 -p $c2); s1=$(c s1 -p $c2);"
    "s2=$(c s2 -p $s1); o1=$(c o1 -p $c2); m2=$(c m2 -p $c3 -p $s2);"
    "c4=$(c c4 -p $m2); m3=$(c m3 -p $c4 -p $s2 -p $o1);"
    "c5=$(c c5 -p $m3); c6=$(c c6 -p $c5);"
    "git update-ref refs/heads/main $c6; git tag -a -m t v $m3;"
    /* One line per case: the suffix after HEAD, then git's answer. */
    "for s in '~0' '^0' '~' '^' '~1' '^1' '~2' '~~' '^^' '~3' '~4^2' "
    "'~2^2' '~2^3' '~2^2~1' '~2^3^' '~4^2~2' '~4^1~1^0~0' '~7' '~7^0'; do"
    " echo \"$s $(git rev-parse \"HEAD$s\")\"; done >../cases;"
    "for s in '~2^4' '~3^2' '~8' '^2'; do"
    " git rev-parse -q --verify \"HEAD$s\" >/dev/null && exit 1;"
    " echo \"$s\"; done >../none;"
    "git rev-parse HEAD >../head; git rev-parse v >../tag;"
    "git rev-parse 'v~2^2' >../tagged";

static bool
hex_id(const char *hex, unsigned char *id)
{
	char buf[OID_HEXSZ_MAX + 1];

	snprintf(buf, sizeof(buf), "%.*s", (int)strcspn(hex, " \n"), hex);
	return oid_parse_hex(id, buf, 20);
}

static bool
file_id(const char *dir, const char *name, unsigned char *id)
{
	char path[512], line[128] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "r"))) {
		if (!fgets(line, sizeof(line), f))
			line[0] = 0;
		fclose(f);
	}
	return hex_id(line, id);
}

static void
against_git(struct odb *odb, const char *dir)
{
	unsigned char head[OID_RAWSZ_MAX], want[OID_RAWSZ_MAX],
	    got[OID_RAWSZ_MAX];
	char path[512], line[256];
	unsigned n = 0;
	FILE *f;

	if (!check(file_id(dir, "head", head), "git gave HEAD"))
		return;
	snprintf(path, sizeof(path), "%s/cases", dir);
	if (!(f = fopen(path, "r")))
		return;
	while (fgets(line, sizeof(line), f)) {
		char *sp = strchr(line, ' ');

		if (!sp || !hex_id(sp + 1, want))
			continue;
		*sp = '\0';
		n++;
		memset(got, 0, sizeof(got));
		check(odb_rev_suffix(odb, head, line, got) == 0 &&
		    !memcmp(got, want, 20), "HEAD%s is what git rev-parse says",
		    line);
	}
	fclose(f);
	check_int(n, 19, "git answered every case");
	snprintf(path, sizeof(path), "%s/none", dir);
	n = 0;
	if ((f = fopen(path, "r"))) {
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = '\0';
			n++;
			check_int(odb_rev_suffix(odb, head, line, got), -ENOENT,
			    "HEAD%s: no such commit, as git says", line);
		}
		fclose(f);
	}
	check_int(n, 4, "git refused every one of those");
	if (file_id(dir, "tag", head) && file_id(dir, "tagged", want))
		check(odb_rev_suffix(odb, head, "~2^2", got) == 0 &&
		    !memcmp(got, want, 20), "a tag is peeled first: v~2^2");
}

static void
refused(struct odb *odb, const char *dir)
{
	static const char *const bad[] = { "", "~x", "^{tree}", "~-1", "@",
	    "~1 ", "^2:f", "~1~" "a" };
	unsigned char head[OID_RAWSZ_MAX], got[OID_RAWSZ_MAX];

	if (!file_id(dir, "head", head))
		return;
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		check(!rev_suffix_ok(bad[i]), "'%s' is no suffix", bad[i]);
		check_int(odb_rev_suffix(odb, head, bad[i], got), -EINVAL,
		    "'%s': EINVAL", bad[i]);
	}
	check_int(odb_rev_suffix(odb, head, "~100001", got), -E2BIG,
	    "~100001 is past the bound, not walked");
	check_int(odb_rev_suffix(odb, head, "~99999999999999999999999", got),
	    -E2BIG, "a count past any integer is past the bound");
	check_int(odb_rev_suffix(odb, head, "^99999999999999999999999", got),
	    -ENOENT, "no commit has that many parents");
	check_int(odb_rev_suffix(odb, head, "~50000~50001", got), -E2BIG,
	    "steps add up across the suffix");
}

void
test_rev(void)
{
	char dir[] = "/tmp/odbfs-unit.XXXXXX", path[256];
	struct odb *odb = NULL;
	const char *why;

	if (!mkdtemp(dir) || !check_int(unit_sh(setup, dir), 0,
	    "git made a history with merges and asked rev-parse"))
		return;
	snprintf(path, sizeof(path), "%s/repo", dir);
	if (check_int(odb_open(path, &odb, &why), 0, "the repository opens")) {
		against_git(odb, dir);
		refused(odb, dir);
		odb_close(odb);
	}
	/* Again with a commit-graph, from which the steps take parents. */
	if (check_int(unit_sh("cd \"$0\"/repo && git commit-graph write "
	    "--reachable", dir), 0, "git wrote a commit-graph") &&
	    check_int(odb_open(path, &odb, &why), 0, "it opens again")) {
		unsigned char head[OID_RAWSZ_MAX], parents[2 * OID_RAWSZ_MAX];
		size_t n = 0;
		int64_t time;

		check(file_id(dir, "head", head) && odb_graph_commit(odb, head,
		    parents, 2, &n, &time) == 0 && n == 1,
		    "the graph names HEAD and its one parent");
		against_git(odb, dir);
		odb_close(odb);
	}
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path) != 0)
		diag("could not remove %s", dir);
}
