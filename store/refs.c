/*
 * refs: the references list (struct refs), its memory and its readers;
 * git's rule for ref names (refname_ok()); and the files backend, which
 * reads loose refs, packed-refs and HEAD into the list (refs_load()).
 * Never on a lookup path. The reftable backend (reftable.c) builds the
 * same list with refname_ok() and refs_free(); which backend a
 * repository uses is asked by whoever holds its refs, not here.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file.h"
#include "log.h"
#include "map.h"
#include "refs.h"

/*
 * Loads that may begin again because packed-refs changed under them: git
 * pack-refs rewrites it several times a second at most.
 */
#define REFS_LOAD_PASSES 4

struct builder {
	struct ref *v;
	size_t n, alloc;
	size_t rawsz;
};

bool
refname_ok(const char *name)
{
	size_t len = strlen(name);
	const char *comp = name;

	if (!len || name[len - 1] == '/' || name[len - 1] == '.' ||
	    !strchr(name, '/') || !strcmp(name, "@"))
		return false;
	for (const char *p = name; ; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '/' || c == '\0') {
			size_t n = (size_t)(p - comp);

			if (n == 0 || comp[0] == '.' || (n >= 5 &&
			    !memcmp(p - 5, ".lock", 5)))
				return false;
			if (c == '\0')
				return true;
			comp = p + 1;
			continue;
		}
		if (c < 0x20 || c == 0x7f || strchr(" ~^:?*[\\", c))
			return false;
		if (c == '.' && p[1] == '.')
			return false;
		if (c == '@' && p[1] == '{')
			return false;
	}
}

static int
cmp_ref(const void *a, const void *b)
{
	return strcmp(((const struct ref *)a)->name,
	    ((const struct ref *)b)->name);
}

static int
add(struct builder *b, const char *name, const unsigned char *id)
{
	if (b->n == b->alloc) {
		size_t na = b->alloc ? 2 * b->alloc : 64;
		struct ref *grown = realloc(b->v, na * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		b->v = grown;
		b->alloc = na;
	}
	if (!(b->v[b->n].name = strdup(name)))
		return -ENOMEM;
	memcpy(b->v[b->n].id, id, b->rawsz);
	b->n++;
	return 0;
}

/* The id of a broken loose ref, which only its name matters for. */
static const unsigned char no_id[OID_RAWSZ_MAX];

static void
builder_free(struct builder *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->v[i].name);
	free(b->v);
}

/*
 * What a loose ref or HEAD holds, read as git's parse_loose_ref_contents()
 * does: "ref:", any white space and a ref name, trailing white space
 * dropped; or an object id followed by nothing or white space. Sets
 * *target (pointing into text, which is trimmed) for a symbolic ref, else
 * fills id. -EINVAL if it is neither.
 */
static int
ref_contents(char *text, size_t rawsz, char **target, unsigned char *id)
{
	size_t len = strlen(text);

	*target = NULL;
	if (!strncmp(text, "ref:", 4)) {
		for (text += 4; isspace((unsigned char)*text); text++)
			;
		for (len = strlen(text); len && isspace((unsigned char)
		    text[len - 1]); len--)
			;
		text[len] = '\0';
		if (!refname_ok(text))
			return -EINVAL;
		*target = text;
		return 0;
	}
	if (len < 2 * rawsz || (text[2 * rawsz] &&
	    !isspace((unsigned char)text[2 * rawsz])))
		return -EINVAL;
	text[2 * rawsz] = '\0';
	return oid_parse_hex(id, text, rawsz) ? 0 : -EINVAL;
}

/*
 * The id a loose ref file holds, following "ref: " up to depth. name is
 * the ref's name, for resolving symbolic refs against commondir.
 */
