/*
 * view_meta: .odbfs/, what the daemon says of itself to the mount's owner.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "roster.h"
#include "metrics.h"
#include "stats.h"
#include "view.h"

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

/* The root's .odbfs/: 'D' ".odbfs", absent with -o nometa. */
size_t
view_meta_key(struct odbfs *fs, const struct node *dir, const char *name,
    unsigned char *key)
{
	return fs->nometa ? 0 : view_key_dir(fs, dir, name, key);
}

/*
 * A file of .odbfs/ whose bytes are fixed: repository, format. Its st_ino
 * is its key's unless ino is given.
 */
static int
meta_file(const unsigned char *key, size_t klen, uint64_t ino,
    const char *value, struct node **out)
{
	struct node *n = node_new(NODE_DATA, key, klen);

	if (!n || asprintf(&n->data, "%s\n", value) < 0) {
		if (n)
			n->data = NULL;
		node_free(n);
		return -ENOMEM;
	}
	if (ino)
		n->ino = ino;
	n->mode = META_FILE_MODE;
	n->size = strlen(n->data);
	return view_intern(n, out);
}

/* A mount of many: the root; else the repository's git directory. */
static int
repository_make(struct odbfs *fs, struct node *dir,
    const struct view_fixed *f, const unsigned char *key, size_t klen,
    struct node **out)
{
	(void)dir;
	(void)f;
	return meta_file(key, klen, 0, fs->odb ? odb_gitdir(fs->odb) :
	    roster_root(fs), out);
}

/* A mount of many has no format of its own: each repository says its. */
static size_t
format_key(struct odbfs *fs, const struct node *dir, const char *name,
    unsigned char *key)
{
	return fs->odb ? view_key_path(fs, dir, name, key) : 0;
}

/*
 * Its node's key also holds the format ('M' path NUL format), its st_ino
 * the path's alone: a repository put in another's place in a mount of
 * many, with another hash, is another node with the same number.
 */
static int
format_make(struct odbfs *fs, struct node *dir, const struct view_fixed *f,
    const unsigned char *key, size_t klen, struct node **out)
{
	unsigned char full[KEY_MAX + 16];
	const char *format = odb_format(fs->odb);
	size_t flen = strlen(format);

	(void)dir;
	(void)f;
	if (klen + 1 + flen > sizeof(full))
		return -ENAMETOOLONG;
	memcpy(full, key, klen);
	full[klen] = '\0';
	memcpy(full + klen + 1, format, flen);
	return meta_file(full, klen + 1 + flen, node_ino(key, klen), format,
	    out);
}

/*
 * .odbfs/stats, .odbfs/metrics: the counters as they are at this lookup,
 * in a node of its own (no lookup shares it, so no cached page of an
 * older one is read), looked up again by every path walk. Its st_ino,
 * its key's, stays the same.
 */
static int
report_make(struct odbfs *fs, const struct view_fixed *f,
    const unsigned char *key, size_t klen,
    char *(*report)(const struct odbfs *, size_t *), struct node **out)
{
	static atomic_uint_least64_t generation;
	unsigned char stamped[KEY_MAX + sizeof(uint64_t)];
	struct node *n;

	memcpy(stamped, key, klen);
	if (!(n = stamped_node(f->kind, stamped, klen,
	    atomic_fetch_add(&generation, 1))))
		return -ENOMEM;
	if (!(n->data = report(fs, &n->size))) {
		node_free(n);
		return -ENOMEM;
	}
	n->mode = META_FILE_MODE;
	n->moving = true;
	return view_intern(n, out);
}

static int
stats_make(struct odbfs *fs, struct node *dir, const struct view_fixed *f,
    const unsigned char *key, size_t klen, struct node **out)
{
	(void)dir;
	return report_make(fs, f, key, klen, stats_report, out);
}

static int
metrics_make(struct odbfs *fs, struct node *dir, const struct view_fixed *f,
    const unsigned char *key, size_t klen, struct node **out)
{
	(void)dir;
	return report_make(fs, f, key, klen, metrics_report, out);
}

static const struct view_fixed meta_fixed[] = {
	{ "stats", S_IFREG, NODE_STATS, view_key_path, stats_make, NULL },
	{ "metrics", S_IFREG, NODE_STATS, view_key_path, metrics_make, NULL },
	{ "repository", S_IFREG, NODE_DATA, view_key_path, repository_make, NULL },
	{ "format", S_IFREG, NODE_DATA, format_key, format_make, NULL },
};

const struct view_kind view_meta_kind = {
	.name = "meta",
	.node = NODE_META,
	.mode = META_DIR_MODE,
	.negative = VIEW_NEGATIVE_MOUNT,
	VIEW_FIXED_INIT(meta_fixed),
	.nlink = VIEW_NLINK_COUNTED,
	.cache_listing = true,
};
