/*
 * metrics: .odbfs/metrics (see metrics.h). The figures are gathered into
 * rows, one per label set, then written family by family: the format
 * wants a family's samples together, under its HELP and TYPE.
 *
 *   a single mount     one row: repository="GITDIR", every figure
 *   a mount of many,   the root's row (root="ROOT": its own and its
 *   at its root        groups' counts, repositories, cache, nodes), then
 *                      roster_each(): a row per repository, counts and,
 *                      when open, its store's figures
 *   ... in one of its  the repository's row, and the mount's nodes in
 *   repositories       the root's row
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roster.h"
#include "metrics.h"
#include "stats.h"

/* The figures of one label set: repository="..." or root="...". */
struct row {
	const char *label;
	char *value;		/* malloc'd */
	uint64_t v[STAT_FIGURES];
	bool has[STAT_FIGURES];
};

struct rows {
	struct row *v;
	size_t n, alloc;
	bool failed;		/* out of memory */
};

/* A new row, zeroed, with nothing to show yet; NULL when out of memory. */
static struct row *
row_add(struct rows *t, const char *label, const char *value)
{
	struct row *r;

	if (t->n == t->alloc) {
		size_t na = t->alloc ? 2 * t->alloc : 8;
		struct row *grown = realloc(t->v, na * sizeof(*grown));

		if (!grown) {
			t->failed = true;
			return NULL;
		}
		t->v = grown;
		t->alloc = na;
	}
	r = &t->v[t->n];
	memset(r, 0, sizeof(*r));
	r->label = label;
	if (!(r->value = strdup(value))) {
		t->failed = true;
		return NULL;
	}
	t->n++;
	return r;
}

/* Move the figures from..to (inclusive) of *from to *to. */
static void
move_figures(struct row *from, struct row *to, int first, int last)
{
	for (int k = first; k <= last; k++) {
		to->v[k] = from->v[k];
		to->has[k] = from->has[k];
		from->has[k] = false;
	}
}

/* roster_each()'s: the root's counts, then a row per repository. */
static void
repository_row(void *arg, const char *gitdir,
    const _Atomic uint64_t *counters, struct odb *odb)
{
	struct rows *t = arg;
	struct row *r, *root;

	if (gitdir && !(r = row_add(t, "repository", gitdir)))
		return;
	root = &t->v[0];	/* after row_add(), which may move it */
	if (!gitdir)
		r = root;
	for (int k = 0; k < STAT_NR; k++) {
		r->v[k] = atomic_load_explicit(&counters[k],
		    memory_order_relaxed);
		r->has[k] = true;
	}
	if (!gitdir || !odb)
		return;
	stats_store(odb, r->v, r->has);
	/* One cache serves them all: the root shows it, once. */
	move_figures(r, root, STAT_CACHE_HITS, STAT_CACHE_MISSES);
}

/* The rows of fs's .odbfs/metrics, into t: see the top of the file. */
static void
gather(const struct odbfs *fs, struct rows *t)
{
	struct row *r, *root;

	if (!fs->forge) {
		if ((r = row_add(t, "repository", odb_gitdir(fs->odb))))
			stats_gather(fs, r->v, r->has);
		return;
	}
	if (!(root = row_add(t, "root", roster_root(fs))))
		return;
	stats_gather(fs, root->v, root->has);
	if (!fs->repo) {
		roster_each(fs, repository_row, t);
		return;
	}
	if (!fs->odb || !(r = row_add(t, "repository", odb_gitdir(fs->odb))))
		return;
	root = &t->v[0];
	move_figures(root, r, 0, STAT_CACHE_MISSES);
}

/*
 * The length of the UTF-8 sequence that starts s, if it is one the
 * format accepts (no overlong form, no surrogate, nothing past
 * U+10FFFF), else 0.
 */
static size_t
utf8_len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/* U+FFFD, the replacement character, in UTF-8. */
#define REPLACEMENT "\xef\xbf\xbd"

/*
 * A label's value, escaped as the format says (\\, \" and \n), and
 * valid UTF-8 as it requires, whatever bytes a path holds: a byte that
 * is not part of a character, and each byte of a U+FFFD the path itself
 * holds, becomes U+FFFD followed by the byte in two hex digits
 * ("bad\xff.git" shows as "bad\uFFFDFF.git"), so that two paths stay
 * two values.
 */
static void
put_value(FILE *f, const char *value)
{
	const unsigned char *s = (const unsigned char *)value;
	size_t n;

	while (*s) {
		n = utf8_len(s);
		if (n == 0 || (n == 3 && memcmp(s, REPLACEMENT, 3) == 0)) {
			for (size_t i = 0; i < (n ? n : 1); i++)
				fprintf(f, REPLACEMENT "%02X", s[i]);
			s += n ? n : 1;
			continue;
		}
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fwrite(s, 1, n, f);
		s += n;
	}
}

static void
put_family(FILE *f, const struct rows *t, int k)
{
	const struct stats_figure *fig = &stats_figures[k];
	const char *suffix = fig->counter ? "_total" : "";
	bool any = false;

	for (size_t i = 0; i < t->n; i++)
		any |= t->v[i].has[k];
	if (!any)
		return;
	fprintf(f, "# HELP odbfs_%s%s %s\n# TYPE odbfs_%s%s %s\n", fig->name,
	    suffix, fig->help, fig->name, suffix,
	    fig->counter ? "counter" : "gauge");
	for (size_t i = 0; i < t->n; i++) {
		if (!t->v[i].has[k])
			continue;
		fprintf(f, "odbfs_%s%s{%s=\"", fig->name, suffix,
		    t->v[i].label);
		put_value(f, t->v[i].value);
		fprintf(f, "\"} %llu\n", (unsigned long long)t->v[i].v[k]);
	}
}

char *
metrics_report(const struct odbfs *fs, size_t *len)
{
	struct rows t = { 0 };
	char *text = NULL;
	size_t cap = 0;
	FILE *f = NULL;

	gather(fs, &t);
	if (t.failed || !(f = open_memstream(&text, &cap)))
		goto out;
	for (int k = 0; k < STAT_FIGURES; k++)
		put_family(f, &t, k);
	if (fclose(f) != 0) {
		free(text);
		text = NULL;
	}
	*len = cap;
out:
	for (size_t i = 0; i < t.n; i++)
		free(t.v[i].value);
	free(t.v);
	return text;
}
