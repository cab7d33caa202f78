/*
 * owner: the identity the daemon reads a repository with (see owner.h).
 * main.c finds the owner before opening the repository, takes its
 * identity, opens the repository, and asks for root back around mounting
 * and unmounting. Nothing here runs once the session serves requests.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "owner.h"

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
	return finish(out, ret, other, why);
}

int
owner_of_dirs(const char *const *dirs, size_t n, struct owner *out,
    const char **why)
{
	uid_t other = 0;
	int ret = 0;

	*out = (struct owner){ 0 };
	for (size_t i = 0; i < n && ret == 0; i++)
		ret = consider_path(dirs[i], out, &other);
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
