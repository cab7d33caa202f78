/*
 * owner: the identity the daemon reads a repository with (see owner.h):
 * who owns a repository (from the entries that decide where it is read,
 * down to its alternates and fan-outs when root owns it), taking that
 * identity, and root back for a moment around mounting and unmounting. In a mount of many,
 * owner_of_repo() also weighs each repository as it is first opened.
 */
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "owner.h"
#include "odbstore/repo.h"

/* The group of no one: nogroup (Debian), nobody (Red Hat), or 65534. */
static gid_t
no_group(void)
{
	struct group *gr = getgrnam("nogroup");

	if (!gr)
		gr = getgrnam("nobody");
	return gr ? gr->gr_gid : 65534;
}

/*
 * Name o after its uid: a login name, else the number. A uid the user
 * database does not know keeps the group of the entry it owns, unless
 * that is root's group: a user who is not root is never read as with it.
 */
static void
set_name(struct owner *o)
{
	struct passwd *pw = getpwuid(o->uid);

	o->has_pw = pw != NULL;
	if (pw) {
		o->gid = pw->pw_gid;
		snprintf(o->name, sizeof(o->name), "%s", pw->pw_name);
	} else {
		if (o->gid == 0)
			o->gid = no_group();
		snprintf(o->name, sizeof(o->name), "%u", (unsigned)o->uid);
	}
}

/*
 * Count the owner of st into o: the first owner other than root is
 * taken, a second one is a conflict (-EPERM, with its uid in *other).
 */
static int
consider(const struct stat *st, struct owner *o, uid_t *other)
{
	if (st->st_uid == 0 || st->st_uid == o->uid)
		return 0;
	if (o->uid != 0) {
		*other = st->st_uid;
		return -EPERM;
	}
	o->uid = st->st_uid;
	o->gid = st->st_gid;
	return 0;
}

/* path as an entry and as what it names, when it exists. */
static int
consider_path(const char *path, struct owner *o, uid_t *other)
{
	struct stat st;
	int ret = 0;

	if (lstat(path, &st) == 0)
		ret = consider(&st, o, other);
	if (ret == 0 && stat(path, &st) == 0)
		ret = consider(&st, o, other);
	return ret;
}

/* The owner o found, or a message naming the two users in *why. */
static int
finish(struct owner *o, int ret, uid_t other, const char **why)
{
	static _Thread_local char msg[200];
	struct owner second = { .uid = other };

	if (o->uid != 0)
		set_name(o);
	if (ret == 0)
		return 0;
	set_name(&second);
	snprintf(msg, sizeof(msg), "owned by two users, %s and %s: choose "
	    "one with -o owner=USER", o->name, second.name);
	*why = msg;
	return ret;
}

/*
 * What root finds on its way through a repository it would read: the
 * first entry another user owns, or the first one that others than root
 * may change (who in changer).
 */
struct tally {
	struct owner *o;
	bool found;		/* o is the owner of o->entry */
	char changeable[PATH_MAX];
	char changer[64];	/* "group devs", "every user" */
};

/* Note path as changeable by the group or everyone, if it is the first. */
static void
note_changeable(struct tally *t, const char *path, const struct stat *st)
{
	struct group *gr;

	if (t->changeable[0])
		return;
	snprintf(t->changeable, sizeof(t->changeable), "%s", path);
	if (st->st_mode & S_IWOTH) {
		snprintf(t->changer, sizeof(t->changer), "every user");
	} else if ((gr = getgrgid(st->st_gid))) {
		snprintf(t->changer, sizeof(t->changer), "group %s",
		    gr->gr_name);
	} else {
		snprintf(t->changer, sizeof(t->changer), "group %u",
		    (unsigned)st->st_gid);
	}
}

/*
 * An entry a path goes through: another user's is the owner, and stops
 * the walk before root reads anything that user controls. A directory
 * the group or others may write, unless sticky, lets them put another
 * entry in the place of the next one.
 */
