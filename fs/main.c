/*
 * main: odbfs [options] REPO MOUNTPOINT
 *
 * Parses the command line the way every fuse3 program does (-f, -d, -s,
 * -o ...), opens the repository before mounting so that a bad REPO fails
 * with one line and status 1, then runs the session until SIGTERM, SIGINT
 * or an unmount ends it, with status 0.
 */
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "log.h"
#include "node.h"
#include "odbfs.h"

#ifndef ODBFS_VERSION
#define ODBFS_VERSION "unknown"
#endif

struct config {
	char *repo;
	double negative_timeout;
};

#define OPT(t, p) { t, offsetof(struct config, p), 1 }
static const struct fuse_opt config_opts[] = {
	OPT("negative_timeout=%lf", negative_timeout),
	FUSE_OPT_END
};

/* The first non-option argument is REPO; the second, the mountpoint. */
static int
take_repo(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct config *c = data;

	(void)outargs;
	if (key == FUSE_OPT_KEY_NONOPT && !c->repo) {
		c->repo = strdup(arg);
		return 0;
	}
	return 1;
}

static void
usage(const char *prog)
{
	printf("usage: %s [options] REPO MOUNTPOINT\n\n"
	    "Mount the object database of the git repository REPO read-only.\n\n"
	    "odbfs options:\n"
	    "    -o negative_timeout=T  seconds the kernel may cache a miss "
	    "(default 1)\n\n", prog);
}

static void
to_syslog(enum log_level level, const char *msg)
{
	static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO,
	    LOG_DEBUG };

	syslog(prio[level], "%s", msg);
}

/* Mount options every odbfs mount has: read-only, named for its repo. */
static int
add_mount_opts(struct fuse_args *args, const char *repo)
{
	char *opts = NULL, *fsname;
	int ret;

	if (asprintf(&fsname, "fsname=odbfs:%s", repo) < 0)
		return -1;
	ret = fuse_opt_add_opt_escaped(&opts, fsname) ||
	    fuse_opt_add_opt(&opts, "ro,default_permissions,subtype=odbfs");
	free(fsname);
	if (ret == 0) {
		char *arg;

		if (asprintf(&arg, "-o%s", opts) < 0)
			ret = -1;
		else
			ret = fuse_opt_add_arg(args, arg);
		free(arg);
	}
	free(opts);
	return ret;
}

int
main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct config conf = { .negative_timeout = 1.0 };
	struct fuse_cmdline_opts opts = { 0 };
	struct fuse_loop_config loop = { 0 };
	struct fuse_session *se = NULL;
	struct odbfs fs = { 0 };
	const char *why;
	int ret = 1;

	if (fuse_opt_parse(&args, &conf, config_opts, take_repo) != 0 ||
	    fuse_parse_cmdline(&args, &opts) != 0)
		goto out;
	if (opts.show_help) {
		usage(argv[0]);
		fuse_cmdline_help();
		fuse_lowlevel_help();
		ret = 0;
		goto out;
	}
	if (opts.show_version) {
		printf("odbfs version %s\n", ODBFS_VERSION);
		fuse_lowlevel_version();
		ret = 0;
		goto out;
	}
	if (!conf.repo || !opts.mountpoint) {
		fprintf(stderr, "odbfs: missing %s\nusage: %s [options] REPO "
		    "MOUNTPOINT (see %s --help)\n", conf.repo ? "MOUNTPOINT" :
		    "REPO and MOUNTPOINT", argv[0], argv[0]);
		goto out;
	}
	if (conf.negative_timeout < 0) {
		fprintf(stderr, "odbfs: negative_timeout must not be "
		    "negative\n");
		goto out;
	}
	if (odb_open(conf.repo, &fs.odb, &why) < 0) {
		fprintf(stderr, "odbfs: %s: %s\n", conf.repo, why);
		goto out;
	}
	fs.rawsz = odb_repo(fs.odb)->rawsz;
	fs.uid = getuid();
	fs.gid = getgid();
	fs.negative_timeout = conf.negative_timeout;
	node_init(fs.rawsz);

	if (add_mount_opts(&args, odb_repo(fs.odb)->gitdir) != 0)
		goto out;
	se = fuse_session_new(&args, &odbfs_ops, sizeof(odbfs_ops), &fs);
	if (!se)
		goto out;
	if (fuse_set_signal_handlers(se) != 0)
		goto out;
	if (fuse_session_mount(se, opts.mountpoint) != 0)
		goto out_handlers;
	if (!opts.foreground) {
		openlog("odbfs", LOG_PID, LOG_DAEMON);
		log_set_sink(to_syslog, LOGL_INFO);
	}
	fuse_daemonize(opts.foreground);
	if (opts.singlethread) {
		ret = fuse_session_loop(se);
	} else {
		loop.clone_fd = opts.clone_fd;
		/* UINT_MAX means unset; libfuse 3.14 warns if passed on. */
		loop.max_idle_threads = opts.max_idle_threads == UINT_MAX ?
		    10 : opts.max_idle_threads;
		ret = fuse_session_loop_mt(se, &loop);
	}
	/* A positive value is the signal that ended the loop: a clean end. */
	ret = ret < 0 ? 1 : 0;
	fuse_session_unmount(se);
out_handlers:
	fuse_remove_signal_handlers(se);
out:
	if (se)
		fuse_session_destroy(se);
	odb_close(fs.odb);
	free(opts.mountpoint);
	free(conf.repo);
	fuse_opt_free_args(&args);
	return ret;
}
