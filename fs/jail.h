/*
 * jail: what the daemon gives up once it has mounted, before it serves
 * a request, for good:
 *
 *   - started by root: every uid and gid (real, effective, saved, file
 *     system) the owner's it reads as (owner.h), and so no capability;
 *     read as root, root's ids stay but every capability goes;
 *   - no_new_privs: no exec can give any back;
 *   - a seccomp filter that allows the system calls serving uses and
 *     fails every other one with EPERM (mount, setuid, ptrace, exec,
 *     fork, ...), opens files to read only and maps no page
 *     executable.
 *
 * Unmounting is the warden's (warden.h) from then on.
 */
#ifndef ODBFS_JAIL_H
#define ODBFS_JAIL_H

#include "owner.h"

/* Enter the jail for good, as o; -errno if any step failed. */
int jail_enter(const struct owner *o);

/*
 * Every capability given up but keep (a CAP_ number; -1 for none), the
 * bounding set's as far as the process may: for the warden, which keeps
 * CAP_SYS_ADMIN alone. -errno.
 */
int jail_caps(int keep);

#endif