static int
see(void *ctx, const char *path, const struct stat *st)
{
	struct tally *t = ctx;

	if (st->st_uid != 0) {
		t->o->uid = st->st_uid;
		t->o->gid = st->st_gid;
		snprintf(t->o->entry, sizeof(t->o->entry), "%s", path);
		t->found = true;
		return -EPERM;
	}
	if (S_ISDIR(st->st_mode) && (st->st_mode & (S_IWGRP | S_IWOTH)) &&
	    !(st->st_mode & S_ISVTX))
		note_changeable(t, path, st);
	return 0;
}

/*
 * A directory or file that says what is read (a git, common or object
 * directory, alternates): a sticky bit does not keep others from adding
 * an alternate, a pack or a loose object, which may be a symbolic link
 * to anything root reads. rel is resolved from dir through see() first.
 */
static int
see_strictly(struct tally *t, const char *dir, const char *rel)
{
	struct stat st;
	char *real;
	int ret;

	if ((ret = repo_walk(dir, rel, see, t, &real)) < 0)
		return t->found ? ret : 0;
	if (stat(real, &st) == 0 && (ret = see(t, real, &st)) == 0 &&
	    (st.st_mode & (S_IWGRP | S_IWOTH)))
		note_changeable(t, real, &st);
	free(real);
	return ret;
}

/*
 * Which of the 256 fan-out directories commondir's objects/ holds, as
 * bits in have (repo_fanouts()); all of them when it cannot be found.
 */
static void
fanouts(const char *commondir, uint64_t have[4])
{
	char *real;

	if (repo_walk(commondir, "objects", NULL, NULL, &real) < 0) {
		memset(have, 0xff, 4 * sizeof(*have));
		return;
	}
	repo_fanouts(real, have);
	free(real);
}

/*
 * The directories and files whose owner or mode root must check before
 * it reads commondir's objects: objects/ itself, info/, the alternates,
 * pack/ and the fan-out directories of loose objects.
 */
static int
see_objects(struct tally *t, const char *commondir)
{
	static const char *const rels[] = { "objects", "objects/info",
	    "objects/info/alternates", "objects/pack" };
	uint64_t have[4];
	char fanout[16];
	int ret = 0;

	for (size_t i = 0; i < sizeof(rels) / sizeof(*rels) && ret == 0; i++)
		ret = see_strictly(t, commondir, rels[i]);
	if (ret == 0)
		fanouts(commondir, have);
	for (unsigned b = 0; b < 256 && ret == 0; b++) {
		if (!repo_fanout_has(have, b))
			continue;
		snprintf(fanout, sizeof(fanout), "objects/%02x", b);
		ret = see_strictly(t, commondir, fanout);
	}
	return ret;
}

/* Directories of refs below one walked, at most: git makes a handful. */
#define REFS_WALK_MAX 4096

/*
 * Every directory under dir/rel (refs/, reftable/), links not followed:
 * one that a group or everyone may change lets them put there a link to
 * a file only root may read, whose first line the mount would show as a
 * ref's target; one another user owns is theirs. *budget counts the
 * directories seen; past it the walk stops.
 */
static int
see_tree(struct tally *t, const char *dir, const char *rel, unsigned depth,
    size_t *budget)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	int ret = 0;
	DIR *d;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, rel) >=
	    sizeof(path) || lstat(path, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    !*budget || depth > 64)
		return 0;
	--*budget;
	if ((ret = see(t, path, &st)) < 0)
		return ret;
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		note_changeable(t, path, &st);
	if (!(d = opendir(path)))
		return 0;
	while (ret == 0 && (de = readdir(d))) {
		char sub[PATH_MAX];

		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") ||
		    !strcmp(de->d_name, "..") || (size_t)snprintf(sub,
		    sizeof(sub), "%s/%s", rel, de->d_name) >= sizeof(sub))
			continue;
		ret = see_tree(t, dir, sub, depth + 1, budget);
	}
	closedir(d);
	return ret;
}

/* The refs of gitdir and commondir: see_tree() of refs/ and reftable/. */
static int
see_refs(struct tally *t, const char *gitdir, const char *commondir)
{
	static const char *const rels[] = { "refs", "reftable" };
	size_t budget = REFS_WALK_MAX;
	int ret = 0;

	for (size_t i = 0; i < 2 && ret == 0; i++) {
		ret = see_tree(t, commondir, rels[i], 0, &budget);
		if (ret == 0 && strcmp(gitdir, commondir))
			ret = see_tree(t, gitdir, rels[i], 0, &budget);
	}
	return ret;
}

