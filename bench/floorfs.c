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
 */
#define FUSE_USE_VERSION 34
#include <errno.h>
#include <fuse_lowlevel.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

int
main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts opts;
	struct fuse_loop_config loop = { .max_idle_threads = 10 };
	struct fuse_session *se;
	int ret = 1;

	if (fuse_parse_cmdline(&args, &opts) != 0 || !opts.mountpoint) {
		fprintf(stderr, "usage: floorfs [-f] MOUNTPOINT\n");
		return 1;
	}
	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (char)(i * 2654435761u >> 24);
	se = fuse_session_new(&args, &ops, sizeof(ops), NULL);
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
