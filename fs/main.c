/*
 * main: odbfs [options] REPO MOUNTPOINT
 *
 * Parses the command line the way every fuse3 program does (-f, -d, -s,
 * -o ...), opens the repository before mounting so that a bad REPO fails
 * with one line and status 1, then runs the session until SIGTERM, SIGINT
 * or an unmount ends it, with status 0.
 *
 * Started by root, the daemon opens and reads the repository as its owner
 * (owner.c), is root again only around mount(2), and gives up root for
 * good once mounted:
 *
 *   choose_owner()   the repository's owner, or -o owner=USER; as
 *                    root, every entry the paths go through is looked
 *                    at before anything they name is read
 *   owner_take()     before odb_open(): alternates, gitdir: and a
 *                    symlinked objects/ resolve with the owner's rights
 *   owner_root()     fuse_session_mount(), then owner_resume()
 *   warden_start()   the process that unmounts, and says READY=1
 *   jail_enter()     the owner's ids alone, no capability, a filter
 *   ...              threads start, requests are served, as the owner
 *   warden_stop()    at the end: the warden unmounts, then exits
 */
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "ahead.h"
#include "forge.h"
#include "jail.h"
#include "odbstore/log.h"
#include "node.h"
#include "odbfs.h"
#include "odbstore/oid.h"
#include "owner.h"
#include "readers.h"
#include "rescan.h"
#include "roster.h"
#include "served.h"
#include "service.h"
#include "treecache.h"
#include "trim.h"
#include "warden.h"

#ifndef ODBFS_VERSION
#define ODBFS_VERSION "unknown"
#endif

struct config {
	char *repo;
	char *root;		/* --root DIR: every repository under DIR */
	char *max_repos;	/* -o max_repos=N: open at once, at most */
	char *negative_timeout;	/* seconds, as given */
	char *refresh;		/* watch, never, poll=SECONDS */
	char *loglevel;		/* error, warn, info, debug */
	int verify;		/* hash every object read */
	int noahead;		/* push nothing ahead of walks */
	char *owner;		/* -o owner=USER: read as USER, not REPO's owner */
	int nometa;		/* no .odbfs/ */
	char *umask;		/* octal, cleared from every mode */
};

#define OPT(t, p) { t, offsetof(struct config, p), 1 }
static const struct fuse_opt config_opts[] = {
	OPT("negative_timeout=%s", negative_timeout),
	OPT("refresh=%s", refresh),
	OPT("loglevel=%s", loglevel),
	OPT("verify", verify),
	OPT("noahead", noahead),
	OPT("owner=%s", owner),
	OPT("nometa", nometa),
	OPT("umask=%s", umask),
	OPT("--root=%s", root),
	OPT("--root %s", root),
	OPT("max_repos=%s", max_repos),
	FUSE_OPT_END
};

/* -o refresh=: 0 watch, N poll every N seconds, -1 never; -2 if invalid. */
static long
parse_refresh(const char *s)
{
	char *end;
	long n;

	if (!s || !strcmp(s, "watch"))
		return 0;
	if (!strcmp(s, "never"))
		return -1;
	/* Digits only: strtol would take " 5" and "+5". */
	if (strncmp(s, "poll=", 5) || !s[5] ||
	    s[5 + strspn(s + 5, "0123456789")])
		return -2;
	n = strtol(s + 5, &end, 10);
	return *end || end == s + 5 || n < 1 || n > 86400 ? -2 : n;
}

/*
 * -o negative_timeout=: seconds, a finite number >= 0 and nothing after it
 * in decimal (strtod would take "nan", "inf", "1x" and "0x10"); default
 * 1. -1 if invalid.
 */
static double
parse_seconds(const char *s)
{
	char *end;
	double t;

	if (!s)
		return 1.0;
	if (!*s || s[strspn(s, "0123456789.")])
		return -1;
	errno = 0;
	t = strtod(s, &end);
	return end == s || *end || errno || !isfinite(t) || t < 0 ? -1 : t;
}

/* -o umask=: octal, 0 to 0777; default 022. -1 if invalid. */
static int
parse_umask(const char *s)
{
	char *end;
	long m;

	if (!s)
		return 022;
	if (!*s || s[strspn(s, "01234567")])
		return -1;	/* strtol would take " 22" and "+22" */
	errno = 0;
	m = strtol(s, &end, 8);
	return end == s || *end || errno || m < 0 || m > 0777 ? -1 : (int)m;
}

/* Repositories open at once, most: a cap on fds and watches, not a goal. */
#define MAX_REPOS_CAP 65536

