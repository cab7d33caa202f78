/*
 * repo: repository discovery: from the path a user gives to the git
 * directory and the common directory (repo_locate()), then a struct repo
 * with the format the config says (config.c) and the object directories
 * (alternates.c). The paths .git and commondir files hold are resolved one
 * entry at a time (repo_walk()), so that a caller deciding whose rights a
 * repository is read with sees every link and directory on the way before
 * anything is read. Reads a few small files; nothing here is on a lookup
 * path.
 */
#include <ctype.h>
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

#include "alternates.h"
#include "config.h"
#include "file.h"
#include "log.h"
#include "oid.h"
#include "repo.h"

/* Does something (a file, a FIFO, a directory...) live at path? */
static bool
exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Strip trailing white space in place. */
static void
chomp(char *s)
{
	size_t n = strlen(s);

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
}

int
repo_walk(const char *dir, const char *path, repo_entry_fn *fn, void *ctx,
    char **real)
{
	char cur[PATH_MAX], next[PATH_MAX], target[PATH_MAX], *rest, *p;
	size_t len = 0;
	unsigned links = 0;
	int ret = 0;

	*real = NULL;
	if (path[0] != '/') {
		if ((len = strlen(dir)) >= sizeof(cur))
			return -ENAMETOOLONG;
		memcpy(cur, dir, len);
	}
	/* cur has no trailing '/': the root is "". */
	while (len && cur[len - 1] == '/')
		len--;
	cur[len] = '\0';
	if (!(rest = strdup(path)))
		return -ENOMEM;
	for (p = rest; ret == 0;) {
		struct stat st;
		const char *name;
		size_t n;
		ssize_t got;
		char *grown;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		name = p;
		n = strcspn(p, "/");
		p += n;
		if (n == 1 && name[0] == '.')
			continue;
		if (n == 2 && name[0] == '.' && name[1] == '.') {
			/* cur is real: its parent is the lexical one. */
			while (len && cur[len - 1] != '/')
				len--;
			if (len)
				len--;
			cur[len] = '\0';
			continue;
		}
		if (len + 1 + n >= sizeof(next)) {
			ret = -ENAMETOOLONG;
			break;
		}
		memcpy(next, cur, len);
		next[len] = '/';
		memcpy(next + len + 1, name, n);
		next[len + 1 + n] = '\0';
		if (lstat(next, &st) < 0) {
			ret = -errno;
			break;
		}
		if (fn && (ret = fn(ctx, next, &st)) != 0)
			break;
		if (S_ISLNK(st.st_mode)) {
			if (++links > REPO_MAX_LINKS) {
				ret = -ELOOP;
				break;
			}
			got = readlink(next, target, sizeof(target));
			if (got < 0 || (size_t)got == sizeof(target)) {
				ret = got < 0 ? -errno : -ENAMETOOLONG;
				break;
			}
			target[got] = '\0';
			/* The target's components, then what followed. */
			if (asprintf(&grown, "%s%s", target, p) < 0) {
				ret = -ENOMEM;
				break;
			}
			free(rest);
			rest = p = grown;
			if (target[0] == '/')
				cur[len = 0] = '\0';
			continue;
		}
		if (*p == '/' && !S_ISDIR(st.st_mode)) {
			ret = -ENOTDIR;
			break;
		}
		len = strlen(next);
		memcpy(cur, next, len + 1);
	}
	free(rest);
	if (ret == 0 && !(*real = strdup(len ? cur : "/")))
		ret = -ENOMEM;
	return ret;
}

/*
 * The real path that dir/file names after prefix, in *out (malloc'd); NULL
 * when the file is absent, does not start with prefix, or names nothing
 * that exists. Both the file and the path it names resolve through fn.
 * A file that is there but cannot be read, or a path that cannot be
 * resolved (-EACCES, -ELOOP, or what fn said), is an error and *why
 * names the file.
 */
