/*
 * view_root: the root of a repository: HEAD, refs/, commits/, trees/,
 * tags/, objects/, .odbfs/, and by-id/, which is looked up and never
 * listed; names at the root with git's ancestry steps ("HEAD~2") are
 * links to the commit they name.
 */
#include <string.h>
#include <sys/stat.h>

#include "view.h"

/* .odbfs last, so that -o nometa leaves the others in place. */
static const struct view_fixed root_fixed[] = {
	{ "HEAD", S_IFLNK, NODE_SYMLINK, view_head_key, view_head_make, NULL },
	{ "refs", S_IFDIR, NODE_REFDIR, view_key_dir, view_make_dir,
	    &view_refs_kind },
	{ "commits", S_IFDIR, NODE_COMMITS, view_key_dir, view_make_dir,
	    &view_commits_kind },
	{ "trees", S_IFDIR, NODE_TREES, view_key_dir, view_make_dir,
	    &view_trees_kind },
	{ "tags", S_IFDIR, NODE_TAGS, view_key_dir, view_make_dir,
	    &view_tags_kind },
	{ "objects", S_IFDIR, NODE_OBJECTS, view_key_dir, view_make_dir,
	    &view_objects_kind },
	{ ".odbfs", S_IFDIR, NODE_META, view_meta_key, view_make_dir,
	    &view_meta_kind },
	{ "by-id", S_IFDIR, NODE_BYID, view_key_dir, view_make_dir,
	    &view_byid_kind },
};

/* HEAD comes and goes: a miss at the root is never cached. */
const struct view_kind view_root_kind = {
	.name = "root",
	.node = NODE_ROOT,
	.mode = NODE_MODE_DIR,
	.negative = 0,
	VIEW_FIXED_INIT(root_fixed),
	.nlink = VIEW_NLINK_COUNTED,
	.shows_refs = true,
	.find = view_head_ancestor,
};
