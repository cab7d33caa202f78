/*
 * view_commit: commits/, where every commit is a link to its directory in
 * by-id/ (view_byid.c), and that directory, its header's fields as files
 * and links:
 *
 *   tree/      the commit's tree          parent   -> ../<first parent>
 *   parents    the parents' ids, a line each
 *   message    the bytes after the header  author, committer: their lines
 *   raw        -> ../../objects/<id>
 *
 * All but tree/ are keyed 'M' id name; tree/ is a directory at its path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "odbstore/log.h"
#include "view.h"

/*
 * A commit's directory: its header, read and parsed, and what of it the
 * members need kept; not the object, whose message may be any size.
 */
int
view_commit_dir(struct odbfs *fs, const char *path, const unsigned char *id,
    struct node **out)
{
	struct node *n;
	int ret;

	if (!(n = view_new_dir(&view_commit_kind, path, NODE_TIME_REPO)))
		return -ENOMEM;
	if ((ret = node_ext_new(n)) == 0) {
		memcpy(n->ext->id, id, fs->rawsz);
		n->type = OBJ_COMMIT;
		ret = odb_commit_read(fs->odb, id, &n->ext->commit);
	}
	if (ret < 0) {
		node_free(n);
		return ret;
	}
	n->time = n->ext->commit.time;
	return view_intern(n, out);
}

struct node *
view_member_slice(struct odbfs *fs, const struct node *dir, uint64_t header_len,
    uint64_t message_len, const unsigned char *key, size_t klen)
{
	struct node *n = node_new(NODE_SLICE, key, klen);

	if (!n || node_ext_new(n) < 0) {
		node_free(n);
		return NULL;
	}
	memcpy(n->ext->id, node_id(dir), fs->rawsz);
	n->ext->slice_off = header_len + 1;
	n->size = message_len;
	n->mode = NODE_MODE_FILE;
	n->time = dir->time;
	return n;
}

const char *
view_rev_suffix(const char *name)
{
	const char *s = name + strcspn(name, "~^");

	return s != name && rev_suffix_ok(s) ? s : NULL;
}

int
view_ancestor(struct odbfs *fs, struct node *dir, const char *name,
    const unsigned char *base, const char *suffix, const char *up,
    bool moving, struct node **out)
{
	unsigned char id[OID_RAWSZ_MAX], key[KEY_MAX];
	char hex[OID_HEXSZ_MAX + 1], path[KEY_MAX], target[KEY_MAX];
	struct node *n;
	int ret;

	if ((ret = odb_rev_suffix(fs->odb, base, suffix, id)) < 0) {
		if (ret == -E2BIG)
			log_once(LOGL_WARN, "%.200s: more than %d commits "
			    "away: not followed", name, 100000);
		return ret == -ENOENT || ret == -EINVAL || ret == -E2BIG ?
		    -ENOENT : ret;
	}
	oid_to_hex(hex, id, fs->rawsz);
	if (!view_child_path(dir, name, path, sizeof(path)) ||
	    (size_t)snprintf(target, sizeof(target), "%scommits/%s", up,
	    hex) >= sizeof(target))
		return -ENAMETOOLONG;
	if ((n = view_new_link(key, view_ref_key(key, path, target), target,
	    NODE_TIME_REPO)))
		n->moving = moving;
	return view_intern(n, out);
}

/*
 * commits/<id>: a commit by its full id, a link to by-id/; or a link
 * from a prefix of it, or from either with git's ~N and ^N after it.
 */
static int
commits_find(struct odbfs *fs, struct node *dir, const char *name,
    struct node **out)
{
	const char *suffix = view_rev_suffix(name);
	unsigned char id[OID_RAWSZ_MAX];
	struct objinfo info;
	int ret;

