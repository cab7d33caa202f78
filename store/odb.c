/*
 * odb: a repository's object database behind one RCU-protected pointer to
 * the current snapshot.
 *
 *   odb_has(), odb_info(), ...
 *     snap_enter()      rcu_read_lock(); a thread registers with liburcu
 *                       on its first call and unregisters when it exits
 *     rcu_dereference(odb->snap)
 *     snapshot_find()   memory only
 *     snap_exit()       rcu_read_unlock()
 *
 *   odb_refresh()       snapshot_build(), rcu_xchg_pointer(),
 *                       synchronize_rcu(), snapshot_free(old)
 *
 * A miss is memory only too, unless the snapshot says a pack went away
 * while it was built (snapshot->vanished: git was replacing packs). Then,
 * as git re-reads its pack directory before it believes a miss, the
 * lookup has the store rescanned (once per snapshot, however many
 * lookups missed in it: recheck()) and tries again.
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

#include "odbstore/commit.h"
#include "log.h"
#include "odb.h"
#include "commitgraph.h"
#include "config.h"
#include "file.h"
#include "refs.h"
#include "reftable.h"
#include "snapshot.h"
#include "unpack.h"
#include "verify.h"

struct odb {
	struct repo *repo;
	struct cache *cache;		/* delta bases, shared by snapshots */
	bool own_cache;			/* not an odb_cache's */
	struct snapshot *snap;		/* RCU-protected */
	struct refs *refs;		/* RCU-protected */
	struct commitgraph *graph;	/* RCU-protected; NULL: none */
	struct shallow *shallow;	/* RCU-protected; NULL: not shallow */
	pthread_mutex_t refresh_lock;	/* one refresh at a time */
	uint64_t graph_stamp;		/* protected by refresh_lock */
	atomic_uint_least64_t graphs;	/* graphs published since open */
	atomic_uint_least64_t refreshes;	/* refs published since open */
	pthread_mutex_t walk_lock;	/* one walk at a time */
	struct walked *walked;		/* protected by walk_lock */
	atomic_uint_least64_t snapshots;	/* published since open */
	atomic_uint_least64_t scans;	/* begun since open */
	bool verify;			/* set before any reader runs */
	bool frozen;			/* set before any reader runs */
};

/*
 * ThreadSanitizer cannot see liburcu's barriers: tell it that publishing a
 * pointer releases what was built before and reading it acquires that.
 */
#if defined(__SANITIZE_THREAD__)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define PUBLISHED(addr) __tsan_release(addr)
#define SUBSCRIBED(addr) __tsan_acquire(addr)
/* And that a grace period orders every read-side section before it. */
static char grace;
#define READ_DONE() __tsan_release(&grace)
#define GRACE_DONE() __tsan_acquire(&grace)
#else
#define PUBLISHED(addr) ((void)0)
#define SUBSCRIBED(addr) ((void)0)
#define READ_DONE() ((void)0)
#define GRACE_DONE() ((void)0)
#endif

/*
 * Scans a refresh makes while each finds a pack gone (snapshot->vanished),
 * and rechecks a lookup asks for: git takes well under a millisecond from
 * deleting one old pack to the next, so a few passes see it through.
 */
#define ODB_RESCANS 4
#define ODB_RECHECKS 2

static _Thread_local bool registered;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static void
thread_exit(void *unused)
{
	(void)unused;
	urcu_memb_unregister_thread();
}

static void
make_exit_key(void)
{
	pthread_key_create(&exit_key, thread_exit);
}

/* Register this thread with liburcu the first time it reads. */
static void
register_thread(void)
{
	pthread_once(&exit_key_once, make_exit_key);
	urcu_memb_register_thread();
	pthread_setspecific(exit_key, &registered);
	registered = true;
}

struct walked;
static void walked_free(struct walked *w);
static int load_refs(const struct repo *repo, const struct refs *prev,
    struct refs **out);

static inline struct snapshot *
snap_enter(struct odb *odb)
{
	if (__builtin_expect(!registered, 0))
		register_thread();
	urcu_memb_read_lock();
	SUBSCRIBED(&odb->snap);
	return rcu_dereference(odb->snap);
}

static inline void
snap_exit(void)
{
	READ_DONE();
	urcu_memb_read_unlock();
}

/* Only a wrapper: its cache is an odb's like any other. */
struct odb_cache {
	struct cache *c;
};

struct odb_cache *
odb_cache_new(size_t max_bytes)
{
	struct odb_cache *oc = malloc(sizeof(*oc));

	if (oc && !(oc->c = cache_new(max_bytes))) {
		free(oc);
		oc = NULL;
	}
	return oc;
}

void
odb_cache_free(struct odb_cache *oc)
{
	if (!oc)
		return;
	cache_free(oc->c);
	free(oc);
}

int
odb_open(const char *path, struct odb **out, const char **why)
{
	return odb_open_shared(path, NULL, out, why);
}

void
odb_cache_clear(struct odb_cache *oc)
{
	cache_clear(oc->c);
}

void
odb_shed(struct odb *odb)
{
	if (odb->own_cache)
		cache_clear(odb->cache);
}

