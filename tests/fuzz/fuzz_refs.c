/*
 * fuzz_refs: reference names and packed-refs (refname_ok() and refs_load()
 * in store/refs.c). The input is a packed-refs file:
 *
 *   packed-refs := ("#" comment LF)? (hex SP refname LF ("^" hex LF)?)*
 *
 * refs_load() reads from disk, so the first input sets up a sha1
 * repository in a temporary directory (removed at exit): HEAD pointing at
 * refs/heads/main, which is a loose ref. Every input is written there as
 * packed-refs and loaded. The result must be sorted without duplicates,
 * hold only names refname_ok() accepts, let refs_find() find each, keep
 * the loose ref over a packed one, and hold as many refs as a plain
 * reading of the file (below) finds, up to a line that ends it (a NUL
 * byte, or longer than PACKED_LINE_MAX).
 *
 * Every line of the input, and the input itself, is also judged as a name
 * by refname_ok() and by the rules of git-check-ref-format(1) as written
 * out below; they must agree.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"
#include "refs.h"
#include "repo.h"

#define LOOSE_ID "0123456789abcdef0123456789abcdef01234567"

static char dir[] = "/tmp/odbfs-fuzz-refs.XXXXXX";
static char packed_path[sizeof(dir) + 32];
static struct repo repo;

static void
put(const char *rel, const void *buf, size_t len)
{
	char path[sizeof(dir) + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	if (!(f = fopen(path, "wb")) || fwrite(buf, 1, len, f) != len ||
	    fclose(f) != 0) {
		perror(path);
		abort();
	}
}

static void
cleanup(void)
{
	static const char *const paths[] = { "packed-refs",
	    "refs/heads/main", "HEAD", "refs/heads", "refs", "" };
	char path[sizeof(dir) + 64];

	for (size_t i = 0; i < sizeof(paths) / sizeof(*paths); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, paths[i]);
		(void)remove(path);
	}
}

static void
setup(void)
{
	char path[sizeof(dir) + 64];

	if (repo.gitdir)
		return;
	if (!mkdtemp(dir)) {
		perror(dir);
		abort();
	}
	atexit(cleanup);
	snprintf(path, sizeof(path), "%s/refs", dir);
	(void)mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/refs/heads", dir);
	(void)mkdir(path, 0700);
	put("HEAD", "ref: refs/heads/main\n", 21);
	put("refs/heads/main", LOOSE_ID "\n", 41);
	snprintf(packed_path, sizeof(packed_path), "%s/packed-refs", dir);
	repo.gitdir = dir;
	repo.commondir = dir;
	repo.format = "sha1";
	repo.rawsz = 20;
}

/* git-check-ref-format(1), rules 1 to 10, without --allow-onelevel. */
static bool
ref_refname_ok(const char *name)
{
	size_t len = strlen(name);
	const char *comp = name;

	if (len == 0 || !strcmp(name, "@") || !strchr(name, '/'))
		return false;			/* 2, 9 */
	if (name[0] == '/' || name[len - 1] == '/' || strstr(name, "//"))
		return false;			/* 6 */
	if (name[len - 1] == '.' || strstr(name, "..") || strstr(name, "@{"))
		return false;			/* 7, 3, 8 */
	for (const char *p = name; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f ||
		    strchr(" ~^:?*[\\", *p))
			return false;		/* 4, 5, 10 */
	for (;;) {				/* 1 */
		const char *slash = strchr(comp, '/');
		size_t n = slash ? (size_t)(slash - comp) : strlen(comp);

		if (comp[0] == '.' || (n >= 5 &&
		    !memcmp(comp + n - 5, ".lock", 5)))
			return false;
		if (!slash)
			return true;
		comp = slash + 1;
	}
}

static bool
lower_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * How many refs refs_load() must show when text (NUL-terminated; its lines
 * are cut in place) is packed-refs and refs/heads/main is loose.
 */
static size_t
expected(char *text, size_t size)
{
	char **names = malloc((size / 42 + 2) * sizeof(*names));
	size_t n = 0, distinct = 0;
	bool has_main = false;

	if (!names)
		abort();
	for (char *line = text, *next; line; line = next) {
		char *lf = strchr(line, '\n');

		next = lf ? lf + 1 : NULL;
		if (lf)
			*lf = '\0';
		if (strlen(line) < 42 || line[40] != ' ' ||
		    !lower_hex(line, 40) || !ref_refname_ok(line + 41))
			continue;
		names[n++] = line + 41;
		has_main |= !strcmp(line + 41, "refs/heads/main");
	}
	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || strcmp(names[i - 1], names[i]))
			distinct++;
	free(names);
	return distinct + !has_main;
}

static void
load(const uint8_t *data, size_t size)
{
	struct refs *refs = NULL;
	char *text;
	long main_at;
	int ret;

	put("packed-refs", data, size);
	ret = refs_load(&repo, NULL, &refs);
	if (ret < 0) {
		FUZZ_CHECK(ret == -ENOMEM && refs == NULL);
		return;
	}
	for (size_t i = 0; i < refs->n; i++) {
		FUZZ_CHECK(refname_ok(refs->v[i].name));
		FUZZ_CHECK(i == 0 ||
		    strcmp(refs->v[i - 1].name, refs->v[i].name) < 0);
		FUZZ_CHECK(refs_find(refs, refs->v[i].name) == (long)i);
	}
	main_at = refs_find(refs, "refs/heads/main");
	FUZZ_CHECK(main_at >= 0);
	FUZZ_CHECK(!memcmp(refs->v[main_at].id,
	    "\x01\x23\x45\x67\x89\xab\xcd\xef\x01\x23\x45\x67\x89\xab\xcd\xef"
	    "\x01\x23\x45\x67", 20));
	FUZZ_CHECK(refs->head_target &&
	    !strcmp(refs->head_target, "refs/heads/main"));
	FUZZ_CHECK(refs_first_under(refs, "refs/") >= 0);

	/*
	 * The file as refs_load() reads it: its lines up to the first that
	 * holds a NUL or is longer than PACKED_LINE_MAX, which ends it.
	 */
	for (size_t at = 0, len; at < size; at += len + 1) {
		const uint8_t *lf = memchr(data + at, '\n', size - at);

		len = lf ? (size_t)(lf - data - at) : size - at;
		if (memchr(data + at, '\0', len) || len > PACKED_LINE_MAX) {
			size = at;
			break;
		}
	}
	if (!(text = malloc(size + 2)))
		abort();
	memcpy(text, data, size);
	text[size] = text[size + 1] = '\0';
	FUZZ_CHECK(refs->n == expected(text, size));
	free(text);
	refs_free(refs);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	fuzz_quiet();
	setup();
	if (!(s = malloc(size + 1)))
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	FUZZ_CHECK(refname_ok(s) == ref_refname_ok(s));
	for (char *line = s, *lf; ; line = lf + 1) {
		if ((lf = strchr(line, '\n')))
			*lf = '\0';
		FUZZ_CHECK(refname_ok(line) == ref_refname_ok(line));
		if (!lf)
			break;
	}
	free(s);
	load(data, size);
	return 0;
}
