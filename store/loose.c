/*
 * loose: scanning loose objects into a sorted set, and reading one.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "object.h"
#include "odbstore/repo.h"
#include "loose.h"
#include "oid.h"
#include "zio.h"

struct builder {
	size_t nr, alloc, rawsz;
	unsigned char *recs;	/* rawsz id bytes then one dir byte each */
};

static int
add(struct builder *b, const unsigned char *raw, unsigned dir)
{
	size_t rec = b->rawsz + 1;

	if (b->nr == b->alloc) {
		size_t n = b->alloc ? 2 * b->alloc : 1024;
		unsigned char *r = realloc(b->recs, n * rec);

		if (!r)
			return -ENOMEM;
		b->recs = r;
		b->alloc = n;
	}
	memcpy(b->recs + b->nr * rec, raw, b->rawsz);
	b->recs[b->nr * rec + b->rawsz] = (unsigned char)dir;
	b->nr++;
	return 0;
}

static int
cmp_rec(const void *a, const void *b, void *recsz)
{
	return memcmp(a, b, *(size_t *)recsz);
}

/*
 * A loose file git would read: a regular file, or a symlink to one, as
 * git follows it. Anything else of an id's name (a FIFO, a directory, a
 * dangling symlink) is left out, said once for the path (objects/xx/name).
 */
static bool
usable(int dirfd, const char *name, unsigned char d_type, const char *objdir,
    const char *path)
{
	struct stat st;

	if (d_type == DT_REG)
		return true;
	if (d_type == DT_LNK || d_type == DT_UNKNOWN) {
		if (fstatat(dirfd, name, &st, 0) < 0) {
			/* Gone since readdir (gc), unless a symlink is left. */
			if (errno != ENOENT || fstatat(dirfd, name, &st,
			    AT_SYMLINK_NOFOLLOW) == 0)
				log_once(LOGL_ERROR, "%s/%s: loose object: %s: "
				    "left out", objdir, path, strerror(errno));
			return false;
		}
		if (S_ISREG(st.st_mode))
			return true;
	}
	log_once(LOGL_ERROR, "%s/%s: loose object is not a regular file: left "
	    "out", objdir, path);
	return false;
}

/* Scan one objects/xx directory. */
static int
scan_fanout(struct builder *b, int objfd, const char *objdir, unsigned byte,
    unsigned dir)
{
	char name[3], hex[OID_HEXSZ_MAX + 1], path[OID_HEXSZ_MAX + 2];
	unsigned char raw[OID_RAWSZ_MAX];
	size_t want = 2 * b->rawsz - 2;
	struct dirent *de;
	DIR *d;
	int fd, ret = 0;

	snprintf(name, sizeof(name), "%02x", (unsigned char)byte);
	fd = openat(objfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR || errno == ELOOP ?
		    0 : -errno;
	if (!(d = fdopendir(fd))) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		if (strlen(de->d_name) != want)
			continue;
		memcpy(hex, name, 2);
		memcpy(hex + 2, de->d_name, want + 1);
		if (!oid_parse_hex(raw, hex, b->rawsz))
			continue;
		/* xx/ and the rest of the hex, want bytes: it fits. */
		snprintf(path, sizeof(path), "%s/%.*s", name, (int)want,
		    de->d_name);
		if (!usable(fd, de->d_name, de->d_type, objdir, path))
			continue;
		if ((ret = add(b, raw, dir)) < 0)
			break;
	}
	closedir(d);
	return ret;
}

int
looseset_scan(struct looseset *set, char *const *dirs, size_t ndirs,
    size_t rawsz)
{
	struct builder b = { .rawsz = rawsz };
	size_t rec = rawsz + 1, n = 0;
	uint64_t have[4];
	int ret = 0;

	memset(set, 0, sizeof(*set));
	set->rawsz = rawsz;
	for (size_t d = 0; d < ndirs && ret == 0; d++) {
		int objfd = open(dirs[d], O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (objfd < 0)
			continue;
		repo_fanouts(dirs[d], have);
		for (unsigned byte = 0; byte < 256 && ret == 0; byte++)
			if (repo_fanout_has(have, byte))
				ret = scan_fanout(&b, objfd, dirs[d], byte,
				    (unsigned)d);
		close(objfd);
	}
	if (ret < 0)
		goto out;
	/* Sorting on the directory byte too: the first directory wins. */
	if (b.nr)	/* qsort must not see NULL, even for no elements */
		qsort_r(b.recs, b.nr, rec, cmp_rec, &rec);
	set->ids = malloc(b.nr * rawsz + 1);
	set->dirs = malloc(b.nr + 1);
	if (!set->ids || !set->dirs) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < b.nr; i++) {
		const unsigned char *r = b.recs + i * rec;

		if (n && !memcmp(set->ids + (n - 1) * rawsz, r, rawsz))
			continue;
		memcpy(set->ids + n * rawsz, r, rawsz);
		set->dirs[n] = r[rawsz];
		set->fanout[r[0]]++;
		n++;
	}
	set->nr = n;
	for (unsigned i = 1; i < 256; i++)
		set->fanout[i] += set->fanout[i - 1];
out:
	free(b.recs);
	if (ret < 0)
		looseset_free(set);
	return ret;
}

