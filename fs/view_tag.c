/*
 * view_tag: tags/, where any annotated tag is a directory by its id, and
 * tags/<id>/, its header's fields as files and links, as git keeps a tag:
 *
 *   object  -> what it tags: ../../commits/<id>, ../../trees/<id>,
 *              ../<id> (a tag of a tag) or ../../objects/<id> (a blob),
 *              by the type the object has (the type line may lie)
 *   tree    -> ../../trees/<id>, the tree it peels to (git's v1.0^{tree})
 *              when it peels to a commit or a tree
 *   type    the type line's value     tag, tagger: their lines' values
 *   message the bytes after the header
 *   raw     -> ../../objects/<id>
 *
 * A ref to a tag links here (view_refs.c), so refs/tags/v1.0/tree is the
 * tagged commit's tree, as it was when refs were peeled.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "odbstore/log.h"
#include "view.h"

/* Why odb_peel() of id failed with ret, in a few words. */
static const char *
peel_failure(struct odbfs *fs, const unsigned char *id, int ret)
{
	switch (ret) {
	case -ELOOP:
		return "tags nested too deep";
	case -ENOENT:
		return odb_has(fs->odb, id) ? "a tag names a missing object" :
		    "the object is missing";
	case -EFSCORRUPTED:
		return "a tag on the way is damaged";
	default:
		return strerror(-ret);
	}
}

/*
 * The tree tag id peels to, if any: a commit's, or a tree itself. One that
 * cannot be peeled is said once, not per lookup.
 */
static bool
peeled_tree(struct odbfs *fs, const unsigned char *id, unsigned char *tree)
{
	unsigned char peeled[OID_RAWSZ_MAX];
	char hex[OID_HEXSZ_MAX + 1];
	enum obj_type type;
	int ret;

	if ((ret = odb_peel(fs->odb, id, peeled, &type)) < 0) {
		oid_to_hex(hex, id, fs->rawsz);
		log_once(LOGL_WARN, "tags/%s cannot be peeled (%s): it has no "
		    "tree", hex, peel_failure(fs, id, ret));
		return false;
	}
	if (type == OBJ_TREE) {
		memcpy(tree, peeled, fs->rawsz);
		return true;
	}
	return type == OBJ_COMMIT && odb_commit_tree(fs->odb, peeled, tree) ==
	    0;
}

/* A tag's directory: its header, read and parsed, and the tree it peels to. */
int
view_tag_dir(struct odbfs *fs, const char *path, const unsigned char *id,
    struct node **out)
{
	struct objinfo info;
	struct node *n;
	bool known;
	int ret;

	if (!(n = view_new_dir(&view_tag_kind, path, NODE_TIME_REPO)))
		return -ENOMEM;
	if ((ret = node_ext_new(n)) == 0) {
		memcpy(n->ext->id, id, fs->rawsz);
		n->type = OBJ_TAG;
		ret = odb_tag_read(fs->odb, id, &n->ext->tag);
	}
	if (ret < 0) {
		node_free(n);
		return ret;
	}
	/* What it names, as it is: its type line may say otherwise. */
	known = odb_info(fs->odb, n->ext->tag.object, &info) == 0;
	n->ext->tag_object_type = known ? (uint8_t)info.type :
	    (uint8_t)n->ext->tag.type;
	/*
	 * Peeled from what it names, the tag just read: a tree, or a
	 * commit's. Anything else (another tag, a type line that says
	 * otherwise, a missing object) from the tag again, by odb_peel(),
	 * which says what is wrong.
	 */
	if (known && info.type == n->ext->tag.type && info.type == OBJ_TREE) {
		memcpy(n->ext->tag_tree, n->ext->tag.object, fs->rawsz);
		n->ext->tag_has_tree = true;
	} else if (known && info.type == n->ext->tag.type &&
	    info.type == OBJ_COMMIT) {
		n->ext->tag_has_tree = odb_commit_tree(fs->odb,
		    n->ext->tag.object, n->ext->tag_tree) == 0;
	} else {
		n->ext->tag_has_tree = peeled_tree(fs, id, n->ext->tag_tree);
	}
	/* An old tag without a tagger line has no time of its own. */
	if (n->ext->tag.tagger)
		n->time = n->ext->tag.time;
	return view_intern(n, out);
}

/* tags/<id>: a tag by its full id, or a link from a prefix of it. */
static int
tags_find(struct odbfs *fs, struct node *dir, const char *name,
    struct node **out)
{
	unsigned char id[OID_RAWSZ_MAX];
	char path[KEY_MAX];
	struct objinfo info;
	int ret;

	if (view_is_abbrev(fs, name))
		return view_abbrev_link(fs, dir, name, OBJ_TAG, out);
	if (!oid_parse_hex(id, name, fs->rawsz))
		return -ENOENT;
	if ((ret = view_lookup_id(fs, id, &info)) < 0)
		return ret;
	if (info.type != OBJ_TAG)
		return -ENOENT;
	view_child_path(dir, name, path, sizeof(path));
	return view_tag_dir(fs, path, id, out);
}

