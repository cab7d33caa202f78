/*
 * roster: the repositories a mount of many shows (see roster.h), and the
 * table that numbers them: an open-addressed index from a path's hash
 * to its entry, entries and their strings in blocks that only grow.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <xxhash.h>

#include "forge_int.h"
#include "odbstore/scan.h"
#include "roster.h"
#include "view.h"

uint64_t
roster_seed(const char *path)
{
	return XXH3_64bits(path, strlen(path));
}

/* n bytes from f's pool, zeroed; NULL when out of memory. */
static void *
pool_alloc_locked(struct forge_fs *f, size_t n)
{
	const size_t room = POOL_BLOCK - offsetof(struct pool, data);
	struct pool *p = f->pool;
	void *v;

	n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) *
	    sizeof(max_align_t);
	if (n > room)
		return NULL;
	if (!p || p->used + n > room) {
		if (!(p = malloc(POOL_BLOCK)))
			return NULL;
		p->next = f->pool;
		p->used = 0;
		f->pool = p;
	}
	v = (char *)p->data + p->used;
	p->used += n;
	return memset(v, 0, n);
}

char *
roster_strdup_locked(struct forge_fs *f, const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = pool_alloc_locked(f, n);

	return d ? memcpy(d, s, n) : NULL;
}

/*
 * The table entry of path, made if missing and make (with gitdir and the
 * time epoch); NULL otherwise.
 */
struct frepo *
roster_entry_locked(struct forge_fs *f, const char *path, const char *gitdir,
    int64_t epoch, bool make, uint32_t *index)
{
	uint64_t h = roster_seed(path);
	size_t s = (size_t)h & (f->nslots - 1);
	struct frepo *r;

	for (; f->nslots && f->slots[s]; s = (s + 1) & (f->nslots - 1))
		if (!strcmp(f->v[f->slots[s] - 1]->path, path)) {
			*index = f->slots[s];
			return f->v[f->slots[s] - 1];
		}
	if (!make)
		return NULL;
	if (f->n == f->alloc || 2 * (f->n + 1) > f->nslots) {
		size_t na = f->alloc ? 2 * f->alloc : 64;
		struct frepo **grown = realloc(f->v, na * sizeof(*grown));
		uint32_t *slots;

		if (!grown)
			return NULL;
		f->v = grown;
		f->alloc = na;
		if (!(slots = calloc(2 * na, sizeof(*slots))))
			return NULL;
		free(f->slots);
		f->slots = slots;
		f->nslots = 2 * na;
		for (size_t i = 0; i < f->n; i++) {
			s = (size_t)f->v[i]->seed & (f->nslots - 1);
			while (f->slots[s])
				s = (s + 1) & (f->nslots - 1);
			f->slots[s] = (uint32_t)i + 1;
		}
		s = (size_t)h & (f->nslots - 1);
		while (f->slots[s])
			s = (s + 1) & (f->nslots - 1);
	}
	if (!(r = pool_alloc_locked(f, sizeof(*r))) ||
	    !(r->path = roster_strdup_locked(f, path)) ||
	    !(r->gitdir = roster_strdup_locked(f, gitdir)))
		return NULL;
	r->seed = h;
	r->epoch = epoch;
	f->v[f->n++] = r;
	f->slots[s] = (uint32_t)f->n;
	*index = (uint32_t)f->n;
	return r;
}

/* Is path (not "") a group: some repository's path begins path + '/'? */
static const char *
repo_path(const void *v, size_t i)
{
	return ((const struct scan_repo *)v)[i].path;
}

bool
roster_is_group(const struct scan *s, const char *path)
{
	return view_names_under(s->repos, s->nrepos, repo_path, path);
}

/* Has the repository at path failed to open? */
static bool
failed(struct forge_fs *f, const char *path)
{
	uint32_t index;
	struct frepo *r;
	bool yes;

	pthread_mutex_lock(&f->lock);
	yes = (r = roster_entry_locked(f, path, "", 0, false, &index)) && r->failed;
	pthread_mutex_unlock(&f->lock);
	return yes;
}

/*
 * What is at path under the root. A repository's time, the git
 * directory's birth, is looked at when it is first met, without the
 * table's lock, which a slow or hung file system under the root must not
 * hold.
 */
int
roster_at(struct odbfs *top, const char *path, struct roster_place *out)
{
	struct forge_fs *f = top->forge;
	const struct scan_repo *fr;
	struct statx stx;
	struct frepo *r = NULL;
	int ret = -ENOENT;
	bool bad = false;

	memset(out, 0, sizeof(*out));
	pthread_rwlock_rdlock(&f->scan_lock);
	if (!(fr = scan_find(f->scan, path))) {
		if (roster_is_group(f->scan, path))
			ret = 0;
		pthread_rwlock_unlock(&f->scan_lock);
		return ret;
	}
	out->repo = true;
	for (int make = 0; make < 2; make++) {
		out->epoch = top->epoch;
		if (make && statx(AT_FDCWD, fr->gitdir, 0, STATX_BTIME,
		    &stx) == 0 && (stx.stx_mask & STATX_BTIME))
			out->epoch = stx.stx_btime.tv_sec;
		pthread_mutex_lock(&f->lock);
		if ((r = roster_entry_locked(f, fr->path, fr->gitdir,
		    out->epoch, make, &out->index))) {
			out->seed = r->seed;
			out->epoch = r->epoch;
			bad = r->failed;
		}
		pthread_mutex_unlock(&f->lock);
		if (r)
			break;
	}
	pthread_rwlock_unlock(&f->scan_lock);
	if (!r)
		return -ENOMEM;
	return bad ? -ENOENT : 0;
}