int
odb_open_shared(const char *path, struct odb_cache *shared, struct odb **out,
    const char **why)
{
	struct odb *odb;
	int ret;

	*out = NULL;
	if (!(odb = calloc(1, sizeof(*odb)))) {
		*why = "out of memory";
		return -ENOMEM;
	}
	pthread_mutex_init(&odb->refresh_lock, NULL);
	pthread_mutex_init(&odb->walk_lock, NULL);
	if ((ret = repo_open(path, &odb->repo, why)) < 0)
		goto fail;
	if (shared) {
		odb->cache = shared->c;
	} else if ((odb->cache = cache_new(ODB_CACHE_BYTES))) {
		odb->own_cache = true;
	} else {
		*why = "out of memory";
		ret = -ENOMEM;
		goto fail;
	}
	if ((ret = snapshot_build(odb->repo, NULL, &odb->snap)) < 0) {
		*why = "cannot read its object directory";
		goto fail;
	}
	odb->snap->cache = odb->cache;
	if ((ret = load_refs(odb->repo, NULL, &odb->refs)) < 0) {
		*why = "cannot read its references";
		goto fail;
	}
	/* Without a graph, listing commits walks history: not fatal. */
	if ((ret = odb_graph_reload(odb)) == -ENOMEM) {
		*why = "out of memory";
		goto fail;
	}
	*out = odb;
	return 0;
fail:
	odb_close(odb);
	return ret;
}

void
odb_close(struct odb *odb)
{
	if (!odb)
		return;
	snapshot_free(odb->snap);
	if (odb->own_cache)
		cache_free(odb->cache);
	refs_free(odb->refs);
	commitgraph_free(odb->graph);
	free(odb->shallow);
	walked_free(odb->walked);
	repo_free(odb->repo);
	pthread_mutex_destroy(&odb->refresh_lock);
	pthread_mutex_destroy(&odb->walk_lock);
	free(odb);
}

const struct repo *
odb_repo(const struct odb *odb)
{
	return odb->repo;
}

size_t
odb_rawsz(const struct odb *odb)
{
	return odb_repo(odb)->rawsz;
}

const char *
odb_format(const struct odb *odb)
{
	return odb_repo(odb)->format;
}

const char *
odb_gitdir(const struct odb *odb)
{
	return odb_repo(odb)->gitdir;
}

const char *
odb_commondir(const struct odb *odb)
{
	return odb_repo(odb)->commondir;
}

static int update_locked(struct odb *odb, struct snapshot_change *change,
    bool reload_alternates);

/*
 * A lookup failed in a snapshot that may be behind the disk: rescan,
 * unless the snapshot published by now was begun after the failure (then
 * trying it again is enough). Lookups that fail together so wait for one
 * scan rather than making one each. Called outside any read-side section.
 */
static int
recheck(struct odb *odb)
{
	struct snapshot_change full = { .full = true };
	uint64_t failed = atomic_load(&odb->scans);
	int ret = 0;

	pthread_mutex_lock(&odb->refresh_lock);
	/* odb->snap changes only under refresh_lock. */
	if (odb->snap->scan <= failed)
		ret = update_locked(odb, &full, false);
	pthread_mutex_unlock(&odb->refresh_lock);
	return ret;
}

bool
odb_has(struct odb *odb, const unsigned char *raw)
{
	bool found, suspect;

	for (int tries = 0;; tries++) {
		struct snapshot *s = snap_enter(odb);

		found = snapshot_find(s, raw, NULL);
		suspect = !found && s->vanished && !odb->frozen;
		snap_exit();
		if (!suspect || tries == ODB_RECHECKS || recheck(odb) < 0)
			return found;
	}
}

/*
 * Is the snapshot that found loc behind the disk? git deletes loose files
 * once it has packed them, so a loose file the snapshot lists may be gone;
 * and a pack whose file shrank under a read (truncated, or copied over in
 * place) may have been written anew. Rather than fail, the store is
 * rescanned and the lookup tried again. Asked inside the read-side
 * section: loc->pack lives as long as the snapshot.
 */
static bool
stale(int ret, const struct objloc *loc)
{
	if (!loc->pack)
		return ret == -ENOENT;
	return ret == -EFSCORRUPTED && pack_shrank(loc->pack);
}

/* Something to do with an object found in a snapshot. */
typedef int found_fn(const struct snapshot *s, const struct objloc *loc,
    void *arg);

/*
 * Find raw in the current snapshot and call fn on it, under the read
 * lock; if the snapshot proves stale (see stale()), or misses while a
 * pack went away (see recheck()), rescan and try again, unless the view
 * is frozen. One failure, one log line: the line of the last try
 * (log_hold()).
 */
static int
with_object(struct odb *odb, const unsigned char *raw, found_fn *fn,
    void *arg)
{
	struct objloc loc = { 0 };
	bool again;
	int ret;

	for (int tries = 0;; tries++) {
		struct snapshot *s;

		log_hold();
		s = snap_enter(odb);
		ret = -ENOENT;
		again = s->vanished;
		if (snapshot_find(s, raw, &loc)) {
			ret = fn(s, &loc, arg);
			again = stale(ret, &loc);
		}
		snap_exit();
		again = again && !odb->frozen && tries < ODB_RECHECKS;
		log_release(!again);
		if (!again)
			return ret;
		/*
		 * The rescan's lines are its own. Should it fail, the same
		 * snapshot is tried again, to fail as before and say so.
		 */
		(void)recheck(odb);
	}
}

static int
info_at(const struct snapshot *s, const struct objloc *loc, void *info)
{
	return unpack_info(s, loc, info);
}

int
odb_info(struct odb *odb, const unsigned char *raw, struct objinfo *info)
{
	return with_object(odb, raw, info_at, info);
}

static int
reader_at(const struct snapshot *s, const struct objloc *loc, void *out)
{
	return reader_open(s, loc, out);
}

