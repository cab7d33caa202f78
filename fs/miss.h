/*
 * miss: the ids recently looked up and not found, so that the kernel's
 * cached negative entries for them can be dropped once they arrive.
 *
 * A fixed table of MISS_SLOTS slots, each a handful of atomic words: the
 * lookup path stores an id with relaxed atomic writes (no lock, no
 * syscall, no spin); the watcher thread reads the table after each new
 * snapshot. A miss noted after the sweep of the snapshot that brought
 * its object would be left to time out: the lookup checks after noting
 * that no snapshot was published meanwhile (odb_moved(), in ops.c), and
 * otherwise looks again. Two misses racing for one slot may leave it torn
 * or lose one;
 * then at worst an entry stays cached until -o negative_timeout expires,
 * which is the bound the table never needs to beat.
 */
#ifndef ODBFS_MISS_H
#define ODBFS_MISS_H

#include <stdbool.h>
#include <stddef.h>

#define MISS_SLOTS 4096

/* Remember that raw (rawsz bytes) was missed. */
void miss_note(const unsigned char *raw, size_t rawsz);

/*
 * For every remembered id for which found() is true, call arrived() and
 * forget it.
 */
void miss_sweep(size_t rawsz, bool (*found)(void *ctx, const unsigned char *),
    void (*arrived)(void *ctx, const unsigned char *), void *ctx);

#endif
