/*
 * alternates: a repository's object directories, its own and those its
 * objects/info/alternates files name, recursively.
 */
#ifndef ODBFS_ALTERNATES_H
#define ODBFS_ALTERNATES_H

#include "repo.h"

/*
 * Add the object directory dir (resolved; once only) to repo->objdirs,
 * then those its info/alternates names, and theirs, to
 * REPO_MAX_ALTERNATE_DEPTH. depth 0 is the repository's own directory,
 * which must be there (-ENOENT); an alternate that cannot be used, or
 * past 255 directories, is logged once and skipped. -ENOMEM.
 */
int alternates_add(struct repo *repo, const char *dir, unsigned depth);

#endif
