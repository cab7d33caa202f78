/*
 * repo: repository discovery. Called once when the daemon or a tool opens a
 * repository, and again by the watcher when alternates change. Reads a few
 * small files (.git, commondir, config and the files it includes), and
 * the alternates files, streamed whatever their size; nothing here is on
 * a lookup path. The paths .git and commondir files hold are resolved one
 * entry at a time (repo_walk()), so that the daemon's side that decides
 * whose rights a repository is read with (fs/owner.c) sees every link and
 * directory on the way, through repo_locate(), before anything is read.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
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
	return repo_read_whole(path, max, out, NULL);
}

int
repo_read_whole(const char *path, size_t max, char **out, size_t *len)
{
	return repo_read_at(AT_FDCWD, path, 0, max, out, len);
}

/*
 * An fd open on the regular file at path (relative to dir), its status in
 * *st: -ENOTREG for anything else, found without blocking.
 */
static int
open_regular(int dir, const char *path, int flags, struct stat *st)
{
	int fd, ret;

	/* O_NONBLOCK: opening a FIFO must not wait for a writer. */
	fd = openat(dir, path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
	    flags);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return -ENOTREG;
	}
	return fd;
}

int
repo_stream(const char *path, FILE **out)
{
	struct stat st;
	int fd;

	*out = NULL;
	if ((fd = open_regular(AT_FDCWD, path, 0, &st)) < 0)
		return fd;
	if (!(*out = fdopen(fd, "r"))) {
		close(fd);
		return -ENOMEM;
	}
	return 0;
}

int
repo_getline(FILE *f, char *buf, size_t size, size_t *n)
{
	int c;

	*n = 0;
	while ((c = getc_unlocked(f)) != EOF && c != '\n') {
		if (*n + 1 < size)
			buf[*n] = (char)c;
		++*n;
	}
	buf[*n < size ? *n : size - 1] = '\0';
	if (ferror(f))
		return -EIO;
	return c != EOF || *n ? 1 : 0;
}

int
repo_read_at(int dir, const char *path, int flags, size_t max, char **out,
    size_t *len)
{
	struct stat st;
	char *buf;
	ssize_t n;
	size_t have = 0, cap;
	int fd, ret = 0;

	*out = NULL;
	if ((fd = open_regular(dir, path, flags, &st)) < 0)
		return fd;
	/*
	 * Whole or not at all: one already past max is refused unread (a
	 * sparse file claims gigabytes for nothing on disk).
	 */
	if (len && (uint64_t)st.st_size > max) {
		close(fd);
		return -EFBIG;
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

			if (cap >= max) {
				char more;

				/* Cut at max, or whole: -EFBIG if it was cut. */
				if (len && read(fd, &more, 1) > 0)
					ret = -EFBIG;
				break;
			}
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
	if (len)
		*len = have;
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
	    (ret = repo_read_file(path, PATH_MAX, &content)) == 0)
		chomp(content);
	if (ret < 0) {
		*why = unreadable(dir, file, ret);
	} else if (!strncmp(content, prefix, plen)) {
		ret = repo_walk(dir, content + plen, fn, ctx, out);
		if (ret < 0 && ret != -ENOENT && ret != -ENOTDIR)
			*why = because("%s/%s names %s: %s", dir, file,
			    content + plen, strerror(-ret));
	}
	free(content);
	free(path);
	return ret == -ENOENT || ret == -ENOTDIR ? 0 : ret;
}

/*
 * A variable of a config file as parse_config() hands it on: key is
 * "section.name" or "section.subsection.name", section and name in lower
 * case; value is NULL for a bare name, which git reads as true.
 */
typedef int config_fn(void *ctx, const char *key, const char *value);

/* A config file larger is refused: git reads any, we read it whole. */
#define CONFIG_MAX (16 << 20)

/*
 * A config file being parsed, as git's config.c reads it: "\r\n" reads as
 * "\n", and the end as one more "\n" (eof set).
 */
struct config_src {
	char *p, *end;
	unsigned line;		/* of the last character read */
	bool eof;
};

