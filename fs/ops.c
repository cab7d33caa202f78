/*
 * ops: one handler per FUSE operation. What a name means is the
 * layout's business (layout.c and the view files); this file speaks the
 * protocol: entries and their timeouts, directory streams, open files,
 * extended attributes.
 *
 * The hot path is a lookup that misses:
 *
 *   odbfs_lookup()
 *     layout_lookup()        the directory's kind: a fixed name, or its find
 *       objects_find()       (fanout_find(), commits_find(), trees_find())
 *         oid_parse_hex()    a full lowercase id, or ENOENT with no lookup
 *         view_lookup_id()   the view's one lookup of a full id
 *           odb_has()        memory only (store/lookup.c, down to
 *                            snapshot_find() in store/snapshot.c)
 *           miss_note()      a few relaxed atomic stores, so the entry can
 *                            be invalidated when the object arrives
 *     odb_moved()            a fence and a load: tried again if a snapshot
 *                            was published meanwhile
 *     reply_negative()       a negative entry the kernel may cache
 *
 * No handler makes a system call for a miss, but for one case: a
 * snapshot that saw a pack vanish while it was built has odb_has() look
 * again (see store/lookup.c). An object file is rebuilt by its first read
 * (readers.c keeps it for the reads after, reading through
 * odb_reader_open() in store/lookup.c, then store/reader.c and
 * store/unpack.c), or before it is read when a walk is under way
 * (ahead.c). A ref that moved is seen by the repository's watcher
 * (store/watch.c), which calls served_published() (served.c); its
 * reflinks_published() drops the kernel's old links (reflinks.c).
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "ahead.h"
#include "forge.h"
#include "odbstore/log.h"
#include "odbfs.h"
#include "readers.h"
#include "reflinks.h"
#include "stats.h"
#include "trim.h"
#include "layout.h"
#include "view.h"

static struct odbfs *
fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/*
 * The struct odbfs that serves n, until fs_put(): the mount's, or in a
 * mount of many (--root) n's repository's, opened if need_odb and
 * closed (forge.h). NULL with the error to reply when it cannot serve.
 */
static struct odbfs *
fs_get(fuse_req_t req, const struct node *n, bool need_odb, int *err)
{
	struct odbfs *top = fs_of(req);

	*err = 0;
	return top->forge ? forge_hold(top, n->repo, need_odb, err) : top;
}

/* After the reply too: it needs no request. */
static void
fs_put(struct odbfs *fs)
{
	forge_release(fs);
}

/* Corrupt data was logged where it was found; the caller sees EIO. */
static int
to_errno(int ret)
{
	if (ret == -ENOTUNIQ)
		return ENOENT;
	if (ret == -EFSCORRUPTED || ret == -EIO) {
		stats_add(STAT_ERRORS, 1);
		return EIO;
	}
	return -ret;
}

/*
 * The attributes, as man/odbfs.1 says and backup tools read them. The
 * sub-second part of st_ctime comes from st_ino so that no two files share
 * one: borg's files cache forgets the files of a run whose ctime is the
 * newest it saw (so that it never trusts a ctime the clock's granularity
 * hides a change behind), and with one ctime for all, that was every file.
 */
static void
fill_attr(const struct odbfs *fs, const struct node *n, struct stat *st)
{
	time_t t = n->time == NODE_TIME_REPO ? fs->epoch : (time_t)n->time;

	memset(st, 0, sizeof(*st));
	st->st_ino = n->ino;
	/*
	 * -o umask= is for what the repository holds, whose modes others may
	 * read; not symlinks (always 0777) nor .odbfs/ (0500, 0400: its
	 * owner's alone, whatever umask says).
	 */
	st->st_mode = S_ISLNK(n->mode) || !(n->mode & S_IROTH) ? n->mode :
	    n->mode & ~fs->umask;
	st->st_nlink = S_ISDIR(n->mode) ? layout_nlink(fs, n) : 1;
	st->st_uid = fs->uid;
	st->st_gid = fs->gid;
	st->st_size = (off_t)n->size;
	st->st_blksize = 4096;
	st->st_blocks = (blkcnt_t)((n->size + 511) / 512);
	st->st_atim.tv_sec = st->st_mtim.tv_sec = st->st_ctim.tv_sec = t;
	st->st_ctim.tv_nsec = (long)(n->ino % 1000000000);
	/*
	 * What has the repository's time has no time of its own to keep
	 * whole (git archive gives a commit's files whole seconds): its files'
	 * mtimes differ too, for borg's --files-cache=mtime,size (directories
	 * and links keep whole seconds, which tar's archives carry).
	 */
	if (n->time == NODE_TIME_REPO && S_ISREG(n->mode))
		st->st_atim.tv_nsec = st->st_mtim.tv_nsec = st->st_ctim.tv_nsec;
}

