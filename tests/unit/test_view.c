/*
 * test_view: the listing of every kind of directory against its lookups,
 * without mounting. For each name a directory lists, layout_lookup() of it
 * must give a node with the inode number and type the listing gave: a
 * backup tool that compares readdir's d_ino with stat's st_ino, or find
 * trusting d_type, sees one file system. The repository is made by git:
 * two commits whose tree holds a file, an executable, a symlink, a
 * subdirectory and a gitlink; branches, an annotated and a light tag, a
 * tag of a tree. The walk starts at the root and goes into every listed
 * directory, then into commits/<id> and trees/<id>, which their parents
 * do not list; it checks that it met every kind of directory.
 *
 * Each directory's facts in the layout (its kind's struct view_kind) are
 * checked against its listing too: st_nlink against the directories it
 * lists, a kind whose listing the kernel may keep against what can
 * change it, ids where the layout says names are ids, refs only where it
 * says they are shown, and an object file's size against the store's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "odbfs.h"
#include "unit.h"
#include "layout.h"
#include "view.h"

static const char setup[] =
	"set -e; cd \"$0\"; exec >/dev/null 2>&1\n"
	"export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@e GIT_COMMITTER_NAME=C\n"
	"export GIT_COMMITTER_EMAIL=c@e GIT_CONFIG_NOSYSTEM=1 HOME=\"$0\"\n"
	"export GIT_AUTHOR_DATE='1700000000 +0000'\n"
	"export GIT_COMMITTER_DATE='1700000001 +0000'\n"
	"git init -q -b main repo; cd repo\n"
	"printf 'a\\n' >file; printf '#!/bin/sh\\n' >exec; chmod +x exec\n"
	"ln -s file link; mkdir sub; printf 'b\\n' >sub/f\n"
	"git add .; git commit -qm one\n"
	"git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),mod\n"
	"printf 'c\\n' >>file; git add file; git commit -qm two\n"
	"git branch side HEAD~1; git branch topic/deep/x HEAD\n"
	"git tag -a -m t v1; git tag light HEAD~1\n"
	"git tag treetag HEAD^{tree}\n"
	"git rev-parse HEAD >../head; git rev-parse HEAD^{tree} >../tree\n"
	"git rev-parse HEAD~1 >../root\n";

/* Kinds of directory the walk met. */
static bool seen[NODE_STATS + 1];

static bool
id_of(const char *dir, const char *name, char *hex)
{
	char path[512];
	FILE *f;
	bool ok = false;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "r"))) {
		ok = fgets(hex, OID_HEXSZ_MAX + 2, f) != NULL;
		fclose(f);
	}
	hex[strcspn(hex, "\n")] = 0;
	return ok;
}

static void
release(struct node *n)
{
	if (n != node_root())
		node_forget(node_nodeid(n), 1);
}

/*
 * Every entry of dir (at path) looked up: its inode number and type are
 * the listing's. Then the same for each directory among them.
 */
/* Is name what a directory named by ids lists: an id, or a fan-out? */
static bool
id_name(const struct odbfs *fs, const struct view_kind *k, const char *name)
{
	unsigned char id[OID_RAWSZ_MAX];

	return oid_parse_hex(id, name, fs->rawsz) || (k->fanout &&
	    strlen(name) == 2 && strspn(name, "0123456789abcdef") == 2);
}

/* n, listed in dir at path: what the layout says of it is so. */
static void
check_facts(struct odbfs *fs, struct node *dir, struct node *n,
    const char *name, const char *path)
{
	const struct view_kind *k = layout_kind(dir->kind);
	struct objinfo info;
	bool fixed = false;

	for (size_t i = 0; i < k->nfixed; i++)
		fixed |= !strcmp(k->fixed[i].name, name);
	if (k->by_id && !fixed)
		check(id_name(fs, k, name), "%s: a %s/ names ids, as its kind "
		    "says", path, k->name);
	if (S_ISLNK(n->mode) && n->key[0] == 'R')
		check(k->shows_refs, "%s: a ref, in a %s/, whose kind says it "
		    "shows refs", path, k->name);
	if (layout_object_bytes(n))
		check(odb_info(fs->odb, node_id(n), &info) == 0 &&
		    info.size == n->size, "%s: its bytes are its object's, as "
		    "the layout says", path);
}

static void
walk(struct odbfs *fs, struct node *dir, const char *path)
{
	const struct view_kind *k = layout_kind(dir->kind);
	struct dirlist *l;
	size_t same = 0, count, dirs = 0;

	seen[dir->kind] = true;
	if (!check_int(layout_list(fs, dir, &l), 0, "%s lists", path))
		return;
	count = dirlist_count(l);
	for (size_t i = 0; i < count; i++) {
		char buf[OID_HEXSZ_MAX + 1], sub[4096];
		const char *name;
		struct node *n;
		uint64_t ino;
		mode_t type;
		int ret;

		name = dirlist_entry(l, i, buf, &type, &ino);
		snprintf(sub, sizeof(sub), "%s/%s", path, name);
		if ((ret = layout_lookup(fs, dir, name, &n)) < 0) {
			check_int(ret, 0, "%s: listed, and looked up", sub);
			continue;
		}
		if (check_u64(n->ino, ino, "%s: the lookup's inode number "
		    "is the listing's", sub) & check_int(n->mode & S_IFMT,
		    type, "%s: the lookup's type is the listing's", sub))
			same++;
		dirs += S_ISDIR(type);
		check_facts(fs, dir, n, name, sub);
		if (S_ISDIR(n->mode))
			walk(fs, n, sub);
		else
			seen[n->kind] = true;
		release(n);
	}
	dirlist_free(l);
	diag("%s: %zu of %zu entries agree", path, same, count);
	check_u64(layout_nlink(fs, dir), k->nlink == VIEW_NLINK_UNKNOWN ? 1 :
	    2 + dirs, "%s/: a %s's st_nlink is what it lists", path, k->name);
	/* A listing the kernel keeps is one that cannot change. */
	if (k->cache_listing)
		check(!k->shows_refs && !k->by_id && !k->moving &&
		    node_timeout(dir) > 0, "%s/: a %s's listing may be kept: "
		    "nothing changes it", path, k->name);
}

