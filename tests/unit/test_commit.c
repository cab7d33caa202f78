/*
 * test_commit: commit headers parsed from what odbfs reads of them (the
 * bytes up to the blank line, not the message), and read through real
 * readers from objects git wrote.
 *
 * The parsing cases are written out below, in the shapes git writes
 * (gitformat-commit; a signed commit's gpgsig header as git commit -S
 * writes it, its continuation lines starting with a space, the empty one
 * a lone space) and in shapes it does not (no blank line, lines cut
 * short, too many parents). The read cases put a header at the cap and
 * one byte past it, in front of a small message and of one big enough to
 * be streamed (over READER_INMEM); and peel tags whose messages are as
 * big.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commit.h"
#include "odbstore/log.h"
#include "odbstore/odb.h"
#include "reader.h"
#include "unit.h"

#define TREE "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n"
#define P1 "parent 1111111111111111111111111111111111111111\n"
#define P2 "parent 2222222222222222222222222222222222222222\n"
#define P3 "parent 3333333333333333333333333333333333333333\n"
#define AUTHOR_V "A U Thor <author@example.com> 1700000000 +0000"
#define COMMITTER_V "C O Mitter <committer@example.com> 1700000100 +0100"
#define AUTHOR "author " AUTHOR_V "\n"
#define COMMITTER "committer " COMMITTER_V "\n"
#define GPGSIG "gpgsig -----BEGIN PGP SIGNATURE-----\n" \
	" \n" \
	" iHUEABYKAB0WIQRIXYvQxCb4mNYcRfCNR/fwmwi6/QUCZVNzmQAKCRCNR/fwmwi6\n" \
	" /Q7FAQDKVcUfqILTrWYGbkTsBdqlOo1HTDo7mVa3SLS7UYvDxgD+JbWGh3XUZ4Hs\n" \
	" =Xp3S\n" \
	" -----END PGP SIGNATURE-----\n"

struct parse_case {
	const char *name;
	const char *text;
	size_t len;		/* bytes of text given; 0: all of it */
	int ret;
	size_t nparents;
	const char *author;	/* NULL: none */
	const char *committer;
	long long time;
	long long header_len;	/* -1: up to the last blank line's LF */
	long long message_len;
};

/* What a case that must not parse expects. */
#define REFUSED -EFSCORRUPTED, 0, NULL, NULL, 0, 0, 0

