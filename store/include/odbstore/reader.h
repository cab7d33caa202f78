/*
 * reader: an object opened for reading at any offset, as a FUSE open file
 * or a tool needs it.
 *
 * An object up to 8 MiB (READER_INMEM), or any deltified object, is
 * rebuilt once at open and served from memory. A larger whole object
 * (loose, or an undeltified pack entry) is inflated as it is read,
 * keeping a window of recent bytes so that reads slightly out of order
 * (the kernel's readahead on several threads) do not restart the stream;
 * memory stays bounded whatever the object's size. The stream can be inflated ahead of the
 * reads (reader_prefetch()).
 *
 * A reader keeps its pack (or loose file) mapped until reader_close(), so
 * it goes on reading correct bytes after git deletes the file.
 */
#ifndef ODBSTORE_READER_H
#define ODBSTORE_READER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "object.h"

#define READER_WINDOW ((size_t)4 << 20)
#define READER_CHUNK ((size_t)1 << 20)

struct reader;

const struct objinfo *reader_info(const struct reader *r);

/* The whole payload when it is held in memory, else NULL. */
const unsigned char *reader_data(const struct reader *r);

/*
 * Copy up to len bytes from offset off into buf; returns the count (short
 * only at the end of the object) or a negative error. Thread-safe.
 */
ssize_t reader_read(struct reader *r, void *buf, size_t len, uint64_t off);

/*
 * For a streamed object: inflate up to max more bytes, if the window has
 * not reached upto yet and has room without dropping what the latest
 * read may still want. Returns how many came (0: nothing to do, or no
 * room until a read moves on) or a negative error, which the reads then
 * return. Does nothing for a stream no read has started. Thread-safe, so
 * that another thread can inflate what the next read will want while the
 * last read's bytes are copied out.
 */
long reader_prefetch(struct reader *r, uint64_t upto, size_t max);

/*
 * The error a read of a streamed object met (its data corrupt, or its
 * file shrank under it), which every later read returns again; 0 while
 * there is none.
 */
int reader_error(struct reader *r);

/*
 * A reader is reference counted: reader_open() gives one reference,
 * reader_ref() takes another, and reader_close() drops one, freeing the
 * reader with the last. So a reply still being written from its buffer
 * keeps it alive while another thread closes the file.
 */
struct reader *reader_ref(struct reader *r);
void reader_close(struct reader *r);

#endif
