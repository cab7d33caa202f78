/*
 * service: what the daemon tells a supervisor, through systemd's
 * sd_notify(3) protocol: READY=1 once the mount answers, STOPPING=1 when
 * it begins to stop. Outside a supervisor that listens (no
 * NOTIFY_SOCKET in the environment) each is a no-op.
 */
#ifndef ODBFS_SERVICE_H
#define ODBFS_SERVICE_H

#include <sys/types.h>

/* What the daemon serves, for the STATUS= lines; copied. */
void service_describe(const char *repo, const char *mountpoint);

/*
 * The mount answers requests, said for the daemon, process daemon (the
 * warden says it, whose own pid a supervisor would not take).
 */
void service_ready(pid_t daemon);

/* The daemon stops: no request is answered after its unmount. */
void service_stopping(void);

#endif
