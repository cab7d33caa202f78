/*
 * reflinks: letting the kernel keep HEAD and the refs, and dropping
 * exactly the entries a move of a ref makes wrong.
 *
 * Every path through HEAD or refs/heads/main walks those symlinks; if the
 * kernel could not keep them, each stat of HEAD/tree/... asked the daemon
 * for each link again (an ls -l of a 100 000-entry tree through HEAD: 1.2
 * million lookups). So their entries carry the long timeout, and when the
 * watcher publishes new references, reflinks_published() compares them
 * with the ones shown before and invalidates, for each ref added, moved or
 * deleted, the entry of each component of its name, and HEAD's entry if
 * it now points elsewhere.
 *
 * A lookup that read the old refs may still be answering the kernel when
 * the new ones are published; had its reply come after the invalidation,
 * the kernel would keep the old link for a day. So lookups and listings
 * in the root and under refs/ hold a read lock from reading the refs to
 * their reply, and the watcher takes the write lock once after publishing,
 * which waits them out, before it invalidates.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "node.h"
#include "odbstore/refs.h"
#include "reflinks.h"
#include "view.h"

struct shown_ref {
	char *name;
	unsigned char id[OID_RAWSZ_MAX];
};

struct shown {
	struct shown_ref *v;
	size_t n;
	char *head;		/* where HEAD pointed; NULL if unknown */
};

/*
 * Ready before any lookup takes it (a mount of many makes its first
 * reflinks in a lookup): a stream of lookups through HEAD must not
 * starve the watcher.
 */
static pthread_rwlock_t lock = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;

void
reflinks_lookup_begin(void)
{
	pthread_rwlock_rdlock(&lock);
}

void
reflinks_lookup_end(void)
{
	pthread_rwlock_unlock(&lock);
}

static void
shown_free(struct shown *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].name);
	free(s->v);
	free(s->head);
	memset(s, 0, sizeof(*s));
}

/* What the refs are now; on failure (no memory) *s is empty. */
static void
take(struct odbfs *fs, struct shown *s)
{
	const struct refs *refs = odb_refs_get(fs->odb);
	size_t n = 0, count = refs_count(refs);
	char head[4096 + 64];

	memset(s, 0, sizeof(*s));
	if (count && (s->v = calloc(count, sizeof(*s->v))))
		for (; n < count; n++) {
			if (!(s->v[n].name = strdup(refs_name(refs, n))))
				break;
			memcpy(s->v[n].id, refs_id(refs, n), fs->rawsz);
		}
	s->n = n;
	odb_refs_put(fs->odb);
	/* On the heap at its length: a mount of many holds one per open. */
	if (view_head_target(fs, head, sizeof(head)) < 0)
		head[0] = '\0';
	s->head = strdup(head);
}

/* Is some ref of s under the directory dir (with no '/' at its end)? */
static const char *
shown_name(const void *v, size_t i)
{
	return ((const struct shown_ref *)v)[i].name;
}

static bool
has_under(const struct shown *s, const char *dir)
{
	return view_names_under(s->v, s->n, shown_name, dir);
}

/*
 * Ref name moved: drop its own entry. Added or deleted (moved false): drop
 * too the entry of each directory on its way that it made or unmade, which
 * was before and is now under a ref or the other way round.
 */
static void
drop_ref(struct odbfs *fs, const struct shown *before,
    const struct shown *after, const char *name, bool moved)
{
	char *path = strdup(name), *slash;

	if (!path || !(slash = strrchr(path, '/'))) {
		free(path);	/* no ref name lacks a '/' */
		return;
	}
	*slash = '\0';
	view_drop_entry(fs, path, slash + 1);
	while (!moved && (slash = strrchr(path, '/'))) {
		if (has_under(before, path) == has_under(after, path))
			break;	/* it stays, and so does all above it */
		*slash = '\0';
		view_drop_entry(fs, path, slash + 1);
	}
	/* At the top, path is "refs", which is always there. */
	free(path);
}

int
reflinks_init(struct odbfs *fs, bool known)
{
	if (!(fs->shown = calloc(1, sizeof(*fs->shown))))
		return -ENOMEM;
	if (known)
		take(fs, fs->shown);
	return 0;
}

void
reflinks_published(struct odbfs *fs)
{
	struct shown now, *shown = fs->shown;
	size_t i = 0, j = 0;

	/* Lookups that read the refs before they were published end first. */
	pthread_rwlock_wrlock(&lock);
	pthread_rwlock_unlock(&lock);
	take(fs, &now);
	/* Both sorted by name: a merge finds what was added, moved, deleted. */
	while (i < shown->n || j < now.n) {
		int c = i == shown->n ? 1 : j == now.n ? -1 :
		    strcmp(shown->v[i].name, now.v[j].name);

		if (c < 0) {
			drop_ref(fs, shown, &now, shown->v[i++].name, false);
		} else if (c > 0) {
			drop_ref(fs, shown, &now, now.v[j++].name, false);
		} else {
			if (memcmp(shown->v[i].id, now.v[j].id, fs->rawsz))
				drop_ref(fs, shown, &now, now.v[j].name,
				    true);
			i++, j++;
		}
	}
	if (!shown->head || !now.head || strcmp(shown->head, now.head))
		view_drop_entry(fs, "", "HEAD");
	shown_free(shown);
	*shown = now;
}

void
reflinks_free(struct odbfs *fs)
{
	if (fs->shown)
		shown_free(fs->shown);
	free(fs->shown);
	fs->shown = NULL;
}
