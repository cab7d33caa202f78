/*
 * floorfs: the FUSE protocol floor. A file system whose root answers every
 * lookup with ENOENT (a negative entry that expires at once) and does no
 * other work, so that a stat through it costs only the kernel and the
 * /dev/fuse round trip. bench/run.sh compares odbfs's misses with it.
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

static void
floor_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	(void)parent;
	(void)name;
	fuse_reply_err(req, ENOENT);
}

static void
floor_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st = { .st_ino = ino, .st_mode = S_IFDIR | 0555,
	    .st_nlink = 2 };

	(void)fi;
	fuse_reply_attr(req, &st, 86400);
}

static const struct fuse_lowlevel_ops ops = {
	.lookup = floor_lookup,
	.getattr = floor_getattr,
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
