/*
 * unit: the harness of the C unit tests of the store (and of the parts of
 * fs/ that need no FUSE session: cell.c, and the view over node.c), and
 * their suites.
 *
 * Every check prints one TAP line, "ok N - what" or "not ok N - what";
 * main.c runs each suite in turn, prints the plan "1..N" last and exits
 * non-zero if any check failed. A suite is one function, test_<module>(),
 * in tests/unit/test_<module>.c; it builds its inputs in memory and walks a
 * table of cases. Descriptions must not contain '#', which TAP reserves.
 */
#ifndef ODBFS_UNIT_H
#define ODBFS_UNIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One test point. Returns cond, so a caller can print more on failure. */
bool check(bool cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A test point that two numbers are equal; prints both when not. */
bool check_int(long long got, long long want, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool check_u64(unsigned long long got, unsigned long long want,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * A test point that two byte strings are equal; says where they first
 * differ when not. got may be NULL only if gotlen is 0.
 */
bool check_mem(const void *got, size_t gotlen, const void *want,
    size_t wantlen, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/*
 * A test point for a known bug: marked "# TODO why", so a TAP reader does
 * not count it as a failure, and main() does not either.
 */
bool check_todo(bool cond, const char *why, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Run the shell script with $0 set to dir (the script travels in the
 * environment, free of quoting); system()'s status.
 */
int unit_sh(const char *script, const char *dir);

/* The next number of a xorshift64 sequence; *s must not start at 0. */
uint64_t unit_rand(uint64_t *s);

/* A TAP comment line, "# ...". */
void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void test_cache(void);
void test_cell(void);
void test_treecache(void);
void test_commit(void);
void test_commitgraph(void);
void test_delta(void);
void test_scan(void);
void test_idx(void);
void test_loose(void);
void test_map(void);
void test_node(void);
void test_odbcache(void);
void test_pack(void);
void test_packtable(void);
void test_reader(void);
void test_repo(void);
void test_rev(void);
void test_snapshot(void);
void test_snapshot_vanished(void);
void test_unpack(void);
void test_view(void);
void test_zio(void);

#endif