static int
config_char(struct config_src *s)
{
	int c;

	if (s->p == s->end) {
		s->eof = true;
		return '\n';
	}
	c = (unsigned char)*s->p++;
	if (c == '\r' && s->p < s->end && *s->p == '\n')
		c = (unsigned char)*s->p++;
	if (c == '\n')
		s->line++;
	return c;
}

static bool
config_keychar(int c)
{
	return isalnum(c) || c == '-';
}

/*
 * The name in a section header, after its '[', into out: "section" or
 * "section.subsection", the section in lower case (git's get_base_var()).
 * Returns -1 if the header is malformed.
 */
static int
config_section(struct config_src *s, char *out, size_t size)
{
	size_t n = 0;
	int c;

	for (;;) {
		c = config_char(s);
		if (c == '\n')
			goto bad;
		if (c == ']')
			break;
		if (isspace(c)) {
			/* [section "subsection"], with \ quoting a character */
			do
				c = config_char(s);
			while (c != '\n' && isspace(c));
			if (c != '"')
				goto bad;
			if (n + 1 < size)
				out[n++] = '.';
			while ((c = config_char(s)) != '"') {
				if (c == '\\')
					c = config_char(s);
				if (c == '\n')
					goto bad;
				if (n + 1 < size)
					out[n++] = (char)c;
			}
			/* git counts the line ended here as the next one. */
			if (config_char(s) != ']')
				return -1;
			break;
		}
		if (!config_keychar(c) && c != '.')
			return -1;
		if (n + 1 < size)
			out[n++] = (char)tolower(c);
	}
	out[n] = '\0';
	return n ? 0 : -1;
bad:
	/* A line cut short is bad on its own line, not the next one. */
	s->line -= c == '\n' && !s->eof;
	return -1;
}

/*
 * A value, after its '=', unquoted into place (git's parse_value()):
 * "..." pieces, the escapes \\ \" \n \t \b, a \ before the end of a line
 * continuing it, comments and the blanks around it dropped. NULL if
 * malformed.
 */
static char *
config_value(struct config_src *s)
{
	char *start = s->p, *out = s->p;
	bool quoted = false, comment = false;
	size_t blanks = 0;
	int c;

	for (;;) {
		c = config_char(s);
		if (c == '\n') {
			if (quoted) {
				s->line -= !s->eof;
				return NULL;
			}
			break;
		}
		if (comment)
			continue;
		if (isspace(c) && !quoted) {
			blanks += out > start;
			continue;
		}
		if (!quoted && (c == ';' || c == '#')) {
			comment = true;
			continue;
		}
		for (; blanks; blanks--)
			*out++ = ' ';
		if (c == '\\') {
			switch (c = config_char(s)) {
			case '\n':
				if (s->eof)
					goto end;
				continue;
			case 't':
				c = '\t';
				break;
			case 'b':
				c = '\b';
				break;
			case 'n':
				c = '\n';
				break;
			case '\\':
			case '"':
				break;
			default:
				return NULL;
			}
			*out++ = (char)c;
			continue;
		}
		if (c == '"') {
			quoted = !quoted;
			continue;
		}
		*out++ = (char)c;
	}
end:
	/* Behind what was read: at most on the '\n' that ended it. */
	*out = '\0';
	return start;
}

/*
 * Hand each variable of the config text (len bytes, changed in place) to
 * fn, until fn returns non-zero: git-config(1)'s syntax as git's
 * git_parse_source() reads it, but for includes. A line git would call bad
 * fails the same way, -EINVAL with *line its number.
 */
