/*
 * floorfs: the FUSE protocol floor. A file system whose root answers every
 * lookup with ENOENT (a negative entry that expires at once) and does no
 * other work, so that a stat through it costs only the kernel and the
 * /dev/fuse round trip. bench/run.sh compares odbfs's misses with it.
 *
 * One kind of name is found: a number N (1 to 65536) is a file of N MiB,
 * read from a buffer that is already there, opened and cached as odbfs
 * opens and caches objects. So reading it costs what a read through FUSE
 * costs (requests, filling the page cache) with nothing to compute.
 *
 *   floorfs [-f] MOUNTPOINT
 *
 * A second floor serves a snapshot of a tree: the same names, sizes, modes,
 * times, inode numbers and extended attributes as the directory it was
 * taken from (an odbfs mount), every byte loaded into memory before it
 * mounts. Lookups are one hash table probe, reads a slice of memory,
 * listings readdirplus with every entry's attributes; the timeouts and
 * caching flags are odbfs's (fs/ops.c: 86400 s entries and attributes,
 * no-open files kept in the page cache, cached listings unless
 * --no-dir-cache, as odbfs gives objects/ and its fan-out). What is left
 * is what the kernel and the protocol cost: what odbfs would cost if
 * building its bytes took no time.
 *
 *   floorfs --snapshot SRC FILE             walk SRC (lstat, readlink,
 *                                           xattrs, every file's bytes)
 *                                           into FILE, in SRC's
 *                                           listing order
 *   floorfs --from FILE [--no-dir-cache] [--push] [-f] [-o opts] MOUNTPOINT
 *
 * --push stores the rest of a directory's files (up to 1 MiB each) in the
 * kernel's page cache after the first read of one of them, as odbfs reads
 * a walk ahead: without it the floor pays a read request per file, which
 * odbfs's pushing ahead saves, and is no floor for a walk that reads.
 */
#define FUSE_USE_VERSION 34
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#define MIB ((off_t)1 << 20)
#define MAX_MIB 65536
#define FILE_INO(mib) ((fuse_ino_t)(mib) + 1)	/* 1 is the root */

/* Twice the largest read, so that any read is one slice of it. */
static char bytes[2 * MIB];
static int no_open;

static void
floor_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	no_open = !!(conn->capable & FUSE_CAP_NO_OPEN_SUPPORT);
	if (conn->capable & FUSE_CAP_ASYNC_READ)
		conn->want |= FUSE_CAP_ASYNC_READ;
}

static void
stat_of(fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	if (ino == FUSE_ROOT_ID) {
		st->st_mode = S_IFDIR | 0555;
		st->st_nlink = 2;
	} else {
		st->st_mode = S_IFREG | 0444;
		st->st_nlink = 1;
		st->st_size = (off_t)(ino - 1) * MIB;
	}
}

static void
floor_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e = { .attr_timeout = 86400,
	    .entry_timeout = 86400 };
	char *end;
	unsigned long mib = strtoul(name, &end, 10);

	if (parent != FUSE_ROOT_ID || *name < '1' || *name > '9' || *end ||
	    mib > MAX_MIB) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	e.ino = FILE_INO(mib);
	stat_of(e.ino, &e.attr);
	fuse_reply_entry(req, &e);
}

static void
floor_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	stat_of(ino, &st);
	fuse_reply_attr(req, &st, 86400);
}

static void
floor_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	if (no_open) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	fi->keep_cache = 1;
	fuse_reply_open(req, fi);
}

static void
floor_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
    struct fuse_file_info *fi)
{
	off_t total = (off_t)(ino - 1) * MIB;

	(void)fi;
	if (off < 0 || off >= total) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if ((off_t)size > total - off)
		size = (size_t)(total - off);
	if ((off_t)size > MIB)
		size = MIB;
	fuse_reply_buf(req, bytes + off % MIB, size);
}

static const struct fuse_lowlevel_ops ops = {
	.init = floor_init,
	.lookup = floor_lookup,
	.getattr = floor_getattr,
	.open = floor_open,
	.read = floor_read,
};

/* ---- The snapshot floor ---- */

/* One record of a snapshot file, then name, data, xattr names, values. */
struct rec {
	uint32_t depth, namelen, mode, nlink, uid, gid, xlistlen, xvallen;
	uint64_t ino, size, datalen;
	int64_t at, atn, mt, mtn, ct, ctn;
};