	if (suffix) {
		char base[OID_HEXSZ_MAX + 1];
		size_t len = (size_t)(suffix - name);

		if (len > 2 * fs->rawsz)
			return -ENOENT;
		memcpy(base, name, len);
		base[len] = '\0';
		/*
		 * A prefix is read as git reads a committish: a tree or blob
		 * that shares it is no rival. What it names may change (a
		 * commit that comes later makes it ambiguous): not cached.
		 */
		if (len == 2 * fs->rawsz ? !oid_parse_hex(id, base,
		    fs->rawsz) : !view_is_abbrev(fs, base) ||
		    odb_find_prefix(fs->odb, base, len, ODB_TYPE(OBJ_COMMIT) |
		    ODB_TYPE(OBJ_TAG), id) < 0)
			return -ENOENT;
		return view_ancestor(fs, dir, name, id, suffix, "../",
		    len < 2 * fs->rawsz, out);
	}
	if (view_is_abbrev(fs, name))
		return view_abbrev_link(fs, dir, name, OBJ_COMMIT, out);
	if (!oid_parse_hex(id, name, fs->rawsz))
		return -ENOENT;
	if ((ret = view_lookup_id(fs, id, &info)) < 0)
		return ret;
	return info.type == OBJ_COMMIT ? view_byid_link(fs, dir, name, out) :
	    -ENOENT;
}

/*
 * Every commit the store can list (odb_list_commits(): git's commit-graph,
 * and a walk from the refs for what is newer or when there is none), each
 * checked to be a commit, as a lookup would find it, as a link.
 */
static int
commits_list(struct odbfs *fs, struct node *dir, struct dirlist *l)
{
	return dirlist_ids(fs, dir, l, odb_list_commits, OBJ_COMMIT, true);
}

const struct view_kind view_commits_kind = {
	.name = "commits",
	.node = NODE_COMMITS,
	.mode = NODE_MODE_DIR,
	.negative = VIEW_NEGATIVE_MOUNT,
	.plain = true,
	.by_id = true,
	.find = commits_find,
	.list = commits_list,
};

size_t
view_member_key(struct odbfs *fs, const struct node *dir, const char *name,
    unsigned char *key)
{
	size_t klen = view_id_key(key, 'M', node_id(dir), fs->rawsz);

	memcpy(key + klen, name, strlen(name));
	return klen + strlen(name);
}

/* A root commit has no parent link; see below for the others. */
static size_t
parent_key(struct odbfs *fs, const struct node *dir, const char *name,
    unsigned char *key)
{
	/*
	 * Absent too at a shallow clone's boundary, whose history git itself
	 * stops at (even where another branch brought the parent), and
	 * where the repository lacks the parent.
	 */
	return dir->ext->commit.nparents && !odb_is_shallow(fs->odb,
	    node_id(dir)) && odb_has(fs->odb, dir->ext->commit.parents) ?
	    view_member_key(fs, dir, name, key) : 0;
}

/* A commit without an author (or committer) line has no such file. */
static size_t
author_key(struct odbfs *fs, const struct node *dir, const char *name,
    unsigned char *key)
{
	return dir->ext->commit.author ? view_member_key(fs, dir, name, key) : 0;
}

static size_t
committer_key(struct odbfs *fs, const struct node *dir, const char *name,
    unsigned char *key)
{
	return dir->ext->commit.committer ? view_member_key(fs, dir, name, key) :
	    0;
}

static int
tree_make(struct odbfs *fs, struct node *dir, const struct view_fixed *f,
    const unsigned char *key, size_t klen, struct node **out)
{
	char path[KEY_MAX];

	(void)f;
	return view_tree_dir(fs, dir->ext->commit.tree, view_key_to_path(key, klen,
	    path), dir->time, 0, out);
}

int
view_member_link(struct odbfs *fs, struct node *dir, const char *prefix,
    const unsigned char *id, const unsigned char *key, size_t klen,
    struct node **out)
{
	char hex[OID_HEXSZ_MAX + 1], target[32 + OID_HEXSZ_MAX];

	oid_to_hex(hex, id, fs->rawsz);
	snprintf(target, sizeof(target), "%s%s", prefix, hex);
	return view_intern(view_new_link(key, klen, target, dir->time), out);
}

static int
parent_make(struct odbfs *fs, struct node *dir, const struct view_fixed *f,
    const unsigned char *key, size_t klen, struct node **out)
{
	(void)f;
	return view_member_link(fs, dir, "../", dir->ext->commit.parents, key, klen,
	    out);
}

