/*
 * test_reader: streamed objects read back through reader.c, against the
 * file git hashed. A 20 MiB blob (over READER_INMEM, so streamed), half
 * noise that deflate stores and half text it compresses, loose and in a
 * pack. The reads run in the kernel's pieces, at offsets that cross the
 * ring's end, backwards (the stream restarts), and at random, while
 * reader_prefetch() inflates ahead, from this thread and from another.
 * reader_prefetch() must start no stream, stop where the window is full
 * of bytes still wanted, and turn a damaged stream into the reads' error.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "odbstore/log.h"
#include "oid.h"
#include "reader.h"
#include "repo.h"
#include "snapshot.h"
#include "unit.h"

#define MIB ((size_t)1 << 20)
#define SIZE (20 * MIB)
#define PIECE ((size_t)256 << 10)

static const char setup[] =
	"set -e; cd \"$0\"; exec >/dev/null 2>&1\n"
	"i=0; while [ $i -lt 10 ]; do\n"
	"  head -c 1048576 /dev/urandom\n"
	"  yes \"line $i of a file that deflate compresses well\" |"
	"    head -c 1048576\n"
	"  i=$((i + 1))\n"
	"done >blob\n"
	"git init -q loose; git -C loose hash-object -w ../blob >id\n"
	"git init -q packed; cd loose\n"
	"git pack-objects -q ../packed/.git/objects/pack/pack <../id\n"
	"cd ..; cp -r loose cut\n"
	"f=cut/.git/objects/$(cut -c1-2 id)/$(cut -c3- id)\n"
	"chmod u+w \"$f\"; truncate -s $(($(stat -c %s \"$f\") / 2)) \"$f\"\n";

static unsigned char *want;

/* The reader of the blob in the repository at dir/name, or NULL. */
static struct reader *
open_blob(const char *dir, const char *name, struct repo **repo,
    struct snapshot **s)
{
	char path[512], hex[OID_HEXSZ_MAX + 2] = "";
	unsigned char id[OID_RAWSZ_MAX];
	struct reader *r = NULL;
	struct objloc loc;
	const char *why;
	FILE *f;

	snprintf(path, sizeof(path), "%s/id", dir);
	if ((f = fopen(path, "r"))) {
		if (!fgets(hex, sizeof(hex), f))
			hex[0] = 0;
		fclose(f);
	}
	hex[strcspn(hex, "\n")] = 0;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	*repo = NULL;
	*s = NULL;
	if (!check(oid_parse_hex(id, hex, 20), "%s: the blob's id", name) ||
	    !check_int(repo_open(path, repo, &why), 0, "%s: opens", name) ||
	    !check_int(snapshot_build(*repo, NULL, s), 0, "%s: snapshot",
	    name) ||
	    !check(snapshot_find(*s, id, &loc), "%s: has the blob", name) ||
	    !check_int(reader_open(*s, &loc, &r), 0, "%s: reader opens", name))
		return NULL;
	check(reader_data(r) == NULL && reader_info(r)->size == SIZE,
	    "%s: %zu bytes, streamed", name, SIZE);
	return r;
}

static void
close_blob(struct reader *r, struct repo *repo, struct snapshot *s)
{
	reader_close(r);
	snapshot_free(s);
	repo_free(repo);
}

/* Read [off, off + len) and compare; false (and a diag) if wrong. */
static bool
read_ok(struct reader *r, uint64_t off, size_t len, unsigned char *buf)
{
	ssize_t got = reader_read(r, buf, len, off);
	size_t expect = off >= SIZE ? 0 : len < SIZE - off ? len :
	    (size_t)(SIZE - off);

	if (got != (ssize_t)expect ||
	    (expect && memcmp(buf, want + off, expect))) {
		diag("  read of %zu at %llu gave %zd", len,
		    (unsigned long long)off, got);
		return false;
	}
	return true;
}

struct ahead {
	struct reader *r;
	atomic_ullong end;	/* where the latest read ended */
	atomic_bool stop;
	atomic_long inflated;
};

/* Inflate ahead of the reads, as fs/readers.c's thread does. */
static void *
ahead_main(void *arg)
{
	struct ahead *a = arg;

	while (!atomic_load(&a->stop)) {
		long n = reader_prefetch(a->r, atomic_load(&a->end) + 2 * MIB,
		    PIECE);

		if (n > 0)
			atomic_fetch_add(&a->inflated, n);
		else if (n < 0)
			break;
	}
	return NULL;
}

/* The whole blob in pieces of len, with a thread inflating ahead. */
static void
sequential(const char *dir, const char *name, size_t len)
{
	struct ahead a = { .end = 0 };
	unsigned char *buf = malloc(len);
	struct snapshot *s;
	struct repo *repo;
	pthread_t t;
	size_t bad = 0;

	if (!buf || !(a.r = open_blob(dir, name, &repo, &s)))
		goto out;
	if (!check(pthread_create(&t, NULL, ahead_main, &a) == 0,
	    "%s: a thread inflates ahead", name))
		goto out;
	for (uint64_t off = 0; off < SIZE; off += len) {
		bad += !read_ok(a.r, off, len, buf);
		atomic_store(&a.end, off + len);
		/*
		 * Give the thread its turn once, up to 10 s: on a busy
		 * machine the reads could otherwise end before it is first
		 * scheduled, and whether it inflates ahead is what is tested.
		 */
		for (int i = 0; off == 0 && i < 10000 &&
		    atomic_load(&a.inflated) == 0; i++)
			usleep(1000);
	}
	atomic_store(&a.stop, true);
	pthread_join(t, NULL);
	check(bad == 0, "%s: read in pieces of %zu, all the same bytes",
	    name, len);
	check(atomic_load(&a.inflated) > 0, "%s: the thread inflated %ld "
	    "bytes ahead", name, atomic_load(&a.inflated));
out:
	if (a.r)
		close_blob(a.r, repo, s);
	free(buf);
}