struct fnode {
	struct stat st;
	const char *name, *data, *xlist, *xvals;
	size_t namelen, datalen, xlistlen;
	uint32_t parent, nkids, kcap, *kids;
	_Atomic int pushed;	/* a directory whose files were stored ahead */
};

static struct fnode *nodes;
static size_t nnodes;
static uint32_t *table;		/* index + 1 of nodes, 0 empty */
static size_t tmask;
static int dir_cache = 1;
static int push;		/* --push: store a directory's files ahead */
static struct fuse_session *session;
/* As odbfs's fs/ahead.c: larger files are left to the kernel's readahead. */
#define PUSH_MAX (1 << 20)

#define SNAP_TIMEOUT 86400.0	/* odbfs's NODE_TIMEOUT_IMMUTABLE */

static void
die(const char *what)
{
	perror(what);
	exit(1);
}

static int
snap_walk(FILE *out, char *path, size_t plen, const char *name,
    uint32_t depth)
{
	struct stat st;
	struct rec r = { 0 };
	char *buf = NULL, xl[65536], xv[65536];
	ssize_t n, xlen, vlen = 0;
	size_t len = 0;

	if (lstat(path, &st) != 0)
		die(path);
	if (S_ISREG(st.st_mode)) {
		int fd = open(path, O_RDONLY);
		size_t cap = (size_t)st.st_size + 1;

		if (fd < 0 || !(buf = malloc(cap)))
			die(path);
		while ((n = read(fd, buf + len, cap - len)) > 0)
			if ((len += (size_t)n) == cap &&
			    !(buf = realloc(buf, cap *= 2)))
				die("realloc");
		if (n < 0)
			die(path);
		close(fd);
	} else if (S_ISLNK(st.st_mode)) {
		if (!(buf = malloc(4096)) || (n = readlink(path, buf, 4096)) < 0)
			die(path);
		len = (size_t)n;
	}
	if ((xlen = llistxattr(path, xl, sizeof(xl))) < 0)
		xlen = 0;
	for (ssize_t i = 0; i < xlen; i += (ssize_t)strlen(xl + i) + 1) {
		ssize_t v = lgetxattr(path, xl + i, xv + vlen + 4,
		    sizeof(xv) - (size_t)vlen - 4);
		uint32_t v32 = v < 0 ? 0 : (uint32_t)v;

		memcpy(xv + vlen, &v32, 4);
		vlen += 4 + (ssize_t)v32;
	}
	r.depth = depth;
	r.namelen = (uint32_t)strlen(name);
	r.mode = st.st_mode;
	r.nlink = (uint32_t)st.st_nlink;
	r.uid = st.st_uid;
	r.gid = st.st_gid;
	r.xlistlen = (uint32_t)xlen;
	r.xvallen = (uint32_t)vlen;
	r.ino = st.st_ino;
	r.size = (uint64_t)st.st_size;
	r.datalen = len;
	r.at = st.st_atim.tv_sec, r.atn = st.st_atim.tv_nsec;
	r.mt = st.st_mtim.tv_sec, r.mtn = st.st_mtim.tv_nsec;
	r.ct = st.st_ctim.tv_sec, r.ctn = st.st_ctim.tv_nsec;
	if (fwrite(&r, sizeof(r), 1, out) != 1 ||
	    fwrite(name, 1, r.namelen, out) != r.namelen ||
	    fwrite(buf ? buf : "", 1, len, out) != len ||
	    fwrite(xl, 1, (size_t)xlen, out) != (size_t)xlen ||
	    fwrite(xv, 1, (size_t)vlen, out) != (size_t)vlen)
		die("write");
	free(buf);
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		struct dirent *de;

		if (!d)
			die(path);
		while ((de = readdir(d))) {
			size_t l = strlen(de->d_name);

			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			if (plen + 1 + l >= 4096)
				die("path too long");
			path[plen] = '/';
			memcpy(path + plen + 1, de->d_name, l + 1);
			snap_walk(out, path, plen + 1 + l, de->d_name, depth + 1);
			path[plen] = '\0';
		}
		closedir(d);
	}
	return 0;
}

static int
snapshot(const char *src, const char *file)
{
	char path[4096];
	FILE *out = fopen(file, "w");

	if (!out)
		die(file);
	snprintf(path, sizeof(path), "%s", src);
	snap_walk(out, path, strlen(path), "", 0);
	if (fclose(out) != 0)
		die(file);
	return 0;
}

