/*
 * refs: the repository's references as a reader of them sees them: a
 * list sorted by name, and HEAD. odb_refs_get() lends the current list
 * (see odbstore/odb.h); these read it. How the list is read from disk is
 * the store's own (store/refs.h).
 */
#ifndef ODBSTORE_REFS_H
#define ODBSTORE_REFS_H

#include <stddef.h>

struct refs;

/* How many refs the list holds; they are indexed 0 to that, by name. */
size_t refs_count(const struct refs *refs);

/* Ref i's full name ("refs/heads/main") and the id it names. */
const char *refs_name(const struct refs *refs, size_t i);
const unsigned char *refs_id(const struct refs *refs, size_t i);

/* The index of the ref named name, or -1. */
long refs_find(const struct refs *refs, const char *name);

/*
 * The index of the first ref whose name begins with prefix (which ends in
 * '/'), or -1 if none does.
 */
long refs_first_under(const struct refs *refs, const char *prefix);

/* HEAD's "ref: " target, or NULL when HEAD is no symbolic ref. */
const char *refs_head_target(const struct refs *refs);

/* A detached HEAD's id, or NULL when HEAD is not detached. */
const unsigned char *refs_head_id(const struct refs *refs);

#endif
