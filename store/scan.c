/*
 * scan: repository discovery under a root (see odbstore/scan.h). The
 * side of a many-repository mount that decides what it lists; opening a
 * listed repository is odb_open()'s. Calls repo.c for what it already
 * knows of git's files (a HEAD git takes, a gitfile followed one entry at
 * a time) and log.c for what it leaves out.
 *
 * scan_root()
 *   group()            read a group's names, sorted, then for each:
 *     child()          open it (O_NOFOLLOW | O_DIRECTORY), then
 *       classify()     .git first, then the directory itself, as git's
 *                      setup_git_directory_gently_1() tries them:
 *         gitdir_at()  HEAD (repo_head_at()), objects/, refs/
 *         located()    a gitfile, a .git link, a commondir file:
 *                      repo_locate(), confined to the root by inside()
 *       group()        if it is a group and not too deep
 *
 * The search goes by directory descriptor, so a name swapped for a link
 * while it runs is refused by O_NOFOLLOW rather than followed; the paths
 * it builds alongside are for the listing and the log. Each group (and
 * each directory it could not use) is remembered with what fstat(2) said
 * of it before its names were read, for scan_changed().
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "map.h"
#include "scan.h"
#include "log.h"
#include "repo.h"

/* A directory as it was when searched, for scan_changed(). */
struct scan_dir {
	char *rel;		/* from the root; "" is the root */
	struct fileid id;	/* device, inode, size, mtime */
	struct timespec ctime;	/* a chmod, a rename in or out */
	nlink_t nlink;		/* a subdirectory made or removed */
};

/* What a directory under the root turned out to be. */
enum kind { GROUP, REPO, WORKTREE, BROKEN };

struct search {
	struct scan *f;
	size_t repocap, dircap;
	size_t rootlen;		/* of path's root part; 0 for "/" */
	char path[PATH_MAX];	/* root, then the directory at hand */
	char gitdir[PATH_MAX + sizeof("/.git")]; /* a repository's */
	size_t entries;		/* read so far, against SCAN_MAX_ENTRIES */
	dev_t skip;		/* not searched: the mount's own device */
	bool stop;		/* a cap met: search no more */
};

static const int dir_flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
    O_NONBLOCK | O_NOCTTY | O_CLOEXEC;

/* The path shown for s->path: what follows the root and its '/'. */
static const char *
rel(const struct search *s)
{
	size_t n = strlen(s->path);

	return n > s->rootlen ? s->path + s->rootlen + 1 : "";
}

/*
 * The scan's log lines give the reason first and the path last, so that
 * a path too long for a line (512 bytes) loses its end, not the reason.
 */
static void
unsearched(const struct search *s, int err)
{
	log_once(LOGL_WARN, "not searched (%s): %s", strerror(err), s->path);
}

/* Room in *v (*cap elements of size) for one more after n: doubling. */
static int
grow(void **v, size_t *cap, size_t n, size_t size)
{
	size_t more = *cap ? 2 * *cap : 64;
	void *p;

	if (n < *cap)
		return 0;
	if (more > SIZE_MAX / size || !(p = realloc(*v, more * size)))
		return -ENOMEM;
	*v = p;
	*cap = more;
	return 0;
}

static int
remember(struct search *s, const struct stat *st)
{
	struct scan *f = s->f;
	struct scan_dir *d;

	if (grow((void **)&f->dirs, &s->dircap, f->ndirs, sizeof(*d)) < 0)
		return -ENOMEM;
	d = &f->dirs[f->ndirs];
	if (!(d->rel = strdup(rel(s))))
		return -ENOMEM;
	d->id = fileid_of(st);
	d->ctime = st->st_ctim;
	d->nlink = st->st_nlink;
	f->ndirs++;
	return 0;
}

static int
add_repo(struct search *s, enum kind kind, const char *gitdir)
{
	struct scan *f = s->f;
	struct scan_repo *r;
	const char *shown = rel(s);
	size_t n = strlen(shown) + 1, m = strlen(gitdir) + 1;
	char *buf;

	if (f->nrepos == SCAN_MAX_REPOS) {
		log_once(LOGL_WARN, "more than %d repositories, the rest not "
		    "listed: %s", SCAN_MAX_REPOS, f->root);
		f->truncated = s->stop = true;
		return 0;
	}
	if (grow((void **)&f->repos, &s->repocap, f->nrepos, sizeof(*r)) < 0)
		return -ENOMEM;
	/* One allocation: the path, then the git directory. */
	if (!(buf = malloc(n + m)))
		return -ENOMEM;
	memcpy(buf, shown, n);
	memcpy(buf + n, gitdir, m);
	r = &f->repos[f->nrepos++];
	r->path = buf;
	r->gitdir = buf + n;
	r->worktree = kind == WORKTREE;
	return 0;
}

