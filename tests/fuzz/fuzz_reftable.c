/*
 * fuzz_reftable: one reftable file (reftable_parse() and reftable_load()
 * in store/reftable.c). The input is a table:
 *
 *   header ref_block* ref_index* obj_block* obj_index* log_block*
 *   log_index* footer       (store/reftable.h draws each)
 *
 * It is parsed for a sha1 and for a sha256 repository. A table that parses
 * must keep the store's promises: names sorted and unique, none empty,
 * update indexes within the header's range, a known value type, a target
 * for each symbolic ref.
 *
 * reftable_load() reads from disk, so the first input sets up a sha1
 * repository of the reftable backend in a temporary directory (removed at
 * exit) whose stack is that one table; each input is written there and the
 * stack loaded. The refs must be sorted without duplicates, under refs/,
 * names refname_ok() accepts, each found by refs_find(), and as many as
 * the table's live records under refs/ at most.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"
#include "refs.h"
#include "reftable.h"
#include "repo.h"

#define TABLE "0x000000000001-0x000000000001-00000000.ref"

static char dir[] = "/tmp/odbfs-fuzz-reftable.XXXXXX";
static struct repo repo;

static void
put(const char *rel, const void *buf, size_t len)
{
	char path[sizeof(dir) + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	if (!(f = fopen(path, "wb")) || fwrite(buf, 1, len, f) != len ||
	    fclose(f) != 0) {
		perror(path);
		abort();
	}
}

static void
cleanup(void)
{
	static const char *const paths[] = { ("reftable/" TABLE),
	    "reftable/tables.list", "reftable", "" };
	char path[sizeof(dir) + 64];

	for (size_t i = 0; i < sizeof(paths) / sizeof(*paths); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, paths[i]);
		(void)remove(path);
	}
}

static void
setup(void)
{
	char path[sizeof(dir) + 64];

	if (repo.gitdir)
		return;
	if (!mkdtemp(dir)) {
		perror(dir);
		abort();
	}
	atexit(cleanup);
	snprintf(path, sizeof(path), "%s/reftable", dir);
	(void)mkdir(path, 0700);
	put("reftable/tables.list", TABLE "\n", strlen(TABLE) + 1);
	repo.gitdir = dir;
	repo.commondir = dir;
	repo.format = "sha1";
	repo.rawsz = 20;
	repo.reftable = true;
}

/* Parse for rawsz; on success check it. The live records under refs/. */
static size_t
parse(const uint8_t *data, size_t size, size_t rawsz)
{
	struct reftable_table t;
	size_t live = 0;
	int ret;

	ret = reftable_parse(data, size, rawsz, "fuzz", &t);
	if (ret < 0) {
		FUZZ_CHECK(ret == -EFSCORRUPTED || ret == -ENOMEM);
		FUZZ_CHECK(t.n == 0 && t.v == NULL);
		return 0;
	}
	FUZZ_CHECK(t.min_update_index <= t.max_update_index);
	for (size_t i = 0; i < t.n; i++) {
		const struct reftable_rec *r = &t.v[i];

		FUZZ_CHECK(r->name && r->name[0]);
		FUZZ_CHECK(i == 0 || strcmp(t.v[i - 1].name, r->name) < 0);
		FUZZ_CHECK(r->update_index >= t.min_update_index &&
		    r->update_index <= t.max_update_index);
		FUZZ_CHECK(r->type <= REFTABLE_SYMREF);
		FUZZ_CHECK((r->type == REFTABLE_SYMREF) == (r->target != NULL));
		live += r->type != REFTABLE_DELETION &&
		    !strncmp(r->name, "refs/", 5);
	}
	reftable_table_release(&t);
	return live;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct refs *refs = NULL;
	size_t live;
	int ret;

	fuzz_quiet();
	setup();
	(void)parse(data, size, OID_RAWSZ_SHA256);
	live = parse(data, size, OID_RAWSZ_SHA1);

	put("reftable/" TABLE, data, size);
	ret = reftable_load(&repo, NULL, &refs);
	if (ret < 0) {
		FUZZ_CHECK(ret == -ENOMEM && refs == NULL);
		return 0;
	}
	FUZZ_CHECK(refs->n <= live);
	for (size_t i = 0; i < refs->n; i++) {
		FUZZ_CHECK(!strncmp(refs->v[i].name, "refs/", 5));
		FUZZ_CHECK(refname_ok(refs->v[i].name));
		FUZZ_CHECK(i == 0 ||
		    strcmp(refs->v[i - 1].name, refs->v[i].name) < 0);
		FUZZ_CHECK(refs_find(refs, refs->v[i].name) == (long)i);
	}
	FUZZ_CHECK(!(refs->head_target && refs->head_detached));
	FUZZ_CHECK(!refs->head_target || refname_ok(refs->head_target));
	refs_free(refs);
	return 0;
}