static int
parse_config(char *text, size_t len, config_fn *fn, void *ctx,
    unsigned *line)
{
	struct config_src s = { text, text + len, 1, false };
	char section[256] = "", key[512];
	bool comment = false;
	int ret = 0;

	/* A UTF-8 byte order mark, as git skips it. */
	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
		s.p += 3;
	while (ret == 0) {
		char *name, *value = NULL;
		int c = config_char(&s), n;

		if (c == '\n') {
			if (s.eof)
				break;
			comment = false;
			continue;
		}
		if (comment || isspace(c))
			continue;
		if (c == '#' || c == ';') {
			comment = true;
			continue;
		}
		if (c == '[') {
			if (config_section(&s, section, sizeof(section)) < 0)
				goto bad;
			continue;
		}
		if (!isalpha(c))
			goto bad;
		name = s.p - 1;
		*name = (char)tolower(c);
		while (s.p < s.end && config_keychar((unsigned char)*s.p)) {
			*s.p = (char)tolower((unsigned char)*s.p);
			s.p++;
		}
		n = (int)(s.p - name);
		do
			c = config_char(&s);
		while (c == ' ' || c == '\t');
		if (c != '\n' && (c != '=' || !(value = config_value(&s))))
			goto bad;
		if (section[0])
			snprintf(key, sizeof(key), "%s.%.*s", section, n, name);
		else
			snprintf(key, sizeof(key), "%.*s", n, name);
		/* A variable refused is bad on its own line, as in git. */
		if ((ret = fn(ctx, key, value)) < 0)
			*line = s.line - !s.eof;
	}
	return ret;
bad:
	*line = s.line;
	return -EINVAL;
}

/*
 * What config says of the repository's format, read as git's
 * check_repository_format_gently() reads it (setup.c).
 */
struct format {
	long long version;	/* core.repositoryformatversion; -1 if unsaid */
	bool sha256;		/* extensions.objectFormat */
	bool reftable;		/* extensions.refStorage */
	bool worktree_config;	/* extensions.worktreeConfig */
	char unknown[256];	/* extensions git does not know: "a, b" */
	unsigned nunknown;
	char v1_only[256];	/* extensions of format version 1 only */
	unsigned nv1_only;
	const char *path;	/* the config file, for messages */
	const char *why;	/* what was wrong, if format_var() failed */
};

static void
add_name(char *list, size_t size, unsigned *n, const char *name)
{
	size_t len = strlen(list);

	snprintf(list + len, size - len, "%s%s", (*n)++ ? ", " : "", name);
}

/* core.repositoryformatversion, as git_config_int() reads it. */
static int
format_version(struct format *f, const char *value)
{
	const char *bad = "invalid unit";
	long long v = 0, unit = 1;
	char *end = NULL;

	errno = 0;
	if (value && *value)
		v = strtoll(value, &end, 0);
	if (end && end != value && (!*end || !end[1]))
		switch (tolower((unsigned char)*end)) {
		case 'g':
			unit *= 1024;
			/* fall through */
		case 'm':
			unit *= 1024;
			/* fall through */
		case 'k':
			unit *= 1024;
			/* fall through */
		case '\0':
			bad = errno || v > INT_MAX / unit ||
			    v < INT_MIN / unit ? "out of range" : NULL;
		}
	if (bad) {
		f->why = because("bad numeric config value '%s' for "
		    "'core.repositoryformatversion' in file %s: %s",
		    value ? value : "", f->path, bad);
		return -EINVAL;
	}
	f->version = v * unit;
	return 0;
}

/* Extensions git knows in every format version, for historical reasons. */
static const char *const extensions_v0[] = {
	"noop", "preciousobjects", "partialclone", "worktreeconfig",
};

/*
 * Extensions of format version 1 (git 2.55's list), all harmless to a
 * reader of objects (reftable is read by reftable.c). compatObjectFormat
 * keeps a map to ids in a second format; the objects are in the first,
 * all that is served.
 * relativeWorktrees and submodulePathConfig say how paths are written,
 * which discovery reads as it finds them.
 */
static const char *const extensions_v1[] = {
	"noop-v1", "objectformat", "compatobjectformat", "refstorage",
	"relativeworktrees", "submodulepathconfig",
};