int
odb_reader_open(struct odb *odb, const unsigned char *raw, struct reader **out)
{
	int ret;

	*out = NULL;
	ret = with_object(odb, raw, reader_at, out);
	if (ret == 0 && odb->verify &&
	    (ret = verify_reader(*out, raw, odb->repo->rawsz)) < 0) {
		reader_close(*out);
		*out = NULL;
	}
	return ret;
}

void
odb_set_verify(struct odb *odb, bool verify)
{
	odb->verify = verify;
}

void
odb_set_frozen(struct odb *odb, bool frozen)
{
	odb->frozen = frozen;
}

int
odb_list(struct odb *odb, unsigned b, unsigned char **ids, size_t *nr)
{
	int ret = snapshot_list(snap_enter(odb), b, ids, nr);

	snap_exit();
	return ret;
}

bool
odb_has_prefix(struct odb *odb, unsigned b)
{
	bool yes = snapshot_has_prefix(snap_enter(odb), b);

	snap_exit();
	return yes;
}

uint64_t
odb_generation(struct odb *odb)
{
	/* Acquire: a snapshot read after it is at least this one. */
	return atomic_load_explicit(&odb->snapshots, memory_order_acquire);
}

bool
odb_moved(struct odb *odb, uint64_t gen)
{
	atomic_thread_fence(memory_order_seq_cst);
	return atomic_load_explicit(&odb->snapshots,
	    memory_order_relaxed) != gen;
}

void
odb_stats(struct odb *odb, struct odb_stats *st)
{
	struct snapshot *s = snap_enter(odb);

	st->packs = s->npacks;
	st->loose = s->loose.nr;
	snap_exit();
	st->snapshots = odb_generation(odb);
	cache_counts(odb->cache, &st->cache_hits, &st->cache_misses);
}

/*
 * odb_update() with refresh_lock held. A snapshot that saw a pack go away
 * is not published while scanning the packs again may still complete it
 * (up to ODB_RESCANS scans): git renames the new packs in before it
 * deletes the old ones, so a scan that begins after a pack went away
 * finds what replaced it.
 */
static int
update_locked(struct odb *odb, struct snapshot_change *change,
    bool reload_alternates)
{
	struct snapshot_change full = { .full = true };
	struct snapshot_change packs = { .packs = true };
	struct snapshot *fresh = NULL, *old;
	uint64_t scan = atomic_fetch_add(&odb->scans, 1) + 1;
	int ret = 0;

	if (reload_alternates) {
		ret = repo_reload_objdirs(odb->repo);
		change = &full;
	}
	/* odb->snap changes only under refresh_lock: no read lock needed. */
	if (ret == 0)
		ret = snapshot_update(odb->repo, odb->snap, change, &fresh);
	for (int scans = 1; ret == 0 && fresh->vanished &&
	    scans < ODB_RESCANS; scans++) {
		struct snapshot *again;

		if ((ret = snapshot_update(odb->repo, fresh, &packs,
		    &again)) < 0)
			break;
		snapshot_free(fresh);
		fresh = again;
	}
	if (ret < 0) {
		snapshot_free(fresh);
		return ret;
	}
	fresh->cache = odb->cache;
	fresh->scan = scan;
	PUBLISHED(&odb->snap);
	old = rcu_xchg_pointer(&odb->snap, fresh);
	/*
	 * Counted once it is there (see odb_moved()): a generation read
	 * before a lookup is never that of a snapshot it did not see.
	 */
	atomic_fetch_add_explicit(&odb->snapshots, 1, memory_order_seq_cst);
	urcu_memb_synchronize_rcu();
	GRACE_DONE();
	snapshot_free(old);
	return 0;
}

int
odb_update(struct odb *odb, struct snapshot_change *change,
    bool reload_alternates)
{
	int ret;

	pthread_mutex_lock(&odb->refresh_lock);
	ret = update_locked(odb, change, reload_alternates);
	pthread_mutex_unlock(&odb->refresh_lock);
	return ret;
}

int
odb_reload_alternates(struct odb *odb)
{
	int ret;

	pthread_mutex_lock(&odb->refresh_lock);
	ret = repo_reload_objdirs(odb->repo);
	pthread_mutex_unlock(&odb->refresh_lock);
	return ret;
}

int
odb_refresh(struct odb *odb)
{
	struct snapshot_change full = { .full = true };

	return odb_update(odb, &full, false);
}

int
odb_objdirs(struct odb *odb, char ***dirs, size_t *n)
{
	int ret = 0;

	pthread_mutex_lock(&odb->refresh_lock);
	*n = odb->repo->nobjdirs;
	if (!(*dirs = calloc(*n + 1, sizeof(char *))))
		ret = -ENOMEM;
	for (size_t i = 0; ret == 0 && i < *n; i++)
		if (!((*dirs)[i] = strdup(odb->repo->objdirs[i])))
			ret = -ENOMEM;
	pthread_mutex_unlock(&odb->refresh_lock);
	if (ret < 0) {
		for (size_t i = 0; *dirs && i < *n; i++)
			free((*dirs)[i]);
		free(*dirs);
		*dirs = NULL;
	}
	return ret;
}

struct read_args {
	struct objinfo *info;
	unsigned char **buf;
};

static int
read_at(const struct snapshot *s, const struct objloc *loc, void *arg)
{
	struct read_args *a = arg;

	return unpack_object(s, loc, a->info, a->buf);
}

