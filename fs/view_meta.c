/*
 * view_meta: .odbfs/, what the daemon says of itself to the mount's owner.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "stats.h"
#include "view_int.h"

/*
 * A node whose inode number comes from the key's first klen bytes, made
 * distinct from others with that number by an 8-byte stamp after them:
 * .odbfs/stats is made anew at each lookup, with a count.
 */
static struct node *
stamped_node(enum node_kind kind, unsigned char *key, size_t klen,
    uint64_t stamp)
{
	uint64_t ino = node_ino(key, klen);
	struct node *n;

	memcpy(key + klen, &stamp, sizeof(stamp));
	if ((n = node_new(kind, key, klen + sizeof(stamp))))
		n->ino = ino;
	return n;
}

/*
 * .odbfs/ tells where the repository lives on the server and what the
 * daemon does: with allow_other, it is for the mount's owner (the uid
 * files show) and root, by mode (the mount has default_permissions).
 */
#define META_DIR_MODE (S_IFDIR | 0500)
#define META_FILE_MODE (S_IFREG | 0400)

int
meta_dir(struct odbfs *fs, struct node **out)
{
	struct node *n;

	if (fs->nometa)
		return -ENOENT;
	if ((n = new_dir(NODE_META, ".odbfs", NODE_TIME_REPO)))
		n->mode = META_DIR_MODE;
	return intern(n, out);
}

/* A file of .odbfs/ whose bytes are fixed: repository, format. */
static int
meta_file(const char *name, const char *value, struct node **out)
{
	unsigned char key[KEY_MAX];
	struct node *n = node_new(NODE_DATA, key, path_key(key, 'M', name));

	if (!n || asprintf(&n->data, "%s\n", value) < 0) {
		if (n)
			n->data = NULL;
		node_free(n);
		return -ENOMEM;
	}
	n->mode = META_FILE_MODE;
	n->size = strlen(n->data);
	return intern(n, out);
}

/*
 * .odbfs/stats: the counters as they are at this lookup, in a node of its
 * own (no lookup shares it, so no cached page of an older one is read),
 * looked up again by every path walk. Its st_ino stays the same.
 */
static int
stats_file(struct odbfs *fs, struct node **out)
{
	static atomic_uint_least64_t generation;
	unsigned char key[KEY_MAX];
	struct node *n;

	if (!(n = stamped_node(NODE_STATS, key, path_key(key, 'M',
	    ".odbfs/stats"), atomic_fetch_add(&generation, 1))))
		return -ENOMEM;
	if (!(n->data = stats_report(fs->odb, &n->size))) {
		node_free(n);
		return -ENOMEM;
	}
	n->mode = META_FILE_MODE;
	n->moving = true;
	return intern(n, out);
}

int
meta_child(struct odbfs *fs, const char *name, struct node **out)
{
	const struct repo *repo = odb_repo(fs->odb);

	if (!strcmp(name, "repository"))
		return meta_file(".odbfs/repository", repo->gitdir, out);
	if (!strcmp(name, "format"))
		return meta_file(".odbfs/format", repo->format, out);
	if (!strcmp(name, "stats"))
		return stats_file(fs, out);
	return -ENOENT;
}
