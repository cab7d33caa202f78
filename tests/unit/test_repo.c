/*
 * test_repo: repo.c's repo_walk(), which resolves the paths a .git or
 * commondir file holds one entry at a time so that fs/owner.c sees every
 * link and directory on the way. Each case is checked against realpath(3)
 * on the same tree: the same real path, or the same errno. Then what the
 * callback is shown, and that its refusal stops the walk.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "repo.h"
#include "unit.h"

static const char setup[] =
    "set -e; cd \"$0\"; mkdir -p a/b/c; : >a/file;"
    "ln -s a/b rel; ln -s \"$0/a\" abs; ln -s ../.. a/b/c/up;"
    "ln -s loop2 loop1; ln -s loop1 loop2; ln -s nowhere dangling;"
    "ln -s a/file flink; ln -s abs/b/c/up/b chain";

/* Paths from the test's directory; each resolves as realpath() says. */
static const char *const paths[] = {
	"a/b/c", "a/./b//c/", "rel/c", "abs/b", "a/b/c/up/b", "a/b/../b/c",
	"rel/..", "a/b/c/up/..", "chain", "chain/c/up", "a/file", "flink",
	".", "..", "a/file/", "a/file/x", "flink/", "dangling", "dangling/x",
	"loop1", "nope", "nope/..", "a/b/c/../../../a",
};

struct seen {
	unsigned entries, links;
	const char *stop_at;	/* refuse this entry */
};

static int
count(void *ctx, const char *path, const struct stat *st)
{
	struct seen *s = ctx;
	size_t n = strlen(path), m = s->stop_at ? strlen(s->stop_at) : 0;

	s->entries++;
	s->links += S_ISLNK(st->st_mode);
	if (m && n >= m && !strcmp(path + n - m, s->stop_at))
		return -EPERM;
	return 0;
}

static void
against_realpath(const char *dir)
{
	char full[PATH_MAX], *want, *got;
	int ret, err;

	for (size_t i = 0; i < sizeof(paths) / sizeof(*paths); i++) {
		snprintf(full, sizeof(full), "%s/%s", dir, paths[i]);
		errno = 0;
		want = realpath(full, NULL);
		err = errno;
		ret = repo_walk(dir, paths[i], NULL, NULL, &got);
		if (want)
			check(ret == 0 && got && !strcmp(got, want),
			    "walk %s: %s as realpath says", paths[i], want);
		else
			check_int(ret, -err, "walk %s: fails as realpath does",
			    paths[i]);
		/* The same path given absolute. */
		free(got);
		ret = repo_walk("/nonexistent", full, NULL, NULL, &got);
		check(want ? ret == 0 && !strcmp(got, want) : ret == -err,
		    "walk %s absolute: the same", paths[i]);
		free(got);
		free(want);
	}
}

static void
shown(const char *dir)
{
	struct seen s = { 0 };
	char *got;

	/* rel, a, a/b, then c. */
	check_int(repo_walk(dir, "rel/c", count, &s, &got), 0,
	    "rel/c walks");
	check_int(s.entries, 4, "rel/c: four entries shown");
	check_int(s.links, 1, "rel/c: one of them a link");
	free(got);
	s = (struct seen){ .stop_at = "/a/b" };
	check_int(repo_walk(dir, "chain/c", count, &s, &got), -EPERM,
	    "chain/c: refused at a/b, the walk fails as told");
	check(got == NULL, "chain/c: no path when refused");
	s = (struct seen){ .stop_at = "/abs" };
	check_int(repo_walk(dir, "abs/b", count, &s, &got), -EPERM,
	    "abs/b: a link refused is not followed");
	check_int(s.entries, 1, "abs/b: the link alone was shown");
}

void
test_repo(void)
{
	char dir[] = "/tmp/odbfs-unit.XXXXXX", cmd[256];

	if (!mkdtemp(dir) || !check_int(unit_sh(setup, dir), 0,
	    "a tree of directories and links"))
		return;
	against_realpath(dir);
	shown(dir);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		diag("could not remove %s", dir);
}
