/*
 * snapshot: building and querying immutable views of the object database.
 * Built at open and on each refresh (published by lookup.c); queried on
 * every lookup.
 *
 *   snapshot_find()            the lookup path: memory only
 *     filter_has()               one bit per id prefix: most misses end here
 *     packtable_find()           one table over every pack's ids: a slot,
 *                                then the id in that pack's index
 *       idx_offset()             when the caller wants the location
 *     (no table: idx_find() in each pack in turn, interpolation search)
 *     looseset_find()            -> fan-out, binary search
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "log.h"
#include "oid.h"
#include "snapshot.h"

/*
 * About 16 bits per object keep false positives near 1 in 16. A small
 * repository's filter is small too (1 024 bits, 128 bytes): a mount of
 * many holds one per repository open.
 */
#define FILTER_MIN_BITS 10
#define FILTER_MAX_BITS 28

static inline void
filter_set(struct snapshot *s, const unsigned char *raw)
{
	uint64_t bit = oid_prefix64(raw) >> (64 - s->filter_bits);

	s->filter[bit / 64] |= (uint64_t)1 << (bit % 64);
}

static inline bool
filter_has(const struct snapshot *s, const unsigned char *raw)
{
	uint64_t bit = oid_prefix64(raw) >> (64 - s->filter_bits);

	return s->filter[bit / 64] >> (bit % 64) & 1;
}

/*
 * Build s's filter. With prev (whose packs s shares), prev's filter is copied and the new ids set: bits of ids that
 * went away stay set, which costs a little precision and no correctness.
 */
static int
filter_build(struct snapshot *s, const struct snapshot *prev)
{
	size_t total = s->loose.nr, words;
	unsigned bits = FILTER_MIN_BITS;

	for (size_t i = 0; i < s->npacks; i++)
		total += s->packs[i]->idx.nr;
	while (bits < FILTER_MAX_BITS && ((size_t)1 << bits) < 16 * total)
		bits++;
	s->filter_bits = bits;
	words = ((size_t)1 << bits) / 64;
	if (prev && prev->filter_bits == bits) {
		if (!(s->filter = malloc(words * sizeof(uint64_t))))
			return -ENOMEM;
		memcpy(s->filter, prev->filter, words * sizeof(uint64_t));
		for (size_t k = 0; k < s->loose.nr; k++)
			filter_set(s, s->loose.ids + k * s->rawsz);
		return 0;
	}
	if (!(s->filter = calloc(words, sizeof(uint64_t))))
		return -ENOMEM;
	for (size_t i = 0; i < s->npacks; i++) {
		const struct idx *idx = &s->packs[i]->idx;

		for (uint32_t k = 0; k < idx->nr; k++)
			filter_set(s, idx_oid(idx, k));
	}
	for (size_t k = 0; k < s->loose.nr; k++)
		filter_set(s, s->loose.ids + k * s->rawsz);
	return 0;
}

/* Same packs in the same order? Then their table is the same too. */
static bool
same_packs(const struct snapshot *a, const struct snapshot *b)
{
	return a->npacks == b->npacks && (a->npacks == 0 ||
	    !memcmp(a->packs, b->packs, a->npacks * sizeof(a->packs[0])));
}

/*
 * Give s its pack table: prev's, when s lists the same packs in the same
 * order (a refresh for loose objects alone keeps it, and so does a rescan
 * that finds the same packs), else a new one. prev's packs are alive, so
 * equal pointers mean equal packs. Without a table lookups search pack by
 * pack, correct but slower: not an error. A prev without one passes that
 * on, so that packs refused once (an index whose ids crowd into one part
 * of the table) are not tried again on every refresh.
 */
static void
table_build(struct snapshot *s, const struct snapshot *prev)
{
	int ret;

	if (prev && same_packs(s, prev)) {
		s->table = prev->table ? packtable_ref(prev->table) : NULL;
		return;
	}
	ret = packtable_build(s->packs, s->npacks, s->rawsz, &s->table);
	if (ret < 0)
		log_msg(LOGL_WARN, "no lookup table over %zu packs (error %d): "
		    "searching them one by one", s->npacks, ret);
}

