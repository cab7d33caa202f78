/*
 * log: formats a message into a thread-local buffer and hands it to the sink
 * chosen at start-up. The store is used by several FUSE worker threads at
 * once, so nothing here is shared but the sink pointer, set before any
 * thread starts.
 */
#include <stdarg.h>
#include <stdio.h>

#include "log.h"

static _Thread_local char last[512];
static log_sink_fn *sink;
static enum log_level max_level = LOGL_INFO;

void
log_set_sink(log_sink_fn *fn, enum log_level level)
{
	sink = fn;
	max_level = level;
}

static void
emit(enum log_level level, const char *fmt, va_list ap)
{
	vsnprintf(last, sizeof(last), fmt, ap);
	if (level > max_level)
		return;
	if (sink)
		sink(level, last);
	else
		fprintf(stderr, "odbfs: %s\n", last);
}

void
log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(level, fmt, ap);
	va_end(ap);
}

int
log_corrupt(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(LOGL_ERROR, fmt, ap);
	va_end(ap);
	return -EFSCORRUPTED;
}

const char *
log_last(void)
{
	return last;
}