int
odb_read(struct odb *odb, const unsigned char *raw, struct objinfo *info,
    unsigned char **buf)
{
	struct read_args a = { info, buf };

	*buf = NULL;
	return with_object(odb, raw, read_at, &a);
}

/*
 * Tags peeled at most: git peels any depth, but a chain this long is no
 * one's history.
 */
#define PEEL_MAX_DEPTH 256

int
odb_peel(struct odb *odb, const unsigned char *raw, unsigned char *peeled,
    enum obj_type *type)
{
	unsigned char head[TAG_TARGET_MAX];
	size_t rawsz = odb->repo->rawsz;
	struct objinfo info;
	struct reader *r;
	ssize_t len;
	int ret;

	unsigned char tag[OID_RAWSZ_MAX];
	enum obj_type says = OBJ_NONE;

	memcpy(peeled, raw, rawsz);
	/* PEEL_MAX_DEPTH tags, then what the last one names. */
	for (int depth = 0; depth <= PEEL_MAX_DEPTH; depth++) {
		if ((ret = odb_info(odb, peeled, &info)) < 0)
			return ret;
		/* As git's peel: a tag's type line must say what it names. */
		if (says != OBJ_NONE && info.type != says) {
			char hex[OID_HEXSZ_MAX + 1], named[OID_HEXSZ_MAX + 1];

			oid_to_hex(hex, tag, rawsz);
			oid_to_hex(named, peeled, rawsz);
			return log_corrupt("tag %s: says %s is a %s, but it is "
			    "a %s", hex, named, object_type_name(says),
			    object_type_name(info.type));
		}
		*type = info.type;
		if (info.type != OBJ_TAG)
			return 0;
		if (depth == PEEL_MAX_DEPTH)
			break;
		memcpy(tag, peeled, rawsz);
		/* Its first lines only: a tag's message may be any size. */
		if ((ret = odb_reader_open(odb, peeled, &r)) < 0)
			return ret;
		len = reader_read(r, head, sizeof(head), 0);
		reader_close(r);
		if (len < 0)
			return (int)len;
		if ((ret = tag_target(head, (size_t)len, rawsz, peeled,
		    &says)) < 0)
			return ret;
	}
	return -ELOOP;
}

/*
 * Candidates a typed prefix look-up weighs: first on the stack, then at
 * most the second (four digits shared by as many objects: a repository
 * of four billion); more is ambiguous.
 */
#define PREFIX_CANDIDATES 64
#define PREFIX_CANDIDATES_MAX ((size_t)1 << 16)

/* The ids beginning with prefix, max at most, as snapshot_find_prefix(). */
static size_t
find_prefix(struct odb *odb, const unsigned char *prefix, size_t len,
    unsigned char *ids, size_t max)
{
	size_t n;

	for (int tries = 0;; tries++) {
		struct snapshot *s = snap_enter(odb);
		bool suspect;

		n = snapshot_find_prefix(s, prefix, len, ids, max);
		suspect = n == 0 && s->vanished;
		snap_exit();
		if (!suspect || tries == ODB_RECHECKS || recheck(odb) < 0)
			return n;
	}
}

int
odb_find_prefix(struct odb *odb, const char *hex, size_t len, unsigned types,
    unsigned char *raw)
{
	unsigned char prefix[OID_RAWSZ_MAX] = { 0 };
	unsigned char some[PREFIX_CANDIDATES * OID_RAWSZ_MAX], *ids = some;
	size_t rawsz = odb->repo->rawsz, max = types ? PREFIX_CANDIDATES : 1;
	size_t n, kept = 0;
	int ret = 0;

	if (len < 4 || len > 2 * rawsz)
		return -ENOENT;
	for (size_t i = 0; i < len; i++) {
		int v = hexval(hex[i]);

		if (v < 0)
			return -ENOENT;
		prefix[i / 2] |= (unsigned char)(i % 2 ? v : v << 4);
	}
	if ((n = find_prefix(odb, prefix, len, ids, max)) > max && types) {
		max = PREFIX_CANDIDATES_MAX;
		if (!(ids = malloc(max * rawsz)))
			return -ENOMEM;
		n = find_prefix(odb, prefix, len, ids, max);
	}
	if (n > max)
		ret = -ENOTUNIQ;
	/* Of the candidates, those of the types asked for (git's hints). */
	for (size_t i = 0; ret == 0 && i < n; i++) {
		struct objinfo info;

		if (types && (odb_info(odb, ids + i * rawsz, &info) < 0 ||
		    !(types & ODB_TYPE(info.type))))
			continue;
		if (kept++)
			ret = -ENOTUNIQ;
		else
			memcpy(raw, ids + i * rawsz, rawsz);
	}
	if (ids != some)
		free(ids);
	return ret < 0 ? ret : kept ? 0 : -ENOENT;
}

/*
 * The references, from whichever backend the repository uses now: asked
 * each time, as git refs migrate switches backends in place. As
 * refs_load().
 */
static int
load_refs(const struct repo *repo, const struct refs *prev,
    struct refs **out)
{
	if (config_reftable_now(repo))
		return reftable_load(repo, prev, out);
	return refs_load(repo, prev, out);
}

const struct refs *
odb_refs_get(struct odb *odb)
{
	if (__builtin_expect(!registered, 0))
		register_thread();
	urcu_memb_read_lock();
	SUBSCRIBED(&odb->refs);
	return rcu_dereference(odb->refs);
}

void
odb_refs_put(struct odb *odb)
{
	(void)odb;
	READ_DONE();
	urcu_memb_read_unlock();
}