static const struct parse_case parse_cases[] = {
	{ "a commit as git writes it", TREE P1 AUTHOR COMMITTER "\n"
	    "subject\n\nbody\n", 0, 0, 1, AUTHOR_V, COMMITTER_V, 1700000100,
	    -1, 14 },
	{ "a message without a newline at its end", TREE AUTHOR COMMITTER
	    "\nno newline", 0, 0, 0, AUTHOR_V, COMMITTER_V, 1700000100, -1,
	    10 },
	{ "an empty message", TREE AUTHOR COMMITTER "\n", 0, 0, 0, AUTHOR_V,
	    COMMITTER_V, 1700000100, -1, 0 },
	{ "a signed commit: the lone space of gpgsig is no blank line",
	    TREE P1 AUTHOR COMMITTER GPGSIG "\nsigned\n", 0, 0, 1, AUTHOR_V,
	    COMMITTER_V, 1700000100, -1, 7 },
	{ "an octopus merge", TREE P1 P2 P3 AUTHOR COMMITTER "\nm\n", 0, 0,
	    3, AUTHOR_V, COMMITTER_V, 1700000100, -1, 2 },
	{ "headers in the message are the message's", TREE AUTHOR COMMITTER
	    "\nauthor X <x@x> 5 +0000\ncommitter Y <y@y> 6 +0000\n", 0, 0, 0,
	    AUTHOR_V, COMMITTER_V, 1700000100, -1, 49 },
	{ "no blank line: no message", TREE AUTHOR COMMITTER, 0, 0, 0,
	    AUTHOR_V, COMMITTER_V, 1700000100,
	    sizeof(TREE AUTHOR COMMITTER) - 1, 0 },
	{ "a last line without its newline, the object's end: as git reads it",
	    TREE AUTHOR "committer C", 0, 0, 0, AUTHOR_V, "C", 0,
	    sizeof(TREE AUTHOR "committer C") - 1, 0 },
	{ "the last author wins, as before", TREE AUTHOR
	    "author B <b@b> 7 +0000\n" COMMITTER "\nm", 0, 0, 0,
	    "B <b@b> 7 +0000", COMMITTER_V, 1700000100, -1, 1 },
	{ "a committer time past 64 bits is 0", TREE
	    "committer C <c@c> 99999999999999999999 +0000\n\nm", 0, 0, 0, NULL,
	    "C <c@c> 99999999999999999999 +0000", 0, -1, 1 },
	{ "given up to the blank line", TREE P1 AUTHOR COMMITTER "\nmessage",
	    sizeof(TREE P1 AUTHOR COMMITTER "\n") - 1, 0, 1, AUTHOR_V,
	    COMMITTER_V, 1700000100, -1, 7 },
	{ "given short of the blank line", TREE P1 AUTHOR COMMITTER
	    "\nmessage", sizeof(TREE P1 AUTHOR COMMITTER) - 1, REFUSED },
	{ "no tree line", AUTHOR COMMITTER "\nm", 0, REFUSED },
	{ "a tree line that is no id", "tree 4b825dc642cb6eb9a060e54bf8d6"
	    "9288fbbfe3eX\n\nm", 0, REFUSED },
	{ "a tree line of a sha256 length", "tree 4b825dc642cb6eb9a060e54bf8"
	    "d69288fbbfe3e44b825dc642cb6eb9a060e54bf8d6\n\nm", 0,
	    REFUSED },
	{ "a parent line that is no id", TREE "parent 11111111111111111111111"
	    "1111111111111111\n\nm", 0, REFUSED },
	{ "a header line before the tree", AUTHOR TREE "\nm", 0,
	    REFUSED },
	{ "an empty object", "", 0, REFUSED },
};

static void
parse_table(void)
{
	for (size_t i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]);
	    i++) {
		const struct parse_case *t = &parse_cases[i];
		size_t size = strlen(t->text), len = t->len ? t->len : size;
		const char *blank = strstr(t->text, "\n\n");
		long long hlen = t->header_len;
		struct commit c;

		if (!check_int(commit_parse(&c, "test", (const unsigned char *)
		    t->text, len, size, 20), t->ret, "parse: %s", t->name))
			continue;
		if (t->ret < 0) {
			check(!c.parents && !c.author && !c.committer,
			    "parse: %s: nothing left to free", t->name);
			continue;
		}
		if (hlen < 0)
			hlen = blank - t->text + 1;
		check_int((long long)c.nparents, (long long)t->nparents,
		    "parse: %s: parents", t->name);
		check(!memcmp(c.tree, "\x4b\x82\x5d\xc6", 4),
		    "parse: %s: tree", t->name);
		check(t->author ? c.author && !strcmp(c.author, t->author) &&
		    c.author_len == strlen(t->author) : !c.author,
		    "parse: %s: author", t->name);
		check(t->committer ? c.committer && !strcmp(c.committer,
		    t->committer) && c.committer_len == strlen(t->committer) :
		    !c.committer, "parse: %s: committer", t->name);
		check_int(c.time, t->time, "parse: %s: time", t->name);
		check_int((long long)c.header_len, hlen,
		    "parse: %s: header length", t->name);
		check_int((long long)c.message_len, t->message_len,
		    "parse: %s: message length", t->name);
		if (t->nparents == 3)
			check(c.parents[0] == 0x11 && c.parents[20] == 0x22 &&
			    c.parents[40] == 0x33,
			    "parse: %s: parents in order", t->name);
		commit_release(&c);
	}
}

