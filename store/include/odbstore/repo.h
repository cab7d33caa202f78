/*
 * repo: resolving the path to a repository as the store will, for a
 * caller that decides whose it is before the store reads anything there
 * (fs/owner.c). Opening it is odb_open()'s (odbstore/odb.h).
 */
#ifndef ODBSTORE_REPO_H
#define ODBSTORE_REPO_H

#include <stddef.h>
#include <stdint.h>

struct stat;

/*
 * Shown each entry a path resolves through, for a caller that decides
 * whose the path is before anything it names is read (fs/owner.c): path
 * is the entry as the kernel meets it, st what lstat(2) says of it. A
 * non-zero return stops the resolution, which then fails with it.
 */
typedef int repo_entry_fn(void *ctx, const char *path, const struct stat *st);

/*
 * Resolve path as realpath(3) would: relative to dir (a real path, itself
 * not shown to fn) unless it is absolute. fn, when not NULL, is called on
 * every directory and symbolic link met on the way, the last entry
 * included. *real is malloc'd. Fails with -errno of the entry that fails
 * (-ENOENT, -EACCES, -ENOTDIR, -ELOOP...) or with what fn returned.
 */
int repo_walk(const char *dir, const char *path, repo_entry_fn *fn,
    void *ctx, char **real);

/*
 * The git directory and the common directory of the repository at path,
 * found as repo_open() finds them (both malloc'd, real paths), reading
 * nothing else. fn (may be NULL) is shown each entry that path/.git, a
 * .git file's gitdir: line, and a commondir file and what it names go
 * through, before anything there is read.
 */
int repo_locate(const char *path, repo_entry_fn *fn, void *ctx,
    char **gitdir, char **commondir, const char **why);

/*
 * Which loose-object fan-out directories (00 to ff) the object
 * directory objdir holds: bit b of have[b / 64], from one listing of it
 * (names of two lowercase hex digits), or all 256 when it cannot be
 * listed. Most repositories hold few loose objects; one listing spares a
 * look at each of the rest.
 */
void repo_fanouts(const char *objdir, uint64_t have[4]);

/* Does have (repo_fanouts()) hold fan-out directory b? */
static inline int
repo_fanout_has(const uint64_t have[4], unsigned b)
{
	return (have[b / 64] >> (b % 64)) & 1;
}

#endif