/* -o max_repos=: 1 to MAX_REPOS_CAP; the default if absent. 0 if invalid. */
static unsigned
parse_max_repos(const char *s)
{
	char *end;
	unsigned long n;

	if (!s)
		return FORGE_MAX_OPEN;
	if (!*s || s[strspn(s, "0123456789")])
		return 0;	/* strtoul would take "-1" and " 8" */
	errno = 0;
	n = strtoul(s, &end, 10);
	return *end || errno || n < 1 || n > MAX_REPOS_CAP ? 0 : (unsigned)n;
}

/*
 * The time of what has none of its own: when the repository was made (its
 * common directory's birth), which no push or gc changes; 0 (1970) where
 * the file system does not keep it.
 */
static time_t
dir_epoch(const char *path)
{
	struct statx stx;

	if (statx(AT_FDCWD, path, 0, STATX_BTIME, &stx) == 0 &&
	    (stx.stx_mask & STATX_BTIME))
		return (time_t)stx.stx_btime.tv_sec;
	return 0;
}

/*
 * Is the mountpoint mnt root or under it (--root)? A mount inside what
 * it scans would find itself. After a line on stderr.
 */
static bool
inside(const char *mnt, const char *root)
{
	char *m = realpath(mnt, NULL), *r = realpath(root, NULL);
	size_t len = r ? strlen(r) : 0;
	bool yes = m && r && !strncmp(m, r, len) && (m[len] == '/' ||
	    !m[len] || len == 1);

	if (!r)
		fprintf(stderr, "odbfs: %s: %s\n", root, strerror(errno));
	else if (yes)
		fprintf(stderr, "odbfs: %s: the mountpoint is inside the root "
		    "%s\n", mnt, r);
	free(m);
	free(r);
	return yes || !r;
}

/* Is path an empty directory? Mounting on a full one would hide it. */
static bool
empty_dir(const char *path)
{
	struct dirent *de;
	DIR *d = opendir(path);
	bool empty = d != NULL;

	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			empty = false;
	if (d)
		closedir(d);
	return empty;
}

/* -o loglevel=: the level, or -1 if invalid. */
static int
parse_loglevel(const char *s)
{
	static const char *const names[] = { "error", "warn", "info",
	    "debug" };

	if (!s)
		return LOGL_INFO;
	for (int i = 0; i < 4; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

/* The kernel let go of many nodes: the caches go too (trim.h). */
static void
shed(void *arg)
{
	struct odbfs *fs = arg;

	treecache_clear();
	if (fs->forge)
		forge_shed(fs);
	else if (fs->odb)
		odb_shed(fs->odb);
}

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
	printf("usage: %s [options] REPO MOUNTPOINT\n"
	    "       %s [options] --root DIR MOUNTPOINT\n\n"
	    "Mount the object database of the git repository REPO read-only,\n"
	    "or of every repository under DIR.\n\n"
	    "odbfs options:\n"
	    "    --root DIR             every repository under DIR, each in "
	    "its place\n"
	    "    -o max_repos=N         with --root: repositories open at once, "
	    "1 to 65536\n"
	    "                           (default 64)\n"
	    "    -o negative_timeout=T  seconds the kernel may cache a miss "
	    "(default 1)\n"
	    "    -o refresh=MODE        watch (default: inotify), poll=SECONDS,"
	    " or never\n"
	    "    -o loglevel=LEVEL      error, warn, info (default) or debug\n"
	    "    -o verify              hash every object read; EIO if it does "
	    "not match its id\n"
	    "    -o noahead             do not read ahead: neither the files "
	    "a walk\n"
	    "                           will read nor a large file's next "
	    "bytes\n"
	    "    -o owner=USER          when started by root, read as USER "
	    "(root: as root),\n"
	    "                           not as the owner of REPO\n"
	    "    -o nometa              no .odbfs/ directory\n"
	    "    -o umask=M             mode bits to clear, in octal (default "
	    "022: files\n"
	    "                           0644 or 0755, directories 0755)\n\n",
	    prog, prog);
}

static void
to_syslog(enum log_level level, const char *msg)
{
	static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO,
	    LOG_DEBUG };

	syslog(prio[level], "%s", msg);
}

/* Take o's identity unless it is root's; -1 after a message if not. */
static int
take(struct owner *o)
{
	int err;

	if (o->uid == 0)
		return 0;
	if ((err = owner_take(o)) < 0) {
		fprintf(stderr, "odbfs: cannot read as user %s: %s\n", o->name,
		    strerror(-err));
		return -1;
	}
	return 0;
}

