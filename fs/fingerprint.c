/*
 * fingerprint: how a repository looks on disk, hashed, so that one whose
 * open failed is tried again only once something it depends on changed
 * (see fingerprint.h).
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <xxhash.h>

#include "fingerprint.h"
#include "odbstore/repo.h"

/*
 * Hash into *h how path looks to lstat(2) (zeros for none): which entry
 * it is, its owner and mode, and unless only those, its size and times.
 */
static void
print_path(uint64_t *h, const char *path, bool only_owner)
{
	struct stat st;
	struct {
		uint64_t dev, ino, size, mode, uid, gid;
		struct timespec mtim, ctim;
	} key = { 0 };

	/* Fields one by one: no padding of struct stat is hashed. */
	if (lstat(path, &st) == 0) {
		key.dev = st.st_dev;
		key.ino = st.st_ino;
		key.mode = st.st_mode;
		key.uid = st.st_uid;
		key.gid = st.st_gid;
		if (!only_owner) {
			key.size = (uint64_t)st.st_size;
			key.mtim = st.st_mtim;
			key.ctim = st.st_ctim;
		}
	}
	*h = XXH3_64bits_withSeed(&key, sizeof(key), *h);
}

/*
 * How a repository that failed to open looks, hashed: each directory
 * from the root down to it, its .git, and in its git directory the
 * entries an open reads or weighs (owner_of_repo(), odb_open()), the
 * fan-out directories there included, as lstat(2) sees them. A rescan
 * tries it again only if this changed (a chmod, a fix, a file put back):
 * else it would come back into listings at every change in the root,
 * and fail again at the next lookup.
 */
uint64_t
fingerprint_repo(const char *root, const char *rel, const char *gitdir)
{
	static const char *const rels[] = { "", "/HEAD", "/config",
	    "/commondir", "/objects", "/objects/info",
	    "/objects/info/alternates", "/objects/pack", "/refs",
	    "/refs/heads", "/refs/tags", "/reftable", "/packed-refs" };
	char path[PATH_MAX];
	uint64_t have[4], h = 0;

	/*
	 * The root and each group down, by owner and mode only: a group
	 * changes with every repository made in it, which is no reason.
	 * Then the repository and its .git, whole.
	 */
	print_path(&h, root, true);
	for (size_t at = 0; rel[at]; at++) {
		if (rel[at + 1] && rel[at + 1] != '/')
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%.*s", root,
		    (int)(at + 1), rel) < sizeof(path))
			print_path(&h, path, rel[at + 1] != '\0');
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/%s/.git", root, rel) <
	    sizeof(path))
		print_path(&h, path, false);
	for (size_t i = 0; i < sizeof(rels) / sizeof(*rels); i++)
		if ((size_t)snprintf(path, sizeof(path), "%s%s", gitdir,
		    rels[i]) < sizeof(path))
			print_path(&h, path, false);
	if ((size_t)snprintf(path, sizeof(path), "%s/objects", gitdir) >=
	    sizeof(path))
		return h;
	repo_fanouts(path, have);
	for (unsigned b = 0; b < 256; b++)
		if (repo_fanout_has(have, b) && (size_t)snprintf(path,
		    sizeof(path), "%s/objects/%02x", gitdir, b) < sizeof(path))
			print_path(&h, path, false);
	return h;
}