/* COMMIT_PARENTS_MAX parents parse; one more does not. */
static void
parse_parents(void)
{
	static const char tail[] = AUTHOR COMMITTER "\nm";
	size_t line = sizeof(P1) - 1, len;
	char *text = malloc(sizeof(TREE) + (COMMIT_PARENTS_MAX + 1) * line +
	    sizeof(tail));
	struct commit c;

	if (!text)
		return;
	for (int n = COMMIT_PARENTS_MAX; n <= COMMIT_PARENTS_MAX + 1; n++) {
		len = sizeof(TREE) - 1;
		memcpy(text, TREE, len);
		for (int i = 0; i < n; i++, len += line)
			memcpy(text + len, P1, line);
		memcpy(text + len, tail, sizeof(tail));
		len += sizeof(tail) - 1;
		if (n == COMMIT_PARENTS_MAX) {
			check_int(commit_parse(&c, "test", (unsigned char *)
			    text, len, len, 20), 0, "%d parents parse", n);
			check_int((long long)c.nparents, n, "all %d kept", n);
			commit_release(&c);
		} else {
			check_int(commit_parse(&c, "test", (unsigned char *)
			    text, len, len, 20), -EFSCORRUPTED,
			    "%d parents are too many", n);
		}
	}
	free(text);
}

/*
 * Objects written with git, each id in a file of its name: pad N prints
 * N bytes of one letter; mk NAME HEADERLEN TAIL MSGLEN writes a commit
 * whose header is HEADERLEN bytes (an x-pad header making up the rest),
 * followed by TAIL (a blank line, or nothing) and MSGLEN bytes of message.
 */
static const char setup[] =
	"set -e; cd \"$0\"; exec >/dev/null 2>&1\n"
	"export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@e GIT_COMMITTER_NAME=C\n"
	"export GIT_COMMITTER_EMAIL=c@e GIT_CONFIG_NOSYSTEM=1\n"
	"export GIT_AUTHOR_DATE='1700000000 +0000'\n"
	"export GIT_COMMITTER_DATE='1700000001 +0000'\n"
	"git init -q repo; cd repo\n"
	"t=$(git mktree </dev/null)\n"
	"pad() { head -c \"$1\" /dev/zero | tr '\\0' y; }\n"
	"mk() {\n"
	"  { printf 'tree %s\\nauthor A <a@e> 1700000000 +0000\\n' $t\n"
	"    printf 'committer C <c@e> 1700000001 +0000\\nx-pad '\n"
	"    pad $(($2 - 120)); printf '\\n'; printf \"$3\"; pad $4\n"
	"  } | git hash-object -t commit --literally -w --stdin >../$1\n"
	"}\n"
	"printf 'subject\\n\\nbody\\n' | git commit-tree $t >../small\n"
	"pad 9437184 | git commit-tree $t >../streamed\n"
	"mk atcap 1048576 '\\n' 10\n"
	"mk overcap 1048577 '\\n' 10\n"
	"mk atcap-streamed 1048576 '\\n' 9437184\n"
	"mk overcap-streamed 1048577 '\\n' 9437184\n"
	"mk noblank 4096 '' 0\n"
	"mk noblank-big 2097152 '' 0\n"
	"{ printf 'object %s\\ntype commit\\ntag t\\n' $(cat ../small)\n"
	"  printf 'tagger T <t@e> 1700000002 +0000\\n\\n'\n"
	"  pad 9437184\n"
	"} | git hash-object -t tag --literally -w --stdin >../tag\n"
	"{ printf 'object %s\\ntype tag\\ntag tt\\n' $(cat ../tag)\n"
	"  printf 'tagger T <t@e> 1700000002 +0000\\n\\n'\n"
	"  pad 9437184\n"
	"} | git hash-object -t tag --literally -w --stdin >../tagtag\n";

/* The id in the file dir/name. */
static bool
id_of(const char *dir, const char *name, unsigned char *id)
{
	char path[512], hex[OID_HEXSZ_MAX + 2] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "r"))) {
		if (!fgets(hex, sizeof(hex), f))
			hex[0] = 0;
		fclose(f);
	}
	hex[strcspn(hex, "\n")] = 0;
	return oid_parse_hex(id, hex, 20);
}

