/*
 * served: one repository as the mount serves it (see served.h).
 */
#include <errno.h>
#include <stddef.h>

#include "layout.h"
#include "miss.h"
#include "odbstore/watch.h"
#include "readers.h"
#include "reflinks.h"
#include "served.h"
#include "treecache.h"

int
served_open(struct odbfs *fs, const char *gitdir,
    const struct served_how *how, bool reopened, const char **why)
{
	int ret;

	fs->watch = NULL;
	fs->shown = NULL;
	if ((ret = odb_open_shared(gitdir, how->cache, &fs->odb, why)) < 0) {
		fs->odb = NULL;
		return ret;
	}
	fs->rawsz = odb_rawsz(fs->odb);
	odb_set_verify(fs->odb, how->verify);
	odb_set_frozen(fs->odb, how->refresh < 0);
	for (unsigned b = 0; b < 256; b++)
		fs->prefixes[b] = odb_has_prefix(fs->odb, b);
	if ((ret = reflinks_init(fs, !reopened)) < 0) {
		*why = "out of memory";
		odb_close(fs->odb);
		fs->odb = NULL;
		return ret;
	}
	return 0;
}

int
served_watch(struct odbfs *fs, const struct served_how *how, bool reopened)
{
	int ret = 0;

	if (how->hub)
		ret = watch_start_on(how->hub, fs->odb, served_published, fs,
		    &fs->watch);
	else if (how->refresh >= 0)
		ret = watch_start(fs->odb, (unsigned)how->refresh,
		    served_published, fs, &fs->watch);
	if (ret == 0 && reopened && fs->watch)
		watch_kick(fs->watch);
	return ret;
}

static bool
has_object(void *fs, const unsigned char *raw)
{
	return odb_has(((struct odbfs *)fs)->odb, raw);
}

/* A missed id arrived: drop every negative entry that may hide it. */
static void
drop_negative(void *fs, const unsigned char *raw)
{
	layout_drop_id(fs, raw);
}

void
served_published(void *arg)
{
	struct odbfs *fs = arg;

	/* The watcher's thread finds the nodes of its repository. */
	node_enter(fs->repo, fs->seed);
	miss_sweep(fs->rawsz, has_object, drop_negative, fs);
	reflinks_published(fs);
	for (unsigned b = 0; b < 256; b++) {
		bool now = odb_has_prefix(fs->odb, b);

		if (now == fs->prefixes[b])
			continue;
		fs->prefixes[b] = now;
		layout_drop_prefix(fs, b);
	}
}

void
served_close(struct odbfs *fs)
{
	watch_stop(fs->watch);
	fs->watch = NULL;
	if (!fs->odb)
		return;
	readers_drop(fs->odb);
	treecache_forget(fs->odb);
	reflinks_free(fs);
	odb_close(fs->odb);
	fs->odb = NULL;
}