static void
entry_of(const struct odbfs *fs, const struct node *n,
    struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	e->ino = node_nodeid(n);
	e->attr_timeout = node_timeout(n);
	e->entry_timeout = node_timeout(n);
	fill_attr(fs, n, &e->attr);
}

static void
reply_negative(fuse_req_t req, const struct odbfs *fs, const struct node *dir)
{
	struct fuse_entry_param e = { 0 };

	/* ino 0 with a timeout: the kernel caches the miss that long. */
	e.entry_timeout = layout_negative_timeout(fs, dir);
	if (e.entry_timeout > 0)
		fuse_reply_entry(req, &e);
	else
		fuse_reply_err(req, ENOENT);
}

/*
 * Tries of a lookup that misses while snapshots are published: each
 * publication, a few milliseconds of work, is far longer than a lookup,
 * so a second try all but always sees a still snapshot.
 */
#define LOOKUP_RETRIES 3

static void
lookup_reply(fuse_req_t req, struct node *dir, const char *name)
{
	struct fuse_entry_param e;
	struct node *n;
	uint64_t gen;
	int ret, tries = 0;
	struct odbfs *fs = fs_get(req, dir, true, &ret);

	if (!fs) {
		fuse_reply_err(req, to_errno(ret));
		return;
	}
	stats_add(STAT_LOOKUPS, 1);
	gen = fs->odb ? odb_generation(fs->odb) : 0;
	/*
	 * A miss in a snapshot replaced while it was looked up is tried in
	 * the new one: the watcher's sweep after that publication may have
	 * run before the miss was noted, and then nothing would drop the
	 * negative entry before it times out (miss.h).
	 */
	while ((ret = layout_lookup(fs, dir, name, &n)) == -ENOENT && fs->odb &&
	    tries++ < LOOKUP_RETRIES && odb_moved(fs->odb, gen))
		gen = odb_generation(fs->odb);
	if (ret == -ENOENT || ret == -ENOTUNIQ) {
		reply_negative(req, fs, dir);
	} else if (ret < 0) {
		fuse_reply_err(req, to_errno(ret));
	} else {
		entry_of(fs, n, &e);
		if (fuse_reply_entry(req, &e) != 0)
			node_forget(e.ino, 1);
	}
	fs_put(fs);
}

static void
odbfs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	union node_buf nb;
	struct node *dir = node_get(parent, &nb);

	if (!layout_shows_refs(dir)) {
		lookup_reply(req, dir, name);
		return;
	}
	reflinks_lookup_begin();
	lookup_reply(req, dir, name);
	reflinks_lookup_end();
}

static void
odbfs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	node_forget(ino, nlookup);
	trim_forgot(1);
	fuse_reply_none(req);
}

static void
odbfs_forget_multi(fuse_req_t req, size_t count,
    struct fuse_forget_data *forgets)
{
	for (size_t i = 0; i < count; i++)
		node_forget(forgets[i].ino, forgets[i].nlookup);
	trim_forgot(count);
	fuse_reply_none(req);
}

static void
odbfs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	union node_buf nb;
	struct node *n = node_get(ino, &nb);
	struct stat st;
	int ret;
	struct odbfs *fs = fs_get(req, n, false, &ret);

	(void)fi;
	if (!fs) {
		fuse_reply_err(req, to_errno(ret));
		return;
	}
	fill_attr(fs, n, &st);
	fuse_reply_attr(req, &st, node_timeout(n));
	fs_put(fs);
}

