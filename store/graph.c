/*
 * graph: the odb's commit-graph and shallow file (part of odb, its odb_*
 * functions declared in store/odb.h and odbstore/odb.h), published under
 * RCU as the snapshot is, and what they answer in memory: a commit's
 * parents and time (odb_graph_commit()), whether a commit is a shallow
 * clone's boundary (odb_is_shallow()).
 *
 *   odb_graph_reload()       the watcher's side: graph_stamp(), then
 *                            commitgraph_open() on each object directory
 *                            until one has a graph (as git uses the
 *                            first), published as the refs are
 */
#define _LGPL_SOURCE	/* inline the RCU read side */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <urcu/urcu-memb.h>

#include "commitgraph.h"
#include "file.h"
#include "log.h"
#include "odb.h"
#include "oid.h"
#include "repo.h"

/* What stat(2) says of path, folded into h (zeros when it is not). */
static uint64_t
stamp_add(uint64_t h, const char *path)
{
	struct stat st;
	uint64_t v[5] = { 0 };

	if (stat(path, &st) == 0) {
		v[0] = st.st_ino;
		v[1] = (uint64_t)st.st_size;
		v[2] = (uint64_t)st.st_mtim.tv_sec;
		v[3] = (uint64_t)st.st_mtim.tv_nsec;
		v[4] = (uint64_t)st.st_ctim.tv_nsec ^ st.st_dev;
	}
	for (size_t i = 0; i < 5; i++)
		h = (h ^ v[i]) * 0x100000001b3ull;
	return h;
}

/*
 * The graph's files as they are now. git replaces each by a rename, and
 * names a chain's layers by their checksums, so the single file and the
 * chain file say whether anything changed.
 */
static uint64_t
graph_stamp(const struct repo *repo)
{
	char path[4096];
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < repo->nobjdirs; i++) {
		snprintf(path, sizeof(path), "%s/info/commit-graph",
		    repo->objdirs[i]);
		h = stamp_add(h, path);
		snprintf(path, sizeof(path),
		    "%s/info/commit-graphs/commit-graph-chain",
		    repo->objdirs[i]);
		h = stamp_add(h, path);
	}
	snprintf(path, sizeof(path), "%s/shallow", repo->commondir);
	return stamp_add(h, path);
}

/*
 * The commits git's shallow file names, sorted: git takes them for root
 * commits, whatever parents they name, and stops its history there.
 */
struct shallow {
	size_t n;
	unsigned char ids[];
};

/* A shallow file's lines at most: 64 MiB of 65-byte sha256 lines. */
#define SHALLOW_MAX ((size_t)64 << 20)

/*
 * Read repo's shallow file: NULL (with 0) when there is none or it names
 * nothing. A line that is not an id is logged (file and offset) and
 * skipped, as is a file past SHALLOW_MAX: git would refuse such a
 * repository, odbfs shows it unshallowed.
 */
static int
shallow_load(const struct repo *repo, struct shallow **out)
{
	size_t rawsz = repo->rawsz, len, n = 0;
	char path[4096], *text, *line, *end;
	struct shallow *sh;
	int ret;

	*out = NULL;
	snprintf(path, sizeof(path), "%s/shallow", repo->commondir);
	if ((ret = file_read_whole(path, SHALLOW_MAX, &text, &len)) < 0) {
		if (ret == -ENOMEM)
			return ret;
		if (ret != -ENOENT)
			log_msg(LOGL_WARN, "%s: cannot read: %s: taken as not "
			    "shallow", path, strerror(-ret));
		return 0;
	}
	if (!(sh = malloc(sizeof(*sh) + (len / (2 * rawsz) + 1) * rawsz))) {
		free(text);
		return -ENOMEM;
	}
	for (line = text; line < text + len; line = end + 1) {
		char hex[OID_HEXSZ_MAX + 1];

		if (!(end = memchr(line, '\n', (size_t)(text + len - line))))
			end = text + len;
		if ((size_t)(end - line) == 2 * rawsz) {
			memcpy(hex, line, 2 * rawsz);
			hex[2 * rawsz] = '\0';
			if (oid_parse_hex(sh->ids + n * rawsz, hex, rawsz)) {
				n++;
				continue;
			}
		}
		log_msg(LOGL_WARN, "%s: offset %zu: not an object id: line "
		    "skipped", path, (size_t)(line - text));
	}
	free(text);
	sh->n = oid_sort_unique(sh->ids, n, rawsz);
	if (sh->n)
		*out = sh;
	else
		free(sh);
	return 0;
}

