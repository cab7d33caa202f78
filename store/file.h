/*
 * file: reading git's small files (config, HEAD, packed-refs, alternates
 * and the like) without blocking on what is not a regular file, and the
 * reason a repository cannot be opened, naming a path.
 */
#ifndef ODBFS_FILE_H
#define ODBFS_FILE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * A path where git keeps a file holds something else: a FIFO, a device, a
 * socket or a directory. ENXIO is what open(2) itself says for a socket.
 */
#define ENOTREG ENXIO

/*
 * Read a small text file whole (at most max bytes, NUL-terminated). *out is
 * malloc'd. Symlinks are followed: git's own files may be links. Anything
 * but a regular file is -ENOTREG, found without blocking: a FIFO put where
 * git keeps a file must not hang the mount or the watcher.
 */
int file_read(const char *path, size_t max, char **out);

/*
 * The same, for a file to read whole or not at all: -EFBIG if it holds
 * more than max bytes. *len is its length, NULs and all.
 */
int file_read_whole(const char *path, size_t max, char **out, size_t *len);

/*
 * A file read as it comes, for one that may be large and is parsed a line
 * at a time: the same checks, *out to close with fclose().
 */
int file_stream(const char *path, FILE **out);

/*
 * The next line of f, without its '\n', into buf: as much as fits, NUL
 * terminated; *n is its whole length, size or more when it was cut.
 * 1 for a line, 0 at the end of f, -EIO.
 */
int file_getline(FILE *f, char *buf, size_t size, size_t *n);

/*
 * Either of the above (len NULL: file_read()) for path relative to
 * the directory fd dir (or AT_FDCWD), with flags added to open(2)'s:
 * O_NOFOLLOW to refuse a symlink (-ELOOP).
 */
int file_read_at(int dir, const char *path, int flags, size_t max,
    char **out, size_t *len);

/* Is path (followed) a directory? */
bool file_is_dir(const char *path);

/*
 * A reason formatted as printf(3), in a buffer of this thread's: valid
 * until its next file_why(), as a *why of repo_open() is (one open per
 * thread at once).
 */
const char *file_why(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* Why dir/file could not be read (ret from file_read()). */
const char *file_unreadable(const char *dir, const char *file, int ret);

/* malloc'd "a/b", or b alone when it is absolute; NULL: out of memory. */
char *file_join(const char *a, const char *b);

#endif
