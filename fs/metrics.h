/*
 * metrics: .odbfs/metrics, the figures of .odbfs/stats (stats.h) in the
 * Prometheus text exposition format (version 0.0.4), for a scraper or
 * node_exporter's textfile collector.
 */
#ifndef ODBFS_METRICS_H
#define ODBFS_METRICS_H

#include <stddef.h>

#include "odbfs.h"

/*
 * .odbfs/metrics of fs: each figure .odbfs/stats of fs shows, as a family
 * odbfs_NAME (odbfs_NAME_total for a counter) with a HELP and a TYPE
 * line. A repository's series carry repository="its git directory"; in a
 * mount of many, the root's .odbfs/metrics has one per repository the
 * mount has shown, and the series of the mount as a whole (nodes, the
 * root's own operations...) carry root="the root" instead. Malloc'd,
 * *len bytes; NULL when out of memory.
 */
char *metrics_report(const struct odbfs *fs, size_t *len);

#endif