static void
odbfs_readlink(fuse_req_t req, fuse_ino_t ino)
{
	union node_buf nb;
	struct node *n = node_get(ino, &nb);
	char target[PATH_MAX];

	if (!S_ISLNK(n->mode)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	/*
	 * Replied from a copy: the reply wakes the reader, whose dput() may
	 * have the kernel forget the node, freed by another thread while
	 * writev() is still returning here (AddressSanitizer checks the
	 * iovec after the call, and saw it freed). Targets are shorter.
	 */
	if (strlen(n->data) < sizeof(target)) {
		strcpy(target, n->data);
		fuse_reply_readlink(req, target);
	} else {
		fuse_reply_readlink(req, n->data);
	}
}

/* An open directory: its listing, and the files it showed the kernel. */
struct dirstream {
	struct dirlist *l;
	struct ahead_list *shown;	/* NULL without memory or a thread */
};

static void
odbfs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	union node_buf nb;
	struct node *n = node_get(ino, &nb);
	struct dirstream *d;
	struct dirlist *l;
	int ret;
	struct odbfs *fs = fs_get(req, n, true, &ret);
	bool ahead;
	uint32_t repo;

	if (!fs) {
		fuse_reply_err(req, to_errno(ret));
		return;
	}
	ret = layout_list(fs, n, &l);
	/* Once let go, a mount of many's fs may be closed and freed. */
	ahead = fs->ahead;
	repo = fs->repo;
	fs_put(fs);
	if (ret < 0) {
		fuse_reply_err(req, to_errno(ret));
		return;
	}
	if (!(d = calloc(1, sizeof(*d)))) {
		dirlist_free(l);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	d->l = l;
	if (ahead)
		d->shown = ahead_list_new(repo);
	fi->fh = (uint64_t)(uintptr_t)d;
	/*
	 * Listings under an id never change: the kernel may keep them. Those
	 * of objects/, commits/, trees/, tags/ and the refs do.
	 */
	fi->cache_readdir = layout_cache_listing(n);
	fi->keep_cache = fi->cache_readdir;
	fuse_reply_open(req, fi);
}

/*
 * Fill one reply of a directory stream from offset off: entry i has
 * offset i + 3 once written ("." is 1, ".." is 2).
 */
static void
readdir_common(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
    struct fuse_file_info *fi, bool plus)
{
	struct dirstream *d = (struct dirstream *)(uintptr_t)fi->fh;
	struct dirlist *l = d->l;
	union node_buf nb;
	struct node *dir = node_get(ino, &nb);
	size_t used = 0, total = dirlist_count(l) + 2;
	char name[OID_HEXSZ_MAX + 1], *buf;
	int err;
	struct odbfs *fs = fs_get(req, dir, plus, &err);

	if (!fs) {
		fuse_reply_err(req, to_errno(err));
		return;
	}
	if (!(buf = malloc(size))) {
		fs_put(fs);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	for (size_t i = (size_t)off; i < total; i++) {
		struct fuse_entry_param e = { 0 };
		struct node *child = NULL;
		fuse_ino_t known = 0;
		const char *nm;
		mode_t type;
		uint64_t cino;
		size_t len;

		if (i < 2) {
			nm = i ? ".." : ".";
			type = S_IFDIR;
			cino = dir->ino;
		} else {
			nm = dirlist_entry(l, i - 2, name, &type, &cino);
		}
		e.attr.st_mode = type;
		e.attr.st_ino = cino;
		/*
		 * Node id 0 tells the kernel to leave the entry as it knows it:
		 * a walk that lists objects/xx/ again costs no object lookup,
		 * and a listing of commits/ makes no node.
		 */
		if (plus && i >= 2 && !dirlist_plain(l) &&
		    !(known = dirlist_known(l, i - 2)) &&
		    layout_lookup(fs, dir, nm, &child) == 0)
			entry_of(fs, child, &e);
		if (plus)
			len = fuse_add_direntry_plus(req, buf + used,
			    size - used, nm, &e, (off_t)(i + 1));
		else
			len = fuse_add_direntry(req, buf + used, size - used,
			    nm, &e.attr, (off_t)(i + 1));
		if (len > size - used) {
			if (child)
				node_forget(node_nodeid(child), 1);
			break;
		}
		used += len;
		if (known)
			ahead_list_add(d->shown, known, cino,
			    dirlist_id(l, i - 2), fs->rawsz);
		else if (child && layout_object_bytes(child))
			ahead_list_add(d->shown, node_nodeid(child),
			    child->ino, node_id(child), fs->rawsz);
	}
	if (used == 0 && (size_t)off >= total && dirlist_corrupt(l) &&
	    (size_t)off == total)
		fuse_reply_err(req, to_errno(dirlist_error(l)));
	else
		fuse_reply_buf(req, buf, used);
	free(buf);
	fs_put(fs);
}

static void
odbfs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
    struct fuse_file_info *fi)
{
	readdir_common(req, ino, size, off, fi, false);
}

static void
odbfs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
    struct fuse_file_info *fi)
{
	union node_buf nb;