/*
 * The identity REPO is read with, taken: the daemon's own when it is not
 * root (owner= may only name that); else -o owner=USER, or the owner of
 * REPO and of its .git, or of what they lead through (owner_of_repo()).
 * -1 after a message.
 */
static int
choose_owner(const struct config *c, struct owner *o)
{
	const char *why;

	if (c->owner && owner_named(c->owner, o) < 0) {
		fprintf(stderr, "odbfs: owner=%s: no such user\n", c->owner);
		return -1;
	}
	if (geteuid() != 0) {
		if (c->owner && o->uid != geteuid()) {
			fprintf(stderr, "odbfs: owner=%s: only root can read as "
			    "another user\n", c->owner);
			return -1;
		}
		*o = (struct owner){ .uid = geteuid(), .gid = getegid() };
		return 0;
	}
	if (!c->owner && owner_of_repo(c->repo, o, &why) < 0) {
		fprintf(stderr, "odbfs: %s: %s\n", c->repo, why);
		return -1;
	}
	return take(o);
}

/* ", its owner" or ", owner of ENTRY" when o was found, "" when named. */
static const char *
whose(const struct config *c, const struct owner *o)
{
	static char buf[PATH_MAX + 16];

	if (c->owner)
		return "";
	if (!o->entry[0])
		return ", its owner";
	snprintf(buf, sizeof(buf), ", owner of %s", o->entry);
	return buf;
}

/*
 * Open REPO into fs as o, who was chosen before anything REPO names was
 * read, as the forge opens each of its repositories (served.c). -1 after
 * a message.
 */
static int
open_repo(const struct config *c, const struct owner *o, struct odbfs *fs,
    const struct served_how *how)
{
	const char *why;

	if (served_open(fs, c->repo, how, false, &why) < 0) {
		if (o->taken)
			fprintf(stderr, "odbfs: %s: %s (reading as user %s%s)\n",
			    c->repo, why, o->name, whose(c, o));
		else
			fprintf(stderr, "odbfs: %s: %s\n", c->repo, why);
		return -1;
	}
	if (o->taken)
		log_msg(LOGL_INFO, "%s: reading as user %s%s", c->repo, o->name,
		    whose(c, o));
	return 0;
}

/*
 * Mount options every odbfs mount has: read-only, named for its repo.
 * The name is in /proc/mounts for every user to read: with nometa (repo
 * NULL) it is "odbfs" alone.
 */
