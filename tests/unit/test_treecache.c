/*
 * test_treecache: the table of parsed trees holds what it is given for
 * its owner and id only, keeps a held tree through evictions, a forget
 * and a clear, frees it when let go, and stays within TREECACHE_MAX bytes
 * (or the one tree last added, when that alone is more).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "treecache.h"
#include "unit.h"

/* A parse of len bytes and no entries, as view_tree.c would add it. */
static struct ptree *
made(size_t len)
{
	struct ptree *t = calloc(1, sizeof(*t));

	if (t && !(t->buf = malloc(len ? len : 1))) {
		free(t);
		return NULL;
	}
	if (t)
		t->len = len;
	return t;
}

static void
id_of(unsigned char *id, unsigned i)
{
	memset(id, 0, 20);
	memcpy(id, &i, sizeof(i));
}

void
test_treecache(void)
{
	static const int a = 1, b = 2;	/* two owners */
	unsigned char id[20];
	struct ptree *t, *held, *got, *big;
	size_t trees, bytes, max = 0;

	treecache_clear();
	id_of(id, 1);
	check_int(treecache_get(&a, id, 20, &got), -ENOENT,
	    "treecache: an empty table has nothing");
	held = treecache_add(&a, id, 20, made(1000));
	check(held != NULL, "treecache: a tree added comes back held");
	check_int(treecache_get(&a, id, 20, &got), 0,
	    "treecache: found by its owner and id");
	check(got == held, "treecache: the same parse");
	treecache_put(got);
	check_int(treecache_get(&b, id, 20, &got), -ENOENT,
	    "treecache: another owner's tree of the same id is not shared");
	/* Another thread's parse of the same tree: the first one stays. */
	t = treecache_add(&a, id, 20, made(1000));
	check(t == held, "treecache: a second add of one tree gives the first");
	treecache_put(t);
	/* Fill past the bound: the held tree survives its eviction. */
	for (unsigned i = 2; i < 200; i++) {
		id_of(id, i);
		treecache_put(treecache_add(&b, id, 20, made(100 << 10)));
		treecache_count(&trees, &bytes);
		max = bytes > max ? bytes : max;
	}
	check(max <= TREECACHE_MAX, "treecache: at most %zu bytes held, "
	    "%zu seen", TREECACHE_MAX, max);
	id_of(id, 1);
	check_int(treecache_get(&a, id, 20, &got), -ENOENT,
	    "treecache: the least recently used went");
	check(held->len == 1000 && held->buf != NULL,
	    "treecache: a held tree is still whole after it went");
	treecache_put(held);
	/* One tree larger than the bound: kept, alone. */
	id_of(id, 1000);
	big = treecache_add(&a, id, 20, made(TREECACHE_MAX + 1));
	treecache_put(big);
	treecache_count(&trees, &bytes);
	check_int((long long)trees, 1, "treecache: a tree past the bound is "
	    "kept alone");
	check_int(treecache_get(&a, id, 20, &got), 0,
	    "treecache: and found");
	/* Forget an owner while one of its trees is held. */
	treecache_forget(&a);
	check_int(treecache_get(&a, id, 20, &t), -ENOENT,
	    "treecache: a forgotten owner's trees are gone");
	check(got->len == TREECACHE_MAX + 1, "treecache: one held stays whole");
	treecache_put(got);
	id_of(id, 7);
	treecache_put(treecache_add(&b, id, 20, made(10)));
	treecache_clear();
	treecache_count(&trees, &bytes);
	check(trees == 0 && bytes == 0, "treecache: a clear leaves nothing");
}
