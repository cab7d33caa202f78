/*
 * view_group: a mount of many (--root): its root and each group under it
 * as a directory of the groups and repositories it holds, as the roster
 * says; a repository's directory is its root (view_root.c), numbered in
 * its own repository's inode numbers. The root has the mount's .odbfs/.
 */
#include <string.h>
#include <sys/stat.h>

#include "odbstore/log.h"
#include "roster.h"
#include "view.h"

static int
group_find(struct odbfs *fs, struct node *dir, const char *name,
    struct node **out)
{
	struct roster_place at;
	char path[KEY_MAX];
	struct node *n;
	int ret;

	if (!view_child_path(dir, name, path, sizeof(path)))
		return -ENOENT;
	if ((ret = roster_at(fs, path, &at)) < 0)
		return ret;
	if (!at.repo)
		return view_intern(view_new_dir(&view_group_kind, path,
		    NODE_TIME_REPO), out);
	/* A repository's directory: its root, in its own numbering. */
	node_enter(at.index, at.seed);
	n = view_new_dir(&view_root_kind, "", at.epoch);
	node_enter(0, 0);
	return view_intern(n, out);
}

struct group_listing {
	struct odbfs *fs;
	struct node *dir;
	struct dirlist *l;
};

static int
group_entry(void *arg, const char *name, uint64_t seed)
{
	struct group_listing *g = arg;
	unsigned char key[KEY_MAX];
	char child[KEY_MAX];
	size_t len;
	int ret;

	/* The root's own .odbfs/ hides one of that name. */
	if (!g->dir->path[0] && !g->fs->nometa && !strcmp(name, ".odbfs")) {
		log_once(LOGL_WARN, "%s/.odbfs: hidden by the mount's own "
		    ".odbfs/ (-o nometa shows it)", roster_root(g->fs));
		return 0;
	}
	if (seed) {
		/* A repository: its root's key in its numbering. */
		node_enter(0, seed);
		len = view_dir_key(key, "");
		ret = dirlist_add(g->l, name, true, S_IFDIR, node_ino(key,
		    len));
		node_enter(0, 0);
		return ret;
	}
	if (!view_child_path(g->dir, name, child, sizeof(child)))
		return 0;
	return dirlist_add(g->l, name, true, S_IFDIR, node_ino(key,
	    view_dir_key(key, child)));
}

static int
group_list(struct odbfs *fs, struct node *dir, struct dirlist *l)
{
	struct group_listing g = { fs, dir, l };

	return roster_names(fs, dir->path, group_entry, &g);
}

/* The root's .odbfs/: the mount's own, absent with -o nometa. */
static size_t
top_meta_key(struct odbfs *fs, const struct node *dir, const char *name,
    unsigned char *key)
{
	return dir->path[0] ? 0 : view_meta_key(fs, dir, name, key);
}

static const struct view_fixed group_fixed[] = {
	{ ".odbfs", S_IFDIR, NODE_META, top_meta_key, view_make_dir,
	    &view_meta_kind },
};

/* What is under the root comes and goes: a miss is never cached. */
const struct view_kind view_group_kind = {
	.name = "group",
	.node = NODE_GROUP,
	.mode = NODE_MODE_DIR,
	.negative = 0,
	VIEW_FIXED_INIT(group_fixed),
	.find = group_find,
	.list = group_list,
};
