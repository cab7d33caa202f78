/*
 * view_byid: by-id/, where every commit, tree and annotated tag is a
 * directory by its full id, looked up and never listed; and the links of
 * commits/ and trees/ to it.
 *
 *   commits/<id>  -> ../by-id/<id>     listed: one link per commit
 *   trees/<id>    -> ../by-id/<id>     listed: one link per root tree
 *   by-id/<id>/   the commit, tree or tag as commits/<id>/, trees/<id>/
 *                 and tags/<id>/ were: same path inside, same inodes
 *
 * So a walk of the mount (find, du, tar, a backup tool), which follows no
 * link, meets each commit and root tree once, as a link, and never the
 * history times the tree; whoever names a commit's tree, through HEAD, a
 * ref or commits/<id>/tree, gets the directory, which by-id/ serves. The
 * links themselves are view.c's (view_byid_link()), made where listed.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "view.h"

/*
 * by-id/<id>: a commit, tree or tag, by its full id alone (commits/,
 * trees/ and tags/ take prefixes and ancestry steps), at the path it has
 * under commits/, trees/ or tags/.
 */
static int
byid_find(struct odbfs *fs, struct node *dir, const char *name,
    struct node **out)
{
	unsigned char id[OID_RAWSZ_MAX];
	char path[KEY_MAX];
	struct objinfo info;
	int ret;

	(void)dir;
	if (!oid_parse_hex(id, name, fs->rawsz))
		return -ENOENT;
	if ((ret = view_lookup_id(fs, id, &info)) < 0)
		return ret;
	switch (info.type) {
	case OBJ_COMMIT:
		snprintf(path, sizeof(path), "commits/%s", name);
		return view_commit_dir(fs, path, id, out);
	case OBJ_TREE:
		snprintf(path, sizeof(path), "trees/%s", name);
		return view_tree_dir(fs, id, path, NODE_TIME_REPO, 0, out);
	case OBJ_TAG:
		snprintf(path, sizeof(path), "tags/%s", name);
		return view_tag_dir(fs, path, id, out);
	default:
		return -ENOENT;
	}
}

const struct view_kind view_byid_kind = {
	.name = "by-id",
	.node = NODE_BYID,
	.hidden = true,
	.mode = NODE_MODE_DIR,
	.negative = VIEW_NEGATIVE_MOUNT,
	.by_id = true,
	.find = byid_find,
};