int
odb_refs_reload(struct odb *odb)
{
	struct refs *fresh, *old;
	int ret;

	pthread_mutex_lock(&odb->refresh_lock);
	if ((ret = load_refs(odb->repo, odb->refs, &fresh)) == 0) {
		PUBLISHED(&odb->refs);
		old = rcu_xchg_pointer(&odb->refs, fresh);
		atomic_fetch_add(&odb->refreshes, 1);
		urcu_memb_synchronize_rcu();
		GRACE_DONE();
		refs_free(old);
	}
	pthread_mutex_unlock(&odb->refresh_lock);
	return ret;
}

static int
cmp_raw(const void *a, const void *b, void *rawsz)
{
	return memcmp(a, b, *(size_t *)rawsz);
}

/* Sort n ids and keep each once: the count kept. */
static size_t
sort_unique(unsigned char *ids, size_t n, size_t rawsz)
{
	size_t k = 0;

	if (n == 0)
		return 0;	/* ids may be NULL: no qsort_r() of it */
	qsort_r(ids, n, rawsz, cmp_raw, &rawsz);
	for (size_t i = 0; i < n; i++)
		if (k == 0 || memcmp(ids + (k - 1) * rawsz, ids + i * rawsz,
		    rawsz))
			memmove(ids + k++ * rawsz, ids + i * rawsz, rawsz);
	return k;
}

/*
 * The commit-graph and the commits listed beside it.
 *
 *   odb_graph_reload()       the watcher's side: graph_stamp(), then
 *                            commitgraph_open() on each object directory
 *                            until one has a graph (as git uses the
 *                            first), published as the refs are
 *   odb_list_commits()
 *     walk_update()          under walk_lock, when the refs or the graph
 *                            were published since the last walk: from
 *                            every ref, read commits until the graph's
 *                            or the last walk's (ODB_WALK_MAX at most)
 *     graph ids + walked ids, each kept if snapshot_find() has it
 */

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
	sh->n = sort_unique(sh->ids, n, rawsz);
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

static inline struct commitgraph *
graph_enter(struct odb *odb)
{
	if (__builtin_expect(!registered, 0))
		register_thread();
	urcu_memb_read_lock();
	SUBSCRIBED(&odb->graph);
	return rcu_dereference(odb->graph);
}