/*
 * Root owns path and path/.git: look at everything else root would
 * read through, as root, stopping at the first entry of another user.
 * A repository that cannot be found is left to odb_open() to report.
 */
static int
look_further(const char *path, struct owner *o, const char **why)
{
	static _Thread_local char msg[PATH_MAX + 256];
	struct tally t = { .o = o };
	char *real, *gitdir, *commondir;
	const char *ignored;
	struct stat st;

	if ((real = realpath(path, NULL))) {
		if (stat(real, &st) == 0)
			see(&t, real, &st);
		free(real);
	}
	if (repo_locate(path, see, &t, &gitdir, &commondir, &ignored) == 0) {
		if (see_strictly(&t, gitdir, ".") == 0 &&
		    see_strictly(&t, commondir, ".") == 0 &&
		    see_objects(&t, commondir) == 0)
			see_refs(&t, gitdir, commondir);
		free(gitdir);
		free(commondir);
	}
	if (t.found || !t.changeable[0])
		return 0;
	*o = (struct owner){ 0 };
	snprintf(msg, sizeof(msg), "%s is writable by %s, so root does not "
	    "read it: choose a user with -o owner=USER", t.changeable,
	    t.changer);
	*why = msg;
	return -EPERM;
}

int
owner_of_repo(const char *path, struct owner *out, const char **why)
{
	uid_t other = 0;
	char *dotgit;
	int ret;

	*out = (struct owner){ 0 };
	if (asprintf(&dotgit, "%s/.git", path) < 0) {
		*why = strerror(ENOMEM);
		return -ENOMEM;
	}
	ret = consider_path(path, out, &other);
	if (ret == 0)
		ret = consider_path(dotgit, out, &other);
	free(dotgit);
	if (ret == 0 && out->uid == 0 && (ret = look_further(path, out,
	    why)) < 0)
		return ret;
	return finish(out, ret, other, why);
}

int
owner_named(const char *user, struct owner *out)
{
	struct passwd *pw = getpwnam(user);
	char *end;
	unsigned long n;

	*out = (struct owner){ 0 };
	if (!pw && *user) {
		n = strtoul(user, &end, 10);
		if (!*end && n == (uid_t)n)
			pw = getpwuid((uid_t)n);
	}
	if (!pw)
		return -ENOENT;
	out->uid = pw->pw_uid;
	set_name(out);
	return 0;
}

/*
 * The effective gid, then uid. Each change of effective ids sets the
 * process's dumpable flag to what fs.suid_dumpable says, which may be 1:
 * then /proc/PID/ would be the owner's, and a core file too. So it is
 * cleared after every change, whatever the sysctl says, so that no core
 * file or /proc/PID/mem shows what root's saved ids let it read.
 */
static int
become(uid_t uid, gid_t gid)
{
	if (setresgid((gid_t)-1, gid, (gid_t)-1) < 0 ||
	    setresuid((uid_t)-1, uid, (uid_t)-1) < 0 ||
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return -errno;
	return 0;
}

/*
 * Groups first, while the effective uid is still root's: the user's from
 * the group database, or none at all for a uid it does not know (root's
 * supplementary groups must not stay).
 */
int
owner_take(struct owner *o)
{
	int ret = o->has_pw ? initgroups(o->name, o->gid) :
	    setgroups(0, NULL);

	if (ret < 0)
		return -errno;
	if ((ret = become(o->uid, o->gid)) == 0)
		o->taken = true;
	return ret;
}

int
owner_root(const struct owner *o)
{
	if (!o->taken)
		return 0;
	if (setresuid((uid_t)-1, 0, (uid_t)-1) < 0 ||
	    setresgid((gid_t)-1, 0, (gid_t)-1) < 0 ||
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return -errno;
	return 0;
}

int
owner_resume(const struct owner *o)
{
	if (!o->taken)
		return 0;
	return become(o->uid, o->gid);
}
