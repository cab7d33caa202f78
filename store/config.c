/*
 * config: the repository's config files, as far as the store reads them:
 * git-config(1)'s syntax as git's config.c parses it (parse_config()),
 * include.path followed for what git refuses in included files
 * (config_follow()), and what the config says of the repository's format
 * (config_read_format(): the object format, the ref backend; format
 * versions and extensions git refuses are refused). Read when a
 * repository is opened, and for the ref backend whenever its refs are
 * read again; never on a lookup path.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config.h"
#include "file.h"
#include "oid.h"
/*
 * A variable of a config file as parse_config() hands it on: key is
 * "section.name" or "section.subsection.name", section and name in lower
 * case; value is NULL for a bare name, which git reads as true.
 */
typedef int config_fn(void *ctx, const char *key, const char *value);

/* A config file larger is refused: git reads any, we read it whole. */
#define CONFIG_MAX (16 << 20)

/*
 * A config file being parsed, as git's config.c reads it: "\r\n" reads as
 * "\n", and the end as one more "\n" (eof set).
 */
struct config_src {
	char *p, *end;
	unsigned line;		/* of the last character read */
	bool eof;
};

static int
config_char(struct config_src *s)
{
	int c;

	if (s->p == s->end) {
		s->eof = true;
		return '\n';
	}
	c = (unsigned char)*s->p++;
	if (c == '\r' && s->p < s->end && *s->p == '\n')
		c = (unsigned char)*s->p++;
	if (c == '\n')
		s->line++;
	return c;
}

static bool
config_keychar(int c)
{
	return isalnum(c) || c == '-';
}

/*
 * The name in a section header, after its '[', into out: "section" or
 * "section.subsection", the section in lower case (git's get_base_var()).
 * Returns -1 if the header is malformed.
 */
static int
config_section(struct config_src *s, char *out, size_t size)
{
	size_t n = 0;
	int c;

	for (;;) {
		c = config_char(s);
		if (c == '\n')
			goto bad;
		if (c == ']')
			break;
		if (isspace(c)) {
			/* [section "subsection"], with \ quoting a character */
			do
				c = config_char(s);
			while (c != '\n' && isspace(c));
			if (c != '"')
				goto bad;
			if (n + 1 < size)
				out[n++] = '.';
			while ((c = config_char(s)) != '"') {
				if (c == '\\')
					c = config_char(s);
				if (c == '\n')
					goto bad;
				if (n + 1 < size)
					out[n++] = (char)c;
			}
			/* git counts the line ended here as the next one. */
			if (config_char(s) != ']')
				return -1;
			break;
		}
		if (!config_keychar(c) && c != '.')
			return -1;
		if (n + 1 < size)
			out[n++] = (char)tolower(c);
	}
	out[n] = '\0';
	return n ? 0 : -1;
bad:
	/* A line cut short is bad on its own line, not the next one. */
	s->line -= c == '\n' && !s->eof;
	return -1;
}

/*
 * A value, after its '=', unquoted into place (git's parse_value()):
 * "..." pieces, the escapes \\ \" \n \t \b, a \ before the end of a line
 * continuing it, comments and the blanks around it dropped. NULL if
 * malformed.
 */
static char *
config_value(struct config_src *s)
{
	char *start = s->p, *out = s->p;
	bool quoted = false, comment = false;
	size_t blanks = 0;
	int c;

	for (;;) {
		c = config_char(s);
		if (c == '\n') {
			if (quoted) {
				s->line -= !s->eof;
				return NULL;
			}
			break;
		}
		if (comment)
			continue;
		if (isspace(c) && !quoted) {
			blanks += out > start;
			continue;
		}
		if (!quoted && (c == ';' || c == '#')) {
			comment = true;
			continue;
		}
		for (; blanks; blanks--)
			*out++ = ' ';
		if (c == '\\') {
			switch (c = config_char(s)) {
			case '\n':
				if (s->eof)
					goto end;
				continue;
			case 't':
				c = '\t';
				break;
			case 'b':
				c = '\b';
				break;
			case 'n':
				c = '\n';
				break;
			case '\\':
			case '"':
				break;
			default:
				return NULL;
			}
			*out++ = (char)c;
			continue;
		}
		if (c == '"') {
			quoted = !quoted;
			continue;
		}
		*out++ = (char)c;
	}
end:
	/* Behind what was read: at most on the '\n' that ended it. */
	*out = '\0';
	return start;
}