bool
odb_is_shallow(struct odb *odb, const unsigned char *raw)
{
	const struct shallow *sh;
	size_t rawsz = odb->repo->rawsz, lo = 0, hi;
	bool yes = false;

	if (__builtin_expect(!registered, 0))
		register_thread();
	urcu_memb_read_lock();
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

/* Ids in a growing array, with an open-addressing set over them. */
struct walked {
	uint64_t graphs, refreshes;	/* the publications it followed */
	size_t rawsz;
	unsigned char *ids;		/* n of them, in the order found */
	size_t n, alloc;
	uint32_t *slots;		/* index + 1 into ids; 0: empty */
	size_t nslots;			/* a power of two */
	bool capped;			/* a walk stopped at ODB_WALK_MAX */
	uint64_t checked;		/* the graph publication weighed */
	bool graph_ok;			/* it names only commits at hand */
};

static void
walked_free(struct walked *w)
{
	if (!w)
		return;
	free(w->ids);
	free(w->slots);
	free(w);
}

static size_t
slot_of(const struct walked *w, const unsigned char *raw)
{
	return (size_t)oid_prefix64(raw) & (w->nslots - 1);
}

/* Where raw is in w->ids, plus one; 0 if w does not hold it. */
static size_t
walked_index(const struct walked *w, const unsigned char *raw)
{
	if (!w->nslots)
		return 0;
	for (size_t s = slot_of(w, raw);; s = (s + 1) & (w->nslots - 1)) {
		uint32_t i = w->slots[s];

		if (!i || !memcmp(w->ids + (size_t)(i - 1) * w->rawsz, raw,
		    w->rawsz))
			return i;
	}
}

static bool
walked_has(const struct walked *w, const unsigned char *raw)
{
	return walked_index(w, raw) != 0;
}

/* Add raw, which it does not hold. */
static int
walked_add(struct walked *w, const unsigned char *raw)
{
	size_t s;

	if (w->n == w->alloc) {
		size_t na = w->alloc ? 2 * w->alloc : 1024;
		unsigned char *grown = realloc(w->ids, na * w->rawsz);

		if (!grown)
			return -ENOMEM;
		w->ids = grown;
		w->alloc = na;
	}
	if (2 * (w->n + 1) > w->nslots) {
		size_t ns = w->nslots ? 2 * w->nslots : 2048;
		uint32_t *grown = calloc(ns, sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		free(w->slots);
		w->slots = grown;
		w->nslots = ns;
		for (size_t i = 0; i < w->n; i++) {
			for (s = slot_of(w, w->ids + i * w->rawsz);
			    w->slots[s]; s = (s + 1) & (ns - 1))
				;
			w->slots[s] = (uint32_t)i + 1;
		}
	}
	memcpy(w->ids + w->n * w->rawsz, raw, w->rawsz);
	for (s = slot_of(w, raw); w->slots[s]; s = (s + 1) & (w->nslots - 1))
		;
	w->slots[s] = (uint32_t)++w->n;
	return 0;
}

/*
 * Does the graph name only objects the repository has? git writes it
 * after pruning, so one that names an absent id is stale or damaged,
 * and its parent links may pass over a commit it does not name: the walk
 * must not stop at its commits. Logged with the layer and offset.
 */
static bool
graph_trusted(struct odb *odb)
{
	struct snapshot *s = snap_enter(odb);
	struct commitgraph *g = graph_enter(odb);
	bool ok = true;

	for (size_t i = 0; g && ok && i < g->nlayers; i++) {
		const struct cg_layer *l = &g->layers[i];

		for (uint32_t j = 0; ok && j < l->nr; j++) {
			const unsigned char *id = l->oids + (size_t)j * g->rawsz;
			char hex[OID_HEXSZ_MAX + 1];

			if (snapshot_find(s, id, NULL))
				continue;
			oid_to_hex(hex, id, g->rawsz);
			log_msg(LOGL_WARN, "%s: offset %zu: names commit %s, "
			    "which the repository lacks: commits are listed "
			    "by walking history", l->path,
			    (size_t)(id - l->map), hex);
			ok = false;
		}
	}
	snap_exit();
	snap_exit();
	return ok;
}

static bool
in_graph(struct odb *odb, const unsigned char *raw)
{
	struct commitgraph *g = graph_enter(odb);
	uint32_t pos;
	bool yes = g && commitgraph_find(g, raw, &pos);

	snap_exit();
	return yes;
}

/* Ids still to visit. */
struct stack {
	unsigned char *ids;
	size_t n, alloc, rawsz;
};

static int
push(struct stack *st, const unsigned char *raw)
{
	if (st->n == st->alloc) {
		size_t na = st->alloc ? 2 * st->alloc : 256;
		unsigned char *grown = realloc(st->ids, na * st->rawsz);

		if (!grown)
			return -ENOMEM;
		st->ids = grown;
		st->alloc = na;
	}
	memcpy(st->ids + st->n++ * st->rawsz, raw, st->rawsz);
	return 0;
}

/* Push the commit a ref's id peels to; skip what is no commit. */
static int
push_tip(struct odb *odb, struct stack *st, const unsigned char *raw)
{
	unsigned char peeled[OID_RAWSZ_MAX];
	enum obj_type type;

	if (odb_peel(odb, raw, peeled, &type) < 0 || type != OBJ_COMMIT)
		return 0;
	return push(st, peeled);
}

/*
 * The header of object raw, which must be of type (else -ENOENT), as
 * commit_header_read() gives it, with the object's size; what names it
 * in log lines ("commit <hex>").
 */
static int
header_read(struct odb *odb, const unsigned char *raw, enum obj_type type,
    char *what, unsigned char **buf, size_t *len, uint64_t *size)
{
	size_t rawsz = odb->repo->rawsz;
	struct reader *r;
	int ret;

	*buf = NULL;
	sprintf(what, "%s ", object_type_name(type));
	oid_to_hex(what + strlen(what), raw, rawsz);
	if ((ret = odb_reader_open(odb, raw, &r)) < 0)
		return ret;
	*size = reader_info(r)->size;
	ret = reader_info(r)->type != type ? -ENOENT :
	    commit_header_read(r, what, buf, len);
	reader_close(r);
	return ret;
}

int
odb_commit_read(struct odb *odb, const unsigned char *raw, struct commit *c)
{
	char what[8 + OID_HEXSZ_MAX];
	unsigned char *buf;
	uint64_t size;
	size_t len;
	int ret;

	memset(c, 0, sizeof(*c));
	if ((ret = header_read(odb, raw, OBJ_COMMIT, what, &buf, &len,
	    &size)) == 0)
		ret = commit_parse(c, what, buf, len, size, odb->repo->rawsz);
	free(buf);
	if (ret < 0)
		commit_release(c);
	return ret;
}

int
odb_tag_read(struct odb *odb, const unsigned char *raw, struct tag *t)
{
	char what[8 + OID_HEXSZ_MAX];
	unsigned char *buf;
	uint64_t size;
	size_t len;
	int ret;

	memset(t, 0, sizeof(*t));
	if ((ret = header_read(odb, raw, OBJ_TAG, what, &buf, &len,
	    &size)) == 0)
		ret = tag_parse(t, what, buf, len, size, odb->repo->rawsz);
	free(buf);
	if (ret < 0)
		tag_release(t);
	return ret;
}

/* The parents of commit raw, pushed; a commit that cannot be read: none. */
static int
push_parents(struct odb *odb, struct stack *st, const unsigned char *raw)
{
	struct commit c;
	int ret;

	if (odb_is_shallow(odb, raw))
		return 0;
	ret = odb_commit_read(odb, raw, &c);
	for (size_t i = 0; ret == 0 && i < c.nparents; i++)
		ret = push(st, c.parents + i * st->rawsz);
	commit_release(&c);
	return ret == -ENOMEM ? ret : 0;
}

static void walked_sort(struct walked *w);

/*
 * Bring odb->walked up to the refs and graph published now: walk from
 * every ref and HEAD to the commits the graph or an earlier walk holds.
 * With walk_lock held.
 */
static int
walk_update(struct odb *odb)
{
	uint64_t graphs = atomic_load(&odb->graphs);
	uint64_t refreshes = atomic_load(&odb->refreshes);
	struct walked *w = odb->walked;
	size_t rawsz = odb->repo->rawsz, read = 0;
	struct stack st = { .rawsz = rawsz }, tips = { 0 };
	const struct refs *refs;
	int ret = 0;

	if (w && w->graphs == graphs && w->refreshes == refreshes)
		return 0;
	if (!w) {
		if (!(w = calloc(1, sizeof(*w))))
			return -ENOMEM;
		w->rawsz = rawsz;
		odb->walked = w;
	} else if (w->graphs != graphs) {
		/*
		 * The last walk stopped at the old graph's commits: what
		 * lies below them may be in no graph now (one deleted, or
		 * written for fewer commits). Walk again from scratch.
		 */
		w->n = 0;
		if (w->slots)
			memset(w->slots, 0, w->nslots * sizeof(*w->slots));
		w->capped = false;
	}
	if (w->checked != graphs) {
		w->graph_ok = graph_trusted(odb);
		w->checked = graphs;
	}
	/* The tips, copied: the refs are not held across reads. */
	tips.rawsz = rawsz;
	refs = odb_refs_get(odb);
	for (size_t i = 0; ret == 0 && i < refs->n; i++)
		ret = push(&tips, refs->v[i].id);
	if (ret == 0 && refs->head_detached)
		ret = push(&tips, refs->head_id);
	odb_refs_put(odb);
	for (size_t i = 0; ret == 0 && i < tips.n; i++)
		ret = push_tip(odb, &st, tips.ids + i * rawsz);
	free(tips.ids);
	while (ret == 0 && st.n) {
		const unsigned char *raw = st.ids + --st.n * rawsz;
		unsigned char id[OID_RAWSZ_MAX];

		if (walked_has(w, raw) || (w->graph_ok && in_graph(odb, raw)) ||
		    !odb_has(odb, raw))
			continue;
		if (read == ODB_WALK_MAX) {
			if (!w->capped)
				log_msg(LOGL_WARN, "%s: listing commits stops "
				    "at %zu read: write a commit-graph (git "
				    "commit-graph write --reachable)",
				    odb->repo->commondir, read);
			w->capped = true;
			break;
		}
		memcpy(id, raw, rawsz);
		if ((ret = walked_add(w, id)) == 0)
			ret = push_parents(odb, &st, id);
		read++;
	}
	free(st.ids);
	if (read)
		walked_sort(w);
	if (ret == 0) {
		w->graphs = graphs;
		w->refreshes = refreshes;
	}
	return ret;
}

/* Sort the walk's ids, for listing, and index them again. */
static void
walked_sort(struct walked *w)
{
	size_t rawsz = w->rawsz;

	qsort_r(w->ids, w->n, rawsz, cmp_raw, &rawsz);
	memset(w->slots, 0, w->nslots * sizeof(*w->slots));
	for (size_t i = 0; i < w->n; i++) {
		size_t s = slot_of(w, w->ids + i * rawsz);

		while (w->slots[s])
			s = (s + 1) & (w->nslots - 1);
		w->slots[s] = (uint32_t)i + 1;
	}
}

/*
 * Merge the sorted runs a (na ids) and b (nb) into out, each id once;
 * the number of ids written.
 */
static size_t
merge(const unsigned char *a, size_t na, const unsigned char *b, size_t nb,
    unsigned char *out, size_t rawsz)
{
	size_t i = 0, j = 0, k = 0;

	while (i < na || j < nb) {
		const unsigned char *next;

		if (j == nb || (i < na && memcmp(a + i * rawsz, b + j * rawsz,
		    rawsz) <= 0))
			next = a + i++ * rawsz;
		else
			next = b + j++ * rawsz;
		if (!k || memcmp(out + (k - 1) * rawsz, next, rawsz))
			memcpy(out + k++ * rawsz, next, rawsz);
	}
	return k;
}

/*
 * The ids of the sorted run ids (n of them) that the snapshot has,
 * merged into the k ids at *all: *all and *spare swap.
 */
static size_t
merge_present(const struct snapshot *s, const unsigned char *ids, size_t n,
    unsigned char **all, size_t k, unsigned char **spare, size_t rawsz)
{
	unsigned char *run = *spare + k * rawsz, *swap;
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		if (snapshot_find(s, ids + i * rawsz, NULL))
			memcpy(run + m++ * rawsz, ids + i * rawsz, rawsz);
	if (!k) {
		memcpy(*all, run, m * rawsz);
		return m;
	}
	k = merge(*all, k, run, m, *spare, rawsz);
	swap = *all;
	*all = *spare;
	*spare = swap;
	return k;
}

int
odb_list_commits(struct odb *odb, unsigned char **ids, size_t *n)
{
	size_t rawsz = odb->repo->rawsz, total, k = 0;
	struct commitgraph *g;
	struct snapshot *s;
	unsigned char *all = NULL, *spare = NULL;
	int ret;

	*ids = NULL;
	*n = 0;
	pthread_mutex_lock(&odb->walk_lock);
	if ((ret = walk_update(odb)) < 0)
		goto out;
	/* A pack went away while the snapshot was built: see recheck(). */
	s = snap_enter(odb);
	if (s->vanished && !odb->frozen) {
		snap_exit();
		(void)recheck(odb);
		s = snap_enter(odb);
	}
	g = graph_enter(odb);
	total = odb->walked->n + (g ? g->nr : 0);
	/*
	 * The runs hold total ids together: what is merged so far and the
	 * next run fit in one buffer of that size.
	 */
	if (!(all = malloc(total * rawsz + 1)) ||
	    !(spare = malloc(total * rawsz + 1))) {
		ret = -ENOMEM;
		snap_exit();
		snap_exit();
		goto out;
	}
	/* The walk's ids and each layer's are sorted runs: merged. */
	k = merge_present(s, odb->walked->ids, odb->walked->n, &all, k,
	    &spare, rawsz);
	for (size_t i = 0; g && i < g->nlayers; i++)
		k = merge_present(s, g->layers[i].oids, g->layers[i].nr, &all,
		    k, &spare, rawsz);
	if (g && commitgraph_shrank(g))
		log_msg(LOGL_ERROR, "%s: commit-graph shrank while listed",
		    g->layers[0].path);
	snap_exit();
	snap_exit();
	*ids = all;
	*n = k;
	all = NULL;
out:
	pthread_mutex_unlock(&odb->walk_lock);
	free(all);
	free(spare);
	return ret;
}

int
odb_commit_tree(struct odb *odb, const unsigned char *raw, unsigned char *tree)
{
	struct commitgraph *g = graph_enter(odb);
	struct commit c;
	struct cg_commit cc;
	uint32_t pos;
	int ret = -ENOENT;

	if (g && commitgraph_find(g, raw, &pos) &&
	    commitgraph_commit(g, pos, &cc) == 0) {
		memcpy(tree, cc.tree, g->rawsz);
		ret = 0;
	}
	snap_exit();
	if (ret == 0)
		return 0;
	if ((ret = odb_commit_read(odb, raw, &c)) == 0)
		memcpy(tree, c.tree, odb->repo->rawsz);
	commit_release(&c);
	return ret;
}

static bool
is_tree(struct odb *odb, const unsigned char *raw)
{
	struct objinfo info;

	return odb_info(odb, raw, &info) == 0 && info.type == OBJ_TREE;
}

int
odb_list_trees(struct odb *odb, unsigned char **ids, size_t *n)
{
	size_t rawsz = odb->repo->rawsz, nc, k = 0, bad = 0;
	char bad_hex[OID_HEXSZ_MAX + 1];
	unsigned char *commits;
	int ret;

	*ids = NULL;
	*n = 0;
	if ((ret = odb_list_commits(odb, &commits, &nc)) < 0)
		return ret;
	/*
	 * In place: the tree of the i-th commit goes at k <= i, if it is a
	 * tree: the graph's, or, when the graph names something else (a
	 * damaged or hostile graph, said once), the commit's own.
	 */
	for (size_t i = 0; i < nc; i++) {
		unsigned char c[OID_RAWSZ_MAX], *tree = commits + k * rawsz;
		struct commit cm;

		/* The tree may go where the commit's id was: copied first. */
		memcpy(c, commits + i * rawsz, rawsz);
		if (odb_commit_tree(odb, c, tree) < 0)
			continue;
		if (is_tree(odb, tree)) {
			k++;
			continue;
		}
		if (odb_commit_read(odb, c, &cm) == 0 &&
		    memcmp(cm.tree, tree, rawsz) && is_tree(odb, cm.tree)) {
			if (!bad)
				oid_to_hex(bad_hex, c, rawsz);
			bad++;
			memcpy(tree, cm.tree, rawsz);
			k++;
		}
		commit_release(&cm);
	}
	if (bad)
		log_once(LOGL_WARN, "%s: the commit-graph names for %zu "
		    "commits a tree that is none (the first %s): their trees "
		    "are read from them", odb->repo->commondir, bad, bad_hex);
	*ids = commits;
	*n = sort_unique(commits, k, rawsz);
	return 0;
}

int
odb_list_tags(struct odb *odb, unsigned char **ids, size_t *n)
{
	size_t rawsz = odb->repo->rawsz;
	struct stack tips = { .rawsz = rawsz };
	/*
	 * Each tag descended from once, with the most peels left it was met
	 * with (left[]): refs to the tags of one chain cost the chain, not
	 * the chain times the refs.
	 */
	struct walked tags = { .rawsz = rawsz };
	uint16_t *left = NULL;
	const struct refs *refs;
	int ret = 0;

	*ids = NULL;
	*n = 0;
	refs = odb_refs_get(odb);
	for (size_t i = 0; ret == 0 && i < refs->n; i++)
		ret = push(&tips, refs->v[i].id);
	if (ret == 0 && refs->head_detached)
		ret = push(&tips, refs->head_id);
	odb_refs_put(odb);
	for (size_t i = 0; ret == 0 && i < tips.n; i++) {
		unsigned char id[OID_RAWSZ_MAX];
		struct objinfo info;
		struct tag t;

		memcpy(id, tips.ids + i * rawsz, rawsz);
		for (int depth = 0; ret == 0 && depth < PEEL_MAX_DEPTH;
		    depth++) {
			uint16_t more = (uint16_t)(PEEL_MAX_DEPTH - depth);
			size_t at = walked_index(&tags, id);

			if (at && left[at - 1] >= more)
				break;
			if (!at) {
				uint16_t *grown;

				if (odb_info(odb, id, &info) < 0 ||
				    info.type != OBJ_TAG)
					break;
				if ((ret = walked_add(&tags, id)) < 0)
					break;
				if (!(grown = realloc(left, tags.alloc *
				    sizeof(*left)))) {
					ret = -ENOMEM;
					break;
				}
				left = grown;
				at = tags.n;
			}
			left[at - 1] = more;
			if (odb_tag_read(odb, id, &t) < 0)
				break;
			memcpy(id, t.object, rawsz);
			tag_release(&t);
		}
	}
	free(tips.ids);
	free(tags.slots);
	free(left);
	if (ret < 0) {
		free(tags.ids);
		return ret;
	}
	*ids = tags.ids;
	*n = sort_unique(tags.ids, tags.n, rawsz);
	return 0;
}
