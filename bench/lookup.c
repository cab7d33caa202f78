/*
 * lookup: in-process cost of asking "is this object here?", odbfs's store
 * beside libgit2's git_odb_exists on the same ids in the same run.
 *
 *   bench/lookup REPO [PROBES] [ROUNDS]
 *   bench/lookup --only-misses N REPO    (for counting syscalls with strace)
 *
 * Prints one line per measurement: "name ns_per_op" (median of ROUNDS).
 */
#define _LGPL_SOURCE
#include <git2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "odbstore/odb.h"
#include "odbstore/oid.h"

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* xorshift: deterministic ids that are (almost surely) absent. */
static uint64_t
next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

typedef int probe_fn(void *ctx, const unsigned char *raw);

static int
probe_odbfs(void *ctx, const unsigned char *raw)
{
	return odb_has(ctx, raw);
}

static int
probe_git2(void *ctx, const unsigned char *raw)
{
	git_oid oid;

	memcpy(oid.id, raw, GIT_OID_RAWSZ);
	return git_odb_exists(ctx, &oid);
}

static int
probe_git2_norefresh(void *ctx, const unsigned char *raw)
{
	git_oid oid;

	memcpy(oid.id, raw, GIT_OID_RAWSZ);
	return git_odb_exists_ext(ctx, &oid, GIT_ODB_LOOKUP_NO_REFRESH);
}

static double
measure(probe_fn *fn, void *ctx, const unsigned char *ids, size_t n,
    size_t rawsz, int rounds, int expect)
{
	double t[64];
	volatile int sink = 0;

	if (rounds > 64)
		rounds = 64;
	for (int r = 0; r < rounds; r++) {
		double t0 = now_ns();

		for (size_t i = 0; i < n; i++) {
			int got = fn(ctx, ids + i * rawsz);

			if (got != expect) {
				fprintf(stderr, "lookup: wrong answer\n");
				exit(1);
			}
			sink += got;
		}
		t[r] = (now_ns() - t0) / (double)n;
	}
	(void)sink;
	qsort(t, (size_t)rounds, sizeof(double), cmp_double);
	return t[rounds / 2];
}

int
main(int argc, char **argv)
{
	size_t probes = 200000, rawsz, nhit = 0, only_misses = 0;
	bool only = false;
	int rounds = 7, argi = 1;
	unsigned char *hits, *misses;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	struct odb *odb;
	const char *why;
	git_repository *repo;
	git_odb *godb;

	if (argc > 2 && !strcmp(argv[1], "--only-misses")) {
		only_misses = strtoul(argv[2], NULL, 10);
		only = true;
		argi = 3;
	}
	if (argi >= argc) {
		fprintf(stderr, "usage: lookup REPO [PROBES] [ROUNDS]\n");
		return 2;
	}
	if (argi + 1 < argc)
		probes = strtoul(argv[argi + 1], NULL, 10);
	if (argi + 2 < argc)
		rounds = atoi(argv[argi + 2]);
	if (odb_open(argv[argi], &odb, &why) < 0) {
		fprintf(stderr, "lookup: %s: %s\n", argv[argi], why);
		return 1;
	}
	rawsz = odb_rawsz(odb);
	misses = malloc(probes * rawsz);
	for (size_t i = 0; i < probes * rawsz; i += 8) {
		uint64_t r = next_rand(&seed);

		memcpy(misses + i, &r, rawsz - i % rawsz < 8 ?
		    rawsz - i % rawsz : 8);
	}
	if (only) {
		/* Warm up (thread registration), then only misses. */
		odb_has(odb, misses);
		fprintf(stderr, "lookup: start\n");
		for (size_t i = 0; i < only_misses; i++)
			if (odb_has(odb, misses + (i % probes) * rawsz))
				return 1;
		fprintf(stderr, "lookup: end\n");
		return 0;
	}
	/* Hits: a spread of existing ids, repeated up to PROBES. */
	hits = malloc(probes * rawsz);
	for (unsigned b = 0; b < 256 && nhit < probes; b++) {
		unsigned char *ids;
		size_t nr;

		if (odb_list(odb, b, &ids, &nr) < 0)
			return 1;
		for (size_t i = 0; i < nr && nhit < probes; i += 1 +
		    nr / (probes / 256 + 1))
			memcpy(hits + nhit++ * rawsz, ids + i * rawsz, rawsz);
		free(ids);
	}
	/* Shuffle so hits do not walk the index in order. */
	for (size_t i = nhit; i > 1; i--) {
		size_t j = next_rand(&seed) % i;
		unsigned char tmp[OID_RAWSZ_MAX];

		memcpy(tmp, hits + (i - 1) * rawsz, rawsz);
		memcpy(hits + (i - 1) * rawsz, hits + j * rawsz, rawsz);
		memcpy(hits + j * rawsz, tmp, rawsz);
	}
	printf("odbfs_miss %.1f\n", measure(probe_odbfs, odb, misses, probes,
	    rawsz, rounds, 0));
	printf("odbfs_hit %.1f\n", measure(probe_odbfs, odb, hits, nhit,
	    rawsz, rounds, 1));

	git_libgit2_init();
	if (rawsz != GIT_OID_RAWSZ ||
	    git_repository_open_bare(&repo, argv[argi]) < 0 ||
	    git_repository_odb(&godb, repo) < 0) {
		fprintf(stderr, "lookup: libgit2 cannot open %s\n", argv[argi]);
		return 0;
	}
	/*
	 * libgit2 takes microseconds a lookup (it rescans the pack directory
	 * on every miss, and searches pack after pack): fewer probes, so that
	 * make bench keeps to its time.
	 */
	size_t gprobes = probes < 20000 ? probes : 20000;
	printf("libgit2_miss %.1f\n", measure(probe_git2, godb, misses,
	    gprobes, rawsz, rounds, 0));
	printf("libgit2_miss_norefresh %.1f\n", measure(probe_git2_norefresh,
	    godb, misses, gprobes, rawsz, rounds, 0));
	printf("libgit2_hit %.1f\n", measure(probe_git2, godb, hits,
	    nhit < gprobes ? nhit : gprobes, rawsz, rounds, 1));
	git_odb_free(godb);
	git_repository_free(repo);
	git_libgit2_shutdown();
	odb_close(odb);
	free(hits);
	free(misses);
	return 0;
}
