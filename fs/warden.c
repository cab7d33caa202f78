/*
 * warden: see warden.h. The warden's life, in the forked child:
 *
 *   watch()        every signal a stop sends ignored, every descriptor
 *                  closed but the pipe's end; root's real and saved ids,
 *                  kept by the daemon until now, made all its ids, no
 *                  supplementary group, with
 *                  CAP_SYS_ADMIN alone and no_new_privs
 *   mount_id()     the mount's id, before the daemon serves
 *                  statx() of the mount's root, answered by the daemon:
 *                  READY=1
 *                  read() of the pipe: EOF when the daemon has ended,
 *                  GONE first if its mount went before it (an unmount:
 *                  nothing to do, another may be on the path since)
 *   unmount()      umount2(2), lazily, of the mount on the path if it is
 *                  still the one it was (no fd is held on it, which
 *                  would make the user's unmount EBUSY);
 *                  not root, fusermount3 -u, as libfuse itself would
 *
 * What it reads from the daemon is a stat(2) the kernel checked and the
 * end of a pipe: nothing the repository's bytes can steer.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jail.h"
#include "odbstore/log.h"
#include "service.h"
#include "warden.h"

/* What the daemon writes when its mount went first: leave the path be. */
#define GONE 'g'

/*
 * The daemon's side: the pipe's end it holds, the warden, the path it
 * unmounts, and the thread a signal from its end goes to.
 */
static int hold = -1;
static pid_t warden;
static const char *watched;
static pthread_t daemon_main;

/*
 * SIGCHLD: the warden, the daemon's one child, has ended while the
 * daemon serves: nobody is left to unmount, so the daemon ends too, as
 * SIGTERM ends it (libfuse's handler, in the thread that runs its loop),
 * rather than serve on unattended. warden_stop() says what is left.
 * Not SA_RESTART: the wait the SIGTERM interrupts, nested in this
 * handler, must end, as it would for a SIGTERM alone.
 */
static void
on_warden_end(int sig)
{
	(void)sig;
	pthread_kill(daemon_main, SIGTERM);
}

/*
 * Linux 6.8's 64-bit mount id, never used again; older kernels give the
 * one that the next mount may reuse (5.8 on), with the device, which may
 * be too, and before 5.8 the device alone.
 */
#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x4000U
#endif

/* Which mount: its id, and its device where the id may be reused. */
struct mount_id {
	uint64_t id;
	uint32_t dev_major, dev_minor;
};

/*
 * The mount on path, from the attributes the kernel keeps: no request
 * to the daemon, which may not serve yet, or no more.
 */
static bool
mount_id(const char *path, struct mount_id *m)
{
	struct statx stx;

	if (statx(AT_FDCWD, path, AT_STATX_DONT_SYNC | AT_SYMLINK_NOFOLLOW |
	    AT_NO_AUTOMOUNT, STATX_MNT_ID | STATX_MNT_ID_UNIQUE, &stx) < 0)
		return false;
	m->id = stx.stx_mask & (STATX_MNT_ID | STATX_MNT_ID_UNIQUE) ?
	    stx.stx_mnt_id : 0;
	m->dev_major = stx.stx_dev_major;
	m->dev_minor = stx.stx_dev_minor;
	return true;
}

/*
 * Unmount the mount on mountpoint if it is still ours: 0, or 1 after a
 * message.
 */
static int
unmount(const char *mountpoint, const struct mount_id *ours)
{
	struct mount_id now;
	pid_t pid;
	int st;

	if (getuid() != 0) {
		/* fusermount3 checks the mount is this user's. */
		if ((pid = fork()) == 0) {
			execlp("fusermount3", "fusermount3", "-u", "-z", "-q",
			    "--", mountpoint, (char *)NULL);
			_exit(127);
		}
		return pid > 0 && waitpid(pid, &st, 0) == pid &&
		    WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
	}
	/* Not this one if the user unmounted it; another may be there. */
	if (!mount_id(mountpoint, &now) || now.id != ours->id ||
	    now.dev_major != ours->dev_major || now.dev_minor != ours->dev_minor)
		return 0;
	if (umount2(mountpoint, MNT_DETACH | UMOUNT_NOFOLLOW) == 0 ||
	    errno == EINVAL)
		return 0;
	fprintf(stderr, "odbfs: warden: cannot unmount %s: %s\n", mountpoint,
	    strerror(errno));
	return 1;
}

