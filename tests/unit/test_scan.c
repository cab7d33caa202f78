/*
 * test_scan: scan.c's discovery of the repositories under a root. Each
 * case builds a small root with real git (and mkfifo, ln -s, chmod), scans
 * it, and compares the whole listing, in order, with what git would take
 * for repositories there; a case that expects something left out also
 * checks that the log named it. Then the caps (depth, a path's length),
 * a directory the daemon's user cannot read (as nobody when run as root),
 * and scan_changed() before and after repositories come and go.
 * A scan that blocks (on a FIFO) would hang the suite: an alarm fails it.
 */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scan.h"
#include "odbstore/log.h"
#include "unit.h"

/* Every script starts here: an identity for commits, no user config. */
#define GIT_ENV "set -e; mkdir -p \"$0\"; cd \"$0\";" \
	"export GIT_CONFIG_NOSYSTEM=1 HOME=/nonexistent GIT_AUTHOR_NAME=t " \
	"GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t;"

static const struct {
	const char *what;
	const char *script;	/* run in the root, "$0"; "$0.out" is outside */
	const char *want;	/* the paths listed, in order, tab-separated */
	const char *why;	/* a directory left out: why, as logged, */
	const char *bad;	/* and its path; NULL if none is */
	const char *path;	/* then this one's gitdir ends with gitdir */
	const char *gitdir;
	bool worktree;
} cases[] = {
	{ "bare repositories in a group, a sibling wiki too",
	  "git init -q --bare g/p.git; git init -q --bare g/p.wiki.git",
	  "g/p.git\tg/p.wiki.git", NULL, NULL, "g/p.git", "/g/p.git", false },
	{ "a work tree with a .git directory, its nested ones not listed",
	  "git init -q team/app; git init -q team/app/sub;"
	  "git init -q --bare team/app/inner.git",
	  "team/app", NULL, NULL, "team/app", "/team/app/.git", true },
	{ "a linked worktree through a .git gitfile and a commondir",
	  "git init -q team/app; git -C team/app commit -q --allow-empty -m x;"
	  "git -C team/app worktree add -q ../lib",
	  "team/app\tteam/lib", NULL, NULL,
	  "team/lib", "/team/app/.git/worktrees/lib", true },
	{ "nested groups, listed in strcmp order, not the search's",
	  "git init -q --bare a/b/c/deep.git; git init -q --bare a/top.git;"
	  "git init -q --bare z.git; git init -q --bare a.git",
	  "a.git\ta/b/c/deep.git\ta/top.git\tz.git", NULL, NULL,
	  "a/top.git", "/a/top.git", false },
	{ "repositories inside a bare repository are not searched",
	  "git init -q --bare p.git; git init -q --bare p.git/refs/x.git;"
	  "git init -q --bare p.git/sub.git",
	  "p.git", NULL, NULL, NULL, NULL, false },
	{ "a FIFO for HEAD: absent, logged, nothing blocks",
	  "mkdir -p f.git/objects f.git/refs; mkfifo f.git/HEAD;"
	  "git init -q --bare ok.git",
	  "ok.git", "HEAD is not a regular file", "f.git", NULL, NULL, false },
	{ "FIFOs as an entry, as a group's HEAD, as a .git",
	  "mkfifo pipe; mkdir lonely wt; mkfifo lonely/HEAD;"
	  "git init -q --bare lonely/in.git; mkfifo wt/.git",
	  "lonely/in.git", ".git is no file nor directory", "wt",
	  NULL, NULL, false },
	{ "a link to a repository outside the root, link loops: not followed",
	  "git init -q --bare \"$0.out/o.git\"; ln -s \"$0.out/o.git\" l.git;"
	  "ln -s loop loop; ln -s ../.. up; git init -q --bare g/in.git;"
	  "ln -s .. g/parent; ln -s in.git g/again.git",
	  "g/in.git", NULL, NULL, NULL, NULL, false },
	{ "a gitfile leading out of the root: absent, logged",
	  "git init -q --bare \"$0.out/o.git\"; mkdir esc;"
	  "echo \"gitdir: $0.out/o.git\" >esc/.git; git init -q --bare in.git",
	  "in.git", "it leads out of the root", "esc", NULL, NULL, false },
	{ "a .git link to a repository inside the root",
	  "git init -q --bare r.git; mkdir alias; ln -s ../r.git alias/.git",
	  "alias\tr.git", NULL, NULL, "alias", "/r.git", true },
	{ "objects and refs but no HEAD: absent, logged",
	  "mkdir -p n.git/objects n.git/refs",
	  "", "no HEAD", "n.git", NULL, NULL, false },
	{ "a HEAD that is no ref: absent, logged",
	  "git init -q --bare g.git; echo garbage >g.git/HEAD",
	  "", "HEAD is not a ref", "g.git", NULL, NULL, false },
	{ "a HEAD linked out of refs/: absent",
	  "git init -q --bare g.git; rm g.git/HEAD;"
	  "ln -s ../../../etc/passwd g.git/HEAD",
	  "", "HEAD is not a ref", "g.git", NULL, NULL, false },
	{ "a HEAD linked into refs/, as git once made them",
	  "git init -q --bare s.git; rm s.git/HEAD;"
	  "ln -s refs/heads/main s.git/HEAD",
	  "s.git", NULL, NULL, NULL, NULL, false },
	{ "a repository without refs/: absent, logged",
	  "git init -q --bare g.git; rm -r g.git/refs",
	  "", "no refs directory", "g.git", NULL, NULL, false },
	{ "a work tree whose .git is broken: absent, not searched",
	  "mkdir -p w/.git; git init -q --bare w/in.git",
	  "", ".git has no HEAD", "w", NULL, NULL, false },
	{ "a stray HEAD in a group hides none of its repositories",
	  "echo hi >HEAD; mkdir grp; echo x >grp/HEAD;"
	  "git init -q --bare grp/s.git",
	  "grp/s.git", NULL, NULL, NULL, NULL, false },
	{ "names with a newline and a byte that is not UTF-8",
	  "git init -q --bare \"$(printf 'n\\nl.git')\";"
	  "git init -q --bare \"$(printf 'g\\nx/x\\377y.git')\"",
	  "g\nx/x\377y.git\tn\nl.git", NULL, NULL,
	  "n\nl.git", "/n\nl.git", false },
};