static bool
listed(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

/*
 * A boolean as git_config_bool() reads it: no value is true, "" false,
 * true/yes/on and false/no/off in any case, or a number (k, m or g after
 * it) that is not 0. -EINVAL, with git's reason, for anything else.
 */
static int
format_bool(struct format *f, const char *key, const char *value, bool *out)
{
	static const char *const yes[] = { "true", "yes", "on" };
	static const char *const no[] = { "false", "no", "off" };
	char *end;
	long long v;

	*out = true;
	if (!value)
		return 0;
	for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++) {
		if (!strcasecmp(value, yes[i]))
			return 0;
		if (!strcasecmp(value, no[i]) || !*value) {
			*out = false;
			return 0;
		}
	}
	errno = 0;
	v = strtoll(value, &end, 0);
	if (end == value || errno || (*end && (end[1] ||
	    !strchr("kKmMgG", *end)))) {
		f->why = because("bad boolean config value '%s' for '%s'",
		    value, key);
		return -EINVAL;
	}
	*out = v != 0;
	return 0;
}

static int
bad_value(struct format *f, const char *key, const char *value)
{
	f->why = value ? because("invalid value for '%s': '%s'", key, value) :
	    because("missing value for '%s'", key);
	return -EINVAL;
}

/*
 * One variable of config, for the format: git's handle_extension_v0()
 * and handle_extension(), refusing the values they refuse.
 */
static int
format_var(void *ctx, const char *key, const char *value)
{
	struct format *f = ctx;
	const char *ext = key + strlen("extensions.");

	if (!strcmp(key, "core.repositoryformatversion"))
		return format_version(f, value);
	if (strncmp(key, "extensions.", strlen("extensions.")))
		return 0;
	if (!strcmp(ext, "worktreeconfig"))
		return format_bool(f, key, value, &f->worktree_config);
	if (listed(extensions_v0, sizeof(extensions_v0) /
	    sizeof(*extensions_v0), ext))
		return strcmp(ext, "partialclone") || value ? 0 :
		    bad_value(f, key, value);
	if (!listed(extensions_v1, sizeof(extensions_v1) /
	    sizeof(*extensions_v1), ext)) {
		add_name(f->unknown, sizeof(f->unknown), &f->nunknown, ext);
		return 0;
	}
	add_name(f->v1_only, sizeof(f->v1_only), &f->nv1_only, ext);
	if (!strcmp(ext, "objectformat") || !strcmp(ext, "compatobjectformat")) {
		if (!value || (strcmp(value, "sha1") && strcmp(value, "sha256")))
			return bad_value(f, key, value);
		if (!strcmp(ext, "objectformat"))
			f->sha256 = !strcmp(value, "sha256");
	} else if (!strcmp(ext, "refstorage")) {
		if (!value || (strcmp(value, "files") &&
		    strcmp(value, "reftable")))
			return bad_value(f, key, value);
		f->reftable = !strcmp(value, "reftable");
	}
	return 0;
}

/*
 * include.path nested deeper is refused, as git's MAX_INCLUDE_DEPTH: the
 * repository's config is at depth 0, the file it includes at 1.
 */
#define CONFIG_MAX_INCLUDE_DEPTH 10

/* A config file whose includes are followed. */
struct config_file {
	const char *path;	/* as git names it: joined, not resolved */
	unsigned depth;
	const char *why;	/* what was wrong, if reading it failed */
	bool unexpanded;	/* an include.path's ~ named no home */
};

static int
config_follow(struct config_file *c);

/*
 * value with a leading "~" or "~user" replaced by that home, as git's
 * interpolate_path(): malloc'd into *out, or -ENOENT where there is no
 * such home ($HOME unset, no such user), which git refuses.
 */
static int
expand_home(const char *value, char **out)
{
	const char *end = strchrnul(value, '/'), *home;
	struct passwd pw, *found = NULL;
	char *user, buf[4096];

	*out = NULL;
	if (end == value + 1) {
		home = getenv("HOME");
	} else {
		if (!(user = strndup(value + 1, (size_t)(end - value - 1))))
			return -ENOMEM;
		if (getpwnam_r(user, &pw, buf, sizeof(buf), &found) || !found)
			found = NULL;
		free(user);
		home = found ? found->pw_dir : NULL;
	}
	if (!home)
		return -ENOENT;
	return asprintf(out, "%s%s", home, end) < 0 ? -ENOMEM : 0;
}

/*
 * One include.path of file from, as git's handle_path_include(): "~" and
 * "~user" are homes, a relative path is the including file's sibling, a
 * file that is not there is no error.
 */