int
view_member_raw(struct odbfs *fs, struct node *dir, const struct view_fixed *f,
    const unsigned char *key, size_t klen, struct node **out)
{
	(void)f;
	return view_member_link(fs, dir, "../../objects/", node_id(dir), key, klen,
	    out);
}

int
view_member_data(struct node *dir, char *data, size_t len, const unsigned char *key,
    size_t klen, struct node **out)
{
	struct node *n;

	if (!data)
		return -ENOMEM;
	if (!(n = node_new(NODE_DATA, key, klen))) {
		free(data);
		return -ENOMEM;
	}
	n->data = data;
	n->size = len;
	n->mode = NODE_MODE_FILE;
	n->time = dir->time;
	return view_intern(n, out);
}

static int
parents_make(struct odbfs *fs, struct node *dir, const struct view_fixed *f,
    const unsigned char *key, size_t klen, struct node **out)
{
	const struct commit *c = &dir->ext->commit;
	size_t len = c->nparents * (2 * fs->rawsz + 1);
	char *data;

	(void)f;
	if ((data = malloc(len + 1)))
		for (size_t i = 0; i < c->nparents; i++) {
			oid_to_hex(data + i * (2 * fs->rawsz + 1),
			    c->parents + i * fs->rawsz, fs->rawsz);
			data[(i + 1) * (2 * fs->rawsz + 1) - 1] = '\n';
		}
	return view_member_data(dir, data, len, key, klen, out);
}

int
view_member_line(struct node *dir, const char *v, size_t vlen,
    const unsigned char *key, size_t klen, struct node **out)
{
	char *data = malloc(vlen + 2);

	if (data) {
		memcpy(data, v, vlen);
		data[vlen] = '\n';
	}
	return view_member_data(dir, data, vlen + 1, key, klen, out);
}

static int
author_make(struct odbfs *fs, struct node *dir, const struct view_fixed *f,
    const unsigned char *key, size_t klen, struct node **out)
{
	const struct commit *c = &dir->ext->commit;

	(void)fs;
	(void)f;
	return view_member_line(dir, c->author, c->author_len, key, klen, out);
}

static int
committer_make(struct odbfs *fs, struct node *dir,
    const struct view_fixed *f, const unsigned char *key, size_t klen,
    struct node **out)
{
	const struct commit *c = &dir->ext->commit;

	(void)fs;
	(void)f;
	return view_member_line(dir, c->committer, c->committer_len, key, klen, out);
}

static int
message_make(struct odbfs *fs, struct node *dir, const struct view_fixed *f,
    const unsigned char *key, size_t klen, struct node **out)
{
	(void)f;
	return view_intern(view_member_slice(fs, dir, dir->ext->commit.header_len,
	    dir->ext->commit.message_len, key, klen), out);
}

static const struct view_fixed commit_fixed[] = {
	{ "tree", S_IFDIR, NODE_TREE, view_key_dir, tree_make, &view_tree_kind },
	{ "parent", S_IFLNK, NODE_SYMLINK, parent_key, parent_make, NULL },
	{ "parents", S_IFREG, NODE_DATA, view_member_key, parents_make, NULL },
	{ "message", S_IFREG, NODE_SLICE, view_member_key, message_make, NULL },
	{ "author", S_IFREG, NODE_DATA, author_key, author_make, NULL },
	{ "committer", S_IFREG, NODE_DATA, committer_key, committer_make, NULL },
	{ "raw", S_IFLNK, NODE_SYMLINK, view_member_key, view_member_raw, NULL },
};

/* A commit never changes: neither does what it lacks. */
const struct view_kind view_commit_kind = {
	.name = "commit",
	.node = NODE_COMMIT,
	.mode = NODE_MODE_DIR,
	.negative = NODE_TIMEOUT_IMMUTABLE,
	VIEW_FIXED_INIT(commit_fixed),
	.nlink = VIEW_NLINK_COUNTED,
	.cache_listing = true,
};
