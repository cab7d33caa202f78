/*
 * scan: the repositories under a root directory, found as git would find
 * them, for a mount that serves many at once (odbfs --root, issue 17).
 * A scan lists them; a cheap check says when the listing may have gone
 * stale, so that a watcher rescans only then.
 *
 * A directory under the root is a repository when git would take it or
 * its .git for a git directory (setup.c's is_git_directory(): a HEAD that
 * validate_headref() takes, objects/ and refs/, a commondir file saying
 * where those two are):
 *
 *   group/project.git/{HEAD,objects,refs}  bare: shown as group/project.git
 *   team/app/.git/{HEAD,objects,refs}      work tree: shown as team/app
 *   team/lib/.git -> "gitdir: PATH"        work tree through a gitfile
 *
 * Any other directory is a group, searched in turn (GitLab's nested
 * groups, gitolite's and cgit's trees). A repository is not searched:
 * one inside another is not listed, but siblings are (GitLab's
 * project.wiki.git beside project.git). The root itself is always
 * searched as a group.
 *
 * The trees belong to the repositories' owners, who may be hostile:
 *   - symbolic links are never followed during the search, so it cannot
 *     leave the root nor loop; a linked repository is not listed. A .git
 *     gitfile or symlink, or a commondir file, is followed only as far as
 *     it stays inside the root (each step checked before anything is
 *     read); one that leaves it makes the repository absent.
 *   - directories are opened relative to their parent's descriptor with
 *     O_NOFOLLOW | O_DIRECTORY | O_NONBLOCK, files with O_NONBLOCK and
 *     checked to be regular before they are read: no FIFO, device or
 *     socket blocks the scan.
 *   - caps (store/scan.h): SCAN_MAX_DEPTH levels, SCAN_MAX_REPOS repositories,
 *     SCAN_MAX_ENTRIES directory entries read in one scan. Each cap met
 *     is one log line; past the last two the scan stops and says it is
 *     truncated.
 *   - what cannot be read (a directory, a broken repository, a path
 *     longer than PATH_MAX) is absent, with one log line naming it
 *     (log_once(): not again on every rescan), and never stops the rest.
 *   - names are bytes: newlines, non-UTF-8, 255-byte components are
 *     listed as they are (the log escapes control characters).
 * Objects a repository borrows (objects/info/alternates) are not looked
 * at here: that is the open's, with its owner's rights.
 *
 * Speed, on trees made by bench/genforge.sh (100 repositories a group,
 * half of the groups nested, a fifth of the repositories forks; 2 CPUs,
 * ext4, one thread): 1 000 repositories scan in 22 ms, 10 000 in 220 ms
 * with the inodes cached, 1.3 s from a cold cache. About 13 system calls
 * a repository, which is all the time warm. scan_changed() on 10 000
 * (101 groups) takes 0.3 ms.
 *
 * Not thread-safe on one struct scan being freed; a scan shares nothing
 * with another, so a watcher builds the next while readers use the last.
 */
#ifndef ODBSTORE_SCAN_H
#define ODBSTORE_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct scan_repo {
	const char *path;	/* as shown: "group/project.git", "team/app" */
	const char *gitdir;	/* absolute: where odb_open() finds it */
	bool worktree;		/* path is a work tree, not the git directory */
};

struct scan_dir;

struct scan {
	char *root;			/* real path of the root */
	struct scan_repo *repos;	/* sorted by path, as strcmp(3) */
	size_t nrepos;
	bool truncated;			/* a cap stopped the scan short */
	struct scan_dir *dirs;		/* scan.c's: what scan_changed() */
	size_t ndirs;			/* looks at again */
};

/*
 * Find the repositories under root (a path; symlinks in it are followed:
 * it is the administrator's). *out is malloc'd; free it with
 * scan_free(). Fails only when root cannot be searched at all (-errno
 * of realpath(3) or open(2)) or memory runs out (-ENOMEM); everything
 * below root that fails is left out with a log line. A directory on
 * device skip (unless 0) is not searched, with a log line: the mount
 * the scan is for, bound back under its own root, would have its own
 * requests wait on each other.
 */
int scan_root(const char *root, dev_t skip, struct scan **out);

/*
 * Whether the listing f may no longer be what a scan would find: one
 * fstatat(2) on each group directory f searched (and each it could not
 * read or found to be a broken repository), comparing inode, size, link
 * count, modification and change times. A repository created, removed or
 * renamed in a group, a group made readable, a directory turned into a
 * repository all show; what happens inside a listed repository does not
 * (a push must not cost a rescan), so a repository that breaks stays
 * listed until the next rescan, and its open says why. True when it
 * cannot tell (the root is gone).
 */
bool scan_changed(const struct scan *f);

/*
 * The i-th directory (i < f->ndirs) the scan searched, from the root
 * ("" for the root itself): the places whose changes a watcher waits for.
 */
const char *scan_dir_path(const struct scan *f, size_t i);

/* The repository shown at path, or NULL; valid until scan_free(f). */
const struct scan_repo *scan_find(const struct scan *f, const char *path);

void scan_free(struct scan *f);

#endif