struct read_case {
	const char *name;	/* of the object, made by setup */
	int ret;
	bool streamed;		/* over READER_INMEM: read as a stream */
	long long header_len;
	long long message_len;
};

static const struct read_case read_cases[] = {
	{ "small", 0, false, 113, 14 },
	{ "streamed", 0, true, 113, 9437184 },
	{ "atcap", 0, false, COMMIT_HEADER_MAX, 10 },
	{ "overcap", -EFSCORRUPTED, false, 0, 0 },
	{ "atcap-streamed", 0, true, COMMIT_HEADER_MAX, 9437184 },
	{ "overcap-streamed", -EFSCORRUPTED, true, 0, 0 },
	{ "noblank", 0, false, 4096, 0 },
	{ "noblank-big", -EFSCORRUPTED, false, 0, 0 },
};

static void
read_table(struct odb *odb, const char *dir)
{
	for (size_t i = 0; i < sizeof(read_cases) / sizeof(read_cases[0]);
	    i++) {
		const struct read_case *t = &read_cases[i];
		unsigned char id[OID_RAWSZ_MAX], *buf = NULL;
		struct reader *r;
		struct commit c;
		size_t len;
		int ret;

		if (!check(id_of(dir, t->name, id), "%s: made", t->name) ||
		    !check_int(odb_reader_open(odb, id, &r), 0,
		    "%s: opens", t->name))
			continue;
		check(!reader_data(r) == t->streamed, "%s: %s", t->name,
		    t->streamed ? "streamed" : "in memory");
		ret = commit_header_read(r, "test", &buf, &len);
		if (ret == 0)
			ret = commit_parse(&c, "test", buf, len,
			    reader_info(r)->size, 20);
		if (check_int(ret, t->ret, "%s: header read and parsed",
		    t->name) && ret == 0) {
			check(len == c.header_len + 1 ||
			    (len == c.header_len && !c.message_len),
			    "%s: nothing read past the blank line", t->name);
			check_int((long long)c.header_len, t->header_len,
			    "%s: header length", t->name);
			check_int((long long)c.message_len, t->message_len,
			    "%s: message length", t->name);
			check(c.author && !strcmp(c.author,
			    "A <a@e> 1700000000 +0000") && c.time == 1700000001,
			    "%s: author and time", t->name);
			commit_release(&c);
		}
		free(buf);
		reader_close(r);
	}
}

/* Tags whose messages are streamed peel to the commit, tag of tag too. */
static void
peel(struct odb *odb, const char *dir)
{
	unsigned char small[OID_RAWSZ_MAX], id[OID_RAWSZ_MAX];
	unsigned char peeled[OID_RAWSZ_MAX];
	enum obj_type type = OBJ_NONE;

	if (!id_of(dir, "small", small))
		return;
	for (int i = 0; i < 2; i++) {
		const char *name = i ? "tagtag" : "tag";

		if (!check(id_of(dir, name, id), "%s: made", name))
			continue;
		check_int(odb_peel(odb, id, peeled, &type), 0, "%s: peels",
		    name);
		check(type == OBJ_COMMIT && !memcmp(peeled, small, 20),
		    "%s: to the commit", name);
	}
}

void
test_commit(void)
{
	char dir[] = "/tmp/odbfs-unit.XXXXXX", path[256];
	struct odb *odb = NULL;
	const char *why;

	parse_table();
	parse_parents();
	if (!mkdtemp(dir) || !check_int(unit_sh(setup, dir), 0,
	    "git made commits with headers at the cap and past it"))
		return;
	snprintf(path, sizeof(path), "%s/repo", dir);
	if (check_int(odb_open(path, &odb, &why), 0, "the repository opens")) {
		read_table(odb, dir);
		peel(odb, dir);
		odb_close(odb);
	}
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path) != 0)
		diag("could not remove %s", dir);
}
