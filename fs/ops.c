/*
 * ops: one handler per FUSE operation, over store/odb.h and node.h.
 *
 * The hot path is a lookup that misses:
 *
 *   odbfs_lookup()
 *     name_to_id()     a full lowercase id, or ENOENT with no lookup
 *     odb_has()        memory only (see store/odb.c)
 *     miss_note()      a few relaxed atomic stores, so the entry can be
 *                      invalidated when the object arrives
 *     reply_negative() a negative entry the kernel may cache
 *
 * No handler makes a system call for a miss; reading an object opens it
 * once (odb_reader_open) and serves every read() of that open file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "log.h"
#include "miss.h"
#include "node.h"
#include "odbfs.h"
#include "oid.h"

#define XATTR_TYPE "user.git.type"

static struct odbfs *
fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* Corrupt data was logged where it was found; the caller sees EIO. */
static int
to_errno(int ret)
{
	if (ret == -EFSCORRUPTED)
		return EIO;
	return -ret;
}

static void
fill_attr(const struct odbfs *fs, const struct node *n, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = n->ino;
	st->st_uid = fs->uid;
	st->st_gid = fs->gid;
	st->st_blksize = 4096;
	if (n->kind == NODE_OBJECT) {
		st->st_mode = S_IFREG | 0444;
		st->st_nlink = 1;
		st->st_size = (off_t)n->info.size;
		st->st_blocks = (blkcnt_t)((n->info.size + 511) / 512);
	} else {
		st->st_mode = S_IFDIR | 0555;
		st->st_nlink = 2;
	}
}

static void
reply_entry(fuse_req_t req, const struct node *n)
{
	struct fuse_entry_param e = { 0 };

	e.ino = node_nodeid(n);
	e.attr_timeout = ODBFS_TIMEOUT_IMMUTABLE;
	e.entry_timeout = ODBFS_TIMEOUT_IMMUTABLE;
	fill_attr(fs_of(req), n, &e.attr);
	fuse_reply_entry(req, &e);
}

static void
reply_negative(fuse_req_t req)
{
	struct fuse_entry_param e = { 0 };

	/* ino 0 with a timeout: the kernel caches the miss that long. */
	e.entry_timeout = fs_of(req)->negative_timeout;
	if (e.entry_timeout > 0)
		fuse_reply_entry(req, &e);
	else
		fuse_reply_err(req, ENOENT);
}

/* Is name a full lowercase id? Never touches the store. */
static bool
name_to_id(const struct odbfs *fs, const char *name, unsigned char *id)
{
	return oid_parse_hex(id, name, fs->rawsz);
}

static void
lookup_object(fuse_req_t req, const unsigned char *id)
{
	struct odbfs *fs = fs_of(req);
	struct objinfo info;
	struct node *n;
	int ret;

	if (!odb_has(fs->odb, id)) {
		miss_note(id, fs->rawsz);
		reply_negative(req);
		return;
	}
	if ((ret = odb_info(fs->odb, id, &info)) < 0) {
		if (ret == -ENOENT)
			reply_negative(req);
		else
			fuse_reply_err(req, to_errno(ret));
		return;
	}
	if (!(n = node_object(id, &info))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	reply_entry(req, n);
}

static void
odbfs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct odbfs *fs = fs_of(req);
	struct node *dir = node_get(parent);
	unsigned char id[OID_RAWSZ_MAX];
	int hi, lo;

	switch (dir->kind) {
	case NODE_ROOT:
		if (!strcmp(name, "objects")) {
			reply_entry(req, node_objects());
			return;
		}
		break;
	case NODE_OBJECTS:
		if (name_to_id(fs, name, id)) {
			lookup_object(req, id);
			return;
		}
		hi = hexval(name[0]);
		lo = hi < 0 ? -1 : hexval(name[1]);
		if (lo >= 0 && name[2] == '\0' &&
		    odb_has_prefix(fs->odb, (unsigned)(hi << 4 | lo))) {
			reply_entry(req, node_fanout((unsigned)(hi << 4 | lo)));
			return;
		}
		break;
	case NODE_FANOUT:
		if (name_to_id(fs, name, id) && id[0] == dir->fanout) {
			lookup_object(req, id);
			return;
		}
		break;
	case NODE_OBJECT:
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	reply_negative(req);
}

static void
odbfs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	node_forget(ino, nlookup);
	fuse_reply_none(req);
}

static void
odbfs_forget_multi(fuse_req_t req, size_t count,
    struct fuse_forget_data *forgets)
{
	for (size_t i = 0; i < count; i++)
		node_forget(forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

static void
odbfs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	fill_attr(fs_of(req), node_get(ino), &st);
	fuse_reply_attr(req, &st, ODBFS_TIMEOUT_IMMUTABLE);
}

/*
 * A directory handle: the names it lists, fixed at opendir so that offsets
 * stay valid however the repository changes meanwhile.
 */
struct dirh {
	enum node_kind kind;
	unsigned char *ids;	/* NODE_FANOUT: sorted ids */
	size_t nr;
	unsigned char bytes[256];	/* NODE_OBJECTS: fan-outs in use */
};

static void
odbfs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct odbfs *fs = fs_of(req);
	struct node *n = node_get(ino);
	struct dirh *d;
	int ret = 0;

