/*
 * map: read-only file mappings that survive their file shrinking.
 *
 * A repository's files belong to someone else, and change under the
 * daemon: a pack or index truncated, or copied over in place, a loose
 * object cut short while it is read. Reading a mapped page that lies
 * wholly past the file's new end raises SIGBUS, which would kill the
 * daemon and every reader with it.
 *
 * So every mapping the store makes of a repository file is registered
 * here, and a SIGBUS handler answers a fault inside one by mapping a page
 * of zeros over the missing page: the read goes on, sees zeros, and the
 * mapping remembers the offset of the first byte it found missing. Code
 * that read through a mapping asks map_shrank() when it is done and turns
 * whatever it computed into -EFSCORRUPTED with one log line. Reading costs
 * nothing more than before: no check before a read, no system call, no
 * lock; the handler runs only when a file has shrunk. A SIGBUS anywhere
 * else is handed to whatever handled it before (by default, the process
 * dies of it as it would have).
 *
 * Mapped bytes may also change (a file rewritten in place, or zeros where
 * pages went missing), so parsers check every offset they read from a
 * mapping when they use it, not only when the file was opened.
 */
#ifndef ODBFS_MAP_H
#define ODBFS_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

/*
 * What a file was when it was mapped: a snapshot reuses an open pack only
 * while its files still are what they were.
 */
struct fileid {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
};

struct fileid fileid_of(const struct stat *st);
bool fileid_same(const struct fileid *a, const struct fileid *b);

struct map {
	const unsigned char *base;	/* NULL when not mapped */
	size_t size;
	int slot;			/* in the registry */
	struct fileid id;		/* the file as it was mapped */
};

/*
 * Map the open file fd, of which st is fstat()'s account (a regular file,
 * not empty), read-only and register the mapping. -EMFILE when the
 * registry is full, or another -errno. The mapping does not keep fd open.
 */
int map_open(struct map *m, int fd, const struct stat *st);

/*
 * Open path without blocking (a FIFO put in its place must not stop the
 * caller; a symlink is followed, as git follows it), check that it leads
 * to a regular file that is not empty, and map_open() it. -errno from
 * open(), or -EFSCORRUPTED, logged with path, for what is no such file.
 */
int map_path(struct map *m, const char *path);

/* Unregister and unmap; a map never opened, or closed, is left alone. */
void map_close(struct map *m);

/*
 * True when some read of m found its page gone (the file shrank since it
 * was mapped), with *off (if not NULL) the offset of the first such byte.
 * One atomic load.
 */
bool map_shrank(const struct map *m, uint64_t *off);

#endif
