/*
 * alternates: a repository's object directories, its own objects/ and
 * those its objects/info/alternates files name, recursively, as git's
 * link_alt_odb_entries() follows them: each file streamed a path at a
 * time (alt_next()), whatever its size; a directory that cannot be used,
 * a file nested too deep, a path too long are logged once and skipped,
 * as git warns and goes on. Read when a repository is opened and when
 * its alternates change; never on a lookup path.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "alternates.h"
#include "file.h"
#include "log.h"

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

	if (!(path = file_join(dir, "info/alternates")))
		return -ENOMEM;
	/* As git: alternates it cannot read are warned about, then skipped. */
	if ((ret = file_stream(path, &a.f)) < 0) {
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
			if (!(alt = file_join(dir, line))) {
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
		ret = alternates_add(repo, alt, depth + 1);
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

int
alternates_add(struct repo *repo, const char *dir, unsigned depth)
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