/*
 * Is the directory open as fd a git directory, as git's is_git_directory()
 * says: a HEAD that validate_headref() takes, objects/ and refs/ (which
 * may be links: git follows them)? 0 if so; 1 if it has a commondir file,
 * which says where objects/ and refs/ are (for located() to follow);
 * -ENOENT if it has no HEAD; -ENOMEM; or -EINVAL with *why.
 */
static int
gitdir_at(int fd, const char **why)
{
	static const char *const dirs[] = { "objects", "refs" };
	struct stat st;
	int ret = repo_head_at(fd, "HEAD");

	if (ret == -ENOENT || ret == -ENOMEM)
		return ret;
	if (ret < 0) {
		*why = ret == -EINVAL ? "HEAD is not a ref" :
		    ret == -ENOTREG ? "HEAD is not a regular file" :
		    strerror(-ret);
		return -EINVAL;
	}
	if (fstatat(fd, "commondir", &st, AT_SYMLINK_NOFOLLOW) == 0)
		return 1;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++)
		if (fstatat(fd, dirs[i], &st, 0) < 0 || !S_ISDIR(st.st_mode)) {
			*why = i ? "no refs directory" : "no objects directory";
			return -EINVAL;
		}
	return 0;
}

/*
 * repo_locate()'s look at each entry a gitfile, .git link or commondir
 * file leads through: refuse any outside the root but the directories
 * that lead to it (an absolute path goes through them), and any that is
 * no file, directory or link (a FIFO, a device: nothing to open there).
 */
static int
inside(void *ctx, const char *path, const struct stat *st)
{
	const struct search *s = ctx;
	size_t n = strlen(path);
	bool under = !strncmp(path, s->path, s->rootlen) &&
	    (path[s->rootlen] == '/' || path[s->rootlen] == '\0');
	bool above = n < s->rootlen && !strncmp(path, s->path, n) &&
	    s->path[n] == '/' && S_ISDIR(st->st_mode);

	if (!under && !above)
		return -EXDEV;
	if (!S_ISDIR(st->st_mode) && !S_ISLNK(st->st_mode) &&
	    !S_ISREG(st->st_mode))
		return -ENOTREG;
	return 0;
}

/*
 * The git directory of the repository at s->path when it is found through
 * a .git file or link or a commondir file, into s->gitdir: repo_locate()
 * with every step kept inside the root; then objects/ and refs/ where the
 * commondir says, which it does not look for. -EINVAL with *why if not.
 */
static int
located(struct search *s, const char **why)
{
	static const char *const dirs[] = { "objects", "refs" };
	char *gitdir, *common, sub[PATH_MAX];
	struct stat st;
	int ret;

	ret = repo_locate(s->path, inside, s, &gitdir, &common, why);
	if (ret == -ENOMEM)
		return ret;
	if (ret == -EXDEV)
		*why = "it leads out of the root";
	else if (ret == -ENOTREG)
		*why = "it leads to what is no file nor directory";
	if (ret < 0)
		return -EINVAL;
	for (size_t i = 0; ret == 0 && i < sizeof(dirs) / sizeof(*dirs); i++)
		if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", common,
		    dirs[i]) >= sizeof(sub) || stat(sub, &st) < 0 ||
		    !S_ISDIR(st.st_mode)) {
			*why = i ? "no refs directory" : "no objects directory";
			ret = -EINVAL;
		}
	if (ret == 0 && strlen(gitdir) < sizeof(s->gitdir))
		memcpy(s->gitdir, gitdir, strlen(gitdir) + 1);
	else if (ret == 0)
		ret = (*why = "its git directory's path is too long", -EINVAL);
	free(gitdir);
	free(common);
	return ret;
}

/* Is name under fd a directory (links not followed)? */
static bool
has_dir(int fd, const char *name)
{
	struct stat st;

	return fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISDIR(st.st_mode);
}

/*
 * What the directory open as fd, at s->path, is: a work tree (its .git,
 * tried first as git does), a bare repository, a group, or BROKEN when it
 * is meant as a repository but git would not take it (*why says why).
 * s->gitdir is set for a repository found through located().
 */