static int
add_pack(struct snapshot *s, struct pack *p)
{
	struct pack **grown;

	grown = realloc(s->packs, (s->npacks + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	s->packs = grown;
	s->packs[s->npacks++] = p;
	return 0;
}

/*
 * A pack of prev opened from these very files, or NULL. A file changed in
 * place (truncated, copied over) is opened afresh, and so is a pack that
 * a read found shrunk.
 */
static struct pack *
reusable(const struct snapshot *prev, const char *path,
    const struct fileid *idx, const struct fileid *pack)
{
	for (size_t i = 0; prev && i < prev->npacks; i++) {
		struct pack *p = prev->packs[i];

		if (fileid_same(&p->file.id, pack) &&
		    fileid_same(&p->idx.file.id, idx) &&
		    !strcmp(p->path, path) && !pack_shrank_quietly(p))
			return p;
	}
	return NULL;
}

static bool
is_pack_idx_name(const char *name)
{
	size_t n = strlen(name);

	if (n < 10 || strncmp(name, "pack-", 5) || strcmp(name + n - 4, ".idx"))
		return false;
	for (size_t i = 5; i < n - 4; i++)
		if (hexval(name[i]) < 0)
			return false;
	return true;
}

static int
add_skipped(struct snapshot *s, const char *path, struct fileid idx,
    struct fileid pack)
{
	struct skipped *grown = realloc(s->skipped, (s->nskipped + 1) *
	    sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	s->skipped = grown;
	if (!(grown[s->nskipped].path = strdup(path)))
		return -ENOMEM;
	grown[s->nskipped].idx = idx;
	grown[s->nskipped].pack = pack;
	s->nskipped++;
	return 0;
}

/* Did prev skip these very files? Then skip them again, quietly. */
static bool
skipped_before(const struct snapshot *prev, const char *path,
    const struct fileid *idx, const struct fileid *pack)
{
	for (size_t i = 0; prev && i < prev->nskipped; i++) {
		const struct skipped *k = &prev->skipped[i];

		if (!strcmp(k->path, path) && fileid_same(&k->idx, idx) &&
		    fileid_same(&k->pack, pack))
			return true;
	}
	return false;
}

/* Does s list p's files, open or skipped as corrupt? */
static bool
lists(const struct snapshot *s, const struct pack *p)
{
	size_t stem = strlen(p->path) - 5;	/* without ".pack" */

	for (size_t k = 0; k < s->npacks; k++)
		if (s->packs[k] == p || !strcmp(s->packs[k]->path, p->path))
			return true;
	for (size_t k = 0; k < s->nskipped; k++)
		if (!strncmp(s->skipped[k].path, p->path, stem) &&
		    !strcmp(s->skipped[k].path + stem, ".idx"))
			return true;
	return false;
}

/*
 * Did a pack of prev in object directory dirno drop out of s? git deletes
 * a pack it replaced, and the scan may have missed its replacement.
 */
static bool
lost_packs(const struct snapshot *s, const struct snapshot *prev,
    unsigned dirno)
{
	for (size_t i = 0; prev && i < prev->npacks; i++)
		if (prev->packs[i]->dir == dirno && !lists(s, prev->packs[i]))
			return true;
	return false;
}

/*
 * Open every pack-<hex>.idx of dir that has a regular .pack beside it;
 * set s->vanished if a pack went away meanwhile (see snapshot.h).
 */
static int
scan_packs(struct snapshot *s, const char *dir, unsigned dirno,
    const struct snapshot *prev)
{
	char packdir[4096], idxpath[4096 + 256], packpath[4096 + 256];
	struct dirent *de;
	DIR *d;
	int ret = 0;

	if ((size_t)snprintf(packdir, sizeof(packdir), "%s/pack", dir) >=
	    sizeof(packdir))
		return -ENAMETOOLONG;
	/*
	 * As git does: say why, and go on without them; once, not at each
	 * rescan a change brings while it lasts.
	 */
	if (!(d = opendir(packdir))) {
		ret = -errno;
		if (ret != -ENOENT)
			log_once(LOGL_ERROR, "%s: %s: its packs are left out",
			    packdir, strerror(-ret));
		return ret == -ENOMEM ? ret : 0;
	}
	while (ret == 0 && (de = readdir(d))) {
		struct stat ist, pst;
		struct fileid iid, pid;
		struct pack *p;
		size_t n = strlen(de->d_name);

		if (!is_pack_idx_name(de->d_name))
			continue;
		snprintf(idxpath, sizeof(idxpath), "%s/%s", packdir,
		    de->d_name);
		snprintf(packpath, sizeof(packpath), "%s/%.*s.pack", packdir,
		    (int)(n - 4), de->d_name);
		/*
		 * What a symlink leads to, as pack_open() follows it; not
		 * regular files: pack_open() refuses them, logged.
		 */
		if (stat(idxpath, &ist) < 0) {
			int err = errno;

			/* Gone since readdir(): git deletes packs it replaced. */
			if (err == ENOENT && lstat(idxpath, &ist) < 0)
				s->vanished = true;
			else
				log_once(LOGL_WARN, "%s: %s: pack skipped",
				    packpath, strerror(err));
			continue;
		}
		iid = fileid_of(&ist);
		if (stat(packpath, &pst) < 0) {
			int err = errno;

			/* A dangling symlink, a loop, no access: said once. */
			if (err != ENOENT || lstat(packpath, &pst) == 0) {
				log_once(LOGL_WARN, "%s: %s: pack skipped",
				    packpath, strerror(err));
				continue;
			}
			/*
			 * An index without its pack: being deleted (git
			 * removes the .pack first) or left so. Skipped, so
			 * that only the first scan to find it so takes it
			 * for a pack going away.
			 */
			memset(&pst, 0, sizeof(pst));
			pid = fileid_of(&pst);
			if (!skipped_before(prev, idxpath, &iid, &pid))
				s->vanished = true;
			ret = add_skipped(s, idxpath, iid, pid);
			continue;
		}
		pid = fileid_of(&pst);
		if ((p = reusable(prev, packpath, &iid, &pid))) {
			ret = add_pack(s, pack_ref(p));
		} else if (skipped_before(prev, idxpath, &iid, &pid)) {
			ret = add_skipped(s, idxpath, iid, pid);
			continue;
		} else if ((ret = pack_open(idxpath, packpath, s->rawsz, dirno,
		    &p)) == 0) {
			ret = add_pack(s, p);
		} else if (ret == -EFSCORRUPTED) {
			/* Logged where it was found; not tried again. */
			ret = add_skipped(s, idxpath, iid, pid);
			continue;
		} else if (ret == -ENOENT || ret == -ENOMEM || ret == -EMFILE) {
			/* Gone meanwhile (gc), or out of something. */
			if (ret == -ENOENT)
				s->vanished = true;
			else
				log_msg(LOGL_WARN, "%s: pack skipped: %s",
				    packpath, strerror(-ret));
			ret = 0;
			continue;
		} else {
			/* EACCES, ELOOP: said once, until the files change. */
			log_msg(LOGL_WARN, "%s: pack skipped: %s", packpath,
			    strerror(-ret));
			ret = add_skipped(s, idxpath, iid, pid);
			continue;
		}
		if (ret < 0)
			pack_unref(p);
	}
	closedir(d);
	if (ret == 0 && !s->vanished)
		s->vanished = lost_packs(s, prev, dirno);
	return ret;
}

/* The snapshot's own copy of the object directories, for loose reads. */
static int
copy_objdirs(struct snapshot *s, const struct repo *repo)
{
	if (!(s->objdirs = calloc(repo->nobjdirs, sizeof(char *))))
		return -ENOMEM;
	for (; s->nobjdirs < repo->nobjdirs; s->nobjdirs++)
		if (!(s->objdirs[s->nobjdirs] =
		    strdup(repo->objdirs[s->nobjdirs])))
			return -ENOMEM;
	return 0;
}

int
snapshot_build(const struct repo *repo, const struct snapshot *prev,
    struct snapshot **out)
{
	struct snapshot *s;
	int ret = -ENOMEM;

	*out = NULL;
	if (!(s = calloc(1, sizeof(*s))))
		return -ENOMEM;
	s->rawsz = repo->rawsz;
	if ((ret = copy_objdirs(s, repo)) < 0)
		goto fail;
	/* Loose first: see snapshot.h. */
	ret = looseset_scan(&s->loose, repo->objdirs, repo->nobjdirs,
	    repo->rawsz);
	if (ret < 0)
		goto fail;
	for (size_t i = 0; i < repo->nobjdirs; i++)
		if ((ret = scan_packs(s, repo->objdirs[i], (unsigned)i,
		    prev)) < 0)
			goto fail;
	if ((ret = filter_build(s, NULL)) < 0)
		goto fail;
	table_build(s, prev);
	*out = s;
	return 0;
fail:
	snapshot_free(s);
	return ret;
}

int
snapshot_update(const struct repo *repo, const struct snapshot *prev,
    struct snapshot_change *change, struct snapshot **out)
{
	struct snapshot *s;
	int ret = -ENOMEM;

	*out = NULL;
	if (change->full || !prev || prev->nobjdirs != repo->nobjdirs)
		return snapshot_build(repo, prev, out);
	if (!(s = calloc(1, sizeof(*s))))
		return -ENOMEM;
	s->rawsz = repo->rawsz;
	if ((ret = copy_objdirs(s, repo)) < 0)
		goto fail;
	/* Loose first: see snapshot.h. */
	ret = looseset_update(&s->loose, &prev->loose, change->touched,
	    change->ntouched, repo->objdirs);
	if (ret < 0)
		goto fail;
	if (change->packs) {
		for (size_t i = 0; i < repo->nobjdirs; i++)
			if ((ret = scan_packs(s, repo->objdirs[i], (unsigned)i,
			    prev)) < 0)
				goto fail;
	} else {
		for (size_t i = 0; i < prev->npacks; i++)
			if ((ret = add_pack(s, pack_ref(prev->packs[i]))) < 0) {
				pack_unref(prev->packs[i]);
				goto fail;
			}
		for (size_t i = 0; i < prev->nskipped; i++) {
			const struct skipped *k = &prev->skipped[i];

			if ((ret = add_skipped(s, k->path, k->idx,
			    k->pack)) < 0)
				goto fail;
		}
		s->vanished = prev->vanished;
	}
	ret = filter_build(s, change->packs ? NULL : prev);
	if (ret < 0)
		goto fail;
	table_build(s, prev);
	*out = s;
	return 0;
fail:
	snapshot_free(s);
	return ret;
}

void
snapshot_free(struct snapshot *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->npacks; i++)
		pack_unref(s->packs[i]);
	free(s->packs);
	looseset_free(&s->loose);
	free(s->filter);
	packtable_unref(s->table);
	for (size_t i = 0; i < s->nskipped; i++)
		free(s->skipped[i].path);
	free(s->skipped);
	for (size_t i = 0; i < s->nobjdirs; i++)
		free(s->objdirs[i]);
	free(s->objdirs);
	free(s);
}

/* Where the entry at pos of p's index is; PACK_OFF_BAD if it lies. */
static void
set_packed(struct objloc *loc, struct pack *p, uint32_t pos)
{
	if (idx_offset(&p->idx, pos, &loc->off, p->path) < 0)
		loc->off = PACK_OFF_BAD;
	loc->pack = p;
	loc->dir = p->dir;
	loc->id = NULL;
}

bool
snapshot_find(const struct snapshot *s, const unsigned char *raw,
    struct objloc *loc)
{
	struct pack *p;
	uint32_t ipos;
	size_t pos;

	if (!filter_has(s, raw))
		return false;
	if (s->table && packtable_find(s->table, raw, &p, &ipos)) {
		if (loc)
			set_packed(loc, p, ipos);
		return true;
	}
	for (size_t i = 0; !s->table && i < s->npacks; i++)
		if (idx_find(&s->packs[i]->idx, raw, &ipos)) {
			if (loc)
				set_packed(loc, s->packs[i], ipos);
			return true;
		}
	if (!looseset_find(&s->loose, raw, &pos))
		return false;
	if (loc) {
		loc->pack = NULL;
		loc->off = 0;
		loc->dir = s->loose.dirs[pos];
		loc->id = s->loose.ids + pos * s->rawsz;
	}
	return true;
}

/* Does raw begin with the nibbles hex digits of prefix? */
static bool
has_prefix(const unsigned char *raw, const unsigned char *prefix,
    size_t nibbles)
{
	size_t whole = nibbles / 2;

	if (memcmp(raw, prefix, whole))
		return false;
	return nibbles % 2 == 0 || (raw[whole] >> 4) == (prefix[whole] >> 4);
}

/*
 * Note a match in ids (*found of them so far, max at most); false once
 * more than max different ids were seen.
 */
static bool
note_match(const unsigned char *raw, size_t rawsz, unsigned char *ids,
    size_t max, size_t *found)
{
	for (size_t i = 0; i < *found && i < max; i++)
		if (!memcmp(ids + i * rawsz, raw, rawsz))
			return true;
	if (*found == max)
		return (*found = max + 1), false;
	memcpy(ids + (*found)++ * rawsz, raw, rawsz);
	return true;
}

size_t
snapshot_find_prefix(const struct snapshot *s, const unsigned char *prefix,
    size_t nibbles, unsigned char *ids, size_t max)
{
	size_t rawsz = s->rawsz, found = 0;

	for (size_t i = 0; i < s->npacks && found <= max; i++) {
		const struct idx *idx = &s->packs[i]->idx;
		uint32_t lo, hi;

		idx_range(idx, prefix[0], &lo, &hi);
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (memcmp(idx_oid(idx, mid), prefix, rawsz) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < idx->nr && has_prefix(idx_oid(idx, lo), prefix,
		    nibbles); lo++)
			if (!note_match(idx_oid(idx, lo), rawsz, ids, max,
			    &found))
				break;
	}
	if (found <= max) {
		size_t lo = prefix[0] ? s->loose.fanout[prefix[0] - 1] : 0;
		size_t hi = s->loose.fanout[prefix[0]];

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (memcmp(s->loose.ids + mid * rawsz, prefix,
			    rawsz) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < s->loose.nr && has_prefix(s->loose.ids +
		    lo * rawsz, prefix, nibbles); lo++)
			if (!note_match(s->loose.ids + lo * rawsz, rawsz, ids,
			    max, &found))
				break;
	}
	return found;
}

static int
cmp_ids(const void *a, const void *b, void *rawsz)
{
	return memcmp(a, b, *(size_t *)rawsz);
}

int
snapshot_list(const struct snapshot *s, unsigned b, unsigned char **ids,
    size_t *nr)
{
	size_t total = 0, n = 0, rawsz = s->rawsz;
	uint32_t lo, hi;
	unsigned char *all;

	*ids = NULL;
	*nr = 0;
	for (size_t i = 0; i < s->npacks; i++) {
		idx_range(&s->packs[i]->idx, b, &lo, &hi);
		total += hi - lo;
	}
	lo = b ? s->loose.fanout[b - 1] : 0;
	total += s->loose.fanout[b] - lo;
	if (!(all = malloc(total * rawsz + 1)))
		return -ENOMEM;
	/* A fan-out rewritten in place since the count gives no more. */
	total -= s->loose.fanout[b] - (b ? s->loose.fanout[b - 1] : 0);
	for (size_t i = 0; i < s->npacks; i++) {
		const struct idx *idx = &s->packs[i]->idx;

		idx_range(idx, b, &lo, &hi);
		for (uint32_t k = lo; k < hi && n < total; k++)
			memcpy(all + n++ * rawsz, idx_oid(idx, k), rawsz);
	}
	lo = b ? s->loose.fanout[b - 1] : 0;
	memcpy(all + n * rawsz, s->loose.ids + (size_t)lo * rawsz,
	    (s->loose.fanout[b] - lo) * rawsz);
	n += s->loose.fanout[b] - lo;
	qsort_r(all, n, rawsz, cmp_ids, &rawsz);
	*nr = 0;
	for (size_t i = 0; i < n; i++)
		if (!*nr || memcmp(all + (*nr - 1) * rawsz, all + i * rawsz,
		    rawsz))
			memmove(all + (*nr)++ * rawsz, all + i * rawsz, rawsz);
	*ids = all;
	return 0;
}

bool
snapshot_has_prefix(const struct snapshot *s, unsigned b)
{
	uint32_t lo, hi;

	for (size_t i = 0; i < s->npacks; i++) {
		idx_range(&s->packs[i]->idx, b, &lo, &hi);
		if (hi > lo)
			return true;
	}
	return s->loose.fanout[b] > (b ? s->loose.fanout[b - 1] : 0);
}
