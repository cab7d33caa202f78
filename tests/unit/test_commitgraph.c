/*
 * test_commitgraph: commit-graph files git wrote, read through
 * commitgraph.c and odb_list_commits(), against git's own answers
 * (git rev-list --all; git log --format='%H %P %ct').
 *
 * One history, made with git commit-tree so that every date is fixed: a
 * line of commits, two side branches, a merge, an octopus of four parents
 * (EDGE chunk), a commit dated past 2^32 (CDAT's 34-bit time), a branch
 * that only an annotated tag reaches. Then: a single graph; a split chain
 * of two layers; sha256; commits made after the graph (found by the walk);
 * a graph naming a commit gc removed; no graph at all. Hostile copies of
 * a good graph (cut short, a chunk offset past the end, a parent beyond
 * the commits, a chain naming a missing layer, a chain out of order) must
 * be refused with one log line naming the file and an offset, and
 * listing must still give git's answer.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "be.h"
#include "commitgraph.h"
#include "odbstore/log.h"
#include "odb.h"
#include "oid.h"
#include "repo.h"
#include "unit.h"
#include "odbstore/watch.h"

/* $1: extra git init options. Writes ../expect and ../log. */
static const char history[] =
	"set -e; cd \"$0\"; exec >/dev/null 2>&1\n"
	"export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com\n"
	"export GIT_COMMITTER_NAME=C GIT_COMMITTER_EMAIL=c@example.com\n"
	"export GIT_CONFIG_NOSYSTEM=1 HOME=\"$0\"\n"
	"git init -q --bare $FMT repo; cd repo\n"
	"git config gc.auto 0; git config gc.writeCommitGraph false\n"
	"git symbolic-ref HEAD refs/heads/main\n"
	"tree=$(git mktree </dev/null)\n"
	"mk() { t=$1; shift; a=; for p; do a=\"$a -p $p\"; done;"
	"  echo \"c$t\" | GIT_AUTHOR_DATE=\"@$t +0000\""
	"  GIT_COMMITTER_DATE=\"@$t +0000\" git commit-tree $tree $a; }\n"
	"p=; for i in $(seq 1 20); do p=$(mk $((1700000000 + i)) $p);"
	"  eval m$i=$p; done\n"
	"a=$m10; for i in 1 2 3 4 5; do a=$(mk $((1700000100 + i)) $a); done\n"
	"b=$m12; for i in 1 2 3; do b=$(mk $((1700000200 + i)) $b); done\n"
	"c=$m5; for i in 1 2; do c=$(mk $((1700000300 + i)) $c); done\n"
	"merge=$(mk 1700000400 $m20 $a)\n"
	"oct=$(mk 1700000500 $merge $b $c $m3)\n"
	"far=$(mk 5000000000 $oct)\n"
	"git update-ref refs/heads/main $far\n"
	"git update-ref refs/heads/b $b\n"
	"t=$m15; for i in 1 2; do t=$(mk $((1700000600 + i)) $t); done\n"
	"GIT_COMMITTER_DATE='1700000700 +0000' git tag -a -m tag v1 $t\n"
	"git rev-list --all | sort >../expect\n"
	"git log --all --format='%H %P %ct' >../log\n";

static const char graph[] =
	"set -e; cd \"$0/repo\"; exec >/dev/null 2>&1\n"
	"git commit-graph write --reachable\n";

/* Two layers: the first half of history, then all of it. */
static const char split[] =
	"set -e; cd \"$0/repo\"; exec >/dev/null 2>&1\n"
	"rm -f objects/info/commit-graph\n"
	"git commit-graph write --split=no-merge --stdin-commits"
	"  <<EOF\n$(git rev-parse main~3)\nEOF\n"
	"git commit-graph write --reachable --split=no-merge\n"
	"test $(wc -l <objects/info/commit-graphs/commit-graph-chain) = 2\n"
	"test ! -e objects/info/commit-graph\n";