/*
 * Hand each variable of the config text (len bytes, changed in place) to
 * fn, until fn returns non-zero: git-config(1)'s syntax as git's
 * git_parse_source() reads it, but for includes. A line git would call bad
 * fails the same way, -EINVAL with *line its number.
 */
static int
parse_config(char *text, size_t len, config_fn *fn, void *ctx,
    unsigned *line)
{
	struct config_src s = { text, text + len, 1, false };
	char section[256] = "", key[512];
	bool comment = false;
	int ret = 0;

	/* A UTF-8 byte order mark, as git skips it. */
	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
		s.p += 3;
	while (ret == 0) {
		char *name, *value = NULL;
		int c = config_char(&s), n;

		if (c == '\n') {
			if (s.eof)
				break;
			comment = false;
			continue;
		}
		if (comment || isspace(c))
			continue;
		if (c == '#' || c == ';') {
			comment = true;
			continue;
		}
		if (c == '[') {
			if (config_section(&s, section, sizeof(section)) < 0)
				goto bad;
			continue;
		}
		if (!isalpha(c))
			goto bad;
		name = s.p - 1;
		*name = (char)tolower(c);
		while (s.p < s.end && config_keychar((unsigned char)*s.p)) {
			*s.p = (char)tolower((unsigned char)*s.p);
			s.p++;
		}
		n = (int)(s.p - name);
		do
			c = config_char(&s);
		while (c == ' ' || c == '\t');
		if (c != '\n' && (c != '=' || !(value = config_value(&s))))
			goto bad;
		if (section[0])
			snprintf(key, sizeof(key), "%s.%.*s", section, n, name);
		else
			snprintf(key, sizeof(key), "%.*s", n, name);
		/* A variable refused is bad on its own line, as in git. */
		if ((ret = fn(ctx, key, value)) < 0)
			*line = s.line - !s.eof;
	}
	return ret;
bad:
	*line = s.line;
	return -EINVAL;
}

/*
 * What config says of the repository's format, read as git's
 * check_repository_format_gently() reads it (setup.c).
 */
struct format {
	long long version;	/* core.repositoryformatversion; -1 if unsaid */
	bool sha256;		/* extensions.objectFormat */
	bool reftable;		/* extensions.refStorage */
	bool worktree_config;	/* extensions.worktreeConfig */
	char unknown[256];	/* extensions git does not know: "a, b" */
	unsigned nunknown;
	char v1_only[256];	/* extensions of format version 1 only */
	unsigned nv1_only;
	const char *path;	/* the config file, for messages */
	const char *why;	/* what was wrong, if format_var() failed */
};

static void
add_name(char *list, size_t size, unsigned *n, const char *name)
{
	size_t len = strlen(list);

	snprintf(list + len, size - len, "%s%s", (*n)++ ? ", " : "", name);
}

/* core.repositoryformatversion, as git_config_int() reads it. */
static int
format_version(struct format *f, const char *value)
{
	const char *bad = "invalid unit";
	long long v = 0, unit = 1;
	char *end = NULL;

	errno = 0;
	if (value && *value)
		v = strtoll(value, &end, 0);
	if (end && end != value && (!*end || !end[1]))
		switch (tolower((unsigned char)*end)) {
		case 'g':
			unit *= 1024;
			/* fall through */
		case 'm':
			unit *= 1024;
			/* fall through */
		case 'k':
			unit *= 1024;
			/* fall through */
		case '\0':
			bad = errno || v > INT_MAX / unit ||
			    v < INT_MIN / unit ? "out of range" : NULL;
		}
	if (bad) {
		f->why = file_why("bad numeric config value '%s' for "
		    "'core.repositoryformatversion' in file %s: %s",
		    value ? value : "", f->path, bad);
		return -EINVAL;
	}
	f->version = v * unit;
	return 0;
}