static int
config_include(struct config_file *from, const char *value)
{
	struct config_file inc = { .depth = from->depth + 1 };
	const char *slash = strrchr(from->path, '/');
	char *path;
	int n, ret;

	if (!value) {
		from->why = because("missing value for 'include.path'");
		return -EINVAL;
	}
	if (value[0] == '~') {
		if ((ret = expand_home(value, &path)) == -ENOENT) {
			from->why = because("could not expand include path "
			    "'%s'", value);
			from->unexpanded = true;
			return -EINVAL;
		}
		n = ret < 0 ? -1 : 0;
	} else if (value[0] == '/' || !slash)
		n = asprintf(&path, "%s", value);
	else
		n = asprintf(&path, "%.*s%s", (int)(slash - from->path + 1),
		    from->path, value);
	if (n < 0)
		return -ENOMEM;
	inc.path = path;
	if (access(path, R_OK) < 0 && errno != ENOENT && errno != ENOTDIR) {
		from->why = because("unable to access '%s': %s", path,
		    strerror(errno));
		ret = -EACCES;
	} else if (access(path, F_OK) < 0) {
		ret = 0;
	} else if (inc.depth > CONFIG_MAX_INCLUDE_DEPTH) {
		from->why = because("exceeded maximum include depth (%d) while "
		    "including %s from %s: this might be due to circular "
		    "includes", CONFIG_MAX_INCLUDE_DEPTH, path, from->path);
		ret = -ELOOP;
	} else if ((ret = config_follow(&inc)) < 0) {
		from->why = inc.why;
	}
	free(path);
	return ret;
}

static int
include_var(void *ctx, const char *key, const char *value)
{
	return strcmp(key, "include.path") ? 0 : config_include(ctx, value);
}

/*
 * Read c's file and the files it includes, for what git refuses in them:
 * a bad line, an include it cannot read, includes nested too deep (a
 * loop). Nothing in them bears on the repository's format: git reads
 * that from the repository's config alone. -ENOENT if c is not there.
 */
static int
config_follow(struct config_file *c)
{
	char *text = NULL;
	unsigned line = 0;
	size_t len;
	int ret;

	if ((ret = repo_read_whole(c->path, CONFIG_MAX, &text, &len)) < 0) {
		if (ret == -EFBIG)
			c->why = because("%s: larger than %d MiB", c->path,
			    CONFIG_MAX >> 20);
		else
			c->why = because("unable to access '%s': %s", c->path,
			    ret != -ENOTREG ? strerror(-ret) :
			    is_dir(c->path) ? strerror(EISDIR) :
			    "not a regular file");
		return ret;
	}
	ret = parse_config(text, len, include_var, c, &line);
	free(text);
	/* git says both: "could not expand include path", then the line. */
	if (ret < 0 && c->unexpanded) {
		char what[PATH_MAX + 64];

		snprintf(what, sizeof(what), "%s", c->why);
		c->why = because("%s: bad config line %u in file %s", what,
		    line, c->path);
	} else if (ret < 0 && !c->why)
		c->why = because("bad config line %u in file %s", line,
		    c->path);
	return ret;
}

/*
 * With extensions.worktreeConfig, git also reads config.worktree in the
 * git directory (a linked worktree's own, or the main one's), and its
 * includes, and refuses a repository for what it refuses in them. None
 * is no error. Nothing in it bears on the format.
 */
static int
read_worktree_config(const struct repo *repo, const char **why)
{
	struct config_file c = { .path = NULL };
	char *path;
	int ret;

	if (!(path = join(repo->gitdir ? repo->gitdir : repo->commondir,
	    "config.worktree")))
		return -ENOMEM;
	c.path = path;
	if ((ret = config_follow(&c)) == -ENOENT)
		ret = 0;
	else if (ret < 0)
		*why = c.why;
	free(path);
	return ret;
}

/*
 * The object format, from config: refuse what git refuses (a format
 * version above 1, an extension it does not know in version 1, one of
 * version 1 in version 0).
 */
