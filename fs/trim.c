/*
 * trim: the thread that gives freed memory back (see trim.h). It sleeps on
 * a condition until trim_freed() passes TRIM_EVERY units, lets the frees
 * of that burst go on for TRIM_SETTLE_MS, then trims once.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "trim.h"

#define TRIM_SETTLE_MS 200

static _Atomic size_t untrimmed;	/* units freed since the last trim */
static _Atomic bool forgot;		/* some were nodes */
static _Atomic size_t trims;
static void (*shed)(void *);
static void *shed_arg;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
/* Protected by lock: */
static bool running, stopping, due;
static pthread_t thread;

static void *
trim_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		while (!due && !stopping)
			pthread_cond_wait(&cond, &lock);
		if (stopping)
			break;
		due = false;
		pthread_mutex_unlock(&lock);
		nanosleep(&(struct timespec){ .tv_nsec = TRIM_SETTLE_MS *
		    1000000L }, NULL);
		atomic_store(&untrimmed, 0);
		if (atomic_exchange(&forgot, false) && shed)
			shed(shed_arg);
		malloc_trim(0);
		atomic_fetch_add(&trims, 1);
		pthread_mutex_lock(&lock);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

void
trim_init(void)
{
	mallopt(M_MMAP_THRESHOLD, (int)TRIM_MMAP_MIN);
	mallopt(M_ARENA_MAX, TRIM_ARENAS);
}

int
trim_start(void (*shed_fn)(void *arg), void *arg)
{
	int ret = 0;

	pthread_mutex_lock(&lock);
	if (!running) {
		shed = shed_fn;
		shed_arg = arg;
		stopping = due = false;
		ret = -pthread_create(&thread, NULL, trim_thread, NULL);
		running = ret == 0;
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

void
trim_freed(size_t units)
{
	size_t before = atomic_fetch_add(&untrimmed, units);

	if (before >= TRIM_EVERY || before + units < TRIM_EVERY)
		return;
	pthread_mutex_lock(&lock);
	due = true;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&lock);
}

void
trim_forgot(size_t nodes)
{
	atomic_store(&forgot, true);
	trim_freed(nodes * TRIM_NODE);
}

void
trim_stop(void)
{
	bool join;

	pthread_mutex_lock(&lock);
	join = running;
	stopping = true;
	running = false;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&lock);
	if (join)
		pthread_join(thread, NULL);
}

size_t
trim_count(void)
{
	return atomic_load(&trims);
}