/* Extensions git knows in every format version, for historical reasons. */
static const char *const extensions_v0[] = {
	"noop", "preciousobjects", "partialclone", "worktreeconfig",
};

/*
 * Extensions of format version 1 (git 2.55's list), all harmless to a
 * reader of objects (reftable is read by reftable.c). compatObjectFormat
 * keeps a map to ids in a second format; the objects are in the first,
 * all that is served.
 * relativeWorktrees and submodulePathConfig say how paths are written,
 * which discovery reads as it finds them.
 */
static const char *const extensions_v1[] = {
	"noop-v1", "objectformat", "compatobjectformat", "refstorage",
	"relativeworktrees", "submodulepathconfig",
};

static bool
listed(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

/*
 * A boolean as git_config_bool() reads it: no value is true, "" false,
 * true/yes/on and false/no/off in any case, or a number (k, m or g after
 * it) that is not 0. -EINVAL, with git's reason, for anything else.
 */
static int
format_bool(struct format *f, const char *key, const char *value, bool *out)
{
	static const char *const yes[] = { "true", "yes", "on" };
	static const char *const no[] = { "false", "no", "off" };
	char *end;
	long long v;

	*out = true;
	if (!value)
		return 0;
	for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++) {
		if (!strcasecmp(value, yes[i]))
			return 0;
		if (!strcasecmp(value, no[i]) || !*value) {
			*out = false;
			return 0;
		}
	}
	errno = 0;
	v = strtoll(value, &end, 0);
	if (end == value || errno || (*end && (end[1] ||
	    !strchr("kKmMgG", *end)))) {
		f->why = file_why("bad boolean config value '%s' for '%s'",
		    value, key);
		return -EINVAL;
	}
	*out = v != 0;
	return 0;
}

static int
bad_value(struct format *f, const char *key, const char *value)
{
	f->why = value ? file_why("invalid value for '%s': '%s'", key, value) :
	    file_why("missing value for '%s'", key);
	return -EINVAL;
}

/*
 * One variable of config, for the format: git's handle_extension_v0()
 * and handle_extension(), refusing the values they refuse.
 */
static int
format_var(void *ctx, const char *key, const char *value)
{
	struct format *f = ctx;
	const char *ext = key + strlen("extensions.");

	if (!strcmp(key, "core.repositoryformatversion"))
		return format_version(f, value);
	if (strncmp(key, "extensions.", strlen("extensions.")))
		return 0;
	if (!strcmp(ext, "worktreeconfig"))
		return format_bool(f, key, value, &f->worktree_config);
	if (listed(extensions_v0, sizeof(extensions_v0) /
	    sizeof(*extensions_v0), ext))
		return strcmp(ext, "partialclone") || value ? 0 :
		    bad_value(f, key, value);
	if (!listed(extensions_v1, sizeof(extensions_v1) /
	    sizeof(*extensions_v1), ext)) {
		add_name(f->unknown, sizeof(f->unknown), &f->nunknown, ext);
		return 0;
	}
	add_name(f->v1_only, sizeof(f->v1_only), &f->nv1_only, ext);
	if (!strcmp(ext, "objectformat") || !strcmp(ext, "compatobjectformat")) {
		if (!value || (strcmp(value, "sha1") && strcmp(value, "sha256")))
			return bad_value(f, key, value);
		if (!strcmp(ext, "objectformat"))
			f->sha256 = !strcmp(value, "sha256");
	} else if (!strcmp(ext, "refstorage")) {
		if (!value || (strcmp(value, "files") &&
		    strcmp(value, "reftable")))
			return bad_value(f, key, value);
		f->reftable = !strcmp(value, "reftable");
	}
	return 0;
}

/*
 * include.path nested deeper is refused, as git's MAX_INCLUDE_DEPTH: the
 * repository's config is at depth 0, the file it includes at 1.
 */
#define CONFIG_MAX_INCLUDE_DEPTH 10

