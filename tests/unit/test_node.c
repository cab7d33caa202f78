/*
 * test_node: fs/node.c's table of the nodes the kernel holds, keyed by
 * st_ino. Numbers that differ only in their upper bits must not share a
 * bucket: a tree entry's st_ino keeps its index in the low 20 bits
 * (view_tree.c), so the first entry of every tree a walk opened had one
 * chain, as long as the trees were many. Then every node is forgotten.
 */
#include <stdint.h>
#include <stdio.h>

#include "node.h"
#include "unit.h"

#define NTREES 20000

void
test_node(void)
{
	static struct node *made[NTREES];
	unsigned char key[16];
	size_t nodes, cells;

	node_init(NODE_ROOT);
	node_enter(0, 0);
	for (size_t i = 0; i < NTREES; i++) {
		struct node *n;

		snprintf((char *)key, sizeof(key), "E%08zu", i);
		if (!(n = node_new(NODE_TREE, key, 9))) {
			check(false, "node_new");
			return;
		}
		/* Entry 1 of tree i: i in the upper bits, 1 in the lower. */
		n->ino = (uint64_t)(i + 1) << 20 | 1;
		made[i] = node_intern(n);
	}
	node_count(&nodes, &cells);
	check_int((long long)nodes, NTREES, "node: every node in the table");
	check(node_check(), "node: the table agrees with itself, full");
	check(node_longest_chain() <= 16,
	    "node: 20000 numbers alike in their low 20 bits spread over the "
	    "buckets");
	for (size_t i = 0; i < NTREES; i++)
		node_forget(node_nodeid(made[i]), 1);
	node_count(&nodes, &cells);
	check_int((long long)nodes, 0, "node: all forgotten");
	check(node_check(), "node: the table agrees with itself, emptied");
}
