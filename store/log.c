/*
 * log: formats a message into a thread-local buffer and hands it to the sink
 * chosen at start-up. The store is used by several FUSE worker threads at
 * once, so nothing here is shared but the sink pointer, set before any
 * thread starts.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <xxhash.h>

#include "log.h"

/* At most BURST lines at once, then RATE a second: a corrupt pack read in
 * a loop must not flood the log. */
#define BURST 20
#define RATE 10

static _Thread_local char last[512];
static _Thread_local bool holding;	/* see log_hold() */
static _Thread_local bool held;		/* held_line holds a line */
static _Thread_local char held_line[512];
static _Thread_local enum log_level held_level;
static log_sink_fn *sink;
static enum log_level max_level = LOGL_INFO;

/*
 * Lines log_once() sent, by hash: 4096 of them (32 KiB), probed at most
 * ONCE_PROBE slots; past that, lines go out again (rate-limited still).
 */
#define ONCE_SLOTS 4096
#define ONCE_PROBE 16

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static double tokens = BURST;		/* protected by lock */
static double refilled;			/* protected by lock */
static unsigned long suppressed;	/* protected by lock */
static uint64_t once[ONCE_SLOTS];	/* protected by lock; 0: free */

/* May a line go out now? *dropped: lines held back before it. */
static bool
admit(unsigned long *dropped)
{
	struct timespec ts;
	double now;
	bool ok;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	now = (double)ts.tv_sec + ts.tv_nsec / 1e9;
	pthread_mutex_lock(&lock);
	tokens += (now - refilled) * RATE;
	if (tokens > BURST)
		tokens = BURST;
	refilled = now;
	ok = tokens >= 1;
	if (ok) {
		tokens -= 1;
		*dropped = suppressed;
		suppressed = 0;
	} else {
		suppressed++;
	}
	pthread_mutex_unlock(&lock);
	return ok;
}

void
log_set_sink(log_sink_fn *fn, enum log_level level)
{
	sink = fn;
	max_level = level;
}

static void
out(enum log_level level, const char *line)
{
	unsigned long dropped = 0;
	char note[64];

	if (!admit(&dropped))
		return;
	if (dropped) {
		snprintf(note, sizeof(note), "%lu log lines suppressed",
		    dropped);
		if (sink)
			sink(LOGL_WARN, note);
		else
			fprintf(stderr, "odbfs: %s\n", note);
	}
	if (sink)
		sink(level, line);
	else
		fprintf(stderr, "odbfs: %s\n", line);
}

static void
emit(enum log_level level, const char *fmt, va_list ap)
{
	vsnprintf(last, sizeof(last), fmt, ap);
	if (level > max_level)
		return;
	if (!holding) {
		out(level, last);
	} else if (!held) {
		memcpy(held_line, last, sizeof(held_line));
		held_level = level;
		held = true;
	}
}

/* Was this line sent by log_once() before? Remember it if not. */
static bool
said_before(const char *line)
{
	uint64_t h = XXH3_64bits(line, strlen(line)) | 1;
	bool seen = false;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < ONCE_PROBE; i++) {
		uint64_t *slot = &once[(h + i) % ONCE_SLOTS];

		if (*slot == h) {
			seen = true;
			break;
		}
		if (*slot == 0) {
			*slot = h;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	return seen;
}

void
log_once(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last, sizeof(last), fmt, ap);
	va_end(ap);
	if (level <= max_level && !said_before(last))
		out(level, last);
}

void
log_hold(void)
{
	holding = true;
	held = false;
}

void
log_release(bool emit_held)
{
	holding = false;
	if (emit_held && held)
		out(held_level, held_line);
	held = false;
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
