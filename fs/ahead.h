/*
 * ahead: the files a walk is about to read, rebuilt and stored in the
 * kernel's page cache before it asks.
 *
 * tar, rsync, cp -r and backup tools read every file a directory listing
 * showed, most of them in the listing's order, but not always right after
 * listing it: rsync's sender and restic list many directories before
 * they read the first. The first read of each file is a request to the
 * daemon, and on this kind of machine that round trip (25-31 us) costs
 * more than git takes to rebuild a small object. So once a second file
 * of one listing is read, a thread of ours rebuilds the files that follow
 * it (and then those before it not read yet) and stores them in the
 * kernel's cache (FUSE_NOTIFY_STORE): the walk then reads them with no
 * request at all. The next window goes when a read of that listing
 * reaches us again.
 *
 * Nothing changes for one file read alone, or for a listing nobody reads
 * (ls -l). What is pushed and never read costs the rebuild and page cache
 * the kernel may reclaim. A file the walk reaches before its push is just
 * read as usual; one it reaches while the thread rebuilds it waits for
 * that rebuild and shares it (readers.c): no object is rebuilt twice.
 *
 * Its inputs: ahead_list_*() while a readdirplus fills a reply, and
 * ahead_read() at each read of an object file; one thread, started and
 * stopped with the session (ahead_start(), ahead_stop()).
 */
#ifndef ODBFS_AHEAD_H
#define ODBFS_AHEAD_H

#include <stdint.h>

#include "odbfs.h"

/* The regular files one directory stream has shown the kernel, in order. */
struct ahead_list;

/*
 * A new, empty list with one reference, of repository repo's files (the
 * node number of node_enter(); 0 in a mount of one); NULL when out of
 * memory.
 */
struct ahead_list *ahead_list_new(uint32_t repo);

/*
 * The stream showed a file: node nodeid (whose node has st_ino ino) for
 * object id. Past a bound, files are no longer recorded.
 */
void ahead_list_add(struct ahead_list *l, fuse_ino_t nodeid, uint64_t ino,
    const unsigned char *id, size_t rawsz);

/* Drop the stream's reference (at releasedir); NULL is ignored. */
void ahead_list_put(struct ahead_list *l);

/* The kernel asked for the first page of node nodeid, st_ino ino. */
void ahead_read(fuse_ino_t nodeid, uint64_t ino);

/* Start the thread that pushes; without it, ahead_read() records only. */
int ahead_start(struct odbfs *fs);

/* Stop and join it (before the session goes), and drop every list. */
void ahead_stop(void);

#endif
