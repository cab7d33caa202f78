/*
 * tree: parsing tree objects (gitformat: "tree").
 *
 *   tree  := entry*
 *   entry := octal-mode SP name NUL id[rawsz]
 *
 * Modes git writes: 100644 (file), 100755 (executable), 120000 (symlink),
 * 40000 (tree), 160000 (submodule, a commit id).
 */
#ifndef ODBFS_TREE_H
#define ODBFS_TREE_H

#include <stdbool.h>
#include <stddef.h>

#define TREE_MODE_FILE 0100644
#define TREE_MODE_EXEC 0100755
#define TREE_MODE_LINK 0120000
#define TREE_MODE_DIR 0040000
#define TREE_MODE_GITLINK 0160000

struct tree_entry {
	const char *name;		/* into the tree buffer, NUL-terminated */
	size_t namelen;
	unsigned mode;			/* one of TREE_MODE_*, or 0 if bogus */
	const unsigned char *id;	/* into the tree buffer */
};

struct tree {
	struct tree_entry *entries;	/* malloc'd; in the tree's order */
	size_t n;
	size_t dropped;		/* entries with names no file system allows */
	size_t drop_off;	/* where the first such name starts */
	bool truncated;		/* the tree is corrupt after entries[n - 1] */
	size_t bad_off;		/* where, when truncated */
};

/*
 * Parse the tree in buf (which must outlive *t). Entries whose names are
 * empty, "." or "..", or hold a '/' are dropped and counted (a name longer
 * than TREE_NAME_MAX is kept: whoever shows it says it is too long);
 * parsing stops
 * at the first entry that is cut short, with t->truncated set. Entries
 * with a mode git never writes keep mode 0. Free with tree_release().
 */
int tree_parse(struct tree *t, const unsigned char *buf, size_t len,
    size_t rawsz);
void tree_release(struct tree *t);

/* The longest name a Linux directory can hold (NAME_MAX). */
#define TREE_NAME_MAX 255

#endif