	/* Its entries are lookups: see odbfs_lookup(). */
	if (layout_shows_refs(node_get(ino, &nb))) {
		reflinks_lookup_begin();
		readdir_common(req, ino, size, off, fi, true);
		reflinks_lookup_end();
		return;
	}
	readdir_common(req, ino, size, off, fi, true);
}

static void
odbfs_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct dirstream *d = (struct dirstream *)(uintptr_t)fi->fh;

	(void)ino;
	dirlist_free(d->l);
	ahead_list_put(d->shown);
	free(d);
	fuse_reply_err(req, 0);
}

/*
 * Files have no open state. open replies ENOSYS, which a kernel offering
 * no-open support takes as "opened, keep the page cache" and never asks
 * again: no open or release round trip for any later open, and a file the
 * kernel has cached is read with no request at all. An object is rebuilt
 * by the read that needs it (readers.c keeps it for the reads after).
 */
static void
odbfs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	union node_buf nb;
	struct node *n = node_get(ino, &nb);
	int ret;
	struct odbfs *fs = fs_get(req, n, false, &ret);

	if (!fs) {
		fuse_reply_err(req, to_errno(ret));
		return;
	}
	/* Entered, for the count below; nothing else of it is used. */
	fs_put(fs);
	if (S_ISDIR(n->mode)) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	if ((fi->flags & O_ACCMODE) != O_RDONLY) {
		fuse_reply_err(req, EROFS);
		return;
	}
	stats_add(STAT_OPENS, 1);
	if (fs_of(req)->no_open) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	/* What no-open would have given us. */
	fi->fh = 0;
	fi->keep_cache = 1;
	fi->noflush = 1;
	fuse_reply_open(req, fi);
}

/*
 * The reader of the object whose bytes n's are (its own, or a slice's),
 * with where n's bytes start in it and how many there are; for a read of
 * size bytes at off.
 */
static int
object_of(struct odbfs *fs, const struct node *n, off_t off, size_t size,
    struct reader **r, uint64_t *start, uint64_t *total)
{
	uint64_t from = (uint64_t)off, to = (uint64_t)off + size;
	int ret;

	*start = 0;
	if (n->kind == NODE_SLICE) {
		*start = n->ext->slice_off;
		/* A read of the whole slice is all that is wanted. */
		if (off == 0 && size >= n->size) {
			from = 0;
			to = UINT64_MAX;
		} else {
			from += *start;
			to += *start;
		}
	}
	if ((ret = readers_get(fs->odb, node_id(n),
	    n->kind == NODE_SLICE ? UINT64_MAX : n->size, from, to, r)) < 0)
		return ret;
	*total = reader_info(*r)->size;
	if (n->kind == NODE_SLICE) {
		/* The id's bytes never change: only a bug can get here. */
		if (*total < *start || *total - *start < n->size) {
			char hex[OID_HEXSZ_MAX + 1];

			oid_to_hex(hex, node_id(n), fs->rawsz);
			reader_close(*r);
			*r = NULL;
			return log_corrupt("object %s: %llu bytes, too few for "
			    "%llu at offset %llu", hex,
			    (unsigned long long)*total,
			    (unsigned long long)n->size,
			    (unsigned long long)*start);
		}
		*total = n->size;
	}
	return 0;
}

static void
odbfs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
    struct fuse_file_info *fi)
{
	union node_buf nb;
	struct node *n = node_get(ino, &nb);
	const unsigned char *data = (const unsigned char *)n->data;
	uint64_t total = n->size, start = 0;
	struct odbfs *fs;
	struct reader *r = NULL;
	unsigned char *buf = NULL;
	bool object;
	ssize_t got;
	int ret;

