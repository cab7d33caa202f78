/*
 * main: runs every unit test suite of the store library and fs/cell.c's
 * (declared in unit.h) and implements the TAP harness they report
 * through. The plan line comes last, as TAP allows, so suites need not
 * count their checks.
 * Log output of the store is silenced: the tests feed it corrupt data on
 * purpose, and judge the return codes instead.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "odbstore/log.h"
#include "unit.h"

static unsigned tests, failures, todos;

int
unit_sh(const char *script, const char *dir)
{
	char cmd[512];

	setenv("ODBFS_UNIT_SCRIPT", script, 1);
	snprintf(cmd, sizeof(cmd), "sh -c 'eval \"$ODBFS_UNIT_SCRIPT\"' '%s'",
	    dir);
	return system(cmd);
}

uint64_t
unit_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static bool
vreport(bool cond, const char *todo, const char *fmt, va_list ap)
{
	tests++;
	if (!cond && !todo)
		failures++;
	if (todo)
		todos++;
	printf("%sok %u - ", cond ? "" : "not ", tests);
	vprintf(fmt, ap);
	if (todo)
		printf(" # TODO %s", todo);
	putchar('\n');
	return cond;
}

bool
check(bool cond, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(cond, NULL, fmt, ap);
	va_end(ap);
	return cond;
}

bool
check_int(long long got, long long want, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(got == want, NULL, fmt, ap);
	va_end(ap);
	if (got != want)
		diag("  got %lld, want %lld", got, want);
	return got == want;
}

bool
check_u64(unsigned long long got, unsigned long long want, const char *fmt,
    ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(got == want, NULL, fmt, ap);
	va_end(ap);
	if (got != want)
		diag("  got %llu (%#llx), want %llu (%#llx)", got, got, want,
		    want);
	return got == want;
}

bool
check_mem(const void *got, size_t gotlen, const void *want, size_t wantlen,
    const char *fmt, ...)
{
	const unsigned char *g = got, *w = want;
	bool same = gotlen == wantlen && (gotlen == 0 || !memcmp(g, w, gotlen));
	va_list ap;

	va_start(ap, fmt);
	vreport(same, NULL, fmt, ap);
	va_end(ap);
	if (!same) {
		size_t i = 0;

		while (i < gotlen && i < wantlen && g[i] == w[i])
			i++;
		diag("  got %zu bytes, want %zu; first difference at %zu",
		    gotlen, wantlen, i);
	}
	return same;
}

bool
check_todo(bool cond, const char *why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(cond, why, fmt, ap);
	va_end(ap);
	return cond;
}

void
diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void
quiet(enum log_level level, const char *msg)
{
	(void)level;
	(void)msg;
}

int
main(void)
{
	static const struct {
		const char *name;
		void (*run)(void);
	} suites[] = {
		{ "cache", test_cache },
		{ "cell", test_cell },
		{ "treecache", test_treecache },
		{ "commit", test_commit },
		{ "commitgraph", test_commitgraph },
		{ "delta", test_delta },
		{ "scan", test_scan },
		{ "pack", test_pack },
		{ "idx", test_idx },
		{ "packtable", test_packtable },
		{ "snapshot", test_snapshot },
		{ "snapshot_vanished", test_snapshot_vanished },
		{ "unpack", test_unpack },
		{ "view", test_view },
		{ "reader", test_reader },
		{ "repo", test_repo },
		{ "rev", test_rev },
		{ "zio", test_zio },
		{ "loose", test_loose },
		{ "map", test_map },
		{ "node", test_node },
		{ "odbcache", test_odbcache },
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	log_set_sink(quiet, LOGL_ERROR);
	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++) {
		diag("%s", suites[i].name);
		suites[i].run();
	}
	printf("1..%u\n", tests);
	if (failures)
		diag("%u of %u failed", failures, tests);
	if (todos)
		diag("%u known bugs marked TODO", todos);
	return failures ? 1 : 0;
}
