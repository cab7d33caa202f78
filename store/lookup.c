/*
 * lookup: the odb's read side and its publication (part of odb, its odb_*
 * functions declared in odbstore/odb.h and store/odb.h): a repository's
 * object database behind one RCU-protected pointer to the current
 * snapshot, and its refs behind another.
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
 * lookups missed in it: odb_recheck()) and tries again.
 */
#define _LGPL_SOURCE	/* inline the RCU read side */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <urcu/urcu-memb.h>

#include "commit.h"
#include "cache.h"
#include "config.h"
#include "log.h"
#include "odb.h"
#include "refs.h"
#include "reftable.h"
#include "snapshot.h"
#include "unpack.h"
#include "verify.h"

/*
 * Scans a refresh makes while each finds a pack gone (snapshot->vanished),
 * and rechecks a lookup asks for: git takes well under a millisecond from
 * deleting one old pack to the next, so a few passes see it through.
 */
#define ODB_RESCANS 4
#define ODB_RECHECKS 2

_Thread_local bool odb_registered;
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
void
odb_register_thread(void)
{
	pthread_once(&exit_key_once, make_exit_key);
	urcu_memb_register_thread();
	pthread_setspecific(exit_key, &odb_registered);
	odb_registered = true;
}

#if defined(__SANITIZE_THREAD__)
char odb_grace;
#endif

static int update_locked(struct odb *odb, struct snapshot_change *change,
    bool reload_alternates);

/*
 * A lookup failed in a snapshot that may be behind the disk: rescan,
 * unless the snapshot published by now was begun after the failure (then
 * trying it again is enough). Lookups that fail together so wait for one
 * scan rather than making one each. Called outside any read-side section.
 */
int
odb_recheck(struct odb *odb)
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
		if (!suspect || tries == ODB_RECHECKS || odb_recheck(odb) < 0)
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
 * pack went away (see odb_recheck()), rescan and try again, unless the view
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
		(void)odb_recheck(odb);
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
		if (!suspect || tries == ODB_RECHECKS || odb_recheck(odb) < 0)
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

int
odb_refs_load(const struct repo *repo, const struct refs *prev,
    struct refs **out)
{
	if (config_reftable_now(repo))
		return reftable_load(repo, prev, out);
	return refs_load(repo, prev, out);
}

const struct refs *
odb_refs_get(struct odb *odb)
{
	odb_read_lock();
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
	if ((ret = odb_refs_load(odb->repo, odb->refs, &fresh)) == 0) {
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