	(void)fi;
	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	object = layout_object_bytes(n) || (n->kind == NODE_SLICE &&
	    (uint64_t)off < n->size);
	/* Held until the reader is let go: see forge_hold(). */
	if (!(fs = fs_get(req, n, object, &ret))) {
		fuse_reply_err(req, to_errno(ret));
		return;
	}
	stats_add(STAT_READS, 1);
	if (layout_object_bytes(n) && off == 0)
		ahead_read(ino, n->ino);
	if (object) {
		if ((ret = object_of(fs, n, off, size, &r, &start,
		    &total)) < 0) {
			fs_put(fs);
			fuse_reply_err(req, to_errno(ret));
			return;
		}
		if ((data = reader_data(r)))
			data += start;
	}
	if ((uint64_t)off >= total) {
		fuse_reply_buf(req, NULL, 0);
		goto out;
	}
	if (size > total - (uint64_t)off)
		size = (size_t)(total - (uint64_t)off);
	/*
	 * A node's bytes, which a forget may free while the reply is being
	 * written if the read was interrupted: reply from a copy. A reader's
	 * are safe: we hold a reference.
	 */
	if (data && !r) {
		if (!(buf = malloc(size ? size : 1))) {
			fuse_reply_err(req, ENOMEM);
			goto out;
		}
		memcpy(buf, data + off, size);
		data = buf;
		off = 0;
	}
	if (data) {
		stats_add(STAT_BYTES, size);
		fuse_reply_buf(req, (const char *)data + off, size);
		goto out;
	}
	if (!(buf = malloc(size ? size : 1))) {
		fuse_reply_err(req, ENOMEM);
		goto out;
	}
	got = reader_read(r, buf, size, start + (uint64_t)off);
	if (got > 0) {
		readers_prefetch(r, start + (uint64_t)off + (uint64_t)got);
		stats_add(STAT_BYTES, (uint64_t)got);
	}
	if (got < 0)
		fuse_reply_err(req, to_errno((int)got));
	else
		fuse_reply_buf(req, (const char *)buf, (size_t)got);
out:
	free(buf);
	reader_close(r);
	fs_put(fs);
}

/* The value of xattr name for n, in buf; NULL if n has none such. */
static const char *
xattr_value(const struct odbfs *fs, const struct node *n, const char *name,
    char *buf, size_t *len)
{
	if (n->type == OBJ_NONE)
		return NULL;
	if (!strcmp(name, "user.git.type")) {
		snprintf(buf, OID_HEXSZ_MAX + 1, "%s",
		    object_type_name(n->type));
	} else if (!strcmp(name, "user.git.id")) {
		oid_to_hex(buf, node_id(n), fs->rawsz);
	} else if (!strcmp(name, "user.git.mode") && n->git_mode) {
		snprintf(buf, OID_HEXSZ_MAX + 1, "%06o", n->git_mode);
	} else {
		return NULL;
	}
	*len = strlen(buf);
	return buf;
}

static void
odbfs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	char buf[OID_HEXSZ_MAX + 1];
	union node_buf nb;
	struct node *n = node_get(ino, &nb);
	const char *value;
	size_t len;
	int ret;
	/*
	 * Only what stands for an object has attributes (whose id needs the
	 * repository's hash size): ls -l of a group, which asks each of its
	 * repositories for ACLs, opens none.
	 */
	struct odbfs *fs = fs_get(req, n, n->type != OBJ_NONE, &ret);

	if (!fs) {
		fuse_reply_err(req, to_errno(ret));
		return;
	}
	value = xattr_value(fs, n, name, buf, &len);
	fs_put(fs);
	if (!value)
		fuse_reply_err(req, ENODATA);
	else if (size == 0)
		fuse_reply_xattr(req, len);
	else if (size < len)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, value, len);
}

static void
odbfs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	static const char all[] = "user.git.type\0user.git.id\0user.git.mode";
	union node_buf nb;
	struct node *n = node_get(ino, &nb);
	size_t len = n->type == OBJ_NONE ? 0 : n->git_mode ? sizeof(all) :
	    sizeof("user.git.type") + sizeof("user.git.id");

	/*
	 * The kernel answers ENODATA itself for a user.* attribute of
	 * anything but a file or directory; listing them there had rsync -aX
	 * fail on every symlink (exit 23).
	 */
	if (!S_ISREG(n->mode) && !S_ISDIR(n->mode))
		len = 0;

	if (size == 0)
		fuse_reply_xattr(req, len);
	else if (size < len)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, all, len);
}

static void
odbfs_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv = { 0 };

	(void)ino;
	sv.f_bsize = 4096;
	sv.f_frsize = 4096;
	sv.f_namemax = 255;
	sv.f_flag = ST_RDONLY;
	fuse_reply_statfs(req, &sv);
}

/*
 * Writes. The mount is read-only, so the kernel refuses them itself; but
 * root's "mount -o remount,rw" lifts that, and then they reach the daemon,
 * where a missing handler would mean ENOSYS, EPERM or EOPNOTSUPP. Each is
 * answered EROFS; open for writing is refused in odbfs_open(), and a write
 * to a file the kernel opened without asking (no-open) is refused here.
 */