/* A config file whose includes are followed. */
struct config_file {
	const char *path;	/* as git names it: joined, not resolved */
	unsigned depth;
	const char *why;	/* what was wrong, if reading it failed */
	bool unexpanded;	/* an include.path's ~ named no home */
};

static int
config_follow(struct config_file *c);

/*
 * value with a leading "~" or "~user" replaced by that home, as git's
 * interpolate_path(): malloc'd into *out, or -ENOENT where there is no
 * such home ($HOME unset, no such user), which git refuses.
 */
static int
expand_home(const char *value, char **out)
{
	const char *end = strchrnul(value, '/'), *home;
	struct passwd pw, *found = NULL;
	char *user, buf[4096];

	*out = NULL;
	if (end == value + 1) {
		home = getenv("HOME");
	} else {
		if (!(user = strndup(value + 1, (size_t)(end - value - 1))))
			return -ENOMEM;
		if (getpwnam_r(user, &pw, buf, sizeof(buf), &found) || !found)
			found = NULL;
		free(user);
		home = found ? found->pw_dir : NULL;
	}
	if (!home)
		return -ENOENT;
	return asprintf(out, "%s%s", home, end) < 0 ? -ENOMEM : 0;
}

/*
 * One include.path of file from, as git's handle_path_include(): "~" and
 * "~user" are homes, a relative path is the including file's sibling, a
 * file that is not there is no error.
 */
static int
config_include(struct config_file *from, const char *value)
{
	struct config_file inc = { .depth = from->depth + 1 };
	const char *slash = strrchr(from->path, '/');
	char *path;
	int n, ret;

	if (!value) {
		from->why = file_why("missing value for 'include.path'");
		return -EINVAL;
	}
	if (value[0] == '~') {
		if ((ret = expand_home(value, &path)) == -ENOENT) {
			from->why = file_why("could not expand include path "
			    "'%s'", value);
			from->unexpanded = true;
			return -EINVAL;
		}
		n = ret < 0 ? -1 : 0;
	} else if (value[0] == '/' || !slash)
		n = asprintf(&path, "%s", value);
	else
		n = asprintf(&path, "%.*s%s", (int)(slash - from->path + 1),
		    from->path, value);
	if (n < 0)
		return -ENOMEM;
	inc.path = path;
	if (access(path, R_OK) < 0 && errno != ENOENT && errno != ENOTDIR) {
		from->why = file_why("unable to access '%s': %s", path,
		    strerror(errno));
		ret = -EACCES;
	} else if (access(path, F_OK) < 0) {
		ret = 0;
	} else if (inc.depth > CONFIG_MAX_INCLUDE_DEPTH) {
		from->why = file_why("exceeded maximum include depth (%d) while "
		    "including %s from %s: this might be due to circular "
		    "includes", CONFIG_MAX_INCLUDE_DEPTH, path, from->path);
		ret = -ELOOP;
	} else if ((ret = config_follow(&inc)) < 0) {
		from->why = inc.why;
	}
	free(path);
	return ret;
}

static int
include_var(void *ctx, const char *key, const char *value)
{
	return strcmp(key, "include.path") ? 0 : config_include(ctx, value);
}

/*
 * Read c's file and the files it includes, for what git refuses in them:
 * a bad line, an include it cannot read, includes nested too deep (a
 * loop). Nothing in them bears on the repository's format: git reads
 * that from the repository's config alone. -ENOENT if c is not there.
 */
static int
config_follow(struct config_file *c)
{
	char *text = NULL;
	unsigned line = 0;
	size_t len;
	int ret;

	if ((ret = file_read_whole(c->path, CONFIG_MAX, &text, &len)) < 0) {
		if (ret == -EFBIG)
			c->why = file_why("%s: larger than %d MiB", c->path,
			    CONFIG_MAX >> 20);
		else
			c->why = file_why("unable to access '%s': %s", c->path,
			    ret != -ENOTREG ? strerror(-ret) :
			    file_is_dir(c->path) ? strerror(EISDIR) :
			    "not a regular file");
		return ret;
	}
	ret = parse_config(text, len, include_var, c, &line);
	free(text);
	/* git says both: "could not expand include path", then the line. */
	if (ret < 0 && c->unexpanded) {
		char what[PATH_MAX + 64];

		snprintf(what, sizeof(what), "%s", c->why);
		c->why = file_why("%s: bad config line %u in file %s", what,
		    line, c->path);
	} else if (ret < 0 && !c->why)
		c->why = file_why("bad config line %u in file %s", line,
		    c->path);
	return ret;
}

