/*
 * repo: finding a repository's object database from the path a user gives.
 *
 * REPO may be a bare repository, a work tree with a .git directory, a .git
 * file holding "gitdir: PATH" (submodules, linked worktrees), or a linked
 * worktree's git directory with a "commondir" file. The object directories
 * are the repository's own objects/ followed by its alternates, recursively
 * (objects/info/alternates, read by alternates.c): the repository's own
 * file is at depth 0, and one deeper than REPO_MAX_ALTERNATE_DEPTH is not
 * read, as in git.
 */
#ifndef ODBFS_REPO_H
#define ODBFS_REPO_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "file.h"
#include "odbstore/repo.h"

#define REPO_MAX_ALTERNATE_DEPTH 5

/* Symbolic links one resolution follows at most: Linux's MAXSYMLINKS. */
#define REPO_MAX_LINKS 40

struct stat;

struct repo {
	char *gitdir;		/* absolute, as the user's path resolved */
	char *commondir;	/* where refs, config and objects live */
	const char *format;	/* "sha1" or "sha256" */
	size_t rawsz;		/* 20 or 32 */
	bool reftable;		/* extensions.refStorage=reftable */
	char **objdirs;		/* absolute paths; [0] is commondir/objects */
	size_t nobjdirs;
};

/*
 * Find the repository at path. On failure *why says what was wrong in a
 * few words, for a one-line error message. Free with repo_free().
 */
int repo_open(const char *path, struct repo **out, const char **why);
void repo_free(struct repo *repo);

/* Read the alternates again, replacing repo->objdirs. */
int repo_reload_objdirs(struct repo *repo);

/*
 * If path (HEAD) is a symlink, the ref it names in buf, as git reads it:
 * 0 for a target in refs/, -ENOENT for any other target; -EINVAL when
 * path is not a symlink.
 */
int repo_head_link(const char *path, char *buf, size_t size);
int repo_head_link_at(int dir, const char *path, char *buf, size_t size);

/*
 * Whether path, relative to the directory fd dir (or AT_FDCWD), is a HEAD
 * git takes (its validate_headref()): 0 for a symlink into refs/ or a
 * regular file holding "ref: refs/..." or an object id; -ENOENT when
 * there is none, -EINVAL for one git does not take, -ENOTREG for a FIFO,
 * a directory..., found without blocking; or another -errno.
 */
int repo_head_at(int dir, const char *path);

#endif
