/*
 * repo: repository discovery. Called once when the daemon or a tool opens a
 * repository, and again by the watcher when alternates change. Reads a few
 * small files (.git, commondir, config, alternates); nothing here is on a
 * lookup path.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "oid.h"
#include "repo.h"

int
repo_read_file(const char *path, size_t max, char **out)
{
	struct stat st;
	char *buf;
	ssize_t n;
	size_t have = 0, cap;
	int fd, ret = 0;

	*out = NULL;
	/* O_NONBLOCK: opening a FIFO must not wait for a writer. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -ENOTREG;
	}
	/* Sized by the file, not by max: max only caps it. */
	cap = st.st_size > 0 && (uint64_t)st.st_size < max ?
	    (size_t)st.st_size : max < 4096 ? max : 4096;
	if (!(buf = malloc(cap + 1))) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		if (have == cap) {
			char *grown;

			if (cap >= max)
				break;
			cap = cap * 2 < max ? cap * 2 : max;
			if (!(grown = realloc(buf, cap + 1))) {
				ret = -ENOMEM;
				break;
			}
			buf = grown;
		}
		if ((n = read(fd, buf + have, cap - have)) < 0 &&
		    errno == EINTR)
			continue;
		if (n < 0)
			ret = -errno;
		if (n <= 0)
			break;
		have += (size_t)n;
	}
	close(fd);
	if (ret < 0) {
		free(buf);
		return ret;
	}
	buf[have] = '\0';
	*out = buf;
	return 0;
}

static bool
is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Does something (a file, a FIFO, a directory...) live at path? */
static bool
exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* repo_open()'s reason when it names a path: one open per thread at once. */
static _Thread_local char why_buf[PATH_MAX + 128];

static const char *
because(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why_buf, sizeof(why_buf), fmt, ap);
	va_end(ap);
	return why_buf;
}

/* Why dir/file could not be read (ret from repo_read_file()). */
static const char *
unreadable(const char *dir, const char *file, int ret)
{
	return because("%s/%s: %s", dir, file, ret == -ENOTREG ?
	    "not a regular file" : strerror(-ret));
}

/* malloc'd "a/b", or b alone when it is absolute. */
static char *
join(const char *a, const char *b)
{
	char *s;

	if (b[0] == '/')
		return strdup(b);
	if (asprintf(&s, "%s/%s", a, b) < 0)
		return NULL;
	return s;
}

/* Strip trailing white space in place. */
static void
chomp(char *s)
{
	size_t n = strlen(s);

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
}

/*
 * The real path that dir/file names after prefix, in *out (malloc'd); NULL
 * when the file is absent or names nothing that exists. A file that is
 * there but cannot be read is an error (-ENOTREG: not a regular file).
 */
static int
path_from_file(const char *dir, const char *file, const char *prefix,
    char **out)
{
	char *content = NULL, *path, *target;
	size_t plen = strlen(prefix);
	int ret;

	*out = NULL;
	if (!(path = join(dir, file)))
		return -ENOMEM;
	if ((ret = repo_read_file(path, PATH_MAX, &content)) == 0)
		chomp(content);
	if (ret == 0 && !strncmp(content, prefix, plen)) {
		if ((target = join(dir, content + plen)))
			*out = realpath(target, NULL);
		else
			ret = -ENOMEM;
		free(target);
	}
	free(content);
	free(path);
	return ret == -ENOENT ? 0 : ret;
}

/*
 * The object format from config's extensions.objectFormat. A minimal reader:
 * section headers and "key = value" lines, case-insensitive names.
 */