/* The paths f lists, tab-separated, into buf. */
static const char *
listing(const struct scan *f, char *buf, size_t size)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < f->nrepos && o < size; i++)
		o += (size_t)snprintf(buf + o, size - o, "%s%s", i ? "\t" : "",
		    f->repos[i].path);
	return buf;
}

static bool
ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);

	return n >= m && !strcmp(s + n - m, end);
}

static void
run_case(const char *base, size_t i)
{
	char root[PATH_MAX], script[2048], got[4096], line[PATH_MAX + 256];
	const struct scan_repo *r;
	struct scan *f;

	snprintf(root, sizeof(root), "%s/case%zu", base, i);
	snprintf(script, sizeof(script), GIT_ENV "%s", cases[i].script);
	if (!check_int(unit_sh("mkdir -p \"$0\" \"$0.out\"", root) ||
	    unit_sh(script, root), 0, "%s: built", cases[i].what))
		return;
	if (!check_int(scan_root(root, 0, &f), 0, "%s: scans", cases[i].what))
		return;
	if (!check(!strcmp(listing(f, got, sizeof(got)), cases[i].want),
	    "%s: the listing", cases[i].what))
		diag("  got [%s], want [%s]", got, cases[i].want);
	check(!f->truncated, "%s: not truncated", cases[i].what);
	if (cases[i].bad) {
		snprintf(line, sizeof(line), "not listed, not a repository git "
		    "would open (%s): %s/%s", cases[i].why, root, cases[i].bad);
		if (!check(!strcmp(log_last(), line), "%s: logged",
		    cases[i].what))
			diag("  last log line: %s", log_last());
	}
	if (cases[i].path) {
		r = scan_find(f, cases[i].path);
		check(r && ends_with(r->gitdir, cases[i].gitdir) &&
		    r->gitdir[0] == '/' && r->worktree == cases[i].worktree,
		    "%s: git directory and kind", cases[i].what);
	}
	check(!scan_find(f, "nope") && !scan_find(f, ""),
	    "%s: what is not listed is not found", cases[i].what);
	scan_free(f);
}