static int
read_format(struct repo *repo, const char **why)
{
	struct format f = { .version = -1 };
	struct config_file top = { .path = NULL };
	const char *bad = NULL;
	char *path, *text = NULL;
	unsigned line = 0;
	size_t len;
	int ret;

	repo->format = "sha1";
	repo->rawsz = OID_RAWSZ_SHA1;
	if (!(path = join(repo->commondir, "config")))
		return -ENOMEM;
	/* As git: no config is no extension; one it cannot read is fatal. */
	if ((ret = repo_read_whole(path, CONFIG_MAX, &text, &len)) < 0) {
		if (ret == -EFBIG)
			*why = because("%s: larger than %d MiB", path,
			    CONFIG_MAX >> 20);
		else if (ret != -ENOENT)
			*why = unreadable(repo->commondir, "config", ret);
		free(path);
		return ret == -ENOENT ? 0 : ret;
	}
	f.path = path;
	ret = parse_config(text, len, format_var, &f, &line);
	free(text);
	if (ret < 0) {
		*why = f.why ? f.why : because("bad config line %u in file %s",
		    line, path);
		goto out;
	}
	if (f.version > 1)
		bad = because("Expected git repo version <= 1, found %lld",
		    f.version);
	else if (f.version >= 1 && f.nunknown)
		bad = because("unknown repository extension%s found: %s",
		    f.nunknown > 1 ? "s" : "", f.unknown);
	else if (f.version == 0 && f.nv1_only)
		bad = because("repo version is 0, but v1-only extension%s "
		    "found: %s", f.nv1_only > 1 ? "s" : "", f.v1_only);
	if (bad) {
		*why = bad;
		ret = -EINVAL;
		goto out;
	}
	/* Then, as git goes on to read all its config, the includes. */
	top.path = path;
	if ((ret = config_follow(&top)) < 0) {
		*why = top.why;
		goto out;
	}
	/* No version (or -1): git ignores the extensions, and so do we. */
	if (f.version != -1 && f.worktree_config &&
	    (ret = read_worktree_config(repo, why)) < 0)
		goto out;
	if (f.version != -1) {
		repo->reftable = f.reftable;
		if (f.sha256) {
			repo->format = "sha256";
			repo->rawsz = OID_RAWSZ_SHA256;
		}
	}
out:
	free(path);
	return ret;
}

bool
repo_reftable_now(const struct repo *repo)
{
	struct repo now = { .gitdir = repo->gitdir,
	    .commondir = repo->commondir };
	const char *why;

	/* A config that no longer reads, or names another format: as was. */
	if (read_format(&now, &why) < 0 || now.rawsz != repo->rawsz)
		return repo->reftable;
	return now.reftable;
}

static int
add_objdir(struct repo *repo, const char *dir, unsigned depth);

/*
 * An alternates file as git reads it: a C string, so that a NUL ends it
 * as the end of the file does. Read a character at a time through stdio,
 * the file is never held whole, and no line is cut where a read ends.
 */
struct altfile {
	FILE *f;
	bool end;		/* at EOF, a NUL or an error */
};

static int
alt_getc(struct altfile *a)
{
	int c;

	if (a->end)
		return EOF;
	if ((c = getc_unlocked(a->f)) == EOF || c == '\0') {
		a->end = true;
		return EOF;
	}
	return c;
}

/*
 * A C-style quoted path, after its opening '"', as git's unquote_c_style()
 * reads it: \a \b \f \n \r \t \v \\ \" and three octal digits; a raw
 * newline is part of the path. Its first size - 1 bytes into buf, *n its
 * whole length. -EINVAL when it is not well quoted (git then takes the
 * line as it is), or holds a NUL, which no path can.
 */