int
roster_names(struct odbfs *top, const char *dir,
    int (*fn)(void *arg, const char *name, uint64_t seed), void *arg)
{
	struct forge_fs *f = top->forge;
	const struct scan *s;
	size_t plen = strlen(dir);
	char last[KEY_MAX] = "";
	int ret = 0;

	pthread_rwlock_rdlock(&f->scan_lock);
	s = f->scan;
	for (size_t i = 0; i < s->nrepos && ret == 0; i++) {
		const char *p = s->repos[i].path, *name, *slash;
		size_t len;

		if (plen && (strncmp(p, dir, plen) || p[plen] != '/'))
			continue;
		name = p + (plen ? plen + 1 : 0);
		slash = strchr(name, '/');
		len = slash ? (size_t)(slash - name) : strlen(name);
		if (len >= sizeof(last) || (!strncmp(last, name, len) &&
		    !last[len]))
			continue;
		memcpy(last, name, len);
		last[len] = '\0';
		if (!slash && failed(f, p))
			continue;
		ret = fn(arg, last, slash ? 0 : roster_seed(p));
	}
	pthread_rwlock_unlock(&f->scan_lock);
	return ret;
}

void
roster_count(const struct odbfs *top, size_t *repos, size_t *open)
{
	struct forge_fs *f = top->forge;

	pthread_rwlock_rdlock(&f->scan_lock);
	*repos = f->scan->nrepos;
	pthread_rwlock_unlock(&f->scan_lock);
	pthread_mutex_lock(&f->lock);
	/* Those that failed are not listed: not counted either. */
	*repos -= f->nfailed < *repos ? f->nfailed : *repos;
	*open = f->nopen;
	pthread_mutex_unlock(&f->lock);
}

void
roster_each(const struct odbfs *top, void (*fn)(void *arg,
    const char *gitdir, const _Atomic uint64_t *counters, struct odb *odb),
    void *arg)
{
	struct forge_fs *f = top->forge;
	struct frepo *r;

	pthread_mutex_lock(&f->lock);
	fn(arg, NULL, f->own, NULL);
	for (size_t i = 0; i < f->n; i++)
		if (!(r = f->v[i])->failed && !r->gone)
			fn(arg, r->gitdir, r->stats,
			    r->live ? r->live->fs.odb : NULL);
	pthread_mutex_unlock(&f->lock);
}

const char *
roster_root(const struct odbfs *top)
{
	/* Set once by scan_root() from the root: the same in every scan. */
	return top->forge->root;
}

bool
roster_check(const struct odbfs *top)
{
	struct forge_fs *f = top->forge;
	bool ok;

	pthread_mutex_lock(&f->lock);
	ok = roster_check_locked(f);
	pthread_mutex_unlock(&f->lock);
	return ok;
}

bool
roster_check_locked(struct forge_fs *f)
{
	size_t open = 0, failed = 0;
	bool ok = true;

	for (size_t i = 0; i < f->n && ok; i++) {
		const struct frepo *r = f->v[i];
		size_t s = (size_t)r->seed & (f->nslots - 1);

		while (f->slots[s] && f->slots[s] != i + 1)
			s = (s + 1) & (f->nslots - 1);
		ok = f->slots[s] == i + 1 && r->seed == roster_seed(r->path) &&
		    !(r->live && r->failed) && (!r->replaced || r->live) &&
		    (!r->live || r->opened);
		open += r->live != NULL;
		failed += r->failed && !r->gone;
	}
	return ok && open == f->nopen && failed == f->nfailed &&
	    f->n <= f->alloc && 2 * f->n <= f->nslots;
}

bool
roster_dirid(const char *path, struct dirid *out)
{
	struct statx stx;

	memset(out, 0, sizeof(*out));
	if (statx(AT_FDCWD, path, 0, STATX_INO | STATX_BTIME, &stx) < 0)
		return false;
	out->dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	out->ino = stx.stx_ino;
	if (stx.stx_mask & STATX_BTIME) {
		out->born_s = stx.stx_btime.tv_sec;
		out->born_ns = stx.stx_btime.tv_nsec;
	}
	return true;
}

bool
roster_same_dir(const struct dirid *a, const struct dirid *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->born_s == b->born_s &&
	    a->born_ns == b->born_ns;
}

void
roster_free(struct forge_fs *f)
{
	while (f->pool) {
		struct pool *p = f->pool;

		f->pool = p->next;
		free(p);
	}
	free(f->v);
	free(f->slots);
	f->v = NULL;
	f->slots = NULL;
	f->n = f->alloc = f->nslots = 0;
}