#define READ_ONLY(op, ...)						\
static void								\
odbfs_##op(fuse_req_t req, __VA_ARGS__)					\
{									\
	fuse_reply_err(req, EROFS);					\
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
READ_ONLY(setattr, fuse_ino_t ino, struct stat *attr, int to_set,
    struct fuse_file_info *fi)
READ_ONLY(mknod, fuse_ino_t parent, const char *name, mode_t mode,
    dev_t rdev)
READ_ONLY(mkdir, fuse_ino_t parent, const char *name, mode_t mode)
READ_ONLY(unlink, fuse_ino_t parent, const char *name)
READ_ONLY(rmdir, fuse_ino_t parent, const char *name)
READ_ONLY(symlink, const char *link, fuse_ino_t parent, const char *name)
READ_ONLY(rename, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
    const char *newname, unsigned int flags)
READ_ONLY(link, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
READ_ONLY(create, fuse_ino_t parent, const char *name, mode_t mode,
    struct fuse_file_info *fi)
READ_ONLY(write, fuse_ino_t ino, const char *buf, size_t size, off_t off,
    struct fuse_file_info *fi)
READ_ONLY(setxattr, fuse_ino_t ino, const char *name, const char *value,
    size_t size, int flags)
READ_ONLY(removexattr, fuse_ino_t ino, const char *name)
READ_ONLY(fallocate, fuse_ino_t ino, int mode, off_t offset, off_t length,
    struct fuse_file_info *fi)
READ_ONLY(copy_file_range, fuse_ino_t ino_in, off_t off_in,
    struct fuse_file_info *fi_in, fuse_ino_t ino_out, off_t off_out,
    struct fuse_file_info *fi_out, size_t len, int flags)
#pragma GCC diagnostic pop

static void
odbfs_init(void *userdata, struct fuse_conn_info *conn)
{
	struct odbfs *fs = userdata;

	fs->no_open = conn->capable & FUSE_CAP_NO_OPEN_SUPPORT;
	/* Reads of one file may run in parallel; objects never change. */
	if (conn->capable & FUSE_CAP_ASYNC_READ)
		conn->want |= FUSE_CAP_ASYNC_READ;
	if (conn->capable & FUSE_CAP_CACHE_SYMLINKS)
		conn->want |= FUSE_CAP_CACHE_SYMLINKS;
	conn->want &= ~(unsigned)FUSE_CAP_AUTO_INVAL_DATA;
	/*
	 * With atomic O_TRUNC the kernel leaves truncating to open, which
	 * no-open never sends: after a "remount,rw", "> file" would succeed
	 * and the kernel think the file empty. Without it, the kernel asks
	 * setattr, which answers EROFS.
	 */
	conn->want &= ~(unsigned)FUSE_CAP_ATOMIC_O_TRUNC;
	/*
	 * Every chunk of a listing with its entries' attributes, not only
	 * the first: tar and rsync list a whole directory before they stat
	 * it, and a file whose node came with the listing can be read ahead
	 * (ahead.c). ls -l costs the same; a bare ls of a large directory
	 * makes the nodes it would not have needed.
	 */
	conn->want &= ~(unsigned)FUSE_CAP_READDIRPLUS_AUTO;
}

const struct fuse_lowlevel_ops odbfs_ops = {
	.init = odbfs_init,
	.lookup = odbfs_lookup,
	.forget = odbfs_forget,
	.forget_multi = odbfs_forget_multi,
	.getattr = odbfs_getattr,
	.readlink = odbfs_readlink,
	.opendir = odbfs_opendir,
	.readdir = odbfs_readdir,
	.readdirplus = odbfs_readdirplus,
	.releasedir = odbfs_releasedir,
	.open = odbfs_open,
	.read = odbfs_read,
	.getxattr = odbfs_getxattr,
	.listxattr = odbfs_listxattr,
	.statfs = odbfs_statfs,
	.setattr = odbfs_setattr,
	.mknod = odbfs_mknod,
	.mkdir = odbfs_mkdir,
	.unlink = odbfs_unlink,
	.rmdir = odbfs_rmdir,
	.symlink = odbfs_symlink,
	.rename = odbfs_rename,
	.link = odbfs_link,
	.create = odbfs_create,
	.write = odbfs_write,
	.setxattr = odbfs_setxattr,
	.removexattr = odbfs_removexattr,
	.fallocate = odbfs_fallocate,
	.copy_file_range = odbfs_copy_file_range,
};