/* The warden, in the child: never returns. */
static void __attribute__((noreturn))
watch(int end, const char *mountpoint, pid_t daemon)
{
	static const int quiet[] = { SIGTERM, SIGINT, SIGHUP, SIGPIPE,
	    SIGUSR1, SIGUSR2, SIGQUIT };
	struct mount_id ours;
	struct statx stx;
	char byte = 0;
	ssize_t n;

	for (size_t i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++)
		signal(quiet[i], SIG_IGN);
	/* The daemon's descriptors, its /dev/fuse first: not the warden's. */
	if (dup2(end, 3) < 0)
		_exit(1);
	end = 3;
	/* Before Linux 5.9, one by one. */
	if (close_range(4, ~0U, 0) < 0)
		for (long fd = 4, max = sysconf(_SC_OPEN_MAX); fd < max; fd++)
			close((int)fd);
	/*
	 * Root's ids, kept real and saved by the daemon until now, none of
	 * the owner's supplementary groups it took, and of
	 * root's capabilities the one to unmount and to speak for the
	 * daemon (sd_notify with its pid); no exec gives more. Not root,
	 * it runs fusermount3, which no_new_privs would disarm.
	 */
	if (getuid() == 0 && (setresgid(0, 0, 0) < 0 ||
	    setresuid(0, 0, 0) < 0 || setgroups(0, NULL) < 0 ||
	    jail_caps(CAP_SYS_ADMIN) < 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0))
		_exit(1);
	/* The mount's id, from what the kernel made at mount: no request. */
	if (!mount_id(mountpoint, &ours))
		_exit(1);
	/* Its root, as the daemon answers for it once it serves. */
	if (statx(AT_FDCWD, mountpoint, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
	    STATX_BASIC_STATS, &stx) == 0)
		service_ready(daemon);
	/* GONE from a daemon whose mount went first; EOF at its end. */
	while ((n = read(end, &byte, 1)) > 0 || (n < 0 && errno == EINTR))
		if (byte == GONE)
			_exit(0);
	_exit(unmount(mountpoint, &ours));
}

int
warden_start(const char *mountpoint)
{
	siginfo_t si = { 0 };
	int fds[2];
	pid_t daemon = getpid();

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	if ((warden = fork()) < 0) {
		close(fds[0]);
		close(fds[1]);
		return -errno;
	}
	if (warden == 0) {
		close(fds[1]);
		watch(fds[0], mountpoint, daemon);
	}
	close(fds[0]);
	hold = fds[1];
	watched = mountpoint;
	daemon_main = pthread_self();
	sigaction(SIGCHLD, &(struct sigaction){ .sa_handler = on_warden_end,
	    .sa_flags = SA_NOCLDSTOP }, NULL);
	/* Gone before the handler was there. */
	if (waitid(P_PID, (id_t)warden, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
	    si.si_pid == warden)
		on_warden_end(SIGCHLD);
	return 0;
}

int
warden_stop(int fusefd, bool gone)
{
	/* Read only: the jail opens nothing to write. */
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int st;

	if (warden <= 0)
		return 0;
	/* Its end is expected from here: no SIGTERM of the daemon's own. */
	signal(SIGCHLD, SIG_DFL);
	if (null >= 0) {
		dup3(null, fusefd, O_CLOEXEC);
		close(null);
	}
	if (gone && write(hold, (char []){ GONE }, 1) < 0)
		gone = false;	/* the warden checks which mount is there */
	close(hold);
	hold = -1;
	while (waitpid(warden, &st, 0) < 0)
		if (errno != EINTR)
			return -EIO;
	warden = 0;
	if (WIFSIGNALED(st)) {
		/* The jailed daemon cannot unmount: the operator's to do. */
		log_msg(LOGL_ERROR, "%s: the warden, which unmounts, was "
		    "killed by signal %d; the mount is left, no longer "
		    "served, for root to unmount (umount -l %s)", watched,
		    WTERMSIG(st), watched);
		return -EIO;
	}
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}