static int
classify(struct search *s, int fd, const char **why)
{
	struct stat st;
	int ret, sub;

	s->gitdir[0] = '\0';
	if (fstatat(fd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISDIR(st.st_mode))
			ret = S_ISREG(st.st_mode) || S_ISLNK(st.st_mode) ?
			    located(s, why) : (*why = ".git is no file nor "
			    "directory", -EINVAL);
		else if ((sub = openat(fd, ".git", dir_flags)) < 0)
			ret = (*why = strerror(errno), -EINVAL);
		else {
			ret = gitdir_at(sub, why);
			close(sub);
			if (ret == 1)
				ret = located(s, why);
			else if (ret == -ENOENT)
				ret = (*why = ".git has no HEAD", -EINVAL);
		}
		if (ret == -ENOMEM)
			return ret;
		return ret < 0 ? BROKEN : WORKTREE;
	} else if (errno != ENOENT) {
		*why = strerror(errno);
		return BROKEN;
	}
	ret = gitdir_at(fd, why);
	if (ret == 1) {
		/* A HEAD and a commondir: meant as one, wherever it leads. */
		ret = located(s, why);
		if (ret == -EINVAL)
			return BROKEN;
	}
	if (ret == -ENOMEM || ret == 0)
		return ret == 0 ? REPO : ret;
	/*
	 * Not one: meant as one if it has most of one, a group else (a
	 * stray file called HEAD among projects does not hide them).
	 */
	if (ret == -ENOENT) {
		*why = "no HEAD";
		return has_dir(fd, "objects") && has_dir(fd, "refs") ? BROKEN :
		    GROUP;
	}
	return has_dir(fd, "objects") || has_dir(fd, "refs") ? BROKEN : GROUP;
}

static int
group(struct search *s, int fd, unsigned depth);

/* The entry name of the group open as parent, at depth. */
static int
child(struct search *s, int parent, const char *name, unsigned depth)
{
	size_t end = strlen(s->path), n = strlen(name);
	const char *why = NULL;
	struct stat st;
	int fd, kind, ret = 0;

	/* Room for the name and a "/.git": the open takes a path. */
	if (end + 1 + n + sizeof("/.git") > sizeof(s->path)) {
		log_once(LOGL_WARN, "not searched, path longer than %d bytes: "
		    "%s/%s", PATH_MAX, s->path, name);
		return 0;
	}
	s->path[end] = '/';
	memcpy(s->path + end + 1, name, n + 1);
	if ((fd = openat(parent, name, dir_flags)) < 0) {
		/* A link, a file, or gone since it was listed: not ours. */
		if (errno == ELOOP || errno == ENOTDIR || errno == ENOENT)
			goto out;
		if (errno == ENOMEM) {
			ret = -ENOMEM;
			goto out;
		}
		unsearched(s, errno);
		/* Made readable later: scan_changed() sees its ctime. */
		if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(st.st_mode))
			ret = remember(s, &st);
		goto out;
	}
	/* Before it is looked into: a change after shows in scan_changed(). */
	if (fstat(fd, &st) < 0) {
		unsearched(s, errno);
		goto out;
	}
	if (s->skip && st.st_dev == s->skip) {
		log_once(LOGL_WARN, "not searched, it is this mount itself: %s",
		    s->path);
		goto out;
	}
	switch ((kind = classify(s, fd, &why))) {
	case REPO:
	case WORKTREE:
		if (!s->gitdir[0])
			snprintf(s->gitdir, sizeof(s->gitdir), "%s%s",
			    s->path, kind == WORKTREE ? "/.git" : "");
		ret = add_repo(s, kind, s->gitdir);
		break;
	case BROKEN:
		log_once(LOGL_WARN, "not listed, not a repository git would "
		    "open (%s): %s", why, s->path);
		ret = remember(s, &st);
		break;
	case GROUP:
		if ((ret = remember(s, &st)) < 0)
			break;
		if (depth >= SCAN_MAX_DEPTH) {
			log_once(LOGL_WARN, "not searched, %d levels deep: %s",
			    SCAN_MAX_DEPTH, s->path);
			break;
		}
		ret = group(s, fd, depth + 1);
		break;
	default:
		ret = kind;
	}
out:
	if (fd >= 0)
		close(fd);
	s->path[end] = '\0';
	return ret;
}

/* Names as group() reads them: each is a d_type byte, then the name. */
static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a + 1, *(char *const *)b + 1);
}

/*
 * Search the group open as fd (still the caller's), at s->path, whose
 * entries are at depth: each entry that may be a directory, in name
 * order, so that what a cap leaves out is the same on every scan.
 */