static int
cmp_touch(const void *a, const void *b, void *rawsz)
{
	const struct loose_touch *x = a, *y = b;
	int c = memcmp(x->id, y->id, *(size_t *)rawsz);

	return c ? c : (x->dir > y->dir) - (x->dir < y->dir);
}

/* Is there a loose file git would read for raw in dir? See usable(). */
static bool
loose_exists(const char *dir, const unsigned char *raw, size_t rawsz)
{
	char hex[OID_HEXSZ_MAX + 1], name[OID_HEXSZ_MAX + 2], path[4096];
	struct stat st;

	oid_to_hex(hex, raw, rawsz);
	snprintf(name, sizeof(name), "%.2s/%s", hex, hex + 2);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	/* Not there (deleted, the common case): nothing to say. */
	if (lstat(path, &st) < 0)
		return false;
	return usable(AT_FDCWD, path, S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN,
	    dir, name);
}

int
looseset_update(struct looseset *set, const struct looseset *prev,
    struct loose_touch *touched, size_t n, char *const *dirs)
{
	size_t rawsz = prev->rawsz, i = 0, t = 0, out = 0;

	memset(set, 0, sizeof(*set));
	set->rawsz = rawsz;
	if (n)
		qsort_r(touched, n, sizeof(*touched), cmp_touch, &rawsz);
	set->ids = malloc((prev->nr + n) * rawsz + 1);
	set->dirs = malloc(prev->nr + n + 1);
	if (!set->ids || !set->dirs) {
		looseset_free(set);
		return -ENOMEM;
	}
	/* Merge prev with the touched ids, both sorted. */
	while (i < prev->nr || t < n) {
		const unsigned char *pid = prev->ids + i * rawsz;
		int c = i == prev->nr ? 1 : t == n ? -1 :
		    memcmp(pid, touched[t].id, rawsz);
		const unsigned char *id;
		unsigned dir;

		if (c < 0) {
			id = pid;
			dir = prev->dirs[i++];
		} else {
			/* Every touch of this id decides, in any directory. */
			const unsigned char *tid = touched[t].id;
			bool keep = false;

			dir = 0;
			if (c == 0) {
				keep = true;
				dir = prev->dirs[i++];
			}
			for (; t < n && !memcmp(touched[t].id, tid, rawsz);
			    t++) {
				bool there = loose_exists(dirs[touched[t].dir],
				    tid, rawsz);

				if (there && !keep) {
					keep = true;
					dir = touched[t].dir;
				} else if (!there && keep &&
				    dir == touched[t].dir) {
					keep = false;
				}
			}
			if (!keep)
				continue;
			id = tid;
		}
		if (out && !memcmp(set->ids + (out - 1) * rawsz, id, rawsz))
			continue;
		memcpy(set->ids + out * rawsz, id, rawsz);
		set->dirs[out] = (unsigned char)dir;
		set->fanout[id[0]]++;
		out++;
	}
	set->nr = out;
	for (unsigned b = 1; b < 256; b++)
		set->fanout[b] += set->fanout[b - 1];
	return 0;
}

void
looseset_free(struct looseset *set)
{
	free(set->ids);
	free(set->dirs);
	memset(set, 0, sizeof(*set));
}