static uint64_t
hash_of(uint32_t parent, const char *name, size_t len)
{
	uint64_t h = 1469598103934665603ull ^ parent;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 1099511628211ull;
	return h ^ (h >> 29);
}

static void
table_add(uint32_t i)
{
	size_t k = hash_of(nodes[i].parent, nodes[i].name, nodes[i].namelen) &
	    tmask;

	while (table[k])
		k = (k + 1) & tmask;
	table[k] = i + 1;
}

static struct fnode *
table_find(uint32_t parent, const char *name)
{
	size_t len = strlen(name);
	size_t k = hash_of(parent, name, len) & tmask;

	for (; table[k]; k = (k + 1) & tmask) {
		struct fnode *f = &nodes[table[k] - 1];

		if (f->parent == parent && f->namelen == len &&
		    !memcmp(f->name, name, len))
			return f;
	}
	return NULL;
}

/* Read all of file into memory and index it. */
static void
load(const char *file)
{
	int fd = open(file, O_RDONLY);
	struct stat st;
	char *buf, *p, *end;
	size_t alloc = 0, got = 0, tsize;
	uint32_t stack[4096];
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) != 0 || !(buf = malloc((size_t)st.st_size + 1)))
		die(file);
	while (got < (size_t)st.st_size &&
	    (n = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	if (got != (size_t)st.st_size)
		die(file);
	close(fd);
	for (p = buf, end = buf + got; p < end;) {
		struct rec r;
		struct fnode *f;

		memcpy(&r, p, sizeof(r));
		p += sizeof(r);
		if (nnodes == alloc && !(nodes = realloc(nodes,
		    (alloc = alloc ? 2 * alloc : 1024) * sizeof(*nodes))))
			die("realloc");
		if (r.depth >= 4096 || (nnodes == 0) != (r.depth == 0))
			die("snapshot: bad depth");
		f = &nodes[nnodes];
		memset(f, 0, sizeof(*f));
		f->st.st_ino = r.ino;
		f->st.st_mode = r.mode;
		f->st.st_nlink = r.nlink;
		f->st.st_uid = r.uid;
		f->st.st_gid = r.gid;
		f->st.st_size = (off_t)r.size;
		f->st.st_blksize = 4096;
		f->st.st_blocks = (blkcnt_t)((r.size + 511) / 512);
		f->st.st_atim.tv_sec = r.at, f->st.st_atim.tv_nsec = r.atn;
		f->st.st_mtim.tv_sec = r.mt, f->st.st_mtim.tv_nsec = r.mtn;
		f->st.st_ctim.tv_sec = r.ct, f->st.st_ctim.tv_nsec = r.ctn;
		f->name = p;
		f->namelen = r.namelen;
		p += r.namelen;
		f->data = p;
		f->datalen = r.datalen;
		p += r.datalen;
		f->xlist = p;
		f->xlistlen = r.xlistlen;
		p += r.xlistlen;
		f->xvals = p;
		p += r.xvallen;
		stack[r.depth] = (uint32_t)nnodes;
		if (r.depth > 0) {
			struct fnode *d = &nodes[stack[r.depth - 1]];

			f->parent = stack[r.depth - 1];
			if (d->nkids == d->kcap && !(d->kids = realloc(d->kids,
			    (d->kcap = d->kcap ? 2 * d->kcap : 8) *
			    sizeof(*d->kids))))
				die("realloc");
			d->kids[d->nkids++] = (uint32_t)nnodes;
		}
		nnodes++;
	}
	/* Names end where data starts: make them strings of their own. */
	for (size_t i = 0; i < nnodes; i++) {
		char *nm = malloc(nodes[i].namelen + 1);

		if (!nm)
			die("malloc");
		memcpy(nm, nodes[i].name, nodes[i].namelen);
		nm[nodes[i].namelen] = '\0';
		nodes[i].name = nm;
	}
	for (tsize = 16; tsize < 2 * nnodes; tsize *= 2)
		;
	if (!(table = calloc(tsize, sizeof(*table))))
		die("calloc");
	tmask = tsize - 1;
	for (size_t i = 1; i < nnodes; i++)
		table_add((uint32_t)i);
}

#define NODE_OF(ino) (&nodes[(ino) - 1])
#define ID_OF(f) ((fuse_ino_t)((f) - nodes) + 1)

static void
snap_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	/* As odbfs_init(). */
	no_open = !!(conn->capable & FUSE_CAP_NO_OPEN_SUPPORT);
	if (conn->capable & FUSE_CAP_ASYNC_READ)
		conn->want |= FUSE_CAP_ASYNC_READ;
	if (conn->capable & FUSE_CAP_CACHE_SYMLINKS)
		conn->want |= FUSE_CAP_CACHE_SYMLINKS;
	conn->want &= ~(unsigned)FUSE_CAP_AUTO_INVAL_DATA;
	conn->want &= ~(unsigned)FUSE_CAP_ATOMIC_O_TRUNC;
	conn->want &= ~(unsigned)FUSE_CAP_READDIRPLUS_AUTO;
}

