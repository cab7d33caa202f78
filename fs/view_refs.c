/*
 * view_refs: HEAD and refs/, symlinks into commits/, trees/, tags/ and
 * objects/.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "odbstore/log.h"
#include "odbstore/refs.h"
#include "view.h"

/*
 * The longest path of a refs directory or ref shown: git sets no bound on
 * a packed ref's name; this one is past what any path a system call takes
 * (4096), so that only a walk a directory at a time (openat) reaches the
 * deepest, and a key holds such a path by a hash (view_dir_key()).
 */
#define REF_PATH_MAX 32768

/*
 * The target of the ref at path pointing at id: relative to the ref's
 * directory, into commits/, trees/, tags/ or objects/ by id's type (an
 * object the store lacks: objects/, where it does not exist either).
 * Returns the target's length, which is size or more if it did not fit.
 */
static size_t
ref_target(struct odbfs *fs, const char *path, const unsigned char *id,
    char *target, size_t size)
{
	char hex[OID_HEXSZ_MAX + 1];
	const char *where = "objects";
	struct objinfo info;
	size_t len = 0;

	oid_to_hex(hex, id, fs->rawsz);
	if (odb_info(fs->odb, id, &info) < 0)
		log_once(LOGL_WARN, "%.200s: %s is missing: linked into "
		    "objects/", path, hex);
	else if (info.type == OBJ_COMMIT)
		where = "commits";
	else if (info.type == OBJ_TREE)
		where = "trees";
	else if (info.type == OBJ_TAG)
		where = "tags";
	for (const char *p = strchr(path, '/'); p; p = strchr(p + 1, '/')) {
		if (len + 3 < size)
			memcpy(target + len, "../", 3);
		len += 3;
	}
	if (len < size)
		snprintf(target + len, size - len, "%s/%s", where, hex);
	else if (size > 0)
		target[size - 1] = '\0';
	return len + strlen(where) + 1 + strlen(hex);
}

static int
ref_link(struct odbfs *fs, const char *path, const unsigned char *id,
    struct node **out)
{
	unsigned char key[KEY_MAX];
	char target[LINK_MAX_LEN + 1];
	size_t len;

	len = ref_target(fs, path, id, target, sizeof(target));
	if (len > LINK_MAX_LEN)
		return log_corrupt("%.200s%s: ref is nested too deep to show: "
		    "its link would be %zu bytes, more than %d", path,
		    strlen(path) > 200 ? "..." : "", len, LINK_MAX_LEN);
	return view_intern(view_new_link(key, view_ref_key(key, path, target), target,
	    NODE_TIME_REPO), out);
}

int
view_head_target(struct odbfs *fs, char *target, size_t size)
{
	const struct refs *refs = odb_refs_get(fs->odb);
	const unsigned char *head = refs_head_id(refs);
	unsigned char id[OID_RAWSZ_MAX];
	bool detached = false;
	int ret = 0;

	if (refs_head_target(refs)) {
		snprintf(target, size, "%s", refs_head_target(refs));
	} else if (head) {
		memcpy(id, head, fs->rawsz);
		detached = true;
	} else {
		ret = -ENOENT;
	}
	odb_refs_put(fs->odb);
	/*
	 * Detached: linked by type as a ref is, out of the refs' read
	 * section (a tag's id, which git allows, goes to tags/).
	 */
	if (detached)
		ref_target(fs, "HEAD", id, target, size);
	return ret;
}

/* HEAD: 'R' "HEAD" NUL target; absent when it points nowhere. */
size_t
view_head_key(struct odbfs *fs, const struct node *dir, const char *name,
    unsigned char *key)
{
	char target[4096 + 64];

	(void)dir;
	if (view_head_target(fs, target, sizeof(target)) < 0)
		return 0;
	return view_ref_key(key, name, target);
}

/* The HEAD link whose key view_head_key() made: its target is in the key. */
int
view_head_make(struct odbfs *fs, struct node *dir, const struct view_fixed *f,
    const unsigned char *key, size_t klen, struct node **out)
{
	const unsigned char *nul = memchr(key, '\0', klen);
	char target[KEY_MAX];

	(void)fs;
	(void)dir;
	(void)f;
	assert(nul);
	memcpy(target, nul + 1, klen - (size_t)(nul + 1 - key));
	target[klen - (size_t)(nul + 1 - key)] = '\0';
	return view_intern(view_new_link(key, klen, target, NODE_TIME_REPO), out);
}

/* The id the ref named name holds, into id; false if there is none. */
static bool
ref_id(struct odbfs *fs, const char *name, unsigned char *id)
{
	const struct refs *refs = odb_refs_get(fs->odb);
	long i = refs_find(refs, name);

	if (i >= 0)
		memcpy(id, refs_id(refs, (size_t)i), fs->rawsz);
	odb_refs_put(fs->odb);
	return i >= 0;
}

/* "../" for each '/' of path, into up (of KEY_MAX bytes). */
static void
up_of(const char *path, char *up)
{
	size_t n = 0;

	for (const char *p = strchr(path, '/'); p && n + 4 < KEY_MAX;
	    p = strchr(p + 1, '/'), n += 3)
		memcpy(up + n, "../", 3);
	up[n] = '\0';
}

/*
 * HEAD~2, HEAD^2...: links to the commits git's rev-parse names so, from
 * where HEAD points now (so they move with it).
 */
int
view_head_ancestor(struct odbfs *fs, struct node *dir, const char *name,
    struct node **out)
{
	const char *suffix = view_rev_suffix(name);
	unsigned char id[OID_RAWSZ_MAX];
	char target[4096 + 64];