static int
resolve(const char *commondir, const char *name, size_t rawsz,
    const struct builder *packed, unsigned char *id, unsigned depth)
{
	char path[4096], link[4096], *text, *target;
	int ret;

	/* As git: at most REFS_MAX_SYMREF_DEPTH refs read, the last no symref. */
	if (depth >= REFS_MAX_SYMREF_DEPTH)
		return -ELOOP;
	snprintf(path, sizeof(path), "%s/%s", commondir, name);
	/*
	 * As git's files backend: a symlink to a name in refs/ is a
	 * symbolic ref, loose or packed; any other symlink is followed.
	 */
	if (repo_head_link(path, link, sizeof(link)) == 0 && refname_ok(link))
		return resolve(commondir, link, rawsz, packed, id, depth + 1);
	if ((ret = file_read(path, 4096, &text)) < 0) {
		/* Not loose: perhaps packed. */
		for (size_t i = 0; packed && i < packed->n; i++)
			if (!strcmp(packed->v[i].name, name)) {
				memcpy(id, packed->v[i].id, rawsz);
				return 0;
			}
		return ret;
	}
	if ((ret = ref_contents(text, rawsz, &target, id)) == 0 && target)
		ret = resolve(commondir, target, rawsz, packed, id, depth + 1);
	free(text);
	return ret;
}

/* Note that refs leave out path (bit what), logging it if prev did not. */
static void
left_out(struct refs *refs, const struct refs *prev, unsigned what,
    const char *path)
{
	if (!prev || !(prev->left_out & what))
		log_msg(LOGL_WARN, "%s: not a regular file: ignored", path);
	refs->left_out |= what;
}

/* One line of packed-refs at offset off, NUL-terminated, into b. */
static int
packed_line(struct builder *b, char *line, const char *path, size_t off)
{
	unsigned char id[OID_RAWSZ_MAX];
	bool ok;

	if (line[0] == '#' || line[0] == '^' || !line[0])
		return 0;
	ok = strlen(line) >= 2 * b->rawsz + 2 && line[2 * b->rawsz] == ' ';
	if (ok) {
		line[2 * b->rawsz] = '\0';
		ok = oid_parse_hex(id, line, b->rawsz);
	}
	/* git dies of such a line; the others still serve here. */
	if (!ok) {
		log_once(LOGL_WARN, "%s: malformed line at offset %zu: ignored",
		    path, off);
		return 0;
	}
	/* Said once for the name, not at every reload. */
	if (!refname_ok(line + 2 * b->rawsz + 1)) {
		log_once(LOGL_WARN, "%s: ref name not shown: %s", path,
		    line + 2 * b->rawsz + 1);
		return 0;
	}
	return add(b, line + 2 * b->rawsz + 1, id);
}

/*
 * packed-refs, mapped: a file of gigabytes, sparse or not, costs only the
 * lines read, not a copy of it in memory. A page that goes missing under
 * the read reads as zeros (map.h), which stop it as a NUL byte does.
 */
static int
read_packed(const struct repo *repo, struct refs *refs,
    const struct refs *prev, struct builder *b)
{
	char path[4096], *line;
	const char *at, *end, *nl;
	struct map m = { .slot = -1 };
	struct stat st;
	size_t room;
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/packed-refs", repo->commondir);
	/*
	 * No packed-refs is normal; one that cannot be read is an error. One
	 * that is not a file (git dies on a directory, hangs on a FIFO) is
	 * left out, so that the loose refs stay in view and new ones show.
	 * O_NONBLOCK: opening a FIFO must not wait for a writer.
	 */
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY |
	    O_CLOEXEC)) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &st) < 0)
		ret = -errno;
	else if (!S_ISREG(st.st_mode))
		left_out(refs, prev, REFS_LEFT_OUT_PACKED, path);
	else if (st.st_size > 0)
		ret = map_open(&m, fd, &st);
	close(fd);
	if (ret < 0 || !m.base)
		return ret;
	if (!(line = malloc(PACKED_LINE_MAX + 1))) {
		map_close(&m);
		return -ENOMEM;
	}
	for (at = (const char *)m.base, end = at + m.size; at < end &&
	    ret == 0; at = nl ? nl + 1 : end) {
		size_t off = (size_t)(at - (const char *)m.base), len;

		room = (size_t)(end - at) < PACKED_LINE_MAX + 1 ?
		    (size_t)(end - at) : PACKED_LINE_MAX + 1;
		nl = memchr(at, '\n', room);
		len = nl ? (size_t)(nl - at) : room;
		if (memchr(at, '\0', len)) {
			log_once(LOGL_WARN, "%s: NUL byte in the line at offset "
			    "%zu: the rest left out", path, off);
			break;
		}
		if (len > PACKED_LINE_MAX) {
			log_once(LOGL_WARN, "%s: line longer than %d bytes at "
			    "offset %zu: the rest left out", path,
			    PACKED_LINE_MAX, off);
			break;
		}
		memcpy(line, at, len);
		line[len] = '\0';
		ret = packed_line(b, line, path, off);
	}
	free(line);
	map_close(&m);
	return ret;
}

