/*
 * odbfs-cat: git cat-file over store/ alone, without mounting anything.
 * It lets the store be tested and measured directly against git:
 *
 *   odbfs-cat [-t | -s | -e] REPO ID
 *   odbfs-cat --batch-check REPO < ids
 *   odbfs-cat --batch REPO < ids
 *   odbfs-cat --verify REPO
 *
 * Batch output is byte for byte what git cat-file prints for full ids:
 * "<id> <type> <size>\n", with --batch the payload and "\n" after it, and
 * "<input> missing\n" for an id that is not there (or not a full id).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "odbstore/log.h"
#include "odbstore/odb.h"
#include "odbstore/oid.h"

#ifndef ODBFS_VERSION
#define ODBFS_VERSION "unknown"
#endif

enum mode {
	M_PAYLOAD, M_TYPE, M_SIZE, M_EXISTS,
	M_BATCH_CHECK, M_BATCH, M_VERIFY	/* these take REPO alone */
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: odbfs-cat [-t | -s | -e] REPO ID\n"
	    "       odbfs-cat --batch-check REPO < ids\n"
	    "       odbfs-cat --batch REPO < ids\n"
	    "       odbfs-cat --verify REPO\n");
}

/* Write the payload through a reader, in large chunks. */
static int
write_payload(struct reader *r, FILE *out)
{
	const struct objinfo *info = reader_info(r);
	const unsigned char *data = reader_data(r);
	static unsigned char buf[READER_CHUNK];
	uint64_t off = 0;
	ssize_t n;

	if (data)
		return fwrite(data, 1, info->size, out) == info->size ? 0 :
		    -EIO;
	while (off < info->size) {
		if ((n = reader_read(r, buf, sizeof(buf), off)) <= 0)
			return n < 0 ? (int)n : -EIO;
		if (fwrite(buf, 1, (size_t)n, out) != (size_t)n)
			return -EIO;
		off += (uint64_t)n;
	}
	return 0;
}

static void
quiet(enum log_level level, const char *msg)
{
	(void)level;
	(void)msg;
}

static void
fail(const char *what, int err)
{
	fprintf(stderr, "odbfs-cat: %s: %s\n", what,
	    err == -ENOENT ? "no such object" :
	    err == -EFSCORRUPTED ? "object is corrupt" : strerror(-err));
}

static int
batch(struct odb *odb, bool contents)
{
	size_t rawsz = odb_rawsz(odb), cap = 0;
	unsigned char raw[OID_RAWSZ_MAX];
	char *line = NULL;
	ssize_t len;
	int ret = 0;

	while ((len = getline(&line, &cap, stdin)) >= 0) {
		struct reader *r = NULL;
		const struct objinfo *info = NULL;
		struct objinfo one;

		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		if ((size_t)len != 2 * rawsz || !oid_parse_hex(raw, line,
		    rawsz) || !odb_has(odb, raw)) {
			printf("%s missing\n", line);
			continue;
		}
		if (contents) {
			ret = odb_reader_open(odb, raw, &r);
		} else {
			ret = odb_info(odb, raw, &one);
			info = &one;
		}
		if (ret < 0) {
			fail(line, ret);
			break;
		}
		if (r)
			info = reader_info(r);
		printf("%s %s %llu\n", line, object_type_name(info->type),
		    (unsigned long long)info->size);
		if (r) {
			ret = write_payload(r, stdout);
			reader_close(r);
			if (ret < 0) {
				fail(line, ret);
				break;
			}
			putchar('\n');
		}
	}
	free(line);
	if (fflush(stdout) == EOF && ret == 0)
		ret = -EIO;
	return ret < 0 ? 1 : 0;
}

/*
 * Read every object and check it hashes to its id, as git fsck checks
 * objects (not connectivity). One line on stderr per bad object.
 */
