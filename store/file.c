/*
 * file: reading the small files git keeps beside its objects (config,
 * HEAD, .git and commondir files, packed-refs, alternates, shallow,
 * tables.list) whole or a line at a time, without blocking on what is
 * not a regular file; and the one-line reason a repository cannot be
 * opened, naming the path (file_why()). Nothing here is on a lookup path.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file.h"

int
file_read(const char *path, size_t max, char **out)
{
	return file_read_whole(path, max, out, NULL);
}

int
file_read_whole(const char *path, size_t max, char **out, size_t *len)
{
	return file_read_at(AT_FDCWD, path, 0, max, out, len);
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
file_stream(const char *path, FILE **out)
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
file_getline(FILE *f, char *buf, size_t size, size_t *n)
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
file_read_at(int dir, const char *path, int flags, size_t max, char **out,
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

bool
file_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* One reason per thread: see file_why(). */
static _Thread_local char why_buf[PATH_MAX + 128];

const char *
file_why(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why_buf, sizeof(why_buf), fmt, ap);
	va_end(ap);
	return why_buf;
}

const char *
file_unreadable(const char *dir, const char *file, int ret)
{
	return file_why("%s/%s: %s", dir, file, ret == -ENOTREG ?
	    "not a regular file" : strerror(-ret));
}

char *
file_join(const char *a, const char *b)
{
	char *s;

	if (b[0] == '/')
		return strdup(b);
	if (asprintf(&s, "%s/%s", a, b) < 0)
		return NULL;
	return s;
}