static int
read_format(struct repo *repo, const char **why)
{
	char *path, *text = NULL, *line, *save = NULL;
	bool in_ext = false;
	int ret;

	repo->format = "sha1";
	repo->rawsz = OID_RAWSZ_SHA1;
	if (!(path = join(repo->commondir, "config")))
		return -ENOMEM;
	/* As git: no config is no extension; one it cannot read is fatal. */
	if ((ret = repo_read_file(path, 1 << 20, &text)) < 0) {
		if (ret != -ENOENT)
			*why = unreadable(repo->commondir, "config", ret);
		free(path);
		return ret == -ENOENT ? 0 : ret;
	}
	free(path);
	for (line = strtok_r(text, "\n", &save); line;
	    line = strtok_r(NULL, "\n", &save)) {
		char *key = line, *val, *hash;

		while (isspace((unsigned char)*key))
			key++;
		if (*key == '[') {
			in_ext = !strncasecmp(key, "[extensions]", 12);
			continue;
		}
		if (!in_ext || !(val = strchr(key, '=')))
			continue;
		*val++ = '\0';
		if ((hash = strpbrk(val, "#;")))
			*hash = '\0';
		chomp(key);
		while (isspace((unsigned char)*val))
			val++;
		chomp(val);
		if (strcasecmp(key, "objectformat"))
			continue;
		if (!strcasecmp(val, "sha256")) {
			repo->format = "sha256";
			repo->rawsz = OID_RAWSZ_SHA256;
		} else if (strcasecmp(val, "sha1")) {
			free(text);
			*why = "unknown extensions.objectFormat";
			return -EINVAL;
		}
	}
	free(text);
	return 0;
}

static int
add_objdir(struct repo *repo, const char *dir, unsigned depth);

/* Follow dir/info/alternates: one path a line, '#' comments. */
static int
add_alternates(struct repo *repo, const char *dir, unsigned depth)
{
	char *path, *text = NULL, *line, *save = NULL;
	int ret = 0;

	if (!(path = join(dir, "info/alternates")))
		return -ENOMEM;
	/* As git: alternates it cannot read are warned about, then skipped. */
	if ((ret = repo_read_file(path, 1 << 20, &text)) < 0) {
		if (ret != -ENOENT && ret != -ENOMEM)
			log_msg(LOGL_WARN, "%s: %s: ignored", path,
			    ret == -ENOTREG ? "not a regular file" :
			    strerror(-ret));
		free(path);
		return ret == -ENOMEM ? ret : 0;
	}
	for (line = strtok_r(text, "\n", &save); line && ret == 0;
	    line = strtok_r(NULL, "\n", &save)) {
		char *alt;

		chomp(line);
		if (!*line || *line == '#')
			continue;
		if (depth >= REPO_MAX_ALTERNATE_DEPTH) {
			log_msg(LOGL_WARN, "%s: alternates nested deeper than "
			    "%d: %s ignored", path, REPO_MAX_ALTERNATE_DEPTH,
			    line);
			continue;
		}
		if (!(alt = join(dir, line))) {
			ret = -ENOMEM;
			break;
		}
		ret = add_objdir(repo, alt, depth + 1);
		free(alt);
	}
	free(text);
	free(path);
	return ret;
}