static int
verify_all(struct odb *odb)
{
	size_t rawsz = odb_rawsz(odb), checked = 0, bad = 0;
	char hex[OID_HEXSZ_MAX + 1];

	odb_set_verify(odb, true);
	for (unsigned b = 0; b < 256; b++) {
		unsigned char *ids;
		size_t nr;

		if (odb_list(odb, b, &ids, &nr) < 0)
			return 2;
		for (size_t i = 0; i < nr; i++) {
			struct reader *r;
			int ret = odb_reader_open(odb, ids + i * rawsz, &r);

			checked++;
			if (ret == 0) {
				reader_close(r);
				continue;
			}
			bad++;
			oid_to_hex(hex, ids + i * rawsz, rawsz);
			fprintf(stderr, "odbfs-cat: %s: %s\n", hex,
			    ret == -EFSCORRUPTED ? log_last() :
			    strerror(-ret));
		}
		free(ids);
	}
	printf("%zu objects checked, %zu corrupt\n", checked, bad);
	return bad ? 1 : 0;
}

static int
single(struct odb *odb, enum mode mode, const char *hex)
{
	size_t rawsz = odb_rawsz(odb);
	unsigned char raw[OID_RAWSZ_MAX];
	struct objinfo info;
	struct reader *r;
	int ret;

	if (strlen(hex) != 2 * rawsz || !oid_parse_hex(raw, hex, rawsz)) {
		fprintf(stderr, "odbfs-cat: %s: not a full %s object id\n",
		    hex, odb_format(odb));
		return 2;
	}
	if (mode == M_EXISTS)
		return odb_has(odb, raw) ? 0 : 1;
	if (mode == M_PAYLOAD) {
		if ((ret = odb_reader_open(odb, raw, &r)) == 0) {
			ret = write_payload(r, stdout);
			reader_close(r);
		}
	} else if ((ret = odb_info(odb, raw, &info)) == 0) {
		if (mode == M_TYPE)
			printf("%s\n", object_type_name(info.type));
		else
			printf("%llu\n", (unsigned long long)info.size);
	}
	if (fflush(stdout) == EOF && ret == 0)
		ret = -EIO;
	if (ret < 0) {
		fail(hex, ret);
		return 1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	enum mode mode = M_PAYLOAD;
	struct odb *odb;
	const char *why;
	int argi = 1, ret;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1],
	    "--help"))) {
		usage(stdout);
		return 0;
	}
	if (argc == 2 && (!strcmp(argv[1], "-V") || !strcmp(argv[1],
	    "--version"))) {
		printf("odbfs-cat %s\n", ODBFS_VERSION);
		return 0;
	}
	if (argi < argc && argv[argi][0] == '-') {
		const char *o = argv[argi++];

		if (!strcmp(o, "-t"))
			mode = M_TYPE;
		else if (!strcmp(o, "-s"))
			mode = M_SIZE;
		else if (!strcmp(o, "-e"))
			mode = M_EXISTS;
		else if (!strcmp(o, "--batch-check"))
			mode = M_BATCH_CHECK;
		else if (!strcmp(o, "--batch"))
			mode = M_BATCH;
		else if (!strcmp(o, "--verify"))
			mode = M_VERIFY;
		else {
			fprintf(stderr, "odbfs-cat: unknown option %s\n", o);
			usage(stderr);
			return 2;
		}
	}
	if (argc - argi != (mode >= M_BATCH_CHECK ? 1 : 2)) {
		usage(stderr);
		return 2;
	}
	if (odb_open(argv[argi], &odb, &why) < 0) {
		fprintf(stderr, "odbfs-cat: %s: %s\n", argv[argi], why);
		return 2;
	}
	if (mode == M_VERIFY) {
		/* The reason is in each line; keep the log's copy quiet. */
		log_set_sink(quiet, LOGL_ERROR);
		ret = verify_all(odb);
	} else if (mode >= M_BATCH_CHECK) {
		static char obuf[1 << 16];

		setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
		ret = batch(odb, mode == M_BATCH);
	} else {
		ret = single(odb, mode, argv[argi + 1]);
	}
	odb_close(odb);
	return ret;
}