/* N "d/" then a repository at N+1 levels, and one a level deeper. */
static void
depth(const char *base)
{
	char root[PATH_MAX], want[4096], got[4096];
	struct scan *f;
	size_t o = 0;
	int n = SCAN_MAX_DEPTH - 1;

	snprintf(root, sizeof(root), "%s/depth", base);
	for (int i = 0; i < n; i++)
		o += (size_t)snprintf(want + o, sizeof(want) - o, "d/");
	snprintf(want + o, sizeof(want) - o, "ok.git");
	setenv("ODBFS_UNIT_DEEP", want, 1);
	if (!check_int(unit_sh(GIT_ENV "d=$(dirname \"$ODBFS_UNIT_DEEP\");"
	    "git init -q --bare \"$ODBFS_UNIT_DEEP\";"
	    "git init -q --bare \"$d/d/no.git\"", root), 0,
	    "depth: %d levels built", n + 2))
		return;
	if (!check_int(scan_root(root, 0, &f), 0, "depth: scans"))
		return;
	if (!check(!strcmp(listing(f, got, sizeof(got)), want),
	    "depth: a repository %d levels down is listed, one deeper not",
	    SCAN_MAX_DEPTH))
		diag("  got [%s]", got);
	check(strstr(log_last(), "not searched, 32 levels deep: "),
	    "depth: the level not searched is logged");
	scan_free(f);
}

/* A 255-byte name is listed; a path past PATH_MAX is left out, logged. */
static void
long_names(const char *base)
{
	char root[PATH_MAX], name[256], got[4096];
	struct scan *f;

	snprintf(root, sizeof(root), "%s/long", base);
	memset(name, 'r', sizeof(name) - 1);
	memcpy(name + sizeof(name) - 5, ".git", 5);
	setenv("ODBFS_UNIT_NAME", name, 1);
	if (!check_int(unit_sh(GIT_ENV "git init -q --bare \"$ODBFS_UNIT_NAME\";"
	    "n=$(printf '%0250d' 0); mkdir -p $n/x.git/objects $n/x.git/refs;"
	    "echo 'ref: refs/heads/main' >$n/x.git/HEAD;"
	    /* Each command on a short path: no shell cds that deep. */
	    "for i in $(seq 16); do mkdir t; mv $n t/; mv t $n; done;"
	    "mkdir a; mv $n a/", root), 0,
	    "long: names of 255 bytes, a path past PATH_MAX"))
		return;
	if (!check_int(scan_root(root, 0, &f), 0, "long: scans"))
		return;
	if (!check(!strcmp(listing(f, got, sizeof(got)), name),
	    "long: the 255-byte name listed, the too long path not"))
		diag("  got [%s]", got);
	check(strstr(log_last(), "not searched, path longer than"),
	    "long: the path too long is logged");
	scan_free(f);
}

/*
 * A directory the scan cannot read: left out, logged, the rest listed.
 * Root reads anything, so the scan runs in a child as nobody then.
 */
static void
unreadable(const char *base)
{
	char root[PATH_MAX], got[4096] = "", last[512] = "";
	int fds[2], status;
	pid_t pid;
	ssize_t n;

	snprintf(root, sizeof(root), "%s/locked", base);
	if (!check_int(unit_sh(GIT_ENV "git init -q --bare open.git;"
	    "git init -q --bare shut/in.git; chmod 000 shut", root), 0,
	    "unreadable: built") || pipe(fds) < 0)
		return;
	if ((pid = fork()) == 0) {
		struct scan *f;
		char out[sizeof(got) + sizeof(last) + 1];
		int ret;

		close(fds[0]);
		if (geteuid() == 0 && (setgroups(0, NULL) < 0 ||
		    setresgid(65534, 65534, 65534) < 0 ||
		    setresuid(65534, 65534, 65534) < 0))
			_exit(77);
		if ((ret = scan_root(root, 0, &f)) < 0)
			_exit(1);
		listing(f, out, sizeof(got));
		snprintf(out + strlen(out) + 1, sizeof(last), "%s",
		    log_last());
		ret = write(fds[1], out, strlen(out) + 1 +
		    strlen(out + strlen(out) + 1) + 1) < 0;
		scan_free(f);
		_exit(ret);
	}
	close(fds[1]);
	n = pid > 0 ? read(fds[0], got, sizeof(got) - 1) : -1;
	close(fds[0]);
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		diag("unreadable: skipped, root could not become nobody");
		return;
	}
	if (!check_int(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0,
	    "unreadable: scanned as nobody") || n <= 0)
		return;
	got[n] = '\0';
	memcpy(last, got + strlen(got) + 1, strnlen(got + strlen(got) + 1,
	    sizeof(last) - 1));
	if (!check(!strcmp(got, "open.git"),
	    "unreadable: left out, the rest listed"))
		diag("  got [%s]", got);
	if (!check(strstr(last, "not searched (Permission denied): ") == last &&
	    ends_with(last, "/locked/shut"),
	    "unreadable: logged with its path"))
		diag("  last log line: %s", last);
}