static int
add_mount_opts(struct fuse_args *args, const char *repo)
{
	char *opts = NULL, *fsname;
	int ret;

	if (asprintf(&fsname, "fsname=odbfs%s%s", repo ? ":" : "",
	    repo ? repo : "") < 0)
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
	struct config conf = { 0 };
	struct fuse_cmdline_opts opts = { 0 };
	struct fuse_loop_config loop = { 0 };
	struct fuse_session *se = NULL;
	struct odbfs fs = { 0 };
	struct served_how how = { 0 };
	struct owner owner = { 0 };
	double negative_timeout;
	bool forge = false, warded = false, gone = false;
	long refresh;
	unsigned max_repos;
	int ret = 1, err, level, umask_bits;

	trim_init();
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
	/*
	 * libfuse opens /dev/fuse again in each worker thread for clone_fd,
	 * after the jail, whose filter opens no file to write: refused
	 * here rather than fallen back from with a line in the log.
	 */
	if (opts.clone_fd) {
		fprintf(stderr, "odbfs: -o clone_fd is not supported: the "
		    "daemon opens nothing to write once mounted, and libfuse "
		    "opens /dev/fuse for it then (odbfs(1), SECURITY)\n");
		goto out;
	}
	/* With --root, the one argument taken for REPO is the mountpoint. */
	if (conf.root && conf.repo && !opts.mountpoint) {
		if (!(opts.mountpoint = realpath(conf.repo, NULL))) {
			fprintf(stderr, "odbfs: %s: %s\n", conf.repo,
			    strerror(errno));
			goto out;
		}
		free(conf.repo);
		conf.repo = NULL;
	}
	if (conf.root && conf.repo) {
		fprintf(stderr, "odbfs: give REPO or --root DIR, not both "
		    "(usage: %s [options] --root DIR MOUNTPOINT)\n", argv[0]);
		goto out;
	}
	if (conf.root && !opts.mountpoint) {
		fprintf(stderr, "odbfs: missing MOUNTPOINT (usage: %s [options] "
		    "--root DIR MOUNTPOINT)\n", argv[0]);
		goto out;
	}
	if (!conf.root && (!conf.repo || !opts.mountpoint)) {
		fprintf(stderr, "odbfs: missing %s (usage: %s [options] REPO "
		    "MOUNTPOINT)\n", conf.repo ? "MOUNTPOINT" :
		    "REPO and MOUNTPOINT", argv[0]);
		goto out;
	}
	if ((refresh = parse_refresh(conf.refresh)) == -2) {
		fprintf(stderr, "odbfs: refresh=%s: expected watch, never or "
		    "poll=SECONDS\n", conf.refresh);
		goto out;
	}
	if (!(max_repos = parse_max_repos(conf.max_repos))) {
		fprintf(stderr, "odbfs: max_repos=%s: expected a number of "
		    "repositories, 1 to %d\n", conf.max_repos, MAX_REPOS_CAP);
		goto out;
	}
	if (conf.max_repos && !conf.root) {
		fprintf(stderr, "odbfs: max_repos= goes with --root DIR, not "
		    "with one REPO\n");
		goto out;
	}
	if ((level = parse_loglevel(conf.loglevel)) < 0) {
		fprintf(stderr, "odbfs: loglevel=%s: expected error, warn, info "
		    "or debug\n", conf.loglevel);
		goto out;
	}
	log_set_sink(NULL, (enum log_level)level);
	if ((negative_timeout = parse_seconds(conf.negative_timeout)) < 0) {
		fprintf(stderr, "odbfs: negative_timeout=%s: expected a number "
		    "of seconds, 0 or more\n", conf.negative_timeout);
		goto out;
	}
	if ((umask_bits = parse_umask(conf.umask)) < 0) {
		fprintf(stderr, "odbfs: umask=%s: expected octal mode bits, 0 "
		    "to 0777\n", conf.umask);
		goto out;
	}
	if (!empty_dir(opts.mountpoint)) {
		fprintf(stderr, "odbfs: %s: mountpoint is not an empty "
		    "directory\n", opts.mountpoint);
		goto out;
	}
	if (conf.root) {
		/* The owner of the root reads every repository under it. */
		conf.repo = conf.root;
		conf.root = NULL;
		forge = true;
		if (inside(opts.mountpoint, conf.repo) || choose_owner(&conf,
		    &owner) < 0)
			goto out;
	} else {
		how.verify = conf.verify;
		how.refresh = refresh;
		if (choose_owner(&conf, &owner) < 0 ||
		    open_repo(&conf, &owner, &fs, &how) < 0)
			goto out;
	}
	/* Files show who reads them, the one user .odbfs/ lets in. */
	fs.uid = owner.uid;
	fs.gid = owner.gid;
	fs.negative_timeout = negative_timeout;
	fs.nometa = conf.nometa;
	fs.umask = (mode_t)umask_bits;
	if (forge) {
		struct forge_opts fo = {
			.max_open = max_repos,
			.mountpoint = opts.mountpoint,
			.owner_named = conf.owner != NULL,
			.refresh = refresh,
			.verify = conf.verify,
		};

		fs.epoch = dir_epoch(conf.repo);
		node_init(NODE_GROUP);
		if (forge_open(&fs, conf.repo, &fo) < 0)
			goto out;
		if (owner.taken)
			log_msg(LOGL_INFO, "%s: reading as user %s%s",
			    conf.repo, owner.name, whose(&conf, &owner));
	} else {
		fs.epoch = dir_epoch(odb_commondir(fs.odb));
		node_init(NODE_ROOT);
	}
	if (add_mount_opts(&args, conf.nometa ? NULL : forge ? roster_root(&fs) :
	    odb_gitdir(fs.odb)) != 0)
		goto out;
	service_describe(conf.repo, opts.mountpoint);
	se = fuse_session_new(&args, &odbfs_ops, sizeof(odbfs_ops), &fs);
	if (!se)
		goto out;
	if (fuse_set_signal_handlers(se) != 0)
		goto out;
	/*
	 * libfuse ends the loop on SIGHUP, SIGINT and SIGTERM. SIGUSR1 and
	 * SIGUSR2 mean nothing here, and their default would kill the daemon
	 * and leave a dead mount (ENOTCONN) behind.
	 */
	signal(SIGUSR1, SIG_IGN);
	signal(SIGUSR2, SIG_IGN);
	if ((err = owner_root(&owner)) < 0) {
		fprintf(stderr, "odbfs: cannot be root again to mount: %s\n",
		    strerror(-err));
		goto out_handlers;
	}
	if (fuse_session_mount(se, opts.mountpoint) != 0)
		goto out_handlers;
	/* Before any thread starts or any request is read. */
	if ((err = owner_resume(&owner)) < 0) {
		fprintf(stderr, "odbfs: cannot read as user %s again: %s\n",
		    owner.name, strerror(-err));
		goto out_unmount;
	}
	/*
	 * The watcher starts after fuse_daemonize(), where a failure could
	 * only reach syslog while the command said 0: whether an inotify
	 * instance can be had at all is asked now (the user has 128 on
	 * Debian, for all their programs).
	 */
	if (refresh == 0 && (err = inotify_init1(IN_CLOEXEC)) < 0) {
		fprintf(stderr, "odbfs: %s: cannot watch for changes: %s "
		    "(fs.inotify.max_user_instances; -o refresh=poll=SECONDS "
		    "needs none)\n", conf.repo, strerror(errno));
		goto out_unmount;
	}
	if (refresh == 0)
		close(err);
	if (!opts.foreground) {
		openlog("odbfs", LOG_PID, LOG_DAEMON);
		log_set_sink(to_syslog, (enum log_level)level);
	}
	fuse_daemonize(opts.foreground);
	fs.se = se;
	/*
	 * From here the mount is the warden's to take away, and the daemon
	 * keeps no right it does not serve with: before any thread starts.
	 */
	if ((err = warden_start(opts.mountpoint)) < 0) {
		log_msg(LOGL_ERROR, "%s: cannot start the process that unmounts "
		    "it: %s", opts.mountpoint, strerror(-err));
		goto out_unmount;
	}
	warded = true;
	if ((err = jail_enter(&owner)) < 0) {
		log_msg(LOGL_ERROR, "cannot give up privileges: %s",
		    strerror(-err));
		goto out_unmount;
	}
	/* After daemonizing: a thread would not survive the fork. */
	if (forge) {
		if ((err = rescan_start(&fs)) < 0) {
			log_msg(LOGL_ERROR, "%s: cannot start the thread that "
			    "closes repositories: %s", conf.repo,
			    strerror(-err));
			goto out_unmount;
		}
	} else {
		if ((err = served_watch(&fs, &how, false)) < 0) {
			log_msg(LOGL_ERROR, "%s: cannot watch for changes: %s",
			    conf.repo, strerror(-err));
			goto out_unmount;
		}
	}
	/* Before the first request: a repository opened copies fs.ahead. */
	if (!conf.noahead && (err = ahead_start(&fs)) < 0)
		log_msg(LOGL_WARN, "cannot start the thread that reads ahead: "
		    "%s", strerror(-err));
	else
		fs.ahead = !conf.noahead;
	if (!conf.noahead && (err = readers_start()) < 0)
		log_msg(LOGL_WARN, "cannot start the thread that inflates "
		    "large objects ahead: %s", strerror(-err));
	if ((err = trim_start(shed, &fs)) < 0)
		log_msg(LOGL_WARN, "cannot start the thread that gives freed "
		    "memory back: %s", strerror(-err));
	if (opts.singlethread) {
		ret = fuse_session_loop(se);
	} else {
		/* UINT_MAX means unset; libfuse 3.14 warns if passed on. */
		loop.max_idle_threads = opts.max_idle_threads == UINT_MAX ?
		    10 : opts.max_idle_threads;
		ret = fuse_session_loop_mt(se, &loop);
	}
	/*
	 * A positive value is the signal that ended the loop: a clean end;
	 * 0, the kernel's ENODEV: the mount went first.
	 */
	gone = ret == 0;
	ret = ret < 0 ? 1 : 0;
	service_stopping();
	/* Its thread may hold a repository of the forge. */
	ahead_stop();
	/* Its thread sheds the forge's delta bases. */
	trim_stop();
	rescan_stop(&fs);
	/* Every kept reader at once: closing each repository drops none. */
	readers_clear();
	forge_close(&fs);
	served_close(&fs);
out_unmount:
	if (warded) {
		/* Threads are joined: the warden unmounts, then ends. */
		if (warden_stop(fuse_session_fd(se), gone) < 0)
			ret = 1;
	} else {
		/* Not a thread ever started: no request is served as root. */
		if ((err = owner_root(&owner)) < 0)
			log_msg(LOGL_ERROR, "cannot be root again to unmount "
			    "%s: %s", opts.mountpoint, strerror(-err));
		fuse_session_unmount(se);
	}
out_handlers:
	fuse_remove_signal_handlers(se);
out:
	if (se)
		fuse_session_destroy(se);
	rescan_stop(&fs);
	forge_close(&fs);
	served_close(&fs);
	free(opts.mountpoint);
	free(conf.repo);
	free(conf.root);
	free(conf.refresh);
	free(conf.negative_timeout);
	free(conf.loglevel);
	free(conf.owner);
	free(conf.max_repos);
	free(conf.umask);
	fuse_opt_free_args(&args);
	return ret;
}
