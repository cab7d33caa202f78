/*
 * verify: does an object's content hash to its id? git names an object by
 * the hash of "type SP size NUL" followed by its payload (sha1 or sha256,
 * as the repository's format says). Hashing is OpenSSL's libcrypto: a
 * well-kept implementation, never one written here.
 */
#ifndef ODBFS_VERIFY_H
#define ODBFS_VERIFY_H

#include <stddef.h>

#include "reader.h"

/*
 * Hash everything r holds (streaming large objects through a buffer) and
 * compare with id: 0, or -EFSCORRUPTED with one log line naming the id.
 */
int verify_reader(struct reader *r, const unsigned char *id, size_t rawsz);

#endif