/* scan_changed() after each step of script, and a fresh scan's listing. */
static const struct {
	const char *script;
	bool changed;
	const char *want;
} steps[] = {
	{ "git init -q --bare g/p.git; mkdir g/later", false, "g/p.git" },
	{ ": nothing", false, "g/p.git" },
	{ "git init -q --bare g/q.git", true, "g/p.git\tg/q.git" },
	{ "git -C g/p.git commit-tree -m x $(git -C g/p.git mktree </dev/null)"
	  " >g/p.git/FETCH_HEAD; git -C g/p.git pack-refs --all",
	  false, "g/p.git\tg/q.git" },
	{ "rm -rf g/q.git", true, "g/p.git" },
	{ "git init -q --bare g/later", true, "g/later\tg/p.git" },
	{ "git init -q --bare new/deeper/r.git", true,
	  "g/later\tg/p.git\tnew/deeper/r.git" },
	{ "mv new/deeper new/moved", true,
	  "g/later\tg/p.git\tnew/moved/r.git" },
	{ "mkdir -p x/y; chmod 700 x/y", true,
	  "g/later\tg/p.git\tnew/moved/r.git" },
	{ "chmod 755 x/y", true, "g/later\tg/p.git\tnew/moved/r.git" },
};

static void
changes(const char *base)
{
	char root[PATH_MAX], script[1024], got[4096];
	struct scan *f = NULL, *next;

	snprintf(root, sizeof(root), "%s/changes", base);
	for (size_t i = 0; i < sizeof(steps) / sizeof(*steps); i++) {
		snprintf(script, sizeof(script), GIT_ENV "%s", steps[i].script);
		if (!check_int(unit_sh(i ? script : "mkdir -p \"$0\"", root) ||
		    (i == 0 && unit_sh(script, root)), 0,
		    "changes: step %zu built", i))
			break;
		if (f)
			check_int(scan_changed(f), steps[i].changed,
			    "changes: %s: %s", steps[i].script,
			    steps[i].changed ? "changed" : "unchanged");
		if (!check_int(scan_root(root, 0, &next), 0,
		    "changes: step %zu scans", i))
			break;
		if (!check(!strcmp(listing(next, got, sizeof(got)),
		    steps[i].want), "changes: step %zu listing", i))
			diag("  got [%s], want [%s]", got, steps[i].want);
		check(!scan_changed(next), "changes: step %zu, a fresh scan "
		    "is unchanged", i);
		scan_free(f);
		f = next;
	}
	/* Gone altogether: changed, and a scan fails. */
	if (f && unit_sh("rm -rf \"$0\"", root) == 0) {
		check(scan_changed(f), "changes: a root that is gone changed");
		check_int(scan_root(root, 0, &next), -ENOENT,
		    "changes: a root that is gone cannot be scanned");
	}
	scan_free(f);
}

void
test_scan(void)
{
	char dir[] = "/tmp/odbfs-unit.XXXXXX", cmd[256];

	if (!mkdtemp(dir))
		return;
	/* For the child that scans as nobody. */
	chmod(dir, 0755);
	alarm(120);
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++)
		run_case(dir, i);
	depth(dir);
	long_names(dir);
	unreadable(dir);
	changes(dir);
	alarm(0);
	snprintf(cmd, sizeof(cmd), "chmod -R u+rwx '%s'; rm -rf '%s'", dir,
	    dir);
	if (system(cmd) != 0)
		diag("could not remove %s", dir);
}
