/*
 * log: formats a message into a thread-local buffer and hands it to the sink
 * chosen at start-up. The store is used by several FUSE worker threads at
 * once: what they share (the rate limit's tokens and count of lines held
 * back, the hashes of lines log_once() sent) is under one mutex, taken
 * only when a line is logged. A line held by log_hold() stays in the
 * thread. When the rate limit holds lines back, a short-lived flusher
 * thread says how many, as soon as a line may go out again.
 */
#include <pthread.h>
#include <signal.h>
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
static _Thread_local const char *context;	/* see log_context() */

/* The most of a context a line shows: its last bytes (the line has 512). */
#define CONTEXT_MAX 120
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

static bool flushing;			/* protected by lock */

static void note(unsigned long dropped);

static double
now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Tokens earned since the last refill. Called with lock held. */
static void
refill(void)
{
	double now = now_seconds();

	tokens += (now - refilled) * RATE;
	if (tokens > BURST)
		tokens = BURST;
	refilled = now;
}

/*
 * The flusher: once a line may go out again, say how many were held back,
 * even if no other line ever comes to carry the count. One at a time,
 * started by the first line held back.
 */
static void *
flush_later(void *unused)
{
	const struct timespec tick = { 0, 1000000000 / RATE };
	unsigned long dropped = 0;

	(void)unused;
	for (;;) {
		nanosleep(&tick, NULL);
		pthread_mutex_lock(&lock);
		refill();
		if (suppressed && tokens >= 1) {
			tokens -= 1;
			dropped = suppressed;
			suppressed = 0;
		}
		if (!suppressed) {
			flushing = false;
			pthread_mutex_unlock(&lock);
			break;
		}
		pthread_mutex_unlock(&lock);
	}
	if (dropped)
		note(dropped);
	return NULL;
}

/* Start the flusher unless it runs. Called with lock held. */
static void
flush_start(void)
{
	pthread_attr_t attr;
	pthread_t t;
	sigset_t all, old;

	if (flushing || pthread_attr_init(&attr))
		return;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* Signals are for the threads that wait on them. */
	sigfillset(&all);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGSEGV);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	flushing = pthread_create(&t, &attr, flush_later, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
}

/* May a line go out now? *dropped: lines held back before it. */
static bool
admit(unsigned long *dropped)
{
	bool ok;

	pthread_mutex_lock(&lock);
	refill();
	ok = tokens >= 1;
	if (ok) {
		tokens -= 1;
		*dropped = suppressed;
		suppressed = 0;
	} else {
		suppressed++;
		flush_start();
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

/* Say that dropped lines were held back by the rate limit. */
static void
note(unsigned long dropped)
{
	char line[64];

	snprintf(line, sizeof(line), "%lu more lines like this held back",
	    dropped);
	if (sink)
		sink(LOGL_WARN, line);
	else
		fprintf(stderr, "odbfs: %s\n", line);
}

static void
out(enum log_level level, const char *line)
{
	unsigned long dropped = 0;

	if (!admit(&dropped))
		return;
	if (dropped)
		note(dropped);
	if (sink)
		sink(level, line);
	else
		fprintf(stderr, "odbfs: %s\n", line);
}

/*
 * Format into last, with the control characters a repository's names may
 * hold (a newline, an escape) written as \n, \033...: a tree entry or a
 * ref named "x\nodbfs: ..." must not forge a line of its own, nor drive
 * the terminal that shows the log.
 */
static void
format(const char *fmt, va_list ap)
{
	static _Thread_local char raw[sizeof(last)];
	size_t o = 0, n = 0;

	if (context && *context) {
		/* Its end, if long: the line is for what went wrong. */
		size_t len = strlen(context);

		n = (size_t)snprintf(raw, sizeof(raw), "%s%s: ",
		    len > CONTEXT_MAX ? "..." : "",
		    context + (len > CONTEXT_MAX ? len - CONTEXT_MAX : 0));
	}
	vsnprintf(raw + n, sizeof(raw) - n, fmt, ap);
	/* An absolute path says where already. */
	if (n && raw[n] == '/')
		memmove(raw, raw + n, strlen(raw + n) + 1);
	for (const unsigned char *p = (const unsigned char *)raw;
	    *p && o + 5 < sizeof(last); p++) {
		if (*p >= 0x20 && *p != 0x7f)
			last[o++] = (char)*p;
		else if (*p == '\n')
			o += (size_t)snprintf(last + o, 3, "\\n");
		else
			o += (size_t)snprintf(last + o, 5, "\\%03o", *p);
	}
	last[o] = '\0';
}

void
log_context(const char *where)
{
	context = where;
}

static void
emit(enum log_level level, const char *fmt, va_list ap)
{
	format(fmt, ap);
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
	format(fmt, ap);
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
