/*
 * fingerprint: how a repository of a mount of many looks to lstat(2),
 * hashed: what a failed open is compared by before it is tried again.
 */
#ifndef ODBFS_FINGERPRINT_H
#define ODBFS_FINGERPRINT_H

#include <stdint.h>

/*
 * The repository at rel under root, whose git directory is gitdir: each
 * directory from the root down to it (owner and mode only), it and its
 * .git, and in its git directory the entries an open reads or weighs,
 * the fan-out directories among them.
 */
uint64_t fingerprint_repo(const char *root, const char *rel,
    const char *gitdir);

#endif
