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
	int fd;

	*out = NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	/* Sized by the file, not by max: max only caps it. */
	cap = fstat(fd, &st) == 0 && st.st_size > 0 &&
	    (uint64_t)st.st_size < max ? (size_t)st.st_size : max < 4096 ?
	    max : 4096;
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
				free(buf);
				close(fd);
				return -ENOMEM;
			}
			buf = grown;
		}
		if ((n = read(fd, buf + have, cap - have)) <= 0)
			break;
		have += (size_t)n;
	}
	close(fd);
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

static bool
is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
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

/* A resolved copy of dir/rel's file contents (one path), or NULL. */
static char *
path_from_file(const char *dir, const char *file, const char *prefix)
{
	char *content = NULL, *path, *target, *real = NULL;
	size_t plen = strlen(prefix);

	if (!(path = join(dir, file)))
		return NULL;
	if (repo_read_file(path, PATH_MAX, &content) == 0) {
		chomp(content);
		if (!strncmp(content, prefix, plen) &&
		    (target = join(dir, content + plen))) {
			real = realpath(target, NULL);
			free(target);
		}
	}
	free(content);
	free(path);
	return real;
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

	repo->format = "sha1";
	repo->rawsz = OID_RAWSZ_SHA1;
	if (!(path = join(repo->commondir, "config")))
		return -ENOMEM;
	if (repo_read_file(path, 1 << 20, &text) < 0) {
		free(path);
		return 0;
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
	if (repo_read_file(path, 1 << 20, &text) < 0) {
		free(path);
		return 0;
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

/* Does dir look like a git directory (HEAD and objects, or commondir)? */
static bool
is_gitdir(const char *dir)
{
	char *head = join(dir, "HEAD"), *common = join(dir, "commondir");
	char *objects = join(dir, "objects");
	bool yes = head && common && objects && is_file(head) &&
	    (is_dir(objects) || is_file(common));

	free(head);
	free(common);
	free(objects);
	return yes;
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
	if (is_dir(dotgit))
		repo->gitdir = realpath(dotgit, NULL);
	else if (is_file(dotgit) &&
	    !(repo->gitdir = path_from_file(real, ".git", "gitdir: "))) {
		*why = "its .git file does not name a directory";
		ret = -ENOENT;
		goto fail;
	}
	if (!repo->gitdir) {
		repo->gitdir = real;
		real = NULL;
	}
	if (!is_gitdir(repo->gitdir)) {
		*why = "not a git repository";
		ret = -ENOENT;
		goto fail;
	}
	repo->commondir = path_from_file(repo->gitdir, "commondir", "");
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