/* Commits after the graph, on a branch of their own and on main. */
static const char newer[] =
	"set -e; cd \"$0/repo\"; exec >/dev/null 2>&1\n"
	"export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com\n"
	"export GIT_COMMITTER_NAME=C GIT_COMMITTER_EMAIL=c@example.com\n"
	"tree=$(git mktree </dev/null)\n"
	"p=$(git rev-parse main); for i in 1 2 3; do p=$(echo n$i |"
	"  git commit-tree $tree -p $p); done\n"
	"git update-ref refs/heads/main $p\n"
	"q=$(echo side | git commit-tree $tree -p main~5)\n"
	"git update-ref refs/heads/new $q\n"
	"git rev-list --all | sort >../expect\n"
	"echo $p >../newest\n";

/* Branch b deleted and gc'd away; the graph still names its commits. */
static const char gone[] =
	"set -e; cd \"$0/repo\"; exec >/dev/null 2>&1\n"
	"git update-ref -d refs/heads/b\n"
	"git -c gc.writeCommitGraph=false gc -q --prune=now\n"
	"test -e objects/info/commit-graph\n"
	"git rev-list --all | sort >../expect\n"
	"git log --all --format='%H %P %ct' >../log\n";

static const char nograph[] =
	"set -e; cd \"$0/repo\"; exec >/dev/null 2>&1\n"
	"rm -rf objects/info/commit-graph objects/info/commit-graphs\n";

/* The last log line, for the hostile cases. */
static char logged[1024];

static void
capture(enum log_level level, const char *msg)
{
	(void)level;
	snprintf(logged, sizeof(logged), "%s", msg);
}

static void
quiet(enum log_level level, const char *msg)
{
	(void)level;
	(void)msg;
}

static unsigned char *
slurp(const char *path, size_t *len)
{
	unsigned char *buf = NULL;
	struct stat st;
	int fd = open(path, O_RDONLY);

	*len = 0;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && (buf = malloc((size_t)st.st_size + 1)) &&
	    read(fd, buf, (size_t)st.st_size) == st.st_size)
		*len = (size_t)st.st_size;
	close(fd);
	return buf;
}

static bool
spill(const char *path, const unsigned char *buf, size_t len)
{
	FILE *f = fopen(path, "w");
	bool ok = f && fwrite(buf, 1, len, f) == len;

	return f && !fclose(f) && ok;
}

/* The hex ids of the file at path, one a line, as raw ids. */
static unsigned char *
read_ids(const char *path, size_t rawsz, size_t *n)
{
	char line[256];
	unsigned char *ids = malloc(4096 * rawsz);
	FILE *f = fopen(path, "r");

	*n = 0;
	while (f && fgets(line, sizeof(line), f) && *n < 4096) {
		line[strcspn(line, "\n")] = '\0';
		if (oid_parse_hex(ids + *n * rawsz, line, rawsz))
			(*n)++;
	}
	if (f)
		fclose(f);
	return ids;
}

static void
list_matches(const char *dir, const char *what)
{
	char path[512];
	struct odb *odb;
	const char *why;
	unsigned char *got, *want;
	size_t ngot, nwant, rawsz;

	snprintf(path, sizeof(path), "%s/repo", dir);
	if (!check_int(odb_open(path, &odb, &why), 0, "%s: opens", what))
		return;
	rawsz = odb_repo(odb)->rawsz;
	snprintf(path, sizeof(path), "%s/expect", dir);
	want = read_ids(path, rawsz, &nwant);
	check(nwant > 0, "%s: git listed commits", what);
	if (check_int(odb_list_commits(odb, &got, &ngot), 0,
	    "%s: odb_list_commits", what)) {
		check_mem(got, ngot * rawsz, want, nwant * rawsz,
		    "%s: the commits of git rev-list --all, sorted", what);
		free(got);
	}
	/* Again: from the kept walk, same answer. */
	if (check_int(odb_list_commits(odb, &got, &ngot), 0,
	    "%s: listed again", what)) {
		check_mem(got, ngot * rawsz, want, nwant * rawsz,
		    "%s: the same the second time", what);
		free(got);
	}
	free(want);
	odb_close(odb);
}