/*
 * Every tag a ref reaches (odb_list_tags()), as directories whose
 * attributes a listing does not give: each would be a tag read.
 */
static int
tags_list(struct odbfs *fs, struct node *dir, struct dirlist *l)
{
	return dirlist_ids(fs, dir, l, odb_list_tags, OBJ_TAG, false);
}

const struct view_kind view_tags_kind = {
	.name = "tags",
	.node = NODE_TAGS,
	.mode = NODE_MODE_DIR,
	.negative = VIEW_NEGATIVE_MOUNT,
	.plain = true,
	.by_id = true,
	.find = tags_find,
	.list = tags_list,
};

/* Members a tag may lack: tree, tag, tagger. */
static size_t
tree_key(struct odbfs *fs, const struct node *dir, const char *name,
    unsigned char *key)
{
	return dir->ext->tag_has_tree ? view_member_key(fs, dir, name, key) : 0;
}

static size_t
name_key(struct odbfs *fs, const struct node *dir, const char *name,
    unsigned char *key)
{
	return dir->ext->tag.name ? view_member_key(fs, dir, name, key) : 0;
}

static size_t
tagger_key(struct odbfs *fs, const struct node *dir, const char *name,
    unsigned char *key)
{
	return dir->ext->tag.tagger ? view_member_key(fs, dir, name, key) : 0;
}

static int
object_make(struct odbfs *fs, struct node *dir, const struct view_fixed *f,
    const unsigned char *key, size_t klen, struct node **out)
{
	const struct tag *t = &dir->ext->tag;
	const char *where = "../../objects/";
	uint8_t type = dir->ext->tag_object_type;

	(void)f;
	if (type == OBJ_COMMIT)
		where = "../../commits/";
	else if (type == OBJ_TREE)
		where = "../../trees/";
	else if (type == OBJ_TAG)
		where = "../";
	return view_member_link(fs, dir, where, t->object, key, klen, out);
}

static int
tree_make(struct odbfs *fs, struct node *dir, const struct view_fixed *f,
    const unsigned char *key, size_t klen, struct node **out)
{
	(void)f;
	return view_member_link(fs, dir, "../../trees/", dir->ext->tag_tree, key,
	    klen, out);
}

static int
type_make(struct odbfs *fs, struct node *dir, const struct view_fixed *f,
    const unsigned char *key, size_t klen, struct node **out)
{
	const char *type = object_type_name(dir->ext->tag.type);

	(void)fs;
	(void)f;
	return view_member_line(dir, type, strlen(type), key, klen, out);
}

static int
name_make(struct odbfs *fs, struct node *dir, const struct view_fixed *f,
    const unsigned char *key, size_t klen, struct node **out)
{
	(void)fs;
	(void)f;
	return view_member_line(dir, dir->ext->tag.name, dir->ext->tag.name_len,
	    key, klen, out);
}

static int
tagger_make(struct odbfs *fs, struct node *dir, const struct view_fixed *f,
    const unsigned char *key, size_t klen, struct node **out)
{
	(void)fs;
	(void)f;
	return view_member_line(dir, dir->ext->tag.tagger,
	    dir->ext->tag.tagger_len, key, klen, out);
}

static int
message_make(struct odbfs *fs, struct node *dir, const struct view_fixed *f,
    const unsigned char *key, size_t klen, struct node **out)
{
	(void)f;
	return view_intern(view_member_slice(fs, dir, dir->ext->tag.header_len,
	    dir->ext->tag.message_len, key, klen), out);
}

static const struct view_fixed tag_fixed[] = {
	{ "object", S_IFLNK, NODE_SYMLINK, view_member_key, object_make, NULL },
	{ "tree", S_IFLNK, NODE_SYMLINK, tree_key, tree_make, NULL },
	{ "type", S_IFREG, NODE_DATA, view_member_key, type_make, NULL },
	{ "tag", S_IFREG, NODE_DATA, name_key, name_make, NULL },
	{ "tagger", S_IFREG, NODE_DATA, tagger_key, tagger_make, NULL },
	{ "message", S_IFREG, NODE_SLICE, view_member_key, message_make, NULL },
	{ "raw", S_IFLNK, NODE_SYMLINK, view_member_key, view_member_raw, NULL },
};

/* A tag never changes: neither does what it lacks. */
const struct view_kind view_tag_kind = {
	.name = "tag",
	.node = NODE_TAG,
	.mode = NODE_MODE_DIR,
	.negative = NODE_TIMEOUT_IMMUTABLE,
	VIEW_FIXED_INIT(tag_fixed),
	.nlink = VIEW_NLINK_COUNTED,
	.cache_listing = true,
};