/*
 * With extensions.worktreeConfig, git also reads config.worktree in the
 * git directory (a linked worktree's own, or the main one's), and its
 * includes, and refuses a repository for what it refuses in them. None
 * is no error. Nothing in it bears on the format.
 */
static int
read_worktree_config(const struct repo *repo, const char **why)
{
	struct config_file c = { .path = NULL };
	char *path;
	int ret;

	if (!(path = file_join(repo->gitdir ? repo->gitdir : repo->commondir,
	    "config.worktree")))
		return -ENOMEM;
	c.path = path;
	if ((ret = config_follow(&c)) == -ENOENT)
		ret = 0;
	else if (ret < 0)
		*why = c.why;
	free(path);
	return ret;
}

/*
 * The object format, from config: refuse what git refuses (a format
 * version above 1, an extension it does not know in version 1, one of
 * version 1 in version 0).
 */
int
config_read_format(struct repo *repo, const char **why)
{
	struct format f = { .version = -1 };
	struct config_file top = { .path = NULL };
	const char *bad = NULL;
	char *path, *text = NULL;
	unsigned line = 0;
	size_t len;
	int ret;

	repo->format = "sha1";
	repo->rawsz = OID_RAWSZ_SHA1;
	if (!(path = file_join(repo->commondir, "config")))
		return -ENOMEM;
	/* As git: no config is no extension; one it cannot read is fatal. */
	if ((ret = file_read_whole(path, CONFIG_MAX, &text, &len)) < 0) {
		if (ret == -EFBIG)
			*why = file_why("%s: larger than %d MiB", path,
			    CONFIG_MAX >> 20);
		else if (ret != -ENOENT)
			*why = file_unreadable(repo->commondir, "config", ret);
		free(path);
		return ret == -ENOENT ? 0 : ret;
	}
	f.path = path;
	ret = parse_config(text, len, format_var, &f, &line);
	free(text);
	if (ret < 0) {
		*why = f.why ? f.why : file_why("bad config line %u in file %s",
		    line, path);
		goto out;
	}
	if (f.version > 1)
		bad = file_why("Expected git repo version <= 1, found %lld",
		    f.version);
	else if (f.version >= 1 && f.nunknown)
		bad = file_why("unknown repository extension%s found: %s",
		    f.nunknown > 1 ? "s" : "", f.unknown);
	else if (f.version == 0 && f.nv1_only)
		bad = file_why("repo version is 0, but v1-only extension%s "
		    "found: %s", f.nv1_only > 1 ? "s" : "", f.v1_only);
	if (bad) {
		*why = bad;
		ret = -EINVAL;
		goto out;
	}
	/* Then, as git goes on to read all its config, the includes. */
	top.path = path;
	if ((ret = config_follow(&top)) < 0) {
		*why = top.why;
		goto out;
	}
	/* No version (or -1): git ignores the extensions, and so do we. */
	if (f.version != -1 && f.worktree_config &&
	    (ret = read_worktree_config(repo, why)) < 0)
		goto out;
	if (f.version != -1) {
		repo->reftable = f.reftable;
		if (f.sha256) {
			repo->format = "sha256";
			repo->rawsz = OID_RAWSZ_SHA256;
		}
	}
out:
	free(path);
	return ret;
}

bool
config_reftable_now(const struct repo *repo)
{
	struct repo now = { .gitdir = repo->gitdir,
	    .commondir = repo->commondir };
	const char *why;

	/* A config that no longer reads, or names another format: as was. */
	if (config_read_format(&now, &why) < 0 || now.rawsz != repo->rawsz)
		return repo->reftable;
	return now.reftable;
}