bool
looseset_find(const struct looseset *set, const unsigned char *raw,
    size_t *pos)
{
	size_t lo = raw[0] ? set->fanout[raw[0] - 1] : 0;
	size_t hi = set->fanout[raw[0]];

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int cmp = memcmp(set->ids + mid * set->rawsz, raw, set->rawsz);

		if (!cmp) {
			*pos = mid;
			return true;
		}
		if (cmp > 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return false;
}

int
loose_header_parse(const unsigned char *buf, size_t len, struct objinfo *info,
    size_t *hdrlen, const char *name)
{
	const unsigned char *sp, *nul;
	uint64_t size = 0;

	if (len > LOOSE_MAX_HEADER)
		len = LOOSE_MAX_HEADER;
	nul = memchr(buf, '\0', len);
	sp = memchr(buf, ' ', len);
	if (!nul || !sp || sp > nul)
		return log_corrupt("%s: loose object header is malformed or "
		    "longer than %d bytes (offset 0)", name, LOOSE_MAX_HEADER);
	info->type = object_type_parse((const char *)buf, (size_t)(sp - buf));
	if (info->type == OBJ_NONE)
		return log_corrupt("%s: loose object has an unknown type "
		    "(offset 0)", name);
	if (sp + 1 == nul || (sp[1] == '0' && sp + 2 != nul))
		return log_corrupt("%s: loose object size is malformed "
		    "(offset %zu)", name, (size_t)(sp + 1 - buf));
	for (const unsigned char *p = sp + 1; p < nul; p++) {
		if (*p < '0' || *p > '9' || size > UINT64_MAX / 10 ||
		    (size == UINT64_MAX / 10 && (uint64_t)(*p - '0') >
		    UINT64_MAX % 10))
			return log_corrupt("%s: loose object size is malformed "
			    "(offset %zu)", name, (size_t)(p - buf));
		size = size * 10 + (uint64_t)(*p - '0');
	}
	info->size = size;
	*hdrlen = (size_t)(nul + 1 - buf);
	return 0;
}

int
loose_open(struct loose *lo, const char *dir, const unsigned char *raw,
    size_t rawsz)
{
	unsigned char head[LOOSE_MAX_HEADER];
	char hex[OID_HEXSZ_MAX + 1];
	const char *why;
	struct stat st;
	size_t got;
	int fd, ret;

	memset(lo, 0, sizeof(*lo));
	oid_to_hex(hex, raw, rawsz);
	if ((size_t)snprintf(lo->path, sizeof(lo->path), "%s/%.2s/%s", dir,
	    hex, hex + 2) >= sizeof(lo->path))
		return -ENAMETOOLONG;
	/*
	 * O_NONBLOCK: a FIFO put in its place must not stop the caller.
	 * Symlinks are followed, as git follows them.
	 */
	fd = open(lo->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP ? -ENOENT : -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		close(fd);
		return log_corrupt("%s: loose object is not a regular, "
		    "non-empty file (offset 0)", lo->path);
	}
	ret = map_open(&lo->file, fd, &st);
	close(fd);
	if (ret < 0)
		return ret;
	lo->map = lo->file.base;
	lo->size = lo->file.size;
	ret = zio_inflate_prefix(lo->map, lo->size, head, sizeof(head), &got,
	    &why);
	if (loose_check(lo) < 0)
		ret = -EFSCORRUPTED;
	else if (ret < 0 && !(ret == -EFSCORRUPTED && got > 0 &&
	    memchr(head, '\0', got)))
		ret = log_corrupt("%s: %s (offset 0)", lo->path, why);
	else
		ret = loose_header_parse(head, got, &lo->info, &lo->hdrlen,
		    lo->path);
	if (ret < 0)
		loose_close(lo);
	return ret;
}

void
loose_close(struct loose *lo)
{
	map_close(&lo->file);
	lo->map = NULL;
}

int
loose_check(const struct loose *lo)
{
	uint64_t off;

	if (!map_shrank(&lo->file, &off))
		return 0;
	return log_corrupt("%s: file shrank while it was read (offset %llu)",
	    lo->path, (unsigned long long)off);
}

int
loose_read(const struct loose *lo, unsigned char **out)
{
	unsigned char *buf;
	const char *why;
	size_t used;
	int ret;

	*out = NULL;
	if (lo->info.size > OBJ_MAX_INMEM - lo->hdrlen)
		return -EFBIG;
	ret = zio_inflate(lo->map, lo->size, lo->hdrlen + lo->info.size, &buf,
	    &used, &why);
	if (loose_check(lo) < 0) {
		if (ret == 0)
			free(buf);
		return -EFSCORRUPTED;
	}
	if (ret == -EFSCORRUPTED)
		return log_corrupt("%s: offset 0: %s", lo->path, why);
	if (ret < 0)
		return ret;
	if (used != lo->size) {
		free(buf);
		return log_corrupt("%s: garbage after the zlib stream "
		    "(offset %zu)", lo->path, used);
	}
	memmove(buf, buf + lo->hdrlen, (size_t)lo->info.size);
	*out = buf;
	return 0;
}
