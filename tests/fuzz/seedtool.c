/*
 * seedtool: the two things tests/fuzz/make-seeds.sh needs that git and the
 * shell do not do, written against zlib alone so that seeds do not depend
 * on the store code they are meant to test.
 *
 *   seedtool entry PACK OFFSET RAWSZ   inflate the data of the pack entry
 *                                      at OFFSET (for a delta: the delta)
 *   seedtool deflate                   zlib-compress stdin
 *
 * Output goes to stdout. Built and run by make-seeds.sh only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static unsigned char *
slurp(FILE *f, size_t *len)
{
	unsigned char *buf = NULL;
	size_t alloc = 0, n;

	*len = 0;
	do {
		if (*len == alloc) {
			alloc = alloc ? 2 * alloc : 65536;
			if (!(buf = realloc(buf, alloc))) {
				perror("seedtool");
				exit(1);
			}
		}
		n = fread(buf + *len, 1, alloc - *len, f);
		*len += n;
	} while (n > 0);
	return buf;
}

static int
entry(const char *path, unsigned long long off, size_t rawsz)
{
	unsigned char *pack, out[16384];
	size_t len, p = off;
	z_stream z = { 0 };
	unsigned type;
	FILE *f;
	int ret;

	if (!(f = fopen(path, "rb"))) {
		perror(path);
		return 1;
	}
	pack = slurp(f, &len);
	fclose(f);
	if (off >= len)
		return 1;
	type = (pack[p] >> 4) & 7;
	while (p < len && pack[p] & 0x80)
		p++;
	p++;
	if (type == 6) {
		while (p < len && pack[p] & 0x80)
			p++;
		p++;
	} else if (type == 7) {
		p += rawsz;
	}
	if (p >= len || inflateInit(&z) != Z_OK)
		return 1;
	z.next_in = pack + p;
	z.avail_in = (uInt)(len - p);
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		ret = inflate(&z, Z_NO_FLUSH);
		fwrite(out, 1, sizeof(out) - z.avail_out, stdout);
	} while (ret == Z_OK);
	inflateEnd(&z);
	free(pack);
	return ret == Z_STREAM_END ? 0 : 1;
}

static int
deflate_stdin(void)
{
	size_t len;
	unsigned char *in = slurp(stdin, &len);
	uLongf outlen = compressBound(len);
	unsigned char *out = malloc(outlen);

	if (!out || compress(out, &outlen, in, len) != Z_OK)
		return 1;
	fwrite(out, 1, outlen, stdout);
	free(in);
	free(out);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "entry"))
		return entry(argv[2], strtoull(argv[3], NULL, 10),
		    strtoul(argv[4], NULL, 10));
	if (argc == 2 && !strcmp(argv[1], "deflate"))
		return deflate_stdin();
	fprintf(stderr, "usage: seedtool entry PACK OFFSET RAWSZ | "
	    "seedtool deflate\n");
	return 2;
}