static int
group(struct search *s, int fd, unsigned depth)
{
	struct dirent *e;
	char *buf = NULL, **names = NULL, *grown;
	size_t len = 0, cap = 0, n = 0;
	DIR *d = NULL;
	int dfd, err, ret = 0;

	if ((dfd = dup(fd)) < 0 || !(d = fdopendir(dfd))) {
		err = errno;
		if (dfd >= 0)
			close(dfd);
		if (err == ENOMEM)
			return -ENOMEM;
		unsearched(s, err);
		return 0;
	}
	for (;;) {
		errno = 0;
		if (!(e = readdir(d))) {
			if ((err = errno))
				log_once(LOGL_WARN, "searched in part (%s): %s",
				    strerror(err), s->path);
			break;
		}
		size_t m = strlen(e->d_name) + 2;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		/* Only what may be a directory: a link is not followed. */
		if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
			continue;
		if (++s->entries > SCAN_MAX_ENTRIES) {
			log_once(LOGL_WARN, "more than %d directories read, "
			    "the rest not listed: %s", SCAN_MAX_ENTRIES,
			    s->f->root);
			s->f->truncated = s->stop = true;
			break;
		}
		if (len + m > cap) {
			cap = cap ? 2 * cap : 4096;
			if (cap < len + m)
				cap = len + m;
			if (!(grown = realloc(buf, cap))) {
				ret = -ENOMEM;
				goto out;
			}
			buf = grown;
		}
		buf[len] = (char)e->d_type;
		memcpy(buf + len + 1, e->d_name, m - 1);
		len += m;
		n++;
	}
	if (n && !(names = malloc(n * sizeof(*names)))) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0, at = 0; i < n; i++, at += strlen(buf + at + 1) + 2)
		names[i] = buf + at;
	if (n)
		qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; i < n && ret == 0 && !s->stop; i++)
		ret = child(s, fd, names[i] + 1, depth);
out:
	closedir(d);
	free(names);
	free(buf);
	return ret;
}

static int
by_path(const void *a, const void *b)
{
	return strcmp(((const struct scan_repo *)a)->path,
	    ((const struct scan_repo *)b)->path);
}

int
scan_root(const char *root, dev_t skip, struct scan **out)
{
	struct search *s;
	struct scan *f;
	struct stat st;
	int fd = -1, ret;

	*out = NULL;
	/* The path buffers are large: not on a FUSE worker's stack. */
	if (!(s = calloc(1, sizeof(*s))) || !(f = calloc(1, sizeof(*f)))) {
		free(s);
		return -ENOMEM;
	}
	s->f = f;
	s->skip = skip;
	if (!(f->root = realpath(root, NULL))) {
		ret = -errno;
		goto fail;
	}
	s->rootlen = strcmp(f->root, "/") ? strlen(f->root) : 0;
	if (s->rootlen + sizeof("/.git") >= sizeof(s->path)) {
		ret = -ENAMETOOLONG;
		goto fail;
	}
	memcpy(s->path, f->root, s->rootlen + 1);
	s->path[s->rootlen] = '\0';
	if ((fd = open(f->root, dir_flags)) < 0 || fstat(fd, &st) < 0) {
		ret = -errno;
		goto fail;
	}
	if ((ret = remember(s, &st)) < 0 || (ret = group(s, fd, 1)) < 0)
		goto fail;
	if (f->nrepos)
		qsort(f->repos, f->nrepos, sizeof(*f->repos), by_path);
	close(fd);
	free(s);
	*out = f;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	free(s);
	scan_free(f);
	return ret;
}

bool
scan_changed(const struct scan *f)
{
	struct stat st;
	struct fileid id;
	int fd;
	bool changed = false;

	if ((fd = open(f->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return true;
	/*
	 * A name along a path may have become a link since: then what
	 * fstatat() finds is another inode, which is a change all the same.
	 */
	for (size_t i = 0; i < f->ndirs && !changed; i++) {
		const struct scan_dir *d = &f->dirs[i];

		if (fstatat(fd, d->rel[0] ? d->rel : ".", &st,
		    AT_SYMLINK_NOFOLLOW) < 0) {
			changed = true;
			break;
		}
		id = fileid_of(&st);
		changed = !fileid_same(&id, &d->id) ||
		    st.st_nlink != d->nlink ||
		    st.st_ctim.tv_sec != d->ctime.tv_sec ||
		    st.st_ctim.tv_nsec != d->ctime.tv_nsec;
	}
	close(fd);
	return changed;
}

const struct scan_repo *
scan_find(const struct scan *f, const char *path)
{
	struct scan_repo key = { .path = path };

	if (!f->nrepos)
		return NULL;
	return bsearch(&key, f->repos, f->nrepos, sizeof(*f->repos), by_path);
}

void
scan_free(struct scan *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nrepos; i++)
		free((char *)f->repos[i].path);
	for (size_t i = 0; i < f->ndirs; i++)
		free(f->dirs[i].rel);
	free(f->repos);
	free(f->dirs);
	free(f->root);
	free(f);
}

const char *
scan_dir_path(const struct scan *f, size_t i)
{
	return f->dirs[i].rel;
}