static void
snap_entry(struct fnode *f, struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	e->ino = ID_OF(f);
	e->attr = f->st;
	e->attr_timeout = e->entry_timeout = SNAP_TIMEOUT;
}

static void
snap_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fnode *f = table_find((uint32_t)(parent - 1), name);
	struct fuse_entry_param e;

	if (!f) {
		/* As odbfs: a tree's misses are cached, objects/'s for 1 s. */
		memset(&e, 0, sizeof(e));
		e.entry_timeout = dir_cache ? SNAP_TIMEOUT : 1.0;
		fuse_reply_entry(req, &e);
		return;
	}
	snap_entry(f, &e);
	fuse_reply_entry(req, &e);
}

static void
snap_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)fi;
	fuse_reply_attr(req, &NODE_OF(ino)->st, SNAP_TIMEOUT);
}

static void
snap_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct fnode *f = NODE_OF(ino);
	char buf[4097];
	size_t len = f->datalen < 4096 ? f->datalen : 4096;

	memcpy(buf, f->data, len);
	buf[len] = '\0';
	fuse_reply_readlink(req, buf);
}

static void
snap_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	fi->cache_readdir = fi->keep_cache = dir_cache;
	fuse_reply_open(req, fi);
}

static void
snap_readdir_common(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
    bool plus)
{
	struct fnode *d = NODE_OF(ino);
	size_t used = 0, total = (size_t)d->nkids + 2;
	char *buf = malloc(size);

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	for (size_t i = (size_t)off; i < total; i++) {
		struct fuse_entry_param e = { 0 };
		const char *nm;
		size_t len;

		if (i < 2) {
			nm = i ? ".." : ".";
			e.attr.st_mode = S_IFDIR;
			e.attr.st_ino = d->st.st_ino;
		} else {
			struct fnode *f = &nodes[d->kids[i - 2]];

			nm = f->name;
			if (plus)
				snap_entry(f, &e);
			else
				e.attr = f->st;
		}
		if (plus)
			len = fuse_add_direntry_plus(req, buf + used,
			    size - used, nm, &e, (off_t)(i + 1));
		else
			len = fuse_add_direntry(req, buf + used, size - used,
			    nm, &e.attr, (off_t)(i + 1));
		if (len > size - used)
			break;
		used += len;
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void
snap_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
    struct fuse_file_info *fi)
{
	(void)fi;
	snap_readdir_common(req, ino, size, off, false);
}

static void
snap_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
    struct fuse_file_info *fi)
{
	(void)fi;
	snap_readdir_common(req, ino, size, off, true);
}

static void
snap_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (S_ISDIR(NODE_OF(ino)->st.st_mode)) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	if (no_open) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	fi->keep_cache = 1;
	fi->noflush = 1;
	fuse_reply_open(req, fi);
}

/*
 * --push: the first read of a file of a directory stores the directory's
 * next files in the kernel's page cache (FUSE_NOTIFY_STORE), as odbfs
 * reads a walk ahead, but at once and with nothing to rebuild.
 */
static void
push_after(struct fnode *f)
{
	struct fnode *d = &nodes[f->parent];
	uint32_t k = 0;

	if (atomic_exchange(&d->pushed, 1))
		return;
	while (k < d->nkids && &nodes[d->kids[k]] != f)
		k++;
	for (k++; k < d->nkids; k++) {
		struct fnode *c = &nodes[d->kids[k]];
		struct fuse_bufvec bv = FUSE_BUFVEC_INIT(c->datalen);

		if (!S_ISREG(c->st.st_mode) || c->datalen == 0 ||
		    c->datalen > PUSH_MAX)
			continue;
		bv.buf[0].mem = (void *)c->data;
		/* -ENOENT: the kernel has no inode for it; it is read then. */
		if (fuse_lowlevel_notify_store(session, ID_OF(c), 0, &bv, 0) ==
		    -ENOSYS)
			return;
	}
}

