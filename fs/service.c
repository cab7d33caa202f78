/*
 * service: the supervisor's side of the daemon (see service.h), on
 * libsystemd's sd_notify(), which needs no running systemd to link or to
 * be called: without NOTIFY_SOCKET it does nothing.
 */
#include <limits.h>
#include <stdio.h>
#include <systemd/sd-daemon.h>

#include "service.h"

/* "REPO on MOUNTPOINT", set before any thread starts. */
static char what[2 * PATH_MAX + 8];

void
service_describe(const char *repo, const char *mountpoint)
{
	snprintf(what, sizeof(what), "%s on %s", repo, mountpoint);
}

/*
 * In the daemon's name: a process with CAP_SYS_ADMIN may send another's
 * pid (a root warden); sd_pid_notify() falls back to the sender's own.
 */
void
service_ready(pid_t daemon)
{
	sd_pid_notifyf(daemon, 0, "READY=1\nSTATUS=serving %s", what);
}

void
service_stopping(void)
{
	sd_notify(0, "STOPPING=1\nSTATUS=stopping");
}