/* dir/name looked up (a directory no listing gives), then walked. */
static void
walk_named(struct odbfs *fs, struct node *dir, const char *name,
    const char *path)
{
	struct node *n;

	if (check_int(layout_lookup(fs, dir, name, &n), 0, "%s looked up",
	    path)) {
		walk(fs, n, path);
		release(n);
	}
}

/* dir/id (a directory of the root) is the link ../by-id/<id>. */
static void
check_link(struct odbfs *fs, const char *dir, const char *id)
{
	char want[OID_HEXSZ_MAX + 16];
	struct node *d, *n;

	if (!check_int(layout_lookup(fs, node_root(), dir, &d), 0,
	    "%s/ looked up", dir))
		return;
	snprintf(want, sizeof(want), "../by-id/%s", id);
	if (check_int(layout_lookup(fs, d, id, &n), 0, "%s/%s looked up", dir,
	    id)) {
		check(S_ISLNK(n->mode) && !strcmp(n->data, want),
		    "%s/%s links to %s", dir, id, want);
		release(n);
	}
	release(d);
}

static void
walk_repo(struct odbfs *fs, const char *dir)
{
	static const enum node_kind dirs[] = { NODE_ROOT, NODE_OBJECTS,
	    NODE_FANOUT, NODE_COMMITS, NODE_TREES, NODE_TAGS, NODE_REFDIR,
	    NODE_COMMIT, NODE_TAG, NODE_TREE, NODE_GITLINK, NODE_META,
	    NODE_BYID };
	static const enum node_kind files[] = { NODE_OBJECT, NODE_BLOB,
	    NODE_DATA, NODE_SLICE, NODE_SYMLINK, NODE_STATS };
	char head[OID_HEXSZ_MAX + 2], root[OID_HEXSZ_MAX + 2];
	char tree[OID_HEXSZ_MAX + 2], path[256];
	struct node *byid;

	walk(fs, node_root(), "");
	if (!check(id_of(dir, "head", head) && id_of(dir, "tree", tree),
	    "git said the ids"))
		return;
	/* commits/ and trees/ list links to by-id/, which lists nothing. */
	check_link(fs, "commits", head);
	check_link(fs, "trees", tree);
	if (check_int(layout_lookup(fs, node_root(), "by-id", &byid), 0,
	    "by-id/ looked up")) {
		walk(fs, byid, "/by-id");
		snprintf(path, sizeof(path), "/by-id/%s", head);
		walk_named(fs, byid, head, path);
		if (id_of(dir, "root", root)) {
			snprintf(path, sizeof(path), "/by-id/%s", root);
			walk_named(fs, byid, root, path);
		}
		snprintf(path, sizeof(path), "/by-id/%s", tree);
		walk_named(fs, byid, tree, path);
		release(byid);
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		check(seen[dirs[i]], "directories of kind %d were walked",
		    dirs[i]);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		check(seen[files[i]], "nodes of kind %d were met", files[i]);
}

/* With -o nometa, .odbfs is neither listed nor found. */
static void
nometa(struct odbfs *fs)
{
	struct dirlist *l;
	struct node *n;
	bool listed = false;

	fs->nometa = true;
	if (check_int(layout_list(fs, node_root(), &l), 0, "nometa: lists")) {
		for (size_t i = 0; i < dirlist_count(l); i++) {
			char buf[OID_HEXSZ_MAX + 1];
			mode_t type;
			uint64_t ino;

			listed |= !strcmp(dirlist_entry(l, i, buf, &type,
			    &ino), ".odbfs");
		}
		dirlist_free(l);
	}
	check(!listed, "nometa: .odbfs is not listed");
	check_int(layout_lookup(fs, node_root(), ".odbfs", &n), -ENOENT,
	    "nometa: .odbfs is not found");
	fs->nometa = false;
}

void
test_view(void)
{
	char dir[] = "/tmp/odbfs-unit.XXXXXX", path[256];
	struct odbfs fs = { .negative_timeout = 1.0 };
	const char *why;
	size_t nodes, cells;

	if (!mkdtemp(dir) || !check_int(unit_sh(setup, dir), 0,
	    "git made a repository with every kind of entry"))
		return;
	snprintf(path, sizeof(path), "%s/repo", dir);
	node_init(NODE_ROOT);
	check(layout_check(), "the layout's rows agree with themselves");
	if (check_int(odb_open(path, &fs.odb, &why), 0,
	    "the repository opens")) {
		fs.rawsz = odb_rawsz(fs.odb);
		walk_repo(&fs, dir);
		nometa(&fs);
		node_count(&nodes, &cells);
		check_u64(nodes, 0, "every node looked up was forgotten");
		odb_close(fs.odb);
	}
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path) != 0)
		diag("could not remove %s", dir);
}
