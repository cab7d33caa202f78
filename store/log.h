/*
 * log: what the store's own work needs of logging beyond the public
 * odbstore/log.h, which it includes.
 */
#ifndef ODBFS_LOG_PRIVATE_H
#define ODBFS_LOG_PRIVATE_H

#include <stdbool.h>

#include "odbstore/log.h"

/*
 * One failure, one line: between log_hold() and log_release(), this
 * thread's first line is kept and the others dropped; log_release(true)
 * then sends the kept line, log_release(false) drops it too. For work that
 * may fail several ways at once, or be tried again.
 */
void log_hold(void);
void log_release(bool emit_held);

#endif