/*
 * Walk commondir/rel (a directory under refs/) for loose refs, into b;
 * those that are there but resolve to nothing go to broken: a loose ref
 * hides the packed one of its name, broken or not, as in git.
 */
static int
walk(const struct repo *repo, const char *rel, struct builder *b,
    struct builder *broken, const struct builder *packed, unsigned depth)
{
	char path[8192], child[4096];
	unsigned char id[OID_RAWSZ_MAX];
	struct dirent *de;
	DIR *d;
	int ret = 0;

	if (depth > 64)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", repo->commondir, rel);
	if (!(d = opendir(path)))
		return 0;
	while (ret == 0 && (de = readdir(d))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if ((size_t)snprintf(child, sizeof(child), "%s/%s", rel,
		    de->d_name) >= sizeof(child))
			continue;
		snprintf(path, sizeof(path), "%s/%s", repo->commondir, child);
		if (lstat(path, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			ret = walk(repo, child, b, broken, packed, depth + 1);
			continue;
		}
		/*
		 * git lists a symlink whose target, followed from where the
		 * link is, is a file; the one to "refs/heads/x" it lists only
		 * where that path exists beside the link.
		 */
		if (S_ISLNK(st.st_mode) && stat(path, &st) < 0)
			continue;
		if (!S_ISREG(st.st_mode))
			continue;
		if (!refname_ok(child)) {
			if (!strstr(child, ".lock"))
				log_once(LOGL_WARN, "%s: ref name not shown",
				    path);
			continue;
		}
		switch (resolve(repo->commondir, child, b->rawsz, packed, id,
		    0)) {
		case 0:
			ret = add(b, child, id);
			continue;
		case -EINVAL:
			/*
			 * The reftable backend's placeholder, which git refs
			 * migrate writes before the config names the backend:
			 * no ref, and nothing wrong.
			 */
			if (!strcmp(child, "refs/heads"))
				break;
			/* As git: "ignoring broken ref"; once, not per reload. */
			log_once(LOGL_WARN, "%s: broken ref (neither an id nor "
			    "'ref: NAME' at offset 0): not shown", path);
			break;
		case -ELOOP:
			log_once(LOGL_WARN, "%s: symbolic refs nested deeper "
			    "than %d: not shown", path,
			    REFS_MAX_SYMREF_DEPTH - 1);
			break;
		case -ENOENT:
			/* Gone since readdir() (git pack-refs), or dangling. */
			if (lstat(path, &st) < 0)
				continue;
			log_once(LOGL_WARN, "%s: dangling symbolic ref: not "
			    "shown", path);
			break;
		default:
			continue;
		}
		ret = add(broken, child, no_id);
	}
	closedir(d);
	return ret;
}

/* One pass of refs_load(). */
static int
load(const struct repo *repo, const struct refs *prev, struct refs **out)
{
	struct builder packed = { .rawsz = repo->rawsz };
	struct builder b = { .rawsz = repo->rawsz };
	struct builder broken = { .rawsz = repo->rawsz };
	struct refs *refs;
	char path[4096], link[4096], *text;
	size_t n = 0;
	int ret;

	*out = NULL;
	if (!(refs = calloc(1, sizeof(*refs))))
		return -ENOMEM;
	if ((ret = read_packed(repo, refs, prev, &packed)) < 0 ||
	    (ret = walk(repo, "refs", &b, &broken, &packed, 0)) < 0)
		goto fail;
	if (broken.n)
		qsort(broken.v, broken.n, sizeof(*broken.v), cmp_ref);
	/* Packed refs that no loose ref overrides. */
	if (b.n)	/* qsort must not see NULL, even for no elements */
		qsort(b.v, b.n, sizeof(*b.v), cmp_ref);
	for (size_t i = 0, loose = b.n; i < packed.n && ret == 0; i++)
		if ((!loose || !bsearch(&packed.v[i], b.v, loose, sizeof(*b.v),
		    cmp_ref)) && (!broken.n || !bsearch(&packed.v[i], broken.v,
		    broken.n, sizeof(*broken.v), cmp_ref)))
			ret = add(&b, packed.v[i].name, packed.v[i].id);
	if (ret < 0)
		goto fail;
	if (b.n)
		qsort(b.v, b.n, sizeof(*b.v), cmp_ref);
	for (size_t i = 0; i < b.n; i++) {
		if (n && !strcmp(b.v[n - 1].name, b.v[i].name)) {
			free(b.v[i].name);
			continue;
		}
		b.v[n++] = b.v[i];
	}
	/* At its size: a mount of many holds the refs of each open. */
	if (n && n < b.alloc) {
		struct ref *fit = realloc(b.v, n * sizeof(*fit));

		if (fit)
			b.v = fit;
	}
	refs->v = b.v;
	refs->n = n;
	b.v = NULL;
	snprintf(path, sizeof(path), "%s/HEAD", repo->gitdir);
	/*
	 * As git's files backend: a symlink to a name in refs/ is a symbolic
	 * ref, whether the ref is loose or packed; any other is followed.
	 */
	if (repo_head_link(path, link, sizeof(link)) == 0 && refname_ok(link))
		refs->head_target = strdup(link);
	else if ((ret = file_read(path, 4096, &text)) == 0) {
		char *target;

		if (ref_contents(text, repo->rawsz, &target,
		    refs->head_id) == 0) {
			if (target)
				refs->head_target = strdup(target);
			else
				refs->head_detached = true;
		}
		free(text);
	} else if (ret == -ENOTREG) {
		left_out(refs, prev, REFS_LEFT_OUT_HEAD, path);
	}
	builder_free(&packed);
	builder_free(&broken);
	*out = refs;
	return 0;
fail:
	for (size_t i = 0; i < b.n; i++)
		free(b.v[i].name);
	free(b.v);
	builder_free(&packed);
	builder_free(&broken);
	free(refs);
	return ret;
}

/* Which packed-refs file is there now: zeroes if none. */
static struct fileid
packed_id(const struct repo *repo)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/packed-refs", repo->commondir);
	if (lstat(path, &st) < 0)
		memset(&st, 0, sizeof(st));
	return fileid_of(&st);
}

