/*
 * map: a file that shrinks under its mapping. Bytes still in the file
 * read as they were; a read of a page past the new end reads zeros rather
 * than killing the process with SIGBUS, and the mapping says which byte
 * went first. Other mappings are untouched, and slots are reused.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "map.h"
#include "unit.h"

#define SIZE (64 * 1024)

/* A file of SIZE bytes, byte i being i % 251 + 1 (never 0); its fd. */
static int
pattern_file(char *path)
{
	unsigned char buf[SIZE];
	int fd = mkstemp(path);

	for (size_t i = 0; i < SIZE; i++)
		buf[i] = (unsigned char)(i % 251 + 1);
	if (fd < 0 || write(fd, buf, SIZE) != SIZE)
		return -1;
	return fd;
}

static bool
open_map(struct map *m, int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && map_open(m, fd, &st) == 0;
}

void
test_map(void)
{
	char path[] = "/tmp/odbfs-map-XXXXXX", other[] = "/tmp/odbfs-map-XXXXXX";
	struct map m, n;
	volatile const unsigned char *p;
	uint64_t off = 0;
	bool same = true;
	int fd = pattern_file(path), fd2 = pattern_file(other), ret = 0;

	if (!check(fd >= 0 && fd2 >= 0, "map: temporary files written"))
		return;
	check(open_map(&m, fd) && open_map(&n, fd2), "map: two files mapped");
	check(!map_shrank(&m, &off), "map: a whole file has not shrunk");
	check(ftruncate(fd, 20000) == 0, "map: the file cut to 20000 bytes");
	p = m.base;
	for (size_t i = 0; i < 20000; i++)
		same &= p[i] == (unsigned char)(i % 251 + 1);
	check(same, "map: bytes still in the file read as they were");
	check(!map_shrank(&m, NULL),
	    "map: the rest of the last page is no fault");
	check(p[24576 + 7] == 0, "map: a page past the end reads zeros");
	check(map_shrank(&m, &off), "map: and the mapping says it shrank");
	check_u64(off, 24576 + 7, "map: at the first byte that went missing");
	check(p[60000] == 0 && map_shrank(&m, &off) && off == 24576 + 7,
	    "map: a later fault leaves the first offset");
	check(p[24576 + 8] == 0, "map: the patched page reads zeros again");
	check(!map_shrank(&n, NULL) && n.base[SIZE - 1] == (SIZE - 1) % 251 + 1,
	    "map: another file's mapping is untouched");
	map_close(&m);
	check(m.base == NULL && !map_shrank(&m, NULL),
	    "map: a closed map says nothing");
	for (int i = 0; i < 3000 && ret == 0; i++) {
		struct map k;
		struct stat st;

		if ((ret = fstat(fd2, &st)) == 0 &&
		    (ret = map_open(&k, fd2, &st)) == 0)
			map_close(&k);
	}
	check_int(ret, 0, "map: 3000 maps opened and closed in turn");
	map_close(&n);
	close(fd);
	close(fd2);
	unlink(path);
	unlink(other);
}
