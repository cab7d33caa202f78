/*
 * fuzz: what the fuzz targets in tests/fuzz/fuzz_*.c share. Each target
 * defines LLVMFuzzerTestOneInput() and nothing else; it is linked either
 * with libFuzzer (clang -fsanitize=fuzzer, `make fuzz`) or with replay.c
 * (any C compiler, `make fuzz-replay`), which runs a saved corpus.
 *
 * Besides not crashing, a target checks what the store promises about a
 * successful parse (pointers inside the input, sizes that add up) with
 * FUZZ_CHECK(), which aborts: the fuzzer then saves the input as a crash.
 * The store's log is silenced, as it is fed corrupt data on purpose.
 */
#ifndef ODBFS_FUZZ_H
#define ODBFS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "odbstore/log.h"

/*
 * The most any target lets the store inflate or build in memory, so that
 * a header claiming gigabytes costs the fuzzer nothing.
 */
#define FUZZ_MAX_OBJECT ((uint64_t)1 << 20)

/* A broken promise of the store: say which and abort. */
#define FUZZ_CHECK(cond) \
	((cond) ? (void)0 : fuzz_fail(__FILE__, __LINE__, #cond))

/*
 * The same, for a promise the store is known to break: a bug reported and
 * not yet fixed. The process exits with FUZZ_EXIT_KNOWN, which libFuzzer
 * reports as a crash and replay.c as a TAP "# TODO", as the unit tests'
 * check_todo() does: the corpus shows the bug without failing make check.
 * Built with -DFUZZ_SKIP_KNOWN (make fuzz FUZZ_DEFS=-DFUZZ_SKIP_KNOWN),
 * fuzzing looks past it for other bugs. Once fixed, make it a FUZZ_CHECK.
 */
#define FUZZ_EXIT_KNOWN 3

#ifdef FUZZ_SKIP_KNOWN
#define FUZZ_KNOWN(cond) ((void)0)
#else
#define FUZZ_KNOWN(cond) \
	((cond) ? (void)0 : fuzz_known(__FILE__, __LINE__, #cond))
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline void
fuzz_fail(const char *file, int line, const char *what)
{
	fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
	abort();
}

static inline void
fuzz_known(const char *file, int line, const char *what)
{
	fprintf(stderr, "%s:%d: known bug: %s\n", file, line, what);
	exit(FUZZ_EXIT_KNOWN);
}

static inline void
fuzz_log_sink(enum log_level level, const char *msg)
{
	(void)level;
	(void)msg;
}

/*
 * Silence the store's log. Called on every input, as neither libFuzzer's
 * nor replay.c's main() knows about it; it costs two stores.
 */
static inline void
fuzz_quiet(void)
{
	log_set_sink(fuzz_log_sink, LOGL_ERROR);
}

/* Does [p, p + n) lie within [base, base + size)? */
static inline int
fuzz_within(const void *p, size_t n, const void *base, size_t size)
{
	const unsigned char *q = p, *b = base;

	return q >= b && q <= b + size && n <= (size_t)(b + size - q);
}

#endif