/*
 * git pack-refs writes the new packed-refs, then deletes the loose refs it
 * now holds: a load that read the old packed-refs and then found the
 * loose refs gone would lose them. So the load begins again when
 * packed-refs changed while it ran (up to REFS_LOAD_PASSES times).
 */
int
refs_load(const struct repo *repo, const struct refs *prev,
    struct refs **out)
{
	for (int pass = 1;; pass++) {
		struct fileid before = packed_id(repo), after;
		int ret = load(repo, prev, out);

		if (ret < 0 || pass == REFS_LOAD_PASSES)
			return ret;
		after = packed_id(repo);
		if (fileid_same(&before, &after))
			return 0;
		refs_free(*out);
		*out = NULL;
	}
}

void
refs_free(struct refs *refs)
{
	if (!refs)
		return;
	for (size_t i = 0; i < refs->n; i++)
		free(refs->v[i].name);
	free(refs->v);
	free(refs->head_target);
	free(refs);
}

long
refs_find(const struct refs *refs, const char *name)
{
	size_t lo = 0, hi = refs->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(refs->v[mid].name, name);

		if (!c)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

long
refs_first_under(const struct refs *refs, const char *prefix)
{
	size_t lo = 0, hi = refs->n, plen = strlen(prefix);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(refs->v[mid].name, prefix) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < refs->n && !strncmp(refs->v[lo].name, prefix, plen))
		return (long)lo;
	return -1;
}

size_t
refs_count(const struct refs *refs)
{
	return refs->n;
}

const char *
refs_name(const struct refs *refs, size_t i)
{
	return refs->v[i].name;
}

const unsigned char *
refs_id(const struct refs *refs, size_t i)
{
	return refs->v[i].id;
}

const char *
refs_head_target(const struct refs *refs)
{
	return refs->head_target;
}

const unsigned char *
refs_head_id(const struct refs *refs)
{
	return refs->head_detached ? refs->head_id : NULL;
}