static int
path_from_file(const char *dir, const char *file, const char *prefix,
    repo_entry_fn *fn, void *ctx, char **out, const char **why)
{
	char *content = NULL, *path = NULL;
	size_t plen = strlen(prefix);
	int ret;

	*out = NULL;
	if ((ret = repo_walk(dir, file, fn, ctx, &path)) == 0 &&
	    (ret = file_read(path, PATH_MAX, &content)) == 0)
		chomp(content);
	if (ret < 0) {
		*why = file_unreadable(dir, file, ret);
	} else if (!strncmp(content, prefix, plen)) {
		ret = repo_walk(dir, content + plen, fn, ctx, out);
		if (ret < 0 && ret != -ENOENT && ret != -ENOTDIR)
			*why = file_why("%s/%s names %s: %s", dir, file,
			    content + plen, strerror(-ret));
	}
	free(content);
	free(path);
	return ret == -ENOENT || ret == -ENOTDIR ? 0 : ret;
}
/* Does HEAD's text name a ref under refs/, or an object? */
static bool
head_ok(const char *text)
{
	size_t i;

	if (!strncmp(text, "ref:", 4)) {
		for (text += 4; isspace((unsigned char)*text); text++)
			;
		return !strncmp(text, "refs/", 5);
	}
	/* Only the first 40 digits: the format is not known yet. */
	for (i = 0; i < 2 * OID_RAWSZ_SHA1 && isxdigit((unsigned char)text[i]);
	    i++)
		;
	return i == 2 * OID_RAWSZ_SHA1;
}

int
repo_head_link(const char *path, char *buf, size_t size)
{
	return repo_head_link_at(AT_FDCWD, path, buf, size);
}