/* Every commit in git's log: parents and time as the graph has them. */
static void
parents_match(const char *dir, const char *what, bool all_in_graph)
{
	char path[512], line[1024];
	unsigned char raw[OID_RAWSZ_MAX], parents[8 * OID_RAWSZ_MAX];
	unsigned char want[OID_RAWSZ_MAX];
	struct odb *odb;
	const char *why;
	size_t rawsz, hexsz, np;
	unsigned lines = 0, good = 0, found = 0;
	int64_t time;
	FILE *f;

	snprintf(path, sizeof(path), "%s/repo", dir);
	if (odb_open(path, &odb, &why) < 0)
		return;
	rawsz = odb_repo(odb)->rawsz;
	hexsz = 2 * rawsz;
	snprintf(path, sizeof(path), "%s/log", dir);
	if (!(f = fopen(path, "r"))) {
		odb_close(odb);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char *p = line + hexsz;
		size_t n = 0;
		bool ok;

		lines++;
		line[hexsz] = '\0';
		if (!oid_parse_hex(raw, line, rawsz) ||
		    odb_graph_commit(odb, raw, parents, 8, &np, &time) < 0)
			continue;
		found++;
		ok = true;
		for (p++; *p && p[hexsz] == ' ' && n < 8; p += hexsz + 1, n++) {
			p[hexsz] = '\0';
			ok = ok && oid_parse_hex(want, p, rawsz) &&
			    !memcmp(parents + n * rawsz, want, rawsz);
		}
		ok = ok && n == np && time == strtoll(p, NULL, 10);
		good += ok;
	}
	fclose(f);
	if (all_in_graph)
		check_int(found, lines, "%s: the graph has every commit", what);
	check_int(good, found, "%s: parents and time as git log says", what);
	check(lines >= 30, "%s: git logged the history", what);
	odb_close(odb);
}

/* The offset of the chunk named id in the graph buf, 0 if none. */
static size_t
chunk_at(const unsigned char *buf, const char *id, size_t *toc)
{
	for (unsigned i = 0; i < buf[6]; i++)
		if (!memcmp(buf + 8 + 12 * i, id, 4)) {
			*toc = 8 + 12 * i;
			return (size_t)be64(buf + 8 + 12 * i + 4);
		}
	return 0;
}

struct hostile {
	const char *name;
	int how;
};

enum { CUT, OFFSET, PARENT, FANOUT };

static const struct hostile hostiles[] = {
	{ "a graph cut short", CUT },
	{ "a chunk offset past the end", OFFSET },
	{ "a parent beyond the commits", PARENT },
	{ "a fan-out that does not count the ids", FANOUT },
};