	if (!suffix || suffix - name != 4 || strncmp(name, "HEAD", 4) ||
	    view_head_target(fs, target, sizeof(target)) < 0)
		return -ENOENT;
	/* Detached: commits/<id>, or tags/<id> (and so on) for a tag. */
	if (strncmp(target, "refs/", 5)) {
		const char *slash = strchr(target, '/');

		if (!slash || !oid_parse_hex(id, slash + 1, fs->rawsz))
			return -ENOENT;
	} else if (!ref_id(fs, target, id)) {
		return -ENOENT;
	}
	return view_ancestor(fs, dir, name, id, suffix, "", true, out);
}

/*
 * A child of a refs directory: a ref is a link, a name some refs are under
 * a directory, as refs_list() tells them apart; a ref's name with git's
 * ~N and ^N after it links to that ancestor.
 */
static int
refs_find_child(struct odbfs *fs, struct node *dir, const char *name,
    struct node **out)
{
	unsigned char id[OID_RAWSZ_MAX];
	char path[REF_PATH_MAX], under[REF_PATH_MAX + 1];
	const struct refs *refs;
	long i;
	bool isdir = false;

	if (!view_child_path(dir, name, path, sizeof(path)))
		return -ENAMETOOLONG;
	snprintf(under, sizeof(under), "%s/", path);
	refs = odb_refs_get(fs->odb);
	if ((i = refs_find(refs, path)) >= 0)
		memcpy(id, refs_id(refs, (size_t)i), fs->rawsz);
	else
		isdir = refs_first_under(refs, under) >= 0;
	odb_refs_put(fs->odb);
	if (i >= 0)
		return ref_link(fs, path, id, out);
	if (!isdir) {
		const char *suffix = view_rev_suffix(name);
		char up[KEY_MAX];

		if (!suffix)
			return -ENOENT;
		path[strlen(path) - strlen(suffix)] = '\0';
		if (!ref_id(fs, path, id))
			return -ENOENT;
		up_of(path, up);
		return view_ancestor(fs, dir, name, id, suffix, up, true, out);
	}
	return view_intern(view_new_dir(&view_refs_kind, path, NODE_TIME_REPO), out);
}

/* The children of refs directory dir: next components of refs under it. */
static int
refs_list(struct odbfs *fs, struct node *dir, struct dirlist *l)
{
	const struct refs *refs = odb_refs_get(fs->odb);
	size_t plen = strlen(dir->path), nleaf = 0, leaf_alloc = 0;
	struct leaf { char *name; unsigned char id[OID_RAWSZ_MAX]; } *leaf = NULL;
	unsigned char key[KEY_MAX];
	char *prefix, last[4096] = "", target[4096 + 64], path[REF_PATH_MAX];
	long i, first;
	int ret = 0;

	if (asprintf(&prefix, "%s/", dir->path) < 0) {
		odb_refs_put(fs->odb);
		return -ENOMEM;
	}
	first = refs_first_under(refs, prefix);
	for (i = first; ret == 0 && i >= 0 && (size_t)i < refs_count(refs) &&
	    !strncmp(refs_name(refs, (size_t)i), prefix, plen + 1); i++) {
		const char *rest = refs_name(refs, (size_t)i) + plen + 1;
		size_t clen = strcspn(rest, "/");
		char comp[4096];

		if (clen >= sizeof(comp))
			continue;
		memcpy(comp, rest, clen);
		comp[clen] = '\0';
		if (!strcmp(comp, last))
			continue;
		snprintf(last, sizeof(last), "%s", comp);
		if (rest[clen] == '/') {
			/*
			 * A ref of that name too (a hostile packed-refs or
			 * reftable: git allows none) sorts before, as "a"
			 * before "a-b" before "a/c", and is what a lookup
			 * finds: the directory is not listed again.
			 */
			view_child_path(dir, comp, path, sizeof(path));
			if (refs_find(refs, path) >= 0)
				continue;
			ret = dirlist_add(l, comp, true, S_IFDIR, node_ino(key,
			    view_dir_key(key, path)));
			continue;
		}
		/* A ref: its target needs the object store, outside RCU. */
		ret = dirlist_add(l, comp, true, S_IFLNK, 0);
		if (ret == 0 && nleaf == leaf_alloc) {
			struct leaf *grown;

			leaf_alloc = leaf_alloc ? 2 * leaf_alloc : 16;
			if ((grown = realloc(leaf, leaf_alloc * sizeof(*leaf))))
				leaf = grown;
			else
				ret = -ENOMEM;
		}
		if (ret == 0 && !(leaf[nleaf].name = strdup(refs_name(refs,
		    (size_t)i))))
			ret = -ENOMEM;
		if (ret == 0)
			memcpy(leaf[nleaf++].id, refs_id(refs, (size_t)i),
			    fs->rawsz);
	}
	odb_refs_put(fs->odb);
	for (size_t k = 0, r = 0; k < nleaf; k++) {
		while (l->v[r].type != S_IFLNK)
			r++;
		if (ret == 0) {
			ref_target(fs, leaf[k].name, leaf[k].id, target,
			    sizeof(target));
			l->v[r++].ino = node_ino(key, view_ref_key(key,
			    leaf[k].name, target));
		}
		free(leaf[k].name);
	}
	free(leaf);
	free(prefix);
	return ret;
}

/*
 * refs/ and below: the kernel keeps the links and directories it looked
 * up (reflinks.c drops what a ref that moved changes), never a miss, for
 * a new ref must show at once, nor a listing (ops.c).
 */
const struct view_kind view_refs_kind = {
	.name = "refs",
	.node = NODE_REFDIR,
	.mode = NODE_MODE_DIR,
	.negative = 0,
	.shows_refs = true,
	.find = refs_find_child,
	.list = refs_list,
};
