/*
 * jail: see jail.h. The allow-list below is what strace(1) saw the daemon
 * call under the bats suites (forge, objects, browse, live, lifecycle,
 * owner, hostile...), less what it calls only before the jail (mount,
 * the set*id calls, execve), plus what libc and libfuse call on paths no
 * suite took (splice for -o splice_*, the signals' returns); grouped by
 * what needs it. Allowed with any arguments, but for the calls filter()
 * checks an argument of.
 *
 * A call outside it fails with EPERM, not a kill: a call the list missed
 * (a libc that changed, a path no suite takes) fails what needed it,
 * with the error the code already handles, not the mount of every
 * reader; and what the list leaves out is what would be worth something
 * to an attacker inside (mount, setuid, ptrace, execve, fork), which
 * fails just as surely.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "jail.h"

static const char *const allowed[] = {
	/* memory (mmap, mprotect: filter()'s); liburcu's readers */
	"brk", "munmap", "mremap", "madvise", "membarrier",
	/* reading repositories: files, directories, links */
	"close", "read", "pread64", "lseek", "fstat",
	"newfstatat", "statx", "getdents64", "readlink", "readlinkat",
	"access", "faccessat", "faccessat2", "fcntl", "dup", "dup3",
	/* /dev/fuse: requests in, replies and cache stores out */
	"write", "writev", "splice", "vmsplice", "pipe2",
	/* watching: inotify, eventfds */
	"inotify_init1", "inotify_add_watch", "inotify_rm_watch",
	"eventfd2", "poll", "ppoll",
	/* threads */
	"futex", "set_robust_list", "rseq", "exit", "exit_group",
	"sched_yield", "sched_getaffinity", "gettid", "getpid", "tgkill",
	"sigaltstack", "rt_sigaction", "rt_sigprocmask",
	"rt_sigreturn", "restart_syscall",
	/* time */
	"clock_gettime", "clock_nanosleep", "nanosleep", "gettimeofday",
	/* the warden's end, and the daemon's log and supervisor (AF_UNIX) */
	"wait4", "connect", "sendto", "sendmsg", "getsockopt", "setsockopt",
	/* harmless questions (sysinfo: qsort()'s of the memory there is) */
	"getuid", "geteuid", "getgid", "getegid", "getrandom", "prlimit64",
	"sysinfo",
};

/* Add rule, with its arguments' conditions; false if it cannot be. */
static bool
add(scmp_filter_ctx ctx, uint32_t action, const char *name, unsigned n,
    const struct scmp_arg_cmp *cmp)
{
	int nr = seccomp_syscall_resolve_name(name);

	/* Not a call of this architecture: nothing to allow. */
	if (nr == __NR_SCMP_ERROR)
		return true;
	return seccomp_rule_add_array(ctx, action, nr, n, cmp) == 0;
}

/* The filter, loaded. -errno. */
static int
filter(void)
{
	/* Threads only: a new process could exec what it liked. */
	const struct scmp_arg_cmp thread = SCMP_A0(SCMP_CMP_MASKED_EQ,
	    CLONE_THREAD, CLONE_THREAD);
	const struct scmp_arg_cmp unix_only = SCMP_A0(SCMP_CMP_EQ, AF_UNIX);
	/*
	 * Files opened to read only: the daemon, which has the owner's
	 * ids, can change none of the owner's files (nor make, rename or
	 * remove one: those calls are not in the list).
	 */
	const struct scmp_arg_cmp read_only = SCMP_A2(SCMP_CMP_MASKED_EQ,
	    O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND, O_RDONLY);
	/*
	 * No page made executable: code the daemon did not load before
	 * the jail (preload()) cannot run, whatever an attacker writes.
	 */
	const struct scmp_arg_cmp no_exec = SCMP_A2(SCMP_CMP_MASKED_EQ,
	    PROT_EXEC, 0);
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	bool ok = ctx != NULL;
	int ret;

	for (size_t i = 0; ok && i < sizeof(allowed) / sizeof(allowed[0]); i++)
		ok = add(ctx, SCMP_ACT_ALLOW, allowed[i], 0, NULL);
	ok = ok && add(ctx, SCMP_ACT_ALLOW, "clone", 1, &thread) &&
	    add(ctx, SCMP_ACT_ALLOW, "openat", 1, &read_only) &&
	    add(ctx, SCMP_ACT_ALLOW, "socket", 1, &unix_only) &&
	    add(ctx, SCMP_ACT_ALLOW, "mmap", 1, &no_exec) &&
	    add(ctx, SCMP_ACT_ALLOW, "mprotect", 1, &no_exec) &&
	    /* Whose flags it cannot see: glibc falls back to clone. */
	    add(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL);
	ret = ok ? seccomp_load(ctx) : -ENOMEM;
	seccomp_release(ctx);
	return ret;
}

/*
 * The bounding set emptied but for keep (-1: none), while the effective
 * ids are root's: it needs CAP_SETPCAP, which a unit may have bounded
 * away; no_new_privs keeps an exec from using what is left anyway.
 */
static void
drop_bounding(int keep)
{
	for (int cap = 0; prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++)
		if (cap != keep && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
			break;
}

/* Every capability gone but keep: permitted, effective, inheritable. */
static int
set_caps(int keep)
{
	struct __user_cap_header_struct head = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct caps[2] = { { 0 } };

	if (keep >= 0) {
		caps[keep / 32].permitted = 1U << (keep % 32);
		caps[keep / 32].effective = 1U << (keep % 32);
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 &&
	    errno != EINVAL)
		return -errno;
	return syscall(SYS_capset, &head, caps) < 0 ? -errno : 0;
}

int
jail_caps(int keep)
{
	drop_bounding(keep);
	return set_caps(keep);
}

/*
 * What the daemon would otherwise map executable after the jail, where
 * the filter refuses it: glibc loads libgcc_s the first time a thread
 * is cancelled (libfuse cancels its workers at the end), to unwind it;
 * loaded now, and never unloaded, glibc finds it there then. Without
 * it, glibc aborts that cancel, as it would anyway.
 */
static void
preload(void)
{
	(void)dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_NODELETE);
}

int
jail_enter(const struct owner *o)
{
	int ret;

	preload();

	if ((ret = owner_root(o)) < 0)
		return ret;
	if (geteuid() == 0 || getuid() == 0) {
		drop_bounding(-1);
		if (!o->taken && setgroups(0, NULL) < 0)
			return -errno;
		if (setresgid(o->gid, o->gid, o->gid) < 0 ||
		    setresuid(o->uid, o->uid, o->uid) < 0)
			return -errno;
	}
	if ((ret = set_caps(-1)) < 0)
		return ret;
	/*
	 * Each change of ids set the dumpable flag from fs.suid_dumpable:
	 * cleared, the owner, whose ids these now are, can neither trace
	 * the daemon nor read its memory.
	 */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	return filter();
}