static void
put_be32(unsigned char *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static void
hostile_graphs(const char *dir)
{
	char path[512], good[512];
	unsigned char *buf;
	size_t len, toc = 0;

	snprintf(path, sizeof(path), "%s/repo/objects/info/commit-graph", dir);
	snprintf(good, sizeof(good), "%s/good-graph", dir);
	if (!(buf = slurp(path, &len)) || !spill(good, buf, len)) {
		check(false, "hostile: a good graph to spoil");
		free(buf);
		return;
	}
	for (size_t i = 0; i < sizeof(hostiles) / sizeof(hostiles[0]); i++) {
		const struct hostile *h = &hostiles[i];
		unsigned char *bad = malloc(len);
		struct commitgraph *g = (void *)1;
		size_t blen = len, off;
		char objdir[512];

		memcpy(bad, buf, len);
		switch (h->how) {
		case CUT:
			blen = len / 2;
			break;
		case OFFSET:
			chunk_at(bad, "CDAT", &toc);
			put_be32(bad + toc + 4, 0);
			put_be32(bad + toc + 8, (uint32_t)len + 100);
			break;
		case PARENT:
			off = chunk_at(bad, "CDAT", &toc);
			put_be32(bad + off + 20, 1000);
			break;
		case FANOUT:
			off = chunk_at(bad, "OIDF", &toc);
			put_be32(bad + off + 4 * 0x80, 0);
			break;
		}
		spill(path, bad, blen);
		free(bad);
		logged[0] = '\0';
		snprintf(objdir, sizeof(objdir), "%s/repo/objects", dir);
		log_set_sink(capture, LOGL_INFO);
		check_int(commitgraph_open(objdir, 20, &g), -ENOENT,
		    "hostile: %s: left out", h->name);
		log_set_sink(quiet, LOGL_ERROR);
		check(!g, "hostile: %s: no graph", h->name);
		check(strstr(logged, "commit-graph") &&
		    strstr(logged, "offset"),
		    "hostile: %s: one line names the file and an offset",
		    h->name);
		diag("  %s", logged);
		list_matches(dir, h->name);
	}
	spill(path, buf, len);
	free(buf);
}

/* A chain: a missing layer keeps the ones below; out of order, none. */
static void
hostile_chain(const char *dir)
{
	char chain[512], objdir[512];
	unsigned char *buf, *bad;
	struct commitgraph *g;
	size_t len;

	snprintf(chain, sizeof(chain),
	    "%s/repo/objects/info/commit-graphs/commit-graph-chain", dir);
	snprintf(objdir, sizeof(objdir), "%s/repo/objects", dir);
	if (!(buf = slurp(chain, &len)) || len != 82) {
		check(false, "hostile chain: a chain of two layers");
		free(buf);
		return;
	}
	bad = malloc(len + 41);
	memcpy(bad, buf, len);
	memcpy(bad + len, "0123456789012345678901234567890123456789\n", 41);
	spill(chain, bad, len + 41);
	logged[0] = '\0';
	log_set_sink(capture, LOGL_INFO);
	if (check_int(commitgraph_open(objdir, 20, &g), 0,
	    "hostile chain: a missing third layer: the two below kept")) {
		check_int((long long)g->nlayers, 2,
		    "hostile chain: two layers");
		commitgraph_free(g);
	}
	log_set_sink(quiet, LOGL_ERROR);
	check(strstr(logged, "graph-0123456789") && strstr(logged, "line 3"),
	    "hostile chain: the line names the missing file and the line");
	diag("  %s", logged);
	list_matches(dir, "a chain naming a missing file");

	/* The two layers swapped: the first has a base, so none is valid. */
	memcpy(bad, buf + 41, 41);
	memcpy(bad + 41, buf, 41);
	spill(chain, bad, 82);
	logged[0] = '\0';
	log_set_sink(capture, LOGL_INFO);
	check_int(commitgraph_open(objdir, 20, &g), -ENOENT,
	    "hostile chain: layers out of order: left out");
	log_set_sink(quiet, LOGL_ERROR);
	check(strstr(logged, "base graphs") && strstr(logged, "offset 7"),
	    "hostile chain: the line says the base count is wrong");
	diag("  %s", logged);
	list_matches(dir, "a chain out of order");

	/* A layer whose base is not the chain's first. */
	memcpy(bad, buf, 82);
	memcpy(bad, "1111111111111111111111111111111111111111", 40);
	spill(chain, bad, 82);
	check_int(commitgraph_open(objdir, 20, &g), -ENOENT,
	    "hostile chain: a first line naming no file: left out");
	spill(chain, buf, len);
	free(bad);
	free(buf);
}

/* Until the graph names raw, or about five seconds. */
static bool
graph_names(struct odb *odb, const unsigned char *raw)
{
	unsigned char parents[8 * OID_RAWSZ_MAX];
	size_t np;
	int64_t time;

	for (int i = 0; i < 500; i++) {
		if (odb_graph_commit(odb, raw, parents, 8, &np, &time) == 0)
			return true;
		usleep(10000);
	}
	return false;
}

/*
 * The watcher sees a graph written where there was none, then a chain
 * replacing it, then the chain replaced by one that names a new commit.
 */
static void
watched(const char *dir)
{
	static const char tip[] =
	    "set -e; cd \"$0/repo\"; exec >/dev/null 2>&1\n"
	    "rm -rf objects/info/commit-graph objects/info/commit-graphs\n"
	    "git rev-parse main >../tip\n";
	static const char more[] =
	    "set -e; cd \"$0/repo\"; exec >/dev/null 2>&1\n"
	    "export GIT_COMMITTER_NAME=C GIT_COMMITTER_EMAIL=c@example.com\n"
	    "export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com\n"
	    "p=$(echo w | git commit-tree $(git mktree </dev/null) -p main)\n"
	    "git update-ref refs/heads/main $p; echo $p >../tip\n"
	    "git commit-graph write --reachable --split=no-merge\n";
	char path[512];
	unsigned char raw[OID_RAWSZ_MAX], *ids;
	struct watch *w;
	struct odb *odb;
	const char *why;
	size_t n, nids;

	snprintf(path, sizeof(path), "%s/repo", dir);
	if (!check_int(unit_sh(tip, dir), 0, "watch: no graph") ||
	    !check_int(odb_open(path, &odb, &why), 0, "watch: opens"))
		return;
	if (!check_int(watch_start(odb, 0, NULL, NULL, &w), 0,
	    "watch: the watcher starts")) {
		odb_close(odb);
		return;
	}
	snprintf(path, sizeof(path), "%s/tip", dir);
	ids = read_ids(path, 20, &n);
	memcpy(raw, ids, 20);
	free(ids);
	check_int(odb_graph_commit(odb, raw, NULL, 0, &n, &(int64_t){ 0 }),
	    -ENOENT, "watch: no graph names the tip");
	check_int(unit_sh(graph, dir), 0, "watch: git writes a graph");
	check(graph_names(odb, raw), "watch: the single graph is seen");
	check_int(unit_sh(split, dir), 0, "watch: git writes a chain");
	check(graph_names(odb, raw), "watch: the chain is seen");
	check_int(unit_sh(more, dir), 0, "watch: a commit, a third layer");
	ids = read_ids(path, 20, &n);
	memcpy(raw, ids, 20);
	free(ids);
	check(graph_names(odb, raw), "watch: the new layer is seen");
	if (check_int(odb_list_commits(odb, &ids, &nids), 0,
	    "watch: listed")) {
		check(nids >= 30, "watch: the whole history listed");
		free(ids);
	}
	watch_stop(w);
	odb_close(odb);
}

/*
 * A walk that stopped at the graph's commits must not be trusted once the
 * graph is gone: the same odb lists before and after it is deleted.
 */
static void
graph_removed(const char *dir, const char *what)
{
	char path[512];
	unsigned char *got, *want;
	size_t ngot, nwant, rawsz;
	struct odb *odb;
	const char *why;

	snprintf(path, sizeof(path), "%s/repo", dir);
	if (!check_int(odb_open(path, &odb, &why), 0, "%s: opens", what))
		return;
	rawsz = odb_repo(odb)->rawsz;
	snprintf(path, sizeof(path), "%s/expect", dir);
	want = read_ids(path, rawsz, &nwant);
	if (odb_list_commits(odb, &got, &ngot) == 0)
		free(got);
	if (check_int(unit_sh(nograph, dir), 0, "%s: graph deleted", what) &&
	    check_int(odb_graph_reload(odb), 0, "%s: reloaded", what) &&
	    check_int(odb_list_commits(odb, &got, &ngot), 0,
	    "%s: listed without it", what)) {
		check_mem(got, ngot * rawsz, want, nwant * rawsz,
		    "%s: graph deleted: still git rev-list --all", what);
		free(got);
	}
	free(want);
	odb_close(odb);
}

static void
run(const char *fmt, const char *what, bool hostile)
{
	char dir[] = "/tmp/odbfs-cgraph-XXXXXX", cmd[600];

	setenv("FMT", fmt, 1);
	if (!mkdtemp(dir) || !check_int(unit_sh(history, dir), 0,
	    "%s: git made a history", what))
		return;
	list_matches(dir, "no graph yet");
	if (check_int(unit_sh(graph, dir), 0, "%s: git wrote a graph", what)) {
		list_matches(dir, "a single graph");
		parents_match(dir, "a single graph", true);
	}
	if (hostile)
		hostile_graphs(dir);
	if (hostile && check_int(unit_sh(gone, dir), 0,
	    "gc removed commits the graph names")) {
		list_matches(dir, "a graph naming commits gc removed");
		check_int(unit_sh(graph, dir), 0, "git wrote the graph again");
	}
	if (check_int(unit_sh(split, dir), 0, "%s: git wrote a chain", what)) {
		list_matches(dir, "a split chain");
		parents_match(dir, "a split chain", true);
		if (hostile)
			hostile_chain(dir);
	}
	if (hostile)
		watched(dir);
	if (check_int(unit_sh(newer, dir), 0, "%s: commits after the graph",
	    what)) {
		list_matches(dir, "a graph older than the commits");
		parents_match(dir, "a graph older than the commits", false);
	}
	graph_removed(dir, what);
	list_matches(dir, "no graph");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		diag("could not remove %s", dir);
	unsetenv("FMT");
}

void
test_commitgraph(void)
{
	run("", "sha1", true);
	run("--object-format=sha256", "sha256", false);
}
