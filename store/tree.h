/*
 * tree (private): the rule for a tree entry's name, which the store's
 * parsers and its fuzzers share; the tree itself is public
 * (odbstore/tree.h).
 */
#ifndef ODBSTORE_TREE_PRIV_H
#define ODBSTORE_TREE_PRIV_H

#include <stdbool.h>
#include <stddef.h>

#include "odbstore/tree.h"

/* Is name (len bytes, no NUL inside) one a path can hold, of any length? */
bool tree_name_ok(const char *name, size_t len);

#endif