/* How much reader_prefetch() inflates with no read moving on. */
static size_t
prefetch_all(struct reader *r, uint64_t upto)
{
	size_t total = 0;
	long n;

	while ((n = reader_prefetch(r, upto, PIECE)) > 0)
		total += (size_t)n;
	return n < 0 ? 0 : total;
}

static void
bounds(const char *dir)
{
	unsigned char *buf = malloc(MIB);
	struct snapshot *s;
	struct repo *repo;
	struct reader *r;
	size_t n, bad = 0;
	uint64_t seed = 12345;

	if (!buf || !(r = open_blob(dir, "loose", &repo, &s))) {
		free(buf);
		return;
	}
	check_int(reader_prefetch(r, SIZE, PIECE), 0,
	    "a stream no read started is not started ahead");
	check(read_ok(r, 0, PIECE, buf), "a read of the first piece");
	n = prefetch_all(r, SIZE);
	check(n > 2 * MIB && n <= READER_WINDOW - PIECE,
	    "then %zu bytes ahead at most, the window's room", n);
	check_int(reader_prefetch(r, SIZE, PIECE), 0, "and no more");
	check(read_ok(r, 3 * MIB, PIECE, buf),
	    "a read at 3 MiB, from what came ahead");
	n = prefetch_all(r, 4 * MIB + MIB / 2);
	check_int((long long)n, MIB / 2, "then up to 4.5 MiB: half a MiB more");
	check(read_ok(r, 5 * MIB + 3, 300000, buf) && read_ok(r, 1000, 7, buf),
	    "a read further on, then one behind the window (a restart)");
	/* Pieces that do not divide the ring: they cross its end. */
	for (uint64_t off = 0; off < SIZE; off += 300007) {
		bad += !read_ok(r, off, 300007, buf);
		if (off % 3 == 0)
			prefetch_all(r, off + 3 * MIB);
	}
	check(bad == 0, "pieces of 300 007 bytes, across the ring's end");
	for (int i = 0; i < 300; i++) {
		uint64_t x = unit_rand(&seed), off;
		size_t len;

		off = x % (SIZE + 1000);
		len = (x >> 7) % MIB + 1;
		bad += !read_ok(r, off, len, buf);
		if (i % 4 == 0)
			reader_prefetch(r, off + len + MIB, x % (2 * MIB) + 1);
	}
	check(bad == 0, "300 reads at random, some past the end");
	close_blob(r, repo, s);
	free(buf);
}

/*
 * A loose file cut in half: inflating ahead meets the cut first. The
 * bytes before it that the window holds still read; those past it fail.
 */
static void
damaged(const char *dir)
{
	unsigned char buf[4096];
	struct snapshot *s;
	struct repo *repo;
	struct reader *r;
	uint64_t off;
	long n = 0;

	if (!(r = open_blob(dir, "cut", &repo, &s)))
		return;
	for (off = 0; off < SIZE && n >= 0; off += MIB) {
		if (!read_ok(r, off, sizeof(buf), buf))
			break;
		while ((n = reader_prefetch(r, SIZE, PIECE)) > 0)
			;
	}
	check_int(n, -EFSCORRUPTED, "cut: inflating ahead finds the cut "
	    "after %llu MiB read", (unsigned long long)(off / MIB));
	check(off > 0 && read_ok(r, off - MIB, sizeof(buf), buf),
	    "cut: the window's bytes before the cut still read");
	check_int(reader_read(r, buf, sizeof(buf), SIZE - sizeof(buf)),
	    -EFSCORRUPTED, "cut: bytes past it fail");
	check_int(reader_read(r, buf, sizeof(buf), 0), -EFSCORRUPTED,
	    "cut: and so do the first bytes, which would restart the stream");
	close_blob(r, repo, s);
}

void
test_reader(void)
{
	char dir[] = "/tmp/odbfs-unit.XXXXXX", path[256];
	FILE *f;

	if (!mkdtemp(dir) || !check_int(unit_sh(setup, dir), 0,
	    "git made a 20 MiB blob, loose, packed and cut"))
		return;
	snprintf(path, sizeof(path), "%s/blob", dir);
	want = malloc(SIZE);
	if (!want || !(f = fopen(path, "rb")))
		goto out;
	check(fread(want, 1, SIZE, f) == SIZE, "the blob is %zu bytes", SIZE);
	fclose(f);
	sequential(dir, "loose", PIECE);
	sequential(dir, "packed", PIECE);
	sequential(dir, "packed", 128 << 10);
	bounds(dir);
	damaged(dir);
out:
	free(want);
	want = NULL;
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path) != 0)
		diag("could not remove %s", dir);
}