int
odb_graph_reload(struct odb *odb)
{
	struct commitgraph *fresh = NULL, *old;
	struct shallow *shallow, *old_shallow;
	uint64_t stamp;
	int ret;

	pthread_mutex_lock(&odb->refresh_lock);
	stamp = graph_stamp(odb->repo);
	if (stamp == odb->graph_stamp && atomic_load(&odb->graphs)) {
		pthread_mutex_unlock(&odb->refresh_lock);
		return 0;
	}
	if ((ret = shallow_load(odb->repo, &shallow)) < 0) {
		pthread_mutex_unlock(&odb->refresh_lock);
		return ret;
	}
	/* A shallow repository's graph is not used, as git does not. */
	ret = shallow ? 0 : -ENOENT;
	for (size_t i = 0; i < odb->repo->nobjdirs && ret == -ENOENT; i++)
		ret = commitgraph_open(odb->repo->objdirs[i],
		    odb->repo->rawsz, &fresh);
	if (ret == 0 || ret == -ENOENT) {
		odb->graph_stamp = stamp;
		PUBLISHED(&odb->graph);
		old = rcu_xchg_pointer(&odb->graph, fresh);
		old_shallow = rcu_xchg_pointer(&odb->shallow, shallow);
		atomic_fetch_add(&odb->graphs, 1);
		urcu_memb_synchronize_rcu();
		GRACE_DONE();
		commitgraph_free(old);
		free(old_shallow);
		ret = 0;
	} else
		free(shallow);
	pthread_mutex_unlock(&odb->refresh_lock);
	return ret;
}

bool
odb_is_shallow(struct odb *odb, const unsigned char *raw)
{
	const struct shallow *sh;
	size_t rawsz = odb->repo->rawsz, lo = 0, hi;
	bool yes = false;

	odb_read_lock();
	SUBSCRIBED(&odb->shallow);
	if ((sh = rcu_dereference(odb->shallow)))
		for (hi = sh->n; lo < hi && !yes;) {
			size_t mid = lo + (hi - lo) / 2;
			int c = memcmp(sh->ids + mid * rawsz, raw, rawsz);

			if (c < 0)
				lo = mid + 1;
			else if (c > 0)
				hi = mid;
			else
				yes = true;
		}
	snap_exit();
	return yes;
}

int
odb_graph_commit(struct odb *odb, const unsigned char *raw,
    unsigned char *parents, size_t max, size_t *nparents, int64_t *time)
{
	struct commitgraph *g = graph_enter(odb);
	struct cg_commit c;
	uint32_t pos, p;
	int ret = -ENOENT;

	*nparents = 0;
	if (g && commitgraph_find(g, raw, &pos) &&
	    (ret = commitgraph_commit(g, pos, &c)) == 0) {
		*nparents = c.nparents;
		*time = c.time;
		for (uint32_t n = 0; ret == 0 && n < c.nparents && n < max;
		    n++) {
			const unsigned char *id;

			if ((ret = commitgraph_parent(g, pos, n, &p)) == 0 &&
			    (id = commitgraph_oid(g, p)))
				memcpy(parents + n * g->rawsz, id, g->rawsz);
			else if (ret == 0)
				ret = -ENOENT;
		}
	}
	snap_exit();
	return ret;
}
