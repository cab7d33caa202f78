/*
 * warden: the one process of a mount that keeps the rights to unmount
 * it, and reads no repository.
 *
 * Forked once the daemon has mounted, before the daemon gives up every
 * privilege (jail.h), the warden checks that the mount answers (a stat(2)
 * of its root, which the daemon serves) and then tells a supervisor
 * READY=1 on the daemon's behalf (service.h); then it waits for the
 * daemon to end, however it ends (an unmount, a signal, a crash, SIGKILL:
 * the end of a pipe that only the daemon holds closes with it), unmounts,
 * and exits. A daemon that has given up its privileges cannot unmount;
 * with a warden, the mount never outlives it. Should the warden be
 * killed, the daemon (its parent: SIGCHLD) ends at once rather than
 * serve with nobody to unmount, and leaves the mount to root.
 */
#ifndef ODBFS_WARDEN_H
#define ODBFS_WARDEN_H

#include <stdbool.h>

/*
 * Fork the warden of the mount on mountpoint (just mounted). The caller
 * goes on as the daemon; -errno if there can be no warden (then the
 * daemon must unmount itself).
 */
int warden_start(const char *mountpoint);

/*
 * The daemon's end: release its /dev/fuse descriptor fusefd (the number
 * stays open, on /dev/null, for whoever closes it: libfuse), so that no
 * unmount waits on a request no one will read; then let the warden
 * unmount, unless gone (the mount went first: the session ended on
 * ENODEV), and wait for it. 0 once it has, else -EIO: the warden said
 * why on stderr.
 */
int warden_stop(int fusefd, bool gone);

#endif
