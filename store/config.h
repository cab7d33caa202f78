/*
 * config: what the repository's config files say of its format, read as
 * git reads them (git-config(1)'s syntax, include.path, the format
 * version and extensions git's setup.c checks).
 */
#ifndef ODBFS_CONFIG_H
#define ODBFS_CONFIG_H

#include <stdbool.h>

#include "repo.h"

/*
 * Set repo->format, repo->rawsz and repo->reftable from the config in
 * repo->commondir (and config.worktree in repo->gitdir with
 * extensions.worktreeConfig); sha1 and the files backend when there is
 * none. Refuses what git refuses (a format version above 1, an extension
 * it does not know in version 1, one of version 1 in version 0, a bad
 * line, an include it cannot read or nested too deep): -errno with *why
 * saying what, in git's words where git has them (see file_why()).
 */
int config_read_format(struct repo *repo, const char **why);

/*
 * Whether the config says the refs are in a reftable now (git refs
 * migrate changes it under a mount); repo->reftable when it cannot say.
 */
bool config_reftable_now(const struct repo *repo);

#endif
