/*
 * log: where the store says what went wrong.
 *
 * The point that detects corruption reports it once, naming the file and the
 * offset, through log_corrupt(), which returns -EFSCORRUPTED so a caller can
 * write "return log_corrupt(...)". The message also stays in a thread-local
 * buffer (log_last()) for tools that want to show it. Where messages go is
 * chosen once at start-up with log_set_sink(); by default, stderr.
 */
#ifndef ODBFS_LOG_H
#define ODBFS_LOG_H

#include <errno.h>
#include <stdbool.h>

/* Corrupt on-disk data: distinct from -ENOENT ("no such object"). */
#define EFSCORRUPTED EUCLEAN

enum log_level { LOGL_ERROR = 0, LOGL_WARN, LOGL_INFO, LOGL_DEBUG };

typedef void log_sink_fn(enum log_level level, const char *msg);

/* Send every message to sink (NULL: stderr); keep levels <= max_level. */
void log_set_sink(log_sink_fn *sink, enum log_level max_level);

void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Log a line the first time only: for what a rescan or a reload finds
 * again each time (a bad name, a file of the wrong kind), until the
 * process has remembered a few thousand such lines.
 */
void log_once(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Log corrupt data at LOGL_ERROR and return -EFSCORRUPTED. */
int log_corrupt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Where this thread's lines come from, until log_context(NULL): each line
 * it logs then begins "WHERE: ", unless it begins with an absolute path,
 * which names its repository already. A mount of many repositories sets
 * a repository's path for each operation on it, so that "refs/heads/x:
 * ... is missing" says in which. where must outlive the setting.
 */
void log_context(const char *where);

/* The last message this thread logged; valid until its next message. */
const char *log_last(void);

#endif
