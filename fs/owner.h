/*
 * owner: the identity the daemon reads a repository with.
 *
 * A daemon started by root (an fstab line, mount -t fuse.odbfs) reads
 * with the rights of the user who owns the repository, so that its
 * alternates, a symlinked objects/ or a .git file's gitdir: show through
 * the mount only what that user could read, as git run by that user
 * would. Only the effective ids (and supplementary groups) change: real
 * and saved ids stay 0, so the owner can neither signal nor trace the
 * daemon, and the daemon takes root back for mount(2) and umount(2)
 * alone.
 */
#ifndef ODBFS_OWNER_H
#define ODBFS_OWNER_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

struct owner {
	uid_t uid;
	gid_t gid;		/* the primary group, else the entry's group
				 * (nogroup for root's group) */
	char name[64];		/* a login name, else the number */
	bool has_pw;		/* in the user database: initgroups();
				 * else no supplementary group */
	bool taken;		/* owner_take() succeeded */
	char entry[PATH_MAX];	/* what made a user the owner, if not
				 * REPO or REPO/.git; else "" */
};

/*
 * Who owns the repository at path, from the entries that decide where
 * odbfs reads: path and path/.git, each as an entry (a symlink's owner)
 * and as what it names. The one owner other than root among them;
 * -EPERM when two users own them (*why says who). Entries that do not
 * exist are skipped.
 *
 * When root owns both, what root would read through is looked at, as
 * root and before it is read: every directory and symbolic link on the
 * way to the git and common directories (a .git file's gitdir:, a
 * commondir file), those directories, and objects/, its info/, alternates,
 * pack/ and fan-out directories, and every directory under refs/ and
 * reftable/. The first entry another user owns makes that user the owner
 * (o->entry names it). If there is none but one of them may be changed
 * by a group or by everyone, -EPERM: root does not read what others can
 * redirect.
 */
int owner_of_repo(const char *path, struct owner *out, const char **why);

/* USER, a login name or a uid in the user database; -ENOENT if none. */
int owner_named(const char *user, struct owner *out);

/*
 * From root: take o's supplementary groups and effective gid and uid.
 * The process is made non-dumpable. A negative errno if any step failed:
 * the caller must not go on reading.
 */
int owner_take(struct owner *o);

/* Root's effective ids back, to mount or unmount; no-op if not taken. */
int owner_root(const struct owner *o);

/* o's effective ids again, after owner_root(). */
int owner_resume(const struct owner *o);

#endif