static int
alt_unquote(struct altfile *a, char *buf, size_t size, size_t *n)
{
	int ch, d1, d2;

	for (*n = 0;; ++*n) {
		if ((ch = alt_getc(a)) == EOF)
			return -EINVAL;
		if (ch == '"')
			break;
		if (ch == '\\')
			switch ((ch = alt_getc(a))) {
			case 'a': ch = '\a'; break;
			case 'b': ch = '\b'; break;
			case 'f': ch = '\f'; break;
			case 'n': ch = '\n'; break;
			case 'r': ch = '\r'; break;
			case 't': ch = '\t'; break;
			case 'v': ch = '\v'; break;
			case '\\':
			case '"':
				break;
			case '0': case '1': case '2': case '3':
				d1 = alt_getc(a);
				if (d1 < '0' || d1 > '7')
					return -EINVAL;
				d2 = alt_getc(a);
				if (d2 < '0' || d2 > '7')
					return -EINVAL;
				ch = (ch - '0') << 6 | (d1 - '0') << 3 |
				    (d2 - '0');
				if (!ch)	/* a NUL ends no path well */
					return -EINVAL;
				break;
			default:
				return -EINVAL;
			}
		if (*n + 1 < size)
			buf[*n] = (char)ch;
	}
	buf[*n < size ? *n : size - 1] = '\0';
	return 0;
}

/*
 * The next path of an alternates file into buf, as git's
 * parse_alt_odb_entry() takes it: a line, or a '"' quoted path (which
 * may span lines) and the one character after it; '#' lines skipped.
 * 1 and its length in *n (which is size or more when it did not fit:
 * no path is that long), 0 at the end, or -errno.
 */
static int
alt_next(struct altfile *a, char *buf, size_t size, size_t *n)
{
	off_t start;
	int c;

	for (;;) {
		*n = 0;
		if ((c = alt_getc(a)) == EOF)
			return ferror(a->f) ? -EIO : 0;
		if (c == '#') {
			while ((c = alt_getc(a)) != EOF && c != '\n')
				;
			continue;
		}
		if (c == '"') {
			if ((start = ftello(a->f)) < 0)
				return -errno;
			if (alt_unquote(a, buf, size, n) == 0) {
				alt_getc(a);
				return 1;
			}
			/* Not well quoted: the line as it is, quote and all. */
			if (fseeko(a->f, start, SEEK_SET) < 0)
				return -errno;
			a->end = false;
			*n = 0;
		}
		for (; c != EOF && c != '\n'; c = alt_getc(a), ++*n)
			if (*n + 1 < size)
				buf[*n] = (char)c;
		buf[*n < size ? *n : size - 1] = '\0';
		if (ferror(a->f))
			return -EIO;
		/* As git: the line whole, a '\r' or blanks at its end kept. */
		if (*n)
			return 1;
	}
}

/*
 * The longest alternates line read: git has no limit, but a path padded
 * with "/." (which git's strbuf_realpath() walk reads) may pass PATH_MAX
 * before drop_dots() brings it back under. Past this, refused and logged.
 */
#define REPO_ALT_LINE_MAX (64 * 1024)

/*
 * Drop the "." components and repeated slashes of the absolute path p, in
 * place: a lookup resolves them anyway, so a path padded with them past
 * PATH_MAX names what git, walking it a component at a time, reads. ".."
 * is left to realpath(): across a symlink it is not lexical, for git
 * either.
 */
static void
drop_dots(char *p)
{
	char *r = p, *w = p;

	while (*r) {
		if (r[0] == '/' && r[1] == '/') {
			r++;
			continue;
		}
		if (r[0] == '/' && r[1] == '.' && (r[2] == '/' || !r[2])) {
			r += 2;
			continue;
		}
		*w++ = *r++;
	}
	if (w == p && *p)
		*w++ = '/';
	*w = '\0';
}

/*
 * Follow dir/info/alternates: the file read as it comes, however long,
 * each path followed as git's link_alt_odb_entries() follows it. The
 * repository's own file is at depth 0; one at a depth past
 * REPO_MAX_ALTERNATE_DEPTH is not read, and logged once, as git does.
 */