int
repo_head_link_at(int dir, const char *path, char *buf, size_t size)
{
	struct stat st;
	ssize_t n;

	if (fstatat(dir, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISLNK(st.st_mode))
		return -EINVAL;
	if ((n = readlinkat(dir, path, buf, size - 1)) < 0)
		return -errno;
	buf[n] = '\0';
	return (size_t)n < size - 1 && !strncmp(buf, "refs/", 5) ? 0 : -ENOENT;
}

int
repo_head_at(int dir, const char *path)
{
	char link[PATH_MAX], *text;
	int ret;

	/* O_NOFOLLOW: a link is refused, to be read as one. */
	ret = file_read_at(dir, path, O_NOFOLLOW, 256, &text, NULL);
	if (ret == -ELOOP)
		return (ret = repo_head_link_at(dir, path, link,
		    sizeof(link))) == -ENOENT ? -EINVAL : ret;
	if (ret < 0)
		return ret;
	ret = head_ok(text) ? 0 : -EINVAL;
	free(text);
	return ret;
}

/*
 * Why dir is not a git directory, or NULL if it is one. As git's
 * is_git_directory(): objects/ (or a commondir file saying where it is),
 * and a HEAD that validate_headref() accepts: a symlink into refs/ (which
 * need not exist), or a file holding "ref: refs/..." or an object id.
 */
static const char *
not_gitdir(const char *dir)
{
	char *head = file_join(dir, "HEAD"), *common = file_join(dir, "commondir");
	char *objects = file_join(dir, "objects");
	const char *why = NULL;
	int ret;

	if (!head || !common || !objects)
		why = strerror(ENOMEM);
	else if (!file_is_dir(objects) && !exists(common))
		why = errno == EACCES ? file_why("not a git repository: %s: %s",
		    objects, strerror(errno)) : "not a git repository";
	else if ((ret = repo_head_at(AT_FDCWD, head)) == -ENOTREG)
		why = file_why("not a git repository: %s is not a regular file",
		    head);
	else if (ret < 0 && ret != -ENOENT && ret != -EINVAL)
		why = file_why("not a git repository: %s: %s", head,
		    strerror(-ret));
	else if (ret < 0)
		why = "not a git repository";
	free(head);
	free(common);
	free(objects);
	return why;
}

int
repo_locate(const char *path, repo_entry_fn *fn, void *ctx, char **gitdir,
    char **commondir, const char **why)
{
	char *real, *dotgit = NULL;
	int ret;

	*gitdir = *commondir = NULL;
	if (!(real = realpath(path, NULL))) {
		*why = strerror(errno);
		return -errno;
	}
	if (!file_is_dir(real)) {
		free(real);
		*why = "not a directory";
		return -ENOTDIR;
	}
	/* A .git that names nothing (or nothing there) is no .git. */
	ret = repo_walk(real, ".git", fn, ctx, &dotgit);
	if (ret < 0 && ret != -ENOENT && ret != -ENOTDIR) {
		*why = file_unreadable(real, ".git", ret);
		goto fail;
	}
	if (dotgit && file_is_dir(dotgit)) {
		*gitdir = dotgit;
		dotgit = NULL;
	} else if (dotgit) {
		/* A .git file: "gitdir: PATH" (submodules, linked worktrees). */
		if ((ret = path_from_file(real, ".git", "gitdir: ", fn, ctx,
		    gitdir, why)) < 0)
			goto fail;
		if (!*gitdir) {
			*why = "its .git file does not name a directory";
			ret = -ENOENT;
			goto fail;
		}
	} else {
		*gitdir = real;
		real = NULL;
	}
	if ((*why = not_gitdir(*gitdir))) {
		ret = -ENOENT;
		goto fail;
	}
	/* A linked worktree's: where refs, config and objects are. */
	if ((ret = path_from_file(*gitdir, "commondir", "", fn, ctx,
	    commondir, why)) < 0)
		goto fail;
	if (!*commondir && !(*commondir = strdup(*gitdir))) {
		*why = strerror(ENOMEM);
		ret = -ENOMEM;
		goto fail;
	}
	free(dotgit);
	free(real);
	return 0;
fail:
	free(dotgit);
	free(real);
	free(*gitdir);
	free(*commondir);
	*gitdir = *commondir = NULL;
	return ret;
}

int
repo_open(const char *path, struct repo **out, const char **why)
{
	struct repo *repo;
	char *objects = NULL;
	int ret;

	*out = NULL;
	if (!(repo = calloc(1, sizeof(*repo)))) {
		*why = strerror(ENOMEM);
		return -ENOMEM;
	}
	if ((ret = repo_locate(path, NULL, NULL, &repo->gitdir,
	    &repo->commondir, why)) < 0)
		goto fail;
	if ((ret = config_read_format(repo, why)) < 0)
		goto fail;
	if (!(objects = file_join(repo->commondir, "objects"))) {
		*why = strerror(ENOMEM);
		ret = -ENOMEM;
		goto fail;
	}
	if ((ret = alternates_add(repo, objects, 0)) < 0) {
		*why = ret == -ENOENT ? "it has no objects directory" :
		    strerror(-ret);
		goto fail;
	}
	free(objects);
	*out = repo;
	return 0;
fail:
	free(objects);
	repo_free(repo);
	return ret;
}

int
repo_reload_objdirs(struct repo *repo)
{
	struct repo fresh = { .commondir = repo->commondir };
	char *objects;
	int ret;

	if (!(objects = file_join(repo->commondir, "objects")))
		return -ENOMEM;
	ret = alternates_add(&fresh, objects, 0);
	free(objects);
	if (ret < 0) {
		for (size_t i = 0; i < fresh.nobjdirs; i++)
			free(fresh.objdirs[i]);
		free(fresh.objdirs);
		return ret;
	}
	for (size_t i = 0; i < repo->nobjdirs; i++)
		free(repo->objdirs[i]);
	free(repo->objdirs);
	repo->objdirs = fresh.objdirs;
	repo->nobjdirs = fresh.nobjdirs;
	return 0;
}

void
repo_free(struct repo *repo)
{
	if (!repo)
		return;
	for (size_t i = 0; i < repo->nobjdirs; i++)
		free(repo->objdirs[i]);
	free(repo->objdirs);
	free(repo->gitdir);
	free(repo->commondir);
	free(repo);
}

void
repo_fanouts(const char *objdir, uint64_t have[4])
{
	static const char hexdigits[] = "0123456789abcdef";
	const char *hi, *lo;
	struct dirent *de;
	unsigned b;
	DIR *d = opendir(objdir);

	if (!d) {
		memset(have, 0xff, 4 * sizeof(*have));
		return;
	}
	memset(have, 0, 4 * sizeof(*have));
	while ((de = readdir(d))) {
		if (strlen(de->d_name) != 2 ||
		    !(hi = strchr(hexdigits, de->d_name[0])) ||
		    !(lo = strchr(hexdigits, de->d_name[1])))
			continue;
		b = (unsigned)(hi - hexdigits) * 16 +
		    (unsigned)(lo - hexdigits);
		have[b / 64] |= (uint64_t)1 << (b % 64);
	}
	closedir(d);
}