static void
snap_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
    struct fuse_file_info *fi)
{
	struct fnode *f = NODE_OF(ino);

	(void)fi;
	if (off < 0 || (size_t)off >= f->datalen) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (size > f->datalen - (size_t)off)
		size = f->datalen - (size_t)off;
	fuse_reply_buf(req, f->data + off, size);
	if (push && off == 0)
		push_after(f);
}

static void
snap_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct fnode *f = NODE_OF(ino);
	const char *v = f->xvals;

	for (size_t i = 0; i < f->xlistlen; i += strlen(f->xlist + i) + 1) {
		uint32_t len;

		memcpy(&len, v, 4);
		if (!strcmp(f->xlist + i, name)) {
			if (size == 0)
				fuse_reply_xattr(req, len);
			else if (size < len)
				fuse_reply_err(req, ERANGE);
			else
				fuse_reply_buf(req, v + 4, len);
			return;
		}
		v += 4 + len;
	}
	fuse_reply_err(req, ENODATA);
}

static void
snap_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct fnode *f = NODE_OF(ino);

	if (size == 0)
		fuse_reply_xattr(req, f->xlistlen);
	else if (size < f->xlistlen)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, f->xlist, f->xlistlen);
}

static void
snap_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv = { 0 };

	(void)ino;
	sv.f_bsize = 4096;
	sv.f_frsize = 4096;
	sv.f_namemax = 255;
	sv.f_flag = ST_RDONLY;
	fuse_reply_statfs(req, &sv);
}

static const struct fuse_lowlevel_ops snap_ops = {
	.init = snap_init,
	.lookup = snap_lookup,
	.getattr = snap_getattr,
	.readlink = snap_readlink,
	.opendir = snap_opendir,
	.readdir = snap_readdir,
	.readdirplus = snap_readdirplus,
	.open = snap_open,
	.read = snap_read,
	.getxattr = snap_getxattr,
	.listxattr = snap_listxattr,
	.statfs = snap_statfs,
};

int
main(int argc, char **argv)
{
	struct fuse_args args;
	struct fuse_cmdline_opts opts;
	struct fuse_loop_config loop = { .max_idle_threads = 10 };
	struct fuse_session *se;
	const char *from = NULL;
	int ret = 1, n = 1;

	if (argc == 4 && !strcmp(argv[1], "--snapshot"))
		return snapshot(argv[2], argv[3]);
	/* Take our own options out before libfuse sees the rest. */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--from") && i + 1 < argc)
			from = argv[++i];
		else if (!strcmp(argv[i], "--no-dir-cache"))
			dir_cache = 0;
		else if (!strcmp(argv[i], "--push"))
			push = 1;
		else
			argv[n++] = argv[i];
	}
	argc = n;
	args = (struct fuse_args)FUSE_ARGS_INIT(argc, argv);
	if (fuse_parse_cmdline(&args, &opts) != 0 || !opts.mountpoint) {
		fprintf(stderr, "usage: floorfs [--from FILE [--no-dir-cache] [--push]] "
		    "[-f] MOUNTPOINT\n       floorfs --snapshot SRC FILE\n");
		return 1;
	}
	if (from)
		load(from);
	else
		for (size_t i = 0; i < sizeof(bytes); i++)
			bytes[i] = (char)(i * 2654435761u >> 24);
	se = fuse_session_new(&args, from ? &snap_ops : &ops,
	    sizeof(ops), NULL);
	session = se;
	if (se && fuse_set_signal_handlers(se) == 0 &&
	    fuse_session_mount(se, opts.mountpoint) == 0) {
		fuse_daemonize(opts.foreground);
		ret = fuse_session_loop_mt(se, &loop) < 0;
		fuse_session_unmount(se);
	}
	if (se) {
		fuse_remove_signal_handlers(se);
		fuse_session_destroy(se);
	}
	free(opts.mountpoint);
	fuse_opt_free_args(&args);
	return ret;
}