static int
add_alternates(struct repo *repo, const char *dir, unsigned depth)
{
	struct altfile a = { NULL, false };
	char *path, *line = NULL, *alt;
	size_t n;
	int ret;

	if (!(path = join(dir, "info/alternates")))
		return -ENOMEM;
	/* As git: alternates it cannot read are warned about, then skipped. */
	if ((ret = repo_stream(path, &a.f)) < 0) {
		if (ret != -ENOENT && ret != -ENOMEM)
			log_once(LOGL_WARN, "%s: %s: ignored", path,
			    ret == -ENOTREG ? "not a regular file" :
			    strerror(-ret));
		free(path);
		return ret == -ENOMEM ? ret : 0;
	}
	if (depth > REPO_MAX_ALTERNATE_DEPTH) {
		log_once(LOGL_WARN, "%s: ignoring alternate object stores, "
		    "nesting too deep (more than %d)", dir,
		    REPO_MAX_ALTERNATE_DEPTH);
		goto out;
	}
	if (!(line = malloc(REPO_ALT_LINE_MAX))) {
		ret = -ENOMEM;
		goto out;
	}
	while ((ret = alt_next(&a, line, REPO_ALT_LINE_MAX, &n)) > 0) {
		alt = NULL;
		if (n < REPO_ALT_LINE_MAX) {
			if (!(alt = join(dir, line))) {
				ret = -ENOMEM;
				break;
			}
			drop_dots(alt);
		}
		if (!alt || strlen(alt) >= PATH_MAX) {
			log_once(LOGL_WARN, "%s: a path of %zu bytes, before offset "
			    "%lld: %s", path, n, (long long)ftello(a.f) -
			    (long long)n, strerror(ENAMETOOLONG));
			free(alt);
			continue;
		}
		ret = add_objdir(repo, alt, depth + 1);
		free(alt);
		if (ret < 0)
			break;
	}
	if (ret < 0 && ret != -ENOMEM) {
		log_once(LOGL_WARN, "%s: %s at offset %lld: the rest ignored",
		    path, strerror(-ret), (long long)ftello(a.f));
		ret = 0;
	}
out:
	free(line);
	fclose(a.f);
	free(path);
	return ret;
}

static int
add_objdir(struct repo *repo, const char *dir, unsigned depth)
{
	char *real = realpath(dir, NULL), **grown;
	struct stat st;
	DIR *d = NULL;
	int err = 0;

	/* Why it cannot be used, as the system says: EACCES is not ENOTDIR. */
	if (!real || stat(real, &st) < 0)
		err = errno;
	else if (!S_ISDIR(st.st_mode))
		err = ENOTDIR;
	else if (depth && !(d = opendir(real)))
		err = errno;
	if (d)
		closedir(d);
	if (err) {
		if (depth)
			log_once(LOGL_WARN, "alternate %s: %s: ignored", dir,
			    strerror(err));
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
		log_once(LOGL_WARN, "too many alternates: %s ignored", real);
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
	ret = repo_read_at(dir, path, O_NOFOLLOW, 256, &text, NULL);
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
	char *head = join(dir, "HEAD"), *common = join(dir, "commondir");
	char *objects = join(dir, "objects");
	const char *why = NULL;
	int ret;

	if (!head || !common || !objects)
		why = strerror(ENOMEM);
	else if (!is_dir(objects) && !exists(common))
		why = errno == EACCES ? because("not a git repository: %s: %s",
		    objects, strerror(errno)) : "not a git repository";
	else if ((ret = repo_head_at(AT_FDCWD, head)) == -ENOTREG)
		why = because("not a git repository: %s is not a regular file",
		    head);
	else if (ret < 0 && ret != -ENOENT && ret != -EINVAL)
		why = because("not a git repository: %s: %s", head,
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
	if (!is_dir(real)) {
		free(real);
		*why = "not a directory";
		return -ENOTDIR;
	}
	/* A .git that names nothing (or nothing there) is no .git. */
	ret = repo_walk(real, ".git", fn, ctx, &dotgit);
	if (ret < 0 && ret != -ENOENT && ret != -ENOTDIR) {
		*why = unreadable(real, ".git", ret);
		goto fail;
	}
	if (dotgit && is_dir(dotgit)) {
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
	if ((ret = read_format(repo, why)) < 0)
		goto fail;
	if (!(objects = join(repo->commondir, "objects"))) {
		*why = strerror(ENOMEM);
		ret = -ENOMEM;
		goto fail;
	}
	if ((ret = add_objdir(repo, objects, 0)) < 0) {
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
