/*
 * scan: the caps of a scan (odbstore/scan.h), which it includes.
 */
#ifndef ODBFS_SCAN_PRIVATE_H
#define ODBFS_SCAN_PRIVATE_H

#include "odbstore/scan.h"

/* Levels of groups searched: the shown path has at most this many names. */
#define SCAN_MAX_DEPTH 32

/*
 * Repositories one scan lists: past this, about 150 MiB of listing and
 * ten seconds a scan, one mount of one root is no longer the tool.
 */
#define SCAN_MAX_REPOS (1 << 20)

/*
 * Directory entries one scan reads in groups (repositories' own are not
 * read): a group that a user can fill with millions of empty files must
 * not hold the watcher for minutes.
 */
#define SCAN_MAX_ENTRIES (1 << 24)

#endif