static int
add_objdir(struct repo *repo, const char *dir, unsigned depth)
{
	char *real = realpath(dir, NULL), **grown;

	if (!real || !is_dir(real)) {
		if (depth)
			log_msg(LOGL_WARN, "alternate %s is not a directory: "
			    "ignored", dir);
		free(real);
		return depth ? 0 : -ENOENT;
	}
	for (size_t i = 0; i < repo->nobjdirs; i++)
		if (!strcmp(repo->objdirs[i], real)) {
			free(real);
			return 0;
		}
	/* Directory numbers are stored in a byte; see struct looseset. */
	if (repo->nobjdirs >= 255) {
		log_msg(LOGL_WARN, "too many alternates: %s ignored", real);
		free(real);
		return 0;
	}
	grown = realloc(repo->objdirs, (repo->nobjdirs + 1) * sizeof(*grown));
	if (!grown) {
		free(real);
		return -ENOMEM;
	}
	repo->objdirs = grown;
	repo->objdirs[repo->nobjdirs++] = real;
	return add_alternates(repo, real, depth);
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
	struct stat st;
	ssize_t n;

	if (lstat(path, &st) < 0)
		return -errno;
	if (!S_ISLNK(st.st_mode))
		return -EINVAL;
	if ((n = readlink(path, buf, size - 1)) < 0)
		return -errno;
	buf[n] = '\0';
	return (size_t)n < size - 1 && !strncmp(buf, "refs/", 5) ? 0 : -ENOENT;
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
	char *head = join(dir, "HEAD"), *common = join(dir, "commondir");
	char *objects = join(dir, "objects"), *text = NULL, link[PATH_MAX];
	const char *why = NULL;
	int ret;

	if (!head || !common || !objects)
		why = strerror(ENOMEM);
	else if (!is_dir(objects) && !exists(common))
		why = "not a git repository";
	else if ((ret = repo_head_link(head, link, sizeof(link))) != -EINVAL)
		why = ret == 0 ? NULL : "not a git repository";
	else if ((ret = repo_read_file(head, 256, &text)) == -ENOTREG)
		why = because("not a git repository: %s is not a regular file",
		    head);
	else if (ret < 0 || !head_ok(text))
		why = "not a git repository";
	free(text);
	free(head);
	free(common);
	free(objects);
	return why;
}

int
repo_open(const char *path, struct repo **out, const char **why)
{
	struct repo *repo;
	char *real, *dotgit = NULL, *objects = NULL;
	int ret;

	*out = NULL;
	if (!(real = realpath(path, NULL))) {
		*why = strerror(errno);
		return -errno;
	}
	if (!is_dir(real)) {
		free(real);
		*why = "not a directory";
		return -ENOTDIR;
	}
	if (!(repo = calloc(1, sizeof(*repo)))) {
		free(real);
		return -ENOMEM;
	}
	if (!(dotgit = join(real, ".git")))
		goto nomem;
	if (is_dir(dotgit)) {
		repo->gitdir = realpath(dotgit, NULL);
	} else if (exists(dotgit)) {
		/* A .git file: "gitdir: PATH" (submodules, linked worktrees). */
		if ((ret = path_from_file(real, ".git", "gitdir: ",
		    &repo->gitdir)) < 0) {
			*why = unreadable(real, ".git", ret);
			goto fail;
		}
		if (!repo->gitdir) {
			*why = "its .git file does not name a directory";
			ret = -ENOENT;
			goto fail;
		}
	}
	if (!repo->gitdir) {
		repo->gitdir = real;
		real = NULL;
	}
	if ((*why = not_gitdir(repo->gitdir))) {
		ret = -ENOENT;
		goto fail;
	}
	/* A linked worktree's: where refs, config and objects are. */
	if ((ret = path_from_file(repo->gitdir, "commondir", "",
	    &repo->commondir)) < 0) {
		*why = unreadable(repo->gitdir, "commondir", ret);
		goto fail;
	}
	if (!repo->commondir && !(repo->commondir = strdup(repo->gitdir)))
		goto nomem;
	if ((ret = read_format(repo, why)) < 0)
		goto fail;
	if (!(objects = join(repo->commondir, "objects")))
		goto nomem;
	if ((ret = add_objdir(repo, objects, 0)) < 0) {
		*why = ret == -ENOENT ? "it has no objects directory" :
		    strerror(-ret);
		goto fail;
	}
	free(objects);
	free(dotgit);
	free(real);
	*out = repo;
	return 0;
nomem:
	*why = strerror(ENOMEM);
	ret = -ENOMEM;
fail:
	free(objects);
	free(dotgit);
	free(real);
	repo_free(repo);
	return ret;
}

int
repo_reload_objdirs(struct repo *repo)
{
	struct repo fresh = { .commondir = repo->commondir };
	char *objects;
	int ret;

	if (!(objects = join(repo->commondir, "objects")))
		return -ENOMEM;
	ret = add_objdir(&fresh, objects, 0);
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