	if (n->kind == NODE_OBJECT) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	if (!(d = calloc(1, sizeof(*d)))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	d->kind = n->kind;
	if (n->kind == NODE_ROOT) {
		d->nr = 1;
	} else if (n->kind == NODE_OBJECTS) {
		for (unsigned b = 0; b < 256; b++)
			if (odb_has_prefix(fs->odb, b))
				d->bytes[d->nr++] = (unsigned char)b;
	} else {
		ret = odb_list(fs->odb, n->fanout, &d->ids, &d->nr);
	}
	if (ret < 0) {
		free(d);
		fuse_reply_err(req, to_errno(ret));
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)d;
	fi->keep_cache = 0;
	fuse_reply_open(req, fi);
}

/* The name and node of entry i (0 and 1 are "." and ".."). */
static const char *
dir_entry(const struct odbfs *fs, const struct dirh *d, struct node *self,
    size_t i, char *buf, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	if (i < 2) {
		st->st_mode = S_IFDIR;
		st->st_ino = self->ino;
		return i ? ".." : ".";
	}
	i -= 2;
	switch (d->kind) {
	case NODE_ROOT:
		fill_attr(fs, node_objects(), st);
		return "objects";
	case NODE_OBJECTS:
		fill_attr(fs, node_fanout(d->bytes[i]), st);
		snprintf(buf, 3, "%02x", d->bytes[i]);
		return buf;
	default:
		oid_to_hex(buf, d->ids + i * fs->rawsz, fs->rawsz);
		/* readdir (not plus): only the type and inode matter. */
		st->st_mode = S_IFREG;
		st->st_ino = node_object_ino(d->ids + i * fs->rawsz);
		return buf;
	}
}

static void
odbfs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
    struct fuse_file_info *fi)
{
	struct odbfs *fs = fs_of(req);
	struct dirh *d = (struct dirh *)(uintptr_t)fi->fh;
	char name[OID_HEXSZ_MAX + 1], *buf;
	size_t used = 0, total = d->nr + 2;
	struct stat st;

	if (!(buf = malloc(size))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	for (size_t i = (size_t)off; i < total; i++) {
		const char *nm = dir_entry(fs, d, node_get(ino), i, name, &st);
		size_t len = fuse_add_direntry(req, buf + used, size - used, nm,
		    &st, (off_t)(i + 1));

		if (len > size - used)
			break;
		used += len;
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void
odbfs_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct dirh *d = (struct dirh *)(uintptr_t)fi->fh;

	(void)ino;
	free(d->ids);
	free(d);
	fuse_reply_err(req, 0);
}

static void
odbfs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct odbfs *fs = fs_of(req);
	struct node *n = node_get(ino);
	struct reader *r;
	int ret;

	if (n->kind != NODE_OBJECT) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	if ((fi->flags & O_ACCMODE) != O_RDONLY) {
		fuse_reply_err(req, EROFS);
		return;
	}
	if ((ret = odb_reader_open(fs->odb, n->id, &r)) < 0) {
		fuse_reply_err(req, to_errno(ret));
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)r;
	fi->keep_cache = 1;
	fi->noflush = 1;
	fuse_reply_open(req, fi);
}

static void
odbfs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
    struct fuse_file_info *fi)
{
	struct reader *r = (struct reader *)(uintptr_t)fi->fh;
	const struct objinfo *info = reader_info(r);
	const unsigned char *data = reader_data(r);
	unsigned char *buf;
	ssize_t n;

	(void)ino;
	if (off < 0 || (uint64_t)off >= info->size) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (size > info->size - (uint64_t)off)
		size = (size_t)(info->size - (uint64_t)off);
	if (data) {
		fuse_reply_buf(req, (const char *)data + off, size);
		return;
	}
	if (!(buf = malloc(size ? size : 1))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = reader_read(r, buf, size, (uint64_t)off);
	if (n < 0)
		fuse_reply_err(req, to_errno((int)n));
	else
		fuse_reply_buf(req, (const char *)buf, (size_t)n);
	free(buf);
}

static void
odbfs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	reader_close((struct reader *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

static void
odbfs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct node *n = node_get(ino);
	const char *value;
	size_t len;

	if (n->kind != NODE_OBJECT || strcmp(name, XATTR_TYPE)) {
		fuse_reply_err(req, ENODATA);
		return;
	}
	value = object_type_name(n->info.type);
	len = strlen(value);
	if (size == 0)
		fuse_reply_xattr(req, len);
	else if (size < len)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, value, len);
}

static void
odbfs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct node *n = node_get(ino);
	static const char names[] = XATTR_TYPE;	/* with its NUL */

	if (n->kind != NODE_OBJECT) {
		if (size == 0)
			fuse_reply_xattr(req, 0);
		else
			fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (size == 0)
		fuse_reply_xattr(req, sizeof(names));
	else if (size < sizeof(names))
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, names, sizeof(names));
}

static void
odbfs_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv = { 0 };
	size_t npacks, nloose;

	(void)ino;
	odb_counts(fs_of(req)->odb, &npacks, &nloose);
	sv.f_bsize = 4096;
	sv.f_frsize = 4096;
	sv.f_files = nloose;
	sv.f_namemax = 255;
	sv.f_flag = ST_RDONLY;
	fuse_reply_statfs(req, &sv);
}

static void
odbfs_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	/* Reads of one file may run in parallel; objects never change. */
	if (conn->capable & FUSE_CAP_ASYNC_READ)
		conn->want |= FUSE_CAP_ASYNC_READ;
	conn->want &= ~(unsigned)FUSE_CAP_AUTO_INVAL_DATA;
}

const struct fuse_lowlevel_ops odbfs_ops = {
	.init = odbfs_init,
	.lookup = odbfs_lookup,
	.forget = odbfs_forget,
	.forget_multi = odbfs_forget_multi,
	.getattr = odbfs_getattr,
	.opendir = odbfs_opendir,
	.readdir = odbfs_readdir,
	.releasedir = odbfs_releasedir,
	.open = odbfs_open,
	.read = odbfs_read,
	.release = odbfs_release,
	.getxattr = odbfs_getxattr,
	.listxattr = odbfs_listxattr,
	.statfs = odbfs_statfs,
};
