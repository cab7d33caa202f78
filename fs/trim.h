/*
 * trim: what the daemon frees goes back to the system, not only to the C
 * library's free lists. A walk leaves hundreds of thousands of nodes that
 * the kernel forgets later, all at once (drop_caches, memory pressure, an
 * unmount of a forge's repository); their memory, freed in small pieces
 * across every arena, would stay with the process.
 *
 * Whoever frees counts what it freed in units (about 256 bytes: a node is
 * one, a closed repository 128); past TRIM_EVERY units, a thread of its
 * own waits for the frees to settle and calls malloc_trim(), which walks
 * every free chunk of every arena with each arena locked (some
 * milliseconds over a heap of tens of MiB): never on a FUSE worker, and at
 * most a few times a second however fast the kernel forgets.
 *
 * When the kernel forgot that many nodes (memory pressure, drop_caches,
 * the end of a walk's subtree), the daemon's own caches go too, before
 * the trim: the shed function trim_start() was given empties them (the
 * parsed trees, the delta bases), and what is asked for next fills them
 * again. A repository closed sheds nothing.
 */
#ifndef ODBFS_TRIM_H
#define ODBFS_TRIM_H

#include <stddef.h>

#define TRIM_NODE 1		/* a node forgotten: a few hundred bytes */
#define TRIM_REPO 128		/* a repository closed: some tens of KiB */
#define TRIM_EVERY 4096

/*
 * Before any thread: the C library's allocator set for a daemon that
 * lives for months. Blocks of TRIM_MMAP_MIN or more (inflated objects,
 * trees) get mappings of their own, which go back to the system when
 * freed: glibc otherwise raises that threshold to the largest block freed
 * and keeps such blocks in its heaps. And TRIM_ARENAS arenas, not eight
 * per core, each keeping what the threads that used it freed. Reading
 * 80 000 objects of a git.git-sized repository peaked at 187 MiB
 * without, 121 MiB with (64 MiB of them the delta bases).
 */
#define TRIM_MMAP_MIN ((size_t)256 << 10)
#define TRIM_ARENAS 2
void trim_init(void);

/*
 * Start the thread, which calls shed(arg) before a trim that forgotten
 * nodes asked for: 0, or a negative errno (the daemon then never trims).
 */
int trim_start(void (*shed)(void *arg), void *arg);

/* units were freed; wakes the thread past TRIM_EVERY. Lock-free. */
void trim_freed(size_t units);

/* The kernel forgot nodes: trim_freed(), and shed at the next trim. */
void trim_forgot(size_t nodes);

/* Stop the thread (trim_start() may start it again). */
void trim_stop(void);

/* How many times it trimmed, for tests. */
size_t trim_count(void);

#endif
